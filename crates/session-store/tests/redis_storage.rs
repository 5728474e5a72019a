//! `RedisStorage` through the `Storage` trait gives what `FileStorage` gives: random sequences
//! of trait calls (create, replace, line appends fenced on a fresh or a stale snapshot, raw
//! appends, backups, every read) run on both, and after every call the results (bytes, error
//! kinds, separators, snapshot sizes, listings) are equal. Plus the lock's re-entry and
//! timeout as `LockError`s, and snapshots as storage.rs documents them. Needs a real
//! `redis-server` (skipped with a printed reason only when no binary exists).
#![cfg(feature = "redis")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

mod support;

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use proptest::prelude::*;
use session_store::io::{AppendToExistingError, KnownFile};
use session_store::lock::{Backoff, LockError, LockOptions};
use session_store::redis_store::{REDIS_DEV, RedisStorage};
use session_store::test_util::redis_server::LocalRedisServer;
use session_store::with_write_lock;
use session_store::{Durability, FileStorage, SessionFileSnapshot, Storage};

#[derive(Clone, Debug)]
enum Op {
    CreateNew(usize, Vec<u8>),
    Replace(usize, Vec<u8>),
    /// Append a line fenced on the snapshot (and first line) taken after the previous step.
    AppendFresh(usize, Vec<u8>),
    /// Append a line fenced on the oldest snapshot still remembered (maybe from before a
    /// replace).
    AppendStale(usize, Vec<u8>),
    AppendUnfenced(usize, Vec<u8>),
    AppendRaw(usize, Vec<u8>),
    Backup(usize),
    ReadRanges(usize, Vec<(u8, u8)>),
}

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![Just(b'\n'), Just(b'{'), Just(b'z'), Just(0xe2u8)],
        0..20,
    )
}

fn line() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop_oneof![Just(b'q'), Just(b'}'), Just(0x80u8)], 0..10)
}

fn op() -> impl Strategy<Value = Op> {
    let s = 0usize..2;
    prop_oneof![
        2 => (s.clone(), bytes()).prop_map(|(s, b)| Op::CreateNew(s, b)),
        1 => (s.clone(), bytes()).prop_map(|(s, b)| Op::Replace(s, b)),
        4 => (s.clone(), line()).prop_map(|(s, l)| Op::AppendFresh(s, l)),
        2 => (s.clone(), line()).prop_map(|(s, l)| Op::AppendStale(s, l)),
        1 => (s.clone(), line()).prop_map(|(s, l)| Op::AppendUnfenced(s, l)),
        2 => (s.clone(), bytes()).prop_map(|(s, b)| Op::AppendRaw(s, b)),
        1 => s.clone().prop_map(Op::Backup),
        2 => (s, prop::collection::vec((0u8..40, 0u8..12), 1..4)).prop_map(|(s, r)| Op::ReadRanges(s, r)),
    ]
}

/// One backend's view: its storage, the directory it uses, and per session the snapshots and
/// first lines remembered so far (oldest first).
struct Side {
    storage: Arc<dyn Storage>,
    dir: PathBuf,
    seen: [Vec<(SessionFileSnapshot, Vec<u8>)>; 2],
    backups: usize,
}

impl Side {
    fn path(&self, s: usize) -> PathBuf {
        self.dir.join(format!("s{s}.jsonl"))
    }

