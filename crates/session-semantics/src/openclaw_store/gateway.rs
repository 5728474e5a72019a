//! Whether an OpenClaw gateway is running on a state dir (openclaw-store.md R2.32, J7.1): the
//! gateway's liveness lock `<os.tmpdir()>/openclaw-<uid>/gateway.<first 8 hex of
//! sha256(configPath)>.lock`, its JSON payload, and the reference's rules for when such a lock
//! still belongs to a live gateway.
//!
//! The gateway keeps `sessions.json` in an in-process writer queue without a file lock (R2.28),
//! so a tool that writes the store while a gateway runs can lose its change or the gateway's
//! (R2.31). Write commands call [`detect_gateway`] first and refuse while it says
//! [`GatewayStatus::Running`].
//!
//! Differences from the reference's own check (`acquireGatewayLock`): no TCP probe of the
//! gateway port (the reference probes it only when its caller passes a port; the port lives in
//! the config, which is not read here), so a lock whose owner is alive counts as running even
//! when the port is free; nothing is removed (a stale lock is left for the gateway, which
//! removes it itself at its next start).

use std::path::{Component, Path, PathBuf};

use session_format::json::{JsValue, parse_value};
use sha2::{Digest, Sha256};

/// How long a lock whose owner cannot be confirmed or ruled out counts as held, from its
/// `createdAt` (else its mtime): the reference's `DEFAULT_STALE_MS`, 30 s.
pub const UNKNOWN_OWNER_GRACE_MS: i64 = 30_000;

/// The config file's name in a state dir (R1.5), and its legacy name.
const CONFIG_FILENAME: &str = "openclaw.json";
const LEGACY_CONFIG_FILENAME: &str = "clawdbot.json";

/// The environment the lock's location depends on, as the reference reads it (R1.1, R1.5,
/// `resolveConfigPath`, `resolveGatewayLockDir`). [`GatewayEnv::from_process`] reads this
/// process's environment; tests build one by hand.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GatewayEnv {
    /// `OPENCLAW_CONFIG_PATH` (trimmed; empty counts as unset).
    pub config_path: Option<String>,
    /// `OPENCLAW_STATE_DIR` (trimmed; empty counts as unset).
    pub state_dir: Option<String>,
    /// The home a leading `~` expands to: `OPENCLAW_HOME`, else `HOME` (as the reference's
    /// `resolveRequiredHomeDir`, `~` in `OPENCLAW_HOME` expanded with `HOME`).
    pub home: Option<PathBuf>,
    /// `os.tmpdir()`: `TMPDIR`, else `TMP`, else `TEMP`, else `/tmp`, one trailing `/` removed.
    pub tmp_dir: PathBuf,
    /// The user id in the lock directory's name (`openclaw-<uid>`); `None` gives `openclaw`.
    pub uid: Option<u32>,
    /// The current directory relative paths resolve against (`path.resolve`).
    pub cwd: PathBuf,
}

fn env_text(name: &str) -> Option<String> {
    let value = std::env::var(name).ok()?;
    let trimmed = value.trim();
    (!trimmed.is_empty() && trimmed != "undefined" && trimmed != "null").then(|| trimmed.to_owned())
}

#[cfg(unix)]
fn current_uid() -> Option<u32> {
    Some(rustix::process::getuid().as_raw())
}

#[cfg(not(unix))]
fn current_uid() -> Option<u32> {
    None
}

