//! Row lifecycle on an OpenClaw store: deleting (archiving) a row and starting a new
//! conversation on a key, with the transcript renamed in place as the reference renames it
//! (openclaw-store.md §3.3, §3.4, §7 J7.2–J7.6).
//!
//! A [`LifecyclePlan`] takes a loaded [`SessionStore`] and collects edits:
//! [`LifecyclePlan::delete_row`] (J7.2, `deleteSessionEntryLifecycle`),
//! [`LifecyclePlan::reset_row`] (J7.4, the reply path's `/new`: `initSessionState` →
//! `commitReplySessionInitialization`), [`LifecyclePlan::discard_file`] (a transcript no row
//! names). [`LifecyclePlan::preview`] is the dry run; [`LifecyclePlan::apply`] writes:
//!
//! 1. every transcript to rename or delete is locked (its session write lock, and its aliases',
//!    [`crate::fsops::lock_for_retire`]) and the audit log opened: a locked transcript or an
//!    unusable log refuses the whole plan before anything is written;
//! 2. `sessions.json` is saved ([`SessionStore::save`]: a minimal edit of the named keys,
//!    refused with [`SessionStoreError::Changed`] when another writer changed the file since
//!    it was loaded; nothing is renamed then);
//! 3. only then each file is renamed in place, never replacing anything
//!    ([`crate::fsops::move_file`]): a deleted row's transcript to
//!    `<file>.deleted.<ARCHIVE_TS>`, a reset row's old transcript to `<file>.reset.<ARCHIVE_TS>`
//!    (R1.13, [`format_archive_timestamp`] of the plan's "now"), each with its
//!    `.trajectory.jsonl` and `.trajectory-path.json` sidecars (`<sidecar>.<reason>.<ts>`:
//!    renamed, never deleted; docs/DEVIATIONS.md D39). With [`Disposal::Purge`] the files are
//!    deleted instead. One audit line per file ([`crate::audit`]).
//!
//! A transcript another remaining row still resolves to, or names by `sessionId`, is left
//! alone (R6.4, §9 case 23), and so is one that is missing or not a regular file. A reset
//! writes no new transcript: as after the reference's `/new`, the file is created by the first
//! append (with its v3 header).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Serialize;
use session_format::json::{JsString, JsValue};

use super::{SessionStore, SessionStoreError, StoreEntry, format_archive_timestamp};
use crate::audit::{AuditAction, AuditLog, AuditRecord};
use crate::fsops;

/// Why a lifecycle plan could not be made or applied.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LifecycleError {
    /// No row is stored under the key.
    #[error("no row {key:?} in {}", store.display())]
    UnknownKey {
        /// The key asked for.
        key: String,
        /// The store file.
        store: PathBuf,
    },
    /// The new session id is not one the reference accepts as a file name (R1.8).
    #[error("{id:?} is not a valid session id (R1.8)")]
    BadSessionId {
        /// The id.
        id: String,
    },
    /// The plan's time has no archive timestamp (outside the years 0–9999).
    #[error("time {0} ms has no archive timestamp")]
    BadTime(i64),
    /// A transcript to rename or delete is in use (its write lock is held) or reached through a
    /// link out of the store: nothing was written.
    #[error("{} is in use or cannot be locked ({why}); nothing was changed", file.display())]
    Locked {
        /// The transcript.
        file: PathBuf,
        /// The lock file, or why no lock could be taken.
        why: String,
    },
    /// The audit log cannot be written: nothing was changed.
    #[error("{0}; nothing was changed")]
    Audit(std::io::Error),
    /// Loading or saving the store failed (`Changed` when another writer changed it since it
    /// was loaded: nothing was written and no file renamed).
    #[error(transparent)]
    Store(#[from] SessionStoreError),
}

/// What happens to the files of a removed row or an orphan transcript.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Disposal {
    /// Renamed in place to `<file>.deleted.<ts>` (a reset's old transcript: `.reset.<ts>`).
    Archive,
    /// Deleted.
    Purge,
}

/// What is done to a row.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "action", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum RowAction {
    /// The row is removed from `sessions.json`.
    Removed,
    /// The row starts a new conversation under the same key.
    #[serde(rename_all = "camelCase")]
    Reset {
        /// The new `sessionId`.
        new_session_id: String,
    },
}

