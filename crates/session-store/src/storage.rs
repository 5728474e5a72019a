//! Where a session's bytes live: the [`Storage`] trait that [`crate::SessionManager`]
//! reads and writes through, the JSONL file store [`FileStorage`] (the default: the same code
//! and the same speed as before the trait existed), and the in-memory [`MemStorage`] (tests,
//! embedding).
//!
//! # Model
//!
//! A session is addressed by a path (`&Path`) and is a sequence of bytes: JSONL lines, the
//! header first (openclaw-jsonl.md §1.1, §1.2). For [`FileStorage`] the path is the file; any
//! other backend treats it as a key: the directory is a namespace (an agent's session
//! directory, [`Storage::list_sessions`]) and the file name names the session. Whatever the
//! backend, its bytes are exactly the bytes the file store would hold, so a session moves
//! between backends byte for byte.
//!
//! A session's version and identity is a [`SessionFileSnapshot`] ([`Storage::stat`],
//! openclaw-jsonl.md §3.1): two equal snapshots mean "nothing happened to the session";
//! [`SessionFileSnapshot::same_file`] means "the same session, whatever happened to its bytes".
//! A backend without files fills it as follows (see [`MemStorage`]):
//! - `dev`: a constant tag of the backend (so its snapshots never equal a file's);
//! - `ino`: a generation that changes whenever the session is replaced
//!   ([`Storage::replace`]) or deleted and created again — never on an append;
//! - `size`: the length of the stored bytes (the offset the next append lands at);
//! - `mtime_ns`, `ctime_ns`: a counter bumped on every change (appends included), strictly
//!   increasing; it should read as nanoseconds since the epoch (wall clock, made strictly
//!   increasing), because listings fall back to it as the session's modification time;
//! - `birth_ns`: `None`.
//!
//! # Operations and where the manager uses them
//!
//! | operation | manager use | spec |
//! |---|---|---|
//! | [`Storage::stat`] | stat-read-stat loads, the catch-up under the write lock, after writes | §3.1, §3.3 |
//! | [`Storage::read_all`] | loads, the check before a full rewrite, adopting foreign lines | §2.1, §2.12, D11 |
//! | [`Storage::read_ranges`] | tail reindex (warm cache) and tail catch-up: first and last 4 KiB and the new bytes | §3.1, §3.2 |
//! | [`Storage::read_head`] | `continueRecent` candidates (header sniff) | §2.1 |
//! | [`Storage::append_line`] | every plain append, fenced on the expected session | §2.12, §3.2 |
//! | [`Storage::read_snapshot`] | loads and the check before a full rewrite on storages other than files (one consistent read) | §2.1, §3.1, §2.12 |
//! | [`Storage::replace`] | full rewrites on files (first flush, migration, recovery, removals) | §2.12, §1.6, §1.9 |
//! | [`Storage::replace_if`] | full rewrites on other storages, fenced on the session last read | §2.12, D11 |
//! | [`Storage::create_new`] | `forkFrom` | §2.1 |
//! | [`Storage::backup_copy`] | corrupt-header and conflict backups | §1.6, D11 |
//! | [`Storage::with_write_lock`] | [`crate::SessionManager::set_write_lock`] | §3.4, §3.5 |
//! | [`Storage::list_sessions`], [`Storage::list_dirs`] | `list`, `listAll`, `continueRecent` | §2.1 |
//!
//! # The warm cache
//!
//! The process-wide warm cache ([`crate::cache`]) is keyed by canonical file paths and trusts
//! file-system snapshots; it serves [`FileStorage`] only. A manager on any other storage loads
//! with [`Storage::read_snapshot`] every time (one consistent read where the backend offers
//! one, else stat-read-stat) and never touches the cache or the incremental repair cache.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use session_format::json::parse_value;
//! use session_store::SessionManager;
//! use session_store::storage::{MemStorage, Storage};
//!
//! let mem = Arc::new(MemStorage::new());
//! let dir = std::path::Path::new("/agents/main/sessions");
//! let mut sm = SessionManager::create_in(mem.clone(), "/home/dev/project", Some(dir))?;
//! sm.append_message(parse_value(br#"{"role":"user","content":"hi","timestamp":1}"#)?)?;
//! sm.append_message(parse_value(br#"{"role":"assistant","content":[],"timestamp":2}"#)?)?;
//! let file = sm.get_session_file().unwrap().to_path_buf();
//! let bytes = mem.read_all(&file)?; // header, user, assistant: three JSONL lines
//! assert_eq!(bytes.iter().filter(|&&b| b == b'\n').count(), 3);
//! assert_eq!(mem.list_sessions(dir)?, vec![file]);
//! # Ok(()) }
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};
use std::thread::ThreadId;
use std::time::{Instant, SystemTime};

use parking_lot::{Condvar, Mutex};

use crate::error::ListError;
use crate::io::read_exact_at;
use crate::io::{
    AppendToExistingError, Durability, Fs, KnownFile, MAX_HEADER_BYTES, RealFs, VerifiedAppend,
};
use crate::list::SessionInfo;
use crate::lock::{LockError, LockOptions};
use crate::snapshot::SessionFileSnapshot;

/// The operations [`crate::SessionManager`] performs on a session's bytes. Every method takes
/// the session's path (see the [module documentation](self) for what a path means to a
/// backend that has no files, and for what its snapshots hold).
///
/// Errors are [`io::Error`]s (appends: [`AppendToExistingError`]; the lock: [`LockError`]). A
/// backend that is not a file system reports its own failures as
/// `io::Error::new(io::ErrorKind::Other, source)` (keeping its error as the source) and uses
/// the kinds below where the contract names one: [`io::ErrorKind::NotFound`] for a missing
/// session, [`io::ErrorKind::AlreadyExists`] for an exclusive create that finds one,
/// [`io::ErrorKind::UnexpectedEof`] for a range past the end, [`io::ErrorKind::InvalidInput`]
/// for a path that cannot hold a session (a directory).
///
/// Implementations must be safe to share between threads and between managers
/// (`Arc<dyn Storage>`); each method is one step as far as other callers of the same storage
/// can tell (an append never interleaves with another append or a replace).
pub trait Storage: Send + Sync + fmt::Debug {
    /// A short name of the backend, for messages: `"file"`, `"memory"`, `"redis"`, ….
    fn name(&self) -> &str;

