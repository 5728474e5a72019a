//! The files of an OpenClaw sessions directory and what each is (openclaw-store.md §1.4):
//! archive timestamps (R1.13) and the classification of a base name (R1.14) that the
//! reference's maintenance, disk budget and doctor use, and the "header-only" transcript rule its
//! cleanup and listing share (R4.17 (b), §9 case 32).

use std::path::Path;

/// Why a transcript was archived: the `<reason>` of `<file>.<reason>.<ARCHIVE_TS>` (R1.13).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArchiveReason {
    /// `.reset.<ts>`: the key rolled over to a new session id (§3.3).
    Reset,
    /// `.deleted.<ts>`: the row was deleted or pruned (§3.4, §4).
    Deleted,
    /// `.bak.<ts>`: a manual-compact backup.
    Bak,
}

impl ArchiveReason {
    /// The marker as written in a file name: `reset`, `deleted` or `bak`.
    pub fn as_str(self) -> &'static str {
        match self {
            ArchiveReason::Reset => "reset",
            ArchiveReason::Deleted => "deleted",
            ArchiveReason::Bak => "bak",
        }
    }
}

/// What a top-level file of a sessions directory is (R1.14), from its base name alone.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArtifactKind {
    /// The store itself, `sessions.json`.
    Store,
    /// A store temp file `sessions.json.<pid>.<uuid>.tmp` (R2.24; removed by maintenance once
    /// 5 minutes old).
    StoreTemp,
    /// A legacy store backup `sessions.json.bak.<digits>` (an archive artifact).
    StoreBackup,
    /// A transcript: a `*.jsonl` that is none of the kinds below. `session_id` is the name
    /// before `.jsonl` (for a topic transcript it still holds `-topic-<t>`).
    Primary {
        /// The name without `.jsonl`.
        session_id: String,
    },
    /// `<name>.<reason>.<ARCHIVE_TS>` with a valid timestamp.
    Archive {
        /// The marker.
        reason: ArchiveReason,
        /// The archived file's own name (`<id>.jsonl`, or whatever preceded the marker).
        original: String,
        /// The archive time in epoch milliseconds, parsed from the name.
        archived_at_ms: i64,
        /// For a `.reset.`/`.deleted.` archive of a `*.jsonl`, the session id it is counted
        /// under (the name before the last `.jsonl.<reason>.`); else `None`.
        usage_session_id: Option<String>,
    },
    /// `<sessionId>.checkpoint.<uuid v1–5>.jsonl` (case-insensitive).
    Checkpoint {
        /// The part before `.checkpoint.`.
        session_id: String,
    },
    /// `<transcript minus .jsonl>.trajectory.jsonl` or `….trajectory-path.json`.
    Trajectory {
        /// The transcript stem it belongs to (the name minus the sidecar suffix).
        stem: String,
        /// `true` for the `.trajectory-path.json` pointer, `false` for the capture itself.
        pointer: bool,
    },
    /// Anything else (not managed by the reference's maintenance).
    Other,
}

impl ArtifactKind {
    /// Whether the reference counts this file as an archive artifact (R1.14): a `.reset.`,
    /// `.deleted.` or `.bak.` archive, or a legacy store backup.
    pub fn is_archive(&self) -> bool {
        matches!(
            self,
            ArtifactKind::Archive { .. } | ArtifactKind::StoreBackup
        )
    }

    /// The session id a usage-counted file belongs to (R1.14): a primary transcript's name
    /// before `.jsonl`, or a `.reset.`/`.deleted.` archive's name before `.jsonl.<reason>.`.
    /// `None` for every other kind (including `.bak.` backups).
    pub fn usage_session_id(&self) -> Option<&str> {
        match self {
            ArtifactKind::Primary { session_id } => Some(session_id),
            ArtifactKind::Archive {
                usage_session_id, ..
            } => usage_session_id.as_deref(),
            _ => None,
        }
    }
}

