//! Addressing sessions the same way in every subcommand: a file path; or `--agent ID` →
//! `<root>/agents/<ID>/sessions/` (`--root` defaulting to `$OPENCLAW_STATE_DIR`, else
//! `~/.openclaw`); or `--dir DIR`; or `--pi` → `$PI_CODING_AGENT_DIR/sessions` (else
//! `~/.pi/agent/sessions`). A sessions directory always means the `*.jsonl` files directly in it
//! and in its immediate sub-directories (pi keeps one sub-directory per working directory).
//! `--session NAME` picks one of them by file name, by the part of the file name after its first
//! `_`, or by session id (the header's `id`, in full or a unique prefix of at least 8
//! characters). Unknown agents and sessions are errors that list close matches.
//!
//! With a Redis backend (`--backend redis://…`, [`crate::backend`]) the same flags name
//! namespaces and keys: every path is made absolute lexically, a sessions directory is the
//! namespace of that path (it exists when it or a namespace below it holds a session), its
//! "immediate sub-directories" are the namespaces directly below it, and `<root>/agents/<ID>/`
//! is an agent when `<root>/agents/<ID>/sessions` holds sessions.

use std::path::{Path, PathBuf};

use anyhow::bail;
use clap::Args;

use crate::backend::StoreBackend;
use crate::ctx::Ctx;
use crate::outcome::UsageError;
use crate::{fsx, text};

/// The environment variable naming the OpenClaw state directory.
pub(crate) const STATE_DIR_ENV: &str = "OPENCLAW_STATE_DIR";

/// The environment variable naming pi's agent directory.
pub(crate) const PI_DIR_ENV: &str = "PI_CODING_AGENT_DIR";

/// Shortest session-id prefix `--session` accepts.
pub(crate) const MIN_ID_PREFIX: usize = 8;

/// Refuses a `--session NAME` that is not a valid path component (session-store's one name
/// validator, [`session_store::validate_name`]): a usage error naming the value and the
/// rule, e.g. `invalid session name "../../../x": contains '/'`. Checked before anything is
/// read, in every subcommand.
pub(crate) fn check_session_name(name: &str) -> Result<(), UsageError> {
    session_store::validate_name(session_store::NameKind::SessionName, name)
        .map_err(|e| UsageError::new(e.to_string()))
}

/// Refuses an `--agent ID` that is not a valid path component (as [`check_session_name`]):
/// `invalid agent id "../x": contains '/'`.
pub(crate) fn check_agent_id(agent: &str) -> Result<(), UsageError> {
    session_store::validate_name(session_store::NameKind::AgentId, agent)
        .map_err(|e| UsageError::new(e.to_string()))
}

/// Where a store is: `--root`, `--agent`, `--dir`, `--pi`.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct Locator {
    /// The OpenClaw state directory, holding `agents/<ID>/sessions/` [default:
    /// $OPENCLAW_STATE_DIR, else ~/.openclaw].
    #[arg(long, value_name = "DIR")]
    pub(crate) root: Option<PathBuf>,
    /// The agent whose sessions to use: `<root>/agents/<ID>/sessions/` and its immediate
    /// sub-directories.
    #[arg(long, value_name = "ID", conflicts_with_all = ["dir", "pi"])]
    pub(crate) agent: Option<String>,
    /// A sessions directory to use instead of an agent's: the `*.jsonl` files in DIR and in its
    /// immediate sub-directories (any layout, e.g. pi's `~/.pi/agent/sessions/`).
    #[arg(long, value_name = "DIR", conflicts_with = "pi")]
    pub(crate) dir: Option<PathBuf>,
    /// Use pi's sessions: `$PI_CODING_AGENT_DIR/sessions/` (else `~/.pi/agent/sessions/`), one
    /// sub-directory `--<cwd>--` per working directory.
    #[arg(long, conflicts_with = "root")]
    pub(crate) pi: bool,
}

impl Locator {
    /// True when the locator names a sessions directory (not a whole OpenClaw store).
    pub(crate) fn names_dir(&self) -> bool {
        self.agent.is_some() || self.dir.is_some() || self.pi
    }
}

/// [`Locator`] plus `--session`.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct SessionSelector {
    #[command(flatten)]
    pub(crate) locator: Locator,
    /// The session: its file name without `.jsonl` (in the sessions directory or one of its
    /// immediate sub-directories), the part of the file name after the first `_` (e.g. the user
    /// id of `telegram_123456.jsonl`), or its session id (in full or a unique prefix of at least
    /// 8 characters: the ID column of `sessions list` for plain directories; on an OpenClaw
    /// store, `sessionId` in `sessions list --json` or the file name of the PATH column). On an
    /// OpenClaw store (a directory holding sessions.json) also a session key, in full
    /// (`agent:<id>:telegram:direct:123`) or the part after `agent:<id>:` (e.g. `main`).
    #[arg(long, value_name = "NAME")]
    pub(crate) session: Option<String>,
}

fn home() -> PathBuf {
    std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from)
}

/// `~` and `~/…` expanded with `$HOME`.
pub(crate) fn expand_tilde(p: &Path) -> PathBuf {
    match p.to_str() {
        Some("~") => home(),
        Some(s) if s.starts_with("~/") => home().join(&s[2..]),
        _ => p.to_path_buf(),
    }
}

