//! The `sessions` command: list, inspect, check and export OpenClaw and pi session transcripts
//! (JSONL) without ever modifying them, build a demo store, and the write commands of the store's
//! maintenance: repair a session, remove stale write locks, archive and clear sessions; plus
//! `keys parse`, which classifies a session key.
//!
//! Invariants:
//! - every inspection subcommand (`list`, `tree`, `context`, `show`, `stats`, `usage`,
//!   `check`, `export`) and `keys parse` opens files with
//!   [`session_store::SessionManager::open_read_only`] or reads them with `session_store::io::read_file` / `session_store::session_info` (or reads
//!   nothing): no writable open, so a file's bytes and mtime are unchanged afterwards (even a v1
//!   file, which a writable open would migrate);
//! - a session file is read only after `stat` (following symlinks) found a regular file
//!   (`fsx`): a FIFO is never opened, a link to a device never read;
//! - the files this command writes are: `export -o OUT` (only over a regular file or a missing
//!   path), the demo store, `replay`'s temporary directory, and the write commands —
//!   `repair` (the session file, atomically, after a byte-exact backup `<file>.bak-<pid>-<ms>`
//!   that is kept unless `--no-backup`, under the session write lock `<file>.lock`, which it
//!   creates and removes), `unlock --stale` (removes only stale `*.jsonl.lock` files, never a
//!   running holder's), `archive` and `clear` (move sessions into `<sessions>/archive/`; `clear
//!   --purge` deletes; `clear` needs `--yes`; locked files, symlinks and non-session files are
//!   never touched), `cleanup` (OpenClaw's session maintenance: removes rows from
//!   `sessions.json` in one atomic rewrite, then renames files in place to
//!   `<name>.deleted.<ts>`, deleting nothing) — all through `session_store::io`,
//!   `session_store::lock`, `session_semantics::retention` and
//!   `session_semantics::openclaw_store::maintenance`;
//! - every write command has `--dry-run`, which writes nothing at all (no lock file, no backup);
//! - `serve` writes nothing unless `--allow-write`; then its two POST actions append one row
//!   each (a leaf control, a `branch_summary` entry) to a session file through
//!   `session_store::SessionManager`, under the session write lock (its lock file created and
//!   removed), refused while a live process holds that lock;
//! - human output escapes control and bidirectional-text characters; JSON output is exact;
//! - exit codes: 0 ok (nothing to do); 1 `check` found problems, or a write command changed
//!   something (with `--dry-run`: would change something); 2 usage or I/O errors, and failed
//!   write actions;
//! - `--backend redis://…` ([`backend`]) makes `list`, `tree`, `context`, `show`,
//!   `stats`, `usage`, `check` and `export` read the sessions from a Redis store through
//!   `session_store::Storage` (the same output, paths shown absolute; nothing written
//!   there); `keys parse` (which reads no store) ignores it, every other subcommand refuses
//!   it. `migrate` copies sessions between files and Redis, byte for byte,
//!   never replacing a destination session;
//! - OpenClaw 2026.8+ SQLite installs (`<root>/agents/<id>/agent/openclaw-agent.sqlite`, found
//!   when a read command addresses the state directory, or `--backend sqlite:PATH`) are read
//!   through the same backend as Redis (`backend::StoreBackend`, over
//!   `session_store::sqlite::SqliteStorage`), read-only; every write command refuses them
//!   before doing anything (exit code 2).
//!
//! Layout (`cargo xtask modules session-cli` prints the graph): one module per subcommand, over
//! shared modules each using only those listed after it: `model` (the read-only open and the
//! tree walk; it also uses the `check` subcommand's findings), `address` (the session a command
//! line names), `ctx` (the backend and output a run uses, passed down as `&Ctx`), `backend`
//! (files, Redis or SQLite), `fsx` (what is at a path), `output`, `render` and `report`, then `text` and
//! `outcome` (exit codes, `UsageError`). Among the subcommands, `demo` reuses `context`, `list`
//! and `tree`, `usage` reuses `list` (the agents of a store), and `archive` reuses `clear`;
//! `demo` and `archive` write OpenClaw stores (`sessions.json`) through `store_ops` (which uses `address` and `report`). session-store is built with `redis` (`--backend`,
//! `migrate`) and `test-util` (the hidden `sessions replay`).

mod address;
mod archive;
mod backend;
mod check;
mod cleanup;
mod clear;
mod context;
mod ctx;
mod demo;
mod dispose;
mod duration;
mod export;
mod fsx;
mod gateway;
mod keys;
mod list;
mod list_cmd;
mod migrate;
mod model;
mod outcome;
mod output;
// Used by the read commands and export (issue 20); remove the allow once they call it.
#[allow(dead_code)]
mod progress;
mod render;
mod repair;
mod replay;
mod report;
mod rowscan;
mod search;
mod serve;
mod show;
mod stats;
mod store_files;
mod store_list;
mod store_ops;
mod text;
mod tree;
mod unlock;
mod usage;
mod verify_import;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::bail;
use clap::{Args, Parser, Subcommand};

use crate::address::{Locator, SessionSelector};
use crate::backend::Backend;
use crate::ctx::Ctx;
use crate::outcome::{Outcome, UsageError};

const ABOUT: &str = "List, inspect, check and export OpenClaw and pi session transcripts (JSONL) \
                     without modifying them; repair, unlock, archive and clear on request.";

const LONG_ABOUT: &str = "\
List, inspect, check and export OpenClaw and pi session transcripts (JSONL).

