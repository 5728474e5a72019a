//! What OpenClaw 2026.9.6's `openclaw doctor --session-sqlite import` stores for one legacy
//! JSONL transcript, re-derived without I/O (`openclaw-sqlite.md` §3, §4.2 steps 1–5, §4.6).
//!
//! Three steps, each a pure function of the file's bytes:
//! 1. [`read_transcript`]: the import's line reader. The file is decoded in
//!    [`READ_CHUNK_BYTES`] chunks by a fatal streaming UTF-8 decoder (a leading BOM stripped),
//!    split on `\n`, each piece trimmed with JavaScript `trim`, empty pieces skipped, each piece
//!    `JSON.parse`d, falsy values skipped. The first JSON error stops the read (the lines before
//!    it are the readable prefix); invalid UTF-8 stops it at the start of the chunk holding the
//!    bad byte: every line that had not ended before that chunk is lost (§4.6).
//! 2. [`derive()`]: the per-row normalisation and migration: the header made canonical (`id` =
//!    the session id, `type`, `timestamp`/`cwd` defaulted to `""`, `sessionId` deleted),
//!    assistant/toolResult string content wrapped into a text part, a toolResult object content
//!    wrapped into an array, then for recognised rows the v1→v2 migration (ids
//!    `<prefix>-<base36 row index>`, a linear `parentId` chain, `firstKeptEntryIndex` →
//!    `firstKeptEntryId`) and v2→v3 (`hookMessage` → `custom` with `customType: "hook"`, header
//!    `version: 3`); each row is then `JSON.stringify`d.
//! 3. The stage's repair pass and the database write, also in [`derive()`]: the legacy codex
//!    provider/api rename, an exact repeat of an earlier row with the same id dropped, a row
//!    whose text equals an earlier row's dropped (the write deduplicates by text), and a row
//!    whose id an earlier stored row already has refused (the identity table's primary key).
//!
//! The v1 ids depend on the absolute path of the file as doctor found it ([`v1_id_prefix`]).
//! Not modelled: the "broken prompt rewrite" repair (§4.2 step 4c), which fires only on user
//! text holding OpenClaw's internal runtime-context markers; such a session shows up as rows
//! that differ.
//!
//! [`line_changes`] tells which documented re-serialisations turned a source line into its
//! stored text (escapes, whitespace, number spellings, key order, duplicate keys).

use std::collections::{HashMap, HashSet};

use sha2::{Digest, Sha256};

use crate::js::{trim_js_end, trim_js_start};
use crate::json::{JsObject, JsValue, JsonError, number_to_string, parse_value, to_json_string};

/// The read size of doctor's line reader, in bytes (`JSONL_READ_CHUNK_BYTES`).
pub const READ_CHUNK_BYTES: usize = 65_536;

/// One physical line of the file: `offset..offset + len` holds its bytes without the `\n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineSpan {
    /// 1-based line number (lines end at `\n`).
    pub line: usize,
    /// Byte offset of the line's first byte in the file.
    pub offset: usize,
    /// Length in bytes, without the `\n`.
    pub len: usize,
    /// Whether a `\n` ends the line (false only for the file's last line).
    pub terminated: bool,
}

/// One row the reader yielded: a truthy parsed value.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadRow {
    /// Where the row is in the file.
    pub span: LineSpan,
    /// Its 0-based index among the yielded rows (doctor's `originalIndex`: the v1 ids and
    /// `firstKeptEntryIndex` count in it).
    pub index: usize,
    /// The parsed value.
    pub value: JsValue,
}

/// Why the reader stopped before the end of the file.
#[derive(Clone, Debug, PartialEq)]
pub enum ReadStop {
    /// A line is not JSON: it and every later line are not imported.
    Json {
        /// The line.
        span: LineSpan,
        /// The parser's error; its offset is within the trimmed line.
        error: JsonError,
        /// The line is the file's last and has no `\n` (a torn write).
        torn: bool,
    },
    /// Invalid UTF-8: the chunk holding the bad byte and everything after it are not imported.
    Utf8 {
        /// File offset of the first invalid byte (or of an incomplete sequence at the end).
        bad_offset: usize,
        /// File offset of the chunk doctor's decoder refused (a multiple of
        /// [`READ_CHUNK_BYTES`]); every line not ended before it is lost.
        chunk_offset: usize,
        /// The line number doctor's message gives (`<path>:<line>: TypeError …`): 1 + the
        /// number of lines ended before the chunk.
        line: usize,
    },
}

/// What [`read_transcript`] got from a file.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ReadResult {
    /// The yielded rows, in file order.
    pub rows: Vec<ReadRow>,
    /// Lines that parsed to a falsy value (`null`, `false`, `0`, `""`): skipped without a row.
    pub falsy: Vec<LineSpan>,
    /// Why the read stopped early; `None` when it reached the end.
    pub stop: Option<ReadStop>,
    /// Whether the file starts with a UTF-8 BOM (stripped by the decoder).
    pub bom: bool,
}

