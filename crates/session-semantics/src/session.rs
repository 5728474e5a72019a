//! [`SemanticSession`]: a `SessionManager` bound to a session key and a store layout, which
//! performs create, open, append, compact, fork, reset, archive and delete and emits the
//! matching lifecycle and transcript events (openclaw-jsonl.md §5.3, §5.4) on an
//! [`EventBus`]. The store crate knows nothing about events; every write goes through the
//! `SessionManager` (and so through `session_store::io`), and the events are emitted after the
//! write returned.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use session_semantics::{EventBus, SemanticSession, SessionKey, StoreLayout};
//! use session_format::json::parse_value;
//!
//! let layout = StoreLayout::new("/tmp/state");
//! let bus = EventBus::new();
//! let _sub = bus.subscribe(|e| println!("{e:?}"));
//! let key: SessionKey = "agent:main:telegram:direct:alice".parse()?;
//! // <root>/agents/main/sessions/telegram_alice.jsonl
//! let mut s = SemanticSession::create(&layout, &key, "/home/dev", &bus)?;
//! s.append_message(parse_value(br#"{"role":"user","content":"hi","timestamp":1}"#)?)?;
//! # Ok(()) }
//! ```

use std::path::{Path, PathBuf};

use session_format::json::JsValue;
use session_store::{AppendError, ForkError, OpenError, SessionManager};
use session_store::{NewSessionOptions, OpenParams, Payload};

use crate::events::{
    EventBus, Lifecycle, LifecycleEvent, ResetReason, SessionTarget, TranscriptEvent,
    next_transcript_version,
};
use crate::fsops;
use crate::key::SessionKey;
use crate::layout::{self, ARCHIVE_DIR_NAME, PathError, StoreLayout};

