//! Retention edge cases around times and races:
//! - a session is judged by the times inside the file, never by its mtime, whatever the mtime
//!   is: a message time that happens to equal the mtime still counts, and a file with no time
//!   inside is left alone even when its mtime's sub-millisecond part rounds differently in two
//!   computations (both used to be decided by comparing the session's time with a separately
//!   rounded mtime);
//! - a file is moved while this process holds its session write lock, so a writer that takes
//!   the lock between the plan (or the re-check) and the move cannot append meanwhile; a file
//!   whose lock another thread takes after the plan is left alone.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, UNIX_EPOCH};

use pretty_assertions::assert_eq;
use session_semantics::StoreLayout;
use session_semantics::events::{EventBus, Lifecycle};
use session_semantics::retention::{
    self, ArchiveReason, ClearMode, ClearTarget, Outcome, RetentionPolicy, SessionRef, SkipReason,
};
use session_store::lock::{self, LockOptions, SessionWriteLock};

/// 2023-11-14T22:13:20.000Z.
const T: i64 = 1_700_000_000_000;
const DAY: i64 = 86_400_000;

fn set_mtime(path: &std::path::Path, at: Duration) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(UNIX_EPOCH + at)
        .unwrap();
}

#[test]
fn activity_comes_from_inside_the_file_even_when_it_equals_the_mtime() {
    let tmp = tempfile::tempdir().unwrap();
    let layout = StoreLayout::new(std::fs::canonicalize(tmp.path()).unwrap());
    let dir = layout.ensure_sessions_dir("main").unwrap();
    // No header timestamp; one user message at T; the file's mtime exactly T.
    let at_mtime = dir.join("at-mtime.jsonl");
    session_store::io::write_raw(
        &at_mtime,
        format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"s-at\",\"cwd\":\"/w\"}}\n\
             {{\"type\":\"message\",\"id\":\"u1\",\"parentId\":null,\"timestamp\":\"x\",\"message\":{{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":{T}}}}}\n"
        )
        .as_bytes(),
    )
    .unwrap();
    set_mtime(&at_mtime, Duration::from_millis(T as u64));
    // No time inside at all; an mtime of 1700000000.123499878 s, which node's rounding
    // (`Math.round(sec·1e3 + nsec/1e6)`) puts at …124 ms and `as_secs_f64()·1e3` at …123 ms.
    let no_time = dir.join("no-time.jsonl");
    session_store::io::write_raw(
        &no_time,
        b"{\"type\":\"session\",\"version\":3,\"id\":\"s-none\",\"cwd\":\"/w\"}\n",
    )
    .unwrap();
    set_mtime(&no_time, Duration::new(1_700_000_000, 123_499_878));

    let info = session_store::session_info(&no_time).unwrap();
    assert!(info.modified_from_mtime);
    assert_eq!(info.modified, 1_700_000_000_124.0);
    let info = session_store::session_info(&at_mtime).unwrap();
    assert!(!info.modified_from_mtime);
    assert_eq!(info.modified, T as f64);

    let policy = RetentionPolicy {
        max_age: Some("30d".into()),
        max_age_ms: Some(30 * DAY as u64),
        ..RetentionPolicy::default()
    };
    let plan = retention::plan_archive(&layout, "main", &policy, T + 60 * DAY).unwrap();
    let report = plan.report();
    let actions: Vec<(&str, &ArchiveReason, &str)> = report
        .actions
        .iter()
        .map(|a| (a.file.as_str(), &a.reason, a.destination.as_str()))
        .collect();
    assert_eq!(
        actions,
        [(
            "at-mtime.jsonl",
            &ArchiveReason::MaxAge { age_ms: 60 * DAY },
            "archive/at-mtime.jsonl"
        )]
    );
    let skipped: Vec<(&str, &SkipReason)> = report
        .skipped
        .iter()
        .map(|s| (s.file.as_str(), &s.reason))
        .collect();
    assert_eq!(skipped, [("no-time.jsonl", &SkipReason::NoActivityTime)]);
}

fn write_session(path: &std::path::Path, id: &str, t: i64) {
    session_store::io::write_raw(
        path,
        format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2023-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}}\n\
             {{\"type\":\"message\",\"id\":\"u1\",\"parentId\":null,\"timestamp\":\"x\",\"message\":{{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":{t}}}}}\n"
        )
        .as_bytes(),
    )
    .unwrap();
}

