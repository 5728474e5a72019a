//! Rows in file order: each keeps its exact bytes (a span of the file buffer, or owned bytes for
//! rows created or rewritten in this process) plus the little the index needs, read with the
//! cheap envelope scan. Full parses happen only on demand, and at load time only for the rare
//! rows whose navigation meaning needs more than the envelope (leaf controls, labels, rows
//! carrying `appendMode`, `message` rows whose `message` is not an object).
//!
//! Classification follows OpenClaw 2026.6.11 (openclaw-jsonl.md §1.5 "Gen J (bundle)";
//! FINDINGS a, e, i): the first parsed row is the header when it is `{type:"session", id:string}`;
//! a known type with a non-empty string id is an entry whatever its body; `reset` rows are
//! parent-linked opaque rows; `type:"leaf"` rows are leaf controls when their shape checks out.

use session_format::entry::EntryType;
use session_format::json::{
    Envelope, EnvelopeScanner, Field, JsStr, JsString, JsValue, ValueKind, parse_value,
    to_json_string,
};
use session_format::line::{LineContent, LineError, LineReader};
use session_format::migrate::{
    MigrationIds, MigrationReport, MigrationRow, js_version_number, migrate_with,
};
use session_format::row::{RowClass, classify_in};

use crate::deep::take;
use crate::id::Id;

/// A `parentId`-like field as the row holds it.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub(crate) enum Parent {
    /// No such key.
    #[default]
    Absent,
    /// `null`.
    Null,
    /// A string.
    Str(Id),
    /// A number, boolean, array or object.
    Other,
}

impl Parent {
    pub(crate) fn from_field(f: &Field<'_>) -> Self {
        match f {
            Field::Absent => Parent::Absent,
            Field::Null => Parent::Null,
            Field::Str(s) => Parent::Str(Id::from_js_str(s)),
            Field::Other => Parent::Other,
        }
    }

    /// The value as a reference id (`null` and anything not a string give `None`).
    pub(crate) fn as_id(&self) -> Option<&Id> {
        match self {
            Parent::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// What a `message` row's `message` is, as far as the index and the context builder care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MsgShape {
    /// An object whose `role` is `"assistant"`.
    Assistant,
    /// Any other object.
    Object,
    /// `null`.
    Null,
    /// No `message` key.
    Missing,
    /// A string, number, boolean or array.
    Scalar,
}

/// A `message` row's `message.role` as the envelope scan read it at load time (the top-level
/// `message` object's own `role` property, duplicate keys resolved as `JSON.parse` does).
///
/// The roles pi and OpenClaw write have a variant each; any other string, and a `role` that is
/// not a string, is [`MessageRole::Other`] (read the row to see it). [`MessageRole::None`]: the
/// row has no `message` object, or its `role` is absent or `null`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MessageRole {
    /// `"user"`.
    User,
    /// `"assistant"`.
    Assistant,
    /// `"toolResult"`.
    ToolResult,
    /// `"bashExecution"`.
    BashExecution,
    /// `"custom"`.
    Custom,
    /// `"branchSummary"`.
    BranchSummary,
    /// `"compactionSummary"`.
    CompactionSummary,
    /// Another string, or a value that is not a string.
    Other,
    /// No role.
    None,
}

impl MessageRole {
    /// The role of a `message.role` field as the envelope reads it.
    pub(crate) fn of(f: &Field<'_>) -> Self {
        match f {
            Field::Absent | Field::Null => MessageRole::None,
            Field::Other => MessageRole::Other,
            Field::Str(s) => match s.as_wtf8() {
                b"user" => MessageRole::User,
                b"assistant" => MessageRole::Assistant,
                b"toolResult" => MessageRole::ToolResult,
                b"bashExecution" => MessageRole::BashExecution,
                b"custom" => MessageRole::Custom,
                b"branchSummary" => MessageRole::BranchSummary,
                b"compactionSummary" => MessageRole::CompactionSummary,
                _ => MessageRole::Other,
            },
        }
    }

    /// The role's text for the named variants; `None` for [`MessageRole::Other`] and
    /// [`MessageRole::None`].
    pub fn as_str(self) -> Option<&'static str> {
        Some(match self {
            MessageRole::User => "user",
            MessageRole::Assistant => "assistant",
            MessageRole::ToolResult => "toolResult",
            MessageRole::BashExecution => "bashExecution",
            MessageRole::Custom => "custom",
            MessageRole::BranchSummary => "branchSummary",
            MessageRole::CompactionSummary => "compactionSummary",
            MessageRole::Other | MessageRole::None => return None,
        })
    }
}

/// The parts of a `label` row the index needs.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LabelMeta {
    /// `targetId` when it is a string.
    pub(crate) target: Option<Id>,
    /// `label` (any JSON value), absent = `None`.
    pub(crate) label: Option<JsValue>,
    /// `timestamp` (any JSON value), absent = `None`.
    pub(crate) timestamp: Option<JsValue>,
}

/// A recognised entry.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct EntryMeta {
    pub(crate) ty: EntryType,
    pub(crate) id: Id,
    pub(crate) parent: Parent,
    /// `appendMode === "side"`.
    pub(crate) side: bool,
    /// For `message` rows.
    pub(crate) msg: Option<MsgShape>,
    /// For `message` rows: `message.role` ([`MessageRole::None`] for other rows).
    pub(crate) role: MessageRole,
    /// For `label` rows (boxed: rare, and large next to the rest of the row).
    pub(crate) label: Option<Box<LabelMeta>>,
}