/// The state directory: `--root`, else `$OPENCLAW_STATE_DIR`, else `~/.openclaw`.
pub(crate) fn state_root(flag: Option<&Path>) -> PathBuf {
    if let Some(p) = flag {
        return expand_tilde(p);
    }
    match std::env::var_os(STATE_DIR_ENV) {
        Some(v) if !v.is_empty() => expand_tilde(Path::new(&v)),
        _ => home().join(".openclaw"),
    }
}

/// Where the state directory came from, for messages.
fn state_root_origin(flag: Option<&Path>) -> &'static str {
    if flag.is_some() {
        "the directory was given by --root"
    } else if std::env::var_os(STATE_DIR_ENV).is_some_and(|v| !v.is_empty()) {
        "the directory came from $OPENCLAW_STATE_DIR"
    } else {
        "--root was not given and $OPENCLAW_STATE_DIR is not set, so the default ~/.openclaw was \
         used"
    }
}

/// pi's sessions directory: `$PI_CODING_AGENT_DIR/sessions`, else `~/.pi/agent/sessions`.
pub(crate) fn pi_sessions_dir() -> PathBuf {
    let agent = match std::env::var_os(PI_DIR_ENV) {
        Some(v) if !v.is_empty() => expand_tilde(Path::new(&v)),
        _ => home().join(".pi").join("agent"),
    };
    agent.join("sessions")
}

/// The error for a state directory without `agents/`.
pub(crate) fn no_store_error(ctx: &Ctx, root: &Path, flag: Option<&Path>) -> UsageError {
    if let Some(r) = ctx.store() {
        return UsageError::new(format!(
            "no OpenClaw store at {} in {} (no sessions under {}/<agent>/sessions/; {}); use \
             --root DIR (the state directory the gateways use), or --dir DIR for any other \
             namespace",
            text::path(root),
            r.describe(),
            text::path(&root.join("agents")),
            state_root_origin(flag),
        ));
    }
    if root
        .join(session_semantics::openclaw_store::STORE_FILE_NAME)
        .is_file()
    {
        return UsageError::new(format!(
            "{} is a sessions directory (it holds sessions.json), not an OpenClaw state \
             directory: use --dir {}",
            text::path(root),
            text::shell_quote(&root.display().to_string())
        ));
    }
    let mut msg = format!(
        "no OpenClaw store at {} (looked for {}/<agent>/sessions/; {}); use --root DIR",
        text::path(root),
        text::path(&root.join("agents")),
        state_root_origin(flag),
    );
    let pi = pi_sessions_dir();
    if pi.is_dir() {
        msg.push_str(&format!(
            ", or --pi for pi's sessions (found in {})",
            text::path(&pi)
        ));
    } else {
        msg.push_str(", --pi for pi's sessions (~/.pi/agent/sessions)");
    }
    msg.push_str(", or --dir DIR for any other directory of *.jsonl files");
    UsageError::new(msg)
}

/// The sorted names of the sub-directories of `dir` (empty when it cannot be read).
fn subdirs(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The agents of a store (`<root>/agents/*`), sorted (with a Redis backend: the agents whose
/// `sessions` namespace holds sessions).
pub(crate) fn agents(ctx: &Ctx, root: &Path) -> Vec<String> {
    match ctx.store() {
        Some(r) => r.agents(root).unwrap_or_default(),
        None => subdirs(&root.join("agents")),
    }
}

/// The state directory of `--root` / `$OPENCLAW_STATE_DIR` / `~/.openclaw`, absolute with a
/// Redis backend (the key paths of its namespaces).
pub(crate) fn store_root(ctx: &Ctx, flag: Option<&Path>) -> PathBuf {
    let root = state_root(flag);
    match ctx.store() {
        Some(_) => StoreBackend::key(&root),
        None => root,
    }
}

/// True when `dir` is a directory (files) or holds sessions (Redis: the namespace or one below
/// it).
pub(crate) fn dir_exists(ctx: &Ctx, dir: &Path) -> anyhow::Result<bool> {
    match ctx.store() {
        Some(r) => r.dir_exists(dir),
        None => Ok(dir.is_dir()),
    }
}

/// [`sessions_dir`] in a Redis store: the namespace the locator names, when it holds sessions.
fn redis_sessions_dir(
    ctx: &Ctx,
    r: &StoreBackend,
    loc: &Locator,
) -> anyhow::Result<Option<PathBuf>> {
    let dir = if loc.pi {
        StoreBackend::key(&pi_sessions_dir())
    } else if let Some(d) = &loc.dir {
        StoreBackend::key(&expand_tilde(d))
    } else if let Some(agent) = &loc.agent
        && let Some(db) = r.named_sqlite()
    {
        // `--backend sqlite:PATH`: the agent is the database's (schema_meta), wherever it is.
        match db.agent.as_deref() {
            None => return Ok(Some(db.storage.sessions_dir().to_path_buf())),
            Some(a) if a == agent => return Ok(Some(db.storage.sessions_dir().to_path_buf())),
            Some(a) => bail!(UsageError::new(format!(
                "unknown agent {agent:?}: {} holds the sessions of agent {:?} (its schema_meta); \
                 use --agent {} or leave --agent out",
                r.describe(),
                text::safe(a),
                text::shell_quote(a)
            ))),
        }
    } else if let Some(agent) = &loc.agent {
        let root = store_root(ctx, loc.root.as_deref());
        let dir = r.agent_dir(&root, agent);
        if r.dir_exists(&dir)? {
            return Ok(Some(dir));
        }
        let known = r.agents(&root)?;
        if known.is_empty() {
            bail!(no_store_error(ctx, &root, loc.root.as_deref()));
        }
        bail!(UsageError::new(format!(
            "unknown agent {agent:?}: no sessions under {} in {}{}",
            text::path(&dir),
            r.describe(),
            suggestion(agent, &known, "agent")
        )));
    } else {
        return Ok(None);
    };
    if r.dir_exists(&dir)? {
        return Ok(Some(dir));
    }
    let known: Vec<String> = r
        .namespaces()?
        .iter()
        .map(|n| n.display().to_string())
        .collect();
    bail!(UsageError::new(format!(
        "no sessions under {} in {}{}",
        text::path(&dir),
        r.describe(),
        suggestion(&dir.display().to_string(), &known, "namespace")
    )))
}

/// Up to five candidates close to `want`: containing it (or contained in it) first, then by
/// Jaro-Winkler similarity.
pub(crate) fn close_matches<'a>(want: &str, candidates: &'a [String]) -> Vec<&'a str> {
    let w = want.to_lowercase();
    let mut scored: Vec<(f64, &str)> = candidates
        .iter()
        .map(|c| {
            let l = c.to_lowercase();
            let mut score = strsim::jaro_winkler(&w, &l);
            if !w.is_empty() && (l.contains(&w) || w.contains(&l)) {
                score += 1.0;
            }
            (score, c.as_str())
        })
        .filter(|(s, _)| *s >= 0.7)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(5).map(|(_, c)| c).collect()
}

