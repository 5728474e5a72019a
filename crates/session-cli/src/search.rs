//! `sessions search PATTERN [FILE…]`: a literal or a regex on every branch of every session of
//! a store, through [`session_query::search`]; read-only.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use clap::Args;
use session_format::json::{JsObject, JsValue, to_json_string};
use session_query::search::{
    Field, FieldSet, Hit, ScanStats, SearchOptions, Searcher, is_v1_header, mark_hits,
};
use session_store::SessionManager;

use crate::address::{self, SessionSelector};
use crate::ctx::Ctx;
use crate::outcome::{Outcome, UsageError};
use crate::output::{self, Output};
use crate::{fsx, list, text};

pub(crate) const LONG_ABOUT: &str = "\
Search the sessions of a store for a literal (or, with -e, a regex) on every branch, read-only:
the text of user and assistant messages, thinking, tool-call names and arguments, tool results,
compaction and branch summaries, custom messages and labels. JSON string escapes are decoded
before matching (a search for café finds caf\\u00e9); ids, object keys and other values (model
names, image data, details) are matched only when --fields names them (a v1 file's ids, which
exist only in its in-memory migration, too: with --fields id such a file is opened, even for -c). Each hit is one entry,
marked on-branch when it lies on the session's current branch (the path from the current leaf
to the root, what the next turn continues) and off-branch otherwise (an abandoned branch).

