//! Interop with OpenClaw 2026.6.11's own lock (`acquireSessionWriteLock`, run by node through
//! `xtask/conformance/lock/holder.mjs`): each side waits for the other, reads the other's payload
//! correctly, and reclaims the other's lock when its holder died. Skips with a printed reason
//! when the reference is not installed under `target/conformance-ref/openclaw`.
//!
//! OpenClaw reclaims a lock whose live holder's command line does not look like OpenClaw
//! (`non-openclaw-owner`, FINDINGS.md). So the Rust holder OpenClaw must wait for runs as a child
//! process whose `argv[0]` is `openclaw`; `openclaw_steals_locks_of_processes_not_named_openclaw`
//! pins the behaviour for any other holder (and checks that our release then leaves OpenClaw's
//! lock alone).
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

mod lock_common;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lock_common::{CHILD_MODE_ENV, MARK, Marked, child_command, json_lines, lock_of, now_ms};
use session_format::json::{JsValue, parse_value};
use session_store::Durability;
use session_store::lock::{self, LockError, LockOptions, SessionWriteLock};

const WAIT: Duration = Duration::from_secs(30);

#[test]
fn child_entry() {
    match std::env::var(CHILD_MODE_ENV).as_deref() {
        Ok("hold") => lock_common::hold_child(),
        Ok(other) => panic!("unknown child mode {other}"),
        Err(_) => {}
    }
}

/// A node process running holder.mjs; its stdout events parsed.
struct Node(Marked);

impl Node {
    fn start(node: &Path, helper: &Path, file: &Path, args: &[&str]) -> Node {
        let mut cmd = Command::new(node);
        cmd.arg(helper)
            .arg("--file")
            .arg(file)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        Node(Marked::spawn(cmd, ""))
    }

    /// The next event (`{"event": …}`), as an object.
    fn event(&self, timeout: Duration) -> JsValue {
        let line = self.0.next(timeout);
        parse_value(line.as_bytes()).unwrap_or_else(|e| panic!("not an event ({e}): {line}"))
    }

    /// Waits for the event named `name` (earlier events are skipped) and returns it.
    fn expect(&self, name: &str, timeout: Duration) -> JsValue {
        loop {
            let ev = self.event(timeout);
            let got = ev
                .as_object()
                .unwrap()
                .get_str("event")
                .unwrap()
                .into_owned();
            if got == name {
                return ev;
            }
            assert!(
                got != "error" || name == "error",
                "node failed: {}",
                session_format::json::to_json_string(&ev)
            );
        }
    }

    fn pid(&self) -> u32 {
        self.0.pid()
    }
}

fn num(ev: &JsValue, key: &str) -> i64 {
    #[allow(clippy::cast_possible_truncation)]
    let v = ev
        .as_object()
        .unwrap()
        .get(key)
        .and_then(JsValue::as_f64)
        .unwrap() as i64;
    v
}

fn text(ev: &JsValue, key: &str) -> String {
    ev.as_object().unwrap().get_str(key).unwrap().into_owned()
}

/// A Rust holder OpenClaw recognises as one of its own (`argv[0]` = `openclaw`).
fn rust_holder(file: &Path, hold_ms: u64, appends: usize) -> Marked {
    let mut cmd = child_command("child_entry", "hold");
    cmd.arg0("openclaw")
        .env("LOCK_FILE", file)
        .env("LOCK_HOLD_MS", hold_ms.to_string())
        .env("LOCK_APPENDS", appends.to_string())
        .env("LOCK_WRITER", "rust");
    Marked::spawn(cmd, MARK)
}

fn writers(file: &Path) -> Vec<String> {
    json_lines(file)
        .iter()
        .map(|l| {
            l.as_object()
                .unwrap()
                .get_str("writer")
                .unwrap()
                .into_owned()
        })
        .collect()
}

fn append(file: &Path, writer: &str, n: usize) {
    for seq in 0..n {
        let line = format!(
            r#"{{"type":"custom","customType":"lock-interop","id":"{writer}-{seq}","writer":"{writer}","seq":{seq}}}"#
        );
        session_store::io::append_line(file, line.as_bytes(), Durability::Buffer).unwrap();
    }
}

fn session(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("interop.jsonl")
}

