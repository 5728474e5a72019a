//! Applying a [`MaintenancePlan`] (docs/DEVIATIONS.md D38: archive instead of delete): the
//! removed rows leave `sessions.json` first, in one [`SessionStore::save`] (J7.2: the store
//! is written before any file is renamed), then each planned file is renamed in place to
//! `<name>.deleted.<ARCHIVE_TS>` under its write lock ([`crate::fsops::lock_for_retire`]),
//! after a re-check that it is still the regular file the scan saw, with one audit line each
//! in `<sessions>/sessions-audit.log`. Nothing is deleted; archives the reference would delete
//! are kept unless the caller asks to purge them ([`ApplyOptions::purge_archives`]: deleted
//! under their lock, with a `delete` audit line).

use std::io;
use std::path::{Path, PathBuf};

use super::super::{SaveOutcome, SessionStore, SessionStoreError, classify};
use super::plan::{FileReason, MaintenancePlan, PlannedFile, PlannedRename};
use crate::audit::{AuditAction, AuditLog, AuditRecord};
use crate::fsops;

/// What was done to one planned file.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileOutcome {
    /// Renamed in place to this path.
    Renamed {
        /// The new path.
        to: PathBuf,
    },
    /// Left as it is on purpose: an archive the reference would delete.
    Kept,
    /// Deleted: an archive the reference deletes, with [`ApplyOptions::purge_archives`].
    Deleted,
    /// Left as it is: it changed or vanished since the scan, or is in use (the reason says
    /// which).
    Skipped {
        /// Why.
        reason: String,
    },
    /// The rename (or its audit line) failed.
    Failed {
        /// The error.
        error: String,
    },
}

/// A planned file and what was done to it.
#[derive(Clone, Debug, PartialEq)]
pub struct AppliedFile {
    /// The plan's file.
    pub planned: PlannedFile,
    /// What happened.
    pub outcome: FileOutcome,
}

/// What [`apply_plan`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct ApplyReport {
    /// Whether `sessions.json` was rewritten (false when no row was removed).
    pub store_written: bool,
    /// The keys removed from the store, in the plan's order.
    pub removed_keys: Vec<String>,
    /// Every planned file with its outcome, in the plan's order.
    pub files: Vec<AppliedFile>,
    /// The audit log, when a line was appended to it.
    pub audit_log: Option<PathBuf>,
    /// Stale lock files (their holder is gone) reclaimed when the files were locked for
    /// their rename, and removed with the locks.
    pub stale_locks_removed: Vec<PathBuf>,
    /// What the load changed in memory and the store write persisted
    /// ([`SessionStore::load_changes`]: rows that were not objects dropped, legacy fields
    /// migrated); empty when `sessions.json` was not written.
    pub load_changes: Vec<super::super::LoadChange>,
}

impl ApplyReport {
    /// Whether some file could not be renamed.
    pub fn has_failures(&self) -> bool {
        self.files
            .iter()
            .any(|f| matches!(f.outcome, FileOutcome::Failed { .. }))
    }
}

/// How [`apply_plan`] treats the archives the reference deletes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ApplyOptions {
    /// Delete the `.reset.`/`.deleted.`/`.bak.` archives past retention or chosen by the
    /// disk budget, as the reference does (default: keep them).
    pub purge_archives: bool,
}

/// Why a plan could not be applied; nothing was changed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApplyError {
    /// Saving the store failed or was refused (it changed since it was loaded: reload, plan
    /// and apply again). No file was renamed.
    #[error(transparent)]
    Store(#[from] SessionStoreError),
    /// The audit log cannot be written (a symlink or non-file at its path, …). Nothing was
    /// changed.
    #[error("{0}")]
    Audit(io::Error),
    /// A file of a row the plan removes is locked by a live writer (or reached through a link
    /// out of the directory): the session is in use, so nothing was changed (run again later).
    #[error("{} is in use ({why}): nothing was changed; run cleanup again later", file.display())]
    Locked {
        /// The file.
        file: PathBuf,
        /// The lock held, or why the file cannot be retired.
        why: String,
    },
    /// A removed row of the plan is not in the store: the plan was made from another store.
    #[error("the plan removes {key:?}, which is not in {}", path.display())]
    NotInStore {
        /// The row's key.
        key: String,
        /// The store file.
        path: PathBuf,
    },
}

