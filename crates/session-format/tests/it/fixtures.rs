//! Every line the reference writes is read, classified and re-emitted byte for byte; migrations
//! reproduce the reference's rewrite (openclaw-jsonl.md §1,
//! pi-format.md §1.8).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::support;

use pretty_assertions::assert_eq;
use session_format::json::{Field, JsValue, parse_value, to_json_string};
use session_format::migrate::{MigrationRow, js_version_number, migrate};
use session_format::normalize::normalize_text;
use session_format::{
    EntryType, LineContent, LineReader, RowClass, classify_in, is_readable_header,
};

/// Reads a buffer: (line number, class or None for blank/malformed), and the re-emitted bytes.
/// Per line: its number and class (`None` for blank or malformed lines).
type Classes = Vec<(usize, Option<RowClass>)>;

fn read_all(buf: &[u8]) -> (Classes, Vec<u8>, usize) {
    let mut classes = Vec::new();
    let mut reemit = Vec::new();
    let mut header_version = None;
    let mut malformed = 0;
    for line in LineReader::new(buf) {
        reemit.extend_from_slice(line.raw.bytes);
        if line.raw.terminated {
            reemit.push(b'\n');
        }
        match &line.content {
            LineContent::Json(env) => {
                if header_version.is_none() && is_readable_header(env) {
                    let v = parse_value(line.json).unwrap();
                    header_version = Some(js_version_number(v.get("version")));
                }
                classes.push((
                    line.raw.number,
                    Some(classify_in(env, header_version.unwrap_or(3.0))),
                ));
            }
            LineContent::Malformed(_) => {
                malformed += 1;
                classes.push((line.raw.number, None));
            }
            LineContent::Blank => classes.push((line.raw.number, None)),
        }
    }
    (classes, reemit, malformed)
}

#[test]
fn pi_large_session_lines_parse_classify_and_reemit() {
    let Some(dir) = support::shared_dir("pi_large_session_lines_parse_classify_and_reemit") else {
        return;
    };
    let buf = support::read_shared(&dir, "fixtures/pi-large-session-v1.jsonl");
    let (classes, reemit, malformed) = read_all(&buf);
    assert_eq!(reemit, buf, "re-emission must be byte-identical");
    assert_eq!(classes.len(), 1019);
    assert_eq!(malformed, 0);
    assert_eq!(classes[0].1, Some(RowClass::Session));
    let count = |k: EntryType| {
        classes
            .iter()
            .filter(|c| c.1 == Some(RowClass::LegacyEntry(k)))
            .count()
    };
    assert_eq!(count(EntryType::Message), 914);
    assert_eq!(count(EntryType::ThinkingLevelChange), 103);
    assert_eq!(count(EntryType::ModelChange), 1);
}

#[test]
fn expected_reference_files_parse_classify_and_reemit() {
    let Some(dir) = support::shared_dir("expected_reference_files_parse_classify_and_reemit")
    else {
        return;
    };
    let mut lines = 0;
    let mut files = 0;
    for (script, label, file) in support::expected_files(&dir) {
        let (classes, reemit, malformed) = read_all(file.as_bytes());
        assert_eq!(reemit, file.as_bytes(), "{script} {label}");
        // The only malformed line in the samples is the torn fragment of p07.
        assert_eq!(
            malformed,
            usize::from(script == "p07-torn-tail.json"),
            "{script} {label}"
        );
        lines += classes.len();
        files += 1;
        assert_eq!(classes[0].1, Some(RowClass::Session), "{script} {label}");
    }
    assert_eq!(files, 22);
    assert_eq!(lines, 170);
}

#[test]
fn opaque_rows_of_p08_classify_as_the_reference_does() {
    let Some(dir) = support::shared_dir("opaque_rows_of_p08_classify_as_the_reference_does") else {
        return;
    };
    let (_, _, file) = support::expected_files(&dir)
        .into_iter()
        .find(|(s, l, _)| s == "p08-opaque-rows.json" && l == "opened")
        .unwrap();
    let (classes, _, _) = read_all(file.as_bytes());
    let classes: Vec<_> = classes.into_iter().map(|c| c.1.unwrap()).collect();
    assert_eq!(
        classes,
        vec![
            RowClass::Session,
            RowClass::Entry(EntryType::Message),
            RowClass::ParentLinkedOpaque,
            RowClass::Opaque,
            RowClass::Entry(EntryType::Message),
        ]
    );
}

