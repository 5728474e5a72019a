//! `sessions check` reports a compaction whose `firstKeptEntryId` names no entry (the open
//! report's `dangling_first_kept`, docs/DEVIATIONS.md D31) as a warning naming the compaction
//! and the missing id, with its line and byte offset; the exit code stays 0, and `context`
//! builds what pi and OpenClaw build for it (the summary and what follows).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::support::*;

const HEADER: &str = r#"{"type":"session","version":3,"id":"0195f000-0000-7000-8000-0000000000bb","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
const U1: &str = r#"{"type":"message","id":"u1000001","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"q","timestamp":1}}"#;
const C1: &str = r#"{"type":"compaction","id":"c1000001","parentId":"u1000001","timestamp":"2026-01-01T00:00:02.000Z","summary":"s","firstKeptEntryId":"gone0001","tokensBefore":5}"#;
const U2: &str = r#"{"type":"message","id":"u2000001","parentId":"c1000001","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"after","timestamp":3}}"#;

#[test]
fn check_names_the_compaction_and_the_missing_first_kept_id() {
    let dir = tempdir();
    let text = format!("{HEADER}\n{U1}\n{C1}\n{U2}\n");
    plant(&dir.path().join("s.jsonl"), text.as_bytes());
    let offset = HEADER.len() + 1 + U1.len() + 1;

    let r = run_in(dir.path(), ["check", "s.jsonl"]);

    assert_eq!(
        (r.code, r.stdout.as_str()),
        (
            0,
            format!(
                "s.jsonl:3: byte {offset}: warning: dangling-first-kept: compaction c1000001 \
                 keeps from \"gone0001\", which names no entry: its context holds only the \
                 summary and the entries after it\n\
                 s.jsonl: ok (3 entries, 1 warning)\n\
                 checked 1 file: 1 ok; 1 warning\n"
            )
            .as_str()
        )
    );
    let r = run_in(dir.path(), ["context", "s.jsonl", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let roles: Vec<&str> = v["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["compactionSummary", "user"]);
}