Sessions: FILEs; or --session NAME with --agent/--dir/--pi; or every *.jsonl of the --agent,
--dir or --pi sessions directory and of its immediate sub-directories; or, by default and with
--all, every agent of the OpenClaw store at --root (its SQLite databases for 2026.8+ installs;
--backend redis://… or sqlite:PATH reads those). Trajectory sidecars are not searched.

Output, one line per hit:
  PATH:LINE: ENTRY_ID ROLE TIME on-branch|off-branch FIELD: …before MATCH after…
ROLE is the message role, or the entry type for other entries; TIME the entry's timestamp as
stored; the snippet keeps --context characters on each side of the first match in the entry
(the match highlighted on a terminal, unless NO_COLOR is set), with a backslash written as \\\\ and control and
bidirectional characters escaped as \\u{hex} (a newline as \\u{a}).
With -c: `PATH:N` for each session with N hits (ripgrep's -c). With --json, one object per
line:
  {\"session\", \"sessionId\", \"agent\", \"line\", \"byte\", \"entryId\", \"type\", \"role\",
   \"timestamp\", \"onCurrentBranch\", \"model\", \"field\", \"matches\", \"before\", \"match\",
   \"after\"}
(`line` 1-based, `byte` the line's offset, `matches` the entry's match count over the searched
fields, `field` that of the first match, `model` the provider/model in effect at the entry;
null where a value is unknown); with -c --json: {\"session\", \"agent\", \"count\"}.

Lines that are not JSON: a line that could hold a match (it holds the bytes every match starts
with, or a \\uXXXX escape; with a pattern without such bytes, every line) but is not JSON, such
as a torn last line, is skipped and reported on stderr, also with --json and -c, one warning per
session: `warning: PATH: N lines that could hold a match are not JSON and were not searched: line
L (byte B) and N-1 more` (B the line's offset). Other lines are not read as JSON (they cannot
hold a match); `sessions check` reports every line that is not JSON.

Exit codes (grep's): 0 some hit, 1 no hit, 2 an error (a session that could not be read is
reported on stderr and the others are still searched). Lines that are not JSON do not change the
exit code: it is 0 or 1 by the hits in the rest of the session, as grep's is for the lines it
can read.

Speed: sessions are searched in parallel; a line is parsed only when it holds the bytes every
match must start with (or a \\uXXXX escape that could spell them), so a store is scanned at
close to the speed of reading it. Printing hits (not -c) re-reads each session that has any,
in full, for the branch markers.";

/// The arguments of `sessions search`.
#[derive(Debug, Args)]
pub(crate) struct SearchArgs {
    /// What to search for: a literal, or a regex with -e.
    pattern: String,
    /// Session files (or use --agent/--dir/--pi, optionally with --session; by default every
    /// agent of the store).
    pub(crate) files: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) selector: SessionSelector,
    /// Search every agent of the store (the default when no FILE and none of --agent, --dir,
    /// --pi is given).
    #[arg(long, conflicts_with_all = ["agent", "dir", "pi", "session"])]
    all: bool,
    /// PATTERN is a regex (the regex crate's syntax, which is ripgrep's).
    #[arg(short = 'e', long)]
    regex: bool,
    /// Case-insensitive.
    #[arg(short = 'i', long)]
    ignore_case: bool,
    /// Whole words only (no word character right before or after a match).
    #[arg(short = 'w', long = "word-regexp")]
    word: bool,
    /// The fields to search, comma-separated: text, thinking, tool, args, result, summary,
    /// custom, label, id, key, other, or all [default: all but id, key and other].
    #[arg(long, value_name = "LIST", value_parser = parse_fields)]
    fields: Option<FieldSet>,
    /// Only messages with this role: user, assistant, toolResult, bashExecution or custom
    /// (branch summaries, compactions and custom messages are entry types: see --type); repeat or comma-separate for several (another name
    /// is a usage error).
    #[arg(long, value_name = "ROLE", value_delimiter = ',')]
    role: Vec<String>,
    /// Only entries of this type: message, thinking_level_change, model_change, compaction,
    /// branch_summary, custom, custom_message, label, session_info, reset or leaf; repeat or
    /// comma-separate for several (another name is a usage error).
    #[arg(long = "type", value_name = "TYPE", value_delimiter = ',')]
    types: Vec<String>,
    /// Only entries at or after this time (ISO 8601, UTC unless it has an offset, or epoch
    /// milliseconds); entries without a time are left out.
    #[arg(long, value_name = "TIME", value_parser = crate::archive::parse_now)]
    since: Option<i64>,
    /// Only entries at or before this time (inclusive, as --since; a --since after it is a
    /// usage error).
    #[arg(long, value_name = "TIME", value_parser = crate::archive::parse_now)]
    until: Option<i64>,
    /// Only entries made under a model whose provider/model contains this text
    /// (case-insensitive): an assistant message's own, else the nearest earlier assistant
    /// message's or model change's on its branch.
    #[arg(long, value_name = "TEXT")]
    model: Option<String>,
    /// At most N hits per session (the first by line).
    #[arg(short = 'm', long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_count: Option<u64>,
    /// At most N hits in all (the first sessions' first).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    limit: Option<u64>,
    /// Print `PATH:N` per session with hits instead of the hits.
    #[arg(short = 'c', long)]
    count: bool,
    /// Characters of context on each side of the match in a snippet.
    #[arg(long, value_name = "N", default_value_t = 40)]
    context: usize,
    /// Print JSON lines (shape in `sessions search --help`).
    #[arg(long)]
    json: bool,
}

fn parse_fields(s: &str) -> Result<FieldSet, String> {
    FieldSet::parse(s).map_err(|e| e.to_string())
}

/// The sessions to search, each with its agent: the FILEs or the one `--session`; else the
/// `*.jsonl` files of the named sessions directory (or of every agent's), without OpenClaw's
/// trajectory sidecars and `archive/`; and whether a directory could not be read (reported on
/// stderr).
fn sessions(ctx: &Ctx, a: &SearchArgs) -> anyhow::Result<(Vec<Named>, bool)> {
    let sel = &a.selector;
    if !a.files.is_empty() || sel.session.is_some() {
        let paths = address::resolve_many(ctx, &a.files, sel)?;
        let agent = sel.locator.agent.clone();
        return Ok((
            paths.into_iter().map(|p| (agent.clone(), p)).collect(),
            false,
        ));
    }
    let mut found = Vec::new();
    let mut unreadable = false;
    for (agent, dir) in list::listed_dirs(ctx, &sel.locator, a.all || !sel.locator.names_dir())? {
        let listing = address::session_files(ctx, &dir);
        for (d, why) in &listing.unreadable {
            eprintln!("error: {}: {why}", text::path(d));
            unreadable = true;
        }
        let openclaw_store = ctx.store().is_none() && dir.join("sessions.json").is_file();
        found.extend(
            listing
                .files
                .into_iter()
                .filter(|p| !list::is_sidecar_or_archive(&dir, p, openclaw_store))
                .map(|p| (agent.clone(), p)),
        );
    }
    Ok((found, unreadable))
}

/// A session to search and its agent.
type Named = (Option<String>, PathBuf);

/// A file's device and inode.
type FileId = (u64, u64);

/// What one session gave.
enum Searched {
    Hits {
        hits: Vec<Hit>,
        session_id: Option<String>,
        /// The scan's counters (lines that are not JSON).
        stats: ScanStats,
    },
    Failed(String),
    /// A second name of a file already searched.
    Duplicate,
}

/// `sessions search`.
pub(crate) fn run(ctx: &Ctx, a: &SearchArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let opts = SearchOptions {
        pattern: a.pattern.clone(),
        regex: a.regex,
        ignore_case: a.ignore_case,
        word: a.word,
        fields: a.fields.unwrap_or_default(),
        roles: a.role.clone(),
        types: a.types.clone(),
        since_ms: a.since,
        until_ms: a.until,
        model: a.model.clone(),
        context_chars: a.context,
    };
    crate::archive::check_window(a.since, a.until, true)?;
    let searcher = Searcher::new(opts).map_err(|e| UsageError::new(e.to_string()))?;
    // A directory that could not be read is an error (exit code 2, as `grep -r`); the rest is
    // still searched.
    let (sessions, unreadable_dir) = sessions(ctx, a)?;
    let per_session = a
        .max_count
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    // Branch markers (and the model filter) need the session's tree; counts do not.
    let tree = !a.count || searcher.needs_tree_filter();
    let results = match ctx.store() {
        None => search_files(&searcher, &sessions, per_session, tree),
        Some(_) => sessions
            .iter()
            .map(|(_, p)| search_stored(ctx, &searcher, p, per_session, tree))
            .collect(),
    };

    let color = !a.json && text::stdout_color();
    let mut left = a.limit.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    let mut any_hit = false;
    let mut failed = unreadable_dir;
    for ((agent, path), result) in sessions.iter().zip(results) {
        let (mut hits, session_id) = match result {
            Searched::Hits {
                hits,
                session_id,
                stats,
            } => {
                if let Some(w) = invalid_lines_warning(path, &stats) {
                    out.warn(&w)?;
                }
                (hits, session_id)
            }
            Searched::Failed(msg) => {
                out.error(&msg)?;
                failed = true;
                continue;
            }
            Searched::Duplicate => continue,
        };
        if let Some(n) = left {
            hits.truncate(n);
            left = Some(n - hits.len());
        }
        if hits.is_empty() {
            if left == Some(0) {
                break;
            }
            continue;
        }
        any_hit = true;
        if a.count {
            write_count(out, path, agent.as_deref(), hits.len(), a.json)?;
        } else {
            for h in &hits {
                if a.json {
                    out.line(&hit_json(path, session_id.as_deref(), agent.as_deref(), h))?;
                } else {
                    out.line(&hit_text(path, h, color))?;
                }
            }
        }
        if left == Some(0) {
            break;
        }
    }
    Ok(if failed {
        Outcome::Failed
    } else if any_hit {
        Outcome::Ok
    } else {
        Outcome::Problems
    })
}

/// The warning for a session with candidate lines (lines that could hold a match) that are not
/// JSON, skipped: how many, and where the first one is.
fn invalid_lines_warning(path: &Path, stats: &ScanStats) -> Option<String> {
    let first = stats.first_invalid?;
    let n = stats.invalid_lines;
    let (lines, verb) = if n == 1 {
        ("line that could hold a match is", "was")
    } else {
        ("lines that could hold a match are", "were")
    };
    let more = if n > 1 {
        format!(" and {} more", text::thousands(n - 1))
    } else {
        String::new()
    };
    Some(format!(
        "{}: {} {lines} not JSON and {verb} not searched: line {} (byte {}){more}",
        text::path(path),
        text::thousands(n),
        first.line,
        first.byte,
    ))
}

/// Searches files in parallel (one thread per core, sessions handed out in order), results in
/// the order of `sessions`; a file reached again through another name is searched once.
fn search_files(
    searcher: &Searcher,
    sessions: &[(Option<String>, PathBuf)],
    per_session: Option<usize>,
    tree: bool,
) -> Vec<Searched> {
    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism()
        .map_or(2, std::num::NonZero::get)
        .min(sessions.len().max(1));
    let mut results: Vec<Option<(Searched, Option<FileId>)>> =
        (0..sessions.len()).map(|_| None).collect();
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    let mut buf = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some((_, path)) = sessions.get(i) else {
                            break;
                        };
                        done.push((i, search_file(searcher, path, per_session, tree, &mut buf)));
                    }
                    done
                })
            })
            .collect();
        for w in workers {
            for (i, r) in w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)) {
                results[i] = Some(r);
            }
        }
    });
    // A file reached again through another name (same device and inode) counts once, under
    // its first name.
    let mut seen = HashSet::new();
    results
        .into_iter()
        .map(|r| match r {
            Some((r, Some(file_id))) if !seen.insert(file_id) => {
                drop(r);
                Searched::Duplicate
            }
            Some((r, _)) => r,
            None => Searched::Duplicate,
        })
        .collect()
}

