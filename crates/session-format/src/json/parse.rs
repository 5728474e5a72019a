//! `JSON.parse` over bytes: strict RFC 8259 syntax, no nesting limit (the parse is iterative),
//! lone-surrogate escapes kept, invalid UTF-8 inside strings read as U+FFFD (as Node decodes a
//! file before parsing it), duplicate keys resolved as JavaScript does.

use super::value::{JsObject, JsString, JsValue, push_code_point};
use super::{JsonError, JsonErrorKind};

/// The deepest nesting [`parse_value`] builds a tree for. Deeper text is still valid JSON: the
/// envelope scan accepts any depth, so the line is indexed and kept verbatim; only its full parse
/// fails. The limit keeps every recursive operation on a tree (clone, comparison, drop, serde
/// conversion, `Debug`) within a 2 MiB thread stack even in debug builds (measured: the tightest,
/// `from_value`, overflows at about 1,400 levels there). OpenClaw 2026.6.11 parses deeper lines
/// but fails with a `RangeError` at about 5,000 levels.
pub const MAX_DEPTH: usize = 1000;

/// Parses one JSON text (surrounding JSON whitespace allowed) into a [`JsValue`].
///
/// Nesting is limited to [`MAX_DEPTH`] arrays and objects.
///
/// # Errors
/// [`JsonError`] with the byte offset (within `input`) of the first byte that breaks the JSON
/// grammar, or of the end of input when the text is cut short.
pub fn parse_value(input: &[u8]) -> Result<JsValue, JsonError> {
    let mut p = Parser { input, pos: 0 };
    let value = p.value()?;
    p.skip_ws();
    if p.pos != input.len() {
        return Err(p.error(JsonErrorKind::TrailingCharacters));
    }
    Ok(value)
}

enum Frame {
    Array(Vec<JsValue>),
    Object(JsObject, JsString),
}

