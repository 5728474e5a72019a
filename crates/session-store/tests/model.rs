//! Model-based property test of the SessionManager (docs/RELIABILITY.md): random sequences of appends
//! (user, assistant, toolResult, custom message, custom), model and thinking changes, branches
//! (to an earlier id, to an unknown id), branch summaries, label set and clear, compactions,
//! `reset_leaf`, `flush`, reopen (drop the manager and open its file again) and
//! `create_branched_session` (going on in the new session; a compaction keeping from a label it
//! drops keeps from the next copied entry, docs/DEVIATIONS.md D31) run against a plain in-memory
//! model:
//! a `Vec` of entries with id, parent, kind and label, plus the leaf, and a second copy of what
//! the file holds (openclaw-jsonl.md §2.12: nothing is written before the first assistant
//! message; a held session is written in full by the first assistant append or `flush`;
//! `branch` and `reset_leaf` write nothing; a full rewrite records a leaf control when the leaf
//! is not the file's last entry).
//!
//! After every operation, for the live manager against the model's memory and for a read-only
//! open of the file against the model's file copy (or: the file does not exist):
//! - entries in file order (id, stored parent id, type and the fields the model knows), the
//!   leaf, and that every stored parent id names an entry (and the open report finds no dangling
//!   parent, cycle, duplicate id, malformed line or missing final newline);
//! - `get_branch(leaf)` is the model's path: it ends at the leaf and starts at a root;
//! - the context (`build_session_context`): roles and source entry ids of every message (a
//!   compaction's summary first, its kept entries from `firstKeptEntryId` when that lies before
//!   it on the path, then what follows), the thinking level and the model;
//! - `get_label` of every entry, and one tree node per entry;
//! - while the manager is flushed, the file holds exactly the manager's entries (and its leaf
//!   whenever the model says the file implies it).
//!
//! 64 cases of up to 40 operations; `RELIABILITY_SCALE=full` runs 1024. Prints
//! `RELIABILITY {"suite":"model",...}` (see docs/RELIABILITY.md, "Figure lines").
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::cell::Cell;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use session_format::entry::EntryType;
use session_format::json::JsValue;
use session_store::SessionManager;

/// An index into the current entries (taken modulo their count).
type Pick = usize;

#[derive(Clone, Debug)]
enum Op {
    User,
    Assistant,
    ToolResult,
    CustomMessage,
    Custom,
    Thinking(u8),
    ModelChange(u8),
    Branch(Pick),
    BranchUnknown,
    BranchWithSummary(Option<Pick>, bool),
    LabelSet(Pick, u8),
    LabelClear(Pick),
    LabelUnknown,
    Compaction(Option<Pick>),
    ResetLeaf,
    Flush,
    Reopen,
    CreateBranched(Option<Pick>),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => Just(Op::User),
        6 => Just(Op::Assistant),
        2 => Just(Op::ToolResult),
        1 => Just(Op::CustomMessage),
        1 => Just(Op::Custom),
        1 => (0u8..3).prop_map(Op::Thinking),
        1 => (0u8..3).prop_map(Op::ModelChange),
        3 => any::<usize>().prop_map(Op::Branch),
        1 => Just(Op::BranchUnknown),
        2 => (proptest::option::weighted(0.8, any::<usize>()), any::<bool>())
            .prop_map(|(p, s)| Op::BranchWithSummary(p, s)),
        2 => (any::<usize>(), 0u8..3).prop_map(|(p, l)| Op::LabelSet(p, l)),
        1 => any::<usize>().prop_map(Op::LabelClear),
        1 => Just(Op::LabelUnknown),
        2 => proptest::option::weighted(0.8, any::<usize>()).prop_map(Op::Compaction),
        1 => Just(Op::ResetLeaf),
        2 => Just(Op::Flush),
        3 => Just(Op::Reopen),
        2 => proptest::option::weighted(0.7, any::<usize>()).prop_map(Op::CreateBranched),
    ]
}

const UNKNOWN: &str = "zzzz-unknown";
const LEVELS: [&str; 3] = ["low", "medium", "high"];
const MODELS: [(&str, &str); 3] = [
    ("openai", "gpt-x"),
    ("anthropic", "claude-y"),
    ("google", "gem-z"),
];
const LABELS: [&str; 3] = ["checkpoint", "bug", "keep"];

