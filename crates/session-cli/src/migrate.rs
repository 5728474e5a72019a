//! `sessions migrate --from SRC --to DST`: copies every session between a directory of JSONL
//! files and a Redis store, in either direction, byte for byte, through
//! [`session_store::Storage`] on both sides ([`FileStorage`]: `session_store::io`,
//! new files 0600; [`RedisStorage`]: create-if-absent scripts); or exports an OpenClaw
//! 2026.8+ SQLite store (`--from sqlite:PATH`, `--from-root DIR`; read-only through
//! [`SqliteStorage`]) as a JSONL-era store: `<sessionId>.jsonl` per current generation,
//! `<sessionId>.jsonl.reset.<ts>` per earlier one, `sessions.json` from `session_nodes`
//! (`openclaw-sqlite.md` §2.2, §2.3, §2.13; `openclaw-store.md` R1.6, R1.12, R1.13).
//!
//! A copy keeps the source's last change: a file copied to Redis gets the file's modification
//! time as its change stamp and last activity, a Redis session copied to a file gets its last
//! change as the file's modification time (microseconds kept), so listings and
//! `continueRecent` order the sessions as before.
//!
//! Rules: a destination session is never replaced (one that already holds the same bytes is
//! reported as already there; one holding other bytes, or anything else at its path, refuses
//! the whole run before anything is written); each copy is read back and compared; a source
//! that changes while it is copied (a writer is active) has its fresh copy removed again and is
//! reported as failed; `--dry-run` reads both sides and writes nothing.

use std::io::IsTerminal as _;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::bail;
use serde_json::{Value, json};
use session_store::SessionFileSnapshot;
use session_store::redis_store::{Fence, RedisStorage, RedisStoreError, RedisVersion};
use session_store::sqlite::{SqliteSession, SqliteStorage};
use session_store::{FileStorage, Storage};

use crate::address;
use crate::backend::{self, RedisSpec};
use crate::outcome::Outcome;
use crate::outcome::UsageError;
use crate::output::Output;
use crate::{fsx, text};

pub(crate) const LONG_ABOUT: &str = "\
Copy every session between a directory of JSONL files and a Redis store, in either direction,
or export an OpenClaw 2026.8+ SQLite store as a JSONL-era store (files or Redis):
  sessions migrate --from DIR --to redis://HOST:PORT/[DB][?prefix=NAME]
  sessions migrate --from redis://HOST:PORT/ --to DIR [--redis-root PATH]
  sessions migrate --from sqlite:PATH --to DIR|redis://HOST:PORT/
  sessions migrate --from-root STATE_DIR --to DIR|redis://HOST:PORT/

