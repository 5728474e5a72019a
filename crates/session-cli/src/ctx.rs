//! The context a subcommand runs in: what `main` decides once from the global options before
//! the subcommand starts, passed down as `&Ctx` instead of being kept in a process global.
//!
//! Today that is where sessions are read ([`Backend`]: the files, or the Redis store of
//! `--backend redis://…`). The command's standard output ([`crate::output::Output`]) is not
//! part of it: it is written to, so each function that prints takes it as `&mut Output` next to
//! the shared `&Ctx`.

use crate::backend::{Backend, RedisBackend};

/// The run's context; see the module documentation.
#[derive(Debug)]
pub(crate) struct Ctx {
    /// Where this run reads sessions.
    pub(crate) backend: Backend,
}

impl Ctx {
    /// A context reading sessions from `backend`.
    pub(crate) fn new(backend: Backend) -> Self {
        Ctx { backend }
    }

    /// The Redis store of `--backend`, `None` when sessions are files.
    pub(crate) fn redis(&self) -> Option<&RedisBackend> {
        self.backend.redis()
    }
}
