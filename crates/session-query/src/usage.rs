//! Token usage and cost of sessions, counted as pi 0.73.1's HTML export counts them, and summed
//! over many sessions into rows grouped by day, month, model, session or agent.
//!
//! Invariants:
//! - a session's counts are those of pi 0.73.1's export header (`computeStats` of its
//!   `template.js`) for the same file: every line of the file that parses is an entry (no
//!   de-duplication of rows that repeat an id, as pi), header lines (`type: "session"`) excluded;
//!   `message` entries are counted by `message.role` (a v1/v2 file's `hookMessage` is counted as
//!   `custom`, pi's in-memory v2→v3 migration); `custom_message`, `compaction` and
//!   `branch_summary` entries are counted by type; an assistant message adds its
//!   `toolCall` content blocks, its `provider/model` and its `usage`;
//! - token and cost fields follow JavaScript's `x || 0`: a missing, `null`, `false`, `0` or
//!   empty-string field adds 0, so does a number too large for a double (`1e400`: pi's export
//!   embeds the session through `JSON.stringify`, which writes JavaScript's `Infinity` as
//!   `null`), a number adds itself (negative and fractional numbers too), `true`
//!   adds 1; a non-empty string, an array or an object adds 0 here (pi would concatenate text
//!   instead of adding — a broken total we do not reproduce);
//! - cost is the sum of `usage.cost.input`, `.output`, `.cacheRead` and `.cacheWrite` (pi never
//!   reads `cost.total`), each part summed on its own in file order and the four parts added
//!   last, as pi does;
//! - a file whose first line that parses is not a session header (an object with
//!   `type: "session"` and a string `id`) counts nothing (pi's loader returns no entries);
//! - lines that are not JSON are skipped and counted ([`SessionUsage::invalid_lines`]), never an
//!   error;
//! - forks ([`SessionUsage::mark_copies`]): a session whose header names a `parentSession`
//!   holds copies of entries of its parent; the entries whose `id` also occurs in the parent
//!   file are the parent's and are not counted in the fork (entries without an `id` always
//!   count).
//!
//! Nothing here reads or writes files: the input is a session's bytes, as read from any
//! `session_store::Storage`.

use std::collections::{BTreeMap, HashSet};

use chrono::TimeZone;
use session_format::json::{EnvelopeScanner, Field, JsValue, ValueKind, parse_value};
use session_format::line::{LineContent, LineReader};

/// Token counts and cost of one or more assistant messages.
///
/// Tokens are counts as JavaScript numbers (doubles: integral in practice, summed as pi sums
/// them); cost is in US dollars, kept as its four parts.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Usage {
    /// `usage.input`: input tokens (not read from the cache).
    pub input: f64,
    /// `usage.output`: output tokens.
    pub output: f64,
    /// `usage.cacheRead`: input tokens read from the provider's prompt cache.
    pub cache_read: f64,
    /// `usage.cacheWrite`: input tokens written to the prompt cache.
    pub cache_write: f64,
    /// `usage.cost.input` in USD.
    pub cost_input: f64,
    /// `usage.cost.output` in USD.
    pub cost_output: f64,
    /// `usage.cost.cacheRead` in USD.
    pub cost_cache_read: f64,
    /// `usage.cost.cacheWrite` in USD.
    pub cost_cache_write: f64,
}

impl Usage {
    /// Adds `other` field by field.
    pub fn add(&mut self, other: &Usage) {
        self.input += other.input;
        self.output += other.output;
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
        self.cost_input += other.cost_input;
        self.cost_output += other.cost_output;
        self.cost_cache_read += other.cost_cache_read;
        self.cost_cache_write += other.cost_cache_write;
    }

    /// True when every field, [`Usage::total_tokens`] and [`Usage::cost`] are finite: what a
    /// sum must stay to be counted (JSON has no `Infinity`).
    pub fn is_finite(&self) -> bool {
        [
            self.input,
            self.output,
            self.cache_read,
            self.cache_write,
            self.cost_input,
            self.cost_output,
            self.cost_cache_read,
            self.cost_cache_write,
            self.total_tokens(),
            self.cost(),
        ]
        .iter()
        .all(|n| n.is_finite())
    }

    /// Input + output + cache read + cache write tokens (the message's own `totalTokens` field
    /// is not read: pi's export does not show it).
    pub fn total_tokens(&self) -> f64 {
        self.input + self.output + self.cache_read + self.cache_write
    }

    /// The cost in USD: input + output + cache read + cache write, added in that order (pi's
    /// `totalCost`).
    pub fn cost(&self) -> f64 {
        self.cost_input + self.cost_output + self.cost_cache_read + self.cost_cache_write
    }

    /// The usage of an assistant message's `usage` object (JavaScript's `|| 0` per field, see
    /// the module docs).
    pub fn from_value(usage: &JsValue) -> Usage {
        let f = |k: &str| usage.get(k).map_or(0.0, or_zero);
        let mut u = Usage {
            input: f("input"),
            output: f("output"),
            cache_read: f("cacheRead"),
            cache_write: f("cacheWrite"),
            ..Usage::default()
        };
        if let Some(cost) = usage.get("cost").filter(|c| c.is_truthy()) {
            let c = |k: &str| cost.get(k).map_or(0.0, or_zero);
            u.cost_input = c("input");
            u.cost_output = c("output");
            u.cost_cache_read = c("cacheRead");
            u.cost_cache_write = c("cacheWrite");
        }
        u
    }
}

/// `value || 0` where the result is added to a number: a number is itself, `true` is 1, every
/// other value 0 (see the module docs for the strings pi would concatenate).
///
/// A number too large for a double (`1e400`, which JavaScript reads as `Infinity`) adds 0:
/// pi's export embeds the session through `JSON.stringify`, which writes it as `null`.
fn or_zero(v: &JsValue) -> f64 {
    match v {
        JsValue::Number(n) if n.is_finite() => *n,
        JsValue::Bool(true) => 1.0,
        _ => 0.0,
    }
}

/// What a counted entry is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecordKind {
    /// A `message` entry with its `message.role` (`None` when the role is missing or not a
    /// string; `hookMessage` in a v1/v2 file is `custom`).
    Message(Option<String>),
    /// A `custom_message` entry.
    CustomMessage,
    /// A `compaction` entry.
    Compaction,
    /// A `branch_summary` entry.
    BranchSummary,
}

