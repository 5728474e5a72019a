//! The session write lock within one process: the reference's lock behaviours
//! (openclaw-jsonl.md §7.6, §8) with the values observed on OpenClaw 2026.6.11
//! (`xtask/conformance/lock/FINDINGS.md`).
//!
//! Every test works in its own temporary directory; none releases locks it does not own (the
//! process-wide `release_all_held_locks` is exercised in child processes, `lock_processes.rs`).
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

mod lock_common;

use std::path::Path;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use lock_common::{
    Sleeper, age_mtime, dead_pid, iso, lock_of, now_ms, plant, session_in, starttime,
};
use session_store::lock::{
    self, Backoff, LockError, LockOptions, SessionWriteLock, StaleReason, clean_stale_lock_files,
    current_guard, max_hold_from_timeout, with_session_write_lock,
};

fn opts(timeout_ms: u64) -> LockOptions {
    LockOptions::default().with_timeout(Some(Duration::from_millis(timeout_ms)))
}

fn acquire(file: &Path, timeout_ms: u64) -> Result<session_store::WriteLockGuard, LockError> {
    SessionWriteLock::acquire(file, &opts(timeout_ms))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

fn live_payload(pid: u32, starttime: Option<u64>, created_ms: i64) -> String {
    match starttime {
        Some(st) => format!(
            "{{\"pid\":{pid},\"createdAt\":\"{}\",\"starttime\":{st}}}",
            iso(created_ms)
        ),
        None => format!("{{\"pid\":{pid},\"createdAt\":\"{}\"}}", iso(created_ms)),
    }
}

#[test]
fn payload_is_the_references_text_and_mode() {
    let dir = tempfile::tempdir().unwrap();
    let file = session_in(&dir);
    let before = now_ms();
    let guard = acquire(&file, 1000).unwrap();
    let after = now_ms();
    let lock_path = lock_of(&file);
    assert_eq!(guard.lock_path(), lock_path);
    let text = read(&lock_path);
    let pid = std::process::id();
    let st = starttime(pid);
    // Key order, two-space indentation, trailing newline; maxHoldMs = max(5 min, 1 s + 2 min).
    let created = text
        .split("\"createdAt\": \"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap()
        .to_owned();
    assert_eq!(
        text,
        format!(
            "{{\n  \"pid\": {pid},\n  \"createdAt\": \"{created}\",\n  \"maxHoldMs\": 300000,\n  \"starttime\": {st}\n}}\n"
        )
    );
    let created_ms = session_format::time::parse_js_date(&created).unwrap();
    assert!(before <= created_ms && created_ms <= after, "{created}");
    assert_eq!(iso(created_ms), created, "toISOString form");
    // 0666 & !umask, as the reference's open(…, "wx").
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&lock_path).unwrap().permissions().mode() & 0o777;
    let umask = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Umask:"))
        .map(|v| u32::from_str_radix(v.trim(), 8).unwrap())
        .unwrap();
    assert_eq!(mode, 0o666 & !umask);
    // A timeout of 600 s writes 720 000.
    drop(guard);
    assert!(!lock_path.exists());
    let g = SessionWriteLock::acquire(&file, &opts(600_000)).unwrap();
    assert!(read(&lock_path).contains("\"maxHoldMs\": 720000,"));
    drop(g);
    // An explicit max-hold is written as is.
    let g = SessionWriteLock::acquire(
        &file,
        &LockOptions {
            max_hold: Some(Duration::from_millis(12_345)),
            ..opts(1000)
        },
    )
    .unwrap();
    assert!(read(&lock_path).contains("\"maxHoldMs\": 12345,"));
    drop(g);
}

#[test]
fn symlinked_directories_share_one_lock_and_missing_directories_are_created() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let g = acquire(&link.join("s.jsonl"), 1000).unwrap();
    assert_eq!(
        g.lock_path(),
        std::fs::canonicalize(&real).unwrap().join("s.jsonl.lock")
    );
    assert!(real.join("s.jsonl.lock").is_file());
    // Same thread: the other spelling re-enters the same lock.
    let g2 = acquire(&real.join("./x/../s.jsonl"), 1000).unwrap();
    assert_eq!(g2.token(), g.token());
    assert_eq!(g.holders(), 2);
    drop(g);
    drop(g2);
    assert!(!real.join("s.jsonl.lock").exists());

    let nested = dir.path().join("a/b/c/s.jsonl");
    let g = acquire(&nested, 1000).unwrap();
    assert!(dir.path().join("a/b/c/s.jsonl.lock").is_file());
    drop(g);
}

