//! One measured operation of `cargo xtask bench-compare`, through session-store, in a fresh
//! process (the counterpart of `xtask/bench/ref.mjs`; same workloads, same output).
//!
//! ```text
//! bench-runner WORKLOAD PATH [--warm N]
//! ```
//!
//! Workloads:
//! - `noop`: nothing (process baseline);
//! - `open`: `SessionManager::open(PATH)`; count = entries;
//! - `context`: open PATH (untimed), then `build_session_context()`; count = messages;
//! - `branch`: open PATH (untimed), then `get_branch(None)`; count = entries on the path;
//! - `tail`: the warm cache's byte cap raised above PATH's size (the knob
//!   `session_store::WarmCache::set_limits`), open PATH (untimed, fills the cache), append a ~1 KB user
//!   message line as another writer would, then open PATH again (a tail reindex); count = entries;
//! - `tree`: open PATH (untimed), then `get_tree()`; count = nodes;
//! - `list`: `SessionManager::list` over the directory PATH; count = sessions;
//! - `read`: only the open's read of PATH into fresh memory (the file store's `Storage::read_all`:
//!   two halves on two threads for a large file); count = bytes. The floor of `open` without a
//!   memory map;
//! - `copy`: PATH read through one reused 1 MiB buffer (the kernel's copy from the page cache
//!   without the page faults of fresh memory); count = bytes. The floor of any `read(2)`-based
//!   open that keeps the bytes.
//!
//! `--warm N` repeats the call N more times in the same process after the first. Prints one JSON
//! line: `{"first_ms": F, "warm_ms": [..], "count": N}`, times measured around the call only.
//! The process exits without dropping what it built (as the node runner does).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use session_store::CacheLimits;
use session_store::SessionManager;

/// The warm cache of the process-wide file store (the one the default managers use).
fn warm_cache() -> &'static session_store::WarmCache {
    session_store::FileStorage::process_wide().warm_cache()
}

fn open(path: &Path) -> Result<SessionManager> {
    SessionManager::open(path, None, None).with_context(|| format!("opening {}", path.display()))
}

/// A ~1 KB user message parented on the leaf, with a fresh 8-hex id.
fn foreign_line(sm: &SessionManager, k: u32) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let id = format!(
        "e{:07x}",
        (nanos ^ std::process::id().rotate_left(12) ^ k) & 0x0fff_ffff
    );
    let parent = sm
        .get_leaf_id()
        .map_or_else(|| "null".to_owned(), |p| format!("\"{p}\""));
    let text = "x".repeat(880);
    format!(
        "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"2026-06-01T00:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\",\"timestamp\":1780272000000}}}}\n"
    )
}

fn timed<T>(f: impl FnOnce() -> Result<T>) -> Result<(f64, T)> {
    let t = Instant::now();
    let out = f()?;
    Ok((t.elapsed().as_secs_f64() * 1e3, out))
}

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let workload = args
        .next()
        .context("usage: bench-runner WORKLOAD PATH [--warm N]")?;
    let mut path: Option<PathBuf> = None;
    let mut warm = 0u32;
    while let Some(a) = args.next() {
        if a == "--warm" {
            warm = args.next().context("--warm needs a value")?.parse()?;
        } else if path.is_none() {
            path = Some(PathBuf::from(a));
        } else {
            bail!("unexpected argument {a:?}");
        }
    }
    let path = match (workload.as_str(), path) {
        ("noop", p) => p.unwrap_or_default(),
        (_, Some(p)) => session_store::paths::resolve(&p),
        (_, None) => bail!("{workload} needs a PATH"),
    };
    let mut times = Vec::new();
    let mut count = 0usize;
    // Results are leaked on purpose: the process ends right after (as node's exit does).
    match workload.as_str() {
        "noop" => times.push(0.0),
        "open" => {
            let (ms, sm) = timed(|| open(&path))?;
            times.push(ms);
            count = sm.entry_count();
            std::mem::forget(sm);
        }
        "context" | "branch" | "tree" => {
            let sm = open(&path)?;
            for _ in 0..=warm {
                let (ms, n) = timed(|| {
                    Ok(match workload.as_str() {
                        "context" => {
                            let ctx = sm.build_session_context()?;
                            let n = ctx.messages.len();
                            std::mem::forget(ctx);
                            n
                        }
                        "branch" => {
                            let b = sm.get_branch(None);
                            let n = b.len();
                            std::mem::forget(b);
                            n
                        }
                        _ => {
                            let t = sm.get_tree();
                            let n = t.nodes.len();
                            std::mem::forget(t);
                            n
                        }
                    })
                })?;
                times.push(ms);
                count = n;
            }
            std::mem::forget(sm);
        }
        "tail" => {
            let size = std::fs::metadata(&path)?.len();
            let defaults = CacheLimits::default();
            warm_cache().set_limits(CacheLimits {
                max_files: defaults.max_files,
                max_bytes: size.saturating_mul(4).max(defaults.max_bytes),
            });
            let mut sm = open(&path)?;
            for k in 0..=warm {
                session_store::io::append_raw(&path, foreign_line(&sm, k).as_bytes())?;
                drop(sm);
                let (ms, next) = timed(|| open(&path))?;
                if next.parsed_lines() != 1 {
                    bail!(
                        "the reopen after a 1-line append parsed {} lines (no tail reindex)",
                        next.parsed_lines()
                    );
                }
                times.push(ms);
                count = next.entry_count();
                sm = next;
            }
            std::mem::forget(sm);
        }
        "list" => {
            let (ms, list) = timed(|| Ok(SessionManager::list("/home/dev/project", Some(&path))?))?;
            times.push(ms);
            count = list.len();
            std::mem::forget(list);
        }
        "read" => {
            use session_store::Storage;
            let storage = session_store::FileStorage::process_wide();
            let (ms, bytes) = timed(|| Ok(storage.read_all(&path)?))?;
            times.push(ms);
            count = bytes.len();
            std::mem::forget(bytes);
        }
        "copy" => {
            use std::io::Read;
            let (ms, n) = timed(|| {
                let mut f = std::fs::File::open(&path)?;
                let mut buf = vec![0u8; 1 << 20];
                let mut n = 0usize;
                loop {
                    match f.read(&mut buf)? {
                        0 => break Ok(n),
                        k => n += k,
                    }
                }
            })?;
            times.push(ms);
            count = n;
        }
        other => bail!("unknown workload {other:?}"),
    }
    let first = times.first().copied().unwrap_or(0.0);
    println!(
        "{}",
        serde_json::json!({ "first_ms": first, "warm_ms": &times[1..], "count": count })
    );
    Ok(())
}
