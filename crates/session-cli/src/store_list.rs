//! `sessions list` on OpenClaw stores: a sessions directory holding `sessions.json` is listed
//! one row per store key ([`session_semantics::openclaw_store::listing`]), as `openclaw
//! sessions` lists it (openclaw-store.md §5), joined with the transcripts (size, messages, the
//! §6 inconsistency flags); `--archived` lists the store's `.reset.`/`.deleted.`/`.bak.`
//! archives instead. The table fits the terminal width ([`crate::text::table_width`]).

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use session_format::json::{JsObject, JsValue};
use std::collections::BTreeMap;

use session_semantics::openclaw_store::ArchiveReason;
use session_semantics::openclaw_store::listing::{
    ArchivedTranscript, DISPLAY_FIELDS, EMPTY_TRANSCRIPT_MAX_BYTES, ListOptions, StoreListing,
    StoreRow, TranscriptFacts, TranscriptState, bytes_have_no_messages, list_loaded_store,
    list_store,
};

use crate::ctx::Ctx;
use crate::list::Listed;
use crate::output::Output;
use crate::text;

/// How `list` selects and prints (the flags of `sessions list`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ListFlags {
    /// `--active MINUTES`.
    pub(crate) active_minutes: Option<u64>,
    /// `--limit N|all`: `None` when not given, `Some(None)` for `all`.
    pub(crate) limit: Option<Option<usize>>,
    /// `--archived`.
    pub(crate) archived: bool,
    /// The table's width: `None` prints every cell in full (`--wide`, or not a terminal).
    pub(crate) width: Option<usize>,
}

/// One sessions directory to list: its agent (when listed by agent) and the listing.
pub(crate) struct StoreDir {
    pub(crate) agent: Option<String>,
    pub(crate) listing: StoreListing,
    /// The archived keys of a SQLite store (`session_nodes.archived_at` non-NULL, §2.13
    /// recipe 1): their rows (also in [`StoreListing::rows`], flagged `archived` there), with
    /// the archive time (epoch ms).
    pub(crate) archived_keys: Vec<(StoreRow, i64)>,
    /// Where the store is read: the `sessions.json` file, or the SQLite database.
    pub(crate) source: PathBuf,
}

/// Loads the store of each directory (`now_ms`: the global `--now`): the `sessions.json`
/// file, or (SQLite backend) the database's `session_nodes`, whose transcripts' facts come
/// from the database and whose archived keys are set apart; `--archived` then lists them and
/// the reclaimed generations of `session_transcript_archives` (§2.12) instead of archive
/// files.
///
/// # Errors
/// A store that cannot be read or is not a JSON object, naming the file or the database.
pub(crate) fn load(
    ctx: &Ctx,
    dirs: &[(Option<String>, PathBuf)],
    flags: &ListFlags,
) -> anyhow::Result<Vec<StoreDir>> {
    let opts = ListOptions {
        now_ms: ctx.now_ms(),
        active_minutes: flags.active_minutes,
        // The limit is applied over every store together, after the merge.
        limit: None,
    };
    dirs.iter()
        .map(|(agent, dir)| {
            if let Some(db) = ctx.store().and_then(|r| r.sqlite_db_of_dir(dir)) {
                return load_sqlite(ctx, agent.clone(), dir, db, &opts);
            }
            let listing = list_store(dir, &opts)
                .with_context(|| format!("cannot list the session store {}", text::path(dir)))?;
            Ok(StoreDir {
                agent: agent.clone(),
                source: listing.store_path.clone(),
                listing,
                archived_keys: Vec::new(),
            })
        })
        .collect()
}

/// The transcript facts of a SQLite database's listing: size and message count from the
/// database's own aggregates ([`session_store::sqlite::SqliteStore::transcript_summaries`]),
/// so no transcript is decoded; only a session small enough to be header-only
/// ([`EMPTY_TRANSCRIPT_MAX_BYTES`]) is read, to tell header-only from present exactly as for
/// a file.
struct SqliteFacts {
    by_path: std::collections::HashMap<PathBuf, session_store::sqlite::TranscriptSummary>,
    storage: std::sync::Arc<dyn session_store::Storage>,
}

