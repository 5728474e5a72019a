//! The navigation indexes and their replay over rows in file order, exactly as OpenClaw
//! 2026.6.11's `buildIndex` (openclaw-jsonl.md §2.3; FINDINGS a, f): leaf controls with
//! known-reference validation, parent-linked opaque rows moving the append cursor, logical
//! parents by rules (a) and (b), labels with timestamps in Map insertion order. Rule (c) and
//! reset boundaries do not exist in 2026.6.11.

use std::collections::{HashMap, HashSet};

use indexmap::IndexMap;
use session_format::entry::EntryType;
use session_format::json::JsValue;

use crate::deep::clone_value;
use crate::id::Id;
use crate::rows::{EntryMeta, LeafMeta, MsgShape, Parent, Row, RowKind};

/// The hasher of the id maps: foldhash (fast, good distribution on patterned keys such as
/// `%08d` ids, randomly seeded per map).
pub(crate) type HashState = foldhash::fast::RandomState;
/// `HashMap` with [`HashState`].
pub(crate) type Map<K, V> = HashMap<K, V, HashState>;
/// `HashSet` with [`HashState`].
pub(crate) type Set<K> = HashSet<K, HashState>;

/// A resolved parent reference: what `normalizeEntryParent` yields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Resolved {
    /// `undefined` (a row without `parentId` and without a logical parent).
    Absent,
    /// `null`.
    Null,
    /// An id (a canonical entry, or `""`).
    Id(Id),
}

