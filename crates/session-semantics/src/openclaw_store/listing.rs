//! What `openclaw sessions` lists for one store (openclaw-store.md §5), joined with the files of
//! its sessions directory (§1.4, §6): one [`StoreRow`] per store key, with the reference's
//! `kind`, display model, token figures and age, plus what the reference does not look at (its
//! list reads `sessions.json` only, R5.1): the transcript's size and message count, and the
//! inconsistencies of §6 — a row whose transcript is missing or header-only (R6.1, the
//! `--fix-missing` rule), a transcript no row references (an orphan, R6.2), and rows sharing one
//! transcript or session id (R6.4). The archives beside the transcripts (`.reset.`, `.deleted.`,
//! `.bak.`, R1.13) are listed apart ([`StoreListing::archives`]); checkpoints, trajectory
//! sidecars, store temp files and sub-directories are never sessions (R1.14, R1.15).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use session_store::Storage;

use session_format::json::{JsObject, JsValue};

use super::{
    ArchiveReason, ArtifactKind, STORE_FILE_NAME, SessionStore, SessionStoreError, StoreEntry,
    classify, transcript_path,
};

/// The reference's default `--limit` (`DEFAULT_SESSIONS_LIMIT`, R5.2).
pub const DEFAULT_LIMIT: usize = 100;

/// The model shown for rows without one when no config sets a default (R1.5: `openai/gpt-5.5`).
pub const DEFAULT_MODEL: &str = "gpt-5.5";

/// The provider of [`DEFAULT_MODEL`].
pub const DEFAULT_PROVIDER: &str = "openai";

/// The model OpenClaw 2026.9.6 shows for rows without one when no config sets a default
/// (its `agents/defaults` `DEFAULT_MODEL`, provider [`DEFAULT_PROVIDER`]): what a listing of
/// its SQLite store shows ([`use_default_model`]).
pub const DEFAULT_MODEL_2026_9: &str = "gpt-6-astra";

/// Gives every row of `listing` whose entry names no model (neither `modelOverride` nor
/// `model`) the display model `provider`/`model` instead of [`DEFAULT_PROVIDER`]/
/// [`DEFAULT_MODEL`]: the default of the OpenClaw release that owns the store (2026.9.6 for its
/// SQLite store, [`DEFAULT_MODEL_2026_9`]).
pub fn use_default_model(listing: &mut StoreListing, provider: &str, model: &str) {
    for row in &mut listing.rows {
        let f = row.entry.fields();
        if str_field(f, "modelOverride").is_none() && str_field(f, "model").is_none() {
            row.model_provider = provider.to_owned();
            row.model = model.to_owned();
        }
    }
}

/// The context window shown for rows without `contextTokens` when neither config nor the model
/// catalog gives one (R5.4: 200 000 tokens).
pub const DEFAULT_CONTEXT_TOKENS: f64 = 200_000.0;

pub use super::artifacts::{
    EMPTY_TRANSCRIPT_MAX_BYTES, bytes_have_no_messages, transcript_has_no_messages,
};

/// Which rows to list (R5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListOptions {
    /// "Now", in epoch milliseconds (ages and `active_minutes` are measured from it).
    pub now_ms: i64,
    /// `--active N`: keep rows with `now − updatedAt ≤ N · 60 000` (rows without `updatedAt`
    /// are dropped). `None` keeps every row.
    pub active_minutes: Option<u64>,
    /// `--limit N`: the `N` newest rows. `None` is `--limit all`.
    pub limit: Option<usize>,
}

impl ListOptions {
    /// The reference's defaults at `now_ms`: no `--active`, `--limit 100`.
    pub fn at(now_ms: i64) -> Self {
        Self {
            now_ms,
            active_minutes: None,
            limit: Some(DEFAULT_LIMIT),
        }
    }
}

/// What the file a row points at holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TranscriptState {
    /// A regular file with at least one message record (or larger than
    /// [`EMPTY_TRANSCRIPT_MAX_BYTES`]).
    Present,
    /// A regular file of at most [`EMPTY_TRANSCRIPT_MAX_BYTES`] with no message record (a
    /// header only, or nothing): the reference's cleanup calls the row missing (§9 case 32).
    HeaderOnly,
    /// No regular file there (or the row has no valid `sessionId`).
    Missing,
}

