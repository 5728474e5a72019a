//! The read-only open every inspection subcommand starts with, and the tree walk they share:
//! pre-order (children oldest first, as `getTree` sorts them), depth, subtree sizes, the current
//! branch, branch points and compaction boundaries. Everything is iterative, so a chain of any
//! depth is safe.

use std::collections::HashMap;
use std::path::Path;

use session_format::entry::EntryType;
use session_format::json::JsValue;
use session_store::{ReadOnlyOpen, SessionManager, SessionTree};

use crate::render::{Summary, entry_summary, field};

/// Opens a session file read-only (never writes; the report says what a writable open would
/// repair). Errors name the file.
pub(crate) fn open(path: &Path) -> anyhow::Result<ReadOnlyOpen> {
    Ok(SessionManager::open_read_only(path, None)?)
}

/// The file's header `version` as the reference compares it (`version ?? 1`), before the
/// in-memory migration; `None` when the file has no header.
pub(crate) fn file_version(ro: &ReadOnlyOpen) -> anyhow::Result<Option<f64>> {
    if let Some(v) = ro.report.unmigrated_version {
        return Ok(Some(v));
    }
    // An empty file, or a corrupt one without any session row: the header in memory is made up.
    let synthesised = ro
        .report
        .corrupt_header
        .as_ref()
        .is_some_and(|c| c.recovered_from_line.is_none());
    if ro.report.empty || synthesised {
        return Ok(None);
    }
    let header = ro.session.get_header()?;
    Ok(header.map(|h| session_format::migrate::js_version_number(h.get("version"))))
}

/// A note for files whose ids were made up by the in-memory migration.
pub(crate) fn unstable_ids_note(version: Option<f64>) -> Option<String> {
    match version {
        Some(v) if v < 2.0 => Some(format!(
            "note: version {} file, migrated in memory only (the file is not changed); its entry \
             ids are made up on every read, so address entries by line (`show FILE @LINE`)",
            session_format::json::number_to_string(v)
        )),
        _ => None,
    }
}

/// The tree of a session with everything the renderers need.
#[derive(Debug)]
pub(crate) struct TreeModel<'a> {
    /// The library's tree (nodes in first-appearance order; children oldest first).
    pub(crate) tree: SessionTree<'a>,
    /// Node indices in pre-order (roots in file order).
    pub(crate) order: Vec<usize>,
    /// Depth of each node (roots are 1).
    pub(crate) depth: Vec<usize>,
    /// Parent node of each node.
    pub(crate) parent: Vec<Option<usize>>,
    /// Number of nodes in each node's subtree, itself included.
    pub(crate) size: Vec<usize>,
    /// True for nodes on the current branch (root → leaf).
    pub(crate) on_branch: Vec<bool>,
    /// The leaf's node.
    pub(crate) leaf: Option<usize>,
    /// For each node, the compaction nodes whose `firstKeptEntryId` names it.
    pub(crate) first_kept_of: Vec<Vec<usize>>,
}

impl<'a> TreeModel<'a> {
    /// Builds the model of a session.
    pub(crate) fn new(sm: &'a SessionManager) -> Self {
        let tree = sm.get_tree();
        let n = tree.nodes.len();
        let mut by_id: HashMap<&'a str, usize> = HashMap::with_capacity(n);
        for (i, node) in tree.nodes.iter().enumerate() {
            by_id.insert(node.entry.id(), i);
        }
        let mut parent = vec![None; n];
        for (i, node) in tree.nodes.iter().enumerate() {
            for &c in &node.children {
                parent[c] = Some(i);
            }
        }
        let mut order = Vec::with_capacity(n);
        let mut depth = vec![0; n];
        let mut stack: Vec<(usize, usize)> = tree.roots.iter().rev().map(|&r| (r, 1)).collect();
        while let Some((i, d)) = stack.pop() {
            order.push(i);
            depth[i] = d;
            for &c in tree.nodes[i].children.iter().rev() {
                stack.push((c, d + 1));
            }
        }
        let mut size = vec![1; n];
        for &i in order.iter().rev() {
            if let Some(p) = parent[i] {
                size[p] += size[i];
            }
        }
        let mut on_branch = vec![false; n];
        for e in sm.get_branch(None) {
            if let Some(&i) = by_id.get(e.id()) {
                on_branch[i] = true;
            }
        }
        let leaf = sm.get_leaf_id().and_then(|l| by_id.get(l).copied());
        let mut first_kept_of = vec![Vec::new(); n];
        for (i, node) in tree.nodes.iter().enumerate() {
            if node.entry.entry_type() != EntryType::Compaction {
                continue;
            }
            let Ok(v) = node.entry.value() else { continue };
            if let Some(k) = field(&v, "firstKeptEntryId").and_then(|k| by_id.get(k.as_str())) {
                first_kept_of[*k].push(i);
            }
        }
        TreeModel {
            tree,
            order,
            depth,
            parent,
            size,
            on_branch,
            leaf,
            first_kept_of,
        }
    }

