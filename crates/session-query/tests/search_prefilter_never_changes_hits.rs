//! The candidate filter of `session_query::search` only skips lines that cannot match: on
//! random sessions whose strings are written with random JSON escapes (`\uXXXX` for any
//! character, `\/`, `\"`, `\\`), the hits with the filter equal the hits of parsing every line,
//! and the streaming reader (fed a few bytes at a time) finds the same hits as the in-memory
//! scan.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::io::Read;

use proptest::prelude::*;
use session_query::search::{Hit, SearchOptions, Searcher};

/// The JSON text of `s` with each character written raw or escaped, as `escape` says.
fn json_string(s: &str, escape: &[bool]) -> String {
    let mut out = String::from("\"");
    for (i, c) in s.chars().enumerate() {
        let esc = escape
            .get(i % escape.len().max(1))
            .copied()
            .unwrap_or(false);
        match c {
            '"' => out.push_str(if esc { "\\u0022" } else { "\\\"" }),
            '\\' => out.push_str(if esc { "\\u005c" } else { "\\\\" }),
            '/' if esc => out.push_str("\\/"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if esc => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("ab"),
            Just("Ab"),
            Just("b"),
            Just("é"),
            Just("\""),
            Just("/"),
            Just("\\"),
            Just("\n"),
            Just(" "),
            Just("x"),
            Just("😀"),
        ],
        0..12,
    )
    .prop_map(|parts| parts.concat())
}

fn line() -> impl Strategy<Value = String> {
    (
        text(),
        text(),
        proptest::collection::vec(any::<bool>(), 1..5),
        0..4usize,
    )
        .prop_map(|(a, b, esc, shape)| {
            let a = json_string(&a, &esc);
            let b = json_string(&b, &esc);
            match shape {
                0 => format!(
                    r#"{{"type":"message","id":"m","parentId":null,"message":{{"role":"user","content":{a}}}}}"#
                ),
                1 => format!(
                    r#"{{"type":"message","id":"m","message":{{"role":"assistant","content":[{{"type":"text","text":{a}}},{{"type":"toolCall","id":"c","name":"t","arguments":{{"k":{b}}}}}]}}}}"#
                ),
                2 => format!(r#"{{"type":"compaction","id":"c","summary":{a},"details":{b}}}"#),
                _ => format!("not json {a}"),
            }
        })
}

/// A reader that hands out at most `step` bytes per read.
struct Trickle<'a> {
    bytes: &'a [u8],
    step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.bytes.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

fn collect(s: &Searcher, bytes: &[u8]) -> Vec<Hit> {
    let mut v = Vec::new();
    s.search_bytes(bytes, |h| {
        v.push(h);
        true
    });
    v
}

proptest! {
    #[test]
    fn the_filter_keeps_every_hit(
        lines in proptest::collection::vec(line(), 0..8),
        pattern in text().prop_filter("non-empty", |p| !p.is_empty()),
        ignore_case in any::<bool>(),
        word in any::<bool>(),
        regex in any::<bool>(),
        trailing_newline in any::<bool>(),
        step in 1..9usize,
    ) {
        let mut bytes = lines.join("\n").into_bytes();
        if trailing_newline && !bytes.is_empty() {
            bytes.push(b'\n');
        }
        let pattern = if regex { format!("{}.?", regex::escape(&pattern)) } else { pattern };
        let o = SearchOptions {
            pattern,
            regex,
            ignore_case,
            word,
            context_chars: 3,
            ..SearchOptions::default()
        };
        let filtered = Searcher::new(o.clone()).unwrap();
        let every_line = Searcher::new(o).unwrap().without_prefilter();
        let want = collect(&every_line, &bytes);
        prop_assert_eq!(&collect(&filtered, &bytes), &want);
        let mut streamed = Vec::new();
        let stats = filtered
            .search_reader(Trickle { bytes: &bytes, step }, |h| {
                streamed.push(h);
                true
            })
            .unwrap();
        prop_assert_eq!(&streamed, &want);
        // Every line counted once, however the reads cut the bytes: line feeds, plus an
        // unterminated last line.
        let lines = bytes.iter().filter(|b| **b == b'\n').count()
            + usize::from(bytes.last().is_some_and(|b| *b != b'\n'));
        prop_assert_eq!(stats.lines, lines);
        prop_assert_eq!(filtered.search_bytes(&bytes, |_| true).lines, lines);
    }
}
