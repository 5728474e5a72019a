//! `SessionManager` with the opt-in session write lock (`set_write_lock`, `open_locked`):
//! writers in several OS processes (this test binary re-run in a child mode,
//! `SESSION_LOCK_TEST_CHILD`, test `child_entry`) append through their own managers to one file.
//!
//! - 4 processes × 250 appends: exactly 1 000 message entries after the header, every line
//!   complete JSON, each writer's 250 ids all present in its own order, all 1 000 forming one
//!   chain in file order (each writer fast-forwards over the lines the others wrote while it
//!   waited, docs/DEVIATIONS.md D30), and each writer's in-memory entries equal to the file's
//!   entries up to its last append (those lines were adopted, in file order, never
//!   overwritten);
//! - a holder in another process: the append waits, adopts the holder's lines and hangs under
//!   the last of them (they continue its leaf); with a short
//!   timeout it fails with `AppendError::Lock` naming the lock file and the holder's pid, leaving
//!   the file's bytes and the manager as they were (and so do full writes and `open_locked`);
//! - every write (plain append, first full write, flush, rewrite, trailing removal) runs with the
//!   lock held by the writing thread, and a nested writer reuses a lock its thread holds.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

mod lock_common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lock_common::{
    CHILD_MODE_ENV, MARK, Marked, assert_contended_and_released, child_command, json_lines, lock_of,
};
use session_format::entry::EntryType;
use session_format::json::{JsValue, parse_value};
use session_store::lock::{self, Backoff, LockError, LockOptions, SessionWriteLock};
use session_store::{
    AppendError, BranchError, Durability, OpenError, OpenParams, RemoveError, SessionManager,
};
use session_store::{SessionFileSnapshot, WriteOwner};

const WRITERS: usize = 4;
const APPENDS: usize = 250;
const WAIT: Duration = Duration::from_secs(30);

const HEADER: &str = "{\"type\":\"session\",\"version\":3,\"id\":\"locked-session\",\"timestamp\":\"2026-06-01T10:00:00.000Z\",\"cwd\":\"/w\"}\n";

fn env(key: &str) -> String {
    std::env::var(key).unwrap_or_else(|_| panic!("{key} not set"))
}

/// The child side. Does nothing when the test binary runs normally.
#[test]
fn child_entry() {
    match std::env::var(CHILD_MODE_ENV).as_deref() {
        Ok("manager-stress") => stress_child(),
        Ok("hold") => lock_common::hold_child(),
        Ok(other) => panic!("unknown child mode {other}"),
        Err(_) => {}
    }
}

/// An assistant message whose text names the writer and the sequence number, padded to a
/// length that varies, so a torn or interleaved line would show.
fn assistant(writer: usize, seq: usize) -> JsValue {
    let pad = "x".repeat(16 + (writer * 97 + seq * 13) % 400);
    parse_value(
        format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":"w{writer}-{seq} {pad}"}}],"api":"test","provider":"test","model":"m","stopReason":"stop","timestamp":{seq}}}"#
        )
        .as_bytes(),
    )
    .unwrap()
}

