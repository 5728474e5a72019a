//! The HTML export: one self-contained page (inline CSS and script, a strict
//! Content-Security-Policy that allows only the page's own script, by its `sha256` hash, and
//! `data:` images; no network access) carrying the session as ONE payload that the script
//! renders with `createElement`/`textContent` (transcript text is never parsed as HTML).
//!
//! The payload is a line of tree metadata (JSON: for each node `[id, type, kind, line, short
//! id, label, flags, children, row length]`, flags 1 = on the current branch, 2 = the leaf,
//! 4 = the first entry a compaction keeps; then `roots`, `parent` and `size` per node),
//! followed by each node's row, its exact bytes from the file, one a line, in node order.
//!
//! - A payload under [`SYNC_MAX_BYTES`] is embedded base64-encoded and rendered synchronously
//!   while the page loads (so `chromium --dump-dom` sees every entry), every branch unfolded.
//! - A larger one is cut into [`CHUNK_BYTES`] pieces, each compressed on its own as a raw
//!   deflate stream (`flate2`, fastest level, two pieces at a time on two threads) and
//!   base64-encoded, one a line; the page inflates them with the browser's
//!   `DecompressionStream("deflate-raw")` and renders in batches per animation frame: the
//!   current branch first (its branches open), then the folded branches in the background; a
//!   folded branch opened, or an entry named by a deep link `#e-<id>`, is rendered at once.
//!
//! An entry's content and JSON are built from its row the first time it is opened.

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

/// The metadata line of the payload (see the module documentation), without its line feed.
fn metadata(m: &TreeModel<'_>) -> String {
    let n = m.len();
    let mut s = String::with_capacity(64 + n * 112);
    s.push_str("{\"n\":[");
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
            | (u8::from(!m.first_kept_of[i].is_empty()) << 2);
        let _ = write!(s, ",{flags},[");
        for (k, c) in m.children(i).iter().enumerate() {
            if k > 0 {
                s.push(',');
            }
            let _ = write!(s, "{c}");
        }
        let _ = write!(s, "],{}]", e.raw_bytes().len());
    }
    s.push_str("],\"roots\":[");
    push_list(&mut s, m.tree.roots.iter().map(|&r| r as i64));
    s.push_str("],\"parent\":[");
    push_list(&mut s, m.parent.iter().map(|p| p.map_or(-1, |p| p as i64)));
    s.push_str("],\"size\":[");
    push_list(&mut s, m.size.iter().map(|&z| z as i64));
    s.push_str("]}");
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

/// The `sha256-…` source expression of the page's script.
fn script_hash() -> String {
    let digest = Sha256::digest(SCRIPT.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
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
    let header = sm.get_header()?.unwrap_or(JsValue::Null);
    let name = sm.get_session_name().ok().flatten();
    let title = name.unwrap_or_else(|| format!("Session {}", sm.get_session_id()));
    let meta_line = metadata(&m);
    let payload_len = meta_line.len()
        + 1
        + m.tree
            .nodes
            .iter()
            .map(|n| n.entry.raw_bytes().len() + 1)
            .sum::<usize>();
    let sync = payload_len < SYNC_MAX_BYTES;

    let mut h = String::with_capacity(16 * 1024);
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(
        h,
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src {}; img-src data:\">",
        script_hash()
    );
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
    h.push_str("<noscript><p>This page shows the session's entries with its own script; enable JavaScript to see them.</p></noscript>\n");
    if !sync {
        let _ = writeln!(
            h,
            "<p id=\"loading\" class=\"legend\">Unpacking {} entries…</p>",
            text::thousands(m.len())
        );
    }
    h.push_str("</main>\n");
    let _ = write!(
        h,
        "<script type=\"application/octet-stream\" id=\"payload\" data-enc=\"{}\">",
        if sync { "base64" } else { "deflate-raw" }
    );
    w.write_all(h.as_bytes())?;

    if sync {
        let mut payload = Vec::with_capacity(payload_len);
        payload.extend_from_slice(meta_line.as_bytes());
        payload.push(b'\n');
        for node in &m.tree.nodes {
            let raw = node.entry.raw_bytes();
            payload.extend_from_slice(raw);
            payload.push(b'\n');
            progress.inc(raw.len() as u64 + 1);
        }
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
        packer.push(meta_line.as_bytes())?;
        packer.push(b"\n")?;
        drop(meta_line);
        for node in &m.tree.nodes {
            let raw = node.entry.raw_bytes();
            packer.push(raw)?;
            packer.push(b"\n")?;
            progress.inc(raw.len() as u64 + 1);
        }
        packer.pack()?;
    }
    let tail = format!("</script>\n<script>{SCRIPT}</script>\n</body>\n</html>\n");
    w.write_all(tail.as_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
