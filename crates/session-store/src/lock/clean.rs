//! `cleanStaleLockFiles`: find (and optionally remove) stale `*.jsonl.lock` files in a sessions
//! directory.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::payload::{
    Judge, Removal, Snapshot, inspect, mtime_age, read_snapshot, remove_stale_if_unchanged,
};
use super::{LockError, MALFORMED_LOCK_GRACE, NonRegularLock, SessionWriteLock, StaleReason};

/// One lock file found by [`clean_stale_lock_files`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct LockFileInfo {
    /// The lock file.
    pub lock_path: PathBuf,
    /// The payload's pid, when valid.
    pub pid: Option<u64>,
    /// Whether that pid is running.
    pub pid_alive: bool,
    /// The payload's `createdAt`, when it is a string.
    pub created_at: Option<String>,
    /// Milliseconds since `createdAt`, when it parses.
    pub age_ms: Option<u64>,
    /// Why it is stale (empty: live).
    pub stale_reasons: Vec<StaleReason>,
    /// Whether it may be reclaimed now (see [`clean_stale_lock_files`]): a dead or recycled
    /// holder, an orphan of our own pid, or a malformed payload older than its grace; never a
    /// lock this process holds, nor one whose live holder merely holds it for long
    /// (`too-old` / `hold-exceeded` alone). A lock that is not reclaimable is in use.
    pub reclaimable: bool,
    /// Whether this call removed it.
    pub removed: bool,
    /// Set when the lock path is not a lock file at all: a directory, FIFO, socket or device,
    /// or a symlink to one. Nothing there is opened or read; it is reported with the reasons
    /// of a lock without a payload (`missing-pid`, `invalid-createdAt`, as the reference
    /// reports it), is never [`LockFileInfo::reclaimable`] and is never removed: the session
    /// counts as locked until someone removes it by hand.
    pub not_regular: Option<NonRegularLock>,
}

impl LockFileInfo {
    /// Whether any stale reason applies.
    pub fn is_stale(&self) -> bool {
        !self.stale_reasons.is_empty()
    }

    /// Whether the lock is in use: not [`LockFileInfo::reclaimable`] (a writer would wait for
    /// it, or fail with [`super::LockError::Stale`] for a live holder that held it too long).
    pub fn is_held(&self) -> bool {
        !self.reclaimable
    }
}