/// One row changed by a plan.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RowChange {
    /// The store key.
    pub key: String,
    /// The row's `sessionId` before the change.
    pub session_id: Option<String>,
    /// Removed or reset.
    #[serde(flatten)]
    pub action: RowAction,
}

/// What a file is to the row it belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FileRole {
    /// The transcript (`<id>.jsonl`, `<id>-topic-<t>.jsonl`, …).
    Transcript,
    /// `<stem>.trajectory.jsonl`.
    Trajectory,
    /// `<stem>.trajectory-path.json`.
    TrajectoryPointer,
}

/// Planned, done or failed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum FileOutcome {
    /// Dry run: would be done.
    Planned,
    /// Renamed (or deleted, with [`Disposal::Purge`]).
    Done,
    /// The rename or delete failed (the store was already written: the row is gone or reset,
    /// the file stays under its name).
    Failed {
        /// The error.
        error: String,
    },
}

/// One file renamed or deleted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileChange {
    /// The file (absolute).
    pub file: PathBuf,
    /// Its new name in the same directory; `None` when it is deleted.
    pub to: Option<PathBuf>,
    /// What it is.
    pub role: FileRole,
    /// The session id it belongs to.
    pub session_id: String,
    /// Its size when planned.
    pub bytes: u64,
    /// Why: `delete-row`, `reset` or `orphan`.
    pub reason: &'static str,
    /// Planned, done or failed.
    #[serde(flatten)]
    pub outcome: FileOutcome,
}

/// Why a transcript was left alone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum LeftAloneReason {
    /// Other rows still name it (R6.4).
    #[serde(rename_all = "camelCase")]
    SharedWith {
        /// Their keys.
        keys: Vec<String>,
    },
    /// It does not exist.
    Missing,
    /// A symlink, directory or other non-regular file.
    NotRegularFile,
    /// The row has no `sessionId` or one that names no file (R1.8).
    NoTranscript,
    /// The row's `sessionFile` leads outside the store's sessions directory (compared as
    /// canonical paths): a file of another store is never renamed, deleted or locked.
    OutsideStore,
    /// A symlink whose target is outside the store's sessions directory: applying the plan
    /// refuses ([`LifecycleError::Locked`]) before `sessions.json` is written (D39).
    SymlinkOutOfStore {
        /// Where the link leads (resolved; the link text when it cannot be resolved).
        target: PathBuf,
    },
}

/// A transcript a plan leaves where it is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LeftAlone {
    /// The row whose transcript this is (`None` for a file given by path).
    pub key: Option<String>,
    /// The transcript, when one is known.
    pub file: Option<PathBuf>,
    /// Why.
    #[serde(flatten)]
    pub reason: LeftAloneReason,
}

/// A dry-run or applied plan.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleReport {
    /// The store file.
    pub store: PathBuf,
    /// True for a preview.
    pub dry_run: bool,
    /// Archive or purge.
    pub disposal: Disposal,
    /// The plan's time (ISO 8601) and its archive timestamp (R1.13).
    pub now: String,
    /// `<ARCHIVE_TS>` of the renames.
    pub archive_timestamp: String,
    /// The rows changed, in the order asked.
    pub rows: Vec<RowChange>,
    /// The rows as they are after the change (reset rows only), by key.
    #[serde(skip)]
    pub new_entries: Vec<(String, StoreEntry)>,
    /// The files renamed or deleted, in order.
    pub files: Vec<FileChange>,
    /// Transcripts left where they are.
    pub left_alone: Vec<LeftAlone>,
    /// Whether `sessions.json` was (dry run: would be) rewritten.
    pub store_written: bool,
    /// Stale lock files (their holder is gone) found beside the transcripts and removed when
    /// the transcripts were locked for their rename (applied plans only).
    pub stale_locks_removed: Vec<PathBuf>,
    /// What the load changed in memory and the store write persists (rows that are not
    /// objects dropped, legacy fields migrated: [`SessionStore::load_changes`]); empty when
    /// `sessions.json` is not written.
    pub load_changes: Vec<super::LoadChange>,
    /// The audit log and the lines appended (applied plans with files only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audit_log: Option<PathBuf>,
}

