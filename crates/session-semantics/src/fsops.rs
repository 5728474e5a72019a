//! The crate's file-system operations: moving a session file and deleting one (both done by
//! `session_store::io`, re-exported here as [`move_file`] and [`delete_file`]), preparing the
//! archive directory, and the lock-file check.
//!
//! The lock check looks at `realpath(dir)/<name>.lock` (OpenClaw's write-lock file,
//! openclaw-jsonl.md §1.10, §3.5; for a name that is a symlink, the lock of the file it leads
//! to, [`session_store::identity::FileIdentity`]) and judges it with `session_store::lock`'s rules
//! ([`session_store::lock::inspect_session_lock`]): a lock whose holder is alive (including a
//! live holder that has held it longer than the stale age, which writers do not reclaim either),
//! a lock this process holds, and a fresh malformed lock mean "in use"; a lock a writer would
//! reclaim (dead or recycled pid, an orphan of our own pid, a malformed payload older than its
//! grace) does not. Moves and deletes hold the lock themselves ([`lock_for_retire`]), so a
//! writer that respects the lock cannot start between the check and the move.
//!
//! A session is also in use when a lock of one of its **aliases** is (the symlinks
//! `L.jsonl -> s.jsonl` directly in its directory, [`session_store::identity::aliases_in`]):
//! OpenClaw 2026.6.11 locks the name it was given, `realpath(dir)/L.jsonl.lock`
//! (docs/DEVIATIONS.md D29 (1)), so a writer through `L.jsonl` holds that lock and not
//! `s.jsonl.lock`. The checks look at every alias's lock, and [`lock_for_retire`] takes them
//! all.

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use session_store::OutsideStore;
use session_store::lock::{
    LockError, LockOptions, NonRegularLock, SessionWriteLock, WriteLockGuard, inspect_lock_file,
    inspect_session_lock,
};

use crate::layout::LOCK_SUFFIX;

/// `realpath(dir)/<name>.lock` for a session file (its [`SessionWriteLock`]: a name that is a
/// symlink has the lock of the file it leads to).
///
/// # Errors
/// When the directory cannot be resolved or the path has no file name.
pub fn lock_file_of(path: &Path) -> io::Result<PathBuf> {
    if path.file_name().is_none() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "path has no file name",
        ));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::canonicalize(dir)?;
    SessionWriteLock::for_file(path)
        .map(|l| l.lock_path().to_path_buf())
        .map_err(|e| io::Error::other(e.to_string()))
}

/// The lock file of `path` when it holds the session in use (see the module docs), judged with
/// the stale age of [`LockOptions::from_env`] (30 min unless
/// `OPENCLAW_SESSION_WRITE_LOCK_STALE_MS` says otherwise); `None` when there is no lock file or
/// a writer would reclaim it. When the lock cannot be judged (its directory cannot be
/// resolved, or the lock file cannot be read), the file is treated as locked (`Some` of the
/// lock path, lexical when unresolved).
pub fn lock_holding(path: &Path) -> Option<PathBuf> {
    lock_holding_with(path, LockOptions::from_env().stale)
}

/// [`lock_holding`] with an explicit stale age (past which a live holder's lock is
/// `too-old`: reported, still in use).
pub fn lock_holding_with(path: &Path, stale: Duration) -> Option<PathBuf> {
    lock_status_with(path, stale).map(|busy| busy.lock)
}

/// A session file in use (see [`lock_status`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockBusy {
    /// The lock file (lexical `<path>.lock` when its directory cannot be resolved).
    pub lock: PathBuf,
    /// Set when the lock path holds a directory, FIFO, socket or device (or a symlink to
    /// one) instead of a lock file: nothing there was opened, and only its removal by hand
    /// frees the session.
    pub not_a_lock_file: Option<NonRegularLock>,
}

/// [`lock_holding`] with the reason: `None` when the session is free (no lock file, or one a
/// writer would reclaim).
pub fn lock_status(path: &Path) -> Option<LockBusy> {
    lock_status_with(path, LockOptions::from_env().stale)
}

/// [`lock_status`] with an explicit stale age: the file's own lock, then the lock of each of
/// its aliases in its directory (see the module docs).
pub fn lock_status_with(path: &Path, stale: Duration) -> Option<LockBusy> {
    if let Some(busy) = own_lock_status_with(path, stale) {
        return Some(busy);
    }
    alias_names(path)
        .iter()
        .find_map(|alias| alias_lock_status(alias, stale))
}

