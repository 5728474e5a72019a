//! Message payloads (`message.message`) and content blocks, with fields in the order pi's
//! producers build them (pi-format.md §1.6). Unknown fields are carried in `extra`; unknown roles
//! and block types are kept whole as [`Message::Other`] / [`ContentBlock::Other`].

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::json::{JsObject, JsValue, from_value};

/// Deserialises an optional field so that an explicit `null` stays `Some(JsValue::Null)`.
pub(crate) fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<JsValue>, D::Error> {
    JsValue::deserialize(d).map(Some)
}

/// Message or block content: a plain string or a list of blocks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Content {
    /// `"content": "text"`.
    Text(String),
    /// `"content": [ {...}, ... ]`.
    Blocks(Vec<ContentBlock>),
}

impl Content {
    /// The text blocks (or the string) joined with `sep`.
    pub fn text(&self, sep: &str) -> String {
        match self {
            Content::Text(t) => t.clone(),
            Content::Blocks(blocks) => blocks
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Text(t) => Some(t.text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join(sep),
        }
    }
}

/// `{"type":"text","text",textSignature?}`
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextBlock {
    /// The text.
    pub text: String,
    /// Provider signature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_signature: Option<String>,
    /// Fields this crate does not model, in their original order.
    #[serde(flatten)]
    pub extra: JsObject,
}

/// `{"type":"thinking","thinking",thinkingSignature?,redacted?}`
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingBlock {
    /// The reasoning text.
    pub thinking: String,
    /// Provider signature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_signature: Option<String>,
    /// Whether the provider redacted the reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redacted: Option<bool>,
    /// Fields this crate does not model.
    #[serde(flatten)]
    pub extra: JsObject,
}

/// `{"type":"image","data":<base64>,"mimeType"}`
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageBlock {
    /// Base64 image bytes.
    pub data: String,
    /// e.g. `image/png`.
    pub mime_type: String,
    /// Fields this crate does not model.
    #[serde(flatten)]
    pub extra: JsObject,
}

/// `{"type":"toolCall","id","name","arguments",thoughtSignature?}`
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallBlock {
    /// Tool call id, matched by a toolResult's `toolCallId`.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments object as the model produced it.
    pub arguments: JsValue,
    /// Provider signature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<String>,
    /// Fields this crate does not model (e.g. a leaked `partialJson`).
    #[serde(flatten)]
    pub extra: JsObject,
}

/// A content block.
#[derive(Clone, Debug, PartialEq)]
pub enum ContentBlock {
    /// `type: "text"`.
    Text(TextBlock),
    /// `type: "thinking"`.
    Thinking(ThinkingBlock),
    /// `type: "image"`.
    Image(ImageBlock),
    /// `type: "toolCall"`.
    ToolCall(ToolCallBlock),
    /// Any other block, kept whole.
    Other(JsObject),
}

impl ContentBlock {
    /// A plain text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextBlock {
            text: text.into(),
            text_signature: None,
            extra: JsObject::new(),
        })
    }

    /// A tool call block `{"type":"toolCall","id","name","arguments"}`; `arguments` is the
    /// arguments object as the model produced it.
    pub fn tool_call(id: impl Into<String>, name: impl Into<String>, arguments: JsValue) -> Self {
        ContentBlock::ToolCall(ToolCallBlock {
            id: id.into(),
            name: name.into(),
            arguments,
            thought_signature: None,
            extra: JsObject::new(),
        })
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
enum BlockRef<'a> {
    Text(&'a TextBlock),
    Thinking(&'a ThinkingBlock),
    Image(&'a ImageBlock),
    ToolCall(&'a ToolCallBlock),
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ContentBlock::Text(b) => BlockRef::Text(b).serialize(s),
            ContentBlock::Thinking(b) => BlockRef::Thinking(b).serialize(s),
            ContentBlock::Image(b) => BlockRef::Image(b).serialize(s),
            ContentBlock::ToolCall(b) => BlockRef::ToolCall(b).serialize(s),
            ContentBlock::Other(o) => o.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let obj = JsObject::deserialize(d)?;
        let tag = obj.get_str("type").map(|t| t.into_owned());
        let err = serde::de::Error::custom;
        let body = || strip(&obj, "type");
        Ok(match tag.as_deref() {
            Some("text") => ContentBlock::Text(from_value(&body()).map_err(err)?),
            Some("thinking") => ContentBlock::Thinking(from_value(&body()).map_err(err)?),
            Some("image") => ContentBlock::Image(from_value(&body()).map_err(err)?),
            Some("toolCall") => ContentBlock::ToolCall(from_value(&body()).map_err(err)?),
            _ => ContentBlock::Other(obj),
        })
    }
}

/// A copy of an object value without one key (the tag, which the payload struct does not hold).
fn strip(obj: &JsObject, key: &str) -> JsValue {
    let mut o = obj.clone();
    o.remove(key);
    JsValue::Object(o)
}

/// Token counts and costs of an assistant turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Cache-read tokens.
    pub cache_read: u64,
    /// Cache-write tokens.
    pub cache_write: u64,
    /// Sum of the four (absent in old files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_tokens: Option<u64>,
    /// Costs in US dollars.
    pub cost: Cost,
    /// Fields this crate does not model.
    #[serde(flatten)]
    pub extra: JsObject,
}

/// Costs in US dollars (JavaScript doubles; written with ECMAScript number text).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cost {
    /// Input cost.
    pub input: f64,
    /// Output cost.
    pub output: f64,
    /// Cache-read cost.
    pub cache_read: f64,
    /// Cache-write cost.
    pub cache_write: f64,
    /// Total cost.
    pub total: f64,
    /// Fields this crate does not model.
    #[serde(flatten)]
    pub extra: JsObject,
}

/// `role: "user"` — `role, content, timestamp`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UserMessage {
    /// Text or blocks.
    pub content: Content,
    /// Unix milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// Fields this crate does not model (e.g. `idempotencyKey`, `excludeFromContext`).
    #[serde(flatten)]
    pub extra: JsObject,
}

