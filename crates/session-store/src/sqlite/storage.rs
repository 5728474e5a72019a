//! [`SqliteStorage`]: one OpenClaw per-agent SQLite database behind the [`Storage`] seam,
//! read-only, so that everything that reads sessions through a [`Storage`] (the
//! [`SessionManager`](crate::SessionManager)'s read-only open, [`crate::Sessions::list`], the
//! CLI's inspection commands, migration) reads a SQLite session exactly as it reads a JSONL
//! file of the same bytes (`openclaw-sqlite.md` §2.13 recipes 1–4).
//!
//! # Virtual layout
//!
//! The database's transcript generations (`session_windows`, §2.3, current and earlier ones)
//! appear as `<sessions_dir>/<sessionId>.jsonl`, one namespace. `sessions_dir` defaults to
//! `<state>/agents/<agentId>/sessions` when the database is at
//! `<state>/agents/<agentId>/agent/openclaw-agent.sqlite` (§1.1): where the JSONL-era store
//! keeps the same transcripts, so `--agent ID` and `--session` address them as before. For a
//! database anywhere else the namespace is the database path itself
//! (`<db>/<sessionId>.jsonl`). A session's bytes are its rows in `seq` order, each followed by
//! `\n` ([`SqliteStore::lines`]).
//!
//! # Change stamp
//!
//! [`Storage::stat`] gives a [`SessionFileSnapshot`] computed in one read transaction:
//! - `dev`: [`SQLITE_STORAGE_DEV`];
//! - `ino`: a stable hash (FNV-1a, 64 bits) of the session id and its rewrite watermark
//!   generation (`transcript_rewrite_watermarks.generation`, §2.11), so it changes when OpenClaw
//!   rewrites the rows (compaction, truncation, repair) and never on an append;
//! - `size`: the JSONL's length in bytes (the UTF-8 length of each row's text plus one `\n`);
//! - `mtime_ns`, `ctime_ns`: the window's latest `updated_at`/`transcript_updated_at` in
//!   nanoseconds plus the row count (modulo 10⁶), so an append moves it forward;
//! - `birth_ns`: `None`.
//!
//! # Writes
//!
//! Every write method fails without touching the database: [`io::ErrorKind::ReadOnlyFilesystem`]
//! wrapping [`SqliteError::ReadOnly`] (appends: [`AppendToExistingError::Io`] of that error;
//! the write lock: [`LockError::Io`]). OpenClaw owns the database (§4.7.4).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use rusqlite::{Connection, OptionalExtension};
use session_format::json::{JsObject, JsValue, parse_value};

use super::{SqliteError, SqliteStore};
use crate::io::{AppendToExistingError, Durability, KnownFile, VerifiedAppend};
use crate::lock::{LockError, LockOptions};
use crate::snapshot::SessionFileSnapshot;
use crate::storage::{SnapshotRead, Storage};

/// The `dev` of every [`SqliteStorage`] snapshot: the bytes `oc-sqlit`, so a SQLite session's
/// snapshot never equals a file's or an in-memory session's.
pub const SQLITE_STORAGE_DEV: u64 = u64::from_be_bytes(*b"oc-sqlit");

/// The database file name OpenClaw uses for an agent (§1.1).
const AGENT_DB_NAME: &str = "openclaw-agent.sqlite";

/// One OpenClaw SQLite database as a read-only [`Storage`]; see the module documentation.
#[derive(Debug)]
pub struct SqliteStorage {
    store: Mutex<SqliteStore>,
    db_path: PathBuf,
    sessions_dir: PathBuf,
}

impl SqliteStorage {
    /// Opens the database at `db_path` ([`SqliteStore::open`]) with the default namespace
    /// ([`Self::default_sessions_dir`]).
    ///
    /// # Errors
    /// As [`SqliteStore::open`].
    pub fn open(db_path: impl AsRef<Path>) -> Result<SqliteStorage, SqliteError> {
        let store = SqliteStore::open(db_path)?;
        Ok(Self::with_store(store, None))
    }

    /// Wraps an open store; its sessions appear in `sessions_dir` (made absolute lexically),
    /// or in [`Self::default_sessions_dir`] when `None`.
    pub fn with_store(store: SqliteStore, sessions_dir: Option<&Path>) -> SqliteStorage {
        let db_path = crate::paths::resolve(store.path());
        let sessions_dir = match sessions_dir {
            Some(d) => crate::paths::resolve(d),
            None => Self::default_sessions_dir(&db_path),
        };
        SqliteStorage {
            store: Mutex::new(store),
            db_path,
            sessions_dir,
        }
    }