// ---------------------------------------------------------------------------------------------
// The model.

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Message(String),
    Thinking(String),
    ModelChange(String, String),
    Compaction {
        first_kept: String,
    },
    BranchSummary {
        summary: String,
        from: String,
    },
    Label {
        target: String,
        label: Option<String>,
    },
    CustomMessage,
    Custom,
}

#[derive(Clone, Debug, PartialEq)]
struct MEntry {
    id: String,
    parent: Option<String>,
    kind: Kind,
}

impl MEntry {
    fn is_assistant(&self) -> bool {
        self.kind == Kind::Message("assistant".into())
    }
}

/// One session state: entries in file order and the leaf.
#[derive(Clone, Debug, Default, PartialEq)]
struct State {
    entries: Vec<MEntry>,
    leaf: Option<String>,
}

/// `(role, source entry id)` of one context message.
type CtxMsg = (String, String);

impl State {
    fn get(&self, id: &str) -> Option<&MEntry> {
        self.entries.iter().find(|e| e.id == id)
    }

    fn has_assistant(&self) -> bool {
        self.entries.iter().any(MEntry::is_assistant)
    }

    /// Root → `from` over stored parents (entries made by appends: no cycles).
    fn path(&self, from: Option<&str>) -> Vec<&MEntry> {
        let mut out = Vec::new();
        let mut cur = from.and_then(|id| self.get(id));
        while let Some(e) = cur {
            out.push(e);
            cur = e.parent.as_deref().and_then(|p| self.get(p));
        }
        out.reverse();
        out
    }

    /// Labels in JavaScript `Map` insertion order: setting an existing key keeps its place,
    /// clearing deletes it.
    fn labels(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for e in &self.entries {
            if let Kind::Label { target, label } = &e.kind {
                let at = out.iter().position(|(t, _)| t == target);
                match (label, at) {
                    (Some(l), Some(k)) => out[k].1.clone_from(l),
                    (Some(l), None) => out.push((target.clone(), l.clone())),
                    (None, Some(k)) => {
                        out.remove(k);
                    }
                    (None, None) => {}
                }
            }
        }
        out
    }

    fn label(&self, id: &str) -> Option<String> {
        self.labels()
            .into_iter()
            .find(|(t, _)| t == id)
            .map(|(_, l)| l)
    }

    /// The context messages at the leaf (openclaw-jsonl.md §2.7).
    fn context(&self) -> Vec<CtxMsg> {
        let path = self.path(self.leaf.as_deref());
        let produce = |e: &MEntry| -> Option<CtxMsg> {
            let role = match &e.kind {
                Kind::Message(r) => r.clone(),
                Kind::CustomMessage => "custom".into(),
                Kind::BranchSummary { summary, .. } if !summary.is_empty() => {
                    "branchSummary".into()
                }
                _ => return None,
            };
            Some((role, e.id.clone()))
        };
        let boundary = path
            .iter()
            .rposition(|e| matches!(e.kind, Kind::Compaction { .. }));
        match boundary {
            None => path.iter().filter_map(|e| produce(e)).collect(),
            Some(ci) => {
                let Kind::Compaction { first_kept } = &path[ci].kind else {
                    unreachable!()
                };
                let mut out = vec![("compactionSummary".to_owned(), path[ci].id.clone())];
                if let Some(k) = path[..ci].iter().position(|e| &e.id == first_kept) {
                    out.extend(path[k..ci].iter().filter_map(|e| produce(e)));
                }
                out.extend(path[ci + 1..].iter().filter_map(|e| produce(e)));
                out
            }
        }
    }

    fn thinking(&self) -> String {
        self.path(self.leaf.as_deref())
            .iter()
            .rev()
            .find_map(|e| match &e.kind {
                Kind::Thinking(l) => Some(l.clone()),
                _ => None,
            })
            .unwrap_or_else(|| "off".into())
    }

    fn model(&self) -> Option<(String, String)> {
        self.path(self.leaf.as_deref())
            .iter()
            .rev()
            .find_map(|e| match &e.kind {
                Kind::ModelChange(p, m) => Some((p.clone(), m.clone())),
                Kind::Message(r) if r == "assistant" => Some(("anthropic".into(), "m".into())),
                _ => None,
            })
    }
}

