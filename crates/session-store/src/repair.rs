//! Repair of a session file before replay: OpenClaw 2026.6.11's `repairSessionFileIfNeeded`
//! (openclaw-jsonl.md §1.8, §7.5), with the workspace's byte rule and a kept backup.

mod image;
mod rules;

use std::collections::HashSet;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use session_format::json::{JsObject, JsValue};
use session_format::line::{trim_js_end, trim_js_start};

use crate::cache::{CachedRepair, RepairCache};
use crate::io as fileio;
use crate::io::read_exact_at;
use crate::paths;
use crate::storage::FileStorage;

#[cfg(any(test, feature = "test-util"))]
pub use rules::parsed_lines_on_this_thread;

/// Largest appended suffix an incremental pass reads.
pub(crate) const MAX_INCREMENTAL_REPAIR_BYTES: u64 = 8 * 1024 * 1024;
pub use crate::snapshot::RepairSnapshot;

const TRACE_TARGET: &str = "session_store::repair";

/// How [`repair_session_file_with`] treats its backup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RepairOptions {
    /// Keep the `<file>.bak-<pid>-<ms>` backup written before a rewrite and report it in
    /// [`RepairOutcome::backup_path`] (default). `false` does what the reference does: the
    /// backup is deleted once the replaced file has been read back and verified, and is reported
    /// only when that deletion fails (or when the verification does, in which case it is kept).
    /// The backup is the only copy of the dropped lines and of the content the repair rewrote.
    pub keep_backup: bool,
    /// Compute what a repair would do and write nothing: no backup, no rewrite (default
    /// `false`). A file that needs repair gets its counts (and
    /// [`RepairOutcome::inserted_tool_results`]) with `repaired: false` and no reason; see
    /// [`RepairOutcome::needs_repair`].
    pub dry_run: bool,
}

impl Default for RepairOptions {
    fn default() -> Self {
        Self {
            keep_backup: true,
            dry_run: false,
        }
    }
}

/// Why a repair did not rewrite the file (the reference's `reason` texts, see `Display`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RepairSkip {
    /// The path is blank, or nothing exists there: `missing session file`.
    MissingSessionFile,
    /// The file could not be read: `failed to read session file: <message>`.
    ReadFailed {
        /// What failed, in Node's wording where the error is one Node names the same way
        /// (`EACCES: permission denied, open '<path>'`, `EISDIR: illegal operation on a
        /// directory, read`, …), else the operating system's text.
        message: String,
    },
    /// No row survived the rules (blank, or nothing but dropped lines): `empty session file`.
    EmptySessionFile,
    /// The first surviving row is not `{type:"session", id: non-empty string}`: `invalid session
    /// header`. The file is left alone.
    InvalidSessionHeader,
    /// Writing the backup or replacing the file failed: `repair failed: <message>`. The file is
    /// unchanged.
    RepairFailed {
        /// The I/O error's text.
        message: String,
    },
    /// The path is a symlink to a file outside its store root (the directory holding the
    /// name, [`crate::identity`]): nothing was read for a rewrite, backed up or written, the
    /// target is untouched (also in a dry run). Not a reference reason (docs/DEVIATIONS.md
    /// D29): `repair refused: <link> links to <target>, outside the store root <root>; …`.
    OutsideStore(crate::identity::OutsideStore),
}

impl fmt::Display for RepairSkip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RepairSkip::MissingSessionFile => f.write_str("missing session file"),
            RepairSkip::ReadFailed { message } => {
                write!(f, "failed to read session file: {message}")
            }
            RepairSkip::EmptySessionFile => f.write_str("empty session file"),
            RepairSkip::InvalidSessionHeader => f.write_str("invalid session header"),
            RepairSkip::RepairFailed { message } => write!(f, "repair failed: {message}"),
            RepairSkip::OutsideStore(o) => write!(f, "repair refused: {o}"),
        }
    }
}