The inspection subcommands (list, tree, context, show, stats, search, usage, check, export to stdout) open
files read-only: a file's bytes and modification time are the same afterwards, even for an old
(v1/v2) file that OpenClaw would migrate and rewrite on open. Only regular files are read
(a FIFO, device or socket named *.jsonl is reported, never opened). What writes: `demo` (the
demo store under --root), `export -o OUT` (OUT only), the developer command `replay` (in a
temporary directory it removes), and the write commands: `repair` (rewrites a session after a
byte-exact backup, under the session write lock), `unlock --stale` (removes stale lock files,
never a running holder's), `archive` and `clear` (move sessions into <sessions>/archive/;
on an OpenClaw store, a directory holding sessions.json, they rename the transcript in place to
`<file>.deleted.<time>` or `<file>.reset.<time>` and edit sessions.json instead; `clear --purge`
deletes, and `clear` needs --yes), `cleanup` (OpenClaw's maintenance of sessions.json: prunes,
caps and sweeps, archiving what it removes) and `migrate` (copies sessions between a directory
and Redis). Each write command has --dry-run, which writes nothing. `serve` (a local
dashboard) writes nothing unless --allow-write: then its \"branch from here\" and \"branch with
summary\" append one row to a session, under the session write lock. Locked sessions, symlinks and files that are not sessions are never archived or
cleared. `keys parse` reads nothing.

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
`sessions list` for plain directories; on an OpenClaw store `sessionId` in `sessions list
--json`, or the file name in the PATH column), in full or a unique prefix of at least 8
characters. Where the directory
holds OpenClaw's sessions.json, NAME may also be a session key (agent:main:telegram:direct:123,
or the part after agent:<ID>:, e.g. main), resolved through sessions.json to its row's
transcript. An unknown agent, session or key is an error listing close matches (or the keys). NAME and ID are one path component each: a value
that is empty, `.`, `..` or absolute, holds `/`, `\\`, NUL or a control character, or is longer
than 255 bytes is a usage error (exit code 2) naming the value and the rule, e.g. `invalid
session name \"../x\": contains '/'`, in every subcommand, before anything is read or written.

Human output escapes control and bidirectional-text characters (as \\u{202e}); JSON output is
exact.

Sessions in Redis (--backend URL, before or after the subcommand):
  --backend redis://HOST:PORT/[DB][?prefix=NAME]
                                     read the sessions of list, tree, context, show, stats, search, usage, check
                                     and export from that Redis store instead of files (keys
                                     parse ignores it, the other subcommands refuse it); the same
                                     output with paths shown absolute, nothing written there.
                                     Paths, --dir, --root, --agent and --session name its keys:
                                     the directory (made absolute) is the namespace, the file
                                     name the session. No TLS (rediss://). [default: files]
  --redis-prefix NAME                the key prefix [default: openclaw:sessions]
`sessions migrate --from SRC --to DST` copies every session between a directory and a Redis
store, either way, byte for byte, and exports an OpenClaw 2026.8+ SQLite store (`--from
sqlite:PATH`) as a JSONL-era store (see `sessions migrate --help`).

OpenClaw 2026.8+ installs (SQLite, read-only):
  --root DIR                         when DIR (or $OPENCLAW_STATE_DIR, else ~/.openclaw) holds
                                     agents/<ID>/agent/openclaw-agent.sqlite, list, tree,
                                     context, show, stats, search, usage, check and export read each agent's
                                     database instead of files: its sessions appear at
                                     <root>/agents/<ID>/sessions/<sessionId>.jsonl (where the
                                     JSONL-era store kept them), its keys come from the database,
                                     and the output is what the same session prints as a file.
                                     A legacy agents/<ID>/sessions/sessions.json beside a
                                     database is not read (a warning names both).
  --backend sqlite:PATH              read that one database (agent id from its schema_meta)
  --backend files                    read the JSONL files even where a database exists
Every write command (archive, clear, cleanup, repair, unlock, demo, export -o into the
sessions directory, migrate --to sqlite:) refuses a SQLite store before doing anything (exit
code 2): OpenClaw owns the database.

Exit codes: 0 ok; 1 `check` found problems, or a write command (repair, unlock, archive,
clear, cleanup, migrate) changed something (with --dry-run: would change something); 2 usage or I/O
error (also when some of several files could not be read by `check` or `stats`, a lock could
not be taken, a key does not parse, or a write action failed).";

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
    /// Where list, tree, context, show, stats, search, usage, check and export read sessions: `files`, an
    /// OpenClaw 2026.8+ database `sqlite:PATH` (read-only), or a Redis store,
    /// `redis://HOST:PORT/[DB][?prefix=NAME]` [default: the state directory's agent databases
    /// when it has any, else files].
    #[arg(long, global = true, value_name = "URL")]
    backend: Option<String>,
    /// The Redis key prefix (for --backend and migrate) [default: openclaw:sessions].
    #[arg(long, global = true, value_name = "NAME")]
    redis_prefix: Option<String>,
    /// Run as of this time (ISO 8601, UTC unless it has an offset, or epoch milliseconds)
    /// [default: now]: the ages of `list` and the retention of `archive`, `clear` and
    /// `cleanup` are computed from it, and the timestamps written (by the write commands,
    /// `demo`, and the header of `export --format jsonl`). Other read commands ignore it.
    #[arg(long, global = true, value_name = "TIME", value_parser = archive::parse_now)]
    now: Option<i64>,
    /// For the commands that write an OpenClaw sessions.json (archive, clear, cleanup): write
    /// it even though a gateway's lock says one runs, only after you stopped the gateway (its
    /// lock can outlive it by 30 s). Read commands ignore it; --dry-run never needs it.
    #[arg(long, global = true)]
    offline_ok: bool,
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
    /// Search every branch of every session for a literal or a regex (grep's exit codes).
    #[command(long_about = search::LONG_ABOUT)]
    Search(search::SearchArgs),
    /// Sum the token usage and cost of sessions, by day, month, model, session or agent.
    #[command(long_about = usage::LONG_ABOUT)]
    Usage(UsageArgs),
    /// Verify session files without writing to them (exit code 1 when problems are found).
    #[command(long_about = check::LONG_ABOUT)]
    Check(CheckArgs),
    /// Export a session as JSON, JSONL, Markdown or a self-contained HTML page.
    #[command(long_about = export::LONG_ABOUT)]
    Export(ExportArgs),
    /// Build a demo store and show `list`, `tree` and `context` on it.
    #[command(long_about = demo::LONG_ABOUT)]
    Demo(DemoArgs),
    /// Repair a session file as OpenClaw does before a run (writes; --dry-run writes nothing).
    #[command(long_about = repair::LONG_ABOUT)]
    Repair(RepairArgs),
    /// List the write-lock files of a sessions directory and remove the stale ones.
    #[command(long_about = unlock::LONG_ABOUT)]
    Unlock(UnlockArgs),
    /// Session keys: `keys parse KEY` classifies one.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Move old or surplus sessions into `<sessions>/archive/` (retention policy).
    #[command(long_about = archive::LONG_ABOUT)]
    Archive(ArchiveArgs),
    /// Archive (or with --purge, delete) one or every session of an agent; needs --yes.
    #[command(
        long_about = clear::LONG_ABOUT,
        override_usage = "sessions clear [OPTIONS] --agent ID (--session NAME | --all) (--yes | --dry-run)"
    )]
    Clear(ClearArgs),
    /// OpenClaw's session maintenance on sessions.json (prune, cap, sweep), archiving instead
    /// of deleting (--dry-run writes nothing).
    #[command(long_about = cleanup::LONG_ABOUT)]
    Cleanup(CleanupArgs),
    /// Copy every session between a directory and a Redis store, byte for byte, or export an
    /// OpenClaw SQLite store as JSONL files (--dry-run writes nothing).
    #[command(long_about = migrate::LONG_ABOUT)]
    Migrate(MigrateArgs),
    /// Verify OpenClaw's import of the legacy JSONL store into SQLite against its archives,
    /// and salvage what it lost (--salvage OUT_DIR; never writes into the state directory).
    #[command(name = "verify-import", long_about = verify_import::LONG_ABOUT)]
    VerifyImport(VerifyImportArgs),
    /// A local dashboard over a store: sessions, search, each session's page with live
    /// updates; read-only unless --allow-write (branch from here, branch with summary).
    #[command(long_about = serve::LONG_ABOUT)]
    Serve(serve::ServeArgs),
    /// Developer tool: run a conformance op-script in a temporary directory and print its
    /// normalized output.
    #[command(long_about = replay::LONG_ABOUT, hide = true)]
    Replay(ReplayArgs),
}

