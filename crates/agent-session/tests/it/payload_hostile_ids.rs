//! Provider payloads over hostile tool-call ids, keys and turns (docs/DEVIATIONS.md D32):
//! every result carries its call's id, ids stay distinct at the level the API pairs them,
//! no argument is lost, the retry of an aborted turn keeps its result, the file is untouched.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use agent_session::ProviderApi;
use agent_session::payload::{
    PayloadOptions, PayloadWarning, SourcedMessage, build_payload, session_payload,
};
use session_format::json::{JsValue, parse_value};
use session_store::{SessionManager, io};

fn js(text: &str) -> JsValue {
    parse_value(text.as_bytes()).unwrap()
}

fn sourced(i: usize, text: &str) -> SourcedMessage {
    SourcedMessage {
        message: js(text),
        entry_id: Some(format!("e{i}").as_str().into()),
        line: Some(i + 2),
        field: Some("message"),
    }
}

fn call_msg(ids: &[&str], stop: &str) -> String {
    let blocks: Vec<String> = ids
        .iter()
        .map(|id| format!(r#"{{"type":"toolCall","id":"{id}","name":"read","arguments":{{}}}}"#))
        .collect();
    format!(
        r#"{{"role":"assistant","content":[{}],"provider":"anthropic","model":"m","stopReason":"{stop}","timestamp":1}}"#,
        blocks.join(",")
    )
}

fn result_msg(id: &str, text: &str) -> String {
    format!(
        r#"{{"role":"toolResult","toolCallId":"{id}","toolName":"read","content":[{{"type":"text","text":"{text}"}}],"isError":false,"timestamp":2}}"#
    )
}

fn sources(msgs: &[String]) -> Vec<SourcedMessage> {
    msgs.iter()
        .enumerate()
        .map(|(i, m)| sourced(i, m))
        .collect()
}

fn payload(msgs: &[String], api: ProviderApi) -> Vec<JsValue> {
    build_payload(&sources(msgs), &PayloadOptions::new(api)).messages
}

fn s(v: Option<&JsValue>) -> String {
    v.and_then(JsValue::as_str_lossy).unwrap().into_owned()
}

/// The result texts the payload pairs with each call id: (call id, result id, result text).
fn pairs(msgs: &[JsValue]) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for (i, m) in msgs.iter().enumerate() {
        if s(m.get("role")) != "assistant" {
            continue;
        }
        let Some(JsValue::Array(blocks)) = m.get("content") else {
            continue;
        };
        for (k, b) in blocks.iter().enumerate() {
            let r = &msgs[i + 1 + k];
            let text = match r.get("content") {
                Some(JsValue::Array(c)) => s(c[0].get("text")),
                _ => String::new(),
            };
            out.push((s(b.get("id")), s(r.get("toolCallId")), text));
        }
    }
    out
}

/// A call id with surrounding whitespace, and its result naming it exactly as stored: the
/// payload's result carries the call's new id and its real text (not a synthetic one).
/// OpenClaw 2026.6.11's pairing repair alone would orphan it (it matches the call's raw id
/// against the result's trimmed id); its id sanitiser maps both from the raw id, as here.
#[test]
fn a_call_id_with_surrounding_whitespace_keeps_its_result() {
    let msgs = [
        r#"{"role":"user","content":"go","timestamp":0}"#.to_owned(),
        call_msg(&[" t1"], "toolUse"),
        result_msg(" t1", "real"),
    ];
    let p = build_payload(
        &sources(&msgs),
        &PayloadOptions::new(ProviderApi::AnthropicMessages),
    );
    assert_eq!(
        pairs(&p.messages),
        [(
            "_t1_b917658064924d07".to_owned(),
            "_t1_b917658064924d07".to_owned(),
            "real".to_owned()
        )]
    );
    assert_eq!(p.messages.len(), 3);
    assert_eq!(
        (p.pairing.added, p.pairing.dropped_orphans),
        (0, 0),
        "{p:?}"
    );
}

/// A padded result naming an unpadded call still pairs with it (the pairing repair matches
/// the trimmed result id), and a padded call next to an unpadded one with the same text keeps
/// its own result: each result goes to the call with its exact bytes first.
#[test]
fn padded_and_unpadded_ids_each_keep_their_result() {
    let msgs = [
        r#"{"role":"user","content":"go","timestamp":0}"#.to_owned(),
        call_msg(&["t1"], "toolUse"),
        result_msg("t1 ", "for t1"),
        call_msg(&[" t1", "t2"], "toolUse"),
        result_msg(" t1", "for padded"),
        result_msg("t2", "for t2"),
    ];
    let out = payload(&msgs, ProviderApi::AnthropicMessages);
    assert_eq!(
        pairs(&out),
        [
            ("t1".to_owned(), "t1".to_owned(), "for t1".to_owned()),
            (
                "_t1_b917658064924d07".to_owned(),
                "_t1_b917658064924d07".to_owned(),
                "for padded".to_owned()
            ),
            ("t2".to_owned(), "t2".to_owned(), "for t2".to_owned()),
        ]
    );
}

/// OpenAI Responses pairs by the call id before `|` (pi's provider sends `call_id` and the
/// item id separately): of two valid pi ids sharing a call id, the first keeps its text and
/// the second is rewritten, each result following its call.
#[test]
fn responses_ids_sharing_a_call_id_stay_distinct_where_the_api_pairs_them() {
    let msgs = [
        r#"{"role":"user","content":"go","timestamp":0}"#.to_owned(),
        call_msg(&["call_1|fc_a", "call_1|fc_b"], "toolUse"),
        result_msg("call_1|fc_a", "A"),
        result_msg("call_1|fc_b", "B"),
    ];
    let api = ProviderApi::OpenAiResponses;
    let build = || build_payload(&sources(&msgs), &PayloadOptions::new(api));
    let p = build();
    let second = "call_1_fc_b_25734e0819fbb935".to_owned();
    assert_eq!(
        pairs(&p.messages),
        [
            (
                "call_1|fc_a".to_owned(),
                "call_1|fc_a".to_owned(),
                "A".to_owned()
            ),
            (second.clone(), second.clone(), "B".to_owned()),
        ]
    );
    assert_eq!(p.tool_call_ids.len(), 1);
    assert_eq!(p.tool_call_ids[0].block, 1);
    assert_eq!(p.tool_call_ids[0].new, second);
    assert!(api.is_valid_tool_call_id(&second));
    assert_eq!(api.pairing_key("call_1|fc_a"), "call_1");
    assert_eq!(api.pairing_key(&second), second);
    assert_eq!(build(), p, "not deterministic");
}

/// A plain call id equal to an earlier Responses id's call id would pair ambiguously too: it
/// is rewritten. Chat Completions has no such split: `call_1|fc_a` is invalid there and `call_1`
/// stays.
#[test]
fn a_plain_id_equal_to_an_earlier_call_id_is_rewritten_for_responses_only() {
    let msgs = [
        r#"{"role":"user","content":"go","timestamp":0}"#.to_owned(),
        call_msg(&["call_1|fc_a", "call_1"], "toolUse"),
        result_msg("call_1|fc_a", "A"),
        result_msg("call_1", "B"),
    ];
    let ids = |api| -> Vec<String> {
        pairs(&payload(&msgs, api))
            .into_iter()
            .map(|(c, r, _)| {
                assert_eq!(c, r);
                c
            })
            .collect()
    };
    assert_eq!(
        ids(ProviderApi::OpenAiResponses),
        ["call_1|fc_a", "call_1_c71f9687148fe24e"]
    );
    assert_eq!(ids(ProviderApi::OpenAiChat)[1], "call_1");
}

/// Two argument keys that differ only in their lone surrogates become one key: a JSON object
/// cannot hold both and renaming one would change an argument name, so the first member (in
/// the row's order) is kept and the later one is dropped with a warning naming its path and
/// line (a member is never lost silently).
#[test]
fn keys_equal_after_surrogate_replacement_keep_the_first_and_report_the_dropped_one() {
    let msgs = [
        r#"{"role":"user","content":"go","timestamp":0}"#.to_owned(),
        r#"{"role":"assistant","content":[{"type":"toolCall","id":"t1","name":"read","arguments":{"a\ud800":1,"b":3,"a\ud801":2}}],"provider":"anthropic","model":"m","stopReason":"toolUse","timestamp":1}"#.to_owned(),
        result_msg("t1", "ok"),
    ];
    let p = build_payload(
        &sources(&msgs),
        &PayloadOptions::new(ProviderApi::AnthropicMessages),
    );
    let args = p.messages[1].get("content").unwrap().as_array().unwrap()[0]
        .get("arguments")
        .unwrap()
        .clone();
    assert_eq!(args, js(r#"{"a\ufffd":1,"b":3}"#));
    assert_eq!(
        p.warnings,
        [
            PayloadWarning::LoneSurrogate {
                line: Some(3),
                entry_id: Some("e1".to_owned()),
                path: r#"message.content[0].arguments["a\ud800"]"#.to_owned(),
                key: true,
                units: vec![0xD800],
            },
            PayloadWarning::DroppedMember {
                line: Some(3),
                entry_id: Some("e1".to_owned()),
                path: r#"message.content[0].arguments["a\ud801"]"#.to_owned(),
                kept_key: "a\u{FFFD}".to_owned(),
            },
        ]
    );
    assert_eq!(
        p.warnings[1].to_string(),
        "member message.content[0].arguments[\"a\\ud801\"] dropped: its key is \"a\u{FFFD}\" \
         once lone surrogates are replaced, as an earlier member's at line 3 (entry e1)"
    );
}

/// A literal U+FFFD key after a key that becomes it: the first is kept (under the replaced
/// key), the literal one is the member dropped, though its own key held no lone surrogate.
#[test]
fn a_literal_replacement_character_key_after_a_lone_surrogate_key_is_the_one_dropped() {
    let msgs = [
        r#"{"role":"user","content":"go","timestamp":0}"#.to_owned(),
        r#"{"role":"assistant","content":[{"type":"toolCall","id":"t1","name":"read","arguments":{"x":{"k\udc00":"first","k\ufffd":"second"}}}],"provider":"anthropic","model":"m","stopReason":"toolUse","timestamp":1}"#.to_owned(),
        result_msg("t1", "ok"),
    ];
    let p = build_payload(
        &sources(&msgs),
        &PayloadOptions::new(ProviderApi::AnthropicMessages),
    );
    let args = p.messages[1].get("content").unwrap().as_array().unwrap()[0]
        .get("arguments")
        .unwrap()
        .clone();
    assert_eq!(args, js(r#"{"x":{"k\ufffd":"first"}}"#));
    assert_eq!(p.warnings.len(), 2, "{:?}", p.warnings);
    assert_eq!(
        p.warnings[1],
        PayloadWarning::DroppedMember {
            line: Some(3),
            entry_id: Some("e1".to_owned()),
            path: "message.content[0].arguments.x[\"k\u{FFFD}\"]".to_owned(),
            kept_key: "k\u{FFFD}".to_owned(),
        }
    );
}

/// An aborted turn's call and a retry that reuses its id (providers that number calls
/// `call_0`, `call_1`… per turn): the retry's real result stays paired with the retry.
#[test]
fn a_retry_reusing_an_aborted_turns_call_id_keeps_its_result() {
    let msgs = [
        r#"{"role":"user","content":"go","timestamp":0}"#.to_owned(),
        call_msg(&["call_0"], "aborted"),
        result_msg("call_0", "aborted result"),
        call_msg(&["call_0"], "toolUse"),
        result_msg("call_0", "retry result"),
    ];
    let out = payload(&msgs, ProviderApi::OpenAiChat);
    let p = pairs(&out);
    assert_eq!(p.len(), 1, "{out:?}");
    assert_eq!(p[0].2, "retry result", "{p:?}");
}

/// 1500 calls whose ids are invalid and share a long prefix: every new id distinct, valid,
/// paired, and the same on a second build.
#[test]
fn fifteen_hundred_calls_get_distinct_paired_deterministic_ids() {
    let ids: Vec<String> = (0..1500)
        .map(|i| format!("{}.{i}", "p".repeat(70)))
        .collect();
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    let mut msgs = vec![
        r#"{"role":"user","content":"go","timestamp":0}"#.to_owned(),
        call_msg(&refs, "toolUse"),
    ];
    msgs.extend(ids.iter().map(|id| result_msg(id, id)));
    let a = payload(&msgs, ProviderApi::OpenAiChat);
    let b = payload(&msgs, ProviderApi::OpenAiChat);
    assert_eq!(a, b);
    let p = pairs(&a);
    let distinct: std::collections::HashSet<&str> = p.iter().map(|x| x.0.as_str()).collect();
    assert_eq!(distinct.len(), 1500);
    for (k, (c, r, text)) in p.iter().enumerate() {
        assert_eq!(c, r);
        assert_eq!(text, &ids[k]);
        assert!(ProviderApi::OpenAiChat.is_valid_tool_call_id(c), "{c}");
    }
}

/// Building a payload from a file full of lone surrogates and invalid ids leaves its bytes
/// as they were, and the payload serialises to valid UTF-8 with no `\ud8xx` escape left.
#[test]
fn payload_building_never_touches_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    let text = concat!(
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#,
        "\n",
        r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"x\udc00y"}],"timestamp":1}}"#,
        "\n",
        r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"bad id\ud800","name":"re\udfffad","arguments":{"k\ud801":"v\ud802"}}],"provider":"anthropic","model":"m","stopReason":"toolUse","timestamp":2}}"#,
        "\n",
        r#"{"type":"message","id":"t1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"bad id\ud800","toolName":"re\udfffad","content":[{"type":"text","text":"\ud83d"}],"isError":false,"timestamp":3}}"#,
        "\n",
    );
    let mut bytes = text.as_bytes().to_vec();
    // A raw invalid UTF-8 sequence (an encoded lone surrogate) in a text.
    let at = bytes.windows(3).position(|w| w == b"x\\u").unwrap();
    bytes.splice(at..at + 1, [0xED, 0xA0, 0x80]);
    io::write_raw(&file, &bytes).unwrap();
    let meta = std::fs::metadata(&file).unwrap();
    let sm = SessionManager::open(&file, None, None).unwrap();
    let p1 = session_payload(&sm, &PayloadOptions::new(ProviderApi::AnthropicMessages)).unwrap();
    drop(sm);
    let sm = SessionManager::open(&file, None, None).unwrap();
    let p2 = session_payload(&sm, &PayloadOptions::new(ProviderApi::AnthropicMessages)).unwrap();
    assert_eq!(p1.messages, p2.messages);
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
    assert_eq!(
        std::fs::metadata(&file).unwrap().modified().unwrap(),
        meta.modified().unwrap()
    );
    let json = session_format::json::to_json_string(&JsValue::Array(p1.messages.clone()));
    assert!(!json.to_ascii_lowercase().contains("\\ud8"), "{json}");
    assert!(!json.to_ascii_lowercase().contains("\\udc"), "{json}");
    assert!(!json.to_ascii_lowercase().contains("\\udf"), "{json}");
    let p = pairs(&p1.messages);
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].0, p[0].1);
    assert_eq!(p[0].2, "\u{FFFD}");
    assert!(ProviderApi::AnthropicMessages.is_valid_tool_call_id(&p[0].0));
}
