//! Error types, one enum per operation (rust-style.md "Errors"); each converts with `?` into
//! the umbrella [`crate::Error`]. Content problems name the file, the 1-based line
//! number and the byte offset of the row; "not found" errors use the reference's exact text
//! (`Entry <id> not found`).
//!
//! Every operation that writes a session file fails the same three ways, carried by shared
//! types that sit inside the operation's enum through `#[from]`: the write itself
//! ([`WriteFailure`], in the `Write` variant), the session write lock ([`LockFailure`], in
//! `Lock`), and a name that is a symlink out of its store ([`OutsideStore`], in
//! `OutsideStore`). Each carries the session file, so `?` converts it.

use std::io;
use std::path::PathBuf;

use session_format::json::{JsonError, SerdeError};

use crate::identity::OutsideStore;
use crate::lock::LockError;

/// A write of a session file that failed: the file and the I/O error (a line append, a full
/// rewrite, a repair rewrite on open, the first write of a branched or forked session). It is
/// the `Write` variant of each writing operation's error ([`OpenError::Write`],
/// [`AppendError::Write`], [`BranchError::Write`], [`RemoveError::Write`],
/// [`ForkError::Write`]), which names the file; its text and its
/// [`source`](std::error::Error::source) are the I/O error's (as `io::Error` does for the
/// error it wraps), so an error chain shows the I/O error once.
#[derive(Debug)]
#[non_exhaustive]
pub struct WriteFailure {
    /// The session file written.
    pub path: PathBuf,
    /// The I/O error.
    pub error: io::Error,
}

impl WriteFailure {
    /// The failure of a write of `path`.
    pub fn new(path: impl Into<PathBuf>, error: io::Error) -> Self {
        WriteFailure {
            path: path.into(),
            error,
        }
    }

    /// The I/O error's kind (e.g. [`io::ErrorKind::PermissionDenied`]).
    pub fn kind(&self) -> io::ErrorKind {
        self.error.kind()
    }
}

impl std::fmt::Display for WriteFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for WriteFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.error.source()
    }
}

/// The session write lock ([`crate::SessionManager::set_write_lock`]) of a session file could
/// not be taken: the file and the lock failure. It is the `Lock` variant of each writing
/// operation's error ([`OpenError::Lock`], [`AppendError::Lock`], [`BranchError::Lock`],
/// [`RemoveError::Lock`]), which names the file; its text and its
/// [`source`](std::error::Error::source) are the [`LockError`]'s. The lock error is boxed: it
/// is the largest part of every writing operation's error, which stays small that way (and so
/// does [`crate::Error`]).
#[derive(Debug)]
#[non_exhaustive]
pub struct LockFailure {
    /// The session file.
    pub path: PathBuf,
    /// The lock failure (lock path, owner pid and liveness).
    pub error: Box<LockError>,
}

impl LockFailure {
    /// The failure to lock `path`.
    pub fn new(path: impl Into<PathBuf>, error: LockError) -> Self {
        LockFailure {
            path: path.into(),
            error: Box::new(error),
        }
    }
}

impl std::fmt::Display for LockFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for LockFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.error)
    }
}

/// A failed write before it becomes the writing operation's error: each case goes into that
/// error's variant of the same name through its `#[from]` (`?` converts).
#[derive(Debug)]
pub(crate) enum Failure {
    /// The write itself.
    Write(WriteFailure),
    /// The session write lock.
    Lock(LockFailure),
    /// The name is a symlink out of its store root (found in the I/O or the lock error).
    OutsideStore(OutsideStore),
    /// A judged full write ([`crate::foreign`]) found another writer's branch
    /// ([`AppendError::Diverged`]): nothing was written. An operation without that variant
    /// reports it as a [`WriteFailure`] of the file wrapping it.
    Diverged(Box<AppendError>),
}

impl Failure {
    /// The write of `path` failed with `error`: [`Failure::OutsideStore`] when `error` is that
    /// refusal, else [`Failure::Write`].
    pub(crate) fn io(path: impl Into<PathBuf>, error: io::Error) -> Self {
        match OutsideStore::find(&error) {
            Some(o) => Failure::OutsideStore(o.clone()),
            None => Failure::Write(WriteFailure::new(path, error)),
        }
    }

