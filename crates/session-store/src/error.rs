//! Error types, one enum per operation (rust-style.md "Errors"). Content problems name the file,
//! the 1-based line number and the byte offset of the row; "not found" errors use the reference's
//! exact text (`Entry <id> not found`).

use std::io;
use std::path::PathBuf;

use session_format::json::{JsonError, SerdeError};

use crate::identity::OutsideStore;
use crate::lock::LockError;

/// Where a row came from: the file, its 1-based line number and the byte offset of its first
/// byte. Rows created in this process have no line.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct RowLocation {
    /// The session file, when the manager has one.
    pub file: Option<PathBuf>,
    /// 1-based line number in the file as it was read.
    pub line: Option<usize>,
    /// Byte offset of the row's first byte in the file as it was read.
    pub byte_offset: Option<usize>,
}

impl std::fmt::Display for RowLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.file {
            Some(p) => write!(f, "{}", p.display())?,
            None => f.write_str("<in memory>")?,
        }
        match (self.line, self.byte_offset) {
            (Some(l), Some(o)) => write!(f, ", line {l}, byte {o}"),
            _ => f.write_str(", new row"),
        }
    }
}

/// A row already validated when it was read could not be parsed again (this indicates a bug:
/// rows are validated once when read and new rows are serialised by this crate).
#[derive(Debug, thiserror::Error)]
#[error("{at}: stored row no longer parses")]
pub struct ReadError {
    /// The row.
    pub at: RowLocation,
    /// The JSON error.
    #[source]
    pub source: JsonError,
}

/// Why [`crate::SessionManager::open`] (and the other factories that load a file) failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The file exists but could not be read.
    #[error("cannot read session file {path}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The file does not exist (read-only open only; a writable open binds a fresh session to
    /// the path instead).
    #[error("session file {path} does not exist")]
    NotFound {
        /// The file.
        path: PathBuf,
    },
    /// The session directory could not be created.
    #[error("cannot create session directory {path}")]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The byte-exact backup of a file with a corrupt header could not be written; the file
    /// was left untouched.
    #[error("cannot back up {path} (corrupt header) to {backup}")]
    Backup {
        /// The session file.
        path: PathBuf,
        /// The backup path.
        backup: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// A repair rewrite (migration, corrupt-header recovery, empty-file header) failed; the
    /// original file is untouched (writes are atomic).
    #[error("cannot rewrite session file {path}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The session write lock ([`crate::SessionManager::set_write_lock`]) could not be taken:
    /// another holder kept it for the whole timeout ([`LockError::Timeout`], naming the lock
    /// file and its owner's pid), a live holder has held it too long ([`LockError::Stale`]),
    /// or the lock file could not be created. Nothing was written and the file is untouched.
    #[error("cannot take the write lock of session file {}", path.display())]
    Lock {
        /// The session file.
        path: PathBuf,
        /// The lock failure (lock path, owner pid and liveness).
        #[source]
        source: LockError,
    },
    /// The session file's name is a symlink to a file outside its store root (the directory
    /// holding the name, [`crate::identity`]): nothing was locked or written and the target is
    /// untouched. Names the link, its target and the root.
    #[error(transparent)]
    OutsideStore(OutsideStore),
    /// The file changed between the `stat`s before and after every one of the load's attempts
    /// (another writer kept rewriting it). The reference's text.
    #[error("session file changed repeatedly while loading: {}", path.display())]
    ChangedWhileLoading {
        /// The file.
        path: PathBuf,
    },
    /// A row could not be parsed again for migration (a bug: rows are validated when read).
    #[error("{at}: cannot re-read row for migration")]
    Reread {
        /// The row.
        at: RowLocation,
        /// The JSON error.
        #[source]
        source: JsonError,
    },
}

