//! Branching of [`SessionManager`]: leaf moves (`branch`, `reset_leaf`), `branch_with_summary`,
//! `fork_from` and branched sessions (openclaw-jsonl.md §2.10, §2.12).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use session_format::build;
use session_format::entry::EntryType;
use session_format::ids::{new_entry_id, new_session_id, now_timestamp, session_file_name};
use session_format::json::{JsObject, JsValue};

use crate::deep::clone_value;
use crate::disk::DiskImage;
use crate::error::{BranchError, ForkError, OpenError, ReadError, RowLocation, WriteFailure};
use crate::id::{self as ids, EntryId, Id};
use crate::index::{Map, Set};
use crate::inspect::OpenReport;
use crate::paths;
use crate::rows::{self, Parent, Row, RowKind};

use super::{OpenParams, SessionManager, Sessions, ensure_dir};

impl SessionManager {
    /// Forks `source` into a new session of `session_dir` (default: the per-cwd directory of
    /// `target_cwd`): a new header (`version:3`, new id, `cwd: target_cwd`,
    /// `parentSession: source`) followed by every non-session row of the source, verbatim
    /// (opaque and unparseable rows included), so every id a compaction's `firstKeptEntryId`
    /// can name is still there. A legacy (v1/v2) source is migrated first, so the
    /// fork keeps its tree (the reference copies v1 rows unmigrated under a v3 header —
    /// pi-format.md §7.3 C). The file is created atomically, so a failure never leaves a partial
    /// file (FINDINGS i). The new file is then opened with cwd `target_cwd`.
    ///
    /// # Errors
    /// [`ForkError::InvalidSource`] (`Cannot fork: source session file is empty or invalid:
    /// <path>`) when the source is missing, empty or its first parsed line is not a readable
    /// header; I/O errors otherwise.
    pub fn fork_from(
        source: &Path,
        target_cwd: &str,
        session_dir: Option<&Path>,
    ) -> Result<Self, ForkError> {
        Self::on_files().fork_from(source, target_cwd, session_dir)
    }
}

impl Sessions {
    /// [`SessionManager::fork_from`] within this storage: the source is read from it and the
    /// fork created in it ([`Storage::create_new`](crate::Storage::create_new)).
    ///
    /// # Errors
    /// As [`SessionManager::fork_from`].
    pub fn fork_from(
        &self,
        source: &Path,
        target_cwd: &str,
        session_dir: Option<&Path>,
    ) -> Result<SessionManager, ForkError> {
        let storage = &*self.storage;
        let buf = match storage.read_all(source) {
            Ok(b) => b,
            // `existsSync(path)` false (missing, or `s.jsonl/`): "empty or invalid".
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    || !matches!(storage.stat(source), Ok(Some(_))) =>
            {
                return Err(ForkError::InvalidSource {
                    path: source.to_path_buf(),
                });
            }
            Err(source_err) => {
                return Err(ForkError::Read {
                    path: source.to_path_buf(),
                    source: source_err,
                });
            }
        };
        let mut loaded = rows::load(&buf);
        let Some(h) = loaded.header else {
            return Err(ForkError::InvalidSource {
                path: source.to_path_buf(),
            });
        };
        rows::migrate_rows(&mut loaded.rows, &buf, h).map_err(|(i, e)| {
            ForkError::Open(OpenError::Reread {
                at: RowLocation {
                    file: Some(source.to_path_buf()),
                    line: loaded.rows.get(i).and_then(|r| r.pos().map(|p| p.0)),
                    byte_offset: loaded.rows.get(i).and_then(|r| r.pos().map(|p| p.1)),
                },
                source: e,
            })
        })?;
        let dir =
            session_dir.map_or_else(|| paths::default_session_dir(target_cwd), Path::to_path_buf);
        ensure_dir(storage, &dir)?;
        let id = new_session_id();
        let ts = now_timestamp();
        let path = dir.join(session_file_name(&ts, &id));
        let source_text = source.to_string_lossy();
        let header = build::header(3, &id, &ts, target_cwd, Some(&source_text));
        let mut out = session_format::json::to_json_string(&header).into_bytes();
        out.push(b'\n');
        for row in &loaded.rows {
            if row.kind.is_session_typed() {
                continue;
            }
            out.extend_from_slice(row.bytes(&buf));
            out.push(b'\n');
        }
        storage
            .create_new(&path, &out)
            .map_err(|e| WriteFailure::new(path.clone(), e))?;
        Ok(self.open_with(
            &path,
            &OpenParams {
                session_dir: Some(dir),
                cwd_override: Some(target_cwd.to_owned()),
                fallback_cwd: None,
            },
        )?)
    }
}

