//! How a run ends: [`Outcome`] for a run that finished (exit code 0, 1 or 2) and
//! [`UsageError`] for a command line that cannot be carried out (exit code 2, like clap's own).
//! Every subcommand module returns these; this module depends on nothing else in the crate, so
//! the subcommands need not import `main` or each other for them.

use std::process::ExitCode;

/// What a successful run found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Nothing to report.
    Ok,
    /// `check` found problems (exit code 1).
    Problems,
    /// A write command changed something, or with `--dry-run` would (exit code 1).
    Changed,
    /// Some input could not be read; already reported on stderr (exit code 2).
    Failed,
}

impl Outcome {
    /// The process exit code: 0 for [`Outcome::Ok`], 1 for [`Outcome::Problems`] and
    /// [`Outcome::Changed`], 2 for [`Outcome::Failed`].
    pub(crate) fn exit_code(self) -> ExitCode {
        match self {
            Outcome::Ok => ExitCode::SUCCESS,
            Outcome::Problems | Outcome::Changed => ExitCode::from(1),
            Outcome::Failed => ExitCode::from(2),
        }
    }
}

/// A usage error (exit code 2, like clap's own): the message names the value and the rule.
#[derive(Debug)]
pub(crate) struct UsageError(String);

impl UsageError {
    pub(crate) fn new(msg: impl Into<String>) -> Self {
        UsageError(msg.into())
    }
}

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}
