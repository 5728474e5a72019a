//! Running a measured child process: wall time, exit status, captured output, a timeout, and the
//! child's peak resident set size (`ru_maxrss` from `wait4`: that child only, not the parent nor
//! other children).
//!
//! Caveat (Linux): a child's `ru_maxrss` starts from the parent's high-water mark when it was
//! spawned (the pre-`exec` image counts), so a measuring parent must stay small: `bench-compare`
//! generates data in a subprocess and copies files in chunks.

use std::io::Read as _;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

/// How a measured process ended.
#[derive(Debug)]
pub struct Finished {
    /// Exit status (`None` when it was killed at the timeout).
    pub status: Option<ExitStatus>,
    /// From spawn to reap.
    pub wall: Duration,
    /// Peak resident set size of the child, in KiB (Linux `ru_maxrss`).
    pub max_rss_kib: u64,
    /// Captured standard output.
    pub stdout: String,
    /// Captured standard error.
    pub stderr: String,
}

impl Finished {
    /// True when the process was killed at the timeout.
    pub fn timed_out(&self) -> bool {
        self.status.is_none()
    }
}

/// Runs `cmd` (stdin closed, stdout and stderr captured), killing it after `timeout`.
///
/// # Errors
/// The process cannot be spawned or waited for.
pub fn run_measured(cmd: &mut Command, timeout: Duration) -> Result<Finished> {
    run_measured_with_stdout(cmd, timeout, Stdio::piped())
}

/// [`run_measured`] with the child's standard output sent to `stdout` (a file, say, so that a
/// large output is not held by this process, whose peak RSS a later child would inherit); the
/// returned `stdout` is empty unless `stdout` is [`Stdio::piped`].
///
/// # Errors
/// The process cannot be spawned or waited for.
pub fn run_measured_with_stdout(
    cmd: &mut Command,
    timeout: Duration,
    stdout: Stdio,
) -> Result<Finished> {
    cmd.stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().with_context(|| format!("spawning {cmd:?}"))?;
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = drain(child.stdout.take().map(|p| Box::new(p) as Box<_>));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as Box<_>));
    let mut killed = false;
    let mut pause = Duration::from_micros(200);
    let (status, max_rss_kib) = loop {
        if let Some(done) = sys::try_wait(&child)? {
            break done;
        }
        if !killed && start.elapsed() > timeout {
            let _ = child.kill();
            killed = true;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(5));
    };
    let wall = start.elapsed();
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    Ok(Finished {
        status: (!killed).then_some(status),
        wall,
        max_rss_kib,
        stdout,
        stderr,
    })
}

#[cfg(unix)]
mod sys {
    use std::os::unix::process::ExitStatusExt as _;
    use std::process::{Child, ExitStatus};

    use anyhow::Result;

    /// Reaps `child` if it has ended: its exit status and `ru_maxrss` (KiB). After this returns
    /// `Some`, the child is reaped: `child` must not be waited for or killed again.
    #[allow(unsafe_code)]
    pub(super) fn try_wait(child: &Child) -> Result<Option<(ExitStatus, u64)>> {
        let pid = libc::pid_t::try_from(child.id())?;
        let mut status: libc::c_int = 0;
        // SAFETY: `rusage` is a plain C struct of integers, for which all-zero bytes are valid.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `status` and `usage` are valid for writes for the whole call; `pid` is a child
        // of this process that has not been reaped (std's `Child` is never waited for).
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        match r {
            0 => Ok(None),
            -1 => {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    Ok(None)
                } else {
                    Err(e.into())
                }
            }
            _ => Ok(Some((
                ExitStatus::from_raw(status),
                u64::try_from(usage.ru_maxrss).unwrap_or(0),
            ))),
        }
    }
}

#[cfg(not(unix))]
mod sys {
    use std::process::{Child, ExitStatus};

    use anyhow::Result;

    /// Without `wait4`, the peak RSS is unknown (reported as 0).
    pub(super) fn try_wait(child: &Child) -> Result<Option<(ExitStatus, u64)>> {
        // `try_wait` needs `&mut`; a non-Unix host is not a benchmark target of this project.
        let _ = child;
        anyhow::bail!("bench-compare measures processes with wait4 and needs a Unix host")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_output_status_and_rss() {
        let f = run_measured(
            Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]),
            Duration::from_secs(30),
        )
        .unwrap();
        assert_eq!(f.stdout, "out\n");
        assert_eq!(f.stderr, "err\n");
        assert_eq!(f.status.unwrap().code(), Some(3));
        assert!(f.max_rss_kib > 0);
    }

    /// A child that allocates and touches 64 MiB reports at least that as its peak. (How small a
    /// small child's figure is depends on this test process's own peak: see the module docs.)
    #[test]
    fn rss_is_the_childs_own() {
        let big = run_measured(
            Command::new("sh").args([
                "-c",
                "a=$(head -c 67108864 /dev/zero | tr '\\0' x); echo ${#a}",
            ]),
            Duration::from_secs(60),
        )
        .unwrap();
        assert_eq!(big.stdout.trim(), "67108864");
        assert!(big.max_rss_kib >= 64 * 1024, "{}", big.max_rss_kib);
    }

    #[test]
    fn stdout_can_go_to_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.txt");
        session_store::io::write_raw(&out, b"").unwrap();
        let file = session_store::io::open_append_nofollow(&out, false).unwrap();
        let f = run_measured_with_stdout(
            Command::new("sh").args(["-c", "echo to-file; echo err >&2"]),
            Duration::from_secs(30),
            Stdio::from(file),
        )
        .unwrap();
        assert_eq!(f.stdout, "");
        assert_eq!(f.stderr, "err\n");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "to-file\n");
    }

    #[test]
    fn kills_at_the_timeout() {
        let f = run_measured(Command::new("sleep").arg("30"), Duration::from_millis(200)).unwrap();
        assert!(f.timed_out());
        assert_eq!(f.stdout, "");
    }
}
