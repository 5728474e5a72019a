//! Session keys: `agent:<agentId>:<rest>` (openclaw-jsonl.md §5.1), parsed, built and
//! classified exactly as OpenClaw 2026.6.11 does (`src/routing/session-key.ts`,
//! `src/sessions/session-key-utils.ts`), checked against the reference with the corpus of
//! `tests/data/session-key-corpus.jsonl`.
//!
//! Parsing first normalises the whole key (trimmed, lowercased except opaque peer ids: the
//! Signal group segment and the Matrix room tail), then splits it on `:` dropping empty
//! segments, and requires `agent`, a non-blank agent id and a non-empty rest. The agent id is
//! kept as parsed (trimmed, lowercased), not re-normalised: `agent:my agent:x` parses with
//! agent id `my agent`, which [`is_valid_agent_id`] rejects and the store layout refuses.
//!
//! A typed key **is** its normalised text, the key OpenClaw persists in its session store
//! (`resolveSessionStoreKey`): `Display` prints it, equality compares it, and the file name is
//! derived from it. Empty segments and a trailing `:` are part of it (`agent:main:a::b` and
//! `agent:main:a:b` are two sessions, in two files), while [`SessionKey::rest`] is the
//! reference's `parseAgentSessionKey` rest, empty segments dropped (`a:b` for both), which the
//! classifications read. The normalised text must start with `agent:<agentId>:` itself; a key
//! with blanks or empty segments before its rest (`agent::main:x`, `agent: ops :x`,
//! `:agent:main:x`) is refused ([`ParseKeyError::NotCanonicalPrefix`]; docs/DEVIATIONS.md D20).
//!
//! ```
//! use session_semantics::key::SessionKey;
//!
//! let key: SessionKey = "AGENT:Main:Hook:Webhook:42".parse()?;
//! assert_eq!(key.agent_id(), "main");
//! assert_eq!(key.rest(), "hook:webhook:42");
//! assert_eq!(key.to_string(), "agent:main:hook:webhook:42");
//! assert!("agent:main".parse::<SessionKey>().is_err());
//! # Ok::<(), session_semantics::key::ParseKeyError>(())
//! ```

mod build;
mod normalize;

pub(crate) use normalize::canonicalize_id;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub use build::{
    DmScope, IdentityLinks, PeerKeyParams, PeerKind, build_main_key, build_peer_key,
    build_thread_key, resolve_agent_id_from_key, resolve_linked_peer_id, to_agent_request_key,
    to_agent_store_key,
};
pub use normalize::{
    DEFAULT_ACCOUNT_ID, DEFAULT_AGENT_ID, DEFAULT_MAIN_KEY, MAX_ID_LEN, is_case_preserving_peer,
    is_valid_agent_id, normalize_account_id, normalize_agent_id, normalize_main_key,
    normalize_peer_id, normalize_session_key,
};

use crate::js;

/// Why a string is not an agent session key. Segments are numbered from 1 in the normalised
/// key (`agent` is segment 1, the agent id 2, the rest 3 onwards).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseKeyError {
    /// The key is empty or only whitespace.
    #[error("session key is empty")]
    Empty,
    /// Segment 1 is not `agent`.
    #[error(
        "session key {key:?}: segment 1 is {found:?}, expected \"agent\" (keys look like agent:<agentId>:<rest>)"
    )]
    NotAgentScoped {
        /// The key as given.
        key: String,
        /// The first non-empty segment of the normalised key.
        found: String,
    },
    /// Segment 2 (the agent id) is empty or blank.
    #[error("session key {key:?}: segment 2 (the agent id) is empty")]
    MissingAgentId {
        /// The key as given.
        key: String,
    },
    /// Nothing follows the agent id.
    #[error(
        "session key {key:?}: nothing follows agent id {agent_id:?} (segment 3, the rest, is missing)"
    )]
    MissingRest {
        /// The key as given.
        key: String,
        /// The agent id segment.
        agent_id: String,
    },
    /// The reference parses the key, but its normalised text does not start with
    /// `agent:<agentId>:`: empty segments or blanks come before the rest (`agent::main:x`,
    /// `agent: ops :x`, `:agent:main:x`). OpenClaw persists such a key under that very text,
    /// apart from `agent:<agentId>:<rest>`, and no file name could tell the two apart.
    #[error(
        "session key {key:?}: its normalised form {normalized:?} does not start with \"agent:{agent_id}:\" (no empty segments or blanks may come before the rest)"
    )]
    NotCanonicalPrefix {
        /// The key as given.
        key: String,
        /// The normalised key.
        normalized: String,
        /// The agent id the reference reads from it.
        agent_id: String,
    },
}

