//! OpenClaw's session store `sessions.json` (openclaw-store.md §1.2–§1.3, §2.3–§2.8): the
//! reference's fixture loads with its keys, session ids and transcript paths; re-serialising
//! it gives its exact bytes; an edit of one entry changes only that entry's bytes; a corrupt
//! or non-object file is a typed error with the byte offset and stays untouched; a change by
//! another writer between load and save is refused and kept; a new store file is 0600 and an
//! existing file keeps its mode; legacy fields are migrated and entries normalised as the
//! reference does; key resolution folds case and prefers the newest `updatedAt`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use session_format::json::{JsObject, JsString, JsValue, parse_value};
use session_semantics::openclaw_store::{
    LoadChange, SaveOutcome, SessionStore, SessionStoreError, StoreEntry, TopicId, to_pretty_json,
    transcript_file_name,
};

const MAIN_ID: &str = "00000026-0000-4000-8000-0c6110000000";
const GROUP_ID: &str = "0000000a-0000-4000-8000-0c6110000000";
const TOPIC_ID: &str = "00000013-0000-4000-8000-0c6110000000";
const CRON_ID: &str = "0000001a-0000-4000-8000-0c6110000000";
const SUBAGENT_ID: &str = "0000001f-0000-4000-8000-0c6110000000";

/// The fixture's `sessions.json`, or `None` after a printed SKIP.
fn fixture_store(test: &str) -> Option<PathBuf> {
    let shared = session_test_support::shared_dir(test)?;
    Some(shared.join("fixtures/openclaw-6.11-store/agents/main/sessions/sessions.json"))
}

/// A copy of the fixture's `sessions.json` in a fresh directory.
fn fixture_copy(test: &str) -> Option<(tempfile::TempDir, PathBuf)> {
    let src = fixture_store(test)?;
    let dir = session_test_support::tempdir();
    let dst = dir.path().join("sessions.json");
    std::fs::copy(&src, &dst).unwrap();
    Some((dir, dst))
}

/// Plants a test input (`session_store::io::write_raw`: an atomic replace or create).
fn write(path: &Path, bytes: impl AsRef<[u8]>) {
    session_store::io::write_raw(path, bytes.as_ref()).unwrap();
}

fn entry(json: &str) -> StoreEntry {
    match parse_value(json.as_bytes()).unwrap() {
        JsValue::Object(o) => StoreEntry::from_fields(o),
        other => panic!("not an object: {other:?}"),
    }
}

fn keys(store: &SessionStore) -> Vec<String> {
    store
        .entries()
        .map(|(k, _)| k.to_str_lossy().into_owned())
        .collect()
}

#[test]
fn fixture_loads_with_its_keys_ids_and_transcripts() {
    let Some(path) = fixture_store("fixture_loads_with_its_keys_ids_and_transcripts") else {
        return;
    };
    let store = SessionStore::load(&path).unwrap();
    assert_eq!(
        keys(&store),
        [
            "agent:main:main",
            "agent:main:telegram:group:-1001234567890",
            "agent:main:telegram:group:-1001234567890:topic:42",
            "agent:main:cron:daily-digest:run:run-0001",
            "agent:main:subagent:research-1",
        ]
    );
    let ids: Vec<_> = store
        .entries()
        .map(|(_, e)| e.session_id().unwrap())
        .collect();
    assert_eq!(ids, [MAIN_ID, GROUP_ID, TOPIC_ID, CRON_ID, SUBAGENT_ID]);
    let updated: Vec<_> = store
        .entries()
        .map(|(_, e)| e.updated_at().unwrap())
        .collect();
    assert_eq!(
        updated,
        [
            1781255160000.0,
            1781175840000.0,
            1781179320000.0,
            1781182920000.0,
            1781186400000.0
        ]
    );
    let files: Vec<_> = store.entries().map(|(_, e)| e.session_file()).collect();
    assert_eq!(
        files,
        [
            Some("00000026-0000-4000-8000-0c6110000000.jsonl"),
            None,
            Some("00000013-0000-4000-8000-0c6110000000-topic-42.jsonl"),
            Some("0000001a-0000-4000-8000-0c6110000000.jsonl"),
            None,
        ]
    );
    assert_eq!(store.load_changes(), &[] as &[LoadChange]);
    let dir = path.parent().unwrap();
    let main = store.get("agent:main:main").unwrap();
    assert_eq!(main.fields().len(), 24);
    assert_eq!(
        main.fields().get_str("lastTo").as_deref(),
        Some("telegram:12345")
    );
    // key → sessionId → transcript (R1.6, R1.11): `sessionFile` wins; without it, `<id>.jsonl`.
    let transcripts: Vec<_> = keys(&store)
        .iter()
        .map(|k| store.transcript_of(k).unwrap())
        .collect();
    assert_eq!(
        transcripts,
        [
            dir.join("00000026-0000-4000-8000-0c6110000000.jsonl"),
            dir.join("0000000a-0000-4000-8000-0c6110000000.jsonl"),
            dir.join("00000013-0000-4000-8000-0c6110000000-topic-42.jsonl"),
            dir.join("0000001a-0000-4000-8000-0c6110000000.jsonl"),
            dir.join("0000001f-0000-4000-8000-0c6110000000.jsonl"),
        ]
    );
    // The fixture's transcripts exist, except the subagent's (the README says it is missing).
    let exists: Vec<_> = transcripts.iter().map(|p| p.is_file()).collect();
    assert_eq!(exists, [true, true, true, true, false]);
}

