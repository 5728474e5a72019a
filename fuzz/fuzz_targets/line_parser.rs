//! Fuzz target: the line parser of `session-format`. Frames the input into lines, scans each
//! line's envelope, parses it fully, classifies it, parses typed entries and leaf controls,
//! migrates the parsed rows and serialises them again. Crashes on any panic, and on any
//! disagreement between the envelope scan (what the index reads) and the full parse (what
//! queries read) about a line: acceptance, error position, kind, `type`, `id`, `parentId`,
//! `message.role` or `appendMode`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use session_format::json::{
    EnvelopeScanner, Field, JsValue, JsonErrorKind, ValueKind, parse_value, to_json_string,
};
use session_format::line::{LineContent, LineReader, lines, trim_js_end, trim_js_start};
use session_format::migrate::{MigrationRow, migrate};
use session_format::{Entry, LeafControl, classify, is_readable_header};

fn field(f: &Field<'_>, v: Option<&JsValue>) -> bool {
    match (f, v) {
        (Field::Absent, None) | (Field::Null, Some(JsValue::Null)) => true,
        (Field::Str(s), Some(JsValue::String(t))) => s == t,
        (Field::Other, Some(v)) => !matches!(v, JsValue::Null | JsValue::String(_)),
        _ => false,
    }
}

fn check_agreement(json: &[u8]) {
    let scanned = EnvelopeScanner::new().scan(json);
    let parsed = parse_value(json);
    match (scanned, parsed) {
        (_, Err(e)) if e.kind == JsonErrorKind::TooDeep => {}
        (Err(a), Err(b)) => assert_eq!(a, b, "scan and parse fail differently"),
        (Ok(env), Ok(v)) => {
            let kind = match &v {
                JsValue::Object(_) => ValueKind::Object,
                JsValue::Array(_) => ValueKind::Array,
                JsValue::String(_) => ValueKind::String,
                JsValue::Number(_) => ValueKind::Number,
                JsValue::Bool(_) => ValueKind::Bool,
                JsValue::Null => ValueKind::Null,
            };
            let obj = v.as_object();
            let get = |k: &str| obj.and_then(|o| o.get(k));
            assert_eq!(env.kind, kind);
            assert!(field(&env.r#type, get("type")), "type: {env:?}");
            assert!(field(&env.id, get("id")), "id: {env:?}");
            assert!(field(&env.parent_id, get("parentId")), "parentId: {env:?}");
            assert!(
                field(&env.append_mode, get("appendMode")),
                "appendMode: {env:?}"
            );
            match get("message").and_then(JsValue::as_object) {
                Some(m) => assert!(field(&env.role, m.get("role")), "role: {env:?}"),
                None => assert_eq!(env.role, Field::Absent),
            }
        }
        (Ok(env), Err(e)) => panic!("scan accepts ({env:?}), parse fails: {e}"),
        (Err(e), Ok(_)) => panic!("scan fails ({e}), parse accepts"),
    }
}

fuzz_target!(|data: &[u8]| {
    let _ = lines(data).map(|l| l.bytes.len()).sum::<usize>();
    let _ = (trim_js_start(data).len(), trim_js_end(data).len());
    let mut rows = Vec::new();
    for line in LineReader::new(data) {
        check_agreement(line.raw.bytes);
        match line.content {
            LineContent::Json(env) => {
                let _ = (classify(&env), is_readable_header(&env));
                if let Ok(v) = parse_value(line.json) {
                    let _ = Entry::from_value(&v).map(|e| e.to_json_line());
                    let _ = LeafControl::from_row(&v);
                    let _ = to_json_string(&v);
                    rows.push(MigrationRow::new(v));
                }
            }
            LineContent::Malformed(e) => {
                let _ = e.to_string();
            }
            LineContent::Blank => {}
        }
    }
    let _ = migrate(&mut rows);
    for r in &rows {
        let _ = to_json_string(&r.value);
    }
});
