//! Archive and clear key on the file identity (docs/DEVIATIONS.md D29): a symlink to another
//! session of the sessions directory is that session, handled once under its own name; a
//! symlink to a file outside the sessions directory is never followed — it is left alone with
//! a reason naming the link and its target, and the target keeps its bytes and mtime.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use pretty_assertions::assert_eq;
use session_semantics::StoreLayout;
use session_semantics::fsops::{self, RetireRefusal};
use session_semantics::retention::{
    self, ClearMode, ClearTarget, Outcome, RetentionPolicy, SessionRef, SkipReason, Skipped,
};

/// 2026-03-01T00:00:00.000Z.
const NOW: i64 = 1_772_323_200_000;
const DAY: i64 = 86_400_000;

fn session_text(id: &str, ts: i64) -> String {
    format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}}\n\
         {{\"type\":\"message\",\"id\":\"u1\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":{ts}}}}}\n"
    )
}

/// `<tmp>/state/agents/main/sessions/` with `s.jsonl` (100 days old), `L.jsonl -> s.jsonl`,
/// and `out.jsonl -> <tmp>/outside/t.jsonl` (a session 100 days old, mtime an hour ago).
struct Store {
    _tmp: tempfile::TempDir,
    layout: StoreLayout,
    dir: PathBuf,
    target: PathBuf,
    target_bytes: Vec<u8>,
    target_mtime: SystemTime,
}

impl Store {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let layout = StoreLayout::new(base.join("state"));
        let dir = layout.sessions_dir("main").unwrap();
        session_store::io::ensure_dir(&dir).unwrap();
        session_store::io::write_raw(
            &dir.join("s.jsonl"),
            session_text("s1", NOW - 100 * DAY).as_bytes(),
        )
        .unwrap();
        std::os::unix::fs::symlink("s.jsonl", dir.join("L.jsonl")).unwrap();
        let outside = base.join("outside");
        session_store::io::ensure_dir(&outside).unwrap();
        let target = outside.join("t.jsonl");
        session_store::io::write_raw(&target, session_text("t1", NOW - 100 * DAY).as_bytes())
            .unwrap();
        let old = SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::open(&target)
            .unwrap()
            .set_modified(old)
            .unwrap();
        std::os::unix::fs::symlink(&target, dir.join("out.jsonl")).unwrap();
        Store {
            _tmp: tmp,
            layout,
            dir,
            target_bytes: std::fs::read(&target).unwrap(),
            target_mtime: std::fs::metadata(&target).unwrap().modified().unwrap(),
            target,
        }
    }

    fn outside_reason(&self) -> SkipReason {
        SkipReason::LinkOutsideStore {
            link: self.dir.join("out.jsonl").to_string_lossy().into_owned(),
            target: self.target.to_string_lossy().into_owned(),
        }
    }

    fn assert_target_untouched(&self) {
        assert_eq!(std::fs::read(&self.target).unwrap(), self.target_bytes);
        assert_eq!(
            std::fs::metadata(&self.target).unwrap().modified().unwrap(),
            self.target_mtime
        );
        assert!(is_symlink(&self.dir.join("out.jsonl")));
        // No lock file was created next to the target (nor anywhere in its directory).
        let names = names_in(self.target.parent().unwrap());
        assert_eq!(names, vec!["t.jsonl".to_owned()]);
    }
}

