//! Assistant turns that ended with `stopReason` `aborted` or `error` are left out of what a
//! model is sent by default, as pi-ai's `transformMessages` skips them: the turn goes, its
//! calls go with it (no synthetic result is made for them, as pi-ai makes none) and so do its
//! real results, which would name a call the payload no longer holds. Calls of kept turns that
//! have no result still get OpenClaw's synthetic error result. The reference's keep policy
//! stays available. The file is never touched.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::common;

use agent_session::pairing::{
    ErroredAssistantPolicy, MISSING_TOOL_RESULT_TEXT, PairingOptions,
    repair_tool_use_result_pairing,
};
use agent_session::payload::{PayloadOptions, session_payload};
use agent_session::{AgentSession, AgentSessionOptions, ProviderApi};
use session_format::json::{JsValue, parse_value, to_json_string};
use session_semantics::policy::HistoryLimits;
use session_store::SessionManager;

const NOW: f64 = 1_767_225_600_000.0;

/// A `message` row; an empty `parent` is `null`.
fn message(id: &str, parent: &str, body: &str) -> String {
    common::message_line(id, (!parent.is_empty()).then_some(parent), body)
}

const U1: &str = r#"{"role":"user","content":"go","timestamp":1}"#;
const A1: &str = r#"{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a"}}],"provider":"p","model":"m","stopReason":"toolUse","timestamp":2}"#;
const T1: &str = r#"{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"A"}],"isError":false,"timestamp":3}"#;
const A2_ABORTED: &str = r#"{"role":"assistant","content":[{"type":"thinking","thinking":"half"},{"type":"toolCall","id":"c2","name":"bash","arguments":{}},{"type":"toolCall","id":"c3","name":"read","arguments":{}}],"provider":"p","model":"m","stopReason":"aborted","timestamp":4}"#;
const T2: &str = r#"{"role":"toolResult","toolCallId":"c2","toolName":"bash","content":[{"type":"text","text":"ran"}],"isError":false,"timestamp":5}"#;
const U2: &str = r#"{"role":"user","content":"again","timestamp":6}"#;
const A3_ERROR: &str = r#"{"role":"assistant","content":[{"type":"text","text":"partial"}],"provider":"p","model":"m","stopReason":"error","errorMessage":"overloaded","timestamp":7}"#;
const U3: &str = r#"{"role":"user","content":"retry","timestamp":8}"#;
const A4: &str = r#"{"role":"assistant","content":[{"type":"toolCall","id":"c4","name":"read","arguments":{}}],"provider":"p","model":"m","stopReason":"toolUse","timestamp":9}"#;
const U4: &str = r#"{"role":"user","content":"end","timestamp":10}"#;

/// `c4`'s synthetic result: OpenClaw's text, marked synthetic, at [`NOW`].
fn synthetic_c4() -> String {
    format!(
        r#"{{"role":"toolResult","toolCallId":"c4","toolName":"read","content":[{{"type":"text","text":"{MISSING_TOOL_RESULT_TEXT}"}}],"details":{{"openclawSyntheticMissingToolResult":true}},"isError":true,"timestamp":1767225600000}}"#
    )
}

fn write_session(dir: &std::path::Path) -> std::path::PathBuf {
    let lines = [
        message("u1", "", U1),
        message("a1", "u1", A1),
        message("t1", "a1", T1),
        message("a2", "t1", A2_ABORTED),
        message("t2", "a2", T2),
        message("u2", "t2", U2),
        message("a3", "u2", A3_ERROR),
        message("u3", "a3", U3),
        message("a4", "u3", A4),
        message("u4", "a4", U4),
    ];
    common::write_session(dir, &lines)
}

fn texts(messages: &[JsValue]) -> Vec<String> {
    messages.iter().map(to_json_string).collect()
}

fn dropped() -> Vec<String> {
    [U1, A1, T1, U2, U3, A4]
        .iter()
        .map(|s| (*s).to_owned())
        .chain([synthetic_c4(), U4.to_owned()])
        .collect()
}

fn kept() -> Vec<String> {
    [U1, A1, T1, A2_ABORTED, T2, U2, A3_ERROR, U3, A4]
        .iter()
        .map(|s| (*s).to_owned())
        .chain([synthetic_c4(), U4.to_owned()])
        .collect()
}

