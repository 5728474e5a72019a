//! The incremental repair path and its process-wide cache (openclaw-jsonl.md §1.8 "Incremental
//! mode", §7.5), against the reference's behaviour captured in
//! `tests/fixtures/repair/expected/incremental.json` by `capture.mjs`: which calls parse only
//! the appended lines, which fall back to a full pass, what is cached.
//!
//! The cache is process-wide (at most 8 files), so the tests of this file and of
//! `repair.rs` run one at a time (`repair_common::serial`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::Path;

use crate::repair_common::{golden, normalise_output, normalised_result, serial, tempdir};
use session_format::json::{JsValue, to_json_string};
use session_store::test_util::repair_probes::{is_repair_cached, parsed_lines_on_this_thread};
use session_store::{
    RepairOutcome, RepairSnapshot, invalidate_repair_cache, repair_session_file_if_needed,
};

const HEADER: &str = "{\"type\":\"session\",\"version\":3,\"id\":\"inc\",\"timestamp\":\"2026-06-01T10:00:00.000Z\",\"cwd\":\"/w\"}\n";

fn user(id: &str, parent: Option<&str>, text: &str) -> String {
    let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
    format!(
        "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"2026-06-01T10:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\",\"timestamp\":1}}}}\n"
    )
}

fn tool_results(n: usize, id_len: usize) -> String {
    (0..n)
        .map(|i| {
            let id = format!("call_{i:0>width$}", width = id_len.saturating_sub(5));
            format!(
                "{{\"type\":\"message\",\"id\":\"t{i}\",\"parentId\":null,\"message\":{{\"role\":\"toolResult\",\"toolCallId\":\"{id}\",\"toolName\":\"x\",\"content\":[],\"isError\":false}}}}\n"
            )
        })
        .collect()
}

fn plant(dir: &Path, text: &str) -> std::path::PathBuf {
    let file = dir.join("session.jsonl");
    session_store::io::write_raw(&file, text.as_bytes()).unwrap();
    file
}

fn append(file: &Path, text: &str) {
    session_store::io::append_raw(file, text.as_bytes()).unwrap();
}

fn stat(file: &Path) -> RepairSnapshot {
    RepairSnapshot::of(file).unwrap()
}

/// (outcome, lines parsed)
fn repair(file: &Path, trusted: Option<RepairSnapshot>) -> (RepairOutcome, u64) {
    let before = parsed_lines_on_this_thread();
    let outcome = repair_session_file_if_needed(file, trusted.as_ref());
    (outcome, parsed_lines_on_this_thread() - before)
}

/// Compares a call with the reference's record `{result, messages, parseCount}`.
fn assert_like(reference: &JsValue, outcome: &RepairOutcome, parses: u64, file: &Path) {
    assert_eq!(
        normalised_result(outcome, file),
        to_json_string(reference.get("result").unwrap())
    );
    assert_eq!(
        parses,
        reference.get("parseCount").unwrap().as_f64().unwrap() as u64
    );
}

fn scenario(name: &str) -> JsValue {
    golden("expected/incremental.json")
        .get(name)
        .unwrap()
        .clone()
}

#[test]
fn a_trusted_append_parses_only_the_appended_line() {
    let _serial = serial();
    let expected = scenario("appendedLine");
    let dir = tempdir();
    let file = plant(dir.path(), &format!("{HEADER}{}", user("u1", None, "one")));
    let (full, parses) = repair(&file, None);
    assert_like(expected.get("full").unwrap(), &full, parses, &file);
    assert_eq!(parses, 2);
    append(&file, &user("u2", Some("u1"), "two"));
    let (incremental, parses) = repair(&file, Some(stat(&file)));
    assert_like(
        expected.get("incremental").unwrap(),
        &incremental,
        parses,
        &file,
    );
    assert_eq!(parses, 1);
    assert_eq!(incremental.validated_snapshot, Some(stat(&file)));
    // Unchanged since: answered from the cache, nothing parsed, trusted snapshot or not.
    let (unchanged, parses) = repair(&file, None);
    assert_like(
        expected.get("unchanged").unwrap(),
        &unchanged,
        parses,
        &file,
    );
    assert_eq!(parses, 0);
    invalidate_repair_cache(&file);
}

#[test]
fn a_trusted_append_that_needs_a_rewrite_falls_back_to_a_full_repair() {
    let _serial = serial();
    let expected = scenario("appendNeedsRewrite");
    let dir = tempdir();
    let file = plant(dir.path(), &format!("{HEADER}{}", user("u1", None, "one")));
    repair(&file, None);
    append(&file, &user("u2", Some("u1"), "   "));
    let (outcome, parses) = repair(&file, Some(stat(&file)));
    assert_like(&expected, &outcome, parses, &file);
    assert_eq!(parses, 1 + 3);
    assert!(outcome.repaired && outcome.rewritten_user_messages == 1);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        expected.get("output").unwrap().as_str_lossy().unwrap()
    );
    invalidate_repair_cache(&file);
}