impl GatewayEnv {
    /// The environment of this process.
    pub fn from_process() -> Self {
        let os_home = env_text("HOME").or_else(|| env_text("USERPROFILE"));
        let home = match env_text("OPENCLAW_HOME") {
            Some(explicit) if explicit == "~" || explicit.starts_with("~/") => {
                os_home.map(|h| format!("{h}{}", &explicit[1..]))
            }
            Some(explicit) => Some(explicit),
            None => os_home,
        };
        let tmp = ["TMPDIR", "TMP", "TEMP"]
            .iter()
            .find_map(|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
            .unwrap_or_else(|| "/tmp".to_owned());
        let tmp = match tmp.strip_suffix('/') {
            Some(stripped) if !stripped.is_empty() => stripped.to_owned(),
            _ => tmp,
        };
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        GatewayEnv {
            config_path: env_text("OPENCLAW_CONFIG_PATH"),
            state_dir: env_text("OPENCLAW_STATE_DIR"),
            home: home.map(|h| resolve_path(&cwd, Path::new(&h))),
            tmp_dir: PathBuf::from(tmp),
            uid: current_uid(),
            cwd,
        }
    }

    /// This environment with `os.tmpdir()` at `tmp_dir`.
    pub fn with_tmp_dir(mut self, tmp_dir: impl Into<PathBuf>) -> Self {
        self.tmp_dir = tmp_dir.into();
        self
    }

    /// This environment with `OPENCLAW_CONFIG_PATH` as given (`None`: unset).
    pub fn with_config_path(mut self, config_path: Option<String>) -> Self {
        self.config_path = config_path;
        self
    }

    /// This environment with `OPENCLAW_STATE_DIR` as given (`None`: unset).
    pub fn with_state_dir(mut self, state_dir: Option<String>) -> Self {
        self.state_dir = state_dir;
        self
    }

    /// This environment with the home `~` expands to.
    pub fn with_home(mut self, home: Option<PathBuf>) -> Self {
        self.home = home;
        self
    }

    /// A leading `~` expanded with [`GatewayEnv::home`], then made absolute and lexically
    /// normalised (`resolveHomeRelativePath`: `path.resolve`).
    fn user_path(&self, input: &str) -> PathBuf {
        let trimmed = input.trim();
        let expanded = match (trimmed.strip_prefix('~'), &self.home) {
            (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
                format!("{}{rest}", home.display())
            }
            _ => trimmed.to_owned(),
        };
        resolve_path(&self.cwd, Path::new(&expanded))
    }

    /// The default state dir when `OPENCLAW_STATE_DIR` is unset (R1.1): `~/.openclaw`, or the
    /// legacy `~/.clawdbot` when only that exists.
    fn default_state_dir(&self) -> PathBuf {
        let home = self.home.clone().unwrap_or_else(|| self.cwd.clone());
        let new_dir = home.join(".openclaw");
        let legacy = home.join(".clawdbot");
        if !new_dir.exists() && legacy.exists() {
            legacy
        } else {
            new_dir
        }
    }
}

/// `path.resolve(cwd, p)`: absolute, `.` and `..` removed lexically, no trailing `/`.
fn resolve_path(cwd: &Path, p: &Path) -> PathBuf {
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Where a gateway serving a state dir keeps its liveness lock.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct GatewayLockLocation {
    /// The config file path the lock is keyed by (R1.5), as the reference resolves it.
    pub config_path: PathBuf,
    /// `<tmp>/openclaw-<uid>/gateway.<sha256(config_path)[0..8]>.lock`.
    pub lock_path: PathBuf,
}

/// The config path a gateway with state dir `state_dir` uses (R1.5, the reference's
/// `resolveConfigPath(env, stateDir)`): `OPENCLAW_CONFIG_PATH` when set (`~` expanded, made
/// absolute); else the first existing of `<stateDir>/openclaw.json` and
/// `<stateDir>/clawdbot.json`; else, when `OPENCLAW_STATE_DIR` is set or `state_dir` is not
/// the default state dir, `<stateDir>/openclaw.json`; else the first existing default
/// candidate (`~/.openclaw/{openclaw,clawdbot}.json`, `~/.clawdbot/{openclaw,clawdbot}.json`),
/// falling back to `<stateDir>/openclaw.json`.
pub fn resolve_config_path(env: &GatewayEnv, state_dir: &Path) -> PathBuf {
    if let Some(explicit) = &env.config_path {
        return env.user_path(explicit);
    }
    let state_dir = resolve_path(&env.cwd, state_dir);
    let in_state = [CONFIG_FILENAME, LEGACY_CONFIG_FILENAME].map(|name| state_dir.join(name));
    if let Some(existing) = in_state.iter().find(|p| p.exists()) {
        return existing.clone();
    }
    let canonical = state_dir.join(CONFIG_FILENAME);
    if env.state_dir.is_some() || state_dir != env.default_state_dir() {
        return canonical;
    }
    let home = env.home.clone().unwrap_or_else(|| env.cwd.clone());
    [".openclaw", ".clawdbot"]
        .iter()
        .flat_map(|dir| {
            [CONFIG_FILENAME, LEGACY_CONFIG_FILENAME].map(|name| home.join(dir).join(name))
        })
        .find(|p| p.exists())
        .unwrap_or(canonical)
}

/// The gateway lock of `config_path` (R2.32): in `<tmp_dir>/openclaw-<uid>` (`openclaw`
/// without a uid), named `gateway.<h>.lock` with `h` the first 8 lowercase hex digits of the
/// SHA-256 of the path's text (UTF-8, as node hashes a string).
pub fn gateway_lock_path(env: &GatewayEnv, config_path: &Path) -> PathBuf {
    let digest = Sha256::digest(config_path.as_os_str().as_encoded_bytes());
    let hex: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    let dir = match env.uid {
        Some(uid) => format!("openclaw-{uid}"),
        None => "openclaw".to_owned(),
    };
    resolve_path(&env.cwd, &env.tmp_dir)
        .join(dir)
        .join(format!("gateway.{hex}.lock"))
}

/// [`resolve_config_path`] and [`gateway_lock_path`] together.
pub fn gateway_lock_location(env: &GatewayEnv, state_dir: &Path) -> GatewayLockLocation {
    let config_path = resolve_config_path(env, state_dir);
    let lock_path = gateway_lock_path(env, &config_path);
    GatewayLockLocation {
        config_path,
        lock_path,
    }
}

/// Every gateway lock that may belong to a gateway on `state_dir`, the one to judge first
/// first: [`gateway_lock_location`]'s (keyed by the config path this environment resolves),
/// then each other `gateway.*.lock` in the same lock directory, in name order, whose payload's
/// `configPath` belongs to this state dir: its directory is the state dir, or it is the
/// resolved config path (both compared lexically after `path.resolve`, and as canonical paths
/// when they exist). A gateway started with another config path than this shell's
/// `OPENCLAW_CONFIG_PATH` (e.g. the default `<state>/openclaw.json`) is found so. Read-only;
/// an unreadable lock directory gives only the first.
pub fn gateway_lock_candidates(env: &GatewayEnv, state_dir: &Path) -> Vec<GatewayLockLocation> {
    let first = gateway_lock_location(env, state_dir);
    let Some(lock_dir) = first.lock_path.parent().map(Path::to_path_buf) else {
        return vec![first];
    };
    let state = resolve_path(&env.cwd, state_dir);
    let canon = |p: &Path| std::fs::canonicalize(p).ok();
    let state_canon = canon(&state);
    let config_canon = canon(&first.config_path);
    let own_config = first.config_path.clone();
    let belongs = |config: &Path| {
        let config = resolve_path(&env.cwd, config);
        let parent = config.parent().map(Path::to_path_buf);
        if parent.as_deref() == Some(state.as_path()) || config == own_config {
            return true;
        }
        let parent_canon = parent.as_deref().and_then(canon);
        (parent_canon.is_some() && parent_canon == state_canon)
            || (config_canon.is_some() && canon(&config) == config_canon)
    };
    let mut names: Vec<PathBuf> = match std::fs::read_dir(&lock_dir) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                    n.starts_with("gateway.") && n.ends_with(".lock") && n.len() > 13
                })
            })
            .filter(|p| *p != first.lock_path)
            .collect(),
        Err(_) => Vec::new(),
    };
    names.sort();
    let mut out = vec![first];
    for lock_path in names {
        let payload = std::fs::read(&lock_path)
            .ok()
            .and_then(|b| parse_gateway_lock_payload(&b));
        if let Some(p) = payload
            && belongs(Path::new(&p.config_path))
        {
            out.push(GatewayLockLocation {
                config_path: PathBuf::from(p.config_path),
                lock_path,
            });
        }
    }
    out
}

