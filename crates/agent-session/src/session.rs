//! [`AgentSession`]: a [`SessionManager`] ("what happened") plus the runtime state that says
//! how to run now — tools, model and thinking level, system prompt, compaction — none of which
//! is persisted except through the entries the manager appends.

use std::sync::Arc;

use session_format::json::{JsObject, JsString, JsValue};
use session_semantics::policy::HistoryLimits;
use session_store::{AppendError, ContextError, Payload, ReadError, SessionManager};

use crate::compaction::{
    CompactionStrategy, KeepBudget, PlanError, SummarizeError, prepare_compaction, summary_text,
};
use crate::convert::convert_to_llm;
use crate::history::history_start;
use crate::pairing::{PairingOptions, PairingRepair, repair_tool_use_result_pairing};
use crate::payload::{
    PayloadError, PayloadOptions, PayloadWarning, ProviderApi, ToolCallIdChange, scrub_value,
    session_payload,
};
use crate::prompt::PromptOptions;
use crate::tools::{RefreshOptions, SourceInfo, Tool, ToolError, ToolInfo, ToolRuntime};

/// A model, as `model_change` entries and assistant messages name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelRef {
    /// `provider`.
    pub provider: String,
    /// `modelId` (an assistant message's `model`).
    pub model_id: String,
}

/// Why an [`AgentSession`] operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentSessionError {
    /// The context could not be built.
    #[error(transparent)]
    Context(#[from] ContextError),
    /// A stored row no longer parses (a bug).
    #[error(transparent)]
    Read(#[from] ReadError),
    /// An entry could not be appended.
    #[error(transparent)]
    Append(#[from] AppendError),
    /// A tool call block has no string `id` or `name`.
    #[error("tool call has no {field}: {call}")]
    InvalidToolCall {
        /// The missing field.
        field: &'static str,
        /// The block, as JSON.
        call: String,
    },
}

/// Why [`AgentSession::compact`] wrote nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CompactError {
    /// No compaction could be planned.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The summariser failed.
    #[error(transparent)]
    Summarize(#[from] SummarizeError),
    /// Reading the session failed.
    #[error(transparent)]
    Session(#[from] AgentSessionError),
}

impl From<ContextError> for CompactError {
    fn from(e: ContextError) -> Self {
        CompactError::Session(e.into())
    }
}

impl From<ReadError> for CompactError {
    fn from(e: ReadError) -> Self {
        CompactError::Session(e.into())
    }
}

impl From<AppendError> for CompactError {
    fn from(e: AppendError) -> Self {
        CompactError::Session(e.into())
    }
}

/// What [`AgentSession::compact`] wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct CompactionResult {
    /// The new `compaction` entry's id.
    pub entry_id: String,
    /// Its summary.
    pub summary: String,
    /// Its `firstKeptEntryId`.
    pub first_kept_entry_id: JsString,
    /// Its `tokensBefore`.
    pub tokens_before: f64,
    /// Its `details`.
    pub details: JsValue,
    /// How many messages were summarised (or dropped, for `truncate`).
    pub summarized_messages: usize,
}

/// What a model is sent for the next turn ([`AgentSession::model_context`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ModelContext {
    /// The system prompt.
    pub system_prompt: String,
    /// The active tools.
    pub tools: Vec<ToolInfo>,
    /// The messages, converted, paired and limited.
    pub messages: Vec<JsValue>,
    /// The thinking level.
    pub thinking_level: String,
    /// The model.
    pub model: Option<ModelRef>,
    /// Messages left out by the history limits.
    pub dropped_by_limits: usize,
    /// What the pairing repair changed.
    pub pairing: PairingRepair,
}

/// What a model behind one provider API is sent for the next turn
/// ([`AgentSession::provider_payload`]): [`ModelContext`] made valid for that API
/// ([`crate::payload`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ProviderPayload {
    /// The target API.
    pub api: ProviderApi,
    /// The system prompt.
    pub system_prompt: String,
    /// The active tools (lone surrogates in their parameter schemas replaced by U+FFFD).
    pub tools: Vec<ToolInfo>,
    /// The messages: converted, lone surrogates replaced, tool-call ids normalised for `api`,
    /// paired (errored and aborted turns dropped by default), limited.
    pub messages: Vec<JsValue>,
    /// The thinking level.
    pub thinking_level: String,
    /// The model.
    pub model: Option<ModelRef>,
    /// Lone surrogates found (file line, entry, path), in order.
    pub warnings: Vec<PayloadWarning>,
    /// Tool calls whose id is sent differently from the transcript.
    pub tool_call_ids: Vec<ToolCallIdChange>,
    /// Messages left out by the history limits.
    pub dropped_by_limits: usize,
    /// What the pairing repair changed (its `messages` are empty).
    pub pairing: PairingRepair,
}