impl TranscriptFacts for SqliteFacts {
    fn inspect(&self, path: &Path) -> (TranscriptState, Option<u64>, Option<usize>) {
        let Some(summary) = self.by_path.get(path) else {
            return (TranscriptState::Missing, None, None);
        };
        let messages = usize::try_from(summary.messages).ok();
        if summary.bytes <= EMPTY_TRANSCRIPT_MAX_BYTES {
            let Ok(bytes) = self.storage.read_all(path) else {
                return (TranscriptState::Missing, None, None);
            };
            let state = if bytes_have_no_messages(&bytes) {
                TranscriptState::HeaderOnly
            } else {
                TranscriptState::Present
            };
            return (state, Some(bytes.len() as u64), messages);
        }
        (TranscriptState::Present, Some(summary.bytes), messages)
    }
}

/// [`load`] of one SQLite database (namespace `dir`).
fn load_sqlite(
    ctx: &Ctx,
    agent: Option<String>,
    dir: &Path,
    db: &crate::backend::SqliteDb,
    opts: &ListOptions,
) -> anyhow::Result<StoreDir> {
    let shown = text::path(db.storage.db_path());
    let store = match crate::address::load_store(ctx, dir) {
        Some(r) => r.with_context(|| format!("cannot list the session store {shown}"))?,
        None => anyhow::bail!("cannot list the session store {shown}: no session index"),
    };
    let storage: std::sync::Arc<dyn session_store::Storage> = db.storage.clone();
    let summaries = db
        .storage
        .store()
        .transcript_summaries()
        .with_context(|| format!("cannot list the sessions of {shown}"))?;
    let facts = SqliteFacts {
        by_path: summaries
            .into_iter()
            .map(|(id, s)| (db.storage.session_path(&id), s))
            .collect(),
        storage,
    };
    let mut listing = list_loaded_store(&store, opts, &facts);
    // The database belongs to OpenClaw 2026.8+: rows without a model show its default.
    session_semantics::openclaw_store::listing::use_default_model(
        &mut listing,
        session_semantics::openclaw_store::listing::DEFAULT_PROVIDER,
        session_semantics::openclaw_store::listing::DEFAULT_MODEL_2026_9,
    );
    let (archived_at, reclaimed) = {
        let sq = db.storage.store();
        let sessions = sq
            .sessions()
            .with_context(|| format!("cannot list the sessions of {shown}"))?;
        let archives = sq
            .transcript_archives()
            .with_context(|| format!("cannot list the reclaimed transcripts of {shown}"))?;
        let archived: BTreeMap<String, i64> = sessions
            .into_iter()
            .filter_map(|s| Some((s.session_key, s.archived_at?)))
            .collect();
        (archived, archives)
    };
    // Archived keys stay in the listing (OpenClaw 2026.9.6's `openclaw sessions` lists them),
    // flagged `archived`; `--archived` lists them with the reclaimed generations.
    let archived_keys = listing
        .rows
        .iter()
        .filter_map(|r| Some((r.clone(), *archived_at.get(&r.key)?)))
        .collect();
    listing.archives = reclaimed
        .into_iter()
        .map(|a| ArchivedTranscript {
            path: dir.join(&a.archive_name),
            reason: if a.reason == "reset" {
                ArchiveReason::Reset
            } else {
                ArchiveReason::Deleted
            },
            original: format!("{}.jsonl", a.session_id),
            session_id: Some(a.session_id),
            archived_at_ms: a.created_at,
            size: a.stored_bytes,
        })
        .collect();
    Ok(StoreDir {
        agent,
        listing,
        archived_keys,
        source: db.storage.db_path().to_path_buf(),
    })
}

/// A printed row: a store key, an orphan transcript, or a transcript of a directory without
/// `sessions.json` listed beside the stores.
struct Row<'a> {
    agent: Option<&'a str>,
    row: RowKind<'a>,
    /// An archived key of a SQLite store (`session_nodes.archived_at` non-NULL): listed, as
    /// OpenClaw 2026.9.6's `openclaw sessions` lists it, with the `archived` flag.
    archived: bool,
}

