//! OpenClaw's session maintenance (openclaw-store.md §4, test cases §9 24–29 and 32): the
//! `session.maintenance` settings resolve as the reference resolves them; the planner selects
//! exactly the reference's rows and files in its order (stale prune with the preserved rows,
//! the cap with ties in store order, archive retention by the name's time, the unreferenced
//! sweep by mtime, the disk budget's files then rows, `--fix-missing`); applying a plan removes
//! the rows in one save and renames the files in place to `.deleted.<now>` (docs/DEVIATIONS.md
//! D38), leaving a transcript another row shares and every other file as it was.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::Path;

use pretty_assertions::assert_eq;
use session_format::json::{JsValue, parse_value};
use session_semantics::openclaw_store::SessionStore;
use session_semantics::openclaw_store::maintenance::{
    ApplyOptions, DirScan, FileOutcome, FileReason, MaintenanceConfig, MaintenanceMode,
    MaintenancePlan, PlanOptions, PlannedRename, RemovalReason, apply_plan, entry_high_water,
    plan_maintenance,
};

/// 2026-07-20T13:00:00Z.
const NOW: i64 = 1_784_552_400_000;
const DAY: i64 = 86_400_000;
const STAMP: &str = "2026-07-20T13-00-00.000Z";

/// Plants a test input (`session_store::io::write_raw`) with the given mtime.
fn plant(path: &Path, bytes: &[u8], mtime_ms: i64) {
    session_store::io::write_raw(path, bytes).unwrap();
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(mtime_ms as u64);
    session_store::io::set_modified(path, t).unwrap();
}

/// A transcript with a header and one user message.
fn transcript(id: &str) -> Vec<u8> {
    format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2026-06-11T09:00:00.000Z\",\"cwd\":\"/w\"}}\n\
         {{\"type\":\"message\",\"id\":\"m1\",\"parentId\":null,\"timestamp\":\"2026-06-11T09:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"hi\"}}}}\n"
    )
    .into_bytes()
}

/// A sessions directory holding `sessions.json` = `json`, loaded.
fn store_in(dir: &Path, json: &str) -> SessionStore {
    plant(&dir.join("sessions.json"), json.as_bytes(), NOW - DAY);
    SessionStore::load(&dir.join("sessions.json")).unwrap()
}

fn config(maintenance: &str) -> MaintenanceConfig {
    let v = parse_value(maintenance.as_bytes()).unwrap();
    MaintenanceConfig::from_maintenance(v.as_object())
}

fn plan_of(
    store: &SessionStore,
    config: &MaintenanceConfig,
    opts: PlanOptions<'_>,
) -> MaintenancePlan {
    let scan = DirScan::read(store).unwrap();
    plan_maintenance(store, &scan, config, &opts)
}

fn now() -> PlanOptions<'static> {
    PlanOptions {
        now_ms: NOW,
        ..PlanOptions::default()
    }
}

fn removed(plan: &MaintenancePlan) -> Vec<(&str, RemovalReason)> {
    plan.removed_rows
        .iter()
        .map(|r| (r.key.as_str(), r.reason))
        .collect()
}

fn files(plan: &MaintenancePlan) -> Vec<(String, &'static str, Option<&str>)> {
    plan.files
        .iter()
        .map(|f| {
            (
                f.path.file_name().unwrap().to_string_lossy().into_owned(),
                f.reason.label(),
                match &f.action {
                    PlannedRename::Rename(to) => Some(to.as_str()),
                    PlannedRename::Keep => None,
                    PlannedRename::LeaveAlone(_) => Some("left alone"),
                },
            )
        })
        .collect()
}

