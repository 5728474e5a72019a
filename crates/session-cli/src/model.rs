//! The read-only open every inspection subcommand starts with, and the tree walk they share:
//! pre-order (children oldest first, as `getTree` sorts them), depth, subtree sizes, the current
//! branch, branch points and compaction boundaries. Everything is iterative, so a chain of any
//! depth is safe.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use anyhow::bail;
use session_format::entry::EntryType;
use session_format::json::{JsValue, JsonErrorKind};
use session_store::{OpenReport, ReadError, ReadOnlyOpen, SessionManager, SessionTree};

use crate::ctx::Ctx;
use crate::outcome::UsageError;
use crate::output::Output;
use crate::render::{Summary, entry_summary, field, kind_name};
use crate::text::{self, ShortIds};

/// A session opened for `tree`, `context`, `show`, `stats` and `export`.
#[derive(Debug)]
pub(crate) struct Opened {
    /// The read-only open.
    pub(crate) ro: ReadOnlyOpen,
    /// What the user must know about the header (for stderr).
    pub(crate) warnings: Vec<String>,
}

/// The header problem of a file whose entries are usable, for a warning.
fn header_warning(path: &Path, ro: &ReadOnlyOpen) -> Option<String> {
    let ch = ro.report.corrupt_header.as_ref()?;
    let shown = text::path(path);
    let check = format!(
        "`sessions check {}` has details",
        text::shell_quote(&path.display().to_string())
    );
    Some(match ch.recovered_from_line {
        Some(l) => format!(
            "{shown}: the first line is not the session header; using the session header on line \
             {l}, as a writable open would ({check})"
        ),
        None => {
            let n = ro.session.entry_count();
            format!(
                "{shown}: no readable session header (no line is a session row with a string \
                 id); working on the {} {} that could be read, under a made-up header with a \
                 new session id ({check})",
                text::thousands(n),
                if n == 1 { "entry" } else { "entries" }
            )
        }
    })
}

/// Opens a session read-only for the subcommands that show it: a regular file (checked before
/// anything opens it, never a FIFO or a device) or a session of the Redis backend
/// ([`crate::backend::Backend::open_read_only`]) that is a session. A file without a readable
/// header and without any entry (`/etc/passwd`, a binary, an empty or whitespace-only file) is
/// "not a session file"; a corrupt header over recoverable entries gives a warning.
pub(crate) fn open(ctx: &Ctx, path: &Path) -> anyhow::Result<Opened> {
    let shown = text::path(path);
    if ctx.store().is_none()
        && let Some(note) = crate::store_files::store_file_note(path)
    {
        bail!(UsageError::new(format!("{shown} is {note}")));
    }
    let spinner = crate::progress::reading(ctx, path, "reading");
    let ro = ctx.backend.open_read_only(path);
    spinner.finish();
    let ro = ro?;
    if ro.report.empty {
        let what = if ro.report.bytes == 0 {
            "the file is empty".to_owned()
        } else {
            format!(
                "the file holds only whitespace ({} bytes)",
                text::thousands(ro.report.bytes)
            )
        };
        bail!(UsageError::new(format!(
            "not a session file: {shown}: {what}"
        )));
    }
    if ro
        .report
        .corrupt_header
        .as_ref()
        .is_some_and(|c| c.recovered_from_line.is_none())
        && ro.session.entry_count() == 0
    {
        bail!(UsageError::new(format!(
            "not a session file: {shown}: no line is a session header and no entry could be read \
             (`sessions check {}` has details)",
            text::shell_quote(&path.display().to_string())
        )));
    }
    let warnings = header_warning(path, &ro).into_iter().collect();
    Ok(Opened { ro, warnings })
}

/// A large session (hundreds of thousands of rows and ids) is freed on a thread of its own
/// when the command is done with it, so the output is not held up by the deallocations and a
/// process that ends meanwhile does not wait for them.
impl Drop for Opened {
    fn drop(&mut self) {
        crate::dispose::session(&mut self.ro);
    }
}

/// Prints the open's warnings and, when `check` would report anything, one line
/// `FILE: N problems (run `sessions check FILE`)` on stderr.
pub(crate) fn report_problems(
    ctx: &Ctx,
    path: &Path,
    opened: &Opened,
    out: &mut Output,
) -> anyhow::Result<()> {
    let n = crate::check::problems_of(ctx, path, &opened.ro, crate::check::Limit::NONE)?
        .0
        .iter()
        .filter(|p| p.severity != crate::check::Severity::Info)
        .count();
    print_problems(path, opened, n, out)
}

