//! What a session file looked like when it was last read or written: its
//! [`SessionFileSnapshot`] `{dev, ino, size, mtime_ns, ctime_ns}` (openclaw-jsonl.md §3.1; no
//! content hash, two snapshots are equal when all five fields are), the result of re-reading a
//! file after a write ([`SnapshotSync`], §3.3), and the owned write context a caller may attach to
//! a manager ([`WriteOwner`], §3.4).

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use session_format::json::{JsObject, JsValue};

/// The identity and state of a session file: device, inode, size and the two change times in
/// nanoseconds (`stat` with `bigint: true` in the reference), plus (beyond the reference) the
/// birth time where the file system reports one, so that a file deleted and created again on a
/// reused inode number is not taken for the old one. Equal snapshots mean "nothing happened to
/// the file" as far as the file system reports it.
///
/// Invariants:
/// - a snapshot is taken with `stat` (by path) or `fstat` (of a descriptor); both give the same
///   fields for the same inode;
/// - "the same file" means the same `dev` and `ino`, and the same birth time where the file
///   system reports one: a file replaced by a rename, or deleted and created again (even on a
///   reused inode number), is another file even when its bytes are equal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SessionFileSnapshot {
    /// Device id (`st_dev`).
    pub dev: u64,
    /// Inode number (`st_ino`).
    pub ino: u64,
    /// Size in bytes (`st_size`).
    pub size: u64,
    /// Last modification, nanoseconds since the epoch (`st_mtim`).
    pub mtime_ns: i128,
    /// Last status change, nanoseconds since the epoch (`st_ctim`).
    pub ctime_ns: i128,
    /// Creation, nanoseconds since the epoch (`statx` `stx_btime`), when the file system
    /// reports it.
    pub birth_ns: Option<i128>,
}

fn birth_ns(meta: &fs::Metadata) -> Option<i128> {
    let t = meta.created().ok()?;
    Some(match t.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    })
}

impl SessionFileSnapshot {
    /// The snapshot of a file's metadata.
    #[cfg(unix)]
    pub fn of(meta: &fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
        SessionFileSnapshot {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
            birth_ns: birth_ns(meta),
        }
    }