/// Every physical line of `bytes` (split on `\n`; a final line without `\n` included when it is
/// not empty).
pub fn line_spans(bytes: &[u8]) -> Vec<LineSpan> {
    let mut spans = Vec::new();
    let mut start = 0;
    let mut line = 1;
    for nl in memchr::memchr_iter(b'\n', bytes) {
        spans.push(LineSpan {
            line,
            offset: start,
            len: nl - start,
            terminated: true,
        });
        start = nl + 1;
        line += 1;
    }
    if start < bytes.len() {
        spans.push(LineSpan {
            line,
            offset: start,
            len: bytes.len() - start,
            terminated: false,
        });
    }
    spans
}

/// Where doctor's fatal streaming decoder fails on `bytes`, if it does: `(bad_offset,
/// chunk_offset)`. Chunks of [`READ_CHUNK_BYTES`] are decoded in turn; a sequence cut by a
/// chunk boundary carries over; an incomplete sequence at the end of the file fails at the
/// final flush, after the last chunk (`chunk_offset` = the file's length then).
pub fn utf8_failure(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut pending = 0usize; // start of not-yet-decoded bytes
    let mut chunk = 0usize;
    while chunk < bytes.len() {
        let end = (chunk + READ_CHUNK_BYTES).min(bytes.len());
        match std::str::from_utf8(&bytes[pending..end]) {
            Ok(_) => pending = end,
            Err(e) => match e.error_len() {
                Some(_) => return Some((pending + e.valid_up_to(), chunk)),
                None => pending += e.valid_up_to(),
            },
        }
        chunk = end;
    }
    (pending < bytes.len()).then_some((pending, bytes.len()))
}

/// Reads `bytes` as doctor's import reader does (module docs, step 1).
pub fn read_transcript(bytes: &[u8]) -> ReadResult {
    let bom = bytes.starts_with(b"\xEF\xBB\xBF");
    let failure = utf8_failure(bytes);
    // With a decoding failure only the lines ended before the refused chunk are read (the
    // decoder's pending text, the start of the line crossing the chunk, is dropped).
    let readable_end = failure.map(|(_, chunk)| chunk);
    let mut out = ReadResult {
        bom,
        ..ReadResult::default()
    };
    let mut index = 0;
    for span in line_spans(bytes) {
        let complete_before_failure = match readable_end {
            Some(end) => span.terminated && span.offset + span.len < end,
            None => true,
        };
        if !complete_before_failure {
            break;
        }
        let mut raw = &bytes[span.offset..span.offset + span.len];
        if span.offset == 0 && bom {
            raw = &raw[3..];
        }
        let text = trim_js_end(trim_js_start(raw));
        if text.is_empty() {
            continue;
        }
        match parse_value(text) {
            Ok(value) if !value.is_truthy() => out.falsy.push(span),
            Ok(value) => {
                out.rows.push(ReadRow { span, index, value });
                index += 1;
            }
            Err(error) => {
                out.stop = Some(ReadStop::Json {
                    span,
                    error,
                    torn: !span.terminated,
                });
                return out;
            }
        }
    }
    if let Some((bad_offset, chunk_offset)) = failure {
        let line = 1 + memchr::memchr_iter(b'\n', &bytes[..chunk_offset.min(bytes.len())]).count();
        out.stop = Some(ReadStop::Utf8 {
            bad_offset,
            chunk_offset,
            line,
        });
    }
    out
}

/// The v1 id prefix doctor uses for a file: the first 16 lowercase hex digits of SHA-256 over
/// the absolute path of the transcript as doctor found it (its bytes), a NUL, and the session
/// id (§3).
pub fn v1_id_prefix(source_path: &[u8], session_id: &str) -> String {
    let mut h = Sha256::new();
    h.update(source_path);
    h.update([0u8]);
    h.update(session_id.as_bytes());
    h.finalize()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `n` in base 36, lowercase (JavaScript `n.toString(36)` for a non-negative integer).
pub fn base36(mut n: usize) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[n % 36]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// Splits a v1 id `<16 hex>-<base36>` into its prefix and index.
pub fn parse_v1_id(id: &str) -> Option<(&str, usize)> {
    let (prefix, n) = id.split_once('-')?;
    if prefix.len() != 16
        || !prefix
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        return None;
    }
    if n.is_empty()
        || !n
            .bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
    {
        return None;
    }
    let index = usize::from_str_radix(n, 36).ok()?;
    (base36(index) == n).then_some((prefix, index))
}

/// A documented change doctor made to a row (besides re-serialisation, [`LineChange`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Transform {
    /// The header's `id`, `type`, `timestamp` or `cwd` set (defaults `""`), or its
    /// `sessionId` deleted.
    HeaderDefaults,
    /// The header's `version` set to 3 (2 on the way from v1).
    HeaderVersion,
    /// Assistant/toolResult content wrapped into an array.
    ContentWrapped,
    /// A v1 or headerless row got a generated `id` and `parentId`.
    V1Ids,
    /// A v1 compaction's `firstKeptEntryIndex` became `firstKeptEntryId` (or was dropped).
    FirstKeptEntryId,
    /// `hookMessage` became `custom`, or a `custom` message got `customType: "hook"`.
    HookMessage,
    /// The legacy codex provider or api renamed.
    CodexRename,
}

impl Transform {
    /// A short stable name (`--json`).
    pub fn name(self) -> &'static str {
        match self {
            Transform::HeaderDefaults => "header-defaults",
            Transform::HeaderVersion => "header-version",
            Transform::ContentWrapped => "content-wrapped",
            Transform::V1Ids => "v1-ids",
            Transform::FirstKeptEntryId => "first-kept-entry-id",
            Transform::HookMessage => "hook-message",
            Transform::CodexRename => "codex-rename",
        }
    }
}

