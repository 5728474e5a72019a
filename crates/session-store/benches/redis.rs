//! Criterion benches of the Redis backend (`redis_store`) against a local `redis-server` that the
//! bench starts itself (free loopback port, no persistence; the bench prints why and measures
//! nothing when no binary exists), with the file store on the same sessions as the baseline.
//!
//! ```sh
//! cargo bench -p session-store --features redis --bench redis
//! ```
//!
//! Benches (throughput in entries):
//! - `redis/append/{unlocked,locked}`: `SessionManager::append_message` of a ~300-byte user
//!   message on a Redis session (one fenced append script; `locked` adds the lease
//!   `SET NX PX` + catch-up + release of `set_write_lock` around each append), a fresh session
//!   every 10,000 appends; `redis/append/file_buffered` the same on the file store
//!   (`Durability::Buffer`);
//! - `redis/open/{redis,file}_10k`: `SessionManager::on(storage).open_with` of a 10,000-entry session
//!   (~4.6 MB, alternating user/assistant messages): one read script and the index build; the
//!   file store's open with an empty warm cache.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A measuring tool: fail loudly.
#![allow(missing_docs)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use session_format::json::{JsValue, parse_value};
use session_store::lock::LockOptions;
use session_store::redis_store::RedisStorage;
use session_store::test_util::redis_server::LocalRedisServer;
use session_store::{Durability, FileStorage, MemStorage, OpenParams, SessionManager, Storage};

/// The warm cache of the process-wide file store (the one the default managers use).
fn warm_cache() -> &'static session_store::WarmCache {
    session_store::FileStorage::process_wide().warm_cache()
}

const ENTRIES: usize = 10_000;

fn user(text: &str) -> JsValue {
    parse_value(
        format!(r#"{{"role":"user","content":[{{"type":"text","text":"{text}"}}],"timestamp":1767225600000}}"#)
            .as_bytes(),
    )
    .unwrap()
}

fn assistant(text: &str) -> JsValue {
    parse_value(format!(r#"{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}},"stopReason":"stop","timestamp":1767225600001}}"#).as_bytes()).unwrap()
}

/// A flushed session (header, user, assistant) at a fresh path of `storage` in `dir`.
fn flushed_session(storage: Arc<dyn Storage>, dir: &Path) -> SessionManager {
    let mut sm = SessionManager::on(storage)
        .create("/home/dev/project", Some(dir))
        .unwrap();
    sm.append_message(user("hi")).unwrap();
    sm.append_message(assistant("hello")).unwrap();
    assert!(sm.is_flushed());
    sm
}

/// The bytes of a 10,000-entry session (built in memory).
fn ten_k_session() -> Vec<u8> {
    let mem = Arc::new(MemStorage::new());
    let dir = Path::new("/bench");
    let mut sm = flushed_session(mem.clone(), dir);
    let filler = "benchmark text of a typical turn ".repeat(10);
    for i in 2..ENTRIES {
        if i % 2 == 0 {
            sm.append_message(user(&filler)).unwrap();
        } else {
            sm.append_message(assistant(&filler)).unwrap();
        }
    }
    mem.read_all(sm.get_session_file().unwrap()).unwrap()
}

fn bench_redis(c: &mut Criterion) {
    let Some(server) = LocalRedisServer::start_or_skip("the redis benches") else {
        return;
    };
    let redis: Arc<dyn Storage> =
        Arc::new(RedisStorage::connect(&server.url(), Some("bench")).unwrap());
    let payload = user(&"append benchmark text ".repeat(10));
    let sessions = AtomicU64::new(0);
    let mut g = c.benchmark_group("redis/append");
    g.throughput(Throughput::Elements(1));
    g.sample_size(20);
    let files = tempfile::tempdir().unwrap();
    for (label, storage, locked) in [
        ("unlocked", redis.clone(), false),
        ("locked", redis.clone(), true),
        ("file_buffered", FileStorage::shared(), false),
    ] {
        g.bench_function(label, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                let mut left = iters;
                while left > 0 {
                    let n = sessions.fetch_add(1, Ordering::Relaxed);
                    let dir = if storage.local_files() {
                        files.path().join(format!("d{n}"))
                    } else {
                        PathBuf::from(format!("/bench/append/d{n}"))
                    };
                    let mut sm = flushed_session(storage.clone(), &dir);
                    sm.set_durability(Durability::Buffer);
                    if locked {
                        sm.set_write_lock(Some(LockOptions::default()));
                    }
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

    let bytes = ten_k_session();
    let on_redis = PathBuf::from("/bench/open/10k.jsonl");
    redis.create_new(&on_redis, &bytes).unwrap();
    let on_disk = files.path().join("10k.jsonl");
    FileStorage::shared().create_new(&on_disk, &bytes).unwrap();
    eprintln!("10k-entry session: {} bytes", bytes.len());
    let mut g = c.benchmark_group("redis/open");
    g.throughput(Throughput::Elements(ENTRIES as u64));
    g.sample_size(30);
    g.bench_function("redis_10k", |b| {
        b.iter(|| {
            let sm = SessionManager::on(redis.clone())
                .open_with(&on_redis, &OpenParams::default())
                .unwrap();
            assert_eq!(sm.get_entries().count(), ENTRIES);
            black_box(sm)
        });
    });
    g.bench_function("file_10k", |b| {
        b.iter_batched(
            || warm_cache().clear(),
            |()| black_box(SessionManager::open(&on_disk, None, None).unwrap()),
            BatchSize::PerIteration,
        );
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
    targets = bench_redis
}
criterion_main!(benches);
