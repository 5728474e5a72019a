//! Retention edge cases: a lock path that is not a lock file, two runs over the same files, a
//! sessions directory symlinked out of the store, agent directories that are not agents, and an
//! agent without a sessions directory.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use pretty_assertions::assert_eq;
use session_semantics::layout::{AgentDirs, SkippedAgentDir};
use session_semantics::retention::{
    self, ClearMode, ClearTarget, Outcome, RetentionPolicy, SkipReason, Skipped,
};
use session_semantics::{RetentionError, StoreLayout};

/// 2026-03-01T00:00:00.000Z.
const NOW: i64 = 1_772_323_200_000;

const HEADER: &[u8] =
    b"{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n";

fn policy() -> RetentionPolicy {
    RetentionPolicy {
        max_age: Some("1d".to_owned()),
        max_age_ms: Some(86_400_000),
        max_size: None,
        max_size_bytes: None,
    }
}

fn store() -> (tempfile::TempDir, StoreLayout, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap().join("state");
    let layout = StoreLayout::new(&root);
    let dir = layout.sessions_dir("main").unwrap();
    session_store::io::ensure_dir(&dir).unwrap();
    (tmp, layout, dir)
}

/// Runs `f` on a helper thread, failing instead of hanging when it blocks.
fn bounded<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the operation blocked on the lock path")
}

/// A FIFO named `<session>.jsonl.lock` used to hang archive and clear (the lock was opened
/// and read blocking). It is never opened now: the session is left alone, naming the path.
#[test]
fn a_fifo_lock_leaves_the_session_alone_and_names_the_path() {
    let (_tmp, layout, dir) = store();
    session_store::io::write_raw(&dir.join("a.jsonl"), HEADER).unwrap();
    let lock = dir.join("a.jsonl.lock");
    mkfifo(&lock);

    let expected = Skipped {
        file: "a.jsonl".to_owned(),
        reason: SkipReason::LockNotAFile {
            lock_path: lock.to_string_lossy().into_owned(),
            found: "a FIFO".to_owned(),
        },
    };
    let l = layout.clone();
    let plan = bounded(move || retention::plan_archive(&l, "main", &policy(), NOW).unwrap());
    assert_eq!(plan.report().actions, []);
    assert_eq!(plan.report().skipped, std::slice::from_ref(&expected));
    assert_eq!(
        expected.reason.to_string(),
        format!(
            "locked: its lock path {} is a FIFO, not a lock file (remove it by hand if no writer \
             uses it)",
            lock.display()
        )
    );
    assert_eq!(
        serde_json::to_value(&expected).unwrap(),
        serde_json::json!({
            "file": "a.jsonl",
            "reason": "lock-not-a-file",
            "lockPath": lock.to_string_lossy(),
            "found": "a FIFO",
        })
    );

    let report = bounded(move || {
        retention::clear(
            &layout,
            &ClearTarget::Agent("main".to_owned()),
            ClearMode::Archive,
            false,
            None,
        )
        .unwrap()
    });
    assert_eq!(report.actions, []);
    assert_eq!(report.skipped, [expected]);
    assert_eq!(std::fs::read(dir.join("a.jsonl")).unwrap(), HEADER);
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

/// Two runs planned over the same files: the second finds every source moved by the first and
/// reports each as skipped (`vanished`), with nothing failed and nothing moved twice.
#[test]
fn a_second_run_over_moved_files_skips_them_as_vanished() {
    let (_tmp, layout, dir) = store();
    for n in ["a.jsonl", "b.jsonl"] {
        session_store::io::write_raw(&dir.join(n), HEADER).unwrap();
    }
    let first = retention::plan_archive(&layout, "main", &policy(), NOW).unwrap();
    let second = retention::plan_archive(&layout, "main", &policy(), NOW).unwrap();
    let done = first.execute(None);
    assert_eq!(done.failed(), 0);
    assert!(done.actions.iter().all(|a| a.outcome == Outcome::Archived));
    let again = second.execute(None);
    assert_eq!(again.failed(), 0);
    let outcomes: Vec<(&str, &Outcome)> = again
        .actions
        .iter()
        .map(|a| (a.file.as_str(), &a.outcome))
        .collect();
    let vanished = Outcome::Skipped {
        reason: SkipReason::Vanished,
    };
    assert_eq!(outcomes, [("a.jsonl", &vanished), ("b.jsonl", &vanished)]);
    let mut archived: Vec<String> = std::fs::read_dir(dir.join("archive"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    archived.sort();
    assert_eq!(archived, ["a.jsonl", "b.jsonl"]);
}

/// A sessions directory symlinked out of the store: the error names the store root as the
/// store root (it used to call it "the sessions directory").
#[test]
fn a_symlinked_sessions_dir_is_refused_naming_the_store_root() {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("state");
    let elsewhere = base.join("elsewhere");
    session_store::io::ensure_dir(&elsewhere).unwrap();
    session_store::io::ensure_dir(&root.join("agents/main")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, root.join("agents/main/sessions")).unwrap();
    let layout = StoreLayout::new(&root);
    let err = retention::plan_archive(&layout, "main", &policy(), NOW).unwrap_err();
    assert!(matches!(err, RetentionError::Path(_)));
    assert_eq!(
        err.to_string(),
        format!(
            "{} resolves to {}, outside the store root {}",
            root.join("agents/main/sessions").display(),
            elsewhere.display(),
            root.display()
        )
    );
}

/// `--all` works on `agent_dirs`: directories whose names are not agent ids are listed as
/// skipped with the reason; files are not agents.
#[test]
fn agent_dirs_reports_directories_that_are_not_agents() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("state");
    for d in ["main", "ops", "Bad_ID", "has space", ".hidden"] {
        session_store::io::ensure_dir(&root.join("agents").join(d)).unwrap();
    }
    session_store::io::write_raw(&root.join("agents/notes"), b"x").unwrap();
    std::os::unix::fs::symlink(root.join("agents/ops"), root.join("agents/linked")).unwrap();
    let dirs = StoreLayout::new(&root).agent_dirs().unwrap();
    let skip = |name: &str, expected: &str| SkippedAgentDir {
        name: name.to_owned(),
        reason: format!("not a canonical agent id (expected {expected:?})"),
    };
    assert_eq!(
        dirs,
        AgentDirs {
            ids: vec!["linked".to_owned(), "main".to_owned(), "ops".to_owned()],
            skipped: vec![
                skip(".hidden", "hidden"),
                skip("Bad_ID", "bad_id"),
                skip("has space", "has-space"),
            ],
        }
    );
}

/// An agent without a sessions directory: the report's directories are absolute even for a
/// relative store root (they used to be printed relative to the current directory).
#[test]
fn a_missing_sessions_dir_is_reported_as_an_absolute_path() {
    let layout = StoreLayout::new("no-such-store-root-for-this-test");
    let cwd = std::env::current_dir().unwrap();
    let report = retention::plan_archive(&layout, "main", &policy(), NOW)
        .unwrap()
        .report()
        .clone();
    let expected = cwd.join("no-such-store-root-for-this-test/agents/main/sessions");
    assert_eq!(report.sessions_dir, expected);
    assert_eq!(report.archive_dir, expected.join("archive"));
    let clear = retention::clear(
        &layout,
        &ClearTarget::Agent("main".to_owned()),
        ClearMode::Archive,
        true,
        None,
    )
    .unwrap();
    assert_eq!(clear.sessions_dir, expected);
}
