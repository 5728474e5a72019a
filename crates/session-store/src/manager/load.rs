//! The loads of [`SessionManager`] through its storage (openclaw-jsonl.md §3.1–§3.3):
//! stat-read-stat through the storage's warm cache ([`Storage::caches`], file store only) or one
//! consistent [`Storage::read_snapshot`] elsewhere, the tail reindex of a cached file another
//! writer appended to, and the re-read after a write (`rememberWrittenSessionEntries`). The
//! parsing itself is [`Warm::load`] and [`Warm::extended`] ([`crate::cache`]).

use std::io;
use std::path::{Path, PathBuf};

use crate::cache::{CacheLimits, LOAD_ATTEMPTS, Warm, WarmCache};
use crate::error::OpenError;
use crate::rows::Row;
use crate::snapshot::{self, SessionFileSnapshot, SnapshotSync, hooks};
use crate::storage::{FileStorage, SnapshotRead, Storage};

/// The warm cache of `storage`, when it keeps one.
pub(crate) fn warm(storage: &dyn Storage) -> Option<&WarmCache> {
    storage.caches().map(|c| &c.warm)
}

/// The warm cache bounds in effect for `storage` (the defaults when it keeps no cache).
pub(crate) fn limits(storage: &dyn Storage) -> CacheLimits {
    warm(storage).map_or_else(CacheLimits::default, WarmCache::limits)
}

/// Drops the entry under `key` from the warm cache of `storage`.
pub(crate) fn invalidate_key(storage: &dyn Storage, key: Option<&Path>) {
    if let Some(w) = warm(storage) {
        w.invalidate_key(key);
    }
}

/// Records a loaded state in the warm cache of `storage` ([`WarmCache::store`]).
pub(crate) fn store(storage: &dyn Storage, key: Option<&Path>, state: Option<Warm>) {
    if let Some(w) = warm(storage) {
        w.store(key, state);
    }
}

/// Advances the warm cache entry of `storage` past a verified append ([`WarmCache::advance`]).
pub(crate) fn advance(
    storage: &dyn Storage,
    key: Option<&Path>,
    before: &SessionFileSnapshot,
    after: SessionFileSnapshot,
    row: &Row,
    written: &[u8],
) -> bool {
    warm(storage).is_some_and(|w| w.advance(key, before, after, row, written))
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

/// The warm cache key of `abs` in `storage`: its canonical path when the storage keeps a warm
/// cache (the file store), `None` (never cached) for any other storage.
pub(crate) fn key_in(storage: &dyn Storage, abs: &Path) -> Option<PathBuf> {
    warm(storage).and_then(|_| snapshot::canonical(abs))
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
    let Some(cache) = warm(storage) else {
        return fetch_snapshot(storage, abs);
    };
    let key = key_in(storage, abs);
    for attempt in 0..LOAD_ATTEMPTS {
        let Some(before) = storage.stat(abs).map_err(|e| read_error(abs, e))? else {
            return Ok(Fetch {
                key: None,
                fetched: Fetched::Missing,
            });
        };
        let cached = key.as_deref().and_then(|k| cache.get(k));
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
                match extend_from(storage, cache, abs, key.as_deref(), w, before, attempt)? {
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
/// step (Redis, [`crate::MemStorage`]) loads at the first attempt however busy other
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
    cache: &WarmCache,
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
        cache.take(k);
    }
    let (w, scanned) = w.extended(&tail, before);
    cache.store(key, Some(w.clone()));
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
        invalidate_key(storage, key);
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
    if before.size > limits(storage).max_bytes {
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
    store(storage, key.as_deref(), warm.clone());
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
        FileStorage::process_wide(),
        &crate::paths::resolve(path),
        expected,
    )
    .map(|r| r.sync)
}
