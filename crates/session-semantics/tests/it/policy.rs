//! Policies: config parsing, history limits, reset-policy resolution and freshness with an
//! injected clock and time zone (the corpus checks the same functions against the reference in
//! bulk; these are the readable cases).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use chrono::FixedOffset;
use chrono_tz::America::New_York;
use pretty_assertions::assert_eq;
use session_semantics::policy::{
    Config, Freshness, HistoryLimits, ResetMode, ResetPolicy, SessionTimes, StaleReason,
    daily_reset_at, evaluate_freshness,
};
use session_semantics::{ChatType, ResetType};

const HOUR: i64 = 3_600_000;

fn cfg(json: &str) -> Config {
    Config::from_json(json).unwrap()
}

#[test]
fn reset_policy_resolution() {
    let none = cfg("{}").sessions;
    assert_eq!(
        none.reset_policy(ResetType::Direct, None),
        ResetPolicy {
            mode: ResetMode::Daily,
            at_hour: 4,
            idle_minutes: None,
            configured: false
        }
    );
    let c = cfg(r#"{"sessions":{
        "reset":{"mode":"daily","atHour":5,"idleMinutes":120},
        "resetByType":{"group":{"mode":"idle","idleMinutes":30},"thread":{"atHour":2},"dm":{"atHour":9}},
        "resetByChannel":{"msteams":{"mode":"idle"}}}}"#)
    .sessions;
    let p = |t, ch| c.reset_policy(t, ch);
    assert_eq!(
        p(ResetType::Group, None),
        ResetPolicy {
            mode: ResetMode::Idle,
            at_hour: 5,
            idle_minutes: Some(30),
            configured: true
        }
    );
    assert_eq!(
        p(ResetType::Thread, None),
        ResetPolicy {
            mode: ResetMode::Daily,
            at_hour: 2,
            idle_minutes: Some(120),
            configured: true
        }
    );
    // `dm` stands in for `direct`.
    assert_eq!(p(ResetType::Direct, None).at_hour, 9);
    // A channel entry replaces base and type entries; aliases resolve (`teams` → `msteams`).
    assert_eq!(
        p(ResetType::Group, Some(" Teams ")),
        ResetPolicy {
            mode: ResetMode::Idle,
            at_hour: 4,
            idle_minutes: Some(0),
            configured: true
        }
    );
    // Legacy idleMinutes alone makes the mode idle.
    let legacy = cfg(r#"{"sessions":{"idleMinutes":45}}"#).sessions;
    assert_eq!(
        legacy.reset_policy(ResetType::Direct, None),
        ResetPolicy {
            mode: ResetMode::Idle,
            at_hour: 4,
            idle_minutes: Some(45),
            configured: true
        }
    );
}

#[test]
fn freshness_daily_and_idle() {
    let utc = FixedOffset::east_opt(0).unwrap();
    // 2026-03-10T10:00Z; boundary 04:00 today.
    let now = 1_773_136_800_000;
    let daily = ResetPolicy {
        mode: ResetMode::Daily,
        at_hour: 4,
        idle_minutes: None,
        configured: true,
    };
    let started = |t: i64| SessionTimes {
        updated_at: Some(t as f64),
        ..SessionTimes::default()
    };
    assert_eq!(
        evaluate_freshness(&started(now - 5 * HOUR), now, &daily, &utc),
        Freshness {
            fresh: true,
            daily_reset_at: Some(now - 6 * HOUR),
            idle_expires_at: None,
            stale_reason: None
        }
    );
    assert_eq!(
        evaluate_freshness(&started(now - 7 * HOUR), now, &daily, &utc).stale_reason,
        Some(StaleReason::Daily)
    );
    // A boundary still ahead today means yesterday's.
    let early = now - 8 * HOUR; // 02:00Z
    assert_eq!(daily_reset_at(early, 4, &utc), early - 22 * HOUR);
    // Both stale: the earlier boundary wins (idle expired at 01:00, daily at 04:00).
    let both = ResetPolicy {
        idle_minutes: Some(60),
        ..daily
    };
    let t = SessionTimes {
        updated_at: Some((now - 10 * HOUR) as f64),
        ..SessionTimes::default()
    };
    let f = evaluate_freshness(&t, now, &both, &utc);
    assert_eq!((f.fresh, f.stale_reason), (false, Some(StaleReason::Idle)));
    // updatedAt 0 (or absent) is stale under a daily policy; future times count as absent.
    assert!(!evaluate_freshness(&SessionTimes::default(), now, &daily, &utc).fresh);
    assert!(!evaluate_freshness(&started(now + 1), now, &daily, &utc).fresh);
    // Idle mode without minutes never goes idle-stale.
    let idle0 = ResetPolicy {
        mode: ResetMode::Idle,
        at_hour: 4,
        idle_minutes: Some(0),
        configured: true,
    };
    assert!(evaluate_freshness(&started(0), now, &idle0, &utc).fresh);
}

