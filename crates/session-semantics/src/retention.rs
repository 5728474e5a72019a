//! Retention: archiving old or surplus sessions and clearing sessions, with dry-run reports
//! that are data (serde) so a CLI can print text ([`std::fmt::Display`]) or JSON.
//!
//! - [`plan_archive`] looks at every `*.jsonl` directly in `<root>/agents/<agent>/sessions/`
//!   and plans to move into `<sessions>/archive/`: sessions whose last activity (the newest
//!   user/assistant message time inside the file, as `session_store::session_info` reports it, else
//!   the header timestamp; never the file's mtime) is older than `maxAge`; then, while the live
//!   sessions take more than `maxSize`, the oldest remaining ones. [`ArchivePlan::execute`]
//!   performs the plan, re-checking each file first.
//! - [`clear`] archives (or, when asked, deletes) one session or every session of an agent;
//!   [`plan_clear`] and [`ClearPlan::execute`] are its two halves.
//! - Guard rails: every report counts the agent's live sessions and flags a run that would move
//!   or delete more than half of them ([`MassSweep`]; callers such as the `sessions` command
//!   refuse it unless told otherwise, before anything is touched), and every move or delete is
//!   appended to the sessions directory's audit log ([`crate::audit`]) right after it is done.
//!
//! Files are keyed by their identity ([`session_store::identity::FileIdentity`]): a symlink
//! to another session of the directory is that session, handled once under the target's name
//! ([`SkipReason::Alias`]; a single session named through such a link is cleared as its
//! target), and a symlink to a file outside the sessions directory (the store root of these
//! commands) is never followed ([`SkipReason::LinkOutsideStore`], naming the link and its
//! target, which stays untouched).
//!
//! A file is never touched when it is locked (its `<file>.lock` is held by a live writer, see
//! [`crate::fsops`]), is not a session (its first line is not a session header), cannot be
//! read, is a symlink or not a regular file, has a name that could address another directory,
//! or resolves outside the sessions directory; each such file is listed under `skipped` with
//! the reason. Live size counts every session that stays plus locked files (which cannot move).

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;

use crate::audit::{AuditAction, AuditLog, AuditRecord};
use crate::events::{EventBus, Lifecycle, LifecycleEvent, SessionTarget};
use crate::fsops;
use crate::key::SessionKey;
use crate::layout::{self, ARCHIVE_DIR_NAME, PathError, SESSION_SUFFIX, StoreLayout};
use crate::policy::{Clock, RetentionConfig};

/// The limits [`plan_archive`] applies.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RetentionPolicy {
    /// `maxAge` as written (for reports).
    pub max_age: Option<String>,
    /// `maxAge` in milliseconds.
    pub max_age_ms: Option<u64>,
    /// `maxSize` as written.
    pub max_size: Option<String>,
    /// `maxSize` in bytes.
    pub max_size_bytes: Option<u64>,
}

impl From<&RetentionConfig> for RetentionPolicy {
    fn from(c: &RetentionConfig) -> Self {
        RetentionPolicy {
            max_age: c.max_age.0.as_ref().map(|d| d.text.clone()),
            max_age_ms: c.max_age.0.as_ref().map(|d| d.ms),
            max_size: c.max_size.0.as_ref().map(|s| s.text.clone()),
            max_size_bytes: c.max_size.0.as_ref().map(|s| s.bytes),
        }
    }
}

/// Why a file was left alone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
pub enum SkipReason {
    /// The name is a symlink (never followed): a dangling one, or one to a file that is not a
    /// session of this directory (e.g. one in `archive/`).
    Symlink,
    /// The name is a symlink to another session file of this directory: the session is
    /// handled under that name, once ([`session_store::identity::FileIdentity`]); the link
    /// itself is never moved or deleted.
    #[serde(rename_all = "camelCase")]
    Alias {
        /// The file name it leads to.
        of: String,
    },
    /// The name is a symlink to a file outside the sessions directory: never followed, the
    /// target is neither moved nor deleted (names both, lossy for non-UTF-8 paths).
    #[serde(rename_all = "camelCase")]
    LinkOutsideStore {
        /// The link.
        link: String,
        /// The file it leads to.
        target: String,
    },
    /// A directory, FIFO, socket or device.
    NotRegularFile,
    /// The file has more than one hard link: its write lock is per name, so another name may
    /// be locked and written meanwhile, and a move would split the names (docs/DEVIATIONS.md
    /// D29). Never archived or cleared.
    #[serde(rename_all = "camelCase")]
    HardLinked {
        /// Its link count (`st_nlink`).
        links: u64,
    },
    /// OpenClaw's lock file exists.
    #[serde(rename_all = "camelCase")]
    Locked {
        /// The lock file's name.
        lock_file: String,
    },
    /// The lock path holds a directory, FIFO, socket or device (or a symlink to one) instead
    /// of a lock file: the session counts as locked by something that cannot be judged (it
    /// is never opened; remove it by hand if no writer uses it).
    #[serde(rename_all = "camelCase")]
    LockNotAFile {
        /// The lock path (lossy for paths that are not UTF-8).
        lock_path: String,
        /// What is there (`a FIFO`, `a directory`, `a symlink to a FIFO`, …).
        found: String,
    },
    /// The file cannot be read.
    Unreadable {
        /// The error.
        error: String,
    },
    /// The first line is not a session header (or the file is empty).
    NotASession,
    /// A session header, but rows the reference's listing rejects (a `null` row, a message
    /// without a message, …).
    Malformed,
    /// Neither a message time nor a header timestamp inside the file.
    NoActivityTime,
    /// The name could address another directory or is not valid UTF-8.
    #[serde(rename_all = "camelCase")]
    UnsafeName {
        /// Why.
        error: String,
    },
    /// The file resolves outside the sessions directory.
    OutsideStore,
    /// The file changed (size or mtime) between the plan and the execution.
    Changed,
    /// The file disappeared.
    Vanished,
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::Symlink => f.write_str("a symlink (never followed)"),
            SkipReason::Alias { of } => write!(f, "a symlink to {of} (handled under that name)"),
            SkipReason::LinkOutsideStore { link, target } => write!(
                f,
                "{link} is a symlink to {target}, outside the sessions directory (never followed)"
            ),
            SkipReason::NotRegularFile => f.write_str("not a regular file"),
            SkipReason::HardLinked { links } => write!(
                f,
                "has {links} hard links (its lock is per name; never archived or cleared while it has more than one)"
            ),
            SkipReason::Locked { lock_file } => write!(f, "locked ({lock_file} exists)"),
            SkipReason::LockNotAFile { lock_path, found } => write!(
                f,
                "locked: its lock path {lock_path} is {found}, not a lock file (remove it by hand if no writer uses it)"
            ),
            SkipReason::Unreadable { error } => write!(f, "unreadable: {error}"),
            SkipReason::NotASession => f.write_str("not a session (no session header)"),
            SkipReason::Malformed => f.write_str("malformed session rows"),
            SkipReason::NoActivityTime => {
                f.write_str("no message time or header timestamp inside the file")
            }
            SkipReason::UnsafeName { error } => write!(f, "unsafe name: {error}"),
            SkipReason::OutsideStore => f.write_str("resolves outside the sessions directory"),
            SkipReason::Changed => f.write_str("changed since the plan"),
            SkipReason::Vanished => f.write_str("disappeared"),
        }
    }
}

