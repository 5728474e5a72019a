//! The maintenance planner: which rows and files the reference's `sessions cleanup` preview
//! selects, in its order (R4.14): with `--fix-missing` the rows whose transcript is missing or
//! header-only (R4.17), the stale prune (R4.4–R4.5), the cap (R4.6, always applied here), the
//! disk budget (R4.10–R4.11) and the unreferenced-artifact sweep (R4.12); plus archive
//! retention (R4.9), which the reference runs on the applied save only. Pure: the store, a
//! [`DirScan`], the settings and "now" in, a [`MaintenancePlan`] out.
//!
//! Not done here: skill prompt blobs (counted in `scannedFiles`, never selected), channel
//! plugins' thread grammars and registered preserve-key providers (R4.5; the generic
//! `:thread:` suffix and the Telegram topic rule are applied), `--fix-dm-scope` (R4.18).

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

use indexmap::IndexMap;
use session_format::json::{JsObject, JsValue};

use super::super::{ArchiveReason, ArtifactKind, SessionStore, StoreEntry, classify};
use super::super::{to_pretty_json, transcript_path};
use super::scan::{DirScan, PathProbe, ScannedFile};
use super::{MaintenanceConfig, MaintenanceMode};
use crate::key::{is_acp_key, is_cron_key, is_subagent_key, parse_agent_session_key};

/// How old a store temp file must be before maintenance removes it (5 minutes).
const STORE_TEMP_STALE_MS: f64 = 300_000.0;

/// What the caller adds to the settings: the clock, the active key and the flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlanOptions<'a> {
    /// Now, in epoch milliseconds.
    pub now_ms: i64,
    /// `--active-key`: never pruned, capped or budget-evicted.
    pub active_key: Option<&'a str>,
    /// `--fix-missing` (R4.17).
    pub fix_missing: bool,
}

/// Why a row is removed; the first step that removes a row names it (R4.15's labels).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RemovalReason {
    /// `prune-missing`: no transcript, or a header-only one (R4.17).
    Missing,
    /// `prune-stale`: `updatedAt` older than `pruneAfter` (R4.4).
    Stale,
    /// `cap-overflow`: beyond `maxEntries` (R4.6).
    Capped,
    /// `evict-budget`: evicted by the disk budget (R4.11.3).
    Budget,
}

impl RemovalReason {
    /// The reference's action label (R4.15).
    pub fn label(self) -> &'static str {
        match self {
            RemovalReason::Missing => "prune-missing",
            RemovalReason::Stale => "prune-stale",
            RemovalReason::Capped => "cap-overflow",
            RemovalReason::Budget => "evict-budget",
        }
    }
}

/// A row the plan removes.
#[derive(Clone, Debug, PartialEq)]
pub struct RemovedRow {
    /// The store key.
    pub key: String,
    /// Why.
    pub reason: RemovalReason,
    /// Its `sessionId`, if any.
    pub session_id: Option<String>,
    /// Another remaining row with the same `sessionId`, when there is one: the transcript is
    /// then left alone (R4.8, R6.4).
    pub shared_with: Option<String>,
}

/// Why a file is in the plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileReason {
    /// The transcript or a trajectory sidecar of a removed row (R3.12, R4.11.3).
    RemovedRow {
        /// The row's key.
        key: String,
    },
    /// An unreferenced transcript, checkpoint or trajectory file, or a stale store temp
    /// (R4.12).
    Unreferenced,
    /// Removed by the disk budget's file queue (R4.11.2).
    DiskBudget,
    /// A `.reset.`/`.deleted.` archive past its retention (R4.9).
    ArchiveRetention,
}

impl FileReason {
    /// A short label: `removed-row`, `unreferenced`, `disk-budget`, `archive-retention`.
    pub fn label(&self) -> &'static str {
        match self {
            FileReason::RemovedRow { .. } => "removed-row",
            FileReason::Unreferenced => "unreferenced",
            FileReason::DiskBudget => "disk-budget",
            FileReason::ArchiveRetention => "archive-retention",
        }
    }
}

