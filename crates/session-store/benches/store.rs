//! Criterion benches of the store (targets, results and analysis in docs/BENCHMARKS.md).
//!
//! ```sh
//! cargo bench -p session-store                 # everything (~2 min after the data exists)
//! cargo bench -p session-store -- open/200MB   # one bench
//! ```
//!
//! Data comes from `cargo xtask bench-data NAME` (generated once under `target/bench-data/`,
//! reused while its spec and size match); the bench runs it itself, through
//! `cargo run --release -p xtask`. Set `SESSION_BENCH_DATA_DIR` to a directory holding the files
//! under their `bench-data` names to skip that.
//!
//! Benches (throughput in bytes or entries):
//! - `open/{1MB,50MB,200MB}`: `SessionManager::open` with an empty warm cache (page cache warm):
//!   read, line framing, envelope scan, classification, index;
//! - `chain100k/build_session_context`, `chain100k/get_branch`: a 100k-deep chain;
//! - `tree60k/get_tree`: 60k entries, ~5 % branch points, labels;
//! - `append/{buffered,data_sync}`: one ~300-byte user message line (`Durability::Buffer`,
//!   `Durability::SyncData`), on a fresh session every 10,000 appends;
//! - `tail/200MB_1KB_append`: reopen of a 200 MB file the warm cache holds (its byte cap raised
//!   with `WarmCache::set_limits`) after another writer appended a ~1 KB line: a tail reindex; the
//!   append is not timed;
//! - `list/10k_sessions`: `SessionManager::list` over 10,000 small sessions.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A measuring tool: fail loudly.
#![allow(missing_docs)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use session_format::json::parse_value;
use session_store::CacheLimits;
use session_store::{Durability, SessionManager};

/// The warm cache of the process-wide file store (the one the default managers use).
fn warm_cache() -> &'static session_store::WarmCache {
    session_store::FileStorage::process_wide().warm_cache()
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The path of a `cargo xtask bench-data` data set, generating it when needed.
fn data(name: &str) -> PathBuf {
    if let Some(dir) = std::env::var_os("SESSION_BENCH_DATA_DIR") {
        let dir = PathBuf::from(dir);
        let hit = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("SESSION_BENCH_DATA_DIR {}: {e}", dir.display()))
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&format!("{name}-g")) && !n.ends_with(".meta"))
            });
        return hit.unwrap_or_else(|| panic!("no {name}-g* in {}", dir.display()));
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "run",
            "--release",
            "--quiet",
            "-p",
            "xtask",
            "--",
            "bench-data",
            name,
        ])
        .current_dir(workspace_root())
        .stderr(Stdio::inherit())
        .output()
        .expect("running `cargo run --release -p xtask -- bench-data`");
    assert!(
        out.status.success(),
        "`cargo xtask bench-data {name}` failed ({})",
        out.status
    );
    let text = String::from_utf8(out.stdout).unwrap();
    PathBuf::from(text.lines().last().expect("bench-data printed no path"))
}

fn open(path: &Path) -> SessionManager {
    SessionManager::open(path, None, None).unwrap()
}

fn bench_open(c: &mut Criterion) {
    let mut g = c.benchmark_group("open");
    for (name, label) in [("t1mb", "1MB"), ("t50mb", "50MB"), ("t200mb", "200MB")] {
        let path = data(name);
        let size = std::fs::metadata(&path).unwrap().len();
        g.throughput(Throughput::Bytes(size));
        if size > 10_000_000 {
            g.sample_size(10);
        } else {
            g.sample_size(50);
        }
        g.bench_function(label, |b| {
            b.iter_batched(
                || warm_cache().clear(),
                |()| open(&path),
                BatchSize::PerIteration,
            );
        });
    }
    g.finish();
}

fn bench_chain(c: &mut Criterion) {
    let path = data("chain100k");
    warm_cache().clear();
    let sm = open(&path);
    let n = sm.entry_count();
    let mut g = c.benchmark_group("chain100k");
    g.throughput(Throughput::Elements(n as u64));
    g.sample_size(30);
    g.bench_function("build_session_context", |b| {
        b.iter(|| black_box(sm.build_session_context().unwrap().messages.len()));
    });
    g.bench_function("get_branch", |b| {
        b.iter(|| black_box(sm.get_branch(None).len()));
    });
    g.finish();
}

