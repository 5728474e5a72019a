//! `sessions unlock --stale (DIR | --agent ID | --dir DIR | --pi) [--session NAME]`: the
//! session write-lock files (`*.jsonl.lock`, openclaw-jsonl.md
//! §3.5, §7.6) of a sessions directory with their holder and stale reasons, and the removal of
//! the stale ones, through [`session_store::lock::clean_stale_lock_files`]. A live holder's lock
//! is never removed.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use session_store::lock::{
    LockFileInfo, LockOptions, MALFORMED_LOCK_GRACE, NonRegularLock, SessionWriteLock, StaleReason,
    clean_stale_lock_file, clean_stale_lock_files,
};

use crate::address::{self, SessionSelector};
use crate::ctx::Ctx;
use crate::outcome::Outcome;
use crate::outcome::UsageError;
use crate::output::Output;
use crate::text;

pub(crate) const LONG_ABOUT: &str = "\
The sessions directory is DIR, or addressed as in the other subcommands: --agent ID (the
agent's <root>/agents/<ID>/sessions/, --root defaulting to $OPENCLAW_STATE_DIR, else
~/.openclaw), --dir DIR or --pi; with --session NAME (a file name, the part after its first _,
or a session id) only that session's lock file is judged and removed.

List the session write-lock files (*.jsonl.lock) directly in DIR, with the pid that holds each,
whether that process runs, when the lock was taken, and why it is stale (OpenClaw's reasons:
dead-pid, recycled-pid (the pid now belongs to another process), missing-pid,
invalid-createdAt, too-old (older than --stale-after), orphan-self-pid); then remove the stale
ones that may be reclaimed, as OpenClaw's cleanStaleLockFiles does:
  - a lock whose holder is gone (dead or recycled pid) is removed;
  - a malformed lock (no pid or no valid createdAt) is removed once its file is older than
    min(--stale-after, 30 s): a fresher one may still be being written;
  - a lock whose holder is running is never removed, even when it is old (too-old alone is
    reported, not reclaimed: the holder may still be writing).
A lock file is removed only while it still has the bytes and identity that were judged. A
directory, FIFO, socket or device named *.jsonl.lock (or a symlink to one) is listed and kept,
never opened: its session stays locked until it is removed by hand. At most 64 KiB of a lock
file are read; a longer one is malformed.
--stale is required: this command never removes a live lock. --dry-run removes nothing and says
what it would remove.

--stale-after DURATION: the age (from the lock's createdAt) past which a lock counts as too-old;
a duration with a unit: ms, s, m, h, d (e.g. 30s, 5m, 2h, 7d, 1h30m; a bare number is refused)
[default: 30m, or
$OPENCLAW_SESSION_WRITE_LOCK_STALE_MS].

JSON output (--json):
  {\"dir\", \"session\": the --session file or null, \"dryRun\", \"staleAfterMs\",
   \"locks\": [{\"lockPath\", \"sessionFile\", \"pid\", \"pidAlive\", \"createdAt\", \"ageMs\",
              \"stale\", \"staleReasons\": [...], \"action\": \"removed\"|\"would-remove\"|\"kept\",
              \"keptBecause\": null|\"live\"|\"holder-running\"|\"malformed-too-recent\"|\"changed\"|
                             \"not-a-lock-file\"}],
   \"removed\", \"wouldRemove\", \"kept\"}
`pid`, `createdAt` and `ageMs` are null when the lock file does not hold a valid one.

Exit codes: 0 no stale lock to remove; 1 stale locks were removed (with --dry-run: would be);
2 usage or I/O error.";

/// What happens to one lock file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Removed,
    WouldRemove,
    Kept(Kept),
}

/// Why a lock file stays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kept {
    /// No stale reason.
    Live,
    /// Stale only because a running holder has held it for long.
    HolderRunning,
    /// A malformed payload in a file younger than the grace.
    MalformedTooRecent,
    /// It changed (or vanished) between the judgement and the removal.
    Changed,
    /// A directory, FIFO, socket or device (or a symlink to one), not a lock file.
    NotALockFile(NonRegularLock),
}

impl Kept {
    fn key(self) -> &'static str {
        match self {
            Kept::Live => "live",
            Kept::HolderRunning => "holder-running",
            Kept::MalformedTooRecent => "malformed-too-recent",
            Kept::Changed => "changed",
            Kept::NotALockFile(_) => "not-a-lock-file",
        }
    }

    fn text(self, grace: Duration) -> String {
        match self {
            Kept::Live => "live (its holder is running)".to_owned(),
            Kept::HolderRunning => {
                "its holder is running: an old lock of a live process is reported, never removed"
                    .to_owned()
            }
            Kept::MalformedTooRecent => format!(
                "malformed, but written less than {} ago (it may still be being written)",
                human_ms(u64::try_from(grace.as_millis()).unwrap_or(u64::MAX))
            ),
            Kept::Changed => "it changed while it was checked (left alone)".to_owned(),
            Kept::NotALockFile(found) => format!(
                "it is {found}, not a lock file: never opened or removed, the session stays \
                 locked (remove it by hand if no writer uses it)"
            ),
        }
    }
}

