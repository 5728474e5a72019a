//! Session names, the context error naming its row, the `session_store::io` primitives,
//! listing, the reference key order of appended rows and typed messages.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::support::{HEADER, assistant, dir_names, file_with, js};
use session_format::json::{JsValue, to_json_string};
use session_store::{ContextError, NameError, SessionManager};

/// `getSessionName`: last `session_info` wins, trimmed, empty clears, a non-string name is an
/// error naming the row.
#[test]
fn session_name_rules() {
    let mut sm = SessionManager::in_memory("/p");
    assert_eq!(sm.get_session_name().unwrap(), None);
    sm.append_session_info("  first\nsecond  ").unwrap();
    assert_eq!(
        sm.get_session_name().unwrap().as_deref(),
        Some("first\nsecond")
    );
    sm.append_session_info("   ").unwrap();
    assert_eq!(sm.get_session_name().unwrap(), None);
    let dir = crate::support::tempdir();
    let path = file_with(
        dir.path(),
        "n.jsonl",
        &format!(
            "{HEADER}\n{}\n",
            r#"{"type":"session_info","id":"x1","parentId":null,"timestamp":"2026-01-01T00:00:02.000Z","name":42}"#
        ),
    );
    let sm = SessionManager::open(&path, None, None).unwrap();
    match sm.get_session_name() {
        Err(NameError::NonStringName { id, at }) => {
            assert_eq!(id, "x1");
            assert_eq!(at.line, Some(2));
            assert_eq!(at.byte_offset, Some(HEADER.len() + 1));
        }
        other => panic!("unexpected {other:?}"),
    }
}

/// A `message` row whose `message` is null makes the context fail with the row's location.
#[test]
fn context_error_names_the_row() {
    let dir = crate::support::tempdir();
    let path = file_with(
        dir.path(),
        "n.jsonl",
        &format!(
            "{HEADER}\n{}\n",
            r#"{"type":"message","id":"x1","parentId":null,"timestamp":"2026-01-01T00:00:02.000Z","message":null}"#
        ),
    );
    let sm = SessionManager::open(&path, None, None).unwrap();
    match sm.build_session_context() {
        Err(ContextError::InvalidMessage { id, missing, at }) => {
            assert_eq!(id, "x1");
            assert!(!missing);
            assert_eq!(at.line, Some(2));
            assert_eq!(at.file.as_deref(), Some(path.as_path()));
        }
        other => panic!("unexpected {other:?}"),
    }
}

/// `session_store::io`: append separator, create-new refusal, first-line sniffing cap.
#[test]
fn io_primitives() {
    use session_store::io;
    let dir = crate::support::tempdir();
    let p = dir.path().join("f.jsonl");
    io::append_raw(&p, b"{\"a\":1}").unwrap();
    let out = io::append_line(&p, b"{\"b\":2}", io::Durability::Buffer).unwrap();
    assert!(out.separator);
    assert_eq!(out.bytes, 9);
    let out = io::append_line(&p, b"{\"c\":3}", io::Durability::SyncData).unwrap();
    assert!(!out.separator);
    assert_eq!(
        crate::support::read(&p),
        "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n"
    );
    let err = io::create_new(&p, b"x", None).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
    assert_eq!(
        crate::support::read(&p),
        "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n"
    );
    io::atomic_rewrite(&p, b"new\n").unwrap();
    assert_eq!(crate::support::read(&p), "new\n");
    assert_eq!(dir_names(dir.path()), ["f.jsonl"], "no temp file left");
    assert_eq!(
        io::read_first_line(&p).unwrap().as_deref(),
        Some(&b"new"[..])
    );
    let big = dir.path().join("big");
    io::write_raw(&big, &vec![b'x'; 70_000]).unwrap();
    assert_eq!(io::read_first_line(&big).unwrap().unwrap().len(), 65_536);
    let empty = dir.path().join("empty");
    io::write_raw(&empty, b"").unwrap();
    assert_eq!(io::read_first_line(&empty).unwrap(), None);
}