    /// This storage as the local file store, when it is one: the warm cache
    /// ([`crate::cache`]), the incremental repair cache and the file-specific fast paths of
    /// listing apply only then. Other backends keep the default (`None`).
    fn as_file_storage(&self) -> Option<&FileStorage> {
        None
    }

    /// The session's current version and identity (`fs.statSync(path, {bigint: true})`,
    /// openclaw-jsonl.md §3.1), `None` when no session is stored at `path`.
    ///
    /// # Errors
    /// Any failure other than "not found" (a backend's own failures as
    /// [`io::ErrorKind::Other`]).
    fn stat(&self, path: &Path) -> io::Result<Option<SessionFileSnapshot>>;

    /// All bytes of the session, up to its end at the time of the read (§2.1 load, §2.12
    /// check before a full rewrite).
    ///
    /// # Errors
    /// [`io::ErrorKind::NotFound`] when no session is stored at `path`;
    /// [`io::ErrorKind::InvalidInput`] when the path cannot hold one (a directory, FIFO,
    /// device); any other failure.
    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>>;

    /// All bytes of the session together with the snapshot they are the bytes of: what a load
    /// (§2.1, §3.1) and the check before a full rewrite (§2.12, D11) need. A backend that can
    /// read both in one atomic step overrides this ([`MemStorage`]: under its mutex; Redis: one
    /// `MULTI`), so a load never fails because another writer keeps appending. The default is
    /// stat-read-stat: [`Storage::stat`], [`Storage::read_all`], [`Storage::stat`] again, and
    /// [`SnapshotRead::Changed`] when the two `stat`s differ or the bytes are not as long as the
    /// first one says (the caller tries again). [`crate::SessionManager`] does not use it on
    /// [`FileStorage`]: the file store's loads keep their own stat-read-stat through the warm
    /// cache ([`crate::cache`]).
    ///
    /// # Errors
    /// As [`Storage::stat`] and [`Storage::read_all`] ("not found" is
    /// [`SnapshotRead::Missing`], not an error).
    fn read_snapshot(&self, path: &Path) -> io::Result<SnapshotRead> {
        let Some(before) = self.stat(path)? else {
            return Ok(SnapshotRead::Missing);
        };
        let bytes = match self.read_all(path) {
            Ok(b) => b,
            // Deleted after the first stat: the next attempt finds it missing.
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(SnapshotRead::Changed),
            Err(e) => return Err(e),
        };
        let after = self.stat(path)?;
        if after == Some(before) && bytes.len() as u64 == before.size {
            Ok(SnapshotRead::Read {
                bytes,
                snapshot: before,
            })
        } else {
            Ok(SnapshotRead::Changed)
        }
    }

    /// The bytes from byte `offset` to the end (empty when `offset` is at or past the end):
    /// what another writer appended after a length this caller knew.
    ///
    /// # Errors
    /// As [`Storage::read_all`].
    fn read_from(&self, path: &Path, offset: u64) -> io::Result<Vec<u8>> {
        let mut all = self.read_all(path)?;
        let from = usize::try_from(offset).map_or(all.len(), |o| o.min(all.len()));
        all.drain(..from);
        Ok(all)
    }

    /// Fills each `(offset, buf)` with the bytes at `offset..offset + buf.len()`, all from one
    /// view of the session (one open file; one round trip), in order: the warm cache's tail
    /// reindex and the write lock's catch-up read the first and last 4 KiB they know and the
    /// bytes appended after them (openclaw-jsonl.md §3.1, §3.2). The default reads the whole
    /// session once.
    ///
    /// # Errors
    /// [`io::ErrorKind::UnexpectedEof`] when a range reaches past the end; otherwise as
    /// [`Storage::read_all`].
    fn read_ranges(&self, path: &Path, ranges: &mut [(u64, &mut [u8])]) -> io::Result<()> {
        let all = self.read_all(path)?;
        copy_ranges(&all, ranges)
    }

    /// The header line as the reference sniffs it (`readFirstLine`, §2.1): the bytes before
    /// the first `\n` within the first [`MAX_HEADER_BYTES`], or those first bytes when no `\n`
    /// comes within them; `None` for an empty session. The default reads the whole session; a
    /// backend that keeps the header apart should answer from it.
    ///
    /// # Errors
    /// As [`Storage::read_all`].
    fn read_head(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        Ok(first_line_of(&self.read_all(path)?))
    }

    /// Stores a new session holding `contents`, only if none is stored at `path`; it appears
    /// complete or not at all (`forkFrom`'s create, §2.1). File mode 0600.
    ///
    /// # Errors
    /// [`io::ErrorKind::AlreadyExists`] (nothing changed); [`io::ErrorKind::NotFound`] when
    /// the namespace (directory) does not exist; any other failure (nothing left behind).
    fn create_new(&self, path: &Path, contents: &[u8]) -> io::Result<()>;

    /// Replaces the session's bytes with `contents`, or creates it (a full rewrite, §2.12): all
    /// at once, never half written; the session gets a new identity (a new inode for files, a
    /// new generation otherwise), and the new bytes are durable when this returns.
    ///
    /// # Errors
    /// [`io::ErrorKind::PermissionDenied`] when the session may not be written;
    /// [`io::ErrorKind::InvalidInput`] for a path that cannot hold a session; any other
    /// failure. The stored bytes are untouched in every error case.
    fn replace(&self, path: &Path, contents: &[u8]) -> io::Result<()>;

