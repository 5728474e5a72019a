//! The session write lock between real OS processes: this test binary re-runs itself in a child
//! mode (`SESSION_LOCK_TEST_CHILD`, test `child_entry`) to get writers with their own pids.
//!
//! - 4 processes × 500 appends through the lock: 2 000 complete lines, unique ids, and a
//!   read-modify-write counter that proves mutual exclusion (each append reads the previous
//!   line's `n` under the lock);
//! - a holder in another process makes us wait, and a timeout names it (`pid=<child> alive=true`);
//! - SIGINT/SIGTERM/SIGQUIT/SIGABRT with `install_signal_cleanup`: the lock file is removed and
//!   the process dies of the signal;
//! - `release_all_held_locks` before `process::exit` removes the file; without it the file stays
//!   and the next writer reclaims it as `dead-pid`;
//! - the watchdog's forced release logs the reference's `[session-write-lock] releasing lock held
//!   for <n>ms (max=<m>ms): <lockPath>` at `warn`.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

mod lock_common;

use std::collections::HashSet;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lock_common::{
    CHILD_MODE_ENV, MARK, Marked, assert_contended_and_released, child_command, json_lines,
    lock_of, mark,
};
use session_format::json::JsValue;
use session_store::Durability;
use session_store::lock::{self, Backoff, LockError, LockOptions, SessionWriteLock};

const WRITERS: usize = 4;
const APPENDS: usize = 500;

fn env(key: &str) -> String {
    std::env::var(key).unwrap_or_else(|_| panic!("{key} not set"))
}

/// The child side. Does nothing when the test binary runs normally.
#[test]
fn child_entry() {
    let Ok(mode) = std::env::var(CHILD_MODE_ENV) else {
        return;
    };
    match mode.as_str() {
        "stress" => stress_child(),
        "hold" => lock_common::hold_child(),
        "signal" => signal_child(),
        "exit" => exit_child(),
        "watchdog" => watchdog_child(),
        other => panic!("unknown child mode {other}"),
    }
}

/// The last line's `n` + 1 (0 for an empty file).
fn next_n(file: &Path) -> u64 {
    let bytes = match std::fs::read(file) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return 0,
        Err(e) => panic!("{e}"),
    };
    let Some(last) = bytes.split(|b| *b == b'\n').rfind(|l| !l.is_empty()) else {
        return 0;
    };
    let v = session_format::json::parse_value(last).unwrap();
    let n = v.as_object().unwrap().get("n").unwrap().as_f64().unwrap();
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let n = n as u64;
    n + 1
}

fn stress_child() {
    let file = PathBuf::from(env("LOCK_FILE"));
    let writer: usize = env("LOCK_WRITER").parse().unwrap();
    // Poll every millisecond and pause outside the lock, so the writers really contend (with the
    // default backoff a releasing writer mostly re-acquires before the sleepers wake).
    let opts = LockOptions {
        backoff: Backoff::Fixed(Duration::from_millis(1)),
        ..LockOptions::default().with_timeout(Some(Duration::from_secs(120)))
    };
    mark("ready");
    for seq in 0..APPENDS {
        let guard = SessionWriteLock::acquire(&file, &opts).unwrap();
        let n = next_n(&file);
        // Lines of different lengths, so a torn or interleaved write would show.
        let pad = "x".repeat(16 + (writer * 97 + seq * 13) % 400);
        let line = format!(
            r#"{{"type":"custom","customType":"lock-stress","id":"w{writer}-{seq}","writer":{writer},"seq":{seq},"n":{n},"pad":"{pad}"}}"#
        );
        session_store::io::append_line(&file, line.as_bytes(), Durability::Buffer).unwrap();
        drop(guard);
        std::thread::sleep(Duration::from_micros(300));
    }
    mark("done");
}

fn signal_child() {
    let file = PathBuf::from(env("LOCK_FILE"));
    // No core files from SIGQUIT/SIGABRT.
    let limit = rustix::process::getrlimit(rustix::process::Resource::Core);
    rustix::process::setrlimit(
        rustix::process::Resource::Core,
        rustix::process::Rlimit {
            current: Some(0),
            maximum: limit.maximum,
        },
    )
    .unwrap();
    lock::install_signal_cleanup().unwrap();
    lock::install_signal_cleanup().unwrap(); // idempotent
    let _outer = SessionWriteLock::acquire(&file, &LockOptions::default()).unwrap();
    let _inner = SessionWriteLock::acquire(&file, &LockOptions::default()).unwrap();
    mark("ready");
    std::thread::sleep(Duration::from_secs(60));
    mark("not killed");
}