/// The level of a [`RepairMessage`] (the reference's `warn` / `debug` callbacks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RepairLevel {
    /// A skipped repair the operator should know about.
    Warn,
    /// What a repair did.
    Debug,
}

/// A text the reference passes to its `warn` or `debug` callback, in the same words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepairMessage {
    /// Which callback.
    pub level: RepairLevel,
    /// The text, e.g. `session file repaired: dropped 1 malformed line(s) (s.jsonl)`.
    pub text: String,
}

/// What a repair found and did (the reference's result object, field for field; see
/// [`RepairOutcome::to_reference_json`] for its exact shape).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RepairOutcome {
    /// The file was rewritten.
    pub repaired: bool,
    /// Lines dropped: unparseable, or `message` rows without an object message or a role. 0
    /// whenever nothing needed repair.
    pub dropped_lines: usize,
    /// Why nothing was rewritten, when that is not simply "nothing needed repair".
    pub reason: Option<RepairSkip>,
    /// The file's stat, when the file was read (or rewritten and read back) without changing in
    /// between: the caller may trust it for the next incremental call.
    pub validated_snapshot: Option<RepairSnapshot>,
    /// Failed assistant turns given the placeholder text.
    pub rewritten_assistant_messages: usize,
    /// Always 0: blank user turns are rewritten, never dropped (the field exists in the
    /// reference's result).
    pub dropped_blank_user_messages: usize,
    /// User turns whose blank text was replaced or removed.
    pub rewritten_user_messages: usize,
    /// Image blocks replaced by the fallback text.
    pub removed_corrupted_image_blocks: usize,
    /// Synthetic tool results inserted.
    pub inserted_tool_results: usize,
    /// The backup of the original bytes, when one exists after the call.
    pub backup_path: Option<PathBuf>,
    /// The warn/debug texts, in order.
    pub messages: Vec<RepairMessage>,
}

impl RepairOutcome {
    /// Whether the file needed a repair: it was rewritten, or a dry run found something to
    /// change (no skip reason, and a non-zero count).
    pub fn needs_repair(&self) -> bool {
        self.repaired
            || (self.reason.is_none()
                && self.dropped_lines
                    + self.rewritten_assistant_messages
                    + self.dropped_blank_user_messages
                    + self.rewritten_user_messages
                    + self.removed_corrupted_image_blocks
                    + self.inserted_tool_results
                    > 0)
    }

    fn clean(validated_snapshot: Option<RepairSnapshot>) -> Self {
        Self {
            validated_snapshot,
            ..Self::default()
        }
    }

    fn skipped(reason: RepairSkip, dropped_lines: usize) -> Self {
        Self {
            dropped_lines,
            reason: Some(reason),
            ..Self::default()
        }
    }

    fn counts(&mut self, counts: &rules::Counts) {
        self.dropped_lines = counts.dropped_lines;
        self.rewritten_assistant_messages = counts.rewritten_assistant_messages;
        self.dropped_blank_user_messages = counts.dropped_blank_user_messages;
        self.rewritten_user_messages = counts.rewritten_user_messages;
        self.removed_corrupted_image_blocks = counts.removed_corrupted_image_blocks;
    }

    fn warn(&mut self, text: String) {
        tracing::warn!(target: TRACE_TARGET, "{text}");
        self.messages.push(RepairMessage {
            level: RepairLevel::Warn,
            text,
        });
    }

    fn debug(&mut self, text: String) {
        tracing::debug!(target: TRACE_TARGET, "{text}");
        self.messages.push(RepairMessage {
            level: RepairLevel::Debug,
            text,
        });
    }

