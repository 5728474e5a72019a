//! Crash trials (docs/RELIABILITY.md "crash"): a child process (this test binary
//! re-run in child mode `append`) opens a session with `SessionManager::open`, sets
//! `Durability::SyncData`, and appends messages of mixed sizes (40 B to 1 MiB, so a write can
//! span many pages) in a loop, printing `ack <id>` on its stdout pipe once an append has
//! returned with the entry on disk (`is_flushed()`: the reference holds a new session's first
//! user message in memory until the first assistant message, §2.12, so those ids are
//! acknowledged when that write returns). The parent SIGKILLs it at a seeded random moment:
//! 0–20 ms after the spawn, right after the k-th ack, 0–3 ms after the k-th ack (inside the
//! next append's write or sync), or inside the `write` of a large line (the child announces it;
//! the parent polls the file's size and kills as soon as it grows). The first trial of each
//! variant is such an in-write kill of a 16 MiB line, and so is every next trial until a kill
//! has left a torn tail (`forcedInWrite`), so every run meets at least one torn tail
//! (asserted). After each kill:
//!
//! - the file opens (read-only, and writable) — `unreadable` counts failures;
//! - every acknowledged id is an entry of the read-only session — `lost` counts misses;
//! - a torn last line (unterminated and not JSON) is reported as `OpenReport::torn_tail` with
//!   its 1-based `line`, its `line_offset` and `torn: true`, and `malformed_lines` holds exactly
//!   the expected damaged lines — `tornTails` counts them, `tornUnreported` counts mismatches;
//! - the parent's next append (writable open, one assistant message) leaves every byte of the
//!   file as it was and adds `\n` (only after a torn tail) + one line that parses with the
//!   returned id + `\n` — `misplacedAppends` counts violations.
//!
//! Two variants: `crash` (a fresh file per trial) and `crashReopen` (one file: each next child
//! reopens it and keeps appending after the parent's append, across every kill; at the end the
//! file holds every id ever acknowledged, and its malformed lines are exactly the torn pieces
//! the kills left, each reported at its line and offset).
//!
//! Sizes: 20 trials per variant by default, 200 with `RELIABILITY_SCALE=full`.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

mod reliability_common;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use reliability_common::{
    Marked, Rng, assistant, child_command, emit, env, filler, line_id, mark, seed, sized, spans,
    user,
};
use session_format::json::parse_value;
use session_store::{Durability, SessionManager};

/// Appends one child makes at most before it waits to be killed.
const CHILD_MAX_APPENDS: usize = 5_000;

/// The child side. Does nothing when the test binary runs normally.
#[test]
fn child_entry() {
    let Ok(mode) = std::env::var(reliability_common::CHILD_ENV) else {
        return;
    };
    match mode.as_str() {
        "append" => append_child(),
        other => panic!("unknown child mode {other}"),
    }
}

/// Payload of the large line the forced in-write kills tear: the file's size grows in steps of
/// up to 2 MiB (page-cache folios) during a write, and the kill sent at the first step stops a
/// write this size (eight or more steps) long before its end.
const FORCED_TEAR_BYTES: u64 = 16 * 1024 * 1024;

/// Child mode `append`: `$CRASH_FILE`, `$CRASH_SEED`, `$CRASH_MAX_LARGE` (largest payload),
/// `$CRASH_TEAR` (`1`: once the file is written, every append is large and announced with
/// `big <file length>`), `$CRASH_TEAR_SIZE` (the payload size of those, else
/// `$CRASH_MAX_LARGE`/2 to `$CRASH_MAX_LARGE`).
fn append_child() {
    let path = PathBuf::from(env("CRASH_FILE"));
    let seed: u64 = env("CRASH_SEED").parse().unwrap();
    let max_large: u64 = env("CRASH_MAX_LARGE").parse().unwrap();
    let tear = std::env::var("CRASH_TEAR").is_ok_and(|v| v == "1");
    let tear_size: Option<u64> = std::env::var("CRASH_TEAR_SIZE")
        .ok()
        .map(|v| v.parse().unwrap());
    let mut rng = Rng::new(seed);
    let mut sm = SessionManager::open(&path, None, None).unwrap();
    sm.set_durability(Durability::SyncData);
    mark("ready");
    let mut pending: Vec<String> = Vec::new();
    let mut ts = 1_700_000_000_000i64;
    for seq in 0..CHILD_MAX_APPENDS {
        let big = tear && sm.is_flushed();
        let size = match rng.range(0, 99) {
            _ if big => tear_size.unwrap_or_else(|| rng.range(max_large / 2, max_large)),
            0..60 => rng.range(40, 400),
            60..90 => rng.range(1024, 16 * 1024),
            _ => rng.range(64 * 1024, max_large),
        };
        let text = format!(
            "{seed}-{seq} {}",
            filler(usize::try_from(size).unwrap(), rng.next_u64())
        );
        ts += 1;
        // A held session is written by its first assistant message.
        let payload = if !sm.is_flushed() && pending.is_empty() || rng.percent(50) {
            user(&text, ts)
        } else {
            assistant(&text, ts)
        };
        if big {
            // The parent kills as soon as the file starts growing: inside the write.
            let len = std::fs::metadata(&path).unwrap().len();
            mark(&format!("big {len}"));
        }
        let id = sm.append_message(payload).unwrap();
        pending.push(id);
        if sm.is_flushed() {
            let acks: Vec<String> = pending.drain(..).map(|id| format!("ack {id}")).collect();
            mark(&acks.join(&format!("\n{}", reliability_common::MARK)));
        }
    }
    mark("done");
    std::thread::sleep(Duration::from_secs(600));
}

