//! The read commands on a copy of the reference-made OpenClaw store (openclaw-store.md §1, §5):
//! `export -o` never replaces a file the sessions directory manages (the store index, a
//! transcript, an archive, a sidecar) nor any session file, even with `--force`, and refuses a
//! jsonl export into the store that would give one session id two files; `check`, `tree` and
//! `stats` say in one line what `sessions.json` and the sidecars are; `show @N` past the end
//! says how many lines the file has; `--session ID` of a row whose transcript is missing, or of
//! an archived session, says so; `list` points from a state directory given as `--dir` to
//! `--root` and back; Markdown counts use thousands separators as `stats` does.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::{Path, PathBuf};

use crate::support::*;

const NOW: &str = "2026-06-12T13:00:00Z";
const MAIN: &str = "00000026-0000-4000-8000-0c6110000000";
const GROUP: &str = "0000000a-0000-4000-8000-0c6110000000";
const RESET: &str = "00000001-0000-4000-8000-0c6110000000.jsonl.reset.2026-06-12T09-00-00.000Z";

fn fixture(test: &str) -> Option<(tempfile::TempDir, PathBuf)> {
    let shared = shared_dir(test)?;
    let dir = tempdir();
    let sessions = session_test_support::openclaw_fixture_copy(&shared, dir.path());
    Some((dir, sessions))
}

fn sessions(cwd: &Path, args: &[&str]) -> Run {
    let mut c = cmd();
    c.current_dir(cwd)
        .env_remove("COLUMNS")
        .args(["--now", NOW])
        .args(args);
    run_command_timeout(c, 30)
}

#[test]
fn export_never_replaces_store_files_or_session_files() {
    let Some((dir, s)) = fixture("export_never_replaces_store_files_or_session_files") else {
        return;
    };
    let before = contents(&s);
    let src = format!("agents/main/sessions/{MAIN}.jsonl");
    let cases = [
        (
            "sessions.json".to_owned(),
            "an OpenClaw session store index (sessions.json)",
        ),
        (
            format!("{GROUP}.jsonl"),
            "a transcript the OpenClaw sessions directory manages",
        ),
        (
            RESET.to_owned(),
            "an archived transcript the OpenClaw sessions directory manages",
        ),
    ];
    for (name, why) in cases {
        let out = format!("agents/main/sessions/{name}");
        for format in ["json", "jsonl", "markdown"] {
            let r = sessions(
                dir.path(),
                &["export", &src, "--format", format, "-o", &out, "--force"],
            );
            assert_eq!(
                (r.code, r.stdout.as_str(), r.stderr.as_str()),
                (
                    2,
                    "",
                    format!(
                        "error: refusing to write the export over {out}: it is {why}; export \
                         never replaces it, even with --force (choose a path outside the \
                         sessions directory)\n"
                    )
                    .as_str()
                ),
                "{name} {format}"
            );
        }
    }
    // A session file elsewhere (its first line is a session header), even with --force.
    plant(&dir.path().join("other.jsonl"), &session_bytes("x-1", 0));
    let r = sessions(
        dir.path(),
        &[
            "export",
            &src,
            "--format",
            "json",
            "-o",
            "other.jsonl",
            "--force",
        ],
    );
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (
            2,
            "error: refusing to write the export over other.jsonl: it is a session file (its \
             first line is a session header); export never replaces it, even with --force \
             (choose a path outside the sessions directory)\n"
        )
    );
    // Through a link: the file the write would replace is what counts.
    std::os::unix::fs::symlink(s.join("sessions.json"), dir.path().join("link.json")).unwrap();
    let r = sessions(
        dir.path(),
        &[
            "export",
            &src,
            "--format",
            "json",
            "-o",
            "link.json",
            "--force",
        ],
    );
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (
            2,
            format!(
                "error: refusing to write the export over link.json (a link to {}): it is an \
                 OpenClaw session store index (sessions.json); export never replaces it, even \
                 with --force (choose a path outside the sessions directory)\n",
                std::fs::canonicalize(s.join("sessions.json"))
                    .unwrap()
                    .display()
            )
            .as_str()
        )
    );
    // The audit log and write locks of a sessions directory.
    plant(&s.join("sessions-audit.log"), b"{\"action\":\"rename\"}\n");
    plant(&s.join(format!("{GROUP}.jsonl.lock")), b"{\"pid\":1}\n");
    for (name, why) in [
        (
            "sessions-audit.log".to_owned(),
            "the audit log of a sessions directory (never rewritten)",
        ),
        (format!("{GROUP}.jsonl.lock"), "a session write lock"),
    ] {
        let out = format!("agents/main/sessions/{name}");
        let r = sessions(
            dir.path(),
            &["export", &src, "--format", "json", "-o", &out, "--force"],
        );
        assert_eq!(
            (r.code, r.stderr.as_str()),
            (
                2,
                format!(
                    "error: refusing to write the export over {out}: it is {why}; export never \
                     replaces it, even with --force (choose a path outside the sessions \
                     directory)\n"
                )
                .as_str()
            ),
            "{name}"
        );
    }
    std::fs::remove_file(dir.path().join("link.json")).unwrap();
    std::fs::remove_file(s.join("sessions-audit.log")).unwrap();
    std::fs::remove_file(s.join(format!("{GROUP}.jsonl.lock"))).unwrap();
    // A new jsonl file in the store would be a second file for the session id.
    let r = sessions(
        dir.path(),
        &[
            "export",
            &src,
            "--format",
            "jsonl",
            "-o",
            "agents/main/sessions/copy.jsonl",
        ],
    );
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (
            2,
            "error: refusing to write agents/main/sessions/copy.jsonl inside an OpenClaw sessions \
             directory (agents/main/sessions): the jsonl export keeps the session id, so the \
             store would hold a second file with the same header id; write it elsewhere, or \
             pass --force\n"
        )
    );
    // New files OpenClaw would take for its own: the index anywhere, managed names in a store.
    for (out, format) in [
        ("elsewhere/sessions.json", "json"),
        ("agents/main/sessions/new.jsonl", "markdown"),
        (
            "agents/main/sessions/new.jsonl.deleted.2026-06-12T09-00-00.000Z",
            "jsonl",
        ),
    ] {
        std::fs::create_dir_all(dir.path().join("elsewhere")).unwrap();
        let r = sessions(
            dir.path(),
            &["export", &src, "--format", format, "-o", out, "--force"],
        );
        assert_eq!(
            (r.code, r.stderr.as_str()),
            (
                2,
                format!(
                    "error: refusing to write {out}: OpenClaw would take a file of that name for \
                     one of its own (the store index, a transcript, an archive or a sidecar), \
                     even with --force; choose another name\n"
                )
                .as_str()
            ),
            "{out}"
        );
    }
    assert!(!dir.path().join("elsewhere/sessions.json").exists());
    assert_eq!(contents(&s), before, "the store is unchanged");
    // Outside the store a plain file is still replaced with --force.
    plant(&dir.path().join("notes.md"), b"old\n");
    let r = sessions(
        dir.path(),
        &[
            "export", &src, "--format", "markdown", "-o", "notes.md", "--force",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        std::fs::read_to_string(dir.path().join("notes.md"))
            .unwrap()
            .starts_with("# ")
    );
}

