//! `session_query::usage` on the pi fixture (`shared/fixtures/pi-large-session-v1.jsonl`)
//! against what pi 0.73.1's own HTML export shows for it, without node: the header values
//! below were produced by the real pi with `crates/session-cli/tests/pi_export_totals.mjs`
//! (`node crates/session-cli/tests/pi_export_totals.mjs <fixture> out.html`, then the page
//! rendered by headless Chromium, `--dump-dom`, and its `.info-item`s read). The live
//! comparison, which runs pi and Chromium again, is
//! `crates/session-cli/tests/it/usage_matches_pi_export.rs`. Skipped when ../shared is absent.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use session_query::usage::{pi_header, session_usage};

/// pi 0.73.1's export header for the fixture (Date left out: it is local time).
const PI_HEADER: [(&str, &str); 5] = [
    (
        "Models",
        "openai/gpt-5.1-codex, anthropic/claude-sonnet-4-5",
    ),
    ("Messages", "88 user, 453 assistant, 373 tool results"),
    ("Tool Calls", "391"),
    ("Tokens", "↑1.0k ↓83k R43.2M W4.3M"),
    // Without `$`: see `pi_header`.
    ("Cost", "30.330"),
];

#[test]
fn the_pi_fixture_totals_are_those_pi_shows() {
    let Some(shared) = session_test_support::shared_dir("the_pi_fixture_totals_are_those_pi_shows")
    else {
        return;
    };
    let bytes = std::fs::read(shared.join("fixtures/pi-large-session-v1.jsonl")).unwrap();
    let s = session_usage(&bytes, None);
    assert_eq!(
        s.session_id.as_deref(),
        Some("d703a1a9-1b7b-4fb1-b512-c9738b1fe617")
    );
    assert_eq!(s.version, None);
    assert_eq!(s.invalid_lines, 0);
    let t = s.totals();
    let shown: Vec<(&str, String)> = pi_header(&t);
    let want: Vec<(&str, String)> = PI_HEADER
        .iter()
        .map(|(k, v)| (*k, (*v).to_owned()))
        .collect();
    assert_eq!(shown, want);
    // The exact figures behind pi's rounded ones (ours; consistent with the header above).
    assert_eq!(t.messages, 914);
    assert_eq!(
        (t.role("user"), t.assistant_messages, t.role("toolResult")),
        (88, 453, 373)
    );
    assert_eq!(t.without_usage, 0);
    assert_eq!(t.tool_calls, 391);
    assert_eq!(
        (
            t.usage.input,
            t.usage.output,
            t.usage.cache_read,
            t.usage.cache_write
        ),
        (1049.0, 83156.0, 43_229_469.0, 4_296_232.0)
    );
    assert_eq!(t.usage.total_tokens(), 47_609_906.0);
    assert_eq!(
        session_query::usage::js_to_fixed(t.usage.cost(), 9),
        "30.330197700"
    );
}
