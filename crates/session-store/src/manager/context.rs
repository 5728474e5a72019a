//! The model context (`buildSessionContext`, openclaw-jsonl.md §2.7) as OpenClaw 2026.6.11
//! builds it over the branch to the leaf:
//! - `thinkingLevel`: the last `thinking_level_change` on the path (default `"off"`);
//! - `model`: the last `model_change` `{provider, modelId}` or assistant message
//!   `{provider, modelId: model}` anywhere on the path;
//! - the **last** `compaction` is the boundary: its summary first, then the entries from its
//!   `firstKeptEntryId` up to it (only when that id lies before it), then everything after it;
//! - `message` rows give their message (`excludeFromContext` is not honoured in 2026.6.11 —
//!   checked with the reference), `custom_message` rows give
//!   `{role:"custom", customType, content, display, details, timestamp}`, `branch_summary`
//!   rows with a truthy summary give `{role:"branchSummary", summary, fromId, timestamp}`;
//! - derived timestamps are `Date.parse(entry.timestamp)`, `null` when invalid (the reference
//!   throws instead; docs/DEVIATIONS.md D7).
//!
//! A branch whose first entry names a parent the session does not hold (a line lost to damage)
//! starts at that entry, as in the reference: nothing is re-parented and no message is invented.
//! [`SessionContext::gap`] says so (an addition of this workspace; the reference's value,
//! [`SessionContext::to_value`], is unchanged).
//!
//! Messages are materialised lazily: only the rows that produce a returned message, plus the
//! last thinking/model/compaction rows, are parsed. Payloads are moved out of the freshly parsed
//! row, never cloned recursively, so a deeply nested payload cannot overflow the stack here.

use session_format::entry::EntryType;
use session_format::json::{JsObject, JsValue};

use super::SessionManager;
use crate::deep::{clone_value, take};
use crate::error::{ContextError, ReadError, RowLocation};
use crate::id::Id;
use crate::manager::EntryRef;
use crate::rows::MsgShape;

/// What produced a context message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContextKind {
    /// A `message` entry: its `message` as stored.
    Message,
    /// A `custom_message` entry, as a `custom`-role message.
    CustomMessage,
    /// A `branch_summary` entry, as a `branchSummary`-role message.
    BranchSummary,
    /// The boundary `compaction`, as a `compactionSummary`-role message.
    CompactionSummary,
}

/// One message of the context, materialised on demand.
#[derive(Clone, Copy, Debug)]
pub struct ContextMessage<'a> {
    /// What produced it.
    pub kind: ContextKind,
    /// The entry it comes from.
    pub entry: EntryRef<'a>,
}

/// `Date.parse(timestamp)` as a JSON value: milliseconds, or `null` when the timestamp is not a
/// string or not a date.
fn derived_timestamp(row: &JsValue) -> JsValue {
    match row.get("timestamp") {
        Some(JsValue::String(s)) if !s.to_str_lossy().trim().is_empty() => {
            match session_format::time::parse_js_date(&s.to_str_lossy()) {
                Some(ms) => JsValue::Number(ms as f64),
                None => JsValue::Null,
            }
        }
        _ => JsValue::Null,
    }
}

fn copy(o: &mut JsObject, from: &mut JsValue, key: &str) {
    if let Some(v) = take(from, key) {
        o.insert(key, v);
    }
}

impl ContextMessage<'_> {
    /// The message as the reference builds it (keys absent from the row are omitted, as
    /// JavaScript drops `undefined`).
    ///
    /// # Errors
    /// [`ReadError`] (a bug).
    pub fn to_value(&self) -> Result<JsValue, ReadError> {
        let mut row = self.entry.value()?;
        Ok(match self.kind {
            ContextKind::Message => take(&mut row, "message").unwrap_or(JsValue::Null),
            ContextKind::CustomMessage => {
                let mut o = JsObject::new();
                o.insert("role", JsValue::from("custom"));
                copy(&mut o, &mut row, "customType");
                copy(&mut o, &mut row, "content");
                copy(&mut o, &mut row, "display");
                copy(&mut o, &mut row, "details");
                o.insert("timestamp", derived_timestamp(&row));
                JsValue::Object(o)
            }
            ContextKind::BranchSummary => {
                let mut o = JsObject::new();
                o.insert("role", JsValue::from("branchSummary"));
                copy(&mut o, &mut row, "summary");
                copy(&mut o, &mut row, "fromId");
                o.insert("timestamp", derived_timestamp(&row));
                JsValue::Object(o)
            }
            ContextKind::CompactionSummary => {
                let mut o = JsObject::new();
                o.insert("role", JsValue::from("compactionSummary"));
                copy(&mut o, &mut row, "summary");
                copy(&mut o, &mut row, "tokensBefore");
                o.insert("timestamp", derived_timestamp(&row));
                JsValue::Object(o)
            }
        })
    }

    /// The role string of the materialised message (`None` for a `message` whose payload has
    /// no string role).
    ///
    /// # Errors
    /// As [`ContextMessage::to_value`].
    pub fn role(&self) -> Result<Option<String>, ReadError> {
        Ok(self
            .to_value()?
            .get("role")
            .and_then(|r| r.as_str_lossy().map(|s| s.into_owned())))
    }
}

