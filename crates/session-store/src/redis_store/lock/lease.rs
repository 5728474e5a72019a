//! Renewal of the held write-lock leases of one [`RedisStorage`]: one background thread per
//! storage (started with the first lease, ending after [`IDLE`] without any) renews each lease
//! every third of its ttl, instead of a thread per lock.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::{Inner, RedisStorage};

/// How long the renewer thread waits for a new lease before it ends.
const IDLE: Duration = Duration::from_secs(2);

/// The leases of one storage and the renewer's wake-up signal.
#[derive(Debug, Default)]
pub(crate) struct Leases {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct State {
    next_id: u64,
    leases: HashMap<u64, Lease>,
    renewer_running: bool,
}

#[derive(Debug)]
struct Lease {
    path: PathBuf,
    key: String,
    token: String,
    ttl_ms: u64,
    due: Instant,
}

impl Lease {
    fn every(&self) -> Duration {
        Duration::from_millis((self.ttl_ms / 3).max(1))
    }
}

impl Leases {
    /// Registers a lease held under `token` at `key` for renewal; returns its id.
    pub(crate) fn add(
        self: &Arc<Self>,
        inner: &Arc<Inner>,
        path: PathBuf,
        key: String,
        token: String,
        ttl_ms: u64,
    ) -> u64 {
        let mut st = self.state.lock();
        st.next_id += 1;
        let id = st.next_id;
        let lease = Lease {
            path,
            key,
            token,
            ttl_ms,
            due: Instant::now(),
        };
        let due = Instant::now() + lease.every();
        st.leases.insert(id, Lease { due, ..lease });
        if !st.renewer_running {
            let leases = Arc::clone(self);
            let inner = Arc::downgrade(inner);
            let spawned = std::thread::Builder::new()
                .name("redis-lock-renew".to_owned())
                .spawn(move || renew_loop(&leases, &inner));
            if let Err(e) = spawned {
                tracing::warn!(error = %e, "cannot start the redis lock renewer");
            } else {
                st.renewer_running = true;
            }
        }
        self.changed.notify_all();
        id
    }

    /// Stops renewing lease `id`.
    pub(crate) fn remove(&self, id: u64) {
        self.state.lock().leases.remove(&id);
    }

    /// Whether lease `id` is still registered.
    fn holds(&self, id: u64) -> bool {
        self.state.lock().leases.contains_key(&id)
    }
}

fn renew_loop(leases: &Leases, inner: &Weak<Inner>) {
    loop {
        let due: Vec<(u64, PathBuf, String, String, u64)> = {
            let mut st = leases.state.lock();
            if st.leases.is_empty() {
                let waited = leases.changed.wait_for(&mut st, IDLE);
                if waited.timed_out() && st.leases.is_empty() {
                    st.renewer_running = false;
                    return;
                }
                continue;
            }
            let now = Instant::now();
            let next = st.leases.values().map(|l| l.due).min().unwrap_or(now);
            if next > now {
                leases.changed.wait_until(&mut st, next);
                continue;
            }
            st.leases
                .iter_mut()
                .filter(|(_, l)| l.due <= now)
                .map(|(id, l)| {
                    l.due = now + l.every();
                    (
                        *id,
                        l.path.clone(),
                        l.key.clone(),
                        l.token.clone(),
                        l.ttl_ms,
                    )
                })
                .collect()
        };
        let Some(inner) = inner.upgrade() else {
            leases.state.lock().renewer_running = false;
            return;
        };
        let storage = RedisStorage { inner };
        for (id, path, key, token, ttl_ms) in due {
            match storage.renew_lock(&path, &key, &token, ttl_ms) {
                Ok(true) => {}
                // A lease released meanwhile is not lost.
                Ok(false) if !leases.holds(id) => {}
                Ok(false) => {
                    tracing::warn!(path = %path.display(), "redis write lock lost before release");
                    leases.remove(id);
                }
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "cannot renew the redis write lock");
                }
            }
        }
    }
}
