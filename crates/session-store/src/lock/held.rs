//! Acquisition, the process-wide registry of held locks, guards, release and the watchdog.

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, OnceLock};
use std::time::{Duration, Instant};

use parking_lot::lock_api::ArcReentrantMutexGuard;
use parking_lot::{Condvar, Mutex, RawMutex, RawThreadId, ReentrantMutex};

use super::WATCHDOG_INTERVAL;
use super::payload::{
    self, Content, Identity, Judge, Removal, Snapshot, inspect, new_lock_mode, own_start_time,
    read_snapshot, remove_if_unchanged, remove_stale_if_unchanged,
};
use super::{LockError, LockOptions, MALFORMED_LOCK_GRACE, MALFORMED_LOCK_GRACE_SHORT_TIMEOUT};
use crate::identity::FileIdentity;

type PathMutex = ReentrantMutex<()>;
type ThreadGuard = ArcReentrantMutexGuard<RawMutex, RawThreadId, ()>;

/// One lock file this process holds.
struct Held {
    token: u64,
    count: usize,
    lock_path: PathBuf,
    written: Snapshot,
    acquired_at: Instant,
    max_hold: Duration,
}

#[derive(Default)]
struct Registry {
    /// The per-session mutex serialising this process's threads; removed when nobody uses it.
    paths: HashMap<PathBuf, Arc<PathMutex>>,
    /// Held lock files by normalised session path.
    held: HashMap<PathBuf, Held>,
}

static REGISTRY: LazyLock<Mutex<Registry>> = LazyLock::new(|| Mutex::new(Registry::default()));
static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

/// A session file's lock: its canonical path and lock file path.
///
/// The canonical path is the file's [`FileIdentity`]: the absolute path with `.`/`..`
/// resolved lexically, the directory resolved with `realpath` (left as is when it does not
/// exist yet), and a file name that is a symlink followed to its target; the lock file is that
/// path plus `.lock`. Every name of one file (`x/../x/s.jsonl`, a path through a symlinked
/// directory, a symlink `L.jsonl -> s.jsonl`) shares one lock: `<real dir>/s.jsonl.lock`,
/// OpenClaw's lock path for `s.jsonl` (docs/DEVIATIONS.md D29).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SessionWriteLock {
    session_file: PathBuf,
    lock_path: PathBuf,
}

impl SessionWriteLock {
    /// The lock of `session_file` (nothing is created or checked).
    ///
    /// # Errors
    /// [`LockError::Io`] when the path has no file name, the current directory is unknown, or
    /// a symlink at the name cannot be followed (a loop).
    pub fn for_file(session_file: impl AsRef<Path>) -> Result<Self, LockError> {
        let file = session_file.as_ref();
        let id = FileIdentity::resolve(file).map_err(|e| LockError::io(file, e))?;
        Ok(Self::of_identity(&id))
    }

    /// The lock OpenClaw 2026.6.11 takes for the name `path` as given:
    /// `realpath(dirname)/<basename>.lock`, the name itself **not** followed. For a symlink
    /// `L.jsonl -> s.jsonl` that is `L.jsonl.lock`, the lock a reference writer given
    /// `L.jsonl` holds (docs/DEVIATIONS.md D29 (1)); for a name that is not a symlink it is
    /// [`SessionWriteLock::for_file`]'s lock. Nothing is created or checked. Writers that
    /// move, delete or rewrite a file with aliases take this lock of each alias besides the
    /// file's own ([`SessionWriteLock::acquire_this`]).
    ///
    /// # Errors
    /// [`LockError::Io`] when the path has no file name.
    pub fn of_name(path: impl AsRef<Path>) -> Result<Self, LockError> {
        let path = path.as_ref();
        let Some(name) = crate::paths::resolve(path)
            .file_name()
            .map(ToOwned::to_owned)
        else {
            return Err(LockError::io(
                path,
                io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"),
            ));
        };
        let session_file = crate::identity::store_root_of(path).join(name);
        let mut lock = session_file.clone().into_os_string();
        lock.push(".lock");
        Ok(SessionWriteLock {
            session_file,
            lock_path: PathBuf::from(lock),
        })
    }