/// On each `archived` or `deleted` event: the session file it names, and what its lock file
/// looked like at that moment (`Some(pid)` of a holder this process counts as live).
type Seen = Arc<Mutex<Vec<(String, Option<u64>)>>>;

fn lock_watch(bus: &EventBus) -> (Seen, impl Drop) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = Arc::clone(&seen);
    let sub = bus.subscribe_lifecycle(move |e| {
        if matches!(e.lifecycle, Lifecycle::Archived { .. } | Lifecycle::Deleted) {
            let file = e.target.session_file.clone().unwrap();
            let info = lock::inspect_session_lock(&file, lock::DEFAULT_STALE).unwrap();
            let holder = info.filter(|i| i.is_held()).and_then(|i| i.pid);
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            s2.lock().unwrap().push((name, holder));
        }
    });
    (seen, sub)
}

#[test]
fn files_move_under_their_write_lock_and_a_lock_taken_after_the_plan_is_respected() {
    let tmp = tempfile::tempdir().unwrap();
    let layout = StoreLayout::new(std::fs::canonicalize(tmp.path()).unwrap());
    let dir = layout.ensure_sessions_dir("main").unwrap();
    let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    write_session(&a, "sa", T);
    write_session(&b, "sb", T);
    let policy = RetentionPolicy {
        max_age: Some("30d".into()),
        max_age_ms: Some(30 * DAY as u64),
        ..RetentionPolicy::default()
    };
    let plan = retention::plan_archive(&layout, "main", &policy, T + 60 * DAY).unwrap();
    let planned: Vec<&str> = plan
        .report()
        .actions
        .iter()
        .map(|a| a.file.as_str())
        .collect();
    assert_eq!(planned, ["a.jsonl", "b.jsonl"]);

    // A writer thread takes b's lock after the plan and holds it through the run.
    let (taken_tx, taken_rx) = mpsc::channel();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let b2 = b.clone();
    let writer = std::thread::spawn(move || {
        let guard = SessionWriteLock::acquire(&b2, &LockOptions::default()).unwrap();
        taken_tx.send(()).unwrap();
        done_rx.recv().unwrap();
        drop(guard);
    });
    taken_rx.recv().unwrap();

    let bus = EventBus::new();
    let (seen, _sub) = lock_watch(&bus);
    let done = plan.execute(Some(&bus));
    let outcomes: Vec<(&str, &Outcome, &str)> = done
        .actions
        .iter()
        .map(|a| (a.file.as_str(), &a.outcome, a.destination.as_str()))
        .collect();
    assert_eq!(
        outcomes,
        [
            ("a.jsonl", &Outcome::Archived, "archive/a.jsonl"),
            (
                "b.jsonl",
                &Outcome::Skipped {
                    reason: SkipReason::Locked {
                        lock_file: "b.jsonl.lock".into()
                    }
                },
                "archive/b.jsonl"
            ),
        ]
    );
    // a moved while this process held a's lock; the lock file went with the guard.
    let me = u64::from(std::process::id());
    assert_eq!(*seen.lock().unwrap(), [("a.jsonl".to_owned(), Some(me))]);
    assert!(!dir.join("a.jsonl.lock").exists());
    assert!(b.exists());
    done_tx.send(()).unwrap();
    writer.join().unwrap();
    assert!(!dir.join("b.jsonl.lock").exists());

    // clear (purge) holds the lock the same way.
    seen.lock().unwrap().clear();
    let report = retention::clear(
        &layout,
        &ClearTarget::Session(SessionRef::File {
            agent_id: "main".into(),
            name: "b.jsonl".into(),
        }),
        ClearMode::Purge,
        false,
        Some(&bus),
    )
    .unwrap();
    assert_eq!(report.actions[0].outcome, Outcome::Purged);
    assert_eq!(*seen.lock().unwrap(), [("b.jsonl".to_owned(), Some(me))]);
    let mut left: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    left.sort();
    // The archive directory and the audit log of the two runs (a's move, b's deletion).
    assert_eq!(left, [dir.join("archive"), dir.join("sessions-audit.log")]);
    let actions: Vec<String> = std::fs::read_to_string(dir.join("sessions-audit.log"))
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            format!(
                "{} {}",
                v["action"].as_str().unwrap(),
                v["file"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(actions, ["archive a.jsonl", "delete b.jsonl"]);
}
