//! Search every branch of a session: a literal or a regex over the decoded text of each entry's
//! fields (JSON string escapes decoded, so `café` finds `caf\u00e9`), one [`Hit`] per matching
//! entry, each hit markable on or off the current branch ([`mark_hits`]).
//!
//! How it runs (the order of the work, cheapest first):
//! 1. [`Searcher::new`] compiles the pattern (a `regex::Regex`; a literal is escaped) and derives
//!    a *candidate filter* from the literal prefixes every match must start with (the regex
//!    crate's own literal extraction): the longest run of each prefix that JSON writes
//!    unescaped (no `"`, `\`, `/` or control character). A line can hold a match only if it
//!    holds one of those runs or a `\uXXXX` escape of a printable character (which could spell
//!    one); every other line is skipped without being parsed. A pattern without such a prefix
//!    (`.*`, `\w+`, an empty pattern) makes every line a candidate.
//! 2. [`Searcher::search_bytes`] / [`Searcher::search_reader`] parse only candidate lines
//!    (`session_format::json::parse_value`), apply the filters (type, role, time) and match the
//!    selected [`Field`]s in document order. The reader form holds one buffer (1 MiB, grown to
//!    the longest line), so memory does not grow with the file.
//! 3. [`mark_hits`] takes the session's read-only open and fills what only the whole tree knows:
//!    whether each hit is on the current branch, the ids of migrated v1 rows (which have none
//!    in the file), and the model in effect at each hit (for [`SearchOptions::model`]); with
//!    [`Field::Id`], [`Searcher::rescan_migrated_rows`] searches a v1 session's entries again
//!    with those ids, so that they can be found.
//!
//! The header line is never searched. A candidate line that is not JSON (a torn or garbled
//! line that holds the bytes a match starts with, so it could have held a hit) is skipped and
//! reported in [`ScanStats`]: how many, and the first one's line and byte offset. Lines the
//! candidate filter skips are not read as JSON at all (they cannot hold a match, valid or not;
//! validating them would cost the scan 4× on a large file); `sessions check` finds every line
//! that is not JSON. A JSON value that is not an object is not an entry and is skipped without
//! a report (as `sessions usage` and the reference's reader do).

use std::collections::HashMap;
use std::io::Read;

use memchr::memmem;
use regex::{Regex, RegexBuilder};
use session_format::json::{JsString, JsValue, parse_value};
use session_store::SessionManager;

/// What went wrong building a [`Searcher`].
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The pattern is not a valid regex (the regex crate's message, which points at the
    /// offending part).
    #[error("invalid regex: {0}")]
    Regex(String),
    /// A `--fields` name that is not one of [`Field::ALL`] (nor `all`).
    #[error("unknown field {name:?} (expected a comma-separated list of {expected}, or all)")]
    UnknownField {
        /// The name given.
        name: String,
        /// The names accepted.
        expected: String,
    },
    /// A `--fields` list that names no field (`""`, `","`).
    #[error("no field to search in (expected a comma-separated list of {expected}, or all)")]
    NoFields {
        /// The names accepted.
        expected: String,
    },
    /// A role filter ([`SearchOptions::roles`]) that is not one of [`ROLES`].
    #[error("unknown role {name:?} (expected one of {expected}{hint})")]
    UnknownRole {
        /// The role given.
        name: String,
        /// The roles accepted.
        expected: String,
        /// For a name that is an entry's type rather than a stored message role (such as
        /// `branchSummary`, a role of pi's built context only, or `branch_summary`, what the
        /// ROLE column shows for such an entry), `; ... use --type TYPE`; else empty.
        hint: String,
    },
    /// A type filter ([`SearchOptions::types`]) that is not one of the entry types.
    #[error("unknown entry type {name:?} (expected one of {expected})")]
    UnknownType {
        /// The type given.
        name: String,
        /// The types accepted.
        expected: String,
    },
}

/// The message roles [`SearchOptions::roles`] accepts: the `message.role`s of stored `message`
/// entries (pi's and OpenClaw's; `custom` is a v1/v2 `hookMessage` after the v2→v3
/// migration). pi's `branchSummary` and `compactionSummary` roles exist only in the context it
/// builds; stored, those are `branch_summary` and `compaction` entries, found with `--type`.
pub const ROLES: [&str; 5] = ["user", "assistant", "toolResult", "bashExecution", "custom"];

/// The `; ... use --type TYPE` part of [`SearchError::UnknownRole`] for `name`.
fn role_hint(name: &str) -> String {
    let ty = match name {
        "branchSummary" => "branch_summary",
        "compactionSummary" => "compaction",
        _ if entry_types().any(|t| t == name) => name,
        _ => return String::new(),
    };
    format!("; {name:?} is not a message role: use --type {ty}")
}

/// The entry types [`SearchOptions::types`] accepts: `session_format::EntryType::ALL` (the
/// header, `session`, is never searched).
fn entry_types() -> impl Iterator<Item = &'static str> {
    session_format::EntryType::ALL
        .into_iter()
        .map(|t| t.as_str())
}

/// The part of an entry a match was found in (`--fields`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Field {
    /// Message text: `text` blocks (or string content) of user and assistant messages.
    Text,
    /// `thinking` blocks of assistant messages.
    Thinking,
    /// Tool names: a `toolCall` block's `name`, a tool result's `toolName`.
    Tool,
    /// Tool arguments: the string values (at any depth) of a `toolCall` block's `arguments`,
    /// and a bash execution's `command`.
    Args,
    /// Tool output: the text of a tool result's content, and a bash execution's `output`.
    Result,
    /// The `summary` of compactions, branch summaries and summary messages.
    Summary,
    /// The content of `custom_message` entries (and of messages with role `custom`).
    Custom,
    /// The text of `label` entries and the `name` of `session_info` entries.
    Label,
    /// Entry ids and id references (`id`, `parentId`, a tool call's `id`, `toolCallId`,
    /// `targetId`, `fromId`, `firstKeptEntryId`). Not searched unless asked for.
    Id,
    /// Object keys. Not searched unless asked for.
    Key,
    /// Every other string value (model names, providers, image data, `details`, custom data,
    /// `type`, timestamps …). Not searched unless asked for.
    Other,
}

