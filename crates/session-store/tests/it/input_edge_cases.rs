//! Inputs at the edges: context building on a small stack, `appendMessage` values through the
//! runner, file paths (lexical resolution in `open`, as given in `forkFrom`, `path.resolve` in
//! the runner), crafted shapes that stay near-linear, `list` against OpenClaw 2026.6.11, the
//! runner's argument checks, and the diagnostics of writable managers. Reference behaviour was
//! checked with `node xtask/conformance/runner.mjs --reference openclaw` where a test says so.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::{Path, PathBuf};

use crate::support::{HEADER, dir_names, msg_line};
use session_format::json::{JsValue, to_json_string};
use session_store::{AppendError, SessionManager};

fn canon(dir: &tempfile::TempDir) -> PathBuf {
    std::fs::canonicalize(dir.path()).unwrap()
}

// ------------------------------------------------------------------------------------------
// Context building never recurses on payload depth.

/// A message payload nested to the parser's limit is materialised and serialised on a thread
/// with a 512 KiB stack; the context message is the payload, byte for byte.
#[test]
fn deep_payload_context_on_a_small_stack() {
    let depth = session_format::json::MAX_DEPTH - 3;
    let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let payload = format!(r#"{{"role":"user","content":"x","timestamp":1,"deep":{deep}}}"#);
    let line = format!(
        r#"{{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{payload}}}"#
    );
    let dir = crate::support::tempdir();
    let f = canon(&dir).join("s.jsonl");
    crate::support::write(&f, &format!("{HEADER}\n{line}\n"));
    let out = std::thread::Builder::new()
        .stack_size(512 << 10)
        .spawn(move || {
            let sm = SessionManager::open(&f, None, None).unwrap();
            let ctx = sm.build_session_context().unwrap();
            let v = ctx.messages[0].to_value().unwrap();
            let text = to_json_string(&v);
            let whole = to_json_string(&ctx.to_value().unwrap());
            (text, whole.len())
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(out.0, payload);
    assert_eq!(
        out.1,
        r#"{"messages":[],"thinkingLevel":"off","model":null}"#.len() + payload.len()
    );
}

// ------------------------------------------------------------------------------------------
// appendMessage(null).

/// Through the runner: `null` gives the reference's error text; a missing `message` is refused
/// by the runner; every other value is accepted as in the reference (checked with node:
/// `"str"`, `5`, `[]`, `{}`, `true`, `false`, `0`, `""`, `[1]` all append).
#[test]
fn runner_append_message_values() {
    let script = br#"{"ops":[
        {"op":"inMemory"},
        {"op":"appendMessage","message":null},
        {"op":"appendMessage","message":"str"},
        {"op":"appendMessage","message":5},
        {"op":"appendMessage","message":[]},
        {"op":"appendMessage","message":false},
        {"op":"appendMessage"}
    ]}"#;
    let dir = crate::support::tempdir();
    let out = session_store::test_util::replay::run_script(
        session_store::FileStorage::shared(),
        script,
        dir.path(),
    )
    .unwrap();
    assert_eq!(
        to_json_string(&out.results),
        r#"[{"op":1,"error":"Cannot read properties of null (reading 'role')"},{"op":6,"error":"op 6 appendMessage: message is required"}]"#
    );
    let mut sm = SessionManager::in_memory("/p");
    let err = sm.append_message(JsValue::Null).unwrap_err();
    assert!(matches!(err, AppendError::NullMessage));
    assert_eq!(
        err.to_string(),
        "message must not be null (nothing was appended)"
    );
    assert_eq!(sm.entry_count(), 0);
    assert_eq!(sm.get_leaf_id(), None);
}

// ------------------------------------------------------------------------------------------
// Paths.

/// The runner resolves `file` like `path.resolve(D, file)` (op-scripts b30-path-0…3): `./`,
/// `sub/..`, `.//` and a trailing `/` all name `<D>/f.jsonl`, and `forkFrom` then writes
/// `parentSession: "<D>/f.jsonl"` (as the node runner's reference call does).
#[test]
fn runner_resolves_file_paths_like_path_resolve() {
    let header = HEADER.replace('"', "\\\"");
    let u = msg_line("u1", None, "user", "q", 1).replace('"', "\\\"");
    for file in ["./f.jsonl", "sub/../f.jsonl", ".//f.jsonl", "f.jsonl/"] {
        let script = format!(
            r#"{{"ops":[
            {{"op":"writeFile","file":"f.jsonl","content":"{header}\n{u}\n"}},
            {{"op":"open","file":"{file}"}},
            {{"op":"snapshot","label":"o"}},
            {{"op":"forkFrom","file":"{file}"}},
            {{"op":"snapshot","label":"f"}}
        ]}}"#
        );
        let dir = crate::support::tempdir();
        let out = session_store::test_util::replay::run_script(
            session_store::FileStorage::shared(),
            script.as_bytes(),
            dir.path(),
        )
        .unwrap();
        let d = out.dir.to_string_lossy().into_owned();
        let results = out.results.as_array().unwrap();
        assert_eq!(results.len(), 2, "{file}: {}", to_json_string(&out.results));
        let opened = results[0].get("snapshot").unwrap();
        assert_eq!(opened.get("leafId"), Some(&JsValue::from("u1")), "{file}");
        let forked = results[1].get("snapshot").unwrap();
        assert_eq!(
            forked.get("header").unwrap().get("parentSession"),
            Some(&JsValue::from(format!("{d}/f.jsonl"))),
            "{file}"
        );
    }
}

