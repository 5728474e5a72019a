//! v1→v2 migration of a compaction whose `firstKeptEntryIndex` names the compaction row itself
//! (openclaw-jsonl.md §1.9): the result matches OpenClaw 2026.6.11 (checked with
//! `xtask/conformance/runner.mjs`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use session_format::json::parse_value;
use session_format::migrate::{MigrationRow, migrate};

fn rows(lines: &[&str]) -> Vec<MigrationRow> {
    lines
        .iter()
        .map(|l| MigrationRow::new(parse_value(l.as_bytes()).unwrap()))
        .collect()
}

/// v1→v2: the reference assigns the compaction's own id *before* it resolves
/// `firstKeptEntryIndex` (`entry.id = generateId(ids)` comes first in `migrateV1ToV2`), so an
/// index that names the compaction row itself yields `firstKeptEntryId` = the compaction's new
/// id, and so does ours. Checked by opening the v1 file `header, user, assistant,
/// compaction{firstKeptEntryIndex:3}, user` with both runners.
#[test]
fn v1_compaction_whose_first_kept_index_names_itself_keeps_its_own_id() {
    let mut r = rows(&[
        r#"{"type":"session","id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#,
        r#"{"type":"message","timestamp":"t","message":{"role":"user","content":"q","timestamp":1}}"#,
        r#"{"type":"message","timestamp":"t","message":{"role":"assistant","content":"r","timestamp":2}}"#,
        r#"{"type":"compaction","timestamp":"t","summary":"S","firstKeptEntryIndex":3,"tokensBefore":5}"#,
        r#"{"type":"message","timestamp":"t","message":{"role":"user","content":"after","timestamp":3}}"#,
    ]);
    migrate(&mut r).expect("v1 file migrates");
    let comp = &r[3].value;
    let own_id = comp.get("id").cloned().expect("compaction got an id");
    assert_eq!(comp.get("firstKeptEntryIndex"), None);
    assert_eq!(
        comp.get("firstKeptEntryId"),
        Some(&own_id),
        "reference: firstKeptEntryId is the compaction's own new id"
    );
    // The key goes after `id`/`parentId`, as the reference appends it last.
    let keys: Vec<String> = comp
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.to_str_lossy().into_owned())
        .collect();
    assert_eq!(keys.last().map(String::as_str), Some("firstKeptEntryId"));
}
