//! The bad-input catalogue (docs/RELIABILITY.md): each kind of damaged or unusual transcript as a fixture
//! (`tests/fixtures/catalogue/`, or generated at test time when too big to commit) with its exact
//! expected report: the read-only open's [`OpenReport`] compared whole (line numbers, byte
//! offsets, error texts), the entries, leaf, branch and context (with [`ContextGap`] where a
//! parent is missing), the repair dry run, and what a writable open followed by an append does
//! to the file (it only ever adds one line: nothing is lost or rewritten).
//!
//! Entries, leaf, branch and context of every committed fixture were checked against OpenClaw
//! 2026.6.11 (an op-script `writeFile` + `open` + `snapshot` through `xtask/conformance`'s
//! runner): they match except the trees of the duplicate-id and cycle fixtures (D3, D4). The
//! repair dry-run outcomes are the reference's `repairSessionFileIfNeeded` results.
//!
//! One test runs every check (in parallel) and prints
//! `RELIABILITY {"suite":"badInput","fixtures":N,"matched":N}`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};

use session_format::json::{JsString, JsValue, to_json_string};
use session_store::ContextGap;
use session_store::{DanglingParent, DuplicateId, MalformedLine};
use session_store::{
    OpenReport, RepairLevel, RepairMessage, RepairOptions, RepairOutcome, RepairSkip, RowLocation,
    SessionManager,
};
use support::{HEADER, ids, msg_line};

fn fixture(name: &str) -> PathBuf {
    support::fixture("catalogue").join(name)
}

/// A copy of a fixture in a fresh directory (writable opens may write).
fn planted(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = support::tempdir();
    let path = dir.path().join(name);
    session_store::io::write_raw(&path, &std::fs::read(fixture(name)).unwrap()).unwrap();
    (dir, path)
}

/// The report of a file in which nothing was found.
fn clean(path: &Path) -> OpenReport {
    OpenReport {
        path: path.to_path_buf(),
        bytes: std::fs::metadata(path).unwrap().len() as usize,
        ..OpenReport::default()
    }
}

fn texts(sm: &SessionManager) -> Vec<String> {
    support::context_texts(sm)
}

fn loc(path: &Path, line: usize, byte_offset: usize) -> RowLocation {
    RowLocation {
        file: Some(path.to_path_buf()),
        line: Some(line),
        byte_offset: Some(byte_offset),
    }
}

fn dry_run(path: &Path) -> RepairOutcome {
    let mut o = session_store::repair_session_file_with(
        path,
        None,
        &RepairOptions {
            keep_backup: true,
            dry_run: true,
        },
    );
    o.validated_snapshot = None;
    o
}

/// A dry run that finds nothing to repair.
fn no_repair() -> RepairOutcome {
    RepairOutcome::default()
}

/// A dry run that would drop `n` unparseable lines.
fn drops(n: usize) -> RepairOutcome {
    RepairOutcome {
        dropped_lines: n,
        ..RepairOutcome::default()
    }
}

/// A writable open then an assistant append: the file is its old bytes plus exactly the new
/// line (a `\n` first when the old bytes did not end with one); returns the new entry's id.
fn append_only_adds_a_line(path: &Path) -> String {
    let before = std::fs::read(path).unwrap();
    let mut sm = SessionManager::open(path, None, None).unwrap();
    assert_eq!(
        std::fs::read(path).unwrap(),
        before,
        "a writable open writes nothing"
    );
    let id = sm
        .append_message(support::assistant("appended", 99))
        .unwrap();
    let after = std::fs::read(path).unwrap();
    let mut head = before;
    if !head.is_empty() && !head.ends_with(b"\n") {
        head.push(b'\n');
    }
    assert!(after.starts_with(&head), "the old bytes are kept");
    let added = String::from_utf8(after[head.len()..].to_vec()).unwrap();
    assert_eq!(added.matches('\n').count(), 1, "one line added: {added}");
    assert!(added.contains(&format!("\"id\":\"{id}\"")), "{added}");
    id
}

