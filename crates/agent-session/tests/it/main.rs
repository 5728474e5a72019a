//! The integration tests of agent-session, linked into one test binary: one module per
//! behaviour (each file's opening comment says what it pins), sharing `common` (fixture paths
//! under `tests/fixtures/reference`, JSON building, transcript lines). Run one module with
//! `cargo test -p agent-session --test it prepare::`. Proptest regressions go to
//! `proptest-regressions/<module>.txt`.

mod common;

mod agent;
mod agent_reference_behaviour;
mod compaction;
mod convert;
mod errored_turns;
mod pairing;
mod payload_hostile_ids;
mod payload_unicode;
mod prepare;
mod reference_roundtrip;
mod tool_call_ids;
mod tools;
