//! Persistence for session transcripts: OpenClaw 2026.6.11's `SessionManager` over JSONL files —
//! factories, the navigation indexes and their replay, tree queries, context building, the
//! flushed gate and full rewrites — plus the read-only open, session listing, repair, the write
//! lock and the one I/O module every file write goes through, all behind the [`Storage`] seam
//! (files by default, memory, Redis or another backend).
//!
//! Public modules: [`io`] (the write gate: atomic rewrites, one-`write` `O_APPEND` appends, 0600
//! files), [`lock`] (the cross-process session write lock), [`identity`] (the file a path names,
//! its aliases, the store root) and [`paths`] (session directories, lexical resolution). The rest
//! is at the crate root: [`SessionManager`] and the types it takes and returns, [`Storage`] with
//! [`FileStorage`] (which owns a [`WarmCache`] and a [`RepairCache`]) and [`MemStorage`],
//! listing ([`SessionManager::list`], [`session_info`]), [`OpenReport`], the repair
//! ([`repair_session_file_with`]), [`validate_name`], one error enum per operation and the
//! umbrella [`Error`].
//!
//! Features: `redis` adds `redis_store` (`RedisStorage`, a [`Storage`] on a Redis server);
//! `sqlite` adds `sqlite` (`SqliteStore`, a read-only reader of OpenClaw 2026.8+ per-agent
//! SQLite stores); `test-util` adds `test_util`, the tools of tests and the conformance harness (fault
//! injection, the op-script runner, a load hook, a throwaway Redis server) and the setter of
//! the warm cache's bounds. None is on by default.
//!
//! Inside, each module uses only those on its own line or below (`cargo xtask modules
//! session-store` prints the graph and fails on a cycle):
//! - `any_error`, `replay`, `test_util`, `sqlite`;
//! - `manager` (one file per concern: `open`, `append`, `branch`, `rewrite`, `list`, …);
//! - `repair`, `list`, `redis_store`;
//! - `storage` (the seam, the file and memory stores);
//! - `cache` (the warm and repair caches, the one loader), `inspect` (diagnostics);
//! - `index`, `rows`, `disk`, `deep`, `id`, `foreign` (rows over one byte buffer, the index);
//! - `error`, `lock`, `bulk`, `io`;
//! - `snapshot`, `identity`, `paths`, `names`.
//!
//! Specs: `openclaw-jsonl.md` (Decisions box, §1, §2), `pi-format.md` (§2–§4, §7.3),
//! `rust-style.md`; observed reference behaviour: `xtask/conformance/FINDINGS.md`; differences
//! from the reference: `docs/DEVIATIONS.md`.
//!
//! Design: the file's bytes stay in one buffer and each row is a span of it (rows created or
//! rewritten in this process own their bytes); the index reads only a cheap envelope per line
//! (`type`, `id`, `parentId`, `message.role`); rows are parsed fully only when asked for
//! ([`EntryRef::value`], [`ContextMessage::to_value`]). Untouched rows are re-emitted verbatim on
//! every rewrite.
//!
//! ```no_run
//! # fn main() -> Result<(), session_store::Error> {
//! use session_store::SessionManager;
//! use session_format::json::parse_value;
//!
//! let dir = std::path::Path::new("/tmp/sessions");
//! let mut sm = SessionManager::create("/home/dev/project", Some(dir))?;
//! let user = parse_value(br#"{"role":"user","content":"hi","timestamp":1}"#)?;
//! let id = sm.append_message(user)?; // held in memory: no assistant yet
//! let ctx = sm.build_session_context()?;
//! assert_eq!(ctx.messages.len(), 1);
//! # let _ = id; Ok(()) }
//! ```
//!
//! ## Storage and ids
//!
//! The factories and listings are spelled as OpenClaw spells them and use the process-wide
//! file store ([`FileStorage::shared`]): `SessionManager::create(cwd, dir)`,
//! `open(path, dir, cwd)`, `open_with`, `open_locked`, `continue_recent`, `fork_from`,
//! `open_read_only`, `list`, `list_all`. [`SessionManager::on`]`(storage)` gives a
//! [`Sessions`] handle with the same methods over any [`Storage`] (memory, Redis, a
//! fault-injecting store); every manager it makes keeps that storage for all its reads,
//! writes and write locks. `SessionManager::on(FileStorage::shared())` is the handle the plain
//! factories use ([`FileStorage::shared`] is the process-wide file store as an
//! `Arc<dyn Storage>`; [`FileStorage::process_wide`] the same store as `&'static FileStorage`,
//! for its caches). The root functions [`list`] and [`list_all`] list a directory (a root) of
//! the file store without a `cwd`. An optional id (`get_branch`, `branch_with_summary`) is an
//! `Option<EntryId>`: `Some("id".into())` or `Some((&js).into())`.
//!
//! Errors: every operation has its own error enum; all convert with `?` into [`Error`], as do
//! `session_format::json::JsonError` and `std::io::Error`, so a program's `main` can return
//! `Result<(), session_store::Error>`. A first program: `examples/first_steps.rs`.
//!
//! A method that takes an entry id (`branch`, `get_entry`, `get_branch`,
//! `create_branched_session`, `append_label_change`, `append_compaction`'s
//! `firstKeptEntryId`, …) takes an [`EntryId`]: a `&str`, or a `&JsString` for an id exactly
//! as a file holds it (a lone surrogate included), matched and written back byte for byte.
//! Getters return the lossy `&str` (`id`, `get_leaf_id`) or the exact `JsString` (`id_js`,
//! `get_leaf_id_js`).
//!
//! ```
//! # fn main() -> Result<(), session_store::Error> {
//! use std::sync::Arc;
//! use session_format::json::{JsString, parse_value};
//! use session_store::{MemStorage, SessionManager};
//!
//! let sessions = SessionManager::on(Arc::new(MemStorage::new()));
//! let mut sm = sessions.create("/home/dev/project", Some(std::path::Path::new("/s")))?;
//! let q = sm.append_message(parse_value(br#"{"role":"user","content":"q","timestamp":1}"#)?)?;
//! let exact: JsString = sm.get_entry(&q).and_then(|e| e.id_js().cloned()).unwrap();
//! sm.branch(&exact)?; // the exact id, as read back
//! sm.branch(&q)?; // the same entry as text
//! assert_eq!(sm.get_branch(Some((&exact).into())).len(), 1);
//! # Ok(()) }
//! ```
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod any_error;
mod bulk;
mod cache;
mod deep;
mod disk;
mod error;
mod foreign;
mod id;
pub mod identity;
mod index;
mod inspect;
pub mod io;
mod list;
pub mod lock;
mod manager;
mod names;
pub mod paths;
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub mod redis_store;
mod repair;
#[cfg(any(test, feature = "test-util"))]
mod replay;
mod rows;
mod snapshot;
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
pub mod sqlite;
mod storage;
#[cfg(any(test, feature = "test-util"))]
#[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
pub mod test_util;

