//! `sessions --backend redis://…` and `sessions migrate`, against a real `redis-server` started
//! by session-store's harness ([`LocalRedisServer`]: a free loopback port, no persistence;
//! these tests skip with a printed reason only when no redis-server binary exists):
//!
//! - the demo store plus this crate's fixtures (torn tail, empty file, malformed line, bad
//!   header, v1, …) migrate into Redis; `list`, `tree`, `context`, `show`, `stats`, `check` and
//!   `export` (json, jsonl, markdown, html) through `--backend` print exactly what they print on
//!   the files, and the whole Redis keyspace is unchanged afterwards (read-only);
//! - migrating back into a new directory gives the same bytes for every session, mode 0600;
//!   every Redis session holds the file's bytes;
//! - a migration onto existing sessions with other bytes is refused and changes nothing (in
//!   both directions); identical sessions are reported, not copied again;
//! - `--dry-run` writes nothing (DBSIZE stays, no directory appears);
//! - symlinks and FIFOs are left alone; the other subcommands refuse `--backend`;
//! - a migration carries modification times both ways (a file's mtime becomes the Redis
//!   session's change stamp and last activity, a Redis session's last change the file's
//!   mtime), so `continueRecent` picks the same session before and after.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use crate::support::*;
use serde_json::Value;
use session_store::SessionManager;
use session_store::redis_store::RedisStorage;
use session_store::test_util::redis_server::LocalRedisServer;
use session_store::{FileStorage, Storage};

/// The demo store plus the fixtures, under `<tmp>/state`.
struct Store {
    dir: tempfile::TempDir,
    root: PathBuf,
}

impl Store {
    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    fn root_str(&self) -> &str {
        self.root.to_str().unwrap()
    }
}

/// The fixture files (all `*.jsonl` of `tests/fixtures/`), by name.
fn fixture_names() -> Vec<String> {
    contents(&fixtures_dir())
        .into_iter()
        .map(|(name, _)| name)
        .filter(|n| n.ends_with(".jsonl"))
        .collect()
}