#[test]
fn fixture_reserialises_to_its_exact_bytes() {
    let Some((_dir, path)) = fixture_copy("fixture_reserialises_to_its_exact_bytes") else {
        return;
    };
    let original = std::fs::read(&path).unwrap();
    assert_eq!(
        original.last(),
        Some(&b'}'),
        "the reference writes no trailing newline"
    );
    let mut store = SessionStore::load(&path).unwrap();
    assert_eq!(
        String::from_utf8(store.to_bytes()).unwrap(),
        String::from_utf8(original.clone()).unwrap()
    );
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    assert_eq!(store.save().unwrap(), SaveOutcome::Unchanged);
    assert_eq!(std::fs::read(&path).unwrap(), original);
    assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), mtime);
}

#[test]
fn editing_one_entry_changes_only_its_bytes() {
    let Some((_dir, path)) = fixture_copy("editing_one_entry_changes_only_its_bytes") else {
        return;
    };
    let original = String::from_utf8(std::fs::read(&path).unwrap()).unwrap();
    let mut store = SessionStore::load(&path).unwrap();
    let cron = store
        .get_mut("agent:main:cron:daily-digest:run:run-0001")
        .unwrap();
    cron.set_updated_at(1781190000000.0);
    cron.fields_mut()
        .insert("label", JsValue::String(JsString::new("Cron: renamed")));
    assert_eq!(store.save().unwrap(), SaveOutcome::Written);
    let old_part = "    \"updatedAt\": 1781182920000,\n    \"sessionStartedAt\": 1781182800000,\n    \"label\": \"Cron: daily-digest\",";
    let new_part = "    \"updatedAt\": 1781190000000,\n    \"sessionStartedAt\": 1781182800000,\n    \"label\": \"Cron: renamed\",";
    assert_eq!(original.matches(old_part).count(), 1);
    let expected = original.replace(old_part, new_part);
    assert_eq!(
        String::from_utf8(std::fs::read(&path).unwrap()).unwrap(),
        expected
    );
    // A second save of the same state writes nothing; a reload sees the edit.
    assert_eq!(store.save().unwrap(), SaveOutcome::Unchanged);
    let again = SessionStore::load(&path).unwrap();
    let cron = again
        .get("agent:main:cron:daily-digest:run:run-0001")
        .unwrap();
    assert_eq!(cron.updated_at(), Some(1781190000000.0));
}

