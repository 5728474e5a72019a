//! `SessionManager`: factories, appends, branching and persistence, as OpenClaw 2026.6.11 does
//! them (openclaw-jsonl.md §2.1, §2.4, §2.6, §2.9, §2.10, §2.12; FINDINGS k), with the
//! workspace's fixes (docs/DEVIATIONS.md).
//!
//! Invariants:
//! - lines read from disk keep their exact bytes on every rewrite; only rows whose content
//!   changes (migration, re-parenting, recovery's new header) are serialised afresh;
//! - nothing is written for a new session until the first assistant message exists, then one
//!   full write; later appends write one line each;
//! - no full rewrite overwrites bytes this manager did not read or write: lines another writer
//!   appended are adopted, any other change is first backed up byte for byte
//!   (docs/DEVIATIONS.md D11);
//! - ids are kept exactly (WTF-8), so every id the store writes back (`parentId`, label
//!   `targetId`, leaf-control targets, re-parented rows) is the id the file holds, lone
//!   surrogates included; `&str` views of ids are lossy, the `*_js` methods exact;
//! - paths are resolved lexically, as Node's `path.resolve` does, wherever the reference does;
//! - every read and write of the session's bytes, and the write lock, go through the manager's
//!   [`Storage`] (default [`FileStorage`], which writes through [`crate::io`]: atomic rewrites,
//!   `O_APPEND` appends); factories with an `_in` suffix take the storage
//!   ([`SessionManager::open_in`], [`SessionManager::create_in`], …);
//! - a failed append leaves the in-memory state as it was; a plain append writes its line
//!   before the row joins the state, and never to a file other than the one this manager read
//!   or last wrote (same device and inode), nor to a missing one;
//! - loads go through the warm cache ([`crate::cache`]) when the storage is the file store: the
//!   rows, index and bytes a manager adopts from it are shared and copied on the manager's
//!   first change, so managers never see each other's changes; the cache advances only past
//!   verified appends (other storages load with stat-read-stat every time);
//! - a plain append first adopts what another writer appended since this manager last read or
//!   wrote the file, then fast-forwards onto it or refuses with [`AppendError::Diverged`]
//!   ([`crate::foreign`], docs/DEVIATIONS.md D30);
//! - with a write lock set ([`SessionManager::set_write_lock`], opt-in), every write runs inside
//!   the file's cross-process session write lock (the check before a plain append included, so
//!   no other writer can come in between);
//! - on the file store, every full rewrite, and every append that is not verified, drops the
//!   file from the incremental repair cache ([`crate::repair::invalidate_repair_cache`]);
//! - the store root of a manager on the file store is its session file's directory
//!   ([`crate::identity`]): a session file whose name is a symlink may be read wherever it
//!   leads, but every write through it (append, full rewrite, backup, the write lock) is
//!   refused with an `OutsideStore` error ([`AppendError::OutsideStore`],
//!   [`RemoveError::OutsideStore`], [`BranchError::OutsideStore`], [`OpenError::OutsideStore`])
//!   naming the link, its target and the root when the target lies outside that directory;
//!   every name of one file (a symlink to it inside the directory, a symlinked directory) takes
//!   the same lock and shares its warm cache entry.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use session_format::build::{self, RowBase};
use session_format::entry::EntryType;
use session_format::ids::{
    corrupt_backup_name, new_entry_id, new_session_id, now_timestamp, session_file_name,
};
use session_format::json::{
    EnvelopeScanner, Field, JsObject, JsString, JsValue, SerdeError, to_value,
};
use session_format::message::Message;

use crate::cache::{self, Fetched, Pristine, Shared, Warm};
use crate::deep::clone_value;
use crate::disk::{DiskImage, Verdict};
use crate::error::{
    AppendError, BranchError, ForkError, OpenError, ReadError, RemoveError, RowLocation,
};
use crate::foreign::ForeignAppendPolicy;
use crate::id::{self as ids, Id};
use crate::index::{Index, Map, Set};
use crate::inspect::OpenReport;
use crate::io::{self, Durability};
use crate::lock::{LockError, LockOptions};
use crate::names::{self, InvalidName, NameKind};
use crate::paths;
use crate::rows::{self, EntryMeta, MsgShape, Parent, Row, RowKind};
use crate::snapshot::{self, SessionFileSnapshot, SnapshotSync, WriteOwner};
use crate::storage::{self, FileStorage, Storage};

/// A payload the caller hands to an append (`message`, `data`, `details`, `content`): anything
/// that becomes a JSON value. The value is written in its own key order (JavaScript property
/// order), as the reference stringifies whatever object it is given.
pub trait Payload {
    /// The JSON value.
    ///
    /// # Errors
    /// A typed value that serde cannot express as JSON.
    fn into_value(self) -> Result<JsValue, SerdeError>;
}

impl Payload for JsValue {
    fn into_value(self) -> Result<JsValue, SerdeError> {
        Ok(self)
    }
}

impl Payload for &JsValue {
    fn into_value(self) -> Result<JsValue, SerdeError> {
        Ok(clone_value(self))
    }
}

impl Payload for JsObject {
    fn into_value(self) -> Result<JsValue, SerdeError> {
        Ok(JsValue::Object(self))
    }
}

impl Payload for Message {
    fn into_value(self) -> Result<JsValue, SerdeError> {
        to_value(&self)
    }
}

impl Payload for &Message {
    fn into_value(self) -> Result<JsValue, SerdeError> {
        to_value(self)
    }
}

impl Payload for &str {
    fn into_value(self) -> Result<JsValue, SerdeError> {
        Ok(JsValue::from(self))
    }
}

impl Payload for String {
    fn into_value(self) -> Result<JsValue, SerdeError> {
        Ok(JsValue::from(self))
    }
}

/// How [`SessionManager::open_with`] resolves the session directory and the working directory.
#[derive(Clone, Debug, Default)]
pub struct OpenParams {
    /// Directory for new sessions created from this manager (`newSession`,
    /// `createBranchedSession`); default: the file's directory.
    pub session_dir: Option<PathBuf>,
    /// Working directory to use instead of the header's `cwd`.
    pub cwd_override: Option<String>,
    /// Working directory when there is neither an override nor a header `cwd` (the reference
    /// uses `process.cwd()`, the default here too). Corrupt-header recovery writes it into the
    /// synthesised header.
    pub fallback_cwd: Option<String>,
}

/// Options of [`SessionManager::new_session`].
#[derive(Clone, Debug, Default)]
pub struct NewSessionOptions {
    /// The session id (default: a new UUIDv7). It becomes part of the file name, so
    /// [`SessionManager::new_session`] refuses one that is not a valid path component
    /// ([`crate::names::validate_name`]).
    pub id: Option<String>,
    /// The header's `parentSession`.
    pub parent_session: Option<String>,
}

/// A transcript session: its rows in file order, the navigation indexes, and where (and
/// whether) it is persisted. See the crate documentation for an overview.
///
/// Where: every factory that reads or writes a session has a twin with an `_in` suffix whose
/// first argument is the [`Storage`] to use (`Arc<dyn Storage>`, kept by the manager for all
/// its later reads, writes and write locks): [`SessionManager::create_in`],
/// [`SessionManager::open_in`] (the full form of `open`/`open_with`, taking [`OpenParams`]),
/// [`SessionManager::open_locked_in`], [`SessionManager::continue_recent_in`],
/// [`SessionManager::fork_from_in`], [`SessionManager::open_read_only_in`]; listings take
/// `&dyn Storage` ([`SessionManager::list_in`], [`SessionManager::list_all_in`]). The plain
/// factories use [`FileStorage`].
#[derive(Debug)]
pub struct SessionManager {
    pub(crate) cwd: String,
    /// The working directory exactly (a header `cwd` may hold a lone surrogate); written into
    /// new headers.
    pub(crate) cwd_js: JsString,
    pub(crate) session_dir: PathBuf,
    pub(crate) session_file: Option<PathBuf>,
    pub(crate) persist: bool,
    pub(crate) read_only: bool,
    pub(crate) flushed: bool,
    pub(crate) recovered_corrupt_header: bool,
    pub(crate) session_id: String,
    pub(crate) durability: Durability,
    /// The bytes of the file as read (shared with the warm cache); rows read from it are spans
    /// of this buffer, every other row owns its bytes.
    pub(crate) buf: Arc<Vec<u8>>,
    /// The rows in file order (copy-on-write: shared with the warm cache until changed).
    pub(crate) rows: Shared<Vec<Row>>,
    pub(crate) header: Option<usize>,
    /// The navigation indexes (copy-on-write, as `rows`).
    pub(crate) ix: Shared<Index>,
    /// What the file holds as far as this manager knows (checked before every full rewrite).
    pub(crate) disk: DiskImage,
    /// How many rows at the end of `rows` are not on disk yet (held appends).
    pub(crate) held: usize,
    /// The file-level findings of the last load ([`SessionManager::diagnostics`]).
    pub(crate) load_report: OpenReport,
    /// Conflict backups written before full rewrites.
    pub(crate) conflict_backups: Vec<PathBuf>,
    /// Lines another writer appended that were adopted.
    pub(crate) adopted_lines: usize,
    /// The file's snapshot when this manager last read or wrote it.
    pub(crate) snapshot: Option<SessionFileSnapshot>,
    /// The file's first line (`\n` included, at most 4 KiB) when this manager last read or
    /// wrote it: an append checks it is still there when the file changed meanwhile.
    pub(crate) first_line: Arc<[u8]>,
    /// The warm cache key of the file (its canonical path), once it exists.
    pub(crate) cache_key: Option<PathBuf>,
    /// Lines of the file the envelope scan read for this manager.
    pub(crate) parsed_lines: usize,
    /// The owned write context ([`SessionManager::set_write_owner`]).
    pub(crate) owner: Option<Arc<dyn WriteOwner>>,
    /// Every write runs under the session write lock with these options
    /// ([`SessionManager::set_write_lock`]).
    pub(crate) write_lock: Option<LockOptions>,
    /// The file's first and last bytes and line count at a snapshot, for the write lock's
    /// catch-up before an append ([`TailProbe`]).
    pub(crate) tail_probe: Option<TailProbe>,
    /// Where the session's bytes live ([`SessionManager::storage`]).
    pub(crate) storage: Arc<dyn Storage>,
    /// What a plain append does with another writer's lines
    /// ([`SessionManager::set_foreign_append_policy`]).
    pub(crate) foreign_policy: ForeignAppendPolicy,
    /// The first row another writer appended that the next plain append has yet to judge
    /// ([`crate::foreign`]); `None` when there is none.
    pub(crate) foreign_since: Option<usize>,
    /// The leaf was moved explicitly (`branch`, `reset_leaf`, `branch_with_summary`) since
    /// the last append: the next one lands there, whatever another writer added.
    pub(crate) pinned: bool,
}

/// Bytes compared at the start of the file and just before its old end before the catch-up
/// reads only what another writer appended (as the warm cache's tail reindex, D18 (2)).
const PROBE_BYTES: usize = 4096;

/// What this manager knows of its file at `snapshot` without keeping its bytes: the first and
/// the last ≤ 4 KiB and the number of `\n`. When the file later has the same device and inode,
/// is longer, and still holds those first and last bytes at the same places, the lines after
/// the old end are all another writer added: only they are read. Valid only while the
/// manager's snapshot is `snapshot` (anything that moves the snapshot otherwise leaves it
/// stale, and the catch-up then reads the whole file).
#[derive(Clone, Debug)]
pub(crate) struct TailProbe {
    snapshot: SessionFileSnapshot,
    head: Vec<u8>,
    last: Vec<u8>,
    lines: usize,
}

impl TailProbe {
    /// The probe of a file holding exactly `bytes` (at `snapshot`).
    fn of(bytes: &[u8], snapshot: SessionFileSnapshot) -> Self {
        TailProbe {
            snapshot,
            head: bytes[..bytes.len().min(PROBE_BYTES)].to_vec(),
            last: bytes[bytes.len() - bytes.len().min(PROBE_BYTES)..].to_vec(),
            lines: memchr::memchr_iter(b'\n', bytes).count(),
        }
    }

    /// The same file, now `bytes` longer (at `snapshot`).
    fn extend(&mut self, bytes: &[u8], snapshot: SessionFileSnapshot) {
        if self.head.len() < PROBE_BYTES {
            let take = (PROBE_BYTES - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
        }
        self.last.extend_from_slice(bytes);
        let extra = self.last.len().saturating_sub(PROBE_BYTES);
        self.last.drain(..extra);
        self.lines += memchr::memchr_iter(b'\n', bytes).count();
        self.snapshot = snapshot;
    }
}

/// Why a full write failed: taking the session write lock, the write itself, or (a judged
/// full write, [`SessionManager::write_full`]) another writer's lines that start another
/// branch (an [`AppendError::Diverged`]).
pub(crate) enum FullWriteError {
    Io(std::io::Error),
    Lock(LockError),
    Diverged(AppendError),
}

impl FullWriteError {
    fn into_open(self, path: PathBuf) -> OpenError {
        match self {
            FullWriteError::Io(source) => OpenError::write(path, source),
            FullWriteError::Lock(source) => OpenError::lock(path, source),
            FullWriteError::Diverged(e) => OpenError::write(path, std::io::Error::other(e)),
        }
    }

    fn into_append(self, path: PathBuf) -> AppendError {
        match self {
            FullWriteError::Io(source) => AppendError::write(path, source),
            FullWriteError::Lock(source) => AppendError::lock(path, source),
            FullWriteError::Diverged(e) => e,
        }
    }

    fn into_branch(self, path: PathBuf) -> BranchError {
        match self {
            FullWriteError::Io(source) => BranchError::write(path, source),
            FullWriteError::Lock(source) => BranchError::lock(path, source),
            FullWriteError::Diverged(e) => BranchError::from(e),
        }
    }

