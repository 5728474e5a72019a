//! What full writes do besides writing: lines another writer appended are adopted, a file
//! another writer changed is backed up byte for byte before a rewrite, and a rewrite keeps
//! mode bits and owner, refuses a file the process cannot write and names a directory where
//! it cannot create its temporary file.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

#[cfg(unix)]
mod as_unprivileged;
mod support;

use std::path::{Path, PathBuf};

#[cfg(unix)]
use as_unprivileged::{PERM_CHILD, is_root, open_dir, run_as_nobody};
use session_format::json::{JsValue, parse_value};
use session_store::{OpenError, SessionManager};
use support::{HEADER, dir_names, msg_line};

fn canon(dir: &tempfile::TempDir) -> PathBuf {
    std::fs::canonicalize(dir.path()).unwrap()
}

fn field(line: &str, key: &str) -> JsValue {
    parse_value(line.as_bytes())
        .unwrap()
        .get(key)
        .cloned()
        .unwrap_or(JsValue::Null)
}

// ------------------------------------------------------------------------------------------
// Other writers: adopt what they appended, back up what they changed.

/// Held appends, then another writer appends `ext`, then the first assistant: the full write
/// keeps `ext` verbatim before the held rows (the reference drops it: op-script
/// b21d-external-append-before-flush), and the manager now knows it. `ext` hangs beside the
/// held rows, so this is the reference's policy, `AppendOnOwnLeaf` (by default the write
/// refuses with `Diverged`, D30: `tests/it/foreign_appends_full_writes.rs`).
#[test]
fn held_flush_adopts_lines_another_writer_appended() {
    let dir = support::tempdir();
    let d = canon(&dir);
    let f = d.join("s.jsonl");
    let u1 = msg_line("u1", None, "user", "q", 1);
    support::write(&f, &format!("{HEADER}\n{u1}\n"));
    let mut sm = SessionManager::open(&f, None, None).unwrap();
    sm.set_foreign_append_policy(session_store::ForeignAppendPolicy::AppendOnOwnLeaf);
    let n1 = sm.append_message(support::user("n1", 1)).unwrap();
    let ext = msg_line("ext", Some("u1"), "user", "e", 3);
    session_store::io::append_raw(&f, format!("{ext}\n").as_bytes()).unwrap();
    let n2 = sm.append_message(support::assistant("n2", 2)).unwrap();
    let lines = support::lines(&f);
    assert_eq!(lines.len(), 5, "{lines:?}");
    assert_eq!(lines[0], HEADER);
    assert_eq!(lines[1], u1);
    assert_eq!(lines[2], ext);
    assert_eq!(field(&lines[3], "id"), JsValue::from(n1.as_str()));
    assert_eq!(field(&lines[3], "parentId"), JsValue::from("u1"));
    assert_eq!(field(&lines[4], "id"), JsValue::from(n2.as_str()));
    assert_eq!(dir_names(&d), ["s.jsonl"], "no backup needed");
    assert_eq!(sm.get_leaf_id(), Some(n2.as_str()));
    assert_eq!(
        support::ids(sm.get_entries()),
        ["u1", "ext", n1.as_str(), n2.as_str()]
    );
    let diag = sm.diagnostics();
    assert_eq!(diag.adopted_lines, 1);
    assert!(diag.conflict_backups.is_empty());
    // The file reads back the same.
    let re = SessionManager::open(&f, None, None).unwrap();
    assert_eq!(re.get_leaf_id(), Some(n2.as_str()));
    assert_eq!(
        support::ids(re.get_branch(None)),
        ["u1", n1.as_str(), n2.as_str()]
    );
}

