//! `SqliteStorage`: an OpenClaw SQLite database behind the `Storage` seam, read-only, on a copy
//! of the fixture made by the real `openclaw@2026.9.6` doctor (`openclaw-sqlite.md` §1.1,
//! §2.13): the virtual layout `<state>/agents/<id>/sessions/<sessionId>.jsonl`, each session's
//! bytes equal to its rows as JSONL, the change stamp, the manager's read-only open and listing
//! through it, the `sessions.json` built from `session_nodes`, and every write refused with the
//! database's bytes unchanged.
#![cfg(feature = "sqlite")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use session_format::json::{JsValue, parse_value};
use session_store::io::{AppendToExistingError, Durability};
use session_store::lock::{LockError, LockOptions};
use session_store::sqlite::{SQLITE_STORAGE_DEV, SqliteError, SqliteStorage};
use session_store::{SessionManager, SnapshotRead, Storage};

use super::sqlite_store::{SESSIONS, fixture};

/// A copy of the fixture database laid out as a state directory:
/// `<tmp>/state/agents/main/agent/openclaw-agent.sqlite`. Returns the temp dir, the state dir
/// and the database path.
fn state_copy(fixture: &Path) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = session_test_support::tempdir();
    let state = dir.path().join("state");
    let agent = state.join("agents/main/agent");
    std::fs::create_dir_all(&agent).unwrap();
    let db = agent.join("openclaw-agent.sqlite");
    std::fs::copy(fixture.join("db/openclaw-agent.sqlite"), &db).unwrap();
    (dir, state, db)
}

fn expected_lines(fixture: &Path, name: &str) -> Vec<u8> {
    std::fs::read(fixture.join(format!("expected/{name}.lines.jsonl"))).unwrap()
}

fn meta(fixture: &Path, name: &str) -> JsValue {
    parse_value(&std::fs::read(fixture.join(format!("expected/{name}.meta.json"))).unwrap())
        .unwrap()
}

/// Each window is `<state>/agents/main/sessions/<sessionId>.jsonl`, listed sorted by name;
/// its bytes, stamp and snapshot agree with `expected/<name>.lines.jsonl`; other namespaces are
/// empty and an unknown session is missing.
#[test]
fn sqlite_storage_serves_each_session_as_its_jsonl() {
    let Some(fixture) = fixture("sqlite_storage_serves_each_session_as_its_jsonl") else {
        return;
    };
    let (_tmp, state, db) = state_copy(&fixture);
    let storage = SqliteStorage::open(&db).unwrap();
    let sessions_dir = state.join("agents/main/sessions");
    assert_eq!(storage.sessions_dir(), sessions_dir);
    assert_eq!(storage.db_path(), db);
    let mut ids: Vec<&str> = SESSIONS.iter().map(|s| s.2).collect();
    ids.sort_unstable();
    let listed = storage.list_sessions(&sessions_dir).unwrap();
    let want: Vec<PathBuf> = ids
        .iter()
        .map(|id| sessions_dir.join(format!("{id}.jsonl")))
        .collect();
    assert_eq!(listed, want);
    assert_eq!(
        storage.list_dirs(&state.join("agents/main")).unwrap(),
        vec![sessions_dir.clone()]
    );
    assert!(storage.list_dirs(&state).unwrap().is_empty());
    assert!(storage.list_sessions(&state).unwrap().is_empty());
    for (name, _key, id) in SESSIONS {
        let path = storage.session_path(id);
        assert_eq!(path, sessions_dir.join(format!("{id}.jsonl")));
        assert_eq!(storage.session_id_of(&path).as_deref(), Some(id));
        let want = expected_lines(&fixture, name);
        assert_eq!(storage.read_all(&path).unwrap(), want, "{name}");
        let stat = storage.stat(&path).unwrap().unwrap();
        assert_eq!(stat.dev, SQLITE_STORAGE_DEV, "{name}");
        assert_eq!(stat.size, want.len() as u64, "{name}");
        assert_eq!(stat.birth_ns, None);
        match storage.read_snapshot(&path).unwrap() {
            SnapshotRead::Read { bytes, snapshot } => {
                assert_eq!(bytes, want, "{name}");
                assert_eq!(snapshot, stat, "{name}");
            }
            other => panic!("{name}: {other:?}"),
        }
        let head = storage.read_head(&path).unwrap().unwrap();
        assert_eq!(head, want[..want.iter().position(|&b| b == b'\n').unwrap()]);
    }
    let unknown = sessions_dir.join("99999999-9999-4999-8999-999999999999.jsonl");
    assert_eq!(storage.stat(&unknown).unwrap(), None);
    assert_eq!(
        storage.read_all(&unknown).unwrap_err().kind(),
        io::ErrorKind::NotFound
    );
    assert!(matches!(
        storage.read_snapshot(&unknown).unwrap(),
        SnapshotRead::Missing
    ));
    let elsewhere = state.join(format!("{}.jsonl", SESSIONS[0].2));
    assert_eq!(storage.session_id_of(&elsewhere), None);
    assert_eq!(
        storage.read_all(&elsewhere).unwrap_err().kind(),
        io::ErrorKind::NotFound
    );
}

