//! Forks keep what a compaction kept (docs/DEVIATIONS.md D31).
//!
//! - `create_branched_session` drops label rows; a compaction on the path whose
//!   `firstKeptEntryId` names one is rewritten to the next copied entry of the path (serialised
//!   afresh, JavaScript key order), so the copy's context equals the source's at that leaf;
//! - `fork_from` copies every row an id can name, so the compaction keeps its bytes and the
//!   fork's context equals the source's;
//! - a `firstKeptEntryId` naming no entry is reported by the open report; the context keeps
//!   only the summary and what follows, as pi and OpenClaw build it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::{Path, PathBuf};

use crate::support::{HEADER, msg_line};
use session_format::json::JsValue;
use session_store::DanglingFirstKept;
use session_store::{SessionContext, SessionManager};

const COMPACTION: &str = r#"{"type":"compaction","id":"c1","parentId":"a2","timestamp":"2026-01-01T00:00:07.000Z","summary":"earlier talk","firstKeptEntryId":"l1","tokensBefore":900}"#;

/// u1 → a1 → l1 (label of a1, in the chain as pi and OpenClaw append it) → u2 → a2 → c1
/// (compaction keeping from l1) → u3 → a3.
fn source(dir: &Path) -> PathBuf {
    let file = dir.join("src.jsonl");
    let label = r#"{"type":"label","id":"l1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","targetId":"a1","label":"checkpoint"}"#;
    crate::support::write(
        &file,
        &format!(
            "{HEADER}\n{}\n{}\n{label}\n{}\n{}\n{COMPACTION}\n{}\n{}\n",
            msg_line("u1", None, "user", "q1", 1),
            msg_line("a1", Some("u1"), "assistant", "r1", 2),
            msg_line("u2", Some("l1"), "user", "q2", 4),
            msg_line("a2", Some("u2"), "assistant", "r2", 5),
            msg_line("u3", Some("c1"), "user", "q3", 8),
            msg_line("a3", Some("u3"), "assistant", "r3", 9),
        ),
    );
    file
}

fn values(ctx: &SessionContext<'_>) -> Vec<JsValue> {
    ctx.messages.iter().map(|m| m.to_value().unwrap()).collect()
}

fn first_kept(sm: &SessionManager, id: &str) -> JsValue {
    sm.get_entry(id)
        .unwrap()
        .value()
        .unwrap()
        .get("firstKeptEntryId")
        .cloned()
        .unwrap()
}

