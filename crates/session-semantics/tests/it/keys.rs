//! Session keys: the cases of OpenClaw's `src/routing/session-key.test.ts` (openclaw-jsonl.md
//! §7.7), traversal attempts, and build → parse round trips (proptest).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use pretty_assertions::assert_eq;
use proptest::prelude::*;
use session_semantics::inspect_key;
use session_semantics::key::{
    self, DmScope, IdentityLinks, ParseKeyError, PeerKeyParams, PeerKind, SessionKey,
    build_peer_key, is_valid_agent_id,
};
use session_semantics::kind::{ChatType, KeyShape, classify_key_shape, derive_chat_type};
use session_semantics::layout::{
    self, PathError, SessionFileName, StoreLayout, file_name_for_key, key_for_file_name,
    parse_file_name, validate_file_name,
};

fn key(s: &str) -> SessionKey {
    SessionKey::parse(s).unwrap()
}

// ---------------------------------------------------------------------------------------------
// §7.7

#[test]
fn shape_classification() {
    assert_eq!(classify_key_shape(""), KeyShape::Missing);
    assert_eq!(classify_key_shape("   "), KeyShape::Missing);
    assert_eq!(classify_key_shape("agent:main:main"), KeyShape::Agent);
    assert_eq!(
        classify_key_shape("agent::broken"),
        KeyShape::MalformedAgent
    );
    assert_eq!(classify_key_shape("agent:main"), KeyShape::MalformedAgent);
    assert_eq!(classify_key_shape("AGENT:main"), KeyShape::MalformedAgent);
    assert_eq!(classify_key_shape("telegram:123"), KeyShape::LegacyOrAlias);
    assert_eq!(classify_key_shape("main"), KeyShape::LegacyOrAlias);
    assert_eq!(classify_key_shape("global"), KeyShape::LegacyOrAlias);
}

#[test]
fn legacy_dm_and_direct_are_both_agent_keys() {
    assert_eq!(
        classify_key_shape("agent:main:telegram:dm:123"),
        KeyShape::Agent
    );
    assert_eq!(
        classify_key_shape("agent:main:telegram:direct:123"),
        KeyShape::Agent
    );
    assert_eq!(
        derive_chat_type("agent:main:telegram:dm:123"),
        ChatType::Direct
    );
    assert_eq!(
        derive_chat_type("agent:main:telegram:direct:123"),
        ChatType::Direct
    );
    let legacy = inspect_key("agent:main:telegram:dm:123", None);
    let peer = legacy.peer.unwrap();
    assert_eq!(peer.kind, "direct");
    assert!(peer.legacy_dm);
    assert_eq!(peer.channel.as_deref(), Some("telegram"));
    assert_eq!(peer.peer_id, "123");
}

#[test]
fn subagent_depth() {
    assert_eq!(key::subagent_depth("agent:main:main"), 0);
    assert_eq!(key::subagent_depth("agent:main:subagent:parent"), 1);
    assert_eq!(key::subagent_depth("agent:main:subagent:p:subagent:c"), 2);
    assert_eq!(key::subagent_depth("AGENT:MAIN:SUBAGENT:P:SUBAGENT:C"), 2);
    assert!(key::is_subagent_key("agent:main:subagent:p"));
    assert!(key::is_subagent_key("subagent:p"));
    assert!(!key::is_subagent_key("agent:main:main"));
}

#[test]
fn cron_keys() {
    assert!(key::is_cron_key("agent:main:cron:job-1"));
    assert!(!key::is_cron_run_key("agent:main:cron:job-1"));
    assert!(key::is_cron_key("agent:main:cron:job-1:run:42"));
    assert!(key::is_cron_run_key("agent:main:cron:job-1:run:42"));
    assert!(key::is_cron_run_key("agent:main:cron:job-1:run:42:extra"));
    assert!(!key::is_cron_key("cron:job-1"));
    assert!(!key::is_cron_run_key("cron:job-1:run:42"));
    assert_eq!(
        key::cron_parts("agent:main:cron:job-1:run:42"),
        Some(("job-1".to_owned(), Some("42".to_owned())))
    );
    assert_eq!(
        key::cron_parts("agent:main:cron:job-1"),
        Some(("job-1".to_owned(), None))
    );
}

