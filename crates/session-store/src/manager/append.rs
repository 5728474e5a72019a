//! Appends of [`SessionManager`]: the typed `append_*` calls, the plain one-line append and the
//! catch-up that first adopts what another writer appended (openclaw-jsonl.md §2.6, §2.9;
//! [`crate::foreign`], docs/DEVIATIONS.md D30).

use std::path::Path;
use std::sync::Arc;

use session_format::build;
use session_format::json::{JsString, JsValue};

use crate::disk::{DiskImage, Verdict};
use crate::error::{AppendError, Failure};
use crate::id::{self as ids, EntryId};
use crate::io;
use crate::lock::LockError;
use crate::rows::{self, MsgShape, Row, RowKind};
use crate::snapshot::{SessionFileSnapshot, WriteOwner};
use crate::storage;

use super::load;
use super::{Payload, SessionManager, TailProbe};

impl SessionManager {
    /// `appendEntry`: builds the row (its `parentId` set to the append cursor, written from the
    /// exact id), persists it (§2.12), then indexes it (logical parent rule (b) at append time)
    /// and moves leaf and append cursor to it. A failed write leaves the state as it was.
    pub(super) fn append_value(&mut self, mut value: JsValue) -> Result<String, AppendError> {
        if self.read_only {
            return Err(AppendError::ReadOnly {
                path: self.file_path(),
            });
        }
        if let Some(o) = value.as_object_mut() {
            o.insert("parentId", ids::opt_value(self.ix.append_parent.as_ref()));
        }
        let row = Row::from_value(&value);
        let Some(meta) = row.kind.entry() else {
            return Err(AppendError::Internal {
                what: "an appended row did not classify as an entry",
            });
        };
        let id = meta.id.text().to_owned();
        let assistant = meta.msg == Some(MsgShape::Assistant);
        let written = self.persist && (self.ix.assistants > 0 || assistant);
        match self.session_file.clone() {
            // A plain append (§3.2): the line is written before the row joins the state.
            Some(path) if written && self.flushed => {
                self.under_lock(&path, |sm| {
                    // Lines another writer appended are adopted first, then judged
                    // (crate::foreign, D30): the row may move to their tip, or not be written.
                    sm.catch_up(&path);
                    let before = sm.cursor();
                    let row = match sm.settle_foreign(&path) {
                        Ok(false) => row,
                        Ok(true) => {
                            if let Some(o) = value.as_object_mut() {
                                o.insert("parentId", ids::opt_value(sm.ix.append_parent.as_ref()));
                            }
                            Row::from_value(&value)
                        }
                        Err(e) => return Err(e),
                    };
                    let out = sm.plain_append(&path, row);
                    if out.is_err() {
                        sm.restore_cursor(before);
                    }
                    out
                })
                .map_err(|e| Failure::lock(path.clone(), e))??;
            }
            // The first assistant of a held session: one full write of everything, after the
            // other writer's lines are adopted and judged (crate::foreign, D30).
            Some(_) if written => {
                let saved = self.save();
                let before = self.cursor();
                self.push_row(row);
                self.held += 1;
                match self.write_full_locked(true) {
                    Ok(()) => {}
                    Err(Failure::Diverged(e)) => {
                        // As a plain append: nothing written, their rows stay adopted (so the
                        // caller can branch to a tip), the new row goes, the held rows stay,
                        // and the error names the leaf the manager is back on.
                        self.drop_last_held(before);
                        return Err(match *e {
                            AppendError::Diverged { path, tips, .. } => AppendError::Diverged {
                                path,
                                leaf: self.ix.leaf.as_ref().map(|l| l.text().to_owned()),
                                tips,
                            },
                            other => other,
                        });
                    }
                    Err(e) => {
                        self.restore(saved);
                        return Err(e.into());
                    }
                }
                self.flushed = true;
            }
            file => {
                self.push_row(row);
                if self.persist {
                    self.held += 1;
                    if file.is_some() {
                        self.flushed = false;
                    }
                }
                // Held in memory, nothing written: an explicit move of the leaf before it
                // stays in force for the full write that writes it.
                if self.persist && file.is_some() {
                    return Ok(id);
                }
            }
        }
        // The leaf is this manager's own row now: the next append judges only what other
        // writers add after it.
        self.foreign_since = None;
        self.pinned = false;
        Ok(id)
    }

