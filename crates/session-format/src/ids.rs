//! Ids, timestamps and file names for new sessions and entries (openclaw-jsonl.md §1.3, §1.10;
//! pi-format.md §1.1, §1.4).

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

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
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
