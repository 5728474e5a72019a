//! `sessions demo`: builds a small OpenClaw store through the public library API
//! (`SessionManager::open` on missing paths, then appends, branches, labels and tool calls; the
//! Telegram DM through an `agent_session::AgentSession` with registered tools that run each
//! tool call, model and thinking changes and one compaction) and prints what the AgentSession
//! did, then `list`, a `tree` and a `context` of the store.
//!
//! Safety: the demo never destroys anything. It writes only into an empty (or missing) root or
//! over an earlier demo: a non-empty root without a demo manifest (`.sessions-demo.json`) is
//! refused even with `--force` (it may be a real OpenClaw store). On an earlier demo it refuses
//! unless `--force`, and `--force` removes only the files that demo recorded in its manifest and
//! left unchanged (same sha256). The manifest is written before anything else and each file is
//! recorded before it is created, so a demo that fails half-way can always be cleaned up by
//! `--force`.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use agent_session::{
    AgentSession, AgentSessionOptions, CompactionResult, CompactionStrategy,
    DeterministicSummarizer, PrepareParams, Tool, ToolError, ToolOutput,
    prepare_session_manager_for_run,
};
use anyhow::{Context, bail};
use session_format::json::{JsObject, JsValue, parse_value};
use session_semantics::openclaw_store::{SessionStore, StoreEntry};
use session_store::{Durability, SessionManager};
use sha2::{Digest, Sha256};

use crate::address::Locator;
use crate::ctx::Ctx;
use crate::outcome::UsageError;
use crate::output::Output;
use crate::{context, model, tree};

pub(crate) const LONG_ABOUT: &str = "\
Build a demo OpenClaw store and show what the other subcommands print on it.

The store (default ./sessions-demo) is an OpenClaw state directory (OPENCLAW_STATE_DIR) as
OpenClaw 2026.6.11 writes it: <root>/agents/main/sessions/sessions.json maps each session key
to its entry (sessionId, updatedAt, sessionStartedAt, lastInteractionAt, chatType, channel,
origin, deliveryContext, model, modelProvider, token counters, sessionFile), and each session's
transcript is <sessionId>.jsonl beside it. Three sessions:
  agent:main:telegram:direct:123456      a Telegram DM recorded through an AgentSession: tools
                                         run for each tool call, a failed booking on a side
                                         branch, a branch summary, labels and one compaction
  agent:main:discord:group:981234567890  a Discord group chat with several people
  agent:main:slack:direct:u02opsbot      a Slack DM: shell tool calls, thinking, a model change
Session ids are version-4 UUIDs derived from the key and the run's clock, so a demo built with
the same global --now has the same ids and file names. All times come from one clock: the
chats start 3, 2 and 1 hours before now (--now, else the system clock), each message 45 s
after the one before; the header, every entry's timestamp, each message's timestamp and the
store's updatedAt, sessionStartedAt and lastInteractionAt agree.

Every transcript is written through the library's SessionManager (opened on a missing path,
prepared for a run with the store's sessionId, then appended to), exactly as OpenClaw writes
sessions, and sessions.json through the library's session store writer. The Telegram DM is
recorded as OpenClaw's runner records a run, through an AgentSession (crate agent-session):
the model and thinking level set, three tools registered (weather_forecast,
restaurant_search, book_table; they answer from small built-in tables), each tool call run by
its tool and its toolResult appended, and one summary compaction (a deterministic summariser
stands in for the model). The demo prints what the AgentSession did, then `sessions list`,
the `sessions tree` of the Telegram DM and its `sessions context`. `openclaw sessions` with
OPENCLAW_STATE_DIR=<root> lists the three keys.

The demo writes only into an empty or missing directory, or over its own earlier demo store:
a directory holding the demo manifest <root>/.sessions-demo.json, which records each file the
demo created with its sha256. Rerunning the demo there removes those files (while unchanged)
and builds the store again. It refuses, naming the file, when the directory holds anything
else (a file the manifest does not record, or a demo file changed since), and it refuses a
non-empty directory without a manifest, such as a real OpenClaw store. The manifest is written
first and each file is recorded in it before it is created, so a demo that stopped half-way
(a full disk, a permission error) is replaced by the next run.";

/// The manifest recording what the demo created; its presence marks a directory as a demo store.
pub(crate) const MANIFEST: &str = ".sessions-demo.json";

/// The demo store's sessions directory, relative to the root (the root is an
/// `OPENCLAW_STATE_DIR`; agent `main`, R1.2).
const SESSIONS_DIR: &str = "agents/main/sessions";

