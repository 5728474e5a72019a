//! `sessions cleanup` on a copy of the reference-made OpenClaw store (openclaw-store.md §4.6,
//! §9 cases 30–32): its `--dry-run --json` equals what `openclaw sessions cleanup --dry-run
//! --json` printed for the fixture at both clocks (with and without `--fix-missing`) and writes
//! nothing; the applied late run selects what the reference's `--enforce` run selected, but
//! archives instead of deleting (docs/DEVIATIONS.md D38): `sessions.json` keeps exactly the
//! group and topic rows, the main and cron transcripts and the orphan become
//! `.deleted.2026-07-20T13-00-00.000Z`, the expired `.reset.` archive is kept, every other file
//! keeps its bytes and mtime, and the real OpenClaw CLI then lists the two keys and finds
//! nothing missing. A corrupt `sessions.json` is refused and left byte-identical.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::Path;
use std::time::SystemTime;

use serde_json::{Value, json};

use crate::support::*;

const EARLY: &str = "2026-06-12T13:00:00Z";
const LATE: &str = "2026-07-20T13:00:00Z";
const STAMP: &str = "2026-07-20T13-00-00.000Z";
const MAIN: &str = "00000026-0000-4000-8000-0c6110000000";
const CRON: &str = "0000001a-0000-4000-8000-0c6110000000";
const ORPHAN: &str = "00000021-0000-4000-8000-0c6110000000";
const GROUP_KEY: &str = "agent:main:telegram:group:-1001234567890";
const TOPIC_KEY: &str = "agent:main:telegram:group:-1001234567890:topic:42";

/// Every regular file under `dir` with its bytes and mtime.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>, SystemTime)> {
    contents(dir)
        .into_iter()
        .map(|(rel, bytes)| {
            let mtime = std::fs::metadata(dir.join(&rel))
                .unwrap()
                .modified()
                .unwrap();
            (rel, bytes, mtime)
        })
        .collect()
}

/// A saved reference output with `$STATE_DIR` replaced by `state`.
fn expected(shared: &Path, name: &str, state: &Path) -> Value {
    let text =
        std::fs::read_to_string(shared.join("fixtures/openclaw-6.11-store").join(name)).unwrap();
    serde_json::from_str(&text.replace("$STATE_DIR", &state.display().to_string())).unwrap()
}

fn cleanup(state: &Path, now: &str, extra: &[&str]) -> Run {
    let root = state.display().to_string();
    let mut args = vec!["--now", now, "cleanup", "--root", root.as_str()];
    args.extend_from_slice(extra);
    run_in_timeout(state, &args)
}