#[test]
fn chat_types() {
    assert_eq!(
        derive_chat_type("agent:main:discord:group:123"),
        ChatType::Group
    );
    assert_eq!(
        derive_chat_type("agent:main:slack:channel:c01"),
        ChatType::Channel
    );
    assert_eq!(
        derive_chat_type("agent:main:telegram:dm:1"),
        ChatType::Direct
    );
    assert_eq!(
        derive_chat_type("agent:main:discord:guild-1:channel-2"),
        ChatType::Channel
    );
    assert_eq!(
        derive_chat_type("discord:acct:guild-1:channel-2"),
        ChatType::Channel
    );
    assert_eq!(derive_chat_type("agent:main:main"), ChatType::Unknown);
    assert_eq!(derive_chat_type("agent::broken"), ChatType::Unknown);
}

#[test]
fn case_insensitive_parse() {
    let k = key("AGENT:Main:Hook:Webhook:42");
    assert_eq!(k.agent_id(), "main");
    assert_eq!(k.rest(), "hook:webhook:42");
    assert_eq!(k.to_string(), "agent:main:hook:webhook:42");
    assert_eq!(key(" agent:MAIN:MAIN ").to_string(), "agent:main:main");
    // Opaque peer ids keep their case.
    assert_eq!(
        key("Agent:Main:Signal:Group:AbC=").to_string(),
        "agent:main:signal:group:AbC="
    );
    assert_eq!(
        key("AGENT:OPS:MATRIX:CHANNEL:!RoomA:Server.Org:THREAD:$EvT").to_string(),
        "agent:ops:matrix:channel:!RoomA:Server.Org:thread:$EvT"
    );
}

#[test]
fn no_double_prefix() {
    assert_eq!(
        key::to_agent_store_key("main", "agent:main:hook:x", None),
        "agent:main:hook:x"
    );
    assert_eq!(
        key::to_agent_store_key("ops", "AGENT:Main:Hook:X", None),
        "agent:main:hook:x"
    );
    assert_eq!(
        key::to_agent_store_key("ops", "hook:x", None),
        "agent:ops:hook:x"
    );
    assert_eq!(
        key::to_agent_store_key("ops", "main", None),
        "agent:ops:main"
    );
    assert_eq!(
        key::to_agent_store_key("ops", "", Some("Home")),
        "agent:ops:home"
    );
    assert_eq!(
        SessionKey::for_request("ops", "telegram:direct:alice", None)
            .unwrap()
            .to_string(),
        "agent:ops:telegram:direct:alice"
    );
}

#[test]
fn thread_and_topic_info_with_parent_key() {
    let k = key("agent:main:telegram:group:-100:thread:T7");
    let (parent, thread) = k.thread_info().unwrap();
    assert_eq!(parent.to_string(), "agent:main:telegram:group:-100");
    assert_eq!(thread, "t7");
    assert_eq!(k.parent(), Some(parent.clone()));
    assert_eq!(parent.thread("T7").unwrap(), k);
    // Telegram topics are a channel plugin's grammar, which the generic parser does not apply
    // (the reference's core does not either without the plugin loaded).
    assert_eq!(
        key("agent:main:telegram:group:-100:topic:7").thread_info(),
        None
    );
    let last = key::parse_thread_suffix("agent:main:x:THREAD:a:thread:b");
    assert_eq!(last.base_key.as_deref(), Some("agent:main:x:THREAD:a"));
    assert_eq!(last.thread_id.as_deref(), Some("b"));
    let blank = key::parse_thread_suffix("agent:main:x:thread: ");
    assert_eq!(blank.thread_id, None);
}

#[test]
fn valid_agent_ids() {
    assert!(is_valid_agent_id("main"));
    assert!(is_valid_agent_id("Ops_2-x"));
    assert!(!is_valid_agent_id(""));
    assert!(!is_valid_agent_id("Agent not found: xyz"));
    assert!(!is_valid_agent_id("../../../etc/passwd"));
    assert!(!is_valid_agent_id(&"a".repeat(65)));
    assert!(is_valid_agent_id(&"a".repeat(64)));
}

#[test]
fn sentinels_kinds_acp_incognito() {
    use session_semantics::key::Sentinel;
    assert_eq!(key::sentinel(" Global "), Some(Sentinel::Global));
    assert_eq!(key::sentinel("unknown"), Some(Sentinel::Unknown));
    assert_eq!(key::sentinel("agent:main:global"), None);
    assert!(key::is_acp_key("agent:main:acp:x"));
    assert!(key::is_acp_key("acp:x"));
    assert!(key::is_incognito_key("agent:main:dashboard:incognito-abc"));
    assert!(key::is_incognito_key("AGENT:Main:Subagent:Incognito-X"));
    assert!(key::is_incognito_key(
        "agent:main:internal-session-effects:incognito-1"
    ));
    assert!(!key::is_incognito_key("agent:main:dashboard:incognito-"));
    assert!(!key::is_incognito_key("agent:main:dashboard:incognito-a:b"));
    assert!(!key::is_incognito_key("agent:main:hook:incognito-a"));
}

