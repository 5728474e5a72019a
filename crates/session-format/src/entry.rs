//! The header and every entry kind, as serde types whose field order is the order the reference
//! writes (pi-format.md §1.3, §1.5; openclaw-jsonl.md §1.2–§1.4). Unknown fields are carried in
//! `extra` (written after the modelled fields).

use serde::{Deserialize, Serialize};

use crate::json::{JsObject, JsValue, SerdeError, from_value, to_json_string, to_value};
use crate::message::{Content, Message, present};

/// The header version this crate writes (`CURRENT_SESSION_VERSION`).
pub const CURRENT_VERSION: u32 = 3;

/// The first line: `{type:"session", version?, id, timestamp, cwd, parentSession?}`.
///
/// v1 headers have no `version` and may carry legacy keys (`provider`, `modelId`,
/// `thinkingLevel`, `branchedFrom`), which land in `extra` and are kept.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "session", rename_all = "camelCase")]
pub struct SessionHeader {
    /// Format version (absent in v1 files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<JsValue>,
    /// Session id (UUIDv7 for new sessions; any string when read).
    pub id: String,
    /// ISO creation time.
    #[serde(default)]
    pub timestamp: String,
    /// Working directory of the session.
    #[serde(default)]
    pub cwd: String,
    /// Path of the session this one was forked or branched from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_session: Option<String>,
    /// Fields this crate does not model (legacy v1 keys among them).
    #[serde(flatten)]
    pub extra: JsObject,
}

impl SessionHeader {
    /// A new version-3 header.
    pub fn new(
        id: impl Into<String>,
        timestamp: impl Into<String>,
        cwd: impl Into<String>,
        parent_session: Option<String>,
    ) -> Self {
        Self {
            version: Some(JsValue::Number(f64::from(CURRENT_VERSION))),
            id: id.into(),
            timestamp: timestamp.into(),
            cwd: cwd.into(),
            parent_session,
            extra: JsObject::new(),
        }
    }

    /// The version as the reference compares it (`header.version ?? 1`, JavaScript `<`).
    pub fn version_number(&self) -> f64 {
        crate::migrate::js_version_number(self.version.as_ref())
    }
}

/// `appendMode` on OpenClaw rows and leaf controls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum AppendMode {
    /// A side branch: the row does not move the visible leaf.
    Side,
}

/// A `message` entry: `type, id, parentId, timestamp, message`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageEntry {
    /// Entry id.
    pub id: String,
    /// Parent entry id (`null` for a root).
    pub parent_id: Option<String>,
    /// ISO time of the append.
    pub timestamp: String,
    /// The payload.
    pub message: Message,
    /// Fields this crate does not model (e.g. `appendMode`).
    #[serde(flatten)]
    pub extra: JsObject,
}

/// `thinking_level_change`: `type, id, parentId, timestamp, thinkingLevel`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingLevelChangeEntry {
    /// Entry id.
    pub id: String,
    /// Parent entry id.
    pub parent_id: Option<String>,
    /// ISO time of the append.
    pub timestamp: String,
    /// `off`, `minimal`, `low`, `medium`, `high`, `xhigh` (not validated).
    pub thinking_level: String,
    /// Fields this crate does not model.
    #[serde(flatten)]
    pub extra: JsObject,
}

/// `model_change`: `type, id, parentId, timestamp, provider, modelId`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelChangeEntry {
    /// Entry id.
    pub id: String,
    /// Parent entry id.
    pub parent_id: Option<String>,
    /// ISO time of the append.
    pub timestamp: String,
    /// Provider.
    pub provider: String,
    /// Model id.
    pub model_id: String,
    /// Fields this crate does not model.
    #[serde(flatten)]
    pub extra: JsObject,
}

/// `compaction`: `type, id, parentId, timestamp, summary, firstKeptEntryId, tokensBefore,
/// details?, fromHook?`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionEntry {
    /// Entry id.
    pub id: String,
    /// Parent entry id.
    pub parent_id: Option<String>,
    /// ISO time of the append.
    pub timestamp: String,
    /// Summary of what was compacted.
    pub summary: String,
    /// First entry kept verbatim in the context (may be absent in migrated rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_kept_entry_id: Option<String>,
    /// Estimated tokens before compaction.
    pub tokens_before: f64,
    /// Extension data (pi: `{readFiles, modifiedFiles}`).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub details: Option<JsValue>,
    /// Whether an extension produced it (pi always writes it explicitly).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_hook: Option<bool>,
    /// Fields this crate does not model.
    #[serde(flatten)]
    pub extra: JsObject,
}

