//! Progress on stderr for long reads: a bar (or, for one file the library reads in a single
//! call, a spinner) shown only when stderr is a terminal and the work is large — more than
//! [`BIG_BYTES`] bytes or more than [`MANY_SESSIONS`] sessions. Everywhere else (pipes, files,
//! tests, CI) every method is a no-op, so output captured by a program never holds a bar.
//!
//! Warnings printed while a bar is shown go through [`Progress::suspend`] so they are not drawn
//! over.

use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::ctx::Ctx;
use crate::text;

/// Bytes above which a read shows progress (50 MB).
pub(crate) const BIG_BYTES: u64 = 50_000_000;

/// Sessions above which a command over a store shows progress.
pub(crate) const MANY_SESSIONS: u64 = 1_000;

/// A progress indicator on stderr, or nothing (see the module documentation).
#[derive(Debug)]
pub(crate) struct Progress {
    bar: Option<ProgressBar>,
}

fn styled(bar: ProgressBar, template: &str) -> ProgressBar {
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    bar
}

fn shown() -> bool {
    std::io::stderr().is_terminal()
}

impl Progress {
    /// No progress at all.
    pub(crate) fn hidden() -> Self {
        Progress { bar: None }
    }

    /// A bar over `total` bytes, labelled `what` (`exporting FILE`), shown when `total` is over
    /// [`BIG_BYTES`] and stderr is a terminal. Advance it with [`Progress::set`] / [`Progress::inc`].
    pub(crate) fn bytes(total: u64, what: &str) -> Self {
        if total <= BIG_BYTES || !shown() {
            return Progress::hidden();
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        let bar = styled(bar, "{wide_msg} {bar:20} {bytes}/{total_bytes} ({elapsed})");
        bar.set_message(what.to_owned());
        Progress { bar: Some(bar) }
    }

    /// A bar over `total` sessions, labelled `what` (`scanning sessions`), shown when `total` is
    /// over [`MANY_SESSIONS`] and stderr is a terminal.
    pub(crate) fn sessions(total: u64, what: &str) -> Self {
        if total <= MANY_SESSIONS || !shown() {
            return Progress::hidden();
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        let bar = styled(bar, "{wide_msg} {bar:20} {pos}/{len} ({elapsed})");
        bar.set_message(what.to_owned());
        Progress { bar: Some(bar) }
    }

    /// A spinner for one step whose progress cannot be counted (the library's open of a file of
    /// `bytes` bytes, say), labelled `what`; shown when `bytes` is over [`BIG_BYTES`] and stderr
    /// is a terminal. It ticks on its own until [`Progress::finish`] or drop.
    pub(crate) fn spinner(bytes: u64, what: &str) -> Self {
        if bytes <= BIG_BYTES || !shown() {
            return Progress::hidden();
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        let bar = styled(bar, "{spinner} {wide_msg} ({elapsed})");
        bar.set_message(what.to_owned());
        bar.enable_steady_tick(Duration::from_millis(100));
        Progress { bar: Some(bar) }
    }

    /// True when something is drawn.
    pub(crate) fn is_shown(&self) -> bool {
        self.bar.is_some()
    }

    /// Sets the position (bytes or sessions done).
    pub(crate) fn set(&self, done: u64) {
        if let Some(b) = &self.bar {
            b.set_position(done);
        }
    }

    /// Advances the position by `n`.
    pub(crate) fn inc(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
        }
    }

    /// Runs `f` with the bar hidden (for a warning on stderr).
    pub(crate) fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(b) => b.suspend(f),
            None => f(),
        }
    }

    /// Removes the bar from the terminal.
    pub(crate) fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// A spinner on stderr while the session file at `path` is read ("`what` FILE"): shown only
/// when stderr is a terminal and the file is over [`BIG_BYTES`] bytes (a
/// session of another backend shows none).
pub(crate) fn reading(ctx: &Ctx, path: &Path, what: &str) -> Progress {
    let size = if ctx.store().is_none() {
        std::fs::metadata(path).map_or(0, |m| m.len())
    } else {
        0
    };
    Progress::spinner(size, &format!("{what} {}", text::path(path)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_work_and_non_terminals_show_nothing() {
        // Under the test harness stderr is captured (not a terminal), so even big work is hidden.
        assert!(!Progress::bytes(BIG_BYTES, "x").is_shown());
        assert!(!Progress::bytes(BIG_BYTES * 10, "x").is_shown() || shown());
        assert!(!Progress::sessions(MANY_SESSIONS, "x").is_shown());
        assert!(!Progress::spinner(1, "x").is_shown());
        let p = Progress::hidden();
        p.set(5);
        p.inc(5);
        assert_eq!(p.suspend(|| 7), 7);
        assert!(!p.is_shown());
    }
}
