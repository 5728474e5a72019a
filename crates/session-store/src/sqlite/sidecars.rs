//! The `-wal` and `-shm` files that a read-only open of a WAL-mode database may create
//! (`openclaw-sqlite.md` §1.5 rule 3), and removing them again; the rules are in
//! [`SidecarCleanup`]'s docs.

use std::path::{Path, PathBuf};

/// What happened to the sidecars a store found or created
/// ([`SqliteStore::close`](super::SqliteStore::close)). Sidecars that neither existed before
/// the open nor were created by it are not listed.
///
/// SQLite (3.54.1, and the bundled one here) creates `<db>-wal` and `<db>-shm` when a
/// read-only connection first reads a WAL-mode database that has neither, and leaves them after
/// closing. They hold nothing (the `-wal` stays 0 bytes: a read-only connection never writes
/// frames) and OpenClaw does not mind them, but a reader should leave the directory as it found
/// it. So [`SqliteStore::open_with`](super::SqliteStore::open_with) records which sidecars
/// existed before it opened the file and the identity (device and inode) of each one its first
/// read created; when the store is dropped or [closed](super::SqliteStore::close), after its
/// connection is closed, each sidecar **this store created** is removed when all of these hold:
///
/// - it is still the file the open created (same device and inode);
/// - the `-wal`, if present, is 0 bytes (no committed transaction can be lost);
/// - no process (this one included: another connection of ours counts) has the database, its
///   `-wal` or its `-shm` open, judged by the `/proc/<pid>/fd/*` links on Linux.
///
/// A sidecar that existed before the open is never touched. On systems other than Linux the
/// process check is not possible, so created sidecars are left in place and reported as
/// [`KeptBecause::Unsupported`].
///
/// Limits of the check: processes whose descriptor table cannot be read (other users'
/// processes, without privileges) are not seen, and neither is a process that opens the
/// database in the microseconds between the scan and the removal. Such a process could be left
/// using the removed `-shm` while a later one creates a new one. The window is the time of two
/// `unlink` calls, and the files removed hold nothing (0-byte `-wal`); a live OpenClaw that
/// already has the database open is always seen and its sidecars kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SidecarCleanup {
    /// The sidecars this store created and removed again.
    pub removed: Vec<PathBuf>,
    /// The sidecars left in place, each with the reason.
    pub kept: Vec<(PathBuf, KeptBecause)>,
}

/// Why a sidecar was left in place ([`SidecarCleanup::kept`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeptBecause {
    /// It existed before the store opened the database: never ours to remove.
    PreExisting,
    /// A process has the database or one of its sidecars open (`pid`; this process's own id
    /// when another connection of ours holds it).
    InUse {
        /// The first process found.
        pid: u32,
    },
    /// The `-wal` is not empty: it may hold committed transactions.
    WalNotEmpty {
        /// Its length in bytes.
        len: u64,
    },
    /// The file at the path is no longer the one the open created (removed or replaced by
    /// another process).
    Replaced,
    /// Not Linux: whether another process uses the database cannot be checked.
    Unsupported,
    /// The check or the removal failed (`/proc` unreadable, an I/O error).
    Failed {
        /// What failed.
        message: String,
    },
}

/// One sidecar's state between open and cleanup.
#[derive(Debug)]
struct Sidecar {
    path: PathBuf,
    existed: bool,
    /// `(dev, ino)` of the file the open created.
    created: Option<(u64, u64)>,
}

/// The sidecar bookkeeping of one store; cleans up on drop (after the connection, which is
/// declared before it in [`SqliteStore`](super::SqliteStore)).
#[derive(Debug)]
pub(crate) struct Sidecars {
    db: PathBuf,
    wal: Sidecar,
    shm: Sidecar,
    done: bool,
}

/// `path` with `suffix` appended to its last component (`<db>-wal`).
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// `(dev, ino)` of the file at `path` (not following a final symlink), if any.
fn identity(path: &Path) -> Option<(u64, u64)> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        Some((0, 0))
    }
}

impl Sidecars {
    /// Records which sidecars of `db` exist, before any connection opens it.
    pub(crate) fn before_open(db: &Path) -> Sidecars {
        let side = |suffix| {
            let path = with_suffix(db, suffix);
            Sidecar {
                existed: std::fs::symlink_metadata(&path).is_ok(),
                path,
                created: None,
            }
        };
        Sidecars {
            db: db.to_path_buf(),
            wal: side("-wal"),
            shm: side("-shm"),
            done: false,
        }
    }