    /// The namespace of a database at `db_path` (absolute): `<state>/agents/<agentId>/sessions`
    /// for `<state>/agents/<agentId>/agent/openclaw-agent.sqlite` (§1.1), else `db_path`
    /// itself.
    pub fn default_sessions_dir(db_path: &Path) -> PathBuf {
        let standard = db_path.file_name().is_some_and(|n| n == AGENT_DB_NAME)
            && db_path
                .parent()
                .and_then(Path::file_name)
                .is_some_and(|n| n == "agent")
            && db_path
                .parent()
                .and_then(Path::parent)
                .and_then(Path::parent)
                .and_then(Path::file_name)
                .is_some_and(|n| n == "agents");
        match db_path.parent().and_then(Path::parent) {
            Some(agent_dir) if standard => agent_dir.join("sessions"),
            _ => db_path.to_path_buf(),
        }
    }

    /// The database file (absolute).
    pub fn db_path(&self) -> &Path {
        &self.db_path
    }

    /// The namespace the sessions appear in (absolute).
    pub fn sessions_dir(&self) -> &Path {
        &self.sessions_dir
    }

    /// The virtual path of session `session_id`: `<sessions_dir>/<session_id>.jsonl`.
    pub fn session_path(&self, session_id: &str) -> PathBuf {
        self.sessions_dir.join(format!("{session_id}.jsonl"))
    }

    /// The session id a virtual path names: `Some(id)` for `<sessions_dir>/<id>.jsonl` (the
    /// path made absolute lexically first), whether or not such a session exists; `None` for
    /// any other path.
    pub fn session_id_of(&self, path: &Path) -> Option<String> {
        let path = crate::paths::resolve(path);
        if path.parent() != Some(self.sessions_dir.as_path()) {
            return None;
        }
        let name = path.file_name()?.to_str()?;
        let id = name.strip_suffix(".jsonl")?;
        (!id.is_empty()).then(|| id.to_owned())
    }

    /// The open store, locked for this caller (the connection is used by one caller at a
    /// time). A poisoned lock is taken over: the store holds no state a panic can break.
    pub fn store(&self) -> MutexGuard<'_, SqliteStore> {
        self.store
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The `sessions.json` a JSONL-era store would hold for this database: one member per
    /// `session_nodes` row (§2.2), in row order (the order the import inserted them), key →
    /// the row's `entry_json` object, serialised as the reference writes `sessions.json`
    /// (`JSON.stringify(store, null, 2)`, no final newline). `entry_json` is the canonical
    /// SessionEntry; it is copied as parsed (no `sessionFile`: the transcript is
    /// `<sessionId>.jsonl` beside it).
    ///
    /// # Errors
    /// [`SqliteError::BadEntry`] naming the key of an `entry_json` that is not a JSON object;
    /// [`SqliteError::Query`] when `session_nodes` cannot be read.
    pub fn store_index_json(&self) -> Result<Vec<u8>, SqliteError> {
        let store = self.store();
        let rows = store.node_entries()?;
        let mut top = JsObject::new();
        for (key, entry_json) in rows {
            let bad = |problem: String| SqliteError::BadEntry {
                path: store.path().to_path_buf(),
                session_key: key.clone(),
                problem,
            };
            match parse_value(entry_json.as_bytes()) {
                Ok(value @ JsValue::Object(_)) => top.insert(key.as_str(), value),
                Ok(_) => return Err(bad("not an object".to_owned())),
                Err(e) => return Err(bad(format!("{e} (byte {})", e.offset))),
            }
        }
        Ok(
            session_format::normalize::to_json_string_indented(&JsValue::Object(top), 2)
                .into_bytes(),
        )
    }

    fn id_for_read(&self, path: &Path) -> io::Result<String> {
        self.session_id_of(path).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "{} is not a session of {} (its sessions are {}/<sessionId>.jsonl)",
                    path.display(),
                    self.db_path.display(),
                    self.sessions_dir.display()
                ),
            )
        })
    }

    fn read_only(&self, path: &Path, what: &'static str) -> io::Error {
        io::Error::new(
            io::ErrorKind::ReadOnlyFilesystem,
            SqliteError::ReadOnly {
                path: path.to_path_buf(),
                what,
            },
        )
    }
}

