//! Conversion of context messages to the messages a model is sent (`convertToLlm`,
//! openclaw-jsonl.md §2.7, pi-format.md §3.5 step 7), with the reference's exact wording.
//! Checked against OpenClaw 2026.6.11 (`tests/fixtures/reference/expected/convert.json`).
//!
//! Messages are JSON values ([`JsValue`]) shaped as stored: `{role, content, timestamp, …}`.

use session_format::json::{JsObject, JsString, JsValue};

/// Text before a compaction summary.
pub const COMPACTION_SUMMARY_PREFIX: &str = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
/// Text after a compaction summary.
pub const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
/// Text before a branch summary.
pub const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
/// Text after a branch summary (no newline before it, unlike the compaction suffix).
pub const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

/// JavaScript `String(value)` for the values a message field may hold (template-literal
/// interpolation): strings as they are, numbers in JavaScript notation, `undefined` for an
/// absent field.
pub(crate) fn js_string_of(value: Option<&JsValue>) -> String {
    match value {
        None => "undefined".to_owned(),
        Some(JsValue::Null) => "null".to_owned(),
        Some(JsValue::Bool(b)) => b.to_string(),
        Some(JsValue::Number(n)) => session_format::json::number_to_string(*n),
        Some(JsValue::String(s)) => s.to_str_lossy().into_owned(),
        Some(JsValue::Array(a)) => a
            .iter()
            .map(|v| match v {
                JsValue::Null => String::new(),
                other => js_string_of(Some(other)),
            })
            .collect::<Vec<_>>()
            .join(","),
        Some(JsValue::Object(_)) => "[object Object]".to_owned(),
    }
}

/// A JavaScript string being built from template-literal pieces: UTF-16 code units, so that
/// lone surrogates in the interpolated fields are kept (a lossy `String` would turn them into
/// U+FFFD) and a lone high surrogate followed by a lone low one joins as in JavaScript.
#[derive(Default)]
struct JsText(Vec<u16>);

impl JsText {
    fn push_str(&mut self, s: &str) {
        self.0.extend(s.encode_utf16());
    }

    fn push_js(&mut self, s: &JsString) {
        for cp in s.code_points() {
            match char::from_u32(cp) {
                Some(c) => {
                    let mut buf = [0u16; 2];
                    self.0.extend_from_slice(c.encode_utf16(&mut buf));
                }
                // A lone surrogate (`0xD800..0xE000`) is one code unit.
                None => self.0.push(cp as u16),
            }
        }
    }

    /// `${value}`: as [`js_string_of`], strings (also inside arrays) kept exactly.
    fn push_value(&mut self, value: Option<&JsValue>) {
        match value {
            Some(JsValue::String(s)) => self.push_js(s),
            Some(JsValue::Array(a)) => {
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        self.push_str(",");
                    }
                    if !v.is_null() {
                        self.push_value(Some(v));
                    }
                }
            }
            other => self.push_str(&js_string_of(other)),
        }
    }

    fn finish(self) -> JsString {
        JsString::from_utf16(&self.0)
    }
}

/// `bashExecutionToText(msg)`: ``Ran `<command>` `` then the output in a ``` fence (or
/// `(no output)` when it is empty), then `(command cancelled)` when cancelled, else `Command
/// exited with code N` for a non-zero exit code, then `[Output truncated. Full output: <path>]`
/// when truncated with a full-output path.
pub fn bash_execution_to_text(msg: &JsValue) -> JsString {
    let mut text = JsText::default();
    text.push_str("Ran `");
    text.push_value(msg.get("command"));
    text.push_str("`\n");
    match msg.get("output").filter(|o| o.is_truthy()) {
        Some(output) => {
            text.push_str("```\n");
            text.push_value(Some(output));
            text.push_str("\n```");
        }
        None => text.push_str("(no output)"),
    }
    if msg.get("cancelled").is_some_and(JsValue::is_truthy) {
        text.push_str("\n\n(command cancelled)");
    } else if let Some(code) = msg
        .get("exitCode")
        .filter(|c| !c.is_null() && !matches!(c, JsValue::Number(n) if *n == 0.0))
    {
        text.push_str("\n\nCommand exited with code ");
        text.push_value(Some(code));
    }
    if msg.get("truncated").is_some_and(JsValue::is_truthy)
        && let Some(path) = msg.get("fullOutputPath").filter(|p| p.is_truthy())
    {
        text.push_str("\n\n[Output truncated. Full output: ");
        text.push_value(Some(path));
        text.push_str("]");
    }
    text.finish()
}

