//! `parse_js_date` accepts and rejects what `Date.parse` does under node 24 (V8): day-of-month
//! overflow rolls over, the `Date#toUTCString` form parses, padded text and leap seconds are
//! refused (checked with `Date.parse` under the pinned node binary).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use session_format::time::parse_js_date;

/// `Date.parse` (V8) accepts day-of-month overflow in the ISO form and rolls it over, and so does
/// ours. This decides the `timestamp` of custom/branch/compaction messages in
/// `buildSessionContext` (node: `Date.parse("2026-02-30T00:00:00Z") === 1772409600000`).
#[test]
fn parse_js_date_rolls_day_overflow_like_v8() {
    assert_eq!(
        parse_js_date("2026-02-30T00:00:00Z"),
        Some(1_772_409_600_000)
    );
    assert_eq!(parse_js_date("2026-02-30"), Some(1_772_409_600_000));
    assert_eq!(parse_js_date("2026-04-31"), Some(1_777_593_600_000));
}

/// V8's fallback parser accepts RFC 1123 / `Date#toUTCString` text (no time-zone dependence
/// with an explicit `GMT`): `Date.parse("Thu, 01 Jan 2026 00:00:00 GMT") === 1767225600000`.
#[test]
fn parse_js_date_accepts_utc_string_form() {
    assert_eq!(
        parse_js_date("Thu, 01 Jan 2026 00:00:00 GMT"),
        Some(1_767_225_600_000)
    );
}

/// V8 rejects these, and so do we (`Date.parse` is NaN for each in node 24).
#[test]
fn parse_js_date_rejects_what_v8_rejects() {
    assert_eq!(
        parse_js_date(" 2026-01-01T00:00:00Z "),
        None,
        "surrounding spaces"
    );
    assert_eq!(parse_js_date("2026-12-31T23:59:60Z"), None, "leap second");
}
