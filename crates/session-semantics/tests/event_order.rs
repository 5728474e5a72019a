//! The exact event list of create → append → compact → fork → archive. This file holds a single
//! test so that the process-wide transcript version starts at 1 here.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use pretty_assertions::assert_eq;
use session_format::json::parse_value;
use session_semantics::events::{
    EventBus, Lifecycle, LifecycleEvent, SessionEvent, SessionTarget, TranscriptEvent,
};
use session_semantics::{SemanticSession, SessionKey, StoreLayout};

#[test]
fn create_append_compact_fork_archive() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let layout = StoreLayout::new(&root);
    let bus = EventBus::new();
    let events: Arc<Mutex<Vec<SessionEvent>>> = Arc::default();
    let sink = Arc::clone(&events);
    let _all = bus.subscribe(move |e| sink.lock().unwrap().push(e.clone()));
    // A failing and a panicking listener change nothing for the writer or the others.
    let _bad = bus.subscribe(|_| Err::<(), _>("listener error"));
    let _boom = bus.subscribe_transcript(|_| -> () { panic!("listener panic") });

    let key: SessionKey = "agent:main:telegram:direct:alice".parse().unwrap();
    let child_key: SessionKey = "agent:main:telegram:direct:alice:thread:t1"
        .parse()
        .unwrap();
    let dir = root.join("agents/main/sessions");
    let file = dir.join("telegram_alice.jsonl");
    let child_file = dir.join("telegram_alice%3Athread%3At1.jsonl");

    let mut s = SemanticSession::create(&layout, &key, "/work", &bus).unwrap();
    let sid = s.session_id().to_owned();
    let user = s
        .append_message(parse_value(br#"{"role":"user","content":"hi","timestamp":1}"#).unwrap())
        .unwrap();
    let reply = s
        .append_message(
            parse_value(
                br#"{"role":"assistant","content":[{"type":"text","text":"hello"}],"timestamp":2}"#,
            )
            .unwrap(),
        )
        .unwrap();
    let compaction = s.compact("summary", &reply, 1234.0, None).unwrap();
    let child = s.fork(&layout, Some(&child_key)).unwrap();
    let child_sid = child.session_id().to_owned();
    assert_eq!(child.session_file(), Some(child_file.as_path()));
    let archived = s.archive().unwrap();
    assert_eq!(archived, dir.join("archive/telegram_alice.jsonl"));

    let target = |sid: &str, k: &SessionKey, f: &PathBuf| SessionTarget {
        agent_id: "main".into(),
        session_id: sid.to_owned(),
        session_key: Some(k.to_string()),
        session_file: Some(f.clone()),
    };
    let parent = target(&sid, &key, &file);
    let lifecycle = |t: &SessionTarget, parent_key: Option<&str>, l: Lifecycle| {
        SessionEvent::Lifecycle(LifecycleEvent {
            target: t.clone(),
            parent_session_key: parent_key.map(str::to_owned),
            lifecycle: l,
        })
    };
    let transcript = |id: &str, ty: &str, role: Option<&str>, version: u64, persisted: bool| {
        SessionEvent::Transcript(TranscriptEvent {
            target: parent.clone(),
            entry_id: id.to_owned(),
            entry_type: ty.to_owned(),
            role: role.map(str::to_owned),
            version,
            persisted,
        })
    };
    let expected = vec![
        lifecycle(&parent, None, Lifecycle::Created),
        transcript(&user, "message", Some("user"), 1, false),
        transcript(&reply, "message", Some("assistant"), 2, true),
        transcript(&compaction, "compaction", None, 3, true),
        lifecycle(
            &parent,
            None,
            Lifecycle::Compacted {
                entry_id: compaction.clone(),
                first_kept_entry_id: reply.clone(),
                tokens_before: 1234.0,
            },
        ),
        lifecycle(
            &target(&child_sid, &child_key, &child_file),
            Some("agent:main:telegram:direct:alice"),
            Lifecycle::Forked {
                parent: parent.clone(),
            },
        ),
        lifecycle(
            &parent,
            None,
            Lifecycle::Archived {
                archived_to: archived,
            },
        ),
    ];
    assert_eq!(*events.lock().unwrap(), expected);
    // 3 transcript events × 2 failing listeners, 4 lifecycle events × 1.
    assert_eq!(bus.failure_count(), 10);
    assert_eq!(session_semantics::events::current_transcript_version(), 3);
    // The writes all landed: the fork holds the parent's three entries under a new header.
    let forked = std::fs::read_to_string(&child_file).unwrap();
    assert_eq!(forked.lines().count(), 4);
    assert!(forked.contains(&compaction));
    assert!(!file.exists());
}
