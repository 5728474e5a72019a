//! `session_query::search` on a session with a token planted on an abandoned branch, in an
//! escaped string, in a tool argument, in a tool call id, in a compaction summary and in a
//! label: exact hits (lines, ids, roles, fields, branch markers), the regex and case rules,
//! and each filter.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use session_query::search::{
    Field, FieldSet, Hit, SearchError, SearchOptions, Searcher, mark_hits,
};
use session_store::SessionManager;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/planted.jsonl")
}

fn opts(pattern: &str) -> SearchOptions {
    SearchOptions {
        pattern: pattern.to_owned(),
        context_chars: 8,
        ..SearchOptions::default()
    }
}

/// Every hit of `o` on the fixture, marked against its read-only open.
fn hits(o: SearchOptions) -> Vec<Hit> {
    let path = fixture();
    let bytes = std::fs::read(&path).unwrap();
    let model = o.model.clone();
    let s = Searcher::new(o).unwrap();
    let mut found = Vec::new();
    s.search_bytes(&bytes, |h| {
        found.push(h);
        true
    });
    // The reader form finds the same hits.
    let mut streamed = Vec::new();
    s.search_reader(std::io::Cursor::new(&bytes), |h| {
        streamed.push(h);
        true
    })
    .unwrap();
    assert_eq!(streamed, found);
    let ro = SessionManager::open_read_only(&path, None).unwrap();
    mark_hits(&mut found, &ro.session, model.as_deref());
    found
}

/// (line, id, role, field, on current branch, matches) of each hit.
type Row = (
    usize,
    &'static str,
    Option<&'static str>,
    Field,
    bool,
    usize,
);

fn rows(hits: &[Hit]) -> Vec<(usize, String, Option<String>, Field, bool, usize)> {
    hits.iter()
        .map(|h| {
            (
                h.line,
                h.entry_id.clone().unwrap_or_default(),
                h.role.clone(),
                h.field,
                h.on_current_branch.unwrap(),
                h.matches,
            )
        })
        .collect()
}

fn want(r: &[Row]) -> Vec<(usize, String, Option<String>, Field, bool, usize)> {
    r.iter()
        .map(|(l, id, role, f, b, n)| (*l, (*id).to_owned(), role.map(str::to_owned), *f, *b, *n))
        .collect()
}

#[test]
fn a_literal_is_found_on_every_branch_in_every_default_field() {
    let h = hits(opts("zebra-token"));
    assert_eq!(
        rows(&h),
        want(&[
            (4, "a1", Some("assistant"), Field::Args, true, 1),
            (5, "t1", Some("toolResult"), Field::Result, true, 1),
            (7, "u2x", Some("user"), Field::Text, false, 1),
            (8, "a3x", Some("assistant"), Field::Thinking, false, 1),
            (9, "c1", None, Field::Summary, true, 1),
            (11, "l1", None, Field::Label, true, 1),
        ])
    );
    // Byte offsets are the lines' first bytes.
    let bytes = std::fs::read(fixture()).unwrap();
    for hit in &h {
        assert!(bytes[hit.byte..].starts_with(b"{\"type\""), "{hit:?}");
        assert_eq!(
            bytes[..hit.byte].iter().filter(|&&b| b == b'\n').count() + 1,
            hit.line
        );
    }
    // The snippet: 8 characters each side, from the decoded text.
    let u2x = &h[2];
    assert_eq!(
        (
            u2x.before.as_str(),
            u2x.matched.as_str(),
            u2x.after.as_str()
        ),
        ("try the ", "zebra-token", " idea")
    );
    assert_eq!(u2x.timestamp.as_deref(), Some("2026-11-01T10:07:00.000Z"));
    assert_eq!(u2x.time_ms, Some(1_793_527_620_000));
    assert_eq!(u2x.entry_type, "message");
    assert_eq!(h[4].entry_type, "compaction");
    assert_eq!(h[0].model.as_deref(), Some("openai/gpt-5"));
    assert_eq!(h[2].model.as_deref(), Some("anthropic/claude-sonnet-4"));
}

#[test]
fn json_escapes_are_decoded_before_matching() {
    let h = hits(opts("café"));
    assert_eq!(
        rows(&h),
        want(&[(6, "a2", Some("assistant"), Field::Text, true, 1)])
    );
    assert_eq!(
        (
            h[0].before.as_str(),
            h[0].matched.as_str(),
            h[0].after.as_str()
        ),
        (" at the ", "café", ".")
    );
}

#[test]
fn ids_and_other_fields_match_only_when_asked_for() {
    let mut o = opts("zebra-token");
    o.fields = FieldSet::parse("id").unwrap();
    assert_eq!(
        rows(&hits(o)),
        want(&[
            (4, "a1", Some("assistant"), Field::Id, true, 1),
            (5, "t1", Some("toolResult"), Field::Id, true, 1),
        ])
    );
    let mut o = opts("zebra-token");
    o.fields = FieldSet::parse("all").unwrap();
    let all = hits(o);
    // a1: the tool call id and the path argument; t1: toolCallId and the result text.
    assert_eq!((all[0].matches, all[0].field), (2, Field::Id));
    assert_eq!((all[1].matches, all[1].field), (2, Field::Id));
    assert_eq!(all.len(), 6);
    // A key matches only under `key`.
    let mut o = opts("firstKeptEntryId");
    assert!(hits(o.clone()).is_empty());
    o.fields = FieldSet::parse("key").unwrap();
    assert_eq!(
        rows(&hits(o)),
        want(&[(9, "c1", None, Field::Key, true, 1)])
    );
    assert!(matches!(
        FieldSet::parse("text,bogus"),
        Err(SearchError::UnknownField { name, .. }) if name == "bogus"
    ));
    assert!(matches!(
        FieldSet::parse(" , "),
        Err(SearchError::NoFields { .. })
    ));
    let mut o = opts("x");
    o.roles = vec!["user".to_owned(), "tool".to_owned()];
    assert!(matches!(
        Searcher::new(o),
        Err(SearchError::UnknownRole { name, .. }) if name == "tool"
    ));
    let mut o = opts("x");
    o.types = vec!["session".to_owned()];
    assert!(matches!(
        Searcher::new(o),
        Err(SearchError::UnknownType { name, .. }) if name == "session"
    ));
}

