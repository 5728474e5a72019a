//! The cross-process session write lock, interoperable with OpenClaw 2026.6.11's
//! `acquireSessionWriteLock` (openclaw-jsonl.md §3.4–§3.5, §7.6, §8; observed behaviour of the
//! reference: `xtask/conformance/lock/FINDINGS.md`).
//!
//! # Protocol (shared with OpenClaw)
//!
//! - The lock of session file `F` is the file `realpath(dirname F)/<basename F>.lock`, so paths
//!   through symlinked directories share one lock. A file name that is itself a symlink is
//!   followed first ([`crate::identity::FileIdentity`]): `L.jsonl -> s.jsonl` takes the lock
//!   of `s.jsonl`, `<real dir>/s.jsonl.lock` (OpenClaw 2026.6.11 would lock `L.jsonl.lock`;
//!   docs/DEVIATIONS.md D29), and a link to a file outside its own directory is refused
//!   ([`LockError::OutsideStore`]). Whoever creates it holds the lock; releasing
//!   deletes it. It is an `O_EXCL`-style file protocol, not `flock`: it works the same on NFS
//!   and is visible to node processes.
//! - Its content is the reference's pretty-printed JSON, byte for byte:
//!   `{"pid", "createdAt", "maxHoldMs", "starttime"}` with two-space indentation and a trailing
//!   newline (`starttime`, field 22 of `/proc/<pid>/stat`, is left out where it cannot be read).
//!   The file mode is `0666 & !umask` (0644 under the usual umask), like the reference's
//!   `open(…, "wx")`: another user sharing the directory must be able to read who holds it (a lock
//!   it cannot read makes its acquisition fail with `EACCES` instead of waiting).
//! - A contender that finds the file reads it and computes [`StaleReason`]s: `missing-pid`,
//!   `dead-pid`, `recycled-pid` (the pid is alive but its start time differs), `invalid-createdAt`,
//!   `too-old` (older than `stale`), `hold-exceeded` (older than the holder's own `maxHoldMs`)
//!   and `orphan-self-pid` (our own pid, not held in this process, and no start time or our
//!   start time). Then:
//!   - no reason: the lock is live; wait and retry (backoff, see [`Backoff`]);
//!   - only `missing-pid` / `invalid-createdAt` (an empty, half-written or malformed payload such as
//!     `{}`): judged by the file's mtime instead; it is reclaimed once its mtime is older than
//!     `min(stale, grace)`, grace being 30 s, or 5 s when the acquire timeout is under 30 s, and
//!     respected until then;
//!   - only `too-old` / `hold-exceeded` (the holder is alive): not reclaimed; the acquisition fails
//!     at once with [`LockError::Stale`] (the reference's `SessionWriteLockStaleError`);
//!   - anything else (dead or recycled pid, orphan self lock): the file is deleted, if it still has
//!     the identity and bytes that were judged, and creation is retried at once. The re-check and
//!     the deletion run under an exclusive `flock` of the lock's directory, so of several of our
//!     processes that judged the same stale file exactly one deletes it, and none deletes the
//!     fresh lock the winner created meanwhile.
//! - A lock file is read without blocking and without reading much: only a regular file (or
//!   a symlink to one) is opened, with `O_NONBLOCK`, and at most [`MAX_LOCK_PAYLOAD_BYTES`]
//!   are read (a longer file is a malformed payload: the mtime rule above). A directory, FIFO,
//!   socket or device at the lock path (or a symlink to one) is never opened: the acquisition
//!   fails at once with [`LockError::NotALockFile`] naming the path, and nothing removes it.
//! - Giving up after the timeout yields [`LockError::Timeout`], whose message is the reference's
//!   `session file locked (timeout <ms>ms): <owner> <lockPath>` (owner `pid=<n> alive=<bool>
//!   [ageMs=<n>]` or `owner=unknown [ageMs=<n>]`).
//!
//! # Why a temporary file and a no-clobber link
//!
//! The lock file is written in full to a temporary file in the same directory and then linked
//! into place with a no-clobber rename ([`crate::io::create_exclusive`]: `renameat2
//! (RENAME_NOREPLACE)`, or `link` + `unlink` where that is missing, as on NFS, where `link` is
//! the classic atomic lock primitive). So no process ever sees our lock empty or half-written,
//! and a crash while creating it leaves a stray temporary file rather than an empty lock that
//! blocks everyone for 30 s. (OpenClaw itself opens with `O_EXCL` and writes afterwards; readers
//! on both sides treat such a momentarily empty file as a fresh malformed lock and wait.) Only
//! where the file system supports neither primitive does creation fall back to `O_EXCL` and a
//! single `write`.
//!
//! # In-process semantics
//!
//! - Threads of one process never hold the same session's lock at the same time: each normalised
//!   session path has a [`parking_lot::ReentrantMutex`]. A thread that already holds the lock (a
//!   nested writer) re-enters at once and bumps a process-wide reference count; other threads wait
//!   for it, within the same timeout. The lock file is removed at the **last** release.
//! - A [`WriteLockGuard`] is tied to the thread that acquired it (it is not `Send`); cloning it or
//!   asking for [`current_guard`] on that thread re-enters. This is the "owned write context"
//!   (openclaw-jsonl.md §3.4): nested code calls [`with_session_write_lock`], which reuses the
//!   thread's lock when it holds one for the same file and takes it otherwise.
//! - Dropping a guard releases it; drop never panics (failures are logged with `tracing`).
//!   [`WriteLockGuard::release`] reports them instead.
//! - A watchdog thread (started with the first lock, one per process) force-releases locks held
//!   longer than their max-hold ([`LockOptions::max_hold`]), logging
//!   `[session-write-lock] releasing lock held for <n>ms (max=<m>ms): <lockPath>` at `warn`. Each
//!   acquisition has a token, so a guard whose lock the watchdog released never removes a newer
//!   lock; and a lock file is only ever removed while it still has the inode and bytes we wrote.
//!
//! # Process exit and signals
//!
//! A library must not install signal handlers behind the application's back, and Rust runs no
//! destructors at `process::exit`. So:
//! - [`release_all_held_locks`] removes every lock file this process holds; call it before
//!   `std::process::exit` (returning from `main` drops guards normally);
//! - [`install_signal_cleanup`] (opt-in) does that on SIGINT, SIGTERM, SIGQUIT and SIGABRT and then
//!   lets the signal's default action happen (the process dies of the signal, as with the
//!   reference). It uses `signal-hook`; cleanup runs on a helper thread, so a SIGABRT raised by
//!   `abort()` inside the process may win the race.
//!
//! # Differences from the reference
//!
//! - OpenClaw 2026.6.11 on Linux also reads the owner's `/proc/<pid>/cmdline` and reclaims the lock
//!   when the owner does not look like an OpenClaw process (`non-openclaw-owner`). We do not: it
//!   would make our own processes steal each other's locks. Consequence: **OpenClaw steals locks
//!   held by processes whose command line does not contain `openclaw`** (an argument equal to or
//!   ending in `/openclaw`, `openclaw.mjs`, or an executable named `openclaw`/`openclaw-gateway`);
//!   an application that must exclude OpenClaw writers has to run under such a name.
//! - A pid that exists but belongs to another user (`kill(pid, 0)` fails with `EPERM`) is alive for
//!   us; the reference treats it as dead and reclaims.
//! - [`clean_stale_lock_files`] only removes a file that is unchanged since it was judged, and
//!   knows which locks this process holds (the reference always says "not held here").
//! - Stale locks are removed under the directory `flock` above; the reference has no such guard,
//!   so a node contender can still remove a lock one of our processes created a moment before.
//! - The default [`Backoff`] is linear (`min(1000, 50·attempt)` ms); the reference polls every
//!   50 ms ([`Backoff::Fixed`]).
//! - A directory, FIFO, socket or device at the lock path fails at once with
//!   [`LockError::NotALockFile`] and is never removed; the reference fails with `EISDIR` on a
//!   directory and blocks for ever on a FIFO. At most [`MAX_LOCK_PAYLOAD_BYTES`] of a lock file
//!   are read (the reference reads it all, failing past 2 GiB). A dangling symlink is a lock
//!   without a payload (the reference's acquisition never returns on one).
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use session_store::lock::{LockOptions, with_session_write_lock};
//! use session_store::io::{append_line, Durability};
//!
//! let file = std::path::Path::new("/tmp/sessions/s.jsonl");
//! with_session_write_lock(file, &LockOptions::default(), |_guard| {
//!     append_line(file, br#"{"type":"custom"}"#, Durability::Buffer)
//! })??;
//! # Ok(()) }
//! ```

