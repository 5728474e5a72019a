//! [`RedisStoreError`]: what a Redis store operation can fail with, and its `io::Error` form.

use super::*;

/// Errors of the Redis backend. Every variant that concerns one session names its path.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RedisStoreError {
    /// Opening the client or the first connection failed.
    #[error("cannot connect to redis at {url}: {source}")]
    Connect {
        /// The URL given (a password in it replaced by `***`).
        url: String,
        /// The client error.
        #[source]
        source: redis::RedisError,
    },
    /// A `rediss://` URL: TLS is not built into this backend's client.
    #[error(
        "cannot connect to redis at {url}: TLS (rediss://) is not supported (this build's redis \
         client has no TLS); use redis:// or redis+unix:// (for a server that requires TLS, \
         through a local TLS tunnel)"
    )]
    TlsUnsupported {
        /// The URL given (a password in it replaced by `***`).
        url: String,
    },
    /// A command failed (connection lost, server error, timeout).
    #[error("redis command for {path} failed: {source}")]
    Command {
        /// The session (or directory) the command was for.
        path: PathBuf,
        /// The client error.
        #[source]
        source: redis::RedisError,
    },
    /// No session at the path.
    #[error("no session at {0} in redis")]
    NotFound(PathBuf),
    /// A session already exists at the path (create-if-absent refused).
    #[error("a session already exists at {path} in redis ({found})")]
    AlreadyExists {
        /// The path.
        path: PathBuf,
        /// The existing session.
        found: RedisVersion,
    },
    /// A fenced write found another state than the writer expected: nothing was written.
    #[error("fenced write to {path} refused: expected {expected}, found {found}")]
    Fence {
        /// The session.
        path: PathBuf,
        /// What the writer expected.
        expected: Fence,
        /// What the session is now.
        found: RedisVersion,
    },
    /// The path cannot be mapped to keys (no file name, or not UTF-8).
    #[error("{0} cannot name a redis session: it needs a UTF-8 directory and file name")]
    BadPath(PathBuf),
    /// The path's file name is not a valid path component ([`crate::validate_name`]).
    #[error("{} cannot name a redis session: {source}", .path.display())]
    InvalidName {
        /// The path.
        path: PathBuf,
        /// The name and the rule it breaks.
        #[source]
        source: crate::names::InvalidName,
    },
    /// The path's directory holds a `..` component (a relative path climbing above its
    /// start), so its key path would leave the namespace it names.
    #[error("{0} cannot name a redis session: its directory climbs out of its namespace with '..'")]
    EscapesNamespace(PathBuf),
    /// A reply had an unexpected shape (another program wrote these keys?).
    #[error("unexpected redis reply for {path}: {detail}")]
    Reply {
        /// The session.
        path: PathBuf,
        /// What was wrong.
        detail: String,
    },
    /// The write lock was not acquired within the timeout.
    #[error(
        "timed out after {waited_ms} ms waiting for the redis write lock of {path} (held by {holder}, {ttl_ms} ms left)"
    )]
    LockTimeout {
        /// The session.
        path: PathBuf,
        /// How long we waited.
        waited_ms: u64,
        /// The holder's token (`<random hex> host=<host name> pid=<pid>`), or `unknown`.
        holder: String,
        /// The lock's remaining time to live.
        ttl_ms: i64,
    },
    /// The write lock was no longer ours when renewed or released (it expired and may have
    /// been taken by another writer).
    #[error("the redis write lock of {0} was lost (expired or taken over)")]
    LockLost(PathBuf),
}

impl RedisStoreError {
    /// The [`std::io::ErrorKind`] closest to this error (`NotFound`, `AlreadyExists`,
    /// `TimedOut` for a lock timeout and a server that did not answer in time, `InvalidInput`,
    /// `InvalidData`, `Unsupported` for TLS, else `Other`).
    pub fn io_kind(&self) -> std::io::ErrorKind {
        use std::io::ErrorKind as K;
        match self {
            RedisStoreError::NotFound(_) => K::NotFound,
            RedisStoreError::AlreadyExists { .. } => K::AlreadyExists,
            RedisStoreError::LockTimeout { .. } => K::TimedOut,
            RedisStoreError::BadPath(_)
            | RedisStoreError::InvalidName { .. }
            | RedisStoreError::EscapesNamespace(_) => K::InvalidInput,
            RedisStoreError::Reply { .. } => K::InvalidData,
            RedisStoreError::Command { source, .. } | RedisStoreError::Connect { source, .. }
                if source.is_timeout() =>
            {
                K::TimedOut
            }
            RedisStoreError::TlsUnsupported { .. } => K::Unsupported,
            _ => K::Other,
        }
    }
}

impl From<RedisStoreError> for std::io::Error {
    fn from(e: RedisStoreError) -> Self {
        std::io::Error::new(e.io_kind(), e)
    }
}

pub(super) fn fence_err(path: &Path, fence: Option<Fence>, found: RedisVersion) -> RedisStoreError {
    match fence {
        Some(expected) => RedisStoreError::Fence {
            path: path.to_path_buf(),
            expected,
            found,
        },
        None => reply_err(path, "refused without a fence".to_owned()),
    }
}

pub(super) fn reply_err(path: &Path, detail: String) -> RedisStoreError {
    RedisStoreError::Reply {
        path: path.to_path_buf(),
        detail,
    }
}
