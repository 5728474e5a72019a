//! `session_query::usage::session_usage` (each line read once, typed) gives exactly what
//! `session_usage_reference` (the envelope scan of every line, assistant messages parsed in
//! full) gives: on tricky lines, on the pi fixture, and on thousands of byte-level mutations of a
//! session (so that a line one read accepts and the other refuses would show).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use session_query::usage::{session_usage, session_usage_reference};

const HEADER: &str =
    r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;

fn tricky() -> Vec<String> {
    let a = |rest: &str| {
        format!(
            r#"{{"type":"message","id":"a","timestamp":"2026-01-02T03:04:05.000Z","message":{{"role":"assistant",{rest}}}}}"#
        )
    };
    vec![
        a(r#""content":[{"type":"toolCall","id":"1","arguments":{"x":[1,{"y":null}]}},{"type":"text","text":"é\u00e9\n"}],"provider":"p","model":"m","usage":{"input":1,"output":2.5,"cacheRead":-3,"cacheWrite":true,"cost":{"input":0.1,"output":"2","cacheRead":null,"cacheWrite":1e-7,"total":9}}"#),
        a(r#""content":"text","model":5,"provider":"","usage":null,"timestamp":1767225600000"#),
        a(r#""content":{"type":"toolCall"},"model":"","usage":[1],"model":"second wins""#),
        a(r#""content":[null,1,"toolCall",["toolCall"],{"type":"toolCall","type":"text"},{"type":"text","type":"toolCall"},{"type":{"x":1}}],"model":true,"provider":0,"usage":{"cost":5}"#),
        a(r#""content":[],"usage":{"input":1,"input":7,"cost":{"input":1,"input":2}},"usage":{"output":3}"#),
        a(r#""content":[{"type":"text","text":"\ud800 lone"}],"model":"m\udc00""#),
        a(r#""content":[{"type":"tool\u0043all"}],"model":"\u00e9","usage":{"input":12345678901234567890,"output":1.7976931348623157e308,"cacheRead":5e-324,"cacheWrite":-0}"#),
        // Duplicate top-level keys: the last message (and type) wins.
        r#"{"type":"message","message":{"role":"assistant","content":[],"usage":{"input":1}},"message":{"role":"assistant","content":[],"usage":{"input":2}}}"#.to_owned(),
        r#"{"type":"compaction","type":"message","id":"x","id":5,"message":{"role":"user"},"timestamp":"2026-01-01T00:00:00Z","timestamp":"bad"}"#.to_owned(),
        r#"{"type":"message","timestamp":"not a date","message":{"role":"user","timestamp":1767225600000}}"#.to_owned(),
        r#"{"type":"message","timestamp":{"a":1},"message":{"role":"toolResult","timestamp":"2026-01-01"}}"#.to_owned(),
        r#"{"type":"message","message":[1,2]}"#.to_owned(),
        r#"{"type":"message","message":"x","id":"\ud800"}"#.to_owned(),
        r#"{"type":"message","id":"e\u0301","message":{"role":"hookMessage"}}"#.to_owned(),
        r#"{"type":5,"message":{"role":"assistant"}}"#.to_owned(),
        r#"{"type":"custom_message","id":"c","timestamp":1767225600000.9}"#.to_owned(),
        r#"{"type":"branch_summary","id":"b","timestamp":-1e300}"#.to_owned(),
        // Deeper than serde_json's limit (128) in a skipped value.
        format!(r#"{{"type":"message","id":"deep","message":{{"role":"assistant","content":[],"x":{}{}}}}}"#, "[".repeat(300), "]".repeat(300)),
        // A raw control character inside a string: not JSON.
        "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"a\u{1}b\"}}".to_owned(),
        // Invalid UTF-8 is handled by the byte-level test below; trailing garbage, CR, spaces.
        r#"{"type":"message","message":{"role":"user"}} x"#.to_owned(),
        "{\"type\":\"message\",\"message\":{\"role\":\"user\"}}\r".to_owned(),
        "  {\"type\":\"message\",\"message\":{\"role\":\"user\"}}  ".to_owned(),
        "\u{a0}{\"type\":\"message\",\"message\":{\"role\":\"user\"}}".to_owned(),
        r#"{"type":"message","message":{"role":"user"},}"#.to_owned(),
        r#"[{"type":"message"}]"#.to_owned(),
        r#"{"type":"session","version":3,"id":"second header"}"#.to_owned(),
    ]
}

fn file(header: &str, rows: &[String]) -> Vec<u8> {
    let mut s = String::from(header);
    s.push('\n');
    for r in rows {
        s.push_str(r);
        s.push('\n');
    }
    s.into_bytes()
}

fn same(bytes: &[u8]) {
    assert_eq!(
        session_usage(bytes, None),
        session_usage_reference(bytes, None),
        "{}",
        String::from_utf8_lossy(bytes)
    );
}

#[test]
fn tricky_lines_read_the_same() {
    let rows = tricky();
    for r in &rows {
        same(&file(HEADER, std::slice::from_ref(r)));
    }
    let all = file(HEADER, &rows);
    same(&all);
    let s = session_usage(&all, None);
    // Pinned, so that both reads cannot agree on nothing.
    // 16 entries, the two lines with JSON whitespace around them, and the deep one (the full
    // parse has no nesting limit below 300).
    assert_eq!(s.records.len(), 19);
    assert_eq!(s.invalid_lines, 4);
    let t = s.totals();
    assert_eq!(t.assistant_messages, 9);
    assert_eq!(t.usage.input, 1.0 + 2.0 + 12_345_678_901_234_567_890.0);
    // v2: hookMessage is custom in both reads.
    same(&file(r#"{"type":"session","version":2,"id":"s"}"#, &rows));
    // A BOM before the header, JavaScript whitespace after the last line, CRLF everywhere.
    let mut bom = "\u{feff}".as_bytes().to_vec();
    bom.extend(file(HEADER, &rows));
    bom.extend("\u{a0}\u{2028}".as_bytes());
    same(&bom);
    same(
        String::from_utf8(file(HEADER, &rows))
            .unwrap()
            .replace('\n', "\r\n")
            .as_bytes(),
    );
}

#[test]
fn the_pi_fixture_reads_the_same() {
    let Some(shared) = session_test_support::shared_dir("the_pi_fixture_reads_the_same") else {
        return;
    };
    let bytes = std::fs::read(shared.join("fixtures/pi-large-session-v1.jsonl")).unwrap();
    same(&bytes);
}

#[test]
fn byte_mutations_read_the_same() {
    let base = file(HEADER, &tricky()[..8]);
    // A small deterministic generator (xorshift), no dependency.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let alphabet = b"{}[]\":,\\ \n\r0123456789.-+eEtrufalsn\x00\x1f\xff\xc3\xa9abcu";
    for _ in 0..4000 {
        let mut b = base.clone();
        for _ in 0..(1 + next() % 3) {
            let at = (next() as usize) % b.len();
            match next() % 3 {
                0 => b[at] = alphabet[(next() as usize) % alphabet.len()],
                1 => {
                    b.remove(at);
                }
                _ => b.insert(at, alphabet[(next() as usize) % alphabet.len()]),
            }
        }
        same(&b);
    }
}
