//! The process-wide warm cache of parsed session files (openclaw-jsonl.md §3.1–§3.3), and the
//! stat-read-stat loads that feed it.
//!
//! Each entry holds, per canonical file ([`crate::identity::FileIdentity`]: every name of one
//! file, through a symlinked directory or a symlink to it, shares the entry), the file's
//! [`SessionFileSnapshot`], its bytes and the parsed rows and navigation index, all shared
//! (`Arc`) with the managers opened from it. A manager never changes what it shares: its first
//! change copies the rows or the index (copy-on-write), so the cache and every other manager
//! keep what they had.
//!
//! Invariants:
//! - an entry equals a fresh load of the file as its snapshot describes it (rows, positions,
//!   index, diagnostics); a load whose snapshot equals the entry's parses nothing;
//! - only files whose first line is a readable header with version 3 or 4 are cached (files a
//!   writable open migrates or recovers are not); a file over the byte cap is never cached;
//! - the cache holds at most [`CacheLimits::max_files`] files and
//!   [`CacheLimits::max_bytes`] bytes of files (sum of sizes); the least recently used entry
//!   is evicted first;
//! - an entry advances past an append only when the append is verified (the appending
//!   manager's snapshot and the entry's both equal the `fstat` before the write, and the file
//!   after it is the same file, exactly that many bytes longer); any other change to a file
//!   makes its entry stale: never returned as it is, only used as the base of a tail reindex;
//! - a tail reindex happens only when the file is the same file (dev/ino), longer than the
//!   entry's snapshot, and both its first and its last 4 KiB before the old end are still the
//!   entry's bytes; the new lines are read exactly as a full load would read them.

use std::io;
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, PoisonError};

use indexmap::IndexMap;
use session_format::json::JsString;

use crate::disk::DiskImage;
use crate::error::OpenError;
use crate::index::Index;
use crate::inspect::{MalformedLine, OpenReport};
use crate::rows::{self, Row, RowKind};
use crate::snapshot::{self, SessionFileSnapshot, SnapshotSync, hooks};
use crate::storage::{SnapshotRead, Storage};

/// Files the cache holds by default (the reference's limit).
pub const DEFAULT_MAX_FILES: usize = 8;

/// Total file bytes the cache holds by default, and the size over which a file is never cached
/// (the reference's limit: 32 MiB).
pub const DEFAULT_MAX_BYTES: u64 = 32 * 1024 * 1024;

/// Attempts of a stat-read-stat load before it gives up.
pub const LOAD_ATTEMPTS: u32 = 3;

/// Bytes compared at the start of the file and just before its old end before a tail reindex.
const PROBE_BYTES: usize = 4096;

/// The warm cache's bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheLimits {
    /// Most files held.
    pub max_files: usize,
    /// Most bytes held (sum of the cached files' sizes); a larger file is not cached at all.
    pub max_bytes: u64,
}