impl SkipReason {
    /// The file is a session that stays live (it counts among the agent's live sessions for
    /// [`MassSweep`]): locked, without an activity time, or with rows the listing rejects.
    fn is_live_session(&self) -> bool {
        matches!(
            self,
            SkipReason::Locked { .. }
                | SkipReason::LockNotAFile { .. }
                | SkipReason::HardLinked { .. }
                | SkipReason::NoActivityTime
                | SkipReason::Malformed
        )
    }
}

/// A run that would move or delete more than half of an agent's live sessions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MassSweep {
    /// The sessions the run would move or delete.
    pub sessions: usize,
    /// The agent's live sessions: every session directly in its sessions directory (those the
    /// run would touch, and those it leaves: locked, without an activity time, malformed).
    pub live_sessions: usize,
}

impl MassSweep {
    /// `Some` when `sessions` is more than half of `live_sessions` (`2 × sessions >
    /// live_sessions`): 2 of 3, 3 of 4 and 1 of 1 are mass sweeps, 2 of 4 is not.
    pub fn judge(sessions: usize, live_sessions: usize) -> Option<MassSweep> {
        (sessions > 0 && sessions.saturating_mul(2) > live_sessions).then_some(MassSweep {
            sessions,
            live_sessions,
        })
    }
}

impl fmt::Display for MassSweep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of {} live {} (more than half)",
            self.sessions,
            self.live_sessions,
            if self.live_sessions == 1 {
                "session"
            } else {
                "sessions"
            }
        )
    }
}

/// The audit lines an executed run appended ([`crate::audit`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditSummary {
    /// The audit log (`<sessions>/sessions-audit.log`).
    pub log: PathBuf,
    /// The lines appended, in order.
    pub records: Vec<AuditRecord>,
    /// Why the log could not be written, when it could not (the run then stopped: the actions
    /// after the failure were not attempted).
    pub error: Option<String>,
}

/// A file left alone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// The file name (lossy for non-UTF-8 names).
    pub file: String,
    /// Why.
    #[serde(flatten)]
    pub reason: SkipReason,
}

/// What happened (or will happen) to a planned action.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "kebab-case")]
pub enum Outcome {
    /// Dry run: would be done.
    Planned,
    /// Moved into the archive directory.
    Archived,
    /// Deleted.
    Purged,
    /// Not done: the file no longer qualified when it was re-checked.
    Skipped {
        /// Why.
        #[serde(flatten)]
        reason: SkipReason,
    },
    /// The move or delete failed.
    Failed {
        /// The error.
        error: String,
    },
}

/// Why a session is archived.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ArchiveReason {
    /// Older than `maxAge`.
    #[serde(rename_all = "camelCase")]
    MaxAge {
        /// Milliseconds since the last activity.
        age_ms: i64,
    },
    /// Among the oldest while the live sessions exceed `maxSize`.
    MaxSize,
}

/// One session to archive.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArchiveAction {
    /// The file name in the sessions directory.
    pub file: String,
    /// Where it goes, relative to the sessions directory (`archive/<name>`).
    pub destination: String,
    /// The session key, when the name encodes one.
    pub session_key: Option<String>,
    /// The header's session id.
    pub session_id: String,
    /// Last activity (ISO 8601, UTC).
    pub last_activity: String,
    /// Last activity in milliseconds.
    pub last_activity_ms: i64,
    /// File size.
    pub size_bytes: u64,
    /// Why.
    pub reason: ArchiveReason,
    /// The symlinks directly in the sessions directory that name this session (see
    /// [`fsops::RetireLocks::aliases`]): their locks are taken with the file's, and once the
    /// file is moved they are removed (the links only), so no name is left dangling. Planned:
    /// the aliases found now; executed: the ones removed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// Planned, done, skipped or failed.
    #[serde(flatten)]
    pub outcome: Outcome,
    #[serde(skip)]
    check: FileStamp,
}

/// The size and mtime a plan saw, re-checked before acting.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
struct FileStamp {
    size: u64,
    mtime: Option<SystemTime>,
}

/// A dry-run or executed archive run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArchiveReport {
    /// The agent.
    pub agent_id: String,
    /// The sessions directory: canonical, or when it does not exist, the absolute path where
    /// it would be (nothing to archive then).
    pub sessions_dir: PathBuf,
    /// The archive directory.
    pub archive_dir: PathBuf,
    /// True for a plan, false after execution.
    pub dry_run: bool,
    /// The time the plan was made for (ISO 8601).
    pub now: String,
    /// The limits.
    pub policy: RetentionPolicy,
    /// Live bytes before.
    pub live_bytes_before: u64,
    /// Live bytes once the actions are done.
    pub live_bytes_after: u64,
    /// The agent's live sessions before the run (see [`MassSweep::live_sessions`]).
    pub live_sessions: usize,
    /// Set when the run would archive more than half of them.
    pub mass_sweep: Option<MassSweep>,
    /// Sessions to archive, oldest activity first within each reason (max-age first).
    pub actions: Vec<ArchiveAction>,
    /// Files left alone, by name.
    pub skipped: Vec<Skipped>,
    /// What was written to the audit log (executed runs only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audit: Option<AuditSummary>,
}

/// Why an archive or clear run could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RetentionError {
    /// A bad agent id or a sessions directory outside the store.
    #[error(transparent)]
    Path(#[from] PathError),
    /// The sessions directory cannot be listed.
    #[error("cannot list {path}: {source}")]
    ReadDir {
        /// The directory.
        path: PathBuf,
        /// The failure.
        #[source]
        source: std::io::Error,
    },
    /// `archive` exists but is not a real directory.
    #[error("archive directory unusable: {source}")]
    ArchiveDir {
        /// The failure.
        #[source]
        source: std::io::Error,
    },
    /// The named session does not exist.
    #[error("no session file {name} in {dir}")]
    NotFound {
        /// The file name.
        name: String,
        /// The sessions directory.
        dir: PathBuf,
    },
    /// A key names another agent than the one asked for.
    #[error("session key {key} belongs to agent {key_agent}, not {agent}")]
    AgentMismatch {
        /// The key.
        key: String,
        /// Its agent.
        key_agent: String,
        /// The agent asked for.
        agent: String,
    },
    /// A policy whose `maxAge` is 0 ms: every session would be older than it. Parsed settings
    /// never give one ([`crate::policy::parse_max_age_ms`] refuses zero ages).
    #[error(
        "max age {text:?} is zero: every session would be archived; give a positive age, or no \
         max age to turn the limit off"
    )]
    ZeroMaxAge {
        /// The policy's `maxAge` text.
        text: String,
    },
    /// A session reference that is neither a key nor a file name.
    #[error("{input:?} is neither a session key nor a session file name: {reason}")]
    BadSessionRef {
        /// The reference.
        input: String,
        /// Why.
        reason: String,
    },
}

