//! The read-only OpenClaw SQLite store on the fixture made by the real `openclaw@2026.9.6`
//! doctor (`openclaw-sqlite.md` §1.5, §2, §2.5, §2.8, §5, §6): each session's rows byte for
//! byte, zstd rows included; the leaf and active branch; the session list; the database bytes unchanged by
//! reading; a corrupt zstd row and an unknown schema version as typed errors.
#![cfg(feature = "sqlite")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use session_format::json::parse_value;
use session_store::sqlite::{KNOWN_SCHEMA_VERSION, RowProblem, SqliteError, SqliteStore};
use std::path::{Path, PathBuf};

pub(crate) use session_test_support::OPENCLAW96_SESSIONS as SESSIONS;

const LARGE: &str = "33333333-3333-4333-8333-333333333333";

/// The fixture folder, or `None` (with a recorded skip) without `../shared`.
pub(crate) fn fixture(test: &str) -> Option<PathBuf> {
    Some(session_test_support::shared_dir(test)?.join("fixtures/openclaw-9.6-sqlite"))
}

/// A copy of the fixture database in a fresh temporary directory.
fn copy_db(fixture: &Path) -> (tempfile::TempDir, PathBuf) {
    let dir = session_test_support::tempdir();
    let db = dir.path().join("openclaw-agent.sqlite");
    std::fs::copy(fixture.join("db/openclaw-agent.sqlite"), &db).unwrap();
    (dir, db)
}

/// Every row of every session equals `expected/<name>.lines.jsonl` byte for byte, and the
/// leaf and active branch equal `expected/<name>.meta.json` `leafEventId` and
/// `activeBranchIds` with a fresh index.
#[test]
fn sqlite_lines_and_leaf_match_the_fixture() {
    let Some(fixture) = fixture("sqlite_lines_and_leaf_match_the_fixture") else {
        return;
    };
    let (_dir, db) = copy_db(&fixture);
    let store = SqliteStore::open(&db).unwrap();
    assert_eq!(store.agent_id(), Some("main"));
    assert_eq!(store.app_version(), Some("2026.9.6"));
    for (name, _key, id) in SESSIONS {
        let expected = std::fs::read(fixture.join(format!("expected/{name}.lines.jsonl"))).unwrap();
        let mut got = Vec::new();
        for line in store.lines(id).unwrap() {
            got.extend_from_slice(&line);
            got.push(b'\n');
        }
        assert!(
            got == expected,
            "{name}: rows differ from the expected JSONL"
        );

        let meta = std::fs::read(fixture.join(format!("expected/{name}.meta.json"))).unwrap();
        let meta = parse_value(&meta).unwrap();
        let want_leaf = meta.get("leafEventId").unwrap().as_str_lossy().unwrap();
        let leaf = store.leaf(id).unwrap();
        assert_eq!(leaf.leaf_event_id.as_deref(), Some(&*want_leaf), "{name}");
        assert!(leaf.fresh, "{name}: index state is stale");
        assert_eq!(leaf.indexed_seq, leaf.max_seq, "{name}");
        let want_branch: Vec<String> = meta
            .get("activeBranchIds")
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str_lossy().unwrap().into_owned())
            .collect();
        assert_eq!(store.active_branch(id).unwrap(), want_branch, "{name}");
    }
    // Row counts from the fixture README, so a short read cannot pass.
    let counts: Vec<usize> = SESSIONS
        .iter()
        .map(|(_, _, id)| store.lines(id).unwrap().len())
        .collect();
    assert_eq!(counts, [8, 8, 8, 5, 3, 6]);
    assert_eq!(
        store
            .active_branch("11111111-1111-4111-8111-111111111111")
            .unwrap(),
        ["u1", "a1", "u3", "a3"]
    );
}

