//! Provider payloads are valid Unicode: a lone surrogate escape read from the transcript
//! (`\ud800`–`\udfff` without its partner) becomes U+FFFD in every kind of field (user text,
//! thinking, assistant text, tool-call names, argument keys and values, tool results, custom
//! messages, branch summaries) with a warning naming the file line, the entry and the path; a
//! valid pair stays the character; tool-call ids are normalised instead of decoded; the file
//! is never touched. Also: the compaction's tool-result cut falls between characters.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::common;

use agent_session::compaction::serialize_conversation;
use agent_session::payload::{PayloadOptions, build_payload, session_payload, sourced_messages};
use agent_session::{AgentSession, AgentSessionOptions, PayloadWarning, ProviderApi};
use session_format::json::{JsValue, parse_value, to_json_string};
use session_semantics::policy::HistoryLimits;
use session_store::SessionManager;

fn message(id: &str, parent: Option<&str>, body: &str) -> String {
    common::message_line(id, parent, body)
}

/// The transcript: one lone surrogate (or a reversed pair) in each kind of field, and valid
/// pairs beside them. Line numbers: header 1, then 2…8.
fn transcript() -> Vec<String> {
    vec![
        // line 2: a lone high surrogate in string content
        message(
            "u1",
            None,
            r#"{"role":"user","content":"lone high \ud800 end","timestamp":1}"#,
        ),
        // line 3: thinking (lone low), text (reversed pair, then a valid pair), a tool call
        // whose id, name, argument key and argument value hold lone surrogates
        message(
            "a1",
            Some("u1"),
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"think \udc00"},{"type":"text","text":"reversed \udc00\ud800 pair, valid \ud83d\ude00"},{"type":"toolCall","id":"call_\ud800","name":"re\udbffad","arguments":{"pa\udc01th":"f\ud801.txt","ok":"\ud83d\ude00"}}],"provider":"p","model":"m","stopReason":"toolUse","timestamp":2}"#,
        ),
        // line 4: the tool result (its id, name and text)
        message(
            "t1",
            Some("a1"),
            r#"{"role":"toolResult","toolCallId":"call_\ud800","toolName":"re\udbffad","content":[{"type":"text","text":"result \ud83d"}],"isError":false,"timestamp":3}"#,
        ),
        // line 5: a custom message
        r#"{"type":"custom_message","id":"c1","parentId":"t1","timestamp":"2026-01-01T00:00:05.000Z","customType":"note","content":"custom \udfff","display":true}"#.to_owned(),
        // line 6: a lone low surrogate first in a text block
        message(
            "u2",
            Some("c1"),
            r#"{"role":"user","content":[{"type":"text","text":"\udc00 first"}],"timestamp":6}"#,
        ),
        // line 7: a branch summary
        r#"{"type":"branch_summary","id":"b1","parentId":"u2","timestamp":"2026-01-01T00:00:07.000Z","fromId":"u1","summary":"branch \ud800"}"#.to_owned(),
        // line 8: clean
        message(
            "a2",
            Some("b1"),
            r#"{"role":"assistant","content":[{"type":"text","text":"done \ud83d\ude00"}],"provider":"p","model":"m","stopReason":"stop","timestamp":8}"#,
        ),
    ]
}

/// The id `call_\ud800` becomes for every API: `call_` + `_` (the lone surrogate) + `_` + the
/// first 16 hex digits of SHA-256(`call_` ED A0 80 NUL), computed outside this workspace.
const NEW_ID: &str = "call___d4cd375b01d0b83a";

fn expected_messages() -> Vec<String> {
    vec![
        "{\"role\":\"user\",\"content\":\"lone high \u{fffd} end\",\"timestamp\":1}".to_owned(),
        format!(
            "{{\"role\":\"assistant\",\"content\":[{{\"type\":\"thinking\",\"thinking\":\"think \u{fffd}\"}},{{\"type\":\"text\",\"text\":\"reversed \u{fffd}\u{fffd} pair, valid \u{1f600}\"}},{{\"type\":\"toolCall\",\"id\":\"{NEW_ID}\",\"name\":\"re\u{fffd}ad\",\"arguments\":{{\"pa\u{fffd}th\":\"f\u{fffd}.txt\",\"ok\":\"\u{1f600}\"}}}}],\"provider\":\"p\",\"model\":\"m\",\"stopReason\":\"toolUse\",\"timestamp\":2}}"
        ),
        format!(
            "{{\"role\":\"toolResult\",\"toolCallId\":\"{NEW_ID}\",\"toolName\":\"re\u{fffd}ad\",\"content\":[{{\"type\":\"text\",\"text\":\"result \u{fffd}\"}}],\"isError\":false,\"timestamp\":3}}"
        ),
        "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"custom \u{fffd}\"}],\"timestamp\":1767225605000}".to_owned(),
        "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"\u{fffd} first\"}],\"timestamp\":6}".to_owned(),
        "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"The following is a summary of a branch that this conversation came back from:\\n\\n<summary>\\nbranch \u{fffd}</summary>\"}],\"timestamp\":1767225607000}".to_owned(),
        "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"done \u{1f600}\"}],\"provider\":\"p\",\"model\":\"m\",\"stopReason\":\"stop\",\"timestamp\":8}".to_owned(),
    ]
}