/// The symlinks directly in `path`'s directory that lead to the file `path` names.
fn alias_names(path: &Path) -> Vec<PathBuf> {
    let Ok(id) = session_store::FileIdentity::resolve(path) else {
        return Vec::new();
    };
    match id.canonical().parent() {
        Some(dir) => session_store::identity::aliases_in(dir, id.canonical()),
        None => Vec::new(),
    }
}

/// The lock of the name `alias` itself (`realpath(dir)/<alias>.lock`) when it is in use.
fn alias_lock_status(alias: &Path, stale: Duration) -> Option<LockBusy> {
    let lock = SessionWriteLock::of_name(alias).ok()?;
    let lock_path = lock.lock_path().to_path_buf();
    match inspect_lock_file(&lock_path, stale) {
        Ok(None) => None,
        Ok(Some(info)) => info.is_held().then_some(LockBusy {
            not_a_lock_file: info.not_regular,
            lock: info.lock_path,
        }),
        Err(_) => Some(LockBusy {
            lock: lock_path,
            not_a_lock_file: None,
        }),
    }
}

/// The file's own lock only ([`lock_status_with`] without the aliases).
fn own_lock_status_with(path: &Path, stale: Duration) -> Option<LockBusy> {
    let unresolved = || LockBusy {
        lock: lock_file_of(path).unwrap_or_else(|_| {
            let mut p = path.as_os_str().to_os_string();
            p.push(LOCK_SUFFIX);
            PathBuf::from(p)
        }),
        not_a_lock_file: None,
    };
    match lock_file_of(path) {
        Err(_) => Some(unresolved()),
        Ok(_) => match inspect_session_lock(path, stale) {
            Ok(None) => None,
            Ok(Some(info)) => info.is_held().then_some(LockBusy {
                not_a_lock_file: info.not_regular,
                lock: info.lock_path,
            }),
            Err(_) => Some(unresolved()),
        },
    }
}

/// Why [`lock_for_retire`] did not take the lock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RetireRefusal {
    /// The session is in use: its lock file (lexical `<path>.lock` when unresolved).
    Locked(PathBuf),
    /// The name is a symlink to a file outside its directory: no lock was taken (its lock file
    /// would land outside the store), and the file must not be moved or deleted through it.
    OutsideStore(OutsideStore),
}

impl RetireRefusal {
    /// Why, as a phrase for an error naming the file: `lock <lock file>`, or the symlink's
    /// target outside the directory.
    pub fn why(&self) -> String {
        match self {
            RetireRefusal::Locked(lock) => format!("lock {}", lock.display()),
            RetireRefusal::OutsideStore(o) => o.to_string(),
        }
    }
}

/// The write locks [`lock_for_retire`] holds while a session file is moved or deleted: its
/// own lock and the lock of each alias (released on drop).
#[derive(Debug)]
pub struct RetireLocks {
    own: WriteLockGuard,
    aliases: Vec<PathBuf>,
    _alias_guards: Vec<WriteLockGuard>,
    reclaimed: Vec<PathBuf>,
}

impl RetireLocks {
    /// The file's own lock file (`<canonical file>.lock`).
    pub fn lock_path(&self) -> &Path {
        self.own.lock_path()
    }

    /// The aliases whose locks are held too: the symlinks directly in the file's directory
    /// that lead to it, sorted (they dangle once the file is moved or deleted).
    pub fn aliases(&self) -> &[PathBuf] {
        &self.aliases
    }

    /// The stale lock files (a dead or recycled holder's) that were there when the locks were
    /// taken: they were reclaimed, and are gone once these locks are released.
    pub fn reclaimed(&self) -> &[PathBuf] {
        &self.reclaimed
    }
}

/// Whether a lock file (of any kind) is at `lock`.
fn lock_present(lock: &Path) -> bool {
    std::fs::symlink_metadata(lock).is_ok()
}

