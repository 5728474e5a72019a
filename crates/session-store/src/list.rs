//! Listing sessions and finding the most recent one (the rules: [`SessionInfo`]).
//!
//! How: each file is read into a reused buffer and framed by [`LineReader`] (whose envelope
//! scan validates every line); `message` rows are then read by the targeted scan of the
//! private `extract` module (only `content` texts, `message.timestamp` and the row's
//! `timestamp`), headers and `session_info` rows likewise; rare shapes (`message` not an
//! object, nesting that may be too deep for `parse_value`) take the full parse. Files are
//! spread over up to `MAX_THREADS` threads; the result is ordered as the file list before the
//! sort. The tests compare every field with the full-parse version this replaced
//! (`list/oracle_tests.rs`).

mod extract;
#[cfg(test)]
mod oracle_tests;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::SystemTime;

use session_format::entry::EntryType;
use session_format::js;
use session_format::json::{Envelope, Field, JsStr, JsValue, ValueKind};
use session_format::line::{LineContent, LineReader};
use session_format::row::RowClass;

use crate::error::{ListError, MessagesTextError};
use crate::io;
use crate::storage::{Storage, jsonl_entries, jsonl_files, sorted_sub_dirs};

/// What `list` reports for one session file.
///
/// The listing (openclaw-jsonl.md §2.1 `list`/`listAll`, pi-format.md §3.7) and the search for
/// the most recent session (`findMostRecentSession`) skip files that cannot be read or whose
/// first parsed line is not a `type:"session"` row, and files on which the reference's
/// `buildSessionInfo` throws (a `null` line, a non-string `session_info.name`, a `null` or
/// missing message, content that is neither a string nor an array, a `null` content block).
/// Text blocks whose `text` is not a string are converted with JavaScript's `String()` (and
/// `Array.prototype.join` rules: `null`/missing → empty); dates follow `new Date(…)` (time clip:
/// beyond ±8.64e15 ms a date is invalid, which this crate reports as NaN), and file times are
/// node's `stats.mtime` (`Math.round(mtimeMs)`). All checked against OpenClaw 2026.6.11's
/// `SessionManager.list`.
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
    /// Every `message` row (all roles, all branches): the reference's `messageCount`, which
    /// counts a row that repeats an id again.
    pub message_count: usize,
    /// The messages, each entry id once (not a field of the reference): of the entry rows
    /// that share an id only the last one counts, and it counts when it is a `message` row,
    /// as every lookup, the tree and the context see the session (docs/DEVIATIONS.md D3). In
    /// a file below version 2, whose migration gives every row a new id, every `message` row
    /// counts. Equal to `message_count` when no id repeats.
    pub unique_message_count: usize,
    /// The first user text (text blocks joined by a space), or `"(no messages)"`.
    pub first_message: String,
    /// The other names of this file in the listing: symlinks in the listed directory (or,
    /// for [`list_all`], in any listed directory) that lead to it, sorted. A file reached
    /// through several names is listed once, under its own name when that is listed (else
    /// under its first link), with the rest here ([`crate::identity::alias_groups`]; not a
    /// field of the reference, which lists every name). Empty for a file with one name.
    pub aliases: Vec<PathBuf>,
    /// The file this row's `path` leads to, when `path` is a symlink whose target lies
    /// outside the listed directory (for [`list_all`]: outside the sessions root): such a
    /// session is read through the link, and writes through it are refused
    /// ([`crate::identity::OutsideStore`]). `None` otherwise.
    pub outside_target: Option<PathBuf>,
}

impl SessionInfo {
    /// The reference's `allMessagesText`: every non-empty user and assistant text of the
    /// session, joined by spaces. It is not kept in the info (a listing would otherwise hold
    /// the text of every session at once): the file is read again when asked, so the text is
    /// the file's as it is now (a session appended to since the listing has the new texts).
    ///
    /// # Errors
    /// [`MessagesTextError::Read`] when the file cannot be read; [`MessagesTextError::NotListable`] when
    /// it is no longer a session the listing would report.
    pub fn all_messages_text(&self) -> Result<String, MessagesTextError> {
        let mut buf = Vec::new();
        let read = read_into(&self.path, &mut buf).map(|()| buf);
        self.messages_text_of(read)
    }

