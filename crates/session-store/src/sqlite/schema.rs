//! Opening a store and checking its schema (`openclaw-sqlite.md` §1.3, §1.5, §5); the rules
//! are in [`SqliteStore::open_with`]'s docs.

use super::sidecars::Sidecars;
use super::{KNOWN_SCHEMA_VERSION, SqliteError, SqliteStore};
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

/// The tables and columns this reader (and the SQLite `Storage` over it) reads, checked at open
/// through `pragma_table_info` (§5). `transcript_events.event_zstd` and `event_utf8_bytes`
/// are optional and checked apart.
pub const READ_COLUMNS: &[(&str, &[&str])] = &[
    (
        "schema_meta",
        &[
            "meta_key",
            "role",
            "schema_version",
            "agent_id",
            "app_version",
        ],
    ),
    (
        "session_nodes",
        &[
            "session_key",
            "current_session_id",
            "entry_json",
            "entry_valid",
            "updated_at",
            "label",
            "display_name",
            "archived_at",
        ],
    ),
    (
        "session_windows",
        &[
            "session_id",
            "session_key",
            "previous_session_id",
            "reason",
            "created_at",
            "updated_at",
            "chat_type",
            "model_provider",
            "model",
            "display_name",
        ],
    ),
    ("transcript_events", &["session_id", "seq", "event_json"]),
    (
        "transcript_event_identities",
        &["session_id", "event_id", "seq"],
    ),
    (
        "session_transcript_index_state",
        &[
            "session_id",
            "indexed_seq",
            "leaf_event_id",
            "needs_rebuild",
        ],
    ),
    (
        "session_transcript_active_events",
        &["session_id", "active_position", "event_seq"],
    ),
    (
        "transcript_rewrite_watermarks",
        &["session_id", "generation"],
    ),
];

/// How [`SqliteStore::open_with`] treats the schema (§5).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpenOptions {
    /// Read a database whose `user_version` is newer than [`KNOWN_SCHEMA_VERSION`] when every
    /// table and column in [`READ_COLUMNS`] exists, recording a
    /// [`SqliteWarning::NewerSchema`] (library callers only; the CLI has no such switch).
    /// Off by default: a newer schema is refused. Versions below 23 are refused either way.
    pub force_schema: bool,
}

/// Something [`SqliteStore::open_with`] accepted but a caller should show
/// ([`SqliteStore::warnings`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SqliteWarning {
    /// The schema is newer than this reader knows; read because
    /// [`OpenOptions::force_schema`] was set and the tables and columns it reads exist.
    #[error(
        "schema version {version} is newer than version {known} that this reader knows; \
         reading it anyway (force_schema), results may be incomplete"
    )]
    NewerSchema {
        /// `PRAGMA user_version`.
        version: i64,
        /// [`KNOWN_SCHEMA_VERSION`].
        known: i64,
    },
    /// `transcript_events` lacks `event_zstd` or `event_utf8_bytes`: rows are read from
    /// `event_json` only (§5).
    #[error(
        "transcript_events has no event_zstd/event_utf8_bytes columns; reading event_json only"
    )]
    NoZstdColumns,
}

