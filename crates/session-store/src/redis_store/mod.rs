//! The Redis transcript backend (cargo feature `redis`): session bytes addressed by
//! path, stored in Redis so that several gateway instances share one store, behind the same
//! [`Storage`](crate::storage::Storage) trait as the file store (so the same
//! [`SessionManager`](crate::SessionManager) API).
//!
//! A session is kept as the exact bytes the file store would hold after the same operations:
//! the header line in a string key, every further line in a list (raw bytes without the `\n`),
//! and a meta hash with a generation (new on every create or replace: the Redis "inode"), a
//! change stamp (server-clock microseconds, strictly increasing per session), the byte length
//! and a torn-tail flag. Every key of a session and its directory's index share the hash tag
//! `{<dir>}`, so each script touches one cluster slot; the schema is in [`keys`].
//!
//! Every write is one Lua script, run with `EVALSHA` (loaded with `SCRIPT LOAD` on `NOSCRIPT`):
//!
//! | script | does |
//! |---|---|
//! | create | create-if-absent ([`RedisStorage::create`]; [`RedisStorage::create_at`] with a given change stamp, for migrations) |
//! | append | fenced append ([`RedisStorage::append`]): refused unless the session still has the generation (and, for an exact fence, the version and length) the writer expects, so two gateways never interleave or lose an append; returns the state before and after; bumps the directory's last-activity index |
//! | replace | fenced full replace with a new generation ([`RedisStorage::rewrite`]; the manager's full rewrites through [`crate::storage::Storage::replace_if`]) |
//! | remove | fenced delete ([`RedisStorage::remove`]) |
//! | read | byte ranges of one state, walking the lines from the nearer end ([`RedisStorage::load_ranges`]) |
//! | lock renew / release | compare-and-`PEXPIRE` / compare-and-`DEL` of the lock token |
//!
//! A whole read ([`RedisStorage::load`]) is `HMGET` + `GET` + `LRANGE` in one `MULTI`/`EXEC`.
//! The write lock ([`RedisStorage::lock`]) is `SET <key> <token> NX PX <ttl>` with a random
//! token, renewed while held, and released with the compare-and-delete script; listing
//! ([`RedisStorage::list`]) reads a per-directory sorted set scored by last activity (ms).
//!
//! Durability is Redis's own (its `appendonly`/`save` configuration): an acknowledged write is
//! in the server's memory. Every operation fails with a timeout error when the server has not
//! answered within the command timeout ([`COMMAND_TIMEOUT`], 30 s), connecting included. TLS
//! (`rediss://`) is not built in ([`RedisStoreError::TlsUnsupported`]). `server::LocalRedisServer` (feature `test-util`) starts a
//! throwaway server for tests.

mod deadline;
pub mod keys;
mod lease;
mod scripts;
#[cfg(any(test, feature = "test-util"))]
#[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
pub mod server;
mod storage_impl;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use parking_lot::Mutex;
use redis::Value;

use crate::lock::Backoff;
use crate::snapshot::SessionFileSnapshot;
pub use keys::{SessionKeys, session_keys};
use scripts::Scripts;
#[cfg(any(test, feature = "test-util"))]
#[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
pub use server::LocalRedisServer;

/// The `dev` of every [`SessionFileSnapshot`] of a Redis session: the bytes `redis` as a
/// big-endian number, so a Redis snapshot never equals a file's.
pub const REDIS_DEV: u64 = 0x0072_6564_6973;

/// Default key prefix.
pub const DEFAULT_PREFIX: &str = "openclaw:sessions";

/// The default command timeout: how long one operation (a command, a script call or a `MULTI`
/// block, with connecting first when no pooled connection is idle) may wait for the server
/// before it fails with a timeout error ([`RedisStorage::connect_with_timeout`] sets another).
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// The state of one session in Redis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RedisVersion {
    /// Changes on every create and replace (a random non-zero u64): the session's identity.
    pub generation: u64,
    /// Change stamp: microseconds since the epoch by the Redis server's clock when the session
    /// last changed, strictly increasing per session (every create, append and replace gives a
    /// larger one).
    pub version: u64,
    /// Byte length of the session's bytes.
    pub len: u64,
    /// The bytes do not end in `\n` (a torn last line).
    pub torn: bool,
}

impl RedisVersion {
    /// The snapshot a manager keeps for this state (as `storage.rs` documents for backends
    /// without files): `dev` [`REDIS_DEV`], `ino` the generation, `size` the byte length,
    /// `mtime_ns` and `ctime_ns` the change stamp in nanoseconds, no birth time.
    pub fn snapshot(&self) -> SessionFileSnapshot {
        let ns = i128::from(self.version) * 1000;
        SessionFileSnapshot {
            dev: REDIS_DEV,
            ino: self.generation,
            size: self.len,
            mtime_ns: ns,
            ctime_ns: ns,
            birth_ns: None,
        }
    }
}

/// What a fenced write expects the session to be: the same generation, and (when given) the
/// same version and byte length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fence {
    /// The generation the writer last saw.
    pub generation: u64,
    /// The version the writer last saw (`None`: any).
    pub version: Option<u64>,
    /// The byte length the writer last saw (`None`: any).
    pub len: Option<u64>,
}

impl Fence {
    /// Expects exactly `state` (generation, version and length).
    pub fn exact(state: &RedisVersion) -> Self {
        Fence {
            generation: state.generation,
            version: Some(state.version),
            len: Some(state.len),
        }
    }

    /// Expects only the generation: any append since is accepted.
    pub fn generation(generation: u64) -> Self {
        Fence {
            generation,
            version: None,
            len: None,
        }
    }

    /// The fence that matches a snapshot taken from this backend ([`RedisVersion::snapshot`]).
    pub fn from_snapshot(snapshot: &SessionFileSnapshot) -> Self {
        Fence {
            generation: snapshot.ino,
            version: u64::try_from(snapshot.mtime_ns / 1000).ok(),
            len: Some(snapshot.size),
        }
    }
}

impl std::fmt::Display for Fence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "generation {}", self.generation)?;
        if let Some(v) = self.version {
            write!(f, " version {v}")?;
        }
        if let Some(n) = self.len {
            write!(f, " length {n}")?;
        }
        Ok(())
    }
}

impl std::fmt::Display for RedisVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "generation {} version {} length {}",
            self.generation, self.version, self.len
        )
    }
}

/// How [`RedisStorage::append`] treats its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppendMode {
    /// One line without its `\n` (which is added), preceded by a `\n` separator when the session
    /// ends in a torn line: what `io::append_line` writes to a file.
    Line,
    /// The bytes exactly as given (they may hold several lines or part of one).
    Raw,
}

/// What a fenced append did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RedisAppend {
    /// A `\n` separator was written first ([`AppendMode::Line`] after a torn line).
    pub separator: bool,
    /// Bytes added (separator and terminating `\n` included).
    pub written: u64,
    /// The session just before the append, in the same atomic step (`None`: the append created
    /// it, [`RedisStorage::append_or_create`]).
    pub before: Option<RedisVersion>,
    /// The session after the append.
    pub after: RedisVersion,
}