impl Default for CacheLimits {
    fn default() -> Self {
        CacheLimits {
            max_files: DEFAULT_MAX_FILES,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// What the cache holds now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CacheStats {
    /// Files held (stale entries included).
    pub files: usize,
    /// Sum of their sizes.
    pub bytes: u64,
}

/// Copy-on-write shared value: clones share one allocation, and the first mutable access to a
/// shared value copies it (`Arc::make_mut`), so no holder ever sees another's changes.
#[derive(Debug, Default)]
pub(crate) struct Shared<T>(Arc<T>);

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

impl<T> From<T> for Shared<T> {
    fn from(value: T) -> Self {
        Shared(Arc::new(value))
    }
}

impl<T> Deref for Shared<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Clone> DerefMut for Shared<T> {
    fn deref_mut(&mut self) -> &mut T {
        Arc::make_mut(&mut self.0)
    }
}

impl<'a, T> IntoIterator for &'a Shared<Vec<T>> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<T> Shared<T> {
    /// True when both share one allocation.
    #[cfg(test)]
    pub(crate) fn ptr_eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// A parsed session file as a fresh load gives it: what a manager adopts on a warm open.
#[derive(Clone, Debug)]
pub(crate) struct Warm {
    pub(crate) snapshot: SessionFileSnapshot,
    /// The bytes of the file as first read; rows added later own their bytes.
    pub(crate) buf: Arc<Vec<u8>>,
    pub(crate) rows: Shared<Vec<Row>>,
    pub(crate) ix: Shared<Index>,
    pub(crate) header: usize,
    pub(crate) session_id: String,
    pub(crate) header_cwd: Option<JsString>,
    pub(crate) disk: DiskImage,
    /// The file-level findings of a fresh load (its `path` is set by each manager).
    pub(crate) report: OpenReport,
    version: f64,
    /// Line feeds in the file.
    lines: usize,
    ends_with_newline: bool,
    /// The last row was read without the end trim only the file's last line gets (so it reads
    /// the same when lines follow it).
    last_row_untrimmed: bool,
    /// The file's first ≤ 4 KiB.
    pub(crate) head: Arc<[u8]>,
    /// The file's last ≤ 4 KiB.
    probe: Vec<u8>,
}

/// The parts of a fresh, unmodified load (see [`Warm::from_parts`]).
#[derive(Debug)]
pub(crate) struct Pristine {
    pub(crate) snapshot: SessionFileSnapshot,
    pub(crate) buf: Arc<Vec<u8>>,
    pub(crate) rows: Shared<Vec<Row>>,
    pub(crate) ix: Shared<Index>,
    pub(crate) header: Option<usize>,
    pub(crate) session_id: String,
    pub(crate) header_cwd: Option<JsString>,
    pub(crate) report: OpenReport,
}

impl Warm {
    /// The cacheable state of a fresh load, `None` unless its header is readable with version
    /// 3 or 4 (and the bytes are the snapshot's).
    pub(crate) fn from_parts(p: Pristine) -> Option<Warm> {
        let header = p.header?;
        let version = rows::header_version(p.rows.get(header)?, &p.buf);
        if !(version == 3.0 || version == 4.0) || p.buf.len() as u64 != p.snapshot.size {
            return None;
        }
        let buf = &p.buf;
        let lines = match p.rows.last().and_then(|r| r.pos) {
            Some((line, offset)) => {
                line - 1 + memchr::memchr_iter(b'\n', buf.get(offset..).unwrap_or(&[])).count()
            }
            None => memchr::memchr_iter(b'\n', buf).count(),
        };
        let last_row_untrimmed = p.rows.last().is_some_and(untrimmed);
        let head: Arc<[u8]> = Arc::from(&buf[..buf.len().min(PROBE_BYTES)]);
        let probe = buf[buf.len() - buf.len().min(PROBE_BYTES)..].to_vec();
        let disk = DiskImage::read(buf);
        let ends_with_newline = buf.last() == Some(&b'\n');
        Some(Warm {
            snapshot: p.snapshot,
            disk,
            buf: p.buf,
            rows: p.rows,
            ix: p.ix,
            header,
            session_id: p.session_id,
            header_cwd: p.header_cwd,
            report: p.report,
            version,
            lines,
            ends_with_newline,
            last_row_untrimmed,
            head,
            probe,
        })
    }

    /// A fresh load of `buf` (the file as `snapshot` describes it), when cacheable.
    fn load(snapshot: SessionFileSnapshot, path: &Path, buf: Vec<u8>) -> (Option<Warm>, usize) {
        let loaded = rows::load(&buf);
        let scanned = loaded.scanned;
        let report = crate::inspect::file_report(path, &buf, &loaded);
        let Some(h) = loaded.header else {
            return (None, scanned);
        };
        let session_id =
            rows::header_string(&loaded.rows[h], &buf, "id").unwrap_or_default();
        let header_cwd = rows::header_js_string(&loaded.rows[h], &buf, "cwd");
        let ix = Index::build(&loaded.rows);
        let warm = Warm::from_parts(Pristine {
            snapshot,
            buf: Arc::new(buf),
            rows: loaded.rows.into(),
            ix: ix.into(),
            header: Some(h),
            session_id,
            header_cwd,
            report,
        });
        (warm, scanned)
    }

    /// Can the file, now `now`, be read as this state plus its new bytes?
    fn is_tail_base_for(&self, now: &SessionFileSnapshot) -> bool {
        now.same_file(&self.snapshot)
            && now.size > self.snapshot.size
            && self.ends_with_newline
            && self.last_row_untrimmed
    }

    /// This state extended by `tail`, the bytes the file gained (its snapshot now `now`).
    /// Returns it and the number of lines scanned.
    fn extended(mut self, tail: &[u8], now: SessionFileSnapshot) -> (Warm, usize) {
        let old_len = self.snapshot.size;
        let Ok(offset_base) = usize::try_from(old_len) else {
            return (self, 0);
        };
        let (new_rows, scanned) = rows::load_tail(tail, self.version, self.lines, offset_base);
        let from = self.rows.len();
        self.rows.extend(new_rows);
        self.ix.extend(&self.rows, from);
        if !self.disk.appended(old_len, tail) {
            self.disk = DiskImage::Unknown;
        }
        let report = &mut self.report;
        report.bytes = report.bytes.saturating_add(tail.len());
        report.missing_final_newline = tail.last() != Some(&b'\n');
        for row in &self.rows[from..] {
            if let RowKind::Malformed(err) = &row.kind {
                let m = MalformedLine {
                    line: err.line,
                    line_offset: row.pos.map_or(0, |p| p.1),
                    error_offset: err.byte_offset,
                    error: err.error.to_string(),
                    torn: err.torn,
                    nul_padded: err.nul_padded,
                };
                if err.torn {
                    report.torn_tail = Some(m.clone());
                }
                report.malformed_lines.push(m);
            }
        }
        self.lines += memchr::memchr_iter(b'\n', tail).count();
        self.ends_with_newline = tail.last() == Some(&b'\n');
        self.last_row_untrimmed = self.rows.last().is_some_and(untrimmed);
        self.push_probe(tail);
        self.snapshot = now;
        (self, scanned)
    }

    fn push_probe(&mut self, bytes: &[u8]) {
        if bytes.len() >= PROBE_BYTES {
            self.probe.clear();
            self.probe
                .extend_from_slice(&bytes[bytes.len() - PROBE_BYTES..]);
        } else {
            self.probe.extend_from_slice(bytes);
            let extra = self.probe.len().saturating_sub(PROBE_BYTES);
            self.probe.drain(..extra);
        }
    }

    /// Appends a row this process wrote as the line `written` (no separator) at the end of the
    /// file, which is now `after`.
    fn push_written(&mut self, mut row: Row, written: &[u8], after: SessionFileSnapshot) {
        let before = self.snapshot.size;
        row.pos = usize::try_from(before).ok().map(|o| (self.lines + 1, o));
        let i = self.rows.len();
        self.rows.push(row);
        self.ix.extend(&self.rows, i);
        if !self.disk.appended(before, written) {
            self.disk = DiskImage::Unknown;
        }
        self.report.bytes = self.report.bytes.saturating_add(written.len());
        self.report.missing_final_newline = false;
        self.lines += 1;
        self.ends_with_newline = true;
        self.last_row_untrimmed = true;
        self.push_probe(written);
        self.snapshot = after;
    }
}

/// The last row's JSON text reaches the end of its line (no end trim was needed to read it).
fn untrimmed(row: &Row) -> bool {
    match &row.text {
        rows::Text::Span { start, end } => row.json.1 == end - start,
        rows::Text::Owned(b) => row.json.1 == b.len(),
    }
}

struct Cache {
    entries: IndexMap<PathBuf, Warm>,
    limits: CacheLimits,
    bytes: u64,
}

static CACHE: LazyLock<Mutex<Cache>> = LazyLock::new(|| {
    Mutex::new(Cache {
        entries: IndexMap::new(),
        limits: CacheLimits::default(),
        bytes: 0,
    })
});

fn cache() -> MutexGuard<'static, Cache> {
    CACHE.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Cache {
    /// The entry (a cheap copy sharing its parts), marked most recently used.
    fn get(&mut self, key: &Path) -> Option<Warm> {
        let i = self.entries.get_index_of(key)?;
        let last = self.entries.len() - 1;
        self.entries.move_index(i, last);
        self.entries.get_index(last).map(|(_, w)| w.clone())
    }

    fn remove(&mut self, key: &Path) -> Option<Warm> {
        let w = self.entries.shift_remove(key)?;
        self.bytes = self.bytes.saturating_sub(w.snapshot.size);
        Some(w)
    }

    fn put(&mut self, key: PathBuf, warm: Warm) {
        self.remove(&key);
        if warm.snapshot.size > self.limits.max_bytes || self.limits.max_files == 0 {
            return;
        }
        self.bytes += warm.snapshot.size;
        self.entries.insert(key, warm);
        self.evict();
    }

    fn evict(&mut self) {
        while self.entries.len() > self.limits.max_files || self.bytes > self.limits.max_bytes {
            let Some((_, w)) = self.entries.shift_remove_index(0) else {
                break;
            };
            self.bytes = self.bytes.saturating_sub(w.snapshot.size);
        }
    }
}

/// Sets the cache's bounds (evicting at once what no longer fits). Process-wide.
pub fn set_limits(limits: CacheLimits) {
    let mut c = cache();
    c.limits = limits;
    c.evict();
    let over: Vec<PathBuf> = c
        .entries
        .iter()
        .filter(|(_, w)| w.snapshot.size > limits.max_bytes)
        .map(|(k, _)| k.clone())
        .collect();
    for k in over {
        c.remove(&k);
    }
}

/// The cache's bounds.
pub fn limits() -> CacheLimits {
    cache().limits
}

/// Drops every entry.
pub fn clear() {
    let mut c = cache();
    c.entries.clear();
    c.bytes = 0;
}

/// What the cache holds.
pub fn stats() -> CacheStats {
    let c = cache();
    CacheStats {
        files: c.entries.len(),
        bytes: c.bytes,
    }
}

/// True when the cache holds `path` exactly as it is now (a load would parse nothing).
pub fn is_warm(path: &Path) -> bool {
    let Some(key) = snapshot::canonical(&crate::paths::resolve(path)) else {
        return false;
    };
    let Ok(Some(now)) = SessionFileSnapshot::stat(&key) else {
        return false;
    };
    cache().entries.get(&key).is_some_and(|w| w.snapshot == now)
}

/// Drops the entry of `path`, if any.
pub fn invalidate(path: &Path) {
    if let Some(key) = snapshot::canonical(&crate::paths::resolve(path)) {
        cache().remove(&key);
    }
}

pub(crate) fn invalidate_key(key: Option<&Path>) {
    if let Some(k) = key {
        cache().remove(k);
    }
}

/// Records a state this process just loaded (a no-op when it is not cacheable).
pub(crate) fn store(key: Option<&Path>, warm: Option<Warm>) {
    match (key, warm) {
        (Some(k), Some(w)) => cache().put(k.to_path_buf(), w),
        (Some(k), None) => {
            cache().remove(k);
        }
        _ => {}
    }
}

/// A verified append (the caller checked that the file grew by exactly `written`, no
/// separator, from `before` to `after` on the same file): advances the entry when it holds
/// `before`, drops it when the file is now over the byte cap. Returns true when advanced.
pub(crate) fn advance(
    key: Option<&Path>,
    before: &SessionFileSnapshot,
    after: SessionFileSnapshot,
    row: &Row,
    written: &[u8],
) -> bool {
    let Some(key) = key else {
        return false;
    };
    let mut c = cache();
    let Some(w) = c.entries.get(key) else {
        return false;
    };
    if w.snapshot != *before {
        return false;
    }
    // A line after the last one changes how that one reads when it was only readable as the
    // file's last line (end trim); and a file over the cap is not cached.
    if after.size > c.limits.max_bytes || !w.ends_with_newline || !w.last_row_untrimmed {
        c.remove(key);
        return false;
    }
    // Taken out, so the rows and index are advanced in place when no manager shares them.
    let Some(mut w) = c.remove(key) else {
        return false;
    };
    w.push_written(row.clone(), written, after);
    c.put(key.to_path_buf(), w);
    true
}

/// How a load found the file.
#[derive(Debug)]
pub(crate) enum Fetched {
    /// Nothing at the path.
    Missing,
    /// A cached state: unchanged (`scanned` 0) or extended by the lines another writer appended
    /// (`scanned` of them read).
    Warm { state: Box<Warm>, scanned: usize },
    /// The bytes, read between two equal `stat`s.
    Cold {
        buf: Vec<u8>,
        snapshot: SessionFileSnapshot,
    },
}

/// A load and the cache key of the file.
#[derive(Debug)]
pub(crate) struct Fetch {
    pub(crate) key: Option<PathBuf>,
    pub(crate) fetched: Fetched,
}

fn read_error(path: &Path, source: io::Error) -> OpenError {
    OpenError::Read {
        path: path.to_path_buf(),
        source,
    }
}

/// The warm cache key of `abs` in `storage`: its canonical path for the file store, `None`
/// (never cached) for any other storage.
pub(crate) fn key_in(storage: &dyn Storage, abs: &Path) -> Option<PathBuf> {
    storage
        .as_file_storage()
        .and_then(|_| snapshot::canonical(abs))
}

/// Loads `abs` from `storage` with stat-read-stat, up to [`LOAD_ATTEMPTS`] times
/// (openclaw-jsonl.md §3.1): a cached state whose snapshot equals the file's is returned after
/// a second equal `stat`; a cached state the file only grew past is extended by the new lines;
/// otherwise the whole file is read, and kept when the `stat`s before and after the read are
/// equal. Only the file store is cached ([`key_in`]); any other storage is loaded with
/// [`Storage::read_snapshot`] instead (one consistent read where the backend has one).
///
/// # Errors
/// [`OpenError::ChangedWhileLoading`] after [`LOAD_ATTEMPTS`] unstable reads;
/// [`OpenError::Read`].
pub(crate) fn fetch(storage: &dyn Storage, abs: &Path) -> Result<Fetch, OpenError> {
    if storage.as_file_storage().is_none() {
        return fetch_snapshot(storage, abs);
    }
    let key = key_in(storage, abs);
    for attempt in 0..LOAD_ATTEMPTS {
        let Some(before) = storage.stat(abs).map_err(|e| read_error(abs, e))? else {
            return Ok(Fetch {
                key: None,
                fetched: Fetched::Missing,
            });
        };
        let cached = key.as_deref().and_then(|k| cache().get(k));
        if let Some(w) = cached {
            if w.snapshot == before {
                let after = storage.stat(abs).map_err(|e| read_error(abs, e))?;
                if after == Some(before) {
                    return Ok(Fetch {
                        key,
                        fetched: Fetched::Warm {
                            state: Box::new(w),
                            scanned: 0,
                        },
                    });
                }
                continue;
            }
            if w.is_tail_base_for(&before) {
                match extend_from(storage, abs, key.as_deref(), w, before, attempt)? {
                    Tail::Extended(w, scanned) => {
                        return Ok(Fetch {
                            key,
                            fetched: Fetched::Warm { state: w, scanned },
                        });
                    }
                    Tail::Changed => continue,
                    // Rewritten, not appended to: read in full.
                    Tail::NotAnAppend => {}
                }
            }
        }
        let buf = match storage.read_all(abs) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(read_error(abs, e)),
        };
        hooks::after_read(abs, attempt);
        let after = storage.stat(abs).map_err(|e| read_error(abs, e))?;
        if after == Some(before) && buf.len() as u64 == before.size {
            return Ok(Fetch {
                key,
                fetched: Fetched::Cold {
                    buf,
                    snapshot: before,
                },
            });
        }
    }
    Err(OpenError::ChangedWhileLoading {
        path: abs.to_path_buf(),
    })
}

/// [`fetch`] on a storage other than the file store (never cached): up to [`LOAD_ATTEMPTS`]
/// [`Storage::read_snapshot`]s, so a backend that reads the bytes and their snapshot in one
/// step (Redis, [`crate::storage::MemStorage`]) loads at the first attempt however busy other
/// writers are. The test hook ([`hooks`]) runs after each read that found a session.
fn fetch_snapshot(storage: &dyn Storage, abs: &Path) -> Result<Fetch, OpenError> {
    for attempt in 0..LOAD_ATTEMPTS {
        let read = storage.read_snapshot(abs).map_err(|e| read_error(abs, e))?;
        if !matches!(read, SnapshotRead::Missing) {
            hooks::after_read(abs, attempt);
        }
        match read {
            SnapshotRead::Missing => {
                return Ok(Fetch {
                    key: None,
                    fetched: Fetched::Missing,
                });
            }
            SnapshotRead::Read { bytes, snapshot } => {
                return Ok(Fetch {
                    key: None,
                    fetched: Fetched::Cold {
                        buf: bytes,
                        snapshot,
                    },
                });
            }
            SnapshotRead::Changed => {}
        }
    }
    Err(OpenError::ChangedWhileLoading {
        path: abs.to_path_buf(),
    })
}

/// What a tail reindex found.
enum Tail {
    /// The state extended by the new lines, and how many were scanned.
    Extended(Box<Warm>, usize),
    /// The file does not hold the cached bytes any more.
    NotAnAppend,
    /// The file changed while its new bytes were read.
    Changed,
}

/// A tail reindex of `abs` (now `before`) from the cached state `w`.
fn extend_from(
    storage: &dyn Storage,
    abs: &Path,
    key: Option<&Path>,
    w: Warm,
    before: SessionFileSnapshot,
    attempt: u32,
) -> Result<Tail, OpenError> {
    let Some(tail) = read_tail(storage, abs, &w, before.size).map_err(|e| read_error(abs, e))?
    else {
        return Ok(Tail::NotAnAppend);
    };
    hooks::after_read(abs, attempt);
    let after = storage.stat(abs).map_err(|e| read_error(abs, e))?;
    if after != Some(before) {
        return Ok(Tail::Changed);
    }
    if let Some(k) = key {
        // Dropped first, so the rows and index are extended in place when no manager shares
        // them.
        cache().remove(k);
    }
    let (w, scanned) = w.extended(&tail, before);
    store(key, Some(w.clone()));
    Ok(Tail::Extended(Box::new(w), scanned))
}

/// The bytes after the cached state's end, when the file still holds the cached first and
/// last 4 KiB; `None` when it does not (or it shrank meanwhile).
fn read_tail(
    storage: &dyn Storage,
    abs: &Path,
    w: &Warm,
    size: u64,
) -> io::Result<Option<Vec<u8>>> {
    let old = w.snapshot.size;
    let mut head = vec![0u8; w.head.len()];
    let mut probe = vec![0u8; w.probe.len()];
    let Ok(tail_len) = usize::try_from(size - old) else {
        return Ok(None);
    };
    let mut tail = vec![0u8; tail_len];
    let read = storage.read_ranges(
        abs,
        &mut [
            (0, &mut head),
            (old - w.probe.len() as u64, &mut probe),
            (old, &mut tail),
        ],
    );
    match read {
        Ok(()) if *head == *w.head && probe == w.probe => Ok(Some(tail)),
        Ok(()) => Ok(None),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
        Err(e) => Err(e),
    }
}

/// What re-reading a file after a write found, with the state a manager can adopt.
#[derive(Debug)]
pub(crate) struct Reread {
    pub(crate) sync: SnapshotSync,
    /// The cacheable state of the bytes read (now cached), when the read was stable.
    pub(crate) state: Option<Box<Warm>>,
    /// The bytes read, when the read was stable but the state is not cacheable.
    pub(crate) bytes: Option<Vec<u8>>,
    /// Lines the envelope scan read.
    pub(crate) scanned: usize,
}

/// `rememberWrittenSessionEntries` (openclaw-jsonl.md §3.3) for `abs` in `storage`: stat, read,
/// stat. A file over the byte cap is not read (the entry is dropped: `{snapshot, false,
/// false}`); a read between unequal stats, or bytes other than `expected`, drop the entry
/// (`{after, false, false}`); otherwise the bytes are parsed and cached when cacheable (file
/// store only), and the write is verified when `expected` was given.
pub(crate) fn reread(
    storage: &dyn Storage,
    abs: &Path,
    expected: Option<&[u8]>,
) -> io::Result<Reread> {
    let key = key_in(storage, abs);
    let unverified = |snapshot, key: Option<&Path>| {
        invalidate_key(key);
        Reread {
            sync: SnapshotSync {
                snapshot,
                verified_write: false,
                stable_read: false,
            },
            state: None,
            bytes: None,
            scanned: 0,
        }
    };
    let Some(before) = storage.stat(abs)? else {
        return Ok(unverified(None, key.as_deref()));
    };
    if before.size > limits().max_bytes {
        return Ok(unverified(Some(before), key.as_deref()));
    }
    let buf = match storage.read_all(abs) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(unverified(None, key.as_deref()));
        }
        Err(e) => return Err(e),
    };
    hooks::after_read(abs, 0);
    let after = storage.stat(abs)?;
    if after != Some(before)
        || buf.len() as u64 != before.size
        || expected.is_some_and(|e| e != buf.as_slice())
    {
        return Ok(unverified(after, key.as_deref()));
    }
    let sync = SnapshotSync {
        snapshot: Some(before),
        verified_write: expected.is_some(),
        stable_read: true,
    };
    let path = key.clone().unwrap_or_else(|| abs.to_path_buf());
    let copy = buf.clone();
    let (warm, scanned) = Warm::load(before, &path, buf);
    store(key.as_deref(), warm.clone());
    let bytes = warm.is_none().then_some(copy);
    Ok(Reread {
        sync,
        state: warm.map(Box::new),
        bytes,
        scanned,
    })
}

