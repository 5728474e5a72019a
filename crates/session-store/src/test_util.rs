//! Tools of tests, benchmarks and the conformance harness (feature `test-util`; this crate's own
//! tests get it through its dev-dependency on itself): fault injection under the write path
//! ([`fault::FaultFs`]), the conformance op-script runner ([`replay`]), a hook run during a
//! load ([`hooks::set_after_read`]), the repair's probes ([`repair_probes`]) and, with `redis`, a throwaway `redis-server`
//! ([`redis_server::LocalRedisServer`]). The warm cache's bounds are set with
//! [`crate::WarmCache::set_limits`] (same feature). Not part of the stable API.

/// Fault injection: a [`crate::io::Fs`] whose system calls fail as planned
/// (docs/RELIABILITY.md). A manager on `Arc::new(FileStorage::with_fs(fault_fs))` meets the
/// failures `fault_fs` plans.
pub mod fault {
    pub use crate::io::fault::*;
}

/// The conformance harness's op-script runner: plays a script of manager operations and prints
/// what the reference's runner prints (`xtask/conformance/`).
pub mod replay {
    pub use crate::replay::*;
}

/// A hook run after the read of every load of one path, so a test can play a writer that
/// changes the session while it is being loaded.
pub mod hooks {
    pub use crate::snapshot::hooks::{AfterRead, set_after_read};
}

/// What the incremental repair did, for tests that pin its work: whether a file is in the
/// repair cache, and how many lines the repair has parsed on the calling thread.
pub mod repair_probes {
    pub use crate::repair::{is_repair_cached, parsed_lines_on_this_thread};
}

/// A throwaway `redis-server` for tests and benchmarks (feature `redis` too).
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub mod redis_server {
    pub use crate::redis_store::server::*;
}
