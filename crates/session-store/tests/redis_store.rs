//! The Redis backend's own operations against a real `redis-server` (started on a free loopback
//! port by `LocalRedisServer`; skipped with a printed reason only when no binary exists):
//!
//! - files (this crate's fixtures, the repair fixtures, the shared samples' sessions) go into
//!   Redis and come back byte for byte, whole and in ranges;
//! - random sequences of create / line append / raw append / replace give, after every step, the
//!   same bytes as the same operations on a file through `session_store::io`;
//! - fenced appends: a stale writer is refused with the exact state it missed, nothing is lost;
//!   replace and remove change what the fence sees;
//! - the write lock: exclusive, names its holder on timeout, renewed, released only by its
//!   holder;
//! - listing by last activity, and the directory scan.
#![cfg(feature = "redis")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use proptest::prelude::*;
use session_store::Durability;
use session_store::redis_store::{
    AppendMode, Fence, RedisLockOptions, RedisStorage, RedisStoreError, RedisVersion,
};
use session_store::test_util::redis_server::LocalRedisServer;

/// A storage on `server` with a prefix of its own.
fn storage(server: &LocalRedisServer, prefix: &str) -> RedisStorage {
    RedisStorage::connect(&server.url(), Some(prefix)).unwrap()
}

/// Every regular file under `dir`, sorted.
fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files_under(&p, out);
        } else if p.is_file() {
            out.push(p);
        }
    }
}

#[test]
fn files_round_trip_through_redis_byte_for_byte() {
    let Some(server) =
        LocalRedisServer::start_or_skip("files_round_trip_through_redis_byte_for_byte")
    else {
        return;
    };
    let store = storage(&server, "rt");
    let mut files = Vec::new();
    files_under(&support::fixture(""), &mut files);
    if let Some(shared) = support::shared_dir("files_round_trip_through_redis_byte_for_byte") {
        files_under(&shared.join("fixtures"), &mut files);
        files_under(&shared.join("conformance"), &mut files);
    }
    // Edge shapes the fixtures may lack.
    let extra: [(&str, &[u8]); 7] = [
        ("empty", b""),
        ("newline-only", b"\n"),
        ("torn-header", b"{\"type\":\"sess"),
        ("blank-lines", b"a\n\n\nb\n\n"),
        ("crlf", b"a\r\nb\r\n"),
        ("binary", b"\x00\xff\xfe\n\x80\n\x01"),
        ("no-final-newline", b"h\nl1\nl2"),
    ];
    assert!(files.len() >= 10, "{} fixture files", files.len());
    let mut cases: Vec<(String, Vec<u8>)> = files
        .iter()
        .map(|p| (p.display().to_string(), std::fs::read(p).unwrap()))
        .collect();
    cases.extend(extra.iter().map(|(n, b)| ((*n).to_owned(), b.to_vec())));
    for (i, (name, bytes)) in cases.iter().enumerate() {
        let key = PathBuf::from(format!("/sessions/f{i}.jsonl"));
        let created = store.create(&key, bytes).unwrap();
        assert_eq!(created.len, bytes.len() as u64, "{name}");
        assert_eq!(
            created.torn,
            !bytes.is_empty() && !bytes.ends_with(b"\n"),
            "{name}"
        );
        let (state, back) = store.load(&key).unwrap().unwrap();
        assert_eq!(state, created, "{name}");
        assert!(back == *bytes, "{name}: bytes differ after the round trip");
        // Ranges from both ends, across line boundaries.
        let n = bytes.len();
        let offsets = [
            0,
            1,
            n / 3,
            n / 2,
            n.saturating_sub(7),
            n.saturating_sub(1),
            n,
            n + 5,
        ];
        for &off in &offsets {
            for len in [None, Some(0), Some(1), Some(13), Some(n / 2 + 1)] {
                let (_, got) = store
                    .load_range(&key, off as u64, len.map(|l| l as u64))
                    .unwrap()
                    .unwrap();
                let start = off.min(n);
                let end = len.map_or(n, |l| (start + l).min(n));
                assert!(
                    got == bytes[start..end],
                    "{name}: range {off}+{len:?} differs"
                );
            }
        }
    }
}

