//! Classification of parsed rows (openclaw-jsonl.md §1.5, Gen J rules): the header, recognised
//! entries, leaf controls, parent-linked opaque rows and plain opaque rows.

use crate::entry::EntryType;
use crate::json::{Envelope, Field, ValueKind};

/// How the index treats a parsed row that is not the header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowClass {
    /// A `type:"session"` object with a string `id`: the header when it is the first parsed row,
    /// otherwise an opaque row that never takes part in navigation.
    Session,
    /// A recognised entry type (see [`EntryType::is_recognised`]) with a non-empty string `id`.
    Entry(EntryType),
    /// `type:"leaf"` — a leaf control if its full shape checks out
    /// ([`crate::entry::LeafControl::from_row`]), else a plain opaque row.
    LeafCandidate,
    /// Any other object with a non-empty string `id`, `parentId` present as string or null, and a
    /// type other than `session`/`leaf`: its id links the chain but it is not an entry.
    ParentLinkedOpaque,
    /// A known entry type without an id in a file whose header version is below 2: a legacy row
    /// that the v1 migration will give an id and parent.
    LegacyEntry(EntryType),
    /// Anything else: preserved, positioned, never navigated (non-objects, id-less objects,
    /// malformed known types without an id, session rows without a string id).
    Opaque,
}

impl RowClass {
    /// True for rows that are entries of the session.
    pub fn is_entry(self) -> bool {
        matches!(self, RowClass::Entry(_))
    }
}

/// Classifies a parsed row by its envelope (Gen J: a recognised type plus a non-empty string
/// id, whatever the body; checked against OpenClaw 2026.6.11, where `reset` rows are still
/// parent-linked opaque rows).
///
/// `type:"leaf"` rows are [`RowClass::LeafCandidate`] whatever their id; rows of known types
/// other than `leaf` without a usable id fall through to the opaque classes, so a v1 row (no id)
/// is [`RowClass::Opaque`] until it is migrated.
pub fn classify(env: &Envelope<'_>) -> RowClass {
    if env.kind != ValueKind::Object {
        return RowClass::Opaque;
    }
    let ty = env.r#type.as_str();
    match ty {
        Some("session") => {
            return if matches!(env.id, Field::Str(_)) {
                RowClass::Session
            } else {
                RowClass::Opaque
            };
        }
        Some("leaf") => return RowClass::LeafCandidate,
        _ => {}
    }
    let has_id = env.id.is_non_empty_str();
    if has_id {
        if let Some(kind) = ty.and_then(EntryType::parse).filter(|k| k.is_recognised()) {
            return RowClass::Entry(kind);
        }
        if matches!(env.parent_id, Field::Null | Field::Str(_)) {
            return RowClass::ParentLinkedOpaque;
        }
    }
    RowClass::Opaque
}

/// Classifies a row of a file whose header has `header_version` (JavaScript comparison, see
/// [`crate::migrate::js_version_number`]): as [`classify`], except that a known type without an
/// id is a [`RowClass::LegacyEntry`] when the version is below 2.
pub fn classify_in(env: &Envelope<'_>, header_version: f64) -> RowClass {
    let class = classify(env);
    if class == RowClass::Opaque
        && header_version < 2.0
        && !env.id.is_non_empty_str()
        && let Some(kind) = env.r#type.as_str().and_then(EntryType::parse)
        && kind.is_recognised()
    {
        return RowClass::LegacyEntry(kind);
    }
    class
}

/// True when the envelope is a readable header: an object with `type:"session"` and a string
/// `id` (openclaw-jsonl.md §1.2).
pub fn is_readable_header(env: &Envelope<'_>) -> bool {
    env.kind == ValueKind::Object
        && env.r#type.as_str() == Some("session")
        && matches!(env.id, Field::Str(_))
}
