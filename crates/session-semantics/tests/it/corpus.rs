//! Checks the crate against the node-generated corpus `tests/data/session-key-corpus.jsonl`:
//! every record holds inputs and the outputs of OpenClaw 2026.6.11's own functions
//! (generator: `xtask/node/gen-session-key-corpus.mjs`; record kinds are described there).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::str::FromStr;

use serde_json::Value;
use session_semantics::key::{
    self, DmScope, IdentityLinks, PeerKeyParams, PeerKind, SessionKey, normalize_account_id,
    normalize_agent_id, normalize_main_key, normalize_session_key,
};
use session_semantics::kind::{
    ChatType, EntryHints, classify_key_shape, classify_session_kind, derive_chat_type,
    resolve_reset_type,
};
use session_semantics::policy::{
    DurationUnit, ResetMode, ResetPolicy, SessionTimes, SessionsConfig, daily_reset_at,
    evaluate_freshness, normalize_channel, parse_byte_size, parse_duration_ms,
};
use session_semantics::{ResetType, SessionKind};

const CORPUS: &str = include_str!("../data/session-key-corpus.jsonl");

fn s(v: &Value) -> Option<&str> {
    v.as_str()
}

fn kind_str(k: SessionKind) -> &'static str {
    k.as_str()
}

/// Compares one field; records a mismatch.
fn check(errors: &mut Vec<String>, line: usize, what: &str, got: Value, want: &Value) {
    if &got != want {
        errors.push(format!("line {line}: {what}: got {got}, reference {want}"));
    }
}

fn key_record(r: &Value, line: usize, errors: &mut Vec<String>) {
    let input = s(&r["input"]).unwrap_or_default();
    let mut c = |what: &str, got: Value| {
        check(errors, line, &format!("{what} of {input:?}"), got, &r[what])
    };
    c("normalized", Value::from(normalize_session_key(input)));
    let exact = key::parse_agent_session_key(input);
    let parsed = exact.clone().map_or(
        Value::Null,
        |(a, r)| serde_json::json!({"agentId": a, "rest": r}),
    );
    c("parse", parsed);

    c("shape", Value::from(classify_key_shape(input).as_str()));
    c("chatType", Value::from(derive_chat_type(input).as_str()));
    c(
        "sessionKind",
        Value::from(kind_str(classify_session_kind(input, None))),
    );
    let spawned = EntryHints {
        spawned_by: Some("x".into()),
        chat_type: None,
    };
    c(
        "kindSpawned",
        Value::from(kind_str(classify_session_kind(input, Some(&spawned)))),
    );
    let group = EntryHints {
        spawned_by: None,
        chat_type: Some(ChatType::Group),
    };
    c(
        "kindGroupEntry",
        Value::from(kind_str(classify_session_kind(input, Some(&group)))),
    );
    c("cron", Value::from(key::is_cron_key(input)));
    c("cronRun", Value::from(key::is_cron_run_key(input)));
    c("subagent", Value::from(key::is_subagent_key(input)));
    c("subagentDepth", Value::from(key::subagent_depth(input)));
    c("acp", Value::from(key::is_acp_key(input)));
    let t = key::parse_thread_suffix(input);
    c("threadBase", t.base_key.map_or(Value::Null, Value::from));
    c("threadId", t.thread_id.map_or(Value::Null, Value::from));
    c(
        "resetType",
        Value::from(resolve_reset_type(input, false, false).as_str()),
    );
    c(
        "agentIdFromKey",
        Value::from(key::resolve_agent_id_from_key(input)),
    );
    c(
        "requestKey",
        key::to_agent_request_key(input).map_or(Value::Null, Value::from),
    );
    c(
        "storeKey",
        Value::from(key::to_agent_store_key("Ops", input, None)),
    );
    c("sentinel", Value::from(key::sentinel(input).is_some()));
    typed_parse(input, exact, line, errors);
}

