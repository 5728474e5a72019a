//! Our JSON writer (and parser) against node's `JSON.stringify` on a committed corpus generated
//! by `xtask/node/gen-json-corpus.mjs` (see `tests/data/README.md`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use session_format::json::{JsString, JsValue, parse_value, to_json_string, write_number};

const CORPUS: &str = include_str!("../data/json-corpus.jsonl");

#[derive(serde::Deserialize)]
struct Record {
    kind: String,
    bits: Option<String>,
    units: Option<Vec<u16>>,
    input: Option<String>,
    expected: String,
}

fn records() -> Vec<Record> {
    CORPUS
        .split('\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn corpus_is_large_enough() {
    let all = records();
    let count = |k: &str| all.iter().filter(|r| r.kind == k).count();
    assert!(all.len() >= 2000, "{} records", all.len());
    assert!(count("number") >= 600);
    assert!(count("string") >= 600);
    assert!(count("text") >= 600);
}

#[test]
fn numbers_match_node() {
    let mut failures = Vec::new();
    for r in records().iter().filter(|r| r.kind == "number") {
        let bits = u64::from_str_radix(r.bits.as_deref().unwrap(), 16).unwrap();
        let mut out = Vec::new();
        write_number(f64::from_bits(bits), &mut out);
        let got = String::from_utf8(out).unwrap();
        if got != r.expected {
            failures.push(format!("{bits:016x}: got {got}, node {}", r.expected));
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn strings_match_node() {
    let mut failures = Vec::new();
    for r in records().iter().filter(|r| r.kind == "string") {
        let units = r.units.as_ref().unwrap();
        let got = to_json_string(&JsValue::String(JsString::from_utf16(units)));
        if got != r.expected {
            failures.push(format!("{units:x?}: got {got}, node {}", r.expected));
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn parse_then_stringify_matches_node() {
    let mut failures = Vec::new();
    for r in records().iter().filter(|r| r.kind == "text") {
        let input = r.input.as_deref().unwrap();
        match parse_value(input.as_bytes()) {
            Ok(v) => {
                let got = to_json_string(&v);
                if got != r.expected {
                    failures.push(format!(
                        "{input:.200}: got {got:.200}, node {:.200}",
                        r.expected
                    ));
                }
            }
            Err(e) => failures.push(format!("{input:.200}: parse error {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn node_output_is_a_fixed_point() {
    // Parsing node's own output and writing it again gives the same text.
    for r in records() {
        if r.expected == "null" && r.kind == "number" {
            continue;
        }
        let v = parse_value(r.expected.as_bytes()).unwrap();
        assert_eq!(to_json_string(&v), r.expected);
    }
}
