//! `openclaw_store::listing` on the reference-made fixture (openclaw-store.md §5, §6, §9 cases
//! 30 and 32): the rows `openclaw sessions --json` prints (key, sessionId, updatedAt, ageMs,
//! kind, totalTokens, model, in its order), `--active` and `--limit`, and the inconsistency
//! flags: the missing subagent transcript, the orphan, a header-only transcript, a shared
//! session id; checkpoints, backups and trajectory sidecars are never sessions; the `.reset.`
//! archive is listed apart with its time.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::Path;

use pretty_assertions::assert_eq;
use serde_json::Value;
use session_semantics::openclaw_store::ArchiveReason;
use session_semantics::openclaw_store::listing::{
    ListOptions, StoreListing, TranscriptState, list_store, transcript_has_no_messages,
};

/// 2026-06-12T13:00:00Z, the clock of the fixture's `expected-sessions.json`.
const NOW: i64 = 1_781_269_200_000;
const MAIN: &str = "00000026-0000-4000-8000-0c6110000000";
const GROUP: &str = "0000000a-0000-4000-8000-0c6110000000";
const ORPHAN: &str = "00000021-0000-4000-8000-0c6110000000";

/// Plants a test input (`session_store::io::write_raw`: an atomic replace or create).
fn plant(path: impl AsRef<Path>, bytes: impl AsRef<[u8]>) {
    session_store::io::write_raw(path.as_ref(), bytes.as_ref()).unwrap();
}

fn fixture(test: &str) -> Option<(std::path::PathBuf, tempfile::TempDir, std::path::PathBuf)> {
    let shared = session_test_support::shared_dir(test)?;
    let dir = tempfile::tempdir().unwrap();
    let sessions = session_test_support::openclaw_fixture_copy(&shared, dir.path());
    Some((shared, dir, sessions))
}

/// `(key, sessionId, updatedAt, ageMs, kind, totalTokens, model)` of each row.
type Compared = (
    String,
    String,
    f64,
    Option<f64>,
    String,
    Option<f64>,
    String,
);

fn ours(l: &StoreListing) -> Vec<Compared> {
    l.rows
        .iter()
        .map(|r| {
            (
                r.key.clone(),
                r.session_id.clone().unwrap(),
                r.updated_at.unwrap(),
                r.age_ms,
                r.kind.to_owned(),
                r.total_tokens,
                r.model.clone(),
            )
        })
        .collect()
}

