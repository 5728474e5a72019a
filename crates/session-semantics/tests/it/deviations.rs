//! The session-semantics rows of docs/DEVIATIONS.md, pinned: where the typed API differs from
//! OpenClaw 2026.6.11 on purpose. The reference's values quoted here were printed by the
//! installed reference (`parseAgentSessionKey`, `parseThreadSessionSuffix`, `parseByteSize`);
//! the reference-exact functions of this crate still return them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use session_semantics::key::{self, ParseKeyError, SessionKey};
use session_semantics::policy::parse_byte_size;

/// D20: a typed key is its normalised text (the key OpenClaw persists), so it must start with
/// `agent:<agentId>:` itself. Keys the reference parses with blanks or empty segments before
/// the rest are refused: OpenClaw stores them apart from `agent:<agentId>:<rest>` (values
/// printed by the installed reference's `parseAgentSessionKey` and `resolveSessionStoreKey`).
#[test]
fn keys_with_blanks_or_empty_segments_before_the_rest_are_refused() {
    // The reference: {agentId: "main", rest: "x"}, persisted as "agent::main:x".
    assert_eq!(
        key::parse_agent_session_key("agent::main:x"),
        Some(("main".to_owned(), "x".to_owned()))
    );
    assert_eq!(
        SessionKey::parse("agent::main:x"),
        Err(ParseKeyError::NotCanonicalPrefix {
            key: "agent::main:x".to_owned(),
            normalized: "agent::main:x".to_owned(),
            agent_id: "main".to_owned(),
        })
    );
    // {agentId: "ops", rest: "x"}, persisted as "agent: ops :x".
    let err = SessionKey::parse("Agent: OPS :x").unwrap_err();
    assert_eq!(
        err.to_string(),
        "session key \"Agent: OPS :x\": its normalised form \"agent: ops :x\" does not start with \"agent:ops:\" (no empty segments or blanks may come before the rest)"
    );
    assert!(matches!(
        SessionKey::parse(":agent:main:x"),
        Err(ParseKeyError::NotCanonicalPrefix { .. })
    ));
}

/// What D20 used to refuse now round-trips: a rest ending in whitespace before a final `:`
/// keeps the `:` in the canonical text (the reference's persisted key), so the printed key
/// reads back as itself.
#[test]
fn a_rest_ending_in_whitespace_keeps_its_colon_and_round_trips() {
    // The reference: {agentId: "main", rest: "foo "}, persisted as "agent:main:foo :".
    assert_eq!(
        key::parse_agent_session_key("agent:main:foo :"),
        Some(("main".to_owned(), "foo ".to_owned()))
    );
    let k = SessionKey::parse("agent:main:foo :").unwrap();
    assert_eq!(k.rest(), "foo ");
    assert_eq!(k.store_rest(), "foo :");
    assert_eq!(k.to_string(), "agent:main:foo :");
    assert_eq!(SessionKey::parse(&k.to_string()), Ok(k.clone()));
    // Without the trailing `:` the whole key is trimmed: another key.
    let trimmed = SessionKey::parse("agent:main:foo ").unwrap();
    assert_eq!(trimmed.to_string(), "agent:main:foo");
    assert_ne!(trimmed, k);
}

#[test]
fn thread_info_splits_at_the_last_marker_of_the_key_itself() {
    let raw = "agent:main:signal:group:İİ:thread:t1";
    // The reference searches a lowercased copy (`İ` lowercases to two UTF-16 units) and cuts
    // the original at that index: {baseSessionKey: "agent:main:signal:group:İİ:t"}, no thread.
    let suffix = key::parse_thread_suffix(raw);
    assert_eq!(
        suffix.base_key.as_deref(),
        Some("agent:main:signal:group:İİ:t")
    );
    assert_eq!(suffix.thread_id, None);
    // The typed key keeps the Signal group id's case and finds the marker in its own text.
    let k = SessionKey::parse(raw).unwrap();
    assert_eq!(k.to_string(), raw);
    let (parent, thread) = k.thread_info().unwrap();
    assert_eq!(parent.to_string(), "agent:main:signal:group:İİ");
    assert_eq!(thread, "t1");
    // The last marker wins, as in the reference.
    let nested = SessionKey::parse("agent:main:x:thread:a:thread:b").unwrap();
    let (parent, thread) = nested.thread_info().unwrap();
    assert_eq!(parent.to_string(), "agent:main:x:thread:a");
    assert_eq!(thread, "b");
}

#[test]
fn byte_sizes_of_2_pow_64_or_more_are_errors() {
    // The largest double below 2^64 is still a size.
    assert_eq!(
        parse_byte_size("18446744073709549568").unwrap(),
        18_446_744_073_709_549_568
    );
    // The reference returns the float 18446744073709552000 for these.
    for raw in ["18446744073709551616", "16777216tb", "99999999999999999999"] {
        let err = parse_byte_size(raw).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "invalid byte size {raw:?}: too large (use values like 512kb, 10mb, 1gb or 500)"
            )
        );
    }
}
