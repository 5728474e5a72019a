//! Appends after another writer's lines (docs/DEVIATIONS.md D30): two managers on one file.
//!
//! - lines that continue this manager's leaf: it fast-forwards (adopts them, moves its leaf to
//!   their tip) and appends there, with and without the session write lock;
//! - lines that start another branch (not under the leaf, or ending in two tips): the append
//!   fails with `AppendError::Diverged` naming the other tips, the file keeps its bytes, and it
//!   keeps failing until the caller moves the leaf or chooses the reference's policy;
//! - `ForeignAppendPolicy::AppendOnOwnLeaf` (OpenClaw 2026.6.11): the entry hangs under the old
//!   leaf;
//! - side appends never diverge, and an explicit `branch` is where the next append lands.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::{Path, PathBuf};

use crate::support::{HEADER, assistant, ids, msg_line, user};
use session_store::{AppendError, ForeignAppendPolicy, LockOptions, SessionManager};

/// A file holding the header, `u1` (user) and `a1` (assistant, child of `u1`).
fn session(dir: &Path) -> PathBuf {
    let file = dir.join("s.jsonl");
    crate::support::write(
        &file,
        &format!(
            "{HEADER}\n{}\n{}\n",
            msg_line("u1", None, "user", "q1", 1),
            msg_line("a1", Some("u1"), "assistant", "r1", 2)
        ),
    );
    file
}

fn open(file: &Path) -> SessionManager {
    SessionManager::open(file, None, None).unwrap()
}

/// The raw `parentId` of the file's line holding entry `id`.
fn parent_in_file(file: &Path, id: &str) -> Option<String> {
    let needle = format!("\"id\":\"{id}\"");
    let line = crate::support::lines(file)
        .into_iter()
        .find(|l| l.contains(&needle))
        .unwrap_or_else(|| panic!("no line for {id}"));
    let v = crate::support::js(&line);
    v.get("parentId")
        .and_then(|p| p.as_str_lossy())
        .map(|p| p.into_owned())
}

fn diverged(e: AppendError) -> (PathBuf, Option<String>, Vec<String>) {
    match e {
        AppendError::Diverged { path, leaf, tips } => (path, leaf, tips),
        other => panic!("expected Diverged, got {other:?}"),
    }
}

fn fast_forward(lock: bool) {
    let dir = crate::support::tempdir();
    let file = session(dir.path());
    let mut ours = open(&file);
    let mut theirs = open(&file);
    if lock {
        ours.set_write_lock(Some(LockOptions::default()));
        theirs.set_write_lock(Some(LockOptions::default()));
    }
    assert_eq!(
        ours.foreign_append_policy(),
        ForeignAppendPolicy::FastForward
    );
    // The other writer continues the chain: u2 under a1, a2 under u2.
    let u2 = theirs.append_message(user("q2", 3)).unwrap();
    let a2 = theirs.append_message(assistant("r2", 4)).unwrap();
    assert_eq!(parent_in_file(&file, &u2).as_deref(), Some("a1"));
    assert_eq!(ours.get_leaf_id(), Some("a1"));

    let u3 = ours.append_message(user("q3", 5)).unwrap();

    // Our entry hangs under their tip: one chain u1 → a1 → u2 → a2 → u3.
    assert_eq!(parent_in_file(&file, &u3).as_deref(), Some(a2.as_str()));
    assert_eq!(ours.get_leaf_id(), Some(u3.as_str()));
    assert_eq!(
        ours.get_entry(&u3).unwrap().parent_id().as_deref(),
        Some(a2.as_str())
    );
    assert_eq!(
        ids(ours.get_branch(None)),
        ["u1", "a1", u2.as_str(), a2.as_str(), u3.as_str()]
    );
    assert_eq!(crate::support::lines(&file).len(), 1 + 5);
    assert_eq!(ours.diagnostics().adopted_lines, 2);
    assert_eq!(ours.get_tree().roots.len(), 1);

    // And the other writer, next, fast-forwards over ours.
    let a3 = theirs.append_message(assistant("r3", 6)).unwrap();
    assert_eq!(parent_in_file(&file, &a3).as_deref(), Some(u3.as_str()));
    assert_eq!(crate::support::lines(&file).len(), 1 + 6);
    // A fresh load sees one chain whose leaf is the last line.
    let reopened = open(&file);
    assert_eq!(reopened.get_leaf_id(), Some(a3.as_str()));
    assert_eq!(reopened.get_branch(None).len(), 6);
}

