//! `cargo xtask modules CRATE`: the graph of `crate::` references between the top-level modules
//! of one workspace crate, and the cycles in it (exit 1 when there is one).
//!
//! The crate root is `src/lib.rs`, else `src/main.rs` (a binary crate). A module is one the root
//! declares with `mod name;` (any visibility or attribute except `#[cfg(test)]`), read from
//! `src/<name>.rs` (with the files under `src/<name>/`) or `src/<name>/mod.rs`; its
//! sub-modules are folded into it. An edge `a -> b` is any `crate::b…` path in code of `a`
//! (comments and doc comments are left out), and `crate::Name` for a name the crate root
//! re-exports (`pub use b::{Name, …}`) counts as `crate::b`. `crate::Name` for an item the root
//! defines itself (`fn`, `struct`, `enum`, …) is an edge to the node `crate`, which is shown only
//! when some module has such an edge; its own edges are the modules the root names (`b::…` or
//! `crate::b…`). Cycles are the strongly connected components of more than one module.

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

/// The node standing for the crate root, when a module names an item defined there.
pub const ROOT: &str = "crate";

/// Prints the graph and its cycles; `Ok(false)` when there is a cycle.
pub fn run(args: &ModulesArgs) -> Result<bool> {
    let root = crate::bench::repo_root();
    // Every crate lives in `crates/<name>` except xtask itself, at the workspace root.
    let dir = if args.krate == "xtask" {
        root.join("xtask")
    } else {
        root.join("crates").join(&args.krate)
    };
    let src = dir.join("src");
    let (text, ok) = report(&src, &args.krate)?;
    print!("{text}");
    Ok(ok)
}

/// The printed report for the crate whose sources are in `src`: one `m -> a, b` line per
/// module, then `no cycle among the N modules of NAME` or one `cycle: a <-> b` line per
/// cycle; `true` when there is no cycle.
///
/// # Errors
/// No `lib.rs` or `main.rs` in `src`; a declared module without its file; a file that cannot
/// be read.
pub fn report(src: &Path, name: &str) -> Result<(String, bool)> {
    let graph = graph_of(src)?;
    let mut out = String::new();
    for (m, to) in &graph {
        let to: Vec<&str> = to.iter().map(String::as_str).collect();
        let to = if to.is_empty() {
            "(none)".to_owned()
        } else {
            to.join(", ")
        };
        out.push_str(&format!("{m} -> {to}\n"));
    }
    let cycles = cycles(&graph);
    if cycles.is_empty() {
        out.push_str(&format!(
            "no cycle among the {} modules of {name}\n",
            graph.len()
        ));
        return Ok((out, true));
    }
    for c in &cycles {
        let c: Vec<&str> = c.iter().map(String::as_str).collect();
        out.push_str(&format!("cycle: {}\n", c.join(" <-> ")));
    }
    Ok((out, false))
}

/// The crate root in `src`: `lib.rs`, else `main.rs`.
///
/// # Errors
/// Neither exists.
pub fn root_file(src: &Path) -> Result<PathBuf> {
    for name in ["lib.rs", "main.rs"] {
        let p = src.join(name);
        if p.is_file() {
            return Ok(p);
        }
    }
    bail!("{} has no lib.rs or main.rs", src.display())
}

/// The graph of the crate whose sources are in `src`.
///
/// # Errors
/// As [`report`].
pub fn graph_of(src: &Path) -> Result<Graph> {
    let root = without_test_modules(&strip_comments(&read(&root_file(src)?)?));
    let modules = top_level_modules(src, &root)?;
    let reexports = reexports(&root, &modules);
    let root_items = root_items(&root);
    let mut graph = Graph::new();
    let mut names_root = false;
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
                let module = reexports
                    .get(&target)
                    .cloned()
                    .or_else(|| modules.contains_key(&target).then(|| target.clone()));
                match module {
                    Some(m) if &m == name => {}
                    Some(m) => {
                        to.insert(m);
                    }
                    None if root_items.contains(&target) => {
                        to.insert(ROOT.to_owned());
                        names_root = true;
                    }
                    None => {}
                }
            }
        }
        graph.insert(name.clone(), to);
    }
    if names_root {
        let mut to: BTreeSet<String> = crate_paths(&root)
            .into_iter()
            .chain(bare_paths(&root))
            .filter(|m| modules.contains_key(m))
            .collect();
        to.extend(reexports.values().cloned());
        graph.insert(ROOT.to_owned(), to);
    }
    Ok(graph)
}

