//! Key resolution for reads and entry-level writes (openclaw-store.md §2.6, R2.17–R2.18; the
//! reference's `resolveSessionStoreEntry`): which stored entry a requested key addresses, and
//! which other stored keys are its legacy aliases (deleted by an entry-level write).

use indexmap::IndexMap;
use session_format::json::{JsString, JsValue, number_to_string};

use super::{ResolvedKey, StoreEntry};
use crate::js;
use crate::key::{normalize_session_key, parse_thread_suffix, requires_folded_alias_proof};

type Candidate<'a> = (&'a JsString, &'a StoreEntry);

/// `resolveSessionStoreEntry` (R2.17–R2.18) over `entries` in file order; see
/// [`super::SessionStore::resolve`] for the rules.
pub(super) fn resolve<'a>(
    entries: &'a IndexMap<JsString, StoreEntry>,
    requested: &str,
) -> Option<ResolvedKey<'a>> {
    let trimmed = js::trim(requested);
    let normalized = normalize_session_key(trimmed);
    let proof = requires_folded_alias_proof(&normalized);
    let get = |key: &str| entries.get_key_value(&JsString::new(key));
    let mismatched = |entry: Option<&StoreEntry>| {
        proof && entry.is_some_and(|e| has_mismatched_delivery_proof(e, &normalized))
    };
    let mut legacy: Vec<String> = Vec::new();

    // The trimmed raw key, when it differs from the normalised one.
    let trimmed_entry = get(trimmed);
    if trimmed != normalized && trimmed_entry.is_some() && !mismatched(trimmed_entry.map(|c| c.1)) {
        add_legacy(&mut legacy, trimmed.to_owned());
    }

    // The folded lowercase aliases: the newest confirmed one (the first on a tie).
    let mut folded: Option<Candidate<'a>> = None;
    let mut folded_ts = 0.0;
    for alias in folded_alias_candidates(&normalized) {
        let Some(candidate) = get(&alias) else {
            continue;
        };
        if !is_confirmed_lowercased_alias(candidate.1, &normalized, proof) {
            continue;
        }
        add_legacy(&mut legacy, alias);
        let ts = updated_at(candidate.1);
        if folded.is_none() || ts > folded_ts {
            folded = Some(candidate);
            folded_ts = ts;
        }
    }

    let exact = get(&normalized).filter(|c| !mismatched(Some(c.1)));
    let fallback = trimmed_entry.filter(|c| !legacy.is_empty() && !mismatched(Some(c.1)));

    // Keys that need a proof: the exact key wins outright; others: the newest candidate.
    let mut existing: Option<Candidate<'a>> = None;
    let mut existing_ts = 0.0;
    if proof {
        if let Some(first) = exact.or(folded).or(fallback) {
            existing = Some(first);
            existing_ts = updated_at(first.1);
        }
    } else {
        for candidate in [exact, folded, fallback].into_iter().flatten() {
            consider(candidate, &mut existing, &mut existing_ts);
        }
    }

    // Every other stored key whose normalised form is the request's, in file order.
    for candidate in entries {
        let key = candidate.0.to_str_lossy();
        if key == normalized || normalize_session_key(&key) != normalized {
            continue;
        }
        if mismatched(Some(candidate.1)) {
            continue;
        }
        add_legacy(&mut legacy, key.into_owned());
        consider(candidate, &mut existing, &mut existing_ts);
    }

    let (key, entry) = existing?;
    Some(ResolvedKey {
        normalized_key: normalized,
        stored_key: key.to_str_lossy().into_owned(),
        entry,
        legacy_keys: legacy,
    })
}

/// Appends `key` unless it is already listed (the reference's insertion-ordered set).
fn add_legacy(legacy: &mut Vec<String>, key: String) {
    if !legacy.contains(&key) {
        legacy.push(key);
    }
}

/// Takes `candidate` when nothing is taken yet or it is strictly newer.
fn consider<'a>(
    candidate: Candidate<'a>,
    existing: &mut Option<Candidate<'a>>,
    existing_ts: &mut f64,
) {
    let ts = updated_at(candidate.1);
    if existing.is_none() || ts > *existing_ts {
        *existing = Some(candidate);
        *existing_ts = ts;
    }
}

/// `updatedAt ?? 0`. A loaded entry's `updatedAt` is a finite non-negative number or absent
/// (load replaces anything else with 0, R2.14's normalisation), so a number compare is the
/// reference's `>`.
fn updated_at(entry: &StoreEntry) -> f64 {
    entry.updated_at().unwrap_or(0.0)
}

