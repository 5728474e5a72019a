//! Human output is safe to print: Markdown code spans follow CommonMark, and control and bidi
//! characters never reach the terminal raw.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::support::*;
use session_format::json::{JsValue, parse_value};

fn json(text: &str) -> JsValue {
    parse_value(text.as_bytes()).unwrap()
}

/// True when `s` holds a character that must not reach a terminal raw (newlines aside).
fn has_raw_controls(s: &str) -> bool {
    s.chars().any(|c| {
        (c.is_control() && c != '\n')
            || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}')
    })
}

// ---------------------------------------------------------------------------------------
// Markdown code spans

#[test]
fn markdown_code_spans_are_commonmark() {
    let dir = tempdir();
    let d = dir.path();
    let rows = vec![
        HEADER.replace("\"cwd\":\"/tmp\"", "\"cwd\":\"/tmp/we`ird_dir\""),
        msg("u1", None, "user", "weather?"),
        r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"weather_forecast","arguments":{}},{"type":"toolCall","id":"c2","name":"it`s","arguments":{}}],"provider":"p","model":"m"}}"#.to_owned(),
        r#"{"type":"message","id":"r1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"weather_forecast","content":[{"type":"text","text":"sunny"}],"isError":false}}"#.to_owned(),
        r#"{"type":"custom_message","id":"x1","parentId":"r1","timestamp":"2026-01-01T00:00:04.000Z","customType":"`tick`","content":"hi","display":true}"#.to_owned(),
    ];
    plant(&d.join("md.jsonl"), &lines(&rows));
    let r = run_in_timeout(d, ["export", "md.jsonl", "--format", "md"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = &r.stdout;
    for want in [
        "- Working directory: ``/tmp/we`ird_dir``\n",
        "**→ tool call `weather_forecast`**\n",
        "**→ tool call ``it`s``**\n",
        "### Tool result `weather_forecast` · `r1` · 2026-01-01T00:00:03.000Z\n",
        "### Custom message `` `tick` `` · `x1` · 2026-01-01T00:00:04.000Z\n",
    ] {
        assert!(out.contains(want), "missing {want:?} in\n{out}");
    }
    assert!(!out.contains("weather\\_forecast"), "{out}");
}

// ---------------------------------------------------------------------------------------
// control characters never reach the terminal

#[test]
fn control_and_bidi_characters_are_escaped_in_human_output() {
    let dir = tempdir();
    let sessions = dir.path().join("agents/main/sessions");
    let rows = vec![
        HEADER.to_owned(),
        r#"{"type":"message","id":"ü\u202e\u0000x","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"rtl \u202e text\u0007bell \u001b[31mred"}],"timestamp":1767225601000}}"#.to_owned(),
        r#"{"type":"session_info","id":"n1","parentId":"ü\u202e\u0000x","timestamp":"2026-01-01T00:00:02.000Z","name":"na\u2066me\u0000"}"#.to_owned(),
        r#"{"type":"label","id":"l1","parentId":"n1","timestamp":"2026-01-01T00:00:03.000Z","targetId":"n1","label":"la\u001bbel"}"#.to_owned(),
    ];
    plant(&sessions.join("c.jsonl"), &lines(&rows));
    let f = sessions.join("c.jsonl");
    let f = f.to_str().unwrap();
    for args in [
        vec!["tree", f],
        vec!["context", f],
        vec!["list", "--root", dir.path().to_str().unwrap()],
        vec!["export", f, "--format", "md"],
    ] {
        let r = run_in_timeout(dir.path(), &args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert!(!has_raw_controls(&r.stdout), "{args:?}: {:?}", r.stdout);
        assert!(!has_raw_controls(&r.stderr), "{args:?}: {:?}", r.stderr);
    }
    let r = run_in_timeout(dir.path(), ["tree", f]);
    assert!(
        r.stdout.contains(
            "● ü\\u{202e}\\u{0}x user          rtl \\u{202e} text\\u{7}bell \\u{1b}[31mred\n"
        ),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("[la\\u{1b}bel]"), "{}", r.stdout);
    // JSON output stays exact.
    let r = run_in_timeout(dir.path(), ["tree", "--json", f]);
    let v = json(&r.stdout);
    let first = &v.get("nodes").and_then(JsValue::as_array).unwrap()[0];
    assert_eq!(
        first.get("id").and_then(JsValue::as_str_lossy).as_deref(),
        Some("ü\u{202e}\u{0}x")
    );
}
