//! A read-only reader of OpenClaw 2026.8+ per-agent SQLite stores
//! (`<state>/agents/<agentId>/agent/openclaw-agent.sqlite`, schema 23 in 2026.9.6), as
//! `openclaw-sqlite.md` describes them.
//!
//! - **Opening** (`schema.rs`): [`SqliteStore::open`] / [`SqliteStore::open_with`] open the
//!   file as §1.5 says (read-only, busy timeout 5000 ms, `query_only`, `trusted_schema = OFF`)
//!   and check the schema as §5 says: `user_version` 23 is read; 17–22 and below 17 are refused
//!   with OpenClaw's own advice, an empty file as "not an OpenClaw agent database", a newer
//!   version unless [`OpenOptions::force_schema`]; every table and column the reader uses
//!   ([`READ_COLUMNS`]) must exist; `transcript_events` without the zstd columns is read
//!   through `event_json` only; `schema_meta` must name a non-empty agent, the directory's
//!   one when the path is `agents/<id>/agent/openclaw-agent.sqlite`. What was accepted with a
//!   caution is in [`SqliteStore::warnings`].
//! - **Reading** (this file, `view.rs`): [`SqliteStore::sessions`] lists the session windows
//!   with their keys (§2.2, §2.3); [`SqliteStore::lines`] gives one session's rows in `seq`
//!   order as their JSON text, zstd rows decoded and checked (§2.4, §2.5);
//!   [`SqliteStore::open_session`] opens one session as a read-only
//!   [`SessionManager`](crate::SessionManager), so the JSONL read path works on it.
//! - **Leaf and branch** (`leaf.rs`): [`SqliteStore::leaf`] and [`SqliteStore::active_branch`]
//!   read what OpenClaw materialised (§2.8, §2.9); [`SqliteStore::resolved_leaf`] also
//!   recomputes both from the rows with our navigation rules, returns the materialised ones when
//!   the index is fresh and ours when it is stale, and says when they disagree.
//! - **Checks** (`check.rs`): [`SqliteStore::check_session`] and [`SqliteStore::check_all`]
//!   list the inconsistencies of §2.13 recipe 7 and more as [`Finding`]s (missing windows,
//!   `seq` gaps, undecodable rows, bad identities, stale index, leaf disagreement, invalid
//!   entries), never stopping at the first.
//! - **Sidecars** (`sidecars.rs`): a read-only open of a WAL-mode database may create `-wal`
//!   and `-shm` (§1.5 rule 3); the ones this store created are removed again on drop or
//!   [`SqliteStore::close`] when the `-wal` is empty and no process has the files open
//!   (Linux; elsewhere they are left and reported). Pre-existing sidecars are never touched.
//!
//! - **Import verification** ([`verify`]): re-derives what OpenClaw's doctor import should have
//!   stored for each legacy archive and compares it row by row with the database (§4.7);
//!   salvages the parseable lines of a damaged transcript into a new JSONL file.
//! - **Storage** (`storage.rs`): [`SqliteStorage`], the database behind the
//!   [`Storage`](crate::Storage) seam, read-only.
//!
//! Nothing here writes to the database: the connection is read-only and `query_only`, and each
//! read runs in one read transaction, so a WAL-mode writer never blocks it and it never sees
//! half a commit.

mod check;
mod error;
mod leaf;
mod schema;
mod sidecars;
mod storage;
pub mod verify;
mod view;

pub use check::Finding;
pub use error::{RowProblem, SqliteError};
pub use leaf::{LeafSource, ResolvedLeaf};
pub use schema::{OpenOptions, READ_COLUMNS, SqliteWarning};
pub use sidecars::{KeptBecause, SidecarCleanup};
pub use storage::{SQLITE_STORAGE_DEV, SqliteArchive, SqliteStorage, TranscriptSummary};

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OptionalExtension};
use std::path::{Path, PathBuf};

/// The agent schema version this reader knows (`PRAGMA user_version` and
/// `schema_meta.schema_version` of OpenClaw 2026.9.6; §5).
pub const KNOWN_SCHEMA_VERSION: i64 = 23;