/// `"; did you mean: a, b?"` or `""`, plus what exists.
fn suggestion(want: &str, candidates: &[String], what: &str) -> String {
    let close = close_matches(want, candidates);
    if !close.is_empty() {
        let close: Vec<String> = close.iter().map(|c| text::safe(c).into_owned()).collect();
        return format!("; did you mean: {}?", close.join(", "));
    }
    if candidates.is_empty() {
        return format!("; there are no {what}s");
    }
    let mut shown: Vec<String> = candidates
        .iter()
        .take(10)
        .map(|c| text::safe(c).into_owned())
        .collect();
    if candidates.len() > 10 {
        shown.push("…".to_owned());
    }
    format!("; {what}s: {}", shown.join(", "))
}

/// The sessions directory named by a locator, or `None` when it names none. An `--agent` that
/// is not a valid path component is refused first ([`check_agent_id`]).
pub(crate) fn sessions_dir(ctx: &Ctx, loc: &Locator) -> anyhow::Result<Option<PathBuf>> {
    if let Some(agent) = &loc.agent {
        check_agent_id(agent)?;
    }
    if let Some(r) = ctx.store() {
        return redis_sessions_dir(ctx, r, loc);
    }
    if loc.pi {
        let dir = pi_sessions_dir();
        if !dir.is_dir() {
            bail!(UsageError::new(format!(
                "no pi sessions directory at {} (${PI_DIR_ENV} {}); pi keeps its sessions in \
                 <agent dir>/sessions/--<cwd>--/",
                text::path(&dir),
                if std::env::var_os(PI_DIR_ENV).is_some_and(|v| !v.is_empty()) {
                    "is set"
                } else {
                    "is not set, so ~/.pi/agent was used"
                }
            )));
        }
        return Ok(Some(dir));
    }
    if let Some(dir) = &loc.dir {
        let dir = expand_tilde(dir);
        match std::fs::metadata(&dir) {
            Ok(m) if m.is_dir() => return Ok(Some(dir)),
            Ok(m) => bail!(UsageError::new(format!(
                "--dir {} is not a directory (it is a {}); pass a session file without --dir, or \
                 a directory of *.jsonl files",
                text::path(&dir),
                fsx::type_name(&m.file_type())
            ))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(UsageError::new(format!(
                "sessions directory {} does not exist",
                text::path(&dir)
            ))),
            Err(e) => bail!(UsageError::new(format!(
                "cannot read sessions directory {}: {e}",
                text::path(&dir)
            ))),
        }
    }
    let Some(agent) = &loc.agent else {
        return Ok(None);
    };
    let root = state_root(loc.root.as_deref());
    if !root.join("agents").is_dir() {
        bail!(no_store_error(ctx, &root, loc.root.as_deref()));
    }
    let agent_dir = root.join("agents").join(agent);
    let dir = agent_dir.join("sessions");
    if dir.is_dir() {
        return Ok(Some(dir));
    }
    if agent_dir.is_dir() {
        bail!(UsageError::new(format!(
            "agent {:?} has no sessions directory: {} does not exist",
            agent,
            text::path(&dir)
        )));
    }
    let known = agents(ctx, &root);
    bail!(UsageError::new(format!(
        "unknown agent {agent:?}: {} does not exist{}",
        text::path(&agent_dir),
        suggestion(agent, &known, "agent")
    )))
}

/// [`sessions_dir`] for `--session NAME`: with `--backend sqlite:PATH` and no
/// `--agent`/`--dir`/`--pi`, the database's sessions directory (its one agent).
pub(crate) fn session_dir(ctx: &Ctx, loc: &Locator) -> anyhow::Result<Option<PathBuf>> {
    if let Some(dir) = sessions_dir(ctx, loc)? {
        return Ok(Some(dir));
    }
    Ok(ctx
        .store()
        .and_then(StoreBackend::named_sqlite)
        .map(|db| db.storage.sessions_dir().to_path_buf()))
}

/// The store root of a write command (`repair`; `archive` and `clear` reach the same rule
/// through [`session_semantics::StoreLayout::canonical_sessions_dir`], which this calls for
/// `--agent`), so that every write command draws the line in one place: nothing outside it is
/// rewritten, backed up, locked, moved or deleted (README, "Links out of the store").
/// - `--agent ID`: the agent's sessions directory, resolved with `realpath`, which must lie
///   inside the resolved state directory (an `agents/<ID>` or `sessions` link that leads out
///   of it is refused, naming both paths, exactly as `archive` and `clear` refuse it);
/// - `--dir DIR`, `--pi`: that sessions directory, resolved;
/// - a FILE: the directory holding it, resolved.
///
/// A session found below the root (pi's per-directory sub-directories) and a link there that
/// leads back into the root are inside it. With a Redis backend, the namespace path as given.
///
/// # Errors
/// The `--agent` refusal ([`session_semantics::layout::PathError::OutsideStore`]) or a failure
/// to resolve the directory; the locator's own errors ([`sessions_dir`]).
pub(crate) fn write_root(ctx: &Ctx, file: Option<&Path>, loc: &Locator) -> anyhow::Result<PathBuf> {
    if let Some(f) = file {
        return Ok(match ctx.store() {
            Some(_) => session_path(ctx, f)
                .parent()
                .map_or_else(PathBuf::new, Path::to_path_buf),
            None => session_store::identity::store_root_of(&session_path(ctx, f)),
        });
    }
    let Some(dir) = sessions_dir(ctx, loc)? else {
        bail!(UsageError::new(
            "--session needs --agent ID (or --dir DIR, or --pi) to say where the session is"
        ));
    };
    if ctx.store().is_some() {
        return Ok(dir);
    }
    if let Some(agent) = &loc.agent {
        let layout = session_semantics::StoreLayout::new(state_root(loc.root.as_deref()));
        return Ok(layout.canonical_sessions_dir(agent)?);
    }
    std::fs::canonicalize(&dir)
        .map_err(|e| anyhow::anyhow!("cannot resolve {}: {e}", text::path(&dir)))
}

/// The `*.jsonl` entries of a sessions directory.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    /// `*.jsonl` names directly in the directory, then in each immediate sub-directory (each
    /// directory sorted by name); whatever kind of file they are.
    pub(crate) files: Vec<PathBuf>,
    /// For each of `files` (same index), whether its directory entry is a symlink (the
    /// entry's type: no `lstat`); empty when not known (a Redis listing).
    pub(crate) links: Vec<bool>,
    /// Directories that could not be read, and why.
    pub(crate) unreadable: Vec<(PathBuf, String)>,
}

