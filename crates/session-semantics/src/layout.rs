//! The on-disk layout of a session store and the mapping between session keys and file names.
//!
//! ```text
//! <root>/agents/<agentId>/sessions/<file>.jsonl     live sessions
//! <root>/agents/<agentId>/sessions/archive/         archived sessions (retention, clear, reset)
//! ```
//!
//! `<root>` is `$OPENCLAW_STATE_DIR`, else `~/.openclaw` (OpenClaw's state directory). File
//! names come in four shapes ([`SessionFileName`]):
//! - `<channel>_<userId>.jsonl`: the key `agent:<agentId>:<channel>:direct:<userId>` (a
//!   per-channel-peer DM);
//! - `<rest, segments joined by '='>.jsonl`: any other key, e.g. `main.jsonl` for
//!   `agent:<agentId>:main`, `cron=nightly=run=7.jsonl`; the rest is the key's canonical text
//!   after `agent:<agentId>:` ([`SessionKey::store_rest`]), so empty segments and a trailing
//!   `:` stay distinct (`a==b.jsonl` for `agent:main:a::b`, `a=b.jsonl` for `agent:main:a:b`);
//! - `<ISO timestamp>_<session id>.jsonl`: what `SessionManager::create` names a session (the
//!   key is not recoverable from the name);
//! - `<session id>.jsonl`: OpenClaw's own transcripts (key kept in `sessions.json`).
//!
//! In the first two shapes each component is percent-encoded: only `a-z 0-9 - . @ +` stay as
//! they are (a `.` only after the first character); every other byte, uppercase letters
//! included (so names never differ only by case), is `%XX` with uppercase hex. The mapping is a
//! bijection: [`key_for_file_name`] accepts only names [`file_name_for_key`] produces.
//!
//! Invariants:
//! - a name that is empty, `.`/`..`, starts with `.`, holds `/`, `\`, `:`, NUL or another
//!   control character, or is longer than 255 bytes is refused, so a key or a name can never
//!   address anything but a direct child of the sessions directory;
//! - [`StoreLayout::resolve_existing`] also checks containment on canonical paths: a file (or
//!   a sessions directory) reached through a symlink that leads out of the sessions directory
//!   is refused.

use std::io;
use std::path::{Path, PathBuf};

use session_store::{MAX_NAME_BYTES, NameRule, NameRules, broken_rule};

use crate::key::{SessionKey, is_valid_agent_id, normalize_agent_id};

/// The environment variable naming the state directory (the store root).
pub const STATE_DIR_ENV: &str = "OPENCLAW_STATE_DIR";
/// Longest file name accepted, in bytes (the usual `NAME_MAX`).
pub const MAX_FILE_NAME_BYTES: usize = MAX_NAME_BYTES;
/// The extension of session files.
pub const SESSION_SUFFIX: &str = ".jsonl";
/// The archive directory's name inside a sessions directory.
pub const ARCHIVE_DIR_NAME: &str = "archive";
/// The suffix of OpenClaw's write-lock file (`<file>.jsonl.lock`).
pub const LOCK_SUFFIX: &str = ".lock";

