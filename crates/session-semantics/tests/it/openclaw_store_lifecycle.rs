//! Row lifecycle on the reference-made store (openclaw-store.md §3.3, §3.4, §7 J7.2–J7.6; §9
//! cases 21 and 23): deleting a row renames its transcript and trajectory sidecars in place to
//! `.deleted.<ts>` after the store write; a reset gives the key a new id, the `/new` fields and
//! a `.reset.<ts>` of the old transcript, with no new file; a shared transcript is left alone;
//! a concurrent change of `sessions.json` refuses the write and renames nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::{Path, PathBuf};

use session_format::json::JsValue;
use session_semantics::openclaw_store::lifecycle::{
    Disposal, FileOutcome, FileRole, LeftAloneReason, LifecycleError, LifecyclePlan, RowAction,
};
use session_semantics::openclaw_store::{SessionStore, SessionStoreError, StoreEntry};

/// 2026-06-12T13:00:00.000Z, the fixture's "now".
const NOW: i64 = 1_781_269_200_000;
const TS: &str = "2026-06-12T13-00-00.000Z";
const MAIN: &str = "00000026-0000-4000-8000-0c6110000000";
const CRON: &str = "0000001a-0000-4000-8000-0c6110000000";
const GROUP: &str = "0000000a-0000-4000-8000-0c6110000000";
const ORPHAN: &str = "00000021-0000-4000-8000-0c6110000000";
const POINTER: &[u8] = b"{\"traceSchema\":\"openclaw-trajectory-pointer\"}\n";
const NEW_ID: &str = "00000099-0000-4000-8000-0c6110000000";
const CRON_KEY: &str = "agent:main:cron:daily-digest:run:run-0001";
const GROUP_KEY: &str = "agent:main:telegram:group:-1001234567890";

fn copy(test: &str) -> Option<(tempfile::TempDir, PathBuf)> {
    let shared = session_test_support::shared_dir(test)?;
    let tmp = session_test_support::tempdir();
    let dir = session_test_support::openclaw_fixture_copy(&shared, tmp.path());
    Some((tmp, dir))
}

