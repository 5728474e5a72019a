//! The caches a file store keeps ([`FileCaches`], owned by each [`crate::FileStorage`]; the
//! process-wide [`crate::FileStorage::shared`] holds the ones the default managers use): the
//! warm cache of parsed session files (openclaw-jsonl.md §3.1–§3.3) and the incremental repair
//! cache ([`RepairCache`], [`crate::repair`]), plus the one loader that turns a file's bytes into
//! rows, index, header and report and extends a cached state by the lines another
//! writer appended. The stat-read-stat loads through a storage are `manager/load.rs`.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use std::collections::HashSet;

use indexmap::IndexMap;
use session_format::json::JsString;

use crate::disk::DiskImage;
use crate::index::{Builder, Index};
use crate::inspect::OpenReport;
use crate::rows::{self, Row};
use crate::snapshot::{self, RepairSnapshot, SessionFileSnapshot};

/// Files the cache holds by default (the reference's limit).
pub(crate) const DEFAULT_MAX_FILES: usize = 8;

/// Total file bytes the cache holds by default, and the size over which a file is never cached
/// (the reference's limit: 32 MiB).
pub(crate) const DEFAULT_MAX_BYTES: u64 = 32 * 1024 * 1024;

/// Attempts of a stat-read-stat load before it gives up.
pub(crate) const LOAD_ATTEMPTS: u32 = 3;

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
    pub(crate) probe: Vec<u8>,
}

/// A file's bytes as a fresh load reads them: the rows, the navigation index over them, the
/// header and its `id` and `cwd`, and the file-level report. The one loader of the writable,
/// read-only and re-reading opens and of the warm cache ([`Warm::load`]); the bytes another
/// writer appended to a cached file go through the same row reader and report rules in
/// [`Warm::extended`] ([`OpenReport::note_tail`]).
#[derive(Debug)]
pub(crate) struct Parsed {
    /// Every non-blank line as a row.
    pub(crate) rows: Vec<Row>,
    /// The index of `rows` as they were read.
    pub(crate) ix: Index,
    /// The header row, when the first parsed row is a readable header.
    pub(crate) header: Option<usize>,
    /// The file is empty or JavaScript whitespace only.
    pub(crate) blank: bool,
    /// Lines the envelope scan read.
    pub(crate) scanned: usize,
    /// The header's `id` (empty when it is not a string).
    pub(crate) session_id: String,
    /// The header's `cwd`, exactly, when it is a string.
    pub(crate) header_cwd: Option<JsString>,
    /// The file-level findings ([`crate::inspect::file_report`]).
    pub(crate) report: OpenReport,
}

impl Parsed {
    /// Reads `buf`, the bytes of the session at `path`.
    pub(crate) fn of(path: &Path, buf: &[u8]) -> Parsed {
        // The first part of a large file is replayed while the second is still being read.
        let mut first: Option<Builder> = None;
        let loaded = rows::load_with(buf, |rows, bytes| {
            let entries = rows.iter().filter(|r| r.kind.entry().is_some()).count();
            // As many entries per byte in the rest of the file.
            let expected = entries.saturating_mul(buf.len()) / bytes.max(1) + 16;
            let mut b = Builder::new(expected);
            b.feed(rows);
            first = Some(b);
        });
        let report = crate::inspect::file_report(path, buf, &loaded);
        let (session_id, header_cwd) = match loaded.header {
            Some(h) => (
                rows::header_string(&loaded.rows[h], buf, "id").unwrap_or_default(),
                rows::header_js_string(&loaded.rows[h], buf, "cwd"),
            ),
            None => (String::new(), None),
        };
        let ix = match first {
            Some(b) => b.finish(&loaded.rows),
            None => Index::build(&loaded.rows),
        };
        Parsed {
            rows: loaded.rows,
            ix,
            header: loaded.header,
            blank: loaded.blank,
            scanned: loaded.scanned,
            session_id,
            header_cwd,
            report,
        }
    }
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
        let lines = match p.rows.last().and_then(Row::pos) {
            Some((line, offset)) => {
                line - 1 + memchr::memchr_iter(b'\n', buf.get(offset..).unwrap_or(&[])).count()
            }
            None => memchr::memchr_iter(b'\n', buf).count(),
        };
        let last_row_untrimmed = p.rows.last().is_some_and(Row::untrimmed);
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
    pub(crate) fn load(
        snapshot: SessionFileSnapshot,
        path: &Path,
        buf: Vec<u8>,
    ) -> (Option<Warm>, usize) {
        let p = Parsed::of(path, &buf);
        let scanned = p.scanned;
        if p.header.is_none() {
            return (None, scanned);
        }
        let warm = Warm::from_parts(Pristine {
            snapshot,
            buf: Arc::new(buf),
            rows: p.rows.into(),
            ix: p.ix.into(),
            header: p.header,
            session_id: p.session_id,
            header_cwd: p.header_cwd,
            report: p.report,
        });
        (warm, scanned)
    }

