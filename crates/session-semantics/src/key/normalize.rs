//! Id and key normalisation (openclaw-jsonl.md §5.1; OpenClaw 2026.6.11
//! `src/routing/session-key.ts`, `src/routing/account-id.ts`, `src/sessions/session-key-utils.ts`).
//!
//! Checked against the reference with the corpus of `tests/data/session-key-corpus.jsonl`.

use crate::js;

/// The agent id used when none (or only invalid characters) is given.
pub const DEFAULT_AGENT_ID: &str = "main";
/// The default main session key (`session.mainKey`).
pub const DEFAULT_MAIN_KEY: &str = "main";
/// The account id used when none (or only invalid characters) is given.
pub const DEFAULT_ACCOUNT_ID: &str = "default";
/// Longest agent or account id, in characters.
pub const MAX_ID_LEN: usize = 64;

/// `/^[a-z0-9][a-z0-9_-]{0,63}$/i`.
fn is_valid_id_shape(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= MAX_ID_LEN
        && b[0].is_ascii_alphanumeric()
        && b[1..]
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
}

/// Lowercases, turns every run of characters outside `[a-z0-9_-]` into one `-`, strips leading
/// and trailing `-`, and keeps the first 64 characters (an id that is already valid is only
/// lowercased).
pub(crate) fn canonicalize_id(trimmed: &str) -> String {
    let lowered = trimmed.to_lowercase();
    if is_valid_id_shape(trimmed) {
        return lowered;
    }
    let mut out = String::with_capacity(lowered.len());
    let mut in_run = false;
    for c in lowered.chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-' {
            out.push(c);
            in_run = false;
        } else if !in_run {
            out.push('-');
            in_run = true;
        }
    }
    let stripped = out.trim_matches('-');
    // Every character left is ASCII, so a byte slice is a character slice.
    stripped[..stripped.len().min(MAX_ID_LEN)].to_owned()
}

/// `normalizeAgentId`: trimmed; a valid id (`[a-z0-9][a-z0-9_-]{0,63}`, any case) is
/// lowercased; anything else is lowercased, runs of other characters become `-`, leading and
/// trailing `-` go, and the result is cut to 64 characters. Empty falls back to `main`.
pub fn normalize_agent_id(value: &str) -> String {
    let trimmed = js::trim(value);
    if trimmed.is_empty() {
        return DEFAULT_AGENT_ID.to_owned();
    }
    let id = canonicalize_id(trimmed);
    if id.is_empty() {
        DEFAULT_AGENT_ID.to_owned()
    } else {
        id
    }
}

/// `isValidAgentId`: the trimmed value matches `[a-z0-9][a-z0-9_-]{0,63}` (any case).
pub fn is_valid_agent_id(value: &str) -> bool {
    is_valid_id_shape(js::trim(value))
}

/// `normalizeAccountId`: as [`normalize_agent_id`], with `default` as the fallback, and the
/// object-prototype names `__proto__`, `prototype` and `constructor` refused (→ `default`).
pub fn normalize_account_id(value: &str) -> String {
    let trimmed = js::trim(value);
    if trimmed.is_empty() {
        return DEFAULT_ACCOUNT_ID.to_owned();
    }
    let id = canonicalize_id(trimmed);
    if id.is_empty() || matches!(id.as_str(), "__proto__" | "prototype" | "constructor") {
        DEFAULT_ACCOUNT_ID.to_owned()
    } else {
        id
    }
}

/// `normalizeMainKey`: trimmed and lowercased; `main` when empty or absent.
pub fn normalize_main_key(value: Option<&str>) -> String {
    let key = js::lower_trim(value.unwrap_or(""));
    if key.is_empty() {
        DEFAULT_MAIN_KEY.to_owned()
    } else {
        key
    }
}

