//! Consistency checks of the SQLite store (`openclaw-sqlite.md` §2.13 recipe 7, plus the
//! identity, index and leaf checks that §2.7–§2.9 make possible).
//!
//! A check never stops at the first problem: every row is decoded (a row that cannot be is a
//! [`Finding::BadRow`], not an error) and every finding is listed. Errors are left for what
//! stops the check itself (an unknown session, a query that fails).

use super::{RowProblem, SqliteError, SqliteStore, row_text};
use rusqlite::{Connection, OptionalExtension};
use session_format::json::parse_value;
use std::collections::BTreeMap;

/// One inconsistency found by [`SqliteStore::check_session`] or [`SqliteStore::check_all`].
/// `seq` values are `transcript_events.seq`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Finding {
    /// A key's `current_session_id` has no `session_windows` row (§2.13 recipes 2 and 7).
    #[error("key {session_key}: current session {session_id} has no session window")]
    MissingWindow {
        /// The `session_nodes` key.
        session_key: String,
        /// Its `current_session_id`.
        session_id: String,
    },
    /// A key's `entry_valid` is -1: OpenClaw's validator rejected its `entry_json` (§2.2).
    #[error("key {session_key}: entry_json was marked invalid (entry_valid = -1)")]
    InvalidEntry {
        /// The `session_nodes` key.
        session_key: String,
    },
    /// A window's `session_key` has no `session_nodes` row.
    #[error("session {session_id}: its key {session_key} has no session node")]
    WindowWithoutNode {
        /// The window's session id.
        session_id: String,
        /// Its `session_key`.
        session_key: String,
    },
    /// The session's rows do not start at `seq` 0 (§2.4).
    #[error("session {session_id}: rows start at seq {first_seq}, not 0")]
    SeqStart {
        /// The session id.
        session_id: String,
        /// The lowest `seq`.
        first_seq: i64,
    },
    /// The session's `seq` values have a gap; only the first missing one is named (§2.4).
    #[error("session {session_id}: seq {missing_seq} is missing")]
    SeqGap {
        /// The session id.
        session_id: String,
        /// The first missing `seq` after the lowest one.
        missing_seq: i64,
    },
    /// A row cannot be turned into its JSON text (§2.5).
    #[error("session {session_id} seq {seq}: {problem}")]
    BadRow {
        /// The session id.
        session_id: String,
        /// The row's `seq`.
        seq: i64,
        /// What is wrong with it.
        problem: RowProblem,
    },
    /// A `transcript_event_identities` row's `event_id` is not the `id` of the row at its
    /// `seq` (§2.7).
    #[error(
        "session {session_id} seq {seq}: identity says id {event_id}, the row's id is {}",
        row_id.as_deref().unwrap_or("absent")
    )]
    IdentityMismatch {
        /// The session id.
        session_id: String,
        /// The identity's `seq`.
        seq: i64,
        /// The identity's `event_id`.
        event_id: String,
        /// The row's own string `id`, if it has one.
        row_id: Option<String>,
    },
    /// A `transcript_event_identities` row points at a `seq` with no row (§2.7).
    #[error("session {session_id}: identity {event_id} points at seq {seq}, which has no row")]
    IdentityWithoutRow {
        /// The session id.
        session_id: String,
        /// The identity's `event_id`.
        event_id: String,
        /// The identity's `seq`.
        seq: i64,
    },
    /// A `session_transcript_active_events` row's `event_seq` has no identity, so the
    /// materialised branch cannot name it (§2.9).
    #[error("session {session_id}: active branch row at seq {seq} has no identity")]
    ActiveRowWithoutIdentity {
        /// The session id.
        session_id: String,
        /// The active row's `event_seq`.
        seq: i64,
    },
    /// The session has rows but no `session_transcript_index_state` row (§2.8).
    #[error("session {session_id}: no transcript index state")]
    IndexMissing {
        /// The session id.
        session_id: String,
    },
    /// `indexed_seq` is below the session's highest `seq`: rows were added after the index
    /// (§2.8, §2.13 recipe 7).
    #[error("session {session_id}: index covers seq {indexed_seq}, rows go to seq {max_seq}")]
    IndexBehind {
        /// The session id.
        session_id: String,
        /// `indexed_seq`.
        indexed_seq: i64,
        /// The highest `seq`.
        max_seq: i64,
    },
    /// `indexed_seq` is above the session's highest `seq` (`None`: no rows): rows were
    /// removed after the index (§2.8).
    #[error(
        "session {session_id}: index covers seq {indexed_seq}, rows end at {}",
        max_seq.map_or_else(|| "no row".to_owned(), |s| format!("seq {s}"))
    )]
    IndexAhead {
        /// The session id.
        session_id: String,
        /// `indexed_seq`.
        indexed_seq: i64,
        /// The highest `seq`, `None` without rows.
        max_seq: Option<i64>,
    },
    /// `needs_rebuild = 1`: the materialised leaf and branch are stale (§2.8).
    #[error("session {session_id}: transcript index needs a rebuild (needs_rebuild = 1)")]
    NeedsRebuild {
        /// The session id.
        session_id: String,
    },
    /// The rows do not open as a JSONL session, so no leaf can be recomputed.
    #[error("session {session_id}: rows do not open as a session: {message}")]
    NotASession {
        /// The session id.
        session_id: String,
        /// Why (the JSONL read path's error).
        message: String,
    },
    /// The materialised leaf or active branch differs from the one our navigation rules
    /// compute from the rows ([`SqliteStore::resolved_leaf`]). `fresh` says whether the index
    /// claimed to be current; a stale index also gives its own finding.
    #[error(
        "session {session_id}: materialised leaf {} differs from the recomputed leaf {}{}",
        materialised_leaf.as_deref().unwrap_or("(none)"),
        recomputed_leaf.as_deref().unwrap_or("(none)"),
        if materialised_leaf == recomputed_leaf { " (the branches differ)" } else { "" }
    )]
    LeafDisagrees {
        /// The session id.
        session_id: String,
        /// Whether the index was fresh ([`SqliteLeaf::fresh`](super::SqliteLeaf::fresh)).
        fresh: bool,
        /// `leaf_event_id`.
        materialised_leaf: Option<String>,
        /// Our leaf.
        recomputed_leaf: Option<String>,
        /// The materialised active branch, root first.
        materialised_branch: Vec<String>,
        /// Ours, root first.
        recomputed_branch: Vec<String>,
    },
}

