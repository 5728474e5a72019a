//! The retention audit log: one JSON line per session file that [`crate::retention`] moved
//! into `archive/` or deleted, appended to `<sessions>/sessions-audit.log` right after the move
//! or delete succeeded.
//!
//! Invariants:
//! - a line is appended only for an action that happened (a dry run, a refused or a skipped
//!   action writes nothing);
//! - each line is one `write` on an `O_APPEND` descriptor ([`session_store::io::append_line`]),
//!   synced (`fdatasync`), in a file created 0600 when missing; the log is never rewritten or
//!   truncated;
//! - the log is a regular file reached without a symlink: a symlink, directory or other thing at
//!   its path is refused before any session is touched.
//!
//! The name ends in `.log`, not `.jsonl`: every reader of sessions directories lists `*.jsonl`
//! (OpenClaw 2026.6.11's `SessionManager.list`, its store maintenance, which takes any
//! top-level `*.jsonl` for a transcript and sweeps unreferenced ones, openclaw-store.md R1.14;
//! `sessions list`, `archive`, `clear`, `migrate`), so a `.jsonl` log would be reported as a
//! broken session, or deleted as an orphan transcript.

use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// The audit log's file name in a sessions directory.
pub const AUDIT_LOG_NAME: &str = "sessions-audit.log";

/// What was done to a session file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AuditAction {
    /// Moved into `archive/`.
    Archive,
    /// Deleted.
    Delete,
}

/// One line of the audit log (serialised with its keys in this order).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditRecord {
    /// When it was done: ISO 8601, UTC, milliseconds (`2026-07-01T00:00:00.000Z`).
    pub time: String,
    /// `archive` or `delete`.
    pub action: AuditAction,
    /// The file, relative to the sessions directory.
    pub file: String,
    /// Where it went, relative to the sessions directory (`archive/<name>`); `null` when
    /// deleted.
    pub destination: Option<String>,
    /// The header's session id.
    pub session_id: String,
    /// Why: `max-age` or `max-size` (retention's archive), `clear` (`sessions clear`).
    pub reason: String,
    /// The file's size when it was moved or deleted.
    pub bytes: u64,
}

/// An open (checked) audit log of one sessions directory.
#[derive(Clone, Debug)]
pub struct AuditLog {
    path: PathBuf,
}

impl AuditLog {
    /// The audit log of `sessions_dir`, checked before anything is moved: its path holds
    /// nothing (the first line will create it, 0600) or a regular file that is not a symlink.
    ///
    /// # Errors
    /// `InvalidInput` naming the path when a symlink, directory, FIFO, socket or device is
    /// there; the `lstat` failure otherwise.
    pub fn open(sessions_dir: &Path) -> io::Result<AuditLog> {
        let path = sessions_dir.join(AUDIT_LOG_NAME);
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "audit log {} is a symlink; it must be a regular file",
                    path.display()
                ),
            )),
            Ok(m) if !m.is_file() => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "audit log {} is not a regular file; it must be one",
                    path.display()
                ),
            )),
            Ok(_) => Ok(AuditLog { path }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(AuditLog { path }),
            Err(e) => Err(io::Error::new(
                e.kind(),
                format!("audit log {}: {e}", path.display()),
            )),
        }
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `record` as one JSON line (one `write`, `O_APPEND`, synced).
    ///
    /// # Errors
    /// The append fails (nothing of the line is left behind, see
    /// [`session_store::io::append_line`]); the error names the log.
    pub fn append(&self, record: &AuditRecord) -> io::Result<()> {
        let line = serde_json::to_vec(record).map_err(io::Error::other)?;
        session_store::io::append_line(&self.path, &line, session_store::Durability::SyncData)
            .map(|_| ())
            .map_err(|e| {
                io::Error::new(e.kind(), format!("audit log {}: {e}", self.path.display()))
            })
    }
}

/// The current time as the audit log writes it (ISO 8601, UTC, milliseconds).
pub(crate) fn now_iso() -> String {
    use crate::policy::Clock as _;
    let ms = crate::policy::SystemClock.now_ms();
    session_format::time::to_iso_string(ms).unwrap_or_else(|| ms.to_string())
}
