//! prepare-for-run (openclaw-jsonl.md §4) against OpenClaw 2026.6.11: every case of
//! `fixtures/reference/prepare-cases.json` is run here exactly as `capture.mjs` ran it through
//! the reference, and the normalised records (error text, file bytes after prepare, header,
//! entries, leaf, flushed, the parent of the next user turn, the file bytes after one user and
//! one assistant) must equal `expected/prepare.json` byte for byte. Our one addition, the
//! byte-exact backup made before case 2b empties a file, is checked separately.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::common;

use std::path::Path;

use agent_session::{PrepareError, PrepareOutcome, PrepareParams, prepare_session_manager_for_run};
use common::{fixture_json, fixture_text, json, obj, s};
use session_format::json::JsValue;
use session_store::{SessionManager, io};

fn user() -> JsValue {
    json(r#"{"role":"user","content":"next","timestamp":1767225610000}"#)
}

fn assistant() -> JsValue {
    json(
        r#"{"role":"assistant","content":[{"type":"text","text":"done"}],"provider":"anthropic","model":"claude","stopReason":"stop","timestamp":1767225611000}"#,
    )
}

fn read_text(path: &Path) -> Option<String> {
    std::fs::read(path)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

fn text_value(t: Option<String>) -> JsValue {
    t.map_or(JsValue::Null, JsValue::from)
}

struct CaseRun {
    record: JsValue,
    outcome: Result<PrepareOutcome, String>,
    before: Option<Vec<u8>>,
    dir: tempfile::TempDir,
}

fn run_case(case: &JsValue) -> CaseRun {
    let name = common::str_field(case, "name").unwrap();
    let pad = case
        .get("pad")
        .and_then(JsValue::as_f64)
        .map(|p| p as usize);
    let expand = |t: &str| match pad {
        Some(p) => t.replace("<PAD>", &"x".repeat(p)),
        None => t.to_owned(),
    };
    let unpad = |t: Option<String>| match (pad, t) {
        (Some(p), Some(t)) => Some(t.replace(&"x".repeat(p), "<PAD>")),
        (_, t) => t,
    };
    let dir = tempfile::tempdir().unwrap();
    let dir_path = std::fs::canonicalize(dir.path()).unwrap();
    let file = dir_path.join("session.jsonl");
    if let Some(content) = case.get("content").and_then(JsValue::as_str_lossy) {
        io::write_raw(&file, expand(&content).as_bytes()).unwrap();
    }
    let mut sm = SessionManager::open(&file, Some(&dir_path), None).unwrap();
    if let Some(over) = case
        .get("overwriteAfterOpen")
        .and_then(JsValue::as_str_lossy)
    {
        io::write_raw(&file, over.as_bytes()).unwrap();
    }
    let before_bytes = std::fs::read(&file).ok();
    let before = read_text(&file);
    let outcome = prepare_session_manager_for_run(
        &mut sm,
        PrepareParams {
            session_file: &file,
            had_session_file: case.get("hadSessionFile") == Some(&JsValue::Bool(true)),
            session_id: &common::str_field(case, "sessionId").unwrap(),
            cwd: &common::str_field(case, "cwd").unwrap(),
        },
    )
    .map_err(|e| e.to_string());
    let after = read_text(&file);
    let dir_text = dir_path.to_str().unwrap();
    let mut header = sm.get_header().unwrap().unwrap_or(JsValue::Null);
    if pad.is_some()
        && let Some(o) = header.as_object_mut()
        && o.contains_key("pad")
    {
        o.insert("pad", s("<PAD>"));
    }
    let corrupt = std::fs::read_dir(&dir_path)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains(".corrupt-")
        })
        .count();
    let mut pairs = vec![
        ("name", s(&name)),
        (
            "error",
            match &outcome {
                Ok(_) => JsValue::Null,
                Err(e) => JsValue::from(e.replace(dir_text, "<dir>")),
            },
        ),
        ("fileChanged", JsValue::Bool(after != before)),
        ("file", text_value(unpad(after))),
        ("sessionId", s(sm.get_session_id())),
        ("cwd", s(sm.get_cwd())),
        ("header", header),
        (
            "entryIds",
            JsValue::Array(
                sm.get_entries()
                    .map(|e| JsValue::String(e.id_js().unwrap().clone()))
                    .collect(),
            ),
        ),
        ("leafId", sm.get_leaf_id().map_or(JsValue::Null, s)),
        ("flushed", JsValue::Bool(sm.is_flushed())),
        ("corruptBackups", JsValue::Number(corrupt as f64)),
    ];
    if outcome.is_ok() {
        let uid = sm.append_message(user()).unwrap();
        let parent = sm.get_entry(&uid).unwrap().parent_id();
        pairs.push(("userParentId", parent.map_or(JsValue::Null, JsValue::from)));
        sm.append_message(assistant()).unwrap();
        pairs.push(("fileAfterTurn", text_value(unpad(read_text(&file)))));
        let ctx = sm.build_session_context().unwrap();
        let roles = ctx
            .messages
            .iter()
            .map(|m| JsValue::from(m.role().unwrap().unwrap()))
            .collect();
        pairs.push(("contextRoles", JsValue::Array(roles)));
    }
    CaseRun {
        record: obj(pairs),
        outcome: outcome.map_err(|e| e.replace(dir_text, "<dir>")),
        before: before_bytes,
        dir,
    }
}

