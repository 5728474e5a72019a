//! `sessions repair` draws the store root as every write command does
//! (`address::write_root`): for `--agent ID --session NAME` the agent's sessions directory, so
//! a link in a sub-directory of it that leads back into it is inside (repaired as its target),
//! and a session whose lock is held under another of its names (an OpenClaw writer that was
//! given the alias `L.jsonl` holds `L.jsonl.lock`) is not repaired beside that writer.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::PathBuf;

use crate::support::*;

struct Store {
    _tmp: tempfile::TempDir,
    state: PathBuf,
    dir: PathBuf,
    bytes: Vec<u8>,
}

/// `<tmp>/state/agents/main/sessions/s.jsonl` (needing a repair: one line that is not JSON).
fn store() -> Store {
    let tmp = tempdir();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let state = base.join("state");
    let dir = state.join("agents").join("main").join("sessions");
    session_store::io::ensure_dir(&dir.join("sub")).unwrap();
    let mut bytes = session_bytes("s1", session_format::ids::now_ms() - DAY);
    bytes.extend_from_slice(b"not json\n");
    plant(&dir.join("s.jsonl"), &bytes);
    Store {
        _tmp: tmp,
        state,
        dir,
        bytes,
    }
}

#[test]
fn a_link_in_a_sub_directory_back_into_the_agent_sessions_dir_is_repaired_as_its_target() {
    let s = store();
    std::os::unix::fs::symlink("../s.jsonl", s.dir.join("sub").join("y.jsonl")).unwrap();
    let root = s.state.display().to_string();
    let r = run_in_timeout(
        &s.dir,
        [
            "repair",
            "--root",
            &root,
            "--agent",
            "main",
            "--session",
            "y",
            "--json",
        ],
    );
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["repaired"], true);
    assert_eq!(v["droppedLines"], 1);
    assert_eq!(
        v["lockPath"],
        s.dir.join("s.jsonl.lock").display().to_string()
    );
    let repaired = std::fs::read(s.dir.join("s.jsonl")).unwrap();
    assert_eq!(repaired, s.bytes[..s.bytes.len() - b"not json\n".len()]);
    assert_eq!(
        std::fs::read_link(s.dir.join("sub").join("y.jsonl")).unwrap(),
        std::path::Path::new("../s.jsonl")
    );
}

#[test]
fn repair_waits_for_a_lock_held_through_an_alias_and_names_it() {
    let s = store();
    std::os::unix::fs::symlink("s.jsonl", s.dir.join("L.jsonl")).unwrap();
    plant(&s.dir.join("L.jsonl.lock"), live_lock().as_bytes());
    let file = s.dir.join("s.jsonl");
    let r = run_in_timeout(
        &s.dir,
        ["repair", file.to_str().unwrap(), "--lock-timeout", "200ms"],
    );
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    let prefix = format!(
        "error: session file locked (timeout 200ms): pid={} alive=true ageMs=",
        std::process::id()
    );
    assert!(r.stderr.starts_with(&prefix), "{}", r.stderr);
    assert!(
        r.stderr
            .ends_with(&format!(" {}\n", s.dir.join("L.jsonl.lock").display())),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read(&file).unwrap(), s.bytes);
    assert_eq!(
        dir_names(&s.dir),
        ["L.jsonl", "L.jsonl.lock", "s.jsonl", "sub"]
    );
}
