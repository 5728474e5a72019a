//! Tool-call ids in provider payloads are valid for the target API (Anthropic Messages
//! `^[A-Za-z0-9_-]{1,64}$`, OpenAI Chat Completions 40 characters, OpenAI Responses 64
//! characters with pi's `call|fc_item` form), deterministic (the same on every
//! prepare-for-run and after reopening the file), injective (ids sharing a long prefix stay
//! apart, an empty or missing id gets its own), paired (each result carries its call's new
//! id) and untouched when already valid. Expected ids were computed outside this workspace
//! (SHA-256 in Python) from the documented rule.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::common;

use agent_session::pairing::MISSING_TOOL_RESULT_TEXT;
use agent_session::payload::{normalize_tool_call_id, normalize_tool_call_ids};
use agent_session::{
    AgentSession, AgentSessionOptions, PrepareOutcome, PrepareParams, ProviderApi, ProviderPayload,
    ToolCallIdChange, prepare_session_manager_for_run,
};
use proptest::prelude::*;
use session_format::json::{JsString, JsValue, to_json_string};
use session_semantics::policy::HistoryLimits;
use session_store::SessionManager;

/// A `message` row; an empty `parent` is `null`.
fn message(id: &str, parent: &str, body: &str) -> String {
    common::message_line(id, (!parent.is_empty()).then_some(parent), body)
}

fn long_x() -> String {
    "x".repeat(100)
}

fn shared(last: char) -> String {
    format!("{}{last}", "p".repeat(64))
}

/// The ids of the first assistant's calls, in call order: valid, too long, bad characters,
/// two long ids sharing a 64-byte prefix, unicode, pi's Responses form.
fn shapes() -> Vec<String> {
    vec![
        "toolu_01A-b_c".to_owned(),
        long_x(),
        "call_9|fc_abc+/=".to_owned(),
        shared('A'),
        shared('B'),
        "呼び出し-1".to_owned(),
        "call_7|fc_77".to_owned(),
    ]
}

/// Lines: header 1, `u1` 2, `a1` 3 (seven calls), results 4–10 (in reverse call order),
/// `u2` 11, `a2` 12 (one call with an empty id), `t8` 13 (a result without id), `u3` 14,
/// `a3` 15 (one call without an `id` key, no result), `u4` 16.
fn transcript() -> Vec<String> {
    let ids = shapes();
    let calls: Vec<String> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| {
            format!(
                r#"{{"type":"toolCall","id":{},"name":"read","arguments":{{"n":{i}}}}}"#,
                to_json_string(&JsValue::from(id.as_str()))
            )
        })
        .collect();
    let mut lines = vec![
        message("u1", "", r#"{"role":"user","content":"go","timestamp":1}"#),
        message(
            "a1",
            "u1",
            &format!(
                r#"{{"role":"assistant","content":[{}],"provider":"p","model":"m","stopReason":"toolUse","timestamp":2}}"#,
                calls.join(",")
            ),
        ),
    ];
    let mut parent = "a1".to_owned();
    for (i, id) in ids.iter().enumerate().rev() {
        let entry = format!("t{}", i + 1);
        lines.push(message(
            &entry,
            &parent,
            &format!(
                r#"{{"role":"toolResult","toolCallId":{},"toolName":"read","content":[{{"type":"text","text":"r{i}"}}],"isError":false,"timestamp":3}}"#,
                to_json_string(&JsValue::from(id.as_str()))
            ),
        ));
        parent = entry;
    }
    lines.extend([
        message(
            "u2",
            &parent,
            r#"{"role":"user","content":"next","timestamp":4}"#,
        ),
        message(
            "a2",
            "u2",
            r#"{"role":"assistant","content":[{"type":"toolCall","id":"","name":"read","arguments":{}}],"provider":"p","model":"m","stopReason":"toolUse","timestamp":5}"#,
        ),
        message(
            "t8",
            "a2",
            r#"{"role":"toolResult","toolName":"read","content":[{"type":"text","text":"r8"}],"isError":false,"timestamp":6}"#,
        ),
        message(
            "u3",
            "t8",
            r#"{"role":"user","content":"more","timestamp":7}"#,
        ),
        message(
            "a3",
            "u3",
            r#"{"role":"assistant","content":[{"type":"toolCall","name":"bash","arguments":{}}],"provider":"p","model":"m","stopReason":"toolUse","timestamp":8}"#,
        ),
        message(
            "u4",
            "a3",
            r#"{"role":"user","content":"end","timestamp":9}"#,
        ),
    ]);
    lines
}