impl LifecycleReport {
    /// How many file changes failed.
    pub fn failed(&self) -> usize {
        self.files
            .iter()
            .filter(|f| matches!(f.outcome, FileOutcome::Failed { .. }))
            .count()
    }
}

/// Fields the reply path's `/new` clears on the new row (R3.8; `initSessionState`, new
/// session): model, usage, cost, context, memory-flush, goal and skills state, run bookkeeping.
const RESET_CLEARED: &[&str] = &[
    "memoryFlushCompactionCount",
    "memoryFlushAt",
    "modelProvider",
    "model",
    "fallbackNoticeSelectedModel",
    "fallbackNoticeActiveModel",
    "fallbackNoticeReason",
    "systemPromptReport",
    "memoryFlushContextHash",
    "startedAt",
    "endedAt",
    "runtimeMs",
    "status",
    "inputTokens",
    "outputTokens",
    "estimatedCostUsd",
    "cacheRead",
    "cacheWrite",
    "contextTokens",
    "contextBudgetStatus",
    "goal",
    "skillsSnapshot",
];

/// One planned step.
#[derive(Clone, Debug)]
enum Step {
    Delete {
        key: String,
        entry: StoreEntry,
        transcript: Option<PathBuf>,
    },
    Reset {
        key: String,
        old: StoreEntry,
        transcript: Option<PathBuf>,
    },
    Orphan {
        file: PathBuf,
    },
}

/// Edits of one store, planned (see the module docs).
#[derive(Clone, Debug)]
pub struct LifecyclePlan {
    store: SessionStore,
    now_ms: i64,
    ts: String,
    disposal: Disposal,
    steps: Vec<Step>,
}

impl LifecyclePlan {
    /// A plan over `store` (as loaded), at `now_ms` (epoch milliseconds: the rows' new times
    /// and the archive timestamp of the renames), disposing of files as `disposal` says.
    ///
    /// # Errors
    /// [`LifecycleError::BadTime`] when `now_ms` has no ISO form.
    pub fn new(
        store: SessionStore,
        now_ms: i64,
        disposal: Disposal,
    ) -> Result<Self, LifecycleError> {
        let ts = format_archive_timestamp(now_ms).ok_or(LifecycleError::BadTime(now_ms))?;
        Ok(Self {
            store,
            now_ms,
            ts,
            disposal,
            steps: Vec::new(),
        })
    }

    /// The store as it will be saved.
    pub fn store(&self) -> &SessionStore {
        &self.store
    }

    /// Removes the row under exactly `key` (J7.2); its transcript and sidecars are renamed
    /// `.deleted.<ts>` (or deleted) unless another remaining row names it.
    ///
    /// # Errors
    /// [`LifecycleError::UnknownKey`].
    pub fn delete_row(&mut self, key: &str) -> Result<(), LifecycleError> {
        let transcript = self.store.transcript_of(key);
        let entry = self
            .store
            .remove(key)
            .ok_or_else(|| LifecycleError::UnknownKey {
                key: key.to_owned(),
                store: self.store.path().to_path_buf(),
            })?;
        self.steps.push(Step::Delete {
            key: key.to_owned(),
            entry,
            transcript,
        });
        Ok(())
    }

