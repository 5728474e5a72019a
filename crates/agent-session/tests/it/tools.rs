//! The tool registry (openclaw-jsonl.md §6): `next_active_tool_names` per branch (allow-list,
//! include-all-extension, new-tool auto-activation, built-ins disabled blocking same-named
//! custom tools, an override keeping the built-in's position), `set_active_tools_by_name`,
//! `get_all_tools`, and the system prompt built from the active tools.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::sync::Arc;

use agent_session::prompt::PromptOptions;
use agent_session::tools::{
    ActiveToolsInput, RefreshOptions, SourceInfo, Tool, ToolError, ToolOutput, ToolRuntime,
    ToolSource, next_active_tool_names, normalize_prompt_guidelines, normalize_prompt_snippet,
};
use indexmap::IndexSet;
use session_format::json::{JsValue, parse_value};

#[derive(Debug)]
struct TestTool {
    name: &'static str,
    description: &'static str,
    snippet: Option<&'static str>,
    guidelines: Vec<&'static str>,
}

impl Tool for TestTool {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        self.description
    }
    fn parameters(&self) -> JsValue {
        parse_value(br#"{"type":"object","properties":{}}"#).unwrap()
    }
    fn prompt_snippet(&self) -> Option<String> {
        self.snippet.map(str::to_owned)
    }
    fn prompt_guidelines(&self) -> Vec<String> {
        self.guidelines.iter().map(|g| (*g).to_owned()).collect()
    }
    fn execute(&self, _id: &str, _args: &JsValue) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(self.name))
    }
}

fn tool(name: &'static str) -> Arc<dyn Tool> {
    Arc::new(TestTool {
        name,
        description: "built-in",
        snippet: None,
        guidelines: Vec::new(),
    })
}

fn custom(name: &'static str, description: &'static str) -> Arc<dyn Tool> {
    Arc::new(TestTool {
        name,
        description,
        snippet: None,
        guidelines: Vec::new(),
    })
}

fn prompt() -> PromptOptions {
    let mut p = PromptOptions::new("/home/dev/project");
    p.date = Some("2026-01-01".to_owned());
    p
}

fn runtime(base: &[&'static str]) -> ToolRuntime {
    ToolRuntime::new(base.iter().map(|n| tool(n)).collect(), prompt())
}

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

fn request(v: &[&str]) -> RefreshOptions {
    RefreshOptions {
        active_tool_names: Some(names(v)),
        include_all_extension_tools: false,
    }
}

#[test]
fn branch_a_allow_list_activates_every_allowed_tool() {
    let mut rt = runtime(&["read", "bash", "edit", "write"]);
    rt.set_custom_tools(vec![custom("todo", "sdk"), custom("web", "sdk")]);
    rt.set_allowed_tool_names(Some(names(&["todo", "read", "bash"])));
    rt.refresh_tool_registry(&request(&["todo"]));
    assert_eq!(rt.registry_names(), names(&["read", "bash", "todo"]));
    // Seed [todo], then every allowed registry tool in registry order, deduplicated.
    assert_eq!(rt.get_active_tool_names(), names(&["todo", "read", "bash"]));
    // Even when nothing is requested and nothing is new.
    rt.set_active_tools_by_name(&["read"]);
    rt.refresh_tool_registry(&RefreshOptions::default());
    assert_eq!(rt.get_active_tool_names(), names(&["read", "bash", "todo"]));
}

#[test]
fn branch_b_include_all_extension_tools() {
    let mut rt = runtime(&["read", "bash"]);
    rt.register_extension_tool(custom("ext1", "ext"), SourceInfo::extension("/ext/one.ts"));
    rt.register_extension_tool(custom("ext2", "ext"), SourceInfo::extension("/ext/two.ts"));
    rt.set_custom_tools(vec![custom("sdk1", "sdk")]);
    rt.refresh_tool_registry(&RefreshOptions {
        active_tool_names: Some(names(&["read"])),
        include_all_extension_tools: true,
    });
    assert_eq!(
        rt.get_active_tool_names(),
        names(&["read", "ext1", "ext2", "sdk1"])
    );
    // Without the flag and with a request, only the request.
    rt.refresh_tool_registry(&request(&["bash"]));
    assert_eq!(rt.get_active_tool_names(), names(&["bash"]));
}

#[test]
fn branch_c_new_tools_activate_only_without_a_request() {
    let mut rt = runtime(&["read", "bash"]);
    rt.refresh_tool_registry(&request(&["read"]));
    assert_eq!(rt.get_active_tool_names(), names(&["read"]));
    rt.register_extension_tool(custom("grep", "ext"), SourceInfo::extension("/ext/grep.ts"));
    rt.refresh_tool_registry(&RefreshOptions::default());
    // Previous active [read] plus the tool new since the last refresh; bash stays inactive.
    assert_eq!(rt.get_active_tool_names(), names(&["read", "grep"]));
    rt.register_extension_tool(custom("find", "ext"), SourceInfo::extension("/ext/find.ts"));
    rt.refresh_tool_registry(&request(&["bash"]));
    // An explicit request: no auto-activation.
    assert_eq!(rt.get_active_tool_names(), names(&["bash"]));
    // Refreshing again: nothing is new any more.
    rt.refresh_tool_registry(&RefreshOptions::default());
    assert_eq!(rt.get_active_tool_names(), names(&["bash"]));
}

#[test]
fn disabled_built_ins_also_block_custom_tools_of_that_name() {
    let mut rt = runtime(&["read", "bash"]);
    rt.set_disable_built_in_tools(true);
    rt.set_custom_tools(vec![custom("read", "my read"), custom("grep", "sdk grep")]);
    rt.refresh_tool_registry(&request(&["read", "bash", "grep"]));
    assert_eq!(rt.registry_names(), names(&["grep"]));
    assert_eq!(rt.get_active_tool_names(), names(&["grep"]));
    let all = rt.get_all_tools();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].name, "grep");
    assert_eq!(all[0].source_info, SourceInfo::sdk("grep"));
}