/// The `*.jsonl` entries of `dir`, sorted by name (the order of their paths: the names share
/// the directory), into `l.files` with their symlink flags into `l.links`.
fn jsonl_in(dir: &Path, l: &mut Listing) -> std::io::Result<()> {
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let name = e.file_name();
        if name.to_string_lossy().ends_with(".jsonl") {
            let link = e.file_type().is_ok_and(|t| t.is_symlink());
            found.push((name, link));
        }
    }
    found.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    l.files.reserve(found.len());
    l.links.reserve(found.len());
    for (name, link) in found {
        l.files.push(dir.join(name));
        l.links.push(link);
    }
    Ok(())
}

/// The `*.jsonl` files of a sessions directory and of its immediate sub-directories (not
/// followed: symlinked sub-directories; not entered: sub-directories named `*.jsonl`, which
/// are listed as files so that they are reported).
pub(crate) fn session_files(ctx: &Ctx, dir: &Path) -> Listing {
    if let Some(r) = ctx.store() {
        return redis_session_files(r, dir);
    }
    let mut l = Listing::default();
    if let Err(e) = jsonl_in(dir, &mut l) {
        l.unreadable
            .push((dir.to_path_buf(), format!("cannot read directory: {e}")));
        return l;
    }
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .filter(|e| !e.file_name().to_string_lossy().ends_with(".jsonl"))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    for d in dirs {
        if let Err(e) = jsonl_in(&d, &mut l) {
            l.unreadable
                .push((d, format!("cannot read directory: {e}")));
        }
    }
    l
}

/// [`session_files`] of a Redis namespace and the namespaces directly below it.
fn redis_session_files(r: &StoreBackend, dir: &Path) -> Listing {
    let mut l = Listing::default();
    let subs = match r.sub_namespaces(dir) {
        Ok(subs) => subs,
        Err(e) => {
            l.unreadable
                .push((dir.to_path_buf(), crate::output::error_text(&e)));
            return l;
        }
    };
    let subs = subs
        .into_iter()
        .filter(|d| !d.to_string_lossy().ends_with(".jsonl"));
    for d in std::iter::once(dir.to_path_buf()).chain(subs) {
        match r.sessions_in(&d) {
            Ok(files) => l.files.extend(files),
            Err(e) => l.unreadable.push((d, crate::output::error_text(&e))),
        }
    }
    l
}

/// True when something is stored at `p` (a file, even a dangling symlink; or a Redis session).
fn present(ctx: &Ctx, p: &Path) -> bool {
    match ctx.store() {
        Some(r) => r.exists(p).unwrap_or(false),
        None => std::fs::symlink_metadata(p).is_ok(),
    }
}

/// The file name without `.jsonl`.
fn stem_of(p: &Path) -> String {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.strip_suffix(".jsonl").unwrap_or(&name).to_owned()
}

