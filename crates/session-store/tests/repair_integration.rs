//! The repair alongside the rest of the store:
//! - the `SessionManager` drops its file from the incremental repair cache on every full rewrite
//!   and on every append it could not verify, and keeps it on verified appends (whose suffix the
//!   incremental pass then reads alone), including those after another writer's lines that the
//!   catch-up before the append adopted;
//! - a legacy `sqlite:<agent>:<session>:<store>` marker is resolved as a relative path, as
//!   OpenClaw 2026.6.11 does (checked with the installed reference: a file at
//!   `<cwd>/sqlite:main:abc:sub/s.jsonl` is repaired like any other). The relative case runs in a
//!   child process (this test binary re-run, `SESSION_LOCK_TEST_CHILD=relative-marker`) with its
//!   own working directory.
//!
//! The repair cache is process-wide; each test uses its own files.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

mod lock_common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use lock_common::{CHILD_MODE_ENV, MARK, Marked, child_command};
use session_format::json::parse_value;
use session_store::test_util::repair_probes::{is_repair_cached, parsed_lines_on_this_thread};
use session_store::{
    ForeignAppendPolicy, RepairOutcome, RepairSkip, RepairSnapshot, SessionManager,
    repair_session_file_if_needed,
};

const HEADER: &str = "{\"type\":\"session\",\"version\":3,\"id\":\"rc\",\"timestamp\":\"2026-06-01T10:00:00.000Z\",\"cwd\":\"/w\"}\n";
const ASSISTANT: &str = "{\"type\":\"message\",\"id\":\"a0000001\",\"parentId\":null,\"timestamp\":\"2026-06-01T10:00:01.000Z\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],\"stopReason\":\"stop\",\"timestamp\":1}}\n";

fn session(dir: &Path) -> PathBuf {
    let file = dir.join("s.jsonl");
    session_store::io::create_new(&file, format!("{HEADER}{ASSISTANT}").as_bytes(), None).unwrap();
    file
}

/// The `type` of each line of a file.
fn line_types(file: &Path) -> Vec<String> {
    std::fs::read(file)
        .unwrap()
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            parse_value(l)
                .unwrap()
                .get("type")
                .unwrap()
                .as_str_lossy()
                .unwrap()
                .into_owned()
        })
        .collect()
}

/// Rewrites bytes at `offset` in place (same inode, same length), as an editor patching a file
/// would.
#[allow(clippy::disallowed_methods)] // Plays another program editing the file in place.
fn patch(file: &Path, offset: u64, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().write(true).open(file).unwrap();
    f.write_all_at(bytes, offset).unwrap();
}

/// A clean repair pass (nothing to change) and the lines it parsed.
fn clean_pass(file: &Path, trusted: Option<RepairSnapshot>) -> u64 {
    let before = parsed_lines_on_this_thread();
    let outcome = repair_session_file_if_needed(file, trusted.as_ref());
    assert_eq!(
        outcome,
        RepairOutcome {
            validated_snapshot: Some(RepairSnapshot::of(file).unwrap()),
            ..RepairOutcome::default()
        }
    );
    parsed_lines_on_this_thread() - before
}

