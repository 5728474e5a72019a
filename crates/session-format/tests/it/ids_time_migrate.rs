//! Ids, timestamps and the migration edge cases (openclaw-jsonl.md §1.3, §1.9; pi-format.md
//! §1.4, §1.8, §7.3 D).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use pretty_assertions::assert_eq;
use session_format::ids::{new_entry_id, new_session_id, now_timestamp, session_file_name};
use session_format::json::{JsValue, parse_value, to_json_string};
use session_format::migrate::{MigrationRow, js_version_number, migrate, needs_migration};
use session_format::time::{parse_js_date, to_iso_string};

#[test]
fn entry_ids_are_8_lowercase_hex_and_retry_on_collision() {
    let id = new_entry_id(|_| false);
    assert_eq!(id.len(), 8);
    assert!(
        id.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    );
    let mut calls = 0;
    let id = new_entry_id(|_| {
        calls += 1;
        calls < 5
    });
    assert_eq!((calls, id.len()), (5, 8));
    // Every short id taken: a full v4 UUID.
    let id = new_entry_id(|_| true);
    assert_eq!(id.len(), 36);
    assert_eq!(&id[14..15], "4");
}

#[test]
fn session_ids_are_uuid_v7_and_file_names_follow_the_header_time() {
    let id = new_session_id();
    assert_eq!((id.len(), &id[14..15]), (36, "7"));
    let ts = now_timestamp();
    assert_eq!(ts.len(), 24);
    assert!(ts.ends_with('Z') && &ts[10..11] == "T" && &ts[19..20] == ".");
    assert_eq!(
        session_file_name("2026-03-15T22:40:18.123Z", "0195"),
        "2026-03-15T22-40-18-123Z_0195.jsonl"
    );
}

#[test]
fn dates_read_and_print_as_javascript() {
    assert_eq!(
        to_iso_string(0).as_deref(),
        Some("1970-01-01T00:00:00.000Z")
    );
    assert_eq!(
        to_iso_string(1767225600001).as_deref(),
        Some("2026-01-01T00:00:00.001Z")
    );
    assert_eq!(
        parse_js_date("2026-01-01T00:00:00.001Z"),
        Some(1767225600001)
    );
    assert_eq!(
        parse_js_date("2026-01-01T02:00:00+02:00"),
        Some(1767225600000)
    );
    assert_eq!(parse_js_date("2026-01-01"), Some(1767225600000));
    assert_eq!(parse_js_date("2026-01"), Some(1767225600000));
    assert_eq!(
        parse_js_date("2026-01-01T00:00:00.1234Z"),
        Some(1767225600123)
    );
    assert_eq!(parse_js_date("2026-01-01T00:00Z"), Some(1767225600000));
    assert_eq!(parse_js_date("not a date"), None);
    assert_eq!(parse_js_date("2026-13-01"), None);
}