#[test]
fn reentrant_release_keeps_the_file_until_the_last_release() {
    let dir = tempfile::tempdir().unwrap();
    let file = session_in(&dir);
    let lock_path = lock_of(&file);
    let outer = acquire(&file, 1000).unwrap();
    let inner = acquire(&file, 1000).unwrap();
    assert_eq!(inner.token(), outer.token());
    let cloned = inner.clone();
    let current = current_guard(&file).unwrap();
    assert_eq!(outer.holders(), 4);
    assert!(
        SessionWriteLock::for_file(&file)
            .unwrap()
            .is_held_by_current_thread()
    );
    drop(inner);
    assert!(lock_path.exists());
    drop(cloned);
    assert!(lock_path.exists());
    assert!(!current.release().unwrap(), "not the last release");
    assert!(lock_path.exists());
    assert_eq!(outer.holders(), 1);
    assert!(
        outer.release().unwrap(),
        "the last release removes the file"
    );
    assert!(!lock_path.exists());
    assert!(current_guard(&file).is_none());
    assert!(
        !SessionWriteLock::for_file(&file)
            .unwrap()
            .is_held_by_current_thread()
    );
}

#[test]
fn owned_write_context_reuses_the_held_lock_for_nested_writers() {
    let dir = tempfile::tempdir().unwrap();
    let file = session_in(&dir);
    let lock_path = lock_of(&file);
    let tokens = with_session_write_lock(&file, &opts(1000), |outer| {
        // A nested writer (e.g. a transcript mirror append) asks for the lock again.
        let inner = with_session_write_lock(&file, &opts(0), |inner| {
            session_store::io::append_line(
                &file,
                br#"{"type":"custom","id":"n"}"#,
                session_store::Durability::Buffer,
            )
            .unwrap();
            (inner.token(), inner.holders())
        })
        .unwrap();
        assert!(lock_path.exists());
        (outer.token(), inner)
    })
    .unwrap();
    assert_eq!(tokens.0, tokens.1.0);
    assert_eq!(tokens.1.1, 2);
    assert!(!lock_path.exists());
    // Without a held lock, nothing is current.
    assert!(current_guard(&file).is_none());
}