/// A session file that qualifies for retention.
struct Candidate {
    name: String,
    key: Option<SessionKey>,
    session_id: String,
    modified_ms: i64,
    stamp: FileStamp,
}

enum Scan {
    Live(Candidate),
    /// Skipped, with the bytes it keeps occupying (locked files count as live).
    Skip(Skipped, u64),
}

fn stamp_of(meta: &std::fs::Metadata) -> FileStamp {
    FileStamp {
        size: meta.len(),
        mtime: meta.modified().ok(),
    }
}

/// Checks one directory entry (`dir` canonical).
fn inspect(agent_id: &str, dir: &Path, name: &str) -> Scan {
    let skip = |reason| {
        Scan::Skip(
            Skipped {
                file: name.to_owned(),
                reason,
            },
            0,
        )
    };
    if let Err(e) = layout::validate_file_name(name) {
        return skip(SkipReason::UnsafeName {
            error: e.to_string(),
        });
    }
    let path = dir.join(name);
    let meta = match std::fs::symlink_metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return skip(SkipReason::Vanished),
        Err(e) => {
            return skip(SkipReason::Unreadable {
                error: e.to_string(),
            });
        }
    };
    if meta.file_type().is_symlink() {
        return skip(link_reason(dir, &path));
    }
    if !meta.is_file() {
        return skip(SkipReason::NotRegularFile);
    }
    match std::fs::canonicalize(&path) {
        Ok(real) if real.parent() == Some(dir) => {}
        Ok(_) => return skip(SkipReason::OutsideStore),
        Err(e) => {
            return skip(SkipReason::Unreadable {
                error: e.to_string(),
            });
        }
    }
    if let Some(busy) = fsops::lock_status(&path) {
        let reason = match busy.not_a_lock_file {
            Some(found) => SkipReason::LockNotAFile {
                lock_path: busy.lock.to_string_lossy().into_owned(),
                found: found.to_string(),
            },
            None => SkipReason::Locked {
                lock_file: busy
                    .lock
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            },
        };
        return Scan::Skip(
            Skipped {
                file: name.to_owned(),
                reason,
            },
            meta.len(),
        );
    }
    let links = session_store::identity::link_count(&meta);
    if links > 1 {
        return Scan::Skip(
            Skipped {
                file: name.to_owned(),
                reason: SkipReason::HardLinked { links },
            },
            meta.len(),
        );
    }
    if let Err(e) = session_store::io::read_first_line(&path) {
        return skip(SkipReason::Unreadable {
            error: e.to_string(),
        });
    }
    if !session_store::is_valid_session_file(&path) {
        return skip(SkipReason::NotASession);
    }
    let Some(info) = session_store::session_info(&path) else {
        return skip(SkipReason::Malformed);
    };
    let stamp = stamp_of(&meta);
    if !info.modified.is_finite() || info.modified_from_mtime {
        return skip(SkipReason::NoActivityTime);
    }
    Scan::Live(Candidate {
        name: name.to_owned(),
        key: layout::key_for_file_name(agent_id, name),
        session_id: info.id,
        modified_ms: info.modified as i64,
        stamp,
    })
}

/// Why a symlink in the sessions directory `dir` (canonical) is left alone: it leads out of
/// the directory ([`SkipReason::LinkOutsideStore`]), to another session name of it
/// ([`SkipReason::Alias`]: one identity, handled under the target's name), or elsewhere
/// (dangling, a sub-directory: [`SkipReason::Symlink`]).
fn link_reason(dir: &Path, path: &Path) -> SkipReason {
    let Ok(id) = session_store::FileIdentity::resolve(path) else {
        return SkipReason::Symlink;
    };
    if let Err(o) = id.check_within(dir) {
        return SkipReason::LinkOutsideStore {
            link: o.link.to_string_lossy().into_owned(),
            target: o.target.to_string_lossy().into_owned(),
        };
    }
    let target = id.canonical();
    match target.file_name().and_then(|n| n.to_str()) {
        Some(name)
            if id.exists()
                && target.parent() == Some(dir)
                && name.ends_with(SESSION_SUFFIX)
                && std::fs::symlink_metadata(target).is_ok_and(|m| m.is_file()) =>
        {
            SkipReason::Alias {
                of: name.to_owned(),
            }
        }
        _ => SkipReason::Symlink,
    }
}

/// Every `*.jsonl` entry of the sessions directory, checked, sorted by name.
fn scan_dir(agent_id: &str, dir: &Path) -> Result<Vec<Scan>, RetentionError> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(source) => {
            return Err(RetentionError::ReadDir {
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    let mut names: Vec<Result<String, String>> = rd
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().ends_with(SESSION_SUFFIX))
        .map(|n| {
            n.into_string()
                .map_err(|n| n.to_string_lossy().into_owned())
        })
        .collect();
    names.sort();
    Ok(names
        .into_iter()
        .map(|n| match n {
            Ok(name) => inspect(agent_id, dir, &name),
            Err(lossy) => Scan::Skip(
                Skipped {
                    file: lossy,
                    reason: SkipReason::UnsafeName {
                        error: "not valid UTF-8".to_owned(),
                    },
                },
                0,
            ),
        })
        .collect())
}

/// The canonical sessions directory, or `None` when it does not exist.
fn sessions_dir(layout: &StoreLayout, agent_id: &str) -> Result<Option<PathBuf>, RetentionError> {
    let lexical = layout.sessions_dir(agent_id)?;
    match std::fs::symlink_metadata(&lexical) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        _ => Ok(Some(layout.canonical_sessions_dir(agent_id)?)),
    }
}

/// `path` made absolute (against the current directory, lexically) for reports: a sessions
/// directory that does not exist has no canonical form, and a relative one would read as
/// relative to wherever the report is read.
fn absolute(path: PathBuf) -> PathBuf {
    std::path::absolute(&path).unwrap_or(path)
}

