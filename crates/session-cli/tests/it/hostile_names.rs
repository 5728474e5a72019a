//! Session names (`--session NAME`) and agent ids (`--agent ID`) that would address anything
//! but a direct child of the store are usage errors (exit code 2) in every subcommand, read and
//! write alike, naming the value and the rule, before anything is read or written: `repair
//! --agent main --session ../../../x` leaves the file at that target byte for byte (mtime and
//! inode too). `check` reports a header whose id could not be a file name; ids read from files
//! are never turned into paths. Each test compares the whole temporary tree before and after.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::support::*;
use serde_json::{Value, json};

/// Each hostile value (the OS cannot pass a NUL in an argument; the store tests cover it),
/// with the reason the validator gives.
fn hostile() -> Vec<(String, &'static str)> {
    vec![
        (String::new(), "is empty"),
        (".".to_owned(), "is '.'"),
        ("..".to_owned(), "is '..'"),
        ("a/b".to_owned(), "contains '/'"),
        ("../../../x".to_owned(), "contains '/'"),
        ("a\\b".to_owned(), "contains '\\'"),
        (
            "a\u{1}b".to_owned(),
            "contains the control character U+0001",
        ),
        (
            "a\u{1b}[2Jb".to_owned(),
            "contains the control character U+001B",
        ),
        ("/etc/x".to_owned(), "is an absolute path"),
        ("x".repeat(256), "is 256 bytes long, more than 255"),
    ]
}

/// `<tmp>/state/agents/main/sessions/s.jsonl` plus a repairable file at `<tmp>/state/x.jsonl`,
/// where `--agent main --session ../../../x` would lead (`sessions/..` is `main`, `../..` is
/// `agents`, `../../..` is `state`). Its mtime is moved 20 years back, so any write shows.
fn store() -> tempfile::TempDir {
    let tmp = tempdir();
    plant(
        &tmp.path().join("state/agents/main/sessions/s.jsonl"),
        &session_bytes("0195f3a0-7c1e-7000-8000-0000000000b1", NOW),
    );
    let target = tmp.path().join("state/x.jsonl");
    let mut bytes = session_bytes("target", NOW);
    bytes.extend_from_slice(b"{not json\n");
    plant(&target, &bytes);
    let past = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
    std::fs::File::open(&target)
        .unwrap()
        .set_modified(past)
        .unwrap();
    tmp
}

/// Runs `args` and asserts a usage error with exactly `message`, no output, and an unchanged
/// tree (listing and every file's bytes).
fn assert_refused(dir: &Path, args: &[&str], message: &str) {
    let before = (listing(dir), contents(dir));
    let target = fingerprint(&dir.join("state/x.jsonl"));
    let r = run_in_timeout(dir, args);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (2, "", format!("error: {message}\n").as_str()),
        "{args:?}"
    );
    assert_eq!((listing(dir), contents(dir)), before, "{args:?}");
    assert_eq!(fingerprint(&dir.join("state/x.jsonl")), target, "{args:?}");
}

/// A session name that climbs out of the sessions directory: `repair` must not rewrite
/// `<root>/x.jsonl` (nor back it up beside it) nor create a lock file there.
#[test]
fn repair_with_a_traversal_session_name_touches_nothing() {
    let tmp = store();
    let d = tmp.path();
    // The target is a file repair would change (a malformed line), so refusing is what keeps
    // it: asked by path, repair --dry-run says it would drop that line.
    let by_path = run_in_timeout(d, ["repair", "--dry-run", "state/x.jsonl"]);
    assert_eq!(by_path.code, 1, "{}{}", by_path.stdout, by_path.stderr);
    let message = r#"invalid session name "../../../x": contains '/'"#;
    for extra in [&[][..], &["--dry-run"][..], &["--no-backup"][..]] {
        let mut args = vec![
            "repair",
            "--root",
            "state",
            "--agent",
            "main",
            "--session",
            "../../../x",
        ];
        args.extend_from_slice(extra);
        assert_refused(d, &args, message);
    }
    assert_eq!(
        listing(d),
        [
            "state/",
            "state/agents/",
            "state/agents/main/",
            "state/agents/main/sessions/",
            "state/agents/main/sessions/s.jsonl",
            "state/x.jsonl",
        ]
    );
}

/// The subcommands that take `--session NAME`, each with its other arguments.
fn session_commands(name: &str) -> Vec<Vec<String>> {
    let at = |cmd: &str, extra: &[&str]| {
        let mut v: Vec<String> = [cmd, "--root", "state", "--agent", "main", "--session", name]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        v.extend(extra.iter().map(|s| (*s).to_owned()));
        v
    };
    vec![
        at("tree", &[]),
        at("context", &[]),
        at("show", &["u1"]),
        at("stats", &[]),
        at("check", &[]),
        at("export", &["--format", "jsonl"]),
        at("repair", &[]),
        at("repair", &["--dry-run"]),
        at("clear", &["--dry-run"]),
        at("clear", &["--yes"]),
        at("clear", &["--yes", "--purge"]),
    ]
}

