//! `sessions verify-import` (openclaw-sqlite.md §4.7, §6.4–§6.6): on the fixture made by the
//! real `openclaw@2026.9.6` doctor, laid out as its state directory, it reports exactly u2 and
//! a2 of `agent:main:broken` as lost (lines 6 and 7) and its u3 as a torn tail, nothing lost for
//! the five others, and exits 1; `--salvage` writes exactly the archive's parseable lines, never
//! over an existing file and never inside the state directory; the database's bytes never
//! change. With the real OpenClaw 2026.9.6 installed (`OPENCLAW96_REF_DIR`, else
//! `target/conformance-ref/openclaw96`; skipped with a printed reason without it): a fresh
//! import of a clean legacy store verifies clean (exit 0); imports damaged by invalid UTF-8 and
//! by two rows with one id report exactly the lines they lost; a salvaged file placed into a
//! fresh legacy store is accepted by the real import, every line.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::{Path, PathBuf};

use serde_json::Value;
use session_test_support::Openclaw96Cli;
use sha2::{Digest, Sha256};

use crate::support::{cmd, plant, shared_dir, tempdir};

const BROKEN: &str = "55555555-5555-4555-8555-555555555555";

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn verify(args: &[&std::ffi::OsStr]) -> Run {
    let out = cmd().arg("verify-import").args(args).output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

fn os<S: AsRef<std::ffi::OsStr> + ?Sized>(s: &S) -> &std::ffi::OsStr {
    s.as_ref()
}

fn sha(path: &Path) -> String {
    format!("{:x}", Sha256::digest(std::fs::read(path).unwrap()))
}

fn json_of(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout))
}

fn fixture_state(test: &str) -> Option<(tempfile::TempDir, PathBuf, PathBuf, PathBuf)> {
    let shared = shared_dir(test)?;
    let dir = tempdir();
    let state = dir.path().join("state");
    let db = session_test_support::openclaw96_fixture_state(&shared, &state);
    Some((dir, state, db, shared.join("fixtures/openclaw-9.6-sqlite")))
}