fn read(p: &Path) -> Vec<u8> {
    session_store::io::read_file(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn plant(p: &Path, bytes: &[u8]) {
    session_store::io::write_raw(p, bytes).unwrap();
}

fn load(dir: &Path) -> SessionStore {
    SessionStore::load(&dir.join("sessions.json")).unwrap()
}

fn keys(store: &SessionStore) -> Vec<String> {
    store
        .entries()
        .map(|(k, _)| k.to_str_lossy().into_owned())
        .collect()
}

fn field_names(e: &StoreEntry) -> Vec<String> {
    e.fields()
        .keys()
        .map(|k| k.to_str_lossy().into_owned())
        .collect()
}

#[test]
fn deleting_a_row_writes_the_store_then_renames_transcript_and_sidecars() {
    let Some((_tmp, dir)) =
        copy("deleting_a_row_writes_the_store_then_renames_transcript_and_sidecars")
    else {
        return;
    };
    let transcript = dir.join(format!("{CRON}.jsonl"));
    let trajectory = dir.join(format!("{CRON}.trajectory.jsonl"));
    let pointer = dir.join(format!("{CRON}.trajectory-path.json"));
    plant(&trajectory, b"{\"t\":1}\n");
    plant(&pointer, POINTER);
    let store_before = read(&dir.join("sessions.json"));
    let transcript_bytes = read(&transcript);

    let mut plan = LifecyclePlan::new(load(&dir), NOW, Disposal::Archive).unwrap();
    plan.delete_row(CRON_KEY).unwrap();
    let preview = plan.preview();
    assert!(preview.dry_run);
    assert!(preview.store_written);
    assert_eq!(preview.archive_timestamp, TS);
    assert_eq!(preview.rows.len(), 1);
    assert_eq!(preview.rows[0].key, CRON_KEY);
    assert_eq!(preview.rows[0].session_id.as_deref(), Some(CRON));
    assert_eq!(preview.rows[0].action, RowAction::Removed);
    let planned: Vec<(PathBuf, Option<PathBuf>, FileRole, u64)> = preview
        .files
        .iter()
        .map(|f| (f.file.clone(), f.to.clone(), f.role, f.bytes))
        .collect();
    assert_eq!(
        planned,
        vec![
            (
                transcript.clone(),
                Some(dir.join(format!("{CRON}.jsonl.deleted.{TS}"))),
                FileRole::Transcript,
                813
            ),
            (
                trajectory,
                Some(dir.join(format!("{CRON}.trajectory.jsonl.deleted.{TS}"))),
                FileRole::Trajectory,
                8
            ),
            (
                pointer,
                Some(dir.join(format!("{CRON}.trajectory-path.json.deleted.{TS}"))),
                FileRole::TrajectoryPointer,
                POINTER.len() as u64
            ),
        ]
    );
    assert!(preview.left_alone.is_empty());
    // The preview wrote nothing.
    assert_eq!(read(&dir.join("sessions.json")), store_before);
    assert!(transcript.exists());

    let mut expected = load(&dir);
    expected.remove(CRON_KEY);
    let report = plan.apply().unwrap();
    assert!(!report.dry_run);
    assert!(report.files.iter().all(|f| f.outcome == FileOutcome::Done));
    let after = load(&dir);
    assert_eq!(
        keys(&after),
        vec![
            "agent:main:main",
            GROUP_KEY,
            "agent:main:telegram:group:-1001234567890:topic:42",
            "agent:main:subagent:research-1",
        ]
    );
    // A minimal edit: every other row keeps its bytes.
    assert_eq!(read(&dir.join("sessions.json")), expected.to_bytes());
    let text = String::from_utf8(read(&dir.join("sessions.json"))).unwrap();
    let before = String::from_utf8(store_before).unwrap();
    let main_block = &before[..before.find("  \"agent:main:telegram:group").unwrap()];
    assert!(text.starts_with(main_block));
    assert!(!text.contains(CRON));
    assert!(!text.ends_with('\n'));
    assert_eq!(
        session_test_support::dir_names(&dir),
        vec![
            format!("00000001-0000-4000-8000-0c6110000000.jsonl.reset.2026-06-12T09-00-00.000Z"),
            format!("{GROUP}.jsonl"),
            "00000013-0000-4000-8000-0c6110000000-topic-42.jsonl".to_owned(),
            format!("{CRON}.jsonl.deleted.{TS}"),
            format!("{CRON}.trajectory-path.json.deleted.{TS}"),
            format!("{CRON}.trajectory.jsonl.deleted.{TS}"),
            format!("{ORPHAN}.jsonl"),
            format!("{MAIN}.jsonl"),
            "sessions-audit.log".to_owned(),
            "sessions.json".to_owned(),
        ]
    );
    assert_eq!(
        read(&dir.join(format!("{CRON}.jsonl.deleted.{TS}"))),
        transcript_bytes
    );
    assert_eq!(
        read(&dir.join(format!("{CRON}.trajectory.jsonl.deleted.{TS}"))),
        b"{\"t\":1}\n"
    );
    let audit = String::from_utf8(read(&dir.join("sessions-audit.log"))).unwrap();
    let lines: Vec<serde_json::Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let summary: Vec<(String, String, String, String, u64)> = lines
        .iter()
        .map(|l| {
            (
                l["action"].as_str().unwrap().to_owned(),
                l["file"].as_str().unwrap().to_owned(),
                l["destination"].as_str().unwrap().to_owned(),
                l["reason"].as_str().unwrap().to_owned(),
                l["bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (
                "archive".to_owned(),
                format!("{CRON}.jsonl"),
                format!("{CRON}.jsonl.deleted.{TS}"),
                "delete-row".to_owned(),
                813
            ),
            (
                "archive".to_owned(),
                format!("{CRON}.trajectory.jsonl"),
                format!("{CRON}.trajectory.jsonl.deleted.{TS}"),
                "delete-row".to_owned(),
                8
            ),
            (
                "archive".to_owned(),
                format!("{CRON}.trajectory-path.json"),
                format!("{CRON}.trajectory-path.json.deleted.{TS}"),
                "delete-row".to_owned(),
                POINTER.len() as u64
            ),
        ]
    );
}

#[test]
fn a_reset_gives_the_key_a_new_id_and_renames_the_old_transcript_reset() {
    let Some((_tmp, dir)) =
        copy("a_reset_gives_the_key_a_new_id_and_renames_the_old_transcript_reset")
    else {
        return;
    };
    let old_bytes = read(&dir.join(format!("{MAIN}.jsonl")));
    let before = load(&dir);
    let old = before.get("agent:main:main").unwrap().clone();
    let mut plan = LifecyclePlan::new(before, NOW, Disposal::Archive).unwrap();
    assert!(matches!(
        plan.reset_row("agent:main:main", "../x"),
        Err(LifecycleError::BadSessionId { .. })
    ));
    plan.reset_row("agent:main:main", NEW_ID).unwrap();
    let report = plan.apply().unwrap();
    assert_eq!(
        report.rows[0].action,
        RowAction::Reset {
            new_session_id: NEW_ID.to_owned()
        }
    );
    assert_eq!(report.files.len(), 1);
    assert_eq!(
        report.files[0].to.as_deref(),
        Some(dir.join(format!("{MAIN}.jsonl.reset.{TS}")).as_path())
    );
    let after = load(&dir);
    let e = after.get("agent:main:main").unwrap();
    let num = |k: &str| e.fields().get(k).and_then(JsValue::as_f64);
    assert_eq!(e.session_id(), Some(NEW_ID));
    assert_eq!(num("updatedAt"), Some(NOW as f64));
    assert_eq!(num("sessionStartedAt"), Some(NOW as f64));
    assert_eq!(num("lastInteractionAt"), Some(NOW as f64));
    assert_eq!(num("totalTokens"), Some(0.0));
    assert_eq!(num("compactionCount"), Some(0.0));
    assert_eq!(
        e.fields().get("totalTokensFresh"),
        Some(&JsValue::Bool(true))
    );
    assert_eq!(e.fields().get("systemSent"), Some(&JsValue::Bool(false)));
    assert_eq!(e.session_file(), Some(format!("{NEW_ID}.jsonl").as_str()));
    let family: Vec<String> = e
        .fields()
        .get("usageFamilySessionIds")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_js_string().unwrap().to_str_lossy().into_owned())
        .collect();
    assert_eq!(
        family,
        vec!["00000001-0000-4000-8000-0c6110000000", MAIN, NEW_ID]
    );
    assert_eq!(
        e.fields().get_str("usageFamilyKey").as_deref(),
        Some("agent:main:main")
    );
    // The old fields in their places (the counters set where they were), the cleared ones
    // gone.
    let mut expected_fields = field_names(&old);
    expected_fields.retain(|f| {
        ![
            "modelProvider",
            "model",
            "inputTokens",
            "outputTokens",
            "contextTokens",
        ]
        .contains(&f.as_str())
    });
    assert_eq!(field_names(e), expected_fields);
    // Other rows untouched.
    assert_eq!(after.len(), 5);
    // The old transcript renamed with its bytes; no new transcript yet.
    assert_eq!(
        read(&dir.join(format!("{MAIN}.jsonl.reset.{TS}"))),
        old_bytes
    );
    assert!(!dir.join(format!("{MAIN}.jsonl")).exists());
    assert!(!dir.join(format!("{NEW_ID}.jsonl")).exists());
}

#[test]
fn a_transcript_another_row_shares_is_left_alone() {
    let Some((_tmp, dir)) = copy("a_transcript_another_row_shares_is_left_alone") else {
        return;
    };
    let mut store = load(&dir);
    let shared = store.get(GROUP_KEY).unwrap().clone();
    store.insert("agent:main:telegram:group:other", shared);
    store.save().unwrap();
    let transcript = dir.join(format!("{GROUP}.jsonl"));
    let bytes = read(&transcript);

    let mut plan = LifecyclePlan::new(load(&dir), NOW, Disposal::Archive).unwrap();
    plan.delete_row(GROUP_KEY).unwrap();
    let report = plan.apply().unwrap();
    assert!(report.files.is_empty());
    assert_eq!(report.left_alone.len(), 1);
    assert_eq!(report.left_alone[0].key.as_deref(), Some(GROUP_KEY));
    assert_eq!(
        report.left_alone[0].file.as_deref(),
        Some(transcript.as_path())
    );
    assert_eq!(
        report.left_alone[0].reason,
        LeftAloneReason::SharedWith {
            keys: vec!["agent:main:telegram:group:other".to_owned()]
        }
    );
    assert_eq!(read(&transcript), bytes);
    let after = load(&dir);
    assert!(after.get(GROUP_KEY).is_none());
    assert_eq!(
        after
            .get("agent:main:telegram:group:other")
            .unwrap()
            .session_id(),
        Some(GROUP)
    );
    assert!(!dir.join("sessions-audit.log").exists());
}

#[test]
fn a_missing_transcript_and_an_orphan() {
    let Some((_tmp, dir)) = copy("a_missing_transcript_and_an_orphan") else {
        return;
    };
    let mut plan = LifecyclePlan::new(load(&dir), NOW, Disposal::Archive).unwrap();
    plan.delete_row("agent:main:subagent:research-1").unwrap();
    plan.discard_file(&dir.join(format!("{ORPHAN}.jsonl")));
    let report = plan.apply().unwrap();
    assert_eq!(report.left_alone.len(), 1);
    assert_eq!(report.left_alone[0].reason, LeftAloneReason::Missing);
    assert_eq!(
        report.left_alone[0].file.as_deref(),
        Some(
            dir.join("0000001f-0000-4000-8000-0c6110000000.jsonl")
                .as_path()
        )
    );
    assert_eq!(report.files.len(), 1);
    assert_eq!(report.files[0].reason, "orphan");
    assert_eq!(report.files[0].session_id, ORPHAN);
    assert!(dir.join(format!("{ORPHAN}.jsonl.deleted.{TS}")).is_file());
    assert!(!dir.join(format!("{ORPHAN}.jsonl")).exists());
    assert_eq!(load(&dir).len(), 4);

    // An orphan alone leaves the store's bytes (and mtime) as they are.
    let store_bytes = read(&dir.join("sessions.json"));
    let mtime = std::fs::metadata(dir.join("sessions.json"))
        .unwrap()
        .modified()
        .unwrap();
    plant(&dir.join("stray.jsonl"), b"{}\n");
    let mut plan = LifecyclePlan::new(load(&dir), NOW, Disposal::Purge).unwrap();
    plan.discard_file(&dir.join("stray.jsonl"));
    let report = plan.apply().unwrap();
    assert!(!report.store_written);
    assert_eq!(report.files[0].to, None);
    assert!(!dir.join("stray.jsonl").exists());
    assert_eq!(read(&dir.join("sessions.json")), store_bytes);
    assert_eq!(
        std::fs::metadata(dir.join("sessions.json"))
            .unwrap()
            .modified()
            .unwrap(),
        mtime
    );
}

#[test]
fn a_concurrent_change_of_the_store_refuses_the_write_and_renames_nothing() {
    let Some((_tmp, dir)) =
        copy("a_concurrent_change_of_the_store_refuses_the_write_and_renames_nothing")
    else {
        return;
    };
    let mut plan = LifecyclePlan::new(load(&dir), NOW, Disposal::Archive).unwrap();
    plan.delete_row(CRON_KEY).unwrap();
    // Another writer (the gateway) saves the store between our load and our save.
    let theirs = b"{\n  \"agent:main:main\": {\n    \"sessionId\": \"00000026-0000-4000-8000-0c6110000000\",\n    \"updatedAt\": 1781269200000\n  }\n}";
    session_store::io::atomic_rewrite(&dir.join("sessions.json"), theirs).unwrap();
    let err = plan.apply().unwrap_err();
    assert!(
        matches!(err, LifecycleError::Store(SessionStoreError::Changed { ref path }) if *path == dir.join("sessions.json")),
        "{err:?}"
    );
    assert_eq!(read(&dir.join("sessions.json")), theirs);
    assert!(dir.join(format!("{CRON}.jsonl")).is_file());
    assert!(!dir.join(format!("{CRON}.jsonl.deleted.{TS}")).exists());
    assert!(!dir.join("sessions-audit.log").exists());
}

#[test]
fn an_unknown_key_is_an_error_naming_it() {
    let Some((_tmp, dir)) = copy("an_unknown_key_is_an_error_naming_it") else {
        return;
    };
    let mut plan = LifecyclePlan::new(load(&dir), NOW, Disposal::Archive).unwrap();
    let err = plan.delete_row("agent:main:nope").unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "no row \"agent:main:nope\" in {}",
            dir.join("sessions.json").display()
        )
    );
}