pub use any_error::Error;
pub use cache::{CacheLimits, CacheStats, FileCaches, RepairCache, WarmCache};
pub use error::{
    AppendError, BranchError, ContextError, ForkError, ListError, LockFailure, MessagesTextError,
    NameError, OpenError, ReadError, RemoveError, RowLocation, WriteFailure,
};
pub use foreign::ForeignAppendPolicy;
pub use id::EntryId;
pub use identity::{FileIdentity, OutsideStore};
pub use inspect::{
    CorruptHeader, DanglingFirstKept, DanglingParent, DuplicateId, InvalidLeafControl,
    MalformedLine, OpenReport,
};
pub use io::Durability;
pub use list::{
    InfoReader, SessionInfo, find_most_recent_session, is_valid_session_file, list, list_all,
    load_entries, session_info,
};
pub use lock::{LockError, LockOptions, SessionWriteLock, WriteLockGuard};
pub use manager::Sessions;
pub use manager::{
    ContextGap, ContextKind, ContextMessage, ContextModel, EntryError, EntryRef,
    FENCED_REWRITE_ATTEMPTS, FileRow, FileRowClass, NewSessionOptions, OpenParams, Payload,
    ReadOnlyOpen, SessionContext, SessionManager, SessionTree, TreeNode, TreeShape,
    remember_written_entries,
};
pub use names::{
    InvalidName, MAX_NAME_BYTES, NameKind, NameRule, NameRules, broken_rule, validate_name,
};
pub use repair::{
    RepairLevel, RepairMessage, RepairOptions, RepairOutcome, RepairSkip, RepairSnapshot,
    invalidate_repair_cache, repair_session_file_if_needed, repair_session_file_with,
};
pub use rows::MessageRole;
pub use snapshot::{SessionFileSnapshot, SnapshotSync, WriteOwner};
pub use storage::{
    FileStorage, MEM_STORAGE_DEV, MemStorage, Replace, SnapshotRead, Storage, with_write_lock,
};