#[test]
fn the_fixture_reports_the_broken_sessions_lost_lines_and_exits_1() {
    let Some((_dir, state, db, _)) =
        fixture_state("the_fixture_reports_the_broken_sessions_lost_lines_and_exits_1")
    else {
        return;
    };
    let before = sha(&db);
    let text = verify(&[os("--root"), state.as_os_str()]);
    assert_eq!(text.code, 1, "{}{}", text.stdout, text.stderr);
    assert_eq!(sha(&db), before);
    let blocks: Vec<&str> = text
        .stdout
        .lines()
        .filter(|l| !l.starts_with(' '))
        .collect();
    assert_eq!(
        blocks,
        [
            "agent:main:broken  55555555-5555-4555-8555-555555555555  LOST LINES",
            "agent:main:dm:alice  11111111-1111-4111-8111-111111111111  clean: nothing lost",
            "agent:main:large  33333333-3333-4333-8333-333333333333  clean: nothing lost",
            "agent:main:legacy-v1  66666666-6666-4666-8666-666666666666  clean: nothing lost",
            "agent:main:main  22222222-2222-4222-8222-222222222222  clean: nothing lost",
            "agent:main:unicode  44444444-4444-4444-8444-444444444444  clean: nothing lost",
            "6 sessions: 5 clean, 1 with lost lines, 0 differing, 0 missing entirely; 2 lines \
             lost in all; 2 unparseable lines; 8 rows re-serialised (0 lossy), 0 equivalent, 0 \
             differing",
            "next: `sessions verify-import --salvage OUT_DIR` writes each damaged session's \
             parseable lines to OUT_DIR/<sessionId>.jsonl (outside the state directory)",
        ]
    );
    assert!(
        text.stdout.contains(
            "\n  rows: 3 in the database, 5 expected from the whole archive, 2 lines lost\n"
        ),
        "{}",
        text.stdout
    );
    let lost: Vec<&str> = text
        .stdout
        .lines()
        .filter(|l| {
            l.starts_with("  lost line")
                || l.starts_with("  torn")
                || l.starts_with("  unparseable")
        })
        .collect();
    assert_eq!(lost.len(), 4, "{lost:?}");
    assert!(lost[0].starts_with("  lost line 6 (byte 757, message/user, id u2; after unparseable line 5): {\"type\":\"message\",\"id\":\"u2\""), "{}", lost[0]);
    assert!(lost[1].starts_with("  lost line 7 (byte 955, message/assistant, id a2; after unparseable line 5): {\"type\":\"message\",\"id\":\"a2\""), "{}", lost[1]);
    assert!(
        lost[2].starts_with("  unparseable line 5 (byte 727): not JSON"),
        "{}",
        lost[2]
    );
    assert!(
        lost[3].starts_with("  torn tail line 8 (byte 1396): not JSON"),
        "{}",
        lost[3]
    );
    assert!(
        text.stdout
            .contains("  row 2 (line 3): re-serialised, semantically equal: unicode-escape\n")
    );
    assert!(text.stdout.contains(
        "  row 3 (line 4): re-serialised, semantically equal: unicode-escape, escaped-slash\n"
    ));
    assert!(text.stdout.contains(
        "  v1 ids rewritten by the import: 709fe318b22aecde-<n> (ids re-derived from a moved path"
    ));

    let run = verify(&[os("--root"), state.as_os_str(), os("--json")]);
    assert_eq!(run.code, 1);
    assert_eq!(sha(&db), before);
    let v = json_of(&run);
    assert_eq!(
        v["totals"],
        serde_json::json!({"sessions": 6, "clean": 5, "lost": 1, "differs": 0, "sessionMissing": 0,
            "lostLines": 2, "unparseableLines": 2, "rowsReserialised": 8, "rowsLossy": 0,
            "rowsEquivalent": 0, "rowsDiffering": 0, "unreadable": 0, "notImported": 0})
    );
    let broken = &v["sessions"][0];
    assert_eq!(broken["sessionId"], BROKEN);
    assert_eq!(broken["verdict"], "lost");
    assert_eq!(broken["classification"], "protected");
    let lost: Vec<(u64, &str, &str, u64)> = broken["lost"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["line"].as_u64().unwrap(),
                l["id"].as_str().unwrap(),
                l["reason"].as_str().unwrap(),
                l["reasonLine"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        lost,
        [
            (6, "u2", "after-unparseable", 5),
            (7, "a2", "after-unparseable", 5)
        ]
    );
    assert_eq!(
        broken["lostCounts"],
        serde_json::json!({"message/assistant": 1, "message/user": 1})
    );
    let torn: Vec<(u64, bool)> = broken["unparseable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| (u["line"].as_u64().unwrap(), u["torn"].as_bool().unwrap()))
        .collect();
    assert_eq!(torn, [(5, false), (8, true)]);
    let unicode = &v["sessions"][5];
    let verdicts: Vec<&str> = unicode["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(
        verdicts,
        [
            "verbatim",
            "verbatim",
            "reserialised",
            "reserialised",
            "verbatim"
        ]
    );
    assert_eq!(v["sessions"][3]["idsFromMovedPath"], true);
    assert_eq!(v["sessions"][3]["v1IdPrefix"], "709fe318b22aecde");
}

#[test]
fn salvage_writes_exactly_the_archives_parseable_lines_and_never_replaces() {
    let Some((dir, state, db, fixture)) =
        fixture_state("salvage_writes_exactly_the_archives_parseable_lines_and_never_replaces")
    else {
        return;
    };
    let before = sha(&db);
    let out_dir = dir.path().join("salvaged");
    let dry = verify(&[
        os("--root"),
        state.as_os_str(),
        os("--salvage"),
        out_dir.as_os_str(),
        os("--dry-run"),
    ]);
    assert_eq!(dry.code, 1);
    assert!(!out_dir.exists(), "--dry-run writes nothing");
    assert!(dry.stdout.contains(&format!(
        "salvage: would write {}/{BROKEN}.jsonl (5 lines, ",
        out_dir.display()
    )));

    let run = verify(&[
        os("--root"),
        state.as_os_str(),
        os("--salvage"),
        out_dir.as_os_str(),
        os("--json"),
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(sha(&db), before);
    let v = json_of(&run);
    let files = v["salvage"]["files"].as_array().unwrap();
    assert_eq!(files.len(), 1, "only the damaged session");
    let path = out_dir.join(format!("{BROKEN}.jsonl"));
    assert_eq!(files[0]["path"], path.display().to_string());
    assert_eq!(files[0]["lines"], 5);
    let archive = std::fs::read(fixture.join(format!(
        "archive/agent_main_broken.{BROKEN}.jsonl.imported-1796152872299"
    )))
    .unwrap();
    let lines: Vec<&[u8]> = archive.split(|b| *b == b'\n').collect();
    let mut want = Vec::new();
    for i in [0, 1, 3, 5, 6] {
        want.extend_from_slice(lines[i]);
        want.push(b'\n');
    }
    assert_eq!(std::fs::read(&path).unwrap(), want);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(
        session_test_support::dir_names(&out_dir),
        [format!("{BROKEN}.jsonl")]
    );

    // A second run refuses: the file exists; nothing changes.
    let again = verify(&[
        os("--root"),
        state.as_os_str(),
        os("--salvage"),
        out_dir.as_os_str(),
    ]);
    assert_eq!(again.code, 2);
    assert!(again.stderr.contains("already exists"), "{}", again.stderr);
    assert_eq!(std::fs::read(&path).unwrap(), want);

    // Never inside the state directory.
    let inside = state.join("agents/main/salvage");
    let refused = verify(&[
        os("--root"),
        state.as_os_str(),
        os("--salvage"),
        inside.as_os_str(),
    ]);
    assert_eq!(refused.code, 2);
    assert!(
        refused
            .stderr
            .contains("must lie outside the state directory"),
        "{}",
        refused.stderr
    );
    assert!(!inside.exists());
    assert_eq!(sha(&db), before);
}

#[test]
fn usage_errors_exit_2() {
    let dir = tempdir();
    let run = verify(&[os("--root"), dir.path().as_os_str()]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("not an OpenClaw state directory (no agents/ folder)"),
        "{}",
        run.stderr
    );
    let run = verify(&[os("--root"), dir.path().as_os_str(), os("--dry-run")]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("--dry-run applies to --salvage"),
        "{}",
        run.stderr
    );
}

// ---- with the real OpenClaw 2026.9.6 doctor ----

const T0: u64 = 1_782_900_000_000;

fn iso(i: u64) -> String {
    format!("2026-07-01T10:00:{i:02}.000Z")
}

fn header(id: &str) -> String {
    format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"{}","cwd":"/tmp/w"}}"#,
        iso(0)
    )
}

fn user(id: &str, parent: Option<&str>, text: &str, i: u64) -> String {
    let p = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{p},"timestamp":"{}","message":{{"role":"user","content":[{{"type":"text","text":"{text}"}}],"timestamp":{}}}}}"#,
        iso(i),
        T0 + i * 1000
    )
}

