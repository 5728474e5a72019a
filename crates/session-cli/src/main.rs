//! The `sessions` command: list, inspect, check and export OpenClaw and pi session transcripts
//! (JSONL) without ever modifying them, and build a demo store.
//!
//! Invariants:
//! - every inspection subcommand (`list`, `tree`, `context`, `show`, `stats`, `check`, `export`)
//!   opens files with [`session_store::SessionManager::open_read_only`] or reads them with
//!   `session_store::io::read_file` / `session_store::list::session_info`: no writable open, so a
//!   file's bytes and mtime are unchanged afterwards (even a v1 file, which a writable open
//!   would migrate);
//! - a session file is read only after `stat` (following symlinks) found a regular file
//!   (`fsx`): a FIFO is never opened, a link to a device never read;
//! - the only files this command writes are `export -o OUT` (only over a regular file or a
//!   missing path), the demo store, and `replay`'s temporary directory, all through
//!   `session_store::io`;
//! - human output escapes control and bidirectional-text characters; JSON output is exact;
//! - exit codes: 0 ok, 1 `check` found problems, 2 usage or I/O errors.

mod address;
mod check;
mod context;
mod demo;
mod export;
mod fsx;
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

const ABOUT: &str = "List, inspect, check and export OpenClaw and pi session transcripts (JSONL) \
                     without modifying them.";

const LONG_ABOUT: &str = "\
List, inspect, check and export OpenClaw and pi session transcripts (JSONL).

The inspection subcommands (list, tree, context, show, stats, check, export to stdout) open
files read-only: a file's bytes and modification time are the same afterwards, even for an old
(v1/v2) file that OpenClaw would migrate and rewrite on open. Only regular files are read
(a FIFO, device or socket named *.jsonl is reported, never opened). What writes: `demo` (the
demo store under --root), `export -o OUT` (OUT only), and the developer command `replay` (in a
temporary directory it removes).

Addressing a session (the same for every subcommand that takes one):
  FILE                               a path to a .jsonl transcript (not `-`: stdin is not read)
  --agent ID --session NAME          a session of <root>/agents/ID/sessions/
  --dir DIR --session NAME           a session of DIR (e.g. ~/.pi/agent/sessions/--home-me-proj--)
  --pi --session NAME                a session of pi's store ($PI_CODING_AGENT_DIR/sessions,
                                     else ~/.pi/agent/sessions)
  --root DIR                         the OpenClaw state directory
                                     [default: $OPENCLAW_STATE_DIR, else ~/.openclaw]
A sessions directory (--agent, --dir, --pi) always means the *.jsonl files directly in it and in
its immediate sub-directories, in every subcommand. NAME is the file name without .jsonl, the
part of the file name after its first '_' (the session id of <timestamp>_<uuid>.jsonl, the user
id of <channel>_<userId>.jsonl), or the session id from the file's header (the ID column of
`sessions list`), in full or a unique prefix of at least 8 characters. An unknown agent or
session is an error listing close matches.

Human output escapes control and bidirectional-text characters (as \\u{202e}); JSON output is
exact.

Exit codes: 0 ok; 1 `check` found problems; 2 usage or I/O error (also when some of several
files could not be read by `check` or `stats`).";

/// `--width`: at least 40 columns.
fn parse_width(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(w) if w >= 40 => Ok(w),
        Ok(_) => Err("the width must be at least 40 columns".to_owned()),
        Err(e) => Err(e.to_string()),
    }
}

/// `--depth`: at least 1 (the root).
fn parse_depth(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(d) if d >= 1 => Ok(d),
        Ok(_) => Err("the depth must be at least 1 (the root is depth 1)".to_owned()),
        Err(e) => Err(e.to_string()),
    }
}

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
        override_usage = "sessions show [OPTIONS] FILE ENTRY_ID\n       sessions show [OPTIONS] (--agent ID | --dir DIR | --pi) --session NAME ENTRY_ID"
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
    /// Developer tool: run a conformance op-script in a temporary directory and print its
    /// normalized output.
    #[command(long_about = replay::LONG_ABOUT, hide = true)]
    Replay(ReplayArgs),
}

