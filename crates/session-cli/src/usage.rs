//! `sessions usage [FILE...]`: tokens and cost of the assistant messages of many sessions
//! (`session_query::usage`), grouped by day, month, model, session or agent, with a total.
//! Read-only: sessions are read through the backend (regular files only), never opened for
//! writing, so a v1 file is not migrated.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use session_format::json::{JsObject, JsValue};
use session_query::usage::{
    Group, Report, ReportOptions, SessionUsage, Totals, Tz, js_to_fixed, session_usage,
};

use crate::address::{self, SessionSelector};
use crate::ctx::Ctx;
use crate::outcome::Outcome;
use crate::output::Output;
use crate::text;

pub(crate) const LONG_ABOUT: &str = "\
Sum the token usage and cost of the assistant messages of one or more sessions, read-only,
grouped by day (the default), month, model, session or agent, with a TOTAL row.

What is counted is what pi 0.73.1's HTML export shows in its header for a session: every
entry line of the file (a row repeating an id counts again, as in pi); `message` entries by
role, `custom_message` entries, and for assistant messages their `toolCall` content blocks,
their model (provider/model) and their `usage`: input, output, cacheRead and cacheWrite tokens
and the cost (USD), the sum of usage.cost.input, .output, .cacheRead and .cacheWrite (cost.total
is not read). A field that is missing, null, false, 0 or not a number adds 0 (true adds 1).
Assistant messages without a usage object are counted and reported. Lines that are not JSON are
skipped and counted. A file whose first line that parses is not a session header counts nothing
and is reported as an error.

