//! Addressing sessions the same way in every subcommand: a file path; or `--agent ID --session
//! NAME` → `<root>/agents/<ID>/sessions/<NAME>.jsonl` (`--root` defaulting to
//! `$OPENCLAW_STATE_DIR`, else `~/.openclaw`); or `--dir DIR [--session NAME]`. Unknown agents
//! and sessions are errors that list close matches.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Args;

/// The environment variable naming the OpenClaw state directory.
pub(crate) const STATE_DIR_ENV: &str = "OPENCLAW_STATE_DIR";

/// A usage error (exit code 2, like clap's own).
#[derive(Debug)]
pub(crate) struct UsageError(String);

impl UsageError {
    pub(crate) fn new(msg: impl Into<String>) -> Self {
        UsageError(msg.into())
    }
}

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Where a store is: `--root`, `--agent`, `--dir`.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct Locator {
    /// The OpenClaw state directory, holding `agents/<ID>/sessions/` [default:
    /// $OPENCLAW_STATE_DIR, else ~/.openclaw].
    #[arg(long, value_name = "DIR")]
    pub(crate) root: Option<PathBuf>,
    /// The agent whose sessions to use: `<root>/agents/<ID>/sessions/`.
    #[arg(long, value_name = "ID", conflicts_with = "dir")]
    pub(crate) agent: Option<String>,
    /// A sessions directory to use instead of an agent's (any layout, e.g. pi's
    /// `~/.pi/agent/sessions/--<cwd>--/`).
    #[arg(long, value_name = "DIR")]
    pub(crate) dir: Option<PathBuf>,
}

/// [`Locator`] plus `--session`.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct SessionSelector {
    #[command(flatten)]
    pub(crate) locator: Locator,
    /// The session's file name in the sessions directory, without `.jsonl` (the part after the
    /// first `_`, e.g. the session id of `<timestamp>_<uuid>.jsonl`, also works when unique).
    #[arg(long, value_name = "NAME")]
    pub(crate) session: Option<String>,
}

fn home() -> PathBuf {
    std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from)
}

fn expand_tilde(p: &Path) -> PathBuf {
    match p.to_str() {
        Some("~") => home(),
        Some(s) if s.starts_with("~/") => home().join(&s[2..]),
        _ => p.to_path_buf(),
    }
}

/// The state directory: `--root`, else `$OPENCLAW_STATE_DIR`, else `~/.openclaw`.
pub(crate) fn state_root(flag: Option<&Path>) -> PathBuf {
    if let Some(p) = flag {
        return expand_tilde(p);
    }
    match std::env::var_os(STATE_DIR_ENV) {
        Some(v) if !v.is_empty() => expand_tilde(Path::new(&v)),
        _ => home().join(".openclaw"),
    }
}

/// The sorted names of the sub-directories of `dir` (empty when it cannot be read).
fn subdirs(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The agents of a store (`<root>/agents/*`), sorted.
pub(crate) fn agents(root: &Path) -> Vec<String> {
    subdirs(&root.join("agents"))
}

/// Up to five candidates close to `want`: containing it (or contained in it) first, then by
/// Jaro-Winkler similarity.
pub(crate) fn close_matches<'a>(want: &str, candidates: &'a [String]) -> Vec<&'a str> {
    let w = want.to_lowercase();
    let mut scored: Vec<(f64, &str)> = candidates
        .iter()
        .map(|c| {
            let l = c.to_lowercase();
            let mut score = strsim::jaro_winkler(&w, &l);
            if !w.is_empty() && (l.contains(&w) || w.contains(&l)) {
                score += 1.0;
            }
            (score, c.as_str())
        })
        .filter(|(s, _)| *s >= 0.7)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.into_iter().take(5).map(|(_, c)| c).collect()
}

/// `"; did you mean: a, b?"` or `""`, plus what exists.
fn suggestion(want: &str, candidates: &[String], what: &str) -> String {
    let close = close_matches(want, candidates);
    if !close.is_empty() {
        return format!("; did you mean: {}?", close.join(", "));
    }
    if candidates.is_empty() {
        return format!("; there are no {what}s");
    }
    let mut shown: Vec<&str> = candidates.iter().take(10).map(String::as_str).collect();
    if candidates.len() > 10 {
        shown.push("…");
    }
    format!("; {what}s: {}", shown.join(", "))
}

/// The sessions directory named by a locator, or `None` when it names none.
pub(crate) fn sessions_dir(loc: &Locator) -> anyhow::Result<Option<PathBuf>> {
    if let Some(dir) = &loc.dir {
        let dir = expand_tilde(dir);
        if !dir.is_dir() {
            bail!(UsageError::new(format!(
                "sessions directory {} does not exist",
                dir.display()
            )));
        }
        return Ok(Some(dir));
    }
    let Some(agent) = &loc.agent else {
        return Ok(None);
    };
    let root = state_root(loc.root.as_deref());
    let dir = root.join("agents").join(agent).join("sessions");
    if dir.is_dir() {
        return Ok(Some(dir));
    }
    let known = agents(&root);
    bail!(UsageError::new(format!(
        "unknown agent {agent:?}: {} does not exist{}",
        dir.display(),
        suggestion(agent, &known, "agent")
    )))
}