fn stress_child() {
    let file = PathBuf::from(env("LOCK_FILE"));
    let go = PathBuf::from(env("LOCK_GO"));
    let writer: usize = env("LOCK_WRITER").parse().unwrap();
    let mut sm = SessionManager::open(&file, None, None).unwrap();
    let probe = Arc::new(Probe::new(&file));
    sm.set_write_owner(Some(probe.clone()));
    sm.set_durability(Durability::Buffer);
    // Poll every millisecond and pause outside the lock, so the writers really contend.
    sm.set_write_lock(Some(LockOptions {
        backoff: Backoff::Fixed(Duration::from_millis(1)),
        ..LockOptions::default().with_timeout(Some(Duration::from_secs(120)))
    }));
    lock_common::mark("ready");
    while !go.exists() {
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut ids = Vec::with_capacity(APPENDS);
    for seq in 0..APPENDS {
        ids.push(sm.append_message(assistant(writer, seq)).unwrap());
        std::thread::sleep(Duration::from_micros(300));
    }
    let memory: Vec<String> = sm.get_entries().map(|e| e.id().to_owned()).collect();
    lock_common::mark(&format!("ids {}", ids.join(",")));
    lock_common::mark(&format!("memory {}", memory.join(",")));
    lock_common::mark(&format!("adopted {}", sm.diagnostics().adopted_lines));
    let seen = probe.take();
    let published = seen.iter().filter(|(w, _)| *w == "published").count();
    assert!(
        seen.iter().all(|(_, held)| *held),
        "a callback ran without the lock"
    );
    lock_common::mark(&format!("verified {published}"));
}

fn spawn(mode: &str, vars: &[(&str, String)]) -> Marked {
    let mut cmd = child_command("child_entry", mode);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    Marked::spawn(cmd, MARK)
}

fn num(v: &JsValue, key: &str) -> f64 {
    v.get(key).and_then(JsValue::as_f64).unwrap()
}

fn text(v: &JsValue, key: &str) -> String {
    v.get(key)
        .and_then(JsValue::as_str_lossy)
        .unwrap_or_else(|| panic!("no {key}"))
        .into_owned()
}

#[test]
fn four_processes_append_250_messages_each_through_locked_managers() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("stress.jsonl");
    let go = dir.path().join("go");
    session_store::io::create_new(&file, HEADER.as_bytes(), None).unwrap();
    let children: Vec<Marked> = (0..WRITERS)
        .map(|w| {
            spawn(
                "manager-stress",
                &[
                    ("LOCK_FILE", file.display().to_string()),
                    ("LOCK_GO", go.display().to_string()),
                    ("LOCK_WRITER", w.to_string()),
                ],
            )
        })
        .collect();
    for c in &children {
        assert_eq!(c.next(WAIT), "ready");
    }
    session_store::io::create_new(&go, b"", None).unwrap();
    let mut reported: Vec<(Vec<String>, Vec<String>, usize)> = Vec::new();
    for mut c in children {
        let ids = c.expect("ids", Duration::from_secs(240));
        let memory = c.expect("memory", WAIT);
        let adopted: usize = c.expect("adopted", WAIT).parse().unwrap();
        // Every append was verified (the file re-checked inside the lock first), so each one
        // was published to the owned write context.
        assert_eq!(c.expect("verified", WAIT), APPENDS.to_string());
        assert!(c.child.wait().unwrap().success());
        let split = |s: &str| s.split(',').map(str::to_owned).collect::<Vec<_>>();
        reported.push((split(&ids), split(&memory), adopted));
    }

    // Every line is complete JSON; the header is untouched; exactly 1 000 message entries follow.
    let bytes = std::fs::read(&file).unwrap();
    assert!(bytes.starts_with(HEADER.as_bytes()));
    let lines = json_lines(&file);
    assert_eq!(lines.len(), 1 + WRITERS * APPENDS);
    let entries = &lines[1..];
    let mut file_ids = Vec::new();
    let mut parents = Vec::new();
    let mut per_writer: Vec<Vec<(String, usize)>> = vec![Vec::new(); WRITERS];
    for e in entries {
        assert_eq!(text(e, "type"), "message");
        let id = text(e, "id");
        parents.push(
            e.get("parentId")
                .and_then(JsValue::as_str_lossy)
                .map(|p| p.into_owned()),
        );
        let message = e.get("message").unwrap();
        assert_eq!(text(message, "role"), "assistant");
        let body = message.get("content").unwrap().as_array().unwrap()[0].clone();
        let label = text(&body, "text");
        let (tag, pad) = label.split_once(' ').unwrap();
        let (w, seq) = tag.strip_prefix('w').unwrap().split_once('-').unwrap();
        let (w, seq): (usize, usize) = (w.parse().unwrap(), seq.parse().unwrap());
        assert_eq!(pad, "x".repeat(16 + (w * 97 + seq * 13) % 400));
        assert_eq!(num(message, "timestamp"), seq as f64);
        per_writer[w].push((id.clone(), seq));
        file_ids.push(id);
    }
    let unique: HashSet<&String> = file_ids.iter().collect();
    assert_eq!(unique.len(), WRITERS * APPENDS, "ids are unique");

    // One chain: every entry hangs under the line before it, whoever wrote that one (each
    // writer adopted the others' lines inside the lock and fast-forwarded onto them).
    for (k, parent) in parents.iter().enumerate() {
        let expected = (k > 0).then(|| file_ids[k - 1].clone());
        assert_eq!(*parent, expected, "entry {k}: parentId");
    }
    for (w, (ids, memory, adopted)) in reported.iter().enumerate() {
        let rows = &per_writer[w];
        // Each writer's entries are all there, in its own order.
        assert_eq!(rows.len(), APPENDS, "writer {w}");
        let in_file: Vec<String> = rows.iter().map(|r| r.0.clone()).collect();
        assert_eq!(&in_file, ids, "writer {w}: the ids it appended");
        for (k, (_, seq)) in rows.iter().enumerate() {
            assert_eq!(*seq, k, "writer {w}");
        }
        // What it held in memory at the end is the file up to its last append: every line the
        // others wrote before it was adopted, in file order.
        let last = file_ids
            .iter()
            .position(|i| i == ids.last().unwrap())
            .unwrap();
        assert_eq!(
            memory[..],
            file_ids[..=last],
            "writer {w}: in-memory entries"
        );
        assert_eq!(*adopted, last + 1 - APPENDS, "writer {w}: adopted lines");
    }
    let switches = per_writer_switches(entries);
    assert_contended_and_released(switches, &file);
}

