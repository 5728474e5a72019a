//! `doctor_import` re-derives, byte for byte, what the real `openclaw@2026.9.6` doctor import
//! stored for each line-kind probe of `fixtures/openclaw-9.6-sqlite/expected/probe-results.json`
//! (openclaw-sqlite.md §3, §4.6, §6.7), and for the six fixture sessions (`source/` against
//! `expected/*.lines.jsonl`). The probe inputs are rebuilt here exactly as the fixture's
//! `probe-line-kinds.mjs` builds them; the expected rows are the reference's.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use session_format::doctor_import::{
    Derivation, Dropped, LineChange, ReadStop, Transform, derive, line_changes, parse_v1_id,
    read_transcript, v1_id_prefix,
};
use session_format::json::{JsString, write_string_pub};

const SID: &str = "77777777-7777-4777-8777-777777777777";
const BASE_MS: u64 = 1_782_900_000_000;
const USAGE: &str = r#"{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}"#;

fn q(s: &str) -> String {
    let mut out = Vec::new();
    write_string_pub(&JsString::new(s), &mut out);
    String::from_utf8(out).unwrap()
}

fn iso(i: u64) -> String {
    format!("2026-07-01T10:00:{i:02}.000Z")
}

fn id_or_null(p: Option<&str>) -> String {
    p.map_or("null".to_owned(), q)
}

fn hdr() -> String {
    format!(
        r#"{{"type":"session","version":3,"id":"{SID}","timestamp":"{}","cwd":"/tmp/w"}}"#,
        iso(0)
    )
}

fn u(id: &str, p: Option<&str>, text: &str, i: u64) -> String {
    format!(
        r#"{{"type":"message","id":{},"parentId":{},"timestamp":"{}","message":{{"role":"user","content":[{{"type":"text","text":{}}}],"timestamp":{}}}}}"#,
        q(id),
        id_or_null(p),
        iso(i),
        q(text),
        BASE_MS + i * 1000
    )
}

fn a_with(id: &str, p: &str, text: &str, i: u64, api: &str, provider: &str) -> String {
    format!(
        r#"{{"type":"message","id":{},"parentId":{},"timestamp":"{}","message":{{"role":"assistant","content":[{{"type":"text","text":{}}}],"api":{},"provider":{},"model":"m","usage":{USAGE},"stopReason":"stop","timestamp":{}}}}}"#,
        q(id),
        q(p),
        iso(i),
        q(text),
        q(api),
        q(provider),
        BASE_MS + i * 1000
    )
}

fn a(id: &str, p: &str, text: &str, i: u64) -> String {
    a_with(id, p, text, i, "anthropic-messages", "anthropic")
}

fn lines(ls: &[String]) -> String {
    let mut s = ls.join("\n");
    s.push('\n');
    s
}

fn big(n: usize) -> String {
    "All work and no play makes Jack a dull boy. "
        .repeat(n.div_ceil(44))
        .chars()
        .take(n)
        .collect()
}

