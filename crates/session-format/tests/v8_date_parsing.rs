//! Breaker findings for `session-format` (reviewer hand-over). Every test here fails today and
//! states the behaviour OpenClaw 2026.6.11 / node 24 shows for the same input (checked with
//! `xtask/conformance/runner.mjs` and `Date.parse` under the pinned node binary).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use session_format::json::parse_value;
use session_format::migrate::{MigrationRow, migrate};
use session_format::time::parse_js_date;

fn rows(lines: &[&str]) -> Vec<MigrationRow> {
    lines
        .iter()
        .map(|l| MigrationRow::new(parse_value(l.as_bytes()).unwrap()))
        .collect()
}

/// v1→v2: the reference assigns the compaction's own id *before* it resolves
/// `firstKeptEntryIndex` (`entry.id = generateId(ids)` comes first in `migrateV1ToV2`), so an
/// index that names the compaction row itself yields `firstKeptEntryId` = the compaction's new
/// id. We drop the key instead. Repro op-script: a v1 file `header, user, assistant,
/// compaction{firstKeptEntryIndex:3}, user` opened by both runners
/// (`target/breaker/scripts/b16-v1-fkei-self.json`).
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

/// `Date.parse` (V8) accepts day-of-month overflow in the ISO form and rolls it over; we return
/// `None`. This decides the `timestamp` of custom/branch/compaction messages in
/// `buildSessionContext` (node: `Date.parse("2026-02-30T00:00:00Z") === 1772409600000`).
#[test]
fn parse_js_date_rolls_day_overflow_like_v8() {
    assert_eq!(
        parse_js_date("2026-02-30T00:00:00Z"),
        Some(1_772_409_600_000)
    );
    assert_eq!(parse_js_date("2026-02-30"), Some(1_772_409_600_000));
    assert_eq!(parse_js_date("2026-04-31"), Some(1_777_593_600_000));
}

/// V8's fallback parser accepts RFC 1123 / `Date#toUTCString` text (no time-zone dependence
/// with an explicit `GMT`): `Date.parse("Thu, 01 Jan 2026 00:00:00 GMT") === 1767225600000`.
#[test]
fn parse_js_date_accepts_utc_string_form() {
    assert_eq!(
        parse_js_date("Thu, 01 Jan 2026 00:00:00 GMT"),
        Some(1_767_225_600_000)
    );
}

/// V8 rejects these; we accept them (`Date.parse` is NaN for each in node 24).
#[test]
fn parse_js_date_rejects_what_v8_rejects() {
    assert_eq!(
        parse_js_date(" 2026-01-01T00:00:00Z "),
        None,
        "surrounding spaces"
    );
    assert_eq!(parse_js_date("2026-12-31T23:59:60Z"), None, "leap second");
}
