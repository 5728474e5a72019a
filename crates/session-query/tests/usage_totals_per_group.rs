//! `session_query::usage`: exact totals of hand-built sessions, per session and per group (day
//! in UTC across midnight, month, model, session, agent), and the `since`/`until` window.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use session_query::usage::{Group, Report, ReportOptions, Tz, session_usage};

/// An assistant message with usage `(input, output, cacheRead, cacheWrite)` and cost parts
/// `(input, output, cacheRead, cacheWrite)` (cost.total deliberately wrong: pi never reads it).
fn assistant(
    id: &str,
    ts: &str,
    model: &str,
    tok: [u64; 4],
    cost: [f64; 4],
    tools: usize,
) -> String {
    let blocks: Vec<String> = (0..tools)
        .map(|i| format!(r#"{{"type":"toolCall","id":"t{id}{i}","name":"bash","arguments":{{}}}}"#))
        .chain(std::iter::once(r#"{"type":"text","text":"ok"}"#.to_owned()))
        .collect();
    format!(
        r#"{{"type":"message","id":"{id}","parentId":null,"timestamp":"{ts}","message":{{"role":"assistant","content":[{}],"provider":"anthropic","model":"{model}","usage":{{"input":{},"output":{},"cacheRead":{},"cacheWrite":{},"totalTokens":999999,"cost":{{"input":{},"output":{},"cacheRead":{},"cacheWrite":{},"total":1000}}}}}}}}"#,
        blocks.join(","),
        tok[0],
        tok[1],
        tok[2],
        tok[3],
        cost[0],
        cost[1],
        cost[2],
        cost[3]
    )
}

fn user(id: &str, ts: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":null,"timestamp":"{ts}","message":{{"role":"user","content":"hi"}}}}"#
    )
}

fn session(id: &str, rows: &[String]) -> Vec<u8> {
    let mut s = format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}}"#
    );
    s.push('\n');
    for r in rows {
        s.push_str(r);
        s.push('\n');
    }
    s.into_bytes()
}

/// Two days in UTC: 23:59:59.999 on the 1st and 00:00:00.000 on the 2nd.
fn two_day_session() -> Vec<u8> {
    session(
        "s1",
        &[
            user("u1", "2026-03-01T23:00:00.000Z"),
            assistant(
                "a1",
                "2026-03-01T23:59:59.999Z",
                "sonnet",
                [10, 20, 300, 4000],
                [0.001, 0.002, 0.0003, 0.004],
                2,
            ),
            user("u2", "2026-03-02T00:00:00.000Z"),
            assistant(
                "a2",
                "2026-03-02T00:00:00.000Z",
                "opus",
                [1, 2, 3, 4],
                [0.5, 0.25, 0.125, 0.0625],
                0,
            ),
            assistant(
                "a3",
                "2026-04-10T12:00:00.000Z",
                "sonnet",
                [5, 5, 5, 5],
                [0.01, 0.01, 0.01, 0.01],
                1,
            ),
        ],
    )
}

fn opts(group: Group) -> ReportOptions {
    ReportOptions {
        group,
        tz: Tz::Utc,
        since: None,
        until: None,
    }
}

#[test]
fn a_session_total_sums_every_assistant_usage_and_the_cost_parts() {
    let s = session_usage(&two_day_session(), None);
    assert_eq!(s.session_id.as_deref(), Some("s1"));
    assert_eq!(s.records.len(), 5);
    let t = s.totals();
    assert_eq!(t.messages, 5);
    assert_eq!(t.role("user"), 2);
    assert_eq!(t.assistant_messages, 3);
    assert_eq!(t.without_usage, 0);
    assert_eq!(t.tool_calls, 3);
    assert_eq!(t.usage.input, 16.0);
    assert_eq!(t.usage.output, 27.0);
    assert_eq!(t.usage.cache_read, 308.0);
    assert_eq!(t.usage.cache_write, 4009.0);
    assert_eq!(t.usage.total_tokens(), 4360.0);
    // The parts, not cost.total (1000 per message).
    assert_eq!(t.usage.cost_input, 0.001 + 0.5 + 0.01);
    assert_eq!(t.usage.cost_output, 0.002 + 0.25 + 0.01);
    let expected = (0.001 + 0.5 + 0.01)
        + (0.002 + 0.25 + 0.01)
        + (0.0003 + 0.125 + 0.01)
        + (0.004 + 0.0625 + 0.01);
    assert_eq!(t.usage.cost(), expected);
    assert_eq!(t.models, vec!["anthropic/sonnet", "anthropic/opus"]);
}

#[test]
fn days_in_utc_split_at_midnight() {
    let s = session_usage(&two_day_session(), None);
    let mut r = Report::new(opts(Group::Day));
    r.add(&s, "s1", None);
    let keys: Vec<&str> = r.rows.keys().map(String::as_str).collect();
    assert_eq!(keys, vec!["2026-03-01", "2026-03-02", "2026-04-10"]);
    let d1 = &r.rows["2026-03-01"];
    assert_eq!(
        (d1.messages, d1.assistant_messages, d1.tool_calls),
        (2, 1, 2)
    );
    assert_eq!(d1.usage.total_tokens(), 4330.0);
    let d2 = &r.rows["2026-03-02"];
    assert_eq!(
        (d2.messages, d2.assistant_messages, d2.tool_calls),
        (2, 1, 0)
    );
    assert_eq!(d2.usage.cost(), 0.5 + 0.25 + 0.125 + 0.0625);
    assert_eq!(r.total, s.totals());
    assert_eq!(r.sessions, 1);
}