/// Runs `work` (the command's output) and then does what [`report_problems`] does, the
/// problems being counted meanwhile on a thread of their own when the open kept the file's
/// bytes (the count needs nothing else), so the scan of every row overlaps the command's own
/// work. The output is the same as `work` followed by [`report_problems`].
///
/// # Errors
/// `work`'s error (the count is then dropped), or an output error.
pub(crate) fn with_problem_report(
    ctx: &Ctx,
    path: &Path,
    opened: &Opened,
    out: &mut Output,
    work: impl FnOnce(&mut Output) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let ro = &opened.ro;
    if ro.session.file_bytes().len() != ro.report.bytes {
        work(out)?;
        return report_problems(ctx, path, opened, out);
    }
    std::thread::scope(|s| {
        let count = s.spawn(|| {
            crate::check::problems(&ro.report, &ro.session, ro.session.file_bytes())
                .iter()
                .filter(|p| p.severity != crate::check::Severity::Info)
                .count()
        });
        work(out)?;
        let n = count
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        print_problems(path, opened, n, out)
    })
}

/// The open's warnings and the line for `n` problems (none for 0).
fn print_problems(path: &Path, opened: &Opened, n: usize, out: &mut Output) -> anyhow::Result<()> {
    for w in &opened.warnings {
        out.warn(w)?;
    }
    if n > 0 {
        out.warn(&format!(
            "{}: {n} {} (run `sessions check {}`)",
            text::path(path),
            if n == 1 { "problem" } else { "problems" },
            text::shell_quote(&path.display().to_string())
        ))?;
    }
    Ok(())
}

/// True when a row could not be decoded because it is nested too deeply.
pub(crate) fn is_too_deep(e: &ReadError) -> bool {
    e.source.kind == JsonErrorKind::TooDeep
}

