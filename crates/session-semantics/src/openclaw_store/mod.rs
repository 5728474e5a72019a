//! OpenClaw's session store: the `sessions.json` file beside an agent's transcripts, mapping
//! session key → entry (current `sessionId`, `updatedAt`, `sessionFile`, model, counters, …).
//! Read as the reference reads it (openclaw-store.md §2.3–§2.6), resolved to transcript paths
//! (§1.2–§1.3), written as the reference writes it (§2.7–§2.8) through `session_store::io`.
//!
//! What else lives here:
//! - entry-level writes merge as the reference does ([`merge_entry`], §3.1) and store under the
//!   normalised key ([`SessionStore::upsert`], R2.18); load re-derives the delivery fields
//!   (R2.14), cleans `pluginExtensions` (R2.15) and keeps long skill prompts as blobs beside
//!   the store (R2.21, R2.25);
//! - [`artifacts`](classify): what each file of a sessions directory is (§1.4, R1.13–R1.14);
//! - [`listing`]: the store's rows joined with the files, as `openclaw sessions` lists them (§5,
//!   §6);
//! - [`lifecycle`]: deleting rows and starting new conversations on keys, renaming the
//!   transcripts in place after the store write (§3.3, §3.4, §7 J7.2–J7.6);
//! - [`maintenance`]: `session.maintenance` (§4: what `openclaw sessions cleanup` selects),
//!   applied by renaming instead of deleting (D38);
//! - [`gateway`]: whether a gateway is running (R2.32), which write commands respect (J7.1).
//!
//! Differences from the reference on purpose (docs/DEVIATIONS.md D36): a `sessions.json` that
//! is not a JSON object (invalid JSON, empty, an array, …) is a [`SessionStoreError`] naming the
//! file and byte offset, never read as `{}` and never replaced (R2.3, R2.4); a save refuses when
//! the file changed since it was loaded (mtime, size, or inode), instead of overwriting the
//! other writer's change; the replace keeps the existing file's permission bits and is fsynced.
//!
//! Not done here yet: the writer lock and caches (§2.9), and the single-entry fast path (R2.22), whose
//! output equals the full serialisation done here.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use indexmap::IndexMap;
use session_format::json::{JsObject, JsString, JsValue, JsonError, parse_value};
use session_store::io;

use crate::key::normalize_session_key;

mod artifacts;
mod delivery;
pub mod gateway;
pub mod lifecycle;
pub mod listing;
pub mod maintenance;
mod merge;
mod normalise;
mod paths;
mod plugin_state;
mod resolve;
mod skills;

pub use artifacts::{
    ArchiveReason, ArtifactKind, classify, format_archive_timestamp, parse_archive_name,
    parse_archive_timestamp,
};
pub use merge::{UpdatedAtPolicy, merge_entry, merge_entry_with, rewrite_session_file};
use normalise::{migrate_legacy, normalise_entry};
pub use paths::{
    SessionFileFallbacks, TopicId, transcript_file_name, transcript_path, transcript_path_with,
};
pub use skills::{MAX_PROMPT_BLOB_BYTES, MIN_PROMPT_BLOB_CHARS, skill_prompt_blob_path};

/// The store's file name inside a sessions directory (R1.2).
pub const STORE_FILE_NAME: &str = "sessions.json";

