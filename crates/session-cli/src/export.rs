//! `sessions export`: a session as JSON (everything), JSONL (the current branch re-chained as
//! pi's `exportToJsonl` does), Markdown (the current branch as a conversation) or one
//! self-contained HTML page (the whole tree, collapsible, labels and the current branch
//! highlighted, no network access). Output goes to stdout or, with `-o`, through
//! `session_store::io` to a new file.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use session_format::entry::EntryType;
use session_format::json::{JsObject, JsValue, to_json_string};
use session_format::normalize::to_json_string_indented;
use session_store::SessionManager;

use crate::ctx::Ctx;
use crate::fsx;
use crate::model::{self, TreeModel};
use crate::outcome::UsageError;
use crate::output::Output;
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
  html      one self-contained page (inline CSS and script, no network access): the whole tree,
            collapsible at every branch point and per entry, labels as badges, the current branch
            highlighted and the leaf marked; each entry carries its full id (id=\"e-<id>\",
            data-id) and its line in the file (data-line).

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

/// The JSON export.
pub(crate) fn to_json_doc(sm: &SessionManager) -> anyhow::Result<String> {
    let mut o = JsObject::new();
    o.insert("header", sm.get_header()?.unwrap_or(JsValue::Null));
    o.insert(
        "leafId",
        sm.get_leaf_id().map_or(JsValue::Null, JsValue::from),
    );
    let entries = sm
        .get_entries()
        .map(|e| e.value())
        .collect::<Result<Vec<_>, _>>()?;
    o.insert("entries", JsValue::Array(entries));
    let mut s = to_json_string_indented(&JsValue::Object(o), 2);
    s.push('\n');
    Ok(s)
}

/// The JSONL export (pi-format.md §2.6); the new header's `timestamp` is `now_ms` (the run's
/// clock, the global `--now`).
pub(crate) fn to_jsonl(sm: &SessionManager, now_ms: i64) -> anyhow::Result<String> {
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
    let mut prev: Option<String> = None;
    for e in sm.get_branch(None) {
        let mut v = e.value()?;
        if let Some(o) = v.as_object_mut() {
            o.insert(
                "parentId",
                prev.clone().map_or(JsValue::Null, JsValue::from),
            );
        }
        out.push_str(&to_json_string(&v));
        out.push('\n');
        prev = Some(e.id().to_owned());
    }
    Ok(out)
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

/// The Markdown export.
pub(crate) fn to_markdown(path: &Path, sm: &SessionManager) -> anyhow::Result<String> {
    let m = TreeModel::new(sm, None);
    let header = sm.get_header()?.unwrap_or(JsValue::Null);
    let name = sm.get_session_name().ok().flatten();
    let branch = sm.get_branch(None);
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
        text::thousands(m.len()),
        sm.get_leaf_id().map_or_else(|| "none".to_owned(), md_code)
    );
    if m.branch_points() > 0 {
        let _ = writeln!(
            out,
            "- {} branch {}; only the current branch is shown (see `sessions tree` or the HTML export for all of them)",
            text::thousands(m.branch_points()),
            if m.branch_points() == 1 {
                "point"
            } else {
                "points"
            }
        );
    }
    out.push_str("\n---\n\n");
    for e in &branch {
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
        let meta = format!("{} · {}{tag}", md_code(&m.short.get(id)), md_inline(&ts));
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
                        .map_or_else(|| "?".to_owned(), |k| md_code(&m.short.get(&k)))
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
                let s = render::entry_summary(ty, &v, &m.short);
                let _ = writeln!(out, "*{}: {}* · {meta}\n", s.kind, md_inline(&s.text));
            }
        }
    }
    // Control and bidirectional-text characters in message text are escaped, as in every
    // human-readable output.
    Ok(text::safe_multiline(&out).into_owned())
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

fn is_base64(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'\n' | b'\r'))
}