/// What applying the plan does to a file (docs/DEVIATIONS.md D38).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlannedRename {
    /// Renamed in place to this name (`<name>.deleted.<ARCHIVE_TS>`), where the reference
    /// renames it so (a removed row's transcript) or deletes it.
    Rename(String),
    /// Left as it is: an archive the reference deletes (retention or budget); kept.
    Keep,
    /// Left as it is, never locked, renamed or deleted: a removed row's transcript outside
    /// the store's sessions directory (compared as canonical paths; the reason says so).
    LeaveAlone(String),
}

/// The reason a removed row's transcript outside the store is left alone.
pub const OUTSIDE_STORE: &str = "outside the store's directory";

/// A file of the plan.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedFile {
    /// The file's path (inside the sessions directory).
    pub path: PathBuf,
    /// Its size and mtime at the scan (`None` when it is not a top-level file of the scan).
    pub size: Option<u64>,
    /// Its mtime in epoch milliseconds at the scan.
    pub mtime_ms: Option<f64>,
    /// Why it is in the plan.
    pub reason: FileReason,
    /// What applying does.
    pub action: PlannedRename,
}

/// `unreferencedArtifacts` of the summary (R4.12).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SweepSummary {
    /// Top-level files (`sessions.json` included) plus blob files.
    pub scanned_files: usize,
    /// Files the sweep selects.
    pub removed_files: usize,
    /// Their bytes.
    pub freed_bytes: u64,
    /// `pruneAfter` in milliseconds (0 when not positive).
    pub older_than_ms: u64,
}

/// `diskBudget` of the summary (R4.11).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiskBudgetSummary {
    /// The measured total before.
    pub total_bytes_before: u64,
    /// The projected total after.
    pub total_bytes_after: u64,
    /// Files selected.
    pub removed_files: usize,
    /// Rows evicted.
    pub removed_entries: usize,
    /// Bytes of the files selected.
    pub freed_bytes: u64,
    /// `maxDiskBytes`.
    pub max_bytes: u64,
    /// `highWaterBytes`.
    pub high_water_bytes: u64,
    /// Whether the total was above `maxDiskBytes`.
    pub over_budget: bool,
}

/// What maintenance would do to one store: the counts of the reference's summary (R4.15) and
/// the rows and files behind them, in the order they are selected.
#[derive(Clone, Debug, PartialEq)]
pub struct MaintenancePlan {
    /// The mode the settings give.
    pub mode: MaintenanceMode,
    /// Rows before.
    pub before_count: usize,
    /// Rows after.
    pub after_count: usize,
    /// Rows removed as missing.
    pub missing: usize,
    /// Rows removed as stale.
    pub pruned: usize,
    /// Rows removed by the cap.
    pub capped: usize,
    /// The unreferenced sweep's summary.
    pub unreferenced: SweepSummary,
    /// The disk budget's summary, `None` without `maxDiskBytes`.
    pub disk_budget: Option<DiskBudgetSummary>,
    /// The removed rows, in order: missing, stale (store order), capped (oldest last kept
    /// first), budget-evicted (oldest first).
    pub removed_rows: Vec<RemovedRow>,
    /// The files, in order: the removed rows' transcripts and sidecars, then the disk budget's
    /// files (oldest mtime first), the sweep's (oldest mtime first), and the archives past
    /// retention.
    pub files: Vec<PlannedFile>,
    /// The reference's `wouldMutate`.
    pub would_mutate: bool,
}

impl MaintenancePlan {
    /// The keys of the rows that remain, in store order.
    pub fn remaining_keys<'s>(&self, store: &'s SessionStore) -> Vec<&'s str> {
        let removed: HashSet<&str> = self.removed_rows.iter().map(|r| r.key.as_str()).collect();
        store
            .entries()
            .filter_map(|(k, _)| k.as_str())
            .filter(|k| !removed.contains(k))
            .collect()
    }
}

