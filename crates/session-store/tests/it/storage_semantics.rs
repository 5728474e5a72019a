//! The [`Storage`] contract, checked the same way on both implementations: the
//! file store ([`FileStorage`], in a temporary directory) and [`MemStorage`] give the same
//! answers to the same operations (bytes, error kinds, separators, sizes, identities), and a
//! [`SessionManager`] behaves the same on both (foreign appends adopted, replaced and deleted
//! sessions refused, the write lock, listing, forks, read-only opens).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use session_format::json::JsValue;
use session_store::io::{AppendToExistingError, Durability, KnownFile};
use session_store::{
    AppendError, FileStorage, LockError, LockOptions, MemStorage, OpenParams, SessionManager,
    Storage,
};
use session_store::{MEM_STORAGE_DEV, with_write_lock};

/// Both storages with the directory their sessions go to (`<tmp>/sessions`): the file store
/// in one temporary directory, the memory store under the path of another, which must stay
/// empty. The temporary directories are returned so they live as long as the test.
fn both() -> Vec<(Arc<dyn Storage>, PathBuf, tempfile::TempDir)> {
    let files = crate::support::tempdir();
    let mem = crate::support::tempdir();
    vec![
        (FileStorage::shared(), files.path().join("sessions"), files),
        (
            Arc::new(MemStorage::new()) as Arc<dyn Storage>,
            mem.path().join("sessions"),
            mem,
        ),
    ]
}

/// Deletes a session behind the manager's back ("the file was deleted"): a file removal, or
/// [`MemStorage::remove`] on the memory store (deletion is not an operation of the trait).
fn delete(storage: &dyn Storage, mem: Option<&MemStorage>, path: &Path) {
    match (storage.local_files(), mem) {
        (true, _) => session_store::io::remove_file(path).unwrap(),
        (false, Some(m)) => assert!(m.remove(path)),
        (false, None) => panic!("no way to delete from {}", storage.name()),
    }
}