    /// Starts a new conversation on the row under exactly `key` (J7.4, R3.8, §9 case 21), as
    /// the reference's `/new` does: `sessionId` = `new_session_id`; `updatedAt`,
    /// `sessionStartedAt` and `lastInteractionAt` = now; `systemSent` and `abortedLastRun`
    /// false; `compactionCount` 0, `totalTokens` 0, `totalTokensFresh` true;
    /// `usageFamilyKey` the old value or the key; `usageFamilySessionIds` the old list plus
    /// the old and new ids (each once); model, usage, cost, context, memory-flush, goal and
    /// skills fields removed; `sessionFile`'s base name rewritten from the old id to the new
    /// one (`<old>.jsonl`, `<old>-topic-<t>.jsonl`, `<ts>_<old>.jsonl`; any other name becomes
    /// `<new>.jsonl` in the same directory). Every other field stays where it is. The old
    /// transcript is renamed `.reset.<ts>` after the store write; no new file is written.
    ///
    /// # Errors
    /// [`LifecycleError::UnknownKey`]; [`LifecycleError::BadSessionId`] for an id outside R1.8.
    pub fn reset_row(&mut self, key: &str, new_session_id: &str) -> Result<(), LifecycleError> {
        if !super::normalise::is_file_name_session_id(new_session_id) {
            return Err(LifecycleError::BadSessionId {
                id: new_session_id.to_owned(),
            });
        }
        let transcript = self.store.transcript_of(key);
        let Some(old) = self.store.get(key).cloned() else {
            return Err(LifecycleError::UnknownKey {
                key: key.to_owned(),
                store: self.store.path().to_path_buf(),
            });
        };
        let mut next = reset_entry(key, &old, new_session_id, self.now_ms);
        // A `sessionFile` outside the store's directory is not followed into the new
        // conversation: the new transcript's name is written inside the store.
        let dir = self.store.sessions_dir().to_path_buf();
        if let (Some(t), Some(file)) = (&transcript, next.session_file().map(str::to_owned))
            && outside_store(&dir, t)
        {
            let base = file.rsplit('/').next().unwrap_or(&file).to_owned();
            next.fields_mut()
                .insert("sessionFile", JsValue::String(JsString::new(base)));
        }
        self.store.insert(key, next);
        self.steps.push(Step::Reset {
            key: key.to_owned(),
            old,
            transcript,
        });
        Ok(())
    }

    /// Renames (or deletes) a transcript no row names, with its sidecars (reason `orphan`).
    pub fn discard_file(&mut self, file: &Path) {
        self.steps.push(Step::Orphan {
            file: file.to_path_buf(),
        });
    }

    /// The report of the plan as a dry run (nothing is written).
    pub fn preview(&self) -> LifecycleReport {
        self.report(true)
    }