    fn into_remove(self, path: PathBuf) -> RemoveError {
        match self {
            FullWriteError::Io(source) => RemoveError::write(path, source),
            FullWriteError::Lock(source) => RemoveError::lock(path, source),
            FullWriteError::Diverged(e) => RemoveError::write(path, std::io::Error::other(e)),
        }
    }
}

/// The state a full write puts back when it fails.
struct Saved {
    rows: Shared<Vec<Row>>,
    ix: Shared<Index>,
    header: Option<usize>,
    held: usize,
    disk: DiskImage,
    adopted_lines: usize,
    snapshot: Option<SessionFileSnapshot>,
}

impl SessionManager {
    fn blank(cwd: &str, session_dir: PathBuf, persist: bool) -> Self {
        SessionManager {
            cwd: cwd.to_owned(),
            cwd_js: JsString::from(cwd),
            session_dir,
            session_file: None,
            persist,
            read_only: false,
            flushed: false,
            recovered_corrupt_header: false,
            session_id: String::new(),
            durability: Durability::default(),
            buf: Arc::default(),
            rows: Shared::default(),
            header: None,
            ix: Shared::default(),
            disk: DiskImage::Absent,
            held: 0,
            load_report: OpenReport::default(),
            conflict_backups: Vec::new(),
            adopted_lines: 0,
            snapshot: None,
            first_line: Arc::from(&[][..]),
            cache_key: None,
            parsed_lines: 0,
            owner: None,
            write_lock: None,
            tail_probe: None,
            storage: FileStorage::shared(),
            foreign_policy: ForeignAppendPolicy::default(),
            foreign_since: None,
            pinned: false,
        }
    }

    // ------------------------------------------------------------------------------------
    // Factories (openclaw-jsonl.md §2.1)

    /// A new persisting session in `session_dir` (default: [`paths::default_session_dir`] of
    /// `cwd`, created when missing). The file name is chosen now
    /// (`<ISO ts with ':' '.' → '-'>_<uuidv7>.jsonl`) but nothing is written until the first
    /// assistant message (§2.12).
    ///
    /// # Errors
    /// [`OpenError::CreateDir`] when the directory cannot be created.
    pub fn create(cwd: &str, session_dir: Option<&Path>) -> Result<Self, OpenError> {
        Self::create_in(FileStorage::shared(), cwd, session_dir)
    }

    /// [`SessionManager::create`] in `storage`: the session directory is made sure of there
    /// ([`Storage::ensure_dir`]), and every later write of this manager (and of the sessions
    /// it switches to) goes to `storage`.
    ///
    /// # Errors
    /// As [`SessionManager::create`].
    pub fn create_in(
        storage: Arc<dyn Storage>,
        cwd: &str,
        session_dir: Option<&Path>,
    ) -> Result<Self, OpenError> {
        let dir = session_dir.map_or_else(|| paths::default_session_dir(cwd), Path::to_path_buf);
        ensure_dir(&*storage, &dir)?;
        let mut sm = Self::blank(cwd, dir, true);
        sm.storage = storage;
        sm.new_fresh_session();
        Ok(sm)
    }

    /// An in-memory session: never written, no file, `session_dir` empty.
    pub fn in_memory(cwd: &str) -> Self {
        let mut sm = Self::blank(cwd, PathBuf::new(), false);
        sm.new_fresh_session();
        sm
    }

    /// Opens a session file for writing: `cwd` = `cwd_override`, else the header's `cwd`, else
    /// the process working directory; the session directory defaults to the file's directory.
    /// See [`SessionManager::open_with`].
    ///
    /// # Errors
    /// As [`SessionManager::open_with`].
    pub fn open(
        path: &Path,
        session_dir: Option<&Path>,
        cwd_override: Option<&str>,
    ) -> Result<Self, OpenError> {
        Self::open_with(
            path,
            &OpenParams {
                session_dir: session_dir.map(Path::to_path_buf),
                cwd_override: cwd_override.map(str::to_owned),
                fallback_cwd: None,
            },
        )
    }

    /// Opens a session file for writing (openclaw-jsonl.md §2.1, §1.6, §1.9):
    /// - missing file: a fresh session bound to the path; nothing written yet;
    /// - empty or whitespace-only file: a fresh session whose header is written at once;
    /// - first parsed line not a readable header (corrupt header): a byte-exact, mode-preserving
    ///   `<file>.corrupt-<ts>-<hex>.jsonl` backup is written first, then the file is rewritten
    ///   as the first `{type:"session", id}` row found (or a synthesised one, `cwd` = this
    ///   manager's cwd) followed by every parsed non-session row; unparseable lines survive
    ///   only in the backup;
    /// - header version below 3: rows migrated and the file rewritten at once;
    /// - otherwise nothing is written; the file starts `flushed`.
    ///
    /// Unparseable lines elsewhere are kept in place and re-emitted verbatim on rewrites.
    ///
    /// The file is loaded with stat-read-stat (up to three attempts) through the process-wide
    /// warm cache ([`crate::cache`]): a file the cache holds unchanged is not read or parsed
    /// again, and a file that only grew since (another writer appended) has only its new
    /// lines read ([`SessionManager::parsed_lines`] counts what was parsed).
    ///
    /// # Errors
    /// [`OpenError`] naming the file ([`OpenError::ChangedWhileLoading`] when it changed during
    /// every attempt); a failed rewrite leaves the file untouched.
    pub fn open_with(path: &Path, params: &OpenParams) -> Result<Self, OpenError> {
        Self::open_in(FileStorage::shared(), path, params)
    }

    /// [`SessionManager::open_with`] on the session stored at `path` in `storage` (the full
    /// form of [`SessionManager::open`]): the same rules, with every read and write, the
    /// session directory and the write lock in `storage`. The warm cache serves only
    /// [`FileStorage`]; on any other storage the session is loaded with
    /// [`Storage::read_snapshot`] every time (one consistent read of the bytes and their
    /// snapshot where the backend offers one, as Redis does, so another writer's appends do not
    /// make the load fail).
    ///
    /// # Errors
    /// As [`SessionManager::open_with`].
    pub fn open_in(
        storage: Arc<dyn Storage>,
        path: &Path,
        params: &OpenParams,
    ) -> Result<Self, OpenError> {
        let abs = paths::resolve(path);
        let dir = params
            .session_dir
            .clone()
            .unwrap_or_else(|| abs.parent().map(Path::to_path_buf).unwrap_or_default());
        let fetch = cache::fetch(&*storage, &abs)?;
        let cwd_of = |header_cwd: Option<JsString>| {
            params
                .cwd_override
                .as_deref()
                .map(JsString::from)
                .or(header_cwd)
                .or_else(|| params.fallback_cwd.as_deref().map(JsString::from))
                .unwrap_or_else(|| JsString::from(paths::process_cwd()))
        };
        let blank = |cwd_js: JsString| {
            let mut sm = Self::blank(&cwd_js.to_str_lossy(), dir.clone(), true);
            sm.cwd_js = cwd_js;
            sm.storage = Arc::clone(&storage);
            sm
        };
        match fetch.fetched {
            Fetched::Missing => {
                let mut sm = blank(cwd_of(None));
                ensure_dir(&*storage, &dir)?;
                sm.set_loaded(abs, None, None, true)?;
                Ok(sm)
            }
            Fetched::Warm { state, scanned } => {
                let mut sm = blank(cwd_of(state.header_cwd.clone()));
                ensure_dir(&*storage, &dir)?;
                sm.adopt_warm(abs, *state, fetch.key);
                sm.parsed_lines += scanned;
                Ok(sm)
            }
            Fetched::Cold { buf, snapshot } => {
                let loaded = rows::load(&buf);
                let header_cwd = loaded
                    .header
                    .and_then(|h| header_js_string(&loaded.rows[h], &buf, "cwd"));
                let mut sm = blank(cwd_of(header_cwd.clone()));
                ensure_dir(&*storage, &dir)?;
                sm.parsed_lines += loaded.scanned;
                sm.snapshot = Some(snapshot);
                sm.cache_key = fetch.key;
                if sm.set_loaded(abs, Some(buf), Some(loaded), true)? {
                    let warm = Warm::from_parts(Pristine {
                        snapshot,
                        buf: Arc::clone(&sm.buf),
                        rows: sm.rows.clone(),
                        ix: sm.ix.clone(),
                        header: sm.header,
                        session_id: sm.session_id.clone(),
                        header_cwd,
                        report: sm.load_report.clone(),
                    });
                    cache::store(sm.cache_key.as_deref(), warm);
                }
                Ok(sm)
            }
        }
    }

    /// Takes a cached state as this manager's (sharing its parts).
    fn adopt_warm(&mut self, abs: PathBuf, w: Warm, key: Option<PathBuf>) {
        self.session_file = Some(abs.clone());
        self.recovered_corrupt_header = false;
        self.conflict_backups.clear();
        self.adopted_lines = 0;
        (self.foreign_since, self.pinned) = (None, false);
        self.load_report = w.report;
        self.load_report.path = abs;
        self.disk = w.disk;
        self.held = 0;
        self.buf = w.buf;
        self.rows = w.rows;
        self.header = Some(w.header);
        self.session_id = w.session_id;
        self.ix = w.ix;
        self.flushed = true;
        self.snapshot = Some(w.snapshot);
        self.first_line = first_line(&w.head);
        self.cache_key = key;
    }

    /// Opens the most recently modified session of `session_dir` (default: the per-cwd
    /// directory): the `*.jsonl` file with the newest mtime whose first line (read in 4 KiB
    /// chunks up to 64 KiB, a leading BOM tolerated) is a readable header; otherwise creates a
    /// new session. The manager's cwd is `cwd` (OpenClaw 2026.6.11 does not filter candidates by
    /// header cwd).
    ///
    /// # Errors
    /// As [`SessionManager::open_with`] and [`SessionManager::create`].
    pub fn continue_recent(cwd: &str, session_dir: Option<&Path>) -> Result<Self, OpenError> {
        Self::continue_recent_in(FileStorage::shared(), cwd, session_dir)
    }

    /// [`SessionManager::continue_recent`] among the sessions of `storage`
    /// ([`Storage::list_sessions`], [`Storage::read_head`], the newest by the snapshot's
    /// `mtime_ns`).
    ///
    /// # Errors
    /// As [`SessionManager::continue_recent`].
    pub fn continue_recent_in(
        storage: Arc<dyn Storage>,
        cwd: &str,
        session_dir: Option<&Path>,
    ) -> Result<Self, OpenError> {
        let dir = session_dir.map_or_else(|| paths::default_session_dir(cwd), Path::to_path_buf);
        ensure_dir(&*storage, &dir)?;
        match storage.most_recent_session(&dir) {
            Some(path) => Self::open_in(
                storage,
                &path,
                &OpenParams {
                    session_dir: Some(dir),
                    cwd_override: Some(cwd.to_owned()),
                    fallback_cwd: None,
                },
            ),
            None => Self::create_in(storage, cwd, Some(&dir)),
        }
    }

    /// Forks `source` into a new session of `session_dir` (default: the per-cwd directory of
    /// `target_cwd`): a new header (`version:3`, new id, `cwd: target_cwd`,
    /// `parentSession: source`) followed by every non-session row of the source, verbatim
    /// (opaque and unparseable rows included), so every id a compaction's `firstKeptEntryId`
    /// can name is still there. A legacy (v1/v2) source is migrated first, so the
    /// fork keeps its tree (the reference copies v1 rows unmigrated under a v3 header —
    /// pi-format.md §7.3 C). The file is created atomically, so a failure never leaves a partial
    /// file (FINDINGS i). The new file is then opened with cwd `target_cwd`.
    ///
    /// # Errors
    /// [`ForkError::InvalidSource`] (`Cannot fork: source session file is empty or invalid:
    /// <path>`) when the source is missing, empty or its first parsed line is not a readable
    /// header; I/O errors otherwise.
    pub fn fork_from(
        source: &Path,
        target_cwd: &str,
        session_dir: Option<&Path>,
    ) -> Result<Self, ForkError> {
        Self::fork_from_in(FileStorage::shared(), source, target_cwd, session_dir)
    }

    /// [`SessionManager::fork_from`] within `storage`: the source is read from it and the fork
    /// created in it ([`Storage::create_new`]).
    ///
    /// # Errors
    /// As [`SessionManager::fork_from`].
    pub fn fork_from_in(
        storage: Arc<dyn Storage>,
        source: &Path,
        target_cwd: &str,
        session_dir: Option<&Path>,
    ) -> Result<Self, ForkError> {
        let buf = match storage.read_all(source) {
            Ok(b) => b,
            // `existsSync(path)` false (missing, or `s.jsonl/`): "empty or invalid".
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    || !matches!(storage.stat(source), Ok(Some(_))) =>
            {
                return Err(ForkError::InvalidSource {
                    path: source.to_path_buf(),
                });
            }
            Err(source_err) => {
                return Err(ForkError::Read {
                    path: source.to_path_buf(),
                    source: source_err,
                });
            }
        };
        let mut loaded = rows::load(&buf);
        let Some(h) = loaded.header else {
            return Err(ForkError::InvalidSource {
                path: source.to_path_buf(),
            });
        };
        rows::migrate_rows(&mut loaded.rows, &buf, h).map_err(|(i, e)| {
            ForkError::Open(OpenError::Reread {
                at: RowLocation {
                    file: Some(source.to_path_buf()),
                    line: loaded.rows.get(i).and_then(|r| r.pos.map(|p| p.0)),
                    byte_offset: loaded.rows.get(i).and_then(|r| r.pos.map(|p| p.1)),
                },
                source: e,
            })
        })?;
        let dir =
            session_dir.map_or_else(|| paths::default_session_dir(target_cwd), Path::to_path_buf);
        ensure_dir(&*storage, &dir)?;
        let id = new_session_id();
        let ts = now_timestamp();
        let path = dir.join(session_file_name(&ts, &id));
        let source_text = source.to_string_lossy();
        let header = build::header(3, &id, &ts, target_cwd, Some(&source_text));
        let mut out = session_format::json::to_json_string(&header).into_bytes();
        out.push(b'\n');
        for row in &loaded.rows {
            if row.kind.is_session_typed() {
                continue;
            }
            out.extend_from_slice(row.bytes(&buf));
            out.push(b'\n');
        }
        storage
            .create_new(&path, &out)
            .map_err(|source| ForkError::Write {
                path: path.clone(),
                source,
            })?;
        Ok(Self::open_in(
            storage,
            &path,
            &OpenParams {
                session_dir: Some(dir),
                cwd_override: Some(target_cwd.to_owned()),
                fallback_cwd: None,
            },
        )?)
    }

