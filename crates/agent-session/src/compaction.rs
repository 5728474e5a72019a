//! Compaction planning and strategies (pi-format.md §0 "Compaction preparation", §3.9;
//! OpenClaw 2026.6.11 `prepareCompaction`, `findCutPoint`, `compact`), checked against the
//! reference's `prepareCompaction` (`tests/fixtures/reference/expected/compaction.json`).
//!
//! A compaction keeps the newest part of the branch and replaces what came before with a
//! summary; it appends one `compaction` entry (`summary`, `firstKeptEntryId`, `tokensBefore`,
//! `details: {readFiles, modifiedFiles}`, `fromHook: false`) and never removes anything from
//! the file. Planning, as the reference:
//! - the range starts at the previous compaction's `firstKeptEntryId` (else right after that
//!   compaction), so what the previous compaction kept is summarised, not dropped (#2608);
//! - the cut point keeps a budget of recent messages (tokens for `summary`, a message count for
//!   `truncate`) and is never a tool result: it is a `user`, `assistant`, `custom`,
//!   `bashExecution`, `branchSummary` or `compactionSummary` message, a `branch_summary` or a
//!   `custom_message` entry, widened backwards over non-message entries (stopping at a message
//!   or a compaction);
//! - a cut inside a turn (not at a user message) is a split turn: the turn's start is
//!   summarised separately;
//! - `tokensBefore` is [`crate::tokens::estimate_context_tokens`] of the current context;
//! - the files read and modified by `read`/`write`/`edit` tool calls in the summarised part are
//!   listed (merged with the previous compaction's details), sorted, and appended to the
//!   summary as `<read-files>` / `<modified-files>` sections.

use std::fmt;

use serde::{Deserialize, Serialize};
use session_format::json::{JsObject, JsString, JsValue};

use crate::convert::{convert_to_llm, js_string_of};
use crate::tokens::estimate_tokens;

/// The default token budget of recent messages a `summary` compaction keeps.
pub const DEFAULT_KEEP_RECENT_TOKENS: u64 = 20_000;
/// The default number of recent messages a `truncate` compaction keeps.
pub const DEFAULT_KEEP_LAST_MESSAGES: usize = 20;

/// Why a summariser failed.
#[derive(Debug, thiserror::Error)]
#[error("summarisation failed: {message}")]
pub struct SummarizeError {
    /// What went wrong.
    pub message: String,
}

/// What a summariser is asked to summarise.
#[derive(Clone, Copy, Debug)]
pub struct SummaryRequest<'a> {
    /// The messages being compacted away (context messages, as stored: `user`, `assistant`,
    /// `toolResult`, `custom`, `branchSummary`, …; compaction entries excluded).
    pub messages: &'a [JsValue],
    /// The previous compaction's summary, to be updated with `messages`.
    pub previous_summary: Option<&'a str>,
}

/// Produces compaction summaries (a model call in production; [`DeterministicSummarizer`] in
/// tests and the demo).
pub trait Summarizer: fmt::Debug {
    /// Summarises the history being compacted away.
    ///
    /// # Errors
    /// [`SummarizeError`]; the compaction is then not written.
    fn summarize(&self, request: &SummaryRequest<'_>) -> Result<String, SummarizeError>;

    /// Summarises the first part of a turn that was cut in the middle (the kept part follows
    /// it).
    ///
    /// # Errors
    /// [`SummarizeError`].
    fn summarize_turn_prefix(&self, messages: &[JsValue]) -> Result<String, SummarizeError>;
}

/// A summariser without a model: the summary names how many messages of each role it covers,
/// e.g. `Summary of 4 messages (user 2, assistant 2).`, preceded by `Previous summary: <first
/// line>\n` when there is one. Turn prefixes give `Turn prefix of N messages.`.
#[derive(Clone, Copy, Debug, Default)]
pub struct DeterministicSummarizer;

impl Summarizer for DeterministicSummarizer {
    fn summarize(&self, request: &SummaryRequest<'_>) -> Result<String, SummarizeError> {
        let mut counts: Vec<(String, usize)> = Vec::new();
        for m in request.messages {
            let role = m
                .get("role")
                .and_then(JsValue::as_str_lossy)
                .map_or_else(|| "unknown".to_owned(), |r| r.into_owned());
            match counts.iter_mut().find(|(r, _)| *r == role) {
                Some((_, n)) => *n += 1,
                None => counts.push((role, 1)),
            }
        }
        let roles = counts
            .iter()
            .map(|(r, n)| format!("{r} {n}"))
            .collect::<Vec<_>>()
            .join(", ");
        let mut out = String::new();
        if let Some(prev) = request.previous_summary {
            out.push_str("Previous summary: ");
            out.push_str(prev.lines().next().unwrap_or_default());
            out.push('\n');
        }
        out.push_str(&format!(
            "Summary of {} messages ({roles}).",
            request.messages.len()
        ));
        Ok(out)
    }