fn js_string(parts: &[u16]) -> JsString {
    JsString::from_utf16(parts)
}

fn utf16(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
}

// ---------------------------------------------------------------------------------------------
// The checks.

/// BOM + CRLF: the BOM before the header and the CR before every LF are whitespace to the
/// reader (as to the reference's whole-file `trim()` and `JSON.parse`); nothing is reported.
/// The repair, which parses each line alone as the reference does, cannot read a header behind
/// a BOM and skips the file (the reference's exact result). An append adds an LF line and keeps
/// the BOM and the CRs.
fn bom_crlf() {
    let path = fixture("bom-crlf.jsonl");
    let ro = SessionManager::open_read_only(&path, None).unwrap();
    assert_eq!(ro.report, clean(&path));
    let sm = &ro.session;
    assert_eq!(ids(sm.get_entries()), ["u1", "a1", "u2"]);
    assert_eq!(sm.get_leaf_id(), Some("u2"));
    assert_eq!(texts(sm), ["q1", "r1", "q2"]);
    assert_eq!(
        sm.get_header().unwrap().map(|h| to_json_string(&h)),
        Some(HEADER.to_owned())
    );
    let u1 = sm.get_entry("u1").unwrap();
    assert_eq!(u1.location(), loc(&path, 2, 144));
    assert_eq!(
        u1.raw_bytes(),
        format!("{}\r", msg_line("u1", None, "user", "q1", 1)).as_bytes()
    );
    assert_eq!(
        dry_run(&path),
        RepairOutcome {
            dropped_lines: 1,
            reason: Some(RepairSkip::InvalidSessionHeader),
            messages: vec![RepairMessage {
                level: RepairLevel::Warn,
                text: "session file repair skipped: invalid session header (bom-crlf.jsonl)"
                    .to_owned(),
            }],
            ..RepairOutcome::default()
        }
    );
    let (_dir, copy) = planted("bom-crlf.jsonl");
    let id = append_only_adds_a_line(&copy);
    let bytes = std::fs::read(&copy).unwrap();
    assert!(bytes.starts_with(b"\xEF\xBB\xBF{\"type\":\"session\""));
    assert!(!bytes.ends_with(b"\r\n"));
    let again = SessionManager::open_read_only(&copy, None).unwrap();
    assert_eq!(again.report, clean(&copy));
    assert_eq!(ids(again.session.get_branch(None)), ["u1", "a1", "u2", &id]);
}

/// Raw U+2028, U+2029 and U+0085 inside strings are ordinary characters (JSON allows them
/// unescaped): read exactly, never taken for line breaks; a new entry holding them is written
/// with them raw, as `JSON.stringify` does, and reads back the same.
fn line_separators() {
    let path = fixture("line-separators.jsonl");
    let ro = SessionManager::open_read_only(&path, None).unwrap();
    assert_eq!(ro.report, clean(&path));
    assert_eq!(ids(ro.session.get_entries()), ["u1", "a1", "u2"]);
    assert_eq!(texts(&ro.session), ["a\u{2028}b", "c\u{2029}d", "e\u{85}f"]);
    assert_eq!(dry_run(&path), no_repair());
    let (_dir, copy) = planted("line-separators.jsonl");
    let mut sm = SessionManager::open(&copy, None, None).unwrap();
    sm.append_message(support::user("x\u{2028}y\u{2029}z\u{85}w", 5))
        .unwrap();
    let lines = support::lines(&copy);
    assert_eq!(lines.len(), 5);
    assert!(lines[4].contains("\"text\":\"x\u{2028}y\u{2029}z\u{85}w\""));
    let again = SessionManager::open_read_only(&copy, None).unwrap();
    assert_eq!(again.report, clean(&copy));
    assert_eq!(
        texts(&again.session),
        [
            "a\u{2028}b",
            "c\u{2029}d",
            "e\u{85}f",
            "x\u{2028}y\u{2029}z\u{85}w"
        ]
    );
}