enum RowKind<'a> {
    Key(&'a StoreRow),
    Orphan(&'a session_semantics::openclaw_store::listing::OrphanTranscript),
    File(&'a Listed),
}

/// The flags of a store row (JSON `flags`, the table's FLAGS): `missing` (no transcript file),
/// `header-only` (a transcript of ≤ 4096 bytes with no message: the reference's cleanup calls
/// it missing), `shared` (another row names the same transcript or session id), `archived`
/// (an archived key of a SQLite store).
fn row_flags(r: &StoreRow, archived: bool) -> Vec<&'static str> {
    let mut f = Vec::new();
    match r.state {
        TranscriptState::Missing => f.push("missing"),
        TranscriptState::HeaderOnly => f.push("header-only"),
        _ => {}
    }
    if !r.shared_with.is_empty() {
        f.push("shared");
    }
    if archived {
        f.push("archived");
    }
    f
}

/// A row's `label` (the SessionEntry's, trimmed; `None` when empty or not a string).
fn row_label(r: &StoreRow) -> Option<String> {
    r.entry
        .fields()
        .get("label")
        .and_then(JsValue::as_str_lossy)
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

/// The reference's `formatKTokens`: thousands with one decimal below 10 000, none above.
fn k_tokens(v: f64) -> String {
    let k = v / 1000.0;
    if v >= 10_000.0 {
        format!("{k:.0}k")
    } else {
        format!("{k:.1}k")
    }
}

/// The TOKENS cell, as the reference's `Tokens (ctx %)` column: `0.4k/200k (0%)`, or
/// `?/200k (?%)` without a total (the reference writes `unknown/200k (?%)`).
fn tokens_cell(r: &StoreRow) -> String {
    let ctx = k_tokens(r.context_tokens);
    match (r.total_tokens, r.context_percent()) {
        (Some(t), Some(p)) => format!("{}/{ctx} ({p}%)", k_tokens(t)),
        (Some(t), None) => format!("{}/{ctx} (?%)", k_tokens(t)),
        _ => format!("?/{ctx} (?%)"),
    }
}

/// An age in milliseconds as the reference's session table writes it (`formatTimeAgo`):
/// seconds, minutes and hours each rounded half up from the previous unit; `just now` under
/// a minute, `12m ago`, `5h ago` under 48 hours, then `2d ago`; `unknown` without
/// `updatedAt` and for an `updatedAt` in the future (openclaw-store.md §6).
fn age_cell(age_ms: Option<f64>) -> String {
    let Some(ms) = age_ms.filter(|m| m.is_finite() && *m >= 0.0) else {
        return "unknown".to_owned();
    };
    // Math.round: half up (the values are never negative here).
    let round = |x: f64| (x + 0.5).floor();
    let seconds = round(ms / 1000.0);
    let minutes = round(seconds / 60.0);
    if minutes < 1.0 {
        return "just now".to_owned();
    }
    if minutes < 60.0 {
        return format!("{minutes}m ago");
    }
    let hours = round(minutes / 60.0);
    if hours < 48.0 {
        return format!("{hours}h ago");
    }
    format!("{}d ago", round(hours / 24.0))
}

/// Every row of every store, store rows newest `updatedAt` first (ties in store order, then
/// directory order), limited; then the orphans; then the files of directories without a store.
/// Returns the rows and the count before the limit.
fn merged<'a>(
    stores: &'a [StoreDir],
    files: &'a [Listed],
    flags: &ListFlags,
) -> (Vec<Row<'a>>, usize, Option<usize>) {
    let mut keys: Vec<Row<'a>> = stores
        .iter()
        .flat_map(|s| {
            s.listing.rows.iter().map(|r| Row {
                agent: s.agent.as_deref(),
                row: RowKind::Key(r),
                archived: s.archived_keys.iter().any(|(a, _)| a.key == r.key),
            })
        })
        .collect();
    let updated = |r: &Row<'_>| match r.row {
        RowKind::Key(k) => k.updated_at.unwrap_or(0.0),
        _ => 0.0,
    };
    keys.sort_by(|a, b| updated(b).total_cmp(&updated(a)));
    let total = keys.len();
    let limit = flags.limit.unwrap_or(Some(
        session_semantics::openclaw_store::listing::DEFAULT_LIMIT,
    ));
    if let Some(n) = limit {
        keys.truncate(n);
    }
    for s in stores {
        keys.extend(s.listing.orphans.iter().map(|o| Row {
            agent: s.agent.as_deref(),
            row: RowKind::Orphan(o),
            archived: false,
        }));
    }
    keys.extend(files.iter().map(|l| Row {
        agent: l.agent.as_deref(),
        row: RowKind::File(l),
        archived: false,
    }));
    (keys, total, limit)
}

