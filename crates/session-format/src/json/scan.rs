//! The envelope scan: validates a whole line as `JSON.parse` would and pulls out only the
//! top-level `type`, `id`, `parentId` and `appendMode` (and a message's `role`) without
//! building a tree.

use std::borrow::Cow;
use std::fmt;

use super::index::{Scalar, SkipString, StringIndex};
use super::parse::{Parser, decode_string_body};
use super::value::JsString;
use super::{JsonError, JsonErrorKind};

/// What a top-level JSON value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    /// `{...}`
    Object,
    /// `[...]`
    Array,
    /// `"..."`
    String,
    /// A number.
    Number,
    /// `true` or `false`.
    Bool,
    /// `null`.
    Null,
}

/// A decoded JSON string, borrowed from the line when it holds no escape (and is valid UTF-8),
/// else owned. Stored as WTF-8 like [`JsString`], so a lone surrogate (`"\udc00"`) is kept
/// exactly and two different lone surrogates stay different; [`JsStr::as_str`] gives the text
/// only when it is well formed, [`JsStr::to_str_lossy`] puts U+FFFD in place of lone surrogates.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct JsStr<'a> {
    /// WTF-8 bytes (valid UTF-8 except for encoded lone surrogates).
    wtf8: Cow<'a, [u8]>,
}

impl<'a> JsStr<'a> {
    /// The WTF-8 bytes (equal to the UTF-8 bytes for well-formed text).
    pub fn as_wtf8(&self) -> &[u8] {
        &self.wtf8
    }

    /// The text, when it holds no lone surrogate.
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.wtf8).ok()
    }

    /// The text with every lone surrogate replaced by U+FFFD.
    pub fn to_str_lossy(&self) -> Cow<'_, str> {
        match std::str::from_utf8(&self.wtf8) {
            Ok(s) => Cow::Borrowed(s),
            Err(_) => Cow::Owned(self.to_js_string().to_str_lossy().into_owned()),
        }
    }

    /// The string as a [`JsString`] (lossless).
    pub fn to_js_string(&self) -> JsString {
        JsString::from_wtf8_unchecked(self.wtf8.to_vec())
    }

    /// True for `""`.
    pub fn is_empty(&self) -> bool {
        self.wtf8.is_empty()
    }

    /// Detaches the string from the line it was read from.
    pub fn into_owned(self) -> JsStr<'static> {
        JsStr {
            wtf8: Cow::Owned(self.wtf8.into_owned()),
        }
    }
}

impl fmt::Debug for JsStr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_js_string(), f)
    }
}

impl<'a> From<&'a str> for JsStr<'a> {
    fn from(s: &'a str) -> Self {
        JsStr {
            wtf8: Cow::Borrowed(s.as_bytes()),
        }
    }
}

impl From<String> for JsStr<'static> {
    fn from(s: String) -> Self {
        JsStr {
            wtf8: Cow::Owned(s.into_bytes()),
        }
    }
}

impl From<JsString> for JsStr<'static> {
    fn from(s: JsString) -> Self {
        JsStr {
            wtf8: Cow::Owned(s.as_wtf8().to_vec()),
        }
    }
}

impl<'a> From<&'a JsString> for JsStr<'a> {
    fn from(s: &'a JsString) -> Self {
        JsStr {
            wtf8: Cow::Borrowed(s.as_wtf8()),
        }
    }
}

impl PartialEq<str> for JsStr<'_> {
    fn eq(&self, other: &str) -> bool {
        *self.wtf8 == *other.as_bytes()
    }
}

impl PartialEq<&str> for JsStr<'_> {
    fn eq(&self, other: &&str) -> bool {
        *self.wtf8 == *other.as_bytes()
    }
}

impl PartialEq<JsString> for JsStr<'_> {
    fn eq(&self, other: &JsString) -> bool {
        *self.wtf8 == *other.as_wtf8()
    }
}

/// One top-level property as the envelope sees it.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Field<'a> {
    /// The object has no such own property (or the value is not an object).
    #[default]
    Absent,
    /// The property is `null`.
    Null,
    /// The property is a string (decoded losslessly: lone surrogates are kept).
    Str(JsStr<'a>),
    /// The property holds a number, boolean, array or object.
    Other,
}

