//! [`RedisStorage`] itself: connecting (with the command timeout), the connection pool, and
//! running scripts and commands on a pooled connection.

use super::*;

/// A Redis session store. Cheap to clone (the clones share one connection pool); `Send` and
/// `Sync`.
#[derive(Clone, Debug)]
pub struct RedisStorage {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    pub(super) client: redis::Client,
    /// The command timeout ([`COMMAND_TIMEOUT`] unless set at connect).
    pub(super) timeout: Duration,
    pub(super) url: String,
    pub(super) prefix: String,
    pub(super) scripts: Scripts,
    pub(super) pool: Mutex<Vec<deadline::Conn>>,
    /// Time to live of the write locks taken through [`crate::Storage`], ms.
    pub(super) lock_ttl_ms: std::sync::atomic::AtomicU64,
    /// Write locks held through [`crate::Storage::with_write_lock`]: path → holding
    /// thread and depth (re-entry).
    pub(super) held: Mutex<std::collections::HashMap<PathBuf, (std::thread::ThreadId, usize)>>,
    /// The leases held through [`RedisStorage::lock`], renewed by one background thread.
    pub(super) leases: Arc<lock::lease::Leases>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStorage")
            .field("url", &self.url)
            .field("prefix", &self.prefix)
            .field("idle_connections", &self.pool.lock().len())
            .finish_non_exhaustive()
    }
}

/// Idle connections kept per storage.
pub(super) const POOL_MAX: usize = 8;

impl RedisStorage {
    /// Connects to `url` (`redis://host:port/[db]`, as the `redis` crate parses it) and checks
    /// the server with `PING`. `prefix` starts every key (default [`DEFAULT_PREFIX`]); stores
    /// with different prefixes on one server do not see each other's sessions.
    ///
    /// Every operation (connecting included) fails when the server has not answered within
    /// [`COMMAND_TIMEOUT`]: the error says it timed out ([`RedisStoreError::io_kind`]
    /// `TimedOut`). TLS (`rediss://`) is not built in: such a URL is refused.
    ///
    /// # Errors
    /// [`RedisStoreError::TlsUnsupported`] for `rediss://`; [`RedisStoreError::Connect`] when
    /// the URL is invalid or the server does not answer.
    pub fn connect(url: &str, prefix: Option<&str>) -> Result<Self, RedisStoreError> {
        Self::connect_with_timeout(url, prefix, COMMAND_TIMEOUT)
    }

    /// [`RedisStorage::connect`] with another command timeout than [`COMMAND_TIMEOUT`] (at
    /// least 1 ms).
    ///
    /// # Errors
    /// As [`RedisStorage::connect`].
    pub fn connect_with_timeout(
        url: &str,
        prefix: Option<&str>,
        timeout: Duration,
    ) -> Result<Self, RedisStoreError> {
        let connect = |source| RedisStoreError::Connect {
            url: redact(url),
            source,
        };
        if url
            .get(..9)
            .is_some_and(|s| s.eq_ignore_ascii_case("rediss://"))
        {
            return Err(RedisStoreError::TlsUnsupported { url: redact(url) });
        }
        let timeout = timeout.max(Duration::from_millis(1));
        let client = client_for(url).map_err(connect)?;
        let storage = RedisStorage {
            inner: Arc::new(Inner {
                client,
                timeout,
                url: redact(url),
                prefix: prefix.unwrap_or(DEFAULT_PREFIX).to_owned(),
                scripts: Scripts::new(),
                pool: Mutex::new(Vec::new()),
                lock_ttl_ms: std::sync::atomic::AtomicU64::new(
                    u64::try_from(DEFAULT_LOCK_TTL.as_millis()).unwrap_or(u64::MAX),
                ),
                held: Mutex::new(std::collections::HashMap::new()),
                leases: Arc::default(),
            }),
        };
        let deadline = Instant::now() + timeout;
        let mut con = storage.inner.open(deadline).map_err(connect)?;
        let _: String = redis::cmd("PING")
            .query(&mut deadline::Deadlined::new(&mut con, deadline, timeout))
            .map_err(connect)?;
        storage.inner.give_back(con);
        Ok(storage)
    }

    /// The command timeout of this store ([`COMMAND_TIMEOUT`] unless
    /// [`RedisStorage::connect_with_timeout`] set another).
    pub fn timeout(&self) -> Duration {
        self.inner.timeout
    }

