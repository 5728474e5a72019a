//! `sessions serve`'s session page in a real headless Chromium (skipped with `SKIP` without
//! it), driven over the DevTools protocol: with `--allow-write`, a click on an entry's "Branch
//! from here" moves the viewer's leaf marker to that entry, the file gains exactly one
//! leaf-control row, and OpenClaw 2026.6.11's `SessionManager.open` (skipped without it)
//! reports that entry as the leaf; a line another process appends shows up in the open page's
//! tree (and main pane) within a second. The first test also writes a screenshot of the page
//! to `target/screenshots/serve.png` (and to `$SESSIONS_SCREENSHOT_OUT` when set: how
//! `docs/img/sessions-serve.png` is refreshed).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use headless_chrome::protocol::cdp::Page::CaptureScreenshotFormatOption;
use serde_json::{Value, json};

use crate::serve_branch_from_here::{reference_leaf, session};
use crate::support::browser::{Page, browser};
use crate::support::serve::Server;
use crate::support::{msg, plant, tempdir};

/// Opens `path` of `srv` through the start URL (`?token=`, which redirects to `path` and sets
/// the cookie) and waits until the viewer has loaded its payload.
fn open_served(page: &Page, srv: &Server, path: &str) {
    page.tab()
        .navigate_to(&format!("http://{}{path}?token={}", srv.addr, srv.token))
        .unwrap();
    let url = serde_json::to_string(&format!("http://{}{path}", srv.addr)).unwrap();
    page.wait_for(
        &format!(
            "location.href === {url} && document.readyState === 'complete' && \
             window.SESSION_VIEWER && SESSION_VIEWER.totals() !== null"
        ),
        60,
    );
}

/// The ids of the tree nodes marked as the leaf, and of those on the highlighted path.
const MARKS: &str = "[Array.from(document.querySelectorAll('#tree li.node.leaf')).map(e => e.dataset.id), \
     Array.from(document.querySelectorAll('#tree li.node.on-path')).map(e => e.dataset.id)]";

/// The entries of the main pane that carry the "◀ leaf" marker.
const MAIN_LEAF: &str = "Array.from(document.querySelectorAll('#path .entry > .head > .marker')).filter(m => \
     m.textContent === '◀ leaf').map(m => m.closest('.entry').dataset.entry)";

/// The target directory of this test binary (`…/target/debug/deps/it-…`), for the screenshot.
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).unwrap().to_path_buf()
}

