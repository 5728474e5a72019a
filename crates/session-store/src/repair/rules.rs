//! The per-line rules of the repair and the missing-tool-result insertion (openclaw-jsonl.md
//! §1.8), without I/O. Lines are split on LF (a CR before it stays with the line, as JSON
//! whitespace); lines holding only JavaScript whitespace are skipped; every other line is parsed
//! once. A line the rules leave alone keeps its exact bytes; a line they change, and every
//! inserted row, is serialised afresh with `JSON.stringify` semantics.

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::HashSet;

use session_format::json::{
    EnvelopeScanner, Field, JsObject, JsString, JsValue, JsonErrorKind, ValueKind, parse_value,
    to_json_string,
};
use session_format::line::{is_blank, lines, trim_js_end, trim_js_start};
use session_format::message::{TOOL_CALL_BLOCK_TYPES, TOOL_RESULT_ID_KEYS};

use super::image::is_corrupted_image_block;

/// Content of a blank user turn after repair (string form, or the text of the single block).
pub(crate) const BLANK_USER_FALLBACK_TEXT: &str = "(continue)";
/// Text block that replaces a corrupted inline image.
pub(crate) const CORRUPTED_IMAGE_FALLBACK_TEXT: &str = "[image omitted: corrupted base64 payload]";
/// Text block given to an assistant turn that failed (`stopReason: "error"`) with empty content.
pub(crate) const ASSISTANT_ERROR_FALLBACK_TEXT: &str =
    "[assistant turn failed before producing content]";
/// Text of an inserted tool result.
pub(crate) const SYNTHETIC_TOOL_RESULT_TEXT: &str = "aborted";
/// The `details` key that marks an inserted tool result.
pub(crate) const SYNTHETIC_TOOL_RESULT_DETAIL_KEY: &str = "openclawSyntheticMissingToolResult";

thread_local! {
    static PARSED_LINES: Cell<u64> = const { Cell::new(0) };
}

/// Lines the repair has parsed on the calling thread since it started (a diagnostic counter:
/// each non-blank line read by a full or incremental pass counts once; a pass that returns from
/// the cache parses nothing). The repair is synchronous, so the difference between two readings
/// around a call is exactly that call's work. Feature `test-util` (`test_util::repair_probes`).
#[cfg(any(test, feature = "test-util"))]
pub fn parsed_lines_on_this_thread() -> u64 {
    PARSED_LINES.with(Cell::get)
}

fn count_parse() {
    PARSED_LINES.with(|c| c.set(c.get() + 1));
}

/// What the per-line rules changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub dropped_lines: usize,
    pub rewritten_assistant_messages: usize,
    pub dropped_blank_user_messages: usize,
    pub rewritten_user_messages: usize,
    pub removed_corrupted_image_blocks: usize,
}

impl Counts {
    /// `hasEntryRepairs`.
    pub(crate) fn any(&self) -> bool {
        self.dropped_lines > 0
            || self.rewritten_assistant_messages > 0
            || self.dropped_blank_user_messages > 0
            || self.rewritten_user_messages > 0
            || self.removed_corrupted_image_blocks > 0
    }
}

/// A tool call of an assistant turn.
#[derive(Clone, Debug)]
pub(crate) struct ToolCall {
    pub id: JsString,
    pub name: Option<JsString>,
}

/// What the insertion pass needs to know about a surviving row.
#[derive(Clone, Debug, Default)]
pub(crate) struct EntryInfo {
    /// `{type:"session", id: non-empty string}`.
    pub is_header: bool,
    /// The row's `id`, when it is a string.
    pub id: Option<JsString>,
    /// `type:"message"` with an object `message`.
    pub is_message: bool,
    /// Code-mode assistant (`openai-chatgpt-responses` / `openai`, not error or aborted).
    pub code_mode: bool,
    /// Responses assistant (`openai-responses`, `azure-openai-responses`,
    /// `openai-codex-responses`, not error or aborted).
    pub responses: bool,
    /// Transcript-only delivery mirror (`openclaw` / `delivery-mirror` or `gateway-injected`).
    pub mirror: bool,
    /// Tool calls, kept for code-mode and Responses assistants only.
    pub tool_calls: Vec<ToolCall>,
    /// The id a tool result answers (first non-blank of its id fields, trimmed).
    pub tool_result_id: Option<JsString>,
}

