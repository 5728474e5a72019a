//! Tree queries (openclaw-jsonl.md §2.3 "Parent resolution for reads", §2.5, §2.8): entries
//! are borrowed views of rows; parents are reported as the logical/canonical parent; every walk
//! carries a seen-set and costs O(depth); `get_children` reads a children index.

use session_format::entry::{Entry, EntryType};
use session_format::js;
use session_format::json::{EnvelopeScanner, Field, JsString, JsValue, SerdeError};

use super::SessionManager;
use super::forest::{Forest, ROOT};
use crate::deep::clone_value;
use crate::error::{NameError, ReadError, RowLocation};
use crate::id::{EntryId, Id};
use crate::index::{ChildKey, ParentStep, Resolved, Set};
use crate::rows::{EntryMeta, MessageRole, RowKind};

/// A borrowed view of one entry row. Cheap to copy; the row is parsed only by
/// [`EntryRef::value`] / [`EntryRef::to_entry`].
#[derive(Clone, Copy, Debug)]
pub struct EntryRef<'a> {
    sm: &'a SessionManager,
    row: usize,
}

impl<'a> EntryRef<'a> {
    pub(crate) fn new(sm: &'a SessionManager, row: usize) -> Self {
        EntryRef { sm, row }
    }

    pub(crate) fn meta(&self) -> Option<&'a EntryMeta> {
        self.sm.rows.get(self.row).and_then(|r| r.kind.entry())
    }

    /// The entry id (lossy: a lone surrogate reads as U+FFFD; [`EntryRef::id_js`] is exact).
    pub fn id(&self) -> &'a str {
        self.meta().map_or("", |m| m.id.text())
    }

    /// The entry id exactly as the file holds it (lone surrogates kept).
    pub fn id_js(&self) -> Option<&'a JsString> {
        self.meta().map(|m| m.id.js())
    }

    pub(crate) fn id_ref(&self) -> Option<&'a Id> {
        self.meta().map(|m| &m.id)
    }

    /// The `type`.
    pub fn entry_type(&self) -> EntryType {
        self.meta().map_or(EntryType::Custom, |m| m.ty)
    }

    /// The `parentId` as stored in the row when it is a string (lossy text).
    pub fn raw_parent_id(&self) -> Option<&'a str> {
        self.meta().and_then(|m| m.parent.as_id()).map(Id::text)
    }

    pub(crate) fn resolved_parent(&self) -> Resolved {
        match self.meta() {
            Some(m) => self.sm.ix.normalized_parent(&m.id, &m.parent),
            None => Resolved::Null,
        }
    }

    /// The parent reads report: the logical parent when one was recorded, else the stored
    /// `parentId` resolved through opaque rows to a canonical entry (`None` for null, unknown
    /// or cyclic chains).
    /// Lossy text; [`EntryRef::parent_id_js`] is exact.
    pub fn parent_id(&self) -> Option<String> {
        match self.resolved_parent() {
            Resolved::Id(s) => Some(s.text().to_owned()),
            _ => None,
        }
    }

    /// As [`EntryRef::parent_id`], exactly as the file holds the id.
    pub fn parent_id_js(&self) -> Option<JsString> {
        match self.resolved_parent() {
            Resolved::Id(s) => Some(s.js().clone()),
            _ => None,
        }
    }

    /// [`session_format::time::date_of`] of the row's top-level `timestamp`, read with the envelope scanner (a full
    /// parse only when the value is not a string or `null`, or the row is too deep to parse, so
    /// the result is what a full parse gives).
    pub(crate) fn timestamp_key(&self) -> f64 {
        let Some(row) = self.sm.rows.get(self.row) else {
            return session_format::time::date_of(None);
        };
        let mut scanner = EnvelopeScanner::new();
        match scanner.top_level_field(row.json(&self.sm.buf), b"timestamp") {
            Ok(Field::Absent) => session_format::time::date_of(None),
            Ok(Field::Null) => session_format::time::date_of(Some(&JsValue::Null)),
            Ok(Field::Str(s)) => {
                session_format::time::date_of(Some(&JsValue::String(s.to_js_string())))
            }
            Ok(Field::Other) | Err(_) => {
                let v = self.raw_value().ok();
                session_format::time::date_of(v.as_ref().and_then(|v| v.get("timestamp")))
            }
        }
    }

    /// True for rows written with `appendMode:"side"`.
    pub fn is_side_append(&self) -> bool {
        self.meta().is_some_and(|m| m.side)
    }

    /// True for a `message` whose `message.role` is `assistant`.
    pub fn is_assistant_message(&self) -> bool {
        self.meta()
            .is_some_and(|m| m.msg == Some(crate::rows::MsgShape::Assistant))
    }

    /// A `message` entry's `message.role` as read at load time, without parsing the row
    /// ([`MessageRole::None`] for other entries). [`MessageRole::Other`] (a role that is not one
    /// of pi's and OpenClaw's, or not a string) needs [`EntryRef::raw_value`] to be read.
    pub fn message_role(&self) -> MessageRole {
        self.meta().map_or(MessageRole::None, |m| m.role)
    }

    /// Where the row is (file, 1-based line, byte offset; no line for rows created in this
    /// process).
    pub fn location(&self) -> RowLocation {
        self.sm.location(self.row)
    }

    /// The row's exact bytes (without the line feed).
    pub fn raw_bytes(&self) -> &'a [u8] {
        self.sm
            .rows
            .get(self.row)
            .map_or(&[][..], |r| r.bytes(&self.sm.buf))
    }

    /// The row as stored (a fresh parse; no normalisation).
    ///
    /// # Errors
    /// [`ReadError`] (only if the stored bytes no longer parse, which indicates a bug).
    pub fn raw_value(&self) -> Result<JsValue, ReadError> {
        match self.sm.rows.get(self.row) {
            Some(r) => r
                .value(&self.sm.buf)
                .map_err(|e| self.sm.read_error(self.row, e)),
            None => Ok(JsValue::Null),
        }
    }

    /// The row as reads report it (`getEntry`): `parentId` replaced by [`EntryRef::parent_id`]
    /// when that differs (in place; appended when the row had none), and a compaction's
    /// `firstKeptEntryId` that names an opaque row replaced by its canonical ancestor, else the
    /// first canonical descendant on this entry's branch, else any canonical entry whose chain
    /// reaches it, else this entry's parent (§2.3).
    ///
    /// # Errors
    /// As [`EntryRef::raw_value`].
    pub fn value(&self) -> Result<JsValue, ReadError> {
        let mut value = self.raw_value()?;
        let Some(meta) = self.meta() else {
            return Ok(value);
        };
        let parent = self.resolved_parent();
        if !parent.same_as(&meta.parent)
            && let (Some(obj), Some(v)) = (value.as_object_mut(), parent.to_value())
        {
            obj.insert("parentId", v);
        }
        if meta.ty == EntryType::Compaction
            && let Some(fk) = value
                .get("firstKeptEntryId")
                .and_then(JsValue::as_js_string)
                .map(|s| Id::new(s.clone()))
        {
            let ix = &self.sm.ix;
            if !ix.by_id.contains_key(&fk) && ix.is_opaque(fk.as_bytes()) {
                let resolved = ix
                    .resolve_canonical(Some(fk.as_bytes()))
                    .or_else(|| self.first_descendant_on_branch(&fk, parent.as_id()))
                    .or_else(|| self.first_descendant(&fk))
                    .or_else(|| parent.as_id().cloned());
                if let Some(r) = resolved.filter(|r| !r.is_empty() && *r != fk)
                    && let Some(obj) = value.as_object_mut()
                {
                    obj.insert("firstKeptEntryId", r.to_value());
                }
            }
        }
        Ok(value)
    }

    /// `findFirstCanonicalDescendantOnBranch`.
    fn first_descendant_on_branch(&self, opaque: &Id, from: Option<&Id>) -> Option<Id> {
        let ix = &self.sm.ix;
        let mut seen: Set<&Id> = Set::default();
        let mut cur = from;
        let mut found: Option<&Id> = None;
        while let Some(c) = cur.take().filter(|c| !c.is_empty()) {
            if seen.contains(c) {
                break;
            }
            if c == opaque {
                return found.cloned();
            }
            seen.insert(c);
            if let Some(meta) = ix
                .by_id
                .get(c)
                .and_then(|&i| self.sm.rows.get(i))
                .and_then(|r| r.kind.entry())
            {
                found = Some(&meta.id);
                cur = meta.parent.as_id();
            } else {
                cur = ix.opaque_parent(c.as_bytes()).flatten();
            }
        }
        None
    }

    /// `findFirstCanonicalDescendant`.
    fn first_descendant(&self, opaque: &Id) -> Option<Id> {
        let ix = &self.sm.ix;
        for row in &self.sm.rows {
            let Some(meta) = row.kind.entry() else {
                continue;
            };
            let mut seen: Set<&Id> = Set::default();
            let mut p = meta.parent.as_id();
            while let Some(c) = p.filter(|c| !c.is_empty()) {
                if !ix.is_opaque(c.as_bytes()) || !seen.insert(c) {
                    break;
                }
                if c == opaque {
                    return Some(meta.id.clone());
                }
                p = ix.opaque_parent(c.as_bytes()).flatten();
            }
        }
        None
    }

    /// The normalised row read as a typed [`Entry`].
    ///
    /// # Errors
    /// [`EntryError`] when the row does not fit the typed model (it is still kept and
    /// navigable as bytes).
    pub fn to_entry(&self) -> Result<Entry, EntryError> {
        let value = self.value()?;
        Entry::from_value(&value).map_err(|source| EntryError::Typed {
            at: self.location(),
            source,
        })
    }
}