fn num(v: f64) -> JsValue {
    JsValue::Number(v)
}

fn opt_num(v: Option<f64>) -> JsValue {
    v.map_or(JsValue::Null, JsValue::Number)
}

fn opt_str(v: Option<&str>) -> JsValue {
    v.map_or(JsValue::Null, JsValue::from)
}

fn strings<'s>(v: impl IntoIterator<Item = &'s str>) -> JsValue {
    JsValue::Array(v.into_iter().map(JsValue::from).collect())
}

fn row_json(r: &Row<'_>) -> JsValue {
    let mut o = JsObject::new();
    match r.row {
        RowKind::Key(k) => {
            // The reference's fields and order first (R5.4), then ours.
            o.insert("key", JsValue::from(k.key.as_str()));
            o.insert("updatedAt", opt_num(k.updated_at));
            o.insert("ageMs", opt_num(k.age_ms));
            for name in DISPLAY_FIELDS {
                let value = match name {
                    "sessionId" => opt_str(k.session_id.as_deref()),
                    "totalTokens" => opt_num(k.total_tokens),
                    "totalTokensFresh" => JsValue::Bool(k.total_tokens_fresh),
                    "model" => JsValue::from(k.model.as_str()),
                    "modelProvider" => JsValue::from(k.model_provider.as_str()),
                    "contextTokens" => num(k.context_tokens),
                    _ => match k.entry.fields().get(name) {
                        Some(v) => v.clone(),
                        None => continue,
                    },
                };
                o.insert(name, value);
            }
            o.insert("agentId", opt_str(k.agent_id.as_deref().or(r.agent)));
            o.insert("kind", JsValue::from(k.kind));
            o.insert("id", opt_str(k.session_id.as_deref()));
            o.insert("channel", opt_str(k.channel.as_deref()));
            o.insert("contextPercent", opt_num(k.context_percent()));
            o.insert("messages", opt_num(k.messages.map(|m| m as f64)));
            o.insert("size", opt_num(k.size.map(|s| s as f64)));
            o.insert("flags", strings(row_flags(k, r.archived)));
            o.insert("label", opt_str(row_label(k).as_deref()));
            o.insert("archived", JsValue::Bool(r.archived));
            o.insert(
                "sharedWith",
                strings(k.shared_with.iter().map(String::as_str)),
            );
            o.insert(
                "path",
                k.transcript
                    .as_ref()
                    .map_or(JsValue::Null, |p| JsValue::from(p.display().to_string())),
            );
        }
        RowKind::Orphan(orphan) => {
            o.insert("key", JsValue::Null);
            o.insert("kind", JsValue::Null);
            o.insert("agentId", opt_str(r.agent));
            o.insert("sessionId", JsValue::from(orphan.session_id.as_str()));
            o.insert("id", JsValue::from(orphan.session_id.as_str()));
            o.insert("mtime", opt_num(orphan.mtime_ms));
            o.insert("messages", opt_num(orphan.messages.map(|m| m as f64)));
            o.insert("size", num(orphan.size as f64));
            let mut flags = vec!["orphan"];
            if orphan.header_only {
                flags.push("header-only");
            }
            o.insert("flags", strings(flags));
            o.insert("path", JsValue::from(orphan.path.display().to_string()));
        }
        RowKind::File(l) => {
            o.insert("key", JsValue::Null);
            o.insert("kind", JsValue::Null);
            o.insert("agentId", opt_str(r.agent));
            o.insert("sessionId", JsValue::from(l.info.id.as_str()));
            o.insert("id", JsValue::from(l.info.id.as_str()));
            o.insert("messages", num(l.info.unique_message_count as f64));
            o.insert("size", num(l.size as f64));
            o.insert("flags", strings([]));
            o.insert("path", JsValue::from(l.info.path.display().to_string()));
        }
    }
    JsValue::Object(o)
}