/// Figures of one variant.
#[derive(Debug, Default)]
struct Totals {
    trials: u64,
    acknowledged: u64,
    lost: u64,
    unreadable: u64,
    torn_tails: u64,
    torn_unreported: u64,
    misplaced_appends: u64,
    /// Kills that came before the child's first write (no file, nothing acknowledged).
    no_file_yet: u64,
    /// Kills made after waiting for the child's k-th ack (the others came 0–20 ms after the
    /// spawn).
    killed_after_ack: u64,
    /// Kills sent as soon as the file started growing during a large append.
    killed_in_write: u64,
    /// Of those, the trials forced to be one (the first, and each next one until a kill left
    /// a torn tail).
    forced_in_write: u64,
}

impl Totals {
    fn emit(&self, suite: &str, leftover_temp_files: u64) {
        emit(
            suite,
            &[
                ("trials", self.trials),
                ("acknowledged", self.acknowledged),
                ("lost", self.lost),
                ("unreadable", self.unreadable),
                ("tornTails", self.torn_tails),
                ("tornUnreported", self.torn_unreported),
                ("misplacedAppends", self.misplaced_appends),
                ("noFileYet", self.no_file_yet),
                ("killedAfterAck", self.killed_after_ack),
                ("killedInWrite", self.killed_in_write),
                ("forcedInWrite", self.forced_in_write),
                ("leftoverTempFiles", leftover_temp_files),
            ],
        );
    }

    fn assert_clean(&self, suite: &str) {
        assert_eq!(self.lost, 0, "{suite}: acknowledged entries lost: {self:?}");
        assert_eq!(self.unreadable, 0, "{suite}: unreadable files: {self:?}");
        assert_eq!(self.torn_unreported, 0, "{suite}: torn tails: {self:?}");
        assert_eq!(
            self.misplaced_appends, 0,
            "{suite}: misplaced appends: {self:?}"
        );
        // The forced in-write kills tear a line in every run, and each torn tail the kills
        // left was reported exactly (`tornUnreported` = 0 above).
        assert!(
            self.torn_tails >= 1 && self.forced_in_write >= 1,
            "{suite}: no kill left a torn tail: {self:?}"
        );
    }
}

/// Spawns a child on `path`, kills it at a moment drawn from `rng` (inside the write of a
/// [`FORCED_TEAR_BYTES`] line when `force_tear`), and returns the ids it acknowledged (every
/// `ack` line it got into the pipe before dying).
fn kill_one(
    path: &Path,
    rng: &mut Rng,
    max_large: u64,
    force_tear: bool,
    totals: &mut Totals,
) -> Vec<String> {
    let drawn = rng.range(0, 99);
    let strategy = if force_tear { 99 } else { drawn };
    let tear = strategy >= 80;
    let mut cmd = child_command("child_entry", "append");
    cmd.env("CRASH_FILE", path)
        .env("CRASH_SEED", rng.next_u64().to_string())
        .env("CRASH_MAX_LARGE", max_large.to_string())
        .env("CRASH_TEAR", if tear { "1" } else { "0" });
    if force_tear {
        cmd.env("CRASH_TEAR_SIZE", FORCED_TEAR_BYTES.to_string());
        totals.forced_in_write += 1;
    }
    let mut child = Marked::spawn(cmd);
    let mut acked = Vec::new();
    let take = |line: String, acked: &mut Vec<String>| {
        if let Some(id) = line.strip_prefix("ack ") {
            acked.push(id.to_owned());
        }
        line
    };
    match strategy {
        // Anywhere from before the child ran to its first appends.
        0..30 => std::thread::sleep(Duration::from_micros(rng.range(0, 20_000))),
        // Inside the write of a large line: as soon as the file grows past its length before
        // the append (a write this size fills many pages; a fatal signal stops it between two).
        80.. => loop {
            match child.next(Duration::from_secs(60)) {
                Some(line) => {
                    if let Some(len) = line.strip_prefix("big ") {
                        let len: u64 = len.parse().unwrap();
                        spin_until_longer(path, len);
                        totals.killed_in_write += 1;
                        break;
                    }
                    take(line, &mut acked);
                }
                None => panic!("the child stopped before a large append"),
            }
        },
        _ => {
            let k = usize::try_from(rng.range(1, 12)).unwrap();
            while acked.len() < k {
                match child.next(Duration::from_secs(60)) {
                    Some(line) if line == "done" => break,
                    Some(line) => {
                        take(line, &mut acked);
                    }
                    None => panic!("the child stopped before its {k}th ack"),
                }
            }
            totals.killed_after_ack += 1;
            // Right after the ack (30–54), or 0–3 ms later, inside the next append (55–79).
            if strategy >= 55 {
                std::thread::sleep(Duration::from_micros(rng.range(0, 3_000)));
            }
        }
    }
    child.kill();
    let status = child.child.wait().unwrap();
    assert_eq!(
        status.signal(),
        Some(9),
        "the child ended on its own ({status:?}): it failed"
    );
    for line in child.drain() {
        take(line, &mut acked);
    }
    acked
}

