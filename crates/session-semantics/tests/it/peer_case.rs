//! Peer-id case in file names (openclaw-jsonl.md §5.1): direct peer ids are lowercased by
//! OpenClaw, so an upper-case DM file name (e.g. `slack_U02OPSBOT.jsonl`) names no key,
//! while case-preserved opaque peer spans (Signal groups, Matrix rooms) round-trip through
//! `%XX` escapes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use pretty_assertions::assert_eq;
use session_semantics::key::{DmScope, PeerKeyParams, PeerKind, SessionKey, build_peer_key};
use session_semantics::layout::{
    SessionFileName, file_name_for_key, key_for_file_name, parse_file_name,
};

fn key_name(agent: &str, name: &str) -> Option<String> {
    key_for_file_name(agent, name).map(|k| k.to_string())
}

#[test]
fn upper_case_dm_file_names_no_key() {
    // OpenClaw 2026.6.11 `buildAgentPeerSessionKey({agentId:"ops", channel:"slack",
    // peerKind:"direct", peerId:"U02OPSBOT", dmScope:"per-channel-peer"})` gives this key.
    let built = build_peer_key(&PeerKeyParams {
        agent_id: "ops",
        channel: Some("slack"),
        peer_kind: PeerKind::Direct,
        peer_id: Some("U02OPSBOT"),
        dm_scope: DmScope::PerChannelPeer,
        ..PeerKeyParams::default()
    });
    assert_eq!(built, "agent:ops:slack:direct:u02opsbot");
    // Parsing lowercases a direct peer too.
    let parsed = SessionKey::parse("agent:ops:slack:direct:U02OPSBOT").unwrap();
    assert_eq!(parsed.to_string(), "agent:ops:slack:direct:u02opsbot");
    assert_eq!(file_name_for_key(&parsed).unwrap(), "slack_u02opsbot.jsonl");

    // The demo's file: not a canonical name, so no key (the CLI prints `"sessionKey": null`).
    assert_eq!(key_name("ops", "slack_U02OPSBOT.jsonl"), None);
    assert_eq!(
        parse_file_name("slack_U02OPSBOT.jsonl").unwrap(),
        SessionFileName::Other {
            stem: "slack_U02OPSBOT".into()
        }
    );
    // Its lowercase twin is the key's file, and the mapping round-trips.
    assert_eq!(
        key_name("ops", "slack_u02opsbot.jsonl").as_deref(),
        Some("agent:ops:slack:direct:u02opsbot")
    );
    assert_eq!(
        key_name("main", "telegram_123456.jsonl").as_deref(),
        Some("agent:main:telegram:direct:123456")
    );
    // An escaped upper-case peer is not canonical either: no key has it.
    assert_eq!(key_name("ops", "slack_%55%30%32OPSBOT.jsonl"), None);
    assert_eq!(key_name("ops", "slack_%5502opsbot.jsonl"), None);
}

#[test]
fn case_preserved_peer_spans_round_trip() {
    for (k, name) in [
        (
            "agent:main:signal:group:AbC=",
            "signal=group=%41b%43%3D.jsonl",
        ),
        (
            "agent:ops:matrix:channel:!RoomA:Server.Org",
            "matrix=channel=%21%52oom%41=%53erver.%4Frg.jsonl",
        ),
    ] {
        let key = SessionKey::parse(k).unwrap();
        assert_eq!(key.to_string(), k);
        let file = file_name_for_key(&key).unwrap();
        assert_eq!(file, name);
        assert_eq!(key_name(key.agent_id(), &file).as_deref(), Some(k));
    }
}
