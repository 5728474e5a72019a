//! Where this crate differs from OpenClaw 2026.6.11 on purpose (docs/DEVIATIONS.md D1–D10):
//! verbatim lines, malformed lines kept, duplicate ids, forks that migrate, `null` rows,
//! invalid timestamps, BOM headers, byte-exact backups and file modes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::Path;

use crate::support::{
    HEADER, assistant, context_texts, dir_names, file_with, ids, js, msg_line, user,
};
use session_format::json::{JsValue, to_json_string};
use session_store::SessionManager;

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[cfg(unix)]
fn chmod(path: &Path, m: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(m)).unwrap();
}

const ODD_U1: &str = r#"{"type":"message", "id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"q1"}],"timestamp":1767225600000, "b":1,"2":2, "n":1.0, "e":1E3}}"#;
const ODD_O1: &str = r#"{"type":"plugin_event","id":"o1","parentId":"u1","timestamp":"2026-01-01T00:00:01.500Z", "payload":{"b":1,"2":2,"n":1.0}}"#;
const ODD_U2: &str = r#"{"type":"message","id":"u2","parentId":"o1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"q2" ,"timestamp":1767225600000}}"#;

/// D1: a full rewrite (held append flushed at the first assistant) and a branched session keep
/// the exact bytes of every line read; reads still see JavaScript key order.
#[test]
fn d1_rewrites_keep_read_lines_verbatim() {
    let dir = crate::support::tempdir();
    let path = file_with(
        dir.path(),
        "k.jsonl",
        &format!("{HEADER}\n{ODD_U1}\n{ODD_O1}\n{ODD_U2}\n"),
    );
    let mut sm = SessionManager::open(&path, None, None).unwrap();
    sm.append_message(user("held", 3)).unwrap();
    let a = sm.append_message(assistant("flush", 4)).unwrap();
    let lines = crate::support::lines(&path);
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[..4], [HEADER, ODD_U1, ODD_O1, ODD_U2]);
    let u1 = sm.get_entry("u1").unwrap().value().unwrap();
    assert_eq!(
        to_json_string(u1.get("message").unwrap()),
        r#"{"2":2,"role":"user","content":[{"type":"text","text":"q1"}],"timestamp":1767225600000,"b":1,"n":1,"e":1000}"#
    );
    let branched = sm.create_branched_session(&a).unwrap().unwrap();
    let b = crate::support::lines(&branched);
    assert_eq!(b[1..4], [ODD_U1, ODD_O1, ODD_U2]);
}

/// D2: unparseable lines stay in place on a held-append flush, a v1 migration and a fork.
#[test]
fn d2_malformed_lines_survive_rewrites() {
    let dir = crate::support::tempdir();
    let u1 = msg_line("u1", None, "user", "q1", 1);
    let u2 = msg_line("u2", Some("u1"), "user", "q2", 2);
    let path = file_with(
        dir.path(),
        "m.jsonl",
        &format!(
            "{HEADER}\n{u1}\ngarbage line\n{u2}\n{{\"type\":\"message\",\"id\":\"zz\",\"timest"
        ),
    );
    let mut sm = SessionManager::open(&path, None, None).unwrap();
    sm.append_message(user("held", 3)).unwrap();
    sm.append_message(assistant("flush", 4)).unwrap();
    let lines = crate::support::lines(&path);
    assert_eq!(lines.len(), 7);
    assert_eq!(lines[2], "garbage line");
    assert_eq!(lines[4], "{\"type\":\"message\",\"id\":\"zz\",\"timest");
    assert_eq!(ids(sm.get_entries()).len(), 4);

    let v1 = file_with(
        dir.path(),
        "v1.jsonl",
        concat!(
            r#"{"type":"session","id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#,
            "\n",
            r#"{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"q","timestamp":1}}"#,
            "\nnot json\n",
            r#"{"type":"message","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"timestamp":2}}"#,
            "\n"
        ),
    );
    let sm = SessionManager::open(&v1, None, None).unwrap();
    let lines = crate::support::lines(&v1);
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[2], "not json");
    assert_eq!(sm.get_branch(None).len(), 2);

    let fork = SessionManager::fork_from(&path, "/p", Some(dir.path())).unwrap();
    let fl = crate::support::lines(fork.get_session_file().unwrap());
    assert_eq!(fl[2], "garbage line");
}

