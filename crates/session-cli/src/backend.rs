//! Where the inspection subcommands read sessions: the local files (the default), a Redis
//! store (`--backend redis://HOST:PORT/[DB][?prefix=NAME]`), or OpenClaw 2026.8+ per-agent
//! SQLite databases (`--backend sqlite:PATH`, or found under the state directory,
//! [`discover_sqlite`]), the last two through [`session_store::Storage`]
//! ([`session_store::redis_store::RedisStorage`], [`SqliteStorage`]) behind one
//! [`StoreBackend`]: sessions live in namespaces, paths are keys.
//!
//! A SQLite database's namespace is its virtual sessions directory
//! ([`SqliteStorage::sessions_dir`]: `<state>/agents/<id>/sessions` for the standard layout,
//! openclaw-sqlite.md §1.1); its `sessions.json` is the text built from `session_nodes`
//! ([`StoreBackend::store_index`]). Nothing is written: the database is opened read-only
//! (§1.5), and every write command refuses it in `main`.
//!
//! With a Redis backend a path names keys exactly as the store maps them
//! ([`session_store::redis_store::keys`]): the directory is the namespace (the hash tag
//! `{<dir>}`), the file name the session. Paths are first made absolute against the working
//! directory, lexically (`path.resolve`, as `SessionManager` resolves them), so `--dir
//! ./sessions` and `$PWD/sessions` address the same namespace. A sessions directory "exists" in
//! Redis when it or a namespace below it holds a session.
//!
//! The backend is chosen once per run from the global `--backend` option ([`Backend`], held by
//! the run's context [`crate::ctx::Ctx`]); nothing here writes (reads are `HMGET`, `GET`-like
//! Lua reads, `ZRANGE` and `SCAN`; the only server-side effect is the script cache).

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use anyhow::{Context as _, bail};
use session_store::Storage;
use session_store::redis_store::{DEFAULT_PREFIX, RedisStorage};
use session_store::sqlite::SqliteStorage;
use session_store::{ReadOnlyOpen, SessionInfo, SessionManager};

use crate::outcome::UsageError;
use crate::{fsx, text};

/// URL schemes of Redis. `rediss://` (TLS) is recognised only to be refused with a clear
/// message: the client is built without TLS.
const REDIS_SCHEMES: [&str; 4] = ["redis://", "rediss://", "redis+unix://", "unix://"];

/// A Redis location given on the command line: the URL for the client (without our `prefix`
/// query parameter) and the key prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RedisSpec {
    /// The URL handed to the `redis` crate.
    pub(crate) url: String,
    /// The key prefix ([`DEFAULT_PREFIX`] unless `?prefix=` or `--redis-prefix` says otherwise).
    pub(crate) prefix: String,
}

impl RedisSpec {
    /// The URL for messages: a password replaced by `***`.
    pub(crate) fn shown_url(&self) -> String {
        redact(&self.url)
    }

    /// `redis://host:port/ (prefix NAME)`, for messages.
    pub(crate) fn describe(&self) -> String {
        format!(
            "{} (prefix {})",
            text::safe(&self.shown_url()),
            text::safe(&self.prefix)
        )
    }

    /// Connects (and `PING`s).
    ///
    /// # Errors
    /// The URL is invalid or the server does not answer.
    pub(crate) fn connect(&self) -> anyhow::Result<RedisStorage> {
        RedisStorage::connect(&self.url, Some(&self.prefix))
            .with_context(|| format!("cannot open the redis store {}", self.describe()))
    }
}

/// True when `s` is a Redis URL (one of the schemes the client knows).
pub(crate) fn is_redis_url(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    REDIS_SCHEMES.iter().any(|p| lower.starts_with(p))
}

