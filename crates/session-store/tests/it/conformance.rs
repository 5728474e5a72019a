//! Conformance with OpenClaw 2026.6.11: every op-script
//! of the shared samples (`shared/conformance/scripts/`) and of the committed corpus
//! (`tests/conformance/scripts/`), run through `session_store::test_util::replay`, gives the reference's
//! normalised output byte for byte. The corpus's `x*` scripts are left out here: they show the
//! listed fixes of `docs/DEVIATIONS.md`, and `cargo test -p xtask` checks that each of them differs
//! only where that list says.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

/// Runs every `*.json` script of `scripts` (except `x*`) and compares with `expected/<name>`.
fn check_suite(
    scripts: &Path,
    expected: &Path,
    exact: &mut Vec<String>,
    failures: &mut Vec<String>,
) {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(scripts)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('x'))
        .collect();
    paths.sort();
    for script in paths {
        let name = script.file_name().unwrap().to_string_lossy().into_owned();
        let Ok(golden) = std::fs::read_to_string(expected.join(&name)) else {
            failures.push(format!("{name}: no golden in {}", expected.display()));
            continue;
        };
        let dir = crate::support::tempdir();
        let got = session_store::test_util::replay::run_script_normalized(
            session_store::FileStorage::shared(),
            &std::fs::read(&script).unwrap(),
            dir.path(),
        )
        .unwrap();
        if got == golden {
            exact.push(name);
        } else {
            let line = got
                .lines()
                .zip(golden.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(0)
                + 1;
            failures.push(format!(
                "{name}: differs from the golden at output line {line}:\n  ours:   {}\n  golden: {}",
                got.lines().nth(line - 1).unwrap_or(""),
                golden.lines().nth(line - 1).unwrap_or("")
            ));
        }
    }
}

#[test]
fn shared_samples_match_openclaw_exactly() {
    let Some(shared) = crate::support::shared_dir("shared_samples_match_openclaw_exactly") else {
        return;
    };
    let (mut exact, mut failures) = (Vec::new(), Vec::new());
    check_suite(
        &shared.join("conformance/scripts"),
        &shared.join("conformance/expected/openclaw-2026.6.11"),
        &mut exact,
        &mut failures,
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(
        exact,
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
fn committed_corpus_matches_openclaw_exactly() {
    let ws = crate::support::workspace_root();
    let (mut exact, mut failures) = (Vec::new(), Vec::new());
    check_suite(
        &ws.join("tests/conformance/scripts"),
        &ws.join("tests/conformance/expected/openclaw-2026.6.11"),
        &mut exact,
        &mut failures,
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(exact.len() >= 40, "{} scripts", exact.len());
}