/// A gateway lock's JSON payload (R2.32): `{"pid":N,"createdAt":"<ISO>","configPath":"…",
/// "startTime":N}`, `startTime` on Linux only. Other fields are ignored.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct GatewayLockPayload {
    /// The gateway's process id (any JSON number, as the reference's schema allows).
    pub pid: f64,
    /// When the lock was taken (ISO 8601 text).
    pub created_at: String,
    /// The config path the gateway resolved.
    pub config_path: String,
    /// `/proc/<pid>/stat` field 22 of the gateway process, when recorded.
    pub start_time: Option<f64>,
}

/// Parses a lock payload as the reference's schema does: a JSON object with a number `pid`,
/// strings `createdAt` and `configPath`, and an optional number `startTime`. `None` for
/// anything else (the reference then treats the owner as unknown).
pub fn parse_gateway_lock_payload(bytes: &[u8]) -> Option<GatewayLockPayload> {
    let value = parse_value(bytes).ok()?;
    let JsValue::Object(obj) = value else {
        return None;
    };
    let text = |name: &str| match obj.get(name) {
        Some(JsValue::String(s)) => Some(s.to_str_lossy().into_owned()),
        _ => None,
    };
    let pid = match obj.get("pid") {
        Some(JsValue::Number(n)) => *n,
        _ => return None,
    };
    let start_time = match obj.get("startTime") {
        None => None,
        Some(JsValue::Number(n)) => Some(*n),
        Some(_) => return None,
    };
    Some(GatewayLockPayload {
        pid,
        created_at: text("createdAt")?,
        config_path: text("configPath")?,
        start_time,
    })
}