/// Polls the size of `path` until it exceeds `len` (at most 10 s).
fn spin_until_longer(path: &Path, len: u64) {
    let start = std::time::Instant::now();
    while std::fs::metadata(path).map_or(0, |m| m.len()) <= len {
        if start.elapsed() > Duration::from_secs(10) {
            panic!("{} did not grow past {len} bytes", path.display());
        }
        std::hint::spin_loop();
    }
}

/// What a file should look like to the read-only open: its known damaged lines (1-based line,
/// offset of the line's first byte) from earlier kills, and the torn tail now.
struct Expect<'a> {
    acked: &'a [String],
    earlier_damage: &'a [(usize, usize)],
}

/// Checks the file after a kill (see the module docs) and makes the parent's append. Returns
/// the damaged line a torn tail leaves behind (now terminated by the append's separator) and the
/// id the parent appended.
fn check_after_kill(
    path: &Path,
    expect: &Expect<'_>,
    trial: usize,
    totals: &mut Totals,
) -> (Option<(usize, usize)>, Option<String>) {
    totals.trials += 1;
    totals.acknowledged += expect.acked.len() as u64;
    let before = match std::fs::read(path) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => panic!("{e}"),
    };
    let mut torn = None;
    match &before {
        None => {
            totals.no_file_yet += 1;
            if !expect.acked.is_empty() {
                eprintln!(
                    "trial {trial}: no file but {} acknowledged ids",
                    expect.acked.len()
                );
                totals.lost += expect.acked.len() as u64;
            }
        }
        Some(bytes) => match SessionManager::open_read_only(path, None) {
            Err(e) => {
                eprintln!("trial {trial}: read-only open failed: {e}");
                totals.unreadable += 1;
            }
            Ok(ro) => {
                for id in expect.acked {
                    if ro.session.get_entry(id).is_none() {
                        eprintln!("trial {trial}: acknowledged id {id} is missing");
                        totals.lost += 1;
                    }
                }
                let sp = spans(bytes);
                let last = sp.last().copied();
                let expected_torn = last
                    .filter(|l| !l.terminated && parse_value(&bytes[l.start..l.end]).is_err())
                    .map(|l| (sp.len(), l.start));
                let report = &ro.report;
                let got_torn = report
                    .torn_tail
                    .as_ref()
                    .map(|m| (m.line, m.line_offset, m.torn));
                let mut expected_damage: Vec<(usize, usize)> = expect.earlier_damage.to_vec();
                expected_damage.extend(expected_torn);
                let got_damage: Vec<(usize, usize)> = report
                    .malformed_lines
                    .iter()
                    .map(|m| (m.line, m.line_offset))
                    .collect();
                let header_ok = report.corrupt_header.is_none();
                if got_torn != expected_torn.map(|(l, o)| (l, o, true))
                    || got_damage != expected_damage
                    || !header_ok
                {
                    eprintln!(
                        "trial {trial}: expected torn tail {expected_torn:?} and damage {expected_damage:?}, \
                         the report says torn_tail {got_torn:?}, malformed {got_damage:?}, corrupt header {:?}",
                        report.corrupt_header
                    );
                    totals.torn_unreported += 1;
                }
                if expected_torn.is_some() {
                    totals.torn_tails += 1;
                }
                torn = expected_torn;
            }
        },
    }
    // The parent's next append.
    let mut sm = match SessionManager::open(path, None, None) {
        Ok(sm) => sm,
        Err(e) => {
            eprintln!("trial {trial}: writable open failed: {e}");
            totals.unreadable += 1;
            return (torn, None);
        }
    };
    sm.set_durability(Durability::SyncData);
    let id = sm
        .append_message(assistant(&format!("parent after kill {trial}"), 1))
        .unwrap();
    let after = std::fs::read(path).unwrap();
    let placed = match &before {
        Some(before) => {
            let sep: &[u8] = if before.is_empty() || before.ends_with(b"\n") {
                b""
            } else {
                b"\n"
            };
            after.starts_with(before)
                && after[before.len()..].starts_with(sep)
                && new_line_is(&after[before.len() + sep.len()..], &id)
        }
        // A new file: the header, then the entry.
        None => {
            let sp = spans(&after);
            sp.len() == 2
                && line_id(&after[sp[0].start..sp[0].end]).is_some()
                && new_line_is(&after[sp[1].start..], &id)
        }
    };
    if !placed {
        eprintln!(
            "trial {trial}: the parent's append did not land on its own line after the old bytes"
        );
        totals.misplaced_appends += 1;
    }
    (torn, Some(id))
}