fn per_writer_switches(entries: &[JsValue]) -> usize {
    let writer = |e: &JsValue| {
        let message = e.get("message").unwrap();
        let body = message.get("content").unwrap().as_array().unwrap()[0].clone();
        text(&body, "text").split('-').next().unwrap().to_owned()
    };
    entries
        .windows(2)
        .filter(|w| writer(&w[0]) != writer(&w[1]))
        .count()
}

/// A session file with a header and one assistant message, opened with `options`.
fn opened(dir: &Path, options: Option<LockOptions>) -> (PathBuf, SessionManager) {
    let file = dir.join("s.jsonl");
    let mut sm = SessionManager::open(&file, None, None).unwrap();
    sm.append_message(assistant(9, 0)).unwrap();
    assert!(sm.is_flushed());
    sm.set_write_lock(options);
    (file, sm)
}

fn entry_ids(sm: &SessionManager) -> Vec<String> {
    sm.get_entries().map(|e| e.id().to_owned()).collect()
}

#[test]
fn an_append_waits_for_a_holder_in_another_process_and_adopts_its_lines() {
    let dir = tempfile::tempdir().unwrap();
    let (file, mut sm) = opened(dir.path(), Some(LockOptions::default()));
    let probe = Arc::new(Probe::new(&file));
    sm.set_write_owner(Some(probe.clone()));
    let mut child = spawn(
        "hold",
        &[
            ("LOCK_FILE", file.display().to_string()),
            ("LOCK_HOLD_MS", "600".to_owned()),
            ("LOCK_APPENDS", "3".to_owned()),
            ("LOCK_WRITER", "other".to_owned()),
        ],
    );
    child.expect("acquired", WAIT);
    let before = entry_ids(&sm);
    let id = sm.append_custom_entry("after-the-holder", None).unwrap();
    let released = child.expect("releasing", WAIT);
    assert!(!released.is_empty());
    assert!(child.child.wait().unwrap().success());

    // The holder's three lines, then ours: nothing interleaved or overwritten.
    let lines = json_lines(&file);
    let ids: Vec<String> = lines[1..].iter().map(|l| text(l, "id")).collect();
    let mut expected = before;
    expected.extend(["other-0", "other-1", "other-2"].map(str::to_owned));
    expected.push(id.clone());
    assert_eq!(ids, expected);
    // …and the manager adopted them before writing, in file order.
    assert_eq!(entry_ids(&sm), expected);
    assert_eq!(sm.diagnostics().adopted_lines, 3);
    // The holder's lines (parentless: they chain onto the leaf, §2.3 rule (a)) continue the
    // manager's leaf, so the new entry hangs under the last of them (D30).
    assert_eq!(text(lines.last().unwrap(), "parentId"), "other-2");
    assert_eq!(sm.get_leaf_id(), Some(id.as_str()));
    // The append was verified against the adopted file (and so published to the owner):
    // its snapshot is the file's.
    assert_eq!(probe.take(), [("before-append", true), ("published", true)]);
    assert_eq!(
        sm.file_snapshot(),
        SessionFileSnapshot::stat(&file).unwrap()
    );
    assert!(!lock_of(&file).exists());
}

