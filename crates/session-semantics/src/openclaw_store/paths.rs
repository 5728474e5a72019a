//! Transcript names and `sessionFile` resolution (openclaw-store.md §1.2–§1.3).

use std::path::{Component, Path, PathBuf};

use super::StoreEntry;
use super::normalise::is_file_name_session_id;

/// A topic or thread id as it appears in a transcript name (R1.7).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TopicId {
    /// A numeric id, written as-is.
    Number(i64),
    /// A string id, URI-component-encoded (`encodeURIComponent`).
    Text(String),
}

/// The default transcript file name of a session (R1.6–R1.7): `<sessionId>.jsonl`, or
/// `<sessionId>-topic-<topicId>.jsonl` for a topic or thread.
pub fn transcript_file_name(session_id: &str, topic: Option<&TopicId>) -> String {
    match topic {
        None => format!("{session_id}.jsonl"),
        Some(TopicId::Number(n)) => format!("{session_id}-topic-{n}.jsonl"),
        Some(TopicId::Text(t)) => format!("{session_id}-topic-{}.jsonl", encode_uri_component(t)),
    }
}

/// JavaScript's `encodeURIComponent`: UTF-8 bytes other than `A–Z a–z 0–9 - _ . ! ~ * ' ( )`
/// become `%XX` (uppercase hex).
fn encode_uri_component(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Where an absolute `sessionFile` outside the store's directory may still resolve (R1.11):
/// the agent the caller resolves for (`resolveSessionFilePath`'s `agentId`) and the state dir
/// whose `agents/<id>/sessions` directories are tried (`$OPENCLAW_STATE_DIR`, else
/// `~/.openclaw`, as the reference's `resolveAgentSessionsDir`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionFileFallbacks<'a> {
    /// The explicit agent id, tried before the one in the path.
    pub agent_id: Option<&'a str>,
    /// The state dir of `agents/<id>/sessions`.
    pub state_dir: Option<&'a Path>,
}

impl<'a> SessionFileFallbacks<'a> {
    /// Fallbacks through `agent_id` (when given) and the state dir `state_dir` (when given).
    pub fn new(agent_id: Option<&'a str>, state_dir: Option<&'a Path>) -> Self {
        SessionFileFallbacks {
            agent_id,
            state_dir,
        }
    }
}

/// The transcript of `entry` in `sessions_dir`: [`transcript_path_with`] without an explicit
/// agent id or a state dir (the sibling-agent and structural fallbacks still apply).
pub fn transcript_path(
    sessions_dir: &Path,
    session_id: &str,
    entry: &StoreEntry,
) -> Option<PathBuf> {
    transcript_path_with(
        sessions_dir,
        session_id,
        entry,
        SessionFileFallbacks::default(),
    )
}

/// `realpath`, or the path itself when it does not resolve.
fn real_or_same(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// `candidate` when it is strictly inside `dir` (both real paths where they exist), as the
/// reference's `resolvePathFromAgentSessionsDir`.
fn inside(dir: &Path, candidate: &Path) -> Option<PathBuf> {
    let base = real_or_same(dir);
    (candidate.starts_with(&base) && candidate != base).then(|| candidate.to_path_buf())
}

/// `<root>/agents/<agent>/sessions` when `base` is `<root>/agents/<x>/sessions`.
fn sibling_sessions_dir(base: &Path, agent: &str) -> Option<PathBuf> {
    if base.file_name()? != "sessions" {
        return None;
    }
    let agents = base.parent()?.parent()?;
    if agents.file_name()? != "agents" {
        return None;
    }
    Some(
        agents
            .join(crate::key::normalize_agent_id(agent))
            .join("sessions"),
    )
}

/// The agent id of `…/agents/<id>/sessions/…` (the last `sessions` segment) and the segments
/// after it.
fn agent_of(path: &Path) -> Option<(String, Vec<String>)> {
    let parts: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    let i = parts.iter().rposition(|p| p == "sessions")?;
    if i < 2 || parts[i - 2] != "agents" || parts[i - 1].is_empty() {
        return None;
    }
    Some((parts[i - 1].clone(), parts[i + 1..].to_vec()))
}

/// The transcript of `entry` in `sessions_dir` (R1.11, `resolveSessionFilePath`): a non-empty
/// trimmed `sessionFile` resolves within the directory; anything else, and no `sessionFile`,
/// gives `<sessions_dir>/<session_id>.jsonl` (R1.6). `None` when `session_id` is not a valid
/// file name id (R1.8), where the reference throws.
///
/// - A relative value resolves against the directory; one that climbs out of it (`../x`,
///   `a/../../x`) falls back. (The reference resolves `a/../../x` outside the directory; only
///   values starting with `..` fall back there.)
/// - An absolute value inside the directory (after resolving symlinks of both) is used.
/// - An absolute value outside it is tried, in order: inside
///   `<root>/agents/<agent>/sessions` beside this directory and inside
///   `<state_dir>/agents/<agent>/sessions`, first for the explicit agent of `fallbacks`, then
///   for the agent named in the path (`…/agents/<id>/sessions/…`); then the structural
///   fallback: a path `…/agents/<id>/sessions/<file>` (one segment after `sessions`, `<id>`
///   already a normalised agent id) is used **unchanged**, even under another root (hazard
///   H3: a copied store still names its old root's files).
pub fn transcript_path_with(
    sessions_dir: &Path,
    session_id: &str,
    entry: &StoreEntry,
    fallbacks: SessionFileFallbacks<'_>,
) -> Option<PathBuf> {
    let fallback = || {
        let id = session_format::js::trim(session_id);
        is_file_name_session_id(id).then(|| sessions_dir.join(transcript_file_name(id, None)))
    };
    let Some(file) = entry
        .session_file()
        .map(session_format::js::trim)
        .filter(|f| !f.is_empty())
    else {
        return fallback();
    };
    let file = Path::new(file);
    if file.is_relative() {
        let mut depth = 0usize;
        for c in file.components() {
            match c {
                Component::Normal(_) => depth += 1,
                Component::CurDir => {}
                Component::ParentDir if depth > 0 => depth -= 1,
                _ => return fallback(),
            }
        }
        return if depth > 0 {
            Some(sessions_dir.join(file))
        } else {
            fallback()
        };
    }
    if file.components().any(|c| c == Component::ParentDir) {
        return fallback();
    }
    if file.starts_with(sessions_dir) && file != sessions_dir {
        return Some(file.to_path_buf());
    }
    let real_base = real_or_same(sessions_dir);
    let real_file = real_or_same(file);
    if let Some(found) = inside(&real_base, &real_file) {
        return Some(found);
    }
    let try_agent = |agent: &str| {
        sibling_sessions_dir(&real_base, agent)
            .and_then(|dir| inside(&dir, &real_file))
            .or_else(|| {
                let state = fallbacks.state_dir?;
                let dir = state
                    .join("agents")
                    .join(crate::key::normalize_agent_id(agent))
                    .join("sessions");
                inside(&dir, &real_file)
            })
    };
    if let Some(agent) = fallbacks.agent_id.map(str::trim).filter(|a| !a.is_empty())
        && let Some(found) = try_agent(agent)
    {
        return Some(found);
    }
    if let Some((agent, rest)) = agent_of(&real_file) {
        if let Some(found) = try_agent(&agent) {
            return Some(found);
        }
        let normalized = crate::key::normalize_agent_id(&agent) == agent.to_lowercase();
        if normalized && rest.len() == 1 && rest[0] != "." && rest[0] != ".." {
            return Some(real_file);
        }
    }
    fallback()
}