impl Resolved {
    pub(crate) fn as_id(&self) -> Option<&Id> {
        match self {
            Resolved::Id(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn from_opt(v: Option<Id>) -> Self {
        v.map_or(Resolved::Null, Resolved::Id)
    }

    /// The id when it is a usable (truthy) reference.
    pub(crate) fn truthy(&self) -> Option<&Id> {
        self.as_id().filter(|s| !s.is_empty())
    }

    pub(crate) fn same_as(&self, raw: &Parent) -> bool {
        match (self, raw) {
            (Resolved::Absent, Parent::Absent) | (Resolved::Null, Parent::Null) => true,
            (Resolved::Id(a), Parent::Str(b)) => a == b,
            _ => false,
        }
    }

    pub(crate) fn to_value(&self) -> Option<JsValue> {
        match self {
            Resolved::Absent => None,
            Resolved::Null => Some(JsValue::Null),
            Resolved::Id(s) => Some(s.to_value()),
        }
    }
}

/// A label as the index holds it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LabelState {
    pub(crate) label: JsValue,
    pub(crate) timestamp: Option<JsValue>,
}

/// The indexes (`byId`, `opaqueParentsById`, `logicalParentsById`, `invalidLeafControlIds`,
/// `labelsById`/`labelTimestampsById`, `leafId`, `appendParentId`, the side cursor), plus a
/// children index, the memoised canonical resolution of every opaque id, and counters the
/// reference computes by scanning.
#[derive(Clone, Debug, Default)]
pub(crate) struct Index {
    /// id → row (the last row with that id).
    pub(crate) by_id: Map<Id, usize>,
    /// Ids in first-insertion order (JavaScript Map order of `byId`).
    pub(crate) id_order: Vec<Id>,
    opaque_parents: Map<Id, Option<Id>>,
    pub(crate) logical_parents: Map<Id, Option<Id>>,
    pub(crate) invalid_leaf: Set<Id>,
    pub(crate) labels: IndexMap<Id, LabelState, HashState>,
    pub(crate) leaf: Option<Id>,
    pub(crate) append_parent: Option<Id>,
    /// `promptReleasedSideBranchParentId`: `None` = undefined.
    pub(crate) side_parent: Option<Option<Id>>,
    /// `message` rows whose role is `assistant` (any branch, duplicates counted).
    pub(crate) assistants: usize,
    /// The last `session_info` row in file order.
    pub(crate) last_session_info: Option<usize>,
    /// Normalised parent → children rows (the `byId` rows), in `byId` order, and each `byId`
    /// row's parent row.
    pub(crate) children: Children,
    /// Raw `parentId`s of children-index rows that named no known row when their parent was
    /// normalised: if one becomes known, the children index must be rebuilt.
    unresolved: Set<Id>,
    /// `resolveCanonicalParentId` of every opaque id, once the replay is done (`None` while
    /// it runs: resolutions then walk the chain).
    canon: Option<Canon>,
}

/// The memoised canonical resolution of every key of `opaque_parents` (path compression:
/// each chain is walked once, so entries hanging off a long chain of opaque rows cost O(1)
/// each).
#[derive(Clone, Debug, Default)]
struct Canon {
    of: Map<Id, Option<Id>>,
    /// Ids (WTF-8) a chain ended on because they were unknown: if one becomes known, the
    /// table is rebuilt.
    dangling: Set<Box<[u8]>>,
}

/// No row (the end of a list or of a walk).
pub(crate) const NO_ROW: u32 = u32::MAX;
/// The reported parent is an id that names no entry row (a walk must go on through opaque
/// rows by id).
const OTHER_ROW: u32 = u32::MAX - 1;

/// The children index, by row: every `byId` row whose reported parent is an entry is linked
/// into that entry's list (first child, next sibling) and records the parent's row, so walks
/// and tree builds follow integers instead of hashing ids. Children of anything else (absent,
/// `null`, `""`, an id that names no entry) are kept by key.
#[derive(Clone, Debug, Default)]
pub(crate) struct Children {
    /// Per row: the `byId` row of its reported parent, [`NO_ROW`] when the parent is absent,
    /// null or `""` (or the row is not a `byId` row), [`OTHER_ROW`] when it is an id without
    /// an entry.
    parent: Vec<u32>,
    /// Per row: its first and last child ([`NO_ROW`] = none).
    first: Vec<u32>,
    last: Vec<u32>,
    /// Per row: its next sibling.
    next: Vec<u32>,
    /// Children whose reported parent is not an entry row, by that parent.
    by_key: Map<ChildKey, Vec<usize>>,
}

/// Where a child goes in [`Children`].
enum ChildTarget {
    /// Under the entry at this row.
    Row(usize),
    /// Under a parent that is not an entry row.
    Key(ChildKey),
}

/// One step of a walk towards the root (see [`Index::parent_step`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ParentStep {
    /// The reported parent is the entry at this row.
    Row(usize),
    /// No usable parent (absent, `null`, `""`): the walk ends.
    End,
    /// The parent is an id that names no entry (or the row is unknown): walk by id.
    ById,
}

fn row32(i: usize) -> u32 {
    u32::try_from(i)
        .ok()
        .filter(|&r| r < OTHER_ROW)
        .unwrap_or(NO_ROW)
}

impl Children {
    fn with_rows(n: usize) -> Self {
        Children {
            parent: vec![NO_ROW; n],
            first: vec![NO_ROW; n],
            last: vec![NO_ROW; n],
            next: vec![NO_ROW; n],
            by_key: Map::default(),
        }
    }

    fn grow(&mut self, n: usize) {
        if self.parent.len() < n {
            self.parent.resize(n, NO_ROW);
            self.first.resize(n, NO_ROW);
            self.last.resize(n, NO_ROW);
            self.next.resize(n, NO_ROW);
        }
    }

    /// Appends row `i` to its parent's list.
    fn push(&mut self, i: usize, target: ChildTarget) {
        self.grow(i + 1);
        match target {
            ChildTarget::Row(j) if row32(j) != NO_ROW && row32(i) != NO_ROW => {
                self.grow(j + 1);
                self.parent[i] = row32(j);
                match self.last[j] {
                    NO_ROW => self.first[j] = row32(i),
                    l => self.next[l as usize] = row32(i),
                }
                self.last[j] = row32(i);
            }
            ChildTarget::Row(_) => {
                // Beyond u32 rows: never reached for real files (a row is at least 2 bytes).
                self.parent[i] = OTHER_ROW;
            }
            ChildTarget::Key(key) => {
                self.parent[i] = match &key {
                    ChildKey::Id(id) if !id.is_empty() => OTHER_ROW,
                    _ => NO_ROW,
                };
                self.by_key.entry(key).or_default().push(i);
            }
        }
    }

