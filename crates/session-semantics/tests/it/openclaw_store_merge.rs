//! Entry-level writes merge a patch as the reference does (openclaw-store.md §3.1, R3.1–R3.4,
//! §9 cases 17 and 18): `updatedAt` is the max of the existing value, the patch's clamped to
//! now, and now (or the existing value under the preserve-activity policy); `sessionStartedAt`
//! stays for the same id and is reset for a new id; a new id rewrites `sessionFile` (plain,
//! `-topic-<t>` and fork names); a model change without a provider drops `modelProvider`; the
//! key order is the reference's. An entry write through a key stores under the normalised key
//! and removes the case variants, the newest variant's fields winning. Every expected value is
//! the reference's own output (tests/data/openclaw-store/merge-expected.json, made by
//! make-expected.mjs there).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::Path;

use pretty_assertions::assert_eq;
use session_format::json::{JsObject, JsValue, parse_value};
use session_semantics::openclaw_store::{
    SessionStore, StoreEntry, UpdatedAtPolicy, merge_entry_with, rewrite_session_file,
    to_pretty_json,
};

fn expected() -> JsObject {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/openclaw-store/merge-expected.json");
    match parse_value(&std::fs::read(&path).unwrap()).unwrap() {
        JsValue::Object(o) => o,
        other => panic!("{} holds {other:?}", path.display()),
    }
}

fn obj(v: &JsValue) -> JsObject {
    v.as_object().cloned().unwrap()
}

fn pretty(o: &JsObject) -> String {
    String::from_utf8(to_pretty_json(&JsValue::Object(o.clone()))).unwrap()
}

#[test]
fn merges_equal_the_references() {
    let data = expected();
    let merges = data.get("merges").unwrap().as_array().unwrap();
    assert_eq!(merges.len(), 17);
    for case in merges {
        let name = case.get("name").unwrap().as_str_lossy().unwrap();
        let existing = match case.get("existing").unwrap() {
            JsValue::Null => None,
            v => Some(StoreEntry::from_fields(obj(v))),
        };
        let policy = match case.get("policy").unwrap().as_str_lossy().unwrap().as_ref() {
            "preserve-activity" => UpdatedAtPolicy::PreserveActivity,
            _ => UpdatedAtPolicy::Touch,
        };
        #[allow(clippy::cast_possible_truncation)]
        let now = case.get("now").unwrap().as_f64().unwrap() as i64;
        let merged = merge_entry_with(
            existing.as_ref(),
            &obj(case.get("patch").unwrap()),
            now,
            policy,
            || panic!("{name}: every case names a sessionId"),
        );
        assert_eq!(
            pretty(merged.fields()),
            pretty(&obj(case.get("result").unwrap())),
            "case {name}"
        );
    }
}

#[test]
fn a_row_without_session_id_gets_a_fresh_one() {
    let merged = merge_entry_with(
        None,
        &JsObject::new(),
        1_000,
        UpdatedAtPolicy::Touch,
        || "fresh-id".to_owned(),
    );
    assert_eq!(
        pretty(merged.fields()),
        "{\n  \"sessionId\": \"fresh-id\",\n  \"updatedAt\": 1000,\n  \"sessionStartedAt\": 1000\n}"
    );
    // The default generator makes a v4 UUID, as `randomUUID`.
    let merged = session_semantics::openclaw_store::merge_entry(None, &JsObject::new(), 1_000);
    let id = merged.session_id().unwrap();
    assert_eq!((id.len(), &id[14..15]), (36, "4"), "{id}");
}

#[test]
fn session_file_rewrites_only_the_three_shapes() {
    assert_eq!(
        rewrite_session_file(" /d/old.jsonl ", "old", "new").as_deref(),
        Some("/d/new.jsonl")
    );
    assert_eq!(
        rewrite_session_file("old-topic-a%2Fb.jsonl", "old", "new").as_deref(),
        Some("new-topic-a%2Fb.jsonl")
    );
    assert_eq!(
        rewrite_session_file("2026-06-11T09-00-00+02_old.jsonl", "old", "new").as_deref(),
        Some("2026-06-11T09-00-00+02_new.jsonl")
    );
    // The timestamp's greedy `[\w-]+` takes underscores: `x_old` is not the id after it.
    assert_eq!(
        rewrite_session_file("2026-06-11T09_x_old.jsonl", "x_old", "new"),
        None
    );
    assert_eq!(
        rewrite_session_file("old.jsonl.reset.2026", "old", "new"),
        None
    );
    assert_eq!(rewrite_session_file("older.jsonl", "old", "new"), None);
    assert_eq!(rewrite_session_file("  ", "old", "new"), None);
}

#[test]
fn an_entry_write_stores_under_the_lowercase_key_and_drops_the_variants() {
    let data = expected();
    let upsert = data.get("upsert").unwrap();
    let tmp = session_test_support::tempdir();
    let path = tmp.path().join("sessions.json");
    session_store::io::create_new(&path, &to_pretty_json(upsert.get("before").unwrap()), None)
        .unwrap();
    let mut store = SessionStore::load(&path).unwrap();
    #[allow(clippy::cast_possible_truncation)]
    let now = upsert.get("now").unwrap().as_f64().unwrap() as i64;
    let key = store.upsert(
        &upsert.get("requested").unwrap().as_str_lossy().unwrap(),
        &obj(upsert.get("patch").unwrap()),
        now,
        UpdatedAtPolicy::Touch,
    );
    assert_eq!(key.as_deref(), Some("agent:main:telegram:direct:bob"));
    store.save().unwrap();
    assert_eq!(
        String::from_utf8(std::fs::read(&path).unwrap()).unwrap(),
        upsert.get("after").unwrap().as_str_lossy().unwrap()
    );
    // A key no row has: a new row, last, under the normalised key.
    let key = store.upsert(
        "agent:main:Discord:Group:G1",
        &obj(&parse_value(br#"{"sessionId":"g1","chatType":"group"}"#).unwrap()),
        now,
        UpdatedAtPolicy::Touch,
    );
    assert_eq!(key.as_deref(), Some("agent:main:discord:group:g1"));
    let keys: Vec<String> = store.entries().map(|(k, _)| k.to_string()).collect();
    assert_eq!(
        keys,
        [
            "agent:main:cron:job",
            "agent:main:slack:direct:amy",
            "agent:main:telegram:direct:bob",
            "agent:main:discord:group:g1"
        ]
    );
}
