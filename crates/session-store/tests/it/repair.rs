//! `repair_session_file_if_needed` against OpenClaw 2026.6.11's `repairSessionFileIfNeeded`
//! (openclaw-jsonl.md §1.8, §7.5). The goldens under `tests/fixtures/repair/expected/` are the
//! reference's own results, captured with node by `tests/fixtures/repair/capture.mjs` from the
//! inputs in `tests/fixtures/repair/cases/`: the result object, the warn/debug texts, how many
//! lines it parsed, and the repaired bytes. Differences are the listed deviations only: rows the
//! repair leaves alone keep their bytes (D1), the backup is kept (D16).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::Path;

use crate::repair_common::{
    backups, fixture, golden, messages_json, mode_of, normalise_output, normalised_result, plant,
    restringify, serial, tempdir,
};
use session_format::json::{JsValue, to_json_string};
use session_store::test_util::repair_probes::{is_repair_cached, parsed_lines_on_this_thread};
use session_store::{
    RepairLevel, RepairMessage, RepairOptions, RepairOutcome, RepairSkip, RepairSnapshot,
    repair_session_file_if_needed, repair_session_file_with,
};
use session_test_support::dir_names;

/// Cases whose untouched rows are not in `JSON.stringify` form, so the reference re-stringifies
/// them and we keep their bytes (D1): CRLF endings, spacing and `1.50`, invalid UTF-8.
const VERBATIM_CASES: [&str; 3] = [
    "18-crlf-with-repair",
    "31-rewrite-serialisation",
    "36-invalid-utf8",
];

fn case_input(stem: &str) -> Vec<u8> {
    std::fs::read(fixture(&format!("cases/{stem}.jsonl"))).unwrap()
}

fn field<'a>(v: &'a JsValue, path: &[&str]) -> &'a JsValue {
    path.iter().fold(v, |v, k| v.get(k).unwrap())
}

fn repair_counted(file: &Path) -> (RepairOutcome, u64) {
    let before = parsed_lines_on_this_thread();
    let outcome = repair_session_file_if_needed(file, None);
    (outcome, parsed_lines_on_this_thread() - before)
}

/// Runs one case twice and compares everything the reference showed.
fn check_case(stem: &str) -> Result<(), String> {
    let expected = golden(&format!("expected/{stem}.json"));
    let input = case_input(stem);
    let dir = tempdir();
    let file = plant(dir.path(), &input, 0o640);
    let err = |what: &str, ours: String, theirs: String| {
        Err(format!(
            "{stem}: {what}\n  ours:   {ours}\n  theirs: {theirs}"
        ))
    };

    let (first, parses) = repair_counted(&file);
    let exp = field(&expected, &["first"]);
    let ours = normalised_result(&first, &file);
    let theirs = to_json_string(field(exp, &["result"]));
    if ours != theirs {
        return err("result", ours, theirs);
    }
    let (ours, theirs) = (
        messages_json(&first),
        to_json_string(field(exp, &["messages"])),
    );
    if ours != theirs {
        return err("messages", ours, theirs);
    }
    let theirs = field(exp, &["parseCount"]).as_f64().unwrap() as u64;
    if parses != theirs {
        return err("lines parsed", parses.to_string(), theirs.to_string());
    }
    let after = std::fs::read(&file).unwrap();
    let changed = after != input;
    if JsValue::Bool(changed) != *field(exp, &["changed"]) {
        return err("file changed", changed.to_string(), String::new());
    }
    if format!("{:o}", mode_of(&file)) != field(exp, &["mode"]).as_str_lossy().unwrap() {
        return err("mode", format!("{:o}", mode_of(&file)), "640".into());
    }
    if changed {
        let reference = std::fs::read(fixture(&format!("expected/{stem}.out.jsonl"))).unwrap();
        let ours = normalise_output(&after);
        let (ours, theirs) = if VERBATIM_CASES.contains(&stem) {
            (restringify(&ours), restringify(&reference))
        } else {
            (ours, reference)
        };
        if ours != theirs {
            return err(
                "repaired bytes",
                String::from_utf8_lossy(&ours).into_owned(),
                String::from_utf8_lossy(&theirs).into_owned(),
            );
        }
    }
    // Our backup: kept, byte-exact, same mode, only when the file was rewritten.
    let baks = backups(dir.path());
    if first.repaired {
        let bak = first.backup_path.ok_or(format!("{stem}: no backup_path"))?;
        if baks != [bak.clone()] || std::fs::read(&bak).unwrap() != input || mode_of(&bak) != 0o640
        {
            return err("backup", format!("{baks:?}"), String::new());
        }
    } else if !baks.is_empty() || first.backup_path.is_some() {
        return err("backup", format!("{baks:?}"), "none".into());
    }

    // Idempotence: nothing more to do, nothing written, no second backup.
    let (second, parses) = repair_counted(&file);
    let exp = field(&expected, &["second"]);
    let ours = normalised_result(&second, &file);
    let theirs = to_json_string(field(exp, &["result"]));
    if ours != theirs {
        return err("second result", ours, theirs);
    }
    if messages_json(&second) != to_json_string(field(exp, &["messages"])) {
        return err("second messages", messages_json(&second), String::new());
    }
    let theirs = field(exp, &["parseCount"]).as_f64().unwrap() as u64;
    if parses != theirs {
        return err(
            "second lines parsed",
            parses.to_string(),
            theirs.to_string(),
        );
    }
    if std::fs::read(&file).unwrap() != after || backups(dir.path()) != baks {
        return err("second call wrote", String::new(), String::new());
    }
    Ok(())
}

