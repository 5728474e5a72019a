//! The two state changes `prepareSessionManagerForRun` (openclaw-jsonl.md §4) makes inside a
//! manager, as public primitives: setting the header's identity in memory, and emptying the
//! file and the session down to the header. The case logic itself lives in
//! `agent_session::prepare`.

use crate::disk::DiskImage;
use crate::error::{AppendError, Failure, ReadError};
use crate::rows::RowKind;
use session_format::json::JsValue;
use std::path::Path;

use super::SessionManager;

impl SessionManager {
    /// Sets the header's `id` and `cwd` and this manager's session id and cwd, in memory only
    /// (`header.id = sessionId; header.cwd = cwd; sm.sessionId = …; sm.cwd = …`). Returns true
    /// when the header changed (`header.id !== sessionId || header.cwd !== cwd`, compared as
    /// JavaScript values). An unchanged header row keeps its exact bytes; a changed one is
    /// serialised afresh with the keys in place (a missing `cwd` goes last), and is written by
    /// the next full write. Without a header only the manager's fields change.
    ///
    /// # Errors
    /// [`ReadError`] when the stored header row no longer parses (a bug).
    pub fn set_header_identity(&mut self, session_id: &str, cwd: &str) -> Result<bool, ReadError> {
        let mut changed = false;
        if let Some(h) = self.header {
            let value = self.rows[h]
                .value(&self.buf)
                .map_err(|e| self.read_error(h, e))?;
            let id = JsValue::from(session_id);
            let cwd_value = JsValue::from(cwd);
            changed = value.get("id") != Some(&id) || value.get("cwd") != Some(&cwd_value);
            if changed {
                let mut row = self.rows[h]
                    .with_keys(&self.buf, &[("id", Some(id)), ("cwd", Some(cwd_value))])
                    .map_err(|e| self.read_error(h, e))?;
                row.kind = RowKind::Header;
                self.rows[h] = row;
            }
        }
        session_id.clone_into(&mut self.session_id);
        cwd.clone_into(&mut self.cwd);
        self.cwd_js = cwd.into();
        Ok(changed)
    }

    /// Empties the session file and this session down to its header (openclaw-jsonl.md §4 case
    /// 2b): when `backup` is given and the file holds any bytes, they are first copied byte for
    /// byte to `backup` (the file's permission bits kept, [`crate::io::backup_copy`]); then the file is
    /// replaced by an empty one (atomically, mode kept). Both go through the manager's
    /// [`crate::Storage`]. In memory: only the header remains
    /// (entries, opaque rows, labels and leaf controls dropped), the leaf and the append cursor
    /// are null, the header is held unwritten and `flushed` is false, so the first assistant
    /// writes header → … → assistant in one full write. The warm cache entry is dropped.
    ///
    /// # Errors
    /// [`AppendError::ReadOnly`]; [`AppendError::Write`] when the manager has no file, or the
    /// file cannot be read, backed up or emptied (the state is then unchanged; a failed backup
    /// leaves the file untouched).
    pub fn reset_file_to_header(&mut self, backup: Option<&Path>) -> Result<(), AppendError> {
        let path = self.session_file.clone().unwrap_or_default();
        if self.read_only {
            return Err(AppendError::ReadOnly { path });
        }
        let write_err = |e| AppendError::from(Failure::io(path.clone(), e));
        if self.session_file.is_none() {
            return Err(write_err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "the session has no file",
            )));
        }
        let current = self.storage.read_all(&path).map_err(write_err)?;
        if let Some(b) = backup
            && !current.is_empty()
        {
            self.storage
                .backup_copy(&path, b, &current)
                .map_err(write_err)?;
        }
        self.storage.replace(&path, b"").map_err(write_err)?;
        let header = self.header.map(|h| self.rows[h].clone());
        self.rows = header.into_iter().collect::<Vec<_>>().into();
        self.header = (!self.rows.is_empty()).then_some(0);
        self.rebuild();
        self.held = self.rows.len();
        self.flushed = false;
        self.disk = DiskImage::known(b"");
        self.snapshot = self.storage.stat(&path).ok().flatten();
        self.first_line = std::sync::Arc::from(&[][..]);
        super::load::invalidate_key(&*self.storage, self.cache_key.as_deref());
        if let Some(caches) = self.storage.caches() {
            caches.warm.invalidate(&path);
        }
        Ok(())
    }
}