/// Lone-surrogate escapes (`\ud800` in a text, `\udc00` in an entry id, label target and
/// label): kept exactly (ids are WTF-8, not U+FFFD), so the id still links its child and its
/// label; lossy text shows U+FFFD; a branched session re-serialises the label row with the
/// escapes, as `JSON.stringify` does, and copies the other rows byte for byte.
fn lone_surrogates() {
    let path = fixture("lone-surrogates.jsonl");
    let ro = SessionManager::open_read_only(&path, None).unwrap();
    assert_eq!(ro.report, clean(&path));
    let sm = &ro.session;
    assert_eq!(ids(sm.get_entries()), ["u1", "a\u{FFFD}", "u2", "l1"]);
    let a = js_string(&[0x61, 0xDC00]);
    let a_entry = sm.get_entry(&a).unwrap();
    assert_eq!(a_entry.id_js(), Some(&a));
    assert_eq!(
        sm.get_entry("u2").unwrap().parent_id_js(),
        Some(a.clone()),
        "the child links to the exact id"
    );
    assert_eq!(ids(sm.get_branch(Some((&a).into()))), ["u1", "a\u{FFFD}"]);
    assert_eq!(ids(sm.get_branch(None)), ["u1", "a\u{FFFD}", "u2", "l1"]);
    let u1 = sm.get_entry("u1").unwrap().value().unwrap();
    let text = u1
        .get("message")
        .and_then(|m| m.get("content"))
        .and_then(|c| c.as_array())
        .and_then(|c| c[0].get("text"))
        .cloned();
    let mut x = utf16("x");
    x.push(0xD800);
    x.extend(utf16("y"));
    assert_eq!(text, Some(JsValue::String(js_string(&x))));
    assert_eq!(
        texts(sm),
        ["x\u{FFFD}y", "pair \u{1F600} lone \u{FFFD}", "q2"]
    );
    let tree = sm.get_tree();
    let node = tree
        .nodes
        .iter()
        .find(|n| n.entry.id_js() == Some(&a))
        .unwrap();
    let mut tag = utf16("tag");
    tag.push(0xDBFF);
    assert_eq!(node.label, Some(JsValue::String(js_string(&tag))));
    assert_eq!(dry_run(&path), no_repair());

    let (_dir, copy) = planted("lone-surrogates.jsonl");
    let original = support::lines(&copy);
    let mut sm = SessionManager::open(&copy, None, None).unwrap();
    let new_file = sm.create_branched_session("u2").unwrap().unwrap();
    let lines = support::lines(&new_file);
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[1..4], original[1..4], "rows kept byte for byte");
    let label_id = sm.get_leaf_id().unwrap().to_owned();
    assert_eq!(
        lines[4],
        format!(
            r#"{{"type":"label","id":"{label_id}","parentId":"u2","timestamp":"2026-01-01T00:00:04.000Z","targetId":"a\udc00","label":"tag\udbff"}}"#
        )
    );
}

/// A line of NUL bytes between entries (what some file systems leave after a crash): reported
/// at its line and offset as NUL padding, kept in place by a writable open, skipped by the
/// index (the entries on either side still link); the repair would drop it (the reference's
/// count).
fn nul_padded() {
    let path = fixture("nul-padded.jsonl");
    let ro = SessionManager::open_read_only(&path, None).unwrap();
    assert_eq!(
        ro.report,
        OpenReport {
            malformed_lines: vec![MalformedLine {
                line: 4,
                line_offset: 552,
                error_offset: 552,
                error: "expected a value at byte 0".to_owned(),
                torn: false,
                nul_padded: true,
            }],
            ..clean(&path)
        }
    );
    let sm = &ro.session;
    assert_eq!(ids(sm.get_branch(None)), ["u1", "a1", "u2", "a2"]);
    assert_eq!(texts(sm), ["q1", "r1", "q2", "r2"]);
    assert_eq!(sm.get_entry("u2").unwrap().location(), loc(&path, 5, 585));
    assert_eq!(dry_run(&path), drops(1));
    let (_dir, copy) = planted("nul-padded.jsonl");
    append_only_adds_a_line(&copy);
    assert!(
        std::fs::read(&copy)
            .unwrap()
            .windows(34)
            .any(|w| w == [&b"\n"[..], &[0u8; 32][..], &b"\n"[..]].concat())
    );
}