/// One store key, as `openclaw sessions --json` shows it (R5.4), with the transcript's facts.
#[derive(Clone, Debug, PartialEq)]
pub struct StoreRow {
    /// The store key.
    pub key: String,
    /// The agent id parsed from the key (`agent:<id>:…`), `None` for other keys.
    pub agent_id: Option<String>,
    /// `classifySessionKind` (R5.5): `global`, `unknown`, `cron`, `spawn-child`, `group` or
    /// `direct`.
    pub kind: &'static str,
    /// `sessionId`.
    pub session_id: Option<String>,
    /// `updatedAt`, epoch milliseconds.
    pub updated_at: Option<f64>,
    /// `now − updatedAt` in milliseconds; `None` without `updatedAt` or when it is 0 (as the
    /// reference's `updatedAt ? … : null`).
    pub age_ms: Option<f64>,
    /// The channel ([`entry_channel`]): for an entry in the 2026.9.6 shape (`delivery.kind`
    /// = `"external"`), `delivery.context.channel`, else `delivery.origin.provider`; for the
    /// 2026.6.11 shape `channel`, else `lastChannel`, else `deliveryContext.channel`, else
    /// `origin.provider`.
    pub channel: Option<String>,
    /// The display model (R5.4): `modelOverride`, else `model`, else [`DEFAULT_MODEL`].
    pub model: String,
    /// The display model's provider.
    pub model_provider: String,
    /// `totalTokens` when a finite number ≥ 0 (`resolveSessionTotalTokens`), else `None`.
    pub total_tokens: Option<f64>,
    /// `totalTokensFresh` as the reference shows it: a number of total tokens not marked
    /// stale.
    pub total_tokens_fresh: bool,
    /// `contextTokens`, else [`DEFAULT_CONTEXT_TOKENS`].
    pub context_tokens: f64,
    /// The transcript the row resolves to (R1.11), `None` without a valid `sessionId`.
    pub transcript: Option<PathBuf>,
    /// What is at [`StoreRow::transcript`].
    pub state: TranscriptState,
    /// The transcript's size in bytes, when it is a regular file.
    pub size: Option<u64>,
    /// Messages on every branch, each entry id once, when the transcript is a readable
    /// session file.
    pub messages: Option<usize>,
    /// The other keys whose row names the same transcript or the same `sessionId` (R6.4),
    /// in store order; empty when none.
    pub shared_with: Vec<String>,
    /// The row as loaded (normalised, unknown fields kept).
    pub entry: StoreEntry,
}

/// The entry fields `openclaw sessions --json` copies into a row after `key`, `updatedAt` and
/// `ageMs` when present, in its order (R5.4, `toSessionDisplayRow`; `totalTokens`, `totalTokensFresh`, `model`, `modelProvider`
/// and `contextTokens` are then replaced by the display values of [`StoreRow`]).
pub const DISPLAY_FIELDS: [&str; 19] = [
    "sessionId",
    "systemSent",
    "abortedLastRun",
    "thinkingLevel",
    "verboseLevel",
    "traceLevel",
    "reasoningLevel",
    "elevatedLevel",
    "responseUsage",
    "groupActivation",
    "inputTokens",
    "outputTokens",
    "totalTokens",
    "totalTokensFresh",
    "model",
    "modelProvider",
    "providerOverride",
    "modelOverride",
    "contextTokens",
];

impl StoreRow {
    /// The reference's context percentage: `round(total / context · 100)` capped at 999;
    /// `None` without a total or a context window.
    pub fn context_percent(&self) -> Option<f64> {
        let total = self.total_tokens?;
        (self.context_tokens > 0.0)
            .then(|| (total / self.context_tokens * 100.0).round().min(999.0))
    }
}

