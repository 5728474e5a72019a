//! New rows serialise exactly as the reference writes them: built from the op arguments of the
//! shared conformance scripts they reproduce the reference's lines byte for byte (after the
//! OPS.md normalization), typed entries agree with the builders, and every kind's JSONL text is
//! pinned by a snapshot (pi-format.md §1.5–§1.7).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::support;

use std::collections::HashMap;

use pretty_assertions::assert_eq;
use session_format::build::{self, RowBase};
use session_format::json::{JsValue, parse_value, to_json_string};
use session_format::{Entry, SessionHeader};

fn s(v: &JsValue, k: &str) -> Option<String> {
    v.get(k)
        .and_then(JsValue::as_str_lossy)
        .map(|c| c.into_owned())
}

/// Resolves `$name` the way the op runner does (unbound names stay literal).
fn arg(op: &JsValue, k: &str, bind: &HashMap<String, String>) -> Option<String> {
    s(op, k).map(|v| match v.strip_prefix('$') {
        Some(name) => bind.get(name).cloned().unwrap_or(v),
        None => v,
    })
}

/// Builds the row an append op writes, with the id, parent and timestamp taken from the
/// reference's (normalized) line.
fn row_for(op: &JsValue, line: &JsValue, bind: &HashMap<String, String>) -> Option<JsValue> {
    let b = RowBase {
        id: s(line, "id").unwrap(),
        parent_id: s(line, "parentId"),
        timestamp: s(line, "timestamp").unwrap(),
    };
    let get = |k: &str| op.get(k).cloned();
    let fkind = |k: &str| {
        op.get(k).and_then(|v| match v {
            JsValue::Bool(b) => Some(*b),
            _ => None,
        })
    };
    Some(match s(op, "op")?.as_str() {
        "appendMessage" => build::message(&b, get("message")?),
        "appendThinkingLevelChange" => build::thinking_level_change(&b, &s(op, "thinkingLevel")?),
        "appendModelChange" => build::model_change(&b, &s(op, "provider")?, &s(op, "modelId")?),
        "appendCompaction" => build::compaction(
            &b,
            &s(op, "summary")?,
            &arg(op, "firstKeptEntryId", bind)?,
            op.get("tokensBefore")?.as_f64()?,
            get("details"),
            fkind("fromHook"),
        ),
        "branchWithSummary" => {
            let from = arg(op, "id", bind).unwrap_or_else(|| "root".to_owned());
            build::branch_summary(
                &b,
                &from,
                &s(op, "summary")?,
                get("details"),
                fkind("fromHook"),
            )
        }
        "appendCustomEntry" => build::custom(&b, &s(op, "customType")?, get("data")),
        "appendCustomMessageEntry" => build::custom_message(
            &b,
            &s(op, "customType")?,
            get("content")?,
            fkind("display")?,
            get("details"),
        ),
        "appendLabelChange" => {
            build::label(&b, &arg(op, "targetId", bind)?, s(op, "label").as_deref())
        }
        "appendSessionInfo" => build::session_info(&b, s(op, "name")?.trim()),
        _ => return None,
    })
}

const WRITES: &[&str] = &[
    "appendMessage",
    "appendThinkingLevelChange",
    "appendModelChange",
    "appendCompaction",
    "branchWithSummary",
    "appendCustomEntry",
    "appendCustomMessageEntry",
    "appendLabelChange",
    "appendSessionInfo",
    "appendRaw",
];

