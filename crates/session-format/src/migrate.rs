//! Version migrations v1 → v2 → v3, exactly as the reference runs them on parsed rows
//! (openclaw-jsonl.md §1.9, pi-format.md §1.8), plus an id collision check the reference lacks.
//!
//! Rows are JavaScript values; a migrated row keeps its original key order, with `id`,
//! `parentId` (and `firstKeptEntryId`) appended at the end, and is serialised afresh by the
//! caller. Rows the migration does not touch keep their bytes.

use std::collections::HashSet;

use sha2::{Digest, Sha256};

use crate::ids::{ENTRY_ID_ATTEMPTS, new_entry_id};
use crate::json::{JsValue, number_to_string};

/// One parsed row (blank and malformed lines are not rows: they are not counted by
/// `firstKeptEntryIndex`).
#[derive(Clone, Debug, PartialEq)]
pub struct MigrationRow {
    /// The row's value; migrated in place.
    pub value: JsValue,
    /// Set when the migration changed the row.
    pub changed: bool,
}

impl MigrationRow {
    /// An unchanged row.
    pub fn new(value: JsValue) -> Self {
        Self {
            value,
            changed: false,
        }
    }
}

/// What a migration did.
#[derive(Clone, Debug, PartialEq)]
pub struct MigrationReport {
    /// The header's version before (`version ?? 1`).
    pub from_version: f64,
    /// Index (among the rows) of the header.
    pub header_index: usize,
    /// How many rows changed, the header included.
    pub changed_rows: usize,
    /// `message` rows whose role `hookMessage` became `custom`.
    pub hook_messages_renamed: usize,
}

/// The header version the way the reference compares it: `header.version ?? 1`, coerced by
/// JavaScript's `<` (strings become numbers, unparseable ones NaN, which never migrates).
pub fn js_version_number(version: Option<&JsValue>) -> f64 {
    match version {
        None | Some(JsValue::Null) => 1.0,
        Some(v) => js_to_number(v),
    }
}

/// JavaScript `ToNumber` for a JSON value (ToPrimitive of arrays joins them with commas).
fn js_to_number(v: &JsValue) -> f64 {
    match v {
        JsValue::Null => 0.0,
        JsValue::Bool(b) => f64::from(u8::from(*b)),
        JsValue::Number(n) => *n,
        JsValue::String(s) => string_to_number(&s.to_str_lossy()),
        JsValue::Array(items) => match items.as_slice() {
            [] => 0.0,
            [one] => match one {
                JsValue::Null => 0.0,
                JsValue::Array(_) | JsValue::Object(_) => f64::NAN,
                JsValue::Number(n) => *n,
                other => string_to_number(&js_to_display(other)),
            },
            _ => f64::NAN,
        },
        JsValue::Object(_) => f64::NAN,
    }
}

fn js_to_display(v: &JsValue) -> String {
    match v {
        JsValue::String(s) => s.to_str_lossy().into_owned(),
        JsValue::Bool(b) => b.to_string(),
        JsValue::Number(n) => number_to_string(*n),
        _ => String::new(),
    }
}

/// JavaScript `StringToNumber`: trimmed; empty is 0; decimal, `Infinity`, or 0x/0o/0b integers.
fn string_to_number(s: &str) -> f64 {
    let t = s.trim_matches(|c: char| c.is_whitespace() || c == '\u{FEFF}');
    if t.is_empty() {
        return 0.0;
    }
    let radix = |prefix: &[&str], radix: u32| -> Option<f64> {
        let rest = prefix.iter().find_map(|p| t.strip_prefix(p))?;
        u64::from_str_radix(rest, radix).ok().map(|n| n as f64)
    };
    if let Some(n) = radix(&["0x", "0X"], 16)
        .or_else(|| radix(&["0o", "0O"], 8))
        .or_else(|| radix(&["0b", "0B"], 2))
    {
        return n;
    }
    match t {
        "Infinity" | "+Infinity" => return f64::INFINITY,
        "-Infinity" => return f64::NEG_INFINITY,
        _ => {}
    }
    let ok = t
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
    if !ok || t.contains("inf") {
        return f64::NAN;
    }
    t.parse::<f64>().unwrap_or(f64::NAN)
}

