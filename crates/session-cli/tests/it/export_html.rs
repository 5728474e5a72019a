//! The HTML export of a session large enough for the compressed payload (more than 2 MiB),
//! rendered lazily by headless Chromium: every entry ends up in the DOM, the folded branches
//! included, and a deep link to an entry deep inside a folded branch renders it. Skips with a
//! printed reason without Chromium.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::Path;

use crate::support::*;

/// A session of `trunk` messages on the current branch, with a side branch of `side` messages
/// off entry `t0000010` (folded in the page): each message carries about 1.2 KB of text.
/// Returns the file's text and the ids of all entries.
fn big_session(trunk: usize, side: usize) -> (String, Vec<String>) {
    let mut s = String::from(
        "{\"type\":\"session\",\"version\":3,\"id\":\"0195f3a0-7c1e-7000-8000-00000000b16b\",\"timestamp\":\"2026-01-02T09:00:00.000Z\",\"cwd\":\"/home/dev\"}\n",
    );
    let mut ids = Vec::new();
    let filler = "lorem ipsum dolor sit amet <b>not html</b> & more ".repeat(24);
    let mut push = |s: &mut String, id: &str, parent: Option<&str>, n: usize| {
        let role = if n.is_multiple_of(2) {
            "user"
        } else {
            "assistant"
        };
        let parent = parent.map_or_else(|| "null".to_owned(), |p| format!("\"{p}\""));
        let _ = writeln!(
            s,
            "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"2026-01-02T09:{:02}:{:02}.000Z\",\"message\":{{\"role\":\"{role}\",\"content\":[{{\"type\":\"text\",\"text\":\"message {n}: {filler}\"}}]}}}}",
            (n / 60) % 60,
            n % 60
        );
        ids.push(id.to_owned());
    };
    // The trunk up to its branch point, the side branch, then the rest of the trunk: the last
    // row (the trunk's tip) is the leaf, the side branch is the branch point's first child.
    let trunk_id = |n: usize| format!("t{n:07}");
    for n in 0..=10 {
        let parent = (n > 0).then(|| trunk_id(n - 1));
        push(&mut s, &trunk_id(n), parent.as_deref(), n);
    }
    for n in 0..side {
        let parent = if n == 0 {
            trunk_id(10)
        } else {
            format!("s{:07}", n - 1)
        };
        push(&mut s, &format!("s{n:07}"), Some(&parent), n);
    }
    for n in 11..trunk {
        push(&mut s, &trunk_id(n), Some(&trunk_id(n - 1)), n);
    }
    (s, ids)
}

/// The DOM after headless Chromium loaded `url`, with a virtual time budget so that the
/// page's asynchronous unpacking and batched rendering run to the end.
fn dump_dom_async(chromium: &Path, url: &str) -> String {
    dump_dom_url(chromium, url, &["--virtual-time-budget=10000"])
}

#[test]
fn html_export_of_a_large_session_renders_every_entry_and_deep_links_into_folded_branches() {
    let test =
        "html_export_of_a_large_session_renders_every_entry_and_deep_links_into_folded_branches";
    let Some(chromium) = chromium(test) else {
        return;
    };
    let dir = tempdir();
    let (text, ids) = big_session(1_500, 600);
    assert!(text.len() > 2 * 1024 * 1024, "{} bytes", text.len());
    let src = dir.path().join("big.jsonl");
    plant(&src, text.as_bytes());
    let out = dir.path().join("big.html");
    let r = run_in(
        dir.path(),
        [
            "export",
            "big.jsonl",
            "--format",
            "html",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let page = std::fs::read_to_string(&out).unwrap();
    // The compressed path: one payload of deflate-raw pieces, far smaller than the session.
    assert!(
        page.contains("id=\"payload\" data-enc=\"deflate-raw\">"),
        "not compressed"
    );
    assert!(
        page.len() < text.len() / 4,
        "{} of {}",
        page.len(),
        text.len()
    );
    assert!(
        !page.contains("message 7: lorem"),
        "transcript text in clear"
    );

    let url = format!("file://{}", std::fs::canonicalize(&out).unwrap().display());
    let dom = dump_dom_async(&chromium, &url);
    let seen: HashSet<String> = attr_values(&dom, "data-id").into_iter().collect();
    let want: HashSet<String> = ids.into_iter().collect();
    assert_eq!(seen.len(), 1_500 + 600);
    assert_eq!(seen, want);
    assert_eq!(dom.matches("<li class=\"node ").count(), 1_500 + 600);
    assert_eq!(dom.matches(" leaf\" data-id=\"").count(), 1);
    assert!(dom.contains(
        "<li class=\"node k-message r-assistant on-path leaf\" data-id=\"t0001499\" data-line=\"2101\">"
    ));
    // The current path is highlighted in the tree and is the main pane's content (1,500
    // entries, the leaf marked); the side branch is not highlighted, and stays folded.
    assert!(dom.contains(
        "<li class=\"node k-message r-user on-path fu\" data-id=\"t0000010\" data-line=\"12\">"
    ));
    assert!(dom.contains(
        "<li class=\"node k-message r-assistant\" data-id=\"s0000599\" data-line=\"612\">"
    ));
    assert_eq!(attr_values(&dom, "data-entry").len(), 1_500);
    assert!(dom.contains(
        "class=\"entry k-message r-assistant on-branch leaf\" id=\"entry-t0001499\" data-entry=\"t0001499\""
    ));
    assert!(!dom.contains("id=\"entry-s0000599\""));
    assert!(dom.contains(
        "<details class=\"branch\"><summary>branch 1 of 2 · 600 entries — message 0: lorem"
    ));
    assert!(dom.contains(
        "<div class=\"current\">↓ branch 2 of 2 · 1,489 entries · current — message 11: lorem"
    ));
    // Text is text: the markup in the messages never became elements, also where the text is
    // rendered as Markdown.
    assert!(!dom.contains("<b>not html</b>"));
    assert!(dom.contains(
        "<div class=\"md\"><p>message 0: lorem ipsum dolor sit amet &lt;b&gt;not html&lt;/b&gt; &amp; more "
    ));

    // A deep link into the folded branch, in the old form (#e-<id>) and the new
    // (#entry-<id>): the target's branch is opened in the tree, and the main pane shows the
    // path through it (from the root to the end of its branch), the target included.
    for link in ["e-s0000555", "entry-s0000555"] {
        let dom = dump_dom_async(&chromium, &format!("{url}#{link}"));
        assert!(
            dom.contains("<li class=\"node k-message r-assistant sel\" data-id=\"s0000555\""),
            "deep link target not selected in the tree"
        );
        assert!(dom.contains("<details class=\"branch\" open=\"\"><summary>branch 1 of 2"));
        assert!(dom.contains(
            "class=\"entry k-message r-assistant sel\" id=\"entry-s0000555\" data-entry=\"s0000555\""
        ));
        // The path: t0 … t10, then s0 … s599.
        assert_eq!(attr_values(&dom, "data-entry").len(), 11 + 600);
        assert!(!dom.contains("id=\"entry-t0000011\""));
    }
}