#[test]
fn settings_resolve_as_the_reference_resolves_session_maintenance() {
    let d = MaintenanceConfig::default();
    assert_eq!(
        (
            d.mode,
            d.prune_after_ms,
            d.max_entries,
            d.reset_archive_retention_ms,
            d.max_disk_bytes,
            d.high_water_bytes
        ),
        (
            MaintenanceMode::Enforce,
            30 * DAY as u64,
            500,
            Some(30 * DAY as u64),
            None,
            None
        )
    );
    let c = config(
        r#"{"mode":"warn","pruneAfter":"7d","maxEntries":3.9,"resetArchiveRetention":false,"maxDiskBytes":"1mb"}"#,
    );
    assert_eq!(
        (
            c.mode,
            c.prune_after_ms,
            c.max_entries,
            c.reset_archive_retention_ms,
            c.max_disk_bytes,
            c.high_water_bytes
        ),
        (
            MaintenanceMode::Warn,
            7 * DAY as u64,
            3,
            None,
            Some(1_048_576),
            Some(838_860)
        )
    );
    // Legacy pruneDays (a bare number is days), an unparsable retention falls back to
    // pruneAfter, a high water above the max is clamped, an unparsable max means no budget.
    let c = config(
        r#"{"pruneDays":3,"resetArchiveRetention":"soon","maxDiskBytes":1000,"highWaterBytes":"2kb"}"#,
    );
    assert_eq!(
        (
            c.prune_after_ms,
            c.reset_archive_retention_ms,
            c.max_disk_bytes,
            c.high_water_bytes
        ),
        (3 * DAY as u64, Some(3 * DAY as u64), Some(1000), Some(1000))
    );
    let c = config(r#"{"pruneAfter":"later","maxDiskBytes":"lots","resetArchiveRetention":"12h"}"#);
    assert_eq!(
        (
            c.prune_after_ms,
            c.reset_archive_retention_ms,
            c.max_disk_bytes
        ),
        (30 * DAY as u64, Some(43_200_000), None)
    );
    // From an openclaw.json document: session.maintenance; other keys ignored.
    let c = MaintenanceConfig::from_config_json(
        Path::new("openclaw.json"),
        br#"{"agents":{},"session":{"dmScope":"main","maintenance":{"maxEntries":42}}}"#,
    )
    .unwrap();
    assert_eq!((c.max_entries, c.prune_after_ms), (42, 30 * DAY as u64));
    let err = MaintenanceConfig::from_config_json(Path::new("/x/openclaw.json"), b"{ // json5\n}")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("config /x/openclaw.json is not valid JSON at byte 2"),
        "{err}"
    );
    // A missing file gives the defaults.
    let dir = session_test_support::tempdir();
    assert_eq!(
        MaintenanceConfig::load(&dir.path().join("openclaw.json")).unwrap(),
        MaintenanceConfig::default()
    );
}

#[test]
fn entry_high_water_is_batched_above_49_entries() {
    assert_eq!(
        [0, -3, 1, 49, 50, 500, 1000].map(entry_high_water),
        [1, 1, 2, 50, 75, 550, 1100]
    );
}

/// §9 case 24: the stale prune keeps the preserved rows and rows without `updatedAt`.
#[test]
fn stale_prune_keeps_group_thread_topic_and_active_rows() {
    let dir = session_test_support::tempdir();
    let old = NOW - 31 * DAY;
    let young = NOW - 29 * DAY;
    let json = format!(
        r#"{{
  "agent:main:main": {{"sessionId": "m", "updatedAt": {old}}},
  "agent:main:discord:direct:room": {{"sessionId": "g", "updatedAt": {old}, "chatType": "group"}},
  "agent:main:slack:group:c1": {{"sessionId": "s", "updatedAt": {old}}},
  "agent:main:telegram:group:-100:topic:42": {{"sessionId": "t", "updatedAt": {old}}},
  "agent:main:slack:direct:u1:thread:t1": {{"sessionId": "th", "updatedAt": {old}}},
  "agent:main:whatsapp:direct:+1": {{"sessionId": "a", "updatedAt": {old}}},
  "agent:main:cron:digest:run:r1": {{"sessionId": "c", "updatedAt": {old}, "chatType": "group"}},
  "agent:main:subagent:s1": {{"sessionId": "sub", "updatedAt": {old}}},
  "agent:main:hook:webhook:x": {{"sessionId": "h", "updatedAt": {old}}},
  "agent:main:discord:channel:c9:heartbeat": {{"sessionId": "hb", "updatedAt": {old}}},
  "agent:main:telegram:direct:nots": {{"sessionId": "n"}},
  "agent:main:telegram:direct:young": {{"sessionId": "y", "updatedAt": {young}}},
  "agent:main:telegram:direct:zero": {{"sessionId": "z", "updatedAt": 0}}
}}"#
    );
    let store = store_in(dir.path(), &json);
    let plan = plan_of(
        &store,
        &MaintenanceConfig::default(),
        PlanOptions {
            active_key: Some("agent:main:whatsapp:direct:+1"),
            ..now()
        },
    );
    use RemovalReason::Stale;
    assert_eq!(
        removed(&plan),
        [
            ("agent:main:main", Stale),
            ("agent:main:cron:digest:run:r1", Stale),
            ("agent:main:subagent:s1", Stale),
            ("agent:main:hook:webhook:x", Stale),
            ("agent:main:discord:channel:c9:heartbeat", Stale),
            ("agent:main:telegram:direct:zero", Stale),
        ]
    );
    assert_eq!(
        (
            plan.before_count,
            plan.after_count,
            plan.pruned,
            plan.capped,
            plan.missing
        ),
        (13, 7, 6, 0, 0)
    );
    assert_eq!(
        plan.remaining_keys(&store),
        [
            "agent:main:discord:direct:room",
            "agent:main:slack:group:c1",
            "agent:main:telegram:group:-100:topic:42",
            "agent:main:slack:direct:u1:thread:t1",
            "agent:main:whatsapp:direct:+1",
            "agent:main:telegram:direct:nots",
            "agent:main:telegram:direct:young",
        ]
    );
    // Without the active key, that row is pruned too.
    let plan = plan_of(&store, &MaintenanceConfig::default(), now());
    assert_eq!(plan.pruned, 7);
    assert_eq!(plan.removed_rows[1].key, "agent:main:whatsapp:direct:+1");
}

