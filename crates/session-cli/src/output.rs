//! Buffered stdout that ends quietly when the reader goes away (`sessions tree … | head`),
//! warnings on stderr, and error messages without repeated causes.

use std::io::{self, BufWriter, Write};

use session_format::json::{JsonErrorKind, MAX_DEPTH};
use session_store::{ContextError, ReadError};

use crate::text;

/// The command's standard output, buffered.
pub(crate) struct Output {
    inner: BufWriter<io::Stdout>,
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Output")
    }
}

impl Output {
    /// Stdout with a 64 KiB buffer.
    pub(crate) fn new() -> Self {
        Output {
            inner: BufWriter::with_capacity(64 * 1024, io::stdout()),
        }
    }

    /// Writes text as is.
    pub(crate) fn write_str(&mut self, s: &str) -> io::Result<()> {
        self.inner.write_all(s.as_bytes())
    }

    /// Writes bytes as is.
    pub(crate) fn write_bytes(&mut self, b: &[u8]) -> io::Result<()> {
        self.inner.write_all(b)
    }

    /// Writes a line (a `\n` is added).
    pub(crate) fn line(&mut self, s: &str) -> io::Result<()> {
        self.inner.write_all(s.as_bytes())?;
        self.inner.write_all(b"\n")
    }

    /// Flushes what was written so far (before writing to stderr, so the two stay in order).
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }

    /// Flushes stdout, then prints `warning: MSG` on stderr.
    pub(crate) fn warn(&mut self, msg: &str) -> io::Result<()> {
        self.inner.flush()?;
        eprintln!("warning: {msg}");
        Ok(())
    }

    /// Flushes stdout, then prints `error: MSG` on stderr.
    pub(crate) fn error(&mut self, msg: &str) -> io::Result<()> {
        self.inner.flush()?;
        eprintln!("error: {msg}");
        Ok(())
    }

    /// Flushes everything.
    pub(crate) fn finish(mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// True when the error chain holds a broken pipe (the reader closed stdout).
pub(crate) fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// The one-line explanation of a row that is nested too deeply to decode.
pub(crate) fn too_deep_text(re: &ReadError) -> Option<String> {
    if re.source.kind != JsonErrorKind::TooDeep {
        return None;
    }
    let file = re.at.file.as_deref().map(text::path).unwrap_or_default();
    let quoted = re
        .at
        .file
        .as_deref()
        .map(|p| text::shell_quote(&p.display().to_string()))
        .unwrap_or_default();
    Some(match (re.at.line, re.at.byte_offset) {
        (Some(l), Some(b)) => format!(
            "{file}:{l}: byte {b}: nesting deeper than {MAX_DEPTH} levels: kept verbatim, \
             cannot be decoded (`sessions show --raw {quoted} @{l}` prints the line)"
        ),
        _ => format!("{file}: a row is nested deeper than {MAX_DEPTH} levels: cannot be decoded"),
    })
}

/// The error as one line: each cause once (a cause whose text is already part of the message
/// is not repeated, as `Permission denied (os error 13)` would be), rows too deep to decode
/// explained, unsafe characters escaped.
pub(crate) fn error_text(e: &anyhow::Error) -> String {
    for cause in e.chain() {
        let re = cause.downcast_ref::<ReadError>().or_else(|| {
            match cause.downcast_ref::<ContextError>() {
                Some(ContextError::Read(re)) => Some(re),
                _ => None,
            }
        });
        if let Some(t) = re.and_then(too_deep_text) {
            return t;
        }
    }
    let mut out = String::new();
    for cause in e.chain() {
        let msg = cause.to_string();
        if msg.is_empty() || out.contains(&msg) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&msg);
    }
    text::safe(&out).into_owned()
}

/// [`error_text`] for a message that names `path` first (`PATH: TEXT`): the mentions of the
/// path the error's own contexts make are not repeated (a leading `PATH: `, `cannot read PATH
/// from STORE` as `cannot be read from STORE`, `cannot read session file PATH` as `cannot be
/// read`).
pub(crate) fn error_text_after_path(path: &std::path::Path, e: &anyhow::Error) -> String {
    let mut t = error_text(e);
    for shown in [text::path(path), path.display().to_string()] {
        if let Some(rest) = t.strip_prefix(&format!("{shown}: ")) {
            t = rest.to_owned();
        }
        t = t
            .replace(
                &format!("cannot read {shown} from "),
                "cannot be read from ",
            )
            .replace(
                &format!("cannot read session file {shown}"),
                "cannot be read",
            )
            .replace(
                &format!("{shown} is not a session of "),
                "not a session of ",
            );
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_are_not_repeated() {
        let io = io::Error::from(io::ErrorKind::PermissionDenied);
        let shown = io.to_string();
        let e = anyhow::Error::new(io).context(format!("cannot read x.jsonl: {shown}"));
        assert_eq!(error_text(&e), format!("cannot read x.jsonl: {shown}"));
        let e = anyhow::anyhow!("inner").context("outer");
        assert_eq!(error_text(&e), "outer: inner");
    }
}
