//! The integration tests of session-semantics, linked into one test binary: one module per
//! behaviour (each file's opening comment says what it pins). Run one module with
//! `cargo test -p session-semantics --test it retention::`. Insta snapshots are in
//! `it/snapshots/` (`it__<module>__<name>.snap`), proptest regressions in
//! `proptest-regressions/<module>.txt`. `event_order.rs` stays a binary of its own: it pins the
//! process-wide transcript version from 1.

mod aliased_sessions;
mod audit_log_descriptor;
mod corpus;
mod deviations;
mod fsops_move;
mod gateway_detection;
mod hostile_names;
mod inspect;
mod keys;
mod openclaw_session_store;
mod openclaw_store_artifacts;
mod openclaw_store_delivery_fields;
mod openclaw_store_lifecycle;
mod openclaw_store_listing;
mod openclaw_store_maintenance;
mod openclaw_store_merge;
mod openclaw_store_plugin_state;
mod openclaw_store_resolve;
mod openclaw_store_skill_prompts;
mod peer_case;
mod policy;
mod retention;
mod retention_guard_rails;
mod retention_odd_layouts;
mod retention_races;
mod session;
mod session_file_fallbacks;
mod store_from_bytes;