/// A plain append that finds foreign lines before it adopts them (and, as they continue its
/// leaf, fast-forwards onto them: D30), so a later full rewrite (`remove_trailing_entries`)
/// keeps them in the live file.
#[test]
fn plain_append_adopts_foreign_lines_before_it() {
    let dir = support::tempdir();
    let d = canon(&dir);
    let f = d.join("s.jsonl");
    let u1 = msg_line("u1", None, "user", "q", 1);
    let a1 = msg_line("a1", Some("u1"), "assistant", "r", 2);
    support::write(&f, &format!("{HEADER}\n{u1}\n{a1}\n"));
    let mut sm = SessionManager::open(&f, None, None).unwrap();
    let ext = msg_line("ext", Some("a1"), "user", "e", 3);
    session_store::io::append_raw(&f, format!("{ext}\n").as_bytes()).unwrap();
    let n1 = sm.append_message(support::user("n1", 1)).unwrap();
    assert_eq!(
        support::ids(sm.get_entries()),
        ["u1", "a1", "ext", n1.as_str()]
    );
    assert_eq!(sm.get_leaf_id(), Some(n1.as_str()));
    assert_eq!(
        sm.get_entry(&n1).unwrap().parent_id().as_deref(),
        Some("ext")
    );
    let removed = sm.remove_trailing_entries(|e| e.id() == n1, None).unwrap();
    assert_eq!(removed, 1);
    let lines = support::lines(&f);
    assert_eq!(lines[..4], [HEADER.to_owned(), u1, a1, ext]);
    assert_eq!(dir_names(&d), ["s.jsonl"]);
    assert_eq!(sm.diagnostics().adopted_lines, 1);
}

/// Another writer replaced the file: before `remove_trailing_entries` rewrites it, the foreign
/// bytes are backed up exactly (`<file>.conflict-<ts>-<8hex>.jsonl`, same mode), and the backup
/// is reported.
#[test]
fn rewrite_over_a_changed_file_backs_it_up_first() {
    let dir = support::tempdir();
    let d = canon(&dir);
    let f = d.join("s.jsonl");
    let u1 = msg_line("u1", None, "user", "q", 1);
    let a1 = msg_line("a1", Some("u1"), "assistant", "r", 2);
    support::write(&f, &format!("{HEADER}\n{u1}\n{a1}\n"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o640)).unwrap();
    }
    let mut sm = SessionManager::open(&f, None, None).unwrap();
    let foreign = b"{\"other\":\"app\"}\nnot json\n";
    session_store::io::write_raw(&f, foreign).unwrap();
    let removed = sm
        .remove_trailing_entries(|e| e.is_assistant_message(), None)
        .unwrap();
    assert_eq!(removed, 1);
    assert_eq!(support::lines(&f), [HEADER.to_owned(), u1]);
    let diag = sm.diagnostics();
    assert_eq!(diag.conflict_backups.len(), 1);
    let backup = &diag.conflict_backups[0];
    let name = backup.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("s.jsonl.conflict-"), "{name}");
    assert!(name.ends_with(".jsonl"));
    let tag = &name["s.jsonl.conflict-".len()..name.len() - ".jsonl".len()];
    // <YYYY-MM-DDTHH-MM-SS-mmmZ>-<8 hex>
    assert_eq!(tag.len(), 24 + 1 + 8, "{tag}");
    assert!(tag[25..].chars().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(std::fs::read(backup).unwrap(), foreign);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode(backup), 0o640);
        assert_eq!(mode(&f), 0o640);
    }
    assert!(!diag.is_clean());
    // A reopen starts a fresh report.
    let re = SessionManager::open(&f, None, None).unwrap();
    assert!(re.diagnostics().conflict_backups.is_empty());
}

