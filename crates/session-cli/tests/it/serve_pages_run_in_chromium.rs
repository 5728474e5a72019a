//! `sessions serve`'s pages in a real headless Chromium (skipped with `SKIP` without it): the
//! start URL's redirect sets the cookie, the dashboard's script runs under the page's
//! Content-Security-Policy and draws the sessions table from the listing API, and a session's
//! page gains the serve bar (live status; the branch buttons only with `--allow-write`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::serve::Server;
use crate::support::{chromium, dump_dom_url, plant, small_session, tempdir};

#[test]
fn the_dashboard_and_a_session_page_render_under_their_policy() {
    let Some(chromium) = chromium("the_dashboard_and_a_session_page_render_under_their_policy")
    else {
        return;
    };
    let dir = tempdir();
    plant(&dir.path().join("s1.jsonl"), &small_session());
    let d = dir.path().to_str().unwrap();
    for write in [false, true] {
        let mut args = vec!["--dir", d];
        if write {
            args.push("--allow-write");
        }
        let srv = Server::start(dir.path(), &args);
        let dom = dump_dom_url(
            &chromium,
            &format!("http://{}/?token={}", srv.addr, srv.token),
            &["--virtual-time-budget=5000"],
        );
        assert!(
            dom.contains("<td><a href=\"/s/-/s1\">sess-0001</a></td>"),
            "write={write}: {dom}"
        );
        assert!(dom.contains("<h2>"), "{dom}");
        // The session page keeps an event stream open: a wall-clock limit instead.
        let dom = dump_dom_url(
            &chromium,
            &format!("http://{}/s/-/s1?token={}", srv.addr, srv.token),
            &["--timeout=5000"],
        );
        assert!(
            dom.contains("<aside class=\"serve-bar\" id=\"serve-bar\">"),
            "{dom}"
        );
        assert!(
            dom.contains("<span class=\"serve-status\">live</span>"),
            "{dom}"
        );
        assert_eq!(
            dom.contains("<button type=\"button\" id=\"serve-branch\">Branch from here</button>"),
            write,
            "{dom}"
        );
        assert_eq!(
            dom.contains("<span class=\"serve-mode\">read-only</span>"),
            !write,
            "{dom}"
        );
        // The export's own script ran too: the entries are drawn.
        assert!(dom.contains("data-id=\"a2\""), "{dom}");
    }
}
