//! The leaf and active branch, materialised by OpenClaw and recomputed by us
//! (`openclaw-sqlite.md` §2.8 recommendation, §2.9, §2.13 recipe 5).

use super::{SqliteError, SqliteLeaf, SqliteStore};
use session_format::EntryType;

/// Where [`ResolvedLeaf::leaf_id`] and [`ResolvedLeaf::branch_ids`] come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeafSource {
    /// `session_transcript_index_state` / `session_transcript_active_events`: the index is
    /// fresh ([`SqliteLeaf::fresh`]).
    Materialised,
    /// Recomputed from the rows with our navigation rules, because the index is stale.
    Recomputed,
}

/// One session's leaf and active branch, as OpenClaw materialised them and as our navigation
/// rules recompute them from the rows ([`SqliteStore::resolved_leaf`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResolvedLeaf {
    /// The materialised leaf and whether its index is fresh (§2.8).
    pub materialised: SqliteLeaf,
    /// The materialised active branch, root first (§2.9; stale when the index is).
    pub materialised_branch: Vec<String>,
    /// The leaf our read path computes from the rows: the
    /// [`SessionManager`](crate::SessionManager)'s leaf over the session's JSONL
    /// (`openclaw-jsonl.md` §2.3). `None` for a session without entries.
    pub recomputed_leaf_id: Option<String>,
    /// The path root → recomputed leaf, without the rows §2.9 leaves out of the active branch:
    /// the header, opaque rows and leaf controls (never entries) and `label` entries.
    pub recomputed_branch: Vec<String>,
    /// The leaf to use: the materialised one when the index is fresh, else the recomputed one.
    pub leaf_id: Option<String>,
    /// The active branch to use, root first, from the same source as [`Self::leaf_id`].
    pub branch_ids: Vec<String>,
    /// Which of the two [`Self::leaf_id`] and [`Self::branch_ids`] are.
    pub source: LeafSource,
    /// Whether the materialised and recomputed leaf or branch differ. Expected when the index is
    /// stale; with a fresh index it means OpenClaw's navigation and ours disagree on this
    /// session, which a caller should report (`sessions check` does).
    pub disagrees: bool,
}

impl SqliteStore {
    /// The session's leaf and active branch, read and recomputed from one snapshot (one read
    /// transaction): the materialised ones ([`Self::leaf`], [`Self::active_branch`]) and ours
    /// (the session's rows opened as JSONL, [`Self::open_session`]), compared.
    ///
    /// Which is returned in [`ResolvedLeaf::leaf_id`] / [`ResolvedLeaf::branch_ids`]: with a
    /// fresh index (`needs_rebuild = 0`, an index row, `indexed_seq` = max seq) the
    /// **materialised** one, because it is OpenClaw's own state for the session: what its
    /// runtime continues from and what its own listing shows, so our output matches OpenClaw's;
    /// otherwise (§2.8 recommendation) the **recomputed** one, since the index no longer covers
    /// every row. Both are always in the result, and [`ResolvedLeaf::disagrees`] says whether
    /// they differ, so neither is preferred silently.
    ///
    /// # Errors
    /// [`SqliteError::UnknownSession`] when no `session_windows` row has `session_id`;
    /// [`SqliteError::BadRow`] when a row cannot be decoded; [`SqliteError::Session`] when the
    /// rows do not open as a JSONL session; [`SqliteError::Query`] when the tables cannot be
    /// read.
    pub fn resolved_leaf(&self, session_id: &str) -> Result<ResolvedLeaf, SqliteError> {
        let what = format!("leaf of session {session_id}");
        let tx = self
            .conn
            .unchecked_transaction()
            .map_err(self.query_err(what.clone()))?;
        let materialised = self.leaf_in(&tx, session_id)?;
        let materialised_branch = self.active_branch_in(&tx, session_id)?;
        let lines = self.lines_in(&tx, session_id)?;
        tx.finish().map_err(self.query_err(what))?;
        let (recomputed_leaf_id, recomputed_branch) = self.recompute(session_id, &lines)?;
        let disagrees = materialised.leaf_event_id != recomputed_leaf_id
            || materialised_branch != recomputed_branch;
        let (source, leaf_id, branch_ids) = if materialised.fresh {
            (
                LeafSource::Materialised,
                materialised.leaf_event_id.clone(),
                materialised_branch.clone(),
            )
        } else {
            (
                LeafSource::Recomputed,
                recomputed_leaf_id.clone(),
                recomputed_branch.clone(),
            )
        };
        Ok(ResolvedLeaf {
            materialised,
            materialised_branch,
            recomputed_leaf_id,
            recomputed_branch,
            leaf_id,
            branch_ids,
            source,
            disagrees,
        })
    }

    /// Our leaf and active branch for the rows `lines` of `session_id`.
    pub(crate) fn recompute(
        &self,
        session_id: &str,
        lines: &[Vec<u8>],
    ) -> Result<(Option<String>, Vec<String>), SqliteError> {
        let open = self.open_lines(session_id, lines)?;
        let sm = open.session;
        let leaf = sm.get_leaf_id().map(str::to_owned);
        let branch = sm
            .get_branch(None)
            .iter()
            .filter(|e| e.entry_type() != EntryType::Label)
            .map(|e| e.id().to_owned())
            .collect();
        Ok((leaf, branch))
    }
}