/// A primary transcript (R1.14) of the directory's top level that no row references (R6.2).
#[derive(Clone, Debug, PartialEq)]
pub struct OrphanTranscript {
    /// The file.
    pub path: PathBuf,
    /// The name before `.jsonl`.
    pub session_id: String,
    /// Size in bytes.
    pub size: u64,
    /// Modification time, epoch milliseconds.
    pub mtime_ms: Option<f64>,
    /// Messages, as [`StoreRow::messages`].
    pub messages: Option<usize>,
    /// At most [`EMPTY_TRANSCRIPT_MAX_BYTES`] with no message record.
    pub header_only: bool,
}

/// A `.reset.`, `.deleted.` or `.bak.` archive of the directory's top level (R1.13).
#[derive(Clone, Debug, PartialEq)]
pub struct ArchivedTranscript {
    /// The file.
    pub path: PathBuf,
    /// Why it was archived.
    pub reason: ArchiveReason,
    /// The archived file's own name (`<id>.jsonl`).
    pub original: String,
    /// The session id it is counted under (`None` for `.bak.` backups).
    pub session_id: Option<String>,
    /// The archive time from the name, epoch milliseconds.
    pub archived_at_ms: i64,
    /// Size in bytes.
    pub size: u64,
}

/// One store joined with its directory.
#[derive(Clone, Debug, PartialEq)]
pub struct StoreListing {
    /// The `sessions.json` file.
    pub store_path: PathBuf,
    /// The selected rows, newest `updatedAt` first (missing = 0; ties in store order), at
    /// most [`ListOptions::limit`].
    pub rows: Vec<StoreRow>,
    /// How many rows passed `--active` before the limit (the reference's `totalCount`).
    pub total_count: usize,
    /// The orphan transcripts, newest mtime first (then by name). Not subject to the options.
    pub orphans: Vec<OrphanTranscript>,
    /// The archives, newest archive time first (then by name).
    pub archives: Vec<ArchivedTranscript>,
}

/// `classifySessionKind` (R5.5): the sentinels, a cron key, `spawnedBy`, a group or channel
/// `chatType`, a key containing `:group:` or `:channel:`, else `direct`.
pub fn session_kind(key: &str, entry: &StoreEntry) -> &'static str {
    let f = entry.fields();
    if key == "global" {
        return "global";
    }
    if key == "unknown" {
        return "unknown";
    }
    if is_cron_key(key) {
        return "cron";
    }
    if f.get("spawnedBy").is_some_and(JsValue::is_truthy) {
        return "spawn-child";
    }
    if matches!(
        str_field(f, "chatType").as_deref(),
        Some("group" | "channel")
    ) {
        return "group";
    }
    if key.contains(":group:") || key.contains(":channel:") {
        return "group";
    }
    "direct"
}

/// `agent:<id>:<rest>` split as `parseAgentSessionKey` does (empty segments dropped, at least
/// three left): `(id, rest)`, else `None`.
pub fn parse_agent_key(key: &str) -> Option<(String, String)> {
    let key = key.trim().to_lowercase();
    let parts: Vec<&str> = key.split(':').filter(|p| !p.is_empty()).collect();
    if parts.len() < 3 || parts[0] != "agent" {
        return None;
    }
    let id = parts[1].trim();
    let rest = parts[2..].join(":");
    (!id.is_empty() && !rest.is_empty()).then(|| (id.to_owned(), rest))
}

/// Whether `key` is a cron key: `agent:<id>:cron:…` (`isCronSessionKey`).
pub fn is_cron_key(key: &str) -> bool {
    parse_agent_key(key).is_some_and(|(_, rest)| rest.starts_with("cron:"))
}

