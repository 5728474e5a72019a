//! The error types' conversions: `?` lifts every operation's error into the umbrella
//! `session_store::Error` (the same variant, the same text); a failed write carries its file and
//! its source chain ends in the I/O error; JSON text and plain I/O errors lift too; and the texts
//! of representative errors byte for byte.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::error::Error as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use session_store::test_util::fault::{Errno, Fault, FaultFs, Op};
use session_store::{
    AppendError, BranchError, ContextError, Error, FileStorage, ForkError, ListError, LockError,
    LockOptions, NameError, NameKind, OpenError, OpenParams, ReadError, RemoveError, RowLocation,
    SessionManager, SessionWriteLock, Storage, validate_name,
};

const HEADER: &str = r#"{"type":"session","version":3,"id":"0195f000-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work"}"#;
const USER: &str = r#"{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#;
const ASSISTANT: &str = r#"{"type":"message","id":"b2c3d4e5","parentId":"a1b2c3d4","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"timestamp":2}}"#;
const NULL_MESSAGE: &str = r#"{"type":"message","id":"c3d4e5f6","parentId":"b2c3d4e5","timestamp":"2026-01-01T00:00:03.000Z","message":null}"#;
const NUMERIC_NAME: &str = r#"{"type":"session_info","id":"d4e5f6a7","parentId":"b2c3d4e5","timestamp":"2026-01-01T00:00:03.000Z","name":7}"#;

/// A session file of `rows` (one per line) in `dir`.
fn session(dir: &Path, name: &str, rows: &[&str]) -> PathBuf {
    let path = dir.join(name);
    let mut text = String::new();
    for r in rows {
        text.push_str(r);
        text.push('\n');
    }
    session_store::io::write_raw(&path, text.as_bytes()).unwrap();
    path
}

/// `r` through `?` into the umbrella error.
fn lift<T, E>(r: Result<T, E>) -> Result<T, Error>
where
    Error: From<E>,
{
    Ok(r?)
}

/// `r`'s error, through `?`, with the text it had before.
fn lifted<T: std::fmt::Debug, E: std::fmt::Display>(r: Result<T, E>) -> Error
where
    Error: From<E>,
{
    let text = r
        .as_ref()
        .map(|_| ())
        .map_err(ToString::to_string)
        .unwrap_err();
    let e = lift(r).unwrap_err();
    assert_eq!(e.to_string(), text);
    e
}

#[test]
fn question_mark_lifts_every_operation_error_into_the_umbrella() {
    let dir = tempfile::tempdir().unwrap();
    let file = session(dir.path(), "s.jsonl", &[HEADER, USER, ASSISTANT]);
    let missing = dir.path().join("missing.jsonl");

    let e = lifted(SessionManager::open_read_only(&missing, None).map(|_| ()));
    assert!(
        matches!(&e, Error::Open(OpenError::NotFound { path }) if *path == missing),
        "{e:?}"
    );

    let mut ro = SessionManager::open_read_only(&file, None).unwrap().session;
    let e = lifted(ro.append_custom_entry("x", None));
    assert!(
        matches!(&e, Error::Append(AppendError::ReadOnly { path }) if *path == file),
        "{e:?}"
    );
    let e = lifted(ro.remove_trailing_entries(|_| true, None));
    assert!(
        matches!(&e, Error::Remove(RemoveError::ReadOnly { path }) if *path == file),
        "{e:?}"
    );

    let mut sm = SessionManager::open(&file, None, None).unwrap();
    let e = lifted(sm.branch("nope"));
    assert!(
        matches!(&e, Error::Branch(BranchError::EntryNotFound { id }) if id == "nope"),
        "{e:?}"
    );

    let bad = session(
        dir.path(),
        "null.jsonl",
        &[HEADER, USER, ASSISTANT, NULL_MESSAGE],
    );
    let sm = SessionManager::open_read_only(&bad, None).unwrap().session;
    let e = lifted(sm.build_session_context().map(|_| ()));
    assert!(
        matches!(&e, Error::Context(ContextError::InvalidMessage { id, missing: false, .. }) if id == "c3d4e5f6"),
        "{e:?}"
    );

    let named = session(
        dir.path(),
        "named.jsonl",
        &[HEADER, USER, ASSISTANT, NUMERIC_NAME],
    );
    let sm = SessionManager::open_read_only(&named, None)
        .unwrap()
        .session;
    let e = lifted(sm.get_session_name());
    assert!(
        matches!(&e, Error::Name(NameError::NonStringName { id, .. }) if id == "d4e5f6a7"),
        "{e:?}"
    );

    let empty = session(dir.path(), "empty.jsonl", &[]);
    let e = lifted(SessionManager::fork_from(&empty, "/work", Some(dir.path())).map(|_| ()));
    assert!(
        matches!(&e, Error::Fork(ForkError::InvalidSource { path }) if *path == empty),
        "{e:?}"
    );

    let not_a_dir = session(dir.path(), "plain.txt", &["x"]);
    let e = lifted(session_store::list_all(&not_a_dir).map(|_| ()));
    assert!(
        matches!(&e, Error::List(ListError::ReadDir { path, .. }) if *path == not_a_dir),
        "{e:?}"
    );

    let source = session_format::json::parse_value(b"{").unwrap_err();
    let e = lifted::<(), _>(Err(ReadError {
        at: RowLocation::default(),
        source,
    }));
    assert!(matches!(&e, Error::Read(_)), "{e:?}");

    let e = lifted(validate_name(NameKind::SessionId, "a/b"));
    assert!(
        matches!(&e, Error::InvalidName(n) if n.value == "a/b" && n.kind == NameKind::SessionId),
        "{e:?}"
    );

    let options = LockOptions {
        timeout: Some(Duration::from_millis(50)),
        ..LockOptions::default()
    };
    let _held = SessionWriteLock::acquire(&file, &options).unwrap();
    let other = std::thread::spawn(move || {
        lift(SessionWriteLock::acquire(&file, &options).map(|_| ())).unwrap_err()
    })
    .join()
    .unwrap();
    assert!(
        matches!(&other, Error::Lock(LockError::Timeout { .. })),
        "{other:?}"
    );
}