/// `sessions demo` at a fixed `--now` (agent main: 3 sessions and `sessions.json`) plus
/// `agents/fix/sessions/`: every fixture and `archive/old.jsonl` (a copy of branchy.jsonl): 14
/// sessions.
fn build_store() -> Store {
    let dir = tempdir();
    let root = dir.path().join("state");
    let r = run_in_timeout(
        dir.path(),
        [
            "--now",
            "2026-06-12T13:00:00Z",
            "demo",
            "--root",
            root.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let fix = root.join("agents/fix/sessions");
    for name in fixture_names() {
        plant(&fix.join(&name), &std::fs::read(fixture(&name)).unwrap());
    }
    plant(
        &fix.join("archive/old.jsonl"),
        &std::fs::read(fixture("branchy.jsonl")).unwrap(),
    );
    Store { dir, root }
}

/// Runs the binary in the store's temporary directory (killed after 30 s).
fn sessions<S: AsRef<str>>(store: &Store, args: &[S]) -> Run {
    run_in_timeout(store.dir.path(), args.iter().map(AsRef::as_ref))
}

/// The same arguments after `--backend URL`.
fn on_redis<S: AsRef<str>>(store: &Store, url: &str, args: &[S]) -> Run {
    let mut all = vec!["--backend".to_owned(), url.to_owned()];
    all.extend(args.iter().map(|a| a.as_ref().to_owned()));
    sessions(store, &all)
}

fn con(url: &str) -> redis::Connection {
    redis::Client::open(url).unwrap().get_connection().unwrap()
}

fn dbsize(url: &str) -> i64 {
    redis::cmd("DBSIZE").query(&mut con(url)).unwrap()
}

/// Every key of the server with its type and full value (lists in order, hashes and sorted sets
/// with every field and score): equal dumps mean nothing was written.
fn dump(url: &str) -> BTreeMap<String, String> {
    let mut c = con(url);
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut c).unwrap();
    keys.into_iter()
        .map(|k| {
            let ty: String = redis::cmd("TYPE").arg(&k).query(&mut c).unwrap();
            let value = match ty.as_str() {
                "string" => {
                    let v: Vec<u8> = redis::cmd("GET").arg(&k).query(&mut c).unwrap();
                    format!("{v:?}")
                }
                "list" => {
                    let v: Vec<Vec<u8>> = redis::cmd("LRANGE")
                        .arg(&k)
                        .arg(0)
                        .arg(-1)
                        .query(&mut c)
                        .unwrap();
                    format!("{v:?}")
                }
                "hash" => {
                    let v: BTreeMap<String, Vec<u8>> =
                        redis::cmd("HGETALL").arg(&k).query(&mut c).unwrap();
                    format!("{v:?}")
                }
                "zset" => {
                    let v: Vec<(String, String)> = redis::cmd("ZRANGE")
                        .arg(&k)
                        .arg(0)
                        .arg(-1)
                        .arg("WITHSCORES")
                        .query(&mut c)
                        .unwrap();
                    format!("{v:?}")
                }
                other => panic!("unexpected key type {other} of {k}"),
            };
            (k, format!("{ty} {value}"))
        })
        .collect()
}

/// The `*.jsonl` files under `dir` with their bytes, by relative path.
fn sessions_under(dir: &Path) -> Vec<(String, Vec<u8>)> {
    contents(dir)
        .into_iter()
        .filter(|(rel, _)| rel.ends_with(".jsonl"))
        .collect()
}

/// Migrates the store into Redis and checks the run.
fn migrate_in(store: &Store, url: &str) {
    let m = sessions(store, &["migrate", "--from", store.root_str(), "--to", url]);
    assert_eq!(m.code, 1, "{}{}", m.stdout, m.stderr);
    assert_eq!(m.stderr, "");
}

/// `export --format jsonl` with the header's timestamp (the time of the export) replaced.
fn fixed_export_time(s: &str) -> String {
    let Some((head, rest)) = s.split_once('\n') else {
        return s.to_owned();
    };
    let (before, after) = head.split_once("\"timestamp\":\"").unwrap();
    let (_, after) = after.split_once('"').unwrap();
    format!("{before}\"timestamp\":\"<now>\"{after}\n{rest}")
}

/// A `--json` output with the keys that differ by nature removed: timings, and `mtime` (the
/// file's modification time versus the session's last change in Redis).
fn without(mut v: Value, keys: &[&str]) -> Value {
    fn strip(v: &mut Value, keys: &[&str]) {
        match v {
            Value::Object(o) => {
                for k in keys {
                    o.remove(*k);
                }
                o.values_mut().for_each(|v| strip(v, keys));
            }
            Value::Array(a) => a.iter_mut().for_each(|v| strip(v, keys)),
            _ => {}
        }
    }
    strip(&mut v, keys);
    v
}

/// `stats --json` with the session id of bad-header.jsonl removed: it has no readable header,
/// so every read makes one up.
fn made_up_id_removed(mut v: Value) -> Value {
    if let Some(items) = v.as_array_mut() {
        for item in items {
            let made_up = item["file"]
                .as_str()
                .is_some_and(|f| f.ends_with("/bad-header.jsonl"));
            if made_up && let Some(o) = item.as_object_mut() {
                assert!(o.remove("sessionId").is_some());
            }
        }
    }
    v
}

#[test]
fn read_commands_print_the_same_from_redis_as_from_files_and_write_nothing() {
    let test = "read_commands_print_the_same_from_redis_as_from_files_and_write_nothing";
    let Some(server) = LocalRedisServer::start_or_skip(test) else {
        return;
    };
    let url = server.url();
    let store = build_store();
    let root = store.root_str().to_owned();
    migrate_in(&store, &url);
    // A Redis store holds transcripts, not OpenClaw's session store: the files side is read
    // without its `sessions.json` (which `list` would join with the transcripts) too.
    let main_sessions = store.root.join("agents/main/sessions");
    std::fs::rename(
        main_sessions.join("sessions.json"),
        store.dir.path().join("sessions.json.aside"),
    )
    .unwrap();
    let before = dump(&url);
    let keys_before = dbsize(&url);
    // 14 sessions: a meta hash, a header and (unless empty or one line) a list each, plus 4
    // directory indexes.
    assert!(keys_before >= 14 * 2 + 4, "{keys_before} keys");

    let fix = format!("{root}/agents/fix/sessions");
    let telegram =
        format!("{root}/agents/main/sessions/2aaf5170-fc47-420a-b785-9d558717b529.jsonl");
    let mut cases: Vec<Vec<String>> = vec![
        vec!["list".into(), "--root".into(), root.clone()],
        vec!["list".into(), "--all".into(), "--root".into(), root.clone()],
        vec![
            "list".into(),
            "--root".into(),
            root.clone(),
            "--agent".into(),
            "main".into(),
        ],
        vec!["list".into(), "--dir".into(), fix.clone()],
        vec!["check".into(), "--dir".into(), fix.clone()],
        vec!["check".into(), "--json".into(), "--dir".into(), fix.clone()],
        vec![
            "tree".into(),
            "--root".into(),
            root.clone(),
            "--agent".into(),
            "main".into(),
            "--session".into(),
            "2aaf5170".into(),
        ],
        vec![
            "context".into(),
            "--dir".into(),
            fix.clone(),
            "--session".into(),
            "two-roots".into(),
        ],
        vec![
            "show".into(),
            "--dir".into(),
            fix.clone(),
            "--session".into(),
            "branchy".into(),
            "@1".into(),
            "--raw".into(),
        ],
        // An unknown session: the same error, with the same suggestions.
        vec![
            "tree".into(),
            "--dir".into(),
            fix.clone(),
            "--session".into(),
            "two-rots".into(),
        ],
    ];
    let mut files: Vec<String> = vec![
        telegram.clone(),
        format!("{root}/agents/main/sessions/1a24a1ad-0a63-4760-a8f6-7f360ed8908a.jsonl"),
        format!("{root}/agents/main/sessions/d6988196-4218-4350-af0f-59c902eed924.jsonl"),
        format!("{fix}/archive/old.jsonl"),
    ];
    // bad-header.jsonl (a made-up header id) and v1.jsonl (made-up entry ids) render
    // differently on every read, from files too: only `check`, `show --raw` and `list` cover
    // them.
    files.extend(
        fixture_names()
            .iter()
            .filter(|n| *n != "bad-header.jsonl" && *n != "v1.jsonl")
            .map(|n| format!("{fix}/{n}")),
    );
    for f in &files {
        for args in [
            vec!["tree", f],
            vec!["tree", f, "--json"],
            vec!["tree", f, "--depth", "2"],
            vec!["context", f],
            vec!["context", f, "--json"],
            vec!["export", f, "--format", "json"],
            vec!["export", f, "--format", "markdown"],
            vec!["export", f, "--format", "html"],
            vec!["check", f],
            vec!["show", f, "@2", "--raw"],
        ] {
            cases.push(args.into_iter().map(str::to_owned).collect());
        }
    }
    for name in ["bad-header.jsonl", "v1.jsonl"] {
        let f = format!("{fix}/{name}");
        cases.push(vec!["check".into(), f.clone()]);
        cases.push(vec!["show".into(), f, "@1".into(), "--raw".into()]);
    }
    let json_cases: Vec<Vec<String>> = [
        vec!["list", "--root", &root, "--json"],
        vec!["list", "--dir", &fix, "--json"],
        vec!["stats", &telegram, "--json"],
        vec!["stats", "--dir", &fix, "--json"],
    ]
    .into_iter()
    .map(|a| a.into_iter().map(str::to_owned).collect())
    .collect();
    let exports: Vec<Vec<String>> = files
        .iter()
        .map(|f| {
            vec![
                "export".into(),
                f.clone(),
                "--format".into(),
                "jsonl".into(),
            ]
        })
        .collect();

    // Everything on the files first; then the files go away, so what follows can only have
    // been read from Redis.
    let on_files = |cases: &[Vec<String>]| -> Vec<Run> {
        cases.iter().map(|args| sessions(&store, args)).collect()
    };
    let (files_out, files_json, files_exports) =
        (on_files(&cases), on_files(&json_cases), on_files(&exports));
    let rel = "state/agents/main/sessions/2aaf5170-fc47-420a-b785-9d558717b529.jsonl";
    let rel_on_files = sessions(&store, &["tree", rel, "--depth", "1"]);
    std::fs::rename(&store.root, store.dir.path().join("moved-away")).unwrap();
    assert_eq!(sessions(&store, &["tree", &telegram]).code, 2);

    for (args, f) in cases.iter().zip(&files_out) {
        let r = on_redis(&store, &url, args);
        assert_eq!(
            (f.code, &f.stdout, &f.stderr),
            (r.code, &r.stdout, &r.stderr),
            "sessions {args:?}"
        );
    }
    // --json outputs: equal apart from timings and mtimes.
    for (args, f) in json_cases.iter().zip(&files_json) {
        let r = on_redis(&store, &url, args);
        assert_eq!(
            (f.code, &f.stderr),
            (r.code, &r.stderr),
            "sessions {args:?}"
        );
        let keys = ["mtime", "openMs", "treeMs"];
        let fv = made_up_id_removed(without(serde_json::from_str(&f.stdout).unwrap(), &keys));
        let rv = made_up_id_removed(without(serde_json::from_str(&r.stdout).unwrap(), &keys));
        assert_eq!(fv, rv, "sessions {args:?}");
    }
    // export --format jsonl: equal apart from the header's timestamp (the time of the export).
    for (args, a) in exports.iter().zip(&files_exports) {
        let b = on_redis(&store, &url, args);
        assert_eq!((a.code, &a.stderr), (b.code, &b.stderr), "{args:?}");
        assert_eq!(
            fixed_export_time(&a.stdout),
            fixed_export_time(&b.stdout),
            "{args:?}"
        );
    }

    // A few exact lines from Redis.
    let r = on_redis(&store, &url, &["list", "--dir", &fix]);
    assert_eq!(r.code, 0);
    assert!(
        r.stdout.contains(&format!(
            "0195f3a0-7c1e-7000-8000-0000000000b2   \"first question\"         4  2026-01-02 09:00  \
             1.4 KiB  {fix}/two-roots.jsonl\n"
        )),
        "{}",
        r.stdout
    );
    // The fixtures copied from one another share header ids: flagged before the skipped files.
    assert_eq!(
        r.stderr,
        format!(
            "warning: 2 files share the session id \"0195f3a0-7c1e-7000-8000-0000000000b1\" \
             (--session by that id is ambiguous wherever two of them are found; give the path \
             instead): {fix}/archive/old.jsonl, {fix}/branchy.jsonl\n\
             warning: 5 files share the session id \"0195f3a0-7c1e-7000-8000-0000000000c1\" \
             (--session by that id is ambiguous wherever two of them are found; give the path \
             instead): {fix}/cycle.jsonl, {fix}/dangling-parent.jsonl, \
             {fix}/duplicate-ids.jsonl, {fix}/malformed-line.jsonl, {fix}/torn-tail.jsonl\n\
             warning: skipped 2 files:\n  {fix}/bad-header.jsonl: not a session file: the first \
             line is not a session header\n  {fix}/empty.jsonl: empty file\n"
        )
    );
    let two_roots = format!("{fix}/two-roots.jsonl");
    let r = on_redis(&store, &url, &["tree", &two_roots]);
    assert_eq!(
        r.stdout.lines().take(6).collect::<Vec<_>>(),
        [
            format!("{two_roots} — 4 entries, 2 roots, 0 branch points, leaf a1000002").as_str(),
            "tips: a1000001, a1000002",
            "├─ ○ u1000001 user       first question",
            "│  ○ a1000001 assistant  first answer",
            "└─ ● u1000002 user       a fresh start",
            "   ● a1000002 assistant  second answer  ◀ leaf",
        ]
    );
    let r = on_redis(&store, &url, &["context", &two_roots]);
    assert_eq!(
        r.stdout,
        format!(
            "{two_roots} — context at leaf a1000002: 2 messages, thinking off, model \
             anthropic/claude-sonnet-4-5\n1  u1000002  user       a fresh start\n2  a1000002  \
             assistant  second answer\n"
        )
    );
    let r = on_redis(&store, &url, &["export", &two_roots, "--format", "jsonl"]);
    let lines: Vec<String> = fixed_export_time(&r.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(
        lines[0],
        r#"{"type":"session","version":3,"id":"0195f3a0-7c1e-7000-8000-0000000000b2","timestamp":"<now>","cwd":"/home/dev/project"}"#
    );
    assert!(
        lines[1].starts_with(
            r#"{"type":"message","id":"u1000002","parentId":null,"timestamp":"2026-01-02T09:00:03.000Z","message":{"role":"user","content":[{"type":"text","text":"a fresh start"}]"#
        ),
        "{}",
        lines[1]
    );
    let r = on_redis(&store, &url, &["list", "--root", &root]);
    let row = r
        .stdout
        .lines()
        .find(|l| l.ends_with("/agents/main/sessions/2aaf5170-fc47-420a-b785-9d558717b529.jsonl"))
        .unwrap();
    assert!(row.starts_with("main "), "{row}");
    assert!(
        row.contains("  Lisbon weekend  ") && row.contains("  18  2026-06-12 10:10  8.8 KiB  "),
        "{row}"
    );

    // A relative path names the key of the path made absolute, and is shown so (the README
    // says so): otherwise the output is the files' output.
    let from_redis = on_redis(&store, &url, &["tree", rel, "--depth", "1"]);
    assert_eq!(
        (rel_on_files.code, from_redis.code),
        (0, 0),
        "{}",
        from_redis.stderr
    );
    assert!(
        rel_on_files.stdout.starts_with(&format!("{rel} — ")),
        "{}",
        rel_on_files.stdout
    );
    assert_eq!(
        from_redis.stdout,
        rel_on_files.stdout.replacen(rel, &telegram, 1)
    );

    // Not one key, value, score or version changed.
    assert_eq!(dbsize(&url), keys_before);
    assert_eq!(dump(&url), before);
}

#[test]
fn migrating_back_into_a_new_directory_gives_the_same_bytes_with_mode_0600() {
    let test = "migrating_back_into_a_new_directory_gives_the_same_bytes_with_mode_0600";
    let Some(server) = LocalRedisServer::start_or_skip(test) else {
        return;
    };
    let url = server.url();
    let store = build_store();
    let root = store.root_str().to_owned();
    let m = sessions(&store, &["migrate", "--from", &root, "--to", &url]);
    assert_eq!(m.code, 1, "{}", m.stderr);
    let lines: Vec<&str> = m.stdout.lines().collect();
    assert_eq!(lines[0], format!("from: {root} (files)"));
    assert_eq!(
        lines[1],
        format!("to:   {url} (prefix openclaw:sessions), keys under {root}")
    );
    for line in [
        "copied      agents/fix/sessions/archive/old.jsonl (6.4 KiB)",
        "copied      agents/fix/sessions/empty.jsonl (0 B)",
        "copied      agents/fix/sessions/torn-tail.jsonl (844 B)",
        "copied      agents/main/sessions/2aaf5170-fc47-420a-b785-9d558717b529.jsonl (8.8 KiB)",
    ] {
        assert!(lines.contains(&line), "{line}\n{}", m.stdout);
    }
    let summary = lines.last().unwrap();
    assert!(
        summary.starts_with("copied 14 sessions (")
            && summary.ends_with(
                ", each read back and verified); 0 already at the destination, 0 left alone, 0 \
                 failed"
            ),
        "{summary}"
    );

    // Every Redis session holds the file's bytes (the key is the file's absolute path).
    let files = sessions_under(&store.root);
    assert_eq!(files.len(), 14);
    let redis = RedisStorage::connect(&url, None).unwrap();
    for (rel, bytes) in &files {
        assert_eq!(&redis.read_all(&store.path(rel)).unwrap(), bytes, "{rel}");
    }

    // Back into a new directory: the same files, byte for byte, mode 0600.
    let back = store.dir.path().join("back");
    let b = sessions(
        &store,
        &[
            "migrate",
            "--from",
            &url,
            "--to",
            back.to_str().unwrap(),
            "--redis-root",
            &root,
        ],
    );
    assert_eq!(b.code, 1, "{}{}", b.stdout, b.stderr);
    assert_eq!(
        b.stdout.lines().next().unwrap(),
        format!("from: {url} (prefix openclaw:sessions), keys under {root}")
    );
    assert_eq!(contents(&back), files);
    for (rel, _) in &files {
        let mode = std::fs::metadata(back.join(rel))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o7777, 0o600, "{rel}");
    }

    // Again: everything is already there; nothing is copied or changed.
    let before = dump(&url);
    let again = sessions(
        &store,
        &[
            "migrate",
            "--from",
            &url,
            "--to",
            back.to_str().unwrap(),
            "--redis-root",
            &root,
            "--json",
        ],
    );
    assert_eq!(again.code, 0, "{}", again.stderr);
    let v: Value = serde_json::from_str(&again.stdout).unwrap();
    assert_eq!(
        v["counts"],
        serde_json::json!({
            "copied": 0, "wouldCopy": 0, "identical": 14, "exists": 0, "failed": 0, "leftAlone": 0
        })
    );
    assert_eq!(
        v["from"],
        serde_json::json!({
            "backend": "redis", "url": url, "prefix": "openclaw:sessions", "root": root
        })
    );
    assert_eq!(
        v["to"],
        serde_json::json!({ "backend": "files", "dir": back.to_str().unwrap() })
    );
    let telegram = v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["path"] == "agents/main/sessions/2aaf5170-fc47-420a-b785-9d558717b529.jsonl")
        .unwrap();
    assert_eq!(
        telegram,
        &serde_json::json!({
            "path": "agents/main/sessions/2aaf5170-fc47-420a-b785-9d558717b529.jsonl",
            "source": format!("{root}/agents/main/sessions/2aaf5170-fc47-420a-b785-9d558717b529.jsonl"),
            "destination": back.join("agents/main/sessions/2aaf5170-fc47-420a-b785-9d558717b529.jsonl").to_str().unwrap(),
            "bytes": std::fs::metadata(store.path("agents/main/sessions/2aaf5170-fc47-420a-b785-9d558717b529.jsonl")).unwrap().len(),
            "outcome": "identical",
            "error": null,
        })
    );
    assert_eq!(contents(&back), files);
    assert_eq!(dump(&url), before);
}