fn cases() -> Vec<JsValue> {
    let doc = fixture_json("prepare-cases.json");
    doc.get("cases").unwrap().as_array().unwrap().clone()
}

#[test]
fn every_case_matches_the_reference() {
    let start = session_format::ids::now_ms() as f64;
    let runs: Vec<CaseRun> = cases().iter().map(run_case).collect();
    let records = JsValue::Array(runs.iter().map(|r| r.record.clone()).collect());
    let ours = session_format::normalize::normalize_output(&records, None, start).unwrap();
    let expected = fixture_text("expected/prepare.json");
    if ours != expected {
        let ours_lines: Vec<&str> = ours.lines().collect();
        let exp_lines: Vec<&str> = expected.lines().collect();
        let first = ours_lines
            .iter()
            .zip(&exp_lines)
            .position(|(a, b)| a != b)
            .unwrap_or(ours_lines.len().min(exp_lines.len()));
        panic!(
            "differs from the reference at line {}:\n ours: {}\n  ref: {}",
            first + 1,
            ours_lines.get(first).unwrap_or(&"<end>"),
            exp_lines.get(first).unwrap_or(&"<end>")
        );
    }
}

fn run_named(name: &str) -> CaseRun {
    let case = cases()
        .into_iter()
        .find(|c| common::str_field(c, "name").as_deref() == Some(name))
        .unwrap();
    run_case(&case)
}

fn reset_backups(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains("session.jsonl.reset-"))
        .collect();
    v.sort();
    v
}

#[test]
fn reset_keeps_a_byte_exact_backup_of_the_discarded_history() {
    for name in ["header-only", "user-only", "huge-header-line"] {
        let run = run_named(name);
        let Ok(PrepareOutcome::Reset { backup: Some(b) }) = &run.outcome else {
            panic!("{name}: {:?}", run.outcome);
        };
        let backups = reset_backups(run.dir.path());
        assert_eq!(backups.len(), 1, "{name}");
        assert_eq!(
            std::fs::canonicalize(&backups[0]).unwrap(),
            std::fs::canonicalize(b).unwrap()
        );
        assert_eq!(
            std::fs::read(&backups[0]).unwrap(),
            run.before.clone().unwrap(),
            "{name}"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&backups[0]).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{name}");
        }
    }
}

#[test]
fn refusals_leave_file_and_manager_untouched() {
    for (name, invalid) in [
        ("refuse-unreadable-header", false),
        ("refuse-invalid-header", true),
        ("refuse-bom-header", false),
    ] {
        let run = run_named(name);
        match (&run.outcome, invalid) {
            (Err(e), false) => assert_eq!(
                e,
                "Refusing to reset session transcript with unreadable header: <dir>/session.jsonl"
            ),
            (Err(e), true) => assert_eq!(
                e,
                "Refusing to reset session transcript with invalid header: <dir>/session.jsonl"
            ),
            (Ok(o), _) => panic!("{name}: {o:?}"),
        }
        assert!(reset_backups(run.dir.path()).is_empty(), "{name}");
        let file = run.dir.path().join("session.jsonl");
        assert_eq!(std::fs::read(&file).unwrap(), run.before.clone().unwrap());
        // Manager state: still the opened session.
        assert_eq!(run.record.get("sessionId"), Some(&s("sess-old")));
        assert_eq!(run.record.get("leafId"), Some(&s("u1")));
    }
}

