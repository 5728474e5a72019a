//! `cargo xtask modules CRATE`: the graph of `crate::` references between the top-level modules
//! of one workspace crate, and the cycles in it (exit 1 when there is one).
//!
//! A module is a top-level `src/<name>.rs` or `src/<name>/mod.rs`; its sub-modules are folded
//! into it. An edge `a -> b` is any `crate::b…` path in code of `a` (comments and doc comments
//! are left out), and `crate::Name` for a name the crate root re-exports (`pub use b::{Name, …}`)
//! counts as `crate::b`. Cycles are the strongly connected components of more than one module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// The arguments of `cargo xtask modules`.
#[derive(Debug, clap::Args)]
pub struct ModulesArgs {
    /// The crate's directory name under `crates/` (e.g. `session-store`).
    pub krate: String,
}

/// Module name → the modules it names.
pub type Graph = BTreeMap<String, BTreeSet<String>>;

/// Prints the graph and its cycles; `Ok(false)` when there is a cycle.
pub fn run(args: &ModulesArgs) -> Result<bool> {
    let src = crate::bench::repo_root()
        .join("crates")
        .join(&args.krate)
        .join("src");
    if !src.join("lib.rs").is_file() {
        bail!("{} has no lib.rs", src.display());
    }
    let graph = graph_of(&src)?;
    for (m, to) in &graph {
        let to: Vec<&str> = to.iter().map(String::as_str).collect();
        println!(
            "{m} -> {}",
            if to.is_empty() {
                "(none)".to_owned()
            } else {
                to.join(", ")
            }
        );
    }
    let cycles = cycles(&graph);
    if cycles.is_empty() {
        println!(
            "no cycle among the {} modules of {}",
            graph.len(),
            args.krate
        );
        return Ok(true);
    }
    for c in &cycles {
        let c: Vec<&str> = c.iter().map(String::as_str).collect();
        println!("cycle: {}", c.join(" <-> "));
    }
    Ok(false)
}

/// The graph of the crate whose sources are in `src`.
///
/// # Errors
/// A source file that cannot be read.
pub fn graph_of(src: &Path) -> Result<Graph> {
    let lib = read(&src.join("lib.rs"))?;
    let modules = top_level_modules(src)?;
    let reexports = reexports(&strip_comments(&lib), &modules);
    let mut graph = Graph::new();
    for (name, files) in &modules {
        let mut to = BTreeSet::new();
        for f in files {
            if f.file_stem()
                .is_some_and(|n| n == "tests" || n.to_string_lossy().ends_with("_tests"))
            {
                continue;
            }
            let code = without_test_modules(&strip_comments(&read(f)?));
            for target in crate_paths(&code) {
                let target = reexports.get(&target).cloned().unwrap_or(target);
                if &target != name && modules.contains_key(&target) {
                    to.insert(target);
                }
            }
        }
        graph.insert(name.clone(), to);
    }
    Ok(graph)
}

fn read(p: &Path) -> Result<String> {
    std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))
}

/// Each top-level module with every `.rs` file it is made of.
fn top_level_modules(src: &Path) -> Result<BTreeMap<String, Vec<PathBuf>>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(src).with_context(|| format!("listing {}", src.display()))? {
        let p = e?.path();
        let name = p
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if p.is_file() && p.extension().is_some_and(|x| x == "rs") && name != "lib" {
            let mut files = vec![p.clone()];
            rs_files(&src.join(&name), &mut files)?;
            out.insert(name, files);
        } else if p.is_dir() && p.join("mod.rs").is_file() {
            let mut files = Vec::new();
            rs_files(&p, &mut files)?;
            out.insert(name, files);
        }
    }
    Ok(out)
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rs_files(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    Ok(())
}

/// `code` without `//` comments (doc comments included), `/* … */` blocks and the contents of
/// string literals (plain and raw; each becomes `""`).
pub fn strip_comments(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("/*") {
            rest = after.find("*/").map_or("", |i| &after[i + 2..]);
        } else if rest.starts_with("//") {
            rest = rest.find('\n').map_or("", |i| &rest[i..]);
        } else if rest.starts_with("'\"'") {
            rest = &rest[3..];
        } else if rest.starts_with("'\\\"'") {
            rest = &rest[4..];
        } else if let Some(end) = raw_string_end(rest) {
            out.push_str("\"\"");
            rest = &rest[end..];
        } else if rest.starts_with('"') {
            let end = string_end(rest);
            out.push_str("\"\"");
            rest = &rest[end..];
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// The length of the raw string literal (`r"…"`, `r#"…"#`, `br"…"`) at the start of `s`.
fn raw_string_end(s: &str) -> Option<usize> {
    let body = s.strip_prefix("br").or_else(|| s.strip_prefix('r'))?;
    let hashes = body.len() - body.trim_start_matches('#').len();
    let open = s.len() - body.len() + hashes;
    if !s[open..].starts_with('"') {
        return None;
    }
    let close = format!("\"{}", "#".repeat(hashes));
    let from = open + 1;
    Some(
        s[from..]
            .find(&close)
            .map_or(s.len(), |i| from + i + close.len()),
    )
}

/// The length of the string literal at the start of `s` (through its closing quote).
fn string_end(s: &str) -> usize {
    let b = s.as_bytes();
    let mut i = 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// `code` without its `#[cfg(test)] mod … { … }` blocks: what tests use is not a dependency
/// of the module (files named `tests.rs` or `*_tests.rs` are left out the same way).
pub fn without_test_modules(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(i) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..i]);
        let after = &rest[i + "#[cfg(test)]".len()..];
        let item = after.trim_start();
        let is_block = item
            .strip_prefix("mod ")
            .and_then(|m| m.find(['{', ';']).map(|j| m.as_bytes()[j] == b'{'))
            .unwrap_or(false);
        if is_block {
            let open = after.find('{').unwrap_or(after.len().saturating_sub(1));
            let body = &after[open + 1..];
            let close = matching_brace(body);
            rest = body.get(close + 1..).unwrap_or("");
        } else {
            out.push_str("#[cfg(test)]");
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// The first segment of every `crate::` path in `code`, `use crate::{a, b::c}` groups
/// included.
pub fn crate_paths(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().next_back();
        rest = &rest[i + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // e.g. `session_store::crate::` cannot occur; `mycrate::` is another name
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = matching_brace(group);
            for part in split_top_level(&group[..end]) {
                if let Some(name) = ident_at(part.trim_start()) {
                    out.insert(name);
                }
            }
        } else if let Some(name) = ident_at(rest) {
            out.insert(name);
        }
    }
    out
}

fn ident_at(s: &str) -> Option<String> {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    (end > 0).then(|| s[..end].to_owned())
}

/// The index of the `}` closing a group whose `{` came just before `s`.
fn matching_brace(s: &str) -> usize {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return i,
            '}' => depth -= 1,
            _ => {}
        }
    }
    s.len()
}