    /// Loads `buf` (the file's bytes, `None` when missing) into this manager; `write` allows
    /// the repair writes of a writable open. Returns true when the state is the file exactly
    /// as read (a readable header, nothing migrated, recovered or rewritten).
    pub(crate) fn set_loaded(
        &mut self,
        abs: PathBuf,
        buf: Option<Vec<u8>>,
        loaded: Option<rows::Loaded>,
        write: bool,
    ) -> Result<bool, OpenError> {
        self.session_file = Some(abs.clone());
        self.recovered_corrupt_header = false;
        self.conflict_backups.clear();
        self.adopted_lines = 0;
        (self.foreign_since, self.pinned) = (None, false);
        let (Some(buf), Some(loaded)) = (buf, loaded) else {
            self.new_fresh_session();
            self.session_file = Some(abs.clone());
            self.load_report = OpenReport {
                path: abs,
                ..OpenReport::default()
            };
            return Ok(false);
        };
        self.load_report = crate::inspect::file_report(&abs, &buf, &loaded);
        self.disk = DiskImage::read(&buf);
        self.first_line = first_line(&buf);
        self.held = 0;
        self.buf = Arc::new(buf);
        let mut pristine = false;
        match loaded.header {
            Some(h) => {
                self.rows = loaded.rows.into();
                self.header = Some(h);
                self.session_id = header_string(&self.rows[h], &self.buf, "id").unwrap_or_default();
                let migrated = self.migrate()?;
                self.rebuild();
                if migrated && write {
                    self.rewrite().map_err(|e| e.into_open(abs))?;
                }
                self.flushed = true;
                pristine = !migrated;
            }
            None if loaded.blank => {
                let disk = std::mem::replace(&mut self.disk, DiskImage::Absent);
                let report = std::mem::take(&mut self.load_report);
                self.new_fresh_session();
                self.session_file = Some(abs.clone());
                self.disk = disk;
                self.load_report = report;
                if write {
                    self.rewrite().map_err(|e| e.into_open(abs))?;
                }
                self.flushed = true;
            }
            None => {
                if write {
                    let name = abs
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    let backup = abs
                        .parent()
                        .map(Path::to_path_buf)
                        .unwrap_or_default()
                        .join(corrupt_backup_name(&name, &now_timestamp()));
                    self.storage
                        .backup_copy(&abs, &backup, &self.buf)
                        .map_err(|source| OpenError::Backup {
                            path: abs.clone(),
                            backup: backup.clone(),
                            source,
                        })?;
                    self.load_report.corrupt_header_backup = Some(backup);
                }
                self.recover(loaded.rows);
                self.migrate()?;
                self.rebuild();
                if write {
                    self.rewrite().map_err(|e| e.into_open(abs))?;
                }
                self.recovered_corrupt_header = true;
                self.flushed = true;
            }
        }
        Ok(pristine)
    }

    /// Corrupt-header recovery (§1.6): the first `{type:"session", id:string}` row anywhere (or
    /// a synthesised header), then every parsed row whose type is not `session`.
    fn recover(&mut self, rows: Vec<Row>) {
        let mut scanner = EnvelopeScanner::new();
        let mut header: Option<Row> = None;
        let mut rest = Vec::with_capacity(rows.len());
        for row in rows {
            if matches!(row.kind, RowKind::Malformed(_)) {
                continue;
            }
            if row.kind.is_session_typed() {
                if header.is_none() {
                    let json = row.json(&self.buf);
                    let readable = scanner
                        .scan(json)
                        .is_ok_and(|env| matches!(env.id, Field::Str(_)));
                    if readable {
                        header = Some(row);
                    }
                }
                continue;
            }
            rest.push(row);
        }
        let header = header.unwrap_or_else(|| {
            let id = new_session_id();
            let value = self.header_value(&id, &now_timestamp(), None);
            Row::from_value(&value)
        });
        let mut all = Vec::with_capacity(rest.len() + 1);
        all.push(header);
        all.extend(rest);
        rows::reclassify(&mut all, &self.buf, 0);
        self.rows = all.into();
        self.header = Some(0);
        self.session_id = header_string(&self.rows[0], &self.buf, "id").unwrap_or_default();
    }

    /// A new `version:3` header with this manager's exact cwd.
    fn header_value(&self, id: &str, ts: &str, parent_session: Option<&str>) -> JsValue {
        let mut header = build::header(3, id, ts, &self.cwd, parent_session);
        if let Some(o) = header.as_object_mut() {
            o.insert("cwd", JsValue::String(self.cwd_js.clone()));
        }
        header
    }

    /// Migrates the loaded rows in memory; true when anything changed.
    fn migrate(&mut self) -> Result<bool, OpenError> {
        let Some(h) = self.header else {
            return Ok(false);
        };
        match rows::migrate_rows(&mut self.rows, &self.buf, h) {
            Ok(report) => Ok(report.is_some()),
            Err((i, e)) => Err(OpenError::Reread {
                at: self.location(i),
                source: e,
            }),
        }
    }

    /// Rebuilds every index from the rows.
    pub(crate) fn rebuild(&mut self) {
        self.ix = Index::build(&self.rows).into();
    }

    /// Resets to a fresh session (header `version:3`, new id unless given, `leaf = null`,
    /// `flushed = false`). A persisting manager gets a new file path
    /// `<session dir>/<timestamp>_<id>.jsonl`; the old file is untouched. Returns that path
    /// (`None` in memory).
    ///
    /// A caller-chosen [`NewSessionOptions::id`] must be a valid path component
    /// ([`names::validate_name`]: not empty, `.`, `..` or absolute, no `/`, `\`, NUL or
    /// control character, at most 255 bytes), and for a persisting manager the file name it
    /// makes must fit in 255 bytes too; pi takes any id verbatim, so an id holding `/` breaks
    /// its path (pi-format.md §1.1). A refused id changes nothing: the manager stays on the
    /// session it had.
    ///
    /// # Errors
    /// [`InvalidName`] with [`NameKind::SessionId`] naming the id and the rule it breaks, or
    /// with [`NameKind::FileName`] naming the `<timestamp>_<id>.jsonl` name when that is over
    /// 255 bytes.
    pub fn new_session(
        &mut self,
        options: NewSessionOptions,
    ) -> Result<Option<PathBuf>, InvalidName> {
        let ts = now_timestamp();
        let id = match options.id {
            Some(id) => {
                names::validate_name(NameKind::SessionId, &id)?;
                if self.persist {
                    names::validate_name(NameKind::FileName, &session_file_name(&ts, &id))?;
                }
                id
            }
            None => new_session_id(),
        };
        Ok(self.start_session(id, &ts, options.parent_session.as_deref()))
    }

    /// [`SessionManager::new_session`] with a fresh id (cannot fail).
    fn new_fresh_session(&mut self) -> Option<PathBuf> {
        self.start_session(new_session_id(), &now_timestamp(), None)
    }

    /// Resets to a fresh session with `id` (already checked) and header timestamp `ts`.
    fn start_session(
        &mut self,
        id: String,
        ts: &str,
        parent_session: Option<&str>,
    ) -> Option<PathBuf> {
        self.recovered_corrupt_header = false;
        self.session_id = id;
        let header = self.header_value(&self.session_id, ts, parent_session);
        let mut row = Row::from_value(&header);
        row.kind = RowKind::Header;
        self.rows = vec![row].into();
        self.header = Some(0);
        self.buf = Arc::default();
        self.ix = Shared::default();
        self.flushed = false;
        self.disk = DiskImage::Absent;
        self.held = 1;
        self.conflict_backups.clear();
        self.adopted_lines = 0;
        (self.foreign_since, self.pinned) = (None, false);
        self.snapshot = None;
        self.first_line = Arc::from(&[][..]);
        self.cache_key = None;
        if self.persist {
            self.session_file = Some(paths::normalize(
                &self
                    .session_dir
                    .join(session_file_name(ts, &self.session_id)),
            ));
        }
        self.load_report = OpenReport {
            path: self.session_file.clone().unwrap_or_default(),
            ..OpenReport::default()
        };
        self.session_file.clone()
    }

    // ------------------------------------------------------------------------------------
    // Plain getters

    /// True for managers that write their file (all factories except `in_memory` and the
    /// read-only open).
    pub fn is_persisted(&self) -> bool {
        self.persist
    }

    /// True for managers from [`SessionManager::open_read_only`].
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// The working directory written into new headers.
    pub fn get_cwd(&self) -> &str {
        &self.cwd
    }

    /// The directory new sessions go to (empty in memory).
    pub fn get_session_dir(&self) -> &Path {
        &self.session_dir
    }

    /// The header's session id.
    pub fn get_session_id(&self) -> &str {
        &self.session_id
    }

    /// The session file (absolute), `None` in memory.
    pub fn get_session_file(&self) -> Option<&Path> {
        self.session_file.as_deref()
    }

    /// True when the last open recovered a corrupt header.
    pub fn was_recovered_from_corrupt_header(&self) -> bool {
        self.recovered_corrupt_header
    }

    /// True when the file on disk holds every in-memory row (§2.12 `flushed`).
    pub fn is_flushed(&self) -> bool {
        self.flushed
    }

    /// The visible leaf id (`None` = no leaf; lossy text for an id holding a lone surrogate,
    /// [`SessionManager::get_leaf_id_js`] is exact).
    pub fn get_leaf_id(&self) -> Option<&str> {
        self.ix.leaf.as_ref().map(Id::text)
    }

    /// The visible leaf id exactly as the file holds it.
    pub fn get_leaf_id_js(&self) -> Option<&JsString> {
        self.ix.leaf.as_ref().map(Id::js)
    }

    /// The physical append cursor: the `parentId` the next appended row gets (lossy text).
    pub fn get_append_parent_id(&self) -> Option<&str> {
        self.ix.append_parent.as_ref().map(Id::text)
    }

    /// How this manager's appends are synced from now on (default [`Durability::SyncData`];
    /// see [`Durability`] for what each mode guarantees). Full rewrites are always fully
    /// synced.
    pub fn set_durability(&mut self, durability: Durability) {
        self.durability = durability;
    }

    /// How this manager's appends are synced.
    pub fn durability(&self) -> Durability {
        self.durability
    }

    /// Runs `f` with appends synced as `durability` asks, then restores the manager's own mode:
    /// the per-call choice (e.g. `Buffer` while streaming a reply, `SyncAll` for one record
    /// that must survive a power loss with its metadata).
    ///
    /// ```no_run
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use session_store::{Durability, SessionManager};
    /// # let mut sm = SessionManager::open(std::path::Path::new("/tmp/s.jsonl"), None, None)?;
    /// sm.with_durability(Durability::SyncAll, |sm| sm.append_custom_entry("checkpoint", None))?;
    /// # Ok(()) }
    /// ```
    pub fn with_durability<R>(
        &mut self,
        durability: Durability,
        f: impl FnOnce(&mut Self) -> R,
    ) -> R {
        let own = std::mem::replace(&mut self.durability, durability);
        let out = f(self);
        self.durability = own;
        out
    }

    /// Makes what was already written durable as `durability` asks (`fdatasync` or `fsync` of
    /// the session file; nothing for [`Durability::Buffer`], nor when no file exists yet):
    /// after a run of [`Durability::Buffer`] appends, e.g. at the end of a turn.
    ///
    /// # Errors
    /// [`AppendError::Write`] when the file cannot be opened or synced.
    pub fn sync_file(&self, durability: Durability) -> Result<(), AppendError> {
        let Some(path) = &self.session_file else {
            return Ok(());
        };
        if !self.persist || !matches!(self.storage.stat(path), Ok(Some(_))) {
            return Ok(());
        }
        self.storage
            .sync(path, durability)
            .map_err(|source| AppendError::write(path.clone(), source))
    }

    /// Lines of the file the envelope scan has read for this manager since it was created:
    /// its load (0 for a warm open of an unchanged file; only the new lines when the cache held
    /// the file before another writer appended to it), lines of other writers adopted later,
    /// and the re-read that re-caches the file after each full rewrite.
    pub fn parsed_lines(&self) -> usize {
        self.parsed_lines
    }

    /// The file's snapshot when this manager last read or wrote it (`None` before the file
    /// exists).
    pub fn file_snapshot(&self) -> Option<SessionFileSnapshot> {
        self.snapshot
    }

    /// The storage this manager reads and writes its session through ([`FileStorage`] unless
    /// it was opened or created with an `_in` factory).
    pub fn storage(&self) -> &Arc<dyn Storage> {
        &self.storage
    }

    /// True when the storage is the local file store (warm cache, repair cache).
    fn on_files(&self) -> bool {
        self.storage.as_file_storage().is_some()
    }

    /// Attaches (or with `None` detaches) the owned write context of the session file
    /// (openclaw-jsonl.md §3.4): when it names this manager's file, each append first asks it
    /// whether the warm cache may advance ([`WriteOwner::can_advance_cache`]), and every
    /// verified write (append or full rewrite) publishes the file's new snapshot to it
    /// ([`WriteOwner::publish_snapshot`]).
    pub fn set_write_owner(&mut self, owner: Option<Arc<dyn WriteOwner>>) {
        self.owner = owner;
    }

    /// Makes every write of this manager run under the cross-process session write lock of
    /// its file ([`crate::lock`], interoperable with OpenClaw's `acquireSessionWriteLock`), with
    /// `options` (timeout, stale age, max-hold, backoff); `None` (the default) writes without
    /// it. The lock is taken through the manager's storage ([`Storage::with_write_lock`]): lock
    /// files for [`FileStorage`], the backend's own lock otherwise. With the lock set:
    /// - each plain append, full write (first assistant message of a held session,
    ///   [`SessionManager::flush`], [`SessionManager::rewrite_file`]), branched-session write
    ///   and trailing removal takes the lock of the file it writes (for a branched session:
    ///   the new file) around the write, through [`crate::lock::with_session_write_lock`], so a
    ///   thread that already holds that lock (a nested writer, the "owned write context") reuses
    ///   it instead of waiting for itself;
    /// - inside the lock, before a plain append, the file is checked again (its snapshot, then
    ///   length and fingerprint of the known bytes, D11): lines another process appended while
    ///   this manager waited are adopted first (kept verbatim, before the new row), never
    ///   overwritten or interleaved, and the append then fast-forwards onto them or refuses as
    ///   [`crate::ForeignAppendPolicy`] says (D30); a full rewrite makes the same check inside
    ///   the lock (and backs up a file changed in any other way);
    /// - a lock that cannot be taken fails the write with a `Lock` error
    ///   ([`AppendError::Lock`], [`BranchError::Lock`], [`RemoveError::Lock`]) carrying the
    ///   [`LockError`] (lock path, owner pid), and nothing is written.
    ///
    /// Each write takes and releases the lock (creating and removing the lock file); a caller
    /// appending a batch can hold it around the batch with
    /// [`crate::lock::with_session_write_lock`], which the manager's writes then reuse.
    ///
    /// The writes a writable open makes (migration, corrupt-header recovery, the header of an
    /// empty file) happen before this can be called: open with
    /// [`SessionManager::open_locked`] to make them under the lock too. Reads never take it.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use session_store::{LockOptions, SessionManager};
    /// let mut sm = SessionManager::open(std::path::Path::new("/tmp/s.jsonl"), None, None)?;
    /// sm.set_write_lock(Some(LockOptions::from_env()));
    /// sm.append_custom_entry("checkpoint", None)?; // under the lock
    /// # Ok(()) }
    /// ```
    pub fn set_write_lock(&mut self, options: Option<LockOptions>) {
        self.write_lock = options;
    }