/// How an [`AgentSession`] is built (`buildRuntime` options). The default has no tools and
/// `include_all_extension_tools: true`, as the reference's `AgentSession` constructor, which
/// always builds its runtime with `includeAllExtensionTools: true`.
#[derive(Debug)]
pub struct AgentSessionOptions {
    /// Base (built-in) tools, in order; their names are the default active tools.
    pub base_tools: Vec<Arc<dyn Tool>>,
    /// Extension-registered tools and their sources.
    pub extension_tools: Vec<(Arc<dyn Tool>, SourceInfo)>,
    /// SDK custom tools.
    pub custom_tools: Vec<Arc<dyn Tool>>,
    /// The active tools to start with (default: the base tools' names).
    pub active_tool_names: Option<Vec<String>>,
    /// Activate every extension and SDK tool too (default `true`, as the reference's
    /// constructor; `false` starts with only `active_tool_names` active).
    pub include_all_extension_tools: bool,
    /// `allowedToolNames`: only these tools can exist (and all of them are active).
    pub allowed_tool_names: Option<Vec<String>>,
    /// `disableBuiltInTools`.
    pub disable_built_in_tools: bool,
    /// System prompt options (default: [`PromptOptions::new`] with the session's cwd).
    pub prompt: Option<PromptOptions>,
    /// Token budget a `summary` compaction keeps (default
    /// [`crate::compaction::DEFAULT_KEEP_RECENT_TOKENS`]).
    pub keep_recent_tokens: Option<u64>,
}

impl Default for AgentSessionOptions {
    fn default() -> Self {
        AgentSessionOptions {
            base_tools: Vec::new(),
            extension_tools: Vec::new(),
            custom_tools: Vec::new(),
            active_tool_names: None,
            include_all_extension_tools: true,
            allowed_tool_names: None,
            disable_built_in_tools: false,
            prompt: None,
            keep_recent_tokens: None,
        }
    }
}

/// An agent session: the session manager and the runtime state (tool registry, model and
/// thinking level, system prompt, compaction controller). See the crate documentation.
#[derive(Debug)]
pub struct AgentSession {
    sm: SessionManager,
    tools: ToolRuntime,
    /// The model and thinking level of the manager's current context: set directly by
    /// `set_model`/`set_thinking_level`, updated from appended assistant messages, re-read after
    /// [`SessionManagerMut`] drops.
    model: Option<ModelRef>,
    thinking_level: String,
    keep_recent_tokens: u64,
    pairing: PairingOptions,
}

/// The model and thinking level of the manager's current context (the last `model_change` or
/// assistant message on the branch, the last `thinking_level_change`, default `off`).
fn model_state(sm: &SessionManager) -> Result<(Option<ModelRef>, String), ContextError> {
    let ctx = sm.build_session_context()?;
    Ok((
        ctx.model
            .as_ref()
            .and_then(|m| m.as_strs())
            .map(|(provider, model_id)| ModelRef { provider, model_id }),
        ctx.thinking_level_str().unwrap_or_else(|| "off".to_owned()),
    ))
}

