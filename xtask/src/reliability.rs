//! `cargo xtask reliability`: runs the reliability suites (docs/RELIABILITY.md) in release mode at full
//! scale (`RELIABILITY_SCALE=full`, `-- --nocapture --test-threads=1`), collects the
//! `RELIABILITY {json}` figure line each suite prints (protocol: docs/RELIABILITY.md), runs the
//! cargo-fuzz targets of `fuzz/` for `--fuzz-seconds` each when cargo-fuzz and a nightly
//! toolchain (or `RUSTC_BOOTSTRAP=1`) are there, prints one table and writes it into
//! docs/RELIABILITY.md between `<!-- reliability:begin -->` and `<!-- reliability:end -->`.
//!
//! Exits non-zero when a test target fails or is missing, a target does not print every figure
//! line it owes (its suites, [`TARGETS`]), or any loss, unreadable-file, interleaving,
//! corruption, panic or failure figure is not 0.

use std::fmt::Write as _;
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::{Map, Value};

use crate::bench::{repo_root, target_dir};

/// Options of `cargo xtask reliability`.
#[derive(Debug, clap::Args)]
pub struct ReliabilityArgs {
    /// Seconds each fuzz target runs (0 skips fuzzing); default 60, and no fuzzing with
    /// `--quick` unless given.
    #[arg(long)]
    pub fuzz_seconds: Option<u64>,
    /// Fast sizes (no `RELIABILITY_SCALE=full`) and no fuzzing unless `--fuzz-seconds` is
    /// given; docs/RELIABILITY.md is not written.
    #[arg(long)]
    pub quick: bool,
    /// Do not write docs/RELIABILITY.md.
    #[arg(long)]
    pub no_write: bool,
}

/// Seconds per fuzz target when `--fuzz-seconds` is not given (and not `--quick`).
const DEFAULT_FUZZ_SECONDS: u64 = 60;

/// A test target of the suite.
struct Target {
    /// `tests/<name>.rs`.
    name: &'static str,
    /// What it covers (the table's second column).
    covers: &'static str,
    /// The suites whose figure line it must print, once each.
    suites: &'static [&'static str],
}

/// The test targets, in the order they run.
const TARGETS: &[Target] = &[
    Target {
        name: "reliability_crash",
        covers: "SIGKILL during appends",
        suites: &["crash", "crashReopen"],
    },
    Target {
        name: "reliability_truncation",
        covers: "a cut at every byte offset",
        suites: &["truncation"],
    },
    Target {
        name: "reliability_concurrency",
        covers: "concurrent writers, with and without the lock",
        suites: &["concurrencyLocked", "concurrencyUnlocked"],
    },
    Target {
        name: "faults",
        covers: "injected I/O faults",
        suites: &["faults"],
    },
    Target {
        name: "model",
        covers: "model-based property test",
        suites: &["model"],
    },
    Target {
        name: "never_panic",
        covers: "arbitrary bytes never panic",
        suites: &["neverPanic"],
    },
    Target {
        name: "bad_input_catalogue",
        covers: "bad-input catalogue",
        suites: &["badInput"],
    },
];

/// Figure fields that must be 0 wherever they appear.
const MUST_BE_ZERO: &[&str] = &[
    "lost",
    "unreadable",
    "interleaved",
    "torn",
    "tornUnreported",
    "corruptLines",
    "misplacedAppends",
    "linesDeleted",
    "falseDamage",
    "missing",
    "duplicateIds",
    "outOfOrder",
    "stateChanged",
    "partialHeaders",
    "failures",
    "panics",
    "runFailed",
    "countMismatches",
    "unverifiedAppends",
    "adoptedMismatches",
];

const BEGIN: &str = "<!-- reliability:begin -->";
const END: &str = "<!-- reliability:end -->";

/// One `RELIABILITY` line.
#[derive(Debug, Clone)]
struct Suite {
    name: String,
    /// The test target that printed it (`None` for the fuzz lines the xtask makes).
    source: Option<&'static str>,
    fields: Map<String, Value>,
}

