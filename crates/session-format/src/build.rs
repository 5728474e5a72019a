//! Builders for new rows, on JavaScript values, in the exact key order the reference constructs
//! them (pi-format.md §1.5; openclaw-jsonl.md §2.4, §2.12). Payloads the caller supplies
//! (`message`, `data`, `details`, `content`) are taken as values and kept in their own key
//! order, as the reference stringifies whatever object it is given. `None` arguments are omitted
//! (JavaScript `undefined`).

use crate::json::{JsObject, JsValue};

/// `id`, `parentId`, `timestamp` of a new row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowBase {
    /// The new row's id.
    pub id: String,
    /// The append parent (`None` writes `null`).
    pub parent_id: Option<String>,
    /// ISO time of the append.
    pub timestamp: String,
}

fn start(ty: &str) -> JsObject {
    let mut o = JsObject::new();
    o.insert("type", JsValue::from(ty));
    o
}

fn base(o: &mut JsObject, b: &RowBase) {
    o.insert("id", JsValue::from(b.id.as_str()));
    o.insert("parentId", JsValue::from(b.parent_id.clone()));
    o.insert("timestamp", JsValue::from(b.timestamp.as_str()));
}

fn opt(o: &mut JsObject, key: &str, v: Option<JsValue>) {
    if let Some(v) = v {
        o.insert(key, v);
    }
}

/// `{type:"session", version, id, timestamp, cwd, parentSession?}`.
pub fn header(
    version: u32,
    id: &str,
    timestamp: &str,
    cwd: &str,
    parent_session: Option<&str>,
) -> JsValue {
    let mut o = start("session");
    o.insert("version", JsValue::Number(f64::from(version)));
    o.insert("id", JsValue::from(id));
    o.insert("timestamp", JsValue::from(timestamp));
    o.insert("cwd", JsValue::from(cwd));
    opt(&mut o, "parentSession", parent_session.map(JsValue::from));
    JsValue::Object(o)
}

/// `{type:"message", id, parentId, timestamp, message}`.
pub fn message(b: &RowBase, message: JsValue) -> JsValue {
    let mut o = start("message");
    base(&mut o, b);
    o.insert("message", message);
    JsValue::Object(o)
}

/// `{type:"thinking_level_change", id, parentId, timestamp, thinkingLevel}`.
pub fn thinking_level_change(b: &RowBase, thinking_level: &str) -> JsValue {
    let mut o = start("thinking_level_change");
    base(&mut o, b);
    o.insert("thinkingLevel", JsValue::from(thinking_level));
    JsValue::Object(o)
}

/// `{type:"model_change", id, parentId, timestamp, provider, modelId}`.
pub fn model_change(b: &RowBase, provider: &str, model_id: &str) -> JsValue {
    let mut o = start("model_change");
    base(&mut o, b);
    o.insert("provider", JsValue::from(provider));
    o.insert("modelId", JsValue::from(model_id));
    JsValue::Object(o)
}

/// `{type:"compaction", id, parentId, timestamp, summary, firstKeptEntryId, tokensBefore,
/// details?, fromHook?}`.
pub fn compaction(
    b: &RowBase,
    summary: &str,
    first_kept_entry_id: &str,
    tokens_before: f64,
    details: Option<JsValue>,
    from_hook: Option<bool>,
) -> JsValue {
    let mut o = start("compaction");
    base(&mut o, b);
    o.insert("summary", JsValue::from(summary));
    o.insert("firstKeptEntryId", JsValue::from(first_kept_entry_id));
    o.insert("tokensBefore", JsValue::Number(tokens_before));
    opt(&mut o, "details", details);
    opt(&mut o, "fromHook", from_hook.map(JsValue::Bool));
    JsValue::Object(o)
}

/// `{type:"branch_summary", id, parentId, timestamp, fromId, summary, details?, fromHook?}`.
pub fn branch_summary(
    b: &RowBase,
    from_id: &str,
    summary: &str,
    details: Option<JsValue>,
    from_hook: Option<bool>,
) -> JsValue {
    let mut o = start("branch_summary");
    base(&mut o, b);
    o.insert("fromId", JsValue::from(from_id));
    o.insert("summary", JsValue::from(summary));
    opt(&mut o, "details", details);
    opt(&mut o, "fromHook", from_hook.map(JsValue::Bool));
    JsValue::Object(o)
}

/// `{type:"custom", customType, data?, id, parentId, timestamp}`.
pub fn custom(b: &RowBase, custom_type: &str, data: Option<JsValue>) -> JsValue {
    let mut o = start("custom");
    o.insert("customType", JsValue::from(custom_type));
    opt(&mut o, "data", data);
    base(&mut o, b);
    JsValue::Object(o)
}

/// `{type:"custom_message", customType, content, display, details?, id, parentId, timestamp}`.
pub fn custom_message(
    b: &RowBase,
    custom_type: &str,
    content: JsValue,
    display: bool,
    details: Option<JsValue>,
) -> JsValue {
    let mut o = start("custom_message");
    o.insert("customType", JsValue::from(custom_type));
    o.insert("content", content);
    o.insert("display", JsValue::Bool(display));
    opt(&mut o, "details", details);
    base(&mut o, b);
    JsValue::Object(o)
}

/// `{type:"label", id, parentId, timestamp, targetId, label?}` (`Some("")` writes
/// `"label":""`).
pub fn label(b: &RowBase, target_id: &str, label: Option<&str>) -> JsValue {
    let mut o = start("label");
    base(&mut o, b);
    o.insert("targetId", JsValue::from(target_id));
    opt(&mut o, "label", label.map(JsValue::from));
    JsValue::Object(o)
}

/// `{type:"session_info", id, parentId, timestamp, name}`. The caller trims the name.
pub fn session_info(b: &RowBase, name: &str) -> JsValue {
    let mut o = start("session_info");
    base(&mut o, b);
    o.insert("name", JsValue::from(name));
    JsValue::Object(o)
}

/// `{type:"reset", id, parentId, timestamp, reason, firstKeptEntryId?}`.
pub fn reset(b: &RowBase, reason: &str, first_kept_entry_id: Option<&str>) -> JsValue {
    let mut o = start("reset");
    base(&mut o, b);
    o.insert("reason", JsValue::from(reason));
    opt(
        &mut o,
        "firstKeptEntryId",
        first_kept_entry_id.map(JsValue::from),
    );
    JsValue::Object(o)
}

/// `{type:"leaf", id, parentId, timestamp, targetId, appendParentId?, appendMode?}` — the leaf
/// control a full rewrite synthesises (openclaw-jsonl.md §2.12). `append_parent_id` is written
/// only when given (the caller passes it only when it differs from the target).
pub fn leaf_control(
    b: &RowBase,
    target_id: Option<&str>,
    append_parent_id: Option<Option<&str>>,
    side: bool,
) -> JsValue {
    let mut o = start("leaf");
    base(&mut o, b);
    o.insert("targetId", JsValue::from(target_id));
    opt(
        &mut o,
        "appendParentId",
        append_parent_id.map(JsValue::from),
    );
    opt(&mut o, "appendMode", side.then(|| JsValue::from("side")));
    JsValue::Object(o)
}
