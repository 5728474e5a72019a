//! `--session KEY` and the write commands on an OpenClaw store (openclaw-store.md §3.3, §3.4,
//! §6, §7 J7.2–J7.6; §9 cases 21, 23, 32), on a copy of the reference-made fixture at
//! 2026-06-12T13:00:00Z: a session key (full, or the part after `agent:<id>:`) addresses the
//! row's transcript in every read command; `archive --session` removes the row first and
//! renames the transcript and sidecars `.deleted.<ts>` in place, after which the real
//! OpenClaw 2026.6.11 CLI lists exactly the remaining keys, finds nothing missing and ages the
//! archive out itself; `clear --session KEY` starts a new conversation on the key as `/new`
//! does; a shared transcript is left alone; a corrupt `sessions.json` is refused, byte for
//! byte untouched.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::*;

const AT: &str = "2026-06-12T13:00:00Z";
const LATE: &str = "2026-07-20T13:00:00Z";
const TS: &str = "2026-06-12T13-00-00.000Z";
const MAIN: &str = "00000026-0000-4000-8000-0c6110000000";
const GROUP: &str = "0000000a-0000-4000-8000-0c6110000000";
const TOPIC: &str = "00000013-0000-4000-8000-0c6110000000";
const CRON: &str = "0000001a-0000-4000-8000-0c6110000000";
const ORPHAN: &str = "00000021-0000-4000-8000-0c6110000000";
const RESET_1: &str = "00000001-0000-4000-8000-0c6110000000.jsonl.reset.2026-06-12T09-00-00.000Z";
const CRON_KEY: &str = "agent:main:cron:daily-digest:run:run-0001";
const TOPIC_KEY: &str = "agent:main:telegram:group:-1001234567890:topic:42";
const GROUP_KEY: &str = "agent:main:telegram:group:-1001234567890";

/// A fixture copy in a temporary state dir: (dir, sessions dir).
fn copy(test: &str) -> Option<(tempfile::TempDir, PathBuf, PathBuf)> {
    let shared = shared_dir(test)?;
    let dir = tempdir();
    let sessions = session_test_support::openclaw_fixture_copy(&shared, dir.path());
    Some((dir, sessions, shared))
}

fn sessions_run(state: &Path, args: &[&str]) -> Run {
    let mut all = vec!["--now", AT];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--root", "."]);
    run_in_timeout(state, &all)
}