/// Takes the session write lock of `path` for moving or deleting it, and the lock of each of
/// its aliases (see the module docs):
/// [`RetireRefusal::Locked`] when the session is in use ([`lock_holding`], or another writer
/// holds the lock: one attempt, no waiting), [`RetireRefusal::OutsideStore`] for a symlink out
/// of its directory; otherwise the guard, held until the move or delete is done, so a writer that
/// respects the lock cannot start appending between the check and the move (that race is what
/// a plain [`lock_holding`] check leaves open). A stale lock (dead or recycled holder, old
/// malformed payload) is reclaimed on the way, as any writer would. `Ok(None)` when the lock
/// file cannot be created at all (e.g. a read-only directory, where the move fails by itself).
/// An alias lock in use refuses the whole session ([`RetireRefusal::Locked`] naming that
/// lock file).
///
/// # Errors
/// [`RetireRefusal`].
pub fn lock_for_retire(path: &Path) -> Result<Option<RetireLocks>, RetireRefusal> {
    if let Ok(id) = session_store::FileIdentity::resolve(path) {
        id.check_own_root().map_err(RetireRefusal::OutsideStore)?;
    }
    if let Some(lock) = lock_holding(path) {
        return Err(RetireRefusal::Locked(lock));
    }
    let options = LockOptions::from_env().with_timeout(Some(Duration::ZERO));
    let mut reclaimed = Vec::new();
    let own_lock = lock_file_of(path).ok().filter(|l| lock_present(l));
    let own = match SessionWriteLock::acquire(path, &options) {
        Ok(guard) => guard,
        Err(LockError::Io { .. }) => return Ok(None),
        Err(LockError::OutsideStore(o)) => return Err(RetireRefusal::OutsideStore(o)),
        Err(e) => return Err(RetireRefusal::Locked(e.lock_path().to_path_buf())),
    };
    reclaimed.extend(own_lock);
    // Under the file's own lock, the aliases found now are the ones a move would leave
    // dangling: each one's lock is taken too (one attempt), so a writer through an alias
    // cannot start before the move either.
    let aliases = alias_names(path);
    let mut alias_guards = Vec::with_capacity(aliases.len());
    for alias in &aliases {
        let lock = SessionWriteLock::of_name(alias)
            .map_err(|e| RetireRefusal::Locked(e.lock_path().to_path_buf()))?;
        let stale = lock_present(lock.lock_path()).then(|| lock.lock_path().to_path_buf());
        match lock.acquire_this(&options) {
            Ok(guard) => {
                alias_guards.push(guard);
                reclaimed.extend(stale);
            }
            Err(LockError::Io { .. }) => {}
            Err(e) => return Err(RetireRefusal::Locked(e.lock_path().to_path_buf())),
        }
    }
    Ok(Some(RetireLocks {
        own,
        aliases,
        _alias_guards: alias_guards,
        reclaimed,
    }))
}

fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Moving a session file without replacing anything and deleting one are file writes, so they
/// live in `session_store::io` with every other write; these are their names here.
pub use session_store::io::{move_no_replace as move_file, remove_file_synced as delete_file};

/// Creates `<sessions dir>/archive` when missing and checks that it is a real directory (not a
/// symlink, not a file).
///
/// # Errors
/// [`io::ErrorKind::InvalidInput`] when the path exists as something else; creation failures.
pub fn ensure_real_dir(dir: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(m) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} exists and is {}, not a directory",
                dir.display(),
                if m.file_type().is_symlink() {
                    "a symlink"
                } else {
                    "something else"
                }
            ),
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            session_store::io::ensure_dir(dir)?;
            session_store::io::fsync_dir(dir_of(dir))
        }
        Err(e) => Err(e),
    }
}

