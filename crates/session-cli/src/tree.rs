//! `sessions tree`: the entry tree as text (one line per entry; a run of single children stays
//! at the same indentation, only branch points indent) or as flat JSON.

use std::path::Path;

use session_format::json::{JsObject, JsValue};

use crate::ctx::Ctx;
use crate::model::{self, Opened, TreeModel};
use crate::output::Output;
use crate::text;

pub(crate) const LONG_ABOUT: &str = "\
Print a session's entry tree, read-only.

Text output: a header line (file, entry count, branch points, leaf), then, when the tree has more
than one tip (entry without children), `tips: <id>, <id>` (full ids, file order; `sessions check`
reports the same as information), then one line per entry:

  ● 77e1f91f assistant       I found two: Cervejaria Ramiro or Taberna da Rua…  ◆ 2 branches
  ├─ ○ 4147fcf6 user            Cervejaria Ramiro, please.
  │  ○ 9e3fe991 assistant       Sorry, Cervejaria Ramiro is fully booked.  [dead end]
  └─ ● 29ad27e4 branch_summary  Tried Cervejaria Ramiro; it was fully booked…
     ● 6eba3f1c user            Then Taberna da Rua at 20:00.  ⇤ first kept
     ● f3c7e845 compaction      Ana asked about…  ✂ compaction, keeps from 6eba3f1c
     ● 530f1f00 assistant       Saturday at 20:00 at Taberna da Rua.  ◀ leaf

Columns: ● on the current branch (○ off it), the short id (the shortest prefix of at least 8
characters that no other id of the session starts with, as `list` shortens session ids), the kind
(the role for
messages: user, assistant, toolResult, …; else thinking, model, compaction, branch_summary,
custom, custom_message, label, session_info), a one-line excerpt (tool calls as `→ name {args}`,
failed tool results as `✗`), the entry's `[label]`, and markers: `◀ leaf` (the current leaf),
`◆ N branches` (a branch point), `✂ compaction, keeps from ID` (a compaction boundary) and
`⇤ first kept` (where the context resumes after that compaction) and `⟲ cycle` (the entry's
stored parents form a cycle; `sessions check` lists it). An entry nested too deeply to decode
shows as `message (too deep to decode)`. Ids, labels and text are shown with control and
bidirectional-text characters escaped (`\\u{202e}`). A linear run of single
children is printed at the same indentation: only branch points indent, so a 1,000-entry chain
is one flat list. Children are ordered oldest first; several roots are shown as branches of the
file. `--depth N` stops at depth N (the root is 1; N is at least 1) and counts what is below.

A file without a readable session header and without entries is not a session (exit code 2); a
corrupt header over readable entries, and any problem `sessions check` would report, are
mentioned on stderr (`N problems (run `sessions check FILE`)`).

