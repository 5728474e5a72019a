//! Compaction: planning against OpenClaw 2026.6.11's `prepareCompaction`
//! (`fixtures/reference/compaction-*.jsonl` → `expected/compaction.json`), the two strategies,
//! two compactions in a row (#2608: the second summarises what the first kept and may keep
//! entries from before the first), and the file they write, which must equal what the reference
//! writes for the same calls (`tests/conformance/scripts/c55-agent-compaction-twice.json`, whose
//! golden the reference produced).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::common;

use agent_session::compaction::{
    CompactionStrategy, DeterministicSummarizer, KeepBudget, PlanError, find_cut_point,
    prepare_compaction,
};
use agent_session::{
    AgentSession, AgentSessionOptions, CompactError, CompactionConfig, CompactionMode,
};
use common::{fixture, fixture_json, fixture_text, json, obj, s};
use session_format::json::{JsValue, to_json_string};
use session_store::{SessionManager, io};

fn branch_values(sm: &SessionManager) -> Vec<JsValue> {
    sm.get_branch(None)
        .iter()
        .map(|e| e.value().unwrap())
        .collect()
}

fn context_values(sm: &SessionManager) -> Vec<JsValue> {
    sm.build_session_context()
        .unwrap()
        .messages
        .iter()
        .map(|m| m.to_value().unwrap())
        .collect()
}

fn strings(v: &[String]) -> JsValue {
    JsValue::Array(v.iter().map(|x| s(x)).collect())
}

#[test]
fn prepare_compaction_matches_the_reference() {
    let start = session_format::ids::now_ms() as f64;
    let doc = fixture_json("compaction-cases.json");
    let mut out = Vec::new();
    for case in doc.get("cases").unwrap().as_array().unwrap() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("session.jsonl");
        let src = fixture(&common::str_field(case, "file").unwrap());
        io::write_raw(&file, &std::fs::read(src).unwrap()).unwrap();
        let sm = SessionManager::open(&file, Some(dir.path()), None).unwrap();
        let path = branch_values(&sm);
        let ctx = context_values(&sm);
        let mut runs = Vec::new();
        for keep in case.get("keepRecentTokens").unwrap().as_array().unwrap() {
            let k = keep.as_f64().unwrap();
            let run = match prepare_compaction(&path, &ctx, KeepBudget::Tokens(k as u64)) {
                Err(PlanError::AlreadyCompacted) => obj(vec![
                    ("keepRecentTokens", keep.clone()),
                    ("preparation", JsValue::Null),
                ]),
                Err(e) => obj(vec![
                    ("keepRecentTokens", keep.clone()),
                    ("error", s(&e.to_string())),
                ]),
                Ok(p) => {
                    let lists = p.file_ops.file_lists();
                    obj(vec![
                        ("keepRecentTokens", keep.clone()),
                        (
                            "firstKeptEntryId",
                            JsValue::String(p.first_kept_entry_id.clone()),
                        ),
                        ("isSplitTurn", JsValue::Bool(p.is_split_turn)),
                        ("tokensBefore", JsValue::Number(p.tokens_before)),
                        (
                            "previousSummary",
                            p.previous_summary.as_deref().map_or(JsValue::Null, s),
                        ),
                        (
                            "messagesToSummarize",
                            JsValue::Array(p.messages_to_summarize),
                        ),
                        ("turnPrefixMessages", JsValue::Array(p.turn_prefix_messages)),
                        ("readFiles", strings(&lists.read_files)),
                        ("modifiedFiles", strings(&lists.modified_files)),
                    ])
                }
            };
            runs.push(run);
        }
        out.push(obj(vec![
            ("name", case.get("name").unwrap().clone()),
            ("runs", JsValue::Array(runs)),
        ]));
    }
    let ours =
        session_format::normalize::normalize_output(&JsValue::Array(out), None, start).unwrap();
    pretty_assertions::assert_eq!(ours, fixture_text("expected/compaction.json"));
}