/// One chat of the demo: its store key and what the store entry says about its route.
struct Chat {
    /// The store key (openclaw-jsonl §5.1).
    key: &'static str,
    /// `channel`, `origin.provider` and `origin.surface`.
    channel: &'static str,
    /// `direct` or `group`.
    chat_type: &'static str,
    /// `origin.label`: the peer's or the group's name.
    label: &'static str,
    /// `origin.from`.
    from: &'static str,
    /// `origin.to`, `deliveryContext.to`, `lastTo`.
    to: &'static str,
    /// A group's `groupId`, `subject` and `displayName`.
    group: Option<(&'static str, &'static str, &'static str)>,
    /// How long before `now` the chat starts, in ms.
    starts_before_now_ms: i64,
    /// What the demo calls it in messages.
    what: &'static str,
}

/// The demo's chats, in the order it builds them: a Telegram DM, a Discord group chat and a
/// Slack DM, with keys as the reference makes them under `session.dmScope:
/// "per-channel-peer"` (`agent:<agentId>:<channel>:direct:<peerId>`, the peer id lowercased)
/// and for a group (`agent:<agentId>:<channel>:group:<groupId>`).
const CHATS: [Chat; 3] = [
    Chat {
        key: "agent:main:telegram:direct:123456",
        channel: "telegram",
        chat_type: "direct",
        label: "Ana",
        from: "telegram:123456",
        to: "telegram:123456",
        group: None,
        starts_before_now_ms: 3 * 3_600_000,
        what: "the Telegram demo session",
    },
    Chat {
        key: "agent:main:discord:group:981234567890",
        channel: "discord",
        chat_type: "group",
        label: "#dinner-club",
        from: "discord:group:981234567890",
        to: "channel:981234567890",
        group: Some(("981234567890", "#dinner-club", "discord:g-dinner-club")),
        starts_before_now_ms: 2 * 3_600_000,
        what: "the Discord demo session",
    },
    Chat {
        key: "agent:main:slack:direct:u02opsbot",
        channel: "slack",
        chat_type: "direct",
        label: "Ops Bot",
        from: "slack:U02OPSBOT",
        to: "user:U02OPSBOT",
        group: None,
        starts_before_now_ms: 3_600_000,
        what: "the Slack demo session",
    },
];

/// The demo's session id for `key` at `now_ms`: a version-4 UUID made from the first 16 bytes
/// of `sha256("sessions demo\0" + key + "\0" + now_ms)` (version nibble 4, variant 10), so a
/// demo built at the same `--now` has the same ids and file names, and the reference takes
/// them for generated ids (R1.9).
pub(crate) fn session_id(key: &str, now_ms: i64) -> String {
    let digest = Sha256::digest(format!("sessions demo\0{key}\0{now_ms}").as_bytes());
    let mut b = [0u8; 16];
    b.copy_from_slice(&digest[..16]);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// The demo's one clock (epoch ms): message timestamps tick it by 45 s, and while a session is
/// built it is also the library's clock ([`session_format::ids::with_clock`]), so the header,
/// every entry's `timestamp` and each message's `timestamp` agree, and the store entry's times
/// come from the same values. It also remembers what the store entry records: the last user
/// message's time and the last assistant reply's model and usage.
struct Clock {
    now: Rc<Cell<i64>>,
    last_user: i64,
    last_reply: Option<(Model, f64, f64)>,
}

impl Clock {
    fn starting_at(ms: i64) -> Self {
        Clock {
            now: Rc::new(Cell::new(ms)),
            last_user: ms,
            last_reply: None,
        }
    }

    fn now(&self) -> i64 {
        self.now.get()
    }

    fn tick(&mut self) -> JsValue {
        self.now.set(self.now.get() + 45_000);
        JsValue::Number(self.now.get() as f64)
    }

    /// The clock as the library reads it: the current time, not advanced.
    fn reader(&self) -> impl FnMut() -> i64 + 'static {
        let now = Rc::clone(&self.now);
        move || now.get()
    }
}

fn obj(pairs: Vec<(&str, JsValue)>) -> JsValue {
    let mut o = JsObject::new();
    for (k, v) in pairs {
        o.insert(k, v);
    }
    JsValue::Object(o)
}

fn s(v: &str) -> JsValue {
    JsValue::from(v)
}

fn n(v: f64) -> JsValue {
    JsValue::Number(v)
}

fn text_block(t: &str) -> JsValue {
    obj(vec![("type", s("text")), ("text", s(t))])
}

fn thinking_block(t: &str) -> JsValue {
    obj(vec![("type", s("thinking")), ("thinking", s(t))])
}

fn tool_call(id: &str, name: &str, args: &str) -> anyhow::Result<JsValue> {
    Ok(obj(vec![
        ("type", s("toolCall")),
        ("id", s(id)),
        ("name", s(name)),
        ("arguments", parse_value(args.as_bytes())?),
    ]))
}

fn user(c: &mut Clock, t: &str) -> JsValue {
    let ts = c.tick();
    c.last_user = c.now();
    obj(vec![
        ("role", s("user")),
        ("content", JsValue::Array(vec![text_block(t)])),
        ("timestamp", ts),
    ])
}

/// The model an assistant reply comes from.
#[derive(Clone, Copy)]
struct Model {
    api: &'static str,
    provider: &'static str,
    id: &'static str,
}

const SONNET: Model = Model {
    api: "anthropic-messages",
    provider: "anthropic",
    id: "claude-sonnet-4-5",
};
const CODEX: Model = Model {
    api: "openai-responses",
    provider: "openai",
    id: "gpt-5.1-codex",
};

fn assistant(c: &mut Clock, model: Model, content: Vec<JsValue>, input: f64) -> JsValue {
    let tool_use = content
        .iter()
        .any(|b| b.get("type").and_then(|t| t.as_str_lossy()).as_deref() == Some("toolCall"));
    let output = 40.0 + 12.0 * content.len() as f64;
    let cost_in = (input * 3.0) / 1_000_000.0;
    let cost_out = (output * 15.0) / 1_000_000.0;
    c.last_reply = Some((model, input, output));
    obj(vec![
        ("role", s("assistant")),
        ("content", JsValue::Array(content)),
        ("api", s(model.api)),
        ("provider", s(model.provider)),
        ("model", s(model.id)),
        (
            "usage",
            obj(vec![
                ("input", n(input)),
                ("output", n(output)),
                ("cacheRead", n(0.0)),
                ("cacheWrite", n(0.0)),
                ("totalTokens", n(input + output)),
                (
                    "cost",
                    obj(vec![
                        ("input", n(cost_in)),
                        ("output", n(cost_out)),
                        ("cacheRead", n(0.0)),
                        ("cacheWrite", n(0.0)),
                        ("total", n(cost_in + cost_out)),
                    ]),
                ),
            ]),
        ),
        ("stopReason", s(if tool_use { "toolUse" } else { "stop" })),
        ("timestamp", c.tick()),
    ])
}

fn tool_result(c: &mut Clock, call: &str, name: &str, out: &str, is_error: bool) -> JsValue {
    obj(vec![
        ("role", s("toolResult")),
        ("toolCallId", s(call)),
        ("toolName", s(name)),
        ("content", JsValue::Array(vec![text_block(out)])),
        ("isError", JsValue::Bool(is_error)),
        ("timestamp", c.tick()),
    ])
}

/// Opens a missing path for writing: a fresh session bound to it (nothing is written until the
/// first assistant reply).
/// Opens a missing path for writing and prepares it for a run as OpenClaw's runner does
/// (`prepare_session_manager_for_run` with the store's `session_id`, so the header's `id` is
/// the entry's `sessionId`): a fresh session bound to the path; nothing is written until the
/// first assistant reply.
fn open_new(path: &Path, session_id: &str, cwd: &str) -> anyhow::Result<SessionManager> {
    let mut sm = SessionManager::open(path, None, Some(cwd))?;
    sm.set_durability(Durability::Buffer);
    prepare_session_manager_for_run(
        &mut sm,
        PrepareParams {
            session_file: path,
            had_session_file: false,
            session_id,
            cwd,
        },
    )?;
    Ok(sm)
}

/// One of the Telegram DM's tools: a fixed schema and a deterministic `run` over its arguments
/// (the demo has no network; the answers come from small tables).
#[derive(Debug)]
struct DemoTool {
    name: &'static str,
    description: &'static str,
    parameters: &'static str,
    snippet: &'static str,
    guidelines: &'static [&'static str],
    run: fn(&JsValue) -> Result<ToolOutput, ToolError>,
}