/// The summary of an entry that cannot be decoded.
pub(crate) fn undecodable_summary(ty: EntryType, e: &ReadError) -> Summary {
    Summary {
        kind: kind_name(ty).to_owned(),
        text: if is_too_deep(e) {
            "(too deep to decode)".to_owned()
        } else {
            format!("(cannot decode: {})", e.source)
        },
    }
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

/// A note for files whose ids were given by the in-memory migration (derived from the file's
/// bytes and each row's line, [`session_format::migrate::derived_entry_id`]).
pub(crate) fn unstable_ids_note(version: Option<f64>) -> Option<String> {
    match version {
        Some(v) if v < 2.0 => Some(format!(
            "note: version {} file, needs migration; migrated in memory only (the file is not \
             changed): its entry ids are derived from the file's bytes and line numbers, the \
             same on every read while the file is unchanged (OpenClaw's own migration would \
             give new random ids)",
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
    /// True for nodes whose stored parents form a cycle (the open's report).
    pub(crate) in_cycle: Vec<bool>,
    /// The leaf's node.
    pub(crate) leaf: Option<usize>,
    /// For each node, the compaction nodes whose `firstKeptEntryId` names it.
    pub(crate) first_kept_of: Vec<Vec<usize>>,
    /// Short forms of the ids (shortest unique prefix, at least 8 characters).
    pub(crate) short: ShortIds,
}

impl<'a> TreeModel<'a> {
    /// Builds the model of a session; `report` marks the members of parent cycles.
    ///
    /// O(nodes) integer passes over the library's tree plus one sort of the ids for
    /// [`ShortIds`]; ids are compared only against the few the branch, the leaf, the cycles and
    /// the compactions name (no map of every id).
    pub(crate) fn new(sm: &'a SessionManager, report: Option<&OpenReport>) -> Self {
        let tree = sm.get_tree();
        let n = tree.nodes.len();
        let (order, depth, parent, size) = walk(&tree);
        // The ids to find among the nodes: the branch's, the leaf's, the cycles' and the
        // compactions' firstKeptEntryId (with the compaction that names it).
        let branch: HashSet<&str> = sm.get_branch(None).iter().map(|e| e.id()).collect();
        let cycle_ids: HashSet<&str> = report
            .map(|r| r.cycles.iter().flatten().map(String::as_str).collect())
            .unwrap_or_default();
        let mut kept: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, node) in tree.nodes.iter().enumerate() {
            if node.entry.entry_type() != EntryType::Compaction {
                continue;
            }
            let Ok(v) = node.entry.value() else { continue };
            if let Some(k) = field(&v, "firstKeptEntryId") {
                kept.entry(k).or_default().push(i);
            }
        }
        let leaf_id = sm.get_leaf_id();
        let mut on_branch = vec![false; n];
        let mut in_cycle = vec![false; n];
        let mut first_kept_of = vec![Vec::new(); n];
        let mut leaf = None;
        // Of the nodes that show the same id (distinct lone surrogates read as U+FFFD), the
        // last one is the id's node, as a map from id to node keeps it: nodes are visited
        // last first and an id of the branch marks one node.
        let mut marked: HashSet<&str> = HashSet::new();
        for (i, node) in tree.nodes.iter().enumerate().rev() {
            let id = node.entry.id();
            if !branch.is_empty() && branch.contains(id) && marked.insert(id) {
                on_branch[i] = true;
            }
            if !cycle_ids.is_empty() && cycle_ids.contains(id) {
                in_cycle[i] = true;
            }
            if leaf.is_none() && leaf_id == Some(id) {
                leaf = Some(i);
            }
        }
        if !kept.is_empty() {
            let mut node_of: HashMap<&str, usize> = HashMap::with_capacity(kept.len());
            for (i, node) in tree.nodes.iter().enumerate() {
                if kept.contains_key(node.entry.id()) {
                    node_of.insert(node.entry.id(), i);
                }
            }
            // Compactions in node order, as the walk over the nodes pushed them.
            let mut pairs: Vec<(usize, usize)> = kept
                .iter()
                .filter_map(|(k, cs)| node_of.get(k.as_str()).map(|&t| (t, cs)))
                .flat_map(|(t, cs)| cs.iter().map(move |&c| (c, t)))
                .collect();
            pairs.sort_unstable();
            for (c, t) in pairs {
                first_kept_of[t].push(c);
            }
        }
        let short = ShortIds::new(tree.nodes.iter().map(|node| node.entry.id()));
        TreeModel {
            tree,
            order,
            depth,
            parent,
            size,
            on_branch,
            in_cycle,
            leaf,
            first_kept_of,
            short,
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

    /// The short id of a node, for people.
    pub(crate) fn short(&self, i: usize) -> String {
        self.short.get(self.id(i))
    }

    /// The node's children.
    pub(crate) fn children(&self, i: usize) -> &[usize] {
        &self.tree.nodes[i].children
    }

    /// The node's entry as reads report it.
    ///
    /// # Errors
    /// A row that cannot be decoded (nested too deeply).
    pub(crate) fn value(&self, i: usize) -> Result<JsValue, ReadError> {
        self.tree.nodes[i].entry.value()
    }

    /// The node's kind and text (`(too deep to decode)` for a row that cannot be decoded).
    pub(crate) fn summary(&self, i: usize) -> Summary {
        let ty = self.tree.nodes[i].entry.entry_type();
        match self.value(i) {
            Ok(v) => entry_summary(ty, &v, &self.short),
            Err(e) => undecodable_summary(ty, &e),
        }
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
}

/// The pre-order of a tree (roots in file order, children oldest first), each node's depth
/// (roots are 1), parent and subtree size (itself included). Iterative.
fn walk(tree: &SessionTree<'_>) -> (Vec<usize>, Vec<usize>, Vec<Option<usize>>, Vec<usize>) {
    let n = tree.nodes.len();
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
    (order, depth, parent, size)
}

/// The entries, each id once ([`SessionManager::get_unique_entries`], in file order), without a
/// lookup per row when no id repeats (every entry row is then its id's row).
pub(crate) fn unique_entries(
    sm: &SessionManager,
) -> Box<dyn Iterator<Item = session_store::EntryRef<'_>> + '_> {
    if sm.entry_row_count() == sm.entry_count() {
        Box::new(sm.get_entries())
    } else {
        Box::new(sm.get_unique_entries())
    }
}

/// A large tree's children lists are freed off the main thread ([`crate::dispose::tree`]).
impl Drop for TreeModel<'_> {
    fn drop(&mut self) {
        crate::dispose::tree(std::mem::take(&mut self.tree));
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
        let line: usize = line.parse().ok().filter(|&l| l > 0).ok_or_else(|| {
            UsageError::new(format!("bad line number in {spec:?} (lines start at 1)"))
        })?;
        let file = sm.get_session_file();
        return sm
            .get_entries()
            .filter(|e| e.location().line == Some(line))
            .last()
            .ok_or_else(|| {
                let quoted = file
                    .map(|p| text::shell_quote(&p.display().to_string()))
                    .unwrap_or_default();
                anyhow::anyhow!(UsageError::new(format!(
                    "line {line} of {} is not an entry (`sessions show --raw {quoted} @{line}` \
                     prints any line)",
                    file.map(text::path).unwrap_or_default()
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
    let file = sm.get_session_file().map(text::path).unwrap_or_default();
    let spec_shown = text::safe(spec);
    match hits.as_slice() {
        [one] => Ok(*one),
        [] => {
            let close = crate::address::close_matches(spec, &ids);
            let close: Vec<String> = close.iter().map(|c| text::safe(c).into_owned()).collect();
            let hint = if close.is_empty() {
                String::new()
            } else {
                format!("; did you mean: {}?", close.join(", "))
            };
            anyhow::bail!(UsageError::new(format!(
                "no entry \"{spec_shown}\" in {file}{hint}"
            )))
        }
        many => {
            let names: Vec<String> = many
                .iter()
                .take(10)
                .map(|e| text::safe(e.id()).into_owned())
                .collect();
            anyhow::bail!(UsageError::new(format!(
                "entry id prefix \"{spec_shown}\" is ambiguous in {file}: {}",
                names.join(", ")
            )))
        }
    }
}