    /// After a judged full write of the held rows refused ([`AppendError::Diverged`]): the
    /// row just pushed (the last) goes again and the cursor is put back to `before`; the
    /// other writer's rows adopted by the write stay, still to be judged.
    fn drop_last_held(&mut self, before: crate::foreign::Cursor) {
        let since = self.foreign_since;
        self.rows.pop();
        self.held = self.held.saturating_sub(1);
        self.rebuild();
        self.restore_cursor(before);
        self.foreign_since = since;
    }

    /// A plain append of `row` to `path`: written first, then the row joins the state.
    pub(super) fn plain_append(&mut self, path: &Path, row: Row) -> Result<(), AppendError> {
        let owner = self.active_owner();
        let may_advance = match (&owner, &self.snapshot) {
            (Some(o), Some(snap)) => o.can_advance_cache(snap),
            (Some(_), None) => false,
            (None, _) => true,
        };
        let out = self.write_line(path, row.bytes(&self.buf))?;
        let i = self.push_row(row);
        self.after_append(path, &out, i, owner.as_ref(), may_advance);
        Ok(())
    }

    /// Runs `write` inside the session write lock of `path` in the manager's storage when one
    /// is set ([`SessionManager::set_write_lock`]; re-entrant: a lock this thread already holds
    /// for the file is reused), else directly.
    pub(super) fn under_lock<R>(
        &mut self,
        path: &Path,
        write: impl FnOnce(&mut Self) -> R,
    ) -> Result<R, LockError> {
        match self.write_lock.clone() {
            None => Ok(write(self)),
            Some(options) => {
                let storage = Arc::clone(&self.storage);
                storage::with_write_lock(&*storage, path, &options, || write(self))
            }
        }
    }

    /// Before a plain append (inside the write lock when one is set): when the file is no
    /// longer as this manager last saw it, it is re-read (between two equal `stat`s) and the
    /// lines another writer appended meanwhile are adopted (D11: indexed and kept verbatim,
    /// before the rows still held; leaf and append cursor stay, and the first adopted row is
    /// remembered for [`SessionManager::settle_foreign`], D30), so the append lands after them
    /// and is verified against the file as it now is. Any other change (rewritten, replaced,
    /// deleted, a read that did not hold still) is left to the append's own checks. When the
    /// file is as this manager last saw it, this costs one `stat`.
    ///
    /// Only the appended bytes are read when this manager's [`TailProbe`] describes the file
    /// as it last saw it and the file still holds the probe's first and last bytes (the cost
    /// of an append after another writer's is then that writer's lines, not the whole file);
    /// otherwise the whole file is read and compared with what this manager knows, and the
    /// probe is taken from it. Either way the check before a full rewrite still compares every
    /// byte (D11).
    pub(super) fn catch_up(&mut self, path: &Path) {
        let Some(known) = self.snapshot else {
            return;
        };
        let Ok(Some(before)) = self.storage.stat(path) else {
            return;
        };
        if before == known || !before.same_file(&known) || before.size <= known.size {
            return;
        }
        if self.catch_up_tail(path, known, before) {
            return;
        }
        let Ok(now) = self.storage.read_all(path) else {
            return;
        };
        let stable = self
            .storage
            .stat(path)
            .is_ok_and(|after| after == Some(before));
        // Only complete lines are adopted: a line still being written (another writer without
        // the lock) or torn by a crash is left to the checks after the write.
        if !stable || now.len() as u64 != before.size || !now.ends_with(b"\n") {
            return;
        }
        if let Verdict::Grew(at) = self.disk.check(Some(&now), &self.buf) {
            let at_row = self.rows.len().saturating_sub(self.held);
            if self.adopt(&now[..at], &now[at..], at_row) > 0 {
                self.foreign_since.get_or_insert(at_row);
            }
            if !self.disk.appended(at as u64, &now[at..]) {
                self.disk = DiskImage::known(&now);
            }
            self.snapshot = Some(before);
            self.tail_probe = Some(TailProbe::of(&now, before));
        }
    }

