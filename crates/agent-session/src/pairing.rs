//! Tool-call / tool-result pairing repair at the payload boundary (OpenClaw 2026.6.11
//! `repairToolUseResultPairing`, `src/agents/session-transcript-repair.ts`): the messages a
//! model is sent must have, right after each assistant message with tool calls, exactly one
//! result per call. Applied to the outgoing messages only; the transcript file is never
//! touched. Checked against the reference (`tests/fixtures/reference/expected/pairing.json`).
//!
//! Rules, per assistant message with tool calls (blocks of type `toolCall`, `toolUse` or
//! `functionCall` with a non-empty string `id`):
//! - results that follow it (up to the next assistant with tool calls) are gathered and put
//!   right after it, in call order; other messages in that span follow them;
//! - a result found later in the conversation is moved up;
//! - a call without any result gets a synthetic error result ([`MISSING_TOOL_RESULT_TEXT`],
//!   `details: {openclawSyntheticMissingToolResult: true}`, `isError: true`);
//! - results whose id matches no pending call (orphans) and repeated results are dropped (a real
//!   result replaces a synthetic one of the same id);
//! - an assistant message that ended with `stopReason` `error` or `aborted` is left out, with
//!   the results of its calls ([`ErroredAssistantPolicy::Skip`], the default here, as pi-ai's
//!   `transformMessages` skips it); with [`ErroredAssistantPolicy::Drop`] (the reference's
//!   `"drop"`) only such turns with tool calls are left out; with
//!   [`ErroredAssistantPolicy::Keep`] (the reference's default) the turn is kept with its
//!   real results and gets no synthetic ones;
//! - a result without an id directly after an assistant with exactly one call takes that call's
//!   id (and `isError: true`) unless its `toolName` names another tool; a blank or padded
//!   `toolName` is normalised (trimmed, else the call's name, else `unknown`).

use indexmap::IndexMap;
use session_format::js;
use session_format::json::{JsObject, JsValue};
use session_format::message::{TOOL_CALL_BLOCK_TYPES, TOOL_RESULT_ID_KEYS};

/// Text of a synthetic result for a call that has none.
pub const MISSING_TOOL_RESULT_TEXT: &str = "[openclaw] missing tool result in session history; inserted synthetic error result for transcript repair.";

/// `details` key marking a synthetic result.
pub const SYNTHETIC_DETAIL_KEY: &str = "openclawSyntheticMissingToolResult";

/// What happens to an assistant message that ended in `error` or `aborted`, and to the
/// results of its tool calls.
///
/// The default is [`ErroredAssistantPolicy::Skip`], what pi-ai's `transformMessages`
/// (`packages/ai/src/providers/transform-messages.ts`) does with such a message before every
/// provider call: it is skipped entirely ("incomplete turns that shouldn't be replayed"), with
/// or without tool calls, and its tool calls are not closed with synthetic results (pi-ai
/// stopped doing that because the provider then received results for calls it was never
/// sent: "No tool call found for function call output"). OpenClaw 2026.6.11's
/// `repairToolUseResultPairing` defaults to [`ErroredAssistantPolicy::Keep`]
/// (docs/DEVIATIONS.md D32).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ErroredAssistantPolicy {
    /// Keep the turn and its real results; insert nothing (the reference's
    /// `repairToolUseResultPairing` default; a call without a result stays unpaired).
    Keep,
    /// Leave a turn with tool calls out, with its results; an errored message without tool
    /// calls stays (`erroredAssistantResultPolicy: "drop"`).
    Drop,
    /// Leave every errored or aborted assistant message out, with the results of its calls
    /// (pi-ai's `transformMessages`; pi-ai keeps such results in place, where they name a
    /// call the payload no longer holds, and the pairing repair drops them). The default.
    #[default]
    Skip,
}

/// An assistant message that ended with `stopReason` `error` or `aborted`.
fn is_errored(m: &JsValue) -> bool {
    m.get("stopReason")
        .and_then(JsValue::as_js_string)
        .is_some_and(|s| s.as_wtf8() == b"error" || s.as_wtf8() == b"aborted")
}

