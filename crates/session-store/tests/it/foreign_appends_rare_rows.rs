//! Appends after another writer's lines that hold rare rows (docs/DEVIATIONS.md D30): an
//! entry that gives an older orphan its parent, entries whose parents form a cycle, a verbatim
//! copy of our own leaf's line. A `Diverged` error always names a tip; rows that add nothing
//! never make one.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::{Path, PathBuf};

use crate::support::{HEADER, msg_line, user};
use session_store::{AppendError, SessionManager};

fn write_session(dir: &Path, lines: &[String]) -> PathBuf {
    let file = dir.join("s.jsonl");
    let mut text = format!("{HEADER}\n");
    for l in lines {
        text.push_str(l);
        text.push('\n');
    }
    crate::support::write(&file, &text);
    file
}

fn parent_in_file(file: &Path, id: &str) -> Option<String> {
    let needle = format!("\"id\":\"{id}\"");
    let line = crate::support::lines(file)
        .into_iter()
        .find(|l| l.contains(&needle))
        .unwrap_or_else(|| panic!("no line for {id}"));
    crate::support::js(&line)
        .get("parentId")
        .and_then(|p| p.as_str_lossy())
        .map(|p| p.into_owned())
}

/// An orphan row already in the file names an id the other writer then uses for an entry
/// under our leaf: their entry has a child (the old orphan), so the chain from our leaf goes
/// on through the orphan, which is its only tip: the append fast-forwards onto it (no
/// `Diverged` without a tip to branch to).
#[test]
fn an_entry_that_gives_an_orphan_its_parent_fast_forwards_to_the_orphan() {
    let dir = crate::support::tempdir();
    let file = write_session(
        dir.path(),
        &[
            msg_line("u1", None, "user", "q1", 1),
            msg_line("a1", Some("u1"), "assistant", "r1", 2),
            msg_line("o1", Some("f1"), "user", "orphan", 3),
        ],
    );
    let mut ours = SessionManager::open(&file, None, None).unwrap();
    ours.branch("a1").unwrap();
    let q2 = ours.append_message(user("q2", 4)).unwrap();
    session_store::io::append_raw(
        &file,
        format!("{}\n", msg_line("f1", Some(&q2), "assistant", "theirs", 5)).as_bytes(),
    )
    .unwrap();
    let q3 = ours.append_message(user("q3", 6)).unwrap();
    assert_eq!(parent_in_file(&file, &q3).as_deref(), Some("o1"));
    assert_eq!(ours.get_leaf_id(), Some(q3.as_str()));
    assert_eq!(
        crate::support::context_texts(&ours),
        ["q1", "r1", "q2", "theirs", "orphan", "q3"]
    );
}

/// Two entries of the other writer that name each other as parents: no tip at all, and no
/// chain from our leaf reaches them. Nothing to fast-forward to and no tip to name: the
/// append lands under our leaf.
#[test]
fn entries_whose_parents_form_a_cycle_leave_the_cursor_where_it_is() {
    let dir = crate::support::tempdir();
    let file = write_session(
        dir.path(),
        &[
            msg_line("u1", None, "user", "q1", 1),
            msg_line("a1", Some("u1"), "assistant", "r1", 2),
        ],
    );
    let mut ours = SessionManager::open(&file, None, None).unwrap();
    let before = crate::support::read(&file);
    let cycle = format!(
        "{}\n{}\n",
        msg_line("x1", Some("x2"), "user", "x", 3),
        msg_line("x2", Some("x1"), "assistant", "y", 4)
    );
    session_store::io::append_raw(&file, cycle.as_bytes()).unwrap();
    let q2 = ours.append_message(user("q2", 5)).unwrap();
    assert_eq!(parent_in_file(&file, &q2).as_deref(), Some("a1"));
    let lines = crate::support::lines(&file);
    assert_eq!(lines.len(), 6);
    assert_eq!(
        crate::support::read(&file),
        format!("{before}{cycle}{}\n", lines[5])
    );
}