impl SqliteStore {
    /// Checks one session generation, in one read transaction, and lists every finding in
    /// this order: the keys whose `current_session_id` is `session_id` (missing window, invalid
    /// entry), the window's key, `seq` start and first gap, undecodable rows, identities,
    /// active rows without identity, the index state, then the leaf comparison (skipped when a
    /// row could not be decoded, since the recomputed leaf would be wrong). Empty for a
    /// consistent session.
    ///
    /// # Errors
    /// [`SqliteError::UnknownSession`] when neither a `session_windows` row nor a key's
    /// `current_session_id` has `session_id`; [`SqliteError::Query`] when the tables cannot be
    /// read.
    pub fn check_session(&self, session_id: &str) -> Result<Vec<Finding>, SqliteError> {
        let what = format!("check of session {session_id}");
        let tx = self
            .conn
            .unchecked_transaction()
            .map_err(self.query_err(what.clone()))?;
        let mut findings = self.key_findings(&tx, Some(session_id))?;
        match self.require_window(&tx, session_id) {
            Ok(()) => self.window_findings(&tx, session_id, &mut findings)?,
            Err(e) if findings.is_empty() => return Err(e),
            Err(_) => {}
        }
        tx.finish().map_err(self.query_err(what))?;
        Ok(findings)
    }