/// Whether the scan goes on after `found` hits: with the model filter every hit is kept (it
/// drops hits after the scan), else up to the per-session cap.
fn wants_more(found: usize, per_session: Option<usize>, model_filter: bool) -> bool {
    model_filter || per_session.is_none_or(|n| found < n)
}

/// One file: the streaming scan (through the thread's `buf`), then (when it has hits and
/// `tree`) its read-only open; with the file's device and inode.
fn search_file(
    searcher: &Searcher,
    path: &Path,
    per_session: Option<usize>,
    tree: bool,
    buf: &mut Vec<u8>,
) -> (Searched, Option<FileId>) {
    use std::os::unix::fs::MetadataExt;
    let fail = |e: anyhow::Error| failed(path, &output::error_text_after_path(path, &e));
    // Only a regular file is opened (a FIFO would block the open).
    let meta = match std::fs::metadata(path) {
        Ok(m) if m.is_file() => m,
        _ => {
            let why = fsx::session_file_reason(path);
            return (
                failed(path, why.as_deref().unwrap_or("not a regular file")),
                None,
            );
        }
    };
    let file_id = Some((meta.dev(), meta.ino()));
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => return (fail(e.into()), file_id),
    };
    let mut hits = Vec::new();
    let model = searcher.needs_tree_filter();
    let scanned = searcher.search_reader_in(file, buf, |h| {
        hits.push(h);
        wants_more(hits.len(), per_session, model)
    });
    let stats = match scanned {
        Ok(stats) => stats,
        Err(e) => return (fail(e.into()), file_id),
    };
    // A v1 file's ids exist only in the open's migration: with --fields id it is opened.
    let v1 = searcher.options().fields.contains(Field::Id)
        && session_store::io::read_first_line(path)
            .ok()
            .flatten()
            .is_some_and(|h| is_v1_header(&h));
    let r = finish(searcher, hits, stats, per_session, tree, v1, || {
        SessionManager::open_read_only(path, None)
            .map(|ro| ro.session)
            .map_err(anyhow::Error::from)
    })
    .unwrap_or_else(fail);
    (r, file_id)
}