    /// The observable outcome of `op`, as text.
    fn apply(&mut self, op: &Op) -> String {
        let kind = |e: std::io::Error| format!("err {:?}", e.kind());
        let append_kind = |e: AppendToExistingError| match e {
            AppendToExistingError::Deleted => "deleted".to_owned(),
            AppendToExistingError::Replaced => "replaced".to_owned(),
            AppendToExistingError::ReplacedDuringWrite => "replaced during write".to_owned(),
            AppendToExistingError::Io(e) => kind(e),
        };
        let append =
            |side: &Side, s: usize, l: &[u8], known: Option<&(SessionFileSnapshot, Vec<u8>)>| {
                let known = known.map(|(snapshot, first)| KnownFile {
                    snapshot: *snapshot,
                    first_line: first,
                });
                match side
                    .storage
                    .append_line(&side.path(s), l, Durability::Buffer, known)
                {
                    Ok(v) => {
                        assert_eq!(v.after.size, v.before.size + v.written.len() as u64);
                        assert!(v.after.same_file(&v.before));
                        format!(
                            "ok sep={} at={} wrote={:?}",
                            v.separator, v.before.size, v.written
                        )
                    }
                    Err(e) => append_kind(e),
                }
            };
        match op {
            Op::CreateNew(s, b) => match self.storage.create_new(&self.path(*s), b) {
                Ok(()) => "ok".to_owned(),
                Err(e) => kind(e),
            },
            Op::Replace(s, b) => match self.storage.replace(&self.path(*s), b) {
                Ok(()) => "ok".to_owned(),
                Err(e) => kind(e),
            },
            Op::AppendFresh(s, l) => append(self, *s, l, self.seen[*s].last()),
            Op::AppendStale(s, l) => append(self, *s, l, self.seen[*s].first()),
            Op::AppendUnfenced(s, l) => append(self, *s, l, None),
            Op::AppendRaw(s, b) => match self.storage.append_raw(&self.path(*s), b) {
                Ok(()) => "ok".to_owned(),
                Err(e) => kind(e),
            },
            Op::Backup(s) => {
                self.backups += 1;
                let backup = self.dir.join(format!("s{s}.jsonl.bak{}", self.backups));
                match self.storage.read_all(&self.path(*s)) {
                    Ok(original) => {
                        match self.storage.backup_copy(&self.path(*s), &backup, &original) {
                            Ok(()) => {
                                format!("ok {:?}", self.storage.read_all(&backup).map_err(kind))
                            }
                            Err(e) => kind(e),
                        }
                    }
                    Err(e) => kind(e),
                }
            }
            Op::ReadRanges(s, ranges) => {
                let mut bufs: Vec<Vec<u8>> = ranges
                    .iter()
                    .map(|(_, n)| vec![0; usize::from(*n)])
                    .collect();
                let mut req: Vec<(u64, &mut [u8])> = ranges
                    .iter()
                    .zip(bufs.iter_mut())
                    .map(|((o, _), b)| (u64::from(*o), b.as_mut_slice()))
                    .collect();
                match self.storage.read_ranges(&self.path(*s), &mut req) {
                    Ok(()) => format!("ok {bufs:?}"),
                    Err(e) => kind(e),
                }
            }
        }
    }

    /// Everything observable about session `s` now (and remembers its snapshot).
    fn observe(&mut self, s: usize) -> String {
        let path = self.path(s);
        let stat = self.storage.stat(&path).unwrap();
        let all = self.storage.read_all(&path).map_err(|e| e.kind());
        let from = self.storage.read_from(&path, 3).map_err(|e| e.kind());
        let head = self.storage.read_head(&path).map_err(|e| e.kind());
        if let (Some(snapshot), Ok(bytes)) = (stat, &all) {
            let end = bytes
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |p| p + 1);
            self.seen[s].push((snapshot, bytes[..end].to_vec()));
        }
        let synced = self
            .storage
            .sync(&path, Durability::SyncData)
            .map_err(|e| e.kind());
        format!(
            "size={:?} all={all:?} from3={from:?} head={head:?} sync={synced:?}",
            stat.map(|s| s.size)
        )
    }

    fn listing(&self) -> Vec<String> {
        self.storage
            .list_sessions(&self.dir)
            .unwrap()
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect()
    }
}

