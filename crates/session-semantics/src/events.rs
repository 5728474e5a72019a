//! Lifecycle and transcript events (openclaw-jsonl.md §5.3, §5.4) and the bus that delivers
//! them.
//!
//! - [`EventBus::subscribe`] (every event), [`EventBus::subscribe_lifecycle`] and
//!   [`EventBus::subscribe_transcript`] return a [`Subscription`] guard: dropping it (or calling
//!   [`Subscription::unsubscribe`]) removes the listener; [`Subscription::detach`] keeps it for
//!   the bus's lifetime and returns an id for [`EventBus::unsubscribe`].
//! - Listeners run synchronously on the emitting thread, in subscription order, after the write
//!   the event reports has completed. A listener may return `()` or a `Result`; an error or a
//!   panic is caught, counted ([`EventBus::failures`]) and never reaches the writer, and the
//!   remaining listeners still run (the reference swallows listener errors the same way).
//! - Listeners may subscribe or unsubscribe from inside a callback (the listener list is
//!   snapshotted per event); a listener added during an emit sees the next event.
//! - Every transcript event carries a process-wide, strictly increasing `version` (the
//!   reference's global `version++`), shared by all buses.
//! - [`EventBus::global`] is the process-wide bus (the reference's listener sets are
//!   process-global); tests and embedders can use their own [`EventBus::new`].

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};

use serde::Serialize;

/// Which session an event is about (`{agentId, sessionId, sessionKey}`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionTarget {
    /// The agent.
    pub agent_id: String,
    /// The session id (header `id`).
    pub session_id: String,
    /// The session key, when known (a file named by timestamp and id carries none).
    pub session_key: Option<String>,
    /// The session file, when persisted.
    pub session_file: Option<PathBuf>,
}

/// Why a session was reset (`new|reset|idle|daily|cron-stale`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResetReason {
    /// An explicit "new session" request.
    New,
    /// An explicit reset request.
    Reset,
    /// The idle timeout expired.
    Idle,
    /// The daily boundary passed.
    Daily,
    /// A stale cron session.
    CronStale,
}

impl ResetReason {
    /// `new`, `reset`, `idle`, `daily` or `cron-stale`.
    pub fn as_str(self) -> &'static str {
        match self {
            ResetReason::New => "new",
            ResetReason::Reset => "reset",
            ResetReason::Idle => "idle",
            ResetReason::Daily => "daily",
            ResetReason::CronStale => "cron-stale",
        }
    }
}

/// What happened to a session.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
pub enum Lifecycle {
    /// A new session was created (its file may be written later, at the first assistant
    /// message).
    Created,
    /// An existing session file was opened.
    Resumed,
    /// This session was forked from another one.
    #[serde(rename_all = "camelCase")]
    Forked {
        /// The source session.
        parent: SessionTarget,
    },
    /// A compaction entry was appended.
    #[serde(rename_all = "camelCase")]
    Compacted {
        /// The compaction entry.
        entry_id: String,
        /// Where the kept window starts.
        first_kept_entry_id: String,
        /// Token count before compaction.
        tokens_before: f64,
    },
    /// The session was replaced by a fresh one under the same key (the event's target is the
    /// new session).
    #[serde(rename_all = "camelCase")]
    Reset {
        /// Why.
        cause: ResetReason,
        /// The replaced session.
        previous: SessionTarget,
        /// Where the replaced session's file went (none when it was never written).
        archived_to: Option<PathBuf>,
    },
    /// The session file was moved into the archive directory.
    #[serde(rename_all = "camelCase")]
    Archived {
        /// The new location.
        archived_to: PathBuf,
    },
    /// The session file was deleted.
    Deleted,
}

impl Lifecycle {
    /// `created`, `resumed`, `forked`, `compacted`, `reset`, `archived` or `deleted`.
    pub fn name(&self) -> &'static str {
        match self {
            Lifecycle::Created => "created",
            Lifecycle::Resumed => "resumed",
            Lifecycle::Forked { .. } => "forked",
            Lifecycle::Compacted { .. } => "compacted",
            Lifecycle::Reset { .. } => "reset",
            Lifecycle::Archived { .. } => "archived",
            Lifecycle::Deleted => "deleted",
        }
    }
}

/// A lifecycle event.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleEvent {
    /// The session.
    pub target: SessionTarget,
    /// The thread parent's key, for thread sessions.
    pub parent_session_key: Option<String>,
    /// What happened.
    #[serde(flatten)]
    pub lifecycle: Lifecycle,
}

/// An entry was appended to a transcript.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TranscriptEvent {
    /// The session.
    pub target: SessionTarget,
    /// The new entry's id.
    pub entry_id: String,
    /// The entry type (`message`, `compaction`, `model_change`, …).
    pub entry_type: String,
    /// `message.role` for message entries.
    pub role: Option<String>,
    /// Process-wide monotonic version (starts at 1).
    pub version: u64,
    /// True when the entry is on disk when the event is emitted (the store holds entries in
    /// memory until the first assistant message).
    pub persisted: bool,
}

