//! Helpers of the snapshot and warm cache tests: one lock per test binary (the cache is
//! process-wide), lines to plant, and a full description of a manager's observable state to
//! compare a warm or tail-reindexed open with a fresh, uncached load.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.
#![allow(dead_code)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use session_format::json::to_json_string;
use session_store::CacheLimits;
use session_store::{SessionFileSnapshot, SessionManager, WriteOwner};

/// The warm cache of the process-wide file store (the one the default managers use).
fn warm_cache() -> &'static session_store::WarmCache {
    session_store::FileStorage::process_wide().warm_cache()
}

static LOCK: Mutex<()> = Mutex::new(());

/// Serialises the tests of one binary (they share the process-wide cache) and starts each one
/// with an empty cache and the default limits.
pub fn serial() -> MutexGuard<'static, ()> {
    let guard = LOCK.lock().unwrap_or_else(PoisonError::into_inner);
    warm_cache().set_limits(CacheLimits::default());
    warm_cache().clear();
    guard
}

/// A temporary directory and its canonical path (the key the cache and the hooks use).
pub fn dir() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let p = std::fs::canonicalize(t.path()).unwrap();
    (t, p)
}

/// The standard v3 header line.
pub const HEADER: &str = r#"{"type":"session","version":3,"id":"0195f000-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/dev/project"}"#;

/// A `message` row.
pub fn msg(id: &str, parent: Option<&str>, role: &str, text: &str) -> String {
    let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"{role}","content":[{{"type":"text","text":"{text}"}}],"timestamp":1}}}}"#
    )
}

/// A file of `HEADER` and `lines`, each followed by `\n`.
pub fn file_text(lines: &[String]) -> String {
    let mut s = format!("{HEADER}\n");
    for l in lines {
        s.push_str(l);
        s.push('\n');
    }
    s
}

/// Plants a file atomically (a new inode).
pub fn plant(path: &Path, text: &str) {
    session_store::io::write_raw(path, text.as_bytes()).unwrap();
}

/// Appends raw bytes (another writer).
pub fn foreign_append(path: &Path, text: &str) {
    session_store::io::append_raw(path, text.as_bytes()).unwrap();
}

/// Rewrites the file in place (same inode), as `writeFileSync` does.
#[allow(clippy::disallowed_methods)] // Plays a writer that does not go through our io module.
pub fn rewrite_in_place(path: &Path, text: &str) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

/// The file's bytes as text.
pub fn read(path: &Path) -> String {
    String::from_utf8(std::fs::read(path).unwrap()).unwrap()
}

/// Everything a caller can observe of a manager's session: leaf, append cursor, header,
/// every entry (id, type, raw and reported parent, location, exact bytes, children), the tree,
/// the branch, the context, the session name and the diagnostics.
pub fn state(sm: &SessionManager) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "leaf {:?} append {:?}",
        sm.get_leaf_id(),
        sm.get_append_parent_id()
    );
    let _ = writeln!(
        out,
        "header {:?}",
        sm.get_header().map(|h| h.map(|v| to_json_string(&v)))
    );
    for e in sm.get_entries() {
        let children: Vec<String> = sm
            .get_children(Some(e.id()))
            .iter()
            .map(|c| c.id().to_owned())
            .collect();
        let _ = writeln!(
            out,
            "entry {} {:?} raw-parent {:?} parent {:?} at {:?} children {children:?} bytes {}",
            e.id(),
            e.entry_type(),
            e.raw_parent_id(),
            e.parent_id(),
            e.location(),
            String::from_utf8_lossy(e.raw_bytes()),
        );
    }
    let roots: Vec<String> = sm
        .get_children(None)
        .iter()
        .map(|c| c.id().to_owned())
        .collect();
    let _ = writeln!(out, "roots {roots:?}");
    let tree = sm.get_tree();
    for (i, n) in tree.nodes.iter().enumerate() {
        let _ = writeln!(
            out,
            "node {i} {} label {:?} children {:?}",
            n.entry.id(),
            n.label.as_ref().map(to_json_string),
            n.children
        );
    }
    let _ = writeln!(out, "tree roots {:?}", tree.roots);
    let branch: Vec<&str> = sm.get_branch(None).iter().map(|e| e.id()).collect();
    let _ = writeln!(out, "branch {branch:?}");
    let context = match sm.build_session_context() {
        Ok(c) => match c.to_value() {
            Ok(v) => to_json_string(&v),
            Err(e) => format!("error {e}"),
        },
        Err(e) => format!("error {e}"),
    };
    let _ = writeln!(out, "context {context}");
    let _ = writeln!(
        out,
        "name {:?}",
        sm.get_session_name().map_err(|e| e.to_string())
    );
    let _ = writeln!(out, "diagnostics {:?}", sm.diagnostics());
    out
}

/// The state of a fresh, uncached load of `path` (the read-only open never uses the cache).
pub fn cold_state(path: &Path) -> String {
    let ro = SessionManager::open_read_only(path, None).unwrap();
    state(&ro.session)
}

/// An owned write context that counts its calls.
#[derive(Debug, Default)]
pub struct CountingOwner {
    pub file: PathBuf,
    pub asked: Mutex<Vec<SessionFileSnapshot>>,
    pub published: Mutex<Vec<SessionFileSnapshot>>,
    pub allow_advance: bool,
    pub accept: bool,
}

impl CountingOwner {
    pub fn new(file: &Path) -> Arc<Self> {
        Self::with(file, true, true)
    }

    pub fn with(file: &Path, allow_advance: bool, accept: bool) -> Arc<Self> {
        Arc::new(CountingOwner {
            file: file.to_path_buf(),
            allow_advance,
            accept,
            ..CountingOwner::default()
        })
    }

    pub fn asked(&self) -> usize {
        self.asked.lock().unwrap().len()
    }

    pub fn published(&self) -> Vec<SessionFileSnapshot> {
        self.published.lock().unwrap().clone()
    }
}

impl WriteOwner for CountingOwner {
    fn session_file(&self) -> Option<PathBuf> {
        Some(self.file.clone())
    }

    fn can_advance_cache(&self, before: &SessionFileSnapshot) -> bool {
        self.asked.lock().unwrap().push(*before);
        self.allow_advance
    }

    fn publish_snapshot(&self, snapshot: &SessionFileSnapshot) -> bool {
        self.published.lock().unwrap().push(*snapshot);
        self.accept
    }
}

/// A user message payload.
pub fn user(text: &str) -> session_format::json::JsValue {
    session_format::json::parse_value(
        format!(r#"{{"role":"user","content":[{{"type":"text","text":"{text}"}}],"timestamp":1}}"#)
            .as_bytes(),
    )
    .unwrap()
}

/// An assistant message payload.
pub fn assistant(text: &str) -> session_format::json::JsValue {
    session_format::json::parse_value(
        format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}],"api":"anthropic-messages","provider":"anthropic","model":"m","stopReason":"stop","timestamp":2}}"#
        )
        .as_bytes(),
    )
    .unwrap()
}
