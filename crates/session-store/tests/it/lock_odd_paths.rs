//! Lock paths that do not hold a lock file (a FIFO, a directory, a device, symlinks) and lock
//! files too large to be a payload: never blocking, never reading much, never removing what is
//! not a lock file (docs/DEVIATIONS.md D19 (9), (10)).
//!
//! Each acquisition runs on a helper thread watched by a channel, so a regression (an open that
//! blocks on a FIFO, a read of `/dev/zero` that never ends) fails the test instead of hanging it.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use crate::lock_common::{age_mtime, dead_pid, iso, lock_of, now_ms, plant, session_in};
use session_store::lock::{
    LockError, LockFileInfo, LockOptions, MAX_LOCK_PAYLOAD_BYTES, NonRegularKind, NonRegularLock,
    SessionWriteLock, StaleReason, clean_stale_lock_files, inspect_session_lock,
};

/// How long a helper thread may take before the test calls it hung.
const HANG: Duration = Duration::from_secs(60);

fn mkfifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
}

/// Runs `f` on a helper thread; panics when it has not returned within [`HANG`].
fn bounded<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(HANG)
        .expect("the operation blocked (a FIFO open or an endless read)")
}

/// Acquires on a helper thread (the guard is released there) and returns the error.
fn acquire_error(file: &Path, timeout: Duration) -> LockError {
    let file = file.to_path_buf();
    bounded(move || {
        SessionWriteLock::acquire(&file, &LockOptions::default().with_timeout(Some(timeout)))
            .map(drop)
            .expect_err("the lock was acquired")
    })
}

fn clean(dir: &Path, remove: bool) -> Vec<LockFileInfo> {
    let dir = dir.to_path_buf();
    bounded(move || clean_stale_lock_files(&dir, Duration::from_secs(1800), remove).unwrap())
}

fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// Name, reasons, reclaimable, removed, not a lock file.
type Row = (String, Vec<StaleReason>, bool, bool, Option<NonRegularLock>);

const MALFORMED: [StaleReason; 2] = [StaleReason::MissingPid, StaleReason::InvalidCreatedAt];

#[test]
fn a_fifo_at_the_lock_path_fails_the_acquisition_at_once_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = session_in(&dir);
    let lock_path = lock_of(&file);
    mkfifo(&lock_path);
    // A 60 s timeout: the error comes at once, not after waiting (the FIFO never goes away).
    let err = acquire_error(&file, Duration::from_secs(60));
    let LockError::NotALockFile {
        found,
        lock_path: at,
    } = &err
    else {
        panic!("unexpected error {err:?}");
    };
    assert_eq!(
        *found,
        NonRegularLock {
            kind: NonRegularKind::Fifo,
            via_symlink: false
        }
    );
    assert_eq!(at, &lock_path);
    assert_eq!(err.lock_path(), lock_path);
    assert_eq!(err.code(), None);
    assert_eq!(
        err.to_string(),
        format!(
            "session write lock {} is a FIFO, not a lock file: the session counts as locked \
             (remove it by hand if no writer uses it)",
            lock_path.display()
        )
    );
    // Never removed.
    assert!(
        std::fs::symlink_metadata(&lock_path)
            .unwrap()
            .file_type()
            .is_fifo()
    );

    // `inspect_session_lock` (what archive and clear ask) reports it as held, without opening it.
    let info =
        bounded(move || inspect_session_lock(&file, Duration::from_secs(1800)).unwrap()).unwrap();
    assert_eq!(info.lock_path, lock_path);
    assert_eq!(info.pid, None);
    assert_eq!(info.stale_reasons, MALFORMED);
    assert!(!info.reclaimable);
    assert!(info.is_held());
    assert_eq!(
        info.not_regular,
        Some(NonRegularLock {
            kind: NonRegularKind::Fifo,
            via_symlink: false
        })
    );
}

