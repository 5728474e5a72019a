//! `archive` and `clear` on an OpenClaw store (a sessions directory holding `sessions.json`),
//! through [`session_semantics::openclaw_store::lifecycle`] (openclaw-store.md §3.3, §3.4,
//! §7 J7.2–J7.6): rows are removed (or given a new conversation) in `sessions.json` first, then
//! the transcripts are renamed in place to `<file>.deleted.<ts>` / `<file>.reset.<ts>` with
//! their trajectory sidecars (or deleted with `--purge`), so the reference's own retention
//! still sees them. A transcript another row still names is left alone.
//!
//! Every write to the store goes through [`commit`], after the dry-run return of each command.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use session_semantics::openclaw_store::lifecycle::{
    FileOutcome, LeftAloneReason, LifecyclePlan, LifecycleReport, RowAction,
};
use session_semantics::openclaw_store::{ArtifactKind, STORE_FILE_NAME, SessionStore, classify};

use crate::ctx::Ctx;
use crate::outcome::{Outcome, UsageError};
use crate::output::Output;
use crate::text;

/// `dir/sessions.json` when it exists (anything at that name: a corrupt one is refused by
/// [`load`], never ignored).
pub(crate) fn store_path(dir: &Path) -> Option<PathBuf> {
    let p = dir.join(STORE_FILE_NAME);
    std::fs::symlink_metadata(&p).is_ok().then_some(p)
}

/// Loads the store; a store that cannot be read or parsed is an error that says it was left
/// as it is.
///
/// # Errors
/// The load failed (`Corrupt` with the byte offset, `NotAnObject`, I/O).
pub(crate) fn load(path: &Path) -> anyhow::Result<SessionStore> {
    SessionStore::load(path).map_err(|e| {
        anyhow::anyhow!(
            "{}; nothing was changed (a sessions.json that does not parse is never replaced: \
             fix or restore it first)",
            text::safe(&e.to_string())
        )
    })
}

/// The keys of the rows whose transcript is `file`.
pub(crate) fn rows_of(store: &SessionStore, file: &Path) -> Vec<String> {
    store
        .entries()
        .map(|(k, _)| k.to_str_lossy().into_owned())
        .filter(|k| store.transcript_of(k).as_deref() == Some(file))
        .collect()
}