/// A leaf control (openclaw-jsonl.md §1.4): `{type:"leaf", id, parentId, targetId,
/// appendParentId?, appendMode?}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LeafMeta {
    pub(crate) id: Id,
    pub(crate) parent: Option<Id>,
    pub(crate) target: Option<Id>,
    /// `None` = key absent; `Some(None)` = `null`.
    pub(crate) append_parent: Option<Option<Id>>,
    pub(crate) side: bool,
}

/// How the index treats a row.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum RowKind {
    /// Not JSON: kept in place and re-emitted verbatim (boxed: rare, and large next to the
    /// rest of the row).
    Malformed(Box<LineError>),
    /// The session header.
    Header,
    /// A recognised entry.
    Entry(EntryMeta),
    /// A known type without an id in a v<2 file, before migration.
    Legacy,
    /// A valid leaf control (boxed: rare, and large next to the rest of the row).
    Leaf(Box<LeafMeta>),
    /// A parent-linked opaque row (`id` + `parentId`, type not session/leaf).
    Linked { id: Id, parent: Option<Id> },
    /// Any other JSON row.
    Opaque {
        /// The row is an object.
        object: bool,
        /// Its `type` is `"session"`.
        session: bool,
        /// Its `parentId`.
        parent: Parent,
    },
}

impl RowKind {
    pub(crate) fn entry(&self) -> Option<&EntryMeta> {
        match self {
            RowKind::Entry(e) => Some(e),
            _ => None,
        }
    }

    /// The row's `type` is `"session"` (the header or another session row).
    pub(crate) fn is_session_typed(&self) -> bool {
        matches!(
            self,
            RowKind::Header | RowKind::Opaque { session: true, .. }
        )
    }

    /// A row of `fileEntries` in the reference (header, recognised or legacy entries).
    pub(crate) fn is_file_entry(&self) -> bool {
        matches!(self, RowKind::Header | RowKind::Entry(_) | RowKind::Legacy)
    }
}

/// One row: 64 bytes (pinned by a test), as a 200 MB transcript holds ~150,000 of them.
///
/// A row read from the file is a span of the manager's file buffer (`off..off + len`) whose
/// `JSON.parse` text is the whole span. The rest own their bytes ([`Owned`]): rows created or
/// re-serialised in this process, rows read from a tail, and the rare file rows whose text
/// `JSON.parse` sees is trimmed (JavaScript whitespace or a BOM around the first and last
/// non-blank lines) or that are 4 GiB or longer. Line numbers past `u32::MAX` read as
/// `u32::MAX`.
#[derive(Clone, Debug)]
pub(crate) struct Row {
    /// The byte offset in the file: the span's start, or for an owned row its position when
    /// known (see [`Row::pos`]).
    off: usize,
    /// The bytes of a row that is not a plain span of the buffer.
    owned: Option<Box<Owned>>,
    /// The span's length (0 for owned rows).
    len: u32,
    /// 1-based line number, 0 when the row has no position.
    line: u32,
    pub(crate) kind: RowKind,
}