    /// The catch-up reading only the bytes after `known.size` (see [`SessionManager::catch_up`]);
    /// false (nothing changed) when the probe does not apply or does not match.
    fn catch_up_tail(
        &mut self,
        path: &Path,
        known: SessionFileSnapshot,
        before: SessionFileSnapshot,
    ) -> bool {
        let Some(probe) = self.tail_probe.as_ref().filter(|p| p.snapshot == known) else {
            return false;
        };
        // The new bytes must start a line, as a full read's `Verdict::Grew` requires.
        if probe.last.last() != Some(&b'\n') {
            return false;
        }
        let (Ok(old), Ok(new_len)) = (
            usize::try_from(known.size),
            usize::try_from(before.size - known.size),
        ) else {
            return false;
        };
        let mut head = vec![0u8; probe.head.len()];
        let mut last = vec![0u8; probe.last.len()];
        let last_at = (old - probe.last.len()) as u64;
        let mut tail = vec![0u8; new_len];
        let read = self.storage.read_ranges(
            path,
            &mut [
                (0, &mut head),
                (last_at, &mut last),
                (known.size, &mut tail),
            ],
        );
        if read.is_err() || head != probe.head || last != probe.last || !tail.ends_with(b"\n") {
            return false;
        }
        let stable = self
            .storage
            .stat(path)
            .is_ok_and(|after| after == Some(before));
        // The belief must extend by exactly these bytes (it is the file as last seen).
        let mut disk = self.disk.clone();
        if !stable || !disk.appended(known.size, &tail) {
            return false;
        }
        let line_base = probe.lines;
        let at_row = self.rows.len().saturating_sub(self.held);
        if self.adopt_tail(line_base, old, &tail, at_row) > 0 {
            self.foreign_since.get_or_insert(at_row);
        }
        self.disk = disk;
        self.snapshot = Some(before);
        if let Some(p) = self.tail_probe.as_mut() {
            p.extend(&tail, before);
        }
        true
    }

    /// Pushes a row and indexes it; returns its index.
    fn push_row(&mut self, row: Row) -> usize {
        let i = self.rows.len();
        self.rows.push(row);
        self.ix.extend(&self.rows, i);
        i
    }

    /// Appends one line to the existing file: never to another file than the one this manager
    /// read or last wrote (same device and inode), never creating one
    /// ([`Storage::append_line`], fenced on this manager's snapshot and first line).
    ///
    /// [`Storage::append_line`]: crate::Storage::append_line
    fn write_line(&self, path: &Path, line: &[u8]) -> Result<io::VerifiedAppend, AppendError> {
        let expected = self.snapshot.map(|snapshot| io::KnownFile {
            snapshot,
            first_line: &self.first_line,
        });
        self.storage
            .append_line(path, line, self.durability, expected)
            .map_err(|e| match e {
                io::AppendToExistingError::Deleted => AppendError::FileDeleted {
                    path: path.to_path_buf(),
                },
                io::AppendToExistingError::Replaced
                | io::AppendToExistingError::ReplacedDuringWrite => AppendError::FileReplaced {
                    path: path.to_path_buf(),
                },
                io::AppendToExistingError::Io(e) => Failure::io(path, e).into(),
            })
    }

