//! [`Storage`] for [`RedisStorage`]: what [`crate::SessionManager`] runs on when its sessions
//! live in Redis.
//!
//! Mapping of the contract (`storage.rs`):
//! - snapshots: [`RedisVersion::snapshot`] (`dev` [`super::REDIS_DEV`], `ino` the generation,
//!   `size` the byte length, `mtime_ns`/`ctime_ns` the change stamp);
//! - [`Storage::append_line`] is one script: it checks the expected session (same generation;
//!   when version or length moved, the bytes must still start with the known first line),
//!   takes `before`, writes and takes `after` atomically, so `after.size == before.size +
//!   written.len()` always holds; `durability` is Redis's own (its `appendonly`/`save`
//!   configuration), the call returns once the server applied the write;
//! - [`Storage::read_snapshot`] is [`RedisStorage::load`] (state and bytes in one `MULTI`),
//!   and [`Storage::replace_if`] is the replace script fenced on the expected generation and
//!   change stamp (or on nothing being there);
//! - namespaces (directories) need no creating: [`Storage::ensure_dir`] does nothing, and
//!   [`Storage::list_dirs`] lists the directories that hold at least one session;
//! - the write lock is [`RedisStorage::lock`] (a lease `SET NX PX` with a random token, renewed
//!   while held, compare-and-delete release), re-entrant per thread within one storage; its ttl
//!   is [`RedisStorage::set_lock_ttl`]; `LockOptions::stale` and `max_hold` do not apply; a
//!   timeout's [`LockError::Timeout`] names the lock key as its `lock_path`.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::{
    AppendCheck, AppendMode, Expect, Fence, RedisLockOptions, RedisStorage, RedisStoreError,
};
use crate::io::{AppendToExistingError, Durability, KnownFile, MAX_HEADER_BYTES, VerifiedAppend};
use crate::lock::{LockError, LockOptions};
use crate::snapshot::SessionFileSnapshot;
use crate::storage::{Replace, SnapshotRead, Storage};

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("no session stored at {} in redis", path.display()),
    )
}

impl Storage for RedisStorage {
    fn name(&self) -> &str {
        "redis"
    }