#[test]
fn a_stale_trusted_snapshot_is_rejected() {
    let _serial = serial();
    let expected = scenario("staleTrusted");
    let dir = tempdir();
    let file = plant(dir.path(), &format!("{HEADER}{}", user("u1", None, "one")));
    repair(&file, None);
    let stale = stat(&file);
    // The prefix is replaced (new inode) by one holding an invalid row, then a line is appended.
    let bad = user("u1", None, "one").replace("\"role\":\"user\"", "\"role\":null");
    session_store::io::write_raw(&file, format!("{HEADER}{bad}").as_bytes()).unwrap();
    append(&file, &user("u2", Some("u1"), "two"));
    let (outcome, parses) = repair(&file, Some(stale));
    assert_like(&expected, &outcome, parses, &file);
    assert_eq!(outcome.dropped_lines, 1);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        expected.get("output").unwrap().as_str_lossy().unwrap()
    );
    invalidate_repair_cache(&file);
}

#[test]
fn untrusted_appends_and_missing_newlines_take_a_full_pass() {
    let _serial = serial();
    let dir = tempdir();
    // No trusted snapshot.
    let file = plant(dir.path(), &format!("{HEADER}{}", user("u1", None, "one")));
    repair(&file, None);
    append(&file, &user("u2", Some("u1"), "two"));
    let (outcome, parses) = repair(&file, None);
    assert_like(&scenario("untrustedAppend"), &outcome, parses, &file);
    invalidate_repair_cache(&file);
    // The appended suffix does not end in "\n".
    let file = plant(dir.path(), &format!("{HEADER}{}", user("u1", None, "one")));
    repair(&file, None);
    append(&file, user("u2", Some("u1"), "two").trim_end());
    let (outcome, parses) = repair(&file, Some(stat(&file)));
    assert_like(&scenario("suffixWithoutNewline"), &outcome, parses, &file);
    invalidate_repair_cache(&file);
    // The cached prefix did not end in "\n".
    let file = plant(
        dir.path(),
        &format!("{HEADER}{}", user("u1", None, "one").trim_end()),
    );
    let (full, parses) = repair(&file, None);
    let expected = scenario("prefixWithoutNewline");
    assert_like(expected.get("full").unwrap(), &full, parses, &file);
    append(&file, &format!("\n{}", user("u2", Some("u1"), "two")));
    let (next, parses) = repair(&file, Some(stat(&file)));
    assert_like(expected.get("next").unwrap(), &next, parses, &file);
    invalidate_repair_cache(&file);
}

#[test]
fn tool_result_id_sets_over_4096_are_not_cached() {
    let _serial = serial();
    let dir = tempdir();
    let expected = scenario("manyToolResults");
    let file = plant(dir.path(), &format!("{HEADER}{}", tool_results(4097, 9)));
    let (full, parses) = repair(&file, None);
    assert_like(expected.get("full").unwrap(), &full, parses, &file);
    assert!(!is_repair_cached(&file));
    append(&file, &user("u2", None, "two"));
    let (next, parses) = repair(&file, Some(stat(&file)));
    assert_like(expected.get("next").unwrap(), &next, parses, &file);
    assert_eq!(parses, 4099);

    let expected = scenario("exactly4096ToolResults");
    let file = plant(dir.path(), &format!("{HEADER}{}", tool_results(4096, 9)));
    let (full, parses) = repair(&file, None);
    assert_like(expected.get("full").unwrap(), &full, parses, &file);
    assert!(is_repair_cached(&file));
    append(&file, &user("u2", None, "two"));
    let (next, parses) = repair(&file, Some(stat(&file)));
    assert_like(expected.get("next").unwrap(), &next, parses, &file);
    assert_eq!(parses, 1);
    invalidate_repair_cache(&file);

    // Over 512 KiB of ids (100 ids of 6,000 bytes) is not cached either.
    let file = plant(dir.path(), &format!("{HEADER}{}", tool_results(100, 6000)));
    repair(&file, None);
    assert!(!is_repair_cached(&file));
    let file = plant(dir.path(), &format!("{HEADER}{}", tool_results(80, 6000)));
    repair(&file, None);
    assert!(is_repair_cached(&file));
    invalidate_repair_cache(&file);
}

