//! What each file of an OpenClaw sessions directory is (openclaw-store.md §1.4, R1.13–R1.14,
//! §9 cases 4 and 5): archive timestamps both ways, and the classification table.

use session_semantics::openclaw_store::{
    ArchiveReason, ArtifactKind, classify, format_archive_timestamp, parse_archive_name,
    parse_archive_timestamp,
};

/// 2026-06-12T09:00:00.000Z in epoch milliseconds.
const JUNE_12_NINE: i64 = 1_781_254_800_000;

#[test]
fn archive_timestamps_round_trip_and_reject_other_shapes() {
    assert_eq!(
        format_archive_timestamp(JUNE_12_NINE).as_deref(),
        Some("2026-06-12T09-00-00.000Z")
    );
    assert_eq!(
        parse_archive_timestamp("2026-06-12T09-00-00.000Z"),
        Some(JUNE_12_NINE)
    );
    assert_eq!(
        parse_archive_timestamp("2026-06-12T09-00-00Z"),
        Some(JUNE_12_NINE)
    );
    assert_eq!(
        parse_archive_timestamp("2026-06-12T09-00-00.250Z"),
        Some(JUNE_12_NINE + 250)
    );
    for bad in [
        "yesterday",
        "2026-06-12T09-00-00.5Z",
        "2026-06-12T09:00:00.000Z",
        "2026-06-12T09-00-00.000",
        "2026-13-12T09-00-00.000Z",
        "2026-06-12T09-00-00.000Zx",
        "",
    ] {
        assert_eq!(parse_archive_timestamp(bad), None, "{bad:?}");
    }
    assert_eq!(format_archive_timestamp(253_402_300_800_000), None);
}

#[test]
fn archive_names_take_the_last_valid_marker() {
    assert_eq!(
        parse_archive_name("x.jsonl.reset.2026-06-12T09-00-00Z"),
        Some(("x.jsonl", ArchiveReason::Reset, JUNE_12_NINE))
    );
    assert_eq!(parse_archive_name("x.jsonl.reset.yesterday"), None);
    // A `.deleted.` archive of a file that was itself a reset archive.
    assert_eq!(
        parse_archive_name("x.jsonl.reset.2026-06-12T09-00-00Z.deleted.2026-06-12T09-00-00.000Z"),
        Some((
            "x.jsonl.reset.2026-06-12T09-00-00Z",
            ArchiveReason::Deleted,
            JUNE_12_NINE
        ))
    );
}

#[test]
fn the_classification_table() {
    let ts = "2026-06-12T09-00-00.000Z";
    let primary = |id: &str| ArtifactKind::Primary {
        session_id: id.to_owned(),
    };
    assert_eq!(classify("a.jsonl"), primary("a"));
    assert_eq!(classify("a-topic-1.jsonl"), primary("a-topic-1"));
    assert_eq!(
        classify("a.trajectory.jsonl"),
        ArtifactKind::Trajectory {
            stem: "a".into(),
            pointer: false
        }
    );
    assert_eq!(
        classify("a.trajectory-path.json"),
        ArtifactKind::Trajectory {
            stem: "a".into(),
            pointer: true
        }
    );
    assert_eq!(
        classify("a.checkpoint.0f8fad5b-d9cb-469f-a165-70867728950e.jsonl"),
        ArtifactKind::Checkpoint {
            session_id: "a".into()
        }
    );
    assert_eq!(
        classify("A.CHECKPOINT.0F8FAD5B-D9CB-469F-A165-70867728950E.JSONL"),
        ArtifactKind::Checkpoint {
            session_id: "A".into()
        },
        "the reference's pattern is case-insensitive, `.JSONL` included"
    );
    assert_eq!(
        classify("a.checkpoint.0F8FAD5B-D9CB-469F-A165-70867728950E.jsonl"),
        ArtifactKind::Checkpoint {
            session_id: "a".into()
        }
    );
    // Version digit 0 is outside v1–5: not a checkpoint, so a primary transcript.
    assert_eq!(
        classify("a.checkpoint.0f8fad5b-d9cb-069f-a165-70867728950e.jsonl"),
        primary("a.checkpoint.0f8fad5b-d9cb-069f-a165-70867728950e")
    );
    let deleted = classify(&format!("a.jsonl.deleted.{ts}"));
    assert_eq!(
        deleted,
        ArtifactKind::Archive {
            reason: ArchiveReason::Deleted,
            original: "a.jsonl".into(),
            archived_at_ms: JUNE_12_NINE,
            usage_session_id: Some("a".into()),
        }
    );
    assert!(deleted.is_archive());
    assert_eq!(deleted.usage_session_id(), Some("a"));
    let bak = classify(&format!("a.jsonl.bak.{ts}"));
    assert!(bak.is_archive());
    assert_eq!(bak.usage_session_id(), None);
    assert_eq!(classify("sessions.json.bak.123"), ArtifactKind::StoreBackup);
    assert!(classify("sessions.json.bak.123").is_archive());
    assert_eq!(
        classify("sessions.json.123.0f8fad5b-d9cb-469f-a165-70867728950e.tmp"),
        ArtifactKind::StoreTemp
    );
    assert_eq!(
        classify("sessions.json.0F8FAD5B-D9CB-469F-A165-70867728950E.tmp"),
        ArtifactKind::StoreTemp
    );
    assert_eq!(classify("sessions.json"), ArtifactKind::Store);
    assert_eq!(classify("x.jsonl.reset.yesterday"), ArtifactKind::Other);
    assert_eq!(classify("notes.txt"), ArtifactKind::Other);
    assert_eq!(primary("a").usage_session_id(), Some("a"));
}