/// The manager as the model sees it: memory, the file (`None` = no file), and `flushed`.
#[derive(Debug, Default)]
struct Model {
    mem: State,
    disk: Option<State>,
    flushed: bool,
}

impl Model {
    /// An append of `kind` as `id` under the leaf, with the §2.12 persistence rule.
    fn append(&mut self, id: String, kind: Kind) -> Result<(), TestCaseError> {
        prop_assert!(self.mem.get(&id).is_none(), "id {id} reused");
        let e = MEntry {
            id: id.clone(),
            parent: self.mem.leaf.clone(),
            kind,
        };
        let written = self.mem.has_assistant() || e.is_assistant();
        self.mem.entries.push(e.clone());
        self.mem.leaf = Some(id.clone());
        if !written {
            self.flushed = false;
        } else if self.flushed {
            let Some(disk) = self.disk.as_mut() else {
                return Err(TestCaseError::fail("model: flushed without a file"));
            };
            disk.entries.push(e);
            disk.leaf = Some(id);
        } else {
            self.full_write();
        }
        Ok(())
    }

    fn full_write(&mut self) {
        self.disk = Some(self.mem.clone());
        self.flushed = true;
    }

    fn pick(&self, p: Pick) -> Option<String> {
        let n = self.mem.entries.len();
        (n > 0).then(|| self.mem.entries[p % n].id.clone())
    }
}

// ---------------------------------------------------------------------------------------------
// Reading the system under test.

fn kind_of(e: &session_store::EntryRef<'_>) -> Kind {
    let v = e.raw_value().unwrap();
    let s = |v: Option<&JsValue>| v.and_then(JsValue::as_str_lossy).map(|s| s.into_owned());
    match e.entry_type() {
        EntryType::Message => {
            Kind::Message(s(v.get("message").and_then(|m| m.get("role"))).unwrap_or_default())
        }
        EntryType::ThinkingLevelChange => {
            Kind::Thinking(s(v.get("thinkingLevel")).unwrap_or_default())
        }
        EntryType::ModelChange => Kind::ModelChange(
            s(v.get("provider")).unwrap_or_default(),
            s(v.get("modelId")).unwrap_or_default(),
        ),
        EntryType::Compaction => Kind::Compaction {
            first_kept: s(v.get("firstKeptEntryId")).unwrap_or_default(),
        },
        EntryType::BranchSummary => Kind::BranchSummary {
            summary: s(v.get("summary")).unwrap_or_default(),
            from: s(v.get("fromId")).unwrap_or_default(),
        },
        EntryType::Label => Kind::Label {
            target: s(v.get("targetId")).unwrap_or_default(),
            label: s(v.get("label")),
        },
        EntryType::CustomMessage => Kind::CustomMessage,
        EntryType::Custom => Kind::Custom,
        other => Kind::Message(format!("unexpected type {other:?}")),
    }
}

fn entries_of(sm: &SessionManager) -> Vec<MEntry> {
    sm.get_entries()
        .map(|e| MEntry {
            id: e.id().to_owned(),
            parent: e.raw_parent_id().map(str::to_owned),
            kind: kind_of(&e),
        })
        .collect()
}

/// Every invariant of one manager against one model state.
fn check(sm: &SessionManager, st: &State, what: &str) -> Result<(), TestCaseError> {
    let entries = entries_of(sm);
    prop_assert_eq!(&entries, &st.entries, "{}: entries", what);
    prop_assert_eq!(sm.get_leaf_id(), st.leaf.as_deref(), "{}: leaf", what);
    for e in &entries {
        if let Some(p) = &e.parent {
            prop_assert!(
                sm.get_entry(p).is_some(),
                "{}: parent {} of {} does not resolve",
                what,
                p,
                e.id
            );
        }
    }
    let branch: Vec<String> = support::ids(sm.get_branch(None));
    let want: Vec<String> = st
        .path(st.leaf.as_deref())
        .iter()
        .map(|e| e.id.clone())
        .collect();
    prop_assert_eq!(&branch, &want, "{}: get_branch(leaf)", what);
    prop_assert_eq!(
        branch.last(),
        st.leaf.as_ref(),
        "{}: branch ends at leaf",
        what
    );
    if let Some(first) = branch.first() {
        prop_assert_eq!(
            sm.get_entry(first).unwrap().raw_parent_id(),
            None,
            "{}: branch starts at a root",
            what
        );
    }
    let ctx = sm.build_session_context().unwrap();
    let got: Vec<CtxMsg> = ctx
        .messages
        .iter()
        .map(|m| {
            (
                m.role().unwrap().unwrap_or_default(),
                m.entry.id().to_owned(),
            )
        })
        .collect();
    prop_assert_eq!(got, st.context(), "{}: context messages", what);
    prop_assert_eq!(
        ctx.thinking_level_str(),
        Some(st.thinking()),
        "{}: thinking level",
        what
    );
    prop_assert_eq!(
        ctx.model
            .as_ref()
            .and_then(session_store::ContextModel::as_strs),
        st.model(),
        "{}: model",
        what
    );
    for e in &entries {
        prop_assert_eq!(
            sm.get_label(&e.id)
                .and_then(JsValue::as_str_lossy)
                .map(|s| s.into_owned()),
            st.label(&e.id),
            "{}: label of {}",
            what,
            e.id
        );
    }
    prop_assert_eq!(sm.get_tree().nodes.len(), entries.len(), "{}: tree", what);
    Ok(())
}

