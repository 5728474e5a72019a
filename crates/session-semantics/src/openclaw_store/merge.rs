//! Merging a patch into a store entry as every entry-level write of the reference does
//! (openclaw-store.md §3.1, R3.1–R3.4, `mergeSessionEntry`): `{...existing, ...patch}` with the
//! `updatedAt`, `sessionStartedAt`, `sessionFile` and `modelProvider` rules.

use session_format::json::{JsObject, JsString, JsValue};

use super::StoreEntry;

/// Which `updatedAt` a merge gives an existing row (R3.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum UpdatedAtPolicy {
    /// `max(existing, patch, now)`, each clamped to now: the row's `updatedAt` never goes down
    /// and never passes now (`mergeSessionEntry`).
    #[default]
    Touch,
    /// The existing `updatedAt` is kept (`recordSessionMetaFromInbound` and `updateLastRoute`
    /// on an existing row); the patch's (clamped), else now, when the row has none.
    PreserveActivity,
}

/// A value JavaScript's `??` takes: present and not `null`.
fn defined(value: Option<&JsValue>) -> Option<&JsValue> {
    value.filter(|v| !v.is_null())
}

/// `normalizeOptionalString`: a string, trimmed, non-empty.
fn optional_string(value: Option<&JsValue>) -> Option<String> {
    let text = value?.as_js_string()?.to_str_lossy().into_owned();
    let trimmed = session_format::js::trim(&text);
    (!trimmed.is_empty()).then(|| trimmed.to_owned())
}

/// A timestamp input of the merge: a finite number ≥ 0, clamped to now; else ignored.
fn clamped(value: Option<&JsValue>, now_ms: f64) -> Option<f64> {
    match value {
        Some(JsValue::Number(n)) if n.is_finite() && *n >= 0.0 => Some(n.min(now_ms)),
        _ => None,
    }
}

/// `path.normalize` of a POSIX path: `.` segments and repeated `/` removed, `..` applied where
/// a segment precedes it (kept at the start of a relative path), `.` for an empty result.
fn normalize_posix(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|p| *p != "..") {
                    parts.pop();
                } else if !absolute {
                    parts.push("..");
                }
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    match (absolute, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_owned(),
        (false, false) => joined,
    }
}

/// `path.join(path.dirname(file), base)`.
fn join_dirname(file: &str, base: &str) -> String {
    match file.rfind('/') {
        // `path.dirname("/x")` is `/`.
        Some(0) => format!("/{base}"),
        Some(i) => normalize_posix(&format!("{}/{base}", &file[..i])),
        None => base.to_owned(),
    }
}

/// Whether `prefix` is a fork name's timestamp, `\d{4}-\d{2}-\d{2}T[\w-]+(?:Z|[+-]\d{2}(?:-\d{2})?)?`
/// (`\w` being `[A-Za-z0-9_]`).
fn is_fork_timestamp(prefix: &str) -> bool {
    let b = prefix.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    let date = digits(0..4)
        && b.get(4) == Some(&b'-')
        && digits(5..7)
        && b.get(7) == Some(&b'-')
        && digits(8..10)
        && b.get(10) == Some(&b'T');
    if !date {
        return false;
    }
    let word = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-';
    let rest = &b[11..];
    // `[\w-]+` alone covers a `Z` or `-NN[-NN]` zone; only a `+NN[-NN]` zone needs its own
    // case.
    let body_ok = |body: &[u8]| !body.is_empty() && body.iter().all(word);
    if body_ok(rest) {
        return true;
    }
    let zone = |z: &[u8]| {
        (z.len() == 3 || (z.len() == 6 && z[3] == b'-' && z[4..6].iter().all(u8::is_ascii_digit)))
            && z[0] == b'+'
            && z[1..3].iter().all(u8::is_ascii_digit)
    };
    [3usize, 6].iter().any(|&n| {
        rest.len() > n && zone(&rest[rest.len() - n..]) && body_ok(&rest[..rest.len() - n])
    })
}

/// The reference's `rewriteSessionFileForNewSessionId` (R3.4, R1.10): for a `sessionFile`
/// (trimmed) whose base name is `<previous>.jsonl`, `<previous>-topic-<t>.jsonl` or
/// `<timestamp>_<previous>.jsonl`, the same path with `next` in place of `previous` (the
/// directory part normalised as `path.join` does); `None` for any other name.
pub fn rewrite_session_file(session_file: &str, previous: &str, next: &str) -> Option<String> {
    let trimmed = session_format::js::trim(session_file);
    if trimmed.is_empty() {
        return None;
    }
    let base = trimmed.rsplit('/').next().unwrap_or(trimmed);
    let stem = base.strip_suffix(".jsonl")?;
    if stem == previous {
        return Some(join_dirname(trimmed, &format!("{next}.jsonl")));
    }
    if stem.starts_with(&format!("{previous}-topic-")) {
        return Some(join_dirname(
            trimmed,
            &format!("{next}{}", &base[previous.len()..]),
        ));
    }
    // The regex's greedy `[\w-]+` splits at the last `_` after which a valid timestamp
    // precedes and something follows.
    let split = stem
        .char_indices()
        .filter(|(i, c)| *c == '_' && *i + 1 < stem.len())
        .map(|(i, _)| i)
        .rev()
        .find(|&i| is_fork_timestamp(&stem[..i]))?;
    (&stem[split + 1..] == previous)
        .then(|| join_dirname(trimmed, &format!("{}_{next}.jsonl", &stem[..split])))
}

