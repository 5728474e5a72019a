//! A running OpenClaw gateway is detected by its liveness lock (openclaw-store.md R2.32, §9
//! case 33): the lock path is `<tmp>/openclaw-<uid>/gateway.<sha256(configPath)[0..8]>.lock`
//! with the config path resolved as the reference does (R1.5); a lock naming a live pid with
//! its start time is a running gateway; a dead pid, a start-time mismatch, a live pid that is
//! not a gateway, and an unknown owner after 30 s are stale locks; no file is no gateway. The
//! reference's own `acquireGatewayLock` (run live when installed) writes the lock our path and
//! checks find.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.
// Tests plant lock files the way the gateway writes them.
#![allow(clippy::disallowed_methods)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use pretty_assertions::assert_eq;
use session_semantics::openclaw_store::gateway::{
    GatewayEnv, GatewayStatus, RunningEvidence, StaleLock, UNKNOWN_OWNER_GRACE_MS, detect_gateway,
    gateway_lock_location, gateway_lock_path, resolve_config_path,
};

fn uid_dir() -> String {
    // The test runs as some uid; the directory name carries it.
    let uid = std::fs::metadata("/proc/self").map(|m| {
        use std::os::unix::fs::MetadataExt;
        m.uid()
    });
    format!("openclaw-{}", uid.unwrap())
}

fn env_at(tmp: &Path) -> GatewayEnv {
    GatewayEnv::from_process()
        .with_tmp_dir(tmp)
        .with_config_path(None)
        .with_state_dir(None)
}

fn plant(path: &Path, payload: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, payload).unwrap();
}

fn now_ms() -> i64 {
    session_format::ids::now_ms()
}

fn iso(ms: i64) -> String {
    session_format::time::to_iso_string(ms).unwrap()
}

#[test]
fn lock_path_is_keyed_by_the_config_paths_sha256() {
    let tmp = session_test_support::tempdir();
    let env = env_at(tmp.path()).with_state_dir(Some("/nonexistent-state".to_owned()));
    let loc = gateway_lock_location(&env, Path::new("/nonexistent-state"));
    assert_eq!(
        loc.config_path,
        PathBuf::from("/nonexistent-state/openclaw.json")
    );
    // printf %s /nonexistent-state/openclaw.json | sha256sum → 0f83a712…
    assert_eq!(
        loc.lock_path,
        tmp.path().join(uid_dir()).join("gateway.0f83a712.lock")
    );
    // A trailing slash or `.` in TMPDIR does not change the name (path.join normalises).
    let dotted = env_at(&tmp.path().join("."));
    assert_eq!(gateway_lock_path(&dotted, &loc.config_path), loc.lock_path);
}

#[test]
fn config_path_follows_the_environment_then_existing_files() {
    let tmp = session_test_support::tempdir();
    let state = tmp.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let home = tmp.path().join("home");
    let env = env_at(tmp.path()).with_home(Some(home.clone()));
    // OPENCLAW_CONFIG_PATH wins, `~` expanded and `..` resolved.
    let explicit = env
        .clone()
        .with_config_path(Some("~/cfg/../my.json".to_owned()));
    assert_eq!(resolve_config_path(&explicit, &state), home.join("my.json"));
    // Nothing exists, the state dir is not the default: <state>/openclaw.json.
    assert_eq!(
        resolve_config_path(&env, &state),
        state.join("openclaw.json")
    );
    // Only the legacy name exists: it is the config.
    plant(&state.join("clawdbot.json"), "{}");
    assert_eq!(
        resolve_config_path(&env, &state),
        state.join("clawdbot.json")
    );
    // Both exist: the current name first.
    plant(&state.join("openclaw.json"), "{}");
    assert_eq!(
        resolve_config_path(&env, &state),
        state.join("openclaw.json")
    );
}

#[test]
fn own_pid_and_start_time_is_a_running_gateway() {
    let tmp = session_test_support::tempdir();
    let lock = tmp.path().join("openclaw-0/gateway.abcdef01.lock");
    let pid = std::process::id();
    let start = session_test_support::starttime(pid);
    plant(
        &lock,
        &format!(
            r#"{{"pid":{pid},"createdAt":"{}","configPath":"/c/openclaw.json","startTime":{start}}}"#,
            iso(now_ms() - 3_600_000)
        ),
    );
    // An hour-old lock still counts: the owner is confirmed, the 30 s rule does not apply.
    assert_eq!(
        detect_gateway(&lock, now_ms()),
        GatewayStatus::Running {
            lock_path: lock.clone(),
            pid: Some(pid),
            evidence: RunningEvidence::StartTimeMatches,
        }
    );
}

