//! `unlock --stale` takes the addressing of every other subcommand: `--agent ID` (with
//! `--root`), `--dir DIR`, `--pi`, and `--session NAME` for one session's lock only; the
//! positional DIR still works, and a DIR together with those flags, or no target at all, is a
//! usage error (exit 2) naming the accepted forms.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::{Path, PathBuf};

use crate::support::*;

/// `<root>/agents/main/sessions/` with two sessions, each with a stale lock of a dead pid.
fn locked_store(root: &Path) -> PathBuf {
    let sessions = root.join("agents/main/sessions");
    let payload = lock_payload(
        session_test_support::dead_pid(),
        "2026-01-01T00:00:00.000Z",
        None,
    );
    for name in ["telegram_1", "telegram_2"] {
        plant(&sessions.join(format!("{name}.jsonl")), &small_session());
        plant(
            &sessions.join(format!("{name}.jsonl.lock")),
            payload.as_bytes(),
        );
    }
    sessions
}

/// The lines of a text report, each lock's line cut after its name and holder state.
fn summary(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .map(|l| match l.find(": pid ") {
            Some(i) => l[..i].to_owned(),
            None => l.to_owned(),
        })
        .collect()
}

#[test]
fn unlock_takes_agent_and_root() {
    let dir = tempdir();
    let sessions = locked_store(&dir.path().join("state"));
    let r = run_in(
        dir.path(),
        ["unlock", "--stale", "--root", "state", "--agent", "main"],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        summary(&r.stdout),
        [
            "lock files in state/agents/main/sessions (stale after 30m):",
            "  removed      telegram_1.jsonl.lock",
            "  removed      telegram_2.jsonl.lock",
            "2 removed, 0 kept",
        ]
    );
    assert_eq!(listing(&sessions), ["telegram_1.jsonl", "telegram_2.jsonl"]);
}

#[test]
fn unlock_with_session_judges_that_session_s_lock_only() {
    let dir = tempdir();
    let sessions = locked_store(&dir.path().join("state"));
    let args = [
        "unlock",
        "--stale",
        "--root",
        "state",
        "--agent",
        "main",
        "--session",
        "2",
    ];
    let mut dry = args.to_vec();
    dry.push("--dry-run");
    let r = run_in(dir.path(), &dry);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        summary(&r.stdout),
        [
            "lock file of state/agents/main/sessions/telegram_2.jsonl (stale after 30m), dry run:",
            "  would remove telegram_2.jsonl.lock",
            "1 would be removed, 0 kept",
        ]
    );
    let r = run_in(dir.path(), args);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        listing(&sessions),
        [
            "telegram_1.jsonl",
            "telegram_1.jsonl.lock",
            "telegram_2.jsonl"
        ]
    );
    // Again: no lock left for that session, exit 0.
    let r = run_in(dir.path(), args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "no lock file for state/agents/main/sessions/telegram_2.jsonl\n"
    );
    // JSON names the session.
    let r = run_in(
        dir.path(),
        [
            "unlock",
            "--stale",
            "--dir",
            "state/agents/main/sessions",
            "--session",
            "telegram_1",
            "--dry-run",
            "--json",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["dir"], "state/agents/main/sessions");
    assert_eq!(v["session"], "state/agents/main/sessions/telegram_1.jsonl");
    assert_eq!(v["wouldRemove"], 1);
    assert_eq!(
        v["locks"][0]["lockPath"],
        std::fs::canonicalize(&sessions)
            .unwrap()
            .join("telegram_1.jsonl.lock")
            .to_str()
            .unwrap()
    );
}

#[test]
fn unlock_keeps_the_positional_dir_and_refuses_mixed_or_missing_targets() {
    let dir = tempdir();
    let sessions = locked_store(&dir.path().join("state"));
    let r = run_in(
        dir.path(),
        [
            "unlock",
            "--stale",
            "state/agents/main/sessions",
            "--dry-run",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        summary(&r.stdout)[0],
        "lock files in state/agents/main/sessions (stale after 30m), dry run:"
    );
    let r = run_in(
        dir.path(),
        [
            "unlock",
            "--stale",
            "state/agents/main/sessions",
            "--agent",
            "main",
        ],
    );
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (
            2,
            "error: give either a DIR or --agent/--dir/--pi (with --session), not both\n"
        )
    );
    let r = run_in(dir.path(), ["unlock", "--stale", "--root", "state"]);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (
            2,
            "error: unlock --stale needs a sessions directory: DIR, or --agent ID (with --root), \
             --dir DIR or --pi; add --session NAME for one session's lock\n"
        )
    );
    let r = run_in(
        dir.path(),
        ["unlock", "--stale", "--root", "state", "--agent", "mian"],
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("did you mean: main?"), "{}", r.stderr);
    assert_eq!(
        listing(&sessions),
        [
            "telegram_1.jsonl",
            "telegram_1.jsonl.lock",
            "telegram_2.jsonl",
            "telegram_2.jsonl.lock"
        ]
    );
}