/// Options of [`repair_tool_use_result_pairing`].
#[derive(Clone, Debug, Default)]
pub struct PairingOptions {
    /// Errored and aborted assistant messages (default: skipped, as pi-ai does).
    pub errored_assistant: ErroredAssistantPolicy,
    /// Text of synthetic results (default [`MISSING_TOOL_RESULT_TEXT`]).
    pub missing_tool_result_text: Option<String>,
    /// `timestamp` of synthetic results in ms (default: now).
    pub now_ms: Option<f64>,
}

/// The repaired messages and what changed.
#[derive(Clone, Debug, PartialEq)]
pub struct PairingRepair {
    /// The messages to send.
    pub messages: Vec<JsValue>,
    /// Synthetic results inserted.
    pub added: usize,
    /// Repeated results dropped.
    pub dropped_duplicates: usize,
    /// Results without a pending call dropped.
    pub dropped_orphans: usize,
    /// `messages` differ from the input (anything inserted, dropped, renamed or moved).
    pub changed: bool,
}

#[derive(Clone, Debug)]
struct Call {
    id: String,
    name: Option<String>,
}

/// `normalizeOptionalString`: a string trimmed, `None` when not a string or blank.
fn optional_string(v: Option<&JsValue>) -> Option<String> {
    let s = v?.as_str_lossy()?;
    let t = js::trim(&s);
    (!t.is_empty()).then(|| t.to_owned())
}

fn role(m: &JsValue) -> Option<&[u8]> {
    m.get("role")
        .and_then(JsValue::as_js_string)
        .map(|s| s.as_wtf8())
}

/// `extractToolCallsFromAssistant`.
fn tool_calls(m: &JsValue) -> Vec<Call> {
    let Some(JsValue::Array(content)) = m.get("content") else {
        return Vec::new();
    };
    content
        .iter()
        .filter_map(|b| {
            let id = b.get("id").and_then(JsValue::as_str_lossy)?;
            let ty = b.get("type").and_then(JsValue::as_js_string)?;
            (!id.is_empty()
                && TOOL_CALL_BLOCK_TYPES
                    .iter()
                    .any(|t| ty.as_wtf8() == t.as_bytes()))
            .then(|| Call {
                id: id.into_owned(),
                name: b
                    .get("name")
                    .and_then(JsValue::as_str_lossy)
                    .map(|s| s.into_owned()),
            })
        })
        .collect()
}

fn has_tool_calls(m: &JsValue) -> bool {
    role(m) == Some(b"assistant") && !tool_calls(m).is_empty()
}

/// `extractToolResultId`: the first of `toolCallId`, `toolUseId`, `tool_call_id`,
/// `tool_use_id`, `callId`, `call_id` that is a non-blank string, trimmed.
fn result_id(m: &JsValue) -> Option<String> {
    TOOL_RESULT_ID_KEYS
        .iter()
        .find_map(|k| optional_string(m.get(k)))
}

fn with_keys(m: &JsValue, keys: &[(&str, JsValue)]) -> JsValue {
    let mut m = m.clone();
    if let Some(o) = m.as_object_mut() {
        for (k, v) in keys {
            o.insert(*k, v.clone());
        }
    }
    m
}

/// `normalizeLegacyToolResultId`.
fn legacy_id(m: &JsValue, calls: &[Call]) -> JsValue {
    if result_id(m).is_some() || calls.len() != 1 {
        return m.clone();
    }
    let call = &calls[0];
    let result_name = optional_string(m.get("toolName"));
    let call_name = call.name.as_deref().map(js::trim).filter(|s| !s.is_empty());
    if let (Some(r), Some(c)) = (&result_name, call_name)
        && r != c
    {
        return m.clone();
    }
    with_keys(
        m,
        &[
            ("toolCallId", JsValue::from(call.id.as_str())),
            ("isError", JsValue::Bool(true)),
        ],
    )
}

/// `normalizeToolResultName`.
fn normalize_name(m: JsValue, fallback: Option<&str>) -> JsValue {
    let raw = m.get("toolName");
    if let Some(n) = optional_string(raw) {
        if raw.and_then(JsValue::as_str_lossy).as_deref() == Some(n.as_str()) {
            return m;
        }
        return with_keys(&m, &[("toolName", JsValue::from(n))]);
    }
    if let Some(f) = fallback.map(js::trim).filter(|s| !s.is_empty()) {
        return with_keys(&m, &[("toolName", JsValue::from(f))]);
    }
    if raw.is_some_and(|r| r.as_js_string().is_some()) {
        return with_keys(&m, &[("toolName", JsValue::from("unknown"))]);
    }
    m
}