/// Why [`SemanticSession::create`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CreateSessionError {
    /// The key cannot name a file in the store.
    #[error(transparent)]
    Path(#[from] PathError),
    /// A session file already exists for the key.
    #[error("a session already exists at {path}")]
    Exists {
        /// The file.
        path: PathBuf,
    },
    /// The store could not set the session up.
    #[error(transparent)]
    Store(#[from] OpenError),
}

/// Why [`SemanticSession::open`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenSessionError {
    /// The key or name cannot address a file in the store, or resolves outside it.
    #[error(transparent)]
    Path(#[from] PathError),
    /// No session file exists there.
    #[error("no session file at {path}")]
    NotFound {
        /// The file.
        path: PathBuf,
    },
    /// The store could not open the file.
    #[error(transparent)]
    Store(#[from] OpenError),
}

/// Why [`SemanticSession::fork`] failed. The source session is unchanged (apart from being
/// flushed).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ForkSessionError {
    /// Writing the source's held entries failed.
    #[error("cannot flush the source session before forking")]
    Flush(#[source] AppendError),
    /// The source has no file (nothing to fork from).
    #[error("the session has no file to fork from")]
    NotPersisted,
    /// The child key cannot name a file in the store.
    #[error(transparent)]
    Path(#[from] PathError),
    /// A session already exists for the child key.
    #[error("a session already exists at {path}")]
    Exists {
        /// The file.
        path: PathBuf,
    },
    /// The store's fork failed.
    #[error(transparent)]
    Store(#[from] ForkError),
    /// The forked file could not be moved to the child key's name.
    #[error("cannot move forked session {from} to {to}")]
    Move {
        /// The forked file.
        from: PathBuf,
        /// The key's file.
        to: PathBuf,
        /// The failure.
        #[source]
        source: std::io::Error,
    },
    /// The moved file could not be reopened.
    #[error(transparent)]
    Reopen(OpenError),
}

/// Why [`SemanticSession::reset`], [`SemanticSession::archive`] or
/// [`SemanticSession::delete`] failed. The session file is untouched.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RetireSessionError {
    /// Writing held entries failed (archive only).
    #[error("cannot flush the session before archiving it")]
    Flush(#[source] AppendError),
    /// Another process holds the session's lock file.
    #[error("session file is locked ({lock} exists)")]
    Locked {
        /// The lock file.
        lock: PathBuf,
    },
    /// The session file's name is a symlink to a file outside its directory: it is neither
    /// locked, moved nor deleted through the link (names the link and its target).
    #[error(transparent)]
    OutsideStore(session_store::OutsideStore),
    /// The archive directory is unusable or the move failed.
    #[error("cannot move {from} into the archive")]
    Move {
        /// The session file.
        from: PathBuf,
        /// The failure.
        #[source]
        source: std::io::Error,
    },
    /// The file could not be deleted.
    #[error("cannot delete {path}")]
    Delete {
        /// The session file.
        path: PathBuf,
        /// The failure.
        #[source]
        source: std::io::Error,
    },
    /// The fresh session (reset) could not be set up.
    #[error(transparent)]
    Store(#[from] OpenError),
    /// The fresh session's id was refused as a file name (reset asks for a new generated id,
    /// which is always a valid name; the variant keeps the store's typed error).
    #[error(transparent)]
    NewSession(#[from] session_store::InvalidName),
}

/// A session bound to a key (when it has one), an agent and an event bus.
#[derive(Debug)]
pub struct SemanticSession {
    manager: SessionManager,
    agent_id: String,
    key: Option<SessionKey>,
    /// True when the file is named after the key (reset keeps the name).
    named_by_key: bool,
    bus: EventBus,
}

fn dir_of(path: &Path) -> PathBuf {
    path.parent().map(Path::to_path_buf).unwrap_or_default()
}

impl SemanticSession {
    fn bind(
        manager: SessionManager,
        agent_id: &str,
        key: Option<SessionKey>,
        named_by_key: bool,
        bus: &EventBus,
    ) -> Self {
        SemanticSession {
            manager,
            agent_id: agent_id.to_owned(),
            key,
            named_by_key,
            bus: bus.clone(),
        }
    }

    /// Creates the session of `key` at `<root>/agents/<agent>/sessions/<name for key>` (the
    /// directory is created when missing, see [`StoreLayout::ensure_sessions_dir`]; the file is
    /// written at the first assistant message, as the store does). Emits `created`.
    ///
    /// # Errors
    /// [`CreateSessionError::Path`] (bad agent id, over-long name, directory outside the
    /// store), [`CreateSessionError::Exists`], [`CreateSessionError::Store`].
    pub fn create(
        layout: &StoreLayout,
        key: &SessionKey,
        cwd: &str,
        bus: &EventBus,
    ) -> Result<Self, CreateSessionError> {
        let name = layout::file_name_for_key(key)?;
        layout.ensure_sessions_dir(key.agent_id())?;
        let path = layout.resolve_existing(key.agent_id(), &name)?;
        if std::fs::symlink_metadata(&path).is_ok() {
            return Err(CreateSessionError::Exists { path });
        }
        let manager = SessionManager::open_with(
            &path,
            &OpenParams {
                session_dir: None,
                cwd_override: Some(cwd.to_owned()),
                fallback_cwd: Some(cwd.to_owned()),
            },
        )?;
        let s = Self::bind(manager, key.agent_id(), Some(key.clone()), true, bus);
        s.emit(Lifecycle::Created);
        Ok(s)
    }

    /// Creates a session named the way `SessionManager::create` names one
    /// (`<timestamp>_<session id>.jsonl`) in the agent's sessions directory; `key`, when given,
    /// is carried in the events only. Emits `created`.
    ///
    /// # Errors
    /// [`CreateSessionError::Path`], [`CreateSessionError::Store`].
    pub fn create_unnamed(
        layout: &StoreLayout,
        agent_id: &str,
        key: Option<&SessionKey>,
        cwd: &str,
        bus: &EventBus,
    ) -> Result<Self, CreateSessionError> {
        let dir = layout.ensure_sessions_dir(agent_id)?;
        let manager = SessionManager::create(cwd, Some(&dir))?;
        let s = Self::bind(manager, agent_id, key.cloned(), false, bus);
        s.emit(Lifecycle::Created);
        Ok(s)
    }

    /// Opens the existing session of `key`. Emits `resumed`.
    ///
    /// # Errors
    /// [`OpenSessionError::Path`] (including a file reached through a symlink out of the
    /// sessions directory), [`OpenSessionError::NotFound`], [`OpenSessionError::Store`].
    pub fn open(
        layout: &StoreLayout,
        key: &SessionKey,
        bus: &EventBus,
    ) -> Result<Self, OpenSessionError> {
        let name = layout::file_name_for_key(key)?;
        let mut s = Self::open_file(layout, key.agent_id(), &name, bus)?;
        s.key = Some(key.clone());
        Ok(s)
    }

    /// Opens an existing session file of an agent by name; the key is the one the name encodes,
    /// if any. Emits `resumed`.
    ///
    /// # Errors
    /// As [`SemanticSession::open`].
    pub fn open_file(
        layout: &StoreLayout,
        agent_id: &str,
        name: &str,
        bus: &EventBus,
    ) -> Result<Self, OpenSessionError> {
        let path = match layout.resolve_existing(agent_id, name) {
            Ok(p) => p,
            Err(PathError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                return Err(OpenSessionError::NotFound {
                    path: layout.resolve_file(agent_id, name)?,
                });
            }
            Err(e) => return Err(e.into()),
        };
        match std::fs::metadata(&path) {
            Ok(m) if m.is_file() => {}
            _ => return Err(OpenSessionError::NotFound { path }),
        }
        let manager = SessionManager::open(&path, None, None)?;
        let key = layout::key_for_file_name(agent_id, name);
        let named = key.is_some();
        let s = Self::bind(manager, agent_id, key, named, bus);
        s.emit(Lifecycle::Resumed);
        Ok(s)
    }

    /// The session key, when known.
    pub fn key(&self) -> Option<&SessionKey> {
        self.key.as_ref()
    }

    /// The agent.
    pub fn agent_id(&self) -> &str {
        &self.agent_id
    }

    /// The session id.
    pub fn session_id(&self) -> &str {
        self.manager.get_session_id()
    }

    /// The session file.
    pub fn session_file(&self) -> Option<&Path> {
        self.manager.get_session_file()
    }

    /// The underlying manager (reads only: writes go through this type so events fire).
    pub fn manager(&self) -> &SessionManager {
        &self.manager
    }

    /// Gives the manager back (no further events).
    pub fn into_manager(self) -> SessionManager {
        self.manager
    }

    /// The bus events go to.
    pub fn bus(&self) -> &EventBus {
        &self.bus
    }

    /// Who events name.
    pub fn target(&self) -> SessionTarget {
        SessionTarget {
            agent_id: self.agent_id.clone(),
            session_id: self.manager.get_session_id().to_owned(),
            session_key: self.key.as_ref().map(ToString::to_string),
            session_file: self.manager.get_session_file().map(Path::to_path_buf),
        }
    }

    fn emit(&self, lifecycle: Lifecycle) {
        self.bus.emit_lifecycle(LifecycleEvent {
            target: self.target(),
            parent_session_key: self
                .key
                .as_ref()
                .and_then(SessionKey::parent)
                .map(|k| k.to_string()),
            lifecycle,
        });
    }

    fn emit_appended(&self, id: &str) {
        let entry = self.manager.get_entry(id);
        let entry_type = entry
            .as_ref()
            .map_or("unknown", |e| e.entry_type().as_str())
            .to_owned();
        let role = entry.and_then(|e| e.raw_value().ok()).and_then(|v| {
            v.get("message")
                .and_then(|m| m.get("role"))
                .and_then(|r| r.as_str_lossy().map(|s| s.into_owned()))
        });
        self.bus.emit_transcript(TranscriptEvent {
            target: self.target(),
            entry_id: id.to_owned(),
            entry_type,
            role,
            version: next_transcript_version(),
            persisted: self.manager.is_flushed(),
        });
    }

    /// Appends a message and emits a transcript event. Returns the entry id.
    ///
    /// # Errors
    /// The store's [`AppendError`] (no event is emitted).
    pub fn append_message(&mut self, message: impl Payload) -> Result<String, AppendError> {
        let id = self.manager.append_message(message)?;
        self.emit_appended(&id);
        Ok(id)
    }

    /// Runs any append of the manager (`append_model_change`, `append_custom_entry`, …) and
    /// emits a transcript event for the entry it returns.
    ///
    /// # Errors
    /// The append's error (no event is emitted).
    pub fn append_with<F>(&mut self, append: F) -> Result<String, AppendError>
    where
        F: FnOnce(&mut SessionManager) -> Result<String, AppendError>,
    {
        let id = append(&mut self.manager)?;
        self.emit_appended(&id);
        Ok(id)
    }

    /// Appends a compaction entry; emits the transcript event, then `compacted`.
    ///
    /// # Errors
    /// The store's [`AppendError`].
    pub fn compact(
        &mut self,
        summary: &str,
        first_kept_entry_id: &str,
        tokens_before: f64,
        details: Option<JsValue>,
    ) -> Result<String, AppendError> {
        let id = self.manager.append_compaction(
            summary,
            first_kept_entry_id,
            tokens_before,
            details,
            None,
        )?;
        self.emit_appended(&id);
        self.emit(Lifecycle::Compacted {
            entry_id: id.clone(),
            first_kept_entry_id: first_kept_entry_id.to_owned(),
            tokens_before,
        });
        Ok(id)
    }

    /// Writes held entries now (see `SessionManager::flush`).
    ///
    /// # Errors
    /// The store's [`AppendError`].
    pub fn flush(&mut self) -> Result<(), AppendError> {
        self.manager.flush()
    }

    /// Forks this session (flushed first, so the fork sees every entry) into a new session:
    /// named after `child_key` when given (the key's agent directory), else
    /// `<timestamp>_<id>.jsonl` next to this one. The child's header names this file as
    /// `parentSession`. Emits `forked` for the child.
    ///
    /// # Errors
    /// [`ForkSessionError`].
    pub fn fork(
        &mut self,
        layout: &StoreLayout,
        child_key: Option<&SessionKey>,
    ) -> Result<SemanticSession, ForkSessionError> {
        self.manager.flush().map_err(ForkSessionError::Flush)?;
        let source = self
            .manager
            .get_session_file()
            .map(Path::to_path_buf)
            .ok_or(ForkSessionError::NotPersisted)?;
        let cwd = self.manager.get_cwd().to_owned();
        let parent = self.target();
        let child = match child_key {
            None => {
                let dir = dir_of(&source);
                let m = SessionManager::fork_from(&source, &cwd, Some(&dir))?;
                Self::bind(m, &self.agent_id, None, false, &self.bus)
            }
            Some(key) => {
                let name = layout::file_name_for_key(key)?;
                let dir = layout.ensure_sessions_dir(key.agent_id())?;
                let target = layout.resolve_existing(key.agent_id(), &name)?;
                if std::fs::symlink_metadata(&target).is_ok() {
                    return Err(ForkSessionError::Exists { path: target });
                }
                let forked = SessionManager::fork_from(&source, &cwd, Some(&dir))?;
                let from = forked
                    .get_session_file()
                    .map(Path::to_path_buf)
                    .unwrap_or_default();
                drop(forked);
                fsops::move_file(&from, &target).map_err(|source| ForkSessionError::Move {
                    from: from.clone(),
                    to: target.clone(),
                    source,
                })?;
                let m = SessionManager::open(&target, None, Some(&cwd))
                    .map_err(ForkSessionError::Reopen)?;
                Self::bind(m, key.agent_id(), Some(key.clone()), true, &self.bus)
            }
        };
        child.emit(Lifecycle::Forked { parent });
        Ok(child)
    }

    /// Takes the session file's write lock for a move or delete ([`fsops::lock_for_retire`]):
    /// [`RetireSessionError::Locked`] when the session is in use.
    fn check_unlocked(&self) -> Result<Option<fsops::RetireLocks>, RetireSessionError> {
        match self.manager.get_session_file() {
            Some(file) => fsops::lock_for_retire(file).map_err(|refusal| match refusal {
                fsops::RetireRefusal::Locked(lock) => RetireSessionError::Locked { lock },
                fsops::RetireRefusal::OutsideStore(o) => RetireSessionError::OutsideStore(o),
            }),
            None => Ok(None),
        }
    }

    fn file_on_disk(&self) -> Option<PathBuf> {
        self.manager
            .get_session_file()
            .filter(|p| std::fs::symlink_metadata(p).is_ok())
            .map(Path::to_path_buf)
    }

    fn move_to_archive(&self, file: &Path) -> Result<PathBuf, RetireSessionError> {
        let move_err = |source| RetireSessionError::Move {
            from: file.to_path_buf(),
            source,
        };
        let archive = dir_of(file).join(ARCHIVE_DIR_NAME);
        fsops::ensure_real_dir(&archive).map_err(move_err)?;
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let free = fsops::free_name(&archive, &name, &[]).ok_or_else(|| {
            move_err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "no free archive name",
            ))
        })?;
        let dest = archive.join(free);
        fsops::move_file(file, &dest).map_err(move_err)?;
        Ok(dest)
    }

    /// Replaces this session by a fresh one under the same key: the current file (when
    /// written) moves into `archive/`, and a new session (new id) starts at the same name (or,
    /// for a session named by timestamp and id, at a new such name). Held entries of an
    /// unwritten session are dropped, as the reference's new session drops them. Emits `reset`
    /// for the new session. Returns where the old file went.
    ///
    /// # Errors
    /// [`RetireSessionError::Locked`], [`RetireSessionError::Move`],
    /// [`RetireSessionError::Store`].
    pub fn reset(&mut self, cause: ResetReason) -> Result<Option<PathBuf>, RetireSessionError> {
        let _guard = self.check_unlocked()?;
        let previous = self.target();
        let archived_to = match self.file_on_disk() {
            Some(file) => Some(self.move_to_archive(&file)?),
            None => None,
        };
        if self.named_by_key
            && let Some(path) = self.manager.get_session_file().map(Path::to_path_buf)
        {
            let cwd = self.manager.get_cwd().to_owned();
            self.manager = SessionManager::open_with(
                &path,
                &OpenParams {
                    session_dir: None,
                    cwd_override: Some(cwd.clone()),
                    fallback_cwd: Some(cwd),
                },
            )?;
        } else {
            self.manager.new_session(NewSessionOptions::default())?;
        }
        self.emit(Lifecycle::Reset {
            cause,
            previous,
            archived_to: archived_to.clone(),
        });
        Ok(archived_to)
    }

    /// Flushes, then moves the session file into `<sessions>/archive/` (another free name
    /// `<stem>~N.jsonl` when the name is taken). Emits `archived`. Returns the new path.
    ///
    /// # Errors
    /// [`RetireSessionError::Flush`], [`RetireSessionError::Locked`],
    /// [`RetireSessionError::Move`]; the file stays in place.
    pub fn archive(mut self) -> Result<PathBuf, RetireSessionError> {
        self.manager.flush().map_err(RetireSessionError::Flush)?;
        let _guard = self.check_unlocked()?;
        let file = self
            .file_on_disk()
            .ok_or_else(|| RetireSessionError::Move {
                from: self
                    .manager
                    .get_session_file()
                    .map(Path::to_path_buf)
                    .unwrap_or_default(),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "the session has no file",
                ),
            })?;
        let dest = self.move_to_archive(&file)?;
        self.emit(Lifecycle::Archived {
            archived_to: dest.clone(),
        });
        Ok(dest)
    }

    /// Deletes the session file (when written). Emits `deleted`.
    ///
    /// # Errors
    /// [`RetireSessionError::Locked`], [`RetireSessionError::Delete`].
    pub fn delete(self) -> Result<(), RetireSessionError> {
        let _guard = self.check_unlocked()?;
        if let Some(file) = self.file_on_disk() {
            fsops::delete_file(&file).map_err(|source| RetireSessionError::Delete {
                path: file.clone(),
                source,
            })?;
        }
        self.emit(Lifecycle::Deleted);
        Ok(())
    }
}
