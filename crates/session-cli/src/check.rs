//! `sessions check FILE...`: read-only verification. Everything the read-only open reports
//! (torn and malformed lines, a corrupt header, an empty file, an unmigrated version, parent
//! cycles, dangling parents, duplicate ids, invalid leaf controls, a missing final newline),
//! each with file, line and byte offset.

use std::path::{Path, PathBuf};

use session_format::json::{JsObject, JsValue};
use session_store::{OpenReport, SessionManager};

use crate::model;
use crate::output::Output;
use crate::{Outcome, text};

pub(crate) const LONG_ABOUT: &str = "\
Verify session files without writing to them (not even a backup): every file is opened read-only
and whatever OpenClaw would repair, rewrite or silently tolerate is reported with its file, line
and byte offset:

  torn-tail              the last line is unterminated and not JSON (a crash mid-write)
  malformed-line         a line that is not JSON (kept in place, invisible to readers)
  missing-final-newline  the last line is complete but has no newline
  empty                  the file is empty (a writable open writes a fresh header)
  corrupt-header         the first parsed line is not a session header (a writable open backs
                         the file up and rewrites it)
  unmigrated-version     version 1 or 2 (a writable open migrates and rewrites the file)
  parent-cycle           entries whose parents form a cycle
  dangling-parent        an entry whose parentId names nothing in the file
  duplicate-id           one id on several entries (the last one wins)
  invalid-leaf-control   a leaf control whose target is unknown (ignored)

Text output: `FILE: ok (N entries)` for a clean file, else one line per problem,
`FILE:LINE: byte OFFSET: KIND: message`, then a summary line.

JSON output (--json): an array with one object per file:
  {\"file\", \"ok\", \"error\": string | null,
   \"problems\": [{\"kind\", \"line\", \"byteOffset\", \"message\"}]}

Exit code: 0 when every file is clean, 1 when any problem was found, 2 when a file could not be
read (the other files are still checked).";

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    /// Machine-readable kind (see the help text).
    pub(crate) kind: &'static str,
    /// 1-based line.
    pub(crate) line: Option<usize>,
    /// Byte offset in the file.
    pub(crate) byte: Option<usize>,
    /// What is wrong, for people.
    pub(crate) message: String,
}

/// Byte offset of each 1-based line (index 0 = line 1).
fn line_offsets(bytes: &[u8]) -> Vec<usize> {
    session_format::line::lines(bytes)
        .map(|l| l.offset)
        .collect()
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

/// Every problem of a read-only open, sorted by line.
pub(crate) fn problems(report: &OpenReport, sm: &SessionManager, bytes: &[u8]) -> Vec<Problem> {
    let offsets = line_offsets(bytes);
    let at = |line: Option<usize>| line.and_then(|l| offsets.get(l.wrapping_sub(1)).copied());
    let first = first_nonblank_line(bytes);
    let mut out = Vec::new();
    if report.empty {
        out.push(Problem {
            kind: "empty",
            line: None,
            byte: None,
            message: "the file is empty; a writable open would write a fresh header".to_owned(),
        });
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
        out.push(Problem {
            kind: "corrupt-header",
            line: first.map(|f| f.0),
            byte: first.map(|f| f.1),
            message: format!(
                "the first parsed line is not a session header with a string id; a writable \
                 open would back the file up and rewrite it: {from}{dropped}"
            ),
        });
    }
    if let Some(v) = report.unmigrated_version {
        out.push(Problem {
            kind: "unmigrated-version",
            line: first.map(|f| f.0),
            byte: first.map(|f| f.1),
            message: format!(
                "version {}; a writable open would migrate the file to version 3 and rewrite it",
                session_format::json::number_to_string(v)
            ),
        });
    }
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
        out.push(Problem {
            kind,
            line: Some(m.line),
            byte: Some(m.line_offset),
            message,
        });
    }
    if report.missing_final_newline && report.torn_tail.is_none() {
        let last = offsets.len();
        out.push(Problem {
            kind: "missing-final-newline",
            line: (last > 0).then_some(last),
            byte: Some(bytes.len()),
            message: "the last line is complete but has no newline".to_owned(),
        });
    }
    for cycle in &report.cycles {
        let line = cycle
            .first()
            .and_then(|id| sm.get_entry(id))
            .and_then(|e| e.location().line);
        let mut ids: Vec<&str> = cycle.iter().map(String::as_str).collect();
        if let Some(f) = cycle.first() {
            ids.push(f);
        }
        out.push(Problem {
            kind: "parent-cycle",
            line,
            byte: at(line),
            message: format!("entries whose parents form a cycle: {}", ids.join(" → ")),
        });
    }
    for d in &report.dangling_parents {
        out.push(Problem {
            kind: "dangling-parent",
            line: d.line,
            byte: at(d.line),
            message: format!(
                "entry {} has parentId {:?}, which names nothing in the file",
                d.id, d.parent_id
            ),
        });
    }
    for d in &report.duplicate_ids {
        let lines: Vec<usize> = d.lines.iter().flatten().copied().collect();
        let line = lines.first().copied();
        out.push(Problem {
            kind: "duplicate-id",
            line,
            byte: at(line),
            message: format!(
                "id {:?} is on {} entries (lines {}); the last one wins",
                d.id,
                d.lines.len(),
                lines_text(&lines)
            ),
        });
    }
    for l in &report.invalid_leaf_controls {
        out.push(Problem {
            kind: "invalid-leaf-control",
            line: l.line,
            byte: at(l.line),
            message: format!(
                "leaf control {} targets {}, which is not an entry; it is ignored",
                l.id,
                l.target_id
                    .as_deref()
                    .map_or_else(|| "nothing".to_owned(), |t| format!("{t:?}"))
            ),
        });
    }
    out.sort_by_key(|p| p.line.unwrap_or(0));
    out
}

