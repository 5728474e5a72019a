//! `convertToLlm`, `estimateTokens` and `estimateContextTokens` against OpenClaw 2026.6.11
//! (`fixtures/reference/messages.json` → `expected/convert.json`, captured by `capture.mjs`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::common;

use agent_session::convert::convert_to_llm;
use agent_session::tokens::{estimate_context_tokens, estimate_tokens};
use common::{fixture_json, obj};
use pretty_assertions::assert_eq;
use session_format::json::{JsValue, to_json_string};

fn input() -> (Vec<JsValue>, Vec<Vec<JsValue>>) {
    let doc = fixture_json("messages.json");
    let messages = doc.get("messages").unwrap().as_array().unwrap().clone();
    let contexts = doc
        .get("contexts")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_array().unwrap().clone())
        .collect();
    (messages, contexts)
}

fn expected() -> JsValue {
    fixture_json("expected/convert.json")
}

#[test]
fn convert_to_llm_matches_the_reference() {
    let (messages, _) = input();
    let ours = JsValue::Array(convert_to_llm(&messages));
    let theirs = expected().get("convertToLlm").unwrap().clone();
    assert_eq!(to_json_string(&ours), to_json_string(&theirs));
}

#[test]
fn the_summary_wording_is_exact() {
    let (messages, _) = input();
    let out = convert_to_llm(&messages);
    let texts: Vec<String> = out
        .iter()
        .filter_map(|m| {
            m.get("content")?
                .as_array()?
                .first()?
                .get("text")?
                .as_str_lossy()
                .map(|s| s.into_owned())
        })
        .collect();
    assert!(texts.contains(
        &"The conversation history before this point was compacted into the following summary:\n\n<summary>\nearlier work\n</summary>"
            .to_owned()
    ));
    assert!(texts.contains(
        &"The following is a summary of a branch that this conversation came back from:\n\n<summary>\nexplored option B</summary>"
            .to_owned()
    ));
}

#[test]
fn estimate_tokens_matches_the_reference() {
    let (messages, _) = input();
    let theirs = expected()
        .get("estimateTokens")
        .unwrap()
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(messages.len(), theirs.len());
    for (m, t) in messages.iter().zip(&theirs) {
        match t {
            JsValue::Number(n) => {
                assert_eq!(estimate_tokens(m) as f64, *n, "{}", to_json_string(m))
            }
            // The reference throws on a custom message without content; we count 0 chars.
            JsValue::Object(_) => {
                assert_eq!(
                    t.get("error").and_then(JsValue::as_str_lossy).as_deref(),
                    Some("content is not iterable")
                );
                assert_eq!(estimate_tokens(m), 0);
            }
            other => panic!("unexpected golden {other:?}"),
        }
    }
}

#[test]
fn estimate_context_tokens_matches_the_reference() {
    let (_, contexts) = input();
    let theirs = expected()
        .get("estimateContextTokens")
        .unwrap()
        .as_array()
        .unwrap()
        .clone();
    let num = |x: f64| {
        if x.is_nan() {
            JsValue::Null
        } else {
            JsValue::Number(x)
        }
    };
    for (ctx, t) in contexts.iter().zip(&theirs) {
        let ours = estimate_context_tokens(ctx);
        let v = obj(vec![
            ("tokens", num(ours.tokens)),
            ("usageTokens", num(ours.usage_tokens)),
            ("trailingTokens", num(ours.trailing_tokens)),
            (
                "lastUsageIndex",
                ours.last_usage_index
                    .map_or(JsValue::Null, |i| JsValue::Number(i as f64)),
            ),
        ]);
        assert_eq!(to_json_string(&v), to_json_string(t));
    }
}

#[test]
fn tokens_count_utf16_units() {
    // "😀" is 2 UTF-16 units (4 UTF-8 bytes), "é" 1 (2 bytes): "😀éé" is 4 chars → 1 token
    // (8 bytes would give 2), "😀ééé" 5 chars → 2 tokens.
    let m = |t: &str| common::json(&format!(r#"{{"role":"user","content":"{t}"}}"#));
    assert_eq!(estimate_tokens(&m("😀éé")), 1);
    assert_eq!(estimate_tokens(&m("😀ééé")), 2);
    assert_eq!(estimate_tokens(&m("")), 0);
}