/// True when the header's version is below 3 (JavaScript comparison).
pub fn needs_migration(header: &JsValue) -> bool {
    js_version_number(header.get("version")) < 3.0
}

/// Where the entry ids a v1 → v2 migration gives its rows come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MigrationIds<'a> {
    /// Fresh random ids, as the reference makes them (`generateId`: the first 8 hex of a v4
    /// UUID, retried while taken).
    Random,
    /// Ids derived from the file, the same on every read of the same bytes
    /// ([`derived_entry_id`]): `file_sha256` is the lowercase hex SHA-256 of the whole file's
    /// bytes, `lines[i]` the 1-based line number of row `i` (a row without one uses `i + 1`).
    Derived {
        /// Lowercase hex SHA-256 of the file's bytes.
        file_sha256: &'a str,
        /// The 1-based line of each row, by row index.
        lines: &'a [Option<usize>],
    },
}

/// The id a derived v1 migration ([`MigrationIds::Derived`]) gives the row on 1-based `line`
/// of the file whose bytes hash to `file_sha256` (lowercase hex SHA-256), at its `attempt`:
/// the first 8 lowercase hex characters of `SHA-256("<file_sha256>:<line>")` for attempt 0,
/// of `SHA-256("<file_sha256>:<line>:<attempt>")` after that. The migration takes the first
/// attempt not already an id of the file; after [`ENTRY_ID_ATTEMPTS`] taken attempts, all 64
/// hex characters of the last hash. Deterministic: every read-only view of an unmigrated
/// version 1 file shows the same ids, and a writable open that migrates the file writes them.
pub fn derived_entry_id(file_sha256: &str, line: usize, attempt: usize) -> String {
    let text = if attempt == 0 {
        format!("{file_sha256}:{line}")
    } else {
        format!("{file_sha256}:{line}:{attempt}")
    };
    let hex: String = Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    hex[..8].to_owned()
}

