//! The session write lock of a Redis store: `SET NX PX` with a random token, renewed while held
//! (the lease, [`lease`]), released with a compare-and-delete script.

use super::*;

pub(super) mod lease;

/// Default time to live of a Redis write lock ([`RedisLockOptions::ttl`]).
pub const DEFAULT_LOCK_TTL: Duration = Duration::from_secs(30);

/// Options of [`RedisStorage::lock`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RedisLockOptions {
    /// Time to live of the lock key; renewed every third of it while the guard lives, so a
    /// crashed holder's lock expires after at most this long.
    pub ttl: Duration,
    /// Give up after this long (`None`: wait forever, `Some(ZERO)`: one attempt).
    pub timeout: Option<Duration>,
    /// Pauses between attempts (as for the file lock).
    pub backoff: Backoff,
}

impl Default for RedisLockOptions {
    /// ttl [`DEFAULT_LOCK_TTL`], timeout 60 s ([`crate::lock::DEFAULT_TIMEOUT`]), a fixed
    /// 5 ms pause.
    fn default() -> Self {
        RedisLockOptions {
            ttl: DEFAULT_LOCK_TTL,
            timeout: Some(crate::lock::DEFAULT_TIMEOUT),
            backoff: Backoff::Fixed(Duration::from_millis(5)),
        }
    }
}

/// This machine's host name (`/proc/sys/kernel/hostname`, else `$HOSTNAME`, else `unknown`),
/// without spaces.
pub(crate) fn host_name() -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().replace(char::is_whitespace, "_"))
        .filter(|h| !h.is_empty());
    name.unwrap_or_else(|| "unknown".to_owned())
}

/// A held Redis write lock. The storage's renewer thread renews it every third of its ttl
/// while the guard lives; dropping the guard (or [`RedisWriteLock::release`]) stops that and
/// releases the lock (compare-and-delete: a lock that expired and was taken by another writer
/// is left alone).
#[derive(Debug)]
pub struct RedisWriteLock {
    storage: RedisStorage,
    path: PathBuf,
    key: String,
    token: String,
    lease: u64,
    released: bool,
}

impl RedisWriteLock {
    pub(super) fn new(
        storage: RedisStorage,
        path: &Path,
        key: String,
        token: String,
        ttl_ms: u64,
    ) -> Self {
        let lease = storage.inner.leases.add(
            &storage.inner,
            path.to_path_buf(),
            key.clone(),
            token.clone(),
            ttl_ms,
        );
        RedisWriteLock {
            storage,
            path: path.to_path_buf(),
            key,
            token,
            lease,
            released: false,
        }
    }

    /// The token stored in the lock key (`<random hex> host=<host name> pid=<pid>`).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The session this lock is for.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renews the lock now.
    ///
    /// # Errors
    /// [`RedisStoreError::LockLost`] when the lock is no longer ours; as [`RedisStorage::version`].
    pub fn renew(&self, ttl: Duration) -> Result<(), RedisStoreError> {
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        if self
            .storage
            .renew_lock(&self.path, &self.key, &self.token, ttl_ms)?
        {
            Ok(())
        } else {
            Err(RedisStoreError::LockLost(self.path.clone()))
        }
    }

    /// Releases the lock.
    ///
    /// # Errors
    /// [`RedisStoreError::LockLost`] when it was no longer ours (it expired; another writer may
    /// hold it now); as [`RedisStorage::version`].
    pub fn release(mut self) -> Result<(), RedisStoreError> {
        self.release_inner()
    }

    pub(super) fn release_inner(&mut self) -> Result<(), RedisStoreError> {
        self.storage.inner.leases.remove(self.lease);
        if self.released {
            return Ok(());
        }
        self.released = true;
        if self
            .storage
            .release_lock(&self.path, &self.key, &self.token)?
        {
            Ok(())
        } else {
            Err(RedisStoreError::LockLost(self.path.clone()))
        }
    }
}

impl Drop for RedisWriteLock {
    fn drop(&mut self) {
        if let Err(e) = self.release_inner() {
            tracing::warn!(path = %self.path.display(), error = %e, "releasing the redis write lock");
        }
    }
}