/// The `*.jsonl` file names (stems) directly in `dir`, sorted.
fn session_stems(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter_map(|e| {
                    e.file_name()
                        .to_str()
                        .and_then(|n| n.strip_suffix(".jsonl"))
                        .map(str::to_owned)
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Resolves `--session NAME` in `dir`: `NAME.jsonl` (a trailing `.jsonl` in NAME is ignored),
/// else the one file whose name after its first `_` is NAME (the session id of
/// `<timestamp>_<uuid>.jsonl`, the user id of `<channel>_<userId>.jsonl`). No guessing beyond
/// that: a prefix of another user's id must not open their session.
pub(crate) fn resolve_session(dir: &Path, name: &str) -> anyhow::Result<PathBuf> {
    let stem = name.strip_suffix(".jsonl").unwrap_or(name);
    let exact = dir.join(format!("{stem}.jsonl"));
    if exact.is_file() {
        return Ok(exact);
    }
    let stems = session_stems(dir);
    let hits: Vec<&String> = stems
        .iter()
        .filter(|s| s.split_once('_').is_some_and(|(_, rest)| rest == stem))
        .collect();
    match hits.as_slice() {
        [one] => Ok(dir.join(format!("{one}.jsonl"))),
        [] => bail!(UsageError::new(format!(
            "unknown session {name:?} in {}{}",
            dir.display(),
            suggestion(stem, &stems, "session")
        ))),
        many => {
            let names: Vec<&str> = many.iter().take(10).map(|s| s.as_str()).collect();
            bail!(UsageError::new(format!(
                "session {name:?} is ambiguous in {}: {}",
                dir.display(),
                names.join(", ")
            )))
        }
    }
}

fn check_file(p: &Path) -> anyhow::Result<PathBuf> {
    let p = expand_tilde(p);
    let meta = std::fs::metadata(&p).with_context(|| format!("cannot read {}", p.display()))?;
    if meta.is_dir() {
        bail!(UsageError::new(format!(
            "{} is a directory; pass a session file, or use --dir {} to list or check its sessions",
            p.display(),
            p.display()
        )));
    }
    Ok(p)
}

/// The one session a single-session subcommand works on.
pub(crate) fn resolve_one(file: Option<&Path>, sel: &SessionSelector) -> anyhow::Result<PathBuf> {
    let flags = sel.locator.agent.is_some() || sel.locator.dir.is_some() || sel.session.is_some();
    match (file, flags) {
        (Some(_), true) => bail!(UsageError::new(
            "give either a FILE or --agent/--dir with --session, not both"
        )),
        (Some(f), false) => check_file(f),
        (None, _) => {
            let Some(name) = &sel.session else {
                bail!(UsageError::new(
                    "no session given: pass a FILE, or --agent ID --session NAME, or --dir DIR --session NAME"
                ));
            };
            let Some(dir) = sessions_dir(&sel.locator)? else {
                bail!(UsageError::new(
                    "--session needs --agent ID (or --dir DIR) to say where the session is"
                ));
            };
            resolve_session(&dir, name)
        }
    }
}

/// The sessions a multi-session subcommand works on: the FILEs; or one `--session`; or every
/// `*.jsonl` of the `--agent`/`--dir` sessions directory.
pub(crate) fn resolve_many(
    files: &[PathBuf],
    sel: &SessionSelector,
) -> anyhow::Result<Vec<PathBuf>> {
    let flags = sel.locator.agent.is_some() || sel.locator.dir.is_some() || sel.session.is_some();
    if !files.is_empty() {
        if flags {
            bail!(UsageError::new(
                "give either FILEs or --agent/--dir (with --session), not both"
            ));
        }
        return files.iter().map(|f| check_file(f)).collect();
    }
    if sel.session.is_some() {
        return Ok(vec![resolve_one(None, sel)?]);
    }
    let Some(dir) = sessions_dir(&sel.locator)? else {
        bail!(UsageError::new(
            "no session given: pass FILEs, or --agent ID / --dir DIR (optionally with --session NAME)"
        ));
    };
    let stems = session_stems(&dir);
    if stems.is_empty() {
        bail!(UsageError::new(format!(
            "no *.jsonl sessions in {}",
            dir.display()
        )));
    }
    Ok(stems
        .iter()
        .map(|s| dir.join(format!("{s}.jsonl")))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_matches_prefers_substrings() {
        let c = vec![
            "telegram_123456".to_owned(),
            "discord_981234567890".to_owned(),
            "slack_U02OPSBOT".to_owned(),
        ];
        assert_eq!(close_matches("telegram_12345", &c), vec!["telegram_123456"]);
        assert_eq!(close_matches("telegarm_123456", &c)[0], "telegram_123456");
        assert!(close_matches("zzzz", &c).is_empty());
    }
}
