//! An absolute `sessionFile` outside the store's directory (openclaw-store.md R1.11, §9 case
//! 3): accepted inside a sibling agent's sessions dir of the same root and inside the state
//! dir's agent sessions dir (even nested); a path reached through a symlinked sessions dir is
//! inside; the structural `…/agents/<id>/sessions/<file>` shape of another root is used
//! unchanged (one segment after `sessions`, a normalised agent id); anything else falls back to
//! `<sessionId>.jsonl`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use session_format::json::{JsValue, parse_value};
use session_semantics::openclaw_store::{SessionFileFallbacks, StoreEntry, transcript_path_with};

fn entry(file: &Path) -> StoreEntry {
    let text = format!(
        r#"{{"sessionId":"s1","sessionFile":{:?}}}"#,
        file.display().to_string()
    );
    match parse_value(text.as_bytes()).unwrap() {
        JsValue::Object(o) => StoreEntry::from_fields(o),
        other => panic!("{other:?}"),
    }
}

fn resolve(dir: &Path, file: &Path, fallbacks: SessionFileFallbacks<'_>) -> PathBuf {
    transcript_path_with(dir, "s1", &entry(file), fallbacks).unwrap()
}

#[test]
fn sibling_and_state_dir_agents_are_inside() {
    let tmp = session_test_support::tempdir();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let ours = root.join("agents/main/sessions");
    let work = root.join("agents/work/sessions");
    std::fs::create_dir_all(&ours).unwrap();
    std::fs::create_dir_all(work.join("nested")).unwrap();
    let none = SessionFileFallbacks::default();
    // A sibling agent's file, two segments deep (the structural shape would refuse it).
    assert_eq!(
        resolve(&ours, &work.join("nested/w.jsonl"), none),
        work.join("nested/w.jsonl")
    );
    // A store outside any agents/ tree: only the state dir fallback finds the nested file.
    let custom = root.join("custom-store");
    std::fs::create_dir_all(&custom).unwrap();
    assert_eq!(
        resolve(&custom, &work.join("nested/w.jsonl"), none),
        custom.join("s1.jsonl")
    );
    let with_state = SessionFileFallbacks::new(Some("main"), Some(&root));
    assert_eq!(
        resolve(&custom, &work.join("nested/w.jsonl"), with_state),
        work.join("nested/w.jsonl")
    );
}

#[test]
fn a_symlinked_sessions_dir_sees_its_real_files_as_inside() {
    let tmp = session_test_support::tempdir();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let real = root.join("real");
    std::fs::create_dir_all(&real).unwrap();
    let link = root.join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    assert_eq!(
        resolve(
            &link,
            &real.join("deep/a.jsonl"),
            SessionFileFallbacks::default()
        ),
        real.join("deep/a.jsonl")
    );
}

#[test]
fn the_structural_shape_is_used_unchanged_and_nothing_else() {
    let dir = Path::new("/state/agents/main/sessions");
    let none = SessionFileFallbacks::default();
    let foreign = Path::new("/old/agents/main/sessions/x.jsonl");
    assert_eq!(resolve(dir, foreign, none), foreign);
    // Not one segment after `sessions`, or an agent id that is not normalised: fallback.
    for bad in [
        "/old/agents/main/sessions/a/x.jsonl",
        "/old/agents/my agent/sessions/x.jsonl",
        "/old/agents/main/sessions",
        "/etc/x.jsonl",
    ] {
        assert_eq!(
            resolve(dir, Path::new(bad), none),
            dir.join("s1.jsonl"),
            "{bad}"
        );
    }
}
