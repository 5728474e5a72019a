//! Tool-call / result pairing repair against OpenClaw 2026.6.11's `repairToolUseResultPairing`
//! (`fixtures/reference/pairing-cases.json` → `expected/pairing.json`): missing results get a
//! synthetic error result, orphans and repeats are dropped, displaced results are moved up,
//! errored and aborted turns get no synthetic results (or are dropped with the `drop` policy).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::common;

use agent_session::pairing::{
    ErroredAssistantPolicy, MISSING_TOOL_RESULT_TEXT, PairingOptions,
    repair_tool_use_result_pairing,
};
use common::{fixture_json, fixture_text, obj, s};
use session_format::json::JsValue;

#[test]
fn every_case_matches_the_reference() {
    let start = session_format::ids::now_ms() as f64;
    let doc = fixture_json("pairing-cases.json");
    let mut records = Vec::new();
    for case in doc.get("cases").unwrap().as_array().unwrap() {
        let messages = case.get("messages").unwrap().as_array().unwrap();
        let run = |policy| {
            let r = repair_tool_use_result_pairing(
                messages,
                &PairingOptions {
                    errored_assistant: policy,
                    missing_tool_result_text: None,
                    now_ms: Some(start),
                },
            );
            obj(vec![
                ("messages", JsValue::Array(r.messages)),
                ("added", JsValue::Number(r.added as f64)),
                (
                    "droppedDuplicateCount",
                    JsValue::Number(r.dropped_duplicates as f64),
                ),
                (
                    "droppedOrphanCount",
                    JsValue::Number(r.dropped_orphans as f64),
                ),
                ("moved", JsValue::Bool(r.changed)),
            ])
        };
        records.push(obj(vec![
            ("name", case.get("name").unwrap().clone()),
            ("default", run(ErroredAssistantPolicy::Keep)),
            ("drop", run(ErroredAssistantPolicy::Drop)),
        ]));
    }
    let ours =
        session_format::normalize::normalize_output(&JsValue::Array(records), None, start).unwrap();
    pretty_assertions::assert_eq!(ours, fixture_text("expected/pairing.json"));
}

#[test]
fn a_missing_result_is_synthesised_with_the_reference_text() {
    let msgs = vec![
        common::json(r#"{"role":"user","content":"q"}"#),
        common::json(
            r#"{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{}}],"stopReason":"toolUse"}"#,
        ),
    ];
    let r = repair_tool_use_result_pairing(
        &msgs,
        &PairingOptions {
            now_ms: Some(5.0),
            ..PairingOptions::default()
        },
    );
    assert_eq!(r.added, 1);
    let expected = obj(vec![
        ("role", s("toolResult")),
        ("toolCallId", s("c1")),
        ("toolName", s("bash")),
        (
            "content",
            JsValue::Array(vec![obj(vec![
                ("type", s("text")),
                ("text", s(MISSING_TOOL_RESULT_TEXT)),
            ])]),
        ),
        (
            "details",
            obj(vec![(
                "openclawSyntheticMissingToolResult",
                JsValue::Bool(true),
            )]),
        ),
        ("isError", JsValue::Bool(true)),
        ("timestamp", JsValue::Number(5.0)),
    ]);
    assert_eq!(r.messages[2], expected);
}
