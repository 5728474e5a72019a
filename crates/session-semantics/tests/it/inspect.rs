//! `inspect_key`: the printable classification behind `sessions keys parse KEY`, as text and
//! as JSON.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use session_semantics::inspect_key;

#[test]
fn key_reports() {
    let keys = [
        "AGENT:Main:Telegram:Acct:Direct:Bob:thread:T9",
        "agent:main:cron:nightly:run:17",
        "agent:main:subagent:p:subagent:c",
        "agent:main:main",
        "agent::broken",
        "../../etc/passwd",
        "global",
    ];
    let text: Vec<String> = keys
        .iter()
        .map(|k| inspect_key(k, None).to_string())
        .collect();
    insta::assert_snapshot!("key_reports_text", text.join("\n\n"));
    let json = serde_json::to_string_pretty(&inspect_key(keys[0], None)).unwrap();
    insta::assert_snapshot!("key_report_json", json);
}
