//! Printing the reports of `archive` and `clear` ([`session_semantics::retention`]).
//!
//! Text: every name, path and error string of a report is escaped with [`text::safe`] before
//! the report's own `Display` lays it out, so a file name holding a newline or a bidi control
//! stays on its line (it cannot forge a `would archive …` line).
//!
//! JSON: built without panicking, whatever the paths hold (a non-UTF-8 directory name is written
//! lossily, as every other subcommand writes paths); in `archive`, `reason` is always the reason
//! the session was chosen (`{"kind": "max-age", "ageMs"}` or `{"kind": "max-size"}`) and an
//! action skipped when it was re-checked says why in `skipReason` (plus `lockFile` or `error`
//! for the reasons that carry one).

use std::path::{Path, PathBuf};

use serde_json::Value;
use session_semantics::retention::{
    ArchiveReport, AuditSummary, ClearReport, Outcome as ActionOutcome, SkipReason, Skipped,
};

use crate::text;

fn safe(s: &str) -> String {
    text::safe(s).into_owned()
}

fn safe_path(p: &Path) -> PathBuf {
    PathBuf::from(text::path(p))
}

fn lossy_path(p: &Path) -> PathBuf {
    PathBuf::from(p.to_string_lossy().into_owned())
}

fn safe_reason(r: &SkipReason) -> SkipReason {
    match r {
        SkipReason::Locked { lock_file } => SkipReason::Locked {
            lock_file: safe(lock_file),
        },
        SkipReason::Unreadable { error } => SkipReason::Unreadable { error: safe(error) },
        SkipReason::UnsafeName { error } => SkipReason::UnsafeName { error: safe(error) },
        SkipReason::Alias { of } => SkipReason::Alias { of: safe(of) },
        SkipReason::LinkOutsideStore { link, target } => SkipReason::LinkOutsideStore {
            link: safe(link),
            target: safe(target),
        },
        other => other.clone(),
    }
}

fn safe_outcome(o: &ActionOutcome) -> ActionOutcome {
    match o {
        ActionOutcome::Skipped { reason } => ActionOutcome::Skipped {
            reason: safe_reason(reason),
        },
        ActionOutcome::Failed { error } => ActionOutcome::Failed { error: safe(error) },
        other => other.clone(),
    }
}

fn safe_skipped(s: &Skipped) -> Skipped {
    Skipped {
        file: safe(&s.file),
        reason: safe_reason(&s.reason),
    }
}

fn safe_audit(a: &AuditSummary) -> AuditSummary {
    AuditSummary {
        log: safe_path(&a.log),
        records: a.records.clone(),
        error: a.error.as_deref().map(safe),
    }
}

/// The text of an archive report, every name escaped.
pub(crate) fn archive_text(r: &ArchiveReport) -> String {
    let mut r = r.clone();
    r.sessions_dir = safe_path(&r.sessions_dir);
    r.archive_dir = safe_path(&r.archive_dir);
    for a in &mut r.actions {
        a.file = safe(&a.file);
        a.destination = safe(&a.destination);
        a.session_key = a.session_key.as_deref().map(safe);
        a.session_id = safe(&a.session_id);
        a.outcome = safe_outcome(&a.outcome);
        a.aliases = a.aliases.iter().map(|n| safe(n)).collect();
    }
    r.skipped = r.skipped.iter().map(safe_skipped).collect();
    r.audit = r.audit.as_ref().map(safe_audit);
    text::safe_multiline(&r.to_string()).into_owned()
}

/// The text of a clear report, every name escaped.
pub(crate) fn clear_text(r: &ClearReport) -> String {
    let mut r = r.clone();
    r.sessions_dir = safe_path(&r.sessions_dir);
    for a in &mut r.actions {
        a.file = safe(&a.file);
        a.destination = a.destination.as_deref().map(safe);
        a.session_key = a.session_key.as_deref().map(safe);
        a.session_id = safe(&a.session_id);
        a.outcome = safe_outcome(&a.outcome);
        a.aliases = a.aliases.iter().map(|n| safe(n)).collect();
    }
    r.skipped = r.skipped.iter().map(safe_skipped).collect();
    r.audit = r.audit.as_ref().map(safe_audit);
    text::safe_multiline(&r.to_string()).into_owned()
}

