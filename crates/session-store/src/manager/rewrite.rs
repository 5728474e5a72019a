//! Full rewrites of [`SessionManager`]: removing trailing entries, the flushed gate's first full
//! write, `rewrite_file`, the header-rewrite snapshot sync, and the serialised file they write
//! (openclaw-jsonl.md §2.9; docs/DEVIATIONS.md D11).

use std::path::Path;

use session_format::build::{self, RowBase};
use session_format::entry::EntryType;
use session_format::ids::now_timestamp;
use session_format::json::JsValue;

use super::load::{self, Fetched};
use crate::disk::{DiskImage, Verdict};
use crate::error::{AppendError, Failure, OpenError, RemoveError};
use crate::id::{self as ids, Id};
use crate::index::{Map, Set};
use crate::rows::{EntryMeta, Parent, Row, RowKind};
use crate::snapshot::SnapshotSync;
use crate::storage;

use super::{FENCED_REWRITE_ATTEMPTS, SessionManager, first_line};

impl SessionManager {
    // ------------------------------------------------------------------------------------
    // Removal (§2.10, Gen J)

    /// Removes the run of entries at the physical tail for which `predicate` holds, after
    /// skipping trailing entries for which `preserve_trailing` holds (the header never counts),
    /// plus later labels targeting removed ids. Surviving rows (entries and opaque rows,
    /// including leaf controls' `targetId`/`appendParentId`) are re-parented past removed ids;
    /// the leaf becomes the canonical form of the first removed row's parent and the append
    /// cursor that parent. Then the file is rewritten in full (even without an assistant).
    /// Returns how many entries were removed (labels not counted).
    ///
    /// # Errors
    /// [`RemoveError`] when the rewrite fails (the session in memory is left as it was).
    pub fn remove_trailing_entries(
        &mut self,
        mut predicate: impl FnMut(crate::EntryRef<'_>) -> bool,
        mut preserve_trailing: Option<&mut dyn FnMut(crate::EntryRef<'_>) -> bool>,
    ) -> Result<usize, RemoveError> {
        if self.read_only {
            return Err(RemoveError::ReadOnly {
                path: self.file_path(),
            });
        }
        let file_entries: Vec<usize> = self
            .rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.kind.is_file_entry())
            .map(|(i, _)| i)
            .collect();
        let is_entry = |i: usize| self.rows[i].kind.entry().is_some();
        let mut preserved_start = file_entries.len();
        if let Some(keep) = preserve_trailing.as_mut() {
            while preserved_start > 1 {
                let i = file_entries[preserved_start - 1];
                if !is_entry(i) || !keep(crate::EntryRef::new(self, i)) {
                    break;
                }
                preserved_start -= 1;
            }
        }
        let mut remove_start = preserved_start;
        while remove_start > 1 {
            let i = file_entries[remove_start - 1];
            if !is_entry(i) || !predicate(crate::EntryRef::new(self, i)) {
                break;
            }
            remove_start -= 1;
        }
        if remove_start == preserved_start {
            return Ok(0);
        }
        let removed: Vec<usize> = file_entries[remove_start..preserved_start].to_vec();
        let removed_count = removed.len();
        let mut drop_rows: Set<usize> = removed.iter().copied().collect();
        let mut removed_parent: Map<Id, Option<Id>> = Map::default();
        let parent_of = |p: &Parent| p.as_id().cloned();
        for &i in &removed {
            if let Some(e) = self.rows[i].kind.entry() {
                removed_parent.insert(e.id.clone(), parent_of(&e.parent));
            }
        }
        for &i in &file_entries[preserved_start..] {
            if let Some(e) = self.rows[i].kind.entry()
                && e.ty == EntryType::Label
                && let Some(target) = e.label.as_ref().and_then(|l| l.target.as_ref())
                && removed_parent.contains_key(target)
            {
                removed_parent.insert(e.id.clone(), parent_of(&e.parent));
                drop_rows.insert(i);
            }
        }
        let resolve = |start: Option<&Id>| -> Option<Id> {
            let mut seen: Set<&Id> = Set::default();
            let mut cur = start;
            while let Some(c) = cur {
                if c.is_empty() || !removed_parent.contains_key(c) || !seen.insert(c) {
                    break;
                }
                cur = removed_parent.get(c).and_then(Option::as_ref);
            }
            cur.cloned()
        };
        let first_parent = removed
            .first()
            .and_then(|&i| self.rows[i].kind.entry())
            .and_then(|e| e.parent.as_id().cloned());
        let replacement = resolve(first_parent.as_ref());
        let saved = self.save();

        // Built aside, so a row that cannot be re-read leaves the session untouched.
        let held_from = self.rows.len().saturating_sub(self.held);
        let mut new_held = 0;
        let mut new_rows = Vec::with_capacity(self.rows.len());
        for (i, row) in self.rows.iter().enumerate() {
            if drop_rows.contains(&i) {
                continue;
            }
            if i >= held_from {
                new_held += 1;
            }
            let mut keys: Vec<(&str, Option<JsValue>)> = Vec::new();
            let mut relink = |key: &'static str, p: &Id| {
                let r = resolve(Some(p));
                if r.as_ref() != Some(p) {
                    keys.push((key, Some(ids::opt_value(r.as_ref()))));
                }
            };
            match &row.kind {
                RowKind::Entry(EntryMeta {
                    parent: Parent::Str(p),
                    ..
                })
                | RowKind::Linked {
                    parent: Some(p), ..
                }
                | RowKind::Opaque {
                    object: true,
                    parent: Parent::Str(p),
                    ..
                } => relink("parentId", p),
                RowKind::Leaf(l) => {
                    if let Some(p) = &l.parent {
                        relink("parentId", p);
                    }
                    if let Some(t) = &l.target {
                        relink("targetId", t);
                    }
                    if let Some(Some(a)) = &l.append_parent {
                        relink("appendParentId", a);
                    }
                }
                _ => {}
            }
            if keys.is_empty() {
                new_rows.push(row.clone());
            } else {
                let r = row
                    .with_keys(&self.buf, &keys)
                    .map_err(|e| RemoveError::Read(self.read_error(i, e)))?;
                new_rows.push(r);
            }
        }
        self.rows = new_rows.into();
        self.held = new_held;
        self.header = self
            .rows
            .iter()
            .position(|r| matches!(r.kind, RowKind::Header));
        self.rebuild();
        let leaf = self
            .ix
            .resolve_canonical(replacement.as_ref().map(Id::as_bytes));
        self.ix.leaf = leaf;
        self.ix.append_parent = replacement;
        if let Err(e) = self.rewrite() {
            self.restore(saved);
            return Err(e.into());
        }
        // Rows were removed: remembered row numbers no longer hold.
        self.foreign_since = None;
        Ok(removed_count)
    }