impl Tool for DemoTool {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        self.description
    }
    fn parameters(&self) -> JsValue {
        parse_value(self.parameters.as_bytes()).unwrap_or(JsValue::Null)
    }
    fn prompt_snippet(&self) -> Option<String> {
        Some(self.snippet.to_owned())
    }
    fn prompt_guidelines(&self) -> Vec<String> {
        self.guidelines.iter().map(|g| (*g).to_owned()).collect()
    }
    fn execute(&self, _tool_call_id: &str, arguments: &JsValue) -> Result<ToolOutput, ToolError> {
        (self.run)(arguments)
    }
}

/// A string argument, or the error result a model gets when it is missing.
fn str_arg(args: &JsValue, key: &str) -> Result<String, ToolError> {
    args.get(key)
        .and_then(JsValue::as_str_lossy)
        .map(|v| v.into_owned())
        .ok_or_else(|| ToolError::new(format!("missing string argument `{key}`")))
}

/// A text result with these details.
fn text_output(text: &str, details: JsValue) -> ToolOutput {
    ToolOutput {
        content: vec![text_block(text)],
        details,
    }
}

fn run_weather_forecast(args: &JsValue) -> Result<ToolOutput, ToolError> {
    const LISBON: [&str; 3] = [
        "Sat 2026-01-10: 24°C, sunny",
        "Sun 2026-01-11: 19°C, light rain",
        "Mon 2026-01-12: 21°C, cloudy",
    ];
    let city = str_arg(args, "city")?;
    if city != "Lisbon" {
        return Err(ToolError::new(format!("No forecast for {city}")));
    }
    let days = args
        .get("days")
        .and_then(|d| match d {
            JsValue::Number(n) if *n >= 1.0 => Some(n.min(3.0) as usize),
            _ => None,
        })
        .unwrap_or(3);
    Ok(text_output(
        &LISBON[..days].join("\n"),
        obj(vec![("city", s(&city)), ("days", n(days as f64))]),
    ))
}

fn run_restaurant_search(args: &JsValue) -> Result<ToolOutput, ToolError> {
    let city = str_arg(args, "city")?;
    let cuisine = str_arg(args, "cuisine")?;
    if city != "Lisbon" || cuisine != "seafood" {
        return Err(ToolError::new(format!(
            "No {cuisine} restaurants found in {city}"
        )));
    }
    Ok(text_output(
        "1. Cervejaria Ramiro: 21:30\n2. Taberna da Rua: 20:00",
        obj(vec![("results", n(2.0))]),
    ))
}

fn run_book_table(args: &JsValue) -> Result<ToolOutput, ToolError> {
    let restaurant = str_arg(args, "restaurant")?;
    let time = str_arg(args, "time")?;
    let party = args.get("party").cloned().unwrap_or(n(2.0));
    match (restaurant.as_str(), time.as_str()) {
        ("Taberna da Rua", "20:00") => Ok(text_output(
            "Booked: Taberna da Rua, Sat 2026-01-10 20:00, party of 2 (confirmation TB-2291)",
            obj(vec![("confirmation", s("TB-2291")), ("party", party)]),
        )),
        ("Taberna da Rua" | "Cervejaria Ramiro", _) => {
            Err(ToolError::new(format!("Fully booked at {time}")))
        }
        _ => Err(ToolError::new(format!("Unknown restaurant: {restaurant}"))),
    }
}

/// The Telegram DM's tools, registered as the AgentSession's base tools.
fn telegram_tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(DemoTool {
            name: "weather_forecast",
            description: "Daily weather forecast for a city, up to 3 days ahead.",
            parameters: r#"{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","minimum":1,"maximum":3}},"required":["city"]}"#,
            snippet: "Get a city's weather forecast (up to 3 days)",
            guidelines: &[],
            run: run_weather_forecast,
        }),
        Arc::new(DemoTool {
            name: "restaurant_search",
            description: "Find restaurants with a free table for a party on a date.",
            parameters: r#"{"type":"object","properties":{"city":{"type":"string"},"date":{"type":"string"},"party":{"type":"integer"},"cuisine":{"type":"string"}},"required":["city","date","party","cuisine"]}"#,
            snippet: "Search restaurants with free tables",
            guidelines: &[],
            run: run_restaurant_search,
        }),
        Arc::new(DemoTool {
            name: "book_table",
            description: "Book a table at a restaurant.",
            parameters: r#"{"type":"object","properties":{"restaurant":{"type":"string"},"time":{"type":"string"},"party":{"type":"integer"}},"required":["restaurant","time","party"]}"#,
            snippet: "Book a restaurant table",
            guidelines: &["Ask which restaurant the user wants before calling book_table."],
            run: run_book_table,
        }),
    ]
}

/// What the AgentSession behind the Telegram DM did, for the demo's summary.
#[derive(Debug)]
struct AgentReport {
    /// The active tools, in order.
    active_tools: Vec<String>,
    /// Tool calls run through `execute_tool_call` (each appended a `toolResult`).
    tool_calls: usize,
    /// The names of the tools whose result was an error, one per such call.
    tool_errors: Vec<String>,
    /// The model at the end, `provider/modelId`.
    model: String,
    /// The thinking level at the end.
    thinking: String,
    /// The one compaction.
    compaction: CompactionResult,
    /// The `type` of its first kept entry.
    first_kept_type: String,
}

