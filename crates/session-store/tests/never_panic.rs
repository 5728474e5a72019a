//! "Arbitrary bytes never panic" (docs/RELIABILITY.md): proptest feeds arbitrary byte strings, and
//! near-valid transcripts (a valid corpus with random byte flips, insertions, deletions,
//! truncations, duplicated or swapped lines and spliced hostile tokens), to every entry point
//! that reads a session file:
//! - `session-format`: the line splitter and [`LineReader`] (envelope scan per line), the full
//!   parse, row classification, typed entry parsing ([`Entry::from_value`],
//!   [`LeafControl::from_row`]), migration and re-serialisation;
//! - `session-store`: the read-only open (index replay) and its report, the writable open
//!   (recovery, migration) followed by an append, every query over the result (entries, values,
//!   branches, children, tree, context at every entry, header, name, diagnostics), the session
//!   listing readers, and a repair dry run.
//!
//! Each entry point runs under `catch_unwind`; the test counts panics, prints
//! `RELIABILITY {"suite":"neverPanic","cases":N,"panics":0}` and fails on any panic, naming
//! the entry point and the input. Errors are fine; panics are not. 512 cases by default,
//! 8192 with `RELIABILITY_SCALE=full`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use session_format::json::{parse_value, to_json_string};
use session_format::line::{LineContent, LineReader, lines, trim_js_end, trim_js_start};
use session_format::migrate::{MigrationRow, migrate};
use session_format::{Entry, LeafControl, classify, is_readable_header};
use session_store::{
    RepairOptions, SessionManager, find_most_recent_session, load_entries, repair_session_file_with,
};

/// A version-3 transcript touching every row kind, navigation (leaf control, parent-linked
/// opaque row, branch) and the repair rules (error turn, blank user text, image, tool call).
const V3: &str = concat!(
    r#"{"type":"session","version":3,"id":"0195f000-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/dev/project"}"#,
    "\n",
    r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"q1 \u2028 caf\u00e9"},{"type":"image","mimeType":"image/png","data":"iVBORw0KGgo="}],"timestamp":1767225600000}}"#,
    "\n",
    r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"message","arguments":{"x":1}}],"api":"openai-responses","provider":"openai","model":"m","stopReason":"toolUse","timestamp":1767225600001}}"#,
    "\n",
    r#"{"type":"message","id":"t1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"message","isError":false,"content":"done","timestamp":1767225600002}}"#,
    "\n",
    r#"{"type":"thinking_level_change","id":"k1","parentId":"t1","timestamp":"2026-01-01T00:00:04.000Z","thinkingLevel":"high"}"#,
    "\n",
    r#"{"type":"model_change","id":"m1","parentId":"k1","timestamp":"2026-01-01T00:00:05.000Z","provider":"openai","modelId":"gpt"}"#,
    "\n",
    r#"{"type":"compaction","id":"c2","parentId":"m1","timestamp":"2026-01-01T00:00:06.000Z","summary":"s","firstKeptEntryId":"o1","tokensBefore":10}"#,
    "\n",
    r#"{"type":"x-meta","id":"o1","parentId":"c2","payload":[1,2,{"a":null}]}"#,
    "\n",
    r#"{"type":"message","id":"a2","parentId":"o1","timestamp":"2026-01-01T00:00:07.000Z","message":{"role":"assistant","content":[],"stopReason":"error","timestamp":1767225600003}}"#,
    "\n",
    r#"{"type":"label","id":"l1","parentId":"a2","timestamp":"2026-01-01T00:00:08.000Z","targetId":"u1","label":"start"}"#,
    "\n",
    r#"{"type":"branch_summary","id":"b1","parentId":"u1","timestamp":"2026-01-01T00:00:09.000Z","fromId":"u1","summary":"back"}"#,
    "\n",
    r#"{"type":"custom_message","id":"cm","parentId":"b1","timestamp":"bad","customType":"t","content":[{"type":"text","text":"x"}],"display":true}"#,
    "\n",
    r#"{"type":"custom","id":"cu","parentId":"cm","timestamp":"2026-01-01T00:00:10.000Z","customType":"state","data":{"n":1}}"#,
    "\n",
    r#"{"type":"session_info","id":"si","parentId":"cu","timestamp":"2026-01-01T00:00:11.000Z","name":"  named\n"}"#,
    "\n",
    r#"{"type":"reset","id":"r1","parentId":"si","timestamp":"2026-01-01T00:00:12.000Z","reason":"idle","firstKeptEntryId":"u1"}"#,
    "\n",
    r#"{"type":"message","id":"u2","parentId":"r1","timestamp":"2026-01-01T00:00:13.000Z","message":{"role":"user","content":"   ","timestamp":1767225600004}}"#,
    "\n",
    r#"{"type":"leaf","id":"lf","parentId":"u2","timestamp":"2026-01-01T00:00:14.000Z","targetId":"a1","appendParentId":"o1","appendMode":"side"}"#,
    "\n",
);

