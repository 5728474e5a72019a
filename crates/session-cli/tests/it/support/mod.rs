//! Shared helpers for the `sessions` binary tests: running the binary, fixtures, planting files
//! (through `session_store::io`), fingerprints for the read-only checks, and output redaction.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

pub mod serve;

use serde_json::Value;

pub mod browser;
#[allow(unused_imports)] // Every test binary including this module uses a part of it.
pub use session_test_support::{dead_pid, dir_names, listing, shared_dir, starttime, tempdir};
use sha2::{Digest, Sha256};

/// What a run of the binary produced.
#[derive(Debug)]
pub struct Run {
    /// Exit code.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// The `sessions` binary with a clean environment: no `OPENCLAW_STATE_DIR`, `HOME` pointing
/// nowhere useful, no colours.
pub fn cmd() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sessions"));
    c.env_remove("OPENCLAW_STATE_DIR")
        .env_remove("OPENCLAW_AGENT_DIR")
        .env("HOME", "/nonexistent-home-for-tests")
        .env("NO_COLOR", "1");
    c
}

/// Runs the binary with `args` in `cwd`.
pub fn run_in<I, S>(cwd: &Path, args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let out = cmd().current_dir(cwd).args(args).output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// Runs `command` with no stdin and a time limit: a run that does not finish within `secs`
/// seconds is killed and reported with code -1 and `timed out` on stderr (so a hang, e.g. on a
/// FIFO, fails the test instead of blocking the suite).
pub fn run_command_timeout(mut command: Command, secs: u64) -> Run {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = so.read_to_end(&mut b);
        b
    });
    let err_t = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = se.read_to_end(&mut b);
        b
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code().unwrap_or(-1);
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break -1;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = String::from_utf8_lossy(&out_t.join().unwrap()).into_owned();
    let mut stderr = String::from_utf8_lossy(&err_t.join().unwrap()).into_owned();
    if code == -1 {
        stderr.push_str("\n[timed out]");
    }
    Run {
        code,
        stdout,
        stderr,
    }
}

/// Runs the binary with `args` in `cwd`, killed after 30 s (see [`run_command_timeout`]).
pub fn run_in_timeout<I, S>(cwd: &Path, args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut c = cmd();
    c.current_dir(cwd).args(args);
    run_command_timeout(c, 30)
}

/// Makes a FIFO at `path` (with `mkfifo`).
pub fn mkfifo(path: &Path) {
    let st = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(st.success(), "mkfifo {}", path.display());
}

/// The file type of `path` (not following symlinks), as `fsx` names it.
pub fn file_kind(path: &Path) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = std::fs::symlink_metadata(path).unwrap().file_type();
    if t.is_symlink() {
        "symlink"
    } else if t.is_fifo() {
        "fifo"
    } else if t.is_socket() {
        "socket"
    } else if t.is_dir() {
        "directory"
    } else if t.is_char_device() {
        "character device"
    } else if t.is_file() {
        "regular file"
    } else {
        "other"
    }
}

/// Runs the binary in the fixtures directory (so paths in the output are relative).
pub fn run<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    run_in(&fixtures_dir(), args)
}

/// This crate's `tests/fixtures/`.
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A fixture of this crate.
pub fn fixture(name: &str) -> PathBuf {
    fixtures_dir().join(name)
}

/// The pi fixture (`shared/fixtures/pi-large-session-v1.jsonl`), or `None` with a printed reason.
pub fn pi_fixture(test: &str) -> Option<PathBuf> {
    let p = shared_dir(test)?.join("fixtures/pi-large-session-v1.jsonl");
    if p.is_file() {
        Some(p)
    } else {
        session_test_support::skip(test, format_args!("{} not found", p.display()));
        None
    }
}

/// Plants a file (creating its directory) through `session_store::io`.
pub fn plant(path: &Path, bytes: &[u8]) {
    session_store::io::ensure_dir(path.parent().unwrap()).unwrap();
    session_store::io::write_raw(path, bytes).unwrap();
}

/// Copies a file to `dst` and moves its mtime 20 years back, so any write would show.
pub fn plant_copy(src: &Path, dst: &Path) {
    plant(dst, &std::fs::read(src).unwrap());
    let past = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
    std::fs::File::open(dst)
        .unwrap()
        .set_modified(past)
        .unwrap();
}

/// What must not change when a file is only inspected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    pub sha256: String,
    pub len: u64,
    pub mtime: SystemTime,
    pub inode: u64,
    pub mode: u32,
}

/// The fingerprint of a file.
pub fn fingerprint(path: &Path) -> Fingerprint {
    let bytes = std::fs::read(path).unwrap();
    let meta = std::fs::metadata(path).unwrap();
    Fingerprint {
        sha256: format!("{:x}", Sha256::digest(&bytes)),
        len: meta.len(),
        mtime: meta.modified().unwrap(),
        inode: meta.ino(),
        mode: meta.mode(),
    }
}

