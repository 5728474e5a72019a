//! The read-only open ([`SessionManager::open_read_only`]) and the diagnostics every manager
//! gives ([`SessionManager::diagnostics`]); the report types and the structural analysis are in
//! [`crate::inspect`].

use crate::cache::Parsed;
use crate::error::OpenError;
use crate::inspect::{DanglingFirstKept, OpenReport, analyse};
use crate::paths;
use session_format::entry::EntryType;
use session_format::json::{JsString, JsValue};
use std::path::{Path, PathBuf};

use super::{SessionManager, Sessions};

/// The result of a read-only open: a manager that refuses to write, and the report.
#[derive(Debug)]
pub struct ReadOnlyOpen {
    /// The session, as a writable open would see it (in memory only).
    pub session: SessionManager,
    /// What was found.
    pub report: OpenReport,
}

impl SessionManager {
    /// Opens a session file without ever writing (not even a backup): migrations and
    /// corrupt-header recovery happen in memory only, and the [`OpenReport`] says what a
    /// writable open would repair. Appends, branching into new files and removals on the
    /// returned manager fail with a `ReadOnly` error; queries work as usual.
    ///
    /// # Errors
    /// [`OpenError::NotFound`] for a missing file; [`OpenError::Read`].
    pub fn open_read_only(
        path: &Path,
        cwd_override: Option<&str>,
    ) -> Result<ReadOnlyOpen, OpenError> {
        Self::on_files().open_read_only(path, cwd_override)
    }
}

impl Sessions {
    /// [`SessionManager::open_read_only`] of the session stored at `path` in this storage
    /// (read once with [`crate::Storage::read_all`]; nothing is written there).
    ///
    /// # Errors
    /// As [`SessionManager::open_read_only`].
    pub fn open_read_only(
        &self,
        path: &Path,
        cwd_override: Option<&str>,
    ) -> Result<ReadOnlyOpen, OpenError> {
        let abs = paths::resolve(path);
        let buf = match self.storage.read_all(&abs) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(OpenError::NotFound { path: abs });
            }
            Err(source) => return Err(OpenError::Read { path: abs, source }),
        };
        let parsed = Parsed::of(&abs, &buf);
        let cwd_js = cwd_override
            .map(JsString::from)
            .or_else(|| parsed.header_cwd.clone())
            .unwrap_or_else(|| JsString::from(paths::process_cwd()));
        let dir = abs.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut sm = SessionManager::read_only_blank(&cwd_js.to_str_lossy(), dir);
        sm.cwd_js = cwd_js;
        sm.storage = std::sync::Arc::clone(&self.storage);
        sm.set_loaded(abs, Some((buf, parsed)), false)?;
        let report = sm.diagnostics();
        Ok(ReadOnlyOpen {
            session: sm,
            report,
        })
    }
}

impl SessionManager {
    /// What the last load of this manager's file found (the same [`OpenReport`] a read-only
    /// open gives, for writable managers too), brought up to date: the file-level findings of
    /// the last `open`/reopen (malformed lines, torn tail, corrupt header and where a writable
    /// open backed it up, unmigrated version, empty file), the structural problems of the rows
    /// as they are now (cycles, dangling parents, duplicate ids, invalid leaf controls), and the
    /// conflict backups and adopted foreign lines of later full rewrites. A manager without a
    /// loaded file (new or in-memory sessions) reports only the structural part. Compactions
    /// whose first kept entry names no entry are found by parsing the compaction rows (only
    /// those).
    pub fn diagnostics(&self) -> OpenReport {
        let mut report = self.load_report.clone();
        report.conflict_backups.clone_from(&self.conflict_backups);
        report.adopted_lines = self.adopted_lines;
        analyse(&self.rows, &self.ix, &mut report);
        self.dangling_first_kept(&mut report);
        report
    }

    /// Every compaction whose resolved `firstKeptEntryId` names no entry.
    fn dangling_first_kept(&self, report: &mut OpenReport) {
        for (i, row) in self.rows.iter().enumerate() {
            let Some(e) = row.kind.entry() else { continue };
            if e.ty != EntryType::Compaction || self.ix.by_id.get(&e.id) != Some(&i) {
                continue;
            }
            // A row that does not parse again is a bug reported elsewhere (reads fail on it).
            let Ok(value) = crate::EntryRef::new(self, i).value() else {
                continue;
            };
            let kept = match value.get("firstKeptEntryId") {
                Some(JsValue::String(k)) => {
                    if self.ix.by_id.contains_key(k.as_wtf8()) {
                        continue;
                    }
                    Some(k.to_str_lossy().into_owned())
                }
                _ => None,
            };
            report.dangling_first_kept.push(DanglingFirstKept {
                compaction_id: e.id.text().to_owned(),
                first_kept_entry_id: kept,
                line: row.pos().map(|p| p.0),
            });
        }
    }

    fn read_only_blank(cwd: &str, dir: PathBuf) -> SessionManager {
        let mut sm = SessionManager::in_memory(cwd);
        sm.session_dir = dir;
        sm.read_only = true;
        sm
    }
}
