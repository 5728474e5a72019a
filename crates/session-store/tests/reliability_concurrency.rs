//! Concurrent writers (docs/RELIABILITY.md "concurrency"): the parent writes a session
//! (header, one user and one assistant message), then N child processes (this test binary
//! re-run in child mode `locked` or `unlocked`) open it and each append M assistant messages of
//! varied lengths (text `w<writer>-<seq> …`, 40 B to 2 KB) with the default durability
//! (`SyncData`), all starting together (a go-file barrier).
//!
//! - `concurrencyLocked`: every child opens with `SessionManager::open_locked` (the session write
//!   lock, polled every millisecond, 300 s timeout), so each append runs under the lock and first
//!   adopts what the others appended. 4 × 100 by default, 8 × 1000 with
//!   `RELIABILITY_SCALE=full`. Asserted: every line is `\n`-terminated and parses (`torn`: an
//!   unterminated or unparseable last line; `interleaved`: an unparseable line elsewhere), the
//!   file holds exactly the 2 seed entries plus N × M appended ones, ids are unique, each
//!   writer's `seq` appears once each and in order, and the read-only open reports nothing.
//!   And what only a working lock with its catch-up gives (the checks above hold for plain
//!   `O_APPEND` appends too): after every append the child reports the number of entries its
//!   manager knows and the snapshot its append published to a write owner
//!   (`WriteOwner::publish_snapshot`, called once per verified append). Under the lock, with
//!   the catch-up adopting the others' lines first, the count equals the entry's 1-based
//!   position among the file's entries (`countMismatches` = 0), every append is verified and
//!   published once at exactly the end of its line (`unverifiedAppends` = 0: without the
//!   catch-up the manager's snapshot is stale whenever another writer came in between; without
//!   the lock another write lands between the check and the write), and each writer's
//!   `diagnostics().adopted_lines` is exactly the number of the other writers' entries before
//!   its last one (`adoptedLines` = `adoptedExpected`, `adoptedMismatches` = 0).
//! - `concurrencyUnlocked`: 2 children without the lock (plain `SessionManager::open`), 2 × 100
//!   by default, 2 × 1000 at full scale. The `O_APPEND` single-`write` appends never mix: every
//!   line parses (`corruptLines` = 0) and every append is there once. An empty line may appear
//!   (`blankLines`, not an error: readers skip it): a writer can read the file's size and last
//!   byte while the other's write is half done and then write a needless `\n` separator first
//!   (under the lock this cannot happen, and `blankLines` is asserted 0 there). Each writer
//!   fast-forwards over the other's lines its check before the append finds (D30), so the
//!   entries form one chain except where the other writer appended between that check and the
//!   write: the two lines are then siblings (`siblingBranches` counts, over all parents, the
//!   children beyond the first), and the writer that later finds the other's branch is refused
//!   with `AppendError::Diverged`, joins the other's tip with `branch` and retries
//!   (`divergedAppends`, at most one per fork). What our report says about the forks: the
//!   read-only `OpenReport` is clean (`reportClean` = 1: no malformed line, no dangling
//!   parent, no duplicate id — siblings are a legal tree, not damage), the tree has
//!   `treeLeaves` leaves, and each writer's own `diagnostics().adopted_lines` counts the other
//!   writer's lines it indexed (`adoptedLines`, summed). Under the lock there is no fork at all
//!   (`siblingBranches` = 0, `divergedAppends` = 0).
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

mod reliability_common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reliability_common::{
    Marked, Rng, assistant, child_command, emit, env, filler, line_parent, mark, sibling_branches,
    sized, spans, user,
};
use session_format::json::{JsValue, parse_value};
use session_store::lock::Backoff;
use session_store::{
    AppendError, LockOptions, OpenParams, SessionFileSnapshot, SessionManager, WriteOwner,
};

/// The child side. Does nothing when the test binary runs normally.
#[test]
fn child_entry() {
    let Ok(mode) = std::env::var(reliability_common::CHILD_ENV) else {
        return;
    };
    match mode.as_str() {
        "locked" => writer_child(true),
        "unlocked" => writer_child(false),
        other => panic!("unknown child mode {other}"),
    }
}