    /// The reference's result object with its field presence rules: `{repaired, droppedLines}`
    /// always; `reason` when set; `validatedSnapshot` when set (its bigint fields as decimal
    /// strings); the counters when the file was rewritten or the rewrite failed
    /// (`insertedToolResults` only when it was rewritten); `backupPath` when set.
    pub fn to_reference_json(&self) -> JsValue {
        let mut o = JsObject::new();
        o.insert("repaired", JsValue::Bool(self.repaired));
        o.insert("droppedLines", JsValue::Number(self.dropped_lines as f64));
        if let Some(s) = self.validated_snapshot {
            o.insert("validatedSnapshot", s.to_js_value());
        }
        let failed = matches!(self.reason, Some(RepairSkip::RepairFailed { .. }));
        if self.repaired || failed {
            for (key, n) in [
                (
                    "rewrittenAssistantMessages",
                    self.rewritten_assistant_messages,
                ),
                ("droppedBlankUserMessages", self.dropped_blank_user_messages),
                ("rewrittenUserMessages", self.rewritten_user_messages),
                (
                    "removedCorruptedImageBlocks",
                    self.removed_corrupted_image_blocks,
                ),
            ] {
                o.insert(key, JsValue::Number(n as f64));
            }
        }
        if self.repaired {
            o.insert(
                "insertedToolResults",
                JsValue::Number(self.inserted_tool_results as f64),
            );
        }
        if let Some(reason) = &self.reason {
            o.insert("reason", JsValue::from(reason.to_string()));
        }
        if let Some(p) = &self.backup_path {
            o.insert(
                "backupPath",
                JsValue::from(p.to_string_lossy().into_owned()),
            );
        }
        JsValue::Object(o)
    }
}

// ---------------------------------------------------------------------------------------------
// The incremental cache.

/// The incremental repair cache of the process-wide file store ([`FileStorage::shared`]).
fn repair_cache() -> &'static RepairCache {
    &FileStorage::process_wide().caches_ref().repair
}

fn cached(file: &Path) -> Option<CachedRepair> {
    repair_cache().get(file)
}

fn forget(file: &Path) {
    repair_cache().forget(file);
}

fn remember(file: &Path, state: CachedRepair) {
    repair_cache().remember(file, state);
}

/// Drops what the incremental cache remembers about `session_file` (trimmed of JavaScript
/// whitespace, resolved like `path.resolve`, then to its canonical file; a blank path does
/// nothing). Call it after any rewrite of the file or any append that was not verified.
pub fn invalidate_repair_cache(session_file: &Path) {
    repair_cache().invalidate(session_file);
}

impl RepairCache {
    /// [`invalidate_repair_cache`] in this repair cache (the one of a file store,
    /// [`FileStorage::repair_cache`]).
    pub fn invalidate(&self, session_file: &Path) {
        if let Some(input) = trimmed_input(session_file) {
            self.forget(&cache_key(&paths::resolve(&input)));
        }
    }
}

/// True when the incremental cache holds `session_file` (resolved as
/// [`invalidate_repair_cache`] resolves it: every name of one file has one entry). Feature
/// `test-util` (`test_util::repair_probes`).
#[cfg(any(test, feature = "test-util"))]
pub fn is_repair_cached(session_file: &Path) -> bool {
    trimmed_input(session_file)
        .is_some_and(|input| cached(&cache_key(&paths::resolve(&input))).is_some())
}

/// The incremental cache key of an absolute path: its canonical file
/// ([`crate::identity::FileIdentity`]), the path itself when it cannot be resolved (a symlink
/// loop, which the read then reports).
fn cache_key(abs: &Path) -> PathBuf {
    crate::identity::FileIdentity::resolve(abs).map_or_else(
        |_| abs.to_path_buf(),
        crate::identity::FileIdentity::into_canonical,
    )
}

// ---------------------------------------------------------------------------------------------
// The entry points.