fn html_blocks(content: Option<&JsValue>, out: &mut String) {
    match content {
        None | Some(JsValue::Null) => {}
        Some(JsValue::String(s)) => {
            let _ = write!(out, "<div class=\"text\">{}</div>", esc(&s.to_str_lossy()));
        }
        Some(JsValue::Array(blocks)) => {
            for b in blocks {
                match field(b, "type").as_deref() {
                    Some("text") => {
                        let _ = write!(
                            out,
                            "<div class=\"text\">{}</div>",
                            esc(&field(b, "text").unwrap_or_default())
                        );
                    }
                    Some("thinking") => {
                        let _ = write!(
                            out,
                            "<details class=\"thinking\"><summary>thinking</summary><div class=\"text\">{}</div></details>",
                            esc(&field(b, "thinking").unwrap_or_default())
                        );
                    }
                    Some("toolCall") => {
                        let args = b
                            .get("arguments")
                            .map_or_else(String::new, |a| to_json_string_indented(a, 2));
                        let _ = write!(
                            out,
                            "<div class=\"tool-call\"><span class=\"tool-name\">→ {}</span><pre>{}</pre></div>",
                            esc(&field(b, "name").unwrap_or_default()),
                            esc(&args)
                        );
                    }
                    Some("image") => {
                        let mime = field(b, "mimeType").unwrap_or_default();
                        let data = field(b, "data").unwrap_or_default();
                        let safe_mime = mime.starts_with("image/")
                            && mime[6..].bytes().all(|c| {
                                c.is_ascii_alphanumeric() || matches!(c, b'+' | b'.' | b'-')
                            });
                        if safe_mime && is_base64(&data) {
                            let _ = write!(
                                out,
                                "<img alt=\"image\" src=\"data:{};base64,{}\">",
                                esc(&mime),
                                esc(&data)
                            );
                        } else {
                            out.push_str("<div class=\"text\">[image]</div>");
                        }
                    }
                    _ => {
                        let _ = write!(out, "<pre>{}</pre>", esc(&to_json_string_indented(b, 2)));
                    }
                }
            }
        }
        Some(other) => {
            let _ = write!(
                out,
                "<pre>{}</pre>",
                esc(&to_json_string_indented(other, 2))
            );
        }
    }
}

fn id_link(id: &str, ids: &ShortIds) -> String {
    format!(
        "<a href=\"#e-{}\"><code>{}</code></a>",
        esc(id),
        esc(&ids.get(id))
    )
}

/// The body of an entry (inside its collapsible element).
fn html_body(ty: EntryType, v: &JsValue, ids: &ShortIds, out: &mut String) {
    match ty {
        EntryType::Message => {
            let msg = v.get("message").cloned().unwrap_or(JsValue::Null);
            match field(&msg, "role").as_deref() {
                Some("toolResult") => {
                    let err = matches!(msg.get("isError"), Some(JsValue::Bool(true)));
                    let _ = write!(
                        out,
                        "<p class=\"note\">result of <code>{}</code>{}</p>",
                        esc(&field(&msg, "toolName").unwrap_or_default()),
                        if err {
                            " — <strong>error</strong>"
                        } else {
                            ""
                        }
                    );
                    let _ = write!(
                        out,
                        "<pre class=\"result\">{}</pre>",
                        esc(&content_plain(msg.get("content")))
                    );
                }
                Some("bashExecution") => {
                    let _ = write!(
                        out,
                        "<pre class=\"result\">$ {}\n{}</pre>",
                        esc(&field(&msg, "command").unwrap_or_default()),
                        esc(&field(&msg, "output").unwrap_or_default())
                    );
                }
                Some("assistant") => {
                    if let (Some(p), Some(m)) = (field(&msg, "provider"), field(&msg, "model")) {
                        let _ = write!(out, "<p class=\"note\">{}/{}</p>", esc(&p), esc(&m));
                    }
                    html_blocks(msg.get("content"), out);
                    if let Some(e) = field(&msg, "errorMessage") {
                        let _ = write!(out, "<p class=\"error\">{}</p>", esc(&e));
                    }
                }
                _ => html_blocks(msg.get("content"), out),
            }
        }
        EntryType::Compaction => {
            let _ = write!(
                out,
                "<p class=\"note\">compaction boundary: {} tokens before; the context keeps entries from {}</p><div class=\"text\">{}</div>",
                esc(&field(v, "tokensBefore").unwrap_or_default()),
                field(v, "firstKeptEntryId").map_or_else(|| "?".to_owned(), |k| id_link(&k, ids)),
                esc(&field(v, "summary").unwrap_or_default())
            );
        }
        EntryType::BranchSummary => {
            let _ = write!(
                out,
                "<p class=\"note\">branch summary (from {})</p><div class=\"text\">{}</div>",
                esc(&field(v, "fromId").unwrap_or_default()),
                esc(&field(v, "summary").unwrap_or_default())
            );
        }
        EntryType::CustomMessage => {
            let _ = write!(
                out,
                "<p class=\"note\">custom message <code>{}</code></p>",
                esc(&field(v, "customType").unwrap_or_default())
            );
            html_blocks(v.get("content"), out);
        }
        EntryType::Label => {
            let target = field(v, "targetId").unwrap_or_default();
            let _ = write!(
                out,
                "<p class=\"note\">label on {}: {}</p>",
                id_link(&target, ids),
                esc(&field(v, "label").unwrap_or_else(|| "(cleared)".to_owned()))
            );
        }
        ty => {
            let s = render::entry_summary(ty, v, ids);
            let _ = write!(out, "<div class=\"text\">{}</div>", esc(&s.text));
        }
    }
}

