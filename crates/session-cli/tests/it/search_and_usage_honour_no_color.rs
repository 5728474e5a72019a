//! `sessions search` highlights a match on a terminal unless `NO_COLOR` is set (to any value,
//! the empty string too); `sessions usage` never colours. Run under a pseudo-terminal with
//! util-linux `script` (skipped, with `SKIP`, when it is missing).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::Path;
use std::process::Command;

use crate::support::*;

/// Runs `sessions ARGS` in `dir` on a pseudo-terminal, `NO_COLOR` set to `no_color` (or
/// removed), and returns what the terminal got.
fn on_tty(dir: &Path, no_color: Option<&str>, args: &str) -> String {
    let mut c = Command::new("script");
    c.current_dir(dir)
        .args([
            "-qec",
            &format!("{} {args}", env!("CARGO_BIN_EXE_sessions")),
            "/dev/null",
        ])
        .env_remove("OPENCLAW_STATE_DIR")
        .env_remove("OPENCLAW_AGENT_DIR")
        .env_remove("CLICOLOR_FORCE")
        .env("HOME", "/nonexistent-home-for-tests")
        .env("COLUMNS", "200")
        .env("TERM", "xterm");
    match no_color {
        Some(v) => c.env("NO_COLOR", v),
        None => c.env_remove("NO_COLOR"),
    };
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn search_colours_a_match_on_a_terminal_unless_no_color_is_set() {
    let test = "search_colours_a_match_on_a_terminal_unless_no_color_is_set";
    if Command::new("script").arg("--version").output().is_err() {
        session_test_support::skip(test, "util-linux `script` not found");
        return;
    }
    let t = tempdir();
    plant(
        &t.path().join("s.jsonl"),
        b"{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"cwd\":\"/\"}\n\
          {\"type\":\"label\",\"id\":\"l1\",\"parentId\":null,\"targetId\":\"x\",\"label\":\"a zebra\",\"timestamp\":\"2026-11-01T10:08:00.000Z\"}\n",
    );
    let plain = "s.jsonl:2: l1 label 2026-11-01T10:08:00.000Z on-branch label: a zebra\r\n";
    assert_eq!(
        on_tty(t.path(), None, "search zebra s.jsonl"),
        plain.replace("zebra", "\x1b[1;31mzebra\x1b[0m")
    );
    for v in ["1", ""] {
        assert_eq!(
            on_tty(t.path(), Some(v), "search zebra s.jsonl"),
            plain,
            "NO_COLOR={v:?}"
        );
    }
    let usage = on_tty(t.path(), None, "usage --utc s.jsonl");
    assert!(!usage.contains('\x1b'), "{usage:?}");
    assert_eq!(usage, on_tty(t.path(), Some("1"), "usage --utc s.jsonl"));
}