    /// The `allMessagesText` of the bytes read again for this session (also
    /// [`crate::Sessions::all_messages_text`]).
    pub(crate) fn messages_text_of(
        &self,
        read: std::io::Result<Vec<u8>>,
    ) -> Result<String, MessagesTextError> {
        let buf = read.map_err(|source| MessagesTextError::Read {
            path: self.path.clone(),
            source,
        })?;
        scan(
            &self.path,
            &buf,
            &mut extract::Scratch::default(),
            || None,
            true,
        )
        .map(|(_, text)| text)
        .ok_or_else(|| MessagesTextError::NotListable {
            path: self.path.clone(),
        })
    }
}

/// True when the first line (4 KiB chunks, 64 KiB cap, a leading BOM tolerated) parses as
/// `{type:"session", id:string}`.
pub fn is_valid_session_file(path: &Path) -> bool {
    let Ok(Some(line)) = io::read_first_line(path) else {
        return false;
    };
    is_header_line(&line)
}

/// True when a first line (as [`io::read_first_line`] gives it; a leading BOM tolerated)
/// parses as `{type:"session", id:string}`.
pub(crate) fn is_header_line(line: &[u8]) -> bool {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let mut scanner = session_format::json::EnvelopeScanner::new();
    scanner
        .scan(line)
        .is_ok_and(|env| session_format::row::is_readable_header(&env))
}

/// The rows of `infos` (read from `files`, whose entries `links` says are symlinks) with the
/// names of one file merged into one row ([`SessionInfo::aliases`]) and the rows reached
/// through a link out of `root` flagged ([`SessionInfo::outside_target`]). Nothing changes
/// (and nothing is resolved) when no listed name is a symlink.
fn merge_aliases(
    infos: Vec<SessionInfo>,
    files: &[PathBuf],
    links: &[bool],
    root: &Path,
) -> Vec<SessionInfo> {
    if !links.contains(&true) {
        return infos;
    }
    let link_of: std::collections::HashMap<&Path, bool> = files
        .iter()
        .map(PathBuf::as_path)
        .zip(links.iter().copied())
        .collect();
    let paths: Vec<&Path> = infos.iter().map(|i| i.path.as_path()).collect();
    let groups = crate::identity::alias_groups_with(&paths, root, |i| {
        link_of.get(paths[i]).copied().unwrap_or(false)
    });
    let mut slots: Vec<Option<SessionInfo>> = infos.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(groups.len());
    for g in groups {
        let Some(mut info) = slots[g.primary].take() else {
            continue;
        };
        info.aliases = g
            .aliases
            .iter()
            .filter_map(|&i| slots[i].take().map(|a| a.path))
            .collect();
        info.aliases.sort();
        info.outside_target = g.outside_target;
        out.push(info);
    }
    out
}

/// node's `stats.mtime.getTime()`: `Math.round(mtimeMs)`.
fn mtime_ms(path: &Path) -> Option<f64> {
    mtime_ms_of(&std::fs::metadata(path).ok()?)
}

/// [`mtime_ms`] of metadata already read (`stat` of the path, or `fstat` of an open handle).
fn mtime_ms_of(meta: &std::fs::Metadata) -> Option<f64> {
    let m = meta.modified().ok()?;
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
    Worker::default().info(path)
}

/// What one thread of `list` reuses from file to file: the read buffer and the scan's scratch.
#[derive(Debug, Default)]
struct Worker {
    buf: Vec<u8>,
    scratch: extract::Scratch,
}

impl Worker {
    /// [`session_info`] with this worker's buffers.
    fn info(&mut self, path: &Path) -> Option<SessionInfo> {
        read_into(path, &mut self.buf).ok()?;
        info_of(path, &self.buf, &mut self.scratch)
    }
}

/// Reads [`SessionInfo`]s file after file with one reused read buffer and scan scratch, and
/// returns each file's metadata with it from the same handle: one `open`, one `fstat` and the
/// reads per file ([`InfoReader::read`] adds a `stat` of the path before the open). This is
/// what [`session_info`] does for one file, plus the `stat` a caller listing sizes and times
/// would make, without a second path lookup. A session whose `modified` falls back to the
/// file's mtime takes it from the same `fstat`.
#[derive(Debug, Default)]
pub struct InfoReader {
    worker: Worker,
}

