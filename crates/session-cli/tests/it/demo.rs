//! `sessions demo`'s Telegram DM, recorded through an `agent_session::AgentSession`: the rows it
//! writes (model and thinking changes, one toolResult per tool call run by the registered
//! tools, exactly one compaction with its first kept entry and tokens before), the summary the
//! demo prints about it, the context after the compaction, and that two runs write the same
//! rows apart from ids and timestamps. Also: the Discord group chat's file is named by the store
//! layout for its group key, so `clear` and `keys parse` classify it as a group session.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::support::*;
use session_format::json::{JsValue, parse_value, to_json_string};

const TELEGRAM: &str = "agents/main/sessions/telegram_123456.jsonl";

/// A demo built in a temporary directory, with the wall clock (ms) around the run.
struct Demo {
    _dir: tempfile::TempDir,
    root: PathBuf,
    stdout: String,
    started_ms: f64,
    finished_ms: f64,
}

fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as f64
}

fn build_demo() -> Demo {
    let dir = tempdir();
    let root = dir.path().join("sessions-demo");
    let started_ms = now_ms();
    let r = run_in_timeout(dir.path(), ["demo", "--root", root.to_str().unwrap()]);
    let finished_ms = now_ms();
    assert_eq!(r.code, 0, "{}", r.stderr);
    Demo {
        _dir: dir,
        root,
        stdout: r.stdout,
        started_ms,
        finished_ms,
    }
}

/// The rows of a session file.
fn rows(path: &Path) -> Vec<JsValue> {
    let text = String::from_utf8(std::fs::read(path).unwrap()).unwrap();
    text.lines()
        .map(|l| parse_value(l.as_bytes()).unwrap())
        .collect()
}

fn str_of<'a>(v: &'a JsValue, key: &str) -> Option<std::borrow::Cow<'a, str>> {
    v.get(key).and_then(JsValue::as_str_lossy)
}

/// The file's rows with every entry id (in `id`, `parentId`, `firstKeptEntryId`, `targetId`,
/// `fromId`) replaced by `@N`, N the 1-based line of the entry with that id; entry timestamps
/// by `<ts>`; the header id by `<session>`; and each toolResult message's timestamp, which
/// the AgentSession takes from the wall clock, by 0 after checking that it lies within the
/// run.
fn symbolic_rows(demo: &Demo) -> Vec<String> {
    let rows = rows(&demo.root.join(TELEGRAM));
    let lines: HashMap<String, usize> = rows
        .iter()
        .enumerate()
        .skip(1)
        .filter_map(|(i, r)| str_of(r, "id").map(|id| (id.into_owned(), i + 1)))
        .collect();
    rows.into_iter()
        .enumerate()
        .map(|(i, mut row)| {
            let o = row.as_object_mut().unwrap();
            if i == 0 {
                o.insert("id", JsValue::from("<session>"));
            } else {
                for key in ["id", "parentId", "firstKeptEntryId", "targetId", "fromId"] {
                    let Some(id) = o.get_str(key).map(|id| id.into_owned()) else {
                        continue;
                    };
                    let line = lines
                        .get(&id)
                        .unwrap_or_else(|| panic!("{key} {id} is no entry"));
                    o.insert(key, JsValue::from(format!("@{line}")));
                }
            }
            o.insert("timestamp", JsValue::from("<ts>"));
            if let Some(JsValue::Object(m)) = o.get_mut("message")
                && m.get_str("role").as_deref() == Some("toolResult")
            {
                let Some(JsValue::Number(ts)) = m.get("timestamp") else {
                    panic!("toolResult without a numeric timestamp on line {}", i + 1);
                };
                assert!(
                    (demo.started_ms..=demo.finished_ms).contains(ts),
                    "toolResult timestamp {ts} on line {} is not within the run",
                    i + 1
                );
                m.insert("timestamp", JsValue::Number(0.0));
            }
            to_json_string(&row)
        })
        .collect()
}