/// Any event.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum SessionEvent {
    /// A lifecycle event.
    Lifecycle(LifecycleEvent),
    /// A transcript event.
    Transcript(TranscriptEvent),
}

impl SessionEvent {
    /// The session the event is about.
    pub fn target(&self) -> &SessionTarget {
        match self {
            SessionEvent::Lifecycle(e) => &e.target,
            SessionEvent::Transcript(e) => &e.target,
        }
    }
}

static VERSION: AtomicU64 = AtomicU64::new(0);

/// The next transcript version (process-wide, strictly increasing, starting at 1).
pub fn next_transcript_version() -> u64 {
    VERSION.fetch_add(1, Ordering::SeqCst) + 1
}

/// The last transcript version handed out (`readSessionTranscriptUpdateVersion`); 0 before the
/// first.
pub fn current_transcript_version() -> u64 {
    VERSION.load(Ordering::SeqCst)
}

/// An error a listener reports.
pub type ListenerError = Box<dyn std::error::Error + Send + Sync>;

/// What a listener may return: `()` or `Result<(), E>`.
pub trait ListenerOutcome {
    /// The outcome as a result.
    ///
    /// # Errors
    /// The listener's error.
    fn into_outcome(self) -> Result<(), ListenerError>;
}

impl ListenerOutcome for () {
    fn into_outcome(self) -> Result<(), ListenerError> {
        Ok(())
    }
}

impl<E: Into<ListenerError>> ListenerOutcome for Result<(), E> {
    fn into_outcome(self) -> Result<(), ListenerError> {
        self.map_err(Into::into)
    }
}

type Callback = Arc<dyn Fn(&SessionEvent) -> Result<(), ListenerError> + Send + Sync>;

/// Identifies a subscription on its bus.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SubscriptionId(u64);

/// One caught listener failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListenerFailure {
    /// The listener.
    pub subscription: SubscriptionId,
    /// The event's name (`lifecycle:created`, `transcript:message`, …).
    pub event: String,
    /// The error text, or `panic: <message>`.
    pub message: String,
}

/// How many failures [`EventBus::failures`] remembers.
pub const MAX_REMEMBERED_FAILURES: usize = 32;

#[derive(Default)]
struct Inner {
    listeners: Mutex<Vec<(SubscriptionId, Callback)>>,
    next_id: AtomicU64,
    failure_count: AtomicU64,
    failures: Mutex<Vec<ListenerFailure>>,
}

/// Delivers [`SessionEvent`]s to listeners. Cloning gives another handle to the same bus.
#[derive(Clone, Default)]
pub struct EventBus {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for EventBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventBus")
            .field("listeners", &self.listener_count())
            .field("failure_count", &self.failure_count())
            .finish()
    }
}

fn event_name(e: &SessionEvent) -> String {
    match e {
        SessionEvent::Lifecycle(l) => format!("lifecycle:{}", l.lifecycle.name()),
        SessionEvent::Transcript(t) => format!("transcript:{}", t.entry_type),
    }
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}

impl EventBus {
    /// A new bus without listeners.
    pub fn new() -> Self {
        Self::default()
    }