fn reference(shared: &Path, file: &str) -> Vec<Compared> {
    let v: Value = serde_json::from_slice(
        &std::fs::read(shared.join("fixtures/openclaw-6.11-store").join(file)).unwrap(),
    )
    .unwrap();
    v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["key"].as_str().unwrap().to_owned(),
                s["sessionId"].as_str().unwrap().to_owned(),
                s["updatedAt"].as_f64().unwrap(),
                s["ageMs"].as_f64(),
                s["kind"].as_str().unwrap().to_owned(),
                s["totalTokens"].as_f64(),
                s["model"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn rows_equal_the_reference_list_of_the_fixture() {
    let Some((shared, _dir, sessions)) = fixture("rows_equal_the_reference_list_of_the_fixture")
    else {
        return;
    };
    let l = list_store(&sessions, &ListOptions::at(NOW)).unwrap();
    assert_eq!(ours(&l), reference(&shared, "expected-sessions.json"));
    assert_eq!(l.total_count, 5);
    let states: Vec<(&str, TranscriptState, Option<u64>, Option<usize>)> = l
        .rows
        .iter()
        .map(|r| (r.key.as_str(), r.state, r.size, r.messages))
        .collect();
    assert_eq!(
        states,
        [
            (
                "agent:main:main",
                TranscriptState::Present,
                Some(2080),
                Some(6)
            ),
            (
                "agent:main:subagent:research-1",
                TranscriptState::Missing,
                None,
                None
            ),
            (
                "agent:main:cron:daily-digest:run:run-0001",
                TranscriptState::Present,
                Some(813),
                Some(2)
            ),
            (
                "agent:main:telegram:group:-1001234567890:topic:42",
                TranscriptState::Present,
                Some(811),
                Some(2)
            ),
            (
                "agent:main:telegram:group:-1001234567890",
                TranscriptState::Present,
                Some(1454),
                Some(4)
            ),
        ]
    );
    assert!(l.rows.iter().all(|r| r.shared_with.is_empty()));
    assert_eq!(l.rows[0].channel.as_deref(), Some("telegram"));
    assert_eq!(l.rows[1].channel, None);
    assert_eq!(l.rows[0].context_percent(), Some(0.0));
    let orphans: Vec<(&str, u64, bool)> = l
        .orphans
        .iter()
        .map(|o| (o.session_id.as_str(), o.size, o.header_only))
        .collect();
    assert_eq!(orphans, [(ORPHAN, 767, false)]);
    let archives: Vec<(ArchiveReason, &str, Option<&str>, i64)> = l
        .archives
        .iter()
        .map(|a| {
            (
                a.reason,
                a.original.as_str(),
                a.session_id.as_deref(),
                a.archived_at_ms,
            )
        })
        .collect();
    assert_eq!(
        archives,
        [(
            ArchiveReason::Reset,
            "00000001-0000-4000-8000-0c6110000000.jsonl",
            Some("00000001-0000-4000-8000-0c6110000000"),
            1_781_254_800_000
        )]
    );
}

#[test]
fn active_and_limit_select_the_newest_keys() {
    let Some((_shared, _dir, sessions)) = fixture("active_and_limit_select_the_newest_keys") else {
        return;
    };
    let keys = |opts: ListOptions| -> (Vec<String>, usize) {
        let l = list_store(&sessions, &opts).unwrap();
        (l.rows.into_iter().map(|r| r.key).collect(), l.total_count)
    };
    // The main DM was updated 3 h 54 min before now; the others 23 h and more.
    let hours = |h: u64| ListOptions {
        active_minutes: Some(h * 60),
        ..ListOptions::at(NOW)
    };
    assert_eq!(keys(hours(1)), (vec![], 0));
    assert_eq!(keys(hours(4)), (vec!["agent:main:main".to_owned()], 1));
    assert_eq!(
        keys(hours(24)),
        (
            vec![
                "agent:main:main".to_owned(),
                "agent:main:subagent:research-1".to_owned(),
                "agent:main:cron:daily-digest:run:run-0001".to_owned(),
            ],
            3
        )
    );
    assert_eq!(
        keys(ListOptions {
            limit: Some(2),
            ..ListOptions::at(NOW)
        }),
        (
            vec![
                "agent:main:main".to_owned(),
                "agent:main:subagent:research-1".to_owned()
            ],
            5
        )
    );
    assert_eq!(
        keys(ListOptions {
            limit: None,
            ..ListOptions::at(NOW)
        })
        .0
        .len(),
        5
    );
}

#[test]
fn planted_inconsistencies_are_flagged_and_sidecars_are_not_sessions() {
    let Some((_shared, _dir, sessions)) =
        fixture("planted_inconsistencies_are_flagged_and_sidecars_are_not_sessions")
    else {
        return;
    };
    // The cron row's transcript becomes a header only; a new row shares the group's id.
    let cron = sessions.join("0000001a-0000-4000-8000-0c6110000000.jsonl");
    let header = std::fs::read_to_string(&cron).unwrap();
    let header = header.lines().next().unwrap().to_owned() + "\n";
    plant(&cron, &header);
    assert!(transcript_has_no_messages(&cron));
    assert!(!transcript_has_no_messages(
        &sessions.join(format!("{MAIN}.jsonl"))
    ));
    let store_path = sessions.join("sessions.json");
    let mut store: Value = serde_json::from_slice(&std::fs::read(&store_path).unwrap()).unwrap();
    store.as_object_mut().unwrap().insert(
        "agent:main:discord:channel:dup".to_owned(),
        serde_json::json!({"sessionId": GROUP, "updatedAt": 1_781_175_000_000_u64}),
    );
    plant(&store_path, serde_json::to_vec_pretty(&store).unwrap());
    // Sidecars and archives that are never sessions.
    for name in [
        format!("{MAIN}.checkpoint.3f1c2b4a-5d6e-4f70-8a9b-0c1d2e3f4a5b.jsonl"),
        format!("{MAIN}.jsonl.bak.2026-06-12T10-00-00.000Z"),
        format!("{MAIN}.trajectory.jsonl"),
        format!("{MAIN}.trajectory-path.json"),
        "sessions.json.1234.3f1c2b4a-5d6e-4f70-8a9b-0c1d2e3f4a5b.tmp".to_owned(),
    ] {
        plant(sessions.join(name), b"{\"type\":\"session\"}\n");
    }
    std::fs::create_dir(sessions.join("archive")).unwrap();
    plant(sessions.join("archive/ffffffff.jsonl"), &header);

    let l = list_store(&sessions, &ListOptions::at(NOW)).unwrap();
    let flags: Vec<(&str, TranscriptState, Vec<&str>)> = l
        .rows
        .iter()
        .map(|r| {
            (
                r.key.as_str(),
                r.state,
                r.shared_with.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        flags,
        [
            ("agent:main:main", TranscriptState::Present, vec![]),
            (
                "agent:main:subagent:research-1",
                TranscriptState::Missing,
                vec![]
            ),
            (
                "agent:main:cron:daily-digest:run:run-0001",
                TranscriptState::HeaderOnly,
                vec![]
            ),
            (
                "agent:main:telegram:group:-1001234567890:topic:42",
                TranscriptState::Present,
                vec![]
            ),
            (
                "agent:main:telegram:group:-1001234567890",
                TranscriptState::Present,
                vec!["agent:main:discord:channel:dup"]
            ),
            (
                "agent:main:discord:channel:dup",
                TranscriptState::Present,
                vec!["agent:main:telegram:group:-1001234567890"]
            ),
        ]
    );
    assert_eq!(l.rows[5].kind, "group");
    let orphans: Vec<&str> = l.orphans.iter().map(|o| o.session_id.as_str()).collect();
    assert_eq!(orphans, [ORPHAN]);
    let archives: Vec<(ArchiveReason, i64)> = l
        .archives
        .iter()
        .map(|a| (a.reason, a.archived_at_ms))
        .collect();
    assert_eq!(
        archives,
        [
            (ArchiveReason::Bak, 1_781_258_400_000),
            (ArchiveReason::Reset, 1_781_254_800_000)
        ]
    );
}