/// Why [`EntryRef::to_entry`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EntryError {
    /// The row could not be re-read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The row does not fit the typed model.
    #[error("{at}: the row does not fit the typed entry model")]
    Typed {
        /// The row.
        at: RowLocation,
        /// The serde error.
        #[source]
        source: SerdeError,
    },
}

/// A node of [`SessionTree`].
#[derive(Clone, Debug)]
pub struct TreeNode<'a> {
    /// The entry (the last row with its id).
    pub entry: EntryRef<'a>,
    /// Children (indices into [`SessionTree::nodes`]), oldest first by timestamp.
    pub children: Vec<usize>,
    /// The entry's label (any truthy JSON value a label row set), if any.
    pub label: Option<JsValue>,
    /// The timestamp of the label row that set it.
    pub label_timestamp: Option<JsValue>,
}

impl TreeNode<'_> {
    /// The label when it is a string.
    pub fn label_str(&self) -> Option<String> {
        self.label
            .as_ref()
            .and_then(|l| l.as_str_lossy().map(|s| s.into_owned()))
    }
}

/// The session as a forest, in an arena (no recursion, so deep chains are safe).
#[derive(Clone, Debug, Default)]
pub struct SessionTree<'a> {
    /// Every node, one per entry id, in first-appearance order.
    pub nodes: Vec<TreeNode<'a>>,
    /// Root nodes in file order.
    pub roots: Vec<usize>,
}

