//! `sessions repair FILE`: OpenClaw 2026.6.11's `repairSessionFileIfNeeded` (openclaw-jsonl.md
//! §1.8, §7.5) on one session file, through [`session_store::repair_session_file_with`], under
//! the session write lock (§3.4–§3.5: the OpenClaw-compatible `<file>.lock` next to the real
//! file), keeping the byte-exact backup (docs/DEVIATIONS.md D16) unless `--no-backup`.
//! `--dry-run` takes no lock and writes nothing.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use session_store::identity::{FileId, FileIdentity, HardLinked};
use session_store::lock::{LockOptions, SessionWriteLock, WriteLockGuard};
use session_store::{RepairLevel, RepairOptions, RepairOutcome, RepairSkip};

use crate::outcome::Outcome;
use crate::output::Output;
use crate::text;

pub(crate) const LONG_ABOUT: &str = "\
Repair one session file as OpenClaw 2026.6.11 does before a run (repairSessionFileIfNeeded):
lines that are not JSON and message rows without an object message or a role are dropped; a
failed assistant turn with empty content gets the placeholder text; corrupted inline images are
replaced by a text block; blank user text becomes \"(continue)\"; missing code-mode and
Responses message-tool results are inserted. Rows the repair does not change keep their exact
bytes. A file that needs nothing is not written.

The repair runs under the session write lock: the OpenClaw-compatible lock file
<real directory>/<name>.jsonl.lock is created for the duration and removed afterwards, so it
never races an OpenClaw writer. FILE may be a symlink to a session in the same directory (or
below it): the file it leads to is repaired, locked and backed up; a symlink to a file outside
the store root is refused (exit 2, naming the link and its target) and nothing is written. The
store root is FILE's directory, or with --agent ID --session NAME the agent's sessions directory
(which must lie inside the state directory; an agents/<ID> link out of it is refused, as archive
and clear refuse it), or the --dir/--pi directory. The name is resolved once: a link re-pointed
while the command runs cannot redirect the write. The locks of the file's other names (the
symlink given, and symlinks to it in its directory) are taken too, since OpenClaw locks the
name it was given. A file with more than one hard link is refused (exit 2, naming its link
count): a rewrite would split its names into two files. A lock held by a running process is waited for, up to
--lock-timeout (default 60 s, or $OPENCLAW_SESSION_WRITE_LOCK_ACQUIRE_TIMEOUT_MS), then the
command fails naming the lock file and its holder. A lock whose holder is gone is reclaimed.

Before rewriting, the original bytes are copied to <file>.bak-<pid>-<ms> (same mode); the
backup is kept and its path printed (--no-backup deletes it once the rewritten file has been
read back and verified, as OpenClaw does). --dry-run reads the file, prints what the repair
would change, and writes nothing at all: no lock file, no backup, no rewrite.

Output: the file, the result (repaired; needs repair (dry run); nothing to repair; not
repaired: REASON), the count of each rule, and the backup.

