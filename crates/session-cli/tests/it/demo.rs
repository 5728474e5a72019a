//! `sessions demo`'s Telegram DM, recorded through an `agent_session::AgentSession`: the rows it
//! writes (model and thinking changes, one toolResult per tool call run by the registered
//! tools, exactly one compaction with its first kept entry and tokens before), the summary the
//! demo prints about it, the context after the compaction, and that two runs write the same
//! rows apart from entry ids. Also the store it builds: `sessions.json` with the three keys,
//! their UUID session ids and `<sessionId>.jsonl` transcripts, every time from the one clock
//! of `--now`, and the real OpenClaw CLI listing exactly those keys.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::support::*;
use session_format::json::{JsValue, parse_value, to_json_string};

/// The instant every demo here is built at (`--now`), as the reference's fake clock takes it.
const NOW: &str = "2026-06-12T13:00:00Z";
const NOW_MS: f64 = 1_781_269_200_000.0;

/// The demo's session ids at [`NOW`], in build order (Telegram DM, Discord group, Slack DM).
const TELEGRAM_ID: &str = "2aaf5170-fc47-420a-b785-9d558717b529";
const DISCORD_ID: &str = "1a24a1ad-0a63-4760-a8f6-7f360ed8908a";
const SLACK_ID: &str = "d6988196-4218-4350-af0f-59c902eed924";

const SESSIONS: &str = "agents/main/sessions";
const TELEGRAM: &str = "agents/main/sessions/2aaf5170-fc47-420a-b785-9d558717b529.jsonl";

/// A demo built in a temporary directory at [`NOW`].
struct Demo {
    _dir: tempfile::TempDir,
    root: PathBuf,
    stdout: String,
}