/// `large-zstd` really exercises the decoder: seq 2, 4 and 7 are stored as zstd and seq 6
/// (with a `\u0001` escape) as json (§2.5), and the decoded rows are the expected lines.
#[test]
fn sqlite_zstd_rows_are_decoded() {
    let Some(fixture) = fixture("sqlite_zstd_rows_are_decoded") else {
        return;
    };
    let (_dir, db) = copy_db(&fixture);
    {
        let raw = rusqlite::Connection::open(&db).unwrap();
        let mut stmt = raw
            .prepare("SELECT seq FROM transcript_events WHERE session_id = ?1 AND event_zstd IS NOT NULL ORDER BY seq")
            .unwrap();
        let zstd: Vec<i64> = stmt
            .query_map([LARGE], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(zstd, [2, 4, 7]);
    }
    let store = SqliteStore::open(&db).unwrap();
    let lines = store.lines(LARGE).unwrap();
    let expected = std::fs::read(fixture.join("expected/large-zstd.lines.jsonl")).unwrap();
    let expected: Vec<&[u8]> = expected.split_inclusive(|&b| b == b'\n').collect();
    for seq in [2, 4, 7] {
        assert_eq!(&lines[seq][..], &expected[seq][..expected[seq].len() - 1]);
    }
    assert_eq!(lines[2].len(), 3567);
    assert!(lines[6].windows(6).any(|w| w == br"\u0001"));
}

/// `sessions()` lists the six keys with their ids, all current, newest `updated_at` first.
#[test]
fn sqlite_sessions_lists_keys_and_ids() {
    let Some(fixture) = fixture("sqlite_sessions_lists_keys_and_ids") else {
        return;
    };
    let (_dir, db) = copy_db(&fixture);
    let store = SqliteStore::open(&db).unwrap();
    let sessions = store.sessions().unwrap();
    let got: Vec<(&str, &str, bool)> = sessions
        .iter()
        .map(|s| (s.session_key.as_str(), s.session_id.as_str(), s.current))
        .collect();
    let mut want: Vec<(&str, &str, bool)> =
        SESSIONS.iter().map(|&(_, k, id)| (k, id, true)).collect();
    want.reverse(); // The fixture's updatedAt grows by one minute per session.
    assert_eq!(got, want);
    let alice = sessions
        .iter()
        .find(|s| s.session_key == "agent:main:dm:alice")
        .unwrap();
    assert_eq!(alice.label.as_deref(), Some("Alice DM"));
    assert_eq!(alice.display_name.as_deref(), Some("Alice DM"));
    assert_eq!(alice.chat_type.as_deref(), Some("direct"));
    assert_eq!(alice.archived_at, None);
    assert_eq!(alice.updated_at, 1_782_900_000_000);
    assert_eq!(alice.window_created_at, 1_782_900_000_000);
    assert_eq!(alice.previous_session_id, None);
    assert_eq!(alice.reason, None);
    assert_eq!(
        alice.entry_json,
        r#"{"sessionId":"11111111-1111-4111-8111-111111111111","updatedAt":1782900000000,"label":"Alice DM","chatType":"direct","delivery":{"kind":"none"}}"#
    );
    let main = sessions
        .iter()
        .find(|s| s.session_key == "agent:main:main")
        .unwrap();
    assert_eq!(main.label, None);
    assert_eq!(main.model, None);
}

/// Reading never changes the database file. On the fixture (rollback journal mode) no other
/// file appears; on a WAL-mode copy SQLite's read-only open creates `-wal` and `-shm`
/// (§1.5 rule 3), the main file's bytes still do not change, and the store removes the
/// sidecars it created when it is dropped.
#[test]
fn sqlite_reading_leaves_the_database_bytes_unchanged() {
    let Some(fixture) = fixture("sqlite_reading_leaves_the_database_bytes_unchanged") else {
        return;
    };
    let (dir, db) = copy_db(&fixture);
    let before = std::fs::read(&db).unwrap();
    read_everything(&db);
    assert!(
        std::fs::read(&db).unwrap() == before,
        "the database file changed"
    );
    assert_eq!(
        session_test_support::dir_names(dir.path()),
        ["openclaw-agent.sqlite"]
    );

    // A WAL-mode copy, as a live OpenClaw store is on a local disk.
    {
        let raw = rusqlite::Connection::open(&db).unwrap();
        let mode: String = raw
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
    }
    assert_eq!(
        session_test_support::dir_names(dir.path()),
        ["openclaw-agent.sqlite"]
    );
    let before = std::fs::read(&db).unwrap();
    read_everything(&db);
    assert!(
        std::fs::read(&db).unwrap() == before,
        "the WAL database file changed"
    );
    // The read-only open created `-wal` and `-shm` (§1.5 rule 3); dropping the store removed
    // them again (`sqlite_sidecars.rs` pins the rules).
    assert_eq!(
        session_test_support::dir_names(dir.path()),
        ["openclaw-agent.sqlite"]
    );
}

fn read_everything(db: &Path) {
    let store = SqliteStore::open(db).unwrap();
    assert_eq!(store.sessions().unwrap().len(), 6);
    for (_, _, id) in SESSIONS {
        store.lines(id).unwrap();
        store.leaf(id).unwrap();
        store.active_branch(id).unwrap();
    }
}

/// A zstd row whose blob was altered fails the checksum or length check and names the
/// session id and seq; it never yields text (§2.5, §6 item 3).
#[test]
fn sqlite_corrupt_zstd_row_is_a_typed_error() {
    let Some(fixture) = fixture("sqlite_corrupt_zstd_row_is_a_typed_error") else {
        return;
    };
    let (_dir, db) = copy_db(&fixture);
    {
        let raw = rusqlite::Connection::open(&db).unwrap();
        let mut blob: Vec<u8> = raw
            .query_row(
                "SELECT event_zstd FROM transcript_events WHERE session_id = ?1 AND seq = 4",
                [LARGE],
                |r| r.get(0),
            )
            .unwrap();
        // Flip one byte in the middle of the compressed data (not the header).
        let mid = blob.len() / 2;
        blob[mid] ^= 0x55;
        let n = raw
            .execute(
                "UPDATE transcript_events SET event_zstd = ?1 WHERE session_id = ?2 AND seq = 4",
                rusqlite::params![blob, LARGE],
            )
            .unwrap();
        assert_eq!(n, 1);
    }
    let store = SqliteStore::open(&db).unwrap();
    let err = store.lines(LARGE).unwrap_err();
    let SqliteError::BadRow {
        path,
        session_id,
        seq,
        problem,
    } = &err
    else {
        panic!("expected BadRow, got {err:?}");
    };
    assert_eq!(path, &db);
    assert_eq!(session_id, LARGE);
    assert_eq!(*seq, 4);
    assert!(
        matches!(
            problem,
            RowProblem::Decompress { .. } | RowProblem::LengthMismatch { .. }
        ),
        "{problem:?}"
    );
    let text = err.to_string();
    assert!(
        text.starts_with(&format!("{}: session {LARGE} seq 4: ", db.display())),
        "{text}"
    );
    // The other sessions still read.
    assert_eq!(
        store
            .lines("11111111-1111-4111-8111-111111111111")
            .unwrap()
            .len(),
        8
    );

    // A stored length one byte longer than the frame's content is a length error, not text.
    let (_dir2, db2) = copy_db(&fixture);
    rusqlite::Connection::open(&db2)
        .unwrap()
        .execute(
            "UPDATE transcript_events SET event_utf8_bytes = 3568 WHERE session_id = ?1 AND seq = 2",
            [LARGE],
        )
        .unwrap();
    let err = SqliteStore::open(&db2).unwrap().lines(LARGE).unwrap_err();
    assert!(
        matches!(
            &err,
            SqliteError::BadRow {
                seq: 2,
                problem: RowProblem::LengthMismatch {
                    expected: 3568,
                    actual: 3567
                },
                ..
            }
        ),
        "{err:?}"
    );
}

/// An unknown schema version is refused with a typed error naming it, whether
/// `PRAGMA user_version` or `schema_meta` says it (§5).
#[test]
fn sqlite_unknown_schema_version_is_a_typed_error() {
    let Some(fixture) = fixture("sqlite_unknown_schema_version_is_a_typed_error") else {
        return;
    };
    let (_dir, db) = copy_db(&fixture);
    rusqlite::Connection::open(&db)
        .unwrap()
        .pragma_update(None, "user_version", 24)
        .unwrap();
    let err = SqliteStore::open(&db).unwrap_err();
    assert!(
        matches!(
            &err,
            SqliteError::SchemaNewer { path, version: 24, known: 23 } if path == &db
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "{}: uses schema version 24, newer than version 23 that this reader knows; \
             read it with a release that knows version 24",
            db.display()
        )
    );

    let (_dir2, db2) = copy_db(&fixture);
    {
        let raw = rusqlite::Connection::open(&db2).unwrap();
        raw.execute("UPDATE schema_meta SET schema_version = 22", [])
            .unwrap();
    }
    let err = SqliteStore::open(&db2).unwrap_err();
    assert!(
        matches!(
            &err,
            SqliteError::SchemaVersion {
                origin: "schema_meta",
                version: 22,
                known: KNOWN_SCHEMA_VERSION,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .ends_with("run `openclaw doctor --fix` to migrate session identities)")
    );
}

/// A missing file is an open error and is never created; an unknown session id is named.
#[test]
fn sqlite_missing_file_and_unknown_session() {
    let dir = session_test_support::tempdir();
    let missing = dir.path().join("openclaw-agent.sqlite");
    let err = SqliteStore::open(&missing).unwrap_err();
    assert!(
        matches!(&err, SqliteError::Open { path, .. } if path == &missing),
        "{err:?}"
    );
    assert_eq!(
        session_test_support::dir_names(dir.path()),
        Vec::<String>::new()
    );

    let Some(fixture) = fixture("sqlite_missing_file_and_unknown_session") else {
        return;
    };
    let (_dir, db) = copy_db(&fixture);
    let store = SqliteStore::open(&db).unwrap();
    let err = store.lines("nope").unwrap_err();
    assert!(
        matches!(&err, SqliteError::UnknownSession { session_id, .. } if session_id == "nope"),
        "{err:?}"
    );
    assert!(matches!(
        store.leaf("nope"),
        Err(SqliteError::UnknownSession { .. })
    ));
}

/// `open_session` gives a read-only `SessionManager` over the rows: for each fixture session
/// its leaf and root → leaf branch are the ones OpenClaw materialised (§2.8, §2.9), at the
/// session's in-memory path.
#[test]
fn sqlite_open_session_reads_through_the_jsonl_path() {
    let Some(fixture) = fixture("sqlite_open_session_reads_through_the_jsonl_path") else {
        return;
    };
    let (_dir, db) = copy_db(&fixture);
    let store = SqliteStore::open(&db).unwrap();
    for (name, _key, id) in SESSIONS {
        let open = store.open_session(id).unwrap();
        let sm = open.session;
        assert_eq!(
            sm.get_leaf_id(),
            store.leaf(id).unwrap().leaf_event_id.as_deref(),
            "{name}"
        );
        let branch: Vec<&str> = sm.get_branch(None).iter().map(|e| e.id()).collect();
        assert_eq!(branch, store.active_branch(id).unwrap(), "{name}");
        assert_eq!(
            sm.get_session_file(),
            Some(store.session_path(id).as_path()),
            "{name}"
        );
    }
    let open = store.open_session(LARGE).unwrap();
    assert_eq!(open.session.get_entries().count(), 7);
    assert_eq!(store.session_path(LARGE), db.join(format!("{LARGE}.jsonl")));
}

/// A database opened by a relative path opens its sessions (and checks them) as one opened by
/// its absolute path: the in-memory session path is absolute either way.
#[test]
fn sqlite_store_opened_by_a_relative_path_opens_its_sessions() {
    let Some(fixture) = fixture("sqlite_store_opened_by_a_relative_path_opens_its_sessions") else {
        return;
    };
    let (_dir, db) = copy_db(&fixture);
    let cwd = std::env::current_dir().unwrap();
    let mut relative = PathBuf::new();
    for _ in cwd.components().skip(1) {
        relative.push("..");
    }
    relative.push(db.strip_prefix("/").unwrap());
    assert!(relative.is_relative());
    let store = SqliteStore::open(&relative).unwrap();
    let open = store.open_session(LARGE).unwrap();
    assert_eq!(open.session.get_entries().count(), 7);
    assert_eq!(store.session_path(LARGE), db.join(format!("{LARGE}.jsonl")));
    assert_eq!(store.check_session(LARGE).unwrap(), Vec::new());
}