/// `foldedSessionKeyAliasCandidates` (R2.17): the normalised key lowercased (when that
/// differs), and for keys needing a proof with a thread suffix, the base lowercased with the
/// thread id kept (`<base lowercased>:thread:<id>`, when the base changes). Distinct, in that
/// order.
fn folded_alias_candidates(normalized: &str) -> Vec<String> {
    let mut aliases: Vec<String> = Vec::new();
    let folded = js::lower_trim(normalized);
    if folded != normalized {
        aliases.push(folded);
    }
    if requires_folded_alias_proof(normalized) {
        let suffix = parse_thread_suffix(normalized);
        if let (Some(base), Some(thread)) = (suffix.base_key, suffix.thread_id) {
            let folded_base = js::lower_trim(&base);
            let alias = format!("{folded_base}:thread:{thread}");
            if !base.is_empty() && folded_base != base && !aliases.contains(&alias) {
                aliases.push(alias);
            }
        }
    }
    aliases
}

/// `normalizeEntryTarget`: a string trimmed and cut to start at its first `!` or `#` (a Matrix
/// room id or alias), if it has one; anything else is `""`.
fn normalize_entry_target(value: Option<&JsValue>) -> String {
    let Some(text) = value.and_then(JsValue::as_str_lossy) else {
        return String::new();
    };
    let trimmed = js::trim(&text);
    match trimmed.find(['!', '#']) {
        Some(at) => trimmed[at..].to_owned(),
        None => trimmed.to_owned(),
    }
}

/// `entryDeliveryTargets`: the non-empty targets of `deliveryContext.to`, `lastTo`,
/// `origin.nativeChannelId`, `origin.to` and `groupId`, in that order
/// ([`normalize_entry_target`]).
fn entry_delivery_targets(entry: &StoreEntry) -> Vec<String> {
    let fields = entry.fields();
    let nested = |outer: &str, inner: &str| fields.get(outer).and_then(|o| o.get(inner));
    [
        nested("deliveryContext", "to"),
        fields.get("lastTo"),
        nested("origin", "nativeChannelId"),
        nested("origin", "to"),
        fields.get("groupId"),
    ]
    .into_iter()
    .map(normalize_entry_target)
    .filter(|t| !t.is_empty())
    .collect()
}

/// `entryThreadId`: the first of `deliveryContext.threadId`, `lastThreadId`,
/// `origin.threadId` that is present and not `null`; a string trimmed, a number as JavaScript
/// prints it, anything else `""`.
fn entry_thread_id(entry: &StoreEntry) -> String {
    let fields = entry.fields();
    let value = present(
        fields
            .get("deliveryContext")
            .and_then(|o| o.get("threadId")),
    )
    .or_else(|| present(fields.get("lastThreadId")))
    .or_else(|| present(fields.get("origin").and_then(|o| o.get("threadId"))));
    match value {
        Some(JsValue::String(s)) => js::trim(&s.to_str_lossy()).to_owned(),
        Some(JsValue::Number(n)) => number_to_string(*n),
        _ => String::new(),
    }
}

/// `value ?? …`: present and not `null`.
fn present(value: Option<&JsValue>) -> Option<&JsValue> {
    value.filter(|v| !matches!(v, JsValue::Null))
}

/// The base key (before the last `:thread:`) and the thread id of a normalised key.
fn base_and_thread(normalized: &str) -> (String, Option<String>) {
    let suffix = parse_thread_suffix(normalized);
    (
        suffix.base_key.unwrap_or_else(|| normalized.to_owned()),
        suffix.thread_id,
    )
}

/// `isConfirmedLowercasedLegacyAlias` (R2.17): a folded alias entry counts when the key needs
/// no proof; otherwise one of its delivery targets must occur in the requested base key and,
/// for a thread key, its thread id must equal the requested one.
fn is_confirmed_lowercased_alias(entry: &StoreEntry, normalized: &str, proof: bool) -> bool {
    if !proof {
        return true;
    }
    let (base, thread) = base_and_thread(normalized);
    if !entry_delivery_targets(entry)
        .iter()
        .any(|t| base.contains(t.as_str()))
    {
        return false;
    }
    match thread {
        None => true,
        Some(thread) => entry_thread_id(entry) == thread,
    }
}

/// `hasMismatchedCaseSensitiveDeliveryProof` (R2.17; only asked for keys needing a proof): the
/// entry has delivery targets and none occurs in the requested base key, or it has a thread id
/// that differs from the requested one.
fn has_mismatched_delivery_proof(entry: &StoreEntry, normalized: &str) -> bool {
    let (base, thread) = base_and_thread(normalized);
    let targets = entry_delivery_targets(entry);
    if !targets.is_empty() && !targets.iter().any(|t| base.contains(t.as_str())) {
        return true;
    }
    let stored = entry_thread_id(entry);
    matches!(thread, Some(thread) if !stored.is_empty() && stored != thread)
}