/// A write owner recording the size of every snapshot a manager publishes (one per verified
/// write).
#[derive(Debug)]
struct Published {
    file: PathBuf,
    sizes: Mutex<Vec<u64>>,
}

impl WriteOwner for Published {
    fn session_file(&self) -> Option<PathBuf> {
        Some(self.file.clone())
    }

    fn publish_snapshot(&self, snapshot: &SessionFileSnapshot) -> bool {
        self.sizes.lock().unwrap().push(snapshot.size);
        true
    }
}

/// `$CONC_FILE`, `$CONC_WRITER`, `$CONC_APPENDS`, `$CONC_GO` (the barrier file). After each
/// append the child prints `app <seq> <entries its manager knows> <sizes published>` (the
/// sizes comma-separated, `-` for none), at the end `done <adopted lines>`.
fn writer_child(locked: bool) {
    let path = PathBuf::from(env("CONC_FILE"));
    let writer: u64 = env("CONC_WRITER").parse().unwrap();
    let appends: u64 = env("CONC_APPENDS").parse().unwrap();
    let go = PathBuf::from(env("CONC_GO"));
    let mut sm = if locked {
        let opts = LockOptions {
            backoff: Backoff::Fixed(Duration::from_millis(1)),
            ..LockOptions::default().with_timeout(Some(Duration::from_secs(300)))
        };
        SessionManager::open_locked(&path, &OpenParams::default(), opts).unwrap()
    } else {
        SessionManager::open(&path, None, None).unwrap()
    };
    let owner = Arc::new(Published {
        file: path,
        sizes: Mutex::new(Vec::new()),
    });
    sm.set_write_owner(Some(Arc::clone(&owner) as Arc<dyn WriteOwner>));
    mark("ready");
    while !go.exists() {
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut rng = Rng::new(writer);
    let mut diverged = 0u64;
    for seq in 0..appends {
        let pad = filler(usize::try_from(rng.range(40, 2048)).unwrap(), seq);
        let text = format!("w{writer}-{seq} {pad}");
        let published_before = owner.sizes.lock().unwrap().len();
        loop {
            let message = assistant(&text, 1_700_000_000_000 + i64::try_from(seq).unwrap());
            match sm.append_message(message) {
                Ok(_) => break,
                // Without the lock the other writer can append between this writer's check
                // and its write: the two lines are then siblings, and the writer that finds
                // the other's branch is refused (D30). It joins the other's tip, as a caller
                // would choose to.
                Err(AppendError::Diverged { tips, .. }) if !locked => {
                    diverged += 1;
                    sm.branch(tips.last().unwrap()).unwrap();
                }
                Err(e) => panic!("w{writer}-{seq}: {e}"),
            }
        }
        let sizes: Vec<String> = owner.sizes.lock().unwrap()[published_before..]
            .iter()
            .map(u64::to_string)
            .collect();
        let sizes = if sizes.is_empty() {
            "-".to_owned()
        } else {
            sizes.join(",")
        };
        mark(&format!("app {seq} {} {sizes}", sm.entry_count()));
    }
    mark(&format!(
        "done {} {diverged}",
        sm.diagnostics().adopted_lines
    ));
}

/// What the file holds after the writers.
#[derive(Debug, Default)]
struct Outcome {
    entries: u64,
    torn: u64,
    interleaved: u64,
    duplicate_ids: u64,
    missing: u64,
    out_of_order: u64,
    /// Empty lines: an unlocked writer decides whether to write a `\n` separator first (after a
    /// torn tail) from the file's size and last byte, which can be read while another process's
    /// `O_APPEND` write is half done (the size grows page by page); it then writes a needless
    /// `\n` and the file gets an empty line between two complete ones.
    blank_lines: u64,
    sibling_branches: u64,
    tree_leaves: u64,
    report_clean: bool,
    adopted_lines: u64,
    /// Appends after which the writer's manager knew another number of entries than the
    /// entry's 1-based position among the file's entries.
    count_mismatches: u64,
    /// Appends not published exactly once at the end of their own line.
    unverified_appends: u64,
    /// The other writers' entries before each writer's last entry, summed.
    adopted_expected: u64,
    /// Writers whose `adopted_lines` is not that number.
    adopted_mismatches: u64,
    /// Appends refused with `AppendError::Diverged` (and retried on the other writer's tip).
    diverged_appends: u64,
}

/// What a child reported after one append: the entries its manager knew and the sizes of the
/// snapshots it published.
#[derive(Debug, Clone, PartialEq, Eq)]
struct AfterAppend {
    entries: u64,
    published: Vec<u64>,
}

/// Where an appended entry is in the file: its 1-based position among the entries and the
/// offset just past its line's `\n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Placed {
    writer: usize,
    seq: u64,
    position: u64,
    end: u64,
}

