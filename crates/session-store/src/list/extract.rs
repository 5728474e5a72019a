//! The targeted scan behind `list` (openclaw-jsonl.md §2.1 `buildSessionInfo`): reads the few
//! fields `list` needs from a `message` row — `message.content` (its text blocks),
//! `message.timestamp` and the row's `timestamp` — without building a tree.
//!
//! It walks a line the envelope scan has already validated, so it only finds boundaries:
//! strings are skipped with `memchr` for `"` (checking the backslashes before it), containers
//! by counting brackets outside strings. Keys are compared decoded (an escaped key such as `"t\u0065xt"` is `text`), and a
//! repeated key takes its last value, as in `JSON.parse`. Strings are decoded as
//! [`session_format::json::parse_value`] followed by `to_str_lossy` decodes them: invalid UTF-8
//! and lone surrogates become U+FFFD. Values `list` reads in an unusual shape (a non-string
//! `text`, say) are handed to `parse_value`, so the result is always the full parse's.

use session_format::json::{JsString, JsValue, parse_value};

use super::push_join_element;

/// Why the reference's `buildSessionInfo` throws on a row (the file is not listed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Throws;

/// What a `message` row whose `message` is an object with `role` `user` or `assistant` gives.
#[derive(Debug)]
pub(super) struct MessageFields {
    /// `message` has an own `content` property.
    pub has_content: bool,
    /// `extractTextContent(message)`, in [`Scratch::text`]; `Err` where it throws.
    pub text: Result<(), Throws>,
    /// `message.timestamp` when it is a number.
    pub message_time: Option<f64>,
    /// The row's `timestamp`, when it is a string and `message_time` is `None`: `Date.parse`
    /// of it (NaN when invalid).
    pub row_time: Option<f64>,
}

/// Buffers reused from row to row.
#[derive(Debug, Default)]
pub(super) struct Scratch {
    /// The text of the last `content` seen.
    pub text: String,
    /// A decoded timestamp string.
    date: String,
}

/// A byte span of the line (`start..end`).
type Span = (usize, usize);

/// Could `parse_value` refuse `json` as too deep? It needs a non-empty container inside
/// [`session_format::json::MAX_DEPTH`] others: more than that many `{`/`[` bytes and more than
/// twice as many bytes in all. A `true` here only sends the row down the full-parse path.
pub(super) fn may_be_too_deep(json: &[u8]) -> bool {
    let limit = session_format::json::MAX_DEPTH;
    json.len() > 2 * limit && memchr::memchr2_iter(b'{', b'[', json).nth(limit).is_some()
}

/// A cursor over one validated JSON line.
struct Walk<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Walk<'a> {
    #[inline]
    fn peek(&self) -> u8 {
        self.b.get(self.pos).copied().unwrap_or(0)
    }

    #[inline]
    fn skip_ws(&mut self) {
        while matches!(self.peek(), b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
    }

    /// At `"`: moves past the closing quote; returns the body span. The closing quote is the
    /// first `"` not preceded by an odd run of `\\` (escapes are skipped without stopping at
    /// each backslash: tool output holds one every few dozen bytes).
    #[inline]
    fn string(&mut self) -> Span {
        let start = self.pos + 1;
        let mut p = start;
        while let Some(i) = memchr::memchr(b'"', &self.b[p..]) {
            let q = p + i;
            let backslashes = self.b[start..q]
                .iter()
                .rev()
                .take_while(|&&c| c == b'\\')
                .count();
            if backslashes % 2 == 0 {
                self.pos = q + 1;
                return (start, q);
            }
            p = q + 1;
        }
        // Not reached on a validated line; stop at the end.
        self.pos = self.b.len();
        (start, self.b.len())
    }

    /// Skips one value (whitespace before it already skipped); returns its span.
    fn value(&mut self) -> Span {
        let start = self.pos;
        match self.peek() {
            b'"' => {
                self.string();
            }
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek() {
                        b'"' => {
                            self.string();
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.pos += 1;
                                break;
                            }
                        }
                        0 if self.pos >= self.b.len() => break,
                        _ => {}
                    }
                    self.pos += 1;
                }
            }
            _ => {
                // Number or literal: up to the next delimiter.
                while !matches!(
                    self.peek(),
                    b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'
                ) && self.pos < self.b.len()
                {
                    self.pos += 1;
                }
            }
        }
        (start, self.pos)
    }

    /// Walks the members of the object at the cursor (`{`), calling `member(key, walk)` with
    /// the cursor on each value; `member` must consume the value.
    fn object(&mut self, scratch: &mut String, mut member: impl FnMut(Key, &mut Self)) {
        self.pos += 1; // `{`
        loop {
            self.skip_ws();
            match self.peek() {
                b'"' => {}
                b',' => {
                    self.pos += 1;
                    continue;
                }
                _ => {
                    // `}` (or the end of a line that is not an object).
                    self.pos += 1;
                    return;
                }
            }
            let (s, e) = self.string();
            let key = Key::of(&self.b[s..e], scratch);
            self.skip_ws();
            self.pos += 1; // `:`
            self.skip_ws();
            member(key, self);
        }
    }
}