#[test]
fn a_failed_write_names_its_file_and_its_chain_ends_in_the_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = session(dir.path(), "s.jsonl", &[HEADER, USER, ASSISTANT]);
    let fs = Arc::new(FaultFs::new());
    let storage: Arc<dyn Storage> = Arc::new(FileStorage::with_fs(fs.clone()));
    let mut sm = SessionManager::on(storage)
        .open_with(&file, &OpenParams::default())
        .unwrap();
    fs.arm(Some(Fault::Fail {
        op: Op::Write,
        nth: 0,
        errno: Errno::NoSpace,
    }));
    let err = sm.append_custom_entry("lost", None).unwrap_err();
    assert!(fs.fired());
    let AppendError::Write { source } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(source.path, file);
    assert_eq!(source.kind(), std::io::ErrorKind::StorageFull);
    assert_eq!(source.error.raw_os_error(), Some(28));

    // The chain: the operation's text naming the file, then the I/O error once.
    let mut chain = vec![err.to_string()];
    let mut next = err.source();
    while let Some(e) = next {
        chain.push(e.to_string());
        next = e.source();
    }
    assert_eq!(
        chain,
        [
            format!("cannot write session file {}", file.display()),
            "No space left on device (os error 28)".to_owned(),
        ]
    );
    // Through the umbrella: the same text and the same chain.
    let umbrella = Error::from(err);
    assert_eq!(
        umbrella.to_string(),
        format!("cannot write session file {}", file.display())
    );
    assert_eq!(
        umbrella.source().map(ToString::to_string).as_deref(),
        Some("No space left on device (os error 28)")
    );
    assert!(matches!(umbrella, Error::Append(AppendError::Write { .. })));
}

#[test]
fn representative_texts_are_byte_exact() {
    let dir = tempfile::tempdir().unwrap();
    let file = session(dir.path(), "s.jsonl", &[HEADER, USER, ASSISTANT]);
    let mut sm = SessionManager::open(&file, None, None).unwrap();
    assert_eq!(
        sm.branch("nope").unwrap_err().to_string(),
        "Entry nope not found"
    );
    assert_eq!(
        SessionManager::fork_from(Path::new("/nonexistent/s.jsonl"), "/work", Some(dir.path()))
            .unwrap_err()
            .to_string(),
        "Cannot fork: source session file is empty or invalid: /nonexistent/s.jsonl"
    );
    assert_eq!(
        validate_name(NameKind::SessionId, "a/b")
            .unwrap_err()
            .to_string(),
        r#"invalid session id "a/b": contains '/'"#
    );
}

#[test]
fn json_text_and_plain_io_errors_lift_into_the_umbrella_too() {
    fn payload(text: &[u8]) -> Result<session_format::json::JsValue, Error> {
        Ok(session_format::json::parse_value(text)?)
    }
    fn read(path: &Path) -> Result<Vec<u8>, Error> {
        Ok(std::fs::read(path)?)
    }
    let e = payload(br#"{"role":"user","#).unwrap_err();
    assert!(
        matches!(
            &e,
            Error::Json(session_format::json::JsonError {
                offset: 15,
                kind: session_format::json::JsonErrorKind::UnexpectedEnd
            })
        ),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "unexpected end of input at byte 15");
    let dir = tempfile::tempdir().unwrap();
    let e = read(&dir.path().join("missing.jsonl")).unwrap_err();
    let Error::Io(io) = &e else { panic!("{e:?}") };
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    assert_eq!(e.to_string(), "No such file or directory (os error 2)");
}
