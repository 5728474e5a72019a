//! The integration tests of session-format, linked into one test binary: one module per
//! behaviour (each file's opening comment says what it pins), sharing `support` (the
//! `../shared` folder; tests that need it print `SKIP <test>: <reason>` and return when it is
//! absent). Run one module with `cargo test -p session-format --test it reading::`. Insta
//! snapshots are in `it/snapshots/` (`it__<module>__<name>.snap`), proptest regressions in
//! `proptest-regressions/<module>.txt`.

mod support;

mod doctor_import_probes;
mod entries;
mod fixtures;
mod ids_time_migrate;
mod json_corpus;
mod properties;
mod reading;
mod scan_differential;
mod v1_compaction_self_index;
mod v8_date_parsing;