#[test]
fn corrupt_store_is_an_error_with_the_offset_and_stays_untouched() {
    let dir = session_test_support::tempdir();
    let path = dir.path().join("sessions.json");
    let corrupt = b"{\n  \"agent:main:main\": {not json\n}";
    write(&path, corrupt);
    match SessionStore::load(&path) {
        Err(SessionStoreError::Corrupt {
            path: p, offset, ..
        }) => {
            assert_eq!(p, path);
            assert_eq!(offset, 24);
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    let err = SessionStore::load(&path).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "session store {} is not valid JSON: expected an object key at byte 24",
            path.display()
        )
    );
    assert_eq!(std::fs::read(&path).unwrap(), corrupt);

    write(&path, b"");
    assert!(matches!(
        SessionStore::load(&path),
        Err(SessionStoreError::Corrupt { offset: 0, .. })
    ));
    write(&path, b"[1,2]");
    match SessionStore::load(&path) {
        Err(SessionStoreError::NotAnObject { found, .. }) => assert_eq!(found, "an array"),
        other => panic!("expected NotAnObject, got {other:?}"),
    }
    assert_eq!(std::fs::read(&path).unwrap(), b"[1,2]");
    assert_eq!(
        session_test_support::dir_names(dir.path()),
        ["sessions.json"]
    );
}

#[test]
fn a_change_between_load_and_save_is_refused_and_kept() {
    let Some((_dir, path)) = fixture_copy("a_change_between_load_and_save_is_refused_and_kept")
    else {
        return;
    };
    let mut ours = SessionStore::load(&path).unwrap();
    let mut theirs = SessionStore::load(&path).unwrap();
    theirs.remove("agent:main:subagent:research-1");
    assert_eq!(theirs.save().unwrap(), SaveOutcome::Written);
    let theirs_bytes = std::fs::read(&path).unwrap();

    ours.get_mut("agent:main:main")
        .unwrap()
        .set_updated_at(1781260000000.0);
    match ours.save() {
        Err(SessionStoreError::Changed { path: p }) => assert_eq!(p, path),
        other => panic!("expected Changed, got {other:?}"),
    }
    assert_eq!(std::fs::read(&path).unwrap(), theirs_bytes);

    // The caller reloads and applies its change again: both changes are in the file.
    let mut ours = SessionStore::load(&path).unwrap();
    ours.get_mut("agent:main:main")
        .unwrap()
        .set_updated_at(1781260000000.0);
    assert_eq!(ours.save().unwrap(), SaveOutcome::Written);
    let merged = SessionStore::load(&path).unwrap();
    assert_eq!(merged.len(), 4);
    assert_eq!(merged.get("agent:main:subagent:research-1"), None);
    assert_eq!(
        merged.get("agent:main:main").unwrap().updated_at(),
        Some(1781260000000.0)
    );

    // A same-size change (one digit of a number) is seen too: the other writer replaced the file.
    let mut ours = SessionStore::load(&path).unwrap();
    let mut theirs = SessionStore::load(&path).unwrap();
    let before = std::fs::metadata(&path).unwrap().len();
    theirs
        .get_mut("agent:main:main")
        .unwrap()
        .set_updated_at(1781260000001.0);
    assert_eq!(theirs.save().unwrap(), SaveOutcome::Written);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), before);
    let theirs_bytes = std::fs::read(&path).unwrap();
    ours.remove("agent:main:cron:daily-digest:run:run-0001");
    assert!(matches!(
        ours.save(),
        Err(SessionStoreError::Changed { .. })
    ));
    assert_eq!(std::fs::read(&path).unwrap(), theirs_bytes);

    // A store loaded while the file was absent refuses when someone created it meanwhile.
    let dir = session_test_support::tempdir();
    let fresh = dir.path().join("sessions.json");
    let mut absent = SessionStore::load(&fresh).unwrap();
    write(&fresh, b"{}");
    absent.insert(
        "agent:main:main",
        entry(r#"{"sessionId":"s1","updatedAt":1}"#),
    );
    assert!(matches!(
        absent.save(),
        Err(SessionStoreError::Changed { .. })
    ));
    assert_eq!(std::fs::read(&fresh).unwrap(), b"{}");
}

