//! Property: indexing only the lines another writer appended gives exactly the state of a full
//! load. A random file (entries of every kind, duplicate and dangling ids, leaf controls,
//! parent-linked and plain opaque rows, side appends, labels, malformed, blank, torn and
//! whitespace-padded lines) is split at a random line; the first part is opened (and cached),
//! the second appended by "another writer", and the reopen (tail reindex when the cached part
//! allows it) must equal an uncached load: leaf, append cursor, entries with their bytes,
//! parents, positions and children, tree, branch, context, name and diagnostics. A manager's
//! own append after that, and a reopen, must still equal a fresh load.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::snapshot_support::{cold_state, foreign_append, plant, serial, state, user};
use proptest::prelude::*;
use session_store::SessionManager;

const IDS: &[&str] = &["a", "b", "c", "d", "e", "lf1", "o1", "x9"];

fn id() -> impl Strategy<Value = String> {
    prop::sample::select(IDS).prop_map(str::to_owned)
}

/// A `parentId` member: absent, null, or an id (known or not).
fn parent() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just(r#","parentId":null"#.to_owned()),
        id().prop_map(|p| format!(r#","parentId":"{p}""#)),
    ]
}

fn line() -> impl Strategy<Value = String> {
    let ts = r#""timestamp":"2026-01-01T00:00:01.000Z""#;
    prop_oneof![
        4 => (id(), parent(), prop::bool::ANY, prop::bool::ANY).prop_map(move |(i, p, asst, side)| {
            let role = if asst { "assistant" } else { "user" };
            let side = if side { r#","appendMode":"side""# } else { "" };
            format!(
                r#"{{"type":"message","id":"{i}"{p},{ts}{side},"message":{{"role":"{role}","content":"t {i}","timestamp":1}}}}"#
            )
        }),
        1 => (id(), parent()).prop_map(move |(i, p)| {
            format!(r#"{{"type":"custom","customType":"k","id":"{i}"{p},{ts}}}"#)
        }),
        1 => (id(), parent(), id(), prop::option::of("[a-z]{1,3}")).prop_map(move |(i, p, t, l)| {
            let label = l.map_or(String::new(), |l| format!(r#","label":"{l}""#));
            format!(r#"{{"type":"label","id":"{i}"{p},{ts},"targetId":"{t}"{label}}}"#)
        }),
        1 => (id(), parent(), prop::option::of(id()), prop::option::of(prop::option::of(id())), prop::bool::ANY)
            .prop_map(move |(i, p, t, ap, side)| {
                let target = t.map_or("null".to_owned(), |t| format!("\"{t}\""));
                let ap = match ap {
                    None => String::new(),
                    Some(None) => r#","appendParentId":null"#.to_owned(),
                    Some(Some(a)) => format!(r#","appendParentId":"{a}""#),
                };
                let side = if side { r#","appendMode":"side""# } else { "" };
                let p = if p.is_empty() { r#","parentId":null"#.to_owned() } else { p };
                format!(r#"{{"type":"leaf","id":"{i}"{p},{ts},"targetId":{target}{ap}{side}}}"#)
            }),
        1 => (id(), parent()).prop_map(move |(i, p)| {
            format!(r#"{{"type":"reset","id":"{i}"{p},{ts}}}"#)
        }),
        1 => (id(), parent(), "[a-z ]{0,6}").prop_map(move |(i, p, n)| {
            format!(r#"{{"type":"session_info","id":"{i}"{p},{ts},"name":"{n}"}}"#)
        }),
        1 => (id(), parent()).prop_map(move |(i, p)| {
            format!(r#"{{"type":"model_change","id":"{i}"{p},{ts},"provider":"p","modelId":"m"}}"#)
        }),
        1 => (id(), parent(), id()).prop_map(move |(i, p, k)| {
            format!(
                r#"{{"type":"compaction","id":"{i}"{p},{ts},"summary":"s","firstKeptEntryId":"{k}","tokensBefore":5}}"#
            )
        }),
        1 => prop::sample::select(vec![
            r#"{"type":"whatever","x":[1,2]}"#,
            "null",
            "123",
            "[1]",
            r#"{"type":"session","id":"other"}"#,
            r#"{"type":"message","id":"#,
            "garbage",
            "",
            "   ",
            "\u{a0}{\"type\":\"whatever\"}",
            "\u{feff}{\"type\":\"whatever\"}",
            "{\"type\":\"whatever\"}\u{b}",
            "{\"type\":\"whatever\"} \r",
        ])
        .prop_map(str::to_owned),
    ]
}

fn header() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(r#"{"type":"session","version":3,"id":"s3","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#.to_owned()),
        Just(r#"{"type":"session","version":4,"id":"s4","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#.to_owned()),
    ]
}

/// Header, lines, a split point, whether the first part ends without its `\n` and whether the
/// file ends without one.
fn case() -> impl Strategy<Value = (String, Vec<String>, usize, bool, bool)> {
    (header(), prop::collection::vec(line(), 0..24)).prop_flat_map(|(h, lines)| {
        let n = lines.len();
        (
            Just(h),
            Just(lines),
            0..=n,
            prop::bool::weighted(0.1),
            prop::bool::weighted(0.2),
        )
    })
}

fn join(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

static CASE: AtomicUsize = AtomicUsize::new(0);

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn tail_reindex_equals_a_full_load((h, lines, split, cut_first, cut_last) in case()) {
        let _g = serial();
        let tmp = tempfile::tempdir().unwrap();
        let d = std::fs::canonicalize(tmp.path()).unwrap();
        let f = d.join(format!("s{}.jsonl", CASE.fetch_add(1, Ordering::Relaxed)));
        let mut first = format!("{h}\n{}", join(&lines[..split]));
        let mut second = join(&lines[split..]);
        if cut_first && split > 0 {
            first.pop();
        }
        if cut_last && !second.is_empty() {
            second.pop();
        }
        plant(&f, &first);
        let cached = SessionManager::open(&f, None, None).unwrap();
        prop_assert_eq!(state(&cached), cold_state(&f));
        drop(cached);
        if !second.is_empty() {
            foreign_append(&f, &second);
        }
        let sm = SessionManager::open(&f, None, None).unwrap();
        prop_assert_eq!(state(&sm), cold_state(&f));
        // Exactly the new lines are parsed when the cached part ends with `\n` and its last
        // line was not read thanks to the end trim only a file's last line gets; otherwise
        // the file is read in full (nothing at all when nothing was appended).
        let non_blank = |ls: &[String]| ls.iter().filter(|l| !l.trim().is_empty()).count();
        let last_first = first.split('\n').rev().find(|l| !l.trim().is_empty());
        let tail_path = first.ends_with('\n') && last_first.is_none_or(|l| !l.ends_with('\u{b}'));
        let expected = if second.is_empty() {
            0
        } else if tail_path {
            non_blank(&lines[split..])
        } else {
            let text = String::from_utf8(std::fs::read(&f).unwrap()).unwrap();
            text.split('\n').filter(|l| !l.trim().is_empty()).count()
        };
        prop_assert_eq!(sm.parsed_lines(), expected);
        // Our own append on top (held when the session has no assistant), then a reopen.
        let mut sm = sm;
        sm.append_message(user("own")).unwrap();
        let re = SessionManager::open(&f, None, None).unwrap();
        prop_assert_eq!(state(&re), cold_state(&f));
    }
}