/// Parses a Redis URL: takes `prefix=NAME` out of its query (percent-decoded) and reconciles it
/// with `--redis-prefix` (both given and different is an error).
///
/// # Errors
/// Not a Redis URL; a `rediss://` URL (TLS is not built in); an empty or conflicting prefix.
pub(crate) fn parse_redis(s: &str, prefix_flag: Option<&str>) -> Result<RedisSpec, UsageError> {
    if !is_redis_url(s) {
        return Err(UsageError::new(format!(
            "{} is not a redis URL: use redis://HOST:PORT/[DB][?prefix=NAME] (or \
             redis+unix:///PATH)",
            text::safe(s)
        )));
    }
    if s.to_ascii_lowercase().starts_with("rediss://") {
        return Err(UsageError::new(format!(
            "{}: TLS (rediss://) is not supported (this build's redis client has no TLS); use \
             redis:// or redis+unix:// (for a server that requires TLS, through a local TLS \
             tunnel)",
            text::safe(&redact(s))
        )));
    }
    let (before_fragment, fragment) = match s.split_once('#') {
        Some((a, f)) => (a, Some(f)),
        None => (s, None),
    };
    let (base, query) = match before_fragment.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (before_fragment, None),
    };
    let mut from_url = None;
    let mut rest = Vec::new();
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("prefix", v)) => from_url = Some(percent_decode(v)?),
            _ => rest.push(pair),
        }
    }
    let prefix = match (from_url, prefix_flag) {
        (Some(u), Some(f)) if u != f => {
            return Err(UsageError::new(format!(
                "two key prefixes: ?prefix={} in the URL and --redis-prefix {}; give one",
                text::safe(&u),
                text::safe(f)
            )));
        }
        (Some(u), _) => u,
        (None, Some(f)) => f.to_owned(),
        (None, None) => DEFAULT_PREFIX.to_owned(),
    };
    if prefix.is_empty() {
        return Err(UsageError::new("the redis key prefix must not be empty"));
    }
    let mut url = base.to_owned();
    if !rest.is_empty() {
        url.push('?');
        url.push_str(&rest.join("&"));
    }
    if let Some(f) = fragment {
        url.push('#');
        url.push_str(f);
    }
    Ok(RedisSpec { url, prefix })
}

/// `%XX` sequences decoded (the rest kept as is).
fn percent_decode(s: &str) -> Result<String, UsageError> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(v) = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(if bytes[i] == b'+' { b' ' } else { bytes[i] });
        i += 1;
    }
    String::from_utf8(out)
        .map_err(|_| UsageError::new("the redis key prefix is not UTF-8 once decoded"))
}

/// `url` with the password of its user info (`redis://user:secret@host`) replaced by `***`.
pub(crate) fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => {
            let hidden = match rest[..at].split_once(':') {
                Some((user, _)) => format!("{user}:***"),
                None => "***".to_owned(),
            };
            format!("{scheme}://{hidden}{}", &rest[at..])
        }
        None => url.to_owned(),
    }
}

/// One OpenClaw 2026.8+ per-agent database a run reads (`--backend sqlite:PATH`, or found
/// under the state directory by [`discover_sqlite`]).
#[derive(Debug)]
pub(crate) struct SqliteDb {
    /// The agent id of `schema_meta` (openclaw-sqlite.md §5), else the directory's.
    pub(crate) agent: Option<String>,
    /// The database as a read-only [`Storage`].
    pub(crate) storage: Arc<SqliteStorage>,
}

/// What a [`StoreBackend`] reads.
#[derive(Debug)]
enum StoreKind {
    /// One Redis store.
    Redis {
        spec: RedisSpec,
        storage: RedisStorage,
    },
    /// One or more OpenClaw SQLite databases, each its own namespace (its virtual sessions
    /// directory, [`SqliteStorage::sessions_dir`]).
    Sqlite(Vec<SqliteDb>),
}

