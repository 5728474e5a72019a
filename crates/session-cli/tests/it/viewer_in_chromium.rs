//! The session viewer (`sessions export --format html`) in a real headless Chromium, driven
//! over the DevTools protocol (`support::browser`): the tree of a session with branches,
//! labels, a compaction, a branch summary and tool calls; search; pi's filters; deep links;
//! the totals `sessions usage --json` gives; the JSONL download's exact bytes; Markdown
//! rendered and sanitised; live appends. Each test skips with a printed reason without
//! Chromium.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::browser::{Page, browser};
use crate::support::*;

/// Exports `src` as HTML into `dir` and returns the page's `file://` URL.
fn export_page(dir: &Path, src: &Path) -> String {
    let out = dir.join(format!(
        "{}.html",
        src.file_stem().unwrap().to_str().unwrap()
    ));
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
    format!("file://{}", std::fs::canonicalize(&out).unwrap().display())
}

/// Opens the page of `src` and waits until its tree and main pane are rendered.
fn open_viewer(page: &Page, url: &str) {
    page.open(url);
    page.wait_for(
        "window.SESSION_VIEWER && SESSION_VIEWER.leaf() !== null && document.getElementById('entry-' + SESSION_VIEWER.leaf())",
        60,
    );
}

/// The ids of the tree nodes the filter and search leave visible, in tree order.
const VISIBLE_NODES: &str = "[...document.querySelectorAll('#tree li.node')].filter(e => e.getClientRects().length > 0).map(e => e.dataset.id)";

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_tree_shows_every_entry_with_its_branch_points_labels_compaction_and_leaf() {
    let test = "the_tree_shows_every_entry_with_its_branch_points_labels_compaction_and_leaf";
    let Some(page) = browser(test) else {
        return;
    };
    let dir = tempdir();
    open_viewer(&page, &export_page(dir.path(), &fixture("branchy.jsonl")));
    // Every node in file order (the tree's depth-first order here), with its classes: the
    // path to the leaf (on-path), the leaf, the filter classes (fs: settings, ft: tool result,
    // fu: user, fl: labeled, fh: an assistant message with only tool calls).
    let nodes = page.eval(
        "[...document.querySelectorAll('#tree li.node')].map(e => [e.dataset.id, e.className, e.querySelector('.badge') ? e.querySelector('.badge').textContent : null, [...e.querySelectorAll('.marker')].map(m => m.textContent).join(' ')])",
    );
    let want = json!([
        ["m0000001", "node k-model_change on-path fs", null, ""],
        [
            "t0000001",
            "node k-thinking_level_change on-path fs",
            null,
            ""
        ],
        ["u0000001", "node k-message r-user on-path fu", null, ""],
        ["s0000001", "node k-session_info on-path", null, ""],
        ["a0000001", "node k-message r-assistant on-path", null, ""],
        [
            "r0000001",
            "node k-message r-toolResult on-path ft",
            null,
            ""
        ],
        [
            "a0000002",
            "node k-message r-assistant on-path fl",
            "diagnosis",
            ""
        ],
        ["l0000001", "node k-label on-path fs", null, "◆ 2"],
        ["u0000002", "node k-message r-user fu", null, ""],
        ["a0000003", "node k-message r-assistant fh", null, ""],
        ["r0000003", "node k-message r-toolResult ft", null, ""],
        ["a0000004", "node k-message r-assistant", null, ""],
        ["b0000001", "node k-branch_summary on-path", null, "↩"],
        ["u0000003", "node k-message r-user on-path fu", null, "⇤"],
        [
            "a0000005",
            "node k-message r-assistant on-path fl",
            "fixed",
            ""
        ],
        ["l0000002", "node k-label on-path fs", null, ""],
        ["c0000001", "node k-compaction on-path", null, "✂"],
        ["u0000004", "node k-message r-user on-path fu", null, ""],
        ["x0000001", "node k-custom_message on-path", null, ""],
        ["x0000002", "node k-custom on-path fs", null, ""],
        [
            "a0000006",
            "node k-message r-assistant on-path leaf",
            null,
            "◀ leaf"
        ],
    ]);
    assert_eq!(nodes, want);
    // The branch point's two branches: the one off the current path in a details element
    // (open: it is small), the current one marked and continuing at the same indentation.
    let branches = page.eval(
        "[...document.querySelectorAll('#tree li.fork')].map(f => [...f.children].map(c => [c.tagName, c.className, c.tagName === 'DETAILS' ? c.open : null, c.tagName === 'DETAILS' ? c.querySelector('summary').textContent : c.textContent]))",
    );
    assert_eq!(
        branches,
        json!([[
            [
                "DETAILS",
                "branch",
                true,
                "branch 1 of 2 · 4 entries — Install build-essential in the CI image."
            ],
            [
                "DIV",
                "current",
                null,
                "↓ branch 2 of 2 · 9 entries · current — Tried installing build-essential; the image grew by 400 MB,…"
            ],
        ]])
    );
    assert_eq!(
        page.eval("document.querySelector('#tree li[data-id=b0000001]').parentElement === document.querySelector('#tree li[data-id=u0000001]').parentElement"),
        json!(true)
    );
    // The default filter (pi's): settings entries and the tool-only assistant message hidden.
    assert_eq!(
        strings(&page.eval(VISIBLE_NODES)),
        [
            "u0000001", "s0000001", "a0000001", "r0000001", "a0000002", "u0000002", "r0000003",
            "a0000004", "b0000001", "u0000003", "a0000005", "c0000001", "u0000004", "x0000001",
            "a0000006"
        ]
    );
    assert_eq!(
        page.eval("document.getElementById('count').textContent"),
        json!("15 of 21 entries shown")
    );
    // The main pane: the current path, the tool result paired with its call inside the
    // assistant message (not an entry of its own), the compaction and the branch summary.
    assert_eq!(
        strings(
            &page
                .eval("[...document.querySelectorAll('#path > .entry')].map(e => e.dataset.entry)")
        ),
        [
            "m0000001", "t0000001", "u0000001", "s0000001", "a0000001", "a0000002", "l0000001",
            "b0000001", "u0000003", "a0000005", "l0000002", "c0000001", "u0000004", "x0000001",
            "x0000002", "a0000006"
        ]
    );
    assert_eq!(
        page.eval(
            "[...document.querySelectorAll('#entry-a0000001 .tool')].map(t => [t.className, t.querySelector('.tool-name').textContent, t.querySelector('.tool-result').id, t.querySelector('.tool-result pre').textContent])"
        ),
        json!([[
            "tool",
            "→ bash",
            "entry-r0000001",
            "error: linker `cc` not found\n  = note: No such file or directory (os error 2)"
        ]])
    );
    // Thinking and tool output toggles.
    let shown = "getComputedStyle(document.querySelector('#entry-a0000005 .thinking')).display";
    assert_eq!(page.eval(shown), json!("block"));
    page.click("button[data-act=thinking]");
    assert_eq!(page.eval(shown), json!("none"));
    let out = "getComputedStyle(document.querySelector('#entry-r0000001 pre.out')).display";
    assert_eq!(page.eval(out), json!("block"));
    page.click("button[data-act=tools]");
    assert_eq!(page.eval(out), json!("none"));
}