    /// [`Storage::replace`] fenced on the session the caller last read: the bytes are replaced
    /// only while the stored session is still exactly `expected` (its [`SessionFileSnapshot`]
    /// equal, so no append, replace or delete happened since), or, with `expected` `None`,
    /// while nothing is stored at `path`; otherwise nothing is written and the result is
    /// [`Replace::Refused`]. The check and the write are one step as far as other callers of
    /// the storage can tell ([`MemStorage`]: under its mutex; Redis: the replace script's
    /// generation and version fence). [`crate::SessionManager`]'s full rewrites use it on
    /// every storage but [`FileStorage`] (§2.12, D11): on a refusal the manager reads the
    /// session again, adopts or backs up what changed, and tries again.
    ///
    /// [`FileStorage`] does not fence: it replaces as [`Storage::replace`] does and never
    /// refuses. A file cannot be renamed over only if unchanged; the file store relies on the
    /// session write lock ([`Storage::with_write_lock`], §3.4) to keep other writers out
    /// between the check and the rename, as OpenClaw does. The default fences with a
    /// [`Storage::stat`] just before [`Storage::replace`]: not atomic, so a backend shared by
    /// several writers must override it.
    ///
    /// # Errors
    /// As [`Storage::replace`] (a refusal is not an error).
    fn replace_if(
        &self,
        path: &Path,
        contents: &[u8],
        expected: Option<&SessionFileSnapshot>,
    ) -> io::Result<Replace> {
        if self.stat(path)?.as_ref() != expected {
            return Ok(Replace::Refused);
        }
        self.replace(path, contents)?;
        Ok(Replace::Done)
    }

    /// Appends one line to an existing session (never creating one), as one indivisible step:
    /// `line` (which holds no `\n`) plus `\n`, preceded by a `\n` separator when the stored
    /// bytes do not end in one (a torn tail, §1.1), then made as durable as `durability` asks
    /// (§2.12, §3.2).
    ///
    /// Fencing: `expected` is the session the caller last read or wrote. The append is refused
    /// (nothing written) when the stored session is another one — not
    /// [`SessionFileSnapshot::same_file`] as `expected.snapshot` (other `dev`/`ino`/birth: a
    /// replace or a delete-and-recreate happened) — or when its snapshot differs from
    /// `expected.snapshot` and its bytes no longer start with `expected.first_line` (when that
    /// is not empty). Lines another writer appended meanwhile do **not** refuse the append: the
    /// caller finds them through `before` (its size is not the one it knew) and adopts them.
    ///
    /// The result carries the bytes written and the snapshots just before and just after the
    /// write. `before.size` must be the offset where the written bytes start (a backend that
    /// can, takes `before` in the same atomic step as the write; files take it with `fstat` just
    /// before an `O_APPEND` write, and a caller seeing `after.size != before.size +
    /// written.len()` treats the append as unverified).
    ///
    /// # Errors
    /// [`AppendToExistingError::Deleted`] (nothing stored at `path`) or
    /// [`AppendToExistingError::Replaced`] (another session there): nothing written;
    /// [`AppendToExistingError::ReplacedDuringWrite`] (the line went to the session that was
    /// there before); [`AppendToExistingError::Io`] for anything else.
    fn append_line(
        &self,
        path: &Path,
        line: &[u8],
        durability: Durability,
        expected: Option<KnownFile<'_>>,
    ) -> Result<VerifiedAppend, AppendToExistingError>;

    /// Appends raw bytes exactly as given (no separator, no `\n`), creating the session when
    /// missing: tools and tests that play another writer or a crash, and imports.
    ///
    /// # Errors
    /// Any failure.
    fn append_raw(&self, path: &Path, bytes: &[u8]) -> io::Result<()>;

    /// Stores `original` (the bytes of the session at `source`, which the caller holds) as a
    /// new session at `backup`, byte for byte, never replacing anything there (corrupt-header
    /// backups §1.6; conflict backups, docs/DEVIATIONS.md D11). Files keep the source's mode.
    ///
    /// # Errors
    /// [`io::ErrorKind::AlreadyExists`]; any other failure (the source is untouched).
    fn backup_copy(&self, source: &Path, backup: &Path, original: &[u8]) -> io::Result<()>;

    /// Makes what was already written to the session durable as `durability` asks (nothing for
    /// [`Durability::Buffer`]). A backend whose durability is set elsewhere may treat every
    /// level as its own (Redis: the server's `appendonly`/`appendfsync` settings decide; its
    /// `sync` only checks the session exists), and says so in its documentation.
    ///
    /// # Errors
    /// [`io::ErrorKind::NotFound`] when nothing is stored there (except for
    /// [`Durability::Buffer`]); the sync's failure.
    fn sync(&self, path: &Path, durability: Durability) -> io::Result<()>;

    /// Makes sure the namespace (session directory) `dir` exists, with its parents.
    ///
    /// # Errors
    /// Any failure.
    fn ensure_dir(&self, dir: &Path) -> io::Result<()>;

    /// The sessions stored directly in `dir` (`*.jsonl` names), as `dir` lexically normalised
    /// joined with each name, sorted by name; empty when `dir` does not exist.
    ///
    /// # Errors
    /// `dir` exists but cannot be listed.
    fn list_sessions(&self, dir: &Path) -> io::Result<Vec<PathBuf>>;

    /// The namespaces (session directories) directly under `root`, sorted; empty when `root`
    /// does not exist (`listAll`).
    ///
    /// # Errors
    /// `root` exists but cannot be listed.
    fn list_dirs(&self, root: &Path) -> io::Result<Vec<PathBuf>>;