/// A free name for `name` in `dir`: `name` itself, else `<stem>~1.jsonl`, `<stem>~2.jsonl`, …
/// (skipping names in `taken`). `None` when every candidate would exceed 255 bytes.
pub fn free_name(dir: &Path, name: &str, taken: &[String]) -> Option<String> {
    let (stem, ext) = match name.strip_suffix(crate::layout::SESSION_SUFFIX) {
        Some(stem) => (stem, crate::layout::SESSION_SUFFIX),
        None => (name, ""),
    };
    for n in 0u32.. {
        let candidate = if n == 0 {
            name.to_owned()
        } else {
            format!("{stem}~{n}{ext}")
        };
        if candidate.len() > crate::layout::MAX_FILE_NAME_BYTES {
            return None;
        }
        let free = !taken.contains(&candidate)
            && matches!(std::fs::symlink_metadata(dir.join(&candidate)), Err(e) if e.kind() == io::ErrorKind::NotFound);
        if free {
            return Some(candidate);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use std::process::{Child, Command, Stdio};
    use std::time::SystemTime;

    use session_store::lock::{LockOptions, SessionWriteLock};

    use super::*;

    const STALE: Duration = Duration::from_secs(30 * 60);

    fn iso(ago: Duration) -> String {
        let ms = i64::try_from(
            (SystemTime::now() - ago)
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap()
                .as_millis(),
        )
        .unwrap();
        session_format::time::to_iso_string(ms).unwrap()
    }

    fn plant(lock: &Path, text: &str) {
        session_store::io::write_raw(lock, text.as_bytes()).unwrap();
    }

    fn set_mtime(path: &Path, ago: Duration) {
        let f = std::fs::File::open(path).unwrap();
        f.set_modified(SystemTime::now() - ago).unwrap();
    }

    /// A live child process that does nothing (killed on drop).
    struct Sleeper(Child);

    impl Drop for Sleeper {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    fn sleeper() -> Sleeper {
        Sleeper(
            Command::new("sleep")
                .arg("600")
                .stdin(Stdio::null())
                .spawn()
                .unwrap(),
        )
    }

    fn dead_pid() -> u32 {
        let mut child = Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        let file = real.join("s.jsonl");
        let lock = real.join("s.jsonl.lock");
        (dir, file, lock)
    }

    #[test]
    fn no_lock_file_is_not_locked() {
        let (_dir, file, _lock) = setup();
        assert_eq!(lock_holding_with(&file, STALE), None);
    }

    #[test]
    fn a_lock_held_by_this_process_is_in_use_until_released() {
        let (_dir, file, lock) = setup();
        let guard = SessionWriteLock::acquire(&file, &LockOptions::default()).unwrap();
        assert_eq!(lock_holding_with(&file, STALE), Some(lock.clone()));
        drop(guard);
        assert!(!lock.exists());
        assert_eq!(lock_holding_with(&file, STALE), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_live_owner_holds_the_lock_and_a_stale_one_does_not() {
        let (_dir, file, lock) = setup();
        let live = sleeper();
        let pid = live.0.id();
        // Live, fresh: in use.
        plant(
            &lock,
            &format!(
                "{{\"pid\": {pid}, \"createdAt\": \"{}\"}}",
                iso(Duration::ZERO)
            ),
        );
        assert_eq!(lock_holding_with(&file, STALE), Some(lock.clone()));
        // Live but held for longer than the stale age: writers fail rather than reclaim it,
        // so it is still in use.
        plant(
            &lock,
            &format!(
                "{{\"pid\": {pid}, \"createdAt\": \"{}\"}}",
                iso(Duration::from_secs(2 * 3600))
            ),
        );
        assert_eq!(lock_holding_with(&file, STALE), Some(lock.clone()));
        // The pid is alive but is another process than the one that wrote the lock.
        plant(
            &lock,
            &format!(
                "{{\"pid\": {pid}, \"createdAt\": \"{}\", \"starttime\": 1}}",
                iso(Duration::ZERO)
            ),
        );
        assert_eq!(lock_holding_with(&file, STALE), None);
        // A dead holder.
        let dead = dead_pid();
        plant(
            &lock,
            &format!(
                "{{\"pid\": {dead}, \"createdAt\": \"{}\"}}",
                iso(Duration::ZERO)
            ),
        );
        assert_eq!(lock_holding_with(&file, STALE), None);
        // Nothing was removed by looking.
        assert!(lock.exists());
    }

    #[test]
    fn a_malformed_lock_is_in_use_until_its_grace_has_passed() {
        let (_dir, file, lock) = setup();
        plant(&lock, "{}");
        assert_eq!(lock_holding_with(&file, STALE), Some(lock.clone()));
        set_mtime(&lock, Duration::from_secs(25));
        assert_eq!(lock_holding_with(&file, STALE), Some(lock.clone()));
        set_mtime(&lock, Duration::from_secs(31));
        assert_eq!(lock_holding_with(&file, STALE), None);
        // With a stale age under the 30 s grace, that age decides.
        set_mtime(&lock, Duration::from_secs(11));
        assert_eq!(lock_holding_with(&file, Duration::from_secs(10)), None);
        assert_eq!(
            lock_holding_with(&file, Duration::from_secs(12)),
            Some(lock)
        );
    }

    #[test]
    fn an_unresolvable_directory_counts_as_locked() {
        let (dir, _file, _lock) = setup();
        let file = dir.path().join("missing-dir").join("s.jsonl");
        assert_eq!(
            lock_holding_with(&file, STALE),
            Some(dir.path().join("missing-dir").join("s.jsonl.lock"))
        );
    }
}