/// One counted entry of a session.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// The entry's `id` (`None` in a v1 file, or when not a string).
    pub id: Option<String>,
    /// When the entry was written, in milliseconds since the epoch: its `timestamp` (a string
    /// as JavaScript's `Date.parse` reads it, or a number), else `message.timestamp` (a number);
    /// `None` when neither gives a time.
    pub time_ms: Option<i64>,
    /// What the entry is.
    pub kind: RecordKind,
    /// For an assistant message with a truthy `message.model`: `provider/model` (or `model`
    /// alone without a provider).
    pub model: Option<String>,
    /// For an assistant message with a `usage` object: its usage. `None` for an assistant
    /// message without one (counted in [`Totals::without_usage`]) and for every other entry.
    pub usage: Option<Usage>,
    /// For an assistant message: its `toolCall` content blocks.
    pub tool_calls: u64,
    /// True when the entry is a copy of an entry of the session's parent (a fork,
    /// [`SessionUsage::mark_copies`]): not counted.
    pub copy: bool,
}

impl Record {
    /// True for an assistant message.
    pub fn is_assistant(&self) -> bool {
        matches!(&self.kind, RecordKind::Message(Some(r)) if r == "assistant")
    }
}

/// The counted entries of one session.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionUsage {
    /// The header's `id`; `None` when the file's first line that parses is not a session
    /// header (then nothing is counted, as in pi).
    pub session_id: Option<String>,
    /// The header's `version` (`None`: a v1 file without one).
    pub version: Option<f64>,
    /// The header's `parentSession` (the path of the session this one was forked from, as pi
    /// and OpenClaw write it), when it is a non-empty string.
    pub parent_session: Option<String>,
    /// The counted entries in file order (messages, custom messages, compactions, branch
    /// summaries).
    pub records: Vec<Record>,
    /// Non-blank lines that are not JSON (or nest too deep to be read), skipped.
    pub invalid_lines: u64,
}

impl SessionUsage {
    /// The ids of every counted entry (copies included): what a fork of this session may hold
    /// copies of.
    pub fn ids(&self) -> HashSet<String> {
        self.records.iter().filter_map(|r| r.id.clone()).collect()
    }

    /// Marks as copies the entries whose id is in `parent_ids` (the ids of the parent's file,
    /// [`SessionUsage::ids`]); returns how many entries are copies now.
    pub fn mark_copies(&mut self, parent_ids: &HashSet<String>) -> u64 {
        let mut n = 0;
        for r in &mut self.records {
            if r.id.as_ref().is_some_and(|id| parent_ids.contains(id)) {
                r.copy = true;
            }
            n += u64::from(r.copy);
        }
        n
    }

    /// The entries marked as copies.
    pub fn copies(&self) -> u64 {
        self.records.iter().filter(|r| r.copy).count() as u64
    }

    /// The session's totals (copies left out), as pi's export header shows them for a file that
    /// is not a fork.
    pub fn totals(&self) -> Totals {
        let mut t = Totals::default();
        for r in self.records.iter().filter(|r| !r.copy) {
            t.add_record(r);
        }
        t
    }
}

/// Counts over a set of entries (a session, a row of a report, a report's total).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Totals {
    /// `message` entries (every role).
    pub messages: u64,
    /// `message` entries by `message.role` (`(none)` for a missing or non-string role).
    pub by_role: BTreeMap<String, u64>,
    /// `custom_message` entries (pi's "custom").
    pub custom_messages: u64,
    /// `compaction` entries.
    pub compactions: u64,
    /// `branch_summary` entries.
    pub branch_summaries: u64,
    /// Assistant messages.
    pub assistant_messages: u64,
    /// Assistant messages without a `usage` object (missing, `null` or not an object).
    pub without_usage: u64,
    /// Assistant messages whose usage is not countable, so not added: adding it would make a
    /// sum of these totals infinite, where pi's export would show `Infinity` (or `NaN`); JSON
    /// has no such number. (A single field too large for a double, such as `1e400`, is not
    /// this: it adds 0, as in pi's export, and the message's other fields are added.)
    pub not_countable: u64,
    /// `toolCall` content blocks of assistant messages.
    pub tool_calls: u64,
    /// Tokens and cost, summed in entry order.
    pub usage: Usage,
    /// The models of the assistant messages (`provider/model`), in order of first appearance.
    pub models: Vec<String>,
}

impl Totals {
    /// Counts one entry in.
    pub fn add_record(&mut self, r: &Record) {
        match &r.kind {
            RecordKind::Message(role) => {
                self.messages += 1;
                let role = role.as_deref().unwrap_or("(none)");
                match self.by_role.get_mut(role) {
                    Some(n) => *n += 1,
                    None => {
                        self.by_role.insert(role.to_owned(), 1);
                    }
                }
                if role == "assistant" {
                    self.assistant_messages += 1;
                    self.tool_calls += r.tool_calls;
                    match &r.usage {
                        Some(u) => {
                            let mut next = self.usage;
                            next.add(u);
                            if next.is_finite() {
                                self.usage = next;
                            } else {
                                self.not_countable += 1;
                            }
                        }
                        None => self.without_usage += 1,
                    }
                    if let Some(m) = &r.model
                        && !self.models.contains(m)
                    {
                        self.models.push(m.clone());
                    }
                }
            }
            RecordKind::CustomMessage => self.custom_messages += 1,
            RecordKind::Compaction => self.compactions += 1,
            RecordKind::BranchSummary => self.branch_summaries += 1,
        }
    }

    /// `message` entries of `role`.
    pub fn role(&self, role: &str) -> u64 {
        self.by_role.get(role).copied().unwrap_or(0)
    }
}

