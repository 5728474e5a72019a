//! The `sessions` commands key on the file identity (docs/DEVIATIONS.md D29): `list` shows a
//! session reached through several names once, with its other names, and flags one reached
//! through a symlink out of the listed directory; `repair` through an alias takes the lock of
//! the target; `repair`, `clear` and `archive` refuse a symlink out of the sessions directory
//! naming both paths, and the outside file keeps its bytes and mtime.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use crate::support::*;
use serde_json::{Value, json};

/// `<tmp>/state/agents/main/sessions/` holding `s.jsonl` (a session 100 days old, needing no
/// repair), `L.jsonl -> s.jsonl`, and `out.jsonl -> <tmp>/outside/t.jsonl` (a session that
/// needs a repair: a line that is not JSON; its mtime an hour ago).
struct Store {
    _tmp: tempfile::TempDir,
    state: PathBuf,
    dir: PathBuf,
    target: PathBuf,
    target_bytes: Vec<u8>,
    target_mtime: SystemTime,
}

const DAY: i64 = 86_400_000;

impl Store {
    fn new() -> Self {
        let tmp = tempdir();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let state = base.join("state");
        let dir = state.join("agents").join("main").join("sessions");
        session_store::io::ensure_dir(&dir).unwrap();
        let now = session_format::ids::now_ms();
        plant(&dir.join("s.jsonl"), &session_bytes("s1", now - 100 * DAY));
        std::os::unix::fs::symlink("s.jsonl", dir.join("L.jsonl")).unwrap();
        let outside = base.join("outside");
        session_store::io::ensure_dir(&outside).unwrap();
        let target = outside.join("t.jsonl");
        let mut bytes = session_bytes("t1", now - 100 * DAY);
        bytes.extend_from_slice(b"not json\n");
        plant(&target, &bytes);
        let old = SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::open(&target)
            .unwrap()
            .set_modified(old)
            .unwrap();
        std::os::unix::fs::symlink(&target, dir.join("out.jsonl")).unwrap();
        Store {
            _tmp: tmp,
            target_bytes: std::fs::read(&target).unwrap(),
            target_mtime: std::fs::metadata(&target).unwrap().modified().unwrap(),
            state,
            dir,
            target,
        }
    }

    fn link(&self) -> PathBuf {
        self.dir.join("out.jsonl")
    }

    fn refusal(&self) -> String {
        format!(
            "{} links to {}, outside the store root {}; refusing to follow the link for a write",
            self.link().display(),
            self.target.display(),
            self.dir.display()
        )
    }

    fn assert_untouched(&self) {
        assert_eq!(std::fs::read(&self.target).unwrap(), self.target_bytes);
        assert_eq!(
            std::fs::metadata(&self.target).unwrap().modified().unwrap(),
            self.target_mtime
        );
        assert_eq!(dir_names(self.target.parent().unwrap()), ["t.jsonl"]);
        assert_eq!(dir_names(&self.dir), ["L.jsonl", "out.jsonl", "s.jsonl"]);
    }
}

