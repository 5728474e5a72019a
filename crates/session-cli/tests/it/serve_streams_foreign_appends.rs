//! `sessions serve`: a line another process appends to a session shows up on the session's
//! event stream within a second, as one `rows` event with exactly the new line; the rows API
//! gives the same lines from an offset; a rewritten (shorter) file ends the stream with
//! `reset`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::serve::Server;
use crate::support::{msg, plant, small_session, tempdir};

#[test]
fn a_foreign_append_arrives_on_the_event_stream_within_a_second() {
    let dir = tempdir();
    let file = dir.path().join("s1.jsonl");
    plant(&file, &small_session());
    let size = std::fs::metadata(&file).unwrap().len();
    let d = dir.path().to_str().unwrap();
    let srv = Server::start(dir.path(), &["--dir", d]);
    let page = srv.get("/s/-/s1").text();
    assert!(page.contains(&format!("data-offset=\"{size}\"")), "offset");
    let line = msg("a4", Some("a3"), "assistant", "appended by the gateway");
    let (data, took) = srv
        .first_event(
            &format!("/api/s/-/s1/events?since={size}"),
            "rows",
            Duration::from_secs(3),
            || {
                session_store::io::append_line(
                    &file,
                    line.as_bytes(),
                    session_store::Durability::default(),
                )
                .unwrap();
            },
        )
        .expect("no rows event within 3 s");
    assert!(took < Duration::from_secs(1), "took {took:?}");
    let new_size = std::fs::metadata(&file).unwrap().len();
    assert_eq!(new_size, size + line.len() as u64 + 1);
    let data: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(
        data,
        json!({"offset": size, "next": new_size, "size": new_size, "rows": [line]})
    );
    // The same from the rows API.
    let r = srv.get(&format!("/api/s/-/s1/rows?since={size}"));
    assert_eq!(r.status, 200);
    assert_eq!(r.json(), data);
    let r = srv.get(&format!("/api/s/-/s1/rows?since={new_size}"));
    assert_eq!(
        r.json(),
        json!({"offset": new_size, "next": new_size, "size": new_size, "rows": []})
    );
}

#[test]
fn a_rewritten_file_ends_the_stream_with_reset() {
    let dir = tempdir();
    let file = dir.path().join("s1.jsonl");
    plant(&file, &small_session());
    let size = std::fs::metadata(&file).unwrap().len();
    let d = dir.path().to_str().unwrap();
    let srv = Server::start(dir.path(), &["--dir", d]);
    let (data, took) = srv
        .first_event(
            &format!("/api/s/-/s1/events?since={size}"),
            "reset",
            Duration::from_secs(3),
            || {
                let shorter = crate::support::lines(&[crate::support::HEADER.to_owned()]);
                session_store::io::atomic_rewrite(&file, &shorter).unwrap();
            },
        )
        .expect("no reset event");
    assert!(took < Duration::from_secs(1), "took {took:?}");
    assert_eq!(data, "the session is shorter than before (rewritten)");
}
