//! `sessions clear`: archive (or with `--purge`, delete) one session or every session of an
//! agent, through [`session_semantics::retention::clear`]. Refuses without `--yes` or
//! `--dry-run`; never prompts.

use std::path::{Path, PathBuf};

use session_semantics::retention::{
    self, ClearMode, ClearTarget, MassSweep, Outcome as ActionOutcome,
};
use session_semantics::{SessionRef, StoreLayout};

use crate::address::{self, Locator};
use crate::ctx::Ctx;
use crate::outcome::Outcome;
use crate::outcome::UsageError;
use crate::output::Output;
use session_semantics::openclaw_store::lifecycle::{Disposal, LifecyclePlan};

use crate::{report, store_ops, text};

pub(crate) const LONG_ABOUT: &str = "\
Clear one session (--session NAME) or every session (--all) of an agent: move the files into
<root>/agents/<ID>/sessions/archive/ (a free name is chosen when one is taken), or with --purge
delete them. Only *.jsonl files directly in the sessions directory are cleared.

On an OpenClaw store (the sessions directory holds sessions.json) clear keeps the store
consistent for OpenClaw: --session NAME (a key such as agent:main:telegram:direct:123 or
telegram:direct:123, a file name or a session id) starts a new conversation on the row as
OpenClaw's /new does (a new sessionId, timestamps now, counters reset, the old transcript renamed
<file>.reset.<ts> in place; no new file until the first append); with --purge the row is removed
and its transcript and trajectory sidecars deleted; --all removes every row and renames every
transcript (orphans too) <file>.deleted.<ts> (deleted with --purge). sessions.json is written
first (refused, nothing written, when another writer changed it meanwhile; a sessions.json that
does not parse is refused and never replaced), the files renamed after; a transcript another row
still names is left alone. The report lists every row and file: with --json {\"store\",
\"dryRun\", \"disposal\", \"now\", \"archiveTimestamp\", \"rows\": [{\"key\", \"sessionId\", \"action\":
\"removed\"|\"reset\", \"newSessionId\"}], \"files\": [{\"file\", \"to\", \"role\", \"sessionId\",
\"bytes\", \"reason\", \"outcome\"}], \"leftAlone\": [{\"key\", \"file\", \"reason\"}],
\"storeWritten\", \"auditLog\"}.

This changes the store, so it needs --yes; without --yes and without --dry-run it refuses
(exit code 2) and changes nothing. It never asks on the terminal. --dry-run prints what it would
do and changes nothing.

NAME is a session key (agent:<ID>:<rest>, which must belong to --agent), or as in the other
subcommands: the file name (with or without .jsonl), the part of the file name after its first
'_', or the session id from the file's header (in full or a unique prefix of at least 8
characters).

Never touched (listed under `left alone` with the reason): a file that is locked (its
write lock <name>.jsonl.lock is in use: its holder runs, or it is a malformed lock written less
than 30 s ago; a lock left by a dead process does not count, `sessions unlock --stale` removes
it), a symlink (one to another session of the directory is that session, handled once under
its own name; one to a file outside the sessions directory is reported with both paths and
never followed), anything that is not a
regular file, a file that is not a session or whose rows are malformed, a name that could
address another directory, a file that resolves outside the sessions directory. Before each
move or delete the file is checked again (same size and mtime, not locked).

Guard rails. --all clears more than half of the agent's live sessions whenever it can clear
them all (a mass sweep; the live sessions are every session directly in the sessions
directory, the ones left alone because they are locked or malformed included): without
--allow-mass it is refused (exit 2) before anything is touched, printing the plan and the
refusal. --dry-run still prints the plan, with a note that the run would be refused. A single
--session is never a mass sweep.

Audit log. Every move or delete is appended, right after it is done, to
<sessions>/sessions-audit.log, one JSON line per session: {\"time\" (ISO 8601, UTC),
\"action\": \"archive\"|\"delete\", \"file\", \"destination\" (relative to the sessions
directory; null when deleted), \"sessionId\", \"reason\": \"clear\", \"bytes\"}. The file is
created 0600 and only ever appended to; its name does not end in .jsonl, so no lister takes it
for a session. When it cannot be written nothing (more) is touched: those actions fail.
--dry-run and a refused run write nothing.