    /// The [`SessionInfo`] of every session of `dir`, newest first (`SessionManager.list`,
    /// openclaw-jsonl.md §2.1). The default reads each of [`Storage::list_sessions`] with
    /// [`Storage::read_all`] (the modification time fallback is the snapshot's `mtime_ns`);
    /// [`FileStorage`] uses the file store's own parallel scan.
    ///
    /// # Errors
    /// [`ListError::ReadDir`] when `dir` cannot be listed.
    fn session_infos(&self, dir: &Path) -> Result<Vec<SessionInfo>, ListError> {
        let files = self
            .list_sessions(dir)
            .map_err(|source| ListError::ReadDir {
                path: dir.to_path_buf(),
                source,
            })?;
        Ok(infos(self, &files))
    }

    /// As [`Storage::session_infos`] over every namespace directly under `root`
    /// (`SessionManager.listAll`).
    ///
    /// # Errors
    /// [`ListError::ReadDir`] when `root` cannot be listed.
    fn all_session_infos(&self, root: &Path) -> Result<Vec<SessionInfo>, ListError> {
        let dirs = self.list_dirs(root).map_err(|source| ListError::ReadDir {
            path: root.to_path_buf(),
            source,
        })?;
        let files: Vec<PathBuf> = dirs
            .iter()
            .flat_map(|d| self.list_sessions(d).unwrap_or_default())
            .collect();
        Ok(infos(self, &files))
    }

    /// `findMostRecentSession` in `dir` (openclaw-jsonl.md §2.1): the session whose header
    /// line is readable with the newest modification time (ties: the first by name). The
    /// default reads each header with [`Storage::read_head`] and the time with
    /// [`Storage::stat`]; [`FileStorage`] uses the file store's own scan.
    fn most_recent_session(&self, dir: &Path) -> Option<PathBuf> {
        self.list_sessions(dir)
            .ok()?
            .into_iter()
            .filter(|p| {
                self.read_head(p)
                    .ok()
                    .flatten()
                    .is_some_and(|line| crate::list::is_header_line(&line))
            })
            .filter_map(|p| {
                let ms = self.stat(&p).ok()??.mtime_ns;
                Some((p, mtime_ms(ms)))
            })
            .fold(None, |best: Option<(PathBuf, f64)>, (p, m)| match &best {
                Some((_, bm)) if *bm >= m => best,
                _ => Some((p, m)),
            })
            .map(|(p, _)| p)
    }

    /// Runs `run` holding the session write lock of `path` (openclaw-jsonl.md §3.4, §3.5),
    /// waiting for it as `options` says. Re-entrant: a thread that already holds the lock of
    /// `path` (through this storage) runs at once. The lock is released when `run` returns or
    /// panics. [`FileStorage`] uses the cross-process lock files of [`crate::lock`]; other
    /// backends their own lock (a network backend: a lease with a random token and a fenced
    /// release). [`with_write_lock`] is the typed convenience over this method.
    ///
    /// # Errors
    /// [`LockError`] when the lock cannot be taken (then `run` is not called): a timeout, or
    /// the backend's failure as [`LockError::Io`].
    fn with_write_lock(
        &self,
        path: &Path,
        options: &LockOptions,
        run: &mut dyn FnMut(),
    ) -> Result<(), LockError>;
}

/// What [`Storage::read_snapshot`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SnapshotRead {
    /// No session is stored at the path.
    Missing,
    /// All bytes of the session and the snapshot they belong to (`snapshot.size ==
    /// bytes.len()`).
    Read {
        /// The session's bytes.
        bytes: Vec<u8>,
        /// Its snapshot at the time of the read.
        snapshot: SessionFileSnapshot,
    },
    /// The session changed while it was read (stat-read-stat saw two different snapshots):
    /// nothing consistent was read; try again.
    Changed,
}

/// What [`Storage::replace_if`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "a refused replace wrote nothing"]
pub enum Replace {
    /// The session now holds the new bytes.
    Done,
    /// The stored session was not the expected one (another writer changed, replaced,
    /// deleted or created it): nothing was written.
    Refused,
}

/// Runs `f` under the write lock of `path` in `storage` ([`Storage::with_write_lock`]) and
/// returns its result.
///
/// # Errors
/// As [`Storage::with_write_lock`] (then `f` is not called).
pub fn with_write_lock<R>(
    storage: &dyn Storage,
    path: &Path,
    options: &LockOptions,
    f: impl FnOnce() -> R,
) -> Result<R, LockError> {
    let mut f = Some(f);
    let mut out = None;
    storage.with_write_lock(path, options, &mut || {
        if let Some(f) = f.take() {
            out = Some(f());
        }
    })?;
    out.ok_or_else(|| LockError::Io {
        path: path.to_path_buf(),
        source: io::Error::other("the storage released the write lock without running the write"),
    })
}

/// The header line of `bytes` as [`Storage::read_head`] describes it.
fn first_line_of(bytes: &[u8]) -> Option<Vec<u8>> {
    if bytes.is_empty() {
        return None;
    }
    let head = &bytes[..bytes.len().min(MAX_HEADER_BYTES)];
    let end = memchr::memchr(b'\n', head).unwrap_or(head.len());
    Some(head[..end].to_vec())
}

/// Copies each range out of `all`; `UnexpectedEof` when one reaches past its end.
fn copy_ranges(all: &[u8], ranges: &mut [(u64, &mut [u8])]) -> io::Result<()> {
    for (offset, buf) in ranges.iter_mut() {
        let src = usize::try_from(*offset)
            .ok()
            .and_then(|o| all.get(o..o.checked_add(buf.len())?))
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "range past the end of the session",
                )
            })?;
        buf.copy_from_slice(src);
    }
    Ok(())
}