impl<'a> Field<'a> {
    /// The string value, if the field is a string without lone surrogates (a string holding
    /// one is never a known `type` or `role`; use [`Field::as_js_str`] for ids).
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Field::Str(s) => s.as_str(),
            _ => None,
        }
    }

    /// The string value (lossless), if the field is a string.
    pub fn as_js_str(&self) -> Option<&JsStr<'a>> {
        match self {
            Field::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The string value, if the field is a non-empty string without lone surrogates.
    pub fn non_empty_str(&self) -> Option<&str> {
        self.as_str().filter(|s| !s.is_empty())
    }

    /// True when the field is a non-empty string (lone surrogates allowed): a usable id.
    pub fn is_non_empty_str(&self) -> bool {
        matches!(self, Field::Str(s) if !s.is_empty())
    }

    /// True when the property exists (with any value).
    pub fn is_present(&self) -> bool {
        !matches!(self, Field::Absent)
    }

    /// Detaches the field from the line it was read from.
    pub fn into_owned(self) -> Field<'static> {
        match self {
            Field::Absent => Field::Absent,
            Field::Null => Field::Null,
            Field::Str(s) => Field::Str(s.into_owned()),
            Field::Other => Field::Other,
        }
    }
}

/// The cheap view of a parsed line: its top-level kind and the fields the index needs.
///
/// Duplicate keys resolve as in JavaScript: the last occurrence wins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Envelope<'a> {
    /// What the line's top-level value is.
    pub kind: ValueKind,
    /// Top-level `type`.
    pub r#type: Field<'a>,
    /// Top-level `id`.
    pub id: Field<'a>,
    /// Top-level `parentId`.
    pub parent_id: Field<'a>,
    /// `message.role`, when the top-level `message` is an object.
    pub role: Field<'a>,
    /// Top-level `appendMode` (OpenClaw's side appends, openclaw-jsonl.md §1.4).
    pub append_mode: Field<'a>,
}

impl Envelope<'_> {
    /// Detaches the envelope from the line it was read from.
    pub fn into_owned(self) -> Envelope<'static> {
        Envelope {
            kind: self.kind,
            r#type: self.r#type.into_owned(),
            id: self.id.into_owned(),
            parent_id: self.parent_id.into_owned(),
            role: self.role.into_owned(),
            append_mode: self.append_mode.into_owned(),
        }
    }
}

/// A reusable envelope scanner (it keeps a scratch stack and the line's structural index
/// between lines).
///
/// Strings are skipped with a structural index of the line (quote, backslash, control-byte and
/// bad-escape bitmasks per 64 bytes, built with SIMD compares): the end of a string is found with
/// `trailing_zeros` instead of a branch per byte. Errors are those of the byte-by-byte scan
/// ([`EnvelopeScanner::scan_scalar`]), kind and offset alike.
#[derive(Debug, Default)]
pub struct EnvelopeScanner {
    walk: Walk,
    index: StringIndex,
}

/// The value walker's scratch state.
#[derive(Debug, Default)]
struct Walk {
    stack: Vec<u8>,
    /// The deepest nesting `skip_value` reached since it was last reset.
    deepest: usize,
}

const IN_OBJECT: u8 = 0;
const IN_ARRAY: u8 = 1;

impl EnvelopeScanner {
    /// A new scanner.
    pub fn new() -> Self {
        Self::default()
    }

