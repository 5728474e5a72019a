//! Sessions with more than one tip (docs/DEVIATIONS.md D30): `sessions tree` prints
//! `tips: <id>, <id>` under its header and a `tips` array in JSON; `sessions check` reports it
//! as information (`multiple-tips`, not a problem: exit code 0, the file is `ok`) with a `tips`
//! array per file. A linear session gets no tips line. A fork made by two writers under the
//! reference's policy (`ForeignAppendPolicy::AppendOnOwnLeaf`) shows up the same way.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::Path;

use crate::support::*;
use serde_json::{Value, json};
use session_store::{ForeignAppendPolicy, SessionManager};

const HEADER: &str = r#"{"type":"session","version":3,"id":"0195f000-0000-7000-8000-0000000000aa","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;

fn message(id: &str, parent: Option<&str>, role: &str, text: &str) -> String {
    let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"{role}","content":"{text}","timestamp":1}}}}"#
    )
}

/// u1 → a1 → {x1, y1}: two tips.
fn forked(dir: &Path) {
    let text = [
        HEADER.to_owned(),
        message("u1000001", None, "user", "q"),
        message("a1000001", Some("u1000001"), "assistant", "r"),
        message("x1000001", Some("a1000001"), "user", "one way"),
        message("y1000001", Some("a1000001"), "user", "another way"),
    ]
    .join("\n");
    plant(&dir.join("forked.jsonl"), format!("{text}\n").as_bytes());
}

fn json_of(r: &Run) -> Value {
    serde_json::from_str(&r.stdout).unwrap()
}

#[test]
fn tree_prints_the_tips_of_a_forked_session() {
    let dir = tempdir();
    forked(dir.path());
    let r = run_in(dir.path(), ["tree", "forked.jsonl"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        lines[..2],
        [
            "forked.jsonl — 4 entries, 1 root, 1 branch point, leaf y1000001",
            "tips: x1000001, y1000001",
        ]
    );

    let r = run_in(dir.path(), ["tree", "forked.jsonl", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(json_of(&r)["tips"], json!(["x1000001", "y1000001"]));
}

#[test]
fn check_reports_the_tips_as_information_and_exits_0() {
    let dir = tempdir();
    forked(dir.path());
    let r = run_in(dir.path(), ["check", "forked.jsonl"]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (
            0,
            "forked.jsonl: info: multiple-tips: tips: x1000001, y1000001\n\
             forked.jsonl: ok (4 entries)\n\
             checked 1 file: 1 ok\n",
            ""
        )
    );

    let r = run_in(dir.path(), ["check", "--json", "forked.jsonl"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        json_of(&r),
        json!([{
            "file": "forked.jsonl",
            "ok": true,
            "error": null,
            "tips": ["x1000001", "y1000001"],
            "problems": [{
                "kind": "multiple-tips",
                "severity": "info",
                "line": null,
                "byteOffset": null,
                "message": "tips: x1000001, y1000001"
            }]
        }])
    );
    // Not a problem for the commands that count them.
    let r = run_in(dir.path(), ["stats", "forked.jsonl", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(json_of(&r)[0]["problems"], json!(0));
}

#[test]
fn a_linear_session_has_one_tip_and_no_tips_line() {
    let dir = tempdir();
    let text = [
        HEADER.to_owned(),
        message("u1000001", None, "user", "q"),
        message("a1000001", Some("u1000001"), "assistant", "r"),
    ]
    .join("\n");
    plant(
        &dir.path().join("linear.jsonl"),
        format!("{text}\n").as_bytes(),
    );
    let tree = run_in(dir.path(), ["tree", "linear.jsonl"]);
    assert_eq!(tree.code, 0, "{}", tree.stderr);
    assert!(!tree.stdout.contains("tips:"), "{}", tree.stdout);
    let tree = run_in(dir.path(), ["tree", "linear.jsonl", "--json"]);
    assert_eq!(json_of(&tree)["tips"], json!(["a1000001"]));
    let check = run_in(dir.path(), ["check", "linear.jsonl"]);
    assert_eq!(
        (check.code, check.stdout.as_str()),
        (0, "linear.jsonl: ok (2 entries)\nchecked 1 file: 1 ok\n")
    );
    let check = run_in(dir.path(), ["check", "--json", "linear.jsonl"]);
    assert_eq!(json_of(&check)[0]["tips"], json!(["a1000001"]));
}

#[test]
fn a_fork_left_by_two_writers_under_the_reference_policy_is_listed() {
    let dir = tempdir();
    let file = dir.path().join("s.jsonl");
    let text = [
        HEADER.to_owned(),
        message("u1000001", None, "user", "q"),
        message("a1000001", Some("u1000001"), "assistant", "r"),
    ]
    .join("\n");
    plant(&file, format!("{text}\n").as_bytes());
    let mut ours = SessionManager::open(&file, None, None).unwrap();
    ours.set_foreign_append_policy(ForeignAppendPolicy::AppendOnOwnLeaf);
    let mut theirs = SessionManager::open(&file, None, None).unwrap();
    let user = |t: &str| {
        session_format::json::parse_value(
            format!(r#"{{"role":"user","content":"{t}","timestamp":2}}"#).as_bytes(),
        )
        .unwrap()
    };
    let t = theirs.append_message(user("theirs")).unwrap();
    let o = ours.append_message(user("ours")).unwrap();

    let r = run_in(dir.path(), ["check", "s.jsonl"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout.lines().next().unwrap(),
        format!("s.jsonl: info: multiple-tips: tips: {t}, {o}")
    );
    let r = run_in(dir.path(), ["tree", "s.jsonl"]);
    assert_eq!(r.stdout.lines().nth(1).unwrap(), format!("tips: {t}, {o}"));
}
