//! Consistency checks of the SQLite store (`openclaw-sqlite.md` §2.13 recipe 7, §2.7–§2.9): the
//! pristine fixture gives no finding; each copy damaged by the test's own read-write connection
//! gives exactly the findings of its damage, with session id and seq.
#![cfg(feature = "sqlite")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::sqlite_common::{ALICE, LARGE, SESSIONS, copy_db, exec, fixture, rw};
use session_store::sqlite::{Finding, RowProblem, SqliteError, SqliteStore};
use std::path::Path;

const ALICE_KEY: &str = "agent:main:dm:alice";

fn strs(ids: &[&str]) -> Vec<String> {
    ids.iter().map(|s| (*s).to_owned()).collect()
}

/// `check_all` on a copy after `sql`.
fn findings_after(fixture: &Path, sql: &str) -> Vec<Finding> {
    let (_dir, db) = copy_db(fixture);
    exec(&db, sql);
    SqliteStore::open(&db).unwrap().check_all().unwrap()
}

#[test]
fn sqlite_pristine_fixture_has_no_findings() {
    let Some(fixture) = fixture("sqlite_pristine_fixture_has_no_findings") else {
        return;
    };
    let (_dir, db) = copy_db(&fixture);
    let store = SqliteStore::open(&db).unwrap();
    assert_eq!(store.check_all().unwrap(), []);
    for (name, _, id) in SESSIONS {
        assert_eq!(store.check_session(id).unwrap(), [], "{name}");
    }
    assert!(matches!(
        store.check_session("nope"),
        Err(SqliteError::UnknownSession { .. })
    ));
}

#[test]
fn sqlite_check_key_and_window_findings() {
    let Some(fixture) = fixture("sqlite_check_key_and_window_findings") else {
        return;
    };
    // A key whose current session has no window; check_session finds it by the id too.
    let (_dir, db) = copy_db(&fixture);
    exec(
        &db,
        &format!(
            "UPDATE session_nodes SET current_session_id = 'gone' WHERE session_key = '{ALICE_KEY}'"
        ),
    );
    let store = SqliteStore::open(&db).unwrap();
    let want = [Finding::MissingWindow {
        session_key: ALICE_KEY.to_owned(),
        session_id: "gone".to_owned(),
    }];
    assert_eq!(store.check_all().unwrap(), want);
    assert_eq!(store.check_session("gone").unwrap(), want);
    assert_eq!(store.check_session(ALICE).unwrap(), []);
    assert_eq!(
        want[0].to_string(),
        "key agent:main:dm:alice: current session gone has no session window"
    );

    // A window whose key has no node.
    assert_eq!(
        findings_after(
            &fixture,
            &format!("DELETE FROM session_nodes WHERE session_key = '{ALICE_KEY}'")
        ),
        [Finding::WindowWithoutNode {
            session_id: ALICE.to_owned(),
            session_key: ALICE_KEY.to_owned(),
        }]
    );

    // entry_valid = -1.
    let (_dir, db) = copy_db(&fixture);
    exec(
        &db,
        "UPDATE session_nodes SET entry_valid = -1 WHERE session_key = 'agent:main:large'",
    );
    let store = SqliteStore::open(&db).unwrap();
    let want = [Finding::InvalidEntry {
        session_key: "agent:main:large".to_owned(),
    }];
    assert_eq!(store.check_all().unwrap(), want);
    assert_eq!(store.check_session(LARGE).unwrap(), want);
}