    /// Acquires this lock as it names it (the file name is not resolved again), with the rules
    /// of [`SessionWriteLock::acquire`]: for a lock from [`SessionWriteLock::of_name`].
    ///
    /// # Errors
    /// As [`SessionWriteLock::acquire`].
    pub fn acquire_this(self, options: &LockOptions) -> Result<WriteLockGuard, LockError> {
        self.lock(options)
    }

    /// The lock of the file `id` names.
    pub fn of_identity(id: &FileIdentity) -> Self {
        SessionWriteLock {
            session_file: id.canonical().to_path_buf(),
            lock_path: id.lock_path(),
        }
    }

    /// Acquires the lock of `session_file` (see the module docs): re-enters at once when this
    /// thread holds it; otherwise waits for other threads of this process and for other
    /// processes, up to `options.timeout`. Creates the session directory when missing.
    ///
    /// A name that leads through a symlink to a file outside its store root (the directory
    /// holding the name, [`crate::identity::store_root_of`]) is refused before anything is
    /// created: the lock file would land outside the store.
    ///
    /// # Errors
    /// [`LockError::Timeout`], [`LockError::Stale`], [`LockError::OutsideStore`], or
    /// [`LockError::Io`] when the directory or the lock file cannot be created or read.
    pub fn acquire(
        session_file: impl AsRef<Path>,
        options: &LockOptions,
    ) -> Result<WriteLockGuard, LockError> {
        let file = session_file.as_ref();
        let resolve = || -> Result<SessionWriteLock, LockError> {
            let id = FileIdentity::resolve(file).map_err(|e| LockError::io(file, e))?;
            id.check_own_root().map_err(LockError::OutsideStore)?;
            Ok(SessionWriteLock::of_identity(&id))
        };
        let provisional = resolve()?;
        if let Some(dir) = provisional.session_file.parent() {
            crate::io::ensure_dir(dir).map_err(|e| LockError::io(dir, e))?;
        }
        // Resolve again now that the directory exists.
        resolve()?.lock(options)
    }

    /// The canonical session file.
    pub fn session_file(&self) -> &Path {
        &self.session_file
    }

    /// The lock file (`<session file>.lock`).
    pub fn lock_path(&self) -> &Path {
        &self.lock_path
    }

    /// Whether the calling thread holds this lock.
    pub fn is_held_by_current_thread(&self) -> bool {
        let reg = REGISTRY.lock();
        reg.held.contains_key(&self.session_file)
            && reg
                .paths
                .get(&self.session_file)
                .is_some_and(|m| m.is_owned_by_current_thread())
    }

    /// A new guard on this lock when the calling thread holds it (the count goes up by one).
    pub fn current(&self) -> Option<WriteLockGuard> {
        let mutex = {
            let reg = REGISTRY.lock();
            if !reg.held.contains_key(&self.session_file) {
                return None;
            }
            let m = reg.paths.get(&self.session_file)?;
            if !m.is_owned_by_current_thread() {
                return None;
            }
            Arc::clone(m)
        };
        // Owned by this thread: re-entering never blocks.
        let thread = mutex.lock_arc();
        drop(mutex);
        let mut reg = REGISTRY.lock();
        let held = reg.held.get_mut(&self.session_file)?;
        held.count += 1;
        Some(WriteLockGuard {
            target: Arc::new(self.clone()),
            token: held.token,
            thread: Some(thread),
        })
    }