#[test]
fn typing_in_the_search_box_narrows_the_list_and_the_no_tools_filter_hides_tool_results() {
    let test =
        "typing_in_the_search_box_narrows_the_list_and_the_no_tools_filter_hides_tool_results";
    let Some(page) = browser(test) else {
        return;
    };
    let dir = tempdir();
    open_viewer(&page, &export_page(dir.path(), &fixture("branchy.jsonl")));
    let hits = "[...document.querySelectorAll('#results li')].map(e => e.dataset.hit)";
    let count = "document.getElementById('count').textContent";
    page.type_into("#search", "musl");
    assert_eq!(
        strings(&page.eval(hits)),
        ["a0000002", "u0000003", "a0000005", "a0000006"]
    );
    assert_eq!(page.eval(count), json!("4 of 21 entries match"));
    assert_eq!(
        page.eval("document.getElementById('tree').hidden"),
        json!(true)
    );
    // Every token must match: "ci" is not in u0000003 ("Use the musl target instead.").
    page.type_into("#search", " ci");
    assert_eq!(
        strings(&page.eval(hits)),
        ["a0000002", "a0000005", "a0000006"]
    );
    assert_eq!(page.eval(count), json!("3 of 21 entries match"));
    assert_eq!(
        page.eval("SESSION_VIEWER.state()"),
        json!({"entries": 21, "filter": "default", "query": "musl ci", "visible": 3})
    );
    // Search and filter together: user messages matching "musl".
    page.eval("(() => { const s = document.getElementById('search'); s.value = 'musl'; s.dispatchEvent(new Event('input')); })()");
    page.click("button[data-filter=user-only]");
    // The leaf always shows (pi's rule).
    assert_eq!(strings(&page.eval(hits)), ["u0000003", "a0000006"]);
    // Cleared: the tree again, now filtered without tools.
    page.eval("(() => { const s = document.getElementById('search'); s.value = ''; s.dispatchEvent(new Event('input')); })()");
    page.click("button[data-filter=no-tools]");
    assert_eq!(
        page.eval("document.getElementById('tree').hidden"),
        json!(false)
    );
    let visible = strings(&page.eval(VISIBLE_NODES));
    assert_eq!(
        visible,
        [
            "u0000001", "s0000001", "a0000001", "a0000002", "u0000002", "a0000004", "b0000001",
            "u0000003", "a0000005", "c0000001", "u0000004", "x0000001", "a0000006"
        ]
    );
    assert_eq!(
        page.eval("[...document.querySelectorAll('#tree li.node.r-toolResult')].filter(e => e.getClientRects().length > 0).length"),
        json!(0)
    );
    assert_eq!(page.eval(count), json!("13 of 21 entries shown"));
    page.click("button[data-filter=labeled-only]");
    assert_eq!(
        strings(&page.eval(VISIBLE_NODES)),
        ["a0000002", "a0000005", "a0000006"]
    );
    page.click("button[data-filter=all]");
    // Everything but the assistant message with only a tool call (pi hides it in every mode).
    assert_eq!(page.eval(&format!("{VISIBLE_NODES}.length")), json!(20));
}