impl SqliteStore {
    /// Opens `path` read-only as `openclaw-sqlite.md` §1.5 says: `SQLITE_OPEN_READONLY` (a
    /// missing file is an error, never created), `busy_timeout` 5000 ms, `query_only = ON`,
    /// `trusted_schema = OFF`, no `journal_mode` change; then checks the schema (§5) in one
    /// read transaction.
    ///
    /// The rules, in the order they are applied to `PRAGMA user_version`:
    ///
    /// | `user_version` | result |
    /// |---|---|
    /// | 23 ([`KNOWN_SCHEMA_VERSION`]) | read |
    /// | > 23 | [`SqliteError::SchemaNewer`], unless [`OpenOptions::force_schema`]: then read with a [`SqliteWarning::NewerSchema`] |
    /// | 17–22 | [`SqliteError::SchemaNeedsIdentityMigration`] (OpenClaw's own advice) |
    /// | 0 and no table at all | [`SqliteError::EmptyDatabase`] |
    /// | otherwise below 17 | [`SqliteError::SchemaNeedsMediaMigration`] |
    ///
    /// Then every table and column the reader reads ([`READ_COLUMNS`]) must exist
    /// ([`SqliteError::MissingSchemaItem`] names the first missing one); `transcript_events`
    /// without `event_zstd`/`event_utf8_bytes` is read through `event_json` only, as OpenClaw's
    /// doctor reader does, with a [`SqliteWarning::NoZstdColumns`]. Last, `schema_meta`'s
    /// `primary` row must have role `agent`, `schema_version` equal to `user_version`, a
    /// non-empty `agent_id`, and, when the path is `agents/<id>/agent/openclaw-agent.sqlite`,
    /// that `<id>` ([`SqliteError::AgentMismatch`]).
    ///
    /// A read-only open of a WAL-mode database that has no `-wal`/`-shm` makes SQLite create
    /// both (§1.5 rule 3); which of them existed before is recorded here, and the ones this
    /// open created are removed again when the store is dropped or closed, if unused (the
    /// rules are in [`SidecarCleanup`](super::SidecarCleanup)). The main file's bytes are never
    /// changed.
    ///
    /// # Errors
    /// [`SqliteError::Open`] when the file cannot be opened or set up;
    /// [`SqliteError::SchemaNewer`], [`SqliteError::SchemaNeedsIdentityMigration`],
    /// [`SqliteError::SchemaNeedsMediaMigration`], [`SqliteError::EmptyDatabase`] for a
    /// `user_version` other than 23 (the table above);
    /// [`SqliteError::MissingSchemaItem`] naming the first missing table or column;
    /// [`SqliteError::SchemaVersion`] when `schema_meta.schema_version` differs from
    /// `user_version`; [`SqliteError::SchemaMeta`] without an agent `schema_meta` row or with
    /// an empty agent id; [`SqliteError::AgentMismatch`] when the agent id is not the
    /// directory's; [`SqliteError::Query`] when the schema cannot be read.
    pub fn open_with(
        path: impl AsRef<Path>,
        options: &OpenOptions,
    ) -> Result<SqliteStore, SqliteError> {
        let path = path.as_ref().to_path_buf();
        let open_err = |source| {
            SqliteError::classify(&path, source).unwrap_or_else(|source| SqliteError::Open {
                path: path.clone(),
                source,
            })
        };
        // Before SQLite can create any sidecar.
        let sidecars = Sidecars::before_open(&path);
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
            zstd_columns: true,
            warnings: Vec::new(),
            sidecars,
        };
        // On failure `store` drops here: the connection closes, then the sidecars it made go.
        store.check_schema(options)?;
        Ok(store)
    }

    /// What [`Self::open_with`] accepted with a caution, in the order found (empty for a
    /// schema-23 database with every column).
    pub fn warnings(&self) -> &[SqliteWarning] {
        &self.warnings
    }

    /// The §5 checks, in one read transaction so that everything comes from one snapshot.
    fn check_schema(&mut self, options: &OpenOptions) -> Result<(), SqliteError> {
        let tx = self
            .conn
            .unchecked_transaction()
            .map_err(self.query_err("schema version"))?;
        let user_version: i64 = tx
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(self.query_err("PRAGMA user_version"))?;
        // The first read opened the WAL (and made the sidecars, if any).
        self.sidecars.note_created();
        let path = self.path.clone();
        match user_version {
            KNOWN_SCHEMA_VERSION => {}
            v if v > KNOWN_SCHEMA_VERSION => {
                if !options.force_schema {
                    return Err(SqliteError::SchemaNewer {
                        path,
                        version: v,
                        known: KNOWN_SCHEMA_VERSION,
                    });
                }
                self.warnings.push(SqliteWarning::NewerSchema {
                    version: v,
                    known: KNOWN_SCHEMA_VERSION,
                });
            }
            v @ 17..=22 => {
                return Err(SqliteError::SchemaNeedsIdentityMigration { path, version: v });
            }
            v => {
                let any_table: Option<i64> = tx
                    .query_row(
                        "SELECT 1 FROM sqlite_master WHERE substr(name, 1, 7) <> 'sqlite_' LIMIT 1",
                        [],
                        |r| r.get(0),
                    )
                    .optional()
                    .map_err(self.query_err("sqlite_master"))?;
                return Err(if v == 0 && any_table.is_none() {
                    SqliteError::EmptyDatabase { path }
                } else {
                    SqliteError::SchemaNeedsMediaMigration { path, version: v }
                });
            }
        }
        self.zstd_columns = self.check_columns(&tx, user_version)?;
        if !self.zstd_columns {
            self.warnings.push(SqliteWarning::NoZstdColumns);
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
                path,
                problem: "no schema_meta row 'primary'".to_owned(),
            });
        };
        if role != "agent" {
            return Err(SqliteError::SchemaMeta {
                path,
                problem: format!("schema_meta role is '{role}', not 'agent'"),
            });
        }
        if version != user_version {
            return Err(SqliteError::SchemaVersion {
                path,
                origin: "schema_meta",
                version,
                known: KNOWN_SCHEMA_VERSION,
            });
        }
        let agent_id =
            agent_id
                .filter(|id| !id.trim().is_empty())
                .ok_or_else(|| SqliteError::SchemaMeta {
                    path: path.clone(),
                    problem: "schema_meta agent_id is empty".to_owned(),
                })?;
        if let Some(dir_agent) = dir_agent_id(&self.path)
            && agent_id.trim().to_lowercase() != dir_agent
        {
            return Err(SqliteError::AgentMismatch {
                schema_agent: agent_id,
                dir_agent: dir_agent.to_owned(),
                path,
            });
        }
        self.agent_id = Some(agent_id);
        self.app_version = app_version;
        Ok(())
    }

    /// Checks [`READ_COLUMNS`]; returns whether `transcript_events` has both zstd columns.
    fn check_columns(&self, tx: &Connection, version: i64) -> Result<bool, SqliteError> {
        let what = "pragma_table_info";
        let mut stmt = tx
            .prepare("SELECT name FROM pragma_table_info(?1)")
            .map_err(self.query_err(what))?;
        let mut columns_of = |table: &str| -> Result<HashSet<String>, SqliteError> {
            stmt.query_map([table], |r| r.get::<_, String>(0))
                .and_then(|rows| rows.collect())
                .map_err(self.query_err(format!("{what}({table})")))
        };
        let mut zstd = false;
        for &(table, wanted) in READ_COLUMNS {
            let have = columns_of(table)?;
            let missing = |column: Option<&'static str>| SqliteError::MissingSchemaItem {
                path: self.path.clone(),
                version,
                table,
                column,
            };
            if have.is_empty() {
                return Err(missing(None));
            }
            if let Some(&column) = wanted.iter().find(|c| !have.contains(**c)) {
                return Err(missing(Some(column)));
            }
            if table == "transcript_events" {
                zstd = have.contains("event_zstd") && have.contains("event_utf8_bytes");
            }
        }
        Ok(zstd)
    }
}

/// The `<id>` of a path `…/agents/<id>/agent/openclaw-agent.sqlite` (§1.1), else `None`.
pub(crate) fn dir_agent_id(path: &Path) -> Option<&str> {
    if path.file_name()? != "openclaw-agent.sqlite" {
        return None;
    }
    let agent_dir = path.parent()?;
    if agent_dir.file_name()? != "agent" {
        return None;
    }
    let id_dir = agent_dir.parent()?;
    if id_dir.parent()?.file_name()? != "agents" {
        return None;
    }
    id_dir.file_name()?.to_str()
}
