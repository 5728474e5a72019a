//! Ids, timestamps and file names for new sessions and entries (openclaw-jsonl.md §1.3, §1.10;
//! pi-format.md §1.1, §1.4).

use std::cell::RefCell;
use std::time::{SystemTime, UNIX_EPOCH};

/// Attempts at an 8-hex id before falling back to a full UUID (the reference's limit).
pub const ENTRY_ID_ATTEMPTS: usize = 100;

/// A new entry id: 8 lowercase hex characters (the first 8 of a v4 UUID), retried while
/// `taken(id)` says it exists, up to [`ENTRY_ID_ATTEMPTS`] times; then a full 36-character v4
/// UUID.
pub fn new_entry_id(mut taken: impl FnMut(&str) -> bool) -> String {
    for _ in 0..ENTRY_ID_ATTEMPTS {
        let uuid = uuid::Uuid::new_v4().to_string();
        let short = &uuid[..8];
        if !taken(short) {
            return short.to_owned();
        }
    }
    uuid::Uuid::new_v4().to_string()
}

/// A new session id: a UUIDv7 (time-ordered), lowercase with hyphens.
pub fn new_session_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

thread_local! {
    /// The clock [`with_clock`] installed on this thread, if any.
    static CLOCK: RefCell<Option<Box<dyn FnMut() -> i64>>> = RefCell::new(None);
}

/// Milliseconds since the Unix epoch, now: the system clock, or the clock [`with_clock`]
/// installed on this thread while its closure runs.
pub fn now_ms() -> i64 {
    let fixed = CLOCK.with(|c| c.try_borrow_mut().ok()?.as_mut().map(|f| f()));
    fixed.unwrap_or_else(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0)
    })
}

/// Runs `f` with `clock` (epoch milliseconds) as this thread's [`now_ms`], so every timestamp
/// written meanwhile (entry and header `timestamp`s, [`now_timestamp`], the `timestamp` of a
/// message a library fills in) comes from it; the previous clock is back afterwards, also
/// when `f` panics. Used by callers that build sessions under a fixed clock (the `sessions`
/// CLI's global `--now`, reproducible tests). Other threads keep the system clock.
pub fn with_clock<R>(clock: impl FnMut() -> i64 + 'static, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Box<dyn FnMut() -> i64>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            CLOCK.with(|c| {
                if let Ok(mut c) = c.try_borrow_mut() {
                    *c = previous;
                }
            });
        }
    }
    let previous = CLOCK.with(|c| c.replace(Some(Box::new(clock))));
    let _restore = Restore(previous);
    f()
}

/// `new Date().toISOString()`: `YYYY-MM-DDTHH:MM:SS.mmmZ`, UTC.
pub fn now_timestamp() -> String {
    crate::time::to_iso_string(now_ms()).unwrap_or_default()
}

/// The file name the reference gives a new session: the header timestamp with `:` and `.`
/// replaced by `-`, `_`, the session id, `.jsonl`.
pub fn session_file_name(timestamp: &str, session_id: &str) -> String {
    format!("{}_{session_id}.jsonl", timestamp.replace([':', '.'], "-"))
}

/// The name of a corrupt-header backup: `<file>.corrupt-<ISO ts with ':' and '.' → '-'>-<8 hex>`
/// `.jsonl` (openclaw-jsonl.md §1.6). `file_name` is the session file's name.
pub fn corrupt_backup_name(file_name: &str, timestamp: &str) -> String {
    let tag = &uuid::Uuid::new_v4().simple().to_string()[..8];
    format!(
        "{file_name}.corrupt-{}-{tag}.jsonl",
        timestamp.replace([':', '.'], "-")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_clock_sets_now_on_this_thread_and_restores_it() {
        let mut t = 1_781_269_200_000; // 2026-06-12T13:00:00.000Z
        let (a, b, iso) = with_clock(
            move || {
                t += 1_000;
                t
            },
            || (now_ms(), now_ms(), now_timestamp()),
        );
        assert_eq!((a, b), (1_781_269_201_000, 1_781_269_202_000));
        assert_eq!(iso, "2026-06-12T13:00:03.000Z");
        // The system clock again (well after the fixed instant is not guaranteed; not equal to
        // the next tick is).
        assert_ne!(now_ms(), 1_781_269_204_000);
        let other = std::thread::spawn(|| with_clock(|| 5, || std::thread::spawn(now_ms).join()));
        assert_ne!(other.join().ok().and_then(Result::ok), Some(5));
    }
}
