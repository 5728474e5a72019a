//! `sessions show FILE ENTRY_ID`: one entry as pretty JSON, or any line of the file as stored.

use std::path::Path;

use session_format::line::{LineContent, LineReader};

use crate::ctx::Ctx;
use crate::outcome::UsageError;
use crate::output::Output;
use crate::{model, text};

pub(crate) const LONG_ABOUT: &str = "\
Print one entry of a session as pretty JSON (2-space indentation, the file's key order), read-only.

The entry is printed as reads report it: for a v1/v2 file after the in-memory migration, with a
parentId resolved through opaque rows. --raw prints the stored line byte for byte instead, and
says on stderr where it is (`FILE:LINE: byte OFFSET`) and what it is.

ENTRY_ID is an entry id, a unique prefix of one, or @LINE for the entry on that 1-based line of the
file (a v1 file's ids are derived from its bytes and line numbers: stable while it is unchanged,
but a migration by OpenClaw gives new random ones, so @LINE is what stays valid).
With --raw, @LINE prints any line: a malformed line, the session header, an opaque row, a line
too deeply nested to decode, even a line of a file that is not a session. An unknown id is an
error listing close matches (exit code 2).";

/// Prints line `n` of the file as stored, and on stderr where it is and what it holds.
fn raw_line(ctx: &Ctx, path: &Path, n: usize, out: &mut Output) -> anyhow::Result<()> {
    let bytes = ctx.backend.read_session(path)?;
    raw_line_of(&bytes, path, n, out)
}

/// [`raw_line`] of the file's bytes: only line `n` is read as JSON (as [`LineReader`] reads it
/// in the whole file), the lines before it are only split.
fn raw_line_of(bytes: &[u8], path: &Path, n: usize, out: &mut Output) -> anyhow::Result<()> {
    use session_format::line::{is_blank, lines};
    let found = lines(bytes).nth(n.saturating_sub(1)).filter(|_| n > 0);
    let Some(l) = found.and_then(|raw| {
        // The first non-blank line loses leading whitespace; later ones keep it.
        let after_non_blank = lines(bytes).take(n - 1).any(|l| !is_blank(l.bytes));
        LineReader::range(bytes, raw.offset, raw.offset + 1, after_non_blank)
            .next()
            .map(|mut l| {
                l.raw.number = raw.number;
                l
            })
    }) else {
        let total = lines(bytes).count();
        anyhow::bail!(UsageError::new(format!(
            "{} has {} {}; there is no line {n}",
            text::path(path),
            text::thousands(total),
            if total == 1 { "line" } else { "lines" }
        )));
    };
    let what = match &l.content {
        LineContent::Blank => "a blank line".to_owned(),
        LineContent::Malformed(e) => format!("not JSON: {}", e.error),
        LineContent::Json(env) => {
            let ty = env
                .r#type
                .as_js_str()
                .map(|t| format!("type \"{}\"", text::safe(&t.to_str_lossy())));
            let id = env
                .id
                .as_js_str()
                .map(|i| format!("id \"{}\"", text::safe(&i.to_str_lossy())));
            let parts: Vec<String> = ty.into_iter().chain(id).collect();
            if parts.is_empty() {
                "JSON".to_owned()
            } else {
                format!("JSON, {}", parts.join(", "))
            }
        }
    };
    out.write_bytes(l.raw.bytes)?;
    out.write_str("\n")?;
    out.flush()?;
    eprintln!(
        "{}:{}: byte {}: {what}",
        text::path(path),
        l.raw.number,
        l.raw.offset
    );
    Ok(())
}

/// `sessions show FILE ENTRY_ID`.
pub(crate) fn run(
    ctx: &Ctx,
    path: &Path,
    spec: &str,
    raw: bool,
    out: &mut Output,
) -> anyhow::Result<()> {
    if raw && let Some(n) = spec.strip_prefix('@') {
        let n: usize = n.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
            UsageError::new(format!("bad line number in {spec:?} (lines start at 1)"))
        })?;
        return raw_line(ctx, path, n, out);
    }
    let opened = model::open(ctx, path)?;
    for w in &opened.warnings {
        out.warn(w)?;
    }
    // `@N` past the end: say so, rather than pointing to --raw, which has no such line either.
    let sm = &opened.ro.session;
    // The bytes the open read (read again only for an empty or whitespace-only file).
    let kept = (sm.file_bytes().len() == opened.ro.report.bytes).then(|| sm.file_bytes());
    if let Some(n) = spec.strip_prefix('@').and_then(|n| n.parse::<usize>().ok())
        && sm.get_entry(spec).is_none()
    {
        let reread;
        let bytes: &[u8] = match kept {
            Some(b) => b,
            None => {
                reread = ctx.backend.read_session(path)?;
                &reread
            }
        };
        let total = session_format::line::lines(bytes).count();
        if n > total {
            anyhow::bail!(UsageError::new(format!(
                "{} has {} {}; there is no line {n}",
                text::path(path),
                text::thousands(total),
                if total == 1 { "line" } else { "lines" }
            )));
        }
    }
    let e = model::resolve_entry(&opened.ro.session, spec)?;
    if raw {
        if let Some(n) = e.location().line {
            return match kept {
                Some(bytes) => raw_line_of(bytes, path, n, out),
                None => raw_line(ctx, path, n, out),
            };
        }
        out.write_bytes(e.raw_bytes())?;
        out.write_str("\n")?;
        return Ok(());
    }
    let v = e.value()?;
    out.line(&session_format::normalize::to_json_string_indented(&v, 2))?;
    Ok(())
}