#[test]
fn version_numbers_compare_as_javascript() {
    let v = |t: &str| js_version_number(Some(&parse_value(t.as_bytes()).unwrap()));
    assert_eq!(js_version_number(None), 1.0);
    assert_eq!(v("null"), 1.0);
    assert_eq!(v("2"), 2.0);
    assert_eq!(v("\"3\""), 3.0);
    assert!(v("\"x\"").is_nan());
    assert!(!needs_migration(
        &parse_value(br#"{"type":"session","version":4}"#).unwrap()
    ));
    assert!(!needs_migration(
        &parse_value(br#"{"type":"session","version":"abc"}"#).unwrap()
    ));
    assert!(needs_migration(
        &parse_value(br#"{"type":"session","version":"2"}"#).unwrap()
    ));
}

fn rows(lines: &[&str]) -> Vec<MigrationRow> {
    lines
        .iter()
        .map(|l| MigrationRow::new(parse_value(l.as_bytes()).unwrap()))
        .collect()
}

#[test]
fn first_kept_index_counts_the_header_and_a_later_target_leaves_the_key_out() {
    let mut r = rows(&[
        r#"{"type":"session","id":"s"}"#,
        r#"{"type":"message","message":{"role":"user","content":"a"}}"#,
        r#"{"type":"compaction","summary":"x","firstKeptEntryIndex":1,"tokensBefore":1}"#,
        r#"{"type":"compaction","summary":"y","firstKeptEntryIndex":4,"tokensBefore":2}"#,
        r#"{"type":"message","message":{"role":"user","content":"b"}}"#,
        r#"{"type":"compaction","summary":"z","firstKeptEntryIndex":0,"tokensBefore":3}"#,
    ]);
    let report = migrate(&mut r).unwrap();
    assert_eq!((report.from_version, report.changed_rows), (1.0, 6));
    let id = |i: usize| {
        r[i].value
            .get("id")
            .unwrap()
            .as_str_lossy()
            .unwrap()
            .into_owned()
    };
    let text = |i: usize| to_json_string(&r[i].value);
    assert_eq!(text(0), r#"{"type":"session","id":"s","version":3}"#);
    assert_eq!(
        text(2),
        format!(
            r#"{{"type":"compaction","summary":"x","tokensBefore":1,"id":"{}","parentId":"{}","firstKeptEntryId":"{}"}}"#,
            id(2),
            id(1),
            id(1)
        )
    );
    // Index 4 names a row that has no id yet: the key ends up missing.
    assert_eq!(
        text(3),
        format!(
            r#"{{"type":"compaction","summary":"y","tokensBefore":2,"id":"{}","parentId":"{}"}}"#,
            id(3),
            id(2)
        )
    );
    // Index 0 is the header: no firstKeptEntryId.
    assert!(r[5].value.get("firstKeptEntryId").is_none());
    assert!(r[5].value.get("firstKeptEntryIndex").is_none());
}

#[test]
fn v1_ids_never_collide_with_each_other_or_the_header() {
    let mut lines = vec![r#"{"type":"session","id":"s"}"#.to_owned()];
    lines.extend((0..3000).map(|_| r#"{"type":"custom","customType":"c"}"#.to_owned()));
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let mut r = rows(&refs);
    migrate(&mut r).unwrap();
    let ids: std::collections::HashSet<_> = r
        .iter()
        .skip(1)
        .map(|row| {
            row.value
                .get("id")
                .unwrap()
                .as_str_lossy()
                .unwrap()
                .into_owned()
        })
        .collect();
    assert_eq!(ids.len(), 3000);
}

#[test]
fn v2_hook_messages_become_custom_and_other_rows_are_untouched() {
    let mut r = rows(&[
        r#"{"type":"session","version":2,"id":"s"}"#,
        r#"{"type":"message","id":"a","parentId":null,"message":{"role":"hookMessage","content":"x","display":true}}"#,
        r#"{"type":"message","id":"b","parentId":"a","message":{"role":"user","content":"y"}}"#,
    ]);
    let report = migrate(&mut r).unwrap();
    assert_eq!((report.hook_messages_renamed, report.changed_rows), (1, 2));
    assert_eq!(
        to_json_string(&r[0].value),
        r#"{"type":"session","version":3,"id":"s"}"#
    );
    assert_eq!(
        to_json_string(&r[1].value),
        r#"{"type":"message","id":"a","parentId":null,"message":{"role":"custom","content":"x","display":true}}"#
    );
    assert!(!r[2].changed);
}

#[test]
fn current_and_future_versions_are_not_migrated() {
    for header in [
        r#"{"type":"session","version":3,"id":"s"}"#,
        r#"{"type":"session","version":4,"id":"s"}"#,
    ] {
        let mut r = rows(&[header, r#"{"type":"message","message":{}}"#]);
        assert_eq!(migrate(&mut r), None);
        assert!(r.iter().all(|row| !row.changed));
    }
    // A file with no session row is not migrated either.
    let mut r = rows(&[r#"{"type":"message"}"#]);
    assert_eq!(migrate(&mut r), None);
    assert_eq!(r[0].value, parse_value(br#"{"type":"message"}"#).unwrap());
    let _ = JsValue::Null;
}

/// `Date.parse` against V8 (node 24) on a committed corpus of 924 strings, with UTC as the local
/// zone (`xtask/node/gen-date-corpus.mjs`, run with TZ=UTC).
#[test]
fn date_parse_matches_v8_corpus() {
    let corpus = include_str!("../data/date-corpus.jsonl");
    let mut failures = Vec::new();
    let mut count = 0;
    for line in corpus.split('\n').filter(|l| !l.is_empty()) {
        let v = parse_value(line.as_bytes()).unwrap();
        let input = v.get("input").unwrap().as_str_lossy().unwrap().into_owned();
        let expected = v.get("ms").unwrap().as_f64().map(|m| m as i64);
        let got = session_format::time::parse_js_date_in(&input, &chrono::Utc);
        if got != expected {
            failures.push(format!("{input:?}: got {got:?}, V8 {expected:?}"));
        }
        count += 1;
    }
    assert_eq!(count, 924);
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn derived_migration_ids_come_from_the_file_digest_and_line_and_skip_taken_ones() {
    use session_format::migrate::{MigrationIds, derived_entry_id, migrate_with, sha256_hex};
    let file = sha256_hex(b"abc");
    assert_eq!(
        file,
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    // SHA-256("<file>:2") and SHA-256("<file>:2:1"), first 8 hex.
    assert_eq!(
        derived_entry_id(&file, 2, 0),
        &sha256_hex(format!("{file}:2").as_bytes())[..8]
    );
    assert_eq!(
        derived_entry_id(&file, 2, 1),
        &sha256_hex(format!("{file}:2:1").as_bytes())[..8]
    );
    let taken = derived_entry_id(&file, 3, 0);
    // The header's id is the first attempt of line 3: that row takes its second attempt.
    let mut r = rows(&[
        &format!(r#"{{"type":"session","id":"{taken}"}}"#),
        r#"{"type":"message","message":{"role":"user","content":"a"}}"#,
        r#"{"type":"message","message":{"role":"assistant","content":"b"}}"#,
    ]);
    let lines = [Some(1), Some(2), Some(3)];
    let ids = MigrationIds::Derived {
        file_sha256: &file,
        lines: &lines,
    };
    migrate_with(&mut r, ids).unwrap();
    let id = |i: usize| {
        r[i].value
            .get("id")
            .unwrap()
            .as_str_lossy()
            .unwrap()
            .into_owned()
    };
    assert_eq!(id(1), derived_entry_id(&file, 2, 0));
    assert_eq!(id(2), derived_entry_id(&file, 3, 1));
    assert_eq!(
        r[2].value.get("parentId").unwrap().as_str_lossy().unwrap(),
        id(1)
    );
    // The same rows again: the same ids.
    let mut again = rows(&[
        &format!(r#"{{"type":"session","id":"{taken}"}}"#),
        r#"{"type":"message","message":{"role":"user","content":"a"}}"#,
        r#"{"type":"message","message":{"role":"assistant","content":"b"}}"#,
    ]);
    migrate_with(&mut again, ids).unwrap();
    assert_eq!(
        again
            .iter()
            .map(|m| to_json_string(&m.value))
            .collect::<Vec<_>>(),
        r.iter()
            .map(|m| to_json_string(&m.value))
            .collect::<Vec<_>>()
    );
}
