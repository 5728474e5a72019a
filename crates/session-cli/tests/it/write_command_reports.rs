//! What the write commands (`archive`, `clear`, `keys parse`, `unlock`) report at the edges: an
//! `archive --all` that cannot start one agent still archives and reports every other agent, JSON
//! reports survive a non-UTF-8 store path, newlines in names are escaped so they cannot forge
//! report lines, `clear --session` ignores archived copies when resolving, `--now` outside a
//! JavaScript date's range is refused, and a `--config` that is not a file gets a clear message. Each test asserts the exact output, exit
//! code and directory listing.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use crate::support::*;
use serde_json::{Value, json};

/// `archive --all`: an agent whose run cannot start (here its `archive` is a regular file) is
/// reported, and the other agents are still archived and reported; a stray file under
/// `agents/` is not an agent. Before the fix the command moved agent `a`'s session, then
/// failed on `z` with only an error: the move was never reported.
#[test]
fn archive_all_reports_every_agent_when_one_cannot_start() {
    let dir = tempdir();
    let root = dir.path().join("state");
    plant(
        &root.join("agents/a/sessions/old.jsonl"),
        &session_bytes("sess-a", NOW - 40 * DAY),
    );
    plant(
        &root.join("agents/z/sessions/old.jsonl"),
        &session_bytes("sess-z", NOW - 40 * DAY),
    );
    plant(&root.join("agents/z/sessions/archive"), b"a file\n");
    plant(&root.join("agents/notes"), b"not an agent\n");
    let r = run_in(
        dir.path(),
        [
            "archive",
            "--root",
            "state",
            "--all",
            "--max-age",
            "30d",
            "--now",
            "2026-07-01T00:00:00Z",
            "--allow-mass",
            "--json",
        ],
    );
    let dir_a = canonical(&root.join("agents/a/sessions"));
    let dir_z = canonical(&root.join("agents/z/sessions"));
    let z_error =
        format!("archive directory unusable: {dir_z}/archive exists and is not a real directory");
    assert_eq!(r.code, 2, "{}", r.stderr);
    let mut v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(redact_audit_times(&mut v), 1);
    assert_eq!(
        pretty(&v),
        pretty(&json!({
            "dryRun": false,
            "refused": false,
            "reports": [{
                "agentId": "a",
                "sessionsDir": dir_a,
                "archiveDir": format!("{dir_a}/archive"),
                "dryRun": false,
                "now": "2026-07-01T00:00:00.000Z",
                "policy": {
                    "maxAge": "30d",
                    "maxAgeMs": 2_592_000_000_u64,
                    "maxSize": null,
                    "maxSizeBytes": null,
                },
                "liveBytesBefore": 246,
                "liveBytesAfter": 0,
                "liveSessions": 1,
                "massSweep": {"sessions": 1, "liveSessions": 1},
                "actions": [{
                    "file": "old.jsonl",
                    "destination": "archive/old.jsonl",
                    "sessionKey": "agent:a:old",
                    "sessionId": "sess-a",
                    "lastActivity": "2026-05-22T00:00:00.000Z",
                    "lastActivityMs": NOW - 40 * DAY,
                    "sizeBytes": 246,
                    "reason": {"kind": "max-age", "ageMs": 40 * DAY},
                    "outcome": "archived",
                }],
                "skipped": [],
                "audit": {
                    "log": format!("{dir_a}/sessions-audit.log"),
                    "records": [{
                        "time": "[time]",
                        "action": "archive",
                        "file": "old.jsonl",
                        "destination": "archive/old.jsonl",
                        "sessionId": "sess-a",
                        "reason": "max-age",
                        "bytes": 246,
                    }],
                    "error": null,
                },
            }],
            "errors": [{"agentId": "z", "error": z_error}],
            "skippedAgents": [],
        }))
    );
    assert_eq!(
        r.stderr,
        format!("error: agent z: not archived: {z_error}\n")
    );
    assert_eq!(
        listing(&root),
        [
            "agents/",
            "agents/a/",
            "agents/a/sessions/",
            "agents/a/sessions/archive/",
            "agents/a/sessions/archive/old.jsonl",
            "agents/a/sessions/sessions-audit.log",
            "agents/notes",
            "agents/z/",
            "agents/z/sessions/",
            "agents/z/sessions/archive",
            "agents/z/sessions/old.jsonl",
        ]
    );
    assert_eq!(
        std::fs::read(root.join("agents/a/sessions/archive/old.jsonl")).unwrap(),
        session_bytes("sess-a", NOW - 40 * DAY)
    );

    // The text output: the report of `a`, then the error of `z` on stderr.
    plant(
        &root.join("agents/a/sessions/new-old.jsonl"),
        &session_bytes("sess-a2", NOW - 50 * DAY),
    );
    let r = run_in(
        dir.path(),
        [
            "archive",
            "--root",
            "state",
            "--all",
            "--max-age",
            "30d",
            "--now",
            "2026-07-01T00:00:00Z",
            "--dry-run",
            "--allow-mass",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        format!(
            "archive plan for agent a in {dir_a} (now 2026-07-01T00:00:00.000Z; max age 30d, \
             max size off)\n  would archive new-old.jsonl -> archive/new-old.jsonl  (247 B, \
             last activity 2026-05-12T00:00:00.000Z, 50d 0h old)\n  live size 247 B -> 0 B; \
             1 to archive, 0 left alone\n"
        )
    );
    assert_eq!(
        r.stderr,
        format!("error: agent z: not archived: {z_error}\n")
    );
}

/// A store whose path is not UTF-8: `archive --json` and `clear --json` print the paths lossily
/// (as every other subcommand) instead of panicking (exit code 101, no report, after the moves
/// of a real run).
#[test]
fn json_reports_survive_a_non_utf8_store_path() {
    let dir = tempdir();
    let root = dir.path().join(OsStr::from_bytes(b"st\xffate"));
    plant(
        &root.join("agents/main/sessions/old.jsonl"),
        &session_bytes("sess-old", NOW - 40 * DAY),
    );
    let lossy = format!(
        "{}/st\u{fffd}ate/agents/main/sessions",
        canonical(dir.path())
    );
    let r = run_in(
        dir.path(),
        [
            OsStr::new("archive"),
            OsStr::new("--root"),
            root.as_os_str(),
            OsStr::new("--agent"),
            OsStr::new("main"),
            OsStr::new("--max-age"),
            OsStr::new("30d"),
            OsStr::new("--now"),
            OsStr::new("2026-07-01T00:00:00Z"),
            OsStr::new("--allow-mass"),
            OsStr::new("--json"),
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["reports"][0]["sessionsDir"], json!(lossy));
    assert_eq!(
        v["reports"][0]["archiveDir"],
        json!(format!("{lossy}/archive"))
    );
    assert_eq!(v["reports"][0]["actions"][0]["outcome"], json!("archived"));
    assert_eq!(r.stderr, "");

    plant(
        &root.join("agents/main/sessions/second.jsonl"),
        &session_bytes("sess-2", NOW - DAY),
    );
    let r = run_in(
        dir.path(),
        [
            OsStr::new("clear"),
            OsStr::new("--root"),
            root.as_os_str(),
            OsStr::new("--agent"),
            OsStr::new("main"),
            OsStr::new("--all"),
            OsStr::new("--yes"),
            OsStr::new("--allow-mass"),
            OsStr::new("--json"),
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    let mut v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(redact_audit_times(&mut v), 1);
    assert_eq!(
        pretty(&v),
        pretty(&json!({
            "agentId": "main",
            "sessionsDir": lossy,
            "mode": "archive",
            "dryRun": false,
            "liveSessions": 1,
            "massSweep": {"sessions": 1, "liveSessions": 1},
            "actions": [{
                "file": "second.jsonl",
                "destination": "archive/second.jsonl",
                "sessionKey": "agent:main:second",
                "sessionId": "sess-2",
                "sizeBytes": 246,
                "outcome": "archived",
            }],
            "skipped": [],
            "audit": {
                "log": format!("{lossy}/sessions-audit.log"),
                "records": [{
                    "time": "[time]",
                    "action": "archive",
                    "file": "second.jsonl",
                    "destination": "archive/second.jsonl",
                    "sessionId": "sess-2",
                    "reason": "clear",
                    "bytes": 246,
                }],
                "error": null,
            },
            "refused": false,
        }))
    );
    assert_eq!(
        listing(&root),
        [
            "agents/",
            "agents/main/",
            "agents/main/sessions/",
            "agents/main/sessions/archive/",
            "agents/main/sessions/archive/old.jsonl",
            "agents/main/sessions/archive/second.jsonl",
            "agents/main/sessions/sessions-audit.log",
        ]
    );
}

/// A file name holding a newline is left alone (unsafe name) and printed escaped on its own
/// line: it cannot forge a `would archive` line of the plan.
#[test]
fn archive_and_clear_text_escape_newlines_in_names() {
    let dir = tempdir();
    let root = dir.path().join("state");
    let sessions = root.join("agents/main/sessions");
    let evil = "a\n  would archive evil.jsonl -> x.jsonl";
    plant(
        &sessions.join(format!("{evil}.jsonl")),
        &session_bytes("sess-evil", NOW - 40 * DAY),
    );
    plant(
        &sessions.join("b\u{202e}x.jsonl"),
        &session_bytes("sess-b", NOW - 40 * DAY),
    );
    let dir_s = canonical(&sessions);
    let r = run_in(
        dir.path(),
        [
            "archive",
            "--root",
            "state",
            "--agent",
            "main",
            "--max-age",
            "30d",
            "--now",
            "2026-07-01T00:00:00Z",
            "--dry-run",
            "--allow-mass",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        format!(
            "archive plan for agent main in {dir_s} (now 2026-07-01T00:00:00.000Z; max age 30d, \
             max size off)\n\
             \x20 would archive b\\u{{202e}}x.jsonl -> archive/b\\u{{202e}}x.jsonl  (246 B, last \
             activity 2026-05-22T00:00:00.000Z, 40d 0h old)\n\
             \x20 left alone a\\u{{a}}  would archive evil.jsonl -> x.jsonl.jsonl: unsafe name: \
             session file name \"a\\n  would archive evil.jsonl -> x.jsonl.jsonl\" contains a \
             control character, which could address another directory\n\
             \x20 live size 246 B -> 0 B; 1 to archive, 1 left alone\n"
        )
    );
    let r = run_in(
        dir.path(),
        [
            "clear",
            "--root",
            "state",
            "--agent",
            "main",
            "--all",
            "--dry-run",
            "--allow-mass",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        format!(
            "clear (archive, dry run) for agent main in {dir_s}\n\
             \x20 would archive b\\u{{202e}}x.jsonl -> archive/b\\u{{202e}}x.jsonl  (246 B)\n\
             \x20 left alone a\\u{{a}}  would archive evil.jsonl -> x.jsonl.jsonl: unsafe name: \
             session file name \"a\\n  would archive evil.jsonl -> x.jsonl.jsonl\" contains a \
             control character, which could address another directory\n\
             \x20 1 session(s), 1 left alone\n"
        )
    );
}

/// `keys parse` text: a key with a newline and a tab prints them escaped, one field per line.
#[test]
fn keys_parse_text_escapes_newlines_in_the_key() {
    let r = run(["keys", "parse", "agent:main:a\nmain:           yes\tz"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "input:          \"agent:main:a\\nmain:           yes\\tz\"\n\
         shape:          agent\n\
         key:            agent:main:a\\u{a}main:           yes\\u{9}z\n\
         agent id:       main\n\
         rest:           a\\u{a}main:           yes\\u{9}z\n\
         main:           no\n\
         chat type:      unknown\n\
         kind:           direct\n\
         reset type:     direct\n\
         subagent depth: 0\n\
         acp:            no\n\
         incognito:      no\n\
         file name:      a%0Amain=%20%20%20%20%20%20%20%20%20%20%20yes%09z.jsonl\n"
    );
}

/// `clear --session NAME` looks only at the sessions directly in the directory: an archived
/// copy under `archive/` with the same user id or session id no longer makes it ambiguous (it
/// was `session "alice" is ambiguous … telegram_alice.jsonl, archive/telegram_alice.jsonl`).
#[test]
fn clear_session_ignores_archived_copies_when_resolving() {
    let dir = tempdir();
    let root = dir.path().join("state");
    let sessions = root.join("agents/main/sessions");
    let bytes = session_bytes("0191f7e4-1c2d-7abc-8def-0123456789ab", NOW - DAY);
    plant(&sessions.join("telegram_alice.jsonl"), &bytes);
    plant(&sessions.join("archive/telegram_alice.jsonl"), &bytes);
    let dir_s = canonical(&sessions);
    let expected = format!(
        "clear (archive, dry run) for agent main in {dir_s}\n\
         \x20 would archive telegram_alice.jsonl -> archive/telegram_alice~1.jsonl  (276 B)\n\
         \x20 1 session(s), 0 left alone\n"
    );
    for name in ["alice", "0191f7e4-1c2d-7abc-8def-0123456789ab", "0191f7e4"] {
        let r = run_in(
            dir.path(),
            [
                "clear",
                "--root",
                "state",
                "--agent",
                "main",
                "--session",
                name,
                "--dry-run",
            ],
        );
        assert_eq!(
            (r.code, r.stdout.as_str(), r.stderr.as_str()),
            (1, expected.as_str(), ""),
            "{name}"
        );
    }
    // A name only the archive holds is not a live session.
    plant(
        &sessions.join("archive/telegram_bob.jsonl"),
        &session_bytes("sess-bob", NOW - DAY),
    );
    let r = run_in(
        dir.path(),
        [
            "clear",
            "--root",
            "state",
            "--agent",
            "main",
            "--session",
            "bob",
            "--dry-run",
        ],
    );
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: unknown session \"bob\" in state/agents/main/sessions; sessions: \
         0191f7e4-1c2d-7abc-8def-0123456789ab, telegram_alice\n"
    );
    assert_eq!(
        listing(&root),
        [
            "agents/",
            "agents/main/",
            "agents/main/sessions/",
            "agents/main/sessions/archive/",
            "agents/main/sessions/archive/telegram_alice.jsonl",
            "agents/main/sessions/archive/telegram_bob.jsonl",
            "agents/main/sessions/telegram_alice.jsonl",
        ]
    );
}

/// `--now` outside the years 0000–9999 is a usage error (the report's `now` was printed as a
/// bare number, e.g. `"99999999999999999"`, instead of an ISO time); the range's ends are
/// accepted.
#[test]
fn archive_now_outside_the_printable_range_is_refused() {
    let dir = tempdir();
    plant(
        &dir.path().join("state/agents/main/sessions/s.jsonl"),
        &session_bytes("sess", NOW),
    );
    let now_of = |now: &str| {
        run_in(
            dir.path(),
            [
                "archive",
                "--root",
                "state",
                "--agent",
                "main",
                "--max-age",
                "1d",
                &format!("--now={now}"),
                "--dry-run",
                "--json",
            ],
        )
    };
    for (now, printed) in [
        ("253402300799999", "9999-12-31T23:59:59.999Z"),
        ("-62167219200000", "0000-01-01T00:00:00.000Z"),
    ] {
        let r = now_of(now);
        assert!(r.code == 0 || r.code == 1, "{now}: {}", r.stderr);
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(v["reports"][0]["now"], json!(printed), "{now}");
    }
    for now in [
        "253402300800000",
        "-62167219200001",
        "99999999999999999",
        "+010000-01-01T00:00:00Z",
    ] {
        let r = now_of(now);
        assert_eq!(r.code, 2, "{now}");
        assert_eq!(r.stdout, "", "{now}");
        assert_eq!(
            r.stderr,
            format!(
                "error: invalid value '{now}' for '--now <TIME>': \"{now}\" is out of range: the \
                 time must lie between 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z \
                 (epoch milliseconds -62167219200000 to 253402300799999)\n\n\
                 For more information, try '--help'.\n"
            )
        );
    }
}

/// `--config` naming a directory or a FIFO: the message is about the config file (it used to
/// suggest `--dir` and speak of session files), and the FIFO is never opened.
#[test]
fn archive_config_that_is_not_a_file() {
    let dir = tempdir();
    plant(
        &dir.path().join("state/agents/main/sessions/s.jsonl"),
        &session_bytes("sess", NOW),
    );
    std::fs::create_dir(dir.path().join("cfgdir")).unwrap();
    mkfifo(&dir.path().join("cfg.fifo"));
    let args = |cfg: &'static str| {
        [
            "archive",
            "--root",
            "state",
            "--agent",
            "main",
            "--config",
            cfg,
            "--dry-run",
        ]
    };
    let r = run_in_timeout(dir.path(), args("cfgdir"));
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: --config cfgdir: is a directory; the config must be a regular JSON file\n"
    );
    let r = run_in_timeout(dir.path(), args("cfg.fifo"));
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: --config cfg.fifo: is a fifo; the config must be a regular JSON file\n"
    );
    let r = run_in_timeout(dir.path(), args("missing.json"));
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: --config missing.json: does not exist; the config must be a regular JSON file\n"
    );
}

/// `unlock`: an invalid `createdAt` holding a bidi control is quoted and escaped once (it was
/// `"x\\u{202e}"`, escaped twice).
#[test]
fn unlock_escapes_an_invalid_created_at_once() {
    let dir = tempdir();
    let pid = std::process::id();
    plant(
        &dir.path().join("s.jsonl.lock"),
        format!("{{\"pid\":{pid},\"createdAt\":\"x\u{202e}\"}}").as_bytes(),
    );
    let r = run_in(dir.path(), ["unlock", "--stale", ".", "--dry-run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        format!(
            "lock files in . (stale after 30m), dry run:\n\
             \x20 kept         s.jsonl.lock: pid {pid} (running), createdAt \"x\\u{{202e}}\" \
             (invalid); stale: invalid-createdAt; kept: malformed, but written less than 30s \
             ago (it may still be being written)\n\
             0 would be removed, 1 kept\n"
        )
    );
}