impl InfoReader {
    /// A reader with empty buffers (they grow to the largest file read).
    pub fn new() -> Self {
        Self::default()
    }

    /// The metadata (symlinks followed) and [`session_info`] of `path`: `None` as the info
    /// where the listing skips the file. The type is checked with a `stat` of the path before
    /// it is opened (as [`io::open_regular`] does), so a FIFO or device is never opened.
    ///
    /// # Errors
    /// [`std::io::ErrorKind::InvalidInput`] for a file that is not regular; any failure to
    /// stat, open or read it.
    pub fn read(
        &mut self,
        path: &Path,
    ) -> std::io::Result<(std::fs::Metadata, Option<SessionInfo>)> {
        let f = io::open_regular(path)?;
        self.read_open(path, &f)
    }

    fn read_open(
        &mut self,
        path: &Path,
        f: &std::fs::File,
    ) -> std::io::Result<(std::fs::Metadata, Option<SessionInfo>)> {
        let meta = f.metadata()?;
        if !meta.is_file() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        let w = &mut self.worker;
        read_open_into(f, &mut w.buf)?;
        let info =
            scan(path, &w.buf, &mut w.scratch, || mtime_ms_of(&meta), false).map(|(info, _)| info);
        Ok((meta, info))
    }
}

/// Reads a whole regular file into `buf` (as [`io::read_file`] does, reusing the buffer):
/// `read(2)` straight into the spare capacity (kept at 64 KiB or more, so a small file takes
/// one read and the end-of-file read), without the size probe (`fstat`, `lseek`) of
/// `read_to_end`.
fn read_into(path: &Path, buf: &mut Vec<u8>) -> std::io::Result<()> {
    let f = io::open_regular(path)?;
    read_open_into(&f, buf)
}