/// `role: "assistant"` — `role, content, api, provider, model, usage, stopReason, timestamp`,
/// then streaming additions (`responseId`, `errorMessage`, …) in `extra`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    /// Blocks (a string in some hand-written files).
    pub content: Content,
    /// Provider API, e.g. `anthropic-messages`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    /// Provider, e.g. `anthropic`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Model id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Token usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// `stop`, `toolUse`, `aborted`, `error`, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Unix milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// Fields this crate does not model.
    #[serde(flatten)]
    pub extra: JsObject,
}

/// The content block `type`s the reference reads as tool calls in an assistant message
/// (`extractToolCallsFromAssistant`): a block with one of these and a non-empty string `id`.
pub const TOOL_CALL_BLOCK_TYPES: [&str; 3] = ["toolCall", "toolUse", "functionCall"];

/// The keys the reference reads a tool result's call id from, in order (`extractToolResultId`):
/// the first that holds a non-blank string, trimmed, is the id.
pub const TOOL_RESULT_ID_KEYS: [&str; 6] = [
    "toolCallId",
    "toolUseId",
    "tool_call_id",
    "tool_use_id",
    "callId",
    "call_id",
];

/// `role: "toolResult"` — `role, toolCallId, toolName, content, details?, isError, timestamp`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    /// The tool call this answers.
    pub tool_call_id: String,
    /// Tool name.
    pub tool_name: String,
    /// Result blocks.
    pub content: Content,
    /// Tool-specific details (e.g. an edit's diff).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub details: Option<JsValue>,
    /// Whether the tool failed.
    pub is_error: bool,
    /// Unix milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// Fields this crate does not model.
    #[serde(flatten)]
    pub extra: JsObject,
}

/// `role: "bashExecution"` — `role, command, output, exitCode?, cancelled, truncated,
/// fullOutputPath?, timestamp, excludeFromContext?`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BashExecutionMessage {
    /// The command line.
    pub command: String,
    /// Captured output.
    pub output: String,
    /// Exit code; absent when the process was killed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// Whether the user cancelled it.
    pub cancelled: bool,
    /// Whether the output was truncated.
    pub truncated: bool,
    /// Where the full output was saved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
    /// Unix milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// Kept out of the model context when true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude_from_context: Option<bool>,
    /// Fields this crate does not model.
    #[serde(flatten)]
    pub extra: JsObject,
}

/// `role: "custom"` — `role, customType, content, display, details?, timestamp`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomRoleMessage {
    /// Extension-defined type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_type: Option<String>,
    /// Text or blocks.
    pub content: Content,
    /// Whether the UI shows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display: Option<bool>,
    /// Extension data.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub details: Option<JsValue>,
    /// Unix milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// Fields this crate does not model.
    #[serde(flatten)]
    pub extra: JsObject,
}

/// `role: "branchSummary"` (built by context assembly) — `role, summary, fromId, timestamp`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchSummaryMessage {
    /// Summary text.
    pub summary: String,
    /// The branch point, or `root`.
    pub from_id: String,
    /// Unix milliseconds (`null` when the entry timestamp is not a date).
    pub timestamp: Option<i64>,
    /// Fields this crate does not model.
    #[serde(flatten)]
    pub extra: JsObject,
}

/// `role: "compactionSummary"` (built by context assembly) — `role, summary, tokensBefore,
/// timestamp`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionSummaryMessage {
    /// Summary text.
    pub summary: String,
    /// Estimated tokens before compaction.
    pub tokens_before: f64,
    /// Unix milliseconds (`null` when the entry timestamp is not a date).
    pub timestamp: Option<i64>,
    /// Fields this crate does not model.
    #[serde(flatten)]
    pub extra: JsObject,
}

