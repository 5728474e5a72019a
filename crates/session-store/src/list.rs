//! Listing sessions (openclaw-jsonl.md §2.1 `list`/`listAll`, pi-format.md §3.7) and finding the
//! most recent one (`findMostRecentSession`). Files that cannot be read or whose first parsed
//! line is not a `type:"session"` row are skipped, as are files on which the reference's
//! `buildSessionInfo` throws (a `null` line, a non-string `session_info.name`, a `null` or
//! missing message, content that is neither a string nor an array, a `null` content block).
//! Text blocks whose `text` is not a string are converted with JavaScript's `String()` (and
//! `Array.prototype.join` rules: `null`/missing → empty); dates follow `new Date(…)` (time clip:
//! beyond ±8.64e15 ms a date is invalid, which this crate reports as NaN), and file times are
//! node's `stats.mtime` (`Math.round(mtimeMs)`). All checked against OpenClaw 2026.6.11's
//! `SessionManager.list`.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use session_format::entry::EntryType;
use session_format::json::{JsValue, ValueKind};
use session_format::line::{LineContent, LineReader};

use crate::error::ListError;
use crate::io;
use crate::manager::js_trim;
use crate::query::{js_date_of, js_sort_by_key};

/// What `list` reports for one session file.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionInfo {
    /// The file.
    pub path: PathBuf,
    /// `header.id`: the string, or JavaScript `String(id)` for a number or boolean (the
    /// reference passes the raw value through); empty when absent, `null`, an array or an
    /// object.
    pub id: String,
    /// `header.cwd` when a string, else `""`.
    pub cwd: String,
    /// The last `session_info.name`, trimmed; `None` when empty or absent.
    pub name: Option<String>,
    /// `header.parentSession` when a string.
    pub parent_session_path: Option<String>,
    /// `Date.parse(header.timestamp)` in ms (`None` when invalid).
    pub created: Option<f64>,
    /// Milliseconds: the newest user/assistant message time (`message.timestamp` when a number,
    /// else the entry's timestamp), else the header timestamp, else the file mtime (rounded to
    /// the millisecond as node does). `NaN` when the reference's `Date` is invalid (a message
    /// timestamp beyond ±8.64e15 ms, e.g. `1e300`); such sessions sort as V8 sorts them.
    pub modified: f64,
    /// `modified` is the file's mtime: the file holds neither a message time nor a valid
    /// header timestamp (not a field of the reference; it lets callers that must judge a
    /// session by its content alone, such as retention, tell the fallback apart without
    /// comparing times).
    pub modified_from_mtime: bool,
    /// Every `message` row (all roles, all branches).
    pub message_count: usize,
    /// The first user text (text blocks joined by a space), or `"(no messages)"`.
    pub first_message: String,
    /// Every non-empty user and assistant text, joined by spaces.
    pub all_messages_text: String,
}

/// True when the first line (4 KiB chunks, 64 KiB cap, a leading BOM tolerated) parses as
/// `{type:"session", id:string}`.
pub fn is_valid_session_file(path: &Path) -> bool {
    let Ok(Some(line)) = io::read_first_line(path) else {
        return false;
    };
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&line);
    let mut scanner = session_format::json::EnvelopeScanner::new();
    scanner
        .scan(line)
        .is_ok_and(|env| session_format::row::is_readable_header(&env))
}

fn jsonl_files(dir: &Path) -> Result<Vec<PathBuf>, ListError> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(ListError::ReadDir {
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    let mut files: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".jsonl"))
        // `path.join(dir, f)`: normalised lexically, as node's `join` does.
        .map(|e| crate::paths::normalize(&e.path()))
        .collect();
    files.sort();
    Ok(files)
}

/// node's `stats.mtime.getTime()`: `Math.round(mtimeMs)`.
fn mtime_ms(path: &Path) -> Option<f64> {
    let m = std::fs::metadata(path).ok()?.modified().ok()?;
    let ms = match m.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => d.as_secs() as f64 * 1e3 + f64::from(d.subsec_nanos()) / 1e6,
        Err(e) => {
            let d = e.duration();
            -(d.as_secs() as f64 * 1e3 + f64::from(d.subsec_nanos()) / 1e6)
        }
    };
    Some((ms + 0.5).floor())
}

/// `new Date(t).getTime()` for a number: TimeClip (NaN beyond ±8.64e15, else truncated).
fn time_clip(t: f64) -> f64 {
    if !t.is_finite() || t.abs() > 8.64e15 {
        f64::NAN
    } else {
        t.trunc() + 0.0
    }
}

