//! The lock file's payload (writing it byte-identical to the reference, reading it with
//! `JSON.parse` semantics), the stale-reason rules, and what `/proc` says about a pid.

use std::fs;
use std::io::{self, Read};
use std::path::Path;
use std::sync::LazyLock;
use std::time::{Duration, Instant, SystemTime};

use session_format::json::{JsValue, number_to_string, parse_value};

use super::{MAX_LOCK_PAYLOAD_BYTES, NonRegularKind, NonRegularLock, StaleReason};

/// The payload text of a lock this process creates now: what the reference writes with
/// `JSON.stringify({pid, createdAt, maxHoldMs, starttime?}, null, 2) + "\n"`.
pub(crate) fn render(
    pid: u32,
    created_at_ms: i64,
    max_hold: Duration,
    starttime: Option<u64>,
) -> String {
    let created = session_format::time::to_iso_string(created_at_ms).unwrap_or_default();
    let max_hold_ms = u64::try_from(max_hold.as_millis())
        .unwrap_or(u64::MAX)
        .max(1);
    let mut out = format!(
        "{{\n  \"pid\": {pid},\n  \"createdAt\": \"{created}\",\n  \"maxHoldMs\": {max_hold_ms}"
    );
    if let Some(st) = starttime {
        out.push_str(&format!(",\n  \"starttime\": {st}"));
    }
    out.push_str("\n}\n");
    out
}

/// The fields of a lock payload that the rules look at, validated as the reference does
/// (`isValidLockNumber`: a number that is an integer ≥ 0).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Payload {
    /// A valid pid (> 0).
    pub pid: Option<f64>,
    /// `createdAt`, when it is a string.
    pub created_at: Option<String>,
    /// A valid `starttime`.
    pub starttime: Option<f64>,
    /// A valid `maxHoldMs` (> 0).
    pub max_hold_ms: Option<f64>,
}

fn valid_lock_number(v: Option<&JsValue>) -> Option<f64> {
    match v {
        Some(JsValue::Number(n)) if n.is_finite() && n.fract() == 0.0 && *n >= 0.0 => Some(*n),
        _ => None,
    }
}

/// Parses lock file bytes; `None` when they are not a JSON object (empty, half-written,
/// garbage, an array, …), which the rules treat like `{}`.
pub(crate) fn parse(bytes: &[u8]) -> Option<Payload> {
    let text = String::from_utf8_lossy(bytes);
    let value = parse_value(text.as_bytes()).ok()?;
    let obj = value.as_object()?;
    Some(Payload {
        pid: valid_lock_number(obj.get("pid")).filter(|p| *p > 0.0),
        created_at: obj.get_str("createdAt").map(|s| s.into_owned()),
        starttime: valid_lock_number(obj.get("starttime")),
        max_hold_ms: valid_lock_number(obj.get("maxHoldMs")).filter(|m| *m > 0.0),
    })
}

/// What the caller knows when judging a lock.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Judge {
    /// This process holds the lock of the same session file.
    pub held_by_this_process: bool,
    /// Our own pid without a `starttime` is an orphan (when acquiring; not when cleaning).
    pub reclaim_without_starttime: bool,
    /// Report `hold-exceeded` (contenders do, cleaning does not).
    pub respect_max_hold: bool,
    /// The `too-old` age.
    pub stale: Duration,
    /// Now, in milliseconds since the epoch.
    pub now_ms: i64,
}

/// The verdict on one payload (the reference's `inspectLockPayload` plus the orphan rule).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Inspection {
    pub pid: Option<f64>,
    pub pid_alive: bool,
    pub created_at: Option<String>,
    pub age_ms: Option<u64>,
    pub reasons: Vec<StaleReason>,
}

impl Inspection {
    /// The pid as an integer, when it is one that fits.
    pub(crate) fn pid_u64(&self) -> Option<u64> {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        self.pid
            .filter(|p| *p <= 9_007_199_254_740_991.0)
            .map(|p| p as u64)
    }

    /// The reference's `describeLockOwnerForError`.
    pub(crate) fn owner(&self) -> String {
        let mut out = match self.pid {
            Some(pid) => format!("pid={} alive={}", number_to_string(pid), self.pid_alive),
            None => "owner=unknown".to_owned(),
        };
        if let Some(age) = self.age_ms {
            out.push_str(&format!(" ageMs={age}"));
        }
        out
    }

