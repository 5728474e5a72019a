//! `sessions check FILE...`: read-only verification. Everything the read-only open reports
//! (torn and malformed lines, a corrupt header, an empty file, an unmigrated version, parent
//! cycles, dangling parents, duplicate ids, invalid leaf controls, a missing final newline), what
//! makes OpenClaw's list or context building fail (`null` lines, invalid messages and content,
//! non-string session names, rows too deep to decode) and what other readers trip on (unknown
//! versions, a byte-order mark, CRLF line endings, a compaction that keeps from nothing), each
//! with file, line and byte offset, as an error or a warning.

use std::path::{Path, PathBuf};

use session_format::json::{
    Envelope, JsObject, JsValue, JsonErrorKind, MAX_DEPTH, ValueKind, number_to_string,
    parse_value, to_json_string,
};
use session_format::line::{LineContent, LineReader};
use session_store::{OpenReport, ReadOnlyOpen, SessionManager};

use crate::ctx::Ctx;
use crate::outcome::Outcome;
use crate::output::{self, Output};
use crate::text;

pub(crate) const LONG_ABOUT: &str = "\
Verify session files without writing to them (not even a backup): every file is opened read-only
and whatever OpenClaw would repair, rewrite, fail on or silently tolerate is reported with its
file, line and byte offset. Each FILE gets its own result: a file that cannot be read (missing,
a directory, a dangling symlink, a FIFO or device: only regular files are opened) is reported
and the others are still checked. A file an OpenClaw sessions directory manages that is not a
transcript (`sessions.json`, its temp files and backups, the trajectory sidecars, and archives
or checkpoints without a session header) gets one line saying what it is, not a problem (JSON
`\"notTranscript\": \"…\"`, only on such a file; exit code 0 when nothing else is found), so `sessions check <dir>/*` checks
the transcripts.