/// A torn entry (`u2` cut inside a key) fused with the complete `a2` on one line, as when a
/// write is cut short and the next append lands on the same line: the line is reported (the
/// JSON error at byte 92 of it); `a2` is lost with it, so `u3`, whose parent it is, has a
/// dangling parent: reported, not re-parented (its branch and context start at it, and the
/// context says why).
fn torn_fused() {
    let path = fixture("torn-fused.jsonl");
    let ro = SessionManager::open_read_only(&path, None).unwrap();
    assert_eq!(
        ro.report,
        OpenReport {
            malformed_lines: vec![MalformedLine {
                line: 4,
                line_offset: 552,
                error_offset: 644,
                error: "expected ':' at byte 92".to_owned(),
                torn: false,
                nul_padded: false,
            }],
            dangling_parents: vec![DanglingParent {
                id: "u3".to_owned(),
                parent_id: "a2".to_owned(),
                line: Some(5),
            }],
            ..clean(&path)
        }
    );
    let sm = &ro.session;
    assert_eq!(ids(sm.get_entries()), ["u1", "a1", "u3"]);
    assert_eq!(ids(sm.get_branch(None)), ["u3"]);
    let u3 = sm.get_entry("u3").unwrap();
    assert_eq!((u3.parent_id(), u3.raw_parent_id()), (None, Some("a2")));
    let ctx = sm.build_session_context().unwrap();
    assert_eq!(texts(sm), ["q3"]);
    assert_eq!(
        ctx.gap,
        Some(ContextGap {
            entry_id: "u3".to_owned(),
            missing_parent_id: "a2".to_owned(),
            at: loc(&path, 5, 878),
        })
    );
    assert_eq!(sm.build_session_context_at("a1").unwrap().gap, None);
    assert_eq!(dry_run(&path), drops(1));
    let (_dir, copy) = planted("torn-fused.jsonl");
    append_only_adds_a_line(&copy);
}

/// A second `type:"session"` row (two files joined) and an id carried by two entries: the
/// first header is the session's, the second is an opaque row (reported); the later `u1`
/// wins lookups (reported with both lines), so `a2` continues it.
fn duplicate_header_and_ids() {
    let path = fixture("duplicate-header-ids.jsonl");
    let ro = SessionManager::open_read_only(&path, None).unwrap();
    assert_eq!(
        ro.report,
        OpenReport {
            duplicate_ids: vec![DuplicateId {
                id: "u1".to_owned(),
                lines: vec![Some(2), Some(5)],
            }],
            extra_headers: vec![Some(4)],
            ..clean(&path)
        }
    );
    let sm = &ro.session;
    assert_eq!(sm.get_session_id(), "0195f000-0000-7000-8000-000000000006");
    assert_eq!(ids(sm.get_entries()), ["u1", "a1", "u1", "a2"]);
    assert_eq!(sm.get_entry("u1").unwrap().location(), loc(&path, 5, 692));
    assert_eq!(ids(sm.get_branch(None)), ["u1", "a2"]);
    assert_eq!(texts(sm), ["q1 again", "r2"]);
    assert_eq!(dry_run(&path), no_repair());
    let (_dir, copy) = planted("duplicate-header-ids.jsonl");
    append_only_adds_a_line(&copy);
}