impl Suite {
    fn get(&self, key: &str) -> Option<u64> {
        self.fields.get(key).and_then(Value::as_u64)
    }
}

/// How a test target ended.
#[derive(Debug)]
enum Status {
    Passed(Duration),
    Failed(Duration, String),
    NotBuilt,
}

/// How fuzzing went.
#[derive(Debug)]
enum Fuzz {
    Skipped(String),
    Ran(Vec<Suite>),
}

/// A test target found in the workspace: its package and name.
struct Found {
    package: String,
    target: &'static str,
}

/// `name = "…"` of a crate manifest.
fn package_name(manifest: &Path) -> Option<String> {
    let text = std::fs::read_to_string(manifest).ok()?;
    text.lines()
        .find_map(|l| l.trim().strip_prefix("name = \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .map(str::to_owned)
}

/// The package whose `tests/<target>.rs` exists (`crates/*` and `xtask`).
fn find_target(root: &Path, target: &'static str) -> Option<Found> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    dirs.sort();
    dirs.push(root.join("xtask"));
    dirs.into_iter().find_map(|d| {
        d.join("tests")
            .join(format!("{target}.rs"))
            .is_file()
            .then(|| package_name(&d.join("Cargo.toml")))
            .flatten()
            .map(|package| Found { package, target })
    })
}

fn cargo() -> Command {
    let mut c = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    c.current_dir(repo_root());
    c
}

/// The JSON object after `RELIABILITY ` on a line (the test harness may print `test … ` first).
fn parse_line(line: &str) -> Option<Suite> {
    let at = line.find("RELIABILITY {")?;
    let json = &line[at + "RELIABILITY ".len()..];
    let value = serde_json::Deserializer::from_str(json)
        .into_iter::<Value>()
        .next()?
        .ok()?;
    let Value::Object(mut fields) = value else {
        return None;
    };
    let Some(Value::String(name)) = fields.shift_remove("suite") else {
        return None;
    };
    Some(Suite {
        name,
        source: None,
        fields,
    })
}

/// Runs one test target, echoing its output, and returns the figure lines it printed.
fn run_target(found: &Found, full: bool) -> Result<(Status, Vec<Suite>)> {
    let mut cmd = cargo();
    cmd.args([
        "test",
        "--release",
        "--quiet",
        "-p",
        &found.package,
        "--test",
        found.target,
        "--",
        "--nocapture",
        "--test-threads=1",
    ]);
    if full {
        cmd.env("RELIABILITY_SCALE", "full");
    } else {
        cmd.env_remove("RELIABILITY_SCALE");
    }
    cmd.stdout(Stdio::piped()).stderr(Stdio::inherit());
    println!(
        "== {} (-p {}): RELIABILITY_SCALE={}",
        found.target,
        found.package,
        if full { "full" } else { "<fast>" }
    );
    let start = Instant::now();
    let mut child = cmd.spawn().context("spawning cargo test")?;
    let mut suites = Vec::new();
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines() {
            let line = line.context("reading cargo test output")?;
            println!("{line}");
            suites.extend(parse_line(&line));
        }
    }
    let status = child.wait().context("waiting for cargo test")?;
    let took = start.elapsed();
    Ok(if status.success() {
        (Status::Passed(took), suites)
    } else {
        (Status::Failed(took, status.to_string()), suites)
    })
}

/// Output of a command, trimmed, when it succeeds.
fn output_of(cmd: &mut Command) -> Option<String> {
    let out = cmd.stderr(Stdio::null()).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// How cargo-fuzz gets the unstable flags it needs.
#[derive(Clone, Copy, Debug)]
enum Toolchain {
    /// `cargo +nightly` through the rustup proxy on `PATH`.
    Nightly,
    /// This cargo with `RUSTC_BOOTSTRAP=1`.
    Bootstrap,
}

/// A cargo command for cargo-fuzz. `cargo xtask` runs under `cargo run`, whose `CARGO` is the
/// toolchain's own binary (it does not understand `+nightly`) and whose environment pins the
/// toolchain (`RUSTUP_TOOLCHAIN`): the nightly goes through the rustup proxy instead.
fn fuzz_cargo(toolchain: Toolchain) -> Command {
    match toolchain {
        Toolchain::Nightly => {
            let mut c = Command::new("cargo");
            c.current_dir(repo_root())
                .env_remove("RUSTUP_TOOLCHAIN")
                .env_remove("CARGO")
                .arg("+nightly");
            c
        }
        Toolchain::Bootstrap => {
            let mut c = cargo();
            c.env("RUSTC_BOOTSTRAP", "1");
            c
        }
    }
}

/// How to run cargo-fuzz here, or why not.
fn fuzz_setup(root: &Path) -> std::result::Result<Toolchain, String> {
    if !root.join("fuzz/Cargo.toml").is_file() {
        return Err("no fuzz/ directory".to_owned());
    }
    if output_of(cargo().args(["fuzz", "--version"])).is_none() {
        return Err("cargo-fuzz is not installed (cargo install cargo-fuzz)".to_owned());
    }
    if output_of(fuzz_cargo(Toolchain::Nightly).arg("--version")).is_some() {
        return Ok(Toolchain::Nightly);
    }
    if std::env::var("RUSTC_BOOTSTRAP").is_ok_and(|v| v == "1") {
        return Ok(Toolchain::Bootstrap);
    }
    Err(
        "no nightly toolchain (rustup toolchain install nightly) and RUSTC_BOOTSTRAP is not 1"
            .to_owned(),
    )
}

/// The fuzz targets `cargo fuzz list` names.
fn fuzz_targets(toolchain: Toolchain) -> Result<Vec<String>> {
    let list = output_of(fuzz_cargo(toolchain).args(["fuzz", "list"]))
        .context("cargo fuzz list failed")?;
    Ok(list
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect())
}

/// libFuzzer's figures from its output: `Done N runs`, else the last `#N` status line; a panic
/// or crash when a `deadly signal`, `panicked at`, `ERROR: libFuzzer` or `ERROR: AddressSanitizer`
/// line appears.
fn parse_fuzz_output(text: &str) -> (u64, bool) {
    let mut executions = 0;
    let mut done = None;
    let mut crashed = false;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("Done ")
            && let Some(n) = rest.split(' ').next().and_then(|n| n.parse().ok())
        {
            done = Some(n);
        }
        if let Some(rest) = line.strip_prefix('#')
            && let Some(n) = rest
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .and_then(|n| n.parse().ok())
        {
            executions = n;
        }
        if line.contains("deadly signal")
            || line.contains("panicked at")
            || line.contains("ERROR: libFuzzer")
            || line.contains("ERROR: AddressSanitizer")
        {
            crashed = true;
        }
    }
    (done.unwrap_or(executions), crashed)
}

/// Runs every fuzz target for `seconds`.
fn run_fuzz(root: &Path, seconds: u64) -> Result<Fuzz> {
    if seconds == 0 {
        return Ok(Fuzz::Skipped("--fuzz-seconds 0".to_owned()));
    }
    let toolchain = match fuzz_setup(root) {
        Ok(t) => t,
        Err(reason) => return Ok(Fuzz::Skipped(reason)),
    };
    let targets = fuzz_targets(toolchain)?;
    if targets.is_empty() {
        return Ok(Fuzz::Skipped("cargo fuzz list names no target".to_owned()));
    }
    let work = target_dir().join("reliability-fuzz");
    let mut suites = Vec::new();
    for t in &targets {
        let corpus = work.join("corpus").join(t);
        let artifacts = work.join("artifacts").join(t);
        std::fs::create_dir_all(&corpus)?;
        std::fs::create_dir_all(&artifacts)?;
        let mut cmd = fuzz_cargo(toolchain);
        cmd.args(["fuzz", "run", t]).arg(&corpus);
        // Seeds kept in the repository are read, never written (libFuzzer adds new inputs to
        // the first corpus directory only).
        let seeds = root.join("fuzz/seeds").join(t);
        if seeds.is_dir() {
            cmd.arg(&seeds);
        }
        cmd.arg("--")
            .arg(format!("-max_total_time={seconds}"))
            .arg(format!("-artifact_prefix={}/", artifacts.display()))
            .arg("-print_final_stats=1");
        println!(
            "== fuzz {t}: {seconds} s after the build ({}cargo {}fuzz run {t}; output shown on failure)",
            if matches!(toolchain, Toolchain::Bootstrap) {
                "RUSTC_BOOTSTRAP=1 "
            } else {
                ""
            },
            if matches!(toolchain, Toolchain::Nightly) {
                "+nightly "
            } else {
                ""
            },
        );
        let out = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .with_context(|| format!("running cargo fuzz run {t}"))?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let (executions, crashed) = parse_fuzz_output(&text);
        // A failure before libFuzzer ran (the build) is no panic, but still a failure.
        let run_failed = !crashed && !out.status.success() && executions == 0;
        let panics = u64::from(!run_failed && (crashed || !out.status.success()));
        if panics > 0 || run_failed {
            // The end of the output: the panic message and the crashing input's file, or the
            // build error.
            let lines: Vec<&str> = text.lines().collect();
            for l in &lines[lines.len().saturating_sub(40)..] {
                println!("  {l}");
            }
        }
        let mut fields = Map::new();
        fields.insert("target".to_owned(), Value::String(t.clone()));
        fields.insert("executions".to_owned(), Value::from(executions));
        fields.insert("panics".to_owned(), Value::from(panics));
        fields.insert("runFailed".to_owned(), Value::from(u64::from(run_failed)));
        fields.insert("seconds".to_owned(), Value::from(seconds));
        let suite = Suite {
            name: "fuzz".to_owned(),
            source: None,
            fields,
        };
        println!("RELIABILITY {}", suite_json(&suite));
        suites.push(suite);
    }
    Ok(Fuzz::Ran(suites))
}

fn suite_json(s: &Suite) -> String {
    let mut m = Map::new();
    m.insert("suite".to_owned(), Value::String(s.name.clone()));
    m.extend(s.fields.clone());
    Value::Object(m).to_string()
}

/// The machine: CPUs, CPU model, kernel, rustc, and the file system of the temporary directory
/// (where the suites write).
fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|r| r.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").map_or_else(
        |_| std::env::consts::OS.to_owned(),
        |r| format!("Linux {}", r.trim()),
    );
    let rustc = output_of(Command::new("rustc").arg("-V")).unwrap_or_else(|| "rustc ?".to_owned());
    let tmp = std::env::temp_dir();
    let fs = std::fs::read_to_string("/proc/mounts")
        .ok()
        .and_then(|m| {
            m.lines()
                .filter_map(|l| {
                    let mut it = l.split(' ');
                    let (_, at, kind) = (it.next()?, it.next()?, it.next()?);
                    tmp.starts_with(at).then(|| (at.len(), kind.to_owned()))
                })
                .max()
                .map(|(_, kind)| kind)
        })
        .unwrap_or_else(|| "?".to_owned());
    format!(
        "{cpus} CPUs ({model}), {kernel}, {rustc}; temporary files on {fs} ({})",
        tmp.display()
    )
}

