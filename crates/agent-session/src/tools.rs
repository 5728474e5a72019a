//! The tool registry of an agent session (openclaw-jsonl.md §6; OpenClaw 2026.6.11
//! `AgentSession.refreshToolRegistry`, `setActiveToolsByName`, `getAllTools`): runtime state,
//! never persisted.
//!
//! Tools come from three places: the base (built-in) tools the session is built with,
//! extension-registered tools, and SDK custom tools. [`ToolRuntime::refresh_tool_registry`]
//! rebuilds the registry from them and chooses the active tools ([`next_active_tool_names`]);
//! the system prompt is rebuilt from the active tools' prompt snippets and guidelines
//! ([`crate::prompt`]).

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use indexmap::{IndexMap, IndexSet};
use session_format::json::{JsObject, JsValue};

use crate::prompt::{PromptOptions, build_system_prompt};

/// What a tool returns.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolOutput {
    /// Content blocks (`[{type:"text", text}]`, images, …).
    pub content: Vec<JsValue>,
    /// Structured details kept with the result (not sent to the model).
    pub details: JsValue,
}

impl ToolOutput {
    /// One text block, empty details (`{}`).
    pub fn text(text: impl Into<String>) -> Self {
        let mut b = JsObject::new();
        b.insert("type", JsValue::from("text"));
        b.insert("text", JsValue::from(text.into()));
        ToolOutput {
            content: vec![JsValue::Object(b)],
            details: JsValue::Object(JsObject::new()),
        }
    }
}

/// Why a tool failed; the message becomes the text of an error result.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    /// Shown to the model.
    pub message: String,
}

impl ToolError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
        }
    }
}

/// A tool the agent can call.
pub trait Tool: Send + Sync + fmt::Debug {
    /// The name the model calls it by (the registry key).
    fn name(&self) -> &str;
    /// What it does, for the model.
    fn description(&self) -> &str;
    /// JSON Schema of its arguments.
    fn parameters(&self) -> JsValue;
    /// One line for the system prompt's tool list (normalised by
    /// [`normalize_prompt_snippet`]: runs of JavaScript whitespace, newlines included, become
    /// one space, trimmed; empty means none). An active tool is listed as `- name: snippet`
    /// under `Available tools:`, in active order.
    ///
    /// A tool without a snippet (`None`, the default, or one that is empty after normalising)
    /// is still active and callable, and its [`Tool::prompt_guidelines`] are still listed, but
    /// it is left out of the tool list; when no active tool has a snippet, the list reads
    /// `Available tools:` followed by the line `(none)` (see [`build_system_prompt`]). A custom
    /// or exact base system prompt has no tool list at all.
    fn prompt_snippet(&self) -> Option<String> {
        None
    }
    /// Guidelines added to the system prompt while the tool is active (each trimmed, empty
    /// ones and repeats dropped).
    fn prompt_guidelines(&self) -> Vec<String> {
        Vec::new()
    }
    /// Runs one call.
    ///
    /// # Errors
    /// [`ToolError`]: the call's result is then an error result with its message.
    fn execute(&self, tool_call_id: &str, arguments: &JsValue) -> Result<ToolOutput, ToolError>;
}

/// Where a tool definition comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ToolSource {
    /// A base tool (`<builtin:NAME>`).
    Builtin,
    /// Registered by an extension.
    Extension,
    /// An SDK custom tool (`<sdk:NAME>`).
    Sdk,
}

impl ToolSource {
    /// `builtin`, `extension` or `sdk`.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolSource::Builtin => "builtin",
            ToolSource::Extension => "extension",
            ToolSource::Sdk => "sdk",
        }
    }
}

/// Source information of a definition (`createSyntheticSourceInfo`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceInfo {
    /// `<builtin:NAME>`, `<sdk:NAME>` or the extension's path.
    pub path: String,
    /// The kind of source.
    pub source: ToolSource,
}

impl SourceInfo {
    /// `<builtin:NAME>`.
    pub fn builtin(name: &str) -> Self {
        SourceInfo {
            path: format!("<builtin:{name}>"),
            source: ToolSource::Builtin,
        }
    }