/// Repairs `session_file` when it holds rows that would break a replay (the rules below),
/// keeping the backup. `trusted_snapshot` is the caller's own record of the file's stat (e.g. the
/// snapshot its last verified write produced); it enables the incremental path.
///
/// [`repair_session_file_if_needed`] reads the file, applies the reference's rules in order —
/// unparseable lines dropped; `message` rows without an object `message` or with a missing,
/// `null` or blank `role` dropped (#77228); an `error` assistant turn with empty content given
/// the placeholder text (a silent `stop` turn is kept); corrupted inline images replaced by a text
/// block (the `image` submodule); blank user text turned into `"(continue)"`; missing code-mode
/// and Responses `message`-tool results inserted — and rewrites the file only when something must
/// change.
/// Every other row (non-message rows, trailing assistants, rows of any other shape) is kept.
///
/// Invariants:
/// - rows the repair does not change keep their exact bytes (a CR before the LF included);
///   changed and inserted rows are serialised with `JSON.stringify` semantics; blank lines
///   disappear from a rewritten file, as in the reference;
/// - a rewrite first writes a byte-exact, mode-preserving backup `<file>.bak-<pid>-<ms>`, then
///   replaces the file atomically ([`crate::io::atomic_rewrite`], owner and mode kept), then
///   re-reads it to verify; the backup is kept and reported unless
///   [`RepairOptions::keep_backup`] is false (docs/DEVIATIONS.md D16); a
///   [`RepairOptions::dry_run`] reports the counts a rewrite would have and writes nothing;
/// - a repaired file needs no further repair, so a second call writes nothing and leaves no
///   second backup (no pile-up, reference issue #80960); a file that cannot be replaced (not
///   writable by this process, or in a directory where it cannot create files:
///   [`crate::io::check_replaceable`]) fails with `repair failed: …` before any backup is
///   written, and a rewrite that fails anyway removes its backup again when the file still holds
///   the original bytes, so failed attempts leave nothing behind either;
/// - every name of one file (a path through a symlinked directory, a symlink to the file) is
///   repaired as its canonical file ([`crate::identity::FileIdentity`]): one cache entry, the
///   backup next to the real file; a symlink to a file outside its own directory is refused
///   ([`RepairSkip::OutsideStore`]), nothing read for a rewrite, backed up or written;
/// - nothing is written for a missing, unreadable, empty or header-less file. A legacy
///   `sqlite:<agent>:<session>:<store>` marker is no special case: like the reference, the
///   repair resolves it as a relative path (normally: `missing session file`).
///
/// Incremental mode: a process-wide cache of at most 8 files (`MAX_CACHED_SESSION_REPAIRS`)
/// remembers, for each file last seen clean (keyed by its canonical file), its
/// [`RepairSnapshot`], the ids its tool results answer (at most 4096 ids and 512 KiB,
/// `MAX_CACHED_REPAIR_TOOL_RESULT_IDS` and `_ID_BYTES`, else nothing is cached) and whether it ended
/// in `\n`. A file whose stat equals the cached snapshot is clean without being read. A file that
/// grew on the same device and inode from a cached prefix ending in `\n`, when the caller passes a
/// trusted snapshot equal to the current stat, has only its appended suffix (at most
/// 8 MiB, `MAX_INCREMENTAL_REPAIR_BYTES`, ending in `\n`) parsed; any repair the suffix needs, or any
/// doubt, falls back to a full pass. The SessionManager drops a file's entry with
/// [`invalidate_repair_cache`] whenever it rewrites the file.
///
/// Warnings and debug texts are returned in [`RepairOutcome::messages`] and also emitted through
/// `tracing` (target `session_store::repair`). Callers hold the session write lock, as the
/// reference's callers do.
pub fn repair_session_file_if_needed(
    session_file: &Path,
    trusted_snapshot: Option<&RepairSnapshot>,
) -> RepairOutcome {
    repair_session_file_with(session_file, trusted_snapshot, &RepairOptions::default())
}