/// Why a key, a name or a path cannot be used in the store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PathError {
    /// The agent id is not a canonical agent id (`[a-z0-9][a-z0-9_-]{0,63}`, lowercase).
    #[error(
        "agent id {agent_id:?} cannot name a store directory (expected {expected:?}: [a-z0-9][a-z0-9_-]{{0,63}})"
    )]
    InvalidAgentId {
        /// The agent id given.
        agent_id: String,
        /// What it normalises to.
        expected: String,
    },
    /// The file name is empty.
    #[error("session file name is empty")]
    EmptyName,
    /// The file name is longer than [`MAX_FILE_NAME_BYTES`].
    #[error("session file name is {len} bytes long, more than the {max} allowed: {shown:?}")]
    NameTooLong {
        /// Its length in bytes.
        len: usize,
        /// The limit.
        max: usize,
        /// Its first 40 characters.
        shown: String,
    },
    /// The file name holds a character that could leave the directory or is not portable.
    #[error("session file name {name:?} contains {what}, which could address another directory")]
    BadCharacter {
        /// The name (NUL and control characters escaped by `Debug`).
        name: String,
        /// `'/'`, `'\\'`, `':'`, `NUL` or `a control character`.
        what: &'static str,
    },
    /// The name is `.` or `..` or starts with `.`.
    #[error("session file name {name:?} starts with '.' (hidden files, '.' and '..' are refused)")]
    DotName {
        /// The name.
        name: String,
    },
    /// The name does not end in `.jsonl`.
    #[error("session file name {name:?} does not end in .jsonl")]
    NotJsonl {
        /// The name.
        name: String,
    },
    /// The path resolves (through symlinks) to a place outside the directory it must stay in:
    /// a session file outside its sessions directory, or a sessions directory (or an agent
    /// directory on the way to it) outside the store root.
    #[error("{path} resolves to {resolved}, outside {within} {}", .dir.display())]
    OutsideStore {
        /// The path given.
        path: PathBuf,
        /// Where it resolves.
        resolved: PathBuf,
        /// The canonical directory it must stay in.
        dir: PathBuf,
        /// Which directory that is.
        within: Within,
    },
    /// A file system query failed.
    #[error("cannot inspect {path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The failure.
        #[source]
        source: io::Error,
    },
}

/// The directory a path must stay in ([`PathError::OutsideStore`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Within {
    /// A session file in its sessions directory.
    SessionsDir,
    /// A sessions directory (and the agent directory holding it) in the store root.
    StoreRoot,
}

impl std::fmt::Display for Within {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Within::SessionsDir => "the sessions directory",
            Within::StoreRoot => "the store root",
        })
    }
}

/// An entry of `<root>/agents` that is a directory but not an agent of the store.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SkippedAgentDir {
    /// The directory name (lossy for names that are not UTF-8).
    pub name: String,
    /// Why it is not an agent: `not a canonical agent id (expected "bad_id")`, `name is not
    /// valid UTF-8`.
    pub reason: String,
}

/// The agents of a store ([`StoreLayout::agent_dirs`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AgentDirs {
    /// Canonical agent ids with a directory (or a symlink to one) in `<root>/agents`, sorted.
    pub ids: Vec<String>,
    /// Directories there whose names are not canonical agent ids, sorted by name: no store
    /// path can name them, so no operation touches them.
    pub skipped: Vec<SkippedAgentDir>,
}

/// The layout of one store root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreLayout {
    root: PathBuf,
}

