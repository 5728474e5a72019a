//! The agent runtime on top of the store. A [`SessionManager`](session_store::SessionManager)
//! records what happened; an [`AgentSession`] holds how to run now:
//!
//! - the tool registry ([`tools`], openclaw-jsonl.md §6): base, extension and SDK tools, the
//!   allow-list and built-in switch, the active tools and the system prompt built from their
//!   snippets and guidelines ([`prompt`]);
//! - the model and thinking level, read from the context and changed with entries appended only
//!   when they change;
//! - what the model is sent ([`AgentSession::model_context`]): the context converted with the
//!   reference's wording ([`convert`], §2.7), tool calls and results paired ([`pairing`]), and
//!   the history limits of the seed article ([`history`]);
//! - what a model behind one provider API is sent ([`AgentSession::provider_payload`],
//!   [`payload`]): the same messages with lone surrogates replaced by U+FFFD (a warning names
//!   the file line) and tool-call ids normalised for that API ([`ProviderApi`]);
//! - compaction ([`compaction`]): `summary` (default) or `truncate`, one `compaction` entry per
//!   call, repeated compactions summarising what the previous one kept (#2608), token estimates
//!   on UTF-16 length ([`tokens`]);
//!
//! plus [`prepare::prepare_session_manager_for_run`] (§4), run before a run loop starts.
//!
//! # Layout
//!
//! `session` (the [`AgentSession`] struct and its errors) sits on top and uses every other
//! module; below it `tools` uses `prompt`, `payload` uses `convert`, `history` and `pairing`,
//! `compaction` uses `convert` and `tokens`, and `history` uses `tokens`; `prompt`, `convert`,
//! `pairing`, `tokens` and `prepare` use no other module of the crate (JavaScript string
//! helpers come from `session_format::js`). `cargo xtask modules agent-session` prints this
//! graph and fails on a cycle. Every module is public except `session`, whose types are
//! re-exported at the root; no features.
//!
//! # Deviations
//!
//! Where this crate differs from OpenClaw 2026.6.11 on purpose (Decisions (c) of
//! openclaw-jsonl.md, or behaviour the reference does not have); everything else is checked
//! against the reference (`tests/fixtures/reference`, `tests/it/reference_roundtrip.rs`):
//!
//! - **prepare-for-run, case 2b** (no assistant, not a fork): before the file is emptied its
//!   exact bytes are copied to `<file>.reset-<ISO ts, ':' and '.' → '-'>-<8 hex>.jsonl`
//!   (same permission bits, never overwriting); a failed backup leaves the file untouched.
//!   The reference empties the file and the user-only history is gone. The file is emptied by
//!   an atomic replace (new inode), not truncated in place, and when the manager writes under
//!   the session write lock the check, backup and emptying run inside it
//!   ([`PrepareError::Lock`] when it cannot be taken; nothing changes).
//! - **prepare-for-run, file type**: a FIFO, socket, device or directory at the session path
//!   is refused (`not a regular file`) before anything changes; the reference blocks reading a
//!   FIFO.
//! - **prepare-for-run, binding**: a manager bound to another file than `session_file` (or to
//!   none) is refused with [`PrepareError::NotBound`] before anything changes (two names of
//!   one existing file are the same file); the reference writes the named file from the
//!   manager's rows.
//! - **prepare-for-run, case 3 unchanged**: a manager still holding unwritten rows is flushed
//!   instead of only being marked flushed (the reference would never write them).
//! - **prepare-for-run, header check**: a header line nested deeper than
//!   `session_format::json::MAX_DEPTH` (1,000) is refused as unreadable (docs/DEVIATIONS.md
//!   D15); the reference parses up to about 5,000 levels. Like 2026.6.11 (and unlike the later
//!   §4 text) the first non-blank line is read whole, without a 64 KiB cap.
//! - **prepare-for-run, rewrites** (cases 2a and 3) keep unparseable lines and adopt lines
//!   another writer appended (docs/DEVIATIONS.md D2, D11); the reference drops both.
//! - **compaction, nothing to summarise**: [`AgentSession::compact`] fails with `Nothing to
//!   compact (session too small)` when the cut would summarise no message (the cut lands on
//!   the previous compaction's first kept entry); the reference asks the model to summarise an
//!   empty history and writes another compaction entry with the same `firstKeptEntryId`.
//! - **compaction, `truncate`**: [`CompactionStrategy::Truncate`] (no model call) and the
//!   wording of its summary and of [`DeterministicSummarizer`] are this workspace's own; the
//!   reference only summarises with a model.
//! - **compaction, invalid timestamps**: a `custom_message` or `branch_summary` with an
//!   invalid timestamp becomes a message with `timestamp: null` in the messages to summarise
//!   (docs/DEVIATIONS.md D7); the reference throws and cannot compact the session.
//! - **compaction, previous details**: entries of the previous compaction's
//!   `details.readFiles`/`modifiedFiles` that are not strings are carried over as their
//!   JavaScript string form (`3` → `"3"`); the reference keeps them as they are.
//! - **token estimates** of malformed messages (a text block whose `text` is not a string, a
//!   `custom` message without content, a bash execution without output) count 0 for the
//!   missing part where the reference throws or yields `NaN`.
//! - **tool-call pairing**: results are always put right after their call in call order, and
//!   an errored or aborted turn's real results are moved up to it past other messages, with
//!   [`pairing::PairingRepair::changed`] set; in these two cases the reference's `moved` flag
//!   stays false and it returns its input unchanged (results out of call order, or a result
//!   after a later user message).
//! - **errored and aborted turns** (docs/DEVIATIONS.md D32): an assistant message that
//!   ended with `stopReason` `error` or `aborted` is left out of what the model is sent by
//!   default ([`pairing::ErroredAssistantPolicy::Skip`]), with or without tool calls, with the
//!   results of its calls and without synthetic results for them, as pi-ai's
//!   `transformMessages` skips it; the reference's `repairToolUseResultPairing` keeps it by
//!   default ([`pairing::ErroredAssistantPolicy::Keep`], still available).
//! - **provider payloads** (D32): [`AgentSession::provider_payload`] normalises tool-call ids
//!   for the target API (valid ids untouched, others sanitised, cut and suffixed with a
//!   SHA-256 hash of the exact id, empty ones derived from the entry id; results carry their
//!   call's new id, also when the id has surrounding whitespace; for OpenAI Responses no two
//!   calls share a `call_id`) and replaces lone surrogates by U+FFFD with a
//!   [`PayloadWarning::LoneSurrogate`] naming the file line (two keys of one object that
//!   become equal keep the first member, each later one dropped with a
//!   [`PayloadWarning::DroppedMember`]); the reference sends ids and strings as stored.
//! - **compaction, tool-result cut** (D32): the 2,000-unit cut of a tool result in the
//!   conversation text to summarise moves back one unit instead of splitting a surrogate
//!   pair, and counts the units left out.
//! - **model state**: [`AgentSession::set_model`] and [`AgentSession::set_thinking_level`]
//!   append an entry only when the value differs from the current context's (the reference
//!   appends one on every call, so every resume added a duplicate `model_change`).
//! - **history limits** (`maxHistoryMessages`/`maxHistoryTokens`, per chat type) are this
//!   workspace's own setting ([`history`]); the reference has none.
//! - **tool calls**: [`AgentSession::execute_tool_call`] refuses a call block without a string
//!   `id` or `name` ([`AgentSessionError::InvalidToolCall`]); the reference runs it and records
//!   a result with no `toolCallId`.
//! - **system prompt**: the layout follows the reference's `buildSystemPrompt`, the wording of
//!   the introduction and default guidelines is this workspace's own ([`prompt`]).
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use agent_session::{AgentSession, AgentSessionOptions, CompactionStrategy, DeterministicSummarizer};
//! use session_store::SessionManager;
//!
//! let sm = SessionManager::create("/home/dev/project", Some(std::path::Path::new("/tmp/s")))?;
//! let mut agent = AgentSession::new(sm, AgentSessionOptions::default())?;
//! agent.set_model("anthropic", "claude-sonnet-4-5")?;
//! // … append messages, run tool calls …
//! let result = agent.compact(CompactionStrategy::Summary(Box::new(DeterministicSummarizer)))?;
//! println!("kept from {}", result.first_kept_entry_id.to_str_lossy());
//! # Ok(()) }
//! ```
#![warn(missing_docs)]

pub mod compaction;
pub mod convert;
pub mod history;
pub mod pairing;
pub mod payload;
pub mod prepare;
pub mod prompt;
mod session;
pub mod tokens;
pub mod tools;

pub use compaction::{
    CompactionConfig, CompactionMode, CompactionStrategy, DeterministicSummarizer, Summarizer,
    SummaryRequest,
};
pub use payload::{PayloadWarning, ProviderApi, ToolCallIdChange};
pub use prepare::{PrepareError, PrepareOutcome, PrepareParams, prepare_session_manager_for_run};
pub use session::{
    AgentSession, AgentSessionError, AgentSessionOptions, CompactError, CompactionResult,
    ModelContext, ModelRef, ProviderPayload, SessionManagerMut,
};
pub use tools::{RefreshOptions, SourceInfo, Tool, ToolError, ToolInfo, ToolOutput, ToolSource};