/// [`repair_session_file_if_needed`] with explicit [`RepairOptions`].
pub fn repair_session_file_with(
    session_file: &Path,
    trusted_snapshot: Option<&RepairSnapshot>,
    options: &RepairOptions,
) -> RepairOutcome {
    let Some(input) = trimmed_input(session_file) else {
        return RepairOutcome::skipped(RepairSkip::MissingSessionFile, 0);
    };
    // Every name of one file is repaired, cached and backed up as the canonical file; a
    // symlink that leads out of its directory is refused before anything is read.
    let file = match crate::identity::FileIdentity::resolve(&paths::resolve(&input)) {
        Ok(id) => {
            if let Err(o) = id.check_own_root() {
                let mut outcome = RepairOutcome::skipped(RepairSkip::OutsideStore(o), 0);
                outcome.warn(format!(
                    "session file repair skipped: {} ({})",
                    outcome
                        .reason
                        .as_ref()
                        .map(ToString::to_string)
                        .unwrap_or_default(),
                    basename(&paths::resolve(&input))
                ));
                return outcome;
            }
            id.into_canonical()
        }
        Err(_) => paths::resolve(&input),
    };
    let before = RepairSnapshot::of(&file).ok();
    match before {
        Some(current) => {
            if let Some(entry) = cached(&file)
                && let Some(outcome) = try_incremental(&file, &current, &entry, trusted_snapshot)
            {
                return outcome;
            }
        }
        None => forget(&file),
    }
    let bytes = match fileio::read_file(&file) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            forget(&file);
            return RepairOutcome::skipped(RepairSkip::MissingSessionFile, 0);
        }
        Err(e) => {
            forget(&file);
            let reason = RepairSkip::ReadFailed {
                message: read_error_message(&file, &e),
            };
            let mut outcome = RepairOutcome::skipped(reason.clone(), 0);
            outcome.warn(format!(
                "session file repair skipped: {reason} ({})",
                basename(&file)
            ));
            return outcome;
        }
    };
    full_pass(&file, &bytes, before, options)
}

fn full_pass(
    file: &Path,
    bytes: &[u8],
    before: Option<RepairSnapshot>,
    options: &RepairOptions,
) -> RepairOutcome {
    let mut scan = rules::scan(bytes);
    let counts = scan.counts;
    let Some(first) = scan.kept.first() else {
        forget(file);
        return RepairOutcome::skipped(RepairSkip::EmptySessionFile, counts.dropped_lines);
    };
    if !first.info.is_header {
        forget(file);
        let mut outcome =
            RepairOutcome::skipped(RepairSkip::InvalidSessionHeader, counts.dropped_lines);
        outcome.warn(format!(
            "session file repair skipped: invalid session header ({})",
            basename(file)
        ));
        return outcome;
    }
    let insertion = rules::insert_missing_tool_results(&mut scan.kept, &HashSet::new());
    if !counts.any() && insertion.inserted == 0 {
        let after = RepairSnapshot::of(file).ok();
        let validated = match (before, after) {
            (Some(b), Some(a)) if a == b => Some(a),
            _ => None,
        };
        match validated {
            Some(snapshot) => remember(
                file,
                CachedRepair {
                    snapshot,
                    tool_result_ids: insertion.result_ids,
                    ends_with_newline: bytes.ends_with(b"\n"),
                    pending_responses_tail: insertion.pending_responses_tail,
                },
            ),
            None => forget(file),
        }
        return RepairOutcome::clean(validated);
    }

    let mut outcome = RepairOutcome::default();
    outcome.counts(&counts);
    if options.dry_run {
        forget(file);
        outcome.inserted_tool_results = insertion.inserted;
        return outcome;
    }
    let mut cleaned = Vec::with_capacity(bytes.len() + 64);
    for row in &scan.kept {
        cleaned.extend_from_slice(&row.bytes);
        cleaned.push(b'\n');
    }

    // A file that cannot be replaced (read-only, or in a directory where no temporary file can
    // be created) fails here, before the backup is written: a backup per attempt of a repair
    // that can never succeed would pile up.
    let backup = match fileio::check_replaceable(file).and_then(|()| write_backup(file, bytes)) {
        Ok(path) => path,
        Err(e) => {
            forget(file);
            outcome.reason = Some(RepairSkip::RepairFailed {
                message: e.to_string(),
            });
            return outcome;
        }
    };
    if let Err(e) = fileio::atomic_rewrite(file, &cleaned) {
        forget(file);
        outcome.reason = Some(RepairSkip::RepairFailed {
            message: e.to_string(),
        });
        // The rewrite failed: when the file still holds exactly the original bytes the backup
        // is a redundant copy and goes; otherwise (e.g. the rename happened but the directory
        // fsync failed) it is kept and reported.
        let unchanged = fileio::read_file(file).is_ok_and(|now| now == bytes);
        if !unchanged || fileio::remove_file(&backup).is_err() {
            outcome.backup_path = Some(backup);
        }
        return outcome;
    }
    let verified = verify(file, &cleaned);
    outcome.repaired = true;
    outcome.inserted_tool_results = insertion.inserted;
    outcome.validated_snapshot = verified;
    outcome.backup_path = Some(backup.clone());
    if !options.keep_backup && verified.is_some() {
        match fileio::remove_file(&backup) {
            Ok(()) => outcome.backup_path = None,
            Err(e) => outcome.debug(format!(
                "session file repair backup cleanup failed: {e} ({})",
                basename(&backup)
            )),
        }
    }
    match verified {
        Some(snapshot) => remember(
            file,
            CachedRepair {
                snapshot,
                tool_result_ids: insertion.result_ids,
                ends_with_newline: true,
                pending_responses_tail: insertion.pending_responses_tail,
            },
        ),
        None => forget(file),
    }
    let summary = summary(&counts, insertion.inserted);
    outcome.debug(format!(
        "session file repaired: {summary} ({})",
        basename(file)
    ));
    outcome
}

