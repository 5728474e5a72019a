//! The JavaScript value model behind `JSON.parse` / `JSON.stringify`: numbers are doubles, strings
//! may hold lone surrogates, and object keys follow ECMAScript property order (pi-format.md §1.7).

use std::borrow::Cow;
use std::fmt;

use indexmap::IndexMap;

/// A string as JavaScript holds it: a sequence of UTF-16 code units, stored as WTF-8.
///
/// Well-formed text is plain UTF-8. A lone surrogate (which `JSON.parse` accepts from a `\uD800`
/// escape) is stored as its 3-byte generalised UTF-8 form, so it survives a parse and is written
/// back as the same escape. [`JsString::to_str_lossy`] gives text with U+FFFD in its place.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct JsString {
    /// WTF-8 bytes: valid UTF-8 except for encoded lone surrogates (`ED A0..BF xx`).
    bytes: Box<[u8]>,
}

impl JsString {
    /// Wraps well-formed text.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            bytes: text.into().into_bytes().into_boxed_slice(),
        }
    }

    /// Builds a string from WTF-8 bytes produced by this crate's decoder.
    pub(crate) fn from_wtf8_unchecked(bytes: Vec<u8>) -> Self {
        Self {
            bytes: bytes.into_boxed_slice(),
        }
    }

    /// Builds a string from UTF-16 code units (lone surrogates allowed).
    pub fn from_utf16(units: &[u16]) -> Self {
        let mut out = Vec::with_capacity(units.len());
        let mut i = 0;
        while i < units.len() {
            let u = units[i];
            if (0xD800..0xDC00).contains(&u)
                && i + 1 < units.len()
                && (0xDC00..0xE000).contains(&units[i + 1])
            {
                let cp = 0x10000 + (((u as u32) - 0xD800) << 10) + ((units[i + 1] as u32) - 0xDC00);
                push_code_point(&mut out, cp);
                i += 2;
            } else {
                push_code_point(&mut out, u as u32);
                i += 1;
            }
        }
        Self::from_wtf8_unchecked(out)
    }

    /// The WTF-8 bytes.
    pub fn as_wtf8(&self) -> &[u8] {
        &self.bytes
    }

    /// The text, when it holds no lone surrogate.
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.bytes).ok()
    }

    /// The text with every lone surrogate replaced by U+FFFD.
    pub fn to_str_lossy(&self) -> Cow<'_, str> {
        match std::str::from_utf8(&self.bytes) {
            Ok(s) => Cow::Borrowed(s),
            Err(_) => Cow::Owned(
                self.code_points()
                    .map(|cp| char::from_u32(cp).unwrap_or(char::REPLACEMENT_CHARACTER))
                    .collect(),
            ),
        }
    }

    /// True when the string holds a lone surrogate.
    pub fn has_lone_surrogate(&self) -> bool {
        self.as_str().is_none()
    }

    /// Length in UTF-16 code units (JavaScript's `length`).
    pub fn utf16_len(&self) -> usize {
        self.code_points()
            .map(|cp| if cp >= 0x10000 { 2 } else { 1 })
            .sum()
    }

    /// True for the empty string.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Iterates the code points, lone surrogates included (as values in `0xD800..0xE000`).
    pub fn code_points(&self) -> impl Iterator<Item = u32> + '_ {
        Wtf8CodePoints {
            bytes: &self.bytes,
            pos: 0,
        }
    }

    /// True when this key is an ECMAScript array index (`"0"`, or `[1-9][0-9]*` up to
    /// 4294967294). Such keys come first, ascending, in JavaScript property order.
    pub fn array_index(&self) -> Option<u32> {
        array_index(&self.bytes)
    }
}

/// Parses a canonical array index key.
fn array_index(bytes: &[u8]) -> Option<u32> {
    if bytes.is_empty() || bytes.len() > 10 {
        return None;
    }
    if bytes.len() > 1 && bytes[0] == b'0' {
        return None;
    }
    let mut value: u64 = 0;
    for &b in bytes {
        if !b.is_ascii_digit() {
            return None;
        }
        value = value * 10 + u64::from(b - b'0');
    }
    if value <= 4_294_967_294 {
        u32::try_from(value).ok()
    } else {
        None
    }
}