/// `prefix + ${summary} + suffix`.
fn wrapped(prefix: &str, summary: Option<&JsValue>, suffix: &str) -> JsString {
    let mut text = JsText::default();
    text.push_str(prefix);
    text.push_value(summary);
    text.push_str(suffix);
    text.finish()
}

fn text_block(text: JsValue) -> JsValue {
    let mut b = JsObject::new();
    b.insert("type", JsValue::from("text"));
    b.insert("text", text);
    JsValue::Object(b)
}

fn user_text(text: JsString, timestamp: Option<&JsValue>) -> JsValue {
    let mut o = JsObject::new();
    o.insert("role", JsValue::from("user"));
    o.insert(
        "content",
        JsValue::Array(vec![text_block(JsValue::from(text))]),
    );
    if let Some(t) = timestamp {
        o.insert("timestamp", t.clone());
    }
    JsValue::Object(o)
}

/// `normalizeCompactionSummaryTimestamp`: a number as it is, else `Date.parse` of a non-blank
/// string, else 0.
fn compaction_timestamp(t: Option<&JsValue>) -> JsValue {
    match t {
        Some(JsValue::Number(n)) => JsValue::Number(*n),
        Some(JsValue::String(s)) if !session_format::line::is_blank(s.as_wtf8()) => {
            match session_format::time::parse_js_date(&s.to_str_lossy()) {
                Some(ms) => JsValue::Number(ms as f64),
                None => JsValue::Number(0.0),
            }
        }
        _ => JsValue::Number(0.0),
    }
}

/// One message converted (`None`: not sent). See [`convert_to_llm`].
pub fn convert_message(message: &JsValue) -> Option<JsValue> {
    let role = message.get("role").and_then(JsValue::as_js_string)?;
    let ts = message.get("timestamp");
    match role.as_wtf8() {
        b"bashExecution" => {
            if message
                .get("excludeFromContext")
                .is_some_and(JsValue::is_truthy)
            {
                return None;
            }
            Some(user_text(bash_execution_to_text(message), ts))
        }
        b"custom" => {
            let content = match message.get("content") {
                Some(s @ JsValue::String(_)) => JsValue::Array(vec![text_block(s.clone())]),
                Some(other) => other.clone(),
                None => JsValue::Null,
            };
            let mut o = JsObject::new();
            o.insert("role", JsValue::from("user"));
            if message.get("content").is_some() {
                o.insert("content", content);
            }
            if let Some(t) = ts {
                o.insert("timestamp", t.clone());
            }
            Some(JsValue::Object(o))
        }
        b"branchSummary" => Some(user_text(
            wrapped(
                BRANCH_SUMMARY_PREFIX,
                message.get("summary"),
                BRANCH_SUMMARY_SUFFIX,
            ),
            ts,
        )),
        b"compactionSummary" => {
            let ts = compaction_timestamp(ts);
            Some(user_text(
                wrapped(
                    COMPACTION_SUMMARY_PREFIX,
                    message.get("summary"),
                    COMPACTION_SUMMARY_SUFFIX,
                ),
                Some(&ts),
            ))
        }
        b"user" | b"assistant" | b"toolResult" => Some(message.clone()),
        _ => None,
    }
}

/// `convertToLlm(messages)`: the messages a model is sent, in order:
/// - `bashExecution` → a user message with one text block ([`bash_execution_to_text`]), dropped
///   when `excludeFromContext` is truthy;
/// - `custom` → a user message with its content (a string becomes one text block);
/// - `branchSummary` → user text [`BRANCH_SUMMARY_PREFIX`] + summary + [`BRANCH_SUMMARY_SUFFIX`];
/// - `compactionSummary` → user text [`COMPACTION_SUMMARY_PREFIX`] + summary +
///   [`COMPACTION_SUMMARY_SUFFIX`], timestamp as a number (0 when it is not a date);
/// - `user`, `assistant`, `toolResult` unchanged; any other role (or none) is dropped.
///
/// Converted messages keep the source's `timestamp` (omitted when absent).
pub fn convert_to_llm(messages: &[JsValue]) -> Vec<JsValue> {
    messages.iter().filter_map(convert_message).collect()
}