pub(crate) struct Parser<'a> {
    pub(crate) input: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> Parser<'a> {
    pub(crate) fn error(&self, kind: JsonErrorKind) -> JsonError {
        JsonError {
            offset: self.pos,
            kind,
        }
    }

    fn eof_or(&self, kind: JsonErrorKind) -> JsonError {
        if self.pos >= self.input.len() {
            self.error(JsonErrorKind::UnexpectedEnd)
        } else {
            self.error(kind)
        }
    }

    #[inline]
    pub(crate) fn skip_ws(&mut self) {
        while let Some(&b) = self.input.get(self.pos) {
            if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.input.get(self.pos).copied()
    }

    /// Parses a whole value iteratively.
    fn value(&mut self) -> Result<JsValue, JsonError> {
        let mut stack: Vec<Frame> = Vec::new();
        'value: loop {
            self.skip_ws();
            // Parse the start of a value; containers push a frame and continue.
            let mut done = match self.peek() {
                Some(b'{') => {
                    self.pos += 1;
                    self.skip_ws();
                    if self.peek() == Some(b'}') {
                        self.pos += 1;
                        JsValue::Object(JsObject::new())
                    } else {
                        if stack.len() >= MAX_DEPTH {
                            return Err(self.error(JsonErrorKind::TooDeep));
                        }
                        let key = self.object_key()?;
                        stack.push(Frame::Object(JsObject::new(), key));
                        continue 'value;
                    }
                }
                Some(b'[') => {
                    self.pos += 1;
                    self.skip_ws();
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                        JsValue::Array(Vec::new())
                    } else {
                        if stack.len() >= MAX_DEPTH {
                            return Err(self.error(JsonErrorKind::TooDeep));
                        }
                        stack.push(Frame::Array(Vec::new()));
                        continue 'value;
                    }
                }
                _ => self.scalar()?,
            };
            // Attach the finished value to its container, closing containers as they end.
            loop {
                match stack.pop() {
                    None => return Ok(done),
                    Some(Frame::Array(mut items)) => {
                        items.push(done);
                        self.skip_ws();
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                stack.push(Frame::Array(items));
                                continue 'value;
                            }
                            Some(b']') => {
                                self.pos += 1;
                                done = JsValue::Array(items);
                            }
                            _ => return Err(self.eof_or(JsonErrorKind::ExpectedCommaOrEnd)),
                        }
                    }
                    Some(Frame::Object(mut obj, key)) => {
                        obj.insert(key, done);
                        self.skip_ws();
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                self.skip_ws();
                                let key = self.object_key()?;
                                stack.push(Frame::Object(obj, key));
                                continue 'value;
                            }
                            Some(b'}') => {
                                self.pos += 1;
                                done = JsValue::Object(obj);
                            }
                            _ => return Err(self.eof_or(JsonErrorKind::ExpectedCommaOrEnd)),
                        }
                    }
                }
            }
        }
    }

    /// Parses `"key" :` (whitespace before the key already skipped).
    fn object_key(&mut self) -> Result<JsString, JsonError> {
        if self.peek() != Some(b'"') {
            return Err(self.eof_or(JsonErrorKind::ExpectedKey));
        }
        let key = self.string()?;
        self.skip_ws();
        if self.peek() != Some(b':') {
            return Err(self.eof_or(JsonErrorKind::ExpectedColon));
        }
        self.pos += 1;
        Ok(key)
    }

    fn scalar(&mut self) -> Result<JsValue, JsonError> {
        match self.peek() {
            Some(b'"') => Ok(JsValue::String(self.string()?)),
            Some(b't') => self.literal(b"true", JsValue::Bool(true)),
            Some(b'f') => self.literal(b"false", JsValue::Bool(false)),
            Some(b'n') => self.literal(b"null", JsValue::Null),
            Some(b'-' | b'0'..=b'9') => {
                let start = self.pos;
                self.skip_number()?;
                let text = &self.input[start..self.pos];
                // The grammar was checked, so the text is ASCII and Rust's correctly rounded
                // parser gives the same double as ECMAScript's.
                let n = std::str::from_utf8(text)
                    .ok()
                    .and_then(|t| t.parse::<f64>().ok())
                    .ok_or(JsonError {
                        offset: start,
                        kind: JsonErrorKind::InvalidNumber,
                    })?;
                Ok(JsValue::Number(n))
            }
            _ => Err(self.eof_or(JsonErrorKind::ExpectedValue)),
        }
    }

    fn literal(&mut self, word: &[u8], value: JsValue) -> Result<JsValue, JsonError> {
        for &expected in word {
            if self.peek() != Some(expected) {
                return Err(self.eof_or(JsonErrorKind::ExpectedValue));
            }
            self.pos += 1;
        }
        Ok(value)
    }

    /// Checks the number grammar `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    pub(crate) fn skip_number(&mut self) -> Result<(), JsonError> {
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.skip_digits(),
            _ => return Err(self.eof_or(JsonErrorKind::InvalidNumber)),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.eof_or(JsonErrorKind::InvalidNumber));
            }
            self.skip_digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.eof_or(JsonErrorKind::InvalidNumber));
            }
            self.skip_digits();
        }
        Ok(())
    }

    #[inline]
    fn skip_digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
    }

    /// Finds the end of the string starting at `self.pos` (which is `"`), checking escapes and
    /// control characters. Returns the body span and whether it holds an escape. Leaves
    /// `self.pos` after the closing quote (at the offending byte on error).
    ///
    /// Plain runs are skipped 8 bytes at a time ([`special_mask`]); escapes are checked in the
    /// same loop, without leaving it, since tool output holds one every few dozen bytes.
    #[inline]
    pub(crate) fn skip_string(&mut self) -> Result<(usize, usize, bool), JsonError> {
        let input = self.input;
        let start = self.pos + 1;
        let mut pos = start;
        let mut escaped = false;
        loop {
            // Find the next `"`, `\\` or control character.
            let hit = loop {
                if let Some(chunk) = input.get(pos..pos + 8) {
                    let mut lanes = [0u8; 8];
                    lanes.copy_from_slice(chunk);
                    let mask = special_mask(u64::from_le_bytes(lanes));
                    if mask != 0 {
                        break pos + (mask.trailing_zeros() / 8) as usize;
                    }
                    pos += 8;
                } else {
                    let rest = input.get(pos..).unwrap_or_default();
                    match rest
                        .iter()
                        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                    {
                        Some(k) => break pos + k,
                        None => {
                            self.pos = input.len();
                            return Err(self.error(JsonErrorKind::UnexpectedEnd));
                        }
                    }
                }
            };
            match input[hit] {
                b'"' => {
                    self.pos = hit + 1;
                    return Ok((start, hit, escaped));
                }
                b'\\' => {}
                _ => {
                    self.pos = hit;
                    return Err(self.error(JsonErrorKind::ControlCharacterInString));
                }
            }
            escaped = true;
            match input.get(hit + 1) {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => pos = hit + 2,
                Some(b'u') => {
                    pos = hit + 2;
                    for _ in 0..4 {
                        if !input.get(pos).is_some_and(u8::is_ascii_hexdigit) {
                            self.pos = pos;
                            return Err(self.eof_or(JsonErrorKind::InvalidEscape));
                        }
                        pos += 1;
                    }
                }
                _ => {
                    self.pos = hit + 1;
                    return Err(self.eof_or(JsonErrorKind::InvalidEscape));
                }
            }
        }
    }

    /// Parses a string value.
    fn string(&mut self) -> Result<JsString, JsonError> {
        let (start, end, escaped) = self.skip_string()?;
        Ok(decode_string_body(&self.input[start..end], escaped))
    }
}