    fn report(&self, dry_run: bool) -> LifecycleReport {
        let mut report = LifecycleReport {
            store: self.store.path().to_path_buf(),
            dry_run,
            disposal: self.disposal,
            now: session_format::time::to_iso_string(self.now_ms).unwrap_or_default(),
            archive_timestamp: self.ts.clone(),
            rows: Vec::new(),
            new_entries: Vec::new(),
            files: Vec::new(),
            left_alone: Vec::new(),
            store_written: self.store.to_bytes().as_slice() != self.store.loaded_bytes(),
            stale_locks_removed: Vec::new(),
            load_changes: Vec::new(),
            audit_log: None,
        };
        if report.store_written {
            report.load_changes = self.store.load_changes().to_vec();
        }
        let mut seen: BTreeSet<PathBuf> = BTreeSet::new();
        for step in &self.steps {
            let (key, session_id, transcript, reason) = match step {
                Step::Delete {
                    key,
                    entry,
                    transcript,
                } => {
                    report.rows.push(RowChange {
                        key: key.clone(),
                        session_id: entry.session_id().map(str::to_owned),
                        action: RowAction::Removed,
                    });
                    (
                        Some(key.clone()),
                        entry.session_id().map(str::to_owned),
                        transcript.clone(),
                        "delete-row",
                    )
                }
                Step::Reset {
                    key,
                    old,
                    transcript,
                } => {
                    let next = self.store.get(key).cloned();
                    let new_id = next
                        .as_ref()
                        .and_then(|e| e.session_id().map(str::to_owned))
                        .unwrap_or_default();
                    report.rows.push(RowChange {
                        key: key.clone(),
                        session_id: old.session_id().map(str::to_owned),
                        action: RowAction::Reset {
                            new_session_id: new_id,
                        },
                    });
                    if let Some(next) = next {
                        report.new_entries.push((key.clone(), next));
                    }
                    (
                        Some(key.clone()),
                        old.session_id().map(str::to_owned),
                        transcript.clone(),
                        "reset",
                    )
                }
                Step::Orphan { file } => {
                    let id = file
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .map(|n| n.strip_suffix(".jsonl").unwrap_or(&n).to_owned());
                    (None, id, Some(file.clone()), "orphan")
                }
            };
            let Some(transcript) = transcript else {
                report.left_alone.push(LeftAlone {
                    key,
                    file: None,
                    reason: LeftAloneReason::NoTranscript,
                });
                continue;
            };
            if !seen.insert(transcript.clone()) {
                continue;
            }
            if outside_store(self.store.sessions_dir(), &transcript) {
                report.left_alone.push(LeftAlone {
                    key,
                    file: Some(transcript),
                    reason: LeftAloneReason::OutsideStore,
                });
                continue;
            }
            let sharing = self.rows_naming(&transcript, session_id.as_deref());
            if !sharing.is_empty() {
                report.left_alone.push(LeftAlone {
                    key,
                    file: Some(transcript),
                    reason: LeftAloneReason::SharedWith { keys: sharing },
                });
                continue;
            }
            let bytes = match std::fs::symlink_metadata(&transcript) {
                Ok(m) if m.is_file() => m.len(),
                Ok(m)
                    if m.file_type().is_symlink()
                        && link_leaves(self.store.sessions_dir(), &transcript).is_some() =>
                {
                    let target =
                        link_leaves(self.store.sessions_dir(), &transcript).unwrap_or_default();
                    report.left_alone.push(LeftAlone {
                        key,
                        file: Some(transcript),
                        reason: LeftAloneReason::SymlinkOutOfStore { target },
                    });
                    continue;
                }
                Ok(_) => {
                    report.left_alone.push(LeftAlone {
                        key,
                        file: Some(transcript),
                        reason: LeftAloneReason::NotRegularFile,
                    });
                    continue;
                }
                Err(_) => {
                    report.left_alone.push(LeftAlone {
                        key,
                        file: Some(transcript),
                        reason: LeftAloneReason::Missing,
                    });
                    continue;
                }
            };
            let marker = if reason == "reset" {
                "reset"
            } else {
                "deleted"
            };
            let session_id = session_id.unwrap_or_default();
            let mut push = |file: PathBuf, role: FileRole, bytes: u64| {
                let to = match self.disposal {
                    Disposal::Purge => None,
                    Disposal::Archive => Some(archived_name(&file, marker, &self.ts)),
                };
                report.files.push(FileChange {
                    file,
                    to,
                    role,
                    session_id: session_id.clone(),
                    bytes,
                    reason,
                    outcome: FileOutcome::Planned,
                });
            };
            push(transcript.clone(), FileRole::Transcript, bytes);
            for (sidecar, role) in sidecars_of(&transcript) {
                if let Ok(m) = std::fs::symlink_metadata(&sidecar)
                    && m.is_file()
                {
                    push(sidecar, role, m.len());
                }
            }
        }
        report
    }

    /// The keys of the remaining rows that resolve to `transcript` or name `session_id`.
    fn rows_naming(&self, transcript: &Path, session_id: Option<&str>) -> Vec<String> {
        self.store
            .entries()
            .filter(|(k, e)| {
                let k = k.to_str_lossy();
                self.store.transcript_of(&k).as_deref() == Some(transcript)
                    || (session_id.is_some() && e.session_id() == session_id)
            })
            .map(|(k, _)| k.to_str_lossy().into_owned())
            .collect()
    }