    /// Validates `input` as one JSON text (surrounding JSON whitespace allowed, no nesting
    /// limit) and returns its envelope.
    ///
    /// # Errors
    /// [`JsonError`] with the byte offset within `input` where the grammar breaks.
    pub fn scan<'a>(&mut self, input: &'a [u8]) -> Result<Envelope<'a>, JsonError> {
        self.index.build(input);
        self.walk.scan(&self.index, input)
    }

    /// [`EnvelopeScanner::scan`] with the byte-by-byte string skip: the reference the indexed
    /// scan is checked against (differential tests, fuzzing, benchmarks). Same results.
    ///
    /// # Errors
    /// As [`EnvelopeScanner::scan`].
    #[doc(hidden)]
    pub fn scan_scalar<'a>(&mut self, input: &'a [u8]) -> Result<Envelope<'a>, JsonError> {
        self.walk.scan(&Scalar, input)
    }

    /// Validates `input` as [`EnvelopeScanner::scan`] does and returns its top-level property
    /// `key` (the last occurrence wins; `Absent` when the value is not an object): one field
    /// without building a tree.
    ///
    /// # Errors
    /// As [`EnvelopeScanner::scan`], and [`JsonErrorKind::TooDeep`] (offset 0) when the text
    /// nests deeper than [`super::MAX_DEPTH`], exactly when [`super::parse_value`] refuses it,
    /// so a caller can fall back to a full parse with the same outcome.
    pub fn top_level_field<'a>(
        &mut self,
        input: &'a [u8],
        key: &[u8],
    ) -> Result<Field<'a>, JsonError> {
        self.index.build(input);
        self.walk.top_level_field(&self.index, input, key)
    }

    /// [`EnvelopeScanner::top_level_field`] with the byte-by-byte string skip (the reference).
    ///
    /// # Errors
    /// As [`EnvelopeScanner::top_level_field`].
    #[doc(hidden)]
    pub fn top_level_field_scalar<'a>(
        &mut self,
        input: &'a [u8],
        key: &[u8],
    ) -> Result<Field<'a>, JsonError> {
        self.walk.top_level_field(&Scalar, input, key)
    }
}