    /// `<sdk:NAME>`.
    pub fn sdk(name: &str) -> Self {
        SourceInfo {
            path: format!("<sdk:{name}>"),
            source: ToolSource::Sdk,
        }
    }

    /// An extension at `path`.
    pub fn extension(path: impl Into<String>) -> Self {
        SourceInfo {
            path: path.into(),
            source: ToolSource::Extension,
        }
    }
}

/// A definition in the registry: the tool and where it comes from.
#[derive(Clone, Debug)]
pub struct ToolDefinition {
    /// The tool.
    pub tool: Arc<dyn Tool>,
    /// Where it comes from.
    pub source_info: SourceInfo,
}

/// One entry of [`ToolRuntime::get_all_tools`].
#[derive(Clone, Debug, PartialEq)]
pub struct ToolInfo {
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
    /// JSON Schema of the arguments.
    pub parameters: JsValue,
    /// Where it comes from.
    pub source_info: SourceInfo,
}

/// Options of [`ToolRuntime::refresh_tool_registry`].
#[derive(Clone, Debug, Default)]
pub struct RefreshOptions {
    /// The names to start the active set from (default: the currently active names).
    pub active_tool_names: Option<Vec<String>>,
    /// Activate every custom (extension and SDK) tool.
    pub include_all_extension_tools: bool,
}

/// The inputs of [`next_active_tool_names`].
#[derive(Clone, Copy, Debug)]
pub struct ActiveToolsInput<'a> {
    /// `options.activeToolNames`, when given.
    pub requested: Option<&'a [String]>,
    /// The active names before the refresh, in order.
    pub previous_active: &'a [String],
    /// The registry's names before the refresh.
    pub previous_registry: &'a IndexSet<String>,
    /// The new registry's names, in registry order.
    pub registry: &'a [String],
    /// The allowed custom tools' names (extension tools then SDK tools, repeats included).
    pub custom_tools: &'a [String],
    /// The allow-list (`allowedToolNames`).
    pub allowed: Option<&'a IndexSet<String>>,
    /// `options.includeAllExtensionTools`.
    pub include_all_extension_tools: bool,
}

/// The active tool names after a refresh (openclaw-jsonl.md §6 step 7): the seed
/// (`requested`, else `previous_active`) filtered by `is_allowed`, then exactly one of
/// - (a) with an allow-list: every registry name in the allow-list, in registry order;
/// - (b) else with `include_all_extension_tools`: every custom tool name, in order;
/// - (c) else when nothing was requested: every registry name that is new since the last
///   refresh;
///
/// then repeats removed keeping the first occurrence. Names not in the registry are left for
/// `set_active_tools_by_name` to ignore.
pub fn next_active_tool_names(
    input: &ActiveToolsInput<'_>,
    is_allowed: impl Fn(&str) -> bool,
) -> Vec<String> {
    let seed = input.requested.unwrap_or(input.previous_active);
    let mut names: Vec<String> = seed.iter().filter(|n| is_allowed(n)).cloned().collect();
    if let Some(allowed) = input.allowed {
        names.extend(
            input
                .registry
                .iter()
                .filter(|n| allowed.contains(*n))
                .cloned(),
        );
    } else if input.include_all_extension_tools {
        names.extend(input.custom_tools.iter().cloned());
    } else if input.requested.is_none() {
        names.extend(
            input
                .registry
                .iter()
                .filter(|n| !input.previous_registry.contains(*n))
                .cloned(),
        );
    }
    let mut seen = HashSet::new();
    names.retain(|n| seen.insert(n.clone()));
    names
}

/// JavaScript whitespace (`\s` in a regular expression, and what `String.prototype.trim`
/// removes); see [`session_format::js::is_whitespace`].
pub use session_format::js::is_whitespace as is_js_whitespace;
/// `String.prototype.trim`; see [`session_format::js::trim`].
pub use session_format::js::trim as js_trim;

