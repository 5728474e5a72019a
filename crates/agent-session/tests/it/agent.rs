//! AgentSession: model state read from the context and changed only when it changes, tool
//! calls run and recorded, and what the model is sent (conversion, pairing repair without
//! touching the file, history limits per chat type without splitting a tool call from its
//! result).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::common;

use std::sync::Arc;

use agent_session::history::{apply_history_limits, history_start, limits_for};
use agent_session::tools::{Tool, ToolError, ToolOutput};
use agent_session::{AgentSession, AgentSessionOptions, RefreshOptions};
use common::{json, obj, s};
use session_format::json::{JsValue, to_json_string};
use session_semantics::kind::ChatType;
use session_semantics::policy::{Config, HistoryLimits};
use session_store::SessionManager;

#[derive(Debug)]
struct Echo;

impl Tool for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn description(&self) -> &str {
        "Echo the text argument"
    }
    fn parameters(&self) -> JsValue {
        json(r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#)
    }
    fn prompt_snippet(&self) -> Option<String> {
        Some("Echo text back".to_owned())
    }
    fn execute(&self, _id: &str, args: &JsValue) -> Result<ToolOutput, ToolError> {
        match args.get("text").and_then(JsValue::as_str_lossy) {
            Some(t) => Ok(ToolOutput {
                content: vec![obj(vec![("type", s("text")), ("text", s(&t))])],
                details: obj(vec![("length", JsValue::Number(t.len() as f64))]),
            }),
            None => Err(ToolError::new("text is required")),
        }
    }
}

fn line(id: &str, parent: Option<&str>, body: &str) -> String {
    common::message_line(id, parent, body)
}

fn roles(messages: &[JsValue]) -> Vec<String> {
    messages
        .iter()
        .map(|m| common::str_field(m, "role").unwrap_or_default())
        .collect()
}

#[test]
fn model_state_comes_from_the_context_and_changes_append_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = common::write_session(
        dir.path(),
        &[
            r#"{"type":"model_change","id":"mc","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","provider":"openai","modelId":"gpt"}"#.to_owned(),
            r#"{"type":"thinking_level_change","id":"tl","parentId":"mc","timestamp":"2026-01-01T00:00:01.000Z","thinkingLevel":"high"}"#.to_owned(),
            line("u1", Some("tl"), r#"{"role":"user","content":"hi"}"#),
            line(
                "a1",
                Some("u1"),
                r#"{"role":"assistant","content":[{"type":"text","text":"yo"}],"provider":"anthropic","model":"claude","stopReason":"stop"}"#,
            ),
        ],
    );
    let sm = SessionManager::open(&file, None, None).unwrap();
    let mut agent = AgentSession::new(sm, AgentSessionOptions::default()).unwrap();
    // The assistant message after the model_change decides the model.
    let m = agent.model().unwrap();
    assert_eq!(
        (m.provider.as_str(), m.model_id.as_str()),
        ("anthropic", "claude")
    );
    assert_eq!(agent.thinking_level(), "high");
    let before = std::fs::read(&file).unwrap();
    // Resuming with the same model and level appends nothing (the reference appended a
    // model_change on every resume).
    assert!(!agent.set_model("anthropic", "claude").unwrap());
    assert!(!agent.set_thinking_level("high").unwrap());
    assert_eq!(std::fs::read(&file).unwrap(), before);
    assert!(agent.set_model("openai", "gpt").unwrap());
    assert!(agent.set_thinking_level("off").unwrap());
    assert!(!agent.set_model("openai", "gpt").unwrap());
    let text = String::from_utf8(std::fs::read(&file).unwrap()).unwrap();
    let tail: Vec<JsValue> = text.lines().skip(5).map(json).collect();
    assert_eq!(tail.len(), 2);
    assert_eq!(tail[0].get("type"), Some(&s("model_change")));
    assert_eq!(tail[0].get("modelId"), Some(&s("gpt")));
    assert_eq!(tail[1].get("thinkingLevel"), Some(&s("off")));
    // A fresh runtime over the reopened file sees the same state.
    let sm = SessionManager::open(&file, None, None).unwrap();
    let agent = AgentSession::new(sm, AgentSessionOptions::default()).unwrap();
    assert_eq!(agent.model().unwrap().model_id, "gpt");
    assert_eq!(agent.thinking_level(), "off");
}

