//! `session_query::search` reports the candidate lines (those that could hold a match) it
//! cannot read as JSON, with the first one's line and byte offset; lines the candidate filter
//! skips are not read; blank lines, a BOM before the header and JSON values that are not
//! objects are not reported; the in-memory and the streaming scans count the same.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use pretty_assertions::assert_eq;
use session_query::search::{LinePos, ScanStats, SearchOptions, Searcher};

const HEADER: &[u8] = b"{\"type\":\"session\",\"version\":3,\"id\":\"x\",\"cwd\":\"/\"}\n";
const HIT: &[u8] =
    b"{\"type\":\"label\",\"id\":\"l\",\"parentId\":null,\"label\":\"zebra\",\"targetId\":\"u\"}\n";
const OTHER: &[u8] = b"{\"type\":\"label\",\"id\":\"m\",\"parentId\":\"l\",\"label\":\"horse\"}\n";

fn searcher(pattern: &str, regex: bool) -> Searcher {
    Searcher::new(SearchOptions {
        pattern: pattern.to_owned(),
        regex,
        ..SearchOptions::default()
    })
    .unwrap()
}

/// The hits' lines and the stats of both scans (asserted equal), the reader fed `chunk` bytes
/// per read.
fn scan(s: &Searcher, bytes: &[u8], chunk: usize) -> (Vec<usize>, ScanStats) {
    let mut lines = Vec::new();
    let st = s.search_bytes(bytes, |h| {
        lines.push(h.line);
        true
    });
    let mut streamed = Vec::new();
    let st2 = s
        .search_reader(Chunked(bytes, chunk), |h| {
            streamed.push(h.line);
            true
        })
        .unwrap();
    assert_eq!((&lines, st), (&streamed, st2));
    (lines, st)
}

/// A reader giving at most `.1` bytes per read.
struct Chunked<'a>(&'a [u8], usize);

impl std::io::Read for Chunked<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.1.min(buf.len()).min(self.0.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

fn session(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

#[test]
fn candidate_lines_that_are_not_json_are_reported() {
    // Line 3 holds no `zebra` (it cannot hold a match, so it is not read), line 5 does; line 8
    // is a torn tail that holds `zeb`.
    let bytes = session(&[
        HEADER,
        OTHER,
        b"garbage that is not json\n",
        HIT,
        b"{\"type\":\"label\",\"label\":\"zebra\"\n",
        b"\n   \r\n",
        b"{\"type\":\"label\",\"label\":\"zeb",
    ]);
    let garbage = HEADER.len() + OTHER.len();
    let fifth = garbage + b"garbage that is not json\n".len() + HIT.len();
    let s = searcher("zebra", false);
    assert!(s.has_prefilter());
    for chunk in [1, 7, 4096] {
        let (lines, st) = scan(&s, &bytes, chunk);
        assert_eq!(lines, [4]);
        assert_eq!(
            (st.invalid_lines, st.first_invalid, st.lines),
            (
                1,
                Some(LinePos {
                    line: 5,
                    byte: fifth
                }),
                8
            ),
            "chunk {chunk}"
        );
    }
    // A torn tail that holds the token is a candidate too.
    let (_, st) = scan(&searcher("zeb", false), &bytes, 4096);
    assert_eq!(st.invalid_lines, 2);
    // With the filter off (or a pattern without a literal prefix) every line is a candidate:
    // every line that is not JSON is reported.
    for s in [
        searcher("zebra", false).without_prefilter(),
        searcher(".*", true),
    ] {
        let (_, st) = scan(&s, &bytes, 4096);
        assert_eq!(
            (st.invalid_lines, st.first_invalid),
            (
                3,
                Some(LinePos {
                    line: 3,
                    byte: garbage
                })
            )
        );
    }
}

#[test]
fn blank_lines_a_bom_and_json_that_is_no_entry_are_not_reported() {
    let bytes = session(&[
        b"\xef\xbb\xbf",
        HEADER,
        b"\n\r\n",
        b"[1,2,3]\n",
        b"42\n",
        HIT,
        b"\"zebra\"\n",
        OTHER,
        b"  \t",
    ]);
    for (pattern, regex) in [("zebra", false), ("z.bra", true), (".*", true)] {
        let (lines, st) = scan(&searcher(pattern, regex), &bytes, 4096);
        assert_eq!(lines.first(), Some(&6), "{pattern}");
        assert_eq!((st.invalid_lines, st.first_invalid), (0, None), "{pattern}");
    }
}

#[test]
fn a_stopped_scan_does_not_read_on() {
    let bytes = session(&[HEADER, HIT, b"not json zebra\n"]);
    let s = searcher("zebra", false);
    let st = s.search_bytes(&bytes, |_| false);
    assert_eq!((st.invalid_lines, st.first_invalid), (0, None));
    let st = s.search_bytes(&bytes, |_| true);
    assert_eq!(
        (st.invalid_lines, st.first_invalid),
        (
            1,
            Some(LinePos {
                line: 3,
                byte: HEADER.len() + HIT.len()
            })
        )
    );
}