impl AgentSession {
    /// Builds the runtime over `sm` (`buildRuntime`): tools registered and refreshed with the
    /// requested (or default) active names; model and thinking level read from the context
    /// (the last `model_change` or assistant message, the last `thinking_level_change`,
    /// default `off`).
    ///
    /// # Errors
    /// [`AgentSessionError::Context`] when the context cannot be built.
    pub fn new(
        sm: SessionManager,
        options: AgentSessionOptions,
    ) -> Result<Self, AgentSessionError> {
        let prompt = options
            .prompt
            .unwrap_or_else(|| PromptOptions::new(sm.get_cwd()));
        let default_active: Vec<String> = options
            .base_tools
            .iter()
            .map(|t| t.name().to_owned())
            .collect();
        let mut tools = ToolRuntime::new(options.base_tools, prompt);
        for (tool, source) in options.extension_tools {
            tools.register_extension_tool(tool, source);
        }
        tools.set_custom_tools(options.custom_tools);
        tools.set_allowed_tool_names(options.allowed_tool_names);
        tools.set_disable_built_in_tools(options.disable_built_in_tools);
        tools.refresh_tool_registry(&RefreshOptions {
            active_tool_names: Some(options.active_tool_names.unwrap_or(default_active)),
            include_all_extension_tools: options.include_all_extension_tools,
        });
        let (model, thinking_level) = model_state(&sm)?;
        Ok(AgentSession {
            sm,
            tools,
            model,
            thinking_level,
            keep_recent_tokens: options
                .keep_recent_tokens
                .unwrap_or(crate::compaction::DEFAULT_KEEP_RECENT_TOKENS),
            pairing: PairingOptions::default(),
        })
    }

    // ------------------------------------------------------------------------------------
    // The manager

    /// The session manager.
    pub fn session_manager(&self) -> &SessionManager {
        &self.sm
    }