/// Sessions that live behind a [`Storage`] instead of in local files: a Redis store, or the
/// OpenClaw 2026.8+ SQLite databases of a state directory. Paths name sessions in namespaces
/// (a namespace is a sessions directory; the file name is the session), and nothing here
/// writes.
#[derive(Debug)]
pub(crate) struct StoreBackend {
    kind: StoreKind,
    /// The storages and, for SQLite, the namespace each one holds (`None`: every namespace).
    parts: Vec<(Option<PathBuf>, Arc<dyn Storage>)>,
    /// Every namespace holding a session (`SCAN`ned once per run for Redis), sorted.
    namespaces: OnceLock<Result<Vec<PathBuf>, String>>,
    /// True when the one database was named with `--backend sqlite:PATH` (not discovered):
    /// `--agent` is then resolved against it, and it is the default sessions directory.
    named: bool,
}

impl StoreBackend {
    /// Connects to the Redis store `spec` names.
    ///
    /// # Errors
    /// As [`RedisSpec::connect`].
    pub(crate) fn connect(spec: RedisSpec) -> anyhow::Result<Self> {
        let storage = spec.connect()?;
        let shared: Arc<dyn Storage> = Arc::new(storage.clone());
        Ok(StoreBackend {
            kind: StoreKind::Redis { spec, storage },
            parts: vec![(None, shared)],
            namespaces: OnceLock::new(),
            named: false,
        })
    }

    /// A backend over SQLite databases (at least one).
    pub(crate) fn sqlite(dbs: Vec<SqliteDb>) -> Self {
        let parts = dbs
            .iter()
            .map(|d| {
                let shared: Arc<dyn Storage> = d.storage.clone();
                (Some(d.storage.sessions_dir().to_path_buf()), shared)
            })
            .collect();
        StoreBackend {
            kind: StoreKind::Sqlite(dbs),
            parts,
            namespaces: OnceLock::new(),
            named: false,
        }
    }

    /// A backend over the one database named by `--backend sqlite:PATH`
    /// ([`StoreBackend::named_sqlite`]).
    pub(crate) fn sqlite_named(db: SqliteDb) -> Self {
        StoreBackend {
            named: true,
            ..Self::sqlite(vec![db])
        }
    }

    /// The database named by `--backend sqlite:PATH`, `None` for Redis and for databases found
    /// under a state directory.
    pub(crate) fn named_sqlite(&self) -> Option<&SqliteDb> {
        match self.sqlite_dbs() {
            Some([db]) if self.named => Some(db),
            _ => None,
        }
    }

    /// The SQLite databases read, `None` for Redis.
    pub(crate) fn sqlite_dbs(&self) -> Option<&[SqliteDb]> {
        match &self.kind {
            StoreKind::Sqlite(dbs) => Some(dbs),
            StoreKind::Redis { .. } => None,
        }
    }

    /// The SQLite database whose namespace is `dir`, if any.
    pub(crate) fn sqlite_db_of_dir(&self, dir: &Path) -> Option<&SqliteDb> {
        let dir = Self::key(dir);
        self.sqlite_dbs()?
            .iter()
            .find(|d| d.storage.sessions_dir() == dir)
    }

    /// `redis://… (prefix …)`, or `the SQLite store PATH` (several: `the SQLite stores A, B`).
    pub(crate) fn describe(&self) -> String {
        match &self.kind {
            StoreKind::Redis { spec, .. } => spec.describe(),
            StoreKind::Sqlite(dbs) => {
                let paths: Vec<String> = dbs
                    .iter()
                    .map(|d| text::path(d.storage.db_path()))
                    .collect();
                if paths.len() == 1 {
                    format!("the SQLite store {}", paths[0])
                } else {
                    format!("the SQLite stores {}", paths.join(", "))
                }
            }
        }
    }

