//! What the warm cache's tail reindex (docs/DEVIATIONS.md D18 (2)) sees of other writers'
//! changes to a cached file, pinned exactly:
//! - in-place rewrites of the same size (mtime put back), replacements by rename with the same
//!   size and mtime, and rewrites that touch the last 4 KiB before the old end are read in full;
//! - a truncation that regrows the same prefix plus new lines reads only the new lines;
//! - the documented limit: a same-length in-place edit in the middle (outside the first 4 KiB
//!   and the last 4 KiB before the old end) followed by growth is **not** seen, the reopen shows
//!   the old bytes of that line until the entry is invalidated; the manager's full rewrite then
//!   backs the file up before overwriting it (D11).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.
#![allow(clippy::disallowed_methods)] // Plays other writers that edit the file in place.

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use session_store::SessionManager;

/// The warm cache of the process-wide file store (the one the default managers use).
fn warm_cache() -> &'static session_store::WarmCache {
    session_store::FileStorage::process_wide().warm_cache()
}

const HEADER: &str = "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2026-06-01T10:00:00.000Z\",\"cwd\":\"/w\"}\n";

fn line(i: usize, text: &str) -> String {
    let parent = if i == 0 {
        "null".to_owned()
    } else {
        format!("\"e{:07}\"", i - 1)
    };
    format!(
        "{{\"type\":\"message\",\"id\":\"e{i:07}\",\"parentId\":{parent},\"timestamp\":\"2026-06-01T10:00:00.000Z\",\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"{text}\"}}],\"stopReason\":\"stop\"}}}}\n"
    )
}

/// A header and 200 entries (about 40 KiB), all with the text `hello`.
fn text() -> String {
    let mut t = HEADER.to_owned();
    for i in 0..200 {
        t.push_str(&line(i, "hello"));
    }
    t
}

fn texts(sm: &SessionManager) -> Vec<String> {
    sm.get_entries()
        .map(|e| {
            let v = session_format::json::parse_value(e.raw_bytes()).unwrap();
            let content = v.get("message").unwrap().get("content").unwrap();
            let first = content.as_array().unwrap()[0].get("text").unwrap();
            first.as_str_lossy().unwrap().into_owned()
        })
        .collect()
}

/// Overwrites bytes at `offset` in place (same inode, no truncation).
fn poke(path: &Path, offset: usize, bytes: &[u8]) {
    let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.seek(SeekFrom::Start(offset as u64)).unwrap();
    f.write_all(bytes).unwrap();
}

fn expected(edits: &[(usize, &str)], total: usize) -> Vec<String> {
    (0..total)
        .map(|i| {
            edits
                .iter()
                .find(|(at, _)| *at == i)
                .map_or("hello", |(_, t)| t)
                .to_owned()
        })
        .collect()
}

#[test]
fn changes_the_tail_reindex_sees_and_the_one_it_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    let original = text();
    session_store::io::write_raw(&file, original.as_bytes()).unwrap();
    let sm = SessionManager::open(&file, None, None).unwrap();
    assert_eq!(sm.parsed_lines(), 201);

    // The limit: entry 100's text edited in place (same length), then a line appended.
    let at = original.find("\"e0000100\"").unwrap();
    let at = at + original[at..].find("hello").unwrap();
    assert!(at > 4096 && at < original.len() - 4096);
    poke(&file, at, b"HACKD");
    session_store::io::append_raw(&file, line(200, "tail").as_bytes()).unwrap();
    let warm = SessionManager::open(&file, None, None).unwrap();
    assert_eq!(warm.parsed_lines(), 1, "only the appended line was read");
    assert_eq!(texts(&warm), expected(&[(200, "tail")], 201));
    // The manager's full rewrite compares every byte first: the file is backed up.
    let mut writer = SessionManager::open(&file, None, None).unwrap();
    writer.rewrite_file().unwrap();
    let backups = writer.diagnostics().conflict_backups;
    assert_eq!(backups.len(), 1);
    let backed_up = std::fs::read_to_string(&backups[0]).unwrap();
    let mut on_disk = original;
    on_disk.replace_range(at..at + 5, "HACKD");
    on_disk.push_str(&line(200, "tail"));
    assert_eq!(backed_up, on_disk);
    // After an invalidation a load reads the file as it is.
    warm_cache().invalidate(&file);
    session_store::io::write_raw(&file, backed_up.as_bytes()).unwrap();
    let cold = SessionManager::open(&file, None, None).unwrap();
    assert_eq!(cold.parsed_lines(), 202);
    assert_eq!(
        texts(&cold),
        expected(&[(100, "HACKD"), (200, "tail")], 201)
    );

    // Same size, in place, mtime put back: ctime differs, read in full.
    let before = std::fs::read_to_string(&file).unwrap();
    let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
    let first = before.find("hello").unwrap();
    poke(&file, first, b"HELLO");
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let sm = SessionManager::open(&file, None, None).unwrap();
    assert_eq!(sm.parsed_lines(), 202);
    assert_eq!(
        texts(&sm),
        expected(&[(0, "HELLO"), (100, "HACKD"), (200, "tail")], 201)
    );

    // Replaced by a rename, same size and mtime: another inode, read in full.
    let replaced = std::fs::read_to_string(&file)
        .unwrap()
        .replacen("HELLO", "HOLLA", 1);
    let tmp = dir.path().join("tmp.jsonl");
    session_store::io::write_raw(&tmp, replaced.as_bytes()).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&tmp)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    std::fs::rename(&tmp, &file).unwrap();
    let sm = SessionManager::open(&file, None, None).unwrap();
    assert_eq!(sm.parsed_lines(), 202);
    assert_eq!(texts(&sm)[0], "HOLLA");

    // Truncated and regrown with the same prefix plus one line: only that line is read.
    let grown = format!("{replaced}{}", line(201, "new"));
    {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&file)
            .unwrap();
        f.write_all(grown.as_bytes()).unwrap();
    }
    let sm = SessionManager::open(&file, None, None).unwrap();
    assert_eq!(sm.parsed_lines(), 1);
    assert_eq!(texts(&sm).last().unwrap(), "new");

    // Regrown with the old last line changed (inside the last 4 KiB): read in full.
    let changed = format!("{}{}", grown.replace("\"new\"", "\"neW\""), line(202, "x"));
    {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&file)
            .unwrap();
        f.write_all(changed.as_bytes()).unwrap();
    }
    let sm = SessionManager::open(&file, None, None).unwrap();
    assert_eq!(sm.parsed_lines(), 204);
    let t = texts(&sm);
    assert_eq!(t[t.len() - 2..], ["neW".to_owned(), "x".to_owned()]);
}
