//! The `sessions` binary on small fixtures and generated stores: exact output snapshots for
//! tree, context, list, show, check, stats and the exports; exit codes; addressing; the demo;
//! and that no inspection subcommand changes a file.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::Path;

use crate::support::*;
use insta::assert_snapshot;
use session_format::json::{JsValue, parse_value};

fn json(text: &str) -> JsValue {
    parse_value(text.as_bytes()).unwrap()
}

fn ok(r: &Run) -> &str {
    assert_eq!(r.code, 0, "stderr: {}\nstdout: {}", r.stderr, r.stdout);
    &r.stdout
}

// ---------------------------------------------------------------------------------------
// tree

#[test]
fn tree_of_a_branchy_session() {
    let r = run(["tree", "branchy.jsonl"]);
    assert_snapshot!(ok(&r));
}

#[test]
fn tree_with_two_roots() {
    let r = run(["tree", "two-roots.jsonl"]);
    assert_snapshot!(ok(&r));
}

#[test]
fn tree_depth_limit_counts_what_is_cut() {
    let r = run(["tree", "branchy.jsonl", "--depth", "9"]);
    let out = ok(&r);
    assert!(out.contains("│  ⋯ 3 more entries below"), "{out}");
    assert!(out.contains("   ⋯ 8 more entries below"), "{out}");
    assert_snapshot!(out);
}

#[test]
fn tree_json_shape() {
    let r = run(["tree", "--json", "branchy.jsonl"]);
    let v = json(ok(&r));
    assert_eq!(v.get("entryCount").and_then(JsValue::as_f64), Some(21.0));
    assert_eq!(v.get("branchPoints").and_then(JsValue::as_f64), Some(1.0));
    let nodes = v.get("nodes").and_then(JsValue::as_array).unwrap();
    assert_eq!(nodes.len(), 21);
    let leaf: Vec<_> = nodes
        .iter()
        .filter(|n| n.get("leaf") == Some(&JsValue::Bool(true)))
        .collect();
    assert_eq!(leaf.len(), 1);
    assert_eq!(
        leaf[0].get("id").and_then(JsValue::as_str_lossy).as_deref(),
        Some("a0000006")
    );
    assert_snapshot!(r.stdout);
}

#[test]
fn tree_width_is_respected() {
    let r = run(["tree", "branchy.jsonl", "--width", "60"]);
    for line in ok(&r).lines().skip(1) {
        if line.starts_with("legend:") {
            continue;
        }
        let w = unicode_width::UnicodeWidthStr::width(line);
        // Excerpts shrink to fit; only the fixed columns and markers can overflow a tiny width.
        assert!(w <= 80, "{w}: {line}");
    }
}

// ---------------------------------------------------------------------------------------
// context

#[test]
fn context_at_the_leaf_starts_with_the_compaction_summary() {
    let r = run(["context", "branchy.jsonl"]);
    assert_snapshot!(ok(&r));
}

#[test]
fn context_at_another_leaf() {
    let r = run(["context", "branchy.jsonl", "--leaf", "a0000004"]);
    assert_snapshot!(ok(&r));
}

#[test]
fn context_json_is_build_session_context() {
    let r = run(["context", "--json", "branchy.jsonl"]);
    let out = ok(&r);
    // The same value the library returns.
    let ro =
        session_store::SessionManager::open_read_only(&fixture("branchy.jsonl"), None).unwrap();
    let expected = ro
        .session
        .build_session_context()
        .unwrap()
        .to_value()
        .unwrap();
    assert_eq!(json(out), expected);
    assert_snapshot!(out);
}