/// Sum of `field` over the suites named `names`, or `None` when none of them ran.
fn sum(suites: &[Suite], names: &[&str], field: &str) -> Option<u64> {
    let hits: Vec<u64> = suites
        .iter()
        .filter(|s| names.contains(&s.name.as_str()))
        .filter_map(|s| s.get(field))
        .collect();
    (!hits.is_empty()).then(|| hits.iter().sum())
}

fn cell(v: Option<u64>) -> String {
    v.map_or_else(|| "—".to_owned(), |n| n.to_string())
}

/// `a / b` cells.
fn pair(a: Option<u64>, b: Option<u64>) -> String {
    match (a, b) {
        (None, None) => "—".to_owned(),
        _ => format!("{} / {}", cell(a), cell(b)),
    }
}

/// The headline figures of a reliability run (the table docs/RELIABILITY.md ends with).
fn headline(suites: &[Suite]) -> Vec<(&'static str, String, &'static str)> {
    let crash = &["crash", "crashReopen"][..];
    let s = |names: &[&str], f: &str| sum(suites, names, f);
    let interleaved = match (
        s(&["concurrencyLocked"], "interleaved"),
        s(&["concurrencyLocked"], "torn"),
        s(&["concurrencyUnlocked"], "corruptLines"),
    ) {
        (None, None, None) => None,
        (a, b, c) => Some(a.unwrap_or(0) + b.unwrap_or(0) + c.unwrap_or(0)),
    };
    let unreadable = match (s(crash, "unreadable"), s(&["faults"], "unreadable")) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    };
    let fuzz_runs = s(&["fuzz"], "executions");
    vec![
        (
            "crash trials run (SIGKILL)",
            cell(s(crash, "trials")),
            "crash, crashReopen",
        ),
        (
            "entries acknowledged",
            cell(s(crash, "acknowledged")),
            "crash, crashReopen",
        ),
        (
            "entries lost",
            cell(s(crash, "lost")),
            "crash, crashReopen — must be 0",
        ),
        (
            "files unreadable",
            cell(unreadable),
            "crash, crashReopen, faults — must be 0",
        ),
        (
            "interleaved or torn lines (concurrent writers)",
            cell(interleaved),
            "concurrencyLocked, concurrencyUnlocked — must be 0",
        ),
        (
            "injected faults survived / injected",
            pair(s(&["faults"], "survived"), s(&["faults"], "injected")),
            "faults",
        ),
        ("fuzz executions", cell(fuzz_runs), "fuzz (libFuzzer)"),
        (
            "fuzz panics / never-panic panics",
            pair(s(&["fuzz"], "panics"), s(&["neverPanic"], "panics")),
            "fuzz, neverPanic — must be 0",
        ),
        (
            "torn tails reported / torn tails left by kills",
            pair(
                match (s(crash, "tornTails"), s(crash, "tornUnreported")) {
                    (Some(t), Some(u)) => Some(t - u.min(t)),
                    _ => None,
                },
                s(crash, "tornTails"),
            ),
            "crash, crashReopen",
        ),
        (
            "appends not on their own line",
            cell(
                match (
                    s(crash, "misplacedAppends"),
                    s(&["truncation"], "misplacedAppends"),
                ) {
                    (None, None) => None,
                    (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
                },
            ),
            "crash, crashReopen, truncation — must be 0",
        ),
        (
            "truncation offsets: longest prefix found / cut",
            pair(
                s(&["truncation"], "longestPrefixOk"),
                s(&["truncation"], "offsets"),
            ),
            "truncation",
        ),
        (
            "mid-line cuts reported (line + offset) / made",
            pair(
                s(&["truncation"], "damageReported"),
                s(&["truncation"], "midLineCuts"),
            ),
            "truncation",
        ),
        (
            "complete lines deleted by a writable open",
            cell(s(&["truncation"], "linesDeleted")),
            "truncation — must be 0",
        ),
        (
            "locked appends: entries found / made",
            pair(
                s(&["concurrencyLocked"], "entries"),
                s(&["concurrencyLocked"], "appends"),
            ),
            "concurrencyLocked",
        ),
        (
            "unlocked appends: entries found / made",
            pair(
                s(&["concurrencyUnlocked"], "entries"),
                s(&["concurrencyUnlocked"], "appends"),
            ),
            "concurrencyUnlocked",
        ),
        (
            "unlocked sibling branches (legal forks)",
            cell(s(&["concurrencyUnlocked"], "siblingBranches")),
            "concurrencyUnlocked",
        ),
        (
            "never-panic cases (arbitrary bytes)",
            cell(s(&["neverPanic"], "cases")),
            "neverPanic",
        ),
        (
            "model cases / failures",
            pair(s(&["model"], "cases"), s(&["model"], "failures")),
            "model — failures must be 0",
        ),
        (
            "bad-input fixtures matched / total",
            pair(s(&["badInput"], "matched"), s(&["badInput"], "fixtures")),
            "badInput",
        ),
    ]
}