#[derive(Debug, Args)]
struct ListArgs {
    #[command(flatten)]
    locator: Locator,
    /// List every agent of the store (the default when none of --agent, --dir, --pi is given;
    /// --all-agents is the reference's name for it).
    #[arg(long, visible_alias = "all-agents", conflicts_with_all = ["agent", "dir", "pi"])]
    all: bool,
    /// Print JSON instead of a table (shape in `sessions list --help`).
    #[arg(long)]
    json: bool,
    /// Only sessions updated in the last MINUTES minutes (a positive whole number of minutes,
    /// as `openclaw sessions --active`).
    #[arg(long, value_name = "MINUTES", value_parser = parse_active_minutes)]
    active: Option<u64>,
    /// At most N store keys, newest first, or `all` [default on an OpenClaw store: 100, as
    /// `openclaw sessions`; elsewhere: all].
    #[arg(long, value_name = "N|all", value_parser = parse_list_limit)]
    limit: Option<ListLimit>,
    /// List the archived transcripts of an OpenClaw store (`.reset.`, `.deleted.` and `.bak.`
    /// archives beside `sessions.json`) instead of its sessions; on a SQLite store, only its
    /// archived keys (listed by default too, flagged `archived`) and reclaimed generations.
    #[arg(long)]
    archived: bool,
    /// Print every cell in full: the table is not fitted to the terminal's width.
    #[arg(long)]
    wide: bool,
}

/// `--limit N|all`: `None` is `all`.
#[derive(Clone, Copy, Debug)]
struct ListLimit(Option<usize>);

/// `--limit`: a positive integer or `all` (the reference's rule, R5.2).
fn parse_list_limit(s: &str) -> Result<ListLimit, String> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("all") {
        return Ok(ListLimit(None));
    }
    match t.parse::<usize>() {
        Ok(n) if n > 0 && t.bytes().all(|b| b.is_ascii_digit()) => Ok(ListLimit(Some(n))),
        _ => {
            Err("--limit must be a positive integer or \"all\", for example --limit 25".to_owned())
        }
    }
}

/// `--active`: a positive whole number of minutes (the reference's rule, R5.2).
fn parse_active_minutes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    match t.parse::<u64>() {
        Ok(n) if n > 0 && t.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
        _ => {
            Err("--active must be a positive number of minutes, for example --active 30".to_owned())
        }
    }
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
struct UsageArgs {
    /// Session files (or use --agent/--dir/--pi, with --session for one session; or --all).
    files: Vec<PathBuf>,
    #[command(flatten)]
    selector: SessionSelector,
    /// Every agent of the store (the default when no FILE and none of --agent, --dir, --pi is
    /// given).
    #[arg(long, conflicts_with_all = ["agent", "dir", "pi", "session", "files"])]
    all: bool,
    /// Group the rows by calendar day, month, model (provider/model), session or agent.
    #[arg(long, value_enum, default_value_t = usage::By::Day)]
    by: usage::By,
    /// Days and months in UTC instead of the local time zone.
    #[arg(long)]
    utc: bool,
    /// Only entries at or after TIME (ISO 8601, UTC unless it has an offset, or epoch
    /// milliseconds).
    #[arg(long, value_name = "TIME", value_parser = archive::parse_now)]
    since: Option<i64>,
    /// Only entries before TIME (exclusive; ISO 8601, UTC unless it has an offset, or epoch
    /// milliseconds).
    #[arg(long, value_name = "TIME", value_parser = archive::parse_now)]
    until: Option<i64>,
    /// Print JSON instead of a table (shape in `sessions usage --help`).
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
    /// Report at most N problems (errors and warnings) per file, the first by line, and stop
    /// checking a file once it has more (see `sessions check --help`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_problems: Option<u64>,
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
    /// existing one is replaced only with --force, only if it is a regular file, never a
    /// session file or a file of an OpenClaw sessions directory (never a
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
    /// Accepted for older scripts and ignored: rerunning the demo on its own store replaces it
    /// without it.
    #[arg(long = "force", hide = true)]
    _force: bool,
    /// Line width for the text excerpts, at least 40 [default: the terminal's width, else 100].
    #[arg(long, value_name = "COLUMNS", value_parser = parse_width)]
    width: Option<usize>,
}

