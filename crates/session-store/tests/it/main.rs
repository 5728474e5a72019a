//! The session-store integration tests that can share one process, as one test binary (one
//! link instead of one per file). Each module is one former `tests/<name>.rs`; the files that need
//! a process of their own stay beside this directory: those that set the warm cache's limits or
//! count its hits (`cache_tail_limits`, `snapshot_cache`, `reread_race`), install a counting
//! allocator (`listing_memory`), re-run their own binary as a child (`lock*`, `manager_lock`,
//! `file_identity`, `io_guards`, `repair_integration`, `repair_permissions`,
//! `rewrite_side_effects`), are run by name by `cargo xtask reliability` (`reliability_*`) or need
//! the `redis` feature (`redis_*`).
//!
//! One module: `cargo test -p session-store --test it -- exact_ids::`.

#[path = "../fence_common/mod.rs"]
mod fence_common;
#[path = "../lock_common/mod.rs"]
mod lock_common;
#[path = "../reference_repl/mod.rs"]
mod reference_repl;
#[path = "../repair_common/mod.rs"]
mod repair_common;
#[path = "../snapshot_support/mod.rs"]
mod snapshot_support;
#[path = "../support/mod.rs"]
mod support;

mod bad_inputs;
mod cache_tail_props;
mod conformance;
mod deviations;
mod entry_counts;
mod error_conversions;
mod exact_ids;
mod foreign_appends;
mod foreign_appends_full_writes;
mod foreign_appends_rare_rows;
mod foreign_appends_reference;
mod fork_over_compaction;
mod fork_over_compaction_reference;
mod hostile_names;
mod input_edge_cases;
mod leaf_control_append;
mod link_swapped_during_write;
mod lock_odd_paths;
mod manager_lock_tail;
mod names_io_and_listing;
mod parity_openclaw;
mod parity_pi;
mod read_only_open;
mod repair;
mod repair_incremental;
mod replay;
mod sqlite_common;
mod sqlite_consistency_checks;
mod sqlite_leaf_recompute;
mod sqlite_schema_versions;
mod sqlite_sidecars;
mod sqlite_storage;
mod sqlite_store;
mod sqlite_unopenable_states;
mod sqlite_verify;
mod sqlite_wal_concurrent_writer;
mod storage_conformance;
mod storage_fenced_rewrite;
mod storage_semantics;