    /// Checks the whole store in one read transaction: first every key (missing window,
    /// invalid entry, in key order), then every session window in `session_id` order as
    /// [`Self::check_session`] does. Empty for a consistent store.
    ///
    /// # Errors
    /// [`SqliteError::Query`] when the tables cannot be read.
    pub fn check_all(&self) -> Result<Vec<Finding>, SqliteError> {
        let what = "check of the store";
        let tx = self
            .conn
            .unchecked_transaction()
            .map_err(self.query_err(what))?;
        let mut findings = self.key_findings(&tx, None)?;
        let ids: Vec<String> = {
            let mut stmt = tx
                .prepare("SELECT session_id FROM session_windows ORDER BY session_id")
                .map_err(self.query_err(what))?;
            stmt.query_map([], |r| r.get(0))
                .and_then(|rows| rows.collect())
                .map_err(self.query_err(what))?
        };
        for id in ids {
            self.window_findings(&tx, &id, &mut findings)?;
        }
        tx.finish().map_err(self.query_err(what))?;
        Ok(findings)
    }

    /// Missing windows and invalid entries of the keys (those whose `current_session_id` is
    /// `session_id`, or all).
    fn key_findings(
        &self,
        tx: &Connection,
        session_id: Option<&str>,
    ) -> Result<Vec<Finding>, SqliteError> {
        let what = "session_nodes";
        let mut stmt = tx
            .prepare(
                "SELECT n.session_key, n.current_session_id, n.entry_valid, \
                 EXISTS (SELECT 1 FROM session_windows w WHERE w.session_id = n.current_session_id) \
                 FROM session_nodes n WHERE ?1 IS NULL OR n.current_session_id = ?1 \
                 ORDER BY n.session_key",
            )
            .map_err(self.query_err(what))?;
        let rows: Vec<(String, String, i64, bool)> = stmt
            .query_map([session_id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })
            .and_then(|rows| rows.collect())
            .map_err(self.query_err(what))?;
        let mut findings = Vec::new();
        for (session_key, current, entry_valid, has_window) in rows {
            if !has_window {
                findings.push(Finding::MissingWindow {
                    session_key: session_key.clone(),
                    session_id: current,
                });
            }
            if entry_valid == -1 {
                findings.push(Finding::InvalidEntry { session_key });
            }
        }
        Ok(findings)
    }

