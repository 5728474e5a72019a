//! The `-wal`/`-shm` files a read-only open of a WAL-mode database creates
//! (`openclaw-sqlite.md` §1.5 rule 3): the store removes the ones it created when it is closed
//! or dropped and nobody else has the database open, keeps them while another connection holds
//! it, and never touches sidecars that existed before it opened the file. The main file's bytes
//! never change.
#![cfg(all(feature = "sqlite", target_os = "linux"))]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::sqlite_common::{ALICE, SESSIONS, copy_db, fixture, rw, sha256_file};
use session_store::sqlite::{KeptBecause, SidecarCleanup, SqliteStore};
use std::path::{Path, PathBuf};

const DB: &str = "openclaw-agent.sqlite";

/// A copy of the fixture switched to WAL mode by the test's own connection, then closed
/// (which leaves no sidecar behind).
fn wal_copy(fixture: &Path) -> (tempfile::TempDir, PathBuf) {
    let (dir, db) = copy_db(fixture);
    let mode: String = rw(&db)
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    assert_eq!(session_test_support::dir_names(dir.path()), [DB]);
    (dir, db)
}

fn side(db: &Path, suffix: &str) -> PathBuf {
    PathBuf::from(format!("{}{suffix}", db.display()))
}

fn read_all(store: &SqliteStore) {
    assert_eq!(store.sessions().unwrap().len(), 6);
    for (_, _, id) in SESSIONS {
        store.lines(id).unwrap();
        store.resolved_leaf(id).unwrap();
    }
    assert_eq!(store.check_all().unwrap(), []);
}

#[test]
fn sqlite_created_sidecars_are_removed_on_close_and_drop() {
    let Some(fixture) = fixture("sqlite_created_sidecars_are_removed_on_close_and_drop") else {
        return;
    };
    let (dir, db) = wal_copy(&fixture);
    let before = sha256_file(&db);

    let store = SqliteStore::open(&db).unwrap();
    read_all(&store);
    // While open, SQLite's read-only WAL open has made both, the -wal empty.
    assert_eq!(
        session_test_support::dir_names(dir.path()),
        [DB, "openclaw-agent.sqlite-shm", "openclaw-agent.sqlite-wal"]
    );
    assert_eq!(std::fs::metadata(side(&db, "-wal")).unwrap().len(), 0);
    let report = store.close().unwrap();
    let mut want = SidecarCleanup::default();
    want.removed = vec![side(&db, "-wal"), side(&db, "-shm")];
    assert_eq!(report, want);
    assert_eq!(session_test_support::dir_names(dir.path()), [DB]);
    assert_eq!(sha256_file(&db), before);

    // Dropping does the same.
    let store = SqliteStore::open(&db).unwrap();
    read_all(&store);
    drop(store);
    assert_eq!(session_test_support::dir_names(dir.path()), [DB]);
    assert_eq!(sha256_file(&db), before);

    // So does a failed open (here: an unknown session is not an open failure, a bad schema is).
    rw(&db).pragma_update(None, "user_version", 22).unwrap();
    let after_writer = sha256_file(&db);
    assert!(SqliteStore::open(&db).is_err());
    assert_eq!(session_test_support::dir_names(dir.path()), [DB]);
    assert_eq!(sha256_file(&db), after_writer);
}

#[test]
fn sqlite_sidecars_in_use_by_another_connection_are_kept() {
    let Some(fixture) = fixture("sqlite_sidecars_in_use_by_another_connection_are_kept") else {
        return;
    };
    let (dir, db) = wal_copy(&fixture);
    let before = sha256_file(&db);
    let store = SqliteStore::open(&db).unwrap();
    read_all(&store);
    // A test writer opens the database after us and holds it open.
    let writer = rw(&db);
    let n: i64 = writer
        .query_row("SELECT count(*) FROM session_nodes", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 6);
    let report = store.close().unwrap();
    let pid = std::process::id();
    let mut want = SidecarCleanup::default();
    want.kept = vec![
        (side(&db, "-wal"), KeptBecause::InUse { pid }),
        (side(&db, "-shm"), KeptBecause::InUse { pid }),
    ];
    assert_eq!(report, want);
    assert_eq!(
        session_test_support::dir_names(dir.path()),
        [DB, "openclaw-agent.sqlite-shm", "openclaw-agent.sqlite-wal"]
    );
    // The writer still works on them.
    let n: i64 = writer
        .query_row("SELECT count(*) FROM transcript_events", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 38);
    drop(writer);
    assert_eq!(sha256_file(&db), before);
}

#[test]
fn sqlite_pre_existing_sidecars_are_never_touched() {
    let Some(fixture) = fixture("sqlite_pre_existing_sidecars_are_never_touched") else {
        return;
    };
    let (dir, db) = wal_copy(&fixture);
    // Another reader (not ours) left both behind.
    {
        let other =
            rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .unwrap();
        let n: i64 = other
            .query_row("SELECT count(*) FROM session_nodes", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 6);
    }
    assert_eq!(
        session_test_support::dir_names(dir.path()),
        [DB, "openclaw-agent.sqlite-shm", "openclaw-agent.sqlite-wal"]
    );
    let shm_before = std::fs::read(side(&db, "-shm")).unwrap();
    let store = SqliteStore::open(&db).unwrap();
    assert_eq!(store.lines(ALICE).unwrap().len(), 8);
    let report = store.close().unwrap();
    let mut want = SidecarCleanup::default();
    want.kept = vec![
        (side(&db, "-wal"), KeptBecause::PreExisting),
        (side(&db, "-shm"), KeptBecause::PreExisting),
    ];
    assert_eq!(report, want);
    assert_eq!(
        session_test_support::dir_names(dir.path()),
        [DB, "openclaw-agent.sqlite-shm", "openclaw-agent.sqlite-wal"]
    );
    assert_eq!(std::fs::metadata(side(&db, "-wal")).unwrap().len(), 0);
    assert_eq!(
        std::fs::read(side(&db, "-shm")).unwrap().len(),
        shm_before.len()
    );

    // The rollback-journal fixture: no sidecar at all, nothing to report.
    let (dir, db) = copy_db(&fixture);
    let store = SqliteStore::open(&db).unwrap();
    read_all(&store);
    assert_eq!(store.close().unwrap(), SidecarCleanup::default());
    assert_eq!(session_test_support::dir_names(dir.path()), [DB]);
}
