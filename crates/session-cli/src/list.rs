//! `sessions list`: the sessions of an agent, of every agent, or of a directory, newest first,
//! as an aligned table or JSON. Files are read (never opened for writing) in parallel, and only
//! when they are regular files; a progress bar appears on a terminal when more than 1,000
//! sessions are scanned; files that cannot be read or are not sessions are reported, not dropped. With a
//! Redis backend the same sessions are read from the store's namespaces ([`crate::backend`]),
//! one `Sessions::list` per namespace. A directory holding OpenClaw's `sessions.json` is
//! listed by store key instead (`crate::store_list`; [`crate::list_cmd`] picks).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use anyhow::bail;
#[cfg(test)]
use session_format::json::{JsObject, JsValue};
use session_store::SessionInfo;

use crate::address::{self, Locator};
use crate::backend::StoreBackend;
use crate::ctx::Ctx;
use crate::outcome::UsageError;
use crate::output::Output;
use crate::{fsx, text};

pub(crate) const LONG_ABOUT: &str = "\
List sessions, newest first (by last user/assistant activity, as OpenClaw's list sorts them).

Which sessions: --agent ID lists <root>/agents/ID/sessions/; --dir DIR lists DIR (any layout, e.g.
~/.pi/agent/sessions/--<cwd>--/); --pi lists pi's sessions ($PI_CODING_AGENT_DIR/sessions, else
~/.pi/agent/sessions, one sub-directory per working directory); --all (the default) lists every
agent of the store (--root, else $OPENCLAW_STATE_DIR, else ~/.openclaw). In every case the
*.jsonl files directly in the sessions directory and in its immediate sub-directories are
listed, as every other subcommand reads --agent, --dir and --pi, except OpenClaw's sidecars
(`<id>.trajectory.jsonl`; the `.reset.`, `.deleted.` and `.bak` archives and
`.trajectory-path.json` are not *.jsonl) and, in a directory holding `sessions.json`, its
`archive/` sub-directory: these are neither listed nor warned about. Files are only read, never
opened for writing, and only when they are regular files (a FIFO or a link to a device is
reported as skipped, never opened). On a terminal a progress bar appears when more than 1,000
sessions are scanned.

Table columns: AGENT (with --all), ID (the session id from the file's header, shortened to the
shortest unique prefix of at least 8 characters; `--session ID` accepts it; an ID ending in `*`
is also the header id of another listed file, named in a warning after the table: a lookup by
that id is ambiguous where both files are found), NAME / FIRST MESSAGE (the session name, else
the first user message in quotes), MSGS (messages on all branches, each entry id once: of rows
that repeat an id only the last one counts, as lookups, tree and context see them), MODIFIED (UTC): the time of the newest user or assistant message (OpenClaw's
SessionInfo.modified: the message's own timestamp, else its entry's), else the header's
timestamp, else the file's modification time; it is not the file's mtime, which changes with
any append. SIZE, PATH. A file reached through several names (its own name and symlinks to it
in the listed directory) is listed once, under its own name, followed by `(aliases: …)` naming
the others (JSON `aliases`, a list of paths); a session reached through a symlink that leads
out of the listed directory is marked `-> TARGET (outside the listed directory)` (JSON
`outsideTarget`, else null): writes through such a link are refused. Control and
bidirectional-text characters are escaped. Files that cannot
be read or are not sessions are listed on stderr after the table (`warning: skipped …`).