    /// Applies the plan (see the module docs): locks, store write, then renames or deletes.
    ///
    /// # Errors
    /// [`LifecycleError::Locked`] or [`LifecycleError::Audit`] before anything is written;
    /// [`LifecycleError::Store`] (`Changed`, `Io`) when the store could not be saved: nothing
    /// was written and no file renamed. A failed rename after the save is reported per file
    /// ([`FileOutcome::Failed`]), not as an error.
    pub fn apply(mut self) -> Result<LifecycleReport, LifecycleError> {
        let mut report = self.report(false);
        // D39: a transcript reached through a link out of the store refuses the whole plan,
        // as a held lock does, before anything is written.
        for left in &report.left_alone {
            if let (LeftAloneReason::SymlinkOutOfStore { target }, Some(file)) =
                (&left.reason, &left.file)
            {
                return Err(LifecycleError::Locked {
                    file: file.clone(),
                    why: format!(
                        "a symlink to {}, outside the store's directory",
                        target.display()
                    ),
                });
            }
        }
        let mut locks = Vec::new();
        let mut stale: Vec<PathBuf> = Vec::new();
        for f in report
            .files
            .iter()
            .filter(|f| f.role == FileRole::Transcript)
        {
            match fsops::lock_for_retire(&f.file) {
                Ok(guard) => {
                    if let Some(g) = &guard {
                        stale.extend_from_slice(g.reclaimed());
                    }
                    locks.push(guard);
                }
                Err(refusal) => {
                    return Err(LifecycleError::Locked {
                        file: f.file.clone(),
                        why: refusal.why(),
                    });
                }
            }
        }
        report.stale_locks_removed = stale;
        let log = if report.files.is_empty() {
            None
        } else {
            let log = AuditLog::open(self.store.sessions_dir()).map_err(LifecycleError::Audit)?;
            report.audit_log = Some(log.path().to_path_buf());
            Some(log)
        };
        // J7.2: the store first, the files second.
        self.store.save()?;
        let mut audit_failed: Option<String> = None;
        for f in &mut report.files {
            if let Some(e) = &audit_failed {
                f.outcome = FileOutcome::Failed {
                    error: format!("not attempted: the audit log could not be written: {e}"),
                };
                continue;
            }
            let result = match &f.to {
                Some(to) => fsops::move_file(&f.file, to),
                None => fsops::delete_file(&f.file),
            };
            match result {
                Ok(()) => {
                    f.outcome = FileOutcome::Done;
                    if let Some(log) = &log {
                        let dir = self.store.sessions_dir();
                        let rel = |p: &Path| {
                            p.strip_prefix(dir)
                                .unwrap_or(p)
                                .to_string_lossy()
                                .into_owned()
                        };
                        let record = AuditRecord {
                            time: crate::audit::now_iso(),
                            action: if f.to.is_some() {
                                AuditAction::Archive
                            } else {
                                AuditAction::Delete
                            },
                            file: rel(&f.file),
                            destination: f.to.as_deref().map(rel),
                            session_id: f.session_id.clone(),
                            reason: f.reason.to_owned(),
                            bytes: f.bytes,
                        };
                        if let Err(e) = log.append(&record) {
                            audit_failed = Some(e.to_string());
                        }
                    }
                }
                Err(e) => {
                    f.outcome = FileOutcome::Failed {
                        error: e.to_string(),
                    }
                }
            }
        }
        drop(locks);
        Ok(report)
    }
}

/// Whether `file` lies outside the sessions directory `dir`, comparing canonical paths: the
/// file's directory resolved (the file itself may be missing or a link), against `dir`
/// resolved. When the file's directory cannot be resolved (it does not exist), the lexical
/// paths are compared.
pub(crate) fn outside_store(dir: &Path, file: &Path) -> bool {
    let canon_dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let parent = file.parent().unwrap_or(Path::new(""));
    match std::fs::canonicalize(parent) {
        Ok(p) => !p.starts_with(&canon_dir),
        Err(_) => {
            let lexical = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
            let mut depth = 0usize;
            let Ok(rel) = lexical.strip_prefix(dir) else {
                return true;
            };
            for c in rel.components() {
                match c {
                    std::path::Component::Normal(_) => depth += 1,
                    std::path::Component::CurDir => {}
                    std::path::Component::ParentDir if depth > 0 => depth -= 1,
                    _ => return true,
                }
            }
            depth == 0
        }
    }
}

/// Where the symlink `link` leads when that is outside `dir` (canonical paths; a dangling
/// link's target is resolved lexically against the link's directory).
pub(crate) fn link_leaves(dir: &Path, link: &Path) -> Option<PathBuf> {
    let canon_dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let target = match std::fs::canonicalize(link) {
        Ok(t) => t,
        Err(_) => {
            let text = std::fs::read_link(link).ok()?;
            link.parent().unwrap_or(Path::new("")).join(text)
        }
    };
    (!target.starts_with(&canon_dir)).then_some(target)
}

/// `<file>.<marker>.<ts>` beside `file`.
fn archived_name(file: &Path, marker: &str, ts: &str) -> PathBuf {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{marker}.{ts}"));
    file.with_file_name(name)
}

