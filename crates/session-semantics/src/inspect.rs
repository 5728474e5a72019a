//! A printable classification of any session key string (for `sessions keys parse KEY`):
//! [`inspect_key`] gathers what [`crate::key`] and [`crate::kind`] say about it into a
//! [`KeyInfo`] that serialises to JSON and prints as aligned text.

use std::fmt;

use serde::Serialize;

use crate::key::{self, Sentinel, SessionKey};
use crate::kind::{self, ChatType, KeyShape, ResetType, SessionKind};
use crate::layout;

/// The peer a key addresses (openclaw-jsonl.md §5.1 delivery shapes:
/// `[<channel>:[<account>:]](direct|dm):<peer…>` and `<channel>:(group|channel):<peer…>`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PeerInfo {
    /// The channel (absent for `per-peer` DM keys).
    pub channel: Option<String>,
    /// The account (`per-account-channel-peer` DM keys).
    pub account_id: Option<String>,
    /// `direct`, `group` or `channel`.
    pub kind: String,
    /// The peer id (may contain `:`).
    pub peer_id: String,
    /// True for the legacy `dm` spelling.
    pub legacy_dm: bool,
}

/// The thread part of a key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadInfo {
    /// The parent (base) key.
    pub parent_key: String,
    /// The thread id.
    pub thread_id: String,
}

/// The cron part of a key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CronInfo {
    /// The job.
    pub job: String,
    /// The run (`cron:<job>:run:<run>` keys).
    pub run_id: Option<String>,
}

/// Everything the library says about a key string.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyInfo {
    /// The input.
    pub input: String,
    /// `missing`, `agent`, `malformed_agent` or `legacy_or_alias`.
    pub shape: KeyShape,
    /// The canonical key (agent keys).
    pub key: Option<String>,
    /// Why the input is not an agent key.
    pub error: Option<String>,
    /// The agent id as parsed.
    pub agent_id: Option<String>,
    /// Whether that agent id is valid (`[a-z0-9][a-z0-9_-]{0,63}`).
    pub agent_id_valid: Option<bool>,
    /// Everything after the agent id.
    pub rest: Option<String>,
    /// `global` or `unknown`.
    pub sentinel: Option<Sentinel>,
    /// The rest is the main key.
    pub main: bool,
    /// `deriveSessionChatType`.
    pub chat_type: ChatType,
    /// `classifySessionKind` (without an entry).
    pub kind: SessionKind,
    /// `resolveSessionResetType` (without flags).
    pub reset_type: ResetType,
    /// The peer.
    pub peer: Option<PeerInfo>,
    /// The thread suffix.
    pub thread: Option<ThreadInfo>,
    /// The cron job and run.
    pub cron: Option<CronInfo>,
    /// A subagent key.
    pub subagent: bool,
    /// Number of `:subagent:` markers.
    pub subagent_depth: usize,
    /// An ACP key.
    pub acp: bool,
    /// An incognito key.
    pub incognito: bool,
    /// The session file name in the agent's directory.
    pub file_name: Option<String>,
    /// Why the key has no file name (invalid agent id, over-long name).
    pub file_name_error: Option<String>,
}

fn peer_of(rest: &str) -> Option<PeerInfo> {
    let p: Vec<&str> = rest.split(':').collect();
    let is_dm = |s: &str| s == "direct" || s == "dm";
    let make = |channel: Option<&str>, account: Option<&str>, kind: &str, at: usize| {
        let peer = p[at..].join(":");
        (!peer.is_empty()).then(|| PeerInfo {
            channel: channel.map(str::to_owned),
            account_id: account.map(str::to_owned),
            kind: if is_dm(kind) { "direct" } else { kind }.to_owned(),
            peer_id: peer,
            legacy_dm: kind == "dm",
        })
    };
    if p.len() >= 2 && is_dm(p[0]) {
        return make(None, None, p[0], 1);
    }
    if p.len() >= 3 && (is_dm(p[1]) || p[1] == "group" || p[1] == "channel") {
        return make(Some(p[0]), None, p[1], 2);
    }
    if p.len() >= 4 && is_dm(p[2]) {
        return make(Some(p[0]), Some(p[1]), p[2], 3);
    }
    None
}