    /// The snapshot of a file's metadata (no device or inode numbers on this platform: only
    /// size and modification time are compared).
    #[cfg(not(unix))]
    pub fn of(meta: &fs::Metadata) -> Self {
        let ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i128);
        SessionFileSnapshot {
            dev: 0,
            ino: 0,
            size: meta.len(),
            mtime_ns: ns,
            ctime_ns: ns,
            birth_ns: birth_ns(meta),
        }
    }

    /// `stat`s `path` (following symlinks): `None` when nothing exists there.
    ///
    /// # Errors
    /// Any `stat` failure other than "not found".
    pub fn stat(path: &Path) -> io::Result<Option<Self>> {
        match fs::metadata(path) {
            Ok(m) => Ok(Some(Self::of(&m))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Same device and inode (and birth time, when both are known): the same file, whatever
    /// happened to its bytes.
    pub fn same_file(&self, other: &SessionFileSnapshot) -> bool {
        self.dev == other.dev
            && self.ino == other.ino
            && (self.birth_ns.is_none()
                || other.birth_ns.is_none()
                || self.birth_ns == other.birth_ns)
    }
}

/// What re-reading a file after a write found (`rememberWrittenSessionEntries`,
/// openclaw-jsonl.md §3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SnapshotSync {
    /// The file's snapshot after the check (`None`: no file at the path).
    pub snapshot: Option<SessionFileSnapshot>,
    /// The read was stable and the bytes were the expected ones (only when expected bytes were
    /// given). Only a verified write is published to a [`WriteOwner`].
    pub verified_write: bool,
    /// Two `stat`s around the read were equal (and the file was not over the warm cache's byte
    /// cap, which skips the read).
    pub stable_read: bool,
}

/// The owned write context of a session file (openclaw-jsonl.md §3.4): whoever holds the file's
/// write lock for this manager (a lock guard, a run's transcript writer) and wants to know the
/// file's snapshot after each write this manager makes under it.
///
/// A manager consults its owner only when the owner names the manager's file
/// ([`WriteOwner::session_file`], compared after resolving symlinks); otherwise the manager
/// behaves as if it had none. Implementations must not write to the session file from these
/// callbacks.
pub trait WriteOwner: fmt::Debug + Send + Sync {
    /// The session file this context owns (`None`: it matches no manager; the reference's
    /// session-key match does not apply to managers, which have no session key).
    fn session_file(&self) -> Option<PathBuf>;

    /// Asked once before each append with the manager's last snapshot of the file: may the
    /// warm cache advance past this append? Returning `false` makes the append drop the file's
    /// warm cache entry instead. Default: yes.
    fn can_advance_cache(&self, _before: &SessionFileSnapshot) -> bool {
        true
    }

    /// Called once after each verified write (an append whose before/after snapshots prove that
    /// only its bytes were added, or a full rewrite read back byte for byte) with the file's new
    /// snapshot. Returning `false` refuses the publication: the warm cache entry is dropped.
    /// Default: accepted.
    fn publish_snapshot(&self, _snapshot: &SessionFileSnapshot) -> bool {
        true
    }
}

/// The warm cache key of a path: its canonical file ([`crate::identity::FileIdentity`]: the
/// directory resolved with `realpath`, a symlinked name followed), `None` when nothing exists
/// there.
pub(crate) fn canonical(path: &Path) -> Option<PathBuf> {
    crate::identity::FileIdentity::resolve(path)
        .ok()
        .filter(crate::identity::FileIdentity::exists)
        .map(crate::identity::FileIdentity::into_canonical)
}

/// Test seams: a hook run after the read of every load of one path — between the read and the
/// second `stat` of the file store's stat-read-stat loads (the warm cache's loads,
/// [`crate::remember_written_entries`]), and right after
/// [`crate::Storage::read_snapshot`] on other storages — so a test can play a writer that
/// changes the session while it is being loaded (feature `test-util`:
/// [`crate::test_util::hooks`]).
pub(crate) mod hooks {
    use std::path::{Path, PathBuf};

    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Mutex, PoisonError};

    /// A hook: called with the 0-based attempt number.
    pub type AfterRead = Box<dyn FnMut(u32) + Send>;

    static ANY: AtomicBool = AtomicBool::new(false);
    static HOOKS: Mutex<Vec<(PathBuf, AfterRead)>> = Mutex::new(Vec::new());

    /// Installs (or with `None` removes) the hook for loads of `path` (as the manager resolves
    /// it: absolute, lexically normalised). A running hook cannot remove itself. Feature
    /// `test-util`.
    #[cfg(any(test, feature = "test-util"))]
    pub fn set_after_read(path: &Path, hook: Option<AfterRead>) {
        let mut hooks = HOOKS.lock().unwrap_or_else(PoisonError::into_inner);
        hooks.retain(|(p, _)| p != path);
        if let Some(h) = hook {
            hooks.push((path.to_path_buf(), h));
        }
        ANY.store(!hooks.is_empty(), Ordering::Release);
    }

    pub(crate) fn after_read(path: &Path, attempt: u32) {
        if !ANY.load(Ordering::Acquire) {
            return;
        }
        // Taken out while it runs, so the hook may itself install or remove hooks.
        let taken = {
            let mut hooks = HOOKS.lock().unwrap_or_else(PoisonError::into_inner);
            let at = hooks.iter().position(|(p, _)| p == path);
            at.map(|i| hooks.swap_remove(i))
        };
        if let Some((p, mut h)) = taken {
            h(attempt);
            let mut hooks = HOOKS.lock().unwrap_or_else(PoisonError::into_inner);
            if !hooks.iter().any(|(q, _)| *q == p) {
                hooks.push((p, h));
            }
        }
    }
}

/// The identity and state of a file as `stat` reports it (`{dev, ino, size, mtimeNs, ctimeNs}`
/// of the reference, which reads them as bigints). Two snapshots are equal when all five fields
/// are; there is no content hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RepairSnapshot {
    /// Device id.
    pub dev: u64,
    /// Inode number.
    pub ino: u64,
    /// Length in bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: i128,
    /// Status-change time, nanoseconds since the epoch.
    pub ctime_ns: i128,
}

impl RepairSnapshot {
    /// The snapshot of `path` now (symlinks followed).
    ///
    /// # Errors
    /// The `stat` failure.
    pub fn of(path: &Path) -> io::Result<Self> {
        fs::metadata(path).map(|m| Self::from_metadata(&m))
    }

    /// The snapshot described by `meta`.
    #[cfg(unix)]
    pub fn from_metadata(meta: &fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        Self {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
            ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
        }
    }

    /// The snapshot described by `meta` (no device or inode off Unix; ctime = mtime).
    #[cfg(not(unix))]
    pub fn from_metadata(meta: &fs::Metadata) -> Self {
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i128);
        Self {
            dev: 0,
            ino: 0,
            size: meta.len(),
            mtime_ns,
            ctime_ns: mtime_ns,
        }
    }

    pub(crate) fn same_file(&self, other: &Self) -> bool {
        self.dev == other.dev && self.ino == other.ino
    }

    pub(crate) fn to_js_value(self) -> JsValue {
        let mut o = JsObject::new();
        o.insert("dev", JsValue::from(self.dev.to_string()));
        o.insert("ino", JsValue::from(self.ino.to_string()));
        o.insert("size", JsValue::from(self.size.to_string()));
        o.insert("mtimeNs", JsValue::from(self.mtime_ns.to_string()));
        o.insert("ctimeNs", JsValue::from(self.ctime_ns.to_string()));
        JsValue::Object(o)
    }
}