#[test]
fn other_threads_wait_and_time_out_with_the_reference_message() {
    let dir = tempfile::tempdir().unwrap();
    let file = session_in(&dir);
    let lock_path = lock_of(&file);
    let guard = acquire(&file, 1000).unwrap();
    let f2 = file.clone();
    let start = Instant::now();
    let err = std::thread::spawn(move || acquire(&f2, 300).map(|_| ()))
        .join()
        .unwrap()
        .unwrap_err();
    assert!(start.elapsed() >= Duration::from_millis(300));
    let pid = std::process::id();
    match &err {
        LockError::Timeout {
            timeout_ms,
            owner,
            owner_pid,
            owner_alive,
            lock_path: lp,
        } => {
            assert_eq!(*timeout_ms, 300);
            assert_eq!(*owner_pid, Some(u64::from(pid)));
            assert!(*owner_alive);
            assert!(
                owner.starts_with(&format!("pid={pid} alive=true ageMs=")),
                "{owner}"
            );
            assert_eq!(lp, &lock_path);
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    let msg = err.to_string();
    let prefix = format!("session file locked (timeout 300ms): pid={pid} alive=true ageMs=");
    assert!(msg.starts_with(&prefix), "{msg}");
    assert!(msg.ends_with(&format!(" {}", lock_path.display())), "{msg}");
    assert_eq!(err.code(), Some("OPENCLAW_SESSION_WRITE_LOCK_TIMEOUT"));
    assert!(err.is_busy_with_active_run());

    // A waiting thread gets the lock once the holder releases.
    let f3 = file;
    let waiter = std::thread::spawn(move || {
        let g = acquire(&f3, 10_000).unwrap();
        (Instant::now(), g.lock_path().exists())
    });
    std::thread::sleep(Duration::from_millis(200));
    let released = Instant::now();
    drop(guard);
    let (acquired, existed) = waiter.join().unwrap();
    assert!(
        acquired >= released,
        "the waiter got the lock before the release"
    );
    assert!(existed);
    assert!(!lock_path.exists());
}

#[test]
fn threads_of_one_process_never_write_concurrently() {
    // 8 threads × 100 read-modify-write increments of one counter line under the lock.
    let dir = tempfile::tempdir().unwrap();
    let file = session_in(&dir);
    session_store::io::write_raw(&file, b"0\n").unwrap();
    let barrier = Arc::new(Barrier::new(8));
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let file = file.clone();
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                for _ in 0..100 {
                    let g = SessionWriteLock::acquire(&file, &LockOptions::default()).unwrap();
                    let n: u64 = read(&file).trim().parse().unwrap();
                    std::thread::yield_now();
                    session_store::io::write_raw(&file, format!("{}\n", n + 1).as_bytes()).unwrap();
                    drop(g);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(read(&file), "800\n");
    assert!(!lock_of(&file).exists());
}

#[test]
fn stale_lock_of_a_dead_pid_is_reclaimed() {
    let dir = tempfile::tempdir().unwrap();
    let file = session_in(&dir);
    let lock_path = lock_of(&file);
    for payload in [
        live_payload(dead_pid(), None, now_ms()),
        format!("{{\"pid\":{}}}", dead_pid()), // dead pid and no createdAt: not a mtime case
        live_payload(dead_pid(), None, now_ms() - 2 * 3_600_000), // dead and too old
    ] {
        plant(&lock_path, payload.as_bytes());
        let start = Instant::now();
        let g = acquire(&file, 2000).unwrap();
        assert!(start.elapsed() < Duration::from_secs(1), "{payload}");
        assert!(read(&lock_path).contains(&format!("\"pid\": {}", std::process::id())));
        drop(g);
        assert!(!lock_path.exists());
    }
}

#[test]
fn fresh_malformed_lock_is_respected_until_its_mtime_is_old() {
    let dir = tempfile::tempdir().unwrap();
    let file = session_in(&dir);
    let lock_path = lock_of(&file);
    for bytes in [&b"{}"[..], b"", b"not json", b"[1]", b"{\n  \"pid\": 12"] {
        plant(&lock_path, bytes);
        // Fresh: respected until the timeout.
        let err = acquire(&file, 300).unwrap_err();
        let LockError::Timeout {
            owner, owner_pid, ..
        } = &err
        else {
            panic!("expected a timeout, got {err:?}");
        };
        assert_eq!(owner, "owner=unknown");
        assert_eq!(*owner_pid, None);
        assert_eq!(
            err.to_string(),
            format!(
                "session file locked (timeout 300ms): owner=unknown {}",
                lock_path.display()
            )
        );
        assert_eq!(read(&lock_path).as_bytes(), bytes, "left in place");
        // A timeout under 30 s reclaims after 5 s of mtime age: 4 s is not enough…
        age_mtime(&lock_path, Duration::from_secs(4));
        assert!(matches!(
            acquire(&file, 300),
            Err(LockError::Timeout { .. })
        ));
        // …6 s is.
        age_mtime(&lock_path, Duration::from_secs(6));
        let g = acquire(&file, 300).unwrap();
        drop(g);
        assert!(!lock_path.exists());
    }
    // With a long timeout the grace is min(stale, 30 s): a 2 s stale age and a 3 s old `{}`.
    plant(&lock_path, b"{}");
    age_mtime(&lock_path, Duration::from_secs(3));
    let long = LockOptions {
        stale: Duration::from_secs(2),
        ..opts(40_000)
    };
    let start = Instant::now();
    drop(SessionWriteLock::acquire(&file, &long).unwrap());
    assert!(start.elapsed() < Duration::from_secs(2));
    // …and 30 s with the default stale age (30 min) and a timeout of 30 s or more: a waiter
    // respects a 29 s old `{}`, then reclaims it once it is older than 30 s.
    plant(&lock_path, b"{}");
    age_mtime(&lock_path, Duration::from_secs(29));
    let waiter = std::thread::spawn(move || {
        let g = SessionWriteLock::acquire(&file, &opts(40_000)).unwrap();
        g.release().unwrap()
    });
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(read(&lock_path), "{}", "respected while younger than 30 s");
    age_mtime(&lock_path, Duration::from_secs(31));
    assert!(waiter.join().unwrap());
    assert!(!lock_path.exists());
}

#[test]
fn a_live_pid_without_created_at_falls_back_to_the_mtime_too() {
    let dir = tempfile::tempdir().unwrap();
    let file = session_in(&dir);
    let lock_path = lock_of(&file);
    let sleeper = Sleeper::start();
    let pid = sleeper.pid();
    let st = starttime(pid);
    plant(
        &lock_path,
        format!("{{\"pid\":{pid},\"createdAt\":\"garbage\",\"starttime\":{st}}}").as_bytes(),
    );
    let err = acquire(&file, 200).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "session file locked (timeout 200ms): pid={pid} alive=true {}",
            lock_path.display()
        )
    );
    age_mtime(&lock_path, Duration::from_secs(6));
    drop(acquire(&file, 200).unwrap());
    // createdAt without a pid: `owner=unknown ageMs=…`.
    plant(
        &lock_path,
        format!("{{\"createdAt\":\"{}\"}}", iso(now_ms() - 1000)).as_bytes(),
    );
    let err = acquire(&file, 200).unwrap_err();
    let LockError::Timeout { owner, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(owner.starts_with("owner=unknown ageMs=1"), "{owner}");
}

#[test]
fn a_live_holder_is_respected() {
    let dir = tempfile::tempdir().unwrap();
    let file = session_in(&dir);
    let lock_path = lock_of(&file);
    let sleeper = Sleeper::start();
    let pid = sleeper.pid();
    for st in [Some(starttime(pid)), None] {
        plant(
            &lock_path,
            live_payload(pid, st, now_ms() - 1500).as_bytes(),
        );
        let err = acquire(&file, 300).unwrap_err();
        let LockError::Timeout {
            owner,
            owner_pid,
            owner_alive,
            ..
        } = &err
        else {
            panic!("{err:?}")
        };
        assert_eq!(*owner_pid, Some(u64::from(pid)));
        assert!(*owner_alive);
        assert!(
            owner.starts_with(&format!("pid={pid} alive=true ageMs=18")),
            "{owner}"
        );
        assert!(!err.is_busy_with_active_run());
        // A `starttime` that is not a number is ignored (not a recycled pid).
        plant(
            &lock_path,
            format!(
                "{{\"pid\":{pid},\"createdAt\":\"{}\",\"starttime\":\"1\"}}",
                iso(now_ms())
            )
            .as_bytes(),
        );
        assert!(matches!(
            acquire(&file, 200),
            Err(LockError::Timeout { .. })
        ));
    }
}

#[test]
fn recycled_pid_is_reclaimed() {
    let dir = tempfile::tempdir().unwrap();
    let file = session_in(&dir);
    let lock_path = lock_of(&file);
    let sleeper = Sleeper::start();
    let pid = sleeper.pid();
    let other_start = starttime(pid) + 1;
    plant(
        &lock_path,
        live_payload(pid, Some(other_start), now_ms()).as_bytes(),
    );
    let start = Instant::now();
    let g = acquire(&file, 2000).unwrap();
    assert!(start.elapsed() < Duration::from_secs(1));
    drop(g);
}

#[test]
fn orphan_self_pid_locks_are_reclaimed_but_in_process_holders_are_not() {
    let dir = tempfile::tempdir().unwrap();
    let file = session_in(&dir);
    let lock_path = lock_of(&file);
    let me = std::process::id();
    // Our pid, not held here: without starttime, with ours, with another one (recycled).
    for st in [None, Some(starttime(me)), Some(5)] {
        plant(&lock_path, live_payload(me, st, now_ms()).as_bytes());
        let start = Instant::now();
        let g = acquire(&file, 2000).unwrap();
        assert!(start.elapsed() < Duration::from_secs(1), "{st:?}");
        drop(g);
    }
    // Held by a thread of this process, with no or a malformed starttime in the file: other
    // threads wait for it.
    let g = acquire(&file, 1000).unwrap();
    for payload in [
        live_payload(me, None, now_ms()),
        format!(
            "{{\"pid\":{me},\"createdAt\":\"{}\",\"starttime\":-1}}",
            iso(now_ms())
        ),
    ] {
        plant(&lock_path, payload.as_bytes());
        let f2 = file.clone();
        let err = std::thread::spawn(move || acquire(&f2, 200).map(|_| ()))
            .join()
            .unwrap()
            .unwrap_err();
        assert!(err.is_busy_with_active_run(), "{err}");
        assert_eq!(read(&lock_path), payload);
    }
    // The file is no longer ours: our release leaves it alone.
    assert!(!g.release().unwrap());
    assert!(lock_path.exists());
    std::fs::remove_file(&lock_path).unwrap();
}

#[test]
fn long_held_live_locks_fail_with_a_stale_error_instead_of_being_reclaimed() {
    let dir = tempfile::tempdir().unwrap();
    let file = session_in(&dir);
    let lock_path = lock_of(&file);
    let sleeper = Sleeper::start();
    let pid = sleeper.pid();
    let st = starttime(pid);
    // Older than the stale age (30 min): too-old.
    plant(
        &lock_path,
        live_payload(pid, Some(st), now_ms() - 2 * 3_600_000).as_bytes(),
    );
    let start = Instant::now();
    let err = acquire(&file, 5000).unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(1), "fails at once");
    let LockError::Stale {
        reasons,
        owner,
        owner_pid,
        owner_alive,
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(reasons, &[StaleReason::TooOld]);
    assert_eq!(*owner_pid, Some(u64::from(pid)));
    assert!(*owner_alive);
    assert!(
        owner.starts_with(&format!("pid={pid} alive=true ageMs=72000")),
        "{owner}"
    );
    assert!(
        err.to_string().starts_with(&format!(
            "session file lock stale (too-old): pid={pid} alive=true ageMs=72000"
        )),
        "{err}"
    );
    assert_eq!(err.code(), Some("OPENCLAW_SESSION_WRITE_LOCK_STALE"));
    assert!(lock_path.exists(), "not reclaimed");
    // Older than the holder's own maxHoldMs: hold-exceeded.
    plant(
        &lock_path,
        format!(
            "{{\"pid\":{pid},\"createdAt\":\"{}\",\"maxHoldMs\":300000,\"starttime\":{st}}}",
            iso(now_ms() - 600_000)
        )
        .as_bytes(),
    );
    let err = acquire(&file, 5000).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("session file lock stale (hold-exceeded): "),
        "{err}"
    );
    // Ten minutes without maxHoldMs: live, waited for.
    plant(
        &lock_path,
        live_payload(pid, Some(st), now_ms() - 600_000).as_bytes(),
    );
    assert!(matches!(
        acquire(&file, 200),
        Err(LockError::Timeout { .. })
    ));
    // A createdAt in the future: age 0, live.
    plant(
        &lock_path,
        live_payload(pid, Some(st), now_ms() + 600_000).as_bytes(),
    );
    let err = acquire(&file, 200).unwrap_err();
    assert!(err.to_string().contains(" alive=true ageMs=0 "), "{err}");
}

#[test]
fn zero_timeout_tries_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = session_in(&dir);
    let sleeper = Sleeper::start();
    plant(
        &lock_of(&file),
        live_payload(sleeper.pid(), None, now_ms()).as_bytes(),
    );
    let start = Instant::now();
    let err = SessionWriteLock::acquire(&file, &opts(0)).unwrap_err();
    assert!(start.elapsed() < Duration::from_millis(500));
    assert!(
        err.to_string()
            .starts_with("session file locked (timeout 0ms): pid=")
    );
}

