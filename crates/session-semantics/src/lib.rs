//! Session keys, kinds, store layout, lifecycle and transcript events, and policies (history
//! limits, per-channel overrides, reset, retention). Filled by the session-semantics issue.
#![warn(missing_docs)]
