//! Dev-only helpers shared by the workspace's tests (never a dependency of a library's normal
//! build).
//!
//! - [`skip`]: how a test that cannot run here says so. It prints `SKIP <test>: <reason>` to
//!   stderr and, when `$SESSION_SKIP_LOG` names a file, appends the same line to it. libtest
//!   captures the stderr of passing tests, so `.ci/run` sets `SESSION_SKIP_LOG` and prints the
//!   count and the lines of that file after the run: a run where half the suite skipped cannot
//!   look green.
//! - [`shared_dir`]: the `shared/` folder beside the workspace (specs, conformance samples,
//!   fixtures made by the real tools), or a recorded skip when a fresh clone does not have it.
#![warn(missing_docs)]

use std::io::Write;
use std::path::{Path, PathBuf};

/// The environment variable naming the file that [`skip`] appends its line to.
pub const SKIP_LOG_ENV: &str = "SESSION_SKIP_LOG";

/// Records that `test` skipped for `reason`: prints `SKIP <test>: <reason>` to stderr and, when
/// [`SKIP_LOG_ENV`] names a file, appends that line to it (one `write` of the whole line on an
/// `O_APPEND` descriptor, so lines from parallel tests never interleave). A log that cannot be
/// written is reported on stderr and otherwise ignored: a skip never fails a test.
pub fn skip(test: &str, reason: impl std::fmt::Display) {
    let log = std::env::var_os(SKIP_LOG_ENV).filter(|v| !v.is_empty());
    skip_to(log.as_deref().map(Path::new), test, &reason);
}

fn skip_to(log: Option<&Path>, test: &str, reason: &dyn std::fmt::Display) {
    let line = format!("SKIP {test}: {reason}\n");
    eprint!("{line}");
    if let Some(log) = log {
        // The skip log is the test run's own report, not a session store: a plain append.
        #[allow(clippy::disallowed_methods)]
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = written {
            eprintln!("cannot append to {}: {e}", log.display());
        }
    }
}

/// The shared folder: `$SESSION_SHARED_DIR`, else `shared/` beside the workspace root. `None`
/// after a [`skip`] naming `test` when it holds no `conformance/` folder (a fresh clone).
pub fn shared_dir(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("SESSION_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("../shared"));
    if dir.join("conformance").is_dir() {
        Some(dir)
    } else {
        skip(
            test,
            format_args!(
                "shared folder not found at {} (set SESSION_SHARED_DIR)",
                dir.display()
            ),
        );
        None
    }
}

/// The workspace root (the folder holding the top `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    #[test]
    fn skips_append_one_line_each_to_the_log() {
        let log = std::env::temp_dir().join(format!("skip-log-{}.txt", std::process::id()));
        let _ = std::fs::remove_file(&log);
        super::skip_to(Some(&log), "first_test", &"no chromium");
        super::skip_to(Some(&log), "second_test", &format_args!("{} missing", "/x"));
        let text = std::fs::read_to_string(&log).unwrap();
        std::fs::remove_file(&log).unwrap();
        assert_eq!(
            text,
            "SKIP first_test: no chromium\nSKIP second_test: /x missing\n"
        );
    }
}
