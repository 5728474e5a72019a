//! Persistence for session transcripts: the SessionManager, its indexes and tree queries, context
//! building, the flush rules, snapshots, the cross-process write lock, atomic rewrites and repair.
//! Filled by the session-store issue.
#![warn(missing_docs)]