    // ------------------------------------------------------------------------------------
    // Full rewrites (§2.12)

    /// `rewriteFile`: a full rewrite when persisting (flushed is left as it is), under the
    /// write lock when one is set.
    pub(crate) fn rewrite(&mut self) -> Result<(), Failure> {
        if !self.persist || self.session_file.is_none() {
            return Ok(());
        }
        self.write_full_locked(false)
    }

    /// [`SessionManager::write_full`] inside the session write lock when one is set.
    pub(super) fn write_full_locked(&mut self, judge: bool) -> Result<(), Failure> {
        let Some(path) = self.session_file.clone() else {
            return Ok(());
        };
        self.under_lock(&path, |sm| sm.write_full(judge))
            .map_err(|e| Failure::lock(path.clone(), e))?
    }

    /// Forces a full write of a persisting session now (the reference's
    /// `flushPendingPersistence`, absent from 2026.6.11): useful after held appends. Lines
    /// another writer appended meanwhile are adopted and judged as before a plain append
    /// ([`ForeignAppendPolicy`], docs/DEVIATIONS.md D30).
    ///
    /// # Errors
    /// [`AppendError::Write`]; [`AppendError::Diverged`] under
    /// [`ForeignAppendPolicy::FastForward`] when the other writer's entries do not continue
    /// this manager's leaf (e.g. they answered under the persisted base while this manager
    /// holds its own rows): nothing is written, the held rows stay held, the other writer's
    /// rows are adopted (a tip can be reached with [`SessionManager::branch`]).
    ///
    /// [`ForeignAppendPolicy`]: crate::ForeignAppendPolicy
    /// [`ForeignAppendPolicy::FastForward`]: crate::ForeignAppendPolicy::FastForward
    pub fn flush(&mut self) -> Result<(), AppendError> {
        if !self.persist || self.session_file.is_none() || self.flushed {
            return Ok(());
        }
        self.write_full_locked(true)?;
        self.flushed = true;
        self.pinned = false;
        Ok(())
    }

