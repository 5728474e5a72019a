//! Truncation at every byte offset (docs/RELIABILITY.md "truncation"): a small
//! session written by `SessionManager` (header + 8 entries: two user/assistant turns, a branch
//! back to the first assistant with its own turn, a label and a session name; text with
//! two- and three-byte UTF-8 characters; about 3 KB) is cut at every offset `0..=len`. For each
//! cut:
//!
//! - the read-only open succeeds (`opened`) with the longest valid prefix: its entries are, in
//!   order, exactly the entries of the lines whose JSON lies entirely before the cut (a cut
//!   that only removes a line's `\n` keeps that line) (`longestPrefixOk`);
//! - a cut inside a line's JSON is reported: `OpenReport::torn_tail` and the only
//!   `malformed_lines` item carry that line's 1-based number, the byte offset of its first
//!   byte and `torn: true` (`damageReported`, out of `midLineCuts`); a cut inside the header
//!   is a corrupt header too; any other cut reports no damage (`falseDamage` counts the
//!   exceptions);
//! - a writable open followed by one append never deletes a complete line (`linesDeleted`
//!   counts complete lines whose bytes are not where they were): the file is the cut bytes,
//!   a `\n` when they do not end in one, and the new line. A cut inside the header makes the
//!   writable open back the file up byte for byte (`corrupt_header_backup`) and start over
//!   with a new header (no complete line existed); the empty file gets a fresh header. The
//!   new line parses and carries the returned id (`misplacedAppends` counts violations), and
//!   a read-only reopen finds the old entries plus the new one, the damaged line still reported
//!   at the same line and offset (now terminated, so not torn).
//!
//! Every offset runs at both scales (the file is small).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

mod reliability_common;

use std::path::Path;

use reliability_common::{Span, assistant, emit, filler, line_id, spans, user};
use session_store::{Durability, SessionManager};

/// Writes the sample session to `path` and returns its bytes.
fn sample(path: &Path) -> Vec<u8> {
    let mut sm = SessionManager::open(path, None, None).unwrap();
    let text = |k: u64| filler(260, k);
    let u1 = sm.append_message(user(&text(1), 1)).unwrap();
    let a1 = sm.append_message(assistant(&text(2), 2)).unwrap();
    let _u2 = sm.append_message(user(&text(3), 3)).unwrap();
    let _a2 = sm.append_message(assistant(&text(4), 4)).unwrap();
    sm.branch(&a1).unwrap();
    let _u3 = sm.append_message(user(&text(5), 5)).unwrap();
    let _a3 = sm.append_message(assistant(&text(6), 6)).unwrap();
    sm.append_label_change(&u1, Some("first question")).unwrap();
    sm.append_session_info("truncation sample").unwrap();
    drop(sm);
    let bytes = std::fs::read(path).unwrap();
    // The shape the test relies on: a header and 8 entries, every line terminated.
    let sp = spans(&bytes);
    assert_eq!(sp.len(), 9, "{}", String::from_utf8_lossy(&bytes));
    assert!(sp.iter().all(|s| s.terminated));
    let ro = SessionManager::open_read_only(path, None).unwrap();
    assert!(ro.report.is_clean(), "{:?}", ro.report);
    assert_eq!(ro.session.get_children(Some(&a1)).len(), 2, "the branch");
    assert_eq!(
        ro.session.get_label(&u1),
        Some(&session_format::json::JsValue::from("first question"))
    );
    bytes
}

#[derive(Debug, Default)]
struct Figures {
    offsets: u64,
    opened: u64,
    longest_prefix_ok: u64,
    mid_line_cuts: u64,
    damage_reported: u64,
    false_damage: u64,
    lines_deleted: u64,
    misplaced_appends: u64,
    reopen_ok: u64,
}

