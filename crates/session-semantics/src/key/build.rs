//! Building session keys (openclaw-jsonl.md §5.1; OpenClaw 2026.6.11 `buildAgentMainSessionKey`,
//! `buildAgentPeerSessionKey`, `resolveLinkedPeerId`, `resolveThreadSessionKeys`,
//! `toAgentStoreSessionKey`). The builders return the reference's exact strings; the typed
//! constructors on [`SessionKey`](super::SessionKey) parse them.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use super::normalize::{
    normalize_account_id, normalize_agent_id, normalize_main_key, normalize_peer_id,
    normalize_session_key,
};
use super::parse_parts;
use crate::js;

/// How direct-message sessions are keyed (`session.dmScope`, default `main`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DmScope {
    /// Every DM shares the agent's main session: `agent:<id>:<mainKey>`.
    #[default]
    Main,
    /// One session per peer: `agent:<id>:direct:<peer>`.
    PerPeer,
    /// One session per channel and peer: `agent:<id>:<channel>:direct:<peer>`.
    PerChannelPeer,
    /// One session per account, channel and peer:
    /// `agent:<id>:<channel>:<accountId>:direct:<peer>`.
    PerAccountChannelPeer,
}

impl DmScope {
    /// The config spelling (`per-channel-peer`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            DmScope::Main => "main",
            DmScope::PerPeer => "per-peer",
            DmScope::PerChannelPeer => "per-channel-peer",
            DmScope::PerAccountChannelPeer => "per-account-channel-peer",
        }
    }
}

/// The kind of conversation a peer key addresses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PeerKind {
    /// A direct message (the legacy spelling `dm` is read as direct).
    #[default]
    Direct,
    /// A group chat.
    Group,
    /// A channel.
    Channel,
}

impl PeerKind {
    /// The key segment (`direct`, `group`, `channel`).
    pub fn as_str(self) -> &'static str {
        match self {
            PeerKind::Direct => "direct",
            PeerKind::Group => "group",
            PeerKind::Channel => "channel",
        }
    }
}

/// `session.identityLinks`: canonical name → linked peer ids (`"<id>"` or `"<channel>:<id>"`).
/// Lookups visit the names in JavaScript object order (array-index names first, ascending,
/// then the others in insertion order), as `Object.entries` does.
pub type IdentityLinks = IndexMap<String, Vec<String>>;

/// What [`build_peer_key`] needs.
#[derive(Clone, Copy, Debug, Default)]
pub struct PeerKeyParams<'a> {
    /// The agent (normalised with [`normalize_agent_id`]).
    pub agent_id: &'a str,
    /// `session.mainKey` (default `main`).
    pub main_key: Option<&'a str>,
    /// The channel (`telegram`, …); `unknown` when missing.
    pub channel: Option<&'a str>,
    /// The channel account (per-account scope only; default `default`).
    pub account_id: Option<&'a str>,
    /// Direct, group or channel.
    pub peer_kind: PeerKind,
    /// The peer (user, group or channel id).
    pub peer_id: Option<&'a str>,
    /// `session.dmScope`.
    pub dm_scope: DmScope,
    /// `session.identityLinks` (ignored in `main` scope).
    pub identity_links: Option<&'a IdentityLinks>,
}

/// `buildAgentMainSessionKey`: `agent:<normalised agent id>:<normalised main key>`.
pub fn build_main_key(agent_id: &str, main_key: Option<&str>) -> String {
    format!(
        "agent:{}:{}",
        normalize_agent_id(agent_id),
        normalize_main_key(main_key)
    )
}

/// The canonical array index of a JavaScript property name (`"0"` … `"4294967294"`).
fn array_index(name: &str) -> Option<u32> {
    let n: u32 = name.parse().ok()?;
    (n != u32::MAX && n.to_string() == name).then_some(n)
}