/// The incremental path, or `None` for a full pass.
fn try_incremental(
    file: &Path,
    current: &RepairSnapshot,
    entry: &CachedRepair,
    trusted: Option<&RepairSnapshot>,
) -> Option<RepairOutcome> {
    if entry.snapshot == *current {
        return Some(RepairOutcome::clean(Some(*current)));
    }
    if trusted != Some(current)
        || !entry.ends_with_newline
        || !entry.snapshot.same_file(current)
        || current.size <= entry.snapshot.size
    {
        return None;
    }
    let suffix = read_suffix(
        file,
        entry.snapshot.size,
        current.size - entry.snapshot.size,
    )?;
    if !suffix.ends_with(b"\n") {
        return None;
    }
    let after = RepairSnapshot::of(file).ok()?;
    if after != *current {
        return None;
    }
    let mut scan = rules::scan(&suffix);
    if scan.counts.any() {
        return None;
    }
    // A Responses assistant ending the cached prefix whose delivery mirror arrives now needs a
    // result the suffix alone cannot show (the reference misses it here; D16).
    if entry.pending_responses_tail
        && scan
            .kept
            .iter()
            .find(|k| k.info.is_message)
            .is_some_and(|k| k.info.mirror)
    {
        return None;
    }
    let insertion = rules::insert_missing_tool_results(&mut scan.kept, &entry.tool_result_ids);
    if insertion.inserted > 0 {
        return None;
    }
    let suffix_has_message = scan.kept.iter().any(|k| k.info.is_message);
    remember(
        file,
        CachedRepair {
            snapshot: after,
            tool_result_ids: insertion.result_ids,
            ends_with_newline: true,
            pending_responses_tail: if suffix_has_message {
                insertion.pending_responses_tail
            } else {
                entry.pending_responses_tail
            },
        },
    );
    Some(RepairOutcome::clean(Some(after)))
}

/// Exactly `len` bytes of `file` from `offset`, or `None` (too long, shorter, unreadable).
fn read_suffix(file: &Path, offset: u64, len: u64) -> Option<Vec<u8>> {
    if len > MAX_INCREMENTAL_REPAIR_BYTES {
        return None;
    }
    let f = fileio::open_regular(file).ok()?;
    let mut buf = vec![0u8; usize::try_from(len).ok()?];
    read_exact_at(&f, &mut buf, offset).ok()?;
    Some(buf)
}