#[derive(Debug, Args)]
struct RepairArgs {
    /// The session file (or use --agent/--dir/--pi with --session).
    file: Option<PathBuf>,
    #[command(flatten)]
    selector: SessionSelector,
    /// Print what would change and write nothing (no lock file, no backup).
    #[arg(long)]
    dry_run: bool,
    /// Delete the backup once the rewritten file has been read back and verified.
    #[arg(long)]
    no_backup: bool,
    /// How long to wait for the session write lock (a duration with a unit: ms, s, m, h, d,
    /// e.g. 5s or 1h30m; a bare number is refused; 0s tries once) [default: 60s, or
    /// $OPENCLAW_SESSION_WRITE_LOCK_ACQUIRE_TIMEOUT_MS].
    #[arg(long, value_name = "DURATION", value_parser = duration::parser("--lock-timeout"))]
    lock_timeout: Option<Duration>,
    /// Print JSON instead of text (shape in `sessions repair --help`).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct UnlockArgs {
    /// Only stale locks are ever removed (required: says so explicitly).
    #[arg(long, required = true)]
    stale: bool,
    /// The sessions directory holding the `*.jsonl.lock` files (or use --agent/--dir/--pi,
    /// with --session for one session's lock).
    #[arg(value_name = "DIR")]
    sessions_dir: Option<PathBuf>,
    #[command(flatten)]
    selector: SessionSelector,
    /// Age past which a lock counts as too-old (a duration with a unit: ms, s, m, h, d, e.g.
    /// 30m; a bare number is refused) [default: 30m, or $OPENCLAW_SESSION_WRITE_LOCK_STALE_MS].
    #[arg(long, value_name = "DURATION", value_parser = duration::parser("--stale-after"))]
    stale_after: Option<Duration>,
    /// List what would be removed and remove nothing.
    #[arg(long)]
    dry_run: bool,
    /// Print JSON instead of text (shape in `sessions unlock --help`).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct VerifyImportArgs {
    /// The OpenClaw state directory [default: $OPENCLAW_STATE_DIR, else ~/.openclaw].
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Print JSON instead of text (shape in `sessions verify-import --help`).
    #[arg(long)]
    json: bool,
    /// Write `OUT_DIR/<sessionId>.jsonl` with every parseable line of each damaged session's
    /// transcript (new files only, mode 0600; OUT_DIR must lie outside the state directory).
    #[arg(long, value_name = "OUT_DIR")]
    salvage: Option<PathBuf>,
    /// With --salvage: list the files that would be written and write nothing.
    #[arg(long)]
    dry_run: bool,
}

#[derive(Debug, Subcommand)]
enum KeysCommand {
    /// Parse and classify a session key (`agent:<agentId>:<rest>`).
    #[command(
        about = "Parse and classify a session key (agent:<agentId>:<rest>).",
        long_about = keys::LONG_ABOUT
    )]
    Parse(KeysParseArgs),
}

#[derive(Debug, Args)]
struct KeysParseArgs {
    /// The session key.
    key: String,
    /// The main session key (`session.mainKey`) [default: main].
    #[arg(long, value_name = "NAME")]
    main_key: Option<String>,
    /// Print JSON instead of text (shape in `sessions keys parse --help`).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct CleanupArgs {
    /// The agent whose store to clean: `<root>/agents/<ID>/sessions/sessions.json` [default:
    /// main].
    #[arg(long, value_name = "ID")]
    agent: Option<String>,
    /// Every agent under `<root>/agents`.
    #[arg(long)]
    all_agents: bool,
    /// The OpenClaw state directory [default: $OPENCLAW_STATE_DIR, else ~/.openclaw].
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// A `sessions.json` to clean (instead of --agent / --all-agents).
    #[arg(long, value_name = "PATH")]
    store: Option<PathBuf>,
    /// Print what would change and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Apply even when `session.maintenance.mode` is `warn`.
    #[arg(long)]
    enforce: bool,
    /// Also remove rows whose transcript is missing or header-only.
    #[arg(long)]
    fix_missing: bool,
    /// A session key never pruned, capped or evicted.
    #[arg(long, value_name = "KEY")]
    active_key: Option<String>,
    /// Delete the archives past retention (or chosen by the disk budget), as OpenClaw does,
    /// instead of keeping them.
    #[arg(long)]
    purge_archives: bool,
    /// Print JSON instead of text (shape in `sessions cleanup --help`).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct ArchiveArgs {
    /// The agent whose sessions to archive: `<root>/agents/<ID>/sessions/`.
    #[arg(long, value_name = "ID", conflicts_with = "all")]
    agent: Option<String>,
    /// Every agent of the store.
    #[arg(long)]
    all: bool,
    /// Archive this one session of --agent (a key, a file name or a session id), whatever its
    /// age; no policy is needed then.
    #[arg(long, value_name = "NAME", requires = "agent", conflicts_with_all = ["config", "max_age", "max_size"])]
    session: Option<String>,
    /// The OpenClaw state directory [default: $OPENCLAW_STATE_DIR, else ~/.openclaw].
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// A JSON config with `sessions.retention.maxAge` / `maxSize` (the flags win over it).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Archive sessions whose last activity is older (a duration with a unit: ms, s, m, h, d,
    /// e.g. 30d, 12h, 1h30m; a bare number is refused, as are zero and negative ages; `off`
    /// disables). A config file's maxAge keeps OpenClaw's rule (a bare number is days).
    #[arg(
        long,
        value_name = "DURATION",
        value_parser = archive::parse_age,
        allow_hyphen_values = true
    )]
    max_age: Option<archive::AgeFlag>,
    /// Then archive the oldest while the live sessions take more (e.g. 100mb; bare numbers are
    /// bytes; `off` disables).
    #[arg(long, value_name = "SIZE", value_parser = archive::parse_size)]
    max_size: Option<archive::SizeFlag>,
    /// Print the plan and move nothing.
    #[arg(long)]
    dry_run: bool,
    /// Go ahead even when the run would archive more than half of an agent's live sessions
    /// (without it such a run is refused, exit 2, before anything moves).
    #[arg(long)]
    allow_mass: bool,
    /// Print JSON instead of text (shape in `sessions archive --help`).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct ClearArgs {
    /// The agent: `<root>/agents/<ID>/sessions/`.
    #[arg(long, value_name = "ID", required = true)]
    agent: String,
    /// The session to clear: a key, a file name, or a session id (see `sessions clear --help`).
    #[arg(
        long,
        value_name = "NAME",
        conflicts_with = "all",
        required_unless_present = "all"
    )]
    session: Option<String>,
    /// Every session of the agent.
    #[arg(long)]
    all: bool,
    /// The OpenClaw state directory [default: $OPENCLAW_STATE_DIR, else ~/.openclaw].
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Delete instead of moving into archive/.
    #[arg(long)]
    purge: bool,
    /// Do it (required unless --dry-run; the command never prompts).
    #[arg(long)]
    yes: bool,
    /// Print what would be cleared and change nothing.
    #[arg(long)]
    dry_run: bool,
    /// With --all: go ahead even when that clears more than half of the agent's live sessions
    /// (it always does when every session can be cleared; without it such a run is refused,
    /// exit 2, before anything is touched).
    #[arg(long)]
    allow_mass: bool,
    /// Print JSON instead of text (shape in `sessions clear --help`).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct MigrateArgs {
    /// Where the sessions are: a directory, `redis://HOST:PORT/[DB][?prefix=NAME]`, or
    /// `sqlite:PATH` (an OpenClaw 2026.8+ agent database, or a state directory holding
    /// agents/*/agent/openclaw-agent.sqlite).
    #[arg(long, value_name = "SRC", required_unless_present = "from_root")]
    from: Option<PathBuf>,
    /// Export every agent database of this OpenClaw 2026.8+ state directory
    /// (agents/*/agent/openclaw-agent.sqlite), as `--from sqlite:DIR`.
    #[arg(long, value_name = "DIR", conflicts_with = "from")]
    from_root: Option<PathBuf>,
    /// Where they go: a redis:// URL when SRC is a directory, a directory when SRC is Redis,
    /// a directory or a redis:// URL when SRC is SQLite.
    #[arg(long, value_name = "DST")]
    to: PathBuf,
    /// The key path in Redis that corresponds to the directory side [default: the directory's
    /// own absolute path].
    #[arg(long, value_name = "PATH")]
    redis_root: Option<PathBuf>,
    /// Print what would be copied and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Print JSON instead of text (shape in `sessions migrate --help`).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct ReplayArgs {
    /// The op-script (JSON, format: shared/conformance/OPS.md).
    script: PathBuf,
}

