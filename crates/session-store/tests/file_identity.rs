//! One file identity (session_store::identity, docs/DEVIATIONS.md D29): every name of a
//! session file — `x/../x/s.jsonl`, a path through a symlinked directory, a symlink
//! `L.jsonl -> s.jsonl` — takes the write lock of `s.jsonl`, shares one warm cache entry and
//! one repair cache entry, and is one row of a listing; no append, rewrite or repair backup
//! follows a symlink out of its store root, and the outside file keeps its bytes and mtime.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

mod lock_common;
mod snapshot_support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use lock_common::{Sleeper, now_ms, starttime};
use session_format::json::parse_value;
use session_store::lock::{self, LockError, LockOptions, SessionWriteLock};
use session_store::test_util::repair_probes::{is_repair_cached, parsed_lines_on_this_thread};
use session_store::{
    AppendError, FileIdentity, OutsideStore, RemoveError, RepairSkip, SessionManager,
};
use snapshot_support::{file_text, msg, plant, serial};

/// The warm cache of the process-wide file store (the one the default managers use).
fn warm_cache() -> &'static session_store::WarmCache {
    session_store::FileStorage::process_wide().warm_cache()
}

/// A store: `<tmp>/sessions/s.jsonl` (a session of two turns), the directory alias
/// `<tmp>/alias -> sessions`, and the file symlink `sessions/L.jsonl -> s.jsonl`. Paths are
/// canonical (the temporary directory resolved).
struct Store {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    sessions: PathBuf,
    file: PathBuf,
}

impl Store {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let sessions = root.join("sessions");
        std::fs::create_dir(&sessions).unwrap();
        let file = sessions.join("s.jsonl");
        plant(&file, &file_text(&two_turns()));
        std::os::unix::fs::symlink("s.jsonl", sessions.join("L.jsonl")).unwrap();
        std::os::unix::fs::symlink(&sessions, root.join("alias")).unwrap();
        Store {
            _tmp: tmp,
            root,
            sessions,
            file,
        }
    }

    /// The three alias spellings of `s.jsonl`.
    fn aliases(&self) -> [(&'static str, PathBuf); 3] {
        [
            (
                "x/../x/s.jsonl",
                self.sessions.join("..").join("sessions").join("s.jsonl"),
            ),
            ("directory alias", self.root.join("alias").join("s.jsonl")),
            ("file symlink", self.sessions.join("L.jsonl")),
        ]
    }

    fn lock_path(&self) -> PathBuf {
        self.sessions.join("s.jsonl.lock")
    }
}

fn two_turns() -> Vec<String> {
    vec![
        msg("u1", None, "user", "q1"),
        msg("a1", Some("u1"), "assistant", "r1"),
    ]
}

fn opts(timeout_ms: u64) -> LockOptions {
    LockOptions::default().with_timeout(Some(Duration::from_millis(timeout_ms)))
}

/// A lock file held by a live process that is not this one (a sleeping child).
fn plant_live_lock(lock_path: &Path) -> Sleeper {
    let sleeper = Sleeper::start();
    let pid = sleeper.pid();
    let payload = format!(
        "{{\"pid\":{pid},\"createdAt\":\"{}\",\"starttime\":{}}}",
        lock_common::iso(now_ms()),
        starttime(pid)
    );
    lock_common::plant(lock_path, payload.as_bytes());
    sleeper
}

fn mtime(path: &Path) -> SystemTime {
    std::fs::metadata(path).unwrap().modified().unwrap()
}

/// Every `*.lock` and `*.bak-*` file under `dir` (recursively).
fn lock_and_backup_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if std::fs::symlink_metadata(&p).unwrap().is_dir() {
            out.extend(lock_and_backup_files(&p));
        } else if name.ends_with(".lock") || name.contains(".bak-") {
            out.push(p);
        }
    }
    out.sort();
    out
}

// ------------------------------------------------------------------------------------------
// The write lock

#[test]
fn each_alias_spelling_names_the_lock_of_the_target() {
    let s = Store::new();
    for (how, path) in s.aliases() {
        let lock = SessionWriteLock::for_file(&path).unwrap();
        assert_eq!(lock.session_file(), s.file, "{how}");
        assert_eq!(lock.lock_path(), s.lock_path(), "{how}");
        let id = FileIdentity::resolve(&path).unwrap();
        assert_eq!(id.canonical(), s.file, "{how}");
        assert!(
            id.same_file(&FileIdentity::resolve(&s.file).unwrap()),
            "{how}"
        );
    }
    // The plain path keeps OpenClaw's lock path: realpath(dirname)/basename.lock.
    assert_eq!(
        SessionWriteLock::for_file(&s.file).unwrap().lock_path(),
        s.lock_path()
    );
}