/// The error of a timed-out lock: its lock path and owner pid.
fn timed_out(err: &LockError) -> (PathBuf, Option<u64>, String) {
    match err {
        LockError::Timeout {
            lock_path,
            owner_pid,
            owner_alive,
            ..
        } => {
            assert!(*owner_alive, "{err}");
            (lock_path.clone(), *owner_pid, err.to_string())
        }
        other => panic!("not a timeout: {other:?}"),
    }
}

#[test]
fn a_lock_timeout_fails_every_write_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let short = LockOptions::default().with_timeout(Some(Duration::from_millis(200)));
    let (file, mut sm) = opened(dir.path(), Some(short.clone()));
    let lock_path = lock_of(&file);
    // A held (unwritten) session of its own file in the same directory.
    let held_file = dir.path().join("held.jsonl");
    let mut held = SessionManager::open(&held_file, None, None).unwrap();
    held.set_write_lock(Some(short.clone()));
    let user = parse_value(br#"{"role":"user","content":"hi","timestamp":1}"#).unwrap();
    held.append_message(user).unwrap();

    let child = spawn(
        "hold",
        &[
            ("LOCK_FILE", file.display().to_string()),
            ("LOCK_HOLD_MS", "60000".to_owned()),
        ],
    );
    child.expect("acquired", WAIT);
    let pid = u64::from(child.pid());
    let held_child = spawn(
        "hold",
        &[
            ("LOCK_FILE", held_file.display().to_string()),
            ("LOCK_HOLD_MS", "60000".to_owned()),
        ],
    );
    held_child.expect("acquired", WAIT);

    let bytes = std::fs::read(&file).unwrap();
    let ids = entry_ids(&sm);
    let leaf = sm.get_leaf_id().map(str::to_owned);
    let snapshot = sm.file_snapshot();
    let unchanged = |sm: &SessionManager| {
        assert_eq!(std::fs::read(&file).unwrap(), bytes, "file bytes");
        assert_eq!(entry_ids(sm), ids, "entries");
        assert_eq!(sm.get_leaf_id().map(str::to_owned), leaf, "leaf");
        assert_eq!(sm.file_snapshot(), snapshot, "snapshot");
        assert!(sm.is_flushed());
    };
    let check = |err: &LockError| {
        let (path, owner, message) = timed_out(err);
        assert_eq!(path, lock_path);
        assert_eq!(owner, Some(pid));
        let prefix = format!("session file locked (timeout 200ms): pid={pid} alive=true ageMs=");
        assert!(message.starts_with(&prefix), "{message}");
        assert!(
            message.ends_with(&lock_path.display().to_string()),
            "{message}"
        );
    };

    // A plain append.
    let err = sm.append_custom_entry("blocked", None).unwrap_err();
    let AppendError::Lock { source } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(source.path, file);
    check(&source.error);
    check(err.lock_error().unwrap());
    unchanged(&sm);
    // A label (an append by another route) and a branch summary.
    let target = ids[0].clone();
    assert!(matches!(
        sm.append_label_change(&target, Some("x")),
        Err(AppendError::Lock { .. })
    ));
    unchanged(&sm);
    match sm.branch_with_summary(Some((&target).into()), "s", None, None) {
        Err(BranchError::Lock { source }) => {
            assert_eq!(source.path, file);
            check(&source.error);
        }
        other => panic!("{other:?}"),
    }
    unchanged(&sm);
    // A full rewrite.
    match sm.rewrite_file() {
        Err(AppendError::Lock { source }) => check(&source.error),
        other => panic!("{other:?}"),
    }
    unchanged(&sm);
    // A trailing removal: neither memory nor the file changes.
    match sm.remove_trailing_entries(|_| true, None) {
        Err(RemoveError::Lock { source }) => {
            assert_eq!(source.path, file);
            check(&source.error);
        }
        other => panic!("{other:?}"),
    }
    unchanged(&sm);
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
    // Opening under the lock.
    match SessionManager::open_locked(&file, &OpenParams::default(), short.clone()) {
        Err(OpenError::Lock { source }) => {
            assert_eq!(source.path, file);
            check(&source.error);
        }
        other => panic!("{other:?}"),
    }

    // The first assistant message of a held session: one full write, refused; the session is
    // still held (one entry, nothing on disk).
    let err = held.append_message(assistant(9, 1)).unwrap_err();
    let (path, owner, _) = timed_out(err.lock_error().unwrap());
    assert_eq!(path, lock_of(&held_file));
    assert_eq!(owner, Some(u64::from(held_child.pid())));
    assert_eq!(held.entry_count(), 1);
    assert!(!held.is_flushed());
    assert!(!held_file.exists());
    // flush() of the held session too.
    assert!(matches!(held.flush(), Err(AppendError::Lock { .. })));
    assert!(!held_file.exists());

    // Once the holders are gone, the same managers write.
    drop(child);
    drop(held_child);
    std::fs::remove_file(&lock_path).unwrap();
    std::fs::remove_file(lock_of(&held_file)).unwrap();
    let mut sm = SessionManager::open(&file, None, None).unwrap();
    sm.set_write_lock(Some(short));
    sm.append_custom_entry("now", None).unwrap();
    held.append_message(assistant(9, 2)).unwrap();
    assert!(held.is_flushed());
    assert_eq!(json_lines(&held_file).len(), 3);
    assert!(!lock_path.exists());
}