    /// Sets the time to live of the write locks [`crate::Storage::with_write_lock`]
    /// takes (default [`DEFAULT_LOCK_TTL`]; renewed while held, so it bounds how long a crashed
    /// holder blocks others).
    pub fn set_lock_ttl(&self, ttl: Duration) {
        let ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        self.inner
            .lock_ttl_ms
            .store(ms, std::sync::atomic::Ordering::Relaxed);
    }

    /// The URL this store was connected with (a password in it replaced by `***`).
    pub fn url(&self) -> &str {
        &self.inner.url
    }

    /// The key prefix.
    pub fn prefix(&self) -> &str {
        &self.inner.prefix
    }
}

/// The client for `url`, without the `CLIENT SETINFO` handshake (two more replies to wait for
/// on every new connection; the library name is only informational).
pub(super) fn client_for(url: &str) -> redis::RedisResult<redis::Client> {
    use redis::IntoConnectionInfo as _;
    let info = url.into_connection_info()?;
    let settings = info.redis_settings().clone().set_skip_set_lib_name();
    redis::Client::open(info.set_redis_settings(settings))
}

impl Inner {
    /// A new connection, connected (TCP and the `AUTH`/`SELECT` handshake the URL asks for)
    /// before `deadline`.
    pub(super) fn open(&self, deadline: Instant) -> redis::RedisResult<deadline::Conn> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left < Duration::from_millis(1) {
            return Err(deadline::timed_out(self.timeout));
        }
        // The client gives the TCP connect and each handshake reply the timeout it is given.
        let settings = self.client.get_connection_info().redis_settings();
        let replies = u32::from(settings.password().is_some()) + u32::from(settings.db() != 0);
        let step = (left / replies.max(1)).max(Duration::from_millis(1));
        self.client
            .get_connection_with_timeout(step)
            .map(deadline::Conn::new)
            .map_err(|e| deadline::explain(e, self.timeout))
    }

    pub(super) fn give_back(&self, con: deadline::Conn) {
        let mut pool = self.pool.lock();
        if pool.len() < POOL_MAX {
            pool.push(con);
        }
    }

    /// Runs `f` on a pooled connection (a new one when none is idle), all of it (connecting
    /// included) within the command timeout ([`deadline::Deadlined`]). A connection that failed
    /// with an I/O error, or with any error of a pipeline or `MULTI` block (whose replies may not
    /// all have been read), is dropped; a read (`retry`) that failed with an I/O error on a
    /// pooled connection is tried once more on a fresh one, within what is left of the timeout
    /// (writes are not retried: the first may have landed; nothing is retried after a timeout).
    pub(super) fn run<T>(
        &self,
        path: &Path,
        retry: bool,
        mut f: impl FnMut(&mut dyn redis::ConnectionLike) -> redis::RedisResult<T>,
    ) -> Result<T, RedisStoreError> {
        let command = |source| RedisStoreError::Command {
            path: path.to_path_buf(),
            source,
        };
        let deadline = Instant::now() + self.timeout;
        let pooled = self.pool.lock().pop();
        let was_pooled = pooled.is_some();
        let mut con = match pooled {
            Some(c) => c,
            None => self.open(deadline).map_err(command)?,
        };
        match f(&mut deadline::Deadlined::new(
            &mut con,
            deadline,
            self.timeout,
        )) {
            Ok(v) => {
                self.give_back(con);
                Ok(v)
            }
            Err(e)
                if e.is_io_error() || e.is_connection_dropped() || e.is_unrecoverable_error() =>
            {
                drop(con);
                if retry && was_pooled && !e.is_timeout() {
                    let mut fresh = self.open(deadline).map_err(command)?;
                    let v = f(&mut deadline::Deadlined::new(
                        &mut fresh,
                        deadline,
                        self.timeout,
                    ))
                    .map_err(command)?;
                    self.give_back(fresh);
                    Ok(v)
                } else {
                    Err(command(e))
                }
            }
            // A pipeline that failed may have left replies unread (or been cut short): the
            // next request on the connection would read them as its own.
            Err(e) if con.pipelined() => {
                drop(con);
                Err(command(e))
            }
            Err(e) => {
                self.give_back(con);
                Err(command(e))
            }
        }
    }
}

/// `url` with the password of its user info (`redis://user:secret@host`) replaced by `***`.
pub(super) fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => {
            let user = rest[..at].split_once(':').map_or("", |(u, _)| u);
            format!("{scheme}://{user}:***{}", &rest[at..])
        }
        None => url.to_owned(),
    }
}