/// Classifies the base name of a top-level file of a sessions directory (R1.14). Only names
/// are looked at: the caller keeps regular files and skips sub-directories and symlinks, as
/// the reference's scan does (R1.15).
pub fn classify(name: &str) -> ArtifactKind {
    if name == super::STORE_FILE_NAME {
        return ArtifactKind::Store;
    }
    if let Some(digits) = name.strip_prefix("sessions.json.bak.")
        && !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
    {
        return ArtifactKind::StoreBackup;
    }
    if is_store_temp(name) {
        return ArtifactKind::StoreTemp;
    }
    if let Some((original, reason, archived_at_ms)) = parse_archive_name(name) {
        let usage_session_id = match reason {
            ArchiveReason::Bak => None,
            ArchiveReason::Reset | ArchiveReason::Deleted => {
                let marker = format!(".jsonl.{}.", reason.as_str());
                name.rfind(&marker)
                    .filter(|&i| i > 0)
                    .map(|i| name[..i].to_owned())
            }
        };
        return ArtifactKind::Archive {
            reason,
            original: original.to_owned(),
            archived_at_ms,
            usage_session_id,
        };
    }
    if let Some(stem) = name.strip_suffix(".trajectory.jsonl") {
        return ArtifactKind::Trajectory {
            stem: stem.to_owned(),
            pointer: false,
        };
    }
    if let Some(stem) = name.strip_suffix(".trajectory-path.json") {
        return ArtifactKind::Trajectory {
            stem: stem.to_owned(),
            pointer: true,
        };
    }
    if let Some(session_id) = checkpoint_session_id(name) {
        return ArtifactKind::Checkpoint {
            session_id: session_id.to_owned(),
        };
    }
    match name.strip_suffix(".jsonl") {
        Some(id) => ArtifactKind::Primary {
            session_id: id.to_owned(),
        },
        None => ArtifactKind::Other,
    }
}

/// `sessions.json.<pid>.<uuid>.tmp` or `sessions.json.<uuid>.tmp` (the uuid case-insensitive).
fn is_store_temp(name: &str) -> bool {
    let Some(middle) = name
        .strip_prefix("sessions.json.")
        .and_then(|r| r.strip_suffix(".tmp"))
    else {
        return false;
    };
    let uuid = match middle.split_once('.') {
        Some((pid, uuid)) if !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()) => uuid,
        Some(_) => return false,
        None => middle,
    };
    is_uuid(uuid, false)
}

/// `8-4-4-4-12` hex digits (either case); with `versioned`, the version digit is 1–5 and the
/// variant digit one of `89ab` (the reference's checkpoint pattern).
fn is_uuid(text: &str, versioned: bool) -> bool {
    let b = text.as_bytes();
    if b.len() != 36 {
        return false;
    }
    for (i, &c) in b.iter().enumerate() {
        let ok = match i {
            8 | 13 | 18 | 23 => c == b'-',
            _ => c.is_ascii_hexdigit(),
        };
        if !ok {
            return false;
        }
    }
    !versioned
        || ((b'1'..=b'5').contains(&b[14])
            && matches!(b[19].to_ascii_lowercase(), b'8' | b'9' | b'a' | b'b'))
}

/// `^(.+)\.checkpoint\.(<uuid v1–5>)\.jsonl$`, case-insensitive: the `(.+)`.
fn checkpoint_session_id(name: &str) -> Option<&str> {
    let lower = name.to_ascii_lowercase();
    let body = lower.strip_suffix(".jsonl")?;
    if body.len() < 36 + ".checkpoint.".len() + 1 {
        return None;
    }
    let (head, uuid) = body.split_at(body.len() - 36);
    let id_len = head.strip_suffix(".checkpoint.")?.len();
    (id_len > 0 && is_uuid(uuid, true)).then(|| &name[..id_len])
}

/// `<original>.<reason>.<ARCHIVE_TS>` with a valid timestamp (R1.13): each reason is tried in
/// the reference's order (`deleted`, `reset`, `bak`), its marker found at its *last*
/// occurrence and the rest of the name parsed as the timestamp; the first that parses wins.
/// Returns the original name (everything before the marker), the reason and the archive time
/// in epoch milliseconds.
pub fn parse_archive_name(name: &str) -> Option<(&str, ArchiveReason, i64)> {
    [
        ArchiveReason::Deleted,
        ArchiveReason::Reset,
        ArchiveReason::Bak,
    ]
    .into_iter()
    .find_map(|reason| {
        let marker = format!(".{}.", reason.as_str());
        let at = name.rfind(&marker)?;
        let ms = parse_archive_timestamp(&name[at + marker.len()..])?;
        Some((&name[..at], reason, ms))
    })
}