/// `resolveLinkedPeerId`: the canonical name (trimmed) whose linked ids contain the peer, as
/// `<peer>` or `<channel>:<peer>` (compared trimmed and lowercased).
pub fn resolve_linked_peer_id(
    links: &IdentityLinks,
    channel: Option<&str>,
    peer_id: &str,
) -> Option<String> {
    let peer = js::trim(peer_id);
    if peer.is_empty() {
        return None;
    }
    let mut candidates: Vec<String> = vec![js::lower_trim(peer)];
    let channel = js::lower_trim(channel.unwrap_or(""));
    if !channel.is_empty() {
        candidates.push(js::lower_trim(&format!("{channel}:{peer}")));
    }
    let mut names: Vec<(Option<u32>, usize, &String, &Vec<String>)> = links
        .iter()
        .enumerate()
        .map(|(i, (name, ids))| (array_index(name), i, name, ids))
        .collect();
    names.sort_by_key(|(ix, i, _, _)| match ix {
        Some(n) => (0, u64::from(*n)),
        None => (1, *i as u64),
    });
    for (_, _, name, ids) in names {
        let canonical = js::trim(name);
        if canonical.is_empty() {
            continue;
        }
        for id in ids {
            let normalized = js::lower_trim(id);
            if !normalized.is_empty() && candidates.contains(&normalized) {
                return Some(canonical.to_owned());
            }
        }
    }
    None
}

/// `buildAgentPeerSessionKey`:
/// - direct: the peer (linked through `identity_links` unless the scope is `main`) is trimmed
///   and lowercased; `per-peer` → `agent:<id>:direct:<peer>`, `per-channel-peer` →
///   `agent:<id>:<channel>:direct:<peer>`, `per-account-channel-peer` →
///   `agent:<id>:<channel>:<account>:direct:<peer>`; `main` scope or an empty peer → the main
///   key;
/// - group and channel: `agent:<id>:<channel>:<kind>:<peer>` (the peer keeps its case for
///   Signal groups and Matrix rooms); a missing channel or peer becomes `unknown`.
pub fn build_peer_key(p: &PeerKeyParams<'_>) -> String {
    let agent = normalize_agent_id(p.agent_id);
    let channel_or_unknown = || {
        let c = js::lower_trim(p.channel.unwrap_or(""));
        if c.is_empty() {
            "unknown".to_owned()
        } else {
            c
        }
    };
    if p.peer_kind == PeerKind::Direct {
        let mut peer = js::trim(p.peer_id.unwrap_or("")).to_owned();
        if p.dm_scope != DmScope::Main
            && let Some(links) = p.identity_links
            && let Some(linked) = resolve_linked_peer_id(links, p.channel, &peer)
        {
            peer = linked;
        }
        let peer = js::lower_trim(&peer);
        if !peer.is_empty() {
            match p.dm_scope {
                DmScope::PerAccountChannelPeer => {
                    let account = normalize_account_id(p.account_id.unwrap_or(""));
                    return format!(
                        "agent:{agent}:{}:{account}:direct:{peer}",
                        channel_or_unknown()
                    );
                }
                DmScope::PerChannelPeer => {
                    return format!("agent:{agent}:{}:direct:{peer}", channel_or_unknown());
                }
                DmScope::PerPeer => return format!("agent:{agent}:direct:{peer}"),
                DmScope::Main => {}
            }
        }
        return build_main_key(p.agent_id, p.main_key);
    }
    let kind = p.peer_kind.as_str();
    let peer = normalize_peer_id(p.channel.unwrap_or(""), kind, p.peer_id.unwrap_or(""));
    let peer = if peer.is_empty() {
        "unknown".to_owned()
    } else {
        peer
    };
    format!("agent:{agent}:{}:{kind}:{peer}", channel_or_unknown())
}

/// `resolveThreadSessionKeys` (with the suffix): `<base>:thread:<thread id trimmed and
/// lowercased>`, or `base` unchanged when the thread id is blank.
pub fn build_thread_key(base: &str, thread_id: &str) -> String {
    let thread = js::trim(thread_id);
    if thread.is_empty() {
        base.to_owned()
    } else {
        format!("{base}:thread:{}", thread.to_lowercase())
    }
}

/// `toAgentStoreSessionKey`: the store key for a request key. A blank request or `main`
/// (any case) is the main key; an agent key is re-emitted canonically (never a second
/// prefix); a malformed `agent:` key is only normalised; anything else becomes
/// `agent:<agent id>:<normalised request key>`.
pub fn to_agent_store_key(agent_id: &str, request_key: &str, main_key: Option<&str>) -> String {
    let raw = js::trim(request_key);
    let lowered = js::lower_trim(raw);
    if raw.is_empty() || lowered == "main" {
        return build_main_key(agent_id, main_key);
    }
    if let Some((agent, rest)) = parse_parts(raw) {
        return format!("agent:{agent}:{rest}");
    }
    let normalized = normalize_session_key(raw);
    if lowered.starts_with("agent:") {
        return normalized;
    }
    format!("agent:{}:{normalized}", normalize_agent_id(agent_id))
}

