//! `cleanStaleLockFiles`: find (and optionally remove) stale `*.jsonl.lock` files in a sessions
//! directory.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::payload::{Judge, Removal, inspect, mtime_age, read_snapshot, remove_if_unchanged};
use super::{MALFORMED_LOCK_GRACE, SessionWriteLock, StaleReason};

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
    /// Whether this call removed it.
    pub removed: bool,
}

impl LockFileInfo {
    /// Whether any stale reason applies.
    pub fn is_stale(&self) -> bool {
        !self.stale_reasons.is_empty()
    }
}

/// Looks at every regular file named `*.jsonl.lock` in `sessions_dir` (sorted by name) and
/// reports its owner and stale reasons, as the reference's `cleanStaleLockFiles`; with `remove`,
/// deletes the ones that may be reclaimed:
/// - a dead or recycled pid, or our own pid with our own start time while this process does not
///   hold the lock (`orphan-self-pid`; a lock of our pid without `starttime` is not assumed to be
///   an orphan here);
/// - a malformed payload (only `missing-pid` / `invalid-createdAt`) whose mtime is older than
///   `min(stale, 30 s)`;
/// - never a lock whose live holder merely holds it for long (`too-old` / `hold-exceeded`
///   alone): those are reported, not removed.
///
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
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if is_file && entry.file_name().to_string_lossy().ends_with(".jsonl.lock") {
            locks.push(entry.path());
        }
    }
    locks.sort();
    let mut out = Vec::with_capacity(locks.len());
    for lock_path in locks {
        let Some(snapshot) = read_snapshot(&lock_path)? else {
            continue;
        };
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
        let removable = !judged.reasons.is_empty()
            && !held_here
            && !judged.report_only()
            && (!judged.needs_mtime_fallback()
                || mtime_age(&snapshot).is_none_or(|age| age > stale.min(MALFORMED_LOCK_GRACE)));
        let mut removed = false;
        if remove && removable && remove_if_unchanged(&lock_path, &snapshot)? == Removal::Removed {
            removed = true;
            tracing::warn!(
                "removed stale session lock: {} ({})",
                lock_path.display(),
                super::join_reasons(&judged.reasons)
            );
        }
        out.push(LockFileInfo {
            pid: judged.pid_u64(),
            pid_alive: judged.pid_alive,
            created_at: judged.created_at.clone(),
            age_ms: judged.age_ms,
            stale_reasons: judged.reasons,
            removed,
            lock_path,
        });
    }
    Ok(out)
}

fn held_by_this_process(lock_path: &Path) -> bool {
    let Some(session_file) = lock_path.to_str().and_then(|s| s.strip_suffix(".lock")) else {
        return false;
    };
    SessionWriteLock::for_file(session_file).is_ok_and(|l| super::held::is_held_in_process(&l))
}