Errors (exit code 1):
  torn-tail              the last line is unterminated and not JSON (a crash mid-write)
  malformed-line         a line that is not JSON (kept in place, invisible to readers)
  missing-final-newline  the last line is complete but has no newline
  empty                  the file is empty or whitespace-only (a writable open writes a fresh
                         header); a SQLite session: no row in the database
  corrupt-header         the first parsed line is not a session header (a writable open backs
                         the file up and rewrites it)
  parent-cycle           entries whose parents form a cycle
  dangling-parent        an entry whose parentId names nothing in the file
  duplicate-id           one id on several entries (the last one wins)
  extra-header           a session header (a `type:\"session\"` row) after the file's header,
                         e.g. two files joined into one: kept verbatim as an opaque row, never
                         part of the tree or the context
  invalid-leaf-control   a leaf control whose target is unknown (ignored)
  too-deep               a line nested deeper than 1000 levels: kept verbatim and indexed, but
                         it cannot be decoded (tree, context and export cannot show it)
  null-line              a line that is `null` (OpenClaw's list skips the file; pi 0.73.1's
                         loader crashes on it)
  invalid-message        a message entry whose `message` is missing, null or not an object
                         (OpenClaw's context building throws on a missing or null one)
  invalid-content        a user or assistant message whose content is neither text nor an
                         array of blocks, or holds a null block (OpenClaw's list skips the file)
  non-string-name        a session_info entry whose name is not a string (OpenClaw's list
                         skips the file)
  id-not-a-file-name     the header's session id could not be a file name (empty, `.`, `..`,
                         absolute, holds `/`, `\\`, NUL or a control character, or so long
                         that <id>.jsonl is over 255 bytes): tools that name transcripts after
                         it (OpenClaw's <id>.jsonl, pi's <timestamp>_<id>.jsonl) would write
                         elsewhere, or fail to create the file (the text says which); this
                         workspace never turns a header id into a path

Warnings (reported, exit code unchanged):
  unsupported-version    a header version other than 1, 2 or 3 (e.g. 99), or one that is not a
                         number (e.g. the string \"3\"); the file is read as version 3
  bom                    the file starts with a UTF-8 byte-order mark (OpenClaw tolerates it;
                         pi's continueRecent does not take the file as a session)
  crlf                   lines end with CRLF (readers accept it; appends write LF)
  dangling-first-kept    a compaction whose firstKeptEntryId names no entry (its context keeps
                         only the summary and what follows it)
  odd-content            a message of another role whose content is neither text nor blocks

Information (reported, not counted as a problem or a warning, exit code unchanged: the data is
legal):
  needs-migration        version 1 or 2: an older file OpenClaw reads fine; a writable open
                         (OpenClaw's, `sessions repair`) migrates it to version 3 and rewrites
                         it. The read-only views show a version 1 file's entries under ids
                         derived from the file (the same on every read; see `sessions tree
                         --help`)
  multiple-tips          the session's tree has more than one tip (entry without children):
                         `tips: <id>, <id>` (full ids, file order). A deliberate branch, a side
                         append, or another writer's lines made it; `sessions tree` shows where

Text output: one line per finding, `FILE:LINE: byte OFFSET: KIND: message` (`… warning: KIND:
message` for warnings, `FILE: info: multiple-tips: tips: <id>, <id>` for the tips), then
`FILE: ok (N entries)` when the file has no error, then a summary line. A file that cannot be
read is `FILE: error: why`.

A session of an OpenClaw 2026.8+ SQLite store (see `sessions --help`) is checked as the file of
its rows, then its database rows are checked too (openclaw-sqlite.md §2.13 recipe 7), each
finding a problem of kind `sqlite-…` without line or byte: errors `sqlite-missing-window`,
`sqlite-invalid-entry`, `sqlite-window-without-node`, `sqlite-seq-start`, `sqlite-seq-gap`,
`sqlite-bad-row`, `sqlite-identity-mismatch`, `sqlite-identity-without-row`,
`sqlite-active-row-without-identity`, `sqlite-index-ahead`, `sqlite-not-a-session`,
`sqlite-leaf-disagrees` (with a fresh index); warnings `sqlite-index-missing`,
`sqlite-index-behind`, `sqlite-needs-rebuild`, `sqlite-leaf-disagrees` (with a stale index).
Nothing is written to the database.

JSON output (--json): an array with one object per file:
  {\"file\", \"ok\", \"error\": string | null, \"tips\": [id] | null,
   \"problems\": [{\"kind\", \"severity\", \"line\", \"byteOffset\", \"message\"}]}
`ok` is false when the file could not be read (`error` says why) or has an error-severity
problem; `severity` is \"error\", \"warning\" or \"info\"; `tips` lists every tip of the
session's tree (one for a linear session, none without entries; null when the file could not be
read).

Exit code: 0 when no file has an error (warnings allowed), 1 when any file has an error, 2 when a
file could not be read (the other files are still checked).";

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Severity {
    /// Exit code 1.
    Error,
    /// Reported only.
    Warning,
    /// Legal data worth knowing (several tips): reported only, not counted as a problem.
    Info,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    /// Machine-readable kind (see the help text).
    pub(crate) kind: &'static str,
    /// Error or warning.
    pub(crate) severity: Severity,
    /// 1-based line.
    pub(crate) line: Option<usize>,
    /// Byte offset in the file.
    pub(crate) byte: Option<usize>,
    /// What is wrong, for people.
    pub(crate) message: String,
}

fn first_nonblank_line(bytes: &[u8]) -> Option<(usize, usize)> {
    session_format::line::lines(bytes)
        .find(|l| l.bytes.iter().any(|b| !b.is_ascii_whitespace()))
        .map(|l| (l.number, l.offset))
}

fn lines_text(lines: &[usize]) -> String {
    let v: Vec<String> = lines.iter().map(ToString::to_string).collect();
    v.join(", ")
}

fn error(kind: &'static str, line: Option<usize>, byte: Option<usize>, message: String) -> Problem {
    Problem {
        severity: Severity::Error,
        kind,
        line,
        byte,
        message,
    }
}

fn warning(
    kind: &'static str,
    line: Option<usize>,
    byte: Option<usize>,
    message: String,
) -> Problem {
    Problem {
        severity: Severity::Warning,
        kind,
        line,
        byte,
        message,
    }
}

/// What a JSON value is, for messages.
fn kind_of(v: &JsValue) -> &'static str {
    match v {
        JsValue::Null => "null",
        JsValue::Bool(_) => "a boolean",
        JsValue::Number(_) => "a number",
        JsValue::String(_) => "a string",
        JsValue::Array(_) => "an array",
        JsValue::Object(_) => "an object",
    }
}

/// True when the text nests arrays and objects at least `limit` deep (strings skipped): a
/// cheap filter before a full parse. The text is already known to be valid JSON.
fn nesting_reaches(json: &[u8], limit: usize) -> bool {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in json {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth >= limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

fn id_text(env: &Envelope<'_>) -> String {
    match env.id.as_js_str() {
        Some(id) => format!("\"{}\"", text::safe(&id.to_str_lossy())),
        None => "(without a string id)".to_owned(),
    }
}

/// Problems of one `message` row's payload (what makes OpenClaw's context building or list
/// fail on it).
fn message_problems(v: &JsValue, id: &str, line: usize, at: usize, out: &mut Vec<Problem>) {
    let msg = match v.get("message") {
        None => {
            out.push(error(
                "invalid-message",
                Some(line),
                Some(at),
                format!(
                    "message entry {id} has no `message`: OpenClaw's context building throws on \
                     it and its list skips the file"
                ),
            ));
            return;
        }
        Some(JsValue::Null) => {
            out.push(error(
                "invalid-message",
                Some(line),
                Some(at),
                format!(
                    "message entry {id} has a null `message`: OpenClaw's context building \
                     throws on it and its list skips the file"
                ),
            ));
            return;
        }
        Some(m @ JsValue::Object(_)) => m,
        Some(other) => {
            out.push(error(
                "invalid-message",
                Some(line),
                Some(at),
                format!(
                    "message entry {id} has a `message` that is {}, not an object: it has no \
                     role or content for readers",
                    kind_of(other)
                ),
            ));
            return;
        }
    };
    let Some(content) = msg.get("content") else {
        return;
    };
    let role = msg.get("role").and_then(JsValue::as_str_lossy);
    let listed = matches!(role.as_deref(), Some("user" | "assistant"));
    let why = match content {
        JsValue::String(_) => return,
        JsValue::Array(blocks) => match blocks.iter().position(JsValue::is_null) {
            Some(k) => format!("content block {k} is null"),
            None => return,
        },
        other => format!(
            "`content` is {}, neither text nor an array of blocks",
            kind_of(other)
        ),
    };
    let role_text = role.map_or_else(
        || "no role".to_owned(),
        |r| format!("role {}", text::safe(&r)),
    );
    if listed {
        out.push(error(
            "invalid-content",
            Some(line),
            Some(at),
            format!("message entry {id} ({role_text}): {why}: OpenClaw's list skips the file"),
        ));
    } else {
        out.push(warning(
            "odd-content",
            Some(line),
            Some(at),
            format!("message entry {id} ({role_text}): {why}"),
        ));
    }
}

/// Problems of one JSON line whose envelope is `env` and whose parsed text is `json` (line
/// `line` at byte `at`): a `null` line, a row too deep to decode, an invalid message or content,
/// a non-string session name. Rows are parsed in full here; [`row_problems`] calls this only
/// for the rows a cheap walk cannot clear.
fn json_line_problems(
    env: &Envelope<'_>,
    json: &[u8],
    line: usize,
    at: usize,
    out: &mut Vec<Problem>,
) {
    match env.kind {
        ValueKind::Null => {
            out.push(error(
                "null-line",
                Some(line),
                Some(at),
                "the line is `null`: OpenClaw's list skips the file and pi 0.73.1's loader \
                 crashes on it"
                    .to_owned(),
            ));
            return;
        }
        ValueKind::Object => {}
        _ => {
            if !nesting_reaches(json, MAX_DEPTH) {
                return;
            }
        }
    }
    let ty = env.r#type.as_str();
    let decode = matches!(ty, Some("message" | "session_info"));
    if !decode && !nesting_reaches(json, MAX_DEPTH) {
        return;
    }
    let v = match parse_value(json) {
        Ok(v) => v,
        Err(e) if e.kind == JsonErrorKind::TooDeep => {
            let what = match ty {
                Some(t) if env.kind == ValueKind::Object => {
                    format!(" ({} entry {})", text::safe(t), id_text(env))
                }
                _ => String::new(),
            };
            out.push(error(
                "too-deep",
                Some(line),
                Some(at),
                format!(
                    "nesting deeper than {MAX_DEPTH} levels: kept verbatim, cannot be \
                     decoded{what}"
                ),
            ));
            return;
        }
        Err(_) => return,
    };
    match ty {
        Some("message") => message_problems(&v, &id_text(env), line, at, out),
        Some("session_info") => match v.get("name") {
            None | Some(JsValue::Null | JsValue::String(_)) => {}
            Some(other) => out.push(error(
                "non-string-name",
                Some(line),
                Some(at),
                format!(
                    "session_info entry {} has a name that is {} ({}), not a string: \
                     OpenClaw's list skips the file",
                    id_text(env),
                    kind_of(other),
                    text::excerpt(&to_json_string(other), 40)
                ),
            )),
        },
        _ => {}
    }
}

/// What one pass over the file's bytes (LF positions only) finds: where each line starts,
/// how many lines are not blank, and the lines ending with CRLF.
struct FileLines {
    /// Byte offset of each 1-based line (index 0 = line 1).
    offsets: Vec<usize>,
    /// Lines that are not JavaScript whitespace only.
    non_blank: usize,
    /// Lines whose bytes end with CR.
    crlf_lines: usize,
    /// The first of them: (line, offset).
    crlf_first: Option<(usize, usize)>,
}

impl FileLines {
    fn of(bytes: &[u8]) -> Self {
        let mut f = FileLines {
            offsets: Vec::with_capacity(bytes.len() / 1024 + 16),
            non_blank: 0,
            crlf_lines: 0,
            crlf_first: None,
        };
        for l in session_format::line::lines(bytes) {
            f.offsets.push(l.offset);
            if l.bytes.first() == Some(&b'{') || !session_format::line::is_blank(l.bytes) {
                f.non_blank += 1;
            }
            if l.bytes.last() == Some(&b'\r') {
                f.crlf_lines += 1;
                f.crlf_first.get_or_insert((l.number, l.offset));
            }
        }
        f
    }
}

/// At most this many problems (errors and warnings) of one file are needed
/// (`check --max-problems`): a scan may stop once it has found more than that.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limit(pub(crate) Option<usize>);

impl Limit {
    /// No limit.
    pub(crate) const NONE: Limit = Limit(None);

    /// True once `found` problems are more than the limit (the list is cut either way).
    fn reached(self, found: usize) -> bool {
        self.0.is_some_and(|n| found > n)
    }
}

/// Rows of at least this many bytes in all are checked on several threads.
const PARALLEL_MIN_BYTES: usize = 1 << 20;

/// The per-row problems of the rows `rows()` yields (every non-blank line of the file, from the
/// index, in file order; `span` bytes from the first row's offset to past the last one, `total`
/// bytes of JSON in all), in file order. Rows a cheap walk clears are not parsed; the others go
/// through [`json_line_problems`]. With `threads > 1` (and enough bytes, `parallel_min` of
/// them) the file is split into that many ranges of about equal bytes by row offset, each
/// thread walking `rows()` to its own range (the rows are never collected), and the results
/// are merged in file order; each range stops once it, or the ranges before it, found more
/// than `limit`.
fn rows_problems<'r, I>(
    rows: impl Fn() -> I + Sync,
    span: usize,
    total: usize,
    limit: Limit,
    threads: usize,
    parallel_min: usize,
) -> Vec<Problem>
where
    I: Iterator<Item = session_store::FileRow<'r>>,
{
    if threads < 2 || total < parallel_min {
        let mut out = Vec::new();
        chunk_problems(
            rows(),
            limit,
            &[],
            &std::sync::atomic::AtomicUsize::new(0),
            &mut out,
        );
        return out;
    }
    // Range boundaries at about equal byte counts of the file.
    let bounds: Vec<usize> = (0..=threads)
        .map(|k| {
            if k == threads {
                usize::MAX
            } else {
                span / threads * k + span % threads * k / threads
            }
        })
        .collect();
    let found: Vec<std::sync::atomic::AtomicUsize> = (0..threads)
        .map(|_| std::sync::atomic::AtomicUsize::new(0))
        .collect();
    let rows = &rows;
    let parts: Vec<Vec<Problem>> = std::thread::scope(|s| {
        // Collected so that every range starts before the first is joined.
        #[allow(clippy::needless_collect)]
        let handles: Vec<_> = bounds
            .windows(2)
            .enumerate()
            .map(|(k, w)| {
                let (lo, hi) = (w[0], w[1]);
                let found = &found;
                s.spawn(move || {
                    let mut out = Vec::new();
                    let chunk = rows()
                        .skip_while(|r| r.offset < lo)
                        .take_while(|r| r.offset < hi);
                    chunk_problems(chunk, limit, &found[..k], &found[k], &mut out);
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    let mut out = Vec::with_capacity(parts.iter().map(Vec::len).sum());
    for p in parts {
        out.extend(p);
        if limit.reached(out.len()) {
            break;
        }
    }
    out
}

/// [`rows_problems`] of one chunk; `before` holds the counts the earlier chunks published
/// (a chunk publishes its count in `me` as it finds problems).
fn chunk_problems<'r>(
    rows: impl Iterator<Item = session_store::FileRow<'r>>,
    limit: Limit,
    before: &[std::sync::atomic::AtomicUsize],
    me: &std::sync::atomic::AtomicUsize,
    out: &mut Vec<Problem>,
) {
    let mut scanner = session_format::json::EnvelopeScanner::new();
    for (k, r) in rows.enumerate() {
        let had = out.len();
        row_problems(&r, &mut scanner, out);
        if out.len() != had {
            me.store(out.len(), std::sync::atomic::Ordering::Relaxed);
        }
        if limit.0.is_some() {
            if limit.reached(out.len()) {
                return;
            }
            // Now and then: do the earlier chunks already hold enough?
            if (k % 256 == 0 || out.len() != had)
                && limit.reached(
                    before
                        .iter()
                        .map(|c| c.load(std::sync::atomic::Ordering::Relaxed))
                        .sum(),
                )
            {
                return;
            }
        }
    }
}

/// The problems of one row (pushed to `out`): a row the walks clear costs no allocation.
fn row_problems(
    r: &session_store::FileRow<'_>,
    scanner: &mut session_format::json::EnvelopeScanner,
    out: &mut Vec<Problem>,
) {
    use session_format::entry::EntryType;
    use session_store::FileRowClass;
    let clean = match r.class {
        FileRowClass::Malformed => return,
        FileRowClass::Entry(EntryType::Message) => crate::rowscan::message_row_is_clean(r.json),
        FileRowClass::Entry(EntryType::SessionInfo) => {
            crate::rowscan::session_info_row_is_clean(r.json)
        }
        // An object of another type: only its depth could be reported.
        FileRowClass::Entry(_) | FileRowClass::Header => !crate::rowscan::may_be_too_deep(r.json),
        _ => false,
    };
    if clean {
        return;
    }
    if let Ok(env) = scanner.scan(r.json) {
        json_line_problems(&env, r.json, r.line, r.offset, out);
    }
}

/// The sequential reference of [`rows_problems`]: every line of `bytes` read again
/// ([`LineReader`]) and every message and session-info row parsed. Used when the index does
/// not hold every line as read (a migrated file, a recovered header), and by tests.
fn lines_problems(bytes: &[u8], limit: Limit) -> Vec<Problem> {
    let mut out = Vec::new();
    for l in LineReader::new(bytes) {
        let LineContent::Json(env) = &l.content else {
            continue;
        };
        json_line_problems(env, l.json, l.raw.number, l.raw.offset, &mut out);
        if limit.reached(out.len()) {
            break;
        }
    }
    out
}

/// Problems found line by line: a byte-order mark, CRLF endings, `null` lines, rows too deep
/// to decode, invalid messages and content, non-string session names. The rows come from the
/// open's index when it holds every non-blank line of `bytes` (`sm`'s buffer), else the bytes
/// are read again.
fn line_problems(
    bytes: &[u8],
    lines: &FileLines,
    sm: &SessionManager,
    limit: Limit,
    out: &mut Vec<Problem>,
) {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        out.push(warning(
            "bom",
            Some(1),
            Some(0),
            "the file starts with a UTF-8 byte-order mark: OpenClaw reads past it, but pi's \
             continueRecent does not take the file as a session"
                .to_owned(),
        ));
    }
    // The index's rows are walked, never collected: (count, bytes of JSON).
    let (count, total) = if std::ptr::eq(sm.file_bytes(), bytes) {
        sm.file_rows()
            .fold((0usize, 0usize), |(n, t), r| (n + 1, t + r.json.len()))
    } else {
        (0, 0)
    };
    if count == lines.non_blank && count > 0 {
        let threads = std::thread::available_parallelism()
            .map_or(2, std::num::NonZeroUsize::get)
            .clamp(2, 8);
        let threads = if count < 2 { 1 } else { threads };
        out.extend(rows_problems(
            || sm.file_rows(),
            bytes.len(),
            total,
            limit,
            threads,
            PARALLEL_MIN_BYTES,
        ));
    } else {
        out.extend(lines_problems(bytes, limit));
    }
    if let Some((line, at)) = lines.crlf_first {
        let crlf_lines = lines.crlf_lines;
        out.push(warning(
            "crlf",
            Some(line),
            Some(at),
            format!(
                "{} {} with CRLF (the first is line {line}): readers accept it, but appended \
                 lines end with LF only",
                text::thousands(crlf_lines),
                if crlf_lines == 1 {
                    "line ends"
                } else {
                    "lines end"
                }
            ),
        ));
    }
}

/// A header version other than 1, 2 or 3, or one that is not a number.
fn version_problem(
    ro_report: &OpenReport,
    sm: &SessionManager,
    first: Option<(usize, usize)>,
) -> Option<Problem> {
    if ro_report.empty || ro_report.corrupt_header.is_some() {
        return None;
    }
    let header = sm.get_header().ok().flatten()?;
    let v = header.get("version")?;
    let as_number = session_format::migrate::js_version_number(Some(v));
    let message = match v {
        JsValue::Null => return None,
        JsValue::Number(n) if *n == 1.0 || *n == 2.0 || *n == 3.0 => return None,
        // Below 3: reported as unmigrated-version.
        JsValue::Number(n) if *n < 3.0 && n.fract() == 0.0 => return None,
        JsValue::Number(n) => format!(
            "version {} is not one OpenClaw 2026.6.11 writes or migrates (1, 2 or 3); the file is \
             read as version 3",
            number_to_string(*n)
        ),
        other => format!(
            "version is {} ({}), not a number; OpenClaw compares it as the number {}{}",
            kind_of(other),
            text::excerpt(&to_json_string(other), 40),
            number_to_string(as_number),
            if as_number < 3.0 {
                ""
            } else {
                " and reads the file as version 3"
            }
        ),
    };
    Some(warning(
        "unsupported-version",
        first.map(|f| f.0),
        first.map(|f| f.1),
        message,
    ))
}

/// A readable header whose session id could not be a file name
/// ([`session_store::validate_name`]).
fn header_id_problem(
    report: &OpenReport,
    sm: &SessionManager,
    first: Option<(usize, usize)>,
) -> Option<Problem> {
    if report.empty || report.corrupt_header.is_some() {
        return None;
    }
    let id = sm.get_session_id();
    use session_store::NameRule;
    let why = match session_store::validate_name(session_store::NameKind::SessionId, id) {
        Err(err) => {
            let consequence = match err.rule {
                NameRule::Slash | NameRule::Backslash | NameRule::Absolute => {
                    "would write outside the sessions directory or into a sub-directory of it"
                }
                NameRule::Empty | NameRule::Dot | NameRule::DotDot => {
                    "would get a hidden file name, and one that uses it as a directory name \
                     would address the sessions directory itself or its parent"
                }
                NameRule::Nul | NameRule::TooLong { .. } => "would fail to create the file",
                _ => "would create a file whose name holds that character",
            };
            format!(
                "it {}; a tool that names transcripts after their id {consequence}",
                err.rule
            )
        }
        Ok(()) => {
            let file_len = id.len() + ".jsonl".len();
            if file_len <= session_store::MAX_NAME_BYTES {
                return None;
            }
            format!(
                "{id_len} bytes make \"<id>.jsonl\" {file_len} bytes, over the {max}-byte file \
                 name limit; a tool that names transcripts after their id (OpenClaw's \
                 <id>.jsonl, pi's <timestamp>_<id>.jsonl) would fail to create the file",
                id_len = id.len(),
                max = session_store::MAX_NAME_BYTES
            )
        }
    };
    Some(error(
        "id-not-a-file-name",
        first.map(|f| f.0),
        first.map(|f| f.1),
        format!(
            "session id \"{}\" could not be a file name: {why}",
            text::safe(id)
        ),
    ))
}

/// Compactions whose `firstKeptEntryId` names no entry (the open report's
/// `dangling_first_kept`: the id as reads resolve it, §2.3).
fn first_kept_problems(
    report: &OpenReport,
    sm: &SessionManager,
    at: impl Fn(Option<usize>) -> Option<usize>,
    out: &mut Vec<Problem>,
) {
    for d in &report.dangling_first_kept {
        let message = match &d.first_kept_entry_id {
            Some(k) => format!(
                "compaction {} keeps from \"{}\", which names no entry: its context holds only \
                 the summary and the entries after it",
                text::safe(&d.compaction_id),
                text::safe(k)
            ),
            None => {
                let value = sm.get_entry(&d.compaction_id).and_then(|e| e.value().ok());
                let what = value
                    .as_ref()
                    .and_then(|v| v.get("firstKeptEntryId"))
                    .map_or("missing", kind_of);
                format!(
                    "compaction {} has a firstKeptEntryId that is {what}, not an entry id: its \
                     context holds only the summary and the entries after it",
                    text::safe(&d.compaction_id),
                )
            }
        };
        out.push(warning("dangling-first-kept", d.line, at(d.line), message));
    }
}

/// The `type:"session"` rows after the header (the open report's `extra_headers`), each with
/// its own id and the header's line and id. Under a corrupt header the recovery's own report
/// names the session rows instead.
fn extra_header_problems(report: &OpenReport, sm: &SessionManager, bytes: &[u8]) -> Vec<Problem> {
    let lines: Vec<usize> = report.extra_headers.iter().flatten().copied().collect();
    if lines.is_empty() {
        return Vec::new();
    }
    let mut header_line = None;
    let mut out = Vec::with_capacity(lines.len());
    for l in LineReader::new(bytes) {
        let LineContent::Json(env) = &l.content else {
            continue;
        };
        let Some(header_line) = header_line else {
            header_line = Some(l.raw.number);
            continue;
        };
        if !lines.contains(&l.raw.number) {
            continue;
        }
        let id = env.id.as_js_str().map_or_else(
            || "without a string id".to_owned(),
            |id| format!("id \"{}\"", text::safe(&id.to_str_lossy())),
        );
        out.push(error(
            "extra-header",
            Some(l.raw.number),
            Some(l.raw.offset),
            format!(
                "a second session header ({id}) after the header on line {header_line} (id \
                 \"{}\"): the session is the first header; this line is kept verbatim as an \
                 opaque row, outside the tree and the context (two files joined into one?)",
                text::safe(sm.get_session_id())
            ),
        ));
    }
    out
}

/// Every problem of a read-only open, sorted by line (errors and warnings).
pub(crate) fn problems(report: &OpenReport, sm: &SessionManager, bytes: &[u8]) -> Vec<Problem> {
    problems_limited(report, sm, bytes, Limit::NONE).0
}

/// [`problems`], at most `limit` of them (errors and warnings; information is always kept):
/// the first by line, the scan stopping once it found more. The flag is true when the limit
/// cut the list.
pub(crate) fn problems_limited(
    report: &OpenReport,
    sm: &SessionManager,
    bytes: &[u8],
    limit: Limit,
) -> (Vec<Problem>, bool) {
    let lines = FileLines::of(bytes);
    let offsets = &lines.offsets;
    let at = |line: Option<usize>| line.and_then(|l| offsets.get(l.wrapping_sub(1)).copied());
    let first = first_nonblank_line(bytes);
    let mut out = Vec::new();
    if report.empty {
        let message = if bytes.is_empty() {
            "the file is empty (0 bytes); a writable open would write a fresh header".to_owned()
        } else {
            format!(
                "the file holds only whitespace ({} bytes, no JSON); a writable open would write \
                 a fresh header",
                text::thousands(bytes.len())
            )
        };
        out.push(error("empty", None, None, message));
    }
    if let Some(ch) = &report.corrupt_header {
        let from = match ch.recovered_from_line {
            Some(l) => format!("promote the session header on line {l}"),
            None => "synthesise a new header".to_owned(),
        };
        let dropped = if ch.dropped_lines.is_empty() {
            String::new()
        } else {
            format!(
                ", dropping line{} {} from the live file",
                if ch.dropped_lines.len() == 1 { "" } else { "s" },
                lines_text(&ch.dropped_lines)
            )
        };
        out.push(error(
            "corrupt-header",
            first.map(|f| f.0),
            first.map(|f| f.1),
            format!(
                "the first parsed line is not a session header with a string id; a writable \
                 open would back the file up and rewrite it: {from}{dropped}"
            ),
        ));
    }
    if let Some(v) = report.unmigrated_version {
        out.push(Problem {
            kind: "needs-migration",
            severity: Severity::Info,
            line: first.map(|f| f.0),
            byte: first.map(|f| f.1),
            message: format!(
                "version {}: needs migration (a note, not a problem); a writable open would \
                 migrate the file to version 3 and rewrite it",
                number_to_string(v)
            ),
        });
    }
    out.extend(version_problem(report, sm, first));
    out.extend(header_id_problem(report, sm, first));
    for m in &report.malformed_lines {
        let detail = format!(
            "{} of the line (file offset {}){}",
            m.error,
            m.error_offset,
            if m.nul_padded { ", NUL-padded" } else { "" }
        );
        let (kind, message) = if m.torn {
            (
                "torn-tail",
                format!("the last line is unterminated and not JSON: {detail}"),
            )
        } else {
            ("malformed-line", format!("not JSON: {detail}"))
        };
        out.push(error(kind, Some(m.line), Some(m.line_offset), message));
    }
    if report.missing_final_newline && report.torn_tail.is_none() {
        let last = offsets.len();
        out.push(error(
            "missing-final-newline",
            (last > 0).then_some(last),
            Some(bytes.len()),
            "the last line is complete but has no newline".to_owned(),
        ));
    }
    for cycle in &report.cycles {
        let line = cycle
            .first()
            .and_then(|id| sm.get_entry(id))
            .and_then(|e| e.location().line);
        let mut ids: Vec<String> = cycle.iter().map(|c| text::safe(c).into_owned()).collect();
        if let Some(f) = ids.first().cloned() {
            ids.push(f);
        }
        out.push(error(
            "parent-cycle",
            line,
            at(line),
            format!("entries whose parents form a cycle: {}", ids.join(" → ")),
        ));
    }
    for d in &report.dangling_parents {
        out.push(error(
            "dangling-parent",
            d.line,
            at(d.line),
            format!(
                "entry {} has parentId \"{}\", which names nothing in the file",
                text::safe(&d.id),
                text::safe(&d.parent_id)
            ),
        ));
    }
    for d in &report.duplicate_ids {
        let lines: Vec<usize> = d.lines.iter().flatten().copied().collect();
        let line = lines.first().copied();
        out.push(error(
            "duplicate-id",
            line,
            at(line),
            format!(
                "id \"{}\" is on {} entries (lines {}); the last one wins",
                text::safe(&d.id),
                d.lines.len(),
                lines_text(&lines)
            ),
        ));
    }
    if report.corrupt_header.is_none() {
        out.extend(extra_header_problems(report, sm, bytes));
    }
    for l in &report.invalid_leaf_controls {
        out.push(error(
            "invalid-leaf-control",
            l.line,
            at(l.line),
            format!(
                "leaf control {} targets {}, which is not an entry; it is ignored",
                text::safe(&l.id),
                l.target_id.as_deref().map_or_else(
                    || "nothing".to_owned(),
                    |t| format!("\"{}\"", text::safe(t))
                )
            ),
        ));
    }
    line_problems(bytes, &lines, sm, limit, &mut out);
    first_kept_problems(report, sm, at, &mut out);
    out.sort_by_key(|p| p.line.unwrap_or(0));
    let Limit(Some(max)) = limit else {
        return (out, false);
    };
    let mut counted = 0usize;
    let before = out.len();
    out.retain(|p| {
        if p.severity == Severity::Info {
            return true;
        }
        counted += 1;
        counted <= max
    });
    let cut = out.len() < before;
    (out, cut)
}

/// Every problem of an opened file ([`problems_limited`]), from the bytes the open read (read
/// again only when the open did not keep them: an empty or whitespace-only file).
pub(crate) fn problems_of(
    ctx: &Ctx,
    path: &Path,
    ro: &ReadOnlyOpen,
    limit: Limit,
) -> anyhow::Result<(Vec<Problem>, bool)> {
    let sm = &ro.session;
    if sm.file_bytes().len() == ro.report.bytes {
        return Ok(problems_limited(&ro.report, sm, sm.file_bytes(), limit));
    }
    let bytes = ctx.backend.read_session(path)?;
    Ok(problems_limited(&ro.report, sm, &bytes, limit))
}

enum FileResult {
    Checked {
        entries: usize,
        problems: Vec<Problem>,
        /// `--max-problems` cut the list.
        truncated: bool,
        /// Every tip of the tree, full ids in file order (`None` for a version 1 file, whose
        /// ids are made up by each read).
        tips: Option<Vec<String>>,
    },
    Failed(String),
    /// A file OpenClaw's store manages that is not a transcript ([`crate::store_files::store_file_note`]):
    /// said in one line, not a problem.
    NotTranscript(String),
}

impl FileResult {
    fn errors(&self) -> usize {
        match self {
            FileResult::Checked { problems, .. } => problems
                .iter()
                .filter(|p| p.severity == Severity::Error)
                .count(),
            FileResult::Failed(_) | FileResult::NotTranscript(_) => 0,
        }
    }

    fn warnings(&self) -> usize {
        match self {
            FileResult::Checked { problems, .. } => problems
                .iter()
                .filter(|p| p.severity == Severity::Warning)
                .count(),
            FileResult::Failed(_) | FileResult::NotTranscript(_) => 0,
        }
    }
}

fn check_one(ctx: &Ctx, path: &Path, limit: Limit) -> FileResult {
    if ctx.store().is_none()
        && let Some(note) = crate::store_files::store_file_note(path)
    {
        return FileResult::NotTranscript(note);
    }
    if let Some(why) = ctx.backend.not_readable_reason(path) {
        return FileResult::Failed(why);
    }
    let spinner = crate::progress::reading(ctx, path, "checking");
    let ro = match ctx.backend.open_read_only(path) {
        Ok(ro) => ro,
        Err(e) => return FileResult::Failed(output::error_text(&e)),
    };
    // The tips (a walk of the whole tree) are found on a thread of their own meanwhile.
    let (found, tips) = std::thread::scope(|s| {
        let tips = s.spawn(|| tips(&ro.session));
        let found = problems_of(ctx, path, &ro, limit);
        let tips = tips.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        (found, tips)
    });
    spinner.finish();
    match found {
        Ok((mut problems, truncated)) => {
            // A version 1 file's ids are derived from its bytes: the same on every read.
            let tips = Some(tips);
            if let Some(tips) = tips.as_ref().filter(|t| t.len() > 1) {
                problems.insert(
                    0,
                    Problem {
                        kind: "multiple-tips",
                        severity: Severity::Info,
                        line: None,
                        byte: None,
                        message: tips_text(tips),
                    },
                );
            }
            if let Some(findings) = ctx.store().and_then(|r| r.sqlite_findings(path)) {
                // A SQLite session is rows, not a file: no header to write, no writable open.
                for p in problems.iter_mut().filter(|p| p.kind == "empty") {
                    p.message = SQLITE_EMPTY.to_owned();
                }
                match findings {
                    Ok(findings) => problems.extend(findings.iter().map(sqlite_problem)),
                    Err(e) => return FileResult::Failed(output::error_text(&e)),
                }
            }
            let entries = ro.session.entry_count();
            // A large session is freed off the main thread.
            let mut ro = ro;
            crate::dispose::session(&mut ro);
            FileResult::Checked {
                entries,
                problems,
                truncated,
                tips,
            }
        }
        Err(e) => FileResult::Failed(format!(
            "cannot read {}: {}",
            text::path(path),
            output::error_text(&e)
        )),
    }
}

/// A consistency finding of a SQLite session's database rows as a problem of `check`: kind
/// The `empty` problem's message for a SQLite session with no `transcript_events` row.
const SQLITE_EMPTY: &str = "no rows in the database (the import stored no line of this session)";

/// `sqlite-<finding>`, an error, except a leaf that differs from ours while the index says it
/// is stale (`sqlite-leaf-disagrees` of a stale index: a warning, OpenClaw recomputes it).
fn sqlite_problem(f: &session_store::sqlite::Finding) -> Problem {
    use session_store::sqlite::Finding as F;
    let (kind, severity) = match f {
        F::MissingWindow { .. } => ("sqlite-missing-window", Severity::Error),
        F::InvalidEntry { .. } => ("sqlite-invalid-entry", Severity::Error),
        F::WindowWithoutNode { .. } => ("sqlite-window-without-node", Severity::Error),
        F::SeqStart { .. } => ("sqlite-seq-start", Severity::Error),
        F::SeqGap { .. } => ("sqlite-seq-gap", Severity::Error),
        F::BadRow { .. } => ("sqlite-bad-row", Severity::Error),
        F::IdentityMismatch { .. } => ("sqlite-identity-mismatch", Severity::Error),
        F::IdentityWithoutRow { .. } => ("sqlite-identity-without-row", Severity::Error),
        F::ActiveRowWithoutIdentity { .. } => {
            ("sqlite-active-row-without-identity", Severity::Error)
        }
        F::IndexMissing { .. } => ("sqlite-index-missing", Severity::Warning),
        F::IndexBehind { .. } => ("sqlite-index-behind", Severity::Warning),
        F::IndexAhead { .. } => ("sqlite-index-ahead", Severity::Error),
        F::NeedsRebuild { .. } => ("sqlite-needs-rebuild", Severity::Warning),
        F::NotASession { .. } => ("sqlite-not-a-session", Severity::Error),
        F::LeafDisagrees { fresh: false, .. } => ("sqlite-leaf-disagrees", Severity::Warning),
        F::LeafDisagrees { .. } => ("sqlite-leaf-disagrees", Severity::Error),
        _ => ("sqlite-inconsistent", Severity::Error),
    };
    Problem {
        kind,
        severity,
        line: None,
        byte: None,
        message: text::safe(&f.to_string()).into_owned(),
    }
}

/// Every tip of the session's tree ([`SessionManager::tips`], from the forest tables without
/// building the tree): full ids, file order.
pub(crate) fn tips(sm: &SessionManager) -> Vec<String> {
    sm.tips().into_iter().map(|e| e.id().to_owned()).collect()
}

/// `tips: <id>, <id>` (ids with control and bidirectional characters escaped).
pub(crate) fn tips_text(tips: &[String]) -> String {
    let ids: Vec<String> = tips.iter().map(|t| text::safe(t).into_owned()).collect();
    format!("tips: {}", ids.join(", "))
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", text::thousands(n), if n == 1 { one } else { many })
}

/// `sessions check FILE...`.
pub(crate) fn run(
    ctx: &Ctx,
    paths: &[PathBuf],
    json: bool,
    limit: Limit,
    out: &mut Output,
) -> anyhow::Result<Outcome> {
    let mut failed = 0;
    let mut not_transcripts = 0;
    let mut with_errors = 0;
    let mut total_errors = 0;
    let mut total_warnings = 0;
    let mut items = Vec::with_capacity(paths.len());
    for p in paths {
        let r = check_one(ctx, p, limit);
        let shown = text::path(p);
        let (errors, warnings) = (r.errors(), r.warnings());
        total_errors += errors;
        total_warnings += warnings;
        match &r {
            FileResult::Failed(e) => {
                failed += 1;
                if !json {
                    out.line(&format!("{shown}: error: {e}"))?;
                }
            }
            FileResult::NotTranscript(note) => {
                not_transcripts += 1;
                if !json {
                    out.line(&format!("{shown}: {note}"))?;
                }
            }
            FileResult::Checked {
                entries,
                problems,
                truncated,
                ..
            } => {
                if errors > 0 {
                    with_errors += 1;
                }
                if !json {
                    for pr in problems {
                        let loc = match (pr.line, pr.byte) {
                            (Some(l), Some(b)) => format!("{shown}:{l}: byte {b}"),
                            (Some(l), None) => format!("{shown}:{l}"),
                            (None, Some(b)) => format!("{shown}: byte {b}"),
                            (None, None) => shown.clone(),
                        };
                        let sev = match pr.severity {
                            Severity::Error => "",
                            Severity::Warning => "warning: ",
                            Severity::Info => "info: ",
                        };
                        out.line(&format!("{loc}: {sev}{}: {}", pr.kind, pr.message))?;
                    }
                    if *truncated && let Limit(Some(n)) = limit {
                        out.line(&format!(
                            "{shown}: stopped after {} (--max-problems {n}); the rest of the \
                             file was not checked",
                            plural(n, "problem", "problems")
                        ))?;
                    }
                    if errors == 0 {
                        let mut ok =
                            format!("{shown}: ok ({}", plural(*entries, "entry", "entries"));
                        if warnings > 0 {
                            ok.push_str(&format!(", {}", plural(warnings, "warning", "warnings")));
                        }
                        ok.push(')');
                        out.line(&ok)?;
                    }
                }
            }
        }
        items.push((p.display().to_string(), r));
    }
    if json {
        let arr: Vec<JsValue> = items
            .iter()
            .map(|(file, r)| {
                let mut o = JsObject::new();
                o.insert("file", JsValue::from(file.as_str()));
                let (ok, error, problems, tips) = match r {
                    FileResult::Failed(e) => {
                        (false, JsValue::from(e.as_str()), &[][..], JsValue::Null)
                    }
                    FileResult::NotTranscript(_) => (true, JsValue::Null, &[][..], JsValue::Null),
                    FileResult::Checked { problems, tips, .. } => (
                        r.errors() == 0,
                        JsValue::Null,
                        problems.as_slice(),
                        tips.as_ref().map_or(JsValue::Null, |tips| {
                            JsValue::Array(tips.iter().map(|t| JsValue::from(t.as_str())).collect())
                        }),
                    ),
                };
                o.insert("ok", JsValue::Bool(ok));
                o.insert("error", error);
                o.insert("tips", tips);
                // Only for a store file that is not a transcript (what it is, in one phrase).
                if let FileResult::NotTranscript(n) = r {
                    o.insert("notTranscript", JsValue::from(n.as_str()));
                }
                let ps = problems
                    .iter()
                    .map(|p| {
                        let mut po = JsObject::new();
                        po.insert("kind", JsValue::from(p.kind));
                        po.insert(
                            "severity",
                            JsValue::from(match p.severity {
                                Severity::Error => "error",
                                Severity::Warning => "warning",
                                Severity::Info => "info",
                            }),
                        );
                        po.insert(
                            "line",
                            p.line.map_or(JsValue::Null, |l| JsValue::Number(l as f64)),
                        );
                        po.insert(
                            "byteOffset",
                            p.byte.map_or(JsValue::Null, |b| JsValue::Number(b as f64)),
                        );
                        po.insert("message", JsValue::from(p.message.as_str()));
                        JsValue::Object(po)
                    })
                    .collect();
                o.insert("problems", JsValue::Array(ps));
                // Only with --max-problems: whether it cut this file's list.
                if limit.0.is_some() {
                    let cut = matches!(
                        r,
                        FileResult::Checked {
                            truncated: true,
                            ..
                        }
                    );
                    o.insert("truncated", JsValue::Bool(cut));
                }
                JsValue::Object(o)
            })
            .collect();
        out.line(&session_format::normalize::to_json_string_indented(
            &JsValue::Array(arr),
            2,
        ))?;
    } else {
        let n = paths.len();
        let ok = n - failed - with_errors - not_transcripts;
        let mut summary = format!("checked {}: {ok} ok", plural(n, "file", "files"));
        if not_transcripts > 0 {
            summary.push_str(&format!(
                ", {not_transcripts} {}",
                if not_transcripts == 1 {
                    "not a transcript"
                } else {
                    "not transcripts"
                }
            ));
        }
        if with_errors > 0 {
            summary.push_str(&format!(
                ", {with_errors} with problems ({})",
                plural(total_errors, "problem", "problems")
            ));
        }
        if failed > 0 {
            summary.push_str(&format!(", {failed} unreadable"));
        }
        if total_warnings > 0 {
            summary.push_str(&format!(
                "; {}",
                plural(total_warnings, "warning", "warnings")
            ));
        }
        out.line(&summary)?;
    }
    Ok(if failed > 0 {
        Outcome::Failed
    } else if with_errors > 0 {
        Outcome::Problems
    } else {
        Outcome::Ok
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A transcript whose rows cycle through every per-row problem (and clean rows, blank,
    /// malformed and CRLF lines), `n` rows after the header; returns the bytes and the
    /// expected (kind, line) of each per-row problem in file order.
    fn many_problems(n: usize) -> (Vec<u8>, Vec<(&'static str, usize)>) {
        let mut b = br#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#.to_vec();
        b.push(b'\n');
        let mut expected = Vec::new();
        let mut parent = "null".to_owned();
        for i in 0..n {
            let line = i + 2;
            let id = format!("e{i:05}");
            let head = format!(r#"{{"type":"message","id":"{id}","parentId":{parent}"#);
            let row = match i % 10 {
                0 => format!(
                    r#"{head},"message":{{"role":"user","content":"hello {i} \"quoted\" [{{"}}}}"#
                ),
                1 => {
                    expected.push(("invalid-content", line));
                    format!(
                        r#"{head},"message":{{"role":"assistant","content":[{{"type":"text","text":"x"}},null]}}}}"#
                    )
                }
                2 => {
                    expected.push(("invalid-message", line));
                    format!(r#"{head},"message":null}}"#)
                }
                3 => {
                    expected.push(("null-line", line));
                    "null".to_owned()
                }
                4 => {
                    expected.push(("non-string-name", line));
                    format!(r#"{{"type":"session_info","id":"{id}","parentId":{parent},"name":7}}"#)
                }
                5 => {
                    expected.push(("odd-content", line));
                    format!(r#"{head},"message":{{"role":"toolResult","content":5}}}}"#)
                }
                6 => format!(
                    r#"{head},"message":{{"role":"user","content":[{{"type":"text","text":"ok"}}]}}}}"#
                ),
                7 => "   ".to_owned(),
                8 => "{not json".to_owned(),
                _ => {
                    // An opaque row (no id) of type message is still looked at.
                    expected.push(("invalid-message", line));
                    r#"{"type":"message","message":"text"}"#.to_owned()
                }
            };
            if matches!(i % 10, 0 | 1 | 2 | 4 | 5 | 6) {
                parent = format!("\"{id}\"");
            }
            b.extend_from_slice(row.as_bytes());
            if i % 10 == 6 {
                b.push(b'\r');
            }
            b.push(b'\n');
        }
        (b, expected)
    }

    #[test]
    fn parallel_row_check_is_the_sequential_line_check() {
        let (bytes, expected) = many_problems(3_000);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("many.jsonl");
        session_store::io::write_raw(&path, &bytes).unwrap();
        let ro = SessionManager::open_read_only(&path, None).unwrap();
        let sm = &ro.session;
        assert_eq!(sm.file_bytes(), &bytes[..]);
        let rows: Vec<session_store::FileRow<'_>> = sm.file_rows().collect();
        let total: usize = rows.iter().map(|r| r.json.len()).sum();
        let lines = FileLines::of(&bytes);
        assert_eq!(rows.len(), lines.non_blank);
        let sequential = lines_problems(&bytes, Limit::NONE);
        let found: Vec<(&str, usize)> = sequential
            .iter()
            .map(|p| (p.kind, p.line.unwrap_or(0)))
            .collect();
        assert_eq!(found, expected);
        assert_eq!(sequential.len(), 1_800);
        for threads in [1, 2, 3, 8] {
            assert_eq!(
                rows_problems(
                    || rows.iter().copied(),
                    bytes.len(),
                    total,
                    Limit::NONE,
                    threads,
                    0
                ),
                sequential
            );
        }
        // The whole list as `check` builds it: the same per-row problems, from the index.
        let (all, cut) = problems_limited(&ro.report, sm, sm.file_bytes(), Limit::NONE);
        assert!(!cut);
        let per_row: Vec<&Problem> = all
            .iter()
            .filter(|p| !matches!(p.kind, "malformed-line" | "crlf"))
            .collect();
        assert_eq!(per_row, sequential.iter().collect::<Vec<_>>());
        assert_eq!(
            all.iter().filter(|p| p.kind == "malformed-line").count(),
            300
        );
        let crlf = all.iter().find(|p| p.kind == "crlf").unwrap();
        assert_eq!((crlf.line, crlf.byte), (Some(8), Some(lines.offsets[7])));
        assert!(
            crlf.message
                .starts_with("300 lines end with CRLF (the first is line 8)")
        );
    }

    #[test]
    fn max_problems_stops_early_and_keeps_the_first_by_line() {
        let (bytes, expected) = many_problems(3_000);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("many.jsonl");
        session_store::io::write_raw(&path, &bytes).unwrap();
        let ro = SessionManager::open_read_only(&path, None).unwrap();
        let sm = &ro.session;
        let rows: Vec<session_store::FileRow<'_>> = sm.file_rows().collect();
        let total: usize = rows.iter().map(|r| r.json.len()).sum();
        // Each chunk stops once it has more than the limit: far fewer than all 1,800.
        for threads in [1, 2, 4] {
            let some = rows_problems(
                || rows.iter().copied(),
                bytes.len(),
                total,
                Limit(Some(5)),
                threads,
                0,
            );
            assert!(some.len() > 5 && some.len() <= 4 * 6, "{}", some.len());
            let lines: Vec<(&str, usize)> = some
                .iter()
                .take(6)
                .map(|p| (p.kind, p.line.unwrap_or(0)))
                .collect();
            assert_eq!(lines, expected[..6]);
        }
        let (all, _) = problems_limited(&ro.report, sm, sm.file_bytes(), Limit::NONE);
        let (first, cut) = problems_limited(&ro.report, sm, sm.file_bytes(), Limit(Some(5)));
        assert!(cut);
        assert_eq!(first, all[..5]);
        let kinds: Vec<(&str, Option<usize>)> = first.iter().map(|p| (p.kind, p.line)).collect();
        assert_eq!(
            kinds,
            vec![
                ("invalid-content", Some(3)),
                ("invalid-message", Some(4)),
                ("null-line", Some(5)),
                ("non-string-name", Some(6)),
                ("odd-content", Some(7)),
            ]
        );
        // A limit above the count cuts nothing.
        let (same, cut) = problems_limited(&ro.report, sm, sm.file_bytes(), Limit(Some(5_000)));
        assert!(!cut);
        assert_eq!(same, all);
    }

    #[test]
    fn nesting_filter_skips_strings() {
        assert!(nesting_reaches(b"[[[1]]]", 3));
        assert!(!nesting_reaches(b"[[[1]]]", 4));
        assert!(!nesting_reaches(br#"{"a":"[[[[[[\"[[["}"#, 3));
        assert!(nesting_reaches(br#"{"a":"\\","b":[[1]]}"#, 3));
    }
}