/// Why an append failed. A failed append leaves the manager's in-memory state as it was
/// before the call (no row, leaf and append cursor unchanged), so it may be retried.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AppendError {
    /// `appendLabelChange` on an id that is not an entry.
    #[error("Entry {id} not found")]
    EntryNotFound {
        /// The unknown target id.
        id: String,
    },
    /// The caller's payload could not be turned into a JSON value.
    #[error("cannot serialise payload")]
    Serialize {
        /// The error.
        #[source]
        source: SerdeError,
    },
    /// `append_message(null)`: the reference throws (`Cannot read properties of null (reading
    /// 'role')`) before changing anything, and so does this crate.
    #[error("message must not be null (nothing was appended)")]
    NullMessage,
    /// The manager was opened read-only.
    #[error("session {path} is open read-only")]
    ReadOnly {
        /// The file.
        path: PathBuf,
    },
    /// The line or the full rewrite could not be written.
    #[error("cannot write session file {path}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The session write lock ([`crate::SessionManager::set_write_lock`]) could not be taken:
    /// another holder kept it for the whole timeout ([`LockError::Timeout`], naming the lock
    /// file and its owner's pid), a live holder has held it too long ([`LockError::Stale`]),
    /// or the lock file could not be created. Nothing was written; the manager is unchanged.
    #[error("cannot take the write lock of session file {}", path.display())]
    Lock {
        /// The session file.
        path: PathBuf,
        /// The lock failure (lock path, owner pid and liveness).
        #[source]
        source: LockError,
    },
    /// The session file's name is a symlink to a file outside its store root (the directory
    /// holding the name, [`crate::identity`]): nothing was locked or written and the target is
    /// untouched. Names the link, its target and the root.
    #[error(transparent)]
    OutsideStore(OutsideStore),
    /// The path now holds another file than the one this manager read or last wrote (another
    /// device or inode: replaced by a rename, or deleted and created again), or it was replaced
    /// during the write. Nothing was written to the file now at the path; appending there would
    /// extend a file this manager never read (possibly a headerless one). To continue, reopen
    /// the session ([`crate::SessionManager::open`]), which reads the new file, or write this
    /// manager's whole session over it with [`crate::SessionManager::rewrite_file`] (the other
    /// file is backed up first, docs/DEVIATIONS.md D11).
    #[error(
        "session file {} was replaced by another file since this manager read it; nothing was written to it (reopen the session to continue)",
        path.display()
    )]
    FileReplaced {
        /// The file.
        path: PathBuf,
    },
    /// The file this manager read or last wrote no longer exists at its path. Nothing was
    /// written (an append would create a file without a header). To continue, write the whole
    /// session there again with [`crate::SessionManager::rewrite_file`], or reopen the path
    /// ([`crate::SessionManager::open`] of a missing path binds a fresh, empty session to it).
    #[error(
        "session file {} was deleted since this manager read it; nothing was written (reopen the session to continue)",
        path.display()
    )]
    FileDeleted {
        /// The file.
        path: PathBuf,
    },
    /// Another writer appended entries since this manager last read or wrote the file, and
    /// they start another branch: they do not descend from this manager's leaf, or they end
    /// in more than one tip (docs/DEVIATIONS.md D30; [`crate::foreign`]). Nothing was written;
    /// the other writer's lines are adopted (they show in `get_entries` and `get_tree`), the
    /// leaf and append cursor are unchanged, and every further append fails the same way until
    /// the leaf is moved ([`crate::SessionManager::branch`] to one of `tips`, or back to
    /// `leaf` to add a branch there deliberately) or
    /// [`crate::ForeignAppendPolicy::AppendOnOwnLeaf`] is chosen
    /// ([`crate::SessionManager::set_foreign_append_policy`]).
    #[error(
        "session file {}: another writer appended a branch this manager's leaf {} is not on (tips: {}); nothing was written (branch to a tip, or choose ForeignAppendPolicy::AppendOnOwnLeaf)",
        path.display(),
        leaf.as_deref().unwrap_or("(none)"),
        tips.join(", ")
    )]
    Diverged {
        /// The file.
        path: PathBuf,
        /// This manager's leaf (lossy text), `None` when it has none.
        leaf: Option<String>,
        /// The tips the other writer's entries end in (lossy text, file order): entries of
        /// theirs without children other than side appends.
        tips: Vec<String>,
    },
    /// A built row did not classify as an entry (a bug in this crate).
    #[error("internal error: {what}")]
    Internal {
        /// What went wrong.
        what: &'static str,
    },
}

impl AppendError {
    /// The lock failure, for [`AppendError::Lock`].
    pub fn lock_error(&self) -> Option<&LockError> {
        match self {
            AppendError::Lock { source, .. } => Some(source),
            _ => None,
        }
    }

    /// [`AppendError::Write`], or [`AppendError::OutsideStore`] when `source` is that refusal.
    pub(crate) fn write(path: PathBuf, source: io::Error) -> Self {
        match OutsideStore::find(&source) {
            Some(o) => AppendError::OutsideStore(o.clone()),
            None => AppendError::Write { path, source },
        }
    }