/// `parseAgentSessionKey`, exactly: `(agent id, rest)` of the normalised key, or `None`.
/// [`SessionKey::parse`] accepts the same keys except those whose rest ends in whitespace.
pub fn parse_agent_session_key(raw: &str) -> Option<(String, String)> {
    parse_parts(raw)
}

pub(crate) fn parse_parts(raw: &str) -> Option<(String, String)> {
    let norm = normalize_session_key(raw);
    if norm.is_empty() {
        return None;
    }
    let parts: Vec<&str> = norm.split(':').filter(|p| !p.is_empty()).collect();
    if parts.len() < 3 || parts[0] != "agent" {
        return None;
    }
    let agent = js::optional(parts[1])?;
    Some((agent.to_owned(), parts[2..].join(":")))
}

/// A parsed agent session key `agent:<agentId>:<rest>`: its canonical text is the normalised
/// key (see the module docs), which `Display` prints and which parses back to the same key;
/// `FromStr` is [`SessionKey::parse`]. Serialises as its string.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionKey {
    /// The normalised key, `agent:<agent_id>:<store rest>`.
    text: String,
    agent_id: String,
    /// `parseAgentSessionKey`'s rest (empty segments dropped).
    rest: String,
}

impl SessionKey {
    /// Parses `raw` as the reference's `parseAgentSessionKey` does, keeping its normalised text
    /// as the key's identity.
    ///
    /// # Errors
    /// [`ParseKeyError`] naming the segment that is wrong.
    pub fn parse(raw: &str) -> Result<Self, ParseKeyError> {
        let norm = normalize_session_key(raw);
        if let Some((agent_id, rest)) = parse_parts(raw) {
            if !norm
                .strip_prefix("agent:")
                .and_then(|r| r.strip_prefix(agent_id.as_str()))
                .is_some_and(|r| r.starts_with(':'))
            {
                return Err(ParseKeyError::NotCanonicalPrefix {
                    key: raw.to_owned(),
                    normalized: norm,
                    agent_id,
                });
            }
            return Ok(SessionKey {
                text: norm,
                agent_id,
                rest,
            });
        }
        if norm.is_empty() {
            return Err(ParseKeyError::Empty);
        }
        let key = raw.to_owned();
        let all: Vec<&str> = norm.split(':').collect();
        let parts: Vec<&str> = all.iter().copied().filter(|p| !p.is_empty()).collect();
        match parts.first() {
            Some(&"agent") => {}
            Some(first) => {
                return Err(ParseKeyError::NotAgentScoped {
                    key,
                    found: (*first).to_owned(),
                });
            }
            None => {
                return Err(ParseKeyError::NotAgentScoped {
                    key,
                    found: String::new(),
                });
            }
        }
        // `agent::x`: the reference drops the empty segment and would take `x` as the agent
        // id; the segment the writer left empty is the agent id.
        let agent_slot_empty =
            all.first() == Some(&"agent") && all.get(1).is_some_and(|s| s.is_empty());
        match parts.get(1).and_then(|a| js::optional(a)) {
            Some(agent) if !agent_slot_empty => Err(ParseKeyError::MissingRest {
                key,
                agent_id: agent.to_owned(),
            }),
            _ => Err(ParseKeyError::MissingAgentId { key }),
        }
    }

    /// `agent:<agent_id>:<rest>` for an agent id and a request key (`toAgentStoreSessionKey`):
    /// `main` or blank gives the main key; an agent key stays itself.
    ///
    /// # Errors
    /// [`ParseKeyError`] when the result is not an agent key (a rest made only of `:`, or a
    /// malformed `agent:` request key).
    pub fn for_request(
        agent_id: &str,
        request_key: &str,
        main_key: Option<&str>,
    ) -> Result<Self, ParseKeyError> {
        Self::parse(&to_agent_store_key(agent_id, request_key, main_key))
    }

    /// The agent's main key (`buildAgentMainSessionKey`).
    ///
    /// # Errors
    /// [`ParseKeyError::MissingRest`] when the main key is made only of `:`.
    pub fn main(agent_id: &str, main_key: Option<&str>) -> Result<Self, ParseKeyError> {
        Self::parse(&build_main_key(agent_id, main_key))
    }

    /// The key of a peer conversation (`buildAgentPeerSessionKey`, see [`build_peer_key`]).
    ///
    /// # Errors
    /// [`ParseKeyError`] when the result does not parse (a peer or main key made only of `:`).
    pub fn for_peer(params: &PeerKeyParams<'_>) -> Result<Self, ParseKeyError> {
        Self::parse(&build_peer_key(params))
    }