mod clean;
mod held;
mod payload;
mod signals;

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use clean::{
    LockFileInfo, clean_stale_lock_file, clean_stale_lock_files, inspect_lock_file,
    inspect_session_lock,
};
pub use held::{
    SessionWriteLock, WriteLockGuard, current_guard, release_all_held_locks, run_watchdog_check,
    with_session_write_lock,
};
pub use signals::install_signal_cleanup;

/// Whether `pid` names a running process that is not a zombie, as the reference's
/// `isPidAlive` decides (`kill(pid, 0)`, then `/proc/<pid>/status` `State: Z` on Linux); a
/// process of another user (`EPERM`) counts as alive. Used for this module's lock owners and
/// for other liveness files of the reference (its gateway lock).
pub fn process_alive(pid: u32) -> bool {
    payload::pid_alive(f64::from(pid))
}

/// Field 22 (`starttime`, clock ticks since boot) of `/proc/<pid>/stat`, the value the
/// reference's lock payloads record as `startTime`; `None` off Linux or when unreadable.
pub fn process_start_time(pid: u32) -> Option<u64> {
    payload::process_start_time(f64::from(pid))
}

/// Acquire timeout of the reference (`DEFAULT_SESSION_WRITE_LOCK_ACQUIRE_TIMEOUT_MS`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// Age after which a lock counts as `too-old` (`DEFAULT_SESSION_WRITE_LOCK_STALE_MS`).
pub const DEFAULT_STALE: Duration = Duration::from_secs(30 * 60);
/// Minimum max-hold (`DEFAULT_SESSION_WRITE_LOCK_MAX_HOLD_MS`, also the reference's flat default).
pub const DEFAULT_MAX_HOLD: Duration = Duration::from_secs(5 * 60);
/// Grace added to the acquire timeout to get the max-hold (`DEFAULT_TIMEOUT_GRACE_MS`).
pub const DEFAULT_MAX_HOLD_GRACE: Duration = Duration::from_secs(2 * 60);
/// Largest max-hold (`MAX_TIMER_TIMEOUT_MS`, 2 147 000 000 ms); also the max-hold of locks
/// acquired without a timeout.
pub const MAX_HOLD_CAP: Duration = Duration::from_millis(2_147_000_000);
/// How often the watchdog looks at held locks when nothing is due sooner.
pub const WATCHDOG_INTERVAL: Duration = Duration::from_secs(60);
/// How old (by mtime) a malformed lock must be before it is reclaimed, at most: the reclaim age is
/// `min(stale, this)` (`ORPHAN_LOCK_PAYLOAD_GRACE_MS`).
pub const MALFORMED_LOCK_GRACE: Duration = Duration::from_secs(30);
/// The same grace when the acquire timeout is shorter than [`MALFORMED_LOCK_GRACE`]
/// (`SHORT_TIMEOUT_ORPHAN_LOCK_PAYLOAD_GRACE_MS`).
pub const MALFORMED_LOCK_GRACE_SHORT_TIMEOUT: Duration = Duration::from_secs(5);

