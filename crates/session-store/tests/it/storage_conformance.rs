//! The storage trait keeps the file store's semantics: every op-script of the shared
//! samples (`shared/conformance/scripts/`) and of the committed corpus
//! (`tests/conformance/scripts/`), except the `x*` scripts (see `conformance.rs`), run on a
//! [`MemStorage`] gives the same normalised output as on the file store, byte for byte, and
//! both equal the reference's golden. The in-memory runs write nothing to the file system.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use session_store::{MemStorage, Storage};

/// Runs every `*.json` script of `scripts` (except `x*`) on the file store and on a fresh
/// `MemStorage` per script.
fn check_suite(scripts: &Path, expected: &Path) -> (Vec<String>, Vec<String>) {
    crate::support::check_suite_on(scripts, expected, "memory", |_| Arc::new(MemStorage::new()))
}

#[test]
fn shared_samples_run_identically_in_memory() {
    let Some(shared) = crate::support::shared_dir("shared_samples_run_identically_in_memory")
    else {
        return;
    };
    let (same, failures) = check_suite(
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
fn committed_corpus_runs_identically_in_memory() {
    let ws = crate::support::workspace_root();
    let (same, failures) = check_suite(
        &ws.join("tests/conformance/scripts"),
        &ws.join("tests/conformance/expected/openclaw-2026.6.11"),
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let expected = crate::support::conformance_scripts(&ws.join("tests/conformance/scripts")).len();
    assert_eq!(same.len(), expected);
    assert!(same.len() >= 40, "{} scripts", same.len());
}

/// The storage a manager uses is visible, and the default is the file store.
#[test]
fn managers_default_to_the_file_store() {
    let dir = crate::support::tempdir();
    let sm = session_store::SessionManager::create("/p", Some(dir.path())).unwrap();
    assert_eq!(sm.storage().name(), "file");
    let files = sm.storage();
    assert!(files.local_files());
    assert!(!files.replace_is_fenced());
    assert!(files.caches().is_some());
    let mem: Arc<dyn Storage> = Arc::new(MemStorage::new());
    let sm = session_store::SessionManager::on(mem)
        .create("/p", Some(Path::new("/s")))
        .unwrap();
    assert_eq!(sm.storage().name(), "memory");
    let mem = sm.storage();
    assert!(!mem.local_files());
    assert!(mem.replace_is_fenced());
    assert!(mem.caches().is_none());
}