#[test]
fn trait_calls_give_the_file_stores_results() {
    let Some(server) = LocalRedisServer::start_or_skip("trait_calls_give_the_file_stores_results")
    else {
        return;
    };
    let redis = Arc::new(RedisStorage::connect(&server.url(), Some("trait")).unwrap());
    let root = support::tempdir();
    let case = std::sync::atomic::AtomicU32::new(0);
    let config = ProptestConfig {
        cases: 80,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(config, |(ops in prop::collection::vec(op(), 1..20))| {
        let n = case.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = root.path().join(format!("c{n}"));
        std::fs::create_dir(&dir).unwrap();
        let mut files = Side { storage: FileStorage::shared(), dir: dir.clone(), seen: Default::default(), backups: 0 };
        let mut on_redis = Side { storage: redis.clone(), dir, seen: Default::default(), backups: 0 };
        for (i, op) in ops.iter().enumerate() {
            let a = files.apply(op);
            let b = on_redis.apply(op);
            prop_assert_eq!(&b, &a, "step {}: {:?}", i, op);
            for s in 0..2 {
                let a = files.observe(s);
                let b = on_redis.observe(s);
                prop_assert_eq!(&b, &a, "step {} session {}", i, s);
            }
            prop_assert_eq!(on_redis.listing(), files.listing(), "step {}", i);
        }
    });
}

#[test]
fn snapshots_and_listing_follow_the_storage_contract() {
    let Some(server) =
        LocalRedisServer::start_or_skip("snapshots_and_listing_follow_the_storage_contract")
    else {
        return;
    };
    let redis = RedisStorage::connect(&server.url(), Some("contract")).unwrap();
    let s: &dyn Storage = &redis;
    assert_eq!(s.name(), "redis");
    assert!(!s.local_files());
    assert!(s.replace_is_fenced());
    assert!(s.caches().is_none());
    let path = Path::new("/agents/main/sessions/./a.jsonl");
    s.ensure_dir(Path::new("/agents/main/sessions")).unwrap();
    assert_eq!(s.stat(path).unwrap(), None);
    assert_eq!(s.read_all(path).unwrap_err().kind(), ErrorKind::NotFound);
    assert_eq!(s.read_head(path).unwrap_err().kind(), ErrorKind::NotFound);
    s.create_new(path, b"{\"type\":\"session\"}\n").unwrap();
    let one = s.stat(path).unwrap().unwrap();
    assert_eq!(one.dev, REDIS_DEV);
    assert_eq!(one.size, 19);
    assert_eq!(one.birth_ns, None);
    assert_eq!(one.mtime_ns, one.ctime_ns);
    // The change stamp reads as wall-clock nanoseconds (within a day of ours).
    let now_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i128;
    assert!(
        (one.mtime_ns - now_ns).abs() < 86_400 * 1_000_000_000,
        "{}",
        one.mtime_ns
    );
    assert_eq!(one.mtime_ns % 1000, 0);
    s.append_line(path, b"{}", Durability::SyncAll, None)
        .unwrap();
    let two = s.stat(path).unwrap().unwrap();
    assert!(two.same_file(&one));
    assert!(two.mtime_ns > one.mtime_ns);
    assert_eq!(two.size, 22);
    s.replace(path, b"{\"type\":\"session\"}\n").unwrap();
    let three = s.stat(path).unwrap().unwrap();
    assert!(!three.same_file(&two));
    assert!(three.mtime_ns > two.mtime_ns);
    assert_eq!(
        s.read_head(path).unwrap(),
        Some(b"{\"type\":\"session\"}".to_vec())
    );
    // A header longer than the sniff limit is cut there.
    let long = Path::new("/agents/main/sessions/long.jsonl");
    let header = vec![b'h'; session_store::io::MAX_HEADER_BYTES + 10];
    s.append_raw(long, &header).unwrap();
    assert_eq!(
        s.read_head(long).unwrap().map(|h| h.len()),
        Some(session_store::io::MAX_HEADER_BYTES)
    );
    s.create_new(Path::new("/agents/main/sessions/notes.txt"), b"x")
        .unwrap();
    s.create_new(Path::new("/agents/ops/sessions/o.jsonl"), b"")
        .unwrap();
    assert_eq!(
        s.read_head(Path::new("/agents/ops/sessions/o.jsonl"))
            .unwrap(),
        None
    );
    assert_eq!(
        s.list_sessions(Path::new("/agents/main/sessions/"))
            .unwrap(),
        [
            PathBuf::from("/agents/main/sessions/a.jsonl"),
            PathBuf::from("/agents/main/sessions/long.jsonl")
        ]
    );
    assert_eq!(
        s.list_dirs(Path::new("/agents")).unwrap(),
        Vec::<PathBuf>::new()
    );
    assert_eq!(
        s.list_dirs(Path::new("/agents/main")).unwrap(),
        [PathBuf::from("/agents/main/sessions")]
    );
    assert_eq!(
        s.sync(Path::new("/agents/none.jsonl"), Durability::SyncData)
            .unwrap_err()
            .kind(),
        ErrorKind::NotFound
    );
    s.sync(Path::new("/agents/none.jsonl"), Durability::Buffer)
        .unwrap();
}

#[test]
fn the_write_lock_is_reentrant_per_thread_and_times_out_as_a_lock_error() {
    let Some(server) = LocalRedisServer::start_or_skip(
        "the_write_lock_is_reentrant_per_thread_and_times_out_as_a_lock_error",
    ) else {
        return;
    };
    let redis = Arc::new(RedisStorage::connect(&server.url(), Some("relock")).unwrap());
    let path = Path::new("/l/s.jsonl");
    let lock_key = redis.keys(path).unwrap().lock;
    let mut con = redis::Client::open(server.url())
        .unwrap()
        .get_connection()
        .unwrap();
    let quick = LockOptions {
        backoff: Backoff::Fixed(Duration::from_millis(2)),
        ..LockOptions::default().with_timeout(Some(Duration::from_millis(50)))
    };
    let depth = with_write_lock(&*redis, path, &quick, || {
        let token: String = redis::cmd("GET").arg(&lock_key).query(&mut con).unwrap();
        // Re-entry on this thread runs at once, under the same lease.
        let inner = with_write_lock(&*redis, path, &quick, || {
            let again: String = redis::cmd("GET").arg(&lock_key).query(&mut con).unwrap();
            assert_eq!(again, token);
            2
        })
        .unwrap();
        // Another thread times out, naming this process.
        let other = {
            let redis = redis.clone();
            let quick = quick.clone();
            std::thread::spawn(move || with_write_lock(&*redis, path, &quick, || ()).unwrap_err())
                .join()
                .unwrap()
        };
        match &other {
            LockError::Timeout {
                timeout_ms,
                owner,
                owner_pid,
                owner_alive,
                lock_path,
            } => {
                assert_eq!(*timeout_ms, 50);
                let pid = u64::from(std::process::id());
                assert_eq!(owner, &format!("pid={pid} alive=true"));
                assert_eq!(*owner_pid, Some(pid));
                assert!(*owner_alive);
                // The Redis lock key: there is no lock file.
                assert_eq!(lock_path, Path::new("relock:{/l}:s.jsonl:k"));
                assert_eq!(lock_path, Path::new(&lock_key));
            }
            e => panic!("expected a timeout, got {e:?}"),
        }
        assert_eq!(
            other.to_string(),
            format!(
                "session file locked (timeout 50ms): pid={} alive=true relock:{{/l}}:s.jsonl:k",
                std::process::id()
            )
        );
        assert!(other.is_busy_with_active_run());
        // Still held after the inner level ended.
        let still: Option<String> = redis::cmd("GET").arg(&lock_key).query(&mut con).unwrap();
        assert_eq!(still.as_deref(), Some(token.as_str()));
        inner
    })
    .unwrap();
    assert_eq!(depth, 2);
    let gone: Option<String> = redis::cmd("GET").arg(&lock_key).query(&mut con).unwrap();
    assert_eq!(gone, None);
    // A panicking write releases the lock too.
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        with_write_lock(&*redis, path, &quick, || panic!("inside the lock")).unwrap();
    }));
    assert!(caught.is_err());
    let gone: Option<String> = redis::cmd("GET").arg(&lock_key).query(&mut con).unwrap();
    assert_eq!(gone, None);
    // A server that went away is an I/O lock error naming the session.
    drop(server);
    match with_write_lock(&*redis, path, &quick, || ()) {
        Err(LockError::Io { path: p, .. }) => assert_eq!(p, path),
        other => panic!("expected an I/O lock error, got {other:?}"),
    }
}