    /// The children of the entry at row `j`, in `byId` order.
    pub(crate) fn of_row(&self, j: usize) -> impl Iterator<Item = usize> + '_ {
        let mut cur = self.first.get(j).copied().unwrap_or(NO_ROW);
        std::iter::from_fn(move || {
            if cur == NO_ROW {
                return None;
            }
            let i = cur as usize;
            cur = self.next.get(i).copied().unwrap_or(NO_ROW);
            Some(i)
        })
    }

    /// The children kept by key (parents that are not entry rows).
    pub(crate) fn of_key(&self, key: &ChildKey) -> &[usize] {
        self.by_key.get(key).map_or(&[], Vec::as_slice)
    }
}

/// Key of the children index.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ChildKey {
    Absent,
    Null,
    Id(Id),
}

impl From<&Resolved> for ChildKey {
    fn from(r: &Resolved) -> Self {
        match r {
            Resolved::Absent => ChildKey::Absent,
            Resolved::Null => ChildKey::Null,
            Resolved::Id(s) => ChildKey::Id(s.clone()),
        }
    }
}

/// What a valid leaf control sets.
pub(crate) struct LeafState {
    pub(crate) leaf: Option<Id>,
    pub(crate) append_parent: Option<Id>,
    pub(crate) side: bool,
}

impl Index {
    /// Replays every row in file order.
    pub(crate) fn build(rows: &[Row]) -> Index {
        let mut ix = Index::default();
        let entries = rows
            .iter()
            .filter(|r| matches!(r.kind, RowKind::Entry(_)))
            .count();
        ix.by_id.reserve(entries);
        ix.id_order.reserve(entries);
        for (i, row) in rows.iter().enumerate() {
            ix.apply(i, row);
        }
        ix.rebuild_canon();
        ix.rebuild_children(rows);
        ix
    }

    /// Replays `rows[from..]` (rows just added after the rows this index was built from) and
    /// keeps the children index equal to what [`Index::build`] over all of `rows` gives: new
    /// rows are added to it one by one unless one of them carries an id that was already known
    /// or that an earlier row named without finding it (its parent resolution, or an opaque
    /// chain, then changes), in which case it is rebuilt (no row is parsed either way).
    pub(crate) fn extend(&mut self, rows: &[Row], from: usize) {
        let mut rebuild = false;
        for (i, row) in rows.iter().enumerate().skip(from) {
            if !rebuild && let Some(id) = row_id(row) {
                rebuild = self.by_id.contains_key(id)
                    || self.opaque_parents.contains_key(id)
                    || self.unresolved.contains(id)
                    || self
                        .canon
                        .as_ref()
                        .is_some_and(|c| c.dangling.contains(id.as_bytes()));
            }
            self.apply(i, row);
            if !rebuild && let Some(meta) = row.kind.entry() {
                self.add_child(i, meta);
            }
        }
        if rebuild {
            self.rebuild_children(rows);
        }
    }

    /// Applies one row (the replay step).
    pub(crate) fn apply(&mut self, i: usize, row: &Row) {
        match &row.kind {
            RowKind::Leaf(leaf) => self.apply_leaf(leaf),
            RowKind::Linked { id, parent } => {
                self.insert_opaque(id.clone(), parent.clone());
                self.append_parent = Some(id.clone());
                if self.side_parent.is_some() {
                    self.side_parent = Some(Some(id.clone()));
                }
            }
            RowKind::Entry(e) => self.apply_entry(i, e),
            _ => {}
        }
    }

    fn apply_leaf(&mut self, leaf: &LeafMeta) {
        match self.resolve_leaf_control(leaf) {
            None => {
                self.invalid_leaf.insert(leaf.id.clone());
                let p = self.resolve_opaque_append_parent(leaf.parent.as_ref());
                self.insert_opaque(leaf.id.clone(), p);
            }
            Some(state) => {
                self.insert_opaque(leaf.id.clone(), state.leaf.clone());
                self.leaf = state.leaf;
                self.side_parent = state.side.then(|| state.append_parent.clone());
                self.append_parent = state.append_parent;
            }
        }
    }