/// `toAgentRequestSessionKey`: the rest of an agent key, or the trimmed key itself; `None`
/// when blank.
pub fn to_agent_request_key(store_key: &str) -> Option<String> {
    let raw = js::trim(store_key);
    if raw.is_empty() {
        return None;
    }
    Some(parse_parts(raw).map_or_else(|| raw.to_owned(), |(_, rest)| rest))
}

/// `resolveAgentIdFromSessionKey`: the normalised agent id of an agent key, else `main`.
pub fn resolve_agent_id_from_key(key: &str) -> String {
    normalize_agent_id(&parse_parts(key).map_or_else(|| "main".to_owned(), |(agent, _)| agent))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links() -> IdentityLinks {
        let mut l = IdentityLinks::new();
        l.insert("Alice".into(), vec!["telegram:111".into(), "+1555".into()]);
        l.insert(" ".into(), vec!["x".into()]);
        l
    }

    #[test]
    fn dm_scopes() {
        let l = links();
        let base = PeerKeyParams {
            agent_id: "Ops",
            channel: Some("Telegram"),
            account_id: Some("Work Phone"),
            peer_id: Some(" 111 "),
            identity_links: Some(&l),
            ..PeerKeyParams::default()
        };
        assert_eq!(build_peer_key(&base), "agent:ops:main");
        let with = |dm_scope| build_peer_key(&PeerKeyParams { dm_scope, ..base });
        assert_eq!(with(DmScope::PerPeer), "agent:ops:direct:alice");
        assert_eq!(
            with(DmScope::PerChannelPeer),
            "agent:ops:telegram:direct:alice"
        );
        assert_eq!(
            with(DmScope::PerAccountChannelPeer),
            "agent:ops:telegram:work-phone:direct:alice"
        );
        let unlinked = PeerKeyParams {
            peer_id: Some("Bob"),
            dm_scope: DmScope::PerChannelPeer,
            channel: None,
            ..base
        };
        assert_eq!(build_peer_key(&unlinked), "agent:ops:unknown:direct:bob");
    }

    #[test]
    fn groups_and_threads() {
        let p = PeerKeyParams {
            agent_id: "main",
            channel: Some("signal"),
            peer_kind: PeerKind::Group,
            peer_id: Some(" GrOuP= "),
            ..PeerKeyParams::default()
        };
        assert_eq!(build_peer_key(&p), "agent:main:signal:group:GrOuP=");
        let q = PeerKeyParams {
            channel: None,
            peer_kind: PeerKind::Channel,
            peer_id: None,
            ..p
        };
        assert_eq!(build_peer_key(&q), "agent:main:unknown:channel:unknown");
        assert_eq!(
            build_thread_key("agent:main:x", " T1 "),
            "agent:main:x:thread:t1"
        );
        assert_eq!(build_thread_key("agent:main:x", " "), "agent:main:x");
    }

    #[test]
    fn store_keys() {
        assert_eq!(to_agent_store_key("Ops", " MAIN ", None), "agent:ops:main");
        assert_eq!(
            to_agent_store_key("ops", "", Some("Home")),
            "agent:ops:home"
        );
        assert_eq!(
            to_agent_store_key("ops", "agent:Main:Hook:x", None),
            "agent:main:hook:x"
        );
        assert_eq!(
            to_agent_store_key("ops", "Agent::broken", None),
            "agent::broken"
        );
        assert_eq!(
            to_agent_store_key("ops", "Hook:X", None),
            "agent:ops:hook:x"
        );
        assert_eq!(
            to_agent_request_key("agent:main:hook:x").as_deref(),
            Some("hook:x")
        );
        assert_eq!(to_agent_request_key(" legacy ").as_deref(), Some("legacy"));
        assert_eq!(to_agent_request_key("  "), None);
        assert_eq!(resolve_agent_id_from_key("agent:Ops:x"), "ops");
        assert_eq!(resolve_agent_id_from_key("nope"), "main");
    }
}
