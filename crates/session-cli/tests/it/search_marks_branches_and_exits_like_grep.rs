//! `sessions search`: hits on every branch with their markers (text, JSON lines pinned with
//! insta, `-c` counts), grep's exit codes, the per-session and overall caps, addressing a
//! whole store (every agent, trajectory sidecars left out), a v1 file (the ids its in-memory
//! migration assigns, searchable with `--fields id`, the file unchanged), escaped control characters, and an OpenClaw
//! 2026.9.6 SQLite store giving the same hits as the same rows in JSONL files.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{fingerprint, plant, plant_copy, run_in, shared_dir, tempdir};

/// The session with the planted token (`crates/session-query/tests/fixtures/planted.jsonl`,
/// the library tests' fixture): `zebra-token` in a tool argument and a tool call id (a1), a
/// tool result (t1, as `zebra-tokens`), on an abandoned branch (u2x written with a `\u002d`
/// escape, a3x in thinking), in a compaction summary (c1) and a label (l1); `ZEBRA-TOKEN` in
/// u3; `caf\u00e9` in a2; and in the header's cwd (never searched).
fn planted() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../session-query/tests/fixtures/planted.jsonl")
}

fn planted_in(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    plant(&p, &std::fs::read(planted()).unwrap());
    p
}

#[test]
fn hits_on_every_branch_in_text_json_and_counts() {
    let dir = tempdir();
    planted_in(dir.path(), "s.jsonl");
    let r = run_in(dir.path(), ["search", "zebra-token", "s.jsonl"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert_eq!(
        r.stdout,
        "s.jsonl:4: a1 assistant 2026-11-01T10:04:00.000Z on-branch args: /srv/zebra-token.txt\n\
         s.jsonl:5: t1 toolResult 2026-11-01T10:05:00.000Z on-branch result: file says zebra-tokens\n\
         s.jsonl:7: u2x user 2026-11-01T10:07:00.000Z off-branch text: try the zebra-token idea\n\
         s.jsonl:8: a3x assistant 2026-11-01T10:08:00.000Z off-branch thinking: the zebra-token idea fails\n\
         s.jsonl:9: c1 compaction 2026-11-01T10:09:00.000Z on-branch summary: Summary: zebra-token was read.\n\
         s.jsonl:11: l1 label 2026-11-01T10:11:00.000Z on-branch label: zebra-token read\n"
    );
    let r = run_in(
        dir.path(),
        [
            "search",
            "--json",
            "-i",
            "--context",
            "6",
            "zebra-token",
            "s.jsonl",
        ],
    );
    assert_eq!(r.code, 0);
    insta::assert_snapshot!("search_json_lines", r.stdout);
    let r = run_in(dir.path(), ["search", "-c", "zebra-token", "s.jsonl"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "s.jsonl:6\n"));
    let r = run_in(
        dir.path(),
        ["search", "-c", "--json", "-w", "zebra-token", "s.jsonl"],
    );
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "{\"session\":\"s.jsonl\",\"agent\":null,\"count\":5}\n")
    );
}

#[test]
fn exit_codes_are_greps() {
    let dir = tempdir();
    planted_in(dir.path(), "s.jsonl");
    let r = run_in(dir.path(), ["search", "no-such-token", "s.jsonl"]);
    assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (1, "", ""));
    // The header's cwd holds the token, but the header is not searched.
    let r = run_in(dir.path(), ["search", "-c", "srv/zebra-token\"", "s.jsonl"]);
    assert_eq!(r.code, 1);
    // A missing file is an error (2), and the other files are still searched.
    let r = run_in(
        dir.path(),
        ["search", "-c", "café", "missing.jsonl", "s.jsonl"],
    );
    assert_eq!(r.code, 2);
    assert_eq!(r.stdout, "s.jsonl:1\n");
    assert!(r.stderr.contains("missing.jsonl"), "{}", r.stderr);
    // A bad regex and a bad field list are usage errors.
    let r = run_in(dir.path(), ["search", "-e", "a(", "s.jsonl"]);
    assert_eq!(r.code, 2);
    assert_eq!(r.stderr, "error: invalid regex: unclosed group in \"a(\"\n");
    let r = run_in(
        dir.path(),
        ["search", "--fields", "text,nope", "x", "s.jsonl"],
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("unknown field \"nope\""), "{}", r.stderr);
}

