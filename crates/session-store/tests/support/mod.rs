//! Shared helpers for the session-store tests.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use session_format::json::{JsValue, parse_value};

/// The shared folder (`$SESSION_SHARED_DIR`, else `<workspace>/../shared`), or `None` with a
/// printed reason so the calling test can skip on a fresh clone without it.
pub fn shared_dir(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("SESSION_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    if dir.join("conformance").is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "skipping {test}: shared folder not found at {} (set SESSION_SHARED_DIR)",
            dir.display()
        );
        None
    }
}

/// The workspace root.
pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

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

/// A fresh temporary directory.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
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
