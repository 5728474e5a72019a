//! A [`SessionManager`] on Redis while other gateways write, against a real
//! `redis-server` started by [`LocalRedisServer`] (skipped with a printed reason only when no
//! binary exists):
//! - a writable open reads the bytes and their version in one `MULTI`
//!   ([`Storage::read_snapshot`]), so another gateway appending right after the read does not
//!   make it fail with `ChangedWhileLoading` (it did with stat-read-stat);
//! - a full rewrite is fenced ([`Storage::replace_if`] → the replace script's version fence):
//!   another gateway's acknowledged append between the rewrite's check and its replace is kept
//!   (`fence_common`), and a rewrite that loses the race every time gives up with an error,
//!   its state and the other gateway's lines intact;
//! - odd sessions (torn tails, CRLF, a BOM, empty, invalid UTF-8, odd names) open and take
//!   appends on Redis exactly as on files.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

mod fence_common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use session_format::json::{JsValue, parse_value};
use session_store::redis_store::RedisStorage;
use session_store::test_util::redis_server::LocalRedisServer;
use session_store::{FileStorage, OpenError, OpenParams, SessionManager, Storage};
use session_store::{Replace, SnapshotRead};

const HEADER: &str = r#"{"type":"session","version":3,"id":"abc","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}"#;
const USER: &str = r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#;

fn user(i: usize) -> JsValue {
    parse_value(format!(r#"{{"role":"user","content":"u{i}","timestamp":{i}}}"#).as_bytes())
        .unwrap()
}

fn assistant(i: usize) -> JsValue {
    parse_value(
        format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":"a{i}"}}],"api":"t","provider":"t","model":"m","stopReason":"stop","timestamp":{i}}}"#
        )
        .as_bytes(),
    )
    .unwrap()
}

#[test]
fn a_writable_open_on_redis_survives_an_append_right_after_its_read() {
    let Some(server) = LocalRedisServer::start_or_skip("redis_manager") else {
        return;
    };
    let path = PathBuf::from("/gateways/busy/s.jsonl");
    let gateway = RedisStorage::connect(&server.url(), Some("busy")).unwrap();
    gateway
        .create(&path, format!("{HEADER}\n{USER}\n").as_bytes())
        .unwrap();
    // Another gateway appends one line right after each read of the open (as a steady writer
    // does while a large session is being transferred).
    let other = gateway.clone();
    let mut n = 0;
    session_store::test_util::hooks::set_after_read(
        &path,
        Some(Box::new(move |_| {
            n += 1;
            let line = format!(
                r#"{{"type":"custom","customType":"other-gateway","data":{n},"id":"o{n}","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z"}}"#
            );
            Storage::append_line(
                &other,
                Path::new("/gateways/busy/s.jsonl"),
                line.as_bytes(),
                session_store::Durability::Buffer,
                None,
            )
            .unwrap();
        })),
    );
    let storage: Arc<dyn Storage> = Arc::new(gateway);
    let opened = SessionManager::on(storage).open_with(&path, &OpenParams::default());
    session_store::test_util::hooks::set_after_read(&path, None);
    // The bytes and their version come from one MULTI: the open has a consistent snapshot
    // and adopts the later lines on its first append, as it does for any foreign append.
    let sm = match opened {
        Ok(sm) => sm,
        Err(e @ OpenError::ChangedWhileLoading { .. }) => {
            panic!("a Redis open failed although its read was atomic: {e}")
        }
        Err(e) => panic!("{e}"),
    };
    let ids: Vec<String> = sm.get_entries().map(|e| e.id().to_owned()).collect();
    assert_eq!(ids, ["a1"]);
}

/// Masks the values of `"id"`, `"parentId"` and `"timestamp"` strings (fresh on every run).
fn mask(bytes: &[u8]) -> String {
    let mut text = String::from_utf8_lossy(bytes).into_owned();
    for key in ["\"id\":\"", "\"parentId\":\"", "\"timestamp\":\""] {
        let mut out = String::with_capacity(text.len());
        let mut rest = text.as_str();
        while let Some(at) = rest.find(key) {
            out.push_str(&rest[..at + key.len()]);
            rest = &rest[at + key.len()..];
            out.push('X');
            rest = &rest[rest.find('"').unwrap_or(rest.len())..];
        }
        out.push_str(rest);
        text = out;
    }
    text
}

/// Open, two appends, reopen, one append; the session's bytes and the session names of its
/// directory (conflict and corrupt backups carry a time and random hex: cut there).
fn exercise(storage: Arc<dyn Storage>, path: &Path) -> (String, Vec<String>, usize) {
    let params = OpenParams {
        fallback_cwd: Some("/fallback".to_owned()),
        ..OpenParams::default()
    };
    let mut sm = SessionManager::on(Arc::clone(&storage))
        .open_with(path, &params)
        .unwrap();
    sm.append_message(user(1)).unwrap();
    sm.append_message(assistant(2)).unwrap();
    drop(sm);
    let mut sm = SessionManager::on(Arc::clone(&storage))
        .open_with(path, &params)
        .unwrap();
    sm.append_message(user(3)).unwrap();
    let entries = sm.get_entries().count();
    let mut names: Vec<String> = storage
        .list_sessions(path.parent().unwrap())
        .unwrap()
        .iter()
        .map(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            match n.find(".conflict-").or_else(|| n.find(".corrupt-")) {
                Some(at) => format!("{}.backup", &n[..at]),
                None => n,
            }
        })
        .collect();
    names.sort();
    (mask(&storage.read_all(path).unwrap()), names, entries)
}