/// A JavaScript string value's text form for a template literal (`${v}`): strings as they
/// are, numbers as JavaScript prints them, booleans as words; `None` for other values.
fn js_text(v: &JsValue) -> Option<String> {
    match v {
        JsValue::String(s) => Some(s.to_str_lossy().into_owned()),
        JsValue::Number(n) => Some(session_format::json::number_to_string(*n)),
        JsValue::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The time of an entry: `timestamp` (string or number), else `message.timestamp` (number).
fn time_of(entry_ts: Option<&JsValue>, message_ts: Option<&JsValue>) -> Option<i64> {
    let ms = |v: &JsValue| match v {
        JsValue::String(s) => session_format::time::parse_js_date(&s.to_str_lossy()),
        JsValue::Number(n) if n.is_finite() && n.abs() <= 8.64e15 => Some(n.trunc() as i64),
        _ => None,
    };
    entry_ts.and_then(ms).or_else(|| message_ts.and_then(ms))
}

/// Reads the counted entries of a session's bytes (see the module docs for what is counted).
///
/// `skip`: ids of entries not to count (marked [`Record::copy`]): the ids of the parent of a
/// fork ([`SessionUsage::ids`] of the parent), or `None`.
///
/// The lines are read as pi reads them (`session_format::line::LineReader`'s rules: LF-split,
/// blank lines skipped, the whole-file trim). Each entry line is read once, typed (serde_json:
/// only the fields counted are decoded, the rest skipped; duplicate keys resolve as in
/// JavaScript, the last one wins); a line the typed read refuses (not JSON, a lone surrogate in a
/// field read, deeper than serde_json's nesting limit, the header, a line the whole-file trim
/// changes) is read as [`session_usage_reference`] reads every line, with the same result.
pub fn session_usage(bytes: &[u8], skip: Option<&HashSet<String>>) -> SessionUsage {
    let mut r = Reader::new(skip);
    let mut seen_non_blank = false;
    for raw in session_format::line::lines(bytes) {
        let b = raw.bytes;
        if b.first() != Some(&b'{') && session_format::line::is_blank(b) {
            continue;
        }
        let first = !seen_non_blank;
        seen_non_blank = true;
        if r.header_seen
            && b.first() == Some(&b'{')
            && let Ok(row) = serde_json::from_slice::<fast::Row<'_>>(b)
        {
            r.typed(row);
            continue;
        }
        let end = raw.offset + 1;
        if let Some(line) = LineReader::range(bytes, raw.offset, end, !first).next()
            && !r.line(line)
        {
            return r.out;
        }
    }
    r.out
}

/// [`session_usage`] with every line validated by the envelope scan and the assistant messages
/// parsed in full (`session_format::json::parse_value`): the reference the typed read is checked
/// against (differential tests); the same result.
#[doc(hidden)]
pub fn session_usage_reference(bytes: &[u8], skip: Option<&HashSet<String>>) -> SessionUsage {
    let mut r = Reader::new(skip);
    for line in LineReader::new(bytes) {
        if !r.line(line) {
            return r.out;
        }
    }
    r.out
}

/// The state of one session's read.
struct Reader<'s> {
    out: SessionUsage,
    scanner: EnvelopeScanner,
    header_seen: bool,
    hook_is_custom: bool,
    skip: Option<&'s HashSet<String>>,
}

impl<'s> Reader<'s> {
    fn new(skip: Option<&'s HashSet<String>>) -> Self {
        Reader {
            out: SessionUsage::default(),
            scanner: EnvelopeScanner::new(),
            header_seen: false,
            hook_is_custom: false,
            skip,
        }
    }

    fn is_copy(&self, id: Option<&String>) -> bool {
        id.is_some_and(|id| self.skip.is_some_and(|s| s.contains(id)))
    }

    fn role(&self, r: &str) -> String {
        if self.hook_is_custom && r == "hookMessage" {
            "custom".to_owned()
        } else {
            r.to_owned()
        }
    }

    /// Counts a line read by the typed read (after the header).
    fn typed(&mut self, row: fast::Row<'_>) {
        let msg = match row.message {
            Some(fast::MsgField::Object(m)) => Some(m),
            _ => None,
        };
        let kind = match row.ty.as_ref().and_then(fast::Text::as_str) {
            Some("message") => RecordKind::Message(
                msg.as_ref()
                    .and_then(|m| m.role.as_ref())
                    .and_then(fast::Text::as_str)
                    .map(|r| self.role(r)),
            ),
            Some("custom_message") => RecordKind::CustomMessage,
            Some("compaction") => RecordKind::Compaction,
            Some("branch_summary") => RecordKind::BranchSummary,
            _ => return,
        };
        let id = row
            .id
            .as_ref()
            .and_then(fast::Text::as_str)
            .map(str::to_owned);
        let mut rec = Record {
            copy: self.is_copy(id.as_ref()),
            id,
            time_ms: row
                .timestamp
                .and_then(|t| t.0)
                .or_else(|| msg.as_ref().and_then(|m| m.timestamp.and_then(|t| t.0))),
            kind,
            model: None,
            usage: None,
            tool_calls: 0,
        };
        if rec.is_assistant()
            && let Some(m) = msg
        {
            rec.model = m.model_name();
            rec.usage = m.usage.and_then(|u| u.0);
            rec.tool_calls = m.content.map_or(0, |c| c.0);
        }
        self.out.records.push(rec);
    }

    /// Counts a line as the envelope scan reads it; false when the file turns out to have no
    /// header (nothing is counted then).
    fn line(&mut self, line: session_format::ReadLine<'_>) -> bool {
        let env = match line.content {
            LineContent::Blank => return true,
            LineContent::Malformed(_) => {
                self.out.invalid_lines += 1;
                return true;
            }
            LineContent::Json(env) => env,
        };
        let out = &mut self.out;
        let ty = env.r#type.as_str();
        if !self.header_seen {
            self.header_seen = true;
            if !session_format::is_readable_header(&env) {
                // pi's loader: no entries at all.
                self.out = SessionUsage {
                    invalid_lines: out.invalid_lines,
                    ..SessionUsage::default()
                };
                return false;
            }
            let Ok(v) = parse_value(line.json) else {
                out.invalid_lines += 1;
                return false;
            };
            out.session_id = v.get("id").and_then(JsValue::as_str_lossy).map(Into::into);
            out.version = v.get("version").and_then(JsValue::as_f64);
            out.parent_session = v
                .get("parentSession")
                .and_then(JsValue::as_str_lossy)
                .filter(|s| !s.is_empty())
                .map(Into::into);
            self.hook_is_custom = out.version.is_none_or(|v| v < 3.0);
            return true;
        }
        if env.kind != ValueKind::Object {
            return true;
        }
        let kind = match ty {
            Some("message") => RecordKind::Message(env.role.as_str().map(|r| self.role(r))),
            Some("custom_message") => RecordKind::CustomMessage,
            Some("compaction") => RecordKind::Compaction,
            Some("branch_summary") => RecordKind::BranchSummary,
            _ => return true,
        };
        let id = match &env.id {
            Field::Str(s) => Some(s.to_str_lossy().into_owned()),
            _ => None,
        };
        let mut rec = Record {
            copy: self.is_copy(id.as_ref()),
            id,
            time_ms: None,
            kind,
            model: None,
            usage: None,
            tool_calls: 0,
        };
        let out = &mut self.out;
        if rec.is_assistant() {
            let Some(a) = fast::assistant(line.json).or_else(|| dom_assistant(line.json)) else {
                out.invalid_lines += 1;
                return true;
            };
            rec.time_ms = a.time_ms;
            rec.model = a.model;
            rec.usage = a.usage;
            rec.tool_calls = a.tool_calls;
        } else {
            let direct = match self.scanner.top_level_field(line.json, b"timestamp") {
                Ok(Field::Str(s)) => session_format::time::parse_js_date(&s.to_str_lossy()),
                _ => None,
            };
            rec.time_ms = direct.or_else(|| {
                parse_value(line.json).ok().and_then(|v| {
                    time_of(
                        v.get("timestamp"),
                        v.get("message").and_then(|m| m.get("timestamp")),
                    )
                })
            });
        }
        out.records.push(rec);
        true
    }
}

/// The full-parse read of an assistant line (the reference of [`fast::assistant`]); `None`
/// when the line does not parse (it nests deeper than [`session_format::json::MAX_DEPTH`]).
fn dom_assistant(json: &[u8]) -> Option<fast::Assistant> {
    let v = parse_value(json).ok()?;
    let msg = v.get("message");
    let mut a = fast::Assistant {
        time_ms: time_of(v.get("timestamp"), msg.and_then(|m| m.get("timestamp"))),
        model: None,
        usage: None,
        tool_calls: 0,
    };
    if let Some(m) = msg {
        if let Some(model) = m.get("model").filter(|x| x.is_truthy()).and_then(js_text) {
            a.model = Some(
                match m
                    .get("provider")
                    .filter(|x| x.is_truthy())
                    .and_then(js_text)
                {
                    Some(p) => format!("{p}/{model}"),
                    None => model,
                },
            );
        }
        a.usage = m
            .get("usage")
            .filter(|u| u.as_object().is_some())
            .map(Usage::from_value);
        if let Some(blocks) = m.get("content").and_then(JsValue::as_array) {
            a.tool_calls = blocks
                .iter()
                .filter(|b| {
                    b.get("type").and_then(JsValue::as_str_lossy).as_deref() == Some("toolCall")
                })
                .count() as u64;
        }
    }
    Some(a)
}

/// How rows are keyed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// The entry's calendar day, `YYYY-MM-DD`.
    Day,
    /// The entry's calendar month, `YYYY-MM`.
    Month,
    /// The assistant message's `provider/model`; entries without a model (user messages, tool
    /// results, …, and assistant messages without one) are in the row `(no model)`.
    Model,
    /// The session (the key the caller gives, e.g. its id).
    Session,
    /// The agent (the key the caller gives; `(none)` without one).
    Agent,
}