/// `rememberWrittenSessionEntries(path, expectedContent?)` for writers other than a
/// [`crate::SessionManager`] (a repair, a header rewrite): re-reads `path` after the caller
/// wrote it and re-caches it when the read is stable (and the bytes are `expected`, when
/// given). See [`SnapshotSync`].
///
/// # Errors
/// Any I/O failure other than "not found".
pub fn remember_written_entries(path: &Path, expected: Option<&[u8]>) -> io::Result<SnapshotSync> {
    reread(
        &crate::storage::FileStorage::new(),
        &crate::paths::resolve(path),
        expected,
    )
    .map(|r| r.sync)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_copies_on_first_write_only() {
        let mut a: Shared<Vec<u8>> = vec![1, 2].into();
        let b = a.clone();
        assert!(a.ptr_eq(&b));
        a.push(3);
        assert!(!a.ptr_eq(&b));
        assert_eq!(*b, [1, 2]);
        assert_eq!(*a, [1, 2, 3]);
        let c = a.clone();
        drop(c);
        let before = Arc::as_ptr(&a.0);
        a.push(4);
        assert_eq!(Arc::as_ptr(&a.0), before, "unshared: changed in place");
    }

    #[test]
    fn probe_keeps_the_last_4_kib() {
        let snapshot = SessionFileSnapshot {
            dev: 1,
            ino: 1,
            size: 0,
            mtime_ns: 0,
            ctime_ns: 0,
            birth_ns: None,
        };
        let text =
            "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"t\",\"cwd\":\"/\"}\n";
        let (w, scanned) = Warm::load(
            SessionFileSnapshot {
                size: text.len() as u64,
                ..snapshot
            },
            Path::new("/x"),
            text.as_bytes().to_vec(),
        );
        assert_eq!(scanned, 1);
        let mut w = w.unwrap();
        w.push_probe(&[b'a'; 5000]);
        assert_eq!(w.probe, [b'a'; PROBE_BYTES]);
        w.push_probe(b"xyz");
        assert_eq!(w.probe.len(), PROBE_BYTES);
        assert!(w.probe.ends_with(b"aaxyz"));
    }
}