    /// The lock of `path` could not be taken: [`Failure::OutsideStore`] when the lock refused a
    /// link out of the store, else [`Failure::Lock`].
    pub(crate) fn lock(path: impl Into<PathBuf>, error: LockError) -> Self {
        match error {
            LockError::OutsideStore(o) => Failure::OutsideStore(o),
            error => Failure::Lock(LockFailure::new(path, error)),
        }
    }

    /// The write of `path` was refused because another writer's lines start another branch.
    pub(crate) fn diverged(error: AppendError) -> Self {
        Failure::Diverged(Box::new(error))
    }
}

/// `From<Failure>` for the writing operations' errors that have no `Diverged` variant: each
/// case through the variant's `#[from]`, a divergence as a write failure wrapping it.
macro_rules! from_failure {
    ($($op:ident),+) => {$(
        impl From<Failure> for $op {
            fn from(f: Failure) -> Self {
                match f {
                    Failure::Write(w) => w.into(),
                    Failure::Lock(l) => l.into(),
                    Failure::OutsideStore(o) => o.into(),
                    Failure::Diverged(e) => refused_append_as_write(*e).into(),
                }
            }
        }
    )+};
}

from_failure!(OpenError, BranchError, RemoveError);

impl From<Failure> for AppendError {
    fn from(f: Failure) -> Self {
        match f {
            Failure::Write(w) => w.into(),
            Failure::Lock(l) => l.into(),
            Failure::OutsideStore(o) => o.into(),
            Failure::Diverged(e) => *e,
        }
    }
}

/// A refused append (another writer's branch, or the file replaced or deleted under the
/// manager) as a write failure of its file wrapping it, for an operation whose error has no
/// variant of its own for it.
fn refused_append_as_write(e: AppendError) -> WriteFailure {
    let (path, kind) = match &e {
        AppendError::FileDeleted { path } => (path.clone(), io::ErrorKind::NotFound),
        AppendError::FileReplaced { path } | AppendError::Diverged { path, .. } => {
            (path.clone(), io::ErrorKind::Other)
        }
        _ => (PathBuf::new(), io::ErrorKind::Other),
    };
    WriteFailure::new(path, io::Error::new(kind, e))
}

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
    #[error("cannot rewrite session file {}", source.path.display())]
    Write {
        /// The file and the I/O error.
        #[from]
        source: WriteFailure,
    },
    /// The session write lock ([`crate::SessionManager::set_write_lock`]) could not be taken:
    /// another holder kept it for the whole timeout ([`LockError::Timeout`], naming the lock
    /// file and its owner's pid), a live holder has held it too long ([`LockError::Stale`]),
    /// or the lock file could not be created. Nothing was written and the file is untouched.
    #[error("cannot take the write lock of session file {}", source.path.display())]
    Lock {
        /// The session file and the lock failure (lock path, owner pid and liveness).
        #[from]
        source: LockFailure,
    },
    /// The session file's name is a symlink to a file outside its store root (the directory
    /// holding the name, [`crate::identity`]): nothing was locked or written and the target is
    /// untouched. Names the link, its target and the root.
    #[error(transparent)]
    OutsideStore(#[from] OutsideStore),
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
    #[error("cannot write session file {}", source.path.display())]
    Write {
        /// The file and the I/O error.
        #[from]
        source: WriteFailure,
    },
    /// The session write lock ([`crate::SessionManager::set_write_lock`]) could not be taken:
    /// another holder kept it for the whole timeout ([`LockError::Timeout`], naming the lock
    /// file and its owner's pid), a live holder has held it too long ([`LockError::Stale`]),
    /// or the lock file could not be created. Nothing was written; the manager is unchanged.
    #[error("cannot take the write lock of session file {}", source.path.display())]
    Lock {
        /// The session file and the lock failure (lock path, owner pid and liveness).
        #[from]
        source: LockFailure,
    },
    /// The session file's name is a symlink to a file outside its store root (the directory
    /// holding the name, [`crate::identity`]): nothing was locked or written and the target is
    /// untouched. Names the link, its target and the root.
    #[error(transparent)]
    OutsideStore(#[from] OutsideStore),
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
    /// in more than one tip (docs/DEVIATIONS.md D30; [`crate::ForeignAppendPolicy`]). Nothing
    /// was written; the other writer's lines are adopted (they show in `get_entries` and
    /// `get_tree`), the leaf and append cursor are unchanged, and every further append fails
    /// the same way until the leaf is moved ([`crate::SessionManager::branch`] to one of
    /// `tips`, or back to `leaf` to add a branch there deliberately) or
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
            AppendError::Lock { source } => Some(&*source.error),
            _ => None,
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
    #[error("cannot write session file {}", source.path.display())]
    Write {
        /// The file and the I/O error.
        #[from]
        source: WriteFailure,
    },
    /// The session write lock ([`crate::SessionManager::set_write_lock`]) could not be taken:
    /// another holder kept it for the whole timeout ([`LockError::Timeout`], naming the lock
    /// file and its owner's pid), a live holder has held it too long ([`LockError::Stale`]),
    /// or the lock file could not be created. Nothing was written.
    #[error("cannot take the write lock of session file {}", source.path.display())]
    Lock {
        /// The session file and the lock failure (lock path, owner pid and liveness).
        #[from]
        source: LockFailure,
    },
    /// The session file's name is a symlink to a file outside its store root (the directory
    /// holding the name, [`crate::identity`]): nothing was locked or written and the target is
    /// untouched. Names the link, its target and the root.
    #[error(transparent)]
    OutsideStore(#[from] OutsideStore),
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
    /// [`crate::SessionManager::append_leaf_control`] on a session whose file is not written
    /// (in memory, or rows still held until the first assistant message): there is no file to
    /// append the leaf control to. Nothing was changed.
    #[error(
        "the session is not written to a file yet (in memory, or its entries are held until the \
         first assistant message): no leaf control can be appended"
    )]
    NotWritten {
        /// The file (empty for an in-memory session).
        path: PathBuf,
    },
}

