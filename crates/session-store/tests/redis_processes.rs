//! Two `SessionManager`s in two OS processes on ONE Redis session: this test binary
//! re-runs itself in a child mode (`SESSION_LOCK_TEST_CHILD`, test `child_entry`), each child
//! opens the session through its own `RedisStorage` connection and appends 500 assistant
//! messages.
//!
//! - under the write lock (`set_write_lock`, the Redis lease): exactly 1 000 message entries
//!   after the untouched header, every line complete JSON, ids unique, each writer's entries
//!   all there in its own order, all 1 000 one chain in session order (each writer
//!   fast-forwards over the other's lines, docs/DEVIATIONS.md D30), and each writer's
//!   in-memory entries equal to the session's up to its last append (the other's lines
//!   adopted);
//! - without the lock: still exactly 1 000 whole lines, unique ids, each writer's entries in
//!   its order (every append is one fenced script, so none is lost or torn); a writer refused
//!   with `AppendError::Diverged` (the other appended between its check and its write) joins
//!   the other's tip and appends again;
//! - a stale writer (its session was rewritten by another manager or replaced: a new
//!   generation) gets the fence error `FileReplaced` and nothing of it is written; its
//!   `rewrite_file` then adopts the lines appended before the rewrite, or keeps foreign bytes
//!   as a byte-exact `.conflict-` backup, and the refused entry appended again lands once.
//!
//! Needs a real `redis-server` (skipped with a printed reason only when no binary exists).
#![cfg(all(feature = "redis", target_os = "linux"))]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

mod lock_common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use lock_common::{CHILD_MODE_ENV, MARK, Marked, child_command};
use session_format::json::{JsValue, parse_value};
use session_store::lock::{Backoff, LockOptions};
use session_store::redis_store::RedisStorage;
use session_store::test_util::redis_server::LocalRedisServer;
use session_store::{AppendError, Durability, OpenParams, SessionManager, Storage};

const WRITERS: usize = 2;
const APPENDS: usize = 500;
const WAIT: Duration = Duration::from_secs(30);
const SESSION: &str = "/agents/main/sessions/stress.jsonl";
const HEADER: &str = "{\"type\":\"session\",\"version\":3,\"id\":\"redis-session\",\"timestamp\":\"2026-06-01T10:00:00.000Z\",\"cwd\":\"/w\"}\n";

fn env(key: &str) -> String {
    std::env::var(key).unwrap_or_else(|_| panic!("{key} not set"))
}

/// The child side. Does nothing when the test binary runs normally.
#[test]
fn child_entry() {
    match std::env::var(CHILD_MODE_ENV).as_deref() {
        Ok("redis-locked") => writer_child(true),
        Ok("redis-unlocked") => writer_child(false),
        Ok(other) => panic!("unknown child mode {other}"),
        Err(_) => {}
    }
}

/// An assistant message naming the writer and the sequence number, padded to a length that
/// varies, so a torn or interleaved line would show.
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

