//! The write commands refuse a session file with more than one hard link (docs/DEVIATIONS.md
//! D29): the write lock is per name (`<name>.lock`, as OpenClaw 2026.6.11 names it), so a
//! writer holding `s.jsonl.lock` does not stop one taking `H.jsonl.lock` for the other name of
//! the same file, and a rewrite or a move would split the names into two files. `repair` fails
//! naming the file and its link count (checked under the lock); `archive` and `clear` leave it
//! alone with that reason. Nothing is written.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::PathBuf;

use crate::support::*;
use serde_json::{Value, json};

/// `<tmp>/state/agents/main/sessions/` holding `s.jsonl` (100 days old, one line that is not
/// JSON, so it needs a repair) and `H.jsonl`, a hard link of it.
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
        let mut bytes = session_bytes("s1", session_format::ids::now_ms() - 100 * DAY);
        bytes.extend_from_slice(b"not json\n");
        plant(&dir.join("s.jsonl"), &bytes);
        std::fs::hard_link(dir.join("s.jsonl"), dir.join("H.jsonl")).unwrap();
        Store {
            _tmp: tmp,
            state,
            dir,
            bytes,
        }
    }

    fn assert_untouched(&self) {
        assert_eq!(dir_names(&self.dir), ["H.jsonl", "s.jsonl"]);
        assert_eq!(std::fs::read(self.dir.join("s.jsonl")).unwrap(), self.bytes);
        use std::os::unix::fs::MetadataExt;
        let (a, b) = (
            std::fs::metadata(self.dir.join("s.jsonl")).unwrap(),
            std::fs::metadata(self.dir.join("H.jsonl")).unwrap(),
        );
        assert_eq!((a.ino(), a.nlink()), (b.ino(), 2), "still one file");
    }
}

#[test]
fn repair_refuses_a_hard_linked_session_file_under_either_name() {
    let s = Store::new();
    for name in ["H.jsonl", "s.jsonl"] {
        let file = s.dir.join(name);
        let r = run_in_timeout(&s.dir, ["repair", file.to_str().unwrap()]);
        assert_eq!(
            (r.code, r.stdout.as_str(), r.stderr),
            (
                2,
                "",
                format!(
                    "error: {} has 2 hard links; refusing to write a session file with more \
                     than one name (its lock is per name, and a rewrite or move would split the \
                     names into two files)\n",
                    file.display()
                )
            ),
            "{name}"
        );
        s.assert_untouched();
    }
    // The dry run says the same and writes nothing either.
    let r = run_in_timeout(
        &s.dir,
        [
            "repair",
            s.dir.join("s.jsonl").to_str().unwrap(),
            "--dry-run",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    s.assert_untouched();
}

#[test]
fn archive_and_clear_leave_a_hard_linked_session_alone() {
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
            "--json",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let report = &v["reports"][0];
    assert_eq!(report["actions"], json!([]));
    assert_eq!(
        report["skipped"],
        json!([
            {"file": "H.jsonl", "reason": "hard-linked", "links": 2},
            {"file": "s.jsonl", "reason": "hard-linked", "links": 2},
        ])
    );
    s.assert_untouched();

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
        ];
        argv.extend_from_slice(extra);
        let r = run_in_timeout(&s.dir, argv);
        assert_eq!(r.code, 2, "{extra:?}: {}\n{}", r.stdout, r.stderr);
        assert_eq!(
            r.stderr,
            "error: session \"s\" was left alone: has 2 hard links (its lock is per name; never \
             archived or cleared while it has more than one)\n",
            "{extra:?}"
        );
        s.assert_untouched();
    }
}