#[test]
fn a_deep_link_selects_the_path_through_the_entry_and_scrolls_it_into_view() {
    let test = "a_deep_link_selects_the_path_through_the_entry_and_scrolls_it_into_view";
    let Some(page) = browser(test) else {
        return;
    };
    let dir = tempdir();
    let url = export_page(dir.path(), &fixture("branchy.jsonl"));
    let in_view = |id: &str| {
        page.eval(&format!(
            "(() => {{ const r = document.getElementById('entry-{id}').getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight && r.bottom > 0; }})()"
        ))
    };
    let main_pane = "[...document.querySelectorAll('#path > .entry')].map(e => e.dataset.entry)";
    // An entry on the branch that is not current: the main pane shows the path through it.
    page.open(&format!("{url}#entry-a0000004"));
    page.wait_for("document.getElementById('entry-a0000004')", 60);
    assert_eq!(
        strings(&page.eval(main_pane)),
        [
            "m0000001", "t0000001", "u0000001", "s0000001", "a0000001", "a0000002", "l0000001",
            "u0000002", "a0000003", "a0000004"
        ]
    );
    assert_eq!(in_view("a0000004"), json!(true));
    // Scrolled there: the entry is below the first screen of the page.
    assert!(page.eval("scrollY").as_f64().unwrap() > 0.0);
    assert_eq!(
        page.eval("document.querySelector('#tree li.sel').dataset.id"),
        json!("a0000004")
    );
    // The old form of the link, on the current path (the page scrolled down to it).
    page.open(&format!("{url}#e-u0000001"));
    page.wait_for("document.querySelector('#path .entry.sel')", 60);
    assert_eq!(in_view("u0000001"), json!(true));
    assert_eq!(page.eval(&format!("{main_pane}.length")), json!(16));
    // A link followed inside the page (hashchange) to a paired tool result.
    page.eval("window.scrollTo(0, 0)");
    page.eval("location.hash = '#entry-r0000001'");
    page.wait_for(
        "document.querySelector('#tree li.sel').dataset.id === 'r0000001'",
        10,
    );
    assert_eq!(in_view("r0000001"), json!(true));
    // Clicking a tree node selects it.
    page.click("#tree li[data-id=u0000002] > a");
    page.wait_for(
        "document.querySelector('#tree li.sel').dataset.id === 'u0000002'",
        10,
    );
    assert_eq!(page.eval(&format!("{main_pane}.length")), json!(10));
    assert_eq!(in_view("u0000002"), json!(true));
}