impl Group {
    /// The group's name: `day`, `month`, `model`, `session` or `agent`.
    pub fn as_str(self) -> &'static str {
        match self {
            Group::Day => "day",
            Group::Month => "month",
            Group::Model => "model",
            Group::Session => "session",
            Group::Agent => "agent",
        }
    }
}

/// The time zone of days and months.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tz {
    /// The machine's local time zone (`TZ`).
    Local,
    /// UTC.
    Utc,
}

/// The key of entries without a time in a day or month grouping.
pub const NO_TIME: &str = "(no time)";
/// The key of entries without a model in a model grouping.
pub const NO_MODEL: &str = "(no model)";
/// The key of sessions without an agent in an agent grouping.
pub const NO_AGENT: &str = "(none)";

/// What a report sums and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReportOptions {
    /// How rows are keyed.
    pub group: Group,
    /// The zone of days and months.
    pub tz: Tz,
    /// Only entries at or after this time (ms since the epoch); entries without a time are
    /// left out when `since` or `until` is set.
    pub since: Option<i64>,
    /// Only entries before this time (ms since the epoch, exclusive).
    pub until: Option<i64>,
}

/// Sums of many sessions: one row per key of the group, and the total.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// The options the report was built with.
    pub options: ReportOptions,
    /// The rows by key, in key order (days and months chronologically).
    pub rows: BTreeMap<String, Totals>,
    /// Every counted entry of every session added (not the sum of the rows: the entries in the
    /// order they were added, so that one session's total is exactly pi's).
    pub total: Totals,
    /// Sessions added.
    pub sessions: u64,
    /// Entries not counted because they are copies of a fork's parent.
    pub copies: u64,
    /// Entries left out by `since`/`until` (those without a time included when a bound is set).
    pub filtered_out: u64,
    /// Invalid lines of the sessions added.
    pub invalid_lines: u64,
}

impl Report {
    /// An empty report.
    pub fn new(options: ReportOptions) -> Self {
        Report {
            options,
            rows: BTreeMap::new(),
            total: Totals::default(),
            sessions: 0,
            copies: 0,
            filtered_out: 0,
            invalid_lines: 0,
        }
    }

    /// The day or month key of a time.
    fn time_key(&self, ms: i64) -> Option<String> {
        let fmt = if self.options.group == Group::Month {
            "%Y-%m"
        } else {
            "%Y-%m-%d"
        };
        match self.options.tz {
            Tz::Utc => chrono::Utc
                .timestamp_millis_opt(ms)
                .single()
                .map(|t| t.format(fmt).to_string()),
            Tz::Local => chrono::Local
                .timestamp_millis_opt(ms)
                .single()
                .map(|t| t.format(fmt).to_string()),
        }
    }

    /// Adds a session's entries (its copies left out). `session` is its key in a session
    /// grouping, `agent` its agent.
    pub fn add(&mut self, s: &SessionUsage, session: &str, agent: Option<&str>) {
        self.sessions += 1;
        self.invalid_lines += s.invalid_lines;
        let o = self.options;
        let mut last: Option<(String, Totals)> = None;
        for r in &s.records {
            if r.copy {
                self.copies += 1;
                continue;
            }
            if o.since.is_some() || o.until.is_some() {
                let inside = r.time_ms.is_some_and(|t| {
                    o.since.is_none_or(|s| t >= s) && o.until.is_none_or(|u| t < u)
                });
                if !inside {
                    self.filtered_out += 1;
                    continue;
                }
            }
            self.total.add_record(r);
            let key: &str = match o.group {
                Group::Session => session,
                Group::Agent => agent.unwrap_or(NO_AGENT),
                Group::Model => r.model.as_deref().unwrap_or(NO_MODEL),
                Group::Day | Group::Month => {
                    let k = r.time_ms.and_then(|t| self.time_key(t));
                    // Consecutive entries of one day share a row: keep it until the key changes.
                    let k = k.unwrap_or_else(|| NO_TIME.to_owned());
                    match &mut last {
                        Some((lk, t)) if *lk == k => t.add_record(r),
                        _ => {
                            if let Some((lk, t)) = last.take() {
                                self.merge(lk, t);
                            }
                            let mut t = Totals::default();
                            t.add_record(r);
                            last = Some((k, t));
                        }
                    }
                    continue;
                }
            };
            match self.rows.get_mut(key) {
                Some(t) => t.add_record(r),
                None => {
                    let mut t = Totals::default();
                    t.add_record(r);
                    self.rows.insert(key.to_owned(), t);
                }
            }
        }
        if let Some((lk, t)) = last {
            self.merge(lk, t);
        }
    }

