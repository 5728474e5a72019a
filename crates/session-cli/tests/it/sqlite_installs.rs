//! OpenClaw 2026.8+ installs: the per-agent SQLite store (`agents/<id>/agent/
//! openclaw-agent.sqlite`) is found under the state directory (or named with `--backend
//! sqlite:PATH`) and read, never written. Each test works on a copy of the fixture made by the
//! real OpenClaw 2026.9.6 (`shared/fixtures/openclaw-9.6-sqlite/`) and skips without it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::{Path, PathBuf};

use serde_json::Value;
use session_store::sqlite::SqliteStorage;
use sha2::{Digest, Sha256};

use crate::support::{Run, plant, run_in, shared_dir, tempdir};

use session_test_support::OPENCLAW96_SESSIONS as SESSIONS;

const REFUSAL: &str = "is an OpenClaw 2026.8+ SQLite store, read-only here";

fn fixture(test: &str) -> Option<PathBuf> {
    Some(shared_dir(test)?.join("fixtures/openclaw-9.6-sqlite"))
}

/// `<state>/agents/<agent>/agent/openclaw-agent.sqlite`, a copy of the fixture's database
/// (for another agent than `main`, its `schema_meta` row names that agent, as OpenClaw's
/// would; the keys stay `agent:main:…`).
fn plant_db(fixture: &Path, state: &Path, agent: &str) -> PathBuf {
    let db = state
        .join("agents")
        .join(agent)
        .join("agent/openclaw-agent.sqlite");
    plant(
        &db,
        &std::fs::read(fixture.join("db/openclaw-agent.sqlite")).unwrap(),
    );
    if agent != "main" {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute(
            "UPDATE schema_meta SET agent_id = ?1 WHERE meta_key = 'primary'",
            [agent],
        )
        .unwrap();
    }
    db
}

/// The JSONL-era store of the same sessions: `agents/main/sessions/<sessionId>.jsonl` holding
/// the rows OpenClaw stored (`expected/<name>.lines.jsonl`) and a `sessions.json` equal to
/// `store_index_json()`'s text.
fn plant_files(fixture: &Path, db: &Path, state: &Path) {
    let dir = state.join("agents/main/sessions");
    for (name, _, id) in SESSIONS {
        let bytes = std::fs::read(fixture.join(format!("expected/{name}.lines.jsonl"))).unwrap();
        plant(&dir.join(format!("{id}.jsonl")), &bytes);
    }
    let index = SqliteStorage::open(db).unwrap().store_index_json().unwrap();
    plant(&dir.join("sessions.json"), &index);
}

