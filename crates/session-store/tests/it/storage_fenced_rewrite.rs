//! Full rewrites on a storage shared by several gateways are fenced: another
//! gateway's append that lands between a rewrite's pre-check and its replace is acknowledged,
//! so it must not be dropped. [`MemStorage::replace_if`] refuses the stale replace, and the
//! manager re-reads, adopts the line and rewrites (the scenario is in `fence_common`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::Path;
use std::sync::Arc;

use session_store::{MemStorage, Storage};
use session_store::{Replace, SnapshotRead};

#[test]
fn an_append_between_check_and_replace_survives_a_rewrite_on_mem_storage() {
    let mem = Arc::new(MemStorage::new());
    crate::fence_common::acknowledged_append_survives_a_full_rewrite(
        mem,
        Path::new("/agents/main/sessions"),
    );
}

#[test]
fn a_rewrite_that_keeps_losing_the_race_on_mem_storage_gives_up_and_loses_nothing() {
    let mem = Arc::new(MemStorage::new());
    crate::fence_common::a_rewrite_that_keeps_losing_the_race_gives_up_and_loses_nothing(
        mem,
        Path::new("/agents/main/sessions"),
    );
}

#[test]
fn mem_storage_replaces_only_the_expected_session() {
    let mem = MemStorage::new();
    let path = Path::new("/s/a.jsonl");
    mem.ensure_dir(Path::new("/s")).unwrap();
    // Absent expected: refused once something is there.
    assert_eq!(mem.replace_if(path, b"one\n", None).unwrap(), Replace::Done);
    assert_eq!(
        mem.replace_if(path, b"two\n", None).unwrap(),
        Replace::Refused
    );
    let SnapshotRead::Read { bytes, snapshot } = mem.read_snapshot(path).unwrap() else {
        panic!("stored")
    };
    assert_eq!(bytes, b"one\n");
    assert_eq!(snapshot.size, 4);
    mem.append_raw(path, b"x\n").unwrap();
    assert_eq!(
        mem.replace_if(path, b"three\n", Some(&snapshot)).unwrap(),
        Replace::Refused
    );
    assert_eq!(mem.read_all(path).unwrap(), b"one\nx\n");
    let now = mem.stat(path).unwrap().unwrap();
    assert_eq!(
        mem.replace_if(path, b"three\n", Some(&now)).unwrap(),
        Replace::Done
    );
    assert_eq!(mem.read_all(path).unwrap(), b"three\n");
    let replaced = mem.stat(path).unwrap().unwrap();
    assert_ne!(replaced.ino, now.ino);
    assert!(mem.remove(path));
    assert_eq!(
        mem.replace_if(path, b"four\n", Some(&replaced)).unwrap(),
        Replace::Refused
    );
    assert_eq!(mem.read_snapshot(path).unwrap(), SnapshotRead::Missing);
}
