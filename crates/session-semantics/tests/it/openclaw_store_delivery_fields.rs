//! Delivery fields are re-derived on load as the reference does (openclaw-store.md R2.14, §9
//! case 10): `channel:"slack"` alone gains `route`, `deliveryContext` and `lastChannel`;
//! legacy `last*` fields, a `route` and a `deliveryContext` are reconciled into one target
//! (channel names lowercased and aliases mapped, account ids canonicalised, thread ids
//! truncated, the `origin.threadId` fallback, an internal channel giving way to an external
//! delivery target, conflicting channels keeping the legacy one); a consistent row is left
//! alone; the pending-delivery fields are coerced to their types or removed. The expected text
//! is the reference's own load → save of the same input
//! (tests/data/openclaw-store/delivery-saved.json, made by make-load-save-expected.mjs).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::Path;

use pretty_assertions::assert_eq;
use session_semantics::openclaw_store::{LoadChange, SaveOutcome, SessionStore};

#[test]
fn delivery_fields_load_and_save_as_the_references() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/openclaw-store");
    let input = std::fs::read(data.join("delivery-input.json")).unwrap();
    let expected = std::fs::read_to_string(data.join("delivery-saved.json")).unwrap();
    let tmp = session_test_support::tempdir();
    let path = tmp.path().join("sessions.json");
    session_store::io::create_new(&path, &input, None).unwrap();
    let mut store = SessionStore::load(&path).unwrap();
    assert_eq!(store.save().unwrap(), SaveOutcome::Written);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
    // The consistent rows report no change; the cleaned store loads without one.
    let changed_keys: Vec<&str> = store
        .load_changes()
        .iter()
        .filter_map(|c| match c {
            LoadChange::ChangedField { key, .. } => Some(key.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        !changed_keys.contains(&"agent:main:stable"),
        "{changed_keys:?}"
    );
    assert!(
        !changed_keys.contains(&"agent:main:pending-ok"),
        "{changed_keys:?}"
    );
    let mut again = SessionStore::load(&path).unwrap();
    assert_eq!(again.load_changes(), []);
    assert_eq!(again.save().unwrap(), SaveOutcome::Unchanged);
}