    fn lock(self, options: &LockOptions) -> Result<WriteLockGuard, LockError> {
        let started = Instant::now();
        let deadline = options.timeout.and_then(|t| started.checked_add(t));
        let mutex = {
            let mut reg = REGISTRY.lock();
            Arc::clone(
                reg.paths
                    .entry(self.session_file.clone())
                    .or_insert_with(|| Arc::new(ReentrantMutex::new(()))),
            )
        };
        let thread = match deadline {
            None => Some(mutex.lock_arc()),
            Some(d) => mutex.try_lock_arc_until(d),
        };
        drop(mutex);
        let Some(thread) = thread else {
            forget_path_if_unused(&self.session_file);
            return Err(self.timeout_error(options, true));
        };
        {
            let mut reg = REGISTRY.lock();
            if let Some(held) = reg.held.get_mut(&self.session_file) {
                held.count += 1;
                let token = held.token;
                return Ok(WriteLockGuard {
                    target: Arc::new(self),
                    token,
                    thread: Some(thread),
                });
            }
        }
        match self.create_lock_file(options, started, deadline) {
            Ok(written) => {
                let token = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
                REGISTRY.lock().held.insert(
                    self.session_file.clone(),
                    Held {
                        token,
                        count: 1,
                        lock_path: self.lock_path.clone(),
                        written,
                        acquired_at: Instant::now(),
                        max_hold: options.effective_max_hold(),
                    },
                );
                kick_watchdog();
                Ok(WriteLockGuard {
                    target: Arc::new(self),
                    token,
                    thread: Some(thread),
                })
            }
            Err(e) => {
                drop(thread);
                forget_path_if_unused(&self.session_file);
                Err(e)
            }
        }
    }