/// Appends a code point (surrogates included) in generalised UTF-8.
pub(crate) fn push_code_point(out: &mut Vec<u8>, cp: u32) {
    if cp < 0x80 {
        out.push(cp as u8);
    } else if cp < 0x800 {
        out.push(0xC0 | (cp >> 6) as u8);
        out.push(0x80 | (cp & 0x3F) as u8);
    } else if cp < 0x10000 {
        out.push(0xE0 | (cp >> 12) as u8);
        out.push(0x80 | ((cp >> 6) & 0x3F) as u8);
        out.push(0x80 | (cp & 0x3F) as u8);
    } else {
        out.push(0xF0 | (cp >> 18) as u8);
        out.push(0x80 | ((cp >> 12) & 0x3F) as u8);
        out.push(0x80 | ((cp >> 6) & 0x3F) as u8);
        out.push(0x80 | (cp & 0x3F) as u8);
    }
}

struct Wtf8CodePoints<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Iterator for Wtf8CodePoints<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        let b = &self.bytes[self.pos..];
        let first = *b.first()?;
        let (cp, len) = if first < 0x80 {
            (u32::from(first), 1)
        } else if first < 0xE0 {
            ((u32::from(first & 0x1F) << 6) | u32::from(b[1] & 0x3F), 2)
        } else if first < 0xF0 {
            (
                (u32::from(first & 0x0F) << 12)
                    | (u32::from(b[1] & 0x3F) << 6)
                    | u32::from(b[2] & 0x3F),
                3,
            )
        } else {
            (
                (u32::from(first & 0x07) << 18)
                    | (u32::from(b[1] & 0x3F) << 12)
                    | (u32::from(b[2] & 0x3F) << 6)
                    | u32::from(b[3] & 0x3F),
                4,
            )
        };
        self.pos += len;
        Some(cp)
    }
}

impl fmt::Debug for JsString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_str_lossy(), f)
    }
}

impl fmt::Display for JsString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_str_lossy())
    }
}

impl From<&str> for JsString {
    fn from(s: &str) -> Self {
        Self::new(s)
    }
}

impl From<String> for JsString {
    fn from(s: String) -> Self {
        Self::new(s)
    }
}

impl PartialEq<str> for JsString {
    fn eq(&self, other: &str) -> bool {
        &*self.bytes == other.as_bytes()
    }
}

impl PartialEq<&str> for JsString {
    fn eq(&self, other: &&str) -> bool {
        &*self.bytes == other.as_bytes()
    }
}

/// A JavaScript object created by `JSON.parse` or by building it in order: own enumerable
/// properties in ECMAScript order (array-index keys ascending first, then the other keys in
/// insertion order). Setting an existing key keeps its position.
#[derive(Clone, Default, PartialEq)]
pub struct JsObject {
    map: IndexMap<JsString, JsValue>,
    /// How many leading entries are array-index keys.
    index_keys: usize,
}

impl JsObject {
    /// An empty object.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of properties.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when there are no properties.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Sets a property the way JavaScript assignment does: an existing key keeps its position,
    /// a new array-index key goes into ascending position among the index keys, any other new
    /// key goes last.
    pub fn insert(&mut self, key: impl Into<JsString>, value: JsValue) {
        let key = key.into();
        if let Some(slot) = self.map.get_mut(&key) {
            *slot = value;
            return;
        }
        match key.array_index() {
            Some(index) => {
                let pos = self.map.as_slice()[..self.index_keys]
                    .partition_point(|k, _| k.array_index().is_some_and(|i| i < index));
                self.map.shift_insert(pos, key, value);
                self.index_keys += 1;
            }
            None => {
                self.map.insert(key, value);
            }
        }
    }

    /// Deletes a property (JavaScript `delete`), keeping the order of the others.
    pub fn remove(&mut self, key: &str) -> Option<JsValue> {
        let key = JsString::new(key);
        let (pos, _, value) = self.map.shift_remove_full(&key)?;
        if pos < self.index_keys {
            self.index_keys -= 1;
        }
        Some(value)
    }

    /// The value of a property.
    pub fn get(&self, key: &str) -> Option<&JsValue> {
        self.map.get(key.as_bytes())
    }

