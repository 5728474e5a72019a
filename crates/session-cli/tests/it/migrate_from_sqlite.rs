//! `sessions migrate --from sqlite:PATH` (and `--from-root DIR`): an OpenClaw 2026.9.6 SQLite
//! store (the reference-made fixture `fixtures/openclaw-9.6-sqlite/db`, laid out as
//! `<state>/agents/main/agent/openclaw-agent.sqlite`) exported as a JSONL-era store: every
//! current transcript byte-equal to the fixture's decoded rows, `sessions.json` from
//! `session_nodes`, which the released OpenClaw 2026.6.11 and `sessions` itself read (the same
//! keys and session ids, every transcript resolved, nothing counted as an orphan); earlier
//! generations as `.reset.` archives; `--dry-run` and a repeated run write nothing; a
//! destination holding other bytes refuses the run before anything is written; the database's
//! bytes never change. To Redis: the current transcripts as sessions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use session_store::Storage as _;
use session_store::redis_store::RedisStorage;
use session_store::test_util::redis_server::LocalRedisServer;

use crate::support::{Run, cmd, contents, fingerprint, listing, plant, shared_dir, tempdir};

use session_test_support::OPENCLAW96_SESSIONS as SESSIONS;

/// The earlier generation the test writer adds to `agent:main:main`.
const EARLIER_ID: &str = "77777777-7777-4777-8777-777777777777";

/// A state dir holding a copy of the fixture database, with the fixture's folder.
struct State {
    dir: tempfile::TempDir,
    fixture: PathBuf,
}

impl State {
    fn new(test: &str) -> Option<State> {
        let fixture = shared_dir(test)?.join("fixtures/openclaw-9.6-sqlite");
        if !fixture.join("db/openclaw-agent.sqlite").is_file() {
            session_test_support::skip(
                test,
                format_args!("no SQLite fixture at {}", fixture.display()),
            );
            return None;
        }
        let dir = tempdir();
        let state = State { dir, fixture };
        plant(
            &state.db(),
            &std::fs::read(state.fixture.join("db/openclaw-agent.sqlite")).unwrap(),
        );
        Some(state)
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    fn db(&self) -> PathBuf {
        self.root().join("agents/main/agent/openclaw-agent.sqlite")
    }

    fn dst(&self) -> PathBuf {
        self.dir.path().join("dst")
    }

    fn expected(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.fixture.join(format!("expected/{name}.lines.jsonl"))).unwrap()
    }

    /// Adds an earlier generation to `agent:main:main`: a `session_windows` row created at
    /// 2026-06-30T06:13:20Z with two `transcript_events` rows, replaced by the current window
    /// (its `previous_session_id`, reason `reset`). Returns the rows as JSONL.
    fn add_earlier_generation(&self) -> Vec<u8> {
        let conn = rusqlite::Connection::open(self.db()).unwrap();
        let header = format!(
            r#"{{"type":"session","version":3,"id":"{EARLIER_ID}","timestamp":"2026-06-30T06:13:20.000Z","cwd":"/tmp/w"}}"#
        );
        let user = r#"{"type":"message","id":"e1","parentId":null,"timestamp":"2026-06-30T06:13:21.000Z","message":{"role":"user","content":[{"type":"text","text":"before the reset"}],"timestamp":1782800001000}}"#;
        conn.execute(
            "INSERT INTO session_windows (session_id, session_key, reason, created_at, \
             updated_at, transcript_updated_at) VALUES (?1, 'agent:main:main', 'initial', \
             1782800000000, 1782800001000, 1782800001000)",
            [EARLIER_ID],
        )
        .unwrap();
        for (seq, (text, at)) in [
            (&header[..], 1_782_800_000_000_i64),
            (user, 1_782_800_001_000),
        ]
        .into_iter()
        .enumerate()
        {
            conn.execute(
                "INSERT INTO transcript_events (session_id, seq, event_json, created_at) \
                 VALUES (?1, ?2, ?3, ?4)",
                rusqlite::params![EARLIER_ID, seq as i64, text, at],
            )
            .unwrap();
        }
        conn.execute(
            "UPDATE session_windows SET previous_session_id = ?1, reason = 'reset' \
             WHERE session_id = '22222222-2222-4222-8222-222222222222'",
            [EARLIER_ID],
        )
        .unwrap();
        drop(conn);
        format!("{header}\n{user}\n").into_bytes()
    }
}