fn sha256(path: &Path) -> String {
    Sha256::digest(std::fs::read(path).unwrap())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The files beside the database other than itself (`-wal`, `-shm`, `-journal`).
fn beside(db: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(db.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "openclaw-agent.sqlite")
        .collect();
    v.sort();
    v
}

fn run(cwd: &Path, args: &[&str]) -> Run {
    run_in(cwd, args)
}

/// The stdout and stderr of a run, normalised in two ways only: each occurrence of the state
/// directory `state` is replaced by `<STATE>` (the lines that name a session's path: the
/// SQLite session's virtual path and the file's path differ by their state directory alone),
/// and the wall-clock timings of `stats` (`open time …` and `"openMs"`/`"treeMs"`), which
/// differ between two runs on the same file, are replaced by `<TIMING>`.
fn normalised(run: &Run, state: &Path) -> (String, String) {
    let state = state.display().to_string();
    let timing = |line: &str| {
        let t = line.trim_start();
        if t.starts_with("open time ") {
            "  open time <TIMING>".to_owned()
        } else if t.starts_with("\"openMs\":") || t.starts_with("\"treeMs\":") {
            let (name, _) = t.split_once(':').unwrap();
            format!("{name}: <TIMING>")
        } else {
            line.to_owned()
        }
    };
    let stdout: Vec<String> = run.stdout.split('\n').map(timing).collect();
    (
        stdout.join("\n").replace(&state, "<STATE>"),
        run.stderr.replace(&state, "<STATE>"),
    )
}

#[test]
fn every_read_command_prints_the_same_for_a_sqlite_session_as_for_its_file() {
    let Some(fx) =
        fixture("every_read_command_prints_the_same_for_a_sqlite_session_as_for_its_file")
    else {
        return;
    };
    let tmp = tempdir();
    let sq = tmp.path().join("sq");
    let files = tmp.path().join("files");
    let db = plant_db(&fx, &sq, "main");
    plant_files(&fx, &db, &files);
    let before = sha256(&db);
    let db_arg = format!("sqlite:{}", db.display());
    let mut compared = 0;
    for (name, key, id) in SESSIONS {
        let meta: Value = serde_json::from_slice(
            &std::fs::read(fx.join(format!("expected/{name}.meta.json"))).unwrap(),
        )
        .unwrap();
        let leaf = meta["leafEventId"].as_str().unwrap().to_owned();
        let commands: Vec<Vec<String>> = vec![
            vec!["tree".into()],
            vec!["tree".into(), "--json".into()],
            vec!["tree".into(), "--depth".into(), "2".into()],
            vec!["context".into()],
            vec!["context".into(), "--json".into()],
            vec!["show".into(), leaf.clone()],
            vec!["show".into(), "--raw".into(), leaf.clone()],
            vec!["show".into(), "@2".into()],
            vec!["show".into(), "--raw".into(), "@1".into()],
            vec!["stats".into()],
            vec!["stats".into(), "--json".into()],
            vec!["check".into()],
            vec!["check".into(), "--json".into()],
            vec!["export".into()],
            vec!["export".into(), "--format".into(), "json".into()],
            vec!["export".into(), "--format".into(), "jsonl".into()],
            vec!["export".into(), "--format".into(), "markdown".into()],
            vec!["export".into(), "--format".into(), "html".into()],
        ];
        for command in &commands {
            for session in [key, id] {
                let tail = [
                    "--agent",
                    "main",
                    "--session",
                    session,
                    "--now",
                    "2026-07-02T00:00:00Z",
                ];
                let mut file_args: Vec<&str> = command.iter().map(String::as_str).collect();
                let show_entry = (command[0] == "show").then(|| file_args.pop().unwrap());
                let mut sq_args = file_args.clone();
                let mut backend_args = vec!["--backend", db_arg.as_str()];
                backend_args.extend(file_args.iter().copied());
                let files_root = files.display().to_string();
                let sq_root = sq.display().to_string();
                file_args.extend(["--root", files_root.as_str()]);
                sq_args.extend(["--root", sq_root.as_str()]);
                for args in [&mut file_args, &mut sq_args, &mut backend_args] {
                    args.extend(tail);
                    args.extend(show_entry);
                }
                let want = run(tmp.path(), &file_args);
                assert!(
                    want.code == 0 || (command[0] == "check" && want.code == 1),
                    "{file_args:?}: {want:?}"
                );
                for (args, state) in [(&sq_args, &sq), (&backend_args, &sq)] {
                    let got = run(tmp.path(), args);
                    assert_eq!(got.code, want.code, "{args:?}: {}", got.stderr);
                    assert_eq!(
                        normalised(&got, state),
                        normalised(&want, &files),
                        "{args:?} prints what {file_args:?} prints"
                    );
                    compared += 1;
                }
            }
        }
    }
    assert_eq!(compared, 6 * 18 * 2 * 2);
    assert_eq!(sha256(&db), before);
    assert_eq!(beside(&db), Vec::<String>::new());
}

#[test]
fn list_on_a_sqlite_store_gives_one_row_per_key_as_its_jsonl_store() {
    let Some(fx) = fixture("list_on_a_sqlite_store_gives_one_row_per_key_as_its_jsonl_store")
    else {
        return;
    };
    let tmp = tempdir();
    let sq = tmp.path().join("sq");
    let files = tmp.path().join("files");
    let db = plant_db(&fx, &sq, "main");
    plant_files(&fx, &db, &files);
    let now = ["--now", "2026-07-02T00:00:00Z"];
    let list = |root: &Path, extra: &[&str]| {
        let mut args = vec!["list", "--json", "--root"];
        let root = root.display().to_string();
        args.push(&root);
        args.extend(now);
        args.extend(extra);
        let r = run(tmp.path(), &args);
        assert_eq!(r.code, 0, "{r:?}");
        assert_eq!(r.stderr, "");
        serde_json::from_str::<Value>(&r.stdout).unwrap()
    };
    let got = list(&sq, &[]);
    let rows = got["sessions"].as_array().unwrap();
    let facts: Vec<(String, String, Value, u64, u64, bool)> = rows
        .iter()
        .map(|r| {
            (
                r["key"].as_str().unwrap().to_owned(),
                r["sessionId"].as_str().unwrap().to_owned(),
                r["label"].clone(),
                r["messages"].as_u64().unwrap(),
                r["size"].as_u64().unwrap(),
                r["archived"].as_bool().unwrap(),
            )
        })
        .collect();
    let size = |name: &str| {
        std::fs::metadata(fx.join(format!("expected/{name}.lines.jsonl")))
            .unwrap()
            .len()
    };
    // Newest updatedAt first (the fixture's sessions are one minute apart, in this order).
    let want: Vec<(String, String, Value, u64, u64, bool)> =
        [(5, 4), (4, 2), (3, 4), (2, 7), (1, 6), (0, 6)]
            .iter()
            .map(|&(i, messages)| {
                let (name, key, id) = SESSIONS[i];
                let label = if i == 0 {
                    Value::from("Alice DM")
                } else {
                    Value::Null
                };
                (
                    key.to_owned(),
                    id.to_owned(),
                    label,
                    messages,
                    size(name),
                    false,
                )
            })
            .collect();
    assert_eq!(facts, want);
    assert_eq!(got["count"], 6);
    assert_eq!(got["totalCount"], 6);
    assert_eq!(
        got["stores"][0]["path"],
        Value::from(db.display().to_string())
    );
    // The same listing as the JSONL-era store's, apart from the paths and the default model
    // of rows that name none: each store shows the default of the release that owns it
    // (2026.6.11 `gpt-5.5`, 2026.9.6 `gpt-6-astra`).
    let mut files_json = list(&files, &[]);
    let mut sq_json = got.clone();
    for r in sq_json["sessions"].as_array().unwrap() {
        assert_eq!(r["model"], "gpt-6-astra");
    }
    for v in [&mut files_json, &mut sq_json] {
        v["stores"][0]["path"] = Value::Null;
        for r in v["sessions"].as_array_mut().unwrap() {
            r["path"] = Value::Null;
            assert!(r["model"] == "gpt-5.5" || r["model"] == "gpt-6-astra");
            r["model"] = Value::Null;
        }
    }
    assert_eq!(sq_json, files_json);
    // The table: one row per key, the label in its column.
    let r = run(
        tmp.path(),
        &[
            "list",
            "--wide",
            "--root",
            &sq.display().to_string(),
            "--now",
            "2026-07-02T00:00:00Z",
        ],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 7, "{}", r.stdout);
    assert!(lines[0].starts_with("AGENT  KEY  "), "{}", lines[0]);
    assert!(lines[0].contains(" LABEL "), "{}", lines[0]);
    assert!(
        lines[6].starts_with("main   agent:main:dm:alice   Alice DM  direct"),
        "{}",
        lines[6]
    );
    // --archived: nothing archived and nothing reclaimed in the fixture.
    let archived = list(&sq, &["--archived"]);
    assert_eq!(archived["count"], 0);
    assert_eq!(archived["archives"], Value::Array(Vec::new()));
}

#[test]
fn reading_a_sqlite_store_never_changes_the_database() {
    let Some(fx) = fixture("reading_a_sqlite_store_never_changes_the_database") else {
        return;
    };
    let tmp = tempdir();
    let state = tmp.path().join("state");
    let db = plant_db(&fx, &state, "main");
    let before = sha256(&db);
    let root = state.display().to_string();
    let db_arg = format!("sqlite:{}", db.display());
    let runs: Vec<Vec<&str>> = vec![
        vec!["list", "--root", &root],
        vec!["list", "--root", &root, "--json", "--archived"],
        vec!["list", "--backend", &db_arg],
        vec![
            "tree",
            "--root",
            &root,
            "--agent",
            "main",
            "--session",
            "main",
        ],
        vec![
            "context",
            "--root",
            &root,
            "--agent",
            "main",
            "--session",
            "large",
        ],
        vec![
            "show",
            "--raw",
            "--root",
            &root,
            "--agent",
            "main",
            "--session",
            "broken",
            "@1",
        ],
        vec!["stats", "--root", &root, "--agent", "main"],
        vec!["check", "--root", &root, "--agent", "main"],
        vec!["check", "--backend", &db_arg, "--agent", "main", "--json"],
        vec![
            "export",
            "--root",
            &root,
            "--agent",
            "main",
            "--session",
            "unicode",
            "--format",
            "html",
        ],
        vec![
            "tree",
            "--root",
            &root,
            "--agent",
            "main",
            "--session",
            "nosuch",
        ],
    ];
    for args in &runs {
        let r = run(tmp.path(), args);
        assert!(r.code == 0 || args.contains(&"nosuch"), "{args:?}: {r:?}");
        assert_eq!(sha256(&db), before, "{args:?} left the database as it was");
        assert_eq!(beside(&db), Vec::<String>::new(), "{args:?}");
    }
    // Nothing else appeared in the state directory either (no sessions/ directory).
    assert_eq!(
        crate::support::listing(&state),
        vec![
            "agents/".to_owned(),
            "agents/main/".to_owned(),
            "agents/main/agent/".to_owned(),
            "agents/main/agent/openclaw-agent.sqlite".to_owned()
        ]
    );
}

#[test]
fn every_write_command_refuses_a_sqlite_store_before_doing_anything() {
    let Some(fx) = fixture("every_write_command_refuses_a_sqlite_store_before_doing_anything")
    else {
        return;
    };
    let tmp = tempdir();
    let state = tmp.path().join("state");
    let db = plant_db(&fx, &state, "main");
    let before = sha256(&db);
    let root = state.display().to_string();
    let db_arg = format!("sqlite:{}", db.display());
    let sessions = state.join("agents/main/sessions");
    let virtual_file = sessions
        .join("22222222-2222-4222-8222-222222222222.jsonl")
        .display()
        .to_string();
    let export_out = sessions.join("out.html").display().to_string();
    let runs: Vec<Vec<&str>> = vec![
        vec![
            "archive",
            "--root",
            &root,
            "--agent",
            "main",
            "--max-age",
            "1d",
        ],
        vec!["archive", "--root", &root, "--all", "--dry-run"],
        vec![
            "clear", "--root", &root, "--agent", "main", "--all", "--yes",
        ],
        vec![
            "clear",
            "--root",
            &root,
            "--agent",
            "main",
            "--session",
            "main",
            "--dry-run",
        ],
        vec!["cleanup", "--root", &root, "--agent", "main", "--enforce"],
        vec!["cleanup", "--root", &root, "--all-agents", "--dry-run"],
        vec![
            "repair",
            "--root",
            &root,
            "--agent",
            "main",
            "--session",
            "main",
        ],
        vec!["repair", &virtual_file],
        vec!["unlock", "--stale", "--root", &root, "--agent", "main"],
        vec!["demo", "--root", &root],
        vec!["archive", "--backend", &db_arg, "--all"],
        vec![
            "repair",
            "--backend",
            &db_arg,
            "--agent",
            "main",
            "--session",
            "main",
        ],
        vec![
            "export",
            "--root",
            &root,
            "--agent",
            "main",
            "--session",
            "main",
            "--format",
            "html",
            "-o",
            &export_out,
        ],
        vec![
            "export",
            "--backend",
            &db_arg,
            "--agent",
            "main",
            "--session",
            "main",
            "-o",
            &export_out,
        ],
        vec!["migrate", "--from", &root, "--to", &db_arg],
    ];
    for args in &runs {
        let r = run(tmp.path(), args);
        assert_eq!(r.code, 2, "{args:?}: {r:?}");
        assert_eq!(r.stdout, "", "{args:?}");
        assert!(
            r.stderr.starts_with("error: ") && r.stderr.contains(REFUSAL),
            "{args:?}: {}",
            r.stderr
        );
        assert_eq!(sha256(&db), before, "{args:?}");
        assert_eq!(beside(&db), Vec::<String>::new(), "{args:?}");
        assert!(!sessions.exists(), "{args:?} made {}", sessions.display());
    }
    let r = run(
        tmp.path(),
        &[
            "archive",
            "--root",
            &root,
            "--agent",
            "main",
            "--max-age",
            "1d",
        ],
    );
    assert_eq!(
        r.stderr,
        format!(
            "error: {} is an OpenClaw 2026.8+ SQLite store, read-only here; `sessions archive` \
             writes nothing to it (OpenClaw owns the database; list, tree, context, show, stats, \
             usage, check and export to stdout read it)\n",
            db.display()
        )
    );
}

#[test]
fn a_legacy_store_beside_the_database_is_named_in_one_warning_and_not_read() {
    let Some(fx) =
        fixture("a_legacy_store_beside_the_database_is_named_in_one_warning_and_not_read")
    else {
        return;
    };
    let tmp = tempdir();
    let state = tmp.path().join("state");
    let db = plant_db(&fx, &state, "main");
    let legacy = state.join("agents/main/sessions/sessions.json");
    plant(
        &legacy,
        br#"{"agent:main:old":{"sessionId":"77777777-7777-4777-8777-777777777777","updatedAt":1}}"#,
    );
    let root = state.display().to_string();
    let r = run(tmp.path(), &["list", "--json", "--root", &root]);
    assert_eq!(r.code, 0, "{r:?}");
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let keys: Vec<&str> = v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys.len(), 6);
    assert!(!keys.contains(&"agent:main:old"));
    assert_eq!(
        r.stderr,
        format!(
            "warning: agent \"main\" has both a legacy store {} and the OpenClaw 2026.8+ database \
             {}; reading the database (OpenClaw 2026.8+ does not start while a legacy store is \
             not imported); `sessions verify-import` compares the two\n",
            legacy.display(),
            db.display()
        )
    );
    // --backend files reads the legacy files instead, without the warning.
    let r = run(
        tmp.path(),
        &["list", "--json", "--backend", "files", "--root", &root],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.stderr, "");
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["sessions"][0]["key"], "agent:main:old");
    assert_eq!(v["count"], 1);
}