impl StoreLayout {
    /// A layout rooted at `root` (nothing is created).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        StoreLayout { root: root.into() }
    }

    /// The default root: `$OPENCLAW_STATE_DIR` (a leading `~/` expanded), else `~/.openclaw`.
    pub fn from_env() -> Self {
        let home = || std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from);
        let root = match std::env::var(STATE_DIR_ENV) {
            Ok(dir) if !dir.trim().is_empty() => match dir.strip_prefix("~/") {
                Some(rest) => home().join(rest),
                None if dir == "~" => home(),
                None => PathBuf::from(dir),
            },
            _ => home().join(".openclaw"),
        };
        StoreLayout { root }
    }

    /// The store root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `<root>/agents`.
    pub fn agents_dir(&self) -> PathBuf {
        self.root.join("agents")
    }

    /// `<root>/agents/<agentId>/sessions`.
    ///
    /// # Errors
    /// [`PathError::InvalidAgentId`] unless `agent_id` is already a canonical agent id.
    pub fn sessions_dir(&self, agent_id: &str) -> Result<PathBuf, PathError> {
        check_agent_id(agent_id)?;
        Ok(self.agents_dir().join(agent_id).join("sessions"))
    }

    /// `<root>/agents/<agentId>/sessions/archive`.
    ///
    /// # Errors
    /// As [`StoreLayout::sessions_dir`].
    pub fn archive_dir(&self, agent_id: &str) -> Result<PathBuf, PathError> {
        Ok(self.sessions_dir(agent_id)?.join(ARCHIVE_DIR_NAME))
    }

    /// The agent ids that have a sessions directory (canonical ids only, sorted).
    ///
    /// # Errors
    /// [`PathError::Io`] when `<root>/agents` exists but cannot be read.
    pub fn agent_ids(&self) -> Result<Vec<String>, PathError> {
        let dir = self.agents_dir();
        let rd = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => return Err(PathError::Io { path: dir, source }),
        };
        let mut ids: Vec<String> = rd
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().to_str().map(str::to_owned))
            .filter(|id| check_agent_id(id).is_ok())
            .collect();
        ids.sort();
        Ok(ids)
    }

    /// Every directory of `<root>/agents` (symlinks to directories included), split into the
    /// canonical agent ids and the directories whose names are not ones ([`AgentDirs`]). Other
    /// entries (files such as `agents/notes` or `.DS_Store`) are not agents and not listed.
    ///
    /// # Errors
    /// [`PathError::Io`] when `<root>/agents` exists but cannot be read.
    pub fn agent_dirs(&self) -> Result<AgentDirs, PathError> {
        let dir = self.agents_dir();
        let rd = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(AgentDirs::default()),
            Err(source) => return Err(PathError::Io { path: dir, source }),
        };
        let mut out = AgentDirs::default();
        for entry in rd.filter_map(Result::ok) {
            if !entry.path().is_dir() {
                continue;
            }
            let raw = entry.file_name();
            match raw.to_str() {
                Some(id) => match check_agent_id(id) {
                    Ok(()) => out.ids.push(id.to_owned()),
                    Err(PathError::InvalidAgentId { expected, .. }) => {
                        out.skipped.push(SkippedAgentDir {
                            name: id.to_owned(),
                            reason: format!("not a canonical agent id (expected {expected:?})"),
                        });
                    }
                    Err(e) => out.skipped.push(SkippedAgentDir {
                        name: id.to_owned(),
                        reason: e.to_string(),
                    }),
                },
                None => out.skipped.push(SkippedAgentDir {
                    name: raw.to_string_lossy().into_owned(),
                    reason: "name is not valid UTF-8".to_owned(),
                }),
            }
        }
        out.ids.sort();
        out.skipped.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// The file a key's session lives in (lexical: nothing is read).
    ///
    /// # Errors
    /// [`PathError::InvalidAgentId`] for a key whose agent id is not canonical;
    /// [`PathError::NameTooLong`] when the encoded name is over 255 bytes.
    pub fn session_path(&self, key: &SessionKey) -> Result<PathBuf, PathError> {
        let dir = self.sessions_dir(key.agent_id())?;
        Ok(dir.join(file_name_for_key(key)?))
    }

    /// `<sessions dir>/<name>` for a validated file name (lexical).
    ///
    /// # Errors
    /// [`PathError`] for a bad agent id or name.
    pub fn resolve_file(&self, agent_id: &str, name: &str) -> Result<PathBuf, PathError> {
        validate_file_name(name)?;
        Ok(self.sessions_dir(agent_id)?.join(name))
    }

    /// As [`StoreLayout::resolve_file`], then checked on the file system: the canonical path
    /// (symlinks resolved) of the sessions directory must lie inside the canonical root, and
    /// the file's (when it exists) inside the canonical sessions directory. Returns the path
    /// under the canonical sessions directory.
    ///
    /// # Errors
    /// [`PathError::OutsideStore`] when a symlink leads out; [`PathError::Io`] when the
    /// sessions directory does not exist or a query fails.
    pub fn resolve_existing(&self, agent_id: &str, name: &str) -> Result<PathBuf, PathError> {
        let lexical = self.resolve_file(agent_id, name)?;
        let dir = self.canonical_sessions_dir(agent_id)?;
        let path = dir.join(name);
        match std::fs::symlink_metadata(&path) {
            Ok(_) => {
                let resolved = canonicalize(&path)?;
                if resolved.parent() != Some(dir.as_path()) {
                    return Err(PathError::OutsideStore {
                        path: lexical,
                        resolved,
                        dir,
                        within: Within::SessionsDir,
                    });
                }
                Ok(path)
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(path),
            Err(source) => Err(PathError::Io { path, source }),
        }
    }

    /// The canonical sessions directory of an agent, checked to lie inside the canonical root.
    ///
    /// # Errors
    /// [`PathError::OutsideStore`], [`PathError::Io`] (e.g. missing directory).
    pub fn canonical_sessions_dir(&self, agent_id: &str) -> Result<PathBuf, PathError> {
        let lexical = self.sessions_dir(agent_id)?;
        let root = canonicalize(&self.root)?;
        let dir = canonicalize(&lexical)?;
        if !dir.starts_with(&root) {
            return Err(PathError::OutsideStore {
                path: lexical,
                resolved: dir,
                dir: root,
                within: Within::StoreRoot,
            });
        }
        Ok(dir)
    }

    /// Creates `<root>/agents/<agentId>/sessions` where missing, one level at a time, checking
    /// before each step that what exists so far resolves inside the canonical root (so a
    /// symlinked `agents/<id>` never makes this create directories elsewhere). The root itself
    /// is created when missing. Returns the canonical sessions directory.
    ///
    /// # Errors
    /// [`PathError::InvalidAgentId`], [`PathError::OutsideStore`], [`PathError::Io`].
    pub fn ensure_sessions_dir(&self, agent_id: &str) -> Result<PathBuf, PathError> {
        check_agent_id(agent_id)?;
        session_store::io::ensure_dir(&self.root).map_err(|source| PathError::Io {
            path: self.root.clone(),
            source,
        })?;
        let root = canonicalize(&self.root)?;
        let mut here = root.clone();
        for part in ["agents", agent_id, "sessions"] {
            let next = here.join(part);
            match std::fs::symlink_metadata(&next) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    match session_store::io::ensure_dir(&next) {
                        Ok(()) => {}
                        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                        Err(source) => return Err(PathError::Io { path: next, source }),
                    }
                }
                Err(source) => return Err(PathError::Io { path: next, source }),
            }
            let resolved = canonicalize(&next)?;
            if !resolved.starts_with(&root) {
                return Err(PathError::OutsideStore {
                    path: next,
                    resolved,
                    dir: root,
                    within: Within::StoreRoot,
                });
            }
            here = resolved;
        }
        Ok(here)
    }

    /// The key of a session file name (see [`key_for_file_name`]).
    pub fn key_for_file(&self, agent_id: &str, name: &str) -> Option<SessionKey> {
        key_for_file_name(agent_id, name)
    }
}