/// A surviving row: its bytes (borrowed when unchanged) and what insertion needs.
#[derive(Clone, Debug)]
pub(crate) struct Kept<'a> {
    pub bytes: Cow<'a, [u8]>,
    pub info: EntryInfo,
}

/// The rows of a buffer after the per-line rules.
#[derive(Debug, Default)]
pub(crate) struct Scan<'a> {
    pub kept: Vec<Kept<'a>>,
    pub counts: Counts,
}

/// Applies the per-line rules (§1.8 rules 1–5) to every line of `buf`.
pub(crate) fn scan(buf: &[u8]) -> Scan<'_> {
    let mut out = Scan::default();
    let mut scanner = EnvelopeScanner::new();
    for line in lines(buf) {
        if is_blank(line.bytes) {
            continue;
        }
        count_parse();
        match parse_value(line.bytes) {
            Ok(value) => {
                if let Some((value, changed)) = repair_entry(value, &mut out.counts) {
                    let info = analyse(&value);
                    let bytes = if changed {
                        Cow::Owned(to_json_string(&value).into_bytes())
                    } else {
                        Cow::Borrowed(line.bytes)
                    };
                    out.kept.push(Kept { bytes, info });
                }
            }
            // Valid JSON nested deeper than the tree parser goes: only the envelope can be
            // read. The role rule still applies; the row is otherwise kept verbatim.
            Err(e) if e.kind == JsonErrorKind::TooDeep => match scanner.scan(line.bytes) {
                Ok(env) if env.kind == ValueKind::Object => {
                    let is_message = env.r#type.as_str() == Some("message");
                    let role_ok = matches!(&env.role, Field::Str(s) if !is_blank(s.as_wtf8()));
                    if is_message && !role_ok {
                        out.counts.dropped_lines += 1;
                        continue;
                    }
                    let info = EntryInfo {
                        is_header: env.r#type.as_str() == Some("session")
                            && env.id.is_non_empty_str(),
                        id: env.id.as_js_str().map(|s| s.to_js_string()),
                        is_message,
                        ..EntryInfo::default()
                    };
                    out.kept.push(Kept {
                        bytes: Cow::Borrowed(line.bytes),
                        info,
                    });
                }
                Ok(_) => out.kept.push(Kept {
                    bytes: Cow::Borrowed(line.bytes),
                    info: EntryInfo::default(),
                }),
                Err(_) => out.counts.dropped_lines += 1,
            },
            Err(_) => out.counts.dropped_lines += 1,
        }
    }
    out
}

fn is_str(value: Option<&JsValue>, text: &str) -> bool {
    matches!(value, Some(JsValue::String(s)) if s.as_wtf8() == text.as_bytes())
}

fn trimmed(value: Option<&JsValue>) -> &[u8] {
    match value {
        Some(JsValue::String(s)) => trim_js_end(trim_js_start(s.as_wtf8())),
        _ => b"",
    }
}

fn text_block(text: &str) -> JsValue {
    let mut block = JsObject::new();
    block.insert("type", JsValue::from("text"));
    block.insert("text", JsValue::from(text));
    JsValue::Object(block)
}

/// A text block whose text is blank (`type:"text"`, string `text` that trims to nothing).
fn is_blank_text_block(block: &JsValue) -> bool {
    let Some(obj) = block.as_object() else {
        return false;
    };
    is_str(obj.get("type"), "text")
        && matches!(obj.get("text"), Some(JsValue::String(t)) if is_blank(t.as_wtf8()))
}

