//! `sessions check --max-problems N`: the first N problems by line, a line saying the check
//! stopped, `truncated` in the JSON; without the flag the whole list, the same on a file large
//! enough to be checked on several threads.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::support::*;
use session_format::json::{JsValue, parse_value};

/// A header and `n` rows, every third a message whose content holds a null block (lines
/// 2, 5, 8, …), the others clean messages with about 400 bytes of text.
fn file(n: usize) -> Vec<u8> {
    let mut b = br#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#.to_vec();
    b.push(b'\n');
    let pad = "x".repeat(400);
    let mut parent = "null".to_owned();
    for i in 0..n {
        let id = format!("e{i:05}");
        let content = if i % 3 == 0 {
            "[null]".to_owned()
        } else {
            format!("\"{pad}\"")
        };
        b.extend_from_slice(
            format!(
                r#"{{"type":"message","id":"{id}","parentId":{parent},"message":{{"role":"user","content":{content}}}}}"#
            )
            .as_bytes(),
        );
        b.push(b'\n');
        parent = format!("\"{id}\"");
    }
    b
}

fn problem_line(i: usize) -> String {
    let line = 3 * i + 2;
    let id = format!("e{:05}", 3 * i);
    format!(
        "big.jsonl:{line}: byte {{}}: invalid-content: message entry \"{id}\" (role user): content \
         block 0 is null: OpenClaw's list skips the file"
    )
}

#[test]
fn max_problems_lists_the_first_and_says_it_stopped() {
    let dir = tempdir();
    let d = dir.path();
    // About 1.3 MB: over the size checked on several threads.
    let bytes = file(3_000);
    assert!(bytes.len() > 1 << 20);
    plant(&d.join("big.jsonl"), &bytes);
    let offsets: Vec<usize> = session_format::line::lines(&bytes)
        .map(|l| l.offset)
        .collect();
    let expect = |i: usize| problem_line(i).replace("{}", &offsets[3 * i + 1].to_string());

    let all = run_in_timeout(d, ["check", "big.jsonl"]);
    assert_eq!(all.code, 1);
    let lines: Vec<&str> = all.stdout.lines().collect();
    assert_eq!(lines.len(), 1_001);
    for (i, l) in lines[..1_000].iter().enumerate() {
        assert_eq!(*l, expect(i));
    }
    assert_eq!(
        lines[1_000],
        "checked 1 file: 0 ok, 1 with problems (1,000 problems)"
    );

    let some = run_in_timeout(d, ["check", "--max-problems", "3", "big.jsonl"]);
    assert_eq!(some.code, 1);
    assert_eq!(
        some.stdout,
        format!(
            "{}\n{}\n{}\nbig.jsonl: stopped after 3 problems (--max-problems 3); the rest of the \
             file was not checked\nchecked 1 file: 0 ok, 1 with problems (3 problems)\n",
            expect(0),
            expect(1),
            expect(2)
        )
    );

    let j = run_in_timeout(d, ["check", "--json", "--max-problems", "2", "big.jsonl"]);
    assert_eq!(j.code, 1);
    let v = parse_value(j.stdout.as_bytes()).unwrap();
    let f = &v.as_array().unwrap()[0];
    assert_eq!(f.get("truncated"), Some(&JsValue::Bool(true)));
    let problems = f.get("problems").and_then(JsValue::as_array).unwrap();
    let lines: Vec<Option<f64>> = problems
        .iter()
        .map(|p| match p.get("line") {
            Some(JsValue::Number(n)) => Some(*n),
            _ => None,
        })
        .collect();
    assert_eq!(lines, vec![Some(2.0), Some(5.0)]);

    // A limit the file stays under: the full list, not truncated.
    let j = run_in_timeout(
        d,
        ["check", "--json", "--max-problems", "5000", "big.jsonl"],
    );
    let v = parse_value(j.stdout.as_bytes()).unwrap();
    let f = &v.as_array().unwrap()[0];
    assert_eq!(f.get("truncated"), Some(&JsValue::Bool(false)));
    assert_eq!(
        f.get("problems").and_then(JsValue::as_array).map(Vec::len),
        Some(1_000)
    );
    // Without the flag the JSON has no `truncated`.
    let j = run_in_timeout(d, ["check", "--json", "big.jsonl"]);
    let v = parse_value(j.stdout.as_bytes()).unwrap();
    assert_eq!(v.as_array().unwrap()[0].get("truncated"), None);

    let bad = run_in_timeout(d, ["check", "--max-problems", "0", "big.jsonl"]);
    assert_eq!(bad.code, 2);
}
