//! Where a session's bytes live: the [`Storage`] trait that [`crate::SessionManager`]
//! reads and writes through, the JSONL file store [`FileStorage`] (the default: the same code
//! and the same speed as before the trait existed), and the in-memory [`MemStorage`] (tests,
//! embedding).

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::cache::FileCaches;
use crate::io::{AppendToExistingError, Durability, KnownFile, MAX_HEADER_BYTES, VerifiedAppend};
use crate::lock::{LockError, LockOptions};
use crate::snapshot::SessionFileSnapshot;

mod file;
mod mem;

pub use file::FileStorage;
pub(crate) use file::{jsonl_entries, jsonl_files, sorted_sub_dirs};
pub use mem::{MEM_STORAGE_DEV, MemStorage};

/// The operations [`crate::SessionManager`] performs on a session's bytes. Every method takes
/// the session's path (see "Model" below for what a path means to a backend that has no
/// files, and for what its snapshots hold).
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
///
/// # Model
///
/// A session is addressed by a path (`&Path`) and is a sequence of bytes: JSONL lines, the
/// header first (openclaw-jsonl.md §1.1, §1.2). For [`FileStorage`] the path is the file; any
/// other backend treats it as a key: the directory is a namespace (an agent's session
/// directory, [`Storage::list_sessions`]) and the file name names the session. Whatever the
/// backend, its bytes are exactly the bytes the file store would hold, so a session moves
/// between backends byte for byte.
///
/// A session's version and identity is a [`SessionFileSnapshot`] ([`Storage::stat`],
/// openclaw-jsonl.md §3.1): two equal snapshots mean "nothing happened to the session";
/// [`SessionFileSnapshot::same_file`] means "the same session, whatever happened to its bytes".
/// A backend without files fills it as follows (see [`MemStorage`]):
/// - `dev`: a constant tag of the backend (so its snapshots never equal a file's);
/// - `ino`: a generation that changes whenever the session is replaced
///   ([`Storage::replace`]) or deleted and created again — never on an append;
/// - `size`: the length of the stored bytes (the offset the next append lands at);
/// - `mtime_ns`, `ctime_ns`: a counter bumped on every change (appends included), strictly
///   increasing; it should read as nanoseconds since the epoch (wall clock, made strictly
///   increasing), because listings fall back to it as the session's modification time;
/// - `birth_ns`: `None`.
///
/// # Operations and where the manager uses them
///
/// | operation | manager use | spec |
/// |---|---|---|
/// | [`Storage::stat`] | stat-read-stat loads, the catch-up under the write lock, after writes | §3.1, §3.3 |
/// | [`Storage::read_all`] | loads, the check before a full rewrite, adopting foreign lines | §2.1, §2.12, D11 |
/// | [`Storage::read_ranges`] | tail reindex (warm cache) and tail catch-up: first and last 4 KiB and the new bytes | §3.1, §3.2 |
/// | [`Storage::read_head`] | `continueRecent` candidates (header sniff) | §2.1 |
/// | [`Storage::append_line`] | every plain append, fenced on the expected session | §2.12, §3.2 |
/// | [`Storage::read_snapshot`] | loads and the check before a full rewrite on storages other than files (one consistent read) | §2.1, §3.1, §2.12 |
/// | [`Storage::replace`] | full rewrites on files (first flush, migration, recovery, removals) | §2.12, §1.6, §1.9 |
/// | [`Storage::replace_if`] | full rewrites on other storages, fenced on the session last read | §2.12, D11 |
/// | [`Storage::create_new`] | `forkFrom` | §2.1 |
/// | [`Storage::backup_copy`] | corrupt-header and conflict backups | §1.6, D11 |
/// | [`Storage::with_write_lock`] | [`crate::SessionManager::set_write_lock`] | §3.4, §3.5 |
/// | [`Storage::list_sessions`], [`Storage::list_dirs`] | `list`, `listAll`, `continueRecent` ([`crate::Sessions::list`], [`crate::Sessions::list_all`], [`crate::Sessions::continue_recent`]) | §2.1 |
///
/// # The warm cache
///
/// The warm cache and the incremental repair cache ([`crate::FileCaches`]) are keyed by
/// canonical file paths and trust file-system snapshots; a [`FileStorage`] owns them ([`Storage::caches`];
/// the process-wide [`FileStorage::shared`] holds the ones every default manager uses). A
/// manager on any other storage loads with [`Storage::read_snapshot`] every time (one
/// consistent read where the backend offers one, else stat-read-stat) and keeps no cache.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use session_format::json::parse_value;
/// use session_store::SessionManager;
/// use session_store::{MemStorage, Storage};
///
/// let mem = Arc::new(MemStorage::new());
/// let dir = std::path::Path::new("/agents/main/sessions");
/// let mut sm = SessionManager::on(mem.clone()).create("/home/dev/project", Some(dir))?;
/// sm.append_message(parse_value(br#"{"role":"user","content":"hi","timestamp":1}"#)?)?;
/// sm.append_message(parse_value(br#"{"role":"assistant","content":[],"timestamp":2}"#)?)?;
/// let file = sm.get_session_file().unwrap().to_path_buf();
/// let bytes = mem.read_all(&file)?; // header, user, assistant: three JSONL lines
/// assert_eq!(bytes.iter().filter(|&&b| b == b'\n').count(), 3);
/// assert_eq!(mem.list_sessions(dir)?, vec![file]);
/// # Ok(()) }
/// ```
pub trait Storage: Send + Sync + fmt::Debug {
    /// A short name of the backend, for messages: `"file"`, `"memory"`, `"redis"`, ….
    fn name(&self) -> &str;

    /// The caches this backend keeps for [`crate::SessionManager`]: the warm cache of parsed
    /// sessions and the incremental repair cache ([`FileCaches`]). Both are keyed by canonical
    /// local file paths and trust file-system snapshots, so only [`FileStorage`] keeps them;
    /// other backends keep the default (`None`: every load reads the session again, with
    /// [`Storage::read_snapshot`]).
    fn caches(&self) -> Option<&FileCaches> {
        None
    }

    /// True when the paths of this storage are paths of the local file system, read and
    /// written in place ([`FileStorage`]): a directory may then be canonicalised and scanned
    /// directly (the listing's parallel scan, [`crate::Sessions::list`]). Default `false`.
    fn local_files(&self) -> bool {
        false
    }

    /// True when [`Storage::replace_if`] is fenced (refuses when the session is not the
    /// expected one), false when it replaces unconditionally and the session write lock is
    /// what keeps other writers out ([`FileStorage`], as OpenClaw does). A full rewrite on an
    /// unfenced storage reads the bytes only ([`Storage::read_all`]) before it replaces them.
    /// Default `true`.
    fn replace_is_fenced(&self) -> bool {
        true
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
    /// cache ([`crate::WarmCache`]).
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

#[cfg(test)]
mod tests {
    use super::*;

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