#[test]
fn every_agent_with_a_database_is_listed() {
    let Some(fx) = fixture("every_agent_with_a_database_is_listed") else {
        return;
    };
    let tmp = tempdir();
    let state = tmp.path().join("state");
    let main = plant_db(&fx, &state, "main");
    let work = plant_db(&fx, &state, "work");
    let root = state.display().to_string();
    let r = run(tmp.path(), &["list", "--json", "--root", &root]);
    assert_eq!(r.code, 0, "{r:?}");
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["count"], 12);
    assert_eq!(v["allAgents"], true);
    let stores: Vec<(&str, &str)> = v["stores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["agentId"].as_str().unwrap(), s["path"].as_str().unwrap()))
        .collect();
    let (m, w) = (main.display().to_string(), work.display().to_string());
    assert_eq!(stores, vec![("main", m.as_str()), ("work", w.as_str())]);
    let paths: Vec<&str> = v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    let work_sessions = state.join("agents/work/sessions").display().to_string();
    assert_eq!(
        paths
            .iter()
            .filter(|p| p.starts_with(&work_sessions))
            .count(),
        6
    );
    // --agent picks one of them; its sessions are at its virtual sessions directory.
    let r = run(
        tmp.path(),
        &[
            "tree",
            "--root",
            &root,
            "--agent",
            "work",
            "--session",
            "agent:main:main",
        ],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout.starts_with(&format!(
            "{work_sessions}/22222222-2222-4222-8222-222222222222.jsonl — 7 entries"
        )),
        "{}",
        r.stdout
    );
}

