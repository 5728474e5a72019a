//! The session viewer: one page (inline CSS and script, a strict Content-Security-Policy that
//! allows only the page's own script, by its `sha256` hash, and `data:` images; no network
//! access except, for a served page, its own origin) that renders ONE payload. `sessions
//! export --format html` embeds the payload; a server ([`PayloadSource::Url`]) lets the page
//! fetch it, and can push new rows to it.
//!
//! # The page
//! A sidebar tree of the whole session (branch points, labels, compactions, branch summaries;
//! the path to the current leaf highlighted and the leaf outlined; the current path at one
//! indentation, the branches off it nested beside it, folded when of more than 12 entries) with a search box and pi 0.73.1's filters
//! (default / no tools / user / labeled / all, the same rules); a main pane with the messages
//! of the selected path (the current branch at first; clicking a tree node selects the path
//! through it): Markdown rendered, each tool call with its result (errors marked), thinking and
//! tool output toggles, model and thinking-level changes, compactions and branch summaries;
//! the session's totals (the numbers `sessions usage --json` gives for the file); a download
//! of the JSONL file (its exact bytes). An entry is linked as `#entry-<id>` (the older
//! `#e-<id>` still works): the tree node is `li.node[data-id]`, the entry in the main pane
//! `#entry-<id>`.
//!
//! # The payload
//! A line of metadata (JSON) and then the body:
//! - metadata: `v` (2); `n`, for each node `[id, type, kind, line, short id, label, flags,
//!   children, row length, row offset]` (flags 1 = on the current branch, 2 = the leaf, 4 = the
//!   first entry a compaction keeps, 8 = an assistant message with only tool calls, which pi's
//!   filters hide; the offset is into the body); `roots`, `parent` and `size`
//!   per node; `file` and `extra` (byte lengths, below); `totals` (the `total` object of
//!   `sessions usage --json` for this file);
//! - body: the session file's exact bytes (`file` of them: the download), then the rows that
//!   are not spans of the file (a migration rewrote them; `extra` bytes, each with a line
//!   feed), then one line per user or assistant message with text, `[node index, html, …]`:
//!   the Markdown of each text block of its content (a string content is one block), rendered
//!   by `pulldown-cmark` and sanitised by `ammonia` ([`markdown_of_row`]): the only HTML the
//!   page inserts as HTML. Everything else from the transcript reaches the page through
//!   `textContent`.
//!
//! # How the payload travels ([`PayloadSource`])
//! - `data-enc="base64"`: a payload under [`SYNC_MAX_BYTES`] is embedded base64-encoded and
//!   rendered synchronously while the page loads (so `chromium --dump-dom` sees every entry).
//! - `data-enc="deflate-raw"`: a larger one is cut into [`CHUNK_BYTES`] pieces, each compressed
//!   on its own as a raw deflate stream (`flate2`, fastest level, two pieces at a time on two
//!   threads) and base64-encoded, one a line; the page inflates them with the browser's
//!   `DecompressionStream("deflate-raw")` and renders in batches per animation frame: the
//!   current branch first, then the folded branches in the background; a folded branch
//!   opened, or an entry named by a deep link, is rendered at once.
//! - `data-enc="url" data-src="URL"`: the page fetches URL (same origin; the page's policy then
//!   allows `connect-src 'self'`, and a server sending its own policy header must too) and
//!   renders the plain payload it gets ([`payload`] builds it; the server may compress it with
//!   `Content-Encoding`).
//! - `data-enc="external"`: nothing is loaded; a script calls `SESSION_VIEWER.load`.
//!
//! # The script's entry points (`window.SESSION_VIEWER`)
//! - `load(bytes)`: renders a payload (`Uint8Array` or `ArrayBuffer`, uncompressed), replacing
//!   whatever the page showed;
//! - `append(rows, leafId)`: adds new entries, for live updates: `rows` is an array of rows as
//!   written to the file, each either the row's text (one JSON object, no line feed) or
//!   `{row: text, md: [html, …]}` with the rendered Markdown of its text blocks
//!   ([`markdown_of_row`] of the row; without it the text shows as text); `leafId`, optional,
//!   is the session's leaf afterwards (default: the last appended row that has an id). Rows
//!   whose id is already shown are skipped; labels relabel their target. The new rows show up
//!   in the tree, and on the selected path when they continue it; the JSONL download gains
//!   them;
//! - `select(id)`: shows the path through entry `id` and scrolls to it (what `#entry-<id>` does);
//! - `leaf()`: the current leaf's id; `state()`: `{entries, filter, query, visible}` (visible:
//!   the tree nodes shown by the filter and search);
//! - `jsonl()`: the JSONL download's `Blob`; `totals()`: the payload's totals.
//!
//! An entry's details are built from its row the first time they are shown.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use base64::Engine as _;
use session_format::entry::EntryType;
use session_format::json::{JsValue, to_json_string};
use session_store::{MessageRole, SessionManager};
use sha2::{Digest, Sha256};