/// Channels whose peer ids are opaque and case-sensitive for the given peer kinds: Signal
/// groups (one segment) and Matrix rooms and channels (the rest of the key, up to a
/// `:thread:` marker).
const SIGNAL: &str = "signal";
const MATRIX: &str = "matrix";
const MATRIX_KINDS: [&str; 2] = ["channel", "group"];

/// True when `(channel, peer_kind)` owns a case-sensitive peer id (`isCasePreservingPeer`):
/// `signal` + `group`, `matrix` + `channel` or `group`.
pub fn is_case_preserving_peer(channel: &str, peer_kind: &str) -> bool {
    let c = js::lower_trim(channel);
    let k = js::lower_trim(peer_kind);
    (c == SIGNAL && k == "group") || (c == MATRIX && MATRIX_KINDS.contains(&k.as_str()))
}

/// `normalizeSessionPeerId`: trimmed; lowercased unless the peer is case-preserving.
pub fn normalize_peer_id(channel: &str, peer_kind: &str, peer_id: &str) -> String {
    let peer = js::trim(peer_id);
    if peer.is_empty() {
        return String::new();
    }
    if is_case_preserving_peer(channel, peer_kind) {
        peer.to_owned()
    } else {
        peer.to_lowercase()
    }
}

#[derive(Clone, Copy, Debug)]
struct Span {
    start: usize,
    end: usize,
    trim: bool,
}

/// `[^:]+` at `at`: the end of the run of non-colon units (`None` when empty).
fn non_colon_run(u: &[u16], at: usize) -> Option<usize> {
    let n = u[at.min(u.len())..]
        .iter()
        .take_while(|&&c| c != u16::from(b':'))
        .count();
    (n > 0).then_some(at + n)
}

/// `(^|:)signal:group:([^:]+)` with flags `gi`: the captured segments.
fn signal_spans(u: &[u16], spans: &mut Vec<Span>) {
    const PREFIX: &str = "signal:group:";
    let mut i = 0;
    while i < u.len() {
        let body = if i == 0 && js::starts_with_ci(u, 0, PREFIX) {
            Some(0)
        } else if u[i] == u16::from(b':') && js::starts_with_ci(u, i + 1, PREFIX) {
            Some(i + 1)
        } else {
            None
        };
        if let Some(body) = body {
            let seg_start = body + PREFIX.len();
            if let Some(end) = non_colon_run(u, seg_start) {
                spans.push(Span {
                    start: seg_start,
                    end,
                    trim: true,
                });
                i = end;
                continue;
            }
        }
        i += 1;
    }
}

/// The tail span of a Matrix key starting at `tail_start` (`collectTailSpan`). The marker is
/// searched in the trimmed, lowercased tail and its index applied to the raw tail, as the
/// reference does.
fn tail_spans(u: &[u16], tail_start: usize, spans: &mut Vec<Span>) {
    if tail_start >= u.len() {
        return;
    }
    let folded = js::lower_trim_units(&u[tail_start..]);
    match js::last_index_of(&folded, &js::units(":thread:")) {
        None => spans.push(Span {
            start: tail_start,
            end: u.len(),
            trim: false,
        }),
        Some(marker) => {
            spans.push(Span {
                start: tail_start,
                end: tail_start + marker,
                trim: false,
            });
            let thread_start = tail_start + marker + 8;
            if thread_start < u.len() {
                spans.push(Span {
                    start: thread_start,
                    end: u.len(),
                    trim: false,
                });
            }
        }
    }
}

/// `^agent:[^:]+:<channel>:<kind>:` (case-insensitive): the length of the match.
fn scoped_prefix(u: &[u16], channel: &str, kind: &str) -> Option<usize> {
    if !js::starts_with_ci(u, 0, "agent:") {
        return None;
    }
    let after_agent = non_colon_run(u, 6)?;
    let rest = format!(":{channel}:{kind}:");
    js::starts_with_ci(u, after_agent, &rest).then_some(after_agent + rest.len())
}

