//! The channel of a session survives OpenClaw 2026.9.6's import: its doctor moves a legacy
//! entry's `"channel":"telegram"` into `delivery` (`route.channel`, `context.channel`,
//! `origin.provider`) in `session_nodes.entry_json`, and `sessions list --json` on the imported
//! store still shows `telegram`, as it did on the legacy store. 2026.9.6 reads such an entry's
//! channel as `delivery.context.channel ?? delivery.origin.provider`; its own `openclaw sessions
//! --json` prints no channel field at all (pinned here, with the key and session id it lists).
//! Needs the real OpenClaw 2026.9.6 (`OPENCLAW96_REF_DIR`, else
//! `target/conformance-ref/openclaw96`); skipped with a printed reason without it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::Path;

use serde_json::Value;
use session_test_support::Openclaw96Cli;

use crate::support::{cmd, plant, tempdir};

const ID: &str = "cccccccc-0000-4000-8000-000000000001";
const KEY: &str = "agent:main:telegram:direct:42";

fn legacy_store(state: &Path) {
    let dir = state.join("agents/main/sessions");
    plant(
        &dir.join(format!("{ID}.jsonl")),
        format!(
            "{}\n{}\n",
            format_args!(
                r#"{{"type":"session","version":3,"id":"{ID}","timestamp":"2026-07-01T10:00:00.000Z","cwd":"/tmp/w"}}"#
            ),
            r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-07-01T10:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1782900001000}}"#
        )
        .as_bytes(),
    );
    plant(
        &dir.join("sessions.json"),
        format!(
            r#"{{"{KEY}":{{"sessionId":"{ID}","updatedAt":1782900001000,"sessionFile":"{ID}.jsonl","channel":"telegram","chatType":"direct"}}}}
"#
        )
        .as_bytes(),
    );
}

fn our_list(root: &Path) -> Value {
    let out = cmd()
        .args(["list", "--json", "--root"])
        .arg(root)
        .args(["--now", "2026-07-02T00:00:00Z"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn row_facts(list: &Value) -> Vec<(String, String, Value)> {
    list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["key"].as_str().unwrap().to_owned(),
                r["sessionId"].as_str().unwrap().to_owned(),
                r["channel"].clone(),
            )
        })
        .collect()
}

#[test]
fn the_channel_moved_into_delivery_by_the_96_import_is_still_listed() {
    let test = "the_channel_moved_into_delivery_by_the_96_import_is_still_listed";
    let Some(cli) = Openclaw96Cli::find(test) else {
        return;
    };
    let dir = tempdir();
    let state = dir.path().join("state");
    legacy_store(&state);
    let root = state.clone();
    let before = row_facts(&our_list(&root));
    assert_eq!(
        before,
        [(KEY.to_owned(), ID.to_owned(), Value::from("telegram"))]
    );

    let out = cli.run_doctor(&state, &["--session-sqlite", "import", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The premise: the real doctor wrote the new shape, with no top-level channel.
    let db = state.join("agents/main/agent/openclaw-agent.sqlite");
    let conn =
        rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let entry: String = conn
        .query_row(
            "SELECT entry_json FROM session_nodes WHERE session_key = ?1",
            [KEY],
            |r| r.get(0),
        )
        .unwrap();
    drop(conn);
    let entry: Value = serde_json::from_str(&entry).unwrap();
    assert_eq!(entry.get("channel"), None, "{entry}");
    assert_eq!(
        entry["delivery"],
        serde_json::json!({"kind":"external","route":{"channel":"telegram"},"context":{"channel":"telegram"},"origin":{"provider":"telegram"}})
    );

    let after = row_facts(&our_list(&root));
    assert_eq!(after, before);

    // 2026.9.6's own listing of the same store: the same key and session id, and no channel.
    let out = cli.run(&state, &["sessions", "--json", "--limit", "all"]);
    assert_eq!(out.status.code(), Some(0));
    let theirs: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = theirs["sessions"].as_array().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["key"], KEY);
    assert_eq!(rows[0]["sessionId"], ID);
    assert_eq!(rows[0].get("channel"), None);
}