/// The lowercase hex SHA-256 of `bytes`: a file's digest for [`MigrationIds::Derived`].
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn full_derived_id(file_sha256: &str, line: usize, attempt: usize) -> String {
    Sha256::digest(format!("{file_sha256}:{line}:{attempt}").as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// [`migrate_with`] with the reference's random ids ([`MigrationIds::Random`]).
pub fn migrate(rows: &mut [MigrationRow]) -> Option<MigrationReport> {
    migrate_with(rows, MigrationIds::Random)
}

/// Migrates rows in place. The header is the first row with `type:"session"`; nothing happens
/// when there is none or when its version is 3 or more (version 4 included).
///
/// - v < 2: the header gets `version: 2` (appended if absent). Every other object row that is
///   not a `session` row, in file order, gets an 8-hex `id` from `ids` (random, or derived from
///   the file's bytes and the row's line: [`derived_entry_id`]; unique among the file's ids,
///   which the reference does not check) and `parentId` = the previous such row's id (`null` for
///   the first), overwriting existing ones in place or appending them. A `compaction` with a
///   numeric `firstKeptEntryIndex` (an index into the rows, header included) gets
///   `firstKeptEntryId` = that row's `id` at that moment (absent if the row has none yet or is a
///   `session` row), and `firstKeptEntryIndex` is deleted.
/// - v < 3: the header gets `version: 3`; each `message` whose `message.role` is `hookMessage`
///   gets role `custom` in place. Nothing else changes: OpenClaw 2026.6.11 adds no `customType`
///   (checked against the released package; later versions add `customType: "hook"`).
pub fn migrate_with(rows: &mut [MigrationRow], ids: MigrationIds<'_>) -> Option<MigrationReport> {
    let header_index = rows.iter().position(|r| {
        r.value
            .get("type")
            .and_then(JsValue::as_js_string)
            .is_some_and(|t| t == "session")
    })?;
    let from_version = js_version_number(rows[header_index].value.get("version"));
    if from_version.is_nan() || from_version >= 3.0 {
        return None;
    }
    let mut report = MigrationReport {
        from_version,
        header_index,
        changed_rows: 0,
        hook_messages_renamed: 0,
    };
    if from_version < 2.0 {
        set_header_version(&mut rows[header_index], 2.0);
        migrate_v1(rows, ids);
    }
    set_header_version(&mut rows[header_index], 3.0);
    for row in rows.iter_mut() {
        let is_hook = row
            .value
            .get("type")
            .and_then(JsValue::as_js_string)
            .is_some_and(|t| t == "message")
            && row
                .value
                .get("message")
                .and_then(|m| m.get("role"))
                .and_then(JsValue::as_js_string)
                .is_some_and(|r| r == "hookMessage");
        if !is_hook {
            continue;
        }
        if let Some(msg) = row
            .value
            .as_object_mut()
            .and_then(|o| o.get_mut("message"))
            .and_then(JsValue::as_object_mut)
        {
            msg.insert("role", JsValue::from("custom"));
            row.changed = true;
            report.hook_messages_renamed += 1;
        }
    }
    report.changed_rows = rows.iter().filter(|r| r.changed).count();
    Some(report)
}

fn set_header_version(row: &mut MigrationRow, version: f64) {
    if let Some(obj) = row.value.as_object_mut() {
        obj.insert("version", JsValue::Number(version));
        row.changed = true;
    }
}

fn is_session_row(v: &JsValue) -> bool {
    v.get("type")
        .and_then(JsValue::as_js_string)
        .is_some_and(|t| t == "session")
}

fn migrate_v1(rows: &mut [MigrationRow], ids: MigrationIds<'_>) {
    let mut taken: HashSet<String> = rows
        .iter()
        .filter(|r| is_session_row(&r.value))
        .filter_map(|r| {
            r.value
                .get("id")
                .and_then(JsValue::as_str_lossy)
                .map(|s| s.into_owned())
        })
        .collect();
    let mut prev: Option<String> = None;
    for i in 0..rows.len() {
        if is_session_row(&rows[i].value) || rows[i].value.as_object().is_none() {
            continue;
        }
        let id = match ids {
            MigrationIds::Random => new_entry_id(|candidate| taken.contains(candidate)),
            MigrationIds::Derived { file_sha256, lines } => {
                let line = lines.get(i).copied().flatten().unwrap_or(i + 1);
                (0..ENTRY_ID_ATTEMPTS)
                    .map(|attempt| derived_entry_id(file_sha256, line, attempt))
                    .find(|candidate| !taken.contains(candidate))
                    .unwrap_or_else(|| full_derived_id(file_sha256, line, ENTRY_ID_ATTEMPTS))
            }
        };
        taken.insert(id.clone());
        let first_kept = match rows[i].value.get("firstKeptEntryIndex") {
            Some(JsValue::Number(n))
                if rows[i]
                    .value
                    .get("type")
                    .and_then(JsValue::as_js_string)
                    .is_some_and(|t| t == "compaction") =>
            {
                Some(*n)
            }
            _ => None,
        };
        let Some(obj) = rows[i].value.as_object_mut() else {
            continue;
        };
        obj.insert("id", JsValue::from(id.clone()));
        obj.insert("parentId", JsValue::from(prev.clone()));
        // The reference gives the row its id before it resolves the index, so an index naming
        // the compaction itself yields the compaction's own new id.
        if let Some(n) = first_kept {
            let target_id = if n < 0.0 || n.fract() != 0.0 || n >= rows.len() as f64 {
                None
            } else {
                let target = &rows[n as usize].value;
                if is_session_row(target) {
                    None
                } else {
                    target.get("id").cloned()
                }
            };
            if let Some(obj) = rows[i].value.as_object_mut() {
                if let Some(target_id) = target_id {
                    obj.insert("firstKeptEntryId", target_id);
                }
                obj.remove("firstKeptEntryIndex");
            }
        }
        rows[i].changed = true;
        prev = Some(id);
    }
}