    /// The session manager, mutably, behind a guard that derefs to it: when the guard is
    /// dropped the model and thinking level are read again from the manager's context, so
    /// appends and leaf moves made through it are taken into account.
    pub fn session_manager_mut(&mut self) -> SessionManagerMut<'_> {
        SessionManagerMut { agent: self }
    }

    /// Reads the model and thinking level again from the context (kept as they were when the
    /// context cannot be built).
    fn refresh_model_state(&mut self) {
        if let Ok((model, thinking_level)) = model_state(&self.sm) {
            self.model = model;
            self.thinking_level = thinking_level;
        }
    }

    /// Updates the model after the message `id` was appended at the leaf: an assistant message
    /// is now the path's last model source (`{provider, modelId: model}`, as
    /// `build_session_context` reads it); any other message leaves model and thinking level as
    /// they were. O(1), where re-reading the context would walk the whole branch.
    fn note_appended_message(&mut self, id: &str) {
        let Some(entry) = self.sm.get_entry(id) else {
            return;
        };
        if !entry.is_assistant_message() {
            return;
        }
        let Ok(value) = entry.value() else {
            return;
        };
        let message = value.get("message");
        let field = |k: &str| {
            message
                .and_then(|m| m.get(k))
                .and_then(JsValue::as_str_lossy)
                .map(|s| s.into_owned())
        };
        self.model = match (field("provider"), field("model")) {
            (Some(provider), Some(model_id)) => Some(ModelRef { provider, model_id }),
            _ => None,
        };
    }

    /// Gives the manager back.
    pub fn into_session_manager(self) -> SessionManager {
        self.sm
    }

    // ------------------------------------------------------------------------------------
    // Tools (openclaw-jsonl.md §6)

    /// The tool runtime.
    pub fn tools(&self) -> &ToolRuntime {
        &self.tools
    }

    /// The tool runtime, mutably (register tools, change the allow-list, then refresh).
    pub fn tools_mut(&mut self) -> &mut ToolRuntime {
        &mut self.tools
    }

    /// [`ToolRuntime::refresh_tool_registry`].
    pub fn refresh_tool_registry(&mut self, options: &RefreshOptions) {
        self.tools.refresh_tool_registry(options);
    }

    /// [`ToolRuntime::set_active_tools_by_name`].
    pub fn set_active_tools_by_name<S: AsRef<str>>(&mut self, names: &[S]) {
        self.tools.set_active_tools_by_name(names);
    }

    /// [`ToolRuntime::get_all_tools`].
    pub fn get_all_tools(&self) -> Vec<ToolInfo> {
        self.tools.get_all_tools()
    }

    /// [`ToolRuntime::get_active_tool_names`].
    pub fn get_active_tool_names(&self) -> Vec<String> {
        self.tools.get_active_tool_names()
    }

    /// The current system prompt.
    pub fn system_prompt(&self) -> &str {
        self.tools.system_prompt()
    }

    // ------------------------------------------------------------------------------------
    // Model state

    /// The current model: the last `model_change` or assistant message on the manager's
    /// current branch (openclaw-jsonl.md §2.7), `None` without one or when it does not name a
    /// string provider and model.
    pub fn model(&self) -> Option<&ModelRef> {
        self.model.as_ref()
    }

    /// The current thinking level: the last `thinking_level_change` on the current branch
    /// (default `off`).
    pub fn thinking_level(&self) -> &str {
        &self.thinking_level
    }

    /// Switches the model. A `model_change` entry is appended only when it differs from the
    /// model of the current context (the reference appends one on every call, so resumed
    /// sessions collected duplicates). Returns whether an entry was appended.
    ///
    /// # Errors
    /// [`AgentSessionError::Append`].
    pub fn set_model(&mut self, provider: &str, model_id: &str) -> Result<bool, AgentSessionError> {
        let next = ModelRef {
            provider: provider.to_owned(),
            model_id: model_id.to_owned(),
        };
        if self.model.as_ref() == Some(&next) {
            return Ok(false);
        }
        self.sm.append_model_change(provider, model_id)?;
        // The new entry is the leaf, so it is the context's model: no context rebuild.
        self.model = Some(next);
        Ok(true)
    }

    /// Sets the thinking level; a `thinking_level_change` entry is appended only when it
    /// differs from the level of the current context. Returns whether an entry was appended.
    ///
    /// # Errors
    /// [`AgentSessionError::Append`].
    pub fn set_thinking_level(&mut self, level: &str) -> Result<bool, AgentSessionError> {
        if self.thinking_level == level {
            return Ok(false);
        }
        self.sm.append_thinking_level_change(level)?;
        // The new entry is the leaf, so it is the context's level: no context rebuild.
        level.clone_into(&mut self.thinking_level);
        Ok(true)
    }

    // ------------------------------------------------------------------------------------
    // Messages and tool calls

    /// Appends a message entry through [`SessionManager::append_message`] (an assistant
    /// message's `provider` and `model` become the current model, as in the context). The
    /// message is any [`Payload`], as for the manager: a typed [`Message`], a [`JsValue`] or
    /// [`JsObject`] (or a reference to one), or a string; it is written in its own key order.
    /// Returns the new entry's 8-hex id.
    ///
    /// # Errors
    /// [`AgentSessionError::Append`]: [`AppendError::NullMessage`] for `null` (nothing is
    /// appended), [`AppendError::Serialize`] for a typed payload serde cannot express, or a
    /// failed write.
    ///
    /// [`Message`]: session_format::message::Message
    pub fn append_message(&mut self, message: impl Payload) -> Result<String, AgentSessionError> {
        let id = self.sm.append_message(message)?;
        self.note_appended_message(&id);
        Ok(id)
    }

    /// Runs one tool call block (`{type:"toolCall", id, name, arguments}`) with the active
    /// tool of that name and appends its result message `{role:"toolResult", toolCallId,
    /// toolName, content, details, isError, timestamp}` (key order as the reference's). An
    /// unknown or inactive tool gives an error result `Tool <name> not found`; a failing tool
    /// an error result with its message and `details: {}`. Returns the entry id.
    ///
    /// # Errors
    /// [`AgentSessionError::InvalidToolCall`] for a block without string `id`/`name`;
    /// [`AgentSessionError::Append`].
    pub fn execute_tool_call(&mut self, call: &JsValue) -> Result<String, AgentSessionError> {
        let field = |f: &'static str| {
            call.get(f)
                .and_then(JsValue::as_str_lossy)
                .map(|s| s.into_owned())
                .ok_or_else(|| AgentSessionError::InvalidToolCall {
                    field: f,
                    call: session_format::json::to_json_string(call),
                })
        };
        let id = field("id")?;
        let name = field("name")?;
        let empty = JsValue::Object(JsObject::new());
        let args = call.get("arguments").unwrap_or(&empty);
        let outcome = match self.tools.active_tool(&name) {
            Some(tool) => tool.execute(&id, args),
            None => Err(ToolError::new(format!("Tool {name} not found"))),
        };
        let (output, is_error) = match outcome {
            Ok(o) => (o, false),
            Err(e) => (crate::tools::ToolOutput::text(e.message), true),
        };
        let mut m = JsObject::new();
        m.insert("role", JsValue::from("toolResult"));
        m.insert("toolCallId", JsValue::from(id));
        m.insert("toolName", JsValue::from(name));
        m.insert("content", JsValue::Array(output.content));
        m.insert("details", output.details);
        m.insert("isError", JsValue::Bool(is_error));
        m.insert(
            "timestamp",
            JsValue::Number(session_format::ids::now_ms() as f64),
        );
        // A tool result changes neither the model nor the thinking level: no context rebuild.
        let id = self.sm.append_message(JsValue::Object(m))?;
        Ok(id)
    }

    // ------------------------------------------------------------------------------------
    // Context for the model

    /// The pairing-repair options used by [`AgentSession::model_context`] and
    /// [`AgentSession::provider_payload`] (default: errored and aborted assistant messages
    /// skipped, as pi-ai does; set `errored_assistant` to
    /// [`crate::pairing::ErroredAssistantPolicy::Keep`] to keep them, as the reference does).
    pub fn pairing_options_mut(&mut self) -> &mut PairingOptions {
        &mut self.pairing
    }

    /// The active tools, as [`ModelContext::tools`] lists them.
    fn active_tool_infos(&self) -> Vec<ToolInfo> {
        self.tools
            .get_active_tool_names()
            .iter()
            .filter_map(|n| {
                self.tools.get_tool(n).map(|t| ToolInfo {
                    name: n.clone(),
                    description: t.description().to_owned(),
                    parameters: t.parameters(),
                    source_info: self
                        .tools
                        .tool_definitions
                        .get(n)
                        .map_or_else(|| SourceInfo::builtin(n), |d| d.source_info.clone()),
                })
            })
            .collect()
    }

    /// What a model behind `api` is sent next: the context's messages built into a payload
    /// for that API ([`crate::payload::build_payload`]: lone surrogates replaced by U+FFFD
    /// with a warning naming the file line, tool-call ids normalised for `api` and paired,
    /// errored turns handled by [`AgentSession::pairing_options_mut`], `limits` applied), plus
    /// the system prompt, the active tools, the model and the thinking level. The file is not
    /// touched; the same transcript gives the same payload after a reopen.
    ///
    /// # Errors
    /// [`AgentSessionError::Context`], [`AgentSessionError::Read`].
    pub fn provider_payload(
        &self,
        api: ProviderApi,
        limits: &HistoryLimits,
    ) -> Result<ProviderPayload, AgentSessionError> {
        let options = PayloadOptions {
            api,
            pairing: self.pairing.clone(),
            limits: *limits,
        };
        let payload = session_payload(&self.sm, &options).map_err(|e| match e {
            PayloadError::Context(e) => AgentSessionError::Context(e),
            PayloadError::Read(e) => AgentSessionError::Read(e),
        })?;
        let mut warnings = payload.warnings;
        let mut tools = self.active_tool_infos();
        for (i, tool) in tools.iter_mut().enumerate() {
            scrub_value(
                &mut tool.parameters,
                &format!("tools[{i}].parameters"),
                &mut warnings,
            );
        }
        Ok(ProviderPayload {
            api,
            system_prompt: self.tools.system_prompt().to_owned(),
            tools,
            messages: payload.messages,
            thinking_level: self.thinking_level.clone(),
            model: self.model.clone(),
            warnings,
            tool_call_ids: payload.tool_call_ids,
            dropped_by_limits: payload.dropped_by_limits,
            pairing: payload.pairing,
        })
    }

    /// What a model is sent next: `build_session_context` (openclaw-jsonl.md §2.7), converted
    /// ([`convert_to_llm`]), tool calls and results paired ([`repair_tool_use_result_pairing`],
    /// errored and aborted turns dropped by default; the file is not touched), then cut to
    /// `limits` without separating a tool call from its result ([`history_start`]); plus the
    /// system prompt, the active tools, the model and the thinking level. Strings and ids are
    /// as the transcript holds them; [`AgentSession::provider_payload`] makes them valid for
    /// one provider API.
    ///
    /// # Errors
    /// [`AgentSessionError::Context`], [`AgentSessionError::Read`].
    pub fn model_context(&self, limits: &HistoryLimits) -> Result<ModelContext, AgentSessionError> {
        let messages = self.context_messages()?;
        let llm = convert_to_llm(&messages);
        let mut pairing = repair_tool_use_result_pairing(&llm, &self.pairing);
        let paired = std::mem::take(&mut pairing.messages);
        let start = history_start(&paired, limits);
        let tools = self.active_tool_infos();
        Ok(ModelContext {
            system_prompt: self.tools.system_prompt().to_owned(),
            tools,
            messages: paired[start..].to_vec(),
            thinking_level: self.thinking_level.clone(),
            model: self.model.clone(),
            dropped_by_limits: start,
            pairing,
        })
    }

    /// The context's messages as the manager builds them (before conversion).
    ///
    /// # Errors
    /// [`AgentSessionError::Context`], [`AgentSessionError::Read`].
    pub fn context_messages(&self) -> Result<Vec<JsValue>, AgentSessionError> {
        let ctx = self.sm.build_session_context()?;
        Ok(ctx
            .messages
            .iter()
            .map(session_store::ContextMessage::to_value)
            .collect::<Result<Vec<_>, _>>()?)
    }

    // ------------------------------------------------------------------------------------
    // Compaction

    /// The token budget a `summary` compaction keeps.
    pub fn keep_recent_tokens(&self) -> u64 {
        self.keep_recent_tokens
    }

    /// Sets the token budget a `summary` compaction keeps.
    pub fn set_keep_recent_tokens(&mut self, tokens: u64) {
        self.keep_recent_tokens = tokens;
    }

    /// Compacts the current branch (see [`crate::compaction`]): plans the cut
    /// ([`prepare_compaction`]; the budget is [`AgentSession::keep_recent_tokens`] for
    /// `Summary`, `keep_last` messages for `Truncate`), builds the summary, and appends one
    /// `compaction` entry `{summary, firstKeptEntryId, tokensBefore, details: {readFiles,
    /// modifiedFiles}, fromHook: false}`. Nothing is removed from the file.
    ///
    /// # Errors
    /// [`CompactError::Plan`] (`Already compacted`, `Nothing to compact (session too small)`
    /// — also when the cut would summarise nothing, where the reference would ask a model to
    /// summarise no messages), [`CompactError::Summarize`], or a session error; nothing is
    /// written then.
    pub fn compact(
        &mut self,
        strategy: CompactionStrategy,
    ) -> Result<CompactionResult, CompactError> {
        let path = self
            .sm
            .get_branch(None)
            .iter()
            .map(session_store::EntryRef::value)
            .collect::<Result<Vec<_>, _>>()?;
        let context = self.context_messages()?;
        let budget = match &strategy {
            CompactionStrategy::Truncate { keep_last } => KeepBudget::Messages(*keep_last),
            CompactionStrategy::Summary(_) => KeepBudget::Tokens(self.keep_recent_tokens),
        };
        let prep = prepare_compaction(&path, &context, budget)?;
        let summarized = prep.messages_to_summarize.len() + prep.turn_prefix_messages.len();
        if summarized == 0 {
            return Err(PlanError::NothingToCompact.into());
        }
        let summary = summary_text(&prep, &strategy)?;
        let details = prep.file_ops.file_lists().to_value();
        let entry_id = self.sm.append_compaction(
            &summary,
            &prep.first_kept_entry_id,
            prep.tokens_before,
            Some(details.clone()),
            Some(false),
        )?;
        // A compaction entry extends the branch: the model and thinking level sources on it
        // are the same entries as before.
        Ok(CompactionResult {
            entry_id,
            summary,
            first_kept_entry_id: prep.first_kept_entry_id,
            tokens_before: prep.tokens_before,
            details,
            summarized_messages: summarized,
        })
    }
}

/// [`AgentSession::session_manager_mut`]: the session manager, mutably; dropping it reads the
/// model and thinking level again from the manager's context.
#[derive(Debug)]
pub struct SessionManagerMut<'a> {
    agent: &'a mut AgentSession,
}

impl std::ops::Deref for SessionManagerMut<'_> {
    type Target = SessionManager;

    fn deref(&self) -> &SessionManager {
        &self.agent.sm
    }
}

impl std::ops::DerefMut for SessionManagerMut<'_> {
    fn deref_mut(&mut self) -> &mut SessionManager {
        &mut self.agent.sm
    }
}

impl Drop for SessionManagerMut<'_> {
    fn drop(&mut self) {
        self.agent.refresh_model_state();
    }
}
