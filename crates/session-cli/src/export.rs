//! `sessions export`: a session as JSON (everything), JSONL (the current branch re-chained as
//! pi's `exportToJsonl` does), Markdown (the current branch as a conversation) or one
//! self-contained HTML page (the whole tree, collapsible, labels and the current branch
//! highlighted, no network access). Output goes to stdout or, with `-o`, through
//! `session_store::io` to a new file.

mod html;

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use session_format::entry::EntryType;
use session_format::json::{JsObject, JsValue, to_json_string};
use session_format::normalize::to_json_string_indented;
use session_store::SessionManager;

use crate::ctx::Ctx;
use crate::fsx;
use crate::model;
use crate::outcome::UsageError;
use crate::output::Output;
use crate::progress::Progress;
use crate::render::{self, field};
use crate::text::{self, ShortIds};

pub(crate) const LONG_ABOUT: &str = "\
Export a session, read-only, to stdout or to a new file (-o OUT).

Formats:
  json      {\"header\": header, \"leafId\": id | null, \"entries\": [entry]}: the header and every
            entry in file order (all branches), as reads report them, indented by 2.
  jsonl     the current branch as a new linear session, as pi's exportToJsonl writes it: a header
            {type:\"session\", version:3, id (the same session id), timestamp (now), cwd} without
            parentSession, then every entry from the root to the leaf with its parentId set to the
            previous entry's id (null for the first), one JSON object per line.
  markdown  the current branch as a conversation: user and assistant text, tool calls and
            results in fenced blocks, model/thinking changes, compactions and labels; names and
            ids in CommonMark code spans; control and bidirectional-text characters escaped
            (\\u{202e}).
  html      one self-contained page (inline CSS and script, no network access): the session
            viewer. Left, a tree of every entry (branch points, labels, compactions, branch
            summaries; the path to the current leaf highlighted, the leaf marked; branches of
            more than 12 entries off the current path folded) with a search box and pi's
            filters (default, no tools, user, labeled, all); right, the messages of the
            selected path (the current branch until a tree node is clicked): Markdown rendered
            and sanitised at export time, tool calls with their results (errors marked),
            thinking and tool output toggles; the totals `usage --json` gives for the file; a
            download of the file's exact bytes. A link to #entry-<id> (or #e-<id>) selects and
            shows an entry; each tree node carries the entry's full id (data-id) and line
            (data-line). The session travels in the page as one payload (the file's bytes,
            the tree, the rendered Markdown), compressed when over 1.5 MiB, that the page's
            script renders; a compressed page renders the current branch first.

Every format is written as it is produced (stdout, or the -o file), so memory does not grow
with the output.

Output: stdout by default, or `-o -`. -o OUT writes a new regular file with mode 0600 and
refuses to replace an existing one unless --force. With --force an existing regular file is
replaced atomically (a new file written next to it and renamed over it, so hard links to the old
file keep the old contents); the result keeps the replaced file's mode bits (permissions, and
setuid/setgid/sticky) and, where the process may set them, its owner and group; a symlink to a
regular file is followed and its target replaced. OUT must be a regular file or a missing path:
a directory, FIFO, socket or device is refused even with --force, and so is a dangling symlink.
It is never the session file itself, and never, even with --force, a file an OpenClaw
sessions directory manages (sessions.json anywhere; in a directory holding sessions.json a
transcript, an archive, a sidecar, a checkpoint, a store temp file or backup), a sessions
directory's audit log (sessions-audit.log) or write lock (*.jsonl.lock), or any file whose
first line is a session header; through a symlink, the file it leads to counts. Without --force, a jsonl export into a directory holding
sessions.json is refused: it keeps the session id, so the store would hold two files with one
header id.

The session must be a session file: a file without a readable header and without entries is an
error. When the header is corrupt but entries can be read, they are exported under the header a
writable open would use (promoted from a later line, or made up with a new session id and the
current directory as cwd), with a warning on stderr.";

/// Export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// The header and every entry as one JSON document.
    Json,
    /// The current branch re-chained (pi's exportToJsonl).
    Jsonl,
    /// The current branch as a Markdown conversation.
    #[value(alias = "md")]
    Markdown,
    /// One self-contained HTML page with the whole tree.
    Html,
}