/// The object keys `list` looks at.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Key {
    Message,
    Timestamp,
    Content,
    Type,
    Text,
    Id,
    Cwd,
    ParentSession,
    Name,
    Version,
    Other,
}

impl Key {
    fn of(raw: &[u8], scratch: &mut String) -> Key {
        let name: &[u8] = if memchr::memchr(b'\\', raw).is_some() {
            scratch.clear();
            push_decoded(raw, scratch);
            scratch.as_bytes()
        } else {
            raw
        };
        match name {
            b"message" => Key::Message,
            b"timestamp" => Key::Timestamp,
            b"content" => Key::Content,
            b"type" => Key::Type,
            b"text" => Key::Text,
            b"id" => Key::Id,
            b"cwd" => Key::Cwd,
            b"parentSession" => Key::ParentSession,
            b"name" => Key::Name,
            b"version" => Key::Version,
            _ => Key::Other,
        }
    }
}

/// Reads a `message` row whose envelope says `message` is an object (with a string `role`).
/// `json` must be a line [`session_format::json::EnvelopeScanner`] accepted and that
/// [`may_be_too_deep`] does not flag.
pub(super) fn message_fields(json: &[u8], scratch: &mut Scratch) -> MessageFields {
    let mut w = Walk { b: json, pos: 0 };
    let mut key_buf = String::new();
    let mut out = MessageFields {
        has_content: false,
        text: Ok(()),
        message_time: None,
        row_time: None,
    };
    let mut row_time: Option<Span> = None;
    let mut message_time: Option<Span> = None;
    w.skip_ws();
    w.object(&mut key_buf, |key, w| match key {
        Key::Message if w.peek() == b'{' => {
            // A later `message` replaces an earlier one entirely.
            out.has_content = false;
            out.text = Ok(());
            message_time = None;
            let mut inner_key = String::new();
            w.object(&mut inner_key, |key, w| match key {
                Key::Content => {
                    out.has_content = true;
                    out.text = content_text(w, &mut scratch.text);
                }
                Key::Timestamp => message_time = Some(w.value()),
                _ => {
                    w.value();
                }
            });
        }
        Key::Timestamp => row_time = Some(w.value()),
        _ => {
            w.value();
        }
    });
    if let Some((s, e)) = message_time
        && matches!(json[s], b'-' | b'0'..=b'9')
    {
        out.message_time = std::str::from_utf8(&json[s..e])
            .ok()
            .and_then(|t| t.parse::<f64>().ok());
    }
    // The row's time is only read when `message.timestamp` is not a number.
    if out.message_time.is_none()
        && let Some((s, e)) = row_time
        && json[s] == b'"'
    {
        let body = &json[s + 1..e - 1];
        scratch.date.clear();
        push_decoded(body, &mut scratch.date);
        out.row_time = Some(
            session_format::time::parse_js_date(&scratch.date).map_or(f64::NAN, |ms| ms as f64),
        );
    }
    out
}

