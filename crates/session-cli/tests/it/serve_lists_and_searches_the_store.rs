//! `sessions serve`: the dashboard's listing of an OpenClaw store (agents → sessions with key,
//! kind, model, tokens, time, size, messages) and of a plain directory, and the store-wide
//! search, as the JSON APIs give them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use crate::support::serve::Server;
use crate::support::{plant, small_session, tempdir};

#[test]
fn a_plain_directory_is_listed_file_by_file_and_searched() {
    let dir = tempdir();
    let file = dir.path().join("s1.jsonl");
    plant(&file, &small_session());
    let size = std::fs::metadata(&file).unwrap().len();
    let d = dir.path().to_str().unwrap();
    let srv = Server::start(dir.path(), &["--dir", d]);
    let r = srv.get("/api/sessions");
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("content-type"),
        Some("application/json; charset=utf-8")
    );
    let doc = r.json();
    let modified = doc["agents"][0]["sessions"][0]["updatedAt"].clone();
    assert_eq!(
        doc,
        json!({"readOnly": true, "agents": [{
            "agent": "-", "dir": d, "store": false,
            "sessions": [{
                "key": null, "kind": null, "session": "s1", "sessionId": "sess-0001",
                "model": null, "tokens": null, "updatedAt": modified, "size": size,
                "messages": 3, "path": file.to_str().unwrap()
            }]
        }]})
    );
    assert!(modified.as_f64().unwrap() > 0.0);

    let r = srv.get("/api/search?q=THERE");
    assert_eq!(r.status, 200);
    assert_eq!(
        r.json(),
        json!({"hits": [{
            "agent": "-", "session": "s1", "sessionId": "sess-0001", "line": 3,
            "entryId": "a2", "type": "message", "role": "assistant",
            "timestamp": "2026-01-01T00:00:01.000Z", "onCurrentBranch": true, "field": "text",
            "before": "hi ", "match": "there", "after": ""
        }], "truncated": false})
    );
    let r = srv.get("/api/search?q=h%28i&regex=1");
    assert_eq!(r.status, 400, "{}", r.text());
    let r = srv.get("/api/search");
    assert_eq!(
        (r.status, r.text().as_str()),
        (400, "missing q (the text to search for)\n")
    );
}

#[test]
fn an_openclaw_store_is_listed_by_key_per_agent() {
    let root = tempdir();
    let demo = crate::support::run_in(root.path(), ["demo", "--root", "store"]);
    assert_eq!(demo.code, 0, "{}", demo.stderr);
    let store = root.path().join("store");
    let list = crate::support::run_in(
        root.path(),
        [
            "list",
            "--root",
            store.to_str().unwrap(),
            "--json",
            "--limit",
            "all",
        ],
    );
    assert_eq!(list.code, 0, "{}", list.stderr);
    let list: Value = serde_json::from_str(&list.stdout).unwrap();
    let srv = Server::start(root.path(), &["--root", store.to_str().unwrap()]);
    let doc = srv.get("/api/sessions").json();
    let agents = doc["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 1);
    assert_eq!(agents[0]["agent"], json!("main"));
    assert_eq!(agents[0]["store"], json!(true));
    // The rows are `sessions list --json`'s, in its order.
    let ours: Vec<Value> = agents[0]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            json!([
                s["key"],
                s["kind"],
                s["sessionId"],
                s["tokens"],
                s["updatedAt"],
                s["size"],
                s["messages"],
                s["model"]
            ])
        })
        .collect();
    let theirs: Vec<Value> = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            json!([
                s["key"],
                s["kind"],
                s["sessionId"],
                s["totalTokens"],
                s["updatedAt"],
                s["size"],
                s["messages"],
                format!(
                    "{}/{}",
                    s["modelProvider"].as_str().unwrap(),
                    s["model"].as_str().unwrap()
                )
            ])
        })
        .collect();
    assert_eq!(ours, theirs);
    assert_eq!(ours.len(), 3);
    // Each session's page opens.
    for s in agents[0]["sessions"].as_array().unwrap() {
        let name = s["session"].as_str().unwrap();
        let r = srv.get(&format!("/s/main/{name}"));
        assert_eq!(r.status, 200, "{name}");
        assert!(
            r.text()
                .contains(&format!("data-api=\"/api/s/main/{name}\""))
        );
    }
}