#[test]
fn daily_boundary_follows_javascript_across_dst() {
    // New York, 2026-03-08: 02:00 does not exist (clocks go 01:59 EST → 03:00 EDT). `setHours(2)`
    // reads 02:00 with the offset before the change: 07:00Z, which is 03:00 EDT.
    let now = 1_772_958_600_000; // 2026-03-08T08:30:00Z = 04:30 EDT
    assert_eq!(daily_reset_at(now, 2, &New_York), 1_772_953_200_000); // 07:00Z
    // 2026-11-01: 01:00 happens twice; the first (EDT, 05:00Z) is taken.
    let now = 1_793_512_800_000; // 2026-11-01T07:00:00Z = 02:00 EST
    assert_eq!(daily_reset_at(now, 1, &New_York), 1_793_509_200_000); // 05:00Z
}

#[test]
fn history_limits_per_chat_type() {
    let c = cfg(
        r#"{"sessions":{"maxHistoryMessages":100,"maxHistoryTokens":50000,
        "channelOverrides":{"dm":{"maxHistoryTokens":8000},"group":{"maxHistoryMessages":20}}}}"#,
    )
    .sessions;
    assert_eq!(
        c.history_limits(ChatType::Direct),
        HistoryLimits {
            max_messages: Some(100),
            max_tokens: Some(8000)
        }
    );
    assert_eq!(
        c.history_limits(ChatType::Group),
        HistoryLimits {
            max_messages: Some(20),
            max_tokens: Some(50000)
        }
    );
    assert_eq!(
        c.history_limits(ChatType::Channel),
        c.history_limits(ChatType::Group)
    );
    assert_eq!(
        c.history_limits(ChatType::Unknown),
        HistoryLimits {
            max_messages: Some(100),
            max_tokens: Some(50000)
        }
    );
    let l = c.history_limits(ChatType::Group);
    let tokens = vec![10; 30];
    assert_eq!(l.keep_from(&tokens), 10);
}