    /// The write lock options in effect ([`SessionManager::set_write_lock`]).
    pub fn write_lock(&self) -> Option<&LockOptions> {
        self.write_lock.as_ref()
    }

    /// [`SessionManager::open_with`] inside the session write lock of `path`, then
    /// [`SessionManager::set_write_lock`]`(Some(options))`: the open's own writes (migration,
    /// corrupt-header recovery, the header of an empty file) and every later write run under
    /// the lock.
    ///
    /// # Errors
    /// [`OpenError::Lock`] when the lock cannot be taken (nothing was read or written);
    /// otherwise as [`SessionManager::open_with`].
    pub fn open_locked(
        path: &Path,
        params: &OpenParams,
        options: LockOptions,
    ) -> Result<Self, OpenError> {
        Self::open_locked_in(FileStorage::shared(), path, params, options)
    }

    /// [`SessionManager::open_locked`] in `storage` (its write lock, [`Storage::with_write_lock`]).
    ///
    /// # Errors
    /// As [`SessionManager::open_locked`].
    pub fn open_locked_in(
        storage: Arc<dyn Storage>,
        path: &Path,
        params: &OpenParams,
        options: LockOptions,
    ) -> Result<Self, OpenError> {
        let abs = paths::resolve(path);
        let lock_in = Arc::clone(&storage);
        let mut sm = storage::with_write_lock(&*lock_in, &abs, &options, || {
            Self::open_in(storage, &abs, params)
        })
        .map_err(|source| OpenError::lock(abs.clone(), source))??;
        sm.write_lock = Some(options);
        Ok(sm)
    }

    /// The owner, when it names this manager's file.
    fn active_owner(&self) -> Option<Arc<dyn WriteOwner>> {
        let owner = self.owner.as_ref()?;
        let file = self.session_file.as_ref()?;
        let theirs = owner.session_file()?;
        let same = paths::resolve(&theirs) == *file
            || (self.on_files()
                && snapshot::canonical(&theirs).is_some_and(|t| {
                    self.cache_key.clone().or_else(|| snapshot::canonical(file)) == Some(t)
                }));
        same.then(|| Arc::clone(owner))
    }

    /// Publishes a verified snapshot to the owner; a refusal drops the warm cache entry.
    fn publish(&self, owner: Option<&Arc<dyn WriteOwner>>, snapshot: &SessionFileSnapshot) {
        if let Some(o) = owner
            && !o.publish_snapshot(snapshot)
        {
            cache::invalidate_key(self.cache_key.as_deref());
        }
    }

    pub(crate) fn location(&self, row: usize) -> RowLocation {
        let pos = self.rows.get(row).and_then(|r| r.pos);
        RowLocation {
            file: self.session_file.clone(),
            line: pos.map(|p| p.0),
            byte_offset: pos.map(|p| p.1),
        }
    }

    pub(crate) fn read_error(
        &self,
        row: usize,
        source: session_format::json::JsonError,
    ) -> ReadError {
        ReadError {
            at: self.location(row),
            source,
        }
    }

    fn file_path(&self) -> PathBuf {
        self.session_file.clone().unwrap_or_default()
    }

    // ------------------------------------------------------------------------------------
    // Appends (§2.4)

    fn new_id(&self) -> String {
        new_entry_id(|c| self.ix.id_taken(c))
    }

    /// `id`, `timestamp` of a new row; its `parentId` (the append cursor, exact) is set by
    /// [`SessionManager::append_value`].
    fn base(&self) -> RowBase {
        RowBase {
            id: self.new_id(),
            parent_id: None,
            timestamp: now_timestamp(),
        }
    }

    /// `appendEntry`: builds the row (its `parentId` set to the append cursor, written from the
    /// exact id), persists it (§2.12), then indexes it (logical parent rule (b) at append time)
    /// and moves leaf and append cursor to it. A failed write leaves the state as it was.
    fn append_value(&mut self, mut value: JsValue) -> Result<String, AppendError> {
        if self.read_only {
            return Err(AppendError::ReadOnly {
                path: self.file_path(),
            });
        }
        if let Some(o) = value.as_object_mut() {
            o.insert("parentId", ids::opt_value(self.ix.append_parent.as_ref()));
        }
        let row = Row::from_value(&value);
        let Some(meta) = row.kind.entry() else {
            return Err(AppendError::Internal {
                what: "an appended row did not classify as an entry",
            });
        };
        let id = meta.id.text().to_owned();
        let assistant = meta.msg == Some(MsgShape::Assistant);
        let written = self.persist && (self.ix.assistants > 0 || assistant);
        match self.session_file.clone() {
            // A plain append (§3.2): the line is written before the row joins the state.
            Some(path) if written && self.flushed => {
                self.under_lock(&path, |sm| {
                    // Lines another writer appended are adopted first, then judged
                    // (crate::foreign, D30): the row may move to their tip, or not be written.
                    sm.catch_up(&path);
                    let before = sm.cursor();
                    let row = match sm.settle_foreign(&path) {
                        Ok(false) => row,
                        Ok(true) => {
                            if let Some(o) = value.as_object_mut() {
                                o.insert("parentId", ids::opt_value(sm.ix.append_parent.as_ref()));
                            }
                            Row::from_value(&value)
                        }
                        Err(e) => return Err(e),
                    };
                    let out = sm.plain_append(&path, row);
                    if out.is_err() {
                        sm.restore_cursor(before);
                    }
                    out
                })
                .map_err(|source| AppendError::lock(path.clone(), source))??;
            }
            // The first assistant of a held session: one full write of everything, after the
            // other writer's lines are adopted and judged (crate::foreign, D30).
            Some(path) if written => {
                let saved = self.save();
                let before = self.cursor();
                self.push_row(row);
                self.held += 1;
                match self.write_full_locked(true) {
                    Ok(()) => {}
                    Err(FullWriteError::Diverged(e)) => {
                        // As a plain append: nothing written, their rows stay adopted (so the
                        // caller can branch to a tip), the new row goes, the held rows stay,
                        // and the error names the leaf the manager is back on.
                        self.drop_last_held(before);
                        return Err(match e {
                            AppendError::Diverged { path, tips, .. } => AppendError::Diverged {
                                path,
                                leaf: self.ix.leaf.as_ref().map(|l| l.text().to_owned()),
                                tips,
                            },
                            other => other,
                        });
                    }
                    Err(e) => {
                        self.restore(saved);
                        return Err(e.into_append(path));
                    }
                }
                self.flushed = true;
            }
            file => {
                self.push_row(row);
                if self.persist {
                    self.held += 1;
                    if file.is_some() {
                        self.flushed = false;
                    }
                }
                // Held in memory, nothing written: an explicit move of the leaf before it
                // stays in force for the full write that writes it.
                if self.persist && file.is_some() {
                    return Ok(id);
                }
            }
        }
        // The leaf is this manager's own row now: the next append judges only what other
        // writers add after it.
        self.foreign_since = None;
        self.pinned = false;
        Ok(id)
    }

    /// After a judged full write of the held rows refused ([`AppendError::Diverged`]): the
    /// row just pushed (the last) goes again and the cursor is put back to `before`; the
    /// other writer's rows adopted by the write stay, still to be judged.
    fn drop_last_held(&mut self, before: crate::foreign::Cursor) {
        let since = self.foreign_since;
        self.rows.pop();
        self.held = self.held.saturating_sub(1);
        self.rebuild();
        self.restore_cursor(before);
        self.foreign_since = since;
    }

    /// A plain append of `row` to `path`: written first, then the row joins the state.
    fn plain_append(&mut self, path: &Path, row: Row) -> Result<(), AppendError> {
        let owner = self.active_owner();
        let may_advance = match (&owner, &self.snapshot) {
            (Some(o), Some(snap)) => o.can_advance_cache(snap),
            (Some(_), None) => false,
            (None, _) => true,
        };
        let out = self.write_line(path, row.bytes(&self.buf))?;
        let i = self.push_row(row);
        self.after_append(path, &out, i, owner.as_ref(), may_advance);
        Ok(())
    }

    /// Runs `write` inside the session write lock of `path` in the manager's storage when one
    /// is set ([`SessionManager::set_write_lock`]; re-entrant: a lock this thread already holds
    /// for the file is reused), else directly.
    fn under_lock<R>(
        &mut self,
        path: &Path,
        write: impl FnOnce(&mut Self) -> R,
    ) -> Result<R, LockError> {
        match self.write_lock.clone() {
            None => Ok(write(self)),
            Some(options) => {
                let storage = Arc::clone(&self.storage);
                storage::with_write_lock(&*storage, path, &options, || write(self))
            }
        }
    }

    /// Before a plain append (inside the write lock when one is set): when the file is no
    /// longer as this manager last saw it, it is re-read (between two equal `stat`s) and the
    /// lines another writer appended meanwhile are adopted (D11: indexed and kept verbatim,
    /// before the rows still held; leaf and append cursor stay, and the first adopted row is
    /// remembered for [`SessionManager::settle_foreign`], D30), so the append lands after them
    /// and is verified against the file as it now is. Any other change (rewritten, replaced,
    /// deleted, a read that did not hold still) is left to the append's own checks. When the
    /// file is as this manager last saw it, this costs one `stat`.
    ///
    /// Only the appended bytes are read when this manager's [`TailProbe`] describes the file
    /// as it last saw it and the file still holds the probe's first and last bytes (the cost
    /// of an append after another writer's is then that writer's lines, not the whole file);
    /// otherwise the whole file is read and compared with what this manager knows, and the
    /// probe is taken from it. Either way the check before a full rewrite still compares every
    /// byte (D11).
    fn catch_up(&mut self, path: &Path) {
        let Some(known) = self.snapshot else {
            return;
        };
        let Ok(Some(before)) = self.storage.stat(path) else {
            return;
        };
        if before == known || !before.same_file(&known) || before.size <= known.size {
            return;
        }
        if self.catch_up_tail(path, known, before) {
            return;
        }
        let Ok(now) = self.storage.read_all(path) else {
            return;
        };
        let stable = self
            .storage
            .stat(path)
            .is_ok_and(|after| after == Some(before));
        // Only complete lines are adopted: a line still being written (another writer without
        // the lock) or torn by a crash is left to the checks after the write.
        if !stable || now.len() as u64 != before.size || !now.ends_with(b"\n") {
            return;
        }
        if let Verdict::Grew(at) = self.disk.check(Some(&now), &self.buf) {
            let at_row = self.rows.len().saturating_sub(self.held);
            if self.adopt(&now[..at], &now[at..], at_row) > 0 {
                self.foreign_since.get_or_insert(at_row);
            }
            if !self.disk.appended(at as u64, &now[at..]) {
                self.disk = DiskImage::known(&now);
            }
            self.snapshot = Some(before);
            self.tail_probe = Some(TailProbe::of(&now, before));
        }
    }

    /// The catch-up reading only the bytes after `known.size` (see [`SessionManager::catch_up`]);
    /// false (nothing changed) when the probe does not apply or does not match.
    fn catch_up_tail(
        &mut self,
        path: &Path,
        known: SessionFileSnapshot,
        before: SessionFileSnapshot,
    ) -> bool {
        let Some(probe) = self.tail_probe.as_ref().filter(|p| p.snapshot == known) else {
            return false;
        };
        // The new bytes must start a line, as a full read's `Verdict::Grew` requires.
        if probe.last.last() != Some(&b'\n') {
            return false;
        }
        let (Ok(old), Ok(new_len)) = (
            usize::try_from(known.size),
            usize::try_from(before.size - known.size),
        ) else {
            return false;
        };
        let mut head = vec![0u8; probe.head.len()];
        let mut last = vec![0u8; probe.last.len()];
        let last_at = (old - probe.last.len()) as u64;
        let mut tail = vec![0u8; new_len];
        let read = self.storage.read_ranges(
            path,
            &mut [
                (0, &mut head),
                (last_at, &mut last),
                (known.size, &mut tail),
            ],
        );
        if read.is_err() || head != probe.head || last != probe.last || !tail.ends_with(b"\n") {
            return false;
        }
        let stable = self
            .storage
            .stat(path)
            .is_ok_and(|after| after == Some(before));
        // The belief must extend by exactly these bytes (it is the file as last seen).
        let mut disk = self.disk.clone();
        if !stable || !disk.appended(known.size, &tail) {
            return false;
        }
        let line_base = probe.lines;
        let at_row = self.rows.len().saturating_sub(self.held);
        if self.adopt_tail(line_base, old, &tail, at_row) > 0 {
            self.foreign_since.get_or_insert(at_row);
        }
        self.disk = disk;
        self.snapshot = Some(before);
        if let Some(p) = self.tail_probe.as_mut() {
            p.extend(&tail, before);
        }
        true
    }

    /// Pushes a row and indexes it; returns its index.
    fn push_row(&mut self, row: Row) -> usize {
        let i = self.rows.len();
        self.rows.push(row);
        self.ix.extend(&self.rows, i);
        i
    }

    fn save(&self) -> Saved {
        Saved {
            rows: self.rows.clone(),
            ix: self.ix.clone(),
            header: self.header,
            held: self.held,
            disk: self.disk.clone(),
            adopted_lines: self.adopted_lines,
            snapshot: self.snapshot,
        }
    }

    fn restore(&mut self, saved: Saved) {
        self.rows = saved.rows;
        self.ix = saved.ix;
        self.header = saved.header;
        self.held = saved.held;
        self.disk = saved.disk;
        self.adopted_lines = saved.adopted_lines;
        self.snapshot = saved.snapshot;
    }