#[test]
fn an_unknown_key_on_a_sqlite_store_names_the_database_and_the_keys() {
    let Some(fx) = fixture("an_unknown_key_on_a_sqlite_store_names_the_database_and_the_keys")
    else {
        return;
    };
    let tmp = tempdir();
    let state = tmp.path().join("state");
    let db = plant_db(&fx, &state, "main");
    let r = run(
        tmp.path(),
        &[
            "tree",
            "--root",
            &state.display().to_string(),
            "--agent",
            "main",
            "--session",
            "agent:main:dm:alicee",
        ],
    );
    assert_eq!(r.code, 2, "{r:?}");
    assert_eq!(
        r.stderr,
        format!(
            "error: unknown session key \"agent:main:dm:alicee\" in the SQLite store {}; did you \
             mean: agent:main:dm:alice, agent:main:main, agent:main:unicode, agent:main:large, \
             agent:main:legacy-v1?\n",
            db.display()
        )
    );
}

#[test]
fn check_on_a_sqlite_session_reports_the_database_findings() {
    let Some(fx) = fixture("check_on_a_sqlite_session_reports_the_database_findings") else {
        return;
    };
    let tmp = tempdir();
    let state = tmp.path().join("state");
    let db = plant_db(&fx, &state, "main");
    // OpenClaw's validator rejected the entry of agent:main:main (entry_valid = -1, §2.2).
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute(
            "UPDATE session_nodes SET entry_valid = -1 WHERE session_key = 'agent:main:main'",
            [],
        )
        .unwrap();
    }
    assert_eq!(beside(&db), Vec::<String>::new());
    let before = sha256(&db);
    let root = state.display().to_string();
    let r = run(
        tmp.path(),
        &[
            "check",
            "--root",
            &root,
            "--agent",
            "main",
            "--session",
            "main",
        ],
    );
    let path = state.join("agents/main/sessions/22222222-2222-4222-8222-222222222222.jsonl");
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(
        r.stdout,
        format!(
            "{p}: sqlite-invalid-entry: key agent:main:main: entry_json was marked invalid \
             (entry_valid = -1)\nchecked 1 file: 0 ok, 1 with problems (1 problem)\n",
            p = path.display()
        )
    );
    let r = run(
        tmp.path(),
        &[
            "check",
            "--root",
            &root,
            "--agent",
            "main",
            "--session",
            "main",
            "--json",
        ],
    );
    assert_eq!(r.code, 1, "{r:?}");
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let problems = &v[0]["problems"];
    assert_eq!(problems[0]["kind"], "sqlite-invalid-entry", "{}", r.stdout);
    assert_eq!(problems[0]["severity"], "error");
    assert_eq!(problems.as_array().unwrap().len(), 1);
    // The other sessions are consistent.
    let r = run(
        tmp.path(),
        &[
            "check",
            "--root",
            &root,
            "--agent",
            "main",
            "--session",
            "large",
        ],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(sha256(&db), before);
    assert_eq!(beside(&db), Vec::<String>::new());
}

