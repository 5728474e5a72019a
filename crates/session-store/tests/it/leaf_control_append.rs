//! `SessionManager::append_leaf_control` ("branch from here", openclaw-jsonl.md §1.4, §2.3):
//! one leaf-control row appended after the file's raw tail, so that our reopen and OpenClaw
//! 2026.6.11's `SessionManager.open` report the target as the leaf and the next entry lands
//! under it; refusals change nothing. The reference half skips with `SKIP` when the reference is
//! not installed (`xtask/conformance/install.sh openclaw`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use crate::reference_repl::{Reference, fresh};
use crate::support::{HEADER, ids, js, lines, msg_line, user};
use session_format::json::JsValue;
use session_store::{BranchError, SessionManager};

/// `u1 → a1 → u2 → a2`: the leaf is `a2`.
fn linear(dir: &Path) -> PathBuf {
    let path = dir.join("s.jsonl");
    crate::support::write(
        &path,
        &format!(
            "{HEADER}\n{}\n{}\n{}\n{}\n",
            msg_line("u1", None, "user", "q1", 1),
            msg_line("a1", Some("u1"), "assistant", "r1", 2),
            msg_line("u2", Some("a1"), "user", "q2", 3),
            msg_line("a2", Some("u2"), "assistant", "r2", 4),
        ),
    );
    path
}

fn str_of(v: &JsValue, key: &str) -> String {
    v.get(key).unwrap().as_str_lossy().unwrap().into_owned()
}

#[test]
fn a_leaf_control_is_one_row_after_the_raw_tail_and_moves_the_leaf_on_reopen() {
    let dir = crate::support::tempdir();
    let path = linear(dir.path());
    let before = std::fs::read(&path).unwrap();
    let mut sm = SessionManager::open(&path, None, None).unwrap();
    let id = sm.append_leaf_control("a1").unwrap();
    assert_eq!(sm.get_leaf_id(), Some("a1"));
    assert_eq!(sm.get_append_parent_id(), Some("a1"));
    assert_eq!(ids(sm.get_entries()), ["u1", "a1", "u2", "a2"]);

    let after = std::fs::read(&path).unwrap();
    assert_eq!(&after[..before.len()], &before[..]);
    let all = lines(&path);
    assert_eq!(all.len(), 6);
    let row = js(&all[5]);
    let ts = str_of(&row, "timestamp");
    assert_eq!(
        all[5],
        format!(
            r#"{{"type":"leaf","id":"{id}","parentId":"a2","timestamp":"{ts}","targetId":"a1"}}"#
        )
    );
    assert_eq!(id.len(), 8);

    let ro = SessionManager::open_read_only(&path, None).unwrap();
    assert_eq!(ro.session.get_leaf_id(), Some("a1"));
    assert_eq!(ids(ro.session.get_entries()), ["u1", "a1", "u2", "a2"]);

    // The next append of a fresh writer lands under a1.
    let mut next = SessionManager::open(&path, None, None).unwrap();
    let n = next.append_message(user("again", 5)).unwrap();
    let last = js(lines(&path).last().unwrap());
    assert_eq!(str_of(&last, "id"), n);
    assert_eq!(str_of(&last, "parentId"), "a1");
}

#[test]
fn a_second_leaf_control_chains_onto_the_first() {
    let dir = crate::support::tempdir();
    let path = linear(dir.path());
    let mut sm = SessionManager::open(&path, None, None).unwrap();
    let first = sm.append_leaf_control("a1").unwrap();
    let second = sm.append_leaf_control("u1").unwrap();
    let all = lines(&path);
    assert_eq!(all.len(), 7);
    let row = js(&all[6]);
    assert_eq!(str_of(&row, "id"), second);
    assert_eq!(str_of(&row, "parentId"), first);
    assert_eq!(str_of(&row, "targetId"), "u1");
    let ro = SessionManager::open_read_only(&path, None).unwrap();
    assert_eq!(ro.session.get_leaf_id(), Some("u1"));
}