/// Largest lock payload read, in bytes. A lock file is tiny (the reference's payload is about
/// 110 bytes); a larger regular file is not read at all and counts as a malformed payload
/// (`missing-pid`, `invalid-createdAt`), judged by its mtime like an empty or garbage one, so a
/// huge or sparse file at a lock path costs no memory and no read time.
pub const MAX_LOCK_PAYLOAD_BYTES: u64 = 64 * 1024;

/// Environment variables the reference reads for its defaults (see [`LockOptions::from_env`]).
pub const ENV_ACQUIRE_TIMEOUT_MS: &str = "OPENCLAW_SESSION_WRITE_LOCK_ACQUIRE_TIMEOUT_MS";
/// See [`ENV_ACQUIRE_TIMEOUT_MS`].
pub const ENV_STALE_MS: &str = "OPENCLAW_SESSION_WRITE_LOCK_STALE_MS";
/// See [`ENV_ACQUIRE_TIMEOUT_MS`].
pub const ENV_MAX_HOLD_MS: &str = "OPENCLAW_SESSION_WRITE_LOCK_MAX_HOLD_MS";

/// How long to sleep between two attempts to create a lock file that exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backoff {
    /// `min(max, step·attempt)` for attempt 1, 2, …: the early reference's
    /// `min(1000, 50·attempt)` ms with the default values.
    Linear {
        /// Added per attempt.
        step: Duration,
        /// Cap.
        max: Duration,
    },
    /// The same pause every time (OpenClaw 2026.6.11 polls every 50 ms).
    Fixed(Duration),
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff::Linear {
            step: Duration::from_millis(50),
            max: Duration::from_millis(1000),
        }
    }
}

