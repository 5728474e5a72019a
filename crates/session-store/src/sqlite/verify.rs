//! The import verifier (`openclaw-sqlite.md` §4.7): for every legacy transcript OpenClaw
//! 2026.9.6's doctor imported (or left behind) in a state directory, re-derive what the import
//! should have stored ([`session_format::doctor_import`]) and compare it row by row with the
//! agent's SQLite store. Read-only: the transcripts and manifests are read with
//! [`crate::io::read_file`], the database through [`SqliteStore`].
//!
//! What is verified ([`verify_state`]), per agent `<state>/agents/<agentId>/`:
//! - every `session-sqlite-import-archive/*.jsonl.imported-<ms>` (§4.2 step 7);
//! - every transcript move of `<state>/session-sqlite-migration-runs/*.json` (§4.4) whose
//!   classification is `protected`, found at its archive path, else by the archive's file name
//!   in the agent's archive folder, else at its source path;
//! - every `sessions/*.jsonl` still there (doctor leaves a transcript whose import failed
//!   validation, e.g. same id with different bytes, §4.6).
//!
//! Each row is judged: stored verbatim; stored re-serialised or transformed as §3 documents
//! ([`RowVerdict::Reserialised`], the changes listed); semantically equal but spelled otherwise
//! ([`RowVerdict::Equivalent`]); differing beyond that ([`RowVerdict::Differs`]); or lost
//! ([`LostLine`]: after the first unparseable line, after an invalid-UTF-8 chunk, refused as an
//! id conflict, or absent from the database). A session whose window is absent is
//! [`SessionVerdict::SessionMissing`]. An agent with transcripts but no
//! `agent/openclaw-agent.sqlite` at all has not been imported yet: it is listed in
//! [`VerifyReport::not_imported`] and its transcripts are not judged.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use session_format::doctor_import::{
    BadLine, Derivation, DerivedRow, Dropped, LineChange, LineFate, LineSpan, ReadStop, Transform,
    derive, line_changes, parse_v1_id, read_transcript, salvage_lines, v1_id_prefix,
};
use session_format::json::{JsValue, parse_value};

use super::{SqliteError, SqliteStore};

/// The suffix doctor gives archived transcripts: `.jsonl.imported-<epoch ms>`.
const ARCHIVE_MARK: &str = ".jsonl.imported-";

/// Where a verified transcript came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SourceKind {
    /// A `*.jsonl.imported-<ms>` in the agent's import archive.
    Archive,
    /// A `*.jsonl` still in the agent's `sessions/` folder.
    Legacy,
}

impl SourceKind {
    /// `archive` or `legacy`.
    pub fn name(self) -> &'static str {
        match self {
            SourceKind::Archive => "archive",
            SourceKind::Legacy => "legacy",
        }
    }
}

/// How one stored row compares with what the import should have stored.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum RowVerdict {
    /// The row's text is the source line's (trimmed) text.
    Verbatim,
    /// The row is the documented re-serialisation of the line: `changes` (spelling) and
    /// `transforms` (normalisation, migration, repair) say how.
    Reserialised {
        /// Re-spellings (escapes, whitespace, numbers, key order, duplicate keys, padding).
        changes: Vec<LineChange>,
        /// Documented value changes.
        transforms: Vec<Transform>,
    },
    /// The row means the same (JavaScript value equality, key order ignored) but is spelled
    /// otherwise than the re-derivation.
    Equivalent,
    /// The row differs beyond the documented transforms.
    Differs {
        /// The text the import should have stored.
        expected: String,
        /// The text in the database.
        stored: String,
    },
}

/// One stored row and its verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct RowCheck {
    /// The row's `seq`.
    pub seq: usize,
    /// The source line.
    pub span: LineSpan,
    /// The row's identity (entry id; the session id for the header).
    pub id: Option<String>,
    /// The verdict.
    pub verdict: RowVerdict,
}

