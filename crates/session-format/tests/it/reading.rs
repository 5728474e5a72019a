//! The reading rules of openclaw-jsonl.md §1.1 / pi-format.md §2.1, one case each: LF-only
//! splitting, CRLF, a leading BOM, blank lines, U+2028/U+2029 inside strings, lone-surrogate
//! escapes, NUL-padded lines, nesting deeper than 128, duplicate keys.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use pretty_assertions::assert_eq;
use session_format::json::{Field, JsValue, ValueKind, parse_value, to_json_string};
use session_format::{LineContent, LineReader, RowClass, classify};

/// (line number, offset, classification or error text) for every line.
fn summary(buf: &[u8]) -> Vec<(usize, usize, String)> {
    LineReader::new(buf)
        .map(|l| {
            let what = match &l.content {
                LineContent::Blank => "blank".to_owned(),
                LineContent::Malformed(e) => format!("malformed: {e}"),
                LineContent::Json(env) => format!("{:?}", classify(env)),
            };
            (l.raw.number, l.raw.offset, what)
        })
        .collect()
}

const HEADER: &str =
    r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#;
const USER: &str = r#"{"type":"message","id":"aaaa0001","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#;

#[test]
fn crlf_lines_parse_and_keep_their_cr() {
    let buf = format!("{HEADER}\r\n{USER}\r\n");
    let lines: Vec<_> = LineReader::new(buf.as_bytes()).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1].raw.bytes, format!("{USER}\r").as_bytes());
    assert_eq!(
        summary(buf.as_bytes())[1],
        (2, HEADER.len() + 2, "Entry(Message)".to_owned())
    );
}

#[test]
fn leading_bom_is_tolerated_on_the_first_line_only() {
    let buf = format!("\u{FEFF}{HEADER}\n\u{FEFF}{USER}\n");
    let s = summary(buf.as_bytes());
    assert_eq!(s[0].2, "Session");
    // JSON.parse rejects a BOM inside the file: only the whole-file trim removes the first one.
    let offset = 3 + HEADER.len() + 1;
    assert_eq!(
        s[1].2,
        format!("malformed: line 2, byte {offset}: expected a value at byte 0")
    );
}

#[test]
fn blank_lines_are_skipped_and_never_malformed() {
    let buf = format!("\n  \t\n{HEADER}\n\u{00A0}\u{2028}\n\n{USER}\n \n");
    let s = summary(buf.as_bytes());
    let kinds: Vec<&str> = s.iter().map(|x| x.2.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "blank",
            "blank",
            "Session",
            "blank",
            "blank",
            "Entry(Message)",
            "blank"
        ]
    );
}

#[test]
fn line_separators_inside_strings_do_not_split_lines() {
    let user = USER.replace("\"hi\"", "\"a\u{2028}b\u{2029}c\"");
    let buf = format!("{HEADER}\n{user}\n");
    let lines: Vec<_> = LineReader::new(buf.as_bytes()).collect();
    assert_eq!(lines.len(), 2);
    let v = parse_value(lines[1].json).unwrap();
    assert_eq!(to_json_string(&v), user);
}