/// The top-level members of a header row that `list` reads (the last occurrence of each).
#[derive(Debug, Default)]
pub(super) struct HeaderFields {
    pub r#type: Option<JsValue>,
    pub id: Option<JsValue>,
    pub cwd: Option<JsValue>,
    pub parent_session: Option<JsValue>,
    pub timestamp: Option<JsValue>,
    pub version: Option<JsValue>,
}

/// Reads the header fields of `json`, a line the envelope scan accepted; `None` when it is not
/// an object or may be too deep for `parse_value` (the caller then parses it in full).
pub(super) fn header_fields(json: &[u8]) -> Option<HeaderFields> {
    let mut w = Walk { b: json, pos: 0 };
    w.skip_ws();
    if w.peek() != b'{' || may_be_too_deep(json) {
        return None;
    }
    let mut spans: [Option<Span>; 6] = [None; 6];
    let mut key_buf = String::new();
    w.object(&mut key_buf, |key, w| {
        let span = w.value();
        let slot = match key {
            Key::Type => 0,
            Key::Id => 1,
            Key::Cwd => 2,
            Key::ParentSession => 3,
            Key::Timestamp => 4,
            Key::Version => 5,
            _ => return,
        };
        spans[slot] = Some(span);
    });
    let [ty, id, cwd, parent_session, timestamp, version] =
        spans.map(|s| s.and_then(|s| value_of(json, s)));
    Some(HeaderFields {
        r#type: ty,
        id,
        cwd,
        parent_session,
        timestamp,
        version,
    })
}

/// The `name` of a `session_info` row (`None` when absent; the last occurrence), or `Err` when
/// the row may be too deep for `parse_value` (the caller then parses it in full).
pub(super) fn name_field(json: &[u8]) -> Result<Option<JsValue>, Throws> {
    if may_be_too_deep(json) {
        return Err(Throws);
    }
    let mut w = Walk { b: json, pos: 0 };
    w.skip_ws();
    let mut name = None;
    let mut key_buf = String::new();
    w.object(&mut key_buf, |key, w| {
        let span = w.value();
        if key == Key::Name {
            name = Some(span);
        }
    });
    Ok(name.and_then(|s| value_of(json, s)))
}

/// The value at `span`: a plain string directly, anything else through `parse_value`.
fn value_of(b: &[u8], (s, e): Span) -> Option<JsValue> {
    if b[s] == b'"' {
        let body = &b[s + 1..e - 1];
        if memchr::memchr(b'\\', body).is_none()
            && let Ok(text) = std::str::from_utf8(body)
        {
            return Some(JsValue::String(JsString::new(text)));
        }
    }
    parse_value(&b[s..e]).ok()
}

/// `extractTextContent(message)` of the `content` value at the cursor, into `text` (cleared
/// first); consumes the value.
fn content_text(w: &mut Walk<'_>, text: &mut String) -> Result<(), Throws> {
    text.clear();
    match w.peek() {
        b'"' => {
            let (s, e) = w.string();
            push_decoded(&w.b[s..e], text);
            Ok(())
        }
        b'[' => {
            w.pos += 1;
            let mut result = Ok(());
            let mut first = true;
            let mut key_buf = String::new();
            loop {
                w.skip_ws();
                match w.peek() {
                    b',' => {
                        w.pos += 1;
                        continue;
                    }
                    b']' => {
                        w.pos += 1;
                        return result;
                    }
                    b'{' => {
                        let mut ty: Option<Span> = None;
                        let mut value: Option<Span> = None;
                        w.object(&mut key_buf, |key, w| {
                            let span = w.value();
                            match key {
                                Key::Type => ty = Some(span),
                                Key::Text => value = Some(span),
                                _ => {}
                            }
                        });
                        if result.is_ok() && ty.is_some_and(|t| is_text_type(w.b, t)) {
                            if !first {
                                text.push(' ');
                            }
                            first = false;
                            if let Some(span) = value {
                                push_text_value(w.b, span, text);
                            }
                        }
                    }
                    b'n' => {
                        // `block.type` of `null` throws.
                        w.value();
                        result = Err(Throws);
                    }
                    0 if w.pos >= w.b.len() => return result,
                    _ => {
                        w.value();
                    }
                }
            }
        }
        _ => {
            // A number, boolean, object or `null`: `extractTextContent` throws.
            w.value();
            Err(Throws)
        }
    }
}