    /// This key's thread child: `<key>:thread:<thread id lowercased>` (this key when the
    /// thread id is blank).
    ///
    /// # Errors
    /// Never in practice (the result keeps this key's agent id and rest); typed for safety.
    pub fn thread(&self, thread_id: &str) -> Result<Self, ParseKeyError> {
        Self::parse(&build_thread_key(&self.to_string(), thread_id))
    }

    /// The agent id as parsed (trimmed, lowercased; not re-normalised).
    pub fn agent_id(&self) -> &str {
        &self.agent_id
    }

    /// Everything after the agent id, as the reference's `parseAgentSessionKey` returns it:
    /// empty segments dropped (`a:b` for `agent:main:a::b`). Classifications read this.
    pub fn rest(&self) -> &str {
        &self.rest
    }

    /// Everything after `agent:<agentId>:` in the canonical text, empty segments and a
    /// trailing `:` kept (`a::b` for `agent:main:a::b`): what names the session's file.
    pub fn store_rest(&self) -> &str {
        &self.text["agent:".len() + self.agent_id.len() + 1..]
    }

    /// The canonical text (the normalised key; what `Display` prints).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// True when the rest is the main key (`main_key` normalised, default `main`).
    pub fn is_main(&self, main_key: Option<&str>) -> bool {
        self.rest == normalize_main_key(main_key)
    }

    /// The thread suffix as text: the key before its last `:thread:` and the thread id after it
    /// (trimmed), when that id is not blank. As the reference's `parseThreadSessionSuffix` on
    /// this key, the parent need not be a session key itself: `agent:main:thread:x` gives the
    /// parent `agent:main` and the thread `x`. On a canonical key the last marker is the last
    /// lowercase `:thread:`, so it is found without lowercasing; [`parse_thread_suffix`] (the
    /// reference's function, for any string) searches a lowercased copy and so misplaces the
    /// split when a case-preserved peer id holds a character whose lowercase is longer, such as
    /// `İ` (docs/DEVIATIONS.md D21).
    pub fn thread_suffix(&self) -> Option<(&str, &str)> {
        let at = self.text.rfind(":thread:")?;
        let thread = js::optional(&self.text[at + 8..])?;
        Some((&self.text[..at], thread))
    }

    /// [`SessionKey::thread_suffix`] with the parent as a typed key, when the parent is one
    /// (`None` for `agent:main:thread:x`, whose parent `agent:main` has no rest).
    pub fn thread_info(&self) -> Option<(SessionKey, String)> {
        let (parent, thread) = self.thread_suffix()?;
        let parent = SessionKey::parse(parent).ok()?;
        Some((parent, thread.to_owned()))
    }

    /// The thread parent (see [`SessionKey::thread_info`]).
    pub fn parent(&self) -> Option<SessionKey> {
        self.thread_info().map(|(p, _)| p)
    }
}

impl fmt::Display for SessionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for SessionKey {
    type Err = ParseKeyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SessionKey::parse(s)
    }
}

impl Serialize for SessionKey {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for SessionKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        SessionKey::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// `parseThreadSessionSuffix`: the key split at its last `:thread:` (searched
/// case-insensitively; the base keeps the input's case).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSuffix {
    /// The key before the marker (the trimmed key when there is none); `None` for a blank key.
    pub base_key: Option<String>,
    /// The trimmed text after the marker; `None` when there is no marker or it is blank.
    pub thread_id: Option<String>,
}

/// `parseThreadSessionSuffix` (generic `:thread:` grammar; channel plugins' own grammars, such
/// as Telegram topics, are not applied).
pub fn parse_thread_suffix(key: &str) -> ThreadSuffix {
    let Some(raw) = js::optional(key) else {
        return ThreadSuffix::default();
    };
    let u = js::units(raw);
    let folded = js::lower_trim_units(&u);
    match js::last_index_of(&folded, &js::units(":thread:")) {
        None => ThreadSuffix {
            base_key: Some(raw.to_owned()),
            thread_id: None,
        },
        Some(i) => {
            let base = js::from_units(&u[..i.min(u.len())]);
            let thread = js::from_units(&u[(i + 8).min(u.len())..]);
            ThreadSuffix {
                base_key: Some(base),
                thread_id: js::optional(&thread).map(str::to_owned),
            }
        }
    }
}

