//! `sessions replay SCRIPT`: runs a conformance op-script through
//! `session_store::test_util::replay` in a fresh temporary directory and prints the normalized
//! output (for debugging the conformance harness).

use std::path::Path;

use anyhow::Context;

use crate::output::Output;

pub(crate) const LONG_ABOUT: &str = "\
Developer tool (hidden from `sessions --help`): for debugging this workspace's conformance
harness, not for inspecting sessions.

Run a conformance op-script (JSON, format: shared/conformance/OPS.md) against this workspace's
SessionManager in a fresh temporary directory (removed afterwards) and print the normalized
result array, byte-comparable with shared/conformance/expected/openclaw-2026.6.11/<script>.json:
the directory becomes <dir>, file-name timestamps <fts>_, ISO timestamps <ts>, ids #1, #2, …,
clock readings \"<now-ms>\", printed with one-space indentation.";

/// `sessions replay SCRIPT`.
pub(crate) fn run(script: &Path, out: &mut Output) -> anyhow::Result<()> {
    crate::fsx::require_regular(script)?;
    let bytes = session_store::io::read_file(script)
        .with_context(|| format!("cannot read op-script {}", script.display()))?;
    let dir = tempfile::Builder::new()
        .prefix("sessions-replay-")
        .tempdir()
        .context("cannot create a temporary directory")?;
    let text = session_store::test_util::replay::run_script_normalized(
        session_store::FileStorage::shared(),
        &bytes,
        dir.path(),
    )
    .with_context(|| format!("cannot run op-script {}", script.display()))?;
    out.write_str(&text)?;
    Ok(())
}
