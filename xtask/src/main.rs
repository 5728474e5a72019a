//! Project automation: `cargo xtask <command>`, one module per command: `gen` (`generate`:
//! deterministic transcripts), `bench-data` and `bench-compare` (`bench`: data sets and the
//! comparison with the reference implementations, timed through `src/bin/bench-runner.rs`),
//! `profile-open` (`profile`), `conformance` (op-scripts against the reference goldens),
//! `reliability` (the reliability suites), `modules` (the `crate::` graph of a crate's modules
//! and its cycles) and `scan` (envelope-scan throughput, here in `main`).
//!
//! Layout (`cargo xtask modules xtask`): `bench` uses `generate`, `markers` (generated sections
//! of the docs) and `proc` (measured child processes); `reliability` uses `bench` and
//! `markers`; `modules` uses `bench` (the workspace root); the others use no other module.
//! session-store is built with `test-util` (the op-script runner, the warm cache's bounds).

mod bench;
mod conformance;
mod generate;
mod markers;
mod modules;
mod proc;
mod profile;
mod reliability;

use std::time::Instant;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use session_format::{LineContent, LineReader};

#[derive(Debug, Parser)]
#[command(
    name = "cargo xtask",
    about = "Project automation for the session-store workspace"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Generate a deterministic transcript (`--size 200MB --branch-rate 0.01 --seed N -o FILE`;
    /// `--shape chain --entries 100000`, `--preset tree-60k`, `--sessions 10000 -o DIR`).
    Gen(generate::GenArgs),
    /// Generate (once) the benchmark data sets under target/bench-data/ and print their paths.
    BenchData(bench::BenchDataArgs),
    /// Run the workloads through our code and the references (fresh processes, alternating) and
    /// write the table into docs/BENCHMARKS.md.
    BenchCompare(bench::CompareArgs),
    /// Break the time and memory of `SessionManager::open` on FILE into phases.
    ProfileOpen(profile::ProfileArgs),
    /// Compare our op-script outputs with the reference goldens (`--refresh` regenerates them).
    Conformance(conformance::ConformanceArgs),
    /// Run the reliability suites (crash, truncation, concurrency, faults, model, never-panic,
    /// bad-input catalogue; release, `RELIABILITY_SCALE=full`) and the fuzz targets, print one
    /// table and write it into docs/RELIABILITY.md; exits 1 on any loss or failure.
    Reliability(reliability::ReliabilityArgs),
    /// Print the graph of `crate::` references between a crate's top-level modules and its
    /// cycles (`cargo xtask modules session-store`); exits 1 when there is a cycle.
    Modules(modules::ModulesArgs),
    /// Measure the envelope scan (line framing + validation + type/id/parentId) over a file.
    Scan {
        /// The transcript to scan.
        file: std::path::PathBuf,
        /// Repetitions (the best is reported).
        #[arg(long, default_value_t = 5)]
        runs: u32,
    },
}

/// Set in the release build `cargo xtask` re-executes for heavy commands.
const REEXEC_ENV: &str = "XTASK_RELEASE_REEXEC";

/// `cargo xtask` is a debug build; generating hundreds of megabytes or driving benchmarks wants
/// an optimised one. Builds the release binaries and runs the same command there; returns its
/// exit code.
fn reexec_in_release() -> Result<i32> {
    eprintln!("xtask: building the release binaries for this command");
    bench::build_release_bins(true)?;
    let exe = bench::target_dir()
        .join("release")
        .join(format!("xtask{}", std::env::consts::EXE_SUFFIX));
    let status = std::process::Command::new(&exe)
        .args(std::env::args_os().skip(1))
        .env(REEXEC_ENV, "1")
        .status()
        .with_context(|| format!("running {}", exe.display()))?;
    Ok(status.code().unwrap_or(1))
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let heavy = matches!(
        cli.command,
        Command::Gen(_)
            | Command::BenchData(_)
            | Command::BenchCompare(_)
            | Command::ProfileOpen(_)
    );
    if heavy && cfg!(debug_assertions) && std::env::var_os(REEXEC_ENV).is_none() {
        std::process::exit(reexec_in_release()?);
    }
    match cli.command {
        Command::BenchData(args) => bench::bench_data(&args)?,
        Command::BenchCompare(args) => bench::compare(&args)?,
        Command::ProfileOpen(args) => profile::run(&args)?,
        Command::Gen(args) => {
            let start = Instant::now();
            let summary = generate::run(&args)?;
            println!("{summary} in {:.2}s", start.elapsed().as_secs_f64());
        }
        Command::Conformance(args) => conformance::run(&args)?,
        Command::Reliability(args) => reliability::run(&args)?,
        Command::Modules(args) => {
            if !modules::run(&args)? {
                std::process::exit(1);
            }
        }
        Command::Scan { file, runs } => {
            let buf =
                std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
            let mut best = f64::INFINITY;
            let (mut rows, mut bad) = (0usize, 0usize);
            for _ in 0..runs.max(1) {
                let start = Instant::now();
                rows = 0;
                bad = 0;
                for line in LineReader::new(&buf) {
                    match line.content {
                        LineContent::Json(env) => rows += usize::from(env.id.is_present()),
                        LineContent::Malformed(_) => bad += 1,
                        LineContent::Blank => {}
                    }
                }
                best = best.min(start.elapsed().as_secs_f64());
            }
            println!(
                "{}: {} bytes, {rows} rows with ids, {bad} malformed; best of {runs}: {:.3}s = {:.0} MB/s",
                file.display(),
                buf.len(),
                best,
                buf.len() as f64 / best / 1e6
            );
        }
    }
    Ok(())
}