/// A version-1 transcript (no ids; migration assigns them).
const V1: &str = concat!(
    r#"{"type":"session","id":"legacy","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#,
    "\n",
    r#"{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
    "\n",
    r#"{"type":"message","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"hookMessage","content":"h","timestamp":2}}"#,
    "\n",
    r#"{"type":"compaction","timestamp":"2025-01-01T00:00:03.000Z","summary":"s","firstKeptEntryIndex":1,"tokensBefore":5}"#,
    "\n",
    r#"{"type":"message","timestamp":"2025-01-01T00:00:04.000Z","message":{"role":"assistant","content":"ok","provider":"p","model":"m","timestamp":3}}"#,
    "\n",
);

/// Hostile fragments spliced into near-valid input.
fn tokens() -> Vec<Vec<u8>> {
    let mut t: Vec<Vec<u8>> = [
        "\u{FEFF}",
        "\r\n",
        "\n",
        "\0\0\0\0",
        "\u{2028}",
        "\u{2029}",
        "\u{85}",
        "\\ud800",
        "\\udc00\\ud800",
        "\"",
        "\\",
        "{",
        "}",
        "[",
        "null",
        "\n{\"type\":\"session\",\"id\":\"dup\"}\n",
        "\n{\"type\":\"message\",\"id\":\"u1\",\"parentId\":\"u1\"}\n",
        "\n{\"type\":\"leaf\",\"id\":\"x\",\"parentId\":null,\"targetId\":null}\n",
        "\n123\n",
        "1e999",
        "-0",
        "\u{fffd}",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    t.push(vec![0xff, 0xfe, 0xc3]);
    t.push(vec![0xed, 0xa0, 0x80]);
    // Deeper than the parser's nesting limit.
    let depth = session_format::json::MAX_DEPTH + 5;
    t.push(format!("{}1{}", "[".repeat(depth), "]".repeat(depth)).into_bytes());
    t
}

#[derive(Clone, Debug)]
enum Mutation {
    Flip(usize, u8),
    Insert(usize, u8),
    Delete(usize),
    Truncate(usize),
    Splice(usize, usize),
    DuplicateLine(usize),
    SwapLines(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Mutation::Flip(p, b)),
        3 => (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Mutation::Insert(p, b)),
        2 => any::<usize>().prop_map(Mutation::Delete),
        1 => any::<usize>().prop_map(Mutation::Truncate),
        3 => (any::<usize>(), any::<usize>()).prop_map(|(p, k)| Mutation::Splice(p, k)),
        1 => any::<usize>().prop_map(Mutation::DuplicateLine),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
    ]
}

fn apply(mut buf: Vec<u8>, muts: &[Mutation], toks: &[Vec<u8>]) -> Vec<u8> {
    for m in muts {
        let n = buf.len();
        match *m {
            Mutation::Flip(p, b) if n > 0 => buf[p % n] ^= b | 1,
            Mutation::Insert(p, b) => buf.insert(p % (n + 1), b),
            Mutation::Delete(p) if n > 0 => {
                buf.remove(p % n);
            }
            Mutation::Truncate(p) => buf.truncate(p % (n + 1)),
            Mutation::Splice(p, k) => {
                let at = p % (n + 1);
                let tok = &toks[k % toks.len()];
                buf.splice(at..at, tok.iter().copied());
            }
            Mutation::DuplicateLine(k) | Mutation::SwapLines(k, _) => {
                let mut ls: Vec<Vec<u8>> = buf.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
                let len = ls.len();
                match *m {
                    Mutation::DuplicateLine(_) => {
                        let l = ls[k % len].clone();
                        ls.insert(k % len, l);
                    }
                    Mutation::SwapLines(a, b) => ls.swap(a % len, b % len),
                    _ => {}
                }
                buf = ls.join(&b'\n');
            }
            _ => {}
        }
    }
    buf
}