/// The model after each appended message is what a fresh runtime over the reopened file reads:
/// an assistant message with `provider`/`model` sets it, one without them clears it (as the
/// context's model then has no strings), a user message leaves it.
#[test]
fn appended_messages_move_the_model_as_the_context_does() {
    let dir = tempfile::tempdir().unwrap();
    let file = common::write_session(
        dir.path(),
        &[
            r#"{"type":"model_change","id":"mc","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","provider":"openai","modelId":"gpt"}"#.to_owned(),
            line("u1", Some("mc"), r#"{"role":"user","content":"hi"}"#),
        ],
    );
    let sm = SessionManager::open(&file, None, None).unwrap();
    let mut agent = AgentSession::new(sm, AgentSessionOptions::default()).unwrap();
    let fresh = |file: &std::path::Path| {
        let sm = SessionManager::open(file, None, None).unwrap();
        let agent = AgentSession::new(sm, AgentSessionOptions::default()).unwrap();
        agent
            .model()
            .map(|m| (m.provider.clone(), m.model_id.clone()))
    };
    let now = |agent: &AgentSession| {
        agent
            .model()
            .map(|m| (m.provider.clone(), m.model_id.clone()))
    };
    let gpt = Some(("openai".to_owned(), "gpt".to_owned()));
    let claude = Some(("anthropic".to_owned(), "claude".to_owned()));
    assert_eq!(now(&agent), gpt);
    agent
        .append_message(json(r#"{"role":"assistant","content":[{"type":"text","text":"a"}],"provider":"anthropic","model":"claude","stopReason":"stop"}"#))
        .unwrap();
    assert_eq!(now(&agent), claude);
    assert_eq!(fresh(&file), claude);
    agent
        .append_message(json(r#"{"role":"user","content":"again"}"#))
        .unwrap();
    assert_eq!(now(&agent), claude);
    assert_eq!(fresh(&file), claude);
    agent
        .append_message(json(
            r#"{"role":"assistant","content":[{"type":"text","text":"b"}],"stopReason":"stop"}"#,
        ))
        .unwrap();
    assert_eq!(now(&agent), None);
    assert_eq!(fresh(&file), None);
}

#[test]
fn tool_calls_are_run_and_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let sm = SessionManager::create("/p", Some(dir.path())).unwrap();
    let mut agent = AgentSession::new(
        sm,
        AgentSessionOptions {
            base_tools: vec![Arc::new(Echo)],
            ..AgentSessionOptions::default()
        },
    )
    .unwrap();
    assert_eq!(agent.get_active_tool_names(), ["echo"]);
    assert!(agent.system_prompt().contains("- echo: Echo text back"));
    agent
        .append_message(json(r#"{"role":"user","content":"say hi"}"#))
        .unwrap();
    agent
        .append_message(json(
            r#"{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"echo","arguments":{"text":"hi"}},{"type":"toolCall","id":"c2","name":"echo","arguments":{}},{"type":"toolCall","id":"c3","name":"nope","arguments":{}}],"provider":"p","model":"m","stopReason":"toolUse"}"#,
        ))
        .unwrap();
    let calls = [
        json(r#"{"type":"toolCall","id":"c1","name":"echo","arguments":{"text":"hi"}}"#),
        json(r#"{"type":"toolCall","id":"c2","name":"echo","arguments":{}}"#),
        json(r#"{"type":"toolCall","id":"c3","name":"nope","arguments":{}}"#),
    ];
    for c in &calls {
        agent.execute_tool_call(c).unwrap();
    }
    let results: Vec<JsValue> = agent.context_messages().unwrap()[2..]
        .iter()
        .map(|m| {
            let mut m = m.clone();
            m.as_object_mut()
                .unwrap()
                .insert("timestamp", JsValue::Number(0.0));
            m
        })
        .collect();
    let texts: Vec<String> = results.iter().map(to_json_string).collect();
    assert_eq!(
        texts,
        [
            r#"{"role":"toolResult","toolCallId":"c1","toolName":"echo","content":[{"type":"text","text":"hi"}],"details":{"length":2},"isError":false,"timestamp":0}"#,
            r#"{"role":"toolResult","toolCallId":"c2","toolName":"echo","content":[{"type":"text","text":"text is required"}],"details":{},"isError":true,"timestamp":0}"#,
            r#"{"role":"toolResult","toolCallId":"c3","toolName":"nope","content":[{"type":"text","text":"Tool nope not found"}],"details":{},"isError":true,"timestamp":0}"#,
        ]
    );
    // An inactive tool is not run.
    agent.refresh_tool_registry(&RefreshOptions {
        active_tool_names: Some(Vec::new()),
        include_all_extension_tools: false,
    });
    let id = agent.execute_tool_call(&calls[0]).unwrap();
    let v = agent
        .session_manager()
        .get_entry(&id)
        .unwrap()
        .value()
        .unwrap();
    assert_eq!(
        v.get("message").and_then(|m| m.get("isError")),
        Some(&JsValue::Bool(true))
    );
    let bad = agent.execute_tool_call(&json(r#"{"type":"toolCall","name":"echo"}"#));
    assert_eq!(
        bad.unwrap_err().to_string(),
        r#"tool call has no id: {"type":"toolCall","name":"echo"}"#
    );
}

#[test]
fn pairing_is_repaired_for_the_model_without_touching_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = common::write_session(
        dir.path(),
        &[
            line("u1", None, r#"{"role":"user","content":"go"}"#),
            line(
                "a1",
                Some("u1"),
                r#"{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{}},{"type":"toolCall","id":"c2","name":"read","arguments":{}}],"stopReason":"toolUse"}"#,
            ),
            line(
                "t2",
                Some("a1"),
                r#"{"role":"toolResult","toolCallId":"c2","toolName":"read","content":[{"type":"text","text":"x"}],"isError":false}"#,
            ),
            line(
                "t9",
                Some("t2"),
                r#"{"role":"toolResult","toolCallId":"zz","toolName":"read","content":[],"isError":false}"#,
            ),
            line(
                "a2",
                Some("t9"),
                r#"{"role":"assistant","content":[{"type":"toolCall","id":"c3","name":"bash","arguments":{}}],"stopReason":"aborted"}"#,
            ),
            line("u2", Some("a2"), r#"{"role":"user","content":"again"}"#),
        ],
    );
    let before = std::fs::read(&file).unwrap();
    let sm = SessionManager::open(&file, None, None).unwrap();
    let agent = AgentSession::new(sm, AgentSessionOptions::default()).unwrap();
    let ctx = agent.model_context(&HistoryLimits::default()).unwrap();
    assert_eq!(
        roles(&ctx.messages),
        ["user", "assistant", "toolResult", "toolResult", "user"]
    );
    // c1 got a synthetic error result in call order, c2's real result follows, the orphan
    // is dropped, the aborted turn is left out (the default, as pi-ai's transformMessages).
    assert_eq!(ctx.messages[2].get("toolCallId"), Some(&s("c1")));
    assert_eq!(ctx.messages[2].get("isError"), Some(&JsValue::Bool(true)));
    assert_eq!(ctx.messages[3].get("toolCallId"), Some(&s("c2")));
    assert_eq!((ctx.pairing.added, ctx.pairing.dropped_orphans), (1, 1));
    assert_eq!(std::fs::read(&file).unwrap(), before);
    assert_eq!(agent.session_manager().entry_count(), 6);
}

fn conversation() -> Vec<JsValue> {
    let u = |t: &str| json(&format!(r#"{{"role":"user","content":"{t}"}}"#));
    let call = |id: &str| {
        json(&format!(
            r#"{{"role":"assistant","content":[{{"type":"toolCall","id":"{id}","name":"bash","arguments":{{}}}}],"stopReason":"toolUse"}}"#
        ))
    };
    let res = |id: &str| {
        json(&format!(
            r#"{{"role":"toolResult","toolCallId":"{id}","toolName":"bash","content":[{{"type":"text","text":"ok"}}],"isError":false}}"#
        ))
    };
    let text = |t: &str| {
        json(&format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":"{t}"}}],"stopReason":"stop"}}"#
        ))
    };
    vec![
        u("first question"),                         // 0
        call("c1"),                                  // 1
        res("c1"),                                   // 2
        text("first answer"),                        // 3
        u("second question about something longer"), // 4
        call("c2"),                                  // 5
        res("c2"),                                   // 6
        res("c2b"),                                  // 7
        text("second answer"),                       // 8
    ]
}

#[test]
fn history_limits_never_start_on_a_tool_result() {
    let msgs = conversation();
    let limit = |m: Option<u32>, t: Option<u64>| HistoryLimits {
        max_messages: m,
        max_tokens: t,
    };
    assert_eq!(history_start(&msgs, &HistoryLimits::default()), 0);
    // 3 messages would start at 6 (a tool result): 6 and 7 are dropped too.
    assert_eq!(history_start(&msgs, &limit(Some(3), None)), 8);
    assert_eq!(history_start(&msgs, &limit(Some(4), None)), 5);
    assert_eq!(history_start(&msgs, &limit(Some(5), None)), 4);
    // 1 token keeps only the newest message.
    assert_eq!(history_start(&msgs, &limit(None, Some(1))), 8);
    // When only tool results would remain, the start moves back to their call.
    let tail = &msgs[..8];
    assert_eq!(history_start(tail, &limit(Some(1), None)), 5);
    assert_eq!(
        apply_history_limits(msgs.clone(), &limit(Some(4), None)).len(),
        4
    );
}

#[test]
fn per_chat_type_limits_apply_to_the_model_context() {
    let cfg = Config::from_json(
        r#"{"sessions":{"maxHistoryMessages":50,"channelOverrides":{"group":{"maxHistoryMessages":4},"dm":{"maxHistoryTokens":12}}}}"#,
    )
    .unwrap()
    .sessions;
    let dir = tempfile::tempdir().unwrap();
    let sm = SessionManager::create("/p", Some(dir.path())).unwrap();
    let mut agent = AgentSession::new(sm, AgentSessionOptions::default()).unwrap();
    for m in conversation() {
        agent.append_message(m).unwrap();
    }
    // The pairing repair runs first and drops the orphan result c2b: 8 messages remain.
    let group = agent
        .model_context(&limits_for(&cfg, ChatType::Group))
        .unwrap();
    assert_eq!(group.pairing.dropped_orphans, 1);
    assert_eq!(
        roles(&group.messages),
        ["user", "assistant", "toolResult", "assistant"]
    );
    assert_eq!(group.dropped_by_limits, 4);
    let dm = agent
        .model_context(&limits_for(&cfg, ChatType::Direct))
        .unwrap();
    // 12 tokens: "second answer" (4) + the result "ok" (1) + the call (bash{} = 6 chars, 2)
    // = 7; adding the second question (10) would exceed.
    assert_eq!(
        roles(&dm.messages),
        ["assistant", "toolResult", "assistant"]
    );
    assert_eq!(dm.dropped_by_limits, 5);
    let other = agent
        .model_context(&limits_for(&cfg, ChatType::Unknown))
        .unwrap();
    assert_eq!(other.messages.len(), 8);
    assert_eq!(other.dropped_by_limits, 0);
    // The file keeps everything.
    assert_eq!(agent.session_manager().entry_count(), 9);
}

/// Replaces a row's own `"timestamp":"<ISO>"` (the first one; a message's timestamp is a
/// number) with `"timestamp":"T"`.
fn without_row_timestamp(row: &str) -> String {
    let key = r#""timestamp":""#;
    let start = row.find(key).unwrap() + key.len();
    let end = start + row[start..].find('"').unwrap();
    format!("{}T{}", &row[..start], &row[end..])
}

#[test]
fn append_message_takes_any_payload_like_the_manager() {
    use session_format::message::Message;
    use session_store::AppendError;

    let dir = tempfile::tempdir().unwrap();
    let sm = SessionManager::create("/p", Some(dir.path())).unwrap();
    let mut agent = AgentSession::new(sm, AgentSessionOptions::default()).unwrap();
    // A typed message, then a JsValue (an assistant message, which also sets the model).
    let u = agent
        .append_message(Message::user_text("hello", 1_767_225_600_000))
        .unwrap();
    let a = agent
        .append_message(json(
            r#"{"role":"assistant","content":[{"type":"text","text":"hi"}],"provider":"p","model":"m","stopReason":"stop","timestamp":1767225601000}"#,
        ))
        .unwrap();
    assert_eq!(agent.model().unwrap().model_id, "m");
    // A null payload is refused and nothing is written.
    let file = agent
        .session_manager()
        .get_session_file()
        .unwrap()
        .to_owned();
    let before = std::fs::read(&file).unwrap();
    let err = agent.append_message(JsValue::Null).unwrap_err();
    assert!(matches!(
        err,
        agent_session::AgentSessionError::Append(AppendError::NullMessage)
    ));
    assert_eq!(std::fs::read(&file).unwrap(), before);
    let text = String::from_utf8(before).unwrap();
    let rows: Vec<String> = text.lines().skip(1).map(without_row_timestamp).collect();
    assert_eq!(
        rows,
        [
            format!(
                r#"{{"type":"message","id":"{u}","parentId":null,"timestamp":"T","message":{{"role":"user","content":[{{"type":"text","text":"hello"}}],"timestamp":1767225600000}}}}"#
            ),
            format!(
                r#"{{"type":"message","id":"{a}","parentId":"{u}","timestamp":"T","message":{{"role":"assistant","content":[{{"type":"text","text":"hi"}}],"provider":"p","model":"m","stopReason":"stop","timestamp":1767225601000}}}}"#
            ),
        ]
    );
    assert!(text.ends_with('\n'));
}