    /// Appends one line to the existing file: never to another file than the one this manager
    /// read or last wrote (same device and inode), never creating one
    /// ([`Storage::append_line`], fenced on this manager's snapshot and first line).
    fn write_line(&self, path: &Path, line: &[u8]) -> Result<io::VerifiedAppend, AppendError> {
        let expected = self.snapshot.map(|snapshot| io::KnownFile {
            snapshot,
            first_line: &self.first_line,
        });
        self.storage
            .append_line(path, line, self.durability, expected)
            .map_err(|e| match e {
                io::AppendToExistingError::Deleted => AppendError::FileDeleted {
                    path: path.to_path_buf(),
                },
                io::AppendToExistingError::Replaced
                | io::AppendToExistingError::ReplacedDuringWrite => AppendError::FileReplaced {
                    path: path.to_path_buf(),
                },
                io::AppendToExistingError::Io(source) => {
                    AppendError::write(path.to_path_buf(), source)
                }
            })
    }

    /// After a plain append of row `row`: the belief about the file is extended (or the lines
    /// another writer appended before ours are adopted, D11), and the warm cache advances when
    /// the append is verified (§3.2 step 5: this manager's snapshot and the cache's both equal
    /// the `fstat` before the write, and the file is the same file, exactly the bytes written
    /// longer); a verified append is published to the owner.
    fn after_append(
        &mut self,
        path: &Path,
        out: &io::VerifiedAppend,
        row: usize,
        owner: Option<&Arc<dyn WriteOwner>>,
        may_advance: bool,
    ) {
        self.held = 0;
        let mut row = row;
        if !self.disk.appended(out.before.size, &out.written) {
            row += self.after_foreign_append(path, out, row);
        }
        let verified = self.snapshot == Some(out.before)
            && out.after.same_file(&out.before)
            && out.after.size == out.before.size + out.written.len() as u64;
        if self.cache_key.is_none() {
            self.cache_key = cache::key_in(&*self.storage, path);
        }
        let key = self.cache_key.as_deref();
        if out.separator || !may_advance {
            // A torn last line was terminated (its entry would no longer equal a fresh
            // load), or the owner refused: the entry goes.
            cache::invalidate_key(key);
        } else if verified {
            cache::advance(key, &out.before, out.after, &self.rows[row], &out.written);
        }
        // Otherwise the entry is stale (its snapshot is not the file's): a later open reads
        // only what was appended after it.
        if (!verified || out.separator) && self.on_files() {
            // The incremental repair must not trust a prefix it has not seen whole.
            crate::repair::invalidate_repair_cache(path);
        }
        self.snapshot = Some(out.after);
        // The probe follows this manager's own verified appends (the file is exactly the
        // bytes written longer); any other outcome leaves it stale.
        match self.tail_probe.as_mut() {
            Some(p) if verified && p.snapshot == out.before => p.extend(&out.written, out.after),
            _ => self.tail_probe = None,
        }
        if verified {
            self.publish(owner, &out.after);
        }
    }

    /// The plain append found the file at another length than expected: another writer was
    /// there. When the file still starts with the bytes this manager knew, followed by other
    /// lines and then the line just written, the lines in between are adopted (indexed, placed
    /// before the row just appended, kept verbatim on rewrites); otherwise the belief becomes
    /// unknown, so the next full rewrite backs the file up first. Returns how many rows were
    /// inserted before `row`.
    fn after_foreign_append(&mut self, path: &Path, out: &io::VerifiedAppend, row: usize) -> usize {
        let Ok(now) = self.storage.read_all(path) else {
            self.disk = DiskImage::Unknown;
            return 0;
        };
        let Ok(previous) = usize::try_from(out.before.size) else {
            self.disk = DiskImage::Unknown;
            return 0;
        };
        let ours = now.get(previous..previous + out.written.len()) == Some(&out.written[..]);
        let before = now.get(..previous).filter(|_| ours);
        match before.map(|b| (b, self.disk.check(Some(b), &self.buf))) {
            Some((b, Verdict::Grew(at))) => {
                let tail = &b[at..];
                let inserted = self.adopt(&b[..at], tail, row);
                let extended = self.disk.appended(at as u64, tail)
                    && self.disk.appended(out.before.size, &out.written);
                if !extended {
                    self.disk = DiskImage::known(&now[..previous + out.written.len()]);
                }
                inserted
            }
            Some((b, Verdict::Vanished)) => {
                self.disk = DiskImage::known(&now[..b.len() + out.written.len()]);
                0
            }
            _ => {
                self.disk = DiskImage::Unknown;
                0
            }
        }
    }

    /// Adopts lines another writer appended (`tail`, which followed `prefix` in the file):
    /// they become rows (their exact bytes, read as a full load would read them) inserted
    /// before row `at`, and the index is rebuilt; the in-memory leaf and append cursor stay
    /// where they were. Returns how many rows were inserted.
    fn adopt(&mut self, prefix: &[u8], tail: &[u8], at: usize) -> usize {
        let line_base = memchr::memchr_iter(b'\n', prefix).count();
        self.adopt_tail(line_base, prefix.len(), tail, at)
    }

    /// [`SessionManager::adopt`] of `tail`, which followed `line_base` line feeds and
    /// `offset_base` bytes in the file. Rows adopted after every row (nothing held) extend the
    /// index; rows inserted before held rows rebuild it.
    fn adopt_tail(
        &mut self,
        line_base: usize,
        offset_base: usize,
        tail: &[u8],
        at: usize,
    ) -> usize {
        let version = self
            .header
            .and_then(|h| self.rows.get(h))
            .map_or(3.0, |h| rows::header_version(h, &self.buf));
        let (new_rows, scanned) = rows::load_tail(tail, version, line_base, offset_base);
        self.parsed_lines += scanned;
        if new_rows.is_empty() {
            return 0;
        }
        let inserted = new_rows.len();
        self.adopted_lines += inserted;
        let at = at.min(self.rows.len());
        let keep = (
            self.ix.leaf.clone(),
            self.ix.append_parent.clone(),
            self.ix.side_parent.clone(),
        );
        if at == self.rows.len() && self.header.is_some() {
            // Appended after every row: the header stays where it is, and extending the index
            // gives what a rebuild would (`Index::extend`).
            self.rows.extend(new_rows);
            self.ix.extend(&self.rows, at);
        } else {
            self.rows.splice(at..at, new_rows);
            self.header = self
                .rows
                .iter()
                .position(|r| matches!(r.kind, RowKind::Header));
            self.rebuild();
        }
        let ix = &mut *self.ix;
        (ix.leaf, ix.append_parent, ix.side_parent) = keep;
        inserted
    }

    /// Appends a `message` entry (`{type, id, parentId, timestamp, message}`) as a child of the
    /// append cursor and moves the leaf to it. Returns the new 8-hex id. Any JSON value but
    /// `null` is accepted, as in the reference (which throws on `null` and `undefined`).
    ///
    /// # Errors
    /// [`AppendError::NullMessage`] for `null` (nothing is changed); otherwise serialising a
    /// typed payload, read-only manager, write failure.
    pub fn append_message(&mut self, message: impl Payload) -> Result<String, AppendError> {
        let message = message
            .into_value()
            .map_err(|source| AppendError::Serialize { source })?;
        if message.is_null() {
            // The reference reads `message.role` first and throws; nothing changes.
            return Err(AppendError::NullMessage);
        }
        let value = build::message(&self.base(), message);
        self.append_value(value)
    }

    /// Appends `thinking_level_change{thinkingLevel}`. Returns the new id.
    ///
    /// # Errors
    /// As [`SessionManager::append_message`].
    pub fn append_thinking_level_change(&mut self, level: &str) -> Result<String, AppendError> {
        let value = build::thinking_level_change(&self.base(), level);
        self.append_value(value)
    }

    /// Appends `model_change{provider, modelId}`. Returns the new id.
    ///
    /// # Errors
    /// As [`SessionManager::append_message`].
    pub fn append_model_change(
        &mut self,
        provider: &str,
        model_id: &str,
    ) -> Result<String, AppendError> {
        let value = build::model_change(&self.base(), provider, model_id);
        self.append_value(value)
    }

    /// Appends `compaction{summary, firstKeptEntryId, tokensBefore, details?, fromHook?}`
    /// (`firstKeptEntryId` is not validated, as in the reference). Returns the new id.
    ///
    /// # Errors
    /// As [`SessionManager::append_message`].
    pub fn append_compaction(
        &mut self,
        summary: &str,
        first_kept_entry_id: &str,
        tokens_before: f64,
        details: Option<JsValue>,
        from_hook: Option<bool>,
    ) -> Result<String, AppendError> {
        self.append_compaction_js(
            summary,
            &JsString::from(first_kept_entry_id),
            tokens_before,
            details,
            from_hook,
        )
    }

    /// As [`SessionManager::append_compaction`] with `firstKeptEntryId` as any JavaScript
    /// string (written exactly, lone surrogates included).
    ///
    /// # Errors
    /// As [`SessionManager::append_message`].
    pub fn append_compaction_js(
        &mut self,
        summary: &str,
        first_kept_entry_id: &JsString,
        tokens_before: f64,
        details: Option<JsValue>,
        from_hook: Option<bool>,
    ) -> Result<String, AppendError> {
        let mut value =
            build::compaction(&self.base(), summary, "", tokens_before, details, from_hook);
        if let Some(o) = value.as_object_mut() {
            o.insert(
                "firstKeptEntryId",
                JsValue::String(first_kept_entry_id.clone()),
            );
        }
        self.append_value(value)
    }

    /// Appends `custom{customType, data?}` (extension state; never in the model context).
    /// Returns the new id.
    ///
    /// # Errors
    /// As [`SessionManager::append_message`].
    pub fn append_custom_entry(
        &mut self,
        custom_type: &str,
        data: Option<JsValue>,
    ) -> Result<String, AppendError> {
        let value = build::custom(&self.base(), custom_type, data);
        self.append_value(value)
    }

    /// Appends `custom_message{customType, content, display, details?}` (enters the model
    /// context as a `custom` message). Returns the new id.
    ///
    /// # Errors
    /// As [`SessionManager::append_message`].
    pub fn append_custom_message_entry(
        &mut self,
        custom_type: &str,
        content: impl Payload,
        display: bool,
        details: Option<JsValue>,
    ) -> Result<String, AppendError> {
        let content = content
            .into_value()
            .map_err(|source| AppendError::Serialize { source })?;
        let value = build::custom_message(&self.base(), custom_type, content, display, details);
        self.append_value(value)
    }

    /// Appends `session_info{name}` with the name `trim()`med (JavaScript whitespace; inner
    /// newlines are kept — FINDINGS c). Returns the new id.
    ///
    /// # Errors
    /// As [`SessionManager::append_message`].
    pub fn append_session_info(
        &mut self,
        name: impl Into<JsString>,
    ) -> Result<String, AppendError> {
        let trimmed = js_trim_js(&name.into());
        let mut value = build::session_info(&self.base(), "");
        if let Some(o) = value.as_object_mut() {
            o.insert("name", JsValue::String(trimmed));
        }
        self.append_value(value)
    }

    /// Appends `label{targetId, label?}` (`None` omits the key, which clears the label, as does
    /// `""`). Returns the new id.
    ///
    /// # Errors
    /// [`AppendError::EntryNotFound`] (`Entry <id> not found`) when `target_id` is not an
    /// entry id; otherwise as [`SessionManager::append_message`].
    pub fn append_label_change(
        &mut self,
        target_id: &str,
        label: Option<&str>,
    ) -> Result<String, AppendError> {
        self.append_label_change_value(target_id, label.map(JsValue::from))
    }

    /// As [`SessionManager::append_label_change`] with the label as any JSON value (written as
    /// given, as the reference does; a truthy value sets the label, anything else clears it).
    ///
    /// # Errors
    /// As [`SessionManager::append_label_change`].
    pub fn append_label_change_value(
        &mut self,
        target_id: &str,
        label: Option<JsValue>,
    ) -> Result<String, AppendError> {
        self.append_label_change_wtf8(target_id.as_bytes(), label)
    }

    /// As [`SessionManager::append_label_change_value`] with the target as any JavaScript
    /// string (lone surrogates included).
    ///
    /// # Errors
    /// As [`SessionManager::append_label_change`].
    pub fn append_label_change_js(
        &mut self,
        target_id: &JsString,
        label: Option<JsValue>,
    ) -> Result<String, AppendError> {
        self.append_label_change_wtf8(target_id.as_wtf8(), label)
    }

    fn append_label_change_wtf8(
        &mut self,
        target_id: &[u8],
        label: Option<JsValue>,
    ) -> Result<String, AppendError> {
        let Some((target, _)) = self.ix.by_id.get_key_value(target_id) else {
            return Err(AppendError::EntryNotFound {
                id: String::from_utf8_lossy(target_id).into_owned(),
            });
        };
        let target = target.clone();
        let mut value = build::label(&self.base(), "", None);
        if let Some(o) = value.as_object_mut() {
            o.insert("targetId", target.to_value());
            if let Some(l) = label {
                o.insert("label", l);
            }
        }
        self.append_value(value)
    }

    // ------------------------------------------------------------------------------------
    // Branching (§2.6, §2.9)

    fn resolve_branch(&self, id: &[u8]) -> Result<Option<Id>, BranchError> {
        self.ix
            .resolve_branch_target(id)
            .ok_or_else(|| BranchError::EntryNotFound {
                id: String::from_utf8_lossy(id).into_owned(),
            })
    }

    /// Moves leaf and append cursor to `id` (an opaque id selects its canonical ancestor).
    /// Nothing is written. The next append lands under `id` whatever another writer appends
    /// meanwhile (this settles a pending [`AppendError::Diverged`], docs/DEVIATIONS.md D30).
    ///
    /// # Errors
    /// [`BranchError::EntryNotFound`] (`Entry <id> not found`).
    pub fn branch(&mut self, id: &str) -> Result<(), BranchError> {
        self.branch_wtf8(id.as_bytes())
    }

    /// As [`SessionManager::branch`] for any JavaScript string (lone surrogates included).
    ///
    /// # Errors
    /// As [`SessionManager::branch`].
    pub fn branch_js(&mut self, id: &JsString) -> Result<(), BranchError> {
        self.branch_wtf8(id.as_wtf8())
    }

