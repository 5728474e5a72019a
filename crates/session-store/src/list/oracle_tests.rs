//! The full-parse `buildSessionInfo` that `list` used before its targeted scan, kept verbatim as
//! the oracle the tests compare the scan with (every `message` row parsed into a `JsValue`).

use std::path::Path;

use session_format::entry::EntryType;
use session_format::js;
use session_format::json::{JsValue, ValueKind};
use session_format::line::{LineContent, LineReader};
use session_format::time::date_of as js_date_of;

use super::{SessionInfo, mtime_ms, push_join_element, text_of, time_clip};
use crate::io;

/// `session_info` as it was before the targeted scan (every row parsed in full), with the
/// `allMessagesText` it built; the count of messages with each id once is the store's (a
/// read-only open's entries, each id once, that are messages).
pub(super) fn session_info_full_parse(path: &Path) -> Option<(SessionInfo, String)> {
    let buf = io::read_file(path).ok()?;
    let mut rows: Vec<&[u8]> = Vec::new();
    for line in LineReader::new(&buf) {
        if let LineContent::Json(_) = line.content {
            rows.push(line.json);
        }
    }
    let header = session_format::json::parse_value(rows.first()?).ok()?;
    if header.get("type").and_then(JsValue::as_js_string)? != "session" {
        return None;
    }
    let mut scanner = session_format::json::EnvelopeScanner::new();
    let mut name: Option<String> = None;
    let mut message_count = 0;
    let mut first_message = String::new();
    let mut all = Vec::new();
    let mut last_activity: Option<f64> = None;
    for json in &rows {
        let env = scanner.scan(json).ok()?;
        match env.kind {
            ValueKind::Null => return None, // `entry.type` of null throws.
            ValueKind::Object => {}
            _ => continue,
        }
        let ty = env.r#type.as_str().and_then(EntryType::parse);
        if ty == Some(EntryType::SessionInfo) {
            let v = session_format::json::parse_value(json).ok()?;
            name = match v.get("name") {
                None | Some(JsValue::Null) => None,
                Some(JsValue::String(s)) => {
                    Some(js::trim(&s.to_str_lossy()).to_owned()).filter(|n| !n.is_empty())
                }
                Some(_) => return None,
            };
        }
        if ty != Some(EntryType::Message) {
            continue;
        }
        message_count += 1;
        let v = session_format::json::parse_value(json).ok()?;
        let message = match v.get("message") {
            None | Some(JsValue::Null) => return None,
            Some(m) => m,
        };
        let Some(role) = message.get("role").and_then(JsValue::as_str_lossy) else {
            continue;
        };
        if message
            .as_object()
            .is_none_or(|o| !o.contains_key("content"))
        {
            continue;
        }
        if role != "user" && role != "assistant" {
            continue;
        }
        match message.get("timestamp") {
            Some(JsValue::Number(n)) => last_activity = Some(last_activity.unwrap_or(0.0).max(*n)),
            _ => {
                let t = js_date_of(v.get("timestamp").filter(|t| t.as_js_string().is_some()));
                if !t.is_nan() {
                    last_activity = Some(last_activity.unwrap_or(0.0).max(t));
                }
            }
        }
        let text = text_of(message)?;
        if text.is_empty() {
            continue;
        }
        if first_message.is_empty() && role == "user" {
            first_message = text.clone();
        }
        all.push(text);
    }
    let header_time = js_date_of(
        header
            .get("timestamp")
            .filter(|t| t.as_js_string().is_some()),
    );
    let (modified, modified_from_mtime) = match last_activity {
        Some(t) if t > 0.0 => (time_clip(t), false),
        _ if !header_time.is_nan() => (header_time, false),
        _ => (mtime_ms(path).unwrap_or(f64::NAN), true),
    };
    let created = js_date_of(header.get("timestamp"));
    let id = match header.get("id") {
        Some(JsValue::String(s)) => s.to_str_lossy().into_owned(),
        Some(v @ (JsValue::Number(_) | JsValue::Bool(_))) => {
            let mut out = String::new();
            push_join_element(v, &mut out);
            out
        }
        _ => String::new(),
    };
    let unique_message_count = crate::SessionManager::open_read_only(path, None)
        .ok()?
        .session
        .get_unique_entries()
        .filter(|e| e.entry_type() == EntryType::Message)
        .count();
    let info = SessionInfo {
        path: path.to_path_buf(),
        id,
        cwd: header
            .get("cwd")
            .and_then(|v| v.as_str_lossy().map(|s| s.into_owned()))
            .unwrap_or_default(),
        name,
        parent_session_path: header
            .get("parentSession")
            .and_then(|v| v.as_str_lossy().map(|s| s.into_owned())),
        created: (!created.is_nan()).then_some(created),
        modified,
        modified_from_mtime,
        message_count,
        unique_message_count,
        first_message: if first_message.is_empty() {
            "(no messages)".to_owned()
        } else {
            first_message
        },
        aliases: Vec::new(),
        outside_target: None,
    };
    Some((info, all.join(" ")))
}
