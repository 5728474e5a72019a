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

/// The transcript of `entry` in `sessions_dir` (R1.11, `resolveSessionFilePath`): a non-empty
/// trimmed `sessionFile` resolves within the directory (a relative value against it, an
/// absolute value inside it as is, an absolute value shaped `…/agents/<id>/sessions/<file>`
/// unchanged: the structural fallback); anything else, and no `sessionFile`, gives
/// `<sessions_dir>/<session_id>.jsonl` (R1.6). `None` when `session_id` is not a valid file
/// name id (R1.8), where the reference throws.
///
/// Not done here: the agent-id and state-dir fallbacks for absolute paths outside the
/// directory, and resolving symlinks of the directory first.
pub fn transcript_path(
    sessions_dir: &Path,
    session_id: &str,
    entry: &StoreEntry,
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
    let parts: Vec<_> = file.components().collect();
    let structural = parts.len() >= 4
        && matches!(parts[parts.len() - 2], Component::Normal(s) if s == "sessions")
        && matches!(parts[parts.len() - 4], Component::Normal(s) if s == "agents");
    if structural {
        Some(file.to_path_buf())
    } else {
        fallback()
    }
}