#[test]
fn the_manager_keeps_the_repair_cache_only_past_verified_appends() {
    let dir = tempfile::tempdir().unwrap();
    let file = session(dir.path());
    assert_eq!(clean_pass(&file, None), 2);
    assert!(is_repair_cached(&file));

    let mut sm = SessionManager::open(&file, None, None).unwrap();
    // A verified append: the cache stays, and a trusted pass reads only the new line.
    sm.append_custom_entry("ours", None).unwrap();
    assert!(is_repair_cached(&file));
    let now = RepairSnapshot::of(&file).unwrap();
    assert_eq!(clean_pass(&file, Some(now)), 1);

    // Another writer appends (a new root: the reference's policy keeps this manager's leaf),
    // then the manager does: the catch-up before the append reads that line first (D30), so
    // the append is verified, the cache stays, and a trusted pass reads the two new lines.
    sm.set_foreign_append_policy(ForeignAppendPolicy::AppendOnOwnLeaf);
    session_store::io::append_raw(
        &file,
        b"{\"type\":\"custom\",\"customType\":\"theirs\",\"id\":\"f0000001\",\"parentId\":null}\n",
    )
    .unwrap();
    let after_theirs = sm.append_custom_entry("after-theirs", None).unwrap();
    assert!(is_repair_cached(&file));
    assert_eq!(sm.diagnostics().adopted_lines, 1);
    let now = RepairSnapshot::of(&file).unwrap();
    assert_eq!(clean_pass(&file, Some(now)), 2);
    assert!(is_repair_cached(&file));

    // A change the catch-up cannot adopt (the other writer's line edited in place, same
    // length), then an append: not verified, so the entry goes.
    let edited = std::fs::read(&file)
        .unwrap()
        .windows(6)
        .position(|w| w == b"theirs")
        .unwrap();
    patch(&file, edited as u64, b"THEIRS");
    let last_id = sm.append_custom_entry("after-the-edit", None).unwrap();
    assert!(!is_repair_cached(&file));
    assert_eq!(clean_pass(&file, None), 6);
    assert!(is_repair_cached(&file));

    // A full rewrite drops it too (the edited file is backed up first, D11).
    sm.rewrite_file().unwrap();
    assert!(!is_repair_cached(&file));
    assert_eq!(clean_pass(&file, None), 6);

    // So does a trailing removal (a full rewrite).
    let removed = sm
        .remove_trailing_entries(|e| e.id() == last_id || e.id() == after_theirs, None)
        .unwrap();
    assert_eq!(removed, 2);
    assert!(!is_repair_cached(&file));
    // The file keeps the other writer's line after ours and records the leaf with a leaf
    // control row.
    assert_eq!(
        line_types(&file),
        ["session", "message", "custom", "custom", "leaf"]
    );
    assert_eq!(clean_pass(&file, None), 5);

    // And the first full write of a held session (its first assistant message).
    let held_file = dir.path().join("held.jsonl");
    session_store::io::create_new(&held_file, HEADER.as_bytes(), None).unwrap();
    assert_eq!(clean_pass(&held_file, None), 1);
    let mut held = SessionManager::open(&held_file, None, None).unwrap();
    let user = parse_value(br#"{"role":"user","content":"hi","timestamp":1}"#).unwrap();
    held.append_message(user).unwrap(); // held: no assistant yet, nothing written
    assert!(is_repair_cached(&held_file));
    assert_eq!(std::fs::read(&held_file).unwrap(), HEADER.as_bytes());
    let reply = parse_value(br#"{"role":"assistant","content":[],"timestamp":2}"#).unwrap();
    held.append_message(reply).unwrap();
    assert!(!is_repair_cached(&held_file));
    assert_eq!(clean_pass(&held_file, None), 3);
}

#[test]
fn a_torn_tail_terminated_by_an_append_drops_the_entry() {
    let dir = tempfile::tempdir().unwrap();
    let file = session(dir.path());
    let mut sm = SessionManager::open(&file, None, None).unwrap();
    assert_eq!(clean_pass(&file, None), 2);
    // A torn line left by a crashed writer; the repair is told nothing about it.
    session_store::io::append_raw(&file, b"{\"type\":\"custom\",\"cus").unwrap();
    assert!(is_repair_cached(&file));
    sm.append_custom_entry("after-the-tear", None).unwrap();
    assert!(!is_repair_cached(&file));
    // The next pass reads everything and drops the torn line.
    let outcome = repair_session_file_if_needed(&file, None);
    assert!(outcome.repaired);
    assert_eq!(outcome.dropped_lines, 1);
}

#[test]
fn child_entry() {
    match std::env::var(CHILD_MODE_ENV).as_deref() {
        Ok("relative-marker") => relative_marker_child(),
        Ok(other) => panic!("unknown child mode {other}"),
        Err(_) => {}
    }
}

/// Runs with the working directory set by the parent: repairs the marker path as given.
fn relative_marker_child() {
    let outcome = repair_session_file_if_needed(Path::new("sqlite:main:abc:sub/s.jsonl"), None);
    lock_common::mark(&format!(
        "result {}",
        session_format::json::to_json_string(&outcome.to_reference_json())
    ));
    lock_common::mark(&format!(
        "backup {}",
        outcome
            .backup_path
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    ));
}

#[test]
fn a_sqlite_marker_is_an_ordinary_relative_path() {
    // Absolute store part: resolved under the working directory, where nothing exists.
    let dir = tempfile::tempdir().unwrap();
    let marker = format!(
        "sqlite:main:abc:{}",
        dir.path().join("store.sqlite").display()
    );
    assert_eq!(
        repair_session_file_if_needed(Path::new(&marker), None),
        RepairOutcome {
            reason: Some(RepairSkip::MissingSessionFile),
            ..RepairOutcome::default()
        }
    );

    // A file at `<cwd>/sqlite:main:abc:sub/s.jsonl` is repaired like any other (what the
    // reference did with the same layout: `{"repaired":true,"droppedLines":1,…}`, the file
    // left holding only its header).
    let cwd = tempfile::tempdir().unwrap();
    let sub = cwd.path().join("sqlite:main:abc:sub");
    session_store::io::ensure_dir(&sub).unwrap();
    let file = sub.join("s.jsonl");
    session_store::io::create_new(&file, format!("{HEADER}not json\n").as_bytes(), None).unwrap();
    let mut cmd = child_command("child_entry", "relative-marker");
    cmd.current_dir(cwd.path());
    let mut child = Marked::spawn(cmd, MARK);
    let result = child.expect("result", Duration::from_secs(30));
    let backup = child.expect("backup", Duration::from_secs(30));
    assert!(child.child.wait().unwrap().success());
    let real = std::fs::canonicalize(&file).unwrap();
    let snapshot = RepairSnapshot::of(&file).unwrap();
    assert_eq!(
        result,
        format!(
            "{{\"repaired\":true,\"droppedLines\":1,\"validatedSnapshot\":{{\"dev\":\"{}\",\"ino\":\"{}\",\"size\":\"{}\",\"mtimeNs\":\"{}\",\"ctimeNs\":\"{}\"}},\"rewrittenAssistantMessages\":0,\"droppedBlankUserMessages\":0,\"rewrittenUserMessages\":0,\"removedCorruptedImageBlocks\":0,\"insertedToolResults\":0,\"backupPath\":\"{backup}\"}}",
            snapshot.dev, snapshot.ino, snapshot.size, snapshot.mtime_ns, snapshot.ctime_ns
        )
    );
    assert_eq!(std::fs::read(&file).unwrap(), HEADER.as_bytes());
    // The kept backup (D16) sits next to the resolved file and holds the original bytes.
    let backup = PathBuf::from(backup);
    assert_eq!(backup.parent(), real.parent());
    assert_eq!(
        std::fs::read(&backup).unwrap(),
        format!("{HEADER}not json\n").as_bytes()
    );
}