    /// Stale only for reasons that the file's mtime decides instead (a malformed payload).
    pub(crate) fn needs_mtime_fallback(&self) -> bool {
        !self.reasons.is_empty()
            && self
                .reasons
                .iter()
                .all(|r| matches!(r, StaleReason::MissingPid | StaleReason::InvalidCreatedAt))
    }

    /// Stale only for reasons that are reported but never reclaimed (the holder is alive).
    pub(crate) fn report_only(&self) -> bool {
        !self.reasons.is_empty()
            && self
                .reasons
                .iter()
                .all(|r| matches!(r, StaleReason::TooOld | StaleReason::HoldExceeded))
    }
}

pub(crate) fn inspect(payload: Option<&Payload>, judge: &Judge) -> Inspection {
    let empty = Payload::default();
    let p = payload.unwrap_or(&empty);
    let pid = p.pid;
    let pid_alive = pid.is_some_and(pid_alive);
    let created_ms = p
        .created_at
        .as_deref()
        .and_then(session_format::time::parse_js_date);
    let age_ms = created_ms.map(|c| u64::try_from(judge.now_ms.saturating_sub(c)).unwrap_or(0));
    let recycled = match (pid, p.starttime) {
        (Some(pid), Some(stored)) if pid_alive => {
            process_start_time(pid).is_some_and(|current| current as f64 != stored)
        }
        _ => false,
    };
    let mut reasons = Vec::new();
    if pid.is_none() {
        reasons.push(StaleReason::MissingPid);
    } else if !pid_alive {
        reasons.push(StaleReason::DeadPid);
    } else if recycled {
        reasons.push(StaleReason::RecycledPid);
    }
    let stale_ms = u64::try_from(judge.stale.as_millis()).unwrap_or(u64::MAX);
    match age_ms {
        None => reasons.push(StaleReason::InvalidCreatedAt),
        Some(age) if age > stale_ms => reasons.push(StaleReason::TooOld),
        Some(_) => {}
    }
    if judge.respect_max_hold
        && let (Some(max), Some(age)) = (p.max_hold_ms, age_ms)
        && age as f64 > max
    {
        reasons.push(StaleReason::HoldExceeded);
    }
    if is_orphan_self(p, judge) && !reasons.contains(&StaleReason::OrphanSelfPid) {
        reasons.push(StaleReason::OrphanSelfPid);
    }
    Inspection {
        pid,
        pid_alive,
        created_at: p.created_at.clone(),
        age_ms,
        reasons,
    }
}

fn is_orphan_self(p: &Payload, judge: &Judge) -> bool {
    if p.pid != Some(f64::from(std::process::id())) || judge.held_by_this_process {
        return false;
    }
    match p.starttime {
        None => judge.reclaim_without_starttime,
        Some(stored) => own_start_time().is_some_and(|own| own as f64 == stored),
    }
}

/// Whether a pid names a running process that is not a zombie. A pid we may not signal
/// (`EPERM`: another user's process) counts as alive.
pub(crate) fn pid_alive(pid: f64) -> bool {
    let Some(raw) = pid_i32(pid) else {
        return false;
    };
    exists(raw) && !is_zombie(raw)
}

fn pid_i32(pid: f64) -> Option<i32> {
    if pid.is_finite() && pid.fract() == 0.0 && pid > 0.0 && pid <= f64::from(i32::MAX) {
        #[allow(clippy::cast_possible_truncation)]
        Some(pid as i32)
    } else {
        None
    }
}

#[cfg(unix)]
fn exists(pid: i32) -> bool {
    let Some(pid) = rustix::process::Pid::from_raw(pid) else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        Err(e) => e == rustix::io::Errno::PERM,
    }
}

#[cfg(not(unix))]
fn exists(pid: i32) -> bool {
    // No portable liveness test: only our own pid is known to be alive; others are assumed alive
    // (never reclaimed as dead).
    let _ = pid;
    true
}

#[cfg(target_os = "linux")]
fn is_zombie(pid: i32) -> bool {
    let Ok(status) = fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("State:"))
        .is_some_and(|rest| rest.trim_start().starts_with('Z'))
}

#[cfg(not(target_os = "linux"))]
fn is_zombie(_pid: i32) -> bool {
    false
}