    /// After a plain append of row `row`: the belief about the file is extended (or the lines
    /// another writer appended before ours are adopted, D11), and the warm cache advances when
    /// the append is verified (§3.2 step 5: this manager's snapshot and the cache's both equal
    /// the `fstat` before the write, and the file is the same file, exactly the bytes written
    /// longer); a verified append is published to the owner.
    fn after_append(
        &mut self,
        path: &Path,
        out: &io::VerifiedAppend,
        row: usize,
        owner: Option<&Arc<dyn WriteOwner>>,
        may_advance: bool,
    ) {
        self.held = 0;
        let mut row = row;
        if !self.disk.appended(out.before.size, &out.written) {
            row += self.after_foreign_append(path, out, row);
        }
        let verified = self.snapshot == Some(out.before)
            && out.after.same_file(&out.before)
            && out.after.size == out.before.size + out.written.len() as u64;
        if self.cache_key.is_none() {
            self.cache_key = load::key_in(&*self.storage, path);
        }
        let key = self.cache_key.as_deref();
        if out.separator || !may_advance {
            // A torn last line was terminated (its entry would no longer equal a fresh
            // load), or the owner refused: the entry goes.
            load::invalidate_key(&*self.storage, key);
        } else if verified {
            load::advance(
                &*self.storage,
                key,
                &out.before,
                out.after,
                &self.rows[row],
                &out.written,
            );
        }
        // Otherwise the entry is stale (its snapshot is not the file's): a later open reads
        // only what was appended after it.
        if (!verified || out.separator)
            && let Some(caches) = self.storage.caches()
        {
            // The incremental repair must not trust a prefix it has not seen whole.
            caches.repair.invalidate(path);
        }
        self.snapshot = Some(out.after);
        // The probe follows this manager's own verified appends (the file is exactly the
        // bytes written longer); any other outcome leaves it stale.
        match self.tail_probe.as_mut() {
            Some(p) if verified && p.snapshot == out.before => p.extend(&out.written, out.after),
            _ => self.tail_probe = None,
        }
        if verified {
            self.publish(owner, &out.after);
        }
    }

    /// The plain append found the file at another length than expected: another writer was
    /// there. When the file still starts with the bytes this manager knew, followed by other
    /// lines and then the line just written, the lines in between are adopted (indexed, placed
    /// before the row just appended, kept verbatim on rewrites); otherwise the belief becomes
    /// unknown, so the next full rewrite backs the file up first. Returns how many rows were
    /// inserted before `row`.
    fn after_foreign_append(&mut self, path: &Path, out: &io::VerifiedAppend, row: usize) -> usize {
        let Ok(now) = self.storage.read_all(path) else {
            self.disk = DiskImage::Unknown;
            return 0;
        };
        let Ok(previous) = usize::try_from(out.before.size) else {
            self.disk = DiskImage::Unknown;
            return 0;
        };
        let ours = now.get(previous..previous + out.written.len()) == Some(&out.written[..]);
        let before = now.get(..previous).filter(|_| ours);
        match before.map(|b| (b, self.disk.check(Some(b), &self.buf))) {
            Some((b, Verdict::Grew(at))) => {
                let tail = &b[at..];
                let inserted = self.adopt(&b[..at], tail, row);
                let extended = self.disk.appended(at as u64, tail)
                    && self.disk.appended(out.before.size, &out.written);
                if !extended {
                    self.disk = DiskImage::known(&now[..previous + out.written.len()]);
                }
                inserted
            }
            Some((b, Verdict::Vanished)) => {
                self.disk = DiskImage::known(&now[..b.len() + out.written.len()]);
                0
            }
            _ => {
                self.disk = DiskImage::Unknown;
                0
            }
        }
    }