/// A 2-cycle `A↔B` (with a child `C`) and a self-parent `S` (with a child `T`): both cycles
/// reported in file order; every walk ends; a self-parent is a root (as in the reference) and a
/// broken cycle is no gap.
fn cycles_and_self_parents() {
    let path = fixture("cycles.jsonl");
    let ro = SessionManager::open_read_only(&path, None).unwrap();
    assert_eq!(
        ro.report,
        OpenReport {
            cycles: vec![vec!["A".to_owned(), "B".to_owned()], vec!["S".to_owned()]],
            ..clean(&path)
        }
    );
    let sm = &ro.session;
    assert_eq!(sm.get_leaf_id(), Some("T"));
    assert_eq!(ids(sm.get_branch(None)), ["S", "T"]);
    assert_eq!(ids(sm.get_branch(Some("C".into()))), ["A", "B", "C"]);
    assert_eq!(ids(sm.get_branch(Some("A".into()))), ["B", "A"]);
    let ctx = sm.build_session_context().unwrap();
    assert_eq!(texts(sm), ["self", "under-self"]);
    assert_eq!(ctx.gap, None);
    assert_eq!(sm.build_session_context_at("C").unwrap().gap, None);
    assert_eq!(
        support::tree_shape(sm),
        [
            ("u1".to_owned(), 0),
            ("A".to_owned(), 0),
            ("B".to_owned(), 1),
            ("C".to_owned(), 2),
            ("S".to_owned(), 0),
            ("T".to_owned(), 1),
        ]
    );
    assert_eq!(dry_run(&path), no_repair());
    let (_dir, copy) = planted("cycles.jsonl");
    append_only_adds_a_line(&copy);
}

/// Missing parents: `u3` names `gone`; `u6` names the opaque row `o1`, whose own parent `lost`
/// is missing (`u4` also names `o1` but was appended right after it, so its parent is the
/// visible leaf `a3`, as in the reference). Both are reported; neither is re-parented: each
/// starts its branch, and the context marks the gap with the missing id and the entry's place.
fn missing_parent() {
    let path = fixture("missing-parent.jsonl");
    let ro = SessionManager::open_read_only(&path, None).unwrap();
    assert_eq!(
        ro.report,
        OpenReport {
            dangling_parents: vec![
                DanglingParent {
                    id: "u3".to_owned(),
                    parent_id: "gone".to_owned(),
                    line: Some(4),
                },
                DanglingParent {
                    id: "u6".to_owned(),
                    parent_id: "lost".to_owned(),
                    line: Some(8),
                },
            ],
            ..clean(&path)
        }
    );
    let sm = &ro.session;
    assert_eq!(ids(sm.get_entries()), ["u1", "a1", "u3", "a3", "u4", "u6"]);
    assert_eq!(sm.get_leaf_id(), Some("u6"));
    assert_eq!(ids(sm.get_branch(None)), ["u6"]);
    let u3 = sm.get_entry("u3").unwrap();
    assert_eq!((u3.parent_id(), u3.raw_parent_id()), (None, Some("gone")));
    let u4 = sm.get_entry("u4").unwrap();
    assert_eq!(
        (u4.parent_id().as_deref(), u4.raw_parent_id()),
        (Some("a3"), Some("o1"))
    );
    let u6 = sm.get_entry("u6").unwrap();
    assert_eq!((u6.parent_id(), u6.raw_parent_id()), (None, Some("o1")));
    let ctx = sm.build_session_context().unwrap();
    assert_eq!(texts(sm), ["q6"]);
    assert_eq!(
        ctx.gap,
        Some(ContextGap {
            entry_id: "u6".to_owned(),
            missing_parent_id: "lost".to_owned(),
            at: loc(&path, 8, 1188),
        })
    );
    let at_u4 = sm.build_session_context_at("u4").unwrap();
    let at_u4_ids: Vec<&str> = at_u4.messages.iter().map(|m| m.entry.id()).collect();
    assert_eq!(at_u4_ids, ["u3", "a3", "u4"]);
    assert_eq!(
        at_u4.gap,
        Some(ContextGap {
            entry_id: "u3".to_owned(),
            missing_parent_id: "gone".to_owned(),
            at: loc(&path, 4, 552),
        })
    );
    assert_eq!(sm.build_session_context_at("a1").unwrap().gap, None);
    assert_eq!(
        support::tree_shape(sm),
        [
            ("u1".to_owned(), 0),
            ("a1".to_owned(), 1),
            ("u3".to_owned(), 0),
            ("a3".to_owned(), 1),
            ("u4".to_owned(), 2),
            ("u6".to_owned(), 0),
        ]
    );
    assert_eq!(dry_run(&path), no_repair());
    let (_dir, copy) = planted("missing-parent.jsonl");
    append_only_adds_a_line(&copy);
}

