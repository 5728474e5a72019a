//! A read-only [`SessionManager`] over one SQLite session, so the JSONL read path (tree, leaf,
//! context, listing queries) works on it unchanged (`openclaw-sqlite.md` §2.13 recipe 4).

use super::{SqliteError, SqliteStore};
use crate::{MemStorage, ReadOnlyOpen, SessionManager, Storage};
use std::path::PathBuf;
use std::sync::Arc;

impl SqliteStore {
    /// The path the session's JSONL has in the in-memory store of [`Self::open_session`]:
    /// `<database file, made absolute>/<session_id>.jsonl`. It is never a file on disk.
    pub fn session_path(&self, session_id: &str) -> PathBuf {
        // Absolute (lexically), as the in-memory store keys its sessions: a database opened by
        // a relative path must find its sessions where it put them.
        crate::paths::resolve(&self.path).join(format!("{session_id}.jsonl"))
    }

    /// Opens one session as a read-only [`SessionManager`]: its rows ([`Self::lines`], each
    /// followed by `\n`) are put at [`Self::session_path`] in a fresh in-memory store
    /// ([`MemStorage`]) and opened with [`Sessions::open_read_only`](crate::Sessions::open_read_only),
    /// exactly as a JSONL file of the same bytes would be. Nothing is written to disk or to the
    /// database; appends on the returned manager fail with a `ReadOnly` error.
    ///
    /// # Errors
    /// Everything [`Self::lines`] returns; [`SqliteError::Session`] when the session's JSONL
    /// does not open; [`SqliteError::Staging`] when the in-memory store refuses the bytes.
    pub fn open_session(&self, session_id: &str) -> Result<ReadOnlyOpen, SqliteError> {
        let lines = self.lines(session_id)?;
        self.open_lines(session_id, &lines)
    }

    /// [`Self::open_session`] over rows already read ([`Self::lines`]).
    pub(crate) fn open_lines(
        &self,
        session_id: &str,
        lines: &[Vec<u8>],
    ) -> Result<ReadOnlyOpen, SqliteError> {
        let mut jsonl = Vec::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
        for line in lines {
            jsonl.extend_from_slice(line);
            jsonl.push(b'\n');
        }
        let path = self.session_path(session_id);
        let session_err = |source| SqliteError::Session {
            path: self.path.clone(),
            session_id: session_id.to_owned(),
            source: Box::new(source),
        };
        let staged = |source| SqliteError::Staging {
            path: path.clone(),
            source,
        };
        let storage = MemStorage::new();
        if let Some(dir) = path.parent() {
            storage.ensure_dir(dir).map_err(staged)?;
        }
        storage.create_new(&path, &jsonl).map_err(staged)?;
        SessionManager::on(Arc::new(storage))
            .open_read_only(&path, None)
            .map_err(session_err)
    }
}