    fn stat(&self, path: &Path) -> io::Result<Option<SessionFileSnapshot>> {
        Ok(self.version(path)?.map(|v| v.snapshot()))
    }

    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.load(path)?
            .map(|(_, bytes)| bytes)
            .ok_or_else(|| not_found(path))
    }

    /// [`RedisStorage::load`]: the state and the bytes from one `MULTI`, never
    /// [`SnapshotRead::Changed`].
    fn read_snapshot(&self, path: &Path) -> io::Result<SnapshotRead> {
        Ok(match self.load(path)? {
            Some((state, bytes)) => SnapshotRead::Read {
                bytes,
                snapshot: state.snapshot(),
            },
            None => SnapshotRead::Missing,
        })
    }

    fn read_from(&self, path: &Path, offset: u64) -> io::Result<Vec<u8>> {
        self.load_range(path, offset, None)?
            .map(|(_, bytes)| bytes)
            .ok_or_else(|| not_found(path))
    }

    /// One script call for all ranges (one state of the session).
    fn read_ranges(&self, path: &Path, ranges: &mut [(u64, &mut [u8])]) -> io::Result<()> {
        let wanted: Vec<(u64, Option<u64>)> = ranges
            .iter()
            .map(|(offset, buf)| (*offset, Some(buf.len() as u64)))
            .collect();
        let (_, parts) = self
            .load_ranges(path, &wanted)?
            .ok_or_else(|| not_found(path))?;
        for ((_, buf), part) in ranges.iter_mut().zip(parts) {
            if part.len() != buf.len() {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "range past the end of the session",
                ));
            }
            buf.copy_from_slice(&part);
        }
        Ok(())
    }

    /// The header key (at most [`MAX_HEADER_BYTES`] of it), without reading the lines.
    fn read_head(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        self.header(path, MAX_HEADER_BYTES)?
            .ok_or_else(|| not_found(path))
    }

    fn create_new(&self, path: &Path, contents: &[u8]) -> io::Result<()> {
        self.create(path, contents)?;
        Ok(())
    }

    fn replace(&self, path: &Path, contents: &[u8]) -> io::Result<()> {
        self.rewrite(path, contents, None)?;
        Ok(())
    }

    /// The replace script fenced on `expected`'s generation and change stamp
    /// ([`Fence::from_snapshot`]; every append, replace and create gives a new stamp), or on
    /// nothing being there (`None`): a refusal wrote nothing.
    fn replace_if(
        &self,
        path: &Path,
        contents: &[u8],
        expected: Option<&SessionFileSnapshot>,
    ) -> io::Result<Replace> {
        let expect = match expected {
            Some(s) if s.dev != super::REDIS_DEV => return Ok(Replace::Refused),
            Some(s) => Expect::Fence(Fence::from_snapshot(s)),
            None => Expect::Absent,
        };
        match self.replace_with(path, contents, expect) {
            Ok(_) => Ok(Replace::Done),
            Err(
                RedisStoreError::Fence { .. }
                | RedisStoreError::NotFound(_)
                | RedisStoreError::AlreadyExists { .. },
            ) => Ok(Replace::Refused),
            Err(e) => Err(e.into()),
        }
    }

    fn append_line(
        &self,
        path: &Path,
        line: &[u8],
        _durability: Durability,
        expected: Option<KnownFile<'_>>,
    ) -> Result<VerifiedAppend, AppendToExistingError> {
        let check = match expected {
            Some(known) => AppendCheck::Head {
                fence: Fence::from_snapshot(&known.snapshot),
                first_line: known.first_line,
            },
            None => AppendCheck::Exact(None),
        };
        let done = match self.append_with(path, line, AppendMode::Line, check) {
            Ok(done) => done,
            Err(RedisStoreError::NotFound(_)) => return Err(AppendToExistingError::Deleted),
            Err(RedisStoreError::Fence { .. }) => return Err(AppendToExistingError::Replaced),
            Err(e) => return Err(AppendToExistingError::Io(e.into())),
        };
        let before = done.before.ok_or_else(|| {
            AppendToExistingError::Io(io::Error::other(format!(
                "redis append to {} reported no previous state",
                path.display()
            )))
        })?;
        let mut written = Vec::with_capacity(line.len() + 2);
        if done.separator {
            written.push(b'\n');
        }
        written.extend_from_slice(line);
        written.push(b'\n');
        Ok(VerifiedAppend {
            separator: done.separator,
            written,
            before: before.snapshot(),
            after: done.after.snapshot(),
        })
    }

    fn append_raw(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        self.append_or_create(path, bytes, AppendMode::Raw)?;
        Ok(())
    }

    fn backup_copy(&self, _source: &Path, backup: &Path, original: &[u8]) -> io::Result<()> {
        self.create(backup, original)?;
        Ok(())
    }

    /// Nothing to do beyond checking the session exists: a write is in the server once
    /// acknowledged, and its durability is the server's configuration.
    fn sync(&self, path: &Path, durability: Durability) -> io::Result<()> {
        if durability == Durability::Buffer {
            return Ok(());
        }
        self.version(path)?
            .map(|_| ())
            .ok_or_else(|| not_found(path))
    }

    /// Namespaces exist implicitly in Redis.
    fn ensure_dir(&self, _dir: &Path) -> io::Result<()> {
        Ok(())
    }

    fn list_sessions(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        let mut out: Vec<PathBuf> = self
            .list(dir)?
            .into_iter()
            .map(|e| e.path)
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().ends_with(".jsonl"))
            })
            .collect();
        out.sort();
        Ok(out)
    }

    fn list_dirs(&self, root: &Path) -> io::Result<Vec<PathBuf>> {
        let root = crate::paths::normalize(root);
        Ok(self
            .all_dirs()?
            .into_iter()
            .filter(|d| d.parent() == Some(root.as_path()))
            .collect())
    }

    fn with_write_lock(
        &self,
        path: &Path,
        options: &LockOptions,
        run: &mut dyn FnMut(),
    ) -> Result<(), LockError> {
        let key = crate::paths::normalize(path);
        let me = std::thread::current().id();
        {
            let mut held = self.inner.held.lock();
            if let Some((thread, depth)) = held.get_mut(&key)
                && *thread == me
            {
                *depth += 1;
                drop(held);
                let _leave = Held { storage: self, key };
                run();
                return Ok(());
            }
        }
        let ttl = Duration::from_millis(self.inner.lock_ttl_ms.load(Ordering::Relaxed));
        let lock_options = RedisLockOptions {
            ttl,
            timeout: options.timeout,
            backoff: options.backoff,
        };
        let guard = self
            .lock(path, &lock_options)
            .map_err(|e| lock_error(self, path, options.timeout, e))?;
        self.inner.held.lock().insert(key.clone(), (me, 1));
        // Dropped in reverse order: the entry goes, then the lease is released.
        let _leave = Held { storage: self, key };
        run();
        drop(_leave);
        drop(guard);
        Ok(())
    }
}