From SQLite: PATH is one agent database (agents/<ID>/agent/openclaw-agent.sqlite) or a state
directory, whose every agents/*/agent/openclaw-agent.sqlite is exported (as --from-root; a
plain --from STATE_DIR holding such databases, with --to a directory, does the same). The
databases are opened read-only and their bytes never change. Per agent, below --to:
  agents/<ID>/sessions/<sessionId>.jsonl   each key's current transcript generation: its rows
                                           in seq order, one line each (zstd rows decoded)
  agents/<ID>/sessions/<sessionId>.jsonl.reset.<ts>
                                           each earlier generation of a key, as a reset archive
                                           (ts: when the next generation began, e.g.
                                           2026-07-01T10-01-00.000Z), which OpenClaw 2026.6.11's
                                           maintenance counts as an archive, not an orphan
  agents/<ID>/sessions/sessions.json       one entry per session_nodes row, in row order: the
                                           stored SessionEntry (entry_json) unchanged, written
                                           as OpenClaw writes sessions.json; it has no
                                           sessionFile, so OpenClaw 2026.6.11 and `sessions`
                                           read <sessionId>.jsonl beside it (the store can be
                                           moved); written after the agent's transcripts, and
                                           not at all when one of them failed
A transcript's modification time is its generation's last change, sessions.json's the newest
entry's updatedAt. To Redis: the current transcripts as sessions (keys under --redis-root,
default the state directory); earlier generations and sessions.json are not sessions and are
listed as left alone (export to a directory to keep them). A session id that cannot be a file
name is left alone.

Which sessions: from a directory, every regular file named *.jsonl in it and in all its
sub-directories (an OpenClaw state directory: agents/<ID>/sessions/, archive/ included; symlinks
are not followed and are listed as left alone; other files such as sessions.json or lock files
are not sessions and stay where they are). From Redis, every session whose namespace is the
Redis root (below) or lies below it.

Where they go: a session keeps its path relative to the roots. In Redis a session is addressed
by its absolute path (the namespace is its directory, as SessionManager addresses it), and the
Redis root is --redis-root PATH, by default the directory side's own path (made absolute): so
`migrate --from ~/.openclaw --to redis://…` stores ~/.openclaw/agents/main/sessions/x.jsonl under
the namespace ~/.openclaw/agents/main/sessions (expanded), which is what gateways configured
with that state directory open, and `sessions --backend redis://… list --root ~/.openclaw` lists.
To bring sessions back into another directory, give the old path: `migrate --from redis://…
--to NEW --redis-root OLD`. The key prefix is ?prefix=NAME in the URL or --redis-prefix NAME
(default openclaw:sessions).

Times: a copy keeps its source's last change, so `sessions list` and continueRecent (the most
recently modified session) order the sessions as before: a file's modification time becomes the
Redis session's change stamp and last activity, a Redis session's last change becomes the file's
modification time. Later writes move them on as usual.

Safety: bytes are copied exactly (torn last lines, malformed lines, empty sessions included),
each copy is read back and compared with the source, and a destination session is never
replaced: one that already holds the same bytes is reported as `identical` (so an interrupted
run can be repeated), one that holds other bytes (or anything else at its path) refuses the
whole run before anything is written, listing every such session. A source that changes during
its copy (a gateway still writing) gets its fresh copy removed again and is reported as failed:
stop the writers, then run again. New files get mode 0600 (directories are created as needed);
nothing is written with --dry-run, which reads both sides and prints the plan. A progress bar
is shown on stderr when it is a terminal.

Output: one line per session or file (copied, would copy, identical, exists, not copied,
failed, left alone; from SQLite with its key, or the number of keys of sessions.json) and a
summary line.

JSON output (--json):
  {\"from\": side, \"to\": side, \"dryRun\", \"refused\",
   \"sessions\": [{\"path\" (relative to the roots), \"source\", \"destination\", \"bytes\",
                 \"outcome\": \"copied\"|\"wouldCopy\"|\"identical\"|\"exists\"|\"notCopied\"|\"failed\",
                 \"error\": string|null}],
   \"leftAlone\": [{\"path\", \"reason\"}], \"errors\": [{\"path\", \"error\"}] (directories that
   could not be read; counted as failed), \"warnings\": [string] (also on stderr: from
   SQLite, one per agent whose agents/<ID>/sessions/ still holds legacy files (*.jsonl,
   sessions.json) that are not carried over, suggesting `sessions verify-import`),
   \"counts\": {\"copied\", \"wouldCopy\", \"identical\", \"exists\", \"failed\", \"leftAlone\"},
   \"bytesCopied\"}
where side is {\"backend\": \"files\", \"dir\"} or {\"backend\": \"redis\", \"url\", \"prefix\",
\"root\"} (a password in the URL shown as ***), or for a SQLite source {\"backend\": \"sqlite\",
\"root\", \"databases\": [{\"agent\", \"path\"}]}; from SQLite each item's \"source\" is its
database and it adds \"kind\": \"transcript\"|\"earlierGeneration\"|\"storeIndex\",
\"sessionKey\" and \"sessionId\" (null for sessions.json).

Exit codes: 0 nothing to copy (everything already there); 1 sessions were copied (with
--dry-run: would be); 2 usage or I/O error, a destination that exists with other bytes (nothing
written), or a failed copy.";

/// The arguments of `migrate`.
#[derive(Debug, Clone)]
pub(crate) struct MigrateRequest {
    /// `--from`: a directory, a redis:// URL or `sqlite:PATH` (`None` with `--from-root`).
    pub(crate) from: Option<PathBuf>,
    /// `--from-root DIR`: an OpenClaw state directory whose agent databases are exported.
    pub(crate) from_root: Option<PathBuf>,
    pub(crate) to: PathBuf,
    pub(crate) redis_root: Option<PathBuf>,
    pub(crate) redis_prefix: Option<String>,
    pub(crate) dry_run: bool,
    pub(crate) json: bool,
}

/// One side of the migration.
#[derive(Debug)]
enum Store {
    Files,
    Redis {
        spec: RedisSpec,
        redis: RedisStorage,
    },
    /// OpenClaw 2026.8+ agent databases (a source only), read-only through [`SqliteStorage`].
    Sqlite {
        dbs: Vec<AgentDb>,
    },
}

/// One agent database of a SQLite source.
#[derive(Debug)]
struct AgentDb {
    /// The agent id: `<agentId>` of `<state>/agents/<agentId>/agent/openclaw-agent.sqlite`,
    /// else the database's `schema_meta.agent_id`, else `main`.
    agent: String,
    storage: Arc<SqliteStorage>,
}

#[derive(Debug)]
struct Side {
    store: Store,
    /// The directory (files) or the key path the sessions sit under (Redis), absolute.
    root: PathBuf,
    storage: Arc<dyn Storage>,
}

impl Side {
    fn describe(&self) -> String {
        match &self.store {
            Store::Files => format!("{} (files)", text::path(&self.root)),
            Store::Redis { spec, .. } => {
                format!("{}, keys under {}", spec.describe(), text::path(&self.root))
            }
            Store::Sqlite { dbs } => {
                let names: Vec<String> = dbs
                    .iter()
                    .map(|d| {
                        text::path(
                            d.storage
                                .db_path()
                                .strip_prefix(&self.root)
                                .unwrap_or(d.storage.db_path()),
                        )
                    })
                    .collect();
                format!(
                    "{} (OpenClaw SQLite: {})",
                    text::path(&self.root),
                    names.join(", ")
                )
            }
        }
    }

    fn to_json(&self) -> Value {
        let root = self.root.to_string_lossy().into_owned();
        match &self.store {
            Store::Files => json!({ "backend": "files", "dir": root }),
            Store::Redis { spec, .. } => json!({
                "backend": "redis",
                "url": spec.shown_url(),
                "prefix": spec.prefix,
                "root": root,
            }),
            Store::Sqlite { dbs } => json!({
                "backend": "sqlite",
                "root": root,
                "databases": dbs
                    .iter()
                    .map(|d| json!({
                        "agent": d.agent,
                        "path": d.storage.db_path().to_string_lossy(),
                    }))
                    .collect::<Vec<_>>(),
            }),
        }
    }

    fn is_sqlite(&self) -> bool {
        matches!(self.store, Store::Sqlite { .. })
    }
}

/// What happened (or would happen) to one session.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Fate {
    /// To be copied (the plan).
    Copy,
    /// Copied and verified.
    Copied,
    /// Would be copied (dry run).
    WouldCopy,
    /// The destination already holds the same bytes.
    Identical,
    /// Something else is at the destination.
    Exists(String),
    /// Not copied because the run was refused.
    NotCopied,
    /// Reading, writing or verifying failed.
    Failed(String),
}

#[derive(Debug)]
struct Item {
    rel: PathBuf,
    /// Where the source is read: a file, a Redis key path, or a SQLite session's virtual
    /// path ([`SqliteStorage::session_path`]).
    from: PathBuf,
    /// The source as reported: `from`, or the database file for a SQLite source.
    shown: PathBuf,
    to: PathBuf,
    bytes: u64,
    fate: Fate,
    src: Source,
    kind: Kind,
}

/// Where an item's bytes come from.
#[derive(Debug, Clone)]
enum Source {
    /// The session at the item's `from` in this storage.
    Session(Arc<dyn Storage>),
    /// The `sessions.json` built from this database's `session_nodes`
    /// ([`SqliteStorage::store_index_json`]), with the time the copy gets (the newest
    /// `session_nodes.updated_at`, the last row mutation; `None`: the time of the copy).
    StoreIndex {
        db: Arc<SqliteStorage>,
        changed: Option<SystemTime>,
    },
}

/// What an item is (the `kind` of the JSON output when the source is SQLite).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    /// A session file or Redis session (files ⇄ Redis).
    Session,
    /// A key's current transcript generation, `<sessionId>.jsonl`.
    Transcript { key: String, session_id: String },
    /// An earlier generation of a key, `<sessionId>.jsonl.reset.<ts>`.
    Earlier { key: String, session_id: String },
    /// An agent's `sessions.json`.
    StoreIndex { agent: String, keys: usize },
}

impl Kind {
    fn name(&self) -> &'static str {
        match self {
            Kind::Session => "session",
            Kind::Transcript { .. } => "transcript",
            Kind::Earlier { .. } => "earlierGeneration",
            Kind::StoreIndex { .. } => "storeIndex",
        }
    }

    fn key(&self) -> Option<&str> {
        match self {
            Kind::Transcript { key, .. } | Kind::Earlier { key, .. } => Some(key),
            _ => None,
        }
    }

    fn session_id(&self) -> Option<&str> {
        match self {
            Kind::Transcript { session_id, .. } | Kind::Earlier { session_id, .. } => {
                Some(session_id)
            }
            _ => None,
        }
    }
}

/// What [`Source::read_stable`] saw, to tell whether the source changed since.
enum Seen {
    Snapshot(SessionFileSnapshot),
    Bytes,
}

impl Source {
    /// The source's size in bytes, `None` when it vanished.
    fn size(&self, from: &Path) -> Result<Option<u64>, String> {
        match self {
            Source::Session(storage) => storage
                .stat(from)
                .map(|s| s.map(|s| s.size))
                .map_err(|e| format!("cannot read the source: {}", io_text(&e))),
            Source::StoreIndex { .. } => self.read(from).map(|b| Some(b.len() as u64)),
        }
    }

    fn read(&self, from: &Path) -> Result<Vec<u8>, String> {
        match self {
            Source::Session(storage) => storage
                .read_all(from)
                .map_err(|e| format!("cannot read the source: {}", io_text(&e))),
            Source::StoreIndex { db, .. } => db
                .store_index_json()
                .map_err(|e| format!("cannot build sessions.json: {}", text::safe(&e.to_string()))),
        }
    }

    /// The bytes, the time the copy gets, and what was seen: a session is stat-read-stat (a
    /// change in between refuses it), the store index is built once.
    fn read_stable(&self, from: &Path) -> Result<(Vec<u8>, Option<SystemTime>, Seen), String> {
        match self {
            Source::Session(storage) => {
                let stat = || -> Result<Option<SessionFileSnapshot>, String> {
                    storage
                        .stat(from)
                        .map_err(|e| format!("cannot read the source: {}", io_text(&e)))
                };
                let before = stat()?.ok_or("the source session vanished before it was read")?;
                let bytes = self.read(from)?;
                if stat()? != Some(before) {
                    return Err(
                        "the source changed while it was read (a writer is active?); not copied: \
                         stop the writers and run again"
                            .to_owned(),
                    );
                }
                Ok((
                    bytes,
                    Some(system_time(before.mtime_ns)),
                    Seen::Snapshot(before),
                ))
            }
            Source::StoreIndex { changed, .. } => Ok((self.read(from)?, *changed, Seen::Bytes)),
        }
    }

    /// Whether the source still is as `seen` (and, for the store index, builds `bytes` again).
    fn unchanged(&self, from: &Path, seen: &Seen, bytes: &[u8]) -> Result<bool, String> {
        match (self, seen) {
            (Source::Session(storage), Seen::Snapshot(before)) => storage
                .stat(from)
                .map(|now| now.as_ref() == Some(before))
                .map_err(|e| format!("cannot read the source again: {}", io_text(&e))),
            _ => Ok(self.read(from)? == bytes),
        }
    }
}

/// A path that is not migrated, and why.
#[derive(Debug)]
struct LeftAlone {
    path: PathBuf,
    reason: String,
}

/// A local directory argument: `~` expanded, absolute (lexically).
fn local_dir(p: &Path) -> PathBuf {
    session_store::paths::resolve(&address::expand_tilde(p))
}

/// The database file name of an agent (`openclaw-sqlite.md` §1.1).
const AGENT_DB_NAME: &str = "openclaw-agent.sqlite";

/// The agent databases of a state directory, `agents/*/agent/openclaw-agent.sqlite` (regular
/// files, sorted by agent id).
fn agent_dbs(state: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(state.join("agents")) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .map(|e| e.path().join("agent").join(AGENT_DB_NAME))
        .filter(|p| matches!(fsx::probe(p), fsx::Found::Regular))
        .collect();
    found.sort();
    found
}

/// One warning per agent of the state directory `state` whose `agents/<id>/sessions/` still
/// holds legacy files (`*.jsonl` transcripts, `sessions.json`) that a SQLite export does not
/// carry over: left behind by a failed import, or of an agent with no database at all.
fn legacy_leftovers(state: &Path, dbs: &[AgentDb]) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(state.join("agents")) else {
        return Vec::new();
    };
    let mut agents: Vec<PathBuf> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
    agents.sort();
    let mut out = Vec::new();
    for agent_dir in agents {
        let sessions = agent_dir.join("sessions");
        let Ok(rd) = std::fs::read_dir(&sessions) else {
            continue;
        };
        let mut names: Vec<String> = rd
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".jsonl") || n == "sessions.json")
            .collect();
        if names.is_empty() {
            continue;
        }
        names.sort();
        let agent = agent_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let has_db = dbs.iter().any(|d| d.agent == agent);
        let why = if has_db {
            "are not in its database (not imported)"
        } else {
            "belong to an agent without a database"
        };
        out.push(format!(
            "agent {}: {} in {} {why} and were not carried over: {}; run `sessions \
             verify-import` to see what the import lost",
            text::safe(&agent),
            plural(names.len(), "legacy file", "legacy files"),
            text::path(&sessions),
            names
                .iter()
                .map(|n| text::safe(n).into_owned())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    out
}

/// The SQLite source a request names, if any: `--from-root DIR`, `--from sqlite:PATH` (a
/// database file or a state directory), or a plain `--from DIR` holding agent databases when
/// `--to` is a directory too (files ⇄ files has no other meaning). The root the exported
/// files are placed under (relative `agents/<agentId>/sessions/…`) and the databases.
fn sqlite_source(
    req: &MigrateRequest,
    to_redis: bool,
) -> anyhow::Result<Option<(PathBuf, Vec<PathBuf>)>> {
    let (path, explicit) = match (&req.from_root, &req.from) {
        (Some(root), _) => (root.clone(), true),
        (None, Some(from)) => match from.to_str().and_then(|s| s.strip_prefix("sqlite:")) {
            Some("") => bail!(UsageError::new(
                "--from sqlite: needs a path: sqlite:PATH (an openclaw-agent.sqlite file or a \
                 state directory holding agents/*/agent/openclaw-agent.sqlite)"
            )),
            Some(rest) => (PathBuf::from(rest), true),
            None if !to_redis && !from.to_str().is_some_and(backend::is_redis_url) => {
                (from.clone(), false)
            }
            None => return Ok(None),
        },
        (None, None) => bail!(UsageError::new("give --from SRC or --from-root DIR")),
    };
    let path = local_dir(&path);
    match fsx::probe(&path) {
        fsx::Found::Regular if explicit => {
            let root = match path.parent().and_then(Path::parent).and_then(Path::parent) {
                Some(agents) if SqliteStorage::default_sessions_dir(&path) != path => {
                    agents.parent().unwrap_or(agents).to_path_buf()
                }
                _ => path.parent().unwrap_or(&path).to_path_buf(),
            };
            Ok(Some((root, vec![path])))
        }
        fsx::Found::Other("directory") => {
            let dbs = agent_dbs(&path);
            if dbs.is_empty() {
                if explicit {
                    bail!(UsageError::new(format!(
                        "{}: no OpenClaw SQLite store (agents/*/agent/{AGENT_DB_NAME}) in it",
                        text::path(&path)
                    )));
                }
                return Ok(None);
            }
            Ok(Some((path, dbs)))
        }
        _ if explicit => bail!(UsageError::new(format!(
            "{}: no such database file or state directory",
            text::path(&path)
        ))),
        _ => Ok(None),
    }
}

/// Opens the databases of a SQLite source (read-only) and names their agents.
fn open_dbs(dbs: &[PathBuf]) -> anyhow::Result<Vec<AgentDb>> {
    let mut out = Vec::with_capacity(dbs.len());
    for db in dbs {
        let storage = SqliteStorage::open(db).map_err(|e| anyhow::anyhow!("{e}"))?;
        let standard = SqliteStorage::default_sessions_dir(storage.db_path());
        let agent = if standard != storage.db_path() {
            standard
                .parent()
                .and_then(Path::file_name)
                .map(|n| n.to_string_lossy().into_owned())
        } else {
            None
        }
        .or_else(|| storage.store().agent_id().map(str::to_owned))
        .unwrap_or_else(|| "main".to_owned());
        if session_store::validate_name(session_store::NameKind::AgentId, &agent).is_err() {
            bail!(
                "{}: its agent id {:?} cannot be a directory name",
                text::path(storage.db_path()),
                text::safe(&agent)
            );
        }
        out.push(AgentDb {
            agent,
            storage: Arc::new(storage),
        });
    }
    Ok(out)
}

/// Parses both sides: exactly one is a Redis URL, or the source is SQLite and the
/// destination a directory or a Redis URL.
fn sides(req: &MigrateRequest) -> anyhow::Result<(Side, Side)> {
    let is_redis = |p: &Path| p.to_str().is_some_and(backend::is_redis_url);
    let to_redis = is_redis(&req.to);
    if let Some((root, dbs)) = sqlite_source(req, to_redis)? {
        let dbs = open_dbs(&dbs)?;
        let storage: Arc<dyn Storage> = match dbs.first() {
            Some(d) => d.storage.clone(),
            None => FileStorage::shared(),
        };
        let src = Side {
            store: Store::Sqlite { dbs },
            root,
            storage,
        };
        let dst = if to_redis {
            let spec =
                backend::parse_redis(&req.to.to_string_lossy(), req.redis_prefix.as_deref())?;
            let redis = spec.connect()?;
            Side {
                storage: Arc::new(redis.clone()),
                store: Store::Redis { spec, redis },
                root: req
                    .redis_root
                    .as_deref()
                    .map_or_else(|| src.root.clone(), local_dir),
            }
        } else {
            if req.redis_root.is_some() {
                bail!(UsageError::new(
                    "--redis-root applies when one side is a redis store"
                ));
            }
            let dir = local_dir(&req.to);
            match fsx::probe(&dir) {
                fsx::Found::Regular => bail!(UsageError::new(format!(
                    "{} is a regular file, not a directory",
                    text::path(&dir)
                ))),
                fsx::Found::Other(kind) if kind != "directory" => bail!(UsageError::new(format!(
                    "{} is a {kind}, not a directory",
                    text::path(&dir)
                ))),
                _ => {}
            }
            if dir == src.root {
                bail!(UsageError::new(format!(
                    "--to {} is the state directory of the SQLite store: its sessions/ folders \
                     are where OpenClaw 2026.8+ looks for a legacy store to import; export to \
                     another directory",
                    text::path(&dir)
                )));
            }
            Side {
                store: Store::Files,
                root: dir,
                storage: FileStorage::shared(),
            }
        };
        return Ok((src, dst));
    }
    let Some(from) = req.from.as_deref() else {
        bail!(UsageError::new("give --from SRC or --from-root DIR"));
    };
    let from_redis = is_redis(from);
    let (url, dir) = match (from_redis, to_redis) {
        (true, false) => (from, req.to.as_path()),
        (false, true) => (req.to.as_path(), from),
        (true, true) => bail!(UsageError::new(
            "both --from and --to are redis URLs; migrate copies between a directory and a redis \
             store (one side each)"
        )),
        (false, false) => bail!(UsageError::new(
            "neither --from nor --to is a redis URL; migrate copies between a directory and a \
             redis store (give redis://HOST:PORT/ on one side), or exports an OpenClaw SQLite \
             store (--from sqlite:PATH)"
        )),
    };
    let spec = backend::parse_redis(&url.to_string_lossy(), req.redis_prefix.as_deref())?;
    let dir = local_dir(dir);
    let kind = match fsx::probe(&dir) {
        fsx::Found::Regular => Some("regular file"),
        fsx::Found::Other(kind) if kind != "directory" => Some(kind),
        _ => None,
    };
    if let Some(kind) = kind {
        bail!(UsageError::new(format!(
            "{} is a {kind}, not a directory",
            text::path(&dir)
        )));
    }
    if to_redis && !dir.is_dir() {
        bail!(UsageError::new(format!(
            "--from {}: no such directory",
            text::path(&dir)
        )));
    }
    let redis_root = req
        .redis_root
        .as_deref()
        .map_or_else(|| dir.clone(), local_dir);
    let redis = spec.connect()?;
    let redis_side = Side {
        storage: Arc::new(redis.clone()),
        store: Store::Redis { spec, redis },
        root: redis_root,
    };
    let files_side = Side {
        store: Store::Files,
        root: dir,
        storage: FileStorage::shared(),
    };
    Ok(if to_redis {
        (files_side, redis_side)
    } else {
        (redis_side, files_side)
    })
}

/// Every regular `*.jsonl` file under `dir` (sorted, recursively; symlinks not followed).
fn walk(
    dir: &Path,
    depth: usize,
    found: &mut Vec<PathBuf>,
    left: &mut Vec<LeftAlone>,
    broken: &mut Vec<LeftAlone>,
) {
    const MAX_DEPTH: usize = 32;
    let mut entries: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.filter_map(Result::ok).map(|e| e.path()).collect(),
        Err(e) => {
            broken.push(LeftAlone {
                path: dir.to_path_buf(),
                reason: format!("cannot read directory: {e}"),
            });
            return;
        }
    };
    entries.sort();
    for p in entries {
        let is_jsonl = p
            .file_name()
            .is_some_and(|n| n.to_string_lossy().ends_with(".jsonl"));
        let meta = match std::fs::symlink_metadata(&p) {
            Ok(m) => m,
            Err(e) => {
                if is_jsonl {
                    broken.push(LeftAlone {
                        path: p,
                        reason: format!("cannot read: {e}"),
                    });
                }
                continue;
            }
        };
        let ft = meta.file_type();
        if ft.is_symlink() {
            if is_jsonl || p.is_dir() {
                left.push(LeftAlone {
                    path: p,
                    reason: "a symbolic link (not followed: migrate copies regular files only)"
                        .to_owned(),
                });
            }
        } else if ft.is_dir() {
            if depth >= MAX_DEPTH {
                left.push(LeftAlone {
                    path: p,
                    reason: format!("deeper than {MAX_DEPTH} directories (not entered)"),
                });
            } else {
                walk(&p, depth + 1, found, left, broken);
            }
        } else if is_jsonl {
            if ft.is_file() {
                found.push(p);
            } else {
                left.push(LeftAlone {
                    path: p,
                    reason: format!("a {}, not a regular file", fsx::type_name(&ft)),
                });
            }
        }
    }
}

/// The sessions of the source side, sorted by path, with what is left alone and what could
/// not be read.
fn sources(side: &Side) -> anyhow::Result<(Vec<PathBuf>, Vec<LeftAlone>, Vec<LeftAlone>)> {
    let (mut found, mut left, mut broken) = (Vec::new(), Vec::new(), Vec::new());
    match &side.store {
        Store::Files => walk(&side.root, 0, &mut found, &mut left, &mut broken),
        // Listed with their keys and generations by `sqlite_items`.
        Store::Sqlite { .. } => {}
        Store::Redis { spec, redis } => {
            let dirs = redis
                .all_dirs()
                .map_err(|e| anyhow::anyhow!("cannot list {}: {e}", spec.describe()))?;
            for dir in dirs.iter().filter(|d| d.starts_with(&side.root)) {
                let entries = match redis.list(dir) {
                    Ok(v) => v,
                    Err(e) => {
                        broken.push(LeftAlone {
                            path: dir.clone(),
                            reason: format!("cannot list: {e}"),
                        });
                        continue;
                    }
                };
                for e in entries {
                    let plain = e.path.parent() == Some(dir.as_path());
                    let is_jsonl = e
                        .path
                        .file_name()
                        .is_some_and(|n| n.to_string_lossy().ends_with(".jsonl"));
                    if !plain {
                        left.push(LeftAlone {
                            path: e.path,
                            reason: "its name holds a path separator or `..` (it could address \
                                     another directory)"
                                .to_owned(),
                        });
                    } else if !is_jsonl {
                        left.push(LeftAlone {
                            path: e.path,
                            reason: "not a *.jsonl session name".to_owned(),
                        });
                    } else {
                        found.push(e.path);
                    }
                }
            }
        }
    }
    found.sort();
    Ok((found, left, broken))
}

/// The path below the root, when every component is a plain name.
fn relative(root: &Path, p: &Path) -> Option<PathBuf> {
    let rel = p.strip_prefix(root).ok()?;
    (rel.components().count() > 0 && rel.components().all(|c| matches!(c, Component::Normal(_))))
        .then(|| rel.to_path_buf())
}

fn io_text(e: &std::io::Error) -> String {
    text::safe(&e.to_string()).into_owned()
}

/// When an earlier generation was superseded, in epoch milliseconds: the `created_at` of the
/// generation that replaced it (the window naming it as `previous_session_id`, else the key's
/// next window by `created_at`), else its own last change. It names the archive
/// `<sessionId>.jsonl.reset.<ts>`, as the JSONL-era rollover names the old transcript at the
/// time of the reset (openclaw-store.md §3.3, R1.13); taken from the database, so a second
/// run names the same file.
fn superseded_at(s: &SqliteSession, all: &[SqliteSession]) -> i64 {
    let others = || {
        all.iter()
            .filter(|o| o.session_key == s.session_key && o.session_id != s.session_id)
    };
    let by_link = others()
        .filter(|o| o.previous_session_id.as_deref() == Some(s.session_id.as_str()))
        .map(|o| o.window_created_at)
        .min();
    let next = || {
        others()
            .filter(|o| {
                (o.window_created_at, o.session_id.as_str())
                    > (s.window_created_at, s.session_id.as_str())
            })
            .map(|o| o.window_created_at)
            .min()
    };
    by_link.or_else(next).unwrap_or(s.window_updated_at)
}

/// The items of a SQLite source, per agent database (`agents/<agentId>/sessions/` below both
/// roots): every key's current generation as `<sessionId>.jsonl`, every earlier generation as
/// the reset archive `<sessionId>.jsonl.reset.<ts>` ([`superseded_at`]), and `sessions.json`
/// from `session_nodes`. A Redis destination holds sessions only: the earlier generations and
/// `sessions.json` are left alone there (as a files → Redis migration of the exported
/// directory leaves them).
fn sqlite_items(
    dbs: &[AgentDb],
    dst: &Side,
    left: &mut Vec<LeftAlone>,
    broken: &mut Vec<LeftAlone>,
) -> Vec<Item> {
    let to_redis = matches!(dst.store, Store::Redis { .. });
    let mut items = Vec::new();
    for db in dbs {
        let rel_dir = PathBuf::from("agents").join(&db.agent).join("sessions");
        let sessions = match db.storage.store().sessions() {
            Ok(v) => v,
            Err(e) => {
                broken.push(LeftAlone {
                    path: db.storage.db_path().to_path_buf(),
                    reason: format!("cannot list its sessions: {}", text::safe(&e.to_string())),
                });
                continue;
            }
        };
        let storage: Arc<dyn Storage> = db.storage.clone();
        for s in &sessions {
            let from = db.storage.session_path(&s.session_id);
            if let Err(e) =
                session_store::validate_name(session_store::NameKind::SessionId, &s.session_id)
            {
                left.push(LeftAlone {
                    path: from,
                    reason: format!(
                        "{} of {}: {e} (it cannot name a file)",
                        if s.current {
                            "the transcript"
                        } else {
                            "an earlier generation"
                        },
                        text::safe(&s.session_key)
                    ),
                });
                continue;
            }
            let (name, kind) = if s.current {
                (
                    format!("{}.jsonl", s.session_id),
                    Kind::Transcript {
                        key: s.session_key.clone(),
                        session_id: s.session_id.clone(),
                    },
                )
            } else if to_redis {
                left.push(LeftAlone {
                    path: from,
                    reason: format!(
                        "an earlier generation of {}: its JSONL-era file is a reset archive, not a \
                         session, and Redis holds sessions only (migrate to a directory to keep it)",
                        text::safe(&s.session_key)
                    ),
                });
                continue;
            } else {
                let at = superseded_at(s, &sessions);
                let Some(ts) = session_semantics::openclaw_store::format_archive_timestamp(at)
                else {
                    left.push(LeftAlone {
                        path: from,
                        reason: format!(
                            "an earlier generation whose time {at} has no archive name"
                        ),
                    });
                    continue;
                };
                (
                    format!("{}.jsonl.reset.{ts}", s.session_id),
                    Kind::Earlier {
                        key: s.session_key.clone(),
                        session_id: s.session_id.clone(),
                    },
                )
            };
            let rel = rel_dir.join(name);
            items.push(Item {
                to: dst.root.join(&rel),
                rel,
                from,
                shown: db.storage.db_path().to_path_buf(),
                bytes: 0,
                fate: Fate::Copy,
                src: Source::Session(storage.clone()),
                kind,
            });
        }
        let index_path = db.storage.db_path().to_path_buf();
        if to_redis {
            left.push(LeftAlone {
                path: index_path,
                reason: "its sessions.json (built from session_nodes) is not a session: Redis \
                         holds sessions only (migrate to a directory to keep it)"
                    .to_owned(),
            });
            continue;
        }
        let keys = db
            .storage
            .store_index_json()
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Map<String, Value>>(&b).ok())
            .map_or(0, |m| m.len());
        let changed = sessions
            .iter()
            .map(|s| s.updated_at)
            .max()
            .and_then(|ms| u64::try_from(ms).ok())
            .map(|ms| SystemTime::UNIX_EPOCH + Duration::from_millis(ms));
        let rel = rel_dir.join("sessions.json");
        items.push(Item {
            to: dst.root.join(&rel),
            rel,
            shown: index_path.clone(),
            from: index_path,
            bytes: 0,
            fate: Fate::Copy,
            src: Source::StoreIndex {
                db: db.storage.clone(),
                changed,
            },
            kind: Kind::StoreIndex {
                agent: db.agent.clone(),
                keys,
            },
        });
    }
    items
}

/// What the plan finds at a destination: nothing, the same bytes, or something else.
fn plan_one(dst: &Side, item: &mut Item) {
    match item.src.size(&item.from) {
        Ok(Some(size)) => item.bytes = size,
        Ok(None) => {
            item.fate = Fate::Failed("the source session vanished before it was read".to_owned());
            return;
        }
        Err(e) => {
            item.fate = Fate::Failed(e);
            return;
        }
    }
    let there = match &dst.store {
        Store::Files => match std::fs::symlink_metadata(&item.to) {
            Ok(m) if m.is_file() => true,
            Ok(m) => {
                item.fate = Fate::Exists(format!(
                    "a {} is at the destination",
                    fsx::type_name(&m.file_type())
                ));
                return;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => {
                item.fate = Fate::Failed(format!("cannot check the destination: {}", io_text(&e)));
                return;
            }
        },
        Store::Redis { .. } | Store::Sqlite { .. } => match dst.storage.stat(&item.to) {
            Ok(s) => s.is_some(),
            Err(e) => {
                item.fate = Fate::Failed(format!("cannot check the destination: {}", io_text(&e)));
                return;
            }
        },
    };
    if !there {
        item.fate = Fate::Copy;
        return;
    }
    let theirs = dst.storage.read_all(&item.to);
    let ours = item.src.read(&item.from);
    item.fate = match (ours, theirs) {
        (Ok(a), Ok(b)) if a == b => Fate::Identical,
        (Ok(a), Ok(b)) => Fate::Exists(format!(
            "the destination holds other bytes ({} here, {} there)",
            plural(a.len(), "byte", "bytes"),
            plural(b.len(), "byte", "bytes")
        )),
        (Err(e), _) => Fate::Failed(e),
        (_, Err(e)) => Fate::Failed(format!("cannot read the destination: {}", io_text(&e))),
    };
}

/// The identity and state of a copy just created, to remove exactly it again and only while
/// nothing was written to it since: a file's snapshot taken right after the copy was made
/// (`None`: unknown, never removed), a Redis session's whole state.
enum Created {
    File(Option<SessionFileSnapshot>),
    Redis(RedisVersion),
}

/// Creates the destination session (never replacing one) with `changed`, the source's last
/// change, as its own: a file's modification time (set after the create, through
/// `session_store::io`), a Redis session's change stamp and last activity.
fn create(
    dst: &Side,
    path: &Path,
    bytes: &[u8],
    changed: Option<SystemTime>,
) -> Result<Created, String> {
    let changed = changed.unwrap_or_else(SystemTime::now);
    let exists = "it appeared at the destination meanwhile (not replaced)".to_owned();
    match &dst.store {
        Store::Files => {
            if let Some(parent) = path.parent() {
                dst.storage.ensure_dir(parent).map_err(|e| {
                    format!("cannot create {}: {}", text::path(parent), io_text(&e))
                })?;
            }
            dst.storage.create_new(path, bytes).map_err(|e| {
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    exists.clone()
                } else {
                    format!("cannot write: {}", io_text(&e))
                }
            })?;
            // The copy as written: a snapshot of anything else (a gateway appending meanwhile)
            // differs, and such a copy is never removed.
            let ours = |snap: Option<SessionFileSnapshot>| {
                Created::File(snap.filter(|s| s.size == bytes.len() as u64))
            };
            let created = ours(SessionFileSnapshot::stat(path).ok().flatten());
            if let Err(e) = session_store::io::set_modified(path, changed) {
                let why = format!("cannot set the copy's modification time: {}", io_text(&e));
                return Err(match remove_copy(dst, path, &created) {
                    Ok(()) => format!("{why}; the copy was removed again"),
                    Err(e) => format!("{why}; removing the copy failed: {e}"),
                });
            }
            Ok(ours(SessionFileSnapshot::stat(path).ok().flatten()))
        }
        Store::Redis { redis, .. } => match redis.create_at(path, bytes, changed) {
            Ok(v) => Ok(Created::Redis(v)),
            Err(RedisStoreError::AlreadyExists { .. }) => Err(exists),
            Err(e) => Err(format!("cannot write: {}", text::safe(&e.to_string()))),
        },
        Store::Sqlite { .. } => Err("an OpenClaw SQLite store is read-only here".to_owned()),
    }
}

/// Removes a copy this run created, only as it was created (and nothing else: a file whose
/// snapshot differs from the one taken right after the copy, or a Redis session in another
/// state than the copy's, was written to or replaced meanwhile, and is left alone so that
/// nothing written to it is lost).
fn remove_copy(dst: &Side, path: &Path, created: &Created) -> Result<(), String> {
    let changed = "the copy was written to or replaced meanwhile; left as it is";
    match (&dst.store, created) {
        (Store::Files, Created::File(Some(snap))) => {
            match SessionFileSnapshot::stat(path) {
                Ok(Some(now)) if now == *snap => {}
                _ => return Err(changed.to_owned()),
            }
            session_store::io::remove_file(path).map_err(|e| io_text(&e))
        }
        (Store::Redis { redis, .. }, Created::Redis(state)) => {
            match redis.remove(path, Some(Fence::exact(state))) {
                Ok(_) => Ok(()),
                Err(RedisStoreError::Fence { .. }) => Err(changed.to_owned()),
                Err(e) => Err(text::safe(&e.to_string()).into_owned()),
            }
        }
        _ => Err("cannot tell the copy apart from another file; left as it is".to_owned()),
    }
}

/// Copies one item: the source read stably ([`Source::read_stable`]), create-if-absent at the
/// destination, read back and compared, then the source checked once more. Returns the bytes
/// copied.
fn copy_one(src: &Source, dst: &Side, from: &Path, to: &Path) -> Result<u64, String> {
    let (bytes, changed, seen) = src.read_stable(from)?;
    let created = create(dst, to, &bytes, changed)?;
    let undo = |why: String| -> String {
        match remove_copy(dst, to, &created) {
            Ok(()) => format!("{why}; the copy was removed again"),
            Err(e) => format!("{why}; removing the copy failed: {e}"),
        }
    };
    match dst.storage.read_all(to) {
        Ok(back) if back == bytes => {}
        Ok(back) => {
            return Err(undo(format!(
                "verification failed: the destination reads back {} bytes that differ from the \
                 {} bytes written",
                back.len(),
                bytes.len()
            )));
        }
        Err(e) => {
            return Err(undo(format!(
                "verification failed: cannot read the copy back: {}",
                io_text(&e)
            )));
        }
    }
    if !src.unchanged(from, &seen, &bytes)? {
        return Err(undo(
            "the source changed during the copy (a writer is active?): stop the writers and run \
             again"
                .to_owned(),
        ));
    }
    Ok(bytes.len() as u64)
}

/// A modification time in nanoseconds since the epoch (a snapshot's `mtime_ns`) as a
/// [`SystemTime`].
fn system_time(ns: i128) -> SystemTime {
    let d = Duration::from_nanos(u64::try_from(ns.unsigned_abs()).unwrap_or(u64::MAX));
    if ns < 0 {
        SystemTime::UNIX_EPOCH
            .checked_sub(d)
            .unwrap_or(SystemTime::UNIX_EPOCH)
    } else {
        SystemTime::UNIX_EPOCH + d
    }
}

/// The progress bar of the copy phase: on stderr when it is a terminal, hidden otherwise.
fn progress(len: usize) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(len as u64),
        indicatif::ProgressDrawTarget::stderr(),
    );
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("migrating {bar:30} {pos}/{len} {wide_msg}")
    {
        bar.set_style(style);
    }
    bar
}

fn fate_name(f: &Fate) -> &'static str {
    match f {
        Fate::Copy | Fate::WouldCopy => "wouldCopy",
        Fate::Copied => "copied",
        Fate::Identical => "identical",
        Fate::Exists(_) => "exists",
        Fate::NotCopied => "notCopied",
        Fate::Failed(_) => "failed",
    }
}

fn fate_label(f: &Fate) -> &'static str {
    match f {
        Fate::Copy | Fate::WouldCopy => "would copy",
        Fate::Copied => "copied",
        Fate::Identical => "identical",
        Fate::Exists(_) => "exists",
        Fate::NotCopied => "not copied",
        Fate::Failed(_) => "failed",
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", text::thousands(n), if n == 1 { one } else { many })
}

/// Plans, copies (unless `--dry-run` or refused) and reports.
///
/// # Errors
/// Usage errors (sides), the Redis store cannot be reached or listed, stdout.
pub(crate) fn run(req: &MigrateRequest, out: &mut Output) -> anyhow::Result<Outcome> {
    let (src, dst) = sides(req)?;
    let warnings = match &src.store {
        Store::Sqlite { dbs } => legacy_leftovers(&src.root, dbs),
        _ => Vec::new(),
    };
    for w in &warnings {
        out.warn(w)?;
    }
    let (found, mut left_alone, mut broken) = sources(&src)?;
    let mut items: Vec<Item> = match &src.store {
        Store::Sqlite { dbs } => sqlite_items(dbs, &dst, &mut left_alone, &mut broken),
        _ => Vec::with_capacity(found.len()),
    };
    for from in found {
        let Some(rel) = relative(&src.root, &from) else {
            left_alone.push(LeftAlone {
                path: from,
                reason: "not below the source root".to_owned(),
            });
            continue;
        };
        items.push(Item {
            to: dst.root.join(&rel),
            rel,
            shown: from.clone(),
            from,
            bytes: 0,
            fate: Fate::Copy,
            src: Source::Session(src.storage.clone()),
            kind: Kind::Session,
        });
    }
    items.sort_by(|a, b| a.rel.cmp(&b.rel));
    for item in &mut items {
        plan_one(&dst, item);
    }
    let refused = items.iter().any(|i| matches!(i.fate, Fate::Exists(_)));
    let mut copied_bytes = 0u64;
    if refused {
        for i in items.iter_mut().filter(|i| i.fate == Fate::Copy) {
            i.fate = Fate::NotCopied;
        }
    } else if req.dry_run {
        for i in items.iter_mut().filter(|i| i.fate == Fate::Copy) {
            i.fate = Fate::WouldCopy;
        }
    } else {
        let todo = items.iter().filter(|i| i.fate == Fate::Copy).count();
        let bar = progress(todo);
        // Transcripts first, each store index last: an interrupted run leaves transcripts no
        // row names yet (the next run writes the index), never rows naming missing transcripts
        // (which OpenClaw's `--fix-missing` would prune).
        for index_pass in [false, true] {
            for n in 0..items.len() {
                let is_index = matches!(items[n].kind, Kind::StoreIndex { .. });
                if is_index != index_pass || items[n].fate != Fate::Copy {
                    continue;
                }
                let failed_here = if is_index {
                    let dir = items[n].rel.parent();
                    items
                        .iter()
                        .filter(|o| {
                            o.rel.parent() == dir
                                && !matches!(o.kind, Kind::StoreIndex { .. })
                                && matches!(o.fate, Fate::Failed(_))
                        })
                        .count()
                } else {
                    0
                };
                let i = &mut items[n];
                bar.set_message(text::path(&i.rel));
                i.fate = if failed_here > 0 {
                    Fate::Failed(format!(
                        "not written: {} of this agent could not be migrated (its rows would \
                         name missing transcripts); fix that and run again",
                        plural(failed_here, "transcript", "transcripts")
                    ))
                } else {
                    match copy_one(&i.src, &dst, &i.from, &i.to) {
                        Ok(n) => {
                            copied_bytes += n;
                            i.bytes = n;
                            Fate::Copied
                        }
                        Err(e) => Fate::Failed(e),
                    }
                };
                bar.inc(1);
            }
        }
        bar.finish_and_clear();
    }

    let count = |f: fn(&Fate) -> bool| items.iter().filter(|i| f(&i.fate)).count();
    let copied = count(|f| *f == Fate::Copied);
    let would = count(|f| *f == Fate::WouldCopy);
    let identical = count(|f| *f == Fate::Identical);
    let exists = count(|f| matches!(f, Fate::Exists(_)));
    let failed = count(|f| matches!(f, Fate::Failed(_))) + broken.len();
    let would_bytes: u64 = items
        .iter()
        .filter(|i| i.fate == Fate::WouldCopy)
        .map(|i| i.bytes)
        .sum();
    let mut left_all: Vec<&LeftAlone> = left_alone.iter().collect();
    left_all.sort_by(|a, b| a.path.cmp(&b.path));
    let shown_rel = |p: &Path| text::path(p.strip_prefix(&src.root).unwrap_or(p));
    // An export from SQLite writes transcripts, reset archives and sessions.json: files.
    let (one, many, one_exists, many_exist) = if src.is_sqlite() {
        ("file", "files", "file exists", "files exist")
    } else {
        ("session", "sessions", "session exists", "sessions exist")
    };

    if req.json {
        let sessions: Vec<Value> = items
            .iter()
            .map(|i| {
                let mut v = json!({
                    "path": i.rel.to_string_lossy(),
                    "source": i.from.to_string_lossy(),
                    "destination": i.to.to_string_lossy(),
                    "bytes": i.bytes,
                    "outcome": fate_name(&i.fate),
                    "error": match &i.fate {
                        Fate::Exists(e) | Fate::Failed(e) => Value::from(e.as_str()),
                        _ => Value::Null,
                    },
                });
                if src.is_sqlite() {
                    // The database the item is read from (its sessions have no file there).
                    v["source"] = Value::from(i.shown.to_string_lossy());
                    v["kind"] = Value::from(i.kind.name());
                    v["sessionKey"] = i.kind.key().map_or(Value::Null, Value::from);
                    v["sessionId"] = i.kind.session_id().map_or(Value::Null, Value::from);
                }
                v
            })
            .collect();
        let left: Vec<Value> = left_all
            .iter()
            .map(|l| json!({ "path": l.path.to_string_lossy(), "reason": l.reason }))
            .collect();
        let errors: Vec<Value> = broken
            .iter()
            .map(|b| json!({ "path": b.path.to_string_lossy(), "error": b.reason }))
            .collect();
        let v = json!({
            "from": src.to_json(),
            "to": dst.to_json(),
            "dryRun": req.dry_run,
            "refused": refused,
            "sessions": sessions,
            "leftAlone": left,
            "errors": errors,
            "warnings": warnings,
            "counts": {
                "copied": copied,
                "wouldCopy": would,
                "identical": identical,
                "exists": exists,
                "failed": failed,
                "leftAlone": left_all.len(),
            },
            "bytesCopied": copied_bytes,
        });
        out.line(&serde_json::to_string_pretty(&v)?)?;
    } else {
        out.line(&format!("from: {}", src.describe()))?;
        out.line(&format!("to:   {}", dst.describe()))?;
        for i in &items {
            if refused && i.fate == Fate::NotCopied {
                continue;
            }
            let label = text::pad(fate_label(&i.fate), 12);
            let rel = text::path(&i.rel);
            let note = match &i.kind {
                Kind::Session => String::new(),
                Kind::Transcript { key, .. } => format!(", {}", text::safe(key)),
                Kind::Earlier { key, .. } => {
                    format!(", an earlier generation of {}", text::safe(key))
                }
                Kind::StoreIndex { agent, keys } => format!(
                    ", {} of agent {}",
                    plural(*keys, "key", "keys"),
                    text::safe(agent)
                ),
            };
            out.line(&match &i.fate {
                Fate::Exists(e) | Fate::Failed(e) => format!("{label}{rel}: {}", text::safe(e)),
                Fate::Identical => format!("{label}{rel} (already at the destination{note})"),
                _ => format!("{label}{rel} ({}{note})", text::human_bytes(i.bytes)),
            })?;
        }
        for l in &left_all {
            out.line(&format!(
                "{}{}: {}",
                text::pad("left alone", 12),
                shown_rel(&l.path),
                text::safe(&l.reason)
            ))?;
        }
        for b in &broken {
            out.line(&format!(
                "{}{}: {}",
                text::pad("failed", 12),
                shown_rel(&b.path),
                text::safe(&b.reason)
            ))?;
        }
        let rest = format!(
            "{} already at the destination, {} left alone, {} failed",
            text::thousands(identical),
            text::thousands(left_all.len()),
            text::thousands(failed)
        );
        let summary = if refused {
            format!(
                "refused: {} at the destination with other contents; nothing written (migrate \
                 never replaces a session: move those away or migrate to another place)",
                plural(exists, one_exists, many_exist)
            )
        } else if items.is_empty() && left_all.is_empty() && broken.is_empty() {
            format!("no sessions under {}", src.describe())
        } else if req.dry_run {
            format!(
                "dry run: would copy {} ({}); {rest}; nothing written",
                plural(would, one, many),
                text::human_bytes(would_bytes)
            )
        } else if copied == 0 {
            format!("nothing copied; {rest}")
        } else {
            format!(
                "copied {} ({}, each read back and verified); {rest}",
                plural(copied, one, many),
                text::human_bytes(copied_bytes)
            )
        };
        out.line(&summary)?;
    }
    if refused {
        out.error(&format!(
            "refusing to migrate: {} at the destination with other contents (listed); nothing \
             was written",
            plural(exists, one_exists, many_exist)
        ))?;
        return Ok(Outcome::Failed);
    }
    if failed > 0 {
        out.error(&format!(
            "{} could not be migrated",
            plural(failed, one, many)
        ))?;
        return Ok(Outcome::Failed);
    }
    Ok(if copied > 0 || would > 0 {
        Outcome::Changed
    } else {
        Outcome::Ok
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_are_plain_names_below_the_root() {
        let root = Path::new("/s");
        assert_eq!(
            relative(root, Path::new("/s/agents/main/sessions/a.jsonl")),
            Some(PathBuf::from("agents/main/sessions/a.jsonl"))
        );
        assert_eq!(relative(root, Path::new("/s")), None);
        assert_eq!(relative(root, Path::new("/t/a.jsonl")), None);
        assert_eq!(relative(root, Path::new("/s/a/../../x.jsonl")), None);
    }

    const COPY: &[u8] = b"{\"type\":\"session\",\"id\":\"m1\"}\n{\"id\":\"e1\"}\n";
    const LINE: &[u8] = b"{\"id\":\"e2\"}\n";

    fn changed() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_micros(1_767_225_600_123_456)
    }

    #[test]
    fn a_file_copy_written_to_meanwhile_is_not_removed() {
        let dir = tempfile::tempdir().unwrap();
        let dst = Side {
            store: Store::Files,
            root: dir.path().to_path_buf(),
            storage: FileStorage::shared(),
        };
        let path = dir.path().join("s.jsonl");
        let created = create(&dst, &path, COPY, Some(changed())).unwrap();
        // A gateway appends to the fresh copy: same inode, other bytes.
        session_store::io::append_raw(&path, LINE).unwrap();
        assert_eq!(
            remove_copy(&dst, &path, &created),
            Err("the copy was written to or replaced meanwhile; left as it is".to_owned())
        );
        assert_eq!(std::fs::read(&path).unwrap(), [COPY, LINE].concat());
        // An untouched copy is removed.
        let other = dir.path().join("t.jsonl");
        let created = create(&dst, &other, COPY, Some(changed())).unwrap();
        assert_eq!(remove_copy(&dst, &other, &created), Ok(()));
        assert!(!other.exists());
    }

    #[test]
    fn a_redis_copy_written_to_meanwhile_is_not_removed() {
        let Some(server) = session_store::test_util::redis_server::LocalRedisServer::start_or_skip(
            "a_redis_copy_written_to_meanwhile_is_not_removed",
        ) else {
            return;
        };
        let redis = RedisStorage::connect(&server.url(), Some("mig")).unwrap();
        let dst = Side {
            storage: Arc::new(redis.clone()),
            store: Store::Redis {
                spec: RedisSpec {
                    url: server.url(),
                    prefix: "mig".to_owned(),
                },
                redis: redis.clone(),
            },
            root: PathBuf::from("/r"),
        };
        let path = Path::new("/r/s.jsonl");
        let created = create(&dst, path, COPY, Some(changed())).unwrap();
        // Same generation, a new version and length: a generation-only fence would delete it.
        redis
            .append(
                path,
                &LINE[..LINE.len() - 1],
                session_store::redis_store::AppendMode::Line,
                None,
            )
            .unwrap();
        assert_eq!(
            remove_copy(&dst, path, &created),
            Err("the copy was written to or replaced meanwhile; left as it is".to_owned())
        );
        assert_eq!(redis.load(path).unwrap().unwrap().1, [COPY, LINE].concat());
        let other = Path::new("/r/t.jsonl");
        let created = create(&dst, other, COPY, Some(changed())).unwrap();
        assert_eq!(remove_copy(&dst, other, &created), Ok(()));
        assert!(redis.load(other).unwrap().is_none());
    }
}