JSON output (--json):
  {\"sessions\": [{\"id\", \"name\", \"firstMessage\", \"messageCount\", \"messageRows\", \"created\",
                 \"modified\", \"mtime\", \"size\", \"path\", \"agent\", \"cwd\", \"parentSession\",
                 \"aliases\", \"outsideTarget\", \"idSharedWith\"}],
   \"skipped\": [{\"path\", \"reason\"}]}
`messageCount` is MSGS (each id once); `messageRows` counts every message row, a row that
repeats an id included (OpenClaw's SessionInfo.messageCount); `idSharedWith` lists the paths of
the other listed files whose header has the same session id (empty when none; another name of
the same file is not another file). `created`, `modified` (as in the table) and `mtime` (the file's modification time) are ISO
timestamps (null when unknown); `name`, `agent` and `parentSession` may be null; `size` is in
bytes.

OpenClaw stores: a sessions directory holding sessions.json is listed one row per store key,
as `openclaw sessions` lists it, joined with the files beside it. Rows are newest `updatedAt`
first (ties in the file's order); --active MINUTES keeps rows updated in the last MINUTES
minutes; --limit N|all (default 100) keeps the N newest keys; --all-agents is --all. Columns:
[AGENT] (the key's own agent, as JSON agentId) KEY, [LABEL] (the entry's label, a column
only when some listed key has one), KIND (the reference's kind: direct, group, cron, spawn-child, global, unknown),
CHANNEL, MODEL (the row's model, else the default openai/gpt-5.5), TOKENS (CTX %) (totalTokens
over contextTokens, else 200k, as `0.4k/200k (0%)`), AGE (since updatedAt and the global
--now, as the reference writes it: `just now`, `12m ago`, `4h ago` under 48 hours, `2d ago`;
`unknown` without updatedAt or when it is in the future), MSGS and SIZE (of the transcript), FLAGS, PATH (the transcript). FLAGS: `missing` (no
transcript file), `header-only` (at most 4096 bytes and no message: the reference's `cleanup
--fix-missing` calls it missing), `shared` (another key names the same transcript or session
id; JSON `sharedWith` names them), `archived` (an archived key of a SQLite store), `orphan` (a transcript no key references, listed after the
keys, never limited). Archives (`.reset.`, `.deleted.`, `.bak.`), checkpoints, trajectory
sidecars, store temp files and sub-directories such as `archive/` are never rows and never
warned about; --archived lists the archives instead (time, reason, session id, size, path).
JSON: {\"path\" (the store, or null with \"stores\": [{\"agentId\", \"path\"}] and \"allAgents\":
true when every agent is listed), \"count\", \"totalCount\", \"limitApplied\", \"hasMore\",
\"activeMinutes\", \"orphanCount\", \"sessions\": [{\"key\", \"updatedAt\", \"ageMs\", \"sessionId\", the row's
fields as `openclaw sessions --json` prints them (\"totalTokens\", \"model\", \"modelProvider\",
\"contextTokens\", …, same names and values), \"agentId\", \"kind\", \"id\", \"channel\",
\"contextPercent\", \"messages\", \"size\", \"flags\", \"label\" (the entry's label, else null),
\"archived\" (true for an archived key of a SQLite store), \"sharedWith\", \"path\"}],
\"skipped\"}; an orphan has \"key\": null. --archived --json: {\"path\" or \"stores\", \"count\",
\"archives\": [{\"agentId\", \"reason\", \"key\" (archived keys only), \"original\", \"sessionId\",
\"archivedAt\", \"archivedAtMs\", \"size\", \"path\"}]}. `count` is the reference's (store keys shown); the orphan rows are
counted in `orphanCount`; store paths are absolute, as the reference prints them. A sessions.json that is not a JSON object is an error naming it.
Elsewhere --active and --limit select by MODIFIED.

Width: the table fits the COLUMNS environment variable when set, else the terminal's width;
output to a pipe or file without COLUMNS is never cut. To fit, PATH (last) is cut with `…`,
then KEY in its middle, then LABEL, CHANNEL, MODEL, SIZE, MSGS and TOKENS are left out; PATH is left
out rather than cut below 12 columns, then KEY is cut further and the remaining columns are
left out, rightmost first (KIND, AGE and SIZE cells are never cut). --wide prints every cell
in full (in the file table too: NAME / FIRST MESSAGE).

With --backend redis://… the sessions are read from the Redis store instead (the paths name its
namespaces and keys; see `sessions --help`); the output is the same, except that the file's
modification time is replaced by the session's last change in Redis (`mtime`, and the MODIFIED
fallback).

OpenClaw 2026.8+ (SQLite): when the state directory holds agents/<ID>/agent/openclaw-agent.sqlite
(or with --backend sqlite:PATH), each agent's database is its store, listed one row per key as
above, from the database's session_nodes (the sessions.json it stands for) and its transcript
rows (MSGS, SIZE, FLAGS): no directory is scanned, so there are no orphan rows. A key with
archived_at set is an archived key: listed as OpenClaw 2026.9.6's `openclaw sessions` lists it,
with FLAGS `archived` and JSON \"archived\": true; --archived lists only the archived
keys (REASON `archived key KEY`, JSON reason \"archived\" with \"key\") and the reclaimed
generations of session_transcript_archives (reason deleted or reset, SIZE the stored archive)
instead of archive files. JSON \"path\"/\"stores\" name the database. Nothing is written.";

/// A file to look at, with the agent it belongs to and the directory whose listing found it.
#[derive(Debug, Clone)]
struct Candidate {
    path: PathBuf,
    agent: Option<String>,
    root: PathBuf,
    /// Whether the directory entry is a symlink, when the listing knows.
    link: Option<bool>,
}

/// A listed session.
#[derive(Debug, Clone)]
pub(crate) struct Listed {
    pub(crate) info: SessionInfo,
    pub(crate) agent: Option<String>,
    pub(crate) size: u64,
    /// The file's modification time (ms since the epoch).
    pub(crate) mtime: Option<f64>,
    /// The file's device and inode (links followed; `None` for a Redis session), so that two
    /// names of one file are not taken for two files sharing a session id.
    pub(crate) file_id: Option<session_store::identity::FileId>,
    /// The paths of the other listed files whose header has this session id, sorted.
    pub(crate) id_shared_with: Vec<PathBuf>,
}

/// A file that is not listed, and why.
#[derive(Debug, Clone)]
pub(crate) struct Skipped {
    pub(crate) path: PathBuf,
    pub(crate) reason: String,
}

/// The `*.jsonl` files of a sessions directory and of its immediate sub-directories.
fn scan_dir(
    ctx: &Ctx,
    dir: &Path,
    agent: Option<&str>,
    skipped: &mut Vec<Skipped>,
) -> Vec<Candidate> {
    let listing = address::session_files(ctx, dir);
    for (path, reason) in listing.unreadable {
        skipped.push(Skipped { path, reason });
    }
    let openclaw_store = ctx.store().is_none() && dir.join("sessions.json").is_file();
    let known = listing.links.len() == listing.files.len();
    let mut links = listing.links.into_iter();
    listing
        .files
        .into_iter()
        .map(|path| (path, if known { links.next() } else { None }))
        .filter(|(path, _)| !is_sidecar_or_archive(dir, path, openclaw_store))
        .map(|(path, link)| Candidate {
            path,
            agent: agent.map(str::to_owned),
            root: dir.to_path_buf(),
            link,
        })
        .collect()
}

/// Whether `path`, found in the sessions directory `dir`, is not a session to list: a
/// trajectory capture (`<transcript minus .jsonl>.trajectory.jsonl`, openclaw-store.md §1.4,
/// R1.14), or, in an OpenClaw store (`dir` holds `sessions.json`), a file under its
/// `archive/` sub-directory, which the reference's maintenance never scans (R1.15). The
/// `.reset.<ts>`, `.deleted.<ts>` and `.bak…` archives and `.trajectory-path.json` pointers
/// do not end in `.jsonl`, so they are never candidates.
pub(crate) fn is_sidecar_or_archive(dir: &Path, path: &Path, openclaw_store: bool) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    name.ends_with(".trajectory.jsonl")
        || (openclaw_store && path.parent() == Some(dir.join("archive").as_path()))
}

/// Merges the listed names of one file into one row, per listed directory
/// ([`session_store::identity::alias_groups`]): the row keeps the file's own name (else its
/// first link), [`SessionInfo::aliases`] the others; a row reached through a link out of its
/// listed directory gets [`SessionInfo::outside_target`]. A name is a symlink as its
/// directory entry says (`lstat` of every name of a directory when some entry's type is not
/// known).
fn merge_aliases(listed: Vec<(Listed, PathBuf, Option<bool>)>) -> Vec<Listed> {
    let mut by_root: Vec<(PathBuf, Vec<Listed>, Vec<Option<bool>>)> = Vec::new();
    for (l, root, link) in listed {
        match by_root.iter_mut().find(|(r, _, _)| *r == root) {
            Some((_, v, links)) => {
                v.push(l);
                links.push(link);
            }
            None => by_root.push((root, vec![l], vec![link])),
        }
    }
    let mut out = Vec::new();
    for (root, rows, links) in by_root {
        let paths: Vec<&Path> = rows.iter().map(|l| l.info.path.as_path()).collect();
        let groups = if links.iter().all(Option::is_some) {
            session_store::identity::alias_groups_with(&paths, &root, |i| links[i].unwrap_or(false))
        } else {
            session_store::identity::alias_groups(&paths, &root)
        };
        let mut slots: Vec<Option<Listed>> = rows.into_iter().map(Some).collect();
        for g in groups {
            let Some(mut l) = slots[g.primary].take() else {
                continue;
            };
            l.info.aliases = g
                .aliases
                .iter()
                .filter_map(|&i| slots[i].take().map(|a| a.info.path))
                .collect();
            l.info.aliases.sort();
            l.info.outside_target = g.outside_target;
            out.push(l);
        }
    }
    out
}

fn ms_since_epoch(t: SystemTime) -> f64 {
    match t.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => d.as_millis() as f64,
        Err(e) => -(e.duration().as_millis() as f64),
    }
}

/// Why `session_info` skipped a file.
fn skip_reason(path: &Path) -> String {
    match session_store::io::read_file(path) {
        Err(e) => format!("cannot read: {e}"),
        Ok(b) if b.iter().all(u8::is_ascii_whitespace) => "empty file".to_owned(),
        Ok(_) if !session_store::is_valid_session_file(path) => {
            "not a session file: the first line is not a session header".to_owned()
        }
        Ok(_) => {
            "not listable: OpenClaw's list would fail on it (a non-string session name, a null \
                  message or content that is neither text nor blocks); `sessions check` and \
                  `sessions tree` still read it"
                .to_owned()
        }
    }
}

/// One candidate's result. A listed session is boxed: its `SessionInfo` (texts, times, ids)
/// is several times larger than a skip, and one `Scan` per candidate is held in memory.
enum Scan {
    Listed(Box<Listed>),
    Skipped(Skipped),
}

/// One candidate, read with the worker's `reader`: one `stat`, `open` and `fstat` per file
/// (the size, times and inode come from the `fstat`); the reasons of a skip are worked out
/// only for the files skipped.
fn scan_one(c: &Candidate, reader: &mut session_store::InfoReader) -> Scan {
    let skipped = |reason: String| {
        Scan::Skipped(Skipped {
            path: c.path.clone(),
            reason,
        })
    };
    let (m, info) = match reader.read(&c.path) {
        Ok(read) => read,
        Err(_) => {
            return skipped(match fsx::not_readable_reason(&c.path) {
                Some(why) if why.starts_with("not a regular file") => why,
                Some(why) => match why.strip_prefix("cannot be read: ") {
                    Some(rest) => format!("cannot read: {rest}"),
                    None => format!("cannot read: {why}"),
                },
                // A regular file that could not be opened or read: the reason of a re-read.
                None => skip_reason(&c.path),
            });
        }
    };
    match info {
        Some(info) => Scan::Listed(Box::new(Listed {
            info,
            agent: c.agent.clone(),
            size: m.len(),
            mtime: m.modified().ok().map(ms_since_epoch),
            file_id: session_store::identity::FileId::of(&m),
            id_shared_with: Vec::new(),
        })),
        None => skipped(skip_reason(&c.path)),
    }
}

/// Reads every candidate on all cores; shows a progress bar on stderr over more than
/// [`crate::progress::MANY_SESSIONS`] sessions ([`crate::progress::Progress::sessions`]).
fn scan_all(cands: &[Candidate]) -> Vec<Scan> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism()
        .map_or(2, std::num::NonZeroUsize::get)
        .clamp(1, 8)
        .min(cands.len().max(1));
    let mut results: Vec<Option<Scan>> = Vec::new();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    let mut reader = session_store::InfoReader::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(c) = cands.get(i) else { break };
                        mine.push((i, scan_one(c, &mut reader)));
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                    mine
                })
            })
            .collect();
        let bar = crate::progress::Progress::sessions(cands.len() as u64, "scanning sessions");
        while done.load(Ordering::Relaxed) < cands.len() {
            bar.set(done.load(Ordering::Relaxed) as u64);
            if handles.iter().all(|h| h.is_finished()) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        bar.finish();
        results = (0..cands.len()).map(|_| None).collect();
        for h in handles {
            if let Ok(mine) = h.join() {
                for (i, s) in mine {
                    results[i] = Some(s);
                }
            }
        }
    });
    results
        .into_iter()
        .zip(cands)
        .map(|(r, c)| {
            r.unwrap_or_else(|| {
                Scan::Skipped(Skipped {
                    path: c.path.clone(),
                    reason: "internal error while reading".to_owned(),
                })
            })
        })
        .collect()
}

/// Why a Redis session was not listed (the texts of [`skip_reason`]).
fn redis_skip_reason(r: &StoreBackend, path: &Path) -> String {
    let bytes = match r.read(path) {
        Ok(b) => b,
        Err(e) => return format!("cannot read: {}", crate::output::error_text(&e)),
    };
    let header = r.read_head(path).is_some_and(|line| {
        let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&line);
        session_format::json::EnvelopeScanner::new()
            .scan(line)
            .is_ok_and(|env| session_format::row::is_readable_header(&env))
    });
    if bytes.iter().all(u8::is_ascii_whitespace) {
        "empty file".to_owned()
    } else if !header {
        "not a session file: the first line is not a session header".to_owned()
    } else {
        "not listable: OpenClaw's list would fail on it (a non-string session name, a null \
         message or content that is neither text nor blocks); `sessions check` and `sessions \
         tree` still read it"
            .to_owned()
    }
}

/// [`scan_all`] for a Redis backend: one `Sessions::list` per namespace (each session read once),
/// then the size and change time of each listed session.
fn scan_redis(r: &StoreBackend, cands: &[Candidate]) -> Vec<Scan> {
    let dirs: BTreeSet<&Path> = cands.iter().filter_map(|c| c.path.parent()).collect();
    let mut infos: HashMap<PathBuf, SessionInfo> = HashMap::new();
    let mut failed: HashMap<&Path, String> = HashMap::new();
    for d in dirs {
        match r.infos(d) {
            Ok(v) => infos.extend(v.into_iter().map(|i| (i.path.clone(), i))),
            Err(e) => {
                failed.insert(d, crate::output::error_text(&e));
            }
        }
    }
    cands
        .iter()
        .map(|c| {
            let skip = |reason: String| {
                Scan::Skipped(Skipped {
                    path: c.path.clone(),
                    reason,
                })
            };
            if let Some(why) = c.path.parent().and_then(|d| failed.get(d)) {
                return skip(format!("cannot read: {why}"));
            }
            match (infos.remove(&c.path), r.stat(&c.path)) {
                (Some(info), Some((size, mtime))) => Scan::Listed(Box::new(Listed {
                    info,
                    agent: c.agent.clone(),
                    size,
                    mtime: Some(mtime),
                    file_id: None,
                    id_shared_with: Vec::new(),
                })),
                (Some(_), None) => skip("cannot read: it was removed while listing".to_owned()),
                (None, _) => skip(redis_skip_reason(r, &c.path)),
            }
        })
        .collect()
}

/// The sessions directories a locator names, each with its agent: the one directory of
/// `--agent`/`--dir`/`--pi`, else every agent of the store root.
///
/// # Errors
/// Nothing to list, or no store at the root.
pub(crate) fn listed_dirs(
    ctx: &Ctx,
    loc: &Locator,
    all: bool,
) -> anyhow::Result<Vec<(Option<String>, PathBuf)>> {
    if !all && loc.names_dir() {
        let Some(dir) = address::sessions_dir(ctx, loc)? else {
            bail!(UsageError::new("nothing to list"));
        };
        return Ok(vec![(loc.agent.clone(), dir)]);
    }
    if let Some(dbs) = ctx.store().and_then(|r| r.sqlite_dbs()) {
        // Every agent database read (found under the state directory, or --backend sqlite:).
        return Ok(dbs
            .iter()
            .map(|d| (d.agent.clone(), d.storage.sessions_dir().to_path_buf()))
            .collect());
    }
    let root = address::store_root(ctx, loc.root.as_deref());
    let agents_dir = root.join("agents");
    if !address::dir_exists(ctx, &agents_dir)? {
        bail!(address::no_store_error(ctx, &root, loc.root.as_deref()));
    }
    let mut dirs = Vec::new();
    for agent in address::agents(ctx, &root) {
        let dir = agents_dir.join(&agent).join("sessions");
        if address::dir_exists(ctx, &dir)? {
            dirs.push((Some(agent), dir));
        }
    }
    Ok(dirs)
}

/// The sessions of `dirs` (the `*.jsonl` files), newest first, and the files skipped.
pub(crate) fn collect_dirs(
    ctx: &Ctx,
    dirs: &[(Option<String>, PathBuf)],
) -> (Vec<Listed>, Vec<Skipped>) {
    let mut skipped = Vec::new();
    let mut cands = Vec::new();
    for (agent, dir) in dirs {
        cands.extend(scan_dir(ctx, dir, agent.as_deref(), &mut skipped));
    }
    let scans = match ctx.store() {
        Some(r) => scan_redis(r, &cands),
        None => scan_all(&cands),
    };
    let mut found = Vec::with_capacity(cands.len());
    for (s, c) in scans.into_iter().zip(&cands) {
        match s {
            Scan::Listed(l) => found.push((*l, c.root.clone(), c.link)),
            Scan::Skipped(s) => skipped.push(s),
        }
    }
    let mut listed = if ctx.store().is_some() {
        found.into_iter().map(|(l, _, _)| l).collect()
    } else {
        merge_aliases(found)
    };
    listed.sort_by(|a, b| {
        b.info
            .modified
            .total_cmp(&a.info.modified)
            .then_with(|| a.info.path.cmp(&b.info.path))
    });
    mark_shared_ids(&mut listed);
    (listed, skipped)
}

/// Fills [`Listed::id_shared_with`]: for each session, the other listed files whose header
/// has the same (non-empty) session id. Two names of one file (same device and inode) are one
/// file, not two sharing an id.
fn mark_shared_ids(listed: &mut [Listed]) {
    let mut by_id: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, l) in listed.iter().enumerate() {
        if !l.info.id.is_empty() {
            by_id.entry(l.info.id.as_str()).or_default().push(i);
        }
    }
    let same_file = |a: &Listed, b: &Listed| match (a.file_id, b.file_id) {
        (Some(x), Some(y)) => x == y,
        _ => a.info.path == b.info.path,
    };
    let mut shared: Vec<(usize, Vec<PathBuf>)> = Vec::new();
    for group in by_id.values().filter(|g| g.len() > 1) {
        for &i in group {
            let mut others: Vec<PathBuf> = group
                .iter()
                .filter(|&&j| j != i && !same_file(&listed[i], &listed[j]))
                .map(|&j| listed[j].info.path.clone())
                .collect();
            if !others.is_empty() {
                others.sort();
                others.dedup();
                shared.push((i, others));
            }
        }
    }
    for (i, others) in shared {
        listed[i].id_shared_with = others;
    }
}

/// One warning per session id that several listed files share: the id and the files (sorted
/// by path), for the text output.
fn shared_id_warnings(listed: &[Listed]) -> Vec<String> {
    let mut groups: std::collections::BTreeMap<&str, BTreeSet<&Path>> =
        std::collections::BTreeMap::new();
    for l in listed.iter().filter(|l| !l.id_shared_with.is_empty()) {
        let g = groups.entry(l.info.id.as_str()).or_default();
        g.insert(&l.info.path);
        g.extend(l.id_shared_with.iter().map(PathBuf::as_path));
    }
    groups
        .into_iter()
        .map(|(id, paths)| {
            let paths: Vec<String> = paths.into_iter().map(text::path).collect();
            format!(
                "warning: {} files share the session id \"{}\" (--session by that id is \
                 ambiguous wherever two of them are found; give the path instead): {}",
                paths.len(),
                text::safe(id),
                paths.join(", ")
            )
        })
        .collect()
}

/// The table (header included) for listed sessions.
///
/// `width` sizes the name column; with `fit` (the table width, [`text::table_width`]) the
/// PATH cell is cut ([`text::truncate_path`]) so that every line fits, and the name column is sized
/// for it.
pub(crate) fn table(
    listed: &[Listed],
    show_agent: bool,
    width: usize,
    fit: Option<usize>,
) -> Vec<String> {
    let width = fit.unwrap_or(width);
    let ids = text::ShortIds::new(listed.iter().map(|l| l.info.id.as_str()));
    let short: Vec<String> = listed.iter().map(|l| ids.get(&l.info.id)).collect();
    struct Row {
        agent: String,
        id: String,
        name: String,
        msgs: String,
        modified: String,
        size: String,
        path: String,
    }
    let rows: Vec<Row> = listed
        .iter()
        .zip(short)
        .map(|(l, id)| Row {
            agent: l
                .agent
                .as_deref()
                .map_or_else(|| "-".to_owned(), |a| text::safe(a).into_owned()),
            id: match (id.is_empty(), l.id_shared_with.is_empty()) {
                (true, _) => "-".to_owned(),
                (false, true) => id,
                (false, false) => format!("{id}*"),
            },
            name: match &l.info.name {
                Some(n) => text::one_line(n),
                None if l.info.first_message == "(no messages)" => "(no messages)".to_owned(),
                None => format!("\"{}\"", text::one_line(&l.info.first_message)),
            },
            msgs: text::thousands(l.info.unique_message_count),
            modified: text::utc_minutes(l.info.modified),
            size: text::human_bytes(l.size),
            path: path_cell(&l.info),
        })
        .collect();
    let w = |f: &dyn Fn(&Row) -> &str, head: &str| {
        rows.iter()
            .map(|r| text::width(f(r)))
            .chain(std::iter::once(text::width(head)))
            .max()
            .unwrap_or(0)
    };
    let agent_w = w(&|r| &r.agent, "AGENT");
    let id_w = w(&|r| &r.id, "ID");
    let msgs_w = w(&|r| &r.msgs, "MSGS");
    let mod_w = w(&|r| &r.modified, "MODIFIED (UTC)");
    let size_w = w(&|r| &r.size, "SIZE");
    let fixed = id_w + msgs_w + mod_w + size_w + 2 * 5 + if show_agent { agent_w + 2 } else { 0 };
    // Fitted, the name column gets what is left of the width (down to 12 columns, so that the
    // path keeps about 24; at most 60); unfitted (--wide, or a pipe without COLUMNS) every
    // name is printed in full.
    let name_max = w(&|r| &r.name, "NAME / FIRST MESSAGE");
    let name_w = match fit {
        Some(_) => width.saturating_sub(fixed + 24).clamp(12, 60).min(name_max),
        None => name_max,
    };
    let mut out = Vec::with_capacity(rows.len() + 1);
    let fmt =
        |agent: &str, id: &str, name: &str, msgs: &str, modified: &str, size: &str, path: &str| {
            let mut l = String::new();
            if show_agent {
                l.push_str(&text::pad(agent, agent_w));
                l.push_str("  ");
            }
            l.push_str(&text::pad(id, id_w));
            l.push_str("  ");
            l.push_str(&text::pad(&text::truncate(name, name_w), name_w));
            l.push_str("  ");
            l.push_str(&text::pad_left(msgs, msgs_w));
            l.push_str("  ");
            l.push_str(&text::pad(modified, mod_w));
            l.push_str("  ");
            l.push_str(&text::pad_left(size, size_w));
            l.push_str("  ");
            match fit {
                Some(limit) => {
                    // Every row has the same prefix width: a PATH cut below 12 columns names
                    // nothing, and is left out of every row and the header alike.
                    let room = limit.saturating_sub(text::width(&l));
                    if room >= 12 {
                        l.push_str(&text::truncate_path(path, room));
                    }
                    let l = l.trim_end();
                    if text::width(l) > limit {
                        text::truncate(l, limit)
                    } else {
                        l.to_owned()
                    }
                }
                None => {
                    l.push_str(path);
                    l.trim_end().to_owned()
                }
            }
        };
    out.push(fmt(
        "AGENT",
        "ID",
        "NAME / FIRST MESSAGE",
        "MSGS",
        "MODIFIED (UTC)",
        "SIZE",
        "PATH",
    ));
    for r in &rows {
        out.push(fmt(
            &r.agent,
            &r.id,
            &r.name,
            &r.msgs,
            &r.modified,
            &r.size,
            &r.path,
        ));
    }
    out
}

/// The PATH cell: the path, then ` -> <target> (outside the listed directory)` for a session
/// reached through a link out of it, then ` (aliases: <path>, …)` for its other names.
fn path_cell(info: &SessionInfo) -> String {
    let mut cell = text::path(&info.path);
    if let Some(t) = &info.outside_target {
        cell.push_str(&format!(
            " -> {} (outside the listed directory)",
            text::path(t)
        ));
    }
    if !info.aliases.is_empty() {
        let names: Vec<String> = info.aliases.iter().map(|a| text::path(a)).collect();
        cell.push_str(&format!(" (aliases: {})", names.join(", ")));
    }
    cell
}

/// `text::iso(ms)` as a JSON value written into `out`: the quoted `YYYY-MM-DDTHH:MM:SS.mmmZ`
/// (digits written directly, not through a format string), else `null`.
fn write_iso(ms: Option<f64>, out: &mut Vec<u8>) {
    use chrono::{Datelike, TimeZone, Timelike};
    fn digits(out: &mut Vec<u8>, v: u32, n: u32) {
        for k in (0..n).rev() {
            // A single decimal digit: the cast cannot truncate.
            out.push(b'0' + (v / 10u32.pow(k) % 10) as u8);
        }
    }
    let dt = ms
        .filter(|m| m.is_finite())
        .and_then(|m| chrono::Utc.timestamp_millis_opt(m as i64).single())
        .filter(|dt| (0..=9999).contains(&dt.year()));
    let Some(dt) = dt else {
        out.extend_from_slice(b"null");
        return;
    };
    out.push(b'"');
    digits(out, dt.year().unsigned_abs(), 4);
    out.push(b'-');
    digits(out, dt.month(), 2);
    out.push(b'-');
    digits(out, dt.day(), 2);
    out.push(b'T');
    digits(out, dt.hour(), 2);
    out.push(b':');
    digits(out, dt.minute(), 2);
    out.push(b':');
    digits(out, dt.second(), 2);
    out.push(b'.');
    digits(out, dt.nanosecond() / 1_000_000, 3);
    out.extend_from_slice(b"Z\"");
}

/// The `--json` document of a file listing, written straight into `out` (no trailing
/// newline): the bytes `JSON.stringify(doc, null, 2)` gives for the document `to_json`
/// (the test oracle) builds, without building it (10,000 sessions make 200,000 values).
pub(crate) fn write_json(listed: &[Listed], skipped: &[Skipped], out: &mut Vec<u8>) {
    use session_format::json::{write_number, write_str};
    fn key(out: &mut Vec<u8>, first: bool, k: &str) {
        out.extend_from_slice(if first { b"\n      " } else { b",\n      " });
        write_str(k, out);
        out.extend_from_slice(b": ");
    }
    fn opt_str(out: &mut Vec<u8>, v: Option<&str>) {
        match v {
            Some(s) => write_str(s, out),
            None => out.extend_from_slice(b"null"),
        }
    }
    fn paths<'p>(out: &mut Vec<u8>, v: impl ExactSizeIterator<Item = &'p PathBuf>) {
        if v.len() == 0 {
            out.extend_from_slice(b"[]");
            return;
        }
        out.push(b'[');
        for (n, p) in v.enumerate() {
            out.extend_from_slice(if n == 0 {
                b"\n        "
            } else {
                b",\n        "
            });
            write_str(&p.to_string_lossy(), out);
        }
        out.extend_from_slice(b"\n      ]");
    }
    out.extend_from_slice(b"{\n  \"sessions\": ");
    if listed.is_empty() {
        out.extend_from_slice(b"[]");
    } else {
        out.push(b'[');
        for (n, l) in listed.iter().enumerate() {
            let i = &l.info;
            out.extend_from_slice(if n == 0 { b"\n    {" } else { b",\n    {" });
            key(out, true, "id");
            write_str(&i.id, out);
            key(out, false, "name");
            opt_str(out, i.name.as_deref());
            key(out, false, "firstMessage");
            write_str(&i.first_message, out);
            key(out, false, "messageCount");
            write_number(i.unique_message_count as f64, out);
            key(out, false, "messageRows");
            write_number(i.message_count as f64, out);
            key(out, false, "created");
            write_iso(i.created, out);
            key(out, false, "modified");
            write_iso(Some(i.modified), out);
            key(out, false, "mtime");
            write_iso(l.mtime, out);
            key(out, false, "size");
            write_number(l.size as f64, out);
            key(out, false, "path");
            write_str(&i.path.to_string_lossy(), out);
            key(out, false, "agent");
            opt_str(out, l.agent.as_deref());
            key(out, false, "cwd");
            write_str(&i.cwd, out);
            key(out, false, "parentSession");
            opt_str(out, i.parent_session_path.as_deref());
            key(out, false, "aliases");
            paths(out, i.aliases.iter());
            key(out, false, "outsideTarget");
            opt_str(
                out,
                i.outside_target
                    .as_ref()
                    .map(|t| t.to_string_lossy())
                    .as_deref(),
            );
            key(out, false, "idSharedWith");
            paths(out, l.id_shared_with.iter());
            out.extend_from_slice(b"\n    }");
        }
        out.extend_from_slice(b"\n  ]");
    }
    out.extend_from_slice(b",\n  \"skipped\": ");
    if skipped.is_empty() {
        out.extend_from_slice(b"[]");
    } else {
        out.push(b'[');
        for (n, s) in skipped.iter().enumerate() {
            out.extend_from_slice(if n == 0 { b"\n    {" } else { b",\n    {" });
            out.extend_from_slice(b"\n      \"path\": ");
            write_str(&s.path.to_string_lossy(), out);
            out.extend_from_slice(b",\n      \"reason\": ");
            write_str(&s.reason, out);
            out.extend_from_slice(b"\n    }");
        }
        out.extend_from_slice(b"\n  ]");
    }
    out.extend_from_slice(b"\n}");
}

/// The `--json` document as a value (the oracle of [`write_json`]'s tests).
#[cfg(test)]
pub(crate) fn to_json(listed: &[Listed], skipped: &[Skipped]) -> JsValue {
    let opt = |v: Option<String>| v.map_or(JsValue::Null, JsValue::from);
    let sessions = listed
        .iter()
        .map(|l| {
            let i = &l.info;
            let mut o = JsObject::new();
            o.insert("id", JsValue::from(i.id.as_str()));
            o.insert("name", opt(i.name.clone()));
            o.insert("firstMessage", JsValue::from(i.first_message.as_str()));
            o.insert(
                "messageCount",
                JsValue::Number(i.unique_message_count as f64),
            );
            o.insert("messageRows", JsValue::Number(i.message_count as f64));
            o.insert("created", opt(i.created.and_then(text::iso)));
            o.insert("modified", opt(text::iso(i.modified)));
            o.insert("mtime", opt(l.mtime.and_then(text::iso)));
            o.insert("size", JsValue::Number(l.size as f64));
            o.insert("path", JsValue::from(i.path.display().to_string()));
            o.insert("agent", opt(l.agent.clone()));
            o.insert("cwd", JsValue::from(i.cwd.as_str()));
            o.insert("parentSession", opt(i.parent_session_path.clone()));
            o.insert(
                "aliases",
                JsValue::Array(
                    i.aliases
                        .iter()
                        .map(|a| JsValue::from(a.display().to_string()))
                        .collect(),
                ),
            );
            o.insert(
                "outsideTarget",
                opt(i.outside_target.as_ref().map(|t| t.display().to_string())),
            );
            o.insert(
                "idSharedWith",
                JsValue::Array(
                    l.id_shared_with
                        .iter()
                        .map(|p| JsValue::from(p.display().to_string()))
                        .collect(),
                ),
            );
            JsValue::Object(o)
        })
        .collect();
    let skipped = skipped
        .iter()
        .map(|s| {
            let mut o = JsObject::new();
            o.insert("path", JsValue::from(s.path.display().to_string()));
            o.insert("reason", JsValue::from(s.reason.as_str()));
            JsValue::Object(o)
        })
        .collect();
    let mut o = JsObject::new();
    o.insert("sessions", JsValue::Array(sessions));
    o.insert("skipped", JsValue::Array(skipped));
    JsValue::Object(o)
}

/// Writes the table (or "no sessions") and reports skipped files on stderr.
pub(crate) fn write_table(
    listed: &[Listed],
    skipped: &[Skipped],
    show_agent: bool,
    width: usize,
    fit: Option<usize>,
    out: &mut Output,
) -> anyhow::Result<()> {
    if listed.is_empty() {
        out.line("no sessions found")?;
    } else {
        for l in table(listed, show_agent, width, fit) {
            out.line(&l)?;
        }
    }
    report_shared_ids(listed, out)?;
    report_skipped(skipped, out)
}

/// One `warning: N files share the session id …` line per id that several listed files
/// carry, on stderr (nothing when none).
pub(crate) fn report_shared_ids(listed: &[Listed], out: &mut Output) -> anyhow::Result<()> {
    let shared = shared_id_warnings(listed);
    if !shared.is_empty() {
        out.flush()?;
        for w in &shared {
            eprintln!("{w}");
        }
    }
    Ok(())
}

/// `warning: skipped N files:` and one line per file on stderr (nothing when none).
pub(crate) fn report_skipped(skipped: &[Skipped], out: &mut Output) -> anyhow::Result<()> {
    if !skipped.is_empty() {
        out.flush()?;
        eprintln!(
            "warning: skipped {} {}:",
            skipped.len(),
            if skipped.len() == 1 { "file" } else { "files" }
        );
        for s in skipped {
            eprintln!("  {}: {}", text::path(&s.path), text::safe(&s.reason));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(path: &str, id: &str, file_id: Option<(u64, u64)>) -> Listed {
        Listed {
            info: SessionInfo {
                path: PathBuf::from(path),
                id: id.to_owned(),
                cwd: String::new(),
                name: None,
                parent_session_path: None,
                created: None,
                modified: 0.0,
                modified_from_mtime: false,
                message_count: 0,
                unique_message_count: 0,
                first_message: "(no messages)".to_owned(),
                aliases: Vec::new(),
                outside_target: None,
            },
            agent: None,
            size: 0,
            mtime: None,
            file_id: file_id.map(|(dev, ino)| session_store::identity::FileId { dev, ino }),
            id_shared_with: Vec::new(),
        }
    }

    fn json_of(listed: &[Listed], skipped: &[Skipped]) -> String {
        let mut out = Vec::new();
        write_json(listed, skipped, &mut out);
        String::from_utf8(out).unwrap_or_default()
    }

    /// The direct writer gives exactly the bytes of the value document printed by
    /// `JSON.stringify(doc, null, 2)`: hostile strings (controls, quotes, backslashes, U+2028,
    /// bidi marks, astral and replacement characters, a path that is not UTF-8), nulls, empty
    /// and non-empty lists, an invalid date, sizes, and the empty listing.
    #[test]
    fn direct_json_is_the_value_documents_bytes() {
        use std::os::unix::ffi::OsStrExt;
        let hostile = "a\u{0}\u{1}\u{8}\u{c}\n\r\t\u{1f}\u{7f} \"q\" \\ / \u{2028}\u{2029} \u{200e}\u{202e} é 😀 \u{fffd} \u{d7ff}\u{e000}";
        let odd = PathBuf::from(std::ffi::OsStr::from_bytes(b"s/odd\xff\xfe\"name.jsonl"));
        let mut a = listed("s/a.jsonl", hostile, Some((1, 10)));
        a.info.name = Some(hostile.to_owned());
        a.info.first_message = hostile.to_owned();
        a.info.cwd = hostile.to_owned();
        a.info.parent_session_path = Some(hostile.to_owned());
        a.info.created = Some(1_767_225_600_123.0);
        a.info.modified = f64::NAN;
        a.info.message_count = 12;
        a.info.unique_message_count = 11;
        a.info.aliases = vec![odd.clone(), PathBuf::from("s/\u{1}link.jsonl")];
        a.info.outside_target = Some(odd.clone());
        a.agent = Some(hostile.to_owned());
        a.size = 9_007_199_254_740_993;
        a.mtime = Some(-1.0);
        a.id_shared_with = vec![PathBuf::from("s/b.jsonl")];
        let mut b = listed("s/b.jsonl", "", None);
        b.info.path = odd.clone();
        b.info.modified = 1_767_225_600_000.0;
        b.mtime = Some(1e300);
        let skipped = vec![
            Skipped {
                path: odd,
                reason: hostile.to_owned(),
            },
            Skipped {
                path: PathBuf::from("s/e.jsonl"),
                reason: "empty file".to_owned(),
            },
        ];
        let oracle = |l: &[Listed], s: &[Skipped]| {
            session_format::normalize::to_json_string_indented(&to_json(l, s), 2)
        };
        let listed = [a, b];
        assert_eq!(json_of(&listed, &skipped), oracle(&listed, &skipped));
        assert_eq!(json_of(&listed[..1], &[]), oracle(&listed[..1], &[]));
        assert_eq!(json_of(&[], &skipped[1..]), oracle(&[], &skipped[1..]));
        assert_eq!(
            json_of(&[], &[]),
            "{\n  \"sessions\": [],\n  \"skipped\": []\n}"
        );
        let text = json_of(&listed, &skipped);
        assert!(text.contains(r#""id": "a\u0000\u0001\b\f\n\r\t\u001f"#));
        assert!(text.contains(" \\\"q\\\" \\\\ / \u{2028}"));
        assert!(text.contains("\"path\": \"s/odd\u{fffd}\u{fffd}\\\"name.jsonl\""));
        assert!(text.contains(r#""modified": null"#));
        assert!(text.contains(r#""size": 9007199254740992"#));
    }

    /// The direct ISO writer gives `text::iso`'s text (or null) over the whole range: the
    /// epoch, before it, millisecond edges, year 0 and 9999 and beyond, NaN and infinities.
    #[test]
    fn direct_iso_is_text_iso() {
        let mut v = vec![
            0.0,
            -1.0,
            1.0,
            999.0,
            1_767_225_600_123.0,
            1_767_225_600_123.9,
            -62_167_219_200_000.0,
            -62_167_219_200_001.0,
            253_402_300_799_999.0,
            253_402_300_800_000.0,
            8.64e15,
            -8.64e15,
            1e300,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        let mut x = -62_167_219_200_000.0;
        while x < 253_402_300_800_000.0 {
            v.push(x);
            x += 987_654_321_987.0;
        }
        for ms in v {
            let mut out = Vec::new();
            write_iso(Some(ms), &mut out);
            let want = text::iso(ms).map_or("null".to_owned(), |t| format!("\"{t}\""));
            assert_eq!(String::from_utf8_lossy(&out), want, "{ms}");
        }
        let mut out = Vec::new();
        write_iso(None, &mut out);
        assert_eq!(out, b"null");
    }

    /// Two names of one file (same device and inode, e.g. a hard link) share its id without
    /// being two files; a third file with the id is flagged against both names; an empty id is
    /// never shared; Redis sessions (no inode) are told apart by path.
    #[test]
    fn shared_ids_count_files_not_names() {
        let mut v = vec![
            listed("s/a.jsonl", "x", Some((1, 10))),
            listed("s/a-link.jsonl", "x", Some((1, 10))),
            listed("s/b.jsonl", "y", Some((1, 11))),
            listed("s/c.jsonl", "", Some((1, 12))),
            listed("s/d.jsonl", "", Some((1, 13))),
            listed("r/e.jsonl", "z", None),
            listed("r/f.jsonl", "z", None),
        ];
        mark_shared_ids(&mut v);
        let shared: Vec<Vec<&str>> = v
            .iter()
            .map(|l| {
                l.id_shared_with
                    .iter()
                    .map(|p| p.to_str().unwrap_or_default())
                    .collect()
            })
            .collect();
        let none: Vec<&str> = Vec::new();
        assert_eq!(
            shared,
            [
                none.clone(),
                none.clone(),
                none.clone(),
                none.clone(),
                none,
                vec!["r/f.jsonl"],
                vec!["r/e.jsonl"]
            ]
        );
        v.push(listed("s/a-copy.jsonl", "x", Some((1, 14))));
        mark_shared_ids(&mut v);
        assert_eq!(
            v[0].id_shared_with,
            [PathBuf::from("s/a-copy.jsonl")],
            "a copy is another file"
        );
        assert_eq!(v[1].id_shared_with, [PathBuf::from("s/a-copy.jsonl")]);
        assert_eq!(
            v[7].id_shared_with,
            [PathBuf::from("s/a-link.jsonl"), PathBuf::from("s/a.jsonl")]
        );
    }
}