/// The `type` value at `span` is the string `"text"`.
fn is_text_type(b: &[u8], (s, e): Span) -> bool {
    if b[s] != b'"' {
        return false;
    }
    let body = &b[s + 1..e - 1];
    if body == b"text" {
        return true;
    }
    if memchr::memchr(b'\\', body).is_none() {
        return false;
    }
    let mut decoded = String::new();
    push_decoded(body, &mut decoded);
    decoded == "text"
}

/// Appends `String(value)` of a block's `text` as `Array.prototype.join` does.
fn push_text_value(b: &[u8], (s, e): Span, out: &mut String) {
    match b[s] {
        b'"' => {
            push_decoded(&b[s + 1..e - 1], out);
        }
        b'n' => {} // `null`
        _ => {
            // Numbers, booleans, arrays and objects: rare; convert the parsed value.
            if let Ok(v) = parse_value(&b[s..e]) {
                push_join_element(&v, out);
            }
        }
    }
}

/// Appends `JsString::to_str_lossy` of the decoded string body: escapes resolved (a
/// `\uD8xx\uDCxx` pair joined), lone surrogates and invalid UTF-8 as U+FFFD (the runs between
/// escapes are decoded one by one, as `parse_value` does).
fn push_decoded(body: &[u8], out: &mut String) {
    let mut i = 0;
    while i < body.len() {
        let Some(rel) = memchr::memchr(b'\\', &body[i..]) else {
            push_lossy(&body[i..], out);
            return;
        };
        push_lossy(&body[i..i + rel], out);
        i += rel + 1;
        let c = body[i];
        i += 1;
        match c {
            b'b' => out.push('\u{8}'),
            b'f' => out.push('\u{c}'),
            b'n' => out.push('\n'),
            b'r' => out.push('\r'),
            b't' => out.push('\t'),
            b'u' => {
                let unit = hex4(&body[i..i + 4]);
                i += 4;
                if (0xD800..0xDC00).contains(&unit)
                    && body.len() >= i + 6
                    && body[i] == b'\\'
                    && body[i + 1] == b'u'
                {
                    let low = hex4(&body[i + 2..i + 6]);
                    if (0xDC00..0xE000).contains(&low) {
                        let cp = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                        out.push(char::from_u32(cp).unwrap_or(char::REPLACEMENT_CHARACTER));
                        i += 6;
                        continue;
                    }
                }
                out.push(char::from_u32(unit).unwrap_or(char::REPLACEMENT_CHARACTER));
            }
            // `"`, `\\` and `/` stand for themselves.
            other => out.push(char::from(other)),
        }
    }
}

fn push_lossy(bytes: &[u8], out: &mut String) {
    match std::str::from_utf8(bytes) {
        Ok(s) => out.push_str(s),
        Err(_) => out.push_str(&String::from_utf8_lossy(bytes)),
    }
}

fn hex4(digits: &[u8]) -> u32 {
    digits.iter().fold(0, |acc, &d| {
        let v = match d {
            b'0'..=b'9' => d - b'0',
            b'a'..=b'f' => d - b'a' + 10,
            _ => d - b'A' + 10,
        };
        (acc << 4) | u32::from(v)
    })
}