impl Field {
    /// Every field, in the order `--fields all` lists them.
    pub const ALL: [Field; 11] = [
        Field::Text,
        Field::Thinking,
        Field::Tool,
        Field::Args,
        Field::Result,
        Field::Summary,
        Field::Custom,
        Field::Label,
        Field::Id,
        Field::Key,
        Field::Other,
    ];

    /// The fields searched when `--fields` is not given: all but [`Field::Id`],
    /// [`Field::Key`] and [`Field::Other`].
    pub const DEFAULT: [Field; 8] = [
        Field::Text,
        Field::Thinking,
        Field::Tool,
        Field::Args,
        Field::Result,
        Field::Summary,
        Field::Custom,
        Field::Label,
    ];

    /// The name `--fields` and the JSON output use (`text`, `thinking`, `tool`, `args`,
    /// `result`, `summary`, `custom`, `label`, `id`, `key`, `other`).
    pub fn as_str(self) -> &'static str {
        match self {
            Field::Text => "text",
            Field::Thinking => "thinking",
            Field::Tool => "tool",
            Field::Args => "args",
            Field::Result => "result",
            Field::Summary => "summary",
            Field::Custom => "custom",
            Field::Label => "label",
            Field::Id => "id",
            Field::Key => "key",
            Field::Other => "other",
        }
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

/// A set of [`Field`]s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldSet(u16);

impl Default for FieldSet {
    fn default() -> Self {
        Self::of(&Field::DEFAULT)
    }
}

impl FieldSet {
    /// The set of `fields`.
    pub fn of(fields: &[Field]) -> Self {
        FieldSet(fields.iter().fold(0, |acc, f| acc | f.bit()))
    }

    /// True when `f` is in the set.
    pub fn contains(self, f: Field) -> bool {
        self.0 & f.bit() != 0
    }

    /// Parses a comma-separated list of field names (`text,args`, `all`; spaces around names
    /// ignored).
    ///
    /// # Errors
    /// [`SearchError::UnknownField`] for a name that is not one of [`Field::ALL`] or `all`;
    /// [`SearchError::NoFields`] for a list without a name.
    pub fn parse(list: &str) -> Result<Self, SearchError> {
        let expected = || Field::ALL.map(Field::as_str).join(", ");
        let mut set = FieldSet(0);
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if name == "all" {
                set = FieldSet::of(&Field::ALL);
                continue;
            }
            match Field::ALL.iter().find(|f| f.as_str() == name) {
                Some(f) => set.0 |= f.bit(),
                None => {
                    return Err(SearchError::UnknownField {
                        name: name.to_owned(),
                        expected: expected(),
                    });
                }
            }
        }
        if set.0 == 0 {
            return Err(SearchError::NoFields {
                expected: expected(),
            });
        }
        Ok(set)
    }
}

/// What to search for and which entries count (the `sessions search` flags).
#[derive(Clone, Debug, Default)]
pub struct SearchOptions {
    /// The pattern: a literal unless [`SearchOptions::regex`].
    pub pattern: String,
    /// The pattern is a regex (the regex crate's syntax, which is ripgrep's).
    pub regex: bool,
    /// Case-insensitive (Unicode simple case folding).
    pub ignore_case: bool,
    /// Whole words only: a match must not have a word character (Unicode `\w`) right before
    /// or after it.
    pub word: bool,
    /// The fields matched in.
    pub fields: FieldSet,
    /// Only `message` entries with one of these `message.role`s (each one of [`ROLES`];
    /// empty: any entry).
    pub roles: Vec<String>,
    /// Only entries of one of these `type`s (each one of `session_format::EntryType::ALL`'s
    /// names; empty: any).
    pub types: Vec<String>,
    /// Only entries at or after this time (epoch milliseconds; an entry's `timestamp`, else its
    /// message's numeric `timestamp`; entries without a time are excluded by a bound).
    pub since_ms: Option<i64>,
    /// Only entries at or before this time (epoch milliseconds).
    pub until_ms: Option<i64>,
    /// Only entries made under a model whose `provider/model` contains this text
    /// (case-insensitive): an assistant message's own model, else the model of the nearest
    /// ancestor assistant message or `model_change` on its branch. Needs [`mark_hits`].
    pub model: Option<String>,
    /// How many characters of context a snippet keeps on each side of the match.
    pub context_chars: usize,
}

/// One matching entry (row) of a session.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    /// 1-based line number in the session.
    pub line: usize,
    /// Byte offset of the line's first byte.
    pub byte: usize,
    /// The entry id (`None` for a row without one, such as a v1 row before [`mark_hits`]
    /// gives it the id the in-memory migration assigns).
    pub entry_id: Option<String>,
    /// The row's `type`.
    pub entry_type: String,
    /// `message.role` of a `message` entry.
    pub role: Option<String>,
    /// The entry's `timestamp` as stored (an ISO string), else its message's numeric
    /// timestamp formatted as epoch milliseconds.
    pub timestamp: Option<String>,
    /// The time of the entry (epoch milliseconds), when it has one.
    pub time_ms: Option<i64>,
    /// On the current branch (the path from the current leaf to the root): set by
    /// [`mark_hits`], `None` before.
    pub on_current_branch: Option<bool>,
    /// The model in effect (`provider/model`), set by [`mark_hits`].
    pub model: Option<String>,
    /// The field of the first match.
    pub field: Field,
    /// The number of matches in the entry, over every selected field.
    pub matches: usize,
    /// Up to [`SearchOptions::context_chars`] characters before the first match (same field).
    pub before: String,
    /// The first match's text.
    pub matched: String,
    /// Up to [`SearchOptions::context_chars`] characters after the first match.
    pub after: String,
}

