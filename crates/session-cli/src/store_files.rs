//! Files of a sessions directory that are not transcripts (OpenClaw's store index
//! `sessions.json`, its temp files and backups, trajectory sidecars, archives and checkpoints
//! without a header; this tool's audit log and the write locks), named in one phrase so the read commands can say what such a file is
//! instead of reporting it as a broken session.

use std::path::Path;

use crate::text;

/// True when the file's first line (read up to 64 KiB) is a JSON object with
/// `"type":"session"`: a session header (spec §1).
pub(crate) fn first_line_is_header(path: &Path) -> bool {
    use std::io::Read;
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    let mut buf = Vec::new();
    if f.take(64 * 1024).read_to_end(&mut buf).is_err() {
        return false;
    }
    let line = buf.split(|&b| b == b'\n').next().unwrap_or_default();
    serde_json::from_slice::<serde_json::Value>(line)
        .ok()
        .and_then(|v| {
            v.get("type")
                .and_then(|t| t.as_str())
                .map(|t| t == "session")
        })
        .unwrap_or(false)
}

/// What a file OpenClaw's sessions directory manages is, by its name
/// ([`session_semantics::openclaw_store::classify`], openclaw-store.md R1.13–R1.14), when it is
/// not a transcript to read: the store index `sessions.json`, its temp files and backups, the
/// trajectory sidecars, and archives or checkpoints whose first line is not a session header.
/// One phrase for a one-line note; `None` for a transcript or any other file.
pub(crate) fn store_file_note(path: &Path) -> Option<String> {
    use session_semantics::openclaw_store::{ArtifactKind, classify};
    let name = path.file_name()?.to_string_lossy().into_owned();
    if name == session_semantics::audit::AUDIT_LOG_NAME {
        return Some(
            "the audit log of this tool's moves and renames (one JSON line each), not a \
             transcript"
                .to_owned(),
        );
    }
    if name.ends_with(".jsonl.lock") {
        return Some(
            "a session write lock, not a transcript: `sessions unlock --stale` lists them"
                .to_owned(),
        );
    }
    let note = match classify(&name) {
        ArtifactKind::Store => {
            "OpenClaw's session store index, not a transcript: `sessions list` reads it".to_owned()
        }
        ArtifactKind::StoreTemp => "a temp file of OpenClaw's session store index \
             (sessions.json), not a transcript"
            .to_owned(),
        ArtifactKind::StoreBackup => "a backup of OpenClaw's session store index \
             (sessions.json), not a transcript"
            .to_owned(),
        ArtifactKind::Trajectory { stem, pointer } => format!(
            "OpenClaw's trajectory {} of {}.jsonl, not a transcript",
            if pointer {
                "pointer sidecar"
            } else {
                "capture sidecar"
            },
            text::safe(&stem)
        ),
        ArtifactKind::Archive { original, .. } if !first_line_is_header(path) => format!(
            "an OpenClaw archive of {}, not a transcript: `sessions list --archived` lists it",
            text::safe(&original)
        ),
        ArtifactKind::Checkpoint { session_id } if !first_line_is_header(path) => format!(
            "an OpenClaw compaction checkpoint of session {}, not a transcript",
            text::safe(&session_id)
        ),
        _ => return None,
    };
    Some(note)
}
