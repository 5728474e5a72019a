//! Session listing on [`SessionManager`]: `list` and `list_all` (`SessionManager.list`,
//! `SessionManager.listAll`) over the file store, and their `_in` twins over any [`Storage`]
//! (openclaw-jsonl.md §2.1; [`crate::list`]).

use crate::error::ListError;
use crate::list::{self, SessionInfo};
use crate::paths;
use crate::storage::Storage;

use super::SessionManager;

impl SessionManager {
    /// The sessions of `session_dir` (default: the per-cwd directory of `cwd`), newest first
    /// (`SessionManager.list`). See [`list::list`].
    ///
    /// # Errors
    /// [`ListError::ReadDir`].
    pub fn list(
        cwd: &str,
        session_dir: Option<&std::path::Path>,
    ) -> Result<Vec<SessionInfo>, ListError> {
        let dir = session_dir.map_or_else(
            || paths::default_session_dir(cwd),
            std::path::Path::to_path_buf,
        );
        list::list(&dir)
    }

    /// The sessions of every per-cwd directory under `sessions_root` (default:
    /// [`paths::sessions_dir`]), newest first (`SessionManager.listAll`). See [`list::list_all`].
    ///
    /// # Errors
    /// [`ListError::ReadDir`].
    pub fn list_all(
        sessions_root: Option<&std::path::Path>,
    ) -> Result<Vec<SessionInfo>, ListError> {
        let root = sessions_root.map_or_else(paths::sessions_dir, std::path::Path::to_path_buf);
        list::list_all(&root)
    }

    /// [`SessionManager::list`] over the sessions of `storage` ([`Storage::list_sessions`],
    /// each read with [`Storage::read_all`]; the modification time fallback is the snapshot's
    /// `mtime_ns`). For [`FileStorage`] exactly [`SessionManager::list`].
    ///
    /// # Errors
    /// [`ListError::ReadDir`] when the storage cannot list the directory.
    ///
    /// [`FileStorage`]: crate::FileStorage
    pub fn list_in(
        storage: &dyn Storage,
        cwd: &str,
        session_dir: Option<&std::path::Path>,
    ) -> Result<Vec<SessionInfo>, ListError> {
        let dir = session_dir.map_or_else(
            || paths::default_session_dir(cwd),
            std::path::Path::to_path_buf,
        );
        list::session_infos(storage, &dir)
    }

    /// [`SessionManager::list_all`] over the namespaces of `storage` ([`Storage::list_dirs`]
    /// under `sessions_root`, default [`paths::sessions_dir`]). For [`FileStorage`] exactly
    /// [`SessionManager::list_all`].
    ///
    /// # Errors
    /// [`ListError::ReadDir`] when the storage cannot list the root.
    ///
    /// [`FileStorage`]: crate::FileStorage
    pub fn list_all_in(
        storage: &dyn Storage,
        sessions_root: Option<&std::path::Path>,
    ) -> Result<Vec<SessionInfo>, ListError> {
        let root = sessions_root.map_or_else(paths::sessions_dir, std::path::Path::to_path_buf);
        list::all_session_infos(storage, &root)
    }
}