/// Fails unless a memory run left its temporary directory empty.
fn assert_untouched(storage: &dyn Storage, tmp: &tempfile::TempDir) {
    if !storage.local_files() {
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// The trait's byte-level contract, one operation after another.
#[test]
fn both_storages_answer_the_contract_identically() {
    for (s, dir, tmp) in both() {
        let name = s.name().to_owned();
        let a = dir.join("a.jsonl");
        let b = dir.join("b.jsonl");
        let e = dir.join("e.jsonl");

        // Nothing yet: no directory, no session.
        assert_eq!(
            s.list_sessions(&dir).unwrap(),
            Vec::<PathBuf>::new(),
            "{name}"
        );
        assert_eq!(s.stat(&a).unwrap(), None, "{name}");
        assert_eq!(
            s.read_all(&a).unwrap_err().kind(),
            ErrorKind::NotFound,
            "{name}"
        );
        assert_eq!(
            s.create_new(&a, b"h\n").unwrap_err().kind(),
            ErrorKind::NotFound,
            "{name}: a session in a missing directory"
        );
        s.ensure_dir(&dir).unwrap();
        assert_eq!(
            s.read_all(&dir).unwrap_err().kind(),
            ErrorKind::InvalidInput,
            "{name}: a directory is not a session"
        );

        // Exclusive create.
        s.create_new(&a, b"h\n").unwrap();
        assert_eq!(
            s.create_new(&a, b"other\n").unwrap_err().kind(),
            ErrorKind::AlreadyExists
        );
        assert_eq!(s.read_all(&a).unwrap(), b"h\n");
        let created = s.stat(&a).unwrap().unwrap();
        assert_eq!(created.size, 2, "{name}");

        // A fenced append on the expected session.
        let out = s
            .append_line(
                &a,
                b"x",
                Durability::SyncData,
                Some(KnownFile {
                    snapshot: created,
                    first_line: b"h\n",
                }),
            )
            .unwrap();
        assert!(!out.separator, "{name}");
        assert_eq!(out.written, b"x\n");
        assert_eq!(
            out.before, created,
            "{name}: before is the snapshot the caller knew"
        );
        assert_eq!(out.after.size, 4);
        assert!(out.after.same_file(&out.before));
        assert_ne!(
            out.after, out.before,
            "{name}: every change is a new version"
        );
        assert_eq!(s.stat(&a).unwrap(), Some(out.after), "{name}");

        // Another writer appends a torn tail: the next append is not refused (same session,
        // same first line), lands after it with a separator, and `before` shows the foreign
        // bytes.
        s.append_raw(&a, b"torn").unwrap();
        let out2 = s
            .append_line(
                &a,
                b"y",
                Durability::Buffer,
                Some(KnownFile {
                    snapshot: out.after,
                    first_line: b"h\n",
                }),
            )
            .unwrap();
        assert!(out2.separator, "{name}");
        assert_eq!(out2.written, b"\ny\n");
        assert_eq!(out2.before.size, 8, "{name}");
        assert_eq!(out2.after.size, 11);
        assert_eq!(text(&s.read_all(&a).unwrap()), "h\nx\ntorn\ny\n");

        // A session whose first line is not the expected one any more is another session.
        assert!(
            matches!(
                s.append_line(
                    &a,
                    b"z",
                    Durability::Buffer,
                    Some(KnownFile {
                        snapshot: out.after,
                        first_line: b"other\n",
                    }),
                ),
                Err(AppendToExistingError::Replaced)
            ),
            "{name}"
        );

        // Ranges, offsets, the header line.
        let (mut head, mut mid) = ([0u8; 2], [0u8; 4]);
        s.read_ranges(&a, &mut [(0, &mut head), (4, &mut mid)])
            .unwrap();
        assert_eq!((&head, &mid), (b"h\n", b"torn"), "{name}");
        let mut past = [0u8; 3];
        assert_eq!(
            s.read_ranges(&a, &mut [(9, &mut past)]).unwrap_err().kind(),
            ErrorKind::UnexpectedEof,
            "{name}"
        );
        assert_eq!(s.read_from(&a, 4).unwrap(), b"torn\ny\n");
        assert_eq!(s.read_from(&a, 100).unwrap(), b"");
        assert_eq!(s.read_head(&a).unwrap(), Some(b"h".to_vec()));
        s.create_new(&e, b"").unwrap();
        assert_eq!(
            s.read_head(&e).unwrap(),
            None,
            "{name}: an empty session has no header"
        );

        // A replace gives a new identity: an append fenced on the old one is refused and
        // writes nothing.
        let old = s.stat(&a).unwrap().unwrap();
        s.replace(&a, b"h2\n").unwrap();
        let new = s.stat(&a).unwrap().unwrap();
        assert!(!new.same_file(&old), "{name}: a replace is another session");
        assert!(matches!(
            s.append_line(
                &a,
                b"lost",
                Durability::Buffer,
                Some(KnownFile {
                    snapshot: old,
                    first_line: b"h\n",
                }),
            ),
            Err(AppendToExistingError::Replaced)
        ));
        assert_eq!(s.read_all(&a).unwrap(), b"h2\n", "{name}");

        // Never creating by append; backups are exclusive copies.
        assert!(matches!(
            s.append_line(&b, b"x", Durability::Buffer, None),
            Err(AppendToExistingError::Deleted)
        ));
        assert_eq!(s.stat(&b).unwrap(), None);
        let backup = dir.join("a.jsonl.bak");
        s.backup_copy(&a, &backup, b"h2\n").unwrap();
        assert_eq!(
            s.backup_copy(&a, &backup, b"h2\n").unwrap_err().kind(),
            ErrorKind::AlreadyExists
        );
        assert_eq!(s.read_all(&backup).unwrap(), b"h2\n");

        // Syncs.
        s.sync(&a, Durability::SyncAll).unwrap();
        s.sync(&b, Durability::Buffer).unwrap();
        assert_eq!(
            s.sync(&b, Durability::SyncData).unwrap_err().kind(),
            ErrorKind::NotFound
        );

        // Listing: `*.jsonl` only, sorted, under the normalised directory; namespaces.
        assert_eq!(
            s.list_sessions(&dir).unwrap(),
            [a.clone(), e.clone()],
            "{name}"
        );
        s.ensure_dir(&dir.parent().unwrap().join("other")).unwrap();
        assert_eq!(
            s.list_dirs(dir.parent().unwrap()).unwrap(),
            [dir.parent().unwrap().join("other"), dir.clone()],
            "{name}"
        );
        assert_untouched(&*s, &tmp);
    }
}

/// The memory store's snapshots follow the documented scheme.
#[test]
fn memory_snapshots_are_tag_generation_length_and_counter() {
    let s = MemStorage::new();
    s.ensure_dir(Path::new("/d")).unwrap();
    let p = Path::new("/d/s.jsonl");
    s.create_new(p, b"h\n").unwrap();
    let first = s.stat(p).unwrap().unwrap();
    assert_eq!(first.dev, MEM_STORAGE_DEV);
    assert_eq!(first.size, 2);
    assert_eq!(first.birth_ns, None);
    assert_eq!(first.mtime_ns, first.ctime_ns);
    s.append_raw(p, b"x\n").unwrap();
    let appended = s.stat(p).unwrap().unwrap();
    assert_eq!(appended.ino, first.ino, "appends keep the generation");
    assert!(appended.mtime_ns > first.mtime_ns);
    s.replace(p, b"h\nx\n").unwrap();
    let replaced = s.stat(p).unwrap().unwrap();
    assert_ne!(replaced.ino, first.ino, "a replace is a new generation");
    assert_eq!(replaced.size, appended.size);
    assert!(replaced.mtime_ns > appended.mtime_ns);
    assert!(s.remove(p));
    s.create_new(p, b"h\nx\n").unwrap();
    let recreated = s.stat(p).unwrap().unwrap();
    assert!(
        !recreated.same_file(&replaced),
        "delete and create: another session"
    );
    assert_eq!(s.paths(), [p.to_path_buf()]);
}

/// The lock is re-entrant on one thread, and another thread times out while it is held;
/// the same on both storages.
#[test]
fn both_storages_lock_reentrantly_and_time_out_for_other_threads() {
    for (s, dir, tmp) in both() {
        let name = s.name().to_owned();
        s.ensure_dir(&dir).unwrap();
        let p = dir.join("l.jsonl");
        let try_once = LockOptions {
            timeout: Some(Duration::ZERO),
            ..LockOptions::default()
        };
        let got = with_write_lock(&*s, &p, &LockOptions::default(), || {
            let nested = with_write_lock(&*s, &p, &try_once, || 7).unwrap();
            let other = std::thread::scope(|sc| {
                sc.spawn(|| with_write_lock(&*s, &p, &try_once, || ()))
                    .join()
                    .unwrap()
            });
            assert!(
                matches!(other, Err(LockError::Timeout { timeout_ms: 0, .. })),
                "{name}: {other:?}"
            );
            nested + 1
        })
        .unwrap();
        assert_eq!(got, 8);
        // Released: another thread takes it at once.
        let after = std::thread::scope(|sc| {
            sc.spawn(|| with_write_lock(&*s, &p, &try_once, || 1))
                .join()
                .unwrap()
        });
        assert_eq!(after.unwrap(), 1, "{name}");
        assert_untouched(&*s, &tmp);
    }
}

fn params(dir: &Path) -> OpenParams {
    OpenParams {
        session_dir: Some(dir.to_path_buf()),
        cwd_override: None,
        fallback_cwd: None,
    }
}

/// The `type` (and `customType`) of every line of a stored session.
fn kinds(s: &dyn Storage, p: &Path) -> Vec<String> {
    text(&s.read_all(p).unwrap())
        .lines()
        .map(|l| {
            let v = crate::support::js(l);
            let t = v.get("type").unwrap().as_str_lossy().unwrap().into_owned();
            match v.get("customType") {
                Some(c) => format!("{t}:{}", c.as_str_lossy().unwrap()),
                None => t,
            }
        })
        .collect()
}

/// Two managers on one session: each adopts what the other appended before its own append,
/// as on files (docs/DEVIATIONS.md D11).
#[test]
fn managers_adopt_each_others_appends_on_both_storages() {
    for (s, dir, tmp) in both() {
        let name = s.name().to_owned();
        let mut one = SessionManager::on(Arc::clone(&s))
            .create("/p", Some(&dir))
            .unwrap();
        one.append_message(crate::support::user("q", 1)).unwrap();
        one.append_message(crate::support::assistant("a", 2))
            .unwrap();
        let file = one.get_session_file().unwrap().to_path_buf();
        let mut two = SessionManager::on(Arc::clone(&s))
            .open_with(&file, &params(&dir))
            .unwrap();
        assert_eq!(two.storage().name(), name);
        two.append_custom_entry("two", None).unwrap();
        one.append_custom_entry("one", None).unwrap();
        assert_eq!(
            kinds(&*s, &file),
            ["session", "message", "message", "custom:two", "custom:one"],
            "{name}"
        );
        assert_eq!(one.diagnostics().adopted_lines, 1, "{name}");
        assert_eq!(
            one.get_entries().count(),
            4,
            "{name}: the foreign entry is adopted"
        );
        // A reopen sees what both wrote.
        let three = SessionManager::on(Arc::clone(&s))
            .open_with(&file, &params(&dir))
            .unwrap();
        assert_eq!(three.get_entries().count(), 4);
        assert_eq!(three.file_snapshot(), s.stat(&file).unwrap(), "{name}");
        assert_untouched(&*s, &tmp);
    }
}

/// One storage of a test, its memory store when it is one (to delete from it), the
/// directory its sessions go to, and the temporary directory that must stay empty.
type Run<'a> = (
    Arc<dyn Storage>,
    Option<Arc<MemStorage>>,
    PathBuf,
    &'a tempfile::TempDir,
);

/// A replaced or deleted session refuses a plain append and keeps its bytes; a full rewrite
/// afterwards backs the replaced bytes up first.
#[test]
fn replaced_and_deleted_sessions_refuse_appends_on_both_storages() {
    let files = crate::support::tempdir();
    let mem_tmp = crate::support::tempdir();
    let mem_store = Arc::new(MemStorage::new());
    let runs: Vec<Run<'_>> = vec![
        (
            FileStorage::shared(),
            None,
            files.path().join("sessions"),
            &files,
        ),
        (
            mem_store.clone(),
            Some(mem_store),
            mem_tmp.path().join("sessions"),
            &mem_tmp,
        ),
    ];
    for (s, mem, dir, tmp) in runs {
        let name = s.name().to_owned();
        let mut sm = SessionManager::on(Arc::clone(&s))
            .create("/p", Some(&dir))
            .unwrap();
        sm.append_message(crate::support::user("q", 1)).unwrap();
        sm.append_message(crate::support::assistant("a", 2))
            .unwrap();
        let file = sm.get_session_file().unwrap().to_path_buf();
        // Another writer replaces the session with only its header.
        let ours = s.read_all(&file).unwrap();
        let theirs = text(&ours).lines().next().unwrap().to_owned() + "\n";
        s.replace(&file, theirs.as_bytes()).unwrap();
        let err = sm.append_custom_entry("x", None).unwrap_err();
        assert!(
            matches!(err, AppendError::FileReplaced { .. }),
            "{name}: {err}"
        );
        assert_eq!(
            text(&s.read_all(&file).unwrap()),
            theirs,
            "{name}: nothing written"
        );
        // Writing ours again keeps theirs as a byte-exact conflict backup first.
        sm.rewrite_file().unwrap();
        assert_eq!(sm.diagnostics().conflict_backups.len(), 1, "{name}");
        let backup = &sm.diagnostics().conflict_backups[0];
        assert_eq!(text(&s.read_all(backup).unwrap()), theirs, "{name}");
        assert_eq!(
            kinds(&*s, &file),
            ["session", "message", "message"],
            "{name}"
        );

        delete(&*s, mem.as_deref(), &file);
        let err = sm.append_custom_entry("y", None).unwrap_err();
        assert!(
            matches!(err, AppendError::FileDeleted { .. }),
            "{name}: {err}"
        );
        assert_eq!(
            s.stat(&file).unwrap(),
            None,
            "{name}: never created by an append"
        );
        assert_untouched(&*s, tmp);
    }
}

