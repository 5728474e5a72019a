//! The `sessions` command: list, inspect, check and export OpenClaw and pi session transcripts
//! (JSONL) without ever modifying them, and build a demo store.
//!
//! Invariants:
//! - every inspection subcommand (`list`, `tree`, `context`, `show`, `stats`, `check`, `export`)
//!   opens files with [`session_store::SessionManager::open_read_only`] or reads them with
//!   `session_store::io::read_file` / `session_store::list::session_info`: no writable open, so a
//!   file's bytes and mtime are unchanged afterwards (even a v1 file, which a writable open
//!   would migrate);
//! - the only files this command writes are `export -o OUT` and the demo store, both through
//!   `session_store::io`;
//! - exit codes: 0 ok, 1 `check` found problems, 2 usage or I/O errors.

mod address;
mod check;
mod context;
mod demo;
mod export;
mod list;
mod model;
mod output;
mod render;
mod replay;
mod show;
mod stats;
mod text;
mod tree;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::address::{Locator, SessionSelector};

const ABOUT: &str =
    "List, inspect, check and export OpenClaw and pi session transcripts (JSONL), read-only.";

const LONG_ABOUT: &str = "\
List, inspect, check and export OpenClaw and pi session transcripts (JSONL).

Every inspection subcommand opens files read-only: a file's bytes and modification time are the
same afterwards, even for an old (v1/v2) file that OpenClaw would migrate and rewrite on open.

Addressing a session (the same for every subcommand that takes one):
  FILE                               a path to a .jsonl transcript
  --agent ID --session NAME          <root>/agents/ID/sessions/NAME.jsonl
  --dir DIR --session NAME           DIR/NAME.jsonl (e.g. ~/.pi/agent/sessions/--home-me-proj--)
  --root DIR                         the OpenClaw state directory
                                     [default: $OPENCLAW_STATE_DIR, else ~/.openclaw]
NAME may also be the part of the file name after its first '_' (the session id of
<timestamp>_<uuid>.jsonl) when only one file has it. An unknown agent or session is an error
listing close matches.

Exit codes: 0 ok; 1 `check` found problems; 2 usage or I/O error.";

/// The command line.
#[derive(Debug, Parser)]
#[command(name = "sessions", version, about = ABOUT, long_about = LONG_ABOUT)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the sessions of a store, newest first.
    #[command(long_about = list::LONG_ABOUT)]
    List(ListArgs),
    /// Print a session's entry tree.
    #[command(long_about = tree::LONG_ABOUT)]
    Tree(TreeArgs),
    /// Print the model context of a session (what the model would be sent).
    #[command(long_about = context::LONG_ABOUT)]
    Context(ContextArgs),
    /// Print one entry as pretty JSON.
    #[command(
        long_about = show::LONG_ABOUT,
        override_usage = "sessions show [OPTIONS] FILE ENTRY_ID\n       sessions show [OPTIONS] (--agent ID | --dir DIR) --session NAME ENTRY_ID"
    )]
    Show(ShowArgs),
    /// Print statistics of one or more sessions.
    #[command(long_about = stats::LONG_ABOUT)]
    Stats(StatsArgs),
    /// Verify session files without writing to them (exit code 1 when problems are found).
    #[command(long_about = check::LONG_ABOUT)]
    Check(CheckArgs),
    /// Export a session as JSON, JSONL, Markdown or a self-contained HTML page.
    #[command(long_about = export::LONG_ABOUT)]
    Export(ExportArgs),
    /// Build a demo store and show `list`, `tree` and `context` on it.
    #[command(long_about = demo::LONG_ABOUT)]
    Demo(DemoArgs),
    /// Run a conformance op-script in a fresh temporary directory and print its normalized output.
    #[command(long_about = replay::LONG_ABOUT)]
    Replay(ReplayArgs),
}

#[derive(Debug, Args)]
struct ListArgs {
    #[command(flatten)]
    locator: Locator,
    /// List every agent of the store (the default when neither --agent nor --dir is given).
    #[arg(long, conflicts_with_all = ["agent", "dir"])]
    all: bool,
    /// Print JSON instead of a table (shape in `sessions list --help`).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct TreeArgs {
    /// The session file (or use --agent/--dir with --session).
    file: Option<PathBuf>,
    #[command(flatten)]
    selector: SessionSelector,
    /// Show entries down to this depth only (the root is depth 1); deeper entries are counted.
    #[arg(long, value_name = "N")]
    depth: Option<usize>,
    /// Line width for the text excerpts [default: the terminal's width, else 100].
    #[arg(long, value_name = "COLUMNS")]
    width: Option<usize>,
    /// Print JSON instead of text (shape in `sessions tree --help`).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct ContextArgs {
    /// The session file (or use --agent/--dir with --session).
    file: Option<PathBuf>,
    #[command(flatten)]
    selector: SessionSelector,
    /// Build the context for the branch ending at this entry instead of the current leaf.
    #[arg(long, value_name = "ENTRY_ID")]
    leaf: Option<String>,
    /// Line width for the text excerpts [default: the terminal's width, else 100].
    #[arg(long, value_name = "COLUMNS")]
    width: Option<usize>,
    /// Print the context as JSON, exactly as `buildSessionContext` returns it.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct ShowArgs {
    /// `FILE ENTRY_ID`, or only `ENTRY_ID` with --agent/--dir and --session. ENTRY_ID may be a
    /// unique prefix, or `@LINE` (the entry on that 1-based line of the file).
    #[arg(required = true, num_args = 1..=2, value_names = ["FILE", "ENTRY_ID"])]
    args: Vec<std::ffi::OsString>,
    #[command(flatten)]
    selector: SessionSelector,
    /// Print the stored line exactly as it is in the file instead of the normalised entry.
    #[arg(long)]
    raw: bool,
}

