//! Schema versions and ownership at open (`openclaw-sqlite.md` §1.3, §5), on copies of the
//! fixture whose `user_version`, `schema_meta` or tables the test altered with its own
//! read-write connection: each refusal is its typed error with its exact message; a newer
//! schema is read only with `force_schema`, when every table and column read exists, with a
//! warning; a `transcript_events` without the zstd columns is read through `event_json` only.
#![cfg(feature = "sqlite")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::sqlite_common::{ALICE, LARGE, copy_db, copy_db_at, exec, fixture, rw};
use session_store::sqlite::{OpenOptions, RowProblem, SqliteError, SqliteStore, SqliteWarning};

const FORCE: OpenOptions = OpenOptions { force_schema: true };

fn set_user_version(db: &std::path::Path, v: i64) {
    rw(db).pragma_update(None, "user_version", v).unwrap();
}

/// 17–22: OpenClaw's identity-migration advice, with or without force.
#[test]
fn sqlite_schema_17_to_22_asks_for_the_doctor() {
    let Some(fixture) = fixture("sqlite_schema_17_to_22_asks_for_the_doctor") else {
        return;
    };
    for v in 17..=22 {
        let (_dir, db) = copy_db(&fixture);
        set_user_version(&db, v);
        for options in [OpenOptions::default(), FORCE] {
            let err = SqliteStore::open_with(&db, &options).unwrap_err();
            assert!(
                matches!(&err, SqliteError::SchemaNeedsIdentityMigration { path, version }
                    if path == &db && *version == v),
                "{err:?}"
            );
            assert_eq!(
                err.to_string(),
                format!(
                    "{}: uses schema version {v}; stop active agents and run `openclaw doctor \
                     --fix` to migrate session identities before using it",
                    db.display()
                )
            );
        }
    }
}

/// Below 17 on a database with tables (0 included): the media-migration error.
#[test]
fn sqlite_schema_below_17_asks_for_the_media_migration() {
    let Some(fixture) = fixture("sqlite_schema_below_17_asks_for_the_media_migration") else {
        return;
    };
    for v in [16, 1, 0] {
        let (_dir, db) = copy_db(&fixture);
        set_user_version(&db, v);
        let err = SqliteStore::open_with(&db, &FORCE).unwrap_err();
        assert!(
            matches!(&err, SqliteError::SchemaNeedsMediaMigration { version, .. } if *version == v),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!(
                "{}: uses schema version {v}; run `openclaw doctor --fix` to migrate persisted \
                 media before using it",
                db.display()
            )
        );
    }
}

/// An empty database (`user_version` 0, no table) is not an agent store.
#[test]
fn sqlite_empty_database_is_refused() {
    let dir = session_test_support::tempdir();
    let db = dir.path().join("openclaw-agent.sqlite");
    // A real, empty SQLite database: a header page and no schema.
    rw(&db).execute_batch("VACUUM").unwrap();
    let err = SqliteStore::open(&db).unwrap_err();
    assert!(
        matches!(&err, SqliteError::EmptyDatabase { path } if path == &db),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!("{}: not an OpenClaw agent database (empty)", db.display())
    );
}

/// Newer than 23: refused by default; read with `force_schema` and a warning when
/// `schema_meta` agrees and the tables and columns exist.
#[test]
fn sqlite_newer_schema_is_read_only_when_forced() {
    let Some(fixture) = fixture("sqlite_newer_schema_is_read_only_when_forced") else {
        return;
    };
    let (_dir, db) = copy_db(&fixture);
    set_user_version(&db, 25);
    exec(&db, "UPDATE schema_meta SET schema_version = 25");
    let err = SqliteStore::open(&db).unwrap_err();
    assert!(
        matches!(
            &err,
            SqliteError::SchemaNewer {
                version: 25,
                known: 23,
                ..
            }
        ),
        "{err:?}"
    );
    let store = SqliteStore::open_with(&db, &FORCE).unwrap();
    assert_eq!(
        store.warnings(),
        [SqliteWarning::NewerSchema {
            version: 25,
            known: 23
        }]
    );
    assert_eq!(
        store.warnings()[0].to_string(),
        "schema version 25 is newer than version 23 that this reader knows; reading it anyway \
         (force_schema), results may be incomplete"
    );
    assert_eq!(store.lines(LARGE).unwrap().len(), 8);
    assert_eq!(store.sessions().unwrap().len(), 6);
    // The pristine fixture opens without warnings.
    let (_dir2, db2) = copy_db(&fixture);
    assert!(SqliteStore::open(&db2).unwrap().warnings().is_empty());

    // Forced, but schema_meta still says 23: the two versions disagree.
    let (_dir3, db3) = copy_db(&fixture);
    set_user_version(&db3, 25);
    let err = SqliteStore::open_with(&db3, &FORCE).unwrap_err();
    assert!(
        matches!(
            &err,
            SqliteError::SchemaVersion {
                origin: "schema_meta",
                version: 23,
                ..
            }
        ),
        "{err:?}"
    );
}

