//! `sessions archive`: retention (openclaw-jsonl.md §5.5; the `sessions.retention` config) for one
//! agent or every agent of a store, through [`session_semantics::retention::archive`]: plan,
//! report every action, and unless `--dry-run` move the sessions into `<sessions>/archive/`.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde_json::{Value, json};
use session_semantics::layout::SkippedAgentDir;
use session_semantics::policy::{
    Config, DurationSetting, MaxAge, MaxSize, RetentionConfig, SizeSetting, parse_byte_size,
    parse_max_age_ms,
};
use session_semantics::retention::{self, ArchivePlan, ArchiveReport, Outcome as ActionOutcome};
use session_semantics::{RetentionPolicy, StoreLayout};

use session_semantics::SessionRef;
use session_semantics::openclaw_store::lifecycle::{Disposal, LifecyclePlan, LifecycleReport};
use session_semantics::retention::{ClearMode, ClearTarget};

use crate::address::{self, Locator};
use crate::ctx::Ctx;
use crate::outcome::Outcome;
use crate::outcome::UsageError;
use crate::output::Output;
use crate::{report, store_ops, text};

pub(crate) const LONG_ABOUT: &str = "\
Archive old or surplus sessions of an agent (--agent ID) or of every agent of the store (--all),
under --root (default $OPENCLAW_STATE_DIR, else ~/.openclaw): the *.jsonl files directly in
<root>/agents/<ID>/sessions/ are moved into <root>/agents/<ID>/sessions/archive/ (a free name is
chosen when one is taken there), never deleted.

--session NAME (with --agent) archives that one session, whatever its age (no policy then).

On an OpenClaw store (the sessions directory holds sessions.json) nothing moves into archive/:
the rows of the chosen transcripts are removed from sessions.json first, then each transcript
is renamed in place to <file>.deleted.<ts> with its .trajectory.jsonl and .trajectory-path.json
sidecars, so OpenClaw's own retention still sees and ages them; a transcript no row names is
renamed likewise, one another row still names is left alone. The JSON of such an agent holds
\"selected\" (the transcripts the policy chose) and \"store\" (the rows and files changed, as in
`sessions clear --help`); with --session the JSON is that store report itself.

Which sessions:
  --max-age DURATION  sessions whose last activity is older (the newest user/assistant message
                      time inside the file, else the header's timestamp; never the file's
                      mtime, which any append changes); a duration with a unit: ms, s, m,
                      h, d, composites such as 1h30m; a bare number (30) is refused, since
                      OpenClaw reads it as days here and as ms elsewhere; `off` (or
                      `false`) disables; a zero or negative age (0d, 0s, 0ms, -1d) is
                      refused (exit 2): every session would be older
  --max-size SIZE     then, while the live sessions of the agent take more than SIZE bytes,
                      the oldest remaining ones (units b, kb, mb, gb, tb, binary: 1kb = 1024;
                      a bare number is bytes; `off` disables)
The policy comes from --config FILE, a JSON document {\"sessions\": {\"retention\": {\"maxAge\":
\"30d\", \"maxSize\": \"100mb\"}}} (maxAge defaults to 30d there, and a bare number there is
days, as in OpenClaw; false disables either), and the
flags, which win over the file. Without --config, --max-age nor --max-size there is no policy
and the command fails saying so.

Never touched (listed under `left alone` with the reason): a file that is locked (its
write lock <name>.jsonl.lock is in use: its holder runs, or it is a malformed lock written less
than 30 s ago; a lock left by a dead process does not count, `sessions unlock --stale` removes
it), a symlink (one to another session of the directory is that session, handled once under
its own name; one to a file outside the sessions directory is reported with both paths and
never followed), anything that is not a
regular file, a file that is not a session (no session header) or whose rows are malformed, a
file without any activity time, a name that could address another directory, a file that
resolves outside the sessions directory. Locked files count towards the live size. Before each
move the file is checked again (still a regular file with the planned size and mtime, not
locked); a file that changed is skipped.