/// The 16 MiB line: a user message whose line is exactly 16 MiB (generated, not committed).
/// Read, reported clean, listed, not repaired, and appended after, like any other.
fn line_of_16_mib() {
    const LINE: usize = 16 * 1024 * 1024;
    let dir = support::tempdir();
    let path = dir.path().join("huge.jsonl");
    let overhead = msg_line("u1", None, "user", "", 1).len();
    let text = "x".repeat(LINE - overhead);
    let u1 = msg_line("u1", None, "user", &text, 1);
    assert_eq!(u1.len(), LINE);
    let a1 = msg_line("a1", Some("u1"), "assistant", "r1", 2);
    let body = format!("{HEADER}\n{u1}\n{a1}\n");
    session_store::io::write_raw(&path, body.as_bytes()).unwrap();
    let ro = SessionManager::open_read_only(&path, None).unwrap();
    assert_eq!(ro.report, clean(&path));
    assert_eq!(ro.report.bytes, HEADER.len() + LINE + a1.len() + 3);
    let sm = &ro.session;
    assert_eq!(ids(sm.get_branch(None)), ["u1", "a1"]);
    assert_eq!(
        sm.get_entry("a1").unwrap().location(),
        loc(&path, 3, HEADER.len() + 1 + LINE + 1)
    );
    let t = texts(sm);
    assert_eq!(t.len(), 2);
    assert_eq!(t[0], text);
    assert_eq!(t[1], "r1");
    let info = session_store::session_info(&path).unwrap();
    assert_eq!(
        (info.message_count, info.first_message.len()),
        (2, text.len())
    );
    assert_eq!(dry_run(&path), no_repair());
    append_only_adds_a_line(&path);
}