/// What an append checks before writing (all in the script that writes).
#[derive(Clone, Copy, Debug)]
enum AppendCheck<'a> {
    /// Refuse unless the session matches the fence exactly (`None`: any existing session).
    Exact(Option<Fence>),
    /// Refuse when the generation differs, or when version or length differ and the bytes no
    /// longer start with `first_line` (the [`crate::storage::Storage::append_line`] contract).
    Head {
        /// The generation, version and length last seen.
        fence: Fence,
        /// The first bytes last seen (empty: no check).
        first_line: &'a [u8],
    },
    /// No check; a missing session is created.
    CreateMissing,
}

/// One session of a directory listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisSessionEntry {
    /// The session's path (`<dir>/<file name>`).
    pub path: PathBuf,
    /// Last create, append or replace, ms since the epoch (Redis server clock).
    pub last_activity_ms: i64,
}

/// Errors of the Redis backend. Every variant that concerns one session names its path.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RedisStoreError {
    /// Opening the client or the first connection failed.
    #[error("cannot connect to redis at {url}: {source}")]
    Connect {
        /// The URL given (a password in it replaced by `***`).
        url: String,
        /// The client error.
        #[source]
        source: redis::RedisError,
    },
    /// A `rediss://` URL: TLS is not built into this backend's client.
    #[error(
        "cannot connect to redis at {url}: TLS (rediss://) is not supported (this build's redis \
         client has no TLS); use redis:// or redis+unix:// (for a server that requires TLS, \
         through a local TLS tunnel)"
    )]
    TlsUnsupported {
        /// The URL given (a password in it replaced by `***`).
        url: String,
    },
    /// A command failed (connection lost, server error, timeout).
    #[error("redis command for {path} failed: {source}")]
    Command {
        /// The session (or directory) the command was for.
        path: PathBuf,
        /// The client error.
        #[source]
        source: redis::RedisError,
    },
    /// No session at the path.
    #[error("no session at {0} in redis")]
    NotFound(PathBuf),
    /// A session already exists at the path (create-if-absent refused).
    #[error("a session already exists at {path} in redis ({found})")]
    AlreadyExists {
        /// The path.
        path: PathBuf,
        /// The existing session.
        found: RedisVersion,
    },
    /// A fenced write found another state than the writer expected: nothing was written.
    #[error("fenced write to {path} refused: expected {expected}, found {found}")]
    Fence {
        /// The session.
        path: PathBuf,
        /// What the writer expected.
        expected: Fence,
        /// What the session is now.
        found: RedisVersion,
    },
    /// The path cannot be mapped to keys (no file name, or not UTF-8).
    #[error("{0} cannot name a redis session: it needs a UTF-8 directory and file name")]
    BadPath(PathBuf),
    /// The path's file name is not a valid path component ([`crate::names::validate_name`]).
    #[error("{} cannot name a redis session: {source}", .path.display())]
    InvalidName {
        /// The path.
        path: PathBuf,
        /// The name and the rule it breaks.
        #[source]
        source: crate::names::InvalidName,
    },
    /// The path's directory holds a `..` component (a relative path climbing above its
    /// start), so its key path would leave the namespace it names.
    #[error("{0} cannot name a redis session: its directory climbs out of its namespace with '..'")]
    EscapesNamespace(PathBuf),
    /// A reply had an unexpected shape (another program wrote these keys?).
    #[error("unexpected redis reply for {path}: {detail}")]
    Reply {
        /// The session.
        path: PathBuf,
        /// What was wrong.
        detail: String,
    },
    /// The write lock was not acquired within the timeout.
    #[error(
        "timed out after {waited_ms} ms waiting for the redis write lock of {path} (held by {holder}, {ttl_ms} ms left)"
    )]
    LockTimeout {
        /// The session.
        path: PathBuf,
        /// How long we waited.
        waited_ms: u64,
        /// The holder's token (`<random hex> host=<host name> pid=<pid>`), or `unknown`.
        holder: String,
        /// The lock's remaining time to live.
        ttl_ms: i64,
    },
    /// The write lock was no longer ours when renewed or released (it expired and may have
    /// been taken by another writer).
    #[error("the redis write lock of {0} was lost (expired or taken over)")]
    LockLost(PathBuf),
}

impl RedisStoreError {
    /// The [`std::io::ErrorKind`] closest to this error (`NotFound`, `AlreadyExists`,
    /// `TimedOut` for a lock timeout and a server that did not answer in time, `InvalidInput`,
    /// `InvalidData`, `Unsupported` for TLS, else `Other`).
    pub fn io_kind(&self) -> std::io::ErrorKind {
        use std::io::ErrorKind as K;
        match self {
            RedisStoreError::NotFound(_) => K::NotFound,
            RedisStoreError::AlreadyExists { .. } => K::AlreadyExists,
            RedisStoreError::LockTimeout { .. } => K::TimedOut,
            RedisStoreError::BadPath(_)
            | RedisStoreError::InvalidName { .. }
            | RedisStoreError::EscapesNamespace(_) => K::InvalidInput,
            RedisStoreError::Reply { .. } => K::InvalidData,
            RedisStoreError::Command { source, .. } | RedisStoreError::Connect { source, .. }
                if source.is_timeout() =>
            {
                K::TimedOut
            }
            RedisStoreError::TlsUnsupported { .. } => K::Unsupported,
            _ => K::Other,
        }
    }
}

impl From<RedisStoreError> for std::io::Error {
    fn from(e: RedisStoreError) -> Self {
        std::io::Error::new(e.io_kind(), e)
    }
}

/// A Redis session store. Cheap to clone (the clones share one connection pool); `Send` and
/// `Sync`.
#[derive(Clone, Debug)]
pub struct RedisStorage {
    inner: Arc<Inner>,
}

struct Inner {
    client: redis::Client,
    /// The command timeout ([`COMMAND_TIMEOUT`] unless set at connect).
    timeout: Duration,
    url: String,
    prefix: String,
    scripts: Scripts,
    pool: Mutex<Vec<deadline::Conn>>,
    /// Time to live of the write locks taken through [`crate::storage::Storage`], ms.
    lock_ttl_ms: std::sync::atomic::AtomicU64,
    /// Write locks held through [`crate::storage::Storage::with_write_lock`]: path → holding
    /// thread and depth (re-entry).
    held: Mutex<std::collections::HashMap<PathBuf, (std::thread::ThreadId, usize)>>,
    /// The leases held through [`RedisStorage::lock`], renewed by one background thread.
    leases: Arc<lease::Leases>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStorage")
            .field("url", &self.url)
            .field("prefix", &self.prefix)
            .field("idle_connections", &self.pool.lock().len())
            .finish_non_exhaustive()
    }
}

/// Idle connections kept per storage.
const POOL_MAX: usize = 8;

