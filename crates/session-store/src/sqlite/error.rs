//! The errors of the read-only SQLite store (`openclaw-sqlite.md` §1.5, §2.5, §5).

use std::path::PathBuf;

/// Why the SQLite store could not be opened or read. Every variant names the database file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SqliteError {
    /// The file could not be opened read-only (missing, unreadable, not a database) or the
    /// connection could not be set up (§1.5 rule 1).
    #[error("{}: cannot open the OpenClaw SQLite store read-only: {source}", path.display())]
    Open {
        /// The database file.
        path: PathBuf,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// A query failed (a missing table or column, a locked database past the busy timeout,
    /// a corrupt page).
    #[error("{}: {what}: {source}", path.display())]
    Query {
        /// The database file.
        path: PathBuf,
        /// What was being read, e.g. `"sessions"` or `"lines of session <id>"`.
        what: String,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// The schema version is not the one this reader knows (§5: exactly 23 is accepted).
    #[error(
        "{}: {origin} says schema version {version}; this reader knows only version {known}{advice}",
        path.display(),
        advice = if (17..=22).contains(version) {
            " (stop active agents and run `openclaw doctor --fix` to migrate session identities)"
        } else {
            ""
        }
    )]
    SchemaVersion {
        /// The database file.
        path: PathBuf,
        /// Where the version came from: `"PRAGMA user_version"` or `"schema_meta"`.
        origin: &'static str,
        /// The version found.
        version: i64,
        /// The version this reader knows ([`super::KNOWN_SCHEMA_VERSION`]).
        known: i64,
    },
    /// `PRAGMA user_version` is 17 to 22: the session-identity layout predates schema 23 and
    /// OpenClaw itself refuses the file until its doctor migrates it (§5).
    #[error(
        "{}: uses schema version {version}; stop active agents and run `openclaw doctor --fix` \
         to migrate session identities before using it",
        path.display()
    )]
    SchemaNeedsIdentityMigration {
        /// The database file.
        path: PathBuf,
        /// `PRAGMA user_version`.
        version: i64,
    },
    /// `PRAGMA user_version` is below 17 (0 included) on a database that has tables: OpenClaw
    /// wants its persisted-media migration first (§5).
    #[error(
        "{}: uses schema version {version}; run `openclaw doctor --fix` to migrate persisted \
         media before using it",
        path.display()
    )]
    SchemaNeedsMediaMigration {
        /// The database file.
        path: PathBuf,
        /// `PRAGMA user_version`.
        version: i64,
    },
    /// `PRAGMA user_version` is 0 and the file has no tables at all (no `schema_meta`, no
    /// application table): a new, empty database, not a store to read (§5).
    #[error("{}: not an OpenClaw agent database (empty)", path.display())]
    EmptyDatabase {
        /// The database file.
        path: PathBuf,
    },
    /// `PRAGMA user_version` is newer than [`super::KNOWN_SCHEMA_VERSION`] and
    /// [`OpenOptions::force_schema`](super::OpenOptions::force_schema) is off (§5).
    #[error(
        "{}: uses schema version {version}, newer than version {known} that this reader knows; \
         read it with a release that knows version {version}",
        path.display()
    )]
    SchemaNewer {
        /// The database file.
        path: PathBuf,
        /// `PRAGMA user_version`.
        version: i64,
        /// [`super::KNOWN_SCHEMA_VERSION`].
        known: i64,
    },
    /// A table or column this reader reads is missing (checked through `pragma_table_info`
    /// at open; §5). Only the first missing one is named.
    #[error(
        "{}: schema version {version} has no {}; this reader needs it",
        path.display(),
        match column {
            Some(column) => format!("column {table}.{column}"),
            None => format!("table {table}"),
        }
    )]
    MissingSchemaItem {
        /// The database file.
        path: PathBuf,
        /// `PRAGMA user_version`.
        version: i64,
        /// The table, e.g. `"transcript_events"`.
        table: &'static str,
        /// The missing column, or `None` when the whole table is missing.
        column: Option<&'static str>,
    },
    /// The file lies at `agents/<id>/agent/openclaw-agent.sqlite` but `schema_meta.agent_id`
    /// names another agent (§1.3, §5; compared trimmed and lowercased, as OpenClaw
    /// normalises agent ids).
    #[error(
        "{}: schema_meta says the database belongs to agent '{schema_agent}', but it lies in \
         the directory of agent '{dir_agent}'",
        path.display()
    )]
    AgentMismatch {
        /// The database file.
        path: PathBuf,
        /// `schema_meta.agent_id` as stored.
        schema_agent: String,
        /// The `<id>` directory of the path.
        dir_agent: String,
    },
    /// `schema_meta` has no `primary` row, its role is not `agent`, or its agent_id is empty
    /// (§1.3, §5).
    #[error("{}: not an OpenClaw agent store: {problem}", path.display())]
    SchemaMeta {
        /// The database file.
        path: PathBuf,
        /// What is wrong, e.g. `"no schema_meta row 'primary'"` or `"role is 'state'"`.
        problem: String,
    },
    /// No `session_windows` row has this session id.
    #[error("{}: no session {session_id}", path.display())]
    UnknownSession {
        /// The database file.
        path: PathBuf,
        /// The session id asked for.
        session_id: String,
    },
    /// One `transcript_events` row cannot be turned into its JSON text (§2.5).
    #[error("{}: session {session_id} seq {seq}: {problem}", path.display())]
    BadRow {
        /// The database file.
        path: PathBuf,
        /// The row's session id.
        session_id: String,
        /// The row's `seq`.
        seq: i64,
        /// What is wrong with it.
        problem: RowProblem,
    },
    /// The session's rows, as JSONL, do not open as a session
    /// ([`SqliteStore::open_session`](super::SqliteStore::open_session)).
    #[error("{}: session {session_id} does not open as a JSONL session", path.display())]
    Session {
        /// The database file.
        path: PathBuf,
        /// The session id.
        session_id: String,
        /// Why the JSONL read path refused it.
        #[source]
        source: Box<crate::OpenError>,
    },
    /// The in-memory store that [`SqliteStore::open_session`](super::SqliteStore::open_session)
    /// puts the rows in refused them.
    #[error("cannot stage {} in memory", path.display())]
    Staging {
        /// The session's in-memory path.
        path: PathBuf,
        /// The in-memory store's error.
        #[source]
        source: std::io::Error,
    },
    /// A write was asked of the read-only SQLite store: OpenClaw owns the database (its writer
    /// claims, triggers and projections), so nothing here ever writes it
    /// ([`SqliteStorage`](super::SqliteStorage)'s write methods; `openclaw-sqlite.md` §4.7.4).
    #[error(
        "{}: the OpenClaw SQLite store is read-only here ({what}); use OpenClaw's own commands \
         to change it, or `sessions migrate` to get a JSONL copy",
        path.display()
    )]
    ReadOnly {
        /// The session's path in the store's virtual layout.
        path: PathBuf,
        /// The refused operation, e.g. `append`.
        what: &'static str,
    },
    /// The database is in WAL mode, has no `-wal`/`-shm` beside it, and its directory is not
    /// writable: SQLite cannot create the shared-memory index a reader needs
    /// (`SQLITE_READONLY_DIRECTORY`, extended code 1544; §1.5).
    #[error(
        "{}: the database is in WAL mode and its directory is read-only, so SQLite cannot \
         create the -wal/-shm a reader needs; copy the database together with its -wal to a \
         writable place and read the copy",
        path.display()
    )]
    WalReadOnlyDirectory {
        /// The database file.
        path: PathBuf,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// A crashed writer left a hot rollback journal that a read-only connection cannot roll
    /// back (`SQLITE_READONLY_ROLLBACK`, extended code 776; §1.5).
    #[error(
        "{}: a crashed writer left a hot rollback journal ({}); start OpenClaw (or \
         `openclaw doctor`) once so it rolls the journal back, then read again",
        path.display(),
        journal.display()
    )]
    HotJournal {
        /// The database file.
        path: PathBuf,
        /// `<db>-journal`.
        journal: PathBuf,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// A `session_nodes.entry_json` is not a JSON object (§2.2).
    #[error("{}: session key {session_key}: entry_json is not a JSON object: {problem}", path.display())]
    BadEntry {
        /// The database file.
        path: PathBuf,
        /// The row's session key.
        session_key: String,
        /// What is wrong with it (with the byte offset for text that does not parse).
        problem: String,
    },
}

