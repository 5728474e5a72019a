//! Fuzz target: the index replay of `session-store`. Writes the input to a session file in a
//! fresh temporary directory (`session-fuzz-*`, on tmpfs when there is one, removed again after
//! each input), opens it read-only (line framing, envelope scan,
//! row classification, migration and corrupt-header recovery in memory, index replay, the
//! open report), and runs every query over the result: entry values, branches and children of
//! every entry, labels, the tree, the context at every entry and at the leaf, the header, the
//! session name and the diagnostics; then the repair dry run over the same file. Crashes on any
//! panic, and when the report's line numbers or byte offsets point outside the file.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use session_store::{RepairOptions, SessionManager, repair_session_file_with};

/// Where the per-input directories go: `/dev/shm` when present, else the temporary directory.
fn scratch_base() -> &'static Path {
    static BASE: OnceLock<PathBuf> = OnceLock::new();
    BASE.get_or_init(|| {
        let shm = Path::new("/dev/shm");
        if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        }
    })
}

fn query_all(sm: &SessionManager) {
    let ids: Vec<String> = sm.get_entries().map(|e| e.id().to_owned()).collect();
    for e in sm.get_entries() {
        let _ = e.value();
        let _ = e.to_entry();
        let _ = (e.parent_id(), e.location());
    }
    for id in &ids {
        let _ = sm.get_branch(Some(id));
        let _ = sm.get_children(Some(id));
        let _ = sm.get_label(id);
        if let Ok(ctx) = sm.build_session_context_at(id) {
            let _ = ctx.to_value();
        }
    }
    let _ = sm.get_tree().nodes.len();
    let _ = sm.get_header();
    let _ = sm.get_session_name();
    if let Ok(ctx) = sm.build_session_context() {
        let _ = ctx.to_value();
    }
}

fuzz_target!(|data: &[u8]| {
    // A fresh directory per input, removed when `dir` drops at the end of the input (libFuzzer
    // ends the process with `exit`, which would skip the drop of anything kept longer).
    let dir = tempfile::Builder::new()
        .prefix("session-fuzz-")
        .tempdir_in(scratch_base())
        .expect("scratch directory");
    let path = dir.path().join("s.jsonl");
    session_store::io::append_raw(&path, data).expect("write the input");
    if let Ok(ro) = SessionManager::open_read_only(&path, None) {
        let r = &ro.report;
        assert_eq!(r.bytes, data.len());
        for m in &r.malformed_lines {
            assert!(m.line >= 1 && m.line_offset <= data.len(), "{m:?}");
            assert!(
                m.error_offset >= m.line_offset && m.error_offset <= data.len(),
                "{m:?}"
            );
        }
        query_all(&ro.session);
        let _ = ro.session.diagnostics();
    }
    let _ = repair_session_file_with(
        &path,
        None,
        &RepairOptions {
            keep_backup: true,
            dry_run: true,
        },
    );
});