/// `rest` is exactly one line (`\n`-terminated) that parses and carries `id`.
fn new_line_is(rest: &[u8], id: &str) -> bool {
    rest.ends_with(b"\n")
        && !rest[..rest.len() - 1].contains(&b'\n')
        && line_id(&rest[..rest.len() - 1]).as_deref() == Some(id)
}

/// Temporary files an atomic rewrite left behind when its process was killed.
fn leftover_temp_files(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            let name = name.to_string_lossy();
            name.starts_with('.') && name.ends_with(".tmp")
        })
        .count() as u64
}

#[test]
fn acknowledged_entries_survive_sigkill_on_fresh_files() {
    let trials = sized(20, 200);
    let mut rng = Rng::new(seed("crash", 0x00C0_FFEE));
    let dir = tempfile::tempdir().unwrap();
    let mut totals = Totals::default();
    for trial in 0..trials {
        let path = dir.path().join(format!("trial-{trial}.jsonl"));
        let force = totals.torn_tails == 0;
        let acked = kill_one(&path, &mut rng, 1024 * 1024, force, &mut totals);
        let expect = Expect {
            acked: &acked,
            earlier_damage: &[],
        };
        check_after_kill(&path, &expect, trial, &mut totals);
    }
    totals.emit("crash", leftover_temp_files(dir.path()));
    totals.assert_clean("crash");
    assert_eq!(totals.trials, trials as u64);
    // The schedule reaches the appends: most trials acknowledged something.
    assert!(
        totals.acknowledged > 0 && totals.killed_after_ack > 0,
        "{totals:?}"
    );
}

#[test]
fn acknowledged_entries_survive_sigkill_across_reopens_of_one_file() {
    let kills = sized(20, 200);
    let mut rng = Rng::new(seed("crashReopen", 0x0BAD_5EED));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reopened.jsonl");
    let mut totals = Totals::default();
    let mut every_id: Vec<String> = Vec::new();
    let mut damage: Vec<(usize, usize)> = Vec::new();
    for trial in 0..kills {
        let force = totals.torn_tails == 0;
        let acked = kill_one(&path, &mut rng, 256 * 1024, force, &mut totals);
        let expect = Expect {
            acked: &acked,
            earlier_damage: &damage,
        };
        let (torn, parent_id) = check_after_kill(&path, &expect, trial, &mut totals);
        // The torn piece stays in place as a damaged line (the append terminated it).
        damage.extend(torn);
        every_id.extend(acked);
        every_id.extend(parent_id);
    }
    // The file as a whole: every id ever acknowledged, once; the damage exactly where the kills
    // left it; every other line an entry.
    let bytes = std::fs::read(&path).unwrap();
    let ro = SessionManager::open_read_only(&path, None).unwrap();
    let missing: Vec<&String> = every_id
        .iter()
        .filter(|id| ro.session.get_entry(*id).is_none())
        .collect();
    assert!(missing.is_empty(), "missing at the end: {missing:?}");
    let got: Vec<(usize, usize, bool)> = ro
        .report
        .malformed_lines
        .iter()
        .map(|m| (m.line, m.line_offset, m.torn))
        .collect();
    let want: Vec<(usize, usize, bool)> = damage.iter().map(|&(l, o)| (l, o, false)).collect();
    assert_eq!(got, want);
    assert_eq!(ro.report.torn_tail, None);
    assert!(ro.report.duplicate_ids.is_empty(), "{:?}", ro.report);
    assert!(ro.report.dangling_parents.is_empty(), "{:?}", ro.report);
    let lines = spans(&bytes).len();
    assert_eq!(ro.session.entry_count(), lines - 1 - damage.len());
    eprintln!(
        "crashReopen: {} kills, {} lines, {} bytes, {} torn pieces kept in place",
        kills,
        lines,
        bytes.len(),
        damage.len()
    );
    totals.emit("crashReopen", leftover_temp_files(dir.path()));
    totals.assert_clean("crashReopen");
    assert_eq!(totals.trials, kills as u64);
}