/// `resolveSessionEntryMaintenanceHighWater` (R4.2): 1 for `max ≤ 0`, `max + 1` up to 49,
/// else `max + max(25, ceil(max / 10))`.
pub fn entry_high_water(max_entries: i64) -> i64 {
    if max_entries <= 0 {
        1
    } else if max_entries <= 49 {
        max_entries + 1
    } else {
        max_entries + 25.max((max_entries as f64 * 0.1).ceil() as i64)
    }
}

/// The lowercased rest of an agent key, else the lowercased key.
fn lower_rest(key: &str) -> String {
    parse_agent_session_key(key)
        .map_or_else(|| key.to_owned(), |(_, rest)| rest)
        .to_lowercase()
}

/// `isSyntheticSessionMaintenanceKey` (R4.5).
fn is_synthetic(key: &str) -> bool {
    let rest = lower_rest(key);
    is_subagent_key(key)
        || is_acp_key(key)
        || is_cron_key(key)
        || rest.starts_with("acp-bridge:")
        || rest.starts_with("hook:")
        || rest.starts_with("node:")
        || rest == "heartbeat"
        || rest.ends_with(":heartbeat")
        || rest.contains(":heartbeat:")
}

/// `^telegram:(group|channel|direct|dm):.+:topic:[^:]+$` on the lowercased rest.
fn is_telegram_topic(rest: &str) -> bool {
    let Some(tail) = rest.strip_prefix("telegram:") else {
        return false;
    };
    let Some((kind, after)) = tail.split_once(':') else {
        return false;
    };
    if !matches!(kind, "group" | "channel" | "direct" | "dm") {
        return false;
    }
    match after.rfind(":topic:") {
        Some(i) if i > 0 => {
            let topic = &after[i + 7..];
            !topic.is_empty() && !topic.contains(':')
        }
        _ => false,
    }
}

/// `^[^:]+:(group|channel):.+$` on the lowercased rest.
fn is_external_group(rest: &str) -> bool {
    let Some((channel, after)) = rest.split_once(':') else {
        return false;
    };
    !channel.is_empty()
        && ["group:", "channel:"]
            .iter()
            .any(|p| after.strip_prefix(p).is_some_and(|r| !r.is_empty()))
}

fn chat_type(entry: &StoreEntry) -> Option<String> {
    let f = entry.fields();
    let direct = f.get("chatType").filter(|v| !v.is_null());
    let value = direct.or_else(|| f.get("origin")?.as_object()?.get("chatType"))?;
    let text = value.as_js_string()?.to_str_lossy();
    Some(session_format::js::trim(&text).to_lowercase())
}

/// `isProtectedSessionMaintenanceEntry` (R4.5): not synthetic, and a thread key, a Telegram
/// topic key, a `<channel>:(group|channel):…` key or a group/channel/thread `chatType`.
fn is_protected(key: &str, entry: &StoreEntry) -> bool {
    if is_synthetic(key) {
        return false;
    }
    if crate::key::parse_thread_suffix(key).thread_id.is_some() {
        return true;
    }
    let rest = lower_rest(key);
    if is_telegram_topic(&rest) || is_external_group(&rest) {
        return true;
    }
    matches!(
        chat_type(entry).as_deref(),
        Some("group" | "channel" | "thread")
    )
}

/// Whether maintenance never prunes, caps or budget-evicts the row under `key` (R4.5): it is
/// the active key (exactly), or protected.
pub fn is_preserved(key: &str, entry: &StoreEntry, active_key: Option<&str>) -> bool {
    active_key == Some(key) || is_protected(key, entry)
}

/// `path` lexically inside `dir` (not `dir` itself, no `..` out of it).
fn inside(dir: &Path, path: &Path) -> Option<PathBuf> {
    let rel = path.strip_prefix(dir).ok()?;
    let mut depth = 0usize;
    for c in rel.components() {
        match c {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir if depth > 0 => depth -= 1,
            _ => return None,
        }
    }
    (depth > 0).then(|| path.to_path_buf())
}

