//! Counts and reports that do not lie: `check` names a second session header by line and byte
//! offset; `stats`, `check`'s entry count and `list` count each entry id once (of the rows
//! sharing an id the last one counts, as every lookup does); `list` flags sessions whose header
//! id another file shares, and a lookup by that id stays an ambiguity naming both files.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::support::*;
use serde_json::{Value, json};

const HEADER_ONE: &str = r#"{"type":"session","version":3,"id":"s-one","timestamp":"2026-01-02T09:00:00.000Z","cwd":"/w"}"#;
const MESSAGE_ONE: &str = r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-02T09:00:01.000Z","message":{"role":"user","content":"hello","timestamp":1767344401000}}"#;
const HEADER_TWO: &str = r#"{"type":"session","version":3,"id":"s-two","timestamp":"2026-01-03T09:00:00.000Z","cwd":"/w"}"#;
const MESSAGE_TWO: &str = r#"{"type":"message","id":"u9","parentId":null,"timestamp":"2026-01-03T09:00:01.000Z","message":{"role":"user","content":"other file","timestamp":1767430801000}}"#;

/// Two sessions joined into one file: the second header is line 3, at the byte after the first
/// two lines.
#[test]
fn check_reports_a_second_header_line_with_its_line_and_byte_offset() {
    let dir = tempdir();
    let text = format!("{HEADER_ONE}\n{MESSAGE_ONE}\n{HEADER_TWO}\n{MESSAGE_TWO}\n");
    plant(&dir.path().join("joined.jsonl"), text.as_bytes());
    let offset = HEADER_ONE.len() + 1 + MESSAGE_ONE.len() + 1;
    assert_eq!(offset, 248);
    let r = run_in(dir.path(), ["check", "joined.jsonl"]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (
            1,
            "joined.jsonl: info: multiple-tips: tips: u1, u9\n\
             joined.jsonl:3: byte 248: extra-header: a second session header (id \"s-two\") \
             after the header on line 1 (id \"s-one\"): the session is the first header; this \
             line is kept verbatim as an opaque row, outside the tree and the context (two \
             files joined into one?)\n\
             checked 1 file: 0 ok, 1 with problems (1 problem)\n",
            ""
        )
    );
    let r = run_in(dir.path(), ["check", "--json", "joined.jsonl"]);
    assert_eq!(r.code, 1);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        v[0]["problems"],
        json!([{
            "kind": "multiple-tips",
            "severity": "info",
            "line": null,
            "byteOffset": null,
            "message": "tips: u1, u9",
        }, {
            "kind": "extra-header",
            "severity": "error",
            "line": 3,
            "byteOffset": 248,
            "message": "a second session header (id \"s-two\") after the header on line 1 (id \
                        \"s-one\"): the session is the first header; this line is kept verbatim \
                        as an opaque row, outside the tree and the context (two files joined \
                        into one?)",
        }])
    );
    // Without the second header the file is clean.
    let clean = dir.path().join("clean.jsonl");
    plant(&clean, format!("{HEADER_ONE}\n{MESSAGE_ONE}\n").as_bytes());
    let r = run_in(dir.path(), ["check", "clean.jsonl"]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "clean.jsonl: ok (1 entry)\nchecked 1 file: 1 ok\n")
    );
}

/// A session whose ids repeat: `u1` on two message rows, `a1` on a message and then on a
/// label (its last row, so `a1` is a label). Entries: u1, a1, m3; messages: u1, m3.
fn duplicate_rows() -> String {
    [
        r#"{"type":"session","version":3,"id":"s-dup","timestamp":"2026-01-02T09:00:00.000Z","cwd":"/w"}"#,
        r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-02T09:00:01.000Z","message":{"role":"user","content":"hello","timestamp":1767344401000}}"#,
        r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-02T09:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hi"}],"timestamp":1767344402000}}"#,
        r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-02T09:00:03.000Z","message":{"role":"user","content":"again","timestamp":1767344403000}}"#,
        r#"{"type":"label","id":"a1","parentId":"u1","timestamp":"2026-01-02T09:00:04.000Z","targetId":"u1","label":"x"}"#,
        r#"{"type":"message","id":"m3","parentId":"u1","timestamp":"2026-01-02T09:00:05.000Z","message":{"role":"user","content":"third","timestamp":1767344405000}}"#,
    ]
    .map(|l| format!("{l}\n"))
    .concat()
}