#[test]
fn torn_fragment_is_reported_with_line_and_offset() {
    let buf =
        b"{\"type\":\"session\",\"version\":3,\"id\":\"s\"}\n{\"type\":\"message\",\"id\":\"ab";
    let lines: Vec<_> = LineReader::new(buf).collect();
    let LineContent::Malformed(err) = &lines[1].content else {
        panic!("not malformed")
    };
    assert_eq!(err.line, 2);
    assert_eq!(err.byte_offset, buf.len());
    assert!(err.torn);
    assert_eq!(
        err.to_string(),
        "line 2, byte 66: unexpected end of input at byte 26 (unterminated last line)"
    );
}

/// Migrates a buffer the way the store does: parse rows, migrate, re-serialise changed rows,
/// keep the bytes of the others, drop nothing.
fn migrate_buffer(buf: &[u8]) -> (String, Vec<MigrationRow>) {
    let mut rows = Vec::new();
    let mut raw = Vec::new();
    for line in LineReader::new(buf) {
        if let LineContent::Json(_) = line.content {
            rows.push(MigrationRow::new(parse_value(line.json).unwrap()));
        }
        raw.push(line);
    }
    migrate(&mut rows).expect("a legacy file migrates");
    let mut out = String::new();
    let mut row = 0;
    for line in raw {
        if let LineContent::Json(_) = line.content {
            if rows[row].changed {
                out.push_str(&to_json_string(&rows[row].value));
            } else {
                out.push_str(std::str::from_utf8(line.raw.bytes).unwrap());
            }
            row += 1;
        } else {
            out.push_str(std::str::from_utf8(line.raw.bytes).unwrap());
        }
        out.push('\n');
    }
    (out, rows)
}

#[test]
fn p05_v1_migration_gives_the_reference_file() {
    let Some(dir) = support::shared_dir("p05_v1_migration_gives_the_reference_file") else {
        return;
    };
    let script: serde_json::Value = serde_json::from_slice(&support::read_shared(
        &dir,
        "conformance/scripts/p05-open-v1.json",
    ))
    .unwrap();
    let content = script["ops"][0]["content"].as_str().unwrap();
    let (migrated, _) = migrate_buffer(content.as_bytes());
    let (_, _, expected) = support::expected_files(&dir)
        .into_iter()
        .find(|(s, l, _)| s == "p05-open-v1.json" && l == "migrated")
        .unwrap();
    assert_eq!(normalize_text(&migrated, None), expected);
}

#[test]
fn pi_large_session_migrates_to_one_chain_with_ids_appended() {
    let Some(dir) = support::shared_dir("pi_large_session_migrates_to_one_chain_with_ids_appended")
    else {
        return;
    };
    let buf = support::read_shared(&dir, "fixtures/pi-large-session-v1.jsonl");
    let original: Vec<&str> = std::str::from_utf8(&buf)
        .unwrap()
        .trim_end_matches('\n')
        .split('\n')
        .collect();
    let (migrated, rows) = migrate_buffer(&buf);
    let migrated: Vec<&str> = migrated.trim_end_matches('\n').split('\n').collect();
    assert_eq!(migrated.len(), 1019);
    // Header: the original bytes with `"version":3` appended.
    assert_eq!(
        migrated[0],
        format!("{},\"version\":3}}", &original[0][..original[0].len() - 1])
    );
    let mut prev: Option<String> = None;
    let mut ids = std::collections::HashSet::new();
    for (i, row) in rows.iter().enumerate().skip(1) {
        let id = row
            .value
            .get("id")
            .and_then(JsValue::as_str_lossy)
            .unwrap()
            .into_owned();
        assert!(
            id.len() == 8
                && id
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        assert!(ids.insert(id.clone()), "duplicate id {id}");
        let parent = match &prev {
            Some(p) => format!("\"{p}\""),
            None => "null".to_owned(),
        };
        // Every original key in its original place, every byte kept, id and parentId last.
        let expected = format!(
            "{},\"id\":\"{id}\",\"parentId\":{parent}}}",
            &original[i][..original[i].len() - 1]
        );
        assert_eq!(migrated[i], expected, "line {}", i + 1);
        prev = Some(id);
    }
    assert_eq!(ids.len(), 1018);
}

#[test]
fn envelope_reads_type_id_parent_and_role() {
    let line = br#"{"type":"message","id":"a\u0062","parentId":null,"timestamp":"t","message":{"content":[{"role":"x"}],"role":"assistant"}}"#;
    let read: Vec<_> = LineReader::new(line).collect();
    let LineContent::Json(env) = &read[0].content else {
        panic!()
    };
    assert_eq!(env.r#type.as_str(), Some("message"));
    assert_eq!(env.id.as_str(), Some("ab"));
    assert_eq!(env.parent_id, Field::Null);
    assert_eq!(env.role.as_str(), Some("assistant"));
}
