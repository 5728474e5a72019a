//! `sessions list` on an OpenClaw store (openclaw-store.md §5, §6): one row per `sessions.json`
//! key, whose key, sessionId, updatedAt, ageMs, kind, totalTokens and model equal those of the
//! reference's `openclaw sessions --json` on its fixture (also with `--all-agents`), in its
//! order; the inconsistency flags (missing, header-only, shared, orphan); sidecars, backups and
//! checkpoints never listed; `--archived`, `--active`, `--limit` (the keys and counts the real
//! `openclaw sessions --active/--limit --json` prints, run on the same copy when it is
//! installed); a corrupt store refused; agents without a store listed file by file beside the
//! keys; the table fitted to `COLUMNS` with the path cut, and printed in full with `--wide`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::{Path, PathBuf};

use insta::assert_snapshot;
use serde_json::Value;

use crate::support::*;

const NOW: &str = "2026-06-12T13:00:00Z";
/// [`NOW`] in epoch milliseconds.
const NOW_MS: i64 = 1_781_269_200_000;
const MAIN: &str = "00000026-0000-4000-8000-0c6110000000";
const GROUP: &str = "0000000a-0000-4000-8000-0c6110000000";
const ORPHAN: &str = "00000021-0000-4000-8000-0c6110000000";

/// Runs `sessions --now NOW <args>` in `cwd` with `COLUMNS` set to `columns` (or unset).
fn list(cwd: &Path, columns: Option<&str>, args: &[&str]) -> Run {
    let mut c = cmd();
    c.current_dir(cwd)
        .env_remove("COLUMNS")
        .args(["--now", NOW])
        .args(args);
    if let Some(cols) = columns {
        c.env("COLUMNS", cols);
    }
    run_command_timeout(c, 30)
}

fn list_json(cwd: &Path, args: &[&str]) -> Value {
    let r = list(cwd, None, args);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{args:?}");
    serde_json::from_str(&r.stdout).unwrap()
}

fn fixture(test: &str) -> Option<(PathBuf, tempfile::TempDir, PathBuf)> {
    let shared = shared_dir(test)?;
    let dir = tempdir();
    let sessions = session_test_support::openclaw_fixture_copy(&shared, dir.path());
    Some((shared, dir, sessions))
}

/// The compared fields of the rows that have a key (orphans have none).
fn compared(v: &Value) -> Vec<Value> {
    v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| !s["key"].is_null())
        .map(|s| {
            serde_json::json!([
                s["key"],
                s["sessionId"],
                s["updatedAt"],
                s["ageMs"],
                s["kind"],
                s["totalTokens"],
                s["model"]
            ])
        })
        .collect()
}

fn expected(shared: &Path, file: &str) -> Value {
    serde_json::from_slice(
        &std::fs::read(shared.join("fixtures/openclaw-6.11-store").join(file)).unwrap(),
    )
    .unwrap()
}

/// Per row: key (or null), flags.
fn keys_and_flags(v: &Value) -> Vec<(Value, Value)> {
    v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["key"].clone(), s["flags"].clone()))
        .collect()
}