    /// Writes this manager's whole session to its file now, whether or not it is flushed: an
    /// atomic full rewrite with the usual checks (lines another writer appended are adopted
    /// first, a file changed in any other way is backed up byte for byte first; D11). The way
    /// to go on after [`AppendError::FileDeleted`] (the file is written again) or
    /// [`AppendError::FileReplaced`] (this session replaces the other file, which is kept as a
    /// `.conflict-` backup), instead of reopening.
    ///
    /// Lines another writer appended are judged as before a plain append
    /// ([`ForeignAppendPolicy`], docs/DEVIATIONS.md D30): under
    /// [`ForeignAppendPolicy::FastForward`] the leaf moves to their tip when they continue it.
    ///
    /// # Errors
    /// [`AppendError::ReadOnly`]; [`AppendError::Write`] (nothing changed on disk or in memory);
    /// [`AppendError::Diverged`] under [`ForeignAppendPolicy::FastForward`] when the other
    /// writer's entries start another branch (nothing written; their rows are adopted, rows
    /// held in memory stay held).
    ///
    /// [`ForeignAppendPolicy`]: crate::ForeignAppendPolicy
    /// [`ForeignAppendPolicy::FastForward`]: crate::ForeignAppendPolicy::FastForward
    pub fn rewrite_file(&mut self) -> Result<(), AppendError> {
        if self.read_only {
            return Err(AppendError::ReadOnly {
                path: self.file_path(),
            });
        }
        if !self.persist || self.session_file.is_none() {
            return Ok(());
        }
        let saved = self.save();
        match self.write_full_locked(true) {
            Ok(()) => {}
            Err(Failure::Diverged(e)) => return Err(*e),
            Err(e) => {
                self.restore(saved);
                return Err(e.into());
            }
        }
        self.flushed = true;
        self.pinned = false;
        Ok(())
    }

