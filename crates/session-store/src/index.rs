//! The navigation indexes and their replay over rows in file order, exactly as OpenClaw
//! 2026.6.11's `buildIndex` (openclaw-jsonl.md §2.3; FINDINGS a, f): leaf controls with
//! known-reference validation, parent-linked opaque rows moving the append cursor, logical
//! parents by rules (a) and (b), labels with timestamps in Map insertion order. Rule (c) and
//! reset boundaries do not exist in 2026.6.11.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use indexmap::IndexMap;
use session_format::entry::EntryType;
use session_format::json::JsValue;

use crate::rows::{EntryMeta, LeafMeta, MsgShape, Parent, Row, RowKind};

/// A small, fast, non-cryptographic hasher (the rustc "Fx" scheme) for the id maps: ids come
/// from local files, and SipHash dominated index time on large transcripts.
#[derive(Default, Clone, Copy, Debug)]
pub(crate) struct FxHasher {
    hash: u64,
}

const FX_SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(FX_SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

/// `HashMap` with [`FxHasher`].
pub(crate) type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;
/// `HashSet` with [`FxHasher`].
pub(crate) type FxSet<K> = HashSet<K, BuildHasherDefault<FxHasher>>;

/// A resolved parent reference: what `normalizeEntryParent` yields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Resolved {
    /// `undefined` (a row without `parentId` and without a logical parent).
    Absent,
    /// `null`.
    Null,
    /// An id (a canonical entry, or `""`).
    Id(String),
}

