//! Dates as JavaScript sees them: `Date#toISOString` and `Date.parse` (ISO forms).

use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeZone, Utc};

/// `new Date(ms).toISOString()`, or `None` outside JavaScript's date range or past year 9999
/// (where JavaScript switches to a 6-digit year form this crate does not write).
pub fn to_iso_string(ms: i64) -> Option<String> {
    let dt = Utc.timestamp_millis_opt(ms).single()?;
    let year = chrono::Datelike::year(&dt);
    if !(0..=9999).contains(&year) {
        return None;
    }
    Some(dt.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
}

/// `new Date(text).getTime()` for the ECMAScript date-time string format and its common
/// variants: `YYYY`, `YYYY-MM`, `YYYY-MM-DD` (UTC), with `THH:mm`, `THH:mm:ss`, `THH:mm:ss.s+`
/// and a `Z` or `±HH:mm` offset, a space instead of `T`, and ±YYYYYY years. Date-times without
/// an offset are read as UTC (JavaScript would use the local zone). Anything else is `None`
/// (JavaScript's `NaN`).
pub fn parse_js_date(text: &str) -> Option<i64> {
    let s = text.trim();
    if let Ok(dt) = DateTime::parse_from_rfc3339(s) {
        return Some(dt.timestamp_millis());
    }
    parse_iso_loose(s)
}

fn parse_iso_loose(s: &str) -> Option<i64> {
    let bytes = s.as_bytes();
    let mut i = 0;
    let (sign, year_len) = match bytes.first()? {
        b'+' => (1, 6),
        b'-' => (-1, 6),
        _ => (1, 4),
    };
    if year_len == 6 {
        i = 1;
    }
    let year: i32 = sign * digits(bytes, &mut i, year_len)?;
    let mut month = 1;
    let mut day = 1;
    if bytes.get(i) == Some(&b'-') {
        i += 1;
        month = digits(bytes, &mut i, 2)?;
        if bytes.get(i) == Some(&b'-') {
            i += 1;
            day = digits(bytes, &mut i, 2)?;
        }
    }
    let date = NaiveDate::from_ymd_opt(year, u32::try_from(month).ok()?, u32::try_from(day).ok()?)?;
    let mut ms_of_day: i64 = 0;
    let mut offset_min: i64 = 0;
    if i < bytes.len() {
        if !matches!(bytes[i], b'T' | b't' | b' ') {
            return None;
        }
        i += 1;
        let h: i64 = digits(bytes, &mut i, 2)?.into();
        if bytes.get(i) != Some(&b':') {
            return None;
        }
        i += 1;
        let m: i64 = digits(bytes, &mut i, 2)?.into();
        let mut sec: i64 = 0;
        let mut ms: i64 = 0;
        if bytes.get(i) == Some(&b':') {
            i += 1;
            sec = digits(bytes, &mut i, 2)?.into();
            if bytes.get(i) == Some(&b'.') {
                i += 1;
                let start = i;
                while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
                if i == start {
                    return None;
                }
                let frac = &s[start..i];
                let padded: String = frac.chars().chain("000".chars()).take(3).collect();
                ms = padded.parse().ok()?;
            }
        }
        if h > 24 || m > 59 || sec > 59 || (h == 24 && (m, sec, ms) != (0, 0, 0)) {
            return None;
        }
        ms_of_day = ((h * 60 + m) * 60 + sec) * 1000 + ms;
        match bytes.get(i) {
            None => {}
            Some(b'Z' | b'z') => i += 1,
            Some(&c @ (b'+' | b'-')) => {
                i += 1;
                let oh: i64 = digits(bytes, &mut i, 2)?.into();
                if bytes.get(i) == Some(&b':') {
                    i += 1;
                }
                let om: i64 = digits(bytes, &mut i, 2)?.into();
                offset_min = (oh * 60 + om) * if c == b'+' { 1 } else { -1 };
            }
            _ => return None,
        }
    }
    if i != bytes.len() {
        return None;
    }
    let base = NaiveDateTime::from(date).and_utc().timestamp_millis();
    Some(base + ms_of_day - offset_min * 60_000)
}

fn digits(bytes: &[u8], i: &mut usize, n: usize) -> Option<i32> {
    let slice = bytes.get(*i..*i + n)?;
    if !slice.iter().all(u8::is_ascii_digit) {
        return None;
    }
    *i += n;
    slice.iter().try_fold(0i32, |acc, &d| {
        acc.checked_mul(10)?.checked_add(i32::from(d - b'0'))
    })
}
