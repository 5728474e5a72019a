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
//! - every write goes through [`crate::io`] (atomic rewrites, `O_APPEND` appends).

use std::path::{Path, PathBuf};

use session_format::build::{self, RowBase};
use session_format::entry::EntryType;
use session_format::ids::{
    corrupt_backup_name, new_entry_id, new_session_id, now_timestamp, session_file_name,
};
use session_format::json::{
    EnvelopeScanner, Field, JsObject, JsString, JsValue, SerdeError, to_value,
};
use session_format::message::Message;

use crate::deep::clone_value;
use crate::disk::{DiskImage, Verdict};
use crate::error::{
    AppendError, BranchError, ForkError, OpenError, ReadError, RemoveError, RowLocation,
};
use crate::id::{self as ids, Id};
use crate::index::{Index, Map, Set};
use crate::inspect::OpenReport;
use crate::io::{self, Durability};
use crate::paths;
use crate::rows::{self, EntryMeta, Parent, Row, RowKind};

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
    /// The session id (default: a new UUIDv7).
    pub id: Option<String>,
    /// The header's `parentSession`.
    pub parent_session: Option<String>,
}

/// A transcript session: its rows in file order, the navigation indexes, and where (and
/// whether) it is persisted. See the crate documentation for an overview.
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
    /// The bytes of the file as read; rows read from it are spans of this buffer.
    pub(crate) buf: Vec<u8>,
    pub(crate) rows: Vec<Row>,
    pub(crate) header: Option<usize>,
    pub(crate) ix: Index,
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
            buf: Vec::new(),
            rows: Vec::new(),
            header: None,
            ix: Index::default(),
            disk: DiskImage::Absent,
            held: 0,
            load_report: OpenReport::default(),
            conflict_backups: Vec::new(),
            adopted_lines: 0,
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
        let dir = session_dir.map_or_else(|| paths::default_session_dir(cwd), Path::to_path_buf);
        ensure_dir(&dir)?;
        let mut sm = Self::blank(cwd, dir, true);
        sm.new_session(NewSessionOptions::default());
        Ok(sm)
    }

    /// An in-memory session: never written, no file, `session_dir` empty.
    pub fn in_memory(cwd: &str) -> Self {
        let mut sm = Self::blank(cwd, PathBuf::new(), false);
        sm.new_session(NewSessionOptions::default());
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
    /// # Errors
    /// [`OpenError`] naming the file; a failed rewrite leaves the file untouched.
    pub fn open_with(path: &Path, params: &OpenParams) -> Result<Self, OpenError> {
        let abs = paths::resolve(path);
        let dir = params
            .session_dir
            .clone()
            .unwrap_or_else(|| abs.parent().map(Path::to_path_buf).unwrap_or_default());
        let buf = read_optional(&abs)?;
        let loaded = buf.as_ref().map(|b| rows::load(b));
        let header_cwd = match (&buf, &loaded) {
            (Some(b), Some(l)) => l
                .header
                .and_then(|h| header_js_string(&l.rows[h], b, "cwd")),
            _ => None,
        };
        let cwd_js = params
            .cwd_override
            .as_deref()
            .map(JsString::from)
            .or(header_cwd)
            .or_else(|| params.fallback_cwd.as_deref().map(JsString::from))
            .unwrap_or_else(|| JsString::from(paths::process_cwd()));
        let mut sm = Self::blank(&cwd_js.to_str_lossy(), dir.clone(), true);
        sm.cwd_js = cwd_js;
        ensure_dir(&dir)?;
        sm.set_loaded(abs, buf, loaded, true)?;
        Ok(sm)
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
        let dir = session_dir.map_or_else(|| paths::default_session_dir(cwd), Path::to_path_buf);
        ensure_dir(&dir)?;
        match crate::list::find_most_recent_session(&dir) {
            Some(path) => Self::open_with(
                &path,
                &OpenParams {
                    session_dir: Some(dir),
                    cwd_override: Some(cwd.to_owned()),
                    fallback_cwd: None,
                },
            ),
            None => Self::create(cwd, Some(&dir)),
        }
    }

    /// Forks `source` into a new session of `session_dir` (default: the per-cwd directory of
    /// `target_cwd`): a new header (`version:3`, new id, `cwd: target_cwd`,
    /// `parentSession: source`) followed by every non-session row of the source, verbatim
    /// (opaque and unparseable rows included). A legacy (v1/v2) source is migrated first, so the
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
        let buf = match io::read_file(source) {
            Ok(b) => b,
            // `existsSync(path)` false (missing, or `s.jsonl/`): "empty or invalid".
            Err(e) if e.kind() == std::io::ErrorKind::NotFound || !source.exists() => {
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
        ensure_dir(&dir)?;
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
        io::create_new(&path, &out, None).map_err(|source| ForkError::Write {
            path: path.clone(),
            source,
        })?;
        Ok(Self::open_with(
            &path,
            &OpenParams {
                session_dir: Some(dir),
                cwd_override: Some(target_cwd.to_owned()),
                fallback_cwd: None,
            },
        )?)
    }

    /// Loads `buf` (the file's bytes, `None` when missing) into this manager; `write` allows
    /// the repair writes of a writable open.
    pub(crate) fn set_loaded(
        &mut self,
        abs: PathBuf,
        buf: Option<Vec<u8>>,
        loaded: Option<rows::Loaded>,
        write: bool,
    ) -> Result<(), OpenError> {
        self.session_file = Some(abs.clone());
        self.recovered_corrupt_header = false;
        self.conflict_backups.clear();
        self.adopted_lines = 0;
        let (Some(buf), Some(loaded)) = (buf, loaded) else {
            self.new_session(NewSessionOptions::default());
            self.session_file = Some(abs.clone());
            self.load_report = OpenReport {
                path: abs,
                ..OpenReport::default()
            };
            return Ok(());
        };
        self.load_report = crate::inspect::file_report(&abs, &buf, &loaded);
        self.disk = DiskImage::read(&buf);
        self.held = 0;
        self.buf = buf;
        match loaded.header {
            Some(h) => {
                self.rows = loaded.rows;
                self.header = Some(h);
                self.session_id = header_string(&self.rows[h], &self.buf, "id").unwrap_or_default();
                let migrated = self.migrate()?;
                self.rebuild();
                if migrated && write {
                    self.rewrite()
                        .map_err(|source| OpenError::Write { path: abs, source })?;
                }
                self.flushed = true;
            }
            None if loaded.blank => {
                let disk = std::mem::replace(&mut self.disk, DiskImage::Absent);
                let report = std::mem::take(&mut self.load_report);
                self.new_session(NewSessionOptions::default());
                self.session_file = Some(abs.clone());
                self.disk = disk;
                self.load_report = report;
                if write {
                    self.rewrite()
                        .map_err(|source| OpenError::Write { path: abs, source })?;
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
                    io::backup_copy(&abs, &backup, &self.buf).map_err(|source| {
                        OpenError::Backup {
                            path: abs.clone(),
                            backup: backup.clone(),
                            source,
                        }
                    })?;
                    self.load_report.corrupt_header_backup = Some(backup);
                }
                self.recover(loaded.rows);
                self.migrate()?;
                self.rebuild();
                if write {
                    self.rewrite()
                        .map_err(|source| OpenError::Write { path: abs, source })?;
                }
                self.recovered_corrupt_header = true;
                self.flushed = true;
            }
        }
        Ok(())
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
        self.rows = all;
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
        self.ix = Index::build(&self.rows);
    }

    /// Resets to a fresh session (header `version:3`, new id unless given, `leaf = null`,
    /// `flushed = false`). A persisting manager gets a new file path in its session directory;
    /// the old file is untouched. Returns that path (`None` in memory).
    pub fn new_session(&mut self, options: NewSessionOptions) -> Option<PathBuf> {
        self.recovered_corrupt_header = false;
        self.session_id = options.id.unwrap_or_else(new_session_id);
        let ts = now_timestamp();
        let header = self.header_value(&self.session_id, &ts, options.parent_session.as_deref());
        let mut row = Row::from_value(&header);
        row.kind = RowKind::Header;
        self.rows = vec![row];
        self.header = Some(0);
        self.buf = Vec::new();
        self.ix = Index::default();
        self.flushed = false;
        self.disk = DiskImage::Absent;
        self.held = 1;
        self.conflict_backups.clear();
        self.adopted_lines = 0;
        if self.persist {
            self.session_file = Some(paths::normalize(
                &self
                    .session_dir
                    .join(session_file_name(&ts, &self.session_id)),
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

    /// How appends are synced (default [`Durability::SyncData`]).
    pub fn set_durability(&mut self, durability: Durability) {
        self.durability = durability;
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

    /// `appendEntry`: pushes the row (its `parentId` set to the append cursor, written from the
    /// exact id), indexes it (logical parent rule (b) at append time), moves leaf and append
    /// cursor to it, persists it.
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
        let Some(id) = row.kind.entry().map(|e| e.id.text().to_owned()) else {
            return Err(AppendError::Internal {
                what: "an appended row did not classify as an entry",
            });
        };
        let i = self.rows.len();
        self.rows.push(row);
        let row = &self.rows[i];
        self.ix.apply(i, row);
        if let Some(meta) = row.kind.entry() {
            self.ix.add_child(i, meta);
        }
        if self.persist {
            self.held += 1;
        }
        self.persist_row(i)?;
        Ok(id)
    }

    /// `persist(entry)` (§2.12).
    fn persist_row(&mut self, i: usize) -> Result<(), AppendError> {
        if !self.persist {
            return Ok(());
        }
        let Some(path) = self.session_file.clone() else {
            return Ok(());
        };
        if self.ix.assistants == 0 {
            self.flushed = false;
            return Ok(());
        }
        if !self.flushed {
            self.write_full()
                .map_err(|source| AppendError::Write { path, source })?;
            self.flushed = true;
            return Ok(());
        }
        let line = self
            .rows
            .get(i)
            .map(|r| r.bytes(&self.buf))
            .unwrap_or_default();
        let out =
            io::append_line(&path, line, self.durability).map_err(|source| AppendError::Write {
                path: path.clone(),
                source,
            })?;
        self.held = 0;
        let mut written = Vec::with_capacity(out.bytes);
        if out.separator {
            written.push(b'\n');
        }
        written.extend_from_slice(line);
        written.push(b'\n');
        if !self.disk.appended(out.previous_len, &written) {
            self.after_foreign_append(&path, out.previous_len, i);
        }
        Ok(())
    }

    /// The plain append found the file at another length than expected: another writer was
    /// there. When the file still starts with the bytes this manager knew, the lines in
    /// between are adopted (indexed, placed before the row just appended, kept verbatim on
    /// rewrites); otherwise the belief becomes unknown, so the next full rewrite backs the
    /// file up first.
    fn after_foreign_append(&mut self, path: &Path, previous_len: u64, row: usize) {
        let Ok(now) = io::read_file(path) else {
            self.disk = DiskImage::Unknown;
            return;
        };
        let before = usize::try_from(previous_len)
            .ok()
            .and_then(|n| now.get(..n));
        match before.map(|b| (b, self.disk.check(Some(b), &self.buf))) {
            Some((b, Verdict::Grew(at))) => {
                let tail = b[at..].to_vec();
                self.adopt(&now[..at], &tail, row);
                self.disk = DiskImage::known(&now);
            }
            Some((_, Verdict::Vanished)) => self.disk = DiskImage::known(&now),
            _ => self.disk = DiskImage::Unknown,
        }
    }

    /// Adopts lines another writer appended (`tail`, which followed `prefix` in the file):
    /// they become rows (verbatim bytes) inserted before row `at`, and the index is rebuilt;
    /// the in-memory leaf and append cursor stay where they were.
    fn adopt(&mut self, prefix: &[u8], tail: &[u8], at: usize) {
        let line_base = memchr::memchr_iter(b'\n', prefix).count();
        let version = self
            .header
            .and_then(|h| self.rows.get(h))
            .map_or(3.0, |h| rows::header_version(h, &self.buf));
        let start = self.buf.len();
        self.buf.extend_from_slice(tail);
        let new_rows = rows::load_appended(&self.buf, start, version, line_base, prefix.len());
        if new_rows.is_empty() {
            return;
        }
        self.adopted_lines += new_rows.len();
        let at = at.min(self.rows.len());
        let keep = (
            self.ix.leaf.clone(),
            self.ix.append_parent.clone(),
            self.ix.side_parent.clone(),
        );
        self.rows.splice(at..at, new_rows);
        self.header = self
            .rows
            .iter()
            .position(|r| matches!(r.kind, RowKind::Header));
        self.rebuild();
        (self.ix.leaf, self.ix.append_parent, self.ix.side_parent) = keep;
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
    /// Nothing is written.
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
        Ok(())
    }

    /// Sets leaf and append cursor to null: the next append is a new root. Nothing is written.
    pub fn reset_leaf(&mut self) {
        self.ix.leaf = None;
        self.ix.append_parent = None;
        self.ix.side_parent = None;
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
        self.ix.leaf = target.clone();
        self.ix.append_parent = target.clone();
        let mut value = build::branch_summary(&self.base(), "root", summary, details, from_hook);
        if let (Some(o), Some(t)) = (value.as_object_mut(), &target) {
            o.insert("fromId", t.to_value());
        }
        Ok(self.append_value(value)?)
    }

    /// Switches this manager **in place** to a new session holding only the path from the
    /// root to `leaf_id` (openclaw-jsonl.md §2.9): label entries and leaf controls on the path
    /// are dropped, every kept entry and parent-linked opaque row is re-parented onto the
    /// previous kept node (so descendants of a mid-path label stay connected), and each label
    /// whose target is on the path is re-created at the end with its original timestamp, in
    /// label insertion order. The new header is `version:3`, new id, this cwd, `parentSession`
    /// = the previous file (persisting managers only). Rows whose parent does not change keep
    /// their bytes. The new file is written at once only when the path holds an assistant
    /// message. Returns the new file path (`None` in memory).
    ///
    /// # Errors
    /// [`BranchError::EntryNotFound`] when the path holds no entry; write errors.
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
                    let new_row = if same {
                        row.clone()
                    } else {
                        row.with_keys(
                            &self.buf,
                            &[("parentId", Some(ids::opt_value(tail.as_ref())))],
                        )
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
        self.rows = new_rows;
        self.header = Some(0);
        self.session_id = new_id.clone();
        self.rebuild();
        self.disk = DiskImage::Absent;
        self.held = self.rows.len();
        self.conflict_backups.clear();
        self.adopted_lines = 0;
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
            self.rewrite().map_err(|source| BranchError::Write {
                path: file.clone(),
                source,
            })?;
            self.flushed = true;
        } else {
            self.flushed = false;
        }
        Ok(Some(file))
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
    /// [`RemoveError`] when the rewrite fails (memory already holds the new state).
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
        self.rows = new_rows;
        self.held = new_held;
        self.header = self
            .rows
            .iter()
            .position(|r| matches!(r.kind, RowKind::Header));
        self.rebuild();
        self.ix.leaf = self
            .ix
            .resolve_canonical(replacement.as_ref().map(Id::as_bytes));
        self.ix.append_parent = replacement;
        self.rewrite().map_err(|source| RemoveError::Write {
            path: self.file_path(),
            source,
        })?;
        Ok(removed_count)
    }

    // ------------------------------------------------------------------------------------
    // Full rewrites (§2.12)

    /// `rewriteFile`: a full rewrite when persisting (flushed is left as it is).
    pub(crate) fn rewrite(&mut self) -> std::io::Result<()> {
        if !self.persist || self.session_file.is_none() {
            return Ok(());
        }
        self.write_full()
    }

    /// Forces a full write of a persisting session now (the reference's
    /// `flushPendingPersistence`, absent from 2026.6.11): useful after held appends.
    ///
    /// # Errors
    /// [`AppendError::Write`].
    pub fn flush(&mut self) -> Result<(), AppendError> {
        if !self.persist || self.session_file.is_none() || self.flushed {
            return Ok(());
        }
        self.write_full().map_err(|source| AppendError::Write {
            path: self.file_path(),
            source,
        })?;
        self.flushed = true;
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
    fn write_full(&mut self) -> std::io::Result<()> {
        let Some(path) = self.session_file.clone() else {
            return Ok(());
        };
        let current = match io::read_file(&path) {
            Ok(b) => Some(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        match self.disk.check(current.as_deref(), &self.buf) {
            Verdict::Same | Verdict::Vanished => {}
            Verdict::Grew(at) => {
                if let Some(now) = &current {
                    let at_row = self.rows.len().saturating_sub(self.held);
                    self.adopt(&now[..at], &now[at..], at_row);
                    // Known now: a retry after a failed rewrite does not adopt them twice.
                    self.disk = DiskImage::known(now);
                }
            }
            Verdict::Changed => {
                if let Some(now) = &current {
                    let backup = conflict_backup_path(&path);
                    io::backup_copy(&path, &backup, now)?;
                    self.conflict_backups.push(backup);
                    self.disk = DiskImage::known(now);
                }
            }
        }
        self.synthesize_leaf_control();
        let bytes = self.serialized();
        io::atomic_rewrite(&path, &bytes)?;
        self.disk = DiskImage::known(&bytes);
        self.held = 0;
        Ok(())
    }
}

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

fn read_optional(path: &Path) -> Result<Option<Vec<u8>>, OpenError> {
    match io::read_file(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(OpenError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

fn ensure_dir(dir: &Path) -> Result<(), OpenError> {
    io::ensure_dir(dir).map_err(|source| OpenError::CreateDir {
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

/// `<file>.conflict-<ISO ts with ':' and '.' → '-'>-<8 hex>.jsonl` beside the session file.
fn conflict_backup_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ts = now_timestamp().replace([':', '.'], "-");
    let tag = new_entry_id(|_| false);
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    dir.join(format!("{name}.conflict-{ts}-{tag}.jsonl"))
}

/// A string field of a row, exactly (the header's `cwd`).
pub(crate) fn header_js_string(row: &Row, buf: &[u8], key: &str) -> Option<JsString> {
    match row.value(buf).ok()?.as_object_mut()?.remove(key)? {
        JsValue::String(s) => Some(s),
        _ => None,
    }
}