#[test]
fn dry_run_json_equals_the_references_and_writes_nothing() {
    let Some(shared) = shared_dir("dry_run_json_equals_the_references_and_writes_nothing") else {
        return;
    };
    let dir = tempdir();
    let state = dir.path();
    session_test_support::openclaw_fixture_copy(&shared, state);
    let before = (listing(state), snapshot(state));
    for (now, extra, file, code) in [
        (EARLY, &[][..], "expected-cleanup-dry-run.json", 0),
        (
            EARLY,
            &["--fix-missing"][..],
            "expected-cleanup-dry-run-fix-missing.json",
            1,
        ),
        (LATE, &[][..], "expected-cleanup-dry-run-late.json", 1),
    ] {
        let mut args = vec!["--dry-run", "--json"];
        args.extend_from_slice(extra);
        let r = cleanup(state, now, &args);
        assert_eq!((r.code, r.stderr.as_str()), (code, ""), "{file}");
        let got: Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(got, expected(&shared, file, state), "{file}");
        // The same through --store and --all-agents (one agent: one summary).
        let store = state
            .join("agents/main/sessions/sessions.json")
            .display()
            .to_string();
        for addressing in [vec!["--store", store.as_str()], vec!["--all-agents"]] {
            let mut args = args.clone();
            args.extend(addressing);
            let r = cleanup(state, now, &args);
            assert_eq!(r.code, code, "{file} {args:?}: {}", r.stderr);
            let got: Value = serde_json::from_str(&r.stdout).unwrap();
            assert_eq!(got, expected(&shared, file, state), "{file} {args:?}");
        }
    }
    // Text: one action a row, then the counts and what would happen to each file.
    let r = cleanup(state, LATE, &["--dry-run"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().skip(1).collect();
    assert_eq!(
        lines[..6],
        [
            "  prune-stale    agent:main:main",
            &format!("  keep           {GROUP_KEY}"),
            &format!("  keep           {TOPIC_KEY}"),
            "  prune-stale    agent:main:cron:daily-digest:run:run-0001",
            "  prune-stale    agent:main:subagent:research-1",
            "Would prune missing transcripts: 0; would prune stale: 3; would cap overflow: 0; \
             unreferenced files: 1 (767 bytes)",
        ]
    );
    assert_eq!(
        lines[6..],
        [
            format!("  would rename {MAIN}.jsonl -> {MAIN}.jsonl.deleted.{STAMP} (removed-row)"),
            format!("  would rename {CRON}.jsonl -> {CRON}.jsonl.deleted.{STAMP} (removed-row)"),
            format!("  would rename {ORPHAN}.jsonl -> {ORPHAN}.jsonl.deleted.{STAMP} (unreferenced)"),
            "  would keep 00000001-0000-4000-8000-0c6110000000.jsonl.reset.2026-06-12T09-00-00.000Z \
             (archive-retention; OpenClaw would delete it)"
                .to_owned(),
        ]
    );
    assert_eq!(
        (listing(state), snapshot(state)),
        before,
        "a dry run wrote something"
    );
}

#[test]
fn applied_late_cleanup_archives_what_the_reference_deletes() {
    let test = "applied_late_cleanup_archives_what_the_reference_deletes";
    let Some(shared) = shared_dir(test) else {
        return;
    };
    let dir = tempdir();
    let state = dir.path();
    let sessions = session_test_support::openclaw_fixture_copy(&shared, state);
    let before = snapshot(&sessions);
    let store = sessions.join("sessions.json").display().to_string();
    let r = cleanup(
        state,
        LATE,
        &["--store", store.as_str(), "--enforce", "--json"],
    );
    assert_eq!((r.code, r.stderr.as_str()), (1, ""));
    let got: Value = serde_json::from_str(&r.stdout).unwrap();
    // The reference's selection and counts, except `scannedFiles`: the reference had deleted
    // the expired reset archive before its sweep (6 files), this run keeps it (7).
    let mut reference = expected(&shared, "expected-cleanup-enforce-late.json", state);
    reference["unreferencedArtifacts"]["scannedFiles"] = json!(7);
    let mut ours = got.clone();
    for k in [
        "storeRewritten",
        "removedKeys",
        "files",
        "auditLog",
        "staleLocksRemoved",
        "loadChanges",
    ] {
        ours.as_object_mut().unwrap().remove(k);
    }
    assert_eq!(ours, reference);
    assert_eq!(
        (&got["staleLocksRemoved"], &got["loadChanges"]),
        (&json!([]), &json!([]))
    );
    let deleted = |id: &str| format!("{id}.jsonl.deleted.{STAMP}");
    let reset = "00000001-0000-4000-8000-0c6110000000.jsonl.reset.2026-06-12T09-00-00.000Z";
    assert_eq!(got["storeRewritten"], json!(true));
    assert_eq!(
        got["removedKeys"],
        json!([
            "agent:main:main",
            "agent:main:cron:daily-digest:run:run-0001",
            "agent:main:subagent:research-1"
        ])
    );
    assert_eq!(
        got["files"],
        json!([
            {"file": format!("{MAIN}.jsonl"), "reason": "removed-row", "key": "agent:main:main",
             "outcome": "renamed", "to": deleted(MAIN)},
            {"file": format!("{CRON}.jsonl"), "reason": "removed-row",
             "key": "agent:main:cron:daily-digest:run:run-0001", "outcome": "renamed", "to": deleted(CRON)},
            {"file": format!("{ORPHAN}.jsonl"), "reason": "unreferenced", "outcome": "renamed",
             "to": deleted(ORPHAN)},
            {"file": reset, "reason": "archive-retention", "outcome": "kept"},
        ])
    );
    assert_eq!(
        got["auditLog"],
        json!(sessions.join("sessions-audit.log").display().to_string())
    );
    assert_eq!(
        dir_names(&sessions),
        [
            reset.to_owned(),
            "0000000a-0000-4000-8000-0c6110000000.jsonl".to_owned(),
            "00000013-0000-4000-8000-0c6110000000-topic-42.jsonl".to_owned(),
            deleted(CRON),
            deleted(ORPHAN),
            deleted(MAIN),
            "sessions-audit.log".to_owned(),
            "sessions.json".to_owned(),
        ]
    );
    // sessions.json: exactly the reference's after-state (the two rows, every field kept).
    let after: Value =
        serde_json::from_slice(&std::fs::read(sessions.join("sessions.json")).unwrap()).unwrap();
    assert_eq!(
        after,
        expected(&shared, "expected-cleanup-enforce-late-after.json", state)["sessionsJson"]
    );
    let text = std::fs::read_to_string(sessions.join("sessions.json")).unwrap();
    assert!(
        text.starts_with(&format!("{{\n  \"{GROUP_KEY}\": {{\n")) && text.ends_with("\n}"),
        "{text}"
    );
    // Every other file: the same bytes and mtime, renamed or not.
    let now = snapshot(&sessions);
    for (rel, bytes, mtime) in &before {
        if rel == "sessions.json" {
            continue;
        }
        let renamed = [MAIN, CRON, ORPHAN]
            .iter()
            .find(|id| rel == &format!("{id}.jsonl"))
            .map_or_else(|| rel.clone(), |id| deleted(id));
        let found = now
            .iter()
            .find(|(r, _, _)| *r == renamed)
            .unwrap_or_else(|| panic!("{renamed} is gone"));
        assert_eq!((&found.1, &found.2), (bytes, mtime), "{rel}");
    }
    // The audit log: one rename line per renamed file.
    let audit = std::fs::read_to_string(sessions.join("sessions-audit.log")).unwrap();
    let lines: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let summary: Vec<(&str, &str, &str, &str)> = lines
        .iter()
        .map(|l| {
            (
                l["action"].as_str().unwrap(),
                l["file"].as_str().unwrap(),
                l["destination"].as_str().unwrap(),
                l["reason"].as_str().unwrap(),
            )
        })
        .collect();
    let (m, c, o) = (
        format!("{MAIN}.jsonl"),
        format!("{CRON}.jsonl"),
        format!("{ORPHAN}.jsonl"),
    );
    let (dm, dc, dor) = (deleted(MAIN), deleted(CRON), deleted(ORPHAN));
    assert_eq!(
        summary,
        [
            ("rename", m.as_str(), dm.as_str(), "prune-stale"),
            ("rename", c.as_str(), dc.as_str(), "prune-stale"),
            ("rename", o.as_str(), dor.as_str(), "unreferenced"),
        ]
    );

    // A second run finds nothing left to do.
    let r = cleanup(state, LATE, &["--json"]);
    assert_eq!(r.code, 0, "{}", r.stdout);

    // The real OpenClaw on the result: the two keys, nothing missing.
    let Some(openclaw) = session_test_support::OpenclawCli::find(test) else {
        return;
    };
    let listed: Value = openclaw.run_ok(state, &["sessions", "--json"], Some(LATE), |out| {
        serde_json::from_slice(out).unwrap()
    });
    let keys: Vec<&str> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, [TOPIC_KEY, GROUP_KEY]);
    let check: Value = openclaw.run_ok(
        state,
        &[
            "sessions",
            "cleanup",
            "--dry-run",
            "--fix-missing",
            "--json",
        ],
        Some(LATE),
        |out| serde_json::from_slice(out).unwrap(),
    );
    assert_eq!(
        (
            &check["missing"],
            &check["beforeCount"],
            &check["afterCount"]
        ),
        (&json!(0), &json!(2), &json!(2))
    );
}

#[test]
fn a_corrupt_store_is_refused_and_left_as_it_is() {
    let dir = tempdir();
    let sessions = dir.path().join("agents/main/sessions");
    plant(
        &sessions.join("sessions.json"),
        b"{\"agent:main:main\": {\"sessionId\": ",
    );
    plant(&sessions.join("s.jsonl"), &small_session());
    let before = (listing(dir.path()), snapshot(dir.path()));
    for extra in [
        &["--dry-run"][..],
        &[][..],
        &["--json", "--fix-missing"][..],
    ] {
        let r = cleanup(dir.path(), LATE, extra);
        assert_eq!(r.code, 2, "{extra:?}: {}", r.stdout);
        let store = sessions.join("sessions.json");
        assert!(
            r.stderr.contains(&format!(
                "session store {} is not valid JSON",
                store.display()
            )),
            "{extra:?}: {}",
            r.stderr
        );
        assert_eq!(r.stdout, "", "{extra:?}");
        assert_eq!(
            (listing(dir.path()), snapshot(dir.path())),
            before,
            "{extra:?}"
        );
    }
}

#[test]
fn addressing_flags_that_exclude_each_other_are_usage_errors() {
    let dir = tempdir();
    for (args, msg) in [
        (
            vec!["--store", "x.json", "--agent", "main"],
            "--store cannot be combined with --agent or --all-agents",
        ),
        (
            vec!["--agent", "main", "--all-agents"],
            "--agent and --all-agents cannot be used together",
        ),
    ] {
        let r = cleanup(dir.path(), LATE, &args);
        assert_eq!(r.code, 2, "{args:?}");
        assert!(r.stderr.contains(msg), "{args:?}: {}", r.stderr);
    }
    assert_eq!(listing(dir.path()), Vec::<String>::new());
    // No agents/ under the root, and an agent that is not there.
    let r = cleanup(dir.path(), LATE, &["--dry-run"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no OpenClaw store at"), "{}", r.stderr);
    plant(
        &dir.path().join("agents/main/sessions/sessions.json"),
        b"{}",
    );
    let r = cleanup(dir.path(), LATE, &["--dry-run", "--agent", "ops"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains(&format!(
            "Unknown agent id \"ops\": {}/agents has agents main",
            dir.path().display()
        )),
        "{}",
        r.stderr
    );
}

/// With `--purge-archives` the late run leaves the directory the reference's `--enforce` run
/// left, except that the orphan is renamed, not deleted, and the audit log.
#[test]
fn purging_archives_leaves_the_references_directory_but_the_orphan() {
    let Some(shared) =
        shared_dir("purging_archives_leaves_the_references_directory_but_the_orphan")
    else {
        return;
    };
    let dir = tempdir();
    let state = dir.path();
    let sessions = session_test_support::openclaw_fixture_copy(&shared, state);
    let r = cleanup(state, LATE, &["--purge-archives", "--json"]);
    assert_eq!((r.code, r.stderr.as_str()), (1, ""));
    let got: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        got["files"][3],
        json!({"file": "00000001-0000-4000-8000-0c6110000000.jsonl.reset.2026-06-12T09-00-00.000Z",
               "reason": "archive-retention", "outcome": "deleted"})
    );
    let reference = expected(&shared, "expected-cleanup-enforce-late-after.json", state);
    let mut want: Vec<String> = reference["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_owned())
        .collect();
    want.push(format!("{ORPHAN}.jsonl.deleted.{STAMP}"));
    want.push("sessions-audit.log".to_owned());
    want.sort();
    assert_eq!(dir_names(&sessions), want);
}

/// `session.maintenance` from `<root>/openclaw.json`: warn mode, another pruneAfter, a small
/// maxEntries and a disk budget give the summary the real OpenClaw prints for the same
/// config and clock (checked live, skipped without the reference).
#[test]
fn configured_maintenance_matches_the_reference() {
    let test = "configured_maintenance_matches_the_reference";
    let (Some(shared), Some(openclaw)) = (
        shared_dir(test),
        session_test_support::OpenclawCli::find(test),
    ) else {
        return;
    };
    for (config, now, extra) in [
        (
            r#"{"session":{"maintenance":{"mode":"warn","pruneAfter":"35d","maxEntries":3}}}"#,
            LATE,
            &[][..],
        ),
        (
            r#"{"session":{"maintenance":{"maxEntries":1,"maxDiskBytes":5000,"pruneAfter":"90d"}}}"#,
            EARLY,
            &["--active-key", "agent:main:main"][..],
        ),
        (
            r#"{"session":{"maintenance":{"maxEntries":2,"maxDiskBytes":3000}}}"#,
            EARLY,
            &["--fix-missing"][..],
        ),
    ] {
        let dir = tempdir();
        let state = dir.path();
        session_test_support::openclaw_fixture_copy(&shared, state);
        plant(&state.join("openclaw.json"), config.as_bytes());
        let mut args = vec!["sessions", "cleanup", "--dry-run", "--json"];
        args.extend_from_slice(extra);
        let reference: Value = openclaw.run_ok(state, &args, Some(now), |out| {
            serde_json::from_slice(out).unwrap()
        });
        let r = cleanup(state, now, &args[2..]);
        assert_eq!(r.code, 1, "{config}: {}", r.stderr);
        let ours: Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(ours, reference, "{config} {extra:?}");
    }
}

/// In warn mode a run removes nothing (without --fix-missing) and writes nothing; --enforce
/// applies the same selection.
#[test]
fn warn_mode_changes_nothing_unless_enforced() {
    let Some(shared) = shared_dir("warn_mode_changes_nothing_unless_enforced") else {
        return;
    };
    let dir = tempdir();
    let state = dir.path();
    let sessions = session_test_support::openclaw_fixture_copy(&shared, state);
    plant(
        &state.join("openclaw.json"),
        br#"{"session":{"maintenance":{"mode":"warn"}}}"#,
    );
    let before = (listing(state), snapshot(state));
    let r = cleanup(state, LATE, &["--json"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    let got: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        (
            &got["mode"],
            &got["pruned"],
            &got["storeRewritten"],
            &got["files"],
            &got["appliedCount"]
        ),
        (
            &json!("warn"),
            &json!(0),
            &json!(false),
            &json!([]),
            &json!(5)
        )
    );
    assert_eq!(
        (
            &got["afterCount"],
            &got["wouldMutate"],
            &got["unreferencedArtifacts"]["removedFiles"]
        ),
        (&json!(5), &json!(false), &json!(0))
    );
    assert_eq!((listing(state), snapshot(state)), before);
    let r = cleanup(state, LATE, &["--enforce", "--json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let got: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        (&got["mode"], &got["appliedCount"]),
        (&json!("enforce"), &json!(2))
    );
    assert!(
        sessions
            .join(format!("{MAIN}.jsonl.deleted.{STAMP}"))
            .is_file()
    );
}

/// An applied cleanup keeps a transcript a kept row names by `sessionFile`, lists a removed
/// row's transcript in another store as left alone, and reports the stale lock it removed and
/// the non-object row the write drops (as the reference drops it at load).
#[test]
fn applied_cleanup_reports_shared_foreign_stale_lock_and_dropped_rows() {
    let dir = tempdir();
    let state = dir.path();
    let sessions = state.join("agents/main/sessions");
    let foreign_dir = state.join("other/agents/main/sessions");
    let foreign = foreign_dir.join("x.jsonl");
    plant(&foreign, &small_session());
    let old = 1_781_096_400_000_i64; // LATE - 40 days
    let fresh = 1_784_466_000_000_i64; // LATE - 1 day
    let store = format!(
        "{{\n  \"agent:main:junk\": 5,\n  \"agent:main:a\": {{\n    \"sessionId\": \"a\",\n    \"sessionFile\": \"both.jsonl\",\n    \"updatedAt\": {old}\n  }},\n  \"agent:main:b\": {{\n    \"sessionId\": \"b\",\n    \"sessionFile\": \"both.jsonl\",\n    \"updatedAt\": {fresh}\n  }},\n  \"agent:main:c\": {{\n    \"sessionId\": \"c\",\n    \"sessionFile\": \"{}\",\n    \"updatedAt\": {old}\n  }},\n  \"agent:main:d\": {{\n    \"sessionId\": \"d\",\n    \"updatedAt\": {old}\n  }}\n}}",
        foreign.display()
    );
    plant(&sessions.join("sessions.json"), store.as_bytes());
    plant(&sessions.join("both.jsonl"), &small_session());
    plant(&sessions.join("d.jsonl"), &small_session());
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    plant(
        &sessions.join("d.jsonl.lock"),
        format!("{{\n  \"pid\": {pid},\n  \"createdAt\": \"2026-07-20T12:00:00.000Z\"\n}}\n")
            .as_bytes(),
    );
    let r = cleanup(state, LATE, &["--json"]);
    assert_eq!((r.code, r.stderr.as_str()), (1, ""), "{}", r.stdout);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let v = if v.is_array() { v[0].clone() } else { v };
    assert_eq!(
        v["removedKeys"],
        json!(["agent:main:a", "agent:main:c", "agent:main:d"])
    );
    assert_eq!(
        v["files"],
        json!([
            {"file": "x.jsonl", "reason": "removed-row", "key": "agent:main:c",
             "outcome": "skipped", "note": "outside the store's directory"},
            {"file": "d.jsonl", "reason": "removed-row", "key": "agent:main:d",
             "outcome": "renamed", "to": format!("d.jsonl.deleted.{STAMP}")},
        ])
    );
    let canonical = std::fs::canonicalize(&sessions).unwrap();
    assert_eq!(
        v["staleLocksRemoved"],
        json!([canonical.join("d.jsonl.lock").to_string_lossy()])
    );
    assert_eq!(
        v["loadChanges"],
        json!([{"change": "dropped-entry", "key": "agent:main:junk"}])
    );
    assert_eq!(
        dir_names(&sessions),
        vec![
            "both.jsonl".to_owned(),
            format!("d.jsonl.deleted.{STAMP}"),
            "sessions-audit.log".to_owned(),
            "sessions.json".to_owned(),
        ]
    );
    assert_eq!(dir_names(&foreign_dir), vec!["x.jsonl".to_owned()]);
    assert_eq!(std::fs::read(&foreign).unwrap(), small_session());
}

/// An applied `--fix-missing` run counts `beforeCount` as the reference's applied summary
/// does: after the missing rows are removed (its save's maintenance report), here 5 rows − 1
/// missing = 4, with the same counts as `openclaw sessions cleanup --enforce --fix-missing
/// --store … --json` on another copy at the same clock.
#[test]
fn applied_fix_missing_counts_rows_as_the_references_applied_summary() {
    let test = "applied_fix_missing_counts_rows_as_the_references_applied_summary";
    let Some(shared) = shared_dir(test) else {
        return;
    };
    const AUGUST: &str = "2026-08-20T13:00:00Z";
    let counts = |v: &Value| {
        [
            "beforeCount",
            "afterCount",
            "missing",
            "pruned",
            "capped",
            "wouldMutate",
            "appliedCount",
        ]
        .map(|k| (k, v[k].clone()))
    };
    let dir = tempdir();
    let state = dir.path();
    let sessions = session_test_support::openclaw_fixture_copy(&shared, state);
    let store = sessions.join("sessions.json").display().to_string();
    let r = cleanup(
        state,
        AUGUST,
        &[
            "--store",
            store.as_str(),
            "--enforce",
            "--fix-missing",
            "--json",
        ],
    );
    assert_eq!((r.code, r.stderr.as_str()), (1, ""));
    let ours: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        counts(&ours),
        [
            ("beforeCount", json!(4)),
            ("afterCount", json!(2)),
            ("missing", json!(1)),
            ("pruned", json!(2)),
            ("capped", json!(0)),
            ("wouldMutate", json!(true)),
            ("appliedCount", json!(2)),
        ]
    );
    let Some(openclaw) = session_test_support::OpenclawCli::find(test) else {
        return;
    };
    let theirs_dir = tempdir();
    let theirs_sessions = session_test_support::openclaw_fixture_copy(&shared, theirs_dir.path());
    let theirs_store = theirs_sessions.join("sessions.json").display().to_string();
    let theirs: Value = openclaw.run_ok(
        theirs_dir.path(),
        &[
            "sessions",
            "cleanup",
            "--enforce",
            "--fix-missing",
            "--store",
            theirs_store.as_str(),
            "--json",
        ],
        Some(AUGUST),
        |out| serde_json::from_slice(out).unwrap(),
    );
    assert_eq!(counts(&ours), counts(&theirs));
}