/// Drives an [`AgentSession`]: appends an assistant message with these tool calls, then runs
/// each call through the registered tools (appending its `toolResult`). Returns the assistant
/// entry's id.
fn tool_turn(
    agent: &mut AgentSession,
    c: &mut Clock,
    text: Option<&str>,
    calls: &[(&str, &str, &str)],
    input: f64,
    report: &mut Vec<(String, bool)>,
) -> anyhow::Result<String> {
    let mut blocks = Vec::new();
    if let Some(t) = text {
        blocks.push(text_block(t));
    }
    let mut call_blocks = Vec::new();
    for (id, name, args) in calls {
        call_blocks.push(tool_call(id, name, args)?);
    }
    blocks.extend(call_blocks.iter().cloned());
    let id = agent.append_message(assistant(c, SONNET, blocks, input))?;
    for call in &call_blocks {
        let result_id = agent.execute_tool_call(call)?;
        let is_error = agent
            .session_manager()
            .get_entry(&result_id)
            .and_then(|e| e.value().ok())
            .and_then(|v| v.get("message").and_then(|m| m.get("isError")).cloned())
            == Some(JsValue::Bool(true));
        let name = call
            .get("name")
            .and_then(JsValue::as_str_lossy)
            .map(|n| n.into_owned())
            .unwrap_or_default();
        report.push((name, is_error));
    }
    Ok(id)
}

/// Token budget the Telegram DM's compaction keeps. Its newest three messages (the booking at
/// Taberna da Rua) estimate 21 + 20 + 17 = 58 tokens and the user message starting that turn
/// 8 more: a budget of 60 is reached at that user message, so the cut falls at the start of the
/// turn, widened back over the branch summary before it (`firstKeptEntryId` = the
/// `branch_summary` entry).
const TELEGRAM_KEEP_RECENT_TOKENS: u64 = 60;

/// A Telegram DM recorded through an [`AgentSession`] as OpenClaw's runner records a run: the
/// session prepared for the run, the model and thinking level set, tools registered and run
/// for every tool call (a failed booking on a side branch), a branch summary, labels and one
/// `summary` compaction.
fn build_telegram(
    path: &Path,
    session_id: &str,
    c: &mut Clock,
) -> anyhow::Result<Option<AgentReport>> {
    let sm = open_new(path, session_id, "/home/openclaw/workspace")?;
    let mut agent = AgentSession::new(
        sm,
        AgentSessionOptions {
            base_tools: telegram_tools(),
            ..AgentSessionOptions::default()
        },
    )?;
    let mut calls: Vec<(String, bool)> = Vec::new();
    agent.set_model(SONNET.provider, SONNET.id)?;
    agent.set_thinking_level("low")?;
    agent.append_message(user(
        c,
        "Can you check the weather in Lisbon for this weekend?",
    ))?;
    agent
        .session_manager_mut()
        .append_session_info("Lisbon weekend")?;
    tool_turn(
        &mut agent,
        c,
        Some("Let me look that up."),
        &[(
            "call_weather_1",
            "weather_forecast",
            r#"{"city":"Lisbon","days":3}"#,
        )],
        1_840.0,
        &mut calls,
    )?;
    let forecast = agent.append_message(assistant(
        c,
        SONNET,
        vec![text_block(
            "Saturday looks best: 24 °C and sunny. Sunday may bring light rain.",
        )],
        2_010.0,
    ))?;
    agent
        .session_manager_mut()
        .append_label_change(&forecast, Some("forecast"))?;
    agent.append_message(user(
        c,
        "Great. Book a table for two on Saturday evening, somewhere with good fish.",
    ))?;
    tool_turn(
        &mut agent,
        c,
        None,
        &[(
            "call_search_2",
            "restaurant_search",
            r#"{"city":"Lisbon","date":"2026-01-10","party":2,"cuisine":"seafood"}"#,
        )],
        2_300.0,
        &mut calls,
    )?;
    let options = agent.append_message(assistant(
        c,
        SONNET,
        vec![text_block(
            "I found two: Cervejaria Ramiro at 21:30 or Taberna da Rua at 20:00. Which one?",
        )],
        2_520.0,
    ))?;
    // The side branch: a booking that fails.
    agent.append_message(user(c, "Cervejaria Ramiro, please."))?;
    tool_turn(
        &mut agent,
        c,
        None,
        &[(
            "call_book_3",
            "book_table",
            r#"{"restaurant":"Cervejaria Ramiro","time":"21:30","party":2}"#,
        )],
        2_610.0,
        &mut calls,
    )?;
    let dead_end = agent.append_message(assistant(
        c,
        SONNET,
        vec![text_block(
            "Sorry, Cervejaria Ramiro is fully booked at 21:30.",
        )],
        2_700.0,
    ))?;
    agent
        .session_manager_mut()
        .append_label_change(&dead_end, Some("dead end"))?;
    // Back to the two options, with a summary of the abandoned branch.
    agent.session_manager_mut().branch_with_summary(
        Some((&options).into()),
        "Tried Cervejaria Ramiro at 21:30; it was fully booked, so we went back to the list.",
        None,
        Some(false),
    )?;
    agent.append_message(user(c, "Then Taberna da Rua at 20:00."))?;
    tool_turn(
        &mut agent,
        c,
        None,
        &[(
            "call_book_4",
            "book_table",
            r#"{"restaurant":"Taberna da Rua","time":"20:00","party":2}"#,
        )],
        2_890.0,
        &mut calls,
    )?;
    let booked = agent.append_message(assistant(
        c,
        SONNET,
        vec![text_block(
            "Done: a table for two at Taberna da Rua, Saturday at 20:00. Confirmation TB-2291.",
        )],
        3_050.0,
    ))?;
    agent
        .session_manager_mut()
        .append_label_change(&booked, Some("booked"))?;
    agent.set_keep_recent_tokens(TELEGRAM_KEEP_RECENT_TOKENS);
    let compaction = agent.compact(CompactionStrategy::Summary(Box::new(
        DeterministicSummarizer,
    )))?;
    let first_kept_type = agent
        .session_manager()
        .get_entry(&*compaction.first_kept_entry_id.to_str_lossy())
        .and_then(|e| e.value().ok())
        .and_then(|v| {
            v.get("type")
                .and_then(JsValue::as_str_lossy)
                .map(|t| t.into_owned())
        })
        .unwrap_or_default();
    agent.append_message(user(c, "Remind me: what time is dinner?"))?;
    agent.append_message(assistant(
        c,
        SONNET,
        vec![text_block(
            "Saturday at 20:00 at Taberna da Rua (confirmation TB-2291).",
        )],
        1_200.0,
    ))?;
    let report = AgentReport {
        active_tools: agent.get_active_tool_names(),
        tool_calls: calls.len(),
        tool_errors: calls
            .iter()
            .filter(|(_, e)| *e)
            .map(|(name, _)| name.clone())
            .collect(),
        model: agent
            .model()
            .map_or_else(String::new, |m| format!("{}/{}", m.provider, m.model_id)),
        thinking: agent.thinking_level().to_owned(),
        compaction,
        first_kept_type,
    };
    let mut sm = agent.into_session_manager();
    sm.flush()?;
    Ok(Some(report))
}

