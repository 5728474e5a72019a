//! Entry ids exactly as the file holds them. An id is any JavaScript string, so it may hold a
//! lone surrogate (`"\udc00"`): ids are kept as WTF-8 ([`JsString`]), compared and hashed by
//! those bytes (two different lone surrogates stay two ids), and written back from them (the
//! writer emits the same `\udxxx` escape). The lossy text (U+FFFD in place of a lone
//! surrogate) exists only for the `&str` views of the public API.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use session_format::json::{JsStr, JsString, JsValue};

/// One entry or opaque-row id. Cheap to clone (shared), as the indexes hold each id several
/// times.
#[derive(Clone)]
pub(crate) struct Id(Arc<Inner>);

/// 24 bytes, so that with the `Arc` counts an id takes a 48-byte allocator chunk (a 64-byte one
/// with an inline `Option<Box<str>>`), beside the bytes' own.
struct Inner {
    js: JsString,
    /// The lossy text, only for ids holding a lone surrogate (doubly boxed: a thin pointer).
    lossy: Option<Box<Box<str>>>,
}

impl Id {
    pub(crate) fn new(js: JsString) -> Self {
        // Ids are almost always ASCII: no UTF-8 validation for those.
        let lossy = (!js.as_wtf8().is_ascii() && js.as_str().is_none())
            .then(|| Box::new(js.to_str_lossy().into_owned().into_boxed_str()));
        Id(Arc::new(Inner { js, lossy }))
    }

    pub(crate) fn from_js_str(s: &JsStr<'_>) -> Self {
        Id::new(s.to_js_string())
    }

    /// True when both are the same shared id (one allocation), without reading the bytes:
    /// `true` implies equal ids, `false` says nothing.
    pub(crate) fn same(a: &Id, b: &Id) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }

    /// The WTF-8 bytes (the map key).
    pub(crate) fn as_bytes(&self) -> &[u8] {
        self.0.js.as_wtf8()
    }

    /// The exact id.
    pub(crate) fn js(&self) -> &JsString {
        &self.0.js
    }

    /// The text, lossy for ids holding a lone surrogate.
    pub(crate) fn text(&self) -> &str {
        match &self.0.lossy {
            Some(l) => l,
            None => self.0.js.as_str().unwrap_or_default(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.js.is_empty()
    }

    /// The id as a JSON string value (exact).
    pub(crate) fn to_value(&self) -> JsValue {
        JsValue::String(self.0.js.clone())
    }
}

impl From<&str> for Id {
    fn from(s: &str) -> Self {
        Id(Arc::new(Inner {
            js: JsString::from(s),
            lossy: None,
        }))
    }
}

impl From<String> for Id {
    fn from(s: String) -> Self {
        Id(Arc::new(Inner {
            js: JsString::from(s),
            lossy: None,
        }))
    }
}

impl From<JsString> for Id {
    fn from(js: JsString) -> Self {
        Id::new(js)
    }
}

impl PartialEq for Id {
    fn eq(&self, other: &Self) -> bool {
        // Shared ids (a row's `parentId` and the previous entry's id) compare without reading
        // the bytes.
        Arc::ptr_eq(&self.0, &other.0) || self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Id {}

impl Hash for Id {
    /// Hashes exactly as the `[u8]` it borrows as, so maps keyed by `Id` can be probed with
    /// bytes.
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_bytes().hash(state);
    }
}

impl Borrow<[u8]> for Id {
    fn borrow(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl PartialEq<str> for Id {
    fn eq(&self, other: &str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl fmt::Debug for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0.js, f)
    }
}

/// `Option<Id>` as a JSON value (`null` for `None`).
pub(crate) fn opt_value(id: Option<&Id>) -> JsValue {
    id.map_or(JsValue::Null, Id::to_value)
}

/// An entry id as a caller passes it to the manager (`branch`, `get_entry`, `get_branch`,
/// `append_label_change`, `append_compaction`'s `firstKeptEntryId`, …): either well-formed text
/// (`&str`, `&String`) or any JavaScript string exactly as a file holds it (`&JsString`, lone
/// surrogates included). Both convert with `.into()`, so a method taking
/// `impl Into<EntryId<'a>>` accepts either, and an optional id is `Option<EntryId<'a>>`
/// (`Some("id".into())`, `None`). The manager looks ids up and writes them back by their WTF-8
/// bytes, so an id read from a file and passed back as its `JsString` names the same entry
/// byte for byte (openclaw-jsonl.md §1.3 ids; the lossy `&str` view of such an id does not).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct EntryId<'a>(Repr<'a>);

#[derive(Clone, Copy, PartialEq, Eq)]
enum Repr<'a> {
    Text(&'a str),
    Js(&'a JsString),
}

impl<'a> EntryId<'a> {
    /// The id's WTF-8 bytes (its UTF-8 bytes when it holds no lone surrogate): what the
    /// indexes are keyed by.
    pub fn as_wtf8(&self) -> &'a [u8] {
        match self.0 {
            Repr::Text(s) => s.as_bytes(),
            Repr::Js(js) => js.as_wtf8(),
        }
    }

    /// The id as an owned [`JsString`] (exact).
    pub fn to_js_string(&self) -> JsString {
        match self.0 {
            Repr::Text(s) => JsString::from(s),
            Repr::Js(js) => js.clone(),
        }
    }

    /// The id as the indexes hold ids.
    pub(crate) fn to_id(self) -> Id {
        match self.0 {
            Repr::Text(s) => Id::from(s),
            Repr::Js(js) => Id::new(js.clone()),
        }
    }
}

impl<'a> From<&'a str> for EntryId<'a> {
    fn from(s: &'a str) -> Self {
        EntryId(Repr::Text(s))
    }
}

impl<'a> From<&'a String> for EntryId<'a> {
    fn from(s: &'a String) -> Self {
        EntryId(Repr::Text(s))
    }
}

impl<'a> From<&'a JsString> for EntryId<'a> {
    fn from(js: &'a JsString) -> Self {
        EntryId(Repr::Js(js))
    }
}

impl fmt::Debug for EntryId<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Repr::Text(s) => fmt::Debug::fmt(s, f),
            Repr::Js(js) => fmt::Debug::fmt(js, f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An id is one pointer, and its shared part 24 bytes (a 48-byte chunk with the counts).
    #[test]
    fn id_sizes_are_pinned() {
        assert_eq!(std::mem::size_of::<Id>(), 8);
        assert_eq!(std::mem::size_of::<Inner>(), 24);
    }

    /// Ids compare and hash by their WTF-8 bytes; the lossy text is only for the `&str` view.
    #[test]
    fn lone_surrogate_ids_keep_exact_bytes() {
        let a = Id::new(JsString::from_utf16(&[0x61, 0xDC00]));
        let b = Id::new(JsString::from_utf16(&[0x61, 0xDC01]));
        assert_ne!(a, b);
        assert_eq!(a.as_bytes(), b"a\xed\xb0\x80");
        assert_eq!(a.text(), "a\u{FFFD}");
        assert_eq!(b.text(), "a\u{FFFD}");
        let plain = Id::from("abc");
        assert_eq!(plain.text(), "abc");
        assert_eq!(plain.as_bytes(), b"abc");
        assert_eq!(plain, Id::new(JsString::from("abc")));
    }
}
