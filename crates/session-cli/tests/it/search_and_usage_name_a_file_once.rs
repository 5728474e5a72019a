//! `sessions search` and `sessions usage` name a session that cannot be read once, as
//! `error: PATH: WHY` (and usage's JSON `errors` as `{"file": PATH, "error": WHY}`): a
//! directory named as FILE, a FIFO, a missing file, an unreadable file, a path that is no
//! session of a SQLite store, and a fork's parent that is gone; the other sessions are still
//! read and the exit code is 2.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::Path;

use serde_json::Value;

use crate::support::{mkfifo, plant, run_in_timeout, shared_dir, tempdir};

const SESSION: &[u8] = b"{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"cwd\":\"/\"}\n\
    {\"type\":\"label\",\"id\":\"l1\",\"parentId\":null,\"targetId\":\"x\",\"label\":\"zebra\"}\n";

/// Runs search (`-c zebra`) and usage (text and `--json`) on `ok.jsonl` and `bad` in `dir`,
/// and asserts that both report `error: BAD: WHY` once and still read `ok.jsonl`.
fn assert_named_once(dir: &Path, bad: &str, why: &str) {
    let line = format!("error: {bad}: {why}\n");
    let r = run_in_timeout(dir, ["search", "-c", "zebra", bad, "ok.jsonl"]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (2, "ok.jsonl:1\n", line.as_str()),
        "search {bad}"
    );
    let r = run_in_timeout(dir, ["usage", bad, "ok.jsonl"]);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (2, line.as_str()),
        "usage {bad}"
    );
    assert!(r.stdout.ends_with("\n1 session\n"), "{}", r.stdout);
    let r = run_in_timeout(dir, ["usage", "--json", bad, "ok.jsonl"]);
    assert_eq!((r.code, r.stderr.as_str()), (2, ""), "usage --json {bad}");
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["sessions"], 1);
    assert_eq!(
        v["errors"],
        serde_json::json!([{"file": bad, "error": why}]),
        "usage --json {bad}"
    );
}

#[test]
fn a_directory_a_fifo_and_a_missing_file_are_named_once() {
    let t = tempdir();
    let d = t.path();
    plant(&d.join("ok.jsonl"), SESSION);
    std::fs::create_dir(d.join("dir.jsonl")).unwrap();
    mkfifo(&d.join("fifo.jsonl"));
    std::os::unix::fs::symlink("/nonexistent-for-tests/x.jsonl", d.join("dangling.jsonl")).unwrap();
    assert_named_once(
        d,
        "dir.jsonl",
        "is a directory; pass a session file, or use --dir dir.jsonl to work on the sessions in it",
    );
    assert_named_once(
        d,
        "fifo.jsonl",
        "not a regular file: fifo (session files are only read when they are regular files)",
    );
    assert_named_once(d, "missing.jsonl", "does not exist");
    assert_named_once(
        d,
        "dangling.jsonl",
        "is a dangling symbolic link (its target /nonexistent-for-tests/x.jsonl does not exist)",
    );
}

#[test]
fn an_unreadable_file_is_named_once() {
    use std::os::unix::fs::PermissionsExt;
    let test = "search_and_usage_name_a_file_once::an_unreadable_file_is_named_once";
    let t = tempdir();
    let d = t.path();
    plant(&d.join("ok.jsonl"), SESSION);
    let locked = d.join("locked.jsonl");
    plant(&locked, SESSION);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read(&locked).is_ok() {
        session_test_support::skip(test, "running as root: a mode 0000 file is readable");
        return;
    }
    assert_named_once(d, "locked.jsonl", "Permission denied (os error 13)");
}

#[test]
fn a_path_that_is_no_session_of_a_sqlite_store_is_named_once() {
    let test = "search_and_usage_name_a_file_once::a_path_that_is_no_session_of_a_sqlite_store_is_named_once";
    let Some(shared) = shared_dir(test) else {
        return;
    };
    let t = tempdir();
    let db = t
        .path()
        .join("state/agents/main/agent/openclaw-agent.sqlite");
    plant(
        &db,
        &std::fs::read(shared.join("fixtures/openclaw-9.6-sqlite/db/openclaw-agent.sqlite"))
            .unwrap(),
    );
    let backend = format!("sqlite:{}", db.display());
    let ok = t
        .path()
        .join("state/agents/main/sessions/11111111-1111-4111-8111-111111111111.jsonl");
    let nope = t.path().join("nope.jsonl");
    let why = format!("no such session in the SQLite store {}", db.display());
    let line = format!("error: {}: {why}\n", nope.display());
    let args = |cmd: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = cmd.iter().map(|s| (*s).to_owned()).collect();
        v.extend([
            "--backend".to_owned(),
            backend.clone(),
            nope.display().to_string(),
            ok.display().to_string(),
        ]);
        v
    };
    let r = run_in_timeout(t.path(), args(&["search", "-c", "Abandoned question"]));
    assert_eq!((r.code, r.stderr.as_str()), (2, line.as_str()));
    assert_eq!(r.stdout, format!("{}:1\n", ok.display()));
    let r = run_in_timeout(t.path(), args(&["usage"]));
    assert_eq!((r.code, r.stderr.as_str()), (2, line.as_str()));
    let r = run_in_timeout(t.path(), args(&["usage", "--json"]));
    assert_eq!(r.code, 2);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["sessions"], 1);
    assert_eq!(
        v["errors"],
        serde_json::json!([{"file": nope.display().to_string(), "error": why}])
    );
}

#[test]
fn a_forks_parent_that_is_gone_is_named_once() {
    let t = tempdir();
    plant(
        &t.path().join("fork.jsonl"),
        b"{\"type\":\"session\",\"version\":3,\"id\":\"f\",\"cwd\":\"/\",\"parentSession\":\"/nonexistent-for-tests/parent.jsonl\"}\n",
    );
    let r = run_in_timeout(t.path(), ["usage", "fork.jsonl"]);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (
            0,
            "warning: fork.jsonl: its parent session /nonexistent-for-tests/parent.jsonl cannot \
             be read (does not exist); every entry of the fork is counted, copies of the \
             parent's included\n"
        )
    );
}