/// Classifies any string as a session key (`main_key`: `session.mainKey`, default `main`).
pub fn inspect_key(input: &str, main_key: Option<&str>) -> KeyInfo {
    let parsed = SessionKey::parse(input);
    let thread = key::parse_thread_suffix(input);
    let mut info = KeyInfo {
        input: input.to_owned(),
        shape: kind::classify_key_shape(input),
        key: None,
        error: None,
        agent_id: None,
        agent_id_valid: None,
        rest: None,
        sentinel: key::sentinel(input),
        main: false,
        chat_type: kind::derive_chat_type(input),
        kind: kind::classify_session_kind(input, None),
        reset_type: kind::resolve_reset_type(input, false, false),
        peer: None,
        thread: None,
        cron: key::cron_parts(input).map(|(job, run_id)| CronInfo { job, run_id }),
        subagent: key::is_subagent_key(input),
        subagent_depth: key::subagent_depth(input),
        acp: key::is_acp_key(input),
        incognito: key::is_incognito_key(input),
        file_name: None,
        file_name_error: None,
    };
    match parsed {
        Ok(k) => {
            info.key = Some(k.to_string());
            info.agent_id = Some(k.agent_id().to_owned());
            info.agent_id_valid = Some(key::is_valid_agent_id(k.agent_id()));
            info.rest = Some(k.rest().to_owned());
            info.main = k.is_main(main_key);
            match k.thread_suffix() {
                Some((parent, thread_id)) => {
                    // The parent need not be a key itself (`agent:main:thread:x` → `agent:main`).
                    info.peer = SessionKey::parse(parent)
                        .ok()
                        .and_then(|p| peer_of(p.rest()));
                    info.thread = Some(ThreadInfo {
                        parent_key: parent.to_owned(),
                        thread_id: thread_id.to_owned(),
                    });
                }
                None => info.peer = peer_of(k.rest()),
            }
            match layout::check_agent_id(k.agent_id()).and_then(|()| layout::file_name_for_key(&k))
            {
                Ok(name) => info.file_name = Some(name),
                Err(e) => info.file_name_error = Some(e.to_string()),
            }
        }
        Err(e) => {
            info.error = Some(e.to_string());
            if let (Some(base), Some(thread_id)) = (thread.base_key, thread.thread_id) {
                info.thread = Some(ThreadInfo {
                    parent_key: base,
                    thread_id,
                });
            }
        }
    }
    info
}

fn opt(v: Option<&str>) -> &str {
    v.unwrap_or("-")
}

impl fmt::Display for KeyInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let yes = |b: bool| if b { "yes" } else { "no" };
        writeln!(f, "input:          {:?}", self.input)?;
        writeln!(f, "shape:          {}", self.shape.as_str())?;
        if let Some(e) = &self.error {
            writeln!(f, "error:          {e}")?;
        }
        writeln!(f, "key:            {}", opt(self.key.as_deref()))?;
        if let Some(a) = &self.agent_id {
            let valid = if self.agent_id_valid == Some(true) {
                ""
            } else {
                " (invalid agent id)"
            };
            writeln!(f, "agent id:       {a}{valid}")?;
        }
        writeln!(f, "rest:           {}", opt(self.rest.as_deref()))?;
        if let Some(s) = self.sentinel {
            writeln!(
                f,
                "sentinel:       {}",
                match s {
                    Sentinel::Global => "global",
                    Sentinel::Unknown => "unknown",
                }
            )?;
        }
        writeln!(f, "main:           {}", yes(self.main))?;
        writeln!(f, "chat type:      {}", self.chat_type.as_str())?;
        writeln!(f, "kind:           {}", self.kind.as_str())?;
        writeln!(f, "reset type:     {}", self.reset_type.as_str())?;
        if let Some(p) = &self.peer {
            write!(f, "peer:           {} {}", p.kind, p.peer_id)?;
            if let Some(c) = &p.channel {
                write!(f, " on {c}")?;
            }
            if let Some(a) = &p.account_id {
                write!(f, " (account {a})")?;
            }
            if p.legacy_dm {
                f.write_str(" [legacy dm]")?;
            }
            writeln!(f)?;
        }
        if let Some(t) = &self.thread {
            writeln!(
                f,
                "thread:         {} (parent {})",
                t.thread_id, t.parent_key
            )?;
        }
        if let Some(c) = &self.cron {
            match &c.run_id {
                Some(r) => writeln!(f, "cron:           job {} run {r}", c.job)?,
                None => writeln!(f, "cron:           job {}", c.job)?,
            }
        }
        writeln!(f, "subagent depth: {}", self.subagent_depth)?;
        writeln!(f, "acp:            {}", yes(self.acp))?;
        writeln!(f, "incognito:      {}", yes(self.incognito))?;
        match (&self.file_name, &self.file_name_error) {
            (Some(n), _) => write!(f, "file name:      {n}"),
            (None, Some(e)) => write!(f, "file name:      - ({e})"),
            (None, None) => write!(f, "file name:      -"),
        }
    }
}