/// Why a lock that [`clean_stale_lock_files`] may not reclaim stays.
fn kept_because(info: &LockFileInfo) -> Kept {
    let reasons = &info.stale_reasons;
    if let Some(found) = info.not_regular {
        Kept::NotALockFile(found)
    } else if reasons.is_empty() {
        Kept::Live
    } else if reasons
        .iter()
        .all(|r| matches!(r, StaleReason::MissingPid | StaleReason::InvalidCreatedAt))
    {
        Kept::MalformedTooRecent
    } else {
        // `too-old` / `hold-exceeded` of a running holder (the only other case the library
        // does not reclaim, this process holding no lock).
        Kept::HolderRunning
    }
}

fn action(info: &LockFileInfo, dry_run: bool) -> Action {
    match (info.removed, info.reclaimable, dry_run) {
        (true, _, _) => Action::Removed,
        (false, true, true) => Action::WouldRemove,
        (false, true, false) => Action::Kept(Kept::Changed),
        (false, false, _) => Action::Kept(kept_because(info)),
    }
}

/// `1d 2h`, `3h 4m`, `5m 6s`, `7s`, `80ms`.
fn human_ms(ms: u64) -> String {
    let s = ms / 1000;
    let (d, h, m, sec) = (s / 86_400, (s / 3600) % 24, (s / 60) % 60, s % 60);
    let pair = |a: u64, ua: &str, b: u64, ub: &str| {
        if b == 0 {
            format!("{a}{ua}")
        } else {
            format!("{a}{ua} {b}{ub}")
        }
    };
    if d > 0 {
        pair(d, "d", h, "h")
    } else if h > 0 {
        pair(h, "h", m, "m")
    } else if m > 0 {
        pair(m, "m", sec, "s")
    } else if s > 0 {
        format!("{s}s")
    } else {
        format!("{ms}ms")
    }
}

fn session_file_of(lock: &Path) -> String {
    let s = lock.to_string_lossy();
    s.strip_suffix(".lock").unwrap_or(&s).to_owned()
}

/// Lists (and unless `dry_run`, cleans) the lock files of `dir`.
///
/// # Errors
/// DIR is not a directory, or it or a lock file cannot be read or removed; stdout fails.
/// What `unlock --stale` cleans: every `*.jsonl.lock` of a sessions directory, or the lock of
/// one session file in it.
#[derive(Debug)]
pub(crate) struct Target {
    /// The sessions directory.
    dir: PathBuf,
    /// With `--session`: the session file whose lock alone is judged.
    session: Option<PathBuf>,
}

/// The target of `unlock --stale`, addressed as in every other subcommand
/// ([`crate::address`]): a DIR; or `--agent ID` (with `--root`), `--dir DIR` or `--pi`; any
/// of them with `--session NAME` for that session's lock only.
///
/// # Errors
/// A usage error for a DIR together with those flags, for none of them, and the locator's
/// own errors (an unknown agent or session, a missing directory).
pub(crate) fn target(
    ctx: &Ctx,
    positional: Option<&Path>,
    sel: &SessionSelector,
) -> anyhow::Result<Target> {
    let flags = sel.locator.names_dir() || sel.session.is_some();
    match positional {
        Some(_) if flags => anyhow::bail!(UsageError::new(
            "give either a DIR or --agent/--dir/--pi (with --session), not both"
        )),
        Some(dir) => {
            return Ok(Target {
                dir: address::expand_tilde(dir),
                session: None,
            });
        }
        None => {}
    }
    if sel.session.is_some() {
        let file = address::resolve_one(ctx, None, sel)?;
        let dir = file
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        return Ok(Target {
            dir,
            session: Some(file),
        });
    }
    match address::sessions_dir(ctx, &sel.locator)? {
        Some(dir) => Ok(Target { dir, session: None }),
        None => anyhow::bail!(UsageError::new(
            "unlock --stale needs a sessions directory: DIR, or --agent ID (with --root), --dir \
             DIR or --pi; add --session NAME for one session's lock"
        )),
    }
}

