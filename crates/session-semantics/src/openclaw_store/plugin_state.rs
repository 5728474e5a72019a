//! Cleaning the plugin state of a store entry on load and save (openclaw-store.md R2.15):
//! `pluginExtensions {<pluginId>: {<namespace>: json}}` and
//! `pluginExtensionSlotKeys {<pluginId>: {<namespace>: <slotKey>}}`.

use session_format::json::{JsObject, JsString, JsValue};

/// The SessionEntry's own field names (the reference's `SESSION_ENTRY_RESERVED_SLOT_KEYS`,
/// §2.2) and `Object.prototype`'s property names: never a plugin's slot key.
const RESERVED_SLOT_KEYS: &[&str] = &[
    "__proto__",
    "constructor",
    "prototype",
    "lastHeartbeatText",
    "lastHeartbeatSentAt",
    "heartbeatIsolatedBaseSessionKey",
    "heartbeatTaskState",
    "pluginExtensions",
    "pluginExtensionSlotKeys",
    "pluginNextTurnInjections",
    "sessionId",
    "updatedAt",
    "sessionFile",
    "spawnedBy",
    "spawnedWorkspaceDir",
    "spawnedCwd",
    "parentSessionKey",
    "forkedFromParent",
    "spawnDepth",
    "subagentRole",
    "subagentControlScope",
    "inheritedToolDeny",
    "inheritedToolAllow",
    "subagentRecovery",
    "pluginOwnerId",
    "systemSent",
    "abortedLastRun",
    "restartRecoveryRuns",
    "goal",
    "sessionStartedAt",
    "lastInteractionAt",
    "startedAt",
    "endedAt",
    "runtimeMs",
    "status",
    "abortCutoffMessageSid",
    "abortCutoffTimestamp",
    "chatType",
    "thinkingLevel",
    "fastMode",
    "verboseLevel",
    "traceLevel",
    "reasoningLevel",
    "elevatedLevel",
    "ttsAuto",
    "lastTtsReadLatestHash",
    "lastTtsReadLatestAt",
    "execHost",
    "execSecurity",
    "execAsk",
    "execNode",
    "responseUsage",
    "usageFamilyKey",
    "usageFamilySessionIds",
    "providerOverride",
    "modelOverride",
    "agentRuntimeOverride",
    "modelOverrideSource",
    "modelOverrideFallbackOriginProvider",
    "modelOverrideFallbackOriginModel",
    "authProfileOverride",
    "authProfileOverrideSource",
    "authProfileOverrideCompactionCount",
    "liveModelSwitchPending",
    "groupActivation",
    "groupActivationNeedsSystemIntro",
    "sendPolicy",
    "queueMode",
    "queueDebounceMs",
    "queueCap",
    "queueDrop",
    "inputTokens",
    "outputTokens",
    "totalTokens",
    "pendingFinalDelivery",
    "pendingFinalDeliveryCreatedAt",
    "pendingFinalDeliveryLastAttemptAt",
    "pendingFinalDeliveryAttemptCount",
    "pendingFinalDeliveryLastError",
    "pendingFinalDeliveryText",
    "pendingFinalDeliveryContext",
    "pendingFinalDeliveryIntentId",
    "restartRecoveryDeliveryContext",
    "restartRecoveryDeliveryRunId",
    "totalTokensFresh",
    "estimatedCostUsd",
    "cacheRead",
    "cacheWrite",
    "modelProvider",
    "model",
    "agentHarnessId",
    "fallbackNoticeSelectedModel",
    "fallbackNoticeActiveModel",
    "fallbackNoticeReason",
    "contextTokens",
    "contextBudgetStatus",
    "compactionCount",
    "compactionCheckpoints",
    "memoryFlushAt",
    "memoryFlushCompactionCount",
    "memoryFlushContextHash",
    "memoryFlushFailureCount",
    "memoryFlushLastFailedAt",
    "memoryFlushLastFailureError",
    "cliSessionIds",
    "cliSessionBindings",
    "claudeCliSessionId",
    "label",
    "displayName",
    "channel",
    "groupId",
    "subject",
    "groupChannel",
    "space",
    "origin",
    "route",
    "deliveryContext",
    "lastChannel",
    "lastTo",
    "lastAccountId",
    "lastThreadId",
    "skillsSnapshot",
    "systemPromptReport",
    "pluginDebugEntries",
    "acp",
    "quotaSuspension",
    // Object.prototype
    "__defineGetter__",
    "__defineSetter__",
    "hasOwnProperty",
    "__lookupGetter__",
    "__lookupSetter__",
    "isPrototypeOf",
    "propertyIsEnumerable",
    "toString",
    "valueOf",
    "toLocaleString",
];