/// `<transcript minus .jsonl><suffix>`.
fn sidecar(transcript: &Path, suffix: &str) -> PathBuf {
    let text = transcript.as_os_str().to_string_lossy();
    let stem = text.strip_suffix(".jsonl").unwrap_or(&text);
    PathBuf::from(format!("{stem}{suffix}"))
}

/// The transcript of a row resolved inside the directory (`resolveSessionTranscriptPathForEntry`).
fn entry_transcript(dir: &Path, entry: &StoreEntry) -> Option<PathBuf> {
    let id = entry.session_id().filter(|s| !s.is_empty())?;
    inside(dir, &transcript_path(dir, id, entry)?)
}

/// A row's artifact paths inside `dir` (`resolveSessionArtifactPathsForEntry`): its
/// transcript, then the trajectory pointer and the trajectory capture; empty when the
/// transcript does not resolve inside the directory.
pub(super) fn entry_artifact_paths(dir: &Path, entry: &StoreEntry) -> Vec<PathBuf> {
    match entry_transcript(dir, entry) {
        Some(t) => {
            let pointer = sidecar(&t, ".trajectory-path.json");
            let capture = sidecar(&t, ".trajectory.jsonl");
            vec![t, pointer, capture]
        }
        None => Vec::new(),
    }
}

/// The paths the remaining rows reference (`resolveReferencedSessionArtifactPaths`): each
/// row's artifact paths and its compaction checkpoints' `sessionFile`s inside the directory.
fn referenced_paths<'a>(
    dir: &Path,
    rows: impl Iterator<Item = &'a StoreEntry>,
) -> HashSet<PathBuf> {
    let mut out = HashSet::new();
    for entry in rows {
        out.extend(entry_artifact_paths(dir, entry));
        let checkpoints = entry
            .fields()
            .get("compactionCheckpoints")
            .and_then(JsValue::as_array);
        for cp in checkpoints.into_iter().flatten() {
            for side in ["preCompaction", "postCompaction"] {
                let file = cp
                    .get(side)
                    .and_then(|s| s.get("sessionFile"))
                    .and_then(|f| f.as_js_string()?.as_str().map(str::to_owned));
                let Some(file) = file.map(|f| session_format::js::trim(&f).to_owned()) else {
                    continue;
                };
                if file.is_empty() {
                    continue;
                }
                let p = Path::new(&file);
                let p = if p.is_absolute() {
                    p.to_path_buf()
                } else {
                    // `path.resolve` against the working directory.
                    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
                };
                if let Some(p) = inside(dir, &p) {
                    out.insert(p);
                }
            }
        }
    }
    out
}

/// `isUnreferencedSessionArtifactFile`: a checkpoint, trajectory or primary transcript that no
/// row references.
fn is_unreferenced(kind: &ArtifactKind, path: &Path, referenced: &HashSet<PathBuf>) -> bool {
    matches!(
        kind,
        ArtifactKind::Checkpoint { .. }
            | ArtifactKind::Trajectory { .. }
            | ArtifactKind::Primary { .. }
    ) && !referenced.contains(path)
}

fn updated_or(entry: &StoreEntry, missing: f64) -> f64 {
    entry
        .updated_at()
        .filter(|u| u.is_finite())
        .unwrap_or(missing)
}

/// The serialised size of the store of these rows (`JSON.stringify(store, null, 2)`).
fn store_bytes(rows: &IndexMap<String, &StoreEntry>) -> u64 {
    let mut top = JsObject::new();
    for (k, e) in rows {
        top.insert(k.as_str(), JsValue::Object(e.fields().clone()));
    }
    to_pretty_json(&JsValue::Object(top)).len() as u64
}

/// The byte length of one row's chunk in the pretty store (`measureStoreEntryChunkBytes`).
fn chunk_bytes(key: &str, entry: &StoreEntry) -> u64 {
    let mut top = JsObject::new();
    top.insert(key, JsValue::Object(entry.fields().clone()));
    (to_pretty_json(&JsValue::Object(top)).len() as u64).saturating_sub(4)
}