/// The figure lines `target` owes and did not print exactly once: `missing figure line: <suite>`
/// or `<suite>: n figure lines` (when printed more than once).
fn missing_lines(target: &Target, got: &[Suite]) -> Vec<String> {
    target
        .suites
        .iter()
        .filter_map(
            |want| match got.iter().filter(|s| s.name == *want).count() {
                0 => Some(format!("missing figure line: {want}")),
                1 => None,
                n => Some(format!("{want}: {n} figure lines")),
            },
        )
        .collect()
}

/// Every non-zero `MUST_BE_ZERO` figure, as `suite.field = n`.
fn violations(suites: &[Suite]) -> Vec<String> {
    let mut out = Vec::new();
    for s in suites {
        for f in MUST_BE_ZERO {
            if let Some(n) = s.get(f)
                && n != 0
            {
                let target = s
                    .fields
                    .get("target")
                    .and_then(Value::as_str)
                    .map_or(String::new(), |t| format!("[{t}]"));
                out.push(format!("{}{target}.{f} = {n}", s.name));
            }
        }
        if s.name == "badInput"
            && let (Some(m), Some(t)) = (s.get("matched"), s.get("fixtures"))
            && m != t
        {
            out.push(format!("badInput: {m} of {t} fixtures matched"));
        }
    }
    out
}