use super::{check_decodable, esc, id_link};
use crate::model::TreeModel;
use crate::progress::Progress;
use crate::render::{field, kind_name};
use crate::text;

/// The page's script (its `sha256` goes into the Content-Security-Policy).
const SCRIPT: &str = include_str!("page.js");

/// The page's style sheet.
const CSS: &str = include_str!("page.css");

/// Payloads (metadata and rows) below this many bytes are embedded uncompressed and rendered
/// synchronously (1.5 MiB: the 1,018-entry pi fixture, about 1.1 MB, takes this path).
pub(super) const SYNC_MAX_BYTES: usize = 1536 * 1024;

/// Uncompressed bytes per compressed piece of a large payload.
const CHUNK_BYTES: usize = 4 << 20;

/// Pieces compressed at once, each on its own thread.
const THREADS: usize = 2;

/// `s` as a JSON string.
fn js_str(out: &mut String, s: &str) {
    out.push_str(&to_json_string(&JsValue::from(s)));
}

/// The text an entry's kind shows: the message role (control characters escaped) for
/// `message` entries, else the short kind name.
fn kind_text(e: session_store::EntryRef<'_>) -> String {
    let ty = e.entry_type();
    if ty != EntryType::Message {
        return kind_name(ty).to_owned();
    }
    match e.message_role() {
        MessageRole::None => "message".to_owned(),
        MessageRole::Other => match e.value() {
            Ok(v) => match v.get("message") {
                Some(m @ JsValue::Object(_)) => {
                    text::safe(&field(m, "role").unwrap_or_else(|| "message".to_owned()))
                        .into_owned()
                }
                _ => "message".to_owned(),
            },
            Err(_) => "message".to_owned(),
        },
        role => role.as_str().unwrap_or("message").to_owned(),
    }
}

/// Where each node's row is in the payload's body and the rows that are not spans of the
/// file's bytes (rewritten by a migration): those follow the file, each with a line feed.
struct Layout<'a> {
    /// Byte offset of each node's row in the body (the bytes after the metadata line).
    offsets: Vec<usize>,
    /// The rows that follow the file's bytes, in node order.
    extra: Vec<&'a [u8]>,
    /// Their bytes, line feeds included.
    extra_len: usize,
}

impl<'a> Layout<'a> {
    fn new(m: &TreeModel<'a>, file: &[u8]) -> Self {
        let mut offsets = Vec::with_capacity(m.len());
        let mut extra = Vec::new();
        let mut extra_len = 0;
        for node in &m.tree.nodes {
            let raw = node.entry.raw_bytes();
            let at = node.entry.location().byte_offset;
            match at
                .filter(|&o| o.checked_add(raw.len()).and_then(|end| file.get(o..end)) == Some(raw))
            {
                Some(o) => offsets.push(o),
                None => {
                    offsets.push(file.len() + extra_len);
                    extra_len += raw.len() + 1;
                    extra.push(raw);
                }
            }
        }
        Layout {
            offsets,
            extra,
            extra_len,
        }
    }
}

/// JavaScript's `s.trim().length > 0` for a string.
fn js_non_blank(s: &str) -> bool {
    !s.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
        .is_empty()
}

/// JavaScript's truthiness of a JSON value.
fn js_truthy(v: &JsValue) -> bool {
    match v {
        JsValue::Null => false,
        JsValue::Bool(b) => *b,
        JsValue::Number(n) => *n != 0.0 && !n.is_nan(),
        JsValue::String(s) => !s.is_empty(),
        JsValue::Array(_) | JsValue::Object(_) => true,
    }
}

/// True for an assistant message that pi 0.73.1's export hides from its tree in every filter
/// mode (`filterNodes` of its `template.js`): no text (no text block whose text is not blank,
/// or a blank string content) and not stopped on an error or abort (`stopReason` missing,
/// falsy, `stop` or `toolUse`).
fn tool_only(e: session_store::EntryRef<'_>) -> bool {
    if e.entry_type() != EntryType::Message || e.message_role() != MessageRole::Assistant {
        return false;
    }
    let Ok(v) = e.raw_value() else {
        return false;
    };
    let Some(m) = v.get("message").filter(|m| m.as_object().is_some()) else {
        return false;
    };
    let has_text = match m.get("content") {
        Some(JsValue::String(s)) => js_non_blank(&s.to_str_lossy()),
        Some(JsValue::Array(blocks)) => blocks.iter().any(|b| {
            b.get("type").and_then(JsValue::as_str_lossy).as_deref() == Some("text")
                && matches!(b.get("text"), Some(JsValue::String(t)) if js_non_blank(&t.to_str_lossy()))
        }),
        _ => false,
    };
    let stopped_otherwise = m.get("stopReason").is_some_and(|s| {
        js_truthy(s) && !matches!(s.as_str_lossy().as_deref(), Some("stop" | "toolUse"))
    });
    !has_text && !stopped_otherwise
}

