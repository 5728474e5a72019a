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

/// An [`Index`] being built by replaying rows in file order, fed in one or more parts (the
/// first half of a large file can be replayed while the second is still being read): the
/// result is [`Index::build`]'s.
///
/// The replay is [`Index::apply`]'s row by row, without writing the cursor after every entry:
/// after a non-side entry the cursor is "that entry's id as `leaf` and `appendParent`, no side
/// parent" whatever it was before, so a run of such entries only remembers the last one's row
/// (`pending`), and the fields are written once, before the next row that reads or changes
/// them otherwise (a side entry, a leaf control, a parent-linked opaque row) and at the end. A
/// non-side entry read in that state has `leafId === appendParentId`, so only a missing
/// `parentId` gives it a logical parent.
#[derive(Debug)]
pub(crate) struct Builder {
    ix: Index,
    /// Rows replayed so far.
    done: usize,
    /// The row of the non-side entry the cursor is after, when not yet written.
    pending: Option<usize>,
    /// Entry rows replayed so far.
    entries: usize,
}

impl Builder {
    /// A builder expecting about `entries` entry rows (the maps are sized for them).
    pub(crate) fn new(entries: usize) -> Builder {
        let mut ix = Index::default();
        ix.by_id.reserve(entries);
        ix.id_order.reserve(entries);
        Builder {
            ix,
            done: 0,
            pending: None,
            entries: 0,
        }
    }

    /// Replays the rows of `rows` not replayed yet (`rows` starts with the rows fed before).
    pub(crate) fn feed(&mut self, rows: &[Row]) {
        let ix = &mut self.ix;
        let mut pending: Option<&Id> = self
            .pending
            .and_then(|p| rows.get(p)?.kind.entry())
            .map(|e| &e.id);
        let mut pending_row = self.pending;
        for (i, row) in rows.iter().enumerate().skip(self.done) {
            match &row.kind {
                RowKind::Entry(e) if !e.side => {
                    match pending {
                        Some(cursor) => {
                            if e.parent == Parent::Absent {
                                ix.logical_parents
                                    .insert(e.id.clone(), Some(cursor.clone()));
                            }
                        }
                        None => ix.entry_logical_parent(e),
                    }
                    ix.record_entry(i, e);
                    self.entries += 1;
                    pending = Some(&e.id);
                    pending_row = Some(i);
                }
                RowKind::Entry(_) | RowKind::Leaf(_) | RowKind::Linked { .. } => {
                    if let Some(cursor) = pending.take() {
                        ix.set_cursor(cursor);
                    }
                    pending_row = None;
                    if row.kind.entry().is_some() {
                        self.entries += 1;
                    }
                    ix.apply(i, row);
                }
                _ => {}
            }
        }
        self.pending = pending_row;
        self.done = self.done.max(rows.len());
    }

    /// The index over all of `rows` (the rows fed so far and any after them).
    pub(crate) fn finish(mut self, rows: &[Row]) -> Index {
        self.feed(rows);
        if let Some(e) = self.pending.and_then(|p| rows.get(p)?.kind.entry()) {
            self.ix.set_cursor(&e.id);
        }
        let mut ix = self.ix;
        ix.rebuild_canon();
        ix.rebuild_children_counted(rows, self.entries);
        ix
    }
}

impl Index {
    /// Replays every row in file order (see [`Builder`]).
    pub(crate) fn build(rows: &[Row]) -> Index {
        let entries = rows
            .iter()
            .filter(|r| matches!(r.kind, RowKind::Entry(_)))
            .count();
        let mut b = Builder::new(entries);
        b.feed(rows);
        b.finish(rows)
    }

    /// The cursor after a non-side entry with this id.
    fn set_cursor(&mut self, id: &Id) {
        self.append_parent = Some(id.clone());
        self.leaf = Some(id.clone());
        self.side_parent = None;
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
        self.entry_logical_parent(e);
        self.record_entry(i, e);
        self.append_parent = Some(e.id.clone());
        if e.side {
            self.side_parent = Some(Some(e.id.clone()));
        } else {
            self.leaf = Some(e.id.clone());
            self.side_parent = None;
        }
    }

    /// Records the logical parent of an entry read at the current cursor (rules (a) and (b)).
    fn entry_logical_parent(&mut self, e: &EntryMeta) {
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
    }

