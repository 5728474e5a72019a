//! `sessions usage --json` and the text table over a generated OpenClaw store (two agents, a
//! fork, usage on several branches, missing usage fields): the shapes pinned with insta, the
//! numbers exact.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::Path;

use insta::assert_snapshot;
use serde_json::Value;

use crate::support::{plant, run_in, tempdir};

/// An assistant message: `usage` is the raw JSON of its usage object (or `None` for none).
pub fn assistant(
    id: &str,
    parent: &str,
    ts: &str,
    model: Option<(&str, &str)>,
    tools: usize,
    usage: Option<&str>,
) -> String {
    let mut blocks: Vec<String> = (0..tools)
        .map(|i| format!(r#"{{"type":"toolCall","id":"{id}-t{i}","name":"bash","arguments":{{"command":"ls"}}}}"#))
        .collect();
    blocks.push(r#"{"type":"text","text":"done"}"#.to_owned());
    let model = match model {
        Some(("", m)) => format!(r#","model":"{m}""#),
        Some((p, m)) => format!(r#","provider":"{p}","model":"{m}""#),
        None => String::new(),
    };
    let usage = usage.map_or(String::new(), |u| format!(r#","usage":{u}"#));
    format!(
        r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"{ts}","message":{{"role":"assistant","content":[{}],"api":"anthropic-messages"{model}{usage},"stopReason":"stop","timestamp":0}}}}"#,
        blocks.join(",")
    )
}

/// A user or toolResult message.
pub fn message(id: &str, parent: Option<&str>, ts: &str, role: &str) -> String {
    let p = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
    let extra = if role == "toolResult" {
        r#","toolCallId":"x","toolName":"bash","isError":false"#
    } else {
        ""
    };
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{p},"timestamp":"{ts}","message":{{"role":"{role}","content":[{{"type":"text","text":"q"}}]{extra},"timestamp":0}}}}"#
    )
}

pub fn header(id: &str, parent_session: Option<&str>) -> String {
    let ps = parent_session.map_or(String::new(), |p| format!(r#","parentSession":"{p}""#));
    format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-06-01T08:00:00.000Z","cwd":"/work"{ps}}}"#
    )
}

/// A session with usage on two branches, across UTC midnight, with missing usage fields, an
/// assistant message without usage, one without a provider, a compaction, a branch summary, a
/// custom message and a line that is not JSON; no parentSession.
pub fn branched_session(id: &str) -> Vec<u8> {
    let full = r#"{"input":1200,"output":350,"cacheRead":40000,"cacheWrite":2500,"totalTokens":44050,"cost":{"input":0.0036,"output":0.00525,"cacheRead":0.012,"cacheWrite":0.009375,"total":0.030225}}"#;
    let rows = [
        header(id, None),
        message("u1", None, "2026-06-01T23:50:00.000Z", "user"),
        assistant("a1", "u1", "2026-06-01T23:55:00.000Z", Some(("anthropic", "claude-sonnet-4-5")), 2, Some(full)),
        message("r1", Some("a1"), "2026-06-01T23:56:00.000Z", "toolResult"),
        message("r2", Some("r1"), "2026-06-01T23:57:00.000Z", "toolResult"),
        // Branch 1 from r2, after midnight.
        message("u2", Some("r2"), "2026-06-02T00:05:00.000Z", "user"),
        assistant("a2", "u2", "2026-06-02T00:06:00.000Z", Some(("anthropic", "claude-sonnet-4-5")), 1,
            Some(r#"{"input":800,"output":90,"cacheRead":41000,"cost":{"input":0.0024,"output":0.00135,"cacheWrite":0.5}}"#)),
        r#"{"type":"compaction","id":"c1","parentId":"a2","timestamp":"2026-06-02T00:07:00.000Z","summary":"s","firstKeptEntryId":"u2","tokensBefore":45000}"#.to_owned(),
        // Branch 2 from r2.
        r#"{"type":"branch_summary","id":"b1","parentId":"r2","timestamp":"2026-06-02T01:00:00.000Z","fromId":"a2","summary":"tried"}"#.to_owned(),
        message("u3", Some("b1"), "2026-06-02T01:01:00.000Z", "user"),
        assistant("a3", "u3", "2026-06-02T01:02:00.000Z", Some(("openai", "gpt-5.1-codex")), 0, None),
        assistant("a4", "a3", "2026-06-02T01:03:00.000Z", Some(("", "local-model")), 3, Some(r#"{"input":5,"output":7}"#)),
        "{\"type\":\"message\",\"id\":\"broken".to_owned(),
        r#"{"type":"custom_message","id":"m1","parentId":"a4","timestamp":"2026-06-02T01:04:00.000Z","customType":"note","content":"x","display":true}"#.to_owned(),
        r#"{"type":"label","id":"l1","parentId":"m1","timestamp":"2026-06-02T01:05:00.000Z","targetId":"a1","label":"start"}"#.to_owned(),
    ];
    let mut s = rows.join("\n");
    s.push('\n');
    s.into_bytes()
}

/// A fork of `branched_session` (its path to a2 copied, as pi's createBranchedSession writes
/// it) with one exchange of its own.
pub fn fork_session(id: &str, parent_path: &str) -> Vec<u8> {
    let src = String::from_utf8(branched_session("unused")).unwrap();
    let copied: Vec<&str> = src.lines().skip(1).take(6).collect();
    let mut rows = vec![header(id, Some(parent_path))];
    rows.extend(copied.iter().map(|s| (*s).to_owned()));
    rows.push(message(
        "f1",
        Some("a2"),
        "2026-06-03T09:00:00.000Z",
        "user",
    ));
    rows.push(assistant(
        "f2",
        "f1",
        "2026-06-03T09:01:00.000Z",
        Some(("anthropic", "claude-opus-4-1")),
        1,
        Some(r#"{"input":10000,"output":1000,"cost":{"input":0.15,"output":0.075}}"#),
    ));
    let mut s = rows.join("\n");
    s.push('\n');
    s.into_bytes()
}

/// The store: agents `main` (the branched session and its fork) and `ops` (one more).
pub fn store(root: &Path) {
    let main = root.join("agents/main/sessions");
    let parent = main.join("2026-06-01T08-00-00-000Z_p1.jsonl");
    plant(&parent, &branched_session("p1"));
    plant(
        &main.join("2026-06-03T09-00-00-000Z_f1.jsonl"),
        &fork_session("f1", &parent.display().to_string()),
    );
    plant(
        &root.join("agents/ops/sessions/2026-06-05T10-00-00-000Z_o1.jsonl"),
        &[
            header("o1", None),
            message("u1", None, "2026-06-05T10:00:00.000Z", "user"),
            assistant("a1", "u1", "2026-06-05T10:00:30.000Z", Some(("anthropic", "claude-opus-4-1")), 0,
                Some(r#"{"input":3,"output":4,"cacheRead":5,"cacheWrite":6,"cost":{"input":0.25,"output":0.125,"cacheRead":0.0625,"cacheWrite":0.03125}}"#)),
            String::new(),
        ]
        .join("\n")
        .into_bytes(),
    );
}

fn json(root: &Path, args: &[&str]) -> Value {
    let r = run_in(root, args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stderr, "");
    serde_json::from_str(&r.stdout).unwrap()
}

#[test]
fn usage_json_by_day_in_utc() {
    let t = tempdir();
    store(t.path());
    let v = json(t.path(), &["usage", "--root", ".", "--utc", "--json"]);
    assert_snapshot!(crate::support::pretty(&v));
}

#[test]
fn usage_json_totals_are_exact() {
    let t = tempdir();
    store(t.path());
    let v = json(
        t.path(),
        &["usage", "--root", ".", "--all", "--by", "agent", "--json"],
    );
    let keys: Vec<&str> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["main", "ops"]);
    let total = &v["total"];
    // p1: 1200+800+5, f1's own: 10000, o1: 3.
    assert_eq!(total["input"], 12008);
    assert_eq!(total["output"], 350 + 90 + 7 + 1000 + 4);
    assert_eq!(total["cacheRead"], 40000 + 41000 + 5);
    assert_eq!(total["cacheWrite"], 2500 + 6);
    // a1 2, a2 1, a3 none, a4 3, f2 1, o1 none.
    assert_eq!(total["toolCalls"], 2 + 1 + 3 + 1);
    assert_eq!(total["assistantMessages"], 4 + 1 + 1);
    assert_eq!(total["withoutUsage"], 1);
    assert_eq!(total["messages"], 9 + 2 + 2);
    assert_eq!(total["customMessages"], 1);
    assert_eq!(
        (
            total["compactions"].as_u64(),
            total["branchSummaries"].as_u64()
        ),
        (Some(1), Some(1))
    );
    assert_eq!(v["copiesSkipped"], 6);
    assert_eq!(v["invalidLines"], 1);
    assert_eq!(v["sessions"], 3);
    let ops = &v["rows"][1];
    assert_eq!(ops["cost"], 0.46875);
    assert_eq!(ops["totalTokens"], 18);
}

#[test]
fn usage_text_by_model() {
    let t = tempdir();
    store(t.path());
    let r = run_in(t.path(), ["usage", "--root", ".", "--by", "model"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_snapshot!(r.stdout);
}

#[test]
fn usage_since_until_window() {
    let t = tempdir();
    store(t.path());
    let v = json(
        t.path(),
        &[
            "usage",
            "--root",
            ".",
            "--utc",
            "--since",
            "2026-06-02T00:00:00Z",
            "--until",
            "2026-06-03",
            "--json",
        ],
    );
    let keys: Vec<&str> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["2026-06-02"]);
    assert_eq!(v["total"]["input"], 805);
    assert_eq!(v["since"], "2026-06-02T00:00:00.000Z");
    assert_eq!(v["until"], "2026-06-03T00:00:00.000Z");
    // p1: 12 counted entries, 8 of them on the 2nd; f1: 2 own entries on the 3rd; o1: 2.
    assert_eq!(v["filteredOut"], 4 + 2 + 2);

    let r = run_in(
        t.path(),
        [
            "usage",
            "--root",
            ".",
            "--since",
            "2026-06-03",
            "--until",
            "2026-06-02",
        ],
    );
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--since must be before --until"),
        "{}",
        r.stderr
    );
}
