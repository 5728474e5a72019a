//! `session_query::usage`: a usage field too large for a double (`1e400`, which JavaScript
//! reads as `Infinity`) adds 0 and the message's other fields are added (pi's export embeds
//! the session through `JSON.stringify`, which writes `Infinity` as `null`); an assistant
//! message whose usage would make a sum infinite is counted as not countable and its usage is
//! not added, so every total stays finite (JSON
//! has no `Infinity`); finite numbers are summed as pi sums them, integers above 2^53 as
//! inexactly as JavaScript does.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use session_query::usage::{Group, Report, ReportOptions, Tz, session_usage};

fn file(rows: &[String]) -> Vec<u8> {
    let mut s = String::from(
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
    );
    s.push('\n');
    for r in rows {
        s.push_str(r);
        s.push('\n');
    }
    s.into_bytes()
}

fn asst(id: &str, day: u32, usage: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","timestamp":"2026-01-{day:02}T00:00:00.000Z","message":{{"role":"assistant","content":[],"usage":{usage}}}}}"#
    )
}

#[test]
fn a_field_javascript_reads_as_infinity_adds_zero_and_the_rest_is_counted() {
    let rows = [
        asst(
            "a1",
            2,
            r#"{"input":1e400,"output":5,"cost":{"output":0.5}}"#,
        ),
        asst(
            "a2",
            2,
            r#"{"input":10,"output":1,"cost":{"input":-1e400}}"#,
        ),
        asst("a3", 2, r#"{"input":2,"output":3,"cost":{"input":0.25}}"#),
    ];
    let t = session_usage(&file(&rows), None).totals();
    assert_eq!(
        (t.assistant_messages, t.without_usage, t.not_countable),
        (3, 0, 0)
    );
    // a1's input and a2's cost.input add 0; every other field is added.
    assert_eq!(
        (t.usage.input, t.usage.output, t.usage.cost()),
        (12.0, 9.0, 0.75)
    );
    assert!(t.usage.is_finite());
}

#[test]
fn a_message_that_would_make_a_sum_infinite_is_not_countable() {
    let rows = [
        asst("a1", 2, r#"{"input":1.7e308}"#),
        asst("a2", 2, r#"{"input":1.7e308}"#),
        asst(
            "a3",
            3,
            r#"{"input":1,"cacheRead":1.7e308,"cacheWrite":1.7e308}"#,
        ),
        asst("a4", 3, r#"{"input":4}"#),
    ];
    let s = session_usage(&file(&rows), None);
    let t = s.totals();
    // a2 would make input infinite; a3's own total tokens would be infinite.
    assert_eq!(t.not_countable, 2);
    assert_eq!(t.usage.input, 1.7e308 + 4.0);
    assert_eq!(t.usage.cache_read, 0.0);
    // A report by day: each row and the total decide on their own sums, all finite.
    let mut r = Report::new(ReportOptions {
        group: Group::Day,
        tz: Tz::Utc,
        since: None,
        until: None,
    });
    r.add(&s, "s", None);
    let rows: Vec<(&str, u64, f64)> = r
        .rows
        .iter()
        .map(|(k, t)| (k.as_str(), t.not_countable, t.usage.input))
        .collect();
    assert_eq!(rows, [("2026-01-02", 1, 1.7e308), ("2026-01-03", 1, 4.0)]);
    assert_eq!(
        (r.total.not_countable, r.total.usage.input),
        (2, 1.7e308 + 4.0)
    );
}

#[test]
fn integers_above_two_to_the_53_sum_as_in_javascript() {
    // 2^53 + 1 is read as 2^53 (the nearest double), as JSON.parse reads it; adding 1 to
    // 2^53 gives 2^53 again, as in JavaScript.
    let rows = [
        asst("a1", 2, r#"{"input":9007199254740993}"#),
        asst("a2", 2, r#"{"input":1}"#),
    ];
    let t = session_usage(&file(&rows), None).totals();
    assert_eq!(t.not_countable, 0);
    assert_eq!(t.usage.input, 9_007_199_254_740_992.0);
}