fn iso(ms: i64) -> String {
    session_format::time::to_iso_string(ms).unwrap_or_else(|| ms.to_string())
}

/// A planned archive run: [`ArchivePlan::report`] is the dry run, [`ArchivePlan::execute`]
/// performs it.
#[derive(Clone, Debug)]
pub struct ArchivePlan {
    report: ArchiveReport,
}

/// Plans an archive run for one agent at `now_ms` (see the module documentation). A missing
/// sessions directory gives an empty plan.
///
/// # Errors
/// [`RetentionError::Path`] for an invalid agent id or a sessions directory that resolves
/// outside the store root; [`RetentionError::ReadDir`]; [`RetentionError::ArchiveDir`] when
/// `archive` exists but is not a real directory; [`RetentionError::ZeroMaxAge`].
pub fn plan_archive(
    layout: &StoreLayout,
    agent_id: &str,
    policy: &RetentionPolicy,
    now_ms: i64,
) -> Result<ArchivePlan, RetentionError> {
    if policy.max_age_ms == Some(0) {
        return Err(RetentionError::ZeroMaxAge {
            text: policy.max_age.clone().unwrap_or_else(|| "0".to_owned()),
        });
    }
    let mut report = ArchiveReport {
        agent_id: agent_id.to_owned(),
        sessions_dir: absolute(layout.sessions_dir(agent_id)?),
        archive_dir: absolute(layout.archive_dir(agent_id)?),
        dry_run: true,
        now: iso(now_ms),
        policy: policy.clone(),
        live_bytes_before: 0,
        live_bytes_after: 0,
        live_sessions: 0,
        mass_sweep: None,
        actions: Vec::new(),
        skipped: Vec::new(),
        audit: None,
    };
    let Some(dir) = sessions_dir(layout, agent_id)? else {
        return Ok(ArchivePlan { report });
    };
    report.archive_dir = dir.join(ARCHIVE_DIR_NAME);
    report.sessions_dir = dir.clone();
    check_archive_dir(&report.archive_dir)?;
    let mut live: Vec<Candidate> = Vec::new();
    let mut pinned_bytes = 0;
    for scan in scan_dir(agent_id, &dir)? {
        match scan {
            Scan::Live(c) => live.push(c),
            Scan::Skip(s, bytes) => {
                pinned_bytes += bytes;
                report.skipped.push(s);
            }
        }
    }
    report.live_sessions = live.len()
        + report
            .skipped
            .iter()
            .filter(|s| s.reason.is_live_session())
            .count();
    live.sort_by(|a, b| {
        a.modified_ms
            .cmp(&b.modified_ms)
            .then_with(|| a.name.cmp(&b.name))
    });
    report.live_bytes_before = pinned_bytes + live.iter().map(|c| c.stamp.size).sum::<u64>();
    let mut chosen: Vec<(Candidate, ArchiveReason)> = Vec::new();
    let mut rest: Vec<Candidate> = Vec::new();
    for c in live {
        let age = now_ms.saturating_sub(c.modified_ms);
        match policy.max_age_ms {
            Some(max) if age > 0 && age.unsigned_abs() > max => {
                chosen.push((c, ArchiveReason::MaxAge { age_ms: age }));
            }
            _ => rest.push(c),
        }
    }
    let mut live_bytes = pinned_bytes + rest.iter().map(|c| c.stamp.size).sum::<u64>();
    if let Some(max) = policy.max_size_bytes {
        for c in rest {
            if live_bytes <= max {
                break;
            }
            live_bytes -= c.stamp.size;
            chosen.push((c, ArchiveReason::MaxSize));
        }
    }
    report.live_bytes_after = live_bytes;
    let mut taken: Vec<String> = Vec::new();
    for (c, reason) in chosen {
        let Some(dest) = fsops::free_name(&report.archive_dir, &c.name, &taken) else {
            report.skipped.push(Skipped {
                file: c.name,
                reason: SkipReason::UnsafeName {
                    error: "no free archive name within 255 bytes".to_owned(),
                },
            });
            continue;
        };
        taken.push(dest.clone());
        let aliases = alias_names_of(&dir, &c.name);
        report.actions.push(ArchiveAction {
            file: c.name,
            destination: format!("{ARCHIVE_DIR_NAME}/{dest}"),
            session_key: c.key.map(|k| k.to_string()),
            session_id: c.session_id,
            last_activity: iso(c.modified_ms),
            last_activity_ms: c.modified_ms,
            size_bytes: c.stamp.size,
            reason,
            aliases,
            outcome: Outcome::Planned,
            check: c.stamp,
        });
    }
    report.skipped.sort_by(|a, b| a.file.cmp(&b.file));
    report.mass_sweep = MassSweep::judge(report.actions.len(), report.live_sessions);
    Ok(ArchivePlan { report })
}

fn check_archive_dir(dir: &Path) -> Result<(), RetentionError> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if !m.is_dir() => Err(RetentionError::ArchiveDir {
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{} exists and is not a real directory", dir.display()),
            ),
        }),
        _ => Ok(()),
    }
}

/// Plans with `clock` and, unless `dry_run`, executes (see [`plan_archive`],
/// [`ArchivePlan::execute`]).
///
/// # Errors
/// As [`plan_archive`].
pub fn archive(
    layout: &StoreLayout,
    agent_id: &str,
    policy: &RetentionPolicy,
    clock: &dyn Clock,
    dry_run: bool,
    bus: Option<&EventBus>,
) -> Result<ArchiveReport, RetentionError> {
    let plan = plan_archive(layout, agent_id, policy, clock.now_ms())?;
    Ok(if dry_run {
        plan.report
    } else {
        plan.execute(bus)
    })
}

/// Takes the write lock of a planned file for its move or deletion (see
/// [`fsops::lock_for_retire`]), then re-checks it: still a regular file (not a symlink) with
/// the planned size and mtime. The guard is held until the caller is done.
fn lock_and_recheck(
    path: &Path,
    stamp: &FileStamp,
) -> Result<Option<fsops::RetireLocks>, SkipReason> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(SkipReason::Vanished),
        Ok(m) if m.file_type().is_symlink() => return Err(SkipReason::Symlink),
        _ => {}
    }
    let guard = fsops::lock_for_retire(path).map_err(|refusal| match refusal {
        fsops::RetireRefusal::Locked(lock) => SkipReason::Locked {
            lock_file: lock
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        },
        fsops::RetireRefusal::OutsideStore(o) => SkipReason::LinkOutsideStore {
            link: o.link.to_string_lossy().into_owned(),
            target: o.target.to_string_lossy().into_owned(),
        },
    })?;
    recheck(path, stamp)?;
    Ok(guard)
}