impl Command {
    /// The subcommand's name, for messages.
    fn name(&self) -> &'static str {
        match self {
            Command::List(_) => "list",
            Command::Tree(_) => "tree",
            Command::Context(_) => "context",
            Command::Show(_) => "show",
            Command::Stats(_) => "stats",
            Command::Search(_) => "search",
            Command::Usage(_) => "usage",
            Command::Check(_) => "check",
            Command::Export(_) => "export",
            Command::Demo(_) => "demo",
            Command::Repair(_) => "repair",
            Command::Unlock(_) => "unlock",
            Command::Keys(_) => "keys parse",
            Command::Archive(_) => "archive",
            Command::Clear(_) => "clear",
            Command::Cleanup(_) => "cleanup",
            Command::Migrate(_) => "migrate",
            Command::VerifyImport(_) => "verify-import",
            Command::Serve(_) => "serve",
            Command::Replay(_) => "replay",
        }
    }

    /// True for the read-only subcommands that `--backend` applies to.
    fn reads_a_backend(&self) -> bool {
        matches!(
            self,
            Command::List(_)
                | Command::Tree(_)
                | Command::Context(_)
                | Command::Show(_)
                | Command::Stats(_)
                | Command::Search(_)
                | Command::Usage(_)
                | Command::Check(_)
                | Command::Export(_)
                | Command::Serve(_)
        )
    }
}

/// The refusal of a write command on an OpenClaw 2026.8+ SQLite store (exit code 2, the usage
/// and refusal code), naming the database.
fn sqlite_write_refusal(name: &str, db: &std::path::Path) -> UsageError {
    UsageError::new(format!(
        "{} is an OpenClaw 2026.8+ SQLite store, read-only here; `sessions {name}` writes \
         nothing to it (OpenClaw owns the database; list, tree, context, show, stats, search, usage, check and \
         export to stdout read it)",
        text::path(db)
    ))
}

/// The databases of the agents a write command would change, when it names the OpenClaw
/// state directory (or a sessions directory beside a database): every one of them makes the
/// command refuse before it does anything.
fn write_targets_in_sqlite(command: &Command) -> Vec<PathBuf> {
    use address::state_root;
    use backend::{sqlite_db_beside, sqlite_dbs_under};
    let agent_db = |root: Option<&std::path::Path>, agent: &str| {
        sqlite_db_beside(&state_root(root).join("agents").join(agent).join("sessions"))
    };
    let all = |root: Option<&std::path::Path>| -> Vec<PathBuf> {
        sqlite_dbs_under(&state_root(root))
            .into_iter()
            .map(|(_, db)| db)
            .collect()
    };
    let selector = |file: Option<&std::path::Path>, sel: &SessionSelector| -> Vec<PathBuf> {
        let loc = &sel.locator;
        if let Some(f) = file {
            let f = session_store::paths::resolve(&address::expand_tilde(f));
            return f.parent().and_then(sqlite_db_beside).into_iter().collect();
        }
        if let Some(d) = &loc.dir {
            return sqlite_db_beside(&session_store::paths::resolve(&address::expand_tilde(d)))
                .into_iter()
                .collect();
        }
        match &loc.agent {
            Some(agent) => agent_db(loc.root.as_deref(), agent).into_iter().collect(),
            None => Vec::new(),
        }
    };
    match command {
        Command::Archive(a) => match &a.agent {
            Some(agent) => agent_db(a.root.as_deref(), agent).into_iter().collect(),
            None => all(a.root.as_deref()),
        },
        Command::Clear(a) => agent_db(a.root.as_deref(), &a.agent).into_iter().collect(),
        Command::Cleanup(a) => {
            if let Some(store) = &a.store {
                let store = session_store::paths::resolve(&address::expand_tilde(store));
                store
                    .parent()
                    .and_then(sqlite_db_beside)
                    .into_iter()
                    .collect()
            } else if let Some(agent) = &a.agent {
                agent_db(a.root.as_deref(), agent).into_iter().collect()
            } else {
                all(a.root.as_deref())
            }
        }
        Command::Repair(a) => selector(a.file.as_deref(), &a.selector),
        Command::Unlock(a) => match &a.sessions_dir {
            Some(d) => sqlite_db_beside(&session_store::paths::resolve(&address::expand_tilde(d)))
                .into_iter()
                .collect(),
            None => selector(None, &a.selector),
        },
        Command::Demo(a) => all(Some(&a.root)),
        Command::Migrate(a) => {
            let to = session_store::paths::resolve(&address::expand_tilde(&a.to));
            sqlite_db_beside(&to).into_iter().collect()
        }
        _ => Vec::new(),
    }
}

/// The state directory a read command addresses through `--root`/`--agent` (or by default),
/// `None` when it names files, `--dir` or `--pi` instead: the directory where OpenClaw 2026.8+
/// databases are looked for.
fn state_dir_read(command: &Command) -> Option<PathBuf> {
    let by_selector = |file: bool, sel: &SessionSelector| {
        let loc = &sel.locator;
        (!file && loc.dir.is_none() && !loc.pi).then(|| address::state_root(loc.root.as_deref()))
    };
    match command {
        Command::List(a) => (a.locator.dir.is_none() && !a.locator.pi)
            .then(|| address::state_root(a.locator.root.as_deref())),
        Command::Tree(a) => by_selector(a.file.is_some(), &a.selector),
        Command::Context(a) => by_selector(a.file.is_some(), &a.selector),
        Command::Show(a) => by_selector(a.args.len() > 1, &a.selector),
        Command::Stats(a) => by_selector(!a.files.is_empty(), &a.selector),
        Command::Search(a) => by_selector(!a.files.is_empty(), &a.selector),
        Command::Usage(a) => by_selector(!a.files.is_empty(), &a.selector),
        Command::Check(a) => by_selector(!a.files.is_empty(), &a.selector),
        Command::Export(a) => by_selector(a.file.is_some(), &a.selector),
        Command::Serve(a) => (a.locator.dir.is_none() && !a.locator.pi)
            .then(|| address::state_root(a.locator.root.as_deref())),
        _ => None,
    }
}

