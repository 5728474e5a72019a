//! Helpers shared by the repair tests (`tests/it/repair.rs`, `tests/it/repair_incremental.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use session_format::json::{JsObject, JsValue, parse_value, to_json_string};
use session_store::{RepairOutcome, RepairSnapshot};

static REPAIR_CACHE_SERIAL: Mutex<()> = Mutex::new(());

/// Holds the one lock of every test in a binary that repairs through the process-wide file
/// store: its incremental cache keeps at most 8 files, so a repair running beside a test that
/// counts cached files would evict one of them.
pub fn serial() -> MutexGuard<'static, ()> {
    REPAIR_CACHE_SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `tests/fixtures/repair/<rel>`.
pub fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/repair")
        .join(rel)
}

/// Parses a golden JSON file.
pub fn golden(rel: &str) -> JsValue {
    parse_value(&std::fs::read(fixture(rel)).unwrap()).unwrap()
}

#[allow(unused_imports)] // Every test binary including this module uses a part of it.
pub use session_test_support::tempdir;

/// Plants `bytes` at `dir/session.jsonl` with `mode` (through `session_store::io`).
pub fn plant(dir: &Path, bytes: &[u8], mode: u32) -> PathBuf {
    let file = dir.join("session.jsonl");
    session_store::io::write_raw(&file, bytes).unwrap();
    set_mode(&file, mode);
    file
}

#[cfg(unix)]
pub fn set_mode(file: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(file, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[cfg(not(unix))]
pub fn set_mode(_file: &Path, _mode: u32) {}

#[cfg(unix)]
pub fn mode_of(file: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(file).unwrap().permissions().mode() & 0o7777
}

#[cfg(not(unix))]
pub fn mode_of(_file: &Path) -> u32 {
    0o600
}

/// The `.bak-` files beside `file`.
pub fn backups(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().contains(".bak-"))
        .collect();
    v.sort();
    v
}

/// Our outcome in the reference's result shape, normalised as `capture.mjs` normalises the
/// reference's: `validatedSnapshot` → `"<stat>"` when it equals the file's stat now (else
/// `"<other>"`), and `backupPath` left out (ours is kept, D16; tests check it separately).
pub fn normalised_result(outcome: &RepairOutcome, file: &Path) -> String {
    let mut v = outcome.to_reference_json();
    let o = v.as_object_mut().unwrap();
    if o.contains_key("validatedSnapshot") {
        let now = RepairSnapshot::of(file).ok();
        let tag = if outcome.validated_snapshot == now && now.is_some() {
            "<stat>"
        } else {
            "<other>"
        };
        o.insert("validatedSnapshot", JsValue::from(tag));
    }
    o.remove("backupPath");
    to_json_string(&v)
}

/// The warn/debug texts as the golden files list them.
pub fn messages_json(outcome: &RepairOutcome) -> String {
    let list = outcome
        .messages
        .iter()
        .map(|m| {
            let mut o = JsObject::new();
            let level = match m.level {
                session_store::RepairLevel::Warn => "warn",
                session_store::RepairLevel::Debug => "debug",
            };
            o.insert("level", JsValue::from(level));
            o.insert("text", JsValue::from(m.text.as_str()));
            JsValue::Object(o)
        })
        .collect();
    to_json_string(&JsValue::Array(list))
}

fn is_repair_uuid(id: &str) -> bool {
    let Some(u) = id.strip_prefix("repair-") else {
        return false;
    };
    let groups: Vec<&str> = u.split('-').collect();
    groups.iter().map(|g| g.len()).collect::<Vec<_>>() == [8, 4, 4, 4, 12]
        && u.chars()
            .all(|c| c == '-' || c.is_ascii_digit() || ('a'..='f').contains(&c))
        && groups[2].starts_with('4')
        && groups[3].starts_with(['8', '9', 'a', 'b'])
}

/// Replaces the fresh parts of each inserted tool result (as `capture.mjs` does): id →
/// `repair-<uuid>`, timestamp → `<iso>`, message.timestamp → 0, after checking their shapes.
pub fn normalise_output(bytes: &[u8]) -> Vec<u8> {
    let now = session_format::ids::now_ms() as f64;
    let lines: Vec<Vec<u8>> = bytes
        .split(|&b| b == b'\n')
        .map(|line| {
            if !line.windows(8).any(|w| w == b"\"repair-") {
                return line.to_vec();
            }
            let mut row = parse_value(line).unwrap();
            let o = row.as_object_mut().unwrap();
            let id = o.get("id").and_then(JsValue::as_str_lossy).unwrap();
            if !is_repair_uuid(&id) {
                return line.to_vec();
            }
            let ts = o.get("timestamp").and_then(JsValue::as_str_lossy).unwrap();
            assert!(session_format::time::parse_js_date(&ts).is_some() && ts.ends_with('Z'));
            let message = o.get_mut("message").unwrap().as_object_mut().unwrap();
            let mts = message.get("timestamp").and_then(JsValue::as_f64).unwrap();
            assert!((mts - now).abs() < 600_000.0, "message timestamp {mts}");
            message.insert("timestamp", JsValue::Number(0.0));
            o.insert("id", JsValue::from("repair-<uuid>"));
            o.insert("timestamp", JsValue::from("<iso>"));
            to_json_string(&row).into_bytes()
        })
        .collect();
    lines.join(&b'\n')
}

/// Every row re-serialised with `JSON.stringify` (what the reference writes for rows it did not
/// change); a CR before the LF goes with the row's JSON whitespace.
pub fn restringify(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in bytes.split(|&b| b == b'\n') {
        if line.is_empty() {
            continue;
        }
        out.extend_from_slice(to_json_string(&parse_value(line).unwrap()).as_bytes());
        out.push(b'\n');
    }
    out
}