#[test]
fn reading_a_wal_mode_database_leaves_no_wal_or_shm_behind() {
    let Some(fx) = fixture("reading_a_wal_mode_database_leaves_no_wal_or_shm_behind") else {
        return;
    };
    let tmp = tempdir();
    let state = tmp.path().join("state");
    let db = plant_db(&fx, &state, "main");
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        let mode: String = conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
    }
    assert_eq!(beside(&db), Vec::<String>::new());
    let before = sha256(&db);
    let root = state.display().to_string();
    for args in [
        vec!["list", "--root", &root],
        vec![
            "tree",
            "--root",
            &root,
            "--agent",
            "main",
            "--session",
            "main",
        ],
        vec!["check", "--root", &root, "--agent", "main"],
    ] {
        let r = run(tmp.path(), &args);
        assert_eq!(r.code, 0, "{args:?}: {r:?}");
        assert_eq!(sha256(&db), before, "{args:?}");
        assert_eq!(beside(&db), Vec::<String>::new(), "{args:?}");
    }
}

#[test]
fn a_path_list_printed_is_read_from_the_database_and_a_leftover_file_is_named() {
    let Some(fx) =
        fixture("a_path_list_printed_is_read_from_the_database_and_a_leftover_file_is_named")
    else {
        return;
    };
    let tmp = tempdir();
    let state = tmp.path().join("state");
    let db = plant_db(&fx, &state, "main");
    let before = sha256(&db);
    let path = state.join("agents/main/sessions/22222222-2222-4222-8222-222222222222.jsonl");
    let shown = path.display().to_string();
    let r = run(tmp.path(), &["tree", &shown]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.stderr, "");
    assert!(
        r.stdout.starts_with(&format!(
            "{shown} — 7 entries, 1 root, 0 branch points, leaf a3\n"
        )),
        "{}",
        r.stdout
    );
    // Relative, as typed in the state's parent.
    let r = run(
        tmp.path(),
        &[
            "tree",
            "state/agents/main/sessions/22222222-2222-4222-8222-222222222222.jsonl",
        ],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout.starts_with(&format!("{shown} — 7 entries")),
        "{}",
        r.stdout
    );
    // A virtual path the database does not hold names the database.
    let missing = state.join("agents/main/sessions/nosuch.jsonl");
    let r = run(tmp.path(), &["tree", &missing.display().to_string()]);
    assert_eq!(r.code, 2, "{r:?}");
    assert_eq!(
        r.stderr,
        format!(
            "error: no session {} in the SQLite store {}\n",
            missing.display(),
            db.display()
        )
    );
    assert_eq!(sha256(&db), before);
    // A real file there is read as given, with one warning.
    plant(
        &path,
        &std::fs::read(fx.join("expected/dm-branch-label.lines.jsonl")).unwrap(),
    );
    let r = run(tmp.path(), &["tree", &shown]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        r.stderr,
        format!(
            "warning: {shown} is a leftover legacy transcript: the sessions of its agent live in \
             the OpenClaw 2026.8+ database {}; reading the file as given (`sessions \
             verify-import` compares the two)\n",
            db.display()
        )
    );
    let from_file = run(tmp.path(), &["tree", "--backend", "files", &shown]);
    assert_eq!(from_file.code, 0, "{from_file:?}");
    assert_eq!(r.stdout, from_file.stdout);
    assert!(
        !r.stdout
            .contains("— 7 entries, 1 root, 0 branch points, leaf a3")
    );
}

