//! `AgentSession` behaviours matched against OpenClaw 2026.6.11: model state after leaf moves,
//! active tools at construction, JavaScript whitespace in prompt normalisation, lone surrogates
//! in conversion, the pairing repair's `changed` flag, another name of the bound file, the
//! truncation cut point and the write lock around case 2b. Goldens that depend on the reference
//! were produced by OpenClaw 2026.6.11 on the same inputs (named in each test).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::common;

use std::sync::Arc;

use agent_session::compaction::{KeepBudget, find_cut_point};
use agent_session::convert::convert_to_llm;
use agent_session::pairing::{PairingOptions, repair_tool_use_result_pairing};
use agent_session::tools::{
    RefreshOptions, SourceInfo, Tool, ToolError, ToolOutput, ToolRuntime,
    normalize_prompt_guidelines, normalize_prompt_snippet,
};
use agent_session::{
    AgentSession, AgentSessionOptions, ModelRef, PrepareOutcome, PrepareParams,
    prepare_session_manager_for_run,
};
use common::json;
use session_format::json::{JsValue, to_json_string};
use session_semantics::policy::HistoryLimits;
use session_store::{SessionManager, io};

#[derive(Debug)]
struct Named(&'static str);

impl Tool for Named {
    fn name(&self) -> &str {
        self.0
    }
    fn description(&self) -> &str {
        "a test tool"
    }
    fn parameters(&self) -> JsValue {
        json(r#"{"type":"object"}"#)
    }
    fn execute(&self, _id: &str, _args: &JsValue) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("ok"))
    }
}

const HEADER: &str =
    r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#;

fn row(id: &str, parent: Option<&str>, rest: &str) -> String {
    let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"{}","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z",{}}}"#,
        if rest.starts_with("\"message\"") {
            "message"
        } else {
            "thinking_level_change"
        },
        rest
    )
}

fn write(dir: &std::path::Path, rows: &[String]) -> std::path::PathBuf {
    let file = dir.join("s.jsonl");
    let mut text = format!("{HEADER}\n");
    for r in rows {
        text.push_str(r);
        text.push('\n');
    }
    io::write_raw(&file, text.as_bytes()).unwrap();
    file
}

fn model(p: &str, m: &str) -> Option<ModelRef> {
    Some(ModelRef {
        provider: p.to_owned(),
        model_id: m.to_owned(),
    })
}

/// The model and thinking level follow the context: after the leaf moves (or entries are
/// appended) through `session_manager_mut`, `model_context` names the branch's model and
/// `set_model`/`set_thinking_level` append the entries the branch needs.
#[test]
fn model_state_follows_the_context_after_leaf_moves() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        &[
            row("u1", None, r#""message":{"role":"user","content":"a"}"#),
            row(
                "a1",
                Some("u1"),
                r#""message":{"role":"assistant","content":[],"provider":"p1","model":"m1","stopReason":"stop"}"#,
            ),
            row("t2", Some("a1"), r#""thinkingLevel":"high""#),
            row(
                "u2",
                Some("t2"),
                r#""message":{"role":"user","content":"b"}"#,
            ),
            row(
                "a2",
                Some("u2"),
                r#""message":{"role":"assistant","content":[],"provider":"p2","model":"m2","stopReason":"stop"}"#,
            ),
        ],
    );
    let sm = SessionManager::open(&file, None, None).unwrap();
    let mut agent = AgentSession::new(sm, AgentSessionOptions::default()).unwrap();
    assert_eq!(agent.model().cloned(), model("p2", "m2"));
    assert_eq!(agent.thinking_level(), "high");
    agent.session_manager_mut().branch("a1").unwrap();
    assert_eq!(agent.model().cloned(), model("p1", "m1"));
    assert_eq!(agent.thinking_level(), "off");
    let ctx = agent.model_context(&HistoryLimits::default()).unwrap();
    assert_eq!(ctx.model, model("p1", "m1"));
    assert_eq!(ctx.thinking_level, "off");
    // Switching this branch to p2/m2 and high must be recorded on it.
    assert!(agent.set_model("p2", "m2").unwrap());
    assert!(agent.set_thinking_level("high").unwrap());
    assert!(!agent.set_model("p2", "m2").unwrap());
    assert!(!agent.set_thinking_level("high").unwrap());
    let text = std::fs::read_to_string(&file).unwrap();
    let tail: Vec<JsValue> = text.lines().skip(6).map(json).collect();
    assert_eq!(tail.len(), 2);
    assert_eq!(tail[0].get("type"), Some(&JsValue::from("model_change")));
    assert_eq!(tail[0].get("parentId"), Some(&JsValue::from("a1")));
    assert_eq!(tail[0].get("modelId"), Some(&JsValue::from("m2")));
    assert_eq!(
        tail[1].get("type"),
        Some(&JsValue::from("thinking_level_change"))
    );
    assert_eq!(tail[1].get("thinkingLevel"), Some(&JsValue::from("high")));
    // An assistant appended through the manager directly names the model too.
    agent
        .session_manager_mut()
        .append_message(json(
            r#"{"role":"assistant","content":[],"provider":"p3","model":"m3","stopReason":"stop"}"#,
        ))
        .unwrap();
    assert_eq!(agent.model().cloned(), model("p3", "m3"));
}