    /// The findings of one existing window.
    fn window_findings(
        &self,
        tx: &Connection,
        session_id: &str,
        findings: &mut Vec<Finding>,
    ) -> Result<(), SqliteError> {
        let what = format!("check of session {session_id}");
        let err = || self.query_err(what.clone());
        let id = || session_id.to_owned();

        let orphan_key: Option<String> = tx
            .query_row(
                "SELECT w.session_key FROM session_windows w WHERE w.session_id = ?1 \
                 AND NOT EXISTS (SELECT 1 FROM session_nodes n WHERE n.session_key = w.session_key)",
                [session_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(err())?;
        if let Some(session_key) = orphan_key {
            findings.push(Finding::WindowWithoutNode {
                session_id: id(),
                session_key,
            });
        }

        // Rows: seq order, decoded one by one; each decoded row's own `id`.
        let mut seqs = Vec::new();
        let mut lines = Vec::new();
        let mut row_ids: BTreeMap<i64, Option<String>> = BTreeMap::new();
        let mut bad_rows = Vec::new();
        {
            let mut stmt = tx.prepare(self.events_select()).map_err(err())?;
            let mut rows = stmt.query([session_id]).map_err(err())?;
            while let Some(row) = rows.next().map_err(err())? {
                let seq: i64 = row.get(0).map_err(err())?;
                let json = row.get_ref(1).map_err(err())?;
                let zstd = row.get_ref(2).map_err(err())?;
                let stored_len: Option<i64> = row.get(3).map_err(err())?;
                seqs.push(seq);
                match row_text(json, zstd, stored_len) {
                    Ok(text) => {
                        let own_id = parse_value(&text).ok().and_then(|v| {
                            v.get("id")
                                .and_then(|id| id.as_str_lossy())
                                .map(|id| id.into_owned())
                        });
                        row_ids.insert(seq, own_id);
                        lines.push(text);
                    }
                    Err(problem) => {
                        bad_rows.push(Finding::BadRow {
                            session_id: id(),
                            seq,
                            problem,
                        });
                    }
                }
            }
        }
        if let Some(&first_seq) = seqs.first() {
            if first_seq != 0 {
                findings.push(Finding::SeqStart {
                    session_id: id(),
                    first_seq,
                });
            }
            if let Some(pair) = seqs.windows(2).find(|w| w[1] != w[0] + 1) {
                findings.push(Finding::SeqGap {
                    session_id: id(),
                    missing_seq: pair[0] + 1,
                });
            }
        }
        let all_decoded = bad_rows.is_empty();
        findings.append(&mut bad_rows);

        // Identities.
        {
            let mut stmt = tx
                .prepare(
                    "SELECT event_id, seq FROM transcript_event_identities \
                     WHERE session_id = ?1 ORDER BY seq, event_id",
                )
                .map_err(err())?;
            let identities: Vec<(String, i64)> = stmt
                .query_map([session_id], |r| Ok((r.get(0)?, r.get(1)?)))
                .and_then(|rows| rows.collect())
                .map_err(err())?;
            for (event_id, seq) in identities {
                match row_ids.get(&seq) {
                    None if seqs.binary_search(&seq).is_err() => {
                        findings.push(Finding::IdentityWithoutRow {
                            session_id: id(),
                            event_id,
                            seq,
                        });
                    }
                    // An undecodable row is already a finding; its id is unknown.
                    None => {}
                    Some(row_id) if row_id.as_deref() != Some(event_id.as_str()) => {
                        findings.push(Finding::IdentityMismatch {
                            session_id: id(),
                            seq,
                            event_id,
                            row_id: row_id.clone(),
                        });
                    }
                    Some(_) => {}
                }
            }
        }

        // The materialised branch, tolerating rows without identity.
        let active: Vec<(i64, Option<String>)> = {
            let mut stmt = tx
                .prepare(
                    "SELECT a.event_seq, i.event_id FROM session_transcript_active_events a \
                     LEFT JOIN transcript_event_identities i \
                     ON i.session_id = a.session_id AND i.seq = a.event_seq \
                     WHERE a.session_id = ?1 ORDER BY a.active_position",
                )
                .map_err(err())?;
            stmt.query_map([session_id], |r| Ok((r.get(0)?, r.get(1)?)))
                .and_then(|rows| rows.collect())
                .map_err(err())?
        };
        let mut materialised_branch = Vec::with_capacity(active.len());
        for (seq, event_id) in active {
            match event_id {
                Some(event_id) => materialised_branch.push(event_id),
                None => findings.push(Finding::ActiveRowWithoutIdentity {
                    session_id: id(),
                    seq,
                }),
            }
        }

        // Index state.
        let leaf = self.leaf_in(tx, session_id)?;
        let index_row: Option<i64> = tx
            .query_row(
                "SELECT needs_rebuild FROM session_transcript_index_state WHERE session_id = ?1",
                [session_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(err())?;
        match (index_row, leaf.indexed_seq, leaf.max_seq) {
            (None, _, Some(_)) => findings.push(Finding::IndexMissing { session_id: id() }),
            (Some(_), Some(indexed_seq), Some(max_seq)) if indexed_seq < max_seq => {
                findings.push(Finding::IndexBehind {
                    session_id: id(),
                    indexed_seq,
                    max_seq,
                });
            }
            (Some(_), Some(indexed_seq), max_seq) if max_seq.is_none_or(|m| indexed_seq > m) => {
                findings.push(Finding::IndexAhead {
                    session_id: id(),
                    indexed_seq,
                    max_seq,
                });
            }
            _ => {}
        }
        if index_row.is_some_and(|n| n != 0) {
            findings.push(Finding::NeedsRebuild { session_id: id() });
        }

        // Leaf comparison, when every row decoded.
        if all_decoded {
            match self.recompute(session_id, &lines) {
                Ok((recomputed_leaf, recomputed_branch)) => {
                    if leaf.leaf_event_id != recomputed_leaf
                        || materialised_branch != recomputed_branch
                    {
                        findings.push(Finding::LeafDisagrees {
                            session_id: id(),
                            fresh: leaf.fresh,
                            materialised_leaf: leaf.leaf_event_id,
                            recomputed_leaf,
                            materialised_branch,
                            recomputed_branch,
                        });
                    }
                }
                Err(SqliteError::Session { source, .. }) => {
                    findings.push(Finding::NotASession {
                        session_id: id(),
                        message: source.to_string(),
                    });
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}