/// `call_` + SHA-256("tool-call-id" NUL "a2" NUL "0" NUL)[..16 hex]: the id the empty id of
/// `a2`'s block 0 gets.
const EMPTY_A2: &str = "call_b806be2a67958897";
/// The same for `a3`'s block 0 (no `id` key).
const MISSING_A3: &str = "call_3589ffc21554877f";

fn expected_ids(api: ProviderApi) -> Vec<String> {
    let keep = |n: usize, c: &str| c.repeat(n);
    let (x, p) = match api {
        ProviderApi::OpenAiChat => (23, 23),
        _ => (47, 47),
    };
    vec![
        "toolu_01A-b_c".to_owned(),
        format!("{}_b2422ebfc5d3153a", keep(x, "x")),
        "call_9_fc_abc____cb18c4e114beff81".to_owned(),
        format!("{}_85490514083e7267", keep(p, "p")),
        format!("{}_8f3a3a4974e5fc6a", keep(p, "p")),
        "____-1_f4a4921e6cf943b3".to_owned(),
        match api {
            ProviderApi::OpenAiResponses => "call_7|fc_77".to_owned(),
            _ => "call_7_fc_77_bcaa7502d1afd098".to_owned(),
        },
        EMPTY_A2.to_owned(),
        MISSING_A3.to_owned(),
    ]
}

const APIS: [ProviderApi; 3] = [
    ProviderApi::AnthropicMessages,
    ProviderApi::OpenAiChat,
    ProviderApi::OpenAiResponses,
];

fn str_of(v: Option<&JsValue>) -> String {
    v.and_then(JsValue::as_str_lossy).unwrap().into_owned()
}

/// The ids of every call, in order, each checked to be answered right after its assistant
/// message by a result that carries the same id.
fn paired_call_ids(messages: &[JsValue]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < messages.len() {
        let m = &messages[i];
        i += 1;
        if str_of(m.get("role")) != "assistant" {
            continue;
        }
        let calls: Vec<String> = m
            .get("content")
            .and_then(JsValue::as_array)
            .unwrap()
            .iter()
            .filter(|b| str_of(b.get("type")) == "toolCall")
            .map(|b| str_of(b.get("id")))
            .collect();
        for call in &calls {
            let r = &messages[i];
            assert_eq!(str_of(r.get("role")), "toolResult");
            assert_eq!(&str_of(r.get("toolCallId")), call);
            i += 1;
        }
        out.extend(calls);
    }
    out
}

fn payload(agent: &mut AgentSession, api: ProviderApi) -> ProviderPayload {
    agent.pairing_options_mut().now_ms = Some(1_767_225_600_000.0);
    agent
        .provider_payload(api, &HistoryLimits::default())
        .unwrap()
}

fn prepared(mut sm: SessionManager, file: &std::path::Path) -> AgentSession {
    let outcome = prepare_session_manager_for_run(
        &mut sm,
        PrepareParams {
            session_file: file,
            had_session_file: true,
            session_id: "s1",
            cwd: "/p",
        },
    )
    .unwrap();
    assert_eq!(outcome, PrepareOutcome::Unchanged);
    AgentSession::new(sm, AgentSessionOptions::default()).unwrap()
}

#[test]
fn every_id_shape_gets_the_same_exact_id_on_each_prepare_and_after_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let file = common::write_session(dir.path(), &transcript());
    let before = std::fs::read(&file).unwrap();
    for api in APIS {
        let mut agent = prepared(SessionManager::open(&file, None, None).unwrap(), &file);
        let first = payload(&mut agent, api);
        let mut agent = prepared(agent.into_session_manager(), &file);
        let second = payload(&mut agent, api);
        drop(agent);
        let mut agent = prepared(SessionManager::open(&file, None, None).unwrap(), &file);
        let reopened = payload(&mut agent, api);
        assert_eq!(
            paired_call_ids(&first.messages),
            expected_ids(api),
            "{api:?}"
        );
        assert_eq!(first.messages, second.messages);
        assert_eq!(first.messages, reopened.messages);
        assert_eq!(first.tool_call_ids, reopened.tool_call_ids);
        // One result per call, the displaced ones put back in call order: 16 messages.
        assert_eq!(first.messages.len(), 16);
        assert_eq!((first.pairing.added, first.pairing.dropped_orphans), (1, 0));
    }
    assert_eq!(std::fs::read(&file).unwrap(), before);
}