    fn merge(&mut self, key: String, t: Totals) {
        match self.rows.get_mut(&key) {
            Some(row) => row.merge(&t),
            None => {
                self.rows.insert(key, t);
            }
        }
    }
}

impl Totals {
    /// Adds another set of counts to this one.
    pub fn merge(&mut self, o: &Totals) {
        self.messages += o.messages;
        for (role, n) in &o.by_role {
            *self.by_role.entry(role.clone()).or_default() += n;
        }
        self.custom_messages += o.custom_messages;
        self.compactions += o.compactions;
        self.branch_summaries += o.branch_summaries;
        self.assistant_messages += o.assistant_messages;
        self.without_usage += o.without_usage;
        self.not_countable += o.not_countable;
        self.tool_calls += o.tool_calls;
        let mut next = self.usage;
        next.add(&o.usage);
        if next.is_finite() {
            self.usage = next;
        } else {
            // Adding `o`'s counted messages would make a sum infinite: none of them is added.
            self.not_countable += o.assistant_messages - o.without_usage - o.not_countable;
        }
        for m in &o.models {
            if !self.models.contains(m) {
                self.models.push(m.clone());
            }
        }
    }
}

/// JavaScript's `x.toFixed(digits)` for `|x| < 1e21` (the exact binary value rounded to
/// `digits` decimals, a tie going to the larger magnitude: the specification's "larger n" on
/// `-x` for a negative `x`); larger values as JavaScript prints them.
pub fn js_to_fixed(x: f64, digits: usize) -> String {
    if !x.is_finite() || x.abs() >= 1e21 {
        return session_format::json::number_to_string(x);
    }
    // The exact decimal expansion (a double has at most 1074 fractional digits).
    let exact = format!("{:.1100}", x.abs());
    let (int, frac) = exact.split_once('.').unwrap_or((&exact, ""));
    let mut digits_v: Vec<u8> = int.bytes().chain(frac.bytes().take(digits)).collect();
    let rest = &frac.as_bytes()[digits.min(frac.len())..];
    // n is the nearest integer to x·10^f; on a tie the larger n (for a negative x, JavaScript
    // works on -x and adds the sign).
    if rest.first().is_some_and(|&d| d >= b'5') {
        let mut i = digits_v.len();
        loop {
            if i == 0 {
                digits_v.insert(0, b'1');
                break;
            }
            i -= 1;
            if digits_v[i] == b'9' {
                digits_v[i] = b'0';
            } else {
                digits_v[i] += 1;
                break;
            }
        }
    }
    let int_len = digits_v.len() - digits;
    let mut s = String::with_capacity(digits_v.len() + 2);
    // JavaScript writes the sign of any negative x, even when it rounds to zero
    // ((-0.0001).toFixed(3) is "-0.000"); -0 is not negative.
    if x < 0.0 {
        s.push('-');
    }
    s.push_str(std::str::from_utf8(&digits_v[..int_len]).unwrap_or("0"));
    if digits > 0 {
        s.push('.');
        s.push_str(std::str::from_utf8(&digits_v[int_len..]).unwrap_or(""));
    }
    s
}

/// pi's `formatTokens` of its export header: under 1,000 as is, under 10,000 `x.xk`, under a
/// million `round(k)k`, else `x.xM`.
pub fn pi_format_tokens(count: f64) -> String {
    if count < 1000.0 {
        session_format::json::number_to_string(count)
    } else if count < 10000.0 {
        format!("{}k", js_to_fixed(count / 1000.0, 1))
    } else if count < 1_000_000.0 {
        format!(
            "{}k",
            // Math.round: for a positive value a tie goes up, as f64::round does.
            session_format::json::number_to_string((count / 1000.0).round())
        )
    } else {
        format!("{}M", js_to_fixed(count / 1_000_000.0, 1))
    }
}

/// The cost as pi's template formats it: `$` and three decimals (`toFixed(3)`). (The page pi
/// 0.73.1 writes shows it without the `$`: see [`pi_header`].)
pub fn pi_format_cost(cost: f64) -> String {
    format!("${}", js_to_fixed(cost, 3))
}

/// The header pi 0.73.1's HTML export shows for these totals, field by field, as the rendered
/// page shows it: `Models`, `Messages`, `Tool Calls`, `Tokens`, `Cost` (the `.info-item`s of
/// its header, without `Date`). The cost is shown without its `$` (see the comment inside).
pub fn pi_header(t: &Totals) -> Vec<(&'static str, String)> {
    let mut msg = Vec::new();
    let parts = [
        (t.role("user"), "user"),
        (t.role("assistant"), "assistant"),
        (t.role("toolResult"), "tool results"),
        (t.custom_messages, "custom"),
        (t.compactions, "compactions"),
        (t.branch_summaries, "branch summaries"),
    ];
    for (n, name) in parts {
        if n > 0 {
            msg.push(format!("{n} {name}"));
        }
    }
    let mut tok = Vec::new();
    let u = &t.usage;
    for (n, mark) in [
        (u.input, "↑"),
        (u.output, "↓"),
        (u.cache_read, "R"),
        (u.cache_write, "W"),
    ] {
        if n != 0.0 && !n.is_nan() {
            tok.push(format!("{mark}{}", pi_format_tokens(n)));
        }
    }
    vec![
        (
            "Models",
            if t.models.is_empty() {
                "unknown".to_owned()
            } else {
                t.models.join(", ")
            },
        ),
        (
            "Messages",
            if msg.is_empty() {
                "0".to_owned()
            } else {
                msg.join(", ")
            },
        ),
        ("Tool Calls", t.tool_calls.to_string()),
        (
            "Tokens",
            if tok.is_empty() {
                "0".to_owned()
            } else {
                tok.join(" ")
            },
        ),
        // pi's template writes `$${totalCost.toFixed(3)}`, but its export puts the script
        // into the page with `String.prototype.replace`, which turns `$$` into `$`: the page
        // shows the number without the dollar sign.
        ("Cost", js_to_fixed(u.cost(), 3)),
    ]
}