    fn summarize_turn_prefix(&self, messages: &[JsValue]) -> Result<String, SummarizeError> {
        Ok(format!("Turn prefix of {} messages.", messages.len()))
    }
}

/// How to compact.
pub enum CompactionStrategy {
    /// Keep about the last `keep_last` messages (counting `message` entries, tool results
    /// included) and drop the rest without a model call; the summary only says how many
    /// messages were removed. The cut is the first valid cut point at or after the
    /// `keep_last`-th newest message or, when none follows it (the newest messages are tool
    /// results), the last one before it, so a tool result is never the first kept entry and a
    /// turn's calls stay with their results. At least the newest cut point is kept
    /// (`keep_last: 0` acts as 1); a `keep_last` reaching back past everything since the
    /// previous compaction's kept entry gives `Nothing to compact`.
    Truncate {
        /// Messages to keep.
        keep_last: usize,
    },
    /// Summarise what is dropped with a [`Summarizer`], keeping about
    /// [`crate::AgentSession::keep_recent_tokens`] tokens of recent messages.
    Summary(Box<dyn Summarizer>),
}

impl fmt::Debug for CompactionStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompactionStrategy::Truncate { keep_last } => f
                .debug_struct("Truncate")
                .field("keep_last", keep_last)
                .finish(),
            CompactionStrategy::Summary(s) => f.debug_tuple("Summary").field(s).finish(),
        }
    }
}

/// The seed article's compaction setting: `"summary"` (default) or `"truncate"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompactionMode {
    /// Summarise the dropped history with a model.
    #[default]
    Summary,
    /// Drop old messages without a model call.
    Truncate,
}

/// Compaction settings (`{"mode": "summary"|"truncate", "keepRecentTokens": 20000,
/// "keepLastMessages": 20}`; every key optional).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompactionConfig {
    /// The strategy.
    #[serde(default)]
    pub mode: CompactionMode,
    /// Token budget of recent messages kept by `summary`.
    #[serde(default = "default_keep_recent_tokens")]
    pub keep_recent_tokens: u64,
    /// Messages kept by `truncate`.
    #[serde(default = "default_keep_last_messages")]
    pub keep_last_messages: usize,
}

fn default_keep_recent_tokens() -> u64 {
    DEFAULT_KEEP_RECENT_TOKENS
}

fn default_keep_last_messages() -> usize {
    DEFAULT_KEEP_LAST_MESSAGES
}

impl Default for CompactionConfig {
    fn default() -> Self {
        CompactionConfig {
            mode: CompactionMode::Summary,
            keep_recent_tokens: DEFAULT_KEEP_RECENT_TOKENS,
            keep_last_messages: DEFAULT_KEEP_LAST_MESSAGES,
        }
    }
}

impl CompactionConfig {
    /// The strategy this configuration selects; `summarizer` is called only for `summary`.
    pub fn strategy(&self, summarizer: impl FnOnce() -> Box<dyn Summarizer>) -> CompactionStrategy {
        match self.mode {
            CompactionMode::Summary => CompactionStrategy::Summary(summarizer()),
            CompactionMode::Truncate => CompactionStrategy::Truncate {
                keep_last: self.keep_last_messages,
            },
        }
    }
}