/// §9 case 25: the cap keeps the newest non-preserved rows; preserved rows count against
/// `maxEntries`; equal `updatedAt` keep store order; a missing `updatedAt` goes first.
#[test]
fn cap_keeps_the_newest_rows_and_ties_keep_store_order() {
    let dir = session_test_support::tempdir();
    let t = NOW - DAY;
    let json = format!(
        r#"{{
  "agent:main:telegram:direct:a": {{"sessionId": "a", "updatedAt": {}}},
  "agent:main:telegram:direct:b": {{"sessionId": "b", "updatedAt": {t}}},
  "agent:main:telegram:direct:c": {{"sessionId": "c"}},
  "agent:main:telegram:group:g": {{"sessionId": "g", "updatedAt": {}}},
  "agent:main:telegram:direct:d": {{"sessionId": "d", "updatedAt": {t}}},
  "agent:main:telegram:direct:e": {{"sessionId": "e", "updatedAt": {}}}
}}"#,
        t - 5,
        t - 9,
        t + 1
    );
    let store = store_in(dir.path(), &json);
    let plan = plan_of(&store, &config(r#"{"maxEntries":3}"#), now());
    use RemovalReason::Capped;
    // Sorted newest first: e, b, d (tie: b before d), a, c (none); keep 3 − 1 preserved = 2.
    assert_eq!(
        removed(&plan),
        [
            ("agent:main:telegram:direct:d", Capped),
            ("agent:main:telegram:direct:a", Capped),
            ("agent:main:telegram:direct:c", Capped),
        ]
    );
    assert_eq!((plan.capped, plan.after_count), (3, 3));
    // The preview caps even below the high water (4 rows, max 3, high water 4).
    let plan = plan_of(&store, &config(r#"{"maxEntries":5}"#), now());
    assert_eq!(removed(&plan), [("agent:main:telegram:direct:c", Capped)]);
}

/// §9 case 27 and 28: archives past retention by the name's time (kept on apply); the sweep
/// selects unreferenced transcripts older than pruneAfter by mtime, never a referenced one,
/// an archive or a file in a sub-directory.
#[test]
fn archive_retention_is_by_name_and_the_sweep_by_mtime() {
    let dir = session_test_support::tempdir();
    let d = dir.path();
    let store = store_in(
        d,
        &format!(
            r#"{{"agent:main:telegram:group:g": {{"sessionId": "live", "updatedAt": {}}}}}"#,
            NOW - DAY
        ),
    );
    plant(&d.join("live.jsonl"), &transcript("live"), NOW - 90 * DAY);
    plant(
        &d.join("orphan-old.jsonl"),
        &transcript("orphan-old"),
        NOW - 31 * DAY,
    );
    plant(
        &d.join("orphan-young.jsonl"),
        &transcript("orphan-young"),
        NOW - 29 * DAY,
    );
    plant(
        &d.join("x.checkpoint.3f2a1b4c-0000-4000-8000-000000000000.jsonl"),
        b"{}\n",
        NOW - 40 * DAY,
    );
    plant(&d.join("live.trajectory.jsonl"), b"{}\n", NOW - 40 * DAY);
    plant(
        &d.join("gone.trajectory-path.json"),
        b"{}\n",
        NOW - 40 * DAY,
    );
    // Old by name, new by mtime; and young by name, old by mtime.
    plant(
        &d.join("r.jsonl.reset.2026-06-01T00-00-00.000Z"),
        &transcript("r"),
        NOW,
    );
    plant(
        &d.join("q.jsonl.deleted.2026-07-19T00-00-00Z"),
        &transcript("q"),
        NOW - 90 * DAY,
    );
    plant(
        &d.join("old.jsonl.deleted.2026-06-19T12-59-59.999Z"),
        &transcript("old"),
        NOW,
    );
    plant(
        &d.join("b.jsonl.bak.2026-01-01T00-00-00.000Z"),
        &transcript("b"),
        NOW - 90 * DAY,
    );
    std::fs::create_dir(d.join("archive")).unwrap();
    plant(
        &d.join("archive/sub-old.jsonl"),
        &transcript("sub-old"),
        NOW - 90 * DAY,
    );

    let plan = plan_of(&store, &MaintenanceConfig::default(), now());
    let checkpoint = "x.checkpoint.3f2a1b4c-0000-4000-8000-000000000000.jsonl";
    assert_eq!(
        files(&plan),
        [
            // Equal mtimes keep name order.
            (
                "gone.trajectory-path.json".to_owned(),
                "unreferenced",
                Some(format!("gone.trajectory-path.json.deleted.{STAMP}").as_str())
            ),
            (
                checkpoint.to_owned(),
                "unreferenced",
                Some(format!("{checkpoint}.deleted.{STAMP}").as_str())
            ),
            (
                "orphan-old.jsonl".to_owned(),
                "unreferenced",
                Some(format!("orphan-old.jsonl.deleted.{STAMP}").as_str())
            ),
            (
                "old.jsonl.deleted.2026-06-19T12-59-59.999Z".to_owned(),
                "archive-retention",
                None
            ),
            (
                "r.jsonl.reset.2026-06-01T00-00-00.000Z".to_owned(),
                "archive-retention",
                None
            ),
        ]
    );
    // 11 top-level files (sessions.json included; archive/ is a directory).
    assert_eq!(
        (
            plan.unreferenced.scanned_files,
            plan.unreferenced.removed_files,
            plan.unreferenced.older_than_ms
        ),
        (11, 3, 30 * DAY as u64)
    );
    assert_eq!(
        plan.unreferenced.freed_bytes,
        3 + 3 + transcript("orphan-old").len() as u64
    );
    assert!(plan.would_mutate);
    // resetArchiveRetention false keeps the reset archive out of the plan.
    let plan = plan_of(&store, &config(r#"{"resetArchiveRetention":false}"#), now());
    assert!(
        !files(&plan)
            .iter()
            .any(|f| f.0.starts_with("r.jsonl.reset.")),
        "{:?}",
        files(&plan)
    );
    assert!(
        files(&plan)
            .iter()
            .any(|f| f.0.starts_with("old.jsonl.deleted."))
    );
}

/// §9 case 29: over the budget, archives and unreferenced files go oldest mtime first until the
/// total is at most the high water, then rows oldest first (never the active or a preserved
/// row), with their files.
#[test]
fn disk_budget_takes_files_then_rows_oldest_first() {
    let dir = session_test_support::tempdir();
    let d = dir.path();
    let json = format!(
        r#"{{
  "agent:main:telegram:direct:new": {{"sessionId": "new", "updatedAt": {}}},
  "agent:main:telegram:direct:old": {{"sessionId": "old", "updatedAt": {}}},
  "agent:main:telegram:direct:older": {{"sessionId": "older", "updatedAt": {}}},
  "agent:main:telegram:group:g": {{"sessionId": "g", "updatedAt": 1}}
}}"#,
        NOW - DAY,
        NOW - 3 * DAY,
        NOW - 4 * DAY
    );
    let store = store_in(d, &json);
    let big = vec![b'x'; 1000];
    plant(&d.join("new.jsonl"), &big, NOW - DAY);
    plant(&d.join("old.jsonl"), &big, NOW - 3 * DAY);
    plant(&d.join("older.jsonl"), &big, NOW - 4 * DAY);
    plant(&d.join("g.jsonl"), &big, NOW - 60 * DAY);
    plant(
        &d.join("a.jsonl.reset.2026-07-19T00-00-00.000Z"),
        &big,
        NOW - 2 * DAY,
    );
    plant(&d.join("orphan.jsonl"), &big, NOW - 5 * DAY);
    // The budget counts the store as it would be written (pretty JSON), not the file's size.
    let store_len = store.to_bytes().len() as u64;
    // Total = 6000 + the store; high water leaves room for 3 files of 1000 plus the store.
    let max = 5000 + store_len;
    let hw = 3500 + store_len;
    let cfg = config(&format!(
        r#"{{"maxDiskBytes":{max},"highWaterBytes":{hw}}}"#
    ));
    let plan = plan_of(
        &store,
        &cfg,
        PlanOptions {
            active_key: Some("agent:main:telegram:direct:older"),
            ..now()
        },
    );
    // Files: orphan (5 d), the archive (2 d) → 4000 + store > hw; then rows oldest first:
    // older is active, g is preserved, so old goes, with old.jsonl.
    assert_eq!(
        removed(&plan),
        [("agent:main:telegram:direct:old", RemovalReason::Budget)]
    );
    assert_eq!(
        files(&plan),
        [
            (
                "old.jsonl".to_owned(),
                "removed-row",
                Some(format!("old.jsonl.deleted.{STAMP}").as_str())
            ),
            (
                "orphan.jsonl".to_owned(),
                "disk-budget",
                Some(format!("orphan.jsonl.deleted.{STAMP}").as_str())
            ),
            (
                "a.jsonl.reset.2026-07-19T00-00-00.000Z".to_owned(),
                "disk-budget",
                None
            ),
        ]
    );
    let b = plan.disk_budget.unwrap();
    let chunk = {
        // The row's chunk of the pretty store, plus the 2 bytes of its separator.
        let row = format!(
            "  \"agent:main:telegram:direct:old\": {{\n    \"sessionId\": \"old\",\n    \"updatedAt\": {}\n  }}",
            NOW - 3 * DAY
        );
        row.len() as u64 + 2
    };
    assert_eq!(
        (
            b.total_bytes_before,
            b.removed_files,
            b.removed_entries,
            b.freed_bytes,
            b.over_budget
        ),
        (6000 + store_len, 3, 1, 3000, true)
    );
    assert_eq!(b.total_bytes_after, 3000 + store_len - chunk);
    // The sweep does not count the budget's files again.
    assert_eq!(plan.unreferenced.removed_files, 0);
    // Under the budget: nothing, and `overBudget` false.
    let plan = plan_of(&store, &config(r#"{"maxDiskBytes":"1gb"}"#), now());
    let b = plan.disk_budget.unwrap();
    assert_eq!(
        (b.over_budget, b.removed_files, b.high_water_bytes),
        (false, 0, 858_993_459)
    );
    assert!(plan.files.is_empty() && !plan.would_mutate);
}

/// §9 case 32: `--fix-missing` removes rows whose transcript is missing or header-only, and
/// rows without a session id under a non-agent key; nothing of theirs is archived.
#[test]
fn fix_missing_removes_rows_without_a_usable_transcript() {
    let dir = session_test_support::tempdir();
    let d = dir.path();
    let t = NOW - DAY;
    let json = format!(
        r#"{{
  "agent:main:telegram:direct:ok": {{"sessionId": "ok", "updatedAt": {t}}},
  "agent:main:telegram:direct:gone": {{"sessionId": "gone", "updatedAt": {t}}},
  "agent:main:telegram:direct:header": {{"sessionId": "header", "updatedAt": {t}}},
  "agent:main:telegram:direct:torn": {{"sessionId": "torn", "updatedAt": {t}}},
  "agent:main:telegram:direct:moved": {{"sessionId": "moved", "updatedAt": {t}}},
  "agent:main:telegram:direct:sub": {{"sessionId": "sub", "sessionFile": "archive/sub.jsonl", "updatedAt": {t}}},
  "agent:main:telegram:direct:noid": {{"updatedAt": {t}}},
  "legacy-key": {{"updatedAt": {t}}}
}}"#
    );
    let store = store_in(d, &json);
    plant(&d.join("ok.jsonl"), &transcript("ok"), t);
    plant(
        &d.join("header.jsonl"),
        b"{\"type\":\"session\",\"version\":3,\"id\":\"header\"}\n\n",
        t,
    );
    plant(
        &d.join("torn.jsonl"),
        b"{\"type\":\"session\",\"version\":3,\"id\":\"torn\"}\n{\"type\":\"mess",
        t,
    );
    std::fs::create_dir(d.join("archive")).unwrap();
    plant(&d.join("archive/moved.jsonl"), &transcript("moved"), t);
    plant(&d.join("archive/sub.jsonl"), &transcript("sub"), t);
    let plan = plan_of(
        &store,
        &MaintenanceConfig::default(),
        PlanOptions {
            fix_missing: true,
            ..now()
        },
    );
    use RemovalReason::Missing;
    assert_eq!(
        removed(&plan),
        [
            ("agent:main:telegram:direct:gone", Missing),
            ("agent:main:telegram:direct:header", Missing),
            ("agent:main:telegram:direct:moved", Missing),
            ("legacy-key", Missing),
        ]
    );
    assert_eq!((plan.missing, plan.after_count), (4, 4));
    // Nothing is archived for them (the header-only file is young: the sweep leaves it).
    assert_eq!(files(&plan), []);
}

/// §9 case 26 with D38: applying removes the stale rows in one save (even far below
/// maxEntries), then renames their unshared transcripts and trajectory sidecars in place;
/// a transcript another row shares is left alone, and every other file keeps its bytes.
#[test]
fn applying_renames_the_removed_rows_files_and_keeps_shared_ones() {
    let dir = session_test_support::tempdir();
    let d = dir.path();
    let old = NOW - 40 * DAY;
    let json = format!(
        r#"{{
  "agent:main:main": {{"sessionId": "main-id", "updatedAt": {old}, "x": [1, {{"y": null}}]}},
  "agent:main:telegram:direct:twin": {{"sessionId": "shared", "updatedAt": {old}}},
  "agent:main:telegram:group:g": {{"sessionId": "shared", "updatedAt": {old}}},
  "agent:main:telegram:direct:keep": {{"sessionId": "keep", "updatedAt": {}}}
}}"#,
        NOW - DAY
    );
    let mut store = store_in(d, &json);
    for id in ["main-id", "shared", "keep"] {
        plant(&d.join(format!("{id}.jsonl")), &transcript(id), NOW - DAY);
    }
    plant(
        &d.join("main-id.trajectory.jsonl"),
        b"{\"t\":1}\n",
        NOW - DAY,
    );
    plant(
        &d.join("main-id.trajectory-path.json"),
        b"{\"p\":1}\n",
        NOW - DAY,
    );
    let plan = plan_of(&store, &MaintenanceConfig::default(), now());
    assert_eq!(
        plan.removed_rows
            .iter()
            .map(|r| (r.key.as_str(), r.shared_with.as_deref()))
            .collect::<Vec<_>>(),
        [
            ("agent:main:main", None),
            (
                "agent:main:telegram:direct:twin",
                Some("agent:main:telegram:group:g")
            )
        ]
    );
    let report = apply_plan(&mut store, &plan, ApplyOptions::default()).unwrap();
    assert!(report.store_written);
    assert_eq!(
        report.removed_keys,
        ["agent:main:main", "agent:main:telegram:direct:twin"]
    );
    let outcomes: Vec<(String, &FileReason, String)> = report
        .files
        .iter()
        .map(|f| {
            let to = match &f.outcome {
                FileOutcome::Renamed { to } => {
                    to.file_name().unwrap().to_string_lossy().into_owned()
                }
                other => format!("{other:?}"),
            };
            (
                f.planned
                    .path
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
                &f.planned.reason,
                to,
            )
        })
        .collect();
    let main = FileReason::RemovedRow {
        key: "agent:main:main".to_owned(),
    };
    assert_eq!(
        outcomes,
        [
            (
                "main-id.jsonl".to_owned(),
                &main,
                format!("main-id.jsonl.deleted.{STAMP}")
            ),
            (
                "main-id.trajectory-path.json".to_owned(),
                &main,
                format!("main-id.trajectory-path.json.deleted.{STAMP}")
            ),
            (
                "main-id.trajectory.jsonl".to_owned(),
                &main,
                format!("main-id.trajectory.jsonl.deleted.{STAMP}")
            ),
        ]
    );
    assert_eq!(
        session_test_support::dir_names(d),
        [
            "keep.jsonl".to_owned(),
            format!("main-id.jsonl.deleted.{STAMP}"),
            format!("main-id.trajectory-path.json.deleted.{STAMP}"),
            format!("main-id.trajectory.jsonl.deleted.{STAMP}"),
            "sessions-audit.log".to_owned(),
            "sessions.json".to_owned(),
            "shared.jsonl".to_owned(),
        ]
    );
    assert_eq!(
        std::fs::read(d.join(format!("main-id.jsonl.deleted.{STAMP}"))).unwrap(),
        transcript("main-id")
    );
    assert_eq!(
        std::fs::read(d.join("shared.jsonl")).unwrap(),
        transcript("shared")
    );
    let written = std::fs::read_to_string(d.join("sessions.json")).unwrap();
    assert_eq!(
        written,
        format!(
            "{{\n  \"agent:main:telegram:group:g\": {{\n    \"sessionId\": \"shared\",\n    \"updatedAt\": {old}\n  }},\n  \"agent:main:telegram:direct:keep\": {{\n    \"sessionId\": \"keep\",\n    \"updatedAt\": {}\n  }}\n}}",
            NOW - DAY
        )
    );
    let audit = std::fs::read_to_string(d.join("sessions-audit.log")).unwrap();
    let lines: Vec<JsValue> = audit
        .lines()
        .map(|l| parse_value(l.as_bytes()).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    let field = |v: &JsValue, k: &str| v.get(k).unwrap().as_str_lossy().unwrap().into_owned();
    assert_eq!(
        (
            field(&lines[0], "action"),
            field(&lines[0], "file"),
            field(&lines[0], "reason"),
            field(&lines[0], "sessionId")
        ),
        (
            "rename".to_owned(),
            "main-id.jsonl".to_owned(),
            "prune-stale".to_owned(),
            "main-id".to_owned()
        )
    );
}

/// A store changed by another writer after the plan was made: nothing is saved or renamed.
#[test]
fn applying_over_a_changed_store_changes_nothing() {
    let dir = session_test_support::tempdir();
    let d = dir.path();
    let json = format!(
        r#"{{"agent:main:main": {{"sessionId": "m", "updatedAt": {}}}}}"#,
        NOW - 40 * DAY
    );
    let mut store = store_in(d, &json);
    plant(&d.join("m.jsonl"), &transcript("m"), NOW - DAY);
    let plan = plan_of(&store, &MaintenanceConfig::default(), now());
    assert_eq!(plan.files.len(), 1);
    let other = format!("{json} ");
    plant(&d.join("sessions.json"), other.as_bytes(), NOW - DAY);
    let err = apply_plan(&mut store, &plan, ApplyOptions::default()).unwrap_err();
    assert!(
        err.to_string().contains("changed since it was loaded"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("sessions.json")).unwrap(),
        other
    );
    assert_eq!(
        session_test_support::dir_names(d),
        ["m.jsonl", "sessions.json"]
    );
}

/// A removed row's transcript held by a live writer (its `.jsonl.lock` names this running
/// process): nothing is changed, the row stays and no file is renamed.
#[test]
fn applying_while_a_removed_rows_transcript_is_locked_changes_nothing() {
    let dir = session_test_support::tempdir();
    let d = dir.path();
    let json = format!(
        r#"{{"agent:main:main": {{"sessionId": "m", "updatedAt": {}}}}}"#,
        NOW - 40 * DAY
    );
    let mut store = store_in(d, &json);
    plant(&d.join("m.jsonl"), &transcript("m"), NOW - DAY);
    // The holder: another live process (a lock naming this process itself, which holds no
    // such lock, counts as left behind).
    let mut holder = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = holder.id();
    let lock = format!(
        "{{\n  \"pid\": {pid},\n  \"createdAt\": \"{}\",\n  \"starttime\": {}\n}}\n",
        session_format::time::to_iso_string(session_format::ids::now_ms()).unwrap(),
        session_test_support::starttime(pid)
    );
    plant(&d.join("m.jsonl.lock"), lock.as_bytes(), NOW - DAY);
    let plan = plan_of(&store, &MaintenanceConfig::default(), now());
    assert_eq!(removed(&plan), [("agent:main:main", RemovalReason::Stale)]);
    let result = apply_plan(&mut store, &plan, ApplyOptions::default());
    holder.kill().unwrap();
    holder.wait().unwrap();
    let err = result.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{} is in use (lock {}): nothing was changed; run cleanup again later",
            d.join("m.jsonl").display(),
            d.join("m.jsonl.lock").display()
        )
    );
    assert_eq!(
        std::fs::read_to_string(d.join("sessions.json")).unwrap(),
        json
    );
    assert_eq!(
        session_test_support::dir_names(d),
        ["m.jsonl", "m.jsonl.lock", "sessions.json"]
    );
}