#[test]
fn new_store_is_0600_and_an_existing_store_keeps_its_mode() {
    let dir = session_test_support::tempdir();
    let path = dir.path().join("agents/main/sessions/sessions.json");
    let mut store = SessionStore::load(&path).unwrap();
    assert!(store.is_empty());
    store.insert(
        "agent:main:main",
        entry(r#"{"sessionId":"s1","updatedAt":1781255160000,"tags":[],"meta":{}}"#),
    );
    assert_eq!(store.save().unwrap(), SaveOutcome::Written);
    assert_eq!(
        String::from_utf8(std::fs::read(&path).unwrap()).unwrap(),
        "{\n  \"agent:main:main\": {\n    \"sessionId\": \"s1\",\n    \"updatedAt\": 1781255160000,\n    \"tags\": [],\n    \"meta\": {}\n  }\n}"
    );
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode(&path), 0o600);

    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    let mut store = SessionStore::load(&path).unwrap();
    store
        .get_mut("agent:main:main")
        .unwrap()
        .set_updated_at(2.0);
    assert_eq!(store.save().unwrap(), SaveOutcome::Written);
    assert_eq!(mode(&path), 0o640);
    assert_eq!(
        session_test_support::dir_names(path.parent().unwrap()),
        ["sessions.json"]
    );
}

#[test]
fn legacy_fields_are_migrated_and_entries_normalised() {
    let dir = session_test_support::tempdir();
    let path = dir.path().join("sessions.json");
    let text = r##"{"a":{"sessionId":" s-a ","provider":"slack","room":"#r","groupChannel":"#g","updatedAt":"yesterday","x":1},
"b":"not an entry",
"c":{"sessionId":"../evil","updatedAt":5},
"d":{"sessionId":"a:b@c","updatedAt":6,"lastProvider":"telegram","model":"  ","modelProvider":"openai"},
"e":{"sessionId":"e1","sessionFile":7,"model":" m ","modelProvider":" p ","skillsSnapshot":{"resolvedSkills":[1],"prompt":"p","version":2}}}"##;
    write(&path, text);
    let store = SessionStore::load(&path).unwrap();
    assert_eq!(keys(&store), ["a", "d", "e"]);
    let changed = |key: &str, field| LoadChange::ChangedField {
        key: key.into(),
        field,
    };
    let dropped = |key: &str| LoadChange::DroppedEntry { key: key.into() };
    assert_eq!(
        store.load_changes(),
        &[
            changed("a", "provider"),
            changed("a", "room"),
            changed("a", "sessionId"),
            changed("a", "updatedAt"),
            changed("a", "route"),
            dropped("b"),
            dropped("c"),
            changed("d", "lastProvider"),
            changed("d", "sessionId"),
            changed("d", "model"),
            changed("d", "route"),
            changed("e", "sessionFile"),
            changed("e", "model"),
            changed("e", "modelProvider"),
            changed("e", "skillsSnapshot"),
        ]
    );
    assert_eq!(
        String::from_utf8(store.to_bytes()).unwrap(),
        r##"{
  "a": {
    "sessionId": "s-a",
    "groupChannel": "#g",
    "updatedAt": 0,
    "x": 1,
    "channel": "slack",
    "route": {
      "channel": "slack"
    },
    "deliveryContext": {
      "channel": "slack"
    },
    "lastChannel": "slack"
  },
  "d": {
    "updatedAt": 6,
    "lastChannel": "telegram",
    "route": {
      "channel": "telegram"
    },
    "deliveryContext": {
      "channel": "telegram"
    }
  },
  "e": {
    "sessionId": "e1",
    "model": "m",
    "modelProvider": "p",
    "skillsSnapshot": {
      "prompt": "p",
      "version": 2
    }
  }
}"##
    );
    // Read-only: loading wrote nothing.
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

#[test]
fn key_resolution_folds_case_and_prefers_the_newest_entry() {
    let dir = session_test_support::tempdir();
    let path = dir.path().join("sessions.json");
    write(
        &path,
        r#"{"agent:main:Telegram:Direct:Bob":{"sessionId":"old","updatedAt":20},
"agent:main:telegram:direct:bob":{"sessionId":"new","updatedAt":10},
"agent:main:other":{"sessionId":"o","updatedAt":30}}"#,
    );
    let store = SessionStore::load(&path).unwrap();
    let hit = store.resolve("  agent:main:TELEGRAM:direct:bob ").unwrap();
    assert_eq!(hit.normalized_key, "agent:main:telegram:direct:bob");
    assert_eq!(hit.stored_key, "agent:main:Telegram:Direct:Bob");
    assert_eq!(hit.entry.session_id(), Some("old"));
    assert_eq!(hit.legacy_keys, ["agent:main:Telegram:Direct:Bob"]);
    assert_eq!(store.resolve("agent:main:nobody"), None);
    assert_eq!(store.resolve("   "), None);
}

