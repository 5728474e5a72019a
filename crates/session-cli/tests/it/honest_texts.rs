//! Texts that say what happened: `check`'s `id-not-a-file-name` says whether a tool naming
//! transcripts after the id would write elsewhere or fail, and flags ids whose `<id>.jsonl`
//! would exceed 255 bytes; `stats` counts one repeated row in the singular; `list` says
//! "cannot read" once; an unknown agent's path escapes invisible characters as its name does.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::support::*;
use serde_json::{Value, json};

fn with_id(id: &str) -> Vec<u8> {
    let header = json!({"type": "session", "version": 3, "id": id,
        "timestamp": "2026-07-01T00:00:00.000Z", "cwd": "/w"});
    let mut bytes = serde_json::to_vec(&header).unwrap();
    bytes.push(b'\n');
    bytes
}

fn id_problem(dir: &std::path::Path, file: &str) -> Value {
    let r = run_in_timeout(dir, ["check", "--json", file]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    v[0]["problems"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["kind"] == "id-not-a-file-name")
        .cloned()
        .unwrap_or(Value::Null)
}

#[test]
fn id_not_a_file_name_says_what_a_tool_would_do_and_counts_the_jsonl_suffix() {
    let tmp = tempdir();
    let d = tmp.path();
    let id249 = "a".repeat(249);
    let id250 = "a".repeat(250);
    plant(&d.join("ok.jsonl"), &with_id(&id249));
    plant(&d.join("long.jsonl"), &with_id(&id250));
    plant(&d.join("empty.jsonl"), &with_id(""));
    plant(&d.join("nul.jsonl"), &with_id("a\u{0}b"));
    // 249 + ".jsonl" is 255 bytes: a file name.
    assert_eq!(id_problem(d, "ok.jsonl"), Value::Null);
    assert_eq!(
        id_problem(d, "long.jsonl")["message"],
        format!(
            "session id \"{id250}\" could not be a file name: 250 bytes make \"<id>.jsonl\" 256 \
             bytes, over the 255-byte file name limit; a tool that names transcripts after \
             their id (OpenClaw's <id>.jsonl, pi's <timestamp>_<id>.jsonl) would fail to \
             create the file"
        )
    );
    assert_eq!(
        id_problem(d, "empty.jsonl")["message"],
        "session id \"\" could not be a file name: it is empty; a tool that names transcripts \
         after their id would get a hidden file name, and one that uses it as a directory name \
         would address the sessions directory itself or its parent"
    );
    assert_eq!(
        id_problem(d, "nul.jsonl")["message"],
        "session id \"a\\u{0}b\" could not be a file name: it contains NUL; a tool that names \
         transcripts after their id would fail to create the file"
    );
}

#[test]
fn stats_counts_one_repeated_row_in_the_singular() {
    let tmp = tempdir();
    let d = tmp.path();
    let mut bytes = session_bytes("s1", NOW);
    // The message row again: one more row repeating an id.
    let second = bytes.split(|b| *b == b'\n').nth(1).unwrap().to_vec();
    bytes.extend_from_slice(&second);
    bytes.push(b'\n');
    plant(&d.join("dup.jsonl"), &bytes);
    let r = run_in_timeout(d, ["stats", "dup.jsonl"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.lines().any(|l| l
            == "  entries        1 (each id once; 1 more row repeats an id and is not counted)"),
        "{}",
        r.stdout
    );
}

#[test]
fn list_says_cannot_read_once_for_a_link_loop() {
    let tmp = tempdir();
    let d = tmp.path();
    std::os::unix::fs::symlink("b.jsonl", d.join("a.jsonl")).unwrap();
    std::os::unix::fs::symlink("a.jsonl", d.join("b.jsonl")).unwrap();
    let r = run_in_timeout(d, ["list", "--dir", "."]);
    assert!(
        r.stderr
            .contains("a.jsonl: cannot read: Too many levels of symbolic links"),
        "{}",
        r.stderr
    );
    assert!(
        !r.stderr.contains("cannot read: cannot be read"),
        "{}",
        r.stderr
    );
}

#[test]
fn an_unknown_agent_message_escapes_a_zero_width_space_in_the_path_too() {
    let tmp = tempdir();
    let d = tmp.path();
    session_store::io::ensure_dir(&d.join("state/agents/main/sessions")).unwrap();
    let r = run_in_timeout(d, ["list", "--root", "state", "--agent", "ma\u{200b}in"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(
        r.stderr,
        "error: unknown agent \"ma\\u{200b}in\": state/agents/ma\\u{200b}in does not exist; did \
         you mean: main?\n"
    );
}