/// Why a lock is taken as a running gateway's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RunningEvidence {
    /// The pid is alive and its start time equals the recorded `startTime` (Linux).
    StartTimeMatches,
    /// The pid is alive and its command line is a gateway's (`… openclaw.mjs gateway …`).
    GatewayCommandLine,
    /// The pid is alive but its command line cannot be read off Linux (the reference then
    /// counts it as alive).
    AliveUnverified,
    /// The owner can be neither confirmed nor ruled out (no readable payload, or no start time
    /// or command line readable on Linux) and the lock is at most 30 s old
    /// ([`UNKNOWN_OWNER_GRACE_MS`]): the reference waits on such a lock.
    RecentLockUnknownOwner,
}

/// Why a lock present on disk is not a running gateway's.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum StaleLock {
    /// No process has the recorded pid (or it is a zombie).
    DeadPid,
    /// The pid is alive but started at another time: the pid was reused (Linux).
    StartTimeMismatch {
        /// The recorded `startTime`.
        recorded: f64,
        /// The process's start time now.
        current: u64,
    },
    /// The pid is alive but its command line is not a gateway's.
    NotAGateway,
    /// The owner is unknown and the lock is older than 30 s.
    OldLockUnknownOwner {
        /// The lock's age in milliseconds, from `createdAt` or else the mtime.
        age_ms: i64,
    },
}

/// What [`detect_gateway`] found at a lock path.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum GatewayStatus {
    /// No file at the lock path: no gateway (with the lock enabled) runs for this config.
    NoLock {
        /// The lock path looked at.
        lock_path: PathBuf,
    },
    /// A gateway runs: write commands must not touch `sessions.json` (J7.1).
    Running {
        /// The lock path.
        lock_path: PathBuf,
        /// The gateway's pid, when the payload names one.
        pid: Option<u32>,
        /// Why the lock counts as held.
        evidence: RunningEvidence,
    },
    /// A lock file is there but its owner is gone (the reference removes such a lock when the
    /// next gateway starts; nothing is removed here).
    Stale {
        /// The lock path.
        lock_path: PathBuf,
        /// The recorded pid, when the payload names one.
        pid: Option<u32>,
        /// Why it is stale.
        reason: StaleLock,
    },
}

impl GatewayStatus {
    /// Whether a gateway runs ([`GatewayStatus::Running`]).
    pub fn is_running(&self) -> bool {
        matches!(self, GatewayStatus::Running { .. })
    }
}

/// The pid as a process id: a positive integer that fits, else `None` (the reference's
/// `isPidAlive` is false for such values).
fn pid_u32(pid: f64) -> Option<u32> {
    (pid.is_finite() && pid.fract() == 0.0 && pid >= 1.0 && pid <= f64::from(u32::MAX)).then(|| {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let p = pid as u32;
        p
    })
}