/// Why a session store could not be loaded or saved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionStoreError {
    /// The file is not valid JSON (also: an empty file). The file is left as it is.
    #[error("session store {} is not valid JSON: {source}", path.display())]
    Corrupt {
        /// The store file.
        path: PathBuf,
        /// Byte offset of the error within the file.
        offset: usize,
        /// The parser's error.
        source: JsonError,
    },
    /// The file is valid JSON but its top-level value is not an object (R2.1).
    #[error("session store {} holds {found}, not a JSON object of entries", path.display())]
    NotAnObject {
        /// The store file.
        path: PathBuf,
        /// What the top-level value is: `"an array"`, `"null"`, `"a number"`, ….
        found: &'static str,
    },
    /// The file changed on disk (mtime or size, or it appeared or vanished) between load and
    /// save: nothing was written; reload and apply the change again.
    #[error("session store {} changed since it was loaded; reload and retry", path.display())]
    Changed {
        /// The store file.
        path: PathBuf,
    },
    /// The store was loaded from bytes held elsewhere than in its file
    /// ([`SessionStore::from_bytes_read_only`], e.g. the index of an OpenClaw 2026.8+ SQLite
    /// database): it cannot be saved, and nothing was written.
    #[error(
        "session store {} is read-only: it was read from {origin}, not from that file; nothing \
         was written",
        path.display()
    )]
    ReadOnly {
        /// The store's (virtual) path.
        path: PathBuf,
        /// Where the bytes came from, for messages (e.g. `the SQLite store /s/agent.sqlite`).
        origin: String,
    },
    /// Reading or writing the file failed.
    #[error("session store {}: {source}", path.display())]
    Io {
        /// The store file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// What load-time migration or normalisation changed in memory (R2.8–R2.16); the next save
/// writes these changes, as the reference's next save does.
///
/// Serialised as `{"change": "dropped-entry", "key": …}` or
/// `{"change": "changed-field", "key": …, "field": …}`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "change", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum LoadChange {
    /// The entry under `key` was dropped: it was not an object (R2.9) or its `sessionId` was
    /// not a safe id (R2.10).
    DroppedEntry {
        /// The store key.
        key: String,
    },
    /// A field of the entry under `key` was renamed, removed, trimmed or coerced
    /// (R2.8, R2.10–R2.16, R2.25); the delivery fields re-derived together (R2.14) are reported
    /// once, as `route`.
    ChangedField {
        /// The store key.
        key: String,
        /// The field name as it was in the file (`provider`, `sessionId`, `updatedAt`, …).
        field: &'static str,
    },
}

/// One entry of the store (a SessionEntry, §2.2): every field in the file's order in one
/// [`JsObject`], so unknown fields and key order survive a save byte for byte; the fields this
/// layer relies on have typed accessors. After load, `sessionId` and `sessionFile` are strings
/// when present and `updatedAt` is a finite number ≥ 0 when present (R2.10–R2.12).
#[derive(Clone, Debug, PartialEq)]
pub struct StoreEntry {
    fields: JsObject,
}

impl StoreEntry {
    /// An entry of exactly these fields (not normalised; the save writes them as given).
    pub fn from_fields(fields: JsObject) -> Self {
        Self { fields }
    }

    /// `sessionId`: the current transcript id, if any.
    pub fn session_id(&self) -> Option<&str> {
        self.fields
            .get("sessionId")
            .and_then(|v| v.as_js_string()?.as_str())
    }

    /// `updatedAt`: epoch milliseconds of the last row change, if any.
    pub fn updated_at(&self) -> Option<f64> {
        self.fields.get("updatedAt").and_then(JsValue::as_f64)
    }

    /// `sessionFile`: the transcript path override (R1.11), if any.
    pub fn session_file(&self) -> Option<&str> {
        self.fields
            .get("sessionFile")
            .and_then(|v| v.as_js_string()?.as_str())
    }

    /// Sets `updatedAt` (epoch milliseconds); an existing field keeps its position (R2.20).
    pub fn set_updated_at(&mut self, millis: f64) {
        self.fields.insert("updatedAt", JsValue::Number(millis));
    }

    /// Every field, in the file's order.
    pub fn fields(&self) -> &JsObject {
        &self.fields
    }

    /// Every field, mutable: assignment keeps an existing field's position, a new field goes
    /// last, as in JavaScript (R2.20).
    pub fn fields_mut(&mut self) -> &mut JsObject {
        &mut self.fields
    }
}

/// The file's identity when it was read (`None` when it did not exist): mtime and size, and on
/// Unix the device and inode, so that a replace by rename (what the reference's writer and ours
/// do) is seen even when it keeps the size within one mtime tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
    file_id: (u64, u64),
}

#[cfg(unix)]
fn file_id(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn file_id(_meta: &std::fs::Metadata) -> (u64, u64) {
    (0, 0)
}

/// A loaded `sessions.json`: entries by store key, in the file's order, plus what is needed to
/// save it safely (the path, the bytes read, and the file's mtime and size at load).
#[derive(Clone, Debug)]
pub struct SessionStore {
    path: PathBuf,
    entries: IndexMap<JsString, StoreEntry>,
    changes: Vec<LoadChange>,
    loaded: Option<Vec<u8>>,
    stamp: Option<Stamp>,
    /// `Some(origin)` for a store read from bytes ([`SessionStore::from_bytes_read_only`]):
    /// saving it fails.
    read_only: Option<String>,
}

/// What [`SessionStore::save`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SaveOutcome {
    /// The serialised text equals the file's bytes: nothing was written (R2.23).
    Unchanged,
    /// The file was replaced (or created) with the new text.
    Written,
}