impl RedisStorage {
    /// Connects to `url` (`redis://host:port/[db]`, as the `redis` crate parses it) and checks
    /// the server with `PING`. `prefix` starts every key (default [`DEFAULT_PREFIX`]); stores
    /// with different prefixes on one server do not see each other's sessions.
    ///
    /// Every operation (connecting included) fails when the server has not answered within
    /// [`COMMAND_TIMEOUT`]: the error says it timed out ([`RedisStoreError::io_kind`]
    /// `TimedOut`). TLS (`rediss://`) is not built in: such a URL is refused.
    ///
    /// # Errors
    /// [`RedisStoreError::TlsUnsupported`] for `rediss://`; [`RedisStoreError::Connect`] when
    /// the URL is invalid or the server does not answer.
    pub fn connect(url: &str, prefix: Option<&str>) -> Result<Self, RedisStoreError> {
        Self::connect_with_timeout(url, prefix, COMMAND_TIMEOUT)
    }

    /// [`RedisStorage::connect`] with another command timeout than [`COMMAND_TIMEOUT`] (at
    /// least 1 ms).
    ///
    /// # Errors
    /// As [`RedisStorage::connect`].
    pub fn connect_with_timeout(
        url: &str,
        prefix: Option<&str>,
        timeout: Duration,
    ) -> Result<Self, RedisStoreError> {
        let connect = |source| RedisStoreError::Connect {
            url: redact(url),
            source,
        };
        if url
            .get(..9)
            .is_some_and(|s| s.eq_ignore_ascii_case("rediss://"))
        {
            return Err(RedisStoreError::TlsUnsupported { url: redact(url) });
        }
        let timeout = timeout.max(Duration::from_millis(1));
        let client = client_for(url).map_err(connect)?;
        let storage = RedisStorage {
            inner: Arc::new(Inner {
                client,
                timeout,
                url: redact(url),
                prefix: prefix.unwrap_or(DEFAULT_PREFIX).to_owned(),
                scripts: Scripts::new(),
                pool: Mutex::new(Vec::new()),
                lock_ttl_ms: std::sync::atomic::AtomicU64::new(
                    u64::try_from(DEFAULT_LOCK_TTL.as_millis()).unwrap_or(u64::MAX),
                ),
                held: Mutex::new(std::collections::HashMap::new()),
                leases: Arc::default(),
            }),
        };
        let deadline = Instant::now() + timeout;
        let mut con = storage.inner.open(deadline).map_err(connect)?;
        let _: String = redis::cmd("PING")
            .query(&mut deadline::Deadlined::new(&mut con, deadline, timeout))
            .map_err(connect)?;
        storage.inner.give_back(con);
        Ok(storage)
    }

    /// The command timeout of this store ([`COMMAND_TIMEOUT`] unless
    /// [`RedisStorage::connect_with_timeout`] set another).
    pub fn timeout(&self) -> Duration {
        self.inner.timeout
    }

    /// Sets the time to live of the write locks [`crate::storage::Storage::with_write_lock`]
    /// takes (default [`DEFAULT_LOCK_TTL`]; renewed while held, so it bounds how long a crashed
    /// holder blocks others).
    pub fn set_lock_ttl(&self, ttl: Duration) {
        let ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        self.inner
            .lock_ttl_ms
            .store(ms, std::sync::atomic::Ordering::Relaxed);
    }

    /// The URL this store was connected with (a password in it replaced by `***`).
    pub fn url(&self) -> &str {
        &self.inner.url
    }

    /// The key prefix.
    pub fn prefix(&self) -> &str {
        &self.inner.prefix
    }

    /// The keys of the session at `path` (lexically normalised first, so `a/./b` and `a/b` are
    /// one session; see [`session_keys`]).
    ///
    /// # Errors
    /// [`RedisStoreError::BadPath`], [`RedisStoreError::InvalidName`],
    /// [`RedisStoreError::EscapesNamespace`].
    pub fn keys(&self, path: &Path) -> Result<SessionKeys, RedisStoreError> {
        session_keys(&self.inner.prefix, &crate::paths::normalize(path))
    }

    /// The session's state, `None` when there is none.
    ///
    /// # Errors
    /// [`RedisStoreError::BadPath`], [`RedisStoreError::Command`], [`RedisStoreError::Reply`].
    pub fn version(&self, path: &Path) -> Result<Option<RedisVersion>, RedisStoreError> {
        let k = self.keys(path)?;
        let fields: Vec<Option<Vec<u8>>> = self.inner.run(path, true, |con| {
            redis::cmd("HMGET")
                .arg(&k.meta)
                .arg(&["g", "v", "n", "t"])
                .query(con)
        })?;
        parse_meta(path, fields)
    }

    /// The session's bytes and state, `None` when there is none. One consistent snapshot: the
    /// meta hash, the header and the whole list in one `MULTI`/`EXEC` (joined here: a Lua
    /// `table.concat` of a 10,000-line session costs the server ~15× more).
    ///
    /// # Errors
    /// As [`RedisStorage::version`].
    pub fn load(&self, path: &Path) -> Result<Option<(RedisVersion, Vec<u8>)>, RedisStoreError> {
        let k = self.keys(path)?;
        type Reply = (Vec<Option<Vec<u8>>>, Option<Vec<u8>>, Vec<Vec<u8>>);
        let (meta, header, lines): Reply = self.inner.run(path, true, |con| {
            redis::pipe()
                .atomic()
                .cmd("HMGET")
                .arg(&k.meta)
                .arg(&["g", "v", "n", "t"])
                .cmd("GET")
                .arg(&k.header)
                .cmd("LRANGE")
                .arg(&k.lines)
                .arg(0)
                .arg(-1)
                .query(con)
        })?;
        let Some(state) = parse_meta(path, meta)? else {
            return Ok(None);
        };
        // Sized from the bytes received, never from the meta hash (a corrupt `n` must give an
        // error, not an allocation failure).
        let got = header.as_ref().map_or(0, |h| {
            h.len() + lines.iter().map(|l| l.len() + 1).sum::<usize>() + usize::from(!state.torn)
        });
        if u64::try_from(got).ok() != Some(state.len) {
            return Err(reply_err(
                path,
                format!(
                    "the stored lines hold {got} bytes, the meta hash says {}",
                    state.len
                ),
            ));
        }
        let mut bytes = Vec::with_capacity(got);
        if let Some(h) = header {
            bytes.extend_from_slice(&h);
            for line in &lines {
                bytes.push(b'\n');
                bytes.extend_from_slice(line);
            }
            if !state.torn {
                bytes.push(b'\n');
            }
        }
        Ok(Some((state, bytes)))
    }

    /// Up to `len` bytes (`None`: all) from byte `offset` of the session, with its state;
    /// `None` when there is no session. Reading past the end gives no bytes.
    ///
    /// # Errors
    /// As [`RedisStorage::version`].
    pub fn load_range(
        &self,
        path: &Path,
        offset: u64,
        len: Option<u64>,
    ) -> Result<Option<(RedisVersion, Vec<u8>)>, RedisStoreError> {
        if offset == 0 && len.is_none() {
            return self.load(path);
        }
        Ok(self
            .load_ranges(path, &[(offset, len)])?
            .map(|(v, mut parts)| (v, parts.pop().unwrap_or_default())))
    }

