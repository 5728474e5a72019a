//! The factories and the open/load path of [`SessionManager`]: `create`, `open`, `continue_recent`,
//! the locked opens, loading a file's bytes into rows, index and header (recovery of a corrupt
//! header, migration), new sessions, and reloading after a header rewrite (openclaw-jsonl.md §2.1,
//! §2.4).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use session_format::build;
use session_format::ids::{corrupt_backup_name, new_session_id, now_timestamp, session_file_name};
use session_format::json::{EnvelopeScanner, Field, JsString, JsValue};

use crate::cache::{Parsed, Pristine, Shared, Warm};
use crate::disk::DiskImage;
use crate::error::{Failure, OpenError};
use crate::id::Id;
use crate::index::Index;
use crate::inspect::OpenReport;
use crate::lock::LockOptions;
use crate::names::{self, InvalidName, NameKind};
use crate::paths;
use crate::rows::{self, Row, RowKind};
use crate::storage;

use super::load::{self, Fetched};
use super::{NewSessionOptions, OpenParams, SessionManager, Sessions, ensure_dir, first_line};
use crate::rows::header_string;

impl SessionManager {
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
        Self::on_files().create(cwd, session_dir)
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
        Self::on_files().open(path, session_dir, cwd_override)
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
    /// The file is loaded with stat-read-stat (up to three attempts) through the storage's
    /// warm cache ([`crate::WarmCache`]): a file the cache holds unchanged is not read or parsed
    /// again, and a file that only grew since (another writer appended) has only its new
    /// lines read ([`SessionManager::parsed_lines`] counts what was parsed).
    ///
    /// # Errors
    /// [`OpenError`] naming the file ([`OpenError::ChangedWhileLoading`] when it changed during
    /// every attempt); a failed rewrite leaves the file untouched.
    pub fn open_with(path: &Path, params: &OpenParams) -> Result<Self, OpenError> {
        Self::on_files().open_with(path, params)
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
        Self::on_files().continue_recent(cwd, session_dir)
    }