/// The metadata line of the payload (see the module documentation), without its line feed.
fn metadata(m: &TreeModel<'_>, layout: &Layout<'_>, file_len: usize, totals: &str) -> String {
    let n = m.len();
    let mut s = String::with_capacity(256 + totals.len() + n * 128);
    s.push_str("{\"v\":2,\"n\":[");
    for i in 0..n {
        if i > 0 {
            s.push(',');
        }
        let e = m.tree.nodes[i].entry;
        s.push('[');
        js_str(&mut s, m.id(i));
        s.push(',');
        js_str(&mut s, e.entry_type().as_str());
        s.push(',');
        js_str(&mut s, &kind_text(e));
        s.push(',');
        match m.line(i) {
            Some(l) => {
                let _ = write!(s, "{l}");
            }
            None => s.push_str("null"),
        }
        s.push(',');
        js_str(&mut s, &m.short(i));
        s.push(',');
        match m.label(i) {
            Some(l) => js_str(&mut s, &l),
            None => s.push_str("null"),
        }
        let flags = u8::from(m.on_branch[i])
            | (u8::from(m.leaf == Some(i)) << 1)
            | (u8::from(!m.first_kept_of[i].is_empty()) << 2)
            | (u8::from(tool_only(e)) << 3);
        let _ = write!(s, ",{flags},[");
        for (k, c) in m.children(i).iter().enumerate() {
            if k > 0 {
                s.push(',');
            }
            let _ = write!(s, "{c}");
        }
        let _ = write!(s, "],{},{}]", e.raw_bytes().len(), layout.offsets[i]);
    }
    s.push_str("],\"roots\":[");
    push_list(&mut s, m.tree.roots.iter().map(|&r| r as i64));
    s.push_str("],\"parent\":[");
    push_list(&mut s, m.parent.iter().map(|p| p.map_or(-1, |p| p as i64)));
    s.push_str("],\"size\":[");
    push_list(&mut s, m.size.iter().map(|&z| z as i64));
    let _ = write!(
        s,
        "],\"file\":{file_len},\"extra\":{},\"totals\":{totals}}}",
        layout.extra_len
    );
    s
}

fn push_list(s: &mut String, items: impl Iterator<Item = i64>) {
    for (k, v) in items.enumerate() {
        if k > 0 {
            s.push(',');
        }
        let _ = write!(s, "{v}");
    }
}

/// One piece as a raw deflate stream at the fastest level.
fn deflate(piece: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut enc = flate2::write::DeflateEncoder::new(
        Vec::with_capacity(piece.len() / 4 + 1024),
        flate2::Compression::fast(),
    );
    enc.write_all(piece)?;
    enc.finish()
}

/// The payload's pieces, compressed and base64-encoded, written to `w` one a line; pieces are
/// compressed [`THREADS`] at a time.
struct Packer<'w> {
    w: &'w mut dyn Write,
    pieces: Vec<Vec<u8>>,
    first: bool,
}

impl Packer<'_> {
    /// Adds `bytes` to the current piece, packing a batch when it is full.
    fn push(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let need_new = self.pieces.last().is_none_or(|p| p.len() >= CHUNK_BYTES);
        if need_new {
            if self.pieces.len() == THREADS {
                self.pack()?;
            }
            self.pieces
                .push(Vec::with_capacity(CHUNK_BYTES + 64 * 1024));
        }
        if let Some(p) = self.pieces.last_mut() {
            p.extend_from_slice(bytes);
        }
        Ok(())
    }

    /// Compresses the pieces held (in parallel) and writes them in order.
    fn pack(&mut self) -> std::io::Result<()> {
        let pieces = std::mem::take(&mut self.pieces);
        let packed: Vec<std::io::Result<Vec<u8>>> = std::thread::scope(|scope| {
            let handles: Vec<_> = pieces
                .iter()
                .skip(1)
                .map(|p| scope.spawn(move || deflate(p)))
                .collect();
            let mut out = Vec::with_capacity(pieces.len());
            if let Some(p) = pieces.first() {
                out.push(deflate(p));
            }
            for h in handles {
                out.push(
                    h.join()
                        .unwrap_or_else(|_| Err(std::io::Error::other("compression failed"))),
                );
            }
            out
        });
        for z in packed {
            let z = z?;
            if !self.first {
                self.w.write_all(b"\n")?;
            }
            self.first = false;
            self.w.write_all(
                base64::engine::general_purpose::STANDARD
                    .encode(&z)
                    .as_bytes(),
            )?;
        }
        Ok(())
    }
}