    /// Several ranges `(offset, len)` (`None`: to the end) of one state of the session, in one
    /// script call; each is cut at the end of the session. `None` when there is no session.
    ///
    /// # Errors
    /// As [`RedisStorage::version`].
    pub fn load_ranges(
        &self,
        path: &Path,
        ranges: &[(u64, Option<u64>)],
    ) -> Result<Option<(RedisVersion, Ranges)>, RedisStoreError> {
        let k = self.keys(path)?;
        let reply: Value = self.inner.run(path, true, |con| {
            let mut call = self.inner.scripts.read.prepare_invoke();
            call.key(&k.meta).key(&k.header).key(&k.lines).key(&k.index);
            for &(offset, len) in ranges {
                let want = len.map_or(-1, |l| i64::try_from(l).unwrap_or(i64::MAX));
                call.arg(offset).arg(want);
            }
            call.invoke(con)
        })?;
        let mut r = ScriptReply::parse(path, reply)?;
        match r.status {
            1 => {
                let state = r.state(path)?;
                let parts = r.take_strings(path, 5, ranges.len())?;
                Ok(Some((state, parts)))
            }
            0 => Ok(None),
            s => Err(reply_err(path, format!("read returned status {s}"))),
        }
    }

    /// The first line (the header key) without its `\n`, at most `max` bytes of it: `Some(None)`
    /// for an empty session, `None` when there is no session.
    ///
    /// # Errors
    /// As [`RedisStorage::version`].
    pub fn header(
        &self,
        path: &Path,
        max: usize,
    ) -> Result<Option<Option<Vec<u8>>>, RedisStoreError> {
        let k = self.keys(path)?;
        let last = i64::try_from(max).unwrap_or(i64::MAX) - 1;
        let (len, head): (Option<u64>, Vec<u8>) = self.inner.run(path, true, |con| {
            redis::pipe()
                .atomic()
                .cmd("HGET")
                .arg(&k.meta)
                .arg("n")
                .cmd("GETRANGE")
                .arg(&k.header)
                .arg(0)
                .arg(last)
                .query(con)
        })?;
        Ok(match len {
            None => None,
            Some(0) => Some(None),
            Some(_) if max == 0 => Some(Some(Vec::new())),
            Some(_) => Some(Some(head)),
        })
    }

    /// Creates the session with `bytes` (which may be empty) when nothing is at `path`.
    ///
    /// # Errors
    /// [`RedisStoreError::AlreadyExists`] (nothing written); as [`RedisStorage::version`].
    pub fn create(&self, path: &Path, bytes: &[u8]) -> Result<RedisVersion, RedisStoreError> {
        self.create_with(path, bytes, None)
    }

    /// [`RedisStorage::create`] of a session that last changed at `changed` (`sessions
    /// migrate` of a file: its modification time): its change stamp
    /// ([`RedisVersion::version`], the snapshot's `mtime_ns`) and its last activity in the
    /// directory index are `changed` (in microseconds; before 1970-01-01 counts as 1 µs)
    /// instead of the server's clock, so listings and `continueRecent` order it as they
    /// ordered the file. Later changes still get strictly larger stamps, even when `changed`
    /// lies in the future.
    ///
    /// # Errors
    /// As [`RedisStorage::create`].
    pub fn create_at(
        &self,
        path: &Path,
        bytes: &[u8],
        changed: SystemTime,
    ) -> Result<RedisVersion, RedisStoreError> {
        let us = changed
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(1, |d| {
                u64::try_from(d.as_micros()).unwrap_or(u64::MAX).max(1)
            });
        self.create_with(path, bytes, Some(us))
    }

    fn create_with(
        &self,
        path: &Path,
        bytes: &[u8],
        stamp_us: Option<u64>,
    ) -> Result<RedisVersion, RedisStoreError> {
        let stamp = stamp_us.map_or_else(String::new, |us| us.to_string());
        let k = self.keys(path)?;
        let generation = new_generation();
        let reply: Value = self.inner.run(path, false, |con| {
            self.inner
                .scripts
                .create
                .key(&k.meta)
                .key(&k.header)
                .key(&k.lines)
                .key(&k.index)
                .arg(generation.to_string())
                .arg(bytes)
                .arg(&k.member)
                .arg(&stamp)
                .invoke(con)
        })?;
        let r = ScriptReply::parse(path, reply)?;
        match r.status {
            1 => r.state(path),
            -1 => Err(RedisStoreError::AlreadyExists {
                path: path.to_path_buf(),
                found: r.state(path)?,
            }),
            s => Err(reply_err(path, format!("create returned status {s}"))),
        }
    }

    /// Appends `bytes` to the existing session when it still matches `fence` exactly (`None`:
    /// any state), in one script: nothing else can run between the check and the write.
    ///
    /// # Errors
    /// [`RedisStoreError::NotFound`], [`RedisStoreError::Fence`] (nothing written); as
    /// [`RedisStorage::version`].
    pub fn append(
        &self,
        path: &Path,
        bytes: &[u8],
        mode: AppendMode,
        fence: Option<Fence>,
    ) -> Result<RedisAppend, RedisStoreError> {
        self.append_with(path, bytes, mode, AppendCheck::Exact(fence))
    }

    /// Appends `bytes` with no check, creating the session (empty, new generation) first when
    /// there is none: imports, and tools playing another writer.
    ///
    /// # Errors
    /// As [`RedisStorage::version`].
    pub fn append_or_create(
        &self,
        path: &Path,
        bytes: &[u8],
        mode: AppendMode,
    ) -> Result<RedisAppend, RedisStoreError> {
        self.append_with(path, bytes, mode, AppendCheck::CreateMissing)
    }

    fn append_with(
        &self,
        path: &Path,
        bytes: &[u8],
        mode: AppendMode,
        check: AppendCheck<'_>,
    ) -> Result<RedisAppend, RedisStoreError> {
        let k = self.keys(path)?;
        let (fence, fence_mode, first_line): (Option<Fence>, &str, &[u8]) = match check {
            AppendCheck::Exact(f) => (f, "exact", b""),
            AppendCheck::Head { fence, first_line } => (Some(fence), "head", first_line),
            AppendCheck::CreateMissing => (None, "exact", b""),
        };
        let create_as = match check {
            AppendCheck::CreateMissing => new_generation().to_string(),
            _ => String::new(),
        };
        let (eg, ev, en) = fence_args(fence.as_ref());
        let (mode_arg, payload): (&str, std::borrow::Cow<'_, [u8]>) = match mode {
            AppendMode::Line => {
                let mut line = Vec::with_capacity(bytes.len() + 1);
                line.extend_from_slice(bytes);
                line.push(b'\n');
                ("line", line.into())
            }
            AppendMode::Raw => ("raw", bytes.into()),
        };
        let reply: Value = self.inner.run(path, false, |con| {
            self.inner
                .scripts
                .append
                .key(&k.meta)
                .key(&k.header)
                .key(&k.lines)
                .key(&k.index)
                .arg(&eg)
                .arg(ev)
                .arg(en)
                .arg(fence_mode)
                .arg(first_line)
                .arg(mode_arg)
                .arg(payload.as_ref())
                .arg(&k.member)
                .arg(&create_as)
                .invoke(con)
        })?;
        let r = ScriptReply::parse(path, reply)?;
        match r.status {
            1 => {
                let separator = r.take_int(path, 5)? == 1;
                Ok(RedisAppend {
                    separator,
                    written: payload.len() as u64 + u64::from(separator),
                    before: r.state_opt(path, 6)?,
                    after: r.state(path)?,
                })
            }
            0 => Err(RedisStoreError::NotFound(path.to_path_buf())),
            -1 => Err(fence_err(path, fence, r.state(path)?)),
            s => Err(reply_err(path, format!("append returned status {s}"))),
        }
    }

