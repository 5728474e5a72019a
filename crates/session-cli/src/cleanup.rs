//! `sessions cleanup`: OpenClaw's session maintenance (openclaw-store.md §4) on an agent's
//! `sessions.json` and its directory, through
//! [`session_semantics::openclaw_store::maintenance`]: the reference's selection and order,
//! applied by archiving instead of deleting (docs/DEVIATIONS.md D38).

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde_json::{Value, json};
use session_semantics::openclaw_store::maintenance::{
    ApplyOptions, ApplyReport, DirScan, FileOutcome, MaintenanceConfig, MaintenanceMode,
    MaintenancePlan, PlanOptions, PlannedRename, RemovalReason, apply_plan, plan_maintenance,
};
use session_semantics::openclaw_store::{STORE_FILE_NAME, SessionStore};

use crate::address;
use crate::ctx::Ctx;
use crate::outcome::{Outcome, UsageError};
use crate::output::Output;
use crate::text;

pub(crate) const LONG_ABOUT: &str = "\
OpenClaw's session maintenance (session.maintenance in openclaw.json) on the sessions.json of
an agent (--agent ID, default main; --all-agents for every agent under <root>/agents) under
--root (the OpenClaw state directory, default $OPENCLAW_STATE_DIR, else ~/.openclaw), or on the
store file given by --store PATH. Settings come from $OPENCLAW_CONFIG_PATH, else
<root>/openclaw.json (plain JSON; defaults without it: mode enforce, pruneAfter 30d, maxEntries
500, no disk budget, resetArchiveRetention = pruneAfter).

What is selected, in OpenClaw 2026.6.11's order: with --fix-missing the rows whose transcript
is missing or header-only (at most 4096 bytes, no message line); rows whose updatedAt is older
than pruneAfter (never group, channel, thread and topic rows, nor --active-key); rows beyond
maxEntries (oldest first); with maxDiskBytes the disk budget; unreferenced transcripts,
checkpoints and trajectory files older than pruneAfter (mtime); and .reset./.deleted. archives
older than their retention (the time in the name).

What a run without --dry-run does (OpenClaw deletes; this command deletes nothing):
  sessions.json   the selected rows are removed, every other row and field kept byte for byte,
                  in one atomic rewrite that is refused when the file changed since it was read;
                  a sessions.json that is not a JSON object is refused and left as it is
  transcripts     each removed row's transcript, and its .trajectory.jsonl and
                  .trajectory-path.json sidecars, are renamed in place to
                  <name>.deleted.<time> (the time is --now, e.g. 2026-07-20T13-00-00.000Z), so
                  OpenClaw's own retention still sees them; a transcript another row still
                  references is left alone
  orphans         unreferenced files are renamed <name>.deleted.<time> as well
  archives        .reset./.deleted./.bak. archives past retention (or chosen by the disk budget)
                  are kept, and listed; --purge-archives deletes them, as OpenClaw does
The store is written first, then the files are renamed (each under its write lock, after a
re-check that it is the file that was scanned), and each rename is appended to
<sessions>/sessions-audit.log. Since only purged archives are deleted, the disk budget frees
no other bytes.
--dry-run writes nothing. --enforce applies even when session.maintenance.mode is warn (in warn
mode only --fix-missing rows are removed).

JSON output (--json): with one store, its summary; with several, {\"allAgents\": true, \"mode\",
\"dryRun\", \"stores\": [summary…]}. A summary has OpenClaw's fields {\"agentId\", \"storePath\",
\"mode\", \"dryRun\", \"beforeCount\", \"afterCount\", \"missing\", \"dmScopeRetired\", \"pruned\",
\"capped\", \"unreferencedArtifacts\": {\"scannedFiles\", \"removedFiles\", \"freedBytes\",
\"olderThanMs\"}, \"diskBudget\": {…}|null, \"wouldMutate\"}; without --dry-run also \"applied\":
true, \"appliedCount\", \"storeRewritten\", \"removedKeys\", \"files\": [{\"file\", \"reason\":
\"removed-row\"|\"unreferenced\"|\"disk-budget\"|\"archive-retention\", \"key\" (removed-row),
\"outcome\": \"renamed\"|\"kept\"|\"deleted\"|\"skipped\"|\"failed\", \"to\" (renamed), \"note\" (skipped,
failed)}] and \"auditLog\".