#[test]
fn while_openclaw_holds_the_lock_our_writer_waits() {
    let Some((node, helper)) =
        lock_common::reference("while_openclaw_holds_the_lock_our_writer_waits")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = session(&dir);
    let lock_path = lock_of(&file);
    let holder = Node::start(
        &node,
        &helper,
        &file,
        &["--hold-ms", "1500", "--append", "20"],
    );
    let acquired = holder.expect("acquired", WAIT);
    // OpenClaw's payload: `{pid, createdAt, maxHoldMs, starttime}`, pretty-printed.
    let payload = text(&acquired, "payload");
    let pid = holder.pid();
    assert!(
        payload.starts_with(&format!("{{\n  \"pid\": {pid},\n  \"createdAt\": \"")),
        "{payload}"
    );
    assert!(
        payload.contains("\n  \"maxHoldMs\": 300000,\n  \"starttime\": "),
        "{payload}"
    );
    // We read it as a live lock (valid pid, createdAt and starttime: not recycled)…
    let report = lock::clean_stale_lock_files(dir.path(), lock::DEFAULT_STALE, true).unwrap();
    assert_eq!(report.len(), 1);
    assert_eq!(report[0].pid, Some(u64::from(pid)));
    assert!(report[0].pid_alive);
    assert!(report[0].stale_reasons.is_empty(), "{:?}", report[0]);
    assert!(!report[0].removed);
    // …time out naming its holder…
    let err = SessionWriteLock::acquire(
        &file,
        &LockOptions::default().with_timeout(Some(Duration::from_millis(200))),
    )
    .unwrap_err();
    let LockError::Timeout { owner_pid, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(*owner_pid, Some(u64::from(pid)));
    // …and get it once OpenClaw releases.
    let start = Instant::now();
    let guard = SessionWriteLock::acquire(&file, &LockOptions::default()).unwrap();
    let got_it = now_ms();
    let releasing = num(&holder.expect("releasing", WAIT), "t");
    assert!(
        got_it >= releasing,
        "we got the lock at {got_it}, OpenClaw released at {releasing}"
    );
    assert!(start.elapsed() >= Duration::from_millis(300));
    append(&file, "rust", 20);
    drop(guard);
    assert!(!lock_path.exists());
    let w = writers(&file);
    assert_eq!(w.len(), 40);
    assert!(
        w[..20].iter().all(|x| x == "node") && w[20..].iter().all(|x| x == "rust"),
        "{w:?}"
    );
}

#[test]
fn while_we_hold_the_lock_openclaw_waits() {
    let Some((node, helper)) = lock_common::reference("while_we_hold_the_lock_openclaw_waits")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = session(&dir);
    let lock_path = lock_of(&file);
    let holder = rust_holder(&file, 3000, 20);
    holder.expect("acquired", WAIT);
    // OpenClaw with a short timeout names our holder: it reads our payload as a live lock.
    let short = Node::start(&node, &helper, &file, &["--timeout-ms", "400"]);
    let err = short.expect("error", WAIT);
    let hp = holder.pid();
    assert_eq!(text(&err, "name"), "SessionWriteLockTimeoutError");
    assert_eq!(text(&err, "code"), "OPENCLAW_SESSION_WRITE_LOCK_TIMEOUT");
    let message = text(&err, "message");
    assert!(
        message.starts_with(&format!(
            "session file locked (timeout 400ms): pid={hp} alive=true ageMs="
        )),
        "{message}"
    );
    assert!(
        message.ends_with(&format!(" {}", lock_path.display())),
        "{message}"
    );
    // With time to wait, OpenClaw gets it right after our release.
    let waiter = Node::start(
        &node,
        &helper,
        &file,
        &["--timeout-ms", "20000", "--append", "20"],
    );
    let acquired = waiter.expect("acquired", WAIT);
    let releasing: i64 = holder.expect("releasing", WAIT).parse().unwrap();
    assert!(
        num(&acquired, "t") >= releasing,
        "OpenClaw got the lock at {}, we released at {releasing}",
        num(&acquired, "t")
    );
    assert!(num(&acquired, "waitedMs") >= 200);
    waiter.expect("released", WAIT);
    assert!(!lock_path.exists());
    let w = writers(&file);
    assert_eq!(w.len(), 40);
    assert!(
        w[..20].iter().all(|x| x == "rust") && w[20..].iter().all(|x| x == "node"),
        "{w:?}"
    );
}

#[test]
fn openclaw_steals_locks_of_processes_not_named_openclaw() {
    let Some((node, helper)) =
        lock_common::reference("openclaw_steals_locks_of_processes_not_named_openclaw")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = session(&dir);
    let lock_path = lock_of(&file);
    // This test process (argv[0]: the test binary) holds the lock.
    let guard = SessionWriteLock::acquire(&file, &LockOptions::default()).unwrap();
    let thief = Node::start(
        &node,
        &helper,
        &file,
        &["--timeout-ms", "10000", "--hold-ms", "1500"],
    );
    let acquired = thief.expect("acquired", WAIT);
    assert!(
        num(&acquired, "waitedMs") < 1000,
        "OpenClaw 2026.6.11 reclaims the lock of a live non-OpenClaw process at once (non-openclaw-owner)"
    );
    let theirs = std::fs::read_to_string(&lock_path).unwrap();
    assert!(theirs.contains(&format!("\"pid\": {},", thief.pid())));
    // Our release sees another file and leaves it alone.
    assert!(!guard.release().unwrap());
    assert_eq!(std::fs::read_to_string(&lock_path).unwrap(), theirs);
    thief.expect("released", WAIT);
    assert!(!lock_path.exists());
}

#[test]
fn a_dead_holders_lock_is_reclaimed_by_either_side() {
    let Some((node, helper)) =
        lock_common::reference("a_dead_holders_lock_is_reclaimed_by_either_side")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = session(&dir);
    let lock_path = lock_of(&file);
    // A node holder killed with SIGKILL leaves its lock behind; we reclaim it (dead-pid).
    let mut holder = Node::start(&node, &helper, &file, &["--hold-ms", "60000"]);
    holder.expect("acquired", WAIT);
    holder.0.child.kill().unwrap();
    holder.0.child.wait().unwrap();
    assert!(lock_path.exists());
    let report = lock::clean_stale_lock_files(dir.path(), lock::DEFAULT_STALE, false).unwrap();
    assert_eq!(report[0].stale_reasons, [lock::StaleReason::DeadPid]);
    let start = Instant::now();
    drop(SessionWriteLock::acquire(&file, &LockOptions::default()).unwrap());
    assert!(start.elapsed() < Duration::from_secs(1));
    assert!(!lock_path.exists());
    // Our (OpenClaw-named) holder killed with SIGKILL: OpenClaw reclaims its lock at once.
    let mut ours = rust_holder(&file, 60_000, 0);
    ours.expect("acquired", WAIT);
    ours.child.kill().unwrap();
    ours.child.wait().unwrap();
    assert!(lock_path.exists());
    let taker = Node::start(&node, &helper, &file, &["--timeout-ms", "10000"]);
    let acquired = taker.expect("acquired", WAIT);
    assert!(num(&acquired, "waitedMs") < 1000);
    taker.expect("released", WAIT);
    assert!(!lock_path.exists());
}
