//! Appends after another writer's lines, edge cases (docs/DEVIATIONS.md D30).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

mod support;

use std::path::{Path, PathBuf};

use session_store::{AppendError, SessionManager};
use support::{HEADER, assistant, msg_line, user};

fn write_session(dir: &Path, lines: &[String]) -> PathBuf {
    let file = dir.join("s.jsonl");
    let mut text = format!("{HEADER}\n");
    for l in lines {
        text.push_str(l);
        text.push('\n');
    }
    support::write(&file, &text);
    file
}

fn parent_in_file(file: &Path, id: &str) -> Option<String> {
    let needle = format!("\"id\":\"{id}\"");
    let line = support::lines(file)
        .into_iter()
        .find(|l| l.contains(&needle))
        .unwrap_or_else(|| panic!("no line for {id}"));
    support::js(&line)
        .get("parentId")
        .and_then(|p| p.as_str_lossy())
        .map(|p| p.into_owned())
}

/// A session whose file holds no assistant yet: our appends are held in memory and written
/// by one full rewrite at the first assistant. Another writer's lines that continue the leaf
/// meanwhile must not end up as a sibling branch of ours (the issue: "if they descend from its
/// leaf, it fast-forwards"; otherwise `Diverged`).
#[test]
fn a_held_session_flushed_after_another_writers_lines_does_not_fork_silently() {
    let dir = support::tempdir();
    let file = write_session(dir.path(), &[msg_line("u1", None, "user", "q1", 1)]);
    let mut ours = SessionManager::open(&file, None, None).unwrap();
    let mut theirs = SessionManager::open(&file, None, None).unwrap();
    // They answer first (their first assistant writes the file).
    let t1 = theirs.append_message(assistant("their answer", 2)).unwrap();
    assert_eq!(parent_in_file(&file, &t1).as_deref(), Some("u1"));
    // We ask a follow-up (held in memory: no assistant in our view yet), then get an answer.
    let q = ours.append_message(user("our follow-up", 3)).unwrap();
    let out = ours.append_message(assistant("our answer", 4));
    let _ = &q;
    match out {
        Ok(o1) => {
            // Fast-forward expected: our answer under theirs, one chain.
            assert_eq!(o1.len(), 8);
            assert_eq!(
                parent_in_file(&file, &q).as_deref(),
                Some(t1.as_str()),
                "silent fork: our entry is a sibling of the other writer's; file:\n{}",
                support::read(&file)
            );
        }
        Err(AppendError::Diverged { .. }) => {}
        Err(other) => panic!("{other:?}"),
    }
}

/// An orphan row already in the file names an id the other writer then uses (here: the other
/// writer's entry continues our leaf). Whatever the verdict, a `Diverged` error must name at
/// least one tip (its message says "tips: …" and the caller is told to branch to one).
#[test]
fn a_divergence_always_names_a_tip() {
    let dir = support::tempdir();
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
    ours.append_message(user("q2", 4)).unwrap();
    let leaf = ours.get_leaf_id().unwrap().to_owned();
    session_store::io::append_raw(
        &file,
        format!(
            "{}\n",
            msg_line("f1", Some(&leaf), "assistant", "theirs", 5)
        )
        .as_bytes(),
    )
    .unwrap();
    match ours.append_message(user("q3", 6)) {
        Ok(id) => assert_eq!(parent_in_file(&file, &id).as_deref(), Some("o1")),
        Err(AppendError::Diverged { tips, .. }) => {
            assert!(
                !tips.is_empty(),
                "Diverged with no tips: nothing to branch to"
            );
        }
        Err(other) => panic!("{other:?}"),
    }
}

/// Another writer re-appends a copy of our leaf's line (a retried write, a sync tool): no new
/// entry, nothing to diverge from.
#[test]
fn a_foreign_copy_of_our_leaf_line_is_not_a_divergence() {
    let dir = support::tempdir();
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
