//! Project automation: `cargo xtask <command>`.

mod conformance;
mod generate;

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
    /// Generate a deterministic transcript (`--size 200MB --branch-rate 0.01 --seed N -o FILE`).
    Gen(generate::GenArgs),
    /// Compare our op-script outputs with the reference goldens (`--refresh` regenerates them).
    Conformance(conformance::ConformanceArgs),
    /// Measure the envelope scan (line framing + validation + type/id/parentId) over a file.
    Scan {
        /// The transcript to scan.
        file: std::path::PathBuf,
        /// Repetitions (the best is reported).
        #[arg(long, default_value_t = 5)]
        runs: u32,
    },
}

fn main() -> Result<()> {
    match Cli::parse().command {
        Command::Gen(args) => {
            let start = Instant::now();
            let (lines, bytes) = generate::generate(&args)?;
            println!(
                "wrote {} ({lines} lines, {bytes} bytes) in {:.2}s",
                args.output.display(),
                start.elapsed().as_secs_f64()
            );
        }
        Command::Conformance(args) => conformance::run(&args)?,
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