/// `requiresFoldedSessionKeyAliasProof` (openclaw-store.md R2.17): true when the key names a
/// conversation whose opaque id is the whole tail of the key, which today is a Matrix room
/// (`[agent:<id>:]matrix:(channel|group):<id…>`, compared case-insensitively, blank segments
/// dropped, a non-blank id required). Such keys keep their case when normalised, so a
/// lowercased stored variant is only an alias of them with a delivery-target proof. Signal
/// group keys (whose opaque id is one segment) do not need one.
pub fn requires_folded_alias_proof(key: &str) -> bool {
    let Some(raw) = js::optional(key) else {
        return false;
    };
    let parts: Vec<&str> = raw.split(':').filter(|p| !p.is_empty()).collect();
    let body_start = if parts.len() >= 3 && js::lower_trim(parts[0]) == "agent" {
        2
    } else {
        0
    };
    let body = &parts[body_start..];
    if body.len() < 3 {
        return false;
    }
    let kind = js::lower_trim(body[1]);
    js::lower_trim(body[0]) == "matrix"
        && (kind == "channel" || kind == "group")
        && js::optional(&body[2..].join(":")).is_some()
}

/// `isCronSessionKey`: an agent key whose rest starts with `cron:`.
pub fn is_cron_key(key: &str) -> bool {
    parse_parts(key).is_some_and(|(_, rest)| js::lower_trim(&rest).starts_with("cron:"))
}

/// The job and run id of a cron key: `(job, Some(run))` for `cron:<job>:run:<run>[:…]`
/// (`isCronRunSessionKey`), `(job, None)` for any other `cron:<job>[:…]`.
pub fn cron_parts(key: &str) -> Option<(String, Option<String>)> {
    let (_, rest) = parse_parts(key)?;
    if !js::lower_trim(&rest).starts_with("cron:") {
        return None;
    }
    let parts: Vec<&str> = rest.split(':').collect();
    let job = parts.get(1).copied().unwrap_or("").to_owned();
    let run = (parts.len() >= 4
        && parts[0] == "cron"
        && !parts[1].is_empty()
        && parts[2] == "run"
        && !parts[3].is_empty())
    .then(|| parts[3].to_owned());
    Some((job, run))
}

/// `isCronRunSessionKey`: rest matches `^cron:[^:]+:run:[^:]+(:|$)`.
pub fn is_cron_run_key(key: &str) -> bool {
    cron_parts(key).is_some_and(|(_, run)| run.is_some())
}

/// `isSubagentSessionKey`: the key, or the rest of an agent key, starts with `subagent:`.
pub fn is_subagent_key(key: &str) -> bool {
    let Some(raw) = js::optional(key) else {
        return false;
    };
    raw.to_lowercase().starts_with("subagent:")
        || parse_parts(raw).is_some_and(|(_, rest)| js::lower_trim(&rest).starts_with("subagent:"))
}

/// `getSubagentDepth`: how many times `:subagent:` occurs in the trimmed, lowercased key.
pub fn subagent_depth(key: &str) -> usize {
    js::lower_trim(key).matches(":subagent:").count()
}

/// `isAcpSessionKey`: the key, or the rest of an agent key, starts with `acp:`.
pub fn is_acp_key(key: &str) -> bool {
    let Some(raw) = js::optional(key) else {
        return false;
    };
    raw.to_lowercase().starts_with("acp:")
        || parse_parts(raw).is_some_and(|(_, rest)| js::lower_trim(&rest).starts_with("acp:"))
}

/// Incognito keys (openclaw-jsonl.md §5.1, from OpenClaw 2026.9.6; 2026.6.11 has no such
/// keys): `^agent:[^:]+:(dashboard|subagent|internal-session-effects):incognito-[^:]+$`,
/// matched on the normalised key.
pub fn is_incognito_key(key: &str) -> bool {
    let norm = normalize_session_key(key);
    let p: Vec<&str> = norm.split(':').collect();
    p.len() == 4
        && p[0] == "agent"
        && !p[1].is_empty()
        && matches!(p[2], "dashboard" | "subagent" | "internal-session-effects")
        && p[3].len() > "incognito-".len()
        && p[3].starts_with("incognito-")
}

/// The unscoped sentinels `global` (the key of `session.scope: "global"`) and `unknown`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Sentinel {
    /// `global`.
    Global,
    /// `unknown`.
    Unknown,
}

/// `isUnscopedSessionKeySentinel`: `global` or `unknown`, trimmed, any case.
pub fn sentinel(key: &str) -> Option<Sentinel> {
    match js::lower_trim(key).as_str() {
        "global" => Some(Sentinel::Global),
        "unknown" => Some(Sentinel::Unknown),
        _ => None,
    }
}