#[test]
fn stats_check_and_list_count_each_entry_id_once() {
    let dir = tempdir();
    let file = dir.path().join("sessions/dup.jsonl");
    plant(&file, duplicate_rows().as_bytes());

    let r = run_in(dir.path(), ["stats", "--json", "sessions/dup.jsonl"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let s = &v[0];
    assert_eq!(
        (
            &s["entries"],
            &s["duplicateRows"],
            &s["byKind"],
            &s["byRole"]
        ),
        (
            &json!(3),
            &json!(2),
            &json!({"label": 1, "message": 2}),
            &json!({"user": 2})
        )
    );
    let r = run_in(dir.path(), ["stats", "sessions/dup.jsonl"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        lines[3..6],
        [
            "  entries        3 (each id once; 2 more rows repeat an id and are not counted)",
            "    label                        1",
            "    message                      2  (user 2)",
        ]
    );

    // check's summary line counts entries the same way (and reports the duplicates).
    let r = run_in(dir.path(), ["check", "--json", "sessions/dup.jsonl"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let kinds: Vec<&str> = v[0]["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["kind"].as_str().unwrap())
        .collect();
    // The label a1 and the message m3 both hang under u1: two tips, reported as info.
    assert_eq!(kinds, ["multiple-tips", "duplicate-id", "duplicate-id"]);
    assert_eq!(v[0]["tips"], json!(["a1", "m3"]));

    // list: MSGS and messageCount count u1 and m3; messageRows is OpenClaw's count of rows.
    let r = run_in(dir.path(), ["list", "--dir", "sessions", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let s = &v["sessions"][0];
    assert_eq!(
        (&s["messageCount"], &s["messageRows"], &s["idSharedWith"]),
        (&json!(2), &json!(4), &json!([]))
    );
    let r = run_in(dir.path(), ["list", "--dir", "sessions"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let row = r.stdout.lines().nth(1).unwrap();
    let cells: Vec<&str> = row.split("  ").filter(|c| !c.is_empty()).collect();
    assert_eq!(
        cells,
        [
            "s-dup",
            "\"hello\"",
            "2",
            "2026-01-02 09:00",
            "847 B",
            "sessions/dup.jsonl"
        ]
    );
}

/// Two files whose headers carry one session id, and a third with its own: both sharers are
/// flagged with the other's path; a lookup by that id is an ambiguity naming both.
#[test]
fn list_flags_sessions_whose_header_id_another_file_shares() {
    let dir = tempdir();
    let d = dir.path();
    let shared = "0195f000-0000-7000-8000-00000000aaaa";
    plant(
        &d.join("sessions/a.jsonl"),
        &session_bytes(shared, NOW - DAY),
    );
    plant(
        &d.join("sessions/b.jsonl"),
        &session_bytes(shared, NOW - 2 * DAY),
    );
    plant(
        &d.join("sessions/c.jsonl"),
        &session_bytes("0195f000-0000-7000-8000-00000000cccc", NOW - 3 * DAY),
    );
    let r = run_in(d, ["list", "--dir", "sessions", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let got: Vec<(&str, &Value)> = v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["path"].as_str().unwrap(), &s["idSharedWith"]))
        .collect();
    assert_eq!(
        got,
        [
            ("sessions/a.jsonl", &json!(["sessions/b.jsonl"])),
            ("sessions/b.jsonl", &json!(["sessions/a.jsonl"])),
            ("sessions/c.jsonl", &json!([])),
        ]
    );

    let r = run_in(d, ["list", "--dir", "sessions"]);
    assert_eq!(r.code, 0);
    let ids: Vec<&str> = r
        .stdout
        .lines()
        .skip(1)
        .map(|l| l.split("  ").next().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "0195f000-0000-7000-8000-00000000a*",
            "0195f000-0000-7000-8000-00000000a*",
            "0195f000-0000-7000-8000-00000000c"
        ]
    );
    assert_eq!(
        r.stderr,
        "warning: 2 files share the session id \"0195f000-0000-7000-8000-00000000aaaa\" \
         (--session by that id is ambiguous wherever two of them are found; give the path \
         instead): sessions/a.jsonl, sessions/b.jsonl\n"
    );

    let r = run_in(d, ["tree", "--dir", "sessions", "--session", shared]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (
            2,
            "",
            "error: session \"0195f000-0000-7000-8000-00000000aaaa\" is ambiguous in sessions \
             (several files have that session id): a.jsonl, b.jsonl\n"
        )
    );
}
