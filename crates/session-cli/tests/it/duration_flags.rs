//! One duration syntax for every command-line flag that takes a duration (`--max-age`,
//! `--stale-after`, `--lock-timeout`): `<number><unit>` or a composite such as `1h30m`, units
//! ms, s, m, h, d. A bare number is a usage error (exit 2) naming the flag and the units, on
//! every one of them; a config file's `maxAge` keeps the reference's rule (a bare number is
//! days).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use crate::support::*;

/// The error clap prints for a bare `value` given to `flag`.
fn bare_error(value: &str, flag: &str) -> String {
    format!(
        "error: invalid value '{value}' for '{flag} <DURATION>': \"{value}\" has no unit; {flag} \
         takes a duration with a unit: ms, s, m, h or d (e.g. 500ms, 30s, 5m, 2h, 7d, \
         1h30m)\n\nFor more information, try '--help'.\n"
    )
}

#[test]
fn a_bare_number_is_refused_by_every_duration_flag() {
    let dir = tempdir();
    plant(
        &dir.path()
            .join("state/agents/main/sessions/telegram_1.jsonl"),
        &small_session(),
    );
    let before = listing(dir.path());
    let runs: [(&str, Vec<&str>); 3] = [
        (
            "--max-age",
            vec![
                "archive",
                "--root",
                "state",
                "--agent",
                "main",
                "--dry-run",
                "--max-age",
            ],
        ),
        (
            "--stale-after",
            vec![
                "unlock",
                "--stale",
                "state/agents/main/sessions",
                "--stale-after",
            ],
        ),
        (
            "--lock-timeout",
            vec![
                "repair",
                "state/agents/main/sessions/telegram_1.jsonl",
                "--dry-run",
                "--lock-timeout",
            ],
        ),
    ];
    for (flag, args) in &runs {
        // `--max-age` takes values starting with `-` (to name a negative age); the others
        // leave `-30` to clap, which reads it as an unknown flag.
        let values: &[&str] = if *flag == "--max-age" {
            &["30", "0", "-30", "1.5"]
        } else {
            &["30", "0", "1.5"]
        };
        for value in values {
            let mut a = args.clone();
            a.push(value);
            let r = run_in(dir.path(), &a);
            assert_eq!(
                (r.code, r.stdout.as_str(), r.stderr),
                (2, "", bare_error(value, flag)),
                "{flag} {value}"
            );
        }
    }
    // With a unit each is accepted (the dry runs write nothing).
    for (flag, args) in &runs {
        let mut a = args.clone();
        a.push("2h");
        let r = run_in(dir.path(), &a);
        assert!(matches!(r.code, 0 | 1), "{flag}: {}", r.stderr);
    }
    assert_eq!(listing(dir.path()), before);
}

#[test]
fn a_config_max_age_keeps_the_reference_s_bare_days() {
    let dir = tempdir();
    let sessions = dir.path().join("state/agents/main/sessions");
    plant(&sessions.join("telegram_1.jsonl"), &small_session());
    plant(
        &dir.path().join("cfg.json"),
        br#"{"sessions":{"retention":{"maxAge":30}}}"#,
    );
    let r = run_in(
        dir.path(),
        [
            "archive",
            "--root",
            "state",
            "--agent",
            "main",
            "--config",
            "cfg.json",
            "--dry-run",
            "--json",
        ],
    );
    assert!(matches!(r.code, 0 | 1), "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let policy = &v["reports"][0]["policy"];
    assert_eq!(policy["maxAge"], "30", "{}", r.stdout);
    assert_eq!(policy["maxAgeMs"], 30 * 86_400_000u64, "{}", r.stdout);
}

#[test]
fn help_texts_name_the_units_and_refuse_bare_numbers() {
    for (cmd, flag) in [
        ("archive", "--max-age"),
        ("unlock", "--stale-after"),
        ("repair", "--lock-timeout"),
    ] {
        let r = run([cmd, "--help"]);
        assert_eq!(r.code, 0);
        let help = r.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(help.contains(flag), "{cmd}: {help}");
        assert!(help.contains("a bare number is refused"), "{cmd}: {help}");
    }
}