    /// The contention loop: create the file, or judge the existing one and reclaim, fail, or
    /// wait and retry.
    fn create_lock_file(
        &self,
        options: &LockOptions,
        started: Instant,
        deadline: Option<Instant>,
    ) -> Result<Snapshot, LockError> {
        let max_hold = options.effective_max_hold();
        let grace = match options.timeout {
            Some(t) if t < MALFORMED_LOCK_GRACE => MALFORMED_LOCK_GRACE_SHORT_TIMEOUT,
            _ => MALFORMED_LOCK_GRACE,
        };
        let mut attempt: u32 = 0;
        loop {
            let raw = payload::render(
                std::process::id(),
                session_format::ids::now_ms(),
                max_hold,
                own_start_time(),
            )
            .into_bytes();
            match crate::io::create_exclusive(&self.lock_path, &raw, new_lock_mode()) {
                Ok(meta) => {
                    return Ok(Snapshot {
                        identity: Identity::of(&meta),
                        content: Content::Bytes(raw),
                        mtime: meta.modified().ok(),
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(LockError::io(&self.lock_path, e)),
            }
            let Some(snapshot) =
                read_snapshot(&self.lock_path).map_err(|e| LockError::io(&self.lock_path, e))?
            else {
                continue; // released meanwhile
            };
            if let Some(found) = snapshot.not_regular() {
                // A directory, FIFO, socket or device never goes away by itself: fail at once.
                return Err(LockError::NotALockFile {
                    found,
                    lock_path: self.lock_path.clone(),
                });
            }
            let judged = inspect(snapshot.payload().as_ref(), &self.judge(options));
            if !judged.reasons.is_empty() {
                if judged.needs_mtime_fallback() {
                    let old = payload::mtime_age(&snapshot)
                        .is_none_or(|age| age > options.stale.min(grace));
                    if old && self.reclaim(&snapshot, &judged)? {
                        continue;
                    }
                } else if judged.report_only() {
                    // The holder is alive: report instead of reclaiming, unless it went away.
                    match read_snapshot(&self.lock_path) {
                        Ok(Some(now)) if now.same_as(&snapshot) => {
                            return Err(LockError::Stale {
                                reasons: judged.reasons.clone(),
                                owner: judged.owner(),
                                owner_pid: judged.pid_u64(),
                                owner_alive: judged.pid_alive,
                                lock_path: self.lock_path.clone(),
                            });
                        }
                        _ => continue,
                    }
                } else if self.reclaim(&snapshot, &judged)? {
                    continue;
                }
            }
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                return Err(self.timeout_error(options, false));
            }
            attempt = attempt.saturating_add(1);
            let mut pause = options.backoff.delay(attempt);
            if let Some(d) = deadline {
                pause = pause.min(d.saturating_duration_since(now));
            }
            tracing::trace!(
                lock = %self.lock_path.display(),
                attempt,
                waited_ms = started.elapsed().as_millis() as u64,
                "session write lock busy"
            );
            std::thread::sleep(pause);
        }
    }

    /// Removes a stale lock file that is still the one judged; true when creation should be
    /// retried at once (removed, or changed meanwhile).
    fn reclaim(
        &self,
        snapshot: &Snapshot,
        judged: &payload::Inspection,
    ) -> Result<bool, LockError> {
        let removal = remove_stale_if_unchanged(&self.lock_path, snapshot)
            .map_err(|e| LockError::io(&self.lock_path, e))?;
        if removal == Removal::Removed {
            tracing::debug!(
                lock = %self.lock_path.display(),
                reasons = %super::join_reasons(&judged.reasons),
                owner = %judged.owner(),
                "reclaimed stale session write lock"
            );
        }
        Ok(true)
    }

    fn judge(&self, options: &LockOptions) -> Judge {
        Judge {
            held_by_this_process: false,
            reclaim_without_starttime: true,
            respect_max_hold: true,
            stale: options.stale,
            now_ms: session_format::ids::now_ms(),
        }
    }

    fn timeout_error(&self, options: &LockOptions, held_here: bool) -> LockError {
        let snapshot = read_snapshot(&self.lock_path).ok().flatten();
        let judge = Judge {
            held_by_this_process: held_here,
            respect_max_hold: !held_here,
            ..self.judge(options)
        };
        let judged = inspect(
            snapshot.as_ref().and_then(Snapshot::payload).as_ref(),
            &judge,
        );
        LockError::Timeout {
            timeout_ms: options.timeout.map_or(u64::MAX, |t| {
                u64::try_from(t.as_millis()).unwrap_or(u64::MAX)
            }),
            owner: judged.owner(),
            owner_pid: judged.pid_u64(),
            owner_alive: judged.pid_alive,
            lock_path: self.lock_path.clone(),
        }
    }
}

/// Whether any thread of this process holds the lock of the canonical session file
/// `session_file` (a lock path minus its `.lock`).
pub(super) fn is_held_in_process(session_file: &Path) -> bool {
    REGISTRY.lock().held.contains_key(session_file)
}

fn forget_path_if_unused(session_file: &Path) {
    let mut reg = REGISTRY.lock();
    if reg.held.contains_key(session_file) {
        return;
    }
    if reg
        .paths
        .get(session_file)
        .is_some_and(|m| Arc::strong_count(m) == 1)
    {
        reg.paths.remove(session_file);
    }
}

/// Holding the session write lock (see the module docs). Tied to the thread that acquired it;
/// cloning re-enters (the lock file stays until the last clone is gone). Dropping releases and
/// never panics; [`WriteLockGuard::release`] releases and reports failures.
///
/// A guard cannot move to another thread (the in-process mutex must be unlocked by its owner):
///
/// ```compile_fail
/// fn assert_send<T: Send>() {}
/// assert_send::<session_store::WriteLockGuard>();
/// ```
pub struct WriteLockGuard {
    target: Arc<SessionWriteLock>,
    token: u64,
    /// Released after the count (declared last; taken in `drop`).
    thread: Option<ThreadGuard>,
}

impl fmt::Debug for WriteLockGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WriteLockGuard")
            .field("session_file", &self.target.session_file)
            .field("lock_path", &self.target.lock_path)
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}

impl WriteLockGuard {
    /// The canonical session file.
    pub fn session_file(&self) -> &Path {
        &self.target.session_file
    }

    /// The lock file.
    pub fn lock_path(&self) -> &Path {
        &self.target.lock_path
    }

    /// The acquisition this guard belongs to (unique in the process; a new lock file after a
    /// forced release has a new token).
    pub fn token(&self) -> u64 {
        self.token
    }