#[test]
fn max_count_limit_and_filters() {
    let dir = tempdir();
    let sessions = dir.path().join("sessions");
    planted_in(&sessions, "a.jsonl");
    planted_in(&sessions, "b.jsonl");
    let ids = |args: &[&str]| -> Vec<String> {
        let mut full = vec!["search", "--json", "--dir", "sessions"];
        full.extend_from_slice(args);
        let r = run_in(dir.path(), &full);
        r.stdout
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                format!(
                    "{}:{}",
                    Path::new(v["session"].as_str().unwrap())
                        .file_name()
                        .unwrap()
                        .to_string_lossy(),
                    v["entryId"].as_str().unwrap()
                )
            })
            .collect()
    };
    assert_eq!(
        ids(&["-m", "2", "zebra-token"]),
        ["a.jsonl:a1", "a.jsonl:t1", "b.jsonl:a1", "b.jsonl:t1"]
    );
    assert_eq!(ids(&["--limit", "7", "zebra-token"]).len(), 7);
    assert_eq!(ids(&["--limit", "7", "zebra-token"])[6], "b.jsonl:a1");
    assert_eq!(
        ids(&["--role", "user,assistant", "-m", "3", "zebra-token"]),
        [
            "a.jsonl:a1",
            "a.jsonl:u2x",
            "a.jsonl:a3x",
            "b.jsonl:a1",
            "b.jsonl:u2x",
            "b.jsonl:a3x"
        ]
    );
    assert_eq!(
        ids(&["--type", "label", "zebra-token"]),
        ["a.jsonl:l1", "b.jsonl:l1"]
    );
    assert_eq!(
        ids(&[
            "--since",
            "2026-11-01T10:08:00Z",
            "--until",
            "2026-11-01T10:09:00Z",
            "zebra-token"
        ]),
        ["a.jsonl:a3x", "a.jsonl:c1", "b.jsonl:a3x", "b.jsonl:c1"]
    );
    assert_eq!(
        ids(&["--model", "gpt", "-m", "1", "zebra-token"]),
        ["a.jsonl:a1", "b.jsonl:a1"]
    );
    assert_eq!(
        ids(&["--fields", "id", "call_zebra"]),
        ["a.jsonl:a1", "a.jsonl:t1", "b.jsonl:a1", "b.jsonl:t1"]
    );
}