#[test]
fn json_rows_equal_the_reference_list() {
    let Some((shared, dir, _)) = fixture("json_rows_equal_the_reference_list") else {
        return;
    };
    let ours = list_json(
        dir.path(),
        &["list", "--root", ".", "--agent", "main", "--json"],
    );
    let want = expected(&shared, "expected-sessions.json");
    assert_eq!(compared(&ours), compared(&want));
    for field in [
        "count",
        "totalCount",
        "limitApplied",
        "hasMore",
        "activeMinutes",
    ] {
        assert_eq!(ours[field], want[field], "{field}");
    }
    // Absolute, as the reference prints it.
    let abs = std::fs::canonicalize(dir.path()).unwrap();
    assert_eq!(
        ours["path"],
        abs.join("agents/main/sessions/sessions.json")
            .display()
            .to_string()
    );
    // `count` is the reference's (keys shown); the orphan row is counted apart.
    assert_eq!(
        (
            ours["count"].as_u64(),
            ours["orphanCount"].as_u64(),
            ours["sessions"].as_array().unwrap().len()
        ),
        (Some(5), Some(1), 6)
    );
    // Beyond the compared fields: every field of the reference's row that we print has its
    // value and position; the ones we leave out come from config, the ACP metadata and the
    // runtime policy, which `list` does not read.
    for (o, w) in ours["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .zip(want["sessions"].as_array().unwrap())
    {
        let (o, w) = (o.as_object().unwrap(), w.as_object().unwrap());
        let common: Vec<(&String, &Value)> = o.iter().filter(|(k, _)| w.contains_key(*k)).collect();
        let reference: Vec<(&String, &Value)> =
            w.iter().filter(|(k, _)| o.contains_key(*k)).collect();
        assert_eq!(common, reference);
        let left_out: Vec<&str> = w
            .keys()
            .filter(|k| !o.contains_key(*k))
            .map(String::as_str)
            .collect();
        let mut expected_left_out = vec!["acpRuntime", "agentRuntime"];
        if w.contains_key("runtimePolicySessionKey") {
            expected_left_out.push("runtimePolicySessionKey");
        }
        assert_eq!(left_out, expected_left_out, "{}", o["key"]);
    }

    let all = list_json(
        dir.path(),
        &["list", "--root", ".", "--all-agents", "--json"],
    );
    let want_all = expected(&shared, "expected-sessions-all-agents.json");
    assert_eq!(compared(&all), compared(&want_all));
    assert_eq!(all["allAgents"], true);
    assert_eq!(all["path"], Value::Null);
    assert_eq!(
        all["stores"],
        serde_json::json!([{"agentId": "main", "path": std::fs::canonicalize(dir.path())
            .unwrap()
            .join("agents/main/sessions/sessions.json")
            .display()
            .to_string()}])
    );

    // The missing subagent transcript and the orphan are flagged; the orphan comes last.
    assert_eq!(
        keys_and_flags(&ours),
        [
            ("agent:main:main".into(), serde_json::json!([])),
            (
                "agent:main:subagent:research-1".into(),
                serde_json::json!(["missing"])
            ),
            (
                "agent:main:cron:daily-digest:run:run-0001".into(),
                serde_json::json!([])
            ),
            (
                "agent:main:telegram:group:-1001234567890:topic:42".into(),
                serde_json::json!([])
            ),
            (
                "agent:main:telegram:group:-1001234567890".into(),
                serde_json::json!([])
            ),
            (Value::Null, serde_json::json!(["orphan"])),
        ]
    );
    let orphan = &ours["sessions"][5];
    assert_eq!(orphan["sessionId"], ORPHAN);
    assert_eq!(
        orphan["path"],
        format!("./agents/main/sessions/{ORPHAN}.jsonl")
    );
    let main = &ours["sessions"][0];
    assert_eq!(
        (
            &main["messages"],
            &main["size"],
            &main["contextTokens"],
            &main["modelProvider"]
        ),
        (
            &serde_json::json!(6),
            &serde_json::json!(2080),
            &serde_json::json!(200000),
            &serde_json::json!("openai")
        )
    );
    assert_eq!(main["path"], format!("./agents/main/sessions/{MAIN}.jsonl"));
}

#[test]
fn planted_header_only_shared_and_sidecar_files() {
    let Some((_, dir, sessions)) = fixture("planted_header_only_shared_and_sidecar_files") else {
        return;
    };
    let cron = sessions.join("0000001a-0000-4000-8000-0c6110000000.jsonl");
    let header = std::fs::read_to_string(&cron).unwrap();
    plant(
        &cron,
        format!("{}\n", header.lines().next().unwrap()).as_bytes(),
    );
    let store_path = sessions.join("sessions.json");
    let mut store: Value = serde_json::from_slice(&std::fs::read(&store_path).unwrap()).unwrap();
    store.as_object_mut().unwrap().insert(
        "agent:main:discord:channel:dup".to_owned(),
        serde_json::json!({"sessionId": GROUP, "updatedAt": 1_781_175_000_000_u64}),
    );
    plant(&store_path, &serde_json::to_vec_pretty(&store).unwrap());
    for name in [
        format!("{MAIN}.checkpoint.3f1c2b4a-5d6e-4f70-8a9b-0c1d2e3f4a5b.jsonl"),
        format!("{MAIN}.jsonl.bak.2026-06-12T10-00-00.000Z"),
        format!("{MAIN}.trajectory.jsonl"),
        format!("{MAIN}.trajectory-path.json"),
    ] {
        plant(&sessions.join(name), b"{\"type\":\"session\"}\n");
    }
    let v = list_json(
        dir.path(),
        &["list", "--root", ".", "--agent", "main", "--json"],
    );
    assert_eq!(
        keys_and_flags(&v),
        [
            ("agent:main:main".into(), serde_json::json!([])),
            (
                "agent:main:subagent:research-1".into(),
                serde_json::json!(["missing"])
            ),
            (
                "agent:main:cron:daily-digest:run:run-0001".into(),
                serde_json::json!(["header-only"])
            ),
            (
                "agent:main:telegram:group:-1001234567890:topic:42".into(),
                serde_json::json!([])
            ),
            (
                "agent:main:telegram:group:-1001234567890".into(),
                serde_json::json!(["shared"])
            ),
            (
                "agent:main:discord:channel:dup".into(),
                serde_json::json!(["shared"])
            ),
            (Value::Null, serde_json::json!(["orphan"])),
        ]
    );
    assert_eq!(
        v["sessions"][4]["sharedWith"],
        serde_json::json!(["agent:main:discord:channel:dup"])
    );
    assert_eq!(v["skipped"], serde_json::json!([]));

    // --archived: the fixture's `.reset.` archive and the planted `.bak.` backup, newest first.
    let a = list_json(
        dir.path(),
        &[
            "list",
            "--root",
            ".",
            "--agent",
            "main",
            "--archived",
            "--json",
        ],
    );
    let archives: Vec<Value> = a["archives"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| serde_json::json!([x["reason"], x["sessionId"], x["archivedAt"], x["original"]]))
        .collect();
    assert_eq!(
        archives,
        [
            serde_json::json!([
                "bak",
                null,
                "2026-06-12T10:00:00.000Z",
                format!("{MAIN}.jsonl")
            ]),
            serde_json::json!([
                "reset",
                "00000001-0000-4000-8000-0c6110000000",
                "2026-06-12T09:00:00.000Z",
                "00000001-0000-4000-8000-0c6110000000.jsonl"
            ]),
        ]
    );
}

#[test]
fn active_and_limit_select_the_expected_keys() {
    let Some((_, dir, _)) = fixture("active_and_limit_select_the_expected_keys") else {
        return;
    };
    let keys = |extra: &[&str]| -> (Vec<String>, Value, Value) {
        let mut args = vec!["list", "--root", ".", "--agent", "main", "--json"];
        args.extend_from_slice(extra);
        let v = list_json(dir.path(), &args);
        let keys = v["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s["key"].as_str().map(str::to_owned))
            .collect();
        (keys, v["totalCount"].clone(), v["hasMore"].clone())
    };
    // The newest key, the main DM, was updated 3 h 54 min before --now.
    assert_eq!(keys(&["--active", "60"]), (vec![], 0.into(), false.into()));
    assert_eq!(
        keys(&["--active", "240"]),
        (vec!["agent:main:main".to_owned()], 1.into(), false.into())
    );
    assert_eq!(
        keys(&["--limit", "2"]),
        (
            vec![
                "agent:main:main".to_owned(),
                "agent:main:subagent:research-1".to_owned()
            ],
            5.into(),
            true.into()
        )
    );
    let r = list(dir.path(), None, &["list", "--root", ".", "--limit", "0"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("--limit must be a positive integer or \"all\""),
        "{}",
        r.stderr
    );
    let r = list(
        dir.path(),
        None,
        &["list", "--root", ".", "--active", "1.5"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("--active must be a positive number of minutes"),
        "{}",
        r.stderr
    );
}

#[test]
fn table_fits_columns_and_wide_prints_full_paths() {
    let Some((_, dir, _)) = fixture("table_fits_columns_and_wide_prints_full_paths") else {
        return;
    };
    let args = ["list", "--root", ".", "--agent", "main"];
    let r = list(dir.path(), Some("80"), &args);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    for line in r.stdout.lines() {
        assert!(
            line.chars().count() <= 80,
            "{line:?} is {} chars",
            line.chars().count()
        );
    }
    assert!(
        !r.stdout
            .contains(&format!("./agents/main/sessions/{MAIN}.jsonl"))
    );
    assert_snapshot!("columns_80", r.stdout);
    let r = list(dir.path(), Some("120"), &args);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert!(r.stdout.lines().all(|l| l.chars().count() <= 120));
    assert_snapshot!("columns_120", r.stdout);
    // --wide, and a pipe without COLUMNS: every cell in full.
    for (cols, extra) in [(Some("80"), Some("--wide")), (None, None)] {
        let mut a = args.to_vec();
        a.extend(extra);
        let r = list(dir.path(), cols, &a);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""));
        for id in [
            MAIN,
            GROUP,
            ORPHAN,
            "00000013-0000-4000-8000-0c6110000000-topic-42",
        ] {
            assert!(
                r.stdout
                    .contains(&format!("./agents/main/sessions/{id}.jsonl")),
                "{id} in {}",
                r.stdout
            );
        }
        assert!(
            r.stdout
                .contains("agent:main:telegram:group:-1001234567890:topic:42")
        );
        assert_snapshot!("wide", r.stdout);
    }
    let r = list(
        dir.path(),
        Some("80"),
        &["list", "--root", ".", "--archived"],
    );
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert!(
        r.stdout.lines().all(|l| l.chars().count() <= 80),
        "{}",
        r.stdout
    );
    assert_snapshot!("archived_columns_80", r.stdout);
}

#[test]
fn a_corrupt_store_is_an_error_naming_it_and_stays_as_it_is() {
    let dir = tempdir();
    let sessions = dir.path().join("agents/main/sessions");
    plant(&sessions.join("sessions.json"), b"{\"agent:main:main\": {");
    plant(
        &sessions.join(format!("{MAIN}.jsonl")),
        &session_bytes(MAIN, NOW_MS - DAY),
    );
    let r = list(dir.path(), None, &["list", "--root", ".", "--json"]);
    assert_ne!(r.code, 0);
    assert_eq!(r.stdout, "");
    assert!(
        r.stderr
            .contains("cannot list the session store ./agents/main/sessions"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("is not valid JSON"), "{}", r.stderr);
    assert_eq!(
        std::fs::read(sessions.join("sessions.json")).unwrap(),
        b"{\"agent:main:main\": {"
    );
}

#[test]
fn agents_without_a_store_are_listed_file_by_file_beside_the_keys() {
    let dir = tempdir();
    let store = dir.path().join("agents/main/sessions");
    plant(
        &store.join("sessions.json"),
        format!(
            "{{\n  \"agent:main:main\": {{\n    \"sessionId\": \"{MAIN}\",\n    \"updatedAt\": {}\n  }}\n}}",
            NOW_MS - 60_000
        )
        .as_bytes(),
    );
    plant(
        &store.join(format!("{MAIN}.jsonl")),
        &session_bytes(MAIN, NOW_MS - 60_000),
    );
    let plain = dir.path().join("agents/work/sessions");
    plant(
        &plain.join("telegram_alice.jsonl"),
        &session_bytes(GROUP, NOW_MS - DAY),
    );
    let v = list_json(dir.path(), &["list", "--root", ".", "--json"]);
    let rows: Vec<Value> = v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            serde_json::json!([
                s["agentId"],
                s["key"],
                s["kind"],
                s["id"],
                s["ageMs"],
                s["flags"],
                s["path"]
            ])
        })
        .collect();
    assert_eq!(
        rows,
        [
            serde_json::json!([
                "main",
                "agent:main:main",
                "direct",
                MAIN,
                60_000,
                [],
                format!("./agents/main/sessions/{MAIN}.jsonl")
            ]),
            serde_json::json!([
                "work",
                null,
                null,
                GROUP,
                null,
                [],
                "./agents/work/sessions/telegram_alice.jsonl"
            ]),
        ]
    );
    assert_eq!(v["allAgents"], true);
    assert_eq!(
        v["stores"],
        serde_json::json!([{"agentId": "main", "path": std::fs::canonicalize(dir.path())
            .unwrap()
            .join("agents/main/sessions/sessions.json")
            .display()
            .to_string()}])
    );
}

#[test]
fn active_and_limit_select_what_the_reference_selects() {
    let test = "active_and_limit_select_what_the_reference_selects";
    let (Some(shared), Some(openclaw)) = (
        shared_dir(test),
        session_test_support::OpenclawCli::find(test),
    ) else {
        return;
    };
    let dir = tempdir();
    session_test_support::openclaw_fixture_copy(&shared, dir.path());
    for extra in [["--active", "1440"], ["--limit", "2"]] {
        let mut theirs_args = vec!["sessions", "--json"];
        theirs_args.extend(extra);
        let theirs: Value = openclaw.run_ok(dir.path(), &theirs_args, Some(NOW), |out| {
            serde_json::from_slice(out).unwrap()
        });
        let mut our_args = vec!["list", "--root", ".", "--agent", "main", "--json"];
        our_args.extend(extra);
        let ours = list_json(dir.path(), &our_args);
        assert_eq!(compared(&ours), compared(&theirs), "{extra:?}");
        for field in [
            "count",
            "totalCount",
            "limitApplied",
            "hasMore",
            "activeMinutes",
        ] {
            assert_eq!(ours[field], theirs[field], "{extra:?} {field}");
        }
    }
}

/// The AGE cell is the reference's `formatTimeAgo` text: seconds, minutes and hours each
/// rounded, `Nh ago` under 48 hours, then `Nd ago`.
#[test]
fn age_is_the_reference_time_ago_text() {
    let Some((_, dir, _)) = fixture("age_is_the_reference_time_ago_text") else {
        return;
    };
    let ages = |now: &str| -> Vec<(String, String)> {
        let mut c = cmd();
        c.current_dir(dir.path())
            .env_remove("COLUMNS")
            .args(["--now", now, "list", "--root", ".", "--agent", "main"]);
        let r = run_command_timeout(c, 30);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""));
        let head = r.stdout.lines().next().unwrap();
        let at = head.find("AGE").unwrap();
        r.stdout
            .lines()
            .skip(1)
            .map(|l| {
                let key = l.split_whitespace().next().unwrap().to_owned();
                let age: String = l[at..].chars().take(8).collect();
                (key, age.trim_end().to_owned())
            })
            .collect()
    };
    let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(k, a)| ((*k).to_owned(), (*a).to_owned()))
            .collect()
    };
    assert_eq!(
        ages(NOW),
        pairs(&[
            ("agent:main:main", "4h ago"),
            ("agent:main:subagent:research-1", "23h ago"),
            ("agent:main:cron:daily-digest:run:run-0001", "24h ago"),
            (
                "agent:main:telegram:group:-1001234567890:topic:42",
                "25h ago"
            ),
            ("agent:main:telegram:group:-1001234567890", "26h ago"),
            ("-", "-"),
        ])
    );
    let later = ages("2026-06-14T09:00:00Z");
    assert_eq!(later[0], pairs(&[("agent:main:main", "2d ago")])[0]);
    // A clock before every updatedAt: the reference writes `unknown`.
    let earlier = ages("2026-06-10T00:00:00Z");
    assert_eq!(
        earlier.iter().map(|(_, a)| a.as_str()).collect::<Vec<_>>(),
        ["unknown", "unknown", "unknown", "unknown", "unknown", "-"]
    );
}

