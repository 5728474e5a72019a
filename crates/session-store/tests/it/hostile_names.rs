//! Caller-chosen names never address anything but a direct child of the store: the one name
//! validator (`session_store::validate_name`) refuses each rule with a typed error naming the value and
//! the rule; `new_session` refuses a hostile id before anything changes; ids read from files
//! (a header id `../../evil`) are listed, opened, forked and branched without ever becoming a
//! path; Redis key paths refuse names that would leave their namespace. Every test compares
//! the whole temporary tree before and after: nothing is created outside the sessions
//! directory.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::{Path, PathBuf};

use crate::support::{HEADER, assistant, msg_line, user};
use session_format::json::JsValue;
use session_store::{InvalidName, NameKind, NameRule, NewSessionOptions, SessionManager};
use session_store::{MAX_NAME_BYTES, NameRules, broken_rule};
use session_test_support::listing;

/// Each hostile value, the rule it breaks and the reason text.
fn hostile() -> Vec<(String, NameRule, &'static str)> {
    vec![
        (String::new(), NameRule::Empty, "is empty"),
        (".".to_owned(), NameRule::Dot, "is '.'"),
        ("..".to_owned(), NameRule::DotDot, "is '..'"),
        ("a/b".to_owned(), NameRule::Slash, "contains '/'"),
        ("../../../evil".to_owned(), NameRule::Slash, "contains '/'"),
        ("a\\b".to_owned(), NameRule::Backslash, "contains '\\'"),
        ("a\0b".to_owned(), NameRule::Nul, "contains NUL"),
        (
            "a\u{1}b".to_owned(),
            NameRule::Control('\u{1}'),
            "contains the control character U+0001",
        ),
        (
            "a\u{7f}b".to_owned(),
            NameRule::Control('\u{7f}'),
            "contains the control character U+007F",
        ),
        (
            "/etc/x".to_owned(),
            NameRule::Absolute,
            "is an absolute path",
        ),
        (
            "x".repeat(256),
            NameRule::TooLong { len: 256 },
            "is 256 bytes long, more than 255",
        ),
    ]
}

fn assert_refused(err: &InvalidName, kind: NameKind, value: &str, rule: NameRule, why: &str) {
    assert_eq!(
        (err.kind, err.value.as_str(), err.rule),
        (kind, value, rule),
        "{value:?}"
    );
    assert_eq!(
        err.to_string(),
        format!("invalid {kind} {value:?}: {why}"),
        "{value:?}"
    );
}

#[test]
fn the_validator_names_the_value_and_the_rule() {
    for (value, rule, why) in hostile() {
        let err = session_store::validate_name(NameKind::SessionId, &value).unwrap_err();
        assert_refused(&err, NameKind::SessionId, &value, rule, why);
    }
    let err = session_store::validate_name(NameKind::SessionName, "../../../x").unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"invalid session name "../../../x": contains '/'"#
    );
    let err = session_store::validate_name(NameKind::AgentId, "a\u{1b}[2J").unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"invalid agent id "a\u{1b}[2J": contains the control character U+001B"#
    );
    assert_eq!(MAX_NAME_BYTES, 255);
    for ok in [
        "x".repeat(255),
        "é".repeat(127), // 254 bytes
        "0195f3a0-7c1e-7000-8000-0000000000b1".to_owned(),
        "...".to_owned(),
        ".hidden".to_owned(),
        "a:b".to_owned(),
        "my-custom-id".to_owned(),
    ] {
        assert_eq!(
            session_store::validate_name(NameKind::SessionId, &ok),
            Ok(()),
            "{ok:?}"
        );
    }
    // The store layout's stricter rules share the same checks, plus ':' and a leading '.'.
    assert_eq!(
        broken_rule("a:b", NameRules::StoreFile),
        Some(NameRule::Colon)
    );
    assert_eq!(
        broken_rule(".hidden", NameRules::StoreFile),
        Some(NameRule::LeadingDot)
    );
    assert_eq!(broken_rule("a:b", NameRules::Component), None);
}

/// `<tmp>/outer/store/sessions` with a canary file in `<tmp>/outer`: `../../../evil` from the
/// sessions directory would land in `<tmp>`.
fn store() -> (tempfile::TempDir, PathBuf) {
    let tmp = crate::support::tempdir();
    let dir = tmp.path().join("outer/store/sessions");
    session_store::io::ensure_dir(&dir).unwrap();
    crate::support::write(&tmp.path().join("outer/canary"), "canary\n");
    (tmp, dir)
}

