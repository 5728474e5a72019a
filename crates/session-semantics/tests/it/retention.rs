//! Retention on a generated store: real session files written by `session_store` with chosen
//! message times, next to files that must be left alone (locked, not sessions, symlinks, a
//! directory, no activity time, malformed rows). The dry-run report is snapshotted; execution
//! is checked against the resulting directory listing.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use pretty_assertions::assert_eq;
use session_format::json::parse_value;
use session_semantics::events::{EventBus, Lifecycle};
use session_semantics::policy::{Config, FixedClock};
use session_semantics::retention::{
    self, ClearMode, ClearTarget, Outcome, RetentionPolicy, SessionRef, SkipReason,
};
use session_semantics::{RetentionError, StoreLayout};
use session_store::OpenParams;
use session_store::SessionManager;

/// 2026-03-01T00:00:00.000Z.
const NOW: i64 = 1_772_323_200_000;
const DAY: i64 = 86_400_000;

const REFERENCE_NAME: &str = "2025-12-01T00-00-00-000Z_0191f7e4-1c2d-7abc-8def-0123456789ab.jsonl";

/// Writes a session with one user/assistant pair per time (`pad` characters of filler in the
/// first user message).
fn session(path: &Path, times: &[i64], pad: usize) -> String {
    let mut sm = SessionManager::open_with(
        path,
        &OpenParams {
            session_dir: None,
            cwd_override: Some("/work".into()),
            fallback_cwd: Some("/work".into()),
        },
    )
    .unwrap();
    for (i, t) in times.iter().enumerate() {
        let filler = if i == 0 {
            "x".repeat(pad)
        } else {
            String::new()
        };
        let user = format!(r#"{{"role":"user","content":"question {i}{filler}","timestamp":{t}}}"#);
        sm.append_message(parse_value(user.as_bytes()).unwrap())
            .unwrap();
        let reply = format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":"answer {i}"}}],"timestamp":{t}}}"#
        );
        sm.append_message(parse_value(reply.as_bytes()).unwrap())
            .unwrap();
    }
    assert!(sm.is_flushed());
    sm.get_session_id().to_owned()
}

struct Store {
    _tmp: tempfile::TempDir,
    layout: StoreLayout,
    dir: PathBuf,
    /// (session id, placeholder) pairs for redaction.
    ids: Vec<(String, String)>,
}

fn build_store() -> Store {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap().join("state");
    let layout = StoreLayout::new(&root);
    let dir = layout.sessions_dir("main").unwrap();
    session_store::io::ensure_dir(&dir.join("archive")).unwrap();
    let mut ids = Vec::new();
    let mut add = |name: &str, times: &[i64], pad: usize| {
        let id = session(&dir.join(name), times, pad);
        ids.push((id, format!("[id of {name}]")));
    };
    add("telegram_alice.jsonl", &[NOW - 60 * DAY, NOW - 59 * DAY], 0);
    add("telegram_bob.jsonl", &[NOW - 4 * DAY], 3000);
    add("main.jsonl", &[NOW - DAY], 0);
    add("cron=nightly.jsonl", &[NOW - 40 * DAY], 0);
    add(REFERENCE_NAME, &[NOW - 90 * DAY], 0);
    let raw =
        |name: &str, bytes: &[u8]| session_store::io::write_raw(&dir.join(name), bytes).unwrap();
    raw(
        "cron=nightly.jsonl.lock",
        b"{\"pid\":1,\"createdAt\":\"2026-03-01T00:00:00.000Z\"}",
    );
    raw("notes.jsonl", b"{\"note\":1}\n");
    raw("empty.jsonl", b"");
    raw(
        "header-only.jsonl",
        b"{\"type\":\"session\",\"version\":3,\"id\":\"h1\",\"timestamp\":\"not a date\",\"cwd\":\"/w\"}\n",
    );
    raw(
        "malformed.jsonl",
        b"{\"type\":\"session\",\"version\":3,\"id\":\"m1\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\nnull\n",
    );
    raw("sessions.json", b"{}");
    raw("archive/telegram_alice.jsonl", b"older archived copy\n");
    session_store::io::ensure_dir(&dir.join("dir.jsonl")).unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(dir.join("telegram_bob.jsonl"), dir.join("link.jsonl")).unwrap();
        let outside = root.parent().unwrap().join("outside.jsonl");
        session(&outside, &[NOW - 100 * DAY], 0);
        std::os::unix::fs::symlink(&outside, dir.join("outside-link.jsonl")).unwrap();
    }
    Store {
        dir,
        layout,
        ids,
        _tmp: tmp,
    }
}