#[test]
fn the_changes_name_each_rewritten_call_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = common::write_session(dir.path(), &transcript());
    let mut agent = prepared(SessionManager::open(&file, None, None).unwrap(), &file);
    let p = payload(&mut agent, ProviderApi::OpenAiResponses);
    let ids = expected_ids(ProviderApi::OpenAiResponses);
    let change = |line: usize, entry: &str, block: usize, original: Option<&str>, new: &str| {
        ToolCallIdChange {
            line: Some(line),
            entry_id: Some(entry.to_owned()),
            block,
            original: original.map(JsString::from),
            new: new.to_owned(),
        }
    };
    let shapes = shapes();
    assert_eq!(
        p.tool_call_ids,
        [
            change(3, "a1", 1, Some(&shapes[1]), &ids[1]),
            change(3, "a1", 2, Some(&shapes[2]), &ids[2]),
            change(3, "a1", 3, Some(&shapes[3]), &ids[3]),
            change(3, "a1", 4, Some(&shapes[4]), &ids[4]),
            change(3, "a1", 5, Some(&shapes[5]), &ids[5]),
            change(12, "a2", 0, Some(""), EMPTY_A2),
            change(15, "a3", 0, None, MISSING_A3),
        ]
    );
}

#[test]
fn results_carry_their_calls_new_ids_and_synthetic_results_too() {
    let dir = tempfile::tempdir().unwrap();
    let file = common::write_session(dir.path(), &transcript());
    let mut agent = prepared(SessionManager::open(&file, None, None).unwrap(), &file);
    let p = payload(&mut agent, ProviderApi::AnthropicMessages);
    let ids = expected_ids(ProviderApi::AnthropicMessages);
    // The first result (call order) is r0, whose line was the last of the seven.
    assert_eq!(
        to_json_string(&p.messages[2]),
        r#"{"role":"toolResult","toolCallId":"toolu_01A-b_c","toolName":"read","content":[{"type":"text","text":"r0"}],"isError":false,"timestamp":3}"#
    );
    assert_eq!(
        to_json_string(&p.messages[3]),
        format!(
            r#"{{"role":"toolResult","toolCallId":"{}","toolName":"read","content":[{{"type":"text","text":"r1"}}],"isError":false,"timestamp":3}}"#,
            ids[1]
        )
    );
    // The id-less result after the one empty-id call took its generated id (and isError, as
    // the reference's legacy-id rule does).
    assert_eq!(
        to_json_string(&p.messages[11]),
        format!(
            r#"{{"role":"toolResult","toolName":"read","content":[{{"type":"text","text":"r8"}}],"isError":true,"timestamp":6,"toolCallId":"{EMPTY_A2}"}}"#
        )
    );
    // The call without an id got one, and its synthetic result names it.
    assert_eq!(
        to_json_string(&p.messages[14]),
        format!(
            r#"{{"role":"toolResult","toolCallId":"{MISSING_A3}","toolName":"bash","content":[{{"type":"text","text":"{MISSING_TOOL_RESULT_TEXT}"}}],"details":{{"openclawSyntheticMissingToolResult":true}},"isError":true,"timestamp":1767225600000}}"#
        )
    );
}