#[test]
fn the_totals_are_those_of_sessions_usage_and_the_download_is_the_files_exact_bytes() {
    let test = "the_totals_are_those_of_sessions_usage_and_the_download_is_the_files_exact_bytes";
    let Some(page) = browser(test) else {
        return;
    };
    let dir = tempdir();
    let src = fixture("branchy.jsonl");
    open_viewer(&page, &export_page(dir.path(), &src));
    let r = run_in(dir.path(), ["usage", src.to_str().unwrap(), "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let usage: Value = serde_json::from_str(&r.stdout).unwrap();
    let total = &usage["total"];
    assert_eq!(&page.eval("SESSION_VIEWER.totals()"), total);
    // What the page shows: each number with its exact value.
    let shown = page.eval(
        "Object.fromEntries([...document.querySelectorAll('#totals [data-total]')].map(e => [e.dataset.total, [e.dataset.value, e.textContent]]))",
    );
    assert_eq!(
        shown,
        json!({
            "messages": ["12", "12"], "byRole.assistant": ["6", "6"],
            "byRole.toolResult": ["2", "2"], "byRole.user": ["4", "4"],
            "toolCalls": ["2", "2"], "input": ["6000", "6,000"], "output": ["300", "300"],
            "cacheRead": ["0", "0"], "cacheWrite": ["0", "0"],
            "totalTokens": ["6300", "6,300"], "cost": ["0.0225", "$0.022"],
            "models": ["1", "anthropic/claude-sonnet-4-5"]
        })
    );
    for key in [
        "messages",
        "toolCalls",
        "input",
        "output",
        "cacheRead",
        "cacheWrite",
        "totalTokens",
        "cost",
    ] {
        assert_eq!(
            shown[key][0].as_str().unwrap(),
            total[key].to_string(),
            "{key}"
        );
    }
    let download = "SESSION_VIEWER.jsonl().arrayBuffer().then(b => Array.from(new Uint8Array(b)))";
    let bytes: Vec<u8> = serde_json::from_value(page.eval(download)).unwrap();
    assert_eq!(bytes, std::fs::read(&src).unwrap());

    // A v1 file (its rows are rewritten on read and travel beside the file's bytes) in a
    // compressed page: the download is still the file's bytes.
    let Some(pi) = pi_fixture(test) else {
        return;
    };
    let url = export_page(dir.path(), &pi);
    open_viewer(&page, &url);
    let bytes: Vec<u8> = serde_json::from_value(page.eval(download)).unwrap();
    assert_eq!(bytes.len(), std::fs::metadata(&pi).unwrap().len() as usize);
    assert!(bytes == std::fs::read(&pi).unwrap(), "download differs");
    let r = run_in(dir.path(), ["usage", pi.to_str().unwrap(), "--json"]);
    let usage: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(page.eval("SESSION_VIEWER.totals()"), usage["total"]);
}

/// A session whose messages carry Markdown, raw HTML and links that must not survive.
fn markdown_session(dir: &Path) -> std::path::PathBuf {
    let rows = [
        r#"{"type":"session","version":3,"id":"0195f3a0-7c1e-7000-8000-0000000000d1","timestamp":"2026-01-02T09:00:00.000Z","cwd":"/tmp"}"#,
        r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-02T09:00:01.000Z","message":{"role":"user","content":"**bold** and `code` <img src=x onerror=alert(1)> <script>alert(2)</script>"}}"#,
        r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-02T09:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"- one\n- [two](https://example.invalid/x)\n\n[bad](javascript:alert(3)) ![img](https://example.invalid/i.png)"},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"<b>x</b>"}}],"stopReason":"toolUse"}}"#,
        r#"{"type":"message","id":"r1","parentId":"a1","timestamp":"2026-01-02T09:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"**not markdown** <i>x</i>"}],"isError":true}}"#,
    ];
    let p = dir.join("md.jsonl");
    plant(&p, (rows.join("\n") + "\n").as_bytes());
    p
}