fn bench_tree(c: &mut Criterion) {
    let path = data("tree60k");
    warm_cache().clear();
    let sm = open(&path);
    let mut g = c.benchmark_group("tree60k");
    g.throughput(Throughput::Elements(sm.entry_count() as u64));
    g.sample_size(30);
    g.bench_function("get_tree", |b| {
        b.iter(|| black_box(sm.get_tree().nodes.len()));
    });
    g.finish();
}

/// A persisted session (header, a user and an assistant message on disk) in `dir`.
fn flushed_session(dir: &Path) -> SessionManager {
    let mut sm = SessionManager::create("/home/dev/project", Some(dir)).unwrap();
    sm.append_message(
        parse_value(br#"{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1}"#)
            .unwrap(),
    )
    .unwrap();
    sm.append_message(
        parse_value(br#"{"role":"assistant","content":[{"type":"text","text":"hello"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":2}"#)
            .unwrap(),
    )
    .unwrap();
    assert!(sm.is_flushed());
    sm
}

fn bench_append(c: &mut Criterion) {
    let payload = parse_value(
        format!(
            r#"{{"role":"user","content":[{{"type":"text","text":"{}"}}],"timestamp":1767225600000}}"#,
            "append benchmark text ".repeat(10)
        )
        .as_bytes(),
    )
    .unwrap();
    let mut g = c.benchmark_group("append");
    g.throughput(Throughput::Elements(1));
    for (label, durability, samples) in [
        ("buffered", Durability::Buffer, 50),
        ("data_sync", Durability::SyncData, 10),
    ] {
        g.sample_size(samples);
        g.bench_function(label, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                let mut left = iters;
                while left > 0 {
                    // A fresh session every 10,000 appends bounds memory and file size.
                    let dir = tempfile::tempdir().unwrap();
                    let mut sm = flushed_session(dir.path());
                    sm.set_durability(durability);
                    let chunk = left.min(10_000);
                    let start = Instant::now();
                    for _ in 0..chunk {
                        black_box(sm.append_message(&payload).unwrap());
                    }
                    total += start.elapsed();
                    left -= chunk;
                }
                total
            });
        });
    }
    g.finish();
}

/// A ~1 KB user message parented on the leaf.
fn foreign_line(sm: &SessionManager, n: u64) -> String {
    let parent = sm.get_leaf_id().unwrap_or_default().to_owned();
    format!(
        "{{\"type\":\"message\",\"id\":\"b{n:07x}\",\"parentId\":\"{parent}\",\"timestamp\":\"2026-06-01T00:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"{}\",\"timestamp\":1780272000000}}}}\n",
        "x".repeat(880)
    )
}

fn bench_tail(c: &mut Criterion) {
    let src = data("t200mb");
    let work = src.with_file_name("work");
    session_store::io::ensure_dir(&work).unwrap();
    let path = work.join("bench-tail.jsonl");
    session_store::io::write_raw(&path, &session_store::io::read_file(&src).unwrap()).unwrap();
    let size = std::fs::metadata(&path).unwrap().len();
    let before = warm_cache().limits();
    warm_cache().set_limits(CacheLimits {
        max_files: before.max_files,
        max_bytes: size * 4,
    });
    let mut sm = open(&path);
    assert!(warm_cache().is_warm(&path));
    let mut n = 0u64;
    let mut g = c.benchmark_group("tail");
    g.throughput(Throughput::Bytes(1024));
    g.sample_size(20);
    g.bench_function("200MB_1KB_append", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                n += 1;
                session_store::io::append_raw(&path, foreign_line(&sm, n).as_bytes()).unwrap();
                // The previous manager is dropped first, so the cache extends its rows in place.
                drop(std::mem::replace(&mut sm, SessionManager::in_memory("/")));
                let start = Instant::now();
                let next = open(&path);
                total += start.elapsed();
                assert_eq!(next.parsed_lines(), 1);
                sm = next;
            }
            total
        });
    });
    g.finish();
    drop(sm);
    warm_cache().set_limits(before);
    warm_cache().clear();
}

fn bench_list(c: &mut Criterion) {
    let dir = data("sessions10k");
    let n = std::fs::read_dir(&dir).unwrap().count();
    let mut g = c.benchmark_group("list");
    g.throughput(Throughput::Elements(n as u64));
    g.sample_size(10);
    g.bench_function("10k_sessions", |b| {
        b.iter(|| {
            black_box(
                SessionManager::list("/home/dev/project", Some(&dir))
                    .unwrap()
                    .len(),
            )
        });
    });
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_open, bench_chain, bench_tree, bench_append, bench_tail, bench_list
}
criterion_main!(benches);