#[test]
fn sqlite_check_seq_findings() {
    let Some(fixture) = fixture("sqlite_check_seq_findings") else {
        return;
    };
    // A gap at seq 3 (u2 removed): its identity now points at no row.
    assert_eq!(
        findings_after(
            &fixture,
            &format!("DELETE FROM transcript_events WHERE session_id = '{ALICE}' AND seq = 3")
        ),
        [
            Finding::SeqGap {
                session_id: ALICE.to_owned(),
                missing_seq: 3,
            },
            Finding::IdentityWithoutRow {
                session_id: ALICE.to_owned(),
                event_id: "u2".to_owned(),
                seq: 3,
            },
        ]
    );

    // Rows renumbered from 100: not starting at 0, every identity dangling, the index behind.
    let mut want = vec![Finding::SeqStart {
        session_id: ALICE.to_owned(),
        first_seq: 100,
    }];
    for (seq, event_id) in [ALICE, "u1", "a1", "u2", "a2", "l1", "u3", "a3"]
        .into_iter()
        .enumerate()
    {
        want.push(Finding::IdentityWithoutRow {
            session_id: ALICE.to_owned(),
            event_id: event_id.to_owned(),
            seq: i64::try_from(seq).unwrap(),
        });
    }
    want.push(Finding::IndexBehind {
        session_id: ALICE.to_owned(),
        indexed_seq: 7,
        max_seq: 107,
    });
    assert_eq!(
        findings_after(
            &fixture,
            &format!("UPDATE transcript_events SET seq = seq + 100 WHERE session_id = '{ALICE}'")
        ),
        want
    );
}

/// A corrupt zstd row is a finding, not an abort; the other sessions are still checked (and
/// clean), and the leaf comparison of the damaged session is skipped.
#[test]
fn sqlite_check_bad_row_is_a_finding() {
    let Some(fixture) = fixture("sqlite_check_bad_row_is_a_finding") else {
        return;
    };
    let (_dir, db) = copy_db(&fixture);
    {
        let raw = rw(&db);
        let mut blob: Vec<u8> = raw
            .query_row(
                "SELECT event_zstd FROM transcript_events WHERE session_id = ?1 AND seq = 4",
                [LARGE],
                |r| r.get(0),
            )
            .unwrap();
        let mid = blob.len() / 2;
        blob[mid] ^= 0x55;
        raw.execute(
            "UPDATE transcript_events SET event_zstd = ?1 WHERE session_id = ?2 AND seq = 4",
            rusqlite::params![blob, LARGE],
        )
        .unwrap();
    }
    let findings = SqliteStore::open(&db).unwrap().check_all().unwrap();
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert!(
        matches!(
            &findings[0],
            Finding::BadRow {
                session_id,
                seq: 4,
                problem: RowProblem::Decompress { .. } | RowProblem::LengthMismatch { .. },
            } if session_id == LARGE
        ),
        "{findings:?}"
    );
}

#[test]
fn sqlite_check_identity_findings() {
    let Some(fixture) = fixture("sqlite_check_identity_findings") else {
        return;
    };
    // An identity naming another id: the materialised branch (joined through identities)
    // then disagrees too.
    assert_eq!(
        findings_after(
            &fixture,
            &format!(
                "UPDATE transcript_event_identities SET event_id = 'zz' \
                 WHERE session_id = '{ALICE}' AND seq = 2"
            )
        ),
        [
            Finding::IdentityMismatch {
                session_id: ALICE.to_owned(),
                seq: 2,
                event_id: "zz".to_owned(),
                row_id: Some("a1".to_owned()),
            },
            Finding::LeafDisagrees {
                session_id: ALICE.to_owned(),
                fresh: true,
                materialised_leaf: Some("a3".to_owned()),
                recomputed_leaf: Some("a3".to_owned()),
                materialised_branch: strs(&["u1", "zz", "u3", "a3"]),
                recomputed_branch: strs(&["u1", "a1", "u3", "a3"]),
            },
        ]
    );
    // An identity pointing at a seq without row.
    assert_eq!(
        findings_after(
            &fixture,
            &format!(
                "UPDATE transcript_event_identities SET seq = 42 \
                 WHERE session_id = '{ALICE}' AND event_id = 'u2'"
            )
        ),
        [Finding::IdentityWithoutRow {
            session_id: ALICE.to_owned(),
            event_id: "u2".to_owned(),
            seq: 42,
        }]
    );
    // An active-branch row whose identity is gone.
    assert_eq!(
        findings_after(
            &fixture,
            &format!(
                "DELETE FROM transcript_event_identities WHERE session_id = '{ALICE}' AND seq = 2"
            )
        ),
        [
            Finding::ActiveRowWithoutIdentity {
                session_id: ALICE.to_owned(),
                seq: 2,
            },
            Finding::LeafDisagrees {
                session_id: ALICE.to_owned(),
                fresh: true,
                materialised_leaf: Some("a3".to_owned()),
                recomputed_leaf: Some("a3".to_owned()),
                materialised_branch: strs(&["u1", "u3", "a3"]),
                recomputed_branch: strs(&["u1", "a1", "u3", "a3"]),
            },
        ]
    );
}

