//! The retention audit log is opened once, without following a symlink, and every line goes
//! through that descriptor: a log swapped for `sessions-audit.log -> <session>.jsonl` during a
//! run never gets audit JSON into the transcript (crate::audit).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use session_semantics::audit::{AUDIT_LOG_NAME, AuditAction, AuditLog, AuditRecord};

const SESSION: &[u8] = b"{\"type\":\"session\",\"id\":\"s1\"}\n";

fn record() -> AuditRecord {
    AuditRecord {
        time: "2026-07-01T00:00:00.000Z".to_owned(),
        action: AuditAction::Archive,
        file: "a.jsonl".to_owned(),
        destination: Some("archive/a.jsonl".to_owned()),
        session_id: "sa".to_owned(),
        reason: "max-age".to_owned(),
        bytes: 10,
    }
}

#[test]
fn a_log_swapped_for_a_link_after_it_was_opened_keeps_its_lines_off_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let d = std::fs::canonicalize(dir.path()).unwrap();
    let session = d.join("s.jsonl");
    session_store::io::write_raw(&session, SESSION).unwrap();
    let log_path = d.join(AUDIT_LOG_NAME);
    session_store::io::write_raw(&log_path, b"").unwrap();
    let log = AuditLog::open(&d).unwrap();
    // Swapped after the check: the log renamed aside, a link to the session in its place.
    std::fs::rename(&log_path, d.join("old.log")).unwrap();
    std::os::unix::fs::symlink("s.jsonl", &log_path).unwrap();
    log.append(&record()).unwrap();
    assert_eq!(std::fs::read(&session).unwrap(), SESSION);
    let line = format!("{}\n", serde_json::to_string(&record()).unwrap());
    assert_eq!(std::fs::read_to_string(d.join("old.log")).unwrap(), line);
}

#[test]
fn a_link_planted_before_the_first_line_is_refused_and_the_session_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let d = std::fs::canonicalize(dir.path()).unwrap();
    let session = d.join("s.jsonl");
    session_store::io::write_raw(&session, SESSION).unwrap();
    let log = AuditLog::open(&d).unwrap();
    let log_path = d.join(AUDIT_LOG_NAME);
    std::os::unix::fs::symlink("s.jsonl", &log_path).unwrap();
    let err = log.append(&record()).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert_eq!(
        err.to_string(),
        format!(
            "audit log {} is a symlink; it must be a regular file",
            log_path.display()
        )
    );
    assert_eq!(std::fs::read(&session).unwrap(), SESSION);
}