/// Writes `png` to `target/screenshots/NAME` and, when `$SESSIONS_SCREENSHOT_OUT` is set, to
/// that path too (a relative one from the workspace root, e.g. `docs/img/sessions-serve.png`).
fn save_screenshot(name: &str, png: &[u8]) {
    let dir = target_dir().join("screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    session_store::io::atomic_rewrite(&dir.join(name), png).unwrap();
    if let Some(out) = std::env::var_os("SESSIONS_SCREENSHOT_OUT").filter(|v| !v.is_empty()) {
        let out = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(out);
        session_store::io::atomic_rewrite(&out, png)
            .unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    }
}

#[test]
fn a_click_on_branch_from_here_moves_the_leaf_marker_and_writes_one_leaf_control() {
    let test = "a_click_on_branch_from_here_moves_the_leaf_marker_and_writes_one_leaf_control";
    let Some(page) = browser(test) else {
        return;
    };
    let dir = tempdir();
    let file = dir.path().join("s1.jsonl");
    plant(&file, &session());
    let before = std::fs::read(&file).unwrap();
    let d = dir.path().to_str().unwrap();
    let srv = Server::start(dir.path(), &["--dir", d, "--allow-write"]);
    open_served(&page, &srv, "/s/-/s1");
    assert_eq!(page.eval(MARKS), json!([["a4"], ["a1", "a2", "a3", "a4"]]));
    assert_eq!(page.eval(MAIN_LEAF), json!(["a4"]));
    // Every entry of the main pane has the two buttons.
    assert_eq!(
        page.eval(
            "Array.from(document.querySelectorAll('#path button[data-branch]')).map(b => \
             b.dataset.branch + ' ' + b.dataset.branchAct + ' ' + b.textContent)"
        ),
        json!([
            "a1 branch Branch from here",
            "a1 summary Branch with summary…",
            "a2 branch Branch from here",
            "a2 summary Branch with summary…",
            "a3 branch Branch from here",
            "a3 summary Branch with summary…",
            "a4 branch Branch from here",
            "a4 summary Branch with summary…",
        ])
    );
    page.click("button[data-branch=\"a2\"][data-branch-act=\"branch\"]");
    page.wait_for("SESSION_VIEWER.leaf() === 'a2'", 10);
    assert_eq!(page.eval(MARKS), json!([["a2"], ["a1", "a2"]]));
    assert_eq!(page.eval(MAIN_LEAF), json!(["a2"]));
    assert_eq!(
        page.eval("document.getElementById('serve-msg').textContent"),
        json!("the leaf is now a2")
    );

    // The file gained exactly one row: the leaf control.
    let after = std::fs::read(&file).unwrap();
    assert_eq!(&after[..before.len()], &before[..]);
    let added = std::str::from_utf8(&after[before.len()..]).unwrap();
    assert_eq!(added.matches('\n').count(), 1, "{added}");
    let row: Value = serde_json::from_str(added.trim_end()).unwrap();
    let id = row["id"].as_str().unwrap();
    let ts = row["timestamp"].as_str().unwrap();
    crate::support::assert_iso_time(ts);
    assert_eq!(
        added,
        format!(
            "{{\"type\":\"leaf\",\"id\":\"{id}\",\"parentId\":\"a4\",\"timestamp\":\"{ts}\",\"targetId\":\"a2\"}}\n"
        )
    );
    // The row arrives on the event stream; the viewer keeps a2 as the leaf.
    page.wait_for(
        "document.querySelector('.serve-status').textContent === 'live · 1 new row'",
        5,
    );
    assert_eq!(page.eval("SESSION_VIEWER.leaf()"), json!("a2"));
    assert_eq!(page.eval(MARKS), json!([["a2"], ["a1", "a2"]]));
    // A leaf control is no entry of the tree (as in the export); the download has it.
    assert_eq!(
        page.eval("Array.from(document.querySelectorAll('#tree li.node')).map(e => e.dataset.id)"),
        json!(["a1", "a2", "a3", "a4"])
    );
    // The JSONL download is the file's bytes.
    assert_eq!(
        page.eval("SESSION_VIEWER.jsonl().text()"),
        json!(String::from_utf8(after.clone()).unwrap())
    );

    page.eval("window.scrollTo(0, 0)");
    let png = page
        .tab()
        .capture_screenshot(CaptureScreenshotFormatOption::Png, None, None, true)
        .unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    save_screenshot("serve.png", &png);

    if let Some(r) = reference_leaf(test, &file) {
        assert_eq!(r, json!({"leaf": "a2", "branch": ["a1", "a2"]}));
    }
}

#[test]
fn a_foreign_append_shows_up_in_the_open_pages_tree_within_a_second() {
    let Some(page) = browser("a_foreign_append_shows_up_in_the_open_pages_tree_within_a_second")
    else {
        return;
    };
    let dir = tempdir();
    let file = dir.path().join("s1.jsonl");
    plant(&file, &crate::support::small_session());
    let d = dir.path().to_str().unwrap();
    let srv = Server::start(dir.path(), &["--dir", d]);
    open_served(&page, &srv, "/s/-/s1");
    assert_eq!(page.eval(MARKS), json!([["a3"], ["a1", "a2", "a3"]]));
    // Read-only: no branch buttons.
    assert_eq!(
        page.eval("document.querySelectorAll('button[data-branch]').length"),
        json!(0)
    );
    // The event stream is open before the append.
    page.wait_for(
        "document.querySelector('.serve-status').textContent === 'live'",
        10,
    );
    let line = msg("a4", Some("a3"), "assistant", "appended by the gateway");
    let start = Instant::now();
    session_store::io::append_line(&file, line.as_bytes(), session_store::Durability::default())
        .unwrap();
    let shown = "document.querySelector('#tree li.node[data-id=\"a4\"]') !== null";
    let deadline = start + Duration::from_secs(5);
    while page.eval(shown) != json!(true) {
        assert!(Instant::now() < deadline, "a4 not in the tree after 5 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = start.elapsed();
    assert!(took < Duration::from_secs(1), "took {took:?}");
    assert_eq!(page.eval(MARKS), json!([["a4"], ["a1", "a2", "a3", "a4"]]));
    // The main pane continues the path with it.
    assert_eq!(
        page.eval("document.querySelector('#entry-a4 .body').textContent.startsWith('appended by the gateway')"),
        json!(true)
    );
    assert_eq!(page.eval("SESSION_VIEWER.state().entries"), json!(4));
}