    /// The process-wide bus.
    pub fn global() -> &'static EventBus {
        static GLOBAL: OnceLock<EventBus> = OnceLock::new();
        GLOBAL.get_or_init(EventBus::new)
    }

    fn add(&self, cb: Callback) -> Subscription {
        let id = SubscriptionId(self.inner.next_id.fetch_add(1, Ordering::SeqCst));
        self.inner
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((id, cb));
        Subscription {
            bus: Arc::downgrade(&self.inner),
            id: Some(id),
        }
    }

    /// Subscribes to every event.
    #[must_use = "dropping the Subscription unsubscribes; call .detach() to keep the listener"]
    pub fn subscribe<F, R>(&self, listener: F) -> Subscription
    where
        F: Fn(&SessionEvent) -> R + Send + Sync + 'static,
        R: ListenerOutcome,
    {
        self.add(Arc::new(move |e| listener(e).into_outcome()))
    }

    /// Subscribes to lifecycle events.
    #[must_use = "dropping the Subscription unsubscribes; call .detach() to keep the listener"]
    pub fn subscribe_lifecycle<F, R>(&self, listener: F) -> Subscription
    where
        F: Fn(&LifecycleEvent) -> R + Send + Sync + 'static,
        R: ListenerOutcome,
    {
        self.add(Arc::new(move |e| match e {
            SessionEvent::Lifecycle(l) => listener(l).into_outcome(),
            SessionEvent::Transcript(_) => Ok(()),
        }))
    }

    /// Subscribes to transcript events.
    #[must_use = "dropping the Subscription unsubscribes; call .detach() to keep the listener"]
    pub fn subscribe_transcript<F, R>(&self, listener: F) -> Subscription
    where
        F: Fn(&TranscriptEvent) -> R + Send + Sync + 'static,
        R: ListenerOutcome,
    {
        self.add(Arc::new(move |e| match e {
            SessionEvent::Transcript(t) => listener(t).into_outcome(),
            SessionEvent::Lifecycle(_) => Ok(()),
        }))
    }

    /// Removes a listener; false when it was not subscribed.
    pub fn unsubscribe(&self, id: SubscriptionId) -> bool {
        remove(&self.inner, id)
    }

    /// How many listeners are subscribed.
    pub fn listener_count(&self) -> usize {
        self.inner
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Delivers an event to every listener (errors and panics are caught and recorded).
    pub fn emit(&self, event: &SessionEvent) {
        let snapshot: Vec<(SubscriptionId, Callback)> = self
            .inner
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        for (id, cb) in snapshot {
            let message = match catch_unwind(AssertUnwindSafe(|| cb(event))) {
                Ok(Ok(())) => continue,
                Ok(Err(e)) => e.to_string(),
                Err(p) => format!("panic: {}", panic_text(p.as_ref())),
            };
            self.inner.failure_count.fetch_add(1, Ordering::SeqCst);
            let mut failures = self
                .inner
                .failures
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if failures.len() == MAX_REMEMBERED_FAILURES {
                failures.remove(0);
            }
            failures.push(ListenerFailure {
                subscription: id,
                event: event_name(event),
                message,
            });
        }
    }

    /// Emits a lifecycle event.
    pub fn emit_lifecycle(&self, event: LifecycleEvent) {
        self.emit(&SessionEvent::Lifecycle(event));
    }

    /// Emits a transcript event.
    pub fn emit_transcript(&self, event: TranscriptEvent) {
        self.emit(&SessionEvent::Transcript(event));
    }

    /// How many listener calls failed (error or panic) since the bus was made.
    pub fn failure_count(&self) -> u64 {
        self.inner.failure_count.load(Ordering::SeqCst)
    }

    /// The last [`MAX_REMEMBERED_FAILURES`] failures, oldest first.
    pub fn failures(&self) -> Vec<ListenerFailure> {
        self.inner
            .failures
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

fn remove(inner: &Inner, id: SubscriptionId) -> bool {
    let mut l = inner
        .listeners
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let before = l.len();
    l.retain(|(i, _)| *i != id);
    l.len() != before
}

/// A subscription: dropping it unsubscribes.
#[derive(Debug)]
pub struct Subscription {
    bus: Weak<Inner>,
    id: Option<SubscriptionId>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EventBus")
    }
}

impl Subscription {
    /// The subscription's id.
    pub fn id(&self) -> Option<SubscriptionId> {
        self.id
    }

    /// Removes the listener now.
    pub fn unsubscribe(mut self) {
        self.release();
    }

    /// Keeps the listener for the bus's lifetime; returns its id for
    /// [`EventBus::unsubscribe`].
    pub fn detach(mut self) -> Option<SubscriptionId> {
        self.id.take()
    }

    fn release(&mut self) {
        if let (Some(id), Some(inner)) = (self.id.take(), self.bus.upgrade()) {
            remove(&inner, id);
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex as StdMutex;

    fn target() -> SessionTarget {
        SessionTarget {
            agent_id: "main".into(),
            session_id: "s".into(),
            session_key: None,
            session_file: None,
        }
    }

    fn created() -> SessionEvent {
        SessionEvent::Lifecycle(LifecycleEvent {
            target: target(),
            parent_session_key: None,
            lifecycle: Lifecycle::Created,
        })
    }

    #[test]
    fn failures_are_isolated_and_unsubscribe_works() {
        let bus = EventBus::new();
        let seen = Arc::new(StdMutex::new(Vec::new()));
        let _p = bus.subscribe(|_| -> () { panic!("boom") });
        let _e = bus.subscribe(|_| Err::<(), _>("bad listener"));
        let s2 = Arc::clone(&seen);
        let sub = bus.subscribe_lifecycle(move |e| s2.lock().unwrap().push(e.lifecycle.name()));
        bus.emit(&created());
        assert_eq!(*seen.lock().unwrap(), vec!["created"]);
        assert_eq!(bus.failure_count(), 2);
        let f = bus.failures();
        assert_eq!(f[0].message, "panic: boom");
        assert_eq!(f[1].message, "bad listener");
        assert_eq!(f[1].event, "lifecycle:created");
        sub.unsubscribe();
        bus.emit(&created());
        assert_eq!(seen.lock().unwrap().len(), 1);
        assert_eq!(bus.listener_count(), 2);
    }

    #[test]
    fn listeners_may_subscribe_during_emit() {
        let bus = EventBus::new();
        let b2 = bus.clone();
        let id = bus
            .subscribe(move |_| {
                let _ = b2.subscribe(|_| ()).detach();
            })
            .detach();
        bus.emit(&created());
        assert_eq!(bus.listener_count(), 2);
        assert!(bus.unsubscribe(id.unwrap()));
        assert!(!bus.unsubscribe(id.unwrap()));
    }
}