/// The `sha256-…` source expression of the page's script: what a server that sends the page
/// names in its own `Content-Security-Policy` header.
pub(crate) fn script_hash() -> String {
    let digest = Sha256::digest(SCRIPT.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// The sanitiser of rendered Markdown: ammonia's allow-list without images (the page loads
/// nothing), relative URLs dropped (they would resolve against the page's own location), links
/// with `rel="noopener noreferrer"`.
pub(crate) fn sanitiser() -> ammonia::Builder<'static> {
    let mut b = ammonia::Builder::default();
    b.rm_tags(["img"])
        .url_relative(ammonia::UrlRelative::Deny)
        .link_rel(Some("noopener noreferrer"));
    b
}

/// `text` as Markdown (CommonMark with tables, strikethrough and task lists) rendered to HTML
/// and sanitised by `clean`. Raw HTML in the text is shown as text, not passed through.
pub(crate) fn markdown_html(text: &str, clean: &ammonia::Builder<'_>) -> String {
    use pulldown_cmark::{Event, Options, Parser};
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let events = Parser::new_ext(text, opts).map(|ev| match ev {
        Event::Html(h) | Event::InlineHtml(h) => Event::Text(h),
        ev => ev,
    });
    let mut out = String::with_capacity(text.len() + text.len() / 4 + 16);
    pulldown_cmark::html::push_html(&mut out, events);
    clean.clean(&out).to_string()
}

/// The parts of a row the Markdown rendering reads (a typed read that skips the rest).
#[derive(serde::Deserialize)]
struct MdRow<'a> {
    #[serde(borrow)]
    message: Option<MdMessage<'a>>,
}

#[derive(serde::Deserialize)]
struct MdMessage<'a> {
    #[serde(borrow)]
    role: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    content: Option<MdContent<'a>>,
}

#[derive(serde::Deserialize)]
#[serde(untagged)]
enum MdContent<'a> {
    Text(#[serde(borrow)] std::borrow::Cow<'a, str>),
    Blocks(#[serde(borrow)] Vec<MdBlock<'a>>),
}

#[derive(serde::Deserialize)]
struct MdBlock<'a> {
    #[serde(rename = "type", borrow)]
    ty: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    text: Option<std::borrow::Cow<'a, str>>,
}

#[allow(dead_code, reason = "pub(crate) for `sessions serve`'s live updates")]
/// The rendered Markdown of a `message` row of a user or assistant: one HTML string per text
/// block of its content, in order (a string content is one block); `None` for other rows and
/// for rows whose content has another shape (the page then shows the text as text).
pub(crate) fn markdown_of_row(raw: &[u8], clean: &ammonia::Builder<'_>) -> Option<Vec<String>> {
    let row: MdRow<'_> = serde_json::from_slice(raw).ok()?;
    let msg = row.message?;
    if !matches!(msg.role.as_deref(), Some("user" | "assistant")) {
        return None;
    }
    let out: Vec<String> = match msg.content? {
        MdContent::Text(t) => vec![markdown_html(&t, clean)],
        MdContent::Blocks(blocks) => blocks
            .iter()
            .filter(|b| b.ty.as_deref() == Some("text"))
            .map(|b| markdown_html(b.text.as_deref().unwrap_or(""), clean))
            .collect(),
    };
    (!out.is_empty()).then_some(out)
}

/// The Markdown line of node `i` (`[i,"html",…]`, see the module documentation), or `None`.
fn markdown_line(
    i: usize,
    e: session_store::EntryRef<'_>,
    clean: &ammonia::Builder<'_>,
) -> Option<String> {
    if e.entry_type() != EntryType::Message
        || !matches!(e.message_role(), MessageRole::User | MessageRole::Assistant)
    {
        return None;
    }
    let blocks = markdown_of_row(e.raw_bytes(), clean)?;
    let mut s = String::with_capacity(blocks.iter().map(|b| b.len() + 8).sum::<usize>() + 16);
    let _ = write!(s, "[{i}");
    for b in &blocks {
        s.push(',');
        js_str(&mut s, b);
    }
    s.push(']');
    Some(s)
}