fn sessions<S: AsRef<std::ffi::OsStr>>(cwd: &Path, args: &[S]) -> Run {
    let out = cmd().current_dir(cwd).args(args).output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

fn migrate_json(state: &State, extra: &[&str]) -> (Run, Value) {
    let from = format!("sqlite:{}", state.root().display());
    let dst = state.dst();
    let mut args = vec![
        "migrate",
        "--from",
        from.as_str(),
        "--to",
        dst.to_str().unwrap(),
        "--json",
    ];
    args.extend_from_slice(extra);
    let run = sessions(state.dir.path(), &args);
    let v: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", run.stdout, run.stderr));
    (run, v)
}

fn transcript_rel(id: &str) -> String {
    format!("agents/main/sessions/{id}.jsonl")
}

/// `(key, sessionId)` of every row of a `sessions --json`-shaped listing, sorted.
fn keys_and_ids(listing: &Value) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = listing["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["key"].as_str().unwrap().to_owned(),
                s["sessionId"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    v.sort();
    v
}

fn expected_keys_and_ids() -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = SESSIONS
        .iter()
        .map(|(_, k, id)| ((*k).to_owned(), (*id).to_owned()))
        .collect();
    v.sort();
    v
}

/// Every `entry_json` of the database, parsed, in row order.
fn entries_of(db: &Path) -> Vec<(String, Value)> {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let mut stmt = conn
        .prepare("SELECT session_key, entry_json FROM session_nodes ORDER BY rowid")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .unwrap()
        .map(|r| {
            let (k, e) = r.unwrap();
            (k, serde_json::from_str(&e).unwrap())
        })
        .collect()
}

/// Runs OpenClaw 2026.6.11's `sessions cleanup --dry-run --fix-missing --json` on `state`
/// one day after the fixture's sessions, after every file of its sessions directory was made
/// 60 days old and an unreferenced transcript planted: every row must resolve its transcript
/// (`missing` 0) and the planted file must be the only unreferenced one (so no exported file
/// is an orphan to the reference).
fn assert_reference_finds_every_transcript_and_no_orphan(
    openclaw: &session_test_support::OpenclawCli,
    state: &Path,
) {
    let dir = state.join("agents/main/sessions");
    let sentinel = dir.join("99999999-9999-4999-8999-999999999999.jsonl");
    let sentinel_bytes =
        b"{\"type\":\"session\",\"version\":3,\"id\":\"99999999-9999-4999-8999-999999999999\"}\n";
    plant(&sentinel, sentinel_bytes);
    let old = SystemTime::UNIX_EPOCH + Duration::from_millis(1_777_700_000_000);
    for name in session_test_support::dir_names(&dir) {
        std::fs::File::options()
            .write(true)
            .open(dir.join(&name))
            .unwrap()
            .set_modified(old)
            .unwrap();
    }
    let report: Value = openclaw.run_ok(
        state,
        &[
            "sessions",
            "cleanup",
            "--dry-run",
            "--fix-missing",
            "--json",
        ],
        Some("2026-07-02T00:00:00.000Z"),
        |out| serde_json::from_slice(out).unwrap(),
    );
    assert_eq!(report["beforeCount"], 6, "{report}");
    assert_eq!(report["missing"], 0, "{report}");
    assert_eq!(report["pruned"], 0, "{report}");
    assert_eq!(
        report["unreferencedArtifacts"]["removedFiles"], 1,
        "only the planted orphan is unreferenced: {report}"
    );
    assert_eq!(
        report["unreferencedArtifacts"]["freedBytes"],
        sentinel_bytes.len(),
        "{report}"
    );
}

#[test]
fn a_sqlite_store_exports_as_a_jsonl_store_that_openclaw_6_11_and_sessions_read() {
    let test = "a_sqlite_store_exports_as_a_jsonl_store_that_openclaw_6_11_and_sessions_read";
    let Some(state) = State::new(test) else {
        return;
    };
    let db_before = fingerprint(&state.db());
    let state_listing = listing(&state.root());
    let (run, v) = migrate_json(&state, &[]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.stderr, "");
    assert_eq!(
        v["counts"],
        json!({"copied": 7, "wouldCopy": 0, "identical": 0, "exists": 0, "failed": 0,
               "leftAlone": 0})
    );
    assert_eq!(
        v["from"],
        json!({"backend": "sqlite", "root": state.root().to_str().unwrap(),
               "databases": [{"agent": "main", "path": state.db().to_str().unwrap()}]})
    );
    let dst = state.dst();

    // Exactly the six transcripts and sessions.json, each reported, mode 0600.
    let mut want: Vec<String> = SESSIONS
        .iter()
        .map(|(_, _, id)| transcript_rel(id))
        .collect();
    want.push("agents/main/sessions/sessions.json".to_owned());
    want.sort();
    let mut dirs = vec![
        "agents/".to_owned(),
        "agents/main/".to_owned(),
        "agents/main/sessions/".to_owned(),
    ];
    dirs.extend(want.iter().cloned());
    dirs.sort();
    assert_eq!(listing(&dst), dirs);
    let reported: Vec<(&str, &str)> = v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["path"].as_str().unwrap(), s["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(
        reported,
        want.iter()
            .map(|p| (p.as_str(), "copied"))
            .collect::<Vec<_>>()
    );
    for rel in &want {
        let mode = std::fs::metadata(dst.join(rel))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o7777, 0o600, "{rel}");
    }

    // Each transcript is the database's rows as JSONL, zstd rows decoded.
    for (name, key, id) in SESSIONS {
        let bytes = std::fs::read(dst.join(transcript_rel(id))).unwrap();
        assert_eq!(bytes, state.expected(name), "{name}");
        let item = v["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["sessionId"] == id)
            .unwrap();
        assert_eq!(item["kind"], "transcript");
        assert_eq!(item["sessionKey"], key);
        assert_eq!(item["source"], state.db().to_str().unwrap());
        assert_eq!(item["bytes"], bytes.len());
    }

    // sessions.json: every session_nodes row, in row order, its entry_json as stored (no
    // sessionFile: 6.11 resolves `<sessionId>.jsonl` beside it).
    let store: serde_json::Map<String, Value> = serde_json::from_slice(
        &std::fs::read(dst.join("agents/main/sessions/sessions.json")).unwrap(),
    )
    .unwrap();
    let keys: Vec<&str> = store.keys().map(String::as_str).collect();
    let want_keys: Vec<&str> = SESSIONS.iter().map(|(_, k, _)| *k).collect();
    assert_eq!(keys, want_keys);
    let entries = entries_of(&state.db());
    for (key, entry) in &entries {
        assert_eq!(&store[key], entry, "{key}");
        assert_eq!(entry.get("sessionFile"), None, "{key}");
    }
    assert_eq!(
        entries.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
        want_keys
    );
    for (_, key, id) in SESSIONS {
        assert_eq!(store[key]["sessionId"], id);
    }

    // The database is unchanged, and nothing appeared beside it.
    assert_eq!(fingerprint(&state.db()), db_before);
    assert_eq!(listing(&state.root()), state_listing);

    // Our own listing of the exported store: the same keys and ids.
    let ours = sessions(
        state.dir.path(),
        &["list", "--root", dst.to_str().unwrap(), "--json"],
    );
    assert_eq!(ours.code, 0, "{}", ours.stderr);
    let ours: Value = serde_json::from_str(&ours.stdout).unwrap();
    assert_eq!(keys_and_ids(&ours), expected_keys_and_ids());

    // tree and export work on the exported files.
    let tree = sessions(
        state.dir.path(),
        &[
            "tree",
            "--root",
            dst.to_str().unwrap(),
            "--agent",
            "main",
            "--session",
            "11111111-1111-4111-8111-111111111111",
            "--json",
        ],
    );
    assert_eq!(tree.code, 0, "{}", tree.stderr);
    let tree: Value = serde_json::from_str(&tree.stdout).unwrap();
    assert_eq!(tree["leafId"], "a3", "{tree}");
    let export = sessions(
        state.dir.path(),
        &[
            "export",
            "--root",
            dst.to_str().unwrap(),
            "--agent",
            "main",
            "--session",
            "22222222-2222-4222-8222-222222222222",
            "--format",
            "jsonl",
        ],
    );
    assert_eq!(export.code, 0, "{}", export.stderr);
    let expected = String::from_utf8(state.expected("compaction")).unwrap();
    // The export writes its own header (the time of the export); the entries are the rows.
    assert_eq!(
        export.stdout.lines().skip(1).collect::<Vec<_>>(),
        expected.lines().skip(1).collect::<Vec<_>>()
    );

    // OpenClaw 2026.6.11 reads the exported store: the same keys and session ids, every
    // transcript found, none an orphan.
    let Some(openclaw) = session_test_support::OpenclawCli::find(test) else {
        return;
    };
    let theirs: Value = openclaw.run_ok(&dst, &["sessions", "--json"], None, |out| {
        serde_json::from_slice(out).unwrap()
    });
    assert_eq!(theirs["count"], 6, "{theirs}");
    assert_eq!(keys_and_ids(&theirs), expected_keys_and_ids());
    assert_reference_finds_every_transcript_and_no_orphan(&openclaw, &dst);
}

#[test]
fn a_dry_run_writes_nothing_and_a_second_run_changes_nothing() {
    let test = "a_dry_run_writes_nothing_and_a_second_run_changes_nothing";
    let Some(state) = State::new(test) else {
        return;
    };
    let before = listing(state.dir.path());
    let db_before = fingerprint(&state.db());
    let (run, v) = migrate_json(&state, &["--dry-run"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(v["dryRun"], true);
    assert_eq!(v["counts"]["wouldCopy"], 7);
    assert_eq!(v["counts"]["copied"], 0);
    assert_eq!(listing(state.dir.path()), before);
    // The text plan names every file.
    let from = format!("sqlite:{}", state.root().display());
    let dst = state.dst();
    let plan = sessions(
        state.dir.path(),
        &[
            "migrate",
            "--from",
            &from,
            "--to",
            dst.to_str().unwrap(),
            "--dry-run",
        ],
    );
    assert_eq!(plan.code, 1, "{}", plan.stderr);
    let lines: Vec<&str> = plan.stdout.lines().collect();
    assert_eq!(
        lines[0],
        format!(
            "from: {} (OpenClaw SQLite: agents/main/agent/openclaw-agent.sqlite)",
            state.root().display()
        )
    );
    assert_eq!(lines[1], format!("to:   {} (files)", dst.display()));
    assert!(
        lines.contains(&"would copy  agents/main/sessions/11111111-1111-4111-8111-111111111111.jsonl (2.1 KiB, agent:main:dm:alice)"),
        "{}",
        plan.stdout
    );
    assert!(
        lines.contains(
            &"would copy  agents/main/sessions/sessions.json (1.0 KiB, 6 keys of agent main)"
        ),
        "{}",
        plan.stdout
    );
    assert!(
        lines
            .last()
            .unwrap()
            .starts_with("dry run: would copy 7 files ("),
        "{}",
        plan.stdout
    );
    assert_eq!(listing(state.dir.path()), before);

    // The real run, then a second one: everything is already there, nothing changes.
    let (run, _) = migrate_json(&state, &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let files = contents(&dst);
    let mtimes: Vec<SystemTime> = files
        .iter()
        .map(|(rel, _)| {
            std::fs::metadata(dst.join(rel))
                .unwrap()
                .modified()
                .unwrap()
        })
        .collect();
    let (again, v) = migrate_json(&state, &[]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(
        v["counts"],
        json!({"copied": 0, "wouldCopy": 0, "identical": 7, "exists": 0, "failed": 0,
               "leftAlone": 0})
    );
    assert_eq!(contents(&dst), files);
    let mtimes_again: Vec<SystemTime> = files
        .iter()
        .map(|(rel, _)| {
            std::fs::metadata(dst.join(rel))
                .unwrap()
                .modified()
                .unwrap()
        })
        .collect();
    assert_eq!(mtimes_again, mtimes);

    // A destination sessions.json with other bytes refuses the whole run: the transcript
    // removed meanwhile is not written again.
    let index = dst.join("agents/main/sessions/sessions.json");
    session_store::io::remove_file(&index).unwrap();
    plant(&index, b"{}");
    session_store::io::remove_file(&dst.join(transcript_rel(SESSIONS[0].2))).unwrap();
    let after_edit = listing(&dst);
    let (refused, v) = migrate_json(&state, &[]);
    assert_eq!(refused.code, 2, "{}", refused.stdout);
    assert_eq!(v["refused"], true);
    assert_eq!(v["counts"]["exists"], 1);
    let index_item = v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["kind"] == "storeIndex")
        .unwrap();
    assert_eq!(index_item["outcome"], "exists");
    assert_eq!(
        index_item["error"],
        "the destination holds other bytes (1,040 bytes here, 2 bytes there)"
    );
    assert_eq!(listing(&dst), after_edit);
    assert_eq!(std::fs::read(&index).unwrap(), b"{}");
    assert_eq!(fingerprint(&state.db()), db_before);
}

#[test]
fn an_earlier_generation_lands_as_a_reset_archive_openclaw_keeps() {
    let test = "an_earlier_generation_lands_as_a_reset_archive_openclaw_keeps";
    let Some(state) = State::new(test) else {
        return;
    };
    let earlier = state.add_earlier_generation();
    let db_before = fingerprint(&state.db());
    let (run, v) = migrate_json(&state, &[]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(v["counts"]["copied"], 8);
    // Named at the time the current generation replaced it (its window's created_at,
    // 2026-07-01T10:01:00Z), as the JSONL-era rollover names the old transcript.
    let archive = format!("agents/main/sessions/{EARLIER_ID}.jsonl.reset.2026-07-01T10-01-00.000Z");
    let dst = state.dst();
    assert_eq!(std::fs::read(dst.join(&archive)).unwrap(), earlier);
    let item = v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["path"] == archive.as_str())
        .unwrap();
    assert_eq!(item["kind"], "earlierGeneration");
    assert_eq!(item["sessionKey"], "agent:main:main");
    assert_eq!(item["sessionId"], EARLIER_ID);
    // The key still names its current generation.
    let store: Value = serde_json::from_slice(
        &std::fs::read(dst.join("agents/main/sessions/sessions.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        store["agent:main:main"]["sessionId"],
        "22222222-2222-4222-8222-222222222222"
    );
    assert_eq!(
        std::fs::read(dst.join(transcript_rel("22222222-2222-4222-8222-222222222222"))).unwrap(),
        state.expected("compaction")
    );
    assert_eq!(fingerprint(&state.db()), db_before);
    // Our listing counts it as an archive, not as a session.
    let ours = sessions(
        state.dir.path(),
        &["list", "--root", dst.to_str().unwrap(), "--json"],
    );
    assert_eq!(ours.code, 0, "{}", ours.stderr);
    let ours: Value = serde_json::from_str(&ours.stdout).unwrap();
    assert_eq!(keys_and_ids(&ours), expected_keys_and_ids());
    assert_eq!(ours["orphanCount"], 0, "{ours}");

    // OpenClaw 2026.6.11 does not take it for an orphan.
    let Some(openclaw) = session_test_support::OpenclawCli::find(test) else {
        return;
    };
    assert_reference_finds_every_transcript_and_no_orphan(&openclaw, &dst);
    assert!(dst.join(&archive).is_file());
}

#[test]
fn a_sqlite_store_migrates_to_redis_as_its_current_transcripts() {
    let test = "a_sqlite_store_migrates_to_redis_as_its_current_transcripts";
    let Some(state) = State::new(test) else {
        return;
    };
    let Some(server) = LocalRedisServer::start_or_skip(test) else {
        return;
    };
    state.add_earlier_generation();
    let url = server.url();
    let root = state.root();
    let m = sessions(
        state.dir.path(),
        &[
            "migrate",
            "--from-root",
            root.to_str().unwrap(),
            "--to",
            &url,
            "--json",
        ],
    );
    assert_eq!(m.code, 1, "{}{}", m.stdout, m.stderr);
    let v: Value = serde_json::from_str(&m.stdout).unwrap();
    assert_eq!(v["counts"]["copied"], 6);
    assert_eq!(v["counts"]["leftAlone"], 2);
    let left: Vec<&str> = v["leftAlone"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["path"].as_str().unwrap())
        .collect();
    let earlier_path = root.join(format!("agents/main/sessions/{EARLIER_ID}.jsonl"));
    let mut want_left = vec![
        state.db().to_str().unwrap().to_owned(),
        earlier_path.to_str().unwrap().to_owned(),
    ];
    want_left.sort();
    assert_eq!(left, want_left);
    // Keys under the state dir, as `sessions --backend redis://… --root STATE` reads them.
    let redis = RedisStorage::connect(&url, None).unwrap();
    for (name, _, id) in SESSIONS {
        assert_eq!(
            redis.read_all(&root.join(transcript_rel(id))).unwrap(),
            state.expected(name),
            "{name}"
        );
    }
    assert!(redis.read_all(&earlier_path).is_err());
    // Again: all there.
    let again = sessions(
        state.dir.path(),
        &[
            "migrate",
            "--from-root",
            root.to_str().unwrap(),
            "--to",
            &url,
            "--json",
        ],
    );
    assert_eq!(again.code, 0, "{}", again.stderr);
    let v: Value = serde_json::from_str(&again.stdout).unwrap();
    assert_eq!(v["counts"]["identical"], 6);
}

#[test]
fn a_source_without_a_database_is_a_usage_error() {
    let dir = tempdir();
    let empty = dir.path().join("empty");
    session_store::io::ensure_dir(&empty).unwrap();
    let dst = dir.path().join("dst");
    for (from, message) in [
        (
            vec!["--from-root".to_owned(), empty.display().to_string()],
            format!(
                "{}: no OpenClaw SQLite store (agents/*/agent/openclaw-agent.sqlite) in it",
                empty.display()
            ),
        ),
        (
            vec![
                "--from".to_owned(),
                format!("sqlite:{}", dir.path().join("missing.sqlite").display()),
            ],
            format!(
                "{}: no such database file or state directory",
                dir.path().join("missing.sqlite").display()
            ),
        ),
    ] {
        let mut args = vec!["migrate".to_owned()];
        args.extend(from);
        args.extend(["--to".to_owned(), dst.display().to_string()]);
        let r = sessions(dir.path(), &args);
        assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(&message), "{}", r.stderr);
        assert!(!dst.exists());
    }
}

#[test]
fn an_unreadable_transcript_fails_and_keeps_its_agents_sessions_json_back() {
    let test = "an_unreadable_transcript_fails_and_keeps_its_agents_sessions_json_back";
    let Some(state) = State::new(test) else {
        return;
    };
    // A row whose text is not UTF-8 (the reader is strict, openclaw-sqlite.md §2.5).
    let conn = rusqlite::Connection::open(state.db()).unwrap();
    conn.execute(
        "INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES \
         ('11111111-1111-4111-8111-111111111111', 100, CAST(x'7bff7d' AS TEXT), 1782900008000)",
        [],
    )
    .unwrap();
    drop(conn);
    let (run, v) = migrate_json(&state, &[]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.stderr, "error: 2 files could not be migrated\n");
    assert_eq!(v["counts"]["copied"], 5);
    assert_eq!(v["counts"]["failed"], 2);
    let outcome = |kind: &str, id: Option<&str>| {
        v["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["kind"] == kind && id.is_none_or(|id| s["sessionId"] == id))
            .unwrap()
            .clone()
    };
    let bad = outcome("transcript", Some("11111111-1111-4111-8111-111111111111"));
    assert_eq!(bad["outcome"], "failed");
    let error = bad["error"].as_str().unwrap();
    assert!(
        error.starts_with("cannot read the source: ")
            && error.contains("session 11111111-1111-4111-8111-111111111111 seq 100"),
        "{error}"
    );
    let index = outcome("storeIndex", None);
    assert_eq!(index["outcome"], "failed");
    assert_eq!(
        index["error"],
        "not written: 1 transcript of this agent could not be migrated (its rows would name \
         missing transcripts); fix that and run again"
    );
    let dst = state.dst().join("agents/main/sessions");
    let mut want: Vec<String> = SESSIONS[1..]
        .iter()
        .map(|(_, _, id)| format!("{id}.jsonl"))
        .collect();
    want.sort();
    assert_eq!(session_test_support::dir_names(&dst), want);
}

#[test]
fn an_export_into_the_databases_own_state_dir_is_refused() {
    let test = "an_export_into_the_databases_own_state_dir_is_refused";
    let Some(state) = State::new(test) else {
        return;
    };
    let before = listing(&state.root());
    let r = sessions(
        state.dir.path(),
        &[
            "migrate",
            "--from-root",
            state.root().to_str().unwrap(),
            "--to",
            state.root().to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains("is the state directory of the SQLite store"),
        "{}",
        r.stderr
    );
    assert_eq!(listing(&state.root()), before);
}

#[test]
fn every_agent_database_of_a_state_dir_is_exported_into_its_own_agent_dir() {
    let test = "every_agent_database_of_a_state_dir_is_exported_into_its_own_agent_dir";
    let Some(state) = State::new(test) else {
        return;
    };
    // A second agent: the same database under agents/ops/ (the directory names the agent).
    let ops_db = state.root().join("agents/ops/agent/openclaw-agent.sqlite");
    plant(&ops_db, &std::fs::read(state.db()).unwrap());
    // Its schema_meta names its agent, as OpenClaw's own database of agent `ops` does.
    rusqlite::Connection::open(&ops_db)
        .unwrap()
        .execute(
            "UPDATE schema_meta SET agent_id = 'ops' WHERE meta_key = 'primary'",
            [],
        )
        .unwrap();
    let dst = state.dst();
    let r = sessions(
        state.dir.path(),
        &[
            "migrate",
            "--from-root",
            state.root().to_str().unwrap(),
            "--to",
            dst.to_str().unwrap(),
            "--json",
        ],
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        v["from"]["databases"],
        json!([
            {"agent": "main", "path": state.db().to_str().unwrap()},
            {"agent": "ops", "path": ops_db.to_str().unwrap()},
        ])
    );
    assert_eq!(v["counts"]["copied"], 14);
    for agent in ["main", "ops"] {
        let dir = dst.join(format!("agents/{agent}/sessions"));
        let mut want: Vec<String> = SESSIONS
            .iter()
            .map(|(_, _, id)| format!("{id}.jsonl"))
            .collect();
        want.push("sessions.json".to_owned());
        want.sort();
        assert_eq!(session_test_support::dir_names(&dir), want, "{agent}");
        for (name, _, id) in SESSIONS {
            assert_eq!(
                std::fs::read(dir.join(format!("{id}.jsonl"))).unwrap(),
                state.expected(name),
                "{agent} {name}"
            );
        }
    }
    let ours = sessions(
        state.dir.path(),
        &["list", "--root", dst.to_str().unwrap(), "--all", "--json"],
    );
    assert_eq!(ours.code, 0, "{}", ours.stderr);
    let ours: Value = serde_json::from_str(&ours.stdout).unwrap();
    assert_eq!(ours["count"], 12, "{ours}");
}

/// Legacy files left in `agents/<id>/sessions/` (a transcript the import did not take, an
/// agent with no database) are not carried over by a SQLite export: one warning per agent on
/// stderr naming them and suggesting `sessions verify-import`, and the same in JSON
/// `warnings`.
#[test]
fn legacy_files_left_beside_a_database_are_warned_about() {
    let Some(state) = State::new("legacy_files_left_beside_a_database_are_warned_about") else {
        return;
    };
    let root = state.root();
    let main_sessions = root.join("agents/main/sessions");
    let ops_sessions = root.join("agents/ops/sessions");
    plant(
        &main_sessions.join("legacy-left.jsonl"),
        b"{\"type\":\"session\"}\n",
    );
    plant(&ops_sessions.join("sessions.json"), b"{}");
    plant(
        &ops_sessions.join("ops-1.jsonl"),
        b"{\"type\":\"session\"}\n",
    );
    let (run, v) = migrate_json(&state, &["--dry-run"]);
    // 1: a dry run that would copy (the database's 6 transcripts and sessions.json).
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(v["counts"]["wouldCopy"], 7);
    let want = [
        format!(
            "agent main: 1 legacy file in {} are not in its database (not imported) and were \
             not carried over: legacy-left.jsonl; run `sessions verify-import` to see what the \
             import lost",
            main_sessions.display()
        ),
        format!(
            "agent ops: 2 legacy files in {} belong to an agent without a database and were \
             not carried over: ops-1.jsonl, sessions.json; run `sessions verify-import` to see \
             what the import lost",
            ops_sessions.display()
        ),
    ];
    assert_eq!(v["warnings"], serde_json::json!(want));
    let stderr: Vec<String> = want.iter().map(|w| format!("warning: {w}")).collect();
    assert_eq!(run.stderr.lines().collect::<Vec<_>>(), stderr);
}
