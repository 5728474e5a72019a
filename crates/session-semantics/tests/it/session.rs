//! `SemanticSession`: open, reset, delete, lock refusal, containment.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::sync::{Arc, Mutex};

use pretty_assertions::assert_eq;
use session_format::json::parse_value;
use session_semantics::events::{EventBus, Lifecycle, ResetReason};
use session_semantics::session::{CreateSessionError, OpenSessionError, RetireSessionError};
use session_semantics::{PathError, SemanticSession, SessionKey, StoreLayout};

/// (entry type, role) of a transcript event.
type EntryKind = (String, Option<String>);

fn setup() -> (tempfile::TempDir, StoreLayout) {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    (tmp, StoreLayout::new(root))
}

fn chat(s: &mut SemanticSession) {
    s.append_message(parse_value(br#"{"role":"user","content":"hi","timestamp":1}"#).unwrap())
        .unwrap();
    s.append_message(
        parse_value(
            br#"{"role":"assistant","content":[{"type":"text","text":"yo"}],"timestamp":2}"#,
        )
        .unwrap(),
    )
    .unwrap();
}

fn names(bus: &EventBus) -> Arc<Mutex<Vec<String>>> {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let s2 = Arc::clone(&seen);
    bus.subscribe_lifecycle(move |e| s2.lock().unwrap().push(e.lifecycle.name().to_owned()))
        .detach();
    seen
}

#[test]
fn open_reset_delete() {
    let (_tmp, layout) = setup();
    let bus = EventBus::new();
    let seen = names(&bus);
    let key: SessionKey = "agent:main:main".parse().unwrap();
    let mut s = SemanticSession::create(&layout, &key, "/w", &bus).unwrap();
    chat(&mut s);
    let file = s.session_file().unwrap().to_path_buf();
    assert_eq!(file.file_name().unwrap(), "main.jsonl");
    assert!(matches!(
        SemanticSession::create(&layout, &key, "/w", &bus),
        Err(CreateSessionError::Exists { .. })
    ));
    let first_id = s.session_id().to_owned();
    drop(s);

    let mut s = SemanticSession::open(&layout, &key, &bus).unwrap();
    assert_eq!(s.session_id(), first_id);
    assert_eq!(s.manager().entry_count(), 2);

    let archived = s.reset(ResetReason::Daily).unwrap().unwrap();
    assert_eq!(archived, file.parent().unwrap().join("archive/main.jsonl"));
    assert_ne!(s.session_id(), first_id);
    assert_eq!(s.session_file(), Some(file.as_path()));
    assert!(
        !file.exists(),
        "the fresh session is written at its first assistant message"
    );
    chat(&mut s);
    assert!(file.exists());
    // A second reset finds the name taken in the archive and picks another.
    let again = s.reset(ResetReason::New).unwrap().unwrap();
    assert_eq!(again.file_name().unwrap(), "main~1.jsonl");
    // Reset of a never-written session archives nothing.
    assert_eq!(s.reset(ResetReason::Idle).unwrap(), None);
    chat(&mut s);
    s.delete().unwrap();
    assert!(!file.exists());
    assert_eq!(
        *seen.lock().unwrap(),
        vec!["created", "resumed", "reset", "reset", "reset", "deleted"]
    );
}

#[test]
fn reset_event_names_the_previous_session() {
    let (_tmp, layout) = setup();
    let bus = EventBus::new();
    let got = Arc::new(Mutex::new(None));
    let g2 = Arc::clone(&got);
    let _s = bus.subscribe_lifecycle(move |e| {
        if let Lifecycle::Reset {
            cause,
            previous,
            archived_to,
        } = &e.lifecycle
        {
            *g2.lock().unwrap() = Some((
                *cause,
                previous.session_id.clone(),
                archived_to.clone(),
                e.target.session_id.clone(),
            ));
        }
    });
    let mut s = SemanticSession::create_unnamed(&layout, "main", None, "/w", &bus).unwrap();
    chat(&mut s);
    let old = s.session_id().to_owned();
    let old_file = s.session_file().unwrap().to_path_buf();
    let archived = s.reset(ResetReason::CronStale).unwrap();
    let (cause, previous, to, new) = got.lock().unwrap().clone().unwrap();
    assert_eq!(cause, ResetReason::CronStale);
    assert_eq!(previous, old);
    assert_eq!(to, archived);
    assert_eq!(new, s.session_id());
    assert_ne!(s.session_file(), Some(old_file.as_path()));
    assert_eq!(
        to.unwrap().file_name(),
        old_file.file_name(),
        "archived under its own name"
    );
}

#[test]
fn locked_sessions_are_not_retired() {
    let (_tmp, layout) = setup();
    let bus = EventBus::new();
    let key: SessionKey = "agent:main:slack:direct:u1".parse().unwrap();
    let mut s = SemanticSession::create(&layout, &key, "/w", &bus).unwrap();
    chat(&mut s);
    let file = s.session_file().unwrap().to_path_buf();
    let lock = file.with_file_name("slack_u1.jsonl.lock");
    session_store::io::write_raw(&lock, b"{}").unwrap();
    match s.reset(ResetReason::Reset) {
        Err(RetireSessionError::Locked { lock: l }) => assert_eq!(l, lock),
        other => panic!("{other:?}"),
    }
    assert!(file.exists());
    match s.archive() {
        Err(RetireSessionError::Locked { .. }) => {}
        other => panic!("{other:?}"),
    }
    assert!(file.exists());
}

#[test]
fn open_refuses_missing_files_and_symlinks_out() {
    let (tmp, layout) = setup();
    let bus = EventBus::new();
    let key: SessionKey = "agent:main:x".parse().unwrap();
    assert!(matches!(
        SemanticSession::open(&layout, &key, &bus),
        Err(OpenSessionError::NotFound { .. })
    ));
    #[cfg(unix)]
    {
        let dir = layout.sessions_dir("main").unwrap();
        session_store::io::ensure_dir(&dir).unwrap();
        let outside = tmp.path().join("outside.jsonl");
        session_store::io::write_raw(&outside, b"{\"type\":\"session\",\"id\":\"o\"}\n").unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("x.jsonl")).unwrap();
        assert!(matches!(
            SemanticSession::open(&layout, &key, &bus),
            Err(OpenSessionError::Path(PathError::OutsideStore { .. }))
        ));
        assert!(matches!(
            SemanticSession::create(&layout, &"agent:main:x".parse().unwrap(), "/w", &bus),
            Err(CreateSessionError::Path(PathError::OutsideStore { .. }))
        ));
    }
    #[cfg(unix)]
    {
        // `agents/ops` leads out of the root: nothing is created there.
        let other = tempfile::tempdir().unwrap();
        let elsewhere = other.path().join("elsewhere");
        session_store::io::ensure_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, layout.agents_dir().join("ops")).unwrap();
        let ops: SessionKey = "agent:ops:main".parse().unwrap();
        assert!(matches!(
            SemanticSession::create(&layout, &ops, "/w", &bus),
            Err(CreateSessionError::Path(PathError::OutsideStore { .. }))
        ));
        assert!(!elsewhere.join("sessions").exists());
    }
    let bad: SessionKey = "agent:Bad Agent:x".parse().unwrap();
    assert!(matches!(
        SemanticSession::create(&layout, &bad, "/w", &bus),
        Err(CreateSessionError::Path(PathError::InvalidAgentId { .. }))
    ));
}

#[test]
fn append_with_reports_any_entry_kind() {
    let (_tmp, layout) = setup();
    let bus = EventBus::new();
    let seen: Arc<Mutex<Vec<EntryKind>>> = Arc::default();
    let s2 = Arc::clone(&seen);
    let _sub = bus.subscribe_transcript(move |e| {
        s2.lock()
            .unwrap()
            .push((e.entry_type.clone(), e.role.clone()));
    });
    let key: SessionKey = "agent:main:main".parse().unwrap();
    let mut s = SemanticSession::create(&layout, &key, "/w", &bus).unwrap();
    s.append_with(|m| m.append_model_change("anthropic", "claude"))
        .unwrap();
    s.append_with(|m| m.append_thinking_level_change("high"))
        .unwrap();
    assert!(
        s.append_with(|m| m.append_message(session_format::json::JsValue::Null))
            .is_err()
    );
    assert_eq!(
        *seen.lock().unwrap(),
        vec![
            ("model_change".to_owned(), None),
            ("thinking_level_change".to_owned(), None)
        ]
    );
}