fn agent(file: &std::path::Path) -> AgentSession {
    let sm = SessionManager::open(file, None, None).unwrap();
    let mut agent = AgentSession::new(sm, AgentSessionOptions::default()).unwrap();
    agent.pairing_options_mut().now_ms = Some(NOW);
    agent
}

#[test]
fn aborted_and_errored_turns_are_dropped_by_default_with_their_results() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_session(dir.path());
    let before = std::fs::read(&file).unwrap();
    let agent = agent(&file);
    let limits = HistoryLimits::default();
    let ctx = agent.model_context(&limits).unwrap();
    pretty_assertions::assert_eq!(texts(&ctx.messages), dropped());
    assert_eq!(
        (
            ctx.pairing.added,
            ctx.pairing.dropped_orphans,
            ctx.pairing.changed
        ),
        (1, 0, true)
    );
    for api in [
        ProviderApi::AnthropicMessages,
        ProviderApi::OpenAiChat,
        ProviderApi::OpenAiResponses,
    ] {
        let p = agent.provider_payload(api, &limits).unwrap();
        pretty_assertions::assert_eq!(texts(&p.messages), dropped());
    }
    // The module-level builder has the same default.
    let mut options = PayloadOptions::new(ProviderApi::AnthropicMessages);
    options.pairing.now_ms = Some(NOW);
    let p = session_payload(agent.session_manager(), &options).unwrap();
    pretty_assertions::assert_eq!(texts(&p.messages), dropped());
    assert_eq!(std::fs::read(&file).unwrap(), before);
    assert_eq!(agent.session_manager().entry_count(), 10);
}

#[test]
fn the_keep_policy_keeps_the_turns_and_their_real_results_without_synthesising() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_session(dir.path());
    let mut agent = agent(&file);
    agent.pairing_options_mut().errored_assistant = ErroredAssistantPolicy::Keep;
    let limits = HistoryLimits::default();
    let ctx = agent.model_context(&limits).unwrap();
    // The aborted turn keeps c2's real result; c3 gets nothing; c4 (a normal turn) gets the
    // synthetic result.
    pretty_assertions::assert_eq!(texts(&ctx.messages), kept());
    let p = agent
        .provider_payload(ProviderApi::AnthropicMessages, &limits)
        .unwrap();
    pretty_assertions::assert_eq!(texts(&p.messages), kept());
}

#[test]
fn the_reference_drop_policy_keeps_errored_messages_without_calls() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_session(dir.path());
    let mut agent = agent(&file);
    agent.pairing_options_mut().errored_assistant = ErroredAssistantPolicy::Drop;
    let ctx = agent.model_context(&HistoryLimits::default()).unwrap();
    let expected: Vec<String> = [U1, A1, T1, U2, A3_ERROR, U3, A4]
        .iter()
        .map(|s| (*s).to_owned())
        .chain([synthetic_c4(), U4.to_owned()])
        .collect();
    pretty_assertions::assert_eq!(texts(&ctx.messages), expected);
}

#[test]
fn the_default_policy_is_skip_and_pairing_alone_follows_it() {
    assert_eq!(
        ErroredAssistantPolicy::default(),
        ErroredAssistantPolicy::Skip
    );
    let parse = |s: &str| parse_value(s.as_bytes()).unwrap();
    let messages: Vec<JsValue> = [U1, A1, T1, A2_ABORTED, T2, U2]
        .iter()
        .map(|s| parse(s))
        .collect();
    let r = repair_tool_use_result_pairing(
        &messages,
        &PairingOptions {
            now_ms: Some(NOW),
            ..PairingOptions::default()
        },
    );
    assert_eq!(texts(&r.messages), [U1, A1, T1, U2]);
    assert_eq!((r.added, r.dropped_orphans, r.changed), (0, 0, true));
    // A result of the dropped turn found after a later turn is an orphan there and dropped.
    let late: Vec<JsValue> = [U1, A2_ABORTED, U2, A1, T1, T2]
        .iter()
        .map(|s| parse(s))
        .collect();
    let r = repair_tool_use_result_pairing(
        &late,
        &PairingOptions {
            now_ms: Some(NOW),
            ..PairingOptions::default()
        },
    );
    assert_eq!(texts(&r.messages), [U1, U2, A1, T1]);
    assert_eq!((r.added, r.dropped_orphans), (0, 1));
}