#[test]
fn the_cut_point_is_never_a_tool_result() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("session.jsonl");
    io::write_raw(&file, fixture_text("compaction-a.jsonl").as_bytes()).unwrap();
    let sm = SessionManager::open(&file, Some(dir.path()), None).unwrap();
    let path = branch_values(&sm);
    for budget in (0..40)
        .map(KeepBudget::Messages)
        .chain((0..3000).step_by(7).map(KeepBudget::Tokens))
    {
        let cut = find_cut_point(&path, 1, path.len(), budget);
        let e = &path[cut.first_kept_index];
        let role = e.get("message").and_then(|m| m.get("role"));
        assert_ne!(role, Some(&s("toolResult")), "{budget:?}");
    }
    // Keeping 3 messages from the end (a6, m3, a5): the cut lands on a5 and is widened back
    // over the custom_message entry cm1 before it, which also starts the turn (a split turn
    // with an empty prefix, as in the reference).
    let cut = find_cut_point(&path, 1, path.len(), KeepBudget::Messages(3));
    assert_eq!(path[cut.first_kept_index].get("id"), Some(&s("cm1")));
    assert_eq!(
        cut.turn_start_index.map(|i| path[i].get("id").cloned()),
        Some(Some(s("cm1")))
    );
    assert!(cut.is_split_turn);
    // Keeping 5 messages lands on t3 (a tool result): the cut moves forward to the next valid
    // cut point, cm1 (t4 is a tool result too).
    let cut = find_cut_point(&path, 1, path.len(), KeepBudget::Messages(5));
    assert_eq!(path[cut.first_kept_index].get("id"), Some(&s("cm1")));
    // Keeping 6 lands on a4, an assistant message: a valid cut point; its turn starts at m2.
    let cut = find_cut_point(&path, 1, path.len(), KeepBudget::Messages(6));
    assert_eq!(path[cut.first_kept_index].get("id"), Some(&s("a4")));
    assert_eq!(
        cut.turn_start_index.map(|i| path[i].get("id").cloned()),
        Some(Some(s("m2")))
    );
}

// ---------------------------------------------------------------------------------------------
// Two compactions through AgentSession

const T: f64 = 1_767_225_600_000.0;

fn user(text: &str, n: f64) -> JsValue {
    obj(vec![
        ("role", s("user")),
        (
            "content",
            JsValue::Array(vec![obj(vec![("type", s("text")), ("text", s(text))])]),
        ),
        ("timestamp", JsValue::Number(T + n)),
    ])
}

fn assistant(blocks: &str, stop: &str, n: f64) -> JsValue {
    json(&format!(
        r#"{{"role":"assistant","content":{blocks},"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"{stop}","timestamp":{}}}"#,
        T + n
    ))
}

fn tool_result(id: &str, name: &str, text: &str, n: f64) -> JsValue {
    obj(vec![
        ("role", s("toolResult")),
        ("toolCallId", s(id)),
        ("toolName", s(name)),
        (
            "content",
            JsValue::Array(vec![obj(vec![("type", s("text")), ("text", s(text))])]),
        ),
        ("isError", JsValue::Bool(false)),
        ("timestamp", JsValue::Number(T + n)),
    ])
}

struct Scenario {
    agent: AgentSession,
    ids: Vec<String>,
    first: agent_session::CompactionResult,
    second: agent_session::CompactionResult,
    _dir: tempfile::TempDir,
}

