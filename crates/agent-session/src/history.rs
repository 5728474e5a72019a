//! History limits on the messages a model is sent: the seed article's `maxHistoryMessages` /
//! `maxHistoryTokens`, with per-chat-type overrides (`channelOverrides.dm` / `.group`), resolved
//! by [`session_semantics::policy::SessionsConfig::history_limits`]. OpenClaw 2026.6.11 has no
//! such setting (openclaw-jsonl.md §5.5); this is the workspace's own, applied at the payload
//! boundary only: the transcript file is never changed by it.

use session_format::json::JsValue;
use session_semantics::kind::ChatType;
use session_semantics::policy::{HistoryLimits, SessionsConfig};

use crate::tokens::estimate_tokens;

/// The limits for a chat type (`dm` for direct chats, `group` for groups and channels, the
/// base settings otherwise), as [`SessionsConfig::history_limits`] resolves them.
pub fn limits_for(config: &SessionsConfig, chat_type: ChatType) -> HistoryLimits {
    config.history_limits(chat_type)
}

fn is_tool_result(m: &JsValue) -> bool {
    m.get("role")
        .and_then(JsValue::as_js_string)
        .is_some_and(|r| r.as_wtf8() == b"toolResult")
}

/// The index of the first message to keep under `limits`: the longest suffix within both the
/// message and the token limit ([`HistoryLimits::keep_from`], tokens from
/// [`estimate_tokens`]; the newest message is always kept), moved so that a tool call is never
/// separated from its result: a kept prefix starting on tool results drops them too (their call
/// is gone). When that would drop everything, the start moves back instead to the message that
/// precedes those results (the assistant with the calls), exceeding the limits by that turn.
pub fn history_start(messages: &[JsValue], limits: &HistoryLimits) -> usize {
    let tokens: Vec<u64> = messages.iter().map(estimate_tokens).collect();
    let start = limits.keep_from(&tokens);
    let mut forward = start;
    while forward < messages.len() && is_tool_result(&messages[forward]) {
        forward += 1;
    }
    if forward < messages.len() || start == messages.len() {
        return forward.min(messages.len());
    }
    let mut back = start;
    while back > 0 && is_tool_result(&messages[back]) {
        back -= 1;
    }
    back
}

/// `messages` without the prefix [`history_start`] drops.
pub fn apply_history_limits(messages: Vec<JsValue>, limits: &HistoryLimits) -> Vec<JsValue> {
    let start = history_start(&messages, limits);
    let mut messages = messages;
    messages.drain(..start);
    messages
}