/// The session id in a file's header: its first line only (64 KiB at most, as the reference
/// sniffs headers), and only for regular files.
pub(crate) fn header_id(ctx: &Ctx, p: &Path) -> Option<String> {
    let line = match ctx.store() {
        Some(r) => r.read_head(p)?,
        None => {
            if !matches!(fsx::probe(p), fsx::Found::Regular) {
                return None;
            }
            session_store::io::read_first_line(p).ok()??
        }
    };
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&line);
    let mut scanner = session_format::json::EnvelopeScanner::new();
    let env = scanner.scan(line).ok()?;
    if !session_format::row::is_readable_header(&env) {
        return None;
    }
    env.id.as_js_str().map(|s| s.to_str_lossy().into_owned())
}

fn relative(dir: &Path, p: &Path) -> String {
    text::path(p.strip_prefix(dir).unwrap_or(p))
}

fn one_of(
    ctx: &Ctx,
    dir: &Path,
    name: &str,
    hits: Vec<PathBuf>,
    how: &str,
) -> anyhow::Result<PathBuf> {
    // Names of one file (the file and symlinks to it) are one session: its own name is taken.
    let hits = if hits.len() > 1 && ctx.store().is_none() {
        session_store::identity::alias_groups(&hits, dir)
            .iter()
            .map(|g| hits[g.primary].clone())
            .collect()
    } else {
        hits
    };
    match hits.len() {
        1 => Ok(hits.into_iter().next().unwrap_or_default()),
        _ => {
            let names: Vec<String> = hits.iter().take(10).map(|p| relative(dir, p)).collect();
            bail!(UsageError::new(format!(
                "session {name:?} is ambiguous in {} ({how}): {}",
                text::path(dir),
                names.join(", ")
            )))
        }
    }
}

/// Resolves `--session NAME` in `dir` (and its immediate sub-directories), in this order:
/// `DIR/NAME.jsonl` (a trailing `.jsonl` in NAME is ignored; NAME is one path component,
/// [`check_session_name`], so it never leaves `dir`);
/// a file named `NAME.jsonl` in a sub-directory; the file whose name after its first `_` is NAME
/// (the session id of `<timestamp>_<uuid>.jsonl`, the user id of `<channel>_<userId>.jsonl`);
/// the file whose header id is NAME; the file whose header id starts with NAME (8 characters at
/// least). Each step must find exactly one file. No guessing beyond that: a prefix of another
/// user's id must not open their session.
pub(crate) fn resolve_session(ctx: &Ctx, dir: &Path, name: &str) -> anyhow::Result<PathBuf> {
    resolve_among(ctx, dir, name, || session_files(ctx, dir))
}

/// [`resolve_session`] among the `*.jsonl` files directly in `dir` only (not its
/// sub-directories, such as `archive/`), for commands that act on those alone (`clear`).
pub(crate) fn resolve_direct_session(ctx: &Ctx, dir: &Path, name: &str) -> anyhow::Result<PathBuf> {
    resolve_among(ctx, dir, name, || {
        let mut l = Listing::default();
        if let Err(e) = jsonl_in(dir, &mut l) {
            l.unreadable
                .push((dir.to_path_buf(), format!("cannot read directory: {e}")));
        }
        l
    })
}