impl Walk {
    fn scan<'a, S: SkipString>(
        &mut self,
        s: &S,
        input: &'a [u8],
    ) -> Result<Envelope<'a>, JsonError> {
        let mut p = Parser { input, pos: 0 };
        p.skip_ws();
        let mut env = Envelope {
            kind: ValueKind::Null,
            r#type: Field::Absent,
            id: Field::Absent,
            parent_id: Field::Absent,
            role: Field::Absent,
            append_mode: Field::Absent,
        };
        if p.input.get(p.pos) == Some(&b'{') {
            env.kind = ValueKind::Object;
            p.pos += 1;
            p.skip_ws();
            if p.input.get(p.pos) == Some(&b'}') {
                p.pos += 1;
            } else {
                loop {
                    let key = member_key(s, &mut p)?;
                    p.skip_ws();
                    match key.as_ref() {
                        b"type" => env.r#type = self.field(s, &mut p)?,
                        b"id" => env.id = self.field(s, &mut p)?,
                        b"parentId" => env.parent_id = self.field(s, &mut p)?,
                        b"message" => env.role = self.message_role(s, &mut p)?,
                        b"appendMode" => env.append_mode = self.field(s, &mut p)?,
                        _ => self.skip_value(s, &mut p)?,
                    }
                    p.skip_ws();
                    match p.input.get(p.pos) {
                        Some(b',') => {
                            p.pos += 1;
                            p.skip_ws();
                        }
                        Some(b'}') => {
                            p.pos += 1;
                            break;
                        }
                        _ => return Err(eof_or(&p, JsonErrorKind::ExpectedCommaOrEnd)),
                    }
                }
            }
        } else {
            env.kind = match p.input.get(p.pos) {
                Some(b'[') => ValueKind::Array,
                Some(b'"') => ValueKind::String,
                Some(b't' | b'f') => ValueKind::Bool,
                Some(b'n') => ValueKind::Null,
                _ => ValueKind::Number,
            };
            self.skip_value(s, &mut p)?;
        }
        p.skip_ws();
        if p.pos != input.len() {
            return Err(p.error(JsonErrorKind::TrailingCharacters));
        }
        Ok(env)
    }

    fn top_level_field<'a, S: SkipString>(
        &mut self,
        s: &S,
        input: &'a [u8],
        key: &[u8],
    ) -> Result<Field<'a>, JsonError> {
        let mut p = Parser { input, pos: 0 };
        self.deepest = 0;
        p.skip_ws();
        let mut found = Field::Absent;
        if p.input.get(p.pos) == Some(&b'{') {
            p.pos += 1;
            p.skip_ws();
            if p.input.get(p.pos) == Some(&b'}') {
                p.pos += 1;
            } else {
                loop {
                    let k = member_key(s, &mut p)?;
                    p.skip_ws();
                    if k.as_ref() == key {
                        found = self.field(s, &mut p)?;
                    } else {
                        self.skip_value(s, &mut p)?;
                    }
                    p.skip_ws();
                    match p.input.get(p.pos) {
                        Some(b',') => {
                            p.pos += 1;
                            p.skip_ws();
                        }
                        Some(b'}') => {
                            p.pos += 1;
                            break;
                        }
                        _ => return Err(eof_or(&p, JsonErrorKind::ExpectedCommaOrEnd)),
                    }
                }
            }
            // The object itself is one level: a container `deepest` levels below it is at
            // depth `deepest + 1`.
            if self.deepest >= super::MAX_DEPTH {
                return Err(JsonError {
                    offset: 0,
                    kind: JsonErrorKind::TooDeep,
                });
            }
        } else {
            self.skip_value(s, &mut p)?;
            if self.deepest > super::MAX_DEPTH {
                return Err(JsonError {
                    offset: 0,
                    kind: JsonErrorKind::TooDeep,
                });
            }
        }
        p.skip_ws();
        if p.pos != input.len() {
            return Err(p.error(JsonErrorKind::TrailingCharacters));
        }
        Ok(found)
    }

    /// Reads a property value as a [`Field`].
    fn field<'a, S: SkipString>(
        &mut self,
        s: &S,
        p: &mut Parser<'a>,
    ) -> Result<Field<'a>, JsonError> {
        match p.input.get(p.pos) {
            Some(b'"') => {
                let (start, end, escaped) = s.skip_string(p)?;
                Ok(Field::Str(decode_field(&p.input[start..end], escaped)))
            }
            Some(b'n') => {
                self.skip_value(s, p)?;
                Ok(Field::Null)
            }
            _ => {
                self.skip_value(s, p)?;
                Ok(Field::Other)
            }
        }
    }

    /// Reads the `role` of a `message` object; any other value gives `Absent`.
    fn message_role<'a, S: SkipString>(
        &mut self,
        s: &S,
        p: &mut Parser<'a>,
    ) -> Result<Field<'a>, JsonError> {
        if p.input.get(p.pos) != Some(&b'{') {
            self.skip_value(s, p)?;
            return Ok(Field::Absent);
        }
        p.pos += 1;
        p.skip_ws();
        let mut role = Field::Absent;
        if p.input.get(p.pos) == Some(&b'}') {
            p.pos += 1;
            return Ok(role);
        }
        loop {
            let key = member_key(s, p)?;
            p.skip_ws();
            if key.as_ref() == b"role" {
                role = self.field(s, p)?;
            } else {
                self.skip_value(s, p)?;
            }
            p.skip_ws();
            match p.input.get(p.pos) {
                Some(b',') => {
                    p.pos += 1;
                    p.skip_ws();
                }
                Some(b'}') => {
                    p.pos += 1;
                    return Ok(role);
                }
                _ => return Err(eof_or(p, JsonErrorKind::ExpectedCommaOrEnd)),
            }
        }
    }

    /// Validates and skips one value, iteratively.
    fn skip_value<S: SkipString>(&mut self, s: &S, p: &mut Parser<'_>) -> Result<(), JsonError> {
        self.stack.clear();
        'value: loop {
            p.skip_ws();
            match p.input.get(p.pos) {
                Some(b'{') => {
                    p.pos += 1;
                    p.skip_ws();
                    if p.input.get(p.pos) == Some(&b'}') {
                        p.pos += 1;
                    } else {
                        skip_key(s, p)?;
                        self.stack.push(IN_OBJECT);
                        self.deepest = self.deepest.max(self.stack.len());
                        continue 'value;
                    }
                }
                Some(b'[') => {
                    p.pos += 1;
                    p.skip_ws();
                    if p.input.get(p.pos) == Some(&b']') {
                        p.pos += 1;
                    } else {
                        self.stack.push(IN_ARRAY);
                        self.deepest = self.deepest.max(self.stack.len());
                        continue 'value;
                    }
                }
                Some(b'"') => s.skip_string_only(p)?,
                Some(b'-' | b'0'..=b'9') => p.skip_number()?,
                Some(b't') => literal(p, b"true")?,
                Some(b'f') => literal(p, b"false")?,
                Some(b'n') => literal(p, b"null")?,
                _ => return Err(eof_or(p, JsonErrorKind::ExpectedValue)),
            }
            loop {
                let Some(&top) = self.stack.last() else {
                    return Ok(());
                };
                p.skip_ws();
                match (top, p.input.get(p.pos)) {
                    (_, Some(b',')) => {
                        p.pos += 1;
                        if top == IN_OBJECT {
                            p.skip_ws();
                            skip_key(s, p)?;
                        }
                        continue 'value;
                    }
                    (IN_OBJECT, Some(b'}')) | (IN_ARRAY, Some(b']')) => {
                        p.pos += 1;
                        self.stack.pop();
                    }
                    _ => return Err(eof_or(p, JsonErrorKind::ExpectedCommaOrEnd)),
                }
            }
        }
    }
}