#[test]
fn new_session_refuses_every_hostile_id_and_changes_nothing() {
    let (tmp, dir) = store();
    let mut sm = SessionManager::create("/w", Some(&dir)).unwrap();
    let (id, file) = (
        sm.get_session_id().to_owned(),
        sm.get_session_file().unwrap().to_path_buf(),
    );
    for (value, rule, why) in hostile() {
        let err = sm
            .new_session(NewSessionOptions {
                id: Some(value.clone()),
                parent_session: None,
            })
            .unwrap_err();
        assert_refused(&err, NameKind::SessionId, &value, rule, why);
        assert_eq!(sm.get_session_id(), id);
        assert_eq!(sm.get_session_file(), Some(file.as_path()));
    }
    // The manager is still on its own session: the first assistant writes that file.
    sm.append_message(user("q", 1)).unwrap();
    sm.append_message(assistant("a", 2)).unwrap();
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(
        listing(tmp.path()),
        [
            "outer/".to_owned(),
            "outer/canary".to_owned(),
            "outer/store/".to_owned(),
            "outer/store/sessions/".to_owned(),
            format!("outer/store/sessions/{name}"),
        ]
    );
    let header = crate::support::lines(&file)[0].clone();
    assert!(header.contains(&format!(r#""id":"{id}""#)), "{header}");

    // In memory the same ids are refused (they would be a file name the moment the manager
    // persisted), and a valid custom id is taken verbatim.
    let mut mem = SessionManager::in_memory("/w");
    for (value, rule, why) in hostile() {
        let err = mem
            .new_session(NewSessionOptions {
                id: Some(value.clone()),
                parent_session: None,
            })
            .unwrap_err();
        assert_refused(&err, NameKind::SessionId, &value, rule, why);
    }
    let got = mem
        .new_session(NewSessionOptions {
            id: Some("my-custom-id".to_owned()),
            parent_session: None,
        })
        .unwrap();
    assert_eq!((got, mem.get_session_id()), (None, "my-custom-id"));
}

/// A persisting manager names its file `<timestamp>_<id>.jsonl` (24 + 1 + id + 6 bytes): the
/// longest id whose file name fits in 255 bytes is 224 bytes. Longer ids are refused naming the
/// file name; in memory any valid id up to 255 bytes is taken. A 255-byte file name is written
/// like any other (the atomic writer's hidden temporary sibling cuts the name it repeats).
#[test]
fn new_session_ids_up_to_the_file_name_limit() {
    let mut mem = SessionManager::in_memory("/w");
    let id255 = "x".repeat(255);
    mem.new_session(NewSessionOptions {
        id: Some(id255.clone()),
        parent_session: None,
    })
    .unwrap();
    assert_eq!(mem.get_session_id(), id255);

    let (tmp, dir) = store();
    let mut sm = SessionManager::create("/w", Some(&dir)).unwrap();
    let id224 = "y".repeat(224);
    let path = sm
        .new_session(NewSessionOptions {
            id: Some(id224.clone()),
            parent_session: None,
        })
        .unwrap()
        .unwrap();
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(name.len(), 255);
    assert!(name.ends_with(&format!("_{id224}.jsonl")), "{name}");
    assert_eq!(path.parent(), Some(dir.as_path()));
    assert_eq!(sm.get_session_id(), id224);
    sm.append_message(user("q", 1)).unwrap();
    sm.append_message(assistant("a", 2)).unwrap();
    let name224 = name;
    assert_eq!(
        std::fs::read(&path).unwrap().split(|&b| b == b'\n').count(),
        4
    );

    let id200 = "w".repeat(200);
    let path = sm
        .new_session(NewSessionOptions {
            id: Some(id200.clone()),
            parent_session: None,
        })
        .unwrap()
        .unwrap();
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(
        (name.len(), name.ends_with(&format!("_{id200}.jsonl"))),
        (231, true)
    );
    sm.append_message(user("q", 1)).unwrap();
    sm.append_message(assistant("a", 2)).unwrap();
    let mut files = [
        format!("outer/store/sessions/{name}"),
        format!("outer/store/sessions/{name224}"),
    ];
    files.sort();
    let mut expected = vec![
        "outer/".to_owned(),
        "outer/canary".to_owned(),
        "outer/store/".to_owned(),
        "outer/store/sessions/".to_owned(),
    ];
    expected.extend(files);
    assert_eq!(listing(tmp.path()), expected);

    for (len, file_len) in [(225, 256), (255, 286)] {
        let id = "z".repeat(len);
        let err = sm
            .new_session(NewSessionOptions {
                id: Some(id.clone()),
                parent_session: None,
            })
            .unwrap_err();
        assert_eq!(
            (err.kind, err.rule),
            (NameKind::FileName, NameRule::TooLong { len: file_len })
        );
        assert_eq!(err.value.len(), file_len);
        assert!(err.value.ends_with(&format!("_{id}.jsonl")));
        assert_eq!(
            err.to_string(),
            format!(
                "invalid session file name {:?}: is {file_len} bytes long, more than 255",
                err.value
            )
        );
        assert_eq!(sm.get_session_file(), Some(path.as_path()));
    }
    let err = sm
        .new_session(NewSessionOptions {
            id: Some("z".repeat(256)),
            parent_session: None,
        })
        .unwrap_err();
    assert_eq!(
        (err.kind, err.rule),
        (NameKind::SessionId, NameRule::TooLong { len: 256 })
    );
}

/// A session whose header id is `../../evil`: listing, opening, appending, forking, branching,
/// starting a new session and continuing the most recent one never make a path of that id.
#[test]
fn ids_read_from_files_never_become_paths() {
    let (tmp, dir) = store();
    let evil = "../../evil";
    let source = dir.join("hostile.jsonl");
    let header = HEADER.replace("0195f000-0000-7000-8000-000000000001", evil);
    crate::support::write(
        &source,
        &format!(
            "{header}\n{}\n{}\n",
            msg_line("u1", None, "user", "q1", 1),
            msg_line("a1", Some("u1"), "assistant", "r1", 2)
        ),
    );

    let listed = SessionManager::list("/w", Some(&dir)).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!((listed[0].id.as_str(), &listed[0].path), (evil, &source));

    let mut sm = SessionManager::open(&source, None, None).unwrap();
    assert_eq!(sm.get_session_id(), evil);
    sm.append_message(user("q2", 3)).unwrap();
    assert_eq!(crate::support::lines(&source).len(), 4);

    let fork = SessionManager::fork_from(&source, "/w", Some(&dir)).unwrap();
    let fork_file = fork.get_session_file().unwrap().to_path_buf();
    assert_eq!(fork_file.parent(), Some(dir.as_path()));
    assert_ne!(fork.get_session_id(), evil);
    assert_eq!(
        session_store::validate_name(NameKind::SessionId, fork.get_session_id()),
        Ok(())
    );
    let fork_header = fork.get_header().unwrap().unwrap();
    assert_eq!(
        fork_header.get("parentSession"),
        Some(&JsValue::from(source.to_string_lossy().as_ref()))
    );

    let mut branch = SessionManager::open(&source, None, None).unwrap();
    let branched = branch.create_branched_session("a1").unwrap().unwrap();
    assert_eq!(branched.parent(), Some(dir.as_path()));
    assert_ne!(branch.get_session_id(), evil);

    let mut fresh = SessionManager::open(&source, None, None).unwrap();
    let next = fresh
        .new_session(NewSessionOptions::default())
        .unwrap()
        .unwrap();
    assert_eq!(next.parent(), Some(dir.as_path()));
    fresh.append_message(user("q", 1)).unwrap();
    fresh.append_message(assistant("a", 2)).unwrap();

    let recent = SessionManager::continue_recent("/w", Some(&dir)).unwrap();
    assert_eq!(
        recent.get_session_file().unwrap().parent(),
        Some(dir.as_path())
    );

    // Only direct children of the sessions directory were created, none named after the id.
    let after = listing(tmp.path());
    let (inside, outside): (Vec<&String>, Vec<&String>) = after
        .iter()
        .partition(|p| p.starts_with("outer/store/sessions/") && p.len() > 21);
    assert_eq!(
        outside,
        [
            "outer/",
            "outer/canary",
            "outer/store/",
            "outer/store/sessions/"
        ]
    );
    for p in &inside {
        let rest = &p["outer/store/sessions/".len()..];
        assert!(!rest.contains('/') && !rest.contains("evil"), "{p}");
    }
    // hostile.jsonl, the fork, the branched session (it holds an assistant: written at once),
    // the new session.
    assert_eq!(inside.len(), 4, "{inside:?}");
}

/// Op-script file names are relative to the script directory D: one leading out of it is an
/// op error, and nothing is written outside D.
#[test]
fn op_script_files_stay_in_the_script_directory() {
    let (tmp, dir) = store();
    let script = br#"{"name":"escape","ops":[
        {"op":"writeFile","file":"../../evil.jsonl","content":"x\n"},
        {"op":"writeFile","file":"/tmp/evil-op-script.jsonl","content":"x\n"},
        {"op":"appendRaw","file":"../outside.jsonl","content":"x\n"},
        {"op":"open","file":"../../canary"},
        {"op":"writeFile","file":"sub/../inside.jsonl","content":"x\n"}
    ]}"#;
    let out = session_store::test_util::replay::run_script(
        session_store::FileStorage::shared(),
        script,
        &dir,
    )
    .unwrap();
    let errors: Vec<String> = out
        .results
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.get("error").unwrap().as_str_lossy().unwrap().into_owned())
        .collect();
    assert_eq!(
        errors,
        [
            r#"file "../../evil.jsonl" leads out of the script directory (op-script file names are relative to it)"#,
            r#"file "/tmp/evil-op-script.jsonl" leads out of the script directory (op-script file names are relative to it)"#,
            r#"file "../outside.jsonl" leads out of the script directory (op-script file names are relative to it)"#,
            r#"file "../../canary" leads out of the script directory (op-script file names are relative to it)"#,
        ]
    );
    assert_eq!(
        listing(tmp.path()),
        [
            "outer/",
            "outer/canary",
            "outer/store/",
            "outer/store/sessions/",
            "outer/store/sessions/inside.jsonl",
        ]
    );
    assert!(!Path::new("/tmp/evil-op-script.jsonl").exists());
}