/// How one test target went: its status and the figure lines it owed and did not print
/// ([`missing_lines`]).
struct Ran {
    target: &'static Target,
    status: Status,
    missing: Vec<String>,
}

/// The Markdown report.
fn render(ran: &[Ran], suites: &[Suite], fuzz: &Fuzz, command: &str, full: bool) -> String {
    let mut s = String::new();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(0));
    let date = session_format::time::to_iso_string(now).unwrap_or_default();
    let _ = writeln!(s, "Generated by `{command}` on {date}.\n");
    let _ = writeln!(s, "Machine: {}.\n", machine());
    if !full {
        s.push_str("**Fast sizes** (`--quick`): not the figures issue 10 asks for.\n\n");
    }
    s.push_str("| figure | value | suites |\n|---|---|---|\n");
    for (label, value, source) in headline(suites) {
        let _ = writeln!(s, "| {label} | {value} | {source} |");
    }
    s.push_str(
        "\nPer target:\n\n| test target | covers | result (wall time, cargo included) | figure lines |\n|---|---|---|---|\n",
    );
    for r in ran {
        let result = match &r.status {
            Status::Passed(d) => format!("passed ({:.0} s)", d.as_secs_f64()),
            Status::Failed(d, why) => format!("**FAILED** ({why}, {:.0} s)", d.as_secs_f64()),
            Status::NotBuilt => "**not built**".to_owned(),
        };
        let mut lines: Vec<String> = suites
            .iter()
            .filter(|su| su.source == Some(r.target.name))
            .map(|su| format!("`{}`", suite_json(su)))
            .collect();
        lines.extend(r.missing.iter().map(|m| format!("**{m}**")));
        let _ = writeln!(
            s,
            "| `{}` | {} | {result} | {} |",
            r.target.name,
            r.target.covers,
            lines.join("<br>")
        );
    }
    match fuzz {
        Fuzz::Skipped(why) => {
            let _ = writeln!(s, "| fuzz | libFuzzer (cargo-fuzz) | skipped: {why} | |");
        }
        Fuzz::Ran(runs) => {
            for r in runs {
                let _ = writeln!(
                    s,
                    "| fuzz `{}` | libFuzzer (cargo-fuzz) | {} | `{}` |",
                    r.fields
                        .get("target")
                        .and_then(Value::as_str)
                        .unwrap_or("?"),
                    match (r.get("panics"), r.get("runFailed")) {
                        (Some(0), Some(0)) => "ran",
                        (Some(0), _) => "**FAILED TO RUN**",
                        _ => "**CRASHED**",
                    },
                    suite_json(r)
                );
            }
        }
    }
    s
}