    fn branch_wtf8(&mut self, id: &[u8]) -> Result<(), BranchError> {
        let target = self.resolve_branch(id)?;
        self.ix.leaf = target.clone();
        self.ix.append_parent = target;
        self.ix.side_parent = None;
        self.pin_cursor();
        Ok(())
    }

    /// Sets leaf and append cursor to null: the next append is a new root. Nothing is written.
    /// As after [`SessionManager::branch`], the next append lands there whatever another
    /// writer appends meanwhile.
    pub fn reset_leaf(&mut self) {
        self.ix.leaf = None;
        self.ix.append_parent = None;
        self.ix.side_parent = None;
        self.pin_cursor();
    }

    /// An explicit move of the leaf: other writers' lines adopted so far are settled, and the
    /// next append lands where the caller moved the leaf (crate::foreign).
    fn pin_cursor(&mut self) {
        self.foreign_since = None;
        self.pinned = true;
    }

    /// Moves to `from_id` (or to no leaf for `None`) and appends
    /// `branch_summary{fromId: target ?? "root", summary, details?, fromHook?}` under it.
    /// Returns the new id.
    ///
    /// # Errors
    /// [`BranchError::EntryNotFound`] for an unknown id; write errors.
    pub fn branch_with_summary(
        &mut self,
        from_id: Option<&str>,
        summary: &str,
        details: Option<JsValue>,
        from_hook: Option<bool>,
    ) -> Result<String, BranchError> {
        self.branch_with_summary_wtf8(from_id.map(str::as_bytes), summary, details, from_hook)
    }

    /// As [`SessionManager::branch_with_summary`] with the id as any JavaScript string (lone
    /// surrogates included).
    ///
    /// # Errors
    /// As [`SessionManager::branch_with_summary`].
    pub fn branch_with_summary_js(
        &mut self,
        from_id: Option<&JsString>,
        summary: &str,
        details: Option<JsValue>,
        from_hook: Option<bool>,
    ) -> Result<String, BranchError> {
        self.branch_with_summary_wtf8(from_id.map(JsString::as_wtf8), summary, details, from_hook)
    }

    fn branch_with_summary_wtf8(
        &mut self,
        from_id: Option<&[u8]>,
        summary: &str,
        details: Option<JsValue>,
        from_hook: Option<bool>,
    ) -> Result<String, BranchError> {
        if self.read_only {
            return Err(BranchError::ReadOnly {
                path: self.file_path(),
            });
        }
        let target = match from_id {
            None => None,
            Some(id) => self.resolve_branch(id)?,
        };
        let before = (
            self.ix.leaf.clone(),
            self.ix.append_parent.clone(),
            self.ix.side_parent.clone(),
        );
        let pin_before = (self.foreign_since, self.pinned);
        self.ix.leaf = target.clone();
        self.ix.append_parent = target.clone();
        self.pin_cursor();
        let mut value = build::branch_summary(&self.base(), "root", summary, details, from_hook);
        if let (Some(o), Some(t)) = (value.as_object_mut(), &target) {
            o.insert("fromId", t.to_value());
        }
        match self.append_value(value) {
            Ok(id) => Ok(id),
            Err(e) => {
                // A failed append changes nothing, the move to the target included.
                let ix = &mut *self.ix;
                (ix.leaf, ix.append_parent, ix.side_parent) = before;
                (self.foreign_since, self.pinned) = pin_before;
                Err(e.into())
            }
        }
    }

    /// Switches this manager **in place** to a new session holding only the path from the
    /// root to `leaf_id` (openclaw-jsonl.md §2.9): label entries and leaf controls on the path
    /// are dropped, every kept entry and parent-linked opaque row is re-parented onto the
    /// previous kept node (so descendants of a mid-path label stay connected), and each label
    /// whose target is on the path is re-created at the end with its original timestamp, in
    /// label insertion order. A compaction on the path whose `firstKeptEntryId` the copy would
    /// lose (a dropped label or leaf control) keeps from the next copied entry of the path
    /// instead (that row serialised afresh), so the new session's context equals the source's
    /// (docs/DEVIATIONS.md D31; the reference keeps the dropped id). The new header is `version:3`, new id, this cwd, `parentSession`
    /// = the previous file (persisting managers only). Rows whose parent does not change keep
    /// their bytes. The new file is written at once only when the path holds an assistant
    /// message. Returns the new file path (`None` in memory).
    ///
    /// # Errors
    /// [`BranchError::EntryNotFound`] when the path holds no entry; write errors (the manager
    /// then stays on the session it had, unchanged).
    pub fn create_branched_session(
        &mut self,
        leaf_id: &str,
    ) -> Result<Option<PathBuf>, BranchError> {
        self.create_branched_session_wtf8(leaf_id.as_bytes())
    }

    /// As [`SessionManager::create_branched_session`] with the leaf as any JavaScript string
    /// (lone surrogates included).
    ///
    /// # Errors
    /// As [`SessionManager::create_branched_session`].
    pub fn create_branched_session_js(
        &mut self,
        leaf_id: &JsString,
    ) -> Result<Option<PathBuf>, BranchError> {
        self.create_branched_session_wtf8(leaf_id.as_wtf8())
    }

    fn create_branched_session_wtf8(
        &mut self,
        leaf_id: &[u8],
    ) -> Result<Option<PathBuf>, BranchError> {
        if self.read_only {
            return Err(BranchError::ReadOnly {
                path: self.file_path(),
            });
        }
        enum Node<'a> {
            Entry(usize),
            Opaque(&'a Id, usize),
        }
        let mut opaque_by_id: Map<&[u8], (&Id, usize)> = Map::default();
        for (i, row) in self.rows.iter().enumerate() {
            match &row.kind {
                RowKind::Leaf(l) => {
                    opaque_by_id.insert(l.id.as_bytes(), (&l.id, i));
                }
                RowKind::Linked { id, .. } => {
                    opaque_by_id.insert(id.as_bytes(), (id, i));
                }
                _ => {}
            }
        }
        let opaque_at = |id: &[u8]| -> Option<(&Id, usize)> { opaque_by_id.get(id).copied() };
        let mut nodes: Vec<Node<'_>> = Vec::new();
        let mut seen: Set<&[u8]> = Set::default();
        let mut cur: Option<&[u8]> = Some(leaf_id).filter(|s| !s.is_empty());
        while let Some(c) = cur.take() {
            if !seen.insert(c) {
                break;
            }
            if let Some(&i) = self.ix.by_id.get(c) {
                nodes.push(Node::Entry(i));
                let Some(e) = self.rows[i].kind.entry() else {
                    break;
                };
                if let Some(logical) = self.ix.logical_parents.get(&e.id) {
                    let mut physical = e.parent.as_id().filter(|s| !s.is_empty()).map(Id::as_bytes);
                    while let Some(p) = physical.take() {
                        if seen.contains(p) {
                            break;
                        }
                        let Some((pid, r)) = opaque_at(p) else {
                            break;
                        };
                        let Some(next) = self.ix.opaque_parent(p) else {
                            break;
                        };
                        seen.insert(p);
                        physical = next.filter(|s| !s.is_empty()).map(Id::as_bytes);
                        nodes.push(Node::Opaque(pid, r));
                    }
                    cur = logical.as_ref().filter(|s| !s.is_empty()).map(Id::as_bytes);
                } else {
                    cur = e.parent.as_id().filter(|s| !s.is_empty()).map(Id::as_bytes);
                }
                continue;
            }
            let Some((cid, r)) = opaque_at(c) else {
                break;
            };
            let Some(next) = self.ix.opaque_parent(c) else {
                break;
            };
            cur = next.filter(|s| !s.is_empty()).map(Id::as_bytes);
            nodes.push(Node::Opaque(cid, r));
        }

        // Compactions whose first kept entry the copy would lose (a dropped label or leaf
        // control, or an opaque row that would resolve elsewhere) keep from the next copied
        // entry instead, so the context at every kept entry is the source's.
        let path_entries: Vec<usize> = nodes
            .iter()
            .rev()
            .filter_map(|n| match n {
                Node::Entry(i) => Some(*i),
                Node::Opaque(..) => None,
            })
            .collect();
        let copied_opaque: Set<&[u8]> = nodes
            .iter()
            .filter_map(|n| match n {
                Node::Opaque(id, r) if matches!(self.rows[*r].kind, RowKind::Linked { .. }) => {
                    Some(id.as_bytes())
                }
                _ => None,
            })
            .collect();
        let kept = self.first_kept_remaps(&path_entries, &copied_opaque)?;

        let mut path_rows: Vec<Row> = Vec::new();
        let mut entry_ids: Set<Id> = Set::default();
        let mut used_ids: Set<Vec<u8>> = Set::default();
        let mut tail: Option<Id> = None;
        for node in nodes.iter().rev() {
            match node {
                Node::Entry(i) => {
                    let row = &self.rows[*i];
                    let Some(e) = row.kind.entry() else { continue };
                    if e.ty == EntryType::Label {
                        continue;
                    }
                    let same = match (&e.parent, &tail) {
                        (Parent::Null, None) => true,
                        (Parent::Str(p), Some(t)) => p == t,
                        _ => false,
                    };
                    let mut keys: Vec<(&str, Option<JsValue>)> = Vec::new();
                    if !same {
                        keys.push(("parentId", Some(ids::opt_value(tail.as_ref()))));
                    }
                    if let Some(k) = kept.get(i) {
                        keys.push(("firstKeptEntryId", Some(k.to_value())));
                    }
                    let new_row = if keys.is_empty() {
                        row.clone()
                    } else {
                        row.with_keys(&self.buf, &keys)
                            .map_err(|e| self.read_error(*i, e))?
                    };
                    entry_ids.insert(e.id.clone());
                    used_ids.insert(e.id.as_bytes().to_vec());
                    tail = Some(e.id.clone());
                    path_rows.push(new_row);
                }
                Node::Opaque(id, r) => {
                    let row = &self.rows[*r];
                    let current = match &row.kind {
                        RowKind::Leaf(_) => continue,
                        RowKind::Linked { parent, .. } => parent.clone(),
                        _ => None,
                    };
                    let new_row = if current == tail {
                        row.clone()
                    } else {
                        row.with_keys(
                            &self.buf,
                            &[("parentId", Some(ids::opt_value(tail.as_ref())))],
                        )
                        .map_err(|e| self.read_error(*r, e))?
                    };
                    used_ids.insert(id.as_bytes().to_vec());
                    tail = Some((*id).clone());
                    path_rows.push(new_row);
                }
            }
        }
        if entry_ids.is_empty() {
            return Err(BranchError::EntryNotFound {
                id: String::from_utf8_lossy(leaf_id).into_owned(),
            });
        }
        let new_id = new_session_id();
        let ts = now_timestamp();
        let previous = self
            .session_file
            .as_ref()
            .map(|p| p.to_string_lossy().into_owned());
        let parent_session = if self.persist { previous } else { None };
        let header = self.header_value(&new_id, &ts, parent_session.as_deref());
        let mut header_row = Row::from_value(&header);
        header_row.kind = RowKind::Header;

        let mut label_rows = Vec::new();
        let mut parent = tail;
        for (target, state) in &self.ix.labels {
            if !entry_ids.contains(target) {
                continue;
            }
            let id = new_entry_id(|c| used_ids.contains(c.as_bytes()));
            used_ids.insert(id.as_bytes().to_vec());
            let mut o = JsObject::new();
            o.insert("type", JsValue::from("label"));
            o.insert("id", JsValue::from(id.as_str()));
            o.insert("parentId", ids::opt_value(parent.as_ref()));
            if let Some(t) = &state.timestamp {
                o.insert("timestamp", clone_value(t));
            }
            o.insert("targetId", target.to_value());
            o.insert("label", clone_value(&state.label));
            label_rows.push(Row::from_value(&JsValue::Object(o)));
            parent = Some(Id::from(id));
        }

        let mut new_rows = Vec::with_capacity(path_rows.len() + label_rows.len() + 1);
        new_rows.push(header_row);
        new_rows.extend(path_rows);
        new_rows.extend(label_rows);
        // A failed write of the new file leaves this manager on the session it had.
        let before = (
            self.save(),
            self.session_id.clone(),
            self.session_file.clone(),
            Arc::clone(&self.first_line),
            self.cache_key.clone(),
            self.conflict_backups.clone(),
            self.load_report.clone(),
        );
        self.rows = new_rows.into();
        self.header = Some(0);
        self.session_id = new_id.clone();
        self.rebuild();
        self.disk = DiskImage::Absent;
        self.snapshot = None;
        self.first_line = Arc::from(&[][..]);
        self.cache_key = None;
        self.held = self.rows.len();
        self.conflict_backups.clear();
        self.adopted_lines = 0;
        let foreign_before = (self.foreign_since, self.pinned);
        (self.foreign_since, self.pinned) = (None, false);
        if !self.persist {
            return Ok(None);
        }
        let file = paths::normalize(&self.session_dir.join(session_file_name(&ts, &new_id)));
        self.session_file = Some(file.clone());
        self.load_report = OpenReport {
            path: file.clone(),
            ..OpenReport::default()
        };
        if self.ix.assistants > 0 {
            if let Err(e) = self.rewrite() {
                let (saved, id, file_before, first_line, cache_key, backups, report) = before;
                self.restore(saved);
                (self.session_id, self.session_file, self.first_line) =
                    (id, file_before, first_line);
                (self.cache_key, self.conflict_backups, self.load_report) =
                    (cache_key, backups, report);
                (self.foreign_since, self.pinned) = foreign_before;
                return Err(e.into_branch(file));
            }
            self.flushed = true;
        } else {
            self.flushed = false;
        }
        Ok(Some(file))
    }