/// An owned write context that records, at each callback, whether the calling thread holds the
/// session write lock of its file.
#[derive(Debug)]
struct Probe {
    file: PathBuf,
    seen: Mutex<Vec<(&'static str, bool)>>,
}

impl Probe {
    fn new(file: &Path) -> Self {
        Probe {
            file: file.to_path_buf(),
            seen: Mutex::new(Vec::new()),
        }
    }

    fn record(&self, what: &'static str) {
        let held = SessionWriteLock::for_file(&self.file)
            .unwrap()
            .is_held_by_current_thread();
        self.seen.lock().unwrap().push((what, held));
    }

    fn take(&self) -> Vec<(&'static str, bool)> {
        std::mem::take(&mut *self.seen.lock().unwrap())
    }
}

impl WriteOwner for Probe {
    fn session_file(&self) -> Option<PathBuf> {
        Some(self.file.clone())
    }

    fn can_advance_cache(&self, _before: &SessionFileSnapshot) -> bool {
        self.record("before-append");
        true
    }

    fn publish_snapshot(&self, _snapshot: &SessionFileSnapshot) -> bool {
        self.record("published");
        true
    }
}

#[test]
fn every_write_runs_with_the_lock_held_and_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    let probe = Arc::new(Probe::new(&file));
    let mut sm = SessionManager::open(&file, None, None).unwrap();
    sm.set_write_owner(Some(probe.clone()));
    sm.set_write_lock(Some(LockOptions::default()));
    assert_eq!(sm.write_lock(), Some(&LockOptions::default()));
    let user = parse_value(br#"{"role":"user","content":"hi","timestamp":1}"#).unwrap();
    sm.append_message(user).unwrap(); // held: nothing written
    assert_eq!(probe.take(), []);
    sm.append_message(assistant(1, 0)).unwrap(); // the first full write
    assert_eq!(probe.take(), [("published", true)]);
    sm.append_custom_entry("a", None).unwrap(); // a plain append
    assert_eq!(probe.take(), [("before-append", true), ("published", true)]);
    sm.rewrite_file().unwrap();
    assert_eq!(probe.take(), [("published", true)]);
    let custom = |e: session_store::EntryRef<'_>| e.entry_type() == EntryType::Custom;
    assert_eq!(sm.remove_trailing_entries(custom, None).unwrap(), 1);
    assert_eq!(probe.take(), [("published", true)]);
    assert!(!lock_of(&file).exists());

    // Without the lock nothing is held.
    sm.set_write_lock(None);
    sm.append_custom_entry("b", None).unwrap();
    assert_eq!(
        probe.take(),
        [("before-append", false), ("published", false)]
    );

    // A branched session is written under the lock of its own (new) file.
    sm.set_write_lock(Some(LockOptions::default()));
    let leaf = sm.get_leaf_id().unwrap().to_owned();
    let branched = sm.create_branched_session(&leaf).unwrap().unwrap();
    assert_ne!(branched, file);
    assert!(branched.exists());
    assert!(!lock_of(&branched).exists());
}

#[test]
fn a_nested_writer_reuses_the_lock_its_thread_holds() {
    let dir = tempfile::tempdir().unwrap();
    let (file, mut sm) = opened(dir.path(), Some(LockOptions::default()));
    let lock_path = lock_of(&file);
    let id = lock::with_session_write_lock(&file, &LockOptions::default(), |guard| {
        let payload = std::fs::read(&lock_path).unwrap();
        // Waiting for ourselves would time out after 60 s; re-entering returns at once.
        let id = sm.append_custom_entry("nested", None).unwrap();
        assert_eq!(guard.holders(), 1, "the nested acquisition was released");
        assert!(guard.is_active());
        // Still the same lock file: not released and created again.
        assert_eq!(std::fs::read(&lock_path).unwrap(), payload);
        id
    })
    .unwrap();
    assert!(!lock_path.exists());
    let lines = json_lines(&file);
    assert_eq!(text(lines.last().unwrap(), "id"), id);
}

#[test]
fn open_locked_migrates_under_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("v1.jsonl");
    // A version-1 file: the writable open migrates and rewrites it.
    let v1 = "{\"type\":\"session\",\"id\":\"old\",\"timestamp\":\"2026-06-01T10:00:00.000Z\",\"cwd\":\"/w\"}\n{\"type\":\"message\",\"timestamp\":\"2026-06-01T10:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1}}\n";
    session_store::io::create_new(&file, v1.as_bytes(), None).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    let probe_file = file.clone();
    // The re-read after the rewrite runs inside the write; the hook sees whether the lock is
    // held by this thread then.
    session_store::test_util::hooks::set_after_read(
        &file,
        Some(Box::new(move |_| {
            let held = SessionWriteLock::for_file(&probe_file)
                .unwrap()
                .is_held_by_current_thread();
            record.lock().unwrap().push(held);
        })),
    );
    let sm =
        SessionManager::open_locked(&file, &OpenParams::default(), LockOptions::default()).unwrap();
    session_store::test_util::hooks::set_after_read(&file, None);
    let seen = seen.lock().unwrap().clone();
    assert!(!seen.is_empty());
    assert!(seen.iter().all(|h| *h), "{seen:?}");
    assert_eq!(sm.write_lock(), Some(&LockOptions::default()));
    let lines = json_lines(&file);
    assert_eq!(num(&lines[0], "version"), 3.0);
    assert!(!lock_of(&file).exists());
}