/// `path` made absolute against the current directory (as the reference prints store paths);
/// unchanged when it already is or the current directory is unknown.
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The `path`/`stores`/`allAgents` head of the JSON, as the reference's (R5.3): `path` is the
/// store for one directory listed on its own, else `null` with `stores`.
fn head(o: &mut JsObject, stores: &[StoreDir], aggregate: bool) {
    if aggregate {
        o.insert("path", JsValue::Null);
        o.insert(
            "stores",
            JsValue::Array(
                stores
                    .iter()
                    .map(|s| {
                        let mut st = JsObject::new();
                        st.insert("agentId", opt_str(s.agent.as_deref()));
                        st.insert(
                            "path",
                            JsValue::from(absolute(&s.source).display().to_string()),
                        );
                        JsValue::Object(st)
                    })
                    .collect(),
            ),
        );
        o.insert("allAgents", JsValue::Bool(true));
    } else {
        o.insert(
            "path",
            stores.first().map_or(JsValue::Null, |s| {
                JsValue::from(absolute(&s.source).display().to_string())
            }),
        );
    }
}

/// Prints the listing: JSON, or the table (and the skipped files of directories without a
/// store on stderr).
pub(crate) fn write(
    stores: &[StoreDir],
    files: &[Listed],
    skipped: &[crate::list::Skipped],
    aggregate: bool,
    flags: &ListFlags,
    json: bool,
    out: &mut Output,
) -> anyhow::Result<()> {
    if flags.archived {
        return write_archives(stores, aggregate, flags, json, out);
    }
    let (rows, total, limit) = merged(stores, files, flags);
    let shown_keys = rows
        .iter()
        .filter(|r| matches!(r.row, RowKind::Key(_)))
        .count();
    if json {
        let mut o = JsObject::new();
        head(&mut o, stores, aggregate);
        o.insert("count", num(shown_keys as f64));
        o.insert("totalCount", num(total as f64));
        o.insert("limitApplied", opt_num(limit.map(|l| l as f64)));
        o.insert("hasMore", JsValue::Bool(shown_keys < total));
        o.insert(
            "activeMinutes",
            opt_num(flags.active_minutes.map(|m| m as f64)),
        );
        // `count` is the reference's (store keys shown); orphans are rows without a key.
        let orphans = rows
            .iter()
            .filter(|r| matches!(r.row, RowKind::Orphan(_)))
            .count();
        o.insert("orphanCount", num(orphans as f64));
        o.insert(
            "sessions",
            JsValue::Array(rows.iter().map(row_json).collect()),
        );
        o.insert(
            "skipped",
            JsValue::Array(
                skipped
                    .iter()
                    .map(|s| {
                        let mut so = JsObject::new();
                        so.insert("path", JsValue::from(s.path.display().to_string()));
                        so.insert("reason", JsValue::from(s.reason.as_str()));
                        JsValue::Object(so)
                    })
                    .collect(),
            ),
        );
        out.line(&session_format::normalize::to_json_string_indented(
            &JsValue::Object(o),
            2,
        ))?;
        return Ok(());
    }
    if rows.is_empty() {
        out.line("no sessions found")?;
    } else {
        for line in table(&rows, aggregate, flags.width) {
            out.line(&line)?;
        }
    }
    if shown_keys < total {
        out.line(&format!(
            "{shown_keys} of {total} keys listed (--limit {}; --limit all lists every key)",
            limit.unwrap_or(total)
        ))?;
    }
    // The files of directories without a store are warned about as `list` warns about them.
    crate::list::report_shared_ids(files, out)?;
    crate::list::report_skipped(skipped, out)
}