/// The trajectory sidecars of a transcript (§1.4): `<stem>.trajectory.jsonl` and
/// `<stem>.trajectory-path.json`, `<stem>` the transcript name without `.jsonl`.
pub fn sidecars_of(transcript: &Path) -> [(PathBuf, FileRole); 2] {
    let name = transcript
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".jsonl").unwrap_or(&name);
    [
        (
            transcript.with_file_name(format!("{stem}.trajectory.jsonl")),
            FileRole::Trajectory,
        ),
        (
            transcript.with_file_name(format!("{stem}.trajectory-path.json")),
            FileRole::TrajectoryPointer,
        ),
    ]
}

/// The `/new` row of [`LifecyclePlan::reset_row`].
fn reset_entry(key: &str, old: &StoreEntry, new_id: &str, now_ms: i64) -> StoreEntry {
    let mut next = old.clone();
    let old_id = old.session_id().map(str::to_owned);
    let now = JsValue::Number(now_ms as f64);
    let f = next.fields_mut();
    f.insert("sessionId", JsValue::String(JsString::new(new_id)));
    f.insert("updatedAt", now.clone());
    f.insert("sessionStartedAt", now.clone());
    f.insert("lastInteractionAt", now);
    f.insert("systemSent", JsValue::Bool(false));
    f.insert("abortedLastRun", JsValue::Bool(false));
    let family_key = match f.get("usageFamilyKey") {
        Some(JsValue::String(s)) => s.clone(),
        _ => JsString::new(key),
    };
    f.insert("usageFamilyKey", JsValue::String(family_key));
    let mut ids: Vec<String> = match f.get("usageFamilySessionIds") {
        Some(JsValue::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_js_string()?.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    };
    for id in old_id.iter().map(String::as_str).chain([new_id]) {
        if !ids.iter().any(|i| i == id) {
            ids.push(id.to_owned());
        }
    }
    f.insert(
        "usageFamilySessionIds",
        JsValue::Array(
            ids.into_iter()
                .map(|i| JsValue::String(JsString::new(i)))
                .collect(),
        ),
    );
    f.insert("compactionCount", JsValue::Number(0.0));
    for field in RESET_CLEARED {
        f.remove(field);
    }
    f.insert("totalTokens", JsValue::Number(0.0));
    f.insert("totalTokensFresh", JsValue::Bool(true));
    let file = old.session_file().map(str::to_owned);
    if let Some(file) = file {
        let rewritten = rewrite_session_file(&file, old_id.as_deref(), new_id);
        next.fields_mut()
            .insert("sessionFile", JsValue::String(JsString::new(rewritten)));
    }
    next
}

/// R3.4: the base name of `file` from `old` to `new` (`<old>.jsonl`, `<old>-topic-<t>.jsonl`,
/// `<ts>_<old>.jsonl`), the directory part kept; another name becomes `<new>.jsonl`.
fn rewrite_session_file(file: &str, old: Option<&str>, new: &str) -> String {
    let (dir, base) = match file.rfind('/') {
        Some(i) => file.split_at(i + 1),
        None => ("", file),
    };
    let renamed = old.and_then(|old| {
        if base == format!("{old}.jsonl") {
            return Some(format!("{new}.jsonl"));
        }
        if let Some(topic) = base.strip_prefix(&format!("{old}-topic-")) {
            return Some(format!("{new}-topic-{topic}"));
        }
        let (ts, rest) = base.split_once('_')?;
        (rest == format!("{old}.jsonl")).then(|| format!("{ts}_{new}.jsonl"))
    });
    format!("{dir}{}", renamed.unwrap_or_else(|| format!("{new}.jsonl")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_file_names_follow_the_new_id() {
        assert_eq!(rewrite_session_file("a.jsonl", Some("a"), "b"), "b.jsonl");
        assert_eq!(
            rewrite_session_file("/s/a-topic-42.jsonl", Some("a"), "b"),
            "/s/b-topic-42.jsonl"
        );
        assert_eq!(
            rewrite_session_file("2026-06-11T09-00-00-000Z_a.jsonl", Some("a"), "b"),
            "2026-06-11T09-00-00-000Z_b.jsonl"
        );
        assert_eq!(
            rewrite_session_file("archive/x.jsonl", Some("a"), "b"),
            "archive/b.jsonl"
        );
    }
}