/// A narrow terminal: PATH is left out rather than cut to a few characters, KIND, AGE and SIZE
/// are never cut (columns are left out instead), and every line fits.
#[test]
fn narrow_tables_leave_columns_out_instead_of_cutting_cells() {
    let Some((_, dir, _)) = fixture("narrow_tables_leave_columns_out_instead_of_cutting_cells")
    else {
        return;
    };
    let at = |cols: &str, extra: &[&str]| -> String {
        let mut a = vec!["list", "--root", ".", "--agent", "main"];
        a.extend(extra);
        let r = list(dir.path(), Some(cols), &a);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""));
        let n: usize = cols.parse().unwrap();
        for l in r.stdout.lines() {
            assert!(l.chars().count() <= n, "{l:?} wider than {n}");
        }
        r.stdout
    };
    assert_snapshot!("columns_60", at("60", &[]));
    assert_snapshot!("columns_40", at("40", &[]));
    assert_snapshot!("archived_columns_60", at("60", &["--archived"]));
}

/// The AGENT cell of a key is the key's own agent (`agent:ops:…` stored in main's
/// sessions.json is `ops`, as JSON `agentId` and the reference say).
#[test]
fn the_agent_cell_is_the_key_agent() {
    let dir = tempdir();
    let store = dir.path().join("agents/main/sessions");
    plant(
        &store.join("sessions.json"),
        format!(
            "{{\n  \"agent:ops:main\": {{\n    \"sessionId\": \"{MAIN}\",\n    \"updatedAt\": {}\n  }}\n}}",
            NOW_MS - 60_000
        )
        .as_bytes(),
    );
    plant(
        &store.join(format!("{MAIN}.jsonl")),
        &session_bytes(MAIN, NOW_MS - 60_000),
    );
    let r = list(dir.path(), None, &["list", "--root", "."]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    let row = r.stdout.lines().nth(1).unwrap();
    assert_eq!(
        row.split_whitespace().take(2).collect::<Vec<_>>(),
        ["ops", "agent:ops:main"]
    );
    let v = list_json(dir.path(), &["list", "--root", ".", "--json"]);
    assert_eq!(v["sessions"][0]["agentId"], "ops");
}
