//! The `sessions` binary on the pi fixture (`shared/fixtures/pi-large-session-v1.jsonl`, a v1
//! file of 1,018 entries that a writable open would migrate and rewrite) and the HTML export in
//! headless Chromium. Tests skip with a printed reason when the fixture or Chromium is absent.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::collections::HashSet;

use crate::support::*;
use session_format::json::{JsValue, parse_value};

fn json(text: &str) -> JsValue {
    parse_value(text.as_bytes()).unwrap()
}

fn num(v: &JsValue, path: &[&str]) -> Option<f64> {
    let mut cur = v;
    for k in path {
        cur = cur.get(k)?;
    }
    cur.as_f64()
}

#[test]
fn pi_tree_is_one_flat_chain_and_the_file_is_untouched() {
    let Some(pi) = pi_fixture("pi_tree_is_one_flat_chain_and_the_file_is_untouched") else {
        return;
    };
    let original = fingerprint(&pi);
    let r = run(["tree", pi.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        fingerprint(&pi),
        original,
        "tree changed the shared fixture"
    );
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(
        lines[0].contains("— 1,018 entries, 1 root, 0 branch points, leaf "),
        "{}",
        lines[0]
    );
    assert!(lines[1].starts_with("note: version 1 file"), "{}", lines[1]);
    let entries: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("● "))
        .collect();
    assert_eq!(entries.len(), 1_018);
    // One flat list: no connectors, no indentation, nothing off the current branch.
    assert!(!r.stdout.contains('├') && !r.stdout.contains('└') && !r.stdout.contains('│'));
    assert!(entries.iter().all(|l| !l.contains('○')));
    assert_eq!(lines.len(), 2 + 1_018 + 1, "header, note, entries, legend");
    assert!(entries[1_017].ends_with("◀ leaf"), "{}", entries[1_017]);
    assert!(
        entries[0].contains(" user ") && entries[0].ends_with("/mode"),
        "{}",
        entries[0]
    );
    for l in &entries {
        assert!(unicode_width::UnicodeWidthStr::width(*l) <= 100, "{l}");
    }
}

#[test]
fn pi_context_stats_check_and_show() {
    let Some(pi) = pi_fixture("pi_context_stats_check_and_show") else {
        return;
    };
    let original = fingerprint(&pi);
    let p = pi.to_str().unwrap();

    let ctx = json(&run(["context", "--json", p]).stdout);
    assert_eq!(
        ctx.get("messages")
            .and_then(JsValue::as_array)
            .map(Vec::len),
        Some(914)
    );
    assert_eq!(ctx.get("thinkingLevel"), Some(&JsValue::from("off")));
    assert_eq!(
        ctx.get("model").and_then(|m| m.get("modelId")),
        Some(&JsValue::from("claude-sonnet-4-5"))
    );

    let stats = json(&run(["stats", "--json", p]).stdout);
    let s = &stats.as_array().unwrap()[0];
    assert_eq!(num(s, &["bytes"]), Some(974_031.0));
    assert_eq!(num(s, &["lines"]), Some(1_019.0));
    assert_eq!(num(s, &["version"]), Some(1.0));
    assert_eq!(num(s, &["entries"]), Some(1_018.0));
    assert_eq!(num(s, &["depth"]), Some(1_018.0));
    assert_eq!(num(s, &["branchPoints"]), Some(0.0));
    assert_eq!(num(s, &["leaves"]), Some(1.0));
    assert_eq!(num(s, &["byKind", "message"]), Some(914.0));
    assert_eq!(num(s, &["byKind", "thinking_level_change"]), Some(103.0));
    assert_eq!(num(s, &["byKind", "model_change"]), Some(1.0));
    assert_eq!(num(s, &["byRole", "user"]), Some(88.0));
    assert_eq!(num(s, &["byRole", "assistant"]), Some(453.0));
    assert_eq!(num(s, &["byRole", "toolResult"]), Some(373.0));

    // Needs migration: a note, not a problem (exit 0).
    let check = run(["check", p]);
    assert_eq!(check.code, 0, "{}", check.stdout);
    assert_eq!(check.stdout.lines().count(), 3, "{}", check.stdout);
    assert!(
        check.stdout.contains(
            ":1: byte 0: info: needs-migration: version 1: needs migration (a note, not a problem);"
        ),
        "{}",
        check.stdout
    );

    // Line 28 holds the longest line (a 49 KB `read` result).
    let show = json(&run(["show", p, "@28"]).stdout);
    assert_eq!(
        show.get("message").and_then(|m| m.get("role")),
        Some(&JsValue::from("toolResult"))
    );
    let raw = run(["show", "--raw", p, "@28"]);
    assert_eq!(raw.stdout.len(), 49_232 + 1);

    assert_eq!(fingerprint(&pi), original);
}

