//! The read-only open: it never writes, migrates in memory and reports what a writable open
//! would repair; the shared v1 fixture opened read-only and migrated by a writable open.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::support::{HEADER, dir_names, file_with, ids, js, msg_line, user};
use session_format::json::to_json_string;
use session_store::SessionManager;

/// The read-only open never writes, migrates in memory, and reports what a writable open would
/// repair.
#[test]
fn read_only_open_reports_and_never_writes() {
    let dir = crate::support::tempdir();
    let u1 = msg_line("u1", None, "user", "q", 1);
    let body = format!(
        "{}\n{u1}\nbroken {{\n{}\n{{\"type\":\"message\",\"id\":\"t",
        HEADER.replace("\"version\":3", "\"version\":2"),
        msg_line("a1", Some("ghost"), "assistant", "r", 2)
    );
    let path = file_with(dir.path(), "ro.jsonl", &body);
    let mut ro = SessionManager::open_read_only(&path, None).unwrap();
    assert_eq!(crate::support::read(&path), body);
    assert_eq!(dir_names(dir.path()), ["ro.jsonl"]);
    let r = &ro.report;
    assert_eq!(r.unmigrated_version, Some(2.0));
    assert!(r.writable_open_would_rewrite());
    assert_eq!(r.malformed_lines.len(), 2);
    assert_eq!(r.malformed_lines[0].line, 3);
    assert_eq!(
        r.malformed_lines[0].line_offset,
        HEADER.len() + 1 + u1.len() + 1
    );
    assert_eq!(
        r.malformed_lines[0].error_offset,
        r.malformed_lines[0].line_offset
    );
    assert!(!r.malformed_lines[0].torn);
    let torn = r.torn_tail.as_ref().unwrap();
    assert_eq!(torn.line, 5);
    assert!(torn.torn);
    assert!(r.missing_final_newline);
    assert_eq!(r.dangling_parents.len(), 1);
    assert_eq!(r.dangling_parents[0].id, "a1");
    assert_eq!(r.dangling_parents[0].parent_id, "ghost");
    assert_eq!(r.dangling_parents[0].line, Some(4));
    assert!(r.corrupt_header.is_none());
    assert_eq!(ids(ro.session.get_entries()), ["u1", "a1"]);
    assert!(ro.session.is_read_only());
    let err = ro.session.append_message(user("x", 3)).unwrap_err();
    assert!(matches!(err, session_store::AppendError::ReadOnly { .. }));
    assert_eq!(crate::support::read(&path), body);

    let corrupt = file_with(dir.path(), "c.jsonl", &format!("junk\n{u1}\n"));
    let ro = SessionManager::open_read_only(&corrupt, None).unwrap();
    let ch = ro.report.corrupt_header.as_ref().unwrap();
    assert_eq!(ch.recovered_from_line, None);
    assert_eq!(ch.dropped_lines, [1]);
    assert_eq!(ids(ro.session.get_entries()), ["u1"]);
    assert_eq!(crate::support::read(&corrupt), format!("junk\n{u1}\n"));
    assert_eq!(dir_names(dir.path()).len(), 2, "no backup written");

    let empty = file_with(dir.path(), "e.jsonl", " \n");
    let ro = SessionManager::open_read_only(&empty, None).unwrap();
    assert!(ro.report.empty);
    assert_eq!(crate::support::read(&empty), " \n");
    assert!(matches!(
        SessionManager::open_read_only(&dir.path().join("none.jsonl"), None),
        Err(session_store::OpenError::NotFound { .. })
    ));
}

/// The read-only open of the shared v1 fixture migrates in memory only.
#[test]
fn read_only_open_of_the_large_fixture() {
    let Some(shared) = crate::support::shared_dir("read_only_open_of_the_large_fixture") else {
        return;
    };
    let src = shared.join("fixtures/pi-large-session-v1.jsonl");
    let before = std::fs::read(&src).unwrap();
    let ro = SessionManager::open_read_only(&src, None).unwrap();
    assert_eq!(ro.report.unmigrated_version, Some(1.0));
    assert_eq!(ro.session.entry_count(), 1018);
    assert_eq!(ro.session.get_branch(None).len(), 1018);
    assert!(ro.report.cycles.is_empty());
    assert!(ro.report.duplicate_ids.is_empty());
    assert_eq!(std::fs::read(&src).unwrap(), before);
}

/// A writable open of a copy of the shared v1 fixture rewrites it with ids appended at the end of
/// each row; removing them gives back the original rows (fixtures/README.md).
#[test]
fn migration_of_the_large_fixture_appends_ids() {
    let Some(shared) = crate::support::shared_dir("migration_of_the_large_fixture_appends_ids")
    else {
        return;
    };
    let original = crate::support::read(&shared.join("fixtures/pi-large-session-v1.jsonl"));
    let dir = crate::support::tempdir();
    let path = file_with(dir.path(), "big.jsonl", &original);
    let sm = SessionManager::open(&path, None, None).unwrap();
    let migrated = crate::support::lines(&path);
    let orig: Vec<&str> = original.lines().collect();
    assert_eq!(migrated.len(), orig.len());
    assert_eq!(migrated[0], orig[0].replacen('}', ",\"version\":3}", 1));
    let entries: Vec<_> = sm.get_entries().collect();
    for (i, line) in migrated.iter().enumerate().skip(1) {
        let e = entries[i - 1];
        let parent = match e.raw_parent_id() {
            Some(p) => format!("\"{p}\""),
            None => "null".to_owned(),
        };
        let suffix = format!(",\"id\":\"{}\",\"parentId\":{parent}}}", e.id());
        assert!(line.ends_with(&suffix), "line {}", i + 1);
        let stripped = format!("{}}}", &line[..line.len() - suffix.len()]);
        let want = js(orig[i]);
        if want.get("firstKeptEntryIndex").is_none() {
            assert_eq!(stripped, to_json_string(&want), "line {}", i + 1);
        }
    }
}
