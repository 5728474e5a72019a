//! `sessions list` on an OpenClaw store lists transcripts only: the sidecars and archives beside
//! them (openclaw-store.md §1.4: `<id>.trajectory.jsonl`, `<id>.trajectory-path.json`,
//! `<id>.jsonl.reset.<ts>`, `<id>.jsonl.deleted.<ts>`, `<id>.jsonl.bak…`) and the `archive/`
//! sub-directory of a sessions directory holding `sessions.json` are neither rows nor
//! warnings. A directory without `sessions.json` still lists its `archive/`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::Path;

use serde_json::Value;

use crate::support::*;

const REAL: &str = "00000001-0000-4000-8000-0c6110000000";
const ARCHIVED: &str = "00000002-0000-4000-8000-0c6110000000";

/// The session ids `list --json` printed, in order, and its `skipped` array.
fn ids_and_skipped(stdout: &str) -> (Vec<String>, Value) {
    let v: Value = serde_json::from_str(stdout).unwrap();
    let ids = v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_owned())
        .collect();
    (ids, v["skipped"].clone())
}

/// A sessions directory with one transcript, each sidecar and archive kind of it, and an
/// archived transcript under `archive/`.
fn plant_store(sessions: &Path, with_store_file: bool) {
    if with_store_file {
        plant(&sessions.join("sessions.json"), b"{}");
    }
    let real = session_bytes(REAL, NOW - DAY);
    plant(&sessions.join(format!("{REAL}.jsonl")), &real);
    plant(
        &sessions.join(format!("{REAL}.trajectory.jsonl")),
        b"{\"traceSchema\":\"openclaw-trajectory\",\"type\":\"run.start\"}\n",
    );
    plant(
        &sessions.join(format!("{REAL}.trajectory-path.json")),
        b"{\n  \"traceSchema\": \"openclaw-trajectory-pointer\",\n  \"schemaVersion\": 1\n}\n",
    );
    for suffix in [
        ".jsonl.reset.2026-06-12T09-00-00.000Z",
        ".jsonl.deleted.2026-06-12T09-00-00.000Z",
        ".jsonl.bak-1781254800000",
        ".jsonl.bak.2026-06-12T09-00-00.000Z",
    ] {
        plant(&sessions.join(format!("{REAL}{suffix}")), &real);
    }
    plant(
        &sessions.join("archive").join(format!("{ARCHIVED}.jsonl")),
        &session_bytes(ARCHIVED, NOW - 2 * DAY),
    );
}

#[test]
fn sidecars_and_archives_of_an_openclaw_store_are_not_listed_nor_warned_about() {
    let dir = tempdir();
    plant_store(&dir.path().join("agents/main/sessions"), true);
    for args in [
        vec!["list", "--root", ".", "--json"],
        vec!["list", "--root", ".", "--agent", "main", "--json"],
        vec!["list", "--dir", "agents/main/sessions", "--json"],
    ] {
        let r = run_in_timeout(dir.path(), &args);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{args:?}");
        let (ids, skipped) = ids_and_skipped(&r.stdout);
        assert_eq!(ids, [REAL], "{args:?}");
        assert_eq!(skipped, serde_json::json!([]), "{args:?}");
    }
    let r = run_in_timeout(dir.path(), ["list", "--root", "."]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert_eq!(r.stdout.lines().count(), 2, "{}", r.stdout);
    assert!(r.stdout.lines().nth(1).unwrap().contains("00000001"));
}

#[test]
fn archive_dir_of_a_store_without_sessions_json_is_still_listed() {
    let dir = tempdir();
    plant_store(&dir.path().join("agents/main/sessions"), false);
    let r = run_in_timeout(dir.path(), ["list", "--root", ".", "--json"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    let (ids, skipped) = ids_and_skipped(&r.stdout);
    assert_eq!(ids, [REAL, ARCHIVED]);
    assert_eq!(skipped, serde_json::json!([]));
}

#[test]
fn the_reference_fixture_lists_its_transcripts_only() {
    let Some(shared) = shared_dir("the_reference_fixture_lists_its_transcripts_only") else {
        return;
    };
    let dir = tempdir();
    let sessions = session_test_support::openclaw_fixture_copy(&shared, dir.path());
    // Sidecars the gateway writes beside a transcript, and an `archive/` copy.
    let group = "0000000a-0000-4000-8000-0c6110000000";
    plant(
        &sessions.join(format!("{group}.trajectory.jsonl")),
        b"{\"traceSchema\":\"openclaw-trajectory\"}\n",
    );
    plant(
        &sessions.join(format!("{group}.trajectory-path.json")),
        b"{}\n",
    );
    plant_copy(
        &sessions.join(format!("{group}.jsonl")),
        &sessions.join("archive").join(format!("{group}.jsonl")),
    );
    let r = run_in_timeout(dir.path(), ["list", "--root", ".", "--json"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    let (ids, skipped) = ids_and_skipped(&r.stdout);
    // One row per sessions.json key, newest `updatedAt` first (the subagent's row has no
    // transcript), then the orphan transcript no row references.
    assert_eq!(
        ids,
        [
            "00000026-0000-4000-8000-0c6110000000",
            "0000001f-0000-4000-8000-0c6110000000",
            "0000001a-0000-4000-8000-0c6110000000",
            "00000013-0000-4000-8000-0c6110000000",
            group,
            "00000021-0000-4000-8000-0c6110000000",
        ]
    );
    assert_eq!(skipped, serde_json::json!([]));
}

#[test]
fn the_reference_lists_the_five_keys_of_its_fixture_copy() {
    let test = "the_reference_lists_the_five_keys_of_its_fixture_copy";
    let (Some(shared), Some(openclaw)) = (
        shared_dir(test),
        session_test_support::OpenclawCli::find(test),
    ) else {
        return;
    };
    let dir = tempdir();
    session_test_support::openclaw_fixture_copy(&shared, dir.path());
    let listed: Value = openclaw.run_ok(
        dir.path(),
        &["sessions", "--json"],
        Some("2026-06-12T13:00:00Z"),
        |out| serde_json::from_slice(out).unwrap(),
    );
    let expected: Value = serde_json::from_slice(
        &std::fs::read(shared.join("fixtures/openclaw-6.11-store/expected-sessions.json")).unwrap(),
    )
    .unwrap();
    let keys_and_ages = |v: &Value| -> Vec<(String, u64)> {
        v["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["key"].as_str().unwrap().to_owned(),
                    s["ageMs"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    // The copy's mtimes and the fake clock reproduce the reference's own saved listing.
    assert_eq!(keys_and_ages(&listed), keys_and_ages(&expected));
    assert_eq!(keys_and_ages(&listed).len(), 5);
}
