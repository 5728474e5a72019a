//! Freeing large read results off the main thread: ≈ 150,000 rows and ids of a 200 MB session
//! take tens of milliseconds to free, which the user would otherwise wait for at exit.

use session_store::{OpenReport, ReadOnlyOpen, SessionManager, SessionTree};

/// Sessions whose file has at least this many bytes are freed on a thread of their own.
const SESSION_OFF_THREAD_MIN: usize = 8 << 20;

/// Trees with at least this many nodes have their children lists freed on a thread.
const TREE_OFF_THREAD_MIN: usize = 50_000;

/// Moves a large read-only open (file of ≥ 8 MiB) to a thread that frees it, leaving an empty
/// in-memory session in its place; a small one is left as it is.
pub(crate) fn session(ro: &mut ReadOnlyOpen) {
    if ro.report.bytes < SESSION_OFF_THREAD_MIN {
        return;
    }
    let ro = std::mem::replace(
        ro,
        ReadOnlyOpen {
            session: SessionManager::in_memory(""),
            report: OpenReport::default(),
        },
    );
    std::thread::spawn(move || drop(ro));
}

/// Frees a large tree (a vector of children per node, ≥ 50,000 nodes) on a thread of its own;
/// the nodes borrow the session, so only the children lists move to the thread.
pub(crate) fn tree(tree: SessionTree<'_>) {
    if tree.nodes.len() < TREE_OFF_THREAD_MIN {
        return;
    }
    let kids: Vec<Vec<usize>> = tree.nodes.into_iter().map(|n| n.children).collect();
    std::thread::spawn(move || drop(kids));
}