    /// For a copy of the path `entries` (entry rows root to leaf, labels included; labels are
    /// dropped, and of the opaque rows on the path only `copied_opaque` are kept): the
    /// compactions (by row) whose `firstKeptEntryId` must be rewritten, with the id to write.
    /// A compaction's first kept entry as reads resolve it ([`EntryRef::value`], §2.3) that
    /// lies on the path before it is where its context resumes; when the copy would not find
    /// the same place (the stored id names a dropped label or leaf control, or an opaque row
    /// whose ancestor is a dropped label), the id becomes the first copied entry from there
    /// on (the compaction itself when only labels lie between). Labels add no message, so the
    /// context is unchanged; a first kept entry off the path or after the compaction is left
    /// as it is (the context keeps nothing before the compaction either way, pi-format.md
    /// §3.5).
    ///
    /// # Errors
    /// [`ReadError`] when a compaction row no longer parses (a bug).
    fn first_kept_remaps(
        &self,
        entries: &[usize],
        copied_opaque: &Set<&[u8]>,
    ) -> Result<Map<usize, Id>, ReadError> {
        let mut out: Map<usize, Id> = Map::default();
        let is_label = |i: usize| {
            self.rows[i]
                .kind
                .entry()
                .is_some_and(|e| e.ty == EntryType::Label)
        };
        let mut position: Map<&Id, usize> = Map::default();
        for (k, &i) in entries.iter().enumerate() {
            let Some(e) = self.rows[i].kind.entry() else {
                continue;
            };
            position.entry(&e.id).or_insert(k);
            if e.ty != EntryType::Compaction {
                continue;
            }
            let entry = crate::EntryRef::new(self, i);
            let stored = entry
                .raw_value()?
                .get("firstKeptEntryId")
                .and_then(JsValue::as_js_string)
                .map(|s| Id::new(s.clone()));
            let resolved = entry
                .value()?
                .get("firstKeptEntryId")
                .and_then(JsValue::as_js_string)
                .map(|s| Id::new(s.clone()));
            let (Some(stored), Some(resolved)) = (stored, resolved) else {
                continue;
            };
            let Some(&p) = position.get(&resolved).filter(|&&p| p < k) else {
                continue;
            };
            let Some(target) = entries[p..=k]
                .iter()
                .copied()
                .find(|&j| !is_label(j))
                .and_then(|j| self.rows[j].kind.entry().map(|e| e.id.clone()))
            else {
                continue;
            };
            // The stored id names a row the copy keeps: an entry of the path that is not a
            // label, or a parent-linked opaque row of the path.
            let stored_copied = (position.contains_key(&stored)
                && self.ix.by_id.get(&stored).is_some_and(|&j| !is_label(j)))
                || copied_opaque.contains(stored.as_bytes());
            let lands_on_label = self.ix.by_id.get(&resolved).is_some_and(|&j| is_label(j));
            if stored != target && (!stored_copied || lands_on_label) {
                out.insert(i, target);
            }
        }
        Ok(out)
    }

    // ------------------------------------------------------------------------------------
    // Removal (§2.10, Gen J)

    /// Removes the run of entries at the physical tail for which `predicate` holds, after
    /// skipping trailing entries for which `preserve_trailing` holds (the header never counts),
    /// plus later labels targeting removed ids. Surviving rows (entries and opaque rows,
    /// including leaf controls' `targetId`/`appendParentId`) are re-parented past removed ids;
    /// the leaf becomes the canonical form of the first removed row's parent and the append
    /// cursor that parent. Then the file is rewritten in full (even without an assistant).
    /// Returns how many entries were removed (labels not counted).
    ///
    /// # Errors
    /// [`RemoveError`] when the rewrite fails (the session in memory is left as it was).
    pub fn remove_trailing_entries(
        &mut self,
        mut predicate: impl FnMut(crate::EntryRef<'_>) -> bool,
        mut preserve_trailing: Option<&mut dyn FnMut(crate::EntryRef<'_>) -> bool>,
    ) -> Result<usize, RemoveError> {
        if self.read_only {
            return Err(RemoveError::ReadOnly {
                path: self.file_path(),
            });
        }
        let file_entries: Vec<usize> = self
            .rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.kind.is_file_entry())
            .map(|(i, _)| i)
            .collect();
        let is_entry = |i: usize| self.rows[i].kind.entry().is_some();
        let mut preserved_start = file_entries.len();
        if let Some(keep) = preserve_trailing.as_mut() {
            while preserved_start > 1 {
                let i = file_entries[preserved_start - 1];
                if !is_entry(i) || !keep(crate::EntryRef::new(self, i)) {
                    break;
                }
                preserved_start -= 1;
            }
        }
        let mut remove_start = preserved_start;
        while remove_start > 1 {
            let i = file_entries[remove_start - 1];
            if !is_entry(i) || !predicate(crate::EntryRef::new(self, i)) {
                break;
            }
            remove_start -= 1;
        }
        if remove_start == preserved_start {
            return Ok(0);
        }
        let removed: Vec<usize> = file_entries[remove_start..preserved_start].to_vec();
        let removed_count = removed.len();
        let mut drop_rows: Set<usize> = removed.iter().copied().collect();
        let mut removed_parent: Map<Id, Option<Id>> = Map::default();
        let parent_of = |p: &Parent| p.as_id().cloned();
        for &i in &removed {
            if let Some(e) = self.rows[i].kind.entry() {
                removed_parent.insert(e.id.clone(), parent_of(&e.parent));
            }
        }
        for &i in &file_entries[preserved_start..] {
            if let Some(e) = self.rows[i].kind.entry()
                && e.ty == EntryType::Label
                && let Some(target) = e.label.as_ref().and_then(|l| l.target.as_ref())
                && removed_parent.contains_key(target)
            {
                removed_parent.insert(e.id.clone(), parent_of(&e.parent));
                drop_rows.insert(i);
            }
        }
        let resolve = |start: Option<&Id>| -> Option<Id> {
            let mut seen: Set<&Id> = Set::default();
            let mut cur = start;
            while let Some(c) = cur {
                if c.is_empty() || !removed_parent.contains_key(c) || !seen.insert(c) {
                    break;
                }
                cur = removed_parent.get(c).and_then(Option::as_ref);
            }
            cur.cloned()
        };
        let first_parent = removed
            .first()
            .and_then(|&i| self.rows[i].kind.entry())
            .and_then(|e| e.parent.as_id().cloned());
        let replacement = resolve(first_parent.as_ref());
        let saved = self.save();

        // Built aside, so a row that cannot be re-read leaves the session untouched.
        let held_from = self.rows.len().saturating_sub(self.held);
        let mut new_held = 0;
        let mut new_rows = Vec::with_capacity(self.rows.len());
        for (i, row) in self.rows.iter().enumerate() {
            if drop_rows.contains(&i) {
                continue;
            }
            if i >= held_from {
                new_held += 1;
            }
            let mut keys: Vec<(&str, Option<JsValue>)> = Vec::new();
            let mut relink = |key: &'static str, p: &Id| {
                let r = resolve(Some(p));
                if r.as_ref() != Some(p) {
                    keys.push((key, Some(ids::opt_value(r.as_ref()))));
                }
            };
            match &row.kind {
                RowKind::Entry(EntryMeta {
                    parent: Parent::Str(p),
                    ..
                })
                | RowKind::Linked {
                    parent: Some(p), ..
                }
                | RowKind::Opaque {
                    object: true,
                    parent: Parent::Str(p),
                    ..
                } => relink("parentId", p),
                RowKind::Leaf(l) => {
                    if let Some(p) = &l.parent {
                        relink("parentId", p);
                    }
                    if let Some(t) = &l.target {
                        relink("targetId", t);
                    }
                    if let Some(Some(a)) = &l.append_parent {
                        relink("appendParentId", a);
                    }
                }
                _ => {}
            }
            if keys.is_empty() {
                new_rows.push(row.clone());
            } else {
                let r = row
                    .with_keys(&self.buf, &keys)
                    .map_err(|e| RemoveError::Read(self.read_error(i, e)))?;
                new_rows.push(r);
            }
        }
        self.rows = new_rows.into();
        self.held = new_held;
        self.header = self
            .rows
            .iter()
            .position(|r| matches!(r.kind, RowKind::Header));
        self.rebuild();
        let leaf = self
            .ix
            .resolve_canonical(replacement.as_ref().map(Id::as_bytes));
        self.ix.leaf = leaf;
        self.ix.append_parent = replacement;
        if let Err(e) = self.rewrite() {
            self.restore(saved);
            return Err(e.into_remove(self.file_path()));
        }
        // Rows were removed: remembered row numbers no longer hold.
        self.foreign_since = None;
        Ok(removed_count)
    }

    // ------------------------------------------------------------------------------------
    // Full rewrites (§2.12)

    /// `rewriteFile`: a full rewrite when persisting (flushed is left as it is), under the
    /// write lock when one is set.
    pub(crate) fn rewrite(&mut self) -> Result<(), FullWriteError> {
        if !self.persist || self.session_file.is_none() {
            return Ok(());
        }
        self.write_full_locked(false)
    }

    /// [`SessionManager::write_full`] inside the session write lock when one is set.
    fn write_full_locked(&mut self, judge: bool) -> Result<(), FullWriteError> {
        let Some(path) = self.session_file.clone() else {
            return Ok(());
        };
        self.under_lock(&path, |sm| sm.write_full(judge))
            .map_err(FullWriteError::Lock)?
    }

    /// Forces a full write of a persisting session now (the reference's
    /// `flushPendingPersistence`, absent from 2026.6.11): useful after held appends. Lines
    /// another writer appended meanwhile are adopted and judged as before a plain append
    /// ([`ForeignAppendPolicy`], docs/DEVIATIONS.md D30).
    ///
    /// # Errors
    /// [`AppendError::Write`]; [`AppendError::Diverged`] under
    /// [`ForeignAppendPolicy::FastForward`] when the other writer's entries do not continue
    /// this manager's leaf (e.g. they answered under the persisted base while this manager
    /// holds its own rows): nothing is written, the held rows stay held, the other writer's
    /// rows are adopted (a tip can be reached with [`SessionManager::branch`]).
    pub fn flush(&mut self) -> Result<(), AppendError> {
        if !self.persist || self.session_file.is_none() || self.flushed {
            return Ok(());
        }
        self.write_full_locked(true)
            .map_err(|e| e.into_append(self.file_path()))?;
        self.flushed = true;
        self.pinned = false;
        Ok(())
    }

    /// Writes this manager's whole session to its file now, whether or not it is flushed: an
    /// atomic full rewrite with the usual checks (lines another writer appended are adopted
    /// first, a file changed in any other way is backed up byte for byte first; D11). The way
    /// to go on after [`AppendError::FileDeleted`] (the file is written again) or
    /// [`AppendError::FileReplaced`] (this session replaces the other file, which is kept as a
    /// `.conflict-` backup), instead of reopening.
    ///
    /// Lines another writer appended are judged as before a plain append
    /// ([`ForeignAppendPolicy`], docs/DEVIATIONS.md D30): under
    /// [`ForeignAppendPolicy::FastForward`] the leaf moves to their tip when they continue it.
    ///
    /// # Errors
    /// [`AppendError::ReadOnly`]; [`AppendError::Write`] (nothing changed on disk or in memory);
    /// [`AppendError::Diverged`] under [`ForeignAppendPolicy::FastForward`] when the other
    /// writer's entries start another branch (nothing written; their rows are adopted, rows
    /// held in memory stay held).
    pub fn rewrite_file(&mut self) -> Result<(), AppendError> {
        if self.read_only {
            return Err(AppendError::ReadOnly {
                path: self.file_path(),
            });
        }
        if !self.persist || self.session_file.is_none() {
            return Ok(());
        }
        let saved = self.save();
        match self.write_full_locked(true) {
            Ok(()) => {}
            Err(FullWriteError::Diverged(e)) => return Err(e),
            Err(e) => {
                self.restore(saved);
                return Err(e.into_append(self.file_path()));
            }
        }
        self.flushed = true;
        self.pinned = false;
        Ok(())
    }

    /// `syncSnapshotAfterHeaderRewrite` (openclaw-jsonl.md §3.3): someone else rewrote this
    /// manager's file (e.g. normalised its header) and tells the manager, with the bytes it
    /// wrote when it has them. The file is re-read with stat-read-stat:
    /// - a stable read holding `expected` (or any stable read when `expected` is `None`): the
    ///   manager takes the file as it now is (rows, index, snapshot; rows it still holds
    ///   unwritten stay after them, and the leaf and append cursor stay where they were when
    ///   their entries still exist), the file is re-cached, and, only when `expected` was given
    ///   and matched, the snapshot is published to the owner;
    /// - bytes other than `expected`, or an unstable read: the warm cache entry is dropped,
    ///   nothing is published, and the manager keeps its rows but no longer trusts the file
    ///   (its next full rewrite backs it up first, D11).
    ///
    /// A file over the cache's byte cap is neither verified nor cached (`{snapshot, false,
    /// false}`, as the reference); the manager still takes its content (read with
    /// stat-read-stat).
    ///
    /// # Errors
    /// [`OpenError`] when the file cannot be read (or keeps changing).
    pub fn sync_snapshot_after_header_rewrite(
        &mut self,
        expected: Option<&[u8]>,
    ) -> Result<SnapshotSync, OpenError> {
        let Some(path) = self.session_file.clone() else {
            return Ok(SnapshotSync {
                snapshot: None,
                verified_write: false,
                stable_read: false,
            });
        };
        let r =
            cache::reread(&*self.storage, &path, expected).map_err(|source| OpenError::Read {
                path: path.clone(),
                source,
            })?;
        self.parsed_lines += r.scanned;
        self.cache_key = cache::key_in(&*self.storage, &path);
        let over_cap = r
            .sync
            .snapshot
            .is_some_and(|s| s.size > cache::limits().max_bytes);
        if r.sync.stable_read {
            match (r.state, r.bytes, r.sync.snapshot) {
                (Some(w), _, _) => self.reload(
                    path,
                    Fetched::Warm {
                        state: w,
                        scanned: 0,
                    },
                )?,
                (None, Some(buf), Some(snapshot)) => {
                    self.reload(path, Fetched::Cold { buf, snapshot })?;
                }
                _ => {}
            }
            if r.sync.verified_write {
                let owner = self.active_owner();
                if let Some(snap) = r.sync.snapshot {
                    self.publish(owner.as_ref(), &snap);
                }
            }
        } else if over_cap {
            let fetch = cache::fetch(&*self.storage, &path)?;
            self.reload(path, fetch.fetched)?;
        } else {
            self.snapshot = r.sync.snapshot;
            if r.sync.snapshot.is_some() {
                self.disk = DiskImage::Unknown;
            }
        }
        Ok(r.sync)
    }