fn read(p: &Path) -> Vec<u8> {
    session_store::io::read_file(p).unwrap()
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn store_keys(sessions: &Path) -> Vec<String> {
    let v = json(&String::from_utf8(read(&sessions.join("sessions.json"))).unwrap());
    v.as_object().unwrap().keys().cloned().collect()
}

/// The keys `openclaw sessions --json` lists, in its order, with their session ids.
fn reference_keys(
    openclaw: &session_test_support::OpenclawCli,
    state: &Path,
) -> Vec<(String, String)> {
    let v: Value = openclaw.run_ok(state, &["sessions", "--json"], Some(AT), |o| {
        serde_json::from_slice(o).unwrap()
    });
    v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["key"].as_str().unwrap().to_owned(),
                s["sessionId"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn a_session_key_addresses_its_transcript_in_the_read_commands() {
    let Some((dir, sessions, _)) =
        copy("a_session_key_addresses_its_transcript_in_the_read_commands")
    else {
        return;
    };
    let state = dir.path();
    let by_file = |cmd: &str, file: &str, extra: &[&str]| {
        let path = sessions.join(file);
        let mut args = vec!["--now", AT, cmd, path.to_str().unwrap()];
        args.extend_from_slice(extra);
        run_in_timeout(state, &args)
    };
    // tree: the full key, the short form and the file give the same output.
    let file_tree = by_file("tree", &format!("{MAIN}.jsonl"), &[]);
    assert_eq!(file_tree.code, 0, "{}", file_tree.stderr);
    for key in ["agent:main:main", "main", "AGENT:main:MAIN"] {
        let r = sessions_run(state, &["tree", "--agent", "main", "--session", key]);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{key}");
        assert_eq!(
            r.stdout,
            file_tree
                .stdout
                .replace(sessions.to_str().unwrap(), "./agents/main/sessions"),
            "{key}"
        );
        assert!(
            r.stdout.starts_with(&format!(
                "./agents/main/sessions/{MAIN}.jsonl — 6 entries, 1 root, 1 branch point"
            )),
            "{}",
            r.stdout
        );
    }
    // context and export of the topic row (its sessionFile names a `-topic-42` transcript).
    for (cmd, extra) in [
        ("context", vec!["--json"]),
        ("export", vec!["--format", "jsonl"]),
    ] {
        let want = by_file(cmd, &format!("{TOPIC}-topic-42.jsonl"), &extra);
        assert_eq!(want.code, 0, "{}", want.stderr);
        for key in [TOPIC_KEY, "telegram:group:-1001234567890:topic:42"] {
            let mut args = vec![cmd, "--agent", "main", "--session", key];
            args.extend_from_slice(&extra);
            let r = sessions_run(state, &args);
            assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{cmd} {key}");
            // (jsonl's new header carries the run's `--now`, so both runs print the same.)
            assert_eq!(r.stdout, want.stdout, "{cmd} {key}");
            if cmd == "export" {
                let header = format!(
                    "{{\"type\":\"session\",\"version\":3,\"id\":\"{TOPIC}\",\"timestamp\":\"2026-06-12T13:00:00.000Z\","
                );
                assert!(r.stdout.starts_with(&header), "{}", r.stdout);
            }
            assert!(r.stdout.contains("topic 42"), "{cmd} {key}: {}", r.stdout);
        }
    }
    // show: one entry of the cron row's transcript.
    let r = sessions_run(
        state,
        &[
            "show",
            "--agent",
            "main",
            "--session",
            "cron:daily-digest:run:run-0001",
            "@2",
        ],
    );
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert_eq!(json(&r.stdout)["id"], Value::String("0000001c".to_owned()));
    // A name that is not a key still resolves as before (file name, session id).
    let r = sessions_run(state, &["tree", "--agent", "main", "--session", ORPHAN]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Unknown keys list what exists; a row whose transcript is missing says so.
    let r = sessions_run(state, &["tree", "--agent", "main", "--session", "zzz:yyy"]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        format!(
            "error: unknown session key \"zzz:yyy\" in ./agents/main/sessions/sessions.json; \
             keys: agent:main:main, {GROUP_KEY}, {TOPIC_KEY}, {CRON_KEY}, \
             agent:main:subagent:research-1\n"
        )
    );
    let r = sessions_run(
        state,
        &[
            "context",
            "--agent",
            "main",
            "--session",
            "subagent:research-1",
        ],
    );
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: session key \"agent:main:subagent:research-1\" (in \
         ./agents/main/sessions/sessions.json) names the transcript \
         ./agents/main/sessions/0000001f-0000-4000-8000-0c6110000000.jsonl, which does not \
         exist\n"
    );
}

#[test]
fn archiving_keys_keeps_the_store_consistent_for_the_reference() {
    let test = "archiving_keys_keeps_the_store_consistent_for_the_reference";
    let Some((dir, sessions, _)) = copy(test) else {
        return;
    };
    let state = dir.path();
    plant(
        &sessions.join(format!("{CRON}.trajectory.jsonl")),
        b"{\"t\":1}\n",
    );
    plant(
        &sessions.join(format!("{CRON}.trajectory-path.json")),
        b"{\"traceSchema\":\"openclaw-trajectory-pointer\"}\n",
    );
    let before = contents(&sessions);
    let cron_bytes = read(&sessions.join(format!("{CRON}.jsonl")));

    // The dry run names every file and writes nothing.
    let r = sessions_run(
        state,
        &[
            "archive",
            "--agent",
            "main",
            "--session",
            "cron:daily-digest:run:run-0001",
            "--dry-run",
        ],
    );
    assert_eq!((r.code, r.stderr.as_str()), (1, ""));
    assert_eq!(
        r.stdout,
        format!(
            "OpenClaw store ./agents/main/sessions/sessions.json, dry run (now 2026-06-12T13:00:00.000Z)\n\
             \x20 row {CRON_KEY}: would be removed (sessionId {CRON})\n\
             \x20 would rename {CRON}.jsonl -> {CRON}.jsonl.deleted.{TS}  (813 B)\n\
             \x20 would rename {CRON}.trajectory.jsonl -> {CRON}.trajectory.jsonl.deleted.{TS}  (8 B)\n\
             \x20 would rename {CRON}.trajectory-path.json -> {CRON}.trajectory-path.json.deleted.{TS}  (46 B)\n\
             \x20 sessions.json: would be rewritten\n"
        )
    );
    assert_eq!(contents(&sessions), before);

    let r = sessions_run(
        state,
        &[
            "archive",
            "--agent",
            "main",
            "--session",
            CRON_KEY,
            "--json",
        ],
    );
    assert_eq!((r.code, r.stderr.as_str()), (1, ""));
    let v = json(&r.stdout);
    assert_eq!(v["dryRun"], false);
    assert_eq!(v["storeWritten"], true);
    assert_eq!(
        v["rows"],
        serde_json::json!([{"key": CRON_KEY, "sessionId": CRON, "action": "removed"}])
    );
    let files: Vec<(String, String, String, String)> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let name = |k: &str| {
                Path::new(f[k].as_str().unwrap())
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            };
            (
                name("file"),
                name("to"),
                f["role"].as_str().unwrap().to_owned(),
                f["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let done =
        |from: String, to: String, role: &str| (from, to, role.to_owned(), "done".to_owned());
    assert_eq!(
        files,
        vec![
            done(
                format!("{CRON}.jsonl"),
                format!("{CRON}.jsonl.deleted.{TS}"),
                "transcript"
            ),
            done(
                format!("{CRON}.trajectory.jsonl"),
                format!("{CRON}.trajectory.jsonl.deleted.{TS}"),
                "trajectory"
            ),
            done(
                format!("{CRON}.trajectory-path.json"),
                format!("{CRON}.trajectory-path.json.deleted.{TS}"),
                "trajectory-pointer"
            ),
        ]
    );
    assert_eq!(
        read(&sessions.join(format!("{CRON}.jsonl.deleted.{TS}"))),
        cron_bytes
    );
    // The row whose transcript is missing: removed, nothing renamed.
    let r = sessions_run(
        state,
        &[
            "archive",
            "--agent",
            "main",
            "--session",
            "subagent:research-1",
            "--json",
        ],
    );
    assert_eq!((r.code, r.stderr.as_str()), (1, ""));
    let v = json(&r.stdout);
    assert_eq!(v["files"], serde_json::json!([]));
    assert_eq!(v["leftAlone"][0]["reason"], "missing");
    assert_eq!(
        store_keys(&sessions),
        vec!["agent:main:main", GROUP_KEY, TOPIC_KEY]
    );
    assert_eq!(
        dir_names(&sessions),
        vec![
            RESET_1.to_owned(),
            format!("{GROUP}.jsonl"),
            format!("{TOPIC}-topic-42.jsonl"),
            format!("{CRON}.jsonl.deleted.{TS}"),
            format!("{CRON}.trajectory-path.json.deleted.{TS}"),
            format!("{CRON}.trajectory.jsonl.deleted.{TS}"),
            format!("{ORPHAN}.jsonl"),
            format!("{MAIN}.jsonl"),
            "sessions-audit.log".to_owned(),
            "sessions.json".to_owned(),
        ]
    );

    let Some(openclaw) = session_test_support::OpenclawCli::find(test) else {
        return;
    };
    assert_eq!(
        reference_keys(&openclaw, state),
        vec![
            ("agent:main:main".to_owned(), MAIN.to_owned()),
            (TOPIC_KEY.to_owned(), TOPIC.to_owned()),
            (GROUP_KEY.to_owned(), GROUP.to_owned()),
        ]
    );
    let cleanup: Value = openclaw.run_ok(
        state,
        &[
            "sessions",
            "cleanup",
            "--dry-run",
            "--fix-missing",
            "--json",
        ],
        Some(AT),
        |o| serde_json::from_slice(o).unwrap(),
    );
    assert_eq!(
        (
            &cleanup["beforeCount"],
            &cleanup["afterCount"],
            &cleanup["missing"],
            &cleanup["pruned"]
        ),
        (
            &Value::from(3),
            &Value::from(3),
            &Value::from(0),
            &Value::from(0)
        )
    );
    // The reference's own retention sees the renamed files as `.deleted.` archives: its
    // enforced cleanup 38 days later removes them by the time in their names.
    let store = sessions.join("sessions.json");
    openclaw.run_ok(
        state,
        &[
            "sessions",
            "cleanup",
            "--enforce",
            "--store",
            store.to_str().unwrap(),
            "--json",
        ],
        Some(LATE),
        |_| (),
    );
    // (Its stale prune also retired the main row, and it removed the orphan and the old
    // `.reset.` archive, as in its own late run of the fixture.)
    assert_eq!(
        dir_names(&sessions),
        vec![
            format!("{GROUP}.jsonl"),
            format!("{TOPIC}-topic-42.jsonl"),
            format!("{MAIN}.jsonl.deleted.2026-07-20T13-00-00.000Z"),
            "sessions-audit.log".to_owned(),
            "sessions.json".to_owned(),
        ]
    );
}

#[test]
fn clear_of_a_key_starts_a_new_conversation_the_reference_lists() {
    let test = "clear_of_a_key_starts_a_new_conversation_the_reference_lists";
    let Some((dir, sessions, _)) = copy(test) else {
        return;
    };
    let state = dir.path();
    let before = contents(&sessions);
    let topic_bytes = read(&sessions.join(format!("{TOPIC}-topic-42.jsonl")));
    let r = sessions_run(
        state,
        &[
            "clear",
            "--agent",
            "main",
            "--session",
            TOPIC_KEY,
            "--dry-run",
            "--json",
        ],
    );
    assert_eq!((r.code, r.stderr.as_str()), (1, ""));
    assert_eq!(json(&r.stdout)["rows"][0]["action"], "reset");
    assert_eq!(contents(&sessions), before);

    let r = sessions_run(
        state,
        &[
            "clear",
            "--agent",
            "main",
            "--session",
            "telegram:group:-1001234567890:topic:42",
            "--yes",
            "--json",
        ],
    );
    assert_eq!((r.code, r.stderr.as_str()), (1, ""));
    let v = json(&r.stdout);
    let new_id = v["rows"][0]["newSessionId"].as_str().unwrap().to_owned();
    // A v4 UUID, as the gateway's `crypto.randomUUID()`.
    let b = new_id.as_bytes();
    assert_eq!(b.len(), 36, "{new_id}");
    assert_eq!(
        (b[8], b[13], b[14], b[18], b[23]),
        (b'-', b'-', b'4', b'-', b'-'),
        "{new_id}"
    );
    assert!(matches!(b[19], b'8' | b'9' | b'a' | b'b'), "{new_id}");
    assert_eq!(v["rows"][0]["sessionId"], TOPIC);
    assert_eq!(v["files"].as_array().unwrap().len(), 1);
    assert_eq!(
        read(&sessions.join(format!("{TOPIC}-topic-42.jsonl.reset.{TS}"))),
        topic_bytes
    );
    assert!(!sessions.join(format!("{TOPIC}-topic-42.jsonl")).exists());
    assert!(!sessions.join(format!("{new_id}-topic-42.jsonl")).exists());
    let store = json(&String::from_utf8(read(&sessions.join("sessions.json"))).unwrap());
    let row = &store[TOPIC_KEY];
    assert_eq!(row["sessionId"], new_id.as_str());
    assert_eq!(
        row["sessionFile"],
        format!("{new_id}-topic-42.jsonl").as_str()
    );
    assert_eq!(row["updatedAt"], 1_781_269_200_000_i64);
    assert_eq!(row["sessionStartedAt"], 1_781_269_200_000_i64);
    assert_eq!(row["lastInteractionAt"], 1_781_269_200_000_i64);
    assert_eq!(row["totalTokens"], 0);
    assert_eq!(row["totalTokensFresh"], true);
    assert_eq!(row["compactionCount"], 0);
    assert_eq!(row["usageFamilyKey"], TOPIC_KEY);
    assert_eq!(
        row["usageFamilySessionIds"],
        serde_json::json!([TOPIC, new_id])
    );
    assert_eq!(row.get("model"), None);
    assert_eq!(row.get("inputTokens"), None);
    // The other rows are byte for byte as they were.
    assert_eq!(store_keys(&sessions).len(), 5);

    let Some(openclaw) = session_test_support::OpenclawCli::find(test) else {
        return;
    };
    let listed = reference_keys(&openclaw, state);
    assert_eq!(listed[0], (TOPIC_KEY.to_owned(), new_id.clone()));
    assert_eq!(listed.len(), 5);
}

#[test]
fn a_shared_transcript_is_left_alone_and_clear_all_needs_allow_mass() {
    let Some((dir, sessions, _)) =
        copy("a_shared_transcript_is_left_alone_and_clear_all_needs_allow_mass")
    else {
        return;
    };
    let state = dir.path();
    // A second row naming the group's transcript (same sessionId).
    let text = String::from_utf8(read(&sessions.join("sessions.json"))).unwrap();
    let shared = text.replacen(
        "\n}",
        &format!(",\n  \"agent:main:telegram:group:other\": {{\n    \"sessionId\": \"{GROUP}\",\n    \"updatedAt\": 1781175840000\n  }}\n}}"),
        1,
    );
    session_store::io::atomic_rewrite(&sessions.join("sessions.json"), shared.as_bytes()).unwrap();
    let r = sessions_run(
        state,
        &["archive", "--agent", "main", "--session", GROUP_KEY],
    );
    assert_eq!((r.code, r.stderr.as_str()), (1, ""));
    assert!(
        r.stdout.contains(&format!(
            "  left alone {GROUP}.jsonl: other rows still name it: agent:main:telegram:group:other\n"
        )),
        "{}",
        r.stdout
    );
    assert!(sessions.join(format!("{GROUP}.jsonl")).is_file());
    assert!(!store_keys(&sessions).contains(&GROUP_KEY.to_owned()));

    // clear --all removes every row: a mass sweep, refused without --allow-mass.
    let before = contents(&sessions);
    let r = sessions_run(state, &["clear", "--agent", "main", "--all", "--yes"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .starts_with("error: refusing a mass clear: agent main: "),
        "{}",
        r.stderr
    );
    assert_eq!(contents(&sessions), before);
    let r = sessions_run(
        state,
        &[
            "clear",
            "--agent",
            "main",
            "--all",
            "--yes",
            "--allow-mass",
            "--json",
        ],
    );
    assert_eq!((r.code, r.stderr.as_str()), (1, ""));
    assert_eq!(read(&sessions.join("sessions.json")), b"{}");
    assert_eq!(
        dir_names(&sessions),
        vec![
            RESET_1.to_owned(),
            format!("{GROUP}.jsonl.deleted.{TS}"),
            format!("{TOPIC}-topic-42.jsonl.deleted.{TS}"),
            format!("{CRON}.jsonl.deleted.{TS}"),
            format!("{ORPHAN}.jsonl.deleted.{TS}"),
            format!("{MAIN}.jsonl.deleted.{TS}"),
            "sessions-audit.log".to_owned(),
            "sessions.json".to_owned(),
        ]
    );
}

#[test]
fn a_corrupt_store_is_refused_and_left_as_it_is() {
    let Some((dir, sessions, _)) = copy("a_corrupt_store_is_refused_and_left_as_it_is") else {
        return;
    };
    let state = dir.path();
    let corrupt = b"{\n  \"agent:main:main\": {\n    \"sessionId\": \"x\",\n";
    session_store::io::atomic_rewrite(&sessions.join("sessions.json"), corrupt).unwrap();
    let before = contents(&sessions);
    for args in [
        vec![
            "clear",
            "--agent",
            "main",
            "--session",
            "agent:main:main",
            "--yes",
        ],
        vec!["archive", "--agent", "main", "--session", "agent:main:main"],
        vec!["clear", "--agent", "main", "--all", "--yes", "--allow-mass"],
    ] {
        let r = sessions_run(state, &args);
        assert_eq!(r.code, 2, "{args:?}");
        assert!(
            r.stderr.contains("sessions.json is not valid JSON"),
            "{args:?}: {}",
            r.stderr
        );
        assert_eq!(contents(&sessions), before, "{args:?}");
    }
}

#[test]
fn a_short_key_matching_rows_of_several_agents_is_ambiguous() {
    let dir = tempdir();
    let store = dir.path().join("store");
    plant(
        &store.join("sessions.json"),
        b"{\n  \"agent:main:telegram:direct:1\": {\n    \"sessionId\": \"a\",\n    \"updatedAt\": 1\n  },\n  \"agent:ops:telegram:direct:1\": {\n    \"sessionId\": \"b\",\n    \"updatedAt\": 2\n  }\n}",
    );
    plant(&store.join("a.jsonl"), &session_bytes("a", NOW - DAY));
    plant(&store.join("b.jsonl"), &session_bytes("b", NOW - DAY));
    let r = run_in_timeout(
        dir.path(),
        ["tree", "--dir", "store", "--session", "telegram:direct:1"],
    );
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: session key \"telegram:direct:1\" is ambiguous in store/sessions.json: it names \
         the rows agent:main:telegram:direct:1, agent:ops:telegram:direct:1; give the full key\n"
    );
    let r = run_in_timeout(
        dir.path(),
        [
            "tree",
            "--dir",
            "store",
            "--session",
            "agent:ops:telegram:direct:1",
        ],
    );
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert!(r.stdout.starts_with("store/b.jsonl — "), "{}", r.stdout);
}

#[test]
fn an_exact_key_wins_over_its_case_variants_and_variants_alone_are_ambiguous() {
    let dir = tempdir();
    let store = dir.path().join("store");
    plant(
        &store.join("sessions.json"),
        b"{\n  \"agent:main:telegram:direct:abc\": {\n    \"sessionId\": \"a\",\n    \"updatedAt\": 2\n  },\n  \"Agent:Main:Telegram:Direct:ABC\": {\n    \"sessionId\": \"b\",\n    \"updatedAt\": 1\n  }\n}",
    );
    plant(&store.join("a.jsonl"), &session_bytes("a", NOW - DAY));
    plant(&store.join("b.jsonl"), &session_bytes("b", NOW - DAY));
    for (spelling, file) in [
        ("Agent:Main:Telegram:Direct:ABC", "store/b.jsonl"),
        ("agent:main:telegram:direct:abc", "store/a.jsonl"),
    ] {
        let r = run_in_timeout(
            dir.path(),
            ["tree", "--dir", "store", "--session", spelling],
        );
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{spelling}");
        assert!(
            r.stdout.starts_with(&format!("{file} — ")),
            "{spelling}: {}",
            r.stdout
        );
    }
    let r = run_in_timeout(
        dir.path(),
        [
            "tree",
            "--dir",
            "store",
            "--session",
            "AGENT:main:telegram:direct:Abc",
        ],
    );
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: session key \"AGENT:main:telegram:direct:Abc\" is ambiguous in \
         store/sessions.json: it names the rows agent:main:telegram:direct:abc, \
         Agent:Main:Telegram:Direct:ABC; give the full key\n"
    );
}

/// A lock file naming a process that has exited.
fn dead_lock() -> Vec<u8> {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    format!("{{\n  \"pid\": {pid},\n  \"createdAt\": \"2026-06-12T12:00:00.000Z\"\n}}\n")
        .into_bytes()
}

#[test]
fn archive_reports_dropped_rows_stale_locks_and_leaves_foreign_transcripts() {
    let Some((dir, sessions, _)) =
        copy("archive_reports_dropped_rows_stale_locks_and_leaves_foreign_transcripts")
    else {
        return;
    };
    let state = dir.path();
    let foreign_dir = state.join("other/agents/main/sessions");
    let foreign = foreign_dir.join("x.jsonl");
    plant(&foreign, b"{\"type\":\"session\"}\n");
    let text = String::from_utf8(read(&sessions.join("sessions.json"))).unwrap();
    let text = text
        .replacen("{\n", "{\n  \"agent:main:junk\": 5,\n", 1)
        .replacen(
            &format!("\"sessionFile\": \"{MAIN}.jsonl\""),
            &format!("\"sessionFile\": \"{}\"", foreign.display()),
            1,
        );
    session_store::io::atomic_rewrite(&sessions.join("sessions.json"), text.as_bytes()).unwrap();
    plant(&sessions.join(format!("{CRON}.jsonl.lock")), &dead_lock());

    let r = sessions_run(
        state,
        &[
            "archive",
            "--agent",
            "main",
            "--session",
            CRON_KEY,
            "--dry-run",
            "--json",
        ],
    );
    assert_eq!((r.code, r.stderr.as_str()), (1, ""));
    assert_eq!(
        json(&r.stdout)["loadChanges"],
        serde_json::json!([{"change": "dropped-entry", "key": "agent:main:junk"}])
    );

    let r = sessions_run(
        state,
        &["archive", "--agent", "main", "--session", CRON_KEY],
    );
    assert_eq!((r.code, r.stderr.as_str()), (1, ""));
    assert!(
        r.stdout.contains(&format!(
            "  removed stale lock {CRON}.jsonl.lock (its holder is gone)\n  sessions.json: \
             dropped row agent:main:junk (not an object, or no safe sessionId; OpenClaw drops it \
             at load too)\n"
        )),
        "{}",
        r.stdout
    );
    assert!(!sessions.join(format!("{CRON}.jsonl.lock")).exists());
    assert!(!store_keys(&sessions).contains(&"agent:main:junk".to_owned()));

    let r = sessions_run(
        state,
        &[
            "archive",
            "--agent",
            "main",
            "--session",
            "agent:main:main",
            "--json",
        ],
    );
    assert_eq!((r.code, r.stderr.as_str()), (1, ""));
    let v = json(&r.stdout);
    assert_eq!(
        v["leftAlone"],
        serde_json::json!([{
            "key": "agent:main:main",
            "file": foreign.to_string_lossy(),
            "reason": "outside-store"
        }])
    );
    assert_eq!(v["files"], serde_json::json!([]));
    assert_eq!(v["loadChanges"], serde_json::json!([]));
    assert_eq!(v["staleLocksRemoved"], serde_json::json!([]));
    assert!(!store_keys(&sessions).contains(&"agent:main:main".to_owned()));
    assert_eq!(read(&foreign), b"{\"type\":\"session\"}\n");
    assert_eq!(dir_names(&foreign_dir), vec!["x.jsonl".to_owned()]);
}

#[test]
fn archive_by_age_lists_a_locked_transcript_left_out_in_text() {
    let Some((dir, sessions, _)) =
        copy("archive_by_age_lists_a_locked_transcript_left_out_in_text")
    else {
        return;
    };
    let state = dir.path();
    let mut holder = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = holder.id();
    let lock = format!(
        "{{\n  \"pid\": {pid},\n  \"createdAt\": \"{}\",\n  \"starttime\": {}\n}}\n",
        session_format::time::to_iso_string(session_format::ids::now_ms()).unwrap(),
        session_test_support::starttime(pid)
    );
    plant(
        &sessions.join(format!("{CRON}.jsonl.lock")),
        lock.as_bytes(),
    );
    let r = sessions_run(
        state,
        &["archive", "--agent", "main", "--max-age", "1h", "--dry-run"],
    );
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert_eq!(r.stderr, "");
    assert!(
        r.stdout.contains(&format!(
            "\n  left alone {CRON}.jsonl: locked ({CRON}.jsonl.lock exists)\n"
        )),
        "{}",
        r.stdout
    );
}