#[test]
fn a_directory_at_the_lock_path_fails_at_once_and_stays() {
    let dir = tempfile::tempdir().unwrap();
    let file = session_in(&dir);
    let lock_path = lock_of(&file);
    std::fs::create_dir(&lock_path).unwrap();
    // Even an old directory is never reclaimed (the reference fails with EISDIR here too).
    age_mtime(&lock_path, Duration::from_secs(7200));
    let err = acquire_error(&file, Duration::from_secs(60));
    assert_eq!(
        err.to_string(),
        format!(
            "session write lock {} is a directory, not a lock file: the session counts as \
             locked (remove it by hand if no writer uses it)",
            lock_path.display()
        )
    );
    assert!(std::fs::metadata(&lock_path).unwrap().is_dir());
}

#[test]
fn a_symlink_to_dev_zero_is_never_read() {
    let dir = tempfile::tempdir().unwrap();
    let file = session_in(&dir);
    let lock_path = lock_of(&file);
    std::os::unix::fs::symlink("/dev/zero", &lock_path).unwrap();
    let err = acquire_error(&file, Duration::from_secs(60));
    let LockError::NotALockFile { found, .. } = &err else {
        panic!("unexpected error {err:?}");
    };
    assert_eq!(
        *found,
        NonRegularLock {
            kind: NonRegularKind::CharDevice,
            via_symlink: true
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "session write lock {} is a symlink to a character device, not a lock file: the \
             session counts as locked (remove it by hand if no writer uses it)",
            lock_path.display()
        )
    );
    assert!(
        std::fs::symlink_metadata(&lock_path)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

/// A valid payload (a dead holder) padded past the cap: the reference parses it and reclaims
/// the lock at once; here it is not read, so it is a malformed payload, respected while fresh.
#[test]
fn a_lock_file_over_the_cap_is_a_malformed_payload_and_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let file = session_in(&dir);
    let lock_path = lock_of(&file);
    let mut bytes = format!(
        "{{\"pid\":{},\"createdAt\":\"{}\"}}",
        dead_pid(),
        iso(now_ms())
    )
    .into_bytes();
    let cap = usize::try_from(MAX_LOCK_PAYLOAD_BYTES).unwrap();
    bytes.resize(cap + 1, b' ');
    plant(&lock_path, &bytes);
    let err = acquire_error(&file, Duration::ZERO);
    let LockError::Timeout {
        owner, owner_pid, ..
    } = &err
    else {
        panic!("unexpected error {err:?}");
    };
    assert_eq!(owner, "owner=unknown");
    assert_eq!(*owner_pid, None);
    assert_eq!(std::fs::read(&lock_path).unwrap(), bytes);

    // Exactly at the cap it is read and parsed: the dead holder's lock is reclaimed at once.
    bytes.truncate(cap);
    plant(&lock_path, &bytes);
    let file2 = file.clone();
    bounded(move || {
        SessionWriteLock::acquire(
            &file2,
            &LockOptions::default().with_timeout(Some(Duration::ZERO)),
        )
        .map(drop)
        .unwrap();
    });
    assert!(!lock_path.exists());

    // A 3 GB sparse file: never read (no 3 GB buffer); once its mtime is past the grace it is
    // reclaimed like any malformed payload.
    session_store::io::write_raw(&lock_path, b"x").unwrap();
    sparse_len(&lock_path, 3_000_000_000);
    age_mtime(&lock_path, Duration::from_secs(60));
    let info = bounded({
        let file = file.clone();
        move || inspect_session_lock(&file, Duration::from_secs(1800)).unwrap()
    })
    .unwrap();
    assert_eq!(info.stale_reasons, MALFORMED);
    assert!(info.reclaimable);
    assert_eq!(info.not_regular, None);
    bounded(move || {
        SessionWriteLock::acquire(
            &file,
            &LockOptions::default().with_timeout(Some(Duration::ZERO)),
        )
        .map(drop)
        .unwrap();
    });
    assert!(!lock_path.exists());
}

#[allow(clippy::disallowed_methods)] // Plays another program leaving a huge sparse file.
fn sparse_len(path: &Path, len: u64) {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len)
        .unwrap();
}