Guard rails. A run that would archive more than half of an agent's live sessions (every
session directly in its sessions directory: those it would move, and those it leaves because
they are locked, have no activity time or have malformed rows) is a mass sweep: without
--allow-mass the whole command is refused (exit 2) before any file of any agent moves, and
prints the plan with the refusal. --dry-run still prints the plan, with a note for each agent
whose run would be refused.

Audit log. Every move is appended, right after it is done, to <sessions>/sessions-audit.log,
one JSON line per session: {\"time\" (ISO 8601, UTC), \"action\": \"archive\", \"file\",
\"destination\" (both relative to the sessions directory), \"sessionId\", \"reason\":
\"max-age\"|\"max-size\", \"bytes\"}. The file is created 0600 and only ever appended to;
its name does not end in .jsonl, so no lister takes it for a session. When it cannot be
written nothing (more) is moved: those actions fail. --dry-run and a refused run write nothing.

--dry-run prints the plan and changes nothing. --now TIME plans as of TIME (ISO 8601, UTC
unless it has an offset, or milliseconds since the epoch) instead of the current time.

JSON output (--json): {\"dryRun\", \"refused\" (a mass sweep refused: nothing moved),
\"reports\": [one per agent: {\"agentId\", \"sessionsDir\", \"archiveDir\", \"dryRun\", \"now\",
\"policy\": {\"maxAge\", \"maxAgeMs\", \"maxSize\", \"maxSizeBytes\"}, \"liveBytesBefore\",
\"liveBytesAfter\", \"liveSessions\", \"massSweep\": {\"sessions\", \"liveSessions\"}|null,
\"actions\": [{\"file\", \"destination\",
\"sessionKey\", \"sessionId\", \"lastActivity\", \"lastActivityMs\", \"sizeBytes\", \"reason\":
{\"kind\": \"max-age\", \"ageMs\"}|{\"kind\": \"max-size\"} (why it was chosen), \"outcome\":
\"planned\"|\"archived\"|\"skipped\"|\"failed\", plus \"skipReason\" (and \"lockFile\" or
\"error\" when the reason has one) when skipped at the re-check, \"error\" when failed}],
\"skipped\": [{\"file\", \"reason\", …}], \"audit\" (after a run that had something to move):
{\"log\", \"records\": [the lines appended], \"error\": string|null}}], \"errors\": [with --all, one per agent whose run
could not start: {\"agentId\", \"error\"}], \"skippedAgents\": [with --all, one per directory
of <root>/agents whose name is not an agent id, never archived: {\"name\", \"reason\"}]}
\"sessionKey\" is the key whose canonical file name this is, else null. OpenClaw lowercases
direct peer ids (spec §5.1), so slack_U02OPSBOT.jsonl names no key (null): the key
agent:ops:slack:direct:u02opsbot lives in slack_u02opsbot.jsonl.

Exit codes: 0 nothing to archive; 1 sessions were archived (with --dry-run: would be); 2 usage
or I/O error, no policy, a zero or negative max age, a mass sweep without --allow-mass, a move
or its audit line failed, or (--all) an agent's run could not start (the other agents are
still archived and reported).";

/// `--max-age`: a duration with a unit ([`crate::duration`]) or `off`.
#[derive(Debug, Clone)]
pub(crate) struct AgeFlag(Option<DurationSetting>);

/// `--max-size`: a byte size (bare numbers are bytes) or `off`.
#[derive(Debug, Clone)]
pub(crate) struct SizeFlag(Option<SizeSetting>);

fn is_off(s: &str) -> bool {
    matches!(s.trim(), "off" | "false")
}

/// Parses `--max-age`.
pub(crate) fn parse_age(s: &str) -> Result<AgeFlag, String> {
    if is_off(s) {
        return Ok(AgeFlag(None));
    }
    crate::duration::require_unit("--max-age", s)?;
    let ms = parse_max_age_ms(s).map_err(|e| e.to_string())?;
    Ok(AgeFlag(Some(DurationSetting {
        text: s.trim().to_owned(),
        ms,
    })))
}

/// Parses `--max-size`.
pub(crate) fn parse_size(s: &str) -> Result<SizeFlag, String> {
    if is_off(s) {
        return Ok(SizeFlag(None));
    }
    let bytes = parse_byte_size(s).map_err(|e| e.to_string())?;
    Ok(SizeFlag(Some(SizeSetting {
        text: s.trim().to_owned(),
        bytes,
    })))
}

/// Parses `--now`: ISO 8601 (UTC unless it has an offset) or epoch milliseconds, between the
/// years 0000 and 9999 (the times the report prints as ISO 8601).
pub(crate) fn parse_now(s: &str) -> Result<i64, String> {
    let ms = match s.trim().parse::<i64>() {
        Ok(ms) => ms,
        Err(_) => {
            session_format::time::parse_js_date_in(s.trim(), &chrono::Utc).ok_or_else(|| {
                format!(
                    "{s:?} is not a time: use ISO 8601 (2026-07-01T00:00:00Z) or epoch \
                     milliseconds"
                )
            })?
        }
    };
    if session_format::time::to_iso_string(ms).is_none() {
        return Err(format!(
            "{s:?} is out of range: the time must lie between 0000-01-01T00:00:00.000Z and \
             9999-12-31T23:59:59.999Z (epoch milliseconds -62167219200000 to 253402300799999)"
        ));
    }
    Ok(ms)
}

/// Refuses a `--since`/`--until` window that holds no time (a usage error): for `search`, whose
/// `--until` is inclusive (`until_inclusive`), since after until; for `usage`, whose `--until`
/// is exclusive, since at or after until.
pub(crate) fn check_window(
    since: Option<i64>,
    until: Option<i64>,
    until_inclusive: bool,
) -> Result<(), crate::outcome::UsageError> {
    let (Some(s), Some(u)) = (since, until) else {
        return Ok(());
    };
    let iso = |t: i64| session_format::time::to_iso_string(t).unwrap_or_else(|| t.to_string());
    let (empty, rule) = if until_inclusive {
        (
            s > u,
            "must not be after --until (the window is since <= time <= until",
        )
    } else {
        (
            s >= u,
            "must be before --until (the window is since <= time < until",
        )
    };
    if !empty {
        return Ok(());
    }
    Err(crate::outcome::UsageError::new(format!(
        "--since {rule}; got --since {} and --until {})",
        iso(s),
        iso(u)
    )))
}

/// The arguments of `archive`.
#[derive(Debug, Clone)]
pub(crate) struct ArchiveRequest {
    pub(crate) agent: Option<String>,
    pub(crate) all: bool,
    pub(crate) session: Option<String>,
    pub(crate) root: Option<PathBuf>,
    pub(crate) config: Option<PathBuf>,
    pub(crate) max_age: Option<AgeFlag>,
    pub(crate) max_size: Option<SizeFlag>,
    pub(crate) dry_run: bool,
    pub(crate) allow_mass: bool,
    pub(crate) json: bool,
}

/// The retention policy from `--config` and the flags (flags win).
///
/// # Errors
/// The config cannot be read or parsed; nothing limits anything.
fn policy(req: &ArchiveRequest) -> anyhow::Result<RetentionPolicy> {
    let mut cfg = match &req.config {
        Some(file) => {
            let problem = match crate::fsx::probe(file) {
                crate::fsx::Found::Regular => None,
                crate::fsx::Found::Other(kind) => Some(format!("is a {kind}")),
                _ => crate::fsx::not_readable_reason(file),
            };
            if let Some(reason) = problem {
                anyhow::bail!(UsageError::new(format!(
                    "--config {}: {reason}; the config must be a regular JSON file",
                    text::path(file)
                )));
            }
            let bytes = session_store::io::read_file(file)
                .with_context(|| format!("cannot read {}", text::path(file)))?;
            let text = String::from_utf8(bytes)
                .map_err(|_| anyhow::anyhow!("{} is not UTF-8", text::path(file)))?;
            // The error's own text already names line, column and byte offset; its
            // serde source would repeat them, so it is not chained.
            Config::from_json(&text)
                .map_err(|e| anyhow::anyhow!("{}: {e}", text::path(file)))?
                .sessions
                .retention
        }
        None => RetentionConfig {
            max_age: MaxAge(None),
            max_size: MaxSize(None),
        },
    };
    if let Some(AgeFlag(a)) = &req.max_age {
        cfg.max_age = MaxAge(a.clone());
    }
    if let Some(SizeFlag(s)) = &req.max_size {
        cfg.max_size = MaxSize(s.clone());
    }
    if cfg.max_age.0.is_none() && cfg.max_size.0.is_none() {
        let msg = match &req.config {
            None => "no retention policy: give --max-age DURATION (e.g. 30d) and/or --max-size \
                     SIZE (e.g. 100mb), or --config FILE with sessions.retention.maxAge / maxSize"
                .to_owned(),
            Some(file) => format!(
                "no retention policy: sessions.retention.maxAge and maxSize are both off in {} \
                 (or turned off by the flags); give --max-age DURATION or --max-size SIZE",
                text::path(file)
            ),
        };
        anyhow::bail!(UsageError::new(msg));
    }
    Ok(RetentionPolicy::from(&cfg))
}

/// The agents to work on (each checked to have a sessions directory), and with `--all` the
/// directories of `<root>/agents` that are not agents (their names are not agent ids).
fn agents(
    ctx: &Ctx,
    req: &ArchiveRequest,
    root: &Path,
) -> anyhow::Result<(Vec<String>, Vec<SkippedAgentDir>)> {
    match (&req.agent, req.all) {
        (Some(agent), false) => {
            let loc = Locator {
                root: req.root.clone(),
                agent: Some(agent.clone()),
                ..Locator::default()
            };
            address::sessions_dir(ctx, &loc)?;
            Ok((vec![agent.clone()], Vec::new()))
        }
        (None, true) => {
            if !root.join("agents").is_dir() {
                anyhow::bail!(address::no_store_error(ctx, root, req.root.as_deref()));
            }
            // Only directories are agents: a stray file such as `agents/notes` or
            // `agents/.DS_Store` is not one (and must not stop the other agents' runs); a
            // directory whose name is not an agent id is reported, never archived.
            let dirs = StoreLayout::new(root).agent_dirs()?;
            Ok((dirs.ids, dirs.skipped))
        }
        _ => anyhow::bail!(UsageError::new(
            "archive needs --agent ID (one agent) or --all (every agent of the store)"
        )),
    }
}

/// Plans (and unless `--dry-run`, executes) the archive runs and prints them. With `--all`, an
/// agent whose run cannot start (its sessions directory resolves outside the store, its
/// `archive` is not a directory, …) is reported and the other agents are still archived; the
/// exit code is then 2.
///
/// # Errors
/// Usage errors (no policy, unknown agent), a config that does not parse, a sessions
/// directory that cannot be listed (for a single `--agent`), stdout.
pub(crate) fn run(ctx: &Ctx, req: &ArchiveRequest, out: &mut Output) -> anyhow::Result<Outcome> {
    if let Some(name) = &req.session {
        return archive_session(ctx, req, name, out);
    }
    let policy = policy(req)?;
    let root = address::state_root(req.root.as_deref());
    let (ids, skipped_agents) = agents(ctx, req, &root)?;
    let layout = StoreLayout::new(&root);
    let now = ctx.now_ms();
    let mut plans: Vec<ArchivePlan> = Vec::with_capacity(ids.len());
    // Agents whose sessions directory holds sessions.json: the policy chooses the transcripts,
    // the store lifecycle archives them (rows first, then `.deleted.<ts>` in place).
    let mut store_plans: Vec<(ArchivePlan, LifecyclePlan)> = Vec::new();
    let mut errors: Vec<(String, String)> = Vec::new();
    for id in &ids {
        let planned = retention::plan_archive(&layout, id, &policy, now)
            .map_err(anyhow::Error::from)
            .and_then(|p| match store_ops::store_path(&p.report().sessions_dir) {
                None => Ok((p, None)),
                Some(store) => {
                    let dir = p.report().sessions_dir.clone();
                    let files: Vec<PathBuf> = p
                        .report()
                        .actions
                        .iter()
                        .map(|a| dir.join(&a.file))
                        .collect();
                    let mut lp =
                        LifecyclePlan::new(store_ops::load(&store)?, now, Disposal::Archive)?;
                    store_ops::add_files(&mut lp, &files)?;
                    Ok((p, Some(lp)))
                }
            });
        match planned {
            Ok((p, None)) => plans.push(p),
            Ok((p, Some(lp))) => store_plans.push((p, lp)),
            Err(e) if req.all => errors.push((id.clone(), crate::output::error_text(&e))),
            Err(e) => return Err(e),
        }
    }
    // Every agent is planned before any file moves: one mass sweep refuses the whole run.
    let mass: Vec<(String, retention::MassSweep)> = plans
        .iter()
        .chain(store_plans.iter().map(|(p, _)| p))
        .filter_map(|p| {
            p.report()
                .mass_sweep
                .map(|m| (p.report().agent_id.clone(), m))
        })
        .collect();
    let refused = !mass.is_empty() && !req.allow_mass && !req.dry_run;
    let reports: Vec<ArchiveReport> = if req.dry_run || refused {
        plans.into_iter().map(|p| p.report().clone()).collect()
    } else {
        plans.into_iter().map(|p| p.execute(None)).collect()
    };
    let mut store_reports: Vec<(ArchiveReport, LifecycleReport)> = Vec::new();
    for (p, lp) in store_plans {
        if req.dry_run || refused {
            store_reports.push((p.report().clone(), lp.preview()));
            continue;
        }
        match store_ops::commit(ctx, lp) {
            Ok(r) => store_reports.push((p.report().clone(), r)),
            Err(e) if req.all => {
                errors.push((p.report().agent_id.clone(), crate::output::error_text(&e)))
            }
            Err(e) => return Err(e),
        }
    }
    if req.json {
        let reports = reports
            .iter()
            .map(report::archive_json)
            .chain(
                store_reports
                    .iter()
                    .map(|(p, r)| store_ops::archive_json(p, r)),
            )
            .collect::<anyhow::Result<Vec<Value>>>()?;
        let errors: Vec<Value> = errors
            .iter()
            .map(|(agent, error)| json!({ "agentId": agent, "error": error }))
            .collect();
        let v = json!({
            "dryRun": req.dry_run,
            "refused": refused,
            "reports": reports,
            "errors": errors,
            "skippedAgents": skipped_agents,
        });
        out.line(&serde_json::to_string_pretty(&v)?)?;
    } else if reports.is_empty()
        && store_reports.is_empty()
        && errors.is_empty()
        && skipped_agents.is_empty()
    {
        out.line(&format!(
            "no agents with a sessions directory in {}",
            text::path(&root.join("agents"))
        ))?;
    } else if !reports.is_empty() || !store_reports.is_empty() {
        let texts: Vec<String> = reports
            .iter()
            .map(report::archive_text)
            .chain(store_reports.iter().map(|(p, r)| {
                // The sessions the policy left out (locked, not regular files, …), as the
                // layout without a store lists them.
                let skipped: String = p
                    .skipped
                    .iter()
                    .map(|s| {
                        format!(
                            "\n  left alone {}: {}",
                            text::safe(&s.file),
                            text::safe(&s.reason.to_string())
                        )
                    })
                    .collect();
                format!(
                    "{}{skipped}\n{}",
                    store_ops::archive_header(p, p.actions.len()),
                    store_ops::report_text(r)
                )
            }))
            .collect();
        out.line(&texts.join("\n\n"))?;
    }
    if !req.json {
        for s in &skipped_agents {
            out.line(&format!(
                "left alone agent directory {}: {}",
                text::path(&root.join("agents").join(&s.name)),
                text::safe(&s.reason)
            ))?;
        }
    }
    for (agent, error) in &errors {
        out.error(&format!(
            "agent {}: not archived: {}",
            text::safe(agent),
            text::safe(error)
        ))?;
    }
    if refused {
        out.error(&crate::clear::mass_refusal("archive", "archived", &mass))?;
        return Ok(Outcome::Failed);
    }
    if req.dry_run && !req.allow_mass && !req.json {
        for (agent, m) in &mass {
            out.line(&format!(
                "note: agent {}: {m} would be archived: without --allow-mass this run is \
                 refused",
                text::safe(agent)
            ))?;
        }
    }
    let failed: usize = reports.iter().map(ArchiveReport::failed).sum::<usize>()
        + store_reports.iter().map(|(_, r)| r.failed()).sum::<usize>();
    if failed > 0 {
        out.error(&format!("{failed} session(s) could not be archived"))?;
    }
    if failed > 0 || !errors.is_empty() {
        return Ok(Outcome::Failed);
    }
    let moved = reports
        .iter()
        .flat_map(|r| &r.actions)
        .any(|a| matches!(a.outcome, ActionOutcome::Planned | ActionOutcome::Archived))
        || store_reports
            .iter()
            .any(|(_, r)| r.store_written || !r.files.is_empty());
    Ok(if moved { Outcome::Changed } else { Outcome::Ok })
}

/// `archive --agent ID --session NAME`: that one session, whatever its age. On an OpenClaw
/// store its row is removed and its transcript (with sidecars) renamed `.deleted.<ts>` in
/// place (a transcript no row names likewise); elsewhere the file moves into `archive/`, as
/// `clear --session NAME --yes` does.
///
/// # Errors
/// Unknown agent or session, an unreadable store, the store write (see
/// [`store_ops::commit`]), stdout.
fn archive_session(
    ctx: &Ctx,
    req: &ArchiveRequest,
    name: &str,
    out: &mut Output,
) -> anyhow::Result<Outcome> {
    let Some(agent) = &req.agent else {
        anyhow::bail!(UsageError::new("archive --session needs --agent ID"));
    };
    let loc = Locator {
        root: req.root.clone(),
        agent: Some(agent.clone()),
        ..Locator::default()
    };
    let Some(dir) = address::sessions_dir(ctx, &loc)? else {
        anyhow::bail!(UsageError::new("archive --session needs --agent ID"));
    };
    if let Some(store_path) = store_ops::store_path(&dir) {
        let store = store_ops::load(&store_path)?;
        let named = store_ops::resolve_named(ctx, &store, &dir, name)?;
        let mut plan = LifecyclePlan::new(store, ctx.now_ms(), Disposal::Archive)?;
        match named {
            store_ops::Named::Row(key) => plan.delete_row(&key)?,
            store_ops::Named::Orphan(file) => plan.discard_file(&file),
        }
        if req.dry_run {
            let report = plan.preview();
            store_ops::print(&report, req.json, out)?;
            return store_ops::outcome_of(&report, out);
        }
        let report = store_ops::commit(ctx, plan)?;
        store_ops::print(&report, req.json, out)?;
        return store_ops::outcome_of(&report, out);
    }
    let path = address::resolve_direct_session(ctx, &dir, name)?;
    let file = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let layout = StoreLayout::new(address::state_root(req.root.as_deref()));
    let target = ClearTarget::Session(SessionRef::File {
        agent_id: agent.clone(),
        name: file,
    });
    let plan = retention::plan_clear(&layout, &target, ClearMode::Archive)?;
    let report = if req.dry_run {
        plan.report().clone()
    } else {
        plan.execute(None)
    };
    if req.json {
        out.line(&serde_json::to_string_pretty(&report::clear_json(
            &report,
        )?)?)?;
    } else {
        out.line(&report::clear_text(&report))?;
    }
    if report.failed() > 0 || !report.skipped.is_empty() {
        return Ok(Outcome::Failed);
    }
    Ok(if report.actions.is_empty() {
        Outcome::Ok
    } else {
        Outcome::Changed
    })
}