#[test]
fn config_errors_say_what_is_wrong() {
    let err = |j: &str| Config::from_json(j).unwrap_err().to_string();
    assert_eq!(
        err(r#"{"sessions":{"retention":{"maxAge":"30x"}}}"#),
        "invalid sessions config: invalid duration \"30x\": unknown unit (use values like 500ms, 30s, 5m, 2h, 30d or 1h30m) at line 1, column 41 (byte offset 40)"
    );
    assert!(
        err(r#"{"sessions":{"reset":{"atHour":24}}}"#)
            .contains("atHour must be an integer from 0 to 23, got 24")
    );
    assert!(
        err(r#"{"sessions":{"maxHistoryMesages":3}}"#)
            .contains("unknown field `maxHistoryMesages`")
    );
    let c = cfg(r#"{"sessions":{"retention":{"maxAge":7,"maxSize":1048576}}}"#)
        .sessions
        .retention;
    assert_eq!(c.max_age.0.unwrap().ms, 7 * 86_400_000);
    assert_eq!(c.max_size.0.unwrap().bytes, 1_048_576);
}

/// Arrays are not objects: serde's derived struct impls read `[a, b]` as the fields in order,
/// so `[]` used to be the default config (maxAge 30d) and `"retention": ["1d", "1b"]` gave
/// maxAge 1d and maxSize 1 byte. Every section must now be an object; the error names the key
/// and the position (line, column, byte offset).
#[test]
fn config_sections_must_be_objects() {
    let err = |j: &str| Config::from_json(j).unwrap_err();
    let e = err("[]");
    assert_eq!(
        e.to_string(),
        "invalid sessions config: invalid type: sequence, expected `the config document` to be an object at line 1, column 1 (byte offset 0)"
    );
    assert_eq!((e.line, e.column, e.byte_offset), (1, 1, 0));
    assert_eq!(
        err(r#"{"sessions":{"retention":["1d","1b"]}}"#).to_string(),
        "invalid sessions config: invalid type: sequence, expected `sessions.retention` to be an object at line 1, column 25 (byte offset 24)"
    );
    assert_eq!(
        err(r#"{"sessions":[]}"#).to_string(),
        "invalid sessions config: invalid type: sequence, expected `sessions` to be an object at line 1, column 12 (byte offset 11)"
    );
    let cases = [
        (
            r#"{"sessions":{"channelOverrides":[]}}"#,
            "`sessions.channelOverrides`",
        ),
        (
            r#"{"sessions":{"channelOverrides":{"dm":[3]}}}"#,
            "`a sessions.channelOverrides entry`",
        ),
        (r#"{"sessions":{"reset":["daily"]}}"#, "`sessions.reset`"),
        (
            r#"{"sessions":{"resetByType":[]}}"#,
            "`sessions.resetByType`",
        ),
        (
            r#"{"sessions":{"resetByType":{"dm":[]}}}"#,
            "`a sessions.resetByType entry`",
        ),
        (
            r#"{"sessions":{"resetByChannel":[]}}"#,
            "`sessions.resetByChannel`",
        ),
        (
            r#"{"sessions":{"resetByChannel":{"telegram":[1]}}}"#,
            "`each sessions.resetByChannel entry`",
        ),
    ];
    for (json, key) in cases {
        let text = err(json).to_string();
        assert!(
            text.starts_with(&format!(
                "invalid sessions config: invalid type: sequence, expected {key} to be an object at line 1, column "
            )),
            "{json}: {text}"
        );
    }
    // `null` for an optional section is "not set", as before.
    let c = cfg(r#"{"sessions":{"reset":null,"resetByType":null,"resetByChannel":null}}"#);
    assert_eq!(c.sessions.reset, None);
    assert_eq!(c.sessions.reset_by_channel, None);
}

/// Positions are line, column and byte offset, on any line; `null` for a duration or size
/// names the key and what it accepts (it used to say "did not match any variant of untagged
/// enum TextOrNumber"); a leading byte-order mark is accepted and counted in the offsets.
#[test]
fn config_errors_give_line_column_and_byte_offset() {
    let err = |j: &str| Config::from_json(j).unwrap_err();
    let e = err("{\n  \"sessions\": {\n    \"reset\": [\"daily\"]\n  }\n}\n");
    assert_eq!(
        e.to_string(),
        "invalid sessions config: invalid type: sequence, expected `sessions.reset` to be an object at line 3, column 13 (byte offset 30)"
    );
    assert_eq!(
        e.message,
        "invalid type: sequence, expected `sessions.reset` to be an object"
    );
    assert_eq!((e.line, e.column, e.byte_offset), (3, 13, 30));

    assert_eq!(
        err(r#"{"sessions":{"retention":{"maxAge":null}}}"#).to_string(),
        "invalid sessions config: invalid type: null, expected `sessions.retention.maxAge` to be a duration: a string such as \"30d\" or \"12h\", or a number of days, or false to turn it off at line 1, column 39 (byte offset 38)"
    );
    assert_eq!(
        err(r#"{"sessions":{"retention":{"maxSize":true}}}"#).to_string(),
        "invalid sessions config: invalid value: boolean `true`, expected `sessions.retention.maxSize` to be a byte size: a string such as \"100mb\", or a number of bytes, or false to turn it off at line 1, column 40 (byte offset 39)"
    );
    assert_eq!(
        err(r#"{"sessions":{"retention":{"maxSize":[1]}}}"#).to_string(),
        "invalid sessions config: invalid type: sequence, expected `sessions.retention.maxSize` to be a byte size: a string such as \"100mb\", or a number of bytes, or false to turn it off at line 1, column 37 (byte offset 36)"
    );

    let c = cfg("\u{feff}{\"sessions\":{\"retention\":{\"maxAge\":\"2d\",\"maxSize\":false}}}");
    assert_eq!(c.sessions.retention.max_age.0.unwrap().ms, 2 * 86_400_000);
    assert_eq!(c.sessions.retention.max_size.0, None);
    // The BOM's three bytes count in line 1's columns and in the offsets.
    let e = err("\u{feff}{\"sessions\":[]}");
    assert_eq!((e.line, e.column, e.byte_offset), (1, 15, 14));
    let e = err("\u{feff}{\n\"sessions\":[]}");
    assert_eq!((e.line, e.column, e.byte_offset), (2, 11, 15));
    assert_eq!(
        err("{} x").to_string(),
        "invalid sessions config: trailing characters at line 1, column 4 (byte offset 3)"
    );
}
