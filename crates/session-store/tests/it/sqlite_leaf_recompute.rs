//! The leaf and active branch recomputed from the rows and compared with the materialised ones
//! (`openclaw-sqlite.md` §2.8 recommendation, §2.9): on the pristine fixture all three agree
//! with `expected/*.meta.json`; on copies whose index a test writer made stale (needs_rebuild,
//! no index row, a row appended past `indexed_seq`) the recomputed one is returned; on a copy
//! whose fresh index names another leaf the materialised one is returned and the disagreement
//! reported.
#![cfg(feature = "sqlite")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::sqlite_common::{ALICE, SESSIONS, copy_db, exec, expected_leaf, fixture};
use session_store::sqlite::{LeafSource, SqliteStore};

const ALICE_BRANCH: [&str; 4] = ["u1", "a1", "u3", "a3"];

/// All six sessions: recomputed == materialised == expected, from the fresh index.
#[test]
fn sqlite_recomputed_leaf_equals_materialised_on_the_fixture() {
    let Some(fixture) = fixture("sqlite_recomputed_leaf_equals_materialised_on_the_fixture") else {
        return;
    };
    let (_dir, db) = copy_db(&fixture);
    let store = SqliteStore::open(&db).unwrap();
    for (name, _key, id) in SESSIONS {
        let (want_leaf, want_branch) = expected_leaf(&fixture, name);
        let r = store.resolved_leaf(id).unwrap();
        assert_eq!(r.source, LeafSource::Materialised, "{name}");
        assert!(r.materialised.fresh, "{name}");
        assert!(!r.disagrees, "{name}: {r:?}");
        assert_eq!(r.leaf_id.as_deref(), Some(&*want_leaf), "{name}");
        assert_eq!(r.recomputed_leaf_id.as_deref(), Some(&*want_leaf), "{name}");
        assert_eq!(
            r.materialised.leaf_event_id.as_deref(),
            Some(&*want_leaf),
            "{name}"
        );
        assert_eq!(r.branch_ids, want_branch, "{name}");
        assert_eq!(r.recomputed_branch, want_branch, "{name}");
        assert_eq!(r.materialised_branch, want_branch, "{name}");
    }
    // The fixture's label row (l1, on the abandoned branch) is not part of either branch.
    assert_eq!(
        store.resolved_leaf(ALICE).unwrap().recomputed_branch,
        ALICE_BRANCH
    );
}

/// `needs_rebuild = 1` with a stale leaf: the recomputed leaf is returned.
#[test]
fn sqlite_needs_rebuild_uses_the_recomputed_leaf() {
    let Some(fixture) = fixture("sqlite_needs_rebuild_uses_the_recomputed_leaf") else {
        return;
    };
    let (_dir, db) = copy_db(&fixture);
    exec(
        &db,
        &format!(
            "UPDATE session_transcript_index_state SET needs_rebuild = 1, leaf_event_id = 'a2' \
             WHERE session_id = '{ALICE}'"
        ),
    );
    let store = SqliteStore::open(&db).unwrap();
    let r = store.resolved_leaf(ALICE).unwrap();
    assert!(!r.materialised.fresh);
    assert_eq!(r.materialised.leaf_event_id.as_deref(), Some("a2"));
    assert_eq!(r.source, LeafSource::Recomputed);
    assert_eq!(r.leaf_id.as_deref(), Some("a3"));
    assert_eq!(r.branch_ids, ALICE_BRANCH);
    assert!(r.disagrees);
    // Only the leaf was made stale: the materialised branch is still the old one.
    assert_eq!(r.materialised_branch, ALICE_BRANCH);
}

/// No index row: the materialised leaf is `None`, the recomputed one is returned.
#[test]
fn sqlite_missing_index_row_uses_the_recomputed_leaf() {
    let Some(fixture) = fixture("sqlite_missing_index_row_uses_the_recomputed_leaf") else {
        return;
    };
    let (_dir, db) = copy_db(&fixture);
    exec(
        &db,
        &format!("DELETE FROM session_transcript_index_state WHERE session_id = '{ALICE}'"),
    );
    let store = SqliteStore::open(&db).unwrap();
    let r = store.resolved_leaf(ALICE).unwrap();
    assert_eq!(r.materialised.leaf_event_id, None);
    assert_eq!(r.materialised.indexed_seq, None);
    assert_eq!(r.materialised.max_seq, Some(7));
    assert!(!r.materialised.fresh);
    assert_eq!(r.source, LeafSource::Recomputed);
    assert_eq!(r.leaf_id.as_deref(), Some("a3"));
    assert_eq!(r.branch_ids, ALICE_BRANCH);
    assert!(r.disagrees);
}

/// A row appended without updating the index (`indexed_seq` 7, max seq 8): the new row is the
/// recomputed leaf and ends the recomputed branch.
#[test]
fn sqlite_row_appended_past_the_index_is_the_recomputed_leaf() {
    let Some(fixture) = fixture("sqlite_row_appended_past_the_index_is_the_recomputed_leaf") else {
        return;
    };
    let (_dir, db) = copy_db(&fixture);
    exec(
        &db,
        &format!(
            "INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_utf8_bytes) \
             VALUES ('{ALICE}', 8, '{{\"type\":\"message\",\"id\":\"u4\",\"parentId\":\"a3\",\
             \"timestamp\":\"2026-07-01T10:00:08.000Z\",\"message\":{{\"role\":\"user\",\
             \"content\":[{{\"type\":\"text\",\"text\":\"appended\"}}],\"timestamp\":1782900008000}}}}', \
             1782900008000, NULL)"
        ),
    );
    let store = SqliteStore::open(&db).unwrap();
    let r = store.resolved_leaf(ALICE).unwrap();
    assert_eq!(r.materialised.indexed_seq, Some(7));
    assert_eq!(r.materialised.max_seq, Some(8));
    assert!(!r.materialised.fresh);
    assert_eq!(r.materialised.leaf_event_id.as_deref(), Some("a3"));
    assert_eq!(r.source, LeafSource::Recomputed);
    assert_eq!(r.leaf_id.as_deref(), Some("u4"));
    assert_eq!(r.branch_ids, ["u1", "a1", "u3", "a3", "u4"]);
    assert_eq!(r.materialised_branch, ALICE_BRANCH);
    assert!(r.disagrees);
}

/// A fresh index that names another leaf: the materialised leaf is returned (OpenClaw's own
/// state) and the disagreement is reported, with ours alongside.
#[test]
fn sqlite_fresh_index_disagreeing_is_reported_not_hidden() {
    let Some(fixture) = fixture("sqlite_fresh_index_disagreeing_is_reported_not_hidden") else {
        return;
    };
    let (_dir, db) = copy_db(&fixture);
    exec(
        &db,
        &format!(
            "UPDATE session_transcript_index_state SET leaf_event_id = 'a2' \
             WHERE session_id = '{ALICE}'"
        ),
    );
    let store = SqliteStore::open(&db).unwrap();
    let r = store.resolved_leaf(ALICE).unwrap();
    assert!(r.materialised.fresh);
    assert_eq!(r.source, LeafSource::Materialised);
    assert_eq!(r.leaf_id.as_deref(), Some("a2"));
    assert_eq!(r.branch_ids, ALICE_BRANCH);
    assert_eq!(r.recomputed_leaf_id.as_deref(), Some("a3"));
    assert!(r.disagrees);
}
