//! Plugin state in store entries is cleaned on load as the reference does (openclaw-store.md
//! R2.15): `pluginExtensions` and `pluginExtensionSlotKeys` keys are trimmed, empty keys,
//! non-object and emptied groups dropped, values over the plugin JSON limits (64 Ki-unit
//! strings, nesting over 32) dropped, slot keys that are not identifiers or are SessionEntry
//! or `Object.prototype` names dropped, and a field left empty or not an object removed. The
//! expected text is the reference's own load → save of the same input
//! (tests/data/openclaw-store/plugin-state-saved.json, made by make-load-save-expected.mjs).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::Path;

use pretty_assertions::assert_eq;
use session_semantics::openclaw_store::{LoadChange, SaveOutcome, SessionStore};

#[test]
fn plugin_state_loads_and_saves_as_the_references() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/openclaw-store");
    let input = std::fs::read(data.join("plugin-state-input.json")).unwrap();
    let expected = std::fs::read_to_string(data.join("plugin-state-saved.json")).unwrap();
    let tmp = session_test_support::tempdir();
    let path = tmp.path().join("sessions.json");
    session_store::io::create_new(&path, &input, None).unwrap();
    let mut store = SessionStore::load(&path).unwrap();
    let changed = |key: &str, field| LoadChange::ChangedField {
        key: key.to_owned(),
        field,
    };
    assert_eq!(
        store.load_changes(),
        [
            changed("agent:main:trim", "pluginExtensions"),
            changed("agent:main:slots", "pluginExtensionSlotKeys"),
            changed("agent:main:notobject", "pluginExtensions"),
            changed("agent:main:notobject", "pluginExtensionSlotKeys"),
            changed("agent:main:allgone", "pluginExtensions"),
            changed("agent:main:deep", "pluginExtensions"),
        ]
    );
    assert_eq!(store.save().unwrap(), SaveOutcome::Written);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
    // The cleaned store loads without a change and saves nothing.
    let mut again = SessionStore::load(&path).unwrap();
    assert_eq!(again.load_changes(), []);
    assert_eq!(again.save().unwrap(), SaveOutcome::Unchanged);
}