/// `normalizePromptSnippet`: newline runs and then whitespace runs (JavaScript `\s`,
/// [`is_js_whitespace`]) become one space, trimmed; `None` when empty.
pub fn normalize_prompt_snippet(text: Option<&str>) -> Option<String> {
    let text = text?;
    let one_line = text
        .split(is_js_whitespace)
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    (!one_line.is_empty()).then_some(one_line)
}

/// `normalizePromptGuidelines`: each trimmed ([`js_trim`]), empty ones dropped, repeats
/// removed keeping the first.
pub fn normalize_prompt_guidelines(guidelines: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for g in guidelines {
        let t = js_trim(g);
        if !t.is_empty() && !out.iter().any(|o| o == t) {
            out.push(t.to_owned());
        }
    }
    out
}

/// The tool state of an agent session (openclaw-jsonl.md §6 fields): base definitions, the
/// registry of runnable tools, definitions with source info, prompt snippets and guidelines,
/// the allow-list and the built-in switch, the active tools and the system prompt built from
/// them. Nothing here is persisted.
#[derive(Debug)]
pub struct ToolRuntime {
    /// `baseToolDefinitions`: built-in name → tool, in the order given.
    pub(crate) base_tool_definitions: IndexMap<String, Arc<dyn Tool>>,
    /// Extension-registered tools, in registration order.
    pub(crate) extension_tools: Vec<ToolDefinition>,
    /// SDK custom tools (`customTools`).
    pub(crate) custom_tools: Vec<Arc<dyn Tool>>,
    /// `toolRegistry`: name → runnable tool.
    pub(crate) tool_registry: IndexMap<String, Arc<dyn Tool>>,
    /// `toolDefinitions`: name → definition and source.
    pub(crate) tool_definitions: IndexMap<String, ToolDefinition>,
    /// `toolPromptSnippets`.
    pub(crate) tool_prompt_snippets: IndexMap<String, String>,
    /// `toolPromptGuidelines`.
    pub(crate) tool_prompt_guidelines: IndexMap<String, Vec<String>>,
    /// `allowedToolNames`.
    pub(crate) allowed_tool_names: Option<IndexSet<String>>,
    /// `disableBuiltInTools`.
    pub(crate) disable_built_in_tools: bool,
    /// The active tools (`agent.state.tools`), in order.
    pub(crate) active: Vec<String>,
    /// Options of the system prompt.
    pub(crate) prompt: PromptOptions,
    /// An exact base prompt that replaces the built one (`setBaseSystemPrompt`).
    pub(crate) exact_base_system_prompt: Option<String>,
    /// The current system prompt.
    pub(crate) system_prompt: String,
}

impl ToolRuntime {
    /// A runtime with these base tools and nothing active yet (call
    /// [`ToolRuntime::refresh_tool_registry`]).
    pub fn new(base_tools: Vec<Arc<dyn Tool>>, prompt: PromptOptions) -> Self {
        let base_tool_definitions = base_tools
            .into_iter()
            .map(|t| (t.name().to_owned(), t))
            .collect();
        ToolRuntime {
            base_tool_definitions,
            extension_tools: Vec::new(),
            custom_tools: Vec::new(),
            tool_registry: IndexMap::new(),
            tool_definitions: IndexMap::new(),
            tool_prompt_snippets: IndexMap::new(),
            tool_prompt_guidelines: IndexMap::new(),
            allowed_tool_names: None,
            disable_built_in_tools: false,
            active: Vec::new(),
            prompt,
            exact_base_system_prompt: None,
            system_prompt: String::new(),
        }
    }

    fn is_allowed(&self, name: &str) -> bool {
        let disabled = self.disable_built_in_tools && self.base_tool_definitions.contains_key(name);
        !disabled
            && self
                .allowed_tool_names
                .as_ref()
                .is_none_or(|a| a.contains(name))
    }