/// Why a read row has no row of its own in the database.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Dropped {
    /// Same id and same text as an earlier row: the stage's repair drops it (§4.2 step 4b).
    RepeatedRow {
        /// The index (among the read rows) of the earlier row.
        of: usize,
    },
    /// Same text as an earlier stored row: the write skips it.
    SameText {
        /// The index of the earlier row.
        of: usize,
    },
    /// An earlier stored row has the same id with other text: the database refuses the row
    /// (its identity must be unique); doctor then reports `sqlite_transcript_count_mismatch`.
    IdConflict {
        /// The id.
        id: String,
        /// The index of the earlier row.
        of: usize,
    },
}

/// One read row as doctor stores it.
#[derive(Clone, Debug, PartialEq)]
pub struct DerivedRow {
    /// Index among the read rows ([`ReadRow::index`]).
    pub index: usize,
    /// Where the source line is.
    pub span: LineSpan,
    /// The text doctor stores (`JSON.stringify` of the normalised, migrated, repaired row).
    pub text: String,
    /// The documented changes made to the value, sorted.
    pub transforms: Vec<Transform>,
    /// The row's identity: the session id for the header, else its string `id`.
    pub id: Option<String>,
    /// The row's `type` (when a string).
    pub entry_type: Option<String>,
    /// The `message.role` of a message row.
    pub role: Option<String>,
    /// Whether the row is the header.
    pub header: bool,
    /// Whether the row is a recognised entry (migrated) rather than passed through unchanged.
    pub recognized: bool,
    /// Set when the row has no database row of its own.
    pub dropped: Option<Dropped>,
}

/// The rows doctor stores for one file.
#[derive(Clone, Debug, PartialEq)]
pub struct Derivation {
    /// Every read row in order, dropped ones included ([`DerivedRow::dropped`]).
    pub rows: Vec<DerivedRow>,
    /// The header's `version` as doctor took it (`1` without a number).
    pub source_version: f64,
    /// The header's index among the read rows (`None` for a headerless file, treated as v1).
    pub header_index: Option<usize>,
    /// The v1 id prefix used.
    pub id_prefix: String,
}

impl Derivation {
    /// The rows that have a database row, in `seq` order.
    pub fn stored(&self) -> impl Iterator<Item = &DerivedRow> {
        self.rows.iter().filter(|r| r.dropped.is_none())
    }

    /// Whether any row got generated v1 ids (whose prefix depends on the source path).
    pub fn has_v1_ids(&self) -> bool {
        self.rows
            .iter()
            .any(|r| r.transforms.contains(&Transform::V1Ids))
    }
}

fn is_session_type(v: &JsValue) -> bool {
    v.get("type")
        .and_then(JsValue::as_js_string)
        .is_some_and(|t| t == "session")
}

fn str_of<'a>(o: &'a JsObject, key: &str) -> Option<&'a crate::json::JsString> {
    o.get(key).and_then(JsValue::as_js_string)
}

fn is_str(o: &JsObject, key: &str) -> bool {
    str_of(o, key).is_some()
}

fn is_str_min1(o: &JsObject, key: &str) -> bool {
    str_of(o, key).is_some_and(|s| !s.is_empty())
}

fn is_opt_str(o: &JsObject, key: &str) -> bool {
    o.get(key).is_none_or(|v| matches!(v, JsValue::String(_)))
}

fn is_bool(o: &JsObject, key: &str) -> bool {
    matches!(o.get(key), Some(JsValue::Bool(_)))
}

/// `string | Array<{type: string, …}>`.
fn readable_content(v: Option<&JsValue>) -> bool {
    match v {
        Some(JsValue::String(_)) => true,
        Some(JsValue::Array(items)) => items
            .iter()
            .all(|i| i.as_object().is_some_and(|o| is_str(o, "type"))),
        _ => false,
    }
}

fn readable_message(v: Option<&JsValue>) -> bool {
    let Some(m) = v.and_then(JsValue::as_object) else {
        return false;
    };
    let Some(role) = str_of(m, "role") else {
        return false;
    };
    if role == "user" || role == "assistant" {
        readable_content(m.get("content"))
    } else if role == "toolResult" {
        is_str(m, "toolCallId")
            && is_str(m, "toolName")
            && is_bool(m, "isError")
            && matches!(m.get("content"), Some(JsValue::Array(_)))
    } else if role == "custom" {
        is_str(m, "customType") && readable_content(m.get("content"))
    } else if role == "bashExecution" {
        is_str(m, "command") && is_str(m, "output")
    } else {
        false
    }
}

const ENTRY_TYPES: [&str; 10] = [
    "message",
    "thinking_level_change",
    "model_change",
    "compaction",
    "reset",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
];

