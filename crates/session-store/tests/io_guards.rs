//! Reads refuse anything that is not a regular file: a FIFO would block the open forever and a
//! device such as `/dev/zero` would be read without end (reported by the CLI review: `list` hung
//! on a FIFO named `*.jsonl`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::io::ErrorKind;

use session_store::SessionManager;

#[cfg(unix)]
#[test]
fn fifos_and_devices_are_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.jsonl");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        session_test_support::skip(
            "fifos_and_devices_are_refused_without_blocking",
            "mkfifo is not available",
        );
        return;
    }
    let zero = dir.path().join("zero.jsonl");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    for path in [&fifo, &zero] {
        let err = session_store::io::read_file(path).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{}", path.display());
        assert!(session_store::io::read_first_line(path).is_err());
        assert!(SessionManager::open_read_only(path, None).is_err());
    }
    assert_eq!(
        session_store::io::read_file(&fifo).unwrap_err().to_string(),
        "not a regular file (a FIFO)"
    );
    assert_eq!(
        session_store::io::read_file(&zero).unwrap_err().to_string(),
        "not a regular file (a device)"
    );
    // A directory listing skips them instead of hanging.
    let listed = SessionManager::list(dir.path().to_str().unwrap(), Some(dir.path())).unwrap();
    assert!(listed.is_empty());
}

/// Writes never replace or extend anything but a regular file: the CLI review saw a rewrite
/// rename a file over `/dev/null` (as root). Checked here on a FIFO, which would also block an
/// open for writing.
#[cfg(unix)]
#[test]
fn writes_refuse_fifos_and_devices() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("out.jsonl");
    if !std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success())
    {
        session_test_support::skip("writes_refuse_fifos_and_devices", "mkfifo is not available");
        return;
    }
    let err = session_store::io::atomic_rewrite(&fifo, b"x\n").unwrap_err();
    assert_eq!(err.to_string(), "not a regular file (a FIFO)");
    let err = session_store::io::append_line(&fifo, b"{}", session_store::io::Durability::Buffer)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    use std::os::unix::fs::FileTypeExt;
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    // A symlink to the FIFO in the same directory is followed and refused too.
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink("out.jsonl", &link).unwrap();
    assert_eq!(
        session_store::io::atomic_rewrite(&link, b"x\n")
            .unwrap_err()
            .to_string(),
        "not a regular file (a FIFO)"
    );
    // A symlink to a device leads out of the directory: refused before it is followed, naming
    // the link, its target and the directory.
    let null = dir.path().join("null.jsonl");
    std::os::unix::fs::symlink("/dev/null", &null).unwrap();
    let err = session_store::io::atomic_rewrite(&null, b"x\n").unwrap_err();
    let real = std::fs::canonicalize(dir.path()).unwrap();
    assert_eq!(
        session_store::OutsideStore::find(&err),
        Some(&session_store::OutsideStore {
            link: dir.path().join("null.jsonl"),
            target: std::path::PathBuf::from("/dev/null"),
            root: real,
        })
    );
    assert!(
        std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    );
}