#[test]
fn transcript_names_and_session_file_overrides() {
    assert_eq!(transcript_file_name("s1", None), "s1.jsonl");
    assert_eq!(
        transcript_file_name("s1", Some(&TopicId::Number(42))),
        "s1-topic-42.jsonl"
    );
    assert_eq!(
        transcript_file_name("s1", Some(&TopicId::Text("a b/c~é".into()))),
        "s1-topic-a%20b%2Fc~%C3%A9.jsonl"
    );
    let dir = Path::new("/state/agents/main/sessions");
    let resolve = |file: &str, id: &str| {
        let e = entry(&format!(r#"{{"sessionId":{id:?},"sessionFile":{file:?}}}"#));
        session_semantics::openclaw_store::transcript_path(dir, id, &e)
    };
    assert_eq!(
        resolve("archive/x.jsonl", "s1"),
        Some(dir.join("archive/x.jsonl"))
    );
    assert_eq!(resolve("  ", "s1"), Some(dir.join("s1.jsonl")));
    assert_eq!(resolve("../../x.jsonl", "s1"), Some(dir.join("s1.jsonl")));
    assert_eq!(
        resolve("/state/agents/main/sessions/y.jsonl", "s1"),
        Some(dir.join("y.jsonl"))
    );
    // The structural fallback: another root's `…/agents/<id>/sessions/<file>` is kept as is.
    assert_eq!(
        resolve("/old/agents/main/sessions/z.jsonl", "s1"),
        Some(PathBuf::from("/old/agents/main/sessions/z.jsonl"))
    );
    assert_eq!(resolve("/etc/passwd", "s1"), Some(dir.join("s1.jsonl")));
    assert_eq!(
        resolve(
            "/state/agents/main/sessions/../../x/agents/a/sessions/f.jsonl",
            "s1"
        ),
        Some(dir.join("s1.jsonl"))
    );
    assert_eq!(resolve("/etc/passwd", "a:b"), None);
}

#[test]
fn pretty_json_matches_json_stringify_with_two_spaces() {
    let value =
        parse_value(br#"{"a":[1,{"b":null},[]],"c":{},"d":"\u2028\"","e":1e21,"f":-0}"#).unwrap();
    assert_eq!(
        String::from_utf8(to_pretty_json(&value)).unwrap(),
        "{\n  \"a\": [\n    1,\n    {\n      \"b\": null\n    },\n    []\n  ],\n  \"c\": {},\n  \"d\": \"\u{2028}\\\"\",\n  \"e\": 1e+21,\n  \"f\": 0\n}"
    );
    assert_eq!(to_pretty_json(&JsValue::Object(JsObject::new())), b"{}");
}

/// Another writer that saves the store after our temporary file is written and synced, right
/// before our rename, is seen: our save is refused, theirs stays, no temporary file is left.
#[test]
fn a_change_while_the_new_store_is_written_is_refused_and_kept() {
    let Some((_dir, path)) =
        fixture_copy("a_change_while_the_new_store_is_written_is_refused_and_kept")
    else {
        return;
    };
    let mut ours = SessionStore::load(&path).unwrap();
    ours.remove("agent:main:cron:daily-digest:run:run-0001");
    let theirs_bytes: &[u8] =
        b"{\n  \"agent:main:main\": {\n    \"sessionId\": \"x\",\n    \"updatedAt\": 1\n  }\n}";
    let dir = path.parent().unwrap().to_path_buf();
    let mut temps_seen = Vec::new();
    let result = ours.save_with_hook(&mut || {
        temps_seen = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".sessions.json.") && n.ends_with(".tmp"))
            .collect();
        session_store::io::atomic_rewrite(&path, theirs_bytes).unwrap();
    });
    match result {
        Err(SessionStoreError::Changed { path: p }) => assert_eq!(p, path),
        other => panic!("expected Changed, got {other:?}"),
    }
    // The hook ran while our temporary file existed, written in full.
    assert_eq!(temps_seen.len(), 1, "{temps_seen:?}");
    assert_eq!(std::fs::read(&path).unwrap(), theirs_bytes);
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert_eq!(left, Vec::<String>::new());
}