/// Counters of one scan.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScanStats {
    /// Lines in the session (the header included).
    pub lines: usize,
    /// Lines the candidate filter let through and that were parsed.
    pub parsed_lines: usize,
    /// Parsed lines (candidates) that are not JSON (or nest deeper than
    /// `session_format::json::MAX_DEPTH`, so that no tree can be built to search them),
    /// skipped; blank lines are not counted. Lines the candidate filter skips, and lines after
    /// the scan was stopped (a `visit` returning `false`), are not read.
    pub invalid_lines: usize,
    /// The first of the [`ScanStats::invalid_lines`].
    pub first_invalid: Option<LinePos>,
}

/// Where a line is: its 1-based number and the byte offset of its first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinePos {
    /// 1-based line number.
    pub line: usize,
    /// Byte offset of the line's first byte in the session.
    pub byte: usize,
}

/// A compiled search: the matcher, the candidate filter and the options.
#[derive(Debug)]
pub struct Searcher {
    re: Regex,
    word: bool,
    prefilter: Prefilter,
    opts: SearchOptions,
}

/// Finds the lines that can hold a match.
#[derive(Debug)]
enum Prefilter {
    /// Every line is a candidate.
    All,
    /// One run of bytes, case-sensitive.
    One(Box<memmem::Finder<'static>>),
    /// Several runs, or a case-insensitive one (a byte regex alternation).
    Many(regex::bytes::Regex),
}

/// The longest run of `lit` that JSON never escapes: split at `"`, `\`, `/` and bytes below
/// 0x20 (the characters `JSON.stringify` or another writer may escape); other characters can
/// only appear escaped as `\uXXXX`, which [`has_printable_u_escape`] catches.
fn safe_piece(lit: &[u8]) -> &[u8] {
    lit.split(|&b| b == b'"' || b == b'\\' || b == b'/' || b < 0x20)
        .max_by_key(|p| p.len())
        .unwrap_or(&[])
}

/// The candidate filter of `pattern` (already in regex syntax), `Prefilter::All` when no
/// literal prefix bounds the matches.
fn prefilter_of(pattern: &str, ignore_case: bool) -> Prefilter {
    use regex_syntax::hir::literal::{ExtractKind, Extractor};
    let Ok(hir) = regex_syntax::ParserBuilder::new().build().parse(pattern) else {
        return Prefilter::All;
    };
    let seq = Extractor::new().kind(ExtractKind::Prefix).extract(&hir);
    let Some(lits) = seq.literals() else {
        return Prefilter::All;
    };
    let mut pieces: Vec<&str> = Vec::with_capacity(lits.len());
    for lit in lits {
        let piece = safe_piece(lit.as_bytes());
        let Ok(piece) = std::str::from_utf8(piece) else {
            return Prefilter::All;
        };
        if piece.is_empty() {
            return Prefilter::All;
        }
        pieces.push(piece);
    }
    pieces.sort_unstable();
    pieces.dedup();
    match pieces.as_slice() {
        [] => Prefilter::All,
        [one] if !ignore_case => {
            Prefilter::One(Box::new(memmem::Finder::new(one.as_bytes()).into_owned()))
        }
        many => {
            let alt = many
                .iter()
                .map(|p| regex::escape(p))
                .collect::<Vec<_>>()
                .join("|");
            match regex::bytes::RegexBuilder::new(&alt)
                .case_insensitive(ignore_case)
                .build()
            {
                Ok(re) => Prefilter::Many(re),
                Err(_) => Prefilter::All,
            }
        }
    }
}

/// The position of the first `\uXXXX` escape at or after `from` whose value is 0x20 or more
/// (it could spell a character of a literal); escapes of control characters (`\u0000`–
/// `\u001f`) are skipped. A `\\u` (an escaped backslash before `u`) is a false positive,
/// which only makes a line a candidate.
fn find_printable_u_escape(hay: &[u8], from: usize, finder: &memmem::Finder<'_>) -> Option<usize> {
    let mut at = from;
    while let Some(i) = finder.find(&hay[at..]) {
        let pos = at + i;
        let hex = hay.get(pos + 2..pos + 6);
        let control = matches!(hex, Some([b'0', b'0', b'0' | b'1', _]));
        if !control {
            return Some(pos);
        }
        at = pos + 2;
    }
    None
}

/// True when `line` holds a `\uXXXX` escape of a printable character.
#[cfg(test)]
fn has_printable_u_escape(line: &[u8]) -> bool {
    find_printable_u_escape(line, 0, &memmem::Finder::new(b"\\u")).is_some()
}

impl Searcher {
    /// Compiles `opts`.
    ///
    /// # Errors
    /// [`SearchError::Regex`] when the pattern (with [`SearchOptions::regex`]) is not a valid
    /// regex, or too large to compile; [`SearchError::UnknownRole`] and
    /// [`SearchError::UnknownType`] for a filter no entry can pass.
    pub fn new(opts: SearchOptions) -> Result<Self, SearchError> {
        if let Some(r) = opts.roles.iter().find(|r| !ROLES.contains(&r.as_str())) {
            return Err(SearchError::UnknownRole {
                name: r.clone(),
                expected: ROLES.join(", "),
                hint: role_hint(r),
            });
        }
        if let Some(t) = opts.types.iter().find(|t| !entry_types().any(|k| k == *t)) {
            return Err(SearchError::UnknownType {
                name: t.clone(),
                expected: entry_types().collect::<Vec<_>>().join(", "),
            });
        }
        let source = if opts.regex {
            opts.pattern.clone()
        } else {
            regex::escape(&opts.pattern)
        };
        let re = RegexBuilder::new(&source)
            .case_insensitive(opts.ignore_case)
            .build()
            .map_err(|e| SearchError::Regex(one_line_regex_error(&e)))?;
        let prefilter = prefilter_of(&source, opts.ignore_case);
        Ok(Searcher {
            re,
            word: opts.word,
            prefilter,
            opts,
        })
    }