/// The lanes of `x` (8 bytes, little-endian) that end a plain run inside a string: `"`, `\\`,
/// or a control character below 0x20; each such lane has its high bit set in the result, other
/// lanes are 0 up to the lowest flagged lane (SWAR: for each byte lane, `v - 0x01` borrows into
/// the high bit only when the lane is zero, or when a lower lane borrowed, which can only
/// happen after the first real match, so the lowest flagged lane is exact).
#[inline(always)]
fn special_mask(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let quote = x ^ (ONES * u64::from(b'"'));
    let backslash = x ^ (ONES * u64::from(b'\\'));
    let zero_lane = |v: u64| v.wrapping_sub(ONES) & !v;
    let control = x.wrapping_sub(ONES * 0x20) & !x;
    (zero_lane(quote) | zero_lane(backslash) | control) & HIGHS
}

/// Decodes a string body already checked by `skip_string`: escapes resolved (surrogate pairs
/// joined, lone surrogates kept), invalid UTF-8 replaced by U+FFFD.
pub(crate) fn decode_string_body(body: &[u8], escaped: bool) -> JsString {
    if !escaped {
        return match std::str::from_utf8(body) {
            Ok(s) => JsString::new(s),
            Err(_) => JsString::new(String::from_utf8_lossy(body).into_owned()),
        };
    }
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        let Some(rel) = memchr::memchr(b'\\', &body[i..]) else {
            push_lossy(&mut out, &body[i..]);
            break;
        };
        push_lossy(&mut out, &body[i..i + rel]);
        i += rel + 1;
        let c = body[i];
        i += 1;
        match c {
            b'"' => out.push(b'"'),
            b'\\' => out.push(b'\\'),
            b'/' => out.push(b'/'),
            b'b' => out.push(0x08),
            b'f' => out.push(0x0C),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            _ => {
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
                        push_code_point(&mut out, cp);
                        i += 6;
                        continue;
                    }
                }
                push_code_point(&mut out, unit);
            }
        }
    }
    JsString::from_wtf8_unchecked(out)
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

fn push_lossy(out: &mut Vec<u8>, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(s) => out.extend_from_slice(s.as_bytes()),
        Err(_) => out.extend_from_slice(String::from_utf8_lossy(bytes).as_bytes()),
    }
}
