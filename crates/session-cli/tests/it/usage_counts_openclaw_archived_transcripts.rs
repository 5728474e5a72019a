//! `sessions usage` on an OpenClaw store (`--root`, `--agent`, a listed `--dir`) sums the
//! archived transcripts `<id>.jsonl.reset.<ts>` and `<id>.jsonl.deleted.<ts>` of a sessions
//! directory, as OpenClaw 2026.6.11's cost summary does (`isUsageCountedSessionTranscriptFileName`:
//! the `reset`/`deleted` marker followed by a valid archive timestamp); `.bak.` archives, a
//! marker without a valid timestamp, files of `archive/` and trajectory sidecars are not summed,
//! and outside an OpenClaw store (no `sessions.json`) no archive is.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use serde_json::Value;

use crate::support::*;

const RESET: &str = "00000001-0000-4000-8000-0c6110000000";

fn session(id: &str, input: u32) -> String {
    format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2026-06-12T08:00:00.000Z\",\"cwd\":\"/w\"}}\n\
         {{\"type\":\"message\",\"id\":\"a1\",\"parentId\":null,\"timestamp\":\"2026-06-12T08:00:01.000Z\",\"message\":{{\"role\":\"assistant\",\"content\":[],\"provider\":\"p\",\"model\":\"m\",\"usage\":{{\"input\":{input},\"output\":0}}}}}}\n"
    )
}

/// `(key, totalTokens)` of every `--by session` row.
fn rows(v: &Value) -> Vec<(String, u64)> {
    v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["key"].as_str().unwrap().to_owned(),
                r["totalTokens"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn usage_sums_reset_and_deleted_archives_of_an_openclaw_store() {
    let test = "usage_sums_reset_and_deleted_archives_of_an_openclaw_store";
    let Some(shared) = shared_dir(test) else {
        return;
    };
    let t = tempdir();
    let sessions = session_test_support::openclaw_fixture_copy(&shared, t.path());
    let name = |n: &str| sessions.join(n);
    plant(
        &name("d0000000-0000-4000-8000-000000000000.jsonl.deleted.2026-06-12T10-00-00.000Z"),
        session("d0000000-0000-4000-8000-000000000000", 1000).as_bytes(),
    );
    // Not counted by OpenClaw: a backup, a marker without a valid timestamp, `archive/`.
    plant(
        &name("b0000000-0000-4000-8000-000000000000.jsonl.bak.2026-06-12T10-00-00.000Z"),
        session("b0000000-0000-4000-8000-000000000000", 20_000).as_bytes(),
    );
    plant(
        &name("c0000000-0000-4000-8000-000000000000.jsonl.reset.yesterday"),
        session("c0000000-0000-4000-8000-000000000000", 300_000).as_bytes(),
    );
    plant(
        &name(
            "archive/e0000000-0000-4000-8000-000000000000.jsonl.deleted.2026-06-12T10-00-00.000Z",
        ),
        session("e0000000-0000-4000-8000-000000000000", 4_000_000).as_bytes(),
    );
    let root = t.path().to_str().unwrap().to_owned();
    let by_root = run_in(
        t.path(),
        [
            "usage", "--root", &root, "--by", "session", "--json", "--utc",
        ],
    );
    assert_eq!((by_root.code, by_root.stderr.as_str()), (0, ""));
    let v: Value = serde_json::from_str(&by_root.stdout).unwrap();
    let got = rows(&v);
    assert!(got.contains(&(RESET.to_owned(), 316)), "{got:?}");
    assert!(
        got.contains(&("d0000000-0000-4000-8000-000000000000".to_owned(), 1000)),
        "{got:?}"
    );
    for skipped in ["b0000000", "c0000000", "e0000000"] {
        assert!(!got.iter().any(|(k, _)| k.starts_with(skipped)), "{got:?}");
    }
    let sessions_total = v["sessions"].clone();
    let total = v["total"].clone();

    // `--agent main` and `--dir` of the same store give the same sums.
    for args in [
        vec![
            "usage", "--root", &root, "--agent", "main", "--by", "session", "--json", "--utc",
        ],
        vec![
            "usage",
            "--dir",
            sessions.to_str().unwrap(),
            "--by",
            "session",
            "--json",
            "--utc",
        ],
    ] {
        let r = run_in(t.path(), &args);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{args:?}");
        let w: Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(rows(&w), got, "{args:?}");
        assert_eq!(
            (&w["sessions"], &w["total"]),
            (&sessions_total, &total),
            "{args:?}"
        );
    }

    // Without `sessions.json` the directory is no OpenClaw store: no archive is summed.
    std::fs::remove_file(sessions.join("sessions.json")).unwrap();
    let r = run_in(
        t.path(),
        [
            "usage",
            "--dir",
            sessions.to_str().unwrap(),
            "--by",
            "session",
            "--json",
            "--utc",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let w: Value = serde_json::from_str(&r.stdout).unwrap();
    let plain = rows(&w);
    assert!(
        !plain
            .iter()
            .any(|(k, _)| k == RESET || k.starts_with("d0000000")),
        "{plain:?}"
    );
    assert_eq!(plain.len() + 2, got.len(), "{plain:?} {got:?}");
}
