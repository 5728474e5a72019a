//! The forest behind [`SessionManager::get_tree`] as flat tables (openclaw-jsonl.md §2.5;
//! docs/DEVIATIONS.md D3, D4): one node per entry id, each node's parent after every parent
//! cycle is broken at its member that comes first in the file. [`SessionManager::get_tree`]
//! builds its nodes and children lists from it; [`SessionManager::tree_shape`] only counts, in
//! a few bytes per node.

use super::SessionManager;
use crate::EntryRef;
use crate::index::{NO_ROW, ParentStep};
use crate::rows::RowKind;

/// No parent: the node is a root.
pub(super) const ROOT: u32 = u32::MAX;

/// One node per entry id, as [`SessionManager::get_tree`] numbers them.
pub(super) struct Forest {
    /// Each node's row (the last row with its id), in first-occurrence order of the ids.
    pub(super) rows: Vec<usize>,
    /// Each row's node, or [`NO_ROW`].
    pub(super) node_of_row: Vec<u32>,
    /// Each node's parent node after cycle breaking, or [`ROOT`].
    pub(super) parent: Vec<u32>,
}

impl Forest {
    /// The node at `row`, if that row is a node's.
    pub(super) fn node_at(&self, row: usize) -> Option<usize> {
        self.node_of_row
            .get(row)
            .copied()
            .filter(|&k| k != NO_ROW)
            .map(|k| k as usize)
    }

    /// The forest of `sm`: nodes, their reported parents (a parent that is the node itself or
    /// no entry makes a root), then every cycle of parents broken at its smallest node.
    pub(super) fn of(sm: &SessionManager) -> Forest {
        let ix = &sm.ix;
        let entry_rows: Vec<usize> = sm
            .rows
            .iter()
            .enumerate()
            .filter(|(_, r)| matches!(r.kind, RowKind::Entry(_)))
            .map(|(i, _)| i)
            .collect();
        // Without duplicate ids, every entry row is its id's first and last row.
        let rows: Vec<usize> = if entry_rows.len() == ix.id_order.len() {
            entry_rows
        } else {
            ix.id_order
                .iter()
                .filter_map(|id| ix.by_id.get(id).copied())
                .collect()
        };
        let mut node_of_row: Vec<u32> = vec![NO_ROW; sm.rows.len()];
        for (k, &row) in rows.iter().enumerate() {
            if let Some(slot) = node_of_row.get_mut(row) {
                *slot = u32::try_from(k).unwrap_or(NO_ROW);
            }
        }
        let mut forest = Forest {
            parent: Vec::with_capacity(rows.len()),
            rows,
            node_of_row,
        };
        for &row in &forest.rows {
            let p = match ix.parent_step(row) {
                ParentStep::Row(j) if j != row => forest.node_at(j),
                _ => None,
            };
            forest
                .parent
                .push(p.and_then(|p| u32::try_from(p).ok()).unwrap_or(ROOT));
        }
        forest.break_cycles();
        forest
    }

    /// Makes every node reach a root: a walk up from each node either reaches a node already
    /// known to reach one, a root, or comes round to itself — a cycle, broken by making its
    /// smallest node a root (each cycle once, whichever node the walk started from).
    fn break_cycles(&mut self) {
        const UNSEEN: u8 = 0;
        const ON_WALK: u8 = 1;
        const DONE: u8 = 2;
        let n = self.parent.len();
        let mut state = vec![UNSEEN; n];
        let mut walk: Vec<usize> = Vec::new();
        for start in 0..n {
            if state[start] == DONE {
                continue;
            }
            walk.clear();
            let mut k = start;
            loop {
                match state[k] {
                    DONE => break,
                    ON_WALK => {
                        let at = walk.iter().rposition(|&w| w == k).unwrap_or(0);
                        let breaker = walk[at..].iter().copied().min().unwrap_or(k);
                        self.parent[breaker] = ROOT;
                        break;
                    }
                    _ => {}
                }
                state[k] = ON_WALK;
                walk.push(k);
                match self.parent[k] {
                    ROOT => break,
                    p => k = p as usize,
                }
            }
            for &w in &walk {
                state[w] = DONE;
            }
        }
    }
}

/// The shape of a session's tree ([`SessionManager::tree_shape`]): the counts
/// [`SessionManager::get_tree`]'s forest gives, without building it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TreeShape {
    /// Nodes (entries, each id once).
    pub nodes: usize,
    /// Roots (after cycle breaking).
    pub roots: usize,
    /// The deepest node's depth (roots are 1; 0 without nodes).
    pub depth: usize,
    /// Nodes with two or more children.
    pub branch_points: usize,
    /// Nodes without children (the tips).
    pub leaves: usize,
    /// Nodes with a label ([`TreeNode::label`](crate::TreeNode) `Some`).
    pub labels: usize,
}

impl SessionManager {
    /// The tips of [`SessionManager::get_tree`]'s forest ([`SessionTree::tips`]: nodes without
    /// children, side appends included) as entries, in node order (the file order of their
    /// ids), from flat tables: no nodes or children lists are built.
    ///
    /// [`SessionTree::tips`]: crate::SessionTree::tips
    pub fn tips(&self) -> Vec<EntryRef<'_>> {
        let forest = Forest::of(self);
        let mut has_child = vec![false; forest.parent.len()];
        for &p in &forest.parent {
            if p != ROOT {
                has_child[p as usize] = true;
            }
        }
        forest
            .rows
            .iter()
            .zip(has_child)
            .filter(|&(_, c)| !c)
            .map(|(&row, _)| EntryRef::new(self, row))
            .collect()
    }

    /// The counts of [`SessionManager::get_tree`]'s forest (nodes, roots, depth, branch
    /// points, tips, labelled nodes) from flat tables of a few bytes per node: no nodes,
    /// children lists or label values are built, and no timestamp is read.
    pub fn tree_shape(&self) -> TreeShape {
        let forest = Forest::of(self);
        let n = forest.parent.len();
        let mut children = vec![0u32; n];
        for &p in &forest.parent {
            if p != ROOT {
                children[p as usize] += 1;
            }
        }
        // depth[k] = 1 + depth[parent]; 0 = not yet known. Every walk up ends at a root.
        let mut depth = vec![0u32; n];
        let mut walk: Vec<usize> = Vec::new();
        for start in 0..n {
            let mut k = start;
            while depth[k] == 0 {
                walk.push(k);
                match forest.parent[k] {
                    ROOT => break,
                    p => k = p as usize,
                }
            }
            // A root pushed above still reads 0 here.
            let mut d = depth[k];
            while let Some(w) = walk.pop() {
                d += 1;
                depth[w] = d;
            }
        }
        let labels = self
            .ix
            .labels
            .keys()
            .filter(|target| {
                self.ix
                    .by_id
                    .get(*target)
                    .is_some_and(|&row| forest.node_at(row).is_some())
            })
            .count();
        TreeShape {
            nodes: n,
            roots: forest.parent.iter().filter(|&&p| p == ROOT).count(),
            depth: depth.iter().copied().max().unwrap_or(0) as usize,
            branch_points: children.iter().filter(|&&c| c > 1).count(),
            leaves: children.iter().filter(|&&c| c == 0).count(),
            labels,
        }
    }
}