// ----------------------------------------------------------------------------------------
// The file store

/// The JSONL file store: each session is a file, every write goes through [`crate::io`]
/// (atomic rewrites, single-`write` `O_APPEND` appends, 0600 files, no write through a symlink
/// out of the file's own directory: [`crate::identity::OutsideStore`]), snapshots are `stat`s,
/// and the write lock is OpenClaw's lock file ([`crate::lock`]), one per file whatever name
/// reaches it ([`crate::identity::FileIdentity`]). The default storage of every
/// [`crate::SessionManager`]; it is stateless, so all instances on the real file system are
/// interchangeable. [`FileStorage::with_fs`] builds one whose writes go through another
/// [`Fs`] (a test's `io::fault::FaultFs`, feature `test-util`).
#[derive(Clone, Debug, Default)]
pub struct FileStorage {
    /// The system calls the writes make (`None`: [`RealFs`]).
    fs: Option<Arc<dyn Fs>>,
}

static SHARED_FILES: LazyLock<Arc<FileStorage>> = LazyLock::new(|| Arc::new(FileStorage::new()));

impl FileStorage {
    /// The file store on the real file system.
    pub const fn new() -> Self {
        FileStorage { fs: None }
    }

    /// The file store making its writes (opens for writing, writes, syncs, renames, links,
    /// removals) through `fs`, with the `*_in` functions of [`crate::io`]; reads, `stat`s and
    /// the write lock stay on the real file system. For fault injection (docs/RELIABILITY.md): a manager
    /// on `Arc::new(FileStorage::with_fs(fault_fs))` meets the failures `fault_fs` plans.
    pub fn with_fs(fs: Arc<dyn Fs>) -> Self {
        FileStorage { fs: Some(fs) }
    }

    /// The process-wide instance as a shared [`Storage`] (no allocation per manager).
    pub fn shared() -> Arc<dyn Storage> {
        let files: Arc<FileStorage> = Arc::clone(&SHARED_FILES);
        files
    }

    fn fs(&self) -> &dyn Fs {
        self.fs.as_deref().unwrap_or(&RealFs)
    }
}

impl Storage for FileStorage {
    fn name(&self) -> &str {
        "file"
    }

    fn as_file_storage(&self) -> Option<&FileStorage> {
        Some(self)
    }

    fn stat(&self, path: &Path) -> io::Result<Option<SessionFileSnapshot>> {
        SessionFileSnapshot::stat(path)
    }

    /// [`crate::io::read_file`]'s bytes, a large file read in two halves on two threads.
    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        crate::bulk::read_file(path)
    }

    fn read_from(&self, path: &Path, offset: u64) -> io::Result<Vec<u8>> {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = crate::io::open_regular(path)?;
        f.seek(SeekFrom::Start(offset))?;
        let mut out = Vec::new();
        f.read_to_end(&mut out)?;
        Ok(out)
    }

    /// One [`crate::io::open_regular`], then one positioned read per range.
    fn read_ranges(&self, path: &Path, ranges: &mut [(u64, &mut [u8])]) -> io::Result<()> {
        let file = crate::io::open_regular(path)?;
        for (offset, buf) in ranges.iter_mut() {
            read_exact_at(&file, buf, *offset)?;
        }
        Ok(())
    }

    /// [`crate::io::read_first_line`]: 4 KiB reads, at most 64 KiB.
    fn read_head(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        crate::io::read_first_line(path)
    }

    /// [`crate::io::create_new`] (mode 0600).
    fn create_new(&self, path: &Path, contents: &[u8]) -> io::Result<()> {
        crate::io::create_new_in(self.fs(), path, contents, None)
    }

    /// [`crate::io::atomic_rewrite`].
    fn replace(&self, path: &Path, contents: &[u8]) -> io::Result<()> {
        crate::io::atomic_rewrite_in(self.fs(), path, contents)
    }

    /// [`crate::io::atomic_rewrite`], unfenced: never [`Replace::Refused`]. The file store
    /// relies on the session write lock to keep other writers out between the caller's check
    /// and the rename (see [`Storage::replace_if`]); the manager does not call this on files.
    fn replace_if(
        &self,
        path: &Path,
        contents: &[u8],
        _expected: Option<&SessionFileSnapshot>,
    ) -> io::Result<Replace> {
        self.replace(path, contents)?;
        Ok(Replace::Done)
    }

    /// [`crate::io::append_to_existing`].
    fn append_line(
        &self,
        path: &Path,
        line: &[u8],
        durability: Durability,
        expected: Option<KnownFile<'_>>,
    ) -> Result<VerifiedAppend, AppendToExistingError> {
        crate::io::append_to_existing_in(self.fs(), path, line, durability, expected)
    }

    /// [`crate::io::append_raw`].
    fn append_raw(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        crate::io::append_raw_in(self.fs(), path, bytes)
    }

    /// [`crate::io::backup_copy`].
    fn backup_copy(&self, source: &Path, backup: &Path, original: &[u8]) -> io::Result<()> {
        crate::io::backup_copy_in(self.fs(), source, backup, original)
    }

    /// [`crate::io::sync_existing`].
    fn sync(&self, path: &Path, durability: Durability) -> io::Result<()> {
        crate::io::sync_existing_in(self.fs(), path, durability)
    }

    /// [`crate::io::ensure_dir`].
    fn ensure_dir(&self, dir: &Path) -> io::Result<()> {
        crate::io::ensure_dir(dir)
    }

    /// The `*.jsonl` files directly in `dir` (`SessionManager.list`'s candidates).
    fn list_sessions(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        crate::list::jsonl_files(dir).map_err(|ListError::ReadDir { source, .. }| source)
    }

    /// The directories directly under `root` (symlinks to directories left out, as
    /// `listAll` does).
    fn list_dirs(&self, root: &Path) -> io::Result<Vec<PathBuf>> {
        let rd = match std::fs::read_dir(root) {
            Ok(rd) => rd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        Ok(crate::list::sorted_sub_dirs(rd))
    }

    /// [`crate::list::list`] (the parallel targeted scan).
    fn session_infos(&self, dir: &Path) -> Result<Vec<SessionInfo>, ListError> {
        crate::list::list(dir)
    }

    /// [`crate::list::list_all`].
    fn all_session_infos(&self, root: &Path) -> Result<Vec<SessionInfo>, ListError> {
        crate::list::list_all(root)
    }

    /// [`crate::list::find_most_recent_session`].
    fn most_recent_session(&self, dir: &Path) -> Option<PathBuf> {
        crate::list::find_most_recent_session(dir)
    }

    /// [`crate::lock::with_session_write_lock`]: the lock file `<file>.lock`, shared with
    /// OpenClaw and other processes.
    fn with_write_lock(
        &self,
        path: &Path,
        options: &LockOptions,
        run: &mut dyn FnMut(),
    ) -> Result<(), LockError> {
        crate::lock::with_session_write_lock(path, options, |_| run())
    }
}