/// [`read_into`] of a file already open.
#[cfg(unix)]
fn read_open_into(f: &std::fs::File, buf: &mut Vec<u8>) -> std::io::Result<()> {
    const SPARE: usize = 64 << 10;
    buf.clear();
    loop {
        if buf.capacity() - buf.len() < SPARE {
            buf.reserve(SPARE.max(buf.len()));
        }
        match rustix::io::read(f, rustix::buffer::spare_capacity(buf)) {
            Ok(0) => return Ok(()),
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// [`read_into`] of a file already open.
#[cfg(not(unix))]
fn read_open_into(mut f: &std::fs::File, buf: &mut Vec<u8>) -> std::io::Result<()> {
    use std::io::Read;
    buf.clear();
    f.read_to_end(buf)?;
    Ok(())
}

/// The message count with each entry id once: the last entry row with an id decides whether
/// that id is a message (as the store's `byId` index does).
#[derive(Debug, Default)]
struct UniqueMessages<'a> {
    /// Entry id → its last row is a `message`.
    last_is_message: std::collections::HashMap<JsStr<'a>, bool, foldhash::fast::RandomState>,
}

impl<'a> UniqueMessages<'a> {
    /// One parsed row after the header of a file of version 2 or later.
    fn row(&mut self, env: &Envelope<'a>) {
        if let RowClass::Entry(ty) = session_format::row::classify(env)
            && let Field::Str(id) = &env.id
        {
            self.last_is_message
                .insert(id.clone(), ty == EntryType::Message);
        }
    }

    fn count(&self) -> usize {
        self.last_is_message.values().filter(|&&m| m).count()
    }
}

/// The running totals of `buildSessionInfo` over the rows after the header.
#[derive(Debug, Default)]
struct Totals {
    name: Option<String>,
    message_count: usize,
    first_message: String,
    /// Build [`Totals::all`] (only for [`SessionInfo::all_messages_text`]).
    want_text: bool,
    /// The non-empty texts joined by spaces, when `want_text`.
    all: String,
    texts: usize,
    last_activity: Option<f64>,
}

impl Totals {
    /// One parsed row (its envelope from the line reader); `None` where the reference throws.
    fn row(
        &mut self,
        json: &[u8],
        env: &Envelope<'_>,
        scratch: &mut extract::Scratch,
    ) -> Option<()> {
        match env.kind {
            ValueKind::Null => return None, // `entry.type` of null throws.
            ValueKind::Object => {}
            _ => return Some(()),
        }
        match env.r#type.as_str().and_then(EntryType::parse) {
            Some(EntryType::SessionInfo) => self.session_info_row(json),
            Some(EntryType::Message) => {
                self.message_count += 1;
                // The envelope's `role` is `Str` only when the last `message` is an object
                // holding a string `role` (the last one); anything else is rare and parsed.
                let Field::Str(role) = &env.role else {
                    return self.message_row_parsed(json);
                };
                if extract::may_be_too_deep(json) {
                    return self.message_row_parsed(json);
                }
                let is_user = *role == "user";
                if !is_user && *role != "assistant" {
                    return Some(());
                }
                let f = extract::message_fields(json, scratch);
                if !f.has_content {
                    return Some(());
                }
                let text = match f.text {
                    Ok(()) => Some(scratch.text.as_str()),
                    Err(extract::Throws) => None,
                };
                self.add(is_user, f.message_time, f.row_time, text)
            }
            _ => Some(()),
        }
    }

    /// A `session_info` row: the last one's trimmed `name` (a non-string name throws).
    fn session_info_row(&mut self, json: &[u8]) -> Option<()> {
        let name = match extract::name_field(json) {
            Ok(name) => name,
            Err(extract::Throws) => session_format::json::parse_value(json)
                .ok()?
                .get("name")
                .cloned(),
        };
        self.name = match name.as_ref() {
            None | Some(JsValue::Null) => None,
            Some(JsValue::String(s)) => {
                Some(js::trim(&s.to_str_lossy()).to_owned()).filter(|n| !n.is_empty())
            }
            Some(_) => return None,
        };
        Some(())
    }

    /// A `message` row read through the full parse (the rare shapes: `message` missing, `null`
    /// or not an object, `role` not a string, nesting that may be too deep for `parse_value`).
    fn message_row_parsed(&mut self, json: &[u8]) -> Option<()> {
        let v = session_format::json::parse_value(json).ok()?;
        let message = match v.get("message") {
            None | Some(JsValue::Null) => return None,
            Some(m) => m,
        };
        let Some(role) = message.get("role").and_then(JsValue::as_str_lossy) else {
            return Some(());
        };
        if message
            .as_object()
            .is_none_or(|o| !o.contains_key("content"))
        {
            return Some(());
        }
        if role != "user" && role != "assistant" {
            return Some(());
        }
        let message_time = message.get("timestamp").and_then(JsValue::as_f64);
        let row_time = v
            .get("timestamp")
            .filter(|t| t.as_js_string().is_some())
            .map(|t| session_format::time::date_of(Some(t)));
        let text = text_of(message);
        self.add(role == "user", message_time, row_time, text.as_deref())
    }

    /// A user or assistant message with `content`: its time (`message.timestamp` when a
    /// number, else the row's `timestamp` string when a valid date) and its text (`None` where
    /// `extractTextContent` throws).
    fn add(
        &mut self,
        is_user: bool,
        message_time: Option<f64>,
        row_time: Option<f64>,
        text: Option<&str>,
    ) -> Option<()> {
        match message_time {
            Some(n) => self.last_activity = Some(self.last_activity.unwrap_or(0.0).max(n)),
            None => {
                if let Some(t) = row_time
                    && !t.is_nan()
                {
                    self.last_activity = Some(self.last_activity.unwrap_or(0.0).max(t));
                }
            }
        }
        let text = text?;
        if text.is_empty() {
            return Some(());
        }
        if self.first_message.is_empty() && is_user {
            text.clone_into(&mut self.first_message);
        }
        if self.want_text {
            if self.texts > 0 {
                self.all.push(' ');
            }
            self.all.push_str(text);
        }
        self.texts += 1;
        Some(())
    }
}

/// `buildSessionInfo` over a file's bytes: the header parsed in full, `message` rows read by
/// the targeted scan of [`extract`] (rare shapes parsed in full), `session_info` rows parsed.
fn info_of(path: &Path, buf: &[u8], scratch: &mut extract::Scratch) -> Option<SessionInfo> {
    scan(path, buf, scratch, || mtime_ms(path), false).map(|(info, _)| info)
}

/// `buildSessionInfo` over the bytes of a session stored elsewhere than in a file (see
/// [`crate::storage`]): `mtime_ms` gives the modification time the fallback uses.
pub(crate) fn info_from_bytes(
    path: &Path,
    buf: &[u8],
    mtime_ms: impl FnOnce() -> Option<f64>,
) -> Option<SessionInfo> {
    scan(path, buf, &mut extract::Scratch::default(), mtime_ms, false).map(|(info, _)| info)
}

/// [`info_of`] with the modification time of the fallback from `mtime_ms`; with `text`, also
/// `allMessagesText` (else the returned text is empty and nothing is joined).
fn scan(
    path: &Path,
    buf: &[u8],
    scratch: &mut extract::Scratch,
    mtime_ms: impl FnOnce() -> Option<f64>,
    text: bool,
) -> Option<(SessionInfo, String)> {
    let mut lines = LineReader::new(buf);
    let header_json = lines.by_ref().find_map(|l| match l.content {
        LineContent::Json(_) => Some(l.json),
        _ => None,
    })?;
    let header = match extract::header_fields(header_json) {
        Some(h) => h,
        None => {
            let v = session_format::json::parse_value(header_json).ok()?;
            let field = |k: &str| v.get(k).cloned();
            extract::HeaderFields {
                r#type: field("type"),
                id: field("id"),
                cwd: field("cwd"),
                parent_session: field("parentSession"),
                timestamp: field("timestamp"),
                version: field("version"),
            }
        }
    };
    if header.r#type.as_ref().and_then(JsValue::as_js_string)? != "session" {
        return None;
    }
    // The header row itself is an object of type `session`: nothing to count.
    let mut t = Totals {
        want_text: text,
        ..Totals::default()
    };
    // A file below version 2 is migrated on open, which gives every row a new id: each
    // `message` row is then an entry of its own. (A header without a string id is not one the
    // store reads: it recovers the file under a new header, without migrating.)
    let legacy = matches!(header.id, Some(JsValue::String(_)))
        && session_format::migrate::js_version_number(header.version.as_ref()) < 2.0;
    let mut ids = UniqueMessages::default();
    for line in lines {
        if let LineContent::Json(env) = &line.content {
            t.row(line.json, env, scratch)?;
            if !legacy {
                ids.row(env);
            }
        }
    }
    let header_time = session_format::time::date_of(
        header
            .timestamp
            .as_ref()
            .filter(|t| t.as_js_string().is_some()),
    );
    let (modified, modified_from_mtime) = match t.last_activity {
        Some(t) if t > 0.0 => (time_clip(t), false),
        _ if !header_time.is_nan() => (header_time, false),
        _ => (mtime_ms().unwrap_or(f64::NAN), true),
    };
    let created = session_format::time::date_of(header.timestamp.as_ref());
    let id = match &header.id {
        Some(JsValue::String(s)) => s.to_str_lossy().into_owned(),
        Some(v @ (JsValue::Number(_) | JsValue::Bool(_))) => {
            let mut out = String::new();
            push_join_element(v, &mut out);
            out
        }
        _ => String::new(),
    };
    let info = SessionInfo {
        path: path.to_path_buf(),
        id,
        cwd: header
            .cwd
            .as_ref()
            .and_then(|v| v.as_str_lossy().map(|s| s.into_owned()))
            .unwrap_or_default(),
        name: t.name,
        parent_session_path: header
            .parent_session
            .as_ref()
            .and_then(|v| v.as_str_lossy().map(|s| s.into_owned())),
        created: (!created.is_nan()).then_some(created),
        modified,
        modified_from_mtime,
        message_count: t.message_count,
        unique_message_count: if legacy { t.message_count } else { ids.count() },
        first_message: if t.first_message.is_empty() {
            "(no messages)".to_owned()
        } else {
            t.first_message
        },
        aliases: Vec::new(),
        outside_target: None,
    };
    Some((info, t.all))
}