/// OpenClaw 2026.9.6's indexed session entry schema (`isIndexedSessionEntry`).
fn indexed_entry(v: &JsValue) -> bool {
    let Some(o) = v.as_object() else {
        return false;
    };
    if !is_str_min1(o, "id")
        || !o
            .get("parentId")
            .is_none_or(|p| matches!(p, JsValue::String(_) | JsValue::Null))
        || !is_opt_str(o, "timestamp")
    {
        return false;
    }
    let Some(t) = str_of(o, "type") else {
        return false;
    };
    match t.to_str_lossy().as_ref() {
        "message" => readable_message(o.get("message")),
        "thinking_level_change" => is_str_min1(o, "thinkingLevel"),
        "model_change" => is_str_min1(o, "provider") && is_str_min1(o, "modelId"),
        "compaction" => {
            is_str(o, "summary")
                && is_str_min1(o, "firstKeptEntryId")
                && matches!(o.get("tokensBefore"), Some(JsValue::Number(_)))
        }
        "reset" => {
            str_of(o, "reason").is_some_and(|r| {
                ["new", "reset", "idle", "daily", "cron-stale"]
                    .iter()
                    .any(|k| r == *k)
            }) && is_opt_str(o, "firstKeptEntryId")
        }
        "branch_summary" => is_str(o, "fromId") && is_str(o, "summary"),
        "custom" => is_str_min1(o, "customType"),
        "custom_message" => {
            is_str_min1(o, "customType")
                && readable_content(o.get("content"))
                && is_bool(o, "display")
        }
        "label" => is_str_min1(o, "targetId") && is_opt_str(o, "label"),
        "session_info" => is_opt_str(o, "name"),
        _ => false,
    }
}

/// A readable legacy (version < 3) entry (`isReadableLegacySessionEntry`).
fn readable_legacy_entry(v: &JsValue) -> bool {
    let Some(o) = v.as_object() else {
        return false;
    };
    let Some(t) = str_of(o, "type") else {
        return false;
    };
    if !ENTRY_TYPES.iter().any(|k| t == *k) {
        return false;
    }
    if t != "message" {
        return true;
    }
    match o.get("message").and_then(JsValue::as_object) {
        Some(m) if str_of(m, "role").is_some_and(|r| r == "hookMessage") => {
            readable_content(m.get("content"))
        }
        Some(_) => readable_message(o.get("message")),
        None => false,
    }
}

/// A leaf control row (`type: "leaf"`, string `id`, `parentId` and `targetId` string or null).
fn leaf_control(v: &JsValue) -> bool {
    let Some(o) = v.as_object() else {
        return false;
    };
    let str_or_null = |k: &str| matches!(o.get(k), Some(JsValue::String(_) | JsValue::Null));
    str_of(o, "type").is_some_and(|t| t == "leaf")
        && is_str_min1(o, "id")
        && str_or_null("parentId")
        && str_or_null("targetId")
}

/// `normalizeLoadedFileEntry`: content wrapping, applied to every parsed row.
fn normalize_loaded(v: &mut JsValue) -> bool {
    let Some(o) = v.as_object_mut() else {
        return false;
    };
    if str_of(o, "type").is_none_or(|t| t != "message") {
        return false;
    }
    let Some(m) = o.get_mut("message").and_then(JsValue::as_object_mut) else {
        return false;
    };
    let role = str_of(m, "role").map(|r| r.to_str_lossy().into_owned());
    let role = role.as_deref();
    match (role, m.get("content")) {
        (Some("assistant" | "toolResult"), Some(JsValue::String(s))) => {
            let mut part = JsObject::new();
            part.insert("type", JsValue::from("text"));
            part.insert("text", JsValue::String(s.clone()));
            m.insert("content", JsValue::Array(vec![JsValue::Object(part)]));
            let checkpoint = m
                .get("providerReplay")
                .and_then(|r| r.get("type"))
                .and_then(JsValue::as_js_string)
                .is_some_and(|t| {
                    t == "anthropic-compaction"
                        || t == "openai-responses-compaction"
                        || t == "openai-responses-retained-compaction"
                });
            if checkpoint {
                m.remove("providerReplay");
            }
            true
        }
        (Some("toolResult"), Some(JsValue::Object(obj))) => {
            let obj = obj.clone();
            m.insert("content", JsValue::Array(vec![JsValue::Object(obj)]));
            true
        }
        _ => false,
    }
}

/// `normalizePersistedLegacyHookMessage`: a `custom` message without `customType` (readable
/// content) gets `customType: "hook"`. Returns the changed copy.
fn normalize_hook(v: &JsValue) -> Option<JsValue> {
    let o = v.as_object()?;
    if str_of(o, "type").is_none_or(|t| t != "message") {
        return None;
    }
    let m = o.get("message")?.as_object()?;
    if str_of(m, "role").is_none_or(|r| r != "custom")
        || m.contains_key("customType")
        || !readable_content(m.get("content"))
    {
        return None;
    }
    let mut out = v.clone();
    if let Some(m) = out
        .as_object_mut()
        .and_then(|o| o.get_mut("message"))
        .and_then(JsValue::as_object_mut)
    {
        m.insert("customType", JsValue::from("hook"));
    }
    Some(out)
}

/// `isLegacyCodexProviderId`: trimmed, lowercased, `codex` or `openai-codex`.
fn legacy_codex_provider(v: Option<&JsValue>) -> bool {
    let Some(JsValue::String(s)) = v else {
        return false;
    };
    let t = crate::js::trim(&s.to_str_lossy()).to_lowercase();
    t == "codex" || t == "openai-codex"
}

