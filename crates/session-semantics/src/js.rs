//! JavaScript string semantics the reference's key code relies on: `String.prototype.trim`
//! (ECMAScript WhiteSpace + LineTerminator, which differs from Rust's `str::trim`: U+FEFF is
//! trimmed, U+0085 is not), `toLowerCase` (full Unicode mapping, as Rust's `to_lowercase`), and
//! UTF-16 index arithmetic where the reference slices one string with indices found in another.

pub(crate) use session_format::js::trim;

/// `normalizeLowercaseStringOrEmpty(s)`: `s.trim().toLowerCase()`.
pub(crate) fn lower_trim(s: &str) -> String {
    trim(s).to_lowercase()
}

/// `normalizeOptionalString(s)`: trimmed, `None` when empty.
pub(crate) fn optional(s: &str) -> Option<&str> {
    let t = trim(s);
    (!t.is_empty()).then_some(t)
}

/// A string as UTF-16 code units (the reference's indices are code-unit indices).
pub(crate) fn units(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
}

/// Code units back to a string (a lone surrogate, which only an index split inside a pair can
/// produce, becomes U+FFFD).
pub(crate) fn from_units(u: &[u16]) -> String {
    String::from_utf16_lossy(u)
}

/// `normalizeLowercaseStringOrEmpty` over code units.
pub(crate) fn lower_trim_units(u: &[u16]) -> Vec<u16> {
    units(&lower_trim(&from_units(u)))
}

/// `trim` over code units.
pub(crate) fn trim_units(u: &[u16]) -> Vec<u16> {
    units(trim(&from_units(u)))
}

/// `haystack.lastIndexOf(needle)` in code units.
pub(crate) fn last_index_of(haystack: &[u16], needle: &[u16]) -> Option<usize> {
    if needle.len() > haystack.len() {
        return None;
    }
    (0..=haystack.len() - needle.len())
        .rev()
        .find(|&i| &haystack[i..i + needle.len()] == needle)
}

/// True when `u[at..]` starts with the ASCII `pat`, compared ASCII-case-insensitively (a
/// regular expression with the `i` flag and without `u` folds only ASCII letters onto ASCII).
pub(crate) fn starts_with_ci(u: &[u16], at: usize, pat: &str) -> bool {
    let pat = pat.as_bytes();
    if at + pat.len() > u.len() {
        return false;
    }
    u[at..at + pat.len()]
        .iter()
        .zip(pat)
        .all(|(&c, &p)| c < 0x80 && (c as u8).eq_ignore_ascii_case(&p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_is_javascript_trim() {
        assert_eq!(trim("\u{feff} a \u{3000}"), "a");
        assert_eq!(trim("\u{85}a\u{85}"), "\u{85}a\u{85}");
        assert_eq!(lower_trim("  ÀB\u{2028}"), "àb");
        assert_eq!(optional(" \t "), None);
        assert_eq!(optional(" x "), Some("x"));
    }

    #[test]
    fn unit_helpers() {
        let u = units("a:thread:b:thread:c");
        assert_eq!(last_index_of(&u, &units(":thread:")), Some(10));
        assert_eq!(last_index_of(&u, &units(":none:")), None);
        assert!(starts_with_ci(&units("xSIGNAL:"), 1, "signal:"));
        assert!(!starts_with_ci(&units("ſignal:"), 0, "signal:"));
        assert_eq!(from_units(&lower_trim_units(&units(" İ "))), "i\u{307}");
        assert_eq!(from_units(&trim_units(&units(" a "))), "a");
    }
}