impl Resolved {
    pub(crate) fn as_id(&self) -> Option<&str> {
        match self {
            Resolved::Id(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn from_opt(v: Option<String>) -> Self {
        v.map_or(Resolved::Null, Resolved::Id)
    }

    /// The id when it is a usable (truthy) reference.
    pub(crate) fn truthy(&self) -> Option<&str> {
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
            Resolved::Id(s) => Some(JsValue::from(s.as_str())),
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
/// children index and counters the reference computes by scanning.
#[derive(Clone, Debug, Default)]
pub(crate) struct Index {
    /// id → row (the last row with that id).
    pub(crate) by_id: FxMap<String, usize>,
    /// Ids in first-insertion order (JavaScript Map order of `byId`).
    pub(crate) id_order: Vec<String>,
    pub(crate) opaque_parents: FxMap<String, Option<String>>,
    pub(crate) logical_parents: FxMap<String, Option<String>>,
    pub(crate) invalid_leaf: FxSet<String>,
    pub(crate) labels: IndexMap<String, LabelState>,
    pub(crate) leaf: Option<String>,
    pub(crate) append_parent: Option<String>,
    /// `promptReleasedSideBranchParentId`: `None` = undefined.
    pub(crate) side_parent: Option<Option<String>>,
    /// `message` rows whose role is `assistant` (any branch, duplicates counted).
    pub(crate) assistants: usize,
    /// The last `session_info` row in file order.
    pub(crate) last_session_info: Option<usize>,
    /// Normalised parent → children rows (the `byId` rows), in `byId` order.
    pub(crate) children: FxMap<ChildKey, Vec<usize>>,
}

/// Key of the children index.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ChildKey {
    Absent,
    Null,
    Id(String),
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
    pub(crate) leaf: Option<String>,
    pub(crate) append_parent: Option<String>,
    pub(crate) side: bool,
}

impl Index {
    /// Replays every row in file order.
    pub(crate) fn build(rows: &[Row]) -> Index {
        let mut ix = Index::default();
        for (i, row) in rows.iter().enumerate() {
            ix.apply(i, row);
        }
        ix.rebuild_children(rows);
        ix
    }

    /// Applies one row (the replay step).
    pub(crate) fn apply(&mut self, i: usize, row: &Row) {
        match &row.kind {
            RowKind::Leaf(leaf) => self.apply_leaf(leaf),
            RowKind::Linked { id, parent } => {
                self.opaque_parents.insert(id.clone(), parent.clone());
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
                let p = self.resolve_opaque_append_parent(leaf.parent.as_deref());
                self.opaque_parents.insert(leaf.id.clone(), p);
            }
            Some(state) => {
                self.opaque_parents
                    .insert(leaf.id.clone(), state.leaf.clone());
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
                            label: label.clone(),
                            timestamp: l.timestamp.clone(),
                        },
                    );
                }
                _ => {
                    self.labels.shift_remove(target);
                }
            }
        }
    }

    /// `resolveOpaqueLeafControl`.
    pub(crate) fn resolve_leaf_control(&self, leaf: &LeafMeta) -> Option<LeafState> {
        let known = |id: Option<&str>| match id {
            None => true,
            Some(id) => {
                self.by_id.contains_key(id)
                    || (self.opaque_parents.contains_key(id) && !self.invalid_leaf.contains(id))
            }
        };
        if !known(leaf.target.as_deref())
            || leaf
                .append_parent
                .as_ref()
                .is_some_and(|ap| !known(ap.as_deref()))
        {
            return None;
        }
        let leaf_id = self.resolve_leaf_target(leaf.target.as_deref());
        let append_parent = match &leaf.append_parent {
            None => leaf_id.clone(),
            Some(ap) => self.resolve_opaque_append_parent(ap.as_deref()),
        };
        Some(LeafState {
            leaf: leaf_id,
            append_parent,
            side: leaf.side,
        })
    }

    /// `resolveOpaqueLeafTargetId`.
    pub(crate) fn resolve_leaf_target(&self, target: Option<&str>) -> Option<String> {
        match target {
            None => None,
            Some(t) if self.by_id.contains_key(t) => Some(t.to_owned()),
            Some(t) => self.resolve_canonical(Some(t)),
        }
    }

    /// `resolveOpaqueAppendParentId`.
    pub(crate) fn resolve_opaque_append_parent(&self, id: Option<&str>) -> Option<String> {
        match id {
            None => None,
            Some(p) if self.by_id.contains_key(p) || self.opaque_parents.contains_key(p) => {
                Some(p.to_owned())
            }
            Some(p) => self.resolve_canonical(Some(p)),
        }
    }

    /// `resolveCanonicalParentId`: walks opaque parents until a canonical id; an unknown id, a
    /// cycle, or `null` gives `None`. `""` is returned as is (JavaScript stops on falsy ids).
    pub(crate) fn resolve_canonical(&self, start: Option<&str>) -> Option<String> {
        let mut seen: FxSet<&str> = FxSet::default();
        let mut cur = start;
        loop {
            match cur {
                None => return None,
                Some("") => return Some(String::new()),
                Some(c) if self.by_id.contains_key(c) => return Some(c.to_owned()),
                Some(c) => {
                    if !seen.insert(c) {
                        return None;
                    }
                    cur = self.opaque_parents.get(c).and_then(|p| p.as_deref());
                }
            }
        }
    }

    /// The parent `normalizeEntryParent` reports for a row with this id and raw `parentId`.
    pub(crate) fn normalized_parent(&self, id: &str, raw: &Parent) -> Resolved {
        if let Some(logical) = self.logical_parents.get(id) {
            return Resolved::from_opt(logical.clone());
        }
        match raw {
            Parent::Absent => Resolved::Absent,
            Parent::Null | Parent::Other => Resolved::Null,
            Parent::Str(s) => Resolved::from_opt(self.resolve_canonical(Some(s))),
        }
    }

    /// `resolveBranchTargetId`: a canonical id, or an opaque id's canonical ancestor
    /// (`Some(None)` when the ancestor chain ends at null), or `None` when unknown.
    pub(crate) fn resolve_branch_target(&self, id: &str) -> Option<Option<String>> {
        if self.by_id.contains_key(id) {
            return Some(Some(id.to_owned()));
        }
        if !self.opaque_parents.contains_key(id) {
            return None;
        }
        Some(self.resolve_canonical(Some(id)))
    }

    /// Rebuilds the children index from the `byId` rows, in `byId` order.
    pub(crate) fn rebuild_children(&mut self, rows: &[Row]) {
        let mut children: FxMap<ChildKey, Vec<usize>> = FxMap::default();
        for id in &self.id_order {
            let Some(&i) = self.by_id.get(id) else {
                continue;
            };
            let Some(e) = rows.get(i).and_then(|r| r.kind.entry()) else {
                continue;
            };
            let key = ChildKey::from(&self.normalized_parent(&e.id, &e.parent));
            children.entry(key).or_default().push(i);
        }
        self.children = children;
    }

    /// Adds a newly appended row (already applied) to the children index.
    pub(crate) fn add_child(&mut self, i: usize, e: &EntryMeta) {
        let key = ChildKey::from(&self.normalized_parent(&e.id, &e.parent));
        self.children.entry(key).or_default().push(i);
    }

    /// True when an id is taken by an entry or an opaque row.
    pub(crate) fn id_taken(&self, id: &str) -> bool {
        self.by_id.contains_key(id) || self.opaque_parents.contains_key(id)
    }
}
