//! Helpers shared by the reliability suites (`reliability_crash`, `reliability_truncation`,
//! `reliability_concurrency`): the scale switch, a seeded RNG, the `RELIABILITY {json}` figure
//! line (docs/RELIABILITY.md), child processes (the test binary re-run in a child mode), message
//! payloads and byte-level line splitting.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use session_format::json::{JsValue, parse_value, to_json_string};

/// Environment variable selecting the sizes: `full` runs the sizes docs/RELIABILITY.md reports, anything else
/// (or unset) the fast defaults that keep `cargo test` quick.
pub const SCALE_ENV: &str = "RELIABILITY_SCALE";

/// Environment variable overriding the RNG seed (a decimal `u64`).
pub const SEED_ENV: &str = "RELIABILITY_SEED";

/// Environment variable selecting a child mode in the re-run test binary.
pub const CHILD_ENV: &str = "RELIABILITY_CHILD";

/// Prefix of the marker lines a child prints on stdout (the test harness prints its own lines
/// there too; they are ignored).
pub const MARK: &str = "@@rel ";

/// True when `RELIABILITY_SCALE=full`.
pub fn full_scale() -> bool {
    std::env::var(SCALE_ENV).is_ok_and(|v| v == "full")
}

/// `full` at `RELIABILITY_SCALE=full`, else `fast`.
pub fn sized(fast: usize, full: usize) -> usize {
    if full_scale() { full } else { fast }
}

/// The seed: `RELIABILITY_SEED`, else `default`; printed on stderr so a failing run can be
/// replayed.
pub fn seed(suite: &str, default: u64) -> u64 {
    let seed = std::env::var(SEED_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    eprintln!("{suite}: seed {seed} (replay with {SEED_ENV}={seed})");
    seed
}

/// SplitMix64: a small, seeded, deterministic generator (the schedule of kills and payload sizes
/// is reproducible from the seed; the OS scheduling is not).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }

    /// True with probability `percent`/100.
    pub fn percent(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }
}

/// Prints the suite's figure line, `RELIABILITY {"suite":"<suite>",<fields>}` (one line, on
/// stdout, visible with `--nocapture`), the protocol `cargo xtask reliability` collects.
pub fn emit(suite: &str, fields: &[(&str, u64)]) {
    let mut line = format!("RELIABILITY {{\"suite\":\"{suite}\"");
    for (k, v) in fields {
        line.push_str(&format!(",\"{k}\":{v}"));
    }
    line.push('}');
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").unwrap();
    out.flush().unwrap();
}

/// Prints a marker line (child side) and flushes it to the pipe.
pub fn mark(text: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{MARK}{text}").unwrap();
    out.flush().unwrap();
}

/// An environment variable the parent must have set for a child.
pub fn env(key: &str) -> String {
    std::env::var(key).unwrap_or_else(|_| panic!("{key} not set"))
}

/// A command re-running this test binary with only the test `entry`, in child mode `mode`.
pub fn child_command(entry: &str, mode: &str) -> Command {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = Command::new(exe);
    cmd.args(["--exact", entry, "--nocapture", "--test-threads", "1", "-q"])
        .env(CHILD_ENV, mode)
        .env_remove(SCALE_ENV)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    cmd
}

/// A running child and its marker lines, read on a helper thread (so the pipe never fills).
#[derive(Debug)]
pub struct Marked {
    pub child: Child,
    rx: mpsc::Receiver<String>,
}

impl Marked {
    pub fn spawn(mut cmd: Command) -> Self {
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(rest) = line.strip_prefix(MARK)
                    && tx.send(rest.to_owned()).is_err()
                {
                    break;
                }
            }
        });
        Marked { child, rx }
    }

    /// The next marker line, waiting up to `timeout`; `None` when the child closed its stdout
    /// (or nothing came in time).
    pub fn next(&self, timeout: Duration) -> Option<String> {
        self.rx.recv_timeout(timeout).ok()
    }

    /// Every marker line still to come, until the child's stdout closes (call after the child
    /// was killed or has exited).
    pub fn drain(&self) -> Vec<String> {
        self.rx.iter().collect()
    }

    /// SIGKILL, then reap.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        self.child.wait().unwrap();
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

/// A JSON string literal.
fn quoted(text: &str) -> String {
    to_json_string(&JsValue::from(text))
}

/// A user message payload.
pub fn user(text: &str, ts: i64) -> JsValue {
    parse_value(
        format!(
            r#"{{"role":"user","content":[{{"type":"text","text":{}}}],"timestamp":{ts}}}"#,
            quoted(text)
        )
        .as_bytes(),
    )
    .unwrap()
}

/// An assistant message payload.
pub fn assistant(text: &str, ts: i64) -> JsValue {
    parse_value(
        format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":{}}}],"api":"anthropic-messages","provider":"anthropic","model":"m","stopReason":"stop","timestamp":{ts}}}"#,
            quoted(text)
        )
        .as_bytes(),
    )
    .unwrap()
}

/// `len` bytes of text (ASCII and two- and three-byte UTF-8, so a cut can land inside a
/// character), deterministic in `salt`.
pub fn filler(len: usize, salt: u64) -> String {
    const PIECES: [&str; 6] = ["lorem ", "ipsum ", "é ", "données ", "→ ", "日本 "];
    let mut s = String::with_capacity(len + 8);
    let mut k = salt as usize;
    while s.len() < len {
        s.push_str(PIECES[k % PIECES.len()]);
        k = k.wrapping_mul(31).wrapping_add(7);
    }
    s
}

/// One line of a file: `start..end` are its bytes without the `\n`; `terminated` says whether a
/// `\n` follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    pub terminated: bool,
}

/// The lines of `bytes` (a final unterminated piece included; no empty piece after a final `\n`).
pub fn spans(bytes: &[u8]) -> Vec<Span> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        match memchr_nl(&bytes[start..]) {
            Some(k) => {
                out.push(Span {
                    start,
                    end: start + k,
                    terminated: true,
                });
                start += k + 1;
            }
            None => {
                out.push(Span {
                    start,
                    end: bytes.len(),
                    terminated: false,
                });
                start = bytes.len();
            }
        }
    }
    out
}

fn memchr_nl(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|b| *b == b'\n')
}

/// The `id` of a line that parses as a JSON object with a string `id`.
pub fn line_id(line: &[u8]) -> Option<String> {
    let v = parse_value(line).ok()?;
    let id = v.as_object()?.get_str("id")?;
    Some(id.into_owned())
}

/// The `parentId` of a parsed line (`None` for null or absent).
pub fn line_parent(line: &[u8]) -> Option<String> {
    let v = parse_value(line).ok()?;
    let p = v.as_object()?.get_str("parentId")?;
    Some(p.into_owned())
}

/// How many extra branches the `parentId`s of `lines` form: for every parent, its children
/// beyond the first (a straight chain gives 0; two writers each continuing their own chain from
/// one point give 1).
pub fn sibling_branches(lines: &[(String, Option<String>)]) -> usize {
    let mut children: std::collections::HashMap<Option<&str>, usize> =
        std::collections::HashMap::new();
    for (_, parent) in lines {
        *children.entry(parent.as_deref()).or_default() += 1;
    }
    children.values().map(|n| n - 1).sum()
}