/// One level of a re-entrant hold: removes the entry when the outermost level ends (also
/// when the locked write panics).
struct Held<'a> {
    storage: &'a RedisStorage,
    key: PathBuf,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        let mut held = self.storage.inner.held.lock();
        let last = match held.get_mut(&self.key) {
            Some((_, depth)) => {
                *depth -= 1;
                *depth == 0
            }
            None => false,
        };
        if last {
            held.remove(&self.key);
        }
    }
}

/// The [`LockError`] of a failed Redis lock acquisition: a timeout names the holder
/// (`pid=<n> alive=true` when it runs on this host; a lease that is still there is renewed by
/// a live holder) and, as its `lock_path`, the Redis lock key (`<prefix>:{<dir>}:<file>:k`:
/// there is no lock file); anything else is [`LockError::Io`].
fn lock_error(
    storage: &RedisStorage,
    path: &Path,
    timeout: Option<Duration>,
    e: RedisStoreError,
) -> LockError {
    match e {
        RedisStoreError::LockTimeout {
            path: session,
            waited_ms,
            holder,
            ..
        } => {
            let timeout_ms = timeout.map_or(waited_ms, |t| {
                u64::try_from(t.as_millis()).unwrap_or(u64::MAX)
            });
            let pid = holder_pid_on_this_host(&holder);
            let owner = match pid {
                Some(pid) => format!("pid={pid} alive=true"),
                None => format!("owner={}", holder.replace(' ', ",")),
            };
            LockError::Timeout {
                timeout_ms,
                owner,
                owner_pid: pid,
                owner_alive: pid.is_some(),
                lock_path: storage
                    .keys(&session)
                    .map_or_else(|_| session.clone(), |k| PathBuf::from(k.lock)),
            }
        }
        other => LockError::Io {
            path: path.to_path_buf(),
            source: other.into(),
        },
    }
}

/// The pid of a lock token `<hex> host=<host> pid=<pid>` when `<host>` is this machine.
fn holder_pid_on_this_host(token: &str) -> Option<u64> {
    let mut host = None;
    let mut pid = None;
    for part in token.split(' ') {
        if let Some(h) = part.strip_prefix("host=") {
            host = Some(h);
        } else if let Some(p) = part.strip_prefix("pid=") {
            pid = p.parse().ok();
        }
    }
    (host == Some(super::host_name().as_str()))
        .then_some(pid)
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holder_pid_only_for_this_host() {
        let here = super::super::host_name();
        assert_eq!(
            holder_pid_on_this_host(&format!("ab12 host={here} pid=42")),
            Some(42)
        );
        assert_eq!(
            holder_pid_on_this_host("ab12 host=elsewhere-host-name pid=42"),
            None
        );
        assert_eq!(holder_pid_on_this_host("garbage"), None);
    }
}