#[test]
fn an_append_after_lines_that_continue_the_leaf_fast_forwards_to_their_tip() {
    fast_forward(false);
}

#[test]
fn a_locked_append_after_lines_that_continue_the_leaf_fast_forwards_to_their_tip() {
    fast_forward(true);
}

#[test]
fn lines_on_another_branch_make_the_append_fail_with_diverged_and_write_nothing() {
    let dir = crate::support::tempdir();
    let file = session(dir.path());
    let mut ours = open(&file);
    let mut theirs = open(&file);
    // The other writer goes back to u1 and answers again: a branch beside a1.
    theirs.branch("u1").unwrap();
    let b1 = theirs.append_message(assistant("other answer", 3)).unwrap();
    assert_eq!(parent_in_file(&file, &b1).as_deref(), Some("u1"));
    let bytes = std::fs::read(&file).unwrap();

    let err = ours.append_message(user("q2", 4)).unwrap_err();
    let text = err.to_string();
    let (path, leaf, tips) = diverged(err);
    assert_eq!(path, file);
    assert_eq!(leaf.as_deref(), Some("a1"));
    assert_eq!(tips, [b1.as_str()]);
    assert_eq!(
        text,
        format!(
            "session file {}: another writer appended a branch this manager's leaf a1 is not on \
             (tips: {b1}); nothing was written (branch to a tip, or choose \
             ForeignAppendPolicy::AppendOnOwnLeaf)",
            file.display()
        )
    );
    // Nothing written; the other writer's line is known, the leaf has not moved.
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
    assert_eq!(ours.get_leaf_id(), Some("a1"));
    assert_eq!(ids(ours.get_entries()), ["u1", "a1", b1.as_str()]);

    // The refusal holds until the caller chooses.
    let again = diverged(ours.append_message(user("q2", 4)).unwrap_err());
    assert_eq!(again.2, [b1.as_str()]);
    assert_eq!(std::fs::read(&file).unwrap(), bytes);

    // Choosing the other writer's tip: the append lands there.
    ours.branch(&b1).unwrap();
    let u2 = ours.append_message(user("q2", 4)).unwrap();
    assert_eq!(parent_in_file(&file, &u2).as_deref(), Some(b1.as_str()));
    assert_eq!(crate::support::lines(&file).len(), 1 + 4);
}

#[test]
fn two_new_tips_under_the_leaf_are_a_divergence_too() {
    let dir = crate::support::tempdir();
    let file = session(dir.path());
    let mut ours = open(&file);
    let mut theirs = open(&file);
    let x = theirs.append_message(user("x", 3)).unwrap();
    theirs.branch("a1").unwrap();
    let y = theirs.append_message(user("y", 4)).unwrap();
    assert_eq!(parent_in_file(&file, &x).as_deref(), Some("a1"));
    assert_eq!(parent_in_file(&file, &y).as_deref(), Some("a1"));
    let bytes = std::fs::read(&file).unwrap();

    let (_, leaf, tips) = diverged(ours.append_message(user("z", 5)).unwrap_err());
    assert_eq!(leaf.as_deref(), Some("a1"));
    assert_eq!(tips, [x.as_str(), y.as_str()]);
    assert_eq!(std::fs::read(&file).unwrap(), bytes);

    // Branching back to the own leaf is a deliberate third branch there.
    ours.branch("a1").unwrap();
    let z = ours.append_message(user("z", 5)).unwrap();
    assert_eq!(parent_in_file(&file, &z).as_deref(), Some("a1"));
}