fn parse_after_append(line: &str) -> (u64, AfterAppend) {
    let mut it = line
        .strip_prefix("app ")
        .unwrap_or_else(|| panic!("{line}"))
        .split(' ');
    let seq = it.next().unwrap().parse().unwrap();
    let entries = it.next().unwrap().parse().unwrap();
    let published = match it.next().unwrap() {
        "-" => Vec::new(),
        list => list.split(',').map(|n| n.parse().unwrap()).collect(),
    };
    (seq, AfterAppend { entries, published })
}

/// Writes the seed session and runs `writers` children in `mode`, `appends` each.
fn run(mode: &str, writers: u64, appends: u64) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shared.jsonl");
    let go = dir.path().join("go");
    let mut sm = SessionManager::open(&path, None, None).unwrap();
    let seed_user = sm.append_message(user("seed", 1)).unwrap();
    let seed_assistant = sm.append_message(assistant("seed", 2)).unwrap();
    drop(sm);
    let children: Vec<Marked> = (0..writers)
        .map(|w| {
            let mut cmd = child_command("child_entry", mode);
            cmd.env("CONC_FILE", &path)
                .env("CONC_WRITER", w.to_string())
                .env("CONC_APPENDS", appends.to_string())
                .env("CONC_GO", &go);
            Marked::spawn(cmd)
        })
        .collect();
    for c in &children {
        assert_eq!(c.next(Duration::from_secs(60)).as_deref(), Some("ready"));
    }
    session_store::io::append_raw(&go, b"go").unwrap();
    let mut adopted = Vec::new();
    let mut diverged = 0u64;
    let mut reports: Vec<Vec<AfterAppend>> = Vec::new();
    for mut c in children {
        let mut mine = Vec::new();
        let done = loop {
            let line = c
                .next(Duration::from_secs(900))
                .expect("the writer finished");
            if line.starts_with("done ") {
                break line;
            }
            let (seq, report) = parse_after_append(&line);
            assert_eq!(seq, mine.len() as u64, "{line}");
            mine.push(report);
        };
        assert_eq!(mine.len() as u64, appends);
        reports.push(mine);
        let (lines, refused) = done
            .strip_prefix("done ")
            .and_then(|d| d.split_once(' '))
            .unwrap_or_else(|| panic!("{done}"));
        adopted.push(lines.parse::<u64>().unwrap());
        diverged += refused.parse::<u64>().unwrap();
        assert!(c.child.wait().unwrap().success());
    }
    let (mut out, placed) = check(&path, writers, appends, &[seed_user, seed_assistant]);
    out.adopted_lines = adopted.iter().sum();
    out.diverged_appends = diverged;
    for p in &placed {
        let want = AfterAppend {
            entries: p.position,
            published: vec![p.end],
        };
        let got = &reports[p.writer][usize::try_from(p.seq).unwrap()];
        if got.entries != want.entries {
            out.count_mismatches += 1;
        }
        if got.published != want.published {
            out.unverified_appends += 1;
        }
        if mode == "locked" && got != &want && out.count_mismatches + out.unverified_appends <= 5 {
            eprintln!(
                "{mode}: w{}-{}: the writer reported {got:?} after its append, the file says {want:?}",
                p.writer, p.seq
            );
        }
    }
    for (w, got) in adopted.iter().enumerate() {
        let want = adopted_before_last(&placed, w);
        out.adopted_expected += want;
        if *got != want {
            if mode == "locked" {
                eprintln!("{mode}: writer {w} adopted {got} lines, the file says {want}");
            }
            out.adopted_mismatches += 1;
        }
    }
    out
}