JSON output (--json):
  {\"file\", \"dryRun\", \"needsRepair\", \"repaired\", \"reason\", \"droppedLines\",
   \"rewrittenAssistantMessages\", \"droppedBlankUserMessages\", \"rewrittenUserMessages\",
   \"removedCorruptedImageBlocks\", \"insertedToolResults\", \"backupPath\", \"lockPath\",
   \"messages\": [{\"level\": \"warn\"|\"debug\", \"text\"}]}
`reason` is null unless the repair was skipped or failed (OpenClaw's texts: \"invalid session
header\", \"empty session file\", \"repair failed: …\"); `backupPath` is null when no backup
exists afterwards; `lockPath` is the lock file used (null with --dry-run).

Exit codes: 0 nothing to repair; 1 the file needed repair (it was repaired, or with --dry-run
would be); 2 usage or I/O error, the lock could not be taken, or the repair was skipped or
failed (the reason is printed).";

/// What `repair` was asked to do.
#[derive(Debug, Clone)]
pub(crate) struct RepairRequest {
    /// The session file (checked to be a regular file).
    pub(crate) path: PathBuf,
    /// The store root ([`crate::address::write_root`]): the file the name leads to must lie
    /// inside it.
    pub(crate) root: PathBuf,
    /// Write nothing.
    pub(crate) dry_run: bool,
    /// Delete the backup once the rewrite is verified.
    pub(crate) no_backup: bool,
    /// `--lock-timeout`, overriding the environment's or the default 60 s.
    pub(crate) lock_timeout: Option<Duration>,
    /// Print JSON.
    pub(crate) json: bool,
}

/// Runs the repair and prints its report.
///
/// The name is resolved once ([`session_store::FileIdentity::resolve`]): the file it leads to
/// is checked against the store root, locked, re-checked under the lock (still the same
/// regular file, device and inode, with one link), backed up and rewritten; nothing resolves
/// the name again, so a link re-pointed during the command cannot redirect the write.
///
/// # Errors
/// The file cannot be resolved or lies outside the store root, the lock cannot be taken
/// (timeout, live stale holder, I/O), the file changed under the lock or has more than one
/// hard link, or stdout fails.
pub(crate) fn run(req: &RepairRequest, out: &mut Output) -> anyhow::Result<Outcome> {
    // The store root ([`crate::address::write_root`]): a name whose file lies outside it is
    // refused before anything is read for a rewrite, locked or backed up, in a dry run too.
    let id = session_store::FileIdentity::resolve(&req.path)
        .map_err(|e| anyhow::anyhow!("cannot resolve {}: {e}", text::path(&req.path)))?;
    id.check_within(&req.root)?;
    // The lock lives next to the real file, where OpenClaw (which knows the store path) looks.
    let real = id.canonical().to_path_buf();
    let options = RepairOptions {
        keep_backup: !req.no_backup,
        dry_run: req.dry_run,
    };
    let (outcome, lock_path) = if req.dry_run {
        check_links(&real)?;
        (
            session_store::repair_session_file_with(&real, None, &options),
            None,
        )
    } else {
        let mut lock = LockOptions::from_env();
        if let Some(t) = req.lock_timeout {
            lock.timeout = Some(t);
        }
        let guard = SessionWriteLock::acquire(&real, &lock)?;
        // OpenClaw 2026.6.11 locks the name it was given: a writer using an alias of this
        // file (the name given here, or another symlink to it in its directory) holds that
        // alias's lock, so those are taken too (docs/DEVIATIONS.md D29).
        let _alias_guards = alias_locks(&req.path, &id, &real, &lock)?;
        same_file_under_lock(&real, &id)?;
        check_links(&real)?;
        (
            session_store::repair_session_file_with(&real, None, &options),
            Some(guard.lock_path().to_path_buf()),
        )
    };
    if req.json {
        let v = to_json(&req.path, req, &outcome, lock_path.as_deref());
        out.line(&serde_json::to_string_pretty(&v)?)?;
    } else {
        write_text(&req.path, req, &outcome, out)?;
    }
    Ok(match &outcome.reason {
        Some(reason) => {
            out.error(&format!(
                "{} was not repaired: {}",
                text::path(&req.path),
                text::safe(&reason.to_string())
            ))?;
            Outcome::Failed
        }
        None if outcome.needs_repair() => Outcome::Changed,
        None => Outcome::Ok,
    })
}

/// The locks of the other names of `real`: the name given (when it is a symlink) and the
/// symlinks to it directly in its directory, each `realpath(dir)/<name>.lock`, taken with the
/// same timeout as the file's own lock.
fn alias_locks(
    given: &Path,
    id: &FileIdentity,
    real: &Path,
    options: &LockOptions,
) -> anyhow::Result<Vec<WriteLockGuard>> {
    let mut names: Vec<PathBuf> = real
        .parent()
        .map(|dir| session_store::identity::aliases_in(dir, real))
        .unwrap_or_default();
    if id.via_link() {
        names.push(given.to_path_buf());
    }
    let mut locks: Vec<SessionWriteLock> = Vec::new();
    for name in names {
        let lock = SessionWriteLock::of_name(&name)?;
        if lock.session_file() != real && !locks.contains(&lock) {
            locks.push(lock);
        }
    }
    locks.sort_by(|a, b| a.lock_path().cmp(b.lock_path()));
    let mut guards = Vec::with_capacity(locks.len());
    for lock in locks {
        guards.push(lock.acquire_this(options)?);
    }
    Ok(guards)
}

/// Under the lock: `real` is still the regular file the name was resolved to (same device and
/// inode, not a symlink swapped in since).
fn same_file_under_lock(real: &Path, id: &FileIdentity) -> anyhow::Result<()> {
    let now = std::fs::symlink_metadata(real).ok();
    let same = match (&now, id.file_id()) {
        (Some(m), Some(want)) => m.is_file() && FileId::of(m) == Some(want),
        (None, None) => true,
        _ => false,
    };
    if !same {
        anyhow::bail!(
            "{} changed while the command ran (it is no longer the file {} led to); nothing \
             was written",
            text::path(real),
            text::path(id.given())
        );
    }
    Ok(())
}

/// Refuses a file with more than one hard link ([`HardLinked`]).
fn check_links(real: &Path) -> anyhow::Result<()> {
    if let Ok(meta) = std::fs::symlink_metadata(real) {
        let links = session_store::identity::link_count(&meta);
        if meta.is_file() && links > 1 {
            return Err(HardLinked {
                file: real.to_path_buf(),
                links,
            }
            .into());
        }
    }
    Ok(())
}

fn result_text(req: &RepairRequest, o: &RepairOutcome) -> String {
    match &o.reason {
        Some(r) => format!("not repaired: {}", text::safe(&r.to_string())),
        None if o.repaired => "repaired".to_owned(),
        None if o.needs_repair() && req.dry_run => {
            "needs repair (dry run: nothing written)".to_owned()
        }
        None => "nothing to repair".to_owned(),
    }
}

fn write_text(
    path: &Path,
    req: &RepairRequest,
    o: &RepairOutcome,
    out: &mut Output,
) -> anyhow::Result<()> {
    out.line(&format!(
        "file:                         {}",
        text::path(path)
    ))?;
    out.line(&format!(
        "result:                       {}",
        result_text(req, o)
    ))?;
    for (label, n) in [
        ("dropped lines:               ", o.dropped_lines),
        (
            "rewritten assistant messages:",
            o.rewritten_assistant_messages,
        ),
        ("rewritten user messages:     ", o.rewritten_user_messages),
        (
            "removed corrupted images:    ",
            o.removed_corrupted_image_blocks,
        ),
        ("inserted tool results:       ", o.inserted_tool_results),
    ] {
        out.line(&format!("{label} {n}"))?;
    }
    let failed = matches!(o.reason, Some(RepairSkip::RepairFailed { .. }));
    match &o.backup_path {
        Some(b) => out.line(&format!("backup:                       {}", text::path(b)))?,
        None if o.repaired => out.line(
            "backup:                       none (--no-backup: deleted once the rewrite was \
             verified)",
        )?,
        None if failed => out.line("backup:                       none")?,
        None => {}
    }
    Ok(())
}

fn to_json(path: &Path, req: &RepairRequest, o: &RepairOutcome, lock: Option<&Path>) -> Value {
    let p = |p: &Path| Value::from(p.to_string_lossy().into_owned());
    let messages: Vec<Value> = o
        .messages
        .iter()
        .map(|m| {
            json!({
                "level": match m.level {
                    RepairLevel::Warn => "warn",
                    RepairLevel::Debug => "debug",
                },
                "text": m.text,
            })
        })
        .collect();
    json!({
        "file": p(path),
        "dryRun": req.dry_run,
        "needsRepair": o.needs_repair(),
        "repaired": o.repaired,
        "reason": o.reason.as_ref().map(ToString::to_string),
        "droppedLines": o.dropped_lines,
        "rewrittenAssistantMessages": o.rewritten_assistant_messages,
        "droppedBlankUserMessages": o.dropped_blank_user_messages,
        "rewrittenUserMessages": o.rewritten_user_messages,
        "removedCorruptedImageBlocks": o.removed_corrupted_image_blocks,
        "insertedToolResults": o.inserted_tool_results,
        "backupPath": o.backup_path.as_deref().map(p),
        "lockPath": lock.map(p),
        "messages": messages,
    })
}