/// The reference's `AgentSession` constructor builds its runtime with
/// `includeAllExtensionTools: true`, so extension and SDK tools start active, as ours do.
/// Goldens: OpenClaw 2026.6.11 `refreshToolRegistry` with base `[read, bash]`, extension
/// `[grep]`, SDK `[sdk1]` → `["read","bash","grep","sdk1"]`;
/// requested `[bash]` → `["bash","grep","sdk1"]`; allow-list `[sdk1, read]` →
/// `["read","sdk1"]`.
#[test]
fn extension_and_sdk_tools_start_active_as_in_the_reference_constructor() {
    let build = |active: Option<Vec<String>>, allowed: Option<Vec<String>>| {
        let sm = SessionManager::in_memory("/p");
        let agent = AgentSession::new(
            sm,
            AgentSessionOptions {
                base_tools: vec![Arc::new(Named("read")), Arc::new(Named("bash"))],
                extension_tools: vec![(
                    Arc::new(Named("grep")) as Arc<dyn Tool>,
                    SourceInfo::extension("/ext/grep"),
                )],
                custom_tools: vec![Arc::new(Named("sdk1"))],
                active_tool_names: active,
                allowed_tool_names: allowed,
                ..AgentSessionOptions::default()
            },
        )
        .unwrap();
        agent.get_active_tool_names()
    };
    assert_eq!(build(None, None), ["read", "bash", "grep", "sdk1"]);
    assert_eq!(
        build(Some(vec!["bash".into()]), None),
        ["bash", "grep", "sdk1"]
    );
    assert_eq!(
        build(None, Some(vec!["sdk1".into(), "read".into()])),
        ["read", "sdk1"]
    );
    assert!(AgentSessionOptions::default().include_all_extension_tools);
}

#[derive(Debug)]
struct Prompted {
    name: &'static str,
    snippet: Option<&'static str>,
    guidelines: &'static [&'static str],
}

impl Tool for Prompted {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        ""
    }
    fn parameters(&self) -> JsValue {
        json("{}")
    }
    fn prompt_snippet(&self) -> Option<String> {
        self.snippet.map(str::to_owned)
    }
    fn prompt_guidelines(&self) -> Vec<String> {
        self.guidelines.iter().map(|g| (*g).to_owned()).collect()
    }
    fn execute(&self, _id: &str, _args: &JsValue) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(""))
    }
}

/// Snippets and guidelines are normalised with JavaScript's `\s`/`trim` (which has U+FEFF and
/// lacks U+0085), not Rust's whitespace. Golden: OpenClaw 2026.6.11
/// `refreshToolRegistry` gives snippets `[["a","a b c d\u0085e"]]` (b's `"\ufeff"` dropped)
/// and guidelines `[["c",["x","\u0085"]]]`.
#[test]
fn prompt_normalisation_uses_javascript_whitespace() {
    assert_eq!(
        normalize_prompt_snippet(Some("a\u{a0}\u{a0}b\u{2028}c\u{feff}d\u{85}e")).as_deref(),
        Some("a b c d\u{85}e")
    );
    assert_eq!(normalize_prompt_snippet(Some("\u{feff}")), None);
    assert_eq!(
        normalize_prompt_guidelines(&[
            "\u{feff}x\u{feff}".to_owned(),
            "\u{85}".to_owned(),
            "\u{a0}".to_owned(),
        ]),
        ["x", "\u{85}"]
    );
    let mut rt = ToolRuntime::new(
        vec![
            Arc::new(Prompted {
                name: "a",
                snippet: Some("a\u{a0}\u{a0}b\u{2028}c\u{feff}d\u{85}e"),
                guidelines: &[],
            }),
            Arc::new(Prompted {
                name: "b",
                snippet: Some("\u{feff}"),
                guidelines: &[],
            }),
            Arc::new(Prompted {
                name: "c",
                snippet: None,
                guidelines: &["\u{feff}x\u{feff}", "\u{85}", "\u{a0}"],
            }),
        ],
        agent_session::prompt::PromptOptions::new("/w"),
    );
    rt.refresh_tool_registry(&RefreshOptions {
        active_tool_names: Some(vec!["a".into(), "b".into(), "c".into()]),
        include_all_extension_tools: true,
    });
    let snippets: Vec<(String, String)> = rt
        .tool_prompt_snippets()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    assert_eq!(snippets, [("a".to_owned(), "a b c d\u{85}e".to_owned())]);
    let guidelines: Vec<(String, Vec<String>)> = rt
        .tool_prompt_guidelines()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    assert_eq!(
        guidelines,
        [("c".to_owned(), vec!["x".to_owned(), "\u{85}".to_owned()])]
    );
}