#[test]
fn rows_built_from_op_arguments_match_the_reference_lines() {
    let Some(dir) = support::shared_dir("rows_built_from_op_arguments_match_the_reference_lines")
    else {
        return;
    };
    let mut compared = 0;
    let scripts = dir.join("conformance/scripts");
    let mut names: Vec<_> = std::fs::read_dir(&scripts)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    for path in names {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        // The script is read with JavaScript semantics, as node's JSON.parse reads it.
        let script = parse_value(&std::fs::read(&path).unwrap()).unwrap();
        let expected = parse_value(&support::read_shared(
            &dir,
            &format!("conformance/expected/openclaw-2026.6.11/{name}"),
        ))
        .unwrap();
        let ops = script.get("ops").unwrap().as_array().unwrap();
        // Walk to the last snapshot before the manager re-reads or switches files.
        let mut pending: Vec<&JsValue> = Vec::new();
        let mut result_index = 0;
        let mut last: Option<(Vec<&JsValue>, String)> = None;
        for op in ops {
            let kind = s(op, "op").unwrap();
            if matches!(
                kind.as_str(),
                "reopen" | "createBranchedSession" | "forkFrom"
            ) {
                break;
            }
            if matches!(kind.as_str(), "create" | "open" | "newSession") {
                pending.clear();
            }
            let failed = op.get("expectError").is_some_and(JsValue::is_truthy);
            if WRITES.contains(&kind.as_str()) && !failed {
                pending.push(op);
            }
            if kind == "snapshot" || failed {
                let item = &expected.as_array().unwrap()[result_index];
                result_index += 1;
                if let Some(JsValue::String(file)) =
                    item.get("snapshot").and_then(|s| s.get("file"))
                {
                    last = Some((pending.clone(), file.to_str_lossy().into_owned()));
                }
            }
        }
        let (ops, file) = last.unwrap();
        let lines: Vec<&str> = file.trim_end_matches('\n').split('\n').collect();
        let lines = &lines[lines.len() - ops.len()..];
        let mut bind = HashMap::new();
        for (op, line) in ops.iter().zip(lines) {
            if s(op, "op").as_deref() == Some("appendRaw") {
                continue;
            }
            let parsed = parse_value(line.as_bytes()).unwrap();
            if let Some(name) = s(op, "as") {
                bind.insert(name, s(&parsed, "id").unwrap());
            }
            let row = row_for(op, &parsed, &bind).unwrap();
            assert_eq!(
                &to_json_string(&row),
                line,
                "{name}: {}",
                s(op, "op").unwrap()
            );
            compared += 1;
        }
    }
    assert_eq!(compared, 43);
}

fn base() -> RowBase {
    RowBase {
        id: "a1b2c3d4".into(),
        parent_id: Some("0f0f0f0f".into()),
        timestamp: "2026-01-02T03:04:05.678Z".into(),
    }
}

fn assistant() -> JsValue {
    parse_value(
        br#"{"role":"assistant","content":[{"type":"thinking","thinking":"hm","thinkingSignature":"sig"},{"type":"text","text":"Done \u2028 \u00e9"},{"type":"toolCall","id":"call_1","name":"edit","arguments":{"path":"a.rs","10":1,"2":"x"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":1200,"output":45,"cacheRead":0,"cacheWrite":0,"totalTokens":1245,"cost":{"input":0.0036,"output":2.1000000000000002e-05,"cacheRead":0,"cacheWrite":0,"total":0.003621}},"stopReason":"toolUse","timestamp":1767225600001,"responseId":"resp_1"}"#,
    )
    .unwrap()
}

