//! A requested key resolves to the stored entry the reference's `resolveSessionStoreEntry`
//! picks (openclaw-store.md §2.6, R2.17–R2.18): the normalised key, the winning stored key and
//! the legacy keys in the reference's order, for ordinary keys with case variants and
//! `updatedAt` ties, a trimmed raw key with spaces, Matrix room keys whose folded lowercase
//! aliases count only with a delivery-target proof (`deliveryContext.to`, `lastTo`,
//! `origin.nativeChannelId`, `origin.to`, `groupId`) and where the exact key wins, Matrix
//! thread keys with matching and mismatching thread ids, Signal group ids, and blank requests
//! (the key `""`, which matches stored blank keys). Every expected
//! value is the reference's own output (tests/data/openclaw-store/resolve-expected.json, made by
//! make-resolve-expected.mjs there); each stored entry's `marker` names its key.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::Path;

use pretty_assertions::assert_eq;
use session_format::json::{JsValue, parse_value};
use session_semantics::openclaw_store::{SessionStore, StoreEntry};

fn cases() -> Vec<JsValue> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/openclaw-store/resolve-expected.json");
    match parse_value(&std::fs::read(&path).unwrap()).unwrap() {
        JsValue::Array(a) => a,
        other => panic!("{} holds {other:?}", path.display()),
    }
}

fn text(v: &JsValue, field: &str) -> String {
    v.get(field).unwrap().as_str_lossy().unwrap().into_owned()
}

/// What our resolve gives, in the shape of an expected case's `normalizedKey`, `existingKey`
/// and `legacyKeys`.
type Outcome = (Option<String>, Option<String>, Vec<String>);

#[test]
fn resolution_equals_the_references() {
    let dir = session_test_support::tempdir();
    let path = dir.path().join("sessions.json");
    session_store::io::write_raw(&path, b"{}").unwrap();
    let cases = cases();
    assert_eq!(cases.len(), 43);
    let mut matrix_proofs = 0;
    for case in &cases {
        let mut store = SessionStore::load(&path).unwrap();
        for (key, entry) in case.get("store").unwrap().as_object().unwrap().iter() {
            let fields = entry.as_object().unwrap().clone();
            store.insert(&key.to_str_lossy(), StoreEntry::from_fields(fields));
        }
        let key = text(case, "key");
        let expected: Outcome = (
            Some(text(case, "normalizedKey")),
            case.get("existingKey")
                .unwrap()
                .as_str_lossy()
                .map(|k| k.into_owned()),
            case.get("legacyKeys")
                .unwrap()
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k.as_str_lossy().unwrap().into_owned())
                .collect(),
        );
        let ours: Outcome = match store.resolve(&key) {
            Some(hit) => {
                // The winner's marker is the key it is stored under.
                let marker = hit
                    .entry
                    .fields()
                    .get("marker")
                    .unwrap()
                    .as_str_lossy()
                    .unwrap();
                assert_eq!(marker, hit.stored_key);
                (
                    Some(hit.normalized_key),
                    Some(hit.stored_key),
                    hit.legacy_keys,
                )
            }
            // Nothing stored matched: the reference still reports its normalised key.
            None => (
                Some(session_semantics::key::normalize_session_key(&key)),
                None,
                Vec::new(),
            ),
        };
        assert_eq!(ours, expected, "{} {key:?}", text(case, "name"));
        if text(case, "name").starts_with("matrix") {
            matrix_proofs += 1;
        }
    }
    assert_eq!(matrix_proofs, 24);
}

#[test]
fn matrix_rooms_need_a_proof_and_signal_groups_do_not() {
    use session_semantics::key::requires_folded_alias_proof;
    assert!(requires_folded_alias_proof(
        "agent:main:matrix:channel:!RoomId:server"
    ));
    assert!(requires_folded_alias_proof(" MATRIX:Group:#a:b:thread:1 "));
    assert!(requires_folded_alias_proof(
        "agent::main:matrix::channel:!x"
    ));
    assert!(!requires_folded_alias_proof("agent:main:matrix:channel"));
    assert!(!requires_folded_alias_proof(
        "agent:main:matrix:direct:@u:s"
    ));
    assert!(!requires_folded_alias_proof("agent:main:signal:group:AbC="));
    assert!(!requires_folded_alias_proof("agent:main:matrix:channel: "));
    assert!(!requires_folded_alias_proof(""));
}