/// Appends JavaScript's `String(v)` as an element of `Array.prototype.join` (so `null` is
/// empty): strings as they are (lossy), numbers as JavaScript prints them, arrays joined with
/// `,` (recursively, without recursion), objects as `[object Object]`.
fn push_join_element(v: &JsValue, out: &mut String) {
    let mut stack: Vec<(std::slice::Iter<'_, JsValue>, bool)> = Vec::new();
    let mut next = Some(v);
    loop {
        if let Some(v) = next.take() {
            match v {
                JsValue::Null => {}
                JsValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
                JsValue::Number(n) => out.push_str(&session_format::json::number_to_string(*n)),
                JsValue::String(s) => out.push_str(&s.to_str_lossy()),
                JsValue::Object(_) => out.push_str("[object Object]"),
                JsValue::Array(items) => stack.push((items.iter(), true)),
            }
        }
        let Some((iter, first)) = stack.last_mut() else {
            return;
        };
        match iter.next() {
            Some(item) => {
                if !*first {
                    out.push(',');
                }
                *first = false;
                next = Some(item);
            }
            None => {
                stack.pop();
            }
        }
    }
}

/// The valid session file of `dir` with the newest mtime (`findMostRecentSession`).
pub fn find_most_recent_session(dir: &Path) -> Option<PathBuf> {
    let files = jsonl_files(dir).ok()?;
    files
        .into_iter()
        .filter(|p| is_valid_session_file(p))
        .filter_map(|p| mtime_ms(&p).map(|m| (p, m)))
        .fold(None, |best: Option<(PathBuf, f64)>, (p, m)| match &best {
            Some((_, bm)) if *bm >= m => best,
            _ => Some((p, m)),
        })
        .map(|(p, _)| p)
}

/// `extractTextContent`; `None` where it throws (content neither a string nor an array, or a
/// `null` block).
fn text_of(message: &JsValue) -> Option<String> {
    match message.get("content")? {
        JsValue::String(s) => Some(s.to_str_lossy().into_owned()),
        JsValue::Array(blocks) => {
            let mut out = String::new();
            let mut first = true;
            for b in blocks {
                if b.is_null() {
                    return None; // `block.type` of null throws.
                }
                if b.get("type")
                    .and_then(JsValue::as_js_string)
                    .is_some_and(|t| *t == "text")
                {
                    if !first {
                        out.push(' ');
                    }
                    first = false;
                    if let Some(text) = b.get("text") {
                        push_join_element(text, &mut out);
                    }
                }
            }
            Some(out)
        }
        _ => None,
    }
}

/// Builds the info of one file (`buildSessionInfo`), `None` when the reference would skip it.
pub fn session_info(path: &Path) -> Option<SessionInfo> {
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
                    Some(js_trim(&s.to_str_lossy())).filter(|n| !n.is_empty())
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
    Some(SessionInfo {
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
        first_message: if first_message.is_empty() {
            "(no messages)".to_owned()
        } else {
            first_message
        },
        all_messages_text: all.join(" "),
    })
}

/// `loadEntriesFromFile`: every parsed row of the file (header first), or nothing when the file
/// is missing, empty, or its first parsed line is not `{type:"session", id:string}`. Unparseable
/// lines are skipped.
///
/// # Errors
/// Read failures other than "not found".
pub fn load_entries(path: &Path) -> std::io::Result<Vec<JsValue>> {
    let buf = match io::read_file(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for line in LineReader::new(&buf) {
        if let LineContent::Json(_) = line.content
            && let Ok(v) = session_format::json::parse_value(line.json)
        {
            out.push(v);
        }
    }
    let readable = out.first().is_some_and(|h| {
        h.get("type")
            .and_then(JsValue::as_js_string)
            .is_some_and(|t| *t == "session")
            && h.get("id").and_then(JsValue::as_js_string).is_some()
    });
    Ok(if readable { out } else { Vec::new() })
}

/// Newest first, as `sort((a, b) => b.modified - a.modified)` does in V8 (stable; an invalid
/// date compares as "equal").
fn sort_by_modified(v: &mut Vec<SessionInfo>) {
    let mut order: Vec<usize> = (0..v.len()).collect();
    js_sort_by_key(&mut order, |&i| -v[i].modified);
    let mut slots: Vec<Option<SessionInfo>> = std::mem::take(v).into_iter().map(Some).collect();
    v.extend(order.into_iter().filter_map(|i| slots[i].take()));
}

/// The sessions of one directory (`*.jsonl` directly in it), newest `modified` first
/// (`SessionManager.list`; OpenClaw 2026.6.11 does not filter by cwd). A missing directory
/// gives an empty list.
///
/// # Errors
/// [`ListError::ReadDir`] when the directory exists but cannot be read.
pub fn list(dir: &Path) -> Result<Vec<SessionInfo>, ListError> {
    let mut out: Vec<SessionInfo> = jsonl_files(dir)?
        .iter()
        .filter_map(|p| session_info(p))
        .collect();
    sort_by_modified(&mut out);
    Ok(out)
}

/// The sessions of every immediate subdirectory of `sessions_root` (default root:
/// [`crate::paths::sessions_dir`]), newest first (`SessionManager.listAll`). Loose files in the
/// root and symlinked directories are ignored.
///
/// # Errors
/// [`ListError::ReadDir`] when the root exists but cannot be read.
pub fn list_all(sessions_root: &Path) -> Result<Vec<SessionInfo>, ListError> {
    let rd = match std::fs::read_dir(sessions_root) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(ListError::ReadDir {
                path: sessions_root.to_path_buf(),
                source,
            });
        }
    };
    let mut dirs: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    let mut out = Vec::new();
    for d in dirs {
        for p in jsonl_files(&d).unwrap_or_default() {
            if let Some(info) = session_info(&p) {
                out.push(info);
            }
        }
    }
    sort_by_modified(&mut out);
    Ok(out)
}