// ----------------------------------------------------------------------------------------
// The in-memory store

/// The `dev` of every [`MemStorage`] snapshot (`"memstore"` in ASCII).
pub const MEM_STORAGE_DEV: u64 = u64::from_be_bytes(*b"memstore");

/// Sessions held in memory: a map from path (lexically normalised) to bytes, plus the set of
/// directories (namespaces) that exist. Nothing is persisted; durability modes are accepted
/// and ignored. For tests and for embedding the store where no files should be written; also
/// the model a non-file backend can follow.
///
/// Semantics, as close to [`FileStorage`] as memory allows:
/// - directories exist once [`Storage::ensure_dir`] created them (with their parents) or a
///   session was stored in them; a session can only be stored in an existing directory
///   (otherwise [`io::ErrorKind::NotFound`], as for a file in a missing directory); a
///   directory path cannot hold a session ([`io::ErrorKind::InvalidInput`], "not a regular
///   file (a directory)");
/// - snapshots: `dev` = [`MEM_STORAGE_DEV`], `ino` = the session's generation (a number
///   unique within this storage, new on every [`Storage::replace`], create or
///   delete-and-recreate, kept by appends), `size` = the byte length, `mtime_ns` = `ctime_ns`
///   = the time of the last change in nanoseconds since the epoch, made strictly increasing
///   across the storage (so every change gives a new snapshot), `birth_ns` = `None`;
/// - appends are atomic with their fence check ([`Storage::append_line`]), `before` and
///   `after` are exact; [`Storage::read_snapshot`] and [`Storage::replace_if`] check and
///   read or write under one hold of the mutex;
/// - the write lock is an in-process, per-path, re-entrant lock (per thread) with the
///   timeout of [`LockOptions::timeout`] (`stale`, `max_hold` and `backoff` do not apply); a
///   timeout is [`LockError::Timeout`] naming `<path>.lock`.
pub struct MemStorage {
    state: Mutex<MemState>,
    locks: Mutex<HashMap<PathBuf, Holder>>,
    released: Condvar,
}

#[derive(Default)]
struct MemState {
    files: BTreeMap<PathBuf, MemFile>,
    dirs: BTreeSet<PathBuf>,
    /// The last change stamp handed out (ns since the epoch, strictly increasing).
    last_stamp: i128,
    /// The last generation handed out.
    generations: u64,
}

struct MemFile {
    bytes: Vec<u8>,
    generation: u64,
    changed_ns: i128,
}

/// Who holds a lock of a [`MemStorage`], and how many times (re-entry).
struct Holder {
    thread: ThreadId,
    depth: usize,
}

impl Default for MemStorage {
    fn default() -> Self {
        MemStorage {
            state: Mutex::new(MemState::default()),
            locks: Mutex::new(HashMap::new()),
            released: Condvar::new(),
        }
    }
}

impl fmt::Debug for MemStorage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.state.lock();
        f.debug_struct("MemStorage")
            .field("sessions", &st.files.len())
            .field(
                "bytes",
                &st.files.values().map(|v| v.bytes.len()).sum::<usize>(),
            )
            .field("dirs", &st.dirs.len())
            .finish()
    }
}

impl MemStorage {
    /// An empty store (no directories, no sessions).
    pub fn new() -> Self {
        Self::default()
    }

    /// Every stored session's path, sorted.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.state.lock().files.keys().cloned().collect()
    }

    /// Deletes the session at `path` (tests: "the file was deleted"). Returns whether one was
    /// there.
    pub fn remove(&self, path: &Path) -> bool {
        self.state.lock().files.remove(&key(path)).is_some()
    }
}

fn key(path: &Path) -> PathBuf {
    crate::paths::normalize(path)
}

/// The directory of a stored key (`.` for a bare relative name).
fn dir_of_key(k: &Path) -> &Path {
    match k.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

fn directory_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "not a regular file (a directory)",
    )
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("no session stored at {}", path.display()),
    )
}

fn now_ns() -> i128 {
    match SystemTime::now().duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    }
}

impl MemState {
    fn stamp(&mut self) -> i128 {
        self.last_stamp = now_ns().max(self.last_stamp + 1);
        self.last_stamp
    }

    fn generation(&mut self) -> u64 {
        self.generations += 1;
        self.generations
    }

    fn snapshot(file: &MemFile) -> SessionFileSnapshot {
        SessionFileSnapshot {
            dev: MEM_STORAGE_DEV,
            ino: file.generation,
            size: file.bytes.len() as u64,
            mtime_ns: file.changed_ns,
            ctime_ns: file.changed_ns,
            birth_ns: None,
        }
    }

