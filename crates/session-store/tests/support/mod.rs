//! Shared helpers for the session-store tests.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use session_format::json::{JsValue, parse_value};

#[allow(unused_imports)] // Every test binary including this module uses a part of it.
pub use session_test_support::{dir_names, shared_dir, tempdir, workspace_root};

/// A fixture of this crate's `tests/fixtures/`.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Parses JSON text (JavaScript key order).
pub fn js(text: &str) -> JsValue {
    parse_value(text.as_bytes()).unwrap()
}

/// Plants a file (tests that must write raw files go through `session_store::io`).
pub fn write(path: &Path, text: &str) {
    session_store::io::write_raw(path, text.as_bytes()).unwrap();
}

/// Reads a file as text.
pub fn read(path: &Path) -> String {
    String::from_utf8(std::fs::read(path).unwrap()).unwrap()
}

/// The lines of a file.
pub fn lines(path: &Path) -> Vec<String> {
    read(path).lines().map(str::to_owned).collect()
}

/// A user message payload.
pub fn user(text: &str, ts: i64) -> JsValue {
    js(&format!(
        r#"{{"role":"user","content":[{{"type":"text","text":{}}}],"timestamp":{ts}}}"#,
        session_format::json::to_json_string(&JsValue::from(text))
    ))
}

/// An assistant message payload (provider `anthropic`, model `m`).
pub fn assistant(text: &str, ts: i64) -> JsValue {
    js(&format!(
        r#"{{"role":"assistant","content":[{{"type":"text","text":{}}}],"api":"anthropic-messages","provider":"anthropic","model":"m","stopReason":"stop","timestamp":{ts}}}"#,
        session_format::json::to_json_string(&JsValue::from(text))
    ))
}

/// The standard header line used by fixtures.
pub const HEADER: &str = r#"{"type":"session","version":3,"id":"0195f000-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/dev/project"}"#;

/// A message row line.
pub fn msg_line(id: &str, parent: Option<&str>, role: &str, text: &str, sec: u32) -> String {
    let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
    let body = if role == "assistant" {
        format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}],"provider":"anthropic","model":"m","stopReason":"stop","timestamp":1767225600001}}"#
        )
    } else {
        format!(
            r#"{{"role":"{role}","content":[{{"type":"text","text":"{text}"}}],"timestamp":1767225600000}}"#
        )
    };
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:{sec:02}.000Z","message":{body}}}"#
    )
}

/// Ids of entries.
pub fn ids<'a>(v: impl IntoIterator<Item = session_store::EntryRef<'a>>) -> Vec<String> {
    v.into_iter().map(|e| e.id().to_owned()).collect()
}

/// The text of each context message (`content` text blocks joined, or the string content, or
/// the summary).
pub fn context_texts(sm: &session_store::SessionManager) -> Vec<String> {
    let ctx = sm.build_session_context().unwrap();
    ctx.messages
        .iter()
        .map(|m| {
            let v = m.to_value().unwrap();
            if let Some(s) = v.get("summary").and_then(JsValue::as_str_lossy) {
                return s.into_owned();
            }
            match v.get("content") {
                Some(JsValue::String(s)) => s.to_str_lossy().into_owned(),
                Some(JsValue::Array(blocks)) => blocks
                    .iter()
                    .filter_map(|b| b.get("text").and_then(JsValue::as_str_lossy))
                    .map(|s| s.into_owned())
                    .collect::<Vec<_>>()
                    .join(""),
                _ => String::new(),
            }
        })
        .collect()
}

/// Tree as `(id, depth)` pairs in pre-order.
pub fn tree_shape(sm: &session_store::SessionManager) -> Vec<(String, usize)> {
    let tree = sm.get_tree();
    let mut out = Vec::new();
    let mut stack: Vec<(usize, usize)> = tree.roots.iter().rev().map(|&r| (r, 0)).collect();
    while let Some((k, d)) = stack.pop() {
        out.push((tree.nodes[k].entry.id().to_owned(), d));
        for &c in tree.nodes[k].children.iter().rev() {
            stack.push((c, d + 1));
        }
    }
    out
}

/// The first output line where `a` and `b` differ, for a readable failure.
pub fn first_difference(a: &str, b: &str) -> String {
    let line = a
        .lines()
        .zip(b.lines())
        .position(|(x, y)| x != y)
        .unwrap_or_else(|| a.lines().count().min(b.lines().count()))
        + 1;
    format!(
        "output line {line}:\n  left:  {}\n  right: {}",
        a.lines().nth(line - 1).unwrap_or("<end>"),
        b.lines().nth(line - 1).unwrap_or("<end>")
    )
}

/// The `*.json` op-scripts of `dir` except the `x*` ones (listed deviations), sorted.
pub fn conformance_scripts(dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('x'))
        .collect();
    paths.sort();
    paths
}

/// Runs every script of [`conformance_scripts`]`(scripts)` on the file store and on the storage
/// `storage_for(name)` gives (called `label` in messages); returns the names whose three texts
/// (that storage, files, golden in `expected`) are equal, and a failure message for every other
/// one. Each run on the other storage uses a real, empty directory's path as D (so `<dir>`
/// normalises the same way) and must leave it empty.
pub fn check_suite_on(
    scripts: &Path,
    expected: &Path,
    label: &str,
    mut storage_for: impl FnMut(&str) -> std::sync::Arc<dyn session_store::Storage>,
) -> (Vec<String>, Vec<String>) {
    use session_store::test_util::replay::run_script_normalized;
    let (mut same, mut failures) = (Vec::new(), Vec::new());
    for script in conformance_scripts(scripts) {
        let name = script.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read(&script).unwrap();
        let Ok(golden) = std::fs::read_to_string(expected.join(&name)) else {
            failures.push(format!("{name}: no golden in {}", expected.display()));
            continue;
        };
        let file_dir = tempdir();
        let on_files =
            run_script_normalized(session_store::FileStorage::shared(), &text, file_dir.path())
                .unwrap_or_else(|e| panic!("{name} on files: {e}"));
        let other_dir = tempdir();
        let on_other = run_script_normalized(storage_for(&name), &text, other_dir.path())
            .unwrap_or_else(|e| panic!("{name} on {label}: {e}"));
        let left_on_disk = std::fs::read_dir(other_dir.path()).unwrap().count();
        if left_on_disk != 0 {
            failures.push(format!(
                "{name}: the {label} run wrote {left_on_disk} entries to disk"
            ));
        }
        if on_other != on_files {
            failures.push(format!(
                "{name}: {label} (left) differs from files (right) at {}",
                first_difference(&on_other, &on_files)
            ));
        } else if on_other != golden {
            failures.push(format!(
                "{name}: {label} (left) differs from the golden (right) at {}",
                first_difference(&on_other, &golden)
            ));
        } else {
            same.push(name);
        }
    }
    (same, failures)
}

/// Writes `body` to `dir/name` and returns that path.
pub fn file_with(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    write(&path, body);
    path
}