#[test]
fn parse_errors_name_the_segment() {
    assert_eq!(SessionKey::parse("  "), Err(ParseKeyError::Empty));
    assert_eq!(
        SessionKey::parse("telegram:123"),
        Err(ParseKeyError::NotAgentScoped {
            key: "telegram:123".into(),
            found: "telegram".into()
        })
    );
    assert_eq!(
        SessionKey::parse("agent::broken"),
        Err(ParseKeyError::MissingAgentId {
            key: "agent::broken".into()
        })
    );
    assert_eq!(
        SessionKey::parse("agent: :x"),
        Err(ParseKeyError::MissingAgentId {
            key: "agent: :x".into()
        })
    );
    let e = SessionKey::parse("agent:main").unwrap_err();
    assert_eq!(
        e,
        ParseKeyError::MissingRest {
            key: "agent:main".into(),
            agent_id: "main".into()
        }
    );
    assert_eq!(
        e.to_string(),
        "session key \"agent:main\": nothing follows agent id \"main\" (segment 3, the rest, is missing)"
    );
    assert_eq!(
        "telegram:123"
            .parse::<SessionKey>()
            .unwrap_err()
            .to_string(),
        "session key \"telegram:123\": segment 1 is \"telegram\", expected \"agent\" (keys look like agent:<agentId>:<rest>)"
    );
}

#[test]
fn builders() {
    let mut links = IdentityLinks::new();
    links.insert(
        "alice".into(),
        vec!["telegram:111".into(), "discord:999".into()],
    );
    let p = PeerKeyParams {
        agent_id: "Main",
        channel: Some("Telegram"),
        account_id: Some("Work"),
        peer_id: Some("111"),
        identity_links: Some(&links),
        ..PeerKeyParams::default()
    };
    let at = |dm_scope| build_peer_key(&PeerKeyParams { dm_scope, ..p });
    assert_eq!(at(DmScope::Main), "agent:main:main");
    assert_eq!(at(DmScope::PerPeer), "agent:main:direct:alice");
    assert_eq!(
        at(DmScope::PerChannelPeer),
        "agent:main:telegram:direct:alice"
    );
    assert_eq!(
        at(DmScope::PerAccountChannelPeer),
        "agent:main:telegram:work:direct:alice"
    );
    let group = PeerKeyParams {
        peer_kind: PeerKind::Group,
        peer_id: Some("-100ABC"),
        ..p
    };
    assert_eq!(build_peer_key(&group), "agent:main:telegram:group:-100abc");
    assert_eq!(
        SessionKey::main("Ops", Some("Home")).unwrap().to_string(),
        "agent:ops:home"
    );
}

// ---------------------------------------------------------------------------------------------
// Traversal attempts