fn lone(line: usize, entry: &str, path: &str, key: bool, units: &[u16]) -> PayloadWarning {
    PayloadWarning::LoneSurrogate {
        line: Some(line),
        entry_id: Some(entry.to_owned()),
        path: path.to_owned(),
        key,
        units: units.to_vec(),
    }
}

fn expected_warnings() -> Vec<PayloadWarning> {
    vec![
        lone(2, "u1", "message.content", false, &[0xd800]),
        lone(3, "a1", "message.content[0].thinking", false, &[0xdc00]),
        lone(3, "a1", "message.content[1].text", false, &[0xdc00, 0xd800]),
        lone(3, "a1", "message.content[2].id", false, &[0xd800]),
        lone(3, "a1", "message.content[2].name", false, &[0xdbff]),
        lone(
            3,
            "a1",
            r#"message.content[2].arguments["pa\udc01th"]"#,
            true,
            &[0xdc01],
        ),
        lone(
            3,
            "a1",
            r#"message.content[2].arguments["pa\udc01th"]"#,
            false,
            &[0xd801],
        ),
        lone(4, "t1", "message.toolCallId", false, &[0xd800]),
        lone(4, "t1", "message.toolName", false, &[0xdbff]),
        lone(4, "t1", "message.content[0].text", false, &[0xd83d]),
        lone(5, "c1", "content", false, &[0xdfff]),
        lone(6, "u2", "message.content[0].text", false, &[0xdc00]),
        lone(7, "b1", "summary", false, &[0xd800]),
    ]
}

fn texts(messages: &[JsValue]) -> Vec<String> {
    messages.iter().map(to_json_string).collect()
}

/// No `\ud800`–`\udfff` escape anywhere in the JSON text.
fn assert_no_surrogate_escape(json: &str) {
    let escape = regex::Regex::new(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}").unwrap();
    assert_eq!(escape.find(json).map(|m| m.as_str().to_owned()), None);
}

#[test]
fn lone_surrogates_become_replacement_characters_with_warnings_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = common::write_session(dir.path(), &transcript());
    let before = std::fs::read(&file).unwrap();
    let sm = SessionManager::open(&file, None, None).unwrap();
    for api in [
        ProviderApi::AnthropicMessages,
        ProviderApi::OpenAiChat,
        ProviderApi::OpenAiResponses,
    ] {
        let payload = session_payload(&sm, &PayloadOptions::new(api)).unwrap();
        pretty_assertions::assert_eq!(texts(&payload.messages), expected_messages());
        pretty_assertions::assert_eq!(payload.warnings, expected_warnings());
        let json = to_json_string(&JsValue::Array(payload.messages.clone()));
        assert_no_surrogate_escape(&json);
        // Valid UTF-8 that parses back to the same messages.
        assert_eq!(
            parse_value(json.as_bytes()).unwrap(),
            JsValue::Array(payload.messages)
        );
        assert_eq!(payload.tool_call_ids.len(), 1);
        assert_eq!(payload.tool_call_ids[0].line, Some(3));
        assert_eq!(payload.tool_call_ids[0].block, 2);
        assert_eq!(payload.tool_call_ids[0].new, NEW_ID);
    }
    // The transcript still holds the escapes, byte for byte.
    assert_eq!(std::fs::read(&file).unwrap(), before);
    let raw = String::from_utf8(before).unwrap();
    assert!(raw.contains(r#""text":"reversed \udc00\ud800 pair, valid \ud83d\ude00""#));
}

#[test]
fn the_warning_text_names_the_units_the_path_and_the_line() {
    let w = lone(
        3,
        "a1",
        r#"message.content[2].arguments["pa\udc01th"]"#,
        true,
        &[0xdc01],
    );
    assert_eq!(
        w.to_string(),
        r#"lone surrogate \udc01 in key message.content[2].arguments["pa\udc01th"] at line 3 (entry a1)"#
    );
}

#[test]
fn agent_session_payload_scrubs_messages_and_keeps_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = common::write_session(dir.path(), &transcript());
    let before = std::fs::read(&file).unwrap();
    let sm = SessionManager::open(&file, None, None).unwrap();
    let agent = AgentSession::new(sm, AgentSessionOptions::default()).unwrap();
    let payload = agent
        .provider_payload(ProviderApi::AnthropicMessages, &HistoryLimits::default())
        .unwrap();
    pretty_assertions::assert_eq!(texts(&payload.messages), expected_messages());
    pretty_assertions::assert_eq!(payload.warnings, expected_warnings());
    assert_eq!(payload.api, ProviderApi::AnthropicMessages);
    assert_eq!(std::fs::read(&file).unwrap(), before);
}