fn str_field(o: &JsObject, name: &str) -> Option<String> {
    o.get(name)
        .and_then(JsValue::as_str_lossy)
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

/// The channel an entry was reached on, `None` when it names none (shown as `-`).
///
/// Two entry shapes exist. OpenClaw 2026.9.6's doctor moves an entry's `channel`,
/// `lastChannel`, `deliveryContext` and `origin` into one `delivery` object
/// (`{"kind":"external","route":{…},"context":{"channel":…},"origin":{"provider":…}}`) when it
/// imports a legacy store into SQLite; 2026.9.6 reads the channel of such an entry as
/// `delivery.context.channel ?? delivery.origin.provider` (its `sessionDeliveryChannel`, also
/// the `channel` of its projected compatibility fields), and only when `delivery.kind` is
/// `"external"`. An entry without that `delivery` keeps the 2026.6.11 rule: `channel`, else
/// `lastChannel`, else `deliveryContext.channel`, else `origin.provider`. Values are trimmed;
/// empty strings count as absent.
pub fn entry_channel(f: &JsObject) -> Option<String> {
    let external = f
        .get("delivery")
        .and_then(JsValue::as_object)
        .filter(|d| d.get("kind").and_then(JsValue::as_str_lossy).as_deref() == Some("external"));
    if let Some(d) = external {
        return nested_str(d, "context", "channel").or_else(|| nested_str(d, "origin", "provider"));
    }
    str_field(f, "channel")
        .or_else(|| str_field(f, "lastChannel"))
        .or_else(|| nested_str(f, "deliveryContext", "channel"))
        .or_else(|| nested_str(f, "origin", "provider"))
}

fn nested_str(o: &JsObject, outer: &str, inner: &str) -> Option<String> {
    o.get(outer)
        .and_then(JsValue::as_object)
        .and_then(|v| str_field(v, inner))
}

/// `provider/model` split as `parseModelRef`: a `/` in the model names its provider.
fn model_ref(model: &str, provider: &str) -> (String, String) {
    match model.split_once('/') {
        Some((p, m)) if !p.is_empty() && !m.is_empty() => (p.to_owned(), m.to_owned()),
        _ => (provider.to_owned(), model.to_owned()),
    }
}

/// The display model and provider of a row (R5.4, `resolveSessionDisplayModelRef` under the
/// default config): `(provider, model)`.
fn display_model(f: &JsObject) -> (String, String) {
    if let Some(m) = str_field(f, "modelOverride") {
        let p = str_field(f, "providerOverride").unwrap_or_else(|| DEFAULT_PROVIDER.to_owned());
        return model_ref(&m, &p);
    }
    if let Some(m) = str_field(f, "model") {
        let p = str_field(f, "modelProvider").unwrap_or_else(|| DEFAULT_PROVIDER.to_owned());
        return model_ref(&m, &p);
    }
    (DEFAULT_PROVIDER.to_owned(), DEFAULT_MODEL.to_owned())
}

fn mtime_ms(meta: &std::fs::Metadata) -> Option<f64> {
    let t = meta.modified().ok()?;
    Some(match t.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => d.as_millis() as f64,
        Err(e) => -(e.duration().as_millis() as f64),
    })
}

/// Where a listing reads the facts of the transcripts its rows name (state, size, messages):
/// the files ([`FileFacts`]), or a [`Storage`] ([`StorageFacts`]).
pub trait TranscriptFacts {
    /// The state of the transcript at `path`, its size in bytes and its message count
    /// ([`StoreRow::state`], [`StoreRow::size`], [`StoreRow::messages`]); `(Missing, None,
    /// None)` when there is none.
    fn inspect(&self, path: &Path) -> (TranscriptState, Option<u64>, Option<usize>);
}

/// The facts of transcripts that are local files (what [`list_store`] reads).
#[derive(Clone, Copy, Debug, Default)]
pub struct FileFacts;

impl TranscriptFacts for FileFacts {
    fn inspect(&self, path: &Path) -> (TranscriptState, Option<u64>, Option<usize>) {
        inspect(path)
    }
}

/// The facts of transcripts kept behind a [`Storage`] (an OpenClaw 2026.8+ SQLite database,
/// Redis): the size is the session's bytes, the message count that of
/// [`session_store::Sessions::list`] over the transcript's namespace (listed once per
/// namespace), the state [`bytes_have_no_messages`]
/// over the bytes. Only reads.
pub struct StorageFacts {
    storage: Arc<dyn Storage>,
    /// Message counts by path, per namespace listed so far.
    listed: RefCell<BTreeMap<PathBuf, BTreeMap<PathBuf, usize>>>,
}