#[test]
fn list_shows_an_aliased_session_once_with_its_other_names() {
    let s = Store::new();
    let root = s.state.display().to_string();
    let r = run(["list", "--root", &root, "--agent", "main", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let mut rows: Vec<Value> = v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            json!({
                "id": row["id"],
                "path": row["path"],
                "aliases": row["aliases"],
                "outsideTarget": row["outsideTarget"],
            })
        })
        .collect();
    rows.sort_by_key(|r| r["path"].as_str().unwrap().to_owned());
    assert_eq!(
        rows,
        vec![
            json!({
                "id": "t1",
                "path": s.link().display().to_string(),
                "aliases": [],
                "outsideTarget": s.target.display().to_string(),
            }),
            json!({
                "id": "s1",
                "path": s.dir.join("s.jsonl").display().to_string(),
                "aliases": [s.dir.join("L.jsonl").display().to_string()],
                "outsideTarget": null,
            }),
        ]
    );
    assert_eq!(v["skipped"], json!([]));

    // The table: one row per file, the other names and the outside target on it.
    let r = run(["list", "--root", &root, "--agent", "main"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", r.stdout);
    let aliased = lines.iter().find(|l| l.contains("s1")).unwrap();
    assert!(
        aliased.ends_with(&format!(
            "{} (aliases: {})",
            s.dir.join("s.jsonl").display(),
            s.dir.join("L.jsonl").display()
        )),
        "{aliased}"
    );
    let outside = lines.iter().find(|l| l.contains("t1")).unwrap();
    assert!(
        outside.ends_with(&format!(
            "{} -> {} (outside the listed directory)",
            s.link().display(),
            s.target.display()
        )),
        "{outside}"
    );
    s.assert_untouched();
}

#[test]
fn repair_through_a_link_out_of_the_store_is_refused_naming_both_paths() {
    let s = Store::new();
    let root = s.state.display().to_string();
    let link = s.link().display().to_string();
    for argv in [
        vec![
            "repair",
            "--root",
            &root,
            "--agent",
            "main",
            "--session",
            "out",
        ],
        vec!["repair", &link],
        vec!["repair", "--dry-run", &link],
    ] {
        let r = run_in_timeout(&s.dir, argv.clone());
        assert_eq!(r.code, 2, "{argv:?}: {}", r.stderr);
        assert_eq!(r.stdout, "", "{argv:?}");
        assert_eq!(r.stderr, format!("error: {}\n", s.refusal()), "{argv:?}");
        s.assert_untouched();
    }
}

#[test]
fn repair_through_an_alias_takes_the_lock_of_the_target() {
    let s = Store::new();
    let lock = s.dir.join("s.jsonl.lock");
    let payload = live_lock();
    plant(&lock, payload.as_bytes());
    let root = s.state.display().to_string();
    let r = run_in_timeout(
        &s.dir,
        [
            "repair",
            "--lock-timeout",
            "200ms",
            "--root",
            &root,
            "--agent",
            "main",
            "--session",
            "L",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    let prefix = format!(
        "error: session file locked (timeout 200ms): pid={} alive=true ageMs=",
        std::process::id()
    );
    assert!(r.stderr.starts_with(&prefix), "{}", r.stderr);
    assert!(
        r.stderr.ends_with(&format!(" {}\n", lock.display())),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read_to_string(&lock).unwrap(), payload);
    assert!(!s.dir.join("L.jsonl.lock").exists());
}

#[test]
fn clear_of_a_link_out_of_the_store_names_both_paths_and_touches_nothing() {
    let s = Store::new();
    let root = s.state.display().to_string();
    for extra in [&["--purge"][..], &[][..]] {
        let mut argv = vec![
            "clear",
            "--root",
            &root,
            "--agent",
            "main",
            "--session",
            "out.jsonl",
            "--yes",
        ];
        argv.extend_from_slice(extra);
        let r = run_in_timeout(&s.dir, argv.clone());
        assert_eq!(r.code, 2, "{argv:?}: {}", r.stderr);
        assert_eq!(
            r.stderr,
            format!(
                "error: session \"out.jsonl\" was left alone: {} is a symlink to {}, outside the \
                 sessions directory (never followed)\n",
                s.link().display(),
                s.target.display()
            ),
            "{argv:?}"
        );
        s.assert_untouched();
    }
    // The JSON report carries both paths.
    let r = run_in_timeout(
        &s.dir,
        [
            "clear",
            "--root",
            &root,
            "--agent",
            "main",
            "--all",
            "--purge",
            "--dry-run",
            "--json",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        v["skipped"],
        json!([
            {"file": "L.jsonl", "reason": "alias", "of": "s.jsonl"},
            {
                "file": "out.jsonl",
                "reason": "link-outside-store",
                "link": s.link().display().to_string(),
                "target": s.target.display().to_string(),
            },
        ])
    );
    let files: Vec<&str> = v["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["s.jsonl"]);
    // The session id names one file, though two names reach it: not ambiguous.
    let r = run_in_timeout(
        &s.dir,
        [
            "clear",
            "--root",
            &root,
            "--agent",
            "main",
            "--session",
            "s1",
            "--dry-run",
            "--json",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["actions"][0]["file"], "s.jsonl");
    assert_eq!(v["actions"].as_array().unwrap().len(), 1);
    s.assert_untouched();
}

#[test]
fn archive_moves_the_aliased_session_once_and_leaves_the_link_out_alone() {
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
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let report = &v["reports"][0];
    let moved: Vec<(&str, &str, &str)> = report["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["file"].as_str().unwrap(),
                a["destination"].as_str().unwrap(),
                a["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(moved, [("s.jsonl", "archive/s.jsonl", "archived")]);
    // The alias would dangle once its session moved: the link (only) is removed with it.
    assert_eq!(report["actions"][0]["aliases"], json!(["L.jsonl"]));
    assert_eq!(
        report["skipped"],
        json!([
            {"file": "L.jsonl", "reason": "alias", "of": "s.jsonl"},
            {
                "file": "out.jsonl",
                "reason": "link-outside-store",
                "link": s.link().display().to_string(),
                "target": s.target.display().to_string(),
            },
        ])
    );
    // The only live session is more than half of the agent's: a mass sweep, allowed here.
    assert_eq!(report["massSweep"]["liveSessions"], 1, "{report}");
    assert_eq!(
        dir_names(&s.dir),
        ["archive", "out.jsonl", "sessions-audit.log"]
    );
    assert_eq!(dir_names(&s.dir.join("archive")), ["s.jsonl"]);
    let audit = std::fs::read_to_string(s.dir.join("sessions-audit.log")).unwrap();
    let lines: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines
            .iter()
            .map(|l| (l["action"].as_str().unwrap(), l["file"].as_str().unwrap()))
            .collect::<Vec<_>>(),
        [("archive", "s.jsonl"), ("remove-alias", "L.jsonl")]
    );
    assert_eq!(lines[1]["reason"], "alias of s.jsonl");
    assert_eq!(lines[1]["bytes"], 0);
    assert_eq!(std::fs::read(&s.target).unwrap(), s.target_bytes);
    assert_eq!(
        std::fs::metadata(&s.target).unwrap().modified().unwrap(),
        s.target_mtime
    );
}
