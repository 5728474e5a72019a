//! The output normalization of the op-script conformance format (`conformance/OPS.md`): fresh
//! ids, timestamps, paths and clock readings are replaced by stable placeholders so that outputs
//! of two implementations can be compared as text.

use std::collections::HashMap;

use crate::json::{JsValue, parse_value, to_json_string, write_number, write_string_pub};

/// One day in milliseconds: numbers this close to the run's clock become `"<now-ms>"`.
pub const NOW_WINDOW_MS: f64 = 86_400_000.0;

/// Normalizes an output value (steps 1–6 of OPS.md) and returns the final text:
///
/// 1. every occurrence of `dir` becomes `<dir>`;
/// 2. file-name timestamps `YYYY-MM-DDTHH-MM-SS-mmmZ_` become `<fts>_`;
/// 3. ISO timestamps `YYYY-MM-DDTHH:MM:SS.mmmZ` become `<ts>`;
/// 4. UUIDs and standalone 8-hex words become `#1`, `#2`, … by first appearance;
/// 5. numbers within a day of `now_ms` become `"<now-ms>"`;
/// 6. the value is printed as `JSON.stringify(x, null, 1)` plus a final newline.
///
/// # Errors
/// Only if step 4 produced text that no longer parses (it cannot for JSON input).
pub fn normalize_output(
    output: &JsValue,
    dir: Option<&str>,
    now_ms: f64,
) -> Result<String, crate::json::JsonError> {
    let text = normalize_text(&to_json_string(output), dir);
    let mut value = parse_value(text.as_bytes())?;
    replace_now(&mut value, now_ms);
    let mut out = Vec::new();
    write_indented(&value, 1, 0, &mut out);
    out.push(b'\n');
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Steps 1–4 on text.
pub fn normalize_text(text: &str, dir: Option<&str>) -> String {
    let mut s = match dir {
        Some(d) if !d.is_empty() => text.replace(d, "<dir>"),
        _ => text.to_owned(),
    };
    s = replace_pattern(&s, FTS_PATTERN, "<fts>_");
    s = replace_pattern(&s, TS_PATTERN, "<ts>");
    replace_ids(&s)
}

/// `d` digit, `-`/`:`/`.`/`T`/`Z`/`_` literal.
const FTS_PATTERN: &[u8] = b"dddd-dd-ddTdd-dd-dd-dddZ_";
const TS_PATTERN: &[u8] = b"dddd-dd-ddTdd:dd:dd.dddZ";

fn matches_at(s: &[u8], i: usize, pattern: &[u8]) -> bool {
    s.len() >= i + pattern.len()
        && pattern.iter().zip(&s[i..]).all(|(&p, &c)| {
            if p == b'd' {
                c.is_ascii_digit()
            } else {
                p == c
            }
        })
}

fn replace_pattern(s: &str, pattern: &[u8], with: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut last = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() && matches_at(b, i, pattern) {
            out.push_str(&s[last..i]);
            out.push_str(with);
            i += pattern.len();
            last = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&s[last..]);
    out
}

fn is_hex(c: u8) -> bool {
    c.is_ascii_digit() || (b'a'..=b'f').contains(&c)
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn hex_run(b: &[u8], i: usize, n: usize) -> bool {
    b.len() >= i + n && b[i..i + n].iter().all(|&c| is_hex(c))
}

/// Length of a UUID (`8-4-4-4-12` lowercase hex) at `i`, or of a standalone 8-hex word
/// (JavaScript `\b[0-9a-f]{8}\b`), or 0.
fn id_at(b: &[u8], i: usize) -> usize {
    let uuid = hex_run(b, i, 8)
        && b.get(i + 8) == Some(&b'-')
        && hex_run(b, i + 9, 4)
        && b.get(i + 13) == Some(&b'-')
        && hex_run(b, i + 14, 4)
        && b.get(i + 18) == Some(&b'-')
        && hex_run(b, i + 19, 4)
        && b.get(i + 23) == Some(&b'-')
        && hex_run(b, i + 24, 12);
    if uuid {
        return 36;
    }
    let starts_word = i == 0 || !is_word(b[i - 1]);
    let ends_word = b.get(i + 8).is_none_or(|&c| !is_word(c));
    if starts_word && hex_run(b, i, 8) && ends_word {
        8
    } else {
        0
    }
}

fn replace_ids(s: &str) -> String {
    let b = s.as_bytes();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut last = 0;
    while i < b.len() {
        let n = if is_hex(b[i]) { id_at(b, i) } else { 0 };
        if n == 0 {
            i += 1;
            continue;
        }
        out.push_str(&s[last..i]);
        let next = seen.len() + 1;
        let k = *seen.entry(&s[i..i + n]).or_insert(next);
        out.push('#');
        out.push_str(&k.to_string());
        i += n;
        last = i;
    }
    out.push_str(&s[last..]);
    out
}

fn replace_now(value: &mut JsValue, now_ms: f64) {
    match value {
        JsValue::Number(n) if (*n - now_ms).abs() <= NOW_WINDOW_MS => {
            *value = JsValue::from("<now-ms>");
        }
        JsValue::Array(items) => items.iter_mut().for_each(|v| replace_now(v, now_ms)),
        JsValue::Object(obj) => {
            let keys: Vec<String> = obj.keys().map(|k| k.to_str_lossy().into_owned()).collect();
            for k in keys {
                if let Some(v) = obj.get_mut(&k) {
                    replace_now(v, now_ms);
                }
            }
        }
        _ => {}
    }
}

/// `JSON.stringify(value, null, indent)`.
pub fn to_json_string_indented(value: &JsValue, indent: usize) -> String {
    let mut out = Vec::new();
    write_indented(value, indent, 0, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn write_indented(value: &JsValue, indent: usize, depth: usize, out: &mut Vec<u8>) {
    let pad = |out: &mut Vec<u8>, d: usize| {
        out.push(b'\n');
        out.extend(std::iter::repeat_n(b' ', indent * d));
    };
    match value {
        JsValue::Null => out.extend_from_slice(b"null"),
        JsValue::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        JsValue::Number(n) => write_number(*n, out),
        JsValue::String(s) => write_string_pub(s, out),
        JsValue::Array(items) if items.is_empty() => out.extend_from_slice(b"[]"),
        JsValue::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                pad(out, depth + 1);
                write_indented(item, indent, depth + 1, out);
            }
            pad(out, depth);
            out.push(b']');
        }
        JsValue::Object(obj) if obj.is_empty() => out.extend_from_slice(b"{}"),
        JsValue::Object(obj) => {
            out.push(b'{');
            for (i, (k, v)) in obj.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                pad(out, depth + 1);
                write_string_pub(k, out);
                out.extend_from_slice(b": ");
                write_indented(v, indent, depth + 1, out);
            }
            pad(out, depth);
            out.push(b'}');
        }
    }
}
