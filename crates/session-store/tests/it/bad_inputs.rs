//! Small bad inputs that must behave (fixtures under `tests/fixtures/`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use crate::support::{assistant, context_texts, ids, js, user};
use session_format::json::JsValue;
use session_store::SessionManager;

/// Copies a fixture into a fresh directory (opening may write).
fn planted(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = crate::support::tempdir();
    let path = dir.path().join(name);
    let bytes = std::fs::read(crate::support::fixture(name)).unwrap();
    session_store::io::write_raw(&path, &bytes).unwrap();
    (dir, path)
}

fn backups(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains(".corrupt-"))
        .collect();
    v.sort();
    v
}

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

/// Fixture `parent-cycles.jsonl`: a 2-cycle `A↔B` with a child `C`, and a self-parent `S` with
/// a child `T`. Every walk terminates; the tree shows each entry exactly once (D4); a
/// self-parent is a root as in the reference (FINDINGS g).
#[test]
fn parent_cycles_terminate_and_appear_once() {
    let (_dir, path) = planted("parent-cycles.jsonl");
    let before = std::fs::read(&path).unwrap();
    let sm = SessionManager::open(&path, None, None).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), before, "open writes nothing");
    assert_eq!(sm.get_leaf_id(), Some("T"));
    assert_eq!(ids(sm.get_branch(None)), ["S", "T"]);
    assert_eq!(ids(sm.get_branch(Some("C".into()))), ["A", "B", "C"]);
    assert_eq!(ids(sm.get_branch(Some("A".into()))), ["B", "A"]);
    assert_eq!(ids(sm.get_branch(Some("S".into()))), ["S"]);
    assert_eq!(
        crate::support::tree_shape(&sm),
        [
            ("u1".to_owned(), 0),
            ("A".to_owned(), 0),
            ("B".to_owned(), 1),
            ("C".to_owned(), 2),
            ("S".to_owned(), 0),
            ("T".to_owned(), 1),
        ]
    );
    assert_eq!(context_texts(&sm), ["self", "under-self"]);
    let at_c: Vec<String> = sm
        .build_session_context_at("C")
        .unwrap()
        .messages
        .iter()
        .map(|m| m.entry.id().to_owned())
        .collect();
    assert_eq!(at_c, ["A", "B", "C"]);
    assert_eq!(ids(sm.get_children(Some("B"))), ["A", "C"]);
    assert_eq!(ids(sm.get_children(Some("S"))), ["S", "T"]);
    let ro = SessionManager::open_read_only(&path, None).unwrap();
    assert_eq!(
        ro.report.cycles,
        [vec!["A".to_owned(), "B".to_owned()], vec!["S".to_owned()]]
    );
}

/// Fixture `duplicate-id-cycle.jsonl` (FINDINGS h): a duplicate `u1` closes the cycle
/// `u1→a1→u1` under the first (root) `u1`; the reference's `getTree` never returns. Ours
/// returns, with each id once (D3, D4), and the duplicate is reported.
#[test]
fn duplicate_id_cycle_does_not_hang() {
    let (_dir, path) = planted("duplicate-id-cycle.jsonl");
    let sm = SessionManager::open(&path, None, None).unwrap();
    assert_eq!(sm.get_leaf_id(), Some("a2"));
    assert_eq!(ids(sm.get_entries()), ["u1", "a1", "u1", "a2"]);
    assert_eq!(ids(sm.get_branch(None)), ["a1", "u1", "a2"]);
    assert_eq!(context_texts(&sm), ["r1", "second u1", "r2"]);
    assert_eq!(
        crate::support::tree_shape(&sm),
        [
            ("u1".to_owned(), 0),
            ("a1".to_owned(), 1),
            ("a2".to_owned(), 1)
        ]
    );
    let ro = SessionManager::open_read_only(&path, None).unwrap();
    assert_eq!(ro.report.duplicate_ids.len(), 1);
    assert_eq!(ro.report.duplicate_ids[0].id, "u1");
    assert_eq!(ro.report.duplicate_ids[0].lines, [Some(2), Some(4)]);
    assert_eq!(ro.report.cycles, [vec!["u1".to_owned(), "a1".to_owned()]]);
}

/// Fixture `header-only.jsonl`: a file holding only a header, then a user and an assistant
/// message: exactly one header (openclaw-jsonl.md §8 #89206; pi-format.md §7.3 A).
#[test]
fn header_only_file_then_user_and_assistant_has_one_header() {
    let (_dir, path) = planted("header-only.jsonl");
    let header = crate::support::read(&path);
    let mut sm = SessionManager::open(&path, None, None).unwrap();
    assert!(sm.is_flushed());
    let u = sm.append_message(user("q", 1)).unwrap();
    assert!(!sm.is_flushed(), "a non-assistant append is held");
    assert_eq!(crate::support::read(&path), header, "held: nothing written");
    let a = sm.append_message(assistant("r", 2)).unwrap();
    let lines = crate::support::lines(&path);
    assert_eq!(lines.len(), 3);
    assert_eq!(format!("{}\n", lines[0]), header);
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.contains("\"type\":\"session\""))
            .count(),
        1
    );
    assert_eq!(js(&lines[1]).get("id"), Some(&JsValue::from(u.as_str())));
    assert_eq!(js(&lines[2]).get("id"), Some(&JsValue::from(a.as_str())));
    assert_eq!(
        js(&lines[2]).get("parentId"),
        Some(&JsValue::from(u.as_str()))
    );
}