/// The typed read of an assistant message line: its time, model, usage and `toolCall` blocks,
/// every other value skipped without building a tree. `None` whenever the typed read refuses
/// the line (a duplicate key among the fields read, a lone surrogate, a value nested deeper
/// than serde_json's limit, …): the caller then parses the line in full, which gives the same
/// result for every line the typed read accepts.
mod fast {
    use std::fmt;

    use serde::Deserialize;
    use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
    use serde_json::Value;

    use super::Usage;

    /// What the typed read gives.
    #[derive(Debug, PartialEq)]
    pub(super) struct Assistant {
        pub(super) time_ms: Option<i64>,
        pub(super) model: Option<String>,
        pub(super) usage: Option<Usage>,
        pub(super) tool_calls: u64,
    }

    #[derive(Deserialize)]
    struct Line {
        #[serde(default)]
        timestamp: Option<Value>,
        #[serde(default)]
        message: Option<Msg>,
    }

    #[derive(Deserialize)]
    struct Msg {
        #[serde(default)]
        model: Option<Value>,
        #[serde(default)]
        provider: Option<Value>,
        #[serde(default)]
        usage: Option<Value>,
        #[serde(default)]
        content: Option<ToolCalls>,
        #[serde(default)]
        timestamp: Option<Value>,
    }

    /// The scalar visits of a visitor whose every scalar (string, boolean, number, null) gives
    /// the same `$value`.
    macro_rules! scalars_are {
        ($ty:ty, $value:expr) => {
            fn visit_str<E: de::Error>(self, _: &str) -> Result<$ty, E> {
                Ok($value)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<$ty, E> {
                Ok($value)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<$ty, E> {
                Ok($value)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<$ty, E> {
                Ok($value)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<$ty, E> {
                Ok($value)
            }
            fn visit_unit<E: de::Error>(self) -> Result<$ty, E> {
                Ok($value)
            }
        };
    }

    /// The number of `toolCall` blocks of a `content` value (0 unless it is an array).
    pub(super) struct ToolCalls(pub(super) u64);

    impl<'de> Deserialize<'de> for ToolCalls {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = ToolCalls;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("any value")
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ToolCalls, A::Error> {
                    let mut n = 0;
                    while let Some(b) = seq.next_element::<IsToolCall>()? {
                        n += u64::from(b.0);
                    }
                    Ok(ToolCalls(n))
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ToolCalls, A::Error> {
                    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                    Ok(ToolCalls(0))
                }
                scalars_are!(ToolCalls, ToolCalls(0));
            }
            d.deserialize_any(V)
        }
    }

    /// Whether a content block is an object whose `type` (the last one) is `"toolCall"`.
    struct IsToolCall(bool);

    impl<'de> Deserialize<'de> for IsToolCall {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = IsToolCall;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("any value")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<IsToolCall, A::Error> {
                    let mut tool = false;
                    while let Some(k) = map.next_key::<Key>()? {
                        if k.0 {
                            tool = map.next_value::<Text<'de>>()?.as_str() == Some("toolCall");
                        } else {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                    Ok(IsToolCall(tool))
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<IsToolCall, A::Error> {
                    while seq.next_element::<IgnoredAny>()?.is_some() {}
                    Ok(IsToolCall(false))
                }
                scalars_are!(IsToolCall, IsToolCall(false));
            }
            d.deserialize_any(V)
        }
    }

    /// A key: whether it is `type`.
    struct Key(bool);

    impl<'de> Deserialize<'de> for Key {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl Visitor<'_> for V {
                type Value = Key;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a key")
                }
                fn visit_str<E: de::Error>(self, s: &str) -> Result<Key, E> {
                    Ok(Key(s == "type"))
                }
            }
            d.deserialize_str(V)
        }
    }

    /// A top-level entry line, as the typed read sees it: only the fields counted are decoded,
    /// the last of duplicate keys wins (as in JavaScript).
    pub(super) struct Row<'a> {
        pub(super) ty: Option<Text<'a>>,
        pub(super) id: Option<Text<'a>>,
        pub(super) timestamp: Option<Time>,
        pub(super) message: Option<MsgField<'a>>,
    }

    /// A string value (borrowed when it has no escape), or any other value (skipped).
    pub(super) enum Text<'a> {
        Str(std::borrow::Cow<'a, str>),
        Other,
    }

