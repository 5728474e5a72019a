//! Retention guard rails of `sessions archive` and `sessions clear`: a zero or negative age is a
//! usage error (`off`/`false` still turn a limit off); a sweep that would move or delete more
//! than half of an agent's live sessions is refused before anything is touched unless
//! `--allow-mass` (`--dry-run` shows the plan and says so); every move or delete is appended to
//! `<sessions>/sessions-audit.log`, which no lister takes for a session, and a dry run writes
//! none.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use crate::support::*;
use serde_json::{Value, json};

/// `main` with four sessions: a, b and c older than 30 days, d from yesterday.
fn store(root: &Path) -> PathBuf {
    let s = root.join("agents/main/sessions");
    plant(&s.join("a.jsonl"), &session_bytes("sess-a", NOW - 40 * DAY));
    plant(&s.join("b.jsonl"), &session_bytes("sess-b", NOW - 50 * DAY));
    plant(&s.join("c.jsonl"), &session_bytes("sess-c", NOW - 60 * DAY));
    plant(&s.join("d.jsonl"), &session_bytes("sess-d", NOW - DAY));
    s
}

const ARCHIVE: [&str; 9] = [
    "archive",
    "--root",
    "state",
    "--agent",
    "main",
    "--max-age",
    "30d",
    "--now",
    "2026-07-01T00:00:00Z",
];

fn with<'a>(base: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(extra).copied().collect()
}

/// The audit log's lines, each parsed, with its `time` checked (ISO 8601, UTC) and replaced.
fn audit_lines(sessions: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(sessions.join("sessions-audit.log")).unwrap();
    assert!(text.ends_with('\n'));
    text.lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            assert_iso_time(v["time"].as_str().unwrap());
            v["time"] = json!("[time]");
            v
        })
        .collect()
}

fn record(action: &str, file: &str, dest: Option<&str>, id: &str, reason: &str) -> Value {
    json!({
        "time": "[time]",
        "action": action,
        "file": file,
        "destination": dest,
        "sessionId": id,
        "reason": reason,
        "bytes": 246,
    })
}