/// Fixture `corrupt-first-line.jsonl` (openclaw-jsonl.md §7.1 #7): the entries survive under a
/// synthesised header, exactly one `.corrupt-` backup exists, byte-identical to the original,
/// with the original's permission bits.
#[cfg(unix)]
#[test]
fn corrupt_first_line_is_recovered_with_one_exact_backup() {
    let (dir, path) = planted("corrupt-first-line.jsonl");
    chmod(&path, 0o640);
    let original = std::fs::read(&path).unwrap();
    let sm = SessionManager::open(&path, None, Some("/work")).unwrap();
    assert!(sm.was_recovered_from_corrupt_header());
    assert_eq!(ids(sm.get_entries()), ["aaaa0001", "aaaa0002", "aaaa0003"]);
    assert_eq!(ids(sm.get_children(Some("aaaa0001"))), ["aaaa0002"]);
    assert_eq!(context_texts(&sm), ["kept q", "kept a", "kept q2"]);
    let b = backups(dir.path());
    assert_eq!(b.len(), 1);
    assert_eq!(std::fs::read(&b[0]).unwrap(), original);
    assert_eq!(mode(&b[0]), 0o640);
    assert_eq!(mode(&path), 0o640, "the rewrite keeps the file's mode");
    let name = b[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("corrupt-first-line.jsonl.corrupt-"));
    assert!(name.ends_with(".jsonl"));
    let lines = crate::support::lines(&path);
    assert_eq!(lines.len(), 4);
    let h = js(&lines[0]);
    assert_eq!(h.get("cwd"), Some(&JsValue::from("/work")));
    assert_eq!(h.get("version"), Some(&JsValue::Number(3.0)));
    assert_eq!(h.get("id"), Some(&JsValue::from(sm.get_session_id())));
    let orig_text = String::from_utf8(original).unwrap();
    let orig_lines: Vec<&str> = orig_text.lines().collect();
    assert_eq!(
        lines[1..],
        orig_lines[1..],
        "surviving rows keep their bytes"
    );
    // A second open finds a healthy file: no new backup.
    let again = SessionManager::open(&path, None, None).unwrap();
    assert!(!again.was_recovered_from_corrupt_header());
    assert_eq!(backups(dir.path()).len(), 1);
}

/// openclaw-jsonl.md §7.1 #8: a header-only corrupt file then user and assistant gives exactly
/// `[session, message, message]`.
#[test]
fn corrupt_header_only_file_then_messages() {
    let dir = crate::support::tempdir();
    let path = dir.path().join("c.jsonl");
    crate::support::write(&path, "{\"type\":\"sess\n");
    let mut sm = SessionManager::open(&path, None, None).unwrap();
    sm.append_message(user("q", 1)).unwrap();
    sm.append_message(assistant("r", 2)).unwrap();
    let types: Vec<JsValue> = crate::support::lines(&path)
        .iter()
        .map(|l| js(l).get("type").unwrap().clone())
        .collect();
    assert_eq!(types, ["session", "message", "message"].map(JsValue::from));
}

/// Fixture `label-mid-path.jsonl`: a label entry sits in the middle of the path (pi-format.md
/// §7.3 B). Both `create_branched_session` and `fork_from` keep the branch connected: the
/// context at the leaf equals the source's.
#[test]
fn fork_with_a_mid_path_label_keeps_the_context() {
    let (dir, path) = planted("label-mid-path.jsonl");
    let source = SessionManager::open(&path, None, None).unwrap();
    let want = context_texts(&source);
    assert_eq!(want, ["q1", "r1", "q2", "r2", "q3"]);
    assert_eq!(
        ids(source.get_branch(None)),
        ["u1", "a1", "l1", "u2", "a2", "u3"]
    );

    let mut branched = SessionManager::open(&path, None, None).unwrap();
    let new_path = branched.create_branched_session("u3").unwrap().unwrap();
    assert_eq!(context_texts(&branched), want);
    assert_eq!(
        ids(branched.get_branch(Some("u3".into()))),
        ["u1", "a1", "u2", "a2", "u3"]
    );
    assert_eq!(branched.get_label("u1"), Some(&JsValue::from("checkpoint")));
    let reopened = SessionManager::open(&new_path, None, None).unwrap();
    assert_eq!(context_texts(&reopened), want);
    assert_eq!(reopened.get_tree().roots.len(), 1);
    let lines = crate::support::lines(&new_path);
    assert_eq!(lines.len(), 7);
    let last = js(&lines[6]);
    assert_eq!(last.get("type"), Some(&JsValue::from("label")));
    assert_eq!(
        last.get("timestamp"),
        Some(&JsValue::from("2026-01-01T00:00:03.000Z")),
        "the label keeps its original timestamp"
    );
    assert_eq!(last.get("parentId"), Some(&JsValue::from("u3")));

    let forked = SessionManager::fork_from(&path, "/else", Some(dir.path())).unwrap();
    assert_eq!(context_texts(&forked), want);
    assert_eq!(forked.get_cwd(), "/else");
}