#[test]
fn lone_surrogate_escapes_keep_the_line() {
    let user = USER.replace("\"hi\"", r#""\ud83d x \udc00""#);
    let lines: Vec<_> = LineReader::new(user.as_bytes()).collect();
    let LineContent::Json(env) = &lines[0].content else {
        panic!()
    };
    assert_eq!(
        classify(env),
        RowClass::Entry(session_format::EntryType::Message)
    );
    // Written back exactly as JSON.stringify would write it.
    assert_eq!(to_json_string(&parse_value(lines[0].json).unwrap()), user);
    // A lone surrogate in an id is kept exactly (lossy text only on request).
    let odd = br#"{"type":"label","id":"x\ud800","parentId":null}"#;
    let env = session_format::json::EnvelopeScanner::new()
        .scan(odd)
        .unwrap();
    let id = env.id.as_js_str().unwrap();
    assert_eq!(
        id.to_js_string(),
        session_format::json::JsString::from_utf16(&[0x78, 0xD800])
    );
    assert_eq!(id.as_wtf8(), b"x\xED\xA0\x80");
    assert_eq!(id.as_str(), None);
    assert_eq!(id.to_str_lossy(), "x\u{FFFD}");
    assert!(matches!(env.id, Field::Str(_)));
}

#[test]
fn nul_padded_lines_are_kept_and_reported() {
    let buf = format!("{HEADER}\n\0\0\0\0\n{USER}\n");
    let lines: Vec<_> = LineReader::new(buf.as_bytes()).collect();
    let LineContent::Malformed(e) = &lines[1].content else {
        panic!()
    };
    assert!(e.nul_padded);
    assert!(!e.torn);
    assert_eq!((e.line, e.byte_offset), (2, HEADER.len() + 1));
    assert_eq!(lines[1].raw.bytes, b"\0\0\0\0");
    assert!(matches!(lines[2].content, LineContent::Json(_)));
}

#[test]
fn nesting_deeper_than_128_parses() {
    // Past serde_json's default limit of 128, up to the tree limit: parsed and written back.
    let deep = format!("{}1{}", "[".repeat(999), "]".repeat(999));
    let line =
        format!(r#"{{"type":"custom","customType":"x","data":{deep},"id":"c1","parentId":null}}"#);
    assert_eq!(to_json_string(&parse_value(line.as_bytes()).unwrap()), line);
    // Any depth: the envelope scan reads the line, so it is indexed and kept.
    let deep = format!("{}1{}", "[".repeat(200_000), "]".repeat(200_000));
    let line =
        format!(r#"{{"type":"custom","customType":"x","data":{deep},"id":"c1","parentId":null}}"#);
    let lines: Vec<_> = LineReader::new(line.as_bytes()).collect();
    let LineContent::Json(env) = &lines[0].content else {
        panic!("{:?}", lines[0].content)
    };
    assert_eq!(env.id.as_str(), Some("c1"));
}

#[test]
fn duplicate_keys_resolve_as_javascript() {
    let line = br#"{"id":"first","type":"message","id":"second","parentId":"p","message":{"role":"user","role":"assistant"}}"#;
    let env = session_format::json::EnvelopeScanner::new()
        .scan(line)
        .unwrap();
    assert_eq!(env.id.as_str(), Some("second"));
    assert_eq!(env.role.as_str(), Some("assistant"));
    // The last value at the first key's position.
    assert_eq!(
        to_json_string(&parse_value(line).unwrap()),
        r#"{"id":"second","type":"message","parentId":"p","message":{"role":"assistant"}}"#
    );
}

#[test]
fn non_object_rows_are_opaque_and_keep_their_kind() {
    for (text, kind) in [
        ("null", ValueKind::Null),
        ("123", ValueKind::Number),
        ("\"s\"", ValueKind::String),
        ("[1]", ValueKind::Array),
        ("true", ValueKind::Bool),
    ] {
        let env = session_format::json::EnvelopeScanner::new()
            .scan(text.as_bytes())
            .unwrap();
        assert_eq!(env.kind, kind);
        assert_eq!(classify(&env), RowClass::Opaque);
    }
}

#[test]
fn classification_follows_gen_j() {
    let cases: &[(&str, RowClass)] = &[
        (
            r#"{"type":"model_change","id":"x1","parentId":null}"#,
            RowClass::Entry(session_format::EntryType::ModelChange),
        ),
        (
            r#"{"type":"message","id":"","parentId":null}"#,
            RowClass::Opaque,
        ),
        (r#"{"type":"message","parentId":null}"#, RowClass::Opaque),
        (
            r#"{"type":"plugin_event","id":"p1","parentId":"x"}"#,
            RowClass::ParentLinkedOpaque,
        ),
        (
            r#"{"id":"p1","parentId":null}"#,
            RowClass::ParentLinkedOpaque,
        ),
        (r#"{"type":"plugin_event","id":"p1"}"#, RowClass::Opaque),
        (
            r#"{"type":"plugin_event","id":"p1","parentId":7}"#,
            RowClass::Opaque,
        ),
        (r#"{"type":"metadata","payload":1}"#, RowClass::Opaque),
        (
            r#"{"type":"session","id":"event-1","parentId":"x"}"#,
            RowClass::Session,
        ),
        (r#"{"type":"session","id":5}"#, RowClass::Opaque),
        (
            r#"{"type":"leaf","id":"l1","parentId":"a","targetId":"b"}"#,
            RowClass::LeafCandidate,
        ),
        (
            r#"{"type":"reset","id":"r1","parentId":"a","reason":"daily"}"#,
            RowClass::ParentLinkedOpaque,
        ),
    ];
    for (text, class) in cases {
        let env = session_format::json::EnvelopeScanner::new()
            .scan(text.as_bytes())
            .unwrap();
        assert_eq!(classify(&env), *class, "{text}");
    }
    // `parentId: ""` with an empty id is not parent-linked: ids must be non-empty.
    let env = session_format::json::EnvelopeScanner::new()
        .scan(br#"{"type":"x","id":"","parentId":""}"#)
        .unwrap();
    assert_eq!(classify(&env), RowClass::Opaque);
}

#[test]
fn leaf_controls_need_their_full_shape() {
    let ok = parse_value(br#"{"type":"leaf","id":"l1","parentId":"a","timestamp":"t","targetId":null,"appendParentId":"b","appendMode":"side"}"#).unwrap();
    let leaf = session_format::LeafControl::from_row(&ok).unwrap();
    assert_eq!(leaf.target_id, None);
    assert_eq!(leaf.append_parent_id, Some(Some("b".to_owned())));
    assert_eq!(
        leaf.append_mode,
        Some(session_format::entry::AppendMode::Side)
    );
    for bad in [
        r#"{"type":"leaf","id":"l1","parentId":"a"}"#,
        r#"{"type":"leaf","id":"l1","targetId":"a"}"#,
        r#"{"type":"leaf","id":"","parentId":null,"targetId":"a"}"#,
        r#"{"type":"leaf","id":"l1","parentId":null,"targetId":"a","appendParentId":3}"#,
    ] {
        assert_eq!(
            session_format::LeafControl::from_row(&parse_value(bad.as_bytes()).unwrap()),
            None,
            "{bad}"
        );
    }
}

#[test]
fn last_line_without_newline_is_read_when_complete() {
    let buf = format!("{HEADER}\n{USER}");
    let lines: Vec<_> = LineReader::new(buf.as_bytes()).collect();
    assert!(!lines[1].raw.terminated);
    assert!(matches!(lines[1].content, LineContent::Json(_)));
}

#[test]
fn trailing_javascript_whitespace_after_the_last_line_is_trimmed() {
    let buf = format!("{HEADER}\n{USER}\u{00A0}\u{3000}\n\n");
    let s = summary(buf.as_bytes());
    assert_eq!(s[1].2, "Entry(Message)");
    // The same whitespace on a middle line makes JSON.parse fail.
    let buf = format!("{HEADER}\u{00A0}\n{USER}\n");
    assert!(summary(buf.as_bytes())[0].2.starts_with("malformed"));
}

#[test]
fn invalid_utf8_inside_strings_reads_as_replacement() {
    let mut line =
        br#"{"type":"message","id":"a1","parentId":null,"message":{"role":"user","content":"x"#
            .to_vec();
    line.extend_from_slice(&[0xFF, 0xC3]);
    line.extend_from_slice(br#""}}"#);
    let lines: Vec<_> = LineReader::new(&line).collect();
    assert!(matches!(lines[0].content, LineContent::Json(_)));
    let v = parse_value(&line).unwrap();
    assert_eq!(
        v.get("message").and_then(|m| m.get("content")),
        Some(&JsValue::from("x\u{FFFD}\u{FFFD}"))
    );
}

/// A tree at the depth limit can be cloned, compared, serialised, printed and dropped on a
/// thread with a 2 MiB stack (the usual worker default); one level deeper is an error, while the
/// envelope scan still accepts the line.
#[test]
fn depth_limit_is_safe_on_small_stacks() {
    use session_format::json::{JsonErrorKind, MAX_DEPTH, from_value, to_value};
    let at_limit = format!("{}1{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    let too_deep = format!("[{at_limit}]");
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let v = parse_value(at_limit.as_bytes()).unwrap();
            let c = v.clone();
            assert_eq!(c, v);
            assert_eq!(to_json_string(&to_value(&c).unwrap()), at_limit);
            let back: JsValue = from_value(&c).unwrap();
            assert_eq!(back, v);
            assert!(format!("{v:?}").len() > MAX_DEPTH);
            assert_eq!(
                session_format::normalize::to_json_string_indented(&v, 1)
                    .matches('[')
                    .count(),
                MAX_DEPTH
            );
            drop((v, c, back));
            assert_eq!(
                parse_value(too_deep.as_bytes()).unwrap_err().kind,
                JsonErrorKind::TooDeep
            );
            assert!(
                session_format::json::EnvelopeScanner::new()
                    .scan(too_deep.as_bytes())
                    .is_ok()
            );
        })
        .unwrap()
        .join()
        .unwrap();
}