    /// The options this searcher was built from.
    pub fn options(&self) -> &SearchOptions {
        &self.opts
    }

    /// True when [`mark_hits`] must run before the hits are final: for
    /// [`SearchOptions::model`] (the model filter needs the tree).
    pub fn needs_tree_filter(&self) -> bool {
        self.opts.model.is_some()
    }

    /// The same search with the candidate filter off (every line parsed): what the filter must
    /// never change, for differential tests and benchmarks.
    #[must_use]
    pub fn without_prefilter(mut self) -> Self {
        self.prefilter = Prefilter::All;
        self
    }

    /// True when the candidate filter skips lines (false: every line is parsed).
    pub fn has_prefilter(&self) -> bool {
        !matches!(self.prefilter, Prefilter::All)
    }

    /// Searches a whole session held in memory; `visit` gets each hit in file order and
    /// returns `false` to stop the scan.
    pub fn search_bytes(&self, bytes: &[u8], mut visit: impl FnMut(Hit) -> bool) -> ScanStats {
        let mut st = State::default();
        st.begin_block(0);
        let tail = self.scan_block(bytes, &mut st, &mut visit);
        if tail < bytes.len() && !st.stopped {
            // The last line has no line feed.
            self.scan_tail(bytes, tail, &mut st, &mut visit);
        }
        st.stats.lines = count_lines(bytes);
        st.stats
    }

    /// Searches a session read from `reader` in blocks (one buffer of 1 MiB, grown to hold the
    /// longest line); `visit` as in [`Searcher::search_bytes`].
    ///
    /// # Errors
    /// A read error of `reader`.
    pub fn search_reader<R: Read>(
        &self,
        reader: R,
        visit: impl FnMut(Hit) -> bool,
    ) -> std::io::Result<ScanStats> {
        self.search_reader_in(reader, &mut Vec::new(), visit)
    }

    /// [`Searcher::search_reader`] reading through `buf` (resized to 1 MiB, or more for a
    /// longer line), so that a caller searching many sessions allocates one buffer per thread.
    ///
    /// # Errors
    /// A read error of `reader`.
    pub fn search_reader_in<R: Read>(
        &self,
        mut reader: R,
        buf: &mut Vec<u8>,
        mut visit: impl FnMut(Hit) -> bool,
    ) -> std::io::Result<ScanStats> {
        const BLOCK: usize = 1 << 20;
        if buf.len() < BLOCK {
            buf.resize(BLOCK, 0);
        }
        // `buf[..filled]` holds bytes from file offset `base`; the first `keep` bytes are a
        // partial line carried over from the previous block.
        let mut base = 0usize;
        let mut filled = 0usize;
        let mut st = State::default();
        loop {
            if filled == buf.len() {
                let grown = buf.len() * 2;
                buf.resize(grown, 0);
            }
            let n = match reader.read(&mut buf[filled..]) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if n == 0 {
                break;
            }
            filled += n;
            let Some(last_nl) = memchr::memrchr(b'\n', &buf[..filled]) else {
                continue;
            };
            let end = last_nl + 1;
            st.begin_block(base);
            self.scan_block(&buf[..end], &mut st, &mut visit);
            if st.stopped {
                break;
            }
            st.end_block(&buf[..end]);
            buf.copy_within(end..filled, 0);
            filled -= end;
            base += end;
            if buf.len() > BLOCK && filled < BLOCK / 2 {
                buf.truncate(BLOCK.max(filled));
                buf.shrink_to_fit();
            }
        }
        // Each newline is counted once, lazily (`State`): the blocks ended hold `lines_before`
        // lines. A stop leaves the current block unended: its lines are those read so far.
        st.stats.lines = if st.stopped {
            st.lines_before + count_lines(&buf[..filled])
        } else {
            // What is left has no line feed: the last line, when there is one.
            let tail = usize::from(filled > 0);
            if filled > 0 {
                st.begin_block(base);
                self.scan_tail(&buf[..filled], 0, &mut st, &mut visit);
            }
            st.lines_before + tail
        };
        Ok(st.stats)
    }