/// The largest zstd blob and decoded row OpenClaw writes or decodes, in bytes (§2.4, §2.5).
const MAX_ZSTD_BYTES: usize = 4_194_304;

/// An OpenClaw per-agent SQLite store opened read-only (§1.5).
#[derive(Debug)]
pub struct SqliteStore {
    // Declared first so that it is dropped (closed) before `sidecars` cleans up (§1.5 rule 3).
    conn: Connection,
    path: PathBuf,
    app_version: Option<String>,
    agent_id: Option<String>,
    /// Whether `transcript_events` has `event_zstd` and `event_utf8_bytes` (§5).
    zstd_columns: bool,
    warnings: Vec<SqliteWarning>,
    sidecars: sidecars::Sidecars,
}

/// One transcript generation (`session_windows` row, §2.3) with its key's `session_nodes` row
/// (§2.2). Times are epoch milliseconds.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SqliteSession {
    /// The session key, e.g. `agent:main:dm:alice`.
    pub session_key: String,
    /// The transcript's session id (the header row's `id`).
    pub session_id: String,
    /// Whether this generation is the key's `current_session_id` (earlier generations are not).
    pub current: bool,
    /// The generation this one replaced (`NULL` for doctor-imported sessions).
    pub previous_session_id: Option<String>,
    /// Why the generation began (`initial`, `reset`, `rollover`, `fork`, …; `NULL` when imported).
    pub reason: Option<String>,
    /// The key's `label`.
    pub label: Option<String>,
    /// The key's `display_name`, else the window's.
    pub display_name: Option<String>,
    /// The key's `archived_at`; `Some` means an archived session.
    pub archived_at: Option<i64>,
    /// The key's `updated_at` (the SessionEntry's `updatedAt`).
    pub updated_at: i64,
    /// The window's `created_at`.
    pub window_created_at: i64,
    /// The window's `updated_at` (the last row's `created_at` after an import).
    pub window_updated_at: i64,
    /// The window's `chat_type` (`direct`, `group`, `channel`).
    pub chat_type: Option<String>,
    /// The window's `model_provider`.
    pub model_provider: Option<String>,
    /// The window's `model`.
    pub model: Option<String>,
    /// The key's whole SessionEntry JSON (`entry_json`), the canonical record: token counts and
    /// every other entry field are read from it.
    pub entry_json: String,
}

/// The leaf as `session_transcript_index_state` materialises it (§2.8).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SqliteLeaf {
    /// `leaf_event_id`: the current leaf id (`None` for an empty transcript or no index row).
    pub leaf_event_id: Option<String>,
    /// Whether the index is current: an index row exists, `needs_rebuild = 0` and
    /// `indexed_seq` equals the session's highest `seq`. When `false`, `leaf_event_id` may be
    /// stale and must be recomputed from the rows (§2.8 recommendation).
    pub fresh: bool,
    /// `indexed_seq` (`None` without an index row).
    pub indexed_seq: Option<i64>,
    /// The session's highest `seq` (`None` for no rows).
    pub max_seq: Option<i64>,
}

impl SqliteStore {
    /// Opens `path` read-only as `openclaw-sqlite.md` §1.5 says, with the default
    /// [`OpenOptions`] (only schema 23 accepted): [`Self::open_with`].
    ///
    /// # Errors
    /// As [`Self::open_with`].
    pub fn open(path: impl AsRef<Path>) -> Result<SqliteStore, SqliteError> {
        Self::open_with(path, &OpenOptions::default())
    }

    /// The database file this store reads.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `schema_meta.app_version`: the OpenClaw version that wrote the schema, e.g. `2026.9.6`.
    pub fn app_version(&self) -> Option<&str> {
        self.app_version.as_deref()
    }

    /// `schema_meta.agent_id`: the owning agent, e.g. `main`.
    pub fn agent_id(&self) -> Option<&str> {
        self.agent_id.as_deref()
    }