/// One step of the model comparison.
#[derive(Clone, Debug)]
enum Op {
    Create(Vec<u8>),
    Line(Vec<u8>),
    Raw(Vec<u8>),
    Replace(Vec<u8>),
}

fn bytes_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![Just(b'\n'), Just(b'{'), Just(b'x'), Just(0xc3u8)],
        0..24,
    )
}

fn line_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop_oneof![Just(b'a'), Just(b'"'), Just(0xffu8)], 0..12)
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => bytes_strategy().prop_map(Op::Create),
        4 => line_strategy().prop_map(Op::Line),
        3 => bytes_strategy().prop_map(Op::Raw),
        1 => bytes_strategy().prop_map(Op::Replace),
    ]
}

#[test]
fn operations_give_the_file_stores_bytes() {
    let Some(server) = LocalRedisServer::start_or_skip("operations_give_the_file_stores_bytes")
    else {
        return;
    };
    let store = storage(&server, "model");
    let dir = support::tempdir();
    let case = std::sync::atomic::AtomicU32::new(0);
    let config = ProptestConfig {
        cases: 96,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(config, |(ops in prop::collection::vec(op_strategy(), 1..24))| {
        let case = case.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let file = dir.path().join(format!("c{case}.jsonl"));
        let key = PathBuf::from(format!("/model/c{case}.jsonl"));
        let mut last: Option<RedisVersion> = None;
        for (i, op) in ops.iter().enumerate() {
            let exists = file.exists();
            match op {
                Op::Create(b) => {
                    let r = store.create(&key, b);
                    if exists {
                        let is_exists = matches!(r, Err(RedisStoreError::AlreadyExists { .. }));
                        prop_assert!(is_exists, "step {}: {:?}", i, r);
                    } else {
                        session_store::io::create_new(&file, b, None).unwrap();
                        r.unwrap();
                    }
                }
                Op::Line(l) => {
                    let r = store.append(&key, l, AppendMode::Line, last.map(|v| Fence::exact(&v)));
                    if exists {
                        let out = session_store::io::append_line(&file, l, Durability::Buffer).unwrap();
                        let a = r.unwrap();
                        prop_assert_eq!(a.separator, out.separator);
                        prop_assert_eq!(a.written, out.bytes as u64);
                    } else {
                        let not_found = matches!(r, Err(RedisStoreError::NotFound(_)));
                        prop_assert!(not_found, "step {}: {:?}", i, r);
                    }
                }
                Op::Raw(b) => {
                    let r = store.append(&key, b, AppendMode::Raw, last.map(|v| Fence::exact(&v)));
                    if exists {
                        session_store::io::append_raw(&file, b).unwrap();
                        prop_assert_eq!(r.unwrap().written, b.len() as u64);
                    } else {
                        let not_found = matches!(r, Err(RedisStoreError::NotFound(_)));
                        prop_assert!(not_found, "step {}: {:?}", i, r);
                    }
                }
                Op::Replace(b) => {
                    let before = last;
                    let v = store.rewrite(&key, b, before.map(|v| Fence::exact(&v))).unwrap();
                    session_store::io::atomic_rewrite(&file, b).unwrap();
                    if let Some(before) = before {
                        prop_assert_ne!(v.generation, before.generation);
                        prop_assert!(v.version > before.version);
                    }
                }
            }
            let want = std::fs::read(&file).ok();
            let got = store.load(&key).unwrap();
            prop_assert_eq!(got.as_ref().map(|(_, b)| b.clone()), want.clone(), "step {}: {:?}", i, op);
            if let (Some((v, _)), Some(want)) = (&got, &want) {
                prop_assert_eq!(v.len, want.len() as u64);
                prop_assert_eq!(v.torn, !want.is_empty() && !want.ends_with(b"\n"));
                prop_assert_eq!(store.version(&key).unwrap(), Some(*v));
                // The tail a reader catching up from the previous length would read.
                if let Some(prev) = last.filter(|p| p.generation == v.generation) {
                    let (_, tail) = store.load_range(&key, prev.len, None).unwrap().unwrap();
                    prop_assert_eq!(&tail[..], &want[prev.len as usize..]);
                }
            }
            last = got.map(|(v, _)| v);
        }
    });
}

const HEADER: &str =
    r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#;

#[test]
fn fenced_appends_refuse_a_stale_writer_and_lose_nothing() {
    let Some(server) =
        LocalRedisServer::start_or_skip("fenced_appends_refuse_a_stale_writer_and_lose_nothing")
    else {
        return;
    };
    let a = storage(&server, "fence");
    let b = storage(&server, "fence");
    let path = Path::new("/agents/main/sessions/s.jsonl");
    let v1 = a.create(path, format!("{HEADER}\n").as_bytes()).unwrap();
    // Both writers saw v1.
    let seen_by_b = b.version(path).unwrap().unwrap();
    assert_eq!(seen_by_b, v1);
    let after_a = a
        .append(
            path,
            br#"{"id":"a1"}"#,
            AppendMode::Line,
            Some(Fence::exact(&v1)),
        )
        .unwrap();
    assert!(after_a.after.version > v1.version);
    assert_eq!(after_a.after.len, v1.len + 12);
    assert_eq!(after_a.after.generation, v1.generation);
    let stale = b
        .append(
            path,
            br#"{"id":"b1"}"#,
            AppendMode::Line,
            Some(Fence::exact(&seen_by_b)),
        )
        .unwrap_err();
    match &stale {
        RedisStoreError::Fence {
            path: p,
            expected,
            found,
        } => {
            assert_eq!(p, path);
            assert_eq!(*expected, Fence::exact(&v1));
            assert_eq!(*found, after_a.after);
        }
        other => panic!("expected a fence error, got {other:?}"),
    }
    assert_eq!(
        stale.to_string(),
        format!(
            "fenced write to /agents/main/sessions/s.jsonl refused: expected generation {g} version {v} length {n}, found generation {g} version {w} length {m}",
            g = v1.generation,
            v = v1.version,
            n = v1.len,
            w = after_a.after.version,
            m = v1.len + 12
        )
    );
    // B re-reads and retries: both lines are there once, in order.
    let (now, _) = b.load(path).unwrap().unwrap();
    b.append(
        path,
        br#"{"id":"b1"}"#,
        AppendMode::Line,
        Some(Fence::exact(&now)),
    )
    .unwrap();
    let (_, bytes) = a.load(path).unwrap().unwrap();
    assert_eq!(
        String::from_utf8(bytes).unwrap(),
        format!("{HEADER}\n{{\"id\":\"a1\"}}\n{{\"id\":\"b1\"}}\n")
    );
    // A generation-only fence accepts appends made since; a replace changes the generation, so
    // it refuses after one.
    let g_only = Fence::generation(v1.generation);
    a.append(path, b"{}", AppendMode::Line, Some(g_only))
        .unwrap();
    let replaced = b
        .rewrite(
            path,
            format!("{HEADER}\n").as_bytes(),
            Some(Fence::generation(v1.generation)),
        )
        .unwrap();
    assert_ne!(replaced.generation, v1.generation);
    assert!(replaced.version > after_a.after.version);
    assert!(matches!(
        a.append(path, b"{}", AppendMode::Line, Some(g_only)),
        Err(RedisStoreError::Fence { .. })
    ));
    assert!(matches!(
        a.rewrite(path, b"", Some(g_only)),
        Err(RedisStoreError::Fence { .. })
    ));
    // Remove: fenced too, then appends find nothing.
    assert!(matches!(
        a.remove(path, Some(g_only)),
        Err(RedisStoreError::Fence { .. })
    ));
    assert_eq!(
        a.remove(path, Some(Fence::generation(replaced.generation)))
            .unwrap(),
        replaced
    );
    assert!(a.load(path).unwrap().is_none());
    assert!(matches!(
        a.append(path, b"{}", AppendMode::Line, None),
        Err(RedisStoreError::NotFound(_))
    ));
    assert!(matches!(
        a.rewrite(path, b"", Some(g_only)),
        Err(RedisStoreError::NotFound(_))
    ));
    // Create-if-absent refuses an existing session; copy makes a byte-exact backup.
    let v = a.create(path, b"x\n").unwrap();
    match a.create(path, b"y\n") {
        Err(RedisStoreError::AlreadyExists { found, .. }) => assert_eq!(found, v),
        other => panic!("{other:?}"),
    }
    let backup = Path::new("/agents/main/sessions/s.jsonl.bak");
    let (from, to) = a.copy(path, backup).unwrap();
    assert_eq!(from, v);
    assert_ne!(to.generation, v.generation);
    assert_eq!(a.load(backup).unwrap().unwrap().1, b"x\n");
    assert!(matches!(
        a.copy(path, backup),
        Err(RedisStoreError::AlreadyExists { .. })
    ));
}

/// Many threads append through one fence each, retrying on refusal: every line lands exactly
/// once and whole.
#[test]
fn racing_fenced_appends_from_threads_lose_nothing() {
    let Some(server) =
        LocalRedisServer::start_or_skip("racing_fenced_appends_from_threads_lose_nothing")
    else {
        return;
    };
    let path = Path::new("/race/s.jsonl");
    storage(&server, "race").create(path, b"h\n").unwrap();
    let threads: Vec<_> = (0..4)
        .map(|w| {
            let store = storage(&server, "race");
            std::thread::spawn(move || {
                let mut refused = 0u32;
                for i in 0..100 {
                    let line = format!("w{w}-{i}");
                    loop {
                        let seen = store.version(path).unwrap().unwrap();
                        match store.append(
                            path,
                            line.as_bytes(),
                            AppendMode::Line,
                            Some(Fence::exact(&seen)),
                        ) {
                            Ok(_) => break,
                            Err(RedisStoreError::Fence { .. }) => refused += 1,
                            Err(e) => panic!("{e}"),
                        }
                    }
                }
                refused
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let (v, bytes) = storage(&server, "race").load(path).unwrap().unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 401);
    assert_eq!(v.len, text.len() as u64);
    let mut sorted: Vec<&str> = lines[1..].to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), 400);
    for w in 0..4 {
        let mine: Vec<&str> = lines
            .iter()
            .copied()
            .filter(|l| l.starts_with(&format!("w{w}-")))
            .collect();
        let want: Vec<String> = (0..100).map(|i| format!("w{w}-{i}")).collect();
        assert_eq!(mine, want);
    }
}

#[test]
fn write_lock_is_exclusive_and_released_only_by_its_holder() {
    let Some(server) =
        LocalRedisServer::start_or_skip("write_lock_is_exclusive_and_released_only_by_its_holder")
    else {
        return;
    };
    let store = storage(&server, "lock");
    let path = Path::new("/l/s.jsonl");
    let lock_key = store.keys(path).unwrap().lock;
    let mut con = redis::Client::open(server.url())
        .unwrap()
        .get_connection()
        .unwrap();
    let held = store.lock(path, &RedisLockOptions::default()).unwrap();
    assert!(
        held.token()
            .ends_with(&format!(" pid={}", std::process::id()))
    );
    let stored: String = redis::cmd("GET").arg(&lock_key).query(&mut con).unwrap();
    assert_eq!(stored, held.token());
    let ttl: i64 = redis::cmd("PTTL").arg(&lock_key).query(&mut con).unwrap();
    assert!(ttl > 0 && ttl <= 30_000, "{ttl}");
    // Renewing pushes the ttl up again.
    held.renew(Duration::from_secs(100)).unwrap();
    let ttl: i64 = redis::cmd("PTTL").arg(&lock_key).query(&mut con).unwrap();
    assert!(ttl > 30_000 && ttl <= 100_000, "{ttl}");
    let quick = RedisLockOptions {
        timeout: Some(Duration::from_millis(30)),
        ..RedisLockOptions::default()
    };
    match store.lock(path, &quick) {
        Err(RedisStoreError::LockTimeout {
            path: p,
            holder,
            ttl_ms,
            ..
        }) => {
            assert_eq!(p, path);
            assert_eq!(holder, held.token());
            assert!(ttl_ms > 0);
        }
        other => panic!("expected a lock timeout, got {other:?}"),
    }
    // The lock expires (played by deleting it) and another writer takes it: the first holder's
    // release must not delete the new holder's lock.
    let _: i64 = redis::cmd("DEL").arg(&lock_key).query(&mut con).unwrap();
    let second = store.lock(path, &quick).unwrap();
    assert!(matches!(
        held.renew(Duration::from_secs(1)),
        Err(RedisStoreError::LockLost(_))
    ));
    assert!(matches!(held.release(), Err(RedisStoreError::LockLost(_))));
    let stored: String = redis::cmd("GET").arg(&lock_key).query(&mut con).unwrap();
    assert_eq!(stored, second.token());
    drop(second);
    let gone: Option<String> = redis::cmd("GET").arg(&lock_key).query(&mut con).unwrap();
    assert_eq!(gone, None);
    // Free again.
    store.lock(path, &quick).unwrap().release().unwrap();
}

#[test]
fn listing_orders_sessions_by_last_activity() {
    let Some(server) = LocalRedisServer::start_or_skip("listing_orders_sessions_by_last_activity")
    else {
        return;
    };
    let store = storage(&server, "list");
    let other_prefix = storage(&server, "other");
    let dir = Path::new("/agents/main/sessions");
    let pause = || std::thread::sleep(Duration::from_millis(3)); // distinct server ms
    for name in ["a.jsonl", "b.jsonl", "c.jsonl"] {
        store.create(&dir.join(name), b"h\n").unwrap();
        pause();
    }
    other_prefix.create(&dir.join("z.jsonl"), b"h\n").unwrap();
    store
        .create(Path::new("/agents/ops/sessions/o.jsonl"), b"h\n")
        .unwrap();
    pause();
    store
        .append(&dir.join("a.jsonl"), b"{}", AppendMode::Line, None)
        .unwrap();
    let names = |entries: Vec<session_store::redis_store::RedisSessionEntry>| {
        entries
            .into_iter()
            .map(|e| e.path.display().to_string())
            .collect::<Vec<_>>()
    };
    let listed = store.list(dir).unwrap();
    assert!(
        listed
            .windows(2)
            .all(|w| w[0].last_activity_ms > w[1].last_activity_ms)
    );
    assert_eq!(
        names(listed),
        [
            "/agents/main/sessions/a.jsonl",
            "/agents/main/sessions/c.jsonl",
            "/agents/main/sessions/b.jsonl"
        ]
    );
    store.remove(&dir.join("c.jsonl"), None).unwrap();
    assert_eq!(
        names(store.list(dir).unwrap()),
        [
            "/agents/main/sessions/a.jsonl",
            "/agents/main/sessions/b.jsonl"
        ]
    );
    assert_eq!(
        store.all_dirs().unwrap(),
        [
            PathBuf::from("/agents/main/sessions"),
            PathBuf::from("/agents/ops/sessions")
        ]
    );
    assert_eq!(
        names(other_prefix.list(dir).unwrap()),
        ["/agents/main/sessions/z.jsonl"]
    );
    assert!(store.list(Path::new("/nowhere")).unwrap().is_empty());
}

#[test]
fn local_server_answers_and_is_gone_after_drop() {
    let Some(server) =
        LocalRedisServer::start_or_skip("local_server_answers_and_is_gone_after_drop")
    else {
        return;
    };
    let url = server.url();
    assert_eq!(url, format!("redis://127.0.0.1:{}/", server.port()));
    let mut con = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    let save: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("save")
        .query(&mut con)
        .unwrap();
    assert_eq!(save, ["save", ""]);
    let aof: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("appendonly")
        .query(&mut con)
        .unwrap();
    assert_eq!(aof, ["appendonly", "no"]);
    drop(con);
    drop(server);
    assert!(matches!(
        RedisStorage::connect(&url, None),
        Err(RedisStoreError::Connect { .. })
    ));
}

/// The storage's renewer keeps a held lease alive past its ttl (1.5 s, renewed every 0.5 s,
/// held for 3.2 s); once released, nothing renews it.
#[test]
fn a_held_lock_outlives_its_ttl_while_renewed() {
    let Some(server) =
        LocalRedisServer::start_or_skip("a_held_lock_outlives_its_ttl_while_renewed")
    else {
        return;
    };
    let store = storage(&server, "renew");
    let path = Path::new("/r/s.jsonl");
    let lock_key = store.keys(path).unwrap().lock;
    let mut con = redis::Client::open(server.url())
        .unwrap()
        .get_connection()
        .unwrap();
    let options = RedisLockOptions {
        ttl: Duration::from_millis(1500),
        ..RedisLockOptions::default()
    };
    let held = store.lock(path, &options).unwrap();
    let other = store.lock(Path::new("/r/t.jsonl"), &options).unwrap();
    std::thread::sleep(Duration::from_millis(3200));
    let stored: Option<String> = redis::cmd("GET").arg(&lock_key).query(&mut con).unwrap();
    assert_eq!(stored.as_deref(), Some(held.token()));
    let ttl: i64 = redis::cmd("PTTL").arg(&lock_key).query(&mut con).unwrap();
    assert!(ttl > 0 && ttl <= 1500, "{ttl}");
    held.release().unwrap();
    other.release().unwrap();
    let gone: Option<String> = redis::cmd("GET").arg(&lock_key).query(&mut con).unwrap();
    assert_eq!(gone, None);
}

#[test]
fn a_session_created_at_a_time_keeps_it_and_later_changes_move_past_it() {
    let Some(server) = LocalRedisServer::start_or_skip(
        "a_session_created_at_a_time_keeps_it_and_later_changes_move_past_it",
    ) else {
        return;
    };
    let store = storage(&server, "at");
    let dir = Path::new("/at/sessions");
    let at = |us: u64| std::time::UNIX_EPOCH + Duration::from_micros(us);
    // Far in the past, and in the future (a clock that ran ahead): the stamps are kept.
    let old = store
        .create_at(
            &dir.join("old.jsonl"),
            b"{\"h\":1}\n",
            at(1_000_000_123_456),
        )
        .unwrap();
    assert_eq!(old.version, 1_000_000_123_456);
    assert_eq!(old.len, 8);
    let future_us = 4_102_444_800_000_001; // 2100-01-01T00:00:00.000001Z
    let ahead = store
        .create_at(&dir.join("ahead.jsonl"), b"{\"h\":2}\n", at(future_us))
        .unwrap();
    assert_eq!(ahead.version, future_us);
    assert_eq!(ahead.snapshot().mtime_ns, 4_102_444_800_000_001_000);
    // Before the epoch: 1 µs.
    let early = store
        .create_at(
            &dir.join("early.jsonl"),
            b"",
            std::time::UNIX_EPOCH - Duration::from_secs(5),
        )
        .unwrap();
    assert_eq!(early.version, 1);
    let listed: Vec<(PathBuf, i64)> = store
        .list(dir)
        .unwrap()
        .into_iter()
        .map(|e| (e.path, e.last_activity_ms))
        .collect();
    assert_eq!(
        listed,
        [
            (dir.join("ahead.jsonl"), 4_102_444_800_000),
            (dir.join("old.jsonl"), 1_000_000_123),
            (dir.join("early.jsonl"), 0),
        ]
    );
    // An append after a stamp from the future is one microsecond later (strictly increasing);
    // after one from the past it takes the server's clock.
    let a = store
        .append(&dir.join("ahead.jsonl"), b"x", AppendMode::Line, None)
        .unwrap();
    assert_eq!(a.after.version, future_us + 1);
    assert_eq!(a.after.generation, ahead.generation);
    let o = store
        .append(&dir.join("old.jsonl"), b"x", AppendMode::Line, None)
        .unwrap();
    assert!(o.after.version > 1_700_000_000_000_000, "{}", o.after);
    // Create-if-absent as `create`.
    assert!(matches!(
        store.create_at(&dir.join("old.jsonl"), b"", at(5)),
        Err(RedisStoreError::AlreadyExists { .. })
    ));
}

/// A TCP server on a free loopback port that accepts connections and never answers, except
/// `+PONG` to the first `answered` commands it receives (over all connections; commands are
/// counted by their leading `*`, one command per read as the client sends them). Its
/// connections stay open until the process ends.
fn silent_server(answered: usize) -> String {
    use std::io::{Read, Write};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let left = Arc::new(AtomicUsize::new(answered));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let left = Arc::clone(&left);
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = stream.read(&mut buf) {
                    if n == 0 {
                        return;
                    }
                    let answer = left
                        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |l| l.checked_sub(1))
                        .is_ok();
                    if buf[0] == b'*' && answer {
                        let _ = stream.write_all(b"+PONG\r\n");
                    }
                }
            });
        }
    });
    format!("redis://127.0.0.1:{port}/")
}

