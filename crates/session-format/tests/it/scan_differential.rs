//! The indexed envelope scan (`EnvelopeScanner::scan`, SIMD bitmaps per 64 bytes) against the
//! byte-by-byte reference (`scan_scalar`): the whole `Envelope` on success, kind and offset on
//! error, for random lines, adversarial lines built around the 8/16/32/64-byte block boundaries,
//! long strings, deep nesting, and every line of the real fixtures under `../shared`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::Path;

use proptest::prelude::*;
use session_format::json::{EnvelopeScanner, JsValue, JsonErrorKind, to_json_string};
use session_format::line::lines;

/// Asserts that the indexed scan and `top_level_field` agree with the byte-by-byte reference on
/// `line`.
fn same(line: &[u8]) {
    let mut fast = EnvelopeScanner::new();
    let mut slow = EnvelopeScanner::new();
    let a = fast.scan(line);
    let b = slow.scan_scalar(line);
    assert_eq!(a, b, "scan differs on {:?}", String::from_utf8_lossy(line));
    for key in [&b"id"[..], b"timestamp"] {
        let a = fast.top_level_field(line, key);
        let b = slow.top_level_field_scalar(line, key);
        assert_eq!(
            a,
            b,
            "top_level_field differs on {:?}",
            String::from_utf8_lossy(line)
        );
    }
}

/// Bytes that matter to a string skip, and some that do not.
fn byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        4 => prop::sample::select(b"\"\\u\\\"\\\\/bfnrt0aF9gG{}[],: ".to_vec()),
        1 => 0u8..0x20,
        1 => 0x80u8..=0xFF,
        2 => any::<u8>(),
    ]
}

/// What goes at a boundary: a backslash run, a `\u` escape (whole, cut, bad, lone surrogate),
/// a control byte, an invalid UTF-8 byte, a quote.
fn special() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        (
            1usize..=70,
            prop::sample::select(b"\"\\/bfnrtux0 \x01\xff".to_vec())
        )
            .prop_map(|(n, c)| {
                let mut v = vec![b'\\'; n];
                v.push(c);
                v
            }),
        prop::sample::select(vec![
            &b"\\u00e9"[..],
            b"\\uD83D\\uDE00",
            b"\\ud800",
            b"\\udc00x",
            b"\\uDBFF\\u0041",
            b"\\u12",
            b"\\u12G4",
            b"\\u",
            b"\\u\"123",
            b"\\u00\"",
            b"\\",
            b"\"",
            b"\\\"",
            b"\x00",
            b"\x1f",
            b"\x7f",
            b"\xc3",
            b"\xc3\xa9",
            b"\xed\xa0\x80",
            b"\xf0\x9f\x98\x80",
            b"\xff\xfe",
        ])
        .prop_map(<[u8]>::to_vec),
        prop::collection::vec(byte(), 1..6),
    ]
}