/// What the cut point keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeepBudget {
    /// About this many tokens of the newest messages ([`estimate_tokens`]).
    Tokens(u64),
    /// This many of the newest `message` entries.
    Messages(usize),
}

/// Where a compaction cuts (`findCutPoint`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CutPoint {
    /// Index (in the path) of the first kept entry.
    pub first_kept_index: usize,
    /// For a split turn, the index of the turn's first entry.
    pub turn_start_index: Option<usize>,
    /// The cut lies inside a turn (not at a user message) whose start is in range.
    pub is_split_turn: bool,
}

fn entry_type(e: &JsValue) -> Option<&[u8]> {
    e.get("type")
        .and_then(JsValue::as_js_string)
        .map(|s| s.as_wtf8())
}

fn message_role(e: &JsValue) -> Option<&[u8]> {
    e.get("message")?
        .get("role")
        .and_then(JsValue::as_js_string)
        .map(|s| s.as_wtf8())
}

fn is_cut_point(e: &JsValue) -> bool {
    match entry_type(e) {
        Some(b"message") => matches!(
            message_role(e),
            Some(
                b"bashExecution"
                    | b"custom"
                    | b"branchSummary"
                    | b"compactionSummary"
                    | b"user"
                    | b"assistant"
            )
        ),
        Some(b"branch_summary" | b"custom_message") => true,
        _ => false,
    }
}

/// `findTurnStartIndex`: the nearest entry at or before `index` (not before `start`) that
/// starts a turn: a `branch_summary` or `custom_message` entry, or a `user` or `bashExecution`
/// message.
fn turn_start(entries: &[JsValue], index: usize, start: usize) -> Option<usize> {
    (start..=index).rev().find(|&i| {
        let e = &entries[i];
        match entry_type(e) {
            Some(b"branch_summary" | b"custom_message") => true,
            Some(b"message") => matches!(message_role(e), Some(b"user" | b"bashExecution")),
            _ => false,
        }
    })
}

/// `findCutPoint(entries, start, end, budget)` over path entries (full rows): walking back from
/// `end`, `message` entries are counted (their [`estimate_tokens`], or one each) until the
/// budget is reached at entry `i`; the cut is the first valid cut point at or after `i` (the
/// last one when none is), or the first one when the budget is never reached; it is then
/// widened backwards over non-message entries.
pub fn find_cut_point(
    entries: &[JsValue],
    start: usize,
    end: usize,
    budget: KeepBudget,
) -> CutPoint {
    let end = end.min(entries.len());
    let cut_points: Vec<usize> = (start..end)
        .filter(|&i| is_cut_point(&entries[i]))
        .collect();
    let Some(&first) = cut_points.first() else {
        return CutPoint {
            first_kept_index: start,
            turn_start_index: None,
            is_split_turn: false,
        };
    };
    let mut cut = first;
    let mut accumulated: u64 = 0;
    for i in (start..end).rev() {
        let e = &entries[i];
        if entry_type(e) != Some(b"message") {
            continue;
        }
        let (add, limit) = match budget {
            KeepBudget::Tokens(t) => (e.get("message").map_or(0, estimate_tokens), t),
            KeepBudget::Messages(n) => (1, n as u64),
        };
        accumulated += add;
        if accumulated >= limit {
            cut = cut_points
                .iter()
                .copied()
                .find(|&c| c >= i)
                .unwrap_or(cut_points[cut_points.len() - 1]);
            break;
        }
    }
    while cut > start {
        let prev = &entries[cut - 1];
        if matches!(entry_type(prev), Some(b"compaction" | b"message")) {
            break;
        }
        cut -= 1;
    }
    let is_user = entry_type(&entries[cut]) == Some(b"message")
        && message_role(&entries[cut]) == Some(b"user");
    let turn = if is_user {
        None
    } else {
        turn_start(entries, cut, start)
    };
    CutPoint {
        first_kept_index: cut,
        turn_start_index: turn,
        is_split_turn: turn.is_some(),
    }
}