#[test]
fn odd_sessions_open_and_append_on_redis_as_on_files() {
    let Some(server) = LocalRedisServer::start_or_skip("redis_manager") else {
        return;
    };
    let redis: Arc<dyn Storage> =
        Arc::new(RedisStorage::connect(&server.url(), Some("odd")).unwrap());
    let tmp = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "torn.jsonl",
            format!("{HEADER}\n{USER}\n{{\"type\":\"mess").into_bytes(),
        ),
        ("crlf.jsonl", format!("{HEADER}\r\n{USER}\r\n").into_bytes()),
        ("bom.jsonl", format!("\u{feff}{HEADER}\n").into_bytes()),
        ("empty.jsonl", Vec::new()),
        ("blank.jsonl", b"   \n \n".to_vec()),
        ("nonl.jsonl", b"no newline at all".to_vec()),
        (
            "utf8.jsonl",
            [HEADER.as_bytes(), b"\n\xff\xfe bad \x80\n{\"x\":1}\n"].concat(),
        ),
        ("{brace}%25 x:y.jsonl", format!("{HEADER}\n").into_bytes()),
        ("x}:index.jsonl", format!("{HEADER}\n").into_bytes()),
        (
            "ünï cødé 日本.jsonl",
            format!("{HEADER}\n{USER}\n").into_bytes(),
        ),
    ];
    for (i, (name, bytes)) in cases.iter().enumerate() {
        let fdir = tmp.path().join(format!("c{i}"));
        std::fs::create_dir(&fdir).unwrap();
        let file = fdir.join(name);
        session_store::io::create_new(&file, bytes, None).unwrap();
        let key = PathBuf::from(format!("/gateways/odd/c{i}")).join(name);
        redis.append_raw(&key, bytes).unwrap();
        let on_files = exercise(FileStorage::shared(), &file);
        let on_redis = exercise(Arc::clone(&redis), &key);
        assert_eq!(on_redis, on_files, "{name}");
    }
}

#[test]
fn an_append_between_check_and_replace_survives_a_rewrite_on_redis() {
    let Some(server) = LocalRedisServer::start_or_skip("redis_manager") else {
        return;
    };
    let redis: Arc<dyn Storage> =
        Arc::new(RedisStorage::connect(&server.url(), Some("race")).unwrap());
    fence_common::acknowledged_append_survives_a_full_rewrite(
        redis,
        Path::new("/gateways/race/sessions"),
    );
}

#[test]
fn a_rewrite_that_keeps_losing_the_race_on_redis_gives_up_and_loses_nothing() {
    let Some(server) = LocalRedisServer::start_or_skip("redis_manager") else {
        return;
    };
    let redis: Arc<dyn Storage> =
        Arc::new(RedisStorage::connect(&server.url(), Some("busy")).unwrap());
    fence_common::a_rewrite_that_keeps_losing_the_race_gives_up_and_loses_nothing(
        redis,
        Path::new("/gateways/busy/sessions"),
    );
}

#[test]
fn redis_replaces_only_the_expected_session() {
    let Some(server) = LocalRedisServer::start_or_skip("redis_manager") else {
        return;
    };
    let redis = RedisStorage::connect(&server.url(), Some("fence")).unwrap();
    let path = Path::new("/s/a.jsonl");
    assert_eq!(
        redis.replace_if(path, b"one\n", None).unwrap(),
        Replace::Done
    );
    assert_eq!(
        redis.replace_if(path, b"two\n", None).unwrap(),
        Replace::Refused
    );
    let SnapshotRead::Read { bytes, snapshot } = redis.read_snapshot(path).unwrap() else {
        panic!("stored")
    };
    assert_eq!(bytes, b"one\n");
    assert_eq!(snapshot.size, 4);
    assert_eq!(Some(snapshot), redis.stat(path).unwrap());
    redis.append_raw(path, b"x\n").unwrap();
    assert_eq!(
        redis.replace_if(path, b"three\n", Some(&snapshot)).unwrap(),
        Replace::Refused
    );
    assert_eq!(redis.read_all(path).unwrap(), b"one\nx\n");
    let now = redis.stat(path).unwrap().unwrap();
    assert_eq!(
        redis.replace_if(path, b"three\n", Some(&now)).unwrap(),
        Replace::Done
    );
    assert_eq!(redis.read_all(path).unwrap(), b"three\n");
    let replaced = redis.stat(path).unwrap().unwrap();
    assert_ne!(replaced.ino, now.ino);
    // A snapshot of another backend never matches.
    let mut foreign = replaced;
    foreign.dev = 1;
    assert_eq!(
        redis.replace_if(path, b"four\n", Some(&foreign)).unwrap(),
        Replace::Refused
    );
    redis.remove(path, None).unwrap();
    assert_eq!(
        redis.replace_if(path, b"four\n", Some(&replaced)).unwrap(),
        Replace::Refused
    );
    assert_eq!(redis.read_snapshot(path).unwrap(), SnapshotRead::Missing);
}
