//! The write commands of the `sessions` binary on temporary stores: `repair` (dry run, real run
//! with the reference's repaired bytes and a byte-identical backup, a live lock), `unlock
//! --stale` (a dead holder's lock removed, a live one kept, dry runs remove nothing), `keys
//! parse` (exact JSON, bad keys naming the segment), `archive` (exact plan, exact listing
//! after the moves, policy sources) and `clear` (refusal without --yes, one session archived,
//! purge). Every test checks the exact output and the exact directory listing and file bytes
//! before and after.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::{Path, PathBuf};

use crate::support::*;
use serde_json::{Value, json};

fn repair_case(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../session-store/tests/fixtures/repair")
        .join(rel)
}

// ---------------------------------------------------------------------------------------
// repair

const REPAIR_TEXT_NEEDED: &str = "\
file:                         s.jsonl
result:                       needs repair (dry run: nothing written)
dropped lines:                2
rewritten assistant messages: 1
rewritten user messages:      1
removed corrupted images:     0
inserted tool results:        0
";

#[test]
fn repair_dry_run_reports_and_writes_nothing() {
    let dir = tempdir();
    let input = std::fs::read(repair_case("cases/10-drops-and-rewrites.jsonl")).unwrap();
    let file = dir.path().join("s.jsonl");
    plant_copy(&repair_case("cases/10-drops-and-rewrites.jsonl"), &file);
    let before = fingerprint(&file);

    let r = run_in(dir.path(), ["repair", "--dry-run", "s.jsonl"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stdout, REPAIR_TEXT_NEEDED);
    assert_eq!(r.stderr, "");
    assert_eq!(fingerprint(&file), before);
    assert_eq!(listing(dir.path()), ["s.jsonl"]);

    let r = run_in(dir.path(), ["repair", "--dry-run", "--json", "s.jsonl"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        r#"{
  "file": "s.jsonl",
  "dryRun": true,
  "needsRepair": true,
  "repaired": false,
  "reason": null,
  "droppedLines": 2,
  "rewrittenAssistantMessages": 1,
  "droppedBlankUserMessages": 0,
  "rewrittenUserMessages": 1,
  "removedCorruptedImageBlocks": 0,
  "insertedToolResults": 0,
  "backupPath": null,
  "lockPath": null,
  "messages": []
}
"#
    );
    assert_eq!(fingerprint(&file), before);
    assert_eq!(std::fs::read(&file).unwrap(), input);
    assert_eq!(listing(dir.path()), ["s.jsonl"]);

    // A dry run on a file that needs nothing: exit 0.
    let clean = dir.path().join("clean.jsonl");
    plant_copy(
        &repair_case("expected/10-drops-and-rewrites.out.jsonl"),
        &clean,
    );
    let r = run_in(dir.path(), ["repair", "--dry-run", "clean.jsonl"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "\
file:                         clean.jsonl
result:                       nothing to repair
dropped lines:                0
rewritten assistant messages: 0
rewritten user messages:      0
removed corrupted images:     0
inserted tool results:        0
"
    );
    assert_eq!(listing(dir.path()), ["clean.jsonl", "s.jsonl"]);
}

#[test]
fn repair_writes_the_reference_bytes_and_keeps_a_byte_identical_backup() {
    let dir = tempdir();
    let input = std::fs::read(repair_case("cases/10-drops-and-rewrites.jsonl")).unwrap();
    // OpenClaw 2026.6.11's own repaired bytes for this input.
    let expected = std::fs::read(repair_case("expected/10-drops-and-rewrites.out.jsonl")).unwrap();
    let file = dir.path().join("s.jsonl");
    plant(&file, &input);

    let r = run_in(dir.path(), ["repair", "--json", "s.jsonl"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(std::fs::read(&file).unwrap(), expected);
    let names = listing(dir.path());
    assert_eq!(names.len(), 2, "{names:?}");
    assert_eq!(names[0], "s.jsonl");
    let bak = names[1].clone();
    assert!(bak.starts_with("s.jsonl.bak-"), "{bak}");
    assert_eq!(std::fs::read(dir.path().join(&bak)).unwrap(), input);
    let base = canonical(dir.path());
    assert_eq!(
        r.stdout,
        pretty(&json!({
            "file": "s.jsonl",
            "dryRun": false,
            "needsRepair": true,
            "repaired": true,
            "reason": null,
            "droppedLines": 2,
            "rewrittenAssistantMessages": 1,
            "droppedBlankUserMessages": 0,
            "rewrittenUserMessages": 1,
            "removedCorruptedImageBlocks": 0,
            "insertedToolResults": 0,
            "backupPath": format!("{base}/{bak}"),
            "lockPath": format!("{base}/s.jsonl.lock"),
            "messages": [{
                "level": "debug",
                "text": "session file repaired: dropped 2 malformed line(s), rewrote 1 assistant \
                         message(s), rewrote 1 user message(s) (s.jsonl)",
            }],
        }))
    );

    // Again: nothing to repair, exit 0, no second backup, no lock left behind.
    let r = run_in(dir.path(), ["repair", "s.jsonl"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "\
file:                         s.jsonl
result:                       nothing to repair
dropped lines:                0
rewritten assistant messages: 0
rewritten user messages:      0
removed corrupted images:     0
inserted tool results:        0
"
    );
    assert_eq!(listing(dir.path()), ["s.jsonl".to_owned(), bak]);
    assert_eq!(std::fs::read(&file).unwrap(), expected);
}

#[test]
fn repair_text_output_and_no_backup() {
    let dir = tempdir();
    let input = std::fs::read(repair_case("cases/11-code-mode-tool-results.jsonl")).unwrap();
    let a = dir.path().join("a.jsonl");
    let b = dir.path().join("b.jsonl");
    plant(&a, &input);
    plant(&b, &input);

    let r = run_in(dir.path(), ["repair", "a.jsonl"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let bak = listing(dir.path())
        .into_iter()
        .find(|n| n.starts_with("a.jsonl.bak-"))
        .unwrap();
    assert_eq!(
        r.stdout,
        format!(
            "\
file:                         a.jsonl
result:                       repaired
dropped lines:                0
rewritten assistant messages: 0
rewritten user messages:      0
removed corrupted images:     0
inserted tool results:        3
backup:                       {}/{bak}
",
            canonical(dir.path())
        )
    );
    assert_eq!(std::fs::read(dir.path().join(&bak)).unwrap(), input);

    let r = run_in(dir.path(), ["repair", "--no-backup", "b.jsonl"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stdout.ends_with(
            "inserted tool results:        3\nbackup:                       none (--no-backup: \
             deleted once the rewrite was verified)\n"
        ),
        "{}",
        r.stdout
    );
    assert_eq!(
        listing(dir.path()),
        ["a.jsonl".to_owned(), bak, "b.jsonl".to_owned()]
    );
    // Both got the same three synthetic results (ids are fresh, so compare the line count).
    let lines = |p: &Path| std::fs::read_to_string(p).unwrap().lines().count();
    assert_eq!(lines(&a), lines(&b));
    assert_eq!(
        lines(&a),
        String::from_utf8(input).unwrap().lines().count() + 3
    );
}

#[test]
fn repair_of_a_file_it_cannot_repair_exits_2_with_the_reason() {
    let dir = tempdir();
    let input = std::fs::read(repair_case("cases/19-invalid-header-message-first.jsonl")).unwrap();
    let file = dir.path().join("s.jsonl");
    plant(&file, &input);
    let r = run_in(dir.path(), ["repair", "s.jsonl"]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stdout,
        "\
file:                         s.jsonl
result:                       not repaired: invalid session header
dropped lines:                0
rewritten assistant messages: 0
rewritten user messages:      0
removed corrupted images:     0
inserted tool results:        0
"
    );
    assert_eq!(
        r.stderr,
        "error: s.jsonl was not repaired: invalid session header\n"
    );
    assert_eq!(std::fs::read(&file).unwrap(), input);
    assert_eq!(listing(dir.path()), ["s.jsonl"]);
}

#[test]
fn repair_waits_for_a_live_lock_then_fails_naming_it() {
    let dir = tempdir();
    let input = std::fs::read(repair_case("cases/10-drops-and-rewrites.jsonl")).unwrap();
    let file = dir.path().join("s.jsonl");
    plant(&file, &input);
    let lock = dir.path().join("s.jsonl.lock");
    let payload = live_lock();
    plant(&lock, payload.as_bytes());

    let r = run_in_timeout(dir.path(), ["repair", "--lock-timeout", "200ms", "s.jsonl"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stdout, "");
    let prefix = format!(
        "error: session file locked (timeout 200ms): pid={} alive=true ageMs=",
        std::process::id()
    );
    let suffix = format!(" {}/s.jsonl.lock\n", canonical(dir.path()));
    assert!(r.stderr.starts_with(&prefix), "{}", r.stderr);
    assert!(r.stderr.ends_with(&suffix), "{}", r.stderr);
    let age = &r.stderr[prefix.len()..r.stderr.len() - suffix.len()];
    assert!(age.parse::<u64>().is_ok(), "{age}");
    // Nothing changed: the session, the holder's lock, the listing.
    assert_eq!(std::fs::read(&file).unwrap(), input);
    assert_eq!(std::fs::read_to_string(&lock).unwrap(), payload);
    assert_eq!(listing(dir.path()), ["s.jsonl", "s.jsonl.lock"]);

    // A dry run takes no lock: it reports even while the lock is held.
    let r = run_in(dir.path(), ["repair", "--dry-run", "s.jsonl"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stdout, REPAIR_TEXT_NEEDED);
    assert_eq!(listing(dir.path()), ["s.jsonl", "s.jsonl.lock"]);
}

#[test]
fn repair_reclaims_a_dead_holders_lock() {
    let dir = tempdir();
    let input = std::fs::read(repair_case("cases/10-drops-and-rewrites.jsonl")).unwrap();
    let file = dir.path().join("s.jsonl");
    plant(&file, &input);
    plant(
        &dir.path().join("s.jsonl.lock"),
        lock_payload(dead_pid(), &now_iso(), None).as_bytes(),
    );
    let r = run_in_timeout(dir.path(), ["repair", "--lock-timeout", "5s", "s.jsonl"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let names = listing(dir.path());
    assert_eq!(names.len(), 2, "{names:?}");
    assert_eq!(names[0], "s.jsonl");
    assert!(names[1].starts_with("s.jsonl.bak-"), "{names:?}");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        std::fs::read(repair_case("expected/10-drops-and-rewrites.out.jsonl")).unwrap()
    );
}

// ---------------------------------------------------------------------------------------
// unlock

/// The JSON with every `ageMs` checked to be a number and set to 0.
fn zero_ages(text: &str) -> Value {
    let mut v: Value = serde_json::from_str(text).unwrap();
    for l in v["locks"].as_array_mut().unwrap() {
        assert!(l["ageMs"].is_u64(), "{l}");
        l["ageMs"] = json!(0);
    }
    v
}

/// The text with each `, <age> ago;` replaced by `, [age] ago;`.
fn redact_ages(text: &str) -> String {
    text.lines()
        .map(|l| match (l.find("Z, "), l.find(" ago;")) {
            (Some(a), Some(b)) if a < b => format!("{}Z, [age]{}", &l[..a], &l[b..]),
            _ => l.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

#[test]
fn unlock_removes_a_dead_holders_lock_and_keeps_a_live_one() {
    let dir = tempdir();
    let sessions = dir.path().join("sessions");
    let created = now_iso();
    let dead = dead_pid();
    let dead_lock = lock_payload(dead, &created, None);
    let live = lock_payload(std::process::id(), &created, Some(own_starttime()));
    plant(&sessions.join("a.jsonl"), b"{}\n");
    plant(&sessions.join("a.jsonl.lock"), dead_lock.as_bytes());
    plant(&sessions.join("b.jsonl"), b"{}\n");
    plant(&sessions.join("b.jsonl.lock"), live.as_bytes());
    plant(&sessions.join("notes.lock"), b"not a session lock");
    let before = contents(&sessions);
    let pid = std::process::id();

    // Dry run, text: nothing removed.
    let r = run_in(dir.path(), ["unlock", "--stale", "sessions", "--dry-run"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        redact_ages(&r.stdout),
        format!(
            "\
lock files in sessions (stale after 30m), dry run:
  would remove a.jsonl.lock: pid {dead} (not running), created {created}, [age] ago; stale: dead-pid
  kept         b.jsonl.lock: pid {pid} (running), created {created}, [age] ago; live
1 would be removed, 1 kept
"
        )
    );
    assert_eq!(contents(&sessions), before);

    // Dry run, JSON.
    let r = run_in(
        dir.path(),
        ["unlock", "--stale", "sessions", "--dry-run", "--json"],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    let lock = |name: &str, pid: u32, alive: bool, reasons: &[&str], action: &str, kept: Value| {
        json!({
            "lockPath": format!("sessions/{name}.lock"),
            "sessionFile": format!("sessions/{name}"),
            "pid": pid,
            "pidAlive": alive,
            "createdAt": created,
            "ageMs": 0,
            "stale": !reasons.is_empty(),
            "staleReasons": reasons,
            "action": action,
            "keptBecause": kept,
        })
    };
    assert_eq!(
        zero_ages(&r.stdout),
        json!({
            "dir": "sessions",
            "session": null,
            "dryRun": true,
            "staleAfterMs": 1_800_000,
            "locks": [
                lock("a.jsonl", dead, false, &["dead-pid"], "would-remove", Value::Null),
                lock("b.jsonl", pid, true, &[], "kept", json!("live")),
            ],
            "removed": 0,
            "wouldRemove": 1,
            "kept": 1,
        })
    );
    assert_eq!(contents(&sessions), before);

    // The real run removes the dead holder's lock only.
    let r = run_in(dir.path(), ["unlock", "--stale", "sessions", "--json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        zero_ages(&r.stdout),
        json!({
            "dir": "sessions",
            "session": null,
            "dryRun": false,
            "staleAfterMs": 1_800_000,
            "locks": [
                lock("a.jsonl", dead, false, &["dead-pid"], "removed", Value::Null),
                lock("b.jsonl", pid, true, &[], "kept", json!("live")),
            ],
            "removed": 1,
            "wouldRemove": 0,
            "kept": 1,
        })
    );
    assert_eq!(
        listing(&sessions),
        ["a.jsonl", "b.jsonl", "b.jsonl.lock", "notes.lock"]
    );
    assert_eq!(
        std::fs::read_to_string(sessions.join("b.jsonl.lock")).unwrap(),
        live
    );

    // Nothing stale is left: exit 0.
    let r = run_in(dir.path(), ["unlock", "--stale", "sessions"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        redact_ages(&r.stdout),
        format!(
            "\
lock files in sessions (stale after 30m):
  kept         b.jsonl.lock: pid {pid} (running), created {created}, [age] ago; live
0 removed, 1 kept
"
        )
    );
    assert_eq!(
        listing(&sessions),
        ["a.jsonl", "b.jsonl", "b.jsonl.lock", "notes.lock"]
    );
}

#[test]
fn unlock_never_removes_an_old_lock_of_a_running_holder() {
    let dir = tempdir();
    let old = "2020-01-01T00:00:00.000Z";
    let payload = lock_payload(std::process::id(), old, Some(own_starttime()));
    plant(&dir.path().join("s.jsonl.lock"), payload.as_bytes());
    let r = run_in(
        dir.path(),
        ["unlock", "--stale", ".", "--stale-after", "1h"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        redact_ages(&r.stdout),
        format!(
            "\
lock files in . (stale after 1h):
  kept         s.jsonl.lock: pid {} (running), created {old}, [age] ago; stale: too-old; kept: its holder is running: an old lock of a live process is reported, never removed
0 removed, 1 kept
",
            std::process::id()
        )
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("s.jsonl.lock")).unwrap(),
        payload
    );
}

#[test]
fn unlock_reclaims_a_malformed_lock_only_once_it_is_old_enough() {
    let dir = tempdir();
    let fresh = dir.path().join("fresh.jsonl.lock");
    let old = dir.path().join("old.jsonl.lock");
    plant(&fresh, b"{}");
    plant(&old, b"");
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .append(true)
        .open(&old)
        .unwrap()
        .set_modified(past)
        .unwrap();
    let r = run_in(dir.path(), ["unlock", "--stale", "."]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "\
lock files in . (stale after 30m):
  kept         fresh.jsonl.lock: no valid pid, no createdAt; stale: missing-pid, invalid-createdAt; kept: malformed, but written less than 30s ago (it may still be being written)
  removed      old.jsonl.lock: no valid pid, no createdAt; stale: missing-pid, invalid-createdAt
1 removed, 1 kept
"
    );
    assert_eq!(listing(dir.path()), ["fresh.jsonl.lock"]);
    assert_eq!(std::fs::read(&fresh).unwrap(), b"{}");
}

#[test]
fn unlock_usage_errors() {
    let dir = tempdir();
    let r = run_in(dir.path(), ["unlock", "."]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("required arguments were not provided:\n  --stale"),
        "{}",
        r.stderr
    );
    let r = run_in(dir.path(), ["unlock", "--stale", "missing"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .starts_with("error: cannot read directory missing: "),
        "{}",
        r.stderr
    );
    let r = run_in(
        dir.path(),
        ["unlock", "--stale", ".", "--stale-after", "5x"],
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("invalid duration \"5x\""), "{}", r.stderr);
    let r = run_in(dir.path(), ["unlock", "--stale", "."]);
    assert_eq!(r.code, 0);
    assert_eq!(r.stdout, "no lock files in .\n");
}

// ---------------------------------------------------------------------------------------
// keys parse

#[test]
fn keys_parse_json_of_spec_keys() {
    let cases = [
        (
            // Case-insensitive parse (§5.1's example).
            "AGENT:Main:Hook:Webhook:42",
            json!({
                "input": "AGENT:Main:Hook:Webhook:42",
                "shape": "agent",
                "key": "agent:main:hook:webhook:42",
                "error": null,
                "agentId": "main",
                "agentIdValid": true,
                "rest": "hook:webhook:42",
                "sentinel": null,
                "main": false,
                "chatType": "unknown",
                "kind": "direct",
                "resetType": "direct",
                "peer": null,
                "thread": null,
                "cron": null,
                "subagent": false,
                "subagentDepth": 0,
                "acp": false,
                "incognito": false,
                "fileName": "hook=webhook=42.jsonl",
                "fileNameError": null,
            }),
        ),
        (
            // Legacy `:dm:` is a direct agent key.
            "agent:main:telegram:dm:Alice",
            json!({
                "input": "agent:main:telegram:dm:Alice",
                "shape": "agent",
                "key": "agent:main:telegram:dm:alice",
                "error": null,
                "agentId": "main",
                "agentIdValid": true,
                "rest": "telegram:dm:alice",
                "sentinel": null,
                "main": false,
                "chatType": "direct",
                "kind": "direct",
                "resetType": "direct",
                "peer": {
                    "channel": "telegram",
                    "accountId": null,
                    "kind": "direct",
                    "peerId": "alice",
                    "legacyDm": true,
                },
                "thread": null,
                "cron": null,
                "subagent": false,
                "subagentDepth": 0,
                "acp": false,
                "incognito": false,
                "fileName": "telegram=dm=alice.jsonl",
                "fileNameError": null,
            }),
        ),
        (
            // A cron run key.
            "agent:main:cron:job-1:run:r1",
            json!({
                "input": "agent:main:cron:job-1:run:r1",
                "shape": "agent",
                "key": "agent:main:cron:job-1:run:r1",
                "error": null,
                "agentId": "main",
                "agentIdValid": true,
                "rest": "cron:job-1:run:r1",
                "sentinel": null,
                "main": false,
                "chatType": "unknown",
                "kind": "cron",
                "resetType": "direct",
                "peer": null,
                "thread": null,
                "cron": {"job": "job-1", "runId": "r1"},
                "subagent": false,
                "subagentDepth": 0,
                "acp": false,
                "incognito": false,
                "fileName": "cron=job-1=run=r1.jsonl",
                "fileNameError": null,
            }),
        ),
        (
            // A thread of a channel, with its parent key.
            "agent:main:slack:channel:c1:thread:t9",
            json!({
                "input": "agent:main:slack:channel:c1:thread:t9",
                "shape": "agent",
                "key": "agent:main:slack:channel:c1:thread:t9",
                "error": null,
                "agentId": "main",
                "agentIdValid": true,
                "rest": "slack:channel:c1:thread:t9",
                "sentinel": null,
                "main": false,
                "chatType": "channel",
                "kind": "group",
                "resetType": "thread",
                "peer": {
                    "channel": "slack",
                    "accountId": null,
                    "kind": "channel",
                    "peerId": "c1",
                    "legacyDm": false,
                },
                "thread": {"parentKey": "agent:main:slack:channel:c1", "threadId": "t9"},
                "cron": null,
                "subagent": false,
                "subagentDepth": 0,
                "acp": false,
                "incognito": false,
                "fileName": "slack=channel=c1=thread=t9.jsonl",
                "fileNameError": null,
            }),
        ),
        (
            // Subagent depth counts the markers.
            "agent:main:subagent:p:subagent:c",
            json!({
                "input": "agent:main:subagent:p:subagent:c",
                "shape": "agent",
                "key": "agent:main:subagent:p:subagent:c",
                "error": null,
                "agentId": "main",
                "agentIdValid": true,
                "rest": "subagent:p:subagent:c",
                "sentinel": null,
                "main": false,
                "chatType": "unknown",
                "kind": "direct",
                "resetType": "direct",
                "peer": null,
                "thread": null,
                "cron": null,
                "subagent": true,
                "subagentDepth": 2,
                "acp": false,
                "incognito": false,
                "fileName": "subagent=p=subagent=c.jsonl",
                "fileNameError": null,
            }),
        ),
    ];
    for (key, expected) in cases {
        let r = run(["keys", "parse", "--json", key]);
        assert_eq!(r.code, 0, "{key}: {}", r.stderr);
        assert_eq!(r.stdout, pretty(&expected), "{key}");
        assert_eq!(r.stderr, "");
    }
}

#[test]
fn keys_parse_text_and_main_key() {
    let r = run(["keys", "parse", "--main-key", "Home", "agent:ops:home"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "\
input:          \"agent:ops:home\"
shape:          agent
key:            agent:ops:home
agent id:       ops
rest:           home
main:           yes
chat type:      unknown
kind:           direct
reset type:     direct
subagent depth: 0
acp:            no
incognito:      no
file name:      home.jsonl
"
    );
    let r = run(["keys", "parse", "agent:ops:home", "--json"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["main"], json!(false), "the main key defaults to main");
}

#[test]
fn keys_parse_bad_keys_exit_2_naming_the_segment() {
    let cases = [
        (
            "agent:../x:main",
            "error: session key \"agent:../x:main\": segment 2 (the agent id \"../x\") is not a \
             valid agent id: expected [a-z0-9][a-z0-9_-]{0,63} (it would normalise to \"x\")\n",
        ),
        (
            "agent::broken",
            "error: session key \"agent::broken\": segment 2 (the agent id) is empty\n",
        ),
        (
            "agent:main",
            "error: session key \"agent:main\": nothing follows agent id \"main\" (segment 3, \
             the rest, is missing)\n",
        ),
        (
            "../../etc/passwd",
            "error: session key \"../../etc/passwd\": segment 1 is \"../../etc/passwd\", \
             expected \"agent\" (keys look like agent:<agentId>:<rest>)\n",
        ),
    ];
    for (key, stderr) in cases {
        let r = run(["keys", "parse", "--json", key]);
        assert_eq!(r.code, 2, "{key}");
        assert_eq!(r.stderr, stderr, "{key}");
        // The classification is still printed.
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(v["input"], json!(key));
    }
    let r = run(["keys", "parse", "agent:../x:main"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stdout
            .contains("agent id:       ../x (invalid agent id)\n"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.ends_with(
        "file name:      - (agent id \"../x\" cannot name a store directory (expected \"x\": \
         [a-z0-9][a-z0-9_-]{0,63}))\n"
    ));
}

// ---------------------------------------------------------------------------------------
// archive and clear

/// `<root>/agents/main/sessions/` with: two old sessions (180 and 40 days), a new one (2 days),
/// an old locked one, an old one behind a symlink, a file that is not a session; and
/// `<root>/agents/ops/sessions/` with one old session.
fn retention_store(root: &Path) -> PathBuf {
    let s = root.join("agents/main/sessions");
    plant(
        &s.join("old.jsonl"),
        &session_bytes("sess-old", NOW - 180 * DAY),
    );
    plant(
        &s.join("telegram=direct=bob.jsonl"),
        &session_bytes("sess-bob", NOW - 40 * DAY),
    );
    plant(
        &s.join("new.jsonl"),
        &session_bytes("sess-new", NOW - 2 * DAY),
    );
    plant(
        &s.join("locked.jsonl"),
        &session_bytes("sess-locked", NOW - 200 * DAY),
    );
    plant(&s.join("locked.jsonl.lock"), live_lock().as_bytes());
    plant(
        &root.join("elsewhere/linked.jsonl"),
        &session_bytes("sess-linked", NOW - 300 * DAY),
    );
    std::os::unix::fs::symlink(root.join("elsewhere/linked.jsonl"), s.join("link.jsonl")).unwrap();
    plant(&s.join("notes.jsonl"), b"not a session\n");
    plant(
        &root.join("agents/ops/sessions/old-ops.jsonl"),
        &session_bytes("sess-ops", NOW - 100 * DAY),
    );
    s
}

const STORE_LISTING: [&str; 13] = [
    "agents/",
    "agents/main/",
    "agents/main/sessions/",
    "agents/main/sessions/link.jsonl",
    "agents/main/sessions/locked.jsonl",
    "agents/main/sessions/locked.jsonl.lock",
    "agents/main/sessions/new.jsonl",
    "agents/main/sessions/notes.jsonl",
    "agents/main/sessions/old.jsonl",
    "agents/main/sessions/telegram=direct=bob.jsonl",
    "agents/ops/",
    "agents/ops/sessions/",
    "agents/ops/sessions/old-ops.jsonl",
];

fn store_listing(root: &Path) -> Vec<String> {
    listing(root)
        .into_iter()
        .filter(|p| !p.starts_with("elsewhere"))
        .collect()
}

#[test]
fn archive_dry_run_prints_the_plan_then_the_real_run_moves_the_files() {
    let dir = tempdir();
    let root = dir.path().join("state");
    retention_store(&root);
    assert_eq!(store_listing(&root), STORE_LISTING);
    let before = contents(&root);
    let args = [
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

    let mut dry = args.to_vec();
    dry.push("--dry-run");
    let r = run_in(dir.path(), &dry);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let plan = "\
archive plan for agent main in [root]/agents/main/sessions (now 2026-07-01T00:00:00.000Z; max age 30d, max size off)
  would archive old.jsonl -> archive/old.jsonl  (248 B, last activity 2026-01-02T00:00:00.000Z, 180d 0h old)
  would archive telegram=direct=bob.jsonl -> archive/telegram=direct=bob.jsonl  (248 B, last activity 2026-05-22T00:00:00.000Z, 40d 0h old)
  left alone link.jsonl: [root]/agents/main/sessions/link.jsonl is a symlink to [root]/elsewhere/linked.jsonl, outside the sessions directory (never followed)
  left alone locked.jsonl: locked (locked.jsonl.lock exists)
  left alone notes.jsonl: not a session (no session header)
  live size 995 B -> 499 B; 2 to archive, 3 left alone
";
    assert_eq!(redact(&r.stdout, &root, "[root]"), plan);
    assert_eq!(r.stderr, "");
    assert_eq!(contents(&root), before);
    assert_eq!(store_listing(&root), STORE_LISTING);

    // The real run moves exactly the planned files, bytes unchanged.
    let r = run_in(dir.path(), args);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        redact(&r.stdout, &root, "[root]"),
        plan.replace("archive plan for", "archive for")
            .replace("would archive", "archived")
            + "  audit log [root]/agents/main/sessions/sessions-audit.log: 2 lines appended\n"
    );
    assert_eq!(
        store_listing(&root),
        [
            "agents/",
            "agents/main/",
            "agents/main/sessions/",
            "agents/main/sessions/archive/",
            "agents/main/sessions/archive/old.jsonl",
            "agents/main/sessions/archive/telegram=direct=bob.jsonl",
            "agents/main/sessions/link.jsonl",
            "agents/main/sessions/locked.jsonl",
            "agents/main/sessions/locked.jsonl.lock",
            "agents/main/sessions/new.jsonl",
            "agents/main/sessions/notes.jsonl",
            "agents/main/sessions/sessions-audit.log",
            "agents/ops/",
            "agents/ops/sessions/",
            "agents/ops/sessions/old-ops.jsonl",
        ]
    );
    let moved = |from: &str, to: &str| {
        let was = before.iter().find(|(p, _)| p == from).unwrap();
        assert_eq!(std::fs::read(root.join(to)).unwrap(), was.1, "{from}");
    };
    moved(
        "agents/main/sessions/old.jsonl",
        "agents/main/sessions/archive/old.jsonl",
    );
    moved(
        "agents/main/sessions/telegram=direct=bob.jsonl",
        "agents/main/sessions/archive/telegram=direct=bob.jsonl",
    );
    // The symlink's target was never touched.
    assert_eq!(
        std::fs::read(root.join("elsewhere/linked.jsonl")).unwrap(),
        session_bytes("sess-linked", NOW - 300 * DAY)
    );

    // Nothing left to archive: exit 0.
    let r = run_in(dir.path(), args);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn archive_json_all_agents_and_policy_sources() {
    let dir = tempdir();
    let root = dir.path().join("state");
    retention_store(&root);
    let before = contents(&root);
    let planned = |extra: &[&str]| -> Vec<Vec<String>> {
        let mut args = vec![
            "archive",
            "--root",
            "state",
            "--all",
            "--now",
            "1782864000000",
            "--dry-run",
            "--json",
        ];
        args.extend_from_slice(extra);
        let r = run_in(dir.path(), &args);
        assert!(r.code == 0 || r.code == 1, "{extra:?}: {}", r.stderr);
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(v["dryRun"], json!(true));
        v["reports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|rep| {
                rep["actions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| a["file"].as_str().unwrap().to_owned())
                    .collect()
            })
            .collect()
    };
    assert_eq!(
        planned(&["--max-age", "30d"]),
        [
            vec!["old.jsonl", "telegram=direct=bob.jsonl"],
            vec!["old-ops.jsonl"]
        ]
    );
    // From a config file: sessions.retention.maxAge.
    plant(
        &dir.path().join("cfg.json"),
        br#"{"sessions": {"retention": {"maxAge": "150d"}}, "other": 1}"#,
    );
    assert_eq!(
        planned(&["--config", "cfg.json"]),
        [vec!["old.jsonl"], vec![]]
    );
    // The flag wins over the file.
    assert_eq!(
        planned(&["--config", "cfg.json", "--max-age", "90d"]),
        [vec!["old.jsonl"], vec!["old-ops.jsonl"]]
    );
    // maxSize: the oldest go until the live sessions fit (locked files count and stay).
    assert_eq!(
        planned(&["--max-age", "off", "--max-size", "500"]),
        [vec!["old.jsonl", "telegram=direct=bob.jsonl"], vec![]]
    );
    assert_eq!(contents(&root), before);

    // The full JSON of one agent's plan.
    let r = run_in(
        dir.path(),
        [
            "archive",
            "--root",
            "state",
            "--agent",
            "ops",
            "--max-age",
            "30d",
            "--now",
            "2026-07-01T00:00:00Z",
            "--dry-run",
            "--json",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    let dir_ops = canonical(&root.join("agents/ops/sessions"));
    assert_eq!(
        r.stdout,
        pretty(&json!({
            "dryRun": true,
            "refused": false,
            "reports": [{
                "agentId": "ops",
                "sessionsDir": dir_ops,
                "archiveDir": format!("{dir_ops}/archive"),
                "dryRun": true,
                "now": "2026-07-01T00:00:00.000Z",
                "policy": {
                    "maxAge": "30d",
                    "maxAgeMs": 2_592_000_000_u64,
                    "maxSize": null,
                    "maxSizeBytes": null,
                },
                "liveBytesBefore": 248,
                "liveBytesAfter": 0,
                "liveSessions": 1,
                "massSweep": {"sessions": 1, "liveSessions": 1},
                "actions": [{
                    "file": "old-ops.jsonl",
                    "destination": "archive/old-ops.jsonl",
                    "sessionKey": "agent:ops:old-ops",
                    "sessionId": "sess-ops",
                    "lastActivity": "2026-03-23T00:00:00.000Z",
                    "lastActivityMs": NOW - 100 * DAY,
                    "sizeBytes": 248,
                    "reason": {"kind": "max-age", "ageMs": 100 * DAY},
                    "outcome": "planned",
                }],
                "skipped": [],
            }],
            "errors": [],
            "skippedAgents": [],
        }))
    );
    assert_eq!(contents(&root), before);
}

#[test]
fn archive_usage_errors() {
    let dir = tempdir();
    let root = dir.path().join("state");
    retention_store(&root);
    let before = contents(&root);
    let r = run_in(
        dir.path(),
        ["archive", "--root", "state", "--agent", "main"],
    );
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: no retention policy: give --max-age DURATION (e.g. 30d) and/or --max-size SIZE \
         (e.g. 100mb), or --config FILE with sessions.retention.maxAge / maxSize\n"
    );
    plant(
        &dir.path().join("off.json"),
        br#"{"sessions": {"retention": {"maxAge": false}}}"#,
    );
    let r = run_in(
        dir.path(),
        [
            "archive", "--root", "state", "--agent", "main", "--config", "off.json",
        ],
    );
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: no retention policy: sessions.retention.maxAge and maxSize are both off in \
         off.json (or turned off by the flags); give --max-age DURATION or --max-size SIZE\n"
    );
    plant(
        &dir.path().join("typo.json"),
        br#"{"sessions": {"retention": {"maxAgee": "3d"}}}"#,
    );
    let r = run_in(
        dir.path(),
        [
            "archive",
            "--root",
            "state",
            "--agent",
            "main",
            "--config",
            "typo.json",
        ],
    );
    assert_eq!(r.code, 2);
    // Said once, with its position: not followed by serde's own copy of the message.
    assert_eq!(
        r.stderr,
        "error: typo.json: invalid sessions config: unknown field `maxAgee`, expected `maxAge` \
         or `maxSize` at line 1, column 37 (byte offset 36)\n"
    );
    let r = run_in(
        dir.path(),
        ["archive", "--root", "state", "--max-age", "3d"],
    );
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: archive needs --agent ID (one agent) or --all (every agent of the store)\n"
    );
    let r = run_in(
        dir.path(),
        [
            "archive",
            "--root",
            "state",
            "--agent",
            "mian",
            "--max-age",
            "3d",
        ],
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("did you mean: main?"), "{}", r.stderr);
    let r = run_in(
        dir.path(),
        [
            "archive",
            "--root",
            "state",
            "--agent",
            "main",
            "--max-age",
            "3x",
        ],
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("invalid duration \"3x\""), "{}", r.stderr);
    assert_eq!(contents(&root), before);
}

#[test]
fn clear_refuses_without_yes_and_archives_one_session_with_it() {
    let dir = tempdir();
    let root = dir.path().join("state");
    let s = retention_store(&root);
    let before = contents(&root);
    let new_bytes = std::fs::read(s.join("new.jsonl")).unwrap();

    for extra in [&[][..], &["--purge"][..]] {
        let mut args = vec![
            "clear",
            "--root",
            "state",
            "--agent",
            "main",
            "--session",
            "new",
        ];
        args.extend_from_slice(extra);
        let r = run_in(dir.path(), &args);
        assert_eq!(r.code, 2);
        assert_eq!(r.stdout, "");
        assert_eq!(
            r.stderr,
            format!(
                "error: clear changes the store ({}): add --yes to do it, or --dry-run to see \
                 what it would do; nothing was changed\n",
                if extra.is_empty() {
                    "it moves sessions into archive/"
                } else {
                    "--purge deletes sessions"
                }
            )
        );
        assert_eq!(contents(&root), before);
    }

    // Dry run: the plan, nothing moved.
    let r = run_in(
        dir.path(),
        [
            "clear",
            "--root",
            "state",
            "--agent",
            "main",
            "--session",
            "new",
            "--dry-run",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        redact(&r.stdout, &root, "[root]"),
        "\
clear (archive, dry run) for agent main in [root]/agents/main/sessions
  would archive new.jsonl -> archive/new.jsonl  (248 B)
  1 session(s), 0 left alone
"
    );
    assert_eq!(contents(&root), before);

    // --yes: moved into archive/, bytes unchanged, nothing else touched.
    let r = run_in(
        dir.path(),
        [
            "clear",
            "--root",
            "state",
            "--agent",
            "main",
            "--session",
            "new",
            "--yes",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        redact(&r.stdout, &root, "[root]"),
        "\
clear (archive) for agent main in [root]/agents/main/sessions
  archived new.jsonl -> archive/new.jsonl  (248 B)
  1 session(s), 0 left alone
  audit log [root]/agents/main/sessions/sessions-audit.log: 1 line appended
"
    );
    let mut expected: Vec<String> = STORE_LISTING
        .iter()
        .filter(|p| **p != "agents/main/sessions/new.jsonl")
        .map(|p| (*p).to_owned())
        .collect();
    expected.push("agents/main/sessions/archive/".to_owned());
    expected.push("agents/main/sessions/archive/new.jsonl".to_owned());
    expected.push("agents/main/sessions/sessions-audit.log".to_owned());
    expected.sort();
    assert_eq!(store_listing(&root), expected);
    assert_eq!(
        std::fs::read(s.join("archive/new.jsonl")).unwrap(),
        new_bytes
    );

    // By session key, a locked session is left alone: exit 2, nothing moved.
    let r = run_in(
        dir.path(),
        [
            "clear",
            "--root",
            "state",
            "--agent",
            "main",
            "--session",
            "agent:main:locked",
            "--yes",
        ],
    );
    assert_eq!(r.code, 2);
    assert_eq!(
        redact(&r.stdout, &root, "[root]"),
        "\
clear (archive) for agent main in [root]/agents/main/sessions
  left alone locked.jsonl: locked (locked.jsonl.lock exists)
  0 session(s), 1 left alone
"
    );
    assert_eq!(
        r.stderr,
        "error: session \"agent:main:locked\" was left alone: locked (locked.jsonl.lock exists)\n"
    );
    assert_eq!(store_listing(&root), expected);

    // A key of another agent is refused.
    let r = run_in(
        dir.path(),
        [
            "clear",
            "--root",
            "state",
            "--agent",
            "main",
            "--session",
            "agent:ops:old-ops",
            "--yes",
        ],
    );
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: session key agent:ops:old-ops belongs to agent ops, not main\n"
    );
    assert_eq!(store_listing(&root), expected);
}

#[test]
fn clear_all_purge_deletes_the_sessions_and_leaves_the_rest() {
    let dir = tempdir();
    let root = dir.path().join("state");
    retention_store(&root);
    let r = run_in(
        dir.path(),
        [
            "clear",
            "--root",
            "state",
            "--agent",
            "main",
            "--all",
            "--purge",
            "--yes",
            "--allow-mass",
            "--json",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    let sessions = canonical(&root.join("agents/main/sessions"));
    let deleted = |file: &str, key: &str, id: &str| {
        json!({
            "file": file,
            "destination": null,
            "sessionKey": key,
            "sessionId": id,
            "sizeBytes": 248,
            "outcome": "purged",
        })
    };
    let mut v: Value = serde_json::from_str(&r.stdout).unwrap();
    // The key of a `=`-encoded name is whatever the layout decodes; checked separately.
    let bob_key = v["actions"][2]["sessionKey"].take();
    assert_eq!(
        bob_key,
        serde_json::to_value(
            session_semantics::layout::key_for_file_name("main", "telegram=direct=bob.jsonl")
                .map(|k| k.to_string())
        )
        .unwrap()
    );
    v["actions"][2]["sessionKey"] = json!("[bob]");
    assert_eq!(redact_audit_times(&mut v), 3);
    let audit = |file: &str, id: &str| {
        json!({
            "time": "[time]",
            "action": "delete",
            "file": file,
            "destination": null,
            "sessionId": id,
            "reason": "clear",
            "bytes": 248,
        })
    };
    assert_eq!(
        v,
        json!({
            "agentId": "main",
            "sessionsDir": sessions,
            "mode": "purge",
            "dryRun": false,
            "liveSessions": 4,
            "massSweep": {"sessions": 3, "liveSessions": 4},
            "actions": [
                deleted("new.jsonl", "agent:main:new", "sess-new"),
                deleted("old.jsonl", "agent:main:old", "sess-old"),
                deleted("telegram=direct=bob.jsonl", "[bob]", "sess-bob"),
            ],
            "skipped": [
                {
                    "file": "link.jsonl",
                    "reason": "link-outside-store",
                    "link": format!("{sessions}/link.jsonl"),
                    "target": canonical(&root.join("elsewhere/linked.jsonl")),
                },
                {"file": "locked.jsonl", "reason": "locked", "lockFile": "locked.jsonl.lock"},
                {"file": "notes.jsonl", "reason": "not-a-session"},
            ],
            "audit": {
                "log": format!("{sessions}/sessions-audit.log"),
                "records": [
                    audit("new.jsonl", "sess-new"),
                    audit("old.jsonl", "sess-old"),
                    audit("telegram=direct=bob.jsonl", "sess-bob"),
                ],
                "error": null,
            },
            "refused": false,
        })
    );
    assert_eq!(
        store_listing(&root),
        [
            "agents/",
            "agents/main/",
            "agents/main/sessions/",
            "agents/main/sessions/link.jsonl",
            "agents/main/sessions/locked.jsonl",
            "agents/main/sessions/locked.jsonl.lock",
            "agents/main/sessions/notes.jsonl",
            "agents/main/sessions/sessions-audit.log",
            "agents/ops/",
            "agents/ops/sessions/",
            "agents/ops/sessions/old-ops.jsonl",
        ]
    );
    assert_eq!(
        std::fs::read(root.join("elsewhere/linked.jsonl")).unwrap(),
        session_bytes("sess-linked", NOW - 300 * DAY)
    );
    // Nothing left to clear: exit 0.
    let r = run_in(
        dir.path(),
        [
            "clear", "--root", "state", "--agent", "main", "--all", "--purge", "--yes",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
}