/// `Date.parse(timestamp)` of an entry as a JSON value (`null` when not a date; the reference
/// throws there, docs/DEVIATIONS.md D7).
fn entry_ms(e: &JsValue) -> JsValue {
    match e.get("timestamp") {
        Some(JsValue::String(s)) if !session_format::line::is_blank(s.as_wtf8()) => {
            match session_format::time::parse_js_date(&s.to_str_lossy()) {
                Some(ms) => JsValue::Number(ms as f64),
                None => JsValue::Null,
            }
        }
        _ => JsValue::Null,
    }
}

fn copy(o: &mut JsObject, from: &JsValue, key: &str) {
    if let Some(v) = from.get(key) {
        o.insert(key, v.clone());
    }
}

/// `getMessageFromEntryForCompaction`: a `message` entry's message, a `custom_message` as a
/// `custom` message, a `branch_summary` as a `branchSummary` message (even with an empty
/// summary); nothing for compactions and other entries.
pub fn message_from_entry(e: &JsValue) -> Option<JsValue> {
    match entry_type(e)? {
        b"message" => e.get("message").cloned(),
        b"custom_message" => {
            let mut o = JsObject::new();
            o.insert("role", JsValue::from("custom"));
            copy(&mut o, e, "customType");
            copy(&mut o, e, "content");
            copy(&mut o, e, "display");
            copy(&mut o, e, "details");
            o.insert("timestamp", entry_ms(e));
            Some(JsValue::Object(o))
        }
        b"branch_summary" => {
            let mut o = JsObject::new();
            o.insert("role", JsValue::from("branchSummary"));
            copy(&mut o, e, "summary");
            copy(&mut o, e, "fromId");
            o.insert("timestamp", entry_ms(e));
            Some(JsValue::Object(o))
        }
        _ => None,
    }
}

/// Files touched by `read`, `write` and `edit` tool calls (insertion-ordered sets).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileOps {
    /// Paths read.
    pub read: Vec<String>,
    /// Paths written.
    pub written: Vec<String>,
    /// Paths edited.
    pub edited: Vec<String>,
}

fn add(set: &mut Vec<String>, v: &str) {
    if !set.iter().any(|x| x == v) {
        set.push(v.to_owned());
    }
}

impl FileOps {
    /// `extractFileOpsFromMessage`: the `path` argument (a non-empty string) of each
    /// `toolCall` block named `read`, `write` or `edit` in an assistant message.
    pub fn add_message(&mut self, message: &JsValue) {
        if message
            .get("role")
            .and_then(JsValue::as_str_lossy)
            .as_deref()
            != Some("assistant")
        {
            return;
        }
        let Some(JsValue::Array(content)) = message.get("content") else {
            return;
        };
        for block in content {
            let Some(obj) = block.as_object() else {
                continue;
            };
            if obj.get_str("type").as_deref() != Some("toolCall") || !obj.contains_key("name") {
                continue;
            }
            let Some(path) = obj
                .get("arguments")
                .filter(|a| a.is_truthy())
                .and_then(|a| a.get("path"))
                .and_then(JsValue::as_str_lossy)
                .filter(|p| !p.is_empty())
            else {
                continue;
            };
            match obj.get_str("name").as_deref() {
                Some("read") => add(&mut self.read, &path),
                Some("write") => add(&mut self.written, &path),
                Some("edit") => add(&mut self.edited, &path),
                _ => {}
            }
        }
    }

    /// `computeFileLists`: files only read, and files written or edited, each sorted by UTF-16
    /// code units (JavaScript's default sort).
    pub fn file_lists(&self) -> FileLists {
        let mut modified: Vec<String> = Vec::new();
        for f in self.edited.iter().chain(&self.written) {
            add(&mut modified, f);
        }
        let mut read: Vec<String> = self
            .read
            .iter()
            .filter(|f| !modified.contains(f))
            .cloned()
            .collect();
        let key = |s: &String| s.encode_utf16().collect::<Vec<u16>>();
        read.sort_by_key(key);
        modified.sort_by_key(key);
        FileLists {
            read_files: read,
            modified_files: modified,
        }
    }
}