/// Lone surrogates in a bash command or output and in summaries reach the text sent to the
/// model unchanged (not as U+FFFD). Goldens: OpenClaw 2026.6.11 `convertToLlm`, as
/// `JSON.stringify` prints them.
#[test]
fn lone_surrogates_survive_conversion() {
    let input = [
        json(
            r#"{"role":"bashExecution","command":"emoji \ud83d","output":"\ude00 tail","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1}"#,
        ),
        json(
            r#"{"role":"branchSummary","summary":"lone \udbff","timestamp":"2026-01-01T00:00:00.000Z"}"#,
        ),
        json(
            r#"{"role":"bashExecution","command":[1,[2,3],null,{"a":1},true],"output":[],"exitCode":0,"cancelled":false,"truncated":false,"timestamp":1}"#,
        ),
    ];
    let out: Vec<String> = convert_to_llm(&input).iter().map(to_json_string).collect();
    assert_eq!(
        out,
        [
            r#"{"role":"user","content":[{"type":"text","text":"Ran `emoji \ud83d`\n```\n\ude00 tail\n```"}],"timestamp":1}"#,
            r#"{"role":"user","content":[{"type":"text","text":"The following is a summary of a branch that this conversation came back from:\n\n<summary>\nlone \udbff</summary>"}],"timestamp":"2026-01-01T00:00:00.000Z"}"#,
            r#"{"role":"user","content":[{"type":"text","text":"Ran `1,2,3,,[object Object],true`\n```\n\n```"}],"timestamp":1}"#,
        ]
    );
}