fn stamp_of(path: &Path) -> Result<Option<Stamp>, std::io::Error> {
    match std::fs::metadata(path) {
        Ok(meta) => Ok(Some(Stamp {
            modified: meta.modified().ok(),
            len: meta.len(),
            file_id: file_id(&meta),
        })),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The directory of a store file (R1.4).
fn sessions_dir_of(path: &Path) -> &Path {
    path.parent().unwrap_or_else(|| Path::new("."))
}

fn kind_name(value: &JsValue) -> &'static str {
    match value {
        JsValue::Null => "null",
        JsValue::Bool(_) => "a boolean",
        JsValue::Number(_) => "a number",
        JsValue::String(_) => "a string",
        JsValue::Array(_) => "an array",
        JsValue::Object(_) => "an object",
    }
}

impl SessionStore {
    /// Loads the store at `path` (`<sessionsDir>/sessions.json`, R1.2): a missing file is an
    /// empty store (R2.3); otherwise the file is parsed, legacy fields are migrated (R2.8) and
    /// entries normalised (R2.9–R2.16), with each change recorded; before those, a
    /// `skillsSnapshot.promptRef` gets its blob's text back as `prompt`, or the snapshot is
    /// removed when the blob is missing or does not verify (R2.25),
    /// ([`SessionStore::load_changes`]). Store keys are never rewritten (R2.7). Read-only:
    /// loading never writes.
    ///
    /// # Errors
    /// [`SessionStoreError::Corrupt`] (with the byte offset) for text that is not JSON, also an
    /// empty file; [`SessionStoreError::NotAnObject`] for a top-level array, `null`, number, …;
    /// [`SessionStoreError::Io`] when the file exists but cannot be read;
    /// [`SessionStoreError::Changed`] when it kept changing during three reads in a row.
    pub fn load(path: &Path) -> Result<Self, SessionStoreError> {
        let io_err = |source| SessionStoreError::Io {
            path: path.to_path_buf(),
            source,
        };
        // The mtime and size before and after the read must agree, so that the stamp kept for
        // the save belongs to the bytes read; a writer racing the read makes us read again.
        let mut attempts = 0;
        let (bytes, stamp) = loop {
            let before = stamp_of(path).map_err(io_err)?;
            if before.is_none() {
                return Ok(Self {
                    path: path.to_path_buf(),
                    entries: IndexMap::new(),
                    changes: Vec::new(),
                    loaded: None,
                    stamp: None,
                    read_only: None,
                });
            }
            let bytes = io::read_file(path).map_err(io_err)?;
            let after = stamp_of(path).map_err(io_err)?;
            if before == after {
                break (bytes, after);
            }
            attempts += 1;
            if attempts == 3 {
                return Err(SessionStoreError::Changed {
                    path: path.to_path_buf(),
                });
            }
        };
        let mut store = Self::parse(path, bytes)?;
        store.stamp = stamp;
        Ok(store)
    }

    /// A store read from `bytes` instead of from its file, with every normalisation of
    /// [`SessionStore::load`] (R2.8–R2.16, R2.25): for a store whose index is kept elsewhere,
    /// such as the `session_nodes` of an OpenClaw 2026.8+ SQLite database
    /// (openclaw-sqlite.md §2.13 recipe 1). `path` is where the store would be
    /// (`<sessionsDir>/sessions.json`): transcripts are resolved against its directory. The
    /// store is read-only in memory: [`SessionStore::save`] fails with
    /// [`SessionStoreError::ReadOnly`] and never writes `path`. `origin` names where the bytes
    /// came from, for that error.
    ///
    /// # Errors
    /// As [`SessionStore::load`] for the bytes: [`SessionStoreError::Corrupt`] (with the byte
    /// offset), [`SessionStoreError::NotAnObject`].
    pub fn from_bytes_read_only(
        path: &Path,
        bytes: Vec<u8>,
        origin: &str,
    ) -> Result<Self, SessionStoreError> {
        let mut store = Self::parse(path, bytes)?;
        store.read_only = Some(origin.to_owned());
        Ok(store)
    }

    /// Whether the store was read from bytes and cannot be saved
    /// ([`SessionStore::from_bytes_read_only`]).
    pub fn is_read_only(&self) -> bool {
        self.read_only.is_some()
    }

    /// The store parsed from the bytes of `path`, normalised; no stamp.
    fn parse(path: &Path, bytes: Vec<u8>) -> Result<Self, SessionStoreError> {
        let value = parse_value(&bytes).map_err(|source| SessionStoreError::Corrupt {
            path: path.to_path_buf(),
            offset: source.offset,
            source,
        })?;
        let JsValue::Object(top) = value else {
            return Err(SessionStoreError::NotAnObject {
                path: path.to_path_buf(),
                found: kind_name(&value),
            });
        };
        let mut entries = IndexMap::with_capacity(top.len());
        let mut changes = Vec::new();
        for (key, value) in top.iter() {
            let key_text = key.to_str_lossy().into_owned();
            let JsValue::Object(fields) = value else {
                changes.push(LoadChange::DroppedEntry { key: key_text });
                continue;
            };
            let mut fields = fields.clone();
            skills::hydrate(sessions_dir_of(path), &key_text, &mut fields, &mut changes);
            migrate_legacy(&key_text, &mut fields, &mut changes);
            if normalise_entry(&key_text, &mut fields, &mut changes) {
                entries.insert(key.clone(), StoreEntry { fields });
            } else {
                changes.push(LoadChange::DroppedEntry { key: key_text });
            }
        }
        Ok(Self {
            path: path.to_path_buf(),
            entries,
            changes,
            loaded: Some(bytes),
            stamp: None,
            read_only: None,
        })
    }

    /// The bytes read at load (or last saved); empty when the file did not exist.
    pub fn loaded_bytes(&self) -> &[u8] {
        self.loaded.as_deref().unwrap_or_default()
    }

    /// The store file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The directory the store's transcripts live in: the store file's directory (R1.4).
    pub fn sessions_dir(&self) -> &Path {
        sessions_dir_of(&self.path)
    }

    /// What migration and normalisation changed at load, in file order (empty for a store the
    /// reference wrote).
    pub fn load_changes(&self) -> &[LoadChange] {
        &self.changes
    }

    /// The entries by store key, in the file's order.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = (&JsString, &StoreEntry)> {
        self.entries.iter()
    }

    /// How many entries the store holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the store holds no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entry stored under exactly `key` (no normalisation; see [`SessionStore::resolve`]).
    pub fn get(&self, key: &str) -> Option<&StoreEntry> {
        self.entries.get(&JsString::new(key))
    }

    /// The entry stored under exactly `key`, mutable.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut StoreEntry> {
        self.entries.get_mut(&JsString::new(key))
    }

    /// Sets the entry under exactly `key`: an existing key keeps its position, a new key goes
    /// last (R2.20).
    pub fn insert(&mut self, key: &str, entry: StoreEntry) {
        self.entries.insert(JsString::new(key), entry);
    }

    /// Removes the entry under exactly `key`, keeping the order of the others.
    pub fn remove(&mut self, key: &str) -> Option<StoreEntry> {
        self.entries.shift_remove(&JsString::new(key))
    }

    /// Key resolution for reads and writes (R2.17–R2.18, `resolveSessionStoreEntry`). The
    /// request is trimmed and normalised ([`normalize_session_key`]; a blank request is the
    /// key `""`, which matches a stored `""` or blank key). Candidates, each skipped when it carries a mismatched delivery proof (below):
    /// - the trimmed raw key, when it differs from the normalised one;
    /// - the folded aliases: the normalised key lowercased, and for a thread key needing a
    ///   proof its base lowercased with the thread id kept; for keys needing a proof (Matrix
    ///   rooms, [`requires_folded_alias_proof`](crate::key::requires_folded_alias_proof)) an
    ///   alias counts only when one of its delivery targets (`deliveryContext.to`, `lastTo`,
    ///   `origin.nativeChannelId`, `origin.to`, `groupId`, each cut to start at its first `!`
    ///   or `#`) occurs in the requested base key and, for a thread key, its thread id
    ///   (`deliveryContext.threadId`, `lastThreadId`, `origin.threadId`) is the requested one;
    /// - the exact normalised key;
    /// - every other stored key whose normalised form equals the request's, in file order.
    ///
    /// A delivery proof is mismatched (keys needing a proof only) when the entry has delivery
    /// targets and none occurs in the requested base key, or has a thread id other than the
    /// requested one. For keys needing a proof the exact key wins, else the newest folded
    /// alias, else the trimmed raw key, and then any newer other variant; for every other key
    /// the candidate with the greatest `updatedAt` wins (absent counts as 0; on a tie the
    /// first in the order exact, folded, trimmed raw, file order). `legacy_keys` lists the
    /// matched keys other than the normalised one in the order trimmed raw, folded aliases,
    /// file order. `None` when nothing matches.
    pub fn resolve(&self, requested: &str) -> Option<ResolvedKey<'_>> {
        resolve::resolve(&self.entries, requested)
    }

    /// An entry-level write (R2.18, the reference's `persistResolvedSessionEntry` after
    /// `updateSessionStoreEntry` / `patchSessionEntry`): resolves `requested`
    /// ([`SessionStore::resolve`]), merges `patch` into the winning entry ([`merge_entry_with`]
    /// at `now_ms` with `policy`; a new entry when none matches), stores the result under the
    /// normalised key (in place when that key exists, else last) and removes every legacy key
    /// (the case variants). Returns the key written; `None` (nothing written) for a blank
    /// key. In memory only; [`SessionStore::save`] writes it.
    pub fn upsert(
        &mut self,
        requested: &str,
        patch: &JsObject,
        now_ms: i64,
        policy: UpdatedAtPolicy,
    ) -> Option<String> {
        if normalize_session_key(requested).is_empty() {
            return None;
        }
        let (key, existing, legacy) = match self.resolve(requested) {
            Some(r) => (r.normalized_key, Some(r.entry.clone()), r.legacy_keys),
            None => (normalize_session_key(requested), None, Vec::new()),
        };
        let next = merge_entry_with(existing.as_ref(), patch, now_ms, policy, || {
            uuid::Uuid::new_v4().to_string()
        });
        self.insert(&key, next);
        for legacy_key in legacy {
            self.remove(&legacy_key);
        }
        Some(key)
    }

    /// The transcript of the entry under exactly `key`: [`transcript_path`] in this store's
    /// directory. `None` when there is no such entry or it has no `sessionId`.
    pub fn transcript_of(&self, key: &str) -> Option<PathBuf> {
        let entry = self.get(key)?;
        transcript_path(self.sessions_dir(), entry.session_id()?, entry)
    }

    /// The store as the reference serialises it (R2.20): `JSON.stringify(store, null, 2)`,
    /// two-space indent, `\n` line ends, no trailing newline, keys in insertion order.
    ///
    /// A skill prompt of at least 512 UTF-16 code units is written as its `promptRef` (R2.21);
    /// [`SessionStore::save`] writes the blob.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.projection().0
    }

    /// The serialised text and the skill-prompt blobs it refers to (R2.21, R2.25).
    fn projection(&self) -> (Vec<u8>, Vec<skills::PromptBlob>) {
        let mut top = JsObject::new();
        let mut blobs = Vec::new();
        for (key, entry) in &self.entries {
            let fields = match skills::project(self.sessions_dir(), &entry.fields) {
                Some((projected, blob)) => {
                    if !blobs.contains(&blob) {
                        blobs.push(blob);
                    }
                    projected
                }
                None => entry.fields.clone(),
            };
            top.insert(key.clone(), JsValue::Object(fields));
        }
        (to_pretty_json(&JsValue::Object(top)), blobs)
    }

    /// Saves the store (R2.20–R2.24): serialises it; makes sure of the skill-prompt blobs it
    /// refers to (R2.25: created 0600, or their mtime set when they hold the prompt); when the text equals the bytes loaded,
    /// writes nothing (R2.23); otherwise compares the file's mtime and size (and on Unix its
    /// device and inode) with those at load and, when they match, replaces the file atomically (`session_store::io::atomic_rewrite`:
    /// same-directory temp file, fsync, rename, directory fsync, the file's permission bits
    /// kept) or creates it (`session_store::io::create_new`, mode 0600, its directory made when
    /// missing). After a save the store is "as loaded" again, so a second save needs no reload.
    ///
    /// The compare is made before anything is written and again after the temporary file is
    /// written and synced, immediately before the rename (`session_store::io::
    /// atomic_rewrite_checked`), not under a lock: only a writer that changes the file between
    /// that last compare and the rename itself is not seen; the reference's writer lock
    /// (§2.9) is not taken here.
    ///
    /// # Errors
    /// [`SessionStoreError::Changed`] when the file was changed, created or removed by someone
    /// else since load (nothing is written; reload and retry); [`SessionStoreError::Io`] for a
    /// failed write (the file is as it was).
    pub fn save(&mut self) -> Result<SaveOutcome, SessionStoreError> {
        self.save_with_hook(&mut || {})
    }

    /// [`SessionStore::save`], running `before_check` after the new text is written to the
    /// temporary file and synced, right before the last stamp check and the rename (callers
    /// that interleave with other writers, and tests that play one, see the exact moment).
    ///
    /// # Errors
    /// As [`SessionStore::save`].
    pub fn save_with_hook(
        &mut self,
        before_check: &mut dyn FnMut(),
    ) -> Result<SaveOutcome, SessionStoreError> {
        if let Some(origin) = &self.read_only {
            return Err(SessionStoreError::ReadOnly {
                path: self.path.clone(),
                origin: origin.clone(),
            });
        }
        let (text, blobs) = self.projection();
        let path = self.path.clone();
        let io_err = |source| SessionStoreError::Io {
            path: path.clone(),
            source,
        };
        let now = stamp_of(&self.path).map_err(io_err)?;
        if now != self.stamp {
            return Err(SessionStoreError::Changed { path: path.clone() });
        }
        // The blobs first (the reference writes them right before the rename), also when the
        // store's text is unchanged (R2.23).
        for blob in &blobs {
            skills::ensure_blob(blob).map_err(|source| SessionStoreError::Io {
                path: blob.path.clone(),
                source,
            })?;
        }
        if self.loaded.as_deref() == Some(text.as_slice()) {
            return Ok(SaveOutcome::Unchanged);
        }
        if self.stamp.is_some() {
            // The stamp again once the temporary file is written and synced, immediately
            // before the rename: a change by another writer in the meantime is not lost
            // (only the rename itself is not atomic with this check).
            let mut changed = false;
            let expected = self.stamp;
            let result = io::atomic_rewrite_checked(&self.path, &text, &mut || {
                before_check();
                if stamp_of(&path)? == expected {
                    Ok(())
                } else {
                    changed = true;
                    Err(std::io::Error::other("changed since it was loaded"))
                }
            });
            if changed {
                return Err(SessionStoreError::Changed { path: path.clone() });
            }
            result.map_err(io_err)?;
        } else {
            io::ensure_dir(self.sessions_dir()).map_err(io_err)?;
            match io::create_new(&self.path, &text, None) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    return Err(SessionStoreError::Changed { path: path.clone() });
                }
                Err(e) => return Err(io_err(e)),
            }
        }
        self.stamp = stamp_of(&self.path).map_err(io_err)?;
        self.loaded = Some(text);
        Ok(SaveOutcome::Written)
    }
}

/// The result of [`SessionStore::resolve`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ResolvedKey<'a> {
    /// The requested key trimmed and normalised: the key an entry-level write stores under.
    pub normalized_key: String,
    /// The stored key of the winning entry.
    pub stored_key: String,
    /// The winning entry.
    pub entry: &'a StoreEntry,
    /// Every matched stored key other than the normalised one (trimmed raw key, confirmed
    /// folded aliases, then other case variants in file order): an entry-level write deletes
    /// them (R2.18).
    pub legacy_keys: Vec<String>,
}

/// `JSON.stringify(value, null, 2)` (R2.20): objects and arrays one member a line, indented two
/// spaces a level, `"key": value`, empty ones as `{}` and `[]`; no trailing newline. Numbers
/// and strings as `JSON.stringify` writes them (pi-format.md §1.7).
pub fn to_pretty_json(value: &JsValue) -> Vec<u8> {
    // The conformance normaliser's writer is this exact algorithm; its text is always UTF-8
    // (lone surrogates are written as `\uXXXX` escapes), so the bytes are its bytes.
    session_format::normalize::to_json_string_indented(value, 2).into_bytes()
}