/// The typed key accepts the reference's keys whose normalised text starts with
/// `agent:<agentId>:` (D20), with the same agent id and rest; it prints the normalised text,
/// which parses back to itself.
fn typed_parse(
    input: &str,
    exact: Option<(String, String)>,
    line: usize,
    errors: &mut Vec<String>,
) {
    match (SessionKey::parse(input), exact) {
        (Ok(k), Some((a, r))) => {
            if (k.agent_id(), k.rest()) != (a.as_str(), r.as_str()) {
                errors.push(format!(
                    "line {line}: typed parse of {input:?} differs: {k:?}"
                ));
            }
            if k.to_string() != key::normalize_session_key(input) {
                errors.push(format!(
                    "line {line}: typed key {k} is not the normalised key of {input:?}"
                ));
            }
            if SessionKey::parse(&k.to_string()).ok() != Some(k.clone()) {
                errors.push(format!("line {line}: {k} does not parse back to itself"));
            }
        }
        (
            Err(key::ParseKeyError::NotCanonicalPrefix {
                normalized,
                agent_id,
                ..
            }),
            Some((a, _)),
        ) if agent_id == a && !normalized.starts_with(&format!("agent:{a}:")) => {}
        (Err(_), None) => {}
        (got, want) => errors.push(format!(
            "line {line}: typed parse of {input:?}: {got:?} vs reference {want:?}"
        )),
    }
}

fn peer_record(r: &Value, line: usize, errors: &mut Vec<String>) {
    let p = &r["params"];
    let links: Option<IdentityLinks> = p
        .get("identityLinks")
        .map(|l| serde_json::from_value(l.clone()).unwrap());
    let params = PeerKeyParams {
        agent_id: p.get("agentId").and_then(s).unwrap_or_default(),
        main_key: p.get("mainKey").and_then(s),
        channel: p.get("channel").and_then(s),
        account_id: p.get("accountId").and_then(s),
        peer_kind: match p.get("peerKind").and_then(s) {
            None | Some("direct") => PeerKind::Direct,
            Some("group") => PeerKind::Group,
            Some("channel") => PeerKind::Channel,
            Some(other) => panic!("peer kind {other}"),
        },
        peer_id: p.get("peerId").and_then(s),
        dm_scope: p
            .get("dmScope")
            .map(|d| serde_json::from_value::<DmScope>(d.clone()).unwrap())
            .unwrap_or_default(),
        identity_links: links.as_ref(),
    };
    check(
        errors,
        line,
        &format!("peer key of {p}"),
        Value::from(key::build_peer_key(&params)),
        &r["expected"],
    );
}

fn reset_record(r: &Value, line: usize, errors: &mut Vec<String>) {
    let cfg: SessionsConfig = serde_json::from_value(r["sessionCfg"].clone()).unwrap();
    let reset_type = match s(&r["resetType"]) {
        Some("direct") => ResetType::Direct,
        Some("group") => ResetType::Group,
        _ => ResetType::Thread,
    };
    let p = cfg.reset_policy(reset_type, s(&r["channel"]));
    let got = serde_json::json!({
        "mode": p.mode.as_str(),
        "atHour": p.at_hour,
        "idleMinutes": p.idle_minutes,
        "configured": p.configured,
    });
    check(
        errors,
        line,
        &format!(
            "reset policy of {} / {} / {}",
            r["sessionCfg"], r["resetType"], r["channel"]
        ),
        got,
        &r["expected"],
    );
}

fn tz_of(r: &Value) -> chrono_tz::Tz {
    chrono_tz::Tz::from_str(s(&r["tz"]).unwrap()).unwrap()
}