    /// [`AppendError::Lock`], or [`AppendError::OutsideStore`] when the lock refused a link
    /// out of the store.
    pub(crate) fn lock(path: PathBuf, source: LockError) -> Self {
        match source {
            LockError::OutsideStore(o) => AppendError::OutsideStore(o),
            source => AppendError::Lock { path, source },
        }
    }
}

impl OpenError {
    /// [`OpenError::Write`], or [`OpenError::OutsideStore`] when `source` is that refusal.
    pub(crate) fn write(path: PathBuf, source: io::Error) -> Self {
        match OutsideStore::find(&source) {
            Some(o) => OpenError::OutsideStore(o.clone()),
            None => OpenError::Write { path, source },
        }
    }

    /// [`OpenError::Lock`], or [`OpenError::OutsideStore`] for a link out of the store.
    pub(crate) fn lock(path: PathBuf, source: LockError) -> Self {
        match source {
            LockError::OutsideStore(o) => OpenError::OutsideStore(o),
            source => OpenError::Lock { path, source },
        }
    }
}

impl BranchError {
    /// [`BranchError::Write`], or [`BranchError::OutsideStore`] when `source` is that refusal.
    pub(crate) fn write(path: PathBuf, source: io::Error) -> Self {
        match OutsideStore::find(&source) {
            Some(o) => BranchError::OutsideStore(o.clone()),
            None => BranchError::Write { path, source },
        }
    }

    /// [`BranchError::Lock`], or [`BranchError::OutsideStore`] for a link out of the store.
    pub(crate) fn lock(path: PathBuf, source: LockError) -> Self {
        match source {
            LockError::OutsideStore(o) => BranchError::OutsideStore(o),
            source => BranchError::Lock { path, source },
        }
    }
}

impl RemoveError {
    /// [`RemoveError::Write`], or [`RemoveError::OutsideStore`] when `source` is that refusal.
    pub(crate) fn write(path: PathBuf, source: io::Error) -> Self {
        match OutsideStore::find(&source) {
            Some(o) => RemoveError::OutsideStore(o.clone()),
            None => RemoveError::Write { path, source },
        }
    }

    /// [`RemoveError::Lock`], or [`RemoveError::OutsideStore`] for a link out of the store.
    pub(crate) fn lock(path: PathBuf, source: LockError) -> Self {
        match source {
            LockError::OutsideStore(o) => RemoveError::OutsideStore(o),
            source => RemoveError::Lock { path, source },
        }
    }
}

/// Why `branch`, `branch_with_summary` or `create_branched_session` failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BranchError {
    /// The id is neither an entry nor an opaque row with a canonical ancestor.
    #[error("Entry {id} not found")]
    EntryNotFound {
        /// The unknown id.
        id: String,
    },
    /// The manager was opened read-only.
    #[error("session {path} is open read-only")]
    ReadOnly {
        /// The file.
        path: PathBuf,
    },
    /// Writing the summary entry or the branched session failed.
    #[error("cannot write session file {path}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The session write lock ([`crate::SessionManager::set_write_lock`]) could not be taken:
    /// another holder kept it for the whole timeout ([`LockError::Timeout`], naming the lock
    /// file and its owner's pid), a live holder has held it too long ([`LockError::Stale`]),
    /// or the lock file could not be created. Nothing was written.
    #[error("cannot take the write lock of session file {}", path.display())]
    Lock {
        /// The session file.
        path: PathBuf,
        /// The lock failure (lock path, owner pid and liveness).
        #[source]
        source: LockError,
    },
    /// The session file's name is a symlink to a file outside its store root (the directory
    /// holding the name, [`crate::identity`]): nothing was locked or written and the target is
    /// untouched. Names the link, its target and the root.
    #[error(transparent)]
    OutsideStore(OutsideStore),
    /// The summary payload could not be serialised.
    #[error("cannot serialise payload")]
    Serialize {
        /// The error.
        #[source]
        source: SerdeError,
    },
    /// A stored row could not be re-read.
    #[error(transparent)]
    Read(#[from] ReadError),
}