impl Backoff {
    /// The pause before attempt `attempt + 1`, where `attempt` (≥ 1) attempts have failed.
    pub fn delay(&self, attempt: u32) -> Duration {
        match *self {
            Backoff::Linear { step, max } => step.saturating_mul(attempt.max(1)).min(max),
            Backoff::Fixed(d) => d,
        }
    }
}

/// Options of one acquisition (`acquireSessionWriteLock({timeoutMs, staleMs, maxHoldMs})`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockOptions {
    /// How long to wait for the lock: `None` waits forever, `Some(Duration::ZERO)` tries once.
    /// Default [`DEFAULT_TIMEOUT`] (60 s).
    pub timeout: Option<Duration>,
    /// Age (from the payload's `createdAt`) past which a lock counts as `too-old`. Default
    /// [`DEFAULT_STALE`] (30 min).
    pub stale: Duration,
    /// How long this lock may be held before the watchdog force-releases it; also written to the
    /// payload as `maxHoldMs` (other processes report `hold-exceeded` past it). `None` derives it
    /// from the timeout with [`max_hold_from_timeout`] (5 min for the default timeout).
    pub max_hold: Option<Duration>,
    /// Pause between attempts.
    pub backoff: Backoff,
}

impl Default for LockOptions {
    fn default() -> Self {
        LockOptions {
            timeout: Some(DEFAULT_TIMEOUT),
            stale: DEFAULT_STALE,
            max_hold: None,
            backoff: Backoff::default(),
        }
    }
}

impl LockOptions {
    /// The defaults, overridden like the reference's `resolveSessionWriteLockOptions` by the
    /// environment: [`ENV_ACQUIRE_TIMEOUT_MS`] (positive integer milliseconds, or `Infinity` for
    /// no timeout), [`ENV_STALE_MS`] and [`ENV_MAX_HOLD_MS`] (positive integer milliseconds).
    /// Malformed values are ignored.
    pub fn from_env() -> Self {
        let mut opts = LockOptions::default();
        match env_ms(ENV_ACQUIRE_TIMEOUT_MS, true) {
            Some(EnvMs::Infinity) => opts.timeout = None,
            Some(EnvMs::Ms(ms)) => opts.timeout = Some(Duration::from_millis(ms)),
            None => {}
        }
        if let Some(EnvMs::Ms(ms)) = env_ms(ENV_STALE_MS, false) {
            opts.stale = Duration::from_millis(ms);
        }
        if let Some(EnvMs::Ms(ms)) = env_ms(ENV_MAX_HOLD_MS, false) {
            opts.max_hold = Some(Duration::from_millis(ms));
        }
        opts
    }

    /// The same options with another timeout.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// The max-hold in effect: [`LockOptions::max_hold`], or the one derived from the timeout,
    /// at least 1 ms and at most [`MAX_HOLD_CAP`].
    pub fn effective_max_hold(&self) -> Duration {
        self.max_hold
            .unwrap_or_else(|| {
                max_hold_from_timeout(self.timeout, DEFAULT_MAX_HOLD, DEFAULT_MAX_HOLD_GRACE)
            })
            .clamp(Duration::from_millis(1), MAX_HOLD_CAP)
    }
}

enum EnvMs {
    Ms(u64),
    Infinity,
}

fn env_ms(key: &str, allow_infinity: bool) -> Option<EnvMs> {
    let raw = std::env::var(key).ok()?;
    let raw = raw.trim();
    if raw == "Infinity" {
        return allow_infinity.then_some(EnvMs::Infinity);
    }
    if raw.is_empty() || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // `Number.isSafeInteger` and positive.
    let ms: u64 = raw.parse().ok()?;
    (ms > 0 && ms < (1 << 53)).then_some(EnvMs::Ms(ms))
}

/// `resolveSessionLockMaxHoldFromTimeout`: `min(MAX_HOLD_CAP, max(min, timeout + grace))`, and
/// [`MAX_HOLD_CAP`] for no timeout. With the defaults (min 5 min, grace 2 min): 720 000 ms for a
/// 600 000 ms timeout; with min 5 s, 121 000 ms for a 1 000 ms timeout.
pub fn max_hold_from_timeout(
    timeout: Option<Duration>,
    min: Duration,
    grace: Duration,
) -> Duration {
    match timeout {
        None => MAX_HOLD_CAP,
        Some(t) => t.saturating_add(grace).max(min).min(MAX_HOLD_CAP),
    }
}