fn canonicalize(path: &Path) -> Result<PathBuf, PathError> {
    std::fs::canonicalize(path).map_err(|source| PathError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Refuses agent ids that are not canonical (`[a-z0-9][a-z0-9_-]{0,63}`, lowercase).
///
/// # Errors
/// [`PathError::InvalidAgentId`].
pub fn check_agent_id(agent_id: &str) -> Result<(), PathError> {
    let expected = normalize_agent_id(agent_id);
    if is_valid_agent_id(agent_id) && expected == agent_id {
        Ok(())
    } else {
        Err(PathError::InvalidAgentId {
            agent_id: agent_id.to_owned(),
            expected,
        })
    }
}

/// Checks that `name` can only ever address a direct child of a directory: non-empty, at most
/// 255 bytes, no `/`, `\`, `:`, NUL or control character, not starting with `.` (which also
/// refuses `.` and `..`). The rules are session-store's one name validator
/// ([`session_store::broken_rule`] with [`NameRules::StoreFile`]: the path-component
/// rules plus `:` and a leading `.`), reported as [`PathError`].
///
/// # Errors
/// [`PathError::EmptyName`], [`PathError::NameTooLong`], [`PathError::BadCharacter`],
/// [`PathError::DotName`].
pub fn validate_name(name: &str) -> Result<(), PathError> {
    let Some(rule) = broken_rule(name, NameRules::StoreFile) else {
        return Ok(());
    };
    let bad = |what: &'static str| PathError::BadCharacter {
        name: name.to_owned(),
        what,
    };
    Err(match rule {
        NameRule::Empty => PathError::EmptyName,
        NameRule::TooLong { len } => PathError::NameTooLong {
            len,
            max: MAX_FILE_NAME_BYTES,
            shown: name.chars().take(40).collect(),
        },
        NameRule::Dot | NameRule::DotDot | NameRule::LeadingDot => PathError::DotName {
            name: name.to_owned(),
        },
        NameRule::Absolute if name.starts_with('\\') => bad("'\\'"),
        NameRule::Absolute | NameRule::Slash => bad("'/'"),
        NameRule::Backslash => bad("'\\'"),
        NameRule::Colon => bad("':'"),
        NameRule::Nul => bad("NUL"),
        // `NameRule` is non-exhaustive: any other rule is a character the layout refuses.
        _ => bad("a control character"),
    })
}

/// [`validate_name`] plus the `.jsonl` extension (with a non-empty stem).
///
/// # Errors
/// As [`validate_name`]; [`PathError::NotJsonl`].
pub fn validate_file_name(name: &str) -> Result<(), PathError> {
    validate_name(name)?;
    match name.strip_suffix(SESSION_SUFFIX) {
        Some(stem) if !stem.is_empty() => Ok(()),
        _ => Err(PathError::NotJsonl {
            name: name.to_owned(),
        }),
    }
}

/// What a session file name says.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "shape", rename_all = "snake_case")]
pub enum SessionFileName {
    /// `<channel>_<userId>.jsonl`: the DM key `agent:<agent>:<channel>:direct:<userId>`.
    Peer {
        /// The channel.
        channel: String,
        /// The user (peer) id.
        user_id: String,
    },
    /// `<rest segments joined by '='>.jsonl`: the key `agent:<agent>:<rest>`.
    Keyed {
        /// The key's store rest (empty segments kept).
        rest: String,
    },
    /// `<ISO timestamp with ':' and '.' as '-'>_<session id>.jsonl` (`SessionManager::create`).
    Reference {
        /// The timestamp part as written (`2026-01-31T08-00-00-000Z`).
        timestamp: String,
        /// The session id.
        session_id: String,
    },
    /// `<uuid>.jsonl`: an OpenClaw transcript named by its session id.
    SessionId {
        /// The session id.
        session_id: String,
    },
    /// Any other valid name.
    Other {
        /// The name without `.jsonl`.
        stem: String,
    },
}

fn keep_raw(b: u8, first: bool) -> bool {
    b.is_ascii_lowercase()
        || b.is_ascii_digit()
        || matches!(b, b'-' | b'@' | b'+')
        || (b == b'.' && !first)
}

fn encode_component(s: &str, out: &mut String) {
    use std::fmt::Write;
    for (i, b) in s.bytes().enumerate() {
        if keep_raw(b, i == 0 && out.is_empty()) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
}

fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    encode_component(s, &mut out);
    out
}

/// Percent-decodes a name component: `%XX` with uppercase hex, other bytes only from the kept
/// set; `None` otherwise or for invalid UTF-8. Canonical form is checked by the callers
/// (re-encoding must give the same text).
fn raw_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            if !hex
                .bytes()
                .all(|h| h.is_ascii_digit() || (b'A'..=b'F').contains(&h))
            {
                return None;
            }
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else if keep_raw(b[i], false) {
            out.push(b[i]);
            i += 1;
        } else {
            return None;
        }
    }
    String::from_utf8(out).ok()
}

fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, &c)| match i {
            8 | 13 | 18 | 23 => c == b'-',
            _ => c.is_ascii_digit() || (b'a'..=b'f').contains(&c),
        })
}

/// `\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z`.
fn is_file_timestamp(s: &str) -> bool {
    const SHAPE: &[u8] = b"dddd-dd-ddTdd-dd-dd-dddZ";
    s.len() == SHAPE.len()
        && s.bytes().zip(SHAPE).all(|(c, &p)| match p {
            b'd' => c.is_ascii_digit(),
            p => c == p,
        })
}

fn encode_keyed(rest: &str) -> String {
    let mut out = String::with_capacity(rest.len());
    for (i, seg) in rest.split(':').enumerate() {
        if i > 0 {
            out.push('=');
        }
        encode_component(seg, &mut out);
    }
    // A bare UUID would read as an OpenClaw session-id name: escape its first character.
    if is_uuid(&out) {
        out = format!("%{:02X}{}", out.as_bytes()[0], &out[1..]);
    }
    out
}

/// The store rest a keyed stem encodes (empty segments kept: `a==b` is `a::b`); `None` unless
/// re-encoding gives the stem back.
fn decode_keyed(stem: &str) -> Option<String> {
    let mut segs = Vec::new();
    for seg in stem.split('=') {
        segs.push(raw_decode(seg)?);
    }
    let rest = segs.join(":");
    (encode_keyed(&rest) == stem).then_some(rest)
}