/// A line with `special` placed `pad` bytes into a string that starts at `lead` (so it lands on
/// every offset around the block boundaries), optionally inside a key, nested `depth` deep.
fn adversarial() -> impl Strategy<Value = Vec<u8>> {
    (
        0usize..70,
        0usize..140,
        special(),
        prop::collection::vec(special(), 0..3),
        0usize..4,
        0usize..6,
        any::<bool>(),
    )
        .prop_map(|(lead, pad, sp, more, tail, depth, in_key)| {
            let mut v = Vec::new();
            v.extend_from_slice(br#"{"type":"message","x":""#);
            v.extend(std::iter::repeat_n(b'a', lead));
            v.extend_from_slice(br#"","#);
            for _ in 0..depth {
                v.extend_from_slice(br#""n":{"#);
            }
            v.extend_from_slice(br#""id":"#);
            if in_key {
                v.extend_from_slice(br#"{""#);
            } else {
                v.push(b'"');
            }
            v.extend(std::iter::repeat_n(b'b', pad));
            v.extend_from_slice(&sp);
            for s in &more {
                v.extend(std::iter::repeat_n(b'c', pad % 17));
                v.extend_from_slice(s);
            }
            v.extend(std::iter::repeat_n(b'd', tail));
            if in_key {
                v.extend_from_slice(br#"":1}"#);
            } else {
                v.push(b'"');
            }
            v.extend(std::iter::repeat_n(b'}', depth));
            v.extend_from_slice(br#","parentId":null}"#);
            v
        })
}

/// Valid lines (any JSON value as a field), then one byte replaced, inserted or removed.
fn mutated() -> impl Strategy<Value = Vec<u8>> {
    let leaf = prop_oneof![
        Just(JsValue::Null),
        any::<bool>().prop_map(JsValue::Bool),
        (-1e6f64..1e6).prop_map(JsValue::Number),
        any::<String>().prop_map(JsValue::from),
        prop::collection::vec(any::<u16>(), 0..80)
            .prop_map(|u| JsValue::String(session_format::json::JsString::from_utf16(&u))),
    ];
    let value = leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(JsValue::Array),
            prop::collection::vec((any::<String>(), inner), 0..5).prop_map(|kv| {
                JsValue::Object(
                    kv.into_iter()
                        .map(|(k, v)| (session_format::json::JsString::new(k), v))
                        .collect(),
                )
            }),
        ]
    });
    (value, 0usize..3, any::<prop::sample::Index>(), byte()).prop_map(|(v, op, at, b)| {
        let line = format!(
            r#"{{"type":"message","id":"a1b2c3d4","message":{{"role":"user","content":{}}}}}"#,
            to_json_string(&v)
        );
        let mut bytes = line.into_bytes();
        let i = at.index(bytes.len());
        match op {
            0 => bytes[i] = b,
            1 => bytes.insert(i, b),
            _ => {
                bytes.remove(i);
            }
        }
        bytes
    })
}

/// Raw JSON text (not produced by a serializer): numbers in every grammar form, literals,
/// strings with escapes and structural bytes inside, spaces between tokens, keys that are (or,
/// escaped, decode to) envelope field names, nested `role` keys.
fn raw_value() -> impl Strategy<Value = String> {
    let number = prop::sample::select(vec![
        "0",
        "-0",
        "7",
        "-12",
        "10",
        "3.25",
        "-0.5",
        "1e5",
        "1E+5",
        "2e-3",
        "0.0e0",
        "12345678901234567890",
        "1.5E-300",
    ]);
    let string = prop::collection::vec(
        prop::sample::select(vec![
            "a", "é", "😀", " ", "{", "}", "[", "]", ":", ",", "\\\"", "\\\\", "\\/", "\\n", "\\t",
            "\\u00e9", "\\ud800", "\\uDE00", "xyz", "12", "true",
        ]),
        0..12,
    )
    .prop_map(|parts| format!("\"{}\"", parts.concat()));
    let leaf = prop_oneof![
        number.prop_map(str::to_owned),
        prop::sample::select(vec!["true", "false", "null"]).prop_map(str::to_owned),
        string.clone(),
    ];
    let key = prop_oneof![
        3 => string,
        2 => prop::sample::select(vec![
            "\"type\"", "\"id\"", "\"parentId\"", "\"message\"", "\"appendMode\"", "\"role\"",
            "\"ty\\u0070e\"", "\"r\\u006fle\"", "\"i\\u0064\"", "\"x\\\\\"",
        ])
        .prop_map(str::to_owned),
    ];
    let sp = || prop::sample::select(vec!["", "", "", " ", "  "]);
    leaf.prop_recursive(6, 48, 6, move |inner| {
        prop_oneof![
            (
                prop::collection::vec((sp(), inner.clone(), sp()), 0..5),
                sp()
            )
                .prop_map(|(items, end)| {
                    let items: Vec<String> = items
                        .into_iter()
                        .map(|(a, v, b)| format!("{a}{v}{b}"))
                        .collect();
                    format!("[{}{end}]", items.join(","))
                }),
            (
                prop::collection::vec((sp(), key.clone(), sp(), sp(), inner, sp()), 0..5),
                sp()
            )
                .prop_map(|(members, end)| {
                    let members: Vec<String> = members
                        .into_iter()
                        .map(|(a, k, b, c, v, d)| format!("{a}{k}{b}:{c}{v}{d}"))
                        .collect();
                    format!("{{{}{end}}}", members.join(","))
                }),
        ]
    })
}

/// A top-level object of raw members (envelope keys likely), with a lead of `pad` bytes so
/// every token lands at every block offset; then maybe one byte replaced, inserted or removed.
fn raw_line() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec(
            (
                prop::sample::select(vec![
                    "type",
                    "id",
                    "parentId",
                    "message",
                    "appendMode",
                    "timestamp",
                    "x",
                ]),
                raw_value(),
            ),
            0..6,
        ),
        0usize..70,
        0usize..4,
        any::<prop::sample::Index>(),
        byte(),
    )
        .prop_map(|(members, pad, op, at, b)| {
            let mut line = format!(r#"{{"pad":"{}""#, "p".repeat(pad));
            for (k, v) in members {
                line.push_str(&format!(r#","{k}":{v}"#));
            }
            line.push('}');
            let mut bytes = line.into_bytes();
            let i = at.index(bytes.len());
            match op {
                0 => bytes[i] = b,
                1 => bytes.insert(i, b),
                2 => {
                    bytes.remove(i);
                }
                _ => {}
            }
            bytes
        })
}

proptest! {
    // At least 1024 cases; `PROPTEST_CASES` raises it (the long differential run).
    #![proptest_config(ProptestConfig { cases: ProptestConfig::default().cases.max(1024), ..ProptestConfig::default() })]

    /// Random bytes.
    #[test]
    fn random_bytes_scan_the_same(v in prop::collection::vec(byte(), 0..300)) {
        same(&v);
        let mut q = b"\"".to_vec();
        q.extend_from_slice(&v);
        same(&q);
    }

    /// Specials at every offset around the block boundaries, in values and keys, nested.
    #[test]
    fn adversarial_lines_scan_the_same(v in adversarial()) {
        same(&v);
    }

    /// Valid lines and their one-byte mutations.
    #[test]
    fn mutated_lines_scan_the_same(v in mutated()) {
        same(&v);
    }

    /// Hand-shaped raw JSON (every number form, spaces, escaped field names, structural bytes
    /// in strings) at every block offset, as is and with one byte changed.
    #[test]
    fn raw_lines_scan_the_same(v in raw_line()) {
        same(&v);
    }
}

/// Backslash runs of 1..=70 before a quote or a letter, the string starting at each offset of
/// a 64-byte block: an even run leaves the quote closing the string, an odd one escapes it.
#[test]
fn backslash_runs_at_every_offset() {
    for lead in 0..66 {
        for run in 1..=70 {
            for after in [&b"\""[..], b"n\"", b"u0041\"", b"x\"", b"\"}"] {
                let mut v = format!(r#"{{"{}":""#, "k".repeat(lead)).into_bytes();
                v.extend(std::iter::repeat_n(b'\\', run));
                v.extend_from_slice(after);
                v.extend_from_slice(b"}");
                same(&v);
            }
        }
    }
    let mut fast = EnvelopeScanner::new();
    // 64 backslashes then a quote: escapes pair off across the block boundary.
    let even = format!(r#"{{"id":"{}"}}"#, "\\".repeat(64));
    let env = fast.scan(even.as_bytes()).unwrap();
    assert_eq!(env.id.as_str(), Some("\\".repeat(32).as_str()));
    let odd = format!(r#"{{"id":"{}"}}"#, "\\".repeat(63));
    let err = fast.scan(odd.as_bytes()).unwrap_err();
    assert_eq!((err.kind, err.offset), (JsonErrorKind::UnexpectedEnd, 72));
}

/// Strings longer than 64 KiB, with escapes, control bytes and invalid UTF-8 near the end and
/// at block boundaries.
#[test]
fn long_strings_scan_the_same() {
    let body = "é—x\\\"y".repeat(20_000);
    assert!(body.len() > 64 * 1024);
    for tail in [&b""[..], b"\\q", b"\x01", b"\xff", b"\\u12", b"\\uD800"] {
        for cut in [0usize, 1, 7, 8, 15, 16, 31, 32, 63, 64, 65] {
            let mut v = br#"{"type":"message","id":""#.to_vec();
            v.extend_from_slice(body.as_bytes());
            v.extend(std::iter::repeat_n(b'z', cut));
            v.extend_from_slice(tail);
            v.extend_from_slice(br#"","parentId":"p"}"#);
            same(&v);
            v.truncate(v.len() - 3);
            same(&v);
        }
    }
    let mut fast = EnvelopeScanner::new();
    let long = format!(r#"{{"id":"{}"}}"#, "y".repeat(70_000));
    let env = fast.scan(long.as_bytes()).unwrap();
    assert_eq!(env.id.as_str().map(str::len), Some(70_000));
}

/// Deep nesting with strings at every level, valid and cut off.
#[test]
fn deep_nesting_scans_the_same() {
    for depth in [1usize, 63, 64, 65, 1000, 1001, 5000] {
        let mut v = br#"{"id":"a","m":"#.to_vec();
        for i in 0..depth {
            v.extend_from_slice(format!(r#"{{"k{i}\"":["s\\{i}","#).as_bytes());
        }
        v.extend_from_slice(b"0");
        for _ in 0..depth {
            v.extend_from_slice(b"]}");
        }
        v.push(b'}');
        same(&v);
        same(&v[..v.len() - depth]);
    }
}

/// The typical line and the error kinds, pinned (kind and offset), from both scans.
#[test]
fn errors_are_pinned() {
    let cases: [(&[u8], JsonErrorKind, usize); 7] = [
        (br#"{"id":"a\x"}"#, JsonErrorKind::InvalidEscape, 9),
        (br#"{"id":"a\u12G4"}"#, JsonErrorKind::InvalidEscape, 12),
        (
            b"{\"id\":\"a\x01\"}",
            JsonErrorKind::ControlCharacterInString,
            8,
        ),
        (br#"{"id":"abc"#, JsonErrorKind::UnexpectedEnd, 10),
        (br#"{"id":"a\"#, JsonErrorKind::UnexpectedEnd, 9),
        (br#"{"id":"a\u00"#, JsonErrorKind::UnexpectedEnd, 12),
        (
            br#"{"id":"\ud800"} x"#,
            JsonErrorKind::TrailingCharacters,
            16,
        ),
    ];
    for (line, kind, offset) in cases {
        for scalar in [false, true] {
            let mut s = EnvelopeScanner::new();
            let got = if scalar {
                s.scan_scalar(line)
            } else {
                s.scan(line)
            };
            let err = got.unwrap_err();
            assert_eq!(
                (err.kind, err.offset),
                (kind, offset),
                "{} (scalar: {scalar})",
                String::from_utf8_lossy(line)
            );
        }
    }
}

/// Lines shaped like the bench's generated corpus (escapes, quotes, non-ASCII, nested usage
/// objects) scan the same.
#[test]
fn bench_shaped_lines_scan_the_same() {
    let mut n = 0usize;
    for i in 0..400u64 {
        let text = format!(
            "step {i}: ran `cargo test` → ok ✓\n\tline two \"quoted\" C:\\dir\\{} {}",
            i % 97,
            "x".repeat((i * 7 % 300) as usize)
        );
        let line = format!(
            r#"{{"type":"message","id":"{:08x}","parentId":"{:08x}","timestamp":"2026-01-01T00:00:00.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":{}}}],"usage":{{"input":{},"output":12,"cost":{{"total":0.0021953999999999997}}}},"stopReason":"stop"}}}}"#,
            i + 1,
            i,
            to_json_string(&JsValue::from(text)),
            i * 7
        );
        same(line.as_bytes());
        n += 1;
    }
    assert_eq!(n, 400);
}

fn all_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            all_files(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// Every line of every file under `../shared/fixtures` (JSON, JSONL, Markdown, scripts, SQLite
/// pages: any bytes), and each whole file as one text.
#[test]
fn every_fixture_file_scans_the_same() {
    let Some(shared) = crate::support::shared_dir("scan_differential::every_fixture_file") else {
        return;
    };
    let mut files = Vec::new();
    all_files(&shared.join("fixtures"), &mut files);
    files.sort();
    let mut n = 0usize;
    for f in &files {
        let buf = std::fs::read(f).unwrap();
        same(&buf);
        for line in buf.split(|&b| b == b'\n') {
            same(line);
            n += 1;
        }
    }
    assert!(
        files.len() > 20 && n > 1000,
        "{n} lines in {} files",
        files.len()
    );
}

fn jsonl_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            jsonl_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "jsonl") {
            out.push(p);
        }
    }
}

/// Every line of the real transcripts under `../shared` (fixtures and conformance samples).
#[test]
fn fixtures_scan_the_same() {
    let Some(shared) = crate::support::shared_dir("scan_differential::fixtures_scan_the_same")
    else {
        return;
    };
    let mut files = Vec::new();
    jsonl_files(&shared.join("fixtures"), &mut files);
    jsonl_files(&shared.join("conformance"), &mut files);
    if files.is_empty() {
        session_test_support::skip(
            "scan_differential::fixtures_scan_the_same",
            "no .jsonl under shared/fixtures or shared/conformance",
        );
        return;
    }
    let mut n = 0usize;
    for f in &files {
        let buf = std::fs::read(f).unwrap();
        for line in lines(&buf) {
            same(line.bytes);
            n += 1;
        }
    }
    assert!(n > 100, "only {n} lines in {} files", files.len());
}