#[test]
fn every_case_matches_the_reference() {
    let _serial = serial();
    let mut stems: Vec<String> = std::fs::read_dir(fixture("cases"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".jsonl").map(str::to_owned))
        .collect();
    stems.sort();
    assert_eq!(stems.len(), 37);
    let failures: Vec<String> = stems.iter().filter_map(|s| check_case(s).err()).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn repaired(counts: impl FnOnce(&mut RepairOutcome), outcome: &RepairOutcome) -> RepairOutcome {
    let mut expected = RepairOutcome {
        repaired: true,
        validated_snapshot: outcome.validated_snapshot,
        backup_path: outcome.backup_path.clone(),
        ..RepairOutcome::default()
    };
    counts(&mut expected);
    expected
}

fn debug(text: &str) -> Vec<RepairMessage> {
    vec![RepairMessage {
        level: RepairLevel::Debug,
        text: text.to_owned(),
    }]
}

fn warn(text: &str) -> Vec<RepairMessage> {
    vec![RepairMessage {
        level: RepairLevel::Warn,
        text: text.to_owned(),
    }]
}

/// Runs a case once: (outcome, repaired bytes, the file).
fn run(stem: &str) -> (RepairOutcome, Vec<u8>, tempfile::TempDir) {
    let dir = tempdir();
    let file = plant(dir.path(), &case_input(stem), 0o640);
    let outcome = repair_session_file_if_needed(&file, None);
    let bytes = std::fs::read(&file).unwrap();
    if outcome.validated_snapshot.is_some() {
        assert_eq!(outcome.validated_snapshot, RepairSnapshot::of(&file).ok());
    }
    (outcome, bytes, dir)
}

#[test]
fn malformed_lines_are_dropped() {
    let _serial = serial();
    let (outcome, bytes, _dir) = run("01-malformed-lines");
    let expected = repaired(
        |e| {
            e.dropped_lines = 2;
            e.messages =
                debug("session file repaired: dropped 2 malformed line(s) (session.jsonl)");
        },
        &outcome,
    );
    assert_eq!(outcome, expected);
    assert!(outcome.validated_snapshot.is_some());
    assert_eq!(
        String::from_utf8(bytes).unwrap(),
        concat!(
            r#"{"type":"session","version":3,"id":"sess-1","timestamp":"2026-06-01T10:00:00.000Z","cwd":"/work/project"}"#,
            "\n",
            r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-06-01T10:00:01.000Z","message":{"role":"user","content":"hello","timestamp":1780308001000}}"#,
            "\n",
            r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-06-01T10:00:01.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hi"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-x","usage":{"input":1,"output":1},"stopReason":"stop","timestamp":1780308002000}}"#,
            "\n"
        )
    );
}