/// The conversation of `c55-agent-compaction-twice`: a truncate compaction keeping 4
/// messages, two more turns, then a summary compaction keeping about 9 tokens (the last turn).
fn scenario() -> Scenario {
    let dir = tempfile::tempdir().unwrap();
    let sm = SessionManager::create("/home/dev/project", Some(dir.path())).unwrap();
    let mut agent = AgentSession::new(sm, AgentSessionOptions::default()).unwrap();
    let mut ids = Vec::new();
    assert!(agent.set_model("anthropic", "claude-sonnet-4-5").unwrap());
    assert!(agent.set_thinking_level("low").unwrap());
    let turns = [
        user("Read notes.txt and fix the typo in a.txt.", 1.0),
        assistant(
            r#"[{"type":"text","text":"Reading both."},{"type":"toolCall","id":"call_1","name":"read","arguments":{"path":"notes.txt"}},{"type":"toolCall","id":"call_2","name":"read","arguments":{"path":"a.txt"}}]"#,
            "toolUse",
            2.0,
        ),
        tool_result("call_1", "read", "typo is on line 3", 3.0),
        tool_result("call_2", "read", "line 1\nline 2\nteh line 3", 4.0),
        assistant(
            r#"[{"type":"toolCall","id":"call_3","name":"edit","arguments":{"path":"a.txt","oldText":"teh","newText":"the"}}]"#,
            "toolUse",
            5.0,
        ),
        tool_result("call_3", "edit", "Edited a.txt", 6.0),
        assistant(
            r#"[{"type":"text","text":"Fixed the typo on line 3."}]"#,
            "stop",
            7.0,
        ),
        user("Now add a line 4 saying done.", 8.0),
        assistant(
            r#"[{"type":"toolCall","id":"call_4","name":"write","arguments":{"path":"a.txt","content":"line 1\nline 2\nthe line 3\ndone\n"}}]"#,
            "toolUse",
            9.0,
        ),
        tool_result("call_4", "write", "Wrote a.txt", 10.0),
        assistant(r#"[{"type":"text","text":"Added line 4."}]"#, "stop", 11.0),
    ];
    for m in turns {
        ids.push(agent.append_message(m).unwrap());
    }
    // Model and thinking level are unchanged: nothing is appended.
    assert!(!agent.set_model("anthropic", "claude-sonnet-4-5").unwrap());
    assert!(!agent.set_thinking_level("low").unwrap());
    let first = agent
        .compact(CompactionStrategy::Truncate { keep_last: 4 })
        .unwrap();
    let more = [
        user("Thanks. Is the file complete now?", 12.0),
        assistant(
            r#"[{"type":"text","text":"Yes, a.txt has four lines."}]"#,
            "stop",
            13.0,
        ),
        user("Great, that is all.", 14.0),
        assistant(r#"[{"type":"text","text":"Glad to help."}]"#, "stop", 15.0),
    ];
    for m in more {
        ids.push(agent.append_message(m).unwrap());
    }
    agent.set_keep_recent_tokens(9);
    let second = agent
        .compact(CompactionStrategy::Summary(Box::new(
            DeterministicSummarizer,
        )))
        .unwrap();
    Scenario {
        agent,
        ids,
        first,
        second,
        _dir: dir,
    }
}

#[test]
fn two_compactions_give_the_expected_context() {
    let sc = scenario();
    let ids = &sc.ids;
    // First: keep the last 4 messages (u2 a t a) → firstKept = "Now add a line 4" (ids[7]).
    assert_eq!(sc.first.first_kept_entry_id.to_str_lossy(), ids[7]);
    assert_eq!(sc.first.summarized_messages, 7);
    assert_eq!(
        sc.first.summary,
        "Earlier conversation truncated: 7 messages were removed without a summary.\n\n<read-files>\nnotes.txt\n</read-files>\n\n<modified-files>\na.txt\n</modified-files>"
    );
    assert_eq!(
        to_json_string(&sc.first.details),
        r#"{"readFiles":["notes.txt"],"modifiedFiles":["a.txt"]}"#
    );
    // Second (#2608): the range starts at the first compaction's firstKept, so the 4 messages
    // it kept are summarised too, with the 2 after it; the cut keeps the last turn.
    assert_eq!(sc.second.first_kept_entry_id.to_str_lossy(), ids[13]);
    assert_eq!(sc.second.summarized_messages, 6);
    assert_eq!(
        sc.second.summary,
        "Previous summary: Earlier conversation truncated: 7 messages were removed without a summary.\nSummary of 6 messages (user 2, assistant 3, toolResult 1).\n\n<read-files>\nnotes.txt\n</read-files>\n\n<modified-files>\na.txt\n</modified-files>"
    );
    let roles: Vec<String> = sc
        .agent
        .context_messages()
        .unwrap()
        .iter()
        .map(|m| common::str_field(m, "role").unwrap())
        .collect();
    assert_eq!(roles, ["compactionSummary", "user", "assistant"]);
    // What the model is sent: the summary as user text with the reference's wording.
    let ctx = sc
        .agent
        .model_context(&session_semantics::policy::HistoryLimits::default())
        .unwrap();
    let first_text = ctx.messages[0]
        .get("content")
        .and_then(|c| c.as_array())
        .and_then(|c| c[0].get("text"))
        .and_then(JsValue::as_str_lossy)
        .unwrap()
        .into_owned();
    assert!(first_text.starts_with(
        "The conversation history before this point was compacted into the following summary:\n\n<summary>\nPrevious summary: "
    ));
    assert!(first_text.ends_with("</modified-files>\n</summary>"));
    assert_eq!(ctx.thinking_level, "low");
    assert_eq!(ctx.model.unwrap().model_id, "claude-sonnet-4-5");
}

#[test]
fn the_written_file_equals_what_the_reference_writes() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let golden_path =
        root.join("tests/conformance/expected/openclaw-2026.6.11/c55-agent-compaction-twice.json");
    let sc = scenario();
    let golden = session_format::json::parse_value(&std::fs::read(golden_path).unwrap()).unwrap();
    let file = sc
        .agent
        .session_manager()
        .get_session_file()
        .unwrap()
        .to_path_buf();
    let text = std::fs::read_to_string(&file).unwrap();
    let ours = session_format::normalize::normalize_text(&text, None);
    let snapshots = golden.as_array().unwrap();
    let theirs = snapshots[0]
        .get("snapshot")
        .and_then(|s| s.get("file"))
        .and_then(JsValue::as_str_lossy)
        .unwrap()
        .into_owned();
    pretty_assertions::assert_eq!(ours, theirs);
    // The reference, reopening that file, builds this context.
    let roles: Vec<String> = snapshots[1]
        .get("snapshot")
        .and_then(|s| s.get("context"))
        .and_then(|c| c.get("messages"))
        .and_then(|m| m.as_array())
        .unwrap()
        .iter()
        .map(|m| common::str_field(m, "role").unwrap())
        .collect();
    assert_eq!(roles, ["compactionSummary", "user", "assistant"]);
}

#[test]
fn compacting_twice_in_a_row_is_refused() {
    let mut sc = scenario();
    let e = sc
        .agent
        .compact(CompactionStrategy::Truncate { keep_last: 1 })
        .unwrap_err();
    assert!(
        matches!(e, CompactError::Plan(PlanError::AlreadyCompacted)),
        "{e}"
    );
    assert_eq!(e.to_string(), "Already compacted");
}

#[test]
fn a_session_too_small_is_not_compacted() {
    let dir = tempfile::tempdir().unwrap();
    let sm = SessionManager::create("/p", Some(dir.path())).unwrap();
    let mut agent = AgentSession::new(sm, AgentSessionOptions::default()).unwrap();
    let e = agent
        .compact(CompactionStrategy::Truncate { keep_last: 1 })
        .unwrap_err();
    assert_eq!(e.to_string(), "Nothing to compact (session too small)");
    agent.append_message(user("hi", 0.0)).unwrap();
    agent
        .append_message(assistant(
            r#"[{"type":"text","text":"hello"}]"#,
            "stop",
            1.0,
        ))
        .unwrap();
    let e = agent
        .compact(CompactionStrategy::Truncate { keep_last: 5 })
        .unwrap_err();
    assert_eq!(e.to_string(), "Nothing to compact (session too small)");
    assert_eq!(agent.session_manager().entry_count(), 2);
}

#[test]
fn the_seed_setting_selects_the_strategy() {
    let c: CompactionConfig = serde_json::from_str("{}").unwrap();
    assert_eq!(c.mode, CompactionMode::Summary);
    assert_eq!(c.keep_recent_tokens, 20_000);
    let c: CompactionConfig =
        serde_json::from_str(r#"{"mode":"truncate","keepLastMessages":3}"#).unwrap();
    let strategy = c.strategy(|| Box::new(DeterministicSummarizer));
    assert!(matches!(
        strategy,
        CompactionStrategy::Truncate { keep_last: 3 }
    ));
    assert!(serde_json::from_str::<CompactionConfig>(r#"{"mode":"drop"}"#).is_err());
}