/// `text` (a value serialised by `to_json_string_indented(_, 2)`) re-indented to sit `depth`
/// levels deep: every line after the first gains `2 * depth` spaces. Exact, because a
/// serialised string never holds a raw line feed (it is escaped as `\n`).
fn nest(text: &str, depth: usize) -> String {
    let pad = format!("\n{}", " ".repeat(2 * depth));
    text.replace('\n', &pad)
}

/// Could `parse_value` refuse `json` as nested too deeply? It needs more than
/// [`session_format::json::MAX_DEPTH`] `{`/`[` bytes and more than twice as many bytes in all
/// (the store's own pre-filter). A `true` only sends the row to a full parse.
fn may_be_too_deep(json: &[u8]) -> bool {
    let limit = session_format::json::MAX_DEPTH;
    json.len() > 2 * limit && memchr::memchr2_iter(b'{', b'[', json).nth(limit).is_some()
}

/// Fails, before anything is written, with the error the export would meet midway: the first
/// of `entries` whose row cannot be decoded (nested too deeply), so that a failed export to
/// stdout prints nothing.
fn check_decodable<'a>(
    entries: impl IntoIterator<Item = session_store::EntryRef<'a>>,
) -> anyhow::Result<()> {
    for e in entries {
        if may_be_too_deep(e.raw_bytes()) {
            e.value()?;
        }
    }
    Ok(())
}

/// Bytes of the rows of `entries` (each with its line feed): the progress bar's total.
fn row_bytes<'a>(entries: impl IntoIterator<Item = session_store::EntryRef<'a>>) -> u64 {
    entries
        .into_iter()
        .map(|e| e.raw_bytes().len() as u64 + 1)
        .sum()
}

/// The JSON export, streamed to `w` entry by entry: exactly the bytes of
/// `to_json_string_indented({"header", "leafId", "entries"}, 2)` plus a line feed, without
/// holding more than one entry's text.
///
/// # Errors
/// A row that cannot be decoded (checked before the first byte is written); a write failure.
pub(crate) fn write_json_doc(
    sm: &SessionManager,
    w: &mut dyn Write,
    progress: &Progress,
) -> anyhow::Result<()> {
    check_decodable(sm.get_entries())?;
    let header = sm.get_header()?.unwrap_or(JsValue::Null);
    let leaf = sm.get_leaf_id().map_or(JsValue::Null, JsValue::from);
    let mut s = String::from("{\n  \"header\": ");
    s.push_str(&nest(&to_json_string_indented(&header, 2), 1));
    s.push_str(",\n  \"leafId\": ");
    s.push_str(&to_json_string_indented(&leaf, 2));
    s.push_str(",\n  \"entries\": ");
    let mut any = false;
    for e in sm.get_entries() {
        let v = e.value()?;
        s.push_str(if any { ",\n    " } else { "[\n    " });
        any = true;
        s.push_str(&nest(&to_json_string_indented(&v, 2), 2));
        w.write_all(s.as_bytes())?;
        s.clear();
        progress.inc(e.raw_bytes().len() as u64 + 1);
    }
    s.push_str(if any { "\n  ]\n}\n" } else { "[]\n}\n" });
    w.write_all(s.as_bytes())?;
    Ok(())
}