/// `open` and `open_read_only` resolve lexically; the manager's file is the normalised path.
#[test]
fn open_paths_are_normalised_lexically() {
    let dir = crate::support::tempdir();
    let d = canon(&dir);
    crate::support::write(
        &d.join("s.jsonl"),
        &format!("{HEADER}\n{}\n", msg_line("u1", None, "user", "q", 1)),
    );
    let ro = SessionManager::open_read_only(&d.join("nope/./../s.jsonl/"), None).unwrap();
    assert_eq!(ro.report.path, d.join("s.jsonl"));
    assert_eq!(
        ro.session.get_session_file(),
        Some(d.join("s.jsonl").as_path())
    );
    let sm = SessionManager::open(&d.join("a/b/../../s.jsonl"), None, None).unwrap();
    assert_eq!(sm.get_session_file(), Some(d.join("s.jsonl").as_path()));
    assert_eq!(sm.get_session_dir(), d.as_path());
    assert_eq!(sm.get_leaf_id(), Some("u1"));
}

// ------------------------------------------------------------------------------------------
// Crafted shapes stay near-linear.

/// 3,000 opaque rows in a chain, then 3,000 entries all hanging off its last row.
#[test]
fn entries_below_a_long_opaque_chain() {
    let k = 3_000;
    let mut text = format!("{HEADER}\n{}\n", msg_line("root", None, "user", "q", 1));
    let mut p = "root".to_owned();
    for i in 0..k {
        text.push_str(&format!(
            "{{\"type\":\"plugin\",\"id\":\"o{i}\",\"parentId\":\"{p}\"}}\n"
        ));
        p = format!("o{i}");
    }
    for i in 0..k {
        text.push_str(&msg_line(&format!("z{i}"), Some(&p), "assistant", "r", 2));
        text.push('\n');
    }
    let dir = crate::support::tempdir();
    let f = canon(&dir).join("s.jsonl");
    crate::support::write(&f, &text);
    let ro = SessionManager::open_read_only(&f, None).unwrap();
    assert!(ro.report.is_clean(), "{:?}", ro.report);
    let sm = ro.session;
    assert_eq!(sm.entry_count(), k + 1);
    assert_eq!(sm.get_leaf_id(), Some("z2999"));
    // Every z resolves through the chain to `root`.
    assert_eq!(sm.get_children(Some("root")).len(), k);
    assert_eq!(
        sm.get_entry("z1234").unwrap().parent_id().as_deref(),
        Some("root")
    );
    assert_eq!(crate::support::ids(sm.get_branch(None)), ["root", "z2999"]);
    let tree = sm.get_tree();
    assert_eq!(tree.roots.len(), 1);
    assert_eq!(tree.nodes[tree.roots[0]].children.len(), k);
    // branch() to an opaque id in the middle selects its canonical ancestor.
    let mut sm = sm;
    sm.branch("o1500").unwrap();
    assert_eq!(sm.get_leaf_id(), Some("root"));
}

/// One parent cycle through 4,000 entries: the read-only report names it once, members in file
/// order.
#[test]
fn one_long_parent_cycle_is_reported_once() {
    let k = 4_000;
    let mut text = format!("{HEADER}\n");
    for i in 0..k {
        text.push_str(&msg_line(
            &format!("y{i}"),
            Some(&format!("y{}", (i + 1) % k)),
            "assistant",
            "r",
            1,
        ));
        text.push('\n');
    }
    let dir = crate::support::tempdir();
    let f = canon(&dir).join("s.jsonl");
    crate::support::write(&f, &text);
    let ro = SessionManager::open_read_only(&f, None).unwrap();
    assert_eq!(ro.report.cycles.len(), 1);
    let cycle = &ro.report.cycles[0];
    assert_eq!(cycle.len(), k);
    assert_eq!(cycle[0], "y0");
    assert_eq!(cycle[k - 1], format!("y{}", k - 1));
    assert!(cycle.windows(2).all(|w| {
        let n = |s: &str| s[1..].parse::<usize>().unwrap();
        n(&w[0]) + 1 == n(&w[1])
    }));
    assert_eq!(ro.session.get_tree().nodes.len(), k);
    assert_eq!(ro.session.get_tree().roots.len(), 1);
}