#[test]
fn zero_and_negative_ages_are_usage_errors() {
    let dir = tempdir();
    let root = dir.path().join("state");
    store(&root);
    let before = contents(&root);
    // Bare numbers (0, -0, -30) are refused for having no unit: see duration_flags.rs.
    for (age, what) in [
        ("0d", "a zero"),
        ("0s", "a zero"),
        ("0ms", "a zero"),
        ("0.4ms", "a zero"),
        ("-0d", "a zero"),
        ("-1d", "a negative"),
        ("-30d", "a negative"),
    ] {
        let r = run_in(
            dir.path(),
            [
                "archive",
                "--root",
                "state",
                "--agent",
                "main",
                "--max-age",
                age,
            ],
        );
        assert_eq!(
            (r.code, r.stdout.as_str(), r.stderr),
            (
                2,
                "",
                format!(
                    "error: invalid value '{age}' for '--max-age <DURATION>': invalid max age \
                     \"{age}\": {what} age is refused, since every session is older and would \
                     be archived; give a positive age such as 30d, or off to turn the limit \
                     off\n\nFor more information, try '--help'.\n"
                )
            ),
            "{age}"
        );
    }
    for (value, shown, what, column) in [
        ("\"0d\"", "0d", "a zero", 40),
        ("0", "0", "a zero", 37),
        ("\"-1d\"", "-1d", "a negative", 41),
        ("-1", "-1", "a negative", 38),
    ] {
        plant(
            &dir.path().join("cfg.json"),
            format!(r#"{{"sessions":{{"retention":{{"maxAge":{value}}}}}}}"#).as_bytes(),
        );
        let r = run_in(
            dir.path(),
            [
                "archive", "--root", "state", "--agent", "main", "--config", "cfg.json",
            ],
        );
        assert_eq!(
            (r.code, r.stdout.as_str(), r.stderr),
            (
                2,
                "",
                format!(
                    "error: cfg.json: invalid sessions config: invalid max age \"{shown}\": \
                     {what} age is refused, since every session is older and would be \
                     archived; give a positive age such as 30d, or false to turn the limit off \
                     at line 1, column {column} (byte offset {})\n",
                    column - 1
                )
            ),
            "{value}"
        );
    }
    // `off` and `false` still turn the limit off (here the size limit is all that is left).
    for off in ["off", "false"] {
        let r = run_in(
            dir.path(),
            [
                "archive",
                "--root",
                "state",
                "--agent",
                "main",
                "--max-age",
                off,
                "--max-size",
                "1tb",
            ],
        );
        assert_eq!(r.code, 0, "{off}: {}", r.stderr);
    }
    plant(
        &dir.path().join("cfg.json"),
        br#"{"sessions":{"retention":{"maxAge":false,"maxSize":"1tb"}}}"#,
    );
    let r = run_in(
        dir.path(),
        [
            "archive", "--root", "state", "--agent", "main", "--config", "cfg.json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(contents(&root), before);
}

#[test]
fn an_archive_of_more_than_half_of_the_live_sessions_stops_before_touching_anything() {
    let dir = tempdir();
    let root = dir.path().join("state");
    let sessions = store(&root);
    let before = contents(&root);
    let shown = canonical(&sessions);
    let plan = format!(
        "archive plan for agent main in {shown} (now 2026-07-01T00:00:00.000Z; max age 30d, max \
         size off)\n\
         \x20 would archive c.jsonl -> archive/c.jsonl  (246 B, last activity \
         2026-05-02T00:00:00.000Z, 60d 0h old)\n\
         \x20 would archive b.jsonl -> archive/b.jsonl  (246 B, last activity \
         2026-05-12T00:00:00.000Z, 50d 0h old)\n\
         \x20 would archive a.jsonl -> archive/a.jsonl  (246 B, last activity \
         2026-05-22T00:00:00.000Z, 40d 0h old)\n\
         \x20 live size 984 B -> 246 B; 3 to archive, 0 left alone\n"
    );

    // Refused: the plan, the refusal, exit 2; every file where it was with its bytes.
    let r = run_in(dir.path(), ARCHIVE);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (
            2,
            plan.as_str(),
            "error: refusing a mass archive: agent main: 3 of 4 live sessions (more than half) \
             would be archived; nothing was changed: check the plan (or run with --dry-run), \
             then add --allow-mass to go ahead\n"
        )
    );
    assert_eq!(contents(&root), before);
    let r = run_in(dir.path(), with(&ARCHIVE, &["--json"]));
    assert_eq!(r.code, 2);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        (
            &v["dryRun"],
            &v["refused"],
            &v["reports"][0]["dryRun"],
            &v["reports"][0]["liveSessions"],
            &v["reports"][0]["massSweep"],
            v["reports"][0].get("audit"),
        ),
        (
            &json!(false),
            &json!(true),
            &json!(true),
            &json!(4),
            &json!({"sessions": 3, "liveSessions": 4}),
            None
        )
    );
    assert_eq!(contents(&root), before);

    // A dry run shows the plan and says the run would be refused; it writes no audit line.
    let r = run_in(dir.path(), with(&ARCHIVE, &["--dry-run"]));
    assert_eq!(
        (r.code, r.stdout, r.stderr.as_str()),
        (
            1,
            format!(
                "{plan}note: agent main: 3 of 4 live sessions (more than half) would be \
                 archived: without --allow-mass this run is refused\n"
            ),
            ""
        )
    );
    assert_eq!(contents(&root), before);

    // --allow-mass goes ahead: the three move, each with its audit line.
    let r = run_in(dir.path(), with(&ARCHIVE, &["--allow-mass"]));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        plan.replace("archive plan for", "archive for")
            .replace("would archive", "archived")
            + &format!("  audit log {shown}/sessions-audit.log: 3 lines appended\n")
    );
    assert_eq!(
        listing(&sessions),
        [
            "archive/",
            "archive/a.jsonl",
            "archive/b.jsonl",
            "archive/c.jsonl",
            "d.jsonl",
            "sessions-audit.log"
        ]
    );
    for (name, id, ago) in [
        ("a", "sess-a", 40),
        ("b", "sess-b", 50),
        ("c", "sess-c", 60),
    ] {
        assert_eq!(
            std::fs::read(sessions.join(format!("archive/{name}.jsonl"))).unwrap(),
            session_bytes(id, NOW - ago * DAY)
        );
    }
    assert_eq!(
        audit_lines(&sessions),
        [
            record(
                "archive",
                "c.jsonl",
                Some("archive/c.jsonl"),
                "sess-c",
                "max-age"
            ),
            record(
                "archive",
                "b.jsonl",
                Some("archive/b.jsonl"),
                "sess-b",
                "max-age"
            ),
            record(
                "archive",
                "a.jsonl",
                Some("archive/a.jsonl"),
                "sess-a",
                "max-age"
            ),
        ]
    );
    let mode = std::fs::metadata(sessions.join("sessions-audit.log"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);

    // The audit log is no session: neither listed nor left alone by the next run.
    let r = run_in(dir.path(), ["list", "--root", "state", "--agent", "main"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert!(!r.stdout.contains("audit"), "{}", r.stdout);
    let r = run_in(dir.path(), ARCHIVE);
    assert_eq!(
        (r.code, r.stdout),
        (
            0,
            format!(
                "archive for agent main in {shown} (now 2026-07-01T00:00:00.000Z; max age 30d, \
                 max size off)\n  live size 246 B -> 246 B; 0 to archive, 0 left alone\n"
            )
        )
    );
}

/// Half is not more than half: two of four sessions go without `--allow-mass`; a locked
/// session counts among the live ones.
#[test]
fn archiving_half_of_the_live_sessions_is_no_mass_sweep() {
    let dir = tempdir();
    let root = dir.path().join("state");
    let sessions = store(&root);
    // c becomes recent: a and b (2 of 4) are old.
    plant(
        &sessions.join("c.jsonl"),
        &session_bytes("sess-c", NOW - 2 * DAY),
    );
    let r = run_in(dir.path(), with(&ARCHIVE, &["--json"]));
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        (
            &v["refused"],
            &v["reports"][0]["liveSessions"],
            &v["reports"][0]["massSweep"]
        ),
        (&json!(false), &json!(4), &json!(null))
    );
    assert_eq!(
        audit_lines(&sessions),
        [
            record(
                "archive",
                "b.jsonl",
                Some("archive/b.jsonl"),
                "sess-b",
                "max-age"
            ),
            record(
                "archive",
                "a.jsonl",
                Some("archive/a.jsonl"),
                "sess-a",
                "max-age"
            ),
        ]
    );

    // Two old sessions of three, one of them locked: only the other may move, and 1 of 3 is
    // no mass sweep.
    plant(
        &sessions.join("e.jsonl"),
        &session_bytes("sess-e", NOW - 40 * DAY),
    );
    plant(
        &sessions.join("f.jsonl"),
        &session_bytes("sess-f", NOW - 40 * DAY),
    );
    plant(&sessions.join("f.jsonl.lock"), live_lock().as_bytes());
    let r = run_in(dir.path(), with(&ARCHIVE, &["--json", "--dry-run"]));
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        (
            &v["reports"][0]["liveSessions"],
            &v["reports"][0]["massSweep"]
        ),
        (&json!(4), &json!(null))
    );
}

#[test]
fn clear_all_is_refused_without_allow_mass_and_audited_with_it() {
    let dir = tempdir();
    let root = dir.path().join("state");
    let sessions = store(&root);
    let before = contents(&root);
    let shown = canonical(&sessions);
    let clear = ["clear", "--root", "state", "--agent", "main", "--all"];
    let plan = |verb: &str, mode: &str| {
        let dest = |n: &str| {
            if mode == "purge" {
                String::new()
            } else {
                format!(" -> archive/{n}.jsonl")
            }
        };
        format!(
            "clear ({mode}{}) for agent main in {shown}\n\
             \x20 {verb} a.jsonl{}  (246 B)\n\
             \x20 {verb} b.jsonl{}  (246 B)\n\
             \x20 {verb} c.jsonl{}  (246 B)\n\
             \x20 {verb} d.jsonl{}  (246 B)\n\
             \x20 4 session(s), 0 left alone\n",
            if verb.starts_with("would") {
                ", dry run"
            } else {
                ""
            },
            dest("a"),
            dest("b"),
            dest("c"),
            dest("d"),
        )
    };

    for purge in [false, true] {
        let (mode, verb, done) = if purge {
            ("purge", "deleted", "would delete")
        } else {
            ("archive", "archived", "would archive")
        };
        let extra: &[&str] = if purge { &["--purge"] } else { &[] };
        let r = run_in(dir.path(), with(&with(&clear, extra), &["--yes"]));
        assert_eq!(
            (r.code, r.stdout, r.stderr),
            (
                2,
                // Refused, not a dry run: the header says so (the --dry-run header below keeps
                // "dry run").
                plan(done, mode).replacen(
                    &format!("clear ({mode}, dry run)"),
                    &format!("clear plan ({mode}, refused)"),
                    1,
                ),
                format!(
                    "error: refusing a mass clear: agent main: 4 of 4 live sessions (more than \
                     half) would be {verb}; nothing was changed: check the plan (or run with \
                     --dry-run), then add --allow-mass to go ahead\n"
                )
            )
        );
        assert_eq!(contents(&root), before);
        let r = run_in(dir.path(), with(&with(&clear, extra), &["--dry-run"]));
        assert_eq!(
            (r.code, r.stdout, r.stderr.as_str()),
            (
                1,
                format!(
                    "{}note: agent main: 4 of 4 live sessions (more than half) would be {verb}: \
                     without --allow-mass this run is refused\n",
                    plan(done, mode)
                ),
                ""
            )
        );
        assert_eq!(contents(&root), before);
    }

    // One named session is never a mass sweep, even the last one standing.
    let r = run_in(
        dir.path(),
        [
            "clear",
            "--root",
            "state",
            "--agent",
            "main",
            "--session",
            "d",
            "--yes",
            "--json",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        (&v["liveSessions"], &v["massSweep"], &v["refused"]),
        (&json!(0), &json!(null), &json!(false))
    );

    let r = run_in(
        dir.path(),
        with(&clear, &["--purge", "--yes", "--allow-mass"]),
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        listing(&sessions),
        ["archive/", "archive/d.jsonl", "sessions-audit.log"]
    );
    assert_eq!(
        audit_lines(&sessions),
        [
            record(
                "archive",
                "d.jsonl",
                Some("archive/d.jsonl"),
                "sess-d",
                "clear"
            ),
            record("delete", "a.jsonl", None, "sess-a", "clear"),
            record("delete", "b.jsonl", None, "sess-b", "clear"),
            record("delete", "c.jsonl", None, "sess-c", "clear"),
        ]
    );
}

/// An audit log that cannot be written (here a symlink at its path) stops the run before any
/// session moves: every action fails naming the log, exit 2.
#[test]
fn nothing_moves_without_its_audit_line() {
    let dir = tempdir();
    let root = dir.path().join("state");
    let sessions = store(&root);
    plant(&dir.path().join("elsewhere.log"), b"");
    std::os::unix::fs::symlink(
        dir.path().join("elsewhere.log"),
        sessions.join("sessions-audit.log"),
    )
    .unwrap();
    let before = contents(&root);
    let r = run_in(dir.path(), with(&ARCHIVE, &["--allow-mass", "--json"]));
    assert_eq!(r.code, 2, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let shown = canonical(&sessions);
    let why =
        format!("audit log {shown}/sessions-audit.log is a symlink; it must be a regular file");
    let outcomes: Vec<(&str, &str, &str)> = v["reports"][0]["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["file"].as_str().unwrap(),
                a["outcome"].as_str().unwrap(),
                a["error"].as_str().unwrap(),
            )
        })
        .collect();
    let failed = format!("not attempted: {why}");
    assert_eq!(
        outcomes,
        [
            ("c.jsonl", "failed", failed.as_str()),
            ("b.jsonl", "failed", failed.as_str()),
            ("a.jsonl", "failed", failed.as_str()),
        ]
    );
    assert_eq!(
        v["reports"][0]["audit"],
        json!({"log": format!("{shown}/sessions-audit.log"), "records": [], "error": why})
    );
    assert_eq!(r.stderr, "error: 3 session(s) could not be archived\n");
    assert_eq!(contents(&root), before);
    assert_eq!(
        std::fs::read(dir.path().join("elsewhere.log")).unwrap(),
        b""
    );
}