#[test]
fn every_subcommand_refuses_a_hostile_session_name() {
    let tmp = store();
    let d = tmp.path();
    for (value, why) in hostile() {
        let message = format!("invalid session name {value:?}: {why}");
        for args in session_commands(&value) {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            assert_refused(d, &args, &message);
        }
        // `--dir DIR --session NAME` joins the name onto DIR: refused the same way.
        for cmd in ["tree", "context", "check"] {
            assert_refused(
                d,
                &[
                    cmd,
                    "--dir",
                    "state/agents/main/sessions",
                    "--session",
                    &value,
                ],
                &message,
            );
        }
    }
}

#[test]
fn every_subcommand_refuses_a_hostile_agent_id() {
    let tmp = store();
    let d = tmp.path();
    let mut values = hostile();
    values.push(("../main".to_owned(), "contains '/'"));
    for (value, why) in values {
        let message = format!("invalid agent id {value:?}: {why}");
        let v = value.as_str();
        let with_session = |cmd: &'static str, extra: &[&'static str]| {
            let mut a = vec![cmd, "--root", "state", "--agent", v, "--session", "s"];
            a.extend_from_slice(extra);
            a
        };
        let mut runs = vec![
            vec!["list", "--root", "state", "--agent", v],
            vec!["list", "--root", "state", "--agent", v, "--json"],
            vec!["check", "--root", "state", "--agent", v],
            vec!["stats", "--root", "state", "--agent", v],
            vec![
                "archive",
                "--root",
                "state",
                "--agent",
                v,
                "--max-age",
                "1d",
            ],
            vec![
                "archive",
                "--root",
                "state",
                "--agent",
                v,
                "--max-age",
                "1d",
                "--dry-run",
            ],
            vec!["clear", "--root", "state", "--agent", v, "--all", "--yes"],
        ];
        runs.push(with_session("tree", &[]));
        runs.push(with_session("context", &[]));
        runs.push(with_session("show", &["u1"]));
        runs.push(with_session("check", &[]));
        runs.push(with_session("stats", &[]));
        runs.push(with_session("export", &["--format", "markdown"]));
        runs.push(with_session("repair", &[]));
        runs.push(with_session("clear", &["--yes"]));
        runs.push(with_session("clear", &["--dry-run"]));
        for args in runs {
            assert_refused(d, &args, &message);
        }
    }
}

/// 255 bytes is a valid name: it is looked up (and not found), not refused.
#[test]
fn names_of_255_bytes_are_looked_up_not_refused() {
    let tmp = store();
    let d = tmp.path();
    let long = "x".repeat(255);
    let r = run_in_timeout(
        d,
        [
            "tree",
            "--root",
            "state",
            "--agent",
            "main",
            "--session",
            &long,
        ],
    );
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr),
        (
            2,
            "",
            format!(
                "error: unknown session \"{long}\" in state/agents/main/sessions; sessions: \
                 0195f3a0-7c1e-7000-8000-0000000000b1, s\n"
            )
        )
    );
    let r = run_in_timeout(
        d,
        [
            "tree",
            "--root",
            "state",
            "--agent",
            &long,
            "--session",
            "s",
        ],
    );
    assert_eq!(
        (r.code, r.stderr),
        (
            2,
            format!(
                "error: unknown agent \"{long}\": state/agents/{long} does not exist; agents: \
                 main\n"
            )
        )
    );
    // A session key is not a name: `clear` maps it to the key's encoded file name, which
    // never leaves the sessions directory.
    let r = run_in_timeout(
        d,
        [
            "clear",
            "--root",
            "state",
            "--agent",
            "main",
            "--session",
            "agent:main:../../x",
            "--dry-run",
        ],
    );
    let sessions = canonical(&d.join("state/agents/main/sessions"));
    assert_eq!(
        (r.code, r.stderr),
        (
            2,
            format!("error: no session file %2E.%2F..%2Fx.jsonl in {sessions}\n")
        )
    );
}