#[test]
fn a_held_lock_fails_fast_through_each_alias_naming_the_holder() {
    let s = Store::new();
    let holder = plant_live_lock(&s.lock_path());
    let planted = std::fs::read(s.lock_path()).unwrap();
    let mut spellings = vec![("plain path", s.file.clone())];
    spellings.extend(s.aliases());
    for (how, path) in spellings {
        let started = Instant::now();
        let err = SessionWriteLock::acquire(&path, &opts(100)).unwrap_err();
        let waited = started.elapsed();
        let LockError::Timeout {
            timeout_ms,
            owner_pid,
            owner_alive,
            ref lock_path,
            ref owner,
        } = err
        else {
            panic!("{how}: not a timeout: {err:?}");
        };
        assert_eq!(timeout_ms, 100, "{how}");
        assert_eq!(owner_pid, Some(u64::from(holder.pid())), "{how}");
        assert!(owner_alive, "{how}");
        assert_eq!(*lock_path, s.lock_path(), "{how}");
        assert!(
            owner.starts_with(&format!("pid={} alive=true", holder.pid())),
            "{how}: {owner}"
        );
        assert!(
            waited >= Duration::from_millis(100) && waited < Duration::from_secs(2),
            "{how}: waited {waited:?}"
        );
        assert_eq!(
            err.to_string(),
            format!(
                "session file locked (timeout 100ms): {owner} {}",
                s.lock_path().display()
            )
        );
    }
    // The holder's lock is untouched, and no second lock file appeared under another name.
    assert_eq!(std::fs::read(s.lock_path()).unwrap(), planted);
    assert_eq!(lock_and_backup_files(&s.root), vec![s.lock_path()]);
}

#[test]
fn another_thread_of_this_process_waits_through_each_alias() {
    let s = Store::new();
    let guard = SessionWriteLock::acquire(&s.file, &opts(1000)).unwrap();
    assert_eq!(guard.lock_path(), s.lock_path());
    for (how, path) in s.aliases() {
        let err = std::thread::spawn(move || {
            SessionWriteLock::acquire(&path, &opts(100)).map(|g| g.lock_path().to_path_buf())
        })
        .join()
        .unwrap()
        .unwrap_err();
        assert!(err.is_busy_with_active_run(), "{how}: {err:?}");
        match err {
            LockError::Timeout {
                owner_pid,
                lock_path,
                ..
            } => {
                assert_eq!(owner_pid, Some(u64::from(std::process::id())), "{how}");
                assert_eq!(lock_path, s.lock_path(), "{how}");
            }
            other => panic!("{how}: {other:?}"),
        }
        // The holding thread re-enters through the alias.
        let again = lock::current_guard(s.aliases()[2].1.clone()).unwrap();
        assert_eq!(again.token(), guard.token());
    }
    assert_eq!(guard.holders(), 1);
    drop(guard);
    assert!(!s.lock_path().exists());
}

#[test]
fn a_manager_opened_through_a_file_symlink_takes_the_targets_lock() {
    let _g = serial();
    let s = Store::new();
    let link = s.sessions.join("L.jsonl");
    let mut sm = SessionManager::open(&link, None, None).unwrap();
    sm.set_write_lock(Some(opts(100)));
    let before = std::fs::read(&s.file).unwrap();
    let holder = plant_live_lock(&s.lock_path());
    let err = sm.append_custom_entry("checkpoint", None).unwrap_err();
    match err.lock_error() {
        Some(LockError::Timeout {
            owner_pid,
            lock_path,
            ..
        }) => {
            assert_eq!(*owner_pid, Some(u64::from(holder.pid())));
            assert_eq!(*lock_path, s.lock_path());
        }
        other => panic!("{other:?} ({err})"),
    }
    assert_eq!(std::fs::read(&s.file).unwrap(), before);
    drop(holder);
    std::fs::remove_file(s.lock_path()).unwrap();
    // Free: the append lands in s.jsonl through the link, under s.jsonl.lock only.
    sm.append_custom_entry("checkpoint", None).unwrap();
    let after = std::fs::read(&s.file).unwrap();
    assert_eq!(&after[..before.len()], &before[..]);
    assert_eq!(
        after[before.len()..]
            .iter()
            .filter(|&&b| b == b'\n')
            .count(),
        1
    );
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(lock_and_backup_files(&s.root).is_empty());
}

// ------------------------------------------------------------------------------------------
// The warm cache and the repair cache