impl From<AppendError> for BranchError {
    fn from(e: AppendError) -> Self {
        match e {
            AppendError::EntryNotFound { id } => BranchError::EntryNotFound { id },
            AppendError::ReadOnly { path } => BranchError::ReadOnly { path },
            AppendError::Write { path, source } => BranchError::Write { path, source },
            AppendError::Lock { path, source } => BranchError::Lock { path, source },
            AppendError::OutsideStore(o) => BranchError::OutsideStore(o),
            AppendError::Serialize { source } => BranchError::Serialize { source },
            AppendError::FileReplaced { path } => BranchError::Write {
                source: io::Error::other(AppendError::FileReplaced { path: path.clone() }),
                path,
            },
            AppendError::FileDeleted { path } => BranchError::Write {
                source: io::Error::new(
                    io::ErrorKind::NotFound,
                    AppendError::FileDeleted { path: path.clone() },
                ),
                path,
            },
            AppendError::Diverged { path, leaf, tips } => BranchError::Write {
                source: io::Error::other(AppendError::Diverged {
                    path: path.clone(),
                    leaf,
                    tips,
                }),
                path,
            },
            AppendError::NullMessage => BranchError::Write {
                path: PathBuf::new(),
                source: io::Error::other("message must not be null"),
            },
            AppendError::Internal { what } => BranchError::Write {
                path: PathBuf::new(),
                source: io::Error::other(what),
            },
        }
    }
}

/// Why `fork_from` failed. No file is left behind in any case.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ForkError {
    /// The source is missing, empty, or its first parsed line is not a readable header.
    #[error("Cannot fork: source session file is empty or invalid: {}", path.display())]
    InvalidSource {
        /// The source path as given.
        path: PathBuf,
    },
    /// The source could not be read.
    #[error("cannot read fork source {path}")]
    Read {
        /// The source.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The new session file could not be written.
    #[error("cannot write forked session {path}")]
    Write {
        /// The new file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// Migrating the source failed.
    #[error(transparent)]
    Open(#[from] OpenError),
}

/// Why `remove_trailing_entries` failed (after the in-memory change).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RemoveError {
    /// The manager was opened read-only.
    #[error("session {path} is open read-only")]
    ReadOnly {
        /// The file.
        path: PathBuf,
    },
    /// A stored row could not be re-read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The full rewrite failed.
    #[error("cannot rewrite session file {path}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The session write lock ([`crate::SessionManager::set_write_lock`]) could not be taken:
    /// another holder kept it for the whole timeout ([`LockError::Timeout`], naming the lock
    /// file and its owner's pid), a live holder has held it too long ([`LockError::Stale`]),
    /// or the lock file could not be created. Nothing was written, and the session in memory is
    /// left as it was.
    #[error("cannot take the write lock of session file {}", path.display())]
    Lock {
        /// The session file.
        path: PathBuf,
        /// The lock failure (lock path, owner pid and liveness).
        #[source]
        source: LockError,
    },
    /// The session file's name is a symlink to a file outside its store root (the directory
    /// holding the name, [`crate::identity`]): nothing was locked or written and the target is
    /// untouched. Names the link, its target and the root.
    #[error(transparent)]
    OutsideStore(OutsideStore),
}

/// Why `build_session_context` failed: a `message` row on the branch has no usable `message`
/// object (OpenClaw 2026.6.11 throws a `TypeError` there; FINDINGS e).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ContextError {
    /// The row's `message` is `null` or missing.
    #[error("{at}: message entry {id} has {} message", if *.missing { "no" } else { "a null" })]
    InvalidMessage {
        /// The entry id.
        id: String,
        /// `true` when the `message` key is absent, `false` when it is `null`.
        missing: bool,
        /// The row.
        at: RowLocation,
    },
    /// A stored row could not be re-read.
    #[error(transparent)]
    Read(#[from] ReadError),
}

/// Why `get_session_name` failed: the latest `session_info` row has a `name` that is neither a
/// string nor null/absent (OpenClaw 2026.6.11 throws a `TypeError` there; FINDINGS e).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NameError {
    /// The `name` is a number, boolean, array or object.
    #[error("{at}: session_info entry {id} has a non-string name")]
    NonStringName {
        /// The entry id.
        id: String,
        /// The row.
        at: RowLocation,
    },
    /// A stored row could not be re-read.
    #[error(transparent)]
    Read(#[from] ReadError),
}

/// Why listing sessions failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ListError {
    /// The directory exists but could not be read.
    #[error("cannot read session directory {path}")]
    ReadDir {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
}

/// Why [`crate::SessionInfo::all_messages_text`] could not give a listed session's text.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MessagesTextError {
    /// The session's file could not be read again.
    #[error("cannot read session file {path}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The file is no longer one the listing reports (its first parsed line is not a session
    /// header, or the reference's list would skip it).
    #[error("{path} is no longer a listable session")]
    NotListable {
        /// The file.
        path: PathBuf,
    },
}
