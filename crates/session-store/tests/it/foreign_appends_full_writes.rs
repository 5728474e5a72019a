//! Full writes after another writer's lines (docs/DEVIATIONS.md D30): the first full write of
//! a session held in memory (its first assistant message), `flush` and `rewrite_file` judge
//! the lines another writer appended as a plain append does. Under the default policy lines
//! that do not continue this manager's leaf make the write fail with `Diverged` (nothing
//! written, the held rows still held); lines that continue it move the leaf to their tip;
//! `AppendOnOwnLeaf` keeps OpenClaw 2026.6.11's adoption.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::support::{HEADER, assistant, msg_line, user};
use session_store::{
    AppendError, ForeignAppendPolicy, MemStorage, OpenParams, SessionManager, Storage,
};

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

fn parent_in(text: &str, id: &str) -> Option<String> {
    let needle = format!("\"id\":\"{id}\"");
    let line = text
        .lines()
        .find(|l| l.contains(&needle))
        .unwrap_or_else(|| panic!("no line for {id} in\n{text}"));
    crate::support::js(line)
        .get("parentId")
        .and_then(|p| p.as_str_lossy())
        .map(|p| p.into_owned())
}

fn parent_in_file(file: &Path, id: &str) -> Option<String> {
    parent_in(&crate::support::read(file), id)
}

fn assert_diverged(
    out: Result<impl std::fmt::Debug, AppendError>,
    file: &Path,
    leaf: &str,
    tips: &[&str],
) {
    match out {
        Err(AppendError::Diverged {
            path,
            leaf: l,
            tips: t,
        }) => {
            assert_eq!(path, file);
            assert_eq!(l.as_deref(), Some(leaf));
            assert_eq!(t, tips);
        }
        other => panic!("expected Diverged, got {other:?}"),
    }
}

/// A file with one user message (no assistant): two managers open it. They answer first
/// (their first assistant writes the file, `t1` under `u1`); we ask a follow-up (held in
/// memory) and get an answer: our full write would put `q` beside `t1` under `u1`, a second
/// branch. It fails with `Diverged` naming `t1`; the file keeps their bytes, our follow-up is
/// still held (leaf `q`, not flushed), their row is adopted (we can branch to it), and a retry
/// fails the same way.
#[test]
fn a_held_session_written_after_another_writers_answer_diverges_and_writes_nothing() {
    let dir = crate::support::tempdir();
    let file = write_session(dir.path(), &[msg_line("u1", None, "user", "q1", 1)]);
    let mut ours = SessionManager::open(&file, None, None).unwrap();
    let mut theirs = SessionManager::open(&file, None, None).unwrap();
    let t1 = theirs.append_message(assistant("their answer", 2)).unwrap();
    let written = crate::support::read(&file);
    assert_eq!(parent_in(&written, &t1).as_deref(), Some("u1"));
    let q = ours.append_message(user("our follow-up", 3)).unwrap();
    assert_diverged(
        ours.append_message(assistant("our answer", 4)),
        &file,
        &q,
        &[&t1],
    );
    assert_eq!(crate::support::read(&file), written);
    assert_eq!(ours.get_leaf_id(), Some(q.as_str()));
    assert!(!ours.is_flushed());
    assert_eq!(
        crate::support::context_texts(&ours),
        ["q1", "our follow-up"],
        "the answer that failed is not kept"
    );
    assert_diverged(
        ours.append_message(assistant("our answer", 4)),
        &file,
        &q,
        &[&t1],
    );
    assert_eq!(crate::support::read(&file), written);
    // Their answer is known: branching to it is the way on (our follow-up stays a side
    // branch under u1, written with the rest).
    ours.branch(&t1).unwrap();
    let a = ours.append_message(assistant("after theirs", 5)).unwrap();
    let now = crate::support::read(&file);
    assert!(now.starts_with(&written), "their bytes are kept:\n{now}");
    assert_eq!(parent_in(&now, &q).as_deref(), Some("u1"));
    assert_eq!(parent_in(&now, &a).as_deref(), Some(t1.as_str()));
    assert!(ours.is_flushed());
}

/// The same, choosing our own leaf: an explicit `branch` to it makes the write a deliberate
/// fork (the append right after an explicit move lands where the caller moved it).
#[test]
fn a_held_session_that_branches_to_its_own_leaf_writes_the_fork_on_purpose() {
    let dir = crate::support::tempdir();
    let file = write_session(dir.path(), &[msg_line("u1", None, "user", "q1", 1)]);
    let mut ours = SessionManager::open(&file, None, None).unwrap();
    let mut theirs = SessionManager::open(&file, None, None).unwrap();
    let t1 = theirs.append_message(assistant("their answer", 2)).unwrap();
    let q = ours.append_message(user("our follow-up", 3)).unwrap();
    assert_diverged(
        ours.append_message(assistant("our answer", 4)),
        &file,
        &q,
        &[&t1],
    );
    ours.branch(&q).unwrap();
    let a = ours.append_message(assistant("our answer", 4)).unwrap();
    let now = crate::support::read(&file);
    assert_eq!(parent_in(&now, &t1).as_deref(), Some("u1"));
    assert_eq!(parent_in(&now, &q).as_deref(), Some("u1"));
    assert_eq!(parent_in(&now, &a).as_deref(), Some(q.as_str()));
    assert_eq!(crate::support::lines(&file).len(), 5);
}