fn read(p: &Path) -> Result<String> {
    std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))
}

/// Each module the crate root declares (`root`: its code without comments) with every `.rs`
/// file it is made of.
fn top_level_modules(src: &Path, root: &str) -> Result<BTreeMap<String, Vec<PathBuf>>> {
    let mut out = BTreeMap::new();
    for name in declared_modules(root) {
        let file = src.join(format!("{name}.rs"));
        let dir = src.join(&name);
        let mut files = Vec::new();
        if file.is_file() {
            files.push(file);
            rs_files(&dir, &mut files)?;
        } else if dir.join("mod.rs").is_file() {
            rs_files(&dir, &mut files)?;
        } else {
            bail!(
                "the crate root declares `mod {name};` but neither {} nor {} exists",
                file.display(),
                dir.join("mod.rs").display()
            );
        }
        out.insert(name, files);
    }
    Ok(out)
}

/// The names of the file modules `code` declares (`mod name;`, `pub(crate) mod name;`, …),
/// except those under `#[cfg(test)]`; inline `mod name { … }` blocks are part of the root.
pub fn declared_modules(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = code[from..].find("mod ") {
        let at = from + i;
        from = at + "mod ".len();
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = code[from..].trim_start();
        let Some(name) = ident_at(rest) else {
            continue;
        };
        if !rest[name.len()..].trim_start().starts_with(';') {
            continue;
        }
        let item_start = code[..at].rfind([';', '}', '{']).map_or(0, |j| j + 1);
        if code[item_start..at].contains("#[cfg(test)]") {
            continue;
        }
        out.push(name);
    }
    out
}