/// A Discord group chat with several people.
fn build_discord(
    path: &Path,
    session_id: &str,
    c: &mut Clock,
) -> anyhow::Result<Option<AgentReport>> {
    let mut sm = open_new(path, session_id, "/home/openclaw/workspace")?;
    sm.append_message(user(
        c,
        "[Discord #dinner-club] Ben: who's in for dinner on Saturday?",
    ))?;
    sm.append_session_info("#dinner-club")?;
    sm.append_message(assistant(
        c,
        SONNET,
        vec![text_block(
            "Ana already has a table at Taberna da Rua, Saturday 20:00, for two. Want me to add people?",
        )],
        1_500.0,
    ))?;
    sm.append_message(user(
        c,
        "[Discord #dinner-club] Chloé: count me in! Can we make it four?",
    ))?;
    sm.append_message(user(c, "[Discord #dinner-club] Ben: +1, four it is"))?;
    sm.append_message(assistant(
        c,
        SONNET,
        vec![tool_call(
            "call_update_1",
            "update_booking",
            r#"{"confirmation":"TB-2291","party":4}"#,
        )?],
        1_720.0,
    ))?;
    sm.append_message(tool_result(
        c,
        "call_update_1",
        "update_booking",
        "Updated TB-2291: party of 4",
        false,
    ))?;
    let done = sm.append_message(assistant(
        c,
        SONNET,
        vec![text_block(
            "Done: the booking is now for four (Ana, Ben, Chloé and one more).",
        )],
        1_810.0,
    ))?;
    sm.append_label_change(&done, Some("party of 4"))?;
    sm.flush()?;
    Ok(None)
}