/// Where the page finds its payload.
#[derive(Debug, Clone, Copy)]
#[allow(dead_code, reason = "`Url` and `External` are for `sessions serve`")]
pub(crate) enum PayloadSource<'a> {
    /// Embedded, base64-encoded, uncompressed (rendered while the page loads).
    Base64,
    /// Embedded as deflate-raw pieces, base64-encoded, one a line.
    DeflateRaw,
    /// Fetched (same origin) from this URL, uncompressed.
    Url(&'a str),
    /// Not in the page: a script calls `SESSION_VIEWER.load(bytes)`.
    External,
}

/// The page up to its payload: everything before the payload's text, ending inside the
/// `<script id="payload">` element. `facts`: `(name, HTML)` pairs for the header's list.
pub(crate) fn page_head(title: &str, facts: &[(&str, String)], src: PayloadSource<'_>) -> String {
    let mut h = String::with_capacity(16 * 1024);
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let connect = if matches!(src, PayloadSource::Url(_)) {
        " connect-src 'self';"
    } else {
        ""
    };
    let _ = writeln!(
        h,
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src {};{connect} img-src data:\">",
        script_hash()
    );
    let _ = writeln!(h, "<title>{}</title>", esc(title));
    let _ = writeln!(h, "<style>{CSS}</style>\n</head>\n<body>\n<header>");
    let _ = writeln!(h, "<h1>{}</h1>\n<dl class=\"meta\">", esc(title));
    for (k, v) in facts {
        let _ = writeln!(h, "<dt>{}</dt><dd>{v}</dd>", esc(k));
    }
    h.push_str("</dl>\n<div id=\"totals\"></div>\n");
    h.push_str(concat!(
        "<div class=\"controls\">",
        "<input type=\"search\" id=\"search\" placeholder=\"Search entries\" aria-label=\"Search entries\" autocomplete=\"off\">",
        "<span class=\"filters\" role=\"group\" aria-label=\"Filter\">",
        "<button type=\"button\" data-filter=\"default\" class=\"on\">Default</button>",
        "<button type=\"button\" data-filter=\"no-tools\">No tools</button>",
        "<button type=\"button\" data-filter=\"user-only\">User</button>",
        "<button type=\"button\" data-filter=\"labeled-only\">Labeled</button>",
        "<button type=\"button\" data-filter=\"all\">All</button></span>",
        "<button type=\"button\" data-act=\"thinking\">Hide thinking</button>",
        "<button type=\"button\" data-act=\"tools\">Hide tool output</button>",
        "<button type=\"button\" data-act=\"branches-open\">Unfold branches</button>",
        "<button type=\"button\" data-act=\"branches-close\">Fold branches</button>",
        "<button type=\"button\" data-act=\"leaf\">Go to leaf</button>",
        "<button type=\"button\" data-act=\"download\">Download JSONL</button>",
        "</div>\n",
    ));
    h.push_str("<p class=\"legend\">Left: the whole tree (highlighted: the path to the current leaf, outlined: the leaf; ◆ a branch point, ✂ a compaction, ⇤ the first entry a compaction keeps, ↩ a branch summary). Right: the messages of the selected path; click an entry in the tree to select it.</p>\n</header>\n");
    h.push_str("<noscript><p>This page shows the session's entries with its own script; enable JavaScript to see them.</p></noscript>\n");
    h.push_str("<div id=\"viewer\">\n<nav id=\"side\"><p id=\"count\" class=\"legend\"></p><ol id=\"results\" hidden></ol><div id=\"tree\"></div></nav>\n<main id=\"path\">");
    if !matches!(src, PayloadSource::Base64) {
        h.push_str("<p id=\"loading\" class=\"legend\">Unpacking the session…</p>");
    }
    h.push_str("</main>\n</div>\n");
    match src {
        PayloadSource::Base64 => h.push_str(
            "<script type=\"application/octet-stream\" id=\"payload\" data-enc=\"base64\">",
        ),
        PayloadSource::DeflateRaw => h.push_str(
            "<script type=\"application/octet-stream\" id=\"payload\" data-enc=\"deflate-raw\">",
        ),
        PayloadSource::Url(u) => {
            let _ = write!(
                h,
                "<script type=\"application/octet-stream\" id=\"payload\" data-enc=\"url\" data-src=\"{}\">",
                esc(u)
            );
        }
        PayloadSource::External => h.push_str(
            "<script type=\"application/octet-stream\" id=\"payload\" data-enc=\"external\">",
        ),
    }
    h
}

