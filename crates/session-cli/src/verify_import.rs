//! `sessions verify-import [--root DIR] [--json] [--salvage OUT_DIR [--dry-run]]`: checks
//! what OpenClaw 2026.9.6's `doctor` import of the legacy JSONL store kept, against its
//! archives, protected manifest entries and left-behind transcripts
//! (`session_store::sqlite::verify`, openclaw-sqlite.md §4.7), and salvages the parseable lines
//! of every damaged session into new files outside the state directory.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use session_format::doctor_import::{BadLine, LineSpan, ReadStop};
use session_store::sqlite::verify::{
    LostReason, RowVerdict, SessionReport, SessionVerdict, UnparseableLine, VerifyReport, salvage,
    verify_state,
};

use crate::outcome::{Outcome, UsageError};
use crate::output::Output;
use crate::text;

pub(crate) const LONG_ABOUT: &str = "\
Verify OpenClaw's import of the legacy JSONL session store into its per-agent SQLite store
(OpenClaw 2026.8+; `openclaw doctor --session-sqlite import` or `doctor --fix`), and salvage
what it lost. Reads only: the database is opened read-only and its bytes never change.

What is checked, for every agent of the state directory (--root, else $OPENCLAW_STATE_DIR, else
~/.openclaw):
  - every agents/<id>/session-sqlite-import-archive/*.jsonl.imported-<ms> (the moved originals);
  - every transcript that a manifest under session-sqlite-migration-runs/ marks `protected`
    (imported only in part);
  - every agents/<id>/sessions/*.jsonl still there (doctor leaves a transcript whose import
    failed validation, e.g. two rows with one id and different text).
For each, the rows the import should have stored are re-derived exactly as OpenClaw 2026.9.6
does (64 KiB strict UTF-8 chunks, trim, JSON.parse, header defaults, content wrapping, v1/v2
migrations, codex rename, duplicate drop, JSON.stringify) and compared row by row with the
database:
  verbatim       the row is the source line
  re-serialised  the documented transforms: \\u escapes, \\/, whitespace, number spellings,
                 integer-like key order, duplicate keys (lossy: the first value is gone), big
                 integers (lossy), content wrapping, codex rename, v1/headerless ids,
                 header defaults, BOM/CRLF/padding
  equivalent     the same value spelled otherwise
  differs        a row that differs beyond the documented transforms
  lost           a parseable line with no row: after the first unparseable line (the import
                 keeps only the readable prefix), after a 64 KiB chunk holding invalid UTF-8,
                 refused for repeating an id, or missing from the database
  session-missing  no session window for the id: the whole session is missing
Unparseable lines (not JSON, invalid UTF-8, a torn last line) are listed with their line number
and byte offset. v1 ids are made from the transcript's path when doctor read it; when the
database's ids carry another consistent prefix (the state directory moved), that prefix is used
and the session says `ids re-derived from a moved path`.

--salvage OUT_DIR writes, for every session with lost lines or missing entirely,
OUT_DIR/<sessionId>.jsonl: every parseable line of the archive, byte for byte, in file order
(blank lines skipped; the unparseable ones, a torn tail included, are listed and left out). New
files get mode 0600; an existing file is never replaced (the run is refused before anything is
written), and OUT_DIR must lie outside the state directory. Such a file opens with `sessions`
and is accepted by OpenClaw's own import when placed in a legacy store. --dry-run lists the files
and writes nothing.

JSON (--json): {stateDir, manifests[], sessions: [{agentId, sessionKey, sessionId, source, kind
(archive|legacy), classification, verdict (clean|lost|differs|session-missing), expectedRows,
storedRows, appendedAfterImport, stop (null | {kind: json, line, offset, torn, message} | {kind:
utf8, line, badOffset, chunkOffset}), v1IdPrefix, idsFromMovedPath, rows: [{seq, line, id,
verdict (verbatim|reserialised|equivalent|differs), changes[], transforms[], lossy, expected?,
stored?}], lost: [{line, offset, bytes, id, type, role, reason
(after-unparseable|after-invalid-utf8|id-conflict|not-in-database), reasonLine?, badOffset?,
head}], lostCounts {kind: n}, unparseable: [{line, offset, bytes, torn, problem (json|utf8),
message, head}], droppedByDesign: [line]}], unreadable: [{path, problem}], salvage: null |
{outDir, dryRun, files: [{sessionId, path, lines, bytes, leftOut: [{line, offset, torn}]}]},
totals: {sessions, clean, lost, differs, sessionMissing, lostLines, unparseableLines,
rowsReserialised, rowsLossy, rowsEquivalent, rowsDiffering, unreadable}}. Lines are 1-based,
offsets are bytes from the start of the file, seq is the row's position in the database.

An agent with transcripts but no agents/<id>/agent/openclaw-agent.sqlite has not been imported
yet: it is listed under notImported [{agentId, database, transcripts}] (totals.notImported) and
its transcripts are not judged.

Exit codes: 0 nothing was lost; 1 some line was lost, a session is missing, or a row differs
beyond the documented transforms (also after --salvage: the database still lacks the lines);
2 usage error, a file or database could not be read, or an agent has no database yet.";

/// What the command line asked for.
#[derive(Debug)]
pub(crate) struct VerifyRequest {
    /// The state directory.
    pub(crate) root: PathBuf,
    /// `--json`.
    pub(crate) json: bool,
    /// `--salvage OUT_DIR`.
    pub(crate) salvage: Option<PathBuf>,
    /// `--dry-run` (with `--salvage`).
    pub(crate) dry_run: bool,
}

/// One salvage file (to be) written.
struct SalvageFile {
    session_id: String,
    path: PathBuf,
    bytes: Vec<u8>,
    lines: usize,
    left_out: Vec<UnparseableLine>,
}

/// The absolute, symlink-resolved form of `p`, resolving the longest existing ancestor.
fn resolved(p: &Path) -> PathBuf {
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let mut base = abs.clone();
    let mut rest = Vec::new();
    loop {
        if let Ok(c) = base.canonicalize() {
            let mut out = c;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (base.file_name().map(|n| n.to_owned()), base.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                base = parent.to_path_buf();
            }
            _ => return abs,
        }
    }
}

/// Runs `verify-import`.
///
/// # Errors
/// A [`UsageError`] for a state directory without `agents/`, an OUT_DIR inside the state
/// directory or one holding a salvage file already; I/O errors of writing the salvage files.
pub(crate) fn run(req: &VerifyRequest, out: &mut Output) -> anyhow::Result<Outcome> {
    if req.dry_run && req.salvage.is_none() {
        anyhow::bail!(UsageError::new(
            "--dry-run applies to --salvage OUT_DIR (verify-import itself never writes)"
        ));
    }
    if let Some(dir) = &req.salvage {
        let state = resolved(&req.root);
        let target = resolved(dir);
        if target.starts_with(&state) {
            anyhow::bail!(UsageError::new(format!(
                "--salvage {}: the salvage directory must lie outside the state directory {} \
                 (OpenClaw owns everything under it)",
                text::path(dir),
                text::path(&req.root)
            )));
        }
        if target.exists() && !target.is_dir() {
            anyhow::bail!(UsageError::new(format!(
                "--salvage {}: not a directory",
                text::path(dir)
            )));
        }
    }
    let report = verify_state(&req.root).map_err(|e| UsageError::new(e.to_string()))?;
    let mut files = Vec::new();
    if let Some(dir) = &req.salvage {
        for s in report.sessions.iter().filter(|s| damaged(s)) {
            let bytes = session_store::io::read_file(&s.source)?;
            let sv = salvage(&bytes);
            files.push(SalvageFile {
                session_id: s.session_id.clone(),
                path: dir.join(format!("{}.jsonl", s.session_id)),
                lines: sv.kept.len(),
                bytes: sv.bytes,
                left_out: sv.left_out,
            });
        }
        let taken: Vec<String> = files
            .iter()
            .filter(|f| f.path.symlink_metadata().is_ok())
            .map(|f| text::path(&f.path))
            .collect();
        if !taken.is_empty() {
            anyhow::bail!(UsageError::new(format!(
                "--salvage: {} already exist{}; salvage files are never replaced (nothing was \
                 written): move them away or pick another directory",
                taken.join(", "),
                if taken.len() == 1 { "s" } else { "" }
            )));
        }
        if !req.dry_run && !files.is_empty() {
            std::fs::create_dir_all(dir).map_err(|e| {
                anyhow::anyhow!(
                    "cannot create the salvage directory {}: {e}",
                    text::path(dir)
                )
            })?;
            for f in &files {
                session_store::io::create_new(&f.path, &f.bytes, None)
                    .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", text::path(&f.path)))?;
            }
        }
    }
    if req.json {
        let v = report_json(req, &report, &files);
        out.line(&serde_json::to_string_pretty(&v)?)?;
    } else {
        print_human(req, &report, &files, out)?;
    }
    for u in &report.unreadable {
        out.error(&format!(
            "{}: {}",
            text::path(&u.path),
            text::safe(&u.problem)
        ))?;
    }
    let problems = report
        .sessions
        .iter()
        .any(|s| s.verdict != SessionVerdict::Clean);
    Ok(
        if !report.unreadable.is_empty() || !report.not_imported.is_empty() {
            Outcome::Failed
        } else if problems {
            Outcome::Problems
        } else {
            Outcome::Ok
        },
    )
}

/// A session whose salvage is written: lines lost, or the whole session missing.
fn damaged(s: &SessionReport) -> bool {
    matches!(
        s.verdict,
        SessionVerdict::Lost | SessionVerdict::SessionMissing
    )
}

fn stop_json(stop: &Option<ReadStop>) -> Value {
    match stop {
        None => Value::Null,
        Some(ReadStop::Json { span, error, torn }) => json!({
            "kind": "json", "line": span.line, "offset": span.offset, "torn": torn,
            "message": error.to_string(),
        }),
        Some(ReadStop::Utf8 {
            bad_offset,
            chunk_offset,
            line,
        }) => json!({
            "kind": "utf8", "line": line, "badOffset": bad_offset, "chunkOffset": chunk_offset,
        }),
    }
}

fn problem_text(p: &BadLine) -> (&'static str, String) {
    match p {
        BadLine::Utf8 { offset } => ("utf8", format!("invalid UTF-8 at byte {offset}")),
        BadLine::Json(e) => ("json", format!("not JSON: {e}")),
        _ => ("other", "unparseable".to_owned()),
    }
}

fn span_json(span: LineSpan) -> (usize, usize, usize) {
    (span.line, span.offset, span.len)
}

fn session_json(s: &SessionReport) -> Value {
    let rows: Vec<Value> = s
        .rows
        .iter()
        .map(|r| {
            let mut v = json!({"seq": r.seq, "line": r.span.line, "id": r.id});
            match &r.verdict {
                RowVerdict::Verbatim => {
                    v["verdict"] = json!("verbatim");
                    v["changes"] = json!([]);
                    v["transforms"] = json!([]);
                    v["lossy"] = json!(false);
                }
                RowVerdict::Reserialised {
                    changes,
                    transforms,
                } => {
                    v["verdict"] = json!("reserialised");
                    v["changes"] = json!(changes.iter().map(|c| c.name()).collect::<Vec<_>>());
                    v["transforms"] =
                        json!(transforms.iter().map(|t| t.name()).collect::<Vec<_>>());
                    v["lossy"] = json!(changes.iter().any(|c| c.lossy()));
                }
                RowVerdict::Equivalent => {
                    v["verdict"] = json!("equivalent");
                    v["changes"] = json!([]);
                    v["transforms"] = json!([]);
                    v["lossy"] = json!(false);
                }
                RowVerdict::Differs { expected, stored } => {
                    v["verdict"] = json!("differs");
                    v["changes"] = json!([]);
                    v["transforms"] = json!([]);
                    v["lossy"] = json!(false);
                    v["expected"] = json!(expected);
                    v["stored"] = json!(stored);
                }
                _ => v["verdict"] = json!("other"),
            }
            v
        })
        .collect();
    let lost: Vec<Value> = s
        .lost
        .iter()
        .map(|l| {
            let (line, offset, bytes) = span_json(l.span);
            let mut v = json!({
                "line": line, "offset": offset, "bytes": bytes, "id": l.id,
                "type": l.entry_type, "role": l.role, "head": l.head,
            });
            match &l.reason {
                LostReason::AfterUnparseable { at } => {
                    v["reason"] = json!("after-unparseable");
                    v["reasonLine"] = json!(at);
                }
                LostReason::AfterInvalidUtf8 { bad_offset } => {
                    v["reason"] = json!("after-invalid-utf8");
                    v["badOffset"] = json!(bad_offset);
                }
                LostReason::IdConflict { line } => {
                    v["reason"] = json!("id-conflict");
                    v["reasonLine"] = json!(line);
                }
                LostReason::NotInDatabase => v["reason"] = json!("not-in-database"),
                _ => v["reason"] = json!("other"),
            }
            v
        })
        .collect();
    json!({
        "agentId": s.agent_id,
        "sessionKey": s.session_key,
        "sessionId": s.session_id,
        "source": s.source.display().to_string(),
        "kind": s.kind.name(),
        "classification": s.classification,
        "verdict": s.verdict.name(),
        "expectedRows": s.expected_rows,
        "storedRows": s.stored_rows,
        "appendedAfterImport": s.appended_after_import,
        "stop": stop_json(&s.stop),
        "v1IdPrefix": s.v1_id_prefix,
        "idsFromMovedPath": s.ids_from_moved_path,
        "rows": rows,
        "lost": lost,
        "lostCounts": s.lost_counts(),
        "unparseable": s.unparseable.iter().map(unparseable_json).collect::<Vec<_>>(),
        "droppedByDesign": s.dropped_by_design,
    })
}

fn unparseable_json(u: &UnparseableLine) -> Value {
    let (line, offset, bytes) = span_json(u.span);
    let (kind, message) = problem_text(&u.problem);
    json!({"line": line, "offset": offset, "bytes": bytes, "torn": u.torn, "problem": kind,
           "message": message, "head": u.head})
}

struct Totals {
    clean: usize,
    lost: usize,
    differs: usize,
    missing: usize,
    lost_lines: usize,
    unparseable: usize,
    reserialised: usize,
    lossy: usize,
    equivalent: usize,
    differing: usize,
}

fn totals(report: &VerifyReport) -> Totals {
    let count = |v: SessionVerdict| report.sessions.iter().filter(|s| s.verdict == v).count();
    let rows = |f: &dyn Fn(&RowVerdict) -> bool| {
        report
            .sessions
            .iter()
            .flat_map(|s| &s.rows)
            .filter(|r| f(&r.verdict))
            .count()
    };
    Totals {
        clean: count(SessionVerdict::Clean),
        lost: count(SessionVerdict::Lost),
        differs: count(SessionVerdict::Differs),
        missing: count(SessionVerdict::SessionMissing),
        lost_lines: report.sessions.iter().map(|s| s.lost.len()).sum(),
        unparseable: report.sessions.iter().map(|s| s.unparseable.len()).sum(),
        reserialised: rows(&|v| matches!(v, RowVerdict::Reserialised { .. })),
        lossy: report.sessions.iter().map(|s| s.lossy_rows().count()).sum(),
        equivalent: rows(&|v| matches!(v, RowVerdict::Equivalent)),
        differing: rows(&|v| matches!(v, RowVerdict::Differs { .. })),
    }
}

fn report_json(req: &VerifyRequest, report: &VerifyReport, files: &[SalvageFile]) -> Value {
    let t = totals(report);
    let salvage = req.salvage.as_ref().map(|dir| {
        json!({
            "outDir": dir.display().to_string(),
            "dryRun": req.dry_run,
            "files": files.iter().map(|f| json!({
                "sessionId": f.session_id,
                "path": f.path.display().to_string(),
                "lines": f.lines,
                "bytes": f.bytes.len(),
                "leftOut": f.left_out.iter().map(|l| json!({
                    "line": l.span.line, "offset": l.span.offset, "torn": l.torn,
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })
    });
    json!({
        "stateDir": req.root.display().to_string(),
        "manifests": report.manifests.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        "sessions": report.sessions.iter().map(session_json).collect::<Vec<_>>(),
        "unreadable": report.unreadable.iter().map(|u| json!({
            "path": u.path.display().to_string(), "problem": u.problem,
        })).collect::<Vec<_>>(),
        "notImported": report.not_imported.iter().map(|n| json!({
            "agentId": n.agent_id, "database": n.database.display().to_string(),
            "transcripts": n.transcripts,
        })).collect::<Vec<_>>(),
        "salvage": salvage,
        "totals": {
            "sessions": report.sessions.len(),
            "clean": t.clean,
            "lost": t.lost,
            "differs": t.differs,
            "sessionMissing": t.missing,
            "lostLines": t.lost_lines,
            "unparseableLines": t.unparseable,
            "rowsReserialised": t.reserialised,
            "rowsLossy": t.lossy,
            "rowsEquivalent": t.equivalent,
            "rowsDiffering": t.differing,
            "unreadable": report.unreadable.len(),
            "notImported": report.not_imported.len(),
        },
    })
}

fn print_human(
    req: &VerifyRequest,
    report: &VerifyReport,
    files: &[SalvageFile],
    out: &mut Output,
) -> anyhow::Result<()> {
    for s in &report.sessions {
        out.line(&format!(
            "{}  {}  {}",
            text::safe(s.session_key.as_deref().unwrap_or("(no key)")),
            text::safe(&s.session_id),
            match s.verdict {
                SessionVerdict::Clean => "clean: nothing lost",
                SessionVerdict::Lost => "LOST LINES",
                SessionVerdict::Differs => "DIFFERS",
                SessionVerdict::SessionMissing => "SESSION MISSING (no window in the database)",
                _ => "?",
            }
        ))?;
        out.line(&format!(
            "  {}: {}{}",
            s.kind.name(),
            text::path(&s.source),
            s.classification
                .as_deref()
                .map(|c| format!(" ({})", text::safe(c)))
                .unwrap_or_default()
        ))?;
        // `expected_rows` is what doctor's own reading of the file should store; the lines it
        // never read (after an unparseable line or bad UTF-8) or refused (id conflict) come on
        // top of it for the whole archive.
        let never_read = s
            .lost
            .iter()
            .filter(|l| !matches!(l.reason, LostReason::NotInDatabase))
            .count();
        let mut summary = format!(
            "  rows: {} in the database, {} expected from the whole archive, {} line{} lost",
            s.stored_rows,
            s.expected_rows + never_read,
            s.lost.len(),
            if s.lost.len() == 1 { "" } else { "s" },
        );
        if s.appended_after_import > 0 {
            summary.push_str(&format!(
                ", {} appended after the import",
                s.appended_after_import
            ));
        }
        out.line(&summary)?;
        match &s.stop {
            Some(ReadStop::Json { span, error, .. }) => out.line(&format!(
                "  the import stopped at line {} (byte {}): not JSON ({error}); only the lines \
                 before it were imported",
                span.line, span.offset
            ))?,
            Some(ReadStop::Utf8 {
                bad_offset,
                chunk_offset,
                ..
            }) => out.line(&format!(
                "  the import stopped at invalid UTF-8 (byte {bad_offset}): the 64 KiB chunk \
                 from byte {chunk_offset} on was not imported"
            ))?,
            _ => {}
        }
        for l in &s.lost {
            let why = match &l.reason {
                LostReason::AfterUnparseable { at } => format!("after unparseable line {at}"),
                LostReason::AfterInvalidUtf8 { bad_offset } => {
                    format!("after invalid UTF-8 at byte {bad_offset}")
                }
                LostReason::IdConflict { line } => {
                    format!("same id as line {line} with other text")
                }
                LostReason::NotInDatabase => "not in the database".to_owned(),
                _ => "lost".to_owned(),
            };
            out.line(&format!(
                "  lost line {} (byte {}, {}{}; {why}): {}",
                l.span.line,
                l.span.offset,
                text::safe(&l.kind()),
                l.id.as_deref()
                    .map(|i| format!(", id {}", text::safe(i)))
                    .unwrap_or_default(),
                text::one_line(&text::truncate(&l.head, 80)),
            ))?;
        }
        for u in &s.unparseable {
            let (_, msg) = problem_text(&u.problem);
            out.line(&format!(
                "  {} line {} (byte {}): {msg}: {}",
                if u.torn { "torn tail" } else { "unparseable" },
                u.span.line,
                u.span.offset,
                text::one_line(&text::truncate(&u.head, 80)),
            ))?;
        }
        let counts = s.lost_counts();
        if !counts.is_empty() {
            let parts: Vec<String> = counts
                .iter()
                .map(|(k, n)| format!("{n} {}", text::safe(k)))
                .collect();
            out.line(&format!("  lost: {}", parts.join(", ")))?;
        }
        for r in &s.rows {
            match &r.verdict {
                RowVerdict::Reserialised {
                    changes,
                    transforms,
                } => {
                    let names: Vec<&str> = changes
                        .iter()
                        .map(|c| c.name())
                        .chain(transforms.iter().map(|t| t.name()))
                        .collect();
                    let lossy = changes.iter().any(|c| c.lossy());
                    let what = if !transforms.is_empty() {
                        "stored with the documented transforms"
                    } else if lossy {
                        "re-serialised, information lost"
                    } else {
                        "re-serialised, semantically equal"
                    };
                    out.line(&format!(
                        "  row {} (line {}): {what}: {}",
                        r.seq,
                        r.span.line,
                        names.join(", ")
                    ))?;
                }
                RowVerdict::Equivalent => out.line(&format!(
                    "  row {} (line {}): spelled otherwise, the same value",
                    r.seq, r.span.line
                ))?,
                RowVerdict::Differs { expected, stored } => {
                    out.line(&format!(
                        "  row {} (line {}): DIFFERS beyond the documented transforms",
                        r.seq, r.span.line
                    ))?;
                    out.line(&format!(
                        "    expected: {}",
                        text::one_line(&text::truncate(expected, 100))
                    ))?;
                    out.line(&format!(
                        "    stored:   {}",
                        text::one_line(&text::truncate(stored, 100))
                    ))?;
                }
                _ => {}
            }
        }
        if let Some(prefix) = &s.v1_id_prefix {
            out.line(&format!(
                "  v1 ids rewritten by the import: {prefix}-<n>{}",
                if s.ids_from_moved_path {
                    " (ids re-derived from a moved path: the prefix was taken from the database)"
                } else {
                    ""
                }
            ))?;
        }
    }
    for n in &report.not_imported {
        out.line(&format!(
            "agent {}: NOT IMPORTED: no OpenClaw 2026.8+ database at {}; nothing has been \
             imported yet, so its {} legacy transcript{} {} not verified — OpenClaw 2026.9.6 \
             imports with `openclaw doctor --fix`",
            text::safe(&n.agent_id),
            text::path(&n.database),
            n.transcripts,
            if n.transcripts == 1 { "" } else { "s" },
            if n.transcripts == 1 { "is" } else { "are" },
        ))?;
    }
    if report.sessions.is_empty() && !report.not_imported.is_empty() {
        out.line(&format!(
            "no OpenClaw 2026.8+ database under {}; nothing has been imported yet — OpenClaw \
             2026.9.6 imports with `openclaw doctor --fix`",
            text::path(&req.root.join("agents"))
        ))?;
        return Ok(());
    }
    let t = totals(report);
    out.line(&format!(
        "{} session{}: {} clean, {} with lost lines, {} differing, {} missing entirely; {} \
         line{} lost in all; {} unparseable line{}; {} row{} re-serialised ({} lossy), {} \
         equivalent, {} differing",
        report.sessions.len(),
        if report.sessions.len() == 1 { "" } else { "s" },
        t.clean,
        t.lost,
        t.differs,
        t.missing,
        t.lost_lines,
        if t.lost_lines == 1 { "" } else { "s" },
        t.unparseable,
        if t.unparseable == 1 { "" } else { "s" },
        t.reserialised,
        if t.reserialised == 1 { "" } else { "s" },
        t.lossy,
        t.equivalent,
        t.differing,
    ))?;
    if req.salvage.is_none() && report.sessions.iter().any(damaged) {
        out.line(
            "next: `sessions verify-import --salvage OUT_DIR` writes each damaged session's \
             parseable lines to OUT_DIR/<sessionId>.jsonl (outside the state directory)",
        )?;
    }
    if let Some(dir) = &req.salvage {
        if !files.is_empty() && !req.dry_run {
            out.line(
                "next: to put a salvaged transcript back, stop the gateway, copy it to \
                 agents/<id>/sessions/<sessionId>.jsonl, add its key to agents/<id>/sessions/\
                 sessions.json ({\"<key>\":{\"sessionId\":…,\"sessionFile\":\"<sessionId>.jsonl\"}}) \
                 and run `openclaw doctor --session-sqlite import` (README: \"Putting a salvaged \
                 transcript back\")",
            )?;
        }
        if files.is_empty() {
            out.line(&format!(
                "salvage: nothing to salvage; nothing written to {}",
                text::path(dir)
            ))?;
        }
        for f in files {
            out.line(&format!(
                "salvage: {} {} ({} line{}, {} bytes; {} left out)",
                if req.dry_run { "would write" } else { "wrote" },
                text::path(&f.path),
                f.lines,
                if f.lines == 1 { "" } else { "s" },
                f.bytes.len(),
                f.left_out.len()
            ))?;
            for l in &f.left_out {
                out.line(&format!(
                    "  left out line {} (byte {}){}",
                    l.span.line,
                    l.span.offset,
                    if l.torn { ": torn tail" } else { "" }
                ))?;
            }
        }
    }
    Ok(())
}