    fn apply_entry(&mut self, i: usize, e: &EntryMeta) {
        let chained_after_cursor = !e.side
            && match (&e.parent, &self.append_parent) {
                (Parent::Null, None) => true,
                (Parent::Str(p), Some(a)) => p == a,
                _ => false,
            }
            && self.leaf != self.append_parent;
        if e.parent == Parent::Absent || chained_after_cursor {
            self.logical_parents.insert(e.id.clone(), self.leaf.clone());
        }
        if self.by_id.insert(e.id.clone(), i).is_none() {
            self.id_order.push(e.id.clone());
            self.key_became_known(&e.id);
        }
        self.append_parent = Some(e.id.clone());
        if e.side {
            self.side_parent = Some(Some(e.id.clone()));
        } else {
            self.leaf = Some(e.id.clone());
            self.side_parent = None;
        }
        if e.msg == Some(MsgShape::Assistant) {
            self.assistants += 1;
        }
        if e.ty == EntryType::SessionInfo {
            self.last_session_info = Some(i);
        }
        if let Some(l) = &e.label
            && let Some(target) = &l.target
        {
            match &l.label {
                Some(label) if label.is_truthy() => {
                    self.labels.insert(
                        target.clone(),
                        LabelState {
                            label: clone_value(label),
                            timestamp: l.timestamp.as_ref().map(clone_value),
                        },
                    );
                }
                _ => {
                    self.labels.shift_remove(target);
                }
            }
        }
    }

    /// The opaque parent of an opaque id (`Some(None)` = null; `None` = not an opaque id).
    pub(crate) fn opaque_parent(&self, id: &[u8]) -> Option<Option<&Id>> {
        self.opaque_parents.get(id).map(Option::as_ref)
    }

    /// True when `id` is the id of a parent-linked opaque row or a leaf control.
    pub(crate) fn is_opaque(&self, id: &[u8]) -> bool {
        self.opaque_parents.contains_key(id)
    }

    /// Records an opaque row (`opaqueParentsById.set`), keeping the canonical table valid.
    pub(crate) fn insert_opaque(&mut self, id: Id, parent: Option<Id>) {
        let replaced = self.opaque_parents.insert(id.clone(), parent);
        if replaced.is_some() {
            // A changed edge: every memoised chain through it may change.
            if self.canon.is_some() {
                self.rebuild_canon();
            }
        } else {
            self.key_became_known(&id);
            if let Some(mut canon) = self.canon.take() {
                let r = self.walk_canonical(Some(id.as_bytes()), &mut canon);
                canon.of.insert(id, r);
                self.canon = Some(canon);
            }
        }
    }

    /// A new key of `byId` or `opaqueParentsById`: chains that ended on it as unknown now go on.
    fn key_became_known(&mut self, id: &Id) {
        if self
            .canon
            .as_ref()
            .is_some_and(|c| c.dangling.contains(id.as_bytes()) || c.of.contains_key(id))
        {
            self.rebuild_canon();
        }
    }

    /// Recomputes the canonical table from scratch (O(opaque rows)).
    pub(crate) fn rebuild_canon(&mut self) {
        let mut canon = Canon::default();
        let keys: Vec<Id> = self.opaque_parents.keys().cloned().collect();
        for k in keys {
            if !canon.of.contains_key(&k) {
                let r = self.walk_canonical(Some(k.as_bytes()), &mut canon);
                canon.of.insert(k, r);
            }
        }
        self.canon = Some(canon);
    }

    /// `resolveCanonicalParentId` by walking, memoising every opaque id on the walk into
    /// `canon` (path compression).
    fn walk_canonical(&self, start: Option<&[u8]>, canon: &mut Canon) -> Option<Id> {
        let mut path: Vec<&Id> = Vec::new();
        let mut on_path: Set<&[u8]> = Set::default();
        let mut cur = start;
        let result = loop {
            match cur {
                None => break None,
                Some(b"") => break Some(Id::from("")),
                Some(c) => {
                    if let Some((k, _)) = self.by_id.get_key_value(c) {
                        break Some(k.clone());
                    }
                    if let Some(r) = canon.of.get(c) {
                        break r.clone();
                    }
                    let Some((k, parent)) = self.opaque_parents.get_key_value(c) else {
                        canon.dangling.insert(c.into());
                        break None;
                    };
                    if !on_path.insert(c) {
                        break None;
                    }
                    path.push(k);
                    cur = parent.as_ref().map(Id::as_bytes);
                }
            }
        };
        for k in path {
            canon.of.insert(k.clone(), result.clone());
        }
        result
    }