    /// The stored session at `k`; `NotFound`, or `InvalidInput` for a directory.
    fn file(&self, k: &Path) -> io::Result<&MemFile> {
        match self.files.get(k) {
            Some(f) => Ok(f),
            None if self.dirs.contains(k) => Err(directory_error()),
            None => Err(not_found(k)),
        }
    }

    /// Checks that a session may be stored at `k`: not a directory, in an existing one.
    fn writable(&self, k: &Path) -> io::Result<()> {
        if self.dirs.contains(k) {
            return Err(directory_error());
        }
        match k.parent() {
            Some(p) if !p.as_os_str().is_empty() && !self.dirs.contains(p) => Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("directory {} does not exist", p.display()),
            )),
            _ => Ok(()),
        }
    }

    /// Stores `bytes` at `k` as a new session (a new generation).
    fn put_new(&mut self, k: PathBuf, bytes: Vec<u8>) {
        let generation = self.generation();
        let changed_ns = self.stamp();
        self.files.insert(
            k,
            MemFile {
                bytes,
                generation,
                changed_ns,
            },
        );
    }
}

impl Storage for MemStorage {
    fn name(&self) -> &str {
        "memory"
    }

    fn stat(&self, path: &Path) -> io::Result<Option<SessionFileSnapshot>> {
        let k = key(path);
        let st = self.state.lock();
        match st.file(&k) {
            Ok(f) => Ok(Some(MemState::snapshot(f))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        let k = key(path);
        Ok(self.state.lock().file(&k)?.bytes.clone())
    }

    /// The bytes and snapshot under the mutex: never [`SnapshotRead::Changed`].
    fn read_snapshot(&self, path: &Path) -> io::Result<SnapshotRead> {
        let k = key(path);
        let st = self.state.lock();
        match st.file(&k) {
            Ok(f) => Ok(SnapshotRead::Read {
                bytes: f.bytes.clone(),
                snapshot: MemState::snapshot(f),
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(SnapshotRead::Missing),
            Err(e) => Err(e),
        }
    }

    fn read_from(&self, path: &Path, offset: u64) -> io::Result<Vec<u8>> {
        let k = key(path);
        let st = self.state.lock();
        let bytes = &st.file(&k)?.bytes;
        let from = usize::try_from(offset).map_or(bytes.len(), |o| o.min(bytes.len()));
        Ok(bytes[from..].to_vec())
    }

    fn read_ranges(&self, path: &Path, ranges: &mut [(u64, &mut [u8])]) -> io::Result<()> {
        let k = key(path);
        let st = self.state.lock();
        copy_ranges(&st.file(&k)?.bytes, ranges)
    }

    fn read_head(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        let k = key(path);
        Ok(first_line_of(&self.state.lock().file(&k)?.bytes))
    }

    fn create_new(&self, path: &Path, contents: &[u8]) -> io::Result<()> {
        let k = key(path);
        let mut st = self.state.lock();
        if st.files.contains_key(&k) || st.dirs.contains(&k) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} already exists", k.display()),
            ));
        }
        st.writable(&k)?;
        st.put_new(k, contents.to_vec());
        Ok(())
    }

    fn replace(&self, path: &Path, contents: &[u8]) -> io::Result<()> {
        let k = key(path);
        let mut st = self.state.lock();
        st.writable(&k)?;
        st.put_new(k, contents.to_vec());
        Ok(())
    }

    /// Checked and replaced under the mutex.
    fn replace_if(
        &self,
        path: &Path,
        contents: &[u8],
        expected: Option<&SessionFileSnapshot>,
    ) -> io::Result<Replace> {
        let k = key(path);
        let mut st = self.state.lock();
        let now = match st.file(&k) {
            Ok(f) => Some(MemState::snapshot(f)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        if now.as_ref() != expected {
            return Ok(Replace::Refused);
        }
        st.writable(&k)?;
        st.put_new(k, contents.to_vec());
        Ok(Replace::Done)
    }

    fn append_line(
        &self,
        path: &Path,
        line: &[u8],
        _durability: Durability,
        expected: Option<KnownFile<'_>>,
    ) -> Result<VerifiedAppend, AppendToExistingError> {
        let k = key(path);
        let mut st = self.state.lock();
        let file = match st.file(&k) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(AppendToExistingError::Deleted);
            }
            Err(e) => return Err(e.into()),
        };
        let before = MemState::snapshot(file);
        if let Some(known) = expected {
            if !before.same_file(&known.snapshot) {
                return Err(AppendToExistingError::Replaced);
            }
            if before != known.snapshot
                && !known.first_line.is_empty()
                && !file.bytes.starts_with(known.first_line)
            {
                return Err(AppendToExistingError::Replaced);
            }
        }
        let separator = file.bytes.last().is_some_and(|&b| b != b'\n');
        let mut written = Vec::with_capacity(line.len() + 2);
        if separator {
            written.push(b'\n');
        }
        written.extend_from_slice(line);
        written.push(b'\n');
        let changed_ns = st.stamp();
        let Some(file) = st.files.get_mut(&k) else {
            return Err(AppendToExistingError::ReplacedDuringWrite);
        };
        file.bytes.extend_from_slice(&written);
        file.changed_ns = changed_ns;
        let after = MemState::snapshot(file);
        Ok(VerifiedAppend {
            separator,
            written,
            before,
            after,
        })
    }

    fn append_raw(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let k = key(path);
        let mut st = self.state.lock();
        st.writable(&k)?;
        let changed_ns = st.stamp();
        match st.files.get_mut(&k) {
            Some(f) => {
                f.bytes.extend_from_slice(bytes);
                f.changed_ns = changed_ns;
            }
            None => st.put_new(k, bytes.to_vec()),
        }
        Ok(())
    }

