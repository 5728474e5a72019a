//! The op-script runner's own conventions (OPS.md; `xtask/conformance/runner.mjs`): bindings,
//! error records, `expectError`, unknown ops, and normalisation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use session_format::json::to_json_string;

/// OPS.md: `$name` bindings, `{op, error}` records (`"error"` with `expectError`),
/// `{op, unexpectedSuccess: true}`, unknown ops and missing managers.
#[test]
fn runner_records_errors_and_unexpected_successes() {
    let script = br#"{"name":"t","cwd":"/c","ops":[
        {"op":"appendMessage","message":{"role":"user","content":"x"}},
        {"op":"inMemory"},
        {"op":"appendMessage","as":"u","message":{"role":"user","content":"q","timestamp":1}},
        {"op":"branch","id":"$u","expectError":true},
        {"op":"branch","id":"nope"},
        {"op":"branch","id":"nope","expectError":true},
        {"op":"frobnicate"},
        {"op":"snapshot","label":"s"}
    ]}"#;
    let dir = crate::support::tempdir();
    let out = session_store::test_util::replay::run_script(
        session_store::FileStorage::shared(),
        script,
        dir.path(),
    )
    .unwrap();
    let text = to_json_string(&out.results);
    let id = out.results.as_array().unwrap()[5]
        .get("snapshot")
        .unwrap()
        .get("leafId")
        .unwrap()
        .as_str_lossy()
        .unwrap()
        .into_owned();
    let prefix = format!(
        concat!(
            r#"[{{"op":0,"error":"no session manager (the script has not created or opened one)"}},"#,
            r#"{{"op":3,"unexpectedSuccess":true}},"#,
            r#"{{"op":4,"error":"Entry nope not found"}},"#,
            r#"{{"op":5,"error":"error"}},"#,
            r#"{{"op":6,"error":"unknown op \"frobnicate\""}},"#,
            r#"{{"snapshot":{{"label":"s","file":null,"leafId":"{id}","header":"#
        ),
        id = id
    );
    assert!(text.starts_with(&prefix), "{text}");
    assert!(text.ends_with(&format!(
        r#""context":{{"messages":[{{"role":"user","content":"q","timestamp":1}}],"thinkingLevel":"off","model":null}},"sessionName":null,"branch":["{id}"]}}}}]"#
    )), "{text}");
    let normalized = session_store::test_util::replay::run_script_normalized(
        session_store::FileStorage::shared(),
        script,
        dir.path(),
    )
    .unwrap();
    assert!(normalized.starts_with("[\n {\n  \"op\": 0,"));
    assert!(normalized.contains("\"leafId\": \"#1\""));
    assert!(normalized.ends_with("]\n"));
}

/// Getter failures during a snapshot become `{op, error}` with the reference's message texts
/// (FINDINGS e).
#[test]
fn snapshot_getter_failures_use_reference_texts() {
    let header = crate::support::HEADER.replace('"', "\\\"");
    let script = format!(
        r#"{{"ops":[
        {{"op":"writeFile","file":"n.jsonl","content":"{header}\n{{\"type\":\"message\",\"id\":\"x1\",\"parentId\":null,\"message\":null}}\n"}},
        {{"op":"open","file":"n.jsonl"}},
        {{"op":"snapshot"}},
        {{"op":"writeFile","file":"i.jsonl","content":"{header}\n{{\"type\":\"session_info\",\"id\":\"x1\",\"parentId\":null,\"name\":42}}\n"}},
        {{"op":"open","file":"i.jsonl"}},
        {{"op":"snapshot","expectError":true}},
        {{"op":"snapshot"}}
    ]}}"#
    );
    let dir = crate::support::tempdir();
    let out = session_store::test_util::replay::run_script(
        session_store::FileStorage::shared(),
        script.as_bytes(),
        dir.path(),
    )
    .unwrap();
    assert_eq!(
        to_json_string(&out.results),
        r#"[{"op":2,"error":"Cannot read properties of null (reading 'role')"},{"op":5,"error":"error"},{"op":6,"error":"entry.name?.trim is not a function"}]"#
    );
}