#[test]
fn traversal_attempts_as_keys() {
    assert_eq!(
        classify_key_shape("../../etc/passwd"),
        KeyShape::LegacyOrAlias
    );
    assert_eq!(
        SessionKey::parse("../../etc/passwd"),
        Err(ParseKeyError::NotAgentScoped {
            key: "../../etc/passwd".into(),
            found: "../../etc/passwd".into()
        })
    );
    let name = |k: &str| file_name_for_key(&key(k)).map_err(|e| e.to_string());
    assert_eq!(
        SessionKey::for_request("main", "../../etc/passwd", None)
            .unwrap()
            .to_string(),
        "agent:main:../../etc/passwd"
    );
    assert_eq!(
        name("agent:main:../../etc/passwd").as_deref(),
        Ok("%2E.%2F..%2Fetc%2Fpasswd.jsonl")
    );
    assert_eq!(name("agent:main:a/b").as_deref(), Ok("a%2Fb.jsonl"));
    assert_eq!(name("agent:main:C:\\x").as_deref(), Ok("c=%5Cx.jsonl"));
    assert_eq!(name("agent:main:nul\0").as_deref(), Ok("nul%00.jsonl"));
    assert_eq!(name("agent:main:..").as_deref(), Ok("%2E..jsonl"));
    let long = format!("agent:main:{}", "x".repeat(300));
    assert_eq!(
        name(&long),
        Err("session file name is 306 bytes long, more than the 255 allowed: \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"".to_owned())
    );
    // Agent ids that are not canonical never name a directory.
    let store = StoreLayout::new("/store");
    match store.session_path(&key("agent:../..:x")) {
        Err(PathError::InvalidAgentId { agent_id, expected }) => {
            assert_eq!((agent_id.as_str(), expected.as_str()), ("../..", "main"));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        store.sessions_dir("Main"),
        Err(PathError::InvalidAgentId { .. })
    ));
    assert_eq!(
        store
            .session_path(&key("agent:main:../../etc/passwd"))
            .unwrap(),
        std::path::Path::new("/store/agents/main/sessions/%2E.%2F..%2Fetc%2Fpasswd.jsonl")
    );
}

#[test]
fn traversal_attempts_as_file_names() {
    let err = |n: &str| validate_file_name(n).unwrap_err().to_string();
    assert_eq!(
        err("../../etc/passwd"),
        "session file name \"../../etc/passwd\" contains '/', which could address another directory"
    );
    assert_eq!(
        err("a/b"),
        "session file name \"a/b\" contains '/', which could address another directory"
    );
    assert_eq!(
        err("C:\\x"),
        "session file name \"C:\\\\x\" contains ':', which could address another directory"
    );
    assert_eq!(
        err("x\\y.jsonl"),
        "session file name \"x\\\\y.jsonl\" contains '\\', which could address another directory"
    );
    assert_eq!(
        err("a\0b.jsonl"),
        "session file name \"a\\0b.jsonl\" contains NUL, which could address another directory"
    );
    assert_eq!(
        err(&"x".repeat(300)),
        format!(
            "session file name is 300 bytes long, more than the 255 allowed: {:?}",
            "x".repeat(40)
        )
    );
    assert_eq!(
        err(".."),
        "session file name \"..\" starts with '.' (hidden files, '.' and '..' are refused)"
    );
    assert_eq!(err(""), "session file name is empty");
    assert_eq!(
        err("x.json"),
        "session file name \"x.json\" does not end in .jsonl"
    );
    assert_eq!(err("/etc/passwd.jsonl").contains("'/'"), true);
    let store = StoreLayout::new("/store");
    assert!(matches!(
        store.resolve_file("main", "../../etc/passwd"),
        Err(PathError::BadCharacter { what: "'/'", .. })
    ));
    assert!(key_for_file_name("main", "../x.jsonl").is_none());
    let max = format!("{}.jsonl", "x".repeat(249));
    assert_eq!(validate_file_name(&max).map_err(|e| e.to_string()), Ok(()));
}

#[cfg(unix)]
#[test]
fn symlinks_out_of_the_sessions_directory_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("state");
    let layout = StoreLayout::new(&root);
    let dir = layout.sessions_dir("main").unwrap();
    session_store::io::ensure_dir(&dir).unwrap();
    let outside = tmp.path().join("outside.jsonl");
    session_store::io::write_raw(&outside, b"secret\n").unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("evil.jsonl")).unwrap();
    session_store::io::write_raw(&dir.join("ok.jsonl"), b"").unwrap();
    std::os::unix::fs::symlink(dir.join("ok.jsonl"), dir.join("alias.jsonl")).unwrap();
    assert!(matches!(
        layout.resolve_existing("main", "evil.jsonl"),
        Err(PathError::OutsideStore { .. })
    ));
    // A symlink that stays inside the sessions directory resolves.
    assert_eq!(
        layout.resolve_existing("main", "alias.jsonl").unwrap(),
        std::fs::canonicalize(&dir).unwrap().join("alias.jsonl")
    );
    assert!(layout.resolve_existing("main", "ok.jsonl").is_ok());
    assert!(layout.resolve_existing("main", "missing.jsonl").is_ok());
    // A sessions directory that is a symlink out of the root is refused as a whole.
    let elsewhere = tmp.path().join("elsewhere");
    session_store::io::ensure_dir(&elsewhere).unwrap();
    session_store::io::ensure_dir(&layout.agents_dir().join("ops")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, layout.agents_dir().join("ops").join("sessions"))
        .unwrap();
    assert!(matches!(
        layout.resolve_existing("ops", "x.jsonl"),
        Err(PathError::OutsideStore { .. })
    ));
}

