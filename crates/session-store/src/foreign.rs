//! What a write does with lines another writer appended since this manager last read or wrote
//! its file (docs/DEVIATIONS.md D30; the adoption itself is D11).

use crate::id::Id;

/// What a plain append does when another writer appended lines since this manager last read
/// or wrote its file ([`SessionManager::set_foreign_append_policy`](crate::SessionManager::set_foreign_append_policy); docs/DEVIATIONS.md D30).
///
/// Before each plain append, and before the full writes that carry this manager's own new rows
/// (the first assistant message of a session held in memory, [`SessionManager::flush`](crate::SessionManager::flush),
/// [`SessionManager::rewrite_file`](crate::SessionManager::rewrite_file)), the manager checks its file (inside the session write
/// lock when one is set, [`SessionManager::set_write_lock`](crate::SessionManager::set_write_lock)) and adopts the lines another
/// writer appended meanwhile (indexed and kept verbatim, before the rows still held in
/// memory). Under the default policy, [`ForeignAppendPolicy::FastForward`]:
/// - when the other writer's entries continue this manager's leaf (every one of them lies on
///   one chain from the leaf to a single new tip), the leaf and append cursor move to that tip
///   and the new entry is written under it (a fast-forward);
/// - when they start another branch (they do not descend from the leaf, or they end in more
///   than one tip), the write fails with [`AppendError::Diverged`](crate::AppendError::Diverged) naming the other tips, and
///   nothing is written (the other writer's rows stay adopted, so a tip can be branched to;
///   rows held in memory stay held); every later write fails the same way until the caller
///   chooses: it moves the leaf ([`SessionManager::branch`](crate::SessionManager::branch) to a tip or back to its own leaf,
///   [`SessionManager::reset_leaf`](crate::SessionManager::reset_leaf), [`SessionManager::branch_with_summary`](crate::SessionManager::branch_with_summary)) or sets
///   [`ForeignAppendPolicy::AppendOnOwnLeaf`]. A session held in memory whose file another
///   writer answered meanwhile (their entry under the persisted base, beside our held rows) is
///   such a case;
/// - a `Diverged` error always names at least one tip: when every entry of theirs has a child
///   (an id they used was already named as a parent by an older orphan row), the tips are
///   those of the older rows below them (a single one on the chain from the leaf is a
///   fast-forward onto it); entries whose parents only form a cycle continue nothing and have
///   no tip: the cursor stays;
/// - a row that repeats an entry this manager already had, byte for byte (a retried write, a
///   sync tool), is not another writer's entry: it neither diverges nor moves the cursor.
///
/// [`ForeignAppendPolicy::AppendOnOwnLeaf`] is OpenClaw 2026.6.11's behaviour: the lines are
/// adopted and the new entry hangs under this manager's own leaf, a second branch beside the
/// other writer's lines (openclaw-jsonl.md §2.4, §2.12: the reference's cursor never moves for
/// lines it did not write).
///
/// Rules shared by both policies:
/// - full writes that only restate what this manager has (migration, recovery, trailing
///   removal, branched sessions) adopt as D11 describes and judge nothing;
/// - side appends (`appendMode:"side"`, §2.11) are side branches by design: they never make a
///   divergence, and they do not move the leaf;
/// - an append right after an explicit move of the leaf (`branch`, `reset_leaf`,
///   `branch_with_summary`) lands where the caller moved it, whatever another writer added;
/// - other writers' leaf controls never move this manager's cursor;
/// - without the write lock, another writer can still append between the check and this
///   manager's write: its line is then adopted after the fact and the new entry stays under the
///   leaf it was written under (`sessions check` and `sessions tree` show the extra tip);
///   with the lock that window does not exist.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ForeignAppendPolicy {
    /// The default: lines that continue this manager's leaf are adopted and the leaf moves to
    /// their tip before the append; lines that start another branch make the append fail with
    /// [`AppendError::Diverged`](crate::AppendError::Diverged) (nothing is written).
    #[default]
    FastForward,
    /// OpenClaw 2026.6.11's behaviour: the lines are adopted and the append lands under this
    /// manager's own leaf, whatever they hold (a second branch when they continued it).
    AppendOnOwnLeaf,
}

/// The other writer's entries, judged against this manager's leaf.
pub(crate) enum Verdict {
    /// No entry to judge (nothing, or only side appends, opaque rows, leaf controls).
    Nothing,
    /// One chain from the leaf to this row.
    FastForward(usize),
    /// Another branch: its tips (rows, file order).
    Diverged(Vec<usize>),
}

/// The cursor state a failed write puts back.
pub(crate) struct Cursor {
    pub(crate) leaf: Option<Id>,
    pub(crate) append_parent: Option<Id>,
    pub(crate) side_parent: Option<Option<Id>>,
    pub(crate) foreign_since: Option<usize>,
}