/// Replaces a temporary path with a placeholder (and its canonical form too).
pub fn redact(text: &str, path: &Path, with: &str) -> String {
    let mut t = text.replace(&path.display().to_string(), with);
    if let Ok(c) = std::fs::canonicalize(path) {
        t = t.replace(&c.display().to_string(), with);
    }
    t
}

/// Every inspection subcommand, on a copy of `src`: the file's bytes, mtime, inode and mode
/// stay the same, and nothing new appears next to it (no backup, no lock, no temp file).
pub fn assert_read_only(src: &Path, show_arg: &str) {
    let dir = tempdir();
    let sessions = dir.path().join("agents/main/sessions");
    let file = sessions.join("telegram_1.jsonl");
    plant_copy(src, &file);
    let before = fingerprint(&file);
    let names = dir_names(&sessions);
    let f = file.to_str().unwrap();
    let exported = dir.path().join("export.html");
    let runs: Vec<Vec<&str>> = vec![
        vec!["tree", f],
        vec!["tree", "--json", f],
        vec!["tree", "--depth", "2", f],
        vec!["context", f],
        vec!["context", "--json", f],
        vec!["show", f, show_arg],
        vec!["show", "--raw", f, show_arg],
        vec!["stats", f],
        vec!["stats", "--json", f],
        vec!["check", f],
        vec!["check", "--json", f],
        vec!["export", f, "--format", "json"],
        vec!["export", f, "--format", "jsonl"],
        vec!["export", f, "--format", "markdown"],
        vec!["export", f, "--format", "html"],
        vec![
            "export",
            f,
            "--format",
            "html",
            "-o",
            exported.to_str().unwrap(),
        ],
        vec!["list", "--root", dir.path().to_str().unwrap()],
        vec!["list", "--json", "--dir", sessions.to_str().unwrap()],
    ];
    for args in runs {
        let r = run_in(dir.path(), &args);
        assert!(!r.stderr.contains("panicked"), "{args:?}: {}", r.stderr);
        assert_eq!(
            fingerprint(&file),
            before,
            "{args:?} changed {}",
            src.display()
        );
        assert_eq!(dir_names(&sessions), names, "{args:?} created files");
    }
}

/// The Chromium binary (`$CHROMIUM`, else `chromium` or `chromium-browser` on PATH), or `None`
/// with a printed reason.
pub fn chromium(test: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CHROMIUM").map(PathBuf::from)
        && p.is_file()
    {
        return Some(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser"] {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    session_test_support::skip(
        test,
        "chromium not found on PATH (Debian: apt-get install chromium; .ci/run installs it)",
    );
    None
}

/// The DOM of a local HTML file after headless Chromium loaded it (`--dump-dom`), with no
/// network access, a fresh profile, and a 180 s limit.
pub fn dump_dom(chromium: &Path, html: &Path) -> String {
    let url = format!("file://{}", std::fs::canonicalize(html).unwrap().display());
    dump_dom_url(chromium, &url, &[])
}

/// As [`dump_dom`] for a URL (a `#fragment` included), with `extra` Chromium flags (such as
/// `--virtual-time-budget=10000`, so that a page's asynchronous rendering runs to the end).
pub fn dump_dom_url(chromium: &Path, url: &str, extra: &[&str]) -> String {
    use std::io::Read;
    use std::process::Stdio;
    let profile = tempdir();
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-quic",
            "--no-first-run",
        ])
        .args(extra)
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(url)
        .env("HOME", profile.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        stdout.read_to_end(&mut buf).map(|_| buf)
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(180);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "chromium exited with {status}");
            break;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 180 s on {url}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    String::from_utf8(reader.join().unwrap().unwrap()).unwrap()
}

/// Every `name="value"` attribute value in an HTML text.
pub fn attr_values(html: &str, name: &str) -> Vec<String> {
    let pat = format!(" {name}=\"");
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find(&pat) {
        rest = &rest[i + pat.len()..];
        let end = rest.find('"').unwrap();
        out.push(rest[..end].to_owned());
        rest = &rest[end..];
    }
    out
}

// ---------------------------------------------------------------------------------------
// write commands: directory listings, JSON output, sessions by age, locks

/// The bytes of every regular file under `dir`, by relative path.
pub fn contents(dir: &Path) -> Vec<(String, Vec<u8>)> {
    listing(dir)
        .into_iter()
        .filter(|rel| {
            std::fs::symlink_metadata(dir.join(rel)).is_ok_and(|m| m.file_type().is_file())
        })
        .map(|rel| {
            let bytes = std::fs::read(dir.join(&rel)).unwrap();
            (rel, bytes)
        })
        .collect()
}

