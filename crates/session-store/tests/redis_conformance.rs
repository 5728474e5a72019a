//! The conformance op-scripts on the Redis backend: every script of the shared
//! samples (`shared/conformance/scripts/`) and of the committed corpus
//! (`tests/conformance/scripts/`), except the `x*` scripts (see `conformance.rs`), run through
//! `replay::run_script_normalized` on a `RedisStorage` gives the same normalised output as on
//! the file store, byte for byte, and both equal the reference's golden. Each script gets a key
//! prefix of its own on one real `redis-server` (skipped with a printed reason only when no
//! binary exists); the Redis runs write nothing to the file system.
#![cfg(feature = "redis")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::sync::Arc;

use session_store::redis_store::RedisStorage;
use session_store::test_util::redis_server::LocalRedisServer;

/// Runs every `*.json` script of `scripts` (except `x*`) on the file store and on Redis (a key
/// prefix of its own per script).
fn check_suite(
    server: &LocalRedisServer,
    suite: &str,
    scripts: &Path,
    expected: &Path,
) -> (Vec<String>, Vec<String>) {
    support::check_suite_on(scripts, expected, "redis", |name| {
        Arc::new(
            RedisStorage::connect(&server.url(), Some(&format!("conf:{suite}:{name}"))).unwrap(),
        )
    })
}

#[test]
fn shared_samples_run_identically_on_redis() {
    let Some(shared) = support::shared_dir("shared_samples_run_identically_on_redis") else {
        return;
    };
    let Some(server) = LocalRedisServer::start_or_skip("shared_samples_run_identically_on_redis")
    else {
        return;
    };
    let (same, failures) = check_suite(
        &server,
        "shared",
        &shared.join("conformance/scripts"),
        &shared.join("conformance/expected/openclaw-2026.6.11"),
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(
        same,
        [
            "p01-basic.json",
            "p02-lazy-flush.json",
            "p03-compaction.json",
            "p04-branching.json",
            "p05-open-v1.json",
            "p06-corrupt-header.json",
            "p07-torn-tail.json",
            "p08-opaque-rows.json",
        ]
    );
}

#[test]
fn committed_corpus_runs_identically_on_redis() {
    let Some(server) =
        LocalRedisServer::start_or_skip("committed_corpus_runs_identically_on_redis")
    else {
        return;
    };
    let ws = support::workspace_root();
    let (same, failures) = check_suite(
        &server,
        "corpus",
        &ws.join("tests/conformance/scripts"),
        &ws.join("tests/conformance/expected/openclaw-2026.6.11"),
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let expected = support::conformance_scripts(&ws.join("tests/conformance/scripts")).len();
    assert_eq!(same.len(), expected);
    assert!(same.len() >= 40, "{} scripts", same.len());
}