fn resolve_among(
    ctx: &Ctx,
    dir: &Path,
    name: &str,
    list: impl FnOnce() -> Listing,
) -> anyhow::Result<PathBuf> {
    check_session_name(name)?;
    let stem = name.strip_suffix(".jsonl").unwrap_or(name);
    if stem.is_empty() {
        bail!(UsageError::new("--session needs a name"));
    }
    let exact = dir.join(format!("{stem}.jsonl"));
    if present(ctx, &exact) {
        return Ok(exact);
    }
    if let Some(hit) = lookup_key(ctx, dir, name)? {
        return hit.existing_transcript(ctx);
    }
    let listing = list();
    let by_name: Vec<PathBuf> = listing
        .files
        .iter()
        .filter(|p| stem_of(p) == stem)
        .cloned()
        .collect();
    if !by_name.is_empty() {
        return one_of(ctx, dir, name, by_name, "several files have that name");
    }
    let by_suffix: Vec<PathBuf> = listing
        .files
        .iter()
        .filter(|p| {
            stem_of(p)
                .split_once('_')
                .is_some_and(|(_, rest)| rest == stem)
        })
        .cloned()
        .collect();
    if !by_suffix.is_empty() {
        return one_of(ctx, dir, name, by_suffix, "several file names end with it");
    }
    let ids: Vec<(PathBuf, String)> = listing
        .files
        .iter()
        .filter_map(|p| header_id(ctx, p).map(|id| (p.clone(), id)))
        .collect();
    let by_id: Vec<PathBuf> = ids
        .iter()
        .filter(|(_, id)| id == stem)
        .map(|(p, _)| p.clone())
        .collect();
    if !by_id.is_empty() {
        return one_of(ctx, dir, name, by_id, "several files have that session id");
    }
    if stem.chars().count() >= MIN_ID_PREFIX {
        let by_prefix: Vec<PathBuf> = ids
            .iter()
            .filter(|(_, id)| id.starts_with(stem))
            .map(|(p, _)| p.clone())
            .collect();
        if !by_prefix.is_empty() {
            return one_of(
                ctx,
                dir,
                name,
                by_prefix,
                "several session ids start with it",
            );
        }
    }
    let short_prefix =
        stem.chars().count() < MIN_ID_PREFIX && ids.iter().any(|(_, id)| id.starts_with(stem));
    let mut known: Vec<String> = listing.files.iter().map(|p| stem_of(p)).collect();
    known.extend(ids.into_iter().map(|(_, id)| id));
    known.sort();
    known.dedup();
    if let Some(note) = store_id_note(ctx, dir, stem) {
        bail!(UsageError::new(note));
    }
    if let Some(r) = ctx.store()
        && r.sqlite_db_of_dir(dir).is_some()
    {
        // A SQLite store's sessions are addressed by key first: the close matches among its
        // keys and session ids, else its keys.
        let keys: Vec<String> = match load_store(ctx, dir) {
            Some(Ok(store)) => store
                .entries()
                .map(|(k, _)| k.to_str_lossy().into_owned())
                .collect(),
            _ => Vec::new(),
        };
        let mut candidates = keys.clone();
        candidates.extend(known.iter().cloned());
        // A key also matches by its part after `agent:<id>:` (`dm:alice` for `alice`).
        let short = |k: &str| -> String {
            k.strip_prefix("agent:")
                .and_then(|r| r.split_once(':'))
                .map_or_else(|| k.to_owned(), |(_, rest)| rest.to_owned())
        };
        let shorts: Vec<String> = keys.iter().map(|k| short(k)).collect();
        let mut close: Vec<String> = close_matches(stem, &shorts)
            .into_iter()
            .filter_map(|s| keys.iter().find(|k| short(k) == s).cloned())
            .collect();
        for c in close_matches(stem, &candidates) {
            if close.len() < 5 && !close.iter().any(|k| k == c) {
                close.push(c.to_owned());
            }
        }
        let hint = if !close.is_empty() {
            let shown: Vec<String> = close.iter().map(|c| text::safe(c).into_owned()).collect();
            format!("; did you mean: {}?", shown.join(", "))
        } else if !keys.is_empty() {
            suggestion(stem, &keys, "key")
        } else {
            suggestion(stem, &candidates, "session")
        };
        bail!(UsageError::new(format!(
            "unknown session {name:?} in {}{}{}",
            store_name(ctx, dir),
            if short_prefix {
                " (a session id prefix needs at least 8 characters)"
            } else {
                ""
            },
            hint
        )));
    }
    bail!(UsageError::new(format!(
        "unknown session {name:?} in {}{}{}",
        text::path(dir),
        if short_prefix {
            " (a session id prefix needs at least 8 characters)"
        } else {
            ""
        },
        suggestion(stem, &known, "session")
    )))
}

/// Why a session id that names no transcript is still known to the OpenClaw store of `dir`:
/// a `sessions.json` row whose `sessionId` is `id` while its transcript does not exist, or a
/// `.reset.`/`.deleted.` archive counted under `id` (openclaw-store.md R1.13). `None` when
/// neither (or `dir` holds no readable store).
fn store_id_note(ctx: &Ctx, dir: &Path, id: &str) -> Option<String> {
    use session_semantics::openclaw_store::{ArtifactKind, STORE_FILE_NAME, classify};
    let store_path = dir.join(STORE_FILE_NAME);
    if ctx.store().is_none() && !store_path.is_file() {
        return None;
    }
    let shown_store = store_name(ctx, dir);
    if let Some(Ok(store)) = load_store(ctx, dir) {
        for (k, e) in store.entries() {
            if e.session_id() != Some(id) {
                continue;
            }
            let key = k.to_str_lossy().into_owned();
            let transcript = store.transcript_of(&key);
            if transcript.as_ref().is_some_and(|p| present(ctx, p)) {
                continue;
            }
            return Some(match transcript {
                Some(p) => format!(
                    "session {:?}: the row {:?} of {} names that session id, and its transcript \
                     {} does not exist",
                    text::safe(id),
                    text::safe(&key),
                    shown_store,
                    text::path(&p)
                ),
                None => format!(
                    "session {:?}: the row {:?} of {} names that session id, and it names no \
                     transcript file",
                    text::safe(id),
                    text::safe(&key),
                    shown_store
                ),
            });
        }
    }
    if ctx.store().is_some() {
        // Archives are files beside the transcripts; a store backend keeps none there.
        return None;
    }
    let mut archives: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            matches!(classify(n), ArtifactKind::Archive { usage_session_id: Some(u), .. } if u == id)
        })
        .collect();
    archives.sort();
    let newest = archives.last()?;
    Some(format!(
        "session {:?} has no live transcript in {}: it is archived as {} (`sessions list \
         --archived` lists the archives; `sessions tree {}` reads it)",
        text::safe(id),
        text::path(dir),
        text::safe(newest),
        text::shell_quote(&dir.join(newest).display().to_string())
    ))
}

/// A row of `sessions.json` that a `--session` value names (see [`lookup_key`]).
#[derive(Debug, Clone)]
pub(crate) struct KeyHit {
    /// The stored key of the row.
    pub(crate) key: String,
    /// Its transcript (`SessionStore::transcript_of`): `None` when its `sessionId` names no
    /// file.
    pub(crate) transcript: Option<PathBuf>,
    /// The store for messages: the file, or the SQLite database it was read from.
    pub(crate) shown_store: String,
}