    /// Scans the complete lines of `block` (those ending with a line feed) and returns where
    /// the partial line after the last line feed starts (`block.len()` when there is none).
    fn scan_block(
        &self,
        block: &[u8],
        st: &mut State,
        visit: &mut impl FnMut(Hit) -> bool,
    ) -> usize {
        let tail = memchr::memrchr(b'\n', block).map_or(0, |i| i + 1);
        match &self.prefilter {
            Prefilter::All => {
                let mut start = 0;
                for nl in memchr::memchr_iter(b'\n', block) {
                    self.scan_line(block, start, nl, st, visit);
                    if st.stopped {
                        break;
                    }
                    start = nl + 1;
                }
            }
            Prefilter::One(_) | Prefilter::Many(_) => {
                let u_finder = memmem::Finder::new(b"\\u");
                let mut next_piece: Option<Option<usize>> = None;
                let mut next_u: Option<Option<usize>> = None;
                let mut from = 0;
                while from < tail {
                    // The next position of each finder, recomputed only once passed.
                    if next_piece.is_some_and(|p| p.is_some_and(|p| p < from)) {
                        next_piece = None;
                    }
                    if next_u.is_some_and(|p| p.is_some_and(|p| p < from)) {
                        next_u = None;
                    }
                    let piece =
                        *next_piece.get_or_insert_with(|| self.find_piece(&block[..tail], from));
                    let u = *next_u.get_or_insert_with(|| {
                        find_printable_u_escape(&block[..tail], from, &u_finder)
                    });
                    let Some(at) = [piece, u].into_iter().flatten().min() else {
                        break;
                    };
                    let start = memchr::memrchr(b'\n', &block[..at]).map_or(0, |i| i + 1);
                    let end = memchr::memchr(b'\n', &block[at..tail]).map_or(tail, |i| at + i);
                    self.scan_line(block, start, end, st, visit);
                    if st.stopped {
                        break;
                    }
                    from = end + 1;
                }
            }
        }
        tail
    }

    /// Scans the last line of a session, `block[start..]`, which has no line feed, when the
    /// candidate filter lets it through.
    fn scan_tail(
        &self,
        block: &[u8],
        start: usize,
        st: &mut State,
        visit: &mut impl FnMut(Hit) -> bool,
    ) {
        if self.is_candidate(&block[start..]) {
            self.scan_line(block, start, block.len(), st, visit);
        }
    }

    /// True when `line` can hold a match (the candidate filter).
    fn is_candidate(&self, line: &[u8]) -> bool {
        match &self.prefilter {
            Prefilter::All => true,
            Prefilter::One(_) | Prefilter::Many(_) => {
                self.find_piece(line, 0).is_some()
                    || find_printable_u_escape(line, 0, &memmem::Finder::new(b"\\u")).is_some()
            }
        }
    }

    fn find_piece(&self, hay: &[u8], from: usize) -> Option<usize> {
        match &self.prefilter {
            Prefilter::All => Some(from),
            Prefilter::One(f) => f.find(&hay[from..]).map(|i| from + i),
            Prefilter::Many(re) => re.find_at(hay, from).map(|m| m.start()),
        }
    }

    /// Parses and matches the line `block[start..end]` (without its line feed).
    fn scan_line(
        &self,
        block: &[u8],
        start: usize,
        end: usize,
        st: &mut State,
        visit: &mut impl FnMut(Hit) -> bool,
    ) {
        let Some(json) = json_part(block, start, end, st) else {
            return;
        };
        st.stats.parsed_lines += 1;
        let row = match parse_value(json) {
            Ok(JsValue::Object(row)) => row,
            // JSON, but not an entry.
            Ok(_) => return,
            Err(_) => {
                st.invalid(block, start);
                return;
            }
        };
        let line_no = st.line_no(block, start);
        let row = JsValue::Object(row);
        let ty = row
            .get("type")
            .and_then(JsValue::as_str_lossy)
            .map(|t| t.into_owned())
            .unwrap_or_default();
        if ty == "session" && !st.seen_header {
            st.seen_header = true;
            return;
        }
        st.seen_header = true;
        if let Some(hit) = self.match_row(&row, &ty) {
            let hit = Hit {
                line: line_no,
                byte: st.base + start,
                ..hit
            };
            if !visit(hit) {
                st.stopped = true;
            }
        }
    }

    /// The hit of one parsed row, when it passes the filters and a selected field matches.
    fn match_row(&self, row: &JsValue, ty: &str) -> Option<Hit> {
        let o = &self.opts;
        if !o.types.is_empty() && !o.types.iter().any(|t| t == ty) {
            return None;
        }
        let message = if ty == "message" {
            row.get("message")
        } else {
            None
        };
        let role = message
            .and_then(|m| m.get("role"))
            .and_then(JsValue::as_str_lossy)
            .map(|r| r.into_owned());
        if !o.roles.is_empty() && !role.as_ref().is_some_and(|r| o.roles.contains(r)) {
            return None;
        }
        let (timestamp, time_ms) = entry_time(row, message);
        if o.since_ms.is_some() || o.until_ms.is_some() {
            let t = time_ms?;
            if o.since_ms.is_some_and(|s| t < s) || o.until_ms.is_some_and(|u| t > u) {
                return None;
            }
        }
        let mut acc = Acc::default();
        let mut each = |field: Field, s: &JsString| {
            if self.opts.fields.contains(field) {
                self.match_text(field, &s.to_str_lossy(), &mut acc);
            }
        };
        walk_row(row, ty, &mut each);
        if self.opts.fields.contains(Field::Key) {
            walk_keys(row, &mut |k| {
                self.match_text(Field::Key, &k.to_str_lossy(), &mut acc)
            });
        }
        let (field, before, matched, after) = acc.first?;
        Some(Hit {
            line: 0,
            byte: 0,
            entry_id: row
                .get("id")
                .and_then(JsValue::as_str_lossy)
                .map(|s| s.into_owned()),
            entry_type: ty.to_owned(),
            role,
            timestamp,
            time_ms,
            on_current_branch: None,
            model: None,
            field,
            matches: acc.count,
            before,
            matched,
            after,
        })
    }