fn freshness_record(r: &Value, line: usize, errors: &mut Vec<String>) {
    let tz = tz_of(r);
    let pol = &r["policy"];
    let policy = ResetPolicy {
        mode: if s(&pol["mode"]) == Some("idle") {
            ResetMode::Idle
        } else {
            ResetMode::Daily
        },
        at_hour: pol["atHour"].as_u64().unwrap() as u8,
        idle_minutes: pol
            .get("idleMinutes")
            .and_then(Value::as_u64)
            .map(|m| m as u32),
        configured: true,
    };
    let times = SessionTimes {
        updated_at: r["updatedAt"].as_f64(),
        session_started_at: r["sessionStartedAt"].as_f64(),
        last_interaction_at: r["lastInteractionAt"].as_f64(),
    };
    let now = r["now"].as_i64().unwrap();
    let f = evaluate_freshness(&times, now, &policy, &tz);
    let got = serde_json::json!({
        "fresh": f.fresh,
        "dailyResetAt": f.daily_reset_at,
        "idleExpiresAt": f.idle_expires_at.map(|x| x as i64),
        "staleReason": f.stale_reason.map(|r| match r {
            session_semantics::policy::StaleReason::Daily => "daily",
            session_semantics::policy::StaleReason::Idle => "idle",
        }),
    });
    let mut want = r["expected"].clone();
    if let Some(i) = want["idleExpiresAt"].as_f64() {
        want["idleExpiresAt"] = Value::from(i as i64);
    }
    check(errors, line, &format!("freshness of {r}"), got, &want);
}

#[test]
fn reference_corpus() {
    let mut errors = Vec::new();
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for (i, text) in CORPUS.lines().enumerate() {
        let line = i + 1;
        let r: Value = serde_json::from_str(text).unwrap();
        let kind = s(&r["kind"]).unwrap().to_owned();
        *counts.entry(kind.clone()).or_default() += 1;
        let input = s(&r["input"]).unwrap_or_default();
        match kind.as_str() {
            "key" => key_record(&r, line, &mut errors),
            "id" => {
                let c = &mut |what: &str, got: Value| {
                    check(
                        &mut errors,
                        line,
                        &format!("{what} of {input:?}"),
                        got,
                        &r[what],
                    );
                };
                c("agentId", Value::from(normalize_agent_id(input)));
                c("valid", Value::from(key::is_valid_agent_id(input)));
                c("accountId", Value::from(normalize_account_id(input)));
                c("mainKey", Value::from(normalize_main_key(Some(input))));
            }
            "peer" => peer_record(&r, line, &mut errors),
            "main" => check(
                &mut errors,
                line,
                "main key",
                Value::from(key::build_main_key(
                    s(&r["agentId"]).unwrap(),
                    s(&r["mainKey"]),
                )),
                &r["expected"],
            ),
            "thread" => check(
                &mut errors,
                line,
                "thread key",
                Value::from(key::build_thread_key(
                    s(&r["base"]).unwrap(),
                    s(&r["threadId"]).unwrap(),
                )),
                &r["expected"],
            ),
            "duration" => check(
                &mut errors,
                line,
                &format!("duration {input:?}"),
                parse_duration_ms(input, DurationUnit::Days)
                    .ok()
                    .map_or(Value::Null, Value::from),
                &r["expected"],
            ),
            "bytes" => check(
                &mut errors,
                line,
                &format!("byte size {input:?}"),
                parse_byte_size(input).ok().map_or(Value::Null, Value::from),
                &r["expected"],
            ),
            "channel" => check(
                &mut errors,
                line,
                &format!("channel {input:?}"),
                normalize_channel(input).map_or(Value::Null, Value::from),
                &r["expected"],
            ),
            "resetPolicy" => reset_record(&r, line, &mut errors),
            "dailyReset" => check(
                &mut errors,
                line,
                &format!("daily reset of {r}"),
                Value::from(daily_reset_at(
                    r["now"].as_i64().unwrap(),
                    r["atHour"].as_u64().unwrap() as u8,
                    &tz_of(&r),
                )),
                &r["expected"],
            ),
            "freshness" => freshness_record(&r, line, &mut errors),
            other => panic!("line {line}: unknown record kind {other}"),
        }
    }
    assert!(counts["key"] > 1000, "{counts:?}");
    assert!(counts["freshness"] > 300, "{counts:?}");
    if !errors.is_empty() {
        let shown: Vec<&String> = errors.iter().take(40).collect();
        panic!(
            "{} mismatches with the reference:\n{}",
            errors.len(),
            shown
                .iter()
                .map(|e| e.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}