/// Puts `body` between the markers of `doc` (appending them when absent).
fn splice(doc: &str, body: &str) -> String {
    crate::markers::splice(doc, BEGIN, BEGIN, END, body)
}

/// `cargo xtask reliability`.
///
/// # Errors
/// A suite could not be built or started, or the report cannot be written. Failing suites and
/// non-zero figures make the process exit with status 1 after the table is written.
pub fn run(args: &ReliabilityArgs) -> Result<()> {
    let root = repo_root();
    let full = !args.quick;
    let fuzz_seconds = args.fuzz_seconds.unwrap_or(DEFAULT_FUZZ_SECONDS);
    let mut command = "cargo xtask reliability".to_owned();
    if let Some(seconds) = args.fuzz_seconds {
        let _ = write!(command, " --fuzz-seconds {seconds}");
    }
    if args.quick {
        command.push_str(" --quick");
    }
    let found: Vec<(&'static Target, Option<Found>)> = TARGETS
        .iter()
        .map(|t| (t, find_target(&root, t.name)))
        .collect();
    // Build every target first (one cargo invocation builds them in parallel).
    let mut build = cargo();
    build.args(["test", "--release", "--no-run", "--quiet"]);
    let mut packages: Vec<&str> = found
        .iter()
        .filter_map(|(_, f)| f.as_ref().map(|f| f.package.as_str()))
        .collect();
    packages.sort_unstable();
    packages.dedup();
    for p in packages {
        build.args(["-p", p]);
    }
    for (t, f) in &found {
        if f.is_some() {
            build.args(["--test", t.name]);
        }
    }
    println!("== building the reliability test targets (release)");
    let status = build.status().context("running cargo test --no-run")?;
    if !status.success() {
        // Each target is built again when it runs: one that does not compile fails alone.
        println!("== building them together failed ({status}); each is built when it runs");
    }
    let mut ran = Vec::new();
    let mut suites: Vec<Suite> = Vec::new();
    for (target, f) in found {
        let Some(f) = f else {
            let name = target.name;
            println!("== {name}: not built (no tests/{name}.rs in the workspace)");
            ran.push(Ran {
                target,
                status: Status::NotBuilt,
                missing: missing_lines(target, &[]),
            });
            continue;
        };
        let (status, got) = run_target(&f, full)?;
        let missing = missing_lines(target, &got);
        for mut su in got {
            su.source = Some(target.name);
            suites.push(su);
        }
        ran.push(Ran {
            target,
            status,
            missing,
        });
    }
    let fuzz = if args.quick && args.fuzz_seconds.is_none() {
        Fuzz::Skipped("--quick (add --fuzz-seconds N to fuzz)".to_owned())
    } else {
        run_fuzz(&root, fuzz_seconds)?
    };
    if let Fuzz::Ran(runs) = &fuzz {
        suites.extend(runs.iter().cloned());
    }
    let body = render(&ran, &suites, &fuzz, &command, full);
    println!("\n{body}");
    if let Fuzz::Skipped(why) = &fuzz {
        println!("fuzz: skipped: {why}");
    }
    if full && !args.no_write {
        let doc_path = root.join("docs/RELIABILITY.md");
        let doc = std::fs::read_to_string(&doc_path).unwrap_or_default();
        session_store::io::atomic_rewrite(&doc_path, splice(&doc, &body).as_bytes())
            .with_context(|| format!("writing {}", doc_path.display()))?;
        println!("wrote {}", doc_path.display());
    }
    let mut problems = violations(&suites);
    for r in &ran {
        let name = r.target.name;
        match &r.status {
            Status::Failed(_, why) => problems.push(format!("{name} failed ({why})")),
            Status::NotBuilt => problems.push(format!("{name} not built")),
            Status::Passed(_) => {}
        }
        problems.extend(r.missing.iter().map(|m| format!("{name}: {m}")));
    }
    if !problems.is_empty() {
        eprintln!("reliability: {}", problems.join("; "));
        std::process::exit(1);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figure_lines_are_found_after_the_harness_prefix() {
        let s = parse_line(r#"test a ... RELIABILITY {"suite":"crash","trials":200,"lost":0}"#)
            .unwrap();
        assert_eq!(s.name, "crash");
        assert_eq!(s.get("trials"), Some(200));
        assert_eq!(s.get("lost"), Some(0));
        // Re-printed in the table with the fields in their order.
        assert_eq!(suite_json(&s), r#"{"suite":"crash","trials":200,"lost":0}"#);
        assert!(parse_line("RELIABILITY not json").is_none());
        assert!(parse_line(r#"RELIABILITY {"trials":1}"#).is_none());
    }

    #[test]
    fn libfuzzer_output_gives_runs_and_crashes() {
        let ok = "#2\tINITED cov: 10\n#65536\tpulse  cov: 99\nDone 1234567 runs in 61 second(s)\n";
        assert_eq!(parse_fuzz_output(ok), (1_234_567, false));
        let crash = "#100\tNEW cov: 5\n#150\tREDUCE\nthread '<unnamed>' panicked at src/x.rs:1:1:\n==1== ERROR: libFuzzer: deadly signal\n";
        assert_eq!(parse_fuzz_output(crash), (150, true));
    }

    #[test]
    fn non_zero_figures_are_violations() {
        let su = |name: &str, json: &str| Suite {
            name: name.to_owned(),
            source: None,
            fields: serde_json::from_str(json).unwrap(),
        };
        let suites = [
            su("crash", r#"{"trials":200,"lost":0,"tornTails":3}"#),
            su("concurrencyLocked", r#"{"interleaved":2}"#),
            su("fuzz", r#"{"target":"line_parser","panics":1}"#),
            su("badInput", r#"{"fixtures":14,"matched":13}"#),
        ];
        assert_eq!(
            violations(&suites),
            [
                "concurrencyLocked.interleaved = 2",
                "fuzz[line_parser].panics = 1",
                "badInput: 13 of 14 fixtures matched",
            ]
        );
    }

    #[test]
    fn every_suite_a_target_owes_must_print_one_line() {
        let su = |name: &str| Suite {
            name: name.to_owned(),
            source: None,
            fields: Map::new(),
        };
        let crash = &TARGETS[0];
        assert_eq!(crash.suites, ["crash", "crashReopen"]);
        assert!(missing_lines(crash, &[su("crashReopen"), su("crash")]).is_empty());
        assert_eq!(
            missing_lines(crash, &[su("crash")]),
            ["missing figure line: crashReopen"]
        );
        assert_eq!(
            missing_lines(crash, &[]),
            [
                "missing figure line: crash",
                "missing figure line: crashReopen"
            ]
        );
        assert_eq!(
            missing_lines(crash, &[su("crash"), su("crash"), su("crashReopen")]),
            ["crash: 2 figure lines"]
        );
        // The table says so.
        let ran = [Ran {
            target: crash,
            status: Status::Passed(Duration::from_secs(3)),
            missing: missing_lines(crash, &[]),
        }];
        let table = render(&ran, &[], &Fuzz::Skipped("test".to_owned()), "x", true);
        assert!(
            table.contains(
                "| `reliability_crash` | SIGKILL during appends | passed (3 s) | **missing figure line: crash**<br>**missing figure line: crashReopen** |"
            ),
            "{table}"
        );
    }

    #[test]
    fn the_table_replaces_what_is_between_the_markers() {
        let doc = format!("# R\n\nintro\n\n{BEGIN}\nold\n{END}\n\n## After\n");
        assert_eq!(
            splice(&doc, "new\n"),
            format!("# R\n\nintro\n\n{BEGIN}\nnew\n{END}\n\n## After\n")
        );
        assert_eq!(
            splice("# R\n", "new\n"),
            format!("# R\n\n## Results\n\n{BEGIN}\nnew\n{END}\n")
        );
    }
}
