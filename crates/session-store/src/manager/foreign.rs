//! How a manager settles the lines another writer appended to its file before it writes
//! (docs/DEVIATIONS.md D30, D11): the policy, the cursor saved around a write, and the verdict
//! over the adopted rows. The policy type and the rules are in [`crate::foreign`].

use crate::error::AppendError;
use crate::foreign::{Cursor, ForeignAppendPolicy, Verdict};
use crate::id::Id;
use crate::index::{ChildKey, Set};
use crate::rows::Row;
use std::path::Path;

use super::SessionManager;

impl SessionManager {
    /// Chooses what a plain append does with lines another writer appended since this manager
    /// last read or wrote its file (see [`ForeignAppendPolicy`]; docs/DEVIATIONS.md D30). The
    /// default is [`ForeignAppendPolicy::FastForward`];
    /// [`ForeignAppendPolicy::AppendOnOwnLeaf`] is OpenClaw 2026.6.11's behaviour (the next
    /// append after an [`AppendError::Diverged`] then lands under this manager's leaf).
    pub fn set_foreign_append_policy(&mut self, policy: ForeignAppendPolicy) {
        self.foreign_policy = policy;
    }

    /// The policy in effect ([`SessionManager::set_foreign_append_policy`]).
    pub fn foreign_append_policy(&self) -> ForeignAppendPolicy {
        self.foreign_policy
    }

    /// The cursor before [`SessionManager::settle_foreign`], for a failed write to restore.
    pub(crate) fn cursor(&self) -> Cursor {
        Cursor {
            leaf: self.ix.leaf.clone(),
            append_parent: self.ix.append_parent.clone(),
            side_parent: self.ix.side_parent.clone(),
            foreign_since: self.foreign_since,
        }
    }

    /// Puts back a cursor taken by [`SessionManager::cursor`] (only what differs is written,
    /// so an unchanged index stays shared with the warm cache).
    pub(crate) fn restore_cursor(&mut self, c: Cursor) {
        self.foreign_since = c.foreign_since;
        if self.ix.leaf != c.leaf
            || self.ix.append_parent != c.append_parent
            || self.ix.side_parent != c.side_parent
        {
            let ix = &mut *self.ix;
            (ix.leaf, ix.append_parent, ix.side_parent) = (c.leaf, c.append_parent, c.side_parent);
        }
    }

    /// Before a plain append to `path`, after the catch-up: judges the other writer's rows
    /// adopted since the last append or explicit move of the leaf, and fast-forwards to their
    /// tip or refuses, as [`ForeignAppendPolicy`] says. Returns true when the cursor moved.
    ///
    /// # Errors
    /// [`AppendError::Diverged`] (nothing changed; the rows stay adopted and judged again by
    /// the next append).
    pub(crate) fn settle_foreign(&mut self, path: &Path) -> Result<bool, AppendError> {
        self.settle_foreign_until(path, self.rows.len())
    }

    /// [`SessionManager::settle_foreign`] of the other writer's rows before row `until` (a
    /// full write: the rows still held in memory follow the adopted ones and are this
    /// manager's own).
    ///
    /// # Errors
    /// [`AppendError::Diverged`], as [`SessionManager::settle_foreign`].
    pub(crate) fn settle_foreign_until(
        &mut self,
        path: &Path,
        until: usize,
    ) -> Result<bool, AppendError> {
        let Some(since) = self.foreign_since else {
            return Ok(false);
        };
        if self.pinned || self.foreign_policy == ForeignAppendPolicy::AppendOnOwnLeaf {
            self.foreign_since = None;
            return Ok(false);
        }
        match self.foreign_verdict(since, until.min(self.rows.len())) {
            Verdict::Nothing => {
                self.foreign_since = None;
                Ok(false)
            }
            Verdict::FastForward(tip) => {
                self.foreign_since = None;
                let Some(id) = self.rows[tip].kind.entry().map(|e| e.id.clone()) else {
                    return Ok(false);
                };
                let ix = &mut *self.ix;
                ix.leaf = Some(id.clone());
                ix.append_parent = Some(id);
                ix.side_parent = None;
                Ok(true)
            }
            Verdict::Diverged(tips) => Err(AppendError::Diverged {
                path: path.to_path_buf(),
                leaf: self.ix.leaf.as_ref().map(|l| l.text().to_owned()),
                tips: tips
                    .iter()
                    .filter_map(|&i| self.rows[i].kind.entry().map(|e| e.id.text().to_owned()))
                    .collect(),
            }),
        }
    }

