//! The read commands on odd stores: `check` and `stats` give each file its own result, rows too
//! deep to decode and files that are not sessions are reported, what `check` reports and its
//! exit code, the demo's manifest and store guard, shortest unique short ids, usage messages,
//! session addressing, `--dir`, help texts, `show --raw`, pi sessions and `context` explanations.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::Path;

use crate::support::*;
use insta::assert_snapshot;
use session_format::json::{JsValue, parse_value};

fn json(text: &str) -> JsValue {
    parse_value(text.as_bytes()).unwrap()
}

// ---------------------------------------------------------------------------------------
// check and stats give each file its own result

#[test]
fn check_and_stats_give_each_file_its_own_result() {
    let dir = tempdir();
    let d = dir.path();
    let s = d.join("s");
    plant(&s.join("ok.jsonl"), &small_session());
    std::fs::create_dir_all(s.join("d.jsonl")).unwrap();
    symlink("/nonexistent-for-tests/gone", s.join("gone.jsonl")).unwrap();
    let r = run_in_timeout(
        d,
        [
            "check",
            "s/missing.jsonl",
            "s/ok.jsonl",
            "s/d.jsonl",
            "s/gone.jsonl",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "s/missing.jsonl: error: does not exist\n\
         s/ok.jsonl: ok (3 entries)\n\
         s/d.jsonl: error: is a directory\n\
         s/gone.jsonl: error: is a dangling symbolic link (its target /nonexistent-for-tests/gone \
         does not exist)\n\
         checked 4 files: 1 ok, 3 unreadable\n"
    );
    let r = run_in_timeout(d, ["check", "--json", "s/missing.jsonl", "s/ok.jsonl"]);
    assert_eq!(r.code, 2);
    let v = json(&r.stdout);
    let a = v.as_array().unwrap();
    assert_eq!(a.len(), 2);
    assert_eq!(
        a[0].get("error").and_then(JsValue::as_str_lossy).as_deref(),
        Some("does not exist")
    );
    assert_eq!(a[0].get("ok"), Some(&JsValue::Bool(false)));
    assert_eq!(a[1].get("error"), Some(&JsValue::Null));
    assert_eq!(a[1].get("ok"), Some(&JsValue::Bool(true)));

    // stats --dir: the directory named *.jsonl is reported, the session still counted.
    let r = run_in_timeout(d, ["stats", "--dir", "s"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stdout.starts_with("s/ok.jsonl\n"), "{}", r.stdout);
    assert!(r.stdout.contains("  entries        3\n"), "{}", r.stdout);
    assert_eq!(
        r.stderr,
        "error: s/d.jsonl is a directory; pass a session file, or use --dir s/d.jsonl to work on \
         the sessions in it\n\
         error: s/gone.jsonl: is a dangling symbolic link (its target /nonexistent-for-tests/gone \
         does not exist)\n"
    );
    let r = run_in_timeout(d, ["stats", "--json", "s/ok.jsonl", "s/missing.jsonl"]);
    assert_eq!(r.code, 2);
    let v = json(&r.stdout);
    let a = v.as_array().unwrap();
    assert_eq!(a.len(), 2);
    assert_eq!(a[0].get("entries").and_then(JsValue::as_f64), Some(3.0));
    assert_eq!(
        a[1].get("error").and_then(JsValue::as_str_lossy).as_deref(),
        Some("s/missing.jsonl: does not exist")
    );
}

// ---------------------------------------------------------------------------------------
// rows nested deeper than the library can decode

fn deep_session() -> (Vec<u8>, usize) {
    let deep = format!(
        r#"{{"type":"message","id":"n1","parentId":"a3","timestamp":"2026-01-01T00:00:04.000Z","message":{{"role":"user","content":[{{"type":"text","text":"deep"}}],"x":{}{}}}}}"#,
        "[".repeat(1200),
        "]".repeat(1200)
    );
    let base = small_session();
    let offset = base.len();
    let mut bytes = base;
    bytes.extend_from_slice(deep.as_bytes());
    bytes.push(b'\n');
    (bytes, offset)
}

#[test]
fn rows_too_deep_to_decode_are_reported_and_shown_honestly() {
    let dir = tempdir();
    let d = dir.path();
    let (bytes, offset) = deep_session();
    plant(&d.join("deep.jsonl"), &bytes);
    let abs = std::fs::canonicalize(d.join("deep.jsonl")).unwrap();

    let r = run_in_timeout(d, ["check", "deep.jsonl"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        format!(
            "deep.jsonl:5: byte {offset}: too-deep: nesting deeper than 1000 levels: kept \
             verbatim, cannot be decoded (message entry \"n1\")\n\
             checked 1 file: 0 ok, 1 with problems (1 problem)\n"
        )
    );

    let r = run_in_timeout(d, ["tree", "deep.jsonl"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("● n1 message    (too deep to decode)  ◀ leaf\n"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("(no message)"));
    assert_eq!(
        r.stderr,
        "warning: deep.jsonl: 1 problem (run `sessions check deep.jsonl`)\n"
    );

    let one_line = format!(
        "error: {}:5: byte {offset}: nesting deeper than 1000 levels: kept verbatim, cannot be \
         decoded (`sessions show --raw {} @5` prints the line)\n",
        abs.display(),
        abs.display()
    );
    for args in [
        vec!["context", "--json", "deep.jsonl"],
        vec!["show", "deep.jsonl", "n1"],
        vec!["export", "deep.jsonl", "--format", "json"],
        vec!["export", "deep.jsonl", "--format", "html"],
    ] {
        let r = run_in_timeout(d, &args);
        assert_eq!(r.code, 2, "{args:?}");
        assert_eq!(r.stderr, one_line, "{args:?}");
    }
    // The text context shows it, as the tree does.
    let r = run_in_timeout(d, ["context", "deep.jsonl"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("4  n1  message    (too deep to decode)\n"),
        "{}",
        r.stdout
    );
    // --raw prints it as stored.
    let r = run_in_timeout(d, ["show", "--raw", "deep.jsonl", "@5"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.as_bytes(), &bytes[offset..]);
    assert_eq!(
        r.stderr,
        format!("deep.jsonl:5: byte {offset}: JSON, type \"message\", id \"n1\"\n")
    );
}

// ---------------------------------------------------------------------------------------
// files that are not sessions

#[test]
fn files_that_are_not_sessions_are_errors() {
    let dir = tempdir();
    let d = dir.path();
    plant(
        &d.join("passwd"),
        b"root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n",
    );
    let binary: Vec<u8> = (0..=255u8).cycle().take(2048).collect();
    plant(&d.join("binary.jsonl"), &binary);
    plant(&d.join("garbage.jsonl"), b"{{{{ not json\nmore garbage\n");
    plant(&d.join("ws.jsonl"), b"  \n\t\n");
    plant(
        &d.join("badonly.jsonl"),
        b"{\"type\":\"sessionx\",\"id\":\"x\"}\n",
    );
    for (file, why) in [
        (
            "passwd",
            "no line is a session header and no entry could be read (`sessions check passwd` has \
             details)",
        ),
        (
            "binary.jsonl",
            "no line is a session header and no entry could be read (`sessions check \
             binary.jsonl` has details)",
        ),
        (
            "garbage.jsonl",
            "no line is a session header and no entry could be read (`sessions check \
             garbage.jsonl` has details)",
        ),
        ("ws.jsonl", "the file holds only whitespace (5 bytes)"),
        (
            "badonly.jsonl",
            "no line is a session header and no entry could be read (`sessions check \
             badonly.jsonl` has details)",
        ),
    ] {
        for args in [
            vec!["tree", file],
            vec!["context", file],
            vec!["stats", file],
            vec!["export", file],
            vec!["export", file, "--format", "jsonl"],
            vec!["export", file, "-o", "out.json"],
        ] {
            let r = run_in_timeout(d, &args);
            assert_eq!(r.code, 2, "{args:?}");
            assert_eq!(r.stdout, "", "{args:?}");
            assert_eq!(
                r.stderr,
                format!("error: not a session file: {file}: {why}\n"),
                "{args:?}"
            );
        }
    }
    assert!(!d.join("out.json").exists());

    // A corrupt header over readable entries: work on them, and say so.
    let mut bad = b"{\"type\":\"sessionx\",\"id\":\"x\"}\n".to_vec();
    bad.extend_from_slice(&small_session()[HEADER.len() + 1..]);
    plant(&d.join("badheader.jsonl"), &bad);
    let warn = "warning: badheader.jsonl: no readable session header (no line is a session row \
                with a string id); working on the 3 entries that could be read, under a made-up \
                header with a new session id (`sessions check badheader.jsonl` has details)\n";
    let r = run_in_timeout(d, ["tree", "badheader.jsonl"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.lines().count(), 5, "{}", r.stdout);
    assert_eq!(
        r.stderr,
        format!(
            "{warn}warning: badheader.jsonl: 1 problem (run `sessions check badheader.jsonl`)\n"
        )
    );
    let r = run_in_timeout(d, ["export", "badheader.jsonl", "--format", "jsonl"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let header = json(r.stdout.lines().next().unwrap());
    let id = header.get("id").and_then(JsValue::as_str_lossy).unwrap();
    let cwd = header.get("cwd").and_then(JsValue::as_str_lossy).unwrap();
    assert_eq!(
        r.stderr,
        format!(
            "{warn}warning: the exported header is made up, not read from the file: session id \
             {id} is new and cwd {cwd} is the current directory\n"
        )
    );
    assert_eq!(r.stdout.lines().count(), 4);
}

// ---------------------------------------------------------------------------------------
// what check reports: errors and warnings

#[test]
fn check_reports_what_list_and_context_building_fail_on() {
    let dir = tempdir();
    let d = dir.path();
    let rows = vec![
        HEADER.to_owned(),
        msg("s1", None, "user", "fine"),
        r#"{"type":"message","id":"s2","parentId":"s1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":null}}"#.to_owned(),
        r#"{"type":"message","id":"s3","parentId":"s2","timestamp":"2026-01-01T00:00:03.000Z","message":"notobj"}"#.to_owned(),
        r#"{"type":"message","id":"s4","parentId":"s3","timestamp":"2026-01-01T00:00:04.000Z","message":null}"#.to_owned(),
        r#"{"type":"session_info","id":"s5","parentId":"s4","timestamp":"2026-01-01T00:00:05.000Z","name":42}"#.to_owned(),
        r#"{"type":"message","id":"s6","parentId":"s5","timestamp":"2026-01-01T00:00:06.000Z","message":{"role":"user","content":[null]}}"#.to_owned(),
        "null".to_owned(),
    ];
    plant(&d.join("bad.jsonl"), &lines(&rows));
    let r = run_in_timeout(d, ["check", "bad.jsonl"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_snapshot!(r.stdout);
    // `list` skips the same file.
    let r = run_in_timeout(d, ["list", "--dir", "."]);
    assert!(r.stderr.contains("bad.jsonl: not listable"), "{}", r.stderr);
}

#[test]
fn check_warnings_do_not_change_the_exit_code() {
    let dir = tempdir();
    let d = dir.path();
    let body = &small_session()[HEADER.len() + 1..];
    let with_header = |h: &str| {
        let mut b = h.as_bytes().to_vec();
        b.push(b'\n');
        b.extend_from_slice(body);
        b
    };
    plant(
        &d.join("v99.jsonl"),
        &with_header(&HEADER.replace("\"version\":3", "\"version\":99")),
    );
    plant(
        &d.join("vstr.jsonl"),
        &with_header(&HEADER.replace("\"version\":3", "\"version\":\"3\"")),
    );
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend_from_slice(&small_session());
    plant(&d.join("bom.jsonl"), &bom);
    let crlf = String::from_utf8(small_session())
        .unwrap()
        .replace('\n', "\r\n");
    plant(&d.join("crlf.jsonl"), crlf.as_bytes());
    let mut compaction = small_session();
    compaction.extend_from_slice(
        br#"{"type":"compaction","id":"cp","parentId":"a3","timestamp":"2026-01-01T00:00:05.000Z","summary":"s","firstKeptEntryId":"nowhere","tokensBefore":5}"#,
    );
    compaction.push(b'\n');
    plant(&d.join("compaction.jsonl"), &compaction);
    let files = [
        "v99.jsonl",
        "vstr.jsonl",
        "bom.jsonl",
        "crlf.jsonl",
        "compaction.jsonl",
    ];
    let mut args = vec!["check"];
    args.extend(files);
    let r = run_in_timeout(d, &args);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_snapshot!(r.stdout);
    let r = run_in_timeout(d, ["check", "--json", "v99.jsonl"]);
    assert_eq!(r.code, 0);
    let v = json(&r.stdout);
    let p = &v.as_array().unwrap()[0];
    assert_eq!(p.get("ok"), Some(&JsValue::Bool(true)));
    let problem = &p.get("problems").and_then(JsValue::as_array).unwrap()[0];
    assert_eq!(
        problem
            .get("severity")
            .and_then(JsValue::as_str_lossy)
            .as_deref(),
        Some("warning")
    );
    // Whitespace-only is described as such.
    plant(&d.join("ws.jsonl"), b" \n\t\n");
    let r = run_in_timeout(d, ["check", "ws.jsonl"]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stdout,
        "ws.jsonl: empty: the file holds only whitespace (4 bytes, no JSON); a writable open \
         would write a fresh header\nchecked 1 file: 0 ok, 1 with problems (1 problem)\n"
    );
    let help = run_in_timeout(d, ["check", "--help"]);
    assert!(
        help.stdout
            .contains("Warnings (reported, exit code unchanged):")
    );
    assert!(help.stdout.contains("Errors (exit code 1):"));
}

// ---------------------------------------------------------------------------------------
// a failed demo can be cleaned up by --force

#[test]
fn a_demo_that_cannot_write_its_manifest_writes_nothing() {
    let dir = tempdir();
    let base = dir.path();
    std::fs::set_permissions(base, std::fs::Permissions::from_mode(0o755)).unwrap();
    let root = base.join("demo");
    std::fs::create_dir(&root).unwrap();
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o777)).unwrap();
    let manifest = root.join(".sessions-demo.json");
    plant(&manifest, b"{\"files\":[]}\n");
    std::fs::set_permissions(&manifest, std::fs::Permissions::from_mode(0o444)).unwrap();
    // As root, permissions do not stop writes: run the demo as `nobody`.
    let root_user = std::fs::metadata(&manifest).unwrap().uid() == 0;
    let demo = |force: bool| {
        let mut c = if root_user {
            let mut c = std::process::Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
                .arg(env!("CARGO_BIN_EXE_sessions"));
            c.env("HOME", "/nonexistent-home-for-tests");
            c
        } else {
            cmd()
        };
        c.arg("demo").arg("--root").arg(&root);
        if force {
            c.arg("--force");
        }
        run_command_timeout(c, 60)
    };
    if root_user
        && std::process::Command::new("setpriv")
            .arg("--version")
            .output()
            .is_err()
    {
        session_test_support::skip(
            "a_demo_that_cannot_write_its_manifest_writes_nothing",
            "no setpriv",
        );
        return;
    }
    let r = demo(true);
    assert_eq!(r.code, 2, "{}", r.stderr);
    // Nothing but the (unwritable) manifest: no session file the retry would trip over.
    assert_eq!(dir_names(&root), [".sessions-demo.json"], "{}", r.stderr);
    assert!(
        r.stderr.starts_with(&format!(
            "error: cannot write the demo manifest {}",
            manifest.display()
        )),
        "{}",
        r.stderr
    );
    // Once the manifest is writable, --force rebuilds, and again.
    std::fs::set_permissions(&manifest, std::fs::Permissions::from_mode(0o666)).unwrap();
    let r = demo(true);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = demo(true);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(dir_names(&root), [".sessions-demo.json", "agents"]);
}

#[test]
fn a_demo_interrupted_while_writing_a_file_is_replaced_by_the_next_run() {
    let dir = tempdir();
    let root = dir.path().join("demo");
    let tg = "agents/main/sessions/2aaf5170-fc47-420a-b785-9d558717b529.jsonl";
    // What a demo leaves when it stops while writing its first file.
    plant(
        &root.join(".sessions-demo.json"),
        format!("{{\"files\":[{{\"path\":\"{tg}\",\"sha256\":null}}]}}\n").as_bytes(),
    );
    plant(
        &root.join(tg),
        b"{\"type\":\"session\",\"version\":3,\"id\":\"x\"",
    );
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
    let c = run_in_timeout(dir.path(), ["check", root.join(tg).to_str().unwrap()]);
    assert_eq!(c.code, 0, "{}", c.stdout);
}

// ---------------------------------------------------------------------------------------
// demo never writes into a store that is not a demo (--force, an older flag, changes nothing)

#[test]
fn demo_refuses_an_openclaw_store_without_a_manifest() {
    let dir = tempdir();
    let root = dir.path().join("state");
    plant(&root.join("openclaw.json"), b"{}\n");
    plant(
        &root.join("agents/main/sessions/whatsapp_1.jsonl"),
        &small_session(),
    );
    for args in [
        vec!["demo", "--root", "state"],
        vec!["demo", "--root", "state", "--force"],
    ] {
        let r = run_in_timeout(dir.path(), &args);
        assert_eq!(r.code, 2, "{args:?}");
        assert_eq!(
            r.stderr,
            "error: state is not empty and holds no demo manifest (.sessions-demo.json), and it \
             looks like an OpenClaw store (openclaw.json or agents/); the demo writes only into an \
             empty directory or over an earlier demo. Choose another --root\n"
        );
    }
    assert_eq!(dir_names(&root), ["agents", "openclaw.json"]);
    assert_eq!(
        dir_names(&root.join("agents/main/sessions")),
        ["whatsapp_1.jsonl"]
    );
    let help = run_in_timeout(dir.path(), ["demo", "--help"]);
    let help = help.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains(
            "it refuses a non-empty directory without a manifest, such as a real OpenClaw store"
        ),
        "{help}"
    );
}

// ---------------------------------------------------------------------------------------
// short ids are unique

#[test]
fn tree_short_ids_are_shortest_unique_prefixes() {
    let dir = tempdir();
    let d = dir.path();
    let (i1, i2, i3) = (
        "0195f000-0000-7000-8000-000000000001",
        "0195f000-0000-7000-8000-000000000002",
        "0195f000-1111-7000-8000-000000000003",
    );
    let rows = vec![
        HEADER.to_owned(),
        msg(i1, None, "user", "one"),
        msg(i2, Some(i1), "assistant", "two"),
        msg(i3, Some(i2), "user", "three"),
    ];
    plant(&d.join("ids.jsonl"), &lines(&rows));
    let r = run_in_timeout(d, ["tree", "ids.jsonl"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "ids.jsonl — 3 entries, 1 root, 0 branch points, leaf 0195f000-1\n\
         ● 0195f000-0000-7000-8000-000000000001 user       one\n\
         ● 0195f000-0000-7000-8000-000000000002 assistant  two\n\
         ● 0195f000-1                           user       three  ◀ leaf\n\
         legend: ● current branch  ○ other branch  ◀ leaf  ◆ branch point  ✂ compaction  ⇤ \
         first kept entry\n"
    );
    let r = run_in_timeout(d, ["context", "ids.jsonl"]);
    assert!(
        r.stdout
            .contains("\n2  0195f000-0000-7000-8000-000000000002  assistant  two\n"),
        "{}",
        r.stdout
    );
}

// ---------------------------------------------------------------------------------------
// usage messages

#[test]
fn usage_messages_say_what_is_wrong() {
    let dir = tempdir();
    let d = dir.path();
    plant(&d.join("s.jsonl"), &small_session());
    std::fs::create_dir_all(d.join("st/agents/c")).unwrap();
    for (args, want) in [
        (
            vec!["show", "s.jsonl"],
            "error: missing ENTRY_ID: `sessions show s.jsonl ENTRY_ID` (an entry id, a unique \
             prefix of one, or @LINE; `sessions tree` lists the ids)\n",
        ),
        (
            vec!["tree", "-"],
            "error: reading a session from standard input (`-`) is not supported: sessions are \
             opened by path; save it to a file first and pass that path\n",
        ),
        (
            vec!["list", "--dir", "s.jsonl"],
            "error: --dir s.jsonl is not a directory (it is a regular file); pass a session file \
             without --dir, or a directory of *.jsonl files\n",
        ),
        (
            vec!["list", "--root", "st", "--agent", "c"],
            "error: agent \"c\" has no sessions directory: st/agents/c/sessions does not exist\n",
        ),
    ] {
        let r = run_in_timeout(d, &args);
        assert_eq!(r.code, 2, "{args:?}");
        assert_eq!(r.stderr, want, "{args:?}");
    }
    for (args, want) in [
        (
            vec!["tree", "s.jsonl", "--width", "0"],
            "the width must be at least 40 columns",
        ),
        (
            vec!["tree", "s.jsonl", "--depth", "0"],
            "the depth must be at least 1 (the root is depth 1)",
        ),
        (
            vec!["context", "s.jsonl", "--width", "39"],
            "the width must be at least 40 columns",
        ),
    ] {
        let r = run_in_timeout(d, &args);
        assert_eq!(r.code, 2, "{args:?}");
        assert!(r.stderr.contains(want), "{args:?}: {}", r.stderr);
    }
    // An OS error is printed once (reading /proc/self/mem at offset 0 fails with EIO).
    if Path::new("/proc/self/mem").exists() {
        let r = run_in_timeout(d, ["tree", "/proc/self/mem"]);
        assert_eq!(r.code, 2);
        assert_eq!(r.stderr.matches("(os error").count(), 1, "{}", r.stderr);
    }
}

// ---------------------------------------------------------------------------------------
// usability

#[test]
fn session_addressed_by_header_id_in_any_subdirectory() {
    let dir = tempdir();
    let d = dir.path();
    let cwd_dir = d.join("sessions/--home-me-proj--");
    let id = "0195f3a0-7c1e-7000-8000-0000000000b1";
    plant(
        &cwd_dir.join(format!("2026-01-02T09-00-00-000Z_{id}.jsonl")),
        &std::fs::read(fixture("branchy.jsonl")).unwrap(),
    );
    let other = HEADER.replace("sess-0001", "0195f3a0-9999-7000-8000-000000000000");
    let mut b = other.into_bytes();
    b.push(b'\n');
    plant(&d.join("sessions/other.jsonl"), &b);
    let by_path = run_in_timeout(
        d,
        [
            "tree",
            cwd_dir
                .join(format!("2026-01-02T09-00-00-000Z_{id}.jsonl"))
                .to_str()
                .unwrap(),
        ],
    );
    assert_eq!(by_path.code, 0, "{}", by_path.stderr);
    for name in [
        id,
        "0195f3a0-7c1e",
        "2026-01-02T09-00-00-000Z_0195f3a0-7c1e-7000-8000-0000000000b1",
    ] {
        let r = run_in_timeout(d, ["tree", "--dir", "sessions", "--session", name]);
        assert_eq!(r.code, 0, "{name}: {}", r.stderr);
        assert_eq!(
            r.stdout.lines().skip(1).collect::<Vec<_>>(),
            by_path.stdout.lines().skip(1).collect::<Vec<_>>(),
            "{name}"
        );
    }
    let r = run_in_timeout(d, ["tree", "--dir", "sessions", "--session", "0195f3a0"]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: session \"0195f3a0\" is ambiguous in sessions (several session ids start with \
         it): other.jsonl, \
         --home-me-proj--/2026-01-02T09-00-00-000Z_0195f3a0-7c1e-7000-8000-0000000000b1.jsonl\n"
    );
    let r = run_in_timeout(d, ["tree", "--dir", "sessions", "--session", "0195f3a"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("(a session id prefix needs at least 8 characters)"),
        "{}",
        r.stderr
    );
}

#[test]
fn dir_means_the_directory_and_its_immediate_subdirectories_everywhere() {
    let dir = tempdir();
    let d = dir.path();
    plant(&d.join("s/a.jsonl"), &small_session());
    plant(&d.join("s/sub/b.jsonl"), &small_session());
    plant(&d.join("s/sub/deeper/c.jsonl"), &small_session());
    let r = run_in_timeout(d, ["list", "--dir", "s"]);
    assert_eq!(r.stdout.lines().count(), 3, "{}", r.stdout);
    let r = run_in_timeout(d, ["check", "--dir", "s"]);
    assert_eq!(
        r.stdout,
        "s/a.jsonl: ok (3 entries)\ns/sub/b.jsonl: ok (3 entries)\nchecked 2 files: 2 ok\n"
    );
    let r = run_in_timeout(d, ["stats", "--json", "--dir", "s"]);
    assert_eq!(json(&r.stdout).as_array().map(Vec::len), Some(2));
    let r = run_in_timeout(d, ["tree", "--dir", "s", "--session", "b"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.starts_with("s/sub/b.jsonl — 3 entries"),
        "{}",
        r.stdout
    );
    let help = run_in_timeout(d, ["--help"]);
    let help = help.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains(
            "A sessions directory (--agent, --dir, --pi) always means the *.jsonl files directly \
             in it and in its immediate sub-directories, in every subcommand."
        ),
        "{help}"
    );
}

#[test]
fn list_help_explains_modified() {
    let r = run(["list", "--help"]);
    let help = r.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains(
            "MODIFIED (UTC): the time of the newest user or assistant message (OpenClaw's \
             SessionInfo.modified"
        ),
        "{help}"
    );
    assert!(help.contains("it is not the file's mtime"), "{help}");
    assert!(
        help.contains("`mtime` (the file's modification time)"),
        "{help}"
    );
}

#[test]
fn tree_and_context_count_problems_and_mark_cycles() {
    let r = run(["tree", "cycle.jsonl"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "cycle.jsonl — 3 entries, 2 roots, 0 branch points, leaf c2000002\n\
         tips: u2000001, c2000002\n\
         ├─ ○ u2000001 user       hello\n\
         └─ ● c2000001 user       a  ⟲ cycle\n\
         \u{20}  ● c2000002 assistant  b  ⟲ cycle  ◀ leaf\n\
         legend: ● current branch  ○ other branch  ◀ leaf  ◆ branch point  ✂ compaction  ⇤ \
         first kept entry  ⟲ parent cycle\n"
    );
    let line = "warning: cycle.jsonl: 1 problem (run `sessions check cycle.jsonl`)\n";
    assert_eq!(r.stderr, line);
    let r = run(["context", "cycle.jsonl"]);
    assert_eq!(r.stderr, line);
    let r = run(["tree", "branchy.jsonl"]);
    assert_eq!(r.stderr, "");
}

#[test]
fn show_raw_prints_any_line_with_its_offset() {
    let r = run(["show", "--raw", "malformed-line.jsonl", "@3"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let line3 = std::fs::read_to_string(fixture("malformed-line.jsonl"))
        .unwrap()
        .lines()
        .nth(2)
        .unwrap()
        .to_owned();
    assert_eq!(r.stdout, format!("{line3}\n"));
    assert_eq!(
        r.stderr,
        "malformed-line.jsonl:3: byte 325: not JSON: unexpected end of input at byte 28\n"
    );
    let r = run(["show", "--raw", "malformed-line.jsonl", "@1"]);
    assert_eq!(r.code, 0);
    assert_eq!(
        r.stderr,
        "malformed-line.jsonl:1: byte 0: JSON, type \"session\", id \
         \"0195f3a0-7c1e-7000-8000-0000000000c1\"\n"
    );
    let r = run(["show", "--raw", "malformed-line.jsonl", "@9"]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: malformed-line.jsonl has 4 lines; there is no line 9\n"
    );
}

#[test]
fn demo_next_commands_are_quoted_and_rerunnable() {
    let dir = tempdir();
    let root = dir.path().join("demo with space");
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
    let q = format!("'{}'", root.display());
    let dm = format!(
        "'{}/agents/main/sessions/2aaf5170-fc47-420a-b785-9d558717b529.jsonl'",
        root.display()
    );
    let next: Vec<&str> = r.stdout.lines().skip_while(|l| *l != "Next:").collect();
    assert_eq!(
        next,
        [
            "Next:".to_owned(),
            format!(
                "  sessions tree --root {q} --agent main --session \
                 1a24a1ad-0a63-4760-a8f6-7f360ed8908a"
            ),
            format!("  sessions check {dm}"),
            format!("  sessions export {dm} --format html > lisbon.html"),
            format!("  OPENCLAW_STATE_DIR={q} openclaw sessions"),
        ]
    );
    // Each of them runs (the export to a file of its own).
    let tree = run_in_timeout(
        dir.path(),
        [
            "tree",
            "--root",
            root.to_str().unwrap(),
            "--agent",
            "main",
            "--session",
            "1a24a1ad-0a63-4760-a8f6-7f360ed8908a",
        ],
    );
    assert_eq!(tree.code, 0, "{}", tree.stderr);
    let dm_path = root.join("agents/main/sessions/2aaf5170-fc47-420a-b785-9d558717b529.jsonl");
    let check = run_in_timeout(dir.path(), ["check", dm_path.to_str().unwrap()]);
    assert_eq!(check.code, 0, "{}", check.stdout);
    assert!(r.stdout.contains(&format!("$ sessions list --root {q}\n")));
}

#[test]
fn top_level_help_hides_replay_and_says_what_writes() {
    let r = run(["--help"]);
    assert_eq!(r.code, 0);
    let commands: Vec<&str> = r
        .stdout
        .lines()
        .skip_while(|l| *l != "Commands:")
        .take_while(|l| !l.is_empty())
        .collect();
    assert!(commands.len() > 8, "{}", r.stdout);
    assert!(
        commands
            .iter()
            .all(|l| !l.trim_start().starts_with("replay")),
        "{}",
        r.stdout
    );
    let help = r.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains(
            "What writes: `demo` (the demo store under --root), `export -o OUT` (OUT only), the \
             developer command `replay` (in a temporary directory it removes), and the write \
             commands: `repair` (rewrites a session after a byte-exact backup, under the session \
             write lock), `unlock --stale` (removes stale lock files, never a running holder's), \
             `archive` and `clear` (move sessions into <sessions>/archive/; on an OpenClaw \
             store, a directory holding sessions.json, they rename the transcript in place to \
             `<file>.deleted.<time>` or `<file>.reset.<time>` and edit sessions.json instead; \
             `clear --purge` deletes, and `clear` needs --yes), `cleanup` (OpenClaw's \
             maintenance of sessions.json: prunes, caps and sweeps, archiving what it removes) \
             and `migrate` (copies sessions between a directory and Redis). Each write command \
             has --dry-run, which writes nothing."
        ),
        "{help}"
    );
    assert!(
        help.contains(
            "Exit codes: 0 ok; 1 `check` found problems, or a write command (repair, unlock, \
             archive, clear, cleanup, migrate) changed something"
        ),
        "{help}"
    );
    for (flag, text) in [
        (
            "--offline-ok",
            "For the commands that write an OpenClaw sessions.json (archive, clear, cleanup): \
             write it even though a gateway's lock says one runs, only after you stopped the \
             gateway (its lock can outlive it by 30 s). Read commands ignore it; --dry-run never \
             needs it",
        ),
        (
            "--now",
            "the ages of `list` and the retention of `archive`, `clear` and `cleanup` are \
             computed from it, and the timestamps written (by the write commands, `demo`, and \
             the header of `export --format jsonl`). Other read commands ignore it",
        ),
    ] {
        assert!(help.contains(text), "{flag}: {help}");
    }
    // `--session` on every read command names session keys and where ids are on a store.
    for sub in ["tree", "context", "show", "stats", "check", "export"] {
        let r = run([sub, "--help"]);
        let help = r.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            help.contains(
                "the ID column of `sessions list` for plain directories; on an OpenClaw store, \
                 `sessionId` in `sessions list --json` or the file name of the PATH column). On \
                 an OpenClaw store (a directory holding sessions.json) also a session key, in \
                 full (`agent:<id>:telegram:direct:123`) or the part after `agent:<id>:` (e.g. \
                 `main`)"
            ),
            "{sub}: {help}"
        );
    }
    let r = run(["replay", "--help"]);
    assert!(r.stdout.contains("Developer tool"), "{}", r.stdout);
}

#[test]
fn pi_sessions_are_listed_with_pi() {
    let dir = tempdir();
    let agent = dir.path().join("pi-agent");
    let id = "0195f3a0-7c1e-7000-8000-0000000000b1";
    plant(
        &agent.join(format!(
            "sessions/--home-me-proj--/2026-01-02T09-00-00-000Z_{id}.jsonl"
        )),
        &std::fs::read(fixture("branchy.jsonl")).unwrap(),
    );
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut c = cmd();
    c.current_dir(dir.path())
        .env("HOME", &home)
        .env("PI_CODING_AGENT_DIR", &agent)
        .args(["list", "--pi", "--json"]);
    let r = run_command_timeout(c, 30);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = json(&r.stdout);
    let s = v.get("sessions").and_then(JsValue::as_array).unwrap();
    assert_eq!(s.len(), 1);
    assert_eq!(
        s[0].get("id").and_then(JsValue::as_str_lossy).as_deref(),
        Some(id)
    );
    // No ~/.openclaw and no --root: say where we looked, and suggest --pi.
    let mut c = cmd();
    c.current_dir(dir.path())
        .env("HOME", &home)
        .env("PI_CODING_AGENT_DIR", &agent)
        .arg("list");
    let r = run_command_timeout(c, 30);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        format!(
            "error: no OpenClaw store at {h}/.openclaw (looked for \
             {h}/.openclaw/agents/<agent>/sessions/; --root was not given and \
             $OPENCLAW_STATE_DIR is not set, so the default ~/.openclaw was used); use --root \
             DIR, or --pi for pi's sessions (found in {a}/sessions), or --dir DIR for any other \
             directory of *.jsonl files\n",
            h = home.display(),
            a = agent.display()
        )
    );
}

#[test]
fn context_explains_an_incomplete_model() {
    let dir = tempdir();
    plant(&dir.path().join("s.jsonl"), &small_session());
    let r = run_in_timeout(dir.path(), ["context", "s.jsonl"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout.lines().next().unwrap(),
        "s.jsonl — context at leaf a3: 3 messages, thinking off, model ?/? (the last model \
         change or assistant reply on the branch does not name both a provider and a model)"
    );
}

/// `--wide` (and a pipe without COLUMNS) prints NAME / FIRST MESSAGE in full in the file
/// table; fitted to COLUMNS it is cut with `…`.
#[test]
fn wide_file_tables_print_the_first_message_in_full() {
    let dir = tempdir();
    let long = "Please summarise the disk usage report of build-01 and tell me which \
                directories grew the most this week";
    plant(
        &dir.path().join("s/a.jsonl"),
        &lines(&[HEADER.to_owned(), msg("u1", None, "user", long)]),
    );
    let quoted = format!("\"{long}\"");
    for (cols, extra) in [(Some("80"), Some("--wide")), (None, None)] {
        let mut c = cmd();
        c.current_dir(dir.path()).env_remove("COLUMNS");
        if let Some(cols) = cols {
            c.env("COLUMNS", cols);
        }
        c.args(["list", "--dir", "s"]).args(extra);
        let r = run_command_timeout(c, 30);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""));
        let row = r.stdout.lines().nth(1).unwrap();
        assert_eq!(
            row.split("  ").filter(|c| !c.is_empty()).nth(1),
            Some(quoted.as_str()),
            "{cols:?}: {}",
            r.stdout
        );
    }
    let mut c = cmd();
    c.current_dir(dir.path())
        .env("COLUMNS", "80")
        .args(["list", "--dir", "s"]);
    let r = run_command_timeout(c, 30);
    assert!(
        r.stdout.lines().all(|l| l.chars().count() <= 80),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains(&quoted), "{}", r.stdout);
}

/// A file table too narrow for a useful PATH (under 12 columns) leaves it out of the header
/// and every row instead of printing `…0…`.
#[test]
fn narrow_file_tables_leave_the_path_out() {
    let dir = tempdir();
    plant(
        &dir.path().join("s/a.jsonl"),
        &lines(&[HEADER.to_owned(), msg("u1", None, "user", "hello there")]),
    );
    let mut c = cmd();
    c.current_dir(dir.path())
        .env("COLUMNS", "60")
        .args(["list", "--dir", "s"]);
    let r = run_command_timeout(c, 30);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (
            0,
            "ID        NAME / FIRS…  MSGS  MODIFIED (UTC)     SIZE\n\
             sess-000  \"hello ther…     1  2026-01-01 00:00  285 B\n",
            ""
        )
    );
}