/// Where the files of the cases go: tmpfs when there is one (no disk syncs), else the default.
fn scratch_dir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(d) = tempfile::Builder::new()
            .prefix("never-panic")
            .tempdir_in(shm)
    {
        return d;
    }
    support::tempdir()
}

/// Every query of a loaded manager.
fn query_all(sm: &SessionManager) {
    let ids: Vec<String> = sm.get_entries().map(|e| e.id().to_owned()).collect();
    for e in sm.get_entries() {
        let _ = e.value();
        let _ = e.raw_value();
        let _ = e.to_entry();
        let _ = (e.parent_id(), e.location(), e.raw_bytes().len());
    }
    for id in &ids {
        let _ = sm.get_branch(Some(id.into()));
        let _ = sm.get_children(Some(id));
        let _ = sm.get_label(id);
        if let Ok(ctx) = sm.build_session_context_at(id) {
            let _ = ctx.to_value();
        }
    }
    let _ = sm.get_branch(None);
    let _ = sm.get_children(None);
    let tree = sm.get_tree();
    for n in &tree.nodes {
        let _ = n.label_str();
    }
    let _ = sm.get_header();
    let _ = sm.get_session_name();
    if let Ok(ctx) = sm.build_session_context() {
        let _ = ctx.to_value();
        for m in &ctx.messages {
            let _ = m.role();
        }
    }
    let report = sm.diagnostics();
    let _ = (report.is_clean(), format!("{report:?}").len());
}

/// Runs every entry point over `bytes`; returns the names of those that panicked and how many
/// entries the read-only open found.
fn exercise(bytes: &[u8], dir: &Path) -> (Vec<&'static str>, usize) {
    let mut panicked = Vec::new();
    let mut entries = 0;
    let mut guard = |name: &'static str, f: &mut dyn FnMut()| {
        if catch_unwind(AssertUnwindSafe(f)).is_err() {
            panicked.push(name);
        }
    };

    // session-format: framing, envelope scan, full parse, classification, typed entries.
    guard("format::lines", &mut || {
        let _ = lines(bytes).map(|l| l.bytes.len()).sum::<usize>();
        let _ = (trim_js_start(bytes).len(), trim_js_end(bytes).len());
        let _ = parse_value(bytes);
    });
    guard("format::LineReader+entries", &mut || {
        let mut rows = Vec::new();
        for line in LineReader::new(bytes) {
            match line.content {
                LineContent::Json(env) => {
                    let _ = (classify(&env), is_readable_header(&env));
                    if let Ok(v) = parse_value(line.json) {
                        let _ = Entry::from_value(&v).map(|e| e.to_json_line());
                        let _ = LeafControl::from_row(&v);
                        let _ = to_json_string(&v);
                        rows.push(MigrationRow::new(v));
                    }
                }
                LineContent::Malformed(e) => {
                    let _ = e.to_string();
                }
                LineContent::Blank => {}
            }
        }
        let _ = migrate(&mut rows);
        for r in &rows {
            let _ = to_json_string(&r.value);
        }
    });

    // session-store, on a file holding the bytes.
    let path = dir.join("s.jsonl");
    if session_store::io::write_raw(&path, bytes).is_err() {
        return (vec!["setup: write_raw"], 0);
    }
    guard("store::open_read_only", &mut || {
        if let Ok(ro) = SessionManager::open_read_only(&path, None) {
            let _ = ro.report.writable_open_would_rewrite();
            entries = ro.session.entry_count();
            query_all(&ro.session);
        }
    });
    guard("store::list readers", &mut || {
        let _ = session_store::session_info(&path);
        let _ = load_entries(&path);
        let _ = session_store::is_valid_session_file(&path);
        let _ = find_most_recent_session(dir);
    });
    guard("store::repair dry run", &mut || {
        let outcome = repair_session_file_with(
            &path,
            None,
            &RepairOptions {
                keep_backup: true,
                dry_run: true,
            },
        );
        let _ = (outcome.needs_repair(), outcome.to_reference_json());
    });
    guard("store::open+append", &mut || {
        if let Ok(mut sm) = SessionManager::open(&path, None, Some("/work")) {
            query_all(&sm);
            if sm.append_message(support::user("more", 9)).is_ok() {
                let _ = sm.append_message(support::assistant("reply", 10));
            }
            query_all(&sm);
            if let Ok(ro) = SessionManager::open_read_only(&path, None) {
                query_all(&ro.session);
            }
        }
    });
    (panicked, entries)
}