impl SessionTree<'_> {
    /// The tips: nodes without children (side appends included), in node order (the file
    /// order of their ids). A session with more than one tip has branches: a deliberate
    /// `branch`, a side append, or another writer's lines (docs/DEVIATIONS.md D30);
    /// `sessions check` and `sessions tree` list them.
    pub fn tips(&self) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&k| self.nodes[k].children.is_empty())
            .collect()
    }
}

impl SessionManager {
    /// The entry with this id (the last row carrying it), or `None`. The id is text or any
    /// JavaScript string ([`EntryId`]: `"id"`, `&js_string`), matched by its exact bytes.
    pub fn get_entry<'i>(&self, id: impl Into<EntryId<'i>>) -> Option<EntryRef<'_>> {
        self.get_entry_wtf8(id.into().as_wtf8())
    }

    pub(crate) fn get_entry_wtf8(&self, id: &[u8]) -> Option<EntryRef<'_>> {
        self.ix.by_id.get(id).map(|&i| EntryRef::new(self, i))
    }

    /// The leaf entry, or `None` when there is no leaf.
    pub fn get_leaf_entry(&self) -> Option<EntryRef<'_>> {
        self.ix
            .leaf
            .as_ref()
            .filter(|l| !l.is_empty())
            .and_then(|l| self.get_entry_wtf8(l.as_bytes()))
    }

    /// Every recognised row in file order (duplicates included), header excluded.
    pub fn get_entries(&self) -> impl Iterator<Item = EntryRef<'_>> + '_ {
        self.rows
            .iter()
            .enumerate()
            .filter(|(_, r)| matches!(r.kind, RowKind::Entry(_)))
            .map(|(i, _)| EntryRef::new(self, i))
    }

    /// The entries, each id once: of the rows sharing an id, the last one (the row
    /// [`SessionManager::get_entry`] and every other lookup return; docs/DEVIATIONS.md D3), in
    /// file order, header excluded. Equal to [`SessionManager::get_entries`] when no id repeats.
    pub fn get_unique_entries(&self) -> impl Iterator<Item = EntryRef<'_>> + '_ {
        self.rows
            .iter()
            .enumerate()
            .filter(|(i, r)| {
                r.kind
                    .entry()
                    .is_some_and(|e| self.ix.by_id.get(&e.id) == Some(i))
            })
            .map(|(i, _)| EntryRef::new(self, i))
    }

    /// Number of entries, each id counted once (the length of
    /// [`SessionManager::get_unique_entries`]; rows that repeat an id are not counted again).
    pub fn entry_count(&self) -> usize {
        self.ix.by_id.len()
    }

    /// Number of recognised entry rows, rows that repeat an id included (the length of
    /// [`SessionManager::get_entries`]).
    pub fn entry_row_count(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| matches!(r.kind, RowKind::Entry(_)))
            .count()
    }

    /// The entries whose reported parent is `parent_id` (`None` = roots with a null parent),
    /// in `byId` order. O(children).
    pub fn get_children(&self, parent_id: Option<&str>) -> Vec<EntryRef<'_>> {
        let key = match parent_id {
            None => ChildKey::Null,
            Some(p) => ChildKey::Id(Id::from(p)),
        };
        let children = &self.ix.children;
        // Children filed by key come first: they were added while the parent was not an entry.
        let mut out: Vec<EntryRef<'_>> = children
            .of_key(&key)
            .iter()
            .map(|&i| EntryRef::new(self, i))
            .collect();
        if let Some(p) = parent_id.filter(|p| !p.is_empty())
            && let Some(&j) = self.ix.by_id.get(p.as_bytes())
        {
            out.extend(children.of_row(j).map(|i| EntryRef::new(self, i)));
        }
        out
    }

    /// The label of an entry.
    pub fn get_label(&self, id: &str) -> Option<&JsValue> {
        self.ix.labels.get(id.as_bytes()).map(|l| &l.label)
    }

    /// The timestamp of the label row that set an entry's label.
    pub fn get_label_timestamp(&self, id: &str) -> Option<&JsValue> {
        self.ix
            .labels
            .get(id.as_bytes())
            .and_then(|l| l.timestamp.as_ref())
    }

    /// The path from the root to `from_id` (default: the leaf), root first: reported parents
    /// are followed, an opaque id is walked through its opaque parents; a seen-set stops
    /// cycles (each entry appears once). O(depth). The id is text or any JavaScript string
    /// ([`EntryId`]: `Some("id".into())`, `Some((&js_string).into())`).
    pub fn get_branch(&self, from_id: Option<EntryId<'_>>) -> Vec<EntryRef<'_>> {
        let start = match from_id {
            Some(id) => Some(id.to_id()),
            None => self.ix.leaf.clone(),
        };
        self.branch_from(start)
    }

    pub(crate) fn branch_from(&self, start: Option<Id>) -> Vec<EntryRef<'_>> {
        // From an entry, the walk follows the children index's parent rows, with a bitmap of
        // visited rows as the seen-set (one row per id: `byId` rows). Anything else (an opaque
        // start, a parent that is not an entry) walks by id.
        let Some(&first) = start.as_ref().and_then(|s| self.ix.by_id.get(s)) else {
            return self.branch_from_by_id(start);
        };
        let mut seen = vec![0u64; self.rows.len().div_ceil(64)];
        let mut path = Vec::new();
        let mut i = first;
        loop {
            let (word, bit) = (i / 64, 1u64 << (i % 64));
            match seen.get_mut(word) {
                Some(w) if *w & bit == 0 => *w |= bit,
                Some(_) => break,
                None => return self.branch_from_by_id(start),
            }
            path.push(EntryRef::new(self, i));
            match self.ix.parent_step(i) {
                ParentStep::Row(j) => i = j,
                ParentStep::End => break,
                ParentStep::ById => return self.branch_from_by_id(start),
            }
        }
        path.reverse();
        path
    }

    /// [`SessionManager::branch_from`] by id lookups and a seen-set of ids.
    fn branch_from_by_id(&self, start: Option<Id>) -> Vec<EntryRef<'_>> {
        let mut path = Vec::new();
        let mut seen: Set<Id> = Set::default();
        let mut cur = start;
        while let Some(c) = cur.take().filter(|c| !c.is_empty()) {
            if !seen.insert(c.clone()) {
                break;
            }
            if let Some(&i) = self.ix.by_id.get(&c) {
                let e = EntryRef::new(self, i);
                cur = e.resolved_parent().truthy().cloned();
                path.push(e);
            } else {
                cur = self.ix.opaque_parent(c.as_bytes()).flatten().cloned();
            }
        }
        path.reverse();
        path
    }

    /// The header row as parsed (`getHeader()`), `None` when there is none.
    ///
    /// # Errors
    /// [`ReadError`] (a bug).
    pub fn get_header(&self) -> Result<Option<JsValue>, ReadError> {
        match self.header {
            Some(h) => self.rows[h]
                .value(&self.buf)
                .map(Some)
                .map_err(|e| self.read_error(h, e)),
            None => Ok(None),
        }
    }

    /// The session name: the last `session_info` row in file order (any branch), its `name`
    /// `trim()`med; empty, `null` or absent ⇒ `None` (openclaw-jsonl.md §2.8).
    ///
    /// # Errors
    /// [`NameError::NonStringName`] when that row's `name` is a number, boolean, array or
    /// object (OpenClaw 2026.6.11 throws `entry.name?.trim is not a function`).
    pub fn get_session_name(&self) -> Result<Option<String>, NameError> {
        Ok(self
            .get_session_name_js()?
            .map(|n| n.to_str_lossy().into_owned()))
    }

    /// As [`SessionManager::get_session_name`], exactly (lone surrogates kept).
    ///
    /// # Errors
    /// As [`SessionManager::get_session_name`].
    pub fn get_session_name_js(&self) -> Result<Option<JsString>, NameError> {
        let Some(i) = self.ix.last_session_info else {
            return Ok(None);
        };
        let value = self.rows[i]
            .value(&self.buf)
            .map_err(|e| self.read_error(i, e))?;
        match value.get("name") {
            None | Some(JsValue::Null) => Ok(None),
            Some(JsValue::String(s)) => {
                let t = js::trim_js_string(s);
                Ok((!t.is_empty()).then_some(t))
            }
            Some(_) => Err(NameError::NonStringName {
                id: self.rows[i]
                    .kind
                    .entry()
                    .map(|e| e.id.text().to_owned())
                    .unwrap_or_default(),
                at: self.location(i),
            }),
        }
    }

    /// The session as a forest (`getTree()`): one node per entry id; a node is a root when its
    /// reported parent is null, itself, or not an entry; roots in file order; children sorted
    /// by timestamp (stable). Fixes over the reference (docs/DEVIATIONS.md D3, D4): entries on
    /// a parent cycle, which the reference drops (or hangs on), are kept — each cycle is broken
    /// at its member that comes first in the file — so every entry appears exactly once.
    pub fn get_tree(&self) -> SessionTree<'_> {
        // Nodes in first-occurrence order of their ids (`id_order`), each the last row with
        // that id; parents (cycles broken) and labels are found by row.
        let forest = Forest::of(self);
        let ix = &self.ix;
        let mut nodes: Vec<TreeNode<'_>> = forest
            .rows
            .iter()
            .map(|&row| TreeNode {
                entry: EntryRef::new(self, row),
                children: Vec::new(),
                label: None,
                label_timestamp: None,
            })
            .collect();
        for (target, l) in &ix.labels {
            if let Some(k) = ix.by_id.get(target).and_then(|&row| forest.node_at(row)) {
                nodes[k].label = Some(clone_value(&l.label));
                nodes[k].label_timestamp = l.timestamp.as_ref().map(clone_value);
            }
        }
        let mut roots: Vec<usize> = Vec::new();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
        for (k, &p) in forest.parent.iter().enumerate() {
            match p {
                ROOT => roots.push(k),
                p => children[p as usize].push(k),
            }
        }
        drop(forest);
        for (k, mut kids) in children.into_iter().enumerate() {
            // Only lists of two or more need timestamps (and thus a parse of each child).
            js::sort_by_key(&mut kids, |&c| nodes[c].entry.timestamp_key());
            nodes[k].children = kids;
        }
        SessionTree { nodes, roots }
    }
}