    /// `syncSnapshotAfterHeaderRewrite` (openclaw-jsonl.md §3.3): someone else rewrote this
    /// manager's file (e.g. normalised its header) and tells the manager, with the bytes it
    /// wrote when it has them. The file is re-read with stat-read-stat:
    /// - a stable read holding `expected` (or any stable read when `expected` is `None`): the
    ///   manager takes the file as it now is (rows, index, snapshot; rows it still holds
    ///   unwritten stay after them, and the leaf and append cursor stay where they were when
    ///   their entries still exist), the file is re-cached, and, only when `expected` was given
    ///   and matched, the snapshot is published to the owner;
    /// - bytes other than `expected`, or an unstable read: the warm cache entry is dropped,
    ///   nothing is published, and the manager keeps its rows but no longer trusts the file
    ///   (its next full rewrite backs it up first, D11).
    ///
    /// A file over the cache's byte cap is neither verified nor cached (`{snapshot, false,
    /// false}`, as the reference); the manager still takes its content (read with
    /// stat-read-stat).
    ///
    /// # Errors
    /// [`OpenError`] when the file cannot be read (or keeps changing).
    pub fn sync_snapshot_after_header_rewrite(
        &mut self,
        expected: Option<&[u8]>,
    ) -> Result<SnapshotSync, OpenError> {
        let Some(path) = self.session_file.clone() else {
            return Ok(SnapshotSync {
                snapshot: None,
                verified_write: false,
                stable_read: false,
            });
        };
        let r =
            load::reread(&*self.storage, &path, expected).map_err(|source| OpenError::Read {
                path: path.clone(),
                source,
            })?;
        self.parsed_lines += r.scanned;
        self.cache_key = load::key_in(&*self.storage, &path);
        let over_cap = r
            .sync
            .snapshot
            .is_some_and(|s| s.size > load::limits(&*self.storage).max_bytes);
        if r.sync.stable_read {
            match (r.state, r.bytes, r.sync.snapshot) {
                (Some(w), _, _) => self.reload(
                    path,
                    Fetched::Warm {
                        state: w,
                        scanned: 0,
                    },
                )?,
                (None, Some(buf), Some(snapshot)) => {
                    self.reload(path, Fetched::Cold { buf, snapshot })?;
                }
                _ => {}
            }
            if r.sync.verified_write {
                let owner = self.active_owner();
                if let Some(snap) = r.sync.snapshot {
                    self.publish(owner.as_ref(), &snap);
                }
            }
        } else if over_cap {
            let fetch = load::fetch(&*self.storage, &path)?;
            self.reload(path, fetch.fetched)?;
        } else {
            self.snapshot = r.sync.snapshot;
            if r.sync.snapshot.is_some() {
                self.disk = DiskImage::Unknown;
            }
        }
        Ok(r.sync)
    }

    /// The file-implied `(leaf, append cursor, raw tail)` of the current rows (invalid leaf
    /// controls skipped), as `getPersistedFileEntries` replays them.
    pub(super) fn persisted_state(&self) -> (Option<Id>, Option<Id>, Option<Id>) {
        let mut leaf = None;
        let mut append = None;
        let mut raw_tail = None;
        for row in &self.rows {
            match &row.kind {
                RowKind::Leaf(l) => {
                    raw_tail = Some(l.id.clone());
                    if self.ix.invalid_leaf.contains(&l.id) {
                        continue;
                    }
                    let target = self.ix.resolve_leaf_target(l.target.as_ref());
                    append = match &l.append_parent {
                        None => target.clone(),
                        Some(ap) => self.ix.resolve_opaque_append_parent(ap.as_ref()),
                    };
                    leaf = target;
                }
                RowKind::Entry(e) => {
                    leaf = Some(e.id.clone());
                    append = Some(e.id.clone());
                    raw_tail = Some(e.id.clone());
                }
                RowKind::Linked { id, .. } => {
                    append = Some(id.clone());
                    raw_tail = Some(id.clone());
                }
                _ => {}
            }
        }
        (leaf, append, raw_tail)
    }

    /// Appends a leaf control when the file-implied leaf or append cursor differs from memory,
    /// and remembers it as a row so the next rewrite does not repeat it. Every id it names is
    /// written from the exact id.
    fn synthesize_leaf_control(&mut self) {
        let (leaf, append, raw_tail) = self.persisted_state();
        if leaf == self.ix.leaf && append == self.ix.append_parent {
            return;
        }
        let base = RowBase {
            id: self.new_id(),
            parent_id: None,
            timestamp: now_timestamp(),
        };
        let with_append = self.ix.append_parent != self.ix.leaf;
        let mut value = build::leaf_control(&base, None, with_append.then_some(None), false);
        if let Some(o) = value.as_object_mut() {
            o.insert("parentId", ids::opt_value(raw_tail.as_ref()));
            o.insert("targetId", ids::opt_value(self.ix.leaf.as_ref()));
            if with_append {
                o.insert(
                    "appendParentId",
                    ids::opt_value(self.ix.append_parent.as_ref()),
                );
            }
        }
        let row = Row::from_value(&value);
        let leaf = self.ix.leaf.clone();
        self.ix.insert_opaque(Id::from(base.id), leaf);
        self.rows.push(row);
    }