fn encode_peer(channel: &str, peer: &str) -> String {
    let mut s = encode(channel);
    s.push('_');
    encode_component(peer, &mut s);
    s
}

/// The file name of a key's session (the agent id is the directory, not part of the name):
/// `<channel>_<userId>.jsonl` for `<channel>:direct:<userId>` keys, the rest's segments joined
/// by `=` otherwise.
///
/// # Errors
/// [`PathError::NameTooLong`] when the name would exceed 255 bytes.
pub fn file_name_for_key(key: &SessionKey) -> Result<String, PathError> {
    let rest = key.store_rest();
    let parts: Vec<&str> = rest.splitn(3, ':').collect();
    let stem = match parts.as_slice() {
        [channel, "direct", peer] if !channel.is_empty() && !peer.is_empty() => {
            encode_peer(channel, peer)
        }
        _ => encode_keyed(rest),
    };
    let name = format!("{stem}{SESSION_SUFFIX}");
    validate_file_name(&name)?;
    Ok(name)
}

/// What a file name says (see [`SessionFileName`]).
///
/// # Errors
/// As [`validate_file_name`].
pub fn parse_file_name(name: &str) -> Result<SessionFileName, PathError> {
    validate_file_name(name)?;
    let stem = &name[..name.len() - SESSION_SUFFIX.len()];
    if let Some((ts, id)) = stem.split_once('_')
        && is_file_timestamp(ts)
        && !id.is_empty()
    {
        return Ok(SessionFileName::Reference {
            timestamp: ts.to_owned(),
            session_id: id.to_owned(),
        });
    }
    if is_uuid(stem) {
        return Ok(SessionFileName::SessionId {
            session_id: stem.to_owned(),
        });
    }
    if let Some((c, u)) = stem.split_once('_')
        && let (Some(channel), Some(user_id)) = (raw_decode(c), raw_decode(u))
        && !channel.is_empty()
        && !channel.contains(':')
        && !user_id.is_empty()
        && encode_peer(&channel, &user_id) == stem
    {
        return Ok(SessionFileName::Peer { channel, user_id });
    }
    if !stem.contains('_')
        && let Some(rest) = decode_keyed(stem)
    {
        return Ok(SessionFileName::Keyed { rest });
    }
    Ok(SessionFileName::Other {
        stem: stem.to_owned(),
    })
}

