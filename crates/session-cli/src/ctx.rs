//! The context a subcommand runs in: what `main` decides once from the global options before
//! the subcommand starts, passed down as `&Ctx` instead of being kept in a process global.
//!
//! Today that is where sessions are read ([`Backend`]: the files, the Redis store of
//! `--backend redis://…`, or OpenClaw 2026.8+ SQLite databases) and what time it is ([`Ctx::now_ms`]: the system clock, or the
//! global `--now TIME`, so runs are reproducible and tests can compare with the reference's
//! outputs made under a fixed clock). The command's standard output ([`crate::output::Output`]) is not
//! part of it: it is written to, so each function that prints takes it as `&mut Output` next to
//! the shared `&Ctx`.

use crate::backend::{Backend, StoreBackend};

/// The run's context; see the module documentation.
#[derive(Debug)]
pub(crate) struct Ctx {
    /// Where this run reads sessions.
    pub(crate) backend: Backend,
    /// The global `--now TIME`, when given.
    fixed_now_ms: Option<i64>,
    /// The global `--offline-ok`: write an OpenClaw store although a gateway's lock says one
    /// runs ([`crate::gateway::refuse_while_gateway_runs`]).
    offline_ok: bool,
}

impl Ctx {
    /// A context reading sessions from `backend`, whose clock says `now` (epoch milliseconds,
    /// from the global `--now`) when given, else the system clock's time.
    pub(crate) fn new(backend: Backend, now: Option<i64>) -> Self {
        Ctx {
            backend,
            fixed_now_ms: now,
            offline_ok: false,
        }
    }

    /// This context with the global `--offline-ok` as given.
    pub(crate) fn with_offline_ok(mut self, offline_ok: bool) -> Self {
        self.offline_ok = offline_ok;
        self
    }

    /// Whether the global `--offline-ok` was given: the user stopped the gateway, so a running
    /// gateway's lock does not stop a write.
    pub(crate) fn offline_ok(&self) -> bool {
        self.offline_ok
    }

    /// Now, in epoch milliseconds: the global `--now` when given, else the system clock.
    pub(crate) fn now_ms(&self) -> i64 {
        self.fixed_now_ms
            .unwrap_or_else(session_format::ids::now_ms)
    }

    /// The store sessions are read from when they are not local files (the Redis store of
    /// `--backend redis://…`, or the SQLite databases of `--backend sqlite:PATH` or of the
    /// state directory); `None` when sessions are files.
    pub(crate) fn store(&self) -> Option<&StoreBackend> {
        self.backend.store()
    }
}