#[test]
fn max_hold_arithmetic() {
    let s = Duration::from_secs;
    let ms = Duration::from_millis;
    assert_eq!(
        max_hold_from_timeout(Some(ms(600_000)), s(300), s(120)),
        ms(720_000)
    );
    assert_eq!(
        max_hold_from_timeout(Some(ms(1000)), ms(5000), s(120)),
        ms(121_000)
    );
    assert_eq!(
        max_hold_from_timeout(Some(ms(1000)), s(300), s(120)),
        ms(300_000)
    );
    assert_eq!(
        max_hold_from_timeout(None, s(300), s(120)),
        ms(2_147_000_000)
    );
    assert_eq!(
        max_hold_from_timeout(Some(ms(2_147_000_000)), s(300), s(120)),
        ms(2_147_000_000)
    );
    assert_eq!(LockOptions::default().effective_max_hold(), ms(300_000));
    assert_eq!(
        LockOptions::default()
            .with_timeout(None)
            .effective_max_hold(),
        ms(2_147_000_000)
    );
    assert_eq!(
        LockOptions::default()
            .with_timeout(Some(ms(600_000)))
            .effective_max_hold(),
        ms(720_000)
    );
    let d = LockOptions::default();
    assert_eq!(d.timeout, Some(ms(60_000)));
    assert_eq!(d.stale, ms(1_800_000));
    // Backoff: min(1000, 50·attempt) by default; the reference's fixed 50 ms as an option.
    let b = Backoff::default();
    let delays: Vec<u128> = [1, 2, 3, 19, 20, 21, 100]
        .iter()
        .map(|&a| b.delay(a).as_millis())
        .collect();
    assert_eq!(delays, [50, 100, 150, 950, 1000, 1000, 1000]);
    assert_eq!(Backoff::Fixed(ms(50)).delay(7), ms(50));
}