    /// Adopts lines another writer appended (`tail`, which followed `prefix` in the file):
    /// they become rows (their exact bytes, read as a full load would read them) inserted
    /// before row `at`, and the index is rebuilt; the in-memory leaf and append cursor stay
    /// where they were. Returns how many rows were inserted.
    pub(super) fn adopt(&mut self, prefix: &[u8], tail: &[u8], at: usize) -> usize {
        let line_base = memchr::memchr_iter(b'\n', prefix).count();
        self.adopt_tail(line_base, prefix.len(), tail, at)
    }

    /// [`SessionManager::adopt`] of `tail`, which followed `line_base` line feeds and
    /// `offset_base` bytes in the file. Rows adopted after every row (nothing held) extend the
    /// index; rows inserted before held rows rebuild it.
    fn adopt_tail(
        &mut self,
        line_base: usize,
        offset_base: usize,
        tail: &[u8],
        at: usize,
    ) -> usize {
        let version = self
            .header
            .and_then(|h| self.rows.get(h))
            .map_or(3.0, |h| rows::header_version(h, &self.buf));
        let (new_rows, scanned) = rows::load_tail(tail, version, line_base, offset_base);
        self.parsed_lines += scanned;
        if new_rows.is_empty() {
            return 0;
        }
        let inserted = new_rows.len();
        self.adopted_lines += inserted;
        let at = at.min(self.rows.len());
        let keep = (
            self.ix.leaf.clone(),
            self.ix.append_parent.clone(),
            self.ix.side_parent.clone(),
        );
        if at == self.rows.len() && self.header.is_some() {
            // Appended after every row: the header stays where it is, and extending the index
            // gives what a rebuild would (`Index::extend`).
            self.rows.extend(new_rows);
            self.ix.extend(&self.rows, at);
        } else {
            self.rows.splice(at..at, new_rows);
            self.header = self
                .rows
                .iter()
                .position(|r| matches!(r.kind, RowKind::Header));
            self.rebuild();
        }
        let ix = &mut *self.ix;
        (ix.leaf, ix.append_parent, ix.side_parent) = keep;
        inserted
    }

    /// Appends a `message` entry (`{type, id, parentId, timestamp, message}`) as a child of the
    /// append cursor and moves the leaf to it. Returns the new 8-hex id. Any JSON value but
    /// `null` is accepted, as in the reference (which throws on `null` and `undefined`).
    ///
    /// # Errors
    /// [`AppendError::NullMessage`] for `null` (nothing is changed); otherwise serialising a
    /// typed payload, read-only manager, write failure.
    pub fn append_message(&mut self, message: impl Payload) -> Result<String, AppendError> {
        let message = message
            .into_value()
            .map_err(|source| AppendError::Serialize { source })?;
        if message.is_null() {
            // The reference reads `message.role` first and throws; nothing changes.
            return Err(AppendError::NullMessage);
        }
        let value = build::message(&self.base(), message);
        self.append_value(value)
    }

    /// Appends `thinking_level_change{thinkingLevel}`. Returns the new id.
    ///
    /// # Errors
    /// As [`SessionManager::append_message`].
    pub fn append_thinking_level_change(&mut self, level: &str) -> Result<String, AppendError> {
        let value = build::thinking_level_change(&self.base(), level);
        self.append_value(value)
    }

    /// Appends `model_change{provider, modelId}`. Returns the new id.
    ///
    /// # Errors
    /// As [`SessionManager::append_message`].
    pub fn append_model_change(
        &mut self,
        provider: &str,
        model_id: &str,
    ) -> Result<String, AppendError> {
        let value = build::model_change(&self.base(), provider, model_id);
        self.append_value(value)
    }