#[test]
fn a_valid_pair_written_as_escapes_stays_the_character_without_warning() {
    let dir = tempfile::tempdir().unwrap();
    let file = common::write_session(
        dir.path(),
        &[message(
            "u1",
            None,
            r#"{"role":"user","content":[{"type":"text","text":"\ud83d\ude00 \uD83D\uDE00 \ud800\udc00"}]}"#,
        )],
    );
    let sm = SessionManager::open(&file, None, None).unwrap();
    let payload = session_payload(&sm, &PayloadOptions::new(ProviderApi::OpenAiChat)).unwrap();
    assert_eq!(
        texts(&payload.messages),
        [
            "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"\u{1f600} \u{1f600} \u{10000}\"}]}"
        ]
    );
    assert_eq!(payload.warnings, []);
}

#[test]
fn strings_built_from_several_fields_hold_no_joined_halves() {
    // A bash execution's command ends in a lone high surrogate and its output starts with a
    // lone low one: each is replaced on its own, so the converted text does not join them
    // into one character.
    let dir = tempfile::tempdir().unwrap();
    let file = common::write_session(
        dir.path(),
        &[message(
            "x1",
            None,
            r#"{"role":"bashExecution","command":"echo \ud83d","output":"\ude00 out","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1}"#,
        )],
    );
    let sm = SessionManager::open(&file, None, None).unwrap();
    let sourced = sourced_messages(&sm).unwrap();
    let payload = build_payload(&sourced, &PayloadOptions::new(ProviderApi::OpenAiChat));
    assert_eq!(
        texts(&payload.messages),
        [
            "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Ran `echo \u{fffd}`\\n```\\n\u{fffd} out\\n```\"}],\"timestamp\":1}"
        ]
    );
    assert_eq!(
        payload.warnings,
        [
            lone(2, "x1", "message.command", false, &[0xd83d]),
            lone(2, "x1", "message.output", false, &[0xde00]),
        ]
    );
}

#[test]
fn a_tool_schema_with_a_lone_surrogate_is_scrubbed_with_a_warning_without_line() {
    #[derive(Debug)]
    struct Odd;
    impl agent_session::Tool for Odd {
        fn name(&self) -> &str {
            "odd"
        }
        fn description(&self) -> &str {
            "odd schema"
        }
        fn parameters(&self) -> JsValue {
            parse_value(br#"{"type":"object","description":"x\udfff"}"#).unwrap()
        }
        fn execute(
            &self,
            _id: &str,
            _args: &JsValue,
        ) -> Result<agent_session::ToolOutput, agent_session::ToolError> {
            Err(agent_session::ToolError::new("unused"))
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let sm = SessionManager::create("/p", Some(dir.path())).unwrap();
    let agent = AgentSession::new(
        sm,
        AgentSessionOptions {
            base_tools: vec![std::sync::Arc::new(Odd)],
            ..AgentSessionOptions::default()
        },
    )
    .unwrap();
    let payload = agent
        .provider_payload(ProviderApi::OpenAiResponses, &HistoryLimits::default())
        .unwrap();
    assert_eq!(
        to_json_string(&payload.tools[0].parameters),
        "{\"type\":\"object\",\"description\":\"x\u{fffd}\"}"
    );
    assert_eq!(
        payload.warnings,
        [PayloadWarning::LoneSurrogate {
            line: None,
            entry_id: None,
            path: "tools[0].parameters.description".to_owned(),
            key: false,
            units: vec![0xdfff],
        }]
    );
}

/// A compaction's conversation text cuts a long tool result at 2,000 UTF-16 units, one less
/// when the cut would split a surrogate pair; the count says how many units were left out.
#[test]
fn the_compaction_tool_result_cut_falls_between_characters() {
    let result = |text: &str| {
        let mut o = session_format::json::JsObject::new();
        o.insert("role", JsValue::from("toolResult"));
        o.insert("toolCallId", JsValue::from("c1"));
        o.insert("toolName", JsValue::from("read"));
        let mut block = session_format::json::JsObject::new();
        block.insert("type", JsValue::from("text"));
        block.insert("text", JsValue::from(text));
        o.insert("content", JsValue::Array(vec![JsValue::Object(block)]));
        JsValue::Object(o)
    };
    // 1,999 units, then a pair across the cut, then 10 more units: cut at 1,999.
    let text = format!("{}\u{1f600}{}", "a".repeat(1999), "b".repeat(10));
    let out = serialize_conversation(&[result(&text)]);
    assert_eq!(
        out,
        format!(
            "[Tool result]: {}\n\n[... 12 more characters truncated]",
            "a".repeat(1999)
        )
    );
    // A pair that ends exactly at the cut is kept whole.
    let text = format!("{}\u{1f600}{}", "a".repeat(1998), "b".repeat(10));
    let out = serialize_conversation(&[result(&text)]);
    assert_eq!(
        out,
        format!(
            "[Tool result]: {}\u{1f600}\n\n[... 10 more characters truncated]",
            "a".repeat(1998)
        )
    );
    // Multi-byte characters of one unit each are cut at 2,000.
    let text = "é".repeat(2005);
    let out = serialize_conversation(&[result(&text)]);
    assert_eq!(
        out,
        format!(
            "[Tool result]: {}\n\n[... 5 more characters truncated]",
            "é".repeat(2000)
        )
    );
}