/// The other writers' entries before `writer`'s last entry: what its manager adopted when every
/// append first caught up with the file (the children open the file before any of them
/// appends, so nothing foreign is read by the open itself).
fn adopted_before_last(placed: &[Placed], writer: usize) -> u64 {
    let Some(last) = placed.iter().rposition(|p| p.writer == writer) else {
        return 0;
    };
    placed[..last].iter().filter(|p| p.writer != writer).count() as u64
}

fn num(v: &JsValue, key: &str) -> Option<String> {
    v.as_object()?.get_str(key).map(|s| s.into_owned())
}

/// The `w<writer>-<seq>` tag of an appended assistant message.
fn tag(v: &JsValue) -> Option<(usize, u64)> {
    let message = v.as_object()?.get("message")?;
    let content = message.as_object()?.get("content")?;
    let JsValue::Array(items) = content else {
        return None;
    };
    let text = items.first()?.as_object()?.get_str("text")?.into_owned();
    let tag = text.split(' ').next()?.strip_prefix('w')?;
    let (w, s) = tag.split_once('-')?;
    Some((w.parse().ok()?, s.parse().ok()?))
}

/// Checks the file; returns the outcome and every appended entry's place, in file order.
fn check(path: &Path, writers: u64, appends: u64, seed_ids: &[String]) -> (Outcome, Vec<Placed>) {
    let bytes = std::fs::read(path).unwrap();
    let sp = spans(&bytes);
    let mut out = Outcome::default();
    let mut placed = Vec::new();
    let mut position = 0u64;
    let mut ids = HashSet::new();
    let mut edges: Vec<(String, Option<String>)> = Vec::new();
    let w = usize::try_from(writers).unwrap();
    let mut next_seq = vec![0u64; w];
    let mut seen = vec![vec![0u32; usize::try_from(appends).unwrap()]; w];
    for (i, s) in sp.iter().enumerate() {
        let line = &bytes[s.start..s.end];
        if s.terminated && line.is_empty() {
            // An empty line: no entry, no damage (readers skip it); see `blank_lines`.
            out.blank_lines += 1;
            continue;
        }
        let Ok(v) = parse_value(line)
            .map_err(|_| ())
            .and_then(|v| if s.terminated { Ok(v) } else { Err(()) })
        else {
            if i + 1 == sp.len() {
                out.torn += 1;
            } else {
                out.interleaved += 1;
            }
            eprintln!(
                "line {}: not a complete JSON line: {:?}",
                i + 1,
                String::from_utf8_lossy(&line[..line.len().min(200)])
            );
            continue;
        };
        if i == 0 {
            continue; // the header
        }
        let id = num(&v, "id").unwrap();
        if !ids.insert(id.clone()) {
            out.duplicate_ids += 1;
        }
        edges.push((id.clone(), line_parent(line)));
        position += 1;
        if seed_ids.contains(&id) {
            continue;
        }
        out.entries += 1;
        match tag(&v) {
            Some((writer, seq)) if writer < w && seq < appends => {
                seen[writer][usize::try_from(seq).unwrap()] += 1;
                placed.push(Placed {
                    writer,
                    seq,
                    position,
                    end: s.end as u64 + 1,
                });
                if seq != next_seq[writer] {
                    out.out_of_order += 1;
                }
                next_seq[writer] = seq + 1;
            }
            _ => {
                eprintln!("line {}: not an appended message", i + 1);
                out.interleaved += 1;
            }
        }
    }
    out.missing = seen.iter().flatten().filter(|n| **n == 0).count() as u64;
    out.sibling_branches = sibling_branches(&edges) as u64;
    let parents: HashSet<&str> = edges.iter().filter_map(|(_, p)| p.as_deref()).collect();
    out.tree_leaves = edges
        .iter()
        .filter(|(id, _)| !parents.contains(id.as_str()))
        .count() as u64;
    let ro = SessionManager::open_read_only(path, None).unwrap();
    out.report_clean = ro.report.is_clean();
    if !out.report_clean {
        eprintln!("the read-only open reports: {:?}", ro.report);
    }
    assert_eq!(ro.session.entry_count(), edges.len());
    (out, placed)
}

