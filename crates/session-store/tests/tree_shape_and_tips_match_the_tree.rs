//! `SessionManager::tree_shape` gives exactly the counts of the forest `get_tree` builds (nodes,
//! roots, depth, branch points, tips, labelled nodes), and `SessionManager::tips` exactly its
//! tips, cycles broken the same way (D3, D4).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use session_store::{SessionManager, TreeShape};
use support::{HEADER, msg_line};

/// The counts, taken from `get_tree`'s nodes and children lists.
fn counted(sm: &SessionManager) -> TreeShape {
    let tree = sm.get_tree();
    let mut depth = 0;
    let mut stack: Vec<(usize, usize)> = tree.roots.iter().map(|&r| (r, 1)).collect();
    let mut seen = 0;
    while let Some((i, d)) = stack.pop() {
        seen += 1;
        depth = depth.max(d);
        stack.extend(tree.nodes[i].children.iter().map(|&c| (c, d + 1)));
    }
    assert_eq!(seen, tree.nodes.len(), "every node once from the roots");
    TreeShape {
        nodes: tree.nodes.len(),
        roots: tree.roots.len(),
        depth,
        branch_points: tree.nodes.iter().filter(|n| n.children.len() > 1).count(),
        leaves: tree.nodes.iter().filter(|n| n.children.is_empty()).count(),
        labels: tree.nodes.iter().filter(|n| n.label.is_some()).count(),
    }
}

/// The ids of `get_tree`'s tips, in its order.
fn tree_tips(sm: &SessionManager) -> Vec<String> {
    let tree = sm.get_tree();
    tree.tips()
        .into_iter()
        .map(|k| tree.nodes[k].entry.id().to_owned())
        .collect()
}

fn tip_ids(sm: &SessionManager) -> Vec<String> {
    sm.tips().into_iter().map(|e| e.id().to_owned()).collect()
}

fn open(text: &str) -> (tempfile::TempDir, SessionManager) {
    let dir = support::tempdir();
    let path = dir.path().join("s.jsonl");
    session_store::io::write_raw(&path, text.as_bytes()).unwrap();
    let ro = SessionManager::open_read_only(&path, Some("/")).unwrap();
    (dir, ro.session)
}

const CYCLE_TIPS: [&str; 3] = ["u1", "C", "T"];

#[test]
fn a_two_cycle_and_a_self_parent() {
    let path = support::fixture("catalogue").join("cycles.jsonl");
    let sm = SessionManager::open_read_only(&path, None).unwrap().session;
    let want = TreeShape {
        nodes: 6,
        roots: 3,
        depth: 3,
        branch_points: 0,
        leaves: 3,
        labels: 0,
    };
    assert_eq!(counted(&sm), want);
    assert_eq!(sm.tree_shape(), want);
    assert_eq!(tip_ids(&sm), CYCLE_TIPS);
    assert_eq!(tree_tips(&sm), CYCLE_TIPS);
}

/// A walk from `X` enters the cycle `P → R → Q → P` at `Q`: the cycle is broken at `P`, the
/// member that comes first in the file, so `Q` (children `R` and `X`) is a branch point. The
/// two label rows are entries under `X` (a second branch point, depth 4 below `P`); the label
/// on `X` counts, the one on an id no entry has does not.
#[test]
fn a_cycle_entered_from_its_tail() {
    let label = |id: &str, target: &str| {
        format!(
            r#"{{"type":"label","id":"{id}","parentId":"X","timestamp":"2026-01-01T00:00:09.000Z","targetId":"{target}","label":"tag"}}"#
        )
    };
    let text = [
        HEADER.to_owned(),
        msg_line("X", Some("Q"), "user", "x", 1),
        msg_line("P", Some("R"), "user", "p", 2),
        msg_line("Q", Some("P"), "assistant", "q", 3),
        msg_line("R", Some("Q"), "user", "r", 4),
        label("l1", "X"),
        label("l2", "nobody"),
    ]
    .join("\n")
        + "\n";
    let (_dir, sm) = open(&text);
    let want = TreeShape {
        nodes: 6,
        roots: 1,
        depth: 4,
        branch_points: 2,
        leaves: 3,
        labels: 1,
    };
    assert_eq!(counted(&sm), want);
    assert_eq!(sm.tree_shape(), want);
    assert_eq!(tip_ids(&sm), ["R", "l1", "l2"]);
    assert_eq!(tree_tips(&sm), ["R", "l1", "l2"]);
}

#[test]
fn no_entries() {
    let (_dir, sm) = open(&format!("{HEADER}\n"));
    assert_eq!(sm.tree_shape(), TreeShape::default());
    assert_eq!(counted(&sm), TreeShape::default());
    assert!(sm.tips().is_empty());
}

/// Every fixture of this crate (duplicate ids, opaque rows, leaf controls, labels, cycles).
#[test]
fn every_fixture() {
    let mut seen = 0;
    for p in session_test_support::files_with_extension(&support::fixture(""), "jsonl") {
        let Ok(ro) = SessionManager::open_read_only(&p, Some("/")) else {
            continue;
        };
        assert_eq!(
            ro.session.tree_shape(),
            counted(&ro.session),
            "{}",
            p.display()
        );
        assert_eq!(
            tip_ids(&ro.session),
            tree_tips(&ro.session),
            "{}",
            p.display()
        );
        seen += 1;
    }
    assert!(seen > 30, "only {seen} fixtures opened");
}