    /// Mutable access to a property's value.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut JsValue> {
        self.map.get_mut(key.as_bytes())
    }

    /// True when the object has this own property.
    pub fn contains_key(&self, key: &str) -> bool {
        self.map.contains_key(key.as_bytes())
    }

    /// The properties in ECMAScript order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&JsString, &JsValue)> {
        self.map.iter()
    }

    /// The keys in ECMAScript order.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &JsString> {
        self.map.keys()
    }

    /// A string property's text (lossy), when the property exists and is a string.
    pub fn get_str(&self, key: &str) -> Option<Cow<'_, str>> {
        match self.get(key) {
            Some(JsValue::String(s)) => Some(s.to_str_lossy()),
            _ => None,
        }
    }
}

impl std::borrow::Borrow<[u8]> for JsString {
    /// `JsString` hashes and compares exactly like its WTF-8 bytes (derived impls on the one
    /// field), so maps keyed by `JsString` can be probed with a byte slice.
    fn borrow(&self) -> &[u8] {
        &self.bytes
    }
}

impl fmt::Debug for JsObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.map.iter()).finish()
    }
}

impl FromIterator<(JsString, JsValue)> for JsObject {
    fn from_iter<I: IntoIterator<Item = (JsString, JsValue)>>(iter: I) -> Self {
        let mut obj = JsObject::new();
        for (k, v) in iter {
            obj.insert(k, v);
        }
        obj
    }
}

/// A value as `JSON.parse` produces it.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum JsValue {
    /// `null`.
    #[default]
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A double. `JSON.stringify` writes NaN and ±Infinity as `null` and -0 as `0`.
    Number(f64),
    /// A string.
    String(JsString),
    /// An array.
    Array(Vec<JsValue>),
    /// An object.
    Object(JsObject),
}

impl JsValue {
    /// The object, when this is one.
    pub fn as_object(&self) -> Option<&JsObject> {
        match self {
            JsValue::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The object, mutably, when this is one.
    pub fn as_object_mut(&mut self) -> Option<&mut JsObject> {
        match self {
            JsValue::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The string, when this is one.
    pub fn as_js_string(&self) -> Option<&JsString> {
        match self {
            JsValue::String(s) => Some(s),
            _ => None,
        }
    }

    /// The string's text (lossy), when this is a string.
    pub fn as_str_lossy(&self) -> Option<Cow<'_, str>> {
        self.as_js_string().map(JsString::to_str_lossy)
    }

    /// The number, when this is one.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            JsValue::Number(n) => Some(*n),
            _ => None,
        }
    }

    /// The array, when this is one.
    pub fn as_array(&self) -> Option<&Vec<JsValue>> {
        match self {
            JsValue::Array(a) => Some(a),
            _ => None,
        }
    }

    /// A property of an object value.
    pub fn get(&self, key: &str) -> Option<&JsValue> {
        self.as_object()?.get(key)
    }

    /// True for `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, JsValue::Null)
    }

    /// JavaScript truthiness (`!!value`).
    pub fn is_truthy(&self) -> bool {
        match self {
            JsValue::Null => false,
            JsValue::Bool(b) => *b,
            JsValue::Number(n) => *n != 0.0 && !n.is_nan(),
            JsValue::String(s) => !s.is_empty(),
            JsValue::Array(_) | JsValue::Object(_) => true,
        }
    }
}

impl From<&str> for JsValue {
    fn from(s: &str) -> Self {
        JsValue::String(JsString::new(s))
    }
}

impl From<String> for JsValue {
    fn from(s: String) -> Self {
        JsValue::String(JsString::new(s))
    }
}

impl From<JsString> for JsValue {
    fn from(s: JsString) -> Self {
        JsValue::String(s)
    }
}

impl From<f64> for JsValue {
    fn from(n: f64) -> Self {
        JsValue::Number(n)
    }
}

impl From<bool> for JsValue {
    fn from(b: bool) -> Self {
        JsValue::Bool(b)
    }
}

impl From<JsObject> for JsValue {
    fn from(o: JsObject) -> Self {
        JsValue::Object(o)
    }
}

impl From<Vec<JsValue>> for JsValue {
    fn from(a: Vec<JsValue>) -> Self {
        JsValue::Array(a)
    }
}

impl<T: Into<JsValue>> From<Option<T>> for JsValue {
    fn from(v: Option<T>) -> Self {
        v.map_or(JsValue::Null, Into::into)
    }
}

impl JsObject {
    /// The underlying ordered map iterator (for the writer).
    pub(crate) fn raw_iter(&self) -> indexmap::map::Iter<'_, JsString, JsValue> {
        self.map.iter()
    }
}
