//! `sessions repair --agent ID --session NAME` treats the store as `archive` and `clear` do: an
//! agent directory `<root>/agents/ID` that is a symlink whose sessions directory resolves outside
//! the state directory is refused (exit 2, naming the resolved path and the store root), and the
//! file there is neither rewritten nor backed up (README, "Links out of the store": no rewrite
//! or backup follows a link out of the store root).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::support::*;

const DAY: i64 = 86_400_000;

#[test]
fn repair_refuses_an_agent_directory_linked_out_of_the_state_dir_like_archive_and_clear() {
    let tmp = tempdir();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let state = base.join("state");
    session_store::io::ensure_dir(&state.join("agents")).unwrap();
    let ext = base.join("ext");
    let ext_sessions = ext.join("sessions");
    session_store::io::ensure_dir(&ext_sessions).unwrap();
    let victim = ext_sessions.join("s.jsonl");
    let mut bytes = session_bytes("s1", session_format::ids::now_ms() - DAY);
    bytes.extend_from_slice(b"not json\n");
    plant(&victim, &bytes);
    std::os::unix::fs::symlink(&ext, state.join("agents").join("evil")).unwrap();
    let root = state.display().to_string();
    let refusal = format!(
        "error: {}/agents/evil/sessions resolves to {}, outside the store root {}\n",
        root,
        ext_sessions.display(),
        root
    );

    // What archive and clear say today (the behaviour repair should share).
    let r = run_in_timeout(
        &base,
        [
            "clear",
            "--root",
            &root,
            "--agent",
            "evil",
            "--session",
            "s",
            "--yes",
        ],
    );
    assert_eq!((r.code, r.stderr.as_str()), (2, refusal.as_str()));

    let r = run_in_timeout(
        &base,
        [
            "repair",
            "--root",
            &root,
            "--agent",
            "evil",
            "--session",
            "s",
        ],
    );
    assert_eq!(r.code, 2, "stdout: {}\nstderr: {}", r.stdout, r.stderr);
    assert_eq!(r.stderr, refusal);
    assert_eq!(std::fs::read(&victim).unwrap(), bytes);
    assert_eq!(dir_names(&ext_sessions), ["s.jsonl"]);
}