/// The probe sources, as `probe-line-kinds.mjs` writes them.
fn probes() -> Vec<(&'static str, Vec<u8>)> {
    let s = |x: &str| x.to_owned();
    let mut v: Vec<(&'static str, Vec<u8>)> = vec![
        ("canonical-control", lines(&[hdr(), u("u1", None, "hi", 1), a("a1", "u1", "hello", 2)]).into_bytes()),
        ("json-with-spaces", lines(&[hdr(), format!(r#"{{"type": "message", "id": "u1", "parentId": null, "timestamp": "{}", "message": {{"role": "user", "content": [{{"type": "text", "text": "spaced"}}], "timestamp": {BASE_MS}}}}}"#, iso(1)), a("a1", "u1", "ok", 2)]).into_bytes()),
        ("number-forms", lines(&[hdr(), u("u1", None, "n", 1), format!(r#"{{"type":"message","id":"a1","parentId":"u1","timestamp":"{}","message":{{"role":"assistant","content":[{{"type":"text","text":"n"}}],"api":"x","provider":"anthropic","model":"m","usage":{{"input":1.0,"output":1e3,"cacheRead":1E2,"cacheWrite":-0,"totalTokens":0.10,"cost":{{"input":12345678901234567890,"output":0,"cacheRead":0,"cacheWrite":0,"total":5e-7}}}},"stopReason":"stop","timestamp":{BASE_MS}}}}}"#, iso(2))]).into_bytes()),
        ("integer-like-keys", lines(&[hdr(), u("u1", None, "k", 1), format!(r#"{{"type":"message","id":"a1","parentId":"u1","timestamp":"{}","message":{{"role":"assistant","content":[{{"type":"text","text":"k"}}],"api":"x","provider":"anthropic","model":"m","usage":{USAGE},"stopReason":"stop","timestamp":{BASE_MS},"meta":{{"b":1,"2":"two","1":"one"}}}}}}"#, iso(2))]).into_bytes()),
        ("duplicate-keys", lines(&[hdr(), u("u1", None, "d", 1), format!(r#"{{"type":"message","id":"a1","parentId":"u1","timestamp":"{}","message":{{"role":"assistant","content":[{{"type":"text","text":"first"}}],"content":[{{"type":"text","text":"second"}}],"api":"x","provider":"anthropic","model":"m","usage":{USAGE},"stopReason":"stop","timestamp":{BASE_MS}}}}}"#, iso(2))]).into_bytes()),
        ("assistant-string-content", lines(&[hdr(), u("u1", None, "s", 1), format!(r#"{{"type":"message","id":"a1","parentId":"u1","timestamp":"{}","message":{{"role":"assistant","content":"plain string","api":"x","provider":"anthropic","model":"m","usage":{USAGE},"stopReason":"stop","timestamp":{BASE_MS}}}}}"#, iso(2))]).into_bytes()),
        ("toolresult-object-content", lines(&[hdr(), u("u1", None, "t", 1), format!(r#"{{"type":"message","id":"a1","parentId":"u1","timestamp":"{}","message":{{"role":"assistant","content":[{{"type":"toolCall","id":"call1","name":"read","arguments":{{}}}}],"api":"x","provider":"anthropic","model":"m","usage":{USAGE},"stopReason":"toolUse","timestamp":{BASE_MS}}}}}"#, iso(2)), format!(r#"{{"type":"message","id":"t1","parentId":"a1","timestamp":"{}","message":{{"role":"toolResult","toolCallId":"call1","toolName":"read","isError":false,"content":{{"type":"text","text":"obj"}},"timestamp":{BASE_MS}}}}}"#, iso(3))]).into_bytes()),
        ("crlf", ([hdr(), u("u1", None, "crlf", 1), a("a1", "u1", "crlf", 2)].join("\r\n") + "\r\n").into_bytes()),
        ("bom", format!("\u{FEFF}{}", lines(&[hdr(), u("u1", None, "bom", 1), a("a1", "u1", "bom", 2)])).into_bytes()),
        ("blank-and-padded-lines", format!("\n{}\n\n   \n  {}  \n\t\n{}\n\n", hdr(), u("u1", None, "padded", 1), a("a1", "u1", "x", 2)).into_bytes()),
        ("non-object-lines", lines(&[hdr(), u("u1", None, "x", 1), s("null"), s("[]"), s("42"), s("\"str\""), s("false"), a("a1", "u1", "after", 2)]).into_bytes()),
        ("torn-tail-only", (lines(&[hdr(), u("u1", None, "x", 1), a("a1", "u1", "y", 2)]) + r#"{"type":"message","id":"u2","parentId":"a1","timest"#).into_bytes()),
        ("codex-provider", lines(&[hdr(), u("u1", None, "c", 1), a_with("a1", "u1", "codex", 2, "openai-codex-responses", "openai-codex")]).into_bytes()),
        ("duplicate-line", lines(&[hdr(), u("u1", None, "x", 1), a("a1", "u1", "y", 2), a("a1", "u1", "y", 2), u("u2", Some("a1"), "z", 1)]).into_bytes()),
        ("same-id-different-bytes", lines(&[hdr(), u("u1", None, "x", 1), a("a1", "u1", "first", 2), a("a1", "u1", "second", 2)]).into_bytes()),
        ("header-minimal", lines(&[format!(r#"{{"type":"session","version":3,"id":"{SID}"}}"#), u("u1", None, "x", 1), a("a1", "u1", "y", 2)]).into_bytes()),
        ("header-extra-fields-order", lines(&[format!(r#"{{"version":3,"cwd":"/w","type":"session","id":"{SID}","timestamp":"{}","parentSession":"/old.jsonl","custom":{{"z":1}}}}"#, iso(0)), u("u1", None, "x", 1)]).into_bytes()),
        ("v2-hookmessage", lines(&[format!(r#"{{"type":"session","version":2,"id":"{SID}","timestamp":"{}","cwd":"/w"}}"#, iso(0)), u("u1", None, "x", 1), format!(r#"{{"type":"message","id":"h1","parentId":"u1","timestamp":"{}","message":{{"role":"hookMessage","content":"hooked","timestamp":{BASE_MS}}}}}"#, iso(2))]).into_bytes()),
        ("opaque-and-leaf-rows", lines(&[hdr(), u("u1", None, "x", 1), a("a1", "u1", "y", 2), s(r#"{"type":"x-plugin-thing","id":"p1","parentId":"a1","data":{"k":1}}"#), u("u2", Some("a1"), "z", 3), a("a2", "u2", "w", 4), s(r#"{"type":"leaf","id":"lf1","parentId":"a2","targetId":"a1"}"#)]).into_bytes()),
        ("headerless", lines(&[u("u1", None, "x", 1), a("a1", "u1", "y", 2)]).into_bytes()),
        ("line-3MiB-compressible", lines(&[hdr(), u("u1", None, "big", 1), a("a1", "u1", &big(3 * 1024 * 1024), 2)]).into_bytes()),
        ("line-5MiB-compressible", lines(&[hdr(), u("u1", None, "big", 1), a("a1", "u1", &big(5 * 1024 * 1024), 2), u("u2", Some("a1"), "after big", 1)]).into_bytes()),
    ];
    let mut small = lines(&[hdr(), u("u1", None, "x", 1)]).into_bytes();
    small.extend_from_slice(&[0xFF, 0xFE]);
    small.extend_from_slice(
        format!("\n{}", lines(&[a("a1", "u1", "after bad bytes", 2)])).as_bytes(),
    );
    v.push(("invalid-utf8-small-file", small));
    let mut many = vec![hdr()];
    for i in 0..40usize {
        many.push(if i % 2 == 1 {
            a(&format!("a{i}"), &format!("u{}", i - 1), &big(1800), 2)
        } else {
            let p = (i > 0).then(|| format!("a{}", i - 1));
            u(&format!("u{i}"), p.as_deref(), &big(1800), 1)
        });
    }
    let mut after = lines(&many).into_bytes();
    after.push(0xFF);
    after.extend_from_slice(
        format!("\n{}", lines(&[u("u99", Some("a39"), "after bad byte", 1)])).as_bytes(),
    );
    v.push(("invalid-utf8-after-64KiB", after));
    v
}

fn utf16_len(s: &str) -> usize {
    s.encode_utf16().count()
}

/// The 16-hex prefix of the first generated id among the record's stored rows, if any.
fn recorded_prefix(record: &serde_json::Value) -> Option<String> {
    record["rows"].as_array()?.iter().find_map(|r| {
        let stored = r["stored"].as_str()?;
        let at = stored.find(r#""id":""#)? + 6;
        let id: String = stored[at..].chars().take_while(|c| *c != '"').collect();
        parse_v1_id(&id).map(|(p, _)| p.to_owned())
    })
}

#[test]
fn every_probe_record_is_re_derived_byte_for_byte() {
    let Some(shared) =
        session_test_support::shared_dir("every_probe_record_is_re_derived_byte_for_byte")
    else {
        return;
    };
    let path = shared.join("fixtures/openclaw-9.6-sqlite/expected/probe-results.json");
    let results: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let results = results["results"].as_object().unwrap();
    let probes = probes();
    assert_eq!(
        probes.len(),
        results.len(),
        "one rebuilt source per probe record"
    );
    for (name, source) in &probes {
        let record = &results[*name];
        let read = read_transcript(source);
        // Headerless v1 ids: the probe ran in a temporary state dir whose path the record does
        // not give, so the prefix is taken from its stored rows (checked for the 16 hex form).
        let prefix = recorded_prefix(record).unwrap_or_else(|| "0000000000000000".to_owned());
        let d: Derivation = derive(&read, SID, &prefix);
        let stored: Vec<&str> = d.stored().map(|r| r.text.as_str()).collect();
        let rows = record["rows"].as_array().unwrap();
        assert_eq!(stored.len(), rows.len(), "{name}: row count");
        assert_eq!(
            record["importedTranscriptEvents"].as_u64().unwrap() as usize,
            stored.len(),
            "{name}: importedTranscriptEvents"
        );
        let source_text = String::from_utf8_lossy(source);
        let source_lines: Vec<&str> = source_text
            .split('\n')
            .filter(|l| !l.trim().is_empty())
            .collect();
        for (row, text) in rows.iter().zip(&stored) {
            let seq = &row["seq"];
            assert_eq!(
                row["bytes"].as_u64().unwrap() as usize,
                text.len(),
                "{name} seq {seq}: byte length"
            );
            let identical = row["identical"].as_bool().unwrap();
            assert_eq!(
                source_lines.contains(text),
                identical,
                "{name} seq {seq}: identical to a source line"
            );
            if !identical {
                let rec = row["stored"].as_str().unwrap();
                match rec.rfind("…(") {
                    Some(cut) if rec.ends_with(" chars)") => {
                        let n: usize = rec[cut + "…(".len()..rec.len() - " chars)".len()]
                            .parse()
                            .unwrap();
                        assert_eq!(utf16_len(text), n, "{name} seq {seq}: length");
                        assert!(
                            text.starts_with(&rec[..cut]),
                            "{name} seq {seq}: {text}\nvs {rec}"
                        );
                    }
                    _ => assert_eq!(*text, rec, "{name} seq {seq}"),
                }
            }
        }
        // The read stops exactly where doctor's did, with its line number and JSON position.
        let issues = record["issues"].as_array().unwrap();
        let malformed = issues.iter().find(|i| i["code"] == "transcript_malformed");
        match (&read.stop, malformed) {
            (None, None) => {}
            (Some(ReadStop::Json { error, .. }), Some(issue)) => {
                let msg = issue["message"].as_str().unwrap();
                assert!(
                    msg.contains(&format!("at position {} ", error.offset)),
                    "{name}: {msg} vs {error:?}"
                );
            }
            (Some(ReadStop::Utf8 { line, .. }), Some(issue)) => {
                let msg = issue["message"].as_str().unwrap();
                assert!(
                    msg.contains(&format!(".jsonl:{line}: TypeError")),
                    "{name}: {msg} vs line {line}"
                );
            }
            (stop, issue) => panic!("{name}: stop {stop:?} vs issue {issue:?}"),
        }
        let mismatch = issues
            .iter()
            .any(|i| i["code"] == "sqlite_transcript_count_mismatch");
        let conflicts = d
            .rows
            .iter()
            .filter(|r| matches!(r.dropped, Some(Dropped::IdConflict { .. })))
            .count();
        assert_eq!(mismatch, conflicts > 0, "{name}: id conflicts");
    }
}

#[test]
fn probe_transforms_and_line_changes_are_named() {
    let probes = probes();
    let get = |n: &str| probes.iter().find(|(k, _)| *k == n).unwrap().1.clone();
    let derive_of = |n: &str| derive(&read_transcript(&get(n)), SID, "0123456789abcdef");
    let row_transforms = |n: &str, i: usize| derive_of(n).rows[i].transforms.clone();
    assert_eq!(
        row_transforms("assistant-string-content", 2),
        [Transform::ContentWrapped]
    );
    assert_eq!(
        row_transforms("toolresult-object-content", 3),
        [Transform::ContentWrapped]
    );
    assert_eq!(
        row_transforms("codex-provider", 2),
        [Transform::CodexRename]
    );
    assert_eq!(
        row_transforms("header-minimal", 0),
        [Transform::HeaderDefaults]
    );
    assert_eq!(
        row_transforms("v2-hookmessage", 0),
        [Transform::HeaderVersion]
    );
    assert_eq!(
        row_transforms("v2-hookmessage", 2),
        [Transform::HookMessage]
    );
    assert_eq!(row_transforms("headerless", 0), [Transform::V1Ids]);
    assert_eq!(
        derive_of("duplicate-line").rows[3].dropped,
        Some(Dropped::RepeatedRow { of: 2 })
    );
    let line = |n: &str, i: usize| {
        let src = get(n);
        let text = String::from_utf8_lossy(&src).into_owned();
        let l: Vec<&str> = text.split('\n').filter(|l| !l.trim().is_empty()).collect();
        line_changes(l[i].as_bytes())
    };
    assert_eq!(line("json-with-spaces", 1), [LineChange::Whitespace]);
    assert_eq!(
        line("number-forms", 2),
        [LineChange::NumberForm, LineChange::NumberPrecision]
    );
    assert_eq!(line("integer-like-keys", 2), [LineChange::IntegerKeyOrder]);
    assert_eq!(line("duplicate-keys", 2), [LineChange::DuplicateKey]);
    assert_eq!(line("crlf", 0), [LineChange::Padding]);
    assert_eq!(line("bom", 0), [LineChange::Padding]);
    assert_eq!(line("blank-and-padded-lines", 1), [LineChange::Padding]);
    assert_eq!(line("canonical-control", 2), []);
}

const FIXTURE: [(&str, &str); 6] = [
    ("dm-branch-label", "11111111-1111-4111-8111-111111111111"),
    ("compaction", "22222222-2222-4222-8222-222222222222"),
    ("large-zstd", "33333333-3333-4333-8333-333333333333"),
    ("unicode-escapes", "44444444-4444-4444-8444-444444444444"),
    (
        "malformed-mid-torn-tail",
        "55555555-5555-4555-8555-555555555555",
    ),
    ("v1-no-ids", "66666666-6666-4666-8666-666666666666"),
];

#[test]
fn the_fixture_sessions_are_re_derived_byte_for_byte() {
    let Some(shared) =
        session_test_support::shared_dir("the_fixture_sessions_are_re_derived_byte_for_byte")
    else {
        return;
    };
    let dir = shared.join("fixtures/openclaw-9.6-sqlite");
    for (name, sid) in FIXTURE {
        let source = std::fs::read(dir.join(format!("source/{name}.jsonl"))).unwrap();
        let expected =
            std::fs::read_to_string(dir.join(format!("expected/{name}.lines.jsonl"))).unwrap();
        // The v1 ids were made from the fixture run's temporary path, which the manifest hides
        // (`<STATE>`): the prefix is the one the expected rows carry.
        let prefix = expected
            .split("\"id\":\"")
            .skip(1)
            .find_map(|s| parse_v1_id(s.split('"').next().unwrap()).map(|(p, _)| p.to_owned()))
            .unwrap_or_else(|| v1_id_prefix(b"/nowhere", sid));
        let d = derive(&read_transcript(&source), sid, &prefix);
        let got: String = d.stored().map(|r| format!("{}\n", r.text)).collect();
        assert_eq!(got, expected, "{name}");
    }
    // The broken session stops at line 5 (the unparseable line), not at the torn tail.
    let source = std::fs::read(dir.join("source/malformed-mid-torn-tail.jsonl")).unwrap();
    match read_transcript(&source).stop {
        Some(ReadStop::Json { span, torn, error }) => {
            assert_eq!((span.line, torn, error.offset), (5, false, 29));
            let before: usize = source[..span.offset]
                .iter()
                .filter(|b| **b == b'\n')
                .count();
            assert_eq!(before, 4);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_v1_prefix_is_sha256_of_path_nul_session_id() {
    // sha256("/s/agents/main/sessions/x.jsonl\0x"), first 16 hex digits (computed independently
    // with `printf '/s/agents/main/sessions/x.jsonl\0x' | sha256sum`).
    assert_eq!(
        v1_id_prefix(b"/s/agents/main/sessions/x.jsonl", "x"),
        SHA_OF_SAMPLE
    );
}

const SHA_OF_SAMPLE: &str = "ac828b6b6d719a59";