fn is_symlink(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn max_age_30d() -> RetentionPolicy {
    RetentionPolicy {
        max_age: Some("30d".to_owned()),
        max_age_ms: Some(30 * DAY as u64),
        max_size: None,
        max_size_bytes: None,
    }
}

#[test]
fn archive_moves_an_aliased_session_once_and_leaves_a_link_out_alone() {
    let s = Store::new();
    let plan = retention::plan_archive(&s.layout, "main", &max_age_30d(), NOW).unwrap();
    let planned: Vec<(&str, &str)> = plan
        .report()
        .actions
        .iter()
        .map(|a| (a.file.as_str(), a.destination.as_str()))
        .collect();
    assert_eq!(planned, vec![("s.jsonl", "archive/s.jsonl")]);
    assert_eq!(
        plan.report().skipped,
        vec![
            Skipped {
                file: "L.jsonl".to_owned(),
                reason: SkipReason::Alias {
                    of: "s.jsonl".to_owned()
                },
            },
            Skipped {
                file: "out.jsonl".to_owned(),
                reason: s.outside_reason(),
            },
        ]
    );
    assert_eq!(
        s.outside_reason().to_string(),
        format!(
            "{} is a symlink to {}, outside the sessions directory (never followed)",
            s.dir.join("out.jsonl").display(),
            s.target.display()
        )
    );
    assert_eq!(plan.report().actions[0].aliases, vec!["L.jsonl"]);
    let done = plan.execute(None);
    assert_eq!(done.actions[0].outcome, Outcome::Archived);
    // The alias would dangle: the link (only) went with its session.
    assert_eq!(done.actions[0].aliases, vec!["L.jsonl"]);
    assert_eq!(
        names_in(&s.dir),
        vec!["archive", "out.jsonl", "sessions-audit.log"]
    );
    assert_eq!(names_in(&s.dir.join("archive")), vec!["s.jsonl"]);
    assert_eq!(
        audited(&s.dir),
        [
            ("archive".to_owned(), "s.jsonl".to_owned()),
            ("remove-alias".to_owned(), "L.jsonl".to_owned())
        ]
    );
    s.assert_target_untouched();
}

#[test]
fn clearing_a_link_out_of_the_store_names_both_paths_and_touches_nothing() {
    let s = Store::new();
    for mode in [ClearMode::Purge, ClearMode::Archive] {
        let target = ClearTarget::Session(SessionRef::File {
            agent_id: "main".to_owned(),
            name: "out.jsonl".to_owned(),
        });
        let report = retention::clear(&s.layout, &target, mode, false, None).unwrap();
        assert_eq!(report.actions, vec![], "{mode:?}");
        assert_eq!(
            report.skipped,
            vec![Skipped {
                file: "out.jsonl".to_owned(),
                reason: s.outside_reason(),
            }],
            "{mode:?}"
        );
        s.assert_target_untouched();
    }
    // Clearing every session of the agent: the aliased session once, the link out left alone.
    let report = retention::clear(
        &s.layout,
        &ClearTarget::Agent("main".to_owned()),
        ClearMode::Purge,
        false,
        None,
    )
    .unwrap();
    let acted: Vec<(&str, &Outcome)> = report
        .actions
        .iter()
        .map(|a| (a.file.as_str(), &a.outcome))
        .collect();
    assert_eq!(acted, vec![("s.jsonl", &Outcome::Purged)]);
    assert_eq!(report.actions[0].aliases, vec!["L.jsonl"]);
    let skipped: Vec<&str> = report.skipped.iter().map(|k| k.file.as_str()).collect();
    assert_eq!(skipped, vec!["L.jsonl", "out.jsonl"]);
    assert_eq!(report.skipped[1].reason, s.outside_reason());
    assert_eq!(names_in(&s.dir), vec!["out.jsonl", "sessions-audit.log"]);
    assert_eq!(
        audited(&s.dir),
        [
            ("delete".to_owned(), "s.jsonl".to_owned()),
            ("remove-alias".to_owned(), "L.jsonl".to_owned())
        ]
    );
    s.assert_target_untouched();
}

/// The `(action, file)` of each line of `<dir>/sessions-audit.log`.
fn audited(dir: &std::path::Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(dir.join("sessions-audit.log")).unwrap();
    text.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["action"].as_str().unwrap().to_owned(),
                v["file"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn clearing_a_session_by_its_alias_clears_the_target() {
    let s = Store::new();
    let target = ClearTarget::Session(SessionRef::File {
        agent_id: "main".to_owned(),
        name: "L.jsonl".to_owned(),
    });
    let dry = retention::clear(&s.layout, &target, ClearMode::Archive, true, None).unwrap();
    let planned: Vec<(&str, Option<&str>)> = dry
        .actions
        .iter()
        .map(|a| (a.file.as_str(), a.destination.as_deref()))
        .collect();
    assert_eq!(planned, vec![("s.jsonl", Some("archive/s.jsonl"))]);
    assert_eq!(dry.actions[0].session_id, "s1");
    assert_eq!(dry.skipped, vec![]);
    let done = retention::clear(&s.layout, &target, ClearMode::Archive, false, None).unwrap();
    assert_eq!(done.actions[0].outcome, Outcome::Archived);
    assert_eq!(names_in(&s.dir.join("archive")), vec!["s.jsonl"]);
    assert!(!s.dir.join("s.jsonl").exists());
}

#[test]
fn the_retire_lock_refuses_a_link_out_of_the_store() {
    let s = Store::new();
    let link = s.dir.join("out.jsonl");
    match fsops::lock_for_retire(&link) {
        Err(RetireRefusal::OutsideStore(o)) => {
            assert_eq!(o.link, link);
            assert_eq!(o.target, s.target);
            assert_eq!(o.root, s.dir);
        }
        other => panic!("{other:?}"),
    }
    // An alias takes the lock of its target.
    let guard = fsops::lock_for_retire(&s.dir.join("L.jsonl"))
        .unwrap()
        .unwrap();
    assert_eq!(guard.lock_path(), s.dir.join("s.jsonl.lock"));
    assert_eq!(
        fsops::lock_file_of(&s.dir.join("L.jsonl")).unwrap(),
        s.dir.join("s.jsonl.lock")
    );
    drop(guard);
    s.assert_target_untouched();
}