fn table(rows: &[Row<'_>], show_agent: bool, width: Option<usize>) -> Vec<String> {
    // A LABEL column after KEY when some row has a label.
    let labels = rows
        .iter()
        .any(|r| matches!(r.row, RowKind::Key(k) if row_label(k).is_some()));
    let mut cells: Vec<Vec<String>> = Vec::with_capacity(rows.len());
    for r in rows {
        let mut c = Vec::with_capacity(11);
        if show_agent {
            // A key's own agent (`agent:<id>:…`, JSON `agentId`), else the directory's.
            let agent = match r.row {
                RowKind::Key(k) => k.agent_id.as_deref().or(r.agent),
                _ => r.agent,
            };
            c.push(agent.map_or_else(|| "-".to_owned(), |a| text::safe(a).into_owned()));
        }
        match r.row {
            RowKind::Key(k) => {
                c.push(text::safe(&k.key).into_owned());
                if labels {
                    c.push(
                        row_label(k)
                            .map_or_else(|| "-".to_owned(), |l| text::safe(&l).into_owned()),
                    );
                }
                c.push(k.kind.to_owned());
                c.push(
                    k.channel
                        .as_deref()
                        .map_or_else(|| "-".to_owned(), |ch| text::safe(ch).into_owned()),
                );
                c.push(text::safe(&k.model).into_owned());
                c.push(tokens_cell(k));
                c.push(age_cell(k.age_ms));
                c.push(k.messages.map_or_else(|| "-".to_owned(), text::thousands));
                c.push(k.size.map_or_else(|| "-".to_owned(), text::human_bytes));
                c.push(row_flags(k, r.archived).join(","));
                c.push(
                    k.transcript
                        .as_deref()
                        .map_or_else(|| "-".to_owned(), text::path),
                );
            }
            RowKind::Orphan(o) => {
                c.extend(["-", "-", "-", "-", "-", "-"].map(str::to_owned));
                if labels {
                    c.push("-".to_owned());
                }
                c.push(o.messages.map_or_else(|| "-".to_owned(), text::thousands));
                c.push(text::human_bytes(o.size));
                c.push(
                    if o.header_only {
                        "orphan,header-only"
                    } else {
                        "orphan"
                    }
                    .to_owned(),
                );
                c.push(text::path(&o.path));
            }
            RowKind::File(l) => {
                c.extend(["-", "-", "-", "-", "-", "-"].map(str::to_owned));
                if labels {
                    c.push("-".to_owned());
                }
                c.push(text::thousands(l.info.unique_message_count));
                c.push(text::human_bytes(l.size));
                c.push(String::new());
                c.push(text::path(&l.info.path));
            }
        }
        cells.push(c);
    }
    let mut heads = Vec::new();
    if show_agent {
        heads.push("AGENT");
    }
    heads.push("KEY");
    if labels {
        heads.push("LABEL");
    }
    heads.extend([
        "KIND",
        "CHANNEL",
        "MODEL",
        "TOKENS (CTX %)",
        "AGE",
        "MSGS",
        "SIZE",
        "FLAGS",
        "PATH",
    ]);
    let key = usize::from(show_agent);
    let off = key + usize::from(labels);
    let right: Vec<bool> = (0..heads.len())
        .map(|i| i == off + 6 || i == off + 7)
        .collect();
    // Left out first when the terminal is narrow: LABEL, CHANNEL, MODEL, SIZE, MSGS, TOKENS.
    let mut drop = Vec::with_capacity(6);
    if labels {
        drop.push(key + 1);
    }
    drop.extend([off + 2, off + 3, off + 7, off + 6, off + 4]);
    text::fit_table(&heads, &cells, &right, Some(key), &drop, width)
}

/// One line of `list --archived`: an archive file (or a SQLite store's reclaimed generation),
/// or an archived key of a SQLite store.
struct ArchiveLine<'a> {
    agent: Option<&'a str>,
    at_ms: i64,
    reason: &'static str,
    /// The archived key (SQLite archived keys only).
    key: Option<&'a str>,
    original: String,
    session_id: Option<&'a str>,
    size: Option<u64>,
    path: Option<&'a Path>,
}

