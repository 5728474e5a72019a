//! The store layout's name rules are session-store's one name validator
//! (`session_store::broken_rule` with `NameRules::StoreFile`) reported as `PathError`:
//! every rule of the validator is refused by `layout::validate_name` with the matching variant,
//! and the layout's entry points that build paths from names and agent ids (`resolve_file`,
//! `resolve_existing`, `sessions_dir`, `SemanticSession::open_file`, `create_unnamed`) refuse
//! traversal values before touching the file system.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use pretty_assertions::assert_eq;
use session_semantics::events::EventBus;
use session_semantics::layout::validate_name;
use session_semantics::session::{CreateSessionError, OpenSessionError};
use session_semantics::{PathError, SemanticSession, StoreLayout};
use session_store::{NameRules, broken_rule};

/// A `PathError` as comparable text: its variant and fields.
fn shape(e: &PathError) -> String {
    match e {
        PathError::EmptyName => "EmptyName".to_owned(),
        PathError::NameTooLong { len, max, .. } => format!("NameTooLong {len} {max}"),
        PathError::BadCharacter { what, .. } => format!("BadCharacter {what}"),
        PathError::DotName { .. } => "DotName".to_owned(),
        PathError::InvalidAgentId { agent_id, .. } => format!("InvalidAgentId {agent_id}"),
        other => format!("{other:?}"),
    }
}

#[test]
fn layout_names_follow_the_one_validator() {
    let long = "x".repeat(256);
    let cases: [(&str, &str); 14] = [
        ("", "EmptyName"),
        (".", "DotName"),
        ("..", "DotName"),
        (".hidden.jsonl", "DotName"),
        ("a/b", "BadCharacter '/'"),
        ("../../x.jsonl", "BadCharacter '/'"),
        ("/etc/x", "BadCharacter '/'"),
        ("\\x", "BadCharacter '\\'"),
        ("a\\b", "BadCharacter '\\'"),
        ("a:b", "BadCharacter ':'"),
        ("C:\\x", "BadCharacter ':'"),
        ("a\0b", "BadCharacter NUL"),
        ("a\u{1b}b", "BadCharacter a control character"),
        (&long, "NameTooLong 256 255"),
    ];
    for (name, want) in cases {
        assert!(
            broken_rule(name, NameRules::StoreFile).is_some(),
            "{name:?}"
        );
        assert_eq!(shape(&validate_name(name).unwrap_err()), want, "{name:?}");
    }
    for ok in ["main.jsonl", "a.b", &"x".repeat(255)] {
        assert_eq!(broken_rule(ok, NameRules::StoreFile), None, "{ok:?}");
        assert!(validate_name(ok).is_ok(), "{ok:?}");
    }
    assert_eq!(
        validate_name("../../x.jsonl").unwrap_err().to_string(),
        "session file name \"../../x.jsonl\" contains '/', which could address another directory"
    );
}

#[test]
fn layout_entry_points_refuse_traversal_before_touching_the_disk() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let layout = StoreLayout::new(root.join("state"));
    session_store::io::ensure_dir(&root.join("state/agents/main/sessions")).unwrap();
    session_store::io::write_raw(&root.join("state/x.jsonl"), b"target\n").unwrap();
    let before = std::fs::read_dir(&root).unwrap().count();

    for name in [
        "../../../x.jsonl",
        "..",
        "/etc/x.jsonl",
        "a\\b.jsonl",
        "a\0b.jsonl",
    ] {
        let e = layout.resolve_file("main", name).unwrap_err();
        assert!(
            matches!(
                e,
                PathError::BadCharacter { .. } | PathError::DotName { .. }
            ),
            "{e}"
        );
        let e = layout.resolve_existing("main", name).unwrap_err();
        assert!(
            matches!(
                e,
                PathError::BadCharacter { .. } | PathError::DotName { .. }
            ),
            "{e}"
        );
        match SemanticSession::open_file(&layout, "main", name, &EventBus::new()) {
            Err(OpenSessionError::Path(
                PathError::BadCharacter { .. } | PathError::DotName { .. },
            )) => {}
            other => panic!("{name:?}: {other:?}"),
        }
    }
    for agent in ["../main", "..", "a/b", "", "a\u{1}"] {
        assert_eq!(
            shape(&layout.sessions_dir(agent).unwrap_err()),
            format!("InvalidAgentId {agent}")
        );
        match SemanticSession::create_unnamed(&layout, agent, None, "/w", &EventBus::new()) {
            Err(CreateSessionError::Path(PathError::InvalidAgentId { .. })) => {}
            other => panic!("{agent:?}: {other:?}"),
        }
    }
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), before);
    assert_eq!(
        std::fs::read(root.join("state/x.jsonl")).unwrap(),
        b"target\n"
    );
    assert_eq!(
        std::fs::read_dir(root.join("state/agents"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect::<Vec<_>>(),
        ["main"]
    );
    assert_eq!(
        std::fs::read_dir(root.join("state/agents/main/sessions"))
            .unwrap()
            .count(),
        0
    );
}