fn writer_child(locked: bool) {
    let storage: Arc<dyn Storage> =
        Arc::new(RedisStorage::connect(&env("REDIS_URL"), Some(&env("REDIS_PREFIX"))).unwrap());
    let go = PathBuf::from(env("REDIS_GO"));
    let writer: usize = env("REDIS_WRITER").parse().unwrap();
    let mut sm = SessionManager::on(storage)
        .open_with(Path::new(SESSION), &OpenParams::default())
        .unwrap();
    sm.set_durability(Durability::Buffer);
    if locked {
        sm.set_write_lock(Some(LockOptions {
            backoff: Backoff::Fixed(Duration::from_millis(1)),
            ..LockOptions::default().with_timeout(Some(Duration::from_secs(120)))
        }));
    }
    lock_common::mark("ready");
    while !go.exists() {
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut ids = Vec::with_capacity(APPENDS);
    for seq in 0..APPENDS {
        let id = loop {
            match sm.append_message(assistant(writer, seq)) {
                Ok(id) => break id,
                // Without the lock the other writer can append between this writer's check
                // and its write (two siblings); finding the other's branch afterwards is
                // refused (D30), and the writer joins the other's tip.
                Err(AppendError::Diverged { tips, .. }) if !locked => {
                    sm.branch(tips.last().unwrap()).unwrap();
                }
                Err(e) => panic!("w{writer}-{seq}: {e}"),
            }
        };
        ids.push(id);
        // A pause outside the lock, so the writers really take turns.
        std::thread::sleep(Duration::from_micros(300));
    }
    let memory: Vec<String> = sm.get_entries().map(|e| e.id().to_owned()).collect();
    lock_common::mark(&format!("ids {}", ids.join(",")));
    lock_common::mark(&format!("memory {}", memory.join(",")));
    lock_common::mark(&format!("adopted {}", sm.diagnostics().adopted_lines));
}

fn text(v: &JsValue, key: &str) -> String {
    v.get(key)
        .and_then(JsValue::as_str_lossy)
        .unwrap_or_else(|| panic!("no {key}"))
        .into_owned()
}

/// One appended entry as found in the session.
struct Row {
    id: String,
    parent: Option<String>,
    writer: usize,
    seq: usize,
}

/// What each child reported: its appended ids, its in-memory ids, its adopted line count.
type Report = (Vec<String>, Vec<String>, usize);

/// Starts the writers on a fresh session, lets them go at once, and returns the session's
/// bytes and their reports.
fn run_writers(server: &LocalRedisServer, prefix: &str, locked: bool) -> (Vec<u8>, Vec<Report>) {
    let store = RedisStorage::connect(&server.url(), Some(prefix)).unwrap();
    store.create(Path::new(SESSION), HEADER.as_bytes()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let go = dir.path().join("go");
    let mode = if locked {
        "redis-locked"
    } else {
        "redis-unlocked"
    };
    let children: Vec<Marked> = (0..WRITERS)
        .map(|w| {
            let mut cmd = child_command("child_entry", mode);
            cmd.env("REDIS_URL", server.url())
                .env("REDIS_PREFIX", prefix)
                .env("REDIS_GO", &go)
                .env("REDIS_WRITER", w.to_string());
            Marked::spawn(cmd, MARK)
        })
        .collect();
    for c in &children {
        assert_eq!(c.next(WAIT), "ready");
    }
    session_store::io::create_new(&go, b"", None).unwrap();
    let mut reports = Vec::new();
    for mut c in children {
        let ids = c.expect("ids", Duration::from_secs(240));
        let memory = c.expect("memory", WAIT);
        let adopted: usize = c.expect("adopted", WAIT).parse().unwrap();
        assert!(c.child.wait().unwrap().success());
        let split = |s: &str| s.split(',').map(str::to_owned).collect::<Vec<_>>();
        reports.push((split(&ids), split(&memory), adopted));
    }
    let (_, bytes) = store.load(Path::new(SESSION)).unwrap().unwrap();
    (bytes, reports)
}

/// Checks the lines every run must give: the header untouched, then exactly 1 000 complete
/// message lines with unique ids, each writer's 500 in its own order and with its padding.
/// Returns the rows in session order.
fn check_lines(bytes: &[u8], reports: &[Report]) -> Vec<Row> {
    assert!(bytes.starts_with(HEADER.as_bytes()));
    assert!(bytes.ends_with(b"\n"));
    let lines: Vec<&[u8]> = bytes[..bytes.len() - 1].split(|b| *b == b'\n').collect();
    assert_eq!(lines.len(), 1 + WRITERS * APPENDS);
    let mut rows = Vec::new();
    for line in &lines[1..] {
        let e = parse_value(line).unwrap_or_else(|err| {
            panic!(
                "not complete JSON ({err}): {}",
                String::from_utf8_lossy(line)
            )
        });
        assert_eq!(text(&e, "type"), "message");
        let message = e.get("message").unwrap();
        assert_eq!(text(message, "role"), "assistant");
        let body = message.get("content").unwrap().as_array().unwrap()[0].clone();
        let label = text(&body, "text");
        let (tag, pad) = label.split_once(' ').unwrap();
        let (w, seq) = tag.strip_prefix('w').unwrap().split_once('-').unwrap();
        let (writer, seq): (usize, usize) = (w.parse().unwrap(), seq.parse().unwrap());
        assert_eq!(pad, "x".repeat(16 + (writer * 97 + seq * 13) % 400));
        rows.push(Row {
            id: text(&e, "id"),
            parent: e
                .get("parentId")
                .and_then(JsValue::as_str_lossy)
                .map(|p| p.into_owned()),
            writer,
            seq,
        });
    }
    let unique: HashSet<&String> = rows.iter().map(|r| &r.id).collect();
    assert_eq!(unique.len(), WRITERS * APPENDS, "ids are unique");
    for (w, (ids, _, _)) in reports.iter().enumerate() {
        let mine: Vec<&Row> = rows.iter().filter(|r| r.writer == w).collect();
        assert_eq!(mine.len(), APPENDS, "writer {w}");
        let seqs: Vec<usize> = mine.iter().map(|r| r.seq).collect();
        assert_eq!(seqs, (0..APPENDS).collect::<Vec<_>>(), "writer {w}: order");
        let in_session: Vec<String> = mine.iter().map(|r| r.id.clone()).collect();
        assert_eq!(&in_session, ids, "writer {w}: the ids it appended");
    }
    rows
}

#[test]
fn two_processes_append_500_entries_each_under_the_redis_write_lock() {
    let Some(server) = LocalRedisServer::start_or_skip(
        "two_processes_append_500_entries_each_under_the_redis_write_lock",
    ) else {
        return;
    };
    let (bytes, reports) = run_writers(&server, "locked", true);
    let rows = check_lines(&bytes, &reports);
    let ids: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
    // One chain, as on the file store: every entry hangs under the one before it, whoever
    // wrote that (each writer fast-forwarded over the other's lines inside the lock).
    for (k, r) in rows.iter().enumerate() {
        let expected = (k > 0).then(|| rows[k - 1].id.clone());
        assert_eq!(r.parent, expected, "entry {k}: parentId");
    }
    for (w, (mine, memory, adopted)) in reports.iter().enumerate() {
        // Its memory is the session up to its last append: the other's lines were adopted.
        let last = ids.iter().position(|i| i == mine.last().unwrap()).unwrap();
        assert_eq!(memory[..], ids[..=last], "writer {w}: in-memory entries");
        assert_eq!(*adopted, last + 1 - APPENDS, "writer {w}: adopted lines");
    }
    let switches = rows
        .windows(2)
        .filter(|p| p[0].writer != p[1].writer)
        .count();
    eprintln!("writer switches between consecutive lines: {switches}");
    assert!(
        switches >= 10,
        "the writers hardly contended ({switches} switches)"
    );
    // The last release removed the lease.
    let store = RedisStorage::connect(&server.url(), Some("locked")).unwrap();
    let lock_key = store.keys(Path::new(SESSION)).unwrap().lock;
    let mut con = redis::Client::open(server.url())
        .unwrap()
        .get_connection()
        .unwrap();
    let lease: Option<String> = redis::cmd("GET").arg(&lock_key).query(&mut con).unwrap();
    assert_eq!(lease, None);
}

#[test]
fn two_processes_append_500_entries_each_without_the_lock_and_lose_none() {
    let Some(server) = LocalRedisServer::start_or_skip(
        "two_processes_append_500_entries_each_without_the_lock_and_lose_none",
    ) else {
        return;
    };
    let (bytes, reports) = run_writers(&server, "unlocked", false);
    let rows = check_lines(&bytes, &reports);
    for (w, (mine, memory, _)) in reports.iter().enumerate() {
        let held: HashSet<&String> = memory.iter().collect();
        assert!(mine.iter().all(|id| held.contains(id)), "writer {w}");
    }
    let switches = rows
        .windows(2)
        .filter(|p| p[0].writer != p[1].writer)
        .count();
    eprintln!("writer switches between consecutive lines: {switches}");
}

#[test]
fn a_stale_writer_gets_the_fence_error_and_loses_nothing() {
    let Some(server) =
        LocalRedisServer::start_or_skip("a_stale_writer_gets_the_fence_error_and_loses_nothing")
    else {
        return;
    };
    let connect = || -> Arc<dyn Storage> {
        Arc::new(RedisStorage::connect(&server.url(), Some("stale")).unwrap())
    };
    let (a_store, b_store) = (connect(), connect());
    let path = Path::new(SESSION);
    a_store.create_new(path, HEADER.as_bytes()).unwrap();
    let mut a = SessionManager::on(a_store.clone())
        .open_with(path, &OpenParams::default())
        .unwrap();
    let mut b = SessionManager::on(b_store.clone())
        .open_with(path, &OpenParams::default())
        .unwrap();
    let a0 = a.append_message(assistant(0, 0)).unwrap();
    // Appends of another writer are adopted, not refused, and continued (D30).
    let b0 = b.append_message(assistant(1, 0)).unwrap();
    assert_eq!(b.diagnostics().adopted_lines, 1);
    assert_eq!(
        b.get_entry(&b0).unwrap().parent_id().as_deref(),
        Some(a0.as_str())
    );
    a.append_message(assistant(0, 1)).unwrap();
    // A rewrites the session (a new generation): B's snapshot is stale now.
    a.rewrite_file().unwrap();
    let a_bytes = a_store.read_all(path).unwrap();
    let before = b_store.stat(path).unwrap().unwrap();
    match b.append_message(assistant(1, 1)) {
        Err(AppendError::FileReplaced { path: p }) => assert_eq!(p, path),
        other => panic!("expected the fence error, got {other:?}"),
    }
    assert_eq!(b_store.stat(path).unwrap(), Some(before));
    assert_eq!(b_store.read_all(path).unwrap(), a_bytes);
    // B goes on by writing its session whole (the line A appended before its rewrite is
    // adopted: A rewrote the same entries), then appends the refused entry again: nothing is
    // lost or doubled.
    b.rewrite_file().unwrap();
    b.append_message(assistant(1, 1)).unwrap();
    let dir = Path::new("/agents/main/sessions");
    assert_eq!(b_store.list_sessions(dir).unwrap(), [path.to_path_buf()]);
    let b_text = String::from_utf8(b_store.read_all(path).unwrap()).unwrap();
    assert!(b_text.starts_with(HEADER));
    for tag in ["w0-0 ", "w1-0 ", "w0-1 ", "w1-1 "] {
        assert_eq!(b_text.matches(tag).count(), 1, "{tag}");
    }
    // Someone replaces the session with other bytes (another gateway's import): B's next
    // append is refused, and its rewrite keeps those bytes as a byte-exact conflict backup.
    let other = format!(
        "{HEADER}{{\"type\":\"custom\",\"customType\":\"import\",\"id\":\"i1\",\"parentId\":null,\"timestamp\":\"2026-06-01T10:00:01.000Z\"}}\n"
    );
    a_store.replace(path, other.as_bytes()).unwrap();
    assert!(matches!(
        b.append_message(assistant(1, 2)),
        Err(AppendError::FileReplaced { .. })
    ));
    assert_eq!(a_store.read_all(path).unwrap(), other.as_bytes());
    b.rewrite_file().unwrap();
    b.append_message(assistant(1, 2)).unwrap();
    let sessions = b_store.list_sessions(dir).unwrap();
    let backups: Vec<&PathBuf> = sessions
        .iter()
        .filter(|p| p.to_string_lossy().contains(".conflict-"))
        .collect();
    assert_eq!(backups.len(), 1, "{sessions:?}");
    assert_eq!(b_store.read_all(backups[0]).unwrap(), other.as_bytes());
    let b_text = String::from_utf8(b_store.read_all(path).unwrap()).unwrap();
    for tag in ["w0-0 ", "w1-0 ", "w0-1 ", "w1-1 ", "w1-2 "] {
        assert_eq!(b_text.matches(tag).count(), 1, "{tag}");
    }
}
