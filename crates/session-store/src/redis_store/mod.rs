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
//! (`rediss://`) is not built in ([`RedisStoreError::TlsUnsupported`]). The throwaway server
//! of tests is `test_util::redis_server::LocalRedisServer` (feature `test-util`).

mod client;
mod deadline;
mod error;
pub mod keys;
mod lock;
mod replies;
mod scripts;
#[cfg(any(test, feature = "test-util"))]
pub(crate) mod server;
mod storage_impl;
mod types;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use parking_lot::Mutex;
use redis::Value;

use crate::lock::Backoff;
use crate::snapshot::SessionFileSnapshot;
pub use keys::{SessionKeys, session_keys};
use scripts::Scripts;

pub use client::RedisStorage;
pub use error::RedisStoreError;
pub use lock::{DEFAULT_LOCK_TTL, RedisLockOptions, RedisWriteLock};
pub use types::{
    AppendMode, COMMAND_TIMEOUT, DEFAULT_PREFIX, Fence, REDIS_DEV, Ranges, RedisAppend,
    RedisSessionEntry, RedisVersion,
};
use {client::*, error::*, lock::*, replies::*, types::*};

impl RedisStorage {
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
    /// index member that is not a valid file name ([`crate::validate_name`]) names no
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

#[cfg(test)]
mod tests {
    use super::server::LocalRedisServer;
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
