//! `session_query::usage`: the per-field rules pi's export applies (`x || 0`), assistant
//! messages without usage, cost as the sum of its parts, what is an entry, invalid lines and
//! files without a header.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use session_query::usage::{RecordKind, session_usage};

fn file(version: Option<u32>, rows: &[&str]) -> Vec<u8> {
    let v = version.map_or(String::new(), |v| format!(r#""version":{v},"#));
    let mut s = format!(
        r#"{{"type":"session",{v}"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}}"#
    );
    s.push('\n');
    for r in rows {
        s.push_str(r);
        s.push('\n');
    }
    s.into_bytes()
}

fn asst(usage: &str) -> String {
    format!(
        r#"{{"type":"message","id":"x","timestamp":"2026-01-02T00:00:00.000Z","message":{{"role":"assistant","content":[],"usage":{usage}}}}}"#
    )
}

#[test]
fn missing_null_false_and_string_fields_add_zero_numbers_add_themselves() {
    let rows = [
        asst(r#"{"input":5}"#), // the rest missing
        asst(r#"{"input":null,"output":false,"cacheRead":"","cacheWrite":0}"#),
        asst(r#"{"input":"7","output":[1],"cacheRead":{"n":1},"cacheWrite":true}"#), // true is 1
        asst(r#"{"input":-2,"output":0.5,"cacheRead":3,"cacheWrite":4}"#), // negative and fractional as is
    ];
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    let t = session_usage(&file(Some(3), &rows), None).totals();
    assert_eq!(t.assistant_messages, 4);
    assert_eq!(t.without_usage, 0);
    assert_eq!(t.usage.input, 3.0);
    assert_eq!(t.usage.output, 0.5);
    assert_eq!(t.usage.cache_read, 3.0);
    assert_eq!(t.usage.cache_write, 5.0);
    assert_eq!(t.usage.total_tokens(), 11.5);
    assert_eq!(t.usage.cost(), 0.0);
}

#[test]
fn cost_is_the_sum_of_its_parts_never_cost_total() {
    let rows = [
        asst(r#"{"input":1,"cost":{"input":0.25,"output":0.5,"total":99}}"#),
        asst(r#"{"input":1,"cost":{"cacheRead":0.125,"cacheWrite":"3","total":99}}"#),
        asst(r#"{"input":1,"cost":{"total":99}}"#),
        asst(r#"{"input":1,"cost":null}"#),
        asst(r#"{"input":1,"cost":7}"#),
    ];
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    let t = session_usage(&file(Some(3), &rows), None).totals();
    assert_eq!(t.usage.cost_input, 0.25);
    assert_eq!(t.usage.cost_output, 0.5);
    assert_eq!(t.usage.cost_cache_read, 0.125);
    assert_eq!(t.usage.cost_cache_write, 0.0);
    assert_eq!(t.usage.cost(), 0.875);
    assert_eq!(t.usage.input, 5.0);
}

#[test]
fn assistant_messages_without_a_usage_object_are_counted_apart() {
    let rows = [
        r#"{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"toolCall","id":"1","name":"x","arguments":{}},{"type":"toolCall","id":"2","name":"y","arguments":{}}]}}"#,
        r#"{"type":"message","id":"b","message":{"role":"assistant","content":"text, not blocks","usage":null}}"#,
        r#"{"type":"message","id":"c","message":{"role":"assistant","content":[],"usage":"12"}}"#,
        r#"{"type":"message","id":"d","message":{"role":"assistant","content":[{"type":"text","text":"toolCall"}],"usage":{"output":9},"model":"m"}}"#,
    ];
    let t = session_usage(&file(Some(3), &rows), None).totals();
    assert_eq!(t.assistant_messages, 4);
    assert_eq!(t.without_usage, 3);
    assert_eq!(t.tool_calls, 2);
    assert_eq!(t.usage.output, 9.0);
    // A model without a provider is the model alone.
    assert_eq!(t.models, vec!["m"]);
}

#[test]
fn entries_are_counted_by_type_and_role_every_row_once_header_lines_left_out() {
    let rows = [
        r#"{"type":"message","id":"u","message":{"role":"user","content":"q"}}"#,
        r#"{"type":"message","id":"u","message":{"role":"user","content":"q again, same id"}}"#,
        r#"{"type":"message","id":"r","message":{"role":"toolResult","toolCallId":"1","content":[]}}"#,
        r#"{"type":"message","id":"h","message":{"role":"hookMessage","content":"x"}}"#,
        r#"{"type":"message","id":"n","message":{"content":"no role"}}"#,
        r#"{"type":"custom_message","id":"c","customType":"x","content":"y"}"#,
        r#"{"type":"compaction","id":"k","summary":"s","firstKeptEntryId":"u","tokensBefore":1}"#,
        r#"{"type":"branch_summary","id":"b","fromId":"u","summary":"s"}"#,
        r#"{"type":"label","id":"l","targetId":"u","label":"x"}"#,
        r#"{"type":"model_change","id":"m","provider":"p","modelId":"m"}"#,
        r#"{"type":"session","version":3,"id":"second-header"}"#,
        r#"[1,2]"#,
    ];
    let s = session_usage(&file(Some(3), &rows), None);
    let t = s.totals();
    assert_eq!(t.messages, 5);
    assert_eq!(t.role("user"), 2);
    assert_eq!(t.role("toolResult"), 1);
    // In a v3 file hookMessage stays what it is.
    assert_eq!(t.role("hookMessage"), 1);
    assert_eq!(t.role("(none)"), 1);
    assert_eq!(
        (t.custom_messages, t.compactions, t.branch_summaries),
        (1, 1, 1)
    );
    assert_eq!(s.records.len(), 8);
    assert_eq!(s.invalid_lines, 0);

    // A v2 file: pi migrates hookMessage to custom in memory.
    let v2 = session_usage(&file(Some(2), &rows), None).totals();
    assert_eq!(v2.role("custom"), 1);
    assert_eq!(v2.role("hookMessage"), 0);
    assert_eq!(
        s.records[3].kind,
        RecordKind::Message(Some("hookMessage".to_owned()))
    );
}

#[test]
fn invalid_lines_are_skipped_and_counted_blank_lines_are_not() {
    let rows = [
        asst(r#"{"input":1}"#),
        "{not json".to_owned(),
        "   ".to_owned(),
        String::new(),
        r#"{"type":"message","id":"z","message":{"role":"assistant","usage":{"input":2}"#
            .to_owned(), // torn
    ];
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    let mut bytes = file(Some(3), &rows);
    bytes.pop(); // the torn last line has no LF
    let s = session_usage(&bytes, None);
    assert_eq!(s.invalid_lines, 2);
    assert_eq!(s.totals().usage.input, 1.0);
    assert_eq!(s.totals().assistant_messages, 1);
}

#[test]
fn a_file_whose_first_parsed_line_is_not_a_header_counts_nothing() {
    let rows = asst(r#"{"input":1}"#);
    let no_header = format!("{rows}\n{rows}\n");
    let s = session_usage(no_header.as_bytes(), None);
    assert_eq!(s.session_id, None);
    assert!(s.records.is_empty());

    // A broken first line is skipped: the header after it counts (pi skips unparsable lines
    // before it checks the first entry).
    let mut late = b"{broken\n".to_vec();
    late.extend(file(None, &[&rows]));
    let s = session_usage(&late, None);
    assert_eq!(s.session_id.as_deref(), Some("s"));
    assert_eq!(s.version, None);
    assert_eq!(s.invalid_lines, 1);
    assert_eq!(s.totals().usage.input, 1.0);

    // A header with a non-string id is not a header.
    let bad = format!("{{\"type\":\"session\",\"id\":5}}\n{rows}\n");
    assert!(session_usage(bad.as_bytes(), None).records.is_empty());
}