/// Why a source line has no row in the database.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LostReason {
    /// The line comes after the first unparseable line (line `at`), where doctor's reader stops.
    AfterUnparseable {
        /// The unparseable line.
        at: usize,
    },
    /// The line had not ended before the 64 KiB chunk holding invalid UTF-8 (file offset
    /// `bad_offset`).
    AfterInvalidUtf8 {
        /// The first invalid byte.
        bad_offset: usize,
    },
    /// An earlier stored row (line `line`) has the same id with other text.
    IdConflict {
        /// The line of the row that holds the id.
        line: usize,
    },
    /// The import should have stored it, but the database has no such row.
    NotInDatabase,
}

/// A parseable source line that did not land.
#[derive(Clone, Debug, PartialEq)]
pub struct LostLine {
    /// Where it is.
    pub span: LineSpan,
    /// Its `id`, when it has one.
    pub id: Option<String>,
    /// Its `type`.
    pub entry_type: Option<String>,
    /// Its `message.role`.
    pub role: Option<String>,
    /// Why it is not in the database.
    pub reason: LostReason,
    /// The start of the line (at most 120 characters, lossy UTF-8).
    pub head: String,
}

impl LostLine {
    /// The counting key: `message/<role>` for messages, else the type (`?` without one).
    pub fn kind(&self) -> String {
        match (&self.entry_type, &self.role) {
            (Some(t), Some(r)) if t == "message" => format!("message/{r}"),
            (Some(t), _) => t.clone(),
            (None, _) => "?".to_owned(),
        }
    }
}

/// A source line that cannot be parsed at all.
#[derive(Clone, Debug, PartialEq)]
pub struct UnparseableLine {
    /// Where it is.
    pub span: LineSpan,
    /// Why.
    pub problem: BadLine,
    /// The file's last line, cut short (no `\n`).
    pub torn: bool,
    /// The start of the line (at most 120 characters, lossy UTF-8).
    pub head: String,
}

/// The overall finding for one session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionVerdict {
    /// Every parseable line landed (verbatim or as documented).
    Clean,
    /// Some parseable lines are not in the database.
    Lost,
    /// Nothing lost, but some rows differ beyond the documented transforms.
    Differs,
    /// The database has no window for the session id: the whole session is missing.
    SessionMissing,
}

impl SessionVerdict {
    /// `clean`, `lost`, `differs` or `session-missing`.
    pub fn name(self) -> &'static str {
        match self {
            SessionVerdict::Clean => "clean",
            SessionVerdict::Lost => "lost",
            SessionVerdict::Differs => "differs",
            SessionVerdict::SessionMissing => "session-missing",
        }
    }
}

/// The verification of one transcript.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionReport {
    /// The agent id (directory name).
    pub agent_id: String,
    /// The session key: from the manifest, else the database's window.
    pub session_key: Option<String>,
    /// The session id.
    pub session_id: String,
    /// The transcript verified.
    pub source: PathBuf,
    /// What kind of file it is.
    pub kind: SourceKind,
    /// The manifest's classification (`imported`, `protected`), when a manifest names it.
    pub classification: Option<String>,
    /// The verdict.
    pub verdict: SessionVerdict,
    /// Why doctor's reader stopped early, if it did.
    pub stop: Option<ReadStop>,
    /// Rows the import should have stored.
    pub expected_rows: usize,
    /// Rows in the database for the session.
    pub stored_rows: usize,
    /// One entry per compared stored row.
    pub rows: Vec<RowCheck>,
    /// Parseable lines not in the database.
    pub lost: Vec<LostLine>,
    /// Lines no reader can parse (reported, never imported).
    pub unparseable: Vec<UnparseableLine>,
    /// Lines doctor drops by design: exact repeats of an earlier row (same id and text, or same
    /// text), and `null`/`false` lines: 1-based line numbers.
    pub dropped_by_design: Vec<usize>,
    /// Database rows after the last expected one: written since the import (not a loss).
    pub appended_after_import: usize,
    /// The v1 id prefix the rows carry, when the file got generated ids.
    pub v1_id_prefix: Option<String>,
    /// Set when the v1 ids were made from another path than the one computed here (the state
    /// directory moved, or the manifest's paths are placeholders): the prefix was taken from the
    /// database, and every id had to be consistent with it.
    pub ids_from_moved_path: bool,
}

