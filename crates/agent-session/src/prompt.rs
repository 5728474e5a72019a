//! The system prompt, rebuilt whenever the active tools change (openclaw-jsonl.md §6 step 8).
//! The layout follows the reference's `buildSystemPrompt`: an introduction, the active tools
//! that have a prompt snippet (`- name: snippet`, or `(none)`), the guidelines (the active
//! tools' guidelines in tool order, then the defaults, repeats removed), an optional appended
//! section, then the current date and working directory. A custom prompt replaces the
//! introduction, tool list and guidelines. The wording of the introduction and defaults is this
//! workspace's own.

/// Options of [`build_system_prompt`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptOptions {
    /// The introduction (default [`DEFAULT_INTRODUCTION`]).
    pub introduction: String,
    /// Replaces introduction, tools and guidelines when set.
    pub custom_prompt: Option<String>,
    /// Appended after a blank line.
    pub append_system_prompt: Option<String>,
    /// Guidelines always listed after the tools' own.
    pub default_guidelines: Vec<String>,
    /// The working directory shown (backslashes become slashes).
    pub cwd: String,
    /// The date shown (`YYYY-MM-DD`; default: today, local time).
    pub date: Option<String>,
}

/// The default introduction.
pub const DEFAULT_INTRODUCTION: &str = "You are a coding assistant working in the user's project. \
You read files, run commands, edit code and write new files with the tools below.";

impl PromptOptions {
    /// Defaults for a working directory.
    pub fn new(cwd: impl Into<String>) -> Self {
        PromptOptions {
            introduction: DEFAULT_INTRODUCTION.to_owned(),
            custom_prompt: None,
            append_system_prompt: None,
            default_guidelines: vec![
                "Be concise in your responses".to_owned(),
                "Show file paths clearly when working with files".to_owned(),
            ],
            cwd: cwd.into(),
            date: None,
        }
    }
}

/// Builds the system prompt from the active tools' snippets (`(name, snippet)` in active order)
/// and guidelines (concatenated in active order).
pub fn build_system_prompt(
    options: &PromptOptions,
    snippets: &[(String, String)],
    guidelines: &[String],
) -> String {
    let date = options
        .date
        .clone()
        .unwrap_or_else(|| chrono::Local::now().format("%Y-%m-%d").to_string());
    let cwd = options.cwd.replace('\\', "/");
    let mut prompt = match &options.custom_prompt {
        Some(custom) => custom.clone(),
        None => {
            let tools = if snippets.is_empty() {
                "(none)".to_owned()
            } else {
                snippets
                    .iter()
                    .map(|(n, s)| format!("- {n}: {s}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            let mut list: Vec<&str> = Vec::new();
            for g in guidelines
                .iter()
                .chain(&options.default_guidelines)
                .map(|g| session_format::js::trim(g))
            {
                if !g.is_empty() && !list.contains(&g) {
                    list.push(g);
                }
            }
            let guidelines = list
                .iter()
                .map(|g| format!("- {g}"))
                .collect::<Vec<_>>()
                .join("\n");
            format!(
                "{}\n\nAvailable tools:\n{tools}\n\nGuidelines:\n{guidelines}",
                options.introduction
            )
        }
    };
    if let Some(append) = options
        .append_system_prompt
        .as_deref()
        .filter(|a| !a.is_empty())
    {
        prompt.push_str("\n\n");
        prompt.push_str(append);
    }
    prompt.push_str(&format!("\nCurrent date: {date}"));
    prompt.push_str(&format!("\nCurrent working directory: {cwd}"));
    prompt
}