/// The key whose session file is `name` in `agent_id`'s directory: only for names
/// [`file_name_for_key`] gives that very key (so the mapping is a bijection).
///
/// Raw upper-case letters never occur in a canonical name: a key keeps upper case only in
/// opaque peer spans (Signal groups, Matrix rooms; spec §5.1), and those are written as `%XX`.
/// OpenClaw lowercases direct peer ids (`buildAgentPeerSessionKey`), so `slack_U02OPSBOT.jsonl`
/// names no key (`None`); `agent:ops:slack:direct:u02opsbot` lives in `slack_u02opsbot.jsonl`.
pub fn key_for_file_name(agent_id: &str, name: &str) -> Option<SessionKey> {
    let rest = match parse_file_name(name).ok()? {
        SessionFileName::Peer { channel, user_id } => format!("{channel}:direct:{user_id}"),
        SessionFileName::Keyed { rest } => rest,
        _ => return None,
    };
    let key = SessionKey::parse(&format!("agent:{agent_id}:{rest}")).ok()?;
    (key.agent_id() == agent_id && file_name_for_key(&key).ok()? == name).then_some(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> SessionKey {
        SessionKey::parse(s).unwrap()
    }

    #[test]
    fn names_for_keys() {
        let n = |k: &str| file_name_for_key(&key(k)).unwrap();
        assert_eq!(
            n("agent:main:telegram:direct:alice"),
            "telegram_alice.jsonl"
        );
        assert_eq!(
            n("agent:main:telegram:direct:+1555:x"),
            "telegram_+1555%3Ax.jsonl"
        );
        assert_eq!(n("agent:main:main"), "main.jsonl");
        assert_eq!(
            n("agent:main:cron:nightly:run:7"),
            "cron=nightly=run=7.jsonl"
        );
        assert_eq!(n("agent:main:my_chan:direct:a_b"), "my%5Fchan_a%5Fb.jsonl");
        assert_eq!(n("agent:main:.hidden"), "%2Ehidden.jsonl");
        assert_eq!(n("agent:main:a:.b"), "a=.b.jsonl");
        assert_eq!(n("agent:main:a::b"), "a==b.jsonl");
        assert_eq!(n("agent:main:a:b"), "a=b.jsonl");
        assert_eq!(n("agent:main:a:"), "a=.jsonl");
        assert_eq!(n("agent:main::x"), "=x.jsonl");
        assert_eq!(
            n("agent:main:telegram:direct:a::b"),
            "telegram_a%3A%3Ab.jsonl"
        );
        assert_eq!(n("agent:main::direct:x"), "=direct=x.jsonl");
        assert_eq!(
            n("agent:main:matrix:channel:!AbC:srv"),
            "matrix=channel=%21%41b%43=srv.jsonl"
        );
        assert_eq!(
            n("agent:main:0191f7e4-1c2d-7abc-8def-0123456789ab"),
            "%30191f7e4-1c2d-7abc-8def-0123456789ab.jsonl"
        );
    }

    #[test]
    fn keys_for_names() {
        let k = |n: &str| key_for_file_name("main", n).map(|k| k.to_string());
        assert_eq!(
            k("telegram_alice.jsonl").as_deref(),
            Some("agent:main:telegram:direct:alice")
        );
        assert_eq!(k("main.jsonl").as_deref(), Some("agent:main:main"));
        assert_eq!(k("a=.b.jsonl").as_deref(), Some("agent:main:a:.b"));
        assert_eq!(k("Telegram_alice.jsonl"), None);
        assert_eq!(k("telegram_%61lice.jsonl"), None);
        // Empty segments are part of the key (OpenClaw persists `agent:main:a::b` apart from
        // `agent:main:a:b`).
        assert_eq!(k("a==b.jsonl").as_deref(), Some("agent:main:a::b"));
        assert_eq!(k("a=.jsonl").as_deref(), Some("agent:main:a:"));
        assert_eq!(k("=.jsonl"), None);
        assert_eq!(
            k("2026-01-31T08-00-00-000Z_0191f7e4-1c2d-7abc-8def-0123456789ab.jsonl"),
            None
        );
        assert_eq!(
            parse_file_name("0191f7e4-1c2d-7abc-8def-0123456789ab.jsonl").unwrap(),
            SessionFileName::SessionId {
                session_id: "0191f7e4-1c2d-7abc-8def-0123456789ab".into()
            }
        );
    }
}