impl std::fmt::Debug for StorageFacts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StorageFacts")
            .field("storage", &self.storage.name())
            .finish_non_exhaustive()
    }
}

impl StorageFacts {
    /// Facts read from `storage`.
    pub fn new(storage: Arc<dyn Storage>) -> Self {
        Self {
            storage,
            listed: RefCell::new(BTreeMap::new()),
        }
    }

    fn messages(&self, path: &Path) -> Option<usize> {
        let dir = path.parent()?.to_path_buf();
        let mut listed = self.listed.borrow_mut();
        let counts = listed.entry(dir.clone()).or_insert_with(|| {
            session_store::SessionManager::on(Arc::clone(&self.storage))
                .list("", Some(&dir))
                .map(|infos| {
                    infos
                        .into_iter()
                        .map(|i| (i.path, i.unique_message_count))
                        .collect()
                })
                .unwrap_or_default()
        });
        counts.get(path).copied()
    }
}

impl TranscriptFacts for StorageFacts {
    fn inspect(&self, path: &Path) -> (TranscriptState, Option<u64>, Option<usize>) {
        let Ok(bytes) = self.storage.read_all(path) else {
            return (TranscriptState::Missing, None, None);
        };
        let state = if bytes_have_no_messages(&bytes) {
            TranscriptState::HeaderOnly
        } else {
            TranscriptState::Present
        };
        (state, Some(bytes.len() as u64), self.messages(path))
    }
}

/// Size, messages and state of the file at `path`.
fn inspect(path: &Path) -> (TranscriptState, Option<u64>, Option<usize>) {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => {
            let messages = session_store::session_info(path).map(|i| i.unique_message_count);
            let state = if transcript_has_no_messages(path) {
                TranscriptState::HeaderOnly
            } else {
                TranscriptState::Present
            };
            (state, Some(m.len()), messages)
        }
        _ => (TranscriptState::Missing, None, None),
    }
}

/// Lists the store `<sessions_dir>/sessions.json` joined with the directory's top-level
/// regular files (see the module documentation). Only reads.
///
/// # Errors
/// What [`SessionStore::load`] returns for a store that cannot be read or is not a JSON
/// object (a corrupt store is an error here, where the reference lists nothing, R5.7). A
/// directory that cannot be read gives no orphans and no archives.
pub fn list_store(
    sessions_dir: &Path,
    opts: &ListOptions,
) -> Result<StoreListing, SessionStoreError> {
    let store_path = sessions_dir.join(STORE_FILE_NAME);
    let store = SessionStore::load(&store_path)?;
    let mut listing = list_loaded_store(&store, opts, &FileFacts);
    let (orphans, archives) = scan_dir(&store, sessions_dir);
    listing.orphans = orphans;
    listing.archives = archives;
    Ok(listing)
}

/// [`list_store`] of a store already loaded (e.g. read from a SQLite database's index with
/// [`SessionStore::from_bytes_read_only`]), the transcripts' facts read through `facts`. No
/// directory is scanned: [`StoreListing::orphans`] and [`StoreListing::archives`] are empty.
/// Only reads.
pub fn list_loaded_store(
    store: &SessionStore,
    opts: &ListOptions,
    facts: &dyn TranscriptFacts,
) -> StoreListing {
    let store_path = store.path().to_path_buf();
    let now = opts.now_ms as f64;
    let mut all: Vec<StoreRow> = store
        .entries()
        .map(|(key, entry)| {
            let key = key.to_str_lossy().into_owned();
            row_of(store, key, entry, now, facts)
        })
        .collect();
    mark_shared(&mut all);
    if let Some(minutes) = opts.active_minutes {
        let window = minutes as f64 * 60_000.0;
        all.retain(|r| r.updated_at.is_some_and(|u| now - u <= window));
    }
    let total_count = all.len();
    // Stable: ties keep store order, as the reference's selection does (R5.2).
    all.sort_by(|a, b| {
        b.updated_at
            .unwrap_or(0.0)
            .total_cmp(&a.updated_at.unwrap_or(0.0))
    });
    if let Some(limit) = opts.limit {
        all.truncate(limit);
    }
    StoreListing {
        store_path,
        rows: all,
        total_count,
        orphans: Vec::new(),
        archives: Vec::new(),
    }
}