fn scale_full() -> bool {
    std::env::var("RELIABILITY_SCALE").is_ok_and(|v| v == "full")
}

#[test]
fn arbitrary_and_near_valid_bytes_never_panic() {
    let per_kind: u32 = if scale_full() { 4096 } else { 256 };
    let toks = tokens();
    let dir = scratch_dir();
    let cases = RefCell::new(0usize);
    let rich = RefCell::new(0usize);
    let failures: RefCell<Vec<(Vec<&'static str>, Vec<u8>)>> = RefCell::new(Vec::new());
    let config = Config {
        cases: per_kind,
        failure_persistence: None,
        ..Config::default()
    };
    let run_one = |bytes: Vec<u8>| {
        *cases.borrow_mut() += 1;
        let case_dir = tempfile::tempdir_in(dir.path()).unwrap();
        let (p, entries) = exercise(&bytes, case_dir.path());
        if entries >= 5 {
            *rich.borrow_mut() += 1;
        }
        if !p.is_empty() {
            failures.borrow_mut().push((p, bytes));
        }
    };

    // Arbitrary bytes, biased towards the bytes JSONL is made of.
    let byte = prop_oneof![
        4 => any::<u8>(),
        2 => prop::sample::select(b"{}[]\":,\n\r\\ 0123456789-eE.tfnul".to_vec()),
    ];
    let mut runner = TestRunner::new(config.clone());
    runner
        .run(&prop::collection::vec(byte, 0..768), |b| {
            run_one(b);
            Ok(())
        })
        .unwrap();

    // Near-valid: the corpus with mutations.
    let rich_before = *rich.borrow();
    let mut runner = TestRunner::new(config);
    let corpus = prop_oneof![3 => Just(V3.as_bytes().to_vec()), 1 => Just(V1.as_bytes().to_vec())];
    runner
        .run(
            &(corpus, prop::collection::vec(mutation(), 1..8)),
            |(base, muts)| {
                run_one(apply(base, &muts, &toks));
                Ok(())
            },
        )
        .unwrap();

    let rich_near_valid = *rich.borrow() - rich_before;
    assert!(
        rich_near_valid * 2 > per_kind as usize,
        "only {rich_near_valid} near-valid inputs opened with 5 entries or more"
    );

    // The unmutated corpus and a few fixed shapes.
    for fixed in [
        V3.as_bytes().to_vec(),
        V1.as_bytes().to_vec(),
        Vec::new(),
        b"\n\n  \n".to_vec(),
        b"\xEF\xBB\xBF".to_vec(),
        vec![0; 64],
    ] {
        run_one(fixed);
    }

    let failures = failures.into_inner();
    let cases = cases.into_inner();
    println!(
        "RELIABILITY {{\"suite\":\"neverPanic\",\"cases\":{cases},\"panics\":{}}}",
        failures.len()
    );
    if let Some((which, bytes)) = failures.first() {
        panic!(
            "{} of {cases} inputs panicked; first: {which:?} on {:?}",
            failures.len(),
            String::from_utf8_lossy(bytes)
        );
    }
}

/// The mutator itself: every kind of mutation does what it says (so the near-valid half of the
/// property is not silently feeding the unmutated corpus).
#[test]
fn mutations_are_applied() {
    let toks = tokens();
    let base = b"ab\ncd\n".to_vec();
    assert_eq!(
        apply(base.clone(), &[Mutation::Flip(0, 2)], &toks),
        b"bb\ncd\n"
    );
    assert_eq!(
        apply(base.clone(), &[Mutation::Insert(1, b'X')], &toks),
        b"aXb\ncd\n"
    );
    assert_eq!(
        apply(base.clone(), &[Mutation::Delete(2)], &toks),
        b"abcd\n"
    );
    assert_eq!(
        apply(base.clone(), &[Mutation::Truncate(4)], &toks),
        b"ab\nc"
    );
    assert_eq!(
        apply(base.clone(), &[Mutation::Splice(2, 14)], &toks),
        b"abnull\ncd\n"
    );
    assert_eq!(
        apply(base.clone(), &[Mutation::DuplicateLine(1)], &toks),
        b"ab\ncd\ncd\n"
    );
    assert_eq!(
        apply(base, &[Mutation::SwapLines(0, 1)], &toks),
        b"cd\nab\n"
    );
}

/// What the envelope scan says about `json` disagrees with the full parse: acceptance (unless
/// the parse refuses only the depth), the error position, the top-level kind, or one of the
/// fields the index reads (`type`, `id`, `parentId`, `message.role`, `appendMode`). The index
/// trusts the scan and the queries trust the parse, so a disagreement is a bug.
fn envelope_disagreement(json: &[u8]) -> Option<String> {
    use session_format::json::{Field, JsValue, JsonErrorKind, ValueKind};
    let scanned = session_format::json::EnvelopeScanner::new().scan(json);
    let parsed = parse_value(json);
    let field = |f: &Field<'_>, v: Option<&JsValue>| -> bool {
        match (f, v) {
            (Field::Absent, None) | (Field::Null, Some(JsValue::Null)) => true,
            (Field::Str(s), Some(JsValue::String(t))) => s == t,
            (Field::Other, Some(v)) => !matches!(v, JsValue::Null | JsValue::String(_)),
            _ => false,
        }
    };
    match (scanned, parsed) {
        (Ok(_), Err(e)) if e.kind == JsonErrorKind::TooDeep => None,
        (Err(_), Err(e)) if e.kind == JsonErrorKind::TooDeep => None,
        (Err(a), Err(b)) => (a != b).then(|| format!("errors differ: scan {a}, parse {b}")),
        (Ok(env), Ok(v)) => {
            let kind = match &v {
                JsValue::Object(_) => ValueKind::Object,
                JsValue::Array(_) => ValueKind::Array,
                JsValue::String(_) => ValueKind::String,
                JsValue::Number(_) => ValueKind::Number,
                JsValue::Bool(_) => ValueKind::Bool,
                JsValue::Null => ValueKind::Null,
            };
            let obj = v.as_object();
            let get = |k: &str| obj.and_then(|o| o.get(k));
            let role = get("message")
                .and_then(JsValue::as_object)
                .map(|m| m.get("role"));
            let role_ok = match role {
                Some(r) => field(&env.role, r),
                None => env.role == Field::Absent,
            };
            let ok = env.kind == kind
                && field(&env.r#type, get("type"))
                && field(&env.id, get("id"))
                && field(&env.parent_id, get("parentId"))
                && field(&env.append_mode, get("appendMode"))
                && role_ok;
            (!ok).then(|| format!("envelope {env:?} does not match {v:?}"))
        }
        (Ok(env), Err(e)) => Some(format!("scan accepts ({env:?}), parse fails: {e}")),
        (Err(e), Ok(v)) => Some(format!("scan fails ({e}), parse accepts: {v:?}")),
    }
}

/// The envelope scan (what the index reads) and the full parse (what queries read) agree on
/// every line of arbitrary and near-valid input.
#[test]
fn envelope_scan_agrees_with_full_parse() {
    let toks = tokens();
    let cases: u32 = if scale_full() { 8192 } else { 512 };
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let corpus = prop_oneof![3 => Just(V3.as_bytes().to_vec()), 1 => Just(V1.as_bytes().to_vec())];
    let input = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..256),
        (corpus, prop::collection::vec(mutation(), 1..8))
            .prop_map(move |(base, muts)| apply(base, &muts, &toks)),
    ];
    let result = runner.run(&input, |bytes| {
        for line in bytes.split(|&b| b == b'\n') {
            if let Some(why) = envelope_disagreement(line) {
                return Err(proptest::test_runner::TestCaseError::fail(format!(
                    "{why}\nline: {:?}",
                    String::from_utf8_lossy(line)
                )));
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