#[test]
fn a_store_is_searched_across_agents_without_sidecars() {
    let dir = tempdir();
    let state = dir.path().join("state");
    planted_in(&state.join("agents/main/sessions"), "s1.jsonl");
    planted_in(&state.join("agents/ops/sessions"), "s2.jsonl");
    // A trajectory capture beside a transcript is not a session.
    planted_in(&state.join("agents/ops/sessions"), "s2.trajectory.jsonl");
    let r = run_in(
        dir.path(),
        ["search", "-c", "--json", "--root", "state", "café"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows: Vec<(String, String, u64)> = r
        .stdout
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["session"]
                    .as_str()
                    .unwrap()
                    .rsplit('/')
                    .next()
                    .unwrap()
                    .to_owned(),
                v["agent"].as_str().unwrap().to_owned(),
                v["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("s1.jsonl".to_owned(), "main".to_owned(), 1),
            ("s2.jsonl".to_owned(), "ops".to_owned(), 1)
        ]
    );
    let r = run_in(
        dir.path(),
        ["search", "-c", "--root", "state", "--agent", "ops", "café"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.ends_with("/agents/ops/sessions/s2.jsonl:1\n"),
        "{}",
        r.stdout
    );
}

#[test]
fn control_characters_and_backslashes_are_escaped_in_text_and_exact_in_json() {
    let dir = tempdir();
    let p = dir.path().join("c.jsonl");
    plant(
        &p,
        b"{\"type\":\"session\",\"version\":3,\"id\":\"c\",\"cwd\":\"/\"}\n\
          {\"type\":\"message\",\"id\":\"u\",\"parentId\":null,\"message\":{\"role\":\"user\",\"content\":\"a\\u001b[31mred\\u202e flag\"}}\n",
    );
    let r = run_in(dir.path(), ["search", "red", "c.jsonl"]);
    assert_eq!(
        r.stdout,
        "c.jsonl:2: u user - on-branch text: a\\u{1b}[31mred\\u{202e} flag\n"
    );
    let r = run_in(dir.path(), ["search", "--json", "red", "c.jsonl"]);
    let v: Value = serde_json::from_str(r.stdout.trim_end()).unwrap();
    assert_eq!(
        (v["before"].as_str(), v["after"].as_str()),
        (Some("a\u{1b}[31m"), Some("\u{202e} flag"))
    );
    assert_eq!(v["timestamp"], Value::Null);

    // A backslash in the text is written `\\`, so the two characters `\n` (`\\n`), a
    // newline (`\u{a}`) and the text `\u{a}` (`\\u{a}`) never look alike.
    let b = dir.path().join("b.jsonl");
    plant(
        &b,
        b"{\"type\":\"session\",\"version\":3,\"id\":\"b\",\"cwd\":\"/\"}\n\
          {\"type\":\"message\",\"id\":\"u\",\"parentId\":null,\"message\":{\"role\":\"user\",\"content\":\"C:\\\\dir\\\\n and\\n \\\\u{a} red\\\\ end\"}}\n",
    );
    let r = run_in(dir.path(), ["search", "red\\", "b.jsonl"]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (
            0,
            "b.jsonl:2: u user - on-branch text: C:\\\\dir\\\\n and\\u{a} \\\\u{a} red\\\\ end\n"
        )
    );
    let r = run_in(dir.path(), ["search", "--json", "red\\", "b.jsonl"]);
    let v: Value = serde_json::from_str(r.stdout.trim_end()).unwrap();
    assert_eq!(
        (
            v["before"].as_str(),
            v["match"].as_str(),
            v["after"].as_str()
        ),
        (
            Some("C:\\dir\\n and\n \\u{a} "),
            Some("red\\"),
            Some(" end")
        )
    );
}

#[test]
fn a_v1_file_gets_the_ids_of_its_in_memory_migration_and_is_not_written() {
    let test = "search::a_v1_file_gets_the_ids_of_its_in_memory_migration_and_is_not_written";
    let Some(pi) = crate::support::pi_fixture(test) else {
        return;
    };
    let dir = tempdir();
    let f = dir.path().join("pi.jsonl");
    plant_copy(&pi, &f);
    let before = fingerprint(&f);
    let r = run_in(
        dir.path(),
        ["search", "--json", "-m", "3", "-i", "error", "pi.jsonl"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let hits: Vec<Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(hits.len(), 3);
    for h in &hits {
        let line = h["line"].as_u64().unwrap();
        let id = h["entryId"].as_str().unwrap();
        // The id `sessions show FILE @LINE` reports for that line (the same read-only open).
        let shown = run_in(dir.path(), ["show", "pi.jsonl", &format!("@{line}")]);
        let v: Value = serde_json::from_str(&shown.stdout).unwrap();
        assert_eq!(v["id"].as_str(), Some(id), "line {line}");
        // One chain: every entry is on the current branch.
        assert_eq!(h["onCurrentBranch"], Value::Bool(true));
        // The id is searchable with --fields id, though the file holds no ids: the entry
        // itself is the first hit (the next ones name it as their parent).
        let by_id = run_in(
            dir.path(),
            [
                "search", "--json", "--fields", "id", "-m", "1", id, "pi.jsonl",
            ],
        );
        assert_eq!(by_id.code, 0, "{id}: {}", by_id.stderr);
        let v: Value = serde_json::from_str(by_id.stdout.trim_end()).unwrap();
        assert_eq!(
            (
                v["line"].as_u64(),
                v["entryId"].as_str(),
                v["field"].as_str()
            ),
            (Some(line), Some(id), Some("id")),
            "{id}"
        );
        assert_eq!(
            (v["before"].as_str(), v["after"].as_str()),
            (Some(""), Some(""))
        );
        let counted = run_in(
            dir.path(),
            ["search", "-c", "--fields", "id", id, "pi.jsonl"],
        );
        assert_eq!(counted.code, 0, "{id}: {}", counted.stderr);
    }
    assert_eq!(fingerprint(&f), before);
}

#[test]
fn a_sqlite_store_gives_the_hits_of_the_same_rows_in_files() {
    let test = "search::a_sqlite_store_gives_the_hits_of_the_same_rows_in_files";
    let Some(shared) = shared_dir(test) else {
        return;
    };
    let fixture = shared.join("fixtures/openclaw-9.6-sqlite");
    let dir = tempdir();
    let sqlite_state = dir.path().join("state");
    let db = sqlite_state.join("agents/main/agent/openclaw-agent.sqlite");
    plant(
        &db,
        &std::fs::read(fixture.join("db/openclaw-agent.sqlite")).unwrap(),
    );
    let files_state = dir.path().join("files");
    for (name, _, id) in session_test_support::OPENCLAW96_SESSIONS {
        let bytes = std::fs::read(fixture.join(format!("expected/{name}.lines.jsonl"))).unwrap();
        plant(
            &files_state.join(format!("agents/main/sessions/{id}.jsonl")),
            &bytes,
        );
    }
    let db_before = fingerprint(&db);
    let search = |state: &str, pattern: &str| {
        let root = dir.path().join(state);
        let r = run_in(
            dir.path(),
            [
                "search",
                "--json",
                "--root",
                root.to_str().unwrap(),
                pattern,
            ],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.stdout.replace(&format!("/{state}/"), "/STATE/")
    };
    for pattern in ["Abandoned", "café", "lazy dog"] {
        let from_db = search("state", pattern);
        assert_eq!(from_db, search("files", pattern), "{pattern}");
        assert!(!from_db.is_empty());
    }
    let abandoned: Vec<(String, bool)> = search("state", "Abandoned")
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["entryId"].as_str().unwrap().to_owned(),
                v["onCurrentBranch"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        abandoned.iter().filter(|(_, on)| *on).count(),
        0,
        "{abandoned:?}"
    );
    assert_eq!(abandoned.len(), 2);
    assert_eq!(fingerprint(&db), db_before);
}

#[test]
fn an_unreadable_sub_directory_is_an_error_and_the_rest_is_searched() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempdir();
    let sessions = dir.path().join("sessions");
    planted_in(&sessions, "ok.jsonl");
    let locked = sessions.join("locked");
    planted_in(&locked, "hidden.jsonl");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let readable_anyway = std::fs::read_dir(&locked).is_ok(); // root reads it regardless
    let r = run_in(dir.path(), ["search", "-c", "café", "--dir", "sessions"]);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o700)).unwrap();
    if readable_anyway {
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(r.stdout.lines().count(), 2);
        return;
    }
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stdout.ends_with("sessions/ok.jsonl:1\n"), "{}", r.stdout);
    assert!(
        r.stderr.starts_with("error: ") && r.stderr.contains("locked"),
        "{}",
        r.stderr
    );
}