/// The reference's `isGatewayArgv` on a command line: the arguments trimmed, empty ones
/// dropped, `\` turned into `/` and lowercased; one of them is exactly `gateway`, and one ends
/// with an entry script (`dist/index.js`, `dist/entry.js`, `openclaw.mjs`,
/// `scripts/run-node.mjs`, `src/entry.ts`, `src/index.ts`) or the program is `openclaw`
/// (`…/openclaw`, `.exe`/`.cmd`/`.bat` removed).
pub fn is_gateway_argv<S: AsRef<str>>(args: &[S]) -> bool {
    let normalized: Vec<String> = args
        .iter()
        .map(|a| a.as_ref().trim())
        .filter(|a| !a.is_empty())
        .map(|a| a.replace('\\', "/").to_lowercase())
        .collect();
    if !normalized.iter().any(|a| a == "gateway") {
        return false;
    }
    const ENTRIES: [&str; 6] = [
        "dist/index.js",
        "dist/entry.js",
        "openclaw.mjs",
        "scripts/run-node.mjs",
        "src/entry.ts",
        "src/index.ts",
    ];
    if normalized
        .iter()
        .any(|a| ENTRIES.iter().any(|e| a.ends_with(e)))
    {
        return true;
    }
    let exe = normalized.first().map(String::as_str).unwrap_or("");
    let exe = [".bat", ".cmd", ".exe"]
        .iter()
        .find_map(|ext| exe.strip_suffix(ext))
        .unwrap_or(exe);
    exe.ends_with("/openclaw") || exe == "openclaw"
}

#[cfg(target_os = "linux")]
fn read_cmdline(pid: u32) -> Option<Vec<String>> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    Some(
        String::from_utf8_lossy(&raw)
            .split('\0')
            .map(str::to_owned)
            .collect(),
    )
}

#[cfg(not(target_os = "linux"))]
fn read_cmdline(_pid: u32) -> Option<Vec<String>> {
    None
}

/// The owner check of the reference (`resolveGatewayOwnerStatus`, without the port probe).
enum Owner {
    Alive(RunningEvidence),
    Dead(StaleLock),
    Unknown,
}

fn owner_status(pid: u32, payload: &GatewayLockPayload) -> Owner {
    if !session_store::lock::process_alive(pid) {
        return Owner::Dead(StaleLock::DeadPid);
    }
    let linux = cfg!(target_os = "linux");
    if linux && let Some(recorded) = payload.start_time.filter(|t| t.is_finite()) {
        return match session_store::lock::process_start_time(pid) {
            None => Owner::Unknown,
            #[allow(clippy::cast_precision_loss)]
            Some(current) if current as f64 == recorded => {
                Owner::Alive(RunningEvidence::StartTimeMatches)
            }
            Some(current) => Owner::Dead(StaleLock::StartTimeMismatch { recorded, current }),
        };
    }
    match read_cmdline(pid) {
        None if linux => Owner::Unknown,
        None => Owner::Alive(RunningEvidence::AliveUnverified),
        Some(args) if is_gateway_argv(&args) => Owner::Alive(RunningEvidence::GatewayCommandLine),
        Some(_) => Owner::Dead(StaleLock::NotAGateway),
    }
}

fn mtime_ms(path: &Path) -> Option<i64> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    let since = modified.duration_since(std::time::UNIX_EPOCH).ok()?;
    i64::try_from(since.as_millis()).ok()
}