/// Reads `"key" :` (a key the envelope does not read), with [`member_key`]'s errors.
#[inline(always)]
fn skip_key<S: SkipString>(s: &S, p: &mut Parser<'_>) -> Result<(), JsonError> {
    if p.input.get(p.pos) != Some(&b'"') {
        return Err(eof_or(p, JsonErrorKind::ExpectedKey));
    }
    s.skip_string_only(p)?;
    if p.input.get(p.pos) != Some(&b':') {
        p.skip_ws();
        if p.input.get(p.pos) != Some(&b':') {
            return Err(eof_or(p, JsonErrorKind::ExpectedColon));
        }
    }
    p.pos += 1;
    Ok(())
}

/// Reads `"key" :` and returns the key's bytes (decoded only when it holds escapes).
fn member_key<'a, S: SkipString>(s: &S, p: &mut Parser<'a>) -> Result<Cow<'a, [u8]>, JsonError> {
    if p.input.get(p.pos) != Some(&b'"') {
        return Err(eof_or(p, JsonErrorKind::ExpectedKey));
    }
    let (start, end, escaped) = s.skip_string(p)?;
    let key = if escaped {
        Cow::Owned(
            decode_string_body(&p.input[start..end], true)
                .as_wtf8()
                .to_vec(),
        )
    } else {
        Cow::Borrowed(&p.input[start..end])
    };
    p.skip_ws();
    if p.input.get(p.pos) != Some(&b':') {
        return Err(eof_or(p, JsonErrorKind::ExpectedColon));
    }
    p.pos += 1;
    Ok(key)
}

fn literal(p: &mut Parser<'_>, word: &[u8]) -> Result<(), JsonError> {
    if p.input.len() >= p.pos + word.len() && &p.input[p.pos..p.pos + word.len()] == word {
        p.pos += word.len();
        return Ok(());
    }
    // Point at the first differing byte.
    let same = word
        .iter()
        .zip(&p.input[p.pos..])
        .take_while(|(a, b)| a == b)
        .count();
    p.pos += same;
    Err(eof_or(p, JsonErrorKind::ExpectedValue))
}

fn eof_or(p: &Parser<'_>, kind: JsonErrorKind) -> JsonError {
    if p.pos >= p.input.len() {
        p.error(JsonErrorKind::UnexpectedEnd)
    } else {
        p.error(kind)
    }
}