/// `s` split at the commas that are not inside a nested `{…}`.
fn split_top_level(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// Names the crate root re-exports from one of `modules` (`pub use m::{A, B as C, …}` and `pub
/// use m::A;`), mapped to that module.
fn reexports(lib: &str, modules: &BTreeMap<String, Vec<PathBuf>>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for stmt in lib.split(';') {
        let Some(rest) = stmt.trim().strip_prefix("pub use ") else {
            continue;
        };
        let Some(module) = ident_at(rest) else {
            continue;
        };
        if !modules.contains_key(&module) {
            continue;
        }
        let names = rest[module.len()..].trim_start_matches("::");
        let names = names.trim().trim_start_matches('{').trim_end_matches('}');
        for part in split_top_level(names) {
            let last = part.rsplit("::").next().unwrap_or(part);
            let shown = last.rsplit(" as ").next().unwrap_or(last);
            if let Some(n) = ident_at(shown.trim()) {
                out.insert(n, module.clone());
            }
        }
    }
    out
}

/// The strongly connected components of more than one module, each sorted, in name order.
pub fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    // Two modules are in one component when each reaches the other.
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_owned()];
        while let Some(m) = stack.pop() {
            for t in graph.get(&m).into_iter().flatten() {
                if seen.insert(t.clone()) {
                    stack.push(t.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|m| (m, reach(m))).collect();
    let mut placed = BTreeSet::new();
    let mut out = Vec::new();
    for m in graph.keys() {
        if placed.contains(m) {
            continue;
        }
        let component: Vec<String> = graph
            .keys()
            .filter(|o| o == &m || (reaches[m].contains(*o) && reaches[o].contains(m)))
            .cloned()
            .collect();
        placed.extend(component.iter().cloned());
        if component.len() > 1 {
            out.push(component);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn crate_paths_read_plain_paths_and_groups_but_not_comments() {
        let code = strip_comments(
            "use crate::a::X;\n/// see [`crate::doc`]\nuse crate::{b, c::{D, E}, d::F as G};\n\
             fn f() { crate::e::g(); /* crate::h */ let s = \"crate::str\"; }\n\
             const R: &str = r#\"crate::raw \" x\"#; let q = '\"'; crate::f::h();\n",
        );
        let got: Vec<String> = crate_paths(&code).into_iter().collect();
        assert_eq!(got, ["a", "b", "c", "d", "e", "f"]);
    }

    #[test]
    fn test_modules_are_not_dependencies() {
        let code = "use crate::a;\n#[cfg(test)]\nmod tests {\n    use crate::b;\n    fn f() { if x { crate::c::d(); } }\n}\n#[cfg(test)]\nmod more;\nfn g() { crate::e::f(); }\n";
        let got: Vec<String> = crate_paths(&without_test_modules(code))
            .into_iter()
            .collect();
        assert_eq!(got, ["a", "e"]);
    }

    #[test]
    fn cycles_are_the_components_of_more_than_one_module() {
        let mut g = Graph::new();
        for (a, to) in [
            ("cache", &["list"][..]),
            ("list", &["manager"]),
            ("manager", &["cache", "io"]),
            ("io", &[]),
            ("query", &["rows"]),
            ("rows", &["query"]),
            ("solo", &["solo"]),
        ] {
            g.insert(a.to_owned(), to.iter().map(|s| (*s).to_owned()).collect());
        }
        assert_eq!(
            cycles(&g),
            [
                vec!["cache".to_owned(), "list".to_owned(), "manager".to_owned()],
                vec!["query".to_owned(), "rows".to_owned()],
            ]
        );
    }

    #[test]
    fn root_reexports_count_as_their_module() {
        let mut modules = BTreeMap::new();
        for m in ["manager", "error"] {
            modules.insert(m.to_owned(), Vec::new());
        }
        let r = reexports(
            "pub use manager::{NewSessionOptions, SessionManager as Sm};\npub use error::AppendError;\npub use std::x::Y;",
            &modules,
        );
        assert_eq!(
            r.into_iter().collect::<Vec<_>>(),
            [
                ("AppendError".to_owned(), "error".to_owned()),
                ("NewSessionOptions".to_owned(), "manager".to_owned()),
                ("Sm".to_owned(), "manager".to_owned()),
            ]
        );
    }
}