/// `AppendOnOwnLeaf` keeps OpenClaw 2026.6.11's behaviour: their row is adopted and ours are
/// written beside it, without an error.
#[test]
fn the_reference_policy_writes_a_held_session_beside_the_other_writers_lines() {
    let dir = crate::support::tempdir();
    let file = write_session(dir.path(), &[msg_line("u1", None, "user", "q1", 1)]);
    let mut ours = SessionManager::open(&file, None, None).unwrap();
    ours.set_foreign_append_policy(ForeignAppendPolicy::AppendOnOwnLeaf);
    let mut theirs = SessionManager::open(&file, None, None).unwrap();
    let t1 = theirs.append_message(assistant("their answer", 2)).unwrap();
    let q = ours.append_message(user("our follow-up", 3)).unwrap();
    let a = ours.append_message(assistant("our answer", 4)).unwrap();
    let now = crate::support::read(&file);
    let lines: Vec<&str> = now.lines().collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(parent_in(&now, &t1).as_deref(), Some("u1"));
    assert_eq!(parent_in(&now, &q).as_deref(), Some("u1"));
    assert_eq!(parent_in(&now, &a).as_deref(), Some(q.as_str()));
    assert!(lines[2].contains(&t1), "their row before ours:\n{now}");
}

/// `flush` of held rows after another writer's answer under the persisted base: `Diverged`,
/// nothing written, the rows still held.
#[test]
fn a_flush_of_held_rows_after_another_writers_answer_diverges() {
    let dir = crate::support::tempdir();
    let file = write_session(dir.path(), &[msg_line("u1", None, "user", "q1", 1)]);
    let mut ours = SessionManager::open(&file, None, None).unwrap();
    let mut theirs = SessionManager::open(&file, None, None).unwrap();
    let q = ours.append_message(user("our follow-up", 2)).unwrap();
    let t1 = theirs.append_message(assistant("their answer", 3)).unwrap();
    let written = crate::support::read(&file);
    assert_diverged(ours.flush(), &file, &q, &[&t1]);
    assert_eq!(crate::support::read(&file), written);
    assert!(!ours.is_flushed());
    assert_eq!(ours.get_leaf_id(), Some(q.as_str()));
    // `rewrite_file` is judged the same way.
    assert_diverged(ours.rewrite_file(), &file, &q, &[&t1]);
    assert_eq!(crate::support::read(&file), written);
}

/// `rewrite_file` after another writer continued our (written) leaf: their lines are adopted
/// and the leaf fast-forwards to their tip; the file holds their lines and no leaf control,
/// and the next append hangs under their tip.
#[test]
fn a_rewrite_after_lines_that_continue_the_leaf_fast_forwards() {
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
        "{}\n{}\n",
        msg_line("t1", Some("a1"), "user", "q2", 3),
        msg_line("t2", Some("t1"), "assistant", "r2", 4)
    );
    session_store::io::append_raw(&file, theirs.as_bytes()).unwrap();
    let expected = crate::support::read(&file);
    ours.rewrite_file().unwrap();
    assert_eq!(crate::support::read(&file), expected);
    assert_eq!(ours.get_leaf_id(), Some("t2"));
    let q3 = ours.append_message(user("q3", 5)).unwrap();
    assert_eq!(parent_in_file(&file, &q3).as_deref(), Some("t2"));
}

/// `rewrite_file` after another writer branched from an ancestor: `Diverged`, the file
/// byte-identical; after `branch` to our own leaf the rewrite goes through.
#[test]
fn a_rewrite_after_another_branch_diverges_until_the_caller_chooses() {
    let dir = crate::support::tempdir();
    let file = write_session(
        dir.path(),
        &[
            msg_line("u1", None, "user", "q1", 1),
            msg_line("a1", Some("u1"), "assistant", "r1", 2),
        ],
    );
    let mut ours = SessionManager::open(&file, None, None).unwrap();
    session_store::io::append_raw(
        &file,
        format!("{}\n", msg_line("t1", Some("u1"), "user", "other", 3)).as_bytes(),
    )
    .unwrap();
    let before = crate::support::read(&file);
    assert_diverged(ours.rewrite_file(), &file, "a1", &["t1"]);
    assert_eq!(crate::support::read(&file), before);
    ours.branch("a1").unwrap();
    ours.rewrite_file().unwrap();
    let lines = crate::support::lines(&file);
    // Their row kept; the leaf (a1, no longer the last entry) is written as a leaf control.
    assert!(crate::support::read(&file).starts_with(&before));
    assert_eq!(lines.len(), 5);
    assert_eq!(
        crate::support::js(&lines[4])
            .get("targetId")
            .and_then(|v| v.as_str_lossy())
            .as_deref(),
        Some("a1")
    );
}

/// On a storage whose full writes are fenced (`MemStorage`, as Redis), the held session's
/// first full write is judged the same way.
#[test]
fn a_held_session_on_a_fenced_storage_diverges_the_same_way() {
    let mem = Arc::new(MemStorage::new());
    let dir = Path::new("/agents/main/sessions");
    mem.ensure_dir(dir).unwrap();
    let file = dir.join("s.jsonl");
    let text = format!("{HEADER}\n{}\n", msg_line("u1", None, "user", "q1", 1));
    assert_eq!(
        mem.replace_if(&file, text.as_bytes(), None).unwrap(),
        session_store::Replace::Done
    );
    let storage: Arc<dyn Storage> = mem.clone();
    let params = OpenParams::default();
    let mut ours = SessionManager::on(Arc::clone(&storage))
        .open_with(&file, &params)
        .unwrap();
    let mut theirs = SessionManager::on(Arc::clone(&storage))
        .open_with(&file, &params)
        .unwrap();
    let t1 = theirs.append_message(assistant("their answer", 2)).unwrap();
    let written = mem.read_all(&file).unwrap();
    let q = ours.append_message(user("our follow-up", 3)).unwrap();
    assert_diverged(
        ours.append_message(assistant("our answer", 4)),
        &file,
        &q,
        &[&t1],
    );
    assert_eq!(mem.read_all(&file).unwrap(), written);
    assert!(!ours.is_flushed());
}