#[test]
fn the_cache_holds_eight_files_and_forgets_on_invalidate() {
    let _serial = serial();
    let dir = tempdir();
    let files: Vec<_> = (0..9)
        .map(|i| {
            let sub = dir.path().join(format!("s{i}"));
            std::fs::create_dir(&sub).unwrap();
            let file = plant(&sub, &format!("{HEADER}{}", user("u1", None, "one")));
            repair(&file, None);
            file
        })
        .collect();
    assert!(!is_repair_cached(&files[0]));
    assert!(files[1..].iter().all(|f| is_repair_cached(f)));
    // `path.resolve` keys: a spelling with `..` and spaces names the same entry.
    let odd = format!(
        "  {}/../s8/session.jsonl ",
        files[8].parent().unwrap().display()
    );
    invalidate_repair_cache(Path::new(&odd));
    assert!(!is_repair_cached(&files[8]));
    let (_, parses) = repair(&files[8], None);
    assert_eq!(parses, 2);
    for f in &files {
        invalidate_repair_cache(f);
    }
    assert!(files.iter().all(|f| !is_repair_cached(f)));
}

#[test]
fn a_delivery_mirror_appended_after_a_responses_tail_falls_back_to_a_full_repair() {
    let _serial = serial();
    let expected = scenario("responsesMirrorAcrossAppend");
    let dir = tempdir();
    let a1 = r#"{"type":"message","id":"a1","parentId":null,"message":{"role":"assistant","content":[{"type":"toolCall","id":"fc_1","name":"message"}],"api":"openai-responses","provider":"openai","model":"m","stopReason":"toolUse"}}"#;
    let m1 = r#"{"type":"message","id":"m1","parentId":"a1","message":{"role":"assistant","content":[{"type":"text","text":"sent"}],"api":"openai-responses","provider":"openclaw","model":"delivery-mirror","stopReason":"stop"}}"#;
    let file = plant(dir.path(), &format!("{HEADER}{a1}\n"));
    let (full, parses) = repair(&file, None);
    assert_like(expected.get("full").unwrap(), &full, parses, &file);
    append(&file, &format!("{m1}\n"));
    // The reference parses the suffix alone and misses the result the mirror calls for (its
    // `incremental` record: not repaired); a fresh full pass inserts it (`fresh`). We fall back to
    // that full pass at once (D16).
    let reference_incremental = expected.get("incremental").unwrap();
    assert_eq!(
        to_json_string(reference_incremental.get("result").unwrap()),
        r#"{"repaired":false,"droppedLines":0,"validatedSnapshot":"<stat>"}"#
    );
    let (outcome, parses) = repair(&file, Some(stat(&file)));
    assert_eq!(parses, 1 + 3, "the suffix, then the full pass");
    assert_eq!(
        normalised_result(&outcome, &file),
        to_json_string(expected.get("fresh").unwrap().get("result").unwrap())
    );
    assert_eq!(
        String::from_utf8(normalise_output(&std::fs::read(&file).unwrap())).unwrap(),
        expected.get("output").unwrap().as_str_lossy().unwrap()
    );
    invalidate_repair_cache(&file);

    // Without the mirror (a user turn follows), the suffix alone is enough.
    let file = plant(dir.path(), &format!("{HEADER}{a1}\n"));
    repair(&file, None);
    append(&file, &user("u2", Some("a1"), "next"));
    let (outcome, parses) = repair(&file, Some(stat(&file)));
    assert!(!outcome.repaired);
    assert_eq!(parses, 1);
    invalidate_repair_cache(&file);
}

#[test]
fn a_verified_repair_is_cached_and_its_tool_result_ids_answer_the_suffix() {
    let _serial = serial();
    let dir = tempdir();
    let code_mode = |id: &str, call: &str| {
        format!(
            "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":null,\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"toolCall\",\"id\":\"{call}\",\"name\":\"exec\"}}],\"api\":\"openai-chatgpt-responses\",\"provider\":\"openai\",\"stopReason\":\"toolUse\"}}}}\n"
        )
    };
    let file = plant(
        dir.path(),
        &format!(
            "{HEADER}garbage\n{}{}",
            code_mode("a1", "call_1"),
            tool_results(1, 6)
        ),
    );
    let (outcome, _) = repair(&file, None);
    assert!(outcome.repaired);
    assert_eq!(outcome.validated_snapshot, Some(stat(&file)));
    // A later turn repeating the answered call id needs nothing: the cached ids know it.
    append(&file, &code_mode("a2", "call_0"));
    let (next, parses) = repair(&file, Some(stat(&file)));
    assert!(!next.repaired);
    assert_eq!(parses, 1);
    // An unanswered call in the suffix falls back to a full pass that inserts its result.
    append(&file, &code_mode("a3", "call_9"));
    let (next, parses) = repair(&file, Some(stat(&file)));
    assert!(next.repaired);
    assert_eq!(next.inserted_tool_results, 1);
    assert_eq!(parses, 1 + 6);
    invalidate_repair_cache(&file);
}
