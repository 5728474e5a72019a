//! The guard every command that writes an OpenClaw `sessions.json` calls before it touches the
//! store (openclaw-store.md J7.1, R2.32): while an OpenClaw gateway runs on the state dir, its
//! in-process writer queue owns `sessions.json` (there is no file lock, R2.28), and a write from
//! here could lose the gateway's change or be lost by it (R2.31). So the command refuses and
//! says which gateway (pid) and which lock file, unless the global `--offline-ok` says the user
//! stopped the gateway (the lock of a gateway that was killed can outlive it for 30 s when its
//! owner cannot be checked). `--dry-run` never writes, so a command calls this only on its
//! writing path, after its dry-run return.
//!
//! How a command calls it: `gateway::refuse_while_gateway_runs(ctx, &state_dir)?;` right
//! before its first write to `<state_dir>/agents/<id>/sessions/sessions.json` (or a transcript
//! the store names), where `state_dir` is the OpenClaw state directory (`--root`, else
//! `$OPENCLAW_STATE_DIR`, else `~/.openclaw`: [`crate::address::state_root`]).

use std::fmt;
use std::path::{Path, PathBuf};

use session_semantics::openclaw_store::gateway::{
    GatewayEnv, GatewayStatus, RunningEvidence, detect_gateway, gateway_lock_candidates,
};

use crate::ctx::Ctx;

/// Why a write was refused: a gateway runs on the state dir.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GatewayRunning {
    /// The gateway's pid, when its lock names one.
    pub(crate) pid: Option<u32>,
    /// The gateway's liveness lock.
    pub(crate) lock_path: PathBuf,
    /// The config path the lock is keyed by.
    pub(crate) config_path: PathBuf,
    /// Why the lock counts as held.
    pub(crate) evidence: RunningEvidence,
}

impl fmt::Display for GatewayRunning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let who = match self.pid {
            Some(pid) => format!("an OpenClaw gateway is running (pid {pid})"),
            None => {
                "an OpenClaw gateway is starting or running (its lock names no pid yet)".to_owned()
            }
        };
        let why = match self.evidence {
            RunningEvidence::StartTimeMatches => {
                "the pid is alive with the start time the lock records"
            }
            RunningEvidence::GatewayCommandLine => "the pid is alive and runs `openclaw gateway`",
            RunningEvidence::AliveUnverified => "the pid is alive",
            RunningEvidence::RecentLockUnknownOwner => {
                "the lock is less than 30 s old and its owner cannot be checked"
            }
            _ => "the lock is held",
        };
        write!(
            f,
            "{who}: lock {} ({why}; config {}). The gateway owns sessions.json while it runs, so \
             nothing was written. Stop the gateway (or let its own `openclaw sessions cleanup` \
             do this), then run again with --offline-ok; --offline-ok is only for a gateway \
             that is stopped. --dry-run always works and writes nothing.",
            crate::text::safe(&self.lock_path.display().to_string()),
            crate::text::safe(&self.config_path.display().to_string()),
        )
    }
}

impl std::error::Error for GatewayRunning {}

/// Refuses (with a [`GatewayRunning`] error naming the pid and the lock, and mentioning
/// `--offline-ok` and `--dry-run`) when an OpenClaw gateway runs on `state_dir`, unless the
/// global `--offline-ok` was given. The lock is found as the reference finds it: this
/// process's `OPENCLAW_CONFIG_PATH`, else the config file of `state_dir`; `TMPDIR`; the uid.
///
/// # Errors
/// [`GatewayRunning`] while a gateway runs and `--offline-ok` was not given.
pub(crate) fn refuse_while_gateway_runs(ctx: &Ctx, state_dir: &Path) -> anyhow::Result<()> {
    check(
        ctx.offline_ok(),
        &GatewayEnv::from_process(),
        state_dir,
        // The lock's `createdAt` is real time: the 30 s rule uses the real clock, not --now.
        session_format::ids::now_ms(),
    )
    .map_err(anyhow::Error::new)
}

/// [`refuse_while_gateway_runs`] for the store in `sessions_dir`: its state dir is the
/// directory above `agents/<id>/sessions` when the path has that shape, else the default state
/// dir ([`crate::address::state_root`]: `$OPENCLAW_STATE_DIR`, else `~/.openclaw`).
///
/// # Errors
/// As [`refuse_while_gateway_runs`].
pub(crate) fn refuse_while_gateway_runs_on_store(
    ctx: &Ctx,
    sessions_dir: &Path,
) -> anyhow::Result<()> {
    refuse_while_gateway_runs(ctx, &state_dir_of(sessions_dir))
}