/// The `details` of a compaction entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileLists {
    /// `readFiles`.
    pub read_files: Vec<String>,
    /// `modifiedFiles`.
    pub modified_files: Vec<String>,
}

impl FileLists {
    /// `{readFiles, modifiedFiles}`.
    pub fn to_value(&self) -> JsValue {
        let list =
            |v: &[String]| JsValue::Array(v.iter().map(|s| JsValue::from(s.as_str())).collect());
        let mut o = JsObject::new();
        o.insert("readFiles", list(&self.read_files));
        o.insert("modifiedFiles", list(&self.modified_files));
        JsValue::Object(o)
    }

    /// `formatFileOperations`: `\n\n<read-files>\n…\n</read-files>` and
    /// `<modified-files>\n…\n</modified-files>` sections (non-empty ones, joined by a blank
    /// line), or `""`.
    pub fn summary_suffix(&self) -> String {
        let mut sections = Vec::new();
        if !self.read_files.is_empty() {
            sections.push(format!(
                "<read-files>\n{}\n</read-files>",
                self.read_files.join("\n")
            ));
        }
        if !self.modified_files.is_empty() {
            sections.push(format!(
                "<modified-files>\n{}\n</modified-files>",
                self.modified_files.join("\n")
            ));
        }
        if sections.is_empty() {
            String::new()
        } else {
            format!("\n\n{}", sections.join("\n\n"))
        }
    }
}

/// The plan of a compaction (`prepareCompaction`).
#[derive(Clone, Debug, PartialEq)]
pub struct Preparation {
    /// Index in the path of the first kept entry.
    pub first_kept_index: usize,
    /// Its id, exactly.
    pub first_kept_entry_id: JsString,
    /// Messages to summarise (history before the cut, or before the split turn).
    pub messages_to_summarize: Vec<JsValue>,
    /// For a split turn, the messages of the turn before the cut.
    pub turn_prefix_messages: Vec<JsValue>,
    /// The cut is inside a turn.
    pub is_split_turn: bool,
    /// Size of the current context.
    pub tokens_before: f64,
    /// The previous compaction's summary.
    pub previous_summary: Option<String>,
    /// Files touched in the summarised part (and in the previous compaction's details).
    pub file_ops: FileOps,
}

/// Why no compaction could be planned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// The branch ends with a compaction.
    #[error("Already compacted")]
    AlreadyCompacted,
    /// The branch is empty, or nothing lies before the cut.
    #[error("Nothing to compact (session too small)")]
    NothingToCompact,
    /// The first kept entry has no id (an unmigrated v1 row).
    #[error("First kept entry has no UUID - session may need migration")]
    NoFirstKeptId,
}