    /// Takes the file's current content as this manager's (see
    /// [`SessionManager::sync_snapshot_after_header_rewrite`]).
    fn reload(&mut self, path: PathBuf, fetched: Fetched) -> Result<(), OpenError> {
        let held_from = self.rows.len().saturating_sub(self.held);
        let held: Vec<Row> = self.rows[held_from..].to_vec();
        let keep = (
            self.ix.leaf.clone(),
            self.ix.append_parent.clone(),
            self.ix.side_parent.clone(),
        );
        let backups = std::mem::take(&mut self.conflict_backups);
        let adopted = self.adopted_lines;
        let pinned = self.pinned;
        let key = self.cache_key.clone();
        match fetched {
            Fetched::Warm { state, scanned } => {
                self.adopt_warm(path, *state, key);
                self.parsed_lines += scanned;
            }
            Fetched::Cold { buf, snapshot } => {
                let loaded = rows::load(&buf);
                self.parsed_lines += loaded.scanned;
                self.set_loaded(path, Some(buf), Some(loaded), false)?;
                self.snapshot = Some(snapshot);
                self.cache_key = key;
            }
            Fetched::Missing => {
                self.disk = DiskImage::Absent;
                self.snapshot = None;
            }
        }
        self.conflict_backups = backups;
        self.adopted_lines = adopted;
        // The file's content is this manager's now (nothing left to judge); an explicit move
        // of the leaf stays in force with the cursor below.
        (self.foreign_since, self.pinned) = (None, pinned);
        if !held.is_empty() {
            let from = self.rows.len();
            self.held = held.len();
            self.rows.extend(held);
            self.ix.extend(&self.rows, from);
            self.flushed = false;
        }
        let known = |ix: &Index, id: &Option<Id>| {
            id.as_ref()
                .is_none_or(|i| ix.by_id.contains_key(i) || ix.is_opaque(i.as_bytes()))
        };
        let (leaf, append, side) = keep;
        if known(&self.ix, &leaf) && known(&self.ix, &append) {
            let ix = &mut *self.ix;
            ix.leaf = leaf;
            ix.append_parent = append;
            ix.side_parent = side;
        }
        Ok(())
    }

    /// The file-implied `(leaf, append cursor, raw tail)` of the current rows (invalid leaf
    /// controls skipped), as `getPersistedFileEntries` replays them.
    fn persisted_state(&self) -> (Option<Id>, Option<Id>, Option<Id>) {
        let mut leaf = None;
        let mut append = None;
        let mut raw_tail = None;
        for row in &self.rows {
            match &row.kind {
                RowKind::Leaf(l) => {
                    raw_tail = Some(l.id.clone());
                    if self.ix.invalid_leaf.contains(&l.id) {
                        continue;
                    }
                    let target = self.ix.resolve_leaf_target(l.target.as_ref());
                    append = match &l.append_parent {
                        None => target.clone(),
                        Some(ap) => self.ix.resolve_opaque_append_parent(ap.as_ref()),
                    };
                    leaf = target;
                }
                RowKind::Entry(e) => {
                    leaf = Some(e.id.clone());
                    append = Some(e.id.clone());
                    raw_tail = Some(e.id.clone());
                }
                RowKind::Linked { id, .. } => {
                    append = Some(id.clone());
                    raw_tail = Some(id.clone());
                }
                _ => {}
            }
        }
        (leaf, append, raw_tail)
    }

    /// Appends a leaf control when the file-implied leaf or append cursor differs from memory,
    /// and remembers it as a row so the next rewrite does not repeat it. Every id it names is
    /// written from the exact id.
    fn synthesize_leaf_control(&mut self) {
        let (leaf, append, raw_tail) = self.persisted_state();
        if leaf == self.ix.leaf && append == self.ix.append_parent {
            return;
        }
        let base = RowBase {
            id: self.new_id(),
            parent_id: None,
            timestamp: now_timestamp(),
        };
        let with_append = self.ix.append_parent != self.ix.leaf;
        let mut value = build::leaf_control(&base, None, with_append.then_some(None), false);
        if let Some(o) = value.as_object_mut() {
            o.insert("parentId", ids::opt_value(raw_tail.as_ref()));
            o.insert("targetId", ids::opt_value(self.ix.leaf.as_ref()));
            if with_append {
                o.insert(
                    "appendParentId",
                    ids::opt_value(self.ix.append_parent.as_ref()),
                );
            }
        }
        let row = Row::from_value(&value);
        let leaf = self.ix.leaf.clone();
        self.ix.insert_opaque(Id::from(base.id), leaf);
        self.rows.push(row);
    }

    /// The full file text: every row's bytes plus `\n`.
    pub(crate) fn serialized(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.buf.len() + 1024);
        for row in &self.rows {
            out.extend_from_slice(row.bytes(&self.buf));
            out.push(b'\n');
        }
        out
    }

    /// A full rewrite (docs/DEVIATIONS.md D11): first the file is compared with what this
    /// manager last read or wrote. Lines another writer appended since are adopted (kept
    /// verbatim, before the rows still held in memory); a file changed in any other way is
    /// first backed up byte for byte (`<file>.conflict-<ts>-<8hex>.jsonl`, mode and owner
    /// kept, listed in [`SessionManager::diagnostics`]). Nothing is overwritten when the backup
    /// fails.
    ///
    /// On [`FileStorage`] the check reads the file and the rename follows (the write lock, when
    /// set, keeps other writers out in between, §3.4). On any other storage the check reads the
    /// bytes with their snapshot ([`Storage::read_snapshot`]) and the replace is fenced on that
    /// snapshot ([`Storage::replace_if`]): when another writer changed the session in between
    /// (an append by another gateway), nothing is written, this manager's state goes back to
    /// what it was before the attempt, and the check runs again on the session as it now is
    /// (adopting that writer's lines), up to [`FENCED_REWRITE_ATTEMPTS`] times. A conflict
    /// backup an attempt made stays (it is a byte-exact copy, listed in the diagnostics).
    ///
    /// When `judge` is set (the first full write of held rows, `flush`, `rewrite_file`), the
    /// other writer's rows adopted by the check (and any a plain append left to judge) are
    /// judged as before a plain append ([`SessionManager::settle_foreign_until`], D30): they
    /// may move the cursor to their tip, or refuse the write.
    ///
    /// # Errors
    /// [`FullWriteError::Io`]: the read, backup or replace failed; on other storages also
    /// [`std::io::ErrorKind::ResourceBusy`] when every fenced attempt was refused (nothing
    /// written; the rows adopted by the attempts are dropped again).
    /// [`FullWriteError::Diverged`] (judged writes only): nothing written, the other writer's
    /// rows stay adopted (the belief about the file includes them) and remembered for the next
    /// judgement; the cursor is unchanged.
    fn write_full(&mut self, judge: bool) -> Result<(), FullWriteError> {
        let Some(path) = self.session_file.clone() else {
            return Ok(());
        };
        for _ in 0..FENCED_REWRITE_ATTEMPTS {
            let (current, expected) = if self.on_files() {
                // The file store's replace is not fenced (the write lock serialises full
                // rewrites, D11 checks the bytes): it needs the bytes only, and never refuses.
                match self.storage.read_all(&path) {
                    Ok(b) => (Some(b), None),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => (None, None),
                    Err(e) => return Err(FullWriteError::Io(e)),
                }
            } else {
                match self
                    .storage
                    .read_snapshot(&path)
                    .map_err(FullWriteError::Io)?
                {
                    storage::SnapshotRead::Missing => (None, None),
                    storage::SnapshotRead::Read { bytes, snapshot } => {
                        (Some(bytes), Some(snapshot))
                    }
                    storage::SnapshotRead::Changed => continue,
                }
            };
            let saved = self.save();
            let saved_foreign = self.foreign_since;
            let adopted_at = self
                .reconcile_before_rewrite(&path, current.as_deref())
                .map_err(FullWriteError::Io)?;
            if judge {
                if let Some(at) = adopted_at {
                    self.foreign_since.get_or_insert(at);
                }
                let until = self.rows.len().saturating_sub(self.held);
                self.settle_foreign_until(&path, until)
                    .map_err(FullWriteError::Diverged)?;
            }
            self.synthesize_leaf_control();
            let bytes = self.serialized();
            let replaced = self
                .storage
                .replace_if(&path, &bytes, expected.as_ref())
                .map_err(FullWriteError::Io)?;
            match replaced {
                storage::Replace::Done => {
                    // The incremental repair must not trust the prefix it saw before.
                    crate::repair::invalidate_repair_cache(&path);
                    self.full_write_done(&path, &bytes);
                    return Ok(());
                }
                // Another writer got in between: the next attempt sees what it did.
                storage::Replace::Refused => {
                    self.restore(saved);
                    self.foreign_since = saved_foreign;
                }
            }
        }
        Err(FullWriteError::Io(std::io::Error::new(
            std::io::ErrorKind::ResourceBusy,
            format!(
                "{} kept changing (other writers) during {FENCED_REWRITE_ATTEMPTS} fenced full \
                 rewrites in {}; nothing was written",
                path.display(),
                self.storage.name()
            ),
        )))
    }

    /// The check before a full rewrite (D11) of `current`, the session's bytes as just read
    /// (`None`: nothing stored): another writer's appended lines are adopted, any other change
    /// is backed up byte for byte first. Returns the first adopted row when rows were adopted.
    fn reconcile_before_rewrite(
        &mut self,
        path: &Path,
        current: Option<&[u8]>,
    ) -> std::io::Result<Option<usize>> {
        let mut adopted_at = None;
        match self.disk.check(current, &self.buf) {
            Verdict::Same | Verdict::Vanished => {}
            Verdict::Grew(at) => {
                if let Some(now) = current {
                    let at_row = self.rows.len().saturating_sub(self.held);
                    if self.adopt(&now[..at], &now[at..], at_row) > 0 {
                        adopted_at = Some(at_row);
                    }
                    // Known now: a retry after a failed rewrite does not adopt them twice.
                    if !self.disk.appended(at as u64, &now[at..]) {
                        self.disk = DiskImage::known(now);
                    }
                }
            }
            Verdict::Changed => {
                if let Some(now) = current {
                    let backup = crate::paths::backup_path(path, "conflict");
                    self.storage.backup_copy(path, &backup, now)?;
                    self.conflict_backups.push(backup);
                    self.disk = DiskImage::known(now);
                }
            }
        }
        Ok(adopted_at)
    }

    /// The state after a full rewrite of `bytes` landed.
    fn full_write_done(&mut self, path: &Path, bytes: &[u8]) {
        self.disk = DiskImage::known(bytes);
        self.held = 0;
        self.after_full_write(path, bytes);
    }

    /// `rememberWrittenSessionEntries(path, written)` after a full rewrite: the file is read
    /// back between two `stat`s; when it holds exactly the bytes written, it is re-cached
    /// (parsed once more, unless over the cache's byte cap) and its snapshot published to the
    /// owner. The manager's snapshot becomes the file's.
    fn after_full_write(&mut self, path: &Path, bytes: &[u8]) {
        self.cache_key = cache::key_in(&*self.storage, path);
        self.first_line = first_line(bytes);
        match cache::reread(&*self.storage, path, Some(bytes)) {
            Ok(r) => {
                self.parsed_lines += r.scanned;
                self.snapshot = r.sync.snapshot;
                if r.sync.verified_write
                    && let Some(snap) = r.sync.snapshot
                {
                    let owner = self.active_owner();
                    self.publish(owner.as_ref(), &snap);
                }
            }
            Err(_) => {
                cache::invalidate_key(self.cache_key.as_deref());
                self.snapshot = self.storage.stat(path).ok().flatten();
            }
        }
    }
}

/// How many times a full rewrite on a storage other than files reads, checks and tries its
/// fenced replace before giving up ([`Storage::replace_if`]; each refusal means another writer
/// changed the session in between).
pub const FENCED_REWRITE_ATTEMPTS: u32 = 8;

fn is_js_space(cp: u32) -> bool {
    matches!(
        cp,
        0x09..=0x0D
            | 0x20
            | 0xA0
            | 0x1680
            | 0x2000..=0x200A
            | 0x2028
            | 0x2029
            | 0x202F
            | 0x205F
            | 0x3000
            | 0xFEFF
    )
}

/// JavaScript `String.prototype.trim` on a JavaScript string (lone surrogates kept).
pub(crate) fn js_trim_js(s: &JsString) -> JsString {
    let cps: Vec<u32> = s.code_points().collect();
    let start = cps
        .iter()
        .position(|&c| !is_js_space(c))
        .unwrap_or(cps.len());
    let end = cps
        .iter()
        .rposition(|&c| !is_js_space(c))
        .map_or(start, |e| e + 1);
    let mut units: Vec<u16> = Vec::with_capacity(end - start);
    for &cp in &cps[start..end] {
        if cp >= 0x10000 {
            let v = cp - 0x10000;
            units.push(0xD800 + (v >> 10) as u16);
            units.push(0xDC00 + (v & 0x3FF) as u16);
        } else {
            units.push(cp as u16);
        }
    }
    JsString::from_utf16(&units)
}

/// JavaScript `String.prototype.trim`.
pub(crate) fn js_trim(s: &str) -> String {
    let b = session_format::line::trim_js_end(session_format::line::trim_js_start(s.as_bytes()));
    String::from_utf8_lossy(b).into_owned()
}

fn ensure_dir(storage: &dyn Storage, dir: &Path) -> Result<(), OpenError> {
    storage
        .ensure_dir(dir)
        .map_err(|source| OpenError::CreateDir {
            path: dir.to_path_buf(),
            source,
        })
}

/// A string field of a row (the header's `id` or `cwd`).
pub(crate) fn header_string(row: &Row, buf: &[u8], key: &str) -> Option<String> {
    row.value(buf)
        .ok()?
        .get(key)?
        .as_str_lossy()
        .map(|s| s.into_owned())
}

/// A file's first line, `\n` included, at most its first 4 KiB.
fn first_line(bytes: &[u8]) -> Arc<[u8]> {
    let head = &bytes[..bytes.len().min(4096)];
    let end = memchr::memchr(b'\n', head).map_or(head.len(), |i| i + 1);
    Arc::from(&head[..end])
}

/// A string field of a row, exactly (the header's `cwd`).
pub(crate) fn header_js_string(row: &Row, buf: &[u8], key: &str) -> Option<JsString> {
    match row.value(buf).ok()?.as_object_mut()?.remove(key)? {
        JsValue::String(s) => Some(s),
        _ => None,
    }
}
