//! `sessions repair LINK` never rewrites, backs up or locks a file outside the store root, even
//! when the symlink is re-pointed while the command runs (README, "Links out of the store";
//! docs/DEVIATIONS.md D29 (4)). The command must act on the file it checked, not resolve the
//! name a second time after the check.
//!
//! This is a race: a thread flips `L.jsonl` between a session inside the store and one outside
//! it while the command runs repeatedly. A command that resolves the name once (and writes
//! only through what it resolved) can never touch the outside file; one that checks, then
//! resolves again, rewrites it within a few runs. The same property is pinned
//! deterministically for the writes of `session_store::io` in
//! `crates/session-store/tests/it/link_swapped_during_write.rs`.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::support::*;

const DAY: i64 = 86_400_000;

#[test]
fn repair_through_a_link_swapped_mid_command_never_writes_outside_the_store() {
    let tmp = tempdir();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let store = base.join("store");
    let outside = base.join("outside");
    session_store::io::ensure_dir(&store).unwrap();
    session_store::io::ensure_dir(&outside).unwrap();
    let now = session_format::ids::now_ms();
    plant(&store.join("in.jsonl"), &session_bytes("in1", now - DAY));
    let victim = outside.join("victim.jsonl");
    let mut bytes = session_bytes("out1", now - DAY);
    bytes.extend_from_slice(b"not json\n");
    plant(&victim, &bytes);
    std::os::unix::fs::symlink("in.jsonl", store.join("L.jsonl")).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let stop = Arc::clone(&stop);
        let store = store.clone();
        let victim = victim.clone();
        std::thread::spawn(move || {
            let tmp_link = store.join("swap.tmp");
            let targets = [std::path::PathBuf::from("in.jsonl"), victim];
            let mut i = 0usize;
            while !stop.load(Ordering::Relaxed) {
                let _ = std::fs::remove_file(&tmp_link);
                std::os::unix::fs::symlink(&targets[i % 2], &tmp_link).unwrap();
                std::fs::rename(&tmp_link, store.join("L.jsonl")).unwrap();
                i += 1;
            }
        })
    };
    let link = store.join("L.jsonl").display().to_string();
    // Bounded by runs and by time (the unfixed command wrote outside within a few runs; a
    // slow machine only runs fewer of them, it never fails spuriously).
    let started = std::time::Instant::now();
    let mut changed_at = None;
    for i in 0..300 {
        if started.elapsed() > std::time::Duration::from_secs(2) {
            break;
        }
        let _ = run_in_timeout(&store, ["repair", &link, "--lock-timeout", "1s"]);
        if std::fs::read(&victim).unwrap() != bytes || dir_names(&outside) != ["victim.jsonl"] {
            changed_at = Some(i);
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    assert_eq!(
        changed_at,
        None,
        "a repair wrote outside the store; {} now holds {:?}",
        outside.display(),
        dir_names(&outside)
    );
    assert_eq!(std::fs::read(&victim).unwrap(), bytes);
    assert_eq!(dir_names(&outside), ["victim.jsonl"]);
}
