//! A session store read from bytes held elsewhere than in its file
//! (`SessionStore::from_bytes_read_only`, e.g. an OpenClaw 2026.8+ SQLite database's
//! `session_nodes`): normalised exactly as `SessionStore::load` normalises the same bytes from
//! a file, and read-only in memory: saving fails with a typed error and writes nothing at the
//! store's (virtual) path.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use pretty_assertions::assert_eq;
use session_semantics::openclaw_store::{SessionStore, SessionStoreError};

/// Legacy fields and an entry that load drops, so the normalisation is visible.
const STORE: &str = r#"{
  "agent:main:main": {"sessionId": "abc-1", "updatedAt": 5, "provider": "telegram", "label": " L "},
  "agent:main:bad": {"sessionId": "../x", "updatedAt": 1},
  "agent:main:num": 7
}"#;

#[test]
fn a_store_from_bytes_is_normalised_as_the_same_file_is_loaded() {
    let dir = session_test_support::tempdir();
    let file = dir.path().join("files/sessions.json");
    session_store::io::ensure_dir(file.parent().unwrap()).unwrap();
    session_store::io::write_raw(&file, STORE.as_bytes()).unwrap();
    let loaded = SessionStore::load(&file).unwrap();
    let virtual_path = dir.path().join("virtual/sessions.json");
    let from_bytes =
        SessionStore::from_bytes_read_only(&virtual_path, STORE.as_bytes().to_vec(), "the test")
            .unwrap();
    assert_eq!(from_bytes.to_bytes(), loaded.to_bytes());
    assert_eq!(from_bytes.load_changes(), loaded.load_changes());
    assert_eq!(from_bytes.len(), 1);
    assert_eq!(from_bytes.loaded_bytes(), STORE.as_bytes());
    assert_eq!(
        from_bytes.transcript_of("agent:main:main"),
        Some(dir.path().join("virtual/abc-1.jsonl"))
    );
    assert!(from_bytes.is_read_only());
    assert!(!loaded.is_read_only());
}

#[test]
fn saving_a_store_from_bytes_fails_and_writes_nothing() {
    let dir = session_test_support::tempdir();
    let virtual_path = dir.path().join("agents/main/sessions/sessions.json");
    let mut store = SessionStore::from_bytes_read_only(
        &virtual_path,
        STORE.as_bytes().to_vec(),
        "the SQLite store /s/openclaw-agent.sqlite",
    )
    .unwrap();
    let err = store.save().unwrap_err();
    assert!(
        matches!(&err, SessionStoreError::ReadOnly { path, origin }
            if *path == virtual_path && origin == "the SQLite store /s/openclaw-agent.sqlite"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "session store {} is read-only: it was read from the SQLite store \
             /s/openclaw-agent.sqlite, not from that file; nothing was written",
            virtual_path.display()
        )
    );
    assert_eq!(
        session_test_support::listing(dir.path()),
        Vec::<String>::new()
    );
}

#[test]
fn bytes_that_are_not_a_store_are_the_errors_load_gives() {
    let p = std::path::Path::new("/v/sessions.json");
    let err = SessionStore::from_bytes_read_only(p, b"[1]".to_vec(), "x").unwrap_err();
    assert!(
        matches!(
            err,
            SessionStoreError::NotAnObject {
                found: "an array",
                ..
            }
        ),
        "{err:?}"
    );
    let err = SessionStore::from_bytes_read_only(p, b"{\"a\":".to_vec(), "x").unwrap_err();
    assert!(
        matches!(err, SessionStoreError::Corrupt { offset: 5, .. }),
        "{err:?}"
    );
}