/// Re-checks a planned file: still a regular file (not a symlink) with the planned size and
/// mtime.
fn recheck(path: &Path, stamp: &FileStamp) -> Result<(), SkipReason> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(SkipReason::Vanished),
        Err(e) => {
            return Err(SkipReason::Unreadable {
                error: e.to_string(),
            });
        }
    };
    if meta.file_type().is_symlink() {
        return Err(SkipReason::Symlink);
    }
    if !meta.is_file() {
        return Err(SkipReason::NotRegularFile);
    }
    let links = session_store::identity::link_count(&meta);
    if links > 1 {
        return Err(SkipReason::HardLinked { links });
    }
    if stamp_of(&meta) != *stamp {
        return Err(SkipReason::Changed);
    }
    Ok(())
}

/// The names of the aliases of `dir/file` in `dir` ([`session_store::identity::aliases_in`]).
fn alias_names_of(dir: &Path, file: &str) -> Vec<String> {
    session_store::identity::aliases_in(dir, &dir.join(file))
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect()
}

/// After `file` was moved or deleted under `locks`: removes each alias the locks cover that is
/// still a symlink (never its target), appending an audit line per removal. Returns the names
/// removed.
fn remove_aliases(
    locks: Option<&fsops::RetireLocks>,
    file: &str,
    session_id: &str,
    log: &AuditLog,
    audit: &mut AuditSummary,
) -> Vec<String> {
    let Some(locks) = locks else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for alias in locks.aliases() {
        let still_link = std::fs::symlink_metadata(alias).is_ok_and(|m| m.file_type().is_symlink());
        if !still_link || audit.error.is_some() || fsops::delete_file(alias).is_err() {
            continue;
        }
        let name = alias
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        record(
            log,
            audit,
            AuditRecord {
                time: crate::audit::now_iso(),
                action: AuditAction::RemoveAlias,
                file: name.clone(),
                destination: None,
                session_id: session_id.to_owned(),
                reason: format!("alias of {file}"),
                bytes: 0,
            },
        );
        removed.push(name);
    }
    removed
}

/// The outcome of a move or delete of `src` that failed with `e`: skipped as
/// [`SkipReason::Vanished`] when the source is gone (another run, or a remover that does not
/// take the write lock, got there between the re-check and the move: nothing was lost), a
/// failure otherwise.
fn failure_outcome(src: &Path, e: &std::io::Error) -> Outcome {
    let gone = e.kind() == std::io::ErrorKind::NotFound
        && matches!(std::fs::symlink_metadata(src), Err(m) if m.kind() == std::io::ErrorKind::NotFound);
    if gone {
        Outcome::Skipped {
            reason: SkipReason::Vanished,
        }
    } else {
        Outcome::Failed {
            error: e.to_string(),
        }
    }
}

/// Moves one file into the archive directory (choosing another free name when the planned
/// one was taken meanwhile). Returns the final relative destination.
fn archive_one(
    dir: &Path,
    archive_dir: &Path,
    file: &str,
    planned: &str,
) -> Result<String, std::io::Error> {
    fsops::ensure_real_dir(archive_dir)?;
    let planned_name = planned
        .strip_prefix(&format!("{ARCHIVE_DIR_NAME}/"))
        .unwrap_or(planned);
    let name = fsops::free_name(archive_dir, planned_name, &[]).ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "no free archive name")
    })?;
    fsops::move_file(&dir.join(file), &archive_dir.join(&name))?;
    Ok(format!("{ARCHIVE_DIR_NAME}/{name}"))
}

fn emit(
    bus: Option<&EventBus>,
    agent_id: &str,
    session_id: &str,
    key: Option<&str>,
    file: PathBuf,
    lifecycle: Lifecycle,
) {
    if let Some(bus) = bus {
        bus.emit_lifecycle(LifecycleEvent {
            target: SessionTarget {
                agent_id: agent_id.to_owned(),
                session_id: session_id.to_owned(),
                session_key: key.map(str::to_owned),
                session_file: Some(file),
            },
            parent_session_key: None,
            lifecycle,
        });
    }
}

impl ArchiveReport {
    /// How many actions failed (a CLI's exit status).
    pub fn failed(&self) -> usize {
        self.actions
            .iter()
            .filter(|a| matches!(a.outcome, Outcome::Failed { .. }))
            .count()
    }
}

impl ClearReport {
    /// How many actions failed.
    pub fn failed(&self) -> usize {
        self.actions
            .iter()
            .filter(|a| matches!(a.outcome, Outcome::Failed { .. }))
            .count()
    }
}

impl ArchivePlan {
    /// The dry-run report.
    pub fn report(&self) -> &ArchiveReport {
        &self.report
    }

    /// Performs the plan: each file is re-checked (still a regular file with the planned size
    /// and mtime, not locked) and moved; outcomes are recorded per action, and an `archived`
    /// lifecycle event is emitted per moved session when a bus is given.
    pub fn execute(self, bus: Option<&EventBus>) -> ArchiveReport {
        let mut report = self.report;
        report.dry_run = false;
        if report.actions.is_empty() {
            return report;
        }
        let dir = report.sessions_dir.clone();
        let archive_dir = report.archive_dir.clone();
        let (log, mut audit) = match start_audit(&dir) {
            Ok(started) => started,
            Err((summary, error)) => {
                for a in &mut report.actions {
                    report.live_bytes_after += a.size_bytes;
                    a.outcome = Outcome::Failed {
                        error: error.clone(),
                    };
                }
                report.audit = Some(summary);
                return report;
            }
        };
        for a in &mut report.actions {
            if let Some(e) = &audit.error {
                report.live_bytes_after += a.size_bytes;
                a.outcome = not_attempted(e);
                continue;
            }
            let path = dir.join(&a.file);
            let locks = match lock_and_recheck(&path, &a.check) {
                Ok(guard) => guard,
                Err(reason) => {
                    report.live_bytes_after += a.size_bytes;
                    a.outcome = Outcome::Skipped { reason };
                    continue;
                }
            };
            match archive_one(&dir, &archive_dir, &a.file, &a.destination) {
                Ok(dest) => {
                    a.destination = dest;
                    a.outcome = Outcome::Archived;
                    record(
                        &log,
                        &mut audit,
                        AuditRecord {
                            time: crate::audit::now_iso(),
                            action: AuditAction::Archive,
                            file: a.file.clone(),
                            destination: Some(a.destination.clone()),
                            session_id: a.session_id.clone(),
                            reason: match a.reason {
                                ArchiveReason::MaxAge { .. } => "max-age",
                                ArchiveReason::MaxSize => "max-size",
                            }
                            .to_owned(),
                            bytes: a.size_bytes,
                        },
                    );
                    a.aliases =
                        remove_aliases(locks.as_ref(), &a.file, &a.session_id, &log, &mut audit);
                    emit(
                        bus,
                        &report.agent_id,
                        &a.session_id,
                        a.session_key.as_deref(),
                        path,
                        Lifecycle::Archived {
                            archived_to: dir.join(&a.destination),
                        },
                    );
                }
                Err(e) => {
                    report.live_bytes_after += a.size_bytes;
                    a.outcome = failure_outcome(&path, &e);
                }
            }
        }
        report.audit = Some(audit);
        report
    }
}