#[test]
fn sqlite_check_index_findings() {
    let Some(fixture) = fixture("sqlite_check_index_findings") else {
        return;
    };
    // A row appended without updating the index.
    assert_eq!(
        findings_after(
            &fixture,
            &format!(
                "INSERT INTO transcript_events (session_id, seq, event_json, created_at) \
                 VALUES ('{ALICE}', 8, '{{\"type\":\"message\",\"id\":\"u4\",\"parentId\":\"a3\",\
                 \"timestamp\":\"2026-07-01T10:00:08.000Z\",\"message\":{{\"role\":\"user\",\
                 \"content\":\"more\",\"timestamp\":1782900008000}}}}', 1782900008000)"
            )
        ),
        [
            Finding::IndexBehind {
                session_id: ALICE.to_owned(),
                indexed_seq: 7,
                max_seq: 8,
            },
            Finding::LeafDisagrees {
                session_id: ALICE.to_owned(),
                fresh: false,
                materialised_leaf: Some("a3".to_owned()),
                recomputed_leaf: Some("u4".to_owned()),
                materialised_branch: strs(&["u1", "a1", "u3", "a3"]),
                recomputed_branch: strs(&["u1", "a1", "u3", "a3", "u4"]),
            },
        ]
    );
    // The last row removed after indexing: the index is ahead of the rows.
    assert_eq!(
        findings_after(
            &fixture,
            &format!("DELETE FROM transcript_events WHERE session_id = '{ALICE}' AND seq = 7")
        ),
        [
            Finding::IdentityWithoutRow {
                session_id: ALICE.to_owned(),
                event_id: "a3".to_owned(),
                seq: 7,
            },
            Finding::IndexAhead {
                session_id: ALICE.to_owned(),
                indexed_seq: 7,
                max_seq: Some(6),
            },
            Finding::LeafDisagrees {
                session_id: ALICE.to_owned(),
                fresh: false,
                materialised_leaf: Some("a3".to_owned()),
                recomputed_leaf: Some("u3".to_owned()),
                materialised_branch: strs(&["u1", "a1", "u3", "a3"]),
                recomputed_branch: strs(&["u1", "a1", "u3"]),
            },
        ]
    );
    // needs_rebuild = 1 (leaf and branch still right).
    assert_eq!(
        findings_after(
            &fixture,
            &format!(
                "UPDATE session_transcript_index_state SET needs_rebuild = 1 \
                 WHERE session_id = '{ALICE}'"
            )
        ),
        [Finding::NeedsRebuild {
            session_id: ALICE.to_owned(),
        }]
    );
    // No index row.
    assert_eq!(
        findings_after(
            &fixture,
            &format!("DELETE FROM session_transcript_index_state WHERE session_id = '{ALICE}'")
        ),
        [
            Finding::IndexMissing {
                session_id: ALICE.to_owned(),
            },
            Finding::LeafDisagrees {
                session_id: ALICE.to_owned(),
                fresh: false,
                materialised_leaf: None,
                recomputed_leaf: Some("a3".to_owned()),
                materialised_branch: strs(&["u1", "a1", "u3", "a3"]),
                recomputed_branch: strs(&["u1", "a1", "u3", "a3"]),
            },
        ]
    );
    // A fresh index naming another leaf.
    let findings = findings_after(
        &fixture,
        &format!(
            "UPDATE session_transcript_index_state SET leaf_event_id = 'a2' \
             WHERE session_id = '{ALICE}'"
        ),
    );
    assert_eq!(
        findings,
        [Finding::LeafDisagrees {
            session_id: ALICE.to_owned(),
            fresh: true,
            materialised_leaf: Some("a2".to_owned()),
            recomputed_leaf: Some("a3".to_owned()),
            materialised_branch: strs(&["u1", "a1", "u3", "a3"]),
            recomputed_branch: strs(&["u1", "a1", "u3", "a3"]),
        }]
    );
    assert_eq!(
        findings[0].to_string(),
        format!("session {ALICE}: materialised leaf a2 differs from the recomputed leaf a3")
    );
}
