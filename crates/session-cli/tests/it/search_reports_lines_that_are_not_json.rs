//! `sessions search` reports the lines that could hold a match but are not JSON (one warning
//! per session on stderr, naming the first line and its byte offset, with the count of the
//! others), in text, `--json` and `-c` mode alike (stdout keeps the hits only), and the exit
//! code stays grep's: 0 or 1 by the hits of the lines that could be read.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::support::{plant, run_in, tempdir};

const HEADER: &str = "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"cwd\":\"/\"}\n";
const LABEL: &str = "{\"type\":\"label\",\"id\":\"l1\",\"parentId\":null,\"targetId\":\"x\",\"label\":\"zebra here\"}\n";

#[test]
fn lines_that_could_hold_a_match_but_are_not_json_are_reported() {
    let dir = tempdir();
    // Line 3 is garbled and holds the token; line 4 is garbage without it (it cannot hold a
    // match and is not read); line 5 is a torn tail holding it.
    let torn = format!(
        "{HEADER}{LABEL}{{\"type\":\"label\",\"label\":\"zebra{{\"type\":\"x\"}}\nnot json at all\n{{\"type\":\"label\",\"label\":\"a zebra"
    );
    plant(&dir.path().join("t.jsonl"), torn.as_bytes());
    let third = HEADER.len() + LABEL.len();
    let warning = format!(
        "warning: t.jsonl: 2 lines that could hold a match are not JSON and were not searched: \
         line 3 (byte {third}) and 1 more\n"
    );
    let r = run_in(dir.path(), ["search", "zebra", "t.jsonl"]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (
            0,
            "t.jsonl:2: l1 label - on-branch label: zebra here\n",
            warning.as_str()
        )
    );
    let r = run_in(dir.path(), ["search", "--json", "zebra", "t.jsonl"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, warning.as_str()));
    assert_eq!(r.stdout.lines().count(), 1);
    let v: serde_json::Value = serde_json::from_str(r.stdout.trim_end()).unwrap();
    assert_eq!(v["entryId"], "l1");
    let r = run_in(dir.path(), ["search", "-c", "zebra", "t.jsonl"]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (0, "t.jsonl:1\n", warning.as_str())
    );
    // No hit in the lines that could be read: exit code 1, the warning all the same.
    let r = run_in(
        dir.path(),
        ["search", "-c", "--type", "message", "zebra", "t.jsonl"],
    );
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (1, "", warning.as_str())
    );
    // One line: named alone.
    plant(
        &dir.path().join("one.jsonl"),
        format!("{HEADER}{LABEL}{{\"label\":\"zebra\"\n").as_bytes(),
    );
    let r = run_in(
        dir.path(),
        ["search", "-c", "zebra", "one.jsonl", "t.jsonl"],
    );
    assert_eq!(r.code, 0);
    assert_eq!(r.stdout, "one.jsonl:1\nt.jsonl:1\n");
    assert_eq!(
        r.stderr,
        format!(
            "warning: one.jsonl: 1 line that could hold a match is not JSON and was not \
             searched: line 3 (byte {third})\n{warning}"
        )
    );
    // A pattern without literal bytes makes every line a candidate: all three are reported.
    let r = run_in(dir.path(), ["search", "-c", "-e", "z.bra", "t.jsonl"]);
    assert_eq!(r.code, 0);
    let r = run_in(dir.path(), ["search", "-c", "-e", "\\w+", "t.jsonl"]);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (
            0,
            format!(
                "warning: t.jsonl: 3 lines that could hold a match are not JSON and were not \
                 searched: line 3 (byte {third}) and 2 more\n"
            )
            .as_str()
        )
    );
}

#[test]
fn a_clean_session_and_a_bom_before_the_header_give_no_warning() {
    let dir = tempdir();
    plant(
        &dir.path().join("b.jsonl"),
        format!("\u{feff}{HEADER}\n\r\n{LABEL}").as_bytes(),
    );
    let r = run_in(dir.path(), ["search", "-c", "-e", ".", "b.jsonl"]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (0, "b.jsonl:1\n", "")
    );
}