#[test]
fn a_state_directory_as_the_sqlite_backend_is_a_usage_error_naming_its_databases() {
    let Some(fx) =
        fixture("a_state_directory_as_the_sqlite_backend_is_a_usage_error_naming_its_databases")
    else {
        return;
    };
    let tmp = tempdir();
    let state = tmp.path().join("state");
    plant_db(&fx, &state, "main");
    plant_db(&fx, &state, "work");
    let r = run(tmp.path(), &["--backend", "sqlite:state", "list"]);
    assert_eq!((r.code, r.stdout.as_str()), (2, ""), "{r:?}");
    assert_eq!(
        r.stderr,
        "error: --backend sqlite: needs the database file, not a directory: state is a directory \
         (e.g. --backend sqlite:state/agents/main/agent/openclaw-agent.sqlite); databases found \
         under it: state/agents/main/agent/openclaw-agent.sqlite, \
         state/agents/work/agent/openclaw-agent.sqlite; --root state reads a state directory's \
         databases\n"
    );
    std::fs::create_dir_all(tmp.path().join("empty")).unwrap();
    let r = run(tmp.path(), &["--backend", "sqlite:empty", "list"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert_eq!(
        r.stderr,
        "error: --backend sqlite: needs the database file, not a directory: empty is a directory \
         (e.g. --backend sqlite:empty/agents/main/agent/openclaw-agent.sqlite); it holds no \
         agents/<id>/agent/openclaw-agent.sqlite; --root empty reads a state directory's \
         databases\n"
    );
}

#[test]
fn a_database_outside_the_layout_addresses_its_own_agent() {
    let Some(fx) = fixture("a_database_outside_the_layout_addresses_its_own_agent") else {
        return;
    };
    let tmp = tempdir();
    let db = tmp.path().join("copy/x.sqlite");
    plant(
        &db,
        &std::fs::read(fx.join("db/openclaw-agent.sqlite")).unwrap(),
    );
    let backend = format!("sqlite:{}", db.display());
    let want = format!(
        "{}/22222222-2222-4222-8222-222222222222.jsonl — 7 entries, 1 root, 0 branch points, \
         leaf a3\n",
        db.display()
    );
    for args in [
        vec![
            "--backend",
            &backend,
            "tree",
            "--session",
            "agent:main:main",
        ],
        vec!["--backend", &backend, "tree", "--session", "main"],
        vec![
            "--backend",
            &backend,
            "tree",
            "--agent",
            "main",
            "--session",
            "main",
        ],
    ] {
        let r = run(tmp.path(), &args);
        assert_eq!(r.code, 0, "{args:?}: {r:?}");
        assert!(r.stdout.starts_with(&want), "{args:?}: {}", r.stdout);
    }
    let r = run(
        tmp.path(),
        &[
            "--backend",
            &backend,
            "tree",
            "--agent",
            "work",
            "--session",
            "main",
        ],
    );
    assert_eq!(r.code, 2, "{r:?}");
    assert_eq!(
        r.stderr,
        format!(
            "error: unknown agent \"work\": the SQLite store {} holds the sessions of agent \
             \"main\" (its schema_meta); use --agent main or leave --agent out\n",
            db.display()
        )
    );
}

#[test]
fn an_unknown_session_name_on_a_sqlite_store_lists_close_keys() {
    let Some(fx) = fixture("an_unknown_session_name_on_a_sqlite_store_lists_close_keys") else {
        return;
    };
    let tmp = tempdir();
    let state = tmp.path().join("state");
    let db = plant_db(&fx, &state, "main");
    let root = state.display().to_string();
    let unknown = |name: &str| {
        let r = run(
            tmp.path(),
            &[
                "tree",
                "--root",
                &root,
                "--agent",
                "main",
                "--session",
                name,
            ],
        );
        assert_eq!((r.code, r.stdout.as_str()), (2, ""), "{r:?}");
        r.stderr
    };
    let store = db.display();
    assert_eq!(
        unknown("alicee"),
        format!(
            "error: unknown session \"alicee\" in the SQLite store {store}; did you mean: \
             agent:main:dm:alice?\n"
        )
    );
    assert_eq!(
        unknown("lage"),
        format!(
            "error: unknown session \"lage\" in the SQLite store {store}; did you mean: \
             agent:main:large, agent:main:legacy-v1?\n"
        )
    );
    assert_eq!(
        unknown("nosuch"),
        format!(
            "error: unknown session \"nosuch\" in the SQLite store {store}; keys: \
             agent:main:dm:alice, agent:main:main, agent:main:large, agent:main:unicode, \
             agent:main:broken, agent:main:legacy-v1\n"
        )
    );
}

#[test]
fn listing_files_on_a_sqlite_only_install_names_the_databases() {
    let Some(fx) = fixture("listing_files_on_a_sqlite_only_install_names_the_databases") else {
        return;
    };
    let tmp = tempdir();
    let state = tmp.path().join("state");
    plant_db(&fx, &state, "main");
    let r = run(
        tmp.path(),
        &["--backend", "files", "list", "--root", "state"],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.stdout, "no sessions found\n");
    assert_eq!(
        r.stderr,
        "warning: no session files, but state holds OpenClaw 2026.8+ SQLite database \
         state/agents/main/agent/openclaw-agent.sqlite; without --backend files they are read\n"
    );
}

/// In a state directory where some agents have a database and another only a JSONL-era store,
/// the run reads the databases and names the other agent's store in one warning (it is not
/// read, so it must not vanish unnoticed); its files are untouched.
#[test]
fn an_agent_without_a_database_beside_others_is_named_in_a_warning() {
    let Some(fx) = fixture("an_agent_without_a_database_beside_others_is_named_in_a_warning")
    else {
        return;
    };
    let tmp = tempdir();
    let state = tmp.path().join("state");
    plant_db(&fx, &state, "main");
    let ops = state.join("agents/ops/sessions");
    std::fs::create_dir_all(&ops).unwrap();
    session_store::io::write_raw(&ops.join("sessions.json"), b"{}").unwrap();
    session_store::io::write_raw(&ops.join("a.jsonl"), b"").unwrap();
    // An agent directory without any session file is not worth a warning.
    std::fs::create_dir_all(state.join("agents/idle/sessions")).unwrap();
    let root = state.display().to_string();
    let r = run(tmp.path(), &["list", "--json", "--root", &root]);
    assert_eq!(r.code, 0, "{r:?}");
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["count"], 6);
    assert_eq!(
        r.stderr,
        format!(
            "warning: agent \"ops\" has no OpenClaw 2026.8+ database, only the JSONL-era store \
             {}: it is not read while the other agents' databases are (read it with `sessions \
             --backend files … --agent ops`; `openclaw doctor --fix` imports it)\n",
            ops.display()
        )
    );
    assert_eq!(std::fs::read(ops.join("sessions.json")).unwrap(), b"{}");
}

/// An archived key (`session_nodes.archived_at` set) is listed by default, as OpenClaw
/// 2026.9.6's `openclaw sessions --json --limit all` lists it, in the same newest-first order,
/// with `archived: true` and the FLAGS `archived`; `--archived` lists it alone.
#[test]
fn sqlite_archived_keys_are_listed_and_flagged() {
    let Some(fx) = fixture("sqlite_archived_keys_are_listed_and_flagged") else {
        return;
    };
    let tmp = tempdir();
    let state = tmp.path().join("state");
    let db = plant_db(&fx, &state, "main");
    let (_, archived_key, archived_id) = SESSIONS[2];
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        let n = conn
            .execute(
                "UPDATE session_nodes SET archived_at = 1782950400000 WHERE session_key = ?1",
                [archived_key],
            )
            .unwrap();
        assert_eq!(n, 1);
    }
    let root = state.display().to_string();
    let now = "2026-07-02T00:00:00Z";
    let r = run(
        tmp.path(),
        &["list", "--json", "--root", &root, "--now", now],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.stderr, "");
    let got: Value = serde_json::from_str(&r.stdout).unwrap();
    let rows: Vec<(String, bool, Value)> = got["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["key"].as_str().unwrap().to_owned(),
                r["archived"].as_bool().unwrap(),
                r["flags"].clone(),
            )
        })
        .collect();
    let want: Vec<(String, bool, Value)> = [5, 4, 3, 2, 1, 0]
        .iter()
        .map(|&i| {
            let key = SESSIONS[i].1;
            let archived = i == 2;
            let flags = if archived {
                serde_json::json!(["archived"])
            } else {
                serde_json::json!([])
            };
            (key.to_owned(), archived, flags)
        })
        .collect();
    assert_eq!(rows, want);
    assert_eq!(got["count"], 6);
    assert_eq!(got["totalCount"], 6);

    // The table's FLAGS cell.
    let r = run(
        tmp.path(),
        &["list", "--wide", "--root", &root, "--now", now],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let flagged: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.split_whitespace().any(|w| w == "archived"))
        .collect();
    assert_eq!(flagged.len(), 1, "{}", r.stdout);
    assert!(flagged[0].contains(archived_key), "{}", flagged[0]);

    // --archived: the archived key only.
    let r = run(
        tmp.path(),
        &[
            "list",
            "--json",
            "--archived",
            "--root",
            &root,
            "--now",
            now,
        ],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let got: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(got["count"], 1);
    let archives = got["archives"].as_array().unwrap();
    assert_eq!(archives.len(), 1);
    assert_eq!(archives[0]["reason"], "archived");
    assert_eq!(archives[0]["key"], archived_key);
    assert_eq!(archives[0]["sessionId"], archived_id);
    assert_eq!(archives[0]["archivedAtMs"], 1_782_950_400_000_i64);
}