    /// `redis` or `sqlite`, for messages that name where a namespace lives.
    fn kind_name(&self) -> &'static str {
        match self.kind {
            StoreKind::Redis { .. } => "redis",
            StoreKind::Sqlite(_) => "the SQLite store",
        }
    }

    /// The key path of a path argument: `~` expanded by the caller, made absolute lexically.
    pub(crate) fn key(path: &Path) -> PathBuf {
        session_store::paths::resolve(path)
    }

    /// The storage that holds `path` (a session or a namespace).
    fn storage_for(&self, path: &Path) -> &Arc<dyn Storage> {
        let key = Self::key(path);
        self.parts
            .iter()
            .find(|(ns, _)| {
                ns.as_ref()
                    .is_none_or(|ns| key == *ns || key.parent() == Some(ns.as_path()))
            })
            .map_or(&self.parts[0].1, |(_, s)| s)
    }

    /// The namespaces holding at least one session, sorted.
    ///
    /// # Errors
    /// The `SCAN` failed.
    pub(crate) fn namespaces(&self) -> anyhow::Result<&[PathBuf]> {
        match self.namespaces.get_or_init(|| match &self.kind {
            StoreKind::Redis { storage, .. } => storage.all_dirs().map_err(|e| e.to_string()),
            StoreKind::Sqlite(dbs) => {
                let mut v: Vec<PathBuf> = dbs
                    .iter()
                    .map(|d| d.storage.sessions_dir().to_path_buf())
                    .collect();
                v.sort();
                v.dedup();
                Ok(v)
            }
        }) {
            Ok(v) => Ok(v),
            Err(e) => bail!("cannot list the namespaces of {}: {e}", self.describe()),
        }
    }

    /// True when `dir` or a namespace below it holds a session.
    pub(crate) fn dir_exists(&self, dir: &Path) -> anyhow::Result<bool> {
        Ok(self.namespaces()?.iter().any(|n| n.starts_with(dir)))
    }

    /// The namespaces directly under `dir` (its "immediate sub-directories").
    pub(crate) fn sub_namespaces(&self, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
        Ok(self
            .namespaces()?
            .iter()
            .filter(|n| n.parent() == Some(dir))
            .cloned()
            .collect())
    }

    /// The `*.jsonl` sessions directly in namespace `dir`, sorted by name.
    ///
    /// # Errors
    /// The listing failed.
    pub(crate) fn sessions_in(&self, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
        self.storage_for(dir)
            .list_sessions(dir)
            .with_context(|| format!("cannot list {} in {}", text::path(dir), self.describe()))
    }

    /// The agents of the store at `root`, sorted: for Redis the `ID`s of the namespaces
    /// `<root>/agents/<ID>/sessions` (and below); for SQLite the agent of each database.
    pub(crate) fn agents(&self, root: &Path) -> anyhow::Result<Vec<String>> {
        if let Some(dbs) = self.sqlite_dbs() {
            let mut ids: Vec<String> = dbs.iter().filter_map(|d| d.agent.clone()).collect();
            ids.sort();
            ids.dedup();
            return Ok(ids);
        }
        let agents_dir = root.join("agents");
        let mut ids: Vec<String> = self
            .namespaces()?
            .iter()
            .filter_map(|n| {
                let mut parts = n.strip_prefix(&agents_dir).ok()?.components();
                let id = parts.next()?.as_os_str().to_str()?.to_owned();
                (parts.next()?.as_os_str() == "sessions").then_some(id)
            })
            .collect();
        ids.dedup();
        Ok(ids)
    }

    /// The sessions directory (namespace) of agent `agent` under `root`: for SQLite the
    /// namespace of the agent's database, wherever it is.
    pub(crate) fn agent_dir(&self, root: &Path, agent: &str) -> PathBuf {
        if let Some(db) = self
            .sqlite_dbs()
            .and_then(|dbs| dbs.iter().find(|d| d.agent.as_deref() == Some(agent)))
        {
            return db.storage.sessions_dir().to_path_buf();
        }
        root.join("agents").join(agent).join("sessions")
    }

    /// Whether a session is stored at `path`.
    ///
    /// # Errors
    /// The server failed, or the path cannot name a key.
    pub(crate) fn exists(&self, path: &Path) -> anyhow::Result<bool> {
        let found: anyhow::Result<bool> = match &self.kind {
            StoreKind::Redis { storage, .. } => Ok(storage.version(path)?.is_some()),
            StoreKind::Sqlite(_) => Ok(self.storage_for(path).stat(path)?.is_some()),
        };
        found.with_context(|| format!("cannot read {} from {}", text::path(path), self.describe()))
    }

    /// Why `path` cannot be read as a session (`None` when one is stored there).
    pub(crate) fn not_readable_reason(&self, path: &Path) -> Option<String> {
        match self.exists(path) {
            Ok(true) => None,
            Ok(false) if self.dir_exists(path).unwrap_or(false) => Some(format!(
                "is a sessions directory (a namespace) in {}",
                self.kind_name()
            )),
            Ok(false) => Some(format!("no such session in {}", self.describe())),
            Err(e) => Some(format!("cannot be read: {}", crate::output::error_text(&e))),
        }
    }

    /// Fails unless a session is stored at `path`.
    ///
    /// # Errors
    /// A message naming the path and the store.
    pub(crate) fn require_session(&self, path: &Path) -> anyhow::Result<()> {
        if self.exists(path)? {
            return Ok(());
        }
        if self.dir_exists(path)? {
            bail!(UsageError::new(format!(
                "{} is a sessions directory in {}; pass a session, or use --dir {} to work on the \
                 sessions in it",
                text::path(path),
                self.describe(),
                text::shell_quote(&path.display().to_string())
            )));
        }
        bail!(UsageError::new(format!(
            "no session {} in {}",
            text::path(path),
            self.describe()
        )))
    }

    /// The session's bytes.
    ///
    /// # Errors
    /// No session there; the server failed.
    pub(crate) fn read(&self, path: &Path) -> anyhow::Result<Vec<u8>> {
        self.storage_for(path)
            .read_all(path)
            .with_context(|| format!("cannot read {} from {}", text::path(path), self.describe()))
    }

    /// The header line (`readFirstLine`), `None` when there is no session or it is empty.
    pub(crate) fn read_head(&self, path: &Path) -> Option<Vec<u8>> {
        self.storage_for(path).read_head(path).ok().flatten()
    }

    /// Size (bytes) and change time (ms since the epoch, the store's change stamp) of a
    /// session.
    pub(crate) fn stat(&self, path: &Path) -> Option<(u64, f64)> {
        let s = self.storage_for(path).stat(path).ok()??;
        Some((s.size, (s.mtime_ns / 1_000_000) as f64))
    }

    /// `SessionManager::open_read_only` in this store ([`Sessions::open_read_only`](session_store::Sessions::open_read_only)).
    ///
    /// # Errors
    /// As [`Sessions::open_read_only`](session_store::Sessions::open_read_only).
    pub(crate) fn open_read_only(&self, path: &Path) -> anyhow::Result<ReadOnlyOpen> {
        Ok(SessionManager::on(Arc::clone(self.storage_for(path))).open_read_only(path, None)?)
    }

    /// `SessionInfo` of every listable session directly in namespace `dir` (`Sessions::list`).
    ///
    /// # Errors
    /// The namespace cannot be listed.
    pub(crate) fn infos(&self, dir: &Path) -> anyhow::Result<Vec<SessionInfo>> {
        SessionManager::on(Arc::clone(self.storage_for(dir)))
            .list("", Some(dir))
            .with_context(|| format!("cannot list {} in {}", text::path(dir), self.describe()))
    }

    /// The database consistency findings of the SQLite session at `path`
    /// ([`session_store::sqlite::SqliteStore::check_session`], openclaw-sqlite.md §2.13
    /// recipe 7): `None` when `path` is no SQLite session.
    ///
    /// # Errors
    /// The check could not run (a query failed), naming the database.
    pub(crate) fn sqlite_findings(
        &self,
        path: &Path,
    ) -> Option<anyhow::Result<Vec<session_store::sqlite::Finding>>> {
        let parent = path.parent()?;
        let db = self.sqlite_db_of_dir(parent)?;
        let id = db.storage.session_id_of(path)?;
        let findings = db.storage.store().check_session(&id);
        Some(findings.with_context(|| {
            format!(
                "cannot check session {} in {}",
                text::safe(&id),
                text::path(db.storage.db_path())
            )
        }))
    }

    /// The `sessions.json` text of the OpenClaw store whose sessions directory is `dir`, when
    /// the backend keeps it elsewhere than in a file: for SQLite the text built from
    /// `session_nodes` ([`SqliteStorage::store_index_json`]); `None` for Redis (which keeps no
    /// store index) and for a namespace that is no database's.
    ///
    /// # Errors
    /// `session_nodes` cannot be read, or an `entry_json` is not an object.
    pub(crate) fn store_index(&self, dir: &Path) -> Option<anyhow::Result<Vec<u8>>> {
        let db = self.sqlite_db_of_dir(dir)?;
        Some(db.storage.store_index_json().with_context(|| {
            format!(
                "cannot read the session index (session_nodes) of {}",
                text::path(db.storage.db_path())
            )
        }))
    }
}