impl RedisStorage {
    /// Acquires the session's write lock: `SET <lock key> <token> NX PX <ttl>` with a random
    /// token (`<hex> host=<host name> pid=<pid>`), retried after the pauses of
    /// `options.backoff` until `options.timeout` (`Some(ZERO)`: one attempt). While the guard lives a thread renews the lock
    /// every third of its ttl; dropping the guard (or [`RedisWriteLock::release`]) deletes the
    /// lock only when it still holds this guard's token.
    ///
    /// # Errors
    /// [`RedisStoreError::LockTimeout`] naming the holder; as [`RedisStorage::version`].
    pub fn lock(
        &self,
        path: &Path,
        options: &RedisLockOptions,
    ) -> Result<RedisWriteLock, RedisStoreError> {
        let k = self.keys(path)?;
        let token = format!(
            "{} host={} pid={}",
            uuid::Uuid::new_v4().simple(),
            host_name(),
            std::process::id()
        );
        let ttl_ms = u64::try_from(options.ttl.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        let start = Instant::now();
        let mut attempt = 0u32;
        loop {
            attempt = attempt.saturating_add(1);
            let set: Option<String> = match self.inner.run(path, false, |con| {
                redis::cmd("SET")
                    .arg(&k.lock)
                    .arg(&token)
                    .arg("NX")
                    .arg("PX")
                    .arg(ttl_ms)
                    .query(con)
            }) {
                Ok(set) => set,
                Err(e) => {
                    // The SET may have been applied (a lost reply, a timeout): delete the lock
                    // if it holds our token, best effort, so it does not block others for a ttl.
                    if let Err(release) = self.release_lock(path, &k.lock, &token) {
                        tracing::debug!(path = %path.display(), error = %release,
                            "cannot release a write lock that may have been taken");
                    }
                    return Err(e);
                }
            };
            if set.is_some() {
                return Ok(RedisWriteLock::new(
                    self.clone(),
                    path,
                    k.lock,
                    token,
                    ttl_ms,
                ));
            }
            let waited = start.elapsed();
            if options.timeout.is_some_and(|t| waited >= t) {
                let (holder, ttl): (Option<String>, i64) = self.inner.run(path, true, |con| {
                    redis::pipe()
                        .cmd("GET")
                        .arg(&k.lock)
                        .cmd("PTTL")
                        .arg(&k.lock)
                        .query(con)
                })?;
                return Err(RedisStoreError::LockTimeout {
                    path: path.to_path_buf(),
                    waited_ms: u64::try_from(waited.as_millis()).unwrap_or(u64::MAX),
                    holder: holder.unwrap_or_else(|| "unknown".to_owned()),
                    ttl_ms: ttl,
                });
            }
            let pause = options.backoff.delay(attempt);
            let pause = match options.timeout {
                Some(t) => pause
                    .min(t.saturating_sub(waited))
                    .max(Duration::from_millis(1)),
                None => pause,
            };
            std::thread::sleep(pause);
        }
    }

    /// Renews the lock `key` holding `token` for `ttl_ms`: false when it is no longer ours.
    pub(super) fn renew_lock(
        &self,
        path: &Path,
        key: &str,
        token: &str,
        ttl_ms: u64,
    ) -> Result<bool, RedisStoreError> {
        let n: i64 = self.inner.run(path, false, |con| {
            self.inner
                .scripts
                .lock_renew
                .key(key)
                .arg(token)
                .arg(ttl_ms)
                .invoke(con)
        })?;
        Ok(n == 1)
    }

    /// Deletes the lock `key` when it holds `token`: false when it was no longer ours.
    pub(super) fn release_lock(
        &self,
        path: &Path,
        key: &str,
        token: &str,
    ) -> Result<bool, RedisStoreError> {
        let n: i64 = self.inner.run(path, false, |con| {
            self.inner
                .scripts
                .lock_release
                .key(key)
                .arg(token)
                .invoke(con)
        })?;
        Ok(n == 1)
    }
}