/// With the write lock set, a manager whose lock is held elsewhere fails with a `Lock` error
/// and writes nothing; several managers appending under the lock from several threads lose
/// and interleave nothing.
#[test]
fn the_write_lock_goes_through_the_storage() {
    for (s, dir, tmp) in both() {
        let name = s.name().to_owned();
        let mut sm = SessionManager::on(Arc::clone(&s))
            .create("/p", Some(&dir))
            .unwrap();
        sm.append_message(crate::support::user("q", 1)).unwrap();
        sm.append_message(crate::support::assistant("a", 2))
            .unwrap();
        let file = sm.get_session_file().unwrap().to_path_buf();
        sm.set_write_lock(Some(LockOptions {
            timeout: Some(Duration::ZERO),
            ..LockOptions::default()
        }));
        let before = s.read_all(&file).unwrap();
        let held = with_write_lock(&*s, &file, &LockOptions::default(), || {
            std::thread::scope(|sc| {
                sc.spawn(|| sm.append_custom_entry("blocked", None))
                    .join()
                    .unwrap()
            })
        })
        .unwrap();
        assert!(
            matches!(
                &held,
                Err(AppendError::Lock { source }) if matches!(*source.error, LockError::Timeout { .. })
            ),
            "{name}: {held:?}"
        );
        assert_eq!(
            s.read_all(&file).unwrap(),
            before,
            "{name}: nothing written"
        );

        const THREADS: usize = 4;
        const EACH: usize = 25;
        std::thread::scope(|sc| {
            for t in 0..THREADS {
                let s = Arc::clone(&s);
                let (file, dir) = (file.clone(), dir.clone());
                sc.spawn(move || {
                    let mut m = SessionManager::on(s)
                        .open_with(&file, &params(&dir))
                        .unwrap();
                    m.set_write_lock(Some(LockOptions::default()));
                    for i in 0..EACH {
                        m.append_custom_entry(&format!("t{t}-{i}"), None).unwrap();
                    }
                });
            }
        });
        let lines = kinds(&*s, &file);
        assert_eq!(lines.len(), 3 + THREADS * EACH, "{name}");
        for t in 0..THREADS {
            let mine: Vec<&String> = lines
                .iter()
                .filter(|l| l.starts_with(&format!("custom:t{t}-")))
                .collect();
            let expected: Vec<String> = (0..EACH).map(|i| format!("custom:t{t}-{i}")).collect();
            assert_eq!(
                mine,
                expected.iter().collect::<Vec<_>>(),
                "{name}: thread {t}"
            );
        }
        assert_untouched(&*s, &tmp);
    }
}

