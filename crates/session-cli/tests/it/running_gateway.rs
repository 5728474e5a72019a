//! A running OpenClaw gateway owns `sessions.json` (openclaw-store.md R2.28, R2.32, J7.1, §9
//! case 33): while its liveness lock names a live process (pid alive, same start time), every
//! command that would write an OpenClaw store (`archive --session`, `clear --session`,
//! `cleanup`) refuses before touching anything, naming the pid and the lock; `--dry-run` still
//! works; `--offline-ok` (the user stopped the gateway) lets the write go on; a lock whose pid
//! is dead does not stop it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::{Path, PathBuf};

use session_semantics::openclaw_store::gateway::{GatewayEnv, gateway_lock_location};

use crate::support::*;

const AT: &str = "2026-06-12T13:00:00Z";
const CRON_KEY: &str = "agent:main:cron:daily-digest:run:run-0001";
const TOPIC_KEY: &str = "agent:main:telegram:group:-1001234567890:topic:42";

/// A fixture copy as a state dir, a private TMPDIR, and the gateway lock path for them.
struct Setup {
    _dir: tempfile::TempDir,
    state: PathBuf,
    tmp: PathBuf,
    lock: PathBuf,
}

fn setup(test: &str) -> Option<Setup> {
    let shared = shared_dir(test)?;
    let dir = tempdir();
    let state = dir.path().join("state");
    session_test_support::openclaw_fixture_copy(&shared, &state);
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    // The environment `sessions` runs in (see `run`): no config path, no state dir variable,
    // the tests' HOME, this TMPDIR.
    let env = GatewayEnv::from_process()
        .with_tmp_dir(&tmp)
        .with_config_path(None)
        .with_state_dir(None)
        .with_home(Some(PathBuf::from("/nonexistent-home-for-tests")));
    let lock = gateway_lock_location(&env, &state).lock_path;
    Some(Setup {
        _dir: dir,
        state,
        tmp,
        lock,
    })
}

/// Plants the lock a gateway with `pid` (and `start_time`) holds, compact JSON as the
/// gateway writes it.
fn plant_gateway_lock(s: &Setup, pid: u32, start_time: Option<u64>) {
    let mut payload = format!(
        "{{\"pid\":{pid},\"createdAt\":\"{}\",\"configPath\":\"{}\"",
        now_iso(),
        s.state.join("openclaw.json").display()
    );
    if let Some(t) = start_time {
        payload.push_str(&format!(",\"startTime\":{t}"));
    }
    payload.push('}');
    plant(&s.lock, payload.as_bytes());
}

fn run(s: &Setup, args: &[&str]) -> Run {
    let mut c = cmd();
    c.current_dir(&s.state)
        .env("TMPDIR", &s.tmp)
        .env_remove("OPENCLAW_CONFIG_PATH")
        .env_remove("OPENCLAW_HOME")
        .arg("--now")
        .arg(AT)
        .args(args)
        .args(["--root", "."]);
    run_command_timeout(c, 60)
}

fn sessions_dir(s: &Setup) -> PathBuf {
    s.state.join("agents/main/sessions")
}

fn refusal(s: &Setup) -> String {
    let lock = s.lock.display();
    let config = s.state.join("openclaw.json");
    format!(
        "error: an OpenClaw gateway is running (pid {}): lock {lock} (the pid is alive with the \
         start time the lock records; config {}). The gateway owns sessions.json while it runs, \
         so nothing was written. Stop the gateway (or let its own `openclaw sessions cleanup` \
         do this), then run again with --offline-ok; --offline-ok is only for a gateway that is \
         stopped. --dry-run always works and writes nothing.\n",
        std::process::id(),
        config.display()
    )
}

fn write_commands() -> [Vec<&'static str>; 3] {
    [
        vec!["archive", "--agent", "main", "--session", CRON_KEY],
        vec!["clear", "--agent", "main", "--session", TOPIC_KEY, "--yes"],
        vec!["cleanup", "--agent", "main", "--fix-missing"],
    ]
}

#[test]
fn a_live_gateway_lock_refuses_every_store_write_and_changes_nothing() {
    let Some(s) = setup("a_live_gateway_lock_refuses_every_store_write_and_changes_nothing") else {
        return;
    };
    plant_gateway_lock(&s, std::process::id(), Some(own_starttime()));
    let before = contents(&sessions_dir(&s));
    for args in write_commands() {
        let r = run(&s, &args);
        assert_eq!(
            (r.code, r.stdout.as_str(), r.stderr.as_str()),
            (2, "", refusal(&s).as_str()),
            "{args:?}"
        );
        assert_eq!(contents(&sessions_dir(&s)), before, "{args:?} wrote");
        // The dry run of the same command works and writes nothing (exit 1: it has changes
        // to show).
        let mut dry = args.clone();
        dry.retain(|a| *a != "--yes");
        dry.push("--dry-run");
        let r = run(&s, &dry);
        assert_eq!(
            (r.code, r.stderr.as_str()),
            (1, ""),
            "{dry:?}: {}",
            r.stdout
        );
        assert!(r.stdout.contains("would"), "{dry:?}: {}", r.stdout);
        assert_eq!(contents(&sessions_dir(&s)), before, "{dry:?} wrote");
    }
}

#[test]
fn offline_ok_or_a_dead_gateway_lets_the_write_go_on() {
    let Some(s) = setup("offline_ok_or_a_dead_gateway_lets_the_write_go_on") else {
        return;
    };
    let store = sessions_dir(&s).join("sessions.json");
    plant_gateway_lock(&s, std::process::id(), Some(own_starttime()));
    let r = run(
        &s,
        &[
            "--offline-ok",
            "archive",
            "--agent",
            "main",
            "--session",
            CRON_KEY,
            "--json",
        ],
    );
    assert_eq!((r.code, r.stderr.as_str()), (1, ""), "{}", r.stdout);
    let text = String::from_utf8(session_store::io::read_file(&store).unwrap()).unwrap();
    assert!(!text.contains(CRON_KEY), "{text}");

    // A lock left by a gateway that died does not stop a write, and is left in place.
    plant_gateway_lock(&s, session_test_support::dead_pid(), None);
    let r = run(
        &s,
        &[
            "clear",
            "--agent",
            "main",
            "--session",
            TOPIC_KEY,
            "--yes",
            "--json",
        ],
    );
    assert_eq!((r.code, r.stderr.as_str()), (1, ""), "{}", r.stdout);
    assert!(Path::new(&s.lock).is_file());
}

/// A gateway started with the state dir's default config is seen while this shell's
/// `OPENCLAW_CONFIG_PATH` names another file (whose own lock does not exist).
#[test]
fn a_gateway_on_the_default_config_is_seen_under_another_config_path() {
    let Some(s) = setup("a_gateway_on_the_default_config_is_seen_under_another_config_path") else {
        return;
    };
    plant_gateway_lock(&s, std::process::id(), Some(own_starttime()));
    let before = contents(&sessions_dir(&s));
    let mut c = cmd();
    c.current_dir(&s.state)
        .env("TMPDIR", &s.tmp)
        .env("OPENCLAW_CONFIG_PATH", s.tmp.join("elsewhere.json"))
        .env_remove("OPENCLAW_HOME")
        .args([
            "--now",
            AT,
            "archive",
            "--agent",
            "main",
            "--session",
            CRON_KEY,
        ])
        .args(["--root", "."]);
    let r = run_command_timeout(c, 60);
    assert_eq!((r.code, r.stdout.as_str()), (2, ""));
    assert_eq!(r.stderr, refusal(&s));
    assert_eq!(contents(&sessions_dir(&s)), before);
}