/// The usage error for `--backend sqlite:DIR` with a directory: the option needs a database
/// file (naming the agent databases found under `dir` as a state directory), and `--root DIR`
/// reads a state directory's databases.
fn sqlite_backend_is_a_dir(dir: &std::path::Path) -> UsageError {
    let found = backend::sqlite_dbs_under(dir);
    let example = found.first().map_or_else(
        || dir.join("agents/main/agent").join(backend::AGENT_DB_NAME),
        |(_, db)| db.clone(),
    );
    let mut msg = format!(
        "--backend sqlite: needs the database file, not a directory: {} is a directory (e.g. \
         --backend sqlite:{})",
        text::path(dir),
        text::shell_quote(&example.display().to_string())
    );
    if found.is_empty() {
        msg.push_str("; it holds no agents/<id>/agent/openclaw-agent.sqlite");
    } else {
        let shown: Vec<String> = found.iter().map(|(_, db)| text::path(db)).collect();
        msg.push_str(&format!("; databases found under it: {}", shown.join(", ")));
    }
    msg.push_str(&format!(
        "; --root {} reads a state directory's databases",
        text::shell_quote(&dir.display().to_string())
    ));
    UsageError::new(msg)
}

/// The FILE arguments of a read command (`~` expanded), empty when it names none.
fn file_args(command: &Command) -> Vec<PathBuf> {
    let files: Vec<&std::path::Path> = match command {
        Command::Tree(a) => a.file.iter().map(PathBuf::as_path).collect(),
        Command::Context(a) => a.file.iter().map(PathBuf::as_path).collect(),
        Command::Export(a) => a.file.iter().map(PathBuf::as_path).collect(),
        Command::Show(a) if a.args.len() > 1 => vec![std::path::Path::new(&a.args[0])],
        Command::Stats(a) => a.files.iter().map(PathBuf::as_path).collect(),
        Command::Search(a) => a.files.iter().map(PathBuf::as_path).collect(),
        Command::Usage(a) => a.files.iter().map(PathBuf::as_path).collect(),
        Command::Check(a) => a.files.iter().map(PathBuf::as_path).collect(),
        _ => Vec::new(),
    };
    files.into_iter().map(address::expand_tilde).collect()
}

/// The databases to read FILE arguments from: a FILE that does not exist on disk but is the
/// virtual path of a session of an OpenClaw 2026.8+ agent database (`<state>/agents/<id>/
/// sessions/<sessionId>.jsonl` with `<state>/agents/<id>/agent/openclaw-agent.sqlite` present,
/// the path `list` prints) is read from that database. A FILE that exists is read as the file
/// it is, with one warning per such file whose agent keeps its sessions in a database (the
/// file is a leftover of the legacy store). `None` when no FILE needs a database (then every
/// FILE is a file, and a missing one is reported as missing).
///
/// # Errors
/// A database that cannot be opened.
fn sqlite_of_file_args(files: &[PathBuf]) -> anyhow::Result<Option<Vec<backend::SqliteDb>>> {
    let mut virtual_dbs: Vec<PathBuf> = Vec::new();
    let mut real = false;
    for f in files {
        let abs = session_store::paths::resolve(f);
        let Some(db) = abs.parent().and_then(backend::sqlite_db_beside) else {
            continue;
        };
        if std::fs::symlink_metadata(f).is_ok() {
            real = true;
            eprintln!(
                "warning: {} is a leftover legacy transcript: the sessions of its agent live in \
                 the OpenClaw 2026.8+ database {}; reading the file as given (`sessions \
                 verify-import` compares the two)",
                text::path(f),
                text::path(&db)
            );
        } else if !virtual_dbs.contains(&db) {
            virtual_dbs.push(db);
        }
    }
    if virtual_dbs.is_empty() || real {
        return Ok(None);
    }
    let mut dbs = Vec::with_capacity(virtual_dbs.len());
    for db in virtual_dbs {
        let mut opened = backend::open_sqlite(&db)?;
        // The agent is the directory's (where OpenClaw keeps it), as in discovery.
        if let Some(agent) = db
            .parent()
            .and_then(std::path::Path::parent)
            .and_then(std::path::Path::file_name)
        {
            opened.agent = Some(agent.to_string_lossy().into_owned());
        }
        dbs.push(opened);
    }
    Ok(Some(dbs))
}

/// Refuses `export -o OUT` into the (virtual) sessions directory of a SQLite store.
fn refuse_export_into_sqlite(ctx: &Ctx, command: &Command) -> anyhow::Result<()> {
    let Command::Export(a) = command else {
        return Ok(());
    };
    let Some(out) = a.output.as_deref().filter(|o| o.as_os_str() != "-") else {
        return Ok(());
    };
    let out = session_store::paths::resolve(&address::expand_tilde(out));
    let Some(parent) = out.parent() else {
        return Ok(());
    };
    let db = ctx
        .store()
        .and_then(|s| s.sqlite_db_of_dir(parent))
        .map(|d| d.storage.db_path().to_path_buf())
        .or_else(|| backend::sqlite_db_beside(parent));
    match db {
        Some(db) => Err(sqlite_write_refusal("export -o", &db).into()),
        None => Ok(()),
    }
}

/// The run's context from `--backend` and `--redis-prefix`: connects to a Redis backend or
/// opens the SQLite databases for the subcommands that read one, refuses them elsewhere; finds
/// the OpenClaw 2026.8+ databases of the state directory when no `--backend` is given; refuses
/// a write command whose target is a SQLite store.
fn context(cli: &Cli) -> anyhow::Result<Ctx> {
    let ctx = context_of_backend(cli)?;
    refuse_export_into_sqlite(&ctx, &cli.command)?;
    Ok(ctx)
}