/// The audit log of `dir`, checked, with an empty summary. When it cannot be used, the
/// summary saying why and the failure every action gets: nothing is moved or deleted without
/// its audit line.
#[allow(clippy::result_large_err)] // Once per run.
fn start_audit(dir: &Path) -> Result<(AuditLog, AuditSummary), (AuditSummary, String)> {
    match AuditLog::open(dir) {
        Ok(log) => {
            let summary = AuditSummary {
                log: log.path().to_path_buf(),
                records: Vec::new(),
                error: None,
            };
            Ok((log, summary))
        }
        Err(e) => {
            let error = e.to_string();
            Err((
                AuditSummary {
                    log: dir.join(crate::audit::AUDIT_LOG_NAME),
                    records: Vec::new(),
                    error: Some(error.clone()),
                },
                format!("not attempted: {error}"),
            ))
        }
    }
}

/// The outcome of an action not attempted because the audit log failed earlier in the run.
fn not_attempted(audit_error: &str) -> Outcome {
    Outcome::Failed {
        error: format!("not attempted: the audit log could not be written: {audit_error}"),
    }
}

/// Appends `record` to the log; a failure is kept in the summary (the run stops there).
fn record(log: &AuditLog, audit: &mut AuditSummary, record: AuditRecord) {
    match log.append(&record) {
        Ok(()) => audit.records.push(record),
        Err(e) => audit.error = Some(e.to_string()),
    }
}

fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

fn human_age(ms: i64) -> String {
    let m = ms.max(0) / 60_000;
    let (d, h, min) = (m / 1440, (m / 60) % 24, m % 60);
    if d > 0 {
        format!("{d}d {h}h")
    } else if h > 0 {
        format!("{h}h {min}m")
    } else {
        format!("{min}m")
    }
}

fn outcome_verb(o: &Outcome, dry: &'static str, done: &'static str) -> String {
    match o {
        Outcome::Planned => dry.to_owned(),
        Outcome::Archived | Outcome::Purged => done.to_owned(),
        Outcome::Skipped { reason } => format!("skipped ({reason}):"),
        Outcome::Failed { error } => format!("FAILED ({error}):"),
    }
}

impl fmt::Display for ArchiveReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} for agent {} in {} (now {}; max age {}, max size {})",
            if self.dry_run {
                "archive plan"
            } else {
                "archive"
            },
            self.agent_id,
            self.sessions_dir.display(),
            self.now,
            self.policy.max_age.as_deref().unwrap_or("off"),
            self.policy.max_size.as_deref().unwrap_or("off"),
        )?;
        for a in &self.actions {
            let why = match &a.reason {
                ArchiveReason::MaxAge { age_ms } => format!("{} old", human_age(*age_ms)),
                ArchiveReason::MaxSize => "over max size".to_owned(),
            };
            writeln!(
                f,
                "  {} {} -> {}  ({}, last activity {}, {})",
                outcome_verb(&a.outcome, "would archive", "archived"),
                a.file,
                a.destination,
                human_bytes(a.size_bytes),
                a.last_activity,
                why
            )?;
            write_aliases(f, &a.outcome, &a.aliases)?;
        }
        for s in &self.skipped {
            writeln!(f, "  left alone {}: {}", s.file, s.reason)?;
        }
        write!(
            f,
            "  live size {} -> {}; {} to archive, {} left alone",
            human_bytes(self.live_bytes_before),
            human_bytes(self.live_bytes_after),
            self.actions.len(),
            self.skipped.len()
        )?;
        write_audit(f, self.audit.as_ref())
    }
}

/// The aliases line under an action: `    alias L.jsonl: would be removed` / `removed`.
fn write_aliases(f: &mut fmt::Formatter<'_>, outcome: &Outcome, aliases: &[String]) -> fmt::Result {
    let verb = match outcome {
        Outcome::Planned => "would be removed (the link only)",
        Outcome::Archived | Outcome::Purged => "removed (the link only)",
        _ => return Ok(()),
    };
    for alias in aliases {
        writeln!(f, "    alias {alias}: {verb}")?;
    }
    Ok(())
}

/// The audit line of a report's text: `  audit log <path>: N lines appended` (and why it
/// stopped, when the log could not be written).
fn write_audit(f: &mut fmt::Formatter<'_>, audit: Option<&AuditSummary>) -> fmt::Result {
    let Some(a) = audit else {
        return Ok(());
    };
    write!(
        f,
        "\n  audit log {}: {} {} appended",
        a.log.display(),
        a.records.len(),
        if a.records.len() == 1 {
            "line"
        } else {
            "lines"
        }
    )?;
    if let Some(e) = &a.error {
        write!(f, "; FAILED: {e}; nothing more was moved or deleted")?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Clear

/// A session named by key or by file name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionRef {
    /// A session key (its agent id selects the directory).
    Key(SessionKey),
    /// A file in an agent's sessions directory.
    File {
        /// The agent.
        agent_id: String,
        /// The file name.
        name: String,
    },
}

impl SessionRef {
    /// Reads a reference as a CLI would: an `agent:` key; else a name ending in `.jsonl` (a
    /// file of `agent_id`); else a request key of `agent_id` (`main` → the main key,
    /// `telegram:direct:alice` → `agent:<agent_id>:telegram:direct:alice`).
    ///
    /// # Errors
    /// [`RetentionError::AgentMismatch`] for a key of another agent;
    /// [`RetentionError::BadSessionRef`] when nothing fits.
    pub fn parse(agent_id: &str, input: &str) -> Result<Self, RetentionError> {
        let bad = |reason: String| RetentionError::BadSessionRef {
            input: input.to_owned(),
            reason,
        };
        if input.trim().to_lowercase().starts_with("agent:") {
            let key = SessionKey::parse(input).map_err(|e| bad(e.to_string()))?;
            if key.agent_id() != agent_id {
                return Err(RetentionError::AgentMismatch {
                    key: key.to_string(),
                    key_agent: key.agent_id().to_owned(),
                    agent: agent_id.to_owned(),
                });
            }
            return Ok(SessionRef::Key(key));
        }
        if input.ends_with(SESSION_SUFFIX) {
            layout::validate_file_name(input).map_err(|e| bad(e.to_string()))?;
            return Ok(SessionRef::File {
                agent_id: agent_id.to_owned(),
                name: input.to_owned(),
            });
        }
        SessionKey::for_request(agent_id, input, None)
            .map(SessionRef::Key)
            .map_err(|e| bad(e.to_string()))
    }

    fn resolve(&self) -> Result<(String, String), RetentionError> {
        match self {
            SessionRef::Key(k) => Ok((k.agent_id().to_owned(), layout::file_name_for_key(k)?)),
            SessionRef::File { agent_id, name } => {
                layout::validate_file_name(name)?;
                Ok((agent_id.clone(), name.clone()))
            }
        }
    }
}

/// What [`clear`] applies to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClearTarget {
    /// One session.
    Session(SessionRef),
    /// Every session of an agent.
    Agent(String),
}

