//! `fsops::move_file` never replaces a destination, even when two movers race for it (archive
//! runs, resets and forks of several processes choosing the same free archive name). It used to
//! check for the destination and then `rename`, and about 3 % of two-thread races ended with
//! both moves "succeeding" and the first file silently replaced.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::sync::{Arc, Barrier};

use session_semantics::fsops::move_file;

#[test]
fn an_existing_destination_is_never_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let (a, d) = (dir.path().join("a.jsonl"), dir.path().join("d.jsonl"));
    session_store::io::write_raw(&a, b"A\n").unwrap();
    session_store::io::write_raw(&d, b"D\n").unwrap();
    let err = move_file(&a, &d).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
    assert_eq!(err.to_string(), format!("{} already exists", d.display()));
    assert_eq!(std::fs::read(&a).unwrap(), b"A\n");
    assert_eq!(std::fs::read(&d).unwrap(), b"D\n");
    // A plain move: the source is gone, the destination holds its bytes (same inode).
    let b = dir.path().join("b.jsonl");
    #[cfg(unix)]
    let ino = {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(&a).unwrap().ino()
    };
    move_file(&a, &b).unwrap();
    assert!(!a.exists());
    assert_eq!(std::fs::read(&b).unwrap(), b"A\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(&b).unwrap();
        assert_eq!((meta.ino(), meta.nlink()), (ino, 1));
    }
    let err = move_file(
        &dir.path().join("missing.jsonl"),
        &dir.path().join("x.jsonl"),
    );
    assert_eq!(err.unwrap_err().kind(), std::io::ErrorKind::NotFound);
    assert!(!dir.path().join("x.jsonl").exists());
}

#[test]
fn two_movers_racing_for_one_destination_never_both_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let mut both = 0;
    for i in 0..500 {
        let a = dir.path().join(format!("a{i}.jsonl"));
        let b = dir.path().join(format!("b{i}.jsonl"));
        let d = dir.path().join(format!("d{i}.jsonl"));
        session_store::io::write_raw(&a, b"A\n").unwrap();
        session_store::io::write_raw(&b, b"B\n").unwrap();
        let barrier = Arc::new(Barrier::new(2));
        let (a2, d2, barrier2) = (a.clone(), d.clone(), Arc::clone(&barrier));
        let other = std::thread::spawn(move || {
            barrier2.wait();
            move_file(&a2, &d2).is_ok()
        });
        barrier.wait();
        let moved_b = move_file(&b, &d).is_ok();
        let moved_a = other.join().unwrap();
        if moved_a && moved_b {
            both += 1;
            continue;
        }
        // Exactly one moved; the other file is still at its source.
        assert!(moved_a || moved_b, "round {i}: neither moved");
        let (winner, loser, loser_bytes) = if moved_a {
            (b"A\n", &b, b"B\n")
        } else {
            (b"B\n", &a, b"A\n")
        };
        assert_eq!(std::fs::read(&d).unwrap(), winner);
        assert_eq!(std::fs::read(loser).unwrap(), loser_bytes);
    }
    assert_eq!(both, 0, "rounds where a file was replaced");
}