/// The JSONL export (pi-format.md §2.6), streamed to `w` line by line; the new header's
/// `timestamp` is `now_ms` (the run's clock, the global `--now`).
///
/// # Errors
/// A row that cannot be decoded (checked before the first byte is written); a write failure.
pub(crate) fn write_jsonl(
    sm: &SessionManager,
    now_ms: i64,
    w: &mut dyn Write,
    progress: &Progress,
) -> anyhow::Result<()> {
    let branch = sm.get_branch(None);
    check_decodable(branch.iter().copied())?;
    let mut header = JsObject::new();
    header.insert("type", JsValue::from("session"));
    header.insert("version", JsValue::Number(3.0));
    header.insert("id", JsValue::from(sm.get_session_id()));
    header.insert(
        "timestamp",
        JsValue::from(session_format::time::to_iso_string(now_ms).unwrap_or_default()),
    );
    header.insert("cwd", JsValue::from(sm.get_cwd()));
    let mut out = to_json_string(&JsValue::Object(header));
    out.push('\n');
    w.write_all(out.as_bytes())?;
    let mut prev: Option<&str> = None;
    for e in &branch {
        let mut v = e.value()?;
        if let Some(o) = v.as_object_mut() {
            o.insert("parentId", prev.map_or(JsValue::Null, JsValue::from));
        }
        let mut line = to_json_string(&v);
        line.push('\n');
        w.write_all(line.as_bytes())?;
        progress.inc(e.raw_bytes().len() as u64 + 1);
        prev = Some(e.id());
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Markdown

fn fence_for(s: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in s.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

fn fenced(lang: &str, body: &str) -> String {
    let f = fence_for(body);
    let body = body.trim_end_matches('\n');
    format!("{f}{lang}\n{body}\n{f}\n")
}

/// A CommonMark code span: a backtick fence longer than any run of backticks inside, a space
/// of padding when the text starts or ends with a backtick, and nothing escaped inside.
fn md_code(s: &str) -> String {
    let s = text::one_line(s);
    if s.is_empty() {
        return "(empty)".to_owned();
    }
    let mut longest = 0;
    let mut run = 0;
    for c in s.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let fence = "`".repeat(longest + 1);
    if s.starts_with('`') || s.ends_with('`') {
        format!("{fence} {s} {fence}")
    } else {
        format!("{fence}{s}{fence}")
    }
}

fn md_inline(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in text::one_line(s).chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '|'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Markdown for content blocks.
fn md_content(content: Option<&JsValue>, out: &mut String) {
    match content {
        None | Some(JsValue::Null) => {}
        Some(JsValue::String(s)) => {
            out.push_str(s.to_str_lossy().trim_end());
            out.push_str("\n\n");
        }
        Some(JsValue::Array(blocks)) => {
            for b in blocks {
                match field(b, "type").as_deref() {
                    Some("text") => {
                        let t = field(b, "text").unwrap_or_default();
                        if !t.trim().is_empty() {
                            out.push_str(t.trim_end());
                            out.push_str("\n\n");
                        }
                    }
                    Some("thinking") => {
                        let t = field(b, "thinking").unwrap_or_default();
                        if !t.trim().is_empty() {
                            out.push_str("<details><summary>Thinking</summary>\n\n");
                            out.push_str(&fenced("text", &t));
                            out.push_str("\n</details>\n\n");
                        }
                    }
                    Some("toolCall") => {
                        let name = field(b, "name").unwrap_or_else(|| "?".to_owned());
                        let args = b
                            .get("arguments")
                            .map_or_else(|| "{}".to_owned(), |a| to_json_string_indented(a, 2));
                        out.push_str(&format!("**→ tool call {}**\n\n", md_code(&name)));
                        out.push_str(&fenced("json", &args));
                        out.push('\n');
                    }
                    Some("image") => {
                        let mime = field(b, "mimeType").unwrap_or_else(|| "image".to_owned());
                        out.push_str(&format!("*[image: {}]*\n\n", md_inline(&mime)));
                    }
                    _ => {
                        out.push_str(&fenced("json", &to_json_string_indented(b, 2)));
                        out.push('\n');
                    }
                }
            }
        }
        Some(other) => {
            out.push_str(&fenced("json", &to_json_string_indented(other, 2)));
            out.push('\n');
        }
    }
}

fn content_plain(content: Option<&JsValue>) -> String {
    match content {
        Some(JsValue::String(s)) => s.to_str_lossy().into_owned(),
        Some(JsValue::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| match field(b, "type").as_deref() {
                Some("text") => field(b, "text"),
                Some("image") => Some("[image]".to_owned()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Some(JsValue::Null) | None => String::new(),
        Some(other) => to_json_string(other),
    }
}

/// Writes `text` with control and bidirectional-text characters escaped, as in every
/// human-readable output ([`text::safe_multiline`], which works character by character, so
/// escaping piece by piece gives the bytes escaping the whole would).
fn write_safe(w: &mut dyn Write, text: &str) -> std::io::Result<()> {
    w.write_all(text::safe_multiline(text).as_bytes())
}

/// The Markdown export, streamed to `w` entry by entry.
///
/// # Errors
/// A row of the current branch that cannot be decoded (checked before the first byte is
/// written); a write failure.
pub(crate) fn write_markdown(
    path: &Path,
    sm: &SessionManager,
    w: &mut dyn Write,
    progress: &Progress,
) -> anyhow::Result<()> {
    // The counts of the whole tree and the ids' short forms; no per-node tables.
    let shape = sm.tree_shape();
    let short = ShortIds::new(model::unique_entries(sm).map(|e| e.id()));
    let header = sm.get_header()?.unwrap_or(JsValue::Null);
    let name = sm.get_session_name().ok().flatten();
    let branch = sm.get_branch(None);
    check_decodable(branch.iter().copied())?;
    let first_user = branch.iter().find_map(|e| {
        let v = e.value().ok()?;
        let msg = v.get("message")?;
        (field(msg, "role").as_deref() == Some("user"))
            .then(|| text::excerpt(&content_plain(msg.get("content")), 72))
    });
    let title = name
        .or(first_user)
        .unwrap_or_else(|| format!("Session {}", sm.get_session_id()));
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", md_inline(&title));
    let _ = writeln!(out, "- Session: {}", md_code(sm.get_session_id()));
    let _ = writeln!(out, "- File: {}", md_code(&path.display().to_string()));
    if let Some(cwd) = field(&header, "cwd") {
        let _ = writeln!(out, "- Working directory: {}", md_code(&cwd));
    }
    if let Some(ts) = field(&header, "timestamp") {
        let _ = writeln!(out, "- Created: {}", md_inline(&ts));
    }
    let ctx = sm.build_session_context().ok();
    if let Some(model) = ctx
        .as_ref()
        .and_then(|c| c.model.as_ref())
        .and_then(|m| m.as_strs())
    {
        let _ = writeln!(
            out,
            "- Model: {}",
            md_inline(&format!("{}/{}", model.0, model.1))
        );
    }
    if let Some(t) = ctx.as_ref().and_then(|c| c.thinking_level_str()) {
        let _ = writeln!(out, "- Thinking level: {}", md_inline(&t));
    }
    let _ = writeln!(
        out,
        "- Current branch: {} of {} entries (leaf {})",
        text::thousands(branch.len()),
        text::thousands(shape.nodes),
        sm.get_leaf_id().map_or_else(|| "none".to_owned(), md_code)
    );
    if shape.branch_points > 0 {
        let _ = writeln!(
            out,
            "- {} branch {}; only the current branch is shown (see `sessions tree` or the HTML export for all of them)",
            text::thousands(shape.branch_points),
            if shape.branch_points == 1 {
                "point"
            } else {
                "points"
            }
        );
    }
    out.push_str("\n---\n\n");
    for e in &branch {
        write_safe(w, &out)?;
        out.clear();
        progress.inc(e.raw_bytes().len() as u64 + 1);
        let v = e.value()?;
        let id = e.id();
        let ts = field(&v, "timestamp").unwrap_or_default();
        let label = sm.get_label(id).map(|l| {
            l.as_str_lossy()
                .map_or_else(|| to_json_string(l), |s| s.into_owned())
        });
        let tag = match &label {
            Some(l) => format!(" · label **{}**", md_inline(l)),
            None => String::new(),
        };
        let meta = format!("{} · {}{tag}", md_code(&short.get(id)), md_inline(&ts));
        match e.entry_type() {
            EntryType::Message => {
                let msg = v.get("message").cloned().unwrap_or(JsValue::Null);
                let role = field(&msg, "role").unwrap_or_else(|| "message".to_owned());
                match role.as_str() {
                    "user" => {
                        let _ = writeln!(out, "## User · {meta}\n");
                        md_content(msg.get("content"), &mut out);
                    }
                    "assistant" => {
                        let model = match (field(&msg, "provider"), field(&msg, "model")) {
                            (Some(p), Some(m)) => format!(" ({})", md_inline(&format!("{p}/{m}"))),
                            _ => String::new(),
                        };
                        let _ = writeln!(out, "## Assistant{model} · {meta}\n");
                        md_content(msg.get("content"), &mut out);
                        if let Some(err) = field(&msg, "errorMessage") {
                            let _ = writeln!(
                                out,
                                "> **{}:** {}\n",
                                field(&msg, "stopReason").unwrap_or_else(|| "error".to_owned()),
                                md_inline(&err)
                            );
                        }
                    }
                    "toolResult" => {
                        let name = field(&msg, "toolName").unwrap_or_else(|| "tool".to_owned());
                        let err = matches!(msg.get("isError"), Some(JsValue::Bool(true)));
                        let _ = writeln!(
                            out,
                            "### Tool result {}{} · {meta}\n",
                            md_code(&name),
                            if err { " (error)" } else { "" }
                        );
                        out.push_str(&fenced("text", &content_plain(msg.get("content"))));
                        out.push('\n');
                    }
                    "bashExecution" => {
                        let _ = writeln!(out, "### Shell · {meta}\n");
                        let cmd = field(&msg, "command").unwrap_or_default();
                        let output = field(&msg, "output").unwrap_or_default();
                        out.push_str(&fenced("console", &format!("$ {cmd}\n{output}")));
                        out.push('\n');
                    }
                    other => {
                        let _ = writeln!(out, "## {} · {meta}\n", md_inline(other));
                        md_content(msg.get("content"), &mut out);
                    }
                }
            }
            EntryType::Compaction => {
                let _ = writeln!(
                    out,
                    "### Compaction · {meta}\n\nEarlier messages were summarised ({} tokens before; kept from {}):\n",
                    md_inline(&field(&v, "tokensBefore").unwrap_or_else(|| "?".to_owned())),
                    field(&v, "firstKeptEntryId")
                        .map_or_else(|| "?".to_owned(), |k| md_code(&short.get(&k)))
                );
                for l in field(&v, "summary").unwrap_or_default().lines() {
                    let _ = writeln!(out, "> {l}");
                }
                out.push('\n');
            }
            EntryType::BranchSummary => {
                let _ = writeln!(out, "### Branch summary · {meta}\n");
                for l in field(&v, "summary").unwrap_or_default().lines() {
                    let _ = writeln!(out, "> {l}");
                }
                out.push('\n');
            }
            EntryType::CustomMessage => {
                let ty = field(&v, "customType").unwrap_or_default();
                let _ = writeln!(out, "### Custom message {} · {meta}\n", md_code(&ty));
                md_content(v.get("content"), &mut out);
            }
            ty => {
                let s = render::entry_summary(ty, &v, &short);
                let _ = writeln!(out, "*{}: {}* · {meta}\n", s.kind, md_inline(&s.text));
            }
        }
    }
    write_safe(w, &out)?;
    Ok(())
}

// ---------------------------------------------------------------------------------------
// HTML

/// Escapes text for HTML element content and attribute values.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// A link to an entry's anchor, showing its short id.
fn id_link(id: &str, ids: &ShortIds) -> String {
    format!(
        "<a href=\"#e-{}\"><code>{}</code></a>",
        esc(id),
        esc(&ids.get(id))
    )
}

/// Checks where `-o OUT` may write: `Ok(false)` for a missing path (a new file), `Ok(true)` for
/// an existing regular file that `force` allows replacing; an error for anything else (a
/// directory, FIFO, socket, device or dangling symlink, even with `force`), for an existing
/// file without `force`, and for the session file itself.
fn check_out_path(ctx: &Ctx, session: &Path, out_path: &Path, force: bool) -> anyhow::Result<bool> {
    let shown = text::path(out_path);
    match std::fs::symlink_metadata(out_path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => bail!("cannot write {shown}: {e}"),
        Ok(_) => {}
    }
    match fsx::probe(out_path) {
        fsx::Found::Regular => {}
        fsx::Found::Missing => return Ok(false),
        fsx::Found::DanglingSymlink(t) => bail!(UsageError::new(format!(
            "{shown} is a dangling symbolic link (its target {} does not exist); refusing to \
             write through it: remove the link or choose another OUT",
            text::path(&t)
        ))),
        fsx::Found::Other(kind) => bail!(UsageError::new(format!(
            "{shown} is a {kind}, not a regular file; export writes only regular files and never \
             replaces anything else, even with --force (use `-o -` or a shell redirection to \
             write to stdout)"
        ))),
        fsx::Found::Unreadable(e) => bail!("cannot write {shown}: {e}"),
    }
    // A session read from Redis is not a file: OUT cannot be it.
    let same = match (
        ctx.store(),
        std::fs::canonicalize(session),
        std::fs::canonicalize(out_path),
    ) {
        (None, Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if same {
        bail!(UsageError::new(format!(
            "refusing to write the export over the session file itself ({shown})"
        )));
    }
    // The file a write through OUT would replace: OUT itself, or what its links lead to.
    let target = std::fs::canonicalize(out_path).unwrap_or_else(|_| out_path.to_path_buf());
    let managed = managed_file(out_path).map(|why| (why, None)).or_else(|| {
        (target != out_path)
            .then(|| managed_file(&target))
            .flatten()
            .map(|why| (why, Some(&target)))
    });
    if let Some((why, through)) = managed {
        let via = through.map_or_else(String::new, |t| format!(" (a link to {})", text::path(t)));
        bail!(UsageError::new(format!(
            "refusing to write the export over {shown}{via}: it is {why}; export never replaces \
             it, even with --force (choose a path outside the sessions directory)"
        )));
    }
    if !force {
        bail!(UsageError::new(format!(
            "{shown} already exists; pass --force to replace it"
        )));
    }
    Ok(true)
}

/// What an existing `out_path` is when export must never replace it, as a phrase for the
/// error: the store index `sessions.json` anywhere; a file an OpenClaw sessions directory (one
/// holding `sessions.json`) manages, by [`session_semantics::openclaw_store::classify`]
/// (transcripts, archives, sidecars, checkpoints, store temp files and backups;
/// openclaw-store.md R1.13–R1.14); or any file whose first line is a session header. `None`
/// for anything else.
fn managed_file(out_path: &Path) -> Option<String> {
    use session_semantics::openclaw_store::{self, ArtifactKind};
    let name = out_path.file_name()?.to_string_lossy().into_owned();
    if name == openclaw_store::STORE_FILE_NAME {
        return Some("an OpenClaw session store index (sessions.json)".to_owned());
    }
    if name == session_semantics::audit::AUDIT_LOG_NAME {
        return Some("the audit log of a sessions directory (never rewritten)".to_owned());
    }
    if name.ends_with(".jsonl.lock") {
        return Some("a session write lock".to_owned());
    }
    let dir = match out_path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if dir.join(openclaw_store::STORE_FILE_NAME).exists() {
        let what = match openclaw_store::classify(&name) {
            ArtifactKind::Store => Some("the session store index"),
            ArtifactKind::StoreTemp => Some("a session store temp file"),
            ArtifactKind::StoreBackup => Some("a session store backup"),
            ArtifactKind::Primary { .. } => Some("a transcript"),
            ArtifactKind::Archive { .. } => Some("an archived transcript"),
            ArtifactKind::Checkpoint { .. } => Some("a compaction checkpoint"),
            ArtifactKind::Trajectory { .. } => Some("a trajectory sidecar"),
            _ => None,
        };
        if let Some(what) = what {
            return Some(format!("{what} the OpenClaw sessions directory manages"));
        }
    }
    crate::store_files::first_line_is_header(out_path)
        .then(|| "a session file (its first line is a session header)".to_owned())
}

/// Refuses a new file that OpenClaw would take for one of its own: `sessions.json` anywhere,
/// and in an OpenClaw sessions directory any name it manages
/// ([`session_semantics::openclaw_store::classify`]) other than a `*.jsonl` of a jsonl export;
/// and (unless `force`) a jsonl export into such a directory, whose new file would carry the
/// same header id as the exported session, a second transcript for one id.
fn check_same_id_in_store(out_path: &Path, format: Format, force: bool) -> anyhow::Result<()> {
    use session_semantics::openclaw_store::{ArtifactKind, STORE_FILE_NAME, classify};
    let name = out_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir = match out_path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let in_store = dir.join(STORE_FILE_NAME).exists();
    let kind = classify(&name);
    let store_name = match kind {
        ArtifactKind::Store => true,
        ArtifactKind::Other => false,
        ArtifactKind::Primary { .. } => in_store && format != Format::Jsonl,
        _ => in_store,
    };
    if store_name {
        bail!(UsageError::new(format!(
            "refusing to write {}: OpenClaw would take a file of that name for one of its own \
             (the store index, a transcript, an archive or a sidecar), even with --force; \
             choose another name",
            text::path(out_path)
        )));
    }
    if format != Format::Jsonl || force {
        return Ok(());
    }
    if in_store {
        bail!(UsageError::new(format!(
            "refusing to write {} inside an OpenClaw sessions directory ({}): the jsonl export \
             keeps the session id, so the store would hold a second file with the same header \
             id; write it elsewhere, or pass --force",
            text::path(out_path),
            text::path(&dir)
        )));
    }
    Ok(())
}

/// Counts the bytes written through it.
struct Counted<W> {
    inner: W,
    n: u64,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.n += n as u64;
        Ok(n)
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.inner.write_all(buf)?;
        self.n += buf.len() as u64;
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The command's buffered stdout as a [`Write`].
struct ToStdout<'a>(&'a mut Output);

impl Write for ToStdout<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write_bytes(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// Writes the export in `format` to `w` as it is produced.
fn write_export(
    ctx: &Ctx,
    path: &Path,
    sm: &SessionManager,
    format: Format,
    w: &mut dyn Write,
) -> anyhow::Result<()> {
    let (total, what) = match format {
        Format::Json => (row_bytes(sm.get_entries()), "exporting"),
        Format::Html => (sm.file_bytes().len() as u64, "exporting"),
        Format::Jsonl | Format::Markdown => {
            (row_bytes(sm.get_branch(None)), "exporting the branch of")
        }
    };
    let progress = Progress::bytes(total, &format!("{what} {}", text::path(path)));
    match format {
        Format::Json => write_json_doc(sm, w, &progress)?,
        Format::Jsonl => write_jsonl(sm, ctx.now_ms(), w, &progress)?,
        Format::Markdown => write_markdown(path, sm, w, &progress)?,
        Format::Html => html::write_html(path, sm, w, &progress)?,
    }
    progress.finish();
    Ok(())
}

/// The HTML export of `sm` (read from `path`) in memory: the page `sessions export --format
/// html` writes, for `sessions serve`.
///
/// # Errors
/// As the export: a row that cannot be decoded.
pub(crate) fn html_page(path: &Path, sm: &SessionManager) -> anyhow::Result<Vec<u8>> {
    let mut page = Vec::new();
    html::write_html(path, sm, &mut page, &Progress::hidden())?;
    Ok(page)
}

/// Bytes buffered between the export and the file it is written to.
const FILE_BUFFER_BYTES: usize = 1 << 20;

/// `sessions export FILE --format F [-o OUT]`.
pub(crate) fn run(
    ctx: &Ctx,
    path: &Path,
    format: Format,
    out_path: Option<&Path>,
    force: bool,
    out: &mut Output,
) -> anyhow::Result<()> {
    let out_path = out_path.filter(|p| p.as_os_str() != "-");
    if let Some(p) = out_path {
        // Refuse early (before reading the session) what can never be written.
        check_out_path(ctx, path, p, force)?;
        check_same_id_in_store(p, format, force)?;
    }
    let opened = model::open(ctx, path)?;
    for w in &opened.warnings {
        out.warn(w)?;
    }
    let ro = &opened.ro;
    let sm = &ro.session;
    if let Some(ch) = &ro.report.corrupt_header
        && ch.recovered_from_line.is_none()
    {
        out.warn(&format!(
            "the exported header is made up, not read from the file: session id {} is new and \
             cwd {} is the current directory",
            text::safe(sm.get_session_id()),
            text::safe(sm.get_cwd())
        ))?;
    }
    match out_path {
        None => {
            let mut w = ToStdout(out);
            write_export(ctx, path, sm, format, &mut w)?;
        }
        Some(p) => {
            // Through `session_store::io`: a hidden temporary file next to OUT, renamed into
            // place (create-new, or an atomic replace of a regular file with `force`) once the
            // export is complete; removed when anything fails.
            let shown = text::path(p);
            let writer = if check_out_path(ctx, path, p, force)? {
                session_store::io::atomic_writer(p)
            } else {
                session_store::io::create_new_writer(p, None)
            }
            .with_context(|| format!("cannot write {shown}"))?;
            let mut w = Counted {
                inner: std::io::BufWriter::with_capacity(FILE_BUFFER_BYTES, writer),
                n: 0,
            };
            // A write failure names OUT; a row that cannot be decoded is reported as it is.
            write_export(ctx, path, sm, format, &mut w).map_err(|e| {
                if e.downcast_ref::<std::io::Error>().is_some() {
                    e.context(format!("cannot write {shown}"))
                } else {
                    e
                }
            })?;
            let written = w.n;
            let writer = w
                .inner
                .into_inner()
                .map_err(std::io::IntoInnerError::into_error)
                .with_context(|| format!("cannot write {shown}"))?;
            writer
                .commit()
                .with_context(|| format!("cannot write {shown}"))?;
            out.line(&format!(
                "wrote {} ({})",
                text::path(p),
                text::human_bytes(written)
            ))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_spans_follow_commonmark() {
        assert_eq!(md_code("weather_forecast"), "`weather_forecast`");
        assert_eq!(md_code("a*b_c<d>"), "`a*b_c<d>`");
        assert_eq!(md_code("it`s"), "``it`s``");
        assert_eq!(md_code("`tick`"), "`` `tick` ``");
        assert_eq!(md_code("a ``` b"), "````a ``` b````");
        assert_eq!(md_code("two\nlines"), "`two lines`");
    }

    #[test]
    fn fences_outgrow_backticks() {
        assert_eq!(fence_for("plain"), "```");
        assert_eq!(fence_for("a ```` b"), "`````");
    }

    #[test]
    fn html_escaping() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