#[test]
fn writers_under_the_lock_never_interleave() {
    let writers = sized(4, 8) as u64;
    let appends = sized(100, 1000) as u64;
    let out = run("locked", writers, appends);
    emit(
        "concurrencyLocked",
        &[
            ("processes", writers),
            ("appends", writers * appends),
            ("entries", out.entries),
            ("interleaved", out.interleaved),
            ("torn", out.torn),
            ("duplicateIds", out.duplicate_ids),
            ("missing", out.missing),
            ("outOfOrder", out.out_of_order),
            ("blankLines", out.blank_lines),
            ("siblingBranches", out.sibling_branches),
            ("adoptedLines", out.adopted_lines),
            ("adoptedExpected", out.adopted_expected),
            ("adoptedMismatches", out.adopted_mismatches),
            ("countMismatches", out.count_mismatches),
            ("unverifiedAppends", out.unverified_appends),
            ("divergedAppends", out.diverged_appends),
            ("reportClean", u64::from(out.report_clean)),
        ],
    );
    assert_eq!(out.entries, writers * appends, "{out:?}");
    assert_eq!(out.interleaved, 0, "{out:?}");
    // Only the lock with its catch-up makes these exact.
    assert_eq!(out.count_mismatches, 0, "{out:?}");
    assert_eq!(out.unverified_appends, 0, "{out:?}");
    assert_eq!(out.adopted_mismatches, 0, "{out:?}");
    assert_eq!(out.adopted_lines, out.adopted_expected, "{out:?}");
    // Under the lock nobody writes while another decides.
    assert_eq!(out.blank_lines, 0, "{out:?}");
    assert_eq!(out.torn, 0, "{out:?}");
    assert_eq!(out.duplicate_ids, 0, "{out:?}");
    assert_eq!(out.missing, 0, "{out:?}");
    assert_eq!(out.out_of_order, 0, "{out:?}");
    assert!(out.report_clean, "{out:?}");
    // Each writer fast-forwards over the others' lines inside the lock: one chain (D30).
    assert_eq!(out.sibling_branches, 0, "{out:?}");
    assert_eq!(out.diverged_appends, 0, "{out:?}");
}

#[test]
fn writers_without_the_lock_fork_but_never_corrupt_a_line() {
    let writers = 2;
    let appends = sized(100, 1000) as u64;
    let out = run("unlocked", writers, appends);
    emit(
        "concurrencyUnlocked",
        &[
            ("processes", writers),
            ("appends", writers * appends),
            ("entries", out.entries),
            ("corruptLines", out.interleaved + out.torn),
            ("duplicateIds", out.duplicate_ids),
            ("missing", out.missing),
            ("blankLines", out.blank_lines),
            ("siblingBranches", out.sibling_branches),
            ("treeLeaves", out.tree_leaves),
            ("adoptedLines", out.adopted_lines),
            ("divergedAppends", out.diverged_appends),
            ("reportClean", u64::from(out.report_clean)),
        ],
    );
    assert_eq!(out.entries, writers * appends, "{out:?}");
    assert_eq!(out.interleaved + out.torn, 0, "{out:?}");
    assert_eq!(out.duplicate_ids, 0, "{out:?}");
    assert_eq!(out.missing, 0, "{out:?}");
    assert_eq!(out.out_of_order, 0, "{out:?}");
    // Siblings are a legal tree: nothing to report as damage.
    assert!(out.report_clean, "{out:?}");
    // Every fork adds a leaf.
    assert_eq!(out.tree_leaves, out.sibling_branches + 1, "{out:?}");
    // A fork happens only when the other writer appended between a writer's check and its
    // write; the writer that later finds the other's branch is refused once for it.
    assert!(out.diverged_appends <= out.sibling_branches, "{out:?}");
}