#[test]
fn dead_pid_and_start_time_mismatch_are_stale() {
    let tmp = session_test_support::tempdir();
    let lock = tmp.path().join("gateway.00000000.lock");
    let dead = session_test_support::dead_pid();
    plant(
        &lock,
        &format!(
            r#"{{"pid":{dead},"createdAt":"{}","configPath":"/c","startTime":5}}"#,
            iso(now_ms())
        ),
    );
    assert_eq!(
        detect_gateway(&lock, now_ms()),
        GatewayStatus::Stale {
            lock_path: lock.clone(),
            pid: Some(dead),
            reason: StaleLock::DeadPid,
        }
    );
    let pid = std::process::id();
    let start = session_test_support::starttime(pid);
    plant(
        &lock,
        &format!(
            r#"{{"pid":{pid},"createdAt":"{}","configPath":"/c","startTime":{}}}"#,
            iso(now_ms()),
            start + 1
        ),
    );
    assert_eq!(
        detect_gateway(&lock, now_ms()),
        GatewayStatus::Stale {
            lock_path: lock.clone(),
            pid: Some(pid),
            reason: StaleLock::StartTimeMismatch {
                recorded: (start + 1) as f64,
                current: start,
            },
        }
    );
}

#[test]
fn live_pid_without_start_time_is_judged_by_its_command_line() {
    let tmp = session_test_support::tempdir();
    let lock = tmp.path().join("gateway.00000000.lock");
    let pid = std::process::id();
    plant(
        &lock,
        &format!(
            r#"{{"pid":{pid},"createdAt":"{}","configPath":"/c"}}"#,
            iso(now_ms())
        ),
    );
    // The test binary's command line has no `gateway` argument.
    assert_eq!(
        detect_gateway(&lock, now_ms()),
        GatewayStatus::Stale {
            lock_path: lock.clone(),
            pid: Some(pid),
            reason: StaleLock::NotAGateway,
        }
    );
}