/// The file against the model's file copy; while flushed, the file against the live manager.
fn check_disk(sm: &SessionManager, model: &Model, step: &str) -> Result<(), TestCaseError> {
    let path: PathBuf = sm.get_session_file().unwrap().to_path_buf();
    let Some(disk) = &model.disk else {
        prop_assert!(!path.exists(), "{}: nothing should be written yet", step);
        return Ok(());
    };
    let ro = SessionManager::open_read_only(&path, None).unwrap();
    let r = &ro.report;
    prop_assert!(
        r.malformed_lines.is_empty()
            && !r.missing_final_newline
            && r.corrupt_header.is_none()
            && r.cycles.is_empty()
            && r.dangling_parents.is_empty()
            && r.duplicate_ids.is_empty()
            && r.invalid_leaf_controls.is_empty(),
        "{}: open report {:?}",
        step,
        r
    );
    check(&ro.session, disk, &format!("{step} (file)"))?;
    if model.flushed {
        prop_assert_eq!(
            entries_of(&ro.session),
            entries_of(sm),
            "{}: flushed, yet file and memory differ",
            step
        );
        if disk.leaf == model.mem.leaf {
            prop_assert_eq!(ro.session.get_leaf_id(), sm.get_leaf_id(), "{}: leaf", step);
        }
    }
    Ok(())
}

fn payload(op: &Op) -> JsValue {
    match op {
        Op::User => support::user("q", 1),
        Op::Assistant => support::assistant("a", 2),
        _ => support::js(
            r#"{"role":"toolResult","toolCallId":"c1","toolName":"bash","isError":false,"content":[{"type":"text","text":"ok"}],"timestamp":3}"#,
        ),
    }
}