#[test]
fn valid_ids_are_untouched_and_the_payload_equals_the_model_context() {
    let dir = tempfile::tempdir().unwrap();
    let file = common::write_session(
        dir.path(),
        &[
            message("u1", "", r#"{"role":"user","content":"go"}"#),
            message(
                "a1",
                "u1",
                r#"{"role":"assistant","content":[{"type":"toolCall","id":"toolu_01XyZ","name":"read","arguments":{}},{"type":"toolCall","id":"call_abc-123","name":"read","arguments":{}}],"stopReason":"toolUse"}"#,
            ),
            message(
                "t1",
                "a1",
                r#"{"role":"toolResult","toolCallId":"toolu_01XyZ","toolName":"read","content":[],"isError":false}"#,
            ),
            message(
                "t2",
                "t1",
                r#"{"role":"toolResult","toolCallId":"call_abc-123","toolName":"read","content":[],"isError":false}"#,
            ),
        ],
    );
    let sm = SessionManager::open(&file, None, None).unwrap();
    let agent = AgentSession::new(sm, AgentSessionOptions::default()).unwrap();
    for api in APIS {
        let p = agent
            .provider_payload(api, &HistoryLimits::default())
            .unwrap();
        assert_eq!(p.tool_call_ids, []);
        assert_eq!(
            p.messages,
            agent
                .model_context(&HistoryLimits::default())
                .unwrap()
                .messages
        );
    }
}

#[test]
fn a_result_id_with_padding_or_an_alias_key_gets_the_new_id_in_every_id_key() {
    let dir = tempfile::tempdir().unwrap();
    let file = common::write_session(
        dir.path(),
        &[
            message("u1", "", r#"{"role":"user","content":"go"}"#),
            message(
                "a1",
                "u1",
                r#"{"role":"assistant","content":[{"type":"toolCall","id":"a.b","name":"read","arguments":{}},{"type":"toolCall","id":"c.d","name":"read","arguments":{}}],"stopReason":"toolUse"}"#,
            ),
            message(
                "t1",
                "a1",
                r#"{"role":"toolResult","toolCallId":" a.b ","toolName":"read","content":[],"isError":false}"#,
            ),
            message(
                "t2",
                "t1",
                r#"{"role":"toolResult","tool_use_id":"c.d","toolName":"read","content":[],"isError":false}"#,
            ),
        ],
    );
    let sm = SessionManager::open(&file, None, None).unwrap();
    let agent = AgentSession::new(sm, AgentSessionOptions::default()).unwrap();
    let p = agent
        .provider_payload(ProviderApi::AnthropicMessages, &HistoryLimits::default())
        .unwrap();
    let ab = normalize_tool_call_id(ProviderApi::AnthropicMessages, &JsString::from("a.b"));
    let cd = normalize_tool_call_id(ProviderApi::AnthropicMessages, &JsString::from("c.d"));
    assert_eq!(ab, "a_b_b3dcef570b2ec285");
    assert_eq!(cd, "c_d_8435f771eca9d308");
    assert_eq!(
        to_json_string(&p.messages[2]),
        format!(
            r#"{{"role":"toolResult","toolCallId":"{ab}","toolName":"read","content":[],"isError":false}}"#
        )
    );
    assert_eq!(
        to_json_string(&p.messages[3]),
        format!(
            r#"{{"role":"toolResult","tool_use_id":"{cd}","toolName":"read","content":[],"isError":false,"toolCallId":"{cd}"}}"#
        )
    );
    assert_eq!(paired_call_ids(&p.messages), [ab, cd]);
}

#[test]
fn a_valid_id_that_looks_like_a_rewritten_one_keeps_it_and_the_other_is_salted() {
    // "a b" alone becomes a_b_dfa5830757fffdb1; a valid id of that text is reserved first, so
    // "a b" takes the hash salted with 1, in either order.
    for ids in [
        ["a b", "a_b_dfa5830757fffdb1"],
        ["a_b_dfa5830757fffdb1", "a b"],
    ] {
        let ids: Vec<JsString> = ids.iter().map(|s| JsString::from(*s)).collect();
        let out = normalize_tool_call_ids(ProviderApi::AnthropicMessages, &ids);
        let expect = |s: &JsString| {
            if s.as_str() == Some("a b") {
                "a_b_ecafd9342389682a"
            } else {
                "a_b_dfa5830757fffdb1"
            }
        };
        assert_eq!(out, ids.iter().map(expect).collect::<Vec<_>>());
    }
}

#[test]
fn the_limits_per_api() {
    assert_eq!(ProviderApi::AnthropicMessages.max_tool_call_id_len(), 64);
    assert_eq!(ProviderApi::OpenAiChat.max_tool_call_id_len(), 40);
    assert_eq!(ProviderApi::OpenAiResponses.max_tool_call_id_len(), 64);
    let sixty_four = "a".repeat(64);
    let forty = "a".repeat(40);
    for (api, id, valid) in [
        (ProviderApi::AnthropicMessages, sixty_four.as_str(), true),
        (ProviderApi::AnthropicMessages, "a|fc_1", false),
        (ProviderApi::AnthropicMessages, "", false),
        (ProviderApi::OpenAiChat, forty.as_str(), true),
        (ProviderApi::OpenAiChat, sixty_four.as_str(), false),
        (ProviderApi::OpenAiResponses, "call_1|fc_1", true),
        (ProviderApi::OpenAiResponses, "call_1|fc", true),
        (ProviderApi::OpenAiResponses, "call_1|item_1", false),
        (ProviderApi::OpenAiResponses, "call_|fc_1", false),
        (ProviderApi::OpenAiResponses, "call_1|fc_", false),
        (ProviderApi::OpenAiResponses, "call_1|fc_1|x", false),
        (ProviderApi::OpenAiResponses, sixty_four.as_str(), true),
    ] {
        assert_eq!(api.is_valid_tool_call_id(id), valid, "{api:?} {id}");
    }
}

// ------------------------------------------------------------------------------------------
// Properties

fn pattern(api: ProviderApi) -> regex::Regex {
    regex::Regex::new(match api {
        ProviderApi::AnthropicMessages => r"^[A-Za-z0-9_-]{1,64}$",
        ProviderApi::OpenAiChat => r"^[A-Za-z0-9_-]{1,40}$",
        _ => r"^[A-Za-z0-9_-]{0,63}[A-Za-z0-9-](\|fc([A-Za-z0-9_-]{0,61}[A-Za-z0-9-])?)?$",
    })
    .unwrap()
}

fn any_id() -> impl Strategy<Value = JsString> {
    prop_oneof![
        "[A-Za-z0-9_-]{0,70}".prop_map(JsString::from),
        "[A-Za-z0-9_|.+/= -]{0,90}".prop_map(JsString::from),
        "(call_[a-z0-9]{1,8}\\|fc_[A-Za-z0-9_]{0,70})".prop_map(JsString::from),
        "[a-z]{0,3}".prop_map(|s| JsString::from(format!("{}{s}", "q".repeat(64)).as_str())),
        any::<String>().prop_map(JsString::from),
        proptest::collection::vec(any::<u16>(), 0..12).prop_map(|u| JsString::from_utf16(&u)),
    ]
}

proptest! {
    #[test]
    fn normalisation_is_injective_valid_and_idempotent(
        raw in proptest::collection::vec(any_id(), 0..24)
    ) {
        let mut ids: Vec<JsString> = Vec::new();
        for id in raw {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        for api in APIS {
            let re = pattern(api);
            let out = normalize_tool_call_ids(api, &ids);
            // A valid id is kept unless another id of the set has its pairing key (the call
            // part of a Responses `call|fc` id): one of them must change, and which one depends
            // on their order.
            let mut keys: std::collections::HashMap<String, usize> = Default::default();
            for id in &ids {
                let id = id.to_str_lossy();
                *keys.entry(api.pairing_key(&id).to_owned()).or_default() += 1;
            }
            let mut seen = std::collections::HashSet::new();
            let mut wire = std::collections::HashSet::new();
            for (id, new) in ids.iter().zip(&out) {
                prop_assert!(re.is_match(new), "{api:?}: {new:?} from {id:?}");
                prop_assert!(seen.insert(new.clone()), "{api:?}: {new:?} twice");
                prop_assert!(
                    wire.insert(api.pairing_key(new).to_owned()),
                    "{api:?}: pairing key of {new:?} twice"
                );
                if let Some(s) = id.as_str().filter(|s| re.is_match(s))
                    && keys[api.pairing_key(s)] == 1
                {
                    prop_assert_eq!(new, s);
                }
            }
            let again: Vec<JsString> = out.iter().map(|s| JsString::from(s.as_str())).collect();
            prop_assert_eq!(normalize_tool_call_ids(api, &again), out.clone());
            // The same ids in another order get the same results when no two share a pairing
            // key (no rewritten id then collides, so nothing depends on the order).
            if keys.values().all(|&n| n == 1) {
                let mut reversed = ids.clone();
                reversed.reverse();
                let mut back = normalize_tool_call_ids(api, &reversed);
                back.reverse();
                prop_assert_eq!(back, out);
            }
        }
    }
}