enum FileResult {
    Checked {
        entries: usize,
        problems: Vec<Problem>,
    },
    Failed(String),
}

fn check_one(path: &Path) -> FileResult {
    let ro = match model::open(path) {
        Ok(ro) => ro,
        Err(e) => return FileResult::Failed(format!("{e:#}")),
    };
    let bytes = match session_store::io::read_file(path) {
        Ok(b) => b,
        Err(e) => return FileResult::Failed(format!("cannot read {}: {e}", path.display())),
    };
    FileResult::Checked {
        entries: ro.session.entry_count(),
        problems: problems(&ro.report, &ro.session, &bytes),
    }
}

/// `sessions check FILE...`.
pub(crate) fn run(paths: &[PathBuf], json: bool, out: &mut Output) -> anyhow::Result<Outcome> {
    let mut failed = 0;
    let mut with_problems = 0;
    let mut total = 0;
    let mut items = Vec::with_capacity(paths.len());
    for p in paths {
        let r = check_one(p);
        let shown = p.display().to_string();
        match &r {
            FileResult::Failed(e) => {
                failed += 1;
                if !json {
                    out.line(&format!("{shown}: error: {e}"))?;
                }
            }
            FileResult::Checked { entries, problems } if problems.is_empty() => {
                if !json {
                    out.line(&format!(
                        "{shown}: ok ({} {})",
                        text::thousands(*entries),
                        if *entries == 1 { "entry" } else { "entries" }
                    ))?;
                }
            }
            FileResult::Checked { problems, .. } => {
                with_problems += 1;
                total += problems.len();
                if !json {
                    for pr in problems {
                        let loc = match (pr.line, pr.byte) {
                            (Some(l), Some(b)) => format!("{shown}:{l}: byte {b}"),
                            (Some(l), None) => format!("{shown}:{l}"),
                            (None, Some(b)) => format!("{shown}: byte {b}"),
                            (None, None) => shown.clone(),
                        };
                        out.line(&format!("{loc}: {}: {}", pr.kind, pr.message))?;
                    }
                }
            }
        }
        items.push((shown, r));
    }
    if json {
        let arr: Vec<JsValue> = items
            .iter()
            .map(|(file, r)| {
                let mut o = JsObject::new();
                o.insert("file", JsValue::from(file.as_str()));
                let (ok, error, problems) = match r {
                    FileResult::Failed(e) => (false, JsValue::from(e.as_str()), Vec::new()),
                    FileResult::Checked { problems, .. } => {
                        (problems.is_empty(), JsValue::Null, problems.clone())
                    }
                };
                o.insert("ok", JsValue::Bool(ok));
                o.insert("error", error);
                let ps = problems
                    .iter()
                    .map(|p| {
                        let mut po = JsObject::new();
                        po.insert("kind", JsValue::from(p.kind));
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
                JsValue::Object(o)
            })
            .collect();
        out.line(&session_format::normalize::to_json_string_indented(
            &JsValue::Array(arr),
            2,
        ))?;
    } else {
        let n = paths.len();
        let ok = n - failed - with_problems;
        let mut summary = format!(
            "checked {n} {}: {ok} ok",
            if n == 1 { "file" } else { "files" }
        );
        if with_problems > 0 {
            summary.push_str(&format!(
                ", {with_problems} with problems ({total} {})",
                if total == 1 { "problem" } else { "problems" }
            ));
        }
        if failed > 0 {
            summary.push_str(&format!(", {failed} unreadable"));
        }
        out.line(&summary)?;
    }
    Ok(if failed > 0 {
        Outcome::Failed
    } else if with_problems > 0 {
        Outcome::Problems
    } else {
        Outcome::Ok
    })
}