fn context_of_backend(cli: &Cli) -> anyhow::Result<Ctx> {
    let name = cli.command.name();
    let migrate = matches!(cli.command, Command::Migrate(_));
    if matches!(cli.command, Command::Keys(_)) {
        // `keys parse` classifies a key string and reads no store: a backend changes nothing.
        return Ok(Ctx::new(Backend::Files, cli.now));
    }
    if let Command::Migrate(a) = &cli.command
        && let Some(db) = a.to.to_str().and_then(|t| t.strip_prefix("sqlite:"))
    {
        bail!(sqlite_write_refusal(
            "migrate",
            &address::expand_tilde(std::path::Path::new(db))
        ));
    }
    let url = match cli.backend.as_deref() {
        None => {
            if cli.redis_prefix.is_some() && !migrate {
                bail!(UsageError::new(
                    "--redis-prefix needs --backend redis://HOST:PORT/ (or migrate)"
                ));
            }
            if let Some(db) = write_targets_in_sqlite(&cli.command).first() {
                bail!(sqlite_write_refusal(name, db));
            }
            if let Some(root) = state_dir_read(&cli.command)
                && let Some(dbs) = backend::discover_sqlite(&root)?
            {
                return Ok(Ctx::new(
                    Backend::Store(backend::StoreBackend::sqlite(dbs)),
                    cli.now,
                ));
            }
            if let Some(dbs) = sqlite_of_file_args(&file_args(&cli.command))? {
                return Ok(Ctx::new(
                    Backend::Store(backend::StoreBackend::sqlite(dbs)),
                    cli.now,
                ));
            }
            return Ok(Ctx::new(Backend::Files, cli.now));
        }
        Some("files" | "file") => {
            if cli.redis_prefix.is_some() && !migrate {
                bail!(UsageError::new(
                    "--redis-prefix needs --backend redis://HOST:PORT/ (or migrate)"
                ));
            }
            return Ok(Ctx::new(Backend::Files, cli.now));
        }
        Some(url) => url,
    };
    if migrate {
        bail!(UsageError::new(
            "--backend does not apply to migrate: give the two sides with --from and --to (a \
             directory and a redis:// URL)"
        ));
    }
    if let Some(db) = url.strip_prefix("sqlite:") {
        let db = address::expand_tilde(std::path::Path::new(db));
        if db.as_os_str().is_empty() {
            bail!(UsageError::new(
                "--backend sqlite:PATH needs the database's path, e.g. sqlite:~/.openclaw/agents/\
                 main/agent/openclaw-agent.sqlite"
            ));
        }
        if db.is_dir() {
            bail!(sqlite_backend_is_a_dir(&db));
        }
        if !cli.command.reads_a_backend() {
            bail!(sqlite_write_refusal(name, &db));
        }
        let opened =
            backend::open_sqlite(&db).map_err(|e| UsageError::new(output::error_text(&e)))?;
        return Ok(Ctx::new(
            Backend::Store(backend::StoreBackend::sqlite_named(opened)),
            cli.now,
        ));
    }
    let spec = backend::parse_redis(url, cli.redis_prefix.as_deref()).map_err(|e| {
        UsageError::new(format!(
            "--backend: {e}; the backends are `files` (the default), sqlite:PATH and redis://…"
        ))
    })?;
    if matches!(cli.command, Command::Demo(_)) {
        bail!(UsageError::new(
            "`sessions demo` builds its demo store as files under --root; --backend does not \
             apply (to try the demo on Redis, build it, then copy it with `sessions migrate \
             --from DIR --to redis://HOST:PORT/`)"
        ));
    }
    if !cli.command.reads_a_backend() {
        bail!(UsageError::new(format!(
            "`sessions {name}` works on files only; --backend {} applies to list, tree, context, \
             show, stats, search, usage, check and export (`sessions migrate` copies sessions between files and \
             Redis)",
            text::safe(&spec.shown_url())
        )));
    }
    let redis = backend::StoreBackend::connect(spec)?;
    Ok(Ctx::new(Backend::Store(redis), cli.now))
}

/// Refuses every `--agent ID` and `--session NAME` that is not a valid path component
/// ([`address::check_agent_id`], [`address::check_session_name`]) before anything is read or
/// written, in every subcommand (read and write alike). `clear --session` also takes a session
/// key (`agent:<ID>:<rest>`), which is never a path: its file name is the key's encoded name.
fn check_names(command: &Command) -> Result<(), UsageError> {
    let selector = |s: &SessionSelector| -> Result<(), UsageError> {
        if let Some(agent) = &s.locator.agent {
            address::check_agent_id(agent)?;
        }
        if let Some(name) = &s.session {
            address::check_session_name(name)?;
        }
        Ok(())
    };
    match command {
        Command::List(ListArgs { locator, .. })
        | Command::Serve(serve::ServeArgs { locator, .. }) => match &locator.agent {
            Some(agent) => address::check_agent_id(agent),
            None => Ok(()),
        },
        Command::Tree(TreeArgs { selector: s, .. })
        | Command::Context(ContextArgs { selector: s, .. })
        | Command::Show(ShowArgs { selector: s, .. })
        | Command::Stats(StatsArgs { selector: s, .. })
        | Command::Search(search::SearchArgs { selector: s, .. })
        | Command::Usage(UsageArgs { selector: s, .. })
        | Command::Check(CheckArgs { selector: s, .. })
        | Command::Export(ExportArgs { selector: s, .. })
        | Command::Repair(RepairArgs { selector: s, .. }) => selector(s),
        Command::Archive(a) => {
            if let Some(agent) = &a.agent {
                address::check_agent_id(agent)?;
            }
            match &a.session {
                Some(name) if !clear::is_session_key(name) => address::check_session_name(name),
                _ => Ok(()),
            }
        }
        Command::Cleanup(CleanupArgs { agent, .. }) => match agent {
            Some(agent) => address::check_agent_id(agent),
            None => Ok(()),
        },
        Command::Clear(a) => {
            address::check_agent_id(&a.agent)?;
            match &a.session {
                Some(name) if !clear::is_session_key(name) => address::check_session_name(name),
                _ => Ok(()),
            }
        }
        Command::Demo(_)
        | Command::Unlock(_)
        | Command::Keys(_)
        | Command::Migrate(_)
        | Command::VerifyImport(_)
        | Command::Replay(_) => Ok(()),
    }
}

