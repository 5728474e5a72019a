//! Branched sessions and forks over a compaction, read back by OpenClaw 2026.6.11
//! (docs/DEVIATIONS.md D31): the copy's context (ours and the reference's) equals the
//! source's at that leaf as the reference builds it, whatever `firstKeptEntryId` names.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::{Path, PathBuf};

use crate::reference_repl::{Reference, ctx_at, fresh};
use crate::support::{HEADER, msg_line};
use session_store::SessionManager;

/// u1 → a1 → L1 (label of u1) → [extra] → u2 → a2 → C1 (compaction keeping `first_kept`)
/// → u3 → a3, plus a side branch b1 under u1. `extra` is an optional row between L1 and u2
/// (u2's parent is then `extra_id`).
fn source(dir: &Path, first_kept: &str, extra: Option<(&str, &str)>) -> PathBuf {
    let file = dir.join("src.jsonl");
    let mut lines = vec![
        HEADER.to_owned(),
        msg_line("u1", None, "user", "q1", 1),
        msg_line("a1", Some("u1"), "assistant", "r1", 2),
        msg_line("b1", Some("u1"), "assistant", "side", 3),
        r#"{"type":"label","id":"L1","parentId":"a1","timestamp":"2026-01-01T00:00:04.000Z","targetId":"u1","label":"start"}"#.to_owned(),
    ];
    let u2_parent = match extra {
        Some((id, line)) => {
            lines.push(line.to_owned());
            id
        }
        None => "L1",
    };
    lines.push(msg_line("u2", Some(u2_parent), "user", "q2", 5));
    lines.push(msg_line("a2", Some("u2"), "assistant", "r2", 6));
    lines.push(format!(r#"{{"type":"compaction","id":"C1","parentId":"a2","timestamp":"2026-01-01T00:00:07.000Z","summary":"S","firstKeptEntryId":"{first_kept}","tokensBefore":100}}"#));
    lines.push(msg_line("u3", Some("C1"), "user", "q3", 8));
    lines.push(msg_line("a3", Some("u3"), "assistant", "r3", 9));
    crate::support::write(&file, &(lines.join("\n") + "\n"));
    file
}

fn check(test: &str, first_kept: &str, extra: Option<(&str, &str)>) {
    let Some(mut r) = Reference::start(test) else {
        return;
    };
    let dir = crate::support::tempdir();
    let src = source(dir.path(), first_kept, extra);
    let want = ctx_at(&mut r, &src, "a3");
    let src_ours = SessionManager::open(&src, None, None).unwrap();
    assert_eq!(
        crate::support::context_texts(&src_ours),
        want,
        "our source context"
    );

    // create_branched_session at a3.
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let mut sm = SessionManager::open(&src, Some(&out), None).unwrap();
    let branched = sm.create_branched_session("a3").unwrap().unwrap();
    assert_eq!(
        crate::support::context_texts(&sm),
        want,
        "our branched context (in memory)"
    );
    let (_, ref_view) = fresh(&mut r, &branched);
    assert_eq!(
        ref_view,
        want,
        "reference view of our branched file:\n{}",
        crate::support::read(&branched)
    );
    let reopened = SessionManager::open(&branched, None, None).unwrap();
    assert_eq!(
        crate::support::context_texts(&reopened),
        want,
        "our view of our branched file"
    );

    // fork_from.
    let fork_dir = dir.path().join("fork");
    let fork = SessionManager::fork_from(&src, "/home/dev/project", Some(&fork_dir)).unwrap();
    let fork_file = fork.get_session_file().unwrap().to_path_buf();
    assert_eq!(
        crate::support::context_texts(&fork),
        want,
        "our fork context"
    );
    let (_, ref_fork) = fresh(&mut r, &fork_file);
    assert_eq!(ref_fork, want, "reference view of our fork");
}

#[test]
fn branched_session_over_a_compaction_keeping_from_a_label() {
    check(
        "branched_session_over_a_compaction_keeping_from_a_label",
        "L1",
        None,
    );
}

#[test]
fn branched_session_over_a_compaction_keeping_from_a_plain_message() {
    check(
        "branched_session_over_a_compaction_keeping_from_a_plain_message",
        "u2",
        None,
    );
}

#[test]
fn branched_session_over_a_compaction_keeping_from_an_absent_id() {
    check(
        "branched_session_over_a_compaction_keeping_from_an_absent_id",
        "nope",
        None,
    );
}

#[test]
fn branched_session_over_a_compaction_keeping_from_an_entry_off_the_path() {
    check(
        "branched_session_over_a_compaction_keeping_from_an_entry_off_the_path",
        "b1",
        None,
    );
}

#[test]
fn branched_session_over_a_compaction_keeping_from_an_opaque_row() {
    check(
        "branched_session_over_a_compaction_keeping_from_an_opaque_row",
        "X1",
        Some((
            "X1",
            r#"{"type":"plugin_thing","id":"X1","parentId":"L1","timestamp":"2026-01-01T00:00:04.500Z"}"#,
        )),
    );
}

#[test]
fn branched_session_over_a_compaction_keeping_from_a_leaf_control() {
    check(
        "branched_session_over_a_compaction_keeping_from_a_leaf_control",
        "LC1",
        Some((
            "LC1",
            r#"{"type":"leaf","id":"LC1","parentId":"L1","targetId":"L1","timestamp":"2026-01-01T00:00:04.500Z"}"#,
        )),
    );
}

#[test]
fn branched_session_over_a_compaction_keeping_from_a_custom_entry() {
    check(
        "branched_session_over_a_compaction_keeping_from_a_custom_entry",
        "K1",
        Some((
            "K1",
            r#"{"type":"custom","id":"K1","parentId":"L1","timestamp":"2026-01-01T00:00:04.500Z","customType":"x","data":{}}"#,
        )),
    );
}

#[test]
fn branched_session_over_a_compaction_keeping_from_a_second_label_after_the_first() {
    check(
        "branched_session_over_a_compaction_keeping_from_a_second_label_after_the_first",
        "L2",
        Some((
            "L2",
            r#"{"type":"label","id":"L2","parentId":"L1","timestamp":"2026-01-01T00:00:04.500Z","targetId":"a1","label":"two"}"#,
        )),
    );
}

/// A version-1 source (no ids; the compaction keeps by line index): the fork and the branched
/// copy are read by the reference with the source's context.
#[test]
fn fork_and_branch_of_a_migrated_v1_file_keep_the_compaction() {
    let Some(mut r) = Reference::start("fork_and_branch_of_a_migrated_v1_file_keep_the_compaction")
    else {
        return;
    };
    let dir = crate::support::tempdir();
    let src = dir.path().join("v1.jsonl");
    let lines = [
        r#"{"type":"session","id":"0195f000-0000-7000-8000-0000000000v1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/dev/project"}"#,
        r#"{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"q1","timestamp":1}}"#,
        r#"{"type":"message","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"r1"}],"provider":"anthropic","model":"m","stopReason":"stop","timestamp":2}}"#,
        r#"{"type":"message","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"q2","timestamp":3}}"#,
        r#"{"type":"message","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"r2"}],"provider":"anthropic","model":"m","stopReason":"stop","timestamp":4}}"#,
        r#"{"type":"compaction","timestamp":"2026-01-01T00:00:05.000Z","summary":"S","firstKeptEntryIndex":3,"tokensBefore":10}"#,
        r#"{"type":"message","timestamp":"2026-01-01T00:00:06.000Z","message":{"role":"user","content":"q3","timestamp":6}}"#,
    ];
    crate::support::write(&src, &(lines.join("\n") + "\n"));
    let keep = dir.path().join("keep.jsonl");
    std::fs::copy(&src, &keep).unwrap();
    // The reference's view of the source (its open migrates in place: use a copy).
    let (_, want) = fresh(&mut r, &keep);
    assert_eq!(want, ["S", "q2", "r2", "q3"]);

    let fork_dir = dir.path().join("fork");
    let fork = SessionManager::fork_from(&src, "/home/dev/project", Some(&fork_dir)).unwrap();
    assert_eq!(crate::support::context_texts(&fork), want);
    let fork_file = fork.get_session_file().unwrap().to_path_buf();
    let (_, ref_fork) = fresh(&mut r, &fork_file);
    assert_eq!(
        ref_fork,
        want,
        "reference view of our fork:\n{}",
        crate::support::read(&fork_file)
    );

    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let src2 = dir.path().join("v1b.jsonl");
    crate::support::write(&src2, &(lines.join("\n") + "\n"));
    let mut sm = SessionManager::open(&src2, Some(&out), None).unwrap();
    let leaf = sm.get_leaf_id().unwrap().to_owned();
    let branched = sm.create_branched_session(&leaf).unwrap().unwrap();
    let (_, ref_b) = fresh(&mut r, &branched);
    assert_eq!(
        ref_b,
        want,
        "reference view of our branched copy:\n{}",
        crate::support::read(&branched)
    );
}