/// 20,000 entries in one chain (generated): reported clean; the branch, the context and the
/// tree hold every entry in order; an append is a single added line.
fn twenty_thousand_entries() {
    const N: usize = 20_000;
    let dir = support::tempdir();
    let path = dir.path().join("long.jsonl");
    let mut body = format!("{HEADER}\n");
    let id = |k: usize| format!("e{k:05}");
    for k in 0..N {
        let role = if k % 2 == 0 { "user" } else { "assistant" };
        let parent = (k > 0).then(|| id(k - 1));
        body.push_str(&msg_line(
            &id(k),
            parent.as_deref(),
            role,
            &format!("t{k}"),
            (k % 60) as u32,
        ));
        body.push('\n');
    }
    session_store::io::write_raw(&path, body.as_bytes()).unwrap();
    let ro = SessionManager::open_read_only(&path, None).unwrap();
    assert_eq!(ro.report, clean(&path));
    let sm = &ro.session;
    assert_eq!(sm.entry_count(), N);
    assert_eq!(sm.get_leaf_id(), Some("e19999"));
    let branch = ids(sm.get_branch(None));
    let want: Vec<String> = (0..N).map(id).collect();
    assert_eq!(branch, want);
    let ctx = sm.build_session_context().unwrap();
    assert_eq!(ctx.messages.len(), N);
    assert_eq!(ctx.gap, None);
    assert_eq!(
        ctx.messages[N - 1]
            .to_value()
            .unwrap()
            .get("content")
            .cloned(),
        Some(support::js(r#"[{"type":"text","text":"t19999"}]"#))
    );
    let tree = sm.get_tree();
    assert_eq!((tree.nodes.len(), tree.roots.len()), (N, 1));
    assert_eq!(ids(sm.get_children(Some("e09999"))), ["e10000"]);
    let new_id = append_only_adds_a_line(&path);
    let again = SessionManager::open_read_only(&path, None).unwrap();
    assert_eq!(again.session.entry_count(), N + 1);
    assert_eq!(again.session.get_leaf_id(), Some(new_id.as_str()));
    assert_eq!(
        again
            .session
            .get_entry(&new_id)
            .unwrap()
            .parent_id()
            .as_deref(),
        Some("e19999")
    );
}

/// Two files with the same session id in one directory: the listing shows both, each under
/// that id (newest first); each opens as its own session. Looking a session up by that id
/// (`sessions … --session <id>`) reports the ambiguity: `session-cli`'s
/// `tests/same_session_id.rs` runs the binary on these two fixtures.
fn same_session_id_twice() {
    let dir = support::tempdir();
    let a = dir.path().join("same-id-a.jsonl");
    let b = dir.path().join("same-id-b.jsonl");
    for (from, to) in [("same-id-a.jsonl", &a), ("same-id-b.jsonl", &b)] {
        session_store::io::write_raw(to, &std::fs::read(fixture(from)).unwrap()).unwrap();
    }
    const ID: &str = "0195f000-0000-7000-8000-000000000009";
    let listed = SessionManager::list("/home/dev/project", Some(dir.path())).unwrap();
    let summary: Vec<(PathBuf, &str, &str)> = listed
        .iter()
        .map(|i| (i.path.clone(), i.id.as_str(), i.first_message.as_str()))
        .collect();
    assert_eq!(
        summary,
        [
            (a.clone(), ID, "first file"),
            (b.clone(), ID, "second file")
        ]
    );
    for p in [&a, &b] {
        let ro = SessionManager::open_read_only(p, None).unwrap();
        assert_eq!(ro.report, clean(p));
        assert_eq!(ro.session.get_session_id(), ID);
    }
}

#[test]
fn bad_input_catalogue() {
    let checks: [(&str, fn()); 11] = [
        ("BOM + CRLF", bom_crlf),
        ("raw U+2028/U+2029/U+0085 in strings", line_separators),
        ("lone-surrogate escapes", lone_surrogates),
        ("NUL-padded line mid-file", nul_padded),
        ("torn entry fused with a complete one", torn_fused),
        (
            "duplicate header and duplicate ids",
            duplicate_header_and_ids,
        ),
        ("parent cycles and self-parents", cycles_and_self_parents),
        ("missing parents", missing_parent),
        ("a 16 MiB single line", line_of_16_mib),
        ("20,000 entries", twenty_thousand_entries),
        ("two files with the same session id", same_session_id_twice),
    ];
    let failed: Vec<&str> = std::thread::scope(|s| {
        // Collected so that every check is spawned before the first is joined.
        #[allow(clippy::needless_collect)]
        let handles: Vec<_> = checks
            .iter()
            .map(|&(name, check)| (name, s.spawn(check)))
            .collect();
        handles
            .into_iter()
            .filter_map(|(name, h)| h.join().is_err().then_some(name))
            .collect()
    });
    println!(
        "RELIABILITY {{\"suite\":\"badInput\",\"fixtures\":{},\"matched\":{}}}",
        checks.len(),
        checks.len() - failed.len()
    );
    assert!(failed.is_empty(), "fixtures not matched: {failed:?}");
}