/// A database outside `agents/<id>/agent/` is its own namespace: `<db>/<sessionId>.jsonl`.
#[test]
fn sqlite_storage_outside_the_layout_uses_the_database_path() {
    let Some(fixture) = fixture("sqlite_storage_outside_the_layout_uses_the_database_path") else {
        return;
    };
    let dir = session_test_support::tempdir();
    let db = dir.path().join("copy.sqlite");
    std::fs::copy(fixture.join("db/openclaw-agent.sqlite"), &db).unwrap();
    let storage = SqliteStorage::open(&db).unwrap();
    assert_eq!(storage.sessions_dir(), db);
    assert_eq!(storage.list_sessions(&db).unwrap().len(), 6);
    assert_eq!(
        SqliteStorage::default_sessions_dir(Path::new("/s/agents/ops/agent/openclaw-agent.sqlite")),
        PathBuf::from("/s/agents/ops/sessions")
    );
    assert_eq!(
        SqliteStorage::default_sessions_dir(Path::new("/s/agents/ops/agent/other.sqlite")),
        PathBuf::from("/s/agents/ops/agent/other.sqlite")
    );
    assert_eq!(
        SqliteStorage::default_sessions_dir(Path::new("/s/x/ops/agent/openclaw-agent.sqlite")),
        PathBuf::from("/s/x/ops/agent/openclaw-agent.sqlite")
    );
}

fn assert_read_only(e: &io::Error, what: &str) {
    assert_eq!(e.kind(), io::ErrorKind::ReadOnlyFilesystem, "{what}: {e}");
    let inner = e
        .get_ref()
        .and_then(|s| s.downcast_ref::<SqliteError>())
        .unwrap_or_else(|| panic!("{what}: {e:?}"));
    assert!(
        matches!(inner, SqliteError::ReadOnly { what: w, .. } if *w == what),
        "{inner:?}"
    );
}

