//! Files that are not regular files: `export -o` never replaces anything but a regular file,
//! and FIFOs and devices named `*.jsonl` are never opened.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};

use crate::support::*;

// ---------------------------------------------------------------------------------------
// export -o never replaces anything but a regular file

#[test]
fn export_never_replaces_anything_but_a_regular_file() {
    let dir = tempdir();
    let d = dir.path();
    plant(&d.join("s.jsonl"), &small_session());
    mkfifo(&d.join("out.fifo"));
    let _sock = std::os::unix::net::UnixListener::bind(d.join("out.sock")).unwrap();
    std::fs::create_dir(d.join("outdir")).unwrap();
    symlink(d.join("out.fifo"), d.join("to-fifo.html")).unwrap();
    symlink("/nonexistent-for-tests/x.html", d.join("dangling.html")).unwrap();
    for (out, kind, after) in [
        ("out.fifo", "fifo", "fifo"),
        ("out.sock", "socket", "socket"),
        ("outdir", "directory", "directory"),
        ("to-fifo.html", "fifo", "symlink"),
    ] {
        let r = run_in_timeout(d, ["export", "s.jsonl", "-o", out, "--force"]);
        assert_eq!(r.code, 2, "{out}: {}", r.stderr);
        assert_eq!(
            r.stderr,
            format!(
                "error: {out} is a {kind}, not a regular file; export writes only regular files \
                 and never replaces anything else, even with --force (use `-o -` or a shell \
                 redirection to write to stdout)\n"
            )
        );
        assert_eq!(file_kind(&d.join(out)), after, "{out} was replaced");
    }
    assert_eq!(file_kind(&d.join("out.fifo")), "fifo");
    let r = run_in_timeout(d, ["export", "s.jsonl", "-o", "dangling.html", "--force"]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: dangling.html is a dangling symbolic link (its target \
         /nonexistent-for-tests/x.html does not exist); refusing to write through it: remove the \
         link or choose another OUT\n"
    );
    assert_eq!(file_kind(&d.join("dangling.html")), "symlink");

    // `-o -` is stdout.
    let to_stdout = run_in_timeout(d, ["export", "s.jsonl", "-o", "-"]);
    let plain = run_in_timeout(d, ["export", "s.jsonl"]);
    assert_eq!(to_stdout.code, 0, "{}", to_stdout.stderr);
    assert_eq!(to_stdout.stdout, plain.stdout);
    assert!(!d.join("-").exists());

    // --force over a regular file keeps its mode, as the help says.
    let reg = d.join("out.json");
    plant(&reg, b"old\n");
    std::fs::set_permissions(&reg, std::fs::Permissions::from_mode(0o640)).unwrap();
    let r = run_in_timeout(d, ["export", "s.jsonl", "-o", "out.json", "--force"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&reg).unwrap(), plain.stdout);
    assert_eq!(std::fs::metadata(&reg).unwrap().mode() & 0o7777, 0o640);
    let r = run_in_timeout(d, ["export", "s.jsonl", "-o", "new.json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        std::fs::metadata(d.join("new.json")).unwrap().mode() & 0o7777,
        0o600
    );
    let help = run_in_timeout(d, ["export", "--help"]);
    let help1 = help.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help1.contains("-o OUT writes a new regular file with mode 0600"),
        "{help1}"
    );
    assert!(
        help1.contains("the result keeps the replaced file's mode bits"),
        "{help1}"
    );
    assert!(
        help1.contains("a directory, FIFO, socket or device is refused even with --force"),
        "{help1}"
    );
}

// ---------------------------------------------------------------------------------------
// FIFOs and devices named *.jsonl are never opened

#[test]
fn fifos_and_devices_named_jsonl_are_never_opened() {
    let dir = tempdir();
    let d = dir.path();
    let sessions = d.join("sessions");
    plant(&sessions.join("a.jsonl"), &small_session());
    mkfifo(&sessions.join("fifo.jsonl"));
    symlink("/dev/zero", sessions.join("zero.jsonl")).unwrap();

    let r = run_in_timeout(d, ["list", "--dir", "sessions"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.lines().count(), 2, "{}", r.stdout);
    assert!(r.stdout.contains("sessions/a.jsonl"), "{}", r.stdout);
    assert_eq!(
        r.stderr,
        "warning: skipped 2 files:\n  sessions/fifo.jsonl: not a regular file: fifo (session \
         files are only read when they are regular files)\n  sessions/zero.jsonl: not a regular \
         file: character device (session files are only read when they are regular files)\n"
    );

    let r = run_in_timeout(d, ["check", "sessions/fifo.jsonl"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "sessions/fifo.jsonl: error: not a regular file: fifo (session files are only read when \
         they are regular files)\nchecked 1 file: 0 ok, 1 unreadable\n"
    );
    let fifo_err = "error: sessions/fifo.jsonl: not a regular file: fifo (session files are only \
                    read when they are regular files)\n";
    for args in [
        vec!["tree", "sessions/fifo.jsonl"],
        vec!["context", "sessions/fifo.jsonl"],
        vec!["show", "sessions/fifo.jsonl", "@1"],
        vec!["show", "--raw", "sessions/fifo.jsonl", "@1"],
        vec!["export", "sessions/fifo.jsonl"],
        vec!["stats", "sessions/fifo.jsonl"],
    ] {
        let r = run_in_timeout(d, &args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert_eq!(r.stderr, fifo_err, "{args:?}");
        assert_eq!(r.stdout, "", "{args:?}");
    }
    let r = run_in_timeout(d, ["tree", "sessions/zero.jsonl"]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: sessions/zero.jsonl: not a regular file: character device (session files are \
         only read when they are regular files)\n"
    );
    let r = run_in_timeout(d, ["tree", "--dir", "sessions", "--session", "fifo"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("not a regular file: fifo"),
        "{}",
        r.stderr
    );
    assert_eq!(file_kind(&sessions.join("fifo.jsonl")), "fifo");
}