#[test]
fn context_unknown_leaf_is_an_error_with_close_matches() {
    let r = run(["context", "branchy.jsonl", "--leaf", "a00000066"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("did you mean: a0000006"), "{}", r.stderr);
}

// ---------------------------------------------------------------------------------------
// show

#[test]
fn show_prints_pretty_json() {
    let r = run(["show", "branchy.jsonl", "c0000001"]);
    assert_snapshot!(ok(&r));
}

#[test]
fn show_by_prefix_line_and_raw() {
    let by_prefix = run(["show", "branchy.jsonl", "x0000002"]);
    let by_line = run(["show", "branchy.jsonl", "@21"]);
    assert_eq!(ok(&by_prefix), ok(&by_line));
    let raw = run(["show", "--raw", "branchy.jsonl", "@21"]);
    let line21 = std::fs::read_to_string(fixture("branchy.jsonl"))
        .unwrap()
        .lines()
        .nth(20)
        .unwrap()
        .to_owned();
    assert_eq!(ok(&raw), format!("{line21}\n"));
}

#[test]
fn show_unknown_and_ambiguous_ids() {
    let r = run(["show", "branchy.jsonl", "a0000007"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no entry \"a0000007\""), "{}", r.stderr);
    assert!(r.stderr.contains("did you mean:"), "{}", r.stderr);
    let r = run(["show", "branchy.jsonl", "a00"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("ambiguous"), "{}", r.stderr);
}

// ---------------------------------------------------------------------------------------
// check

const CORRUPT: [(&str, &str); 7] = [
    ("torn-tail.jsonl", "torn-tail"),
    ("bad-header.jsonl", "corrupt-header"),
    ("malformed-line.jsonl", "malformed-line"),
    ("dangling-parent.jsonl", "dangling-parent"),
    ("duplicate-ids.jsonl", "duplicate-id"),
    ("cycle.jsonl", "parent-cycle"),
    ("empty.jsonl", "empty"),
];

#[test]
fn check_exit_codes() {
    for clean in ["branchy.jsonl", "two-roots.jsonl"] {
        let r = run(["check", clean]);
        assert_eq!(r.code, 0, "{clean}: {}", r.stdout);
    }
    for (file, kind) in CORRUPT {
        let r = run(["check", file]);
        assert_eq!(r.code, 1, "{file}: {}", r.stdout);
        assert!(
            r.stdout.contains(&format!(": {kind}: ")),
            "{file}: {}",
            r.stdout
        );
    }
    let r = run(["check", "branchy.jsonl", "no-such-file.jsonl"]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    let r = run(["check", "no-such-file.jsonl"]);
    assert_eq!(r.code, 2);
}

#[test]
fn check_reports_file_line_and_byte_offset() {
    let mut args = vec!["check", "branchy.jsonl"];
    args.extend(CORRUPT.iter().map(|(f, _)| *f));
    // An unmigrated file: a note, and ok.
    args.push("v1.jsonl");
    let r = run(&args);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout
            .contains("torn-tail.jsonl:4: byte 784: torn-tail: the last line is unterminated"),
        "{}",
        r.stdout
    );
    assert_snapshot!(r.stdout);
}

#[test]
fn check_json() {
    let r = run(["check", "--json", "torn-tail.jsonl", "branchy.jsonl"]);
    assert_eq!(r.code, 1);
    assert_snapshot!(r.stdout);
}

// ---------------------------------------------------------------------------------------
// stats

#[test]
fn stats_json_counts() {
    let r = run(["stats", "--json", "branchy.jsonl", "v1.jsonl"]);
    let mut v = json(ok(&r));
    for item in v.as_array().map(Vec::len).map(|n| 0..n).unwrap() {
        // Timings vary: check they are numbers, then blank them for the snapshot.
        let o = match &mut v {
            JsValue::Array(a) => a[item].as_object_mut().unwrap(),
            _ => unreachable!(),
        };
        for k in ["openMs", "treeMs"] {
            assert!(matches!(o.get(k), Some(JsValue::Number(_))));
            o.insert(k, JsValue::from("[ms]"));
        }
    }
    assert_snapshot!(session_format::normalize::to_json_string_indented(&v, 2));
}

#[test]
fn stats_text() {
    let r = run(["stats", "branchy.jsonl"]);
    let out = ok(&r);
    let out: String = out
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("open time") {
                "  open time      [ms]".to_owned()
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert_snapshot!(out);
}

// ---------------------------------------------------------------------------------------
// export

#[test]
fn export_jsonl_rechains_the_current_branch() {
    let r = run(["export", "branchy.jsonl", "--format", "jsonl"]);
    let out = ok(&r);
    let lines: Vec<JsValue> = out.lines().map(json).collect();
    let header = &lines[0];
    assert_eq!(header.get("version"), Some(&JsValue::Number(3.0)));
    assert_eq!(
        header.get("id").and_then(JsValue::as_str_lossy).as_deref(),
        Some("0195f3a0-7c1e-7000-8000-0000000000b1")
    );
    assert!(header.get("parentSession").is_none());
    let keys: Vec<String> = header
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.to_string())
        .collect();
    assert_eq!(keys, ["type", "version", "id", "timestamp", "cwd"]);
    // One linear chain: each parentId is the previous id.
    let mut prev = JsValue::Null;
    for e in &lines[1..] {
        assert_eq!(e.get("parentId"), Some(&prev));
        prev = e.get("id").cloned().unwrap();
    }
    assert_eq!(lines.len() - 1, 17); // the current branch
    // Only the new header's timestamp (now) varies.
    let now = header
        .get("timestamp")
        .and_then(JsValue::as_str_lossy)
        .unwrap()
        .into_owned();
    assert_snapshot!(out.replacen(&now, "[now]", 1));
}

#[test]
fn export_markdown() {
    let r = run(["export", "branchy.jsonl", "--format", "markdown"]);
    assert_snapshot!(ok(&r));
}

#[test]
fn export_json_holds_every_entry() {
    let r = run(["export", "branchy.jsonl", "--format", "json"]);
    let v = json(ok(&r));
    assert_eq!(
        v.get("entries").and_then(JsValue::as_array).map(Vec::len),
        Some(21)
    );
    assert_eq!(
        v.get("leafId").and_then(JsValue::as_str_lossy).as_deref(),
        Some("a0000006")
    );
}

#[test]
fn export_html_is_self_contained() {
    let r = run(["export", "branchy.jsonl", "--format", "html"]);
    let html = ok(&r);
    // Without a browser: a strict policy that runs only the page's own script (by its hash),
    // no network reference, and the session data as one embedded payload.
    assert!(
        html.contains(
            "content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-"
        )
    );
    assert!(!html.contains("'unsafe-inline'; img") && !html.contains("script-src 'unsafe-inline'"));
    for net in ["http://", "https://", "//cdn", "src=\"//"] {
        assert!(!html.contains(net), "network reference {net}");
    }
    assert_eq!(html.matches("id=\"payload\"").count(), 1);
    assert!(
        html.contains(
            "<script type=\"application/octet-stream\" id=\"payload\" data-enc=\"base64\">"
        )
    );
    // The entries are rendered by the page's script: check them in the DOM Chromium builds.
    let Some(chromium) = chromium("export_html_is_self_contained") else {
        return;
    };
    let dir = tempdir();
    let page = dir.path().join("branchy.html");
    plant(&page, html.as_bytes());
    let dom = dump_dom(&chromium, &page);
    for id in [
        "m0000001", "u0000001", "a0000002", "l0000001", "u0000002", "a0000004", "b0000001",
        "c0000001", "x0000001", "x0000002", "a0000006",
    ] {
        assert!(dom.contains(&format!("data-id=\"{id}\"")), "{id}");
    }
    // The tree node of the leaf, and the leaf's entry in the main pane (the current path).
    assert!(dom.contains(
        "<li class=\"node k-message r-assistant on-path leaf\" data-id=\"a0000006\" data-line=\"22\">"
    ));
    assert!(dom.contains(
        "class=\"entry k-message r-assistant on-branch leaf\" id=\"entry-a0000006\" data-entry=\"a0000006\""
    ));
    assert!(dom.contains("<span class=\"badge\">diagnosis</span>"));
}

#[test]
fn export_to_a_file_refuses_to_overwrite() {
    let dir = tempdir();
    let src = dir.path().join("s.jsonl");
    plant_copy(&fixture("branchy.jsonl"), &src);
    let out = dir.path().join("out.md");
    let r = run_in(
        dir.path(),
        ["export", "s.jsonl", "--format", "md", "-o", "out.md"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("wrote out.md"));
    let first = std::fs::read(&out).unwrap();
    let r = run_in(
        dir.path(),
        ["export", "s.jsonl", "--format", "json", "-o", "out.md"],
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("already exists"), "{}", r.stderr);
    assert_eq!(std::fs::read(&out).unwrap(), first);
    let r = run_in(
        dir.path(),
        [
            "export", "s.jsonl", "--format", "json", "-o", "out.md", "--force",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_ne!(std::fs::read(&out).unwrap(), first);
    // Never over the session file itself, even with --force.
    let before = fingerprint(&src);
    let r = run_in(
        dir.path(),
        [
            "export", "s.jsonl", "--format", "jsonl", "-o", "s.jsonl", "--force",
        ],
    );
    assert_eq!(r.code, 2);
    assert_eq!(fingerprint(&src), before);
}

// ---------------------------------------------------------------------------------------
// list and addressing

/// A store with two agents, a v1 file, a file that is not a session, an empty file and an
/// unreadable one (a directory named like a session).
fn store(root: &Path) {
    let main = root.join("agents/main/sessions");
    let ops = root.join("agents/ops/sessions");
    plant(
        &main.join("telegram_123456.jsonl"),
        &std::fs::read(fixture("branchy.jsonl")).unwrap(),
    );
    plant(
        &main.join("discord_981234567890.jsonl"),
        &std::fs::read(fixture("two-roots.jsonl")).unwrap(),
    );
    plant(
        &ops.join("slack_u02opsbot.jsonl"),
        &std::fs::read(fixture("v1.jsonl")).unwrap(),
    );
    plant(&ops.join("notes.jsonl"), b"not a session\n");
    plant(&ops.join("blank.jsonl"), b"");
    std::fs::create_dir_all(ops.join("broken.jsonl")).unwrap();
    plant(&root.join("agents/ops/sessions/.keep"), b"");
}

#[test]
fn list_all_agents() {
    let dir = tempdir();
    let root = dir.path().join("state");
    store(&root);
    let r = run_in(dir.path(), ["list", "--root", "state"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_snapshot!("list_all_stdout", r.stdout);
    assert_snapshot!("list_all_stderr", r.stderr);
    // The default root comes from $OPENCLAW_STATE_DIR.
    let env = cmd()
        .current_dir(dir.path())
        .env("OPENCLAW_STATE_DIR", &root)
        .args(["list", "--all"])
        .output()
        .unwrap();
    assert!(env.status.success());
    let env_out = String::from_utf8(env.stdout).unwrap();
    assert_eq!(
        redact(&env_out, &root, "state"),
        r.stdout,
        "list via $OPENCLAW_STATE_DIR"
    );
}

#[test]
fn list_one_agent_as_json() {
    let dir = tempdir();
    let root = dir.path().join("state");
    store(&root);
    let r = run_in(
        dir.path(),
        ["list", "--root", "state", "--agent", "ops", "--json"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = json(&r.stdout);
    let sessions = v.get("sessions").and_then(JsValue::as_array).unwrap();
    assert_eq!(sessions.len(), 1);
    let skipped = v.get("skipped").and_then(JsValue::as_array).unwrap();
    assert_eq!(skipped.len(), 3, "{}", r.stdout);
    // `mtime` is the file's modification time (planted just now): check it, then blank it.
    let file = root.join("agents/ops/sessions/slack_u02opsbot.jsonl");
    let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
    let ms = mtime
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let iso = session_format::time::to_iso_string(ms).unwrap();
    assert_eq!(
        sessions[0]
            .get("mtime")
            .and_then(JsValue::as_str_lossy)
            .as_deref(),
        Some(iso.as_str())
    );
    assert_snapshot!(r.stdout.replace(&iso, "[mtime]"));
}

#[test]
fn list_by_dir_and_errors() {
    let dir = tempdir();
    let root = dir.path().join("state");
    store(&root);
    let r = run_in(dir.path(), ["list", "--dir", "state/agents/main/sessions"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.lines().count(), 3, "{}", r.stdout);
    assert!(!r.stdout.starts_with("AGENT"));
    let r = run_in(dir.path(), ["list", "--root", "state", "--agent", "mian"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("did you mean: main?"), "{}", r.stderr);
    let r = run_in(dir.path(), ["list", "--root", "nowhere"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("no OpenClaw store at nowhere"),
        "{}",
        r.stderr
    );
}

#[test]
fn addressing_by_agent_and_session() {
    let dir = tempdir();
    let root = dir.path().join("state");
    store(&root);
    let by_path = run_in(
        dir.path(),
        ["tree", "state/agents/main/sessions/telegram_123456.jsonl"],
    );
    let by_name = run_in(
        dir.path(),
        [
            "tree",
            "--root",
            "state",
            "--agent",
            "main",
            "--session",
            "telegram_123456",
        ],
    );
    // Same tree; the header names the resolved path.
    assert_eq!(by_path.stdout, by_name.stdout);
    let by_suffix = run_in(
        dir.path(),
        [
            "tree",
            "--root",
            "state",
            "--agent",
            "main",
            "--session",
            "123456",
        ],
    );
    assert_eq!(by_suffix.stdout, by_path.stdout);
    // A prefix of another user's id is not a match.
    let prefix = run_in(
        dir.path(),
        [
            "tree",
            "--root",
            "state",
            "--agent",
            "main",
            "--session",
            "telegram_12345",
        ],
    );
    assert_eq!(prefix.code, 2);
    let by_dir = run_in(
        dir.path(),
        [
            "context",
            "--dir",
            "state/agents/main/sessions",
            "--session",
            "telegram_123456",
        ],
    );
    assert_eq!(by_dir.code, 0, "{}", by_dir.stderr);
    let env = cmd()
        .current_dir(dir.path())
        .env("OPENCLAW_STATE_DIR", "state")
        .args([
            "show",
            "--agent",
            "main",
            "--session",
            "telegram_123456",
            "c0000001",
        ])
        .output()
        .unwrap();
    assert!(env.status.success());
    let unknown = run_in(
        dir.path(),
        [
            "tree",
            "--root",
            "state",
            "--agent",
            "main",
            "--session",
            "telegram_654321",
        ],
    );
    assert_eq!(unknown.code, 2);
    assert_snapshot!(redact(&unknown.stderr, dir.path(), "[TMP]"));
    let both = run_in(
        dir.path(),
        [
            "tree",
            "x.jsonl",
            "--agent",
            "main",
            "--session",
            "telegram_123456",
        ],
    );
    assert_eq!(both.code, 2);
    let none = run_in(dir.path(), ["tree"]);
    assert_eq!(none.code, 2);
    assert!(none.stderr.contains("no session given"), "{}", none.stderr);
    // stats and check take every session of an agent.
    let all = run_in(dir.path(), ["check", "--root", "state", "--agent", "main"]);
    assert_eq!(all.code, 0, "{}", all.stdout);
    assert!(
        all.stdout.contains("checked 2 files: 2 ok"),
        "{}",
        all.stdout
    );
}

#[test]
fn usage_errors_exit_2() {
    let r = run(["tree", "--depth", "x", "branchy.jsonl"]);
    assert_eq!(r.code, 2);
    let r = run(["frobnicate"]);
    assert_eq!(r.code, 2);
    let r = run(["tree", "missing.jsonl"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("missing.jsonl"), "{}", r.stderr);
}

#[test]
fn help_documents_every_subcommand() {
    for sub in [
        "list",
        "tree",
        "context",
        "show",
        "stats",
        "check",
        "export",
        "demo",
        "replay",
        "repair",
        "unlock",
        "archive",
        "clear",
        "keys parse",
    ] {
        let mut args: Vec<&str> = sub.split(' ').collect();
        args.push("--help");
        let r = run(&args);
        assert_eq!(r.code, 0, "{sub}");
        assert!(
            r.stdout.len() > 400,
            "{sub} --help is too short:\n{}",
            r.stdout
        );
    }
    let r = run(["tree", "--help"]);
    assert!(r.stdout.contains("\"nodes\""));
}

// ---------------------------------------------------------------------------------------
// read-only

#[test]
fn inspection_never_writes() {
    assert_read_only(&fixture("branchy.jsonl"), "c0000001");
    // A writable open would migrate and rewrite these.
    assert_read_only(&fixture("v1.jsonl"), "@2");
    assert_read_only(&fixture("torn-tail.jsonl"), "@2");
    assert_read_only(&fixture("bad-header.jsonl"), "@2");
    assert_read_only(&fixture("empty.jsonl"), "@1");
}

// ---------------------------------------------------------------------------------------
// demo

/// The demo's output with the root, random ids, timestamps and the list's ID column made
/// stable: list rows become `|`-separated cells.
fn stable_demo_output(out: &str, root: &Path) -> String {
    let text = redact(out, root, "[ROOT]");
    let mut in_list = false;
    let mut lines = Vec::new();
    for l in text.lines() {
        if l.starts_with("$ sessions list") {
            in_list = true;
            lines.push(l.to_owned());
            continue;
        }
        if in_list && l.is_empty() {
            in_list = false;
        }
        if in_list {
            let mut cells: Vec<&str> = l
                .split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect();
            if cells.len() > 1 && cells[0] != "AGENT" {
                cells[1] = "[id]";
            }
            lines.push(cells.join(" | "));
        } else {
            lines.push(l.to_owned());
        }
    }
    session_format::normalize::normalize_text(&lines.join("\n"), None)
}

#[test]
fn demo_builds_a_store_and_rerunning_replaces_only_it() {
    let dir = tempdir();
    let root = dir.path().join("sessions-demo");
    let demo = || {
        run_in(
            dir.path(),
            [
                "--now",
                "2026-06-12T13:00:00Z",
                "demo",
                "--root",
                root.to_str().unwrap(),
            ],
        )
    };
    let r = demo();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("$ sessions tree "));
    assert!(r.stdout.contains("$ sessions context "));
    assert_snapshot!(stable_demo_output(&r.stdout, &root));

    let sessions = root.join("agents/main/sessions");
    let files = [
        "1a24a1ad-0a63-4760-a8f6-7f360ed8908a.jsonl",
        "2aaf5170-fc47-420a-b785-9d558717b529.jsonl",
        "d6988196-4218-4350-af0f-59c902eed924.jsonl",
        "sessions.json",
    ];
    assert_eq!(dir_names(&sessions), files);
    for f in &files[..3] {
        let c = run(["check", sessions.join(f).to_str().unwrap()]);
        assert_eq!(c.code, 0, "{f}: {}", c.stdout);
    }
    let names = |v: &[Fingerprint]| v.iter().map(|f| f.sha256.clone()).collect::<Vec<_>>();
    let prints: Vec<Fingerprint> = files
        .iter()
        .map(|f| fingerprint(&sessions.join(f)))
        .collect();

    // Rerunning replaces the demo's own store: the same names, files written again.
    let again = demo();
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(dir_names(&sessions), files);
    let now: Vec<Fingerprint> = files
        .iter()
        .map(|f| fingerprint(&sessions.join(f)))
        .collect();
    // The store's bytes depend only on --now; the transcripts' entry ids are new.
    assert_eq!(now[3].sha256, prints[3].sha256);
    assert_ne!(names(&now[..3]), names(&prints[..3]));

    // What OpenClaw makes beside the store when it reads it (its state database) is not the
    // demo's: a rerun leaves it byte for byte and rebuilds the store.
    let oc_state = root.join("state/openclaw.sqlite");
    plant(&oc_state, b"SQLite format 3\0");
    let oc_before = fingerprint(&oc_state);
    let again = demo();
    assert_eq!((again.code, again.stderr.as_str()), (0, ""));
    assert_eq!(dir_names(&sessions), files);
    assert_eq!(fingerprint(&oc_state), oc_before);
    std::fs::remove_dir_all(root.join("state")).unwrap();
    let now: Vec<Fingerprint> = files
        .iter()
        .map(|f| fingerprint(&sessions.join(f)))
        .collect();

    // Anything else in the demo's sessions directory: refused, named, nothing removed.
    let mine = sessions.join("whatsapp_4915.jsonl");
    plant(&mine, &std::fs::read(fixture("two-roots.jsonl")).unwrap());
    let mine_before = fingerprint(&mine);
    let refused = demo();
    assert_eq!(refused.code, 2);
    assert_eq!(
        refused.stderr,
        format!(
            "error: not rebuilding the demo in {}: {} is not part of the demo store (the manifest \
             does not record it); the demo replaces only its own store. Move it away or choose \
             another --root\n",
            root.display(),
            mine.display()
        )
    );
    assert_eq!(fingerprint(&mine), mine_before);
    assert_eq!(
        files
            .iter()
            .map(|f| fingerprint(&sessions.join(f)))
            .collect::<Vec<_>>(),
        now
    );
    std::fs::remove_file(&mine).unwrap();

    // A demo file changed since the demo wrote it is not removed: refused.
    let dm = sessions.join(files[1]);
    session_store::io::append_raw(&dm, b"{\"type\":\"custom\",\"customType\":\"mine\",\"id\":\"ffff0001\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:00.000Z\"}\n").unwrap();
    let changed = fingerprint(&dm);
    let refused = demo();
    assert_eq!(refused.code, 2);
    assert_eq!(
        refused.stderr,
        format!(
            "error: not rebuilding the demo in {}: {} was changed since the demo wrote it; the \
             demo replaces only its own store. Move it away or choose another --root\n",
            root.display(),
            dm.display()
        )
    );
    assert_eq!(fingerprint(&dm), changed);
}

#[test]
fn demo_refuses_a_foreign_store_even_with_force() {
    let dir = tempdir();
    let root = dir.path().join("state");
    store(&root);
    // A user's file where the demo would write.
    plant(
        &root.join("agents/main/sessions/telegram_123456.jsonl"),
        &std::fs::read(fixture("branchy.jsonl")).unwrap(),
    );
    let before = fingerprint(&root.join("agents/main/sessions/telegram_123456.jsonl"));
    for args in [
        vec!["demo", "--root", "state"],
        vec!["demo", "--root", "state", "--force"],
    ] {
        let r = run_in(dir.path(), &args);
        assert_eq!(r.code, 2, "{args:?}");
    }
    assert_eq!(
        fingerprint(&root.join("agents/main/sessions/telegram_123456.jsonl")),
        before
    );
}

// ---------------------------------------------------------------------------------------
// replay

#[test]
fn replay_matches_the_reference_output() {
    let Some(shared) = shared_dir("replay_matches_the_reference_output") else {
        return;
    };
    let script = shared.join("conformance/scripts/p01-basic.json");
    let expected = shared.join("conformance/expected/openclaw-2026.6.11/p01-basic.json");
    if !script.is_file() || !expected.is_file() {
        session_test_support::skip(
            "replay_matches_the_reference_output",
            format_args!("p01-basic not in {}", shared.display()),
        );
        return;
    }
    let r = run(["replay", script.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, std::fs::read_to_string(expected).unwrap());
}