    /// Can the file, now `now`, be read as this state plus its new bytes?
    pub(crate) fn is_tail_base_for(&self, now: &SessionFileSnapshot) -> bool {
        now.same_file(&self.snapshot)
            && now.size > self.snapshot.size
            && self.ends_with_newline
            && self.last_row_untrimmed
    }

    /// This state extended by `tail`, the bytes the file gained (its snapshot now `now`).
    /// Returns it and the number of lines scanned.
    pub(crate) fn extended(mut self, tail: &[u8], now: SessionFileSnapshot) -> (Warm, usize) {
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
        self.report.note_tail(&self.rows[from..], tail);
        self.lines += memchr::memchr_iter(b'\n', tail).count();
        self.ends_with_newline = tail.last() == Some(&b'\n');
        self.last_row_untrimmed = self.rows.last().is_some_and(Row::untrimmed);
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
        row.set_pos(usize::try_from(before).ok().map(|o| (self.lines + 1, o)));
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

struct Cache {
    entries: IndexMap<PathBuf, Warm>,
    limits: CacheLimits,
    bytes: u64,
}

impl Default for Cache {
    fn default() -> Self {
        Cache {
            entries: IndexMap::new(),
            limits: CacheLimits::default(),
            bytes: 0,
        }
    }
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

/// The warm cache of one file store ([`crate::FileStorage::warm_cache`]): parsed session files
/// keyed by canonical path, least recently used evicted first (invariants below). The
/// process-wide file store ([`crate::FileStorage::shared`]) holds the one every default
/// manager uses.
///
/// Each entry holds, per canonical file ([`crate::identity::FileIdentity`]: every name of one
/// file, through a symlinked directory or a symlink to it, shares the entry), the file's
/// [`SessionFileSnapshot`], its bytes and the parsed rows and navigation index, all shared
/// (`Arc`) with the managers opened from it. A manager never changes what it shares: its first
/// change copies the rows or the index (copy-on-write), so the cache and every other manager
/// keep what they had.
///
/// Invariants:
/// - an entry equals a fresh load of the file as its snapshot describes it (rows, positions,
///   index, diagnostics); a load whose snapshot equals the entry's parses nothing;
/// - only files whose first line is a readable header with version 3 or 4 are cached (files a
///   writable open migrates or recovers are not); a file over the byte cap is never cached;
/// - the cache holds at most [`CacheLimits::max_files`] files and
///   [`CacheLimits::max_bytes`] bytes of files (sum of sizes); the least recently used entry
///   is evicted first;
/// - an entry advances past an append only when the append is verified (the appending
///   manager's snapshot and the entry's both equal the `fstat` before the write, and the file
///   after it is the same file, exactly that many bytes longer); any other change to a file
///   makes its entry stale: never returned as it is, only used as the base of a tail reindex;
/// - a tail reindex happens only when the file is the same file (dev/ino), longer than the
///   entry's snapshot, and both its first and its last 4 KiB before the old end are still the
///   entry's bytes; the new lines are read exactly as a full load would read them.
#[derive(Debug, Default)]
pub struct WarmCache {
    inner: Mutex<Cache>,
}

impl fmt::Debug for Cache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cache")
            .field("files", &self.entries.len())
            .field("bytes", &self.bytes)
            .field("limits", &self.limits)
            .finish()
    }
}

impl WarmCache {
    fn lock(&self) -> MutexGuard<'_, Cache> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sets the cache's bounds (evicting at once what no longer fits). For tests and
    /// benchmarks (feature `test-util`): the defaults are the reference's.
    #[cfg(any(test, feature = "test-util"))]
    #[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
    pub fn set_limits(&self, limits: CacheLimits) {
        let mut c = self.lock();
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
    pub fn limits(&self) -> CacheLimits {
        self.lock().limits
    }

    /// Drops every entry.
    pub fn clear(&self) {
        let mut c = self.lock();
        c.entries.clear();
        c.bytes = 0;
    }

    /// What the cache holds.
    pub fn stats(&self) -> CacheStats {
        let c = self.lock();
        CacheStats {
            files: c.entries.len(),
            bytes: c.bytes,
        }
    }

    /// True when the cache holds `path` (a local file path, resolved and canonicalised)
    /// exactly as it is now (a load would parse nothing).
    pub fn is_warm(&self, path: &Path) -> bool {
        let Some(key) = snapshot::canonical(&crate::paths::resolve(path)) else {
            return false;
        };
        let Ok(Some(now)) = SessionFileSnapshot::stat(&key) else {
            return false;
        };
        self.lock()
            .entries
            .get(&key)
            .is_some_and(|w| w.snapshot == now)
    }

    /// Drops the entry of `path` (a local file path, resolved and canonicalised), if any.
    pub fn invalidate(&self, path: &Path) {
        if let Some(key) = snapshot::canonical(&crate::paths::resolve(path)) {
            self.lock().remove(&key);
        }
    }

    /// The entry under `key` (marked most recently used).
    pub(crate) fn get(&self, key: &Path) -> Option<Warm> {
        self.lock().get(key)
    }

    /// Drops the entry under `key`, returning it.
    pub(crate) fn take(&self, key: &Path) -> Option<Warm> {
        self.lock().remove(key)
    }

    /// Drops the entry under `key` (none: nothing).
    pub(crate) fn invalidate_key(&self, key: Option<&Path>) {
        if let Some(k) = key {
            self.lock().remove(k);
        }
    }

    /// Records a state this process just loaded (a no-op when it is not cacheable: the entry
    /// is dropped).
    pub(crate) fn store(&self, key: Option<&Path>, warm: Option<Warm>) {
        match (key, warm) {
            (Some(k), Some(w)) => self.lock().put(k.to_path_buf(), w),
            (Some(k), None) => {
                self.lock().remove(k);
            }
            _ => {}
        }
    }

    /// A verified append (the caller checked that the file grew by exactly `written`, no
    /// separator, from `before` to `after` on the same file): advances the entry when it
    /// holds `before`, drops it when the file is now over the byte cap. Returns true when
    /// advanced.
    pub(crate) fn advance(
        &self,
        key: Option<&Path>,
        before: &SessionFileSnapshot,
        after: SessionFileSnapshot,
        row: &Row,
        written: &[u8],
    ) -> bool {
        let Some(key) = key else {
            return false;
        };
        let mut c = self.lock();
        let Some(w) = c.entries.get(key) else {
            return false;
        };
        if w.snapshot != *before {
            return false;
        }
        // A line after the last one changes how that one reads when it was only readable as
        // the file's last line (end trim); and a file over the cap is not cached.
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
}

// ----------------------------------------------------------------------------------------
// The incremental repair cache

/// Files the incremental repair cache remembers (least recently repaired evicted first).
pub(crate) const MAX_CACHED_SESSION_REPAIRS: usize = 8;
/// Most tool-result ids a repair cache entry holds; a file with more is not cached.
pub(crate) const MAX_CACHED_REPAIR_TOOL_RESULT_IDS: usize = 4096;
/// Most UTF-8 bytes of tool-result ids a repair cache entry holds; a file with more is not
/// cached.
pub(crate) const MAX_CACHED_REPAIR_TOOL_RESULT_ID_BYTES: usize = 512 * 1024;

/// What the incremental repair remembers of a file it found clean ([`crate::repair`]).
#[derive(Clone, Debug)]
pub(crate) struct CachedRepair {
    pub(crate) snapshot: RepairSnapshot,
    pub(crate) tool_result_ids: HashSet<JsString>,
    pub(crate) ends_with_newline: bool,
    /// The last message row is a Responses assistant with an unanswered `message` tool call.
    pub(crate) pending_responses_tail: bool,
}

/// The incremental repair cache of one file store ([`crate::FileStorage::repair_cache`]): at
/// most 8 canonical files (`MAX_CACHED_SESSION_REPAIRS`), least recently remembered first.
#[derive(Debug, Default)]
pub struct RepairCache {
    entries: Mutex<Vec<(PathBuf, CachedRepair)>>,
}

impl RepairCache {
    fn with<T>(&self, f: impl FnOnce(&mut Vec<(PathBuf, CachedRepair)>) -> T) -> T {
        let mut guard = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut guard)
    }

    /// What is remembered of `file` (a canonical path).
    pub(crate) fn get(&self, file: &Path) -> Option<CachedRepair> {
        self.with(|c| c.iter().find(|(p, _)| p == file).map(|(_, v)| v.clone()))
    }

    /// True when `file` (a canonical path) is remembered.
    pub fn contains(&self, file: &Path) -> bool {
        self.with(|c| c.iter().any(|(p, _)| p == file))
    }

    /// Forgets `file` (a canonical path).
    pub fn forget(&self, file: &Path) {
        self.with(|c| c.retain(|(p, _)| p != file));
    }

    /// Remembers `state` for `file` (a canonical path), unless it holds too many ids.
    pub(crate) fn remember(&self, file: &Path, state: CachedRepair) {
        let too_big = state.tool_result_ids.len() > MAX_CACHED_REPAIR_TOOL_RESULT_IDS
            || state
                .tool_result_ids
                .iter()
                .map(|id| id.as_wtf8().len())
                .sum::<usize>()
                > MAX_CACHED_REPAIR_TOOL_RESULT_ID_BYTES;
        self.with(|c| {
            c.retain(|(p, _)| p != file);
            if too_big {
                return;
            }
            c.push((file.to_path_buf(), state));
            while c.len() > MAX_CACHED_SESSION_REPAIRS {
                c.remove(0);
            }
        });
    }
}

/// The caches a local file store keeps ([`crate::Storage::caches`]): the warm cache of parsed
/// files and the incremental repair cache, both keyed by canonical file path and trusting
/// file-system snapshots.
#[derive(Debug, Default)]
pub struct FileCaches {
    /// Parsed session files ([`WarmCache`]).
    pub warm: WarmCache,
    /// Files the incremental repair found clean ([`RepairCache`]).
    pub repair: RepairCache,
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