/// The pairing repair that puts results in call order (or moves an errored turn's results up)
/// reports `changed: true`. The reference returns its input unchanged in
/// these two cases (its `moved` flag misses them); ours keeps the repaired order and says so.
#[test]
fn reordered_results_are_reported_as_changed() {
    // The reference's policy for errored turns (keep), under which it moves their results.
    let opts = PairingOptions {
        now_ms: Some(0.0),
        errored_assistant: agent_session::pairing::ErroredAssistantPolicy::Keep,
        ..PairingOptions::default()
    };
    let call = |stop: &str| {
        json(&format!(
            r#"{{"role":"assistant","content":[{{"type":"toolCall","id":"A","name":"read","arguments":{{}}}},{{"type":"toolCall","id":"B","name":"bash","arguments":{{}}}}],"stopReason":"{stop}"}}"#
        ))
    };
    let result = |id: &str, name: &str| {
        json(&format!(
            r#"{{"role":"toolResult","toolCallId":"{id}","toolName":"{name}","content":[],"isError":false}}"#
        ))
    };
    let user = json(r#"{"role":"user","content":"hi"}"#);
    let ids = |ms: &[JsValue]| -> Vec<String> {
        ms.iter()
            .map(|m| {
                m.get("toolCallId")
                    .or_else(|| m.get("role"))
                    .and_then(JsValue::as_str_lossy)
                    .unwrap()
                    .into_owned()
            })
            .collect()
    };
    let r = repair_tool_use_result_pairing(
        &[
            user.clone(),
            call("toolUse"),
            result("B", "bash"),
            result("A", "read"),
        ],
        &opts,
    );
    assert_eq!(ids(&r.messages), ["user", "assistant", "A", "B"]);
    assert!(r.changed);
    assert_eq!(
        (r.added, r.dropped_duplicates, r.dropped_orphans),
        (0, 0, 0)
    );
    let r = repair_tool_use_result_pairing(
        &[
            user.clone(),
            call("aborted"),
            user.clone(),
            result("A", "read"),
        ],
        &opts,
    );
    assert_eq!(ids(&r.messages), ["user", "assistant", "A", "user"]);
    assert!(r.changed);
    let r = repair_tool_use_result_pairing(
        &[
            user,
            call("toolUse"),
            result("A", "read"),
            result("B", "bash"),
        ],
        &opts,
    );
    assert!(!r.changed);
}

/// A manager opened through another name of the same file (a symlinked directory) is accepted
/// as bound to that file.
#[cfg(unix)]
#[test]
fn prepare_accepts_another_name_of_the_bound_file() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real");
    std::fs::create_dir(&real).unwrap();
    std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
    let file = write(
        &real,
        &[
            row("u1", None, r#""message":{"role":"user","content":"a"}"#),
            row(
                "a1",
                Some("u1"),
                r#""message":{"role":"assistant","content":[],"provider":"p","model":"m","stopReason":"stop"}"#,
            ),
        ],
    );
    let alias = dir.path().join("link").join("s.jsonl");
    let mut sm = SessionManager::open(&alias, None, None).unwrap();
    let out = prepare_session_manager_for_run(
        &mut sm,
        PrepareParams {
            session_file: &file,
            had_session_file: true,
            session_id: "run",
            cwd: "/run",
        },
    )
    .unwrap();
    assert_eq!(out, PrepareOutcome::HeaderRewritten);
    let first = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_owned();
    assert_eq!(
        first,
        r#"{"type":"session","version":3,"id":"run","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/run"}"#
    );
}

/// `Truncate { keep_last: 0 }` keeps the newest cut point, like `keep_last: 1` (documented);
/// when the newest messages are tool results the cut falls back to the call before them.
#[test]
fn truncate_keeps_at_least_the_newest_cut_point() {
    let entries: Vec<JsValue> = [
        r#"{"type":"message","id":"u1","message":{"role":"user","content":"a"}}"#,
        r#"{"type":"message","id":"a1","message":{"role":"assistant","content":[]}}"#,
        r#"{"type":"message","id":"u2","message":{"role":"user","content":"b"}}"#,
        r#"{"type":"message","id":"a2","message":{"role":"assistant","content":[]}}"#,
        r#"{"type":"message","id":"r2","message":{"role":"toolResult","content":[]}}"#,
    ]
    .iter()
    .map(|t| json(t))
    .collect();
    for keep in [0, 1, 2] {
        let cut = find_cut_point(&entries, 0, entries.len(), KeepBudget::Messages(keep));
        assert_eq!(cut.first_kept_index, 3, "keep_last {keep}");
        assert_eq!(cut.turn_start_index, Some(2));
    }
    let cut = find_cut_point(&entries, 0, entries.len(), KeepBudget::Messages(3));
    assert_eq!(cut.first_kept_index, 2);
    assert!(!cut.is_split_turn);
}

/// Case 2b's check, backup and emptying run inside the session write lock the manager was told
/// to write under, so no writer holding the lock can append between the backup and the
/// emptying; a lock held elsewhere fails the call before anything changes.
#[test]
fn reset_runs_inside_the_session_write_lock() {
    use session_store::{LockOptions, SessionWriteLock};
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        &[row(
            "u1",
            None,
            r#""message":{"role":"user","content":"a"}"#,
        )],
    );
    let before = std::fs::read(&file).unwrap();
    let options = LockOptions::from_env().with_timeout(Some(std::time::Duration::from_millis(200)));
    let mut sm = SessionManager::open(&file, None, None).unwrap();
    sm.set_write_lock(Some(options.clone()));
    let params = PrepareParams {
        session_file: &file,
        had_session_file: true,
        session_id: "run",
        cwd: "/run",
    };
    let (held_tx, held_rx) = std::sync::mpsc::channel();
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    let (f, o) = (file.clone(), options);
    let holder = std::thread::spawn(move || {
        let guard = SessionWriteLock::acquire(&f, &o).unwrap();
        held_tx.send(()).unwrap();
        release_rx.recv().unwrap();
        drop(guard);
    });
    held_rx.recv().unwrap();
    let err = prepare_session_manager_for_run(&mut sm, params).unwrap_err();
    assert!(
        matches!(err, agent_session::PrepareError::Lock { .. }),
        "{err:?}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), before);
    assert_eq!(sm.get_session_id(), "s1");
    assert_eq!(sm.get_leaf_id(), Some("u1"));
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".reset-"))
        .collect();
    assert!(names.is_empty(), "{names:?}");
    release_tx.send(()).unwrap();
    holder.join().unwrap();
    // Lock free: the reset goes through, backup byte-exact, no lock file left behind.
    let out = prepare_session_manager_for_run(&mut sm, params).unwrap();
    let PrepareOutcome::Reset { backup: Some(b) } = out else {
        panic!("{out:?}")
    };
    assert_eq!(std::fs::read(b).unwrap(), before);
    assert_eq!(std::fs::read(&file).unwrap(), b"");
    assert!(!dir.path().join("s.jsonl.lock").exists());
}