#[test]
fn refusals_write_nothing() {
    let dir = crate::support::tempdir();
    let path = linear(dir.path());
    let before = std::fs::read(&path).unwrap();

    let mut sm = SessionManager::open(&path, None, None).unwrap();
    match sm.append_leaf_control("nope") {
        Err(BranchError::EntryNotFound { id }) => assert_eq!(id, "nope"),
        other => panic!("{other:?}"),
    }
    assert_eq!(sm.get_leaf_id(), Some("a2"));

    let mut ro = SessionManager::open_read_only(&path, None).unwrap().session;
    match ro.append_leaf_control("a1") {
        Err(BranchError::ReadOnly { path: p }) => assert_eq!(p, path),
        other => panic!("{other:?}"),
    }
    assert_eq!(ro.get_leaf_id(), Some("a2"));

    let mut mem = SessionManager::in_memory("/tmp");
    let u = mem.append_message(user("q", 1)).unwrap();
    let e = mem.append_leaf_control(u.as_str()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the session is not written to a file yet (in memory, or its entries are held until \
         the first assistant message): no leaf control can be appended"
    );
    assert!(matches!(&e, BranchError::NotWritten { path } if path.as_os_str().is_empty()));

    // A file whose only entry is a user message: held until the first assistant message.
    let mut sm = SessionManager::create("/tmp", Some(dir.path())).unwrap();
    let u = sm.append_message(user("q", 1)).unwrap();
    assert!(!sm.is_flushed());
    match sm.append_leaf_control(u.as_str()) {
        Err(BranchError::NotWritten { path: p }) => {
            assert_eq!(Some(p.as_path()), sm.get_session_file());
        }
        other => panic!("{other:?}"),
    }
    assert!(!sm.get_session_file().unwrap().exists());
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn another_writers_line_becomes_the_raw_tail() {
    let dir = crate::support::tempdir();
    let path = linear(dir.path());
    let mut sm = SessionManager::open(&path, None, None).unwrap();
    // Another process appends u3 under a2 after our open.
    let mut text = crate::support::read(&path);
    text.push_str(&msg_line("u3", Some("a2"), "user", "q3", 5));
    text.push('\n');
    session_store::io::append_line(
        &path,
        msg_line("u3", Some("a2"), "user", "q3", 5).as_bytes(),
        session_store::Durability::default(),
    )
    .unwrap();
    assert_eq!(crate::support::read(&path), text);
    let id = sm.append_leaf_control("a1").unwrap();
    let all = lines(&path);
    assert_eq!(all.len(), 7);
    let row = js(&all[6]);
    assert_eq!(str_of(&row, "id"), id);
    assert_eq!(str_of(&row, "parentId"), "u3");
    assert_eq!(ids(sm.get_entries()), ["u1", "a1", "u2", "a2", "u3"]);
    assert_eq!(sm.get_leaf_id(), Some("a1"));
}

#[test]
fn openclaw_reports_the_leaf_control_target_as_its_leaf() {
    let Some(mut r) = Reference::start("openclaw_reports_the_leaf_control_target_as_its_leaf")
    else {
        return;
    };
    let dir = crate::support::tempdir();
    let path = linear(dir.path());
    let mut sm = SessionManager::open(&path, None, None).unwrap();
    sm.append_leaf_control("a1").unwrap();
    let (leaf, texts) = fresh(&mut r, &path);
    assert_eq!(leaf.as_deref(), Some("a1"));
    assert_eq!(texts, ["q1", "r1"]);
    // Its next turn continues from a1.
    r.call(&format!(
        r#"{{"op":"open","name":"r","file":"{}"}}"#,
        path.display()
    ));
    let y = r.id(r#"{"op":"user","name":"r","text":"next"}"#);
    let _ = r.id(r#"{"op":"assistant","name":"r","text":"done"}"#);
    let all = lines(&path);
    let row = all
        .iter()
        .map(|l| js(l))
        .find(|v| str_of(v, "id") == y)
        .unwrap();
    assert_eq!(str_of(&row, "parentId"), "a1");
    let ro = SessionManager::open_read_only(&path, None).unwrap();
    assert_eq!(
        ids(ro.session.get_branch(None)),
        ["u1", "a1", y.as_str(), ro.session.get_leaf_id().unwrap()]
    );
}