/// One session of a Redis or SQLite store: its bytes, then (as [`search_file`]) its open.
fn search_stored(
    ctx: &Ctx,
    searcher: &Searcher,
    path: &Path,
    per_session: Option<usize>,
    tree: bool,
) -> Searched {
    let fail = |e: anyhow::Error| failed(path, &output::error_text_after_path(path, &e));
    let bytes = match ctx.backend.read_session(path) {
        Ok(b) => b,
        // Why, without the path (asked of the store only when the read failed).
        Err(e) => match ctx.backend.session_reason(path) {
            Some(why) => return failed(path, &why),
            None => return fail(e),
        },
    };
    let mut hits = Vec::new();
    let model = searcher.needs_tree_filter();
    let stats = searcher.search_bytes(&bytes, |h| {
        hits.push(h);
        wants_more(hits.len(), per_session, model)
    });
    let v1 = searcher.options().fields.contains(Field::Id)
        && is_v1_header(bytes.split(|&b| b == b'\n').next().unwrap_or(&[]));
    finish(searcher, hits, stats, per_session, tree, v1, || {
        ctx.backend.open_read_only(path).map(|ro| ro.session)
    })
    .unwrap_or_else(fail)
}

/// A session that could not be searched: `PATH: WHY` (`why` without the path).
fn failed(path: &Path, why: &str) -> Searched {
    Searched::Failed(format!("{}: {why}", text::path(path)))
}