/// The first full write of a held session whose file another writer truncated and rewrote:
/// backed up, then written.
#[test]
fn held_flush_over_a_rewritten_file_backs_it_up() {
    let dir = support::tempdir();
    let d = canon(&dir);
    let f = d.join("s.jsonl");
    let u1 = msg_line("u1", None, "user", "q", 1);
    support::write(&f, &format!("{HEADER}\n{u1}\n"));
    let mut sm = SessionManager::open(&f, None, None).unwrap();
    sm.append_message(support::user("n1", 1)).unwrap();
    let other = format!("{HEADER}\n{}\n", msg_line("zz", None, "user", "z", 5));
    support::write(&f, &other);
    sm.append_message(support::assistant("n2", 2)).unwrap();
    let diag = sm.diagnostics();
    assert_eq!(diag.conflict_backups.len(), 1);
    assert_eq!(support::read(&diag.conflict_backups[0]), other);
    let lines = support::lines(&f);
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[1], u1);
}

// ------------------------------------------------------------------------------------------
// Rewrite side effects.

/// Setuid/setgid/sticky bits are kept with the permission bits by a migration rewrite.
#[cfg(unix)]
#[test]
fn rewrite_keeps_full_mode_bits() {
    use std::os::unix::fs::PermissionsExt;
    let dir = support::tempdir();
    let f = canon(&dir).join("v2.jsonl");
    support::write(
        &f,
        &format!(
            "{}\n{}\n",
            HEADER.replace(r#""version":3"#, r#""version":2"#),
            msg_line("u1", None, "user", "q", 1)
        ),
    );
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o2640)).unwrap();
    SessionManager::open(&f, None, None).unwrap();
    assert!(support::read(&f).contains(r#""version":3"#));
    assert_eq!(
        std::fs::metadata(&f).unwrap().permissions().mode() & 0o7777,
        0o2640
    );
}

#[cfg(unix)]
fn v2_text() -> String {
    format!(
        "{}\n{}\n",
        HEADER.replace(r#""version":3"#, r#""version":2"#),
        msg_line("u1", None, "user", "q", 1)
    )
}

/// A file the process may not write is not replaced (the reference fails with `EACCES`): the
/// migration rewrite fails with `PermissionDenied` naming the file, which keeps its bytes. As
/// root the check runs in a child process as `nobody`.
#[cfg(unix)]
#[test]
fn rewrite_refuses_a_file_the_process_cannot_write() {
    use std::os::unix::fs::PermissionsExt;
    const NAME: &str = "rewrite_refuses_a_file_the_process_cannot_write";
    if let Some(d) = std::env::var_os(PERM_CHILD) {
        let f = PathBuf::from(d).join("v2.jsonl");
        let before = std::fs::read(&f).unwrap();
        let err = SessionManager::open(&f, None, None).unwrap_err();
        let OpenError::Write { source } = &err else {
            panic!("{err:?}")
        };
        assert_eq!(source.path, f);
        assert_eq!(source.kind(), std::io::ErrorKind::PermissionDenied);
        assert!(
            source.to_string().contains(&*f.to_string_lossy()),
            "{source}"
        );
        assert!(source.to_string().contains("not writable"), "{source}");
        assert_eq!(std::fs::read(&f).unwrap(), before);
        assert_eq!(dir_names(f.parent().unwrap()), ["v2.jsonl"]);
        return;
    }
    let (_guard, d) = open_dir(0o777);
    let f = d.join("v2.jsonl");
    support::write(&f, &v2_text());
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o444)).unwrap();
    if is_root() {
        run_as_nobody(NAME, &d);
    } else {
        // The same check in-process (this user cannot write a 0444 file).
        let err = SessionManager::open(&f, None, None).unwrap_err();
        assert!(
            matches!(&err, OpenError::Write { source, .. } if source.kind() == std::io::ErrorKind::PermissionDenied),
            "{err:?}"
        );
    }
    assert_eq!(support::read(&f), v2_text());
}

