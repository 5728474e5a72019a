//! Key shapes, chat types, session kinds and reset types (openclaw-jsonl.md §5.1, §5.2; OpenClaw
//! 2026.6.11 `classifySessionKeyShape`, `deriveSessionChatType`, `classifySessionKind`,
//! `resolveSessionResetType`), checked against the reference with the corpus of
//! `tests/data/session-key-corpus.jsonl`.

use serde::{Deserialize, Serialize};

use crate::js;
use crate::key::{self, parse_parts};

/// `classifySessionKeyShape`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyShape {
    /// Empty or blank.
    Missing,
    /// Parses as `agent:<agentId>:<rest>`.
    Agent,
    /// Starts with `agent:` (any case) but does not parse (`agent::broken`, `agent:main`).
    MalformedAgent,
    /// Anything else: legacy keys (`telegram:123`, `group:x`), aliases, sentinels.
    LegacyOrAlias,
}

impl KeyShape {
    /// The reference's spelling (`malformed_agent`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            KeyShape::Missing => "missing",
            KeyShape::Agent => "agent",
            KeyShape::MalformedAgent => "malformed_agent",
            KeyShape::LegacyOrAlias => "legacy_or_alias",
        }
    }
}

/// `classifySessionKeyShape`.
pub fn classify_key_shape(key: &str) -> KeyShape {
    let raw = js::trim(key);
    if raw.is_empty() {
        KeyShape::Missing
    } else if parse_parts(raw).is_some() {
        KeyShape::Agent
    } else if raw.to_lowercase().starts_with("agent:") {
        KeyShape::MalformedAgent
    } else {
        KeyShape::LegacyOrAlias
    }
}

/// The chat type of a session (`deriveSessionChatType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChatType {
    /// One-to-one conversation.
    Direct,
    /// Group chat.
    Group,
    /// Channel.
    Channel,
    /// Not derivable from the key (main keys, cron keys, malformed keys, …).
    Unknown,
}

impl ChatType {
    /// `direct`, `group`, `channel` or `unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChatType::Direct => "direct",
            ChatType::Group => "group",
            ChatType::Channel => "channel",
            ChatType::Unknown => "unknown",
        }
    }
}

/// The built-in legacy derivations of a scoped key: `group:<id>` → group, `[whatsapp:]…@g.us`
/// → group, `discord:[<account>:]guild-<g>:channel-<c>` → channel.
fn legacy_chat_type(scoped: &str) -> Option<ChatType> {
    let p: Vec<&str> = scoped.split(':').collect();
    if p.len() == 2 && p[0] == "group" && !p[1].is_empty() {
        return Some(ChatType::Group);
    }
    let wa = scoped.strip_prefix("whatsapp:").unwrap_or(scoped);
    let wa_group = |s: &str| !s.contains(':') && s.len() > "@g.us".len() && s.ends_with("@g.us");
    if wa_group(scoped) || (scoped.starts_with("whatsapp:") && wa_group(wa)) {
        return Some(ChatType::Group);
    }
    let tagged = |s: &str, tag: &str| s.len() > tag.len() && s.starts_with(tag);
    let discord = p.first() == Some(&"discord")
        && match p.len() {
            3 => tagged(p[1], "guild-") && tagged(p[2], "channel-"),
            4 => !p[1].is_empty() && tagged(p[2], "guild-") && tagged(p[3], "channel-"),
            _ => false,
        };
    discord.then_some(ChatType::Channel)
}

/// `deriveSessionChatType`: from the tokens of the key's rest (or of the whole key when it is
/// not an agent key), lowercased: `group` → group, else `channel` → channel, else `direct` or
/// `dm` → direct, else the legacy shapes, else unknown. (The reference's channel plugins add
/// no derivation beyond the built-in ones in 2026.6.11.)
pub fn derive_chat_type(key: &str) -> ChatType {
    let raw = js::lower_trim(key);
    if raw.is_empty() {
        return ChatType::Unknown;
    }
    let scoped = parse_parts(&raw).map_or(raw, |(_, rest)| rest);
    let tokens: Vec<&str> = scoped.split(':').filter(|t| !t.is_empty()).collect();
    if tokens.contains(&"group") {
        ChatType::Group
    } else if tokens.contains(&"channel") {
        ChatType::Channel
    } else if tokens.contains(&"direct") || tokens.contains(&"dm") {
        ChatType::Direct
    } else {
        legacy_chat_type(&scoped).unwrap_or(ChatType::Unknown)
    }
}

/// The display kind of a session (`classifySessionKind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SessionKind {
    /// The `global` sentinel.
    Global,
    /// The `unknown` sentinel.
    Unknown,
    /// A cron key.
    Cron,
    /// A session spawned by another one (entry `spawnedBy`).
    SpawnChild,
    /// A group or channel conversation.
    Group,
    /// Anything else.
    Direct,
}

