//! JavaScript-compatible JSON: the value model, `JSON.parse`, `JSON.stringify`, the cheap
//! envelope scan used for indexing, and a serde bridge for typed access (pi-format.md §1.7).

mod index;
mod parse;
mod scan;
mod serde_bridge;
mod value;
mod write;

pub use parse::{MAX_DEPTH, parse_value};
pub use scan::{Envelope, EnvelopeScanner, Field, JsStr, ValueKind};
pub use serde_bridge::{SerdeError, from_value, to_value};
pub use value::{JsObject, JsString, JsValue};
pub use write::{
    number_to_string, to_json_string, write_number, write_str, write_string_pub, write_value,
};

/// Why a line is not valid JSON, and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind} at byte {offset}")]
pub struct JsonError {
    /// Byte offset within the text given to the parser.
    pub offset: usize,
    /// What was wrong.
    pub kind: JsonErrorKind,
}

/// The kinds of JSON syntax error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JsonErrorKind {
    /// The text ends inside a value.
    #[error("unexpected end of input")]
    UnexpectedEnd,
    /// A value was expected.
    #[error("expected a value")]
    ExpectedValue,
    /// An object key (a string) was expected.
    #[error("expected an object key")]
    ExpectedKey,
    /// `:` was expected after an object key.
    #[error("expected ':'")]
    ExpectedColon,
    /// `,` or the closing bracket was expected.
    #[error("expected ',' or a closing bracket")]
    ExpectedCommaOrEnd,
    /// A number breaks the JSON number grammar.
    #[error("invalid number")]
    InvalidNumber,
    /// A backslash escape is invalid.
    #[error("invalid escape")]
    InvalidEscape,
    /// A raw control character (below U+0020) inside a string.
    #[error("control character in string")]
    ControlCharacterInString,
    /// Nesting deeper than [`MAX_DEPTH`] (valid JSON, but too deep to build a tree for).
    #[error("nesting deeper than {MAX_DEPTH} levels")]
    TooDeep,
    /// Something follows the value.
    #[error("trailing characters after the value")]
    TrailingCharacters,
}