fn row_of(
    store: &SessionStore,
    key: String,
    entry: &StoreEntry,
    now: f64,
    facts: &dyn TranscriptFacts,
) -> StoreRow {
    let f = entry.fields();
    let session_id = entry.session_id().map(str::to_owned);
    let updated_at = entry.updated_at();
    let transcript = session_id
        .as_deref()
        .and_then(|id| transcript_path(store.sessions_dir(), id, entry));
    let (state, size, messages) = transcript
        .as_deref()
        .map_or((TranscriptState::Missing, None, None), |p| facts.inspect(p));
    let (model_provider, model) = display_model(f);
    let total_tokens = f
        .get("totalTokens")
        .and_then(JsValue::as_f64)
        .filter(|t| t.is_finite() && *t >= 0.0);
    let total_tokens_fresh =
        total_tokens.is_some() && !matches!(f.get("totalTokensFresh"), Some(JsValue::Bool(false)));
    StoreRow {
        agent_id: parse_agent_key(&key).map(|(id, _)| id),
        kind: session_kind(&key, entry),
        key,
        session_id,
        updated_at,
        age_ms: updated_at.filter(|u| *u != 0.0).map(|u| now - u),
        channel: entry_channel(f),
        model,
        model_provider,
        total_tokens,
        total_tokens_fresh,
        context_tokens: f
            .get("contextTokens")
            .and_then(JsValue::as_f64)
            .filter(|c| c.is_finite() && *c > 0.0)
            .unwrap_or(DEFAULT_CONTEXT_TOKENS),
        transcript,
        state,
        size,
        messages,
        shared_with: Vec::new(),
        entry: entry.clone(),
    }
}

/// Fills [`StoreRow::shared_with`]: rows naming the same transcript path or the same
/// `sessionId`.
fn mark_shared(rows: &mut [StoreRow]) {
    let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, r) in rows.iter().enumerate() {
        if let Some(id) = &r.session_id {
            groups.entry(format!("id:{id}")).or_default().push(i);
        }
        if let Some(t) = &r.transcript {
            groups
                .entry(format!("path:{}", t.display()))
                .or_default()
                .push(i);
        }
    }
    let mut shared: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); rows.len()];
    for members in groups.values().filter(|g| g.len() > 1) {
        for &i in members {
            shared[i].extend(members.iter().copied().filter(|&j| j != i));
        }
    }
    let keys: Vec<String> = rows.iter().map(|r| r.key.clone()).collect();
    for (r, others) in rows.iter_mut().zip(shared) {
        r.shared_with = others.into_iter().map(|j| keys[j].clone()).collect();
    }
}

/// The orphan transcripts and the archives among the directory's top-level regular files.
fn scan_dir(store: &SessionStore, dir: &Path) -> (Vec<OrphanTranscript>, Vec<ArchivedTranscript>) {
    // A file is referenced when a row's transcript is it, or it is `<sessionId>.jsonl` of a
    // row (R6.2).
    let mut referenced: BTreeSet<String> = BTreeSet::new();
    for (_, entry) in store.entries() {
        let Some(id) = entry.session_id() else {
            continue;
        };
        referenced.insert(format!("{}.jsonl", id.trim()));
        if let Some(t) = transcript_path(dir, id, entry)
            && t.parent() == Some(dir)
            && let Some(name) = t.file_name()
        {
            referenced.insert(name.to_string_lossy().into_owned());
        }
    }
    let mut orphans = Vec::new();
    let mut archives = Vec::new();
    let Ok(read) = std::fs::read_dir(dir) else {
        return (orphans, archives);
    };
    let mut names: Vec<(String, PathBuf)> = read
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| Some((e.file_name().into_string().ok()?, e.path())))
        .collect();
    names.sort();
    for (name, path) in names {
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        match classify(&name) {
            ArtifactKind::Primary { session_id } if !referenced.contains(&name) => {
                orphans.push(OrphanTranscript {
                    messages: session_store::session_info(&path).map(|i| i.unique_message_count),
                    header_only: transcript_has_no_messages(&path),
                    path,
                    session_id,
                    size: meta.len(),
                    mtime_ms: mtime_ms(&meta),
                });
            }
            ArtifactKind::Archive {
                reason,
                original,
                archived_at_ms,
                usage_session_id,
            } => archives.push(ArchivedTranscript {
                path,
                reason,
                original,
                session_id: usage_session_id,
                archived_at_ms,
                size: meta.len(),
            }),
            _ => {}
        }
    }
    orphans.sort_by(|a, b| {
        b.mtime_ms
            .unwrap_or(f64::NEG_INFINITY)
            .total_cmp(&a.mtime_ms.unwrap_or(f64::NEG_INFINITY))
    });
    archives.sort_by_key(|a| std::cmp::Reverse(a.archived_at_ms));
    (orphans, archives)
}

