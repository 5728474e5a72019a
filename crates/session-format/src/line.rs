//! Line framing and the per-line reading rules (openclaw-jsonl.md §1.1, pi-format.md §2.1):
//! split on LF only; a line's exact bytes are kept; blank lines (JavaScript whitespace only) are
//! skipped; the first and last non-blank lines lose the JavaScript whitespace the reference's
//! whole-file `trim()` removes (a leading BOM among it); every other line must parse as JSON on
//! its own (CR, space and tab around the value are JSON whitespace). A line that does not parse
//! is kept and reported; it never aborts a read.

use crate::js::js_space_len_back;
pub use crate::js::{trim_js_end, trim_js_start};
use crate::json::{Envelope, EnvelopeScanner, JsonError};

/// One physical line: its position and exact bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawLine<'a> {
    /// 1-based line number.
    pub number: usize,
    /// Byte offset of the line's first byte in the file.
    pub offset: usize,
    /// The line's bytes without the terminating LF (a CR before it stays here).
    pub bytes: &'a [u8],
    /// Whether an LF follows. Only the last line of a file can lack one (a torn tail, or a file
    /// written without a final newline).
    pub terminated: bool,
}

/// Iterates the lines of a buffer, split on LF only. A final empty piece after the last LF is
/// not a line.
#[derive(Clone, Debug)]
pub struct Lines<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Lines starting at or after this offset are not yielded.
    end: usize,
    number: usize,
}

/// Splits `buf` into lines.
pub fn lines(buf: &[u8]) -> Lines<'_> {
    Lines {
        buf,
        pos: 0,
        end: buf.len(),
        number: 0,
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = RawLine<'a>;

    fn next(&mut self) -> Option<RawLine<'a>> {
        if self.pos >= self.end {
            return None;
        }
        let rest = &self.buf[self.pos..];
        self.number += 1;
        let offset = self.pos;
        let (bytes, terminated) = match memchr::memchr(b'\n', rest) {
            Some(i) => {
                self.pos += i + 1;
                (&rest[..i], true)
            }
            None => {
                self.pos = self.buf.len();
                (rest, false)
            }
        };
        Some(RawLine {
            number: self.number,
            offset,
            bytes,
            terminated,
        })
    }
}

/// True when the line holds only JavaScript whitespace (`line.trim() === ""`).
pub fn is_blank(b: &[u8]) -> bool {
    trim_js_start(b).is_empty()
}

/// What a line holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LineContent<'a> {
    /// Only whitespace: skipped by every reader, never counted as malformed.
    Blank,
    /// Not JSON. The error offset is relative to the line's first byte.
    Malformed(LineError),
    /// A JSON value, with its envelope.
    Json(Envelope<'a>),
}

/// Why a line could not be read, with its position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, byte {byte_offset}: {error}{}", if *.torn { " (unterminated last line)" } else { "" })]
pub struct LineError {
    /// 1-based line number.
    pub line: usize,
    /// Absolute byte offset of the error in the file.
    pub byte_offset: usize,
    /// The JSON error (its offset is relative to the parsed part of the line).
    pub error: JsonError,
    /// The line is the file's last and has no LF: a torn write.
    pub torn: bool,
    /// The line holds NUL bytes (padding left by a crash on some filesystems).
    pub nul_padded: bool,
}

/// One line as read: position, bytes, and content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadLine<'a> {
    /// Position and exact bytes.
    pub raw: RawLine<'a>,
    /// The part of the line `JSON.parse` sees (JavaScript whitespace trimmed on the first and
    /// last non-blank lines).
    pub json: &'a [u8],
    /// Blank, malformed, or JSON.
    pub content: LineContent<'a>,
}

/// Reads every line of a transcript buffer with the reference's tolerance rules.
///
/// This is the streaming half: the caller decides which parsed row is the header and how each
/// row is classified (see [`crate::row`]).
#[derive(Debug)]
pub struct LineReader<'a> {
    buf: &'a [u8],
    lines: Lines<'a>,
    scanner: EnvelopeScanner,
    seen_non_blank: bool,
    /// Offset of the end of the last non-blank line (computed lazily).
    last_non_blank_end: Option<usize>,
}

impl<'a> LineReader<'a> {
    /// A reader over a whole file's bytes.
    pub fn new(buf: &'a [u8]) -> Self {
        Self {
            buf,
            lines: lines(buf),
            scanner: EnvelopeScanner::new(),
            seen_non_blank: false,
            last_non_blank_end: None,
        }
    }

    /// A reader over the lines of `buf` that start in `start..end`, as [`LineReader::new`]
    /// reads them as part of the whole buffer: offsets are absolute, the file's last non-blank
    /// line is still the one trimmed at its end, and `after_non_blank` says whether a non-blank
    /// line precedes `start` (so leading whitespace is not trimmed). Lines are numbered from 1
    /// at `start`. `start` must be 0 or follow a LF; `end` is clamped to the buffer. Used to
    /// read the halves of a large file on two threads.
    pub fn range(buf: &'a [u8], start: usize, end: usize, after_non_blank: bool) -> Self {
        Self {
            buf,
            lines: Lines {
                buf,
                pos: start,
                end: end.min(buf.len()),
                number: 0,
            },
            scanner: EnvelopeScanner::new(),
            seen_non_blank: after_non_blank,
            last_non_blank_end: None,
        }
    }

    fn last_non_blank_end(&mut self) -> usize {
        if let Some(end) = self.last_non_blank_end {
            return end;
        }
        let trimmed = trim_js_end(self.buf);
        self.last_non_blank_end = Some(trimmed.len());
        trimmed.len()
    }
}

impl<'a> Iterator for LineReader<'a> {
    type Item = ReadLine<'a>;

    fn next(&mut self) -> Option<ReadLine<'a>> {
        let raw = self.lines.next()?;
        let mut json = raw.bytes;
        // Fast path: a line that starts with `{` is neither blank nor BOM-prefixed.
        if json.first() != Some(&b'{') {
            if is_blank(json) {
                return Some(ReadLine {
                    raw,
                    json,
                    content: LineContent::Blank,
                });
            }
            if !self.seen_non_blank {
                json = trim_js_start(json);
            }
        }
        self.seen_non_blank = true;
        let mut result = self.scanner.scan(json);
        if result.is_err() && js_space_len_back(json) > 0 {
            // The whole-file trim also strips JavaScript whitespace after the last line.
            let end = raw.offset + raw.bytes.len();
            if self.last_non_blank_end() <= end {
                let trimmed = trim_js_end(json);
                if trimmed.len() != json.len() {
                    json = trimmed;
                    result = self.scanner.scan(json);
                }
            }
        }
        let content = match result {
            Ok(env) => LineContent::Json(env),
            Err(error) => {
                let start = raw.offset + (json.as_ptr() as usize - raw.bytes.as_ptr() as usize);
                LineContent::Malformed(LineError {
                    line: raw.number,
                    byte_offset: start + error.offset,
                    error,
                    torn: !raw.terminated,
                    nul_padded: raw.bytes.contains(&0),
                })
            }
        };
        Some(ReadLine { raw, json, content })
    }
}