A version 1 file (no stored entry ids) needs migration: it is migrated in memory only, and its
entries get ids derived from the file, the same on every run while its bytes are unchanged: the
entry on 1-based line L gets the first 8 hex characters of SHA-256(\"<F>:<L>\"), F being the
lowercase hex SHA-256 of the whole file (on a clash with an id already in the file,
SHA-256(\"<F>:<L>:<k>\") for k = 1, 2, …). OpenClaw's own migration gives random ids instead.

JSON output (--json), one object:
  {\"file\", \"sessionId\", \"version\", \"leafId\", \"entryCount\", \"branchPoints\",
   \"roots\": [id], \"tips\": [id],
   \"nodes\": [{\"id\", \"parentId\", \"depth\", \"line\", \"kind\", \"role\", \"text\", \"label\",
              \"children\": [id], \"onBranch\", \"leaf\", \"branchPoint\", \"inCycle\"}]}
`nodes` is in display order (pre-order); `kind` is the entry type (`message`, `compaction`, …),
`role` the message role or null, `text` a one-line excerpt of at most 200 columns, `line` the
1-based line in the file; `tips` lists every entry without children (file order; one for a
linear session). With --depth, nodes below the limit are left out (their ids still appear in their
parent's `children`).";

/// Options of `tree`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TreeOptions {
    /// Deepest depth shown (roots are 1).
    pub(crate) depth: Option<usize>,
    /// Line width.
    pub(crate) width: usize,
}

const BRANCH_MID: &str = "├─ ";
const BRANCH_LAST: &str = "└─ ";
const CONT_MID: &str = "│  ";
const CONT_LAST: &str = "   ";
const KIND_MAX: usize = 14;

/// Renders the tree as lines of text (no header).
pub(crate) fn render_lines(m: &TreeModel<'_>, opts: &TreeOptions) -> Vec<String> {
    let max_depth = opts.depth.unwrap_or(usize::MAX).max(1);
    let mut summaries: Vec<Option<crate::render::Summary>> = vec![None; m.len()];
    for &i in &m.order {
        if m.depth[i] <= max_depth {
            summaries[i] = Some(m.summary(i));
        }
    }
    let kind_w = summaries
        .iter()
        .flatten()
        .map(|s| text::width(&s.kind))
        .max()
        .unwrap_or(4)
        .min(KIND_MAX);
    // Short ids of the printed nodes only.
    let mut shorts: Vec<Option<String>> = vec![None; m.len()];
    for &i in &m.order {
        if m.depth[i] <= max_depth {
            shorts[i] = Some(m.short(i));
        }
    }
    let id_w = shorts
        .iter()
        .flatten()
        .map(|s| text::width(s))
        .max()
        .unwrap_or(8);
    let mut lines = Vec::with_capacity(m.len().min(100_000));
    // (node, lead printed before it, prefix of the lines below it in its subtree)
    let mut stack: Vec<(usize, String, String)> = Vec::new();
    push_children(&mut stack, &m.tree.roots, "");
    while let Some((i, lead, body)) = stack.pop() {
        let s = summaries[i].take().unwrap_or_else(|| m.summary(i));
        let mut suffix: Vec<String> = Vec::new();
        if let Some(l) = m.label(i) {
            suffix.push(format!("[{}]", text::one_line(&l)));
        }
        if m.in_cycle[i] {
            suffix.push("⟲ cycle".to_owned());
        }
        if m.leaf == Some(i) {
            suffix.push("◀ leaf".to_owned());
        }
        let kids = m.children(i);
        if kids.len() > 1 {
            suffix.push(format!("◆ {} branches", kids.len()));
        }
        if m.tree.nodes[i].entry.entry_type() == session_format::entry::EntryType::Compaction {
            let keeps = m
                .value(i)
                .ok()
                .and_then(|v| crate::render::field(&v, "firstKeptEntryId"))
                .map(|k| m.short.get(&k))
                .unwrap_or_else(|| "?".to_owned());
            suffix.push(format!("✂ compaction, keeps from {keeps}"));
        }
        if !m.first_kept_of[i].is_empty() {
            suffix.push("⇤ first kept".to_owned());
        }
        let suffix = suffix.join("  ");
        let bullet = if m.on_branch[i] { "●" } else { "○" };
        let head = format!(
            "{lead}{bullet} {} {}  ",
            text::pad(&shorts[i].take().unwrap_or_else(|| m.short(i)), id_w),
            text::pad(&s.kind, kind_w)
        );
        let used = text::width(&head)
            + if suffix.is_empty() {
                0
            } else {
                2 + text::width(&suffix)
            };
        let room = opts.width.saturating_sub(used).max(12);
        let mut line = head;
        line.push_str(&text::excerpt(&s.text, room));
        if !suffix.is_empty() {
            line.push_str("  ");
            line.push_str(&suffix);
        }
        lines.push(line.trim_end().to_owned());
        if kids.is_empty() {
            continue;
        }
        if m.depth[i] >= max_depth {
            let below = m.size[i] - 1;
            let cont = if kids.len() == 1 {
                body.clone()
            } else {
                format!("{body}{CONT_LAST}")
            };
            lines.push(format!(
                "{cont}⋯ {} more {} below",
                text::thousands(below),
                if below == 1 { "entry" } else { "entries" }
            ));
            continue;
        }
        push_children(&mut stack, kids, &body);
    }
    lines
}

/// Pushes `kids` (in reverse, so the first pops first): a single child continues at `body`,
/// several get connectors.
fn push_children(stack: &mut Vec<(usize, String, String)>, kids: &[usize], body: &str) {
    if let [only] = kids {
        stack.push((*only, body.to_owned(), body.to_owned()));
        return;
    }
    let last = kids.len().saturating_sub(1);
    for (k, &c) in kids.iter().enumerate().rev() {
        let (lead, cont) = if k == last {
            (BRANCH_LAST, CONT_LAST)
        } else {
            (BRANCH_MID, CONT_MID)
        };
        stack.push((c, format!("{body}{lead}"), format!("{body}{cont}")));
    }
}

/// The header line of `tree` and `demo`.
pub(crate) fn header_line(path: &Path, m: &TreeModel<'_>) -> String {
    let bp = m.branch_points();
    let leaf = m.leaf.map_or_else(|| "none".to_owned(), |l| m.short(l));
    format!(
        "{} — {} {}, {} {}, {} branch {}, leaf {leaf}",
        text::path(path),
        text::thousands(m.len()),
        if m.len() == 1 { "entry" } else { "entries" },
        m.tree.roots.len(),
        if m.tree.roots.len() == 1 {
            "root"
        } else {
            "roots"
        },
        bp,
        if bp == 1 { "point" } else { "points" },
    )
}

/// `sessions tree FILE` as text.
pub(crate) fn run_text(
    ctx: &Ctx,
    path: &Path,
    opts: &TreeOptions,
    out: &mut Output,
) -> anyhow::Result<()> {
    let opened = model::open(ctx, path)?;
    model::with_problem_report(ctx, path, &opened, out, |out| {
        let m = TreeModel::new(&opened.ro.session, Some(&opened.ro.report));
        write_text(path, &opened.ro, &m, opts, out)
    })
}

/// Writes the header, the tree and the legend.
pub(crate) fn write_text(
    path: &Path,
    ro: &session_store::ReadOnlyOpen,
    m: &TreeModel<'_>,
    opts: &TreeOptions,
    out: &mut Output,
) -> anyhow::Result<()> {
    out.line(&header_line(path, m))?;
    if let Some(note) = model::unstable_ids_note(model::file_version(ro)?) {
        out.line(&note)?;
    }
    let tips = tip_ids(m);
    if tips.len() > 1 {
        out.line(&crate::check::tips_text(&tips))?;
    }
    if m.len() == 0 {
        out.line("(no entries)")?;
        return Ok(());
    }
    for l in render_lines(m, opts) {
        out.line(&l)?;
    }
    let mut legend = "legend: ● current branch  ○ other branch  ◀ leaf  ◆ branch point  ✂ compaction  ⇤ first kept entry".to_owned();
    if m.in_cycle.iter().any(|&c| c) {
        legend.push_str("  ⟲ parent cycle");
    }
    out.line(&legend)?;
    Ok(())
}

/// The tips of the tree (full ids, file order).
fn tip_ids(m: &TreeModel<'_>) -> Vec<String> {
    m.tree
        .tips()
        .into_iter()
        .map(|k| m.id(k).to_owned())
        .collect()
}

fn s(v: impl Into<String>) -> JsValue {
    JsValue::from(v.into())
}

fn opt_s(v: Option<impl Into<String>>) -> JsValue {
    v.map_or(JsValue::Null, |v| JsValue::from(v.into()))
}

fn num(n: usize) -> JsValue {
    JsValue::Number(n as f64)
}

/// The tree as the JSON value documented in `--help`.
pub(crate) fn to_json(
    path: &Path,
    ro: &session_store::ReadOnlyOpen,
    m: &TreeModel<'_>,
    depth: Option<usize>,
) -> anyhow::Result<JsValue> {
    let sm = &ro.session;
    let max_depth = depth.unwrap_or(usize::MAX).max(1);
    let mut o = JsObject::new();
    o.insert("file", s(path.display().to_string()));
    o.insert("sessionId", s(sm.get_session_id()));
    o.insert(
        "version",
        model::file_version(ro)?.map_or(JsValue::Null, JsValue::Number),
    );
    o.insert("leafId", opt_s(sm.get_leaf_id()));
    o.insert("entryCount", num(m.len()));
    o.insert("branchPoints", num(m.branch_points()));
    o.insert(
        "roots",
        JsValue::Array(m.tree.roots.iter().map(|&r| s(m.id(r))).collect()),
    );
    o.insert(
        "tips",
        JsValue::Array(tip_ids(m).into_iter().map(s).collect()),
    );
    let mut nodes = Vec::with_capacity(m.len());
    for &i in &m.order {
        if m.depth[i] > max_depth {
            continue;
        }
        let v = m.value(i).unwrap_or(JsValue::Null);
        let summary = m.summary(i);
        let ty = m.tree.nodes[i].entry.entry_type();
        let mut n = JsObject::new();
        n.insert("id", s(m.id(i)));
        n.insert("parentId", opt_s(m.parent[i].map(|p| m.id(p))));
        n.insert("depth", num(m.depth[i]));
        n.insert("line", m.line(i).map_or(JsValue::Null, num));
        n.insert("kind", s(ty.as_str()));
        n.insert(
            "role",
            if ty == session_format::entry::EntryType::Message {
                opt_s(
                    v.get("message")
                        .and_then(|msg| crate::render::field(msg, "role")),
                )
            } else {
                JsValue::Null
            },
        );
        n.insert("text", s(text::excerpt_exact(&summary.text, 200)));
        n.insert("label", opt_s(m.label(i)));
        n.insert(
            "children",
            JsValue::Array(m.children(i).iter().map(|&c| s(m.id(c))).collect()),
        );
        n.insert("onBranch", JsValue::Bool(m.on_branch[i]));
        n.insert("leaf", JsValue::Bool(m.leaf == Some(i)));
        n.insert("branchPoint", JsValue::Bool(m.children(i).len() > 1));
        n.insert("inCycle", JsValue::Bool(m.in_cycle[i]));
        nodes.push(JsValue::Object(n));
    }
    o.insert("nodes", JsValue::Array(nodes));
    Ok(JsValue::Object(o))
}

/// `sessions tree FILE --json`.
pub(crate) fn run_json(
    ctx: &Ctx,
    path: &Path,
    opts: &TreeOptions,
    out: &mut Output,
) -> anyhow::Result<()> {
    let opened: Opened = model::open(ctx, path)?;
    model::with_problem_report(ctx, path, &opened, out, |out| {
        let m = TreeModel::new(&opened.ro.session, Some(&opened.ro.report));
        let v = to_json(path, &opened.ro, &m, opts.depth)?;
        out.line(&session_format::normalize::to_json_string_indented(&v, 2))?;
        Ok(())
    })
}