/// `purge_archives`: the archives past retention are deleted (as the reference deletes them),
/// with a `delete` audit line each; everything else is renamed as without it.
#[test]
fn purging_deletes_only_the_expired_archives() {
    let dir = session_test_support::tempdir();
    let d = dir.path();
    let mut store = store_in(
        d,
        &format!(
            r#"{{"agent:main:main": {{"sessionId": "m", "updatedAt": {}}}}}"#,
            NOW - 40 * DAY
        ),
    );
    plant(&d.join("m.jsonl"), &transcript("m"), NOW - 40 * DAY);
    let reset = "r.jsonl.reset.2026-06-01T00-00-00.000Z";
    let young = "y.jsonl.deleted.2026-07-19T00-00-00.000Z";
    plant(&d.join(reset), &transcript("r"), NOW);
    plant(&d.join(young), &transcript("y"), NOW - 90 * DAY);
    let plan = plan_of(&store, &MaintenanceConfig::default(), now());
    let report = apply_plan(
        &mut store,
        &plan,
        ApplyOptions {
            purge_archives: true,
        },
    )
    .unwrap();
    let outcomes: Vec<&FileOutcome> = report.files.iter().map(|f| &f.outcome).collect();
    assert_eq!(
        outcomes,
        [
            &FileOutcome::Renamed {
                to: d.join(format!("m.jsonl.deleted.{STAMP}"))
            },
            &FileOutcome::Deleted,
        ]
    );
    assert_eq!(
        session_test_support::dir_names(d),
        [
            format!("m.jsonl.deleted.{STAMP}"),
            "sessions-audit.log".to_owned(),
            "sessions.json".to_owned(),
            young.to_owned(),
        ]
    );
    assert_eq!(
        std::fs::read_to_string(d.join("sessions.json")).unwrap(),
        "{}"
    );
    let audit = std::fs::read_to_string(d.join("sessions-audit.log")).unwrap();
    let last = parse_value(audit.lines().last().unwrap().as_bytes()).unwrap();
    assert_eq!(
        last.get("action").unwrap().as_str_lossy().unwrap(),
        "delete"
    );
    assert_eq!(last.get("file").unwrap().as_str_lossy().unwrap(), reset);
    assert!(last.get("destination").unwrap().is_null());
    assert_eq!(
        last.get("reason").unwrap().as_str_lossy().unwrap(),
        "archive-retention"
    );
}