#[cfg(test)]
mod tests {
    use crate::SessionManager;
    use crate::rows::RowKind;

    /// The branch walk over the children index's parent rows gives exactly the rows of the walk
    /// by id, from every entry and opaque id of every fixture (cycles, duplicates, opaque chains
    /// and leaf controls included).
    #[test]
    fn branch_by_rows_equals_branch_by_id_on_fixtures() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut files = 0;
        let mut walks = 0;
        for p in session_test_support::files_with_extension(&dir, "jsonl") {
            let Ok(open) = SessionManager::open_read_only(&p, Some("/")) else {
                continue;
            };
            let sm = &open.session;
            files += 1;
            let mut starts: Vec<Option<crate::id::Id>> = vec![sm.ix.leaf.clone()];
            for row in sm.rows.iter() {
                match &row.kind {
                    RowKind::Entry(e) => starts.push(Some(e.id.clone())),
                    RowKind::Linked { id, .. } => starts.push(Some(id.clone())),
                    RowKind::Leaf(l) => starts.push(Some(l.id.clone())),
                    _ => {}
                }
            }
            for start in starts {
                let rows = |path: Vec<crate::EntryRef<'_>>| -> Vec<usize> {
                    path.iter().map(|e| e.row).collect()
                };
                assert_eq!(
                    rows(sm.branch_from(start.clone())),
                    rows(sm.branch_from_by_id(start.clone())),
                    "{} from {start:?}",
                    p.display()
                );
                walks += 1;
            }
        }
        assert!(files > 10 && walks > 50, "{files} files, {walks} walks");
    }
}