fn run(cli: Cli) -> anyhow::Result<Outcome> {
    check_names(&cli.command)?;
    if let Command::Serve(a) = &cli.command {
        // The server owns its context (shared by its handlers).
        return serve::run(context(&cli)?, a);
    }
    let ctx = &context(&cli)?.with_offline_ok(cli.offline_ok);
    let mut out = output::Output::new();
    let outcome = match cli.command {
        Command::List(a) => {
            let flags = store_list::ListFlags {
                active_minutes: a.active,
                limit: a.limit.map(|l| l.0),
                archived: a.archived,
                width: text::table_width(a.wide),
            };
            list_cmd::run(ctx, &a.locator, a.all, a.json, &flags, &mut out)?;
            Outcome::Ok
        }
        Command::Tree(a) => {
            let path = address::resolve_one(ctx, a.file.as_deref(), &a.selector)?;
            let opts = tree::TreeOptions {
                depth: a.depth,
                width: text::output_width(a.width),
            };
            if a.json {
                tree::run_json(ctx, &path, &opts, &mut out)?;
            } else {
                tree::run_text(ctx, &path, &opts, &mut out)?;
            }
            Outcome::Ok
        }
        Command::Context(a) => {
            let path = address::resolve_one(ctx, a.file.as_deref(), &a.selector)?;
            context::run(
                ctx,
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
                    anyhow::bail!(UsageError::new(if looks_like_file {
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
                _ => anyhow::bail!(UsageError::new("show takes FILE ENTRY_ID")),
            };
            let entry = entry
                .to_str()
                .ok_or_else(|| UsageError::new("ENTRY_ID is not valid UTF-8"))?;
            let path = address::resolve_one(ctx, file.as_deref(), &a.selector)?;
            show::run(ctx, &path, entry, a.raw, &mut out)?;
            Outcome::Ok
        }
        Command::Search(a) => search::run(ctx, &a, &mut out)?,
        Command::Stats(a) => {
            let paths = address::resolve_many(ctx, &a.files, &a.selector)?;
            stats::run(ctx, &paths, a.json, &mut out)?
        }
        Command::Usage(a) => {
            archive::check_window(a.since, a.until, false)?;
            usage::run(
                ctx,
                &usage::UsageRequest {
                    files: &a.files,
                    selector: &a.selector,
                    all: a.all,
                    by: a.by,
                    utc: a.utc,
                    since: a.since,
                    until: a.until,
                    json: a.json,
                },
                &mut out,
            )?
        }
        Command::Check(a) => {
            let paths = address::resolve_many(ctx, &a.files, &a.selector)?;
            let limit = check::Limit(
                a.max_problems
                    .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
            );
            check::run(ctx, &paths, a.json, limit, &mut out)?
        }
        Command::Export(a) => {
            let path = address::resolve_one(ctx, a.file.as_deref(), &a.selector)?;
            export::run(ctx, &path, a.format, a.output.as_deref(), a.force, &mut out)?;
            Outcome::Ok
        }
        Command::Demo(a) => {
            demo::run(ctx, &a.root, text::output_width(a.width), &mut out)?;
            Outcome::Ok
        }
        Command::Repair(a) => {
            // The store root of the write (one rule for every write command); for a session
            // named through a locator, decided before the session is looked up, so a locator
            // that leads out of the store is refused first.
            let (path, root) = if a.file.is_none()
                && a.selector.session.is_some()
                && a.selector.locator.names_dir()
            {
                let root = address::write_root(ctx, None, &a.selector.locator)?;
                (address::resolve_one(ctx, None, &a.selector)?, root)
            } else {
                let path = address::resolve_one(ctx, a.file.as_deref(), &a.selector)?;
                (
                    path.clone(),
                    address::write_root(ctx, Some(&path), &a.selector.locator)?,
                )
            };
            repair::run(
                &repair::RepairRequest {
                    path,
                    root,
                    dry_run: a.dry_run,
                    no_backup: a.no_backup,
                    lock_timeout: a.lock_timeout,
                    json: a.json,
                },
                &mut out,
            )?
        }
        Command::Unlock(a) => {
            debug_assert!(a.stale);
            let target = unlock::target(ctx, a.sessions_dir.as_deref(), &a.selector)?;
            unlock::run(&target, a.stale_after, a.dry_run, a.json, &mut out)?
        }
        Command::Keys(KeysCommand::Parse(a)) => {
            keys::parse(&a.key, a.main_key.as_deref(), a.json, &mut out)?
        }
        Command::Archive(a) => archive::run(
            ctx,
            &archive::ArchiveRequest {
                agent: a.agent,
                all: a.all,
                session: a.session,
                root: a.root,
                config: a.config,
                max_age: a.max_age,
                max_size: a.max_size,
                dry_run: a.dry_run,
                allow_mass: a.allow_mass,
                json: a.json,
            },
            &mut out,
        )?,
        Command::Clear(a) => clear::run(
            ctx,
            &clear::ClearRequest {
                agent: a.agent,
                session: a.session,
                all: a.all,
                root: a.root,
                purge: a.purge,
                yes: a.yes,
                dry_run: a.dry_run,
                allow_mass: a.allow_mass,
                json: a.json,
            },
            &mut out,
        )?,
        Command::Cleanup(a) => cleanup::run(
            ctx,
            &cleanup::CleanupRequest {
                agent: a.agent,
                all_agents: a.all_agents,
                root: a.root,
                store: a.store,
                dry_run: a.dry_run,
                enforce: a.enforce,
                fix_missing: a.fix_missing,
                active_key: a.active_key,
                purge_archives: a.purge_archives,
                json: a.json,
            },
            &mut out,
        )?,
        Command::Migrate(a) => migrate::run(
            &migrate::MigrateRequest {
                from: a.from,
                from_root: a.from_root,
                to: a.to,
                redis_root: a.redis_root,
                redis_prefix: cli.redis_prefix,
                dry_run: a.dry_run,
                json: a.json,
            },
            &mut out,
        )?,
        Command::VerifyImport(a) => verify_import::run(
            &verify_import::VerifyRequest {
                root: address::state_root(a.root.as_deref()),
                json: a.json,
                salvage: a.salvage,
                dry_run: a.dry_run,
            },
            &mut out,
        )?,
        Command::Serve(_) => unreachable!("`sessions serve` returned before the match"),
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
    // On SIGINT, SIGTERM, SIGQUIT and SIGABRT: remove the write locks this process holds and
    // the temporary file of an `-o` export under way, then die of the signal as before. Without
    // the handler (it could not be installed) a killed export leaves its hidden temporary file.
    let _ = session_store::lock::install_signal_cleanup();
    match run(cli) {
        Ok(outcome) => outcome.exit_code(),
        Err(e) => {
            if output::is_broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            eprintln!("error: {}", output::error_text(&e));
            ExitCode::from(2)
        }
    }
}
