//! Retention guard rails in the library: zero and negative ages are refused with typed errors
//! (`parse_max_age_ms`, the config's `maxAge`, a hand-built policy); `MassSweep::judge` flags
//! more than half of the live sessions; executed runs append one audit line per move or delete
//! and a plan writes none.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use session_semantics::audit::{AUDIT_LOG_NAME, AuditAction, AuditLog, AuditRecord};
use session_semantics::policy::{Config, DurationError, MaxAgeError, parse_max_age_ms};
use session_semantics::retention::{self, ClearMode, ClearTarget, MassSweep, Outcome};
use session_semantics::{RetentionError, RetentionPolicy, StoreLayout};

const DAY: i64 = 86_400_000;
const NOW: i64 = 1_782_864_000_000; // 2026-07-01T00:00:00Z

fn session(id: &str, at_ms: i64) -> Vec<u8> {
    format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}}\n\
         {{\"type\":\"message\",\"id\":\"m1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":{at_ms}}}}}\n"
    )
    .into_bytes()
}

#[test]
fn zero_and_negative_ages_are_typed_errors() {
    for zero in ["0", "0d", "0s", "0ms", "0.4ms", " 0 ", "-0", "0h0m"] {
        assert_eq!(
            parse_max_age_ms(zero),
            Err(MaxAgeError::Zero {
                input: zero.to_owned()
            }),
            "{zero:?}"
        );
    }
    for negative in ["-1d", "-30", "-1h30m", " -5s"] {
        assert_eq!(
            parse_max_age_ms(negative),
            Err(MaxAgeError::Negative {
                input: negative.to_owned()
            }),
            "{negative:?}"
        );
    }
    assert_eq!(
        parse_max_age_ms("-x"),
        Err(MaxAgeError::Invalid(DurationError {
            input: "-x".to_owned(),
            reason: "each composite segment needs a unit"
        }))
    );
    assert_eq!(parse_max_age_ms("30d"), Ok(2_592_000_000));
    assert_eq!(parse_max_age_ms("1ms"), Ok(1));
    assert_eq!(parse_max_age_ms("0.5ms"), Ok(1), "rounds up to 1 ms");
    // As OpenClaw 2026.6.11's parseDurationMs (checked against the reference): a repeated unit
    // adds up (`1d1d` is two days) and fractions round with Math.round (half up).
    assert_eq!(parse_max_age_ms("1d1d"), Ok(2 * 86_400_000));
    assert_eq!(parse_max_age_ms("2.5ms"), Ok(3));
    assert_eq!(parse_max_age_ms("0.5"), Ok(43_200_000));
    assert_eq!(
        MaxAgeError::Zero {
            input: "0d".to_owned()
        }
        .to_string(),
        "invalid max age \"0d\": a zero age is refused, since every session is older and would \
         be archived; give a positive age such as 30d, or off to turn the limit off"
    );
    assert_eq!(
        MaxAgeError::Negative {
            input: "-1d".to_owned()
        }
        .to_string(),
        "invalid max age \"-1d\": a negative age is refused, since every session is older and \
         would be archived; give a positive age such as 30d, or off to turn the limit off"
    );

    let err = Config::from_json(r#"{"sessions":{"retention":{"maxAge":"0s"}}}"#).unwrap_err();
    assert_eq!(
        (err.message.as_str(), err.line, err.column, err.byte_offset),
        (
            "invalid max age \"0s\": a zero age is refused, since every session is older and \
             would be archived; give a positive age such as 30d, or false to turn the limit \
             off",
            1,
            40,
            39
        )
    );
    let c = Config::from_json(r#"{"sessions":{"retention":{"maxAge":false}}}"#).unwrap();
    assert_eq!(c.sessions.retention.max_age.0, None);

    // A policy built by hand with a zero age is refused before anything is read.
    let dir = tempfile::tempdir().unwrap();
    let policy = RetentionPolicy {
        max_age: Some("0ms".to_owned()),
        max_age_ms: Some(0),
        max_size: None,
        max_size_bytes: None,
    };
    let err =
        retention::plan_archive(&StoreLayout::new(dir.path()), "main", &policy, NOW).unwrap_err();
    assert!(
        matches!(&err, RetentionError::ZeroMaxAge { text } if text == "0ms"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "max age \"0ms\" is zero: every session would be archived; give a positive age, or no \
         max age to turn the limit off"
    );
}

#[test]
fn more_than_half_is_a_mass_sweep() {
    let sweep = |s, l| MassSweep::judge(s, l).map(|m| (m.sessions, m.live_sessions));
    assert_eq!(sweep(0, 0), None);
    assert_eq!(sweep(0, 5), None);
    assert_eq!(sweep(1, 1), Some((1, 1)));
    assert_eq!(sweep(1, 2), None);
    assert_eq!(sweep(2, 3), Some((2, 3)));
    assert_eq!(sweep(2, 4), None);
    assert_eq!(sweep(3, 4), Some((3, 4)));
    assert_eq!(
        MassSweep::judge(3, 4).unwrap().to_string(),
        "3 of 4 live sessions (more than half)"
    );
    assert_eq!(
        MassSweep::judge(1, 1).unwrap().to_string(),
        "1 of 1 live session (more than half)"
    );
}

#[test]
fn executed_runs_append_one_audit_line_per_action_and_plans_none() {
    let dir = tempfile::tempdir().unwrap();
    let layout = StoreLayout::new(dir.path());
    let sessions = dir.path().join("agents/main/sessions");
    session_store::io::ensure_dir(&sessions).unwrap();
    for (name, id, ago) in [("a", "sa", 40), ("b", "sb", 50), ("c", "sc", 1)] {
        session_store::io::write_raw(
            &sessions.join(format!("{name}.jsonl")),
            &session(id, NOW - ago * DAY),
        )
        .unwrap();
    }
    let policy = RetentionPolicy {
        max_age: Some("30d".to_owned()),
        max_age_ms: Some(30 * DAY as u64),
        max_size: None,
        max_size_bytes: None,
    };
    let plan = retention::plan_archive(&layout, "main", &policy, NOW).unwrap();
    let report = plan.report();
    assert_eq!(
        (report.live_sessions, report.mass_sweep, &report.audit),
        (
            3,
            Some(MassSweep {
                sessions: 2,
                live_sessions: 3
            }),
            &None
        )
    );
    let planned = retention::clear(
        &layout,
        &ClearTarget::Agent("main".to_owned()),
        ClearMode::Purge,
        true,
        None,
    )
    .unwrap();
    assert_eq!(
        (
            planned.live_sessions,
            planned.mass_sweep.map(|m| m.sessions)
        ),
        (3, Some(3))
    );
    assert!(
        !sessions.join(AUDIT_LOG_NAME).exists(),
        "plans write nothing"
    );

    let done = plan.execute(None);
    let audit = done.audit.as_ref().unwrap();
    assert_eq!(
        audit.log,
        sessions.canonicalize().unwrap().join(AUDIT_LOG_NAME)
    );
    assert_eq!(audit.error, None);
    let strip = |r: &AuditRecord| AuditRecord {
        time: String::new(),
        ..r.clone()
    };
    let expected = [
        AuditRecord {
            time: String::new(),
            action: AuditAction::Archive,
            file: "b.jsonl".to_owned(),
            destination: Some("archive/b.jsonl".to_owned()),
            session_id: "sb".to_owned(),
            reason: "max-age".to_owned(),
            bytes: 242,
        },
        AuditRecord {
            time: String::new(),
            action: AuditAction::Archive,
            file: "a.jsonl".to_owned(),
            destination: Some("archive/a.jsonl".to_owned()),
            session_id: "sa".to_owned(),
            reason: "max-age".to_owned(),
            bytes: 242,
        },
    ];
    assert_eq!(
        audit.records.iter().map(strip).collect::<Vec<_>>(),
        expected
    );
    // The file holds exactly the reported records, one JSON line each, in key order.
    let text = std::fs::read_to_string(sessions.join(AUDIT_LOG_NAME)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2);
    for (line, r) in lines.iter().zip(&audit.records) {
        assert_eq!(*line, serde_json::to_string(r).unwrap());
        let ms = session_format::time::parse_js_date(&r.time).unwrap();
        assert_eq!(session_format::time::to_iso_string(ms).unwrap(), r.time);
    }

    // A clear appends after them: one delete line.
    let cleared = retention::clear(
        &layout,
        &ClearTarget::Agent("main".to_owned()),
        ClearMode::Purge,
        false,
        None,
    )
    .unwrap();
    assert_eq!(cleared.actions[0].outcome, Outcome::Purged);
    let records = &cleared.audit.as_ref().unwrap().records;
    assert_eq!(
        records.iter().map(strip).collect::<Vec<_>>(),
        [AuditRecord {
            time: String::new(),
            action: AuditAction::Delete,
            file: "c.jsonl".to_owned(),
            destination: None,
            session_id: "sc".to_owned(),
            reason: "clear".to_owned(),
            bytes: 242,
        }]
    );
    let text = std::fs::read_to_string(sessions.join(AUDIT_LOG_NAME)).unwrap();
    assert_eq!(text.lines().count(), 3);
    assert!(text.ends_with(&format!(
        "{}\n",
        serde_json::to_string(&records[0]).unwrap()
    )));
}

#[test]
fn the_audit_log_must_be_a_regular_file() {
    let dir = tempfile::tempdir().unwrap();
    session_store::io::ensure_dir(&dir.path().join(AUDIT_LOG_NAME)).unwrap();
    let err = AuditLog::open(dir.path()).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert_eq!(
        err.to_string(),
        format!(
            "audit log {} is not a regular file; it must be one",
            dir.path().join(AUDIT_LOG_NAME).display()
        )
    );
    let other = tempfile::tempdir().unwrap();
    let log = AuditLog::open(other.path()).unwrap();
    assert_eq!(log.path(), other.path().join(AUDIT_LOG_NAME));
    assert!(!log.path().exists(), "opening creates nothing");
}