#[test]
fn watchdog_releases_over_held_locks_and_the_old_guard_does_not_free_a_newer_lock() {
    let dir = tempfile::tempdir().unwrap();
    let file = session_in(&dir);
    let lock_path = lock_of(&file);
    let short = LockOptions {
        max_hold: Some(Duration::from_millis(150)),
        ..opts(1000)
    };
    let old = SessionWriteLock::acquire(&file, &short).unwrap();
    assert!(read(&lock_path).contains("\"maxHoldMs\": 150,"));
    // The background watchdog (woken by the acquisition) releases it shortly after 150 ms.
    let start = Instant::now();
    while lock_path.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "watchdog did not fire"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(start.elapsed() >= Duration::from_millis(100));
    assert!(!old.is_active());
    assert_eq!(old.holders(), 0);
    // A new lock on the same file (this thread still holds the in-process mutex, so it re-enters
    // it and creates a new lock file with a new token).
    let newer = acquire(&file, 1000).unwrap();
    assert_ne!(newer.token(), old.token());
    let newer_text = read(&lock_path);
    let old_clone = old.clone();
    assert!(!old_clone.is_active());
    drop(old_clone);
    assert!(!old.release().unwrap(), "the old guard removes nothing");
    assert_eq!(read(&lock_path), newer_text, "the newer lock survives");
    assert!(newer.is_active());
    // A manual check does not release a lock within its max-hold.
    assert_eq!(lock::run_watchdog_check(), 0);
    drop(newer);
    assert!(!lock_path.exists());
}