/// Why a lock file counts as stale (the reference's `staleReasons`, same spelling).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StaleReason {
    /// No valid `pid` (a positive integer) in the payload, or no readable payload.
    MissingPid,
    /// The pid is not running (or is a zombie).
    DeadPid,
    /// The pid runs, but its start time differs from the payload's `starttime`: another process
    /// got the pid.
    RecycledPid,
    /// No `createdAt` that `Date.parse` accepts.
    InvalidCreatedAt,
    /// `createdAt` is older than the stale age.
    TooOld,
    /// `createdAt` is older than the holder's own `maxHoldMs` (judged by contenders only).
    HoldExceeded,
    /// Our own pid, but this process does not hold the lock: a leftover of an earlier process with
    /// the same pid (containers) or of this one. Without a `starttime` this is assumed when
    /// acquiring (not when cleaning); with one it must equal ours.
    OrphanSelfPid,
}

impl StaleReason {
    /// The reference's spelling (`missing-pid`, `dead-pid`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            StaleReason::MissingPid => "missing-pid",
            StaleReason::DeadPid => "dead-pid",
            StaleReason::RecycledPid => "recycled-pid",
            StaleReason::InvalidCreatedAt => "invalid-createdAt",
            StaleReason::TooOld => "too-old",
            StaleReason::HoldExceeded => "hold-exceeded",
            StaleReason::OrphanSelfPid => "orphan-self-pid",
        }
    }
}

impl fmt::Display for StaleReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

fn join_reasons(reasons: &[StaleReason]) -> String {
    if reasons.is_empty() {
        return "unknown".to_owned();
    }
    reasons
        .iter()
        .map(|r| r.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a lock path holds when it is not a regular file (nor a symlink to one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NonRegularKind {
    /// A directory.
    Directory,
    /// A FIFO (named pipe): opening it for reading would block until a writer appears.
    Fifo,
    /// A Unix socket.
    Socket,
    /// A character device (such as `/dev/zero`, which never ends).
    CharDevice,
    /// A block device.
    BlockDevice,
    /// Any other file type.
    Other,
}

impl NonRegularKind {
    /// The kind of a file's metadata, `None` for a regular file (or a symlink: callers look
    /// through it first).
    pub(crate) fn of(meta: &std::fs::Metadata) -> Option<Self> {
        let t = meta.file_type();
        if t.is_file() || t.is_symlink() {
            return None;
        }
        if t.is_dir() {
            return Some(NonRegularKind::Directory);
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if t.is_fifo() {
                return Some(NonRegularKind::Fifo);
            }
            if t.is_socket() {
                return Some(NonRegularKind::Socket);
            }
            if t.is_char_device() {
                return Some(NonRegularKind::CharDevice);
            }
            if t.is_block_device() {
                return Some(NonRegularKind::BlockDevice);
            }
        }
        Some(NonRegularKind::Other)
    }

    /// `a directory`, `a FIFO`, `a socket`, `a character device`, `a block device`,
    /// `not a regular file`.
    pub fn as_str(self) -> &'static str {
        match self {
            NonRegularKind::Directory => "a directory",
            NonRegularKind::Fifo => "a FIFO",
            NonRegularKind::Socket => "a socket",
            NonRegularKind::CharDevice => "a character device",
            NonRegularKind::BlockDevice => "a block device",
            NonRegularKind::Other => "not a regular file",
        }
    }
}

/// A lock path that holds something other than a lock file: a directory, FIFO, socket or
/// device, itself or as the target of a symlink. Nothing is opened or read there (a FIFO would
/// block the reader, a device such as `/dev/zero` never ends), and it is never removed: the
/// session counts as locked by something this process cannot judge, until someone removes it
/// by hand. OpenClaw 2026.6.11 fails its acquisition at once with `EISDIR` on a directory and
/// blocks forever on a FIFO (docs/DEVIATIONS.md D19 (9)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NonRegularLock {
    /// What is there (the symlink's target when [`NonRegularLock::via_symlink`]).
    pub kind: NonRegularKind,
    /// The lock path is a symlink to it.
    pub via_symlink: bool,
}

impl fmt::Display for NonRegularLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.via_symlink {
            write!(f, "a symlink to {}", self.kind.as_str())
        } else {
            f.write_str(self.kind.as_str())
        }
    }
}