#[test]
fn an_override_keeps_the_built_in_position() {
    let mut rt = runtime(&["read", "bash", "edit"]);
    rt.set_custom_tools(vec![
        custom("bash", "first override"),
        custom("todo", "sdk"),
        custom("bash", "second override"),
    ]);
    rt.refresh_tool_registry(&request(&["edit", "bash"]));
    assert_eq!(
        rt.registry_names(),
        names(&["read", "bash", "edit", "todo"])
    );
    let all = rt.get_all_tools();
    let order: Vec<&str> = all.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(order, ["read", "bash", "edit", "todo"]);
    // The later custom tool replaced the earlier one; the source is the SDK.
    assert_eq!(all[1].description, "second override");
    assert_eq!(all[1].source_info.path, "<sdk:bash>");
    assert_eq!(all[1].source_info.source, ToolSource::Sdk);
    assert_eq!(all[0].source_info.path, "<builtin:read>");
    assert_eq!(
        rt.get_tool("bash").unwrap().description(),
        "second override"
    );
    assert_eq!(rt.get_active_tool_names(), names(&["edit", "bash"]));
}

#[test]
fn next_active_tool_names_table() {
    let set = |v: &[&str]| {
        v.iter()
            .map(|s| (*s).to_owned())
            .collect::<IndexSet<String>>()
    };
    let registry = names(&["read", "bash", "edit", "ext"]);
    let customs = names(&["ext", "ext"]);
    let prev_active = names(&["bash", "read", "gone"]);
    let prev_registry = set(&["read", "bash", "edit"]);
    let allowed = set(&["edit", "ext", "read"]);
    let req = names(&["edit", "edit", "read"]);
    struct Row<'a> {
        requested: Option<&'a [String]>,
        allowed: Option<&'a IndexSet<String>>,
        include_all: bool,
        blocked: &'a [&'a str],
        want: &'a [&'a str],
    }
    let rows = [
        // (a) allow-list: seed (previous, filtered by the allow-list), then allowed registry names.
        Row {
            requested: None,
            allowed: Some(&allowed),
            include_all: true,
            blocked: &["bash", "gone"],
            want: &["read", "edit", "ext"],
        },
        // (b) include all extension tools: seed, then every custom name.
        Row {
            requested: Some(&req),
            allowed: None,
            include_all: true,
            blocked: &[],
            want: &["edit", "read", "ext"],
        },
        // (c) no request: previous active, then registry names new since the last refresh.
        Row {
            requested: None,
            allowed: None,
            include_all: false,
            blocked: &[],
            want: &["bash", "read", "gone", "ext"],
        },
        // A request without the flag: the request only, deduplicated.
        Row {
            requested: Some(&req),
            allowed: None,
            include_all: false,
            blocked: &[],
            want: &["edit", "read"],
        },
        // Seed names that are not allowed are dropped.
        Row {
            requested: None,
            allowed: None,
            include_all: false,
            blocked: &["read"],
            want: &["bash", "gone", "ext"],
        },
    ];
    for (i, row) in rows.iter().enumerate() {
        let got = next_active_tool_names(
            &ActiveToolsInput {
                requested: row.requested,
                previous_active: &prev_active,
                previous_registry: &prev_registry,
                registry: &registry,
                custom_tools: &customs,
                allowed: row.allowed,
                include_all_extension_tools: row.include_all,
            },
            |n| !row.blocked.contains(&n) && row.allowed.is_none_or(|a| a.contains(n)),
        );
        assert_eq!(got, names(row.want), "row {i}");
    }
}