#[test]
fn outcomes_name_the_case() {
    let expect = [
        ("new-session-missing-file", "NewSession"),
        ("fork-user-only", "KeptAndRewritten"),
        ("recovered-corrupt-header", "KeptAndRewritten"),
        ("assistant-same-identity", "Unchanged"),
        ("assistant-new-identity", "HeaderRewritten"),
        ("assistant-header-without-cwd", "HeaderRewritten"),
        ("not-had-file-existing", "NewSession"),
    ];
    for (name, outcome) in expect {
        let run = run_named(name);
        assert_eq!(format!("{:?}", run.outcome.unwrap()), outcome, "{name}");
    }
}

#[test]
fn unchanged_header_is_not_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    let text = "{\"type\":\"session\",\"version\":3,\"id\":\"x\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/c\"}\n{\"type\":\"message\",\"id\":\"a1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{\"role\":\"assistant\",\"content\":[]}}\n";
    io::write_raw(&file, text.as_bytes()).unwrap();
    let ino = std::fs::metadata(&file).unwrap();
    let mut sm = SessionManager::open(&file, None, None).unwrap();
    let out = prepare_session_manager_for_run(
        &mut sm,
        PrepareParams {
            session_file: &file,
            had_session_file: true,
            session_id: "x",
            cwd: "/c",
        },
    )
    .unwrap();
    assert_eq!(out, PrepareOutcome::Unchanged);
    let after = std::fs::metadata(&file).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        assert_eq!(ino.ino(), after.ino());
        assert_eq!(ino.mtime_nsec(), after.mtime_nsec());
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}

#[test]
fn a_manager_bound_elsewhere_is_refused_before_any_change() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    let other = dir.path().join("other.jsonl");
    let text = "{\"type\":\"session\",\"version\":3,\"id\":\"x\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/c\"}\n";
    io::write_raw(&file, text.as_bytes()).unwrap();
    io::write_raw(&other, text.as_bytes()).unwrap();
    let mut sm = SessionManager::open(&file, None, None).unwrap();
    let err = prepare_session_manager_for_run(
        &mut sm,
        PrepareParams {
            session_file: &other,
            had_session_file: true,
            session_id: "y",
            cwd: "/d",
        },
    )
    .unwrap_err();
    assert!(matches!(err, PrepareError::NotBound { .. }), "{err}");
    assert_eq!(sm.get_session_id(), "x");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    assert_eq!(std::fs::read_to_string(&other).unwrap(), text);
}

#[test]
fn header_check_reads_past_blank_lines_and_long_lines() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("h.jsonl");
    let cases: [(String, Option<&str>); 6] = [
        (String::new(), None),
        ("\n \r\n\t\n".to_owned(), None),
        (
            format!(
                "\n\n{{\"type\":\"session\",\"pad\":\"{}\"}}",
                "y".repeat(200_000)
            ),
            None,
        ),
        ("{\"type\":\"session\"}\r\nrest".to_owned(), None),
        ("\n[1]\n".to_owned(), Some("invalid")),
        ("  {\"type\":\"session\"\n".to_owned(), Some("unreadable")),
    ];
    for (text, err) in cases {
        io::write_raw(&file, text.as_bytes()).unwrap();
        let r = agent_session::prepare::assert_existing_header_is_readable(&file);
        match (err, r) {
            (None, Ok(())) => {}
            (Some(kind), Err(e)) => assert_eq!(
                e.to_string(),
                format!(
                    "Refusing to reset session transcript with {kind} header: {}",
                    file.display()
                )
            ),
            (want, got) => panic!("{text:.40?}: wanted {want:?}, got {got:?}"),
        }
    }
    let missing = dir.path().join("missing.jsonl");
    let e = agent_session::prepare::assert_existing_header_is_readable(&missing).unwrap_err();
    assert!(matches!(e, PrepareError::Read { .. }));
}