/// Reads the lock at `lock_path` and judges it as the reference's `acquireGatewayLock` does
/// (R2.32): no file → [`GatewayStatus::NoLock`]; a payload naming a dead pid, a live pid with
/// another Linux start time, or a live pid whose command line is not a gateway's →
/// [`GatewayStatus::Stale`]; a live pid with the recorded start time, or a gateway command line
/// → [`GatewayStatus::Running`]. When the owner is unknown (no valid payload, a pid of 0, or
/// on Linux neither start time nor command line readable) the lock counts as held while
/// `now_ms − createdAt` (else `now_ms − mtime`) is at most 30 s, stale after. `now_ms` is the
/// real clock in epoch milliseconds (the lock's `createdAt` is real time). Read-only.
pub fn detect_gateway(lock_path: &Path, now_ms: i64) -> GatewayStatus {
    let lock_path_buf = lock_path.to_path_buf();
    let bytes = match std::fs::read(lock_path) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // A dangling symlink reads as not found too; the reference's `wx` open fails on
            // it with EEXIST, so only an absent name is "no lock".
            if std::fs::symlink_metadata(lock_path).is_err() {
                return GatewayStatus::NoLock {
                    lock_path: lock_path_buf,
                };
            }
            None
        }
        Err(_) => None,
    };
    let payload = bytes.as_deref().and_then(parse_gateway_lock_payload);
    let pid = payload.as_ref().and_then(|p| pid_u32(p.pid));
    // A pid of 0 (falsy) is an unknown owner; any other value goes to the owner check, where
    // a non-integer or negative pid is dead, as `isPidAlive` says.
    let owner = match &payload {
        Some(p) if p.pid != 0.0 => match pid {
            Some(pid) => owner_status(pid, p),
            None => Owner::Dead(StaleLock::DeadPid),
        },
        _ => Owner::Unknown,
    };
    match owner {
        Owner::Alive(evidence) => GatewayStatus::Running {
            lock_path: lock_path_buf,
            pid,
            evidence,
        },
        Owner::Dead(reason) => GatewayStatus::Stale {
            lock_path: lock_path_buf,
            pid,
            reason,
        },
        Owner::Unknown => {
            let created = payload
                .as_ref()
                .and_then(|p| session_format::time::parse_js_date(&p.created_at));
            let age = created
                .map(|c| now_ms - c)
                .filter(|age| *age > UNKNOWN_OWNER_GRACE_MS)
                .or_else(|| mtime_ms(lock_path).map(|m| now_ms - m));
            match age {
                Some(age_ms) if age_ms > UNKNOWN_OWNER_GRACE_MS => GatewayStatus::Stale {
                    lock_path: lock_path_buf,
                    pid,
                    reason: StaleLock::OldLockUnknownOwner { age_ms },
                },
                _ => GatewayStatus::Running {
                    lock_path: lock_path_buf,
                    pid,
                    evidence: RunningEvidence::RecentLockUnknownOwner,
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gateway_argv_needs_the_subcommand_and_an_entry() {
        assert!(is_gateway_argv(&[
            "node",
            "/x/openclaw.mjs",
            "gateway",
            "run"
        ]));
        assert!(is_gateway_argv(&["/usr/local/bin/openclaw", " gateway "]));
        assert!(is_gateway_argv(&["C:\\bin\\OpenClaw.EXE", "gateway"]));
        assert!(!is_gateway_argv(&["node", "/x/openclaw.mjs", "sessions"]));
        assert!(!is_gateway_argv(&["node", "/x/other.js", "gateway"]));
        assert!(!is_gateway_argv::<&str>(&[]));
    }

    #[test]
    fn payload_schema_is_the_references() {
        let p = parse_gateway_lock_payload(
            br#"{"pid":42,"createdAt":"2026-06-12T09:00:00.000Z","configPath":"/c/openclaw.json","startTime":777,"x":1}"#,
        );
        assert_eq!(
            p,
            Some(GatewayLockPayload {
                pid: 42.0,
                created_at: "2026-06-12T09:00:00.000Z".to_owned(),
                config_path: "/c/openclaw.json".to_owned(),
                start_time: Some(777.0),
            })
        );
        assert_eq!(
            parse_gateway_lock_payload(br#"{"pid":"42","createdAt":"x","configPath":"y"}"#),
            None
        );
        assert_eq!(
            parse_gateway_lock_payload(br#"{"pid":42,"configPath":"y"}"#),
            None
        );
        assert_eq!(
            parse_gateway_lock_payload(
                br#"{"pid":4,"createdAt":"x","configPath":"y","startTime":null}"#
            ),
            None
        );
        assert_eq!(parse_gateway_lock_payload(b"[1]"), None);
    }

    #[test]
    fn resolve_is_lexical() {
        let cwd = Path::new("/w/d");
        assert_eq!(
            resolve_path(cwd, Path::new("a/../b/./c/")),
            PathBuf::from("/w/d/b/c")
        );
        assert_eq!(
            resolve_path(cwd, Path::new("/x//y/..")),
            PathBuf::from("/x")
        );
    }
}