/// The model of the context: the fields as the row holds them (`None` = absent).
#[derive(Clone, Debug, PartialEq)]
pub struct ContextModel {
    /// `provider`.
    pub provider: Option<JsValue>,
    /// `modelId` (from `model` for an assistant message).
    pub model_id: Option<JsValue>,
}

impl ContextModel {
    /// `(provider, modelId)` when both are strings.
    pub fn as_strs(&self) -> Option<(String, String)> {
        let p = self.provider.as_ref()?.as_str_lossy()?.into_owned();
        let m = self.model_id.as_ref()?.as_str_lossy()?.into_owned();
        Some((p, m))
    }
}

/// Where a branch stops short of a root: its first entry's `parentId` (followed through
/// parent-linked opaque rows) names a row the session does not hold. The context starts at that
/// entry, as the reference's does; the missing history is not bridged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextGap {
    /// The first entry of the branch (lossy text).
    pub entry_id: String,
    /// The id that names nothing (lossy text): the entry's `parentId`, or the `parentId` of the
    /// last opaque row its chain passes through.
    pub missing_parent_id: String,
    /// Where the entry is.
    pub at: RowLocation,
}

/// The result of [`SessionManager::build_session_context`].
#[derive(Clone, Debug)]
pub struct SessionContext<'a> {
    /// The messages, in order.
    pub messages: Vec<ContextMessage<'a>>,
    /// Set when the branch does not reach a root because a parent is missing (see
    /// [`ContextGap`]); not part of the reference's value.
    pub gap: Option<ContextGap>,
    /// `thinkingLevel`: `"off"` by default; the last change's value (`None` when that row has
    /// no `thinkingLevel`).
    pub thinking_level: Option<JsValue>,
    /// `model`, `None` = `null`.
    pub model: Option<ContextModel>,
}

impl SessionContext<'_> {
    /// The thinking level when it is a string.
    pub fn thinking_level_str(&self) -> Option<String> {
        self.thinking_level
            .as_ref()
            .and_then(|t| t.as_str_lossy().map(|s| s.into_owned()))
    }

    /// `{messages, thinkingLevel, model}` as the reference returns it.
    ///
    /// # Errors
    /// [`ReadError`] (a bug).
    pub fn to_value(&self) -> Result<JsValue, ReadError> {
        let mut o = JsObject::new();
        let messages = self
            .messages
            .iter()
            .map(ContextMessage::to_value)
            .collect::<Result<Vec<_>, _>>()?;
        o.insert("messages", JsValue::Array(messages));
        if let Some(t) = &self.thinking_level {
            o.insert("thinkingLevel", clone_value(t));
        }
        let model = match &self.model {
            None => JsValue::Null,
            Some(m) => {
                let mut mo = JsObject::new();
                if let Some(p) = &m.provider {
                    mo.insert("provider", clone_value(p));
                }
                if let Some(id) = &m.model_id {
                    mo.insert("modelId", clone_value(id));
                }
                JsValue::Object(mo)
            }
        };
        o.insert("model", model);
        Ok(JsValue::Object(o))
    }
}