    /// Counts the matches of the pattern in `text`, keeping the first one's snippet.
    fn match_text(&self, field: Field, text: &str, acc: &mut Acc) {
        let mut at = 0;
        while at <= text.len() {
            let Some(m) = self.re.find_at(text, at) else {
                break;
            };
            let ok = !self.word || is_whole_word(text, m.start(), m.end());
            if ok {
                acc.count += 1;
                if acc.first.is_none() {
                    let n = self.opts.context_chars;
                    acc.first = Some((
                        field,
                        tail_chars(&text[..m.start()], n).to_owned(),
                        m.as_str().to_owned(),
                        head_chars(&text[m.end()..], n).to_owned(),
                    ));
                }
            }
            // Past the match (one character on, for an empty match or a rejected word match).
            at = if ok && m.end() > m.start() {
                m.end()
            } else {
                next_char(text, m.start())
            };
        }
    }
}

/// The regex crate's error on one line: a syntax error's message is the pattern with a caret
/// under the offending part and `error: WHAT` below; the pattern and `WHAT` are kept.
fn one_line_regex_error(e: &regex::Error) -> String {
    let full = e.to_string();
    match full.lines().rev().find(|l| !l.trim().is_empty()) {
        Some(last) if full.lines().count() > 1 => {
            let what = last.trim().trim_start_matches("error: ");
            let pattern = full.lines().nth(1).map_or("", str::trim);
            format!("{what} in {pattern:?}")
        }
        _ => full,
    }
}

/// Per-scan state carried across blocks.
#[derive(Default)]
struct State {
    stats: ScanStats,
    /// Lines before the current block.
    lines_before: usize,
    /// Newlines of the current block before `counted_to`.
    block_counted: usize,
    /// Offset in the block up to which newlines were counted.
    counted_to: usize,
    /// The block's offset in the session.
    base: usize,
    seen_header: bool,
    stopped: bool,
}

impl State {
    /// Starts a block at session offset `base`.
    fn begin_block(&mut self, base: usize) {
        self.base = base;
        self.block_counted = 0;
        self.counted_to = 0;
    }

    /// The 1-based number of the line starting at `start` of `block` (newlines counted lazily,
    /// so `start` must not decrease within a block).
    fn line_no(&mut self, block: &[u8], start: usize) -> usize {
        self.block_counted += memchr::memchr_iter(b'\n', &block[self.counted_to..start]).count();
        self.counted_to = start;
        self.lines_before + self.block_counted + 1
    }

    /// Counts the line starting at `start` of `block` as not JSON.
    fn invalid(&mut self, block: &[u8], start: usize) {
        let line = self.line_no(block, start);
        self.stats.invalid_lines += 1;
        if self.stats.first_invalid.is_none() {
            self.stats.first_invalid = Some(LinePos {
                line,
                byte: self.base + start,
            });
        }
    }

    /// Ends a block of complete lines (`block` ends with a line feed).
    fn end_block(&mut self, block: &[u8]) {
        self.lines_before +=
            self.block_counted + memchr::memchr_iter(b'\n', &block[self.counted_to..]).count();
    }
}

/// The part of the line `block[start..end]` that `JSON.parse` sees, `None` for a blank line:
/// the JavaScript whitespace the reference's whole-file `trim()` removes (a BOM among it) is cut
/// from the start of the session's first line and from the end of its last one (`end ==
/// block.len()` in [`Searcher::scan_tail`]); a CR before the LF is JSON whitespace.
fn json_part<'a>(block: &'a [u8], start: usize, end: usize, st: &State) -> Option<&'a [u8]> {
    let raw = &block[start..end];
    if session_format::line::is_blank(raw) {
        return None;
    }
    let raw = if st.base + start == 0 {
        session_format::line::trim_js_start(raw)
    } else {
        raw
    };
    Some(if end == block.len() {
        session_format::line::trim_js_end(raw)
    } else {
        raw
    })
}

/// The first match of an entry and the match count.
#[derive(Default)]
struct Acc {
    count: usize,
    first: Option<(Field, String, String, String)>,
}

fn count_lines(bytes: &[u8]) -> usize {
    let n = memchr::memchr_iter(b'\n', bytes).count();
    if bytes.last().is_some_and(|&b| b != b'\n') {
        n + 1
    } else {
        n
    }
}

fn next_char(text: &str, at: usize) -> usize {
    text[at..]
        .chars()
        .next()
        .map_or(text.len() + 1, |c| at + c.len_utf8())
}

fn is_word_char(c: char) -> bool {
    regex_syntax::is_word_character(c)
}

fn is_whole_word(text: &str, start: usize, end: usize) -> bool {
    let before = text[..start].chars().next_back();
    let after = text[end..].chars().next();
    !before.is_some_and(is_word_char) && !after.is_some_and(is_word_char)
}

/// The last `n` characters of `s`.
fn tail_chars(s: &str, n: usize) -> &str {
    match s.char_indices().rev().nth(n.saturating_sub(1)) {
        Some((i, _)) if n > 0 => &s[i..],
        _ if n == 0 => "",
        _ => s,
    }
}

/// The first `n` characters of `s`.
fn head_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// An entry's time: its `timestamp` string (as stored, and parsed as `Date.parse` does), else
/// its message's numeric `timestamp` (epoch milliseconds).
fn entry_time(row: &JsValue, message: Option<&JsValue>) -> (Option<String>, Option<i64>) {
    if let Some(ts) = row.get("timestamp").and_then(JsValue::as_str_lossy) {
        let ms = session_format::time::parse_js_date(&ts);
        return (Some(ts.into_owned()), ms);
    }
    if let Some(ms) = message
        .and_then(|m| m.get("timestamp"))
        .and_then(JsValue::as_f64)
        .filter(|n| n.is_finite())
    {
        #[allow(clippy::cast_possible_truncation)]
        let ms = ms as i64;
        return (Some(ms.to_string()), Some(ms));
    }
    (None, None)
}