impl SessionManager {
    // ------------------------------------------------------------------------------------
    // Branching (§2.6, §2.9)

    fn resolve_branch(&self, id: &[u8]) -> Result<Option<Id>, BranchError> {
        self.ix
            .resolve_branch_target(id)
            .ok_or_else(|| BranchError::EntryNotFound {
                id: String::from_utf8_lossy(id).into_owned(),
            })
    }

    /// Moves leaf and append cursor to `id` (text or any JavaScript string, [`EntryId`]; an
    /// opaque id selects its canonical ancestor). Nothing is written. The next append lands under `id` whatever another writer appends
    /// meanwhile (this settles a pending [`AppendError::Diverged`], docs/DEVIATIONS.md D30).
    ///
    /// # Errors
    /// [`BranchError::EntryNotFound`] (`Entry <id> not found`).
    ///
    /// [`AppendError::Diverged`]: crate::AppendError::Diverged
    pub fn branch<'i>(&mut self, id: impl Into<EntryId<'i>>) -> Result<(), BranchError> {
        let target = self.resolve_branch(id.into().as_wtf8())?;
        self.ix.leaf = target.clone();
        self.ix.append_parent = target;
        self.ix.side_parent = None;
        self.pin_cursor();
        Ok(())
    }

    /// Sets leaf and append cursor to null: the next append is a new root. Nothing is written.
    /// As after [`SessionManager::branch`], the next append lands there whatever another
    /// writer appends meanwhile.
    pub fn reset_leaf(&mut self) {
        self.ix.leaf = None;
        self.ix.append_parent = None;
        self.ix.side_parent = None;
        self.pin_cursor();
    }

    /// An explicit move of the leaf: other writers' lines adopted so far are settled, and the
    /// next append lands where the caller moved the leaf (crate::foreign).
    fn pin_cursor(&mut self) {
        self.foreign_since = None;
        self.pinned = true;
    }

    /// Moves the leaf **durably** to `target` (text or any JavaScript string, [`EntryId`]; an
    /// opaque id selects its canonical ancestor): appends one leaf control row (openclaw-jsonl.md
    /// §1.4, §2.3) `{"type":"leaf","id","parentId","timestamp","targetId"}` whose `parentId` is
    /// the file's raw tail (the id of its last entry, parent-linked opaque row or leaf control)
    /// and whose `targetId` is the target's exact id, so that a later open of the file (ours, or
    /// OpenClaw 2026.6.11's `SessionManager.open`) reports `target` as its leaf and appends the
    /// next entry under it. Leaf and append cursor of this manager move there too. Returns the
    /// new row's id.
    ///
    /// The row is written as one `O_APPEND` line inside the session write lock when one is set
    /// ([`SessionManager::set_write_lock`]); lines another writer appended first are adopted
    /// before it (the raw tail is theirs then), as for any plain append. No entry is added:
    /// [`SessionManager::get_entries`] is unchanged.
    ///
    /// # Errors
    /// [`BranchError::ReadOnly`] for a read-only manager; [`BranchError::EntryNotFound`] for an
    /// unknown id; [`BranchError::NotWritten`] when the session has no written file (in memory,
    /// or rows held until the first assistant message); [`BranchError::Lock`] when the write
    /// lock cannot be taken (naming its holder); write errors. Nothing changes on an error.
    pub fn append_leaf_control<'i>(
        &mut self,
        target: impl Into<EntryId<'i>>,
    ) -> Result<String, BranchError> {
        if self.read_only {
            return Err(BranchError::ReadOnly {
                path: self.file_path(),
            });
        }
        let target = self.resolve_branch(target.into().as_wtf8())?;
        let path = match self.session_file.clone() {
            Some(path) if self.persist && self.flushed && self.held == 0 => path,
            _ => {
                return Err(BranchError::NotWritten {
                    path: self.file_path(),
                });
            }
        };
        let written = self
            .under_lock(&path, |sm| -> Result<String, crate::AppendError> {
                sm.catch_up(&path);
                let (_, _, raw_tail) = sm.persisted_state();
                let base = sm.base();
                let id = base.id.clone();
                let mut value = build::leaf_control(&base, None, None, false);
                if let Some(o) = value.as_object_mut() {
                    o.insert("parentId", ids::opt_value(raw_tail.as_ref()));
                    o.insert("targetId", ids::opt_value(target.as_ref()));
                }
                let before = sm.cursor();
                let out = sm.plain_append(&path, Row::from_value(&value));
                if out.is_err() {
                    sm.restore_cursor(before);
                }
                out.map(|()| id)
            })
            .map_err(|e| crate::AppendError::from(crate::error::Failure::lock(path.clone(), e)))
            .and_then(|r| r)?;
        let ix = &mut *self.ix;
        ix.leaf = target.clone();
        ix.append_parent = target;
        ix.side_parent = None;
        self.foreign_since = None;
        self.pinned = false;
        Ok(written)
    }

    /// Moves to `from_id` (text or any JavaScript string: `Some("id".into())`,
    /// `Some((&js_string).into())`; no leaf for `None`) and appends
    /// `branch_summary{fromId: target ?? "root", summary, details?, fromHook?}` under it.
    /// Returns the new id.
    ///
    /// # Errors
    /// [`BranchError::EntryNotFound`] for an unknown id; write errors.
    pub fn branch_with_summary(
        &mut self,
        from_id: Option<EntryId<'_>>,
        summary: &str,
        details: Option<JsValue>,
        from_hook: Option<bool>,
    ) -> Result<String, BranchError> {
        if self.read_only {
            return Err(BranchError::ReadOnly {
                path: self.file_path(),
            });
        }
        let target = match from_id {
            None => None,
            Some(id) => self.resolve_branch(id.as_wtf8())?,
        };
        let before = (
            self.ix.leaf.clone(),
            self.ix.append_parent.clone(),
            self.ix.side_parent.clone(),
        );
        let pin_before = (self.foreign_since, self.pinned);
        self.ix.leaf = target.clone();
        self.ix.append_parent = target.clone();
        self.pin_cursor();
        let mut value = build::branch_summary(&self.base(), "root", summary, details, from_hook);
        if let (Some(o), Some(t)) = (value.as_object_mut(), &target) {
            o.insert("fromId", t.to_value());
        }
        match self.append_value(value) {
            Ok(id) => Ok(id),
            Err(e) => {
                // A failed append changes nothing, the move to the target included.
                let ix = &mut *self.ix;
                (ix.leaf, ix.append_parent, ix.side_parent) = before;
                (self.foreign_since, self.pinned) = pin_before;
                Err(e.into())
            }
        }
    }

    /// Switches this manager **in place** to a new session holding only the path from the
    /// root to `leaf_id` (text or any JavaScript string, [`EntryId`]; openclaw-jsonl.md §2.9): label entries and leaf controls on the path
    /// are dropped, every kept entry and parent-linked opaque row is re-parented onto the
    /// previous kept node (so descendants of a mid-path label stay connected), and each label
    /// whose target is on the path is re-created at the end with its original timestamp, in
    /// label insertion order. A compaction on the path whose `firstKeptEntryId` the copy would
    /// lose (a dropped label or leaf control) keeps from the next copied entry of the path
    /// instead (that row serialised afresh), so the new session's context equals the source's
    /// (docs/DEVIATIONS.md D31; the reference keeps the dropped id). The new header is `version:3`, new id, this cwd, `parentSession`
    /// = the previous file (persisting managers only). Rows whose parent does not change keep
    /// their bytes. The new file is written at once only when the path holds an assistant
    /// message. Returns the new file path (`None` in memory).
    ///
    /// # Errors
    /// [`BranchError::EntryNotFound`] when the path holds no entry; write errors (the manager
    /// then stays on the session it had, unchanged).
    pub fn create_branched_session<'i>(
        &mut self,
        leaf_id: impl Into<EntryId<'i>>,
    ) -> Result<Option<PathBuf>, BranchError> {
        let leaf_id = leaf_id.into().as_wtf8();
        if self.read_only {
            return Err(BranchError::ReadOnly {
                path: self.file_path(),
            });
        }
        enum Node<'a> {
            Entry(usize),
            Opaque(&'a Id, usize),
        }
        let mut opaque_by_id: Map<&[u8], (&Id, usize)> = Map::default();
        for (i, row) in self.rows.iter().enumerate() {
            match &row.kind {
                RowKind::Leaf(l) => {
                    opaque_by_id.insert(l.id.as_bytes(), (&l.id, i));
                }
                RowKind::Linked { id, .. } => {
                    opaque_by_id.insert(id.as_bytes(), (id, i));
                }
                _ => {}
            }
        }
        let opaque_at = |id: &[u8]| -> Option<(&Id, usize)> { opaque_by_id.get(id).copied() };
        let mut nodes: Vec<Node<'_>> = Vec::new();
        let mut seen: Set<&[u8]> = Set::default();
        let mut cur: Option<&[u8]> = Some(leaf_id).filter(|s| !s.is_empty());
        while let Some(c) = cur.take() {
            if !seen.insert(c) {
                break;
            }
            if let Some(&i) = self.ix.by_id.get(c) {
                nodes.push(Node::Entry(i));
                let Some(e) = self.rows[i].kind.entry() else {
                    break;
                };
                if let Some(logical) = self.ix.logical_parents.get(&e.id) {
                    let mut physical = e.parent.as_id().filter(|s| !s.is_empty()).map(Id::as_bytes);
                    while let Some(p) = physical.take() {
                        if seen.contains(p) {
                            break;
                        }
                        let Some((pid, r)) = opaque_at(p) else {
                            break;
                        };
                        let Some(next) = self.ix.opaque_parent(p) else {
                            break;
                        };
                        seen.insert(p);
                        physical = next.filter(|s| !s.is_empty()).map(Id::as_bytes);
                        nodes.push(Node::Opaque(pid, r));
                    }
                    cur = logical.as_ref().filter(|s| !s.is_empty()).map(Id::as_bytes);
                } else {
                    cur = e.parent.as_id().filter(|s| !s.is_empty()).map(Id::as_bytes);
                }
                continue;
            }
            let Some((cid, r)) = opaque_at(c) else {
                break;
            };
            let Some(next) = self.ix.opaque_parent(c) else {
                break;
            };
            cur = next.filter(|s| !s.is_empty()).map(Id::as_bytes);
            nodes.push(Node::Opaque(cid, r));
        }

        // Compactions whose first kept entry the copy would lose (a dropped label or leaf
        // control, or an opaque row that would resolve elsewhere) keep from the next copied
        // entry instead, so the context at every kept entry is the source's.
        let path_entries: Vec<usize> = nodes
            .iter()
            .rev()
            .filter_map(|n| match n {
                Node::Entry(i) => Some(*i),
                Node::Opaque(..) => None,
            })
            .collect();
        let copied_opaque: Set<&[u8]> = nodes
            .iter()
            .filter_map(|n| match n {
                Node::Opaque(id, r) if matches!(self.rows[*r].kind, RowKind::Linked { .. }) => {
                    Some(id.as_bytes())
                }
                _ => None,
            })
            .collect();
        let kept = self.first_kept_remaps(&path_entries, &copied_opaque)?;

        let mut path_rows: Vec<Row> = Vec::new();
        let mut entry_ids: Set<Id> = Set::default();
        let mut used_ids: Set<Vec<u8>> = Set::default();
        let mut tail: Option<Id> = None;
        for node in nodes.iter().rev() {
            match node {
                Node::Entry(i) => {
                    let row = &self.rows[*i];
                    let Some(e) = row.kind.entry() else { continue };
                    if e.ty == EntryType::Label {
                        continue;
                    }
                    let same = match (&e.parent, &tail) {
                        (Parent::Null, None) => true,
                        (Parent::Str(p), Some(t)) => p == t,
                        _ => false,
                    };
                    let mut keys: Vec<(&str, Option<JsValue>)> = Vec::new();
                    if !same {
                        keys.push(("parentId", Some(ids::opt_value(tail.as_ref()))));
                    }
                    if let Some(k) = kept.get(i) {
                        keys.push(("firstKeptEntryId", Some(k.to_value())));
                    }
                    let new_row = if keys.is_empty() {
                        row.clone()
                    } else {
                        row.with_keys(&self.buf, &keys)
                            .map_err(|e| self.read_error(*i, e))?
                    };
                    entry_ids.insert(e.id.clone());
                    used_ids.insert(e.id.as_bytes().to_vec());
                    tail = Some(e.id.clone());
                    path_rows.push(new_row);
                }
                Node::Opaque(id, r) => {
                    let row = &self.rows[*r];
                    let current = match &row.kind {
                        RowKind::Leaf(_) => continue,
                        RowKind::Linked { parent, .. } => parent.clone(),
                        _ => None,
                    };
                    let new_row = if current == tail {
                        row.clone()
                    } else {
                        row.with_keys(
                            &self.buf,
                            &[("parentId", Some(ids::opt_value(tail.as_ref())))],
                        )
                        .map_err(|e| self.read_error(*r, e))?
                    };
                    used_ids.insert(id.as_bytes().to_vec());
                    tail = Some((*id).clone());
                    path_rows.push(new_row);
                }
            }
        }
        if entry_ids.is_empty() {
            return Err(BranchError::EntryNotFound {
                id: String::from_utf8_lossy(leaf_id).into_owned(),
            });
        }
        let new_id = new_session_id();
        let ts = now_timestamp();
        let previous = self
            .session_file
            .as_ref()
            .map(|p| p.to_string_lossy().into_owned());
        let parent_session = if self.persist { previous } else { None };
        let header = self.header_value(&new_id, &ts, parent_session.as_deref());
        let mut header_row = Row::from_value(&header);
        header_row.kind = RowKind::Header;

        let mut label_rows = Vec::new();
        let mut parent = tail;
        for (target, state) in &self.ix.labels {
            if !entry_ids.contains(target) {
                continue;
            }
            let id = new_entry_id(|c| used_ids.contains(c.as_bytes()));
            used_ids.insert(id.as_bytes().to_vec());
            let mut o = JsObject::new();
            o.insert("type", JsValue::from("label"));
            o.insert("id", JsValue::from(id.as_str()));
            o.insert("parentId", ids::opt_value(parent.as_ref()));
            if let Some(t) = &state.timestamp {
                o.insert("timestamp", clone_value(t));
            }
            o.insert("targetId", target.to_value());
            o.insert("label", clone_value(&state.label));
            label_rows.push(Row::from_value(&JsValue::Object(o)));
            parent = Some(Id::from(id));
        }

        let mut new_rows = Vec::with_capacity(path_rows.len() + label_rows.len() + 1);
        new_rows.push(header_row);
        new_rows.extend(path_rows);
        new_rows.extend(label_rows);
        // A failed write of the new file leaves this manager on the session it had.
        let before = (
            self.save(),
            self.session_id.clone(),
            self.session_file.clone(),
            Arc::clone(&self.first_line),
            self.cache_key.clone(),
            self.conflict_backups.clone(),
            self.load_report.clone(),
        );
        self.rows = new_rows.into();
        self.header = Some(0);
        self.session_id = new_id.clone();
        self.rebuild();
        self.disk = DiskImage::Absent;
        self.snapshot = None;
        self.first_line = Arc::from(&[][..]);
        self.cache_key = None;
        self.held = self.rows.len();
        self.conflict_backups.clear();
        self.adopted_lines = 0;
        let foreign_before = (self.foreign_since, self.pinned);
        (self.foreign_since, self.pinned) = (None, false);
        if !self.persist {
            return Ok(None);
        }
        let file = paths::normalize(&self.session_dir.join(session_file_name(&ts, &new_id)));
        self.session_file = Some(file.clone());
        self.load_report = OpenReport {
            path: file.clone(),
            ..OpenReport::default()
        };
        if self.ix.assistants > 0 {
            if let Err(e) = self.rewrite() {
                let (saved, id, file_before, first_line, cache_key, backups, report) = before;
                self.restore(saved);
                (self.session_id, self.session_file, self.first_line) =
                    (id, file_before, first_line);
                (self.cache_key, self.conflict_backups, self.load_report) =
                    (cache_key, backups, report);
                (self.foreign_since, self.pinned) = foreign_before;
                return Err(e.into());
            }
            self.flushed = true;
        } else {
            self.flushed = false;
        }
        Ok(Some(file))
    }

    /// For a copy of the path `entries` (entry rows root to leaf, labels included; labels are
    /// dropped, and of the opaque rows on the path only `copied_opaque` are kept): the
    /// compactions (by row) whose `firstKeptEntryId` must be rewritten, with the id to write.
    /// A compaction's first kept entry as reads resolve it ([`EntryRef::value`], §2.3) that
    /// lies on the path before it is where its context resumes; when the copy would not find
    /// the same place (the stored id names a dropped label or leaf control, or an opaque row
    /// whose ancestor is a dropped label), the id becomes the first copied entry from there
    /// on (the compaction itself when only labels lie between). Labels add no message, so the
    /// context is unchanged; a first kept entry off the path or after the compaction is left
    /// as it is (the context keeps nothing before the compaction either way, pi-format.md
    /// §3.5).
    ///
    /// # Errors
    /// [`ReadError`] when a compaction row no longer parses (a bug).
    fn first_kept_remaps(
        &self,
        entries: &[usize],
        copied_opaque: &Set<&[u8]>,
    ) -> Result<Map<usize, Id>, ReadError> {
        let mut out: Map<usize, Id> = Map::default();
        let is_label = |i: usize| {
            self.rows[i]
                .kind
                .entry()
                .is_some_and(|e| e.ty == EntryType::Label)
        };
        let mut position: Map<&Id, usize> = Map::default();
        for (k, &i) in entries.iter().enumerate() {
            let Some(e) = self.rows[i].kind.entry() else {
                continue;
            };
            position.entry(&e.id).or_insert(k);
            if e.ty != EntryType::Compaction {
                continue;
            }
            let entry = crate::EntryRef::new(self, i);
            let stored = entry
                .raw_value()?
                .get("firstKeptEntryId")
                .and_then(JsValue::as_js_string)
                .map(|s| Id::new(s.clone()));
            let resolved = entry
                .value()?
                .get("firstKeptEntryId")
                .and_then(JsValue::as_js_string)
                .map(|s| Id::new(s.clone()));
            let (Some(stored), Some(resolved)) = (stored, resolved) else {
                continue;
            };
            let Some(&p) = position.get(&resolved).filter(|&&p| p < k) else {
                continue;
            };
            let Some(target) = entries[p..=k]
                .iter()
                .copied()
                .find(|&j| !is_label(j))
                .and_then(|j| self.rows[j].kind.entry().map(|e| e.id.clone()))
            else {
                continue;
            };
            // The stored id names a row the copy keeps: an entry of the path that is not a
            // label, or a parent-linked opaque row of the path.
            let stored_copied = (position.contains_key(&stored)
                && self.ix.by_id.get(&stored).is_some_and(|&j| !is_label(j)))
                || copied_opaque.contains(stored.as_bytes());
            let lands_on_label = self.ix.by_id.get(&resolved).is_some_and(|&j| is_label(j));
            if stored != target && (!stored_copied || lands_on_label) {
                out.insert(i, target);
            }
        }
        Ok(out)
    }
}