/// The page after its payload's text.
pub(crate) fn page_tail() -> String {
    format!("</script>\n<script>{SCRIPT}</script>\n</body>\n</html>\n")
}

/// The header facts of a session's page (session id, file, working directory, creation time,
/// entries, current leaf) as `(name, HTML)` pairs.
pub(crate) fn facts(
    path: &Path,
    sm: &SessionManager,
    m: &TreeModel<'_>,
) -> Vec<(&'static str, String)> {
    let header = sm.get_header().ok().flatten().unwrap_or(JsValue::Null);
    let mut out = vec![
        (
            "Session",
            format!("<code>{}</code>", esc(sm.get_session_id())),
        ),
        (
            "File",
            format!("<code>{}</code>", esc(&path.display().to_string())),
        ),
    ];
    if let Some(cwd) = field(&header, "cwd") {
        out.push(("Working directory", format!("<code>{}</code>", esc(&cwd))));
    }
    if let Some(ts) = field(&header, "timestamp") {
        out.push(("Created", esc(&ts)));
    }
    out.push((
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
    ));
    out.push((
        "Current leaf",
        sm.get_leaf_id()
            .map_or_else(|| "none".to_owned(), |l| id_link(l, &m.short)),
    ));
    out
}

/// The session's page title: its name, else `Session <id>`.
pub(crate) fn title(sm: &SessionManager) -> String {
    let name = sm.get_session_name().ok().flatten();
    name.unwrap_or_else(|| format!("Session {}", sm.get_session_id()))
}

/// A sink for the payload's bytes (the plain bytes, or the deflate pieces).
trait Sink {
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()>;
}

impl Sink for Packer<'_> {
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.push(bytes)
    }
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.extend_from_slice(bytes);
        Ok(())
    }
}

/// Bytes of the file handed to the sink at once (for the progress bar).
const FILE_STEP: usize = 1 << 20;

/// Writes the whole payload (metadata line, file bytes, extra rows, Markdown lines) to `out`.
fn emit(
    m: &TreeModel<'_>,
    file: &[u8],
    layout: &Layout<'_>,
    meta_line: &str,
    out: &mut dyn Sink,
    progress: &Progress,
) -> std::io::Result<()> {
    out.put(meta_line.as_bytes())?;
    out.put(b"\n")?;
    for piece in file.chunks(FILE_STEP) {
        out.put(piece)?;
        progress.inc(piece.len() as u64);
    }
    for raw in &layout.extra {
        out.put(raw)?;
        out.put(b"\n")?;
    }
    let clean = sanitiser();
    for (i, node) in m.tree.nodes.iter().enumerate() {
        if let Some(line) = markdown_line(i, node.entry, &clean) {
            out.put(line.as_bytes())?;
            out.put(b"\n")?;
        }
    }
    Ok(())
}

/// The metadata line and layout of a session's payload.
fn prepare<'a>(sm: &'a SessionManager, m: &TreeModel<'a>) -> (Layout<'a>, String) {
    let file = sm.file_bytes();
    let layout = Layout::new(m, file);
    let totals = session_query::usage::session_usage(file, None).totals();
    let totals = to_json_string(&JsValue::Object(crate::usage::counts_json(&totals)));
    let meta_line = metadata(m, &layout, file.len(), &totals);
    (layout, meta_line)
}

#[allow(dead_code, reason = "for `sessions serve`")]
/// A session's whole payload, uncompressed (for a server that sends it to a page whose payload
/// source is [`PayloadSource::Url`]).
///
/// # Errors
/// A row that cannot be decoded (nested too deeply).
pub(crate) fn payload(sm: &SessionManager) -> anyhow::Result<Vec<u8>> {
    let m = TreeModel::new(sm, None);
    check_decodable(m.tree.nodes.iter().map(|n| n.entry))?;
    let (layout, meta_line) = prepare(sm, &m);
    let mut out =
        Vec::with_capacity(meta_line.len() + sm.file_bytes().len() + layout.extra_len + 1);
    emit(
        &m,
        sm.file_bytes(),
        &layout,
        &meta_line,
        &mut out,
        &Progress::hidden(),
    )?;
    Ok(out)
}