/// The codex rename on one row; true when it changed something.
fn codex_rename(v: &mut JsValue) -> bool {
    let Some(m) = v
        .as_object_mut()
        .and_then(|o| o.get_mut("message"))
        .and_then(JsValue::as_object_mut)
    else {
        return false;
    };
    let mut touched = false;
    if legacy_codex_provider(m.get("provider")) {
        m.insert("provider", JsValue::from("openai"));
        touched = true;
    }
    if str_of(m, "api").is_some_and(|a| a == "openai-codex-responses") {
        m.insert("api", JsValue::from("openai-chatgpt-responses"));
        touched = true;
    }
    touched
}

fn is_falsy_customtype(m: &JsObject) -> bool {
    m.get("customType").is_none_or(|v| !v.is_truthy())
}

/// Re-derives what doctor stores for the rows of `read` (module docs, steps 2 and 3), for the
/// session `session_id`, with v1 ids `<id_prefix>-<base36 index>` ([`v1_id_prefix`]).
pub fn derive(read: &ReadResult, session_id: &str, id_prefix: &str) -> Derivation {
    // Plan (`planTranscriptImport`): the first object with type "session" is the header.
    let header_index = read
        .rows
        .iter()
        .position(|r| r.value.as_object().is_some() && is_session_type(&r.value));
    let source_version = header_index
        .and_then(|i| read.rows[i].value.get("version"))
        .and_then(JsValue::as_f64)
        .unwrap_or(1.0);
    // v1: the rows a compaction's firstKeptEntryIndex names.
    let compaction_targets: HashSet<usize> = if source_version < 2.0 {
        read.rows
            .iter()
            .filter_map(|r| {
                let o = r.value.as_object()?;
                if str_of(o, "type").is_none_or(|t| t != "compaction") {
                    return None;
                }
                match o.get("firstKeptEntryIndex") {
                    Some(JsValue::Number(n)) if n.fract() == 0.0 && *n >= 0.0 => Some(*n as usize),
                    _ => None,
                }
            })
            .collect()
    } else {
        HashSet::new()
    };
    let mut migrated_targets: HashMap<usize, JsValue> = HashMap::new();
    let mut previous_id: JsValue = JsValue::Null;
    let mut rows: Vec<DerivedRow> = Vec::with_capacity(read.rows.len());
    let mut navigable: Vec<bool> = Vec::with_capacity(read.rows.len());
    for row in &read.rows {
        let mut transforms = Vec::new();
        let mut value = row.value.clone();
        if normalize_loaded(&mut value) {
            transforms.push(Transform::ContentWrapped);
        }
        let header = Some(row.index) == header_index;
        let mut recognized = header;
        if header {
            let before = value.clone();
            if let Some(o) = value.as_object_mut() {
                o.insert("id", JsValue::from(session_id));
                o.insert("type", JsValue::from("session"));
                let ts = match o.get("timestamp") {
                    Some(JsValue::String(s)) => JsValue::String(s.clone()),
                    _ => JsValue::from(""),
                };
                o.insert("timestamp", ts);
                let cwd = match o.get("cwd") {
                    Some(JsValue::String(s)) => JsValue::String(s.clone()),
                    _ => JsValue::from(""),
                };
                o.insert("cwd", cwd);
                o.remove("sessionId");
            }
            if to_json_string(&before) != to_json_string(&value) {
                transforms.push(Transform::HeaderDefaults);
            }
        } else {
            let hooked = normalize_hook(&value);
            let candidate = hooked.as_ref().unwrap_or(&value);
            recognized = (source_version < 3.0 && readable_legacy_entry(candidate))
                || indexed_entry(candidate);
            if recognized && let Some(h) = hooked {
                value = h;
                transforms.push(Transform::HookMessage);
            }
        }
        if recognized {
            migrate_row(
                &mut value,
                row.index,
                source_version,
                id_prefix,
                &mut previous_id,
                &migrated_targets,
                &mut transforms,
            );
            if source_version < 2.0
                && !header
                && compaction_targets.contains(&row.index)
                && let Some(id) = value.get("id")
            {
                migrated_targets.insert(row.index, id.clone());
            }
        }
        if codex_rename(&mut value) {
            transforms.push(Transform::CodexRename);
        }
        transforms.sort();
        transforms.dedup();
        let o = value.as_object();
        let id = if header {
            Some(session_id.to_owned())
        } else {
            o.and_then(|o| str_of(o, "id"))
                .map(|s| s.to_str_lossy().into_owned())
        };
        let entry_type = o
            .and_then(|o| str_of(o, "type"))
            .map(|s| s.to_str_lossy().into_owned());
        let role = o
            .and_then(|o| o.get("message"))
            .and_then(|m| m.get("role"))
            .and_then(JsValue::as_str_lossy)
            .map(|s| s.into_owned());
        let text = to_json_string(&value);
        let repeat_candidate =
            !header && id.is_some() && (indexed_entry(&value) || leaf_control(&value));
        rows.push(DerivedRow {
            index: row.index,
            span: row.span,
            text,
            transforms,
            id,
            entry_type,
            role,
            header,
            recognized,
            dropped: None,
        });
        navigable.push(repeat_candidate);
    }
    // The stage's repair: an exact repeat of the last navigable row with the same id goes.
    // Every object row with a string id but a session row registers its id (the stage's tree);
    // only entries and leaf controls are dropped as repeats.
    let mut last_by_id: HashMap<String, usize> = HashMap::new();
    for i in 0..rows.len() {
        if rows[i].entry_type.as_deref() == Some("session")
            || rows[i].id.is_none()
            || !rows[i].text.starts_with('{')
        {
            continue;
        }
        let id = rows[i].id.clone().unwrap_or_default();
        if navigable[i]
            && let Some(&prev) = last_by_id.get(&id)
            && rows[prev].text == rows[i].text
        {
            rows[i].dropped = Some(Dropped::RepeatedRow {
                of: rows[prev].index,
            });
            continue;
        }
        last_by_id.insert(id, i);
    }
    // The write: text seen before is skipped; an id stored before with other text is refused.
    let mut seen_text: HashMap<String, usize> = HashMap::new();
    let mut stored_ids: HashMap<String, usize> = HashMap::new();
    for row in rows.iter_mut() {
        if row.dropped.is_some() {
            continue;
        }
        if let Some(&of) = seen_text.get(&row.text) {
            row.dropped = Some(Dropped::SameText { of });
            continue;
        }
        seen_text.insert(row.text.clone(), row.index);
        if let Some(id) = &row.id {
            if let Some(&of) = stored_ids.get(id) {
                row.dropped = Some(Dropped::IdConflict { id: id.clone(), of });
                continue;
            }
            stored_ids.insert(id.clone(), row.index);
        }
    }
    Derivation {
        rows,
        source_version,
        header_index,
        id_prefix: id_prefix.to_owned(),
    }
}

