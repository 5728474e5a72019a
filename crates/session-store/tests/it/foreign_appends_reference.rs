//! Our managers and a long-lived OpenClaw 2026.6.11 SessionManager writing one file
//! (docs/DEVIATIONS.md D30): what the reference reads back after our fast-forwards,
//! divergences and recoveries. Needs the reference installed (`$CONFORMANCE_REF_DIR`, else
//! `<workspace>/target/conformance-ref/openclaw`; skips with `SKIP` otherwise).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::{Path, PathBuf};

use crate::reference_repl::{Reference, fresh};
use crate::support::{assistant, user};
use session_store::{AppendError, SessionManager};

fn session(dir: &Path) -> PathBuf {
    let file = dir.join("s.jsonl");
    crate::support::write(
        &file,
        &format!(
            "{}\n{}\n{}\n",
            crate::support::HEADER,
            crate::support::msg_line("u1", None, "user", "q1", 1),
            crate::support::msg_line("a1", Some("u1"), "assistant", "r1", 2)
        ),
    );
    file
}

/// Two of our managers and one reference writer interleave; every file state is read by a
/// fresh reference open with the context one of our fresh opens builds.
#[test]
fn two_managers_and_a_reference_writer_interleave_without_silent_forks() {
    let Some(mut r) =
        Reference::start("two_managers_and_a_reference_writer_interleave_without_silent_forks")
    else {
        return;
    };
    let dir = crate::support::tempdir();
    let file = session(dir.path());
    let mut m1 = SessionManager::open(&file, None, None).unwrap();
    let mut m2 = SessionManager::open(&file, None, None).unwrap();
    r.call(&format!(
        r#"{{"op":"open","name":"r","file":"{}"}}"#,
        file.display()
    ));

    // m1 appends; m2 fast-forwards over it.
    let x1 = m1.append_message(user("m1-q", 3)).unwrap();
    let x2 = m2.append_message(assistant("m2-a", 4)).unwrap();
    assert_eq!(
        m2.get_entry(&x2).unwrap().parent_id().as_deref(),
        Some(x1.as_str())
    );
    // The reference, which never reads lines it did not write, appends under a1: a fork.
    let y1 = r.id(r#"{"op":"user","name":"r","text":"ref-q"}"#);
    // m1 and m2 both see another branch now.
    let e = m1.append_message(user("m1-q2", 5)).unwrap_err();
    match e {
        AppendError::Diverged { tips, leaf, .. } => {
            assert_eq!(leaf.as_deref(), Some(x1.as_str()));
            assert_eq!(tips, [x2.clone(), y1.clone()]);
        }
        other => panic!("{other:?}"),
    }
    let e = m2.append_message(user("m2-q2", 5)).unwrap_err();
    match e {
        AppendError::Diverged { tips, leaf, .. } => {
            assert_eq!(leaf.as_deref(), Some(x2.as_str()));
            assert_eq!(tips, std::slice::from_ref(&y1));
        }
        other => panic!("{other:?}"),
    }
    // Recovery: m2 follows the reference's branch.
    m2.branch(&y1).unwrap();
    let z = m2.append_message(assistant("m2-on-ref", 6)).unwrap();
    let (leaf, texts) = fresh(&mut r, &file);
    assert_eq!(leaf.as_deref(), Some(z.as_str()));
    assert_eq!(texts, ["q1", "r1", "ref-q", "m2-on-ref"]);
    let ours = SessionManager::open(&file, None, None).unwrap();
    assert_eq!(crate::support::context_texts(&ours), texts);
    // m1 (still diverged: x2 and z are both new since its leaf) chooses z.
    assert!(matches!(
        m1.append_message(user("m1-q3", 7)),
        Err(AppendError::Diverged { .. })
    ));
    m1.branch(&z).unwrap();
    let w = m1.append_message(user("m1-q3", 7)).unwrap();
    let (leaf, texts) = fresh(&mut r, &file);
    assert_eq!(leaf.as_deref(), Some(w.as_str()));
    assert_eq!(texts, ["q1", "r1", "ref-q", "m2-on-ref", "m1-q3"]);
    // And the reference writer, whose leaf is still y1, appends a sibling of z: the
    // reference's own fork, which our next append refuses.
    let y2 = r.id(r#"{"op":"assistant","name":"r","text":"ref-a"}"#);
    match m1.append_message(user("m1-q4", 8)).unwrap_err() {
        AppendError::Diverged { tips, .. } => assert_eq!(tips, [y2]),
        other => panic!("{other:?}"),
    }
}

/// Foreign appends that are labels or session info only continue the leaf: we fast-forward,
/// and a fresh reference open agrees with our context and leaf.
#[test]
fn foreign_labels_and_session_info_fast_forward() {
    let Some(mut r) = Reference::start("foreign_labels_and_session_info_fast_forward") else {
        return;
    };
    let dir = crate::support::tempdir();
    let file = session(dir.path());
    let mut ours = SessionManager::open(&file, None, None).unwrap();
    r.call(&format!(
        r#"{{"op":"open","name":"r","file":"{}"}}"#,
        file.display()
    ));
    let l = r.id(r#"{"op":"label","name":"r","target":"u1","label":"start"}"#);
    let i = r.id(r#"{"op":"info","name":"r","sessionName":"named"}"#);
    let u = ours.append_message(user("q2", 3)).unwrap();
    assert_eq!(
        ours.get_entry(&u).unwrap().parent_id().as_deref(),
        Some(i.as_str())
    );
    assert_eq!(
        ours.get_entry(&i).unwrap().parent_id().as_deref(),
        Some(l.as_str())
    );
    assert_eq!(ours.get_session_name().unwrap().as_deref(), Some("named"));
    let (leaf, texts) = fresh(&mut r, &file);
    assert_eq!(leaf.as_deref(), Some(u.as_str()));
    assert_eq!(texts, ["q1", "r1", "q2"]);
}

/// The reference writer moves its leaf to an ancestor and appends: a branch from an ancestor,
/// which we refuse; branching back to our own leaf is the deliberate fork.
#[test]
fn a_reference_branch_from_an_ancestor_diverges_and_recovers_on_our_own_leaf() {
    let Some(mut r) = Reference::start(
        "a_reference_branch_from_an_ancestor_diverges_and_recovers_on_our_own_leaf",
    ) else {
        return;
    };
    let dir = crate::support::tempdir();
    let file = session(dir.path());
    let mut ours = SessionManager::open(&file, None, None).unwrap();
    r.call(&format!(
        r#"{{"op":"open","name":"r","file":"{}"}}"#,
        file.display()
    ));
    r.call(r#"{"op":"branch","name":"r","id":"u1"}"#);
    let y = r.id(r#"{"op":"assistant","name":"r","text":"alt"}"#);
    let before = std::fs::read(&file).unwrap();
    match ours.append_message(user("q2", 3)).unwrap_err() {
        AppendError::Diverged { tips, leaf, path } => {
            assert_eq!(tips, std::slice::from_ref(&y));
            assert_eq!(leaf.as_deref(), Some("a1"));
            assert_eq!(path, file);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(std::fs::read(&file).unwrap(), before);
    ours.branch("a1").unwrap();
    let u = ours.append_message(user("q2", 3)).unwrap();
    assert_eq!(
        ours.get_entry(&u).unwrap().parent_id().as_deref(),
        Some("a1")
    );
    let (leaf, texts) = fresh(&mut r, &file);
    assert_eq!(leaf.as_deref(), Some(u.as_str()));
    assert_eq!(texts, ["q1", "r1", "q2"]);
    let t = SessionManager::open(&file, None, None).unwrap();
    assert_eq!(crate::support::context_texts(&t), texts);
}

/// A session whose file holds no assistant yet: the reference writer answers first (its first
/// assistant writes the file), while our follow-up is held in memory. Our first full write
/// would put the follow-up beside the reference's answer: it fails with `Diverged` naming the
/// reference's entry and leaves the file as the reference wrote it; after `branch` to that
/// entry our answer goes under it, and a fresh reference open follows our answer.
#[test]
fn a_held_session_after_a_reference_answer_diverges_then_continues_under_it() {
    let test = "a_held_session_after_a_reference_answer_diverges_then_continues_under_it";
    let Some(mut r) = Reference::start(test) else {
        return;
    };
    let dir = crate::support::tempdir();
    let file = dir.path().join("s.jsonl");
    crate::support::write(
        &file,
        &format!(
            "{}\n{}\n",
            crate::support::HEADER,
            crate::support::msg_line("u1", None, "user", "q1", 1)
        ),
    );
    let mut ours = SessionManager::open(&file, None, None).unwrap();
    r.call(&format!(
        r#"{{"op":"open","name":"r","file":"{}"}}"#,
        file.display()
    ));
    let t1 = r.id(r#"{"op":"assistant","name":"r","text":"their answer"}"#);
    let written = crate::support::read(&file);
    let q = ours.append_message(user("our follow-up", 3)).unwrap();
    match ours.append_message(assistant("our answer", 4)) {
        Err(AppendError::Diverged { path, leaf, tips }) => {
            assert_eq!(path, file);
            assert_eq!(leaf.as_deref(), Some(q.as_str()));
            assert_eq!(tips, std::slice::from_ref(&t1));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(crate::support::read(&file), written);
    assert_eq!(
        fresh(&mut r, &file),
        (
            Some(t1.clone()),
            vec!["q1".to_owned(), "their answer".to_owned()]
        )
    );
    ours.branch(&t1).unwrap();
    let a = ours.append_message(assistant("after theirs", 5)).unwrap();
    assert!(crate::support::read(&file).starts_with(&written));
    let (leaf, texts) = fresh(&mut r, &file);
    assert_eq!(leaf.as_deref(), Some(a.as_str()));
    assert_eq!(texts, ["q1", "their answer", "after theirs"]);
    assert_eq!(crate::support::context_texts(&ours), texts);
}