#[test]
fn check_and_tree_say_what_store_files_are() {
    let Some((dir, s)) = fixture("check_and_tree_say_what_store_files_are") else {
        return;
    };
    plant(
        &s.join(format!("{MAIN}.trajectory-path.json")),
        b"{\"path\":\"x\"}\n",
    );
    let r = sessions(dir.path(), &["check", "agents/main/sessions/sessions.json"]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (
            0,
            "agents/main/sessions/sessions.json: OpenClaw's session store index, not a \
             transcript: `sessions list` reads it\nchecked 1 file: 0 ok, 1 not a transcript\n",
            ""
        )
    );
    let pointer = format!("agents/main/sessions/{MAIN}.trajectory-path.json");
    let r = sessions(dir.path(), &["check", "--json", &pointer]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        v[0]["notTranscript"],
        format!("OpenClaw's trajectory pointer sidecar of {MAIN}.jsonl, not a transcript")
    );
    assert_eq!(v[0]["ok"], true);
    // The tool's own audit log and a write lock are named, not reported as broken sessions.
    plant(&s.join("sessions-audit.log"), b"{\"action\":\"rename\"}\n");
    plant(&s.join(format!("{MAIN}.jsonl.lock")), b"{\"pid\":1}\n");
    let lock = format!("agents/main/sessions/{MAIN}.jsonl.lock");
    let r = sessions(
        dir.path(),
        &["check", "agents/main/sessions/sessions-audit.log", &lock],
    );
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (
            0,
            format!(
                "agents/main/sessions/sessions-audit.log: the audit log of this tool's moves and \
                 renames (one JSON line each), not a transcript\n{lock}: a session write lock, \
                 not a transcript: `sessions unlock --stale` lists them\nchecked 2 files: 0 ok, \
                 2 not transcripts\n"
            )
            .as_str(),
            ""
        )
    );
    // An archive is a transcript renamed: checked as one.
    let archive = format!("agents/main/sessions/{RESET}");
    let r = sessions(dir.path(), &["check", &archive]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (
            0,
            format!("{archive}: ok (4 entries)\nchecked 1 file: 1 ok\n").as_str()
        )
    );
    for cmd in ["tree", "stats"] {
        let r = sessions(dir.path(), &[cmd, "agents/main/sessions/sessions.json"]);
        assert_eq!(
            (r.code, r.stdout.as_str(), r.stderr.as_str()),
            (
                2,
                "",
                "error: agents/main/sessions/sessions.json is OpenClaw's session store index, \
                 not a transcript: `sessions list` reads it\n"
            ),
            "{cmd}"
        );
    }
}