fn collect_spans(u: &[u16]) -> Vec<Span> {
    let mut spans = Vec::new();
    signal_spans(u, &mut spans);
    for kind in MATRIX_KINDS {
        if let Some(len) = scoped_prefix(u, MATRIX, kind) {
            tail_spans(u, len, &mut spans);
            continue;
        }
        let unscoped = format!("{MATRIX}:{kind}:");
        if js::starts_with_ci(u, 0, &unscoped) {
            tail_spans(u, unscoped.len(), &mut spans);
        }
    }
    spans
}

/// `normalizeSessionKeyPreservingOpaquePeerIds`: the key trimmed and lowercased, except the
/// opaque peer spans: the segment after `signal:group:` keeps its case (trimmed), and a Matrix
/// `…matrix:(channel|group):` key keeps the rest of the key, or the part up to the last
/// `:thread:` and the thread id after it. Text between spans is trimmed and lowercased piece by
/// piece, as the reference does.
pub fn normalize_session_key(raw: &str) -> String {
    let raw = js::trim(raw);
    if raw.is_empty() {
        return String::new();
    }
    let folded = raw.to_lowercase();
    if !folded.contains("signal:") && !folded.contains("matrix:") {
        return folded;
    }
    let u = js::units(raw);
    let mut spans: Vec<Span> = collect_spans(&u)
        .into_iter()
        .filter(|s| s.end > s.start)
        .collect();
    spans.sort_by_key(|s| s.start);
    let mut out: Vec<u16> = Vec::with_capacity(u.len());
    let mut cursor = 0;
    for span in spans {
        if span.start < cursor {
            continue;
        }
        out.extend(js::lower_trim_units(&u[cursor..span.start]));
        let preserved = &u[span.start..span.end];
        if span.trim {
            out.extend(js::trim_units(preserved));
        } else {
            out.extend_from_slice(preserved);
        }
        cursor = span.end;
    }
    out.extend(js::lower_trim_units(&u[cursor..]));
    js::from_units(&out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_ids() {
        assert_eq!(normalize_agent_id(" Main "), "main");
        assert_eq!(normalize_agent_id(""), "main");
        assert_eq!(
            normalize_agent_id("Agent not found: xyz"),
            "agent-not-found-xyz"
        );
        assert_eq!(normalize_agent_id("../../../etc/passwd"), "etc-passwd");
        assert_eq!(normalize_agent_id("!!!"), "main");
        assert_eq!(normalize_agent_id(&"a".repeat(65)), "a".repeat(64));
        assert_eq!(normalize_agent_id("\u{212a}elvin"), "kelvin");
        assert!(is_valid_agent_id(" ops_2 "));
        assert!(!is_valid_agent_id(""));
        assert!(!is_valid_agent_id("Agent not found: xyz"));
        assert!(!is_valid_agent_id("../../../etc/passwd"));
        assert!(!is_valid_agent_id(&"a".repeat(65)));
        assert!(is_valid_agent_id(&"a".repeat(64)));
    }

    #[test]
    fn account_ids() {
        assert_eq!(normalize_account_id(""), "default");
        assert_eq!(normalize_account_id("Work Phone"), "work-phone");
        assert_eq!(normalize_account_id("__proto__"), "default");
        assert_eq!(normalize_account_id("Constructor"), "default");
    }

    #[test]
    fn opaque_peers_keep_case() {
        assert_eq!(
            normalize_session_key(" Agent:Main:Signal:Group:AbC= :Thread:X "),
            "agent:main:signal:group:AbC=:thread:x"
        );
        assert_eq!(
            normalize_session_key("AGENT:Ops:Matrix:Channel:!RoomA:Server.Org:Thread:$EvT"),
            "agent:ops:matrix:channel:!RoomA:Server.Org:thread:$EvT"
        );
        assert_eq!(
            normalize_session_key("Matrix:Group:!R:S"),
            "matrix:group:!R:S"
        );
        assert_eq!(normalize_session_key("AGENT:Main:Hook"), "agent:main:hook");
    }
}
