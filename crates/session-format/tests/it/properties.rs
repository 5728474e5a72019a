//! Property tests: the writer is a fixed point of parse∘write, the envelope scan agrees with the
//! full parser on every input, and line framing re-emits any buffer byte for byte.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use proptest::prelude::*;
use session_format::json::{
    EnvelopeScanner, Field, JsObject, JsString, JsValue, parse_value, to_json_string,
};
use session_format::line::lines;

fn js_string() -> impl Strategy<Value = JsString> {
    prop_oneof![
        any::<String>().prop_map(JsString::new),
        prop::collection::vec(any::<u16>(), 0..12).prop_map(|u| JsString::from_utf16(&u)),
        prop::sample::select(vec![
            "0",
            "1",
            "10",
            "4294967294",
            "4294967295",
            "01",
            "-1",
            "id",
            "type"
        ])
        .prop_map(JsString::from),
    ]
}

fn js_value() -> impl Strategy<Value = JsValue> {
    let leaf = prop_oneof![
        Just(JsValue::Null),
        any::<bool>().prop_map(JsValue::Bool),
        any::<u64>().prop_map(|b| JsValue::Number(f64::from_bits(b))),
        (-1e6f64..1e6).prop_map(JsValue::Number),
        js_string().prop_map(JsValue::String),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(JsValue::Array),
            prop::collection::vec((js_string(), inner), 0..6)
                .prop_map(|kv| JsValue::Object(kv.into_iter().collect::<JsObject>())),
        ]
    })
}

/// What JSON.stringify then JSON.parse does to a value: non-finite numbers become null and -0
/// becomes 0.
fn through_json(v: &JsValue) -> JsValue {
    match v {
        JsValue::Number(n) if !n.is_finite() => JsValue::Null,
        JsValue::Number(n) if *n == 0.0 => JsValue::Number(0.0),
        JsValue::Array(a) => JsValue::Array(a.iter().map(through_json).collect()),
        JsValue::Object(o) => JsValue::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), through_json(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn written_text_parses_back_to_the_same_value(v in js_value()) {
        let text = to_json_string(&v);
        let back = parse_value(text.as_bytes()).unwrap();
        prop_assert_eq!(&back, &through_json(&v));
        prop_assert_eq!(to_json_string(&back), text);
    }

    #[test]
    fn scan_agrees_with_parse(v in js_value(), cut in any::<prop::sample::Index>(), byte in any::<u8>(), mutate in any::<bool>()) {
        let mut row = JsObject::new();
        row.insert("type", JsValue::from("message"));
        row.insert("id", v.clone());
        row.insert("parentId", JsValue::from("p"));
        row.insert("message", v);
        let mut text = to_json_string(&JsValue::Object(row)).into_bytes();
        if mutate {
            let i = cut.index(text.len());
            text[i] = byte;
        }
        let scanned = EnvelopeScanner::new().scan(&text);
        let parsed = parse_value(&text);
        prop_assert_eq!(scanned.is_ok(), parsed.is_ok());
        if let (Ok(env), Ok(value)) = (scanned, parsed) {
            let field = |k: &str| match value.get(k) {
                None => Field::Absent,
                Some(JsValue::Null) => Field::Null,
                Some(JsValue::String(s)) => Field::Str(s.clone().into()),
                Some(_) => Field::Other,
            };
            prop_assert_eq!(env.id, field("id"));
            prop_assert_eq!(env.parent_id, field("parentId"));
            prop_assert_eq!(env.r#type, field("type"));
            let role = match value.get("message").and_then(|m| m.as_object()).map(|m| m.get("role")) {
                Some(Some(JsValue::Null)) => Field::Null,
                Some(Some(JsValue::String(s))) => Field::Str(s.clone().into()),
                Some(Some(_)) => Field::Other,
                _ => Field::Absent,
            };
            prop_assert_eq!(env.role, role);
        }
    }

    #[test]
    fn framing_reemits_any_buffer(buf in prop::collection::vec(prop::sample::select(vec![b'\n', b'\r', b'{', b'}', b'a', 0u8, 0xEF, 0xBB, 0xBF]), 0..200)) {
        let mut out = Vec::new();
        let mut count = 0;
        for l in lines(&buf) {
            out.extend_from_slice(l.bytes);
            if l.terminated { out.push(b'\n'); }
            count += 1;
            prop_assert_eq!(l.offset + l.bytes.len() + usize::from(l.terminated) <= buf.len(), true);
        }
        prop_assert_eq!(out, buf.clone());
        let newlines = buf.iter().filter(|&&b| b == b'\n').count();
        let expected = newlines + usize::from(buf.last().is_some_and(|&b| b != b'\n'));
        prop_assert_eq!(count, expected);
    }
}
