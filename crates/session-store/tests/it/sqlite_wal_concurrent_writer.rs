//! A reader open while another connection writes in WAL mode (issue 19 tests,
//! `openclaw-sqlite.md` §1.5 rule 1): a test writer (the test's own read-write rusqlite
//! connection on a WAL-mode copy of the fixture, in another thread) inserts whole sessions,
//! each in ONE transaction (node, window and 50+ rows, some rows over 1 KiB), while the reader
//! repeatedly opens the store, lists `sessions()` and reads `lines()`. The reader never fails
//! (no SQLITE_BUSY surfaces) and every session it lists is complete: its row count equals the
//! count the writer stored in its `entry_json`. Iterations are bounded, not timed: the writer
//! waits after each commit until the reader has made a full pass that began after it, so every
//! intermediate state is seen and reads overlap the next commit.
#![cfg(feature = "sqlite")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::sqlite_common::{copy_db, fixture, rw};
use session_format::json::parse_value;
use session_store::sqlite::SqliteStore;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Sessions the writer inserts.
const WRITES: usize = 24;
/// An upper bound on reader passes, so a broken pacing fails instead of hanging.
const MAX_PASSES: usize = 20_000;
/// The fixture's own sessions, which carry no `testRowCount`.
const FIXTURE_SESSIONS: usize = 6;

/// Sets a flag when dropped, also on panic, so the writer never waits for a dead reader.
struct Gone<'a>(&'a AtomicBool);
impl Drop for Gone<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn insert_session(conn: &mut rusqlite::Connection, i: usize) -> usize {
    let rows = 50 + (i % 7) * 5;
    let sid = format!("99999999-0000-4000-8000-{i:012}");
    let key = format!("agent:main:wal-test-{i}");
    let t0: i64 = 1_790_000_000_000 + i64::try_from(i).unwrap() * 60_000;
    let tx = conn.transaction().unwrap();
    tx.execute(
        "INSERT INTO session_nodes (session_key, current_session_id, entry_json, updated_at) \
         VALUES (?1, ?2, ?3, ?4)",
        rusqlite::params![
            key,
            sid,
            format!(r#"{{"sessionId":"{sid}","updatedAt":{t0},"testRowCount":{rows}}}"#),
            t0
        ],
    )
    .unwrap();
    tx.execute(
        "INSERT INTO session_windows (session_id, session_key, created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?3)",
        rusqlite::params![sid, key, t0],
    )
    .unwrap();
    {
        let mut stmt = tx
            .prepare(
                "INSERT INTO transcript_events (session_id, seq, event_json, created_at, \
                 event_utf8_bytes) VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .unwrap();
        for seq in 0..rows {
            let json = if seq == 0 {
                format!(
                    r#"{{"type":"session","version":3,"id":"{sid}","timestamp":"2026-09-01T00:00:00.000Z","cwd":"/tmp/w"}}"#
                )
            } else {
                let parent = if seq == 1 {
                    "null".to_owned()
                } else {
                    format!("\"m{}\"", seq - 1)
                };
                let text = if seq % 10 == 0 {
                    "long text ".repeat(120) // 1200 bytes: rows over 1 KiB
                } else {
                    format!("row {seq}")
                };
                format!(
                    r#"{{"type":"message","id":"m{seq}","parentId":{parent},"timestamp":"2026-09-01T00:00:01.000Z","message":{{"role":"user","content":[{{"type":"text","text":"{text}"}}],"timestamp":{t0}}}}}"#
                )
            };
            let len = i64::try_from(json.len()).unwrap();
            stmt.execute(rusqlite::params![
                sid,
                i64::try_from(seq).unwrap(),
                json,
                t0,
                len
            ])
            .unwrap();
        }
    }
    tx.commit().unwrap();
    rows
}

#[test]
fn sqlite_reader_never_fails_or_sees_half_a_session_while_a_writer_commits() {
    let Some(fixture) =
        fixture("sqlite_reader_never_fails_or_sees_half_a_session_while_a_writer_commits")
    else {
        return;
    };
    let (_dir, db) = copy_db(&fixture);
    let mut writer = rw(&db);
    let mode: String = writer
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    writer
        .busy_timeout(std::time::Duration::from_secs(5))
        .unwrap();
    writer.pragma_update(None, "foreign_keys", true).unwrap();

    let passes = AtomicUsize::new(0);
    let reader_gone = AtomicBool::new(false);
    let writer_done = AtomicBool::new(false);
    let mut seen_counts = BTreeSet::new();
    let mut big_rows_seen = 0usize;
    let mut written = Vec::new();

    std::thread::scope(|scope| {
        let writer_thread = scope.spawn(|| {
            let mut written = Vec::new();
            for i in 0..WRITES {
                written.push(insert_session(&mut writer, i));
                // Wait for a full reader pass that began after this commit.
                let p = passes.load(Ordering::SeqCst);
                while passes.load(Ordering::SeqCst) < p + 2 {
                    if reader_gone.load(Ordering::SeqCst) {
                        return written;
                    }
                    std::thread::yield_now();
                }
            }
            writer_done.store(true, Ordering::SeqCst);
            written
        });

        let _gone = Gone(&reader_gone);
        let mut last = 0usize;
        for pass in 0..MAX_PASSES {
            let finished = writer_done.load(Ordering::SeqCst);
            let store = SqliteStore::open(&db).unwrap_or_else(|e| panic!("pass {pass}: {e}"));
            let sessions = store
                .sessions()
                .unwrap_or_else(|e| panic!("pass {pass}: {e}"));
            let mut test_sessions = 0;
            for s in &sessions {
                let entry = parse_value(s.entry_json.as_bytes()).unwrap();
                let Some(count) = entry.get("testRowCount").and_then(|v| v.as_f64()) else {
                    continue;
                };
                test_sessions += 1;
                let lines = store
                    .lines(&s.session_id)
                    .unwrap_or_else(|e| panic!("pass {pass}: {e}"));
                assert_eq!(
                    lines.len() as f64,
                    count,
                    "pass {pass}: session {} is incomplete",
                    s.session_id
                );
                big_rows_seen += lines.iter().filter(|l| l.len() > 1024).count();
            }
            assert_eq!(sessions.len(), FIXTURE_SESSIONS + test_sessions);
            assert!(test_sessions >= last, "pass {pass}: sessions went away");
            last = test_sessions;
            seen_counts.insert(test_sessions);
            drop(store);
            passes.fetch_add(1, Ordering::SeqCst);
            if finished {
                break;
            }
        }
        written = writer_thread.join().unwrap();
    });

    assert_eq!(written.len(), WRITES, "the writer did not finish");
    assert!(written.iter().all(|&rows| rows >= 50));
    // Every intermediate state 1..=WRITES was seen by some pass, the last pass saw all.
    let want: BTreeSet<usize> = (1..=WRITES).collect();
    assert!(
        want.is_subset(&seen_counts),
        "seen {seen_counts:?}, want at least {want:?}"
    );
    assert_eq!(seen_counts.last(), Some(&WRITES));
    assert!(big_rows_seen > 0);

    // The final state, read once more after the writer closed: every row of every session.
    drop(writer);
    let store = SqliteStore::open(&db).unwrap();
    let total: usize = store
        .sessions()
        .unwrap()
        .iter()
        .map(|s| store.lines(&s.session_id).unwrap().len())
        .sum();
    assert_eq!(total, 38 + written.iter().sum::<usize>());
}