/// `type` (and a message's role) and the parent's line of each row.
fn outline(symbolic: &[String]) -> Vec<String> {
    symbolic
        .iter()
        .map(|l| {
            let v = parse_value(l.as_bytes()).unwrap();
            let kind = str_of(&v, "type").unwrap().into_owned();
            let role = v
                .get("message")
                .and_then(|m| str_of(m, "role"))
                .map(|r| format!(" {r}"))
                .unwrap_or_default();
            let parent = match v.get("parentId") {
                Some(JsValue::String(p)) => p.to_str_lossy().into_owned(),
                Some(JsValue::Null) => "null".to_owned(),
                _ => "-".to_owned(),
            };
            format!("{kind}{role} <- {parent}")
        })
        .collect()
}

#[test]
fn demo_records_the_telegram_dm_through_an_agent_session() {
    let demo = build_demo();
    let sym = symbolic_rows(&demo);
    assert_eq!(
        outline(&sym),
        [
            "session <- -",
            "model_change <- null",
            "thinking_level_change <- @2",
            "message user <- @3",
            "session_info <- @4",
            "message assistant <- @5",
            "message toolResult <- @6",
            "message assistant <- @7",
            "label <- @8",
            "message user <- @9",
            "message assistant <- @10",
            "message toolResult <- @11",
            "message assistant <- @12",
            "message user <- @13",
            "message assistant <- @14",
            "message toolResult <- @15",
            "message assistant <- @16",
            "label <- @17",
            "branch_summary <- @13",
            "message user <- @19",
            "message assistant <- @20",
            "message toolResult <- @21",
            "message assistant <- @22",
            "label <- @23",
            "compaction <- @24",
            "message user <- @25",
            "message assistant <- @26",
        ]
    );
    // The model and thinking level set through the AgentSession (each appended once).
    assert_eq!(
        sym[1],
        r#"{"type":"model_change","id":"@2","parentId":null,"timestamp":"<ts>","provider":"anthropic","modelId":"claude-sonnet-4-5"}"#
    );
    assert_eq!(
        sym[2],
        r#"{"type":"thinking_level_change","id":"@3","parentId":"@2","timestamp":"<ts>","thinkingLevel":"low"}"#
    );
    // Each tool call run by its registered tool: content and details from the tool, an error
    // result for the failed booking.
    assert_eq!(
        [&sym[6], &sym[11], &sym[15], &sym[21]],
        [
            r#"{"type":"message","id":"@7","parentId":"@6","timestamp":"<ts>","message":{"role":"toolResult","toolCallId":"call_weather_1","toolName":"weather_forecast","content":[{"type":"text","text":"Sat 2026-01-10: 24°C, sunny\nSun 2026-01-11: 19°C, light rain\nMon 2026-01-12: 21°C, cloudy"}],"details":{"city":"Lisbon","days":3},"isError":false,"timestamp":0}}"#,
            r#"{"type":"message","id":"@12","parentId":"@11","timestamp":"<ts>","message":{"role":"toolResult","toolCallId":"call_search_2","toolName":"restaurant_search","content":[{"type":"text","text":"1. Cervejaria Ramiro: 21:30\n2. Taberna da Rua: 20:00"}],"details":{"results":2},"isError":false,"timestamp":0}}"#,
            r#"{"type":"message","id":"@16","parentId":"@15","timestamp":"<ts>","message":{"role":"toolResult","toolCallId":"call_book_3","toolName":"book_table","content":[{"type":"text","text":"Fully booked at 21:30"}],"details":{},"isError":true,"timestamp":0}}"#,
            r#"{"type":"message","id":"@22","parentId":"@21","timestamp":"<ts>","message":{"role":"toolResult","toolCallId":"call_book_4","toolName":"book_table","content":[{"type":"text","text":"Booked: Taberna da Rua, Sat 2026-01-10 20:00, party of 2 (confirmation TB-2291)"}],"details":{"confirmation":"TB-2291","party":2},"isError":false,"timestamp":0}}"#,
        ]
    );
    // Exactly one compaction: the three newest messages (58 tokens) and the turn's user message
    // fill the 60-token budget, so the cut is at that turn, widened back over the branch
    // summary (@19); tokensBefore is the last assistant's usage (3050 + 52).
    assert_eq!(
        sym.iter()
            .filter(|l| l.contains(r#""type":"compaction""#))
            .count(),
        1
    );
    assert_eq!(
        sym[24],
        r#"{"type":"compaction","id":"@25","parentId":"@24","timestamp":"<ts>","summary":"Summary of 8 messages (user 2, assistant 4, toolResult 2).","firstKeptEntryId":"@19","tokensBefore":3102,"details":{"readFiles":[],"modifiedFiles":[]},"fromHook":false}"#
    );
    assert_eq!(
        sym[18],
        r#"{"type":"branch_summary","id":"@19","parentId":"@13","timestamp":"<ts>","fromId":"@13","summary":"Tried Cervejaria Ramiro at 21:30; it was fully booked, so we went back to the list.","fromHook":false}"#
    );

    // What the demo prints about it, with the file's real ids.
    let raw = rows(&demo.root.join(TELEGRAM));
    let id = |line: usize| str_of(&raw[line - 1], "id").unwrap().into_owned();
    let report: Vec<&str> = demo.stdout.lines().skip(1).take(5).collect();
    assert_eq!(
        report,
        [
            "The Telegram DM was recorded through an AgentSession (crate agent-session):".to_owned(),
            "  active tools  weather_forecast, restaurant_search, book_table".to_owned(),
            "  tool calls    4 run by the registered tools, each recorded as a toolResult (1 error result: book_table)".to_owned(),
            "  model         anthropic/claude-sonnet-4-5, thinking low".to_owned(),
            format!(
                "  compaction    {}: 8 messages summarised, first kept entry {} (branch_summary), tokens before 3102",
                id(25),
                id(19)
            ),
        ]
    );
}

#[test]
fn demo_context_after_the_compaction_starts_with_its_summary() {
    let demo = build_demo();
    let dm = demo.root.join(TELEGRAM);
    let r = run(["context", "--json", dm.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = parse_value(r.stdout.as_bytes()).unwrap();
    let Some(JsValue::Array(messages)) = v.get("messages") else {
        panic!("no messages: {}", r.stdout);
    };
    let field = |i: usize, key: &str| {
        str_of(&messages[i], key)
            .map(|s| s.into_owned())
            .unwrap_or_default()
    };
    let roles: Vec<String> = (0..messages.len()).map(|i| field(i, "role")).collect();
    assert_eq!(
        roles,
        [
            "compactionSummary",
            "branchSummary",
            "user",
            "assistant",
            "toolResult",
            "assistant",
            "user",
            "assistant",
        ]
    );
    assert_eq!(
        field(0, "summary"),
        "Summary of 8 messages (user 2, assistant 4, toolResult 2)."
    );
    assert_eq!(
        messages[0].get("tokensBefore"),
        Some(&JsValue::Number(3102.0))
    );
    assert_eq!(
        field(1, "summary"),
        "Tried Cervejaria Ramiro at 21:30; it was fully booked, so we went back to the list."
    );
    assert_eq!(
        to_json_string(messages[2].get("content").unwrap()),
        r#"[{"type":"text","text":"Then Taberna da Rua at 20:00."}]"#
    );
    assert_eq!(
        (field(4, "toolCallId"), field(4, "toolName")),
        ("call_book_4".to_owned(), "book_table".to_owned())
    );
    assert_eq!(
        to_json_string(messages[7].get("content").unwrap()),
        r#"[{"type":"text","text":"Saturday at 20:00 at Taberna da Rua (confirmation TB-2291)."}]"#
    );
    assert_eq!(
        to_json_string(v.get("model").unwrap()),
        r#"{"provider":"anthropic","modelId":"claude-sonnet-4-5"}"#
    );
    assert_eq!(str_of(&v, "thinkingLevel").as_deref(), Some("low"));
}

#[test]
fn demo_writes_the_same_rows_on_every_run() {
    let a = build_demo();
    let b = build_demo();
    assert_eq!(symbolic_rows(&a), symbolic_rows(&b));
}

/// The `(file, sessionKey)` pairs of `sessions clear --dry-run --json` for an agent.
fn planned_keys(root: &Path, agent: &str) -> Vec<(String, String)> {
    let r = run([
        "clear",
        "--root",
        root.to_str().unwrap(),
        "--agent",
        agent,
        "--all",
        "--dry-run",
        "--json",
    ]);
    // Exit 1: sessions would be cleared.
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v = parse_value(r.stdout.as_bytes()).unwrap();
    v.get("actions")
        .and_then(JsValue::as_array)
        .unwrap()
        .iter()
        .map(|a| {
            (
                str_of(a, "file").unwrap().into_owned(),
                str_of(a, "sessionKey").unwrap().into_owned(),
            )
        })
        .collect()
}

#[test]
fn demo_names_the_discord_group_chat_by_its_group_key() {
    let demo = build_demo();
    assert_eq!(
        dir_names(&demo.root.join("agents/main/sessions")),
        ["discord=group=981234567890.jsonl", "telegram_123456.jsonl"]
    );
    assert_eq!(
        dir_names(&demo.root.join("agents/ops/sessions")),
        ["slack_u02opsbot.jsonl"]
    );
    // `clear` reads the group key back from the file name (and the DMs' direct keys).
    assert_eq!(
        planned_keys(&demo.root, "main"),
        [
            (
                "discord=group=981234567890.jsonl".to_owned(),
                "agent:main:discord:group:981234567890".to_owned()
            ),
            (
                "telegram_123456.jsonl".to_owned(),
                "agent:main:telegram:direct:123456".to_owned()
            ),
        ]
    );
    // The Slack DM's file name is the canonical one of its (lowercased) direct key.
    assert_eq!(
        planned_keys(&demo.root, "ops"),
        [(
            "slack_u02opsbot.jsonl".to_owned(),
            "agent:ops:slack:direct:u02opsbot".to_owned()
        )]
    );
    // `keys parse` gives the same file name for the group key.
    let k = run(["keys", "parse", "agent:main:discord:group:981234567890"]);
    assert_eq!(k.code, 0, "{}", k.stderr);
    assert!(
        k.stdout
            .lines()
            .any(|l| l == "file name:      discord=group=981234567890.jsonl"),
        "{}",
        k.stdout
    );
    assert!(
        k.stdout.lines().any(|l| l == "chat type:      group"),
        "{}",
        k.stdout
    );
    // The demo's manifest records that file, and its next command opens it.
    let manifest = std::fs::read_to_string(demo.root.join(".sessions-demo.json")).unwrap();
    let recorded: Vec<String> = parse_value(manifest.as_bytes())
        .unwrap()
        .get("files")
        .and_then(JsValue::as_array)
        .unwrap()
        .iter()
        .map(|f| str_of(f, "path").unwrap().into_owned())
        .collect();
    assert_eq!(
        recorded,
        [
            "agents/main/sessions/telegram_123456.jsonl",
            "agents/main/sessions/discord=group=981234567890.jsonl",
            "agents/ops/sessions/slack_u02opsbot.jsonl",
        ]
    );
    let root = demo.root.to_str().unwrap();
    let tree = run([
        "tree",
        "--root",
        root,
        "--agent",
        "main",
        "--session",
        "discord=group=981234567890",
    ]);
    assert_eq!(tree.code, 0, "{}", tree.stderr);
    assert!(
        tree.stdout.starts_with(&format!(
            "{root}/agents/main/sessions/discord=group=981234567890.jsonl — 9 entries, 1 root, 0 \
             branch points, leaf "
        )),
        "{}",
        tree.stdout
    );
}