    /// `refreshToolRegistry(options)` (openclaw-jsonl.md §6): rebuilds the definitions (allowed
    /// built-ins in base order with `<builtin:NAME>`, then extension and SDK tools set by name —
    /// a custom tool named like a built-in keeps the built-in's position, a later custom tool
    /// replaces an earlier one), the prompt snippets and guidelines, and the registry, then
    /// activates [`next_active_tool_names`]. A tool is allowed unless built-ins are disabled and
    /// it has a built-in's name (custom tools of that name included), or an allow-list exists
    /// and does not name it.
    pub fn refresh_tool_registry(&mut self, options: &RefreshOptions) {
        let previous_registry: IndexSet<String> = self.tool_registry.keys().cloned().collect();
        let previous_active = self.active.clone();
        let customs: Vec<ToolDefinition> = self
            .extension_tools
            .iter()
            .cloned()
            .chain(self.custom_tools.iter().map(|t| ToolDefinition {
                source_info: SourceInfo::sdk(t.name()),
                tool: Arc::clone(t),
            }))
            .filter(|d| self.is_allowed(d.tool.name()))
            .collect();
        let mut definitions: IndexMap<String, ToolDefinition> = self
            .base_tool_definitions
            .iter()
            .filter(|(name, _)| self.is_allowed(name))
            .map(|(name, tool)| {
                (
                    name.clone(),
                    ToolDefinition {
                        tool: Arc::clone(tool),
                        source_info: SourceInfo::builtin(name),
                    },
                )
            })
            .collect();
        for d in &customs {
            definitions.insert(d.tool.name().to_owned(), d.clone());
        }
        self.tool_prompt_snippets = definitions
            .values()
            .filter_map(|d| {
                normalize_prompt_snippet(d.tool.prompt_snippet().as_deref())
                    .map(|s| (d.tool.name().to_owned(), s))
            })
            .collect();
        self.tool_prompt_guidelines = definitions
            .values()
            .filter_map(|d| {
                let g = normalize_prompt_guidelines(&d.tool.prompt_guidelines());
                (!g.is_empty()).then(|| (d.tool.name().to_owned(), g))
            })
            .collect();
        self.tool_definitions = definitions;
        let mut registry: IndexMap<String, Arc<dyn Tool>> = self
            .base_tool_definitions
            .values()
            .filter(|t| self.is_allowed(t.name()))
            .map(|t| (t.name().to_owned(), Arc::clone(t)))
            .collect();
        for d in &customs {
            registry.insert(d.tool.name().to_owned(), Arc::clone(&d.tool));
        }
        self.tool_registry = registry;
        let registry_names: Vec<String> = self.tool_registry.keys().cloned().collect();
        let custom_names: Vec<String> = customs.iter().map(|d| d.tool.name().to_owned()).collect();
        let next = next_active_tool_names(
            &ActiveToolsInput {
                requested: options.active_tool_names.as_deref(),
                previous_active: &previous_active,
                previous_registry: &previous_registry,
                registry: &registry_names,
                custom_tools: &custom_names,
                allowed: self.allowed_tool_names.as_ref(),
                include_all_extension_tools: options.include_all_extension_tools,
            },
            |n| self.is_allowed(n),
        );
        self.set_active_tools_by_name(&next);
    }

    /// `setActiveToolsByName(names)`: the names present in the registry become the active
    /// tools, in the given order (unknown names are ignored), and the system prompt is rebuilt
    /// from their snippets and guidelines.
    pub fn set_active_tools_by_name<S: AsRef<str>>(&mut self, names: &[S]) {
        self.active = names
            .iter()
            .map(AsRef::as_ref)
            .filter(|n| self.tool_registry.contains_key(*n))
            .map(str::to_owned)
            .collect();
        self.rebuild_system_prompt();
    }

    /// The active tools' snippets (by name) and guidelines (concatenated in tool order).
    fn active_prompt_metadata(&self) -> (Vec<(String, String)>, Vec<String>) {
        let mut snippets = Vec::new();
        let mut guidelines = Vec::new();
        for name in &self.active {
            if let Some(s) = self.tool_prompt_snippets.get(name) {
                snippets.push((name.clone(), s.clone()));
            }
            if let Some(g) = self.tool_prompt_guidelines.get(name) {
                guidelines.extend(g.iter().cloned());
            }
        }
        (snippets, guidelines)
    }