/// `prepareCompaction(path, settings)` over the branch's entries (full rows, root first) and
/// the current context's messages (for `tokensBefore`), as the reference plans it (a plan may
/// summarise nothing; [`crate::AgentSession::compact`] refuses those).
///
/// # Errors
/// [`PlanError::NothingToCompact`] for an empty path, [`PlanError::AlreadyCompacted`] when the
/// path ends with a compaction, [`PlanError::NoFirstKeptId`].
pub fn prepare_compaction(
    path: &[JsValue],
    context_messages: &[JsValue],
    budget: KeepBudget,
) -> Result<Preparation, PlanError> {
    let Some(last) = path.last() else {
        return Err(PlanError::NothingToCompact);
    };
    if entry_type(last) == Some(b"compaction") {
        return Err(PlanError::AlreadyCompacted);
    }
    let prev_index = path
        .iter()
        .rposition(|e| entry_type(e) == Some(b"compaction"));
    let mut previous_summary = None;
    let mut start = 0;
    if let Some(pi) = prev_index {
        let prev = &path[pi];
        previous_summary = Some(js_string_of(prev.get("summary")));
        let kept = prev.get("firstKeptEntryId");
        start = path
            .iter()
            .position(|e| kept.is_some() && e.get("id") == kept)
            .unwrap_or(pi + 1);
    }
    let tokens_before = crate::tokens::estimate_context_tokens(context_messages).tokens;
    let cut = find_cut_point(path, start, path.len(), budget);
    let first_kept_entry_id = path
        .get(cut.first_kept_index)
        .and_then(|e| e.get("id"))
        .and_then(JsValue::as_js_string)
        .filter(|id| !id.is_empty())
        .cloned()
        .ok_or(PlanError::NoFirstKeptId)?;
    let history_end = match (cut.is_split_turn, cut.turn_start_index) {
        (true, Some(t)) => t,
        _ => cut.first_kept_index,
    };
    let messages_to_summarize: Vec<JsValue> = path[start..history_end.max(start)]
        .iter()
        .filter_map(message_from_entry)
        .collect();
    let turn_prefix_messages: Vec<JsValue> = match (cut.is_split_turn, cut.turn_start_index) {
        (true, Some(t)) => path[t..cut.first_kept_index]
            .iter()
            .filter_map(message_from_entry)
            .collect(),
        _ => Vec::new(),
    };
    let mut file_ops = FileOps::default();
    if let Some(pi) = prev_index {
        let prev = &path[pi];
        if !prev.get("fromHook").is_some_and(JsValue::is_truthy)
            && let Some(details) = prev.get("details").filter(|d| d.is_truthy())
        {
            for (key, set) in [
                ("readFiles", &mut file_ops.read),
                ("modifiedFiles", &mut file_ops.edited),
            ] {
                if let Some(JsValue::Array(files)) = details.get(key) {
                    for f in files {
                        add(set, &js_string_of(Some(f)));
                    }
                }
            }
        }
    }
    for m in messages_to_summarize.iter().chain(&turn_prefix_messages) {
        file_ops.add_message(m);
    }
    Ok(Preparation {
        first_kept_index: cut.first_kept_index,
        first_kept_entry_id,
        messages_to_summarize,
        turn_prefix_messages,
        is_split_turn: cut.is_split_turn,
        tokens_before,
        previous_summary,
        file_ops,
    })
}

/// The summary text of a `truncate` compaction.
pub fn truncate_summary(dropped: usize) -> String {
    format!("Earlier conversation truncated: {dropped} messages were removed without a summary.")
}

/// Separator between the history summary and the turn-prefix summary of a split turn.
pub const SPLIT_TURN_SEPARATOR: &str = "\n\n---\n\n**Turn Context (split turn):**\n\n";

/// The summary a strategy writes for a plan (`compact`): for `summary`, the history summary
/// (or `No prior history.` when only a split turn's prefix is summarised) plus, for a split
/// turn, [`SPLIT_TURN_SEPARATOR`] and the prefix summary; for `truncate`,
/// [`truncate_summary`]; then the file lists ([`FileLists::summary_suffix`]).
///
/// # Errors
/// [`SummarizeError`] from the summariser.
pub fn summary_text(
    prep: &Preparation,
    strategy: &CompactionStrategy,
) -> Result<String, SummarizeError> {
    let mut summary = match strategy {
        CompactionStrategy::Truncate { .. } => {
            truncate_summary(prep.messages_to_summarize.len() + prep.turn_prefix_messages.len())
        }
        CompactionStrategy::Summary(s) => {
            let request = SummaryRequest {
                messages: &prep.messages_to_summarize,
                previous_summary: prep.previous_summary.as_deref(),
            };
            if prep.is_split_turn && !prep.turn_prefix_messages.is_empty() {
                let history = if prep.messages_to_summarize.is_empty() {
                    "No prior history.".to_owned()
                } else {
                    s.summarize(&request)?
                };
                let prefix = s.summarize_turn_prefix(&prep.turn_prefix_messages)?;
                format!("{history}{SPLIT_TURN_SEPARATOR}{prefix}")
            } else {
                s.summarize(&request)?
            }
        }
    };
    summary.push_str(&prep.file_ops.file_lists().summary_suffix());
    Ok(summary)
}