impl KeyHit {
    /// The transcript, which must exist: a row whose transcript is missing is an error
    /// naming the key and the path.
    pub(crate) fn existing_transcript(self, ctx: &Ctx) -> anyhow::Result<PathBuf> {
        match self.transcript {
            Some(p) if present(ctx, &p) => Ok(p),
            Some(p) => bail!(UsageError::new(format!(
                "session key {:?} (in {}) names the transcript {}, which does not exist",
                text::safe(&self.key),
                self.shown_store,
                text::path(&p)
            ))),
            None => bail!(UsageError::new(format!(
                "session key {:?} (in {}) has no sessionId that names a transcript",
                text::safe(&self.key),
                self.shown_store
            ))),
        }
    }
}

/// The OpenClaw store (`sessions.json`) of the sessions directory `dir`, `None` when there is
/// none: the file `dir/sessions.json` (loaded when anything is there); with a SQLite backend
/// the index of the database whose namespace `dir` is, read-only in memory
/// ([`SessionStore::from_bytes_read_only`](session_semantics::openclaw_store::SessionStore::from_bytes_read_only));
/// with Redis, none.
pub(crate) fn load_store(
    ctx: &Ctx,
    dir: &Path,
) -> Option<anyhow::Result<session_semantics::openclaw_store::SessionStore>> {
    use session_semantics::openclaw_store::{STORE_FILE_NAME, SessionStore};
    let path = dir.join(STORE_FILE_NAME);
    match ctx.store() {
        Some(r) => {
            let bytes = match r.store_index(dir)? {
                Ok(b) => b,
                Err(e) => return Some(Err(e)),
            };
            Some(
                SessionStore::from_bytes_read_only(&path, bytes, &r.describe())
                    .map_err(anyhow::Error::from),
            )
        }
        None => {
            std::fs::symlink_metadata(&path).ok()?;
            Some(SessionStore::load(&path).map_err(anyhow::Error::from))
        }
    }
}

/// How messages name the store of `dir`: the `sessions.json` file, or the SQLite database.
pub(crate) fn store_name(ctx: &Ctx, dir: &Path) -> String {
    match ctx.store().and_then(|r| r.sqlite_db_of_dir(dir)) {
        Some(db) => format!("the SQLite store {}", text::path(db.storage.db_path())),
        None => text::path(&dir.join(session_semantics::openclaw_store::STORE_FILE_NAME)),
    }
}