#[test]
fn a_server_that_stops_answering_fails_with_a_timeout_error() {
    // Nothing answers: the connect times out (no redis-server needed).
    let url = silent_server(0);
    let err =
        RedisStorage::connect_with_timeout(&url, None, Duration::from_millis(200)).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "cannot connect to redis at {url}: timed out: no answer from the server within 200 \
             ms (the command timeout)"
        )
    );
    assert_eq!(err.io_kind(), std::io::ErrorKind::TimedOut);

    // The PING of the connect is answered, then nothing: a read (a MULTI block of five
    // replies) and a script call each fail with one timeout error.
    let url = silent_server(1);
    let store = RedisStorage::connect_with_timeout(&url, None, Duration::from_millis(200)).unwrap();
    assert_eq!(store.timeout(), Duration::from_millis(200));
    let path = Path::new("/hung/a.jsonl");
    let expected = "redis command for /hung/a.jsonl failed: timed out: no answer from the server \
                    within 200 ms (the command timeout)";
    let err = store.load(path).unwrap_err();
    assert_eq!(err.to_string(), expected);
    assert_eq!(err.io_kind(), std::io::ErrorKind::TimedOut);
    // The timed-out connection was dropped; a fresh one gets no answer either.
    let err = store
        .append(path, b"x", AppendMode::Line, None)
        .unwrap_err();
    assert_eq!(err.to_string(), expected);
    let io: std::io::Error = err.into();
    assert_eq!(io.kind(), std::io::ErrorKind::TimedOut);
}

