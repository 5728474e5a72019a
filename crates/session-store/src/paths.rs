//! Default locations (openclaw-jsonl.md §1.10): the agent directory (`$OPENCLAW_AGENT_DIR`, `~`
//! expanded, else `~/.openclaw/agent`), its `sessions/` folder, and the per-cwd session
//! directory `sessions/--<cwd without its leading slash, every / \ : turned into ->--`.

use std::path::{Path, PathBuf};

/// The environment variable that overrides the agent directory.
pub const AGENT_DIR_ENV: &str = "OPENCLAW_AGENT_DIR";

fn home() -> PathBuf {
    std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from)
}

/// The agent directory: `$OPENCLAW_AGENT_DIR` (with `~` and `~/` expanded), else
/// `~/.openclaw/agent`.
pub fn agent_dir() -> PathBuf {
    match std::env::var(AGENT_DIR_ENV) {
        Ok(dir) if !dir.is_empty() => {
            if dir == "~" {
                home()
            } else if let Some(rest) = dir.strip_prefix("~/") {
                home().join(rest)
            } else {
                PathBuf::from(dir)
            }
        }
        _ => home().join(".openclaw").join("agent"),
    }
}

/// `<agent dir>/sessions`: the root `list_all` scans.
pub fn sessions_dir() -> PathBuf {
    agent_dir().join("sessions")
}

/// The directory name the reference derives from a cwd: `--<cwd>--` with one leading `/` or `\`
/// removed and every `/`, `\`, `:` replaced by `-`.
pub fn session_dir_name(cwd: &str) -> String {
    let trimmed = cwd
        .strip_prefix('/')
        .or_else(|| cwd.strip_prefix('\\'))
        .unwrap_or(cwd);
    let encoded: String = trimmed
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect();
    format!("--{encoded}--")
}

/// The default session directory for `cwd` under `agent_dir` (not created here).
pub fn default_session_dir_in(agent_dir: &Path, cwd: &str) -> PathBuf {
    agent_dir.join("sessions").join(session_dir_name(cwd))
}

/// The default session directory for `cwd` under [`agent_dir`] (not created here).
pub fn default_session_dir(cwd: &str) -> PathBuf {
    default_session_dir_in(&agent_dir(), cwd)
}

/// The process working directory as a string (the reference's `process.cwd()` fallback).
pub fn process_cwd() -> String {
    std::env::current_dir()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `path` made absolute against the process working directory (no symlink resolution, like
/// Node's `path.resolve`).
pub fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}
