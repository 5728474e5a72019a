//! `cargo xtask profile-open FILE`: where the time and memory of `SessionManager::open` go,
//! measured from outside session-store with its public pieces (docs/BENCHMARKS.md).
//!
//! Each phase runs `--runs` times in this process (page cache warm) and the best time is kept:
//! the file read into a fresh buffer (what `open` does) and into a reused one (the copy floor),
//! line splitting alone (memchr), UTF-8 validation of the whole buffer, the `LineReader` pass
//! (framing, per-line checks and the envelope scan of every line: what `open` parses), the
//! per-line `"appendMode"` substring search `open` does while classifying rows, and the whole
//! `open` with an empty warm cache. What remains of `open` after the read, the `LineReader`
//! pass and the substring search is row building, classification and the navigation index.
//! Memory: resident size (`VmRSS`) and its high-water mark (`VmHWM`) around the first `open`.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use session_format::line::{LineContent, LineReader};
use session_store::SessionManager;

/// Arguments of `cargo xtask profile-open`.
#[derive(Debug, clap::Args)]
pub struct ProfileArgs {
    /// The transcript.
    pub file: PathBuf,
    /// Repetitions per phase (the best is reported).
    #[arg(long, default_value_t = 5)]
    pub runs: u32,
}

/// `VmRSS` and `VmHWM` of this process, in KiB (Linux; 0 elsewhere).
fn rss_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn best<T>(runs: u32, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        let v = f();
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
        out = Some(v);
    }
    // `runs.max(1)` iterations ran, so `out` is set.
    (best, out.unwrap_or_else(|| unreachable!()))
}

fn open(path: &Path) -> Result<SessionManager> {
    session_store::FileStorage::process_wide()
        .warm_cache()
        .clear();
    SessionManager::open(path, None, None).with_context(|| format!("opening {}", path.display()))
}

/// `cargo xtask profile-open`.
///
/// # Errors
/// The file cannot be read or opened.
pub fn run(args: &ProfileArgs) -> Result<()> {
    let path = session_store::paths::resolve(&args.file);
    let size = std::fs::metadata(&path)?.len();
    // Memory first, while this process is fresh.
    let (rss0, _) = rss_kib();
    let sm = open(&path)?;
    let (rss1, hwm1) = rss_kib();
    let entries = sm.entry_count();
    drop(sm);
    session_store::FileStorage::process_wide()
        .warm_cache()
        .clear();

    let (t_read, buf) = best(args.runs, || session_store::io::read_file(&path));
    let buf = buf?;
    let mut reused: Vec<u8> = Vec::with_capacity(buf.len() + 1);
    let (t_read_reused, ()) = best(args.runs, || {
        reused.clear();
        if let Ok(mut f) = session_store::io::open_regular(&path) {
            let _ = f.read_to_end(&mut reused);
        }
    });
    let (t_split, lines) = best(args.runs, || memchr::memchr_iter(b'\n', &buf).count());
    let (t_utf8, valid) = best(args.runs, || std::str::from_utf8(&buf).is_ok());
    let (t_reader, (rows, bad)) = best(args.runs, || {
        let (mut rows, mut bad) = (0usize, 0usize);
        for line in LineReader::new(&buf) {
            match line.content {
                LineContent::Json(_) => rows += 1,
                LineContent::Malformed(_) => bad += 1,
                LineContent::Blank => {}
            }
        }
        (rows, bad)
    });
    let finder = memchr::memmem::Finder::new(b"\"appendMode\"");
    let (t_memmem, hits) = best(args.runs, || {
        let mut start = 0;
        let mut hits = 0;
        for end in memchr::memchr_iter(b'\n', &buf).chain(std::iter::once(buf.len())) {
            hits += usize::from(finder.find(&buf[start..end]).is_some());
            start = end + 1;
        }
        hits
    });
    let (t_open, sm) = best(args.runs, || open(&path));
    drop(sm?);

    let mb = size as f64 / 1e6;
    let rest = t_open - t_read - t_reader - t_memmem;
    println!(
        "{}: {size} bytes, {lines} lines, {rows} JSON rows, {bad} malformed, {entries} entries, \
         valid UTF-8: {valid}, {hits} lines with \"appendMode\"; best of {} run(s) each\n",
        path.display(),
        args.runs
    );
    println!("| phase | time | MB/s | share of open |\n|---|---|---|---|");
    let row = |what: &str, ms: f64, share: bool| {
        let pct = if share {
            format!("{:.0} %", 100.0 * ms / t_open)
        } else {
            "(floor)".to_owned()
        };
        println!("| {what} | {ms:.1} ms | {:.0} | {pct} |", mb / ms * 1e3);
    };
    row(
        "`SessionManager::open` (empty warm cache), in-process",
        t_open,
        true,
    );
    row(
        "read into a fresh buffer (`io::read_file`, as open does)",
        t_read,
        true,
    );
    row("read into a reused buffer", t_read_reused, false);
    row("split lines only (memchr)", t_split, false);
    row("UTF-8 validation of the whole buffer", t_utf8, false);
    row(
        "`LineReader`: framing + line checks + envelope scan of every line",
        t_reader,
        true,
    );
    row(
        "`\"appendMode\"` substring search in every line (classification)",
        t_memmem,
        true,
    );
    row(
        "remainder: row vectors, classification, navigation index",
        rest,
        true,
    );
    println!(
        "\n| memory | KiB |\n|---|---|\n| resident before open | {rss0} |\n| resident after open \
         (retained) | {rss1} |\n| high-water mark during open | {hwm1} |\n| retained − file size \
         | {} ({:.0} bytes per entry) |\n| peak − file size | {} |",
        rss1.saturating_sub(rss0).saturating_sub(size / 1024),
        (rss1.saturating_sub(rss0) as f64 * 1024.0 - size as f64) / entries.max(1) as f64,
        hwm1.saturating_sub(rss0).saturating_sub(size / 1024),
    );
    Ok(())
}
