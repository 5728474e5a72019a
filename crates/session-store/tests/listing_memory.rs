//! Listing memory is bounded by the largest session, not by the sum of all sessions' texts:
//! `list` keeps each session's preview (its first user message) and reads files into a
//! per-thread buffer, but no longer builds every session's `allMessagesText`
//! ([`session_store::SessionInfo::all_messages_text`] reads it on demand). Measured with a
//! counting global allocator (`cap`), the only test of this binary so no other test allocates
//! meanwhile.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::alloc::System;
use std::fmt::Write as _;

use cap::Cap;

#[global_allocator]
static ALLOC: Cap<System> = Cap::new(System, usize::MAX);

/// Sessions in the directory.
const SESSIONS: usize = 64;
/// Messages per session (alternating user and assistant).
const MESSAGES: usize = 64;
/// Text bytes per message.
const TEXT: usize = 4096;
/// Threads `list` reads on at most (`list.rs` `MAX_THREADS`).
const MAX_THREADS: usize = 4;

/// One session of `MESSAGES` messages of `TEXT` bytes each, written line by line.
fn plant_session(dir: &std::path::Path, k: usize) -> usize {
    let path = dir.join(format!("s{k:03}.jsonl"));
    let mut text = String::with_capacity(MESSAGES * (TEXT + 200));
    writeln!(
        text,
        r#"{{"type":"session","version":3,"id":"s-{k:03}","timestamp":"2026-01-02T09:00:00.000Z","cwd":"/w"}}"#
    )
    .unwrap();
    let body: String = std::iter::repeat_n(char::from(b'a' + (k % 26) as u8), TEXT).collect();
    let mut parent = "null".to_owned();
    for m in 0..MESSAGES {
        let role = if m % 2 == 0 { "user" } else { "assistant" };
        writeln!(
            text,
            r#"{{"type":"message","id":"m{m}","parentId":{parent},"timestamp":"2026-01-02T09:00:01.000Z","message":{{"role":"{role}","content":"{body}","timestamp":{}}}}}"#,
            1_767_344_401_000_i64 + m as i64
        )
        .unwrap();
        parent = format!("\"m{m}\"");
    }
    session_store::io::write_raw(&path, text.as_bytes()).unwrap();
    text.len()
}

#[test]
fn listing_memory_is_bounded_by_the_largest_session_not_the_sum_of_texts() {
    let dir = tempfile::tempdir().unwrap();
    let largest = (0..SESSIONS)
        .map(|k| plant_session(dir.path(), k))
        .max()
        .unwrap();
    let all_texts = SESSIONS * (MESSAGES * TEXT + (MESSAGES - 1));

    let before = ALLOC.allocated();
    let infos = session_store::list(dir.path()).unwrap();
    // The high-water mark since the start bounds what `list` held at its peak.
    let list_peak = ALLOC.max_allocated() - before;
    let retained = ALLOC.allocated() - before;
    assert_eq!(infos.len(), SESSIONS);
    assert!(infos.iter().all(|i| i.first_message.len() == TEXT));
    assert!(infos.iter().all(|i| i.unique_message_count == MESSAGES));

    // What the listing holds once done: the previews and small fields, nothing of the rest.
    let previews = SESSIONS * TEXT;
    assert!(
        retained < previews + SESSIONS * 1024,
        "retained {retained} bytes for {SESSIONS} previews of {TEXT} bytes"
    );
    // Its peak: a read buffer of at most twice the largest file per thread, plus the previews.
    let bound = MAX_THREADS * 2 * largest + previews + SESSIONS * 1024;
    eprintln!(
        "list of {SESSIONS} sessions ({largest} bytes each, {all_texts} bytes of text in all): \
         peak {list_peak} bytes, retained {retained} bytes (bound {bound})"
    );
    assert!(
        list_peak <= bound,
        "peak {list_peak} bytes over the bound {bound}"
    );
    assert!(
        list_peak < all_texts / 4,
        "peak {list_peak} is not well below the sum of the texts ({all_texts})"
    );

    // The reference's `allMessagesText`, asked for every session (what every listing held
    // before): the sum of the texts.
    let before_texts = ALLOC.allocated();
    let texts: Vec<String> = infos
        .iter()
        .map(|i| i.all_messages_text().unwrap())
        .collect();
    let held = ALLOC.allocated() - before_texts;
    eprintln!("every allMessagesText held at once: {held} bytes");
    assert_eq!(texts.iter().map(String::len).sum::<usize>(), all_texts);
    assert!(held >= all_texts);
}
