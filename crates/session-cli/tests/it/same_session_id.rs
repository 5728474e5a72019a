//! Bad-input catalogue (docs/RELIABILITY.md), the lookup half of "two files with the same session id":
//! `--session <id>` over a directory holding two sessions with one header id reports the
//! ambiguity (exit 2, both files named) instead of opening either; with one of them gone the
//! same lookup opens the other. The fixtures are `session-store`'s
//! `tests/fixtures/catalogue/same-id-{a,b}.jsonl` (whose listing `bad_input_catalogue.rs`
//! checks).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::PathBuf;

use crate::support::*;

const ID: &str = "0195f000-0000-7000-8000-000000000009";

fn catalogue(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../session-store/tests/fixtures/catalogue")
        .join(name)
}

#[test]
fn lookup_by_a_session_id_two_files_share_reports_the_ambiguity() {
    let dir = tempdir();
    let d = dir.path();
    for name in ["same-id-a.jsonl", "same-id-b.jsonl"] {
        plant_copy(&catalogue(name), &d.join("sessions").join(name));
    }
    let r = run_in_timeout(d, ["tree", "--dir", "sessions", "--session", ID]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (
            2,
            "",
            "error: session \"0195f000-0000-7000-8000-000000000009\" is ambiguous in sessions \
             (several files have that session id): same-id-a.jsonl, same-id-b.jsonl\n"
        )
    );
    let r = run_in_timeout(
        d,
        ["context", "--dir", "sessions", "--session", "0195f000-0000"],
    );
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (
            2,
            "",
            "error: session \"0195f000-0000\" is ambiguous in sessions (several session ids \
             start with it): same-id-a.jsonl, same-id-b.jsonl\n"
        )
    );
    session_store::io::remove_file(&d.join("sessions/same-id-a.jsonl")).unwrap();
    let by_id = run_in_timeout(d, ["context", "--dir", "sessions", "--session", ID]);
    let by_path = run_in_timeout(d, ["context", "sessions/same-id-b.jsonl"]);
    assert_eq!(by_id.code, 0, "{}", by_id.stderr);
    assert_eq!(by_id.stdout, by_path.stdout);
    assert!(by_id.stdout.contains("second file"), "{}", by_id.stdout);
}
