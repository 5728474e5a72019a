//! `JSON.stringify` (no indentation): ECMAScript number text, well-formed string escaping,
//! properties in the object's ECMAScript order (pi-format.md §1.7).

use super::value::{JsObject, JsString, JsValue};

/// Writes `value` as `JSON.stringify(value)` would, appending to `out`.
///
/// The output is always valid UTF-8: lone surrogates are written as lowercase `\udxxx` escapes.
/// Nesting depth is not limited (the writer is iterative).
pub fn write_value(value: &JsValue, out: &mut Vec<u8>) {
    enum Open<'a> {
        Array(std::slice::Iter<'a, JsValue>, bool),
        Object(indexmap::map::Iter<'a, JsString, JsValue>, bool),
    }
    let mut stack: Vec<Open<'_>> = Vec::new();
    let mut next = Some(value);
    loop {
        if let Some(v) = next.take() {
            match v {
                JsValue::Null => out.extend_from_slice(b"null"),
                JsValue::Bool(true) => out.extend_from_slice(b"true"),
                JsValue::Bool(false) => out.extend_from_slice(b"false"),
                JsValue::Number(n) => write_number(*n, out),
                JsValue::String(s) => write_string(s.as_wtf8(), out),
                JsValue::Array(items) => {
                    out.push(b'[');
                    stack.push(Open::Array(items.iter(), true));
                }
                JsValue::Object(obj) => {
                    out.push(b'{');
                    stack.push(Open::Object(object_iter(obj), true));
                }
            }
        }
        let Some(top) = stack.last_mut() else { return };
        match top {
            Open::Array(iter, first) => match iter.next() {
                Some(item) => {
                    if !*first {
                        out.push(b',');
                    }
                    *first = false;
                    next = Some(item);
                }
                None => {
                    out.push(b']');
                    stack.pop();
                }
            },
            Open::Object(iter, first) => match iter.next() {
                Some((key, item)) => {
                    if !*first {
                        out.push(b',');
                    }
                    *first = false;
                    write_string(key.as_wtf8(), out);
                    out.push(b':');
                    next = Some(item);
                }
                None => {
                    out.push(b'}');
                    stack.pop();
                }
            },
        }
    }
}

fn object_iter(obj: &JsObject) -> indexmap::map::Iter<'_, JsString, JsValue> {
    obj.raw_iter()
}

/// `JSON.stringify(value)` as a `String`.
pub fn to_json_string(value: &JsValue) -> String {
    let mut out = Vec::new();
    write_value(value, &mut out);
    // The writer escapes lone surrogates and copies only UTF-8 text otherwise.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Writes a number as ECMAScript `Number::toString` does inside `JSON.stringify`: shortest
/// round-trip digits, fixed notation for 1e-7 <= |x| < 1e21, `1e+21` style exponents, `0` for
/// -0, and `null` for NaN and the infinities.
pub fn write_number(n: f64, out: &mut Vec<u8>) {
    if !n.is_finite() {
        out.extend_from_slice(b"null");
        return;
    }
    let mut buf = ryu_js::Buffer::new();
    out.extend_from_slice(buf.format_finite(n).as_bytes());
}

/// ECMAScript number text for `n` (`NaN`, `Infinity` for the non-finite values, as `String(n)`).
pub fn number_to_string(n: f64) -> String {
    let mut buf = ryu_js::Buffer::new();
    buf.format(n).to_owned()
}

/// Bytes that need attention in a string body: controls, `"`, `\`, and 0xED (which starts a
/// WTF-8 surrogate when followed by 0xA0..=0xBF).
static NEEDS_CARE: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = true;
        i += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t[0xED] = true;
    t
};

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Writes a quoted, escaped string from WTF-8 bytes.
pub(crate) fn write_string(bytes: &[u8], out: &mut Vec<u8>) {
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if !NEEDS_CARE[b as usize] {
            i += 1;
            continue;
        }
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            0x0C => b"\\f",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0xED => {
                // U+D000..U+D7FF are ordinary (second byte 0x80..=0x9F); only surrogates escape.
                if i + 2 < bytes.len() && bytes[i + 1] >= 0xA0 {
                    out.extend_from_slice(&bytes[start..i]);
                    let cp = (u32::from(b & 0x0F) << 12)
                        | (u32::from(bytes[i + 1] & 0x3F) << 6)
                        | u32::from(bytes[i + 2] & 0x3F);
                    out.extend_from_slice(b"\\u");
                    for shift in [12u32, 8, 4, 0] {
                        out.push(HEX[((cp >> shift) & 0xF) as usize]);
                    }
                    i += 3;
                    start = i;
                } else {
                    i += 1;
                }
                continue;
            }
            _ => {
                out.extend_from_slice(&bytes[start..i]);
                out.extend_from_slice(b"\\u00");
                out.push(HEX[(b >> 4) as usize]);
                out.push(HEX[(b & 0xF) as usize]);
                i += 1;
                start = i;
                continue;
            }
        };
        out.extend_from_slice(&bytes[start..i]);
        out.extend_from_slice(escape);
        i += 1;
        start = i;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Writes a Rust string quoted and escaped as `JSON.stringify` writes it: the bytes
/// [`write_string_pub`] writes for `JsString::new(s)` (UTF-8 holds no lone surrogate), without
/// building the `JsString`.
pub fn write_str(s: &str, out: &mut Vec<u8>) {
    write_string(s.as_bytes(), out);
}

/// Writes a quoted, escaped JavaScript string (as `JSON.stringify` does).
pub fn write_string_pub(s: &JsString, out: &mut Vec<u8>) {
    write_string(s.as_wtf8(), out);
}