/// `migrateSessionFileEntryToCurrentVersion` with doctor's id scheme.
fn migrate_row(
    value: &mut JsValue,
    index: usize,
    source_version: f64,
    id_prefix: &str,
    previous_id: &mut JsValue,
    migrated_targets: &HashMap<usize, JsValue>,
    transforms: &mut Vec<Transform>,
) {
    let is_session = is_session_type(value);
    let Some(o) = value.as_object_mut() else {
        return;
    };
    if source_version < 2.0 {
        if is_session {
            o.insert("version", JsValue::Number(2.0));
            transforms.push(Transform::HeaderVersion);
        } else {
            let id = JsValue::from(format!("{id_prefix}-{}", base36(index)));
            o.insert("id", id.clone());
            o.insert("parentId", previous_id.clone());
            *previous_id = id;
            transforms.push(Transform::V1Ids);
            if str_of(o, "type").is_some_and(|t| t == "compaction")
                && let Some(JsValue::Number(n)) = o.get("firstKeptEntryIndex").cloned()
            {
                let target = (n.fract() == 0.0 && n >= 0.0)
                    .then(|| migrated_targets.get(&(n as usize)))
                    .flatten()
                    .filter(|v| v.is_truthy())
                    .cloned();
                if let Some(target) = target {
                    o.insert("firstKeptEntryId", target);
                }
                o.remove("firstKeptEntryIndex");
                transforms.push(Transform::FirstKeptEntryId);
            }
        }
    }
    if source_version < 3.0 {
        if is_session {
            o.insert("version", JsValue::Number(3.0));
            transforms.push(Transform::HeaderVersion);
        } else if str_of(o, "type").is_some_and(|t| t == "message")
            && o.get("message").is_some_and(JsValue::is_truthy)
            && let Some(m) = o.get_mut("message").and_then(JsValue::as_object_mut)
            && str_of(m, "role").is_some_and(|r| r == "hookMessage")
        {
            m.insert("role", JsValue::from("custom"));
            if is_falsy_customtype(m) {
                m.insert("customType", JsValue::from("hook"));
            }
            transforms.push(Transform::HookMessage);
        }
    }
}

/// Why a line of the file cannot be salvaged ([`salvage_lines`]).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum BadLine {
    /// The line is not valid UTF-8; `offset` is the file offset of the first bad byte.
    Utf8 {
        /// File offset of the first invalid byte.
        offset: usize,
    },
    /// The line is not JSON (its offset is within the trimmed line).
    Json(JsonError),
}

/// One physical line, judged on its own ([`salvage_lines`]).
#[derive(Clone, Debug, PartialEq)]
pub enum LineFate {
    /// Blank or whitespace only.
    Blank,
    /// Parses as JSON: kept byte for byte by a salvage. `truthy` is false for `null`, `false`,
    /// `0` and `""`, which doctor skips.
    Parseable {
        /// Whether the value is truthy (doctor makes a row of it).
        truthy: bool,
    },
    /// Cannot be parsed; `torn` when it is the file's last line and has no `\n`.
    Bad {
        /// Why.
        problem: BadLine,
        /// A torn tail.
        torn: bool,
    },
}