/// Calls `f` with every string value of `v` (at any depth), as `field`.
fn walk_strings(v: &JsValue, field: Field, f: &mut impl FnMut(Field, &JsString)) {
    match v {
        JsValue::String(s) => f(field, s),
        JsValue::Array(a) => a.iter().for_each(|x| walk_strings(x, field, f)),
        JsValue::Object(o) => o.iter().for_each(|(_, x)| walk_strings(x, field, f)),
        JsValue::Null | JsValue::Bool(_) | JsValue::Number(_) => {}
    }
}

/// Calls `f` with every object key of `v` (at any depth).
fn walk_keys(v: &JsValue, f: &mut impl FnMut(&JsString)) {
    match v {
        JsValue::Array(a) => a.iter().for_each(|x| walk_keys(x, f)),
        JsValue::Object(o) => o.iter().for_each(|(k, x)| {
            f(k);
            walk_keys(x, f);
        }),
        JsValue::Null | JsValue::Bool(_) | JsValue::Number(_) | JsValue::String(_) => {}
    }
}

const ID_KEYS: [&str; 5] = ["id", "parentId", "targetId", "fromId", "firstKeptEntryId"];

/// Calls `f` with every string of a row and the [`Field`] it belongs to, in document order.
fn walk_row(row: &JsValue, ty: &str, f: &mut impl FnMut(Field, &JsString)) {
    let Some(o) = row.as_object() else {
        return;
    };
    for (k, v) in o.iter() {
        let key = k.as_str().unwrap_or("");
        let field = match (ty, key) {
            (_, k) if ID_KEYS.contains(&k) => Field::Id,
            ("message", "message") => {
                walk_message(v, f);
                continue;
            }
            ("compaction" | "branch_summary", "summary") => Field::Summary,
            ("custom_message", "content") => {
                walk_content(v, Field::Custom, f);
                continue;
            }
            ("label", "label") | ("session_info", "name") => Field::Label,
            _ => Field::Other,
        };
        walk_strings(v, field, f);
    }
}

fn walk_message(m: &JsValue, f: &mut impl FnMut(Field, &JsString)) {
    let Some(o) = m.as_object() else {
        walk_strings(m, Field::Other, f);
        return;
    };
    let role = o.get("role").and_then(JsValue::as_str_lossy);
    let role = role.as_deref().unwrap_or("");
    let base = match role {
        "toolResult" => Field::Result,
        "custom" => Field::Custom,
        "branchSummary" | "compactionSummary" => Field::Summary,
        _ => Field::Text,
    };
    for (k, v) in o.iter() {
        let field = match (role, k.as_str().unwrap_or("")) {
            (_, "content") => {
                walk_content(v, base, f);
                continue;
            }
            (_, "toolName") => Field::Tool,
            (_, "toolCallId") => Field::Id,
            (_, "summary") => Field::Summary,
            ("bashExecution", "command") => Field::Args,
            ("bashExecution", "output") => Field::Result,
            _ => Field::Other,
        };
        walk_strings(v, field, f);
    }
}

fn walk_content(v: &JsValue, base: Field, f: &mut impl FnMut(Field, &JsString)) {
    let JsValue::Array(blocks) = v else {
        match v {
            JsValue::String(s) => f(base, s),
            other => walk_strings(other, Field::Other, f),
        }
        return;
    };
    for b in blocks {
        let Some(o) = b.as_object() else {
            walk_strings(b, base, f);
            continue;
        };
        let bt = o.get("type").and_then(JsValue::as_str_lossy);
        let bt = bt.as_deref().unwrap_or("");
        for (k, x) in o.iter() {
            let field = match (bt, k.as_str().unwrap_or("")) {
                ("text", "text") => base,
                ("thinking", "thinking") => Field::Thinking,
                ("toolCall", "name") => Field::Tool,
                ("toolCall", "arguments") => Field::Args,
                ("toolCall", "id") => Field::Id,
                _ => Field::Other,
            };
            walk_strings(x, field, f);
        }
    }
}

/// True when `header` (a session's first line) is a version 1 header (no `version`, or a
/// version below 2): its rows carry no ids in the file, the read-only open gives them ids in
/// memory (the ids the hits report, which `sessions show FILE @LINE` shows too), and
/// [`Searcher::rescan_migrated_rows`] makes those ids searchable.
pub fn is_v1_header(header: &[u8]) -> bool {
    let header = session_format::line::trim_js_start(header);
    let Ok(v) = parse_value(header) else {
        return false;
    };
    v.get("type").and_then(JsValue::as_str_lossy).as_deref() == Some("session")
        && v.get("version")
            .and_then(JsValue::as_f64)
            .is_none_or(|n| n < 2.0)
}

impl Searcher {
    /// With [`Field::Id`] searched, for a v1 session ([`is_v1_header`]; its rows carry no ids in
    /// the file): searches every entry of `sm` (the session's read-only open) again as the open
    /// reads it, with the ids (and parent ids) its in-memory migration gave it, so that the id
    /// a v1 entry is shown with is found like any other id; the hits of those rows replace
    /// theirs in `hits` (the same fields and filters, the ids added), in line order. Does
    /// nothing without [`Field::Id`].
    pub fn rescan_migrated_rows(&self, sm: &SessionManager, hits: &mut Vec<Hit>) {
        if !self.opts.fields.contains(Field::Id) {
            return;
        }
        let mut rescanned = std::collections::HashSet::new();
        let mut found = Vec::new();
        for e in sm.get_entries() {
            let loc = e.location();
            let (Some(line), Some(byte)) = (loc.line, loc.byte_offset) else {
                continue;
            };
            let Ok(mut row @ JsValue::Object(_)) = e.raw_value() else {
                continue;
            };
            if let JsValue::Object(o) = &mut row
                && !o.contains_key("id")
                && !e.id().is_empty()
            {
                o.insert("id", JsValue::from(e.id()));
            }
            rescanned.insert(byte);
            let ty = row
                .get("type")
                .and_then(JsValue::as_str_lossy)
                .map(|t| t.into_owned())
                .unwrap_or_default();
            if let Some(hit) = self.match_row(&row, &ty) {
                found.push(Hit { line, byte, ..hit });
            }
        }
        if rescanned.is_empty() {
            return;
        }
        hits.retain(|h| !rescanned.contains(&h.byte));
        hits.extend(found);
        hits.sort_by_key(|h| h.byte);
    }
}

