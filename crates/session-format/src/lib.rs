//! The wire format of OpenClaw 2026.6.11 / pi-coding-agent 0.73.1 session transcripts: the header
//! and every entry kind, message payloads, opaque rows and leaf controls, line framing,
//! migrations, id and timestamp generation, and JavaScript-compatible JSON text. No I/O.
//!
//! Layout (every module is public; `cargo xtask modules session-format` prints the graph):
//! [`json`] (JavaScript values, `JSON.parse`/`JSON.stringify` text) is the base; [`row`]
//! ([`classify`]: entries, leaf controls, opaque rows) uses [`entry`] (header, entry kinds),
//! which uses [`message`] (payloads) and [`migrate`] (v1→v3); `migrate` uses [`ids`] (new ids,
//! timestamps, file names), which uses [`time`] (`toISOString`, `Date.parse`, a value's date);
//! `time` and [`line`](mod@line) (framing, [`LineReader`]) use [`js`] (JavaScript whitespace and
//! `trim`, the stable sort), which uses only `json`. [`build`] makes new rows;
//! [`normalize`] is the conformance output's placeholder pass. No features.
//!
//! Specs: `openclaw-jsonl.md` (Decisions box, §1) and `pi-format.md` (§1, §2.1).
#![warn(missing_docs)]

pub mod build;
pub mod doctor_import;
pub mod entry;
pub mod ids;
pub mod js;
pub mod json;
pub mod line;
pub mod message;
pub mod migrate;
pub mod normalize;
pub mod row;
pub mod time;

pub use entry::{CURRENT_VERSION, Entry, EntryType, LeafControl, SessionHeader};
pub use line::{LineContent, LineError, LineReader, RawLine, ReadLine};
pub use message::{Content, ContentBlock, Message};
pub use row::{RowClass, classify, classify_in, is_readable_header};