/// A Slack DM with an ops engineer: shell tool calls, thinking and a model change.
fn build_slack(
    path: &Path,
    session_id: &str,
    c: &mut Clock,
) -> anyhow::Result<Option<AgentReport>> {
    let mut sm = open_new(path, session_id, "/srv/ops")?;
    sm.append_thinking_level_change("high")?;
    sm.append_message(user(c, "Disk usage on build-01 looks high. Can you check?"))?;
    sm.append_message(assistant(
        c,
        SONNET,
        vec![
            thinking_block("Check the root filesystem first, then find the biggest directories."),
            tool_call("call_df_1", "bash", r#"{"command":"df -h /"}"#)?,
        ],
        2_100.0,
    ))?;
    sm.append_message(tool_result(
        c,
        "call_df_1",
        "bash",
        "Filesystem  Size  Used Avail Use% Mounted on\n/dev/sda1   200G  188G   12G  95% /",
        false,
    ))?;
    sm.append_message(assistant(
        c,
        SONNET,
        vec![tool_call(
            "call_du_2",
            "bash",
            r#"{"command":"du -sh /var/cache/* | sort -h | tail -3"}"#,
        )?],
        2_400.0,
    ))?;
    sm.append_message(tool_result(
        c,
        "call_du_2",
        "bash",
        "1.2G\t/var/cache/apt\n14G\t/var/cache/docker\n61G\t/var/cache/ci-artifacts",
        false,
    ))?;
    sm.append_message(assistant(
        c,
        SONNET,
        vec![text_block(
            "/ is 95% full; most of it is /var/cache/ci-artifacts (61 GB). Shall I delete artifacts older than 14 days?",
        )],
        2_650.0,
    ))?;
    sm.append_model_change("openai", "gpt-5.1-codex")?;
    sm.append_message(user(c, "Yes, go ahead."))?;
    sm.append_message(assistant(
        c,
        CODEX,
        vec![tool_call(
            "call_prune_3",
            "bash",
            r#"{"command":"find /var/cache/ci-artifacts -mtime +14 -delete && df -h /"}"#,
        )?],
        2_900.0,
    ))?;
    sm.append_message(tool_result(
        c,
        "call_prune_3",
        "bash",
        "Filesystem  Size  Used Avail Use% Mounted on\n/dev/sda1   200G  122G   78G  61% /",
        false,
    ))?;
    sm.append_message(assistant(
        c,
        CODEX,
        vec![text_block("Pruned: / is now at 61% (78 GB free).")],
        3_100.0,
    ))?;
    sm.flush()?;
    Ok(None)
}

fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// A file recorded in the manifest: its path relative to the root, and its sha256 (none for a
/// file the demo was still writing).
type Recorded = (String, Option<String>);

/// Whether `rel` is a name the demo writes: `agents/main/sessions/sessions.json` or
/// `agents/main/sessions/<uuid>.jsonl`. Only such names are ever removed, whatever a manifest
/// says.
fn is_demo_name(rel: &str) -> bool {
    let Some(name) = rel
        .strip_prefix(SESSIONS_DIR)
        .and_then(|r| r.strip_prefix('/'))
    else {
        return false;
    };
    if name == "sessions.json" {
        return true;
    }
    let Some(id) = name.strip_suffix(".jsonl") else {
        return false;
    };
    id.len() == 36
        && id.char_indices().all(|(i, ch)| {
            if matches!(i, 8 | 13 | 18 | 23) {
                ch == '-'
            } else {
                ch.is_ascii_digit() || ('a'..='f').contains(&ch)
            }
        })
}

/// The files an earlier demo recorded; `None` when there is no manifest.
fn read_manifest(root: &Path) -> anyhow::Result<Option<Vec<Recorded>>> {
    let path = root.join(MANIFEST);
    match crate::fsx::probe(&path) {
        crate::fsx::Found::Regular => {}
        crate::fsx::Found::Missing => return Ok(None),
        _ => bail!(UsageError::new(format!(
            "{} is not a regular file; the demo leaves {} alone",
            crate::text::path(&path),
            crate::text::path(root)
        ))),
    }
    let bytes = session_store::io::read_file(&path)
        .with_context(|| format!("cannot read {}", crate::text::path(&path)))?;
    let v =
        parse_value(&bytes).with_context(|| format!("{} is not JSON", crate::text::path(&path)))?;
    let mut out = Vec::new();
    for f in v
        .get("files")
        .and_then(JsValue::as_array)
        .into_iter()
        .flatten()
    {
        let Some(p) = f.get("path").and_then(JsValue::as_str_lossy) else {
            continue;
        };
        let hash = f
            .get("sha256")
            .and_then(JsValue::as_str_lossy)
            .map(|h| h.into_owned());
        if is_demo_name(&p) {
            out.push((p.into_owned(), hash));
        }
    }
    Ok(Some(out))
}

/// Every path under `root` (relative, `/`-separated, sorted), directories included, without
/// following symbolic links.
fn walk(root: &Path) -> anyhow::Result<Vec<(String, bool)>> {
    let mut out = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(rel) = pending.pop() {
        let dir = root.join(&rel);
        let rd = std::fs::read_dir(&dir)
            .with_context(|| format!("cannot read {}", crate::text::path(&dir)))?;
        for e in rd {
            let e = e.with_context(|| format!("cannot read {}", crate::text::path(&dir)))?;
            let child = rel.join(e.file_name());
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            if is_dir {
                pending.push(child.clone());
            }
            out.push((child.to_string_lossy().into_owned(), is_dir));
        }
    }
    out.sort();
    Ok(out)
}

/// Makes room for the demo store, or explains why not. Writes only into an empty or missing
/// root or over an earlier demo (a manifest): then every file under the root must be the
/// manifest or a file it records, unchanged since (same sha256); those are removed. Anything
/// else in the root is named and nothing is removed.
fn prepare_root(root: &Path) -> anyhow::Result<()> {
    let shown = crate::text::path(root);
    if root.exists() && !root.is_dir() {
        bail!(UsageError::new(format!(
            "{shown} exists and is not a directory"
        )));
    }
    let non_empty = std::fs::read_dir(root).is_ok_and(|mut rd| rd.next().is_some());
    if !non_empty {
        return Ok(());
    }
    let Some(recorded) = read_manifest(root)? else {
        let store = root.join("openclaw.json").exists() || root.join("agents").exists();
        bail!(UsageError::new(format!(
            "{shown} is not empty and holds no demo manifest ({MANIFEST}){}; the demo writes \
             only into an empty directory or over an earlier demo. Choose another --root",
            if store {
                ", and it looks like an OpenClaw store (openclaw.json or agents/)"
            } else {
                ""
            }
        )));
    };
    let dirs = ["agents", "agents/main", SESSIONS_DIR];
    let mut removable = Vec::new();
    for (rel, is_dir) in walk(root)? {
        if rel == MANIFEST || (is_dir && dirs.contains(&rel.as_str())) {
            continue;
        }
        let p = root.join(&rel);
        let hash = recorded.iter().find(|(r, _)| *r == rel).map(|(_, h)| h);
        // Outside the demo's sessions directory, what the manifest does not record is not the
        // demo's (e.g. the `state/openclaw.sqlite` OpenClaw makes when it reads the store): it
        // is left where it is, untouched. Inside it, an unrecorded file would join the store.
        let in_store = rel.starts_with(&format!("{SESSIONS_DIR}/"));
        if hash.is_none() && !in_store {
            continue;
        }
        let unchanged = match hash {
            _ if is_dir || !matches!(crate::fsx::probe(&p), crate::fsx::Found::Regular) => false,
            None => false,
            // Recorded before it was created: the demo stopped while writing it.
            Some(None) => true,
            Some(Some(h)) => session_store::io::read_file(&p)
                .with_context(|| format!("cannot read {}", crate::text::path(&p)))
                .map(|b| sha256_hex(&b) == *h)?,
        };
        if !unchanged {
            let why = if hash.is_some() {
                "was changed since the demo wrote it"
            } else {
                "is not part of the demo store (the manifest does not record it)"
            };
            bail!(UsageError::new(format!(
                "not rebuilding the demo in {shown}: {} {why}; the demo replaces only its own \
                 store. Move it away or choose another --root",
                crate::text::path(&p)
            )));
        }
        removable.push(p);
    }
    for p in &removable {
        session_store::io::remove_file(p)
            .with_context(|| format!("cannot remove {}", crate::text::path(p)))?;
    }
    Ok(())
}

/// Records the demo's files: `(relative path, sha256)`, `None` for a file about to be created.
fn write_manifest(root: &Path, files: &[(String, Option<String>)]) -> anyhow::Result<()> {
    let files: Vec<JsValue> = files
        .iter()
        .map(|(rel, hash)| {
            obj(vec![
                ("path", s(rel)),
                ("sha256", hash.as_deref().map_or(JsValue::Null, s)),
            ])
        })
        .collect();
    let v = obj(vec![
        (
            "note",
            s(
                "Written by `sessions demo`: this directory is its demo store. Rerunning \
                 `sessions demo` here removes the files listed below, and only while their \
                 sha256 is unchanged (a null sha256: the demo stopped while creating the file), \
                 then builds the store again; it refuses while the directory holds anything \
                 else.",
            ),
        ),
        ("files", JsValue::Array(files)),
    ]);
    let mut text = session_format::normalize::to_json_string_indented(&v, 2);
    text.push('\n');
    let path = root.join(MANIFEST);
    session_store::io::atomic_rewrite(&path, text.as_bytes()).with_context(|| {
        format!(
            "cannot write the demo manifest {}",
            crate::text::path(&path)
        )
    })?;
    Ok(())
}

/// Records `rel` as about to be created, runs `make`, then records its sha256 (or drops the
/// record when `make` created nothing).
fn recorded_write<T>(
    root: &Path,
    recorded: &mut Vec<Recorded>,
    rel: &str,
    make: impl FnOnce() -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    recorded.push((rel.to_owned(), None));
    write_manifest(root, recorded)?;
    let result = make();
    match session_store::io::read_file(&root.join(rel)) {
        Ok(b) => {
            if let Some(last) = recorded.last_mut() {
                last.1 = Some(sha256_hex(&b));
            }
        }
        Err(_) if !root.join(rel).exists() => {
            recorded.pop();
        }
        Err(_) => {}
    }
    write_manifest(root, recorded)?;
    result
}

/// What a built chat's store entry records, from the demo's clock.
struct Built {
    started_ms: i64,
    updated_ms: i64,
    last_user_ms: i64,
    last_reply: Option<(Model, f64, f64)>,
    compactions: usize,
}

/// The store entry of a built chat, with the fields (and their order) of the reference's rows
/// in the fixture (R3.5–R3.6): route and origin, `sessionId`, `updatedAt` (the last message),
/// `sessionStartedAt` (the header), `lastInteractionAt` (the last user message), the model of
/// the last reply and its token counters, and `sessionFile` (`<sessionId>.jsonl`).
fn store_entry(chat: &Chat, session_id: &str, b: &Built) -> StoreEntry {
    let num = |v: i64| n(v as f64);
    let origin = vec![
        ("label", s(chat.label)),
        ("provider", s(chat.channel)),
        ("surface", s(chat.channel)),
        ("chatType", s(chat.chat_type)),
        ("from", s(chat.from)),
        ("to", s(chat.to)),
        ("accountId", s("default")),
    ];
    let mut fields = JsObject::new();
    if let Some((id, subject, display)) = chat.group {
        fields.insert("chatType", s(chat.chat_type));
        fields.insert("channel", s(chat.channel));
        fields.insert("groupId", s(id));
        fields.insert("subject", s(subject));
        fields.insert("displayName", s(display));
    }
    let pairs: Vec<(&str, JsValue)> = vec![
        ("origin", obj(origin)),
        ("sessionId", s(session_id)),
        ("updatedAt", num(b.updated_ms)),
        ("sessionStartedAt", num(b.started_ms)),
        (
            "route",
            obj(vec![
                ("channel", s(chat.channel)),
                ("accountId", s("default")),
                ("target", obj(vec![("to", s(chat.to))])),
            ]),
        ),
        (
            "deliveryContext",
            obj(vec![
                ("channel", s(chat.channel)),
                ("to", s(chat.to)),
                ("accountId", s("default")),
            ]),
        ),
        ("lastChannel", s(chat.channel)),
        ("lastTo", s(chat.to)),
        ("lastAccountId", s("default")),
    ];
    for (k, v) in pairs {
        fields.insert(k, v);
    }
    if chat.group.is_none() {
        fields.insert("chatType", s(chat.chat_type));
    }
    fields.insert("lastInteractionAt", num(b.last_user_ms));
    if chat.group.is_some() {
        fields.insert("groupActivation", s("mention"));
    }
    let (model, input, output) = b.last_reply.unwrap_or((SONNET, 0.0, 0.0));
    fields.insert("totalTokens", n(input + output));
    fields.insert("totalTokensFresh", JsValue::Bool(true));
    fields.insert("systemSent", JsValue::Bool(true));
    fields.insert("abortedLastRun", JsValue::Bool(false));
    fields.insert("compactionCount", n(b.compactions as f64));
    fields.insert("sessionFile", s(&format!("{session_id}.jsonl")));
    fields.insert("modelProvider", s(model.provider));
    fields.insert("model", s(model.id));
    fields.insert("inputTokens", n(input));
    fields.insert("outputTokens", n(output));
    fields.insert("contextTokens", n(200_000.0));
    StoreEntry::from_fields(fields)
}

/// The lines saying what the Telegram DM's [`AgentSession`] did: its active tools, the tool
/// calls it ran, its model and thinking level, and its compaction.
fn write_agent_report(r: &AgentReport, out: &mut Output) -> anyhow::Result<()> {
    let c = &r.compaction;
    out.line("The Telegram DM was recorded through an AgentSession (crate agent-session):")?;
    out.line(&format!("  active tools  {}", r.active_tools.join(", ")))?;
    let errors = if r.tool_errors.is_empty() {
        String::new()
    } else {
        format!(
            " ({} error result{}: {})",
            r.tool_errors.len(),
            if r.tool_errors.len() == 1 { "" } else { "s" },
            r.tool_errors.join(", ")
        )
    };
    out.line(&format!(
        "  tool calls    {} run by the registered tools, each recorded as a toolResult{errors}",
        r.tool_calls
    ))?;
    out.line(&format!(
        "  model         {}, thinking {}",
        r.model, r.thinking
    ))?;
    out.line(&format!(
        "  compaction    {}: {} messages summarised, first kept entry {} ({}), tokens before {}",
        c.entry_id,
        c.summarized_messages,
        c.first_kept_entry_id.to_str_lossy(),
        r.first_kept_type,
        c.tokens_before
    ))?;
    Ok(())
}

/// `sessions demo [--root DIR]`: builds the store (three transcripts, then `sessions.json`),
/// every time from the run's clock (`ctx.now_ms()`, the global `--now`), then shows `list`, a
/// `tree` and a `context` of it.
pub(crate) fn run(ctx: &Ctx, root: &Path, width: usize, out: &mut Output) -> anyhow::Result<()> {
    prepare_root(root)?;
    session_store::io::ensure_dir(root)
        .with_context(|| format!("cannot create {}", crate::text::path(root)))?;
    // The manifest comes first: when it cannot be written, nothing else is.
    let mut recorded: Vec<Recorded> = Vec::new();
    write_manifest(root, &recorded)?;
    let now = ctx.now_ms();
    type Build = fn(&Path, &str, &mut Clock) -> anyhow::Result<Option<AgentReport>>;
    let builds: [Build; 3] = [build_telegram, build_discord, build_slack];
    let mut agent_report = None;
    let mut entries = Vec::new();
    for (chat, build) in CHATS.iter().zip(builds) {
        let id = session_id(chat.key, now);
        let rel = format!("{SESSIONS_DIR}/{id}.jsonl");
        let path = root.join(&rel);
        let mut clock = Clock::starting_at(now - chat.starts_before_now_ms);
        let started_ms = clock.now();
        let report = recorded_write(root, &mut recorded, &rel, || {
            session_format::ids::with_clock(clock.reader(), || build(&path, &id, &mut clock))
                .with_context(|| format!("building {}", chat.what))
        })?;
        let built = Built {
            started_ms,
            updated_ms: clock.now(),
            last_user_ms: clock.last_user,
            last_reply: clock.last_reply,
            compactions: usize::from(report.is_some()),
        };
        entries.push((chat.key, store_entry(chat, &id, &built)));
        if let Some(r) = report {
            agent_report = Some((r, path));
        }
    }
    // The store last, so that every row it holds names a transcript that exists.
    let store_rel = format!("{SESSIONS_DIR}/sessions.json");
    recorded_write(root, &mut recorded, &store_rel, || {
        let path = root.join(&store_rel);
        let mut store = SessionStore::load(&path)
            .with_context(|| format!("cannot read {}", crate::text::path(&path)))?;
        for (key, entry) in entries {
            store.insert(key, entry);
        }
        store
            .save()
            .with_context(|| format!("cannot write {}", crate::text::path(&path)))?;
        Ok(())
    })?;

    let shown = crate::text::path(root);
    let quoted = |p: &Path| crate::text::shell_quote(&p.display().to_string());
    out.line(&format!(
        "Built a demo OpenClaw store in {shown}: agent main, {SESSIONS_DIR}/sessions.json with 3 \
         sessions (a Telegram DM, a Discord group chat, a Slack DM)."
    ))?;
    let Some((report, dm)) = agent_report else {
        bail!("the Telegram demo session made no report");
    };
    write_agent_report(&report, out)?;
    out.line("")?;
    out.line(&format!("$ sessions list --root {}", quoted(root)))?;
    let loc = Locator {
        root: Some(root.to_path_buf()),
        agent: None,
        dir: None,
        pi: false,
    };
    // What `sessions list --root ROOT` prints: the store's keys joined with the transcripts.
    let flags = crate::store_list::ListFlags {
        active_minutes: None,
        limit: None,
        archived: false,
        width: crate::text::table_width(false),
    };
    crate::list_cmd::run(ctx, &loc, false, false, &flags, out)?;

    out.line("")?;
    out.line(&format!("$ sessions tree {}", quoted(&dm)))?;
    let opened = model::open(ctx, &dm)?;
    let ro = &opened.ro;
    let sm = &ro.session;
    let m = model::TreeModel::new(sm, Some(&ro.report));
    let opts = tree::TreeOptions { depth: None, width };
    tree::write_text(&dm, ro, &m, &opts, out)?;

    out.line("")?;
    out.line(&format!("$ sessions context {}", quoted(&dm)))?;
    let built = context::build(sm, None)?;
    for l in context::render_lines(&dm, sm, &built, None, width)? {
        out.line(&l)?;
    }
    out.line("")?;
    out.line("Next:")?;
    out.line(&format!(
        "  sessions tree --root {} --agent main --session {}",
        quoted(root),
        session_id(CHATS[1].key, now)
    ))?;
    out.line(&format!("  sessions check {}", quoted(&dm)))?;
    out.line(&format!(
        "  sessions export {} --format html > lisbon.html",
        quoted(&dm)
    ))?;
    out.line(&format!(
        "  OPENCLAW_STATE_DIR={} openclaw sessions",
        quoted(root)
    ))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // Tests fail loudly by design.

    use super::*;
    use session_format::json::to_json_string;

    fn args(text: &str) -> JsValue {
        parse_value(text.as_bytes()).unwrap()
    }

    fn shown(r: Result<ToolOutput, ToolError>) -> String {
        match r {
            Ok(o) => format!(
                "ok {} {}",
                to_json_string(&JsValue::Array(o.content)),
                to_json_string(&o.details)
            ),
            Err(e) => format!("error {}", e.message),
        }
    }

    #[test]
    fn the_telegram_tools_answer_from_their_arguments() {
        assert_eq!(
            shown(run_weather_forecast(&args(r#"{"city":"Lisbon","days":1}"#))),
            r#"ok [{"type":"text","text":"Sat 2026-01-10: 24°C, sunny"}] {"city":"Lisbon","days":1}"#
        );
        assert_eq!(
            shown(run_weather_forecast(&args(r#"{"city":"Lisbon","days":9}"#))),
            r#"ok [{"type":"text","text":"Sat 2026-01-10: 24°C, sunny\nSun 2026-01-11: 19°C, light rain\nMon 2026-01-12: 21°C, cloudy"}] {"city":"Lisbon","days":3}"#
        );
        assert_eq!(
            shown(run_weather_forecast(&args(r#"{"city":"Porto"}"#))),
            "error No forecast for Porto"
        );
        assert_eq!(
            shown(run_weather_forecast(&args("{}"))),
            "error missing string argument `city`"
        );
        assert_eq!(
            shown(run_restaurant_search(&args(
                r#"{"city":"Lisbon","cuisine":"sushi"}"#
            ))),
            "error No sushi restaurants found in Lisbon"
        );
        assert_eq!(
            shown(run_book_table(&args(
                r#"{"restaurant":"Taberna da Rua","time":"21:00","party":2}"#
            ))),
            "error Fully booked at 21:00"
        );
        assert_eq!(
            shown(run_book_table(&args(
                r#"{"restaurant":"Nowhere","time":"20:00","party":2}"#
            ))),
            "error Unknown restaurant: Nowhere"
        );
    }

    #[test]
    fn the_telegram_tools_are_registered_with_snippets_and_guidelines() {
        let sm = SessionManager::in_memory("/home/openclaw/workspace");
        let agent = AgentSession::new(
            sm,
            AgentSessionOptions {
                base_tools: telegram_tools(),
                ..AgentSessionOptions::default()
            },
        )
        .unwrap();
        assert_eq!(
            agent.get_active_tool_names(),
            ["weather_forecast", "restaurant_search", "book_table"]
        );
        let prompt = agent.system_prompt();
        for line in [
            "- weather_forecast: Get a city's weather forecast (up to 3 days)",
            "- restaurant_search: Search restaurants with free tables",
            "- book_table: Book a restaurant table",
            "Ask which restaurant the user wants before calling book_table.",
        ] {
            assert!(prompt.contains(line), "{line:?} not in {prompt}");
        }
        for tool in agent.get_all_tools() {
            assert_eq!(
                tool.parameters
                    .get("type")
                    .and_then(JsValue::as_str_lossy)
                    .as_deref(),
                Some("object"),
                "{}",
                tool.name
            );
        }
    }
}