/// `check` of a SQLite session with no `transcript_events` row: the `empty` problem says the
/// database holds no row of it, with no advice about a writable open (there is no file).
#[test]
fn sqlite_check_of_a_session_without_rows_says_no_rows() {
    let Some(fx) = fixture("sqlite_check_of_a_session_without_rows_says_no_rows") else {
        return;
    };
    let tmp = tempdir();
    let state = tmp.path().join("state");
    let db = plant_db(&fx, &state, "main");
    let (_, key, id) = SESSIONS[1];
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.pragma_update(None, "foreign_keys", false).unwrap();
        let n = conn
            .execute("DELETE FROM transcript_events WHERE session_id = ?1", [id])
            .unwrap();
        assert!(n > 0);
    }
    let root = state.display().to_string();
    let r = run(
        tmp.path(),
        &[
            "check",
            "--json",
            "--root",
            &root,
            "--agent",
            "main",
            "--session",
            key,
        ],
    );
    assert_eq!(r.code, 1, "{r:?}");
    assert!(!r.stdout.contains("writable open"), "{}", r.stdout);
    let got: Value = serde_json::from_str(&r.stdout).unwrap();
    let text = got.to_string();
    let empty: Vec<&Value> = got[0]["problems"]
        .as_array()
        .unwrap_or_else(|| panic!("{text}"))
        .iter()
        .filter(|p| p["kind"] == "empty")
        .collect();
    assert_eq!(empty.len(), 1, "{text}");
    assert_eq!(
        empty[0]["message"],
        "no rows in the database (the import stored no line of this session)"
    );
}

/// A file named `openclaw-agent.sqlite` that is not a database fails the run (exit 2) with one
/// error naming the file once.
#[test]
fn a_file_that_is_not_a_database_is_named_once() {
    let tmp = tempdir();
    let state = tmp.path().join("state");
    let agent = state.join("agents/main/agent");
    std::fs::create_dir_all(&agent).unwrap();
    let db = agent.join("openclaw-agent.sqlite");
    session_store::io::write_raw(
        &db,
        b"not a database, just text long enough for a header....",
    )
    .unwrap();
    let root = state.display().to_string();
    let r = run(tmp.path(), &["list", "--root", &root]);
    assert_eq!(r.code, 2, "{r:?}");
    let shown = db.display().to_string();
    assert_eq!(r.stderr.matches(shown.as_str()).count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.starts_with(&format!(
            "error: cannot open the OpenClaw SQLite store: {shown}: "
        )),
        "{}",
        r.stderr
    );
}