/// `list` / `list_all`: the session info fields and the newest-first order.
#[test]
fn listing_sessions() {
    let root = crate::support::tempdir();
    let d1 = root.path().join("--p--");
    let d2 = root.path().join("--q--");
    session_store::io::ensure_dir(&d1).unwrap();
    session_store::io::ensure_dir(&d2).unwrap();
    let a = format!(
        "{}\n{}\n{}\n{}\n",
        HEADER.replace("\"cwd\"", "\"parentSession\":\"/x/p.jsonl\",\"cwd\""),
        r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"hello"},{"type":"text","text":"world"}],"timestamp":1767225601000}}"#,
        r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":"answer","timestamp":1767225602000}}"#,
        r#"{"type":"session_info","id":"i1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","name":"  My session "}"#
    );
    file_with(&d1, "a.jsonl", &a);
    file_with(
        &d2,
        "b.jsonl",
        &format!(
            "{}\n",
            HEADER.replace("2026-01-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z")
        ),
    );
    file_with(&d2, "junk.jsonl", "not a session\n");
    file_with(root.path(), "loose.jsonl", &format!("{HEADER}\n"));
    let all = SessionManager::list_all(Some(root.path())).unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].path, d2.join("b.jsonl"));
    assert_eq!(all[0].modified, 1_798_761_600_000.0);
    assert_eq!(all[0].first_message, "(no messages)");
    let info = &all[1];
    assert_eq!(info.id, "0195f000-0000-7000-8000-000000000001");
    assert_eq!(info.cwd, "/home/dev/project");
    assert_eq!(info.name.as_deref(), Some("My session"));
    assert_eq!(info.parent_session_path.as_deref(), Some("/x/p.jsonl"));
    assert_eq!(info.created, Some(1_767_225_600_000.0));
    assert_eq!(info.modified, 1_767_225_602_000.0);
    assert_eq!(info.message_count, 2);
    assert_eq!(info.first_message, "hello world");
    assert_eq!(info.all_messages_text().unwrap(), "hello world answer");
    let one = SessionManager::list("/p", Some(&d1)).unwrap();
    assert_eq!(one, vec![info.clone()]);
    assert_eq!(
        SessionManager::list("/p", Some(&root.path().join("missing")))
            .unwrap()
            .len(),
        0
    );
}

/// Appends build rows in the reference key order; payloads keep their own key order.
#[test]
fn appended_rows_use_the_reference_key_order() {
    let dir = crate::support::tempdir();
    let mut sm = SessionManager::create("/p", Some(dir.path())).unwrap();
    let u = sm
        .append_message(js(r#"{"role":"user","content":"q","b":1,"10":2}"#))
        .unwrap();
    sm.append_message(assistant("r", 2)).unwrap();
    sm.append_custom_message_entry("ext", "shown", true, Some(js(r#"{"z":1,"a":2}"#)))
        .unwrap();
    sm.append_custom_entry("ext", None).unwrap();
    let c = sm
        .append_compaction("s", &u, 12.5, None, Some(true))
        .unwrap();
    let lines = crate::support::lines(sm.get_session_file().unwrap());
    let re = |l: &str| -> String {
        let v = js(l);
        let keys: Vec<String> = v
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.to_string())
            .collect();
        keys.join(",")
    };
    assert_eq!(re(&lines[1]), "type,id,parentId,timestamp,message");
    assert_eq!(
        to_json_string(js(&lines[1]).get("message").unwrap()),
        r#"{"10":2,"role":"user","content":"q","b":1}"#
    );
    assert_eq!(
        re(&lines[3]),
        "type,customType,content,display,details,id,parentId,timestamp"
    );
    assert_eq!(re(&lines[4]), "type,customType,id,parentId,timestamp");
    assert_eq!(
        re(&lines[5]),
        "type,id,parentId,timestamp,summary,firstKeptEntryId,tokensBefore,fromHook"
    );
    assert_eq!(js(&lines[5]).get("id"), Some(&JsValue::from(c.as_str())));
}

/// A message appended from the typed model converts through `session_format::json::to_value`.
#[test]
fn typed_messages_are_accepted() {
    let mut sm = SessionManager::in_memory("/p");
    let msg = session_format::Message::user_text("typed", 5);
    let id = sm.append_message(&msg).unwrap();
    let v = sm.get_entry(&id).unwrap().value().unwrap();
    assert_eq!(
        to_json_string(v.get("message").unwrap()),
        r#"{"role":"user","content":[{"type":"text","text":"typed"}],"timestamp":5}"#
    );
    let entry = sm.get_entry(&id).unwrap().to_entry().unwrap();
    assert_eq!(entry.id(), id);
}
