//! Stale-lock takeover between several of our processes: every holder leaves a dead-pid lock
//! behind instead of releasing, so all contenders judge the same stale file and race to reclaim
//! it. Only one may win: a contender that lost must never delete the winner's fresh lock.
//!
//! Before the reclaim guard (`remove_stale_if_unchanged`), the re-check and the removal were
//! two steps, and about 2.5 % of the takeovers ended with two processes holding the lock (the
//! loser removed the winner's new file and created its own). Each child counts, inside the
//! lock, how often its exclusivity marker already existed or the lock file was not its own.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

mod lock_common;

use std::path::PathBuf;
use std::time::Duration;

use lock_common::{CHILD_MODE_ENV, MARK, Marked, child_command, lock_of, mark};
use session_store::lock::{Backoff, LockOptions, SessionWriteLock};

const WRITERS: usize = 4;
const ROUNDS: usize = 400;

/// A pid above Linux's `pid_max` limit (at most 2^22): never alive.
const DEAD_PAYLOAD: &str =
    "{\n  \"pid\": 2147483000,\n  \"createdAt\": \"2026-01-01T00:00:00.000Z\"\n}\n";

fn env(key: &str) -> String {
    std::env::var(key).unwrap_or_else(|_| panic!("{key} not set"))
}

/// The child side. Does nothing when the test binary runs normally.
#[test]
fn child_entry() {
    match std::env::var(CHILD_MODE_ENV).as_deref() {
        Ok("reclaim") => reclaim_child(),
        Ok(other) => panic!("unknown child mode {other}"),
        Err(_) => {}
    }
}

fn reclaim_child() {
    let file = PathBuf::from(env("LOCK_FILE"));
    let writer = env("LOCK_WRITER");
    let marker = file.with_extension("inside");
    let lock_path = lock_of(&file);
    let opts = LockOptions {
        backoff: Backoff::Fixed(Duration::from_micros(200)),
        ..LockOptions::default().with_timeout(Some(Duration::from_secs(120)))
    };
    let mine = format!("\"pid\": {},", std::process::id());
    let mut overlaps = 0usize;
    mark("ready");
    for round in 0..ROUNDS {
        let guard = SessionWriteLock::acquire(&file, &opts).unwrap();
        // Exclusive marker: exists only while someone is inside.
        if session_store::io::create_new(&marker, b"", None).is_err() {
            overlaps += 1;
        }
        session_store::io::append_raw(&file, format!("{writer} {round}\n").as_bytes()).unwrap();
        std::thread::sleep(Duration::from_micros(300));
        match std::fs::read_to_string(&lock_path) {
            Ok(text) if text.contains(&mine) => {}
            _ => overlaps += 1,
        }
        std::fs::remove_file(&marker).unwrap_or_default();
        // "Die" holding the lock: a dead pid's lock replaces ours, and the guard's release
        // leaves it (it is no longer the file we wrote).
        session_store::io::write_raw(&lock_path, DEAD_PAYLOAD.as_bytes()).unwrap();
        drop(guard);
    }
    mark(&format!("overlaps {overlaps}"));
}

#[test]
fn only_one_contender_wins_a_stale_lock() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("race.jsonl");
    let children: Vec<Marked> = (0..WRITERS)
        .map(|w| {
            let mut cmd = child_command("child_entry", "reclaim");
            cmd.env("LOCK_FILE", file.display().to_string())
                .env("LOCK_WRITER", w.to_string());
            Marked::spawn(cmd, MARK)
        })
        .collect();
    for c in &children {
        assert_eq!(c.next(Duration::from_secs(30)), "ready");
    }
    let mut overlaps = Vec::new();
    for mut c in children {
        overlaps.push(c.expect("overlaps", Duration::from_secs(300)));
        assert!(c.child.wait().unwrap().success());
    }
    assert_eq!(overlaps, ["0"; WRITERS]);
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.lines().count(), WRITERS * ROUNDS);
    // The last holder left its dead-pid lock behind.
    assert_eq!(
        std::fs::read_to_string(lock_of(&file)).unwrap(),
        DEAD_PAYLOAD
    );
}