    /// Replaces the session's bytes (creating it when `fence` is `None` and nothing is there),
    /// giving it a new generation: a reader holding the old snapshot sees another "file".
    /// The version of the fence, when given, must match too.
    ///
    /// # Errors
    /// [`RedisStoreError::NotFound`] (a fence was given and there is no session),
    /// [`RedisStoreError::Fence`] (nothing written); as [`RedisStorage::version`].
    pub fn rewrite(
        &self,
        path: &Path,
        bytes: &[u8],
        fence: Option<Fence>,
    ) -> Result<RedisVersion, RedisStoreError> {
        self.replace_with(path, bytes, fence.map_or(Expect::Any, Expect::Fence))
    }

    /// Creates the session with `bytes` only when nothing is there, like
    /// [`RedisStorage::create`], through the replace script (so a racing create is refused
    /// with the same fence error as any other write).
    fn replace_with(
        &self,
        path: &Path,
        bytes: &[u8],
        expect: Expect,
    ) -> Result<RedisVersion, RedisStoreError> {
        let k = self.keys(path)?;
        let fence = match expect {
            Expect::Fence(f) => Some(f),
            _ => None,
        };
        let (mut eg, ev, _) = fence_args(fence.as_ref());
        if expect == Expect::Absent {
            eg = "-".to_owned();
        }
        let generation = new_generation();
        let reply: Value = self.inner.run(path, false, |con| {
            self.inner
                .scripts
                .replace
                .key(&k.meta)
                .key(&k.header)
                .key(&k.lines)
                .key(&k.index)
                .arg(&eg)
                .arg(ev)
                .arg(generation.to_string())
                .arg(bytes)
                .arg(&k.member)
                .invoke(con)
        })?;
        let r = ScriptReply::parse(path, reply)?;
        match r.status {
            1 => r.state(path),
            0 => Err(RedisStoreError::NotFound(path.to_path_buf())),
            -1 => {
                let found = r.state(path)?;
                match fence {
                    Some(_) => Err(fence_err(path, fence, found)),
                    None => Err(RedisStoreError::AlreadyExists {
                        path: path.to_path_buf(),
                        found,
                    }),
                }
            }
            s => Err(reply_err(path, format!("replace returned status {s}"))),
        }
    }

    /// Deletes the session (its bytes, state and index entry; not its write lock) when it still
    /// matches the fence (its generation, and its version and length when the fence has them;
    /// `None`: any). Returns the state it had.
    ///
    /// # Errors
    /// [`RedisStoreError::NotFound`], [`RedisStoreError::Fence`]; as [`RedisStorage::version`].
    pub fn remove(
        &self,
        path: &Path,
        fence: Option<Fence>,
    ) -> Result<RedisVersion, RedisStoreError> {
        let k = self.keys(path)?;
        let (eg, ev, en) = fence_args(fence.as_ref());
        let reply: Value = self.inner.run(path, false, |con| {
            self.inner
                .scripts
                .remove
                .key(&k.meta)
                .key(&k.header)
                .key(&k.lines)
                .key(&k.index)
                .arg(&eg)
                .arg(ev)
                .arg(en)
                .arg(&k.member)
                .invoke(con)
        })?;
        let r = ScriptReply::parse(path, reply)?;
        match r.status {
            1 => r.state(path),
            0 => Err(RedisStoreError::NotFound(path.to_path_buf())),
            -1 => Err(fence_err(path, fence, r.state(path)?)),
            s => Err(reply_err(path, format!("remove returned status {s}"))),
        }
    }

    /// Copies the session at `source` to `target` byte for byte (a backup), when nothing is at
    /// `target`. Returns the source state that was copied and the new session's state.
    ///
    /// # Errors
    /// [`RedisStoreError::NotFound`] (no source), [`RedisStoreError::AlreadyExists`] (target
    /// taken); as [`RedisStorage::version`].
    pub fn copy(
        &self,
        source: &Path,
        target: &Path,
    ) -> Result<(RedisVersion, RedisVersion), RedisStoreError> {
        let (from, bytes) = self
            .load(source)?
            .ok_or_else(|| RedisStoreError::NotFound(source.to_path_buf()))?;
        let to = self.replace_with(target, &bytes, Expect::Absent)?;
        Ok((from, to))
    }

    /// The sessions of directory `dir`, most recently active first (ties: by file name). An
    /// index member that is not a valid file name ([`crate::names::validate_name`]) names no
    /// session and is left out.
    ///
    /// # Errors
    /// [`RedisStoreError::BadPath`], [`RedisStoreError::Command`].
    pub fn list(&self, dir: &Path) -> Result<Vec<RedisSessionEntry>, RedisStoreError> {
        let dir = &crate::paths::normalize(dir);
        let text =
            keys::dir_text(dir).ok_or_else(|| RedisStoreError::BadPath(dir.to_path_buf()))?;
        let index = keys::index_key(&self.inner.prefix, text);
        let members: Vec<(String, f64)> = self.inner.run(dir, true, |con| {
            redis::cmd("ZRANGE")
                .arg(&index)
                .arg(0)
                .arg(-1)
                .arg("WITHSCORES")
                .query(con)
        })?;
        // A member that is not a valid file name (written by another client) names no
        // session: it is not listed, so it never becomes a path.
        let mut out: Vec<RedisSessionEntry> = members
            .into_iter()
            .filter_map(|(m, score)| {
                Some(RedisSessionEntry {
                    path: keys::member_path(dir, &m)?,
                    #[allow(clippy::cast_possible_truncation)]
                    last_activity_ms: score as i64,
                })
            })
            .collect();
        out.sort_by(|a, b| {
            b.last_activity_ms
                .cmp(&a.last_activity_ms)
                .then_with(|| a.path.cmp(&b.path))
        });
        Ok(out)
    }