/// What is wrong with one `transcript_events` row (§2.4 table checks, §2.5 decoding).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RowProblem {
    /// Both or neither of `event_json` and `event_zstd` are set.
    #[error("exactly one of event_json and event_zstd must be set (json: {json}, zstd: {zstd})")]
    PayloadColumns {
        /// Whether `event_json` is non-NULL.
        json: bool,
        /// Whether `event_zstd` is non-NULL.
        zstd: bool,
    },
    /// The zstd blob is empty or larger than 4194304 bytes.
    #[error("event_zstd is {len} bytes; it must be 1 to 4194304")]
    BlobSize {
        /// The blob's length in bytes.
        len: usize,
    },
    /// `event_utf8_bytes` is NULL or not between 1 and 4194304 on a zstd row.
    #[error("event_utf8_bytes is {value:?}; a zstd row needs 1 to 4194304")]
    StoredLength {
        /// The stored value (`None` for NULL).
        value: Option<i64>,
    },
    /// The zstd frame does not decode (bad frame, checksum mismatch, more output than
    /// `event_utf8_bytes`).
    #[error("event_zstd does not decode: {message}")]
    Decompress {
        /// The zstd library's message.
        message: String,
    },
    /// The decoded text is not `event_utf8_bytes` long.
    #[error("event_zstd decodes to {actual} bytes, event_utf8_bytes says {expected}")]
    LengthMismatch {
        /// `event_utf8_bytes`.
        expected: usize,
        /// The decoded length in bytes.
        actual: usize,
    },
    /// The row text (`event_json`, or the decoded `event_zstd`) is not valid UTF-8.
    #[error(
        "the row text (event_json, or event_zstd decoded) is invalid UTF-8 at byte {valid_up_to}"
    )]
    Utf8 {
        /// The byte offset of the first invalid sequence in the decoded text.
        valid_up_to: usize,
    },
}

