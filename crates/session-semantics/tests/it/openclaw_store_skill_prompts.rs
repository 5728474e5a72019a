//! Skill prompts as blobs (openclaw-store.md R2.16, R2.21, R2.25, §9 case 11): a load strips
//! `skillsSnapshot.resolvedSkills` and removes a snapshot whose `promptRef` names a missing
//! blob (or that has neither prompt nor ref); a save writes a prompt of 512 or more UTF-16
//! units as `promptRef` plus the blob `skills-prompts/sha256/<2>/<hash>.txt` (mode 0600) and
//! keeps a shorter one inline; a load puts the blob's text back as `prompt`. The expected
//! bytes are the reference's own (tests/data/openclaw-store/skills-expected.json, made by
//! make-skills-expected.mjs there).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, SystemTime};

use pretty_assertions::assert_eq;
use session_format::json::{JsObject, JsValue, parse_value};
use session_semantics::openclaw_store::{
    LoadChange, SaveOutcome, SessionStore, skill_prompt_blob_path, to_pretty_json,
};

fn expected() -> JsObject {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/openclaw-store/skills-expected.json");
    match parse_value(&std::fs::read(&path).unwrap()).unwrap() {
        JsValue::Object(o) => o,
        other => panic!("{} holds {other:?}", path.display()),
    }
}

fn text(o: &JsObject, field: &str) -> String {
    o.get(field).unwrap().as_str_lossy().unwrap().into_owned()
}

/// The entries in memory, as pretty JSON.
fn in_memory(store: &SessionStore) -> String {
    let mut top = JsObject::new();
    for (k, e) in store.entries() {
        top.insert(k.clone(), JsValue::Object(e.fields().clone()));
    }
    String::from_utf8(to_pretty_json(&JsValue::Object(top))).unwrap()
}

/// Every file below `dir` but `sessions.json`: relative path → (text, mode).
fn blobs(dir: &Path) -> Vec<(String, String, u32)> {
    let mut out = Vec::new();
    for rel in session_test_support::listing(dir) {
        let p = dir.join(&rel);
        if rel == "sessions.json" || p.is_dir() {
            continue;
        }
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        out.push((rel, std::fs::read_to_string(&p).unwrap(), mode));
    }
    out
}

#[test]
fn long_prompts_become_blobs_and_come_back() {
    let data = expected();
    let tmp = session_test_support::tempdir();
    let path = tmp.path().join("sessions.json");
    session_store::io::create_new(&path, text(&data, "input").as_bytes(), None).unwrap();
    let mut store = SessionStore::load(&path).unwrap();
    let changed = |key: &str, field| LoadChange::ChangedField {
        key: key.to_owned(),
        field,
    };
    assert_eq!(
        store.load_changes(),
        [
            changed("agent:main:a", "skillsSnapshot"),
            changed("agent:main:c", "skillsSnapshot"),
            changed("agent:main:d", "skillsSnapshot"),
        ]
    );
    assert_eq!(store.save().unwrap(), SaveOutcome::Written);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        text(&data, "saved")
    );
    let expected_blobs: Vec<(String, String, u32)> = data
        .get("blobs")
        .unwrap()
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            let v = v.as_object().unwrap();
            let mode = u32::from_str_radix(&text(v, "mode"), 8).unwrap();
            (k.to_string(), text(v, "text"), mode)
        })
        .collect();
    let mut expected_blobs = expected_blobs;
    expected_blobs.sort();
    assert_eq!(blobs(tmp.path()), expected_blobs);
    let reloaded = SessionStore::load(&path).unwrap();
    assert_eq!(reloaded.load_changes(), []);
    assert_eq!(in_memory(&reloaded), text(&data, "reloaded"));
}

#[test]
fn an_unchanged_save_still_touches_its_blobs_and_a_damaged_blob_drops_the_snapshot() {
    let data = expected();
    let tmp = session_test_support::tempdir();
    let path = tmp.path().join("sessions.json");
    session_store::io::create_new(&path, text(&data, "saved").as_bytes(), None).unwrap();
    let store = SessionStore::load(&path).unwrap();
    // No blob yet: the snapshots with a promptRef are dropped, as the reference does.
    let names: Vec<_> = store
        .entries()
        .filter(|(_, e)| e.fields().contains_key("skillsSnapshot"))
        .map(|(k, _)| k.to_string())
        .collect();
    assert_eq!(names, ["agent:main:b"]);
    // With the blobs in place, the saved text loads and saves unchanged.
    let tmp2 = session_test_support::tempdir();
    let path2 = tmp2.path().join("sessions.json");
    session_store::io::create_new(&path2, text(&data, "input").as_bytes(), None).unwrap();
    SessionStore::load(&path2).unwrap().save().unwrap();
    let hash = "8cdf3faf38c68d990f3e3e71cf981f7468bdc0660a5a824e16a30755090abc6a";
    let blob = skill_prompt_blob_path(tmp2.path(), hash).unwrap();
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    std::fs::File::open(&blob)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let before = std::fs::read(&path2).unwrap();
    let mut again = SessionStore::load(&path2).unwrap();
    assert_eq!(again.save().unwrap(), SaveOutcome::Unchanged);
    assert_eq!(std::fs::read(&path2).unwrap(), before);
    let touched = std::fs::metadata(&blob).unwrap().modified().unwrap();
    assert!(touched > old + Duration::from_secs(3600), "{touched:?}");
    // A blob whose bytes no longer hash to its name: the entry's snapshot is removed at load.
    let len = std::fs::metadata(&blob).unwrap().len() as usize;
    session_store::io::atomic_rewrite(&blob, "q".repeat(len).as_bytes()).unwrap();
    let damaged = SessionStore::load(&path2).unwrap();
    assert_eq!(
        damaged
            .get("agent:main:a")
            .unwrap()
            .fields()
            .contains_key("skillsSnapshot"),
        false
    );
    assert_eq!(
        damaged.load_changes(),
        [LoadChange::ChangedField {
            key: "agent:main:a".to_owned(),
            field: "skillsSnapshot"
        }]
    );
}