/// Looks at every entry named `*.jsonl.lock` in `sessions_dir` (sorted by name), whatever its
/// type, and reports its owner and stale reasons, as the reference's `cleanStaleLockFiles`;
/// with `remove`, deletes the ones that may be reclaimed:
/// - a dead or recycled pid, or our own pid with our own start time while this process does not
///   hold the lock (`orphan-self-pid`; a lock of our pid without `starttime` is not assumed to be
///   an orphan here);
/// - a malformed payload (only `missing-pid` / `invalid-createdAt`) whose mtime is older than
///   `min(stale, 30 s)`;
/// - never a lock whose live holder merely holds it for long (`too-old` / `hold-exceeded`
///   alone): those are reported, not removed;
/// - never something that is not a lock file (a directory, FIFO, socket or device, or a
///   symlink to one; [`LockFileInfo::not_regular`]): reported as `missing-pid`,
///   `invalid-createdAt`, never opened, never removed.
///
/// Lock files are read as the lock itself reads them: never more than
/// [`super::MAX_LOCK_PAYLOAD_BYTES`] (a longer file is a malformed payload, judged by its
/// mtime), through a symlink for the payload (a symlink itself is what gets removed, never its
/// target; one whose target is missing is a lock without a payload).
/// A file is removed only while it is still the file that was judged (same inode and bytes).
/// Each removal is logged at `warn` as `removed stale session lock: <path> (<reasons>)`.
/// A missing directory gives an empty list.
///
/// # Errors
/// Reading the directory, or reading or removing a lock file, failed.
pub fn clean_stale_lock_files(
    sessions_dir: &Path,
    stale: Duration,
    remove: bool,
) -> io::Result<Vec<LockFileInfo>> {
    let entries = match fs::read_dir(sessions_dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut locks: Vec<PathBuf> = Vec::new();
    for entry in entries {
        let entry = entry?;
        if entry.file_name().to_string_lossy().ends_with(".jsonl.lock") {
            locks.push(entry.path());
        }
    }
    locks.sort();
    let mut out = Vec::with_capacity(locks.len());
    for lock_path in locks {
        if let Some(info) = clean_stale_lock_file(&lock_path, stale, remove)? {
            out.push(info);
        }
    }
    Ok(out)
}

/// One lock file (e.g. a session's `<file>.jsonl.lock`), judged and, with `remove`, deleted
/// when it may be reclaimed, by the rules of [`clean_stale_lock_files`]; `Ok(None)` when there
/// is no file at `lock_path`.
///
/// # Errors
/// Reading or removing the lock file failed.
pub fn clean_stale_lock_file(
    lock_path: &Path,
    stale: Duration,
    remove: bool,
) -> io::Result<Option<LockFileInfo>> {
    let Some(snapshot) = read_snapshot(lock_path)? else {
        return Ok(None);
    };
    let mut info = judge_file(lock_path.to_path_buf(), &snapshot, stale);
    if remove
        && info.reclaimable
        && remove_stale_if_unchanged(&info.lock_path, &snapshot)? == Removal::Removed
    {
        info.removed = true;
        tracing::warn!(
            "removed stale session lock: {} ({})",
            info.lock_path.display(),
            super::join_reasons(&info.stale_reasons)
        );
    }
    Ok(Some(info))
}

/// The lock file of `session_file` (`<canonical file>.lock`, as
/// [`SessionWriteLock::for_file`] names it: `realpath(dir)/<name>.lock`, a symlinked name
/// followed to its target), judged by the rules of [`clean_stale_lock_files`]
/// without removing anything: `Ok(None)` when there is no lock file. A lock this process holds
/// is live (`reclaimable` false), and so is anything at the lock path that is not a lock file
/// ([`LockFileInfo::not_regular`]: a directory, FIFO, socket or device, never opened). Use [`LockFileInfo::is_held`] to ask "may I move or delete
/// this session file now?".
///
/// # Errors
/// [`LockError::Io`] when the path has no file name or the lock file cannot be read (a caller
/// that must not disturb a writer should then treat the file as locked).
pub fn inspect_session_lock(
    session_file: &Path,
    stale: Duration,
) -> Result<Option<LockFileInfo>, LockError> {
    let lock = SessionWriteLock::for_file(session_file)?;
    let lock_path = lock.lock_path().to_path_buf();
    let snapshot = read_snapshot(&lock_path).map_err(|e| LockError::Io {
        path: lock_path.clone(),
        source: e,
    })?;
    Ok(snapshot.map(|s| judge_file(lock_path, &s, stale)))
}

/// The lock file at `lock_path` itself (e.g. an alias's lock,
/// [`super::SessionWriteLock::of_name`]), judged as [`inspect_session_lock`] judges a session's
/// lock; `Ok(None)` when there is none.
///
/// # Errors
/// [`LockError::Io`] when the lock file cannot be read.
pub fn inspect_lock_file(
    lock_path: &Path,
    stale: Duration,
) -> Result<Option<LockFileInfo>, LockError> {
    let snapshot = read_snapshot(lock_path).map_err(|e| LockError::Io {
        path: lock_path.to_path_buf(),
        source: e,
    })?;
    Ok(snapshot.map(|s| judge_file(lock_path.to_path_buf(), &s, stale)))
}

/// One lock file as read, judged with the cleaning rules (no `orphan-self-pid` without a
/// `starttime`, no `hold-exceeded`; a lock this process holds is never reclaimable).
fn judge_file(lock_path: PathBuf, snapshot: &Snapshot, stale: Duration) -> LockFileInfo {
    let held_here = held_by_this_process(&lock_path);
    let judged = inspect(
        snapshot.payload().as_ref(),
        &Judge {
            held_by_this_process: held_here,
            reclaim_without_starttime: false,
            respect_max_hold: false,
            stale,
            now_ms: session_format::ids::now_ms(),
        },
    );
    let not_regular = snapshot.not_regular();
    let reclaimable = !judged.reasons.is_empty()
        && not_regular.is_none()
        && !held_here
        && !judged.report_only()
        && (!judged.needs_mtime_fallback()
            || mtime_age(snapshot).is_none_or(|age| age > stale.min(MALFORMED_LOCK_GRACE)));
    LockFileInfo {
        pid: judged.pid_u64(),
        pid_alive: judged.pid_alive,
        created_at: judged.created_at.clone(),
        age_ms: judged.age_ms,
        stale_reasons: judged.reasons,
        reclaimable,
        removed: false,
        not_regular,
        lock_path,
    }
}

fn held_by_this_process(lock_path: &Path) -> bool {
    // Held locks are keyed by their canonical session file, the lock path minus `.lock`.
    let Some(session_file) = lock_path.to_str().and_then(|s| s.strip_suffix(".lock")) else {
        return false;
    };
    super::held::is_held_in_process(Path::new(session_file))
}
