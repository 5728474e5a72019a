//! A full write whose re-read races another writer's append (D11): the lines the other writer
//! appended between the write and the re-read are adopted by the next append — in memory, in
//! file order, with no conflict backup — on the file store and on `MemStorage` alike.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

mod support;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use session_store::test_util::hooks;
use session_store::{FileStorage, MemStorage, SessionManager, Storage};

const FOREIGN: &str = r#"{"type":"message","id":"f1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"from the other gateway","timestamp":1}}"#;

fn ids(sm: &SessionManager) -> Vec<String> {
    sm.get_entries().map(|e| e.id().to_owned()).collect()
}

fn run(storage: Arc<dyn Storage>, dir: &Path) {
    let mut sm = SessionManager::on(storage.clone())
        .create("/w", Some(dir))
        .unwrap();
    let path = sm.get_session_file().unwrap().to_path_buf();
    let fired = Arc::new(AtomicBool::new(false));
    let (hook_storage, hook_path, hook_fired) = (storage.clone(), path.clone(), fired.clone());
    // The first read of the session is the re-read after the first (full) write: another
    // writer appends one line right after it.
    hooks::set_after_read(
        &path,
        Some(Box::new(move |_| {
            if !hook_fired.swap(true, Ordering::SeqCst) {
                hook_storage
                    .append_raw(&hook_path, format!("{FOREIGN}\n").as_bytes())
                    .unwrap();
            }
        })),
    );
    let u = sm
        .append_message(support::js(
            r#"{"role":"user","content":"hi","timestamp":1}"#,
        ))
        .unwrap();
    let a = sm
        .append_message(support::js(
            r#"{"role":"assistant","content":[{"type":"text","text":"yo"}],"provider":"p","model":"m","stopReason":"stop","timestamp":2}"#,
        ))
        .unwrap();
    hooks::set_after_read(&path, None);
    assert!(
        fired.load(Ordering::SeqCst),
        "the re-read after the write ran"
    );
    assert_eq!(ids(&sm), [u.clone(), a.clone()]);
    let n = sm
        .append_message(support::js(
            r#"{"role":"user","content":"next","timestamp":3}"#,
        ))
        .unwrap();
    // The other writer's line is adopted before ours, and the stored session holds all four.
    assert_eq!(ids(&sm), [u.clone(), a.clone(), "f1".to_owned(), n.clone()]);
    let text = String::from_utf8(storage.read_all(&path).unwrap()).unwrap();
    let stored: Vec<String> = text
        .lines()
        .skip(1)
        .map(|l| {
            support::js(l)
                .get("id")
                .unwrap()
                .as_str_lossy()
                .unwrap()
                .into_owned()
        })
        .collect();
    assert_eq!(stored, [u, a, "f1".to_owned(), n]);
    assert_eq!(text.lines().nth(3).unwrap(), FOREIGN);
    assert!(sm.diagnostics().conflict_backups.is_empty());
    assert_eq!(sm.diagnostics().adopted_lines, 1);
}

#[test]
fn lines_appended_during_the_reread_are_adopted_on_files() {
    let dir = support::tempdir();
    run(FileStorage::shared(), dir.path());
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn lines_appended_during_the_reread_are_adopted_in_memory() {
    run(Arc::new(MemStorage::new()), Path::new("/mem/sessions"));
}
