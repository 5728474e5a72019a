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
/// Node's `path.resolve`; see [`resolve`]).
pub fn absolute(path: &Path) -> PathBuf {
    resolve(path)
}

/// Node's `path.resolve(path)`: made absolute against the process working directory, then
/// normalised lexically ([`normalize`]): `.` segments and repeated or trailing separators
/// disappear, `..` removes the previous segment (never climbing above the root). No symlink
/// is resolved and the file system is not asked (`<dir>/missing/../s.jsonl` is
/// `<dir>/s.jsonl`).
pub fn resolve(path: &Path) -> PathBuf {
    if path.is_absolute() {
        normalize(path)
    } else {
        let cwd = std::env::current_dir().unwrap_or_default();
        normalize(&cwd.join(path))
    }
}

/// Node's `path.resolve(base, path)`: `path` against `base` (an absolute `path` ignores
/// `base`), normalised lexically.
pub fn resolve_in(base: &Path, path: &Path) -> PathBuf {
    resolve(&base.join(path))
}

/// Lexical normalisation as Node's `path.normalize` does it, minus the trailing separator:
/// `.` segments and repeated separators are dropped, `..` removes the previous normal segment
/// (at the root it is dropped; a relative path keeps leading `..`). An empty result is `.`.
pub fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut parts: Vec<Component<'_>> = Vec::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match parts.last() {
                Some(Component::Normal(_)) => {
                    parts.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => parts.push(c),
            },
            other => parts.push(other),
        }
    }
    if parts.is_empty() {
        return PathBuf::from(".");
    }
    parts.iter().collect()
}

/// A fresh backup name beside `path`: `<file>.<kind>-<ISO ts with ':' and '.' → '-'>-<8 hex>.jsonl`
/// (e.g. `s.jsonl.conflict-2026-11-30T06-40-00-000Z-1a2b3c4d.jsonl`). The name is new with
/// overwhelming likelihood, but callers must still create it exclusively (`io` never overwrites a
/// backup). Used for `.conflict-` (docs/DEVIATIONS.md D11) and `.reset-` (D24) backups.
pub fn backup_path(path: &Path, kind: &str) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ts = session_format::ids::now_timestamp().replace([':', '.'], "-");
    let tag = session_format::ids::new_entry_id(|_| false);
    path.with_file_name(format!("{name}.{kind}-{ts}-{tag}.jsonl"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_like_node() {
        let n = |p: &str| normalize(Path::new(p)).to_string_lossy().into_owned();
        assert_eq!(n("/a/./b/../c/"), "/a/c");
        assert_eq!(n("/a//b///c.jsonl/"), "/a/b/c.jsonl");
        assert_eq!(n("/../x"), "/x");
        assert_eq!(n("/a/missing/../s.jsonl"), "/a/s.jsonl");
        assert_eq!(n("a/../../b"), "../b");
        assert_eq!(n("./"), ".");
        assert_eq!(n("a/.."), ".");
        assert_eq!(
            resolve_in(Path::new("/d"), Path::new("./f.jsonl")),
            Path::new("/d/f.jsonl")
        );
        assert_eq!(
            resolve_in(Path::new("/d"), Path::new("/e/../f")),
            Path::new("/f")
        );
        assert!(resolve(Path::new("x")).is_absolute());
    }
}