/// Runs one operation on both sides.
fn apply(
    sm: &mut SessionManager,
    model: &mut Model,
    op: &Op,
    path: &Path,
) -> Result<(), TestCaseError> {
    match op {
        Op::User | Op::Assistant | Op::ToolResult => {
            let id = sm.append_message(payload(op)).unwrap();
            let role = match op {
                Op::User => "user",
                Op::Assistant => "assistant",
                _ => "toolResult",
            };
            model.append(id, Kind::Message(role.into()))?;
        }
        Op::CustomMessage => {
            let id = sm
                .append_custom_message_entry("note", JsValue::from("hello"), true, None)
                .unwrap();
            model.append(id, Kind::CustomMessage)?;
        }
        Op::Custom => {
            let id = sm.append_custom_entry("state", None).unwrap();
            model.append(id, Kind::Custom)?;
        }
        Op::Thinking(k) => {
            let level = LEVELS[usize::from(*k)];
            let id = sm.append_thinking_level_change(level).unwrap();
            model.append(id, Kind::Thinking(level.into()))?;
        }
        Op::ModelChange(k) => {
            let (p, m) = MODELS[usize::from(*k)];
            let id = sm.append_model_change(p, m).unwrap();
            model.append(id, Kind::ModelChange(p.into(), m.into()))?;
        }
        Op::Branch(p) => match model.pick(*p) {
            Some(id) => {
                sm.branch(&id).unwrap();
                model.mem.leaf = Some(id);
            }
            None => prop_assert!(sm.branch(UNKNOWN).is_err()),
        },
        Op::BranchUnknown => {
            let err = sm.branch(UNKNOWN).unwrap_err();
            prop_assert_eq!(err.to_string(), format!("Entry {UNKNOWN} not found"));
        }
        Op::BranchWithSummary(target, nonempty) => {
            let target = target.and_then(|p| model.pick(p));
            let summary = if *nonempty { "went back" } else { "" };
            let id = sm
                .branch_with_summary(target.as_deref().map(Into::into), summary, None, None)
                .unwrap();
            model.mem.leaf.clone_from(&target);
            model.append(
                id,
                Kind::BranchSummary {
                    summary: summary.into(),
                    from: target.unwrap_or_else(|| "root".into()),
                },
            )?;
        }
        Op::LabelSet(p, l) => match model.pick(*p) {
            Some(target) => {
                let label = LABELS[usize::from(*l)];
                let id = sm.append_label_change(&target, Some(label)).unwrap();
                model.append(
                    id,
                    Kind::Label {
                        target,
                        label: Some(label.into()),
                    },
                )?;
            }
            None => prop_assert!(sm.append_label_change(UNKNOWN, Some("x")).is_err()),
        },
        Op::LabelClear(p) => match model.pick(*p) {
            Some(target) => {
                let id = sm.append_label_change(&target, None).unwrap();
                model.append(
                    id,
                    Kind::Label {
                        target,
                        label: None,
                    },
                )?;
            }
            None => prop_assert!(sm.append_label_change(UNKNOWN, None).is_err()),
        },
        Op::LabelUnknown => {
            let err = sm.append_label_change(UNKNOWN, Some("x")).unwrap_err();
            prop_assert_eq!(err.to_string(), format!("Entry {UNKNOWN} not found"));
        }
        Op::Compaction(p) => {
            let first_kept = p
                .and_then(|p| model.pick(p))
                .unwrap_or_else(|| UNKNOWN.to_owned());
            let id = sm
                .append_compaction("summary", &first_kept, 1234.0, None, None)
                .unwrap();
            model.append(id, Kind::Compaction { first_kept })?;
        }
        Op::ResetLeaf => {
            sm.reset_leaf();
            model.mem.leaf = None;
        }
        Op::Flush => {
            sm.flush().unwrap();
            if !model.flushed {
                model.full_write();
            }
        }
        Op::Reopen => {
            let file = sm.get_session_file().unwrap().to_path_buf();
            *sm = SessionManager::open(&file, Some(path), None).unwrap();
            model.mem = model.disk.clone().unwrap_or_default();
            model.flushed = model.disk.is_some();
        }
        Op::CreateBranched(p) => {
            let from = p
                .and_then(|p| model.pick(p))
                .or_else(|| model.mem.leaf.clone());
            let Some(from) = from else {
                prop_assert!(sm.create_branched_session(UNKNOWN).is_err());
                return Ok(());
            };
            let mut full: Vec<MEntry> = model.mem.path(Some(&from)).into_iter().cloned().collect();
            let is_label = |e: &MEntry| matches!(e.kind, Kind::Label { .. });
            // A compaction keeping from a label on the path (which the copy drops) keeps from
            // the next copied entry of the path instead, the compaction itself at the latest
            // (docs/DEVIATIONS.md D31).
            let mut remapped: Vec<(usize, String)> = Vec::new();
            for (ci, e) in full.iter().enumerate() {
                let Kind::Compaction { first_kept } = &e.kind else {
                    continue;
                };
                if let Some(k) = full[..ci].iter().position(|x| &x.id == first_kept)
                    && is_label(&full[k])
                    && let Some(next) = full[k..=ci].iter().find(|x| !is_label(x))
                {
                    remapped.push((ci, next.id.clone()));
                }
            }
            for (ci, id) in remapped {
                full[ci].kind = Kind::Compaction { first_kept: id };
            }
            let kept: Vec<MEntry> = full.into_iter().filter(|e| !is_label(e)).collect();
            let old_file = sm.get_session_file().unwrap().to_path_buf();
            if kept.is_empty() {
                let err = sm.create_branched_session(&from).unwrap_err();
                prop_assert_eq!(err.to_string(), format!("Entry {from} not found"));
                return Ok(());
            }
            let labels = model.mem.labels();
            let new_file = sm.create_branched_session(&from).unwrap().unwrap();
            prop_assert_ne!(&new_file, &old_file);
            prop_assert_eq!(new_file.parent(), Some(path));
            let mut st = State::default();
            let mut parent: Option<String> = None;
            for mut e in kept {
                e.parent = parent.replace(e.id.clone());
                st.entries.push(e);
            }
            // The re-created labels get fresh ids: take them from the manager, by position.
            let got = entries_of(sm);
            for (target, label) in labels {
                if st.entries.iter().any(|e| e.id == target) {
                    let Some(e) = got.get(st.entries.len()) else {
                        return Err(TestCaseError::fail("missing re-created label"));
                    };
                    prop_assert!(st.get(&e.id).is_none(), "label id {} reused", e.id);
                    st.entries.push(MEntry {
                        id: e.id.clone(),
                        parent: parent.replace(e.id.clone()),
                        kind: Kind::Label {
                            target,
                            label: Some(label),
                        },
                    });
                }
            }
            st.leaf = parent;
            model.mem = st;
            model.disk = None;
            model.flushed = false;
            if model.mem.has_assistant() {
                model.full_write();
            }
        }
    }
    Ok(())
}