/// A removed row whose `sessionFile` a kept row also names (different `sessionId`s) keeps the
/// file; a removed row whose transcript is in another store's directory has it reported and
/// left alone; the rows are still removed.
#[test]
fn applying_leaves_shared_and_foreign_transcripts_alone() {
    let dir = session_test_support::tempdir();
    let d = dir.path().join("agents/main/sessions");
    std::fs::create_dir_all(&d).unwrap();
    let foreign_dir = dir.path().join("other/agents/main/sessions");
    std::fs::create_dir_all(&foreign_dir).unwrap();
    let foreign = foreign_dir.join("x.jsonl");
    plant(&foreign, &transcript("x"), NOW - DAY);
    let old = NOW - 40 * DAY;
    let json = format!(
        r#"{{
  "agent:main:a": {{"sessionId": "a", "sessionFile": "both.jsonl", "updatedAt": {old}}},
  "agent:main:b": {{"sessionId": "b", "sessionFile": "both.jsonl", "updatedAt": {}}},
  "agent:main:c": {{"sessionId": "c", "sessionFile": "{}", "updatedAt": {old}}}
}}"#,
        NOW - DAY,
        foreign.display()
    );
    let mut store = store_in(&d, &json);
    plant(&d.join("both.jsonl"), &transcript("a"), NOW - DAY);
    let plan = plan_of(&store, &MaintenanceConfig::default(), now());
    assert_eq!(
        plan.removed_rows
            .iter()
            .map(|r| (r.key.as_str(), r.shared_with.as_deref()))
            .collect::<Vec<_>>(),
        [
            ("agent:main:a", Some("agent:main:b")),
            ("agent:main:c", None)
        ]
    );
    assert_eq!(
        files(&plan),
        [("x.jsonl".to_owned(), "removed-row", Some("left alone"))]
    );
    let report = apply_plan(&mut store, &plan, ApplyOptions::default()).unwrap();
    assert_eq!(report.removed_keys, ["agent:main:a", "agent:main:c"]);
    assert_eq!(report.files.len(), 1);
    assert_eq!(report.files[0].planned.path, foreign);
    assert_eq!(
        report.files[0].outcome,
        FileOutcome::Skipped {
            reason: "outside the store's directory".to_owned()
        }
    );
    assert_eq!(
        session_test_support::dir_names(&d),
        ["both.jsonl", "sessions.json"]
    );
    assert_eq!(session_test_support::dir_names(&foreign_dir), ["x.jsonl"]);
    assert_eq!(std::fs::read(&foreign).unwrap(), transcript("x"));
}