#[test]
fn unknown_owner_counts_for_30_seconds() {
    let tmp = session_test_support::tempdir();
    let lock = tmp.path().join("gateway.00000000.lock");
    assert_eq!(
        detect_gateway(&lock, now_ms()),
        GatewayStatus::NoLock {
            lock_path: lock.clone()
        }
    );
    // Half-written (not JSON): the owner is unknown; the file is new, so it is held.
    plant(&lock, r#"{"pid":12"#);
    let now = now_ms();
    assert_eq!(
        detect_gateway(&lock, now),
        GatewayStatus::Running {
            lock_path: lock.clone(),
            pid: None,
            evidence: RunningEvidence::RecentLockUnknownOwner,
        }
    );
    // 31 s later by the clock given, stale by the file's mtime.
    let later = now + UNKNOWN_OWNER_GRACE_MS + 1_000;
    match detect_gateway(&lock, later) {
        GatewayStatus::Stale {
            pid: None,
            reason: StaleLock::OldLockUnknownOwner { age_ms },
            ..
        } => assert!((31_000..=32_500).contains(&age_ms), "age {age_ms}"),
        other => panic!("expected a stale unknown-owner lock, got {other:?}"),
    }
    // pid 0 is an unknown owner too; its createdAt 40 s ago makes it stale at once.
    plant(
        &lock,
        &format!(
            r#"{{"pid":0,"createdAt":"{}","configPath":"/c"}}"#,
            iso(now - 40_000)
        ),
    );
    assert_eq!(
        detect_gateway(&lock, now),
        GatewayStatus::Stale {
            lock_path: lock.clone(),
            pid: None,
            reason: StaleLock::OldLockUnknownOwner { age_ms: 40_000 },
        }
    );
}

/// The reference takes its gateway lock (tests/data/gateway-lock/acquire.mjs) under a temp
/// TMPDIR and state dir: our computed lock path is the file it wrote, our check says running
/// with its pid while it holds it, stale once it died without releasing, and no lock after a
/// release.
#[test]
fn the_references_own_lock_is_found_and_judged() {
    let test = "the_references_own_lock_is_found_and_judged";
    let Some(oc) = session_test_support::OpenclawCli::find(test) else {
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/gateway-lock/acquire.mjs");
    let tmp = session_test_support::tempdir();
    let (tmpdir, state, home) = (
        tmp.path().join("tmp"),
        tmp.path().join("state"),
        tmp.path().join("home"),
    );
    for d in [&tmpdir, &state, &home] {
        std::fs::create_dir_all(d).unwrap();
    }
    let ours = gateway_lock_location(
        &env_at(&tmpdir).with_state_dir(Some(state.display().to_string())),
        &state,
    );
    for keep in [false, true] {
        let mut child = oc
            .node_command()
            .arg(&script)
            .arg(oc.dist_dir())
            .arg(if keep { "keep" } else { "release" })
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("TMPDIR", &tmpdir)
            .env("HOME", &home)
            .env("OPENCLAW_STATE_DIR", &state)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let reported: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("acquire.mjs printed {line:?}: {e}"));
        let node_pid = u32::try_from(reported["pid"].as_u64().unwrap()).unwrap();
        assert_eq!(
            reported["lockPath"].as_str().unwrap(),
            ours.lock_path.to_str().unwrap()
        );
        assert_eq!(
            reported["configPath"].as_str().unwrap(),
            ours.config_path.to_str().unwrap()
        );
        assert_eq!(
            detect_gateway(&ours.lock_path, now_ms()),
            GatewayStatus::Running {
                lock_path: ours.lock_path.clone(),
                pid: Some(node_pid),
                evidence: RunningEvidence::StartTimeMatches,
            }
        );
        child.stdin.take().unwrap().write_all(b"").unwrap();
        assert!(child.wait().unwrap().success());
        let after = detect_gateway(&ours.lock_path, now_ms());
        if keep {
            assert_eq!(
                after,
                GatewayStatus::Stale {
                    lock_path: ours.lock_path.clone(),
                    pid: Some(node_pid),
                    reason: StaleLock::DeadPid,
                }
            );
            std::fs::remove_file(&ours.lock_path).unwrap();
        } else {
            assert_eq!(
                after,
                GatewayStatus::NoLock {
                    lock_path: ours.lock_path.clone()
                }
            );
        }
    }
}

/// A gateway started with the default config is found while this shell's
/// `OPENCLAW_CONFIG_PATH` names another file: every `gateway.*.lock` whose payload's
/// `configPath` lies in the state dir (or is the resolved config) is a candidate; a lock of
/// another state dir is not.
#[test]
fn locks_of_other_config_paths_in_the_state_dir_are_candidates() {
    use session_semantics::openclaw_store::gateway::gateway_lock_candidates;
    let tmp = session_test_support::tempdir();
    let state = tmp.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let env = env_at(tmp.path())
        .with_state_dir(Some(state.display().to_string()))
        .with_config_path(Some(
            tmp.path().join("elsewhere.json").display().to_string(),
        ));
    let own = gateway_lock_location(&env, &state);
    assert_eq!(own.config_path, tmp.path().join("elsewhere.json"));
    let lock_dir = tmp.path().join(uid_dir());
    let pid = std::process::id();
    let start = session_test_support::starttime(pid);
    let payload = |config: &Path| {
        format!(
            r#"{{"pid":{pid},"createdAt":"{}","configPath":"{}","startTime":{start}}}"#,
            iso(now_ms()),
            config.display()
        )
    };
    let default_lock = gateway_lock_path(&env, &state.join("openclaw.json"));
    plant(&default_lock, &payload(&state.join("openclaw.json")));
    let foreign_lock = lock_dir.join("gateway.00000000.lock");
    plant(
        &foreign_lock,
        &payload(&tmp.path().join("other/openclaw.json")),
    );
    plant(&lock_dir.join("notes.txt"), "x");

    let found = gateway_lock_candidates(&env, &state);
    assert_eq!(
        found
            .iter()
            .map(|l| (l.lock_path.clone(), l.config_path.clone()))
            .collect::<Vec<_>>(),
        [
            (own.lock_path.clone(), own.config_path.clone()),
            (default_lock.clone(), state.join("openclaw.json")),
        ]
    );
    assert_eq!(
        detect_gateway(&own.lock_path, now_ms()),
        GatewayStatus::NoLock {
            lock_path: own.lock_path.clone()
        }
    );
    assert_eq!(
        detect_gateway(&found[1].lock_path, now_ms()),
        GatewayStatus::Running {
            lock_path: default_lock,
            pid: Some(pid),
            evidence: RunningEvidence::StartTimeMatches,
        }
    );
}