impl SessionKind {
    /// `global`, `unknown`, `cron`, `spawn-child`, `group` or `direct`.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionKind::Global => "global",
            SessionKind::Unknown => "unknown",
            SessionKind::Cron => "cron",
            SessionKind::SpawnChild => "spawn-child",
            SessionKind::Group => "group",
            SessionKind::Direct => "direct",
        }
    }
}

/// What [`classify_session_kind`] reads from a session entry (`sessions.json` row).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EntryHints {
    /// The spawning session's key; a non-empty value makes the session a spawn child.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spawned_by: Option<String>,
    /// The chat type recorded on the entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_type: Option<ChatType>,
}

/// `classifySessionKind(key, entry)`, in this order: `global` and `unknown` (exact, case
/// sensitive), a cron key, an entry with `spawnedBy`, an entry chat type `group`/`channel`, a
/// key containing `:group:` or `:channel:` (case sensitive), else direct.
pub fn classify_session_kind(key: &str, entry: Option<&EntryHints>) -> SessionKind {
    if key == "global" {
        return SessionKind::Global;
    }
    if key == "unknown" {
        return SessionKind::Unknown;
    }
    if key::is_cron_key(key) {
        return SessionKind::Cron;
    }
    if entry
        .and_then(|e| e.spawned_by.as_deref())
        .is_some_and(|s| !s.is_empty())
    {
        return SessionKind::SpawnChild;
    }
    if matches!(
        entry.and_then(|e| e.chat_type),
        Some(ChatType::Group | ChatType::Channel)
    ) {
        return SessionKind::Group;
    }
    if key.contains(":group:") || key.contains(":channel:") {
        return SessionKind::Group;
    }
    SessionKind::Direct
}

/// Which reset policy applies to a session (`resolveSessionResetType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResetType {
    /// One-to-one conversations and everything else.
    Direct,
    /// Group and channel conversations.
    Group,
    /// Threads.
    Thread,
}

impl ResetType {
    /// `direct`, `group` or `thread`.
    pub fn as_str(self) -> &'static str {
        match self {
            ResetType::Direct => "direct",
            ResetType::Group => "group",
            ResetType::Thread => "thread",
        }
    }
}

/// `resolveSessionResetType`: thread (the flag, or a key with a non-blank `:thread:` suffix) >
/// group (the flag, or the lowercased key contains `:group:` or `:channel:`) > direct.
pub fn resolve_reset_type(key: &str, is_group: bool, is_thread: bool) -> ResetType {
    if is_thread || key::parse_thread_suffix(key).thread_id.is_some() {
        return ResetType::Thread;
    }
    if is_group {
        return ResetType::Group;
    }
    let lowered = js::lower_trim(key);
    if lowered.contains(":group:") || lowered.contains(":channel:") {
        ResetType::Group
    } else {
        ResetType::Direct
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_shapes() {
        assert_eq!(derive_chat_type("group:abc"), ChatType::Group);
        assert_eq!(derive_chat_type("123@g.us"), ChatType::Group);
        assert_eq!(derive_chat_type("whatsapp:123@g.us"), ChatType::Group);
        assert_eq!(derive_chat_type("whatsapp:@g.us"), ChatType::Unknown);
        assert_eq!(
            derive_chat_type("discord:acct:guild-1:channel-2"),
            ChatType::Channel
        );
        assert_eq!(
            derive_chat_type("discord:guild-1:channel-"),
            ChatType::Unknown
        );
        assert_eq!(derive_chat_type("agent:main:main"), ChatType::Unknown);
    }

    #[test]
    fn kinds() {
        let spawned = EntryHints {
            spawned_by: Some("agent:main:main".into()),
            chat_type: None,
        };
        assert_eq!(classify_session_kind("global", None), SessionKind::Global);
        assert_eq!(classify_session_kind("Global", None), SessionKind::Direct);
        assert_eq!(
            classify_session_kind("agent:main:cron:j", Some(&spawned)),
            SessionKind::Cron
        );
        assert_eq!(
            classify_session_kind("agent:main:x", Some(&spawned)),
            SessionKind::SpawnChild
        );
        assert_eq!(
            classify_session_kind("agent:main:x:GROUP:1", None),
            SessionKind::Direct
        );
        assert_eq!(
            resolve_reset_type("agent:main:x:GROUP:1", false, false),
            ResetType::Group
        );
        assert_eq!(
            resolve_reset_type("agent:main:x:thread: ", false, false),
            ResetType::Direct
        );
    }
}