/// `unlock --stale` over odd entries: every `*.jsonl.lock` is listed whatever its type, with the
/// reasons the reference gives (`missing-pid, invalid-createdAt` for a directory or an entry
/// without a payload); symlinks are judged by their target's payload and removed themselves,
/// never their target; directories, FIFOs and devices are never removed.
#[test]
fn clean_lists_directories_fifos_and_symlinks_and_removes_only_stale_lock_files() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    std::fs::create_dir(&sessions).unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let at = |n: &str| -> PathBuf { sessions.join(n) };

    std::fs::create_dir(at("a-dir.jsonl.lock")).unwrap();
    age_mtime(&at("a-dir.jsonl.lock"), Duration::from_secs(7200));
    mkfifo(&at("b-fifo.jsonl.lock"));
    // A symlink to a dead holder's lock file outside: judged by the target, the symlink removed.
    let dead_target = outside.join("dead.lock");
    let dead_payload = format!(
        "{{\"pid\":{},\"createdAt\":\"{}\"}}",
        dead_pid(),
        iso(now_ms())
    );
    plant(&dead_target, dead_payload.as_bytes());
    std::os::unix::fs::symlink(&dead_target, at("c-sym-dead.jsonl.lock")).unwrap();
    // A dangling symlink, old: a lock without a payload past its grace.
    std::os::unix::fs::symlink(outside.join("missing"), at("d-dangling.jsonl.lock")).unwrap();
    filetime::set_symlink_file_times(
        at("d-dangling.jsonl.lock"),
        filetime::FileTime::from_unix_time(1_000_000_000, 0),
        filetime::FileTime::from_unix_time(1_000_000_000, 0),
    )
    .unwrap();
    // A symlink to a directory.
    std::os::unix::fs::symlink(&outside, at("e-sym-dir.jsonl.lock")).unwrap();
    // A symlink to a fresh malformed lock: kept.
    let fresh_target = outside.join("fresh.lock");
    plant(&fresh_target, b"{}");
    std::os::unix::fs::symlink(&fresh_target, at("f-sym-fresh.jsonl.lock")).unwrap();
    // Not a lock name.
    std::fs::create_dir(at("other.lock")).unwrap();

    let summary = |infos: &[LockFileInfo]| -> Vec<Row> {
        infos
            .iter()
            .map(|i| {
                (
                    name(&i.lock_path),
                    i.stale_reasons.clone(),
                    i.reclaimable,
                    i.removed,
                    i.not_regular,
                )
            })
            .collect()
    };
    let dir_kind = |via_symlink| {
        Some(NonRegularLock {
            kind: NonRegularKind::Directory,
            via_symlink,
        })
    };
    let fifo = Some(NonRegularLock {
        kind: NonRegularKind::Fifo,
        via_symlink: false,
    });
    let m = MALFORMED.to_vec();
    let expected = |removed: bool| {
        vec![
            (
                "a-dir.jsonl.lock".to_owned(),
                m.clone(),
                false,
                false,
                dir_kind(false),
            ),
            (
                "b-fifo.jsonl.lock".to_owned(),
                m.clone(),
                false,
                false,
                fifo,
            ),
            (
                "c-sym-dead.jsonl.lock".to_owned(),
                vec![StaleReason::DeadPid],
                true,
                removed,
                None,
            ),
            (
                "d-dangling.jsonl.lock".to_owned(),
                m.clone(),
                true,
                removed,
                None,
            ),
            (
                "e-sym-dir.jsonl.lock".to_owned(),
                m.clone(),
                false,
                false,
                dir_kind(true),
            ),
            (
                "f-sym-fresh.jsonl.lock".to_owned(),
                m.clone(),
                false,
                false,
                None,
            ),
        ]
    };
    assert_eq!(summary(&clean(&sessions, false)), expected(false));
    assert_eq!(summary(&clean(&sessions, true)), expected(true));

    let mut left: Vec<String> = std::fs::read_dir(&sessions)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        [
            "a-dir.jsonl.lock",
            "b-fifo.jsonl.lock",
            "e-sym-dir.jsonl.lock",
            "f-sym-fresh.jsonl.lock",
            "other.lock"
        ]
    );
    // The symlinks' targets are untouched.
    assert_eq!(std::fs::read_to_string(&dead_target).unwrap(), dead_payload);
    assert_eq!(std::fs::read(&fresh_target).unwrap(), b"{}");
    assert!(outside.is_dir());
}