/// The file name OpenClaw 2026.8+ gives an agent's database (openclaw-sqlite.md §1.1).
pub(crate) const AGENT_DB_NAME: &str = "openclaw-agent.sqlite";

/// The database of the agent whose (legacy) sessions directory is `sessions_dir`
/// (`<state>/agents/<id>/sessions` → `<state>/agents/<id>/agent/openclaw-agent.sqlite`), when
/// that file exists.
pub(crate) fn sqlite_db_beside(sessions_dir: &Path) -> Option<PathBuf> {
    let agent_dir = sessions_dir.parent()?;
    let db = agent_dir.join("agent").join(AGENT_DB_NAME);
    (agent_dir.parent()?.file_name()? == "agents" && db.is_file()).then_some(db)
}

/// The agent databases of the state directory `root`: `<root>/agents/*/agent/
/// openclaw-agent.sqlite` that are regular files, sorted by agent directory name.
pub(crate) fn sqlite_dbs_under(root: &Path) -> Vec<(String, PathBuf)> {
    let Ok(rd) = std::fs::read_dir(root.join("agents")) else {
        return Vec::new();
    };
    let mut found: Vec<(String, PathBuf)> = rd
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| {
            let db = e.path().join("agent").join(AGENT_DB_NAME);
            // A database that cannot even be looked at (a directory without permission) is
            // kept, so that opening it fails naming it instead of the agent vanishing.
            let found = match std::fs::metadata(&db) {
                Ok(m) => m.is_file(),
                Err(e) => e.kind() != std::io::ErrorKind::NotFound,
            };
            found.then(|| (e.file_name().to_string_lossy().into_owned(), db))
        })
        .collect();
    found.sort();
    found
}