/// Forced, a missing column or table is named (the first missing one).
#[test]
fn sqlite_forced_schema_names_the_first_missing_column() {
    let Some(fixture) = fixture("sqlite_forced_schema_names_the_first_missing_column") else {
        return;
    };
    let (_dir, db) = copy_db(&fixture);
    set_user_version(&db, 24);
    exec(
        &db,
        "UPDATE schema_meta SET schema_version = 24; \
         ALTER TABLE session_transcript_index_state RENAME COLUMN leaf_event_id TO leaf_id;",
    );
    let err = SqliteStore::open_with(&db, &FORCE).unwrap_err();
    assert!(
        matches!(
            &err,
            SqliteError::MissingSchemaItem {
                version: 24,
                table: "session_transcript_index_state",
                column: Some("leaf_event_id"),
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "{}: schema version 24 has no column session_transcript_index_state.leaf_event_id; \
             this reader needs it",
            db.display()
        )
    );

    let (_dir2, db2) = copy_db(&fixture);
    set_user_version(&db2, 24);
    exec(
        &db2,
        "UPDATE schema_meta SET schema_version = 24; DROP TABLE transcript_rewrite_watermarks;",
    );
    let err = SqliteStore::open_with(&db2, &FORCE).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: schema version 24 has no table transcript_rewrite_watermarks; this reader \
             needs it",
            db2.display()
        )
    );
    assert!(
        matches!(
            &err,
            SqliteError::MissingSchemaItem {
                table: "transcript_rewrite_watermarks",
                column: None,
                ..
            }
        ),
        "{err:?}"
    );
}

/// `transcript_events` without `event_zstd`/`event_utf8_bytes`: json rows read, a warning
/// recorded, and a row that only had zstd text has no payload (it is never guessed).
#[test]
fn sqlite_without_zstd_columns_reads_event_json_only() {
    let Some(fixture) = fixture("sqlite_without_zstd_columns_reads_event_json_only") else {
        return;
    };
    let (_dir, db) = copy_db(&fixture);
    exec(
        &db,
        "CREATE TABLE te2 (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT, \
           created_at INTEGER NOT NULL, PRIMARY KEY (session_id, seq)) STRICT; \
         INSERT INTO te2 SELECT session_id, seq, event_json, created_at FROM transcript_events; \
         DROP TABLE transcript_events; \
         ALTER TABLE te2 RENAME TO transcript_events;",
    );
    let store = SqliteStore::open(&db).unwrap();
    assert_eq!(store.warnings(), [SqliteWarning::NoZstdColumns]);
    let expected = std::fs::read(fixture.join("expected/dm-branch-label.lines.jsonl")).unwrap();
    let mut got = Vec::new();
    for line in store.lines(ALICE).unwrap() {
        got.extend_from_slice(&line);
        got.push(b'\n');
    }
    assert!(got == expected, "dm-branch-label differs");
    let err = store.lines(LARGE).unwrap_err();
    assert!(
        matches!(
            &err,
            SqliteError::BadRow {
                seq: 2,
                problem: RowProblem::PayloadColumns {
                    json: false,
                    zstd: false
                },
                ..
            }
        ),
        "{err:?}"
    );
}

/// `schema_meta.agent_id` must be non-empty, and the directory's agent when the path is
/// `agents/<id>/agent/openclaw-agent.sqlite` (compared trimmed and lowercased).
#[test]
fn sqlite_agent_id_is_checked_against_the_directory() {
    let Some(fixture) = fixture("sqlite_agent_id_is_checked_against_the_directory") else {
        return;
    };
    let (_dir, db) = copy_db(&fixture);
    exec(&db, "UPDATE schema_meta SET agent_id = ''");
    let err = SqliteStore::open(&db).unwrap_err();
    assert!(matches!(&err, SqliteError::SchemaMeta { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "{}: not an OpenClaw agent store: schema_meta agent_id is empty",
            db.display()
        )
    );

    let (_dir, db) = copy_db_at(&fixture, "state/agents/main/agent/openclaw-agent.sqlite");
    assert_eq!(SqliteStore::open(&db).unwrap().agent_id(), Some("main"));

    let (_dir, db) = copy_db_at(&fixture, "state/agents/work/agent/openclaw-agent.sqlite");
    let err = SqliteStore::open(&db).unwrap_err();
    assert!(
        matches!(&err, SqliteError::AgentMismatch { path, schema_agent, dir_agent }
            if path == &db && schema_agent == "main" && dir_agent == "work"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "{}: schema_meta says the database belongs to agent 'main', but it lies in the \
             directory of agent 'work'",
            db.display()
        )
    );

    let (_dir, db) = copy_db_at(&fixture, "state/agents/main/agent/openclaw-agent.sqlite");
    exec(&db, "UPDATE schema_meta SET agent_id = ' Main '");
    assert_eq!(SqliteStore::open(&db).unwrap().agent_id(), Some(" Main "));
}