impl SessionReport {
    /// Lost lines counted per kind ([`LostLine::kind`]).
    pub fn lost_counts(&self) -> BTreeMap<String, usize> {
        let mut m = BTreeMap::new();
        for l in &self.lost {
            *m.entry(l.kind()).or_insert(0) += 1;
        }
        m
    }

    /// Whether a row was re-serialised with information loss (a duplicate key's first value,
    /// an integer's digits).
    pub fn lossy_rows(&self) -> impl Iterator<Item = &RowCheck> {
        self.rows.iter().filter(|r| {
            matches!(&r.verdict, RowVerdict::Reserialised { changes, .. }
                if changes.iter().any(|c| c.lossy()))
        })
    }
}

/// A transcript or manifest that could not be read.
#[derive(Clone, Debug, PartialEq)]
pub struct Unreadable {
    /// The file.
    pub path: PathBuf,
    /// Why.
    pub problem: String,
}

/// An agent with legacy transcripts but no `agents/<id>/agent/openclaw-agent.sqlite`: nothing
/// of it has been imported yet, so there is nothing to verify (its transcripts are not reported
/// as missing sessions).
#[derive(Clone, Debug, PartialEq)]
pub struct NotImported {
    /// The agent id (its folder name under `agents/`).
    pub agent_id: String,
    /// Where OpenClaw 2026.8+ keeps its database: `<state>/agents/<id>/agent/openclaw-agent.sqlite`.
    pub database: PathBuf,
    /// The legacy transcripts found for it (archives, protected sources, `sessions/*.jsonl`).
    pub transcripts: usize,
}

/// Everything [`verify_state`] found.
#[derive(Debug, Default)]
pub struct VerifyReport {
    /// One report per transcript, by agent, then path.
    pub sessions: Vec<SessionReport>,
    /// Agents with transcripts and no database: not imported yet, so not verified.
    pub not_imported: Vec<NotImported>,
    /// Files that could not be read (transcripts, manifests, databases).
    pub unreadable: Vec<Unreadable>,
    /// Manifests read.
    pub manifests: Vec<PathBuf>,
}

