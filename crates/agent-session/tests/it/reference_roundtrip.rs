//! Live round trip through the installed reference: a session written by AgentSession (tool
//! calls, a model change, a truncate and a summary compaction) is opened by OpenClaw 2026.6.11's
//! `SessionManager` (`fixtures/reference/capture.mjs --read FILE`), whose entries and
//! `buildSessionContext()` must equal ours exactly. Skips, saying why, when node 24 or the
//! reference is not installed (`xtask/conformance/install.sh openclaw`); the offline check of the
//! same property is `tests/it/compaction.rs` against the `c55` golden.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::common;

use std::process::Command;
use std::sync::Arc;

use agent_session::tools::{Tool, ToolError, ToolOutput};
use agent_session::{
    AgentSession, AgentSessionOptions, CompactionStrategy, DeterministicSummarizer,
};
use common::{fixture, json};
use session_format::json::{JsValue, parse_value, to_json_string};
use session_store::SessionManager;

#[derive(Debug)]
struct Upper;

impl Tool for Upper {
    fn name(&self) -> &str {
        "upper"
    }
    fn description(&self) -> &str {
        "Upper-case a text"
    }
    fn parameters(&self) -> JsValue {
        json(r#"{"type":"object","properties":{"text":{"type":"string"}}}"#)
    }
    fn execute(&self, _id: &str, args: &JsValue) -> Result<ToolOutput, ToolError> {
        let t = args
            .get("text")
            .and_then(JsValue::as_str_lossy)
            .ok_or_else(|| ToolError::new("text missing"))?;
        Ok(ToolOutput::text(t.to_uppercase()))
    }
}

#[test]
fn the_reference_reads_our_compacted_session() {
    let Some(node) = common::reference_node() else {
        session_test_support::skip(
            "the_reference_reads_our_compacted_session",
            "the reference is not installed under target/conformance-ref/openclaw (run xtask/conformance/install.sh openclaw)",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let sm = SessionManager::create("/home/dev/project", Some(dir.path())).unwrap();
    let mut agent = AgentSession::new(
        sm,
        AgentSessionOptions {
            base_tools: vec![Arc::new(Upper)],
            ..AgentSessionOptions::default()
        },
    )
    .unwrap();
    agent.set_model("anthropic", "claude-sonnet-4-5").unwrap();
    for i in 0..4 {
        agent
            .append_message(json(&format!(
                r#"{{"role":"user","content":"turn {i}: shout ünïcödé 😀","timestamp":{i}}}"#
            )))
            .unwrap();
        let call = json(&format!(
            r#"{{"type":"toolCall","id":"call_{i}","name":"upper","arguments":{{"text":"turn {i}","path":"f{i}.txt"}}}}"#
        ));
        agent
            .append_message(json(&format!(
                r#"{{"role":"assistant","content":[{},{{"type":"toolCall","id":"call_r{i}","name":"read","arguments":{{"path":"r{i}.md"}}}}],"provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"toolUse","timestamp":{i}}}"#,
                to_json_string(&call)
            )))
            .unwrap();
        agent.execute_tool_call(&call).unwrap();
        agent
            .execute_tool_call(&json(&format!(
                r#"{{"type":"toolCall","id":"call_r{i}","name":"read","arguments":{{"path":"r{i}.md"}}}}"#
            )))
            .unwrap();
        agent
            .append_message(json(&format!(
                r#"{{"role":"assistant","content":[{{"type":"text","text":"done {i}"}}],"provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"stop","timestamp":{i}}}"#
            )))
            .unwrap();
        if i == 1 {
            agent
                .compact(CompactionStrategy::Truncate { keep_last: 3 })
                .unwrap();
        }
    }
    agent.set_keep_recent_tokens(30);
    agent
        .compact(CompactionStrategy::Summary(Box::new(
            DeterministicSummarizer,
        )))
        .unwrap();
    let file = agent
        .session_manager()
        .get_session_file()
        .unwrap()
        .to_path_buf();
    let out = Command::new(node)
        .arg(fixture("capture.mjs"))
        .arg("--read")
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "reference failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs = parse_value(&out.stdout).unwrap();
    let sm = agent.session_manager();
    let our_context = sm.build_session_context().unwrap().to_value().unwrap();
    assert_eq!(
        to_json_string(theirs.get("context").unwrap()),
        to_json_string(&our_context)
    );
    let their_ids: Vec<JsValue> = theirs
        .get("entries")
        .and_then(JsValue::as_array)
        .unwrap()
        .iter()
        .map(|e| e.get("id").cloned().unwrap())
        .collect();
    let our_ids: Vec<JsValue> = sm.get_entries().map(|e| JsValue::from(e.id())).collect();
    assert_eq!(their_ids, our_ids);
    let roles: Vec<String> = our_context
        .get("messages")
        .and_then(JsValue::as_array)
        .unwrap()
        .iter()
        .map(|m| common::str_field(m, "role").unwrap())
        .collect();
    assert_eq!(roles.first().map(String::as_str), Some("compactionSummary"));
    assert!(roles.len() < 10, "{roles:?}");
}