    /// Every directory with at least one session under this prefix (`SCAN` for the index
    /// keys), sorted; a directory text that is not in lexical normal form (a `.` or `..`
    /// component, which [`RedisStorage::keys`] never writes) is left out.
    ///
    /// # Errors
    /// [`RedisStoreError::Command`].
    pub fn all_dirs(&self) -> Result<Vec<PathBuf>, RedisStoreError> {
        let pattern = format!("{}:{{*}}:index", glob_escape(&self.inner.prefix));
        let head = format!("{}:{{", self.inner.prefix);
        let mut dirs = Vec::new();
        let mut cursor: u64 = 0;
        loop {
            let (next, batch): (u64, Vec<String>) = self.inner.run(Path::new(""), true, |con| {
                redis::cmd("SCAN")
                    .arg(cursor)
                    .arg("MATCH")
                    .arg(&pattern)
                    .arg("COUNT")
                    .arg(1000)
                    .arg("TYPE")
                    .arg("zset")
                    .query(con)
            })?;
            for key in batch {
                if let Some(escaped) = key
                    .strip_prefix(&head)
                    .and_then(|k| k.strip_suffix("}:index"))
                    .filter(|d| !d.contains('}'))
                {
                    // Only namespaces this store can address: their text is their lexical
                    // normal form (no `.` or `..` component), as `keys` writes them.
                    let dir = PathBuf::from(keys::unescape(escaped));
                    if crate::paths::normalize(&dir) == dir {
                        dirs.push(dir);
                    }
                }
            }
            cursor = next;
            if cursor == 0 {
                break;
            }
        }
        dirs.sort();
        dirs.dedup();
        Ok(dirs)
    }

    /// Acquires the session's write lock: `SET <lock key> <token> NX PX <ttl>` with a random
    /// token (`<hex> host=<host name> pid=<pid>`), retried after the pauses of
    /// `options.backoff` until `options.timeout` (`Some(ZERO)`: one attempt). While the guard lives a thread renews the lock
    /// every third of its ttl; dropping the guard (or [`RedisWriteLock::release`]) deletes the
    /// lock only when it still holds this guard's token.
    ///
    /// # Errors
    /// [`RedisStoreError::LockTimeout`] naming the holder; as [`RedisStorage::version`].
    pub fn lock(
        &self,
        path: &Path,
        options: &RedisLockOptions,
    ) -> Result<RedisWriteLock, RedisStoreError> {
        let k = self.keys(path)?;
        let token = format!(
            "{} host={} pid={}",
            uuid::Uuid::new_v4().simple(),
            host_name(),
            std::process::id()
        );
        let ttl_ms = u64::try_from(options.ttl.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        let start = Instant::now();
        let mut attempt = 0u32;
        loop {
            attempt = attempt.saturating_add(1);
            let set: Option<String> = match self.inner.run(path, false, |con| {
                redis::cmd("SET")
                    .arg(&k.lock)
                    .arg(&token)
                    .arg("NX")
                    .arg("PX")
                    .arg(ttl_ms)
                    .query(con)
            }) {
                Ok(set) => set,
                Err(e) => {
                    // The SET may have been applied (a lost reply, a timeout): delete the lock
                    // if it holds our token, best effort, so it does not block others for a ttl.
                    if let Err(release) = self.release_lock(path, &k.lock, &token) {
                        tracing::debug!(path = %path.display(), error = %release,
                            "cannot release a write lock that may have been taken");
                    }
                    return Err(e);
                }
            };
            if set.is_some() {
                return Ok(RedisWriteLock::new(
                    self.clone(),
                    path,
                    k.lock,
                    token,
                    ttl_ms,
                ));
            }
            let waited = start.elapsed();
            if options.timeout.is_some_and(|t| waited >= t) {
                let (holder, ttl): (Option<String>, i64) = self.inner.run(path, true, |con| {
                    redis::pipe()
                        .cmd("GET")
                        .arg(&k.lock)
                        .cmd("PTTL")
                        .arg(&k.lock)
                        .query(con)
                })?;
                return Err(RedisStoreError::LockTimeout {
                    path: path.to_path_buf(),
                    waited_ms: u64::try_from(waited.as_millis()).unwrap_or(u64::MAX),
                    holder: holder.unwrap_or_else(|| "unknown".to_owned()),
                    ttl_ms: ttl,
                });
            }
            let pause = options.backoff.delay(attempt);
            let pause = match options.timeout {
                Some(t) => pause
                    .min(t.saturating_sub(waited))
                    .max(Duration::from_millis(1)),
                None => pause,
            };
            std::thread::sleep(pause);
        }
    }

    /// Renews the lock `key` holding `token` for `ttl_ms`: false when it is no longer ours.
    fn renew_lock(
        &self,
        path: &Path,
        key: &str,
        token: &str,
        ttl_ms: u64,
    ) -> Result<bool, RedisStoreError> {
        let n: i64 = self.inner.run(path, false, |con| {
            self.inner
                .scripts
                .lock_renew
                .key(key)
                .arg(token)
                .arg(ttl_ms)
                .invoke(con)
        })?;
        Ok(n == 1)
    }

    /// Deletes the lock `key` when it holds `token`: false when it was no longer ours.
    fn release_lock(&self, path: &Path, key: &str, token: &str) -> Result<bool, RedisStoreError> {
        let n: i64 = self.inner.run(path, false, |con| {
            self.inner
                .scripts
                .lock_release
                .key(key)
                .arg(token)
                .invoke(con)
        })?;
        Ok(n == 1)
    }
}

/// The bytes of each range [`RedisStorage::load_ranges`] read.
pub type Ranges = Vec<Vec<u8>>;

/// What a replace expects to find.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// Anything (created when missing).
    Any,
    /// Nothing at the path.
    Absent,
    /// The session of the fence.
    Fence(Fence),
}

/// Default time to live of a Redis write lock ([`RedisLockOptions::ttl`]).
pub const DEFAULT_LOCK_TTL: Duration = Duration::from_secs(30);

/// Options of [`RedisStorage::lock`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RedisLockOptions {
    /// Time to live of the lock key; renewed every third of it while the guard lives, so a
    /// crashed holder's lock expires after at most this long.
    pub ttl: Duration,
    /// Give up after this long (`None`: wait forever, `Some(ZERO)`: one attempt).
    pub timeout: Option<Duration>,
    /// Pauses between attempts (as for the file lock).
    pub backoff: Backoff,
}

impl Default for RedisLockOptions {
    /// ttl [`DEFAULT_LOCK_TTL`], timeout 60 s ([`crate::lock::DEFAULT_TIMEOUT`]), a fixed
    /// 5 ms pause.
    fn default() -> Self {
        RedisLockOptions {
            ttl: DEFAULT_LOCK_TTL,
            timeout: Some(crate::lock::DEFAULT_TIMEOUT),
            backoff: Backoff::Fixed(Duration::from_millis(5)),
        }
    }
}

/// This machine's host name (`/proc/sys/kernel/hostname`, else `$HOSTNAME`, else `unknown`),
/// without spaces.
pub(crate) fn host_name() -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().replace(char::is_whitespace, "_"))
        .filter(|h| !h.is_empty());
    name.unwrap_or_else(|| "unknown".to_owned())
}

/// A held Redis write lock. The storage's renewer thread renews it every third of its ttl
/// while the guard lives; dropping the guard (or [`RedisWriteLock::release`]) stops that and
/// releases the lock (compare-and-delete: a lock that expired and was taken by another writer
/// is left alone).
#[derive(Debug)]
pub struct RedisWriteLock {
    storage: RedisStorage,
    path: PathBuf,
    key: String,
    token: String,
    lease: u64,
    released: bool,
}

