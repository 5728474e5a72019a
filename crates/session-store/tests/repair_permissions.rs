//! A repair of a file this process may not replace writes nothing: no backup per attempt (they
//! used to pile up: each attempt wrote a `.bak-` file, then the rewrite was refused).
//!
//! Permissions do not bind root, so under root the checks run in a child process as `nobody`
//! (the test binary re-run with [`PERM_CHILD`] naming the directory).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

mod as_unprivileged;
mod repair_common;

use std::path::{Path, PathBuf};

use as_unprivileged::{PERM_CHILD, is_root, open_dir, run_as_nobody};
use repair_common::{backups, plant, set_mode};
use session_store::{RepairOptions, RepairSkip, repair_session_file_with};

/// A header, an unparseable line (dropped by a repair) and a user message.
const INPUT: &[u8] = b"{\"type\":\"session\",\"version\":3,\"id\":\"s1\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n\
not json\n\
{\"type\":\"message\",\"id\":\"m1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1}}\n";

/// Three repairs of `dir/session.jsonl`: each fails with a message naming `expect`, nothing is
/// written (the file keeps its bytes, no `.bak-` file appears).
fn repair_thrice_and_expect_nothing_written(dir: &Path, expect: &str) {
    let file = dir.join("session.jsonl");
    for _ in 0..3 {
        let outcome = repair_session_file_with(&file, None, &RepairOptions::default());
        assert!(!outcome.repaired);
        assert_eq!(outcome.backup_path, None);
        let Some(RepairSkip::RepairFailed { message }) = &outcome.reason else {
            panic!("unexpected outcome {outcome:?}");
        };
        assert!(message.contains(expect), "{message}");
        assert_eq!(std::fs::read(&file).unwrap(), INPUT);
        assert_eq!(backups(dir), Vec::<PathBuf>::new());
    }
}

#[test]
fn a_read_only_file_in_a_writable_directory_gets_no_backup() {
    const NAME: &str = "a_read_only_file_in_a_writable_directory_gets_no_backup";
    if let Some(d) = std::env::var_os(PERM_CHILD) {
        let d = PathBuf::from(d);
        let file = d.join("session.jsonl");
        repair_thrice_and_expect_nothing_written(
            &d,
            &format!(
                "{} is not writable by this process (Permission denied (os error 13)); \
                 refusing to replace it",
                file.display()
            ),
        );
        return;
    }
    // World-writable directory: `nobody` could create a backup there, but not replace the file.
    let (_tmp, d) = open_dir(0o777);
    plant(&d, INPUT, 0o444);
    if is_root() {
        run_as_nobody(NAME, &d);
    } else {
        let file = d.join("session.jsonl");
        repair_thrice_and_expect_nothing_written(
            &d,
            &format!("{} is not writable by this process", file.display()),
        );
    }
    assert_eq!(std::fs::read(d.join("session.jsonl")).unwrap(), INPUT);
    assert_eq!(backups(&d), Vec::<PathBuf>::new());
}

#[test]
fn a_writable_file_in_a_read_only_directory_gets_no_backup() {
    const NAME: &str = "a_writable_file_in_a_read_only_directory_gets_no_backup";
    if let Some(d) = std::env::var_os(PERM_CHILD) {
        let d = PathBuf::from(d);
        repair_thrice_and_expect_nothing_written(
            &d,
            &format!("cannot create files in directory {}", d.display()),
        );
        return;
    }
    let (_tmp, d) = open_dir(0o755);
    plant(&d, INPUT, 0o666);
    set_mode(&d, 0o555);
    if is_root() {
        run_as_nobody(NAME, &d);
    } else {
        repair_thrice_and_expect_nothing_written(
            &d,
            &format!("cannot create files in directory {}", d.display()),
        );
    }
    set_mode(&d, 0o755);
    assert_eq!(std::fs::read(d.join("session.jsonl")).unwrap(), INPUT);
    assert_eq!(backups(&d), Vec::<PathBuf>::new());
}