    /// `resolveOpaqueLeafControl`.
    pub(crate) fn resolve_leaf_control(&self, leaf: &LeafMeta) -> Option<LeafState> {
        let known = |id: Option<&Id>| match id {
            None => true,
            Some(id) => {
                self.by_id.contains_key(id)
                    || (self.opaque_parents.contains_key(id) && !self.invalid_leaf.contains(id))
            }
        };
        if !known(leaf.target.as_ref())
            || leaf
                .append_parent
                .as_ref()
                .is_some_and(|ap| !known(ap.as_ref()))
        {
            return None;
        }
        let leaf_id = self.resolve_leaf_target(leaf.target.as_ref());
        let append_parent = match &leaf.append_parent {
            None => leaf_id.clone(),
            Some(ap) => self.resolve_opaque_append_parent(ap.as_ref()),
        };
        Some(LeafState {
            leaf: leaf_id,
            append_parent,
            side: leaf.side,
        })
    }

    /// `resolveOpaqueLeafTargetId`.
    pub(crate) fn resolve_leaf_target(&self, target: Option<&Id>) -> Option<Id> {
        match target {
            None => None,
            Some(t) if self.by_id.contains_key(t) => Some(t.clone()),
            Some(t) => self.resolve_canonical(Some(t.as_bytes())),
        }
    }

    /// `resolveOpaqueAppendParentId`.
    pub(crate) fn resolve_opaque_append_parent(&self, id: Option<&Id>) -> Option<Id> {
        match id {
            None => None,
            Some(p) if self.by_id.contains_key(p) || self.opaque_parents.contains_key(p) => {
                Some(p.clone())
            }
            Some(p) => self.resolve_canonical(Some(p.as_bytes())),
        }
    }

    /// `resolveCanonicalParentId`: walks opaque parents until a canonical id; an unknown id, a
    /// cycle, or `null` gives `None`. `""` is returned as is (JavaScript stops on falsy ids).
    /// O(1) once the replay is done (memoised); a walk with a seen-set during the replay.
    pub(crate) fn resolve_canonical(&self, start: Option<&[u8]>) -> Option<Id> {
        let c = start?;
        if c.is_empty() {
            return Some(Id::from(""));
        }
        if let Some((k, _)) = self.by_id.get_key_value(c) {
            return Some(k.clone());
        }
        if let Some(canon) = &self.canon {
            return canon.of.get(c).cloned().flatten();
        }
        let mut seen: Set<&[u8]> = Set::default();
        let mut cur = Some(c);
        loop {
            match cur {
                None => return None,
                Some(b"") => return Some(Id::from("")),
                Some(c) => {
                    if let Some((k, _)) = self.by_id.get_key_value(c) {
                        return Some(k.clone());
                    }
                    if !seen.insert(c) {
                        return None;
                    }
                    cur = self
                        .opaque_parents
                        .get(c)
                        .and_then(|p| p.as_ref().map(Id::as_bytes));
                }
            }
        }
    }

    /// The parent `normalizeEntryParent` reports for a row with this id and raw `parentId`.
    pub(crate) fn normalized_parent(&self, id: &Id, raw: &Parent) -> Resolved {
        if let Some(logical) = self.logical_parents.get(id) {
            return Resolved::from_opt(logical.clone());
        }
        match raw {
            Parent::Absent => Resolved::Absent,
            Parent::Null | Parent::Other => Resolved::Null,
            Parent::Str(s) => Resolved::from_opt(self.resolve_canonical(Some(s.as_bytes()))),
        }
    }

    /// `resolveBranchTargetId`: a canonical id, or an opaque id's canonical ancestor
    /// (`Some(None)` when the ancestor chain ends at null), or `None` when unknown.
    pub(crate) fn resolve_branch_target(&self, id: &[u8]) -> Option<Option<Id>> {
        if let Some((k, _)) = self.by_id.get_key_value(id) {
            return Some(Some(k.clone()));
        }
        if !self.opaque_parents.contains_key(id) {
            return None;
        }
        Some(self.resolve_canonical(Some(id)))
    }