#[test]
fn show_past_the_end_says_how_many_lines_there_are() {
    let Some((dir, _)) = fixture("show_past_the_end_says_how_many_lines_there_are") else {
        return;
    };
    let f = format!("agents/main/sessions/{MAIN}.jsonl");
    for extra in [&[][..], &["--raw"][..]] {
        let mut a = vec!["show", f.as_str(), "@9"];
        a.extend(extra);
        let r = sessions(dir.path(), &a);
        assert_eq!(
            (r.code, r.stdout.as_str(), r.stderr.as_str()),
            (
                2,
                "",
                format!("error: {f} has 7 lines; there is no line 9\n").as_str()
            ),
            "{extra:?}"
        );
    }
}

#[test]
fn a_session_id_without_a_live_transcript_says_why() {
    let Some((dir, _)) = fixture("a_session_id_without_a_live_transcript_says_why") else {
        return;
    };
    let base = ["--root", ".", "--agent", "main", "--session"];
    let mut a = vec!["tree"];
    a.extend(base);
    a.push("0000001f-0000-4000-8000-0c6110000000");
    let r = sessions(dir.path(), &a);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (
            2,
            "error: session \"0000001f-0000-4000-8000-0c6110000000\": the row \
             \"agent:main:subagent:research-1\" of ./agents/main/sessions/sessions.json names \
             that session id, and its transcript \
             ./agents/main/sessions/0000001f-0000-4000-8000-0c6110000000.jsonl does not exist\n"
        )
    );
    let mut a = vec!["stats"];
    a.extend(base);
    a.push("00000001-0000-4000-8000-0c6110000000");
    let r = sessions(dir.path(), &a);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (
            2,
            format!(
                "error: session \"00000001-0000-4000-8000-0c6110000000\" has no live transcript \
                 in ./agents/main/sessions: it is archived as {RESET} (`sessions list --archived` \
                 lists the archives; `sessions tree ./agents/main/sessions/{RESET}` reads it)\n"
            )
            .as_str()
        )
    );
}

#[test]
fn list_points_between_state_and_sessions_directories() {
    let Some((dir, _)) = fixture("list_points_between_state_and_sessions_directories") else {
        return;
    };
    let r = sessions(dir.path(), &["list", "--dir", "."]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (
            0,
            "no sessions found\n",
            "warning: . holds agents/: it looks like an OpenClaw state directory; use --root . \
             to list its agents' sessions\n"
        )
    );
    let r = sessions(dir.path(), &["list", "--root", "agents/main/sessions"]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (
            2,
            "",
            "error: agents/main/sessions is a sessions directory (it holds sessions.json), not \
             an OpenClaw state directory: use --dir agents/main/sessions\n"
        )
    );
}

#[test]
fn markdown_counts_use_thousands_separators() {
    let dir = tempdir();
    let mut rows = vec![HEADER.to_owned()];
    let mut parent: Option<String> = None;
    for i in 0..1018 {
        let id = format!("m{i:04}");
        rows.push(msg(
            &id,
            parent.as_deref(),
            if i % 2 == 0 { "user" } else { "assistant" },
            "x",
        ));
        parent = Some(id);
    }
    plant(&dir.path().join("s.jsonl"), &lines(&rows));
    let r = sessions(dir.path(), &["export", "s.jsonl", "--format", "markdown"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("- Current branch: 1,018 of 1,018 entries (leaf `m1017`)\n"),
        "{}",
        &r.stdout[..400.min(r.stdout.len())]
    );
    let r = sessions(dir.path(), &["stats", "s.jsonl"]);
    assert!(r.stdout.contains("1,018"), "{}", r.stdout);
}