#[test]
fn file_name_shapes() {
    let p = |n: &str| parse_file_name(n).unwrap();
    assert_eq!(
        p("telegram_alice.jsonl"),
        SessionFileName::Peer {
            channel: "telegram".into(),
            user_id: "alice".into()
        }
    );
    assert_eq!(
        p("2026-01-31T08-00-00-000Z_0191f7e4-1c2d-7abc-8def-0123456789ab.jsonl"),
        SessionFileName::Reference {
            timestamp: "2026-01-31T08-00-00-000Z".into(),
            session_id: "0191f7e4-1c2d-7abc-8def-0123456789ab".into()
        }
    );
    assert_eq!(
        p("cron=nightly=run=7.jsonl"),
        SessionFileName::Keyed {
            rest: "cron:nightly:run:7".into()
        }
    );
    assert_eq!(
        p("My_File_x.jsonl"),
        SessionFileName::Other {
            stem: "My_File_x".into()
        }
    );
    assert_eq!(
        key_for_file_name("main", "telegram_alice.jsonl")
            .unwrap()
            .to_string(),
        "agent:main:telegram:direct:alice"
    );
    assert_eq!(layout::check_agent_id("main").is_ok(), true);
}

// ---------------------------------------------------------------------------------------------
// Property tests

/// A peer-id segment without surrounding whitespace (whitespace inside is fine).
fn segment() -> impl Strategy<Value = String> {
    proptest::string::string_regex(
        "[a-zA-Z0-9+@._=!$-]([a-zA-Z0-9+@._=!$ -]{0,10}[a-zA-Z0-9+@._=!$-])?|[ßİΣ😀é]{1,3}",
    )
    .unwrap()
}

fn peer_id() -> impl Strategy<Value = String> {
    proptest::collection::vec(segment(), 1..3).prop_map(|v| v.join(":"))
}