    /// The full file text: every row's bytes plus `\n`.
    pub(crate) fn serialized(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.buf.len() + 1024);
        for row in &self.rows {
            out.extend_from_slice(row.bytes(&self.buf));
            out.push(b'\n');
        }
        out
    }

    /// A full rewrite (docs/DEVIATIONS.md D11): first the file is compared with what this
    /// manager last read or wrote. Lines another writer appended since are adopted (kept
    /// verbatim, before the rows still held in memory); a file changed in any other way is
    /// first backed up byte for byte (`<file>.conflict-<ts>-<8hex>.jsonl`, mode and owner
    /// kept, listed in [`SessionManager::diagnostics`]). Nothing is overwritten when the backup
    /// fails.
    ///
    /// On [`FileStorage`] the check reads the file and the rename follows (the write lock, when
    /// set, keeps other writers out in between, §3.4). On any other storage the check reads the
    /// bytes with their snapshot ([`Storage::read_snapshot`]) and the replace is fenced on that
    /// snapshot ([`Storage::replace_if`]): when another writer changed the session in between
    /// (an append by another gateway), nothing is written, this manager's state goes back to
    /// what it was before the attempt, and the check runs again on the session as it now is
    /// (adopting that writer's lines), up to [`FENCED_REWRITE_ATTEMPTS`] times. A conflict
    /// backup an attempt made stays (it is a byte-exact copy, listed in the diagnostics).
    ///
    /// When `judge` is set (the first full write of held rows, `flush`, `rewrite_file`), the
    /// other writer's rows adopted by the check (and any a plain append left to judge) are
    /// judged as before a plain append ([`SessionManager::settle_foreign_until`], D30): they
    /// may move the cursor to their tip, or refuse the write.
    ///
    /// # Errors
    /// [`Failure::Write`]: the read, backup or replace failed; on other storages also
    /// [`std::io::ErrorKind::ResourceBusy`] when every fenced attempt was refused (nothing
    /// written; the rows adopted by the attempts are dropped again).
    /// [`Failure::Diverged`] (judged writes only): nothing written, the other writer's
    /// rows stay adopted (the belief about the file includes them) and remembered for the next
    /// judgement; the cursor is unchanged.
    ///
    /// [`FileStorage`]: crate::FileStorage
    /// [`Storage::read_snapshot`]: crate::Storage::read_snapshot
    /// [`Storage::replace_if`]: crate::Storage::replace_if
    fn write_full(&mut self, judge: bool) -> Result<(), Failure> {
        let Some(path) = self.session_file.clone() else {
            return Ok(());
        };
        for _ in 0..FENCED_REWRITE_ATTEMPTS {
            let (current, expected) = if !self.storage.replace_is_fenced() {
                // The file store's replace is not fenced (the write lock serialises full
                // rewrites, D11 checks the bytes): it needs the bytes only, and never refuses.
                match self.storage.read_all(&path) {
                    Ok(b) => (Some(b), None),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => (None, None),
                    Err(e) => return Err(Failure::io(path, e)),
                }
            } else {
                match self
                    .storage
                    .read_snapshot(&path)
                    .map_err(|e| Failure::io(path.clone(), e))?
                {
                    storage::SnapshotRead::Missing => (None, None),
                    storage::SnapshotRead::Read { bytes, snapshot } => {
                        (Some(bytes), Some(snapshot))
                    }
                    storage::SnapshotRead::Changed => continue,
                }
            };
            let saved = self.save();
            let saved_foreign = self.foreign_since;
            let adopted_at = self
                .reconcile_before_rewrite(&path, current.as_deref())
                .map_err(|e| Failure::io(path.clone(), e))?;
            if judge {
                if let Some(at) = adopted_at {
                    self.foreign_since.get_or_insert(at);
                }
                let until = self.rows.len().saturating_sub(self.held);
                self.settle_foreign_until(&path, until)
                    .map_err(Failure::diverged)?;
            }
            self.synthesize_leaf_control();
            let bytes = self.serialized();
            let replaced = self
                .storage
                .replace_if(&path, &bytes, expected.as_ref())
                .map_err(|e| Failure::io(path.clone(), e))?;
            match replaced {
                storage::Replace::Done => {
                    // The incremental repair must not trust the prefix it saw before.
                    if let Some(caches) = self.storage.caches() {
                        caches.repair.invalidate(&path);
                    }
                    self.full_write_done(&path, &bytes);
                    return Ok(());
                }
                // Another writer got in between: the next attempt sees what it did.
                storage::Replace::Refused => {
                    self.restore(saved);
                    self.foreign_since = saved_foreign;
                }
            }
        }
        Err(Failure::io(
            path.clone(),
            std::io::Error::new(
                std::io::ErrorKind::ResourceBusy,
                format!(
                    "{} kept changing (other writers) during {FENCED_REWRITE_ATTEMPTS} fenced full \
                 rewrites in {}; nothing was written",
                    path.display(),
                    self.storage.name()
                ),
            ),
        ))
    }

    /// The check before a full rewrite (D11) of `current`, the session's bytes as just read
    /// (`None`: nothing stored): another writer's appended lines are adopted, any other change
    /// is backed up byte for byte first. Returns the first adopted row when rows were adopted.
    fn reconcile_before_rewrite(
        &mut self,
        path: &Path,
        current: Option<&[u8]>,
    ) -> std::io::Result<Option<usize>> {
        let mut adopted_at = None;
        match self.disk.check(current, &self.buf) {
            Verdict::Same | Verdict::Vanished => {}
            Verdict::Grew(at) => {
                if let Some(now) = current {
                    let at_row = self.rows.len().saturating_sub(self.held);
                    if self.adopt(&now[..at], &now[at..], at_row) > 0 {
                        adopted_at = Some(at_row);
                    }
                    // Known now: a retry after a failed rewrite does not adopt them twice.
                    if !self.disk.appended(at as u64, &now[at..]) {
                        self.disk = DiskImage::known(now);
                    }
                }
            }
            Verdict::Changed => {
                if let Some(now) = current {
                    let backup = crate::paths::backup_path(path, "conflict");
                    self.storage.backup_copy(path, &backup, now)?;
                    self.conflict_backups.push(backup);
                    self.disk = DiskImage::known(now);
                }
            }
        }
        Ok(adopted_at)
    }

    /// The state after a full rewrite of `bytes` landed.
    fn full_write_done(&mut self, path: &Path, bytes: &[u8]) {
        self.disk = DiskImage::known(bytes);
        self.held = 0;
        self.after_full_write(path, bytes);
    }

    /// `rememberWrittenSessionEntries(path, written)` after a full rewrite: the file is read
    /// back between two `stat`s; when it holds exactly the bytes written, it is re-cached
    /// (parsed once more, unless over the cache's byte cap) and its snapshot published to the
    /// owner. The manager's snapshot becomes the file's.
    fn after_full_write(&mut self, path: &Path, bytes: &[u8]) {
        self.cache_key = load::key_in(&*self.storage, path);
        self.first_line = first_line(bytes);
        match load::reread(&*self.storage, path, Some(bytes)) {
            Ok(r) => {
                self.parsed_lines += r.scanned;
                self.snapshot = r.sync.snapshot;
                if r.sync.verified_write
                    && let Some(snap) = r.sync.snapshot
                {
                    let owner = self.active_owner();
                    self.publish(owner.as_ref(), &snap);
                }
            }
            Err(_) => {
                load::invalidate_key(&*self.storage, self.cache_key.as_deref());
                self.snapshot = self.storage.stat(path).ok().flatten();
            }
        }
    }
}