/// `isSyntheticMissingToolResult`.
pub fn is_synthetic_missing_result(m: &JsValue) -> bool {
    if !m.get("isError").is_some_and(JsValue::is_truthy) {
        return false;
    }
    if let Some(JsValue::Object(d)) = m.get("details")
        && d.get(SYNTHETIC_DETAIL_KEY) == Some(&JsValue::Bool(true))
    {
        return true;
    }
    let Some(JsValue::Array(content)) = m.get("content") else {
        return false;
    };
    content.iter().any(|b| {
        b.get("type").and_then(JsValue::as_str_lossy).as_deref() == Some("text")
            && b.get("text").and_then(JsValue::as_str_lossy).as_deref()
                == Some(MISSING_TOOL_RESULT_TEXT)
    })
}

/// `makeMissingToolResult`: `{role, toolCallId, toolName (default "unknown"), content: [one
/// text block], details: {openclawSyntheticMissingToolResult: true}, isError: true,
/// timestamp}`.
pub fn missing_tool_result(
    tool_call_id: &str,
    tool_name: Option<&str>,
    text: Option<&str>,
    now_ms: f64,
) -> JsValue {
    let mut block = JsObject::new();
    block.insert("type", JsValue::from("text"));
    block.insert(
        "text",
        JsValue::from(text.unwrap_or(MISSING_TOOL_RESULT_TEXT)),
    );
    let mut details = JsObject::new();
    details.insert(SYNTHETIC_DETAIL_KEY, JsValue::Bool(true));
    let mut o = JsObject::new();
    o.insert("role", JsValue::from("toolResult"));
    o.insert("toolCallId", JsValue::from(tool_call_id));
    o.insert("toolName", JsValue::from(tool_name.unwrap_or("unknown")));
    o.insert("content", JsValue::Array(vec![JsValue::Object(block)]));
    o.insert("details", JsValue::Object(details));
    o.insert("isError", JsValue::Bool(true));
    o.insert("timestamp", JsValue::Number(now_ms));
    JsValue::Object(o)
}

struct Out {
    out: Vec<JsValue>,
    seen: IndexMap<String, usize>,
    /// Ids of the synthetic results still in `out`.
    added: Vec<String>,
    dropped_duplicates: usize,
    changed: bool,
}

impl Out {
    /// `pushToolResult`: a repeated id is dropped, unless it replaces a synthetic result.
    fn push_result(&mut self, m: JsValue) {
        let id = result_id(&m);
        if let Some(id) = &id
            && let Some(&pos) = self.seen.get(id)
        {
            if is_synthetic_missing_result(&self.out[pos]) && !is_synthetic_missing_result(&m) {
                self.out[pos] = m;
                if let Some(k) = self.added.iter().position(|a| a == id) {
                    self.added.remove(k);
                }
            }
            self.dropped_duplicates += 1;
            self.changed = true;
            return;
        }
        if let Some(id) = id {
            self.seen.insert(id, self.out.len());
        }
        self.out.push(m);
    }
}