    impl Text<'_> {
        pub(super) fn as_str(&self) -> Option<&str> {
            match self {
                Text::Str(s) => Some(s),
                Text::Other => None,
            }
        }
    }

    /// `message`: an object, or any other value.
    pub(super) enum MsgField<'a> {
        Object(Box<MsgFields<'a>>),
        Other,
    }

    /// The fields of `message` the count reads.
    #[derive(Default)]
    pub(super) struct MsgFields<'a> {
        pub(super) role: Option<Text<'a>>,
        pub(super) model: Option<Scalar>,
        pub(super) provider: Option<Scalar>,
        pub(super) usage: Option<UsageField>,
        pub(super) content: Option<ToolCalls>,
        pub(super) timestamp: Option<Time>,
    }

    impl MsgFields<'_> {
        /// `provider/model` (or `model`) when `model` is truthy.
        pub(super) fn model_name(&self) -> Option<String> {
            let m = self.model.as_ref().filter(|m| m.truthy)?.text.clone()?;
            Some(
                match self
                    .provider
                    .as_ref()
                    .filter(|p| p.truthy)
                    .and_then(|p| p.text.clone())
                {
                    Some(p) => format!("{p}/{m}"),
                    None => m,
                },
            )
        }
    }

    /// A value's truthiness and its `${v}` text (strings, numbers and booleans).
    pub(super) struct Scalar {
        truthy: bool,
        text: Option<String>,
    }

    /// A time: a string as `Date.parse` reads it, a number as epoch ms; `None` otherwise.
    #[derive(Clone, Copy)]
    pub(super) struct Time(pub(super) Option<i64>);

    /// `usage`: its counts when it is an object, `None` otherwise.
    pub(super) struct UsageField(pub(super) Option<Usage>);

    /// `x || 0` added to a number.
    struct OrZero(f64);

    /// `usage.cost`'s four parts (zeros unless it is an object).
    #[derive(Default)]
    struct Cost([f64; 4]);

    /// Any value skipped: maps and sequences drained, scalars ignored. `$f` gives the result of
    /// a scalar visit, `$default` that of every other value.
    macro_rules! any_value {
        ($ty:ty, $default:expr, $($m:ident($($a:ident: $t:ty),*) => $e:expr;)*) => {
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<$ty, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok($default)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<$ty, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok($default)
            }
            $(fn $m<E: de::Error>(self, $($a: $t),*) -> Result<$ty, E> { Ok($e) })*
        };
    }

    impl<'de> Deserialize<'de> for Text<'de> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Text<'de>;
                any_value!(Text<'de>, Text::Other,
                    visit_borrowed_str(s: &'de str) => Text::Str(std::borrow::Cow::Borrowed(s));
                    visit_str(s: &str) => Text::Str(std::borrow::Cow::Owned(s.to_owned()));
                    visit_bool(_b: bool) => Text::Other;
                    visit_i64(_n: i64) => Text::Other;
                    visit_u64(_n: u64) => Text::Other;
                    visit_f64(_n: f64) => Text::Other;
                    visit_unit() => Text::Other;
                );
            }
            d.deserialize_any(V)
        }
    }

    impl<'de> Deserialize<'de> for Scalar {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Scalar;
                any_value!(Scalar, Scalar { truthy: true, text: None },
                    visit_str(s: &str) => Scalar { truthy: !s.is_empty(), text: Some(s.to_owned()) };
                    visit_bool(b: bool) => Scalar { truthy: b, text: Some(b.to_string()) };
                    visit_i64(n: i64) => number(n as f64);
                    visit_u64(n: u64) => number(n as f64);
                    visit_f64(n: f64) => number(n);
                    visit_unit() => Scalar { truthy: false, text: None };
                );
            }
            d.deserialize_any(V)
        }
    }

    fn number(n: f64) -> Scalar {
        Scalar {
            truthy: n != 0.0 && !n.is_nan(),
            text: Some(session_format::json::number_to_string(n)),
        }
    }

    impl<'de> Deserialize<'de> for Time {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            fn ms(n: f64) -> Time {
                Time((n.is_finite() && n.abs() <= 8.64e15).then(|| n.trunc() as i64))
            }
            impl<'de> Visitor<'de> for V {
                type Value = Time;
                any_value!(Time, Time(None),
                    visit_str(s: &str) => Time(session_format::time::parse_js_date(s));
                    visit_bool(_b: bool) => Time(None);
                    visit_i64(n: i64) => ms(n as f64);
                    visit_u64(n: u64) => ms(n as f64);
                    visit_f64(n: f64) => ms(n);
                    visit_unit() => Time(None);
                );
            }
            d.deserialize_any(V)
        }
    }

    impl<'de> Deserialize<'de> for OrZero {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = OrZero;
                any_value!(OrZero, OrZero(0.0),
                    visit_str(_s: &str) => OrZero(0.0);
                    visit_bool(b: bool) => OrZero(if b { 1.0 } else { 0.0 });
                    visit_i64(n: i64) => OrZero(n as f64);
                    visit_u64(n: u64) => OrZero(n as f64);
                    visit_f64(n: f64) => OrZero(n);
                    visit_unit() => OrZero(0.0);
                );
            }
            d.deserialize_any(V)
        }
    }

    impl<'de> Deserialize<'de> for Cost {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Cost;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("any value")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Cost, A::Error> {
                    let mut c = Cost::default();
                    while let Some(k) = map.next_key::<Text<'de>>()? {
                        let i = match k.as_str() {
                            Some("input") => 0,
                            Some("output") => 1,
                            Some("cacheRead") => 2,
                            Some("cacheWrite") => 3,
                            _ => {
                                map.next_value::<IgnoredAny>()?;
                                continue;
                            }
                        };
                        c.0[i] = map.next_value::<OrZero>()?.0;
                    }
                    Ok(c)
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Cost, A::Error> {
                    while seq.next_element::<IgnoredAny>()?.is_some() {}
                    Ok(Cost::default())
                }
                scalars_are!(Cost, Cost::default());
            }
            d.deserialize_any(V)
        }
    }

    impl<'de> Deserialize<'de> for UsageField {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = UsageField;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("any value")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<UsageField, A::Error> {
                    let mut u = Usage::default();
                    while let Some(k) = map.next_key::<Text<'de>>()? {
                        match k.as_str() {
                            Some("input") => u.input = map.next_value::<OrZero>()?.0,
                            Some("output") => u.output = map.next_value::<OrZero>()?.0,
                            Some("cacheRead") => u.cache_read = map.next_value::<OrZero>()?.0,
                            Some("cacheWrite") => u.cache_write = map.next_value::<OrZero>()?.0,
                            Some("cost") => {
                                let c = map.next_value::<Cost>()?.0;
                                u.cost_input = c[0];
                                u.cost_output = c[1];
                                u.cost_cache_read = c[2];
                                u.cost_cache_write = c[3];
                            }
                            _ => {
                                map.next_value::<IgnoredAny>()?;
                            }
                        }
                    }
                    Ok(UsageField(Some(u)))
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<UsageField, A::Error> {
                    while seq.next_element::<IgnoredAny>()?.is_some() {}
                    Ok(UsageField(None))
                }
                scalars_are!(UsageField, UsageField(None));
            }
            d.deserialize_any(V)
        }
    }

    impl<'de> Deserialize<'de> for MsgField<'de> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = MsgField<'de>;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("any value")
                }
                fn visit_map<A: MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<MsgField<'de>, A::Error> {
                    let mut m = MsgFields::default();
                    while let Some(k) = map.next_key::<Text<'de>>()? {
                        match k.as_str() {
                            Some("role") => m.role = Some(map.next_value()?),
                            Some("model") => m.model = Some(map.next_value()?),
                            Some("provider") => m.provider = Some(map.next_value()?),
                            Some("usage") => m.usage = Some(map.next_value()?),
                            Some("content") => m.content = Some(map.next_value()?),
                            Some("timestamp") => m.timestamp = Some(map.next_value()?),
                            _ => {
                                map.next_value::<IgnoredAny>()?;
                            }
                        }
                    }
                    Ok(MsgField::Object(Box::new(m)))
                }
                fn visit_seq<A: SeqAccess<'de>>(
                    self,
                    mut seq: A,
                ) -> Result<MsgField<'de>, A::Error> {
                    while seq.next_element::<IgnoredAny>()?.is_some() {}
                    Ok(MsgField::Other)
                }
                scalars_are!(MsgField<'de>, MsgField::Other);
            }
            d.deserialize_any(V)
        }
    }

    impl<'de> Deserialize<'de> for Row<'de> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Row<'de>;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Row<'de>, A::Error> {
                    let mut r = Row {
                        ty: None,
                        id: None,
                        timestamp: None,
                        message: None,
                    };
                    while let Some(k) = map.next_key::<Text<'de>>()? {
                        match k.as_str() {
                            Some("type") => r.ty = Some(map.next_value()?),
                            Some("id") => r.id = Some(map.next_value()?),
                            Some("timestamp") => r.timestamp = Some(map.next_value()?),
                            Some("message") => r.message = Some(map.next_value()?),
                            _ => {
                                map.next_value::<IgnoredAny>()?;
                            }
                        }
                    }
                    Ok(r)
                }
            }
            d.deserialize_map(V)
        }
    }

    /// JavaScript truthiness of a value.
    fn truthy(v: &Value) -> bool {
        match v {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Number(n) => n.as_f64().is_some_and(|x| x != 0.0 && !x.is_nan()),
            Value::String(s) => !s.is_empty(),
            Value::Array(_) | Value::Object(_) => true,
        }
    }

    /// `${v}` for a string, number or boolean.
    fn text(v: &Value) -> Option<String> {
        match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => n.as_f64().map(session_format::json::number_to_string),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }

    /// `x || 0` added to a number (as [`super::or_zero`]).
    fn or_zero(v: Option<&Value>) -> f64 {
        match v {
            Some(Value::Number(n)) => n.as_f64().unwrap_or(0.0),
            Some(Value::Bool(true)) => 1.0,
            _ => 0.0,
        }
    }

    fn usage(u: &Value) -> Option<Usage> {
        let o = u.as_object()?;
        let mut out = Usage {
            input: or_zero(o.get("input")),
            output: or_zero(o.get("output")),
            cache_read: or_zero(o.get("cacheRead")),
            cache_write: or_zero(o.get("cacheWrite")),
            ..Usage::default()
        };
        if let Some(c) = o.get("cost").and_then(Value::as_object) {
            out.cost_input = or_zero(c.get("input"));
            out.cost_output = or_zero(c.get("output"));
            out.cost_cache_read = or_zero(c.get("cacheRead"));
            out.cost_cache_write = or_zero(c.get("cacheWrite"));
        }
        Some(out)
    }

    fn time(v: Option<&Value>) -> Option<i64> {
        match v? {
            Value::String(s) => session_format::time::parse_js_date(s),
            Value::Number(n) => n
                .as_f64()
                .filter(|n| n.is_finite() && n.abs() <= 8.64e15)
                .map(|n| n.trunc() as i64),
            _ => None,
        }
    }

    /// The typed read of an assistant line (see the module docs).
    pub(super) fn assistant(json: &[u8]) -> Option<Assistant> {
        let line: Line = serde_json::from_slice(json).ok()?;
        let msg = line.message?;
        let model = msg
            .model
            .as_ref()
            .filter(|m| truthy(m))
            .and_then(text)
            .map(
                |m| match msg.provider.as_ref().filter(|p| truthy(p)).and_then(text) {
                    Some(p) => format!("{p}/{m}"),
                    None => m,
                },
            );
        Some(Assistant {
            time_ms: time(line.timestamp.as_ref()).or_else(|| time(msg.timestamp.as_ref())),
            model,
            usage: msg.usage.as_ref().and_then(usage),
            tool_calls: msg.content.map_or(0, |c| c.0),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{dom_assistant, fast};

    /// The typed read gives what the full parse gives, or declines (then the full parse is used).
    #[test]
    fn the_typed_read_agrees_with_the_full_parse() {
        let lines = [
            r#"{"type":"message","id":"a","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"1"},{"type":"text","text":"x"},{"type":"toolCall"}],"provider":"p","model":"m","usage":{"input":1,"output":2.5,"cacheRead":-3,"cacheWrite":true,"cost":{"input":0.1,"output":"2","cacheRead":null,"cacheWrite":1e-7}}}}"#,
            r#"{"type":"message","message":{"role":"assistant","content":"text","model":5,"provider":"","usage":null,"timestamp":1767225600000}}"#,
            r#"{"type":"message","message":{"role":"assistant","content":{"type":"toolCall"},"model":"","usage":[1]}}"#,
            r#"{"type":"message","message":{"role":"assistant","content":[null,1,"toolCall",["toolCall"],{"type":"toolCall","type":"text"},{"type":"text","type":"toolCall"},{"type":{"x":1}}],"model":true,"provider":0,"usage":{"cost":5}}}"#,
            r#"{"type":"message","timestamp":5,"message":{"role":"assistant","content":[],"usage":{"input":1,"input":7,"cost":{"input":1,"input":2}}}}"#,
            // Duplicate keys among the fields read: the typed read declines, the parse decides.
            r#"{"type":"message","message":{"role":"assistant","content":[],"usage":{"input":1}},"message":{"role":"assistant","content":[],"usage":{"input":2}}}"#,
            r#"{"type":"message","timestamp":"2026-01-01T00:00:00Z","timestamp":"bad","message":{"role":"assistant","model":"a","model":"b","content":[]}}"#,
            // A lone surrogate in a skipped string and in the model.
            r#"{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"\ud800"}],"model":"m\udc00"}}"#,
            r#"{"type":"message","message":{"role":"assistant","content":[{"type":"tool\u0043all"}],"model":"\u00e9","usage":{"input":12345678901234567890}}}"#,
            r#"{"type":"message","timestamp":"not a date","message":{"role":"assistant","content":[],"timestamp":"2026-01-01","usage":{"input":1.7976931348623157e308,"output":5e-324}}}"#,
        ];
        let mut declined = 0;
        for l in lines {
            let dom = dom_assistant(l.as_bytes()).unwrap();
            match fast::assistant(l.as_bytes()) {
                Some(f) => assert_eq!(f, dom, "{l}"),
                None => declined += 1,
            }
        }
        // The two duplicate-key lines and the lone surrogate serde_json refuses to decode (in
        // `model`; the one in a skipped string it accepts).
        assert_eq!(declined, 3);
    }
}