/// Re-reads the replaced file: its snapshot when the bytes are `expected` and the stat did not
/// move during the read.
fn verify(file: &Path, expected: &[u8]) -> Option<RepairSnapshot> {
    let before = RepairSnapshot::of(file).ok()?;
    let bytes = fileio::read_file(file).ok()?;
    let after = RepairSnapshot::of(file).ok()?;
    (bytes == expected && before == after).then_some(after)
}

/// Writes `<file>.bak-<pid>-<ms>` (the next free millisecond when that name exists).
fn write_backup(file: &Path, original: &[u8]) -> io::Result<PathBuf> {
    let pid = std::process::id();
    let ms = session_format::ids::now_ms();
    let mut last = None;
    for bump in 0..1000 {
        let mut name = file.as_os_str().to_owned();
        name.push(format!(".bak-{pid}-{}", ms + bump));
        let path = PathBuf::from(name);
        match fileio::backup_copy(file, &path, original) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free backup name")))
}

/// `buildRepairSummaryParts`.
fn summary(c: &rules::Counts, inserted: usize) -> String {
    let parts: Vec<String> = [
        (c.dropped_lines, "dropped", "malformed line(s)"),
        (
            c.rewritten_assistant_messages,
            "rewrote",
            "assistant message(s)",
        ),
        (
            c.dropped_blank_user_messages,
            "dropped",
            "blank user message(s)",
        ),
        (c.rewritten_user_messages, "rewrote", "user message(s)"),
        (
            c.removed_corrupted_image_blocks,
            "removed",
            "corrupted image block(s)",
        ),
        (inserted, "inserted", "missing tool result(s)"),
    ]
    .into_iter()
    .filter(|(n, _, _)| *n > 0)
    .map(|(n, verb, what)| format!("{verb} {n} {what}"))
    .collect();
    if parts.is_empty() {
        "no changes".to_owned()
    } else {
        parts.join(", ")
    }
}

/// The path trimmed of JavaScript whitespace (when it is text), or `None` when blank.
fn trimmed_input(path: &Path) -> Option<PathBuf> {
    match path.to_str() {
        Some(text) => {
            let t = trim_js_end(trim_js_start(text.as_bytes()));
            let t = std::str::from_utf8(t).ok()?;
            (!t.is_empty()).then(|| PathBuf::from(t))
        }
        None => (!path.as_os_str().is_empty()).then(|| path.to_path_buf()),
    }
}

fn basename(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A read error in Node's words where Node's `readFile` would report the same condition.
fn read_error_message(file: &Path, e: &io::Error) -> String {
    if fs::metadata(file).is_ok_and(|m| m.is_dir()) {
        return "EISDIR: illegal operation on a directory, read".to_owned();
    }
    let node = match e.raw_os_error() {
        Some(1) => Some(("EPERM", "operation not permitted")),
        Some(13) => Some(("EACCES", "permission denied")),
        Some(20) => Some(("ENOTDIR", "not a directory")),
        Some(36) => Some(("ENAMETOOLONG", "name too long")),
        Some(40) => Some(("ELOOP", "too many symbolic links encountered")),
        _ => None,
    };
    match node {
        Some((code, text)) if cfg!(target_os = "linux") => {
            format!("{code}: {text}, open '{}'", file.display())
        }
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_texts() {
        let mut c = rules::Counts::default();
        assert_eq!(summary(&c, 0), "no changes");
        c.dropped_lines = 2;
        c.rewritten_assistant_messages = 1;
        assert_eq!(
            summary(&c, 3),
            "dropped 2 malformed line(s), rewrote 1 assistant message(s), inserted 3 missing tool result(s)"
        );
    }

    #[test]
    fn trimmed_paths() {
        assert_eq!(trimmed_input(Path::new(" \u{a0}\t")), None);
        assert_eq!(
            trimmed_input(Path::new(" /a/b.jsonl\n")),
            Some(PathBuf::from("/a/b.jsonl"))
        );
    }
}