/// D3: a duplicated id appears once in the tree (the last row's data); `getEntries` keeps both
/// rows; lookups use the last.
#[test]
fn d3_duplicate_ids_once_in_tree() {
    let dir = crate::support::tempdir();
    let body = format!(
        "{HEADER}\n{}\n{}\n{}\n{}\n",
        msg_line("u1", None, "user", "q", 1),
        msg_line("a1", Some("u1"), "assistant", "r1", 2),
        msg_line("a1", Some("u1"), "assistant", "r1 again", 3),
        msg_line("u2", Some("a1"), "user", "q2", 4)
    );
    let path = file_with(dir.path(), "d.jsonl", &body);
    let sm = SessionManager::open(&path, None, None).unwrap();
    assert_eq!(ids(sm.get_entries()), ["u1", "a1", "a1", "u2"]);
    assert_eq!(
        crate::support::tree_shape(&sm),
        [
            ("u1".to_owned(), 0),
            ("a1".to_owned(), 1),
            ("u2".to_owned(), 2)
        ]
    );
    assert_eq!(context_texts(&sm), ["q", "r1 again", "q2"]);
    assert_eq!(ids(sm.get_children(Some("u1"))), ["a1"]);
}

/// D5: `fork_from` migrates a v1 source, so the fork keeps a chain, a leaf and a context; the
/// source is untouched; a v2 `hookMessage` becomes `custom`.
#[test]
fn d5_fork_migrates_legacy_sources() {
    let dir = crate::support::tempdir();
    let src_text = concat!(
        r#"{"type":"session","id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/old"}"#,
        "\n",
        r#"{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"q","timestamp":1}}"#,
        "\n",
        r#"{"type":"message","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"hookMessage","customType":"h","content":"hooked","display":true,"timestamp":2}}"#,
        "\n"
    );
    let src = file_with(dir.path(), "v1.jsonl", src_text);
    let fork = SessionManager::fork_from(&src, "/new", Some(dir.path())).unwrap();
    assert_eq!(crate::support::read(&src), src_text);
    let branch = fork.get_branch(None);
    assert_eq!(branch.len(), 2);
    assert_eq!(branch[1].parent_id().as_deref(), Some(branch[0].id()));
    let roles: Vec<String> = fork
        .build_session_context()
        .unwrap()
        .messages
        .iter()
        .map(|m| m.role().unwrap().unwrap())
        .collect();
    assert_eq!(roles, ["user", "custom"]);
    let lines = crate::support::lines(fork.get_session_file().unwrap());
    assert_eq!(js(&lines[0]).get("version"), Some(&JsValue::Number(3.0)));
    assert_eq!(js(&lines[0]).get("cwd"), Some(&JsValue::from("/new")));
}

/// D5 on the shared pi fixture (974 KB, v1, 1,018 rows): the fork is one chain 1,018 deep.
#[test]
fn d5_fork_of_the_large_v1_fixture_keeps_the_chain() {
    let Some(shared) =
        crate::support::shared_dir("d5_fork_of_the_large_v1_fixture_keeps_the_chain")
    else {
        return;
    };
    let src = shared.join("fixtures/pi-large-session-v1.jsonl");
    let dir = crate::support::tempdir();
    let fork = SessionManager::fork_from(&src, "/p", Some(dir.path())).unwrap();
    assert_eq!(fork.entry_count(), 1018);
    assert_eq!(fork.get_branch(None).len(), 1018);
    assert_eq!(fork.get_tree().roots.len(), 1);
    assert_eq!(fork.get_children(None).len(), 1);
}