fn policy() -> RetentionPolicy {
    let cfg = Config::from_json(r#"{"sessions":{"retention":{"maxAge":"30d","maxSize":"3kb"}}}"#)
        .unwrap();
    RetentionPolicy::from(&cfg.sessions.retention)
}

fn redact(store: &Store, text: &str) -> String {
    let root = store
        .layout
        .root()
        .parent()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let mut out = text.replace(&root, "[TMP]");
    for (id, placeholder) in &store.ids {
        out = out.replace(id, placeholder);
    }
    out
}

/// Every entry under `dir`, relative, sorted; symlinks and directories marked.
fn listing(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let rel = e
                .path()
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let t = e.file_type().unwrap();
            if t.is_symlink() {
                out.push(format!("{rel} -> symlink"));
            } else if t.is_dir() {
                out.push(format!("{rel}/"));
                stack.push(e.path());
            } else {
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

#[cfg(unix)]
#[test]
fn archive_dry_run_then_execute() {
    let store = build_store();
    let before = listing(&store.dir);
    let plan = retention::plan_archive(&store.layout, "main", &policy(), NOW).unwrap();
    let report = plan.report().clone();
    insta::assert_snapshot!(
        "archive_dry_run_json",
        redact(&store, &serde_json::to_string_pretty(&report).unwrap())
    );
    insta::assert_snapshot!("archive_dry_run_text", redact(&store, &report.to_string()));
    // A dry run changes nothing.
    assert_eq!(listing(&store.dir), before);
    let via_clock = retention::archive(
        &store.layout,
        "main",
        &policy(),
        &FixedClock(NOW),
        true,
        None,
    )
    .unwrap();
    assert_eq!(via_clock, report);
    assert_eq!(listing(&store.dir), before);

    let bus = EventBus::new();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = Arc::clone(&seen);
    let _sub = bus.subscribe_lifecycle(move |e| {
        if let Lifecycle::Archived { archived_to } = &e.lifecycle {
            s2.lock().unwrap().push((
                e.target.session_key.clone(),
                archived_to
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
            ));
        }
    });
    let done = plan.execute(Some(&bus));
    assert!(!done.dry_run);
    let outcomes: Vec<(&str, &Outcome)> = done
        .actions
        .iter()
        .map(|a| (a.file.as_str(), &a.outcome))
        .collect();
    assert_eq!(
        outcomes,
        vec![
            (REFERENCE_NAME, &Outcome::Archived),
            ("telegram_alice.jsonl", &Outcome::Archived),
            ("telegram_bob.jsonl", &Outcome::Archived),
        ]
    );
    assert_eq!(
        *seen.lock().unwrap(),
        vec![
            (None, REFERENCE_NAME.to_owned()),
            (
                Some("agent:main:telegram:direct:alice".to_owned()),
                "telegram_alice~1.jsonl".to_owned()
            ),
            (
                Some("agent:main:telegram:direct:bob".to_owned()),
                "telegram_bob.jsonl".to_owned()
            ),
        ]
    );
    assert_eq!(
        listing(&store.dir),
        vec![
            "archive/",
            &format!("archive/{REFERENCE_NAME}"),
            "archive/telegram_alice.jsonl",
            "archive/telegram_alice~1.jsonl",
            "archive/telegram_bob.jsonl",
            "cron=nightly.jsonl",
            "cron=nightly.jsonl.lock",
            "dir.jsonl/",
            "empty.jsonl",
            "header-only.jsonl",
            "main.jsonl",
            "malformed.jsonl",
            "notes.jsonl",
            "outside-link.jsonl -> symlink",
            "sessions-audit.log",
            "sessions.json",
        ]
    );
    // One audit line per move, in order (`tests/retention_audit.rs` pins the fields).
    let audit = std::fs::read_to_string(store.dir.join("sessions-audit.log")).unwrap();
    let lines: Vec<serde_json::Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // `link.jsonl` named the last archived session: the link (only) was removed after it.
    let alias = lines.last().unwrap();
    assert_eq!(
        (&alias["action"], &alias["file"], &alias["destination"]),
        (
            &serde_json::json!("remove-alias"),
            &serde_json::json!("link.jsonl"),
            &serde_json::Value::Null
        )
    );
    assert_eq!(
        done.actions
            .iter()
            .map(|a| a.aliases.clone())
            .collect::<Vec<_>>(),
        [vec![], vec![], vec!["link.jsonl".to_owned()]]
    );
    assert_eq!(
        alias["reason"],
        format!("alias of {}", done.actions[2].file)
    );
    let moved: Vec<(String, String)> = lines[..lines.len() - 1]
        .iter()
        .map(|v| {
            (
                v["file"].as_str().unwrap().to_owned(),
                v["destination"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        moved,
        [
            (
                REFERENCE_NAME.to_owned(),
                format!("archive/{REFERENCE_NAME}")
            ),
            (
                "telegram_alice.jsonl".to_owned(),
                "archive/telegram_alice~1.jsonl".to_owned()
            ),
            (
                "telegram_bob.jsonl".to_owned(),
                "archive/telegram_bob.jsonl".to_owned()
            ),
        ]
    );
    // The pre-existing archive file kept its bytes; the moved one is the session.
    assert_eq!(
        std::fs::read(store.dir.join("archive/telegram_alice.jsonl")).unwrap(),
        b"older archived copy\n"
    );
    assert!(session_store::is_valid_session_file(
        &store.dir.join("archive/telegram_alice~1.jsonl")
    ));
    // A second run finds nothing more to do.
    let again = retention::plan_archive(&store.layout, "main", &policy(), NOW).unwrap();
    assert_eq!(again.report().actions.len(), 0);
}

#[test]
fn execution_rechecks_each_file() {
    let store = build_store();
    let plan = retention::plan_archive(&store.layout, "main", &policy(), NOW).unwrap();
    // After the plan: alice gets a lock, bob grows.
    session_store::io::write_raw(&store.dir.join("telegram_alice.jsonl.lock"), b"{}").unwrap();
    session_store::io::append_raw(&store.dir.join("telegram_bob.jsonl"), b"{\"x\":1}\n").unwrap();
    let done = plan.execute(None);
    let outcomes: Vec<(&str, &Outcome)> = done
        .actions
        .iter()
        .map(|a| (a.file.as_str(), &a.outcome))
        .collect();
    assert_eq!(
        outcomes,
        vec![
            (REFERENCE_NAME, &Outcome::Archived),
            (
                "telegram_alice.jsonl",
                &Outcome::Skipped {
                    reason: SkipReason::Locked {
                        lock_file: "telegram_alice.jsonl.lock".into()
                    }
                }
            ),
            (
                "telegram_bob.jsonl",
                &Outcome::Skipped {
                    reason: SkipReason::Changed
                }
            ),
        ]
    );
    assert!(store.dir.join("telegram_alice.jsonl").is_file());
    assert!(store.dir.join("telegram_bob.jsonl").is_file());
}

#[test]
fn missing_agent_gives_an_empty_plan_and_bad_agents_are_refused() {
    let store = build_store();
    let plan = retention::plan_archive(&store.layout, "ops", &policy(), NOW).unwrap();
    assert_eq!(plan.report().actions, vec![]);
    assert_eq!(plan.report().skipped, vec![]);
    assert_eq!(
        retention::plan_archive(&store.layout, "../main", &policy(), NOW)
            .unwrap_err()
            .to_string(),
        "agent id \"../main\" cannot name a store directory (expected \"main\": [a-z0-9][a-z0-9_-]{0,63})"
    );
    // A sessions directory that leads out of the store root is refused as a whole.
    #[cfg(unix)]
    {
        let other = tempfile::tempdir().unwrap();
        session(&other.path().join("old.jsonl"), &[NOW - 100 * DAY], 0);
        session_store::io::ensure_dir(&store.layout.agents_dir().join("ops")).unwrap();
        std::os::unix::fs::symlink(
            other.path(),
            store.layout.agents_dir().join("ops").join("sessions"),
        )
        .unwrap();
        assert!(matches!(
            retention::plan_archive(&store.layout, "ops", &policy(), NOW),
            Err(RetentionError::Path(
                session_semantics::PathError::OutsideStore { .. }
            ))
        ));
        assert!(matches!(
            retention::clear(
                &store.layout,
                &ClearTarget::Agent("ops".into()),
                ClearMode::Purge,
                false,
                None
            ),
            Err(RetentionError::Path(_))
        ));
        assert!(other.path().join("old.jsonl").is_file());
    }
    // Limits off: nothing to do.
    let off = RetentionPolicy::default();
    let plan = retention::plan_archive(&store.layout, "main", &off, NOW).unwrap();
    assert_eq!(plan.report().actions, vec![]);
}

#[test]
fn clear_one_session_or_all() {
    let store = build_store();
    let target = ClearTarget::Session(SessionRef::parse("main", "telegram:direct:alice").unwrap());
    let dry = retention::clear(&store.layout, &target, ClearMode::Archive, true, None).unwrap();
    insta::assert_snapshot!("clear_one_dry_run", redact(&store, &dry.to_string()));
    assert!(store.dir.join("telegram_alice.jsonl").is_file());
    let done = retention::clear(&store.layout, &target, ClearMode::Archive, false, None).unwrap();
    assert_eq!(done.actions[0].outcome, Outcome::Archived);
    assert_eq!(
        done.actions[0].destination.as_deref(),
        Some("archive/telegram_alice~1.jsonl")
    );
    assert!(!store.dir.join("telegram_alice.jsonl").exists());
    // Gone now: clearing it again is an error naming the file.
    let err =
        retention::clear(&store.layout, &target, ClearMode::Archive, false, None).unwrap_err();
    assert!(
        matches!(err, RetentionError::NotFound { ref name, .. } if name == "telegram_alice.jsonl")
    );
    // A locked session is left alone.
    let locked = ClearTarget::Session(SessionRef::parse("main", "cron=nightly.jsonl").unwrap());
    let r = retention::clear(&store.layout, &locked, ClearMode::Purge, false, None).unwrap();
    assert_eq!(r.actions, vec![]);
    assert_eq!(r.skipped[0].file, "cron=nightly.jsonl");
    // Purge everything purgeable.
    let bus = EventBus::new();
    let deleted = Arc::new(Mutex::new(0));
    let d2 = Arc::clone(&deleted);
    let _s = bus.subscribe_lifecycle(move |e| {
        if e.lifecycle == Lifecycle::Deleted {
            *d2.lock().unwrap() += 1;
        }
    });
    let all = retention::clear(
        &store.layout,
        &ClearTarget::Agent("main".into()),
        ClearMode::Purge,
        false,
        Some(&bus),
    )
    .unwrap();
    let purged: Vec<&str> = all.actions.iter().map(|a| a.file.as_str()).collect();
    assert_eq!(
        purged,
        vec![
            REFERENCE_NAME,
            "header-only.jsonl",
            "main.jsonl",
            "telegram_bob.jsonl"
        ]
    );
    assert!(all.actions.iter().all(|a| a.outcome == Outcome::Purged));
    assert_eq!(*deleted.lock().unwrap(), 4);
    assert!(store.dir.join("cron=nightly.jsonl").is_file());
    assert!(store.dir.join("notes.jsonl").is_file());
    // Keys of another agent are refused.
    assert!(matches!(
        SessionRef::parse("main", "agent:ops:main"),
        Err(RetentionError::AgentMismatch { .. })
    ));
    assert!(matches!(
        SessionRef::parse("main", "../x.jsonl"),
        Err(RetentionError::BadSessionRef { .. })
    ));
}