#[test]
fn case_and_whole_word_rules() {
    let mut o = opts("zebra-token");
    o.ignore_case = true;
    let ids: Vec<String> = hits(o).into_iter().filter_map(|h| h.entry_id).collect();
    assert_eq!(ids, ["a1", "t1", "u2x", "a3x", "c1", "u3", "l1"]);
    let mut o = opts("zebra-token");
    o.word = true;
    let ids: Vec<String> = hits(o).into_iter().filter_map(|h| h.entry_id).collect();
    assert_eq!(ids, ["a1", "u2x", "a3x", "c1", "l1"]);
}

#[test]
fn regex_rules() {
    let mut o = opts(r"zebra-tok(en)s\b");
    o.regex = true;
    assert_eq!(
        rows(&hits(o)),
        want(&[(5, "t1", Some("toolResult"), Field::Result, true, 1)])
    );
    // A regex without a literal prefix parses every line and finds the same.
    let mut o = opts(r"\w+-tokens");
    o.regex = true;
    let s = Searcher::new(o.clone()).unwrap();
    assert!(!s.has_prefilter());
    assert_eq!(hits(o).len(), 1);
    // Literal mode escapes regex syntax.
    assert!(hits(opts("zebra.token")).is_empty());
    let mut o = opts("zebra.token");
    o.regex = true;
    assert_eq!(hits(o).len(), 6);
    let mut o = opts("(unclosed");
    o.regex = true;
    assert!(
        matches!(Searcher::new(o), Err(SearchError::Regex(m)) if m == "unclosed group in \"(unclosed\"")
    );
}

#[test]
fn filters_by_role_type_time_and_model() {
    let ids = |o: SearchOptions| -> Vec<String> {
        hits(o).into_iter().filter_map(|h| h.entry_id).collect()
    };
    let mut o = opts("zebra-token");
    o.roles = vec!["user".to_owned()];
    assert_eq!(ids(o), ["u2x"]);
    let mut o = opts("zebra-token");
    o.types = vec!["compaction".to_owned(), "label".to_owned()];
    assert_eq!(ids(o), ["c1", "l1"]);
    let mut o = opts("zebra-token");
    o.since_ms = session_format::time::parse_js_date("2026-11-01T10:07:00.000Z");
    o.until_ms = session_format::time::parse_js_date("2026-11-01T10:09:00.000Z");
    assert_eq!(ids(o), ["u2x", "a3x", "c1"]);
    let mut o = opts("zebra-token");
    o.model = Some("CLAUDE".to_owned());
    assert_eq!(ids(o), ["u2x", "a3x", "c1", "l1"]);
    let mut o = opts("zebra-token");
    o.model = Some("openai/gpt".to_owned());
    assert_eq!(ids(o), ["a1", "t1"]);
}

#[test]
fn the_header_and_lines_that_are_not_json_are_skipped() {
    let bytes = b"{\"type\":\"session\",\"version\":3,\"id\":\"x\",\"cwd\":\"/zebra\"}\nnot json zebra\n{\"type\":\"label\",\"id\":\"l\",\"parentId\":null,\"label\":\"zebra\"}";
    let s = Searcher::new(opts("zebra")).unwrap();
    let mut found = Vec::new();
    let st = s.search_bytes(bytes, |h| {
        found.push((h.line, h.entry_id));
        true
    });
    assert_eq!(found, [(3, Some("l".to_owned()))]);
    assert_eq!((st.lines, st.parsed_lines, st.invalid_lines), (3, 3, 1));
    // Stopping early: the visitor's `false` ends the scan.
    let mut n = 0;
    s.search_bytes(
        b"{\"type\":\"label\",\"label\":\"zebra\"}\n{\"type\":\"label\",\"label\":\"zebra\"}\n",
        |_| {
            n += 1;
            false
        },
    );
    assert_eq!(n, 1);
}

#[test]
fn v1_headers_are_those_without_a_version_or_below_2() {
    use session_query::search::is_v1_header;
    assert!(is_v1_header(br#"{"type":"session","id":"x","cwd":"/"}"#));
    assert!(is_v1_header(
        b"\xef\xbb\xbf{\"type\":\"session\",\"version\":1,\"id\":\"x\"}"
    ));
    assert!(!is_v1_header(br#"{"type":"session","version":2,"id":"x"}"#));
    assert!(!is_v1_header(br#"{"type":"session","version":3,"id":"x"}"#));
    assert!(!is_v1_header(br#"{"type":"message","id":"x"}"#));
    assert!(!is_v1_header(b"not json"));
}