#[test]
fn markdown_is_rendered_and_sanitised_and_tool_results_stay_text() {
    let test = "markdown_is_rendered_and_sanitised_and_tool_results_stay_text";
    let Some(page) = browser(test) else {
        return;
    };
    let dir = tempdir();
    let src = markdown_session(dir.path());
    open_viewer(&page, &export_page(dir.path(), &src));
    assert_eq!(
        page.eval("document.querySelector('#entry-u1 .md').innerHTML"),
        json!(
            "<p><strong>bold</strong> and <code>code</code> &lt;img src=x onerror=alert(1)&gt; &lt;script&gt;alert(2)&lt;/script&gt;</p>\n"
        )
    );
    assert_eq!(
        page.eval("document.querySelector('#entry-a1 .md').innerHTML"),
        json!(
            "<ul>\n<li>one</li>\n<li><a href=\"https://example.invalid/x\" rel=\"noopener noreferrer\">two</a></li>\n</ul>\n<p><a rel=\"noopener noreferrer\">bad</a> </p>\n"
        )
    );
    // No element from the transcript: no image, no script beyond the page's own two.
    assert_eq!(page.eval("document.images.length"), json!(0));
    assert_eq!(page.eval("document.scripts.length"), json!(2));
    // The tool result is text, paired with its call and marked as an error.
    assert_eq!(
        page.eval(
            "(() => { const t = document.querySelector('#entry-a1 .tool'); return [t.className, t.querySelector('.tool-result').className, t.querySelector('.tool-result pre').innerHTML]; })()"
        ),
        json!(["tool error", "tool-result error", "**not markdown** &lt;i&gt;x&lt;/i&gt;"])
    );
}

#[test]
fn appended_rows_show_up_in_the_tree_and_on_the_followed_path() {
    let test = "appended_rows_show_up_in_the_tree_and_on_the_followed_path";
    let Some(page) = browser(test) else {
        return;
    };
    let dir = tempdir();
    let src = fixture("branchy.jsonl");
    open_viewer(&page, &export_page(dir.path(), &src));
    let row1 = r#"{"type":"message","id":"u0000005","parentId":"a0000006","timestamp":"2026-01-02T09:00:22.000Z","message":{"role":"user","content":[{"type":"text","text":"And *now*?"}]}}"#;
    let row2 = r#"{"type":"label","id":"l0000003","parentId":"u0000005","timestamp":"2026-01-02T09:00:23.000Z","targetId":"u0000005","label":"followup"}"#;
    let n = page.eval(&format!(
        "SESSION_VIEWER.append([{{row: {}, md: ['<p>And <em>now</em>?</p>']}}, {}])",
        serde_json::to_string(row1).unwrap(),
        serde_json::to_string(row2).unwrap()
    ));
    assert_eq!(n, json!(2));
    assert_eq!(page.eval("SESSION_VIEWER.leaf()"), json!("l0000003"));
    assert_eq!(
        page.eval(
            "[...document.querySelectorAll('#tree li.node')].slice(-3).map(e => [e.dataset.id, e.className, e.querySelector('.badge') ? e.querySelector('.badge').textContent : null])"
        ),
        json!([
            ["a0000006", "node k-message r-assistant on-path", null],
            ["u0000005", "node k-message r-user on-path fu fl", "followup"],
            ["l0000003", "node k-label on-path leaf fs", null],
        ])
    );
    assert_eq!(
        page.eval(
            "[...document.querySelectorAll('#path > .entry')].slice(-3).map(e => e.dataset.entry)"
        ),
        json!(["a0000006", "u0000005", "l0000003"])
    );
    assert_eq!(
        page.eval("document.querySelector('#entry-u0000005 .md').innerHTML"),
        json!("<p>And <em>now</em>?</p>")
    );
    // The download gains the rows, one a line.
    let download = "SESSION_VIEWER.jsonl().text()";
    let mut want = std::fs::read_to_string(&src).unwrap();
    want.push_str(&format!("{row1}\n{row2}\n"));
    assert_eq!(page.eval(download), json!(want));
    // A row already shown is not added twice.
    assert_eq!(
        page.eval(&format!(
            "SESSION_VIEWER.append([{}])",
            serde_json::to_string(row2).unwrap()
        )),
        json!(0)
    );
    assert_eq!(
        page.eval("document.querySelectorAll('#tree li.node').length"),
        json!(23)
    );
}