/// D6: a fork of a file with a `null` line succeeds and copies it; a failing fork leaves no
/// file behind.
#[test]
fn d6_fork_with_null_rows_and_no_partial_files() {
    let dir = crate::support::tempdir();
    let src_dir = crate::support::tempdir();
    let u1 = msg_line("u1", None, "user", "q1", 1);
    let src = file_with(
        src_dir.path(),
        "x.jsonl",
        &format!("{HEADER}\n{u1}\nnull\n123\n"),
    );
    let fork = SessionManager::fork_from(&src, "/p", Some(dir.path())).unwrap();
    let lines = crate::support::lines(fork.get_session_file().unwrap());
    assert_eq!(lines[1..], [u1.as_str(), "null", "123"]);
    assert_eq!(dir_names(dir.path()).len(), 1);

    let empty = file_with(src_dir.path(), "empty.jsonl", "");
    let err = SessionManager::fork_from(&empty, "/p", Some(dir.path())).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "Cannot fork: source session file is empty or invalid: {}",
            empty.display()
        )
    );
    let missing = src_dir.path().join("missing.jsonl");
    assert!(SessionManager::fork_from(&missing, "/p", Some(dir.path())).is_err());
    assert_eq!(dir_names(dir.path()).len(), 1, "no partial file");
}

/// D7: a `custom_message` with an invalid timestamp gets `timestamp: null` in the context (the
/// reference throws); `excludeFromContext` is not honoured in 2026.6.11 (checked with the node
/// runner), so the flagged message stays.
#[test]
fn d7_invalid_timestamps_and_exclude_from_context() {
    let dir = crate::support::tempdir();
    let path = file_with(
        dir.path(),
        "t.jsonl",
        &format!(
            "{HEADER}\n{}\n{}\n",
            r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"q","timestamp":1,"excludeFromContext":true}}"#,
            r#"{"type":"custom_message","id":"c1","parentId":"u1","timestamp":"bad","customType":"x","content":"c","display":true}"#
        ),
    );
    let sm = SessionManager::open(&path, None, None).unwrap();
    let v = sm.build_session_context().unwrap().to_value().unwrap();
    assert_eq!(
        to_json_string(&v),
        r#"{"messages":[{"role":"user","content":"q","timestamp":1,"excludeFromContext":true},{"role":"custom","customType":"x","content":"c","display":true,"timestamp":null}],"thinkingLevel":"off","model":null}"#
    );
}

/// D8: the header sniffer tolerates a BOM.
#[test]
fn d8_bom_headers_are_candidates() {
    let dir = crate::support::tempdir();
    let path = file_with(dir.path(), "bom.jsonl", &format!("\u{feff}{HEADER}\n"));
    assert!(session_store::is_valid_session_file(&path));
    let sm = SessionManager::continue_recent("/p", Some(dir.path())).unwrap();
    assert_eq!(sm.get_session_file(), Some(path.as_path()));
    assert_eq!(sm.get_session_id(), "0195f000-0000-7000-8000-000000000001");
}

/// D9: the corrupt-header backup holds invalid UTF-8 byte for byte.
#[test]
fn d9_backup_keeps_invalid_utf8() {
    let dir = crate::support::tempdir();
    let path = dir.path().join("bad.jsonl");
    let mut original = b"\xff\xfe not a header\n".to_vec();
    original.extend_from_slice(msg_line("u1", None, "user", "q", 1).as_bytes());
    original.push(b'\n');
    session_store::io::write_raw(&path, &original).unwrap();
    SessionManager::open(&path, None, None).unwrap();
    let backup: Vec<String> = dir_names(dir.path())
        .into_iter()
        .filter(|n| n.contains(".corrupt-"))
        .collect();
    assert_eq!(backup.len(), 1);
    assert_eq!(
        std::fs::read(dir.path().join(&backup[0])).unwrap(),
        original
    );
}

/// D10: files this crate creates are 0600; a rewrite keeps the replaced file's mode.
#[cfg(unix)]
#[test]
fn d10_modes() {
    let dir = crate::support::tempdir();
    let mut sm = SessionManager::create("/p", Some(dir.path())).unwrap();
    sm.append_message(user("q", 1)).unwrap();
    sm.append_message(assistant("r", 2)).unwrap();
    let file = sm.get_session_file().unwrap().to_path_buf();
    assert_eq!(mode(&file), 0o600);
    let v2 = file_with(
        dir.path(),
        "v2.jsonl",
        &format!("{}\n", HEADER.replace("\"version\":3", "\"version\":2")),
    );
    chmod(&v2, 0o644);
    SessionManager::open(&v2, None, None).unwrap();
    assert_eq!(mode(&v2), 0o644);
    assert!(crate::support::read(&v2).contains("\"version\":3"));
}