/// `sessions unlock --stale` on `target`.
pub(crate) fn run(
    target: &Target,
    stale_after: Option<Duration>,
    dry_run: bool,
    json: bool,
    out: &mut Output,
) -> anyhow::Result<Outcome> {
    let dir = target.dir.as_path();
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => anyhow::bail!(UsageError::new(format!(
            "{} is not a directory (unlock --stale takes a sessions directory)",
            text::path(dir)
        ))),
        Err(e) => anyhow::bail!(UsageError::new(format!(
            "cannot read directory {}: {e}",
            text::path(dir)
        ))),
    }
    let stale = stale_after.unwrap_or_else(|| LockOptions::from_env().stale);
    let locks = match &target.session {
        None => clean_stale_lock_files(dir, stale, !dry_run)
            .map_err(|e| anyhow::anyhow!("cannot clean the locks of {}: {e}", text::path(dir)))?,
        Some(file) => {
            let lock = SessionWriteLock::for_file(file)?;
            clean_stale_lock_file(lock.lock_path(), stale, !dry_run)
                .map_err(|e| {
                    anyhow::anyhow!(
                        "cannot clean the lock of {}: {e}",
                        text::path(lock.lock_path())
                    )
                })?
                .into_iter()
                .collect()
        }
    };
    let actions: Vec<Action> = locks.iter().map(|l| action(l, dry_run)).collect();
    let count = |f: fn(&Action) -> bool| actions.iter().filter(|a| f(a)).count();
    let removed = count(|a| *a == Action::Removed);
    let would = count(|a| *a == Action::WouldRemove);
    let kept = count(|a| matches!(a, Action::Kept(_)));
    let stale_ms = u64::try_from(stale.as_millis()).unwrap_or(u64::MAX);
    let grace = stale.min(MALFORMED_LOCK_GRACE);
    if json {
        let items: Vec<Value> = locks
            .iter()
            .zip(&actions)
            .map(|(l, a)| {
                json!({
                    "lockPath": l.lock_path.to_string_lossy(),
                    "sessionFile": session_file_of(&l.lock_path),
                    "pid": l.pid,
                    "pidAlive": l.pid_alive,
                    "createdAt": l.created_at,
                    "ageMs": l.age_ms,
                    "stale": l.is_stale(),
                    "staleReasons": l.stale_reasons.iter().map(|r| r.as_str()).collect::<Vec<_>>(),
                    "action": match a {
                        Action::Removed => "removed",
                        Action::WouldRemove => "would-remove",
                        Action::Kept(_) => "kept",
                    },
                    "keptBecause": match a {
                        Action::Kept(k) => Some(k.key()),
                        _ => None,
                    },
                })
            })
            .collect();
        let v = json!({
            "dir": dir.to_string_lossy(),
            "session": target.session.as_ref().map(|f| f.to_string_lossy()),
            "dryRun": dry_run,
            "staleAfterMs": stale_ms,
            "locks": items,
            "removed": removed,
            "wouldRemove": would,
            "kept": kept,
        });
        out.line(&serde_json::to_string_pretty(&v)?)?;
    } else if locks.is_empty() {
        out.line(&match &target.session {
            None => format!("no lock files in {}", text::path(dir)),
            Some(f) => format!("no lock file for {}", text::path(f)),
        })?;
    } else {
        out.line(&format!(
            "{} (stale after {}){}:",
            match &target.session {
                None => format!("lock files in {}", text::path(dir)),
                Some(f) => format!("lock file of {}", text::path(f)),
            },
            human_ms(stale_ms),
            if dry_run { ", dry run" } else { "" }
        ))?;
        for (l, a) in locks.iter().zip(&actions) {
            let name = l
                .lock_path
                .file_name()
                .map(|n| text::safe(&n.to_string_lossy()).into_owned())
                .unwrap_or_default();
            let holder = match l.pid {
                Some(pid) if l.pid_alive => format!("pid {pid} (running)"),
                Some(pid) => format!("pid {pid} (not running)"),
                None => "no valid pid".to_owned(),
            };
            let created = match (&l.created_at, l.age_ms) {
                (Some(c), Some(age)) => {
                    format!("created {}, {} ago", text::safe(c), human_ms(age))
                }
                (Some(c), None) => format!("createdAt {} (invalid)", text::safe(&format!("{c:?}"))),
                (None, _) => "no createdAt".to_owned(),
            };
            let verdict = if l.is_stale() {
                let reasons: Vec<&str> = l.stale_reasons.iter().map(|r| r.as_str()).collect();
                format!("stale: {}", reasons.join(", "))
            } else {
                "live".to_owned()
            };
            let what = match a {
                Action::Removed => "removed     ".to_owned(),
                Action::WouldRemove => "would remove".to_owned(),
                Action::Kept(_) => "kept        ".to_owned(),
            };
            let why = match a {
                Action::Kept(k) if *k != Kept::Live => format!("; kept: {}", k.text(grace)),
                _ => String::new(),
            };
            out.line(&format!(
                "  {what} {name}: {holder}, {created}; {verdict}{why}"
            ))?;
        }
        out.line(&if dry_run {
            format!("{would} would be removed, {kept} kept")
        } else {
            format!("{removed} removed, {kept} kept")
        })?;
    }
    Ok(if removed + would > 0 {
        Outcome::Changed
    } else {
        Outcome::Ok
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_like_durations() {
        assert_eq!(human_ms(80), "80ms");
        assert_eq!(human_ms(7_400), "7s");
        assert_eq!(human_ms(366_000), "6m 6s");
        assert_eq!(human_ms(3 * 3_600_000 + 240_000), "3h 4m");
        assert_eq!(human_ms(30 * 60_000), "30m");
        assert_eq!(human_ms(86_400_000), "1d");
        assert_eq!(human_ms(2 * 86_400_000 + 3_600_000), "2d 1h");
    }
}