impl RedisWriteLock {
    fn new(storage: RedisStorage, path: &Path, key: String, token: String, ttl_ms: u64) -> Self {
        let lease = storage.inner.leases.add(
            &storage.inner,
            path.to_path_buf(),
            key.clone(),
            token.clone(),
            ttl_ms,
        );
        RedisWriteLock {
            storage,
            path: path.to_path_buf(),
            key,
            token,
            lease,
            released: false,
        }
    }

    /// The token stored in the lock key (`<random hex> host=<host name> pid=<pid>`).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The session this lock is for.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renews the lock now.
    ///
    /// # Errors
    /// [`RedisStoreError::LockLost`] when the lock is no longer ours; as [`RedisStorage::version`].
    pub fn renew(&self, ttl: Duration) -> Result<(), RedisStoreError> {
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        if self
            .storage
            .renew_lock(&self.path, &self.key, &self.token, ttl_ms)?
        {
            Ok(())
        } else {
            Err(RedisStoreError::LockLost(self.path.clone()))
        }
    }

    /// Releases the lock.
    ///
    /// # Errors
    /// [`RedisStoreError::LockLost`] when it was no longer ours (it expired; another writer may
    /// hold it now); as [`RedisStorage::version`].
    pub fn release(mut self) -> Result<(), RedisStoreError> {
        self.release_inner()
    }

    fn release_inner(&mut self) -> Result<(), RedisStoreError> {
        self.storage.inner.leases.remove(self.lease);
        if self.released {
            return Ok(());
        }
        self.released = true;
        if self
            .storage
            .release_lock(&self.path, &self.key, &self.token)?
        {
            Ok(())
        } else {
            Err(RedisStoreError::LockLost(self.path.clone()))
        }
    }
}

impl Drop for RedisWriteLock {
    fn drop(&mut self) {
        if let Err(e) = self.release_inner() {
            tracing::warn!(path = %self.path.display(), error = %e, "releasing the redis write lock");
        }
    }
}

/// The client for `url`, without the `CLIENT SETINFO` handshake (two more replies to wait for
/// on every new connection; the library name is only informational).
fn client_for(url: &str) -> redis::RedisResult<redis::Client> {
    use redis::IntoConnectionInfo as _;
    let info = url.into_connection_info()?;
    let settings = info.redis_settings().clone().set_skip_set_lib_name();
    redis::Client::open(info.set_redis_settings(settings))
}

impl Inner {
    /// A new connection, connected (TCP and the `AUTH`/`SELECT` handshake the URL asks for)
    /// before `deadline`.
    fn open(&self, deadline: Instant) -> redis::RedisResult<deadline::Conn> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left < Duration::from_millis(1) {
            return Err(deadline::timed_out(self.timeout));
        }
        // The client gives the TCP connect and each handshake reply the timeout it is given.
        let settings = self.client.get_connection_info().redis_settings();
        let replies = u32::from(settings.password().is_some()) + u32::from(settings.db() != 0);
        let step = (left / replies.max(1)).max(Duration::from_millis(1));
        self.client
            .get_connection_with_timeout(step)
            .map(deadline::Conn::new)
            .map_err(|e| deadline::explain(e, self.timeout))
    }

    fn give_back(&self, con: deadline::Conn) {
        let mut pool = self.pool.lock();
        if pool.len() < POOL_MAX {
            pool.push(con);
        }
    }

    /// Runs `f` on a pooled connection (a new one when none is idle), all of it (connecting
    /// included) within the command timeout ([`deadline::Deadlined`]). A connection that failed
    /// with an I/O error, or with any error of a pipeline or `MULTI` block (whose replies may not
    /// all have been read), is dropped; a read (`retry`) that failed with an I/O error on a
    /// pooled connection is tried once more on a fresh one, within what is left of the timeout
    /// (writes are not retried: the first may have landed; nothing is retried after a timeout).
    fn run<T>(
        &self,
        path: &Path,
        retry: bool,
        mut f: impl FnMut(&mut dyn redis::ConnectionLike) -> redis::RedisResult<T>,
    ) -> Result<T, RedisStoreError> {
        let command = |source| RedisStoreError::Command {
            path: path.to_path_buf(),
            source,
        };
        let deadline = Instant::now() + self.timeout;
        let pooled = self.pool.lock().pop();
        let was_pooled = pooled.is_some();
        let mut con = match pooled {
            Some(c) => c,
            None => self.open(deadline).map_err(command)?,
        };
        match f(&mut deadline::Deadlined::new(
            &mut con,
            deadline,
            self.timeout,
        )) {
            Ok(v) => {
                self.give_back(con);
                Ok(v)
            }
            Err(e)
                if e.is_io_error() || e.is_connection_dropped() || e.is_unrecoverable_error() =>
            {
                drop(con);
                if retry && was_pooled && !e.is_timeout() {
                    let mut fresh = self.open(deadline).map_err(command)?;
                    let v = f(&mut deadline::Deadlined::new(
                        &mut fresh,
                        deadline,
                        self.timeout,
                    ))
                    .map_err(command)?;
                    self.give_back(fresh);
                    Ok(v)
                } else {
                    Err(command(e))
                }
            }
            // A pipeline that failed may have left replies unread (or been cut short): the
            // next request on the connection would read them as its own.
            Err(e) if con.pipelined() => {
                drop(con);
                Err(command(e))
            }
            Err(e) => {
                self.give_back(con);
                Err(command(e))
            }
        }
    }
}

/// The state in the meta fields `g`, `v`, `n`, `t` (`None`: no session).
fn parse_meta(
    path: &Path,
    fields: Vec<Option<Vec<u8>>>,
) -> Result<Option<RedisVersion>, RedisStoreError> {
    let [g, v, n, t] = <[Option<Vec<u8>>; 4]>::try_from(fields)
        .map_err(|f| reply_err(path, format!("HMGET gave {} fields", f.len())))?;
    if g.is_none() {
        return Ok(None);
    }
    let num = |f: Option<Vec<u8>>, name: &str| -> Result<u64, RedisStoreError> {
        f.as_deref()
            .and_then(|b| std::str::from_utf8(b).ok())
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| reply_err(path, format!("meta field {name} is not a number")))
    };
    Ok(Some(RedisVersion {
        generation: num(g, "g")?,
        version: num(v, "v")?,
        len: num(n, "n")?,
        torn: num(t, "t")? == 1,
    }))
}

/// `url` with the password of its user info (`redis://user:secret@host`) replaced by `***`.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => {
            let user = rest[..at].split_once(':').map_or("", |(u, _)| u);
            format!("{scheme}://{user}:***{}", &rest[at..])
        }
        None => url.to_owned(),
    }
}

/// A random non-zero generation.
fn new_generation() -> u64 {
    loop {
        let (g, _) = uuid::Uuid::new_v4().as_u64_pair();
        if g != 0 {
            return g;
        }
    }
}

/// The fence as script arguments: generation (`''` any), version and length (-1 any).
fn fence_args(fence: Option<&Fence>) -> (String, i64, i64) {
    let num = |v: Option<u64>| v.map_or(-1, |v| i64::try_from(v).unwrap_or(i64::MAX));
    match fence {
        None => (String::new(), -1, -1),
        Some(f) => (f.generation.to_string(), num(f.version), num(f.len)),
    }
}