    pub(crate) fn query_err(
        &self,
        what: impl Into<String>,
    ) -> impl FnOnce(rusqlite::Error) -> SqliteError {
        let path = self.path.clone();
        let what = what.into();
        move |source| {
            SqliteError::classify(&path, source).unwrap_or_else(|source| SqliteError::Query {
                path,
                what,
                source,
            })
        }
    }

    /// Every transcript generation of the agent: `session_windows` joined with its key's
    /// `session_nodes` row (§2.2, §2.3, §2.13 recipes 1–3), ordered by the key's `updated_at`
    /// descending, then key, then the window's `created_at` (current and earlier generations
    /// together; [`SqliteSession::current`] tells them apart). Archived keys are included.
    ///
    /// # Errors
    /// [`SqliteError::Query`] when the tables cannot be read.
    pub fn sessions(&self) -> Result<Vec<SqliteSession>, SqliteError> {
        let what = "sessions (session_nodes, session_windows)";
        let tx = self
            .conn
            .unchecked_transaction()
            .map_err(self.query_err(what))?;
        let mut stmt = tx
            .prepare(
                "SELECT n.session_key, w.session_id, w.session_id = n.current_session_id, \
                 w.previous_session_id, w.reason, n.label, \
                 COALESCE(n.display_name, w.display_name), n.archived_at, n.updated_at, \
                 w.created_at, w.updated_at, w.chat_type, w.model_provider, w.model, \
                 n.entry_json \
                 FROM session_windows w JOIN session_nodes n ON n.session_key = w.session_key \
                 ORDER BY n.updated_at DESC, n.session_key, w.created_at, w.session_id",
            )
            .map_err(self.query_err(what))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(SqliteSession {
                    session_key: r.get(0)?,
                    session_id: r.get(1)?,
                    current: r.get(2)?,
                    previous_session_id: r.get(3)?,
                    reason: r.get(4)?,
                    label: r.get(5)?,
                    display_name: r.get(6)?,
                    archived_at: r.get(7)?,
                    updated_at: r.get(8)?,
                    window_created_at: r.get(9)?,
                    window_updated_at: r.get(10)?,
                    chat_type: r.get(11)?,
                    model_provider: r.get(12)?,
                    model: r.get(13)?,
                    entry_json: r.get(14)?,
                })
            })
            .map_err(self.query_err(what))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(self.query_err(what))?;
        drop(stmt);
        tx.finish().map_err(self.query_err(what))?;
        Ok(rows)
    }

    /// One session's rows in `seq` order, each its JSON text as bytes without a newline
    /// (§2.13 recipe 4): `event_json`, or `event_zstd` decoded as §2.5 says (blob 1 to
    /// 4194304 bytes, output capped at `event_utf8_bytes` and equal to it, zstd checksum
    /// verified, strict UTF-8, a BOM kept). Joining them with `\n` after each gives the
    /// session's JSONL as OpenClaw stored it. Read in one read transaction.
    ///
    /// # Errors
    /// [`SqliteError::UnknownSession`] when no `session_windows` row has `session_id`;
    /// [`SqliteError::BadRow`] naming the session id and `seq` of the first row that cannot be
    /// decoded; [`SqliteError::Query`] when the rows cannot be read.
    pub fn lines(&self, session_id: &str) -> Result<Vec<Vec<u8>>, SqliteError> {
        let what = format!("lines of session {session_id}");
        let tx = self
            .conn
            .unchecked_transaction()
            .map_err(self.query_err(what.clone()))?;
        self.require_window(&tx, session_id)?;
        let lines = self.lines_in(&tx, session_id)?;
        tx.finish().map_err(self.query_err(what))?;
        Ok(lines)
    }

    /// [`Self::lines`] inside the caller's read transaction `tx`, the window known to exist.
    pub(crate) fn lines_in(
        &self,
        tx: &Connection,
        session_id: &str,
    ) -> Result<Vec<Vec<u8>>, SqliteError> {
        let what = format!("lines of session {session_id}");
        let mut stmt = tx
            .prepare(self.events_select())
            .map_err(self.query_err(what.clone()))?;
        let mut rows = stmt
            .query([session_id])
            .map_err(self.query_err(what.clone()))?;
        let mut lines = Vec::new();
        while let Some(row) = rows.next().map_err(self.query_err(what.clone()))? {
            let seq: i64 = row.get(0).map_err(self.query_err(what.clone()))?;
            let json = row.get_ref(1).map_err(self.query_err(what.clone()))?;
            let zstd = row.get_ref(2).map_err(self.query_err(what.clone()))?;
            let stored_len: Option<i64> = row.get(3).map_err(self.query_err(what.clone()))?;
            let text = row_text(json, zstd, stored_len).map_err(|problem| SqliteError::BadRow {
                path: self.path.clone(),
                session_id: session_id.to_owned(),
                seq,
                problem,
            })?;
            lines.push(text);
        }
        Ok(lines)
    }

    /// The query of one session's rows in `seq` order: `seq`, `event_json`, `event_zstd`,
    /// `event_utf8_bytes`; the last two `NULL` when the table lacks them (§5).
    pub(crate) fn events_select(&self) -> &'static str {
        if self.zstd_columns {
            "SELECT seq, event_json, event_zstd, event_utf8_bytes FROM transcript_events \
             WHERE session_id = ?1 ORDER BY seq"
        } else {
            "SELECT seq, event_json, NULL, NULL FROM transcript_events \
             WHERE session_id = ?1 ORDER BY seq"
        }
    }

    /// The session's leaf as `session_transcript_index_state` holds it, with whether that index
    /// is current (§2.8). Read in one read transaction.
    ///
    /// # Errors
    /// [`SqliteError::UnknownSession`] when no `session_windows` row has `session_id`;
    /// [`SqliteError::Query`] when the tables cannot be read.
    pub fn leaf(&self, session_id: &str) -> Result<SqliteLeaf, SqliteError> {
        let what = format!("leaf of session {session_id}");
        let tx = self
            .conn
            .unchecked_transaction()
            .map_err(self.query_err(what.clone()))?;
        let leaf = self.leaf_in(&tx, session_id)?;
        tx.finish().map_err(self.query_err(what))?;
        Ok(leaf)
    }

    /// [`Self::leaf`] inside the caller's read transaction `tx`.
    pub(crate) fn leaf_in(
        &self,
        tx: &Connection,
        session_id: &str,
    ) -> Result<SqliteLeaf, SqliteError> {
        let what = format!("leaf of session {session_id}");
        self.require_window(tx, session_id)?;
        let index: Option<(Option<i64>, Option<String>, i64)> = tx
            .query_row(
                "SELECT indexed_seq, leaf_event_id, needs_rebuild \
                 FROM session_transcript_index_state WHERE session_id = ?1",
                [session_id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
            .map_err(self.query_err(what.clone()))?;
        let max_seq: Option<i64> = tx
            .query_row(
                "SELECT MAX(seq) FROM transcript_events WHERE session_id = ?1",
                [session_id],
                |r| r.get(0),
            )
            .map_err(self.query_err(what))?;
        Ok(match index {
            Some((indexed_seq, leaf_event_id, needs_rebuild)) => SqliteLeaf {
                fresh: needs_rebuild == 0 && indexed_seq == max_seq,
                leaf_event_id,
                indexed_seq,
                max_seq,
            },
            None => SqliteLeaf {
                leaf_event_id: None,
                fresh: false,
                indexed_seq: None,
                max_seq,
            },
        })
    }

    /// The ids of the session's active branch, root first, as
    /// `session_transcript_active_events` materialises it joined with
    /// `transcript_event_identities` by seq (§2.9): the tree path root → leaf without the header,
    /// label rows, abandoned branches, opaque rows and leaf controls. Like the leaf it is stale
    /// when [`SqliteLeaf::fresh`] is `false`. Read in one read transaction.
    ///
    /// # Errors
    /// [`SqliteError::UnknownSession`] when no `session_windows` row has `session_id`;
    /// [`SqliteError::Query`] when the tables cannot be read, or an active row has no identity.
    pub fn active_branch(&self, session_id: &str) -> Result<Vec<String>, SqliteError> {
        let what = format!("active branch of session {session_id}");
        let tx = self
            .conn
            .unchecked_transaction()
            .map_err(self.query_err(what.clone()))?;
        let ids = self.active_branch_in(&tx, session_id)?;
        tx.finish().map_err(self.query_err(what))?;
        Ok(ids)
    }

    /// [`Self::active_branch`] inside the caller's read transaction `tx`.
    pub(crate) fn active_branch_in(
        &self,
        tx: &Connection,
        session_id: &str,
    ) -> Result<Vec<String>, SqliteError> {
        let what = format!("active branch of session {session_id}");
        self.require_window(tx, session_id)?;
        let mut stmt = tx
            .prepare(
                "SELECT i.event_id FROM session_transcript_active_events a \
                 LEFT JOIN transcript_event_identities i \
                 ON i.session_id = a.session_id AND i.seq = a.event_seq \
                 WHERE a.session_id = ?1 ORDER BY a.active_position",
            )
            .map_err(self.query_err(what.clone()))?;
        let ids = stmt
            .query_map([session_id], |r| r.get::<_, String>(0))
            .map_err(self.query_err(what.clone()))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(self.query_err(what))?;
        Ok(ids)
    }

    pub(crate) fn require_window(
        &self,
        tx: &Connection,
        session_id: &str,
    ) -> Result<(), SqliteError> {
        let found: Option<i64> = tx
            .query_row(
                "SELECT 1 FROM session_windows WHERE session_id = ?1",
                [session_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(self.query_err(format!("session window {session_id}")))?;
        match found {
            Some(_) => Ok(()),
            None => Err(SqliteError::UnknownSession {
                path: self.path.clone(),
                session_id: session_id.to_owned(),
            }),
        }
    }
}

/// One row's JSON text from its `event_json`, `event_zstd` and `event_utf8_bytes` (§2.4, §2.5).
pub(crate) fn row_text(
    json: ValueRef<'_>,
    zstd: ValueRef<'_>,
    stored_len: Option<i64>,
) -> Result<Vec<u8>, RowProblem> {
    match (json, zstd) {
        (ValueRef::Text(text), ValueRef::Null) => {
            std::str::from_utf8(text).map_err(|e| RowProblem::Utf8 {
                valid_up_to: e.valid_up_to(),
            })?;
            Ok(text.to_vec())
        }
        (ValueRef::Null, ValueRef::Blob(blob)) => decode_zstd(blob, stored_len),
        (json, zstd) => Err(RowProblem::PayloadColumns {
            json: !matches!(json, ValueRef::Null),
            zstd: !matches!(zstd, ValueRef::Null),
        }),
    }
}

/// Decodes one `event_zstd` blob as OpenClaw's decoder does (§2.5).
fn decode_zstd(blob: &[u8], stored_len: Option<i64>) -> Result<Vec<u8>, RowProblem> {
    if blob.is_empty() || blob.len() > MAX_ZSTD_BYTES {
        return Err(RowProblem::BlobSize { len: blob.len() });
    }
    let expected = stored_len
        .and_then(|n| usize::try_from(n).ok())
        .filter(|n| (1..=MAX_ZSTD_BYTES).contains(n))
        .ok_or(RowProblem::StoredLength { value: stored_len })?;
    let text = zstd::bulk::decompress(blob, expected).map_err(|e| RowProblem::Decompress {
        message: e.to_string(),
    })?;
    if text.len() != expected {
        return Err(RowProblem::LengthMismatch {
            expected,
            actual: text.len(),
        });
    }
    std::str::from_utf8(&text).map_err(|e| RowProblem::Utf8 {
        valid_up_to: e.valid_up_to(),
    })?;
    Ok(text)
}