    /// Rebuilds the children index from the `byId` rows, in `byId` order.
    pub(crate) fn rebuild_children(&mut self, rows: &[Row]) {
        let mut children = Children::with_rows(rows.len());
        let mut unresolved: Set<Id> = Set::default();
        let entries = rows.iter().filter(|r| r.kind.entry().is_some()).count();
        if entries == self.id_order.len() {
            // No duplicate ids: the entry rows in file order are the `byId` rows in `byId`
            // order.
            for (i, row) in rows.iter().enumerate() {
                if let Some(e) = row.kind.entry() {
                    children.push(i, self.child_target(e, &mut unresolved));
                }
            }
        } else {
            for id in &self.id_order {
                let Some(&i) = self.by_id.get(id) else {
                    continue;
                };
                let Some(e) = rows.get(i).and_then(|r| r.kind.entry()) else {
                    continue;
                };
                children.push(i, self.child_target(e, &mut unresolved));
            }
        }
        self.children = children;
        self.unresolved = unresolved;
    }

    /// Adds a newly appended row (already applied, its id new) to the children index.
    pub(crate) fn add_child(&mut self, i: usize, e: &EntryMeta) {
        let mut unresolved = std::mem::take(&mut self.unresolved);
        let target = self.child_target(e, &mut unresolved);
        self.unresolved = unresolved;
        self.children.push(i, target);
    }

    /// Where an entry goes in the children index: under its reported parent
    /// ([`Index::normalized_parent`]). Records the raw `parentId` in `unresolved` when it is
    /// looked up and names no known row (no entry, no opaque row).
    fn child_target(&self, e: &EntryMeta, unresolved: &mut Set<Id>) -> ChildTarget {
        let logical = if self.logical_parents.is_empty() {
            None
        } else {
            self.logical_parents.get(&e.id)
        };
        let resolved = match (logical, &e.parent) {
            (Some(l), _) => Resolved::from_opt(l.clone()),
            (None, Parent::Absent) => Resolved::Absent,
            (None, Parent::Null | Parent::Other) => Resolved::Null,
            (None, Parent::Str(s)) => {
                if !s.is_empty() {
                    if let Some(&j) = self.by_id.get(s) {
                        return ChildTarget::Row(j);
                    }
                    if !self.opaque_parents.contains_key(s) {
                        unresolved.insert(s.clone());
                    }
                }
                Resolved::from_opt(self.resolve_canonical(Some(s.as_bytes())))
            }
        };
        match &resolved {
            Resolved::Id(id) if !id.is_empty() => match self.by_id.get(id) {
                Some(&j) => ChildTarget::Row(j),
                None => ChildTarget::Key(ChildKey::Id(id.clone())),
            },
            r => ChildTarget::Key(ChildKey::from(r)),
        }
    }

    /// The next step from the `byId` row `i` towards the root: the row of its reported parent
    /// when that is an entry ([`EntryRef::resolved_parent`](crate::EntryRef) followed
    /// by `byId`).
    pub(crate) fn parent_step(&self, i: usize) -> ParentStep {
        match self.children.parent.get(i).copied() {
            None | Some(OTHER_ROW) => ParentStep::ById,
            Some(NO_ROW) => ParentStep::End,
            Some(j) => ParentStep::Row(j as usize),
        }
    }

    /// True when an id is taken by an entry or an opaque row.
    pub(crate) fn id_taken(&self, id: &str) -> bool {
        self.by_id.contains_key(id.as_bytes()) || self.opaque_parents.contains_key(id.as_bytes())
    }
}

/// The id a row adds to the index (entries, parent-linked opaque rows, leaf controls).
fn row_id(row: &Row) -> Option<&Id> {
    match &row.kind {
        RowKind::Entry(e) => Some(&e.id),
        RowKind::Linked { id, .. } => Some(id),
        RowKind::Leaf(l) => Some(&l.id),
        _ => None,
    }
}