/// Rules 2–5 on one parsed row: `None` drops it (counted), else the row and whether it changed.
fn repair_entry(mut value: JsValue, counts: &mut Counts) -> Option<(JsValue, bool)> {
    let Some(obj) = value.as_object_mut() else {
        return Some((value, false));
    };
    if !is_str(obj.get("type"), "message") {
        return Some((value, false));
    }
    // Rule 2: the message must be an object with a non-blank string role (#77228).
    let Some(message) = obj.get_mut("message").and_then(JsValue::as_object_mut) else {
        counts.dropped_lines += 1;
        return None;
    };
    let role = match message.get("role") {
        Some(JsValue::String(r)) if !is_blank(r.as_wtf8()) => r.as_wtf8().to_vec(),
        _ => {
            counts.dropped_lines += 1;
            return None;
        }
    };
    // Rule 3: an assistant turn that failed before producing content.
    if role == b"assistant"
        && matches!(message.get("content"), Some(JsValue::Array(c)) if c.is_empty())
        && is_str(message.get("stopReason"), "error")
    {
        message.insert(
            "content",
            JsValue::Array(vec![text_block(ASSISTANT_ERROR_FALLBACK_TEXT)]),
        );
        counts.rewritten_assistant_messages += 1;
        return Some((value, true));
    }
    let mut changed = false;
    // Rule 4: corrupted inline images, in every role.
    if let Some(JsValue::Array(blocks)) = message.get_mut("content") {
        for block in blocks.iter_mut() {
            if is_corrupted_image_block(block) {
                *block = text_block(CORRUPTED_IMAGE_FALLBACK_TEXT);
                counts.removed_corrupted_image_blocks += 1;
                changed = true;
            }
        }
    }
    // Rule 5: blank user text.
    if role == b"user" {
        match message.get_mut("content") {
            Some(content @ JsValue::String(_))
                if content
                    .as_js_string()
                    .is_some_and(|s| is_blank(s.as_wtf8())) =>
            {
                *content = JsValue::from(BLANK_USER_FALLBACK_TEXT);
                counts.rewritten_user_messages += 1;
                changed = true;
            }
            Some(JsValue::Array(blocks)) => {
                let before = blocks.len();
                blocks.retain(|b| !is_blank_text_block(b));
                if blocks.is_empty() {
                    blocks.push(text_block(BLANK_USER_FALLBACK_TEXT));
                    counts.rewritten_user_messages += 1;
                    changed = true;
                } else if blocks.len() != before {
                    counts.rewritten_user_messages += 1;
                    changed = true;
                }
            }
            _ => {}
        }
    }
    Some((value, changed))
}

const RESPONSES_APIS: [&[u8]; 3] = [
    b"openai-responses",
    b"azure-openai-responses",
    b"openai-codex-responses",
];

/// What the insertion pass needs to know about a row (after the rules changed it).
pub(crate) fn analyse(value: &JsValue) -> EntryInfo {
    let mut info = EntryInfo::default();
    let Some(obj) = value.as_object() else {
        return info;
    };
    info.is_header = is_str(obj.get("type"), "session")
        && matches!(obj.get("id"), Some(JsValue::String(id)) if !id.is_empty());
    if let Some(JsValue::String(id)) = obj.get("id") {
        info.id = Some(id.clone());
    }
    if !is_str(obj.get("type"), "message") {
        return info;
    }
    let Some(message) = obj.get("message").and_then(JsValue::as_object) else {
        return info;
    };
    info.is_message = true;
    if is_str(message.get("role"), "toolResult") {
        info.tool_result_id = TOOL_RESULT_ID_KEYS.iter().find_map(|key| {
            let id = trimmed(message.get(key));
            (!id.is_empty()).then(|| js_string_from_wtf8(id))
        });
    }
    if !is_str(message.get("role"), "assistant") {
        return info;
    }
    let settled = !is_str(message.get("stopReason"), "error")
        && !is_str(message.get("stopReason"), "aborted");
    info.code_mode = settled
        && is_str(message.get("api"), "openai-chatgpt-responses")
        && is_str(message.get("provider"), "openai");
    info.responses = settled && RESPONSES_APIS.contains(&trimmed(message.get("api")));
    let model = trimmed(message.get("model"));
    info.mirror = trimmed(message.get("provider")) == b"openclaw"
        && (model == b"delivery-mirror" || model == b"gateway-injected");
    if info.code_mode || info.responses {
        info.tool_calls = tool_calls(message);
    }
    info
}