/// The state dir of a sessions directory shaped `<state>/agents/<id>/sessions`, else the
/// default state dir.
fn state_dir_of(sessions_dir: &Path) -> PathBuf {
    let abs = std::path::absolute(sessions_dir).unwrap_or_else(|_| sessions_dir.to_path_buf());
    let agents = abs.parent().and_then(Path::parent);
    match (abs.file_name(), agents) {
        (Some(s), Some(agents))
            if s == "sessions" && agents.file_name().is_some_and(|a| a == "agents") =>
        {
            agents
                .parent()
                .map_or_else(|| crate::address::state_root(None), Path::to_path_buf)
        }
        _ => crate::address::state_root(None),
    }
}

/// [`refuse_while_gateway_runs`] with its inputs explicit.
fn check(
    offline_ok: bool,
    env: &GatewayEnv,
    state_dir: &Path,
    now_ms: i64,
) -> Result<(), GatewayRunning> {
    if offline_ok {
        return Ok(());
    }
    // The lock of this shell's config path, then every other live gateway lock whose
    // payload's config belongs to the state dir (a gateway started with another config path).
    for location in gateway_lock_candidates(env, state_dir) {
        if let GatewayStatus::Running {
            lock_path,
            pid,
            evidence,
        } = detect_gateway(&location.lock_path, now_ms)
        {
            return Err(GatewayRunning {
                pid,
                lock_path,
                config_path: location.config_path,
                evidence,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    // The tests plant gateway lock files as the gateway writes them.
    #![allow(clippy::disallowed_methods)]

    use super::*;
    use session_semantics::openclaw_store::gateway::gateway_lock_location;

    /// A state dir and a TMPDIR under a fresh temp dir, and the lock path a gateway on that
    /// state dir would hold.
    fn setup() -> (tempfile::TempDir, PathBuf, GatewayEnv, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let state = tmp.path().join("state");
        std::fs::create_dir_all(&state).unwrap();
        let env = GatewayEnv::from_process()
            .with_tmp_dir(tmp.path().join("tmp"))
            .with_config_path(None)
            .with_state_dir(Some(state.display().to_string()));
        let lock = gateway_lock_location(&env, &state).lock_path;
        std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
        (tmp, state, env, lock)
    }

    fn starttime(pid: u32) -> u64 {
        session_store::lock::process_start_time(pid).unwrap()
    }

    fn plant(lock: &Path, pid: u32, start: u64) {
        let created = session_format::time::to_iso_string(session_format::ids::now_ms()).unwrap();
        std::fs::write(
            lock,
            format!(
                r#"{{"pid":{pid},"createdAt":"{created}","configPath":"/c/openclaw.json","startTime":{start}}}"#
            ),
        )
        .unwrap();
    }

    #[test]
    fn a_live_gateway_lock_refuses_with_pid_lock_and_the_way_out() {
        let (_tmp, state, env, lock) = setup();
        let pid = std::process::id();
        plant(&lock, pid, starttime(pid));
        let now = session_format::ids::now_ms();
        let err = check(false, &env, &state, now).unwrap_err();
        assert_eq!(
            err,
            GatewayRunning {
                pid: Some(pid),
                lock_path: lock.clone(),
                config_path: state.join("openclaw.json"),
                evidence: RunningEvidence::StartTimeMatches,
            }
        );
        assert_eq!(
            err.to_string(),
            format!(
                "an OpenClaw gateway is running (pid {pid}): lock {} (the pid is alive with the \
                 start time the lock records; config {}). The gateway owns sessions.json while \
                 it runs, so nothing was written. Stop the gateway (or let its own `openclaw \
                 sessions cleanup` do this), then run again with --offline-ok; --offline-ok is \
                 only for a gateway that is stopped. --dry-run always works and writes nothing.",
                lock.display(),
                state.join("openclaw.json").display()
            )
        );
        // --offline-ok: the user says the gateway is stopped.
        assert_eq!(check(true, &env, &state, now), Ok(()));
    }

    #[test]
    fn no_lock_a_dead_pid_or_a_reused_pid_lets_the_write_go_on() {
        let (_tmp, state, env, lock) = setup();
        let now = session_format::ids::now_ms();
        assert_eq!(check(false, &env, &state, now), Ok(()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        plant(&lock, dead, 1);
        assert_eq!(check(false, &env, &state, now), Ok(()));
        let pid = std::process::id();
        plant(&lock, pid, starttime(pid) + 7);
        assert_eq!(check(false, &env, &state, now), Ok(()));
    }

    #[test]
    fn a_lock_of_another_config_does_not_refuse() {
        let (tmp, state, env, lock) = setup();
        let pid = std::process::id();
        plant(&lock, pid, starttime(pid));
        let other = tmp.path().join("other-state");
        let other_env = env
            .clone()
            .with_state_dir(Some(other.display().to_string()));
        let now = session_format::ids::now_ms();
        assert_eq!(check(false, &other_env, &other, now), Ok(()));
        assert!(check(false, &env, &state, now).is_err());
    }
}