#[derive(Debug, Args)]
struct ListArgs {
    #[command(flatten)]
    locator: Locator,
    /// List every agent of the store (the default when none of --agent, --dir, --pi is given).
    #[arg(long, conflicts_with_all = ["agent", "dir", "pi"])]
    all: bool,
    /// Print JSON instead of a table (shape in `sessions list --help`).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct TreeArgs {
    /// The session file (or use --agent/--dir/--pi with --session).
    file: Option<PathBuf>,
    #[command(flatten)]
    selector: SessionSelector,
    /// Show entries down to this depth only (the root is depth 1; N ≥ 1); deeper entries are
    /// counted.
    #[arg(long, value_name = "N", value_parser = parse_depth)]
    depth: Option<usize>,
    /// Line width for the text excerpts, at least 40 [default: the terminal's width, else 100].
    #[arg(long, value_name = "COLUMNS", value_parser = parse_width)]
    width: Option<usize>,
    /// Print JSON instead of text (shape in `sessions tree --help`).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct ContextArgs {
    /// The session file (or use --agent/--dir/--pi with --session).
    file: Option<PathBuf>,
    #[command(flatten)]
    selector: SessionSelector,
    /// Build the context for the branch ending at this entry instead of the current leaf.
    #[arg(long, value_name = "ENTRY_ID")]
    leaf: Option<String>,
    /// Line width for the text excerpts, at least 40 [default: the terminal's width, else 100].
    #[arg(long, value_name = "COLUMNS", value_parser = parse_width)]
    width: Option<usize>,
    /// Print the context as JSON, exactly as `buildSessionContext` returns it.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct ShowArgs {
    /// `FILE ENTRY_ID`, or only `ENTRY_ID` with --agent/--dir/--pi and --session. ENTRY_ID may
    /// be a unique prefix, or `@LINE` (the entry on that 1-based line of the file; with --raw,
    /// any line).
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
    /// Session files (or use --agent/--dir/--pi, with --session for one session).
    files: Vec<PathBuf>,
    #[command(flatten)]
    selector: SessionSelector,
    /// Print JSON instead of text (shape in `sessions stats --help`).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct CheckArgs {
    /// Session files (or use --agent/--dir/--pi, with --session for one session).
    files: Vec<PathBuf>,
    #[command(flatten)]
    selector: SessionSelector,
    /// Print JSON instead of text (shape in `sessions check --help`).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct ExportArgs {
    /// The session file (or use --agent/--dir/--pi with --session).
    file: Option<PathBuf>,
    #[command(flatten)]
    selector: SessionSelector,
    /// Output format.
    #[arg(long, value_enum, default_value_t = export::Format::Json)]
    format: export::Format,
    /// Write to this file instead of stdout (`-`: stdout). A new file gets mode 0600; an
    /// existing one is replaced only with --force and only if it is a regular file (never a
    /// directory, FIFO, socket or device, never the session file itself).
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    output: Option<PathBuf>,
    /// Replace OUT when it is an existing regular file: atomically, keeping its mode bits (and
    /// owner and group where allowed); see `sessions export --help`.
    #[arg(long)]
    force: bool,
}

#[derive(Debug, Args)]
struct DemoArgs {
    /// Where to build the demo store.
    #[arg(long, value_name = "DIR", default_value = "sessions-demo")]
    root: PathBuf,
    /// Rebuild over an earlier demo: removes only the files that demo created (and left
    /// unchanged), never anything else. Refused on a non-empty root without a demo manifest
    /// (e.g. a real OpenClaw store).
    #[arg(long)]
    force: bool,
    /// Line width for the text excerpts, at least 40 [default: the terminal's width, else 100].
    #[arg(long, value_name = "COLUMNS", value_parser = parse_width)]
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
            let flags = a.selector.locator.names_dir() || a.selector.session.is_some();
            let (file, entry) = match a.args.as_slice() {
                [file, entry] => (Some(PathBuf::from(file)), entry),
                [only] if !flags => {
                    let p = PathBuf::from(only);
                    let looks_like_file = p.extension().is_some_and(|e| e == "jsonl")
                        || only.to_string_lossy().contains('/')
                        || p.is_file();
                    anyhow::bail!(address::UsageError::new(if looks_like_file {
                        format!(
                            "missing ENTRY_ID: `sessions show {} ENTRY_ID` (an entry id, a unique \
                             prefix of one, or @LINE; `sessions tree` lists the ids)",
                            text::shell_quote(&p.display().to_string())
                        )
                    } else {
                        "show takes FILE ENTRY_ID, or ENTRY_ID with --agent/--dir/--pi and \
                         --session NAME"
                            .to_owned()
                    }))
                }
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
            stats::run(&paths, a.json, &mut out)?
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
            eprintln!("error: {}", output::error_text(&e));
            ExitCode::from(2)
        }
    }
}