/// R2.13's model rule as the merge applies it (`normalizeSessionRuntimeModelFields`): `model`
/// and `modelProvider` trimmed; no non-empty string `model` removes both; no non-empty string
/// `modelProvider` removes it.
fn normalise_model_fields(fields: &mut JsObject) {
    let Some(model) = optional_string(fields.get("model")) else {
        fields.remove("model");
        fields.remove("modelProvider");
        return;
    };
    fields.insert("model", JsValue::String(JsString::new(model)));
    match optional_string(fields.get("modelProvider")) {
        Some(provider) => fields.insert("modelProvider", JsValue::String(JsString::new(provider))),
        None => {
            fields.remove("modelProvider");
        }
    }
}

/// [`merge_entry_with`] with the default [`UpdatedAtPolicy::Touch`] and a fresh v4 UUID for a
/// row without `sessionId`.
pub fn merge_entry(existing: Option<&StoreEntry>, patch: &JsObject, now_ms: i64) -> StoreEntry {
    merge_entry_with(existing, patch, now_ms, UpdatedAtPolicy::Touch, || {
        uuid::Uuid::new_v4().to_string()
    })
}

/// The reference's `mergeSessionEntryWithPolicy` (R3.1–R3.4), at `now_ms` (epoch ms):
/// - the fields of `existing` in order, then the patch's: an existing field keeps its
///   position, a new one goes last (R2.20);
/// - `sessionId`: the patch's, else the existing one, else `new_id()` (`randomUUID`);
/// - `updatedAt` per `policy` (R3.2); inputs that are not finite numbers ≥ 0 are ignored;
/// - `sessionStartedAt`: the patch's; else, for the same `sessionId`, the existing one (absent
///   stays absent); else (a new row or a new id) the merged `updatedAt` (R3.3);
/// - a changed `sessionId` rewrites `sessionFile` (the patch's when it has one, else the
///   existing one) from the old id to the new one ([`rewrite_session_file`], R3.4);
/// - a patch that sets a different non-empty `model` without a `modelProvider` drops the
///   existing `modelProvider`; then the model fields are normalised (R2.13).
///
/// A JSON `null` in the patch is a value (it is stored), except where the reference uses `??`
/// (`sessionId`, `sessionStartedAt`), where it counts as absent.
pub fn merge_entry_with(
    existing: Option<&StoreEntry>,
    patch: &JsObject,
    now_ms: i64,
    policy: UpdatedAtPolicy,
    new_id: impl FnOnce() -> String,
) -> StoreEntry {
    #[allow(clippy::cast_precision_loss)]
    let now = now_ms as f64;
    let old = existing.map(StoreEntry::fields);
    let session_id = defined(patch.get("sessionId"))
        .or_else(|| defined(old.and_then(|o| o.get("sessionId"))))
        .cloned()
        .unwrap_or_else(|| JsValue::String(JsString::new(new_id())));
    let existing_updated = clamped(old.and_then(|o| o.get("updatedAt")), now);
    let patch_updated = clamped(patch.get("updatedAt"), now);
    let updated_at = match (policy, old) {
        (UpdatedAtPolicy::PreserveActivity, Some(_)) => {
            existing_updated.or(patch_updated).unwrap_or(now)
        }
        _ => existing_updated
            .unwrap_or(0.0)
            .max(patch_updated.unwrap_or(0.0))
            .max(now),
    };
    let mut next = old.cloned().unwrap_or_default();
    for (k, v) in patch.iter() {
        next.insert(k.clone(), v.clone());
    }
    next.insert("sessionId", session_id.clone());
    next.insert("updatedAt", JsValue::Number(updated_at));
    let same_id = old.is_some_and(|o| o.get("sessionId") == Some(&session_id));
    let started = defined(patch.get("sessionStartedAt")).cloned().or_else(|| {
        if same_id {
            old.and_then(|o| defined(o.get("sessionStartedAt")))
                .cloned()
        } else {
            Some(JsValue::Number(updated_at))
        }
    });
    match started {
        Some(v) => next.insert("sessionStartedAt", v),
        None => {
            next.remove("sessionStartedAt");
        }
    }
    if let Some(old) = old {
        if !same_id
            && let Some(previous) = old.get("sessionId").and_then(|v| v.as_js_string())
            && let Some(next_id) = session_id.as_js_string()
        {
            let file = if patch.contains_key("sessionFile") {
                patch.get("sessionFile")
            } else {
                old.get("sessionFile")
            };
            if let Some(file) = file.and_then(|f| f.as_js_string())
                && let Some(rewritten) = rewrite_session_file(
                    &file.to_str_lossy(),
                    &previous.to_str_lossy(),
                    &next_id.to_str_lossy(),
                )
            {
                next.insert("sessionFile", JsValue::String(JsString::new(rewritten)));
            }
        }
        if patch.contains_key("model") && !patch.contains_key("modelProvider") {
            let patched = optional_string(patch.get("model"));
            if patched.is_some() && patched != optional_string(old.get("model")) {
                next.remove("modelProvider");
            }
        }
    }
    normalise_model_fields(&mut next);
    StoreEntry::from_fields(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn posix_normalize_is_nodes() {
        assert_eq!(normalize_posix("a/./b//c/../d"), "a/b/d");
        assert_eq!(normalize_posix("/../x"), "/x");
        assert_eq!(normalize_posix("../x"), "../x");
        assert_eq!(normalize_posix("a/.."), ".");
    }

    #[test]
    fn fork_timestamps() {
        assert!(is_fork_timestamp("2026-06-11T09-00-00-000Z"));
        assert!(is_fork_timestamp("2026-06-11T09-00-00+02"));
        assert!(is_fork_timestamp("2026-06-11T09-00-00+02-30"));
        assert!(!is_fork_timestamp("2026-06-11T"));
        assert!(!is_fork_timestamp("2026-06-11 09"));
        assert!(!is_fork_timestamp("20260611T09"));
    }
}