/// Opens one database read-only (`--backend sqlite:PATH`, or found by discovery).
///
/// # Errors
/// The file cannot be opened as an OpenClaw agent database (missing, not SQLite, another
/// schema version), naming it.
pub(crate) fn open_sqlite(db: &Path) -> anyhow::Result<SqliteDb> {
    // Absolute (lexically), so every path the store derives from it is absolute too: the
    // in-memory session of `SqliteStore::open_session` (used by `check_session`) is keyed by
    // `<db>/<id>.jsonl` and looked up after `paths::resolve`.
    let db = &session_store::paths::resolve(db);
    let storage = SqliteStorage::open(db).context("cannot open the OpenClaw SQLite store")?;
    let agent = storage.store().agent_id().map(str::to_owned).or_else(|| {
        let sessions_dir = storage.sessions_dir();
        (sessions_dir.file_name()? == "sessions")
            .then(|| sessions_dir.parent()?.file_name())
            .flatten()
            .map(|n| n.to_string_lossy().into_owned())
    });
    Ok(SqliteDb {
        agent,
        storage: Arc::new(storage),
    })
}

/// The databases of the state directory `root` ([`sqlite_dbs_under`]) opened, with one
/// warning per agent that also has a legacy `agents/<id>/sessions/sessions.json`: the
/// database is what is read (OpenClaw 2026.8+ refuses to start with a legacy store that is
/// not imported). `None` when `root` holds no database.
///
/// # Errors
/// A database that cannot be opened.
pub(crate) fn discover_sqlite(root: &Path) -> anyhow::Result<Option<Vec<SqliteDb>>> {
    let found = sqlite_dbs_under(root);
    if found.is_empty() {
        return Ok(None);
    }
    warn_agents_without_database(root, &found);
    let mut dbs = Vec::with_capacity(found.len());
    for (agent, db) in found {
        let legacy = root
            .join("agents")
            .join(&agent)
            .join("sessions")
            .join(session_semantics::openclaw_store::STORE_FILE_NAME);
        if legacy.is_file() {
            eprintln!(
                "warning: agent {:?} has both a legacy store {} and the OpenClaw 2026.8+ \
                 database {}; reading the database (OpenClaw 2026.8+ does not start while a \
                 legacy store is not imported); `sessions verify-import` compares the two",
                text::safe(&agent),
                text::path(&legacy),
                text::path(&db)
            );
        }
        // In a state directory the agent is the directory's (where OpenClaw keeps it).
        let mut opened = open_sqlite(&db)?;
        opened.agent = Some(agent);
        dbs.push(opened);
    }
    Ok(Some(dbs))
}