/// A removed row's transcript that is a symlink out of the store refuses the run before the
/// store is written, as a held lock does.
#[test]
fn applying_with_a_transcript_linked_out_of_the_store_changes_nothing() {
    let dir = session_test_support::tempdir();
    let d = dir.path().join("sessions");
    std::fs::create_dir_all(&d).unwrap();
    let json = format!(
        r#"{{"agent:main:main": {{"sessionId": "m", "updatedAt": {}}}}}"#,
        NOW - 40 * DAY
    );
    let mut store = store_in(&d, &json);
    let outside = dir.path().join("elsewhere.jsonl");
    plant(&outside, &transcript("m"), NOW - DAY);
    std::os::unix::fs::symlink(&outside, d.join("m.jsonl")).unwrap();
    let plan = plan_of(&store, &MaintenanceConfig::default(), now());
    assert_eq!(removed(&plan), [("agent:main:main", RemovalReason::Stale)]);
    let err = apply_plan(&mut store, &plan, ApplyOptions::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{link} is in use ({link} links to {}, outside the store root {}; refusing to follow \
             the link for a write): nothing was changed; run cleanup again later",
            outside.display(),
            d.display(),
            link = d.join("m.jsonl").display()
        )
    );
    assert_eq!(
        std::fs::read_to_string(d.join("sessions.json")).unwrap(),
        json
    );
    assert_eq!(
        session_test_support::dir_names(&d),
        ["m.jsonl", "sessions.json"]
    );
}