/// Listing, `continueRecent`, forks and read-only opens through a storage.
#[test]
fn listing_forking_and_read_only_opens_work_on_both_storages() {
    for (s, dir, tmp) in both() {
        let name = s.name().to_owned();
        let mut first = SessionManager::on(Arc::clone(&s))
            .create("/p", Some(&dir))
            .unwrap();
        first
            .append_message(crate::support::user("first question", 1_767_225_600_000))
            .unwrap();
        first
            .append_message(crate::support::assistant("a", 1_767_225_601_000))
            .unwrap();
        // `continueRecent` compares modification times in whole milliseconds: the second
        // session is written a few milliseconds later.
        std::thread::sleep(Duration::from_millis(5));
        let mut second = SessionManager::on(Arc::clone(&s))
            .create("/p", Some(&dir))
            .unwrap();
        second
            .append_message(crate::support::user("second question", 1_767_225_700_000))
            .unwrap();
        second
            .append_message(crate::support::assistant("b", 1_767_225_701_000))
            .unwrap();
        second.append_session_info("named").unwrap();

        let infos = SessionManager::on(Arc::clone(&s))
            .list("/p", Some(&dir))
            .unwrap();
        let got: Vec<(String, Option<String>, usize, String)> = infos
            .iter()
            .map(|i| {
                (
                    i.id.clone(),
                    i.name.clone(),
                    i.message_count,
                    i.first_message.clone(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    second.get_session_id().to_owned(),
                    Some("named".to_owned()),
                    2,
                    "second question".to_owned()
                ),
                (
                    first.get_session_id().to_owned(),
                    None,
                    2,
                    "first question".to_owned()
                ),
            ],
            "{name}"
        );
        assert_eq!(infos[0].modified, 1_767_225_701_000.0, "{name}");
        let all = SessionManager::on(Arc::clone(&s))
            .list_all(dir.parent())
            .unwrap();
        assert_eq!(all.len(), 2, "{name}");

        // `continueRecent` picks the session with the newest modification time: the one
        // written last.
        let recent = SessionManager::on(Arc::clone(&s))
            .continue_recent("/p", Some(&dir))
            .unwrap();
        assert_eq!(recent.get_session_id(), second.get_session_id(), "{name}");

        // A fork lives in the same storage and names its source.
        let source = first.get_session_file().unwrap().to_path_buf();
        let fork = SessionManager::on(Arc::clone(&s))
            .fork_from(&source, "/q", Some(&dir))
            .unwrap();
        let fork_file = fork.get_session_file().unwrap();
        let header = crate::support::js(
            text(&s.read_all(fork_file).unwrap())
                .lines()
                .next()
                .unwrap(),
        );
        assert_eq!(
            header.get("parentSession"),
            Some(&JsValue::from(source.to_string_lossy().as_ref())),
            "{name}"
        );
        assert_eq!(fork.get_entries().count(), 2, "{name}");

        // A read-only open reads through the storage and refuses writes.
        let ro = SessionManager::on(Arc::clone(&s))
            .open_read_only(&source, None)
            .unwrap();
        assert_eq!(ro.session.get_entries().count(), 2, "{name}");
        let mut ro = ro.session;
        assert!(matches!(
            ro.append_custom_entry("x", None),
            Err(AppendError::ReadOnly { .. })
        ));
        assert_eq!(s.list_sessions(&dir).unwrap().len(), 3, "{name}");
        assert_untouched(&*s, &tmp);
    }
}