/// Every physical line of `bytes` judged on its own, in file order: strict UTF-8 per line, a
/// leading BOM ignored on the first, JavaScript `trim`, `JSON.parse`. Unlike doctor's reader
/// nothing stops at a bad line, so the lines after it are found (openclaw-sqlite.md §4.7.4).
pub fn salvage_lines(bytes: &[u8]) -> Vec<(LineSpan, LineFate)> {
    line_spans(bytes)
        .into_iter()
        .map(|span| {
            let mut raw = &bytes[span.offset..span.offset + span.len];
            if span.offset == 0 {
                raw = raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(raw);
            }
            let skipped = span.len - raw.len();
            let fate = match std::str::from_utf8(raw) {
                Err(e) => LineFate::Bad {
                    problem: BadLine::Utf8 {
                        offset: span.offset + skipped + e.valid_up_to(),
                    },
                    torn: !span.terminated,
                },
                Ok(_) => {
                    let text = trim_js_end(trim_js_start(raw));
                    if text.is_empty() {
                        LineFate::Blank
                    } else {
                        match parse_value(text) {
                            Ok(v) => LineFate::Parseable {
                                truthy: v.is_truthy(),
                            },
                            Err(e) => LineFate::Bad {
                                problem: BadLine::Json(e),
                                torn: !span.terminated,
                            },
                        }
                    }
                }
            };
            (span, fate)
        })
        .collect()
}

/// A re-serialisation that turned a source line into different text with the same meaning
/// (§3), found by [`line_changes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum LineChange {
    /// A UTF-8 BOM, a `\r`, or spaces/tabs around the line.
    Padding,
    /// Whitespace between JSON tokens.
    Whitespace,
    /// A `\uXXXX` escape `JSON.stringify` writes as the character itself.
    UnicodeEscape,
    /// `\/` written as `/`.
    EscapedSlash,
    /// A number spelled other than JavaScript writes it (`1.0`, `1e3`, `-0`, …).
    NumberForm,
    /// An integer that a double cannot hold exactly (information lost).
    NumberPrecision,
    /// Integer-like object keys moved to the front in ascending order.
    IntegerKeyOrder,
    /// A key given twice: the last value kept, the first lost (information lost).
    DuplicateKey,
}

impl LineChange {
    /// A short stable name (`--json`).
    pub fn name(self) -> &'static str {
        match self {
            LineChange::Padding => "padding",
            LineChange::Whitespace => "whitespace",
            LineChange::UnicodeEscape => "unicode-escape",
            LineChange::EscapedSlash => "escaped-slash",
            LineChange::NumberForm => "number-form",
            LineChange::NumberPrecision => "number-precision",
            LineChange::IntegerKeyOrder => "integer-key-order",
            LineChange::DuplicateKey => "duplicate-key",
        }
    }

    /// Whether the change loses information (a duplicate key's first value, an integer's
    /// digits).
    pub fn lossy(self) -> bool {
        matches!(self, LineChange::NumberPrecision | LineChange::DuplicateKey)
    }
}

/// The re-serialisations between the physical source line `raw` (without its `\n`) and its
/// `JSON.stringify` text, sorted. Empty when `raw` already is that text. `raw` must parse.
pub fn line_changes(raw: &[u8]) -> Vec<LineChange> {
    let mut out = HashSet::new();
    let mut body = raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(raw);
    if body.len() != raw.len() {
        out.insert(LineChange::Padding);
    }
    let trimmed = trim_js_end(trim_js_start(body));
    if trimmed.len() != body.len() {
        out.insert(LineChange::Padding);
    }
    body = trimmed;
    scan_tokens(body, &mut out);
    let mut v: Vec<LineChange> = out.into_iter().collect();
    v.sort();
    v
}