/// A directory where no temporary file can be created: the rewrite fails with an error naming
/// the directory, and the file (writable in place) is not rewritten in place either.
#[cfg(unix)]
#[test]
fn rewrite_in_an_unwritable_directory_names_the_directory() {
    use std::os::unix::fs::PermissionsExt;
    const NAME: &str = "rewrite_in_an_unwritable_directory_names_the_directory";
    if let Some(d) = std::env::var_os(PERM_CHILD) {
        let d = PathBuf::from(d);
        let f = d.join("v2.jsonl");
        let before = std::fs::read(&f).unwrap();
        let err = SessionManager::open(&f, None, None).unwrap_err();
        let OpenError::Write { source } = &err else {
            panic!("{err:?}")
        };
        assert_eq!(source.kind(), std::io::ErrorKind::PermissionDenied);
        let text = source.to_string();
        assert!(
            text.contains(&format!("in directory {}", d.display())),
            "{text}"
        );
        assert_eq!(std::fs::read(&f).unwrap(), before);
        return;
    }
    let (_guard, d) = open_dir(0o777);
    let f = d.join("v2.jsonl");
    support::write(&f, &v2_text());
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o666)).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o555)).unwrap();
    if is_root() {
        run_as_nobody(NAME, &d);
    } else {
        let err = SessionManager::open(&f, None, None).unwrap_err();
        assert!(err.to_string().contains(&d.display().to_string()), "{err}");
    }
    assert_eq!(support::read(&f), v2_text());
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Owner and group are kept by a rewrite (root only: a non-root process cannot create a file
/// owned by someone else, and then keeps the group when it may).
#[cfg(unix)]
#[test]
fn conflict_backup_and_rewrite_keep_the_owner() {
    use std::os::unix::fs::MetadataExt;
    if !is_root() {
        eprintln!("conflict_backup_and_rewrite_keep_the_owner: needs root; not checked");
        return;
    }
    let dir = support::tempdir();
    let d = canon(&dir);
    let f = d.join("s.jsonl");
    support::write(
        &f,
        &format!(
            "{HEADER}\n{}\n{}\n",
            msg_line("u1", None, "user", "q", 1),
            msg_line("a1", Some("u1"), "assistant", "r", 2)
        ),
    );
    std::os::unix::fs::chown(&f, Some(65534), Some(65534)).unwrap();
    let mut sm = SessionManager::open(&f, None, None).unwrap();
    support::write(&f, "{\"x\":1}\n");
    std::os::unix::fs::chown(&f, Some(65534), Some(65534)).unwrap();
    sm.remove_trailing_entries(|e| e.is_assistant_message(), None)
        .unwrap();
    let owner = |p: &Path| {
        let m = std::fs::metadata(p).unwrap();
        (m.uid(), m.gid())
    };
    assert_eq!(owner(&f), (65534, 65534));
    assert_eq!(owner(&sm.diagnostics().conflict_backups[0]), (65534, 65534));
}

/// `atomic_rewrite_checked`: the check runs after the temporary file holds the new bytes; an
/// error from it leaves the target as it was and no temporary file behind.
#[test]
fn a_failed_check_before_the_rename_leaves_the_file_and_no_temp() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.json");
    session_store::io::write_raw(&path, b"old").unwrap();
    let mut seen: Vec<(String, Vec<u8>)> = Vec::new();
    let err = session_store::io::atomic_rewrite_checked(&path, b"new bytes", &mut || {
        for e in std::fs::read_dir(dir.path()).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            if name != "store.json" {
                seen.push((name, std::fs::read(e.path()).unwrap()));
            }
        }
        Err(std::io::Error::other("someone else wrote it"))
    })
    .unwrap_err();
    assert_eq!(err.to_string(), "someone else wrote it");
    assert_eq!(seen.len(), 1);
    assert!(seen[0].0.starts_with(".store.json.") && seen[0].0.ends_with(".tmp"));
    assert_eq!(seen[0].1, b"new bytes");
    assert_eq!(std::fs::read(&path).unwrap(), b"old");
    assert_eq!(dir_names(dir.path()), ["store.json"]);
    session_store::io::atomic_rewrite_checked(&path, b"new", &mut || Ok(())).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"new");
}