#[test]
fn a_branched_session_keeps_from_the_entry_after_a_dropped_first_kept_label() {
    let dir = crate::support::tempdir();
    let file = source(dir.path());
    let mut sm = SessionManager::open(&file, None, None).unwrap();
    let before = values(&sm.build_session_context_at("a3").unwrap());
    // The summary, then u2, a2 (kept from the label on), then u3, a3.
    assert_eq!(before.len(), 5);
    assert_eq!(
        before[0].get("role"),
        Some(&JsValue::from("compactionSummary"))
    );
    let texts = crate::support::context_texts(&sm);
    assert_eq!(texts, ["earlier talk", "q2", "r2", "q3", "r3"]);

    let branched = sm.create_branched_session("a3").unwrap().unwrap();

    // The label is gone from the path (re-created at the end); the compaction keeps from u2.
    assert_eq!(first_kept(&sm, "c1"), JsValue::from("u2"));
    let after = values(&sm.build_session_context_at("a3").unwrap());
    assert_eq!(after, before);
    assert_eq!(values(&sm.build_session_context().unwrap()), before);
    // On disk: the compaction row serialised afresh, its keys in their order.
    let lines = crate::support::lines(&branched);
    let c1 = lines.iter().find(|l| l.contains(r#""id":"c1""#)).unwrap();
    assert_eq!(
        c1,
        r#"{"type":"compaction","id":"c1","parentId":"a2","timestamp":"2026-01-01T00:00:07.000Z","summary":"earlier talk","firstKeptEntryId":"u2","tokensBefore":900}"#
    );
    // u2 lost its label parent: re-parented onto a1 (the reference's re-parenting).
    let u2 = lines.iter().find(|l| l.contains(r#""id":"u2""#)).unwrap();
    assert!(u2.contains(r#""parentId":"a1""#), "{u2}");
    // A fresh load of the new file builds the same context, and nothing is dangling.
    let reopened = SessionManager::open(&branched, None, None).unwrap();
    assert_eq!(
        values(&reopened.build_session_context_at("a3").unwrap()),
        before
    );
    assert_eq!(reopened.diagnostics().dangling_first_kept, []);
}

#[test]
fn a_first_kept_label_right_before_the_compaction_keeps_from_the_compaction_itself() {
    let dir = crate::support::tempdir();
    let file = dir.path().join("s.jsonl");
    let label = r#"{"type":"label","id":"l1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","targetId":"a1","label":"x"}"#;
    let compaction = r#"{"type":"compaction","id":"c1","parentId":"l1","timestamp":"2026-01-01T00:00:04.000Z","summary":"s","firstKeptEntryId":"l1","tokensBefore":10}"#;
    crate::support::write(
        &file,
        &format!(
            "{HEADER}\n{}\n{}\n{label}\n{compaction}\n{}\n",
            msg_line("u1", None, "user", "q1", 1),
            msg_line("a1", Some("u1"), "assistant", "r1", 2),
            msg_line("u2", Some("c1"), "user", "q2", 5),
        ),
    );
    let mut sm = SessionManager::open(&file, None, None).unwrap();
    let before = values(&sm.build_session_context_at("u2").unwrap());
    assert_eq!(crate::support::context_texts(&sm), ["s", "q2"]);

    sm.create_branched_session("u2").unwrap().unwrap();

    assert_eq!(first_kept(&sm, "c1"), JsValue::from("c1"));
    assert_eq!(values(&sm.build_session_context_at("u2").unwrap()), before);
    assert_eq!(sm.diagnostics().dangling_first_kept, []);
}

#[test]
fn a_compaction_keeping_from_a_message_is_copied_verbatim() {
    let dir = crate::support::tempdir();
    let file = dir.path().join("s.jsonl");
    let compaction = r#"{"type":"compaction","id":"c1","parentId":"a1","timestamp":"2026-01-01T00:00:04.000Z","summary":"s","firstKeptEntryId":"a1","tokensBefore":10}"#;
    crate::support::write(
        &file,
        &format!(
            "{HEADER}\n{}\n{}\n{compaction}\n",
            msg_line("u1", None, "user", "q1", 1),
            msg_line("a1", Some("u1"), "assistant", "r1", 2),
        ),
    );
    let mut sm = SessionManager::open(&file, None, None).unwrap();
    let branched = sm.create_branched_session("c1").unwrap().unwrap();
    assert!(crate::support::lines(&branched).contains(&compaction.to_owned()));
    assert_eq!(crate::support::context_texts(&sm), ["s", "r1"]);
}

#[test]
fn fork_from_copies_the_label_so_the_compaction_keeps_its_bytes_and_context() {
    let dir = crate::support::tempdir();
    let file = source(dir.path());
    let src = SessionManager::open(&file, None, None).unwrap();
    let before = values(&src.build_session_context_at("a3").unwrap());
    let forks = dir.path().join("forks");

    let fork = SessionManager::fork_from(&file, "/home/dev/project", Some(&forks)).unwrap();

    assert_eq!(first_kept(&fork, "c1"), JsValue::from("l1"));
    assert_eq!(values(&fork.build_session_context().unwrap()), before);
    let lines = crate::support::lines(fork.get_session_file().unwrap());
    assert!(lines.contains(&COMPACTION.to_owned()));
}

#[test]
fn a_first_kept_entry_naming_no_entry_is_reported_and_the_context_keeps_only_what_follows() {
    let dir = crate::support::tempdir();
    let file = dir.path().join("s.jsonl");
    let compaction = r#"{"type":"compaction","id":"c1","parentId":"a1","timestamp":"2026-01-01T00:00:04.000Z","summary":"s","firstKeptEntryId":"gone","tokensBefore":10}"#;
    let no_id = r#"{"type":"compaction","id":"c2","parentId":"u2","timestamp":"2026-01-01T00:00:06.000Z","summary":"t","tokensBefore":10}"#;
    crate::support::write(
        &file,
        &format!(
            "{HEADER}\n{}\n{}\n{compaction}\n{}\n{no_id}\n",
            msg_line("u1", None, "user", "q1", 1),
            msg_line("a1", Some("u1"), "assistant", "r1", 2),
            msg_line("u2", Some("c1"), "user", "q2", 5),
        ),
    );
    let ro = SessionManager::open_read_only(&file, None).unwrap();
    assert_eq!(
        ro.report.dangling_first_kept,
        [
            DanglingFirstKept {
                compaction_id: "c1".to_owned(),
                first_kept_entry_id: Some("gone".to_owned()),
                line: Some(4),
            },
            DanglingFirstKept {
                compaction_id: "c2".to_owned(),
                first_kept_entry_id: None,
                line: Some(6),
            },
        ]
    );
    assert!(!ro.report.is_clean());
    // The context keeps nothing before the last compaction (pi-format.md §3.5).
    assert_eq!(crate::support::context_texts(&ro.session), ["t"]);
    let at_u2 = ro.session.build_session_context_at("u2").unwrap();
    let texts: Vec<JsValue> = values(&at_u2)
        .iter()
        .map(|v| v.get("role").cloned().unwrap())
        .collect();
    assert_eq!(
        texts,
        [JsValue::from("compactionSummary"), JsValue::from("user")]
    );
    // A writable manager reports the same.
    let sm = SessionManager::open(&file, None, None).unwrap();
    assert_eq!(
        sm.diagnostics().dangling_first_kept,
        ro.report.dangling_first_kept
    );
}

#[test]
fn a_first_kept_opaque_row_hanging_off_a_dropped_label_keeps_from_the_next_copied_entry() {
    let dir = crate::support::tempdir();
    let file = dir.path().join("s.jsonl");
    let label = r#"{"type":"label","id":"l1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","targetId":"a1","label":"x"}"#;
    // A parent-linked opaque row after the label (another tool's row), and the compaction
    // keeping from it: reads resolve it to its canonical ancestor, the label (§2.3).
    let opaque =
        r#"{"type":"tool_trace","id":"o1","parentId":"l1","timestamp":"2026-01-01T00:00:04.000Z"}"#;
    let compaction = r#"{"type":"compaction","id":"c1","parentId":"u2","timestamp":"2026-01-01T00:00:06.000Z","summary":"s","firstKeptEntryId":"o1","tokensBefore":10}"#;
    crate::support::write(
        &file,
        &format!(
            "{HEADER}\n{}\n{}\n{label}\n{opaque}\n{}\n{compaction}\n{}\n",
            msg_line("u1", None, "user", "q1", 1),
            msg_line("a1", Some("u1"), "assistant", "r1", 2),
            msg_line("u2", Some("o1"), "user", "q2", 5),
            msg_line("u3", Some("c1"), "user", "q3", 7),
        ),
    );
    let mut sm = SessionManager::open(&file, None, None).unwrap();
    assert_eq!(first_kept(&sm, "c1"), JsValue::from("l1"));
    let before = values(&sm.build_session_context_at("u3").unwrap());
    assert_eq!(crate::support::context_texts(&sm), ["s", "q2", "q3"]);

    let branched = sm.create_branched_session("u3").unwrap().unwrap();

    // The opaque row is copied (onto a1), so keeping from it would now start at a1.
    assert!(
        crate::support::lines(&branched)
            .iter()
            .any(|l| l.contains(r#""id":"o1","parentId":"a1""#))
    );
    assert_eq!(first_kept(&sm, "c1"), JsValue::from("u2"));
    assert_eq!(values(&sm.build_session_context_at("u3").unwrap()), before);
}
