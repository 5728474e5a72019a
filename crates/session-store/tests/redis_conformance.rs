//! The conformance op-scripts on the Redis backend (issue 11): every script of the shared
//! samples (`shared/conformance/scripts/`) and of the committed corpus
//! (`tests/conformance/scripts/`), except the `x*` scripts (see `conformance.rs`), run through
//! `replay::run_script_normalized_in` on a `RedisStorage` gives the same normalised output as on
//! the file store, byte for byte, and both equal the reference's golden. Each script gets a key
//! prefix of its own on one real `redis-server` (skipped with a printed reason only when no
//! binary exists); the Redis runs write nothing to the file system.
#![cfg(feature = "redis")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use session_store::redis_store::{LocalRedisServer, RedisStorage};
use session_store::replay::run_script_normalized_in;
use session_store::{FileStorage, Storage};

/// The first output line where `a` and `b` differ, for a readable failure.
fn first_difference(a: &str, b: &str) -> String {
    let line = a
        .lines()
        .zip(b.lines())
        .position(|(x, y)| x != y)
        .unwrap_or_else(|| a.lines().count().min(b.lines().count()))
        + 1;
    format!(
        "output line {line}:\n  left:  {}\n  right: {}",
        a.lines().nth(line - 1).unwrap_or("<end>"),
        b.lines().nth(line - 1).unwrap_or("<end>")
    )
}

/// Runs every `*.json` script of `scripts` (except `x*`) on the file store and on Redis;
/// returns the names whose three texts (Redis, file, golden) are equal, and a failure message
/// for every other one.
fn check_suite(
    server: &LocalRedisServer,
    suite: &str,
    scripts: &Path,
    expected: &Path,
) -> (Vec<String>, Vec<String>) {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(scripts)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('x'))
        .collect();
    paths.sort();
    let (mut same, mut failures) = (Vec::new(), Vec::new());
    for script in paths {
        let name = script.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read(&script).unwrap();
        let Ok(golden) = std::fs::read_to_string(expected.join(&name)) else {
            failures.push(format!("{name}: no golden in {}", expected.display()));
            continue;
        };
        let file_dir = support::tempdir();
        let on_files = run_script_normalized_in(FileStorage::shared(), &text, file_dir.path())
            .unwrap_or_else(|e| panic!("{name} on files: {e}"));
        // D is a real, empty directory's path (so `<dir>` normalises the same way); the Redis
        // run must leave it empty.
        let redis_dir = support::tempdir();
        let redis: Arc<dyn Storage> = Arc::new(
            RedisStorage::connect(&server.url(), Some(&format!("conf:{suite}:{name}"))).unwrap(),
        );
        let on_redis = run_script_normalized_in(redis, &text, redis_dir.path())
            .unwrap_or_else(|e| panic!("{name} on redis: {e}"));
        let left_on_disk = std::fs::read_dir(redis_dir.path()).unwrap().count();
        if left_on_disk != 0 {
            failures.push(format!(
                "{name}: the Redis run wrote {left_on_disk} entries to disk"
            ));
        }
        if on_redis != on_files {
            failures.push(format!(
                "{name}: redis (left) differs from files (right) at {}",
                first_difference(&on_redis, &on_files)
            ));
        } else if on_redis != golden {
            failures.push(format!(
                "{name}: redis (left) differs from the golden (right) at {}",
                first_difference(&on_redis, &golden)
            ));
        } else {
            same.push(name);
        }
    }
    (same, failures)
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
    let ws = support::workspace();
    let (same, failures) = check_suite(
        &server,
        "corpus",
        &ws.join("tests/conformance/scripts"),
        &ws.join("tests/conformance/expected/openclaw-2026.6.11"),
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let expected = std::fs::read_dir(ws.join("tests/conformance/scripts"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json") && !n.starts_with('x'))
        .count();
    assert_eq!(same.len(), expected);
    assert!(same.len() >= 40, "{} scripts", same.len());
}