const CSS: &str = r#"
:root{--fg:#1d2330;--muted:#667085;--bg:#fff;--line:#d0d5dd;--branch:#fff7d6;--branch-edge:#e5a000;--leaf:#d92d20;--label:#3538cd;--label-bg:#eef4ff}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg);margin:0;padding:1rem 1.5rem 4rem}
header h1{font-size:1.3rem;margin:0 0 .5rem}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem;margin:0 0 .75rem}
dl.meta dt{color:var(--muted)}dl.meta dd{margin:0}
.controls button{font:inherit;margin-right:.4rem}
.legend{color:var(--muted);font-size:.85rem}
.entry{border-left:3px solid transparent;padding-left:.4rem;margin:1px 0}
.entry.on-branch{background:var(--branch);border-left-color:var(--branch-edge)}
.entry.leaf{outline:2px solid var(--leaf);outline-offset:-1px}
.entry>details>summary{cursor:pointer;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;list-style-position:inside}
.entry .id{font-family:ui-monospace,monospace;color:var(--muted)}
.entry .kind{display:inline-block;min-width:7.5em;font-weight:600}
.r-user .kind{color:#175cd3}.r-assistant .kind{color:#067647}.r-toolResult .kind{color:#93370d}
.k-compaction .kind,.k-branch_summary .kind{color:#6941c6}
.entry .time{color:var(--muted);font-size:.8rem}
.badge{display:inline-block;background:var(--label-bg);color:var(--label);border-radius:.6rem;padding:0 .45rem;font-size:.8rem;margin-left:.3rem}
.marker{color:var(--leaf);font-weight:600;margin-left:.4rem}
.marker.bp{color:var(--branch-edge)}.marker.cut{color:#6941c6}
.body{padding:.3rem .2rem .6rem 1.4rem}
.body .text{white-space:pre-wrap;overflow-wrap:anywhere;margin:.2rem 0}
.body pre{background:#f6f7f9;padding:.4rem .6rem;overflow:auto;max-height:30rem;white-space:pre-wrap;overflow-wrap:anywhere}
.body .note{color:var(--muted);margin:.2rem 0}.body .error{color:var(--leaf)}
.body img{max-width:100%}
.tool-name{font-family:ui-monospace,monospace;font-weight:600}
.branches{margin-left:1.1rem;border-left:1px dashed var(--line);padding-left:.5rem}
details.branch>summary{cursor:pointer;color:var(--muted);margin:.25rem 0}
details.branch.on-branch>summary{color:var(--branch-edge);font-weight:600}
details.raw>summary{cursor:pointer;color:var(--muted);font-size:.8rem}
"#;

const SCRIPT: &str = r#"
document.addEventListener('click',function(ev){
  var b=ev.target.closest('button[data-act]');if(!b)return;
  var act=b.getAttribute('data-act');
  if(act==='leaf'){var l=document.querySelector('.entry.leaf');if(l){l.scrollIntoView({block:'center'});var d=l.querySelector('details');if(d)d.open=true;}return;}
  var sel=act==='branches-open'||act==='branches-close'?'details.branch':'.entry>details';
  document.querySelectorAll(sel).forEach(function(d){d.open=(act==='expand'||act==='branches-open');});
});
"#;

/// The HTML export.
pub(crate) fn to_html(path: &Path, sm: &SessionManager) -> anyhow::Result<String> {
    let m = TreeModel::new(sm, None);
    let header = sm.get_header()?.unwrap_or(JsValue::Null);
    let name = sm.get_session_name().ok().flatten();
    let title = name.unwrap_or_else(|| format!("Session {}", sm.get_session_id()));
    let mut h = String::with_capacity(4096 + m.len() * 2048);
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    h.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n");
    let _ = writeln!(h, "<title>{}</title>", esc(&title));
    let _ = writeln!(h, "<style>{CSS}</style>\n</head>\n<body>\n<header>");
    let _ = writeln!(h, "<h1>{}</h1>\n<dl class=\"meta\">", esc(&title));
    let mut meta = |k: &str, v: String| {
        let _ = writeln!(h, "<dt>{}</dt><dd>{v}</dd>", esc(k));
    };
    meta(
        "Session",
        format!("<code>{}</code>", esc(sm.get_session_id())),
    );
    meta(
        "File",
        format!("<code>{}</code>", esc(&path.display().to_string())),
    );
    if let Some(cwd) = field(&header, "cwd") {
        meta("Working directory", format!("<code>{}</code>", esc(&cwd)));
    }
    if let Some(ts) = field(&header, "timestamp") {
        meta("Created", esc(&ts));
    }
    meta(
        "Entries",
        format!(
            "{} ({} on the current branch, {} branch {})",
            text::thousands(m.len()),
            text::thousands(m.on_branch.iter().filter(|b| **b).count()),
            m.branch_points(),
            if m.branch_points() == 1 {
                "point"
            } else {
                "points"
            }
        ),
    );
    meta(
        "Current leaf",
        sm.get_leaf_id()
            .map_or_else(|| "none".to_owned(), |l| id_link(l, &m.short)),
    );
    h.push_str("</dl>\n<p class=\"controls\"><button type=\"button\" data-act=\"expand\">Expand all entries</button><button type=\"button\" data-act=\"collapse\">Collapse all entries</button><button type=\"button\" data-act=\"branches-close\">Fold branches</button><button type=\"button\" data-act=\"branches-open\">Unfold branches</button><button type=\"button\" data-act=\"leaf\">Go to leaf</button></p>\n");
    h.push_str("<p class=\"legend\">Highlighted: the current branch (root → leaf); outlined: the leaf. ◆ marks a branch point, ✂ a compaction boundary, ⇤ the first entry a compaction keeps. Click an entry to see its content and JSON.</p>\n</header>\n<main id=\"tree\">\n");

    // Iterative walk: a node, or closing markup to emit.
    enum Work {
        Node(usize),
        Raw(String),
    }
    let mut stack: Vec<Work> = Vec::new();
    let push_kids = |stack: &mut Vec<Work>,
                     kids: &[usize],
                     m: &TreeModel<'_>|
     -> anyhow::Result<()> {
        if let [only] = kids {
            stack.push(Work::Node(*only));
            return Ok(());
        }
        stack.push(Work::Raw("</div>\n".to_owned()));
        let n = kids.len();
        for (k, &c) in kids.iter().enumerate().rev() {
            stack.push(Work::Raw("</details>\n".to_owned()));
            stack.push(Work::Node(c));
            let first =
                render::entry_summary(m.tree.nodes[c].entry.entry_type(), &m.value(c)?, &m.short);
            stack.push(Work::Raw(format!(
                "<details class=\"branch{}\" open><summary>branch {} of {n} · {} {}{} — {}</summary>\n",
                if m.on_branch[c] { " on-branch" } else { "" },
                k + 1,
                text::thousands(m.size[c]),
                if m.size[c] == 1 { "entry" } else { "entries" },
                if m.on_branch[c] { " · current" } else { "" },
                esc(&text::excerpt(&first.text, 80)),
            )));
        }
        stack.push(Work::Raw("<div class=\"branches\">\n".to_owned()));
        Ok(())
    };
    push_kids(&mut stack, &m.tree.roots, &m)?;
    while let Some(w) = stack.pop() {
        let i = match w {
            Work::Raw(s) => {
                h.push_str(&s);
                continue;
            }
            Work::Node(i) => i,
        };
        let ty = m.tree.nodes[i].entry.entry_type();
        let v = m.value(i)?;
        let s = render::entry_summary(ty, &v, &m.short);
        let id = m.id(i);
        let mut classes = format!("entry k-{}", ty.as_str());
        if ty == EntryType::Message {
            let _ = write!(classes, " r-{}", esc(&s.kind).replace(' ', "_"));
        }
        if m.on_branch[i] {
            classes.push_str(" on-branch");
        }
        if m.leaf == Some(i) {
            classes.push_str(" leaf");
        }
        let line = m
            .line(i)
            .map_or_else(String::new, |l| format!(" data-line=\"{l}\""));
        let _ = write!(
            h,
            "<div class=\"{classes}\" id=\"e-{}\" data-id=\"{}\"{line}><details><summary><span class=\"id\">{}</span> <span class=\"kind\">{}</span> ",
            esc(id),
            esc(id),
            esc(&m.short(i)),
            esc(&s.kind)
        );
        if let Some(ts) = field(&v, "timestamp") {
            let _ = write!(h, "<span class=\"time\">{}</span> ", esc(&ts));
        }
        let _ = write!(
            h,
            "<span class=\"excerpt\">{}</span>",
            esc(&text::excerpt(&s.text, 160))
        );
        if let Some(l) = m.label(i) {
            let _ = write!(h, "<span class=\"badge\">{}</span>", esc(&l));
        }
        if m.leaf == Some(i) {
            h.push_str("<span class=\"marker\">◀ leaf</span>");
        }
        let kids = m.children(i);
        if kids.len() > 1 {
            let _ = write!(h, "<span class=\"marker bp\">◆ {}</span>", kids.len());
        }
        if ty == EntryType::Compaction {
            h.push_str("<span class=\"marker cut\">✂ compaction</span>");
        }
        if !m.first_kept_of[i].is_empty() {
            h.push_str("<span class=\"marker cut\">⇤ first kept</span>");
        }
        h.push_str("</summary>\n<div class=\"body\">");
        let _ = write!(
            h,
            "<p class=\"note\">id <code>{}</code>{}</p>",
            esc(id),
            m.line(i)
                .map_or_else(String::new, |l| format!(" · line {l}"))
        );
        html_body(ty, &v, &m.short, &mut h);
        let _ = writeln!(
            h,
            "<details class=\"raw\"><summary>JSON</summary><pre>{}</pre></details></div></details></div>",
            esc(&to_json_string_indented(&v, 2))
        );
        push_kids(&mut stack, kids, &m)?;
    }
    if m.len() == 0 {
        h.push_str("<p>(no entries)</p>\n");
    }
    let _ = write!(h, "</main>\n<script>{SCRIPT}</script>\n</body>\n</html>\n");
    Ok(h)
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

/// Writes `bytes` to `out_path` through `session_store::io` (create-new, or an atomic replace
/// of a regular file with `force`), refusing to touch the session file itself or anything that
/// is not a regular file.
fn write_file(
    ctx: &Ctx,
    session: &Path,
    out_path: &Path,
    bytes: &[u8],
    force: bool,
) -> anyhow::Result<()> {
    let shown = text::path(out_path);
    if check_out_path(ctx, session, out_path, force)? {
        session_store::io::atomic_rewrite(out_path, bytes)
            .with_context(|| format!("cannot write {shown}"))?;
    } else {
        session_store::io::create_new(out_path, bytes, None)
            .with_context(|| format!("cannot write {shown}"))?;
    }
    Ok(())
}

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
    let doc = match format {
        Format::Json => to_json_doc(sm)?,
        Format::Jsonl => to_jsonl(sm, ctx.now_ms())?,
        Format::Markdown => to_markdown(path, sm)?,
        Format::Html => to_html(path, sm)?,
    };
    match out_path {
        None => out.write_str(&doc)?,
        Some(p) => {
            write_file(ctx, path, p, doc.as_bytes(), force)?;
            out.line(&format!(
                "wrote {} ({})",
                text::path(p),
                text::human_bytes(doc.len() as u64)
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
