//! A read-only reader of OpenClaw 2026.8+ per-agent SQLite stores
//! (`<state>/agents/<agentId>/agent/openclaw-agent.sqlite`, schema 23 in 2026.9.6), as
//! `openclaw-sqlite.md` describes them.
//!
//! [`SqliteStore::open`] opens the file as §1.5 says; [`SqliteStore::sessions`] lists the
//! session windows with their keys (§2.2, §2.3); [`SqliteStore::lines`] gives one session's rows
//! in `seq` order as their JSON text, zstd rows decoded and checked (§2.4, §2.5);
//! [`SqliteStore::leaf`] reads the materialised leaf (§2.8) and [`SqliteStore::active_branch`]
//! the materialised active branch (§2.9); recomputing them when the index is stale is not done
//! here yet. [`SqliteStore::open_session`] opens one session as a read-only
//! [`SessionManager`](crate::SessionManager), so the JSONL read path works on it. Nothing here writes: the connection
//! is read-only and `query_only`.

mod error;
pub mod verify;
mod view;

pub use error::{RowProblem, SqliteError};

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The agent schema version this reader knows (`PRAGMA user_version` and
/// `schema_meta.schema_version` of OpenClaw 2026.9.6; §5).
pub const KNOWN_SCHEMA_VERSION: i64 = 23;

/// The largest zstd blob and decoded row OpenClaw writes or decodes, in bytes (§2.4, §2.5).
const MAX_ZSTD_BYTES: usize = 4_194_304;

/// An OpenClaw per-agent SQLite store opened read-only (§1.5).
#[derive(Debug)]
pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
    app_version: Option<String>,
    agent_id: Option<String>,
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
    /// Opens `path` read-only as `openclaw-sqlite.md` §1.5 says: `SQLITE_OPEN_READONLY` (a
    /// missing file is an error, never created), `busy_timeout` 5000 ms, `query_only = ON`,
    /// `trusted_schema = OFF`, no `journal_mode` change; then checks the schema (§5):
    /// `PRAGMA user_version` and `schema_meta.schema_version` must both be
    /// [`KNOWN_SCHEMA_VERSION`] and the `primary` row's role `agent`.
    ///
    /// A read-only open of a WAL-mode database that has no `-wal`/`-shm` makes SQLite create
    /// both (§1.5 rule 3); the main file's bytes are never changed.
    ///
    /// # Errors
    /// [`SqliteError::Open`] when the file cannot be opened or set up;
    /// [`SqliteError::SchemaVersion`] naming the version found;
    /// [`SqliteError::SchemaMeta`] without an agent `schema_meta` row;
    /// [`SqliteError::Query`] when the schema cannot be read.
    pub fn open(path: impl AsRef<Path>) -> Result<SqliteStore, SqliteError> {
        let path = path.as_ref().to_path_buf();
        let open_err = |source| SqliteError::Open {
            path: path.clone(),
            source,
        };
        let conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(open_err)?;
        conn.busy_timeout(Duration::from_millis(5000))
            .map_err(open_err)?;
        conn.pragma_update(None, "query_only", true)
            .map_err(open_err)?;
        conn.pragma_update(None, "trusted_schema", false)
            .map_err(open_err)?;
        let mut store = SqliteStore {
            conn,
            path,
            app_version: None,
            agent_id: None,
        };
        store.check_schema()?;
        Ok(store)
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

    fn query_err(&self, what: impl Into<String>) -> impl FnOnce(rusqlite::Error) -> SqliteError {
        let path = self.path.clone();
        let what = what.into();
        move |source| SqliteError::Query { path, what, source }
    }

    /// The §5 checks, in one read transaction so both versions come from one snapshot.
    fn check_schema(&mut self) -> Result<(), SqliteError> {
        let tx = self
            .conn
            .unchecked_transaction()
            .map_err(self.query_err("schema version"))?;
        let user_version: i64 = tx
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(self.query_err("PRAGMA user_version"))?;
        if user_version != KNOWN_SCHEMA_VERSION {
            return Err(SqliteError::SchemaVersion {
                path: self.path.clone(),
                origin: "PRAGMA user_version",
                version: user_version,
                known: KNOWN_SCHEMA_VERSION,
            });
        }
        let meta: Option<(String, i64, Option<String>, Option<String>)> = tx
            .query_row(
                "SELECT role, schema_version, agent_id, app_version FROM schema_meta \
                 WHERE meta_key = 'primary'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .optional()
            .map_err(self.query_err("schema_meta"))?;
        tx.finish().map_err(self.query_err("schema version"))?;
        let Some((role, version, agent_id, app_version)) = meta else {
            return Err(SqliteError::SchemaMeta {
                path: self.path.clone(),
                problem: "no schema_meta row 'primary'".to_owned(),
            });
        };
        if role != "agent" {
            return Err(SqliteError::SchemaMeta {
                path: self.path.clone(),
                problem: format!("schema_meta role is '{role}', not 'agent'"),
            });
        }
        if version != KNOWN_SCHEMA_VERSION {
            return Err(SqliteError::SchemaVersion {
                path: self.path.clone(),
                origin: "schema_meta",
                version,
                known: KNOWN_SCHEMA_VERSION,
            });
        }
        self.agent_id = agent_id;
        self.app_version = app_version;
        Ok(())
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
        let mut stmt = tx
            .prepare(
                "SELECT seq, event_json, event_zstd, event_utf8_bytes FROM transcript_events \
                 WHERE session_id = ?1 ORDER BY seq",
            )
            .map_err(self.query_err(what.clone()))?;
        let mut rows = stmt
            .query([session_id])
            .map_err(self.query_err(what.clone()))?;
        let mut lines = Vec::new();
        while let Some(row) = rows.next().map_err(self.query_err(what.clone()))? {
            let seq: i64 = row.get(0).map_err(self.query_err(what.clone()))?;
            let bad = |problem| SqliteError::BadRow {
                path: self.path.clone(),
                session_id: session_id.to_owned(),
                seq,
                problem,
            };
            let json = row.get_ref(1).map_err(self.query_err(what.clone()))?;
            let zstd = row.get_ref(2).map_err(self.query_err(what.clone()))?;
            let stored_len: Option<i64> = row.get(3).map_err(self.query_err(what.clone()))?;
            let text = match (json, zstd) {
                (ValueRef::Text(text), ValueRef::Null) => {
                    std::str::from_utf8(text).map_err(|e| {
                        bad(RowProblem::Utf8 {
                            valid_up_to: e.valid_up_to(),
                        })
                    })?;
                    text.to_vec()
                }
                (ValueRef::Null, ValueRef::Blob(blob)) => {
                    decode_zstd(blob, stored_len).map_err(bad)?
                }
                (json, zstd) => {
                    return Err(bad(RowProblem::PayloadColumns {
                        json: !matches!(json, ValueRef::Null),
                        zstd: !matches!(zstd, ValueRef::Null),
                    }));
                }
            };
            lines.push(text);
        }
        drop(rows);
        drop(stmt);
        tx.finish().map_err(self.query_err(what))?;
        Ok(lines)
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
        self.require_window(&tx, session_id)?;
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
            .map_err(self.query_err(what.clone()))?;
        tx.finish().map_err(self.query_err(what))?;
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
        self.require_window(&tx, session_id)?;
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
            .map_err(self.query_err(what.clone()))?;
        drop(stmt);
        tx.finish().map_err(self.query_err(what))?;
        Ok(ids)
    }

    fn require_window(&self, tx: &Connection, session_id: &str) -> Result<(), SqliteError> {
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