/// Points the row under `key` at `file` through an absolute `sessionFile`.
fn point_at(dir: &Path, key: &str, file: &Path) {
    let mut store = load(dir);
    store.get_mut(key).unwrap().fields_mut().insert(
        "sessionFile",
        JsValue::String(session_format::json::JsString::new(
            file.to_string_lossy().into_owned(),
        )),
    );
    store.save().unwrap();
}

#[test]
fn a_transcript_of_another_store_is_never_renamed() {
    let Some((tmp, dir)) = copy("a_transcript_of_another_store_is_never_renamed") else {
        return;
    };
    let foreign_dir = tmp.path().join("other/agents/main/sessions");
    std::fs::create_dir_all(&foreign_dir).unwrap();
    let foreign = foreign_dir.join("x.jsonl");
    plant(&foreign, b"{\"type\":\"session\"}\n");
    point_at(&dir, CRON_KEY, &foreign);
    point_at(&dir, "agent:main:main", &foreign);

    // Delete: the row goes, the foreign file stays, with the reason.
    let mut plan = LifecyclePlan::new(load(&dir), NOW, Disposal::Archive).unwrap();
    plan.delete_row(CRON_KEY).unwrap();
    let report = plan.apply().unwrap();
    assert!(report.files.is_empty());
    assert_eq!(report.left_alone.len(), 1);
    assert_eq!(
        report.left_alone[0].file.as_deref(),
        Some(foreign.as_path())
    );
    assert_eq!(report.left_alone[0].reason, LeftAloneReason::OutsideStore);
    assert!(load(&dir).get(CRON_KEY).is_none());
    assert_eq!(read(&foreign), b"{\"type\":\"session\"}\n");
    assert!(
        !foreign
            .with_file_name(format!("x.jsonl.deleted.{TS}"))
            .exists()
    );
    assert!(!foreign_dir.join("x.jsonl.lock").exists());

    // Reset: the row gets a new id and a `sessionFile` inside the store.
    let mut plan = LifecyclePlan::new(load(&dir), NOW, Disposal::Archive).unwrap();
    plan.reset_row("agent:main:main", NEW_ID).unwrap();
    let report = plan.apply().unwrap();
    assert!(report.files.is_empty());
    assert_eq!(report.left_alone[0].reason, LeftAloneReason::OutsideStore);
    let after = load(&dir);
    let row = after.get("agent:main:main").unwrap();
    assert_eq!(row.session_id(), Some(NEW_ID));
    let new_file = format!("{NEW_ID}.jsonl");
    assert_eq!(row.session_file(), Some(new_file.as_str()));
    assert_eq!(
        after.transcript_of("agent:main:main"),
        Some(dir.join(&new_file))
    );
    assert_eq!(
        std::fs::read_dir(&foreign_dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect::<Vec<_>>(),
        vec!["x.jsonl".to_owned()]
    );
}

#[test]
fn a_transcript_linked_out_of_the_store_refuses_the_whole_plan() {
    let Some((tmp, dir)) = copy("a_transcript_linked_out_of_the_store_refuses_the_whole_plan")
    else {
        return;
    };
    let outside = tmp.path().join("elsewhere.jsonl");
    plant(&outside, b"{\"type\":\"session\"}\n");
    let transcript = dir.join(format!("{CRON}.jsonl"));
    std::fs::remove_file(&transcript).unwrap();
    std::os::unix::fs::symlink(&outside, &transcript).unwrap();
    let store_before = read(&dir.join("sessions.json"));

    let mut plan = LifecyclePlan::new(load(&dir), NOW, Disposal::Archive).unwrap();
    plan.delete_row(CRON_KEY).unwrap();
    let preview = plan.preview();
    assert_eq!(
        preview.left_alone[0].reason,
        LeftAloneReason::SymlinkOutOfStore {
            target: std::fs::canonicalize(&outside).unwrap()
        }
    );
    let err = plan.apply().unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{} is in use or cannot be locked (a symlink to {}, outside the store's directory); \
             nothing was changed",
            transcript.display(),
            std::fs::canonicalize(&outside).unwrap().display()
        )
    );
    assert_eq!(read(&dir.join("sessions.json")), store_before);
    assert!(
        std::fs::symlink_metadata(&transcript)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}