/// Repairs the pairing of tool calls and results in `messages` (see the module documentation).
pub fn repair_tool_use_result_pairing(
    messages: &[JsValue],
    options: &PairingOptions,
) -> PairingRepair {
    let now = options
        .now_ms
        .unwrap_or_else(|| session_format::ids::now_ms() as f64);
    let mut st = Out {
        out: Vec::with_capacity(messages.len()),
        seen: IndexMap::new(),
        added: Vec::new(),
        dropped_duplicates: 0,
        changed: false,
    };
    let mut orphans = 0;
    let mut i = 0;
    while i < messages.len() {
        let msg = &messages[i];
        i += 1;
        if msg.as_object().is_none() {
            st.out.push(msg.clone());
            continue;
        }
        if role(msg) != Some(b"assistant") {
            if role(msg) == Some(b"toolResult") {
                orphans += 1;
                st.changed = true;
            } else {
                st.out.push(msg.clone());
            }
            continue;
        }
        let calls = tool_calls(msg);
        if calls.is_empty() {
            if options.errored_assistant == ErroredAssistantPolicy::Skip && is_errored(msg) {
                st.changed = true;
            } else {
                st.out.push(msg.clone());
            }
            continue;
        }
        // `toolCallNamesById`: the last call with this id that has a string name.
        let name_of = |id: &str| {
            calls
                .iter()
                .rev()
                .filter(|c| c.id == id)
                .find_map(|c| c.name.clone())
        };
        let mut span: IndexMap<String, JsValue> = IndexMap::new();
        let mut remainder: Vec<JsValue> = Vec::new();
        let mut j = i;
        while j < messages.len() {
            let next = &messages[j];
            if next.as_object().is_none() {
                remainder.push(next.clone());
                j += 1;
                continue;
            }
            match role(next) {
                Some(b"assistant") => {
                    if has_tool_calls(next) {
                        break;
                    }
                    if options.errored_assistant == ErroredAssistantPolicy::Skip && is_errored(next)
                    {
                        st.changed = true;
                    } else {
                        remainder.push(next.clone());
                    }
                }
                Some(b"toolResult") => {
                    let result = legacy_id(next, &calls);
                    let id = result_id(&result);
                    match id {
                        Some(id) if st.seen.contains_key(&id) => {
                            let n = normalize_name(result, name_of(&id).as_deref());
                            st.push_result(n);
                        }
                        Some(id) if calls.iter().any(|c| c.id == id) => {
                            if result != *next {
                                st.changed = true;
                            }
                            let n = normalize_name(result.clone(), name_of(&id).as_deref());
                            if n != result {
                                st.changed = true;
                            }
                            match span.get(&id) {
                                None => {
                                    span.insert(id, n);
                                }
                                Some(existing) => {
                                    if is_synthetic_missing_result(existing)
                                        && !is_synthetic_missing_result(&n)
                                    {
                                        span.insert(id, n);
                                    }
                                    st.dropped_duplicates += 1;
                                    st.changed = true;
                                }
                            }
                        }
                        _ => {
                            orphans += 1;
                            st.changed = true;
                        }
                    }
                }
                _ => remainder.push(next.clone()),
            }
            j += 1;
        }
        if is_errored(msg) {
            match options.errored_assistant {
                ErroredAssistantPolicy::Keep => {
                    st.out.push(msg.clone());
                    for c in &calls {
                        if let Some(r) = span.get(&c.id) {
                            st.push_result(r.clone());
                        }
                    }
                }
                ErroredAssistantPolicy::Drop | ErroredAssistantPolicy::Skip => st.changed = true,
            }
            st.out.extend(remainder);
            i = j;
            continue;
        }
        st.out.push(msg.clone());
        if !span.is_empty() && !remainder.is_empty() {
            st.changed = true;
        }
        // Results for these calls found later in the conversation.
        let mut later: IndexMap<String, JsValue> = IndexMap::new();
        for candidate in &messages[j..] {
            if candidate.as_object().is_none() || role(candidate) != Some(b"toolResult") {
                continue;
            }
            let result = legacy_id(candidate, &calls);
            let Some(id) = result_id(&result) else {
                continue;
            };
            if !calls.iter().any(|c| c.id == id)
                || st.seen.contains_key(&id)
                || later.contains_key(&id)
            {
                continue;
            }
            let n = normalize_name(result, name_of(&id).as_deref());
            later.insert(id, n);
        }
        for c in &calls {
            if let Some(existing) = span.get(&c.id) {
                st.push_result(existing.clone());
            } else if let Some(r) = later.shift_remove(&c.id) {
                st.changed = true;
                st.push_result(r);
            } else {
                let m = missing_tool_result(
                    &c.id,
                    c.name.as_deref(),
                    options.missing_tool_result_text.as_deref(),
                    now,
                );
                st.added.push(c.id.clone());
                st.changed = true;
                st.push_result(m);
            }
        }
        st.out.extend(remainder);
        i = j;
    }
    // The reference's `moved` flag misses two reorderings (results put in call order within
    // their span, and an errored turn's results moved up past other messages), for which it
    // returns its input unchanged; here they are kept and reported.
    let changed = st.changed || st.out.as_slice() != messages;
    PairingRepair {
        messages: st.out,
        added: st.added.len(),
        dropped_duplicates: st.dropped_duplicates,
        dropped_orphans: orphans,
        changed,
    }
}