    /// Loads the file's bytes and what [`Parsed::of`] read in them (`None` when the file is
    /// missing) into this manager; `write` allows the repair writes of a writable open.
    /// Returns true when the state is the file exactly as read (a readable header, nothing
    /// migrated, recovered or rewritten).
    pub(crate) fn set_loaded(
        &mut self,
        abs: PathBuf,
        loaded: Option<(Vec<u8>, Parsed)>,
        write: bool,
    ) -> Result<bool, OpenError> {
        self.session_file = Some(abs.clone());
        self.recovered_corrupt_header = false;
        self.conflict_backups.clear();
        self.adopted_lines = 0;
        (self.foreign_since, self.pinned) = (None, false);
        let Some((buf, loaded)) = loaded else {
            self.new_fresh_session();
            self.session_file = Some(abs.clone());
            self.load_report = OpenReport {
                path: abs,
                ..OpenReport::default()
            };
            return Ok(false);
        };
        self.load_report = loaded.report;
        self.disk = DiskImage::read(&buf);
        self.first_line = first_line(&buf);
        self.held = 0;
        self.buf = Arc::new(buf);
        let mut pristine = false;
        match loaded.header {
            Some(h) => {
                self.rows = loaded.rows.into();
                self.header = Some(h);
                self.session_id = loaded.session_id;
                self.ix = loaded.ix.into();
                let migrated = self.migrate()?;
                if migrated {
                    self.rebuild();
                }
                if migrated && write {
                    self.rewrite()?;
                }
                self.flushed = true;
                pristine = !migrated;
            }
            None if loaded.blank => {
                let disk = std::mem::replace(&mut self.disk, DiskImage::Absent);
                let report = std::mem::take(&mut self.load_report);
                self.new_fresh_session();
                self.session_file = Some(abs);
                self.disk = disk;
                self.load_report = report;
                if write {
                    self.rewrite()?;
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
                    self.rewrite()?;
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
    pub(super) fn header_value(&self, id: &str, ts: &str, parent_session: Option<&str>) -> JsValue {
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
    /// ([`crate::validate_name`]: not empty, `.`, `..` or absolute, no `/`, `\`, NUL or
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
        Self::on_files().open_locked(path, params, options)
    }

    /// Takes the file's current content as this manager's (see
    /// [`SessionManager::sync_snapshot_after_header_rewrite`]).
    pub(super) fn reload(&mut self, path: PathBuf, fetched: Fetched) -> Result<(), OpenError> {
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
                let parsed = Parsed::of(&path, &buf);
                self.parsed_lines += parsed.scanned;
                self.set_loaded(path, Some((buf, parsed)), false)?;
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
}

impl Sessions {
    /// [`SessionManager::create`] in this storage: the session directory is made sure of
    /// there ([`Storage::ensure_dir`](crate::Storage::ensure_dir)), and every later write of the manager (and of the
    /// sessions it switches to) goes to this storage.
    ///
    /// # Errors
    /// As [`SessionManager::create`].
    pub fn create(
        &self,
        cwd: &str,
        session_dir: Option<&Path>,
    ) -> Result<SessionManager, OpenError> {
        let dir = session_dir.map_or_else(|| paths::default_session_dir(cwd), Path::to_path_buf);
        ensure_dir(&*self.storage, &dir)?;
        let mut sm = SessionManager::blank(cwd, dir, true);
        sm.storage = Arc::clone(&self.storage);
        sm.new_fresh_session();
        Ok(sm)
    }

    /// [`SessionManager::open`] of the session stored at `path` in this storage (see
    /// [`Sessions::open_with`]).
    ///
    /// # Errors
    /// As [`SessionManager::open_with`].
    pub fn open(
        &self,
        path: &Path,
        session_dir: Option<&Path>,
        cwd_override: Option<&str>,
    ) -> Result<SessionManager, OpenError> {
        self.open_with(
            path,
            &OpenParams {
                session_dir: session_dir.map(Path::to_path_buf),
                cwd_override: cwd_override.map(str::to_owned),
                fallback_cwd: None,
            },
        )
    }

    /// [`SessionManager::open_with`] on the session stored at `path` in this storage: the
    /// same rules, with every read and write, the session directory and the write lock in
    /// this storage. The warm cache serves only [`FileStorage`](crate::FileStorage); on any other storage the
    /// session is loaded with [`Storage::read_snapshot`](crate::Storage::read_snapshot) every time (one consistent read of
    /// the bytes and their snapshot where the backend offers one, as Redis does, so another
    /// writer's appends do not make the load fail).
    ///
    /// # Errors
    /// As [`SessionManager::open_with`].
    pub fn open_with(&self, path: &Path, params: &OpenParams) -> Result<SessionManager, OpenError> {
        let storage = Arc::clone(&self.storage);
        let abs = paths::resolve(path);
        let dir = params
            .session_dir
            .clone()
            .unwrap_or_else(|| abs.parent().map(Path::to_path_buf).unwrap_or_default());
        let fetch = load::fetch(&*storage, &abs)?;
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
            let mut sm = SessionManager::blank(&cwd_js.to_str_lossy(), dir.clone(), true);
            sm.cwd_js = cwd_js;
            sm.storage = Arc::clone(&storage);
            sm
        };
        match fetch.fetched {
            Fetched::Missing => {
                let mut sm = blank(cwd_of(None));
                ensure_dir(&*storage, &dir)?;
                sm.set_loaded(abs, None, true)?;
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
                let parsed = Parsed::of(&abs, &buf);
                let header_cwd = parsed.header_cwd.clone();
                let mut sm = blank(cwd_of(header_cwd.clone()));
                ensure_dir(&*storage, &dir)?;
                sm.parsed_lines += parsed.scanned;
                sm.snapshot = Some(snapshot);
                sm.cache_key = fetch.key;
                if sm.set_loaded(abs, Some((buf, parsed)), true)? {
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
                    load::store(&*storage, sm.cache_key.as_deref(), warm);
                }
                Ok(sm)
            }
        }
    }

    /// [`SessionManager::continue_recent`] among the sessions of this storage
    /// ([`Storage::list_sessions`](crate::Storage::list_sessions), [`Storage::read_head`](crate::Storage::read_head), the newest by the snapshot's
    /// `mtime_ns`).
    ///
    /// # Errors
    /// As [`SessionManager::continue_recent`].
    pub fn continue_recent(
        &self,
        cwd: &str,
        session_dir: Option<&Path>,
    ) -> Result<SessionManager, OpenError> {
        let dir = session_dir.map_or_else(|| paths::default_session_dir(cwd), Path::to_path_buf);
        ensure_dir(&*self.storage, &dir)?;
        match crate::list::most_recent_session(&*self.storage, &dir) {
            Some(path) => self.open_with(
                &path,
                &OpenParams {
                    session_dir: Some(dir),
                    cwd_override: Some(cwd.to_owned()),
                    fallback_cwd: None,
                },
            ),
            None => self.create(cwd, Some(&dir)),
        }
    }

    /// [`SessionManager::open_locked`] in this storage (its write lock,
    /// [`Storage::with_write_lock`](crate::Storage::with_write_lock)).
    ///
    /// # Errors
    /// As [`SessionManager::open_locked`].
    pub fn open_locked(
        &self,
        path: &Path,
        params: &OpenParams,
        options: LockOptions,
    ) -> Result<SessionManager, OpenError> {
        let abs = paths::resolve(path);
        let mut sm = storage::with_write_lock(&*self.storage, &abs, &options, || {
            self.open_with(&abs, params)
        })
        .map_err(|e| Failure::lock(abs.clone(), e))??;
        sm.write_lock = Some(options);
        Ok(sm)
    }
}
