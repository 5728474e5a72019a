//! The envelope scan: validates a whole line as `JSON.parse` would and pulls out only the
//! top-level `type`, `id` and `parentId` (and a message's `role`) without building a tree.

use std::borrow::Cow;

use super::parse::{Parser, decode_string_body};
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

/// One top-level property as the envelope sees it.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Field<'a> {
    /// The object has no such own property (or the value is not an object).
    #[default]
    Absent,
    /// The property is `null`.
    Null,
    /// The property is a string (decoded; lone surrogates read as U+FFFD).
    Str(Cow<'a, str>),
    /// The property holds a number, boolean, array or object.
    Other,
}

impl<'a> Field<'a> {
    /// The string value, if the field is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Field::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The string value, if the field is a non-empty string.
    pub fn non_empty_str(&self) -> Option<&str> {
        self.as_str().filter(|s| !s.is_empty())
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
            Field::Str(s) => Field::Str(Cow::Owned(s.into_owned())),
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
        }
    }
}

/// A reusable envelope scanner (it keeps a scratch stack between lines).
#[derive(Debug, Default)]
pub struct EnvelopeScanner {
    stack: Vec<u8>,
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
        let mut p = Parser { input, pos: 0 };
        p.skip_ws();
        let mut env = Envelope {
            kind: ValueKind::Null,
            r#type: Field::Absent,
            id: Field::Absent,
            parent_id: Field::Absent,
            role: Field::Absent,
        };
        if p.input.get(p.pos) == Some(&b'{') {
            env.kind = ValueKind::Object;
            p.pos += 1;
            p.skip_ws();
            if p.input.get(p.pos) == Some(&b'}') {
                p.pos += 1;
            } else {
                loop {
                    let key = member_key(&mut p)?;
                    p.skip_ws();
                    match key.as_ref() {
                        b"type" => env.r#type = self.field(&mut p)?,
                        b"id" => env.id = self.field(&mut p)?,
                        b"parentId" => env.parent_id = self.field(&mut p)?,
                        b"message" => env.role = self.message_role(&mut p)?,
                        _ => self.skip_value(&mut p)?,
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
            self.skip_value(&mut p)?;
        }
        p.skip_ws();
        if p.pos != input.len() {
            return Err(p.error(JsonErrorKind::TrailingCharacters));
        }
        Ok(env)
    }

    /// Reads a property value as a [`Field`].
    fn field<'a>(&mut self, p: &mut Parser<'a>) -> Result<Field<'a>, JsonError> {
        match p.input.get(p.pos) {
            Some(b'"') => {
                let (start, end, escaped) = p.skip_string()?;
                Ok(Field::Str(decode_field(&p.input[start..end], escaped)))
            }
            Some(b'n') => {
                self.skip_value(p)?;
                Ok(Field::Null)
            }
            _ => {
                self.skip_value(p)?;
                Ok(Field::Other)
            }
        }
    }

    /// Reads the `role` of a `message` object; any other value gives `Absent`.
    fn message_role<'a>(&mut self, p: &mut Parser<'a>) -> Result<Field<'a>, JsonError> {
        if p.input.get(p.pos) != Some(&b'{') {
            self.skip_value(p)?;
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
            let key = member_key(p)?;
            p.skip_ws();
            if key.as_ref() == b"role" {
                role = self.field(p)?;
            } else {
                self.skip_value(p)?;
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
    fn skip_value(&mut self, p: &mut Parser<'_>) -> Result<(), JsonError> {
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
                        member_key(p)?;
                        self.stack.push(IN_OBJECT);
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
                        continue 'value;
                    }
                }
                Some(b'"') => {
                    p.skip_string()?;
                }
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
                            member_key(p)?;
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

/// Reads `"key" :` and returns the key's bytes (decoded only when it holds escapes).
fn member_key<'a>(p: &mut Parser<'a>) -> Result<Cow<'a, [u8]>, JsonError> {
    if p.input.get(p.pos) != Some(&b'"') {
        return Err(eof_or(p, JsonErrorKind::ExpectedKey));
    }
    let (start, end, escaped) = p.skip_string()?;
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

/// Decodes a string field: borrowed when it is plain UTF-8 without escapes.
fn decode_field(body: &[u8], escaped: bool) -> Cow<'_, str> {
    if !escaped && let Ok(s) = std::str::from_utf8(body) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(
        decode_string_body(body, escaped)
            .to_str_lossy()
            .into_owned(),
    )
}