/// What a listing needs of one transcript generation without reading its rows
/// ([`SqliteStore::transcript_summaries`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct TranscriptSummary {
    /// `transcript_events` rows.
    pub rows: u64,
    /// The session's JSONL length in bytes: each row's UTF-8 length (`event_utf8_bytes`, else
    /// the byte length of `event_json`) plus one `\n`.
    pub bytes: u64,
    /// Message entries: `transcript_event_identities` rows of `event_type` `message` (ids are
    /// unique per session, §2.7, so each message id counts once).
    pub messages: u64,
}

/// A [`SqliteError`] as the [`Storage`] contract wants it: an unknown session is
/// [`io::ErrorKind::NotFound`], anything else [`io::ErrorKind::Other`] with the error kept.
fn to_io(e: SqliteError) -> io::Error {
    match e {
        SqliteError::UnknownSession { .. } => io::Error::new(io::ErrorKind::NotFound, e),
        e => io::Error::other(e),
    }
}

/// FNV-1a over `parts`, each followed by a NUL.
fn fnv1a(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in part.as_bytes().iter().chain(std::iter::once(&0u8)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// One reclaimed (deleted or reset) transcript generation kept in
/// `session_transcript_archives` (openclaw-sqlite.md §2.12). Times are epoch milliseconds.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SqliteArchive {
    /// The key the generation belonged to.
    pub session_key: String,
    /// The generation's session id.
    pub session_id: String,
    /// `deleted` or `reset`.
    pub reason: String,
    /// `archive_name`: the file name OpenClaw publishes the archive under.
    pub archive_name: String,
    /// `created_at`: when the generation was reclaimed.
    pub created_at: i64,
    /// Length of `archive_blob` in bytes (as stored: zstd when `encoding` is `zstd`).
    pub stored_bytes: u64,
    /// `encoding`: `identity` or `zstd`.
    pub encoding: String,
}

impl SqliteStore {
    /// Every row of `session_transcript_archives`, newest `created_at` first (then by
    /// `archive_name`). The blobs are not read.
    ///
    /// # Errors
    /// [`SqliteError::Query`] when the table cannot be read.
    pub fn transcript_archives(&self) -> Result<Vec<SqliteArchive>, SqliteError> {
        let what = "session_transcript_archives";
        let mut stmt = self
            .conn
            .prepare(
                "SELECT session_key, session_id, reason, archive_name, created_at, \
                 length(archive_blob), encoding FROM session_transcript_archives \
                 ORDER BY created_at DESC, archive_name",
            )
            .map_err(self.query_err(what))?;
        stmt.query_map([], |r| {
            Ok(SqliteArchive {
                session_key: r.get(0)?,
                session_id: r.get(1)?,
                reason: r.get(2)?,
                archive_name: r.get(3)?,
                created_at: r.get(4)?,
                stored_bytes: u64::try_from(r.get::<_, i64>(5)?).unwrap_or(0),
                encoding: r.get(6)?,
            })
        })
        .map_err(self.query_err(what))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(self.query_err(what))
    }

    /// `(session_key, entry_json)` of every `session_nodes` row in row order.
    pub(super) fn node_entries(&self) -> Result<Vec<(String, String)>, SqliteError> {
        let what = "session_nodes";
        let mut stmt = self
            .conn
            .prepare("SELECT session_key, entry_json FROM session_nodes ORDER BY rowid")
            .map_err(self.query_err(what))?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(self.query_err(what))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(self.query_err(what))
    }

    /// A [`TranscriptSummary`] of every session window, by session id, from two aggregate
    /// queries in one read transaction (§2.4, §2.7): no row text is decoded, so listing ten
    /// thousand sessions does not read their transcripts. A window without rows has a zero
    /// summary.
    ///
    /// # Errors
    /// [`SqliteError::Query`] when the tables cannot be read.
    pub fn transcript_summaries(
        &self,
    ) -> Result<std::collections::HashMap<String, TranscriptSummary>, SqliteError> {
        let what = "transcript summaries";
        let tx = self
            .conn
            .unchecked_transaction()
            .map_err(self.query_err(what))?;
        let mut out: std::collections::HashMap<String, TranscriptSummary> = self
            .window_ids_in(&tx)?
            .into_iter()
            .map(|id| (id, TranscriptSummary::default()))
            .collect();
        {
            let mut stmt = tx
                .prepare(
                    "SELECT session_id, COUNT(*), COALESCE(SUM(COALESCE(event_utf8_bytes, \
                     length(CAST(event_json AS BLOB)), 0)), 0) FROM transcript_events \
                     GROUP BY session_id",
                )
                .map_err(self.query_err(what))?;
            let mut rows = stmt.query([]).map_err(self.query_err(what))?;
            while let Some(r) = rows.next().map_err(self.query_err(what))? {
                let id: String = r.get(0).map_err(self.query_err(what))?;
                let count: i64 = r.get(1).map_err(self.query_err(what))?;
                let bytes: i64 = r.get(2).map_err(self.query_err(what))?;
                if let Some(s) = out.get_mut(&id) {
                    s.rows = u64::try_from(count).unwrap_or(0);
                    s.bytes = u64::try_from(bytes + count).unwrap_or(0);
                }
            }
        }
        {
            let mut stmt = tx
                .prepare(
                    "SELECT session_id, COUNT(*) FROM transcript_event_identities \
                     WHERE event_type = 'message' GROUP BY session_id",
                )
                .map_err(self.query_err(what))?;
            let mut rows = stmt.query([]).map_err(self.query_err(what))?;
            while let Some(r) = rows.next().map_err(self.query_err(what))? {
                let id: String = r.get(0).map_err(self.query_err(what))?;
                let count: i64 = r.get(1).map_err(self.query_err(what))?;
                if let Some(s) = out.get_mut(&id) {
                    s.messages = u64::try_from(count).unwrap_or(0);
                }
            }
        }
        tx.finish().map_err(self.query_err(what))?;
        Ok(out)
    }

    /// The session ids of every `session_windows` row.
    fn window_ids(&self) -> Result<Vec<String>, SqliteError> {
        self.window_ids_in(&self.conn)
    }

    /// [`Self::window_ids`] on `conn` (the store's connection or its open transaction).
    fn window_ids_in(&self, conn: &Connection) -> Result<Vec<String>, SqliteError> {
        let what = "session_windows";
        let mut stmt = conn
            .prepare("SELECT session_id FROM session_windows")
            .map_err(self.query_err(what))?;
        stmt.query_map([], |r| r.get(0))
            .map_err(self.query_err(what))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(self.query_err(what))
    }

    /// The change stamp of one session (see the module documentation) inside the caller's read
    /// transaction; `None` when no window has `session_id`.
    fn stamp_in(
        &self,
        tx: &Connection,
        session_id: &str,
    ) -> Result<Option<SessionFileSnapshot>, SqliteError> {
        let what = format!("change stamp of session {session_id}");
        let window: Option<(i64, Option<i64>)> = tx
            .query_row(
                "SELECT updated_at, transcript_updated_at FROM session_windows \
                 WHERE session_id = ?1",
                [session_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(self.query_err(what.clone()))?;
        let Some((updated_at, transcript_updated_at)) = window else {
            return Ok(None);
        };
        let (count, bytes): (i64, i64) = tx
            .query_row(
                "SELECT COUNT(*), COALESCE(SUM(COALESCE(length(CAST(event_json AS BLOB)), \
                 event_utf8_bytes, 0)), 0) FROM transcript_events WHERE session_id = ?1",
                [session_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(self.query_err(what))?;
        // A forced read of a newer schema may lack the watermark table: no generation then.
        let generation: Option<String> = tx
            .query_row(
                "SELECT generation FROM transcript_rewrite_watermarks WHERE session_id = ?1",
                [session_id],
                |r| r.get(0),
            )
            .optional()
            .unwrap_or(None);
        let changed_ms = updated_at.max(transcript_updated_at.unwrap_or(i64::MIN));
        let time_ns = i128::from(changed_ms) * 1_000_000 + i128::from(count % 1_000_000);
        Ok(Some(SessionFileSnapshot {
            dev: SQLITE_STORAGE_DEV,
            ino: fnv1a(&[session_id, generation.as_deref().unwrap_or("")]),
            size: u64::try_from(bytes + count).unwrap_or(0),
            mtime_ns: time_ns,
            ctime_ns: time_ns,
            birth_ns: None,
        }))
    }

    /// The stamp and, with `bytes`, the JSONL of one session, in one read transaction.
    fn snapshot_of(
        &self,
        session_id: &str,
        bytes: bool,
    ) -> Result<Option<(SessionFileSnapshot, Vec<u8>)>, SqliteError> {
        let what = format!("session {session_id}");
        let tx = self
            .conn
            .unchecked_transaction()
            .map_err(self.query_err(what.clone()))?;
        let Some(mut stamp) = self.stamp_in(&tx, session_id)? else {
            tx.finish().map_err(self.query_err(what))?;
            return Ok(None);
        };
        let mut jsonl = Vec::new();
        if bytes {
            let lines = self.lines_in(&tx, session_id)?;
            jsonl.reserve(lines.iter().map(|l| l.len() + 1).sum());
            for line in &lines {
                jsonl.extend_from_slice(line);
                jsonl.push(b'\n');
            }
            // The bytes read are the truth; the stamp's size is computed from the same rows.
            stamp.size = jsonl.len() as u64;
        }
        tx.finish().map_err(self.query_err(what))?;
        Ok(Some((stamp, jsonl)))
    }
}

impl Storage for SqliteStorage {
    fn name(&self) -> &str {
        "sqlite"
    }

    fn stat(&self, path: &Path) -> io::Result<Option<SessionFileSnapshot>> {
        let Some(id) = self.session_id_of(path) else {
            return Ok(None);
        };
        Ok(self
            .store()
            .snapshot_of(&id, false)
            .map_err(to_io)?
            .map(|(s, _)| s))
    }

    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        let id = self.id_for_read(path)?;
        match self.store().snapshot_of(&id, true).map_err(to_io)? {
            Some((_, bytes)) => Ok(bytes),
            None => Err(to_io(SqliteError::UnknownSession {
                path: self.db_path.clone(),
                session_id: id,
            })),
        }
    }

    fn read_snapshot(&self, path: &Path) -> io::Result<SnapshotRead> {
        let Some(id) = self.session_id_of(path) else {
            return Ok(SnapshotRead::Missing);
        };
        Ok(match self.store().snapshot_of(&id, true).map_err(to_io)? {
            Some((snapshot, bytes)) => SnapshotRead::Read { bytes, snapshot },
            None => SnapshotRead::Missing,
        })
    }

    fn create_new(&self, path: &Path, _contents: &[u8]) -> io::Result<()> {
        Err(self.read_only(path, "create"))
    }

    fn replace(&self, path: &Path, _contents: &[u8]) -> io::Result<()> {
        Err(self.read_only(path, "replace"))
    }

    fn replace_if(
        &self,
        path: &Path,
        _contents: &[u8],
        _expected: Option<&SessionFileSnapshot>,
    ) -> io::Result<crate::storage::Replace> {
        Err(self.read_only(path, "replace"))
    }

    fn append_line(
        &self,
        path: &Path,
        _line: &[u8],
        _durability: Durability,
        _expected: Option<KnownFile<'_>>,
    ) -> Result<VerifiedAppend, AppendToExistingError> {
        Err(AppendToExistingError::Io(self.read_only(path, "append")))
    }

    fn append_raw(&self, path: &Path, _bytes: &[u8]) -> io::Result<()> {
        Err(self.read_only(path, "append"))
    }

    fn backup_copy(&self, _source: &Path, backup: &Path, _original: &[u8]) -> io::Result<()> {
        Err(self.read_only(backup, "backup copy"))
    }

    fn sync(&self, path: &Path, durability: Durability) -> io::Result<()> {
        if matches!(durability, Durability::Buffer) {
            return Ok(());
        }
        match self.stat(path)? {
            Some(_) => Ok(()),
            None => Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "no session {} in {}",
                    path.display(),
                    self.db_path.display()
                ),
            )),
        }
    }

    fn ensure_dir(&self, dir: &Path) -> io::Result<()> {
        Err(self.read_only(dir, "create a directory"))
    }

    fn list_sessions(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        if crate::paths::resolve(dir) != self.sessions_dir {
            return Ok(Vec::new());
        }
        let mut names: Vec<String> = self
            .store()
            .window_ids()
            .map_err(to_io)?
            .into_iter()
            // An id that cannot be one file name has no path in the layout.
            .filter(|id| !id.is_empty() && !id.contains(['/', '\0']) && id != "." && id != "..")
            .map(|id| format!("{id}.jsonl"))
            .collect();
        names.sort();
        Ok(names.iter().map(|n| self.sessions_dir.join(n)).collect())
    }

    fn list_dirs(&self, root: &Path) -> io::Result<Vec<PathBuf>> {
        let root = crate::paths::resolve(root);
        Ok(if self.sessions_dir.parent() == Some(root.as_path()) {
            vec![self.sessions_dir.clone()]
        } else {
            Vec::new()
        })
    }

    fn with_write_lock(
        &self,
        path: &Path,
        _options: &LockOptions,
        _run: &mut dyn FnMut(),
    ) -> Result<(), LockError> {
        Err(LockError::Io {
            path: path.to_path_buf(),
            source: self.read_only(path, "take the write lock"),
        })
    }
}