    /// Whether the lock this guard belongs to is still held (false once the watchdog or
    /// [`release_all_held_locks`] released it; by then its lock file has been removed).
    pub fn is_active(&self) -> bool {
        REGISTRY
            .lock()
            .held
            .get(&self.target.session_file)
            .is_some_and(|h| h.token == self.token)
    }

    /// How many guards (this one included) share the held lock; 0 when it is no longer active.
    pub fn holders(&self) -> usize {
        REGISTRY
            .lock()
            .held
            .get(&self.target.session_file)
            .filter(|h| h.token == self.token)
            .map_or(0, |h| h.count)
    }

    /// Releases this guard now: the lock file is removed when this was the last guard (and the
    /// file is still the one we wrote). Returns whether the file was removed.
    ///
    /// # Errors
    /// [`LockError::Io`] when the lock file could not be read or removed.
    pub fn release(mut self) -> Result<bool, LockError> {
        let result = self.release_count();
        self.finish();
        result
    }

    fn release_count(&mut self) -> Result<bool, LockError> {
        let done = {
            let mut reg = REGISTRY.lock();
            match reg.held.get_mut(&self.target.session_file) {
                Some(h) if h.token == self.token => {
                    h.count = h.count.saturating_sub(1);
                    if h.count == 0 {
                        reg.held.remove(&self.target.session_file)
                    } else {
                        None
                    }
                }
                _ => None,
            }
        };
        // The token moves on so a second call (drop after release) does nothing.
        self.token = 0;
        match done {
            Some(held) => remove_held_file(&held),
            None => Ok(false),
        }
    }