impl SessionManager {
    /// The model context (`buildSessionContext`, openclaw-jsonl.md §2.7) over
    /// [`SessionManager::get_branch`], as OpenClaw 2026.6.11 builds it:
    /// - `thinkingLevel`: the last `thinking_level_change` on the path (default `"off"`);
    /// - `model`: the last `model_change` `{provider, modelId}` or assistant message
    ///   `{provider, modelId: model}` anywhere on the path;
    /// - the **last** `compaction` is the boundary: its summary first, then the entries from its
    ///   `firstKeptEntryId` up to it (only when that id lies before it), then everything after it;
    /// - `message` rows give their message (`excludeFromContext` is not honoured in 2026.6.11 —
    ///   checked with the reference), `custom_message` rows give
    ///   `{role:"custom", customType, content, display, details, timestamp}`, `branch_summary`
    ///   rows with a truthy summary give `{role:"branchSummary", summary, fromId, timestamp}`;
    /// - derived timestamps are `Date.parse(entry.timestamp)`, `null` when invalid (the reference
    ///   throws instead; docs/DEVIATIONS.md D7).
    ///
    /// A null leaf gives no messages, `"off"`, and no model. A branch whose first entry names a
    /// parent the session does not hold starts at that entry ([`SessionContext::gap`] says so).
    ///
    /// # Errors
    /// [`ContextError::InvalidMessage`] when a `message` row on the path has a `null` or missing
    /// `message` (OpenClaw 2026.6.11 throws a `TypeError` there).
    pub fn build_session_context(&self) -> Result<SessionContext<'_>, ContextError> {
        let path = self.get_branch(None);
        self.context_for_path(&path)
    }

    /// The model context over the branch ending at `leaf_id` (as
    /// [`SessionManager::build_session_context`] with a different leaf); an id that is not an
    /// entry falls back to the last entry in file order, as the reference's standalone
    /// `buildSessionContext(entries, leafId)` does.
    ///
    /// # Errors
    /// As [`SessionManager::build_session_context`].
    pub fn build_session_context_at(
        &self,
        leaf_id: &str,
    ) -> Result<SessionContext<'_>, ContextError> {
        // The standalone reference function falls back to the last entry when the leaf id is
        // not an entry (pi-format.md §3.5 step 1).
        let leaf = match self.ix.by_id.get_key_value(leaf_id.as_bytes()) {
            Some((k, _)) => Some(k.clone()),
            None => self.get_entries().last().and_then(|e| e.id_ref().cloned()),
        };
        let path = match leaf {
            Some(l) => self.branch_from(Some(l)),
            None => Vec::new(),
        };
        self.context_for_path(&path)
    }

    /// The gap before `first`, the first entry of a branch (see
    /// [`crate::inspect::missing_parent`]).
    fn gap_before(&self, first: &EntryRef<'_>) -> Option<ContextGap> {
        let meta = first.meta()?;
        let missing = crate::inspect::missing_parent(&self.ix, &meta.id, &meta.parent)?;
        Some(ContextGap {
            entry_id: meta.id.text().to_owned(),
            missing_parent_id: missing.text().to_owned(),
            at: first.location(),
        })
    }

    fn context_for_path<'a>(
        &'a self,
        path: &[EntryRef<'a>],
    ) -> Result<SessionContext<'a>, ContextError> {
        // `entry.message.role` is read for every message row first: a null or missing
        // message throws there in the reference.
        for e in path {
            if e.entry_type() == EntryType::Message
                && let Some(shape @ (MsgShape::Null | MsgShape::Missing)) =
                    e.meta().and_then(|m| m.msg)
            {
                return Err(ContextError::InvalidMessage {
                    id: e.id().to_owned(),
                    missing: shape == MsgShape::Missing,
                    at: e.location(),
                });
            }
        }
        let mut thinking_level = Some(JsValue::from("off"));
        if let Some(e) = path
            .iter()
            .rev()
            .find(|e| e.entry_type() == EntryType::ThinkingLevelChange)
        {
            thinking_level = take(&mut e.value()?, "thinkingLevel");
        }
        let mut model = None;
        if let Some(e) = path
            .iter()
            .rev()
            .find(|e| e.entry_type() == EntryType::ModelChange || e.is_assistant_message())
        {
            let mut v = e.value()?;
            model = Some(if e.entry_type() == EntryType::ModelChange {
                ContextModel {
                    provider: take(&mut v, "provider"),
                    model_id: take(&mut v, "modelId"),
                }
            } else {
                let mut m = take(&mut v, "message").unwrap_or(JsValue::Null);
                ContextModel {
                    provider: take(&mut m, "provider"),
                    model_id: take(&mut m, "model"),
                }
            });
        }
        let compaction = path
            .iter()
            .rposition(|e| e.entry_type() == EntryType::Compaction);
        let mut messages = Vec::new();
        let push =
            |e: &EntryRef<'a>, messages: &mut Vec<ContextMessage<'a>>| -> Result<(), ReadError> {
                let kind = match e.entry_type() {
                    EntryType::Message => ContextKind::Message,
                    EntryType::CustomMessage => ContextKind::CustomMessage,
                    EntryType::BranchSummary => {
                        let truthy = e.value()?.get("summary").is_some_and(JsValue::is_truthy);
                        if !truthy {
                            return Ok(());
                        }
                        ContextKind::BranchSummary
                    }
                    _ => return Ok(()),
                };
                messages.push(ContextMessage { kind, entry: *e });
                Ok(())
            };
        match compaction {
            Some(ci) => {
                let c = path[ci];
                messages.push(ContextMessage {
                    kind: ContextKind::CompactionSummary,
                    entry: c,
                });
                let first_kept = c
                    .value()?
                    .get("firstKeptEntryId")
                    .and_then(JsValue::as_js_string)
                    .map(|v| Id::new(v.clone()));
                let mut found = false;
                for e in &path[..ci] {
                    if first_kept.is_some() && first_kept.as_ref() == e.id_ref() {
                        found = true;
                    }
                    if found {
                        push(e, &mut messages)?;
                    }
                }
                for e in &path[ci + 1..] {
                    push(e, &mut messages)?;
                }
            }
            None => {
                for e in path {
                    push(e, &mut messages)?;
                }
            }
        }
        Ok(SessionContext {
            messages,
            gap: path.first().and_then(|e| self.gap_before(e)),
            thinking_level,
            model,
        })
    }
}