/// `branch_summary`: `type, id, parentId, timestamp, fromId, summary, details?, fromHook?`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchSummaryEntry {
    /// Entry id.
    pub id: String,
    /// Parent entry id (the attach point).
    pub parent_id: Option<String>,
    /// ISO time of the append.
    pub timestamp: String,
    /// The attach point, or `root`.
    pub from_id: String,
    /// Summary text.
    pub summary: String,
    /// Extension data.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub details: Option<JsValue>,
    /// Whether an extension produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_hook: Option<bool>,
    /// Fields this crate does not model.
    #[serde(flatten)]
    pub extra: JsObject,
}

/// `custom`: **`type, customType, data?, id, parentId, timestamp`** (customType first).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomEntry {
    /// Extension-defined type.
    pub custom_type: String,
    /// Extension state (never enters the model context).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub data: Option<JsValue>,
    /// Entry id.
    pub id: String,
    /// Parent entry id.
    pub parent_id: Option<String>,
    /// ISO time of the append.
    pub timestamp: String,
    /// Fields this crate does not model.
    #[serde(flatten)]
    pub extra: JsObject,
}

/// `custom_message`: **`type, customType, content, display, details?, id, parentId,
/// timestamp`**.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomMessageEntry {
    /// Extension-defined type.
    pub custom_type: String,
    /// Text or blocks.
    pub content: Content,
    /// Whether the UI shows it (it enters the model context either way).
    pub display: bool,
    /// Extension data.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub details: Option<JsValue>,
    /// Entry id.
    pub id: String,
    /// Parent entry id.
    pub parent_id: Option<String>,
    /// ISO time of the append.
    pub timestamp: String,
    /// Fields this crate does not model.
    #[serde(flatten)]
    pub extra: JsObject,
}

/// `label`: `type, id, parentId, timestamp, targetId, label?` (absent or empty clears).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelEntry {
    /// Entry id.
    pub id: String,
    /// Parent entry id.
    pub parent_id: Option<String>,
    /// ISO time of the append.
    pub timestamp: String,
    /// The labelled entry.
    pub target_id: String,
    /// The label; `None` (key omitted) clears it, and so does `""` (written as `"label":""`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Fields this crate does not model.
    #[serde(flatten)]
    pub extra: JsObject,
}

/// `session_info`: `type, id, parentId, timestamp, name`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfoEntry {
    /// Entry id.
    pub id: String,
    /// Parent entry id.
    pub parent_id: Option<String>,
    /// ISO time of the append.
    pub timestamp: String,
    /// Session name (trimmed when written); not a string in malformed rows.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub name: Option<JsValue>,
    /// Fields this crate does not model.
    #[serde(flatten)]
    pub extra: JsObject,
}

/// OpenClaw `reset`: `type, id, parentId, timestamp, reason, firstKeptEntryId?`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResetEntry {
    /// Entry id.
    pub id: String,
    /// Parent entry id.
    pub parent_id: Option<String>,
    /// ISO time of the append.
    pub timestamp: String,
    /// `new`, `reset`, `idle`, `daily` or `cron-stale`.
    pub reason: String,
    /// First entry kept past the boundary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_kept_entry_id: Option<String>,
    /// Fields this crate does not model.
    #[serde(flatten)]
    pub extra: JsObject,
}

/// OpenClaw leaf control (stored as an opaque row): `type:"leaf", id, parentId, timestamp,
/// targetId, appendParentId?, appendMode?` (openclaw-jsonl.md §1.4, §2.12).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LeafControl {
    /// Row id.
    pub id: String,
    /// The physical tail when it was written.
    pub parent_id: Option<String>,
    /// ISO time.
    #[serde(default)]
    pub timestamp: String,
    /// The visible leaf it selects (`null` = no leaf).
    pub target_id: Option<String>,
    /// The physical append cursor, when it differs from the target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub append_parent_id: Option<Option<String>>,
    /// Side-branch mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub append_mode: Option<AppendMode>,
    /// Fields this crate does not model.
    #[serde(flatten)]
    pub extra: JsObject,
}