#[test]
fn pi_inspection_never_writes() {
    let Some(pi) = pi_fixture("pi_inspection_never_writes") else {
        return;
    };
    assert_read_only(&pi, "@2");
}

fn html_of(dir: &std::path::Path, src: &std::path::Path) -> std::path::PathBuf {
    let out = dir.join("export.html");
    let r = run_in(
        dir,
        [
            "export",
            src.to_str().unwrap(),
            "--format",
            "html",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    out
}

#[test]
fn html_export_in_chromium_holds_every_entry_of_a_small_session() {
    let Some(chromium) = chromium("html_export_in_chromium_holds_every_entry_of_a_small_session")
    else {
        return;
    };
    let dir = tempdir();
    let src = fixture("branchy.jsonl");
    let dom = dump_dom(&chromium, &html_of(dir.path(), &src));
    let ids: HashSet<String> = attr_values(&dom, "data-id").into_iter().collect();
    let ro = session_store::SessionManager::open_read_only(&src, None).unwrap();
    let expected: HashSet<String> = ro
        .session
        .get_entries()
        .map(|e| e.id().to_owned())
        .collect();
    assert_eq!(ids, expected);
    assert!(dom.contains("class=\"entry k-message r-assistant on-branch leaf\""));
    assert!(dom.contains("<span class=\"badge\">fixed</span>"));
}

#[test]
fn html_export_in_chromium_holds_every_entry_of_the_pi_fixture() {
    let test = "html_export_in_chromium_holds_every_entry_of_the_pi_fixture";
    let (Some(pi), Some(chromium)) = (pi_fixture(test), chromium(test)) else {
        return;
    };
    let original = fingerprint(&pi);
    let dir = tempdir();
    // A v1 file's rows are rewritten by the migration, so they travel beside the file's own
    // bytes: the payload is over the synchronous limit and the page renders asynchronously.
    let page = html_of(dir.path(), &pi);
    let url = format!("file://{}", std::fs::canonicalize(&page).unwrap().display());
    let dom = dump_dom_url(&chromium, &url, &["--virtual-time-budget=10000"]);
    assert_eq!(fingerprint(&pi), original);
    // A v1 file's ids are made up on every read: check that every entry is in the tree by its
    // line (lines 2..=1019) and that the tree's 1,018 ids are distinct.
    let ids = attr_values(&dom, "data-id");
    assert_eq!(ids.len(), 1_018);
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 1_018);
    let lines: HashSet<usize> = attr_values(&dom, "data-line")
        .iter()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(lines, (2..=1_019).collect::<HashSet<usize>>());
    assert_eq!(dom.matches("<li class=\"node ").count(), 1_018);
    assert_eq!(dom.matches(" leaf\" data-id=\"").count(), 1);
    // The main pane holds the current path, each entry anchored as entry-<id>, every one a
    // tree node too.
    let anchors = attr_values(&dom, "data-entry");
    assert!(!anchors.is_empty());
    let tree: HashSet<&String> = ids.iter().collect();
    for id in &anchors {
        assert!(tree.contains(id), "{id}");
        assert!(dom.contains(&format!("id=\"entry-{id}\"")), "{id}");
    }
    assert_eq!(dom.matches(" leaf\" id=\"entry-").count(), 1);
}
