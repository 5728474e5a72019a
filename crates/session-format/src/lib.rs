//! The wire format of OpenClaw 2026.6.11 / pi-coding-agent 0.73.1 session transcripts: the header
//! and every entry kind, message payloads, opaque rows and leaf controls, line framing,
//! migrations, id and timestamp generation, and JavaScript-compatible JSON text. No I/O.
//!
//! Specs: `openclaw-jsonl.md` (Decisions box, §1) and `pi-format.md` (§1, §2.1).
#![warn(missing_docs)]

pub mod build;
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
