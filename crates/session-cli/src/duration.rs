//! The one duration syntax of the command line: every flag that takes a duration
//! (`--max-age`, `--stale-after`, `--lock-timeout`) takes `<number><unit>` or a composite such
//! as `1h30m`, units `ms`, `s`, `m`, `h` and `d` (case-insensitive), through the reference's
//! `parseDurationMs` ([`session_semantics::policy::parse_duration_ms`]). A bare number is an
//! error here, naming the flag and the units: the reference reads a bare number as
//! milliseconds in one place and as days in another, so on the command line it is refused
//! rather than guessed. Config files and environment variables keep the reference's rules
//! (a config's `maxAge: 30` is 30 days; `OPENCLAW_SESSION_WRITE_LOCK_STALE_MS` is ms).

use std::time::Duration;

use session_semantics::policy::{DurationUnit, parse_duration_ms};

/// The units a command-line duration takes, as the errors and help texts name them.
pub(crate) const UNITS: &str = "ms, s, m, h or d (e.g. 500ms, 30s, 5m, 2h, 7d, 1h30m)";

/// Whether `s` is a number without a unit (`30`, `-30`, `1.5`, `0`).
fn is_bare_number(s: &str) -> bool {
    let t = s.trim();
    let t = t.strip_prefix('-').unwrap_or(t);
    !t.is_empty()
        && t.split_once('.').map_or_else(
            || t.bytes().all(|b| b.is_ascii_digit()),
            |(int, frac)| {
                !int.is_empty()
                    && !frac.is_empty()
                    && int.bytes().all(|b| b.is_ascii_digit())
                    && frac.bytes().all(|b| b.is_ascii_digit())
            },
        )
}

/// `Err` with the bare-number message for `flag` when `s` has no unit.
pub(crate) fn require_unit(flag: &str, s: &str) -> Result<(), String> {
    if is_bare_number(s) {
        return Err(format!(
            "{:?} has no unit; {flag} takes a duration with a unit: {UNITS}",
            s.trim()
        ));
    }
    Ok(())
}

/// The value parser of a duration flag named `flag` (e.g. `"--stale-after"`).
pub(crate) fn parser(
    flag: &'static str,
) -> impl Fn(&str) -> Result<Duration, String> + Clone + Send + Sync + 'static {
    move |s: &str| {
        require_unit(flag, s)?;
        parse_duration_ms(s, DurationUnit::Millis)
            .map(Duration::from_millis)
            .map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // Tests fail loudly by design.

    use super::*;

    #[test]
    fn a_bare_number_is_refused_naming_the_flag_and_units() {
        let p = parser("--stale-after");
        for bare in ["30", " 30 ", "0", "-5", "1.5"] {
            assert_eq!(
                p(bare).unwrap_err(),
                format!(
                    "{:?} has no unit; --stale-after takes a duration with a unit: ms, s, m, h \
                     or d (e.g. 500ms, 30s, 5m, 2h, 7d, 1h30m)",
                    bare.trim()
                )
            );
        }
        assert_eq!(p("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(p("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(p("2h").unwrap(), Duration::from_secs(7_200));
        assert_eq!(p("7d").unwrap(), Duration::from_secs(604_800));
        assert_eq!(p("1h30m").unwrap(), Duration::from_secs(5_400));
        assert_eq!(p("0s").unwrap(), Duration::ZERO);
        assert_eq!(p("250MS").unwrap(), Duration::from_millis(250));
        assert!(p("5x").unwrap_err().starts_with("invalid duration \"5x\""));
        assert!(!is_bare_number("1."));
        assert!(!is_bare_number(".5"));
        assert!(!is_bare_number("-"));
    }
}