fn fence_err(path: &Path, fence: Option<Fence>, found: RedisVersion) -> RedisStoreError {
    match fence {
        Some(expected) => RedisStoreError::Fence {
            path: path.to_path_buf(),
            expected,
            found,
        },
        None => reply_err(path, "refused without a fence".to_owned()),
    }
}

fn reply_err(path: &Path, detail: String) -> RedisStoreError {
    RedisStoreError::Reply {
        path: path.to_path_buf(),
        detail,
    }
}

/// `*`, `?`, `[`, `]` and `\` escaped for a `SCAN MATCH` pattern.
fn glob_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A session script's reply `{status, g, v, n, t, extra...}`.
struct ScriptReply {
    status: i64,
    items: Vec<Value>,
}

impl ScriptReply {
    fn parse(path: &Path, reply: Value) -> Result<Self, RedisStoreError> {
        let Value::Array(mut items) = reply else {
            return Err(reply_err(path, format!("expected an array, got {reply:?}")));
        };
        if items.is_empty() {
            return Err(reply_err(path, "empty reply".to_owned()));
        }
        let status = match items.remove(0) {
            Value::Int(s) => s,
            other => return Err(reply_err(path, format!("status {other:?}"))),
        };
        Ok(ScriptReply { status, items })
    }

    /// Item `i` of the reply (1 = the generation, right after the status) as an integer.
    fn take_int(&self, path: &Path, i: usize) -> Result<i64, RedisStoreError> {
        match self.items.get(i - 1) {
            Some(Value::Int(n)) => Ok(*n),
            other => Err(reply_err(
                path,
                format!("item {i}: expected an integer, got {other:?}"),
            )),
        }
    }

    /// `count` strings from item `from` (1-based as in [`ScriptReply::take_int`]) on.
    fn take_strings(
        &mut self,
        path: &Path,
        from: usize,
        count: usize,
    ) -> Result<Vec<Vec<u8>>, RedisStoreError> {
        let got = self.items.len().saturating_sub(from - 1);
        if got != count {
            return Err(reply_err(
                path,
                format!("expected {count} ranges, got {got}"),
            ));
        }
        self.items
            .drain(from - 1..)
            .map(|v| match v {
                Value::BulkString(b) => Ok(b),
                other => Err(reply_err(path, format!("expected bytes, got {other:?}"))),
            })
            .collect()
    }

    /// The state in items 1–4.
    fn state(&self, path: &Path) -> Result<RedisVersion, RedisStoreError> {
        self.state_at(path, 1)
    }

    /// The state in items `at`..`at + 3` (generation, version, length, torn), `None` when the
    /// reply ends before `at`.
    fn state_opt(&self, path: &Path, at: usize) -> Result<Option<RedisVersion>, RedisStoreError> {
        if self.items.len() < at {
            return Ok(None);
        }
        self.state_at(path, at).map(Some)
    }

    /// The state in items `at`..`at + 3` (generation, version, length, torn).
    fn state_at(&self, path: &Path, at: usize) -> Result<RedisVersion, RedisStoreError> {
        let generation = match self.items.get(at - 1) {
            Some(Value::BulkString(b)) => std::str::from_utf8(b).ok().and_then(|s| s.parse().ok()),
            _ => None,
        }
        .ok_or_else(|| reply_err(path, format!("generation {:?}", self.items.get(at - 1))))?;
        let num = |i: usize| -> Result<u64, RedisStoreError> {
            u64::try_from(self.take_int(path, i)?)
                .map_err(|_| reply_err(path, format!("item {i} is negative")))
        };
        Ok(RedisVersion {
            generation,
            version: num(at + 1)?,
            len: num(at + 2)?,
            torn: num(at + 3)? == 1,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_password() {
        assert_eq!(redact("redis://127.0.0.1:6379/"), "redis://127.0.0.1:6379/");
        assert_eq!(redact("redis://:s3cret@h:1/0"), "redis://:***@h:1/0");
        assert_eq!(redact("rediss://me:p@ss@h/"), "rediss://me:***@h/");
        assert_eq!(redact("redis://h/a@b"), "redis://h/a@b");
        assert_eq!(redact("not a url"), "not a url");
    }

    #[test]
    fn a_failed_transaction_never_goes_back_to_the_pool() {
        let Some(server) =
            LocalRedisServer::start_or_skip("a_failed_transaction_never_goes_back_to_the_pool")
        else {
            return;
        };
        let store = RedisStorage::connect(&server.url(), Some("desync")).expect("connect");
        let path = Path::new("/d/s.jsonl");
        let inner = &store.inner;
        inner
            .run(path, false, |con| {
                redis::cmd("SET").arg("desync:k").arg("v1").query::<()>(con)
            })
            .expect("set");
        assert_eq!(inner.pool.lock().len(), 1);
        // A MULTI block whose SET is refused when queued (wrong arity): the server aborts it.
        let err = inner
            .run(path, false, |con| {
                redis::pipe()
                    .atomic()
                    .cmd("SET")
                    .arg("desync:k")
                    .cmd("GET")
                    .arg("desync:k")
                    .query::<(Option<String>,)>(con)
            })
            .expect_err("the transaction was aborted");
        let RedisStoreError::Command { path: p, source } = err else {
            panic!("not a command error: {err:?}");
        };
        assert_eq!(p, path);
        assert_eq!(source.code(), Some("ERR"));
        assert_eq!(inner.pool.lock().len(), 0, "the connection was dropped");
        // The next request reads its own reply.
        let got: Option<String> = inner
            .run(path, true, |con| {
                redis::cmd("GET").arg("desync:k").query(con)
            })
            .expect("get");
        assert_eq!(got.as_deref(), Some("v1"));
        assert_eq!(inner.pool.lock().len(), 1);
        // A single command's server error leaves nothing unread: the connection is kept.
        let err = inner
            .run(path, false, |con| {
                redis::cmd("INCR").arg("desync:k").query::<i64>(con)
            })
            .expect_err("not an integer");
        let RedisStoreError::Command { source, .. } = err else {
            panic!("not a command error: {err:?}");
        };
        assert_eq!(source.code(), Some("ERR"));
        assert_eq!(inner.pool.lock().len(), 1);
    }

    #[test]
    fn fences_follow_snapshots() {
        let v = RedisVersion {
            generation: 7,
            version: 1_767_225_600_123_456,
            len: 42,
            torn: false,
        };
        let s = v.snapshot();
        assert_eq!(s.dev, REDIS_DEV);
        assert_eq!(s.ino, 7);
        assert_eq!(s.size, 42);
        assert_eq!(s.mtime_ns, 1_767_225_600_123_456_000);
        assert_eq!(s.ctime_ns, s.mtime_ns);
        assert_eq!(Fence::from_snapshot(&s), Fence::exact(&v));
        assert_eq!(
            Fence::exact(&v).to_string(),
            "generation 7 version 1767225600123456 length 42"
        );
        assert_eq!(Fence::generation(7).to_string(), "generation 7");
    }
}