    /// Appends `compaction{summary, firstKeptEntryId, tokensBefore, details?, fromHook?}`
    /// (`firstKeptEntryId` is not validated, as in the reference; text or any JavaScript string,
    /// [`EntryId`], written exactly, lone surrogates included). Returns the new id.
    ///
    /// # Errors
    /// As [`SessionManager::append_message`].
    pub fn append_compaction<'i>(
        &mut self,
        summary: &str,
        first_kept_entry_id: impl Into<EntryId<'i>>,
        tokens_before: f64,
        details: Option<JsValue>,
        from_hook: Option<bool>,
    ) -> Result<String, AppendError> {
        let mut value =
            build::compaction(&self.base(), summary, "", tokens_before, details, from_hook);
        if let Some(o) = value.as_object_mut() {
            o.insert(
                "firstKeptEntryId",
                JsValue::String(first_kept_entry_id.into().to_js_string()),
            );
        }
        self.append_value(value)
    }

    /// Appends `custom{customType, data?}` (extension state; never in the model context).
    /// Returns the new id.
    ///
    /// # Errors
    /// As [`SessionManager::append_message`].
    pub fn append_custom_entry(
        &mut self,
        custom_type: &str,
        data: Option<JsValue>,
    ) -> Result<String, AppendError> {
        let value = build::custom(&self.base(), custom_type, data);
        self.append_value(value)
    }

    /// Appends `custom_message{customType, content, display, details?}` (enters the model
    /// context as a `custom` message). Returns the new id.
    ///
    /// # Errors
    /// As [`SessionManager::append_message`].
    pub fn append_custom_message_entry(
        &mut self,
        custom_type: &str,
        content: impl Payload,
        display: bool,
        details: Option<JsValue>,
    ) -> Result<String, AppendError> {
        let content = content
            .into_value()
            .map_err(|source| AppendError::Serialize { source })?;
        let value = build::custom_message(&self.base(), custom_type, content, display, details);
        self.append_value(value)
    }

    /// Appends `session_info{name}` with the name `trim()`med (JavaScript whitespace; inner
    /// newlines are kept — FINDINGS c). Returns the new id.
    ///
    /// # Errors
    /// As [`SessionManager::append_message`].
    pub fn append_session_info(
        &mut self,
        name: impl Into<JsString>,
    ) -> Result<String, AppendError> {
        let trimmed = session_format::js::trim_js_string(&name.into());
        let mut value = build::session_info(&self.base(), "");
        if let Some(o) = value.as_object_mut() {
            o.insert("name", JsValue::String(trimmed));
        }
        self.append_value(value)
    }

    /// Appends `label{targetId, label?}` (`None` omits the key, which clears the label, as does
    /// `""`). The target is text or any JavaScript string ([`EntryId`]), matched by its exact
    /// bytes and written back as the file holds it. Returns the new id.
    ///
    /// # Errors
    /// [`AppendError::EntryNotFound`] (`Entry <id> not found`) when `target_id` is not an
    /// entry id; otherwise as [`SessionManager::append_message`].
    pub fn append_label_change<'i>(
        &mut self,
        target_id: impl Into<EntryId<'i>>,
        label: Option<&str>,
    ) -> Result<String, AppendError> {
        self.append_label_change_value(target_id, label.map(JsValue::from))
    }

    /// As [`SessionManager::append_label_change`] with the label as any JSON value (written as
    /// given, as the reference does; a truthy value sets the label, anything else clears it).
    ///
    /// # Errors
    /// As [`SessionManager::append_label_change`].
    pub fn append_label_change_value<'i>(
        &mut self,
        target_id: impl Into<EntryId<'i>>,
        label: Option<JsValue>,
    ) -> Result<String, AppendError> {
        let target_id = target_id.into().as_wtf8();
        let Some((target, _)) = self.ix.by_id.get_key_value(target_id) else {
            return Err(AppendError::EntryNotFound {
                id: String::from_utf8_lossy(target_id).into_owned(),
            });
        };
        let target = target.clone();
        let mut value = build::label(&self.base(), "", None);
        if let Some(o) = value.as_object_mut() {
            o.insert("targetId", target.to_value());
            if let Some(l) = label {
                o.insert("label", l);
            }
        }
        self.append_value(value)
    }
}
