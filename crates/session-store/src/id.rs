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

struct Inner {
    js: JsString,
    /// The lossy text, only for ids holding a lone surrogate.
    lossy: Option<Box<str>>,
}

impl Id {
    pub(crate) fn new(js: JsString) -> Self {
        let lossy = js
            .as_str()
            .is_none()
            .then(|| js.to_str_lossy().into_owned().into_boxed_str());
        Id(Arc::new(Inner { js, lossy }))
    }

    pub(crate) fn from_js_str(s: &JsStr<'_>) -> Self {
        Id::new(s.to_js_string())
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