#[test]
fn watchdog_check_can_be_run_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let file = session_in(&dir);
    let lock_path = lock_of(&file);
    let g = SessionWriteLock::acquire(
        &file,
        &LockOptions {
            max_hold: Some(Duration::from_millis(1)),
            ..opts(1000)
        },
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(5));
    // The background thread may get there first: either way the lock is gone.
    let _ = lock::run_watchdog_check();
    assert!(!g.is_active());
    assert!(!lock_path.exists());
    drop(g);
}

#[test]
fn a_lock_replaced_by_another_holder_is_not_removed_by_our_release() {
    let dir = tempfile::tempdir().unwrap();
    let file = session_in(&dir);
    let lock_path = lock_of(&file);
    let g = acquire(&file, 1000).unwrap();
    // Another process removed ours and created its own (e.g. OpenClaw reclaiming it as
    // `non-openclaw-owner`; see lock_interop.rs).
    std::fs::remove_file(&lock_path).unwrap();
    let theirs = live_payload(dead_pid(), None, now_ms());
    plant(&lock_path, theirs.as_bytes());
    drop(g);
    assert_eq!(read(&lock_path), theirs);
    // Same bytes but another file (inode; renamed over ours): also left alone.
    std::fs::remove_file(&lock_path).unwrap();
    let g = acquire(&file, 1000).unwrap();
    let ours = read(&lock_path);
    plant(&lock_path, ours.as_bytes());
    assert!(!g.release().unwrap());
    assert_eq!(read(&lock_path), ours);
}