/// A cycle beside an entry that continues our leaf: the cycle does not descend from our
/// leaf, so this is another branch, and the error names the one tip there is (`x1`, the only
/// entry without a child): branching there is the way on.
#[test]
fn a_cycle_beside_a_continuation_is_a_divergence_naming_the_continuation() {
    let dir = crate::support::tempdir();
    let file = write_session(
        dir.path(),
        &[
            msg_line("u1", None, "user", "q1", 1),
            msg_line("a1", Some("u1"), "assistant", "r1", 2),
        ],
    );
    let mut ours = SessionManager::open(&file, None, None).unwrap();
    let theirs = format!(
        "{}\n{}\n{}\n",
        msg_line("c1", Some("c2"), "user", "x", 3),
        msg_line("c2", Some("c1"), "assistant", "y", 4),
        msg_line("x1", Some("a1"), "user", "theirs", 5)
    );
    session_store::io::append_raw(&file, theirs.as_bytes()).unwrap();
    let before = crate::support::read(&file);
    match ours.append_message(user("q2", 6)) {
        Err(AppendError::Diverged { path, leaf, tips }) => {
            assert_eq!(path, file);
            assert_eq!(leaf.as_deref(), Some("a1"));
            assert_eq!(tips, ["x1"]);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(crate::support::read(&file), before);
    ours.branch("x1").unwrap();
    let q2 = ours.append_message(user("q2", 6)).unwrap();
    assert_eq!(parent_in_file(&file, &q2).as_deref(), Some("x1"));
}

/// Another writer re-appends a copy of our leaf's line (a retried write, a sync tool): no new
/// entry, nothing to diverge from.
#[test]
fn a_foreign_copy_of_our_leaf_line_is_not_a_divergence() {
    let dir = crate::support::tempdir();
    let a1 = msg_line("a1", Some("u1"), "assistant", "r1", 2);
    let file = write_session(
        dir.path(),
        &[msg_line("u1", None, "user", "q1", 1), a1.clone()],
    );
    let mut ours = SessionManager::open(&file, None, None).unwrap();
    session_store::io::append_raw(&file, format!("{a1}\n").as_bytes()).unwrap();
    let id = ours.append_message(user("q2", 3)).unwrap();
    assert_eq!(parent_in_file(&file, &id).as_deref(), Some("a1"));
}

/// A verbatim copy of our leaf's line followed by the other writer's continuation of it: the
/// copy adds nothing, the continuation is one chain from our leaf, so the append
/// fast-forwards onto it.
#[test]
fn a_copy_of_our_leaf_line_then_a_continuation_fast_forwards() {
    let dir = crate::support::tempdir();
    let a1 = msg_line("a1", Some("u1"), "assistant", "r1", 2);
    let file = write_session(
        dir.path(),
        &[msg_line("u1", None, "user", "q1", 1), a1.clone()],
    );
    let mut ours = SessionManager::open(&file, None, None).unwrap();
    let theirs = format!(
        "{a1}\n{}\n",
        msg_line("t1", Some("a1"), "user", "theirs", 3)
    );
    session_store::io::append_raw(&file, theirs.as_bytes()).unwrap();
    let id = ours.append_message(user("q2", 4)).unwrap();
    assert_eq!(parent_in_file(&file, &id).as_deref(), Some("t1"));
}

/// A row reusing our leaf's id with other bytes is not a copy: it is another writer's entry
/// in our leaf's place, which continues nothing of ours, so the append refuses (naming it).
#[test]
fn a_row_reusing_our_leaf_id_with_other_bytes_is_a_divergence() {
    let dir = crate::support::tempdir();
    let file = write_session(
        dir.path(),
        &[
            msg_line("u1", None, "user", "q1", 1),
            msg_line("a1", Some("u1"), "assistant", "r1", 2),
        ],
    );
    let mut ours = SessionManager::open(&file, None, None).unwrap();
    let other = format!("{}\n", msg_line("a1", Some("u1"), "assistant", "other", 3));
    session_store::io::append_raw(&file, other.as_bytes()).unwrap();
    match ours.append_message(user("q2", 4)) {
        Err(AppendError::Diverged { leaf, tips, .. }) => {
            assert_eq!(leaf.as_deref(), Some("a1"));
            assert_eq!(tips, ["a1"]);
        }
        other => panic!("{other:?}"),
    }
}
