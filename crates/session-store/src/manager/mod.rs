//! `SessionManager`: factories, appends, branching and persistence, as OpenClaw 2026.6.11 does
//! them (openclaw-jsonl.md §2.1, §2.4, §2.6, §2.9, §2.10, §2.12; FINDINGS k), with the
//! workspace's fixes (docs/DEVIATIONS.md).
//!
//! Layout: this file holds the struct, the types its callers pass ([`Payload`], [`OpenParams`],
//! [`NewSessionOptions`]), the getters and settings, and the save/restore a failed write puts
//! back; `open.rs` the factories and the open/load path; `append.rs` the appends and the
//! catch-up on another writer's lines; `branch.rs` leaf moves, branches, forks and branched
//! sessions; `rewrite.rs` full rewrites, flush and trailing removal; `list.rs` listing.
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
//!   surrogates included; methods taking an id take an [`EntryId`](crate::EntryId) (a `&str` or the exact
//!   `&JsString`), `&str` views of ids are lossy, the `*_js` getters exact;
//! - paths are resolved lexically, as Node's `path.resolve` does, wherever the reference does;
//! - every read and write of the session's bytes, and the write lock, go through the manager's
//!   [`Storage`] (default [`FileStorage`], which writes through [`crate::io`]: atomic rewrites,
//!   `O_APPEND` appends); the factories of [`SessionManager::on`] take the storage
//!   ([`Sessions::open_with`], [`Sessions::create`], …);
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
//!   [`crate::RemoveError::OutsideStore`], [`crate::BranchError::OutsideStore`],
//!   [`OpenError::OutsideStore`]) naming the link, its target and the root when the target
//!   lies outside that directory; every name of one file (a symlink to it inside the
//!   directory, a symlinked directory) takes the same lock and shares its warm cache entry.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use session_format::build::RowBase;
use session_format::ids::{new_entry_id, now_timestamp};
use session_format::json::{JsObject, JsString, JsValue, SerdeError, to_value};
use session_format::message::Message;

use crate::cache::Shared;
use crate::deep::clone_value;
use crate::disk::DiskImage;
use crate::error::{AppendError, Failure, OpenError, ReadError, RowLocation};
use crate::foreign::ForeignAppendPolicy;
use crate::id::Id;
use crate::index::Index;
use crate::inspect::OpenReport;
use crate::io::Durability;
use crate::lock::LockOptions;
use crate::paths;
use crate::rows::Row;
use crate::snapshot::{self, SessionFileSnapshot, WriteOwner};
use crate::storage::{FileStorage, Storage};

mod append;
mod branch;
mod context;
mod foreign;
mod forest;
mod inspect;
mod list;
mod load;
mod open;
mod prepare;
mod query;
mod sessions;
mod views;

pub use context::{ContextGap, ContextKind, ContextMessage, ContextModel, SessionContext};
pub use forest::TreeShape;
pub use inspect::ReadOnlyOpen;
pub use load::remember_written_entries;
pub use query::{EntryError, EntryRef, SessionTree, TreeNode};
pub use sessions::Sessions;
pub use views::{FileRow, FileRowClass};
mod rewrite;

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
    /// ([`crate::validate_name`]).
    pub id: Option<String>,
    /// The header's `parentSession`.
    pub parent_session: Option<String>,
}

/// A transcript session: its rows in file order, the navigation indexes, and where (and
/// whether) it is persisted. See the crate documentation for an overview.
///
/// Where: the associated factories and listings ([`SessionManager::create`],
/// [`SessionManager::open`], [`SessionManager::open_with`], [`SessionManager::open_locked`],
/// [`SessionManager::continue_recent`], [`SessionManager::fork_from`],
/// [`SessionManager::open_read_only`], [`SessionManager::list`], [`SessionManager::list_all`])
/// use the process-wide [`FileStorage`]; [`SessionManager::on`]`(storage)` gives the same
/// methods, spelled the same, over any [`Storage`] ([`Sessions`]; the storage, an
/// `Arc<dyn Storage>`, is kept by each manager for all its later reads, writes and write
/// locks).
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
            .map_err(|e| Failure::io(path.clone(), e).into())
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
    /// it was opened or created through [`SessionManager::on`]).
    pub fn storage(&self) -> &Arc<dyn Storage> {
        &self.storage
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
    ///   ([`AppendError::Lock`], [`crate::BranchError::Lock`], [`crate::RemoveError::Lock`])
    ///   carrying the session file and the [`crate::LockError`] (lock path, owner pid), and
    ///   nothing is written.
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

    /// The owner, when it names this manager's file.
    fn active_owner(&self) -> Option<Arc<dyn WriteOwner>> {
        let owner = self.owner.as_ref()?;
        let file = self.session_file.as_ref()?;
        let theirs = owner.session_file()?;
        let same = paths::resolve(&theirs) == *file
            || (self.storage.local_files()
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
            load::invalidate_key(&*self.storage, self.cache_key.as_deref());
        }
    }

    pub(crate) fn location(&self, row: usize) -> RowLocation {
        let pos = self.rows.get(row).and_then(Row::pos);
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
}

/// How many times a full rewrite on a storage other than files reads, checks and tries its
/// fenced replace before giving up ([`Storage::replace_if`]; each refusal means another writer
/// changed the session in between).
pub const FENCED_REWRITE_ATTEMPTS: u32 = 8;

fn ensure_dir(storage: &dyn Storage, dir: &Path) -> Result<(), OpenError> {
    storage
        .ensure_dir(dir)
        .map_err(|source| OpenError::CreateDir {
            path: dir.to_path_buf(),
            source,
        })
}

/// A file's first line, `\n` included, at most its first 4 KiB.
fn first_line(bytes: &[u8]) -> Arc<[u8]> {
    let head = &bytes[..bytes.len().min(4096)];
    let end = memchr::memchr(b'\n', head).map_or(head.len(), |i| i + 1);
    Arc::from(&head[..end])
}