/// Why the verification could not run at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// The state directory has no `agents/` folder.
    #[error("{}: not an OpenClaw state directory (no agents/ folder)", path.display())]
    NoAgents {
        /// The state directory.
        path: PathBuf,
    },
    /// A directory could not be listed.
    #[error("{}: cannot list: {source}", path.display())]
    List {
        /// The directory.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

/// One manifest transcript move.
#[derive(Clone, Debug)]
struct ManifestMove {
    agent_id: Option<String>,
    session_key: Option<String>,
    source_path: Option<String>,
    archive_path: Option<String>,
    classification: Option<String>,
}

fn get_str(v: &JsValue, key: &str) -> Option<String> {
    v.get(key)
        .and_then(JsValue::as_str_lossy)
        .map(|s| s.into_owned())
}

fn read_manifests(state: &Path, report: &mut VerifyReport) -> Vec<ManifestMove> {
    let dir = state.join("session-sqlite-migration-runs");
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return out;
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    for path in paths {
        let value = match crate::io::read_file(&path) {
            Ok(bytes) => match parse_value(&bytes) {
                Ok(v) => v,
                Err(e) => {
                    report.unreadable.push(Unreadable {
                        path,
                        problem: format!("not JSON: {e}"),
                    });
                    continue;
                }
            },
            Err(e) => {
                report.unreadable.push(Unreadable {
                    path,
                    problem: e.to_string(),
                });
                continue;
            }
        };
        for target in value
            .get("targets")
            .and_then(JsValue::as_array)
            .into_iter()
            .flatten()
        {
            let agent_id = get_str(target, "agentId");
            for key in ["completedMoves", "plannedMoves"] {
                for m in target
                    .get(key)
                    .and_then(JsValue::as_array)
                    .into_iter()
                    .flatten()
                {
                    if get_str(m, "kind").as_deref() != Some("transcript") {
                        continue;
                    }
                    out.push(ManifestMove {
                        agent_id: agent_id.clone(),
                        session_key: get_str(m, "sessionKey"),
                        source_path: get_str(m, "sourcePath"),
                        archive_path: get_str(m, "archivePath"),
                        classification: m
                            .get("artifact")
                            .and_then(|a| get_str(a, "classification")),
                    });
                }
            }
        }
        report.manifests.push(path);
    }
    out
}

/// `(key, sessionId, file name)` of each row of a legacy `sessions.json` (the file name is the
/// base name of `sessionFile`, else `<sessionId>.jsonl`); empty when there is none or it does
/// not parse.
fn legacy_index(path: &Path) -> Vec<(String, String, String)> {
    let Ok(bytes) = crate::io::read_file(path) else {
        return Vec::new();
    };
    let Ok(JsValue::Object(rows)) = parse_value(&bytes) else {
        return Vec::new();
    };
    rows.iter()
        .filter_map(|(key, entry)| {
            let id = get_str(entry, "sessionId")?;
            let file = get_str(entry, "sessionFile")
                .map(|f| file_name(&f).to_owned())
                .unwrap_or_else(|| format!("{id}.jsonl"));
            Some((key.to_str_lossy().into_owned(), id, file))
        })
        .collect()
}

fn file_name(p: &str) -> &str {
    p.rsplit(['/', '\\']).next().unwrap_or(p)
}

/// The session id in an archive name `<key>.<sessionId>.jsonl.imported-<ms>`.
pub fn archive_session_id(name: &str) -> Option<&str> {
    let at = name.rfind(ARCHIVE_MARK)?;
    let ms = &name[at + ARCHIVE_MARK.len()..];
    if ms.is_empty() || !ms.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let stem = &name[..at];
    let id = stem.rsplit('.').next()?;
    (!id.is_empty()).then_some(id)
}

fn list_files(dir: &Path, keep: impl Fn(&str) -> bool) -> Result<Vec<PathBuf>, VerifyError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(VerifyError::List {
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    let mut v: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(&keep))
        .collect();
    v.sort();
    Ok(v)
}

/// What one transcript to verify is.
struct Subject {
    agent_id: String,
    path: PathBuf,
    kind: SourceKind,
    session_id: String,
    session_key: Option<String>,
    classification: Option<String>,
    /// The path doctor read the transcript at (the v1 id prefix is made from it).
    id_source: PathBuf,
}

fn real_path(p: &Option<String>) -> Option<PathBuf> {
    p.as_deref()
        .filter(|s| !s.contains("<STATE>") && s.starts_with('/'))
        .map(PathBuf::from)
}

/// Verifies every imported, protected or left-behind legacy transcript under `state` (module
/// docs). Nothing is written.
///
/// # Errors
/// [`VerifyError::NoAgents`] when `state/agents` is not a directory; [`VerifyError::List`] when
/// a folder cannot be listed. Files and databases that cannot be read are listed in
/// [`VerifyReport::unreadable`] instead; agents without a database in
/// [`VerifyReport::not_imported`].
pub fn verify_state(state: &Path) -> Result<VerifyReport, VerifyError> {
    let agents_dir = state.join("agents");
    if !agents_dir.is_dir() {
        return Err(VerifyError::NoAgents {
            path: state.to_path_buf(),
        });
    }
    let abs_state = std::path::absolute(state).unwrap_or_else(|_| state.to_path_buf());
    let mut report = VerifyReport::default();
    let moves = read_manifests(state, &mut report);
    let mut agents: Vec<String> = std::fs::read_dir(&agents_dir)
        .map_err(|source| VerifyError::List {
            path: agents_dir.clone(),
            source,
        })?
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .collect();
    agents.sort();
    for agent in agents {
        let agent_dir = agents_dir.join(&agent);
        let archive_dir = agent_dir.join("session-sqlite-import-archive");
        let sessions_dir = agent_dir.join("sessions");
        let mut subjects: Vec<Subject> = Vec::new();
        let find_move = |name: &str| {
            moves.iter().find(|m| {
                m.archive_path.as_deref().map(file_name) == Some(name)
                    && m.agent_id.as_deref().is_none_or(|a| a == agent)
            })
        };
        for path in list_files(&archive_dir, |n| archive_session_id(n).is_some())? {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let Some(sid) = archive_session_id(name) else {
                continue;
            };
            let m = find_move(name);
            let default_source = abs_state
                .join("agents")
                .join(&agent)
                .join("sessions")
                .join(format!("{sid}.jsonl"));
            subjects.push(Subject {
                agent_id: agent.clone(),
                kind: SourceKind::Archive,
                session_id: sid.to_owned(),
                session_key: m.and_then(|m| m.session_key.clone()),
                classification: m.and_then(|m| m.classification.clone()),
                id_source: m
                    .and_then(|m| real_path(&m.source_path))
                    .unwrap_or(default_source),
                path,
            });
        }
        // Protected moves whose archive is not in the archive folder.
        for m in moves.iter().filter(|m| {
            m.classification.as_deref() == Some("protected")
                && m.agent_id.as_deref().is_none_or(|a| a == agent)
        }) {
            let name = m.archive_path.as_deref().map(file_name).unwrap_or("");
            if subjects
                .iter()
                .any(|s| s.path.file_name().and_then(|n| n.to_str()) == Some(name))
            {
                continue;
            }
            let candidates = [
                real_path(&m.archive_path),
                real_path(&m.source_path),
                m.source_path
                    .as_deref()
                    .map(|s| sessions_dir.join(file_name(s))),
            ];
            let sid = archive_session_id(name)
                .map(str::to_owned)
                .or_else(|| {
                    m.source_path
                        .as_deref()
                        .map(file_name)
                        .and_then(|n| n.strip_suffix(".jsonl"))
                        .map(str::to_owned)
                })
                .unwrap_or_default();
            match candidates.into_iter().flatten().find(|p| p.is_file()) {
                Some(path) if path.parent() != Some(sessions_dir.as_path()) => {
                    subjects.push(Subject {
                        agent_id: agent.clone(),
                        kind: SourceKind::Archive,
                        session_id: sid,
                        session_key: m.session_key.clone(),
                        classification: m.classification.clone(),
                        id_source: real_path(&m.source_path).unwrap_or_else(|| path.clone()),
                        path,
                    });
                }
                Some(_) => {} // still in sessions/: verified below
                None => report.unreadable.push(Unreadable {
                    path: m
                        .archive_path
                        .as_deref()
                        .map_or_else(|| archive_dir.join(name), PathBuf::from),
                    problem: format!(
                        "the manifest marks this transcript of {} protected, but neither its \
                         archive nor its source exists",
                        m.session_key.as_deref().unwrap_or("an unnamed session")
                    ),
                }),
            }
        }
        // A sessions.json left beside them (doctor keeps it when validation failed) names each
        // file's key and session id.
        let index = legacy_index(&sessions_dir.join("sessions.json"));
        for path in list_files(&sessions_dir, |n| n.ends_with(".jsonl"))? {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let stem = name.strip_suffix(".jsonl").unwrap_or(name);
            let indexed = index.iter().find(|(_, _, file)| file == name);
            let sid = indexed
                .map(|(_, id, _)| id.clone())
                .unwrap_or_else(|| stem.rsplit('_').next().unwrap_or(stem).to_owned());
            let abs = std::path::absolute(&path).unwrap_or_else(|_| path.clone());
            let m = moves.iter().find(|m| {
                m.source_path.as_deref().map(file_name) == Some(name)
                    && m.agent_id.as_deref().is_none_or(|a| a == agent)
            });
            subjects.push(Subject {
                agent_id: agent.clone(),
                kind: SourceKind::Legacy,
                session_id: sid,
                session_key: m
                    .and_then(|m| m.session_key.clone())
                    .or_else(|| indexed.map(|(key, _, _)| key.clone())),
                classification: m.and_then(|m| m.classification.clone()),
                id_source: abs,
                path,
            });
        }
        if subjects.is_empty() {
            continue;
        }
        let db_path = agent_dir.join("agent").join("openclaw-agent.sqlite");
        if !db_path.is_file() {
            report.not_imported.push(NotImported {
                agent_id: agent.clone(),
                database: db_path,
                transcripts: subjects.len(),
            });
            continue;
        }
        let store = if db_path.is_file() {
            match SqliteStore::open(&db_path) {
                Ok(s) => Some(s),
                Err(e) => {
                    report.unreadable.push(Unreadable {
                        path: db_path.clone(),
                        problem: e.to_string(),
                    });
                    continue;
                }
            }
        } else {
            None
        };
        let keys: BTreeMap<String, String> = store
            .as_ref()
            .and_then(|s| s.sessions().ok())
            .unwrap_or_default()
            .into_iter()
            .map(|s| (s.session_id, s.session_key))
            .collect();
        for subject in subjects {
            let bytes = match crate::io::read_file(&subject.path) {
                Ok(b) => b,
                Err(e) => {
                    report.unreadable.push(Unreadable {
                        path: subject.path,
                        problem: e.to_string(),
                    });
                    continue;
                }
            };
            let stored = match &store {
                None => None,
                Some(s) => match s.lines(&subject.session_id) {
                    Ok(lines) => Some(lines),
                    Err(SqliteError::UnknownSession { .. }) => None,
                    Err(e) => {
                        report.unreadable.push(Unreadable {
                            path: db_path.clone(),
                            problem: e.to_string(),
                        });
                        continue;
                    }
                },
            };
            let mut session = verify_transcript(
                &bytes,
                &subject.session_id,
                subject.id_source.as_os_str().as_encoded_bytes(),
                stored.as_deref(),
            );
            session.agent_id = subject.agent_id;
            session.session_key = subject
                .session_key
                .or_else(|| keys.get(&subject.session_id).cloned());
            session.source = subject.path;
            session.kind = subject.kind;
            session.classification = subject.classification;
            report.sessions.push(session);
        }
    }
    Ok(report)
}

fn head_of(bytes: &[u8], span: LineSpan) -> String {
    let raw = &bytes[span.offset..span.offset + span.len];
    String::from_utf8_lossy(raw).chars().take(120).collect()
}

fn id_of(value: &JsValue) -> Option<String> {
    value
        .get("id")
        .and_then(JsValue::as_str_lossy)
        .map(|s| s.into_owned())
}

/// Compares one transcript's bytes with the rows stored for `session_id` (`None`: the database
/// has no window for it). `id_source` is the path doctor read the file at (for the v1 id
/// prefix, [`v1_id_prefix`]); when the rows carry another consistent prefix, that one is used
/// and [`SessionReport::ids_from_moved_path`] is set. The report's agent, key, source and kind
/// are left for the caller to fill in.
pub fn verify_transcript(
    bytes: &[u8],
    session_id: &str,
    id_source: &[u8],
    stored: Option<&[Vec<u8>]>,
) -> SessionReport {
    let read = read_transcript(bytes);
    let computed = v1_id_prefix(id_source, session_id);
    let mut derivation = derive(&read, session_id, &computed);
    let mut moved = false;
    if derivation.has_v1_ids()
        && let Some(rows) = stored
    {
        let found = rows.iter().find_map(|r| {
            let v = parse_value(r).ok()?;
            let id = id_of(&v)?;
            parse_v1_id(&id).map(|(p, _)| p.to_owned())
        });
        if let Some(prefix) = found
            && prefix != computed
        {
            derivation = derive(&read, session_id, &prefix);
            moved = true;
        }
    }
    let mut report = SessionReport {
        agent_id: String::new(),
        session_key: None,
        session_id: session_id.to_owned(),
        source: PathBuf::new(),
        kind: SourceKind::Archive,
        classification: None,
        verdict: SessionVerdict::Clean,
        stop: read.stop.clone(),
        expected_rows: derivation.stored().count(),
        stored_rows: stored.map_or(0, <[Vec<u8>]>::len),
        rows: Vec::new(),
        lost: Vec::new(),
        unparseable: Vec::new(),
        dropped_by_design: read.falsy.iter().map(|s| s.line).collect(),
        appended_after_import: 0,
        v1_id_prefix: derivation
            .has_v1_ids()
            .then(|| derivation.id_prefix.clone()),
        ids_from_moved_path: moved,
    };
    // Lines no reader parses, and parseable lines after doctor's stop.
    let read_lines: std::collections::HashSet<usize> =
        read.rows.iter().map(|r| r.span.line).collect();
    let falsy_lines: std::collections::HashSet<usize> = read.falsy.iter().map(|s| s.line).collect();
    for (span, fate) in salvage_lines(bytes) {
        match fate {
            LineFate::Blank => {}
            LineFate::Bad { problem, torn } => report.unparseable.push(UnparseableLine {
                span,
                problem,
                torn,
                head: head_of(bytes, span),
            }),
            LineFate::Parseable { truthy } => {
                if read_lines.contains(&span.line) || falsy_lines.contains(&span.line) {
                    continue;
                }
                if !truthy {
                    report.dropped_by_design.push(span.line);
                    continue;
                }
                let reason = match &read.stop {
                    Some(ReadStop::Json { span: at, .. }) => {
                        LostReason::AfterUnparseable { at: at.line }
                    }
                    Some(ReadStop::Utf8 { bad_offset, .. }) => LostReason::AfterInvalidUtf8 {
                        bad_offset: *bad_offset,
                    },
                    None => LostReason::NotInDatabase,
                };
                report.lost.push(lost_line(bytes, span, reason));
            }
        }
    }
    for row in &derivation.rows {
        match &row.dropped {
            Some(Dropped::IdConflict { of, .. }) => {
                let line = derivation.rows[*of].span.line;
                report
                    .lost
                    .push(lost_from_row(bytes, row, LostReason::IdConflict { line }));
            }
            Some(_) => report.dropped_by_design.push(row.span.line),
            None => {}
        }
    }
    match stored {
        None => report.verdict = SessionVerdict::SessionMissing,
        Some(rows) => compare_rows(bytes, &derivation, rows, &mut report),
    }
    report.lost.sort_by_key(|l| l.span.line);
    report.dropped_by_design.sort_unstable();
    report.dropped_by_design.dedup();
    if report.verdict != SessionVerdict::SessionMissing {
        report.verdict = if !report.lost.is_empty() {
            SessionVerdict::Lost
        } else if report
            .rows
            .iter()
            .any(|r| matches!(r.verdict, RowVerdict::Differs { .. }))
        {
            SessionVerdict::Differs
        } else {
            SessionVerdict::Clean
        };
    }
    report
}

fn lost_line(bytes: &[u8], span: LineSpan, reason: LostReason) -> LostLine {
    let raw = &bytes[span.offset..span.offset + span.len];
    let v = parse_value(session_format::js::trim_js_end(
        session_format::js::trim_js_start(raw),
    ))
    .unwrap_or_default();
    LostLine {
        span,
        id: id_of(&v),
        entry_type: v
            .get("type")
            .and_then(JsValue::as_str_lossy)
            .map(|s| s.into_owned()),
        role: v
            .get("message")
            .and_then(|m| m.get("role"))
            .and_then(JsValue::as_str_lossy)
            .map(|s| s.into_owned()),
        reason,
        head: head_of(bytes, span),
    }
}

fn lost_from_row(bytes: &[u8], row: &DerivedRow, reason: LostReason) -> LostLine {
    LostLine {
        span: row.span,
        id: row.id.clone(),
        entry_type: row.entry_type.clone(),
        role: row.role.clone(),
        reason,
        head: head_of(bytes, row.span),
    }
}

fn trimmed_line(bytes: &[u8], span: LineSpan) -> &[u8] {
    let mut raw = &bytes[span.offset..span.offset + span.len];
    if span.offset == 0 {
        raw = raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(raw);
    }
    session_format::js::trim_js_end(session_format::js::trim_js_start(raw))
}

fn compare_rows(bytes: &[u8], d: &Derivation, rows: &[Vec<u8>], report: &mut SessionReport) {
    let expected: Vec<&DerivedRow> = d.stored().collect();
    let (mut i, mut j) = (0, 0);
    while i < expected.len() && j < rows.len() {
        let exp = expected[i];
        let got = &rows[j];
        if got.as_slice() == exp.text.as_bytes() {
            let raw = &bytes[exp.span.offset..exp.span.offset + exp.span.len];
            let verdict =
                if trimmed_line(bytes, exp.span) == got.as_slice() && raw == got.as_slice() {
                    RowVerdict::Verbatim
                } else {
                    RowVerdict::Reserialised {
                        changes: line_changes(raw),
                        transforms: exp.transforms.clone(),
                    }
                };
            report.rows.push(RowCheck {
                seq: j,
                span: exp.span,
                id: exp.id.clone(),
                verdict,
            });
            i += 1;
            j += 1;
            continue;
        }
        let got_value = parse_value(got).ok();
        let exp_value = parse_value(exp.text.as_bytes()).ok();
        if got_value.is_some() && got_value == exp_value {
            report.rows.push(RowCheck {
                seq: j,
                span: exp.span,
                id: exp.id.clone(),
                verdict: RowVerdict::Equivalent,
            });
            i += 1;
            j += 1;
            continue;
        }
        let got_id = got_value.as_ref().and_then(id_of);
        let same_id = got_id.is_some() && got_id == exp.id;
        let later = (!same_id)
            .then(|| {
                (i + 1..expected.len()).find(|&k| expected[k].text.as_bytes() == got.as_slice())
            })
            .flatten();
        if let Some(k) = later {
            for missing in &expected[i..k] {
                report
                    .lost
                    .push(lost_from_row(bytes, missing, LostReason::NotInDatabase));
            }
            i = k;
            continue;
        }
        report.rows.push(RowCheck {
            seq: j,
            span: exp.span,
            id: exp.id.clone(),
            verdict: RowVerdict::Differs {
                expected: exp.text.clone(),
                stored: String::from_utf8_lossy(got).into_owned(),
            },
        });
        i += 1;
        j += 1;
    }
    for missing in &expected[i..] {
        report
            .lost
            .push(lost_from_row(bytes, missing, LostReason::NotInDatabase));
    }
    report.appended_after_import = rows.len() - j;
}

/// The salvage of one transcript: its parseable lines, byte for byte, in file order.
#[derive(Clone, Debug, PartialEq)]
pub struct Salvage {
    /// The bytes to write: each parseable line followed by `\n`.
    pub bytes: Vec<u8>,
    /// The lines kept.
    pub kept: Vec<LineSpan>,
    /// The lines left out, with why (a torn tail included).
    pub left_out: Vec<UnparseableLine>,
}

/// Every parseable line of `bytes`, byte for byte in file order, each ended by `\n`; the
/// unparseable ones (invalid UTF-8, not JSON, a torn tail) listed with their line and offset;
/// blank lines skipped (§4.7.4).
pub fn salvage(bytes: &[u8]) -> Salvage {
    let mut out = Salvage {
        bytes: Vec::with_capacity(bytes.len() + 1),
        kept: Vec::new(),
        left_out: Vec::new(),
    };
    for (span, fate) in salvage_lines(bytes) {
        match fate {
            LineFate::Blank => {}
            LineFate::Parseable { .. } => {
                out.bytes
                    .extend_from_slice(&bytes[span.offset..span.offset + span.len]);
                out.bytes.push(b'\n');
                out.kept.push(span);
            }
            LineFate::Bad { problem, torn } => out.left_out.push(UnparseableLine {
                span,
                problem,
                torn,
                head: head_of(bytes, span),
            }),
        }
    }
    out
}
