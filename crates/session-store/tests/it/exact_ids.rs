//! Ids are kept exactly: lone-surrogate ids, a lone-surrogate `cwd` and session name survive
//! everything the store writes (labels, compaction, held flushes, branched sessions,
//! `remove_trailing_entries`), and sequential zero-padded ids index like random ones.
//! Reference behaviour was checked with `node xtask/conformance/runner.mjs --reference openclaw`
//! where a test names an op-script.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::PathBuf;

use crate::support::{HEADER, msg_line};
use session_format::json::{JsString, JsValue, parse_value};
use session_store::SessionManager;

fn canon(dir: &tempfile::TempDir) -> PathBuf {
    std::fs::canonicalize(dir.path()).unwrap()
}

fn lone(units: &[u16]) -> JsString {
    JsString::from_utf16(units)
}

fn field(line: &str, key: &str) -> JsValue {
    parse_value(line.as_bytes())
        .unwrap()
        .get(key)
        .cloned()
        .unwrap_or(JsValue::Null)
}

// ------------------------------------------------------------------------------------------
// Lone-surrogate ids survive everything the store writes.

/// A v3 file whose entries are `\ud800` ← `\udc00`: labels, compaction, a held flush's
/// synthesised leaf control, a branched session's re-parented rows and re-created labels, and
/// `remove_trailing_entries` all write the exact escapes.
#[test]
fn lone_surrogate_ids_are_written_back_exactly() {
    let dir = crate::support::tempdir();
    let d = canon(&dir);
    let f = d.join("s.jsonl");
    let u = msg_line("X", None, "user", "q", 1).replace(r#""id":"X""#, r#""id":"\ud800""#);
    let a = msg_line("Y", Some("X"), "assistant", "r", 2)
        .replace(r#""id":"Y""#, r#""id":"\udc00""#)
        .replace(r#""parentId":"X""#, r#""parentId":"\ud800""#);
    crate::support::write(&f, &format!("{HEADER}\n{u}\n{a}\n"));
    let mut sm = SessionManager::open(&f, None, None).unwrap();
    let d800 = lone(&[0xD800]);
    let dc00 = lone(&[0xDC00]);
    assert_eq!(sm.get_leaf_id_js(), Some(&dc00));
    assert_eq!(sm.get_leaf_id(), Some("\u{FFFD}"));
    // A label on the first entry, addressed exactly.
    sm.append_label_change_value(&d800, Some(JsValue::from("L")))
        .unwrap();
    sm.append_compaction("S", &d800, 5.0, None, None).unwrap();
    let lines = crate::support::lines(&f);
    assert_eq!(lines.len(), 5);
    assert!(lines[3].contains(r#""parentId":"\udc00""#), "{}", lines[3]);
    assert!(lines[3].contains(r#""targetId":"\ud800""#), "{}", lines[3]);
    assert!(
        lines[4].contains(r#""firstKeptEntryId":"\ud800""#),
        "{}",
        lines[4]
    );
    assert_eq!(sm.get_label("\u{FFFD}"), None, "a &str cannot name it");
    let ctx = sm.build_session_context().unwrap();
    // Compaction summary, then the kept entries from `\ud800` on.
    assert_eq!(ctx.messages.len(), 3);

    // Branch back to the first entry, then branch the session from the second.
    sm.branch(&d800).unwrap();
    assert_eq!(sm.get_leaf_id_js(), Some(&d800));
    let new_file = sm.create_branched_session(&dc00).unwrap().unwrap();
    let branched = crate::support::lines(&new_file);
    // header, \ud800, \udc00 (parent unchanged: bytes kept), label re-created on \ud800.
    assert_eq!(branched.len(), 4, "{branched:?}");
    assert_eq!(branched[1], u);
    assert_eq!(branched[2], a);
    assert!(branched[3].contains(r#""parentId":"\udc00""#));
    assert!(branched[3].contains(r#""targetId":"\ud800""#));
    assert!(branched[3].contains(r#""label":"L""#));
}

/// `remove_trailing_entries` re-parents a row that hung below a removed lone-surrogate id onto
/// the exact surviving id, and a held flush after `branch` writes a leaf control naming the
/// exact ids.
#[test]
fn rewrites_reparent_and_record_leaf_with_exact_ids() {
    let dir = crate::support::tempdir();
    let d = canon(&dir);
    let f = d.join("s.jsonl");
    let u = msg_line("X", None, "user", "q", 1).replace(r#""id":"X""#, r#""id":"\ud800""#);
    let a = msg_line("Y", Some("X"), "assistant", "r", 2)
        .replace(r#""id":"Y""#, r#""id":"\udc00""#)
        .replace(r#""parentId":"X""#, r#""parentId":"\ud800""#);
    let opaque = r#"{"type":"plugin","id":"o1","parentId":"\udc00"}"#;
    crate::support::write(&f, &format!("{HEADER}\n{u}\n{a}\n{opaque}\n"));
    let mut sm = SessionManager::open(&f, None, None).unwrap();
    let removed = sm
        .remove_trailing_entries(|e| e.is_assistant_message(), None)
        .unwrap();
    assert_eq!(removed, 1);
    let lines = crate::support::lines(&f);
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert_eq!(lines[1], u);
    assert_eq!(
        lines[2],
        r#"{"type":"plugin","id":"o1","parentId":"\ud800"}"#
    );
    // The file-implied append cursor is `o1`, memory's is `\ud800`: a leaf control records it.
    assert_eq!(field(&lines[3], "type"), JsValue::from("leaf"));
    assert_eq!(field(&lines[3], "parentId"), JsValue::from("o1"));
    assert_eq!(
        field(&lines[3], "targetId"),
        JsValue::String(lone(&[0xD800]))
    );
    assert!(lines[3].contains(r#""targetId":"\ud800""#), "{}", lines[3]);
    assert!(!lines[3].contains("appendParentId"), "{}", lines[3]);
    let sm = SessionManager::open(&f, None, None).unwrap();
    assert_eq!(sm.get_leaf_id_js(), Some(&lone(&[0xD800])));
}

/// A header `cwd` holding a lone surrogate is copied exactly into a branched session's header
/// (op-script b24d-lone-cwd: the reference writes `"cwd":"/x\ud800"`), and the session name
/// is readable exactly (b24c).
#[test]
fn lone_surrogate_cwd_and_name_survive() {
    let dir = crate::support::tempdir();
    let d = canon(&dir);
    let f = d.join("s.jsonl");
    let h = HEADER.replace(r#""cwd":"/home/dev/project""#, r#""cwd":"/x\ud800""#);
    let info = r#"{"type":"session_info","id":"i1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","name":" \ud800x "}"#;
    crate::support::write(
        &f,
        &format!(
            "{h}\n{}\n{}\n{info}\n",
            msg_line("u1", None, "user", "q", 1),
            msg_line("a1", Some("u1"), "assistant", "r", 2)
        ),
    );
    let mut sm = SessionManager::open(&f, None, None).unwrap();
    assert_eq!(sm.get_cwd(), "/x\u{FFFD}");
    assert_eq!(
        sm.get_session_name_js().unwrap(),
        Some(lone(&[0xD800, 0x78]))
    );
    assert_eq!(sm.get_session_name().unwrap().as_deref(), Some("\u{FFFD}x"));
    let nf = sm.create_branched_session("a1").unwrap().unwrap();
    let first = crate::support::lines(&nf).remove(0);
    assert!(first.contains(r#""cwd":"/x\ud800""#), "{first}");
}

// ------------------------------------------------------------------------------------------
// Patterned ids index like random ones.

#[test]
fn sequential_zero_padded_ids_index_correctly() {
    let n = 20_000;
    let mut text = format!("{HEADER}\n");
    let mut parent: Option<String> = None;
    for i in 0..n {
        let id = format!("{i:08}");
        let role = if i % 2 == 1 { "assistant" } else { "user" };
        text.push_str(&msg_line(&id, parent.as_deref(), role, "x", 1));
        text.push('\n');
        parent = Some(id);
    }
    let dir = crate::support::tempdir();
    let f = canon(&dir).join("s.jsonl");
    crate::support::write(&f, &text);
    let sm = SessionManager::open(&f, None, None).unwrap();
    assert_eq!(sm.entry_count(), n);
    assert_eq!(sm.get_leaf_id(), Some("00019999"));
    let branch = sm.get_branch(None);
    assert_eq!(branch.len(), n);
    assert_eq!(branch[0].id(), "00000000");
    assert_eq!(sm.get_children(Some("00012345"))[0].id(), "00012346");
    assert_eq!(
        sm.get_entry("00000007").unwrap().parent_id().as_deref(),
        Some("00000006")
    );
}