JSON output (--json): {\"agentId\", \"sessionsDir\", \"mode\": \"archive\"|\"purge\", \"dryRun\",
\"liveSessions\" (with --all; else 0), \"massSweep\": {\"sessions\", \"liveSessions\"}|null,
\"actions\": [{\"file\", \"destination\", \"sessionKey\", \"sessionId\", \"sizeBytes\", \"outcome\":
\"planned\"|\"archived\"|\"purged\"|\"skipped\"|\"failed\", plus \"reason\" or \"error\"}],
\"skipped\": [{\"file\", \"reason\", …}], \"audit\" (after a run that had something to do):
{\"log\", \"records\": [the lines appended], \"error\": string|null}, \"refused\"}
\"sessionKey\" is the key whose canonical file name this is, else null. OpenClaw lowercases
direct peer ids (spec §5.1), so slack_U02OPSBOT.jsonl names no key (null): the key
agent:ops:slack:direct:u02opsbot lives in slack_u02opsbot.jsonl.

Exit codes: 0 nothing to clear; 1 sessions were cleared (with --dry-run: would be); 2 usage
or I/O error, no --yes, a mass sweep without --allow-mass, the named session was left alone,
or a move, a delete or its audit line failed.";

/// The arguments of `clear`.
#[derive(Debug, Clone)]
pub(crate) struct ClearRequest {
    pub(crate) agent: String,
    pub(crate) session: Option<String>,
    pub(crate) all: bool,
    pub(crate) root: Option<PathBuf>,
    pub(crate) purge: bool,
    pub(crate) yes: bool,
    pub(crate) dry_run: bool,
    pub(crate) allow_mass: bool,
    pub(crate) json: bool,
}

/// True when `--session NAME` is a session key (`agent:<ID>:<rest>`, any case, surrounding
/// whitespace allowed) rather than a name: a key is never joined onto a path, its file name is
/// the key's encoded name (`session_semantics::layout::file_name_for_key`).
pub(crate) fn is_session_key(name: &str) -> bool {
    name.trim().to_lowercase().starts_with("agent:")
}

/// The refusal of a mass sweep (`archive`, `clear --all`): which agents, how many of their live
/// sessions, and how to go on.
pub(crate) fn mass_refusal(command: &str, verb: &str, mass: &[(String, MassSweep)]) -> String {
    let each: Vec<String> = mass
        .iter()
        .map(|(agent, m)| format!("agent {}: {m} would be {verb}", text::safe(agent)))
        .collect();
    format!(
        "refusing a mass {command}: {}; nothing was changed: check the plan (or run with \
         --dry-run), then add --allow-mass to go ahead",
        each.join("; ")
    )
}

/// The session `--session NAME` names.
fn session_ref(
    ctx: &Ctx,
    agent: &str,
    dir: &std::path::Path,
    name: &str,
) -> anyhow::Result<SessionRef> {
    if is_session_key(name) {
        return Ok(SessionRef::parse(agent, name)?);
    }
    // Only the files directly in the directory count: an archived copy in `archive/` (or a
    // file in any other sub-directory) must not make a live session's name ambiguous.
    let path = address::resolve_direct_session(ctx, dir, name)?;
    if path.parent() != Some(dir) {
        anyhow::bail!(UsageError::new(format!(
            "session {name:?} is {}, not directly in {}: clear only acts on the sessions \
             directly in the sessions directory",
            text::path(&path),
            text::path(dir)
        )));
    }
    let file = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(SessionRef::File {
        agent_id: agent.to_owned(),
        name: file,
    })
}

/// Clears (or with `--dry-run`, plans) and prints the report.
///
/// # Errors
/// Usage errors (no `--yes`, unknown agent or session), a sessions directory that cannot be
/// listed, stdout.
pub(crate) fn run(ctx: &Ctx, req: &ClearRequest, out: &mut Output) -> anyhow::Result<Outcome> {
    let mode = if req.purge {
        ClearMode::Purge
    } else {
        ClearMode::Archive
    };
    if !req.yes && !req.dry_run {
        anyhow::bail!(UsageError::new(format!(
            "clear changes the store ({}): add --yes to do it, or --dry-run to see what it \
             would do; nothing was changed",
            match mode {
                ClearMode::Archive => "it moves sessions into archive/",
                ClearMode::Purge => "--purge deletes sessions",
            }
        )));
    }
    let loc = Locator {
        root: req.root.clone(),
        agent: Some(req.agent.clone()),
        ..Locator::default()
    };
    let Some(dir) = address::sessions_dir(ctx, &loc)? else {
        anyhow::bail!(UsageError::new("clear needs --agent ID"));
    };
    if ctx.store().is_none()
        && let Some(store) = store_ops::store_path(&dir)
    {
        if req.session.is_none() && !req.all {
            anyhow::bail!(UsageError::new(
                "clear needs --session NAME (one session) or --all (every session of the agent)"
            ));
        }
        return clear_store(ctx, req, &dir, &store, out);
    }
    let target = match (&req.session, req.all) {
        (Some(name), false) => ClearTarget::Session(session_ref(ctx, &req.agent, &dir, name)?),
        (None, true) => ClearTarget::Agent(req.agent.clone()),
        _ => anyhow::bail!(UsageError::new(
            "clear needs --session NAME (one session) or --all (every session of the agent)"
        )),
    };
    let layout = StoreLayout::new(address::state_root(req.root.as_deref()));
    let plan = retention::plan_clear(&layout, &target, mode)?;
    let mass: Vec<(String, MassSweep)> = plan
        .report()
        .mass_sweep
        .map(|m| (plan.report().agent_id.clone(), m))
        .into_iter()
        .collect();
    let refused = !mass.is_empty() && !req.allow_mass && !req.dry_run;
    let report = if req.dry_run || refused {
        plan.report().clone()
    } else {
        plan.execute(None)
    };
    let verb = match mode {
        ClearMode::Archive => "archived",
        ClearMode::Purge => "deleted",
    };
    if req.json {
        let mut v = report::clear_json(&report)?;
        if let Some(o) = v.as_object_mut() {
            o.insert("refused".to_owned(), serde_json::Value::Bool(refused));
        }
        out.line(&serde_json::to_string_pretty(&v)?)?;
    } else {
        let text = report::clear_text(&report);
        // A refused run did not ask for a dry run: its header says it is a refused plan.
        let text = if refused {
            text.replacen(", dry run) for agent ", ", refused) for agent ", 1)
                .replacen("clear (", "clear plan (", 1)
        } else {
            text
        };
        out.line(&text)?;
        if req.dry_run && !req.allow_mass {
            for (agent, m) in &mass {
                out.line(&format!(
                    "note: agent {}: {m} would be {verb}: without --allow-mass this run is \
                     refused",
                    text::safe(agent)
                ))?;
            }
        }
    }
    if refused {
        out.error(&mass_refusal("clear", verb, &mass))?;
        return Ok(Outcome::Failed);
    }
    let failed = report.failed();
    if failed > 0 {
        out.error(&format!("{failed} session(s) could not be cleared"))?;
        return Ok(Outcome::Failed);
    }
    // One named session that was not cleared (left alone when planned, or skipped when
    // re-checked): the command did not do what it was asked.
    if let Some(name) = &req.session {
        let why = report
            .skipped
            .first()
            .map(|s| s.reason.to_string())
            .or_else(|| {
                report.actions.iter().find_map(|a| match &a.outcome {
                    ActionOutcome::Skipped { reason } => Some(reason.to_string()),
                    _ => None,
                })
            });
        if let Some(why) = why {
            out.error(&format!(
                "session {:?} was left alone: {}",
                text::safe(name),
                text::safe(&why)
            ))?;
            return Ok(Outcome::Failed);
        }
    }
    let done = report.actions.iter().any(|a| {
        matches!(
            a.outcome,
            ActionOutcome::Planned | ActionOutcome::Archived | ActionOutcome::Purged
        )
    });
    Ok(if done { Outcome::Changed } else { Outcome::Ok })
}

/// `clear` on an OpenClaw store: `--session` without `--purge` starts a new conversation on
/// the row (`/new`); with `--purge` the row is removed and its files deleted; an orphan is
/// renamed `.deleted.` (deleted with `--purge`). `--all` removes every row and every orphan
/// (a mass sweep: needs `--allow-mass`).
///
/// # Errors
/// A store that cannot be read, unknown names, and the errors of [`store_ops::commit`].
fn clear_store(
    ctx: &Ctx,
    req: &ClearRequest,
    dir: &Path,
    store_path: &Path,
    out: &mut Output,
) -> anyhow::Result<Outcome> {
    let store = store_ops::load(store_path)?;
    let disposal = if req.purge {
        Disposal::Purge
    } else {
        Disposal::Archive
    };
    let mut mass = None;
    let named = match &req.session {
        Some(name) => Some(store_ops::resolve_named(ctx, &store, dir, name)?),
        None => None,
    };
    let orphan_files = store_ops::orphans(&store, dir);
    let keys: Vec<String> = store
        .entries()
        .map(|(k, _)| k.to_str_lossy().into_owned())
        .collect();
    let mut plan = LifecyclePlan::new(store, ctx.now_ms(), disposal)?;
    match named {
        Some(store_ops::Named::Row(key)) if !req.purge => {
            plan.reset_row(&key, &store_ops::new_session_id())?
        }
        Some(store_ops::Named::Row(key)) => plan.delete_row(&key)?,
        Some(store_ops::Named::Orphan(file)) => plan.discard_file(&file),
        None => {
            for k in &keys {
                plan.delete_row(k)?;
            }
            for f in &orphan_files {
                plan.discard_file(f);
            }
            let n = keys.len() + orphan_files.len();
            mass = session_semantics::retention::MassSweep::judge(n, n);
        }
    }
    let refused = mass.is_some() && !req.allow_mass && !req.dry_run;
    if req.dry_run || refused {
        let report = plan.preview();
        store_ops::print(&report, req.json, out)?;
        if let Some(m) = mass
            && !req.allow_mass
        {
            let msg = mass_refusal(
                "clear",
                if req.purge { "deleted" } else { "archived" },
                &[(req.agent.clone(), m)],
            );
            if refused {
                out.error(&msg)?;
                return Ok(Outcome::Failed);
            }
            if !req.json {
                out.line(&format!(
                    "note: {m}: without --allow-mass this run is refused"
                ))?;
            }
        }
        return store_ops::outcome_of(&report, out);
    }
    let report = store_ops::commit(ctx, plan)?;
    store_ops::print(&report, req.json, out)?;
    store_ops::outcome_of(&report, out)
}