/// The JSON of an archive report (see the module docs).
///
/// # Errors
/// Serialisation fails (it does not for these types once paths are lossy).
pub(crate) fn archive_json(r: &ArchiveReport) -> anyhow::Result<Value> {
    let mut lossy = r.clone();
    lossy.sessions_dir = lossy_path(&r.sessions_dir);
    lossy.archive_dir = lossy_path(&r.archive_dir);
    if let Some(a) = &mut lossy.audit {
        a.log = lossy_path(&a.log);
    }
    let mut v = serde_json::to_value(&lossy)?;
    if let Some(actions) = v.get_mut("actions").and_then(Value::as_array_mut) {
        for (json, action) in actions.iter_mut().zip(&r.actions) {
            let Some(obj) = json.as_object_mut() else {
                continue;
            };
            // The flattened outcome of a skipped action wrote its own `reason` over the
            // archive reason: put the archive reason back and move the skip reason aside.
            if let ActionOutcome::Skipped { reason } = &action.outcome {
                let skip = serde_json::to_value(reason)?;
                let at = obj
                    .keys()
                    .position(|k| k == "outcome")
                    .map_or(obj.len(), |i| i + 1);
                obj.shift_insert(
                    at,
                    "skipReason".to_owned(),
                    skip.get("reason").cloned().unwrap_or(Value::Null),
                );
            }
            obj.insert("reason".to_owned(), serde_json::to_value(&action.reason)?);
        }
    }
    Ok(v)
}

/// The JSON of a clear report (paths lossy).
///
/// # Errors
/// Serialisation fails (it does not for these types once paths are lossy).
pub(crate) fn clear_json(r: &ClearReport) -> anyhow::Result<Value> {
    let mut lossy = r.clone();
    lossy.sessions_dir = lossy_path(&r.sessions_dir);
    if let Some(a) = &mut lossy.audit {
        a.log = lossy_path(&a.log);
    }
    Ok(serde_json::to_value(&lossy)?)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

    use serde_json::json;
    use session_semantics::StoreLayout;
    use session_semantics::retention::plan_archive;

    use super::*;

    const DAY: i64 = 86_400_000;
    const NOW: i64 = 1_782_864_000_000; // 2026-07-01T00:00:00Z

    fn session(id: &str, at_ms: i64) -> Vec<u8> {
        format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}}\n\
             {{\"type\":\"message\",\"id\":\"m1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":{at_ms}}}}}\n"
        )
        .into_bytes()
    }

    /// A session that changes between the plan and the move is skipped at the re-check; its
    /// JSON keeps the reason it was chosen in `reason` and says why it was skipped in
    /// `skipReason` (before, the skip reason's string replaced the `reason` object).
    #[test]
    fn a_skipped_action_keeps_its_archive_reason_and_names_the_skip_reason() {
        let dir = tempfile::tempdir().unwrap();
        let sessions = dir.path().join("agents/main/sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        let file = sessions.join("old.jsonl");
        session_store::io::write_raw(&file, &session("s-old", NOW - 40 * DAY)).unwrap();
        let policy = session_semantics::RetentionPolicy {
            max_age: Some("30d".to_owned()),
            max_age_ms: Some(30 * DAY as u64),
            max_size: None,
            max_size_bytes: None,
        };
        let plan = plan_archive(&StoreLayout::new(dir.path()), "main", &policy, NOW).unwrap();
        // Another writer appends between the plan and the execution.
        let mut grown = session("s-old", NOW - 40 * DAY);
        grown.extend_from_slice(b"{\"type\":\"label\",\"id\":\"l1\",\"parentId\":\"m1\"}\n");
        session_store::io::write_raw(&file, &grown).unwrap();
        let report = plan.execute(None);
        let v = archive_json(&report).unwrap();
        assert_eq!(
            v["actions"],
            json!([{
                "file": "old.jsonl",
                "destination": "archive/old.jsonl",
                "sessionKey": "agent:main:old",
                "sessionId": "s-old",
                "lastActivity": "2026-05-22T00:00:00.000Z",
                "lastActivityMs": NOW - 40 * DAY,
                "sizeBytes": 245, // the planned size (the bytes before the append)
                "reason": {"kind": "max-age", "ageMs": 40 * DAY},
                "outcome": "skipped",
                "skipReason": "changed",
            }])
        );
        // Key order: `skipReason` right after `outcome`.
        let keys: Vec<&str> = v["actions"][0]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "file",
                "destination",
                "sessionKey",
                "sessionId",
                "lastActivity",
                "lastActivityMs",
                "sizeBytes",
                "reason",
                "outcome",
                "skipReason"
            ]
        );
        // The file stayed where it was, with the other writer's bytes.
        assert_eq!(std::fs::read(&file).unwrap(), grown);
        assert!(!sessions.join("archive/old.jsonl").exists());
    }
}