/// Archive (move into `archive/`) or purge (delete).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ClearMode {
    /// Move into the archive directory.
    Archive,
    /// Delete.
    Purge,
}

/// One session cleared.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClearAction {
    /// The file name.
    pub file: String,
    /// Where it goes (`archive/<name>`; none when purged).
    pub destination: Option<String>,
    /// The session key, when the name encodes one.
    pub session_key: Option<String>,
    /// The header's session id.
    pub session_id: String,
    /// File size.
    pub size_bytes: u64,
    /// The symlinks directly in the sessions directory that name this session, removed (the
    /// links only) once it is archived or deleted (as [`ArchiveAction::aliases`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// Planned, done, skipped or failed.
    #[serde(flatten)]
    pub outcome: Outcome,
    #[serde(skip)]
    check: FileStamp,
}

/// A dry-run or executed clear.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClearReport {
    /// The agent.
    pub agent_id: String,
    /// The sessions directory.
    pub sessions_dir: PathBuf,
    /// Archive or purge.
    pub mode: ClearMode,
    /// True when nothing was changed.
    pub dry_run: bool,
    /// The agent's live sessions before the run (see [`MassSweep::live_sessions`]): counted
    /// when every session of the agent is cleared, else 0.
    pub live_sessions: usize,
    /// Set when clearing every session of the agent would move or delete more than half of
    /// them (a single named session is never a mass sweep).
    pub mass_sweep: Option<MassSweep>,
    /// The sessions cleared.
    pub actions: Vec<ClearAction>,
    /// Files left alone.
    pub skipped: Vec<Skipped>,
    /// What was written to the audit log (executed runs only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audit: Option<AuditSummary>,
}

/// A planned clear: [`ClearPlan::report`] is the dry run, [`ClearPlan::execute`] performs it.
#[derive(Clone, Debug)]
pub struct ClearPlan {
    report: ClearReport,
}

impl ClearPlan {
    /// The dry-run report.
    pub fn report(&self) -> &ClearReport {
        &self.report
    }
}

/// Clears one session or all of an agent: archives them (or deletes them with
/// [`ClearMode::Purge`]); with `dry_run`, only reports. The same files are left alone as for
/// [`plan_archive`] (a session without activity time is cleared all the same). This is
/// [`plan_clear`] followed, unless `dry_run`, by [`ClearPlan::execute`]; it does not refuse a
/// mass sweep (callers that guard against one plan first and look at
/// [`ClearReport::mass_sweep`]).
///
/// # Errors
/// As [`plan_clear`].
pub fn clear(
    layout: &StoreLayout,
    target: &ClearTarget,
    mode: ClearMode,
    dry_run: bool,
    bus: Option<&EventBus>,
) -> Result<ClearReport, RetentionError> {
    let plan = plan_clear(layout, target, mode)?;
    Ok(if dry_run {
        plan.report
    } else {
        plan.execute(bus)
    })
}

/// Plans a clear (see [`clear`]): which files would be archived or deleted, which are left
/// alone, and for a whole agent its live sessions and whether this is a [`MassSweep`].
///
/// # Errors
/// [`RetentionError::NotFound`] when a single named session does not exist;
/// [`RetentionError::Path`] for a bad agent id, name or key; [`RetentionError::ReadDir`];
/// [`RetentionError::ArchiveDir`] when `archive` exists but is not a real directory.
pub fn plan_clear(
    layout: &StoreLayout,
    target: &ClearTarget,
    mode: ClearMode,
) -> Result<ClearPlan, RetentionError> {
    let (agent_id, only) = match target {
        ClearTarget::Session(r) => {
            let (a, n) = r.resolve()?;
            (a, Some(n))
        }
        ClearTarget::Agent(a) => (a.clone(), None),
    };
    let mut report = ClearReport {
        agent_id: agent_id.clone(),
        sessions_dir: absolute(layout.sessions_dir(&agent_id)?),
        mode,
        dry_run: true,
        live_sessions: 0,
        mass_sweep: None,
        actions: Vec::new(),
        skipped: Vec::new(),
        audit: None,
    };
    let Some(dir) = sessions_dir(layout, &agent_id)? else {
        return match only {
            Some(name) => Err(RetentionError::NotFound {
                name,
                dir: report.sessions_dir,
            }),
            None => Ok(ClearPlan { report }),
        };
    };
    report.sessions_dir = dir.clone();
    let archive_dir = dir.join(ARCHIVE_DIR_NAME);
    if mode == ClearMode::Archive {
        check_archive_dir(&archive_dir)?;
    }
    let scans = match &only {
        Some(name) => {
            if std::fs::symlink_metadata(dir.join(name)).is_err() {
                return Err(RetentionError::NotFound {
                    name: name.clone(),
                    dir,
                });
            }
            // A name that is a symlink to another session of the directory is that session
            // (one identity): it is cleared under its own name.
            match inspect(&agent_id, &dir, name) {
                Scan::Skip(
                    Skipped {
                        reason: SkipReason::Alias { of },
                        ..
                    },
                    _,
                ) => vec![inspect(&agent_id, &dir, &of)],
                scan => vec![scan],
            }
        }
        None => scan_dir(&agent_id, &dir)?,
    };
    let mut taken = Vec::new();
    for scan in scans {
        let c = match scan {
            Scan::Live(c) => c,
            Scan::Skip(
                Skipped {
                    file,
                    reason: SkipReason::NoActivityTime,
                },
                _,
            ) => match session_info_candidate(&agent_id, &dir, &file) {
                Some(c) => c,
                None => continue,
            },
            Scan::Skip(s, _) => {
                report.skipped.push(s);
                continue;
            }
        };
        let destination = match mode {
            ClearMode::Purge => None,
            ClearMode::Archive => match fsops::free_name(&archive_dir, &c.name, &taken) {
                Some(d) => {
                    taken.push(d.clone());
                    Some(format!("{ARCHIVE_DIR_NAME}/{d}"))
                }
                None => {
                    report.skipped.push(Skipped {
                        file: c.name,
                        reason: SkipReason::UnsafeName {
                            error: "no free archive name within 255 bytes".to_owned(),
                        },
                    });
                    continue;
                }
            },
        };
        let aliases = alias_names_of(&dir, &c.name);
        report.actions.push(ClearAction {
            file: c.name,
            destination,
            session_key: c.key.map(|k| k.to_string()),
            session_id: c.session_id,
            size_bytes: c.stamp.size,
            aliases,
            outcome: Outcome::Planned,
            check: c.stamp,
        });
    }
    if only.is_none() {
        report.live_sessions = report.actions.len()
            + report
                .skipped
                .iter()
                .filter(|s| s.reason.is_live_session())
                .count();
        report.mass_sweep = MassSweep::judge(report.actions.len(), report.live_sessions);
    }
    Ok(ClearPlan { report })
}