    /// Records the identity of each sidecar that exists now but did not before the open
    /// (called after the connection's first read).
    pub(crate) fn note_created(&mut self) {
        for side in [&mut self.wal, &mut self.shm] {
            if !side.existed && side.created.is_none() {
                side.created = identity(&side.path);
            }
        }
    }

    /// Removes the sidecars this store created when the rules of [`SidecarCleanup`] allow it. Call only after the store's connection is closed. Runs once.
    pub(crate) fn cleanup(&mut self) -> SidecarCleanup {
        let mut report = SidecarCleanup::default();
        if std::mem::replace(&mut self.done, true) {
            return report;
        }
        let mut ours = Vec::new();
        for side in [&self.wal, &self.shm] {
            if side.existed {
                report
                    .kept
                    .push((side.path.clone(), KeptBecause::PreExisting));
            } else if let Some(id) = side.created {
                ours.push((side, id));
            }
        }
        if ours.is_empty() {
            return report;
        }
        let verdict = self.may_remove();
        for (side, id) in ours {
            let reason = match &verdict {
                Err(reason) => Some(reason.clone()),
                Ok(()) if identity(&side.path) != Some(id) => Some(KeptBecause::Replaced),
                Ok(()) => match std::fs::remove_file(&side.path) {
                    Ok(()) => None,
                    Err(e) => Some(KeptBecause::Failed {
                        message: format!("cannot remove {}: {e}", side.path.display()),
                    }),
                },
            };
            match reason {
                None => report.removed.push(side.path.clone()),
                Some(reason) => report.kept.push((side.path.clone(), reason)),
            }
        }
        report
    }

    /// Whether the created sidecars may go: the `-wal` is empty and nobody has the files open.
    fn may_remove(&self) -> Result<(), KeptBecause> {
        match std::fs::symlink_metadata(&self.wal.path) {
            Ok(meta) if meta.len() != 0 => {
                return Err(KeptBecause::WalNotEmpty { len: meta.len() });
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(KeptBecause::Failed {
                    message: format!("cannot stat {}: {e}", self.wal.path.display()),
                });
            }
        }
        in_use(&self.db)
    }
}

impl Drop for Sidecars {
    fn drop(&mut self) {
        let report = self.cleanup();
        if !report.removed.is_empty() || !report.kept.is_empty() {
            tracing::debug!(db = %self.db.display(), ?report, "sqlite sidecars after close");
        }
    }
}

/// Whether any process has `db`, `<db>-wal` or `<db>-shm` open (Linux: `/proc/*/fd`).
#[cfg(target_os = "linux")]
fn in_use(db: &Path) -> Result<(), KeptBecause> {
    let failed = |what: &str, e: std::io::Error| KeptBecause::Failed {
        message: format!("{what}: {e}"),
    };
    let canonical = std::fs::canonicalize(db).map_err(|e| failed(&db.display().to_string(), e))?;
    let targets = [
        with_suffix(&canonical, "-wal"),
        with_suffix(&canonical, "-shm"),
        canonical,
    ];
    let procs = std::fs::read_dir("/proc").map_err(|e| failed("/proc", e))?;
    for proc in procs.flatten() {
        let Some(pid) = proc
            .file_name()
            .to_str()
            .and_then(|name| name.parse::<u32>().ok())
        else {
            continue;
        };
        // A process we may not inspect, or one that exited meanwhile, is skipped.
        let Ok(fds) = std::fs::read_dir(proc.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if let Ok(target) = std::fs::read_link(fd.path())
                && targets.contains(&target)
            {
                return Err(KeptBecause::InUse { pid });
            }
        }
    }
    Ok(())
}

/// Not Linux: whether another process uses the database cannot be checked, so nothing goes.
#[cfg(not(target_os = "linux"))]
fn in_use(_db: &Path) -> Result<(), KeptBecause> {
    Err(KeptBecause::Unsupported)
}

impl super::SqliteStore {
    /// Closes the connection, then removes the `-wal`/`-shm` this store's open created, as
    /// [`SidecarCleanup`] says, and reports what happened to each sidecar. Dropping the store
    /// does the same without the report.
    ///
    /// # Errors
    /// [`SqliteError::Query`](super::SqliteError::Query) (what = `"close"`) when SQLite cannot
    /// close the connection; the sidecars are then still cleaned up as on drop.
    pub fn close(self) -> Result<SidecarCleanup, super::SqliteError> {
        let super::SqliteStore {
            conn,
            path,
            mut sidecars,
            ..
        } = self;
        conn.close()
            .map_err(|(_conn, source)| super::SqliteError::Query {
                path,
                what: "close".to_owned(),
                source,
            })?;
        Ok(sidecars.cleanup())
    }
}