#[test]
fn a_migration_onto_other_sessions_is_refused_and_changes_nothing() {
    let test = "a_migration_onto_other_sessions_is_refused_and_changes_nothing";
    let Some(server) = LocalRedisServer::start_or_skip(test) else {
        return;
    };
    let url = server.url();
    let store = build_store();
    let root = store.root_str().to_owned();
    migrate_in(&store, &url);

    // Redis side: one session grown by another writer, one gone.
    let redis = RedisStorage::connect(&url, None).unwrap();
    let grown = store.path("agents/fix/sessions/two-roots.jsonl");
    redis.append_raw(&grown, b"{\"x\":1}\n").unwrap();
    let gone = store.path("agents/main/sessions/d6988196-4218-4350-af0f-59c902eed924.jsonl");
    redis.remove(&gone, None).unwrap();
    let before = dump(&url);
    let r = sessions(&store, &["migrate", "--from", &root, "--to", &url]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stdout.contains(
            "\nexists      agents/fix/sessions/two-roots.jsonl: the destination holds other bytes \
             (1,466 bytes here, 1,474 bytes there)\n"
        ),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(
            "\nidentical   agents/fix/sessions/branchy.jsonl (already at the destination)\n"
        ),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.ends_with(
            "\nrefused: 1 session exists at the destination with other contents; nothing written \
             (migrate never replaces a session: move those away or migrate to another place)\n"
        ),
        "{}",
        r.stdout
    );
    assert_eq!(
        r.stderr,
        "error: refusing to migrate: 1 session exists at the destination with other contents \
         (listed); nothing was written\n"
    );
    assert_eq!(dump(&url), before, "the refused run wrote to redis");
    assert!(redis.version(&gone).unwrap().is_none());

    // Files side: one file changed, one removed, and a directory where a session would go.
    let back = store.dir.path().join("back");
    let back_s = back.to_str().unwrap().to_owned();
    let b = sessions(
        &store,
        &[
            "migrate",
            "--from",
            &url,
            "--to",
            &back_s,
            "--redis-root",
            &root,
        ],
    );
    assert_eq!(b.code, 1, "{}", b.stderr);
    plant(&back.join("agents/fix/sessions/cycle.jsonl"), b"edited\n");
    std::fs::remove_file(back.join("agents/fix/sessions/empty.jsonl")).unwrap();
    std::fs::remove_file(back.join("agents/fix/sessions/v1.jsonl")).unwrap();
    std::fs::create_dir(back.join("agents/fix/sessions/v1.jsonl")).unwrap();
    let listing_before = listing(&back);
    let contents_before = contents(&back);
    let r = sessions(
        &store,
        &[
            "migrate",
            "--from",
            &url,
            "--to",
            &back_s,
            "--redis-root",
            &root,
            "--json",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.stdout);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["refused"], true);
    let outcome = |rel: &str| {
        v["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["path"] == rel)
            .map(|s| (s["outcome"].clone(), s["error"].clone()))
            .unwrap()
    };
    assert_eq!(
        outcome("agents/fix/sessions/cycle.jsonl"),
        (
            "exists".into(),
            "the destination holds other bytes (970 bytes here, 7 bytes there)".into()
        )
    );
    assert_eq!(
        outcome("agents/fix/sessions/v1.jsonl"),
        ("exists".into(), "a directory is at the destination".into())
    );
    assert_eq!(
        outcome("agents/fix/sessions/empty.jsonl"),
        ("notCopied".into(), Value::Null)
    );
    assert_eq!(v["counts"]["exists"], 2);
    assert_eq!(v["counts"]["copied"], 0);
    assert_eq!(listing(&back), listing_before);
    assert_eq!(contents(&back), contents_before);
}

#[test]
fn a_dry_run_writes_nothing() {
    let Some(server) = LocalRedisServer::start_or_skip("a_dry_run_writes_nothing") else {
        return;
    };
    let url = server.url();
    let store = build_store();
    let root = store.root_str().to_owned();
    assert_eq!(dbsize(&url), 0);
    let r = sessions(
        &store,
        &["migrate", "--from", &root, "--to", &url, "--dry-run"],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("\nwould copy  agents/main/sessions/2aaf5170-fc47-420a-b785-9d558717b529.jsonl (8.8 KiB)\n"),
        "{}",
        r.stdout
    );
    let summary = r.stdout.lines().last().unwrap();
    assert!(
        summary.starts_with("dry run: would copy 14 sessions (")
            && summary.ends_with(
                "); 0 already at the destination, 0 left alone, 0 failed; nothing written"
            ),
        "{summary}"
    );
    assert_eq!(dbsize(&url), 0);

    let j = sessions(
        &store,
        &[
            "migrate",
            "--from",
            &root,
            "--to",
            &url,
            "--dry-run",
            "--json",
        ],
    );
    assert_eq!(j.code, 1);
    let v: Value = serde_json::from_str(&j.stdout).unwrap();
    assert_eq!(v["dryRun"], true);
    assert_eq!(v["counts"]["wouldCopy"], 14);
    assert_eq!(v["bytesCopied"], 0);
    assert!(
        v["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["outcome"] == "wouldCopy")
    );
    assert_eq!(dbsize(&url), 0);

    // From Redis into a directory: the directory does not even appear.
    migrate_in(&store, &url);
    let before = dump(&url);
    let back = store.dir.path().join("back");
    let r = sessions(
        &store,
        &[
            "migrate",
            "--from",
            &url,
            "--to",
            back.to_str().unwrap(),
            "--redis-root",
            &root,
            "--dry-run",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(!back.exists());
    assert_eq!(dump(&url), before);
}

#[test]
fn symlinks_and_fifos_are_left_alone_and_prefixes_keep_stores_apart() {
    let test = "symlinks_and_fifos_are_left_alone_and_prefixes_keep_stores_apart";
    let Some(server) = LocalRedisServer::start_or_skip(test) else {
        return;
    };
    let url = server.url();
    let dir = tempdir();
    let sessions_dir = dir.path().join("agents/main/sessions");
    plant(
        &sessions_dir.join("two-roots.jsonl"),
        &std::fs::read(fixture("two-roots.jsonl")).unwrap(),
    );
    std::os::unix::fs::symlink(fixture("branchy.jsonl"), sessions_dir.join("link.jsonl")).unwrap();
    mkfifo(&sessions_dir.join("pipe.jsonl"));
    plant(&dir.path().join("sessions.json"), b"{}\n");
    let root = dir.path().to_str().unwrap();
    let with_prefix = format!("{url}?prefix=team-a");
    let r = run_in_timeout(
        dir.path(),
        ["migrate", "--from", root, "--to", &with_prefix],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        format!(
            "from: {root} (files)\nto:   {url} (prefix team-a), keys under {root}\n\
             copied      agents/main/sessions/two-roots.jsonl (1.4 KiB)\n\
             left alone  agents/main/sessions/link.jsonl: a symbolic link (not followed: migrate \
             copies regular files only)\n\
             left alone  agents/main/sessions/pipe.jsonl: a fifo, not a regular file\n\
             copied 1 session (1.4 KiB, each read back and verified); 0 already at the \
             destination, 2 left alone, 0 failed\n"
        )
    );
    // The store of prefix team-a holds the session; the default prefix holds nothing.
    let listed = run_in_timeout(
        dir.path(),
        [
            "--backend",
            &url,
            "--redis-prefix",
            "team-a",
            "list",
            "--root",
            root,
            "--json",
        ],
    );
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    let v: Value = serde_json::from_str(&listed.stdout).unwrap();
    let paths: Vec<&str> = v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [sessions_dir.join("two-roots.jsonl").to_str().unwrap()]
    );
    let other = run_in_timeout(dir.path(), ["--backend", &url, "list", "--root", root]);
    assert_eq!(other.code, 2);
    assert!(
        other.stderr.starts_with(&format!(
            "error: no OpenClaw store at {root} in {url} (prefix openclaw:sessions)"
        )),
        "{}",
        other.stderr
    );
}

#[test]
fn the_other_subcommands_refuse_a_redis_backend() {
    // Refused before any connection is attempted: no server is needed (port 1 answers nothing).
    let dir = tempdir();
    let url = "redis://127.0.0.1:1/";
    let demo_root = dir.path().join("demo");
    for (name, args) in [
        ("repair", vec!["repair", "x.jsonl"]),
        ("unlock", vec!["unlock", "--stale", "."]),
        ("archive", vec!["archive", "--all", "--max-age", "1d"]),
        ("clear", vec!["clear", "--agent", "main", "--all", "--yes"]),
    ] {
        let mut all = vec!["--backend", url];
        all.extend(args);
        let r = run_in(dir.path(), &all);
        assert_eq!(r.code, 2, "{name}");
        assert_eq!(r.stdout, "", "{name}");
        assert_eq!(
            r.stderr,
            format!(
                "error: `sessions {name}` works on files only; --backend {url} applies to list, \
                 tree, context, show, stats, usage, check and export (`sessions migrate` copies sessions \
                 between files and Redis)\n"
            ),
            "{name}"
        );
    }
    // The demo builds files: it says so, and how to get it into Redis.
    let r = run_in(
        dir.path(),
        [
            "--backend",
            url,
            "demo",
            "--root",
            demo_root.to_str().unwrap(),
        ],
    );
    assert_eq!((r.code, r.stdout.as_str()), (2, ""));
    assert_eq!(
        r.stderr,
        "error: `sessions demo` builds its demo store as files under --root; --backend does not \
         apply (to try the demo on Redis, build it, then copy it with `sessions migrate --from \
         DIR --to redis://HOST:PORT/`)\n"
    );
    assert!(!demo_root.exists());
    // `keys parse` reads no store: --backend changes nothing (and nothing connects to port 1).
    let plain = run_in(dir.path(), ["keys", "parse", "agent:main:main"]);
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    let r = run_in(
        dir.path(),
        ["keys", "parse", "agent:main:main", "--backend", url],
    );
    assert_eq!(
        (r.code, &r.stdout, &r.stderr),
        (0, &plain.stdout, &plain.stderr)
    );
    // TLS is not built in: refused before connecting, with the password hidden.
    let r = run_in(
        dir.path(),
        ["--backend", "rediss://:pw@127.0.0.1:1/", "list"],
    );
    assert_eq!((r.code, r.stdout.as_str()), (2, ""));
    assert_eq!(
        r.stderr,
        "error: --backend: rediss://:***@127.0.0.1:1/: TLS (rediss://) is not supported (this \
         build's redis client has no TLS); use redis:// or redis+unix:// (for a server that \
         requires TLS, through a local TLS tunnel); the backends are `files` (the default), \
         sqlite:PATH and redis://…\n"
    );
    let r = run_in(
        dir.path(),
        ["migrate", "--from", ".", "--to", "rediss://127.0.0.1:1/"],
    );
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: rediss://127.0.0.1:1/: TLS (rediss://) is not supported (this build's redis \
         client has no TLS); use redis:// or redis+unix:// (for a server that requires TLS, \
         through a local TLS tunnel)\n"
    );
    let r = run_in(
        dir.path(),
        ["migrate", "--backend", url, "--from", ".", "--to", url],
    );
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: --backend does not apply to migrate: give the two sides with --from and --to (a \
         directory and a redis:// URL)\n"
    );
    let r = run_in(dir.path(), ["migrate", "--from", ".", "--to", "elsewhere"]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: neither --from nor --to is a redis URL; migrate copies between a directory and a \
         redis store (give redis://HOST:PORT/ on one side), or exports an OpenClaw SQLite store \
         (--from sqlite:PATH)\n"
    );
    let r = run_in(dir.path(), ["--backend", "http://h/", "list"]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: --backend: http://h/ is not a redis URL: use redis://HOST:PORT/[DB][?prefix=NAME] \
         (or redis+unix:///PATH); the backends are `files` (the default), sqlite:PATH and \
         redis://…\n"
    );
}

/// A v3 session `<name>.jsonl` in `dir` with one user message, modified at `ns` nanoseconds
/// after the epoch.
fn plant_at(dir: &Path, name: &str, ns: u64) -> PathBuf {
    let text = format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"{name}\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/x\"}}\n\
         {{\"type\":\"message\",\"id\":\"m-{name}\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"hi {name}\",\"timestamp\":1}}}}\n"
    );
    let path = dir.join(format!("{name}.jsonl"));
    plant(&path, text.as_bytes());
    session_store::io::set_modified(&path, UNIX_EPOCH + Duration::from_nanos(ns)).unwrap();
    path
}

/// A file's modification time in nanoseconds since the epoch.
fn mtime_ns(path: &Path) -> u128 {
    std::fs::metadata(path)
        .unwrap()
        .modified()
        .unwrap()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// The file name of the session `Sessions::continue_recent` picks in `dir`.
fn picked(storage: Arc<dyn Storage>, dir: &Path) -> String {
    let sm = SessionManager::on(storage)
        .continue_recent("/x", Some(dir))
        .unwrap();
    let file = sm.get_session_file().unwrap();
    file.file_name().unwrap().to_string_lossy().into_owned()
}

const DAY_NS: u64 = 86_400_000_000_000;

#[test]
fn continue_recent_picks_the_same_session_after_a_migration_to_redis() {
    let test = "continue_recent_picks_the_same_session_after_a_migration_to_redis";
    let Some(server) = LocalRedisServer::start_or_skip(test) else {
        return;
    };
    let url = server.url();
    let tmp = tempdir();
    let root = tmp.path().join("state");
    let dir = root.join("agents/main/sessions");
    let migrate = |from: &str, to: &str, extra: &[&str]| {
        let mut args = vec!["migrate", "--from", from, "--to", to];
        args.extend(extra);
        let out = run_in(tmp.path(), &args);
        assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    };
    // b was modified last (with sub-millisecond digits). A first run copies b; a re-run (say
    // after an interruption) copies a and c, modified long before b, and reports b as
    // identical: every copy carries its file's time, not the time of its copy.
    let b_ns = 20_500 * DAY_NS + 123_456_789;
    let b = plant_at(&dir, "b", b_ns);
    migrate(root.to_str().unwrap(), &url, &[]);
    let a = plant_at(&dir, "a", 20_000 * DAY_NS + 1_999_000);
    let c = plant_at(&dir, "c", 20_000 * DAY_NS + 7_000_001);
    assert_eq!(picked(FileStorage::shared(), &dir), "b.jsonl");
    migrate(root.to_str().unwrap(), &url, &[]);
    let redis = RedisStorage::connect(&url, None).unwrap();
    let shared: Arc<dyn Storage> = Arc::new(redis.clone());
    assert_eq!(picked(Arc::clone(&shared), &dir), "b.jsonl");

    // Files → Redis: the change stamp is the file's mtime in microseconds, the last activity
    // (the listing's score) in milliseconds.
    let listed: Vec<(String, i64)> = redis
        .list(&dir)
        .unwrap()
        .into_iter()
        .map(|e| {
            let name = e.path.file_name().unwrap().to_string_lossy().into_owned();
            (name, e.last_activity_ms)
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("b.jsonl".to_owned(), 1_771_200_000_123),
            ("c.jsonl".to_owned(), 1_728_000_000_007),
            ("a.jsonl".to_owned(), 1_728_000_000_001),
        ]
    );
    for (file, us) in [
        (&a, 1_728_000_000_001_999u64),
        (&b, 1_771_200_000_123_456),
        (&c, 1_728_000_000_007_000),
    ] {
        assert_eq!(
            redis.version(file).unwrap().unwrap().version,
            us,
            "{file:?}"
        );
        assert_eq!(mtime_ns(file) / 1000, u128::from(us), "{file:?}");
    }

    // Redis → files: every file's mtime is the session's last change (microseconds kept),
    // and continueRecent picks b there too.
    let back = tmp.path().join("back");
    migrate(
        &url,
        back.to_str().unwrap(),
        &["--redis-root", root.to_str().unwrap()],
    );
    let back_dir = back.join("agents/main/sessions");
    for name in ["a.jsonl", "b.jsonl", "c.jsonl"] {
        let original = mtime_ns(&dir.join(name));
        let restored = mtime_ns(&back_dir.join(name));
        assert_eq!(restored, original / 1000 * 1000, "{name}");
        assert_eq!(restored / 1_000_000, original / 1_000_000, "{name}");
    }
    assert_eq!(
        mtime_ns(&back_dir.join("b.jsonl")),
        1_771_200_000_123_456_000
    );
    assert_eq!(picked(FileStorage::shared(), &back_dir), "b.jsonl");

    // A later append moves the stamp on as usual (the server's clock, after b's old time).
    let line = br#"{"type":"custom","customType":"note","id":"n1","parentId":"m-b","timestamp":"2026-01-01T00:00:02.000Z"}"#;
    shared
        .append_line(&b, line, session_store::Durability::Buffer, None)
        .unwrap();
    assert!(redis.version(&b).unwrap().unwrap().version > 1_771_200_000_123_456);
}