    /// Number of nodes.
    pub(crate) fn len(&self) -> usize {
        self.tree.nodes.len()
    }

    /// The entry id of a node.
    pub(crate) fn id(&self, i: usize) -> &'a str {
        self.tree.nodes[i].entry.id()
    }

    /// The node's children.
    pub(crate) fn children(&self, i: usize) -> &[usize] {
        &self.tree.nodes[i].children
    }

    /// The node's entry as reads report it (`null` if it cannot be re-read, which is a bug).
    pub(crate) fn value(&self, i: usize) -> JsValue {
        self.tree.nodes[i].entry.value().unwrap_or(JsValue::Null)
    }

    /// The node's kind and text.
    pub(crate) fn summary(&self, i: usize) -> Summary {
        entry_summary(self.tree.nodes[i].entry.entry_type(), &self.value(i))
    }

    /// The node's label as text.
    pub(crate) fn label(&self, i: usize) -> Option<String> {
        let node = &self.tree.nodes[i];
        node.label_str().or_else(|| {
            node.label
                .as_ref()
                .map(session_format::json::to_json_string)
        })
    }

    /// The 1-based line of the node's row in the file.
    pub(crate) fn line(&self, i: usize) -> Option<usize> {
        self.tree.nodes[i].entry.location().line
    }

    /// Number of branch points (nodes with two or more children).
    pub(crate) fn branch_points(&self) -> usize {
        self.tree
            .nodes
            .iter()
            .filter(|n| n.children.len() > 1)
            .count()
    }

    /// Deepest depth.
    pub(crate) fn max_depth(&self) -> usize {
        self.depth.iter().copied().max().unwrap_or(0)
    }

    /// Number of leaves (nodes without children).
    pub(crate) fn leaves(&self) -> usize {
        self.tree
            .nodes
            .iter()
            .filter(|n| n.children.is_empty())
            .count()
    }
}

/// Finds an entry by id, unique id prefix, or `@LINE` (the entry on that 1-based line). An
/// unknown id is an error listing close matches.
pub(crate) fn resolve_entry<'a>(
    sm: &'a SessionManager,
    spec: &str,
) -> anyhow::Result<session_store::EntryRef<'a>> {
    if let Some(e) = sm.get_entry(spec) {
        return Ok(e);
    }
    if let Some(line) = spec.strip_prefix('@') {
        let line: usize = line
            .parse()
            .map_err(|_| crate::address::UsageError::new(format!("bad line number in {spec:?}")))?;
        return sm
            .get_entries()
            .filter(|e| e.location().line == Some(line))
            .last()
            .ok_or_else(|| {
                anyhow::anyhow!(crate::address::UsageError::new(format!(
                    "no entry on line {line} of {}",
                    sm.get_session_file()
                        .map_or_else(String::new, |p| p.display().to_string())
                )))
            });
    }
    let mut ids: Vec<String> = Vec::new();
    let mut hits: Vec<session_store::EntryRef<'a>> = Vec::new();
    for e in sm.get_entries() {
        if sm
            .get_entry(e.id())
            .is_some_and(|last| last.location() == e.location())
        {
            if !spec.is_empty() && e.id().starts_with(spec) {
                hits.push(e);
            }
            ids.push(e.id().to_owned());
        }
    }
    let file = sm
        .get_session_file()
        .map_or_else(String::new, |p| p.display().to_string());
    match hits.as_slice() {
        [one] => Ok(*one),
        [] => {
            let close = crate::address::close_matches(spec, &ids);
            let hint = if close.is_empty() {
                String::new()
            } else {
                format!("; did you mean: {}?", close.join(", "))
            };
            anyhow::bail!(crate::address::UsageError::new(format!(
                "no entry {spec:?} in {file}{hint}"
            )))
        }
        many => {
            let names: Vec<&str> = many.iter().take(10).map(|e| e.id()).collect();
            anyhow::bail!(crate::address::UsageError::new(format!(
                "entry id prefix {spec:?} is ambiguous in {file}: {}",
                names.join(", ")
            )))
        }
    }
}