fn name_of(p: &Path) -> String {
    p.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

/// Still the file the scan saw: a regular file (not a symlink) of the planned size and mtime.
fn recheck(file: &PlannedFile) -> Result<u64, String> {
    let meta = match std::fs::symlink_metadata(&file.path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err("vanished".to_owned()),
        Err(e) => return Err(format!("unreadable: {e}")),
    };
    if meta.file_type().is_symlink() {
        return Err("symlink".to_owned());
    }
    if !meta.is_file() {
        return Err("not a regular file".to_owned());
    }
    let same = file.size.is_none_or(|s| s == meta.len())
        && file
            .mtime_ms
            .is_none_or(|m| m == super::scan::mtime_ms(&meta));
    if same {
        Ok(meta.len())
    } else {
        Err("changed since the scan".to_owned())
    }
}

/// Renames one file to `to_name` in its directory (or with `None` deletes it) under its write
/// lock; appends its audit line.
fn rename_one(
    file: &PlannedFile,
    to_name: Option<&str>,
    (reason, session_id): (String, String),
    log: &AuditLog,
    dir: &Path,
    held: Option<Option<fsops::RetireLocks>>,
    stale: &mut Vec<PathBuf>,
) -> FileOutcome {
    let to = to_name.map(|n| {
        file.path
            .parent()
            .map_or_else(|| PathBuf::from(n), |d| d.join(n))
    });
    let locked = match held {
        Some(guard) => Ok(guard),
        None => fsops::lock_for_retire(&file.path),
    };
    let _locks = match locked {
        Ok(guard) => {
            if let Some(g) = &guard {
                stale.extend_from_slice(g.reclaimed());
            }
            guard
        }
        Err(fsops::RetireRefusal::Locked(lock)) => {
            return FileOutcome::Skipped {
                reason: format!("locked ({})", lock.display()),
            };
        }
        Err(fsops::RetireRefusal::OutsideStore(o)) => {
            return FileOutcome::Skipped {
                reason: format!("symlink out of the directory ({})", o.target.display()),
            };
        }
    };
    let bytes = match recheck(file) {
        Ok(n) => n,
        Err(reason) => return FileOutcome::Skipped { reason },
    };
    let done = match &to {
        Some(to) => fsops::move_file(&file.path, to),
        None => fsops::delete_file(&file.path),
    };
    if let Err(e) = done {
        return FileOutcome::Failed {
            error: e.to_string(),
        };
    }
    let rel = |p: &Path| {
        p.strip_prefix(dir)
            .unwrap_or(p)
            .to_string_lossy()
            .into_owned()
    };
    let record = AuditRecord {
        time: crate::audit::now_iso(),
        action: if to.is_some() {
            AuditAction::Rename
        } else {
            AuditAction::Delete
        },
        file: rel(&file.path),
        destination: to.as_deref().map(rel),
        session_id,
        reason,
        bytes,
    };
    match (log.append(&record), to) {
        (Ok(()), Some(to)) => FileOutcome::Renamed { to },
        (Ok(()), None) => FileOutcome::Deleted,
        (Err(e), Some(to)) => FileOutcome::Failed {
            error: format!(
                "renamed to {}, but its audit line failed: {e}",
                to.display()
            ),
        },
        (Err(e), None) => FileOutcome::Failed {
            error: format!("deleted, but its audit line failed: {e}"),
        },
    }
}

/// The audit line's `reason` and `sessionId` for a planned file: the removed row's action
/// label and session id, else the file's reason label and the id its name is counted under.
fn audit_why(plan: &MaintenancePlan, store: &SessionStore, file: &PlannedFile) -> (String, String) {
    match &file.reason {
        FileReason::RemovedRow { key } => {
            let reason = plan
                .removed_rows
                .iter()
                .find(|r| &r.key == key)
                .map_or("removed-row", |r| r.reason.label());
            let id = store
                .get(key)
                .and_then(|e| e.session_id())
                .unwrap_or_default();
            (reason.to_owned(), id.to_owned())
        }
        other => (
            other.label().to_owned(),
            classify(&name_of(&file.path))
                .usage_session_id()
                .unwrap_or_default()
                .to_owned(),
        ),
    }
}

/// Applies `plan` (made by [`super::plan_maintenance`] from exactly `store` and a scan of its
/// directory): removes the plan's rows and saves the store once, then renames each planned
/// file in the plan's order (see the module docs); the archives the plan keeps are deleted
/// only with [`ApplyOptions::purge_archives`]. `store` is the store after the save.
///
/// # Errors
/// [`ApplyError`] before anything is changed: the audit log is unusable, a file of a removed
/// row is locked by a live writer ([`ApplyError::Locked`]), a planned row is not
/// in the store, or the save fails or is refused ([`SessionStoreError::Changed`] when another
/// writer changed the file since it was loaded). A file that cannot be renamed afterwards is
/// reported in [`ApplyReport::files`] (`Failed` or `Skipped`), not as an error.
pub fn apply_plan(
    store: &mut SessionStore,
    plan: &MaintenancePlan,
    options: ApplyOptions,
) -> Result<ApplyReport, ApplyError> {
    let log = AuditLog::open(store.sessions_dir()).map_err(ApplyError::Audit)?;
    // The files of removed rows are locked before the store is written: a row whose session
    // a live writer holds is not removed (the whole run is refused instead), so no row
    // disappears while its transcript stays behind as an orphan.
    let mut held: Vec<Option<Option<fsops::RetireLocks>>> = Vec::with_capacity(plan.files.len());
    for file in &plan.files {
        let touched = match file.action {
            PlannedRename::Rename(_) => true,
            PlannedRename::Keep => options.purge_archives,
            PlannedRename::LeaveAlone(_) => false,
        };
        if !touched || !matches!(file.reason, FileReason::RemovedRow { .. }) {
            held.push(None);
            continue;
        }
        match fsops::lock_for_retire(&file.path) {
            Ok(guard) => held.push(Some(guard)),
            Err(refusal) => {
                return Err(ApplyError::Locked {
                    file: file.path.clone(),
                    why: refusal.why(),
                });
            }
        }
    }
    let before = store.clone();
    let mut removed_keys = Vec::with_capacity(plan.removed_rows.len());
    for row in &plan.removed_rows {
        if store.remove(&row.key).is_none() {
            *store = before;
            return Err(ApplyError::NotInStore {
                key: row.key.clone(),
                path: store.path().to_path_buf(),
            });
        }
        removed_keys.push(row.key.clone());
    }
    let store_written = match store.save() {
        Ok(SaveOutcome::Written) => true,
        Ok(_) => false,
        Err(e) => {
            *store = before;
            return Err(e.into());
        }
    };
    let mut files = Vec::with_capacity(plan.files.len());
    let mut logged = false;
    let mut stale: Vec<PathBuf> = Vec::new();
    for (file, held) in plan.files.iter().zip(held) {
        let outcome = match &file.action {
            PlannedRename::LeaveAlone(reason) => FileOutcome::Skipped {
                reason: reason.clone(),
            },
            PlannedRename::Keep if !options.purge_archives => FileOutcome::Kept,
            PlannedRename::Keep => rename_one(
                file,
                None,
                audit_why(plan, &before, file),
                &log,
                before.sessions_dir(),
                held,
                &mut stale,
            ),
            PlannedRename::Rename(name) => rename_one(
                file,
                Some(name),
                audit_why(plan, &before, file),
                &log,
                before.sessions_dir(),
                held,
                &mut stale,
            ),
        };
        logged |= matches!(outcome, FileOutcome::Renamed { .. } | FileOutcome::Deleted);
        files.push(AppliedFile {
            planned: file.clone(),
            outcome,
        });
    }
    Ok(ApplyReport {
        store_written,
        removed_keys,
        files,
        audit_log: logged.then(|| log.path().to_path_buf()),
        stale_locks_removed: stale,
        load_changes: if store_written {
            before.load_changes().to_vec()
        } else {
            Vec::new()
        },
    })
}
