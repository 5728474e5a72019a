//! The import verifier on the fixture made by the real `openclaw@2026.9.6` doctor, laid out as
//! the state directory doctor left (openclaw-sqlite.md §4.7, §6.4–§6.6): the broken session
//! lost exactly u2 and a2 (lines 6 and 7) after its unparseable line 5, and its u3 (line 8) is a
//! torn tail; the five others lost nothing (unicode rows 2 and 3 re-serialised, the v1 ids
//! re-derived from a moved path); the salvage of the broken archive holds exactly its parseable
//! lines; the database's bytes are unchanged.
#![cfg(feature = "sqlite")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use session_format::doctor_import::{BadLine, LineChange, ReadStop, Transform};
use session_store::sqlite::verify::{
    LostReason, RowVerdict, SessionVerdict, SourceKind, salvage, verify_state, verify_transcript,
};

fn sha(path: &std::path::Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

#[test]
fn the_fixture_import_lost_exactly_the_broken_sessions_tail() {
    let Some(shared) = session_test_support::shared_dir(
        "the_fixture_import_lost_exactly_the_broken_sessions_tail",
    ) else {
        return;
    };
    let dir = session_test_support::tempdir();
    let state = dir.path().join("state");
    let db = session_test_support::openclaw96_fixture_state(&shared, &state);
    let before = sha(&db);
    let report = verify_state(&state).unwrap();
    assert_eq!(sha(&db), before, "the database is unchanged");
    assert!(report.unreadable.is_empty(), "{:?}", report.unreadable);
    assert_eq!(report.manifests.len(), 1);
    let verdicts: Vec<(&str, &str, SessionVerdict)> = report
        .sessions
        .iter()
        .map(|s| {
            (
                s.session_key.as_deref().unwrap(),
                s.session_id.as_str(),
                s.verdict,
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            (
                "agent:main:broken",
                "55555555-5555-4555-8555-555555555555",
                SessionVerdict::Lost
            ),
            (
                "agent:main:dm:alice",
                "11111111-1111-4111-8111-111111111111",
                SessionVerdict::Clean
            ),
            (
                "agent:main:large",
                "33333333-3333-4333-8333-333333333333",
                SessionVerdict::Clean
            ),
            (
                "agent:main:legacy-v1",
                "66666666-6666-4666-8666-666666666666",
                SessionVerdict::Clean
            ),
            (
                "agent:main:main",
                "22222222-2222-4222-8222-222222222222",
                SessionVerdict::Clean
            ),
            (
                "agent:main:unicode",
                "44444444-4444-4444-8444-444444444444",
                SessionVerdict::Clean
            ),
        ]
    );
    let broken = &report.sessions[0];
    assert_eq!(broken.kind, SourceKind::Archive);
    assert_eq!(broken.classification.as_deref(), Some("protected"));
    assert_eq!((broken.expected_rows, broken.stored_rows), (3, 3));
    let lost: Vec<(usize, Option<&str>, &LostReason)> = broken
        .lost
        .iter()
        .map(|l| (l.span.line, l.id.as_deref(), &l.reason))
        .collect();
    assert_eq!(
        lost,
        [
            (6, Some("u2"), &LostReason::AfterUnparseable { at: 5 }),
            (7, Some("a2"), &LostReason::AfterUnparseable { at: 5 }),
        ]
    );
    let source = std::fs::read(
        shared.join("fixtures/openclaw-9.6-sqlite/source/malformed-mid-torn-tail.jsonl"),
    )
    .unwrap();
    let starts: Vec<usize> = std::iter::once(0)
        .chain(
            source
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .map(|(i, _)| i + 1),
        )
        .collect();
    assert_eq!(broken.lost[0].span.offset, starts[5]);
    assert_eq!(broken.lost[1].span.offset, starts[6]);
    assert!(
        broken.lost[0]
            .head
            .starts_with(r#"{"type":"message","id":"u2","parentId":"a1""#)
    );
    assert_eq!(
        broken.lost_counts().into_iter().collect::<Vec<_>>(),
        [
            ("message/assistant".to_owned(), 1),
            ("message/user".to_owned(), 1)
        ]
    );
    let bad: Vec<(usize, usize, bool)> = broken
        .unparseable
        .iter()
        .map(|u| (u.span.line, u.span.offset, u.torn))
        .collect();
    assert_eq!(bad, [(5, starts[4], false), (8, starts[7], true)]);
    assert!(matches!(broken.unparseable[1].problem, BadLine::Json(_)));
    assert!(matches!(broken.stop, Some(ReadStop::Json { span, .. }) if span.line == 5));

    let unicode = &report.sessions[5];
    let kinds: Vec<(usize, &RowVerdict)> =
        unicode.rows.iter().map(|r| (r.seq, &r.verdict)).collect();
    assert_eq!(kinds.len(), 5);
    assert_eq!(kinds[0].1, &RowVerdict::Verbatim);
    assert_eq!(kinds[1].1, &RowVerdict::Verbatim);
    assert_eq!(
        kinds[2].1,
        &RowVerdict::Reserialised {
            changes: vec![LineChange::UnicodeEscape],
            transforms: vec![]
        }
    );
    assert_eq!(
        kinds[3].1,
        &RowVerdict::Reserialised {
            changes: vec![LineChange::UnicodeEscape, LineChange::EscapedSlash],
            transforms: vec![]
        }
    );
    assert_eq!(kinds[4].1, &RowVerdict::Verbatim);

    let v1 = &report.sessions[3];
    assert_eq!(v1.v1_id_prefix.as_deref(), Some("709fe318b22aecde"));
    assert!(
        v1.ids_from_moved_path,
        "the manifest's paths are <STATE> placeholders"
    );
    assert!(v1.rows.iter().skip(1).all(|r| matches!(&r.verdict,
        RowVerdict::Reserialised { transforms, .. } if transforms.contains(&Transform::V1Ids))));
    for s in &report.sessions[1..] {
        assert!(
            s.lost.is_empty() && s.unparseable.is_empty(),
            "{}",
            s.session_id
        );
        assert_eq!(s.expected_rows, s.stored_rows, "{}", s.session_id);
        assert_eq!(s.appended_after_import, 0);
    }
}

#[test]
fn the_salvage_holds_exactly_the_archives_parseable_lines() {
    let Some(shared) =
        session_test_support::shared_dir("the_salvage_holds_exactly_the_archives_parseable_lines")
    else {
        return;
    };
    let archive = shared.join("fixtures/openclaw-9.6-sqlite/archive/agent_main_broken.55555555-5555-4555-8555-555555555555.jsonl.imported-1796152872299");
    let bytes = std::fs::read(archive).unwrap();
    let s = salvage(&bytes);
    let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    // Lines 1, 2, 4, 6, 7 (1-based) parse; 3 is blank, 5 is not JSON, 8 is the torn tail.
    let mut want = Vec::new();
    for i in [0, 1, 3, 5, 6] {
        want.extend_from_slice(lines[i]);
        want.push(b'\n');
    }
    assert_eq!(s.bytes, want);
    assert_eq!(
        s.kept.iter().map(|k| k.line).collect::<Vec<_>>(),
        [1, 2, 4, 6, 7]
    );
    assert_eq!(
        s.left_out
            .iter()
            .map(|l| (l.span.line, l.torn))
            .collect::<Vec<_>>(),
        [(5, false), (8, true)]
    );
}

#[test]
fn invalid_utf8_and_id_conflicts_are_lost_lines() {
    // Synthetic stored rows: what the import keeps of these files (the probes of
    // probe-results.json, checked there against the reference).
    let h = r#"{"type":"session","version":3,"id":"s1","timestamp":"t","cwd":"/w"}"#;
    let u = r#"{"type":"message","id":"u1","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}"#;
    let a1 = r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"first"}]}}"#;
    let a2 = a1.replace("first", "second");
    let file = format!("{h}\n{u}\n{a1}\n{a2}\n");
    let stored: Vec<Vec<u8>> = [h, u, a1].iter().map(|s| s.as_bytes().to_vec()).collect();
    let r = verify_transcript(file.as_bytes(), "s1", b"/x", Some(&stored));
    assert_eq!(r.verdict, SessionVerdict::Lost);
    assert_eq!(r.lost.len(), 1);
    assert_eq!(
        (r.lost[0].span.line, &r.lost[0].reason),
        (4, &LostReason::IdConflict { line: 3 })
    );

    let mut bad = format!("{h}\n{u}\n").into_bytes();
    bad.extend_from_slice(b"\xff\n");
    bad.extend_from_slice(format!("{a1}\n").as_bytes());
    let r = verify_transcript(&bad, "s1", b"/x", Some(&[]));
    assert_eq!(r.verdict, SessionVerdict::Lost);
    let lines: Vec<(usize, Option<&str>)> = r
        .lost
        .iter()
        .map(|l| (l.span.line, l.id.as_deref()))
        .collect();
    assert_eq!(lines, [(1, Some("s1")), (2, Some("u1")), (4, Some("a1"))]);
    assert!(r.lost.iter().all(|l| l.reason
        == LostReason::AfterInvalidUtf8 {
            bad_offset: h.len() + u.len() + 2
        }));
    assert_eq!(r.unparseable.len(), 1);
    assert_eq!(
        r.unparseable[0].problem,
        BadLine::Utf8 {
            offset: h.len() + u.len() + 2
        }
    );

    let r = verify_transcript(file.as_bytes(), "s1", b"/x", None);
    assert_eq!(r.verdict, SessionVerdict::SessionMissing);
}