impl LeafControl {
    /// Reads a row as a leaf control: `type:"leaf"`, a non-empty string `id`, and `parentId` and
    /// `targetId` both present as string or null (`appendParentId`, when present, the same).
    /// Returns `None` for any other shape (such rows are plain opaque rows).
    pub fn from_row(value: &JsValue) -> Option<LeafControl> {
        let obj = value.as_object()?;
        let is_ref = |v: Option<&JsValue>| matches!(v, Some(JsValue::Null | JsValue::String(_)));
        if obj.get_str("type").as_deref() != Some("leaf")
            || obj.get_str("id").is_none_or(|id| id.is_empty())
            || !is_ref(obj.get("parentId"))
            || !is_ref(obj.get("targetId"))
            || (obj.contains_key("appendParentId") && !is_ref(obj.get("appendParentId")))
        {
            return None;
        }
        let text = |v: Option<&JsValue>| v.and_then(JsValue::as_str_lossy).map(|s| s.into_owned());
        let mut extra = obj.clone();
        for k in [
            "type",
            "id",
            "parentId",
            "timestamp",
            "targetId",
            "appendParentId",
            "appendMode",
        ] {
            extra.remove(k);
        }
        Some(LeafControl {
            id: text(obj.get("id")).unwrap_or_default(),
            parent_id: text(obj.get("parentId")),
            timestamp: text(obj.get("timestamp")).unwrap_or_default(),
            target_id: text(obj.get("targetId")),
            append_parent_id: obj.get("appendParentId").map(|v| text(Some(v))),
            append_mode: (obj.get_str("appendMode").as_deref() == Some("side"))
                .then_some(AppendMode::Side),
            extra,
        })
    }
}

/// Every kind of non-header row this crate models, tagged by `type`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[allow(clippy::large_enum_variant)] // A data type read one row at a time; boxing buys nothing.
pub enum Entry {
    /// `message`
    Message(MessageEntry),
    /// `thinking_level_change`
    ThinkingLevelChange(ThinkingLevelChangeEntry),
    /// `model_change`
    ModelChange(ModelChangeEntry),
    /// `compaction`
    Compaction(CompactionEntry),
    /// `branch_summary`
    BranchSummary(BranchSummaryEntry),
    /// `custom`
    Custom(CustomEntry),
    /// `custom_message`
    CustomMessage(CustomMessageEntry),
    /// `label`
    Label(LabelEntry),
    /// `session_info`
    SessionInfo(SessionInfoEntry),
    /// `reset` (OpenClaw)
    Reset(ResetEntry),
    /// `leaf` (OpenClaw leaf control; an opaque row for the index)
    Leaf(LeafControl),
}

macro_rules! each_entry {
    ($self:expr, $e:ident => $body:expr) => {
        match $self {
            Entry::Message($e) => $body,
            Entry::ThinkingLevelChange($e) => $body,
            Entry::ModelChange($e) => $body,
            Entry::Compaction($e) => $body,
            Entry::BranchSummary($e) => $body,
            Entry::Custom($e) => $body,
            Entry::CustomMessage($e) => $body,
            Entry::Label($e) => $body,
            Entry::SessionInfo($e) => $body,
            Entry::Reset($e) => $body,
            Entry::Leaf($e) => $body,
        }
    };
}

impl Entry {
    /// The entry id.
    pub fn id(&self) -> &str {
        each_entry!(self, e => &e.id)
    }

    /// The persisted parent id.
    pub fn parent_id(&self) -> Option<&str> {
        each_entry!(self, e => e.parent_id.as_deref())
    }

    /// The ISO timestamp.
    pub fn timestamp(&self) -> &str {
        each_entry!(self, e => &e.timestamp)
    }

    /// The fields this crate does not model.
    pub fn extra(&self) -> &JsObject {
        each_entry!(self, e => &e.extra)
    }