fn assistant(id: &str, parent: &str, text: &str, i: u64) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"{}","message":{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}},"stopReason":"stop","timestamp":{}}}}}"#,
        iso(i),
        T0 + i * 1000
    )
}

fn file(lines: &[String]) -> Vec<u8> {
    let mut s = lines.join("\n");
    s.push('\n');
    s.into_bytes()
}

/// A legacy (pre-SQLite) store of agent `main` under `state`, as the fixture's `lib.mjs` builds
/// one: `sessions.json` plus one `<id>.jsonl` per session.
fn legacy_store(state: &Path, sessions: &[(&str, &str, Vec<u8>)]) {
    let dir = state.join("agents/main/sessions");
    let mut index = serde_json::Map::new();
    for (i, (key, id, bytes)) in sessions.iter().enumerate() {
        plant(&dir.join(format!("{id}.jsonl")), bytes);
        index.insert(
            (*key).to_owned(),
            serde_json::json!({"sessionId": id, "updatedAt": T0 + i as u64 * 60_000, "sessionFile": format!("{id}.jsonl")}),
        );
    }
    plant(
        &dir.join("sessions.json"),
        format!(
            "{}\n",
            serde_json::to_string_pretty(&Value::Object(index)).unwrap()
        )
        .as_bytes(),
    );
}

fn import(cli: &Openclaw96Cli, state: &Path) -> (i32, Value) {
    let out = cli.run_doctor(state, &["--session-sqlite", "import", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), v)
}

