//! Buffered stdout that ends quietly when the reader goes away (`sessions tree … | head`).

use std::io::{self, BufWriter, Write};

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