/// `SQLITE_READONLY_DIRECTORY`: a WAL reader cannot create `-shm` in a read-only directory.
const SQLITE_READONLY_DIRECTORY: i32 = 1544;
/// `SQLITE_READONLY_ROLLBACK`: a hot journal that a read-only connection cannot roll back.
const SQLITE_READONLY_ROLLBACK: i32 = 776;

impl SqliteError {
    /// The typed error for an SQLite failure that has a known cause and remedy
    /// ([`SqliteError::WalReadOnlyDirectory`], [`SqliteError::HotJournal`]), else `None`.
    pub(crate) fn classify(
        path: &std::path::Path,
        source: rusqlite::Error,
    ) -> Result<SqliteError, rusqlite::Error> {
        match source.sqlite_error().map(|e| e.extended_code) {
            Some(SQLITE_READONLY_DIRECTORY) => Ok(SqliteError::WalReadOnlyDirectory {
                path: path.to_path_buf(),
                source,
            }),
            Some(SQLITE_READONLY_ROLLBACK) => {
                let mut journal = path.as_os_str().to_owned();
                journal.push("-journal");
                Ok(SqliteError::HotJournal {
                    path: path.to_path_buf(),
                    journal: PathBuf::from(journal),
                    source,
                })
            }
            _ => Err(source),
        }
    }
}