    fn rebuild_system_prompt(&mut self) {
        if let Some(exact) = &self.exact_base_system_prompt {
            self.system_prompt = exact.clone();
            return;
        }
        let (snippets, guidelines) = self.active_prompt_metadata();
        self.system_prompt = build_system_prompt(&self.prompt, &snippets, &guidelines);
    }

    /// `setBaseSystemPrompt`: from now on the system prompt is exactly `prompt`, whatever the
    /// active tools.
    pub fn set_base_system_prompt(&mut self, prompt: impl Into<String>) {
        let prompt = prompt.into();
        self.system_prompt.clone_from(&prompt);
        self.exact_base_system_prompt = Some(prompt);
    }

    /// The current system prompt.
    pub fn system_prompt(&self) -> &str {
        &self.system_prompt
    }

    /// `getActiveToolNames()`.
    pub fn get_active_tool_names(&self) -> Vec<String> {
        self.active.clone()
    }

    /// `getAllTools()`: every definition (name, description, parameters, source), in registry
    /// order.
    pub fn get_all_tools(&self) -> Vec<ToolInfo> {
        self.tool_definitions
            .values()
            .map(|d| ToolInfo {
                name: d.tool.name().to_owned(),
                description: d.tool.description().to_owned(),
                parameters: d.tool.parameters(),
                source_info: d.source_info.clone(),
            })
            .collect()
    }

    /// The runnable tool of that name, if registered.
    pub fn get_tool(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tool_registry.get(name)
    }

    /// The active tool of that name, if any.
    pub fn active_tool(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.active
            .iter()
            .any(|a| a == name)
            .then(|| self.tool_registry.get(name))
            .flatten()
    }

    /// Names in the registry, in order.
    pub fn registry_names(&self) -> Vec<String> {
        self.tool_registry.keys().cloned().collect()
    }

    /// Names with a prompt snippet, and the snippets.
    pub fn tool_prompt_snippets(&self) -> &IndexMap<String, String> {
        &self.tool_prompt_snippets
    }

    /// Names with guidelines, and the guidelines.
    pub fn tool_prompt_guidelines(&self) -> &IndexMap<String, Vec<String>> {
        &self.tool_prompt_guidelines
    }

    /// Registers an extension tool (not refreshed: call
    /// [`ToolRuntime::refresh_tool_registry`]).
    pub fn register_extension_tool(&mut self, tool: Arc<dyn Tool>, source_info: SourceInfo) {
        self.extension_tools
            .push(ToolDefinition { tool, source_info });
    }

    /// Sets the allow-list (`None`: every tool allowed); not refreshed.
    pub fn set_allowed_tool_names(&mut self, names: Option<Vec<String>>) {
        self.allowed_tool_names = names.map(|n| n.into_iter().collect());
    }

    /// Switches built-in tools off (also blocking custom tools with a built-in's name); not
    /// refreshed.
    pub fn set_disable_built_in_tools(&mut self, disable: bool) {
        self.disable_built_in_tools = disable;
    }

    /// `replaceCustomTools(tools, activeNames)`: the SDK custom tools become `tools`, the
    /// allow-list becomes `active_names`, and the registry is refreshed with them as the
    /// requested active names.
    pub fn replace_custom_tools(&mut self, tools: Vec<Arc<dyn Tool>>, active_names: Vec<String>) {
        self.custom_tools = tools;
        self.allowed_tool_names = Some(active_names.iter().cloned().collect());
        self.refresh_tool_registry(&RefreshOptions {
            active_tool_names: Some(active_names),
            include_all_extension_tools: false,
        });
    }

    /// Sets the SDK custom tools; not refreshed.
    pub fn set_custom_tools(&mut self, tools: Vec<Arc<dyn Tool>>) {
        self.custom_tools = tools;
    }
}