/// Marks the hits against the session's open (only when there are hits and `tree`), searches
/// a v1 file's rows again with their migrated ids (`v1`: with --fields id; the open is then
/// made even without hits), and applies the per-session cap.
fn finish(
    searcher: &Searcher,
    mut hits: Vec<Hit>,
    stats: ScanStats,
    per_session: Option<usize>,
    tree: bool,
    v1: bool,
    open: impl FnOnce() -> anyhow::Result<SessionManager>,
) -> anyhow::Result<Searched> {
    let mut session_id = None;
    if v1 || (tree && !hits.is_empty()) {
        let sm = open()?;
        if v1 {
            searcher.rescan_migrated_rows(&sm, &mut hits);
        }
        if tree && !hits.is_empty() {
            mark_hits(&mut hits, &sm, searcher.options().model.as_deref());
            session_id = Some(sm.get_session_id().to_owned());
        }
    }
    if let Some(n) = per_session {
        hits.truncate(n);
    }
    Ok(Searched::Hits {
        hits,
        session_id,
        stats,
    })
}

fn write_count(
    out: &mut Output,
    path: &Path,
    agent: Option<&str>,
    n: usize,
    json: bool,
) -> std::io::Result<()> {
    if json {
        let mut o = JsObject::new();
        o.insert("session", JsValue::from(path.display().to_string()));
        o.insert("agent", agent.map_or(JsValue::Null, JsValue::from));
        o.insert("count", JsValue::Number(n as f64));
        out.line(&to_json_string(&JsValue::Object(o)))
    } else {
        out.line(&format!("{}:{n}", text::path(path)))
    }
}

fn opt_str(s: Option<&str>) -> JsValue {
    s.map_or(JsValue::Null, JsValue::from)
}

fn hit_json(path: &Path, session_id: Option<&str>, agent: Option<&str>, h: &Hit) -> String {
    let mut o = JsObject::new();
    o.insert("session", JsValue::from(path.display().to_string()));
    o.insert("sessionId", opt_str(session_id));
    o.insert("agent", opt_str(agent));
    o.insert("line", JsValue::Number(h.line as f64));
    o.insert("byte", JsValue::Number(h.byte as f64));
    o.insert("entryId", opt_str(h.entry_id.as_deref()));
    o.insert("type", JsValue::from(h.entry_type.as_str()));
    o.insert("role", opt_str(h.role.as_deref()));
    o.insert("timestamp", opt_str(h.timestamp.as_deref()));
    o.insert(
        "onCurrentBranch",
        h.on_current_branch.map_or(JsValue::Null, JsValue::Bool),
    );
    o.insert("model", opt_str(h.model.as_deref()));
    o.insert("field", JsValue::from(h.field.as_str()));
    o.insert("matches", JsValue::Number(h.matches as f64));
    o.insert("before", JsValue::from(h.before.as_str()));
    o.insert("match", JsValue::from(h.matched.as_str()));
    o.insert("after", JsValue::from(h.after.as_str()));
    to_json_string(&JsValue::Object(o))
}

fn hit_text(path: &Path, h: &Hit, color: bool) -> String {
    let marker = match h.on_current_branch {
        Some(true) => "on-branch",
        Some(false) => "off-branch",
        None => "-",
    };
    let (open, close) = if color {
        ("\x1b[1;31m", "\x1b[0m")
    } else {
        ("", "")
    };
    format!(
        "{}:{}: {} {} {} {} {}: {}{}{}{}{}",
        text::path(path),
        h.line,
        text::safe(h.entry_id.as_deref().unwrap_or("-")),
        text::safe(h.role.as_deref().unwrap_or(&h.entry_type)),
        text::safe(h.timestamp.as_deref().unwrap_or("-")),
        marker,
        h.field.as_str(),
        snippet(&h.before),
        open,
        snippet(&h.matched),
        close,
        snippet(&h.after),
    )
}

/// A part of a text-mode snippet: a backslash as `\\`, then control and bidirectional
/// characters as `\u{hex}` ([`text::safe`]), so that an escape is never confused with the same
/// characters in the transcript (the text `\n` shows as `\\n`, a newline as `\u{a}`).
fn snippet(s: &str) -> String {
    if s.contains('\\') {
        text::safe(&s.replace('\\', "\\\\")).into_owned()
    } else {
        text::safe(s).into_owned()
    }
}