/// Files selected by the dry-run removal helpers: a path counts once, and only with a
/// positive size in the scan (`removeFileForBudget` with `dryRun`).
struct Simulated<'a> {
    sizes: &'a HashMap<PathBuf, u64>,
    removed: HashSet<PathBuf>,
}

impl Simulated<'_> {
    fn remove(&mut self, path: &Path) -> u64 {
        if self.removed.contains(path) {
            return 0;
        }
        let size = self.sizes.get(path).copied().unwrap_or(0);
        if size == 0 {
            return 0;
        }
        self.removed.insert(path.to_path_buf());
        size
    }
}

/// Sorted by mtime, oldest first (stable: name order among equals).
fn by_mtime(mut v: Vec<(PathBuf, &ScannedFile)>) -> Vec<(PathBuf, &ScannedFile)> {
    v.sort_by(|a, b| a.1.mtime_ms.total_cmp(&b.1.mtime_ms));
    v
}

/// Plans maintenance of `store` (openclaw-store.md R4.14): see the module docs for the steps
/// and their order. `scan` must be the scan of the store's directory ([`DirScan::read`]).
pub fn plan_maintenance(
    store: &SessionStore,
    scan: &DirScan,
    config: &MaintenanceConfig,
    opts: &PlanOptions<'_>,
) -> MaintenancePlan {
    let dir = store.sessions_dir();
    let now = opts.now_ms as f64;
    let mut rows: IndexMap<String, &StoreEntry> = store
        .entries()
        .map(|(k, e)| (k.to_str_lossy().into_owned(), e))
        .collect();
    let before_count = rows.len();
    let mut removed_rows: Vec<RemovedRow> = Vec::new();
    fn remove(
        rows: &mut IndexMap<String, &StoreEntry>,
        removed_rows: &mut Vec<RemovedRow>,
        key: &str,
        reason: RemovalReason,
    ) {
        if let Some(entry) = rows.shift_remove(key) {
            removed_rows.push(RemovedRow {
                key: key.to_owned(),
                reason,
                session_id: entry.session_id().map(str::to_owned),
                shared_with: None,
            });
        }
    }

    // 1. --fix-missing (R4.17).
    let mut missing = 0;
    if opts.fix_missing {
        let keys: Vec<String> = rows.keys().cloned().collect();
        for key in keys {
            let entry = rows[&key];
            let gone = match entry.session_id().filter(|s| !s.is_empty()) {
                None => parse_agent_session_key(&key).is_none(),
                Some(id) => match transcript_path(dir, id, entry) {
                    None => true,
                    Some(t) => {
                        let probe = scan
                            .probes
                            .get(&t)
                            .copied()
                            .unwrap_or_else(|| super::scan::probe(&t));
                        probe != PathProbe::Present
                    }
                },
            };
            if gone {
                remove(&mut rows, &mut removed_rows, &key, RemovalReason::Missing);
                missing += 1;
            }
        }
    }

    // 2. Stale prune (R4.4).
    let cutoff = now - config.prune_after_ms as f64;
    let keys: Vec<String> = rows.keys().cloned().collect();
    let mut pruned = 0;
    for key in keys {
        let entry = rows[&key];
        if is_preserved(&key, entry, opts.active_key) {
            continue;
        }
        if entry.updated_at().is_some_and(|u| u < cutoff) {
            remove(&mut rows, &mut removed_rows, &key, RemovalReason::Stale);
            pruned += 1;
        }
    }

    // 3. Cap, always applied in the preview (R4.6).
    let preserved = rows
        .iter()
        .filter(|(k, e)| is_preserved(k, e, opts.active_key))
        .count() as i64;
    let max_removable = (config.max_entries - preserved).max(0) as usize;
    let mut candidates: Vec<String> = rows
        .iter()
        .filter(|(k, e)| !is_preserved(k, e, opts.active_key))
        .map(|(k, _)| k.clone())
        .collect();
    let mut capped = 0;
    if candidates.len() > max_removable {
        candidates.sort_by(|a, b| {
            let (ua, ub) = (
                updated_or(rows[a], f64::NEG_INFINITY),
                updated_or(rows[b], f64::NEG_INFINITY),
            );
            ub.total_cmp(&ua)
        });
        for key in &candidates[max_removable..] {
            remove(&mut rows, &mut removed_rows, key, RemovalReason::Capped);
            capped += 1;
        }
    }

    // The stale and capped rows' artifacts (from the store before): the sweep leaves them.
    let mut excluded: HashSet<PathBuf> = HashSet::new();
    for r in &removed_rows {
        if matches!(r.reason, RemovalReason::Stale | RemovalReason::Capped)
            && let Some(e) = store.get(&r.key)
        {
            excluded.extend(entry_artifact_paths(dir, e));
        }
    }

    let paths: Vec<(PathBuf, &ScannedFile)> =
        scan.files.iter().map(|f| (dir.join(&f.name), f)).collect();
    let sizes: HashMap<PathBuf, u64> = paths.iter().map(|(p, f)| (p.clone(), f.size)).collect();
    let mut budget_files: Vec<PathBuf> = Vec::new();
    let mut budget_row_files: Vec<(String, PathBuf)> = Vec::new();

    // 4. Disk budget (R4.10–R4.11), dry run.
    let disk_budget = match (config.max_disk_bytes, config.high_water_bytes) {
        (Some(max), Some(high_water)) => {
            let store_size = scan
                .files
                .iter()
                .find(|f| f.name == super::super::STORE_FILE_NAME)
                .map_or(0, |f| f.size);
            let mut projected = store_bytes(&rows);
            let all: u64 = scan.files.iter().map(|f| f.size).sum();
            let mut total = (all - store_size + projected) as f64;
            let before = total;
            let mut summary = DiskBudgetSummary {
                total_bytes_before: before as u64,
                total_bytes_after: total as u64,
                removed_files: 0,
                removed_entries: 0,
                freed_bytes: 0,
                max_bytes: max,
                high_water_bytes: high_water,
                over_budget: false,
            };
            if total > max as f64 {
                summary.over_budget = true;
                let hw = high_water as f64;
                let referenced = referenced_paths(dir, rows.values().copied());
                let mut sim = Simulated {
                    sizes: &sizes,
                    removed: HashSet::new(),
                };
                let queue = by_mtime(
                    paths
                        .iter()
                        .filter(|(p, f)| {
                            let kind = classify(&f.name);
                            if kind == ArtifactKind::StoreTemp {
                                return f.mtime_ms <= now - STORE_TEMP_STALE_MS;
                            }
                            kind.is_archive() || is_unreferenced(&kind, p, &referenced)
                        })
                        .cloned()
                        .collect(),
                );
                for (p, _) in queue {
                    if total <= hw {
                        break;
                    }
                    let n = sim.remove(&p);
                    if n == 0 {
                        continue;
                    }
                    total -= n as f64;
                    summary.freed_bytes += n;
                    summary.removed_files += 1;
                    budget_files.push(p);
                }
                if total > hw {
                    let active = opts.active_key.map(str::to_lowercase);
                    let mut refs: HashMap<String, usize> = HashMap::new();
                    for e in rows.values() {
                        if let Some(id) = e.session_id().filter(|s| !s.is_empty()) {
                            *refs.entry(id.to_owned()).or_default() += 1;
                        }
                    }
                    let mut keys: Vec<String> = rows.keys().cloned().collect();
                    keys.sort_by(|a, b| {
                        updated_or(rows[a], 0.0).total_cmp(&updated_or(rows[b], 0.0))
                    });
                    for key in keys {
                        if total <= hw {
                            break;
                        }
                        if active.as_deref() == Some(key.to_lowercase().as_str()) {
                            continue;
                        }
                        let entry = rows[&key];
                        if is_preserved(&key, entry, opts.active_key) {
                            continue;
                        }
                        let previous = projected;
                        let chunk = chunk_bytes(&key, entry);
                        remove(&mut rows, &mut removed_rows, &key, RemovalReason::Budget);
                        projected = previous.saturating_sub(chunk + 2).max(2);
                        total += projected as f64 - previous as f64;
                        summary.removed_entries += 1;
                        let Some(id) = entry.session_id().filter(|s| !s.is_empty()) else {
                            continue;
                        };
                        let left = refs.get(id).copied().unwrap_or(1).saturating_sub(1);
                        if left > 0 {
                            refs.insert(id.to_owned(), left);
                            continue;
                        }
                        refs.remove(id);
                        for p in entry_artifact_paths(dir, entry) {
                            let n = sim.remove(&p);
                            if n == 0 {
                                continue;
                            }
                            total -= n as f64;
                            summary.freed_bytes += n;
                            summary.removed_files += 1;
                            budget_row_files.push((key.clone(), p));
                        }
                    }
                }
                excluded.extend(sim.removed);
            }
            summary.total_bytes_after = total.max(0.0) as u64;
            Some(summary)
        }
        _ => None,
    };

    // 5. Unreferenced sweep (R4.12), dry run, leaving the files counted above.
    let older_than_ms = config.prune_after_ms;
    let referenced = referenced_paths(dir, rows.values().copied());
    let sweep_cutoff = now - older_than_ms as f64;
    let queue = by_mtime(
        paths
            .iter()
            .filter(|(p, f)| {
                if excluded.contains(p) {
                    return false;
                }
                let kind = classify(&f.name);
                if kind == ArtifactKind::StoreTemp {
                    return f.mtime_ms <= now - STORE_TEMP_STALE_MS;
                }
                f.mtime_ms <= sweep_cutoff && is_unreferenced(&kind, p, &referenced)
            })
            .cloned()
            .collect(),
    );
    let mut sim = Simulated {
        sizes: &sizes,
        removed: HashSet::new(),
    };
    let mut swept: Vec<PathBuf> = Vec::new();
    let mut unreferenced = SweepSummary {
        scanned_files: scan.files.len() + scan.blob_files,
        removed_files: 0,
        freed_bytes: 0,
        older_than_ms,
    };
    for (p, _) in queue {
        let n = sim.remove(&p);
        if n == 0 {
            continue;
        }
        unreferenced.removed_files += 1;
        unreferenced.freed_bytes += n;
        swept.push(p);
    }

    // Rows sharing a removed row's session id keep its files (R4.8).
    let mut holder: HashMap<&str, &str> = HashMap::new();
    for (k, e) in &rows {
        if let Some(id) = e.session_id().filter(|s| !s.is_empty()) {
            holder.entry(id).or_insert(k.as_str());
        }
    }
    // … and so do rows that resolve to the same transcript (R6.4: as archive and clear judge
    // it, by resolved path or by `sessionId`, against every row that stays).
    let mut path_holder: HashMap<PathBuf, &str> = HashMap::new();
    for (k, e) in &rows {
        if let Some(t) = e
            .session_id()
            .filter(|s| !s.is_empty())
            .and_then(|id| transcript_path(dir, id, e))
        {
            path_holder.entry(t).or_insert(k.as_str());
        }
    }
    for r in &mut removed_rows {
        let by_path = store.get(&r.key).and_then(|e| {
            let id = e.session_id().filter(|s| !s.is_empty())?;
            path_holder.get(&transcript_path(dir, id, e)?)
        });
        r.shared_with = r
            .session_id
            .as_deref()
            .and_then(|id| holder.get(id))
            .or(by_path)
            .map(|k| (*k).to_owned());
    }

    // The files, in the order applying handles them.
    let stamp = super::super::format_archive_timestamp(opts.now_ms).unwrap_or_default();
    let renamed = |p: &Path| -> PlannedRename {
        let name = p
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        if classify(&name).is_archive() {
            PlannedRename::Keep
        } else {
            PlannedRename::Rename(format!("{name}.deleted.{stamp}"))
        }
    };
    let scanned = |p: &Path| paths.iter().find(|(q, _)| q == p).map(|(_, f)| *f);
    let mut files: Vec<PlannedFile> = Vec::new();
    let mut seen: HashSet<PathBuf> = HashSet::new();
    let mut push = |files: &mut Vec<PlannedFile>, p: PathBuf, reason: FileReason| {
        if !seen.insert(p.clone()) {
            return;
        }
        let f = scanned(&p);
        let action = renamed(&p);
        files.push(PlannedFile {
            size: f.map(|f| f.size),
            mtime_ms: f.map(|f| f.mtime_ms),
            action,
            reason,
            path: p,
        });
    };
    for r in &removed_rows {
        if r.reason == RemovalReason::Missing || r.shared_with.is_some() {
            continue;
        }
        let Some(entry) = store.get(&r.key) else {
            continue;
        };
        // A transcript another store owns (an absolute `sessionFile` the reference follows,
        // R1.11) is reported and left alone.
        if let Some(t) = entry
            .session_id()
            .filter(|s| !s.is_empty())
            .and_then(|id| transcript_path(dir, id, entry))
            && crate::openclaw_store::lifecycle::outside_store(dir, &t)
        {
            if !files.iter().any(|f| f.path == t) {
                let meta = std::fs::symlink_metadata(&t).ok();
                files.push(PlannedFile {
                    size: meta.as_ref().map(std::fs::Metadata::len),
                    mtime_ms: None,
                    reason: FileReason::RemovedRow { key: r.key.clone() },
                    action: PlannedRename::LeaveAlone(OUTSIDE_STORE.to_owned()),
                    path: t,
                });
            }
            continue;
        }
        let mut candidates = entry_artifact_paths(dir, entry);
        if let Some(id) = entry.session_id().filter(|s| !s.is_empty())
            && super::super::normalise::is_file_name_session_id(id)
        {
            let default = dir.join(format!("{id}.jsonl"));
            if !candidates.contains(&default) {
                candidates.push(default);
            }
        }
        for p in candidates {
            if path_holder.contains_key(&p) {
                continue;
            }
            let present = scanned(&p).is_some()
                || scan
                    .probes
                    .get(&p)
                    .is_some_and(|s| *s != PathProbe::Missing);
            if present {
                push(&mut files, p, FileReason::RemovedRow { key: r.key.clone() });
            }
        }
    }
    for (key, p) in budget_row_files {
        push(&mut files, p, FileReason::RemovedRow { key });
    }
    for p in budget_files {
        push(&mut files, p, FileReason::DiskBudget);
    }
    for p in swept {
        push(&mut files, p, FileReason::Unreferenced);
    }
    // Archive retention (R4.9): judged by the name's timestamp.
    for (p, f) in &paths {
        if let ArtifactKind::Archive {
            reason,
            archived_at_ms,
            ..
        } = classify(&f.name)
        {
            let retention = match reason {
                ArchiveReason::Deleted => Some(config.prune_after_ms),
                ArchiveReason::Reset => config.reset_archive_retention_ms,
                ArchiveReason::Bak => None,
            };
            if retention.is_some_and(|r| now - archived_at_ms as f64 > r as f64) {
                push(&mut files, p.clone(), FileReason::ArchiveRetention);
            }
        }
    }

    let budget_removed = disk_budget.map_or(0, |b| b.removed_entries + b.removed_files);
    let would_mutate = missing > 0
        || pruned > 0
        || capped > 0
        || unreferenced.removed_files > 0
        || budget_removed > 0;
    MaintenancePlan {
        mode: config.mode,
        before_count,
        after_count: rows.len(),
        missing,
        pruned,
        capped,
        unreferenced,
        disk_budget,
        removed_rows,
        files,
        would_mutate,
    }
}