#[test]
fn a_fresh_import_by_the_real_doctor_verifies_clean() {
    let test = "a_fresh_import_by_the_real_doctor_verifies_clean";
    let Some(cli) = Openclaw96Cli::find(test) else {
        return;
    };
    let dir = tempdir();
    let state = dir.path().join("state");
    let (a, b, c) = (
        "aaaaaaaa-0000-4000-8000-000000000001",
        "aaaaaaaa-0000-4000-8000-000000000002",
        "aaaaaaaa-0000-4000-8000-000000000003",
    );
    let escaped = format!(
        r#"{{"type":"message","id":"a1","parentId":"u1","timestamp":"{}","message":{{"role":"assistant","content":[{{"type":"text","text":"caf\u00e9 \/ \ud83c\udf89"}}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{{"input":1.0,"output":1e0,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}},"stopReason":"stop","timestamp":{T0}}}}}"#,
        iso(2)
    );
    let v1 = file(&[
        format!(
            r#"{{"type":"session","id":"{c}","timestamp":"{}","cwd":"/tmp/w"}}"#,
            iso(0)
        ),
        format!(
            r#"{{"type":"message","timestamp":"{}","message":{{"role":"user","content":"v1 q","timestamp":{T0}}}}}"#,
            iso(1)
        ),
        format!(
            r#"{{"type":"message","timestamp":"{}","message":{{"role":"assistant","content":"v1 a","api":"anthropic-messages","provider":"anthropic","model":"m","stopReason":"stop","timestamp":{T0}}}}}"#,
            iso(2)
        ),
        format!(
            r#"{{"type":"compaction","timestamp":"{}","summary":"s","firstKeptEntryIndex":1,"tokensBefore":5}}"#,
            iso(3)
        ),
    ]);
    legacy_store(
        &state,
        &[
            (
                "agent:main:main",
                a,
                file(&[
                    header(a),
                    user("u1", None, "hi", 1),
                    assistant("a1", "u1", "hello", 2),
                ]),
            ),
            (
                "agent:main:escapes",
                b,
                file(&[header(b), user("u1", None, "x", 1), escaped]),
            ),
            ("agent:main:v1", c, v1),
        ],
    );
    let (rc, report) = import(&cli, &state);
    assert_eq!(rc, 0, "{report}");
    let db = state.join("agents/main/agent/openclaw-agent.sqlite");
    let before = sha(&db);
    let run = verify(&[os("--root"), state.as_os_str(), os("--json")]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(sha(&db), before);
    let v = json_of(&run);
    assert_eq!(v["totals"]["sessions"], 3);
    assert_eq!(v["totals"]["clean"], 3);
    assert_eq!(v["totals"]["lostLines"], 0);
    let by_id = |id: &str| {
        v["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["sessionId"] == id)
            .unwrap()
            .clone()
    };
    let esc = by_id(b);
    assert_eq!(esc["rows"][2]["verdict"], "reserialised");
    assert_eq!(
        esc["rows"][2]["changes"],
        serde_json::json!(["unicode-escape", "escaped-slash", "number-form"])
    );
    // The path is real here, so the v1 prefix is computed from it, not taken from the database.
    let v1 = by_id(c);
    assert_eq!(v1["idsFromMovedPath"], false, "{v1}");
    assert!(v1["v1IdPrefix"].is_string());
}

#[test]
fn imports_damaged_by_invalid_utf8_and_a_repeated_id_report_exactly_their_lost_lines() {
    let test = "imports_damaged_by_invalid_utf8_and_a_repeated_id_report_exactly_their_lost_lines";
    let Some(cli) = Openclaw96Cli::find(test) else {
        return;
    };
    let dir = tempdir();
    let state = dir.path().join("state");
    let (a, b) = (
        "bbbbbbbb-0000-4000-8000-000000000001",
        "bbbbbbbb-0000-4000-8000-000000000002",
    );
    let mut bad = file(&[header(a), user("u1", None, "x", 1)]);
    bad.extend_from_slice(b"\xff\xfe\n");
    bad.extend_from_slice(&file(&[assistant("a1", "u1", "after bad bytes", 2)]));
    let dup = file(&[
        header(b),
        user("u1", None, "x", 1),
        assistant("a1", "u1", "first", 2),
        assistant("a1", "u1", "second", 2),
    ]);
    // Invalid UTF-8 after 64 KiB: 40 rows of about 1.9 KiB, then the bad byte, then one more.
    let c = "bbbbbbbb-0000-4000-8000-000000000003";
    let filler = "All work and no play makes Jack a dull boy. ".repeat(41);
    let mut rows = vec![header(c)];
    for i in 0..40usize {
        rows.push(if i % 2 == 1 {
            assistant(&format!("a{i}"), &format!("u{}", i - 1), &filler, 2)
        } else {
            let p = (i > 0).then(|| format!("a{}", i - 1));
            user(&format!("u{i}"), p.as_deref(), &filler, 1)
        });
    }
    let mut late = file(&rows);
    let bad_at = late.len();
    late.extend_from_slice(b"\xff\n");
    late.extend_from_slice(&file(&[user("u99", Some("a39"), "after bad byte", 1)]));
    assert!(bad_at > 65_536);
    let first_cut_line = 1 + late[..65_536].iter().filter(|b| **b == b'\n').count();
    legacy_store(
        &state,
        &[
            ("agent:main:utf8", a, bad),
            ("agent:main:dup", b, dup),
            ("agent:main:late", c, late),
        ],
    );
    let (rc, _) = import(&cli, &state);
    assert_eq!(rc, 1, "the same-id conflict is a blocking issue");
    let db = state.join("agents/main/agent/openclaw-agent.sqlite");
    let before = sha(&db);
    let run = verify(&[os("--root"), state.as_os_str(), os("--json")]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(sha(&db), before);
    let v = json_of(&run);
    let sessions = v["sessions"].as_array().unwrap();
    let get = |id: &str, kind: &str| {
        sessions
            .iter()
            .find(|s| s["sessionId"] == id && s["kind"] == kind)
            .unwrap_or_else(|| panic!("{id} {kind}: {v}"))
    };
    // The blocking id conflict keeps doctor from archiving either transcript (observed): both
    // are verified where they are, in sessions/.
    // Invalid UTF-8 in a small file: no row at all; every parseable line lost.
    let utf8 = get(a, "legacy");
    assert_eq!(utf8["storedRows"], 0);
    let lost: Vec<(u64, &str)> = utf8["lost"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["line"].as_u64().unwrap(), l["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(
        lost,
        [
            (1, "after-invalid-utf8"),
            (2, "after-invalid-utf8"),
            (4, "after-invalid-utf8")
        ]
    );
    assert_eq!(utf8["unparseable"][0]["line"], 3);
    assert_eq!(utf8["unparseable"][0]["problem"], "utf8");
    // Same id, other text: left in sessions/; the second a1 (line 4) is lost.
    let dup = get(b, "legacy");
    assert_eq!(
        dup["sessionKey"], "agent:main:dup",
        "from the sessions.json doctor left"
    );
    assert_eq!(dup["storedRows"], 3);
    let lost: Vec<(u64, &str, &str)> = dup["lost"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["line"].as_u64().unwrap(),
                l["id"].as_str().unwrap(),
                l["reason"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(lost, [(4, "a1", "id-conflict")]);
    // After 64 KiB: the lines not ended before the refused chunk are lost, up to the bad byte
    // and after it; the rest landed (the lines are compared row by row).
    let late = get(c, "legacy");
    let lost: Vec<u64> = late["lost"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["line"].as_u64().unwrap())
        .collect();
    let want: Vec<u64> = (first_cut_line as u64..=41).chain([43]).collect();
    assert_eq!(lost, want);
    assert!(
        late["lost"]
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l["reason"] == "after-invalid-utf8")
    );
    assert_eq!(
        late["storedRows"].as_u64().unwrap(),
        first_cut_line as u64 - 1
    );
    assert_eq!(late["expectedRows"], late["storedRows"]);
    assert_eq!(late["stop"]["chunkOffset"], 65_536);
    assert_eq!(late["unparseable"][0]["line"], 42);
    assert_eq!(v["totals"]["lostLines"], 4 + want.len());
}

#[test]
fn a_salvaged_file_is_accepted_by_the_real_import() {
    let test = "a_salvaged_file_is_accepted_by_the_real_import";
    let Some(cli) = Openclaw96Cli::find(test) else {
        return;
    };
    let Some((dir, state, _db, _)) = fixture_state(test) else {
        return;
    };
    let out_dir = dir.path().join("salvaged");
    let run = verify(&[
        os("--root"),
        state.as_os_str(),
        os("--salvage"),
        out_dir.as_os_str(),
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let salvaged = std::fs::read(out_dir.join(format!("{BROKEN}.jsonl"))).unwrap();
    let lines = salvaged.iter().filter(|b| **b == b'\n').count();
    assert_eq!(lines, 5);
    let fresh = dir.path().join("fresh");
    legacy_store(&fresh, &[("agent:main:broken", BROKEN, salvaged)]);
    let (rc, report) = import(&cli, &fresh);
    assert_eq!(rc, 0, "{report}");
    assert_eq!(
        report["targets"][0]["importedTranscriptEvents"], lines,
        "{report}"
    );
    assert_eq!(
        report["targets"][0]["issues"],
        serde_json::json!([]),
        "{report}"
    );
    let check = verify(&[os("--root"), fresh.as_os_str(), os("--json")]);
    assert_eq!(check.code, 0, "{}", check.stdout);
    let v = json_of(&check);
    assert_eq!(v["sessions"][0]["storedRows"], lines);
    assert_eq!(v["sessions"][0]["verdict"], "clean");
}

#[test]
fn a_legacy_transcript_the_database_never_got_is_a_missing_session() {
    let Some((_dir, state, db, fixture)) =
        fixture_state("a_legacy_transcript_the_database_never_got_is_a_missing_session")
    else {
        return;
    };
    let before = sha(&db);
    let id = "99999999-9999-4999-8999-999999999999";
    let src = std::fs::read(fixture.join("source/compaction.jsonl")).unwrap();
    let text = String::from_utf8(src)
        .unwrap()
        .replace("22222222-2222-4222-8222-222222222222", id);
    plant(
        &state.join(format!("agents/main/sessions/{id}.jsonl")),
        text.as_bytes(),
    );
    let run = verify(&[os("--root"), state.as_os_str(), os("--json")]);
    assert_eq!(run.code, 1);
    assert_eq!(sha(&db), before);
    let v = json_of(&run);
    let missing: Vec<&Value> = v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["verdict"] == "session-missing")
        .collect();
    assert_eq!(missing.len(), 1);
    assert_eq!(missing[0]["sessionId"], id);
    assert_eq!(missing[0]["kind"], "legacy");
    assert_eq!(missing[0]["expectedRows"], 8);
    assert_eq!(missing[0]["storedRows"], 0);
    assert_eq!(v["totals"]["sessionMissing"], 1);
}

#[test]
fn a_state_dir_with_no_database_is_not_imported_yet_exit_2() {
    let dir = tempdir();
    let state = dir.path().join("state");
    let a = "eeeeeeee-0000-4000-8000-000000000001";
    let b = "eeeeeeee-0000-4000-8000-000000000002";
    legacy_store(
        &state,
        &[
            (
                "agent:main:main",
                a,
                file(&[header(a), user("u1", None, "hi", 1)]),
            ),
            (
                "agent:main:other",
                b,
                file(&[header(b), user("u1", None, "hi", 1)]),
            ),
        ],
    );
    let run = verify(&[os("--root"), state.as_os_str()]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    let db = state.join("agents/main/agent/openclaw-agent.sqlite");
    assert_eq!(
        run.stdout.lines().collect::<Vec<_>>(),
        [
            format!(
                "agent main: NOT IMPORTED: no OpenClaw 2026.8+ database at {}; nothing has been \
                 imported yet, so its 2 legacy transcripts are not verified — OpenClaw 2026.9.6 \
                 imports with `openclaw doctor --fix`",
                db.display()
            ),
            format!(
                "no OpenClaw 2026.8+ database under {}; nothing has been imported yet — \
                 OpenClaw 2026.9.6 imports with `openclaw doctor --fix`",
                state.join("agents").display()
            ),
        ]
    );
    let json = verify(&[os("--root"), state.as_os_str(), os("--json")]);
    assert_eq!(json.code, 2);
    let v = json_of(&json);
    assert_eq!(v["sessions"], serde_json::json!([]));
    assert_eq!(
        v["notImported"],
        serde_json::json!([{"agentId": "main", "database": db.display().to_string(), "transcripts": 2}])
    );
    assert_eq!(v["totals"]["sessionMissing"], 0);
    assert_eq!(v["totals"]["notImported"], 1);
}