/// At most this many threads read files for one `list` (the files are independent; the
/// order of the result does not depend on the split).
const MAX_THREADS: usize = 4;
/// Fewer files than this per thread are not worth a thread.
const MIN_FILES_PER_THREAD: usize = 16;
/// Files a thread takes from the shared queue at a time.
const CHUNK: usize = 4;

/// [`session_info`] of every file, in the order of `files` (skipped files left out), read on
/// up to [`MAX_THREADS`] threads (one per core).
fn infos(files: &[PathBuf]) -> Vec<SessionInfo> {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let threads = cores
        .min(MAX_THREADS)
        .min(files.len() / MIN_FILES_PER_THREAD)
        .max(1);
    if threads == 1 {
        let mut w = Worker::default();
        return files.iter().filter_map(|p| w.info(p)).collect();
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut w = Worker::default();
        let mut got = Vec::new();
        loop {
            let start = next.fetch_add(CHUNK, Ordering::Relaxed);
            if start >= files.len() {
                return got;
            }
            for (i, p) in files.iter().enumerate().skip(start).take(CHUNK) {
                if let Some(info) = w.info(p) {
                    got.push((i, info));
                }
            }
        }
    };
    let mut slots: Vec<Option<SessionInfo>> = Vec::new();
    slots.resize_with(files.len(), || None);
    std::thread::scope(|s| {
        // The calling thread works too; a helper that cannot be spawned leaves its share to
        // the others (the queue is shared).
        let helpers: Vec<_> = (1..threads)
            .filter_map(|_| std::thread::Builder::new().spawn_scoped(s, work).ok())
            .collect();
        let mut parts = vec![work()];
        for h in helpers {
            match h.join() {
                Ok(part) => parts.push(part),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        for (i, info) in parts.into_iter().flatten() {
            slots[i] = Some(info);
        }
    });
    slots.into_iter().flatten().collect()
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
pub(crate) fn sort_by_modified(v: &mut Vec<SessionInfo>) {
    let mut order: Vec<usize> = (0..v.len()).collect();
    js::sort_by_key(&mut order, |&i| -v[i].modified);
    let mut slots: Vec<Option<SessionInfo>> = std::mem::take(v).into_iter().map(Some).collect();
    v.extend(order.into_iter().filter_map(|i| slots[i].take()));
}

/// The sessions of one directory (`*.jsonl` directly in it), newest `modified` first
/// (`SessionManager.list`; OpenClaw 2026.6.11 does not filter by cwd). A missing directory
/// gives an empty list. A file reached through several names (its own and symlinks to it) is
/// one row ([`SessionInfo::aliases`]); a row reached through a symlink out of `dir` is flagged
/// ([`SessionInfo::outside_target`]; docs/DEVIATIONS.md D29).
///
/// # Errors
/// [`ListError::ReadDir`] when the directory exists but cannot be read.
pub fn list(dir: &Path) -> Result<Vec<SessionInfo>, ListError> {
    let (files, links) = jsonl_entries(dir)?;
    let mut out = merge_aliases(infos(&files), &files, &links, dir);
    sort_by_modified(&mut out);
    Ok(out)
}

/// The sessions of every immediate subdirectory of `sessions_root` (default root:
/// [`crate::paths::sessions_dir`]), newest first (`SessionManager.listAll`). Loose files in the
/// root and symlinked directories are ignored. Names of one file are merged as in [`list`]
/// (across directories too); a row is flagged when its link leads out of `sessions_root`.
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
    let dirs = sorted_sub_dirs(rd);
    let (files, links): (Vec<PathBuf>, Vec<bool>) = dirs
        .iter()
        .flat_map(|d| {
            let (f, l) = jsonl_entries(d).unwrap_or_default();
            f.into_iter().zip(l)
        })
        .unzip();
    let mut out = merge_aliases(infos(&files), &files, &links, sessions_root);
    sort_by_modified(&mut out);
    Ok(out)
}

// ----------------------------------------------------------------------------------------
// Listing through a storage

/// The [`SessionInfo`] of every session of `dir` in `storage`, newest first
/// (`SessionManager.list`, openclaw-jsonl.md §2.1). On local files ([`Storage::local_files`])
/// this is [`list`] (the parallel targeted scan, names of one file merged); otherwise each of
/// [`Storage::list_sessions`] is read with [`Storage::read_all`] (the modification time
/// fallback is the snapshot's `mtime_ns`).
///
/// # Errors
/// [`ListError::ReadDir`] when `dir` cannot be listed.
pub(crate) fn session_infos(
    storage: &dyn Storage,
    dir: &Path,
) -> Result<Vec<SessionInfo>, ListError> {
    if storage.local_files() {
        return list(dir);
    }
    let files = storage
        .list_sessions(dir)
        .map_err(|source| ListError::ReadDir {
            path: dir.to_path_buf(),
            source,
        })?;
    Ok(stored_infos(storage, &files))
}

/// As [`session_infos`] over every namespace directly under `root` (`SessionManager.listAll`;
/// on local files [`list_all`]).
///
/// # Errors
/// [`ListError::ReadDir`] when `root` cannot be listed.
pub(crate) fn all_session_infos(
    storage: &dyn Storage,
    root: &Path,
) -> Result<Vec<SessionInfo>, ListError> {
    if storage.local_files() {
        return list_all(root);
    }
    let dirs = storage
        .list_dirs(root)
        .map_err(|source| ListError::ReadDir {
            path: root.to_path_buf(),
            source,
        })?;
    let files: Vec<PathBuf> = dirs
        .iter()
        .flat_map(|d| storage.list_sessions(d).unwrap_or_default())
        .collect();
    Ok(stored_infos(storage, &files))
}

/// `findMostRecentSession` in `dir` of `storage` (openclaw-jsonl.md §2.1): the session whose
/// header line is readable with the newest modification time (ties: the first by name). On
/// local files [`find_most_recent_session`]; otherwise each header is read with
/// [`Storage::read_head`] and the time with [`Storage::stat`].
pub(crate) fn most_recent_session(storage: &dyn Storage, dir: &Path) -> Option<PathBuf> {
    if storage.local_files() {
        return find_most_recent_session(dir);
    }
    storage
        .list_sessions(dir)
        .ok()?
        .into_iter()
        .filter(|p| {
            storage
                .read_head(p)
                .ok()
                .flatten()
                .is_some_and(|line| is_header_line(&line))
        })
        .filter_map(|p| {
            let ns = storage.stat(&p).ok()??.mtime_ns;
            Some((p, snapshot_mtime_ms(ns)))
        })
        .fold(None, |best: Option<(PathBuf, f64)>, (p, m)| match &best {
            Some((_, bm)) if *bm >= m => best,
            _ => Some((p, m)),
        })
        .map(|(p, _)| p)
}

/// node's `stats.mtime.getTime()` of a modification time in nanoseconds: `Math.round(mtimeMs)`.
fn snapshot_mtime_ms(ns: i128) -> f64 {
    let abs = ns.unsigned_abs();
    let secs = (abs / 1_000_000_000) as f64;
    let nanos = (abs % 1_000_000_000) as f64;
    let ms = secs * 1e3 + nanos / 1e6;
    let ms = if ns < 0 { -ms } else { ms };
    (ms + 0.5).floor()
}

/// The infos of `files` read from `storage`, newest first.
fn stored_infos(storage: &dyn Storage, files: &[PathBuf]) -> Vec<SessionInfo> {
    let mut out: Vec<SessionInfo> = files
        .iter()
        .filter_map(|p| {
            let bytes = storage.read_all(p).ok()?;
            info_from_bytes(p, &bytes, || {
                storage
                    .stat(p)
                    .ok()
                    .flatten()
                    .map(|s| snapshot_mtime_ms(s.mtime_ns))
            })
        })
        .collect();
    sort_by_modified(&mut out);
    out
}

#[cfg(test)]
mod storage_listing_tests {
    use super::snapshot_mtime_ms as mtime_ms;

    #[test]
    fn mtime_ms_rounds_like_node() {
        assert_eq!(mtime_ms(1_500_000), 2.0);
        assert_eq!(mtime_ms(1_499_999), 1.0);
        assert_eq!(mtime_ms(1_767_225_600_123_456_789), 1_767_225_600_123.0);
        assert_eq!(mtime_ms(-1_500_000), -1.0);
    }
}