/// Redis key paths: the file-name part passes the one validator, and a directory that climbs
/// out of its namespace with `..` is refused (the storage normalises paths before this, so only
/// a relative path climbing above its start keeps a `..`).
#[cfg(feature = "redis")]
mod redis_keys {
    use std::path::Path;

    use session_store::redis_store::{RedisStoreError, session_keys};
    use session_store::{NameKind, NameRule};

    #[test]
    fn key_paths_refuse_names_that_leave_their_namespace() {
        let ok = session_keys("p", Path::new("/ns/s.jsonl")).unwrap();
        assert_eq!(
            (ok.meta.as_str(), ok.index.as_str()),
            ("p:{/ns}:s.jsonl:m", "p:{/ns}:index")
        );
        let long = format!("/ns/{}", "x".repeat(255));
        assert_eq!(
            session_keys("p", Path::new(&long)).unwrap().member,
            "x".repeat(255)
        );
        for (path, value, rule) in [
            ("/ns/a\\b.jsonl", "a\\b.jsonl", NameRule::Backslash),
            ("/ns/a\0b.jsonl", "a\0b.jsonl", NameRule::Nul),
            ("/ns/a\nb.jsonl", "a\nb.jsonl", NameRule::Control('\n')),
        ] {
            match session_keys("p", Path::new(path)) {
                Err(RedisStoreError::InvalidName { path: p, source }) => {
                    assert_eq!(p, Path::new(path));
                    assert_eq!(
                        (source.kind, source.value.as_str(), source.rule),
                        (NameKind::FileName, value, rule)
                    );
                }
                other => panic!("{path:?}: {other:?}"),
            }
        }
        let too_long = format!("/ns/{}", "x".repeat(256));
        match session_keys("p", Path::new(&too_long)) {
            Err(RedisStoreError::InvalidName { source, .. }) => {
                assert_eq!(source.rule, NameRule::TooLong { len: 256 });
            }
            other => panic!("{other:?}"),
        }
        let err = session_keys("p", Path::new("/ns/a\\b.jsonl")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "/ns/a\\b.jsonl cannot name a redis session: invalid session file name \
             \"a\\\\b.jsonl\": contains '\\'"
        );
        assert_eq!(err.io_kind(), std::io::ErrorKind::InvalidInput);
        for climbing in ["../s.jsonl", "a/../../s.jsonl", "/ns/../x/s.jsonl"] {
            match session_keys("p", Path::new(climbing)) {
                Err(RedisStoreError::EscapesNamespace(p)) => assert_eq!(p, Path::new(climbing)),
                other => panic!("{climbing:?}: {other:?}"),
            }
        }
        assert_eq!(
            session_keys("p", Path::new("../s.jsonl"))
                .unwrap_err()
                .to_string(),
            "../s.jsonl cannot name a redis session: its directory climbs out of its namespace \
             with '..'"
        );
        assert!(matches!(
            session_keys("p", Path::new("/ns/..")),
            Err(RedisStoreError::BadPath(_))
        ));
    }
}