/// A message payload, tagged by `role`.
#[derive(Clone, Debug, PartialEq)]
#[allow(clippy::large_enum_variant)] // A data type read one row at a time; boxing buys nothing.
pub enum Message {
    /// `user`
    User(UserMessage),
    /// `assistant`
    Assistant(AssistantMessage),
    /// `toolResult`
    ToolResult(ToolResultMessage),
    /// `bashExecution`
    BashExecution(BashExecutionMessage),
    /// `custom` (v2 `hookMessage` migrates to this)
    Custom(CustomRoleMessage),
    /// `branchSummary`
    BranchSummary(BranchSummaryMessage),
    /// `compactionSummary`
    CompactionSummary(CompactionSummaryMessage),
    /// Any other role (or none), kept whole.
    Other(JsObject),
}

impl Message {
    /// The `role` string.
    pub fn role(&self) -> Option<&str> {
        Some(match self {
            Message::User(_) => "user",
            Message::Assistant(_) => "assistant",
            Message::ToolResult(_) => "toolResult",
            Message::BashExecution(_) => "bashExecution",
            Message::Custom(_) => "custom",
            Message::BranchSummary(_) => "branchSummary",
            Message::CompactionSummary(_) => "compactionSummary",
            Message::Other(o) => {
                return match o.get("role") {
                    Some(JsValue::String(s)) => s.as_str(),
                    _ => None,
                };
            }
        })
    }

    /// A user message with text blocks, as current pi builds prompts.
    pub fn user_text(text: impl Into<String>, timestamp_ms: i64) -> Self {
        Message::User(UserMessage {
            content: Content::Blocks(vec![ContentBlock::text(text)]),
            timestamp: Some(timestamp_ms),
            extra: JsObject::new(),
        })
    }

    /// An assistant message `{role, content, provider, model, stopReason, timestamp}` (keys in
    /// the reference's order; no `api` or `usage`, which a caller sets on the
    /// [`AssistantMessage`] when it has them). `stopReason` is `toolUse` when a block is a tool
    /// call, else `stop`.
    pub fn assistant(
        content: Vec<ContentBlock>,
        provider: impl Into<String>,
        model: impl Into<String>,
        timestamp_ms: i64,
    ) -> Self {
        let tool_use = content
            .iter()
            .any(|b| matches!(b, ContentBlock::ToolCall(_)));
        Message::Assistant(AssistantMessage {
            content: Content::Blocks(content),
            api: None,
            provider: Some(provider.into()),
            model: Some(model.into()),
            usage: None,
            stop_reason: Some(if tool_use { "toolUse" } else { "stop" }.to_owned()),
            timestamp: Some(timestamp_ms),
            extra: JsObject::new(),
        })
    }

    /// A tool result with one text block, `{role:"toolResult", toolCallId, toolName, content,
    /// isError, timestamp}`, answering the tool call `tool_call_id`.
    pub fn tool_result_text(
        tool_call_id: impl Into<String>,
        tool_name: impl Into<String>,
        text: impl Into<String>,
        is_error: bool,
        timestamp_ms: i64,
    ) -> Self {
        Message::ToolResult(ToolResultMessage {
            tool_call_id: tool_call_id.into(),
            tool_name: tool_name.into(),
            content: Content::Blocks(vec![ContentBlock::text(text)]),
            details: None,
            is_error,
            timestamp: Some(timestamp_ms),
            extra: JsObject::new(),
        })
    }
}

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "camelCase")]
enum MessageRef<'a> {
    User(&'a UserMessage),
    Assistant(&'a AssistantMessage),
    ToolResult(&'a ToolResultMessage),
    BashExecution(&'a BashExecutionMessage),
    Custom(&'a CustomRoleMessage),
    BranchSummary(&'a BranchSummaryMessage),
    CompactionSummary(&'a CompactionSummaryMessage),
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Message::User(m) => MessageRef::User(m).serialize(s),
            Message::Assistant(m) => MessageRef::Assistant(m).serialize(s),
            Message::ToolResult(m) => MessageRef::ToolResult(m).serialize(s),
            Message::BashExecution(m) => MessageRef::BashExecution(m).serialize(s),
            Message::Custom(m) => MessageRef::Custom(m).serialize(s),
            Message::BranchSummary(m) => MessageRef::BranchSummary(m).serialize(s),
            Message::CompactionSummary(m) => MessageRef::CompactionSummary(m).serialize(s),
            Message::Other(o) => o.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let obj = JsObject::deserialize(d)?;
        let role = obj.get_str("role").map(|r| r.into_owned());
        let err = serde::de::Error::custom;
        let body = || strip(&obj, "role");
        Ok(match role.as_deref() {
            Some("user") => Message::User(from_value(&body()).map_err(err)?),
            Some("assistant") => Message::Assistant(from_value(&body()).map_err(err)?),
            Some("toolResult") => Message::ToolResult(from_value(&body()).map_err(err)?),
            Some("bashExecution") => Message::BashExecution(from_value(&body()).map_err(err)?),
            Some("custom") => Message::Custom(from_value(&body()).map_err(err)?),
            Some("branchSummary") => Message::BranchSummary(from_value(&body()).map_err(err)?),
            Some("compactionSummary") => {
                Message::CompactionSummary(from_value(&body()).map_err(err)?)
            }
            _ => Message::Other(obj),
        })
    }
}