#[test]
fn null_missing_and_blank_roles_are_dropped() {
    let _serial = serial();
    let (outcome, bytes, _dir) = run("02-invalid-roles");
    assert_eq!(outcome.dropped_lines, 5);
    let ids: Vec<String> = String::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(|l| l.split("\"id\":\"").nth(1).unwrap()[..4].to_owned())
        .collect();
    assert_eq!(ids, ["sess", "u1\",", "a1\","]);
    let (outcome, _, _dir) = run("03-invalid-message-field");
    assert_eq!(outcome.dropped_lines, 5);
    let (outcome, _, _dir) = run("35-role-js-whitespace");
    assert_eq!(outcome.dropped_lines, 1);
}

#[test]
fn error_assistant_with_empty_content_gets_the_placeholder() {
    let _serial = serial();
    let (outcome, bytes, _dir) = run("04-error-assistant");
    let expected = repaired(
        |e| {
            e.rewritten_assistant_messages = 1;
            e.messages =
                debug("session file repaired: rewrote 1 assistant message(s) (session.jsonl)");
        },
        &outcome,
    );
    assert_eq!(outcome, expected);
    assert!(!outcome.messages[0].text.contains("dropped"));
    let text = String::from_utf8(bytes).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[2],
        r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-06-01T10:00:01.000Z","message":{"role":"assistant","content":[{"type":"text","text":"[assistant turn failed before producing content]"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-x","usage":{"input":1,"output":1},"stopReason":"error","timestamp":1780308002000,"errorMessage":"boom"}}"#
    );
    // The silent `stop` reply and the `aborted` turn keep their empty content.
    assert!(lines[4].contains(r#""content":[],"#) && lines[4].contains(r#""stopReason":"stop""#));
    assert!(
        lines[5].contains(r#""content":[],"#) && lines[5].contains(r#""stopReason":"aborted""#)
    );
    let (outcome, _, _dir) = run("05-silent-reply");
    assert!(!outcome.repaired && outcome.reason.is_none());
}

#[test]
fn corrupted_images_are_replaced_and_valid_ones_kept() {
    let _serial = serial();
    let (outcome, bytes, _dir) = run("06-images");
    assert_eq!(outcome.removed_corrupted_image_blocks, 12);
    assert_eq!(
        outcome.messages,
        debug("session file repaired: removed 12 corrupted image block(s) (session.jsonl)")
    );
    let text = String::from_utf8(bytes).unwrap();
    // PNG and BMP (and JPEG, GIF, WebP, HEIC/HEIF, whitespace inside valid base64) survive.
    assert!(text.contains(r#"{"type":"image","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==","mimeType":"image/png"}"#));
    assert!(text.contains(r#""mimeType":"image/bmp"}"#));
    assert_eq!(
        text.matches(r#"{"type":"text","text":"[image omitted: corrupted base64 payload]"}"#)
            .count(),
        12
    );
    let (outcome, _, _dir) = run("07-valid-images");
    assert!(!outcome.repaired);
}

#[test]
fn blank_user_text_becomes_continue() {
    let _serial = serial();
    let (outcome, bytes, _dir) = run("08-blank-user");
    assert_eq!(outcome.rewritten_user_messages, 6);
    assert_eq!(outcome.dropped_blank_user_messages, 0);
    let text = String::from_utf8(bytes).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[1].contains(r#""content":"(continue)""#));
    // Blank text blocks removed, the image kept.
    assert!(lines[3].contains(r#""content":[{"type":"image","data":"#));
    assert!(!lines[3].contains(r#""type":"text""#));
    assert!(lines[4].contains(r#""content":[{"type":"text","text":"(continue)"}]"#));
    assert!(lines[5].contains(r#""content":[{"type":"text","text":"(continue)"}]"#));
    assert!(lines[6].contains(r#""content":[{"type":"text","text":"real"}]"#));
    assert!(lines[7].contains(r#""content":"(continue)""#));
    let (outcome, _, _dir) = run("09-blank-user-and-image");
    assert_eq!(
        (
            outcome.rewritten_user_messages,
            outcome.removed_corrupted_image_blocks
        ),
        (1, 2)
    );
    assert_eq!(
        outcome.messages,
        debug(
            "session file repaired: rewrote 1 user message(s), removed 2 corrupted image block(s) (session.jsonl)"
        )
    );
}

#[test]
fn drops_and_rewrites_are_both_reported() {
    let _serial = serial();
    let (outcome, _, _dir) = run("10-drops-and-rewrites");
    let expected = repaired(
        |e| {
            e.dropped_lines = 2;
            e.rewritten_assistant_messages = 1;
            e.rewritten_user_messages = 1;
            e.messages = debug(
                "session file repaired: dropped 2 malformed line(s), rewrote 1 assistant message(s), rewrote 1 user message(s) (session.jsonl)",
            );
        },
        &outcome,
    );
    assert_eq!(outcome, expected);
}

#[test]
fn missing_code_mode_tool_results_are_inserted_with_exact_fields() {
    let _serial = serial();
    let (outcome, bytes, _dir) = run("11-code-mode-tool-results");
    assert_eq!(outcome.inserted_tool_results, 3);
    let text = String::from_utf8(normalise_output(&bytes)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[3],
        r#"{"type":"message","id":"repair-<uuid>","parentId":"a1","timestamp":"<iso>","message":{"role":"toolResult","toolCallId":"call_3","toolName":"unknown","content":[{"type":"text","text":"aborted"}],"details":{"openclawSyntheticMissingToolResult":true},"isError":true,"timestamp":0}}"#
    );
    assert!(lines[4].contains(r#""toolCallId":"call_4","toolName":"fn""#));
    // An assistant row without an id gives a result without parentId.
    assert!(lines[8].starts_with(r#"{"type":"message","id":"repair-<uuid>","timestamp":"<iso>","#));
    // Fresh ids are distinct.
    let raw = String::from_utf8(bytes).unwrap();
    let ids: std::collections::HashSet<&str> = raw
        .match_indices("\"id\":\"repair-")
        .map(|(i, _)| &raw[i + 6..i + 6 + 43])
        .collect();
    assert_eq!(ids.len(), 3);
    let (outcome, _, _dir) = run("12-code-mode-complete");
    assert!(!outcome.repaired);
}

#[test]
fn missing_responses_message_results_are_inserted_before_delivery_mirrors() {
    let _serial = serial();
    let (outcome, bytes, _dir) = run("13-responses-delivery-mirror");
    assert_eq!(outcome.inserted_tool_results, 3);
    let text = String::from_utf8(normalise_output(&bytes)).unwrap();
    let inserted: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("repair-<uuid>"))
        .collect();
    assert_eq!(
        inserted,
        [
            r#"{"type":"message","id":"repair-<uuid>","parentId":"a1","timestamp":"<iso>","message":{"role":"toolResult","toolCallId":"fc_1","toolName":"Message","content":[{"type":"text","text":"aborted"}],"details":{"openclawSyntheticMissingToolResult":true},"isError":true,"timestamp":0}}"#,
            r#"{"type":"message","id":"repair-<uuid>","parentId":"a1","timestamp":"<iso>","message":{"role":"toolResult","toolCallId":"fc_3","toolName":" message ","content":[{"type":"text","text":"aborted"}],"details":{"openclawSyntheticMissingToolResult":true},"isError":true,"timestamp":0}}"#,
            r#"{"type":"message","id":"repair-<uuid>","parentId":"a2","timestamp":"<iso>","message":{"role":"toolResult","toolCallId":"fc_4","toolName":"message","content":[{"type":"text","text":"aborted"}],"details":{"openclawSyntheticMissingToolResult":true},"isError":true,"timestamp":0}}"#,
        ]
    );
}

#[test]
fn rows_and_turns_that_need_nothing_are_kept() {
    let _serial = serial();
    for stem in [
        "14-non-message-rows",
        "15-trailing-assistants",
        "16-assistant-only",
        "17-crlf",
        "30-blank-lines-no-repair",
        "32-no-final-newline",
        "34-user-edge",
    ] {
        let input = case_input(stem);
        let (outcome, bytes, dir) = run(stem);
        assert_eq!(outcome, clean(outcome.validated_snapshot));
        assert!(outcome.validated_snapshot.is_some(), "{stem}");
        assert_eq!(bytes, input, "{stem}");
        assert!(backups(dir.path()).is_empty(), "{stem}");
    }
}

fn clean(validated_snapshot: Option<RepairSnapshot>) -> RepairOutcome {
    RepairOutcome {
        validated_snapshot,
        ..RepairOutcome::default()
    }
}

#[test]
fn untouched_rows_keep_their_bytes_on_a_rewrite() {
    let _serial = serial();
    // CRLF: the malformed line goes, the CR of every kept row stays (the reference writes LF).
    let (_, bytes, _dir) = run("18-crlf-with-repair");
    let text = String::from_utf8(bytes).unwrap();
    assert_eq!(
        text,
        concat!(
            r#"{"type":"session","version":3,"id":"sess-1","timestamp":"2026-06-01T10:00:00.000Z","cwd":"/work/project"}"#,
            "\r\n",
            r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-06-01T10:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1780308001000}}"#,
            "\r\n",
            r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-06-01T10:00:01.000Z","message":{"role":"assistant","content":[{"type":"text","text":"[assistant turn failed before producing content]"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-x","usage":{"input":1,"output":1},"stopReason":"error","timestamp":1780308002000}}"#,
            "\n"
        )
    );
    // The rewritten row is serialised as JSON.stringify would (integer-like keys first, number
    // text, lone surrogate escaped, U+2028 raw); the untouched row keeps its spacing and `1.50`.
    let (_, bytes, _dir) = run("31-rewrite-serialisation");
    let text = String::from_utf8(bytes).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[1],
        "{\"type\":\"message\",\"id\":\"a1\",\"parentId\":null,\"message\":{\"1\":\"one\",\"2\":\"two\",\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"[assistant turn failed before producing content]\"}],\"stopReason\":\"error\",\"n\":1,\"e\":1e+21,\"s\":\"\\ud800 x\",\"u\":\"\u{2028}\"}}"
    );
    assert_eq!(
        lines[2],
        r#"{ "type": "message", "id": "u1", "parentId": "a1", "message": { "role": "user", "content": "kept verbatim", "n": 1.50 } }"#
    );
    // Invalid UTF-8 in an untouched row survives (the reference writes U+FFFD).
    let (_, bytes, _dir) = run("36-invalid-utf8");
    assert!(bytes.windows(4).any(|w| w == b"caf\xe9"));
}

#[test]
fn invalid_headers_warn_and_skip() {
    let _serial = serial();
    for (stem, dropped) in [
        ("19-invalid-header-message-first", 0),
        ("20-invalid-header-empty-id", 0),
        ("21-invalid-header-malformed-first", 2),
        ("22-bom-header", 1),
        ("23-header-id-number", 0),
        ("24-non-object-first", 0),
    ] {
        let dir = tempdir();
        let input = case_input(stem);
        let file = plant(dir.path(), &input, 0o600);
        let outcome = repair_session_file_if_needed(&file, None);
        assert_eq!(
            outcome,
            RepairOutcome {
                dropped_lines: dropped,
                reason: Some(RepairSkip::InvalidSessionHeader),
                messages: warn(
                    "session file repair skipped: invalid session header (session.jsonl)"
                ),
                ..RepairOutcome::default()
            },
            "{stem}"
        );
        assert_eq!(std::fs::read(&file).unwrap(), input);
        assert!(backups(dir.path()).is_empty());
    }
}

#[test]
fn empty_files_are_skipped() {
    let _serial = serial();
    for (stem, dropped) in [
        ("25-empty", 0),
        ("26-blank-only", 0),
        ("27-only-malformed", 2),
        ("28-only-invalid-messages", 2),
    ] {
        let (outcome, bytes, _dir) = run(stem);
        assert_eq!(
            outcome,
            RepairOutcome {
                dropped_lines: dropped,
                reason: Some(RepairSkip::EmptySessionFile),
                ..RepairOutcome::default()
            }
        );
        assert_eq!(bytes, case_input(stem));
    }
}

#[test]
fn paths_that_are_not_files() {
    let _serial = serial();
    let expected = golden("expected/paths.json");
    let reason = |key: &str| {
        field(&expected, &[key, "result", "reason"])
            .as_str_lossy()
            .unwrap()
            .into_owned()
    };
    let dir = tempdir();
    let blank = repair_session_file_if_needed(Path::new(" \t "), None);
    assert_eq!(blank.reason.unwrap().to_string(), reason("blank"));
    let missing = repair_session_file_if_needed(&dir.path().join("missing.jsonl"), None);
    assert_eq!(
        missing,
        RepairOutcome {
            reason: Some(RepairSkip::MissingSessionFile),
            ..RepairOutcome::default()
        }
    );
    assert_eq!(missing.reason.unwrap().to_string(), reason("missing"));
    // A legacy `sqlite:<agent>:<session>:<store>` marker is resolved as a relative path, as the
    // reference does: here nothing exists there (tests/repair_paths.rs repairs a file that does).
    let marker = format!("sqlite:main:abc:{}", dir.path().join("s.sqlite").display());
    let outcome = repair_session_file_if_needed(Path::new(&marker), None);
    assert_eq!(
        outcome,
        RepairOutcome {
            reason: Some(RepairSkip::MissingSessionFile),
            ..RepairOutcome::default()
        }
    );
    assert_eq!(
        outcome.to_reference_json(),
        *field(&expected, &["sqliteMarker", "result"])
    );
    // A directory: the reference's EISDIR text, warned once.
    let sub = dir.path().join("dir.jsonl");
    std::fs::create_dir(&sub).unwrap();
    let outcome = repair_session_file_if_needed(&sub, None);
    assert_eq!(
        outcome.reason.as_ref().unwrap().to_string(),
        reason("directory")
    );
    let text = field(&expected, &["directory", "messages"])
        .as_array()
        .unwrap()[0]
        .get("text")
        .unwrap()
        .as_str_lossy()
        .unwrap()
        .into_owned();
    assert_eq!(outcome.messages, warn(&text));
}

#[test]
fn the_backup_is_byte_identical_with_the_same_mode() {
    let _serial = serial();
    let dir = tempdir();
    let input = case_input("36-invalid-utf8");
    let file = plant(dir.path(), &input, 0o640);
    let outcome = repair_session_file_if_needed(&file, None);
    let bak = outcome.backup_path.clone().unwrap();
    let name = bak.file_name().unwrap().to_string_lossy().into_owned();
    let prefix = format!("session.jsonl.bak-{}-", std::process::id());
    assert!(name.starts_with(&prefix), "{name}");
    assert!(name[prefix.len()..].parse::<u64>().is_ok(), "{name}");
    assert_eq!(bak.parent(), file.parent());
    assert_eq!(std::fs::read(&bak).unwrap(), input);
    assert_eq!(mode_of(&bak), 0o640);
    assert_eq!(mode_of(&file), 0o640);
    // A second repair after another corruption writes a second, distinct backup.
    session_store::io::append_raw(&file, b"torn").unwrap();
    let again = repair_session_file_if_needed(&file, None);
    assert!(again.repaired);
    assert_eq!(backups(dir.path()).len(), 2);
    assert_ne!(again.backup_path, outcome.backup_path);
}

#[test]
fn keep_backup_false_deletes_it_after_a_verified_replace() {
    let _serial = serial();
    let dir = tempdir();
    let file = plant(dir.path(), &case_input("01-malformed-lines"), 0o600);
    let options = RepairOptions {
        keep_backup: false,
        ..RepairOptions::default()
    };
    let outcome = repair_session_file_with(&file, None, &options);
    assert!(outcome.repaired);
    assert_eq!(outcome.backup_path, None);
    assert!(outcome.validated_snapshot.is_some());
    assert!(backups(dir.path()).is_empty());
    let again = repair_session_file_with(&file, None, &options);
    assert!(!again.repaired);
    assert!(backups(dir.path()).is_empty());
}

#[test]
fn dry_run_reports_the_counts_and_writes_nothing() {
    let _serial = serial();
    let dry = RepairOptions {
        dry_run: true,
        ..RepairOptions::default()
    };
    // (case, dropped, rewritten assistants, rewritten users, removed images, inserted results)
    for (stem, counts) in [
        ("10-drops-and-rewrites", [2, 1, 1, 0, 0]),
        ("11-code-mode-tool-results", [0, 0, 0, 0, 3]),
        ("06-images", [0, 0, 0, 12, 0]),
    ] {
        let input = case_input(stem);
        let dir = tempdir();
        let file = plant(dir.path(), &input, 0o640);
        let names = dir_names(dir.path());
        assert_eq!(names, ["session.jsonl"]);
        let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();

        let outcome = repair_session_file_with(&file, None, &dry);
        assert_eq!(std::fs::read(&file).unwrap(), input, "{stem}: bytes");
        assert_eq!(dir_names(dir.path()), names, "{stem}: listing");
        assert_eq!(
            std::fs::metadata(&file).unwrap().modified().unwrap(),
            mtime,
            "{stem}: mtime"
        );
        assert_eq!(
            outcome,
            RepairOutcome {
                dropped_lines: counts[0],
                rewritten_assistant_messages: counts[1],
                rewritten_user_messages: counts[2],
                removed_corrupted_image_blocks: counts[3],
                inserted_tool_results: counts[4],
                ..RepairOutcome::default()
            },
            "{stem}"
        );
        assert!(outcome.needs_repair(), "{stem}");
        assert!(
            !is_repair_cached(&file),
            "{stem}: a file needing repair is not cached"
        );

        // The real run does what the dry run announced.
        let real = repair_session_file_if_needed(&file, None);
        assert!(real.repaired, "{stem}");
        assert_eq!(
            [
                real.dropped_lines,
                real.rewritten_assistant_messages,
                real.rewritten_user_messages,
                real.removed_corrupted_image_blocks,
                real.inserted_tool_results,
            ],
            counts,
            "{stem}"
        );
        // A clean file: the dry run reports nothing to do.
        let again = repair_session_file_with(&file, None, &dry);
        assert!(!again.needs_repair(), "{stem}");
        assert_eq!(again.reason, None);
    }
    // A file the repair skips keeps its reason in a dry run, and writes nothing either.
    let input = case_input("19-invalid-header-message-first");
    let dir = tempdir();
    let file = plant(dir.path(), &input, 0o600);
    let outcome = repair_session_file_with(&file, None, &dry);
    assert_eq!(outcome.reason, Some(RepairSkip::InvalidSessionHeader));
    assert!(!outcome.needs_repair());
    assert_eq!(std::fs::read(&file).unwrap(), input);
    assert_eq!(dir_names(dir.path()), ["session.jsonl"]);
}

#[test]
fn an_already_repaired_file_is_left_alone() {
    let _serial = serial();
    // The reference's own repaired output needs no repair from us either.
    let reference = std::fs::read(fixture("expected/10-drops-and-rewrites.out.jsonl")).unwrap();
    let dir = tempdir();
    let file = plant(dir.path(), &reference, 0o600);
    let outcome = repair_session_file_if_needed(&file, None);
    assert_eq!(outcome, clean(outcome.validated_snapshot));
    assert!(backups(dir.path()).is_empty());
}

#[test]
fn rows_nested_too_deep_to_parse_are_kept_verbatim() {
    let _serial = serial();
    let deep = format!(
        r#"{{"type":"custom","id":"d1","parentId":null,"data":{}1{}}}"#,
        "[".repeat(1500),
        "]".repeat(1500)
    );
    let deep_null_role = format!(
        r#"{{"type":"message","id":"d2","parentId":null,"message":{{"role":null,"x":{}1{}}}}}"#,
        "[".repeat(1500),
        "]".repeat(1500)
    );
    let text = format!(
        "{}\n{deep}\nnot json\n{deep_null_role}\n",
        r#"{"type":"session","version":3,"id":"s","cwd":"/w"}"#
    );
    let dir = tempdir();
    let file = plant(dir.path(), text.as_bytes(), 0o600);
    let outcome = repair_session_file_if_needed(&file, None);
    assert_eq!(outcome.dropped_lines, 2);
    assert_eq!(
        String::from_utf8(std::fs::read(&file).unwrap()).unwrap(),
        format!(
            "{}\n{deep}\n",
            r#"{"type":"session","version":3,"id":"s","cwd":"/w"}"#
        )
    );
}

#[test]
fn reference_json_shapes() {
    let _serial = serial();
    let skipped = RepairOutcome {
        dropped_lines: 2,
        reason: Some(RepairSkip::InvalidSessionHeader),
        ..RepairOutcome::default()
    };
    assert_eq!(
        to_json_string(&skipped.to_reference_json()),
        r#"{"repaired":false,"droppedLines":2,"reason":"invalid session header"}"#
    );
    let failed = RepairOutcome {
        dropped_lines: 1,
        reason: Some(RepairSkip::RepairFailed {
            message: "disk full".into(),
        }),
        ..RepairOutcome::default()
    };
    assert_eq!(
        to_json_string(&failed.to_reference_json()),
        r#"{"repaired":false,"droppedLines":1,"rewrittenAssistantMessages":0,"droppedBlankUserMessages":0,"rewrittenUserMessages":0,"removedCorruptedImageBlocks":0,"reason":"repair failed: disk full"}"#
    );
    let snapshot = RepairSnapshot {
        dev: 1,
        ino: 2,
        size: 3,
        mtime_ns: 4,
        ctime_ns: 5,
    };
    let done = RepairOutcome {
        repaired: true,
        validated_snapshot: Some(snapshot),
        inserted_tool_results: 1,
        backup_path: Some("/x/s.jsonl.bak-1-2".into()),
        ..RepairOutcome::default()
    };
    assert_eq!(
        to_json_string(&done.to_reference_json()),
        r#"{"repaired":true,"droppedLines":0,"validatedSnapshot":{"dev":"1","ino":"2","size":"3","mtimeNs":"4","ctimeNs":"5"},"rewrittenAssistantMessages":0,"droppedBlankUserMessages":0,"rewrittenUserMessages":0,"removedCorruptedImageBlocks":0,"insertedToolResults":1,"backupPath":"/x/s.jsonl.bak-1-2"}"#
    );
}