#[test]
fn tls_urls_are_refused_with_a_clear_message() {
    let err = RedisStorage::connect("rediss://127.0.0.1:1/", None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot connect to redis at rediss://127.0.0.1:1/: TLS (rediss://) is not supported (this \
         build's redis client has no TLS); use redis:// or redis+unix:// (for a server that \
         requires TLS, through a local TLS tunnel)"
    );
    assert_eq!(err.io_kind(), std::io::ErrorKind::Unsupported);
    let err = RedisStorage::connect("REDISS://:secret@h:1/", None).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("cannot connect to redis at REDISS://:***@h:1/: TLS (rediss://)"),
        "{err}"
    );
}

#[test]
fn a_corrupt_length_in_the_meta_hash_is_an_error_naming_the_session() {
    let Some(server) = LocalRedisServer::start_or_skip(
        "a_corrupt_length_in_the_meta_hash_is_an_error_naming_the_session",
    ) else {
        return;
    };
    let store = storage(&server, "corrupt");
    let path = Path::new("/c/s.jsonl");
    store
        .create(path, b"{\"type\":\"session\"}\n{\"a\":1}\n")
        .unwrap();
    let meta = store.keys(path).unwrap().meta;
    let mut con = redis::Client::open(server.url())
        .unwrap()
        .get_connection()
        .unwrap();
    let _: i64 = redis::cmd("HSET")
        .arg(&meta)
        .arg("n")
        .arg("1000000000000000000")
        .query(&mut con)
        .unwrap();
    let err = store.load(path).unwrap_err();
    assert!(matches!(err, RedisStoreError::Reply { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "unexpected redis reply for /c/s.jsonl: the stored lines hold 27 bytes, the meta hash \
         says 1000000000000000000"
    );
}

/// A TCP server on a free loopback port that records every command it receives (as text,
/// in order) and answers `+OK` to each, except a `SET … NX PX` (never answered: its reply is
/// lost) and `EVALSHA` (answered `:1`, as the release script deleting the lock).
fn lossy_lock_server() -> (String, std::sync::Arc<parking_lot::Mutex<Vec<String>>>) {
    use std::io::{Read, Write};
    use std::sync::Arc;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let record = Arc::clone(&record);
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = stream.read(&mut buf) {
                    if n == 0 {
                        return;
                    }
                    let text = String::from_utf8_lossy(&buf[..n]).into_owned();
                    let commands = 1 + text.matches("\r\n*").count();
                    let answer: Vec<u8> = if text.contains("\r\nNX\r\n") {
                        Vec::new()
                    } else if text.contains("EVALSHA") {
                        b":1\r\n".to_vec()
                    } else {
                        b"+OK\r\n".repeat(commands)
                    };
                    record.lock().push(text);
                    let _ = stream.write_all(&answer);
                }
            });
        }
    });
    (format!("redis://127.0.0.1:{port}/"), seen)
}

