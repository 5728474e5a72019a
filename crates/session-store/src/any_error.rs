//! [`Error`], the umbrella of every error this crate returns (rust-style.md "Errors"): one
//! variant per operation's error ([`crate::error`], [`crate::LockError`], [`crate::InvalidName`],
//! …), each converting with `?`. No module of the crate returns it: it depends on the modules
//! that define those errors, and none of them depends on it.

use crate::error::{
    AppendError, BranchError, ContextError, ForkError, ListError, MessagesTextError, NameError,
    OpenError, ReadError, RemoveError,
};
use crate::identity::OutsideStore;
use crate::lock::LockError;
use crate::manager::EntryError;
use crate::names::InvalidName;

/// Any error of this crate: one variant per operation's error, each converting with `?`, so a
/// caller that does not tell them apart can write `fn f() -> Result<(), session_store::Error>`.
/// Its text and its [`source`](std::error::Error::source) are the wrapped error's. JSON text
/// that does not parse (`session_format::json::JsonError`) and plain `std::io::Error`s convert
/// too, so a first program's `main` can return it.
///
/// ```
/// fn names(dir: &std::path::Path) -> Result<Vec<String>, session_store::Error> {
///     let mut out = Vec::new();
///     for info in session_store::list(dir)? {
///         let sm = session_store::SessionManager::open(&info.path, None, None)?;
///         out.push(sm.get_session_name()?.unwrap_or_default());
///     }
///     Ok(out)
/// }
/// # assert!(names(std::path::Path::new("/nonexistent/sessions")).unwrap().is_empty());
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Opening or loading a session file ([`crate::SessionManager::open`] and the factories).
    #[error(transparent)]
    Open(#[from] OpenError),
    /// An append, a flush or a full rewrite.
    #[error(transparent)]
    Append(#[from] AppendError),
    /// A branch, a branch summary or a branched session.
    #[error(transparent)]
    Branch(#[from] BranchError),
    /// Building the session context.
    #[error(transparent)]
    Context(#[from] ContextError),
    /// A fork into a new session file.
    #[error(transparent)]
    Fork(#[from] ForkError),
    /// Listing sessions.
    #[error(transparent)]
    List(#[from] ListError),
    /// A listed session's text.
    #[error(transparent)]
    MessagesText(#[from] MessagesTextError),
    /// The session name.
    #[error(transparent)]
    Name(#[from] NameError),
    /// A stored row that no longer parses.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// A typed entry.
    #[error(transparent)]
    Entry(#[from] EntryError),
    /// Removing trailing entries.
    #[error(transparent)]
    Remove(#[from] RemoveError),
    /// The session write lock, taken directly ([`crate::SessionWriteLock`]).
    #[error(transparent)]
    Lock(#[from] LockError),
    /// A session id or file name that cannot be used ([`crate::validate_name`]).
    #[error(transparent)]
    InvalidName(#[from] InvalidName),
    /// A path that leads out of its store ([`crate::identity`]).
    #[error(transparent)]
    OutsideStore(#[from] OutsideStore),
    /// JSON text that does not parse (`session_format::json::parse_value`, a payload the caller
    /// builds).
    #[error(transparent)]
    Json(#[from] session_format::json::JsonError),
    /// Any other I/O the caller does around this crate (reading a file, [`crate::io`] calls,
    /// [`crate::Storage`] methods called directly).
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The Redis backend.
    #[cfg(feature = "redis")]
    #[error(transparent)]
    Redis(#[from] crate::redis_store::RedisStoreError),
}