fn exit_child() {
    let file = PathBuf::from(env("LOCK_FILE"));
    let guard = SessionWriteLock::acquire(&file, &LockOptions::default()).unwrap();
    let cleanup = env("LOCK_CLEANUP") == "1";
    if cleanup {
        assert_eq!(lock::release_all_held_locks(), 1);
        assert!(!guard.is_active());
    }
    mark("exiting");
    // No destructors run past this point.
    std::process::exit(0);
}

/// Prints every `warn` event as a marker line `warn <message>`.
struct WarnToStdout;

struct Message(String);

impl tracing::field::Visit for Message {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl tracing::Subscriber for WarnToStdout {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        if *event.metadata().level() == tracing::Level::WARN {
            let mut m = Message(String::new());
            event.record(&mut m);
            mark(&format!("warn {}", m.0));
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

fn watchdog_child() {
    tracing::subscriber::set_global_default(WarnToStdout).unwrap();
    let file = PathBuf::from(env("LOCK_FILE"));
    let opts = LockOptions {
        max_hold: Some(Duration::from_millis(50)),
        ..LockOptions::default()
    };
    let guard = SessionWriteLock::acquire(&file, &opts).unwrap();
    let start = Instant::now();
    while guard.is_active() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the watchdog did not fire"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    mark("released");
}

fn spawn(mode: &str, vars: &[(&str, String)]) -> Marked {
    let mut cmd = child_command("child_entry", mode);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    Marked::spawn(cmd, MARK)
}

#[test]
fn four_processes_append_500_entries_each_without_interleaving() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("stress.jsonl");
    let start = Instant::now();
    let children: Vec<Marked> = (0..WRITERS)
        .map(|w| {
            spawn(
                "stress",
                &[
                    ("LOCK_FILE", file.display().to_string()),
                    ("LOCK_WRITER", w.to_string()),
                ],
            )
        })
        .collect();
    for c in &children {
        assert_eq!(c.next(Duration::from_secs(30)), "ready");
    }
    for mut c in children {
        assert_eq!(c.next(Duration::from_secs(240)), "done");
        assert!(c.child.wait().unwrap().success());
    }
    eprintln!(
        "{WRITERS} processes × {APPENDS} locked appends: {:?}",
        start.elapsed()
    );
    let lines = json_lines(&file);
    assert_eq!(lines.len(), WRITERS * APPENDS);
    let mut ids = HashSet::new();
    let mut next_seq = [0u64; WRITERS];
    for (i, line) in lines.iter().enumerate() {
        let obj = line.as_object().unwrap();
        let id = obj.get_str("id").unwrap().into_owned();
        assert!(ids.insert(id.clone()), "duplicate id {id}");
        let num = |k: &str| {
            let v = obj.get(k).and_then(JsValue::as_f64).unwrap();
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let v = v as u64;
            v
        };
        // The counter read under the lock never repeats or skips: exclusive read-modify-write.
        assert_eq!(num("n"), i as u64, "line {}", i + 1);
        let writer = usize::try_from(num("writer")).unwrap();
        assert_eq!(num("seq"), next_seq[writer], "writer {writer} out of order");
        next_seq[writer] += 1;
        assert_eq!(id, format!("w{writer}-{}", num("seq")));
    }
    assert_eq!(next_seq, [APPENDS as u64; WRITERS]);
    let switches = lines
        .windows(2)
        .filter(|w| {
            w[0].as_object().unwrap().get("writer") != w[1].as_object().unwrap().get("writer")
        })
        .count();
    assert_contended_and_released(switches, &file);
}

#[test]
fn a_holder_in_another_process_makes_us_wait_and_is_named_in_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    let lock_path = lock_of(&file);
    let mut child = spawn(
        "hold",
        &[
            ("LOCK_FILE", file.display().to_string()),
            ("LOCK_HOLD_MS", "1500".to_owned()),
        ],
    );
    child.expect("acquired", Duration::from_secs(30));
    let pid = child.pid();
    let err = SessionWriteLock::acquire(
        &file,
        &LockOptions::default().with_timeout(Some(Duration::from_millis(200))),
    )
    .unwrap_err();
    let LockError::Timeout {
        owner_pid,
        owner_alive,
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(*owner_pid, Some(u64::from(pid)));
    assert!(*owner_alive);
    assert!(!err.is_busy_with_active_run());
    let prefix = format!("session file locked (timeout 200ms): pid={pid} alive=true ageMs=");
    assert!(err.to_string().starts_with(&prefix), "{err}");
    assert!(err.to_string().ends_with(&lock_path.display().to_string()));
    // Now wait for it.
    let guard = SessionWriteLock::acquire(&file, &LockOptions::default()).unwrap();
    let acquired = lock_common::now_ms();
    let releasing: i64 = child
        .expect("releasing", Duration::from_secs(5))
        .parse()
        .unwrap();
    assert!(
        acquired >= releasing,
        "acquired at {acquired}, holder released at {releasing}"
    );
    assert!(child.child.wait().unwrap().success());
    drop(guard);
    assert!(!lock_path.exists());
}

#[test]
fn termination_signals_remove_held_locks_and_kill_the_process() {
    use rustix::process::{Pid, Signal, kill_process};
    for (signal, name) in [
        (Signal::TERM, "SIGTERM"),
        (Signal::INT, "SIGINT"),
        (Signal::QUIT, "SIGQUIT"),
        (Signal::ABORT, "SIGABRT"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.jsonl");
        let lock_path = lock_of(&file);
        let mut child = spawn("signal", &[("LOCK_FILE", file.display().to_string())]);
        assert_eq!(child.next(Duration::from_secs(30)), "ready");
        assert!(lock_path.exists());
        let pid = Pid::from_raw(i32::try_from(child.pid()).unwrap()).unwrap();
        kill_process(pid, signal).unwrap();
        let status = child.child.wait().unwrap();
        assert_eq!(status.signal(), Some(signal.as_raw()), "{name}: {status:?}");
        assert!(!lock_path.exists(), "{name}: the lock file was left behind");
    }
}

#[test]
fn exit_cleanup_removes_files_and_a_dead_holders_lock_is_reclaimed() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    let lock_path = lock_of(&file);
    let mut child = spawn(
        "exit",
        &[
            ("LOCK_FILE", file.display().to_string()),
            ("LOCK_CLEANUP", "1".to_owned()),
        ],
    );
    assert_eq!(child.next(Duration::from_secs(30)), "exiting");
    assert!(child.child.wait().unwrap().success());
    assert!(!lock_path.exists());

    // `process::exit` without the cleanup leaves the file (no destructors run)…
    let mut child = spawn(
        "exit",
        &[
            ("LOCK_FILE", file.display().to_string()),
            ("LOCK_CLEANUP", "0".to_owned()),
        ],
    );
    assert_eq!(child.next(Duration::from_secs(30)), "exiting");
    let pid = child.pid();
    assert!(child.child.wait().unwrap().success());
    let left = std::fs::read_to_string(&lock_path).unwrap();
    assert!(left.contains(&format!("\"pid\": {pid},")));
    // …and the next writer reclaims it at once as `dead-pid`.
    let report = lock::clean_stale_lock_files(dir.path(), lock::DEFAULT_STALE, false).unwrap();
    assert_eq!(report[0].stale_reasons, [lock::StaleReason::DeadPid]);
    let start = Instant::now();
    let guard = SessionWriteLock::acquire(&file, &LockOptions::default()).unwrap();
    assert!(start.elapsed() < Duration::from_secs(1));
    drop(guard);
    assert!(!lock_path.exists());
}

#[test]
fn the_watchdog_logs_like_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    let lock_path = lock_of(&file);
    let mut child = spawn("watchdog", &[("LOCK_FILE", file.display().to_string())]);
    let line = child.expect("warn", Duration::from_secs(30));
    let rest = line
        .strip_prefix("[session-write-lock] releasing lock held for ")
        .unwrap_or_else(|| panic!("{line}"));
    let (held, rest) = rest
        .split_once("ms (max=50ms): ")
        .unwrap_or_else(|| panic!("{line}"));
    assert!(held.parse::<u64>().unwrap() >= 50, "{line}");
    assert_eq!(rest, lock_path.display().to_string());
    assert_eq!(child.next(Duration::from_secs(30)), "released");
    assert!(child.child.wait().unwrap().success());
    assert!(!lock_path.exists());
}