#[cfg(test)]
mod channel_tests {
    #![allow(clippy::unwrap_used)]

    use super::entry_channel;
    use session_format::json::{JsValue, parse_value};

    fn channel(entry: &str) -> Option<String> {
        let v: JsValue = parse_value(entry.as_bytes()).unwrap();
        entry_channel(v.as_object().unwrap())
    }

    #[test]
    fn the_96_delivery_shape_reads_context_then_origin() {
        // The entry_json 2026.9.6's doctor wrote for a legacy `"channel":"telegram"` entry.
        let imported = r#"{"sessionId":"s","updatedAt":1,"chatType":"direct","delivery":{"kind":"external","route":{"channel":"telegram"},"context":{"channel":"telegram"},"origin":{"provider":"telegram"}}}"#;
        assert_eq!(channel(imported).as_deref(), Some("telegram"));
        let origin_only = r#"{"delivery":{"kind":"external","route":{},"context":{},"origin":{"provider":" slack "}}}"#;
        assert_eq!(channel(origin_only).as_deref(), Some("slack"));
        let context_first = r#"{"delivery":{"kind":"external","route":{"channel":"r"},"context":{"channel":"c"},"origin":{"provider":"o"}}}"#;
        assert_eq!(channel(context_first).as_deref(), Some("c"));
        // The delivery object wins over stale top-level fields, as 9.6's projection does.
        let both = r#"{"channel":"old","delivery":{"kind":"external","route":{},"context":{"channel":"new"},"origin":{}}}"#;
        assert_eq!(channel(both).as_deref(), Some("new"));
        let neither =
            r#"{"delivery":{"kind":"external","route":{},"context":{"channel":""},"origin":{}}}"#;
        assert_eq!(channel(neither), None);
    }

    #[test]
    fn a_non_external_delivery_falls_back_to_the_611_rule() {
        let internal =
            r#"{"lastChannel":"discord","delivery":{"kind":"internal","context":{"channel":"x"}}}"#;
        assert_eq!(channel(internal).as_deref(), Some("discord"));
    }

    #[test]
    fn the_611_shape_reads_channel_last_channel_delivery_context_origin() {
        assert_eq!(
            channel(r#"{"channel":"a","lastChannel":"b","deliveryContext":{"channel":"c"},"origin":{"provider":"d"}}"#).as_deref(),
            Some("a")
        );
        assert_eq!(
            channel(
                r#"{"lastChannel":"b","deliveryContext":{"channel":"c"},"origin":{"provider":"d"}}"#
            )
            .as_deref(),
            Some("b")
        );
        assert_eq!(
            channel(r#"{"deliveryContext":{"channel":"c"},"origin":{"provider":"d"}}"#).as_deref(),
            Some("c")
        );
        assert_eq!(
            channel(r#"{"origin":{"provider":"d"}}"#).as_deref(),
            Some("d")
        );
        assert_eq!(channel(r#"{"channel":"  "}"#), None);
    }
}