/// The archive timestamp of `epoch_ms` (R1.13): `toISOString()` with every `:` replaced by
/// `-`, e.g. `2026-06-12T09-00-00.000Z`.
/// `None` outside the years 0–9999 (where `toISOString` has no 4-digit year).
pub fn format_archive_timestamp(epoch_ms: i64) -> Option<String> {
    session_format::time::to_iso_string(epoch_ms).map(|iso| iso.replace(':', "-"))
}

/// Parses an archive timestamp (R1.13): `YYYY-MM-DDTHH-MM-SS`, an optional `.mmm` (exactly
/// three digits), then `Z`, read back through `Date.parse`. Epoch milliseconds, or `None`
/// when the text is not one.
pub fn parse_archive_timestamp(ts: &str) -> Option<i64> {
    let b = ts.as_bytes();
    let digit_at = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let shape = b.len() >= 20
        && [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
            .iter()
            .all(|&i| digit_at(i))
        && [(4, b'-'), (7, b'-'), (10, b'T'), (13, b'-'), (16, b'-')]
            .iter()
            .all(|&(i, c)| b[i] == c);
    if !shape {
        return None;
    }
    let rest = &ts[19..];
    let valid_rest = rest == "Z"
        || rest
            .strip_prefix('.')
            .and_then(|r| r.strip_suffix('Z'))
            .is_some_and(|f| f.len() == 3 && f.bytes().all(|c| c.is_ascii_digit()));
    if !valid_rest {
        return None;
    }
    // Back to the ISO form and through `Date.parse`, as the reference does (an impossible date
    // such as month 13 gives `NaN`, so no archive).
    let iso = format!(
        "{}T{}:{}:{}{rest}",
        &ts[..10],
        &ts[11..13],
        &ts[14..16],
        &ts[17..19]
    );
    session_format::time::parse_js_date_in(&iso, &chrono::Utc)
}

/// The largest transcript that can count as header-only (R4.17, `EMPTY_TRANSCRIPT_MAX_BYTES`).
pub const EMPTY_TRANSCRIPT_MAX_BYTES: u64 = 4096;

fn is_message_role(role: Option<&session_format::json::JsValue>) -> bool {
    role.and_then(|r| r.as_js_string()?.as_str())
        .is_some_and(|r| matches!(r, "user" | "assistant" | "tool" | "toolResult" | "system"))
}

/// `isTranscriptMessageRecord`: `type:"message"`, or no `type` and a message role in
/// `message.role` or `role`.
fn is_message_record(value: &session_format::json::JsValue) -> bool {
    let Some(obj) = value.as_object() else {
        return false;
    };
    match obj.get("type") {
        Some(t) => t.as_js_string().and_then(|s| s.as_str()) == Some("message"),
        None => {
            obj.get("message")
                .and_then(|m| m.as_object())
                .is_some_and(|m| is_message_role(m.get("role")))
                || is_message_role(obj.get("role"))
        }
    }
}

/// `transcriptHasNoMessageRecords` of the reference's cleanup (R4.17 (b), §9 case 32): `path`
/// (symlinks followed) is a regular file of at most [`EMPTY_TRANSCRIPT_MAX_BYTES`] whose
/// non-blank lines (read as UTF-8 text, lossily, and trimmed as JavaScript trims) all parse as
/// JSON and none is a message record. A file that cannot be read, is larger, or has an
/// unparsable line is not header-only.
pub fn transcript_has_no_messages(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    if !meta.is_file() || meta.len() > EMPTY_TRANSCRIPT_MAX_BYTES {
        return false;
    }
    let Ok(bytes) = session_store::io::read_file(path) else {
        return false;
    };
    bytes_have_no_messages(&bytes)
}

/// [`transcript_has_no_messages`] over a transcript's bytes (a session kept elsewhere than in
/// a file): at most [`EMPTY_TRANSCRIPT_MAX_BYTES`] bytes, and every non-blank line parses as
/// JSON and is not a message record.
pub fn bytes_have_no_messages(bytes: &[u8]) -> bool {
    if bytes.len() as u64 > EMPTY_TRANSCRIPT_MAX_BYTES {
        return false;
    }
    let text = String::from_utf8_lossy(bytes);
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if session_format::js::trim(line).is_empty() {
            continue;
        }
        match session_format::json::parse_value(line.as_bytes()) {
            Ok(v) if !is_message_record(&v) => {}
            _ => return false,
        }
    }
    true
}
