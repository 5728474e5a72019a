//! `sessions show FILE ENTRY_ID`: one entry as pretty JSON.

use std::path::Path;

use crate::model;
use crate::output::Output;

pub(crate) const LONG_ABOUT: &str = "\
Print one entry of a session as pretty JSON (2-space indentation, the file's key order), read-only.

The entry is printed as reads report it: for a v1/v2 file after the in-memory migration, with a
parentId resolved through opaque rows. --raw prints the stored line byte for byte instead.

ENTRY_ID is an entry id, a unique prefix of one, or @LINE for the entry on that 1-based line of the
file (the only stable way to address entries of a v1 file, whose ids are made up on every read).
An unknown id is an error listing close matches (exit code 2).";

/// `sessions show FILE ENTRY_ID`.
pub(crate) fn run(path: &Path, spec: &str, raw: bool, out: &mut Output) -> anyhow::Result<()> {
    let ro = model::open(path)?;
    let e = model::resolve_entry(&ro.session, spec)?;
    if raw {
        // The line as it is on disk: `raw_bytes` would give a migrated row's new text.
        let bytes = session_store::io::read_file(path)?;
        let line = e.location().line.and_then(|n| {
            session_format::line::lines(&bytes)
                .nth(n.checked_sub(1)?)
                .map(|l| l.bytes)
        });
        out.write_bytes(line.unwrap_or_else(|| e.raw_bytes()))?;
        out.write_str("\n")?;
        return Ok(());
    }
    let v = e.value()?;
    out.line(&session_format::normalize::to_json_string_indented(&v, 2))?;
    Ok(())
}