#[test]
fn clean_stale_lock_files_removes_dead_and_orphaned_locks_and_keeps_live_ones() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sleeper = Sleeper::start();
    let live = sleeper.pid();
    let live_st = starttime(live);
    let me = std::process::id();
    let now = now_ms();
    let p = |name: &str| d.join(name);
    plant(
        &p("dead.jsonl.lock"),
        live_payload(dead_pid(), None, now).as_bytes(),
    );
    plant(
        &p("fresh.jsonl.lock"),
        live_payload(live, Some(live_st), now).as_bytes(),
    );
    plant(
        &p("old-live.jsonl.lock"),
        live_payload(live, Some(live_st), now - 2 * 3_600_000).as_bytes(),
    );
    plant(
        &p("old-dead.jsonl.lock"),
        live_payload(dead_pid(), None, now - 2 * 3_600_000).as_bytes(),
    );
    plant(
        &p("recycled.jsonl.lock"),
        live_payload(live, Some(1), now).as_bytes(),
    );
    plant(&p("empty-fresh.jsonl.lock"), b"{}");
    plant(&p("empty-old.jsonl.lock"), b"{}");
    age_mtime(&p("empty-old.jsonl.lock"), Duration::from_secs(60));
    plant(
        &p("orphan.jsonl.lock"),
        live_payload(me, Some(starttime(me)), now).as_bytes(),
    );
    plant(
        &p("self-no-st.jsonl.lock"),
        live_payload(me, None, now).as_bytes(),
    );
    plant(&p("other.lock"), b"{}");
    plant(&p("s.jsonl"), b"");
    // Held by this process: never removed, whatever its payload.
    let held = acquire(&p("held.jsonl"), 1000).unwrap();

    // Report only.
    let report = clean_stale_lock_files(d, lock::DEFAULT_STALE, false).unwrap();
    assert!(report.iter().all(|l| !l.removed));
    let names: Vec<String> = report
        .iter()
        .map(|l| {
            l.lock_path
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(
        names,
        [
            "dead.jsonl.lock",
            "empty-fresh.jsonl.lock",
            "empty-old.jsonl.lock",
            "fresh.jsonl.lock",
            "held.jsonl.lock",
            "old-dead.jsonl.lock",
            "old-live.jsonl.lock",
            "orphan.jsonl.lock",
            "recycled.jsonl.lock",
            "self-no-st.jsonl.lock",
        ]
    );
    let report = clean_stale_lock_files(d, lock::DEFAULT_STALE, true).unwrap();
    let by_name = |n: &str| {
        report
            .iter()
            .find(|l| l.lock_path.file_name().unwrap() == n)
            .unwrap()
            .clone()
    };
    use StaleReason::*;
    let expect = [
        ("dead.jsonl.lock", vec![DeadPid], true),
        (
            "empty-fresh.jsonl.lock",
            vec![MissingPid, InvalidCreatedAt],
            false,
        ),
        (
            "empty-old.jsonl.lock",
            vec![MissingPid, InvalidCreatedAt],
            true,
        ),
        ("fresh.jsonl.lock", vec![], false),
        ("held.jsonl.lock", vec![], false),
        ("old-dead.jsonl.lock", vec![DeadPid, TooOld], true),
        ("old-live.jsonl.lock", vec![TooOld], false),
        ("orphan.jsonl.lock", vec![OrphanSelfPid], true),
        ("recycled.jsonl.lock", vec![RecycledPid], true),
        ("self-no-st.jsonl.lock", vec![], false),
    ];
    for (name, reasons, removed) in expect {
        let info = by_name(name);
        assert_eq!(info.stale_reasons, reasons, "{name}");
        assert_eq!(info.removed, removed, "{name}");
        assert_eq!(info.is_stale(), !reasons.is_empty(), "{name}");
        assert_eq!(d.join(name).exists(), !removed, "{name}");
    }
    let fresh = by_name("fresh.jsonl.lock");
    assert_eq!(fresh.pid, Some(u64::from(live)));
    assert!(fresh.pid_alive);
    assert!(fresh.age_ms.is_some_and(|a| a < 60_000));
    assert!(d.join("other.lock").exists());
    drop(held);
    // A missing directory is an empty report.
    assert!(
        clean_stale_lock_files(&d.join("nope"), lock::DEFAULT_STALE, true)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn options_from_the_environment() {
    // `std::env::set_var` is `unsafe` in edition 2024 (and the workspace denies unsafe code), so
    // the parsing is checked in child processes with their own environment.
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "env_child",
            "--nocapture",
            "--test-threads",
            "1",
            "-q",
        ])
        .env(lock_common::CHILD_MODE_ENV, "env")
        .env(lock::ENV_ACQUIRE_TIMEOUT_MS, "Infinity")
        .env(lock::ENV_STALE_MS, " 1234 ")
        .env(lock::ENV_MAX_HOLD_MS, "12.5")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("@@lock timeout=None stale=1234 max_hold=None"),
        "{text}"
    );
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "env_child",
            "--nocapture",
            "--test-threads",
            "1",
            "-q",
        ])
        .env(lock_common::CHILD_MODE_ENV, "env")
        .env(lock::ENV_ACQUIRE_TIMEOUT_MS, "2500")
        .env(lock::ENV_STALE_MS, "-5")
        .env(lock::ENV_MAX_HOLD_MS, "900")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("@@lock timeout=Some(2500) stale=1800000 max_hold=Some(900)"),
        "{text}"
    );
}

#[test]
fn env_child() {
    if std::env::var(lock_common::CHILD_MODE_ENV).as_deref() != Ok("env") {
        return;
    }
    let o = LockOptions::from_env();
    lock_common::mark(&format!(
        "timeout={:?} stale={} max_hold={:?}",
        o.timeout.map(|t| t.as_millis()),
        o.stale.as_millis(),
        o.max_hold.map(|t| t.as_millis())
    ));
}

#[test]
fn a_dangling_symlink_in_place_of_the_lock_is_a_malformed_lock() {
    let dir = tempfile::tempdir().unwrap();
    let file = session_in(&dir);
    let lock_path = lock_of(&file);
    std::os::unix::fs::symlink(dir.path().join("nowhere"), &lock_path).unwrap();
    // Respected while fresh (no spinning on "vanished"), reclaimed once old.
    assert!(matches!(
        acquire(&file, 300),
        Err(LockError::Timeout { .. })
    ));
    let old = filetime::FileTime::from_system_time(
        std::time::SystemTime::now() - Duration::from_secs(10),
    );
    filetime::set_symlink_file_times(&lock_path, old, old).unwrap();
    drop(acquire(&file, 300).unwrap());
    assert!(std::fs::symlink_metadata(&lock_path).is_err());
}