/// The bytes of a row that is not a plain span of the file buffer.
#[derive(Clone, Debug)]
struct Owned {
    bytes: Box<[u8]>,
    /// The `JSON.parse` text is `bytes[lead..bytes.len() - trail]`.
    lead: usize,
    trail: usize,
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Row {
    /// A row that is the span `start..end` of the file buffer, at 1-based `line`, whose
    /// `JSON.parse` text is `json` (relative to the span); a copy of the bytes when that text
    /// is trimmed or the span is 4 GiB or longer.
    fn span(
        buf: &[u8],
        (start, end): (usize, usize),
        line: usize,
        json: (usize, usize),
        kind: RowKind,
    ) -> Row {
        let mut row = match u32::try_from(end - start) {
            Ok(len) if json == (0, end - start) => Row {
                off: start,
                owned: None,
                len,
                line: 0,
                kind,
            },
            _ => Row::owned(buf.get(start..end).unwrap_or(&[]).into(), json, kind),
        };
        row.off = start;
        row.line = to_u32(line).max(1);
        row
    }

    /// A row owning `bytes`, without a position, whose `JSON.parse` text is `json`.
    fn owned(bytes: Box<[u8]>, json: (usize, usize), kind: RowKind) -> Row {
        let trail = bytes.len().saturating_sub(json.1);
        Row {
            off: 0,
            owned: Some(Box::new(Owned {
                bytes,
                lead: json.0,
                trail,
            })),
            len: 0,
            line: 0,
            kind,
        }
    }

    /// The row's bytes (without the line feed).
    pub(crate) fn bytes<'a>(&'a self, buf: &'a [u8]) -> &'a [u8] {
        match &self.owned {
            None => buf
                .get(self.off..self.off + self.len as usize)
                .unwrap_or(&[]),
            Some(o) => &o.bytes,
        }
    }

    /// The bytes `JSON.parse` sees.
    pub(crate) fn json<'a>(&'a self, buf: &'a [u8]) -> &'a [u8] {
        match &self.owned {
            None => self.bytes(buf),
            Some(o) => {
                let end = o.bytes.len().saturating_sub(o.trail);
                o.bytes.get(o.lead..end).unwrap_or(&o.bytes)
            }
        }
    }

    /// For a row that holds a line of the file buffer `buf` as it was read: the line's span in
    /// `buf` and the span of its `JSON.parse` text relative to the line. `None` for rows created
    /// or re-serialised in this process (and for owned rows whose bytes are not at their
    /// position in `buf`).
    pub(crate) fn file_span(&self, buf: &[u8]) -> Option<((usize, usize), (usize, usize))> {
        if self.line == 0 {
            return None;
        }
        match &self.owned {
            None => Some((
                (self.off, self.off + self.len as usize),
                (0, self.len as usize),
            )),
            Some(o) => {
                let end = self.off.checked_add(o.bytes.len())?;
                (buf.get(self.off..end)? == &*o.bytes).then(|| {
                    (
                        (self.off, end),
                        (o.lead, o.bytes.len().saturating_sub(o.trail)),
                    )
                })
            }
        }
    }

    /// The `JSON.parse` text reaches the end of the row (no end trim was needed to read it).
    pub(crate) fn untrimmed(&self) -> bool {
        self.owned.as_ref().is_none_or(|o| o.trail == 0)
    }

    /// 1-based line number and byte offset, for rows read from the file (or placed in it by
    /// this process).
    pub(crate) fn pos(&self) -> Option<(usize, usize)> {
        (self.line != 0).then_some((self.line as usize, self.off))
    }

    /// Gives an owned row the position it has in the file (`None`: none). A span's offset is
    /// its start and stays so; only its line changes.
    pub(crate) fn set_pos(&mut self, pos: Option<(usize, usize)>) {
        match pos {
            None => self.line = 0,
            Some((line, off)) => {
                self.line = to_u32(line).max(1);
                if self.owned.is_some() {
                    self.off = off;
                }
            }
        }
    }

    /// Parses the row.
    pub(crate) fn value(&self, buf: &[u8]) -> Result<JsValue, session_format::json::JsonError> {
        parse_value(self.json(buf))
    }

    /// A row created from a value (serialised with `JSON.stringify` rules).
    pub(crate) fn from_value(value: &JsValue) -> Row {
        Row::from_owned(to_json_string(value).into_bytes(), 3.0)
    }

    /// A row from owned bytes that are one valid JSON text; `version` is the header version
    /// (for legacy classification).
    pub(crate) fn from_owned(bytes: Vec<u8>, version: f64) -> Row {
        let len = bytes.len();
        let mut scanner = EnvelopeScanner::new();
        let kind = match scanner.scan(&bytes) {
            Ok(env) => classify_row(&env, &bytes, version, false),
            Err(error) => RowKind::Malformed(Box::new(LineError {
                line: 0,
                byte_offset: error.offset,
                error,
                torn: false,
                nul_padded: false,
            })),
        };
        Row::owned(bytes.into_boxed_slice(), (0, len), kind)
    }

    /// A copy of this row with one top-level key set (in place when it exists, else appended),
    /// serialised afresh.
    pub(crate) fn with_keys(
        &self,
        buf: &[u8],
        keys: &[(&str, Option<JsValue>)],
    ) -> Result<Row, session_format::json::JsonError> {
        let mut value = self.value(buf)?;
        if let Some(obj) = value.as_object_mut() {
            for (k, v) in keys {
                if let Some(v) = v {
                    obj.insert(*k, v.clone());
                }
            }
        }
        let mut row = Row::from_value(&value);
        row.set_pos(self.pos());
        Ok(row)
    }
}

fn field_id(f: &Field<'_>) -> Option<Id> {
    f.as_js_str().map(Id::from_js_str)
}

/// Parses a leaf-control row exactly as OpenClaw 2026.6.11's `parseOpaqueLeafEntry`: an object
/// with `type:"leaf"`, a non-empty string `id`, `parentId` and `targetId` each `null` or a
/// string, `appendParentId` absent/`null`/string, `appendMode` absent or `"side"`.
pub(crate) fn parse_leaf(value: &JsValue) -> Option<LeafMeta> {
    let obj = value.as_object()?;
    let text = |k: &str| -> Option<Option<Id>> {
        match obj.get(k) {
            Some(JsValue::Null) => Some(None),
            Some(JsValue::String(s)) => Some(Some(Id::new(s.clone()))),
            _ => None,
        }
    };
    if obj.get_str("type").as_deref() != Some("leaf") {
        return None;
    }
    let id = match obj.get("id") {
        Some(JsValue::String(s)) if !s.is_empty() => Id::new(s.clone()),
        _ => return None,
    };
    let parent = text("parentId")?;
    let target = text("targetId")?;
    let append_parent = match obj.get("appendParentId") {
        None => None,
        Some(_) => Some(text("appendParentId")?),
    };
    let side = match obj.get("appendMode") {
        None => false,
        Some(JsValue::String(s)) if *s == "side" => true,
        Some(_) => return None,
    };
    Some(LeafMeta {
        id,
        parent,
        target,
        append_parent,
        side,
    })
}

/// The label parts of a parsed `label` row (moved out, not copied).
fn label_meta(mut value: JsValue) -> LabelMeta {
    LabelMeta {
        target: value
            .get("targetId")
            .and_then(|v| v.as_js_string().map(|s| Id::new(s.clone()))),
        label: take(&mut value, "label"),
        timestamp: take(&mut value, "timestamp"),
    }
}

/// Classifies one parsed row that is not the header. `json` is the text the envelope was read
/// from (parsed fully only when the envelope is not enough). `first_header` marks the header.
pub(crate) fn classify_row(
    env: &Envelope<'_>,
    json: &[u8],
    version: f64,
    first_header: bool,
) -> RowKind {
    classify_row_after(env, json, version, first_header, None)
}

/// As [`classify_row`]; `prev` is the id of the entry before this row, shared (not copied) when
/// this row's `parentId` names it, as it does along every chain.
fn classify_row_after(
    env: &Envelope<'_>,
    json: &[u8],
    version: f64,
    first_header: bool,
    prev: Option<&Id>,
) -> RowKind {
    if first_header {
        return RowKind::Header;
    }
    let opaque = || RowKind::Opaque {
        object: env.kind == ValueKind::Object,
        session: env.r#type.as_str() == Some("session"),
        parent: Parent::from_field(&env.parent_id),
    };
    match classify_in(env, version) {
        RowClass::Entry(ty) => {
            let id = field_id(&env.id).unwrap_or_else(|| Id::from(""));
            let parent = match (&env.parent_id, prev) {
                (Field::Str(p), Some(prev)) if p.as_wtf8() == prev.as_bytes() => {
                    Parent::Str(prev.clone())
                }
                (f, _) => Parent::from_field(f),
            };
            let needs_parse = ty == EntryType::Label
                || (ty == EntryType::Message && matches!(env.role, Field::Absent));
            let full = if needs_parse {
                parse_value(json).ok()
            } else {
                None
            };
            // `appendMode` as the top-level property reads (the envelope resolves duplicate
            // keys and escapes as `JSON.parse` does).
            let side = env.append_mode.as_js_str().is_some_and(|m| *m == "side");
            let msg = (ty == EntryType::Message).then(|| match (&env.role, &full) {
                (Field::Str(r), _) if r == "assistant" => MsgShape::Assistant,
                (Field::Absent, Some(v)) => match v.get("message") {
                    None => MsgShape::Missing,
                    Some(JsValue::Null) => MsgShape::Null,
                    Some(JsValue::Object(_)) => MsgShape::Object,
                    Some(_) => MsgShape::Scalar,
                },
                _ => MsgShape::Object,
            });
            let role = match (&env.role, &full) {
                _ if ty != EntryType::Message => MessageRole::None,
                // No role in the envelope: the full parse says why (no `message` object, or
                // no `role` in it).
                (Field::Absent, Some(v)) => v
                    .get("message")
                    .and_then(|m| m.as_object())
                    .and_then(|m| m.get("role"))
                    .map_or(MessageRole::None, |r| match r {
                        JsValue::Null => MessageRole::None,
                        JsValue::String(s) => MessageRole::of(&Field::Str(JsStr::from(s))),
                        _ => MessageRole::Other,
                    }),
                (f, _) => MessageRole::of(f),
            };
            let label = if ty == EntryType::Label {
                full.map(|v| Box::new(label_meta(v)))
            } else {
                None
            };
            RowKind::Entry(EntryMeta {
                ty,
                id,
                parent,
                side,
                msg,
                role,
                label,
            })
        }
        RowClass::LegacyEntry(_) => RowKind::Legacy,
        RowClass::LeafCandidate => match parse_value(json).ok().as_ref().and_then(parse_leaf) {
            Some(leaf) => RowKind::Leaf(Box::new(leaf)),
            None => opaque(),
        },
        RowClass::ParentLinkedOpaque => RowKind::Linked {
            id: field_id(&env.id).unwrap_or_else(|| Id::from("")),
            parent: field_id(&env.parent_id),
        },
        RowClass::Session | RowClass::Opaque => opaque(),
    }
}

/// The rows of a file buffer and what its first parsed row says.
#[derive(Debug)]
pub(crate) struct Loaded {
    pub(crate) rows: Vec<Row>,
    /// Index (in `rows`) of the header when the first parsed row is a readable header.
    pub(crate) header: Option<usize>,
    /// The buffer is empty or JavaScript whitespace only.
    pub(crate) blank: bool,
    /// Lines the envelope scan read (every non-blank line).
    pub(crate) scanned: usize,
}

/// Files at least this large are read on two threads by [`load`].
const SPLIT_MIN: usize = 4 << 20;

/// Reads every line of `buf` into rows (blank lines are not rows), classifying them against
/// the header's version. Large buffers are read in two halves on two threads (split after a
/// LF); the result is the same as one pass in file order.
pub(crate) fn load(buf: &[u8]) -> Loaded {
    load_split(buf, SPLIT_MIN)
}

/// [`load`], calling `on_first` on the calling thread with the rows of the first part and the
/// number of bytes that part covers when the buffer is read in two parts, while the second part
/// is still being read (the rows given are the first rows of the result, as they will be).
pub(crate) fn load_with(buf: &[u8], on_first: impl FnOnce(&[Row], usize)) -> Loaded {
    let (header_at, version, first_non_blank) = find_header(buf);
    // The first part is a little shorter, as the calling thread goes on with `on_first`.
    let mid = split_point(buf, SPLIT_MIN, buf.len() / 32 * 15);
    load_at_with(buf, mid, header_at, version, first_non_blank, on_first)
}

/// [`load`], splitting the work when `buf` holds at least `split_min` bytes.
pub(crate) fn load_split(buf: &[u8], split_min: usize) -> Loaded {
    let (header_at, version, first_non_blank) = find_header(buf);
    let mid = split_point(buf, split_min, buf.len() / 2);
    load_at(buf, mid, header_at, version, first_non_blank)
}

/// Just after the first LF at or after `near`, when `buf` holds at least `split_min` bytes.
fn split_point(buf: &[u8], split_min: usize, near: usize) -> Option<usize> {
    if buf.len() >= split_min {
        memchr::memchr(b'\n', buf.get(near..).unwrap_or_default()).map(|i| near + i + 1)
    } else {
        None
    }
}

/// The offset of the header line (the first line that parses, when it reads as a header), the
/// version it gives every other row, and the offset of the first non-blank line.
fn find_header(buf: &[u8]) -> (Option<usize>, f64, Option<usize>) {
    let mut first_non_blank: Option<usize> = None;
    for line in LineReader::new(buf) {
        match line.content {
            LineContent::Blank => {}
            LineContent::Malformed(_) => {
                first_non_blank.get_or_insert(line.raw.offset);
            }
            LineContent::Json(env) => {
                first_non_blank.get_or_insert(line.raw.offset);
                if !session_format::row::is_readable_header(&env) {
                    return (None, 3.0, first_non_blank);
                }
                // `header_version`: `version ?? 1` of the parsed header.
                let version = match parse_value(line.json) {
                    Ok(v) => js_version_number(v.get("version")),
                    Err(_) => 3.0,
                };
                return (Some(line.raw.offset), version, first_non_blank);
            }
        }
    }
    (None, 3.0, first_non_blank)
}

/// The rest of [`load_split`], with the split point (just after a LF) chosen.
fn load_at(
    buf: &[u8],
    mid: Option<usize>,
    header_at: Option<usize>,
    version: f64,
    first_non_blank: Option<usize>,
) -> Loaded {
    load_at_with(buf, mid, header_at, version, first_non_blank, |_, _| {})
}

/// [`load_at`], calling `on_first` as [`load_with`] does.
fn load_at_with(
    buf: &[u8],
    mid: Option<usize>,
    header_at: Option<usize>,
    version: f64,
    first_non_blank: Option<usize>,
    on_first: impl FnOnce(&[Row], usize),
) -> Loaded {
    // Only a split after the first non-blank line keeps the halves independent.
    let mid = mid.filter(|&m| m < buf.len() && first_non_blank.is_some_and(|f| f < m));
    let (rows, scanned) = match mid {
        None => {
            let (rows, scanned, _) = load_range(buf, 0, buf.len(), false, header_at, version);
            (rows, scanned)
        }
        Some(mid) => {
            let (first, second) = std::thread::scope(|s| {
                let second = s.spawn(|| {
                    let part = (mid, buf.len());
                    load_range_chunked(buf, part, true, header_at, version, Some(CHUNK_ROWS))
                });
                let first = load_range(buf, 0, mid, false, header_at, version);
                on_first(&first.0, mid);
                (first, second.join())
            });
            let (mut rows, scanned, first_lines) = first;
            match second {
                Ok((more, more_scanned, _)) => {
                    // Lines before `mid` (blank ones included) precede the second half's.
                    let base = first_lines;
                    rows.reserve_exact(more_scanned);
                    for part in more {
                        rows.extend(part.into_iter().map(|mut row| {
                            if row.line != 0 {
                                row.line = to_u32(row.line as usize + base);
                            }
                            if let RowKind::Malformed(e) = &mut row.kind {
                                e.line += base;
                            }
                            row
                        }));
                    }
                    (rows, scanned + more_scanned)
                }
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
    };
    let header =
        header_at.and_then(|_| rows.iter().position(|r| matches!(r.kind, RowKind::Header)));
    Loaded {
        rows,
        header,
        blank: first_non_blank.is_none(),
        scanned,
    }
}

/// The rows of the lines starting in `start..end` (see [`LineReader::range`]), the row at
/// offset `header_at` being the header; returns them, how many lines were scanned, and how
/// many lines (blank ones included) the range holds.
fn load_range(
    buf: &[u8],
    start: usize,
    end: usize,
    after_non_blank: bool,
    header_at: Option<usize>,
    version: f64,
) -> (Vec<Row>, usize, usize) {
    let (chunks, scanned, lines) =
        load_range_chunked(buf, (start, end), after_non_blank, header_at, version, None);
    // One vector (no chunk size).
    let mut chunks = chunks.into_iter();
    let mut rows = chunks.next().unwrap_or_default();
    for more in chunks {
        rows.extend(more);
    }
    (rows, scanned, lines)
}

/// Rows of the second part of a split load, in vectors of this many rows (1 MiB): moved into
/// the first part's vector one at a time, each freed once moved, so the move holds at most
/// one of them beside the whole.
const CHUNK_ROWS: usize = 1 << 14;

/// [`load_range`] over `start..end`, the rows in vectors of `chunk` rows each (the last one
/// shorter), or in one vector for `None`.
fn load_range_chunked(
    buf: &[u8],
    (start, end): (usize, usize),
    after_non_blank: bool,
    header_at: Option<usize>,
    version: f64,
    chunk: Option<usize>,
) -> (Vec<Vec<Row>>, usize, usize) {
    let chunk = chunk.unwrap_or(usize::MAX).max(1);
    // About one row per KiB in real transcripts; the vector grows past that if needed.
    let mut rows: Vec<Row> = Vec::with_capacity(((end - start) / 1024 + 16).min(chunk));
    let mut full: Vec<Vec<Row>> = Vec::new();
    // Where the last entry is (`None`: in `rows`, else in that vector of `full`), whose id a
    // `parentId` naming it shares.
    let mut prev: Option<(Option<usize>, usize)> = None;
    let mut scanned = 0;
    let mut lines = 0;
    for line in LineReader::range(buf, start, end, after_non_blank) {
        lines = line.raw.number;
        let start = line.raw.offset;
        let end = start + line.raw.bytes.len();
        let json_off = line.json.as_ptr() as usize - line.raw.bytes.as_ptr() as usize;
        let json = (json_off, json_off + line.json.len());
        let number = line.raw.number;
        let kind = match line.content {
            LineContent::Blank => continue,
            LineContent::Malformed(err) => RowKind::Malformed(Box::new(err)),
            LineContent::Json(env) => {
                let prev_id = prev
                    .and_then(|(v, k)| match v {
                        None => rows.get(k),
                        Some(v) => full.get(v)?.get(k),
                    })
                    .and_then(|r| r.kind.entry())
                    .map(|e| &e.id);
                let kind =
                    classify_row_after(&env, line.json, version, header_at == Some(start), prev_id);
                if let RowKind::Entry(_) = &kind {
                    prev = Some((None, rows.len()));
                }
                kind
            }
        };
        rows.push(Row::span(buf, (start, end), number, json, kind));
        if rows.len() == chunk {
            if let Some((v @ None, _)) = &mut prev {
                *v = Some(full.len());
            }
            full.push(std::mem::replace(&mut rows, Vec::with_capacity(chunk)));
        }
        scanned += 1;
    }
    full.push(rows);
    (full, scanned, lines)
}

/// Rows of `tail`: bytes a file gained after its first `offset_base` bytes, which held
/// `line_base` line feeds. Every line is read exactly as a full load of the whole file reads it
/// (the tail never starts the file, so no leading whitespace is trimmed; the last line is the
/// file's last line), numbered and placed as in the file, classified against the header's
/// `version`. Each row owns its bytes (the tail is not kept). Blank lines are not rows. Returns
/// the rows and the number of lines the envelope scan read.
pub(crate) fn load_tail(
    tail: &[u8],
    version: f64,
    line_base: usize,
    offset_base: usize,
) -> (Vec<Row>, usize) {
    // A one-line JSON lead makes the reader treat the tail as lines after the file's first
    // non-blank line; it is skipped below.
    const LEAD: &[u8] = b"0\n";
    let mut src = Vec::with_capacity(tail.len() + LEAD.len());
    src.extend_from_slice(LEAD);
    src.extend_from_slice(tail);
    let mut out = Vec::new();
    let mut scanned = 0;
    for line in LineReader::new(&src).skip(1) {
        let rel = line.raw.offset - LEAD.len();
        let number = line_base + line.raw.number - 1;
        let json_off = line.json.as_ptr() as usize - line.raw.bytes.as_ptr() as usize;
        let json = (json_off, json_off + line.json.len());
        let kind = match line.content {
            LineContent::Blank => continue,
            LineContent::Malformed(mut err) => {
                err.line = number;
                err.byte_offset = err.byte_offset - LEAD.len() + offset_base;
                RowKind::Malformed(Box::new(err))
            }
            LineContent::Json(env) => classify_row(&env, line.json, version, false),
        };
        scanned += 1;
        let mut row = Row::owned(line.raw.bytes.into(), json, kind);
        row.set_pos(Some((number, offset_base + rel)));
        out.push(row);
    }
    (out, scanned)
}

/// The header's version as the reference compares it (`version ?? 1`).
pub(crate) fn header_version(header: &Row, buf: &[u8]) -> f64 {
    match header.value(buf) {
        Ok(v) => js_version_number(v.get("version")),
        Err(_) => 3.0,
    }
}

/// Re-classifies JSON rows after the header changed (corrupt-header recovery): the row at
/// `header` becomes the header, the others are classified against its version.
pub(crate) fn reclassify(rows: &mut [Row], buf: &[u8], header: usize) {
    let version = rows.get(header).map_or(3.0, |h| header_version(h, buf));
    let mut scanner = EnvelopeScanner::new();
    for (i, row) in rows.iter_mut().enumerate() {
        if matches!(row.kind, RowKind::Malformed(_)) {
            continue;
        }
        let json = row.json(buf);
        if let Ok(env) = scanner.scan(json) {
            let kind = classify_row(&env, json, version, i == header);
            row.kind = kind;
        }
    }
}

/// Runs the v1→v2→v3 migrations on the header and the reference's `fileEntries` (header,
/// recognised and legacy rows), as OpenClaw 2026.6.11 does on open (openclaw-jsonl.md §1.9;
/// FINDINGS b). Changed rows are serialised afresh; all other rows keep their bytes. Returns
/// what happened, or `None` when the header is at version 3 or later.
///
/// This is where the ids of a version 1 file's rows are made, for the read-only open and the
/// writable one alike: derived from `buf` (the whole file) and each row's 1-based line
/// ([`session_format::migrate::MigrationIds::Derived`], [`session_format::migrate::derived_entry_id`]),
/// so every read of the same bytes gives the same ids; the reference makes random ones.
///
/// A compaction's `firstKeptEntryIndex` counts parsed rows (opaque ones included), as the
/// reference's `fileEntriesByOriginalIndex` does; it falls back to the file-entry index when it
/// names an opaque row, as the reference does.
pub(crate) fn migrate_rows(
    rows: &mut [Row],
    buf: &[u8],
    header: usize,
) -> Result<Option<MigrationReport>, (usize, session_format::json::JsonError)> {
    let header_value = rows[header].value(buf).map_err(|e| (header, e))?;
    if !session_format::migrate::needs_migration(&header_value) {
        return Ok(None);
    }
    // Original index (among parsed rows) → position among file entries.
    let mut file_pos_of_original: Vec<Option<usize>> = Vec::new();
    let mut file_rows: Vec<usize> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        if matches!(row.kind, RowKind::Malformed(_)) {
            continue;
        }
        if row.kind.is_file_entry() {
            file_pos_of_original.push(Some(file_rows.len()));
            file_rows.push(i);
        } else {
            file_pos_of_original.push(None);
        }
    }
    let mut mrows = Vec::with_capacity(file_rows.len());
    for &i in &file_rows {
        let mut value = if i == header {
            header_value.clone()
        } else {
            rows[i].value(buf).map_err(|e| (i, e))?
        };
        let translated = match value.get("firstKeptEntryIndex") {
            Some(JsValue::Number(n)) if *n >= 0.0 && n.fract() == 0.0 => {
                file_pos_of_original.get(*n as usize).copied().flatten()
            }
            _ => None,
        };
        if let (Some(k), Some(obj)) = (translated, value.as_object_mut()) {
            obj.insert("firstKeptEntryIndex", JsValue::Number(k as f64));
        }
        mrows.push(MigrationRow::new(value));
    }
    // Ids derived from the file's bytes and each row's line, so that every read of the same
    // unmigrated file shows the same ids (and a writable open writes those).
    let file_sha256 = session_format::migrate::sha256_hex(buf);
    let lines: Vec<Option<usize>> = file_rows
        .iter()
        .map(|&i| rows[i].pos().map(|p| p.0))
        .collect();
    let report = migrate_with(
        &mut mrows,
        MigrationIds::Derived {
            file_sha256: &file_sha256,
            lines: &lines,
        },
    );
    for (m, &i) in mrows.iter().zip(&file_rows) {
        if m.changed {
            let mut row = Row::from_owned(to_json_string(&m.value).into_bytes(), 3.0);
            row.set_pos(rows[i].pos());
            if i == header {
                row.kind = RowKind::Header;
            }
            rows[i] = row;
        }
    }
    Ok(report)
}

/// A string field of a row (the header's `id` or `cwd`).
pub(crate) fn header_string(row: &Row, buf: &[u8], key: &str) -> Option<String> {
    row.value(buf)
        .ok()?
        .get(key)?
        .as_str_lossy()
        .map(|s| s.into_owned())
}

/// A string field of a row, exactly (the header's `cwd`).
pub(crate) fn header_js_string(row: &Row, buf: &[u8], key: &str) -> Option<JsString> {
    match row.value(buf).ok()?.as_object_mut()?.remove(key)? {
        JsValue::String(s) => Some(s),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sizes the memory of a large open rests on (a 200 MB transcript: ~150,000 rows and
    /// as many ids): a row is 64 bytes (it was 112), an id one pointer, an entry's meta 40.
    #[test]
    fn row_and_id_sizes_are_pinned() {
        assert_eq!(std::mem::size_of::<Row>(), 64);
        assert_eq!(std::mem::size_of::<RowKind>(), 40);
        assert_eq!(std::mem::size_of::<EntryMeta>(), 40);
        assert_eq!(std::mem::size_of::<Id>(), 8);
        assert_eq!(std::mem::size_of::<Parent>(), 16);
    }

    #[test]
    fn message_role_is_the_role_a_full_parse_reads() {
        let head = br#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}"#;
        let cases: [(&[u8], MessageRole); 10] = [
            (br#"{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"x"}}"#, MessageRole::User),
            (br#"{"type":"message","id":"a","parentId":null,"message":{"role":"assistant"}}"#, MessageRole::Assistant),
            (br#"{"type":"message","id":"a","parentId":null,"message":{"role":"toolResult"}}"#, MessageRole::ToolResult),
            (br#"{"type":"message","id":"a","parentId":null,"message":{"role":"tool\u0052esult"}}"#, MessageRole::ToolResult),
            (br#"{"type":"message","id":"a","parentId":null,"message":{"role":"user","role":"bashExecution"}}"#, MessageRole::BashExecution),
            (br#"{"type":"message","id":"a","parentId":null,"message":{"role":"system"}}"#, MessageRole::Other),
            (br#"{"type":"message","id":"a","parentId":null,"message":{"role":7}}"#, MessageRole::Other),
            (br#"{"type":"message","id":"a","parentId":null,"message":{"role":null}}"#, MessageRole::None),
            (br#"{"type":"message","id":"a","parentId":null,"message":"user"}"#, MessageRole::None),
            (br#"{"type":"custom","id":"a","parentId":null,"message":{"role":"user"}}"#, MessageRole::None),
        ];
        for (line, want) in cases {
            let mut buf = head.to_vec();
            buf.push(b'\n');
            buf.extend_from_slice(line);
            let loaded = load(&buf);
            let role = loaded.rows[1].kind.entry().map(|e| e.role);
            assert_eq!(role, Some(want), "{}", String::from_utf8_lossy(line));
        }
        assert_eq!(MessageRole::ToolResult.as_str(), Some("toolResult"));
        assert_eq!(MessageRole::Other.as_str(), None);
        assert_eq!(MessageRole::None.as_str(), None);
    }

    /// A loaded buffer as comparable text.
    fn summary(l: &Loaded) -> String {
        format!("{:?} {:?} {} {}", l.rows, l.header, l.blank, l.scanned)
    }

    /// Reading a buffer in two halves gives exactly the rows of one pass, whatever line the
    /// split falls after: positions, line numbers, errors, the header and classification.
    #[test]
    fn split_load_equals_one_pass_at_every_line() {
        let cases: [&[u8]; 5] = [
            b"{\"type\":\"session\",\"version\":2,\"id\":\"s\"}\n\n{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"message\":{\"role\":\"assistant\"}}\n  \nnot json\n{\"type\":\"message\",\"id\":\"b\",\"parentId\":\"a\",\"appendMode\":\"side\",\"message\":{}}\n{\"type\":\"label\",\"id\":\"c\",\"parentId\":\"b\",\"targetId\":\"a\",\"label\":\"x\"}\n{\"type\":\"leaf\",\"id\":\"d\",\"parentId\":\"c\",\"targetId\":\"a\"}\n{\"broken\":\n{\"type\":\"message\",\"id\":\"e\",\"parentId\":\"b\",\"message\":{\"role\":\"user\"}}  \xc2\xa0\n\n",
            b"\xef\xbb\xbf  {\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"message\",\"id\":\"a\",\"parentId\":null}\n[1,2]\n\"str\"\n{\"type\":\"message\",\"id\":\"b\",\"parentId\":\"a\",\"message\":null}\n{\"type\":\"message\",\"id\":\"c\",\"parentId\":\"b\",\"message\":{\"role\":\"user\"}}\n{\"type\":\"message\",\"id\":\"d\",\"parentId\":\"c\"",
            b"garbage\n\n{\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"message\",\"id\":\"a\",\"parentId\":null}\n{\"type\":\"message\",\"id\":\"b\",\"parentId\":\"a\"}\n",
            b"\n\n   \n{\"type\":\"message\",\"id\":\"a\"}\n{\"type\":\"compaction\",\"id\":\"b\",\"parentId\":\"a\"}\n{\"type\":\"reset\",\"id\":\"r\",\"parentId\":\"b\"}\n",
            b"\n \n\t\n",
        ];
        for buf in cases {
            let whole = summary(&load_split(buf, usize::MAX));
            for (mid, _) in buf.iter().enumerate().filter(|(_, b)| **b == b'\n') {
                let (header_at, version, first) = find_header(buf);
                let split = summary(&load_at(buf, Some(mid + 1), header_at, version, first));
                assert_eq!(split, whole, "split after byte {mid}");
            }
            assert_eq!(summary(&load_split(buf, 0)), whole);
        }
    }

    /// Rows read in vectors of any size are the rows of one vector, ids shared across the
    /// vectors' boundaries as within them.
    #[test]
    fn chunked_rows_equal_one_vector() {
        let buf = b"{\"type\":\"session\",\"version\":3,\"id\":\"s\"}\n{\"type\":\"message\",\"id\":\"a\",\"parentId\":null}\n\n{\"type\":\"message\",\"id\":\"b\",\"parentId\":\"a\"}\nnot json\n{\"type\":\"message\",\"id\":\"c\",\"parentId\":\"b\"}\n{\"type\":\"reset\",\"id\":\"r\",\"parentId\":\"c\"}\n{\"type\":\"message\",\"id\":\"d\",\"parentId\":\"c\"}\n";
        let (header_at, version, _) = find_header(buf);
        let (whole, scanned, lines) = load_range(buf, 0, buf.len(), false, header_at, version);
        for chunk in 1..=whole.len() + 1 {
            let (parts, s, l) =
                load_range_chunked(buf, (0, buf.len()), false, header_at, version, Some(chunk));
            assert!(parts.iter().all(|p| p.len() <= chunk));
            let flat: Vec<Row> = parts.into_iter().flatten().collect();
            // b, c and d name the entry before them (d across the `reset` row).
            let mut shared = 0;
            let mut last: Option<&Id> = None;
            for e in flat.iter().filter_map(|r| r.kind.entry()) {
                if let (Some(p), Some(q)) = (last, e.parent.as_id())
                    && Id::same(p, q)
                {
                    shared += 1;
                }
                last = Some(&e.id);
            }
            assert_eq!(shared, 3, "chunk {chunk}");
            assert_eq!(format!("{flat:?}"), format!("{whole:?}"), "chunk {chunk}");
            assert_eq!((s, l), (scanned, lines));
        }
    }

    /// The two-thread path of [`load`] over every fixture of this crate equals one pass.
    #[test]
    fn split_load_equals_one_pass_on_fixtures() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut seen = 0;
        for p in session_test_support::files_with_extension(&dir, "jsonl") {
            let Ok(buf) = std::fs::read(&p) else { continue };
            assert_eq!(
                summary(&load_split(&buf, 0)),
                summary(&load_split(&buf, usize::MAX)),
                "{}",
                p.display()
            );
            seen += 1;
        }
        assert!(seen > 10, "only {seen} fixtures found");
    }
}
