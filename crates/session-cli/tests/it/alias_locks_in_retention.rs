//! `sessions archive` and `sessions clear` never move or delete a session whose write lock is in
//! use under another of its names: an OpenClaw 2026.6.11 writer that opened the session through
//! a symlink `L.jsonl -> s.jsonl` holds `L.jsonl.lock` (the reference locks the name it was
//! given, docs/DEVIATIONS.md D29 (1)), and a sweep that moves `s.jsonl` from under it makes the
//! writer's next append create a new, headerless `s.jsonl` through the dangling link (the
//! session split in two). Locked sessions are "never archived or cleared" (README, "The
//! sessions command").
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::PathBuf;

use crate::support::*;
use serde_json::{Value, json};

const DAY: i64 = 86_400_000;

/// `<tmp>/state/agents/main/sessions/` holding `s.jsonl` (100 days old), `L.jsonl -> s.jsonl`,
/// and `L.jsonl.lock` held by this running process (as an OpenClaw writer through `L.jsonl`
/// holds it).
struct Store {
    _tmp: tempfile::TempDir,
    state: PathBuf,
    dir: PathBuf,
    bytes: Vec<u8>,
}

impl Store {
    fn new() -> Self {
        let tmp = tempdir();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let state = base.join("state");
        let dir = state.join("agents").join("main").join("sessions");
        session_store::io::ensure_dir(&dir).unwrap();
        let now = session_format::ids::now_ms();
        let bytes = session_bytes("s1", now - 100 * DAY);
        plant(&dir.join("s.jsonl"), &bytes);
        std::os::unix::fs::symlink("s.jsonl", dir.join("L.jsonl")).unwrap();
        plant(&dir.join("L.jsonl.lock"), live_lock().as_bytes());
        Store {
            _tmp: tmp,
            state,
            dir,
            bytes,
        }
    }

    fn assert_untouched(&self) {
        assert_eq!(dir_names(&self.dir), ["L.jsonl", "L.jsonl.lock", "s.jsonl"]);
        assert_eq!(std::fs::read(self.dir.join("s.jsonl")).unwrap(), self.bytes);
    }
}

#[test]
fn archive_leaves_alone_a_session_locked_through_its_alias() {
    let s = Store::new();
    let root = s.state.display().to_string();
    let r = run_in_timeout(
        &s.dir,
        [
            "archive",
            "--root",
            &root,
            "--agent",
            "main",
            "--max-age",
            "30d",
            "--allow-mass",
            "--json",
        ],
    );
    assert_eq!(r.code, 0, "stdout: {}\nstderr: {}", r.stdout, r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let report = &v["reports"][0];
    assert_eq!(report["actions"], json!([]));
    // Skipped files are listed by name: the alias (`L`) sorts before its target (`s`).
    assert_eq!(
        report["skipped"],
        json!([
            {"file": "L.jsonl", "reason": "alias", "of": "s.jsonl"},
            {"file": "s.jsonl", "reason": "locked", "lockFile": "L.jsonl.lock"},
        ])
    );
    s.assert_untouched();
}

#[test]
fn clear_leaves_alone_a_session_locked_through_its_alias() {
    let s = Store::new();
    let root = s.state.display().to_string();
    for extra in [&[][..], &["--purge"][..]] {
        let mut argv = vec![
            "clear",
            "--root",
            &root,
            "--agent",
            "main",
            "--session",
            "s",
            "--yes",
            "--json",
        ];
        argv.extend_from_slice(extra);
        let r = run_in_timeout(&s.dir, argv);
        assert_eq!(r.code, 2, "{extra:?}: {}\n{}", r.stdout, r.stderr);
        s.assert_untouched();
    }
}