/// Field 22 (`starttime`, clock ticks since boot) of `/proc/<pid>/stat`; `None` off Linux or when
/// unreadable.
pub(crate) fn process_start_time(pid: f64) -> Option<u64> {
    let pid = pid_i32(pid)?;
    start_time_of(&format!("/proc/{pid}/stat"))
}

#[cfg(target_os = "linux")]
fn start_time_of(stat_path: &str) -> Option<u64> {
    let stat = fs::read_to_string(stat_path).ok()?;
    parse_stat_starttime(&stat)
}

#[cfg(not(target_os = "linux"))]
fn start_time_of(_stat_path: &str) -> Option<u64> {
    None
}

/// `starttime` from the text of `/proc/<pid>/stat`: the 20th field after the `)` that closes the
/// command name (which may itself contain spaces and parentheses).
pub(crate) fn parse_stat_starttime(stat: &str) -> Option<u64> {
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

/// This process's start time (cached).
pub(crate) fn own_start_time() -> Option<u64> {
    static OWN: LazyLock<Option<u64>> =
        LazyLock::new(|| process_start_time(f64::from(std::process::id())));
    *OWN
}

/// Permission bits of new lock files: `0666 & !umask`, as `open(path, "wx")` gives in node.
pub(crate) fn new_lock_mode() -> u32 {
    static MODE: LazyLock<u32> = LazyLock::new(|| 0o666 & !current_umask());
    *MODE
}

/// The umask, read from `/proc/self/status` (Linux ≥ 4.7) without changing it; 022 elsewhere.
fn current_umask() -> u32 {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o022)
        & 0o777
}

/// What a lock path held when it was read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Content {
    /// The bytes of a regular file (of the symlink's target for a symlink), at most
    /// [`MAX_LOCK_PAYLOAD_BYTES`].
    Bytes(Vec<u8>),
    /// A regular file longer than [`MAX_LOCK_PAYLOAD_BYTES`] (its length): not read; a
    /// malformed payload.
    Oversized(u64),
    /// A symlink whose target does not exist (or loops): a lock without a payload.
    Dangling,
    /// A directory, FIFO, socket or device, or a symlink to one: never opened.
    NotRegular(NonRegularLock),
}

/// A lock file as read: its identity (of the path itself, a symlink not followed), what it
/// held, and its mtime (of the symlink's target when there is one, as the reference's
/// `fs.stat`; of the symlink itself when it dangles).
#[derive(Clone, Debug)]
pub(crate) struct Snapshot {
    pub identity: Identity,
    pub content: Content,
    pub mtime: Option<SystemTime>,
}

impl Snapshot {
    /// The payload: `None` for anything but a readable, parseable JSON object.
    pub(crate) fn payload(&self) -> Option<Payload> {
        match &self.content {
            Content::Bytes(raw) => parse(raw),
            _ => None,
        }
    }

    /// What is at the path when it is not a lock file at all.
    pub(crate) fn not_regular(&self) -> Option<NonRegularLock> {
        match self.content {
            Content::NotRegular(found) => Some(found),
            _ => None,
        }
    }

    /// Whether `other` is the same file with the same bytes (for content that was not read:
    /// the same length or kind and the same mtime).
    pub(crate) fn same_as(&self, other: &Snapshot) -> bool {
        self.identity == other.identity
            && self.content == other.content
            && (matches!(self.content, Content::Bytes(_)) || self.mtime == other.mtime)
    }
}

/// Device and inode (unix); nothing elsewhere (bytes alone then identify a lock).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Identity(Option<(u64, u64)>);

impl Identity {
    #[cfg(unix)]
    pub(crate) fn of(meta: &fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        Identity(Some((meta.dev(), meta.ino())))
    }

    #[cfg(not(unix))]
    pub fn of(_meta: &fs::Metadata) -> Self {
        Identity(None)
    }
}