#[test]
fn the_warm_cache_has_one_entry_for_every_alias() {
    let _g = serial();
    let s = Store::new();
    let cold = SessionManager::open(&s.file, None, None).unwrap();
    assert_eq!(cold.parsed_lines(), 3);
    assert_eq!(warm_cache().stats().files, 1);
    for (how, path) in s.aliases() {
        assert!(warm_cache().is_warm(&path), "{how}");
        let warm = SessionManager::open(&path, None, None).unwrap();
        assert_eq!(warm.parsed_lines(), 0, "{how}");
        assert_eq!(warm.get_entries().count(), 2, "{how}");
    }
    assert_eq!(warm_cache().stats().files, 1);
    // A foreign append to s.jsonl: an open through the link reads only the new line.
    snapshot_support::foreign_append(
        &s.file,
        &format!("{}\n", msg("u2", Some("a1"), "user", "q2")),
    );
    let tail = SessionManager::open(&s.sessions.join("L.jsonl"), None, None).unwrap();
    assert_eq!(tail.parsed_lines(), 1);
    assert_eq!(tail.get_entries().count(), 3);
    assert_eq!(warm_cache().stats().files, 1);
    // Dropping the entry through one alias drops it for all.
    warm_cache().invalidate(&s.root.join("alias").join("s.jsonl"));
    assert!(!warm_cache().is_warm(&s.file));
    assert_eq!(warm_cache().stats().files, 0);
}

#[test]
fn the_repair_cache_has_one_entry_for_every_alias() {
    let _g = serial();
    let s = Store::new();
    session_store::invalidate_repair_cache(&s.file);
    let before = parsed_lines_on_this_thread();
    let first = session_store::repair_session_file_if_needed(&s.file, None);
    assert!(!first.repaired && first.reason.is_none(), "{first:?}");
    assert_eq!(parsed_lines_on_this_thread() - before, 3);
    for (how, path) in s.aliases() {
        assert!(is_repair_cached(&path), "{how}");
        let before = parsed_lines_on_this_thread();
        let again = session_store::repair_session_file_if_needed(&path, None);
        assert_eq!(parsed_lines_on_this_thread() - before, 0, "{how}");
        assert_eq!(again.validated_snapshot, first.validated_snapshot, "{how}");
        assert_eq!(again.reason, None, "{how}");
    }
    session_store::invalidate_repair_cache(&s.sessions.join("L.jsonl"));
    assert!(!is_repair_cached(&s.file));
}