/// The names of the items `root` defines at its top level (`fn`, `struct`, `enum`, `trait`,
/// `type`, `const`, `static`, `union`, `macro_rules!`), nested items included.
fn root_items(root: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for kw in [
        "fn ", "struct ", "enum ", "trait ", "type ", "const ", "static ", "union ",
    ] {
        let mut from = 0;
        while let Some(i) = root[from..].find(kw) {
            let at = from + i;
            from = at + kw.len();
            let before = root[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            if let Some(name) = ident_at(root[from..].trim_start()) {
                out.insert(name);
            }
        }
    }
    let mut rest = root;
    while let Some(i) = rest.find("macro_rules!") {
        rest = &rest[i + "macro_rules!".len()..];
        if let Some(name) = ident_at(rest.trim_start()) {
            out.insert(name);
        }
    }
    out
}

/// The first segment of every path `name::…` in `code` that does not start with `::`,
/// `crate::`, `self::` or `super::` (in the crate root these name its modules).
fn bare_paths(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut from = 0;
    while let Some(i) = code[from..].find("::") {
        let at = from + i;
        from = at + 2;
        let start = code[..at]
            .char_indices()
            .rev()
            .find(|(_, c)| !(c.is_alphanumeric() || *c == '_'))
            .map_or(0, |(j, c)| j + c.len_utf8());
        if start == at || code[..start].ends_with("::") {
            continue;
        }
        let name = &code[start..at];
        if !matches!(name, "crate" | "self" | "super" | "Self") {
            out.insert(name.to_owned());
        }
    }
    out
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

    /// A crate directory under a temporary directory: `files` are `(path under src, text)`.
    fn krate(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join("src").join(path);
            session_store::io::ensure_dir(p.parent().unwrap()).unwrap();
            session_store::io::create_new(&p, text.as_bytes(), None).unwrap();
        }
        dir
    }

    #[test]
    fn a_binary_crate_reports_a_cycle_between_the_modules_main_declares() {
        let dir = krate(&[
            ("main.rs", "mod a;\nmod b;\nfn main() { a::f(); }\n"),
            ("a.rs", "pub fn f() { crate::b::g(); }\n"),
            ("b.rs", "use crate::a;\npub fn g() {}\n"),
        ]);
        let (text, ok) = report(&dir.path().join("src"), "demo").unwrap();
        assert_eq!(text, "a -> b\nb -> a\ncycle: a <-> b\n");
        assert!(!ok);
    }

    #[test]
    fn a_binary_crate_without_a_cycle_is_ok() {
        let dir = krate(&[
            (
                "main.rs",
                "mod a;\npub(crate) mod b;\n#[cfg(test)]\nmod tests;\nfn main() { a::f(); }\n",
            ),
            ("a.rs", "pub fn f() { crate::b::g(); }\n"),
            (
                "b.rs",
                "pub fn g() {}\n#[cfg(test)]\nmod tests { use crate::a; }\n",
            ),
            ("tests.rs", "use crate::a;\n"),
            ("orphan.rs", "use crate::a;\n"),
        ]);
        let (text, ok) = report(&dir.path().join("src"), "demo").unwrap();
        assert_eq!(
            text,
            "a -> b\nb -> (none)\nno cycle among the 2 modules of demo\n"
        );
        assert!(ok);
    }

    #[test]
    fn an_item_of_the_binary_root_named_by_a_module_is_a_cycle_through_the_root() {
        let dir = krate(&[
            (
                "main.rs",
                "mod stats;\nmod text;\nuse crate::text::safe;\n\
                 pub(crate) enum Outcome { Ok }\nfn main() { stats::run(); }\n",
            ),
            (
                "stats.rs",
                "pub fn run() -> crate::Outcome { crate::text::safe() }\n",
            ),
            ("text.rs", "pub fn safe() {}\n"),
        ]);
        let (text, ok) = report(&dir.path().join("src"), "demo").unwrap();
        assert_eq!(
            text,
            "crate -> stats, text\nstats -> crate, text\ntext -> (none)\n\
             cycle: crate <-> stats\n"
        );
        assert!(!ok);
    }

    #[test]
    fn lib_rs_is_the_root_when_both_exist_and_directory_modules_are_folded() {
        let dir = krate(&[
            ("lib.rs", "pub mod store;\nmod io;\npub use store::Store;\n"),
            ("main.rs", "mod cli;\n"),
            ("cli.rs", "use crate::store;\n"),
            ("store/mod.rs", "mod open;\n"),
            ("store/open.rs", "fn f() { crate::io::write(); }\n"),
            ("io.rs", "fn write() {}\nfn g(_: crate::Store) {}\n"),
        ]);
        let (text, ok) = report(&dir.path().join("src"), "lib").unwrap();
        assert_eq!(text, "io -> store\nstore -> io\ncycle: io <-> store\n");
        assert!(!ok);
    }

    #[test]
    fn a_crate_without_a_root_or_with_a_missing_module_file_is_an_error() {
        let dir = krate(&[("a.rs", "")]);
        let src = dir.path().join("src");
        assert_eq!(
            report(&src, "x").unwrap_err().to_string(),
            format!("{} has no lib.rs or main.rs", src.display())
        );
        let dir = krate(&[("main.rs", "mod gone;\nfn main() {}\n")]);
        let src = dir.path().join("src");
        assert_eq!(
            report(&src, "x").unwrap_err().to_string(),
            format!(
                "the crate root declares `mod gone;` but neither {} nor {} exists",
                src.join("gone.rs").display(),
                src.join("gone").join("mod.rs").display()
            )
        );
    }
}
