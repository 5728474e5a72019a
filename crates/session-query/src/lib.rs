//! Queries over whole session stores, for the `sessions search` and `sessions usage` commands
//! and the dashboard: [`search`] finds a literal or a regex on every branch of every session
//! (JSON escapes decoded, each hit marked on or off the current branch); [`usage`] sums the
//! token usage and cost of assistant messages, grouped by day, month, model, session or agent.
//!
//! Both work on a session's bytes as read (any `session_store::Storage`), never write, and sit
//! beside `session-semantics` above `session-store`.

pub mod search;
pub mod usage;