/// `serializeConversation(convertToLlm(messages))`: a plain-text rendering for summarisation
/// prompts (`[User]: …`, `[Assistant thinking]: …`, `[Assistant]: …`, `[Assistant tool
/// calls]: name(k=<json>, …); …`, `[Tool result]: …` cut to 2,000 UTF-16 units, one less when
/// the 2,000th is the first half of a surrogate pair, so that the cut falls between characters;
/// the count of the units left out follows), parts separated by a blank line.
pub fn serialize_conversation(messages: &[JsValue]) -> String {
    const TOOL_RESULT_MAX_CHARS: usize = 2000;
    let texts = |content: Option<&JsValue>| -> String {
        match content {
            Some(JsValue::String(s)) => s.to_str_lossy().into_owned(),
            Some(JsValue::Array(blocks)) => blocks
                .iter()
                .filter(|b| {
                    b.get("type").and_then(JsValue::as_str_lossy).as_deref() == Some("text")
                })
                .map(|b| js_string_of(b.get("text")))
                .collect(),
            _ => String::new(),
        }
    };
    let mut parts = Vec::new();
    for m in convert_to_llm(messages) {
        match m.get("role").and_then(JsValue::as_str_lossy).as_deref() {
            Some("user") => {
                let c = texts(m.get("content"));
                if !c.is_empty() {
                    parts.push(format!("[User]: {c}"));
                }
            }
            Some("assistant") => {
                let (mut text, mut thinking, mut calls) = (Vec::new(), Vec::new(), Vec::new());
                if let Some(JsValue::Array(blocks)) = m.get("content") {
                    for b in blocks {
                        match b.get("type").and_then(JsValue::as_str_lossy).as_deref() {
                            Some("text") => text.push(js_string_of(b.get("text"))),
                            Some("thinking") => thinking.push(js_string_of(b.get("thinking"))),
                            Some("toolCall") => {
                                let args = match b.get("arguments") {
                                    Some(JsValue::Object(o)) => o
                                        .iter()
                                        .map(|(k, v)| {
                                            format!(
                                                "{}={}",
                                                k.to_str_lossy(),
                                                session_format::json::to_json_string(v)
                                            )
                                        })
                                        .collect::<Vec<_>>()
                                        .join(", "),
                                    _ => String::new(),
                                };
                                calls.push(format!("{}({args})", js_string_of(b.get("name"))));
                            }
                            _ => {}
                        }
                    }
                }
                if !thinking.is_empty() {
                    parts.push(format!("[Assistant thinking]: {}", thinking.join("\n")));
                }
                if !text.is_empty() {
                    parts.push(format!("[Assistant]: {}", text.join("\n")));
                }
                if !calls.is_empty() {
                    parts.push(format!("[Assistant tool calls]: {}", calls.join("; ")));
                }
            }
            Some("toolResult") => {
                let c = texts(m.get("content"));
                if !c.is_empty() {
                    let units: Vec<u16> = c.encode_utf16().collect();
                    let shown = if units.len() <= TOOL_RESULT_MAX_CHARS {
                        c
                    } else {
                        // The cut never splits a surrogate pair (the reference's `slice`
                        // would leave half a character): it moves back one unit instead.
                        let mut cut = TOOL_RESULT_MAX_CHARS;
                        if (0xD800..0xDC00).contains(&units[cut - 1]) {
                            cut -= 1;
                        }
                        format!(
                            "{}\n\n[... {} more characters truncated]",
                            String::from_utf16_lossy(&units[..cut]),
                            units.len() - cut
                        )
                    };
                    parts.push(format!("[Tool result]: {shown}"));
                }
            }
            _ => {}
        }
    }
    parts.join("\n\n")
}