/// The agent id of a sessions directory shaped `…/agents/<id>/sessions`.
fn agent_of_dir(dir: &Path) -> Option<String> {
    let agent_dir = dir.parent()?;
    (dir.file_name()? == "sessions" && agent_dir.parent()?.file_name()? == "agents")
        .then(|| {
            agent_dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .flatten()
}

/// Looks `name` up as a session key in `dir/sessions.json` (OpenClaw's store,
/// openclaw-store.md §2.6): a full key (`agent:main:telegram:direct:123`, resolved as the
/// reference resolves keys, R2.17–R2.18), or the part after `agent:<id>:` (`main`,
/// `telegram:direct:123`; `<id>` the directory's agent, `…/agents/<id>/sessions`, else any
/// stored key's agent). A stored key spelled exactly as given wins over its case variants;
/// without one, every stored key that normalises to the same key matches, and several such
/// rows are an ambiguity error listing them. `Ok(None)` when there is no store, or `name` holds no `:` and names no
/// row. A `name` with a `:` that names no row, or a short form that matches rows of several
/// agents, is an error listing the keys that exist; so is a store that cannot be read then.
pub(crate) fn lookup_key(ctx: &Ctx, dir: &Path, name: &str) -> anyhow::Result<Option<KeyHit>> {
    let Some(loaded) = load_store(ctx, dir) else {
        return Ok(None);
    };
    let shown_store = store_name(ctx, dir);
    let keyish = name.contains(':');
    let store = match loaded {
        Ok(s) => s,
        Err(e) if keyish => bail!(UsageError::new(format!(
            "cannot look up session key {:?}: {e}",
            text::safe(name)
        ))),
        Err(_) => return Ok(None),
    };
    let trimmed = name.trim();
    // The spellings the name may stand for: itself, and (without `agent:`) under this
    // directory's agent.
    let mut spellings = vec![trimmed.to_owned()];
    let agent = agent_of_dir(dir);
    if !trimmed.to_lowercase().starts_with("agent:")
        && let Some(agent) = &agent
    {
        spellings.push(format!("agent:{agent}:{trimmed}"));
    }
    let stored: Vec<String> = store
        .entries()
        .map(|(k, _)| k.to_str_lossy().into_owned())
        .collect();
    let mut hits: Vec<String> = Vec::new();
    let add = |hits: &mut Vec<String>, k: String| {
        if !hits.contains(&k) {
            hits.push(k);
        }
    };
    // An exact stored key wins over its case variants.
    for s in &spellings {
        if stored.contains(s) {
            add(&mut hits, s.clone());
        }
    }
    if hits.is_empty() {
        // Otherwise every stored key that normalises (lowercases) to the same key matches;
        // several are reported as ambiguous below.
        for s in &spellings {
            let want = session_semantics::key::normalize_session_key(s);
            if want.is_empty() {
                continue;
            }
            for k in &stored {
                if *k == want || session_semantics::key::normalize_session_key(k) == want {
                    add(&mut hits, k.clone());
                }
            }
        }
    }
    if hits.is_empty() && !trimmed.to_lowercase().starts_with("agent:") && agent.is_none() {
        let want = session_semantics::key::normalize_session_key(&format!("agent:x:{trimmed}"));
        for k in &stored {
            let rest = k
                .strip_prefix("agent:")
                .and_then(|r| r.split_once(':'))
                .map(|(_, rest)| rest);
            if let Some(rest) = rest
                && session_semantics::key::normalize_session_key(&format!("agent:x:{rest}")) == want
            {
                add(&mut hits, k.clone());
            }
        }
    }
    let known: Vec<String> = store
        .entries()
        .map(|(k, _)| k.to_str_lossy().into_owned())
        .collect();
    match hits.len() {
        0 if keyish => bail!(UsageError::new(format!(
            "unknown session key {:?} in {}{}",
            text::safe(name),
            shown_store,
            suggestion(trimmed, &known, "key")
        ))),
        0 => Ok(None),
        1 => {
            let key = hits.remove(0);
            Ok(Some(KeyHit {
                transcript: store.transcript_of(&key),
                key,
                shown_store,
            }))
        }
        _ => {
            let shown: Vec<String> = hits.iter().map(|k| text::safe(k).into_owned()).collect();
            bail!(UsageError::new(format!(
                "session key {:?} is ambiguous in {}: it names the rows {}; give the full key",
                text::safe(name),
                shown_store,
                shown.join(", ")
            )))
        }
    }
}

fn reject_stdin(p: &Path) -> anyhow::Result<()> {
    if p.as_os_str() == "-" {
        bail!(UsageError::new(
            "reading a session from standard input (`-`) is not supported: sessions are opened \
             by path; save it to a file first and pass that path"
        ));
    }
    Ok(())
}

fn check_file(ctx: &Ctx, p: &Path) -> anyhow::Result<PathBuf> {
    reject_stdin(p)?;
    let p = session_path(ctx, p);
    ctx.backend.require_session(&p)?;
    Ok(p)
}

/// A FILE argument: `~` expanded; with a Redis backend also made absolute (its key path).
fn session_path(ctx: &Ctx, p: &Path) -> PathBuf {
    let p = expand_tilde(p);
    match ctx.store() {
        Some(_) => StoreBackend::key(&p),
        None => p,
    }
}

fn any_flag(sel: &SessionSelector) -> bool {
    sel.locator.names_dir() || sel.session.is_some()
}

/// The one session a single-session subcommand works on (a regular file: checked before
/// anything opens it).
pub(crate) fn resolve_one(
    ctx: &Ctx,
    file: Option<&Path>,
    sel: &SessionSelector,
) -> anyhow::Result<PathBuf> {
    match (file, any_flag(sel)) {
        (Some(_), true) => bail!(UsageError::new(
            "give either a FILE or --agent/--dir/--pi with --session, not both"
        )),
        (Some(f), false) => check_file(ctx, f),
        (None, _) => {
            let Some(name) = &sel.session else {
                bail!(UsageError::new(
                    "no session given: pass a FILE, or --agent ID --session NAME, or --dir DIR \
                     --session NAME, or --pi --session NAME"
                ));
            };
            let Some(dir) = session_dir(ctx, &sel.locator)? else {
                bail!(UsageError::new(
                    "--session needs --agent ID (or --dir DIR, or --pi) to say where the session is"
                ));
            };
            let p = resolve_session(ctx, &dir, name)?;
            ctx.backend.require_session(&p)?;
            Ok(p)
        }
    }
}

/// The sessions a multi-session subcommand works on: the FILEs; or one `--session`; or every
/// `*.jsonl` of the `--agent`/`--dir`/`--pi` sessions directory and its immediate
/// sub-directories. The files are not checked here: each one gets its own result.
pub(crate) fn resolve_many(
    ctx: &Ctx,
    files: &[PathBuf],
    sel: &SessionSelector,
) -> anyhow::Result<Vec<PathBuf>> {
    if !files.is_empty() {
        if any_flag(sel) {
            bail!(UsageError::new(
                "give either FILEs or --agent/--dir/--pi (with --session), not both"
            ));
        }
        for f in files {
            reject_stdin(f)?;
        }
        return Ok(files.iter().map(|f| session_path(ctx, f)).collect());
    }
    if let Some(name) = &sel.session {
        let Some(dir) = session_dir(ctx, &sel.locator)? else {
            bail!(UsageError::new(
                "--session needs --agent ID (or --dir DIR, or --pi) to say where the session is"
            ));
        };
        return Ok(vec![resolve_session(ctx, &dir, name)?]);
    }
    let Some(dir) = session_dir(ctx, &sel.locator)? else {
        bail!(UsageError::new(
            "no session given: pass FILEs, or --agent ID / --dir DIR / --pi (optionally with \
             --session NAME)"
        ));
    };
    let listing = session_files(ctx, &dir);
    for (d, why) in &listing.unreadable {
        eprintln!("warning: {}: {why}", text::path(d));
    }
    if listing.files.is_empty() {
        bail!(UsageError::new(format!(
            "no *.jsonl sessions in {} or its immediate sub-directories",
            text::path(&dir)
        )));
    }
    Ok(listing.files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_matches_prefers_substrings() {
        let c = vec![
            "telegram_123456".to_owned(),
            "discord_981234567890".to_owned(),
            "slack_U02OPSBOT".to_owned(),
        ];
        assert_eq!(close_matches("telegram_12345", &c), vec!["telegram_123456"]);
        assert_eq!(close_matches("telegarm_123456", &c)[0], "telegram_123456");
        assert!(close_matches("zzzz", &c).is_empty());
    }
}