    /// The parts of an entry's replay step that do not touch the cursor: `byId`, the counters
    /// and labels.
    fn record_entry(&mut self, i: usize, e: &EntryMeta) {
        if self.by_id.insert(e.id.clone(), i).is_none() {
            self.id_order.push(e.id.clone());
            self.key_became_known(&e.id);
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
        let entries = rows.iter().filter(|r| r.kind.entry().is_some()).count();
        self.rebuild_children_counted(rows, entries);
    }

    /// [`Index::rebuild_children`], `entries` being the number of entry rows.
    fn rebuild_children_counted(&mut self, rows: &[Row], entries: usize) {
        let mut children = Children::with_rows(rows.len());
        let mut unresolved: Set<Id> = Set::default();
        if entries == self.id_order.len() {
            // No duplicate ids: the entry rows in file order are the `byId` rows in `byId`
            // order, and each is its id's `byId` row, so a `parentId` that is the previous
            // entry's id itself (shared when the rows were read) names that row: no lookup.
            let mut prev: Option<(usize, &Id)> = None;
            for (i, row) in rows.iter().enumerate() {
                if let Some(e) = row.kind.entry() {
                    let target = match (prev, &e.parent) {
                        (Some((j, p)), Parent::Str(s))
                            if Id::same(p, s)
                                && !s.is_empty()
                                && self.logical_parents.is_empty() =>
                        {
                            ChildTarget::Row(j)
                        }
                        _ => self.child_target(e, &mut unresolved),
                    };
                    children.push(i, target);
                    prev = Some((i, &e.id));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The replay one row at a time through [`Index::apply`], writing the cursor after every
    /// row (what [`Builder`] must equal).
    fn replay_row_by_row(rows: &[Row]) -> Index {
        let mut ix = Index::default();
        for (i, row) in rows.iter().enumerate() {
            ix.apply(i, row);
        }
        ix.rebuild_canon();
        // The children index by a lookup of every parent, in `byId` order (no shortcut).
        let mut children = Children::with_rows(rows.len());
        let mut unresolved: Set<Id> = Set::default();
        for id in &ix.id_order {
            let i = ix.by_id[id];
            if let Some(e) = rows[i].kind.entry() {
                children.push(i, ix.child_target(e, &mut unresolved));
            }
        }
        ix.children = children;
        ix.unresolved = unresolved;
        ix
    }

    /// Everything an index answers, as comparable text (maps sorted, orders kept).
    fn summary(ix: &Index, rows: &[Row]) -> String {
        let sorted = |mut v: Vec<String>| {
            v.sort();
            v
        };
        let by_id = sorted(ix.by_id.iter().map(|(k, v)| format!("{k:?}={v}")).collect());
        let opaque = sorted(
            ix.opaque_parents
                .iter()
                .map(|(k, v)| format!("{k:?}={v:?}"))
                .collect(),
        );
        let logical = sorted(
            ix.logical_parents
                .iter()
                .map(|(k, v)| format!("{k:?}={v:?}"))
                .collect(),
        );
        let invalid = sorted(ix.invalid_leaf.iter().map(|k| format!("{k:?}")).collect());
        let canon = ix
            .canon
            .as_ref()
            .map(|c| sorted(c.of.iter().map(|(k, v)| format!("{k:?}={v:?}")).collect()));
        let unresolved = sorted(ix.unresolved.iter().map(|k| format!("{k:?}")).collect());
        let steps: Vec<ParentStep> = (0..rows.len()).map(|i| ix.parent_step(i)).collect();
        let kids: Vec<Vec<usize>> = (0..rows.len())
            .map(|j| ix.children.of_row(j).collect())
            .collect();
        let keyed = sorted(
            ix.children
                .by_key
                .iter()
                .map(|(k, v)| format!("{k:?}={v:?}"))
                .collect(),
        );
        format!(
            "{by_id:?}\n{:?}\n{opaque:?}\n{logical:?}\n{invalid:?}\n{:?}\n{:?} {:?} {:?}\n{} {:?}\n{canon:?}\n{unresolved:?}\n{steps:?}\n{kids:?}\n{keyed:?}",
            ix.id_order,
            ix.labels,
            ix.leaf,
            ix.append_parent,
            ix.side_parent,
            ix.assistants,
            ix.last_session_info,
        )
    }

    const HEAD: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}"#;

    /// Transcripts exercising every cursor rule: side entries, leaf controls (valid and not),
    /// parent-linked opaque rows, missing and `null` parents chained after the cursor,
    /// duplicate ids, labels, branches.
    fn cases() -> Vec<String> {
        let rows: [&[&str]; 5] = [
            &[
                r#"{"type":"message","id":"a","parentId":null,"message":{"role":"user"}}"#,
                r#"{"type":"message","id":"b","parentId":"a","message":{"role":"assistant"}}"#,
                r#"{"type":"message","id":"c","message":{"role":"user"}}"#,
                r#"{"type":"message","id":"d","parentId":"c","appendMode":"side","message":{}}"#,
                r#"{"type":"message","id":"e","parentId":"d","message":{"role":"user"}}"#,
                r#"{"type":"leaf","id":"l1","parentId":"e","targetId":"b"}"#,
                r#"{"type":"message","id":"f","parentId":"l1","message":{"role":"user"}}"#,
                r#"{"type":"message","id":"g","parentId":"b","message":{"role":"user"}}"#,
                r#"{"type":"leaf","id":"l2","parentId":"g","targetId":"zz"}"#,
                r#"{"type":"reset","id":"r","parentId":"g"}"#,
                r#"{"type":"message","id":"h","parentId":"r","message":{"role":"user"}}"#,
                r#"{"type":"message","id":"i"}"#,
                r#"{"type":"leaf","id":"l3","parentId":"i","targetId":"a","appendParentId":"r","appendMode":"side"}"#,
                r#"{"type":"message","id":"j","parentId":"r","message":{"role":"user"}}"#,
                r#"{"type":"message","id":"k","parentId":"j","message":{"role":"user"}}"#,
                r#"{"type":"label","id":"m","parentId":"k","targetId":"a","label":"x","timestamp":"t"}"#,
                r#"{"type":"session_info","id":"n","parentId":"m","name":"x"}"#,
            ],
            &[
                r#"{"type":"message","id":"a","parentId":null}"#,
                r#"{"type":"message","id":"b","parentId":"a"}"#,
                r#"{"type":"message","id":"a","parentId":"b"}"#,
                r#"{"type":"message","id":"c","parentId":"a"}"#,
                r#"{"type":"message","id":"d","parentId":"nope"}"#,
                r#"{"type":"message","id":"e","parentId":null}"#,
                r#"{"type":"message","id":"f","parentId":""}"#,
                r#"{"type":"label","id":"g","parentId":"f","targetId":"a","label":""}"#,
            ],
            &[
                r#"{"type":"message","id":"a","parentId":null}"#,
                r#"{"type":"message","id":"b","parentId":"a","appendMode":"side"}"#,
                r#"{"type":"message","id":"c","parentId":"b","appendMode":"side"}"#,
                r#"{"type":"message","id":"d","parentId":"c"}"#,
                r#"{"type":"message","id":"e","parentId":"d"}"#,
                r#"{"type":"message","id":"f"}"#,
                r#"{"type":"message","id":"g","parentId":null}"#,
            ],
            &[
                r#"{"type":"reset","id":"r1","parentId":null}"#,
                r#"{"type":"message","id":"a","parentId":"r1"}"#,
                r#"{"type":"message","id":"b","parentId":"a"}"#,
                r#"{"type":"reset","id":"r2","parentId":"b"}"#,
                r#"{"type":"message","id":"c","parentId":"r2"}"#,
                r#"{"type":"message","id":"c","parentId":"c"}"#,
                r#"{"type":"message","id":"d","parentId":"c"}"#,
            ],
            &[
                r#"{"type":"message","id":"a","parentId":null}"#,
                r#"{"type":"leaf","id":"l","parentId":"a","targetId":null}"#,
                r#"{"type":"message","id":"b","parentId":null}"#,
                r#"{"type":"message","id":"c","parentId":"b"}"#,
                r#"{"type":"leaf","id":"l","parentId":"c","targetId":"b","appendParentId":null}"#,
                r#"{"type":"message","id":"d","parentId":null}"#,
            ],
        ];
        rows.iter()
            .map(|r| {
                let mut s = String::from(HEAD);
                for line in *r {
                    s.push('\n');
                    s.push_str(line);
                }
                s.push('\n');
                s
            })
            .collect()
    }

    /// The builder, fed whole or in two parts split at any row, gives the index of the replay
    /// row by row.
    #[test]
    fn builder_equals_row_by_row_replay() {
        for case in cases() {
            let rows = crate::rows::load(case.as_bytes()).rows;
            let want = summary(&replay_row_by_row(&rows), &rows);
            assert_eq!(summary(&Index::build(&rows), &rows), want, "{case}");
            for split in 0..=rows.len() {
                let mut b = Builder::new(1);
                b.feed(&rows[..split]);
                let got = b.finish(&rows);
                assert_eq!(summary(&got, &rows), want, "split at {split}: {case}");
            }
        }
    }

    /// The same on every fixture of this crate.
    #[test]
    fn builder_equals_row_by_row_replay_on_fixtures() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut seen = 0;
        for p in session_test_support::files_with_extension(&dir, "jsonl") {
            let Ok(buf) = std::fs::read(&p) else { continue };
            let rows = crate::rows::load(&buf).rows;
            let want = summary(&replay_row_by_row(&rows), &rows);
            assert_eq!(
                summary(&Index::build(&rows), &rows),
                want,
                "{}",
                p.display()
            );
            let mut b = Builder::new(0);
            b.feed(&rows[..rows.len() / 2]);
            assert_eq!(summary(&b.finish(&rows), &rows), want, "{}", p.display());
            seen += 1;
        }
        assert!(seen > 10, "only {seen} fixtures found");
    }
}