fn archive_lines(stores: &[StoreDir]) -> Vec<ArchiveLine<'_>> {
    let mut all: Vec<ArchiveLine<'_>> = Vec::new();
    for s in stores {
        let agent = s.agent.as_deref();
        all.extend(s.listing.archives.iter().map(|a| ArchiveLine {
            agent,
            at_ms: a.archived_at_ms,
            reason: a.reason.as_str(),
            key: None,
            original: a.original.clone(),
            session_id: a.session_id.as_deref(),
            size: Some(a.size),
            path: Some(&a.path),
        }));
        all.extend(s.archived_keys.iter().map(|(r, at)| ArchiveLine {
            agent: r.agent_id.as_deref().or(agent),
            at_ms: *at,
            reason: "archived",
            key: Some(r.key.as_str()),
            original: r.key.clone(),
            session_id: r.session_id.as_deref(),
            size: r.size,
            path: r.transcript.as_deref(),
        }));
    }
    all.sort_by_key(|a| std::cmp::Reverse(a.at_ms));
    all
}

fn archive_json(a: &ArchiveLine<'_>) -> JsValue {
    let mut o = JsObject::new();
    o.insert("agentId", opt_str(a.agent));
    o.insert("reason", JsValue::from(a.reason));
    if let Some(key) = a.key {
        o.insert("key", JsValue::from(key));
    }
    o.insert("original", JsValue::from(a.original.as_str()));
    o.insert("sessionId", opt_str(a.session_id));
    o.insert("archivedAt", opt_str(text::iso(a.at_ms as f64).as_deref()));
    o.insert("archivedAtMs", num(a.at_ms as f64));
    o.insert("size", opt_num(a.size.map(|v| v as f64)));
    o.insert(
        "path",
        a.path
            .map_or(JsValue::Null, |p| JsValue::from(p.display().to_string())),
    );
    JsValue::Object(o)
}

fn write_archives(
    stores: &[StoreDir],
    aggregate: bool,
    flags: &ListFlags,
    json: bool,
    out: &mut Output,
) -> anyhow::Result<()> {
    let all = archive_lines(stores);
    if json {
        let mut o = JsObject::new();
        head(&mut o, stores, aggregate);
        o.insert("count", num(all.len() as f64));
        o.insert(
            "archives",
            JsValue::Array(all.iter().map(archive_json).collect()),
        );
        out.line(&session_format::normalize::to_json_string_indented(
            &JsValue::Object(o),
            2,
        ))?;
        return Ok(());
    }
    if all.is_empty() {
        out.line("no archived sessions found")?;
        return Ok(());
    }
    let mut heads = Vec::new();
    if aggregate {
        heads.push("AGENT");
    }
    heads.extend(["ARCHIVED (UTC)", "REASON", "SESSION ID", "SIZE", "PATH"]);
    let cells: Vec<Vec<String>> = all
        .iter()
        .map(|a| {
            let mut c = Vec::new();
            if aggregate {
                c.push(
                    a.agent
                        .map_or_else(|| "-".to_owned(), |g| text::safe(g).into_owned()),
                );
            }
            c.push(text::utc_minutes(a.at_ms as f64));
            c.push(match a.key {
                Some(key) => format!("archived key {}", text::safe(key)),
                None => a.reason.to_owned(),
            });
            c.push(a.session_id.map_or_else(
                || text::safe(&a.original).into_owned(),
                |s| text::safe(s).into_owned(),
            ));
            c.push(a.size.map_or_else(|| "-".to_owned(), text::human_bytes));
            c.push(a.path.map_or_else(|| "-".to_owned(), text::path));
            c
        })
        .collect();
    let right: Vec<bool> = heads.iter().map(|h| *h == "SIZE").collect();
    // The path names the session id again: the SESSION ID cell gives way first.
    let id_col = usize::from(aggregate) + 2;
    for line in text::fit_table(&heads, &cells, &right, Some(id_col), &[], flags.width) {
        out.line(&line)?;
    }
    Ok(())
}

/// Whether `dir` is an OpenClaw store directory (holds a regular `sessions.json`).
pub(crate) fn is_store_dir(dir: &Path) -> bool {
    dir.join(session_semantics::openclaw_store::STORE_FILE_NAME)
        .is_file()
}
