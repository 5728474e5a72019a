//! Two states a read-only open cannot get past on its own, reported as typed errors with the
//! remedy (`openclaw-sqlite.md` §1.5): a WAL-mode database without `-wal`/`-shm` in a
//! directory the reader cannot write (SQLite cannot create the shared-memory index), and a
//! rollback-journal database with a hot `-journal` left by a crashed writer (a read-only
//! connection cannot roll it back). Neither open changes the database's bytes.
#![cfg(all(feature = "sqlite", target_os = "linux"))]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::sqlite_common::{copy_db, fixture, rw, sha256_file};
use session_store::sqlite::{SqliteError, SqliteStore};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

/// WAL mode, no sidecars, directory mode 0555: `WalReadOnlyDirectory` with the copy advice.
#[test]
fn sqlite_wal_database_in_a_read_only_directory_is_a_typed_error() {
    const TEST: &str = "sqlite_wal_database_in_a_read_only_directory_is_a_typed_error";
    let Some(fixture) = fixture(TEST) else {
        return;
    };
    let (dir, db) = copy_db(&fixture);
    // The copy keeps the fixture's mode, which may be read-only.
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mode: String = rw(&db)
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    assert_eq!(
        session_test_support::dir_names(dir.path()),
        ["openclaw-agent.sqlite"]
    );
    let before = sha256_file(&db);
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
    if tempfile::tempfile_in(dir.path()).is_ok() {
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        session_test_support::skip(
            TEST,
            "directory permissions do not bind for this user (root?): a 0555 directory is writable",
        );
        return;
    }
    let result = SqliteStore::open(&db);
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let Err(err) = result else {
        panic!("the open must fail");
    };
    assert!(
        matches!(&err, SqliteError::WalReadOnlyDirectory { path, .. } if path == &db),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "{}: the database is in WAL mode and its directory is read-only, so SQLite cannot \
             create the -wal/-shm a reader needs; copy the database together with its -wal to \
             a writable place and read the copy",
            db.display()
        )
    );
    assert_eq!(sha256_file(&db), before);
    assert_eq!(
        session_test_support::dir_names(dir.path()),
        ["openclaw-agent.sqlite"]
    );
}

/// A hot `-journal` beside a DELETE-mode database: `HotJournal` naming the journal, and
/// neither the database nor the journal changes.
#[test]
fn sqlite_hot_rollback_journal_is_a_typed_error() {
    let Some(fixture) = fixture("sqlite_hot_rollback_journal_is_a_typed_error") else {
        return;
    };
    let (dir, db) = copy_db(&fixture);
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    let journal = PathBuf::from(format!("{}-journal", db.display()));
    let aside = dir.path().join("saved-journal");
    {
        let conn = rw(&db);
        let mode: String = conn
            .query_row("PRAGMA journal_mode = DELETE", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "delete");
        // Unsynced, so the journal header carries its magic from the first write on (a synced
        // journal's header is zero until commit, which SQLite treats as not hot).
        conn.pragma_update(None, "synchronous", "OFF").unwrap();
        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        let changed = conn
            .execute("UPDATE session_nodes SET updated_at = updated_at + 1", [])
            .unwrap();
        assert!(changed > 0);
        assert!(journal.exists(), "the writer's transaction has a journal");
        std::fs::copy(&journal, &aside).unwrap();
        conn.execute_batch("ROLLBACK").unwrap();
    }
    assert!(!journal.exists(), "the writer closed cleanly");
    let before = sha256_file(&db);
    std::fs::rename(&aside, &journal).unwrap();
    let journal_before = sha256_file(&journal);

    let Err(err) = SqliteStore::open(&db) else {
        panic!("the open must fail");
    };
    assert!(
        matches!(&err, SqliteError::HotJournal { path, journal: j, .. } if path == &db && j == &journal),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "{}: a crashed writer left a hot rollback journal ({}); start OpenClaw (or \
             `openclaw doctor`) once so it rolls the journal back, then read again",
            db.display(),
            journal.display()
        )
    );
    assert_eq!(sha256_file(&db), before);
    assert_eq!(sha256_file(&journal), journal_before);
}