// ------------------------------------------------------------------------------------------
// list, checked against `SessionManager.list` of OpenClaw 2026.6.11.

fn listed(dir: &Path) -> Vec<session_store::SessionInfo> {
    SessionManager::list("/x", Some(dir)).unwrap()
}

/// `message.timestamp: 1e300` gives an invalid `Date` in the reference (JSON `null`); ours
/// holds NaN. A numeric header id is `String(id)`. `null`/missing `text` join as empty, a
/// number as JavaScript prints it.
#[test]
fn list_invalid_dates_numeric_ids_and_odd_texts() {
    let dir = crate::support::tempdir();
    let d = dir.path();
    crate::support::write(
        &d.join("k.jsonl"),
        &format!(
            "{HEADER}\n{}\n",
            r#"{"type":"message","id":"u1","parentId":null,"timestamp":"x","message":{"role":"user","content":"x","timestamp":1e300}}"#
        ),
    );
    crate::support::write(
        &d.join("l.jsonl"),
        &format!(
            "{}\n{}\n",
            HEADER.replace(
                r#""id":"0195f000-0000-7000-8000-000000000001""#,
                r#""id":5"#
            ),
            msg_line("u1", None, "user", "q", 1)
        ),
    );
    crate::support::write(
        &d.join("c.jsonl"),
        &format!(
            "{HEADER}\n{}\n",
            r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":1e21},{"type":"text"},{"type":"text","text":null},{"type":"text","text":[null,true,1.5]}],"timestamp":5.7}}"#
        ),
    );
    let mut l = listed(d);
    l.sort_by(|a, b| a.path.cmp(&b.path));
    assert_eq!(l.len(), 3);
    assert_eq!(l[0].first_message, "1e+21   ,true,1.5");
    assert_eq!(l[0].modified, 5.0, "new Date(5.7) truncates");
    assert!(l[1].modified.is_nan());
    assert_eq!(l[1].created, Some(1_767_225_600_000.0));
    assert_eq!(l[2].id, "5");
    assert_eq!(l[2].modified, 1_767_225_600_000.0);
}

// ------------------------------------------------------------------------------------------
// The runner refuses wrong-typed or missing arguments instead of inventing values.

#[test]
fn runner_refuses_loosely_typed_arguments() {
    let script = br#"{"ops":[
        {"op":"inMemory"},
        {"op":"appendMessage","as":"u","message":{"role":"user","content":"q","timestamp":1}},
        {"op":"appendCompaction","summary":"s","firstKeptEntryId":"$u"},
        {"op":"appendCustomMessageEntry","customType":"t","content":"c"},
        {"op":"appendCustomEntry","customType":null},
        {"op":"appendModelChange","provider":"p","modelId":5},
        {"op":"appendThinkingLevelChange"},
        {"op":"appendCompaction","summary":"s","firstKeptEntryId":"$u","tokensBefore":1,"fromHook":"yes"},
        {"op":"branch","id":7},
        {"op":"open","file":3},
        {"op":"appendCompaction","summary":"s","firstKeptEntryId":"$u","tokensBefore":1},
        {"op":"snapshot"}
    ]}"#;
    let dir = crate::support::tempdir();
    let out = session_store::test_util::replay::run_script(
        session_store::FileStorage::shared(),
        script,
        dir.path(),
    )
    .unwrap();
    let results = out.results.as_array().unwrap();
    let errors: Vec<String> = results[..results.len() - 1]
        .iter()
        .map(to_json_string)
        .collect();
    assert_eq!(
        errors,
        [
            r#"{"op":2,"error":"op 2 appendCompaction: tokensBefore must be a number"}"#,
            r#"{"op":3,"error":"op 3 appendCustomMessageEntry: display must be a boolean"}"#,
            r#"{"op":4,"error":"op 4 appendCustomEntry: customType must be a string"}"#,
            r#"{"op":5,"error":"op 5 appendModelChange: modelId must be a string"}"#,
            r#"{"op":6,"error":"op 6 appendThinkingLevelChange: thinkingLevel must be a string"}"#,
            r#"{"op":7,"error":"op 7 appendCompaction: fromHook must be a boolean"}"#,
            r#"{"op":8,"error":"op 8 branch: id must be a string"}"#,
            r#"{"op":9,"error":"op 9 open: file must be a string"}"#,
        ]
    );
    // Only the well-typed ops changed the session.
    let snap = results.last().unwrap().get("snapshot").unwrap();
    let JsValue::Array(entries) = snap.get("entries").unwrap() else {
        panic!()
    };
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[1].get("type"), Some(&JsValue::from("compaction")));
    assert_eq!(entries[1].get("tokensBefore"), Some(&JsValue::from(1.0)));
}

