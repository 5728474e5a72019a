//! Measures opens of a large session file through the warm cache.
//!
//! ```sh
//! cargo run --release -p xtask -- gen --size 200MB -o target/bench-data/t200.jsonl
//! cargo run --release -p session-store --example warm_reopen -- target/bench-data/t200.jsonl cold
//! cargo run --release -p session-store --example warm_reopen -- target/bench-data/t200.jsonl cached
//! ```
//!
//! `cold`: one open in this (fresh) process. `cached`: works on a copy of the file, with the
//! cache's byte cap raised above its size: a first (cold) open, a warm reopen with no change,
//! then after a 1 KB foreign append a reopen (tail reindex), both with the first manager
//! dropped (the cached rows are extended in place) and kept alive (they are copied on write),
//! and one append by a warm manager.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A measuring tool: fail loudly.

use std::path::{Path, PathBuf};
use std::time::Instant;

use session_store::CacheLimits;
use session_store::SessionManager;

/// The warm cache of the process-wide file store (the one the default managers use).
fn warm_cache() -> &'static session_store::WarmCache {
    session_store::FileStorage::process_wide().warm_cache()
}

fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let out = f();
    println!("{what:<58} {:>9.2} ms", t.elapsed().as_secs_f64() * 1e3);
    out
}

fn open(path: &Path) -> SessionManager {
    SessionManager::open(path, None, None).unwrap()
}

/// A ~1 KB user message line parented on the current leaf.
fn foreign_line(sm: &SessionManager, n: usize) -> String {
    let parent = sm.get_leaf_id().unwrap_or_default().to_owned();
    let text = "x".repeat(880);
    format!(
        "{{\"type\":\"message\",\"id\":\"f{n:07}\",\"parentId\":\"{parent}\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\",\"timestamp\":1}}}}\n"
    )
}

fn main() {
    let mut args = std::env::args().skip(1);
    let file = PathBuf::from(args.next().expect("FILE"));
    let mode = args.next().unwrap_or_else(|| "cached".to_owned());
    let size = std::fs::metadata(&file).unwrap().len();
    println!(
        "{} ({:.1} MB), mode {mode}",
        file.display(),
        size as f64 / 1e6
    );
    match mode.as_str() {
        "cold" => {
            let sm = timed("full open (fresh process, cold cache)", || open(&file));
            println!("parsed lines: {}", sm.parsed_lines());
        }
        "cached" => {
            warm_cache().set_limits(CacheLimits {
                max_files: 8,
                max_bytes: 4 * size,
            });
            let dir = tempfile::tempdir_in(file.parent().unwrap()).unwrap();
            let copy = dir.path().join("bench.jsonl");
            session_store::io::write_raw(&copy, &std::fs::read(&file).unwrap()).unwrap();

            let first = timed("first open (cold, then cached)", || open(&copy));
            println!("  parsed lines: {}", first.parsed_lines());
            let warm = timed("warm reopen, no change", || open(&copy));
            println!("  parsed lines: {}", warm.parsed_lines());
            let line = foreign_line(&warm, 1);
            drop(warm);
            drop(first);
            session_store::io::append_raw(&copy, line.as_bytes()).unwrap();
            let tail = timed(
                "reopen after a 1 KB foreign append (tail; cache sole owner)",
                || open(&copy),
            );
            println!("  parsed lines: {}", tail.parsed_lines());
            let line = foreign_line(&tail, 2);
            session_store::io::append_raw(&copy, line.as_bytes()).unwrap();
            let tail2 = timed(
                "reopen after a 1 KB foreign append (tail; rows shared)",
                || open(&copy),
            );
            println!("  parsed lines: {}", tail2.parsed_lines());
            drop(tail);
            let mut sm = tail2;
            timed(
                "first append of a warm manager (copies rows, index)",
                || sm.append_custom_entry("bench", None).unwrap(),
            );
            timed("second append (verified, cache advanced)", || {
                sm.append_custom_entry("bench", None).unwrap()
            });
            let again = timed("reopen after own appends", || open(&copy));
            println!("  parsed lines: {}", again.parsed_lines());
            warm_cache().set_limits(CacheLimits::default());
            warm_cache().clear();
            let full = timed("full open in this process (cache cleared)", || open(&copy));
            println!("  parsed lines: {}", full.parsed_lines());
        }
        other => panic!("unknown mode {other}: cold | cached"),
    }
}
