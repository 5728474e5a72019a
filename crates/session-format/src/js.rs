//! JavaScript text semantics for `&str`: what `\s` in a regular expression matches and what
//! `String.prototype.trim` removes (ECMAScript WhiteSpace + LineTerminator, ECMA-262 §12.2 and
//! §12.3). This differs from Rust's [`char::is_whitespace`] / [`str::trim`]: U+FEFF is
//! JavaScript whitespace, U+0085 is not.
//!
//! The reference normalises names, ids, keys and prompt text with these rules (spec
//! `openclaw-jsonl.md`: every place it says a value is "trimmed"). For raw bytes of a line see
//! [`crate::line::trim_js_start`] and [`crate::line::trim_js_end`].

/// True for the code points JavaScript treats as whitespace: `\s` in a regular expression and
/// what `String.prototype.trim` removes (U+0009–U+000D, U+0020, U+00A0, U+1680, U+2000–U+200A,
/// U+2028, U+2029, U+202F, U+205F, U+3000, U+FEFF).
pub fn is_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}'..='\u{d}'
            | ' '
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
            | '\u{feff}'
    )
}

/// `s.trim()`: [`is_whitespace`] characters removed at both ends.
pub fn trim(s: &str) -> &str {
    s.trim_matches(is_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_is_javascript_whitespace() {
        for c in [
            '\t', '\n', '\u{b}', '\u{c}', '\r', ' ', '\u{a0}', '\u{1680}', '\u{2000}', '\u{200a}',
            '\u{2028}', '\u{2029}', '\u{202f}', '\u{205f}', '\u{3000}', '\u{feff}',
        ] {
            assert!(is_whitespace(c), "{c:?}");
        }
        for c in ['\u{85}', '\u{180e}', '\u{200b}', 'a', '\0'] {
            assert!(!is_whitespace(c), "{c:?}");
        }
    }

    #[test]
    fn trim_is_javascript_trim() {
        assert_eq!(trim("\u{feff} a b \u{3000}\u{2028}"), "a b");
        assert_eq!(trim("\u{85}a\u{85}"), "\u{85}a\u{85}");
        assert_eq!(trim(" \t\r\n"), "");
        assert_eq!(trim(""), "");
    }
}