impl ClearPlan {
    /// Performs the plan: each file is re-checked (still a regular file with the planned size
    /// and mtime, not locked) and archived or deleted, and its audit line appended
    /// ([`crate::audit`]; when the log cannot be written, nothing more is touched); outcomes
    /// are recorded per action, and a lifecycle event is emitted per session when a bus is
    /// given.
    pub fn execute(self, bus: Option<&EventBus>) -> ClearReport {
        let mut report = self.report;
        report.dry_run = false;
        if report.actions.is_empty() {
            return report;
        }
        let dir = report.sessions_dir.clone();
        let archive_dir = dir.join(ARCHIVE_DIR_NAME);
        let mode = report.mode;
        let (log, mut audit) = match start_audit(&dir) {
            Ok(started) => started,
            Err((summary, error)) => {
                for a in &mut report.actions {
                    a.outcome = Outcome::Failed {
                        error: error.clone(),
                    };
                }
                report.audit = Some(summary);
                return report;
            }
        };
        for a in &mut report.actions {
            if let Some(e) = &audit.error {
                a.outcome = not_attempted(e);
                continue;
            }
            let path = dir.join(&a.file);
            let locks = match lock_and_recheck(&path, &a.check) {
                Ok(guard) => guard,
                Err(reason) => {
                    a.outcome = Outcome::Skipped { reason };
                    continue;
                }
            };
            let result = match (&a.destination, mode) {
                (Some(dest), ClearMode::Archive) => archive_one(&dir, &archive_dir, &a.file, dest)
                    .map(|d| {
                        a.destination = Some(d.clone());
                        Lifecycle::Archived {
                            archived_to: dir.join(d),
                        }
                    }),
                _ => fsops::delete_file(&path).map(|()| Lifecycle::Deleted),
            };
            match result {
                Ok(lifecycle) => {
                    a.outcome = if mode == ClearMode::Purge {
                        Outcome::Purged
                    } else {
                        Outcome::Archived
                    };
                    record(
                        &log,
                        &mut audit,
                        AuditRecord {
                            time: crate::audit::now_iso(),
                            action: match mode {
                                ClearMode::Archive => AuditAction::Archive,
                                ClearMode::Purge => AuditAction::Delete,
                            },
                            file: a.file.clone(),
                            destination: a.destination.clone(),
                            session_id: a.session_id.clone(),
                            reason: "clear".to_owned(),
                            bytes: a.size_bytes,
                        },
                    );
                    a.aliases =
                        remove_aliases(locks.as_ref(), &a.file, &a.session_id, &log, &mut audit);
                    emit(
                        bus,
                        &report.agent_id,
                        &a.session_id,
                        a.session_key.as_deref(),
                        path,
                        lifecycle,
                    );
                }
                Err(e) => a.outcome = failure_outcome(&path, &e),
            }
        }
        report.audit = Some(audit);
        report
    }
}

/// A session without activity time still qualifies for `clear`.
fn session_info_candidate(agent_id: &str, dir: &Path, name: &str) -> Option<Candidate> {
    let path = dir.join(name);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    let info = session_store::session_info(&path)?;
    Some(Candidate {
        name: name.to_owned(),
        key: layout::key_for_file_name(agent_id, name),
        session_id: info.id,
        modified_ms: 0,
        stamp: stamp_of(&meta),
    })
}

impl fmt::Display for ClearReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "clear ({}{}) for agent {} in {}",
            match self.mode {
                ClearMode::Archive => "archive",
                ClearMode::Purge => "purge",
            },
            if self.dry_run { ", dry run" } else { "" },
            self.agent_id,
            self.sessions_dir.display()
        )?;
        for a in &self.actions {
            let (dry, done) = match self.mode {
                ClearMode::Archive => ("would archive", "archived"),
                ClearMode::Purge => ("would delete", "deleted"),
            };
            write!(f, "  {} {}", outcome_verb(&a.outcome, dry, done), a.file)?;
            if let Some(d) = &a.destination {
                write!(f, " -> {d}")?;
            }
            writeln!(f, "  ({})", human_bytes(a.size_bytes))?;
            write_aliases(f, &a.outcome, &a.aliases)?;
        }
        for s in &self.skipped {
            writeln!(f, "  left alone {}: {}", s.file, s.reason)?;
        }
        write!(
            f,
            "  {} session(s), {} left alone",
            self.actions.len(),
            self.skipped.len()
        )?;
        write_audit(f, self.audit.as_ref())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // Tests fail loudly by design.

    use super::*;

    /// Two archive runs planned over the same files: when the other run (or anything that does
    /// not take the write lock) moves the source between this run's re-check and its move, the
    /// move fails with `ENOENT`; that is a vanished file, skipped, not a failure.
    #[test]
    fn a_move_whose_source_vanished_is_skipped_not_failed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let archive_dir = dir.join(ARCHIVE_DIR_NAME);
        let err = archive_one(dir, &archive_dir, "a.jsonl", "archive/a.jsonl").unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
        assert_eq!(
            failure_outcome(&dir.join("a.jsonl"), &err),
            Outcome::Skipped {
                reason: SkipReason::Vanished
            }
        );
        assert!(std::fs::read_dir(&archive_dir).unwrap().next().is_none());

        // The source is still there: a `NotFound` about something else is a failure.
        session_store::io::write_raw(&dir.join("b.jsonl"), b"x\n").unwrap();
        let other = std::io::Error::new(std::io::ErrorKind::NotFound, "archive directory gone");
        assert_eq!(
            failure_outcome(&dir.join("b.jsonl"), &other),
            Outcome::Failed {
                error: "archive directory gone".to_owned()
            }
        );
        let denied = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied");
        assert_eq!(
            failure_outcome(&dir.join("a.jsonl"), &denied),
            Outcome::Failed {
                error: "denied".to_owned()
            }
        );
    }
}
