//! [`Sessions`]: the factories and listings of [`SessionManager`] over one [`Storage`]
//! ([`SessionManager::on`]). The reference-named associated functions
//! ([`SessionManager::create`], [`SessionManager::open`], …) are these methods on
//! [`FileStorage::shared`]; the method bodies live next to the code they share (`open.rs`,
//! `branch.rs`, `inspect.rs`, `list.rs`).

use std::sync::Arc;

use crate::storage::{FileStorage, Storage};

use super::SessionManager;

/// The factories and listings of [`SessionManager`] over one [`Storage`]: what
/// [`SessionManager::on`] returns. Each method is spelled, and behaves, as the associated
/// function of the same name on [`SessionManager`] (which is that method on the process-wide
/// file store, [`FileStorage::shared`]), with every read, write and write lock of the managers
/// it makes going to this storage: [`Sessions::create`], [`Sessions::open`],
/// [`Sessions::open_with`], [`Sessions::open_locked`], [`Sessions::continue_recent`],
/// [`Sessions::fork_from`], [`Sessions::open_read_only`], [`Sessions::list`],
/// [`Sessions::list_all`], [`Sessions::all_messages_text`].
///
/// A small handle (one `Arc`): clone it freely, keep it, or make one per call.
#[derive(Clone, Debug)]
pub struct Sessions {
    pub(super) storage: Arc<dyn Storage>,
}

impl SessionManager {
    /// The factories and listings over `storage` ([`Sessions`]):
    /// `SessionManager::on(storage).open(path, None, None)` opens the session stored at
    /// `path` there, as [`SessionManager::open`] opens a file.
    pub fn on(storage: Arc<dyn Storage>) -> Sessions {
        Sessions { storage }
    }

    /// [`SessionManager::on`] the process-wide file store ([`FileStorage::shared`]): what the
    /// associated factories use.
    pub(super) fn on_files() -> Sessions {
        Sessions {
            storage: FileStorage::shared(),
        }
    }
}

impl Sessions {
    /// The storage the managers made here read and write.
    pub fn storage(&self) -> &Arc<dyn Storage> {
        &self.storage
    }
}
