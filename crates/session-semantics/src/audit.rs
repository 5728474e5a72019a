//! The retention audit log: one JSON line per session file that [`crate::retention`] moved
//! into `archive/` or deleted (and per alias symlink of it removed afterwards), appended to `<sessions>/sessions-audit.log` right after the move
//! or delete succeeded.
//!
//! Invariants:
//! - a line is appended only for an action that happened (a dry run, a refused or a skipped
//!   action writes nothing);
//! - each line is one `write` on an `O_APPEND` descriptor opened once per run with
//!   `O_NOFOLLOW` ([`session_store::io::append_line_to`]),
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

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

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
    /// Renamed in place (OpenClaw store maintenance: `<file>.deleted.<ARCHIVE_TS>`,
    /// openclaw-store.md §4, docs/DEVIATIONS.md D38).
    Rename,
    /// A symlink naming a session that was just moved or deleted (an alias), removed so it
    /// does not dangle: the link only, never a file's bytes (`bytes` is 0).
    #[serde(rename = "remove-alias")]
    RemoveAlias,
}

/// One line of the audit log (serialised with its keys in this order).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditRecord {
    /// When it was done: ISO 8601, UTC, milliseconds (`2026-07-01T00:00:00.000Z`).
    pub time: String,
    /// `archive`, `delete`, `rename` or `remove-alias`.
    pub action: AuditAction,
    /// The file, relative to the sessions directory.
    pub file: String,
    /// Where it went, relative to the sessions directory (`archive/<name>`); `null` when
    /// deleted.
    pub destination: Option<String>,
    /// The header's session id.
    pub session_id: String,
    /// Why: `max-age` or `max-size` (retention's archive), `clear` (`sessions clear`),
    /// `alias of <file>` (a removed alias), and for OpenClaw store maintenance the row's
    /// action label (`prune-stale`, `cap-overflow`, `evict-budget`) or `unreferenced` /
    /// `disk-budget`.
    pub reason: String,
    /// The file's size when it was moved or deleted.
    pub bytes: u64,
}

/// An open (checked) audit log of one sessions directory. The log is opened once, by name,
/// with `O_NOFOLLOW` (when it exists at [`AuditLog::open`], else at the first
/// [`AuditLog::append`], which creates it 0600), and every line is appended through that
/// descriptor: a symlink swapped in at its path during a run is never followed, so audit lines
/// can never land in a session file or anywhere else the link points.
#[derive(Debug)]
pub struct AuditLog {
    path: PathBuf,
    file: Mutex<Option<File>>,
}

impl AuditLog {
    /// The audit log of `sessions_dir`, checked before anything is moved: its path holds
    /// nothing (the first line will create it, 0600) or a regular file that is not a symlink,
    /// which is opened for appending here (`O_NOFOLLOW`).
    ///
    /// # Errors
    /// `InvalidInput` naming the path when a symlink, directory, FIFO, socket or device is
    /// there; the `lstat` or `open` failure otherwise.
    pub fn open(sessions_dir: &Path) -> io::Result<AuditLog> {
        let path = sessions_dir.join(AUDIT_LOG_NAME);
        let named =
            |e: io::Error| io::Error::new(e.kind(), format!("audit log {}: {e}", path.display()));
        let file = match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => return Err(symlink_error(&path)),
            Ok(m) if !m.is_file() => return Err(not_regular_error(&path)),
            Ok(_) => Some(open_log(&path, false)?),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(named(e)),
        };
        Ok(AuditLog {
            file: Mutex::new(file),
            path,
        })
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `record` as one JSON line (one `write`, `O_APPEND`, synced) through the log's
    /// descriptor (opened, or created 0600, at the first line when it did not exist yet).
    ///
    /// # Errors
    /// The append fails (nothing of the line is left behind, see
    /// [`session_store::io::append_line_to`]); a symlink or anything but a regular file at the
    /// path when the log is created; the error names the log.
    pub fn append(&self, record: &AuditRecord) -> io::Result<()> {
        let line = serde_json::to_vec(record).map_err(io::Error::other)?;
        let named = |e: io::Error| {
            io::Error::new(e.kind(), format!("audit log {}: {e}", self.path.display()))
        };
        let mut slot = self
            .file
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let file = match &mut *slot {
            Some(f) => f,
            None => slot.insert(open_log(&self.path, true)?),
        };
        session_store::io::append_line_to(file, &line, session_store::Durability::SyncData)
            .map(|_| ())
            .map_err(named)
    }
}

/// Opens the log for appending without following a symlink at its path (`ELOOP` is reported
/// as the symlink it is).
fn open_log(path: &Path, create: bool) -> io::Result<File> {
    session_store::io::open_append_nofollow(path, create).map_err(|e| {
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
            symlink_error(path)
        } else if e.kind() == io::ErrorKind::InvalidInput {
            not_regular_error(path)
        } else {
            io::Error::new(e.kind(), format!("audit log {}: {e}", path.display()))
        }
    })
}

fn symlink_error(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "audit log {} is a symlink; it must be a regular file",
            path.display()
        ),
    )
}

fn not_regular_error(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "audit log {} is not a regular file; it must be one",
            path.display()
        ),
    )
}

/// The current time as the audit log writes it (ISO 8601, UTC, milliseconds).
pub(crate) fn now_iso() -> String {
    use crate::policy::Clock as _;
    let ms = crate::policy::SystemClock.now_ms();
    session_format::time::to_iso_string(ms).unwrap_or_else(|| ms.to_string())
}