/// Reads a lock path without ever blocking or reading much; `Ok(None)` when nothing is there.
///
/// - A symlink is followed for the payload (as the reference does), never for the identity.
/// - Only a regular file is opened, non-blocking (a FIFO swapped in between the `stat` and the
///   `open` cannot block it: the descriptor is `fstat`ed and refused unless it is a regular
///   file), and at most [`MAX_LOCK_PAYLOAD_BYTES`] are read; a longer file is
///   [`Content::Oversized`] without being read.
/// - A directory, FIFO, socket or device is [`Content::NotRegular`], never opened.
pub(crate) fn read_snapshot(lock_path: &Path) -> io::Result<Option<Snapshot>> {
    let meta = match fs::symlink_metadata(lock_path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let identity = Identity::of(&meta);
    let via_symlink = meta.file_type().is_symlink();
    let dangling = || Snapshot {
        identity,
        content: Content::Dangling,
        mtime: meta.modified().ok(),
    };
    let target = if via_symlink {
        match fs::metadata(lock_path) {
            Ok(m) => m,
            // A dangling (or looping) symlink: a lock without a payload (judged by its mtime),
            // not a missing lock (which would make the contention loop spin).
            Err(e) if is_dangling(&e) => return Ok(Some(dangling())),
            Err(e) => return Err(e),
        }
    } else {
        meta.clone()
    };
    let not_regular = |target: &fs::Metadata| {
        NonRegularKind::of(target).map(|kind| Snapshot {
            identity,
            content: Content::NotRegular(NonRegularLock { kind, via_symlink }),
            mtime: target.modified().ok(),
        })
    };
    if let Some(s) = not_regular(&target) {
        return Ok(Some(s));
    }
    if target.len() > MAX_LOCK_PAYLOAD_BYTES {
        return Ok(Some(Snapshot {
            identity,
            content: Content::Oversized(target.len()),
            mtime: target.modified().ok(),
        }));
    }
    let file = match crate::io::open_nonblocking(lock_path) {
        Ok(f) => f,
        Err(e) if via_symlink && is_dangling(&e) => return Ok(Some(dangling())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    // The path may have changed between the `stat` and the `open`: judge what was opened.
    let opened = file.metadata()?;
    if let Some(s) = not_regular(&opened) {
        return Ok(Some(s));
    }
    let mut raw = Vec::new();
    file.take(MAX_LOCK_PAYLOAD_BYTES + 1)
        .read_to_end(&mut raw)?;
    let content = if raw.len() as u64 > MAX_LOCK_PAYLOAD_BYTES {
        Content::Oversized(opened.len().max(raw.len() as u64))
    } else {
        Content::Bytes(raw)
    };
    Ok(Some(Snapshot {
        identity,
        content,
        mtime: opened.modified().ok(),
    }))
}

/// `ENOENT` through a symlink (its target is missing) or `ELOOP` (a symlink loop).
fn is_dangling(e: &io::Error) -> bool {
    #[cfg(unix)]
    if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) {
        return true;
    }
    e.kind() == io::ErrorKind::NotFound
}

/// What removing a lock file "if unchanged" did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Removal {
    Removed,
    /// The file is gone or is another file (or has other bytes) than the one judged.
    Changed,
}

/// Removes the lock file only while it is still the file (identity and bytes) in `expected`.
pub(crate) fn remove_if_unchanged(lock_path: &Path, expected: &Snapshot) -> io::Result<Removal> {
    match read_snapshot(lock_path)? {
        Some(current) if current.same_as(expected) => match crate::io::remove_file(lock_path) {
            Ok(()) => Ok(Removal::Removed),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Removal::Changed),
            Err(e) => Err(e),
        },
        _ => Ok(Removal::Changed),
    }
}

/// Removes a **stale** lock file (one judged reclaimable: a dead or recycled holder, an orphan,
/// an old malformed payload) only while it is still the file in `expected`, with the re-check and
/// the removal made atomic with respect to every other process of this crate doing the same.
///
/// Without that, two contenders that judged the same stale file could interleave as "A re-reads
/// (unchanged) · B re-reads (unchanged) · B removes · B creates its fresh lock · A removes" —
/// A then deletes B's live lock and both hold the lock at once (reproduced with four processes
/// reclaiming dead-pid locks: about 2.5 % of the takeovers ended with two holders). The re-check
/// and the removal therefore run under an exclusive `flock` of the lock's directory (no extra
/// file; the kernel drops it when a process dies). Creating a lock needs no guard: a new lock can
/// only appear once the stale one is gone, and every removal of a stale lock holds the guard.
/// Where the directory cannot be opened or locked (e.g. NFS, which does not `flock`
/// directories) the removal goes ahead unguarded, as the reference's always does; the reference
/// itself (and so a node contender) has the same window (docs/DEVIATIONS.md D19 (8)).
pub(crate) fn remove_stale_if_unchanged(
    lock_path: &Path,
    expected: &Snapshot,
) -> io::Result<Removal> {
    let _guard = ReclaimGuard::take(lock_path);
    remove_if_unchanged(lock_path, expected)
}