impl From<AppendError> for BranchError {
    fn from(e: AppendError) -> Self {
        match e {
            AppendError::EntryNotFound { id } => BranchError::EntryNotFound { id },
            AppendError::ReadOnly { path } => BranchError::ReadOnly { path },
            AppendError::Write { source } => BranchError::Write { source },
            AppendError::Lock { source } => BranchError::Lock { source },
            AppendError::OutsideStore(o) => BranchError::OutsideStore(o),
            AppendError::Serialize { source } => BranchError::Serialize { source },
            e @ (AppendError::FileReplaced { .. }
            | AppendError::FileDeleted { .. }
            | AppendError::Diverged { .. }) => refused_append_as_write(e).into(),
            AppendError::NullMessage => {
                WriteFailure::new(PathBuf::new(), io::Error::other("message must not be null"))
                    .into()
            }
            AppendError::Internal { what } => {
                WriteFailure::new(PathBuf::new(), io::Error::other(what)).into()
            }
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
    #[error("cannot write forked session {}", source.path.display())]
    Write {
        /// The new file and the I/O error.
        #[from]
        source: WriteFailure,
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
    #[error("cannot rewrite session file {}", source.path.display())]
    Write {
        /// The file and the I/O error.
        #[from]
        source: WriteFailure,
    },
    /// The session write lock ([`crate::SessionManager::set_write_lock`]) could not be taken:
    /// another holder kept it for the whole timeout ([`LockError::Timeout`], naming the lock
    /// file and its owner's pid), a live holder has held it too long ([`LockError::Stale`]),
    /// or the lock file could not be created. Nothing was written, and the session in memory is
    /// left as it was.
    #[error("cannot take the write lock of session file {}", source.path.display())]
    Lock {
        /// The session file and the lock failure (lock path, owner pid and liveness).
        #[from]
        source: LockFailure,
    },
    /// The session file's name is a symlink to a file outside its store root (the directory
    /// holding the name, [`crate::identity`]): nothing was locked or written and the target is
    /// untouched. Names the link, its target and the root.
    #[error(transparent)]
    OutsideStore(#[from] OutsideStore),
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