/// One warning per agent of `root` that has no database but a JSONL-era sessions directory
/// (`sessions.json` or `*.jsonl` in `agents/<id>/sessions/`) while other agents have one: a run
/// that reads the databases does not read those files, so they must not vanish unnoticed.
fn warn_agents_without_database(root: &Path, found: &[(String, PathBuf)]) {
    let Ok(rd) = std::fs::read_dir(root.join("agents")) else {
        return;
    };
    let mut names: Vec<String> = rd
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !found.iter().any(|(a, _)| a == n))
        .collect();
    names.sort();
    for agent in names {
        let sessions = root.join("agents").join(&agent).join("sessions");
        let holds_sessions = std::fs::read_dir(&sessions).is_ok_and(|rd| {
            rd.filter_map(Result::ok).any(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name == session_semantics::openclaw_store::STORE_FILE_NAME
                    || name.ends_with(".jsonl")
            })
        });
        if holds_sessions {
            eprintln!(
                "warning: agent {:?} has no OpenClaw 2026.8+ database, only the JSONL-era store \
                 {}: it is not read while the other agents' databases are (read it with \
                 `sessions --backend files … --agent {}`; `openclaw doctor --fix` imports it)",
                text::safe(&agent),
                text::path(&sessions),
                text::safe(&agent)
            );
        }
    }
}

/// Where a run reads sessions: the local files (the default) or one Redis store. Chosen once
/// per run from `--backend` and carried by the run's context ([`crate::ctx::Ctx`]).
#[derive(Debug)]
pub(crate) enum Backend {
    /// Sessions are files (`--backend files`, or none given).
    Files,
    /// Sessions are read from a Redis store (`--backend redis://…`) or from OpenClaw 2026.8+
    /// SQLite databases (`--backend sqlite:PATH`, or found under the state directory).
    Store(StoreBackend),
}

impl Backend {
    /// The store sessions are read from, `None` when sessions are files.
    pub(crate) fn store(&self) -> Option<&StoreBackend> {
        match self {
            Backend::Files => None,
            Backend::Store(r) => Some(r),
        }
    }