/// A trimmed slice of a string's WTF-8 bytes as a string again.
fn js_string_from_wtf8(bytes: &[u8]) -> JsString {
    match std::str::from_utf8(bytes) {
        Ok(s) => JsString::new(s),
        Err(_) => wtf8_to_js_string(bytes),
    }
}

fn wtf8_to_js_string(bytes: &[u8]) -> JsString {
    // Generalised UTF-8 (lone surrogates as 3-byte sequences) into UTF-16 units.
    let mut units = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let (cp, len) = if b < 0x80 {
            (u32::from(b), 1)
        } else if b >= 0xF0 && i + 3 < bytes.len() {
            (
                (u32::from(b & 0x07) << 18)
                    | (u32::from(bytes[i + 1] & 0x3F) << 12)
                    | (u32::from(bytes[i + 2] & 0x3F) << 6)
                    | u32::from(bytes[i + 3] & 0x3F),
                4,
            )
        } else if b >= 0xE0 && i + 2 < bytes.len() {
            (
                (u32::from(b & 0x0F) << 12)
                    | (u32::from(bytes[i + 1] & 0x3F) << 6)
                    | u32::from(bytes[i + 2] & 0x3F),
                3,
            )
        } else if b >= 0xC0 && i + 1 < bytes.len() {
            (
                (u32::from(b & 0x1F) << 6) | u32::from(bytes[i + 1] & 0x3F),
                2,
            )
        } else {
            (0xFFFD, 1)
        };
        if cp >= 0x10000 {
            let v = cp - 0x10000;
            units.push(0xD800 + (v >> 10) as u16);
            units.push(0xDC00 + (v & 0x3FF) as u16);
        } else {
            units.push(cp as u16);
        }
        i += len;
    }
    JsString::from_utf16(&units)
}

/// `extractToolCallsFromAssistant`: blocks with a non-empty string `id` and a tool-call type.
fn tool_calls(message: &JsObject) -> Vec<ToolCall> {
    let Some(JsValue::Array(blocks)) = message.get("content") else {
        return Vec::new();
    };
    blocks
        .iter()
        .filter_map(JsValue::as_object)
        .filter_map(|block| {
            let Some(JsValue::String(id)) = block.get("id") else {
                return None;
            };
            if id.is_empty()
                || !TOOL_CALL_BLOCK_TYPES
                    .iter()
                    .any(|t| is_str(block.get("type"), t))
            {
                return None;
            }
            let name = match block.get("name") {
                Some(JsValue::String(n)) => Some(n.clone()),
                _ => None,
            };
            Some(ToolCall {
                id: id.clone(),
                name,
            })
        })
        .collect()
}

/// `normalizeTrimmedString(name).toLowerCase() === "message"`.
fn is_message_tool_name(name: Option<&JsString>) -> bool {
    name.is_some_and(|n| trim_js_end(trim_js_start(n.as_wtf8())).eq_ignore_ascii_case(b"message"))
}

/// A synthetic "aborted" tool result answering `call`, child of `parent`.
fn synthetic_tool_result(parent: &EntryInfo, call: &ToolCall) -> Kept<'static> {
    let now = session_format::ids::now_ms();
    let mut message = JsObject::new();
    message.insert("role", JsValue::from("toolResult"));
    message.insert("toolCallId", JsValue::String(call.id.clone()));
    message.insert(
        "toolName",
        call.name
            .clone()
            .map_or_else(|| JsValue::from("unknown"), JsValue::String),
    );
    message.insert(
        "content",
        JsValue::Array(vec![text_block(SYNTHETIC_TOOL_RESULT_TEXT)]),
    );
    let mut details = JsObject::new();
    details.insert(SYNTHETIC_TOOL_RESULT_DETAIL_KEY, JsValue::Bool(true));
    message.insert("details", JsValue::Object(details));
    message.insert("isError", JsValue::Bool(true));
    message.insert("timestamp", JsValue::Number(now as f64));
    let id = format!("repair-{}", uuid::Uuid::new_v4());
    let mut entry = JsObject::new();
    entry.insert("type", JsValue::from("message"));
    entry.insert("id", JsValue::from(id.as_str()));
    if let Some(parent_id) = &parent.id {
        entry.insert("parentId", JsValue::String(parent_id.clone()));
    }
    entry.insert(
        "timestamp",
        JsValue::from(session_format::time::to_iso_string(now).unwrap_or_default()),
    );
    entry.insert("message", JsValue::Object(message));
    let bytes = to_json_string(&JsValue::Object(entry)).into_bytes();
    Kept {
        bytes: Cow::Owned(bytes),
        info: EntryInfo {
            id: Some(JsString::new(id)),
            is_message: true,
            tool_result_id: Some(js_string_from_wtf8(trim_js_end(trim_js_start(
                call.id.as_wtf8(),
            )))),
            ..EntryInfo::default()
        },
    }
}

