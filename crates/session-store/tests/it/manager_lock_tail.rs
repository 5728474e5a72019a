//! The write lock's catch-up before an append reads only what another writer appended, once the
//! manager knows the file's first and last 4 KiB (it used to re-read and re-compare the whole
//! file before every append that followed another writer's: 25 ms per append on a 31 MB file).
//!
//! What shows the tail-only read: an in-place edit of a line outside the first and last 4 KiB
//! (same length) is not seen by the catch-up, exactly as the warm cache's tail reindex does not
//! see it (docs/DEVIATIONS.md D18 (2)); a full re-read would have found the file changed and
//! adopted nothing. The check before a full rewrite still compares every byte, so that edit is
//! backed up before anything is overwritten (D11).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::Path;

use session_format::json::{JsValue, parse_value};
use session_store::SessionManager;
use session_store::lock::LockOptions;

fn assistant(text: &str) -> JsValue {
    parse_value(
        format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}],"api":"test","provider":"test","model":"m","stopReason":"stop","timestamp":1}}"#
        )
        .as_bytes(),
    )
    .unwrap()
}

fn locked(file: &Path) -> SessionManager {
    let mut sm = SessionManager::open(file, None, None).unwrap();
    sm.set_write_lock(Some(LockOptions::default()));
    sm
}

fn ids(sm: &SessionManager) -> Vec<String> {
    sm.get_entries().map(|e| e.id().to_owned()).collect()
}

/// The entry ids of the file, in file order.
fn file_ids(file: &Path) -> Vec<String> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let v = parse_value(l.as_bytes()).unwrap();
            v.get("id")
                .and_then(JsValue::as_str_lossy)
                .unwrap()
                .into_owned()
        })
        .collect()
}

/// Rewrites `len` bytes at `offset` in place (same inode, same length), as an editor patching
/// a file would.
#[allow(clippy::disallowed_methods)] // Plays another program editing the file in place.
fn patch(file: &Path, offset: u64, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().write(true).open(file).unwrap();
    f.write_all_at(bytes, offset).unwrap();
}

#[test]
fn an_append_after_another_writer_reads_only_the_new_lines() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    let mut a = locked(&file);
    // Five 3 KiB messages: the file is far longer than the two 4 KiB probes.
    let padding = |n: usize| format!("pad{n} {}", "p".repeat(3000));
    for n in 0..5 {
        a.append_message(assistant(&padding(n))).unwrap();
    }
    let mut b = locked(&file);

    // Round 1: A reads the whole file once (it knows no probe yet) and adopts B's line.
    let b1 = b.append_message(assistant("b1")).unwrap();
    let a1 = a.append_message(assistant("a1")).unwrap();
    let b2 = b.append_message(assistant("b2")).unwrap();
    assert_eq!(ids(&a), file_ids(&file)[..7]);
    assert_eq!(ids(&b), file_ids(&file));

    // The third padded message, edited in place (same length, 5 bytes into its text): outside
    // the first 4 KiB and the last 4 KiB before the file's current end.
    let text = std::fs::read(&file).unwrap();
    let at = text
        .windows(b"pad2 ".len())
        .position(|w| w == b"pad2 ")
        .unwrap() as u64;
    assert!(at > 4096 && text.len() as u64 - at > 4096 + 3000);
    patch(&file, at, b"PAD2 ");
    let edited = std::fs::read(&file).unwrap();

    // Round 2: A reads only B's new line and adopts it; the edit is not seen.
    let a2 = a.append_message(assistant("a2")).unwrap();
    let mut expected = ids(&b);
    expected.push(a2.clone());
    assert_eq!(file_ids(&file), expected);
    assert_eq!(ids(&a), expected);
    assert_eq!(a.diagnostics().adopted_lines, 2);
    // The adopted and written rows hold the file's exact line bytes.
    let lines: Vec<Vec<u8>> = std::fs::read(&file)
        .unwrap()
        .split(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect();
    for (id, line) in [(&b1, 6), (&a1, 7), (&b2, 8), (&a2, 9)] {
        assert_eq!(
            a.get_entry(id).unwrap().raw_bytes(),
            &lines[line][..],
            "{id}"
        );
    }
    let third = a.get_entries().nth(2).unwrap();
    let shown = String::from_utf8(third.raw_bytes().to_vec()).unwrap();
    assert!(shown.contains("\"pad2 ppp"), "{shown}");

    // A full rewrite compares every byte: the edited file is backed up first, byte for byte.
    let before_rewrite = std::fs::read(&file).unwrap();
    assert_eq!(&before_rewrite[..edited.len()], &edited[..]);
    a.rewrite_file().unwrap();
    let backups = a.diagnostics().conflict_backups;
    assert_eq!(backups.len(), 1);
    assert_eq!(std::fs::read(&backups[0]).unwrap(), before_rewrite);
}

/// Without an edit, writers that alternate stay exact: each manager's entries are the file's,
/// in file order, every line adopted once.
#[test]
fn alternating_writers_adopt_each_others_lines_in_file_order() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    let mut a = locked(&file);
    a.append_message(assistant(&"x".repeat(5000))).unwrap();
    let mut b = locked(&file);
    for round in 0..6 {
        b.append_message(assistant(&format!("b{round}"))).unwrap();
        a.append_message(assistant(&format!("a{round}"))).unwrap();
        b.append_custom_entry("note", None).unwrap();
    }
    let on_disk = file_ids(&file);
    assert_eq!(on_disk.len(), 1 + 6 * 3);
    assert_eq!(ids(&b), on_disk);
    assert_eq!(ids(&a), on_disk[..on_disk.len() - 1]);
    // B adopted A's 6 lines, A adopted B's 12 but the last one.
    assert_eq!(b.diagnostics().adopted_lines, 6);
    assert_eq!(a.diagnostics().adopted_lines, 11);
    // Reopening reads the same entries.
    let reopened = SessionManager::open(&file, None, None).unwrap();
    assert_eq!(ids(&reopened), on_disk);
}
