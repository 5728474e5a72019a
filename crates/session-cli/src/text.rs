//! Text helpers for human output: one-line excerpts measured in terminal columns, padding, sizes
//! and dates.

use std::io::IsTerminal;

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Width used when stdout is not a terminal and no `--width` was given (stable output for
/// pipes and tests).
pub(crate) const DEFAULT_WIDTH: usize = 100;

/// The width for excerpts: `--width`, else the terminal's width, else [`DEFAULT_WIDTH`].
pub(crate) fn output_width(flag: Option<usize>) -> usize {
    if let Some(w) = flag {
        return w.max(40);
    }
    if std::io::stdout().is_terminal() {
        let (_, cols) = console::Term::stdout().size();
        if cols >= 40 {
            return usize::from(cols);
        }
    }
    DEFAULT_WIDTH
}

/// Display width in terminal columns.
pub(crate) fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// `s` on one line: every run of whitespace (newlines included) becomes one space, control
/// characters are dropped, and the ends are trimmed.
pub(crate) fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len().min(512));
    let mut space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if c.is_control() {
            continue;
        }
        if space && !out.is_empty() {
            out.push(' ');
        }
        space = false;
        out.push(c);
    }
    out
}

/// `s` cut to at most `max` columns, with `…` when cut.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_owned();
    }
    if max == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = UnicodeWidthChar::width(c).unwrap_or(0);
        if w + cw > max.saturating_sub(1) {
            break;
        }
        w += cw;
        out.push(c);
    }
    out.push('…');
    out
}

/// One-line excerpt of at most `max` columns.
pub(crate) fn excerpt(s: &str, max: usize) -> String {
    // Only the start matters: avoid collapsing a 50 KB tool result just to cut it.
    let cut = s
        .char_indices()
        .nth(max.saturating_mul(4).max(64))
        .map_or(s, |(i, _)| &s[..i]);
    truncate(&one_line(cut), max)
}

/// `s` padded with spaces to `w` columns (never cut).
pub(crate) fn pad(s: &str, w: usize) -> String {
    let have = width(s);
    let mut out = s.to_owned();
    for _ in have..w {
        out.push(' ');
    }
    out
}

/// `s` right-aligned in `w` columns.
pub(crate) fn pad_left(s: &str, w: usize) -> String {
    let have = width(s);
    let mut out = String::new();
    for _ in have..w {
        out.push(' ');
    }
    out.push_str(s);
    out
}

/// A byte count as people read it: `812 B`, `1.2 KiB`, `950.3 KiB`, `12.0 MiB`.
pub(crate) fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = UNITS[0];
    for u in &UNITS[1..] {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = u;
    }
    format!("{v:.1} {unit}")
}

/// An integer with `,` thousands separators.
pub(crate) fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Milliseconds since the epoch as `YYYY-MM-DD HH:MM` (UTC), or `-`.
pub(crate) fn utc_minutes(ms: f64) -> String {
    if !ms.is_finite() {
        return "-".to_owned();
    }
    chrono::DateTime::from_timestamp_millis(ms as i64).map_or_else(
        || "-".to_owned(),
        |d| d.format("%Y-%m-%d %H:%M").to_string(),
    )
}

/// Milliseconds since the epoch as an ISO string (`2026-01-01T10:00:00.000Z`), or `None`.
pub(crate) fn iso(ms: f64) -> Option<String> {
    if !ms.is_finite() {
        return None;
    }
    session_format::time::to_iso_string(ms as i64)
}

/// The first 8 characters of an id (ids are 8 hex digits in files written by pi or OpenClaw).
pub(crate) fn short_id(id: &str) -> &str {
    match id.char_indices().nth(8) {
        Some((i, _)) => &id[..i],
        None => id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_collapses_whitespace() {
        assert_eq!(one_line("  a\n\n b\tc  "), "a b c");
    }

    #[test]
    fn truncate_counts_columns() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 3), "abc");
        assert_eq!(truncate("日本語テキスト", 5), "日本…");
    }

    #[test]
    fn sizes_and_numbers() {
        assert_eq!(human_bytes(812), "812 B");
        assert_eq!(human_bytes(974_031), "951.2 KiB");
        assert_eq!(thousands(1_018), "1,018");
        assert_eq!(thousands(974_031), "974,031");
        assert_eq!(thousands(12), "12");
    }

    #[test]
    fn dates() {
        assert_eq!(utc_minutes(1_767_261_600_000.0), "2026-01-01 10:00");
        assert_eq!(utc_minutes(f64::NAN), "-");
    }
}