#[test]
fn a_lock_request_without_an_answer_is_released_before_the_error() {
    let (url, seen) = lossy_lock_server();
    let store = RedisStorage::connect_with_timeout(&url, Some("lossy"), Duration::from_millis(200))
        .unwrap();
    let path = Path::new("/l/s.jsonl");
    let lock_key = store.keys(path).unwrap().lock;
    let options = RedisLockOptions {
        timeout: Some(Duration::ZERO),
        ..RedisLockOptions::default()
    };
    let err = store.lock(path, &options).unwrap_err();
    assert_eq!(
        err.to_string(),
        "redis command for /l/s.jsonl failed: timed out: no answer from the server within 200 \
         ms (the command timeout)"
    );
    let seen = seen.lock().clone();
    let set = seen.iter().position(|c| c.contains("\r\nNX\r\n")).unwrap();
    // The token the SET carried, then the release script with that key and token.
    let args: Vec<&str> = seen[set].split("\r\n").collect();
    let key_at = args.iter().position(|a| *a == lock_key).unwrap();
    let token = args[key_at + 2];
    assert!(
        token.ends_with(&format!(" pid={}", std::process::id())),
        "{token}"
    );
    // On a fresh connection (the timed-out one was dropped): its handshake, then the release.
    let last = seen.last().unwrap();
    assert_eq!(
        seen[set + 1..]
            .iter()
            .filter(|c| c.contains("EVALSHA"))
            .count(),
        1
    );
    let release: Vec<&str> = last.split("\r\n").collect();
    assert_eq!(
        [release[0], release[2], release[6], release[8], release[10]],
        ["*5", "EVALSHA", "1", lock_key.as_str(), token]
    );
}
