//! Legacy migrations and normalisation of store entries on load (openclaw-store.md §2.4–§2.5).

use session_format::json::{JsObject, JsString, JsValue};

use super::LoadChange;

/// R2.8: `provider` → `channel` and `lastProvider` → `lastChannel` (when the target is not a
/// string; the old field is removed either way, as the reference does for a string value),
/// `room` → `groupChannel` (or just deleted when `groupChannel` is a string).
pub(super) fn migrate_legacy(key: &str, fields: &mut JsObject, changes: &mut Vec<LoadChange>) {
    for (old, new, name) in [
        ("provider", "channel", "provider"),
        ("lastProvider", "lastChannel", "lastProvider"),
        ("room", "groupChannel", "room"),
    ] {
        let Some(JsValue::String(value)) = fields.get(old).cloned() else {
            continue;
        };
        let target_is_string = matches!(fields.get(new), Some(JsValue::String(_)));
        if !target_is_string {
            fields.insert(new, JsValue::String(value));
        }
        fields.remove(old);
        changes.push(LoadChange::ChangedField {
            key: key.to_owned(),
            field: name,
        });
    }
}

/// R2.10's "safe" session id: 1–255 chars, no `/` or `\`, not `.`/`..`, matching
/// `^[A-Za-z0-9][A-Za-z0-9._:@-]*$` (already trimmed).
fn is_safe_session_id(id: &str) -> bool {
    let mut chars = id.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    id.chars().count() <= 255
        && first.is_ascii_alphanumeric()
        && chars.all(|c| c.is_ascii_alphanumeric() || "._:@-".contains(c))
}

/// R1.8's file-name id: `^[a-z0-9][a-z0-9._-]{0,127}$`, case-insensitive.
pub(super) fn is_file_name_session_id(id: &str) -> bool {
    let mut chars = id.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    id.len() <= 128
        && first.is_ascii_alphanumeric()
        && chars.all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
}

/// R2.10–R2.16 on one object entry; `false` when the entry is dropped.
pub(super) fn normalise_entry(
    key: &str,
    fields: &mut JsObject,
    changes: &mut Vec<LoadChange>,
) -> bool {
    let mut changed = |field| {
        changes.push(LoadChange::ChangedField {
            key: key.to_owned(),
            field,
        });
    };
    match fields.get("sessionId").cloned() {
        None => {}
        Some(JsValue::String(raw)) => {
            let text = raw.to_str_lossy().into_owned();
            let trimmed = session_format::js::trim(&text).to_owned();
            if !is_safe_session_id(&trimmed) {
                return false;
            }
            let has_file = matches!(fields.get("sessionFile"), Some(JsValue::String(s)) if !session_format::js::trim(&s.to_str_lossy()).is_empty());
            if !is_file_name_session_id(&trimmed) && !has_file {
                fields.remove("sessionId");
                changed("sessionId");
            } else if trimmed != text {
                fields.insert("sessionId", JsValue::String(JsString::new(trimmed)));
                changed("sessionId");
            }
        }
        Some(_) => return false,
    }
    if fields
        .get("sessionFile")
        .is_some_and(|v| !matches!(v, JsValue::String(_)))
    {
        fields.remove("sessionFile");
        changed("sessionFile");
    }
    if let Some(v) = fields.get("updatedAt") {
        let ok = matches!(v, JsValue::Number(n) if n.is_finite() && *n >= 0.0);
        if !ok {
            fields.insert("updatedAt", JsValue::Number(0.0));
            changed("updatedAt");
        }
    }
    for field in ["model", "modelProvider"] {
        if let Some(JsValue::String(s)) = fields.get(field) {
            let text = s.to_str_lossy().into_owned();
            let trimmed = session_format::js::trim(&text);
            if trimmed.is_empty() {
                if field == "model" {
                    fields.remove("model");
                    fields.remove("modelProvider");
                    changed("model");
                    break;
                }
                fields.remove(field);
                changed(field);
            } else if trimmed != text {
                let trimmed = trimmed.to_owned();
                fields.insert(field, JsValue::String(JsString::new(trimmed)));
                changed(field);
            }
        }
    }
    for field in super::delivery::normalise_delivery_fields(fields) {
        changed(field);
    }
    for field in super::plugin_state::normalise_plugin_state(fields) {
        changed(field);
    }
    if let Some(JsValue::Object(snapshot)) = fields.get_mut("skillsSnapshot")
        && snapshot.remove("resolvedSkills").is_some()
    {
        changed("skillsSnapshot");
    }
    true
}