#[test]
fn set_active_tools_by_name_ignores_unknown_names_and_keeps_order() {
    let mut rt = runtime(&["read", "bash", "edit"]);
    rt.refresh_tool_registry(&request(&[]));
    assert!(rt.get_active_tool_names().is_empty());
    rt.set_active_tools_by_name(&["edit", "nope", "read"]);
    assert_eq!(rt.get_active_tool_names(), names(&["edit", "read"]));
    assert!(rt.active_tool("bash").is_none());
    assert!(rt.active_tool("edit").is_some());
}

#[test]
fn replace_custom_tools_makes_an_allow_list() {
    let mut rt = runtime(&["read", "bash"]);
    rt.refresh_tool_registry(&request(&["read", "bash"]));
    rt.replace_custom_tools(vec![custom("todo", "sdk")], names(&["todo", "read"]));
    assert_eq!(rt.registry_names(), names(&["read", "todo"]));
    assert_eq!(rt.get_active_tool_names(), names(&["todo", "read"]));
}

#[test]
fn the_system_prompt_lists_the_active_tools_snippets_and_guidelines() {
    let tools: Vec<Arc<dyn Tool>> = vec![
        Arc::new(TestTool {
            name: "read",
            description: "Read a file",
            snippet: Some("  Read a file's\r\n\n contents   by path "),
            guidelines: vec!["  Read before editing ", "", "Read before editing"],
        }),
        Arc::new(TestTool {
            name: "bash",
            description: "Run a command",
            snippet: Some("   "),
            guidelines: vec!["Prefer short commands", "Be concise in your responses"],
        }),
        Arc::new(TestTool {
            name: "edit",
            description: "Edit a file",
            snippet: Some("Replace text in a file"),
            guidelines: vec![],
        }),
    ];
    let mut rt = ToolRuntime::new(tools, prompt());
    rt.refresh_tool_registry(&request(&["read", "bash"]));
    assert_eq!(
        rt.tool_prompt_snippets().get("read").map(String::as_str),
        Some("Read a file's contents by path")
    );
    assert!(!rt.tool_prompt_snippets().contains_key("bash"));
    assert_eq!(
        rt.system_prompt(),
        "You are a coding assistant working in the user's project. You read files, run commands, edit code and write new files with the tools below.\n\
         \n\
         Available tools:\n\
         - read: Read a file's contents by path\n\
         \n\
         Guidelines:\n\
         - Read before editing\n\
         - Prefer short commands\n\
         - Be concise in your responses\n\
         - Show file paths clearly when working with files\n\
         Current date: 2026-01-01\n\
         Current working directory: /home/dev/project"
    );
    rt.set_active_tools_by_name(&["edit"]);
    assert!(
        rt.system_prompt()
            .contains("Available tools:\n- edit: Replace text in a file\n")
    );
    assert!(!rt.system_prompt().contains("Read before editing"));
    rt.set_active_tools_by_name::<&str>(&[]);
    assert!(rt.system_prompt().contains("Available tools:\n(none)\n"));
    rt.set_base_system_prompt("exact prompt");
    rt.set_active_tools_by_name(&["read"]);
    assert_eq!(rt.system_prompt(), "exact prompt");
}

#[test]
fn snippet_and_guideline_normalisation() {
    assert_eq!(normalize_prompt_snippet(None), None);
    assert_eq!(normalize_prompt_snippet(Some(" \n ")), None);
    assert_eq!(
        normalize_prompt_snippet(Some("a\r\n\r\nb\t c")).as_deref(),
        Some("a b c")
    );
    assert_eq!(
        normalize_prompt_guidelines(&names(&[" x ", "", "y", "x", "  "])),
        names(&["x", "y"])
    );
}

#[test]
fn a_tool_without_a_snippet_is_active_but_not_listed() {
    let tools: Vec<Arc<dyn Tool>> = vec![
        Arc::new(TestTool {
            name: "bash",
            description: "Run a command",
            snippet: None,
            guidelines: vec!["Prefer short commands"],
        }),
        Arc::new(TestTool {
            name: "read",
            description: "Read a file",
            snippet: Some(" \n "),
            guidelines: vec![],
        }),
    ];
    let mut rt = ToolRuntime::new(tools, prompt());
    rt.refresh_tool_registry(&request(&["bash", "read"]));
    assert_eq!(rt.get_active_tool_names(), names(&["bash", "read"]));
    assert_eq!(rt.active_tool("bash").unwrap().name(), "bash");
    assert_eq!(rt.active_tool("read").unwrap().name(), "read");
    assert!(rt.tool_prompt_snippets().is_empty());
    // Not listed, but its guidelines are.
    assert_eq!(
        rt.system_prompt(),
        "You are a coding assistant working in the user's project. You read files, run commands, edit code and write new files with the tools below.\n\
         \n\
         Available tools:\n\
         (none)\n\
         \n\
         Guidelines:\n\
         - Prefer short commands\n\
         - Be concise in your responses\n\
         - Show file paths clearly when working with files\n\
         Current date: 2026-01-01\n\
         Current working directory: /home/dev/project"
    );
}