    /// Fails unless `path` holds a session: a regular file (never opened first), or a Redis
    /// key.
    ///
    /// # Errors
    /// A message naming the path and what is there instead.
    pub(crate) fn require_session(&self, path: &Path) -> anyhow::Result<()> {
        match self {
            Backend::Store(r) => r.require_session(path),
            Backend::Files => fsx::require_regular(path),
        }
    }

    /// Why `path` cannot be read as a session, `None` when it can.
    pub(crate) fn not_readable_reason(&self, path: &Path) -> Option<String> {
        match self {
            Backend::Store(r) => r.not_readable_reason(path),
            Backend::Files => fsx::not_readable_reason(path),
        }
    }

    /// [`Backend::not_readable_reason`] with the `--dir` hint for a directory
    /// ([`fsx::session_file_reason`]): the reason of a message that names the path first.
    pub(crate) fn session_reason(&self, path: &Path) -> Option<String> {
        match self {
            Backend::Store(r) => r.not_readable_reason(path),
            Backend::Files => fsx::session_file_reason(path),
        }
    }

    /// A session's bytes (a regular file's, checked first; or the Redis session's).
    ///
    /// # Errors
    /// Not a session; the read failed.
    pub(crate) fn read_session(&self, path: &Path) -> anyhow::Result<Vec<u8>> {
        match self {
            Backend::Store(r) => r.read(path),
            Backend::Files => {
                fsx::require_regular(path)?;
                Ok(session_store::io::read_file(path)?)
            }
        }
    }

    /// The read-only open of a session (a regular file, checked before it is opened; or a Redis
    /// session).
    ///
    /// # Errors
    /// Not a session; the open failed.
    pub(crate) fn open_read_only(&self, path: &Path) -> anyhow::Result<ReadOnlyOpen> {
        match self {
            Backend::Store(r) => r.open_read_only(path),
            Backend::Files => {
                fsx::require_regular(path)?;
                Ok(SessionManager::open_read_only(path, None)?)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_urls_lose_the_prefix_parameter() {
        let s = parse_redis("redis://127.0.0.1:6379/", None).unwrap();
        assert_eq!(s.url, "redis://127.0.0.1:6379/");
        assert_eq!(s.prefix, DEFAULT_PREFIX);
        let s = parse_redis("redis://h:1/2?prefix=oc%3Aprod&protocol=resp3", None).unwrap();
        assert_eq!(s.url, "redis://h:1/2?protocol=resp3");
        assert_eq!(s.prefix, "oc:prod");
        let s = parse_redis("redis://h:1/", Some("mine")).unwrap();
        assert_eq!(s.prefix, "mine");
        let s = parse_redis("REDIS://h:1/?prefix=same", Some("same")).unwrap();
        assert_eq!(s.prefix, "same");
        assert!(parse_redis("redis://h:1/?prefix=a", Some("b")).is_err());
        assert!(parse_redis("redis://h:1/?prefix=", None).is_err());
        assert!(parse_redis("/tmp/store", None).is_err());
        assert!(parse_redis("http://h/", None).is_err());
        assert_eq!(
            parse_redis("rediss://:pw@h:1/", None)
                .unwrap_err()
                .to_string(),
            "rediss://:***@h:1/: TLS (rediss://) is not supported (this build's redis client has \
             no TLS); use redis:// or redis+unix:// (for a server that requires TLS, through a \
             local TLS tunnel)"
        );
    }

    #[test]
    fn passwords_are_not_shown() {
        assert_eq!(redact("redis://:s3cret@h:1/0"), "redis://:***@h:1/0");
        assert_eq!(redact("redis://me:p@h/"), "redis://me:***@h/");
        assert_eq!(redact("redis://secret@h/"), "redis://***@h/");
        assert_eq!(redact("redis://h:1/"), "redis://h:1/");
    }
}