/// Decodes a string field: borrowed when it is plain UTF-8 without escapes, else decoded to
/// WTF-8 (lone-surrogate escapes kept).
pub(super) fn decode_field(body: &[u8], escaped: bool) -> JsStr<'_> {
    if !escaped && std::str::from_utf8(body).is_ok() {
        return JsStr {
            wtf8: Cow::Borrowed(body),
        };
    }
    JsStr {
        wtf8: Cow::Owned(decode_string_body(body, escaped).as_wtf8().to_vec()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{JsValue, MAX_DEPTH, parse_value};

    fn field(input: &[u8], key: &[u8]) -> Result<Field<'static>, JsonError> {
        EnvelopeScanner::new()
            .top_level_field(input, key)
            .map(Field::into_owned)
    }

    /// `top_level_field` reads one top-level property as a full parse does: the last duplicate
    /// wins, escaped keys and values are decoded, nested keys and non-objects give `Absent`.
    #[test]
    fn top_level_field_reads_like_a_full_parse() {
        let ts = |s: &str| Field::Str(JsStr::from(s.to_owned()));
        assert_eq!(
            field(
                br#"{"a":{"timestamp":1},"timestamp":"x","timestamp":"y"}"#,
                b"timestamp"
            ),
            Ok(ts("y"))
        );
        assert_eq!(
            field(br#"{"time\u0073tamp":"a\nb"}"#, b"timestamp"),
            Ok(ts("a\nb"))
        );
        assert_eq!(
            field(br#"{"timestamp":null}"#, b"timestamp"),
            Ok(Field::Null)
        );
        assert_eq!(
            field(br#"{"timestamp":[1]}"#, b"timestamp"),
            Ok(Field::Other)
        );
        assert_eq!(
            field(br#"{"x":{"timestamp":"n"}}"#, b"timestamp"),
            Ok(Field::Absent)
        );
        assert_eq!(field(br#"["timestamp"]"#, b"timestamp"), Ok(Field::Absent));
        assert_eq!(
            field(br#"{"timestamp":"a"} x"#, b"timestamp").map_err(|e| e.kind),
            Err(JsonErrorKind::TrailingCharacters)
        );
    }

    /// It refuses exactly the texts too deep for `parse_value`, objects and arrays alike.
    #[test]
    fn top_level_field_is_too_deep_exactly_when_parse_value_is() {
        for depth in [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1] {
            // An object holding `depth - 1` nested arrays: `depth` levels in all.
            let inner = depth - 1;
            let obj = format!(
                r#"{{"timestamp":"t","a":{}1{}}}"#,
                "[".repeat(inner),
                "]".repeat(inner)
            );
            let arr = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
            for text in [obj, arr] {
                let parsed = parse_value(text.as_bytes()).map(|_| ()).map_err(|e| e.kind);
                let scanned = field(text.as_bytes(), b"timestamp")
                    .map(|_| ())
                    .map_err(|e| e.kind);
                assert_eq!(scanned, parsed, "depth {depth}: {}", &text[..20]);
            }
        }
        assert!(matches!(
            parse_value(
                format!(
                    "{}1{}",
                    "[".repeat(MAX_DEPTH + 1),
                    "]".repeat(MAX_DEPTH + 1)
                )
                .as_bytes()
            ),
            Err(JsonError {
                kind: JsonErrorKind::TooDeep,
                ..
            })
        ));
    }

    /// The envelope carries the top-level `appendMode` (last duplicate wins, escapes decoded),
    /// never a nested one.
    #[test]
    fn envelope_reads_append_mode() {
        let mode = |input: &[u8]| {
            EnvelopeScanner::new()
                .scan(input)
                .map(|e| e.append_mode.into_owned())
        };
        assert_eq!(
            mode(br#"{"appendMode":"x","appendMode":"side"}"#),
            Ok(Field::Str(JsStr::from("side")))
        );
        assert_eq!(
            mode(br#"{"append\u004dode":"\u0073ide"}"#),
            Ok(Field::Str(JsStr::from("side")))
        );
        assert_eq!(mode(br#"{"m":{"appendMode":"side"}}"#), Ok(Field::Absent));
        assert_eq!(mode(br#"{"appendMode":1}"#), Ok(Field::Other));
        let v = parse_value(br#"{"append\u004dode":"\u0073ide"}"#);
        assert_eq!(
            v.ok().and_then(|v| v.get("appendMode").cloned()),
            Some(JsValue::from("side"))
        );
    }

    /// String skipping: escapes across the 8-byte steps, control characters and cut-off
    /// escapes are reported where a full parse reports them.
    #[test]
    fn string_errors_match_parse_value() {
        let cases: [&[u8]; 9] = [
            br#""abcdefgh\"ijklmnop\\qrstuvwx\u00e9yz""#,
            b"\"abcdefghij\x01klm\"",
            b"\"abc\x1f\"",
            br#""abcdefghijkl\x""#,
            br#""abcdefghijkl\u12G4""#,
            br#""abcdefghijkl\u12"#,
            br#""abcdefghijklmnopqrstuvwxyz"#,
            br#""abcdefghijklmnopqrstuvwxyz\"#,
            "\"héllo wörld — ünïcödé 😀 text\"".as_bytes(),
        ];
        for c in cases {
            let scanned = EnvelopeScanner::new().scan(c).map(|_| ());
            let parsed = parse_value(c).map(|_| ());
            assert_eq!(scanned, parsed, "{}", String::from_utf8_lossy(c));
        }
    }
}
