//! Entry counts over duplicate ids: `entry_count`, `get_unique_entries` and the listing's
//! `unique_message_count` count each entry id once, the last row with an id deciding what it
//! is (the row every lookup returns, docs/DEVIATIONS.md D3); `entry_row_count`,
//! `get_entries` and `SessionInfo::message_count` (the reference's `messageCount`) keep
//! counting rows. `SessionInfo::all_messages_text` reads the reference's full text on demand.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use session_format::entry::EntryType;
use session_store::SessionManager;

/// `u1` on two message rows; `a1` on a message, then on a label (its last row); `m3` once.
const DUPLICATES: &str = concat!(
    r#"{"type":"session","version":3,"id":"s-dup","timestamp":"2026-01-02T09:00:00.000Z","cwd":"/w"}"#,
    "\n",
    r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-02T09:00:01.000Z","message":{"role":"user","content":"hello","timestamp":1767344401000}}"#,
    "\n",
    r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-02T09:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hi"}],"timestamp":1767344402000}}"#,
    "\n",
    r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-02T09:00:03.000Z","message":{"role":"user","content":"again","timestamp":1767344403000}}"#,
    "\n",
    r#"{"type":"label","id":"a1","parentId":"u1","timestamp":"2026-01-02T09:00:04.000Z","targetId":"u1","label":"x"}"#,
    "\n",
    r#"{"type":"message","id":"m3","parentId":"u1","timestamp":"2026-01-02T09:00:05.000Z","message":{"role":"user","content":"third","timestamp":1767344405000}}"#,
    "\n",
);

/// A version 1 file: its migration gives every row a new id, so both `message` rows (which
/// carry the same id in the file) are entries of their own.
const V1: &str = concat!(
    r#"{"type":"session","id":"s-v1","timestamp":"2026-01-02T09:00:00.000Z","cwd":"/w"}"#,
    "\n",
    r#"{"type":"message","id":"x","timestamp":"2026-01-02T09:00:01.000Z","message":{"role":"user","content":"one","timestamp":1767344401000}}"#,
    "\n",
    r#"{"type":"message","id":"x","timestamp":"2026-01-02T09:00:02.000Z","message":{"role":"assistant","content":"two","timestamp":1767344402000}}"#,
    "\n",
);

fn plant(dir: &std::path::Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    session_store::io::write_raw(&path, text.as_bytes()).unwrap();
    path
}

#[test]
fn entries_are_counted_once_per_id_and_rows_stay_countable() {
    let dir = tempfile::tempdir().unwrap();
    let path = plant(dir.path(), "dup.jsonl", DUPLICATES);
    for sm in [
        SessionManager::open_read_only(&path, None).unwrap().session,
        SessionManager::open(&path, None, None).unwrap(),
    ] {
        assert_eq!((sm.entry_count(), sm.entry_row_count()), (3, 5));
        assert_eq!(sm.get_entries().count(), 5);
        let unique: Vec<(&str, EntryType, Option<usize>)> = sm
            .get_unique_entries()
            .map(|e| (e.id(), e.entry_type(), e.location().line))
            .collect();
        assert_eq!(
            unique,
            [
                ("u1", EntryType::Message, Some(4)),
                ("a1", EntryType::Label, Some(5)),
                ("m3", EntryType::Message, Some(6)),
            ]
        );
        // Each unique entry is the one the lookup returns.
        for e in sm.get_unique_entries() {
            assert_eq!(sm.get_entry(e.id()).unwrap().location(), e.location());
        }
    }
    let info = session_store::session_info(&path).unwrap();
    assert_eq!(
        (
            info.message_count,
            info.unique_message_count,
            info.first_message.as_str()
        ),
        (4, 2, "hello")
    );
    assert_eq!(info.all_messages_text().unwrap(), "hello hi again third");
    let listed = SessionManager::list("/w", Some(dir.path())).unwrap();
    assert_eq!(listed, vec![info]);
}

#[test]
fn a_version_1_file_counts_every_message_row() {
    let dir = tempfile::tempdir().unwrap();
    let path = plant(dir.path(), "v1.jsonl", V1);
    let sm = SessionManager::open_read_only(&path, None).unwrap().session;
    assert_eq!((sm.entry_count(), sm.entry_row_count()), (2, 2));
    let info = session_store::session_info(&path).unwrap();
    assert_eq!((info.message_count, info.unique_message_count), (2, 2));
    assert_eq!(info.all_messages_text().unwrap(), "one two");
}

/// The full text is read when asked, from the file as it is then; a file that is no longer a
/// listable session gives a typed error naming it.
#[test]
fn the_full_text_is_read_on_demand() {
    let dir = tempfile::tempdir().unwrap();
    let path = plant(dir.path(), "dup.jsonl", DUPLICATES);
    let info = session_store::session_info(&path).unwrap();
    session_store::io::append_raw(
        &path,
        concat!(
            r#"{"type":"message","id":"m4","parentId":"m3","timestamp":"2026-01-02T09:00:06.000Z","message":{"role":"assistant","content":"later"}}"#,
            "\n"
        )
        .as_bytes(),
    )
    .unwrap();
    assert_eq!(
        info.all_messages_text().unwrap(),
        "hello hi again third later"
    );
    session_store::io::write_raw(&path, b"not a session\n").unwrap();
    let err = info.all_messages_text().unwrap_err();
    assert!(
        matches!(&err, session_store::MessagesTextError::NotListable { path: p } if *p == path),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!("{} is no longer a listable session", path.display())
    );
    session_store::io::remove_file(&path).unwrap();
    let err = info.all_messages_text().unwrap_err();
    assert!(
        matches!(&err, session_store::MessagesTextError::Read { path: p, source } if *p == path && source.kind() == std::io::ErrorKind::NotFound),
        "{err:?}"
    );
    // Through a storage: the same text, read from there.
    let mem = std::sync::Arc::new(session_store::MemStorage::default());
    let p = std::path::Path::new("/mem/s.jsonl");
    session_store::Storage::ensure_dir(&*mem, std::path::Path::new("/mem")).unwrap();
    session_store::Storage::create_new(&*mem, p, DUPLICATES.as_bytes()).unwrap();
    let sessions = SessionManager::on(mem);
    let listed = sessions
        .list("/w", Some(std::path::Path::new("/mem")))
        .unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].unique_message_count, 2);
    assert_eq!(
        sessions.all_messages_text(&listed[0]).unwrap(),
        "hello hi again third"
    );
}