#[test]
fn months_models_sessions_and_agents() {
    let s = session_usage(&two_day_session(), None);
    let other = session_usage(
        &session(
            "s2",
            &[assistant(
                "b1",
                "2026-03-15T08:00:00.000Z",
                "opus",
                [100, 0, 0, 0],
                [1.0, 0.0, 0.0, 0.0],
                0,
            )],
        ),
        None,
    );

    let mut m = Report::new(opts(Group::Month));
    m.add(&s, "s1", Some("main"));
    m.add(&other, "s2", Some("ops"));
    let keys: Vec<&str> = m.rows.keys().map(String::as_str).collect();
    assert_eq!(keys, vec!["2026-03", "2026-04"]);
    assert_eq!(m.rows["2026-03"].messages, 5);
    assert_eq!(m.rows["2026-03"].usage.input, 111.0);
    assert_eq!(m.rows["2026-04"].usage.input, 5.0);

    let mut by_model = Report::new(opts(Group::Model));
    by_model.add(&s, "s1", Some("main"));
    by_model.add(&other, "s2", Some("ops"));
    let keys: Vec<&str> = by_model.rows.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        vec!["(no model)", "anthropic/opus", "anthropic/sonnet"]
    );
    assert_eq!(by_model.rows["(no model)"].messages, 2);
    assert_eq!(by_model.rows["(no model)"].assistant_messages, 0);
    assert_eq!(by_model.rows["anthropic/opus"].usage.input, 101.0);
    assert_eq!(by_model.rows["anthropic/sonnet"].usage.input, 15.0);
    assert_eq!(by_model.rows["anthropic/sonnet"].tool_calls, 3);

    let mut by_session = Report::new(opts(Group::Session));
    by_session.add(&s, "s1", Some("main"));
    by_session.add(&other, "s2", Some("ops"));
    assert_eq!(by_session.rows["s1"], s.totals());
    assert_eq!(by_session.rows["s2"], other.totals());
    assert_eq!(by_session.total.messages, 6);
    assert_eq!(by_session.total.usage.cost(), {
        let mut u = s.totals().usage;
        u.add(&other.totals().usage);
        u.cost()
    });

    let mut by_agent = Report::new(opts(Group::Agent));
    by_agent.add(&s, "s1", Some("main"));
    by_agent.add(&other, "s2", None);
    let keys: Vec<&str> = by_agent.rows.keys().map(String::as_str).collect();
    assert_eq!(keys, vec!["(none)", "main"]);
    assert_eq!(by_agent.rows["(none)"].usage.input, 100.0);
}

#[test]
fn since_is_inclusive_until_exclusive_and_untimed_entries_drop_out() {
    let mut rows = vec![
        user("u1", "2026-03-01T23:00:00.000Z"),
        assistant(
            "a1",
            "2026-03-01T23:59:59.999Z",
            "m",
            [1, 0, 0, 0],
            [0.0; 4],
            0,
        ),
        assistant(
            "a2",
            "2026-03-02T00:00:00.000Z",
            "m",
            [10, 0, 0, 0],
            [0.0; 4],
            0,
        ),
    ];
    // An assistant message with no time at all: only in unbounded reports.
    rows.push(
        r#"{"type":"message","id":"a4","message":{"role":"assistant","content":[],"usage":{"input":1000}}}"#
            .to_owned(),
    );
    // No entry timestamp: message.timestamp (epoch ms) is its time, 2026-03-01T23:30:00Z.
    rows.push(
        r#"{"type":"message","id":"a5","message":{"role":"assistant","content":[],"usage":{"input":100},"timestamp":1772407800000}}"#
            .to_owned(),
    );
    let s = session_usage(&session("s", &rows), None);
    assert_eq!(s.records[3].time_ms, None);
    assert_eq!(s.records[4].time_ms, Some(1_772_407_800_000));

    let at = |iso: &str| session_format::time::parse_js_date(iso).unwrap();
    let mut r = Report::new(ReportOptions {
        since: Some(at("2026-03-01T23:59:59.999Z")),
        until: Some(at("2026-03-02T00:00:00.000Z")),
        ..opts(Group::Day)
    });
    r.add(&s, "s", None);
    assert_eq!(r.total.usage.input, 1.0);
    assert_eq!(r.total.messages, 1);
    assert_eq!(r.filtered_out, 4);

    let mut all = Report::new(opts(Group::Day));
    all.add(&s, "s", None);
    assert_eq!(all.total.usage.input, 1111.0);
    assert_eq!(all.rows["(no time)"].usage.input, 1000.0);
    assert_eq!(all.rows["2026-03-01"].usage.input, 101.0);
    assert_eq!(all.filtered_out, 0);
}

#[test]
fn local_days_follow_the_local_zone() {
    // The same instant is the 1st in UTC; in the local zone it is whatever chrono says: the
    // report must agree with chrono's Local for every record.
    let s = session_usage(&two_day_session(), None);
    let mut r = Report::new(ReportOptions {
        tz: Tz::Local,
        ..opts(Group::Day)
    });
    r.add(&s, "s1", None);
    use chrono::TimeZone;
    let mut want: Vec<String> = s
        .records
        .iter()
        .map(|rec| {
            chrono::Local
                .timestamp_millis_opt(rec.time_ms.unwrap())
                .unwrap()
                .format("%Y-%m-%d")
                .to_string()
        })
        .collect();
    want.dedup();
    want.sort();
    want.dedup();
    let keys: Vec<String> = r.rows.keys().cloned().collect();
    assert_eq!(keys, want);
}
