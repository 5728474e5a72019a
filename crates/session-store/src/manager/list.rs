//! Session listing on [`SessionManager`]: `list` and `list_all` (`SessionManager.list`,
//! `SessionManager.listAll`) over the file store, and the same listings over any storage
//! ([`Sessions::list`], [`Sessions::list_all`]; openclaw-jsonl.md §2.1; [`crate::list`]).

use std::path::Path;

use crate::error::{ListError, MessagesTextError};
use crate::list::{self, SessionInfo};
use crate::paths;

use super::{SessionManager, Sessions};

impl SessionManager {
    /// The sessions of `session_dir` (default: the per-cwd directory of `cwd`), newest first
    /// (`SessionManager.list`). See [`crate::list`].
    ///
    /// # Errors
    /// [`ListError::ReadDir`].
    pub fn list(cwd: &str, session_dir: Option<&Path>) -> Result<Vec<SessionInfo>, ListError> {
        Self::on_files().list(cwd, session_dir)
    }

    /// The sessions of every per-cwd directory under `sessions_root` (default:
    /// [`paths::sessions_dir`]), newest first (`SessionManager.listAll`). See [`crate::list_all`].
    ///
    /// # Errors
    /// [`ListError::ReadDir`].
    pub fn list_all(sessions_root: Option<&Path>) -> Result<Vec<SessionInfo>, ListError> {
        Self::on_files().list_all(sessions_root)
    }
}

impl Sessions {
    /// [`SessionManager::list`] over the sessions of this storage ([`Storage::list_sessions`],
    /// each read with [`Storage::read_all`]; the modification time fallback is the snapshot's
    /// `mtime_ns`). On [`FileStorage`] exactly [`crate::list`].
    ///
    /// # Errors
    /// [`ListError::ReadDir`] when the storage cannot list the directory.
    ///
    /// [`FileStorage`]: crate::FileStorage
    /// [`Storage::list_sessions`]: crate::Storage::list_sessions
    /// [`Storage::read_all`]: crate::Storage::read_all
    pub fn list(
        &self,
        cwd: &str,
        session_dir: Option<&Path>,
    ) -> Result<Vec<SessionInfo>, ListError> {
        let dir = session_dir.map_or_else(|| paths::default_session_dir(cwd), Path::to_path_buf);
        list::session_infos(&*self.storage, &dir)
    }

    /// [`SessionManager::list_all`] over the namespaces of this storage
    /// ([`Storage::list_dirs`] under `sessions_root`, default [`paths::sessions_dir`]). On
    /// [`FileStorage`] exactly [`crate::list_all`].
    ///
    /// # Errors
    /// [`ListError::ReadDir`] when the storage cannot list the root.
    ///
    /// [`FileStorage`]: crate::FileStorage
    /// [`Storage::list_dirs`]: crate::Storage::list_dirs
    pub fn list_all(&self, sessions_root: Option<&Path>) -> Result<Vec<SessionInfo>, ListError> {
        let root = sessions_root.map_or_else(paths::sessions_dir, Path::to_path_buf);
        list::all_session_infos(&*self.storage, &root)
    }

    /// [`SessionInfo::all_messages_text`] of a session listed from this storage (read again
    /// with [`Storage::read_all`]).
    ///
    /// # Errors
    /// As [`SessionInfo::all_messages_text`].
    ///
    /// [`Storage::read_all`]: crate::Storage::read_all
    pub fn all_messages_text(&self, info: &SessionInfo) -> Result<String, MessagesTextError> {
        info.messages_text_of(self.storage.read_all(&info.path))
    }
}