/// The tool-result ids the insertion pass knows after it ran, and how many rows it inserted.
#[derive(Debug, Default)]
pub(crate) struct Insertion {
    pub inserted: usize,
    pub result_ids: HashSet<JsString>,
    /// The last message row is a Responses assistant with a `message` tool call still
    /// unanswered: a delivery mirror appended next would need an inserted result.
    pub pending_responses_tail: bool,
}

/// Rule 6: inserts the missing code-mode results, then the missing Responses `message`-tool
/// results before delivery mirrors. `existing` holds ids known from rows outside `kept` (the
/// cached prefix of an incremental pass).
pub(crate) fn insert_missing_tool_results(
    kept: &mut Vec<Kept<'_>>,
    existing: &HashSet<JsString>,
) -> Insertion {
    let mut ids = existing.clone();
    ids.extend(kept.iter().filter_map(|k| k.info.tool_result_id.clone()));
    let mut inserted = 0;

    // Code-mode assistants.
    if kept.iter().any(|k| k.info.code_mode) {
        let mut out = Vec::with_capacity(kept.len());
        for entry in kept.drain(..) {
            let mut synthetic = Vec::new();
            if entry.info.code_mode {
                for call in &entry.info.tool_calls {
                    if ids.insert(call.id.clone()) {
                        synthetic.push(synthetic_tool_result(&entry.info, call));
                        inserted += 1;
                    }
                }
            }
            out.push(entry);
            out.extend(synthetic);
        }
        *kept = out;
    }

    // Responses assistants whose next message row is a delivery mirror.
    if kept.iter().any(|k| k.info.responses) {
        let mut next_is_mirror = vec![false; kept.len()];
        let mut next: Option<bool> = None;
        for (i, entry) in kept.iter().enumerate().rev() {
            next_is_mirror[i] = next.unwrap_or(false);
            if entry.info.is_message {
                next = Some(entry.info.mirror);
            }
        }
        let mut out = Vec::with_capacity(kept.len());
        for (entry, mirror_next) in kept.drain(..).zip(next_is_mirror) {
            let mut synthetic = Vec::new();
            if entry.info.responses && mirror_next {
                for call in &entry.info.tool_calls {
                    if is_message_tool_name(call.name.as_ref()) && ids.insert(call.id.clone()) {
                        synthetic.push(synthetic_tool_result(&entry.info, call));
                        inserted += 1;
                    }
                }
            }
            out.push(entry);
            out.extend(synthetic);
        }
        *kept = out;
    }

    let pending_responses_tail = kept
        .iter()
        .rev()
        .find(|k| k.info.is_message)
        .is_some_and(|last| pending_message_calls(&last.info, &ids));
    Insertion {
        inserted,
        result_ids: ids,
        pending_responses_tail,
    }
}

/// A Responses assistant with a `message` tool call no known result answers.
pub(crate) fn pending_message_calls(info: &EntryInfo, ids: &HashSet<JsString>) -> bool {
    info.responses
        && info
            .tool_calls
            .iter()
            .any(|c| is_message_tool_name(c.name.as_ref()) && !ids.contains(&c.id))
}
