//! Helpers shared by the SQLite store tests: the fixture, temporary copies of its database,
//! a read-write test connection, and the expected leaf and branch of each session.
#![cfg(feature = "sqlite")]
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)] // Tests fail loudly by design.

use session_format::json::parse_value;
use std::path::{Path, PathBuf};

pub use session_test_support::OPENCLAW96_SESSIONS as SESSIONS;

/// `dm-branch-label`: 8 rows, leaf a3, branch u1 a1 u3 a3.
pub const ALICE: &str = "11111111-1111-4111-8111-111111111111";
/// `large-zstd`: 8 rows, seq 2, 4, 7 zstd.
pub const LARGE: &str = "33333333-3333-4333-8333-333333333333";

/// The fixture folder, or `None` (with a recorded skip) without `../shared`.
pub fn fixture(test: &str) -> Option<PathBuf> {
    Some(session_test_support::shared_dir(test)?.join("fixtures/openclaw-9.6-sqlite"))
}

/// A copy of the fixture database at `<tempdir>/openclaw-agent.sqlite`.
pub fn copy_db(fixture: &Path) -> (tempfile::TempDir, PathBuf) {
    let dir = session_test_support::tempdir();
    let db = dir.path().join("openclaw-agent.sqlite");
    std::fs::copy(fixture.join("db/openclaw-agent.sqlite"), &db).unwrap();
    (dir, db)
}

/// A copy of the fixture database at `<tempdir>/<rel>` (parents created).
pub fn copy_db_at(fixture: &Path, rel: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = session_test_support::tempdir();
    let db = dir.path().join(rel);
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    std::fs::copy(fixture.join("db/openclaw-agent.sqlite"), &db).unwrap();
    (dir, db)
}

/// The test's own read-write connection on a copy, with foreign keys off (the bundled SQLite
/// turns them on), so that a test can leave the dangling rows a damaged store has.
pub fn rw(db: &Path) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.pragma_update(None, "foreign_keys", false).unwrap();
    conn
}

/// Runs `sql` on a read-write connection to `db` and closes it.
pub fn exec(db: &Path, sql: &str) {
    rw(db).execute_batch(sql).unwrap();
}

/// `expected/<name>.meta.json`: (`leafEventId`, `activeBranchIds`).
pub fn expected_leaf(fixture: &Path, name: &str) -> (String, Vec<String>) {
    let meta = std::fs::read(fixture.join(format!("expected/{name}.meta.json"))).unwrap();
    let meta = parse_value(&meta).unwrap();
    let leaf = meta
        .get("leafEventId")
        .unwrap()
        .as_str_lossy()
        .unwrap()
        .into_owned();
    let branch = meta
        .get("activeBranchIds")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str_lossy().unwrap().into_owned())
        .collect();
    (leaf, branch)
}

/// The SHA-256 of a file, as lowercase hex.
pub fn sha256_file(path: &Path) -> String {
    session_format::migrate::sha256_hex(&std::fs::read(path).unwrap())
}