#[test]
fn a_repair_through_a_file_symlink_backs_up_and_rewrites_the_target() {
    let _g = serial();
    let s = Store::new();
    let broken = format!("{}not json\n", file_text(&two_turns()));
    plant(&s.file, &broken);
    let out = session_store::repair_session_file_if_needed(&s.sessions.join("L.jsonl"), None);
    assert!(out.repaired, "{out:?}");
    assert_eq!(out.dropped_lines, 1);
    let backup = out.backup_path.unwrap();
    assert_eq!(backup.parent(), Some(s.sessions.as_path()));
    assert!(
        backup
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("s.jsonl.bak-"),
        "{}",
        backup.display()
    );
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), broken);
    assert_eq!(
        std::fs::read_to_string(&s.file).unwrap(),
        file_text(&two_turns())
    );
    assert!(
        std::fs::symlink_metadata(s.sessions.join("L.jsonl"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(is_repair_cached(&s.file));
}

// ------------------------------------------------------------------------------------------
// Listing

#[test]
fn a_listing_shows_an_aliased_session_once_with_its_other_names() {
    let s = Store::new();
    // A chain M -> L -> s, another session, and a link to a session outside the directory.
    std::os::unix::fs::symlink("L.jsonl", s.sessions.join("M.jsonl")).unwrap();
    plant(
        &s.sessions.join("other.jsonl"),
        &file_text(&[msg("u9", None, "user", "other")]),
    );
    let outside = s.root.join("outside");
    std::fs::create_dir(&outside).unwrap();
    plant(
        &outside.join("t.jsonl"),
        &file_text(&[msg("u8", None, "user", "far")]),
    );
    std::os::unix::fs::symlink(outside.join("t.jsonl"), s.sessions.join("out.jsonl")).unwrap();

    let mut rows = session_store::list(&s.sessions).unwrap();
    rows.sort_by(|a, b| a.path.cmp(&b.path));
    let shape: Vec<(PathBuf, Vec<PathBuf>, Option<PathBuf>, String)> = rows
        .iter()
        .map(|r| {
            (
                r.path.clone(),
                r.aliases.clone(),
                r.outside_target.clone(),
                r.first_message.clone(),
            )
        })
        .collect();
    assert_eq!(
        shape,
        vec![
            (
                s.sessions.join("other.jsonl"),
                vec![],
                None,
                "other".to_owned()
            ),
            (
                s.sessions.join("out.jsonl"),
                vec![],
                Some(outside.join("t.jsonl")),
                "far".to_owned()
            ),
            (
                s.file.clone(),
                vec![s.sessions.join("L.jsonl"), s.sessions.join("M.jsonl")],
                None,
                "q1".to_owned()
            ),
        ]
    );
    // Through the directory alias: the same rows under the alias's paths.
    let via_alias = session_store::list(&s.root.join("alias")).unwrap();
    assert_eq!(via_alias.len(), 3);
    let aliased = via_alias
        .iter()
        .find(|r| r.path == s.root.join("alias").join("s.jsonl"))
        .unwrap();
    assert_eq!(
        aliased.aliases,
        vec![
            s.root.join("alias").join("L.jsonl"),
            s.root.join("alias").join("M.jsonl")
        ]
    );
    // listAll over the root of both directories: outside/t.jsonl is listed itself, and the
    // link to it is its alias (no longer outside the listed root).
    let all = session_store::list_all(&s.root).unwrap();
    let mut names: Vec<(PathBuf, Vec<PathBuf>, Option<PathBuf>)> = all
        .iter()
        .map(|r| (r.path.clone(), r.aliases.clone(), r.outside_target.clone()))
        .collect();
    names.sort();
    assert_eq!(
        names,
        vec![
            (
                outside.join("t.jsonl"),
                vec![s.sessions.join("out.jsonl")],
                None
            ),
            (s.sessions.join("other.jsonl"), vec![], None),
            (
                s.file.clone(),
                vec![s.sessions.join("L.jsonl"), s.sessions.join("M.jsonl")],
                None
            ),
        ]
    );
}

// ------------------------------------------------------------------------------------------
// Links out of the store root

/// `<tmp>/store/L.jsonl -> <tmp>/outside/t.jsonl`, a written session (an assistant turn, so
/// appends go straight to the file).
struct Escape {
    _tmp: tempfile::TempDir,
    store: PathBuf,
    link: PathBuf,
    target: PathBuf,
    bytes: Vec<u8>,
    mtime: SystemTime,
}

impl Escape {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let store = root.join("store");
        let outside = root.join("outside");
        std::fs::create_dir(&store).unwrap();
        std::fs::create_dir(&outside).unwrap();
        let target = outside.join("t.jsonl");
        plant(&target, &format!("{}not json\n", file_text(&two_turns())));
        // An old mtime, so any write would show.
        let old = SystemTime::now() - Duration::from_secs(3600);
        filetime::set_file_mtime(&target, filetime::FileTime::from_system_time(old)).unwrap();
        let link = store.join("L.jsonl");
        std::os::unix::fs::symlink("../outside/t.jsonl", &link).unwrap();
        Escape {
            _tmp: tmp,
            bytes: std::fs::read(&target).unwrap(),
            mtime: mtime(&target),
            store,
            link,
            target,
        }
    }

    fn refusal(&self) -> OutsideStore {
        OutsideStore {
            link: self.link.clone(),
            target: self.target.clone(),
            root: self.store.clone(),
        }
    }

    /// The target kept its bytes and mtime; no lock or backup file was written anywhere.
    fn assert_untouched(&self) {
        assert_eq!(std::fs::read(&self.target).unwrap(), self.bytes);
        assert_eq!(mtime(&self.target), self.mtime);
        let root = self.store.parent().unwrap();
        assert!(lock_and_backup_files(root).is_empty());
        assert!(
            std::fs::symlink_metadata(&self.link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
}

#[test]
fn appends_through_a_link_out_of_the_store_are_refused_naming_both_paths() {
    let _g = serial();
    let e = Escape::new();
    // Reading through the link is allowed.
    let mut sm = SessionManager::open(&e.link, None, None).unwrap();
    assert_eq!(sm.get_entries().count(), 2);
    let user = parse_value(br#"{"role":"user","content":"hi","timestamp":5}"#).unwrap();
    match sm.append_message(user.clone()).unwrap_err() {
        AppendError::OutsideStore(o) => assert_eq!(o, e.refusal()),
        other => panic!("{other:?}"),
    }
    assert_eq!(sm.get_entries().count(), 2);
    // With the write lock on: refused before any lock file is created.
    sm.set_write_lock(Some(opts(100)));
    let err = sm.append_message(user).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{} links to {}, outside the store root {}; refusing to follow the link for a write",
            e.link.display(),
            e.target.display(),
            e.store.display()
        )
    );
    assert!(matches!(err, AppendError::OutsideStore(ref o) if *o == e.refusal()));
    // The plain io functions refuse as well.
    let io_err = session_store::io::append_line(&e.link, b"{}", session_store::Durability::Buffer)
        .unwrap_err();
    assert_eq!(io_err.kind(), std::io::ErrorKind::PermissionDenied);
    assert_eq!(OutsideStore::find(&io_err), Some(&e.refusal()));
    let lock_err = SessionWriteLock::acquire(&e.link, &opts(100)).unwrap_err();
    assert!(matches!(lock_err, LockError::OutsideStore(ref o) if *o == e.refusal()));
    e.assert_untouched();
}

#[test]
fn rewrites_through_a_link_out_of_the_store_are_refused_naming_both_paths() {
    let _g = serial();
    let e = Escape::new();
    let mut sm = SessionManager::open(&e.link, None, None).unwrap();
    match sm.rewrite_file().unwrap_err() {
        AppendError::OutsideStore(o) => assert_eq!(o, e.refusal()),
        other => panic!("{other:?}"),
    }
    let removed = sm.remove_trailing_entries(|_| true, None);
    match removed.unwrap_err() {
        RemoveError::OutsideStore(o) => assert_eq!(o, e.refusal()),
        other => panic!("{other:?}"),
    }
    assert_eq!(sm.get_entries().count(), 2);
    let io_err = session_store::io::atomic_rewrite(&e.link, b"{}\n").unwrap_err();
    assert_eq!(OutsideStore::find(&io_err), Some(&e.refusal()));
    let backup = e.store.join("L.jsonl.bak-1");
    let io_err = session_store::io::backup_copy(&e.link, &backup, &e.bytes).unwrap_err();
    assert_eq!(OutsideStore::find(&io_err), Some(&e.refusal()));
    e.assert_untouched();
}

#[test]
fn a_repair_through_a_link_out_of_the_store_writes_no_backup() {
    let _g = serial();
    let e = Escape::new();
    for dry_run in [true, false] {
        let out = session_store::repair_session_file_with(
            &e.link,
            None,
            &session_store::RepairOptions {
                keep_backup: true,
                dry_run,
            },
        );
        assert_eq!(
            out.reason,
            Some(RepairSkip::OutsideStore(e.refusal())),
            "dry run {dry_run}"
        );
        assert!(!out.repaired);
        assert_eq!(out.backup_path, None);
        assert_eq!(
            out.reason.unwrap().to_string(),
            format!(
                "repair refused: {} links to {}, outside the store root {}; refusing to follow \
                 the link for a write",
                e.link.display(),
                e.target.display(),
                e.store.display()
            )
        );
    }
    assert!(!is_repair_cached(&e.link));
    e.assert_untouched();
}

/// The `*.jsonl` symlinks of a directory are remembered between calls only while the
/// directory stays as it was: a link made later is seen at once, whether or not the
/// directory had settled before the first read.
#[cfg(unix)]
#[test]
fn remembered_symlink_listings_see_every_new_link() {
    use session_store::identity::{aliases_in, symlinks_in};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    plant(&dir.join("s.jsonl"), "{}\n");
    std::os::unix::fs::symlink("s.jsonl", dir.join("a.jsonl")).unwrap();
    std::os::unix::fs::symlink("s.jsonl", dir.join("notes.txt")).unwrap();
    // Settled an hour ago: this listing is remembered.
    let hour_ago =
        filetime::FileTime::from_system_time(SystemTime::now() - Duration::from_secs(3600));
    filetime::set_file_mtime(&dir, hour_ago).unwrap();
    assert_eq!(symlinks_in(&dir), [dir.join("a.jsonl")]);
    assert_eq!(symlinks_in(&dir), [dir.join("a.jsonl")]);
    // A new link changes the directory's time: the next call reads it again.
    std::os::unix::fs::symlink("s.jsonl", dir.join("b.jsonl")).unwrap();
    assert_eq!(
        symlinks_in(&dir),
        [dir.join("a.jsonl"), dir.join("b.jsonl")]
    );
    assert_eq!(
        aliases_in(&dir, &dir.join("s.jsonl")),
        [dir.join("a.jsonl"), dir.join("b.jsonl")]
    );
    // Just changed (not settled): never remembered, so a link removed within the same
    // clock step is not reported.
    std::fs::remove_file(dir.join("a.jsonl")).unwrap();
    assert_eq!(symlinks_in(&dir), [dir.join("b.jsonl")]);
}