#[derive(Debug, Args)]
struct StatsArgs {
    /// Session files (or use --agent/--dir, with --session for one session).
    files: Vec<PathBuf>,
    #[command(flatten)]
    selector: SessionSelector,
    /// Print JSON instead of text (shape in `sessions stats --help`).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct CheckArgs {
    /// Session files (or use --agent/--dir, with --session for one session).
    files: Vec<PathBuf>,
    #[command(flatten)]
    selector: SessionSelector,
    /// Print JSON instead of text (shape in `sessions check --help`).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct ExportArgs {
    /// The session file (or use --agent/--dir with --session).
    file: Option<PathBuf>,
    #[command(flatten)]
    selector: SessionSelector,
    /// Output format.
    #[arg(long, value_enum, default_value_t = export::Format::Json)]
    format: export::Format,
    /// Write to this file instead of stdout (never over an existing file unless --force, never
    /// over the session file itself).
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    output: Option<PathBuf>,
    /// Replace OUT when it exists.
    #[arg(long)]
    force: bool,
}

#[derive(Debug, Args)]
struct DemoArgs {
    /// Where to build the demo store.
    #[arg(long, value_name = "DIR", default_value = "sessions-demo")]
    root: PathBuf,
    /// Rebuild over an earlier demo: removes only the files that demo created (and left
    /// unchanged), never anything else.
    #[arg(long)]
    force: bool,
    /// Line width for the text excerpts [default: the terminal's width, else 100].
    #[arg(long, value_name = "COLUMNS")]
    width: Option<usize>,
}

#[derive(Debug, Args)]
struct ReplayArgs {
    /// The op-script (JSON, format: shared/conformance/OPS.md).
    script: PathBuf,
}

/// What a successful run found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Nothing to report.
    Ok,
    /// `check` found problems (exit code 1).
    Problems,
    /// Some input could not be read; already reported on stderr (exit code 2).
    Failed,
}

fn run(cli: Cli) -> anyhow::Result<Outcome> {
    let mut out = output::Output::new();
    let outcome = match cli.command {
        Command::List(a) => {
            list::run(&a.locator, a.all, a.json, &mut out)?;
            Outcome::Ok
        }
        Command::Tree(a) => {
            let path = address::resolve_one(a.file.as_deref(), &a.selector)?;
            let opts = tree::TreeOptions {
                depth: a.depth,
                width: text::output_width(a.width),
            };
            if a.json {
                tree::run_json(&path, &opts, &mut out)?;
            } else {
                tree::run_text(&path, &opts, &mut out)?;
            }
            Outcome::Ok
        }
        Command::Context(a) => {
            let path = address::resolve_one(a.file.as_deref(), &a.selector)?;
            context::run(
                &path,
                a.leaf.as_deref(),
                a.json,
                text::output_width(a.width),
                &mut out,
            )?;
            Outcome::Ok
        }
        Command::Show(a) => {
            let (file, entry) = match a.args.as_slice() {
                [file, entry] => (Some(PathBuf::from(file)), entry),
                [entry] => (None, entry),
                _ => anyhow::bail!(address::UsageError::new("show takes FILE ENTRY_ID")),
            };
            let entry = entry
                .to_str()
                .ok_or_else(|| address::UsageError::new("ENTRY_ID is not valid UTF-8"))?;
            let path = address::resolve_one(file.as_deref(), &a.selector)?;
            show::run(&path, entry, a.raw, &mut out)?;
            Outcome::Ok
        }
        Command::Stats(a) => {
            let paths = address::resolve_many(&a.files, &a.selector)?;
            stats::run(&paths, a.json, &mut out)?;
            Outcome::Ok
        }
        Command::Check(a) => {
            let paths = address::resolve_many(&a.files, &a.selector)?;
            check::run(&paths, a.json, &mut out)?
        }
        Command::Export(a) => {
            let path = address::resolve_one(a.file.as_deref(), &a.selector)?;
            export::run(&path, a.format, a.output.as_deref(), a.force, &mut out)?;
            Outcome::Ok
        }
        Command::Demo(a) => {
            demo::run(&a.root, a.force, text::output_width(a.width), &mut out)?;
            Outcome::Ok
        }
        Command::Replay(a) => {
            replay::run(&a.script, &mut out)?;
            Outcome::Ok
        }
    };
    out.finish()?;
    Ok(outcome)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::Problems) => ExitCode::from(1),
        Ok(Outcome::Failed) => ExitCode::from(2),
        Err(e) => {
            if output::is_broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
