//! `session_query::usage`: a fork (a header naming `parentSession`) holds copies of its
//! parent's entries; the copies (same `id` as an entry of the parent) are counted once, in the
//! parent.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use session_query::usage::{Group, Report, ReportOptions, Tz, session_usage};

fn asst(id: &str, parent: &str, input: u64) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2026-05-01T10:00:00.000Z","message":{{"role":"assistant","content":[{{"type":"toolCall","id":"t","name":"x","arguments":{{}}}}],"provider":"p","model":"m","usage":{{"input":{input},"cost":{{"input":{input}}}}}}}}}"#
    )
}

fn user(id: &str, parent: Option<&str>) -> String {
    let p = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{p},"timestamp":"2026-05-01T09:00:00.000Z","message":{{"role":"user","content":"q"}}}}"#
    )
}

fn parent() -> Vec<u8> {
    [
        r#"{"type":"session","version":3,"id":"P","timestamp":"2026-05-01T09:00:00.000Z","cwd":"/w"}"#.to_owned(),
        user("u1", None),
        asst("a1", "u1", 100),
        user("u2", Some("a1")),
        asst("a2", "u2", 20),
        // A second branch from a1.
        user("u3", Some("a1")),
        asst("a3", "u3", 3),
    ]
    .join("\n")
    .into_bytes()
}

/// A fork of the parent at a2 (pi's createBranchedSession: the path root..a2 copied), then
/// one new exchange of its own.
fn fork() -> Vec<u8> {
    let mut s = [
        r#"{"type":"session","version":3,"id":"F","timestamp":"2026-05-02T09:00:00.000Z","cwd":"/w","parentSession":"/store/P.jsonl"}"#.to_owned(),
        user("u1", None),
        asst("a1", "u1", 100),
        user("u2", Some("a1")),
        asst("a2", "u2", 20),
        user("f1", Some("a2")),
        asst("f2", "f1", 4000),
    ]
    .join("\n");
    s.push('\n');
    s.into_bytes()
}

#[test]
fn the_fork_counts_only_its_own_entries_when_the_parent_is_known() {
    let p = session_usage(&parent(), None);
    assert_eq!(p.totals().usage.input, 123.0);
    assert_eq!(p.totals().messages, 6);

    let mut f = session_usage(&fork(), None);
    assert_eq!(f.parent_session.as_deref(), Some("/store/P.jsonl"));
    // Without the parent every entry counts (what pi's export of the fork shows).
    assert_eq!(f.totals().usage.input, 4120.0);
    assert_eq!(f.totals().messages, 6);

    assert_eq!(f.mark_copies(&p.ids()), 4);
    assert_eq!(f.copies(), 4);
    let t = f.totals();
    assert_eq!(t.usage.input, 4000.0);
    assert_eq!(t.usage.cost(), 4000.0);
    assert_eq!(t.messages, 2);
    assert_eq!(t.tool_calls, 1);

    // The same through the skip set at read time.
    let f2 = session_usage(&fork(), Some(&p.ids()));
    assert_eq!(f2.totals(), t);

    // Summed together: each entry once.
    let mut r = Report::new(ReportOptions {
        group: Group::Session,
        tz: Tz::Utc,
        since: None,
        until: None,
    });
    r.add(&p, "P", None);
    r.add(&f, "F", None);
    assert_eq!(r.total.usage.input, 4123.0);
    assert_eq!(r.total.messages, 8);
    assert_eq!(r.total.assistant_messages, 4);
    assert_eq!(r.copies, 4);
    assert_eq!(r.rows["F"].usage.input, 4000.0);
    assert_eq!(r.rows["P"].usage.input, 123.0);
}

#[test]
fn a_fork_of_a_fork_skips_what_its_parent_copied_too() {
    let p = session_usage(&parent(), None);
    let mut f = session_usage(&fork(), None);
    f.mark_copies(&p.ids());
    // The grandchild copies the fork's whole path (u1..f2) and adds g1.
    let mut g_rows = vec![
        r#"{"type":"session","version":3,"id":"G","parentSession":"/store/F.jsonl"}"#.to_owned(),
        user("u1", None),
        asst("a1", "u1", 100),
        user("u2", Some("a1")),
        asst("a2", "u2", 20),
        user("f1", Some("a2")),
        asst("f2", "f1", 4000),
    ];
    g_rows.push(asst("g1", "f2", 50000));
    let mut g = session_usage(g_rows.join("\n").as_bytes(), None);
    // The fork's ids include the entries it copied from P.
    assert_eq!(g.mark_copies(&f.ids()), 6);
    assert_eq!(g.totals().usage.input, 50000.0);
}

#[test]
fn entries_without_an_id_always_count() {
    let p = session_usage(&parent(), None);
    let v1_copy = [
        r#"{"type":"session","id":"V","parentSession":"/store/P.jsonl"}"#,
        r#"{"type":"message","message":{"role":"assistant","content":[],"usage":{"input":7}}}"#,
    ]
    .join("\n");
    let mut v = session_usage(v1_copy.as_bytes(), None);
    assert_eq!(v.mark_copies(&p.ids()), 0);
    assert_eq!(v.totals().usage.input, 7.0);
}