/// The transcripts directly in `dir` that no row of `store` names (orphans, R6.2): top-level
/// regular `*.jsonl` files that are primary transcripts (R1.14), sorted by name.
pub(crate) fn orphans(store: &SessionStore, dir: &Path) -> Vec<PathBuf> {
    let named: Vec<PathBuf> = store
        .entries()
        .filter_map(|(k, _)| store.transcript_of(&k.to_str_lossy()))
        .collect();
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .filter(|e| {
                    matches!(
                        classify(&e.file_name().to_string_lossy()),
                        ArtifactKind::Primary { .. }
                    )
                })
                .map(|e| e.path())
                .filter(|p| !named.contains(p))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// Adds the rows of each chosen file (removed) or, for a file no row names, the file itself
/// (an orphan) to `plan`.
///
/// # Errors
/// A row vanished from the plan's store (cannot happen for keys just read from it).
pub(crate) fn add_files(plan: &mut LifecyclePlan, files: &[PathBuf]) -> anyhow::Result<()> {
    for f in files {
        let rows = rows_of(plan.store(), f);
        if rows.is_empty() {
            plan.discard_file(f);
        }
        for k in rows {
            plan.delete_row(&k)?;
        }
    }
    Ok(())
}

/// Writes the plan: `sessions.json` first, then the renames (the one place `archive` and
/// `clear` write an OpenClaw store; a running-gateway check belongs in front of it).
///
/// # Errors
/// A running OpenClaw gateway (unless `--offline-ok`), a locked transcript, an unusable audit log, or a store another writer changed since it was
/// loaded (nothing written in each case), or a failed store write.
pub(crate) fn commit(ctx: &Ctx, plan: LifecyclePlan) -> anyhow::Result<LifecycleReport> {
    crate::gateway::refuse_while_gateway_runs_on_store(ctx, plan.store().sessions_dir())?;
    plan.apply().map_err(|e| {
        anyhow::anyhow!(
            "{}{}",
            text::safe(&e.to_string()),
            if matches!(
                e,
                session_semantics::openclaw_store::lifecycle::LifecycleError::Store(
                    session_semantics::openclaw_store::SessionStoreError::Changed { .. }
                )
            ) {
                " (another writer, such as a running gateway, saved it meanwhile): nothing was \
                 written and no file renamed; run the command again"
            } else {
                ""
            }
        )
    })
}

fn rel(dir: &Path, p: &Path) -> String {
    text::path(p.strip_prefix(dir).unwrap_or(p))
}

fn human_bytes(b: u64) -> String {
    if b < 1024 {
        format!("{b} B")
    } else {
        format!("{:.1} KiB", b as f64 / 1024.0)
    }
}

/// The text of a lifecycle report, every name escaped.
pub(crate) fn report_text(r: &LifecycleReport) -> String {
    let dir = r.store.parent().unwrap_or(Path::new("."));
    let mut out = format!(
        "OpenClaw store {}{} (now {})\n",
        text::path(&r.store),
        if r.dry_run { ", dry run" } else { "" },
        r.now
    );
    for row in &r.rows {
        let id = row
            .session_id
            .as_deref()
            .map(text::safe)
            .unwrap_or_default();
        match &row.action {
            RowAction::Removed => out.push_str(&format!(
                "  row {}: {} (sessionId {id})\n",
                text::safe(&row.key),
                if r.dry_run {
                    "would be removed"
                } else {
                    "removed"
                }
            )),
            RowAction::Reset { new_session_id } => out.push_str(&format!(
                "  row {}: {} new conversation, sessionId {id} -> {}\n",
                text::safe(&row.key),
                if r.dry_run {
                    "would start a"
                } else {
                    "started a"
                },
                text::safe(new_session_id)
            )),
            _ => {}
        }
    }
    for f in &r.files {
        let verb = match (&f.outcome, &f.to) {
            (FileOutcome::Planned, Some(_)) => "would rename".to_owned(),
            (FileOutcome::Planned, None) => "would delete".to_owned(),
            (FileOutcome::Done, Some(_)) => "renamed".to_owned(),
            (FileOutcome::Done, None) => "deleted".to_owned(),
            (FileOutcome::Failed { error }, _) => format!("FAILED ({}):", text::safe(error)),
            _ => String::new(),
        };
        out.push_str(&format!("  {verb} {}", rel(dir, &f.file)));
        if let Some(to) = &f.to {
            out.push_str(&format!(" -> {}", rel(dir, to)));
        }
        out.push_str(&format!("  ({})\n", human_bytes(f.bytes)));
    }
    for l in &r.left_alone {
        let what = l
            .file
            .as_deref()
            .map(|f| rel(dir, f))
            .or_else(|| l.key.as_deref().map(|k| format!("row {}", text::safe(k))))
            .unwrap_or_default();
        let why = match &l.reason {
            LeftAloneReason::SharedWith { keys } => format!(
                "other rows still name it: {}",
                keys.iter()
                    .map(|k| text::safe(k).into_owned())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            LeftAloneReason::Missing => "the transcript does not exist".to_owned(),
            LeftAloneReason::NotRegularFile => "not a regular file".to_owned(),
            LeftAloneReason::NoTranscript => "the row names no transcript".to_owned(),
            LeftAloneReason::OutsideStore => {
                "outside the store's directory (a file of another store is never renamed)"
                    .to_owned()
            }
            LeftAloneReason::SymlinkOutOfStore { target } => format!(
                "a symlink to {}, outside the store's directory",
                text::safe(&target.to_string_lossy())
            ),
            _ => "left alone".to_owned(),
        };
        out.push_str(&format!("  left alone {what}: {why}\n"));
    }
    let canonical_dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    for lock in &r.stale_locks_removed {
        // Lock files are named under the directory's canonical path.
        let shown = match lock.strip_prefix(&canonical_dir) {
            Ok(rest) => text::path(rest),
            Err(_) => rel(dir, lock),
        };
        out.push_str(&format!(
            "  removed stale lock {shown} (its holder is gone)\n"
        ));
    }
    for line in load_change_lines(&r.load_changes, r.dry_run) {
        out.push_str(&format!("  {line}\n"));
    }
    out.push_str(&format!(
        "  sessions.json: {}",
        match (r.store_written, r.dry_run) {
            (true, true) => "would be rewritten",
            (true, false) => "rewritten",
            (false, _) => "unchanged",
        }
    ));
    if let Some(log) = &r.audit_log {
        let n = r
            .files
            .iter()
            .filter(|f| f.outcome == FileOutcome::Done)
            .count();
        out.push_str(&format!(
            "\n  audit log {}: {n} {} appended",
            text::path(log),
            if n == 1 { "line" } else { "lines" }
        ));
    }
    out
}

/// The JSON of a lifecycle report: `{"store", "dryRun", "disposal", "now", "archiveTimestamp",
/// "rows": [{"key", "sessionId", "action": "removed"|"reset", "newSessionId"?}], "files":
/// [{"file", "to", "role", "sessionId", "bytes", "reason", "outcome", "error"?}], "leftAlone":
/// [{"key", "file", "reason", "keys"?}], "storeWritten", "auditLog"?}`.
///
/// # Errors
/// Serialisation (does not fail for these types).
/// One text line per load change the store write persists (`sessions.json: dropped row K
/// (not an object, or no safe sessionId; OpenClaw drops it at load too)`, `sessions.json:
/// field F of row K migrated as OpenClaw migrates it`).
pub(crate) fn load_change_lines(
    changes: &[session_semantics::openclaw_store::LoadChange],
    dry_run: bool,
) -> Vec<String> {
    use session_semantics::openclaw_store::LoadChange;
    let (drop, fix) = if dry_run {
        ("would drop", "would migrate")
    } else {
        ("dropped", "migrated")
    };
    changes
        .iter()
        .map(|c| match c {
            LoadChange::DroppedEntry { key } => format!(
                "sessions.json: {drop} row {} (not an object, or no safe sessionId; OpenClaw \
                 drops it at load too)",
                text::safe(key)
            ),
            LoadChange::ChangedField { key, field } => format!(
                "sessions.json: {fix} field {field} of row {} as OpenClaw does at load",
                text::safe(key)
            ),
            _ => "sessions.json: changed at load".to_owned(),
        })
        .collect()
}

pub(crate) fn report_json(r: &LifecycleReport) -> anyhow::Result<Value> {
    Ok(serde_json::to_value(r)?)
}

/// Whether the report changed (or would change) anything, and whether something failed.
pub(crate) fn outcome_of(r: &LifecycleReport, out: &mut Output) -> anyhow::Result<Outcome> {
    let failed = r.failed();
    if failed > 0 {
        out.error(&format!(
            "{failed} file(s) could not be renamed or deleted (the store was written; they keep \
             their names)"
        ))?;
        return Ok(Outcome::Failed);
    }
    Ok(if r.store_written || !r.files.is_empty() {
        Outcome::Changed
    } else {
        Outcome::Ok
    })
}

/// Prints a report as text or JSON.
///
/// # Errors
/// stdout.
pub(crate) fn print(r: &LifecycleReport, json: bool, out: &mut Output) -> anyhow::Result<()> {
    if json {
        out.line(&serde_json::to_string_pretty(&report_json(r)?)?)?;
    } else {
        out.line(&report_text(r))?;
    }
    Ok(())
}

/// The session `--session NAME` names in an OpenClaw store: its row (by key, short key, or the
/// file a row names) or a transcript no row names.
pub(crate) enum Named {
    /// A row, by stored key.
    Row(String),
    /// A transcript no row names.
    Orphan(PathBuf),
}

/// Resolves `--session NAME` in the OpenClaw store of `dir` (keys first, then names and ids
/// among the files directly in `dir`).
///
/// # Errors
/// Unknown or ambiguous keys and names (the error lists what exists); a file several rows
/// name (give one key).
pub(crate) fn resolve_named(
    ctx: &crate::ctx::Ctx,
    store: &SessionStore,
    dir: &Path,
    name: &str,
) -> anyhow::Result<Named> {
    if let Some(hit) = crate::address::lookup_key(ctx, dir, name)? {
        return Ok(Named::Row(hit.key));
    }
    let path = crate::address::resolve_direct_session(ctx, dir, name)?;
    let rows = rows_of(store, &path);
    match rows.len() {
        0 => Ok(Named::Orphan(path)),
        1 => Ok(Named::Row(rows.into_iter().next().unwrap_or_default())),
        _ => anyhow::bail!(UsageError::new(format!(
            "session {:?} is the transcript of several rows ({}): give one key",
            text::safe(name),
            rows.iter()
                .map(|k| text::safe(k).into_owned())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// A new session id as the gateway makes them (`crypto.randomUUID()`, v4; R1.9).
pub(crate) fn new_session_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// The text header of an archive report of an OpenClaw store, before the store report.
pub(crate) fn archive_header(
    r: &session_semantics::retention::ArchiveReport,
    chosen: usize,
) -> String {
    format!(
        "archive for agent {} in {} (now {}; max age {}, max size {}): {chosen} transcript(s) \
         chosen; OpenClaw store: rows removed first, transcripts renamed .deleted.<ts> in place",
        text::safe(&r.agent_id),
        text::path(&r.sessions_dir),
        r.now,
        text::safe(r.policy.max_age.as_deref().unwrap_or("off")),
        text::safe(r.policy.max_size.as_deref().unwrap_or("off")),
    )
}

/// The JSON of one agent's archive run on an OpenClaw store: the retention report's selection
/// (`actions` without `destination` and `outcome`, renamed `selected`), `skipped`, and
/// `store`: the lifecycle report ([`report_json`]).
///
/// # Errors
/// Serialisation.
pub(crate) fn archive_json(
    r: &session_semantics::retention::ArchiveReport,
    store: &LifecycleReport,
) -> anyhow::Result<Value> {
    let mut v = crate::report::archive_json(r)?;
    if let Some(o) = v.as_object_mut() {
        o.remove("archiveDir");
        o.insert("dryRun".to_owned(), Value::Bool(store.dry_run));
        let actions = o.remove("actions").unwrap_or(Value::Null);
        let selected: Vec<Value> = actions
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|x| {
                        json!({
                            "file": x.get("file"),
                            "sessionId": x.get("sessionId"),
                            "lastActivity": x.get("lastActivity"),
                            "sizeBytes": x.get("sizeBytes"),
                            "reason": x.get("reason"),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        o.insert("selected".to_owned(), Value::Array(selected));
        o.insert("store".to_owned(), report_json(store)?);
    }
    Ok(v)
}