    /// The `type` string.
    pub fn entry_type(&self) -> EntryType {
        match self {
            Entry::Message(_) => EntryType::Message,
            Entry::ThinkingLevelChange(_) => EntryType::ThinkingLevelChange,
            Entry::ModelChange(_) => EntryType::ModelChange,
            Entry::Compaction(_) => EntryType::Compaction,
            Entry::BranchSummary(_) => EntryType::BranchSummary,
            Entry::Custom(_) => EntryType::Custom,
            Entry::CustomMessage(_) => EntryType::CustomMessage,
            Entry::Label(_) => EntryType::Label,
            Entry::SessionInfo(_) => EntryType::SessionInfo,
            Entry::Reset(_) => EntryType::Reset,
            Entry::Leaf(_) => EntryType::Leaf,
        }
    }

    /// `appendMode`, when the row carries `"side"`.
    pub fn append_mode(&self) -> Option<AppendMode> {
        if let Entry::Leaf(l) = self {
            return l.append_mode;
        }
        (self.extra().get_str("appendMode").as_deref() == Some("side")).then_some(AppendMode::Side)
    }

    /// The row as the object a JavaScript producer builds (JS key rules applied).
    ///
    /// # Errors
    /// Only if an `extra` map holds a value serde cannot express (it cannot, by construction).
    pub fn to_value(&self) -> Result<JsValue, SerdeError> {
        to_value(self)
    }

    /// The JSONL text of the row, without the line feed: `JSON.stringify(entry)`.
    ///
    /// # Errors
    /// As [`Entry::to_value`].
    pub fn to_json_line(&self) -> Result<String, SerdeError> {
        Ok(to_json_string(&self.to_value()?))
    }

    /// Reads a typed entry from a parsed row.
    ///
    /// # Errors
    /// [`SerdeError`] naming the field that does not fit (the row is still kept as bytes).
    pub fn from_value(value: &JsValue) -> Result<Self, SerdeError> {
        from_value(value)
    }
}

impl SessionHeader {
    /// The JSONL text of the header, without the line feed.
    ///
    /// # Errors
    /// As [`Entry::to_value`].
    pub fn to_json_line(&self) -> Result<String, SerdeError> {
        Ok(to_json_string(&to_value(self)?))
    }
}

/// The `type` strings of the rows this crate models.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EntryType {
    /// `message`
    Message,
    /// `thinking_level_change`
    ThinkingLevelChange,
    /// `model_change`
    ModelChange,
    /// `compaction`
    Compaction,
    /// `branch_summary`
    BranchSummary,
    /// `custom`
    Custom,
    /// `custom_message`
    CustomMessage,
    /// `label`
    Label,
    /// `session_info`
    SessionInfo,
    /// `reset`
    Reset,
    /// `leaf`
    Leaf,
}

impl EntryType {
    /// All kinds.
    pub const ALL: [EntryType; 11] = [
        EntryType::Message,
        EntryType::ThinkingLevelChange,
        EntryType::ModelChange,
        EntryType::Compaction,
        EntryType::BranchSummary,
        EntryType::Custom,
        EntryType::CustomMessage,
        EntryType::Label,
        EntryType::SessionInfo,
        EntryType::Reset,
        EntryType::Leaf,
    ];

    /// The `type` string.
    pub fn as_str(self) -> &'static str {
        match self {
            EntryType::Message => "message",
            EntryType::ThinkingLevelChange => "thinking_level_change",
            EntryType::ModelChange => "model_change",
            EntryType::Compaction => "compaction",
            EntryType::BranchSummary => "branch_summary",
            EntryType::Custom => "custom",
            EntryType::CustomMessage => "custom_message",
            EntryType::Label => "label",
            EntryType::SessionInfo => "session_info",
            EntryType::Reset => "reset",
            EntryType::Leaf => "leaf",
        }
    }

    /// True for the nine types OpenClaw 2026.6.11 indexes as entries (pi's types). `reset` and
    /// `leaf` rows are modelled for reading but are opaque rows to the 2026.6.11 index.
    pub fn is_recognised(self) -> bool {
        !matches!(self, EntryType::Reset | EntryType::Leaf)
    }

    /// Parses a `type` string.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }
}