/// The entry ids of the lines of `full` whose JSON ends at or before `cut`, and the line the
/// cut falls inside (1-based number, offset of its first byte), if any.
fn expected(full: &[u8], sp: &[Span], cut: usize) -> (Vec<String>, Option<(usize, usize)>) {
    let ids = sp
        .iter()
        .skip(1)
        .filter(|s| s.end <= cut)
        .map(|s| line_id(&full[s.start..s.end]).unwrap())
        .collect();
    let inside = sp
        .iter()
        .enumerate()
        .find(|(_, s)| s.start < cut && cut < s.end)
        .map(|(i, s)| (i + 1, s.start));
    (ids, inside)
}

fn entry_ids(sm: &SessionManager) -> Vec<String> {
    sm.get_entries().map(|e| e.id().to_owned()).collect()
}

#[test]
fn every_cut_opens_with_the_longest_valid_prefix_and_appends_keep_complete_lines() {
    let dir = tempfile::tempdir().unwrap();
    let full = sample(&dir.path().join("sample.jsonl"));
    let sp = spans(&full);
    let header_end = sp[0].end;
    eprintln!(
        "truncation: {} bytes, {} lines; cutting at every offset",
        full.len(),
        sp.len()
    );
    let mut f = Figures::default();
    for cut in 0..=full.len() {
        f.offsets += 1;
        let path = dir.path().join(format!("cut-{cut}.jsonl"));
        let prefix = &full[..cut];
        // A new file each time (no sync needed: nothing here is about power loss).
        session_store::io::append_raw(&path, prefix).unwrap();
        let (ids, inside) = expected(&full, &sp, cut);

        // Read-only open.
        let Ok(ro) = SessionManager::open_read_only(&path, None) else {
            eprintln!("cut {cut}: the read-only open failed");
            continue;
        };
        f.opened += 1;
        if entry_ids(&ro.session) == ids {
            f.longest_prefix_ok += 1;
        } else {
            eprintln!(
                "cut {cut}: entries {:?}, expected {ids:?}",
                entry_ids(&ro.session)
            );
        }
        let report = &ro.report;
        let damage: Vec<(usize, usize, bool)> = report
            .malformed_lines
            .iter()
            .map(|m| (m.line, m.line_offset, m.torn))
            .collect();
        let torn = report
            .torn_tail
            .as_ref()
            .map(|m| (m.line, m.line_offset, m.torn));
        match inside {
            Some((line, offset)) => {
                f.mid_line_cuts += 1;
                let header_flag_ok = report.corrupt_header.is_some() == (line == 1);
                if damage == [(line, offset, true)]
                    && torn == Some((line, offset, true))
                    && header_flag_ok
                {
                    f.damage_reported += 1;
                } else {
                    eprintln!(
                        "cut {cut}: expected line {line} at byte {offset} torn, got {damage:?} / {torn:?} / corrupt header {:?}",
                        report.corrupt_header
                    );
                }
            }
            None => {
                let clean = damage.is_empty()
                    && torn.is_none()
                    && report.corrupt_header.is_none()
                    && report.empty == (cut == 0)
                    && report.missing_final_newline == (cut > 0 && full[cut - 1] != b'\n');
                if !clean {
                    eprintln!("cut {cut}: damage reported where there is none: {report:?}");
                    f.false_damage += 1;
                }
            }
        }
        drop(ro);

        // Writable open + append.
        let mut sm = SessionManager::open(&path, None, None).unwrap();
        sm.set_durability(Durability::Buffer);
        let id = sm
            .append_message(assistant(&format!("after the cut at {cut}"), 9))
            .unwrap();
        let backup = sm.diagnostics().corrupt_header_backup;
        drop(sm);
        let after = std::fs::read(&path).unwrap();
        let complete_lines = sp.iter().filter(|s| s.end < cut).count();
        let (kept, rest) = if cut == 0 || cut < header_end {
            // No complete line: a fresh header (empty file) or a corrupt-header rewrite, whose
            // backup holds the cut bytes exactly.
            if cut > 0 {
                let saved = backup.as_deref().map(|b| std::fs::read(b).unwrap());
                if saved.as_deref() != Some(prefix) {
                    eprintln!("cut {cut}: no byte-exact backup of the torn header ({backup:?})");
                    f.lines_deleted += 1;
                }
            }
            let after_sp = spans(&after);
            let header_ok = after_sp.len() == 2 && line_id(&after[..after_sp[0].end]).is_some();
            (
                header_ok,
                &after[after_sp.first().map_or(0, |s| s.end + 1)..],
            )
        } else if after.starts_with(prefix) {
            let sep = usize::from(!prefix.ends_with(b"\n"));
            let rest = &after[cut..];
            (
                sep == 0 || rest.first() == Some(&b'\n'),
                &rest[sep.min(rest.len())..],
            )
        } else {
            let survived = sp
                .iter()
                .take(complete_lines)
                .filter(|s| after.get(s.start..=s.end) == Some(&full[s.start..=s.end]))
                .count();
            eprintln!(
                "cut {cut}: the writable open + append changed the bytes before the cut ({survived} of {complete_lines} complete lines kept)"
            );
            f.lines_deleted += (complete_lines - survived) as u64;
            (false, &after[..0])
        };
        let own_line = rest.ends_with(b"\n")
            && !rest[..rest.len() - 1].contains(&b'\n')
            && line_id(&rest[..rest.len() - 1]).as_deref() == Some(id.as_str());
        if !(kept && own_line) {
            eprintln!(
                "cut {cut}: the new line did not land on its own line: {:?}",
                String::from_utf8_lossy(rest)
            );
            f.misplaced_appends += 1;
        }

        // Reopen: the old entries plus the new one; the damage where it was, now terminated.
        let ro = SessionManager::open_read_only(&path, None).unwrap();
        let mut want = if cut < header_end { Vec::new() } else { ids };
        want.push(id);
        let want_damage: Vec<(usize, usize, bool)> = inside
            .filter(|&(line, _)| line > 1)
            .map(|(line, offset)| (line, offset, false))
            .into_iter()
            .collect();
        let got_damage: Vec<(usize, usize, bool)> = ro
            .report
            .malformed_lines
            .iter()
            .map(|m| (m.line, m.line_offset, m.torn))
            .collect();
        if entry_ids(&ro.session) == want && got_damage == want_damage {
            f.reopen_ok += 1;
        } else {
            eprintln!(
                "cut {cut}: after the append, entries {:?} (want {want:?}), damage {got_damage:?} (want {want_damage:?})",
                entry_ids(&ro.session)
            );
        }
    }
    emit(
        "truncation",
        &[
            ("offsets", f.offsets),
            ("opened", f.opened),
            ("longestPrefixOk", f.longest_prefix_ok),
            ("midLineCuts", f.mid_line_cuts),
            ("damageReported", f.damage_reported),
            ("falseDamage", f.false_damage),
            ("linesDeleted", f.lines_deleted),
            ("misplacedAppends", f.misplaced_appends),
            ("reopenOk", f.reopen_ok),
        ],
    );
    let n = full.len() as u64 + 1;
    assert_eq!(f.offsets, n);
    assert_eq!(f.opened, n, "{f:?}");
    assert_eq!(f.longest_prefix_ok, n, "{f:?}");
    // Every cut but those at a line's start (9), at its `\n` (9) and at the end (1) lies
    // inside a line's JSON.
    assert_eq!(f.mid_line_cuts, n - 1 - 2 * sp.len() as u64, "{f:?}");
    assert_eq!(f.damage_reported, f.mid_line_cuts, "{f:?}");
    assert_eq!(f.false_damage, 0, "{f:?}");
    assert_eq!(f.lines_deleted, 0, "{f:?}");
    assert_eq!(f.misplaced_appends, 0, "{f:?}");
    assert_eq!(f.reopen_ok, n, "{f:?}");
}