/// A header id that could not be a file name is a `check` error (line 1, byte 0) and stops
/// nothing else: the session is listed, shown, exported and checked like any other, and no
/// command makes a path of the id.
#[test]
fn header_ids_that_could_not_be_file_names_are_reported_and_never_become_paths() {
    let tmp = tempdir();
    let d = tmp.path();
    let sessions = d.join("outer/sessions");
    let ids = [
        ("evil.jsonl", "../../evil", "contains '/'"),
        ("empty.jsonl", "", "is empty"),
        ("dots.jsonl", "..", "is '..'"),
        ("abs.jsonl", "/etc/passwd", "is an absolute path"),
        (
            "ctl.jsonl",
            "a\u{7}b",
            "contains the control character U+0007",
        ),
    ];
    for (file, id, _) in ids {
        let header = json!({"type": "session", "version": 3, "id": id,
            "timestamp": "2026-07-01T00:00:00.000Z", "cwd": "/w"});
        let mut bytes = serde_json::to_vec(&header).unwrap();
        bytes.extend_from_slice(
            b"\n{\"type\":\"message\",\"id\":\"u1\",\"parentId\":null,\
              \"timestamp\":\"2026-07-01T00:00:00.000Z\",\"message\":{\"role\":\"user\",\
              \"content\":\"hi\",\"timestamp\":1782864000000}}\n",
        );
        plant(&sessions.join(file), &bytes);
    }
    plant(
        &sessions.join("fine.jsonl"),
        &session_bytes("0195f3a0-7c1e-7000-8000-0000000000b1", NOW),
    );
    let before = (listing(d), contents(d));

    let r = run_in_timeout(d, ["check", "--dir", "outer/sessions"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let mut want = String::new();
    for (file, id, why) in ids {
        let shown = id.replace('\u{7}', "\\u{7}");
        // What a tool naming transcripts `<id>.jsonl` would do, per rule.
        let consequence = match file {
            "evil.jsonl" | "abs.jsonl" => {
                "write outside the sessions directory or into a sub-directory of it"
            }
            "ctl.jsonl" => "create a file whose name holds that character",
            _ => {
                "get a hidden file name, and one that uses it as a directory name would \
                 address the sessions directory itself or its parent"
            }
        };
        want.push_str(&format!(
            "outer/sessions/{file}:1: byte 0: id-not-a-file-name: session id \"{shown}\" could \
             not be a file name: it {why}; a tool that names transcripts after their id would \
             {consequence}\n"
        ));
    }
    want.push_str("outer/sessions/fine.jsonl: ok (1 entry)\n");
    let mut got: Vec<&str> = r.stdout.lines().collect();
    let summary = got.pop().unwrap();
    assert_eq!(
        summary, "checked 6 files: 1 ok, 5 with problems (5 problems)",
        "{}",
        r.stdout
    );
    let mut got_sorted = got.clone();
    got_sorted.sort_unstable();
    let mut want_sorted: Vec<&str> = want.lines().collect();
    want_sorted.sort_unstable();
    assert_eq!(got_sorted, want_sorted);

    let r = run_in_timeout(d, ["check", "--json", "outer/sessions/evil.jsonl"]);
    assert_eq!(r.code, 1);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        v,
        json!([{
            "file": "outer/sessions/evil.jsonl",
            "ok": false,
            "error": null,
            "tips": ["u1"],
            "problems": [{
                "kind": "id-not-a-file-name",
                "severity": "error",
                "line": 1,
                "byteOffset": 0,
                "message": "session id \"../../evil\" could not be a file name: it contains '/'; \
                            a tool that names transcripts after their id would write outside \
                            the sessions directory or into a sub-directory of it"
            }]
        }])
    );

    // Valid ids are not reported.
    let r = run_in_timeout(d, ["check", "outer/sessions/fine.jsonl"]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (
            0,
            "outer/sessions/fine.jsonl: ok (1 entry)\nchecked 1 file: 1 ok\n"
        )
    );

    // Listed, shown and exported: the id is data, never a path.
    let r = run_in_timeout(d, ["list", "--dir", "outer/sessions", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let listed: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(listed["skipped"], json!([]));
    let mut listed_ids: Vec<String> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_owned())
        .collect();
    listed_ids.sort();
    assert_eq!(
        listed_ids,
        [
            "",
            "..",
            "../../evil",
            "/etc/passwd",
            "0195f3a0-7c1e-7000-8000-0000000000b1",
            "a\u{7}b",
        ]
    );
    for args in [
        vec!["tree", "outer/sessions/evil.jsonl"],
        vec!["context", "outer/sessions/evil.jsonl"],
        vec!["show", "outer/sessions/evil.jsonl", "u1"],
        vec!["stats", "outer/sessions/evil.jsonl"],
        vec![
            "export",
            "outer/sessions/evil.jsonl",
            "--format",
            "markdown",
        ],
        vec!["export", "outer/sessions/evil.jsonl", "--format", "html"],
    ] {
        let r = run_in_timeout(d, &args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    }
    assert_eq!((listing(d), contents(d)), before);
}