/// Walks valid JSON text, noting every non-canonical spelling.
fn scan_tokens(b: &[u8], out: &mut HashSet<LineChange>) {
    // Per open object: the keys seen (raw bytes of the decoded key) and whether a
    // non-index key was seen before an index key / index keys out of order.
    struct Obj {
        keys: HashSet<Vec<u8>>,
        seen_plain: bool,
        last_index: Option<u64>,
    }
    let mut stack: Vec<Option<Obj>> = Vec::new();
    let mut expect_key = false;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' | b'\n' | b'\r' => {
                out.insert(LineChange::Whitespace);
                i += 1;
            }
            b'{' => {
                stack.push(Some(Obj {
                    keys: HashSet::new(),
                    seen_plain: false,
                    last_index: None,
                }));
                expect_key = true;
                i += 1;
            }
            b'[' => {
                stack.push(None);
                expect_key = false;
                i += 1;
            }
            b'}' | b']' => {
                stack.pop();
                expect_key = false;
                i += 1;
            }
            b',' => {
                expect_key = matches!(stack.last(), Some(Some(_)));
                i += 1;
            }
            b':' => {
                expect_key = false;
                i += 1;
            }
            b'"' => {
                let start = i;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        match b.get(i + 1) {
                            Some(b'/') => {
                                out.insert(LineChange::EscapedSlash);
                            }
                            Some(b'u') => {
                                let hex = b.get(i + 2..i + 6).unwrap_or(b"0000");
                                let cp = std::str::from_utf8(hex)
                                    .ok()
                                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                                    .unwrap_or(0);
                                // JSON.stringify escapes controls (with short forms for some)
                                // and lone surrogates; a lowercase `\u00XX` of a control without
                                // a short form is its own spelling.
                                let canonical_escape = cp < 0x20
                                    && !matches!(cp, 0x08 | 0x09 | 0x0A | 0x0C | 0x0D)
                                    && hex == format!("{cp:04x}").as_bytes();
                                let surrogate = (0xD800..=0xDFFF).contains(&cp);
                                if !canonical_escape && !surrogate {
                                    out.insert(LineChange::UnicodeEscape);
                                } else if surrogate {
                                    // A pair written as escapes becomes the character; a lone
                                    // one stays escaped (lowercase).
                                    let pair = if (0xD800..0xDC00).contains(&cp) {
                                        b.get(i + 6..i + 8) == Some(b"\\u")
                                            && b.get(i + 8..i + 12)
                                                .and_then(|h| std::str::from_utf8(h).ok())
                                                .and_then(|h| u32::from_str_radix(h, 16).ok())
                                                .is_some_and(|lo| (0xDC00..0xE000).contains(&lo))
                                    } else {
                                        false
                                    };
                                    if pair || hex != format!("{cp:04x}").as_bytes() {
                                        out.insert(LineChange::UnicodeEscape);
                                    }
                                    if pair {
                                        i += 6;
                                    }
                                }
                                i += 4;
                            }
                            _ => {}
                        }
                        i += 2;
                    } else {
                        i += 1;
                    }
                }
                i += 1;
                if expect_key {
                    let key = match parse_value(&b[start..i.min(b.len())]) {
                        Ok(JsValue::String(s)) => s,
                        _ => crate::json::JsString::new(""),
                    };
                    if let Some(Some(obj)) = stack.last_mut() {
                        if !obj.keys.insert(key.as_wtf8().to_vec()) {
                            out.insert(LineChange::DuplicateKey);
                        }
                        match key.array_index() {
                            Some(n) => {
                                let n = u64::from(n);
                                if obj.seen_plain || obj.last_index.is_some_and(|l| l > n) {
                                    out.insert(LineChange::IntegerKeyOrder);
                                }
                                obj.last_index = Some(n);
                            }
                            None => obj.seen_plain = true,
                        }
                    }
                    expect_key = false;
                }
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < b.len() && matches!(b[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                let tok = &b[start..i];
                let n: f64 = std::str::from_utf8(tok)
                    .ok()
                    .and_then(|t| t.parse().ok())
                    .unwrap_or(f64::NAN);
                let text = if n == 0.0 {
                    "0".to_owned()
                } else {
                    number_to_string(n)
                };
                if text.as_bytes() != tok {
                    out.insert(LineChange::NumberForm);
                    // An integer spelling whose digits the double does not keep.
                    let digits: Vec<u8> = tok.iter().copied().filter(u8::is_ascii_digit).collect();
                    let integer = !tok.iter().any(|c| matches!(c, b'.' | b'e' | b'E'));
                    if integer && digits.len() > 15 {
                        let back = format!("{n:.0}");
                        let back = back.trim_start_matches('-');
                        if back.as_bytes() != digits.as_slice() {
                            out.insert(LineChange::NumberPrecision);
                        }
                    }
                }
            }
            _ => i += 1, // true, false, null
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base36_and_v1_ids_round_trip() {
        assert_eq!(base36(0), "0");
        assert_eq!(base36(35), "z");
        assert_eq!(base36(36), "10");
        assert_eq!(
            parse_v1_id("709fe318b22aecde-a"),
            Some(("709fe318b22aecde", 10))
        );
        assert_eq!(parse_v1_id("709fe318b22aecde-01"), None);
        assert_eq!(parse_v1_id("u1"), None);
    }

    #[test]
    fn utf8_failure_names_the_chunk_of_the_bad_byte() {
        let mut b = vec![b'a'; READ_CHUNK_BYTES + 10];
        b[READ_CHUNK_BYTES + 3] = 0xFF;
        assert_eq!(
            utf8_failure(&b),
            Some((READ_CHUNK_BYTES + 3, READ_CHUNK_BYTES))
        );
        // A sequence cut by the chunk boundary is fine.
        let mut b = vec![b'a'; READ_CHUNK_BYTES - 1];
        b.extend_from_slice("é".as_bytes());
        assert_eq!(utf8_failure(&b), None);
        // An incomplete sequence at the end fails at the flush.
        assert_eq!(utf8_failure(b"ab\xC3"), Some((2, 3)));
    }

    #[test]
    fn line_changes_name_each_respelling() {
        use LineChange::*;
        assert_eq!(line_changes(br#"{"a":1}"#), vec![]);
        assert_eq!(line_changes(b"{\"a\":1}\r"), vec![Padding]);
        assert_eq!(line_changes(br#"{"a": 1}"#), vec![Whitespace]);
        assert_eq!(line_changes(br#"{"a":"caf\u00e9"}"#), vec![UnicodeEscape]);
        assert_eq!(line_changes(br#"{"a":"\u0007"}"#), vec![]);
        assert_eq!(line_changes(br#"{"a":"\ud800"}"#), vec![]);
        assert_eq!(
            line_changes(br#"{"a":"\ud83c\udf89"}"#),
            vec![UnicodeEscape]
        );
        assert_eq!(line_changes(br#"{"a":"x\/y"}"#), vec![EscapedSlash]);
        assert_eq!(line_changes(br#"{"a":1.0}"#), vec![NumberForm]);
        assert_eq!(
            line_changes(br#"{"a":12345678901234567890}"#),
            vec![NumberForm, NumberPrecision]
        );
        assert_eq!(line_changes(br#"{"b":1,"2":2}"#), vec![IntegerKeyOrder]);
        assert_eq!(line_changes(br#"{"a":1,"a":2}"#), vec![DuplicateKey]);
    }
}
