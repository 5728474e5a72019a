//! A throwaway `redis-server` for tests and benchmarks: found on `PATH` (or in `/usr/bin`,
//! `/usr/sbin`, or at `$REDIS_SERVER`), started on a free loopback port with no persistence
//! (`--save "" --appendonly no --bind 127.0.0.1`), in a private temporary directory, and
//! killed when the handle drops.
//!
//! Tests call [`LocalRedisServer::start_or_skip`]: it returns `None` (after printing why) only
//! when no `redis-server` binary exists; a binary that is there but does not come up is an
//! error, so a broken install fails the tests instead of skipping them.

use std::io;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long [`LocalRedisServer::start`] waits for the server to answer `PING`.
pub const START_TIMEOUT: Duration = Duration::from_secs(20);

/// The environment variable naming a `redis-server` binary to use instead of searching.
pub const ENV_REDIS_SERVER: &str = "REDIS_SERVER";

/// Why a server could not be started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// No `redis-server` binary on `PATH`, in `/usr/bin` or `/usr/sbin`, or at `$REDIS_SERVER`.
    #[error("no redis-server binary found (searched $REDIS_SERVER, PATH, /usr/bin, /usr/sbin)")]
    NotFound,
    /// Spawning the binary, binding a port or creating the working directory failed.
    #[error("cannot start {binary}: {source}")]
    Spawn {
        /// The binary.
        binary: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The server exited or did not answer `PING` in time; `log` is the end of its log.
    #[error("{binary} on port {port} did not come up: {why}\n{log}")]
    NotReady {
        /// The binary.
        binary: PathBuf,
        /// The port it was given.
        port: u16,
        /// What happened (exit status, or the last connection error).
        why: String,
        /// The last lines of the server's log.
        log: String,
    },
}

/// A running `redis-server` owned by this process: killed (and waited for) on drop.
#[derive(Debug)]
pub struct LocalRedisServer {
    child: Child,
    port: u16,
    binary: PathBuf,
    _dir: tempfile::TempDir,
}

/// The `redis-server` binary to use: `$REDIS_SERVER`, else the first on `PATH`, else
/// `/usr/bin/redis-server` or `/usr/sbin/redis-server`.
pub fn find_redis_server() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(ENV_REDIS_SERVER) {
        let p = PathBuf::from(p);
        return is_executable(&p).then_some(p);
    }
    let on_path = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .unwrap_or_default();
    on_path
        .into_iter()
        .chain([PathBuf::from("/usr/bin"), PathBuf::from("/usr/sbin")])
        .map(|d| d.join("redis-server"))
        .find(|p| is_executable(p))
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

/// A loopback port nobody listens on right now (the OS picks it; another process may take it
/// before the server binds it, which [`LocalRedisServer::start`] retries).
fn free_port() -> io::Result<u16> {
    Ok(TcpListener::bind(("127.0.0.1", 0))?.local_addr()?.port())
}

impl LocalRedisServer {
    /// Starts a server (see the module docs), retrying on another port when the chosen one was
    /// taken in between.
    ///
    /// # Errors
    /// [`ServerError::NotFound`] when there is no binary; [`ServerError::Spawn`] or
    /// [`ServerError::NotReady`] when it does not come up.
    pub fn start() -> Result<Self, ServerError> {
        let binary = find_redis_server().ok_or(ServerError::NotFound)?;
        let mut last = None;
        for _ in 0..5 {
            match Self::start_once(&binary) {
                Ok(s) => return Ok(s),
                Err(e @ ServerError::NotReady { .. }) => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or(ServerError::NotFound))
    }

    /// [`LocalRedisServer::start`] for tests: `None` with a printed reason naming `test` when
    /// no binary exists.
    ///
    /// # Panics
    /// When a binary exists but the server does not come up (a test must fail then, not skip).
    pub fn start_or_skip(test: &str) -> Option<Self> {
        match Self::start() {
            Ok(s) => Some(s),
            Err(ServerError::NotFound) => {
                report_skip(
                    test,
                    &format!(
                        "no redis-server binary found (install the redis-server package, or \
                         set {ENV_REDIS_SERVER})"
                    ),
                );
                None
            }
            Err(e) => panic!("{test}: {e}"),
        }
    }

    fn start_once(binary: &Path) -> Result<Self, ServerError> {
        let spawn_err = |source| ServerError::Spawn {
            binary: binary.to_path_buf(),
            source,
        };
        let dir = tempfile::tempdir().map_err(spawn_err)?;
        let port = free_port().map_err(spawn_err)?;
        let log = dir.path().join("redis.log");
        let child = Command::new(binary)
            .args(["--save", "", "--appendonly", "no", "--bind", "127.0.0.1"])
            .args(["--port", &port.to_string()])
            .args(["--daemonize", "no", "--protected-mode", "yes"])
            .arg("--dir")
            .arg(dir.path())
            .arg("--logfile")
            .arg(&log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(spawn_err)?;
        let mut server = LocalRedisServer {
            child,
            port,
            binary: binary.to_path_buf(),
            _dir: dir,
        };
        server.wait_ready(&log)?;
        Ok(server)
    }

    fn wait_ready(&mut self, log: &Path) -> Result<(), ServerError> {
        let deadline = Instant::now() + START_TIMEOUT;
        let not_ready = |why: String| ServerError::NotReady {
            binary: self.binary.clone(),
            port: self.port,
            why,
            log: tail(log),
        };
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(not_ready(format!("exited with {status}")));
            }
            let why = match ping(&self.url()) {
                Ok(()) => return Ok(()),
                Err(e) => e.to_string(),
            };
            if Instant::now() >= deadline {
                return Err(not_ready(format!(
                    "no PING reply within {START_TIMEOUT:?}: {why}"
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The port the server listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://127.0.0.1:<port>/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

fn ping(url: &str) -> redis::RedisResult<()> {
    let client = redis::Client::open(url)?;
    let mut con = client.get_connection_with_timeout(Duration::from_millis(500))?;
    let pong: String = redis::cmd("PING").query(&mut con)?;
    if pong == "PONG" {
        Ok(())
    } else {
        Err(redis::RedisError::from(io::Error::other(format!(
            "PING answered {pong:?}"
        ))))
    }
}

/// The last 20 lines of the server's log (empty when unreadable).
fn tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

impl Drop for LocalRedisServer {
    fn drop(&mut self) {
        // Nothing to flush: the server keeps no data on disk.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A test's skip, in the workspace's convention (`session-test-support`'s `skip`, which this
/// library cannot depend on): `SKIP <test>: <reason>` on stderr, and the same line appended to
/// the file `$SESSION_SKIP_LOG` names, which `.ci/run` counts.
fn report_skip(test: &str, reason: &str) {
    use std::io::Write;
    let line = format!("SKIP {test}: {reason}\n");
    eprint!("{line}");
    if let Some(log) = std::env::var_os("SESSION_SKIP_LOG").filter(|v| !v.is_empty()) {
        // The skip log is the test run's own report, not a session store: a plain append.
        #[allow(clippy::disallowed_methods)]
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = written {
            eprintln!("cannot append to {}: {e}", Path::new(&log).display());
        }
    }
}