/// Why the lock could not be acquired (or released).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LockError {
    /// Another holder kept the lock for the whole timeout (`SessionWriteLockTimeoutError`, code
    /// [`LockError::TIMEOUT_CODE`]).
    #[error("session file locked (timeout {timeout_ms}ms): {owner} {}", .lock_path.display())]
    Timeout {
        /// The timeout that ran out, in milliseconds.
        timeout_ms: u64,
        /// `pid=<n> alive=<bool> [ageMs=<n>]`, or `owner=unknown [ageMs=<n>]`.
        owner: String,
        /// The holder's pid, when the payload names a valid one.
        owner_pid: Option<u64>,
        /// Whether that pid was running when we gave up.
        owner_alive: bool,
        /// The lock file.
        lock_path: PathBuf,
    },
    /// The lock is stale only for reasons that do not allow reclaiming it (`too-old`,
    /// `hold-exceeded`: the holder is alive but has held it for too long)
    /// (`SessionWriteLockStaleError`, code [`LockError::STALE_CODE`]).
    #[error("session file lock stale ({}): {owner} {}", join_reasons(.reasons), .lock_path.display())]
    Stale {
        /// Why it is stale.
        reasons: Vec<StaleReason>,
        /// As in [`LockError::Timeout`].
        owner: String,
        /// The holder's pid, when the payload names a valid one.
        owner_pid: Option<u64>,
        /// Whether that pid is running.
        owner_alive: bool,
        /// The lock file.
        lock_path: PathBuf,
    },
    /// The lock path holds a directory, FIFO, socket or device (or a symlink to one): the
    /// session is locked by something this process cannot judge. Returned at once, without
    /// waiting (it would never go away by itself) and without opening it.
    #[error(
        "session write lock {} is {found}, not a lock file: the session counts as locked (remove it by hand if no writer uses it)",
        .lock_path.display()
    )]
    NotALockFile {
        /// What is at the lock path.
        found: NonRegularLock,
        /// The lock path.
        lock_path: PathBuf,
    },
    /// The session file's name leads through a symlink to a file outside its store root (see
    /// [`crate::identity`]): no lock file was created (it would land outside the store), and
    /// the write that wanted the lock must not happen. Names the link and its target.
    #[error("session write lock refused: {0}")]
    OutsideStore(crate::identity::OutsideStore),
    /// Creating, reading or removing the lock file (or its directory) failed.
    #[error("session write lock {}: {source}", .path.display())]
    Io {
        /// The file or directory concerned.
        path: PathBuf,
        /// The failure.
        #[source]
        source: io::Error,
    },
}

impl LockError {
    /// The reference's `code` of a timeout.
    pub const TIMEOUT_CODE: &'static str = "OPENCLAW_SESSION_WRITE_LOCK_TIMEOUT";
    /// The reference's `code` of a stale error.
    pub const STALE_CODE: &'static str = "OPENCLAW_SESSION_WRITE_LOCK_STALE";

    /// The reference's error code, for timeouts and stale errors.
    pub fn code(&self) -> Option<&'static str> {
        match self {
            LockError::Timeout { .. } => Some(Self::TIMEOUT_CODE),
            LockError::Stale { .. } => Some(Self::STALE_CODE),
            LockError::NotALockFile { .. } | LockError::OutsideStore(_) | LockError::Io { .. } => {
                None
            }
        }
    }

    /// The lock file concerned (for [`LockError::OutsideStore`]: the link's target, whose
    /// lock it would have been).
    pub fn lock_path(&self) -> &Path {
        match self {
            LockError::Timeout { lock_path, .. }
            | LockError::Stale { lock_path, .. }
            | LockError::NotALockFile { lock_path, .. } => lock_path,
            LockError::OutsideStore(o) => &o.target,
            LockError::Io { path, .. } => path,
        }
    }

    /// A timeout because this very process (another of its threads) holds the lock (the spec's
    /// `isSessionWriteLockBusyWithActiveRun`, which OpenClaw 2026.6.11 does not export yet).
    pub fn is_busy_with_active_run(&self) -> bool {
        matches!(
            self,
            LockError::Timeout { owner_pid: Some(pid), owner_alive: true, .. }
                if *pid == u64::from(std::process::id())
        )
    }

    fn io(path: &Path, source: io::Error) -> Self {
        LockError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
