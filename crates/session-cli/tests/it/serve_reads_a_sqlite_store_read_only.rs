//! `sessions serve` over an OpenClaw 2026.9.6 SQLite install (a copy of
//! `shared/fixtures/openclaw-9.6-sqlite`, skipped without it): every key is listed, every
//! session's page and rows are read from the database (the rows OpenClaw stored, byte for
//! byte), the database is never changed, and `--allow-write` is refused before anything starts.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use crate::support::serve::Server;
use crate::support::{plant, run_in, shared_dir, tempdir};

fn sha256(path: &std::path::Path) -> String {
    use sha2::{Digest, Sha256};
    format!("{:x}", Sha256::digest(std::fs::read(path).unwrap()))
}

#[test]
fn a_sqlite_store_is_served_from_the_database_and_never_written() {
    let test = "a_sqlite_store_is_served_from_the_database_and_never_written";
    let Some(shared) = shared_dir(test) else {
        return;
    };
    let fx = shared.join("fixtures/openclaw-9.6-sqlite");
    let root = tempdir();
    let state = root.path().join("state");
    let db = state.join("agents/main/agent/openclaw-agent.sqlite");
    plant(
        &db,
        &std::fs::read(fx.join("db/openclaw-agent.sqlite")).unwrap(),
    );
    let before = sha256(&db);
    let st = state.to_str().unwrap();

    let refused = run_in(root.path(), ["serve", "--root", st, "--allow-write"]);
    assert_eq!(refused.code, 2);
    assert_eq!(
        refused.stderr,
        "error: --allow-write writes session files; this store is read through --backend (or \
         is an OpenClaw 2026.8+ SQLite store) and is served read-only: leave out --allow-write\n"
    );

    let srv = Server::start(root.path(), &["--root", st]);
    let doc = srv.get("/api/sessions").json();
    let agents = doc["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 1);
    assert_eq!(
        (&agents[0]["agent"], &agents[0]["store"]),
        (&json!("main"), &json!(true))
    );
    let sessions = agents[0]["sessions"].as_array().unwrap();
    let mut by_id = std::collections::BTreeMap::new();
    for s in sessions {
        by_id.insert(s["sessionId"].as_str().unwrap().to_owned(), s.clone());
    }
    let mut checked = 0;
    for entry in std::fs::read_dir(fx.join("expected")).unwrap() {
        let p = entry.unwrap().path();
        let Some(name) = p
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .strip_suffix(".meta.json")
        else {
            continue;
        };
        let meta: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        let id = meta["sessionId"].as_str().unwrap();
        let row = by_id.get(id).unwrap_or_else(|| panic!("{id} not listed"));
        assert_eq!(row["key"], meta["sessionKey"], "{name}");
        assert_eq!(row["session"], json!(id), "{name}");
        let page = srv.get(&format!("/s/main/{id}"));
        assert_eq!(page.status, 200, "{name}: {}", page.text());
        assert!(page.text().contains("data-write=\"0\""), "{name}");
        let rows = srv.get(&format!("/api/s/main/{id}/rows?since=0")).json();
        let stored =
            std::fs::read_to_string(fx.join(format!("expected/{name}.lines.jsonl"))).unwrap();
        let stored: Vec<&str> = stored.lines().collect();
        let got: Vec<&str> = rows["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        assert_eq!(got, stored, "{name}");
        checked += 1;
    }
    assert_eq!(checked, sessions.len());
    assert!(checked >= 3, "{checked}");
    drop(srv);
    assert_eq!(sha256(&db), before);
}