// ------------------------------------------------------------------------------------------
// Diagnostics of writable managers.

/// A writable open reports what a read-only open reports (malformed lines, torn tail, missing
/// final newline), plus where it backed up a corrupt header; a reopen starts afresh.
#[test]
fn writable_managers_report_diagnostics() {
    let dir = crate::support::tempdir();
    let d = canon(&dir);
    let f = d.join("s.jsonl");
    let u1 = msg_line("u1", None, "user", "q", 1);
    let a1 = msg_line("a1", Some("u1"), "assistant", "r", 2);
    let text = format!("{HEADER}\n{u1}\nnot json\n{a1}\n{{\"ty");
    crate::support::write(&f, &text);
    let ro = SessionManager::open_read_only(&f, None).unwrap().report;
    let mut sm = SessionManager::open(&f, None, None).unwrap();
    let diag = sm.diagnostics();
    assert_eq!(diag, ro);
    assert_eq!(diag.path, f);
    assert_eq!(diag.bytes, text.len());
    assert_eq!(
        diag.malformed_lines
            .iter()
            .map(|m| m.line)
            .collect::<Vec<_>>(),
        [3, 5]
    );
    assert_eq!(
        diag.malformed_lines[0].line_offset,
        HEADER.len() + u1.len() + 2
    );
    assert_eq!(diag.torn_tail.as_ref().map(|t| t.line), Some(5));
    assert!(diag.missing_final_newline);
    assert!(diag.cycles.is_empty() && diag.dangling_parents.is_empty());
    // Structural findings follow the rows: a dangling parent appears after another writer's
    // row is adopted (the append itself is refused: that row starts another branch, D30).
    session_store::io::append_raw(
        &f,
        format!("\n{}\n", msg_line("x1", Some("gone"), "user", "x", 3)).as_bytes(),
    )
    .unwrap();
    match sm.append_message(crate::support::user("n", 4)) {
        Err(AppendError::Diverged { tips, .. }) => assert_eq!(tips, ["x1"]),
        other => panic!("expected Diverged, got {other:?}"),
    }
    let diag = sm.diagnostics();
    assert_eq!(diag.adopted_lines, 1);
    assert_eq!(diag.dangling_parents.len(), 1);
    assert_eq!(diag.dangling_parents[0].id, "x1");
    assert_eq!(diag.dangling_parents[0].parent_id, "gone");

    // A corrupt header: the backup path is reported; a reopen of the repaired file is clean.
    let g = d.join("c.jsonl");
    let corrupt = format!("garbage\n{u1}\n{a1}\n");
    crate::support::write(&g, &corrupt);
    let sm = SessionManager::open(&g, None, None).unwrap();
    let diag = sm.diagnostics();
    assert_eq!(diag.corrupt_header.as_ref().unwrap().dropped_lines, [1]);
    let backup = diag.corrupt_header_backup.unwrap();
    assert_eq!(crate::support::read(&backup), corrupt);
    let re = SessionManager::open(&g, None, None).unwrap();
    let diag = re.diagnostics();
    assert!(diag.is_clean(), "{diag:?}");
    assert_eq!(diag.corrupt_header_backup, None);
}

/// `forkFrom` reads the path as given, like the reference (no lexical resolution there):
/// `<dir>/s.jsonl/` and `<dir>/missing/../s.jsonl` do not exist for the OS, so both fail with
/// the reference's text; nothing is written.
#[test]
fn fork_from_reads_the_path_as_given() {
    let dir = crate::support::tempdir();
    let d = canon(&dir);
    crate::support::write(
        &d.join("s.jsonl"),
        &format!("{HEADER}\n{}\n", msg_line("u1", None, "user", "q", 1)),
    );
    let out = d.join("out");
    for p in [
        PathBuf::from(format!("{}/s.jsonl/", d.display())),
        d.join("missing/../s.jsonl"),
    ] {
        let err = SessionManager::fork_from(&p, "/p", Some(&out)).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "Cannot fork: source session file is empty or invalid: {}",
                p.display()
            )
        );
    }
    assert!(!out.exists() || dir_names(&out).is_empty());
}