prop_compose! {
    fn peer_params()(
        agent in "[A-Za-z0-9_-]{1,20}",
        channel in prop_oneof![Just("telegram"), Just("Signal"), Just("matrix"), Just("discord"), Just("my_chan")],
        account in "[A-Za-z0-9 ]{0,10}",
        kind in prop_oneof![Just(PeerKind::Direct), Just(PeerKind::Group), Just(PeerKind::Channel)],
        scope in prop_oneof![Just(DmScope::PerPeer), Just(DmScope::PerChannelPeer), Just(DmScope::PerAccountChannelPeer), Just(DmScope::Main)],
        peer in peer_id(),
    ) -> (String, String, String, PeerKind, DmScope, String) {
        (agent, channel.to_owned(), account, kind, scope, peer)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Built keys parse, print back to exactly the built string, and map to a file name that
    /// maps back to the same key.
    #[test]
    fn build_parse_round_trip((agent, channel, account, kind, scope, peer) in peer_params()) {
        // The reference keeps the case of a Signal group id only up to its first ':' when it
        // parses (the builder keeps all of it), so such ids do not round-trip there either.
        let peer = if channel == "Signal" && kind == PeerKind::Group {
            peer.replace(':', "-")
        } else {
            peer
        };
        let built = build_peer_key(&PeerKeyParams {
            agent_id: &agent,
            channel: Some(&channel),
            account_id: Some(&account),
            peer_kind: kind,
            peer_id: Some(&peer),
            dm_scope: scope,
            ..PeerKeyParams::default()
        });
        let parsed = SessionKey::parse(&built).unwrap();
        prop_assert_eq!(parsed.to_string(), built.as_str());
        prop_assert_eq!(classify_key_shape(&built), KeyShape::Agent);
        let reparsed: SessionKey = parsed.to_string().parse().unwrap();
        prop_assert_eq!(&reparsed, &parsed);
        if let Ok(name) = file_name_for_key(&parsed) {
            prop_assert!(validate_file_name(&name).is_ok());
            prop_assert_eq!(key_for_file_name(parsed.agent_id(), &name), Some(parsed.clone()));
        }
        let thread = parsed.thread("T1").unwrap();
        prop_assert_eq!(thread.parent(), Some(parsed));
    }

    /// Any string: parsing is idempotent through `Display`, and the file-name mapping is a
    /// bijection that never yields a name able to leave the directory.
    #[test]
    fn parse_display_idempotent_and_names_safe(raw in "\\PC{0,40}") {
        let raw = format!("agent:main:{raw}");
        if let Ok(k) = SessionKey::parse(&raw) {
            let again = SessionKey::parse(&k.to_string()).unwrap();
            prop_assert_eq!(&again, &k);
            if let Ok(name) = file_name_for_key(&k) {
                prop_assert!(!name.contains(['/', '\\', ':', '\0']));
                prop_assert!(!name.starts_with('.'));
                prop_assert_eq!(key_for_file_name("main", &name), Some(k.clone()));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Empty segments and bare thread keys (checked against OpenClaw 2026.6.11 with node:
// `resolveSessionStoreKey` persists "agent:main:a::b", "agent:main:a:b" and "agent:main:a:" as
// three keys; `parseThreadSessionSuffix("agent:main:thread:x")` is {baseSessionKey:
// "agent:main", threadId: "x"}).

/// Two keys OpenClaw stores apart never share a file: the typed key keeps empty segments and a
/// trailing `:` (it used to print `agent:main:a::b` as `agent:main:a:b`, and both mapped to
/// `a=b.jsonl`), while `rest()` stays the reference's `parseAgentSessionKey` rest.
#[test]
fn empty_segments_are_part_of_the_key_and_of_its_file_name() {
    let cases = [
        ("agent:main:a::b", "a:b", "a::b", "a==b.jsonl"),
        ("agent:main:a:b", "a:b", "a:b", "a=b.jsonl"),
        ("agent:main:a:", "a", "a:", "a=.jsonl"),
        ("AGENT:Main:A::B", "a:b", "a::b", "a==b.jsonl"),
        ("agent:main::x", "x", ":x", "=x.jsonl"),
        (
            "agent:main:telegram:direct:a::b",
            "telegram:direct:a:b",
            "telegram:direct:a::b",
            "telegram_a%3A%3Ab.jsonl",
        ),
    ];
    for (raw, rest, store_rest, file) in cases {
        let k = key(raw);
        let canonical = format!("agent:main:{store_rest}");
        assert_eq!(k.to_string(), canonical, "{raw}");
        assert_eq!(k.as_str(), canonical, "{raw}");
        assert_eq!(k.rest(), rest, "{raw}");
        assert_eq!(k.store_rest(), store_rest, "{raw}");
        assert_eq!(file_name_for_key(&k).unwrap(), file, "{raw}");
        assert_eq!(key_for_file_name("main", file), Some(k.clone()), "{raw}");
        assert_eq!(SessionKey::parse(&k.to_string()), Ok(k.clone()), "{raw}");
    }
    assert_ne!(key("agent:main:a::b"), key("agent:main:a:b"));
    assert_ne!(key("agent:main:a:"), key("agent:main:a"));
    assert_eq!(key("agent:main:a::b"), key(" Agent:MAIN:A::b "));
    // The reference-exact helpers are unchanged.
    assert_eq!(
        key::parse_agent_session_key("agent:main:a::b"),
        Some(("main".to_owned(), "a:b".to_owned()))
    );
    let info = inspect_key("agent:main:a::b", None);
    assert_eq!(info.key.as_deref(), Some("agent:main:a::b"));
    assert_eq!(info.rest.as_deref(), Some("a:b"));
    assert_eq!(info.file_name.as_deref(), Some("a==b.jsonl"));
}

/// `agent:main:thread:x`: the thread is `x` under the parent `agent:main` (which is not a
/// session key itself), as the reference's `parseThreadSessionSuffix` says; it used to report
/// no thread while its reset type was already `thread`.
#[test]
fn a_bare_thread_key_reports_its_thread_and_parent() {
    let k = key("agent:main:thread:X");
    assert_eq!(k.to_string(), "agent:main:thread:x");
    assert_eq!(k.thread_suffix(), Some(("agent:main", "x")));
    assert_eq!(k.thread_info(), None);
    assert_eq!(k.parent(), None);
    let reference = key::parse_thread_suffix("agent:main:thread:x");
    assert_eq!(reference.base_key.as_deref(), Some("agent:main"));
    assert_eq!(reference.thread_id.as_deref(), Some("x"));

    let info = inspect_key("agent:main:thread:x", None);
    let thread = info.thread.as_ref().unwrap();
    assert_eq!(thread.parent_key, "agent:main");
    assert_eq!(thread.thread_id, "x");
    assert_eq!(info.reset_type.as_str(), "thread");
    assert_eq!(info.peer, None);
    assert!(
        info.to_string()
            .contains("thread:         x (parent agent:main)\n"),
        "{info}"
    );
    // A thread under a real key keeps its typed parent and the parent's peer.
    let info = inspect_key("agent:main:telegram:direct:alice:thread:7", None);
    assert_eq!(
        info.thread.as_ref().unwrap().parent_key,
        "agent:main:telegram:direct:alice"
    );
    assert_eq!(info.peer.as_ref().unwrap().peer_id, "alice");
}