fn build_demo() -> Demo {
    let dir = tempdir();
    let root = dir.path().join("sessions-demo");
    let r = run_in_timeout(
        dir.path(),
        ["--now", NOW, "demo", "--root", root.to_str().unwrap()],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    Demo {
        _dir: dir,
        root,
        stdout: r.stdout,
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
/// the AgentSession takes from the library's clock, by 0 after checking that it is the
/// timestamp of the assistant message that made the call (the demo's clock does not move
/// while tools run).
fn symbolic_rows(demo: &Demo) -> Vec<String> {
    let rows = rows(&demo.root.join(TELEGRAM));
    let raw = rows.clone();
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
                let call_ts = (0..i)
                    .rev()
                    .find_map(|j| {
                        let msg = raw[j].get("message")?;
                        (str_of(msg, "role").as_deref() == Some("assistant"))
                            .then(|| msg.get("timestamp").cloned())?
                    })
                    .unwrap();
                assert_eq!(JsValue::Number(*ts), call_ts, "line {}", i + 1);
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

/// The store keys of the demo, each with its sessionId, in the store's order.
fn keys_and_ids() -> [(&'static str, &'static str); 3] {
    [
        ("agent:main:telegram:direct:123456", TELEGRAM_ID),
        ("agent:main:discord:group:981234567890", DISCORD_ID),
        ("agent:main:slack:direct:u02opsbot", SLACK_ID),
    ]
}

fn num_of(v: &JsValue, key: &str) -> f64 {
    match v.get(key) {
        Some(JsValue::Number(n)) => *n,
        other => panic!("{key} is not a number: {other:?}"),
    }
}

#[test]
fn demo_store_names_each_session_by_key_and_uuid() {
    let demo = build_demo();
    let sessions = demo.root.join(SESSIONS);
    assert_eq!(
        dir_names(&sessions),
        [
            format!("{DISCORD_ID}.jsonl"),
            format!("{TELEGRAM_ID}.jsonl"),
            format!("{SLACK_ID}.jsonl"),
            "sessions.json".to_owned(),
        ]
    );
    assert_eq!(dir_names(&demo.root), [".sessions-demo.json", "agents"]);
    assert_eq!(dir_names(&demo.root.join("agents")), ["main"]);
    let bytes = std::fs::read(sessions.join("sessions.json")).unwrap();
    // The reference's serialisation: two-space pretty JSON, no trailing newline.
    assert!(bytes.starts_with(b"{\n  \"agent:main:telegram:direct:123456\": {\n    \"origin\": {"));
    assert_ne!(bytes.last(), Some(&b'\n'));
    let store = parse_value(&bytes).unwrap();
    let top = store.as_object().unwrap();
    let listed: Vec<(String, String, String)> = top
        .iter()
        .map(|(k, v)| {
            (
                k.to_str_lossy().into_owned(),
                str_of(v, "sessionId").unwrap().into_owned(),
                str_of(v, "sessionFile").unwrap().into_owned(),
            )
        })
        .collect();
    let expected: Vec<(String, String, String)> = keys_and_ids()
        .iter()
        .map(|(k, id)| ((*k).to_owned(), (*id).to_owned(), format!("{id}.jsonl")))
        .collect();
    assert_eq!(listed, expected);
    // Each transcript's header id is its entry's sessionId.
    for (_, id) in keys_and_ids() {
        let header = &rows(&sessions.join(format!("{id}.jsonl")))[0];
        assert_eq!(str_of(header, "id").as_deref(), Some(id));
        assert_eq!(header.get("version"), Some(&JsValue::Number(3.0)));
    }
    // The Telegram DM's entry, whole (the route fields as the reference's rows in its fixture).
    assert_eq!(
        to_json_string(top.get("agent:main:telegram:direct:123456").unwrap()),
        format!(
            r#"{{"origin":{{"label":"Ana","provider":"telegram","surface":"telegram","chatType":"direct","from":"telegram:123456","to":"telegram:123456","accountId":"default"}},"sessionId":"{TELEGRAM_ID}","updatedAt":1781259030000,"sessionStartedAt":1781258400000,"route":{{"channel":"telegram","accountId":"default","target":{{"to":"telegram:123456"}}}},"deliveryContext":{{"channel":"telegram","to":"telegram:123456","accountId":"default"}},"lastChannel":"telegram","lastTo":"telegram:123456","lastAccountId":"default","chatType":"direct","lastInteractionAt":1781258985000,"totalTokens":1252,"totalTokensFresh":true,"systemSent":true,"abortedLastRun":false,"compactionCount":1,"sessionFile":"{TELEGRAM_ID}.jsonl","modelProvider":"anthropic","model":"claude-sonnet-4-5","inputTokens":1200,"outputTokens":52,"contextTokens":200000}}"#
        )
    );
    let group = top.get("agent:main:discord:group:981234567890").unwrap();
    assert_eq!(
        [
            "chatType",
            "channel",
            "groupId",
            "subject",
            "displayName",
            "groupActivation"
        ]
        .map(|k| str_of(group, k).unwrap().into_owned()),
        [
            "group",
            "discord",
            "981234567890",
            "#dinner-club",
            "discord:g-dinner-club",
            "mention"
        ]
    );
    let slack = top.get("agent:main:slack:direct:u02opsbot").unwrap();
    assert_eq!(
        (
            str_of(slack, "modelProvider").unwrap().into_owned(),
            str_of(slack, "model").unwrap().into_owned(),
            num_of(slack, "totalTokens")
        ),
        ("openai".to_owned(), "gpt-5.1-codex".to_owned(), 3152.0)
    );
    // The manifest records the four files it made.
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
            format!("{SESSIONS}/{TELEGRAM_ID}.jsonl"),
            format!("{SESSIONS}/{DISCORD_ID}.jsonl"),
            format!("{SESSIONS}/{SLACK_ID}.jsonl"),
            format!("{SESSIONS}/sessions.json"),
        ]
    );
    // The next command's --session opens the Discord group chat.
    let root = demo.root.to_str().unwrap();
    let tree = run([
        "tree",
        "--root",
        root,
        "--agent",
        "main",
        "--session",
        DISCORD_ID,
    ]);
    assert_eq!(tree.code, 0, "{}", tree.stderr);
    assert!(
        tree.stdout.starts_with(&format!(
            "{root}/{SESSIONS}/{DISCORD_ID}.jsonl — 9 entries, 1 root, 0 branch points, leaf "
        )),
        "{}",
        tree.stdout
    );
}

#[test]
fn demo_times_come_from_one_clock_before_now() {
    let demo = build_demo();
    let sessions = demo.root.join(SESSIONS);
    let store = parse_value(&std::fs::read(sessions.join("sessions.json")).unwrap()).unwrap();
    let iso_ms = |v: &JsValue| {
        session_format::time::parse_js_date(&str_of(v, "timestamp").unwrap()).unwrap() as f64
    };
    // Start: 3, 2 and 1 hours before --now.
    let starts = [3.0, 2.0, 1.0].map(|h| NOW_MS - h * 3_600_000.0);
    for ((key, id), start) in keys_and_ids().into_iter().zip(starts) {
        let entry = store.get(key).unwrap();
        let rows = rows(&sessions.join(format!("{id}.jsonl")));
        assert_eq!(iso_ms(&rows[0]), start, "{key}: header");
        assert_eq!(num_of(entry, "sessionStartedAt"), start, "{key}");
        let mut last = start;
        let mut last_message = start;
        let mut last_user = start;
        for (i, row) in rows.iter().enumerate().skip(1) {
            let ts = iso_ms(row);
            assert!(ts >= last, "{key} line {}: {ts} before {last}", i + 1);
            last = ts;
            if let Some(m) = row.get("message") {
                // The entry's time is its message's time.
                assert_eq!(num_of(m, "timestamp"), ts, "{key} line {}", i + 1);
                last_message = ts;
                if str_of(m, "role").as_deref() == Some("user") {
                    last_user = ts;
                }
            }
        }
        assert_eq!(num_of(entry, "updatedAt"), last_message, "{key}");
        assert_eq!(num_of(entry, "lastInteractionAt"), last_user, "{key}");
        assert!(last < NOW_MS, "{key}: {last} not before now");
    }
}

#[test]
fn the_reference_lists_the_three_demo_keys() {
    let test = "the_reference_lists_the_three_demo_keys";
    let Some(openclaw) = session_test_support::OpenclawCli::find(test) else {
        return;
    };
    let demo = build_demo();
    let out = openclaw.run(&demo.root, &["sessions", "--json"], Some(NOW));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = parse_value(&out.stdout).unwrap();
    let listed: Vec<(String, String, f64, String)> = v
        .get("sessions")
        .and_then(JsValue::as_array)
        .unwrap()
        .iter()
        .map(|s| {
            (
                str_of(s, "key").unwrap().into_owned(),
                str_of(s, "sessionId").unwrap().into_owned(),
                num_of(s, "ageMs"),
                str_of(s, "kind").unwrap().into_owned(),
            )
        })
        .collect();
    // Newest first; ages from the store's updatedAt at --now.
    assert_eq!(
        listed,
        [
            (
                "agent:main:slack:direct:u02opsbot".to_owned(),
                SLACK_ID.to_owned(),
                3_150_000.0,
                "direct".to_owned()
            ),
            (
                "agent:main:discord:group:981234567890".to_owned(),
                DISCORD_ID.to_owned(),
                6_885_000.0,
                "group".to_owned()
            ),
            (
                "agent:main:telegram:direct:123456".to_owned(),
                TELEGRAM_ID.to_owned(),
                10_170_000.0,
                "direct".to_owned()
            ),
        ]
    );
    assert_eq!(v.get("count"), Some(&JsValue::Number(3.0)));
}