/// Every write method fails with the typed read-only error and the database file keeps its
/// bytes; a read-only manager's append fails too.
#[test]
fn sqlite_storage_refuses_every_write() {
    let Some(fixture) = fixture("sqlite_storage_refuses_every_write") else {
        return;
    };
    let (_tmp, _state, db) = state_copy(&fixture);
    let before = std::fs::read(&db).unwrap();
    let storage = SqliteStorage::open(&db).unwrap();
    let path = storage.session_path(SESSIONS[0].2);
    let new = storage.session_path("new");
    assert_read_only(&storage.create_new(&new, b"{}\n").unwrap_err(), "create");
    assert_read_only(&storage.replace(&path, b"{}\n").unwrap_err(), "replace");
    assert_read_only(
        &storage.replace_if(&path, b"{}\n", None).unwrap_err(),
        "replace",
    );
    match storage.append_line(&path, b"{}", Durability::SyncAll, None) {
        Err(AppendToExistingError::Io(e)) => assert_read_only(&e, "append"),
        other => panic!("{other:?}"),
    }
    assert_read_only(&storage.append_raw(&path, b"{}\n").unwrap_err(), "append");
    assert_read_only(
        &storage
            .backup_copy(&path, &storage.session_path("bak"), b"")
            .unwrap_err(),
        "backup copy",
    );
    assert_read_only(
        &storage.ensure_dir(storage.sessions_dir()).unwrap_err(),
        "create a directory",
    );
    match storage.with_write_lock(&path, &LockOptions::default(), &mut || {
        panic!("the lock must not be taken")
    }) {
        Err(LockError::Io { source, .. }) => assert_read_only(&source, "take the write lock"),
        other => panic!("{other:?}"),
    }
    storage.sync(&path, Durability::SyncAll).unwrap();
    assert_eq!(
        storage.sync(&new, Durability::SyncAll).unwrap_err().kind(),
        io::ErrorKind::NotFound
    );
    let storage = Arc::new(storage);
    let mut open = SessionManager::on(storage.clone())
        .open_read_only(&path, None)
        .unwrap();
    let msg = parse_value(br#"{"role":"user","content":"x","timestamp":1}"#).unwrap();
    assert!(open.session.append_message(msg).is_err());
    drop(open);
    drop(storage);
    assert_eq!(std::fs::read(&db).unwrap(), before);
}

/// The manager reads a SQLite session through the storage as it reads a file: leaf and branch
/// equal what OpenClaw materialised; `list` finds every session with its id and message count.
#[test]
fn sqlite_storage_opens_and_lists_through_the_manager() {
    let Some(fixture) = fixture("sqlite_storage_opens_and_lists_through_the_manager") else {
        return;
    };
    let (_tmp, _state, db) = state_copy(&fixture);
    let storage = Arc::new(SqliteStorage::open(&db).unwrap());
    let manager = SessionManager::on(storage.clone());
    for (name, _key, id) in SESSIONS {
        let meta = meta(&fixture, name);
        let JsValue::Object(meta) = meta else {
            panic!()
        };
        let open = manager
            .open_read_only(&storage.session_path(id), None)
            .unwrap();
        let leaf = match meta.get("leafEventId") {
            Some(JsValue::String(s)) => Some(s.to_str_lossy().into_owned()),
            _ => None,
        };
        assert_eq!(
            open.session.get_leaf_id().map(str::to_owned),
            leaf,
            "{name}"
        );
        let Some(JsValue::Array(branch)) = meta.get("activeBranchIds") else {
            panic!("{name}")
        };
        let want: Vec<String> = branch
            .iter()
            .map(|v| match v {
                JsValue::String(s) => s.to_str_lossy().into_owned(),
                other => panic!("{other:?}"),
            })
            .collect();
        let got: Vec<String> = open
            .session
            .get_branch(None)
            .iter()
            .map(|e| e.id().to_owned())
            .collect();
        assert_eq!(got, want, "{name}");
    }
    let infos = manager.list("", Some(storage.sessions_dir())).unwrap();
    let mut ids: Vec<String> = infos.iter().map(|i| i.id.clone()).collect();
    ids.sort();
    let mut want: Vec<String> = SESSIONS.iter().map(|s| s.2.to_owned()).collect();
    want.sort();
    assert_eq!(ids, want);
    let large = infos
        .iter()
        .find(|i| i.id == "33333333-3333-4333-8333-333333333333")
        .unwrap();
    assert_eq!(large.message_count, 7);
}

/// The change stamp: an appended row (a test writer on the copy) grows `size` by the row and
/// its newline and moves `mtime_ns`, keeping `ino`; a new rewrite watermark generation changes
/// `ino`.
#[test]
fn sqlite_storage_stamp_moves_on_append_and_on_rewrite() {
    let Some(fixture) = fixture("sqlite_storage_stamp_moves_on_append_and_on_rewrite") else {
        return;
    };
    let (_tmp, _state, db) = state_copy(&fixture);
    let id = SESSIONS[0].2;
    let storage = SqliteStorage::open(&db).unwrap();
    let path = storage.session_path(id);
    let before = storage.stat(&path).unwrap().unwrap();
    let row = r#"{"type":"custom","customType":"t","data":{},"id":"z1","parentId":"a3","timestamp":"2026-07-01T10:30:00.000Z"}"#;
    {
        let w = rusqlite::Connection::open(&db).unwrap();
        w.execute(
            "INSERT INTO transcript_events (session_id, seq, event_json, created_at, \
             event_utf8_bytes) VALUES (?1, (SELECT MAX(seq) + 1 FROM transcript_events \
             WHERE session_id = ?1), ?2, 1782900000000, ?3)",
            rusqlite::params![id, row, row.len() as i64],
        )
        .unwrap();
    }
    let appended = storage.stat(&path).unwrap().unwrap();
    assert_eq!(appended.size, before.size + row.len() as u64 + 1);
    assert_eq!(appended.ino, before.ino);
    assert_eq!(appended.mtime_ns, before.mtime_ns + 1);
    let bytes = storage.read_all(&path).unwrap();
    assert!(bytes.ends_with(format!("{row}\n").as_bytes()));
    {
        let w = rusqlite::Connection::open(&db).unwrap();
        w.execute(
            "UPDATE transcript_rewrite_watermarks SET generation = 'ffffffffffffffffffffffffffffffff' \
             WHERE session_id = ?1",
            [id],
        )
        .unwrap();
    }
    let rewritten = storage.stat(&path).unwrap().unwrap();
    assert_ne!(rewritten.ino, before.ino);
    assert_eq!(rewritten.size, appended.size);
}

/// `store_index_json` is the `sessions.json` of `session_nodes`: the six keys in import order,
/// each the row's `entry_json` object (label kept, no `sessionFile`), two-space indented
/// without a final newline.
#[test]
fn sqlite_storage_builds_sessions_json_from_session_nodes() {
    let Some(fixture) = fixture("sqlite_storage_builds_sessions_json_from_session_nodes") else {
        return;
    };
    let (_tmp, _state, db) = state_copy(&fixture);
    let storage = SqliteStorage::open(&db).unwrap();
    let text = storage.store_index_json().unwrap();
    assert!(text.starts_with(b"{\n  \"agent:main:dm:alice\": {\n    \"sessionId\": "));
    assert!(!text.ends_with(b"\n"));
    let JsValue::Object(top) = parse_value(&text).unwrap() else {
        panic!()
    };
    let keys: Vec<String> = top
        .iter()
        .map(|(k, _)| k.to_str_lossy().into_owned())
        .collect();
    assert_eq!(
        keys,
        [
            "agent:main:dm:alice",
            "agent:main:main",
            "agent:main:large",
            "agent:main:unicode",
            "agent:main:broken",
            "agent:main:legacy-v1"
        ]
    );
    let Some(JsValue::Object(alice)) = top.get("agent:main:dm:alice") else {
        panic!()
    };
    assert_eq!(
        alice.get("sessionId"),
        Some(&JsValue::String(
            "11111111-1111-4111-8111-111111111111".into()
        ))
    );
    assert_eq!(
        alice.get("label"),
        Some(&JsValue::String("Alice DM".into()))
    );
    assert_eq!(alice.get("sessionFile"), None);
}

/// `transcript_summaries` gives, without decoding a row, what reading each session gives: its
/// JSONL length, its row count and its message entries (zstd rows included).
#[test]
fn sqlite_transcript_summaries_equal_what_reading_the_sessions_gives() {
    let Some(fixture) =
        fixture("sqlite_transcript_summaries_equal_what_reading_the_sessions_gives")
    else {
        return;
    };
    let (_tmp, _state, db) = state_copy(&fixture);
    let storage = Arc::new(SqliteStorage::open(&db).unwrap());
    let summaries = storage.store().transcript_summaries().unwrap();
    assert_eq!(summaries.len(), 6);
    let infos = SessionManager::on(storage.clone())
        .list("", Some(storage.sessions_dir()))
        .unwrap();
    for (name, _key, id) in SESSIONS {
        let want = expected_lines(&fixture, name);
        let s = summaries[id];
        assert_eq!(s.bytes, want.len() as u64, "{name}");
        assert_eq!(
            s.rows,
            want.iter().filter(|&&b| b == b'\n').count() as u64,
            "{name}"
        );
        let info = infos.iter().find(|i| i.id == id).unwrap();
        assert_eq!(s.messages, info.unique_message_count as u64, "{name}");
    }
    let large = summaries["33333333-3333-4333-8333-333333333333"];
    assert_eq!((large.rows, large.messages), (8, 7));
}