/// Fills what only the session's tree knows into `hits` (all of one session, as
/// [`Searcher::search_bytes`] found them): [`Hit::on_current_branch`], [`Hit::model`], and
/// the entry id of rows the in-memory migration gave one (v1 files); then drops the hits the
/// model filter ([`SearchOptions::model`]) rejects. `sm` is the session's read-only open of the
/// same bytes. Rows that are not entries of the tree (opaque rows, rows the open did not keep)
/// are off the current branch.
pub fn mark_hits(hits: &mut Vec<Hit>, sm: &SessionManager, model_filter: Option<&str>) {
    if hits.is_empty() {
        return;
    }
    let mut by_offset: HashMap<usize, session_store::EntryRef<'_>> = HashMap::new();
    for e in sm.get_entries() {
        if let Some(off) = e.location().byte_offset {
            by_offset.insert(off, e);
        }
    }
    let branch: std::collections::HashSet<usize> = sm
        .get_branch(None)
        .iter()
        .filter_map(|e| e.location().byte_offset)
        .collect();
    let mut models = ModelMemo::default();
    for h in hits.iter_mut() {
        h.on_current_branch = Some(branch.contains(&h.byte));
        if let Some(e) = by_offset.get(&h.byte) {
            if h.entry_id.is_none() && !e.id().is_empty() {
                h.entry_id = Some(e.id().to_owned());
            }
            h.model = models.model_at(sm, e);
        }
    }
    if let Some(want) = model_filter {
        let want = want.to_lowercase();
        hits.retain(|h| {
            h.model
                .as_ref()
                .is_some_and(|m| m.to_lowercase().contains(&want))
        });
    }
}

/// The model in effect at each entry, memoised by entry id.
#[derive(Default)]
struct ModelMemo {
    by_id: HashMap<String, Option<String>>,
}

impl ModelMemo {
    /// The model of `e` itself (an assistant message's `provider/model`, a `model_change`'s
    /// `provider/modelId`), else of its nearest ancestor that has one.
    fn model_at(&mut self, sm: &SessionManager, e: &session_store::EntryRef<'_>) -> Option<String> {
        // Walk up until an entry with a model or a memoised one, then fill the path.
        let mut path: Vec<String> = Vec::new();
        let mut cur = Some(e.id().to_owned());
        let mut found: Option<String> = None;
        let mut guard = 0usize;
        while let Some(id) = cur.take() {
            if let Some(m) = self.by_id.get(&id) {
                found = m.clone();
                break;
            }
            let Some(entry) = sm.get_entry(&id) else {
                break;
            };
            if let Some(m) = own_model(&entry) {
                path.push(id);
                found = Some(m);
                break;
            }
            path.push(id);
            cur = entry.parent_id();
            guard += 1;
            if guard > sm.entry_row_count() + 1 {
                break;
            }
        }
        for id in path {
            self.by_id.insert(id, found.clone());
        }
        found
    }
}

fn own_model(e: &session_store::EntryRef<'_>) -> Option<String> {
    use session_format::entry::EntryType;
    let join = |p: Option<&JsValue>, m: Option<&JsValue>| {
        let m = m.and_then(JsValue::as_str_lossy)?;
        Some(match p.and_then(JsValue::as_str_lossy) {
            Some(p) if !p.is_empty() => format!("{p}/{m}"),
            _ => m.into_owned(),
        })
    };
    match e.entry_type() {
        EntryType::Message if e.is_assistant_message() => {
            let v = e.raw_value().ok()?;
            let m = v.get("message")?;
            join(m.get("provider"), m.get("model"))
        }
        EntryType::ModelChange => {
            let v = e.raw_value().ok()?;
            join(v.get("provider"), v.get("modelId"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_piece_splits_at_what_json_may_escape() {
        assert_eq!(safe_piece(b"ab\"cdef/g"), b"cdef");
        assert_eq!(safe_piece(b"xy\\z"), b"xy");
        assert_eq!(safe_piece(b"\n"), b"");
    }

    #[test]
    fn printable_u_escapes_make_a_line_a_candidate() {
        assert!(has_printable_u_escape(br#""caf\u00e9""#));
        assert!(!has_printable_u_escape(br#""a\u0001\u001f""#));
        assert!(has_printable_u_escape(br#""\u0020""#));
        // A cut-off escape is kept as a candidate (the filter errs on the side of parsing).
        assert!(has_printable_u_escape(br#""\u00"#));
        assert!(has_printable_u_escape(br#""\ud83d\ude00""#));
    }

    #[test]
    fn snippets_keep_n_characters() {
        assert_eq!(tail_chars("héllo", 2), "lo");
        assert_eq!(tail_chars("hé", 5), "hé");
        assert_eq!(tail_chars("abc", 0), "");
        assert_eq!(head_chars("héllo", 2), "hé");
        assert_eq!(head_chars("h", 3), "h");
    }
}