/// `v` pretty-printed (two-space indent) with a final newline, as `--json` output is.
pub fn pretty(v: &Value) -> String {
    format!("{}\n", serde_json::to_string_pretty(v).unwrap())
}

/// The canonical form of `p`, displayed.
pub fn canonical(p: &Path) -> String {
    std::fs::canonicalize(p).unwrap().display().to_string()
}

/// `starttime` (field 22 of `/proc/<pid>/stat`) of this test process.
pub fn own_starttime() -> u64 {
    starttime(std::process::id())
}

/// Now as an ISO time (`toISOString`).
pub fn now_iso() -> String {
    session_format::time::to_iso_string(session_format::ids::now_ms()).unwrap()
}

/// A lock payload as OpenClaw writes it.
pub fn lock_payload(pid: u32, created_at: &str, starttime: Option<u64>) -> String {
    let mut s = format!(
        "{{\n  \"pid\": {pid},\n  \"createdAt\": \"{created_at}\",\n  \"maxHoldMs\": 300000"
    );
    if let Some(st) = starttime {
        s.push_str(&format!(",\n  \"starttime\": {st}"));
    }
    s.push_str("\n}\n");
    s
}

/// A lock held by this (running) test process.
pub fn live_lock() -> String {
    lock_payload(std::process::id(), &now_iso(), Some(own_starttime()))
}

/// A session file whose only message is at `at_ms` (its last activity).
pub fn session_bytes(id: &str, at_ms: i64) -> Vec<u8> {
    let iso = session_format::time::to_iso_string(at_ms).unwrap();
    format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"{iso}\",\"cwd\":\"/w\"}}\n\
         {{\"type\":\"message\",\"id\":\"u1\",\"parentId\":null,\"timestamp\":\"{iso}\",\
         \"message\":{{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":{at_ms}}}}}\n"
    )
    .into_bytes()
}

/// One day in milliseconds.
pub const DAY: i64 = 86_400_000;
/// 2026-07-01T00:00:00.000Z.
pub const NOW: i64 = 1_782_864_000_000;

/// Replaces every `time` of the audit records in an `archive` or `clear` JSON report (under
/// `audit.records`, at the top or in each of `reports`) with `"[time]"`, after checking that it
/// is an ISO 8601 UTC time with milliseconds that reads back as itself. Returns how many were
/// replaced.
pub fn redact_audit_times(v: &mut Value) -> usize {
    let mut n = 0;
    let audits: Vec<&mut Value> = if v.get("reports").is_some() {
        v["reports"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .filter_map(|r| r.get_mut("audit"))
            .collect()
    } else {
        v.get_mut("audit").into_iter().collect()
    };
    for a in audits {
        for r in a["records"].as_array_mut().unwrap() {
            let t = r["time"].as_str().unwrap();
            assert_iso_time(t);
            r["time"] = Value::from("[time]");
            n += 1;
        }
    }
    n
}

/// Asserts that `t` is an ISO 8601 UTC time with milliseconds (`2026-07-01T00:00:00.000Z`)
/// that parses and prints back as itself.
pub fn assert_iso_time(t: &str) {
    let ms = session_format::time::parse_js_date(t).unwrap_or_else(|| panic!("{t:?} is no time"));
    assert_eq!(
        session_format::time::to_iso_string(ms).as_deref(),
        Some(t),
        "{t:?} is not ISO 8601 UTC with milliseconds"
    );
    assert_eq!(t.len(), 24, "{t:?}");
}

/// The header of the small transcripts the read and output tests build (`sess-0001`, cwd `/tmp`).
pub const HEADER: &str = r#"{"type":"session","version":3,"id":"sess-0001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}"#;

/// A `message` row with one text block, at 2026-01-01T00:00:01Z.
pub fn msg(id: &str, parent: Option<&str>, role: &str, text: &str) -> String {
    let parent = parent.map_or_else(|| "null".to_owned(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"{role}","content":[{{"type":"text","text":"{text}"}}],"timestamp":1767225601000}}}}"#
    )
}

/// `rows` joined into file bytes, each ended by `\n`.
pub fn lines(rows: &[String]) -> Vec<u8> {
    let mut s = rows.join("\n");
    s.push('\n');
    s.into_bytes()
}

/// A small clean session: header, user, assistant, user.
pub fn small_session() -> Vec<u8> {
    lines(&[
        HEADER.to_owned(),
        msg("a1", None, "user", "hello"),
        msg("a2", Some("a1"), "assistant", "hi there"),
        msg("a3", Some("a2"), "user", "more"),
    ])
}