/// Every kind's line, built and typed: the snapshot pins the bytes and the typed entry, read back
/// from the line, serialises to the same bytes.
#[test]
fn every_entry_kind_serialises_as_the_reference_writes_it() {
    let b = base();
    let rows: Vec<(&str, JsValue)> = vec![
        ("header", build::header(3, "0195f000-0000-7000-8000-000000000001", &b.timestamp, "/home/dev/project", None)),
        (
            "header_forked",
            build::header(3, "0195f000-0000-7000-8000-000000000002", &b.timestamp, "/home/dev/project", Some("/s/old.jsonl")),
        ),
        ("message_user", build::message(&b, parse_value(br#"{"role":"user","content":[{"type":"text","text":"Hi \u0001 \"q\" \\ /"}],"timestamp":1767225600000}"#).unwrap())),
        ("message_assistant", build::message(&b, assistant())),
        (
            "message_tool_result",
            build::message(&b, parse_value(br#"{"role":"toolResult","toolCallId":"call_1","toolName":"edit","content":[{"type":"text","text":"ok"}],"details":{"diff":"-a\n+b"},"isError":false,"timestamp":1767225600002}"#).unwrap()),
        ),
        (
            "message_bash_execution",
            build::message(&b, parse_value(br#"{"role":"bashExecution","command":"ls","output":"","cancelled":false,"truncated":false,"timestamp":1767225600003}"#).unwrap()),
        ),
        ("thinking_level_change", build::thinking_level_change(&b, "high")),
        ("model_change", build::model_change(&b, "openai", "gpt-5")),
        (
            "compaction",
            build::compaction(&b, "sum", "0f0f0f0f", 1234.0, Some(parse_value(br#"{"readFiles":["b","a"],"modifiedFiles":[]}"#).unwrap()), Some(false)),
        ),
        ("compaction_minimal", build::compaction(&b, "sum", "0f0f0f0f", 1e21, None, None)),
        ("branch_summary", build::branch_summary(&b, "0f0f0f0f", "explored", None, Some(true))),
        ("custom", build::custom(&b, "ext", Some(parse_value(br#"{"b":1,"10":2}"#).unwrap()))),
        ("custom_no_data", build::custom(&b, "ext", None)),
        ("custom_message", build::custom_message(&b, "memory", JsValue::from("remember"), false, Some(parse_value(br#"{"k":0.000009}"#).unwrap()))),
        ("label", build::label(&b, "0f0f0f0f", Some("start"))),
        ("label_cleared", build::label(&b, "0f0f0f0f", None)),
        ("label_empty", build::label(&b, "0f0f0f0f", Some(""))),
        ("session_info", build::session_info(&b, "first\nsecond")),
        ("reset", build::reset(&b, "daily", Some("0f0f0f0f"))),
        ("leaf_control", build::leaf_control(&b, Some("0f0f0f0f"), Some(Some("bbbb0001")), true)),
        ("leaf_control_null", build::leaf_control(&b, None, None, false)),
    ];
    let mut all = String::new();
    for (name, row) in &rows {
        let line = to_json_string(row);
        // Typed round trip: the typed entry serialises to the same bytes.
        let typed = if *name == "header" || *name == "header_forked" {
            let h: SessionHeader = session_format::json::from_value(row).unwrap();
            h.to_json_line().unwrap()
        } else {
            Entry::from_value(row)
                .unwrap_or_else(|e| panic!("{name}: {e}"))
                .to_json_line()
                .unwrap()
        };
        assert_eq!(typed, line, "{name}");
        all.push_str(&format!("{name}\n{line}\n"));
    }
    insta::assert_snapshot!(all);
}

/// Built rows keep lone surrogates (written back as the same escape); typed access reads them as
/// U+FFFD.
#[test]
fn lone_surrogates_survive_building_but_read_lossily_when_typed() {
    let msg = parse_value(br#"{"role":"user","content":"a\ud800b","timestamp":1}"#).unwrap();
    let row = build::message(&base(), msg);
    let line = to_json_string(&row);
    assert!(line.contains(r#""content":"a\ud800b""#), "{line}");
    let Entry::Message(m) = Entry::from_value(&row).unwrap() else {
        panic!()
    };
    let session_format::Message::User(u) = m.message else {
        panic!()
    };
    assert_eq!(
        u.content,
        session_format::Content::Text("a\u{FFFD}b".into())
    );
}

/// The message constructors write the reference's key order: an assistant turn with a tool call
/// (`stopReason: "toolUse"`), one without (`"stop"`), and a text tool result.
#[test]
fn message_constructors_write_the_reference_key_order() {
    use session_format::json::to_value;
    use session_format::message::{ContentBlock, Message};
    let args = parse_value(br#"{"path":"a.txt"}"#).unwrap();
    let call = Message::assistant(
        vec![
            ContentBlock::text("reading"),
            ContentBlock::tool_call("call_1", "read", args),
        ],
        "anthropic",
        "claude-sonnet-4-5",
        1_767_225_600_000,
    );
    assert_eq!(
        to_json_string(&to_value(&call).unwrap()),
        r#"{"role":"assistant","content":[{"type":"text","text":"reading"},{"type":"toolCall","id":"call_1","name":"read","arguments":{"path":"a.txt"}}],"provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"toolUse","timestamp":1767225600000}"#
    );
    let done = Message::assistant(vec![ContentBlock::text("done")], "openai", "gpt-5", 1);
    assert_eq!(
        to_json_string(&to_value(&done).unwrap()),
        r#"{"role":"assistant","content":[{"type":"text","text":"done"}],"provider":"openai","model":"gpt-5","stopReason":"stop","timestamp":1}"#
    );
    let result = Message::tool_result_text("call_1", "read", "hello", false, 2);
    assert_eq!(
        to_json_string(&to_value(&result).unwrap()),
        r#"{"role":"toolResult","toolCallId":"call_1","toolName":"read","content":[{"type":"text","text":"hello"}],"isError":false,"timestamp":2}"#
    );
}