fn run_case(ops: &[Op]) -> Result<(), TestCaseError> {
    let dir = support::tempdir();
    let path = dir.path();
    let mut sm = SessionManager::create("/home/dev/project", Some(path)).unwrap();
    let mut model = Model::default();
    for (k, op) in ops.iter().enumerate() {
        apply(&mut sm, &mut model, op, path)?;
        let step = format!("op {k} {op:?}");
        check(&sm, &model.mem, &step)?;
        check_disk(&sm, &model, &step)?;
    }
    Ok(())
}

fn scale_full() -> bool {
    std::env::var("RELIABILITY_SCALE").is_ok_and(|v| v == "full")
}

#[test]
fn session_manager_matches_the_model() {
    let cases: u32 = if scale_full() { 1024 } else { 64 };
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let ran = Cell::new(0usize);
    let ops = Cell::new(0usize);
    let result = runner.run(&proptest::collection::vec(op(), 1..=40), |v| {
        ran.set(ran.get() + 1);
        ops.set(ops.get() + v.len());
        run_case(&v)
    });
    let failures = usize::from(result.is_err());
    println!(
        "RELIABILITY {{\"suite\":\"model\",\"cases\":{},\"ops\":{},\"failures\":{failures}}}",
        ran.get(),
        ops.get()
    );
    match result {
        Ok(()) => {}
        Err(TestError::Fail(why, ops)) => panic!("model mismatch: {why}\nminimal ops: {ops:#?}"),
        Err(e) => panic!("{e}"),
    }
}

/// The model itself on a hand-checked sequence, so that a wrong model cannot make the
/// property vacuous: user, assistant, compaction keeping the user, branch back to the user,
/// labelled summary, reopen.
#[test]
fn model_walkthrough_is_exact() {
    let ops = [
        Op::User,
        Op::Assistant,
        Op::Compaction(Some(0)),
        Op::User,
        Op::Branch(0),
        Op::BranchWithSummary(Some(1), true),
        Op::LabelSet(0, 0),
        Op::Reopen,
    ];
    let dir = support::tempdir();
    let path = dir.path();
    let mut sm = SessionManager::create("/home/dev/project", Some(path)).unwrap();
    let mut model = Model::default();
    let mut roles = Vec::new();
    for op in &ops {
        apply(&mut sm, &mut model, op, path).unwrap();
        check(&sm, &model.mem, "walkthrough").unwrap();
        check_disk(&sm, &model, "walkthrough").unwrap();
        roles.push(
            model
                .mem
                .context()
                .into_iter()
                .map(|(r, _)| r)
                .collect::<Vec<_>>()
                .join(","),
        );
    }
    assert_eq!(
        roles,
        [
            "user",
            "user,assistant",
            "compactionSummary,user,assistant",
            "compactionSummary,user,assistant,user",
            "user",
            "user,assistant,branchSummary",
            "user,assistant,branchSummary",
            "user,assistant,branchSummary",
        ]
    );
    let ids: Vec<&str> = model.mem.entries.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids.len(), 6);
    assert_eq!(model.mem.label(ids[0]).as_deref(), Some("checkpoint"));
    assert_eq!(model.mem.leaf.as_deref(), Some(ids[5]));
}