Forks: a session whose header names a parentSession (the parent's path, as pi and OpenClaw write
it; a relative path is taken from the fork's directory) holds copies of its parent's entries.
An entry of the fork whose id also occurs in the parent's file is the parent's and is not counted
in the fork (whether or not the parent is among the sessions summed), so that a store's total
counts every entry once. When the parent cannot be read, every entry of the fork is counted and
a warning says so. Entries without an id (v1 files) always count.

Columns (text): the group's key (DAY/MONTH as YYYY-MM-DD/YYYY-MM in local time, or in UTC with
--utc; MODEL provider/model, `(no model)` for entries that carry none: user messages, tool
results, ...; SESSION the session id, files that share one summed in its row with a `warning: N files share
the session id ...` on stderr; AGENT the agent of the session's directory, `(none)`
outside an OpenClaw store; `(no time)` for entries without a time), MESSAGES (message entries of
every role), TOOL CALLS, INPUT, OUTPUT, CACHE READ, CACHE WRITE and TOTAL TOKENS (the four
added), exact with thousands separators, and COST in USD with three decimals as pi shows it;
then the TOTAL row, and `N of M assistant messages had no usage` (with `; K had usage that is
not countable ...` when adding an assistant message's usage would make a sum infinite; its
usage is not added, where pi's export would show Infinity). A single field too large for a
double (a JSON number such as 1e400, which JavaScript reads as Infinity) adds 0, as in pi's
export, and the message's other fields are added.
An entry's time is its `timestamp`, else message.timestamp (epoch ms). --since/--until keep
the entries with since <= time < until (an entry without a time is then left out).

JSON output (--json):
  {\"by\": \"day\"|\"month\"|\"model\"|\"session\"|\"agent\", \"timeZone\": IANA name|\"local\"|\"UTC\",
   \"since\": ISO|null, \"until\": ISO|null, \"sessions\": N,
   \"rows\": [{\"key\", ...counts}], \"total\": {...counts},
   \"copiesSkipped\": N, \"filteredOut\": N, \"invalidLines\": N,
   \"warnings\": [text], \"errors\": [{\"file\", \"error\"}]}
  timeZone: \"UTC\" with --utc; else the local zone's IANA name (TZ when it names a zone of
   /usr/share/zoneinfo, else with TZ unset the zone /etc/localtime links to), or \"local\".
  counts: {\"messages\", \"byRole\": {role: n}, \"customMessages\", \"compactions\",
   \"branchSummaries\", \"assistantMessages\", \"withoutUsage\", \"notCountable\",
   \"toolCalls\", \"input\", \"output\", \"cacheRead\", \"cacheWrite\", \"totalTokens\", \"cost\",
   \"costParts\": {\"input\", \"output\", \"cacheRead\", \"cacheWrite\"}, \"models\": [provider/model]}
Numbers are pi's: JavaScript doubles summed in entry order (cost unrounded, USD; above 2^53 a
sum is as inexact as pi's), never Infinity or NaN (see notCountable). Rows are in key order (days and months
chronologically).

Files: FILEs; or --session NAME; or every *.jsonl of the --agent/--dir/--pi sessions directory
and of its immediate sub-directories; or, with --all or with none of these, every agent of the
store (<root>/agents/*/sessions, or the agent databases of an OpenClaw 2026.8+ install). In an
OpenClaw store's sessions directory the archived transcripts `<id>.jsonl.reset.<ts>` and
`<id>.jsonl.deleted.<ts>` are summed too, as OpenClaw 2026.6.11's cost summary counts them
(not `.bak.` archives, trajectory sidecars or `archive/`). A file
that cannot be read is reported (`error: ...` on stderr, and in \"errors\"), the others are still
summed, and the exit code is 2.";

/// `--by`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum By {
    /// Calendar day (local time, or UTC with --utc).
    Day,
    /// Calendar month.
    Month,
    /// provider/model of the assistant messages.
    Model,
    /// Session id.
    Session,
    /// Agent (OpenClaw store directory).
    Agent,
}

impl By {
    fn group(self) -> Group {
        match self {
            By::Day => Group::Day,
            By::Month => Group::Month,
            By::Model => Group::Model,
            By::Session => Group::Session,
            By::Agent => Group::Agent,
        }
    }
}

/// The arguments of `usage`.
#[derive(Debug)]
pub(crate) struct UsageRequest<'a> {
    pub(crate) files: &'a [PathBuf],
    pub(crate) selector: &'a SessionSelector,
    pub(crate) all: bool,
    pub(crate) by: By,
    pub(crate) utc: bool,
    pub(crate) since: Option<i64>,
    pub(crate) until: Option<i64>,
    pub(crate) json: bool,
}

/// The agent of a session file of an OpenClaw store: `<id>` of `.../agents/<id>/sessions/...`.
fn agent_of_path(p: &Path) -> Option<String> {
    for a in p.ancestors() {
        if a.file_name().is_some_and(|n| n == "sessions") {
            let agent = a.parent()?;
            if agent.parent()?.file_name().is_some_and(|n| n == "agents") {
                return agent.file_name().map(|n| n.to_string_lossy().into_owned());
            }
        }
    }
    None
}

/// The sessions to sum, each with its agent; a file named twice (the same path again, or
/// another name of the same device and inode) is summed once, under its first name.
fn targets(ctx: &Ctx, req: &UsageRequest<'_>) -> anyhow::Result<Vec<(PathBuf, Option<String>)>> {
    let mut found = named_targets(ctx, req)?;
    if req.files.is_empty()
        && req.selector.session.is_none()
        && !req.all
        && req.selector.locator.names_dir()
    {
        // `--agent`/`--dir`/`--pi`: the directory's archived transcripts too (whole-store
        // listings add them in `named_targets`).
        if let Some(dir) = address::session_dir(ctx, &req.selector.locator)? {
            let agent = req
                .selector
                .locator
                .agent
                .clone()
                .or_else(|| agent_of_path(&dir));
            found.extend(
                usage_archives(ctx, &dir)
                    .into_iter()
                    .map(|f| (f, agent.clone())),
            );
        }
    }
    if req.files.is_empty() && req.selector.session.is_none() {
        // A listed directory's trajectory sidecars are not sessions (openclaw-store.md §1.4).
        found.retain(|(p, _)| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().ends_with(".trajectory.jsonl"))
        });
    }
    if ctx.store().is_none() {
        use std::os::unix::fs::MetadataExt;
        let mut seen = std::collections::HashSet::new();
        found.retain(|(p, _)| match std::fs::metadata(p) {
            Ok(m) if m.is_file() => seen.insert((m.dev(), m.ino())),
            _ => true,
        });
    } else {
        let mut seen = std::collections::HashSet::new();
        found.retain(|(p, _)| seen.insert(p.clone()));
    }
    Ok(found)
}

/// The sessions named on the command line, each with its agent (trajectory sidecars and an
/// OpenClaw store's `archive/` left out of directory listings).
fn named_targets(
    ctx: &Ctx,
    req: &UsageRequest<'_>,
) -> anyhow::Result<Vec<(PathBuf, Option<String>)>> {
    let sel = req.selector;
    let whole_store =
        req.all || (req.files.is_empty() && !sel.locator.names_dir() && sel.session.is_none());
    if !whole_store {
        let paths = address::resolve_many(ctx, req.files, sel)?;
        return Ok(paths
            .into_iter()
            .map(|p| {
                let agent = sel.locator.agent.clone().or_else(|| agent_of_path(&p));
                (p, agent)
            })
            .collect());
    }
    let mut out = Vec::new();
    for (agent, dir) in crate::list::listed_dirs(ctx, &sel.locator, true)? {
        let listing = address::session_files(ctx, &dir);
        for (d, why) in &listing.unreadable {
            eprintln!("warning: {}: {why}", text::path(d));
        }
        let openclaw_store = ctx.store().is_none() && dir.join("sessions.json").is_file();
        out.extend(
            listing
                .files
                .into_iter()
                .filter(|f| !crate::list::is_sidecar_or_archive(&dir, f, openclaw_store))
                .map(|f| (f, agent.clone())),
        );
        out.extend(
            usage_archives(ctx, &dir)
                .into_iter()
                .map(|f| (f, agent.clone())),
        );
    }
    Ok(out)
}

/// The archived transcripts of an OpenClaw store's sessions directory that OpenClaw
/// 2026.6.11's cost summary counts (`isUsageCountedSessionTranscriptFileName`): the files of
/// `dir` itself (not of its sub-directories) named `<name>.reset.<ts>` or
/// `<name>.deleted.<ts>` with a valid archive timestamp, such as
/// `<id>.jsonl.reset.2026-06-12T09-00-00.000Z`, in name order. `.bak.` archives and other
/// names are not; nothing outside an OpenClaw store (a `dir` without `sessions.json`) or
/// through a Redis or SQLite backend.
fn usage_archives(ctx: &Ctx, dir: &Path) -> Vec<PathBuf> {
    use session_semantics::openclaw_store::{
        ArchiveReason, ArtifactKind, STORE_FILE_NAME, classify,
    };
    if ctx.store().is_some() || !dir.join(STORE_FILE_NAME).is_file() {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| {
            matches!(
                classify(&e.file_name().to_string_lossy()),
                ArtifactKind::Archive {
                    reason: ArchiveReason::Reset | ArchiveReason::Deleted,
                    ..
                }
            )
        })
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

/// Reads and counts every file: on 2+ threads for files (an atomic index, results in file
/// order), one at a time through a Redis or SQLite backend.
fn read_all(ctx: &Ctx, paths: &[PathBuf]) -> Vec<Result<SessionUsage, String>> {
    // Errors are without the path (the caller names it first); why a read failed is asked of
    // the backend only then.
    let read = |p: &Path| -> Result<Vec<u8>, String> {
        ctx.backend.read_session(p).map_err(|e| {
            ctx.backend
                .session_reason(p)
                .unwrap_or_else(|| crate::output::error_text_after_path(p, &e))
        })
    };
    let one = |bytes: Result<Vec<u8>, String>| -> Result<SessionUsage, String> {
        let bytes = bytes?;
        let s = session_usage(&bytes, None);
        if s.session_id.is_none() {
            return Err(if bytes.iter().all(u8::is_ascii_whitespace) {
                "not a session: the file is empty".to_owned()
            } else {
                "not a session: the first line that parses is not a session header \
                 ({\"type\":\"session\",\"id\":...})"
                    .to_owned()
            });
        }
        Ok(s)
    };
    if ctx.store().is_some() {
        return paths.iter().map(|p| one(read(p))).collect();
    }
    let threads = std::thread::available_parallelism()
        .map_or(2, std::num::NonZero::get)
        .clamp(2, 8)
        .min(paths.len().max(1));
    let next = AtomicUsize::new(0);
    let mut results: Vec<Option<Result<SessionUsage, String>>> = Vec::new();
    results.resize_with(paths.len(), || None);
    let parts: Vec<Vec<(usize, Result<SessionUsage, String>)>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut got = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(p) = paths.get(i) else { break };
                        got.push((i, one(read(p))));
                    }
                    got
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    for (i, r) in parts.into_iter().flatten() {
        results[i] = Some(r);
    }
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("not read".to_owned())))
        .collect()
}

/// The path a fork's `parentSession` names, relative paths taken from the fork's directory.
fn parent_path(fork: &Path, parent: &str) -> PathBuf {
    let p = address::expand_tilde(Path::new(parent));
    if p.is_absolute() {
        p
    } else {
        fork.parent().map_or(p.clone(), |d| d.join(&p))
    }
}

/// Marks the copied entries of every fork whose parent can be read; returns the warnings for
/// the forks whose parent cannot.
fn mark_fork_copies(
    ctx: &Ctx,
    paths: &[PathBuf],
    sessions: &mut [Result<SessionUsage, String>],
) -> Vec<String> {
    let forks: Vec<usize> = sessions
        .iter()
        .enumerate()
        .filter(|(_, s)| s.as_ref().is_ok_and(|s| s.parent_session.is_some()))
        .map(|(i, _)| i)
        .collect();
    let mut warnings = Vec::new();
    if forks.is_empty() {
        return warnings;
    }
    // A parent is looked up by its absolute path as written, then (only when that finds
    // nothing) by its canonical path (symlinks resolved): the common case costs no `readlink`.
    let lexical = |p: &Path| session_store::paths::resolve(p);
    let canonical = |p: &Path| -> PathBuf {
        if ctx.store().is_some() {
            session_store::paths::resolve(p)
        } else {
            std::fs::canonicalize(p).unwrap_or_else(|_| session_store::paths::resolve(p))
        }
    };
    let by_path: HashMap<PathBuf, usize> = paths
        .iter()
        .enumerate()
        .filter(|(i, _)| sessions[*i].is_ok())
        .map(|(i, p)| (lexical(p), i))
        .collect();
    let mut by_canonical: Option<HashMap<PathBuf, usize>> = None;
    let mut cache: HashMap<PathBuf, Result<HashSet<String>, String>> = HashMap::new();
    for i in forks {
        let Ok(s) = &sessions[i] else { continue };
        let Some(parent) = s.parent_session.clone() else {
            continue;
        };
        let written = lexical(&parent_path(&paths[i], &parent));
        let (pp, found) = match by_path.get(&written) {
            Some(&j) => (written, Some(j)),
            None => {
                let c = canonical(&written);
                let index = by_canonical.get_or_insert_with(|| {
                    by_path.iter().map(|(p, &j)| (canonical(p), j)).collect()
                });
                let j = index.get(&c).copied();
                (c, j)
            }
        };
        let ids = cache.entry(pp.clone()).or_insert_with(|| match found {
            Some(j) => match &sessions[j] {
                Ok(ps) => Ok(ps.ids()),
                Err(e) => Err(e.clone()),
            },
            None => ctx
                .backend
                .read_session(&pp)
                .map(|b| session_usage(&b, None).ids())
                .map_err(|e| crate::output::error_text_after_path(&pp, &e)),
        });
        match ids {
            Ok(ids) => {
                if let Ok(s) = &mut sessions[i] {
                    s.mark_copies(ids);
                }
            }
            Err(e) => warnings.push(format!(
                "{}: its parent session {} cannot be read ({e}); every entry of the fork is \
                 counted, copies of the parent's included",
                text::path(&paths[i]),
                text::safe(&parent)
            )),
        }
    }
    warnings
}

fn num(n: f64) -> JsValue {
    JsValue::Number(n)
}

pub(crate) fn counts_json(t: &Totals) -> JsObject {
    let mut o = JsObject::new();
    let n = |v: u64| num(v as f64);
    o.insert("messages", n(t.messages));
    let mut r = JsObject::new();
    for (role, c) in &t.by_role {
        r.insert(role.as_str(), n(*c));
    }
    o.insert("byRole", JsValue::Object(r));
    o.insert("customMessages", n(t.custom_messages));
    o.insert("compactions", n(t.compactions));
    o.insert("branchSummaries", n(t.branch_summaries));
    o.insert("assistantMessages", n(t.assistant_messages));
    o.insert("withoutUsage", n(t.without_usage));
    o.insert("notCountable", n(t.not_countable));
    o.insert("toolCalls", n(t.tool_calls));
    let u = &t.usage;
    o.insert("input", num(u.input));
    o.insert("output", num(u.output));
    o.insert("cacheRead", num(u.cache_read));
    o.insert("cacheWrite", num(u.cache_write));
    o.insert("totalTokens", num(u.total_tokens()));
    o.insert("cost", num(u.cost()));
    let mut c = JsObject::new();
    c.insert("input", num(u.cost_input));
    c.insert("output", num(u.cost_output));
    c.insert("cacheRead", num(u.cost_cache_read));
    c.insert("cacheWrite", num(u.cost_cache_write));
    o.insert("costParts", JsValue::Object(c));
    o.insert(
        "models",
        JsValue::Array(t.models.iter().map(|m| JsValue::from(m.as_str())).collect()),
    );
    o
}

/// A token count with thousands separators (exact: counts are integers in practice; any other
/// number as JavaScript prints it).
fn tokens(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        let s = text::thousands(n.abs() as usize);
        if n < 0.0 { format!("-{s}") } else { s }
    } else {
        session_format::json::number_to_string(n)
    }
}

fn cells(key: &str, t: &Totals) -> Vec<String> {
    let u = &t.usage;
    vec![
        text::safe(key).into_owned(),
        text::thousands(t.messages as usize),
        text::thousands(t.tool_calls as usize),
        tokens(u.input),
        tokens(u.output),
        tokens(u.cache_read),
        tokens(u.cache_write),
        tokens(u.total_tokens()),
        format!("${}", js_to_fixed(u.cost(), 3)),
    ]
}

fn write_table(report: &Report, by: By, out: &mut Output) -> anyhow::Result<()> {
    let head = match by {
        By::Day => "DAY",
        By::Month => "MONTH",
        By::Model => "MODEL",
        By::Session => "SESSION",
        By::Agent => "AGENT",
    };
    let heads = [
        head,
        "MESSAGES",
        "TOOL CALLS",
        "INPUT",
        "OUTPUT",
        "CACHE READ",
        "CACHE WRITE",
        "TOTAL TOKENS",
        "COST",
    ];
    let mut rows: Vec<Vec<String>> = report.rows.iter().map(|(k, t)| cells(k, t)).collect();
    rows.push(cells("TOTAL", &report.total));
    let mut widths: Vec<usize> = heads.iter().map(|h| text::width(h)).collect();
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(text::width(c));
        }
    }
    let line = |cells: &[&str]| -> String {
        let mut s = String::new();
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            if i == 0 {
                s.push_str(&text::pad(c, *w));
            } else {
                s.push_str("  ");
                s.push_str(&text::pad_left(c, *w));
            }
        }
        s.trim_end().to_owned()
    };
    out.line(&line(&heads))?;
    for r in &rows {
        let r: Vec<&str> = r.iter().map(String::as_str).collect();
        out.line(&line(&r))?;
    }
    let t = &report.total;
    out.line("")?;
    let mut no_usage = format!(
        "{} of {} assistant {} had no usage",
        text::thousands(t.without_usage as usize),
        text::thousands(t.assistant_messages as usize),
        if t.assistant_messages == 1 {
            "message"
        } else {
            "messages"
        }
    );
    if t.not_countable > 0 {
        no_usage.push_str(&format!(
            "; {} had usage that is not countable (it would make a sum infinite), not added",
            text::thousands(t.not_countable as usize)
        ));
    }
    out.line(&no_usage)?;
    let mut notes = vec![format!(
        "{} {}",
        text::thousands(report.sessions as usize),
        if report.sessions == 1 {
            "session"
        } else {
            "sessions"
        }
    )];
    if report.copies > 0 {
        notes.push(format!(
            "{} {} of forks not counted again (copies of their parent's)",
            text::thousands(report.copies as usize),
            if report.copies == 1 {
                "entry"
            } else {
                "entries"
            }
        ));
    }
    if report.filtered_out > 0 {
        notes.push(format!(
            "{} {} outside --since/--until",
            text::thousands(report.filtered_out as usize),
            if report.filtered_out == 1 {
                "entry"
            } else {
                "entries"
            }
        ));
    }
    if report.invalid_lines > 0 {
        notes.push(format!(
            "{} {} not JSON (skipped)",
            text::thousands(report.invalid_lines as usize),
            if report.invalid_lines == 1 {
                "line"
            } else {
                "lines"
            }
        ));
    }
    out.line(&notes.join("; "))?;
    Ok(())
}

/// `sessions usage`: every session is read and counted; one that cannot be read is reported
/// and the others are still summed (exit code 2).
/// The IANA name of the local time zone, for `--json`'s `timeZone`: `TZ` (a leading `:`
/// dropped) when it names a zone of `/usr/share/zoneinfo` (or is a path into it); with `TZ`
/// unset, the zone `/etc/localtime` links to; else `local` (a POSIX rule such as `JST-9`, an
/// empty `TZ`, a copied `/etc/localtime`).
fn local_zone_name() -> String {
    const ZONEINFO: &str = "/usr/share/zoneinfo/";
    let from_path = |p: &Path| -> Option<String> {
        let s = p.to_str()?;
        let i = s.find("zoneinfo/")?;
        let name = &s[i + "zoneinfo/".len()..];
        (!name.is_empty()).then(|| name.to_owned())
    };
    let name = match std::env::var_os("TZ") {
        Some(tz) => {
            let tz = tz.to_string_lossy().into_owned();
            let tz = tz.strip_prefix(':').unwrap_or(&tz).to_owned();
            if tz.starts_with('/') {
                from_path(Path::new(&tz))
            } else {
                let known = !tz.is_empty()
                    && !tz.split('/').any(|c| c.is_empty() || c == "." || c == "..")
                    && Path::new(ZONEINFO).join(&tz).is_file();
                known.then_some(tz)
            }
        }
        None => std::fs::read_link("/etc/localtime")
            .ok()
            .and_then(|p| from_path(&p)),
    };
    name.unwrap_or_else(|| "local".to_owned())
}

/// For `--by session`: one warning per session id that several read files share (their
/// counts are summed in that id's one row), worded as `sessions list` words it, the files
/// sorted by path.
fn shared_id_warnings(paths: &[PathBuf], sessions: &[Result<SessionUsage, String>]) -> Vec<String> {
    let mut groups: std::collections::BTreeMap<&str, std::collections::BTreeSet<&Path>> =
        std::collections::BTreeMap::new();
    for (p, s) in paths.iter().zip(sessions) {
        if let Ok(SessionUsage {
            session_id: Some(id),
            ..
        }) = s
        {
            groups.entry(id.as_str()).or_default().insert(p.as_path());
        }
    }
    groups
        .into_iter()
        .filter(|(_, ps)| ps.len() > 1)
        .map(|(id, ps)| {
            let ps: Vec<String> = ps.into_iter().map(text::path).collect();
            format!(
                "{} files share the session id \"{}\" (--by session sums them in one row): {}",
                ps.len(),
                text::safe(id),
                ps.join(", ")
            )
        })
        .collect()
}

pub(crate) fn run(ctx: &Ctx, req: &UsageRequest<'_>, out: &mut Output) -> anyhow::Result<Outcome> {
    let targets = targets(ctx, req)?;
    let paths: Vec<PathBuf> = targets.iter().map(|(p, _)| p.clone()).collect();
    let mut sessions = read_all(ctx, &paths);
    let mut warnings = mark_fork_copies(ctx, &paths, &mut sessions);
    if req.by == By::Session {
        warnings.extend(shared_id_warnings(&paths, &sessions));
    }
    for w in &warnings {
        out.warn(w)?;
    }
    let options = ReportOptions {
        group: req.by.group(),
        tz: if req.utc { Tz::Utc } else { Tz::Local },
        since: req.since,
        until: req.until,
    };
    let mut report = Report::new(options);
    let mut errors: Vec<(String, String)> = Vec::new();
    for ((path, agent), s) in targets.iter().zip(&sessions) {
        match s {
            Ok(s) => report.add(s, s.session_id.as_deref().unwrap_or(""), agent.as_deref()),
            Err(e) => {
                if !req.json {
                    out.error(&format!("{}: {e}", text::path(path)))?;
                }
                errors.push((path.display().to_string(), e.clone()));
            }
        }
    }
    if req.json {
        let mut o = JsObject::new();
        o.insert("by", JsValue::from(options.group.as_str()));
        o.insert(
            "timeZone",
            JsValue::from(if req.utc {
                "UTC".to_owned()
            } else {
                local_zone_name()
            }),
        );
        let iso = |t: Option<i64>| {
            t.and_then(session_format::time::to_iso_string)
                .map_or(JsValue::Null, |s| JsValue::from(s.as_str()))
        };
        o.insert("since", iso(req.since));
        o.insert("until", iso(req.until));
        o.insert("sessions", num(report.sessions as f64));
        let rows = report
            .rows
            .iter()
            .map(|(k, t)| {
                let mut r = JsObject::new();
                r.insert("key", JsValue::from(k.as_str()));
                for (name, v) in counts_json(t).iter() {
                    r.insert(name.clone(), v.clone());
                }
                JsValue::Object(r)
            })
            .collect();
        o.insert("rows", JsValue::Array(rows));
        o.insert("total", JsValue::Object(counts_json(&report.total)));
        o.insert("copiesSkipped", num(report.copies as f64));
        o.insert("filteredOut", num(report.filtered_out as f64));
        o.insert("invalidLines", num(report.invalid_lines as f64));
        o.insert(
            "warnings",
            JsValue::Array(warnings.iter().map(|w| JsValue::from(w.as_str())).collect()),
        );
        o.insert(
            "errors",
            JsValue::Array(
                errors
                    .iter()
                    .map(|(f, e)| {
                        let mut eo = JsObject::new();
                        eo.insert("file", JsValue::from(f.as_str()));
                        eo.insert("error", JsValue::from(e.as_str()));
                        JsValue::Object(eo)
                    })
                    .collect(),
            ),
        );
        out.line(&session_format::normalize::to_json_string_indented(
            &JsValue::Object(o),
            2,
        ))?;
    } else if report.sessions == 0 && errors.is_empty() {
        out.line("no sessions found")?;
    } else {
        write_table(&report, req.by, out)?;
    }
    Ok(if errors.is_empty() {
        Outcome::Ok
    } else {
        Outcome::Failed
    })
}
