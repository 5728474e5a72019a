//! Session semantics on top of the transcript store (openclaw-jsonl.md §5): session keys, kinds
//! and chat types, the store layout and key ⇄ file-name mapping, lifecycle and transcript
//! events, policies (history limits, per-chat-type overrides, reset and freshness, retention)
//! and the retention operations (archive, clear) with dry-run reports.
//!
//! The reference is OpenClaw 2026.6.11; where §5 describes 2026.9.6 and the two differ, the
//! 2026.6.11 behaviour is implemented (reset policies) or the 2026.9.6 rule is marked
//! (incognito keys). Behaviour checked against the installed reference package is pinned by
//! the node-generated corpus `tests/data/session-key-corpus.jsonl`
//! (`xtask/node/gen-session-key-corpus.mjs`).
//!
//! | module | what |
//! |---|---|
//! | [`key`] | `SessionKey` (parse, `Display`/`FromStr`), id normalisation, builders (main, peer with DM scopes and identity links, thread), cron/subagent/ACP/incognito/sentinel predicates |
//! | [`kind`] | key shape, chat type, session kind, reset type |
//! | [`inspect`] | [`KeyInfo`]: a printable, serialisable classification of any key string |
//! | [`layout`] | `<root>/agents/<agent>/sessions/` and the key ⇄ file-name bijection, containment checks |
//! | [`events`] | lifecycle and transcript events, [`EventBus`] (subscribe/unsubscribe, isolated listeners) |
//! | [`session`] | [`SemanticSession`]: create/open/append/compact/fork/reset/archive/delete with events |
//! | [`policy`] | the `sessions` config, durations and sizes, reset policies and freshness, history limits |
//! | [`retention`] | archive plans and execution, clear, their reports |
//! | [`audit`] | the retention audit log (`<sessions>/sessions-audit.log`), one JSON line per move or delete |
//! | [`fsops`] | the crate's file moves and deletes, the lock-file check |
//!
//! Dependencies point down from [`retention`] and [`session`] (`cargo xtask modules
//! session-semantics`): `retention` uses `audit` (which uses `policy`), `fsops`, `events`,
//! `key`, `layout` and `policy`; `session` uses `events`, `fsops`, `key` and `layout`; `fsops`
//! and `inspect` use `layout`, which uses `key`; `policy` and `inspect` use `kind`, which uses
//! `key`; `key`, `kind` and `policy` share the private `js` helpers; `events` uses none. Every
//! write goes through `session_store::io` (and its lock). No features.
#![warn(missing_docs)]

pub mod audit;
pub mod events;
pub mod fsops;
pub mod inspect;
mod js;
pub mod key;
pub mod kind;
pub mod layout;
pub mod openclaw_store;
pub mod policy;
pub mod retention;
pub mod session;

pub use events::{
    EventBus, Lifecycle, LifecycleEvent, ResetReason, SessionEvent, SessionTarget, Subscription,
    TranscriptEvent,
};
pub use inspect::{KeyInfo, inspect_key};
pub use key::{ParseKeyError, SessionKey};
pub use kind::{ChatType, KeyShape, ResetType, SessionKind};
pub use layout::{PathError, SessionFileName, StoreLayout};
pub use policy::{Clock, Config, FixedClock, SessionsConfig, SystemClock};
pub use retention::{
    ArchivePlan, ArchiveReport, ClearMode, ClearPlan, ClearReport, ClearTarget, MassSweep,
    RetentionError, RetentionPolicy, SessionRef,
};
pub use session::SemanticSession;
