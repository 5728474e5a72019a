//! Token estimates, as OpenClaw 2026.6.11 (pi-format.md §3.9) computes them: `ceil(chars / 4)`
//! where `chars` is the **UTF-16 length** of the counted text (JavaScript `.length`), an image
//! counts as 4,800 chars, and a context's size is the provider-reported usage of its last
//! successful assistant plus the estimates of the messages after it. Checked against the
//! reference (`tests/fixtures/reference/expected/convert.json`).
//!
//! Where the reference would throw on a malformed message (a text block without `text`), the
//! missing text counts as 0 chars.

use session_format::json::{JsValue, to_json_string};

/// Chars an image block counts as.
pub const IMAGE_BLOCK_CHARS: u64 = 4800;

/// UTF-16 length of a string value (0 for anything else).
fn len16(v: Option<&JsValue>) -> u64 {
    v.and_then(JsValue::as_js_string)
        .map_or(0, |s| s.utf16_len() as u64)
}

/// `countContentBlockChars`: text blocks with a non-empty `text` count its length, image
/// blocks 4,800.
fn content_block_chars(content: &[JsValue]) -> u64 {
    content
        .iter()
        .map(
            |block| match block.get("type").and_then(JsValue::as_js_string) {
                Some(t) if t.as_wtf8() == b"text" => len16(block.get("text")),
                Some(t) if t.as_wtf8() == b"image" => IMAGE_BLOCK_CHARS,
                _ => 0,
            },
        )
        .sum()
}

/// `content` as a string (its length) or an array of blocks.
fn content_chars(content: Option<&JsValue>) -> u64 {
    match content {
        Some(JsValue::String(s)) => s.utf16_len() as u64,
        Some(JsValue::Array(a)) => content_block_chars(a),
        _ => 0,
    }
}

/// `JSON.stringify(value) ?? "undefined"`, UTF-16 length.
fn json_len16(value: Option<&JsValue>) -> u64 {
    match value {
        None => "undefined".len() as u64,
        Some(v) => to_json_string(v).encode_utf16().count() as u64,
    }
}

/// Characters counted for one message (see [`estimate_tokens`]).
pub fn message_chars(message: &JsValue) -> u64 {
    let role = message.get("role").and_then(JsValue::as_js_string);
    match role.map(|r| r.as_wtf8()) {
        Some(b"user") => content_chars(message.get("content")),
        Some(b"assistant") => match message.get("content") {
            Some(JsValue::Array(blocks)) => blocks
                .iter()
                .map(
                    |block| match block.get("type").and_then(JsValue::as_js_string) {
                        Some(t) if t.as_wtf8() == b"text" => len16(block.get("text")),
                        Some(t) if t.as_wtf8() == b"thinking" => len16(block.get("thinking")),
                        Some(t) if t.as_wtf8() == b"toolCall" => {
                            len16(block.get("name")) + json_len16(block.get("arguments"))
                        }
                        _ => 0,
                    },
                )
                .sum(),
            _ => 0,
        },
        Some(b"custom" | b"toolResult") => content_chars(message.get("content")),
        Some(b"bashExecution") => len16(message.get("command")) + len16(message.get("output")),
        Some(b"branchSummary" | b"compactionSummary") => len16(message.get("summary")),
        _ => 0,
    }
}

/// `estimateTokens(message)` = `ceil(chars / 4)` with chars counted on UTF-16 length:
/// - `user`: string content, or the text blocks (non-empty `text`) plus 4,800 per image;
/// - `assistant`: text, thinking, and per tool call its name plus `JSON.stringify(arguments)`;
/// - `custom`, `toolResult`: as `user`;
/// - `bashExecution`: command plus output;
/// - `branchSummary`, `compactionSummary`: the summary;
/// - any other role: 0.
pub fn estimate_tokens(message: &JsValue) -> u64 {
    message_chars(message).div_ceil(4)
}

/// A context's size (`estimateContextTokens`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContextTokens {
    /// `usage_tokens + trailing_tokens`.
    pub tokens: f64,
    /// The last successful assistant's usage ([`calculate_context_tokens`]), 0 without one.
    pub usage_tokens: f64,
    /// Estimates of the messages after that assistant (all messages without one).
    pub trailing_tokens: f64,
    /// Index of that assistant.
    pub last_usage_index: Option<usize>,
}

/// A usage field as JavaScript's `+` sees it (absent or not a number: NaN).
fn num(usage: &JsValue, key: &str) -> f64 {
    usage.get(key).and_then(JsValue::as_f64).unwrap_or(f64::NAN)
}

/// `calculateContextTokens(usage)`: `totalTokens` when truthy, else `input + output +
/// cacheRead + cacheWrite` (NaN when one is missing, as in JavaScript).
pub fn calculate_context_tokens(usage: &JsValue) -> f64 {
    match usage.get("totalTokens") {
        Some(t) if t.is_truthy() => t.as_f64().unwrap_or(f64::NAN),
        _ => {
            num(usage, "input")
                + num(usage, "output")
                + num(usage, "cacheRead")
                + num(usage, "cacheWrite")
        }
    }
}

/// The usage of an assistant message that ended normally (`stopReason` neither `aborted` nor
/// `error`) and carries a truthy `usage`.
pub fn assistant_usage(message: &JsValue) -> Option<&JsValue> {
    let obj = message.as_object()?;
    if obj.get("role").and_then(JsValue::as_js_string)?.as_wtf8() != b"assistant" {
        return None;
    }
    let stop = obj.get("stopReason").and_then(JsValue::as_js_string);
    if stop.is_some_and(|s| s.as_wtf8() == b"aborted" || s.as_wtf8() == b"error") {
        return None;
    }
    obj.get("usage").filter(|u| u.is_truthy())
}

/// `estimateContextTokens(messages)`: the usage reported with the last successful assistant
/// plus [`estimate_tokens`] of every later message; without such an assistant, the sum of the
/// estimates.
pub fn estimate_context_tokens(messages: &[JsValue]) -> ContextTokens {
    let last = messages
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, m)| assistant_usage(m).map(|u| (i, u)));
    match last {
        None => {
            let estimated: u64 = messages.iter().map(estimate_tokens).sum();
            ContextTokens {
                tokens: estimated as f64,
                usage_tokens: 0.0,
                trailing_tokens: estimated as f64,
                last_usage_index: None,
            }
        }
        Some((i, usage)) => {
            let usage_tokens = calculate_context_tokens(usage);
            let trailing: u64 = messages[i + 1..].iter().map(estimate_tokens).sum();
            ContextTokens {
                tokens: usage_tokens + trailing as f64,
                usage_tokens,
                trailing_tokens: trailing as f64,
                last_usage_index: Some(i),
            }
        }
    }
}