    fn backup_copy(&self, _source: &Path, backup: &Path, original: &[u8]) -> io::Result<()> {
        self.create_new(backup, original)
    }

    fn sync(&self, path: &Path, durability: Durability) -> io::Result<()> {
        if durability == Durability::Buffer {
            return Ok(());
        }
        let k = key(path);
        self.state.lock().file(&k).map(|_| ())
    }

    fn ensure_dir(&self, dir: &Path) -> io::Result<()> {
        if dir.as_os_str().is_empty() {
            return Ok(());
        }
        let k = key(dir);
        let mut st = self.state.lock();
        if st.files.contains_key(&k) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} is a session, not a directory", k.display()),
            ));
        }
        for a in k.ancestors().filter(|a| !a.as_os_str().is_empty()) {
            if !st.dirs.insert(a.to_path_buf()) {
                break;
            }
        }
        Ok(())
    }

    fn list_sessions(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        let k = key(dir);
        let st = self.state.lock();
        // Keys are sorted and share the directory, so they come out sorted by name.
        Ok(st
            .files
            .keys()
            .filter(|p| dir_of_key(p) == k)
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().ends_with(".jsonl"))
            })
            .cloned()
            .collect())
    }

    fn list_dirs(&self, root: &Path) -> io::Result<Vec<PathBuf>> {
        let k = key(root);
        let st = self.state.lock();
        Ok(st
            .dirs
            .iter()
            .filter(|d| d.parent().is_some() && dir_of_key(d) == k)
            .cloned()
            .collect())
    }

    fn with_write_lock(
        &self,
        path: &Path,
        options: &LockOptions,
        run: &mut dyn FnMut(),
    ) -> Result<(), LockError> {
        let k = key(path);
        let me = std::thread::current().id();
        let deadline = options.timeout.map(|t| Instant::now() + t);
        {
            let mut locks = self.locks.lock();
            loop {
                match locks.get_mut(&k) {
                    None => {
                        locks.insert(
                            k.clone(),
                            Holder {
                                thread: me,
                                depth: 1,
                            },
                        );
                        break;
                    }
                    Some(h) if h.thread == me => {
                        h.depth += 1;
                        break;
                    }
                    Some(_) => match deadline {
                        Some(d) if Instant::now() >= d => {
                            let pid = u64::from(std::process::id());
                            return Err(LockError::Timeout {
                                timeout_ms: options.timeout.map_or(u64::MAX, |t| {
                                    u64::try_from(t.as_millis()).unwrap_or(u64::MAX)
                                }),
                                owner: format!("pid={pid} alive=true"),
                                owner_pid: Some(pid),
                                owner_alive: true,
                                lock_path: PathBuf::from(format!("{}.lock", k.display())),
                            });
                        }
                        Some(d) => {
                            self.released.wait_until(&mut locks, d);
                        }
                        None => self.released.wait(&mut locks),
                    },
                }
            }
        }
        let _release = MemRelease {
            storage: self,
            key: k,
        };
        run();
        Ok(())
    }
}

/// Releases one level of a [`MemStorage`] lock when dropped (also when the locked write
/// panics).
struct MemRelease<'a> {
    storage: &'a MemStorage,
    key: PathBuf,
}

impl Drop for MemRelease<'_> {
    fn drop(&mut self) {
        let mut locks = self.storage.locks.lock();
        let last = match locks.get_mut(&self.key) {
            Some(h) => {
                h.depth -= 1;
                h.depth == 0
            }
            None => false,
        };
        if last {
            locks.remove(&self.key);
            self.storage.released.notify_all();
        }
    }
}

// ----------------------------------------------------------------------------------------
// Listing through a storage

/// node's `stats.mtime.getTime()` of a modification time in nanoseconds: `Math.round(mtimeMs)`.
fn mtime_ms(ns: i128) -> f64 {
    let abs = ns.unsigned_abs();
    let secs = (abs / 1_000_000_000) as f64;
    let nanos = (abs % 1_000_000_000) as f64;
    let ms = secs * 1e3 + nanos / 1e6;
    let ms = if ns < 0 { -ms } else { ms };
    (ms + 0.5).floor()
}

fn infos<S: Storage + ?Sized>(storage: &S, files: &[PathBuf]) -> Vec<SessionInfo> {
    let mut out: Vec<SessionInfo> = files
        .iter()
        .filter_map(|p| {
            let bytes = storage.read_all(p).ok()?;
            crate::list::info_from_bytes(p, &bytes, || {
                storage.stat(p).ok().flatten().map(|s| mtime_ms(s.mtime_ns))
            })
        })
        .collect();
    crate::list::sort_by_modified(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mtime_ms_rounds_like_node() {
        assert_eq!(mtime_ms(1_500_000), 2.0);
        assert_eq!(mtime_ms(1_499_999), 1.0);
        assert_eq!(mtime_ms(1_767_225_600_123_456_789), 1_767_225_600_123.0);
        assert_eq!(mtime_ms(-1_500_000), -1.0);
    }

    #[test]
    fn first_line_of_matches_read_first_line_rules() {
        assert_eq!(first_line_of(b""), None);
        assert_eq!(first_line_of(b"\nx"), Some(Vec::new()));
        assert_eq!(first_line_of(b"ab\ncd\n"), Some(b"ab".to_vec()));
        assert_eq!(first_line_of(b"abc"), Some(b"abc".to_vec()));
        let long = vec![b'a'; MAX_HEADER_BYTES + 10];
        assert_eq!(
            first_line_of(&long).map(|l| l.len()),
            Some(MAX_HEADER_BYTES)
        );
    }
}