/// The HTML export, streamed to `w`.
///
/// # Errors
/// A row that cannot be decoded (nested too deeply; checked before the first byte is
/// written); a write failure.
pub(crate) fn write_html(
    path: &Path,
    sm: &SessionManager,
    w: &mut dyn Write,
    progress: &Progress,
) -> anyhow::Result<()> {
    let m = TreeModel::new(sm, None);
    check_decodable(m.tree.nodes.iter().map(|n| n.entry))?;
    let (layout, meta_line) = prepare(sm, &m);
    let file = sm.file_bytes();
    let payload_len = meta_line.len() + 1 + file.len() + layout.extra_len;
    let sync = payload_len < SYNC_MAX_BYTES;
    let src = if sync {
        PayloadSource::Base64
    } else {
        PayloadSource::DeflateRaw
    };
    w.write_all(page_head(&title(sm), &facts(path, sm, &m), src).as_bytes())?;
    if sync {
        let mut payload = Vec::with_capacity(payload_len + payload_len / 2);
        emit(&m, file, &layout, &meta_line, &mut payload, progress)?;
        w.write_all(
            base64::engine::general_purpose::STANDARD
                .encode(&payload)
                .as_bytes(),
        )?;
    } else {
        let mut packer = Packer {
            w: &mut *w,
            pieces: Vec::new(),
            first: true,
        };
        emit(&m, file, &layout, &meta_line, &mut packer, progress)?;
        packer.pack()?;
    }
    w.write_all(page_tail().as_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_is_rendered_sanitised_and_raw_html_stays_text() {
        let clean = sanitiser();
        assert_eq!(
            markdown_html(
                "**a** <b onclick=x>b</b> [c](javascript:alert(1)) [d](./rel) [e](https://x.invalid/) ![i](https://x.invalid/i.png)",
                &clean
            ),
            "<p><strong>a</strong> &lt;b onclick=x&gt;b&lt;/b&gt; <a rel=\"noopener noreferrer\">c</a> <a rel=\"noopener noreferrer\">d</a> <a href=\"https://x.invalid/\" rel=\"noopener noreferrer\">e</a> </p>\n"
        );
        assert_eq!(
            markdown_html("| a |\n|---|\n| b |\n\n- [x] done", &clean),
            "<table><thead><tr><th>a</th></tr></thead><tbody>\n<tr><td>b</td></tr>\n</tbody></table>\n<ul>\n<li>\ndone</li>\n</ul>\n"
        );
    }

    #[test]
    fn markdown_of_rows_covers_the_text_blocks_of_user_and_assistant_messages_only() {
        let clean = sanitiser();
        let md = |row: &str| markdown_of_row(row.as_bytes(), &clean);
        assert_eq!(
            md(r#"{"type":"message","message":{"role":"user","content":"*hi*"}}"#),
            Some(vec!["<p><em>hi</em></p>\n".to_owned()])
        );
        assert_eq!(
            md(
                r#"{"type":"message","message":{"role":"assistant","content":[{"type":"thinking","thinking":"*t*"},{"type":"text","text":"a"},{"type":"toolCall","name":"x"},{"type":"text","text":""}]}}"#
            ),
            Some(vec!["<p>a</p>\n".to_owned(), String::new()])
        );
        assert_eq!(
            md(r#"{"type":"message","message":{"role":"toolResult","content":"*r*"}}"#),
            None
        );
        // Another shape: the page shows the text as text.
        assert_eq!(
            md(
                r#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":7}]}}"#
            ),
            None
        );
        assert_eq!(md(r#"{"type":"message","message":{"role":"user"}}"#), None);
        assert_eq!(md("not json"), None);
    }

    #[test]
    fn a_served_page_fetches_its_payload_from_its_own_origin() {
        let h = page_head("t", &[], PayloadSource::Url("/s/a&b/payload"));
        assert!(h.contains(&format!(
            "content=\"default-src 'none'; style-src 'unsafe-inline'; script-src {}; connect-src 'self'; img-src data:\""
        , script_hash())));
        assert!(h.ends_with(
            "<script type=\"application/octet-stream\" id=\"payload\" data-enc=\"url\" data-src=\"/s/a&amp;b/payload\">"
        ));
        let h = page_head("t", &[], PayloadSource::Base64);
        assert!(!h.contains("connect-src"));
        assert!(!h.contains("id=\"loading\""));
        let h = page_head("t", &[], PayloadSource::External);
        assert!(h.ends_with("id=\"payload\" data-enc=\"external\">"));
        assert!(page_tail().starts_with("</script>\n<script>(function(){"));
    }

    #[test]
    fn the_payload_carries_the_files_exact_bytes_and_each_row_by_its_offset() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        let text = concat!(
            "{\"type\":\"session\",\"version\":3,\"id\":\"0195f3a0-7c1e-7000-8000-0000000000e1\",\"timestamp\":\"2026-01-02T09:00:00.000Z\",\"cwd\":\"/tmp\"}\n",
            "not json\n",
            "{\"type\":\"message\",\"id\":\"u1\",\"parentId\":null,\"message\":{\"role\":\"user\",\"content\":\"**x**\"}}\r\n",
            "{\"type\":\"message\",\"id\":\"a1\",\"parentId\":\"u1\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"name\":\"ls\"}],\"stopReason\":\"toolUse\",\"usage\":{\"input\":5,\"output\":2}}}\n",
        );
        session_store::io::create_new(&p, text.as_bytes(), None).unwrap();
        let ro = SessionManager::open_read_only(&p, None).unwrap();
        let out = payload(&ro.session).unwrap();
        let nl = out.iter().position(|&b| b == b'\n').unwrap();
        let meta = session_format::json::parse_value(&out[..nl]).unwrap();
        let body = &out[nl + 1..];
        assert_eq!(&body[..text.len()], text.as_bytes());
        assert_eq!(meta.get("file"), Some(&JsValue::Number(text.len() as f64)));
        assert_eq!(meta.get("extra"), Some(&JsValue::Number(0.0)));
        let nodes = match meta.get("n") {
            Some(JsValue::Array(n)) => n.clone(),
            other => panic!("{other:?}"),
        };
        let field = |i: usize, k: usize| match &nodes[i] {
            JsValue::Array(a) => a[k].clone(),
            other => panic!("{other:?}"),
        };
        let num = |v: JsValue| match v {
            JsValue::Number(n) => n as usize,
            other => panic!("{other:?}"),
        };
        // Each node's row is its line's bytes in the file, without the line feed (a CR before
        // it stays, as the store reads the row).
        let lines: Vec<&str> = text.split('\n').collect();
        for (i, (id, line)) in [("u1", lines[2]), ("a1", lines[3])].into_iter().enumerate() {
            assert_eq!(field(i, 0).as_str_lossy().as_deref(), Some(id));
            let (len, off) = (num(field(i, 8)), num(field(i, 9)));
            assert_eq!(&body[off..off + len], line.as_bytes(), "{id}");
        }
        // Flags: the assistant message is the leaf, on the current branch, and only a tool
        // call (8).
        assert_eq!(num(field(0, 6)), 1);
        assert_eq!(num(field(1, 6)), 1 | 2 | 8);
        let totals = meta.get("totals").unwrap();
        assert_eq!(totals.get("input"), Some(&JsValue::Number(5.0)));
        assert_eq!(totals.get("toolCalls"), Some(&JsValue::Number(1.0)));
        // The Markdown line of node 0, after the file.
        assert_eq!(
            std::str::from_utf8(&body[text.len()..]).unwrap(),
            "[0,\"<p><strong>x</strong></p>\\n\"]\n"
        );
    }

    #[test]
    fn pieces_inflate_back_to_the_payload() {
        use std::io::Read;
        let data: Vec<u8> = (0..200_000u32)
            .flat_map(|i| format!("{{\"n\":{i}}}\n").into_bytes())
            .collect();
        let z = deflate(&data).unwrap();
        // 806,356 of 2,488,890 bytes with zlib-rs at the fastest level.
        assert!(z.len() < data.len() / 2, "{} of {}", z.len(), data.len());
        let mut back = Vec::new();
        flate2::read::DeflateDecoder::new(&z[..])
            .read_to_end(&mut back)
            .unwrap();
        assert_eq!(back, data);
    }

    #[test]
    fn packer_writes_one_base64_line_per_piece_in_order() {
        use std::io::Read;
        let mut out = Vec::new();
        let piece = vec![b'a'; CHUNK_BYTES];
        {
            let mut p = Packer {
                w: &mut out,
                pieces: Vec::new(),
                first: true,
            };
            // A piece is closed once it holds CHUNK_BYTES: each line here is one letter and
            // the CHUNK_BYTES after it.
            for b in [b'x', b'y', b'z'] {
                p.push(&[b]).unwrap();
                p.push(&piece).unwrap();
            }
            p.pack().unwrap();
        }
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.split('\n').collect();
        assert_eq!(lines.len(), 3);
        for (line, last) in lines.iter().zip([b'x', b'y', b'z']) {
            let z = base64::engine::general_purpose::STANDARD
                .decode(line)
                .unwrap();
            let mut back = Vec::new();
            flate2::read::DeflateDecoder::new(&z[..])
                .read_to_end(&mut back)
                .unwrap();
            assert_eq!(back.len(), CHUNK_BYTES + 1);
            assert_eq!(back.first(), Some(&last));
        }
    }

    #[test]
    fn the_policy_names_the_script_by_its_hash() {
        let h = script_hash();
        assert!(h.starts_with("'sha256-") && h.ends_with("='"), "{h}");
        assert_eq!(h.len(), "'sha256-".len() + 44 + 1);
    }
}