#[test]
fn the_reference_policy_appends_on_the_old_leaf() {
    let dir = crate::support::tempdir();
    let file = session(dir.path());
    let mut ours = open(&file);
    let mut theirs = open(&file);
    ours.set_foreign_append_policy(ForeignAppendPolicy::AppendOnOwnLeaf);
    assert_eq!(
        ours.foreign_append_policy(),
        ForeignAppendPolicy::AppendOnOwnLeaf
    );
    let u2 = theirs.append_message(user("q2", 3)).unwrap();

    let u3 = ours.append_message(user("q3", 4)).unwrap();

    // OpenClaw 2026.6.11: adopted, but our entry hangs under a1, beside theirs.
    assert_eq!(parent_in_file(&file, &u3).as_deref(), Some("a1"));
    assert_eq!(ours.get_leaf_id(), Some(u3.as_str()));
    assert_eq!(
        ids(ours.get_entries()),
        ["u1", "a1", u2.as_str(), u3.as_str()]
    );
    let a1 = ours.get_children(Some("a1"));
    assert_eq!(ids(a1), [u2.as_str(), u3.as_str()]);
}

#[test]
fn the_reference_policy_settles_a_pending_divergence() {
    let dir = crate::support::tempdir();
    let file = session(dir.path());
    let mut ours = open(&file);
    let mut theirs = open(&file);
    theirs.branch("u1").unwrap();
    let b1 = theirs.append_message(assistant("other", 3)).unwrap();
    let (_, _, tips) = diverged(ours.append_message(user("q2", 4)).unwrap_err());
    assert_eq!(tips, [b1]);
    ours.set_foreign_append_policy(ForeignAppendPolicy::AppendOnOwnLeaf);
    let u2 = ours.append_message(user("q2", 4)).unwrap();
    assert_eq!(parent_in_file(&file, &u2).as_deref(), Some("a1"));
}

#[test]
fn side_appends_of_another_writer_never_diverge() {
    let dir = crate::support::tempdir();
    let file = session(dir.path());
    let mut ours = open(&file);
    // A delivery mirror appended beside the leaf (openclaw-jsonl.md §2.11).
    let side = r#"{"type":"message","id":"m1","parentId":"a1","appendMode":"side","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"mirror","timestamp":1767225600002}}"#;
    session_store::io::append_raw(&file, format!("{side}\n").as_bytes()).unwrap();

    let u2 = ours.append_message(user("q2", 4)).unwrap();

    assert_eq!(parent_in_file(&file, &u2).as_deref(), Some("a1"));
    assert_eq!(ours.get_leaf_id(), Some(u2.as_str()));
    assert_eq!(ids(ours.get_entries()), ["u1", "a1", "m1", u2.as_str()]);
}

#[test]
fn an_append_after_an_explicit_branch_lands_there_whatever_was_appended() {
    let dir = crate::support::tempdir();
    let file = session(dir.path());
    let mut ours = open(&file);
    let mut theirs = open(&file);
    ours.branch("u1").unwrap();
    let u2 = theirs.append_message(user("q2", 3)).unwrap();
    assert_eq!(parent_in_file(&file, &u2).as_deref(), Some("a1"));

    let b1 = ours.append_message(assistant("retry", 4)).unwrap();

    assert_eq!(parent_in_file(&file, &b1).as_deref(), Some("u1"));
    assert_eq!(ours.get_leaf_id(), Some(b1.as_str()));
}

#[test]
fn a_divergence_found_under_the_lock_writes_nothing() {
    let dir = crate::support::tempdir();
    let file = session(dir.path());
    let mut ours = open(&file);
    ours.set_write_lock(Some(LockOptions::default()));
    let mut theirs = open(&file);
    theirs.set_write_lock(Some(LockOptions::default()));
    theirs.branch("u1").unwrap();
    let b1 = theirs.append_message(assistant("other", 3)).unwrap();
    let bytes = std::fs::read(&file).unwrap();

    let (_, leaf, tips) = diverged(ours.append_custom_entry("note", None).unwrap_err());

    assert_eq!((leaf.as_deref(), tips), (Some("a1"), vec![b1]));
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
    assert!(!dir.path().join("s.jsonl.lock").exists());
}