/// Limits of a plugin's JSON value (the reference's `PLUGIN_JSON_VALUE_LIMITS`).
const MAX_DEPTH: usize = 32;
const MAX_NODES: usize = 4096;
const MAX_OBJECT_KEYS: usize = 512;
const MAX_STRING_UNITS: usize = 64 * 1024;
const MAX_SERIALIZED_BYTES: usize = 256 * 1024;

/// `isPluginJsonValueWithinLimits`: every node counted (at most 4096), nesting at most 32,
/// strings and keys at most 64 Ki UTF-16 units, objects at most 512 keys.
fn within_limits(value: &JsValue, depth: usize, nodes: &mut usize) -> bool {
    *nodes += 1;
    if *nodes > MAX_NODES || depth > MAX_DEPTH {
        return false;
    }
    match value {
        JsValue::Null | JsValue::Bool(_) => true,
        JsValue::Number(n) => n.is_finite(),
        JsValue::String(s) => s.utf16_len() <= MAX_STRING_UNITS,
        JsValue::Array(items) => items.iter().all(|v| within_limits(v, depth + 1, nodes)),
        JsValue::Object(o) => {
            o.len() <= MAX_OBJECT_KEYS
                && o.iter().all(|(k, v)| {
                    k.utf16_len() <= MAX_STRING_UNITS && within_limits(v, depth + 1, nodes)
                })
        }
    }
}

/// `isPluginJsonValue`: within the limits and at most 256 KiB as compact JSON.
fn is_plugin_json_value(value: &JsValue) -> bool {
    let mut nodes = 0;
    within_limits(value, 0, &mut nodes)
        && session_format::json::to_json_string(value).len() <= MAX_SERIALIZED_BYTES
}

/// A trimmed, non-empty record key.
fn record_key(key: &JsString) -> Option<String> {
    let text = key.to_str_lossy();
    let trimmed = session_format::js::trim(&text);
    (!trimmed.is_empty()).then(|| trimmed.to_owned())
}

/// `normalizeSessionEntrySlotKey`: a string, trimmed, matching `^[A-Za-z][A-Za-z0-9_]*$`,
/// not reserved.
fn slot_key(value: &JsValue) -> Option<String> {
    let text = value.as_js_string()?.to_str_lossy().into_owned();
    let key = session_format::js::trim(&text);
    let mut chars = key.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !RESERVED_SLOT_KEYS.contains(&key);
    ok.then(|| key.to_owned())
}

/// Cleans `field` (a record of plugin id → record of namespace → value) with `keep` deciding
/// each value (`None` drops it, `Some(v)` keeps `v`): keys trimmed, empty keys, non-object
/// groups and empty groups dropped; the field removed when nothing is left or it is not an
/// object. `true` when something changed (then the field, in place, is the cleaned record).
fn clean(field: &str, fields: &mut JsObject, keep: impl Fn(&JsValue) -> Option<JsValue>) -> bool {
    let Some(value) = fields.get(field) else {
        return false;
    };
    let JsValue::Object(groups) = value else {
        fields.remove(field);
        return true;
    };
    let mut changed = false;
    let mut out = JsObject::new();
    for (raw_plugin, raw_state) in groups.iter() {
        let (Some(plugin), JsValue::Object(state)) = (record_key(raw_plugin), raw_state) else {
            changed = true;
            continue;
        };
        changed |= plugin != raw_plugin.to_str_lossy();
        let mut group = JsObject::new();
        for (raw_ns, raw_value) in state.iter() {
            let (Some(ns), Some(kept)) = (record_key(raw_ns), keep(raw_value)) else {
                changed = true;
                continue;
            };
            changed |= ns != raw_ns.to_str_lossy() || &kept != raw_value;
            group.insert(ns, kept);
        }
        if group.is_empty() {
            changed = true;
            continue;
        }
        out.insert(plugin, JsValue::Object(group));
    }
    if !changed {
        return false;
    }
    if out.is_empty() {
        fields.remove(field);
    } else {
        fields.insert(field, JsValue::Object(out));
    }
    true
}

/// R2.15 on one entry: `pluginExtensions` keeps plain JSON values within the plugin limits;
/// `pluginExtensionSlotKeys` keeps valid, unreserved slot keys (trimmed). Returns the names of
/// the fields that changed, in that order.
pub(super) fn normalise_plugin_state(fields: &mut JsObject) -> Vec<&'static str> {
    let mut changed = Vec::new();
    if clean("pluginExtensions", fields, |v| {
        is_plugin_json_value(v).then(|| v.clone())
    }) {
        changed.push("pluginExtensions");
    }
    if clean("pluginExtensionSlotKeys", fields, |v| {
        slot_key(v).map(|k| JsValue::String(JsString::new(k)))
    }) {
        changed.push("pluginExtensionSlotKeys");
    }
    changed
}