    /// Judges the entry rows `since..until` (the other writer's, file order) against the leaf.
    /// A `Diverged` verdict always names at least one tip.
    fn foreign_verdict(&self, since: usize, until: usize) -> Verdict {
        let rows: &[Row] = &self.rows;
        // The other writer's entries that are not side appends (the row each id names), less
        // the rows that repeat a row this manager already had byte for byte (a retried write,
        // a sync tool): they add nothing, so they start no branch.
        let named: Vec<usize> = (since..until)
            .filter(|&i| {
                rows[i]
                    .kind
                    .entry()
                    .is_some_and(|e| !e.side && self.ix.by_id.get(&e.id).copied() == Some(i))
            })
            .collect();
        let members = self.without_repeats(since, named);
        if members.is_empty() {
            return Verdict::Nothing;
        }
        let member_set: Set<usize> = members.iter().copied().collect();
        let mut tips: Vec<usize> = members
            .iter()
            .copied()
            .filter(|&i| !self.has_main_child(i))
            .collect();
        // Every entry of theirs has a child: an id they used was already named as a parent in
        // the file (an orphan waiting for it), so older rows now hang below theirs. The tips
        // are then those rows' tips (the chain goes on through them).
        let below = if tips.is_empty() {
            let below = self.descendants(&members, &member_set);
            tips = below
                .iter()
                .copied()
                .filter(|&i| !self.has_main_child(i))
                .collect();
            below
        } else {
            Set::default()
        };
        if tips.is_empty() {
            // No tip even below them: their parent links form a cycle (following children
            // from a row ends at a row without any unless the rows loop, and a row in a loop
            // has its parent in the loop, so no chain from the leaf enters it). Nothing of
            // theirs continues the leaf and there is no tip to name: the cursor stays.
            return Verdict::Nothing;
        }
        let [tip] = tips[..] else {
            return Verdict::Diverged(tips);
        };
        // One chain: from the tip up through reported parents, every member (and the older
        // rows below them), then the leaf.
        let leaf_row = self.leaf_row();
        let mut i = tip;
        let mut visited = 0usize;
        let mut steps = 0usize;
        loop {
            if Some(i) == leaf_row {
                break;
            }
            let member = member_set.contains(&i);
            if !(member || below.contains(&i)) || steps > members.len() + below.len() {
                return Verdict::Diverged(tips);
            }
            steps += 1;
            visited += usize::from(member);
            match self.parent_row(i) {
                Some(p) => i = p,
                // The root: the chain descends from the leaf only when there is none.
                None if self.ix.leaf.is_none() => break,
                None => return Verdict::Diverged(tips),
            }
        }
        if visited == members.len() {
            Verdict::FastForward(tip)
        } else {
            Verdict::Diverged(tips)
        }
    }

    /// `rows` (entry rows from `since` on) less those equal byte for byte to an entry row
    /// before `since` with the same id.
    fn without_repeats(&self, since: usize, rows: Vec<usize>) -> Vec<usize> {
        if rows.is_empty() || since == 0 {
            return rows;
        }
        let ids: Set<&Id> = rows
            .iter()
            .filter_map(|&i| self.rows[i].kind.entry().map(|e| &e.id))
            .collect();
        let mut earlier: crate::index::Map<&Id, Vec<usize>> = crate::index::Map::default();
        for (j, row) in self.rows[..since].iter().enumerate() {
            if let Some(e) = row.kind.entry().filter(|e| ids.contains(&e.id)) {
                earlier.entry(&e.id).or_default().push(j);
            }
        }
        if earlier.is_empty() {
            return rows;
        }
        let bytes = |i: usize| self.rows[i].bytes(&self.buf);
        rows.into_iter()
            .filter(|&i| {
                let repeat = self.rows[i].kind.entry().is_some_and(|e| {
                    earlier
                        .get(&e.id)
                        .is_some_and(|js| js.iter().any(|&j| bytes(j) == bytes(i)))
                });
                !repeat
            })
            .collect()
    }

    /// The rows below `members` (following children that are not side appends) that are not
    /// members themselves.
    fn descendants(&self, members: &[usize], member_set: &Set<usize>) -> Set<usize> {
        let mut below: Set<usize> = Set::default();
        let mut todo: Vec<usize> = members.to_vec();
        while let Some(i) = todo.pop() {
            for c in self.main_children(i) {
                if !member_set.contains(&c) && below.insert(c) {
                    todo.push(c);
                }
            }
        }
        below
    }

    /// The row the leaf names.
    fn leaf_row(&self) -> Option<usize> {
        self.ix
            .leaf
            .as_ref()
            .and_then(|l| self.ix.by_id.get(l).copied())
    }

    /// The row of an entry's reported parent (`normalizeEntryParent`, §2.3) when it is an
    /// entry.
    fn parent_row(&self, i: usize) -> Option<usize> {
        let e = self.rows[i].kind.entry()?;
        let parent = self.ix.normalized_parent(&e.id, &e.parent);
        parent
            .truthy()
            .and_then(|p| self.ix.by_id.get(p).copied())
            .filter(|&p| p != i)
    }

    /// True when the entry at row `i` has a child that is not a side append.
    fn has_main_child(&self, i: usize) -> bool {
        self.main_children(i).next().is_some()
    }

    /// The children of the entry at row `i` that are not side appends (by row, then by id).
    fn main_children(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        let not_side = |c: &usize| self.rows[*c].kind.entry().is_some_and(|e| !e.side);
        let by_id = self.rows[i].kind.entry().map_or(&[][..], |e| {
            self.ix.children.of_key(&ChildKey::Id(e.id.clone()))
        });
        self.ix
            .children
            .of_row(i)
            .chain(by_id.iter().copied())
            .filter(not_side)
    }
}