    fn finish(&mut self) {
        if let Some(thread) = self.thread.take() {
            drop(thread);
            forget_path_if_unused(&self.target.session_file);
        }
    }
}

fn remove_held_file(held: &Held) -> Result<bool, LockError> {
    match remove_if_unchanged(&held.lock_path, &held.written) {
        Ok(Removal::Removed) => Ok(true),
        Ok(Removal::Changed) => {
            tracing::debug!(
                lock = %held.lock_path.display(),
                "session write lock file was replaced by another holder; left in place"
            );
            Ok(false)
        }
        Err(e) => Err(LockError::io(&held.lock_path, e)),
    }
}

impl Clone for WriteLockGuard {
    fn clone(&self) -> Self {
        let thread = self
            .thread
            .as_ref()
            .map(|t| ReentrantMutex::lock_arc(ArcReentrantMutexGuard::remutex(t)));
        let mut reg = REGISTRY.lock();
        let token = match reg.held.get_mut(&self.target.session_file) {
            Some(h) if h.token == self.token => {
                h.count += 1;
                self.token
            }
            _ => 0,
        };
        WriteLockGuard {
            target: Arc::clone(&self.target),
            token,
            thread,
        }
    }
}

impl Drop for WriteLockGuard {
    fn drop(&mut self) {
        if let Err(e) = self.release_count() {
            tracing::warn!("[session-write-lock] release failed: {e}");
        }
        self.finish();
    }
}

/// [`SessionWriteLock::acquire`] unless the calling thread already holds the lock of
/// `session_file`, then `run` with the guard (the "owned write context": nested writers reuse
/// the held lock instead of deadlocking or creating a second file).
///
/// # Errors
/// As [`SessionWriteLock::acquire`]; the result of `run` is passed through.
pub fn with_session_write_lock<R>(
    session_file: impl AsRef<Path>,
    options: &LockOptions,
    run: impl FnOnce(&WriteLockGuard) -> R,
) -> Result<R, LockError> {
    let file = session_file.as_ref();
    let guard = match current_guard(file) {
        Some(g) => g,
        None => SessionWriteLock::acquire(file, options)?,
    };
    Ok(run(&guard))
}

/// A guard on the lock of `session_file` when the calling thread holds it ("am I already inside
/// a write for this file?"); `None` otherwise.
pub fn current_guard(session_file: impl AsRef<Path>) -> Option<WriteLockGuard> {
    SessionWriteLock::for_file(session_file).ok()?.current()
}

/// Removes every lock file this process holds (the reference's exit and signal cleanup); guards
/// that are still alive become inactive and their drop does nothing. Call it before
/// `std::process::exit`. Returns how many locks were released.
pub fn release_all_held_locks() -> usize {
    // The files are removed before the registry is unlocked, so a holder that sees its guard
    // inactive ([`WriteLockGuard::is_active`]) knows its lock file is gone.
    let mut reg = REGISTRY.lock();
    let drained: Vec<Held> = reg.held.drain().map(|(_, h)| h).collect();
    for held in &drained {
        if let Err(e) = remove_held_file(held) {
            tracing::warn!("[session-write-lock] release failed: {e}");
        }
    }
    drop(reg);
    drained.len()
}

/// Force-releases every lock held longer than its max-hold, logging
/// `[session-write-lock] releasing lock held for <n>ms (max=<m>ms): <lockPath>` at `warn`, and
/// returns how many. The background watchdog calls this; applications and tests may too.
pub fn run_watchdog_check() -> usize {
    watchdog_pass(Instant::now()).0
}

/// One pass: (released, the next instant a held lock becomes due).
fn watchdog_pass(now: Instant) -> (usize, Option<Instant>) {
    let mut reg = REGISTRY.lock();
    let due: Vec<PathBuf> = reg
        .held
        .iter()
        .filter(|(_, h)| now.saturating_duration_since(h.acquired_at) > h.max_hold)
        .map(|(k, _)| k.clone())
        .collect();
    let expired: Vec<Held> = due.iter().filter_map(|k| reg.held.remove(k)).collect();
    // The warning is logged and the file removed before the registry is unlocked, so no holder
    // sees its guard inactive ([`WriteLockGuard::is_active`]) before the release has been
    // announced, as the reference logs before it releases, nor while its lock file is still
    // there (a holder may say so and exit at once, which would end this thread before the
    // unlink).
    for held in &expired {
        tracing::warn!(
            "[session-write-lock] releasing lock held for {}ms (max={}ms): {}",
            now.saturating_duration_since(held.acquired_at).as_millis(),
            held.max_hold.as_millis(),
            held.lock_path.display()
        );
        if let Err(e) = remove_held_file(held) {
            tracing::warn!("[session-write-lock] release failed: {e}");
        }
    }
    let next = reg
        .held
        .values()
        .filter_map(|h| h.acquired_at.checked_add(h.max_hold))
        .min();
    (expired.len(), next)
}

struct Watchdog {
    kicked: Mutex<bool>,
    cv: Condvar,
}

static WATCHDOG: OnceLock<Option<Arc<Watchdog>>> = OnceLock::new();

/// Starts the watchdog thread on first use, and wakes it so it sees a new lock's deadline.
fn kick_watchdog() {
    let dog = WATCHDOG.get_or_init(|| {
        let dog = Arc::new(Watchdog {
            kicked: Mutex::new(false),
            cv: Condvar::new(),
        });
        let worker = Arc::clone(&dog);
        match std::thread::Builder::new()
            .name("session-write-lock-watchdog".to_owned())
            .spawn(move || watchdog_loop(&worker))
        {
            Ok(_) => Some(dog),
            Err(e) => {
                tracing::warn!("[session-write-lock] cannot start the watchdog thread: {e}");
                None
            }
        }
    });
    if let Some(dog) = dog {
        *dog.kicked.lock() = true;
        dog.cv.notify_one();
    }
}

fn watchdog_loop(dog: &Watchdog) {
    loop {
        let now = Instant::now();
        let (_, next) = watchdog_pass(now);
        // Wake a millisecond after the earliest deadline (the check is "held > max").
        let wait = next
            .map(|n| n.saturating_duration_since(now) + Duration::from_millis(1))
            .unwrap_or(WATCHDOG_INTERVAL)
            .min(WATCHDOG_INTERVAL);
        let mut kicked = dog.kicked.lock();
        if !*kicked {
            let _ = dog.cv.wait_for(&mut kicked, wait);
        }
        *kicked = false;
    }
}