Exit codes: 0 nothing to do; 1 something was changed (with --dry-run: would be); 2 usage or I/O
error, a corrupt sessions.json, a store that changed during the run, or a rename that failed.";

/// What `sessions cleanup` was asked.
#[derive(Debug)]
pub(crate) struct CleanupRequest {
    pub(crate) agent: Option<String>,
    pub(crate) all_agents: bool,
    pub(crate) root: Option<PathBuf>,
    pub(crate) store: Option<PathBuf>,
    pub(crate) dry_run: bool,
    pub(crate) enforce: bool,
    pub(crate) fix_missing: bool,
    pub(crate) active_key: Option<String>,
    pub(crate) purge_archives: bool,
    pub(crate) json: bool,
}

/// One store to clean: its agent id and `sessions.json` path (absolute).
struct Target {
    agent_id: String,
    store_path: PathBuf,
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// The agent id of a store path shaped `…/agents/<id>/sessions/sessions.json`, else `main`.
fn agent_of_store(path: &Path) -> String {
    let parts: Vec<_> = path.iter().collect();
    let n = parts.len();
    if n >= 4 && parts[n - 2] == "sessions" && parts[n - 4] == "agents" {
        return parts[n - 3].to_string_lossy().into_owned();
    }
    "main".to_owned()
}

fn targets(ctx: &Ctx, req: &CleanupRequest, root: &Path) -> Result<Vec<Target>, UsageError> {
    if req.store.is_some() && (req.agent.is_some() || req.all_agents) {
        return Err(UsageError::new(
            "--store cannot be combined with --agent or --all-agents",
        ));
    }
    if req.agent.is_some() && req.all_agents {
        return Err(UsageError::new(
            "--agent and --all-agents cannot be used together",
        ));
    }
    let of_agent = |id: &str| Target {
        agent_id: id.to_owned(),
        store_path: absolute(
            &root
                .join("agents")
                .join(id)
                .join("sessions")
                .join(STORE_FILE_NAME),
        ),
    };
    if let Some(store) = &req.store {
        let path = absolute(&address::expand_tilde(store));
        return Ok(vec![Target {
            agent_id: agent_of_store(&path),
            store_path: path,
        }]);
    }
    let agents = address::agents(ctx, root);
    if agents.is_empty() {
        return Err(address::no_store_error(ctx, root, req.root.as_deref()));
    }
    if req.all_agents {
        return Ok(agents.iter().map(|a| of_agent(a)).collect());
    }
    let agent = req.agent.as_deref().unwrap_or("main");
    if !agents.iter().any(|a| a == agent) {
        return Err(UsageError::new(format!(
            "Unknown agent id {:?}: {} has agents {}",
            agent,
            text::path(&root.join("agents")),
            text::safe(&agents.join(", "))
        )));
    }
    Ok(vec![of_agent(agent)])
}

/// The settings: `$OPENCLAW_CONFIG_PATH`, else `<root>/openclaw.json`.
fn config(root: &Path) -> anyhow::Result<MaintenanceConfig> {
    let path = match std::env::var_os("OPENCLAW_CONFIG_PATH") {
        Some(p) if !p.is_empty() => address::expand_tilde(Path::new(&p)),
        _ => root.join("openclaw.json"),
    };
    Ok(MaintenanceConfig::load(&path)?)
}

fn summary_json(
    target: &Target,
    mode: MaintenanceMode,
    dry_run: bool,
    plan: &MaintenancePlan,
) -> Value {
    let u = plan.unreferenced;
    let budget = plan.disk_budget.map_or(Value::Null, |b| {
        json!({
            "totalBytesBefore": b.total_bytes_before,
            "totalBytesAfter": b.total_bytes_after,
            "removedFiles": b.removed_files,
            "removedEntries": b.removed_entries,
            "freedBytes": b.freed_bytes,
            "maxBytes": b.max_bytes,
            "highWaterBytes": b.high_water_bytes,
            "overBudget": b.over_budget,
        })
    });
    json!({
        "agentId": target.agent_id,
        "storePath": target.store_path.to_string_lossy(),
        "mode": mode.as_str(),
        "dryRun": dry_run,
        "beforeCount": plan.before_count,
        "afterCount": plan.after_count,
        "missing": plan.missing,
        "dmScopeRetired": 0,
        "pruned": plan.pruned,
        "capped": plan.capped,
        "unreferencedArtifacts": {
            "scannedFiles": u.scanned_files,
            "removedFiles": u.removed_files,
            "freedBytes": u.freed_bytes,
            "olderThanMs": u.older_than_ms,
        },
        "diskBudget": budget,
        "wouldMutate": plan.would_mutate,
    })
}

/// In warn mode a run removes only the `--fix-missing` rows and does not sweep (R4.16): the
/// plan cut to them, with the counts of what the run does (the sweep's summary all zero but
/// `olderThanMs`, as the reference's).
fn warn_only(mut p: MaintenancePlan) -> MaintenancePlan {
    p.removed_rows
        .retain(|r| r.reason == RemovalReason::Missing);
    p.files.clear();
    p.after_count = p.before_count - p.removed_rows.len();
    p.pruned = 0;
    p.capped = 0;
    p.unreferenced.scanned_files = 0;
    p.unreferenced.removed_files = 0;
    p.unreferenced.freed_bytes = 0;
    p.would_mutate = p.missing > 0;
    p
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

fn applied_json(summary: &mut Value, report: &ApplyReport, applied_count: usize) {
    let files: Vec<Value> = report
        .files
        .iter()
        .map(|f| {
            let mut v = json!({
                "file": file_name(&f.planned.path),
                "reason": f.planned.reason.label(),
            });
            if let session_semantics::openclaw_store::maintenance::FileReason::RemovedRow { key } =
                &f.planned.reason
            {
                v["key"] = json!(key);
            }
            match &f.outcome {
                FileOutcome::Renamed { to } => {
                    v["outcome"] = json!("renamed");
                    v["to"] = json!(file_name(to));
                }
                FileOutcome::Kept => v["outcome"] = json!("kept"),
                FileOutcome::Deleted => v["outcome"] = json!("deleted"),
                FileOutcome::Skipped { reason } => {
                    v["outcome"] = json!("skipped");
                    v["note"] = json!(reason);
                }
                FileOutcome::Failed { error } => {
                    v["outcome"] = json!("failed");
                    v["note"] = json!(error);
                }
                _ => v["outcome"] = json!("unknown"),
            }
            v
        })
        .collect();
    summary["applied"] = json!(true);
    summary["appliedCount"] = json!(applied_count);
    summary["storeRewritten"] = json!(report.store_written);
    summary["removedKeys"] = json!(report.removed_keys);
    summary["files"] = Value::Array(files);
    summary["staleLocksRemoved"] = json!(
        report
            .stale_locks_removed
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
    );
    summary["loadChanges"] = serde_json::to_value(&report.load_changes).unwrap_or(Value::Null);
    summary["auditLog"] = report
        .audit_log
        .as_ref()
        .map_or(Value::Null, |p| json!(p.to_string_lossy()));
}

fn text_plan(
    target: &Target,
    mode: MaintenanceMode,
    dry_run: bool,
    store: &SessionStore,
    plan: &MaintenancePlan,
    out: &mut Output,
) -> anyhow::Result<()> {
    out.line(&format!(
        "store {} (agent {}, mode {}{})",
        text::path(&target.store_path),
        text::safe(&target.agent_id),
        mode.as_str(),
        if dry_run { ", dry run" } else { "" }
    ))?;
    for (key, _) in store.entries() {
        let key = key.to_str_lossy();
        let action = plan
            .removed_rows
            .iter()
            .find(|r| r.key == key)
            .map_or("keep", |r| r.reason.label());
        out.line(&format!("  {action:<14} {}", text::safe(&key)))?;
    }
    let would = if dry_run { "Would" } else { "Will" };
    out.line(&format!(
        "{would} prune missing transcripts: {}; {} prune stale: {}; {} cap overflow: {}; \
         unreferenced files: {} ({} bytes){}",
        plan.missing,
        would.to_lowercase(),
        plan.pruned,
        would.to_lowercase(),
        plan.capped,
        plan.unreferenced.removed_files,
        plan.unreferenced.freed_bytes,
        plan.disk_budget.map_or_else(String::new, |b| format!(
            "; disk budget: {} of {} bytes, {} files and {} rows over the high water {}",
            b.total_bytes_before,
            b.max_bytes,
            b.removed_files,
            b.removed_entries,
            b.high_water_bytes
        )),
    ))?;
    if dry_run {
        for line in crate::store_ops::load_change_lines(store.load_changes(), true) {
            out.line(&format!("  {line}"))?;
        }
        for f in &plan.files {
            let name = file_name(&f.path);
            match &f.action {
                PlannedRename::Rename(to) => out.line(&format!(
                    "  would rename {} -> {} ({})",
                    text::safe(&name),
                    text::safe(to),
                    f.reason.label()
                ))?,
                PlannedRename::Keep => out.line(&format!(
                    "  would keep {} ({}; OpenClaw would delete it)",
                    text::safe(&name),
                    f.reason.label()
                ))?,
                PlannedRename::LeaveAlone(why) => out.line(&format!(
                    "  would leave {} alone: {}",
                    text::path(&f.path),
                    text::safe(why)
                ))?,
            }
        }
    }
    Ok(())
}

fn text_applied(
    report: &ApplyReport,
    applied_count: usize,
    store_path: &Path,
    out: &mut Output,
) -> anyhow::Result<()> {
    if report.store_written {
        out.line(&format!(
            "  rewrote {} (removed {} rows: {})",
            text::path(store_path),
            report.removed_keys.len(),
            text::safe(&report.removed_keys.join(", "))
        ))?;
    }
    for f in &report.files {
        let name = text::safe(&file_name(&f.planned.path)).into_owned();
        let line = match &f.outcome {
            FileOutcome::Renamed { to } => format!(
                "  renamed {name} -> {} ({})",
                text::safe(&file_name(to)),
                f.planned.reason.label()
            ),
            FileOutcome::Kept => format!(
                "  kept {name} ({}; OpenClaw would delete it)",
                f.planned.reason.label()
            ),
            FileOutcome::Skipped { reason } => {
                format!("  left {name} alone: {}", text::safe(reason))
            }
            FileOutcome::Failed { error } => {
                format!("  FAILED to rename {name}: {}", text::safe(error))
            }
            _ => format!("  {name}: ?"),
        };
        out.line(&line)?;
    }
    for lock in &report.stale_locks_removed {
        out.line(&format!(
            "  removed stale lock {} (its holder is gone)",
            text::path(lock)
        ))?;
    }
    for line in crate::store_ops::load_change_lines(&report.load_changes, false) {
        out.line(&format!("  {line}"))?;
    }
    out.line(&format!(
        "Applied maintenance. Current entries: {applied_count}"
    ))?;
    Ok(())
}

/// Runs `sessions cleanup`.
pub(crate) fn run(ctx: &Ctx, req: &CleanupRequest, out: &mut Output) -> anyhow::Result<Outcome> {
    let root = address::state_root(req.root.as_deref());
    let targets = targets(ctx, req, &root)?;
    let config = config(&root)?;
    let mode = if req.enforce {
        MaintenanceMode::Enforce
    } else {
        config.mode
    };
    let now_ms = ctx.now_ms();
    if !req.dry_run {
        // A running gateway owns its stores: the whole run is refused before anything is
        // planned, printed or written.
        for target in &targets {
            let dir = target.store_path.parent().unwrap_or_else(|| Path::new("."));
            crate::gateway::refuse_while_gateway_runs_on_store(ctx, dir)?;
        }
    }
    // Every store is loaded and planned before any is changed (the reference's preview runs
    // for every target first, R4.14).
    let mut planned = Vec::with_capacity(targets.len());
    for target in &targets {
        let store = SessionStore::load(&target.store_path)?;
        let scan = DirScan::read(&store)
            .with_context(|| format!("cannot scan {}", store.sessions_dir().display()))?;
        let plan = plan_maintenance(
            &store,
            &scan,
            &config,
            &PlanOptions {
                now_ms,
                active_key: req.active_key.as_deref(),
                fix_missing: req.fix_missing,
            },
        );
        // A warn-mode run (not a preview) does less than the preview counts.
        let plan = if !req.dry_run && mode == MaintenanceMode::Warn {
            warn_only(plan)
        } else {
            plan
        };
        planned.push((store, plan));
    }
    let mut summaries = Vec::with_capacity(targets.len());
    let mut changed = false;
    for (target, (store, plan)) in targets.iter().zip(&planned) {
        summaries.push(summary_json(target, mode, req.dry_run, plan));
        changed |= plan.would_mutate;
        if !req.json {
            text_plan(target, mode, req.dry_run, store, plan, out)?;
        }
    }
    if req.dry_run {
        print_summaries(req, mode, summaries, out)?;
        return Ok(if changed {
            Outcome::Changed
        } else {
            Outcome::Ok
        });
    }
    apply_all(req, mode, &targets, planned, summaries, out)
}

fn print_summaries(
    req: &CleanupRequest,
    mode: MaintenanceMode,
    mut summaries: Vec<Value>,
    out: &mut Output,
) -> anyhow::Result<()> {
    if !req.json {
        return Ok(());
    }
    let value = if summaries.len() == 1 {
        summaries.remove(0)
    } else {
        json!({"allAgents": true, "mode": mode.as_str(), "dryRun": req.dry_run, "stores": summaries})
    };
    out.line(&serde_json::to_string_pretty(&value)?)?;
    Ok(())
}

/// The store-writing part of `cleanup`: everything that changes a store happens here, after
/// the dry-run return.
fn apply_all(
    req: &CleanupRequest,
    mode: MaintenanceMode,
    targets: &[Target],
    planned: Vec<(SessionStore, MaintenancePlan)>,
    mut summaries: Vec<Value>,
    out: &mut Output,
) -> anyhow::Result<Outcome> {
    let mut changed = false;
    let mut failed = false;
    for (i, (target, (mut store, plan))) in targets.iter().zip(planned).enumerate() {
        let report = apply_plan(
            &mut store,
            &plan,
            ApplyOptions {
                purge_archives: req.purge_archives,
            },
        )?;
        let applied_count = store.len();
        changed |= report.store_written
            || report
                .files
                .iter()
                .any(|f| matches!(f.outcome, FileOutcome::Renamed { .. }));
        failed |= report.has_failures();
        // The reference's applied summary is its save's maintenance report, made after the
        // `--fix-missing` rows were removed: its `beforeCount` does not count them.
        summaries[i]["beforeCount"] = json!(plan.before_count - plan.missing);
        applied_json(&mut summaries[i], &report, applied_count);
        if !req.json {
            text_applied(&report, applied_count, &target.store_path, out)?;
        }
    }
    print_summaries(req, mode, summaries, out)?;
    Ok(if failed {
        Outcome::Failed
    } else if changed {
        Outcome::Changed
    } else {
        Outcome::Ok
    })
}