/// How long a reclaimer waits for another one's directory `flock` before going ahead without
/// it.
const RECLAIM_GUARD_WAIT: Duration = Duration::from_secs(2);

/// An exclusive `flock` on a lock file's directory, released when dropped (the descriptor is
/// closed).
struct ReclaimGuard(Option<fs::File>);

impl ReclaimGuard {
    fn take(lock_path: &Path) -> Self {
        let dir = match lock_path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let f = match fs::File::open(dir) {
            Ok(f) => f,
            Err(e) => {
                tracing::debug!(
                    dir = %dir.display(),
                    "cannot open the lock directory ({e}); removing the stale lock unguarded"
                );
                return ReclaimGuard(None);
            }
        };
        // Other reclaimers hold it for a read and an unlink; anything holding it longer is
        // not one of them, and must not block a lock acquisition past its timeout.
        let give_up = Instant::now() + RECLAIM_GUARD_WAIT;
        loop {
            match f.try_lock() {
                Ok(()) => return ReclaimGuard(Some(f)),
                Err(fs::TryLockError::WouldBlock) if Instant::now() < give_up => {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(e) => {
                    tracing::debug!(
                        dir = %dir.display(),
                        "cannot flock the lock directory ({e}); removing the stale lock unguarded"
                    );
                    return ReclaimGuard(None);
                }
            }
        }
    }
}

impl Drop for ReclaimGuard {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            let _ = f.unlock();
        }
    }
}

/// Milliseconds since a file's mtime (0 for a future mtime).
pub(crate) fn mtime_age(snapshot: &Snapshot) -> Option<Duration> {
    let mtime = snapshot.mtime?;
    Some(
        SystemTime::now()
            .duration_since(mtime)
            .unwrap_or(Duration::ZERO),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_like_the_reference() {
        let text = render(
            4654,
            1_796_009_244_967,
            Duration::from_millis(300_000),
            Some(940_573),
        );
        assert_eq!(
            text,
            "{\n  \"pid\": 4654,\n  \"createdAt\": \"2026-11-30T03:27:24.967Z\",\n  \"maxHoldMs\": 300000,\n  \"starttime\": 940573\n}\n"
        );
        let text = render(7, 0, Duration::from_millis(12_345), None);
        assert_eq!(
            text,
            "{\n  \"pid\": 7,\n  \"createdAt\": \"1970-01-01T00:00:00.000Z\",\n  \"maxHoldMs\": 12345\n}\n"
        );
    }

    #[test]
    fn parses_with_reference_validation() {
        let p = parse(br#"{"pid": 1.0e2, "createdAt": "x", "starttime": -1, "maxHoldMs": 0}"#);
        assert_eq!(
            p,
            Some(Payload {
                pid: Some(100.0),
                created_at: Some("x".to_owned()),
                starttime: None,
                max_hold_ms: None,
            })
        );
        assert_eq!(parse(b""), None);
        assert_eq!(parse(b"[1]"), None);
        assert_eq!(parse(b"{\n  \"pid\": 3"), None);
        assert_eq!(parse(br#"{"pid":"12"}"#).and_then(|p| p.pid), None);
        assert_eq!(parse(br#"{"pid":0}"#).and_then(|p| p.pid), None);
        assert_eq!(parse(br#"{"pid":1.5}"#).and_then(|p| p.pid), None);
    }

    #[test]
    fn stat_starttime_skips_odd_command_names() {
        let stat = "42 (a) b (c) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 777 1000 10";
        assert_eq!(parse_stat_starttime(stat), Some(777));
        assert_eq!(parse_stat_starttime("garbage"), None);
    }

    #[test]
    fn own_start_time_matches_proc_self() {
        if cfg!(target_os = "linux") {
            let stat = fs::read_to_string("/proc/self/stat").unwrap_or_default();
            assert_eq!(own_start_time(), parse_stat_starttime(&stat));
            assert!(own_start_time().is_some());
        }
    }
}
