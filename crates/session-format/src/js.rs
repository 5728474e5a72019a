//! JavaScript text semantics for `&str`: what `\s` in a regular expression matches and what
//! `String.prototype.trim` removes (ECMAScript WhiteSpace + LineTerminator, ECMA-262 §12.2 and
//! §12.3). This differs from Rust's [`char::is_whitespace`] / [`str::trim`]: U+FEFF is
//! JavaScript whitespace, U+0085 is not.
//!
//! The reference normalises names, ids, keys and prompt text with these rules (spec
//! `openclaw-jsonl.md`: every place it says a value is "trimmed"). The same set on raw bytes of
//! a line: [`trim_js_start`] and [`trim_js_end`]; on JavaScript strings with lone surrogates:
//! [`trim_js_string`]. Also V8's `Array.prototype.sort` by a numeric key ([`sort_by_key`]), which listing and tree
//! queries use (pi-format.md §2.1); `new Date(value).getTime()` of a row's timestamp is
//! [`crate::time::date_of`].

use crate::json::JsString;

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

/// `s.trim()` on a JavaScript string, code units kept exactly (lone surrogates stay; they are
/// never whitespace).
pub fn trim_js_string(s: &JsString) -> JsString {
    if let Some(text) = s.as_str() {
        return JsString::new(trim(text));
    }
    let cps: Vec<u32> = s.code_points().collect();
    let ws = |cp: &u32| char::from_u32(*cp).is_some_and(is_whitespace);
    let start = cps.iter().position(|cp| !ws(cp)).unwrap_or(cps.len());
    let end = cps.iter().rposition(|cp| !ws(cp)).map_or(start, |e| e + 1);
    let mut units: Vec<u16> = Vec::with_capacity(end - start);
    for &cp in &cps[start..end] {
        match char::from_u32(cp) {
            Some(c) => {
                let mut buf = [0u16; 2];
                units.extend_from_slice(c.encode_utf16(&mut buf));
            }
            // A lone surrogate (a code point below 0x10000).
            None => units.push(cp as u16),
        }
    }
    JsString::from_utf16(&units)
}

/// Length of the JavaScript whitespace character (`String.prototype.trim`'s set: WhiteSpace and
/// LineTerminator) starting at `b[0]`, or 0.
pub(crate) fn js_space_len(b: &[u8]) -> usize {
    match b {
        [0x09..=0x0D | 0x20, ..] => 1,
        [0xC2, 0xA0, ..] => 2,
        [0xE1, 0x9A, 0x80, ..] => 3,
        [0xE2, 0x80, 0x80..=0x8A | 0xA8 | 0xA9 | 0xAF, ..] => 3,
        [0xE2, 0x81, 0x9F, ..] => 3,
        [0xE3, 0x80, 0x80, ..] => 3,
        [0xEF, 0xBB, 0xBF, ..] => 3,
        _ => 0,
    }
}

/// Length of the JavaScript whitespace character ending at the end of `b`, or 0.
pub(crate) fn js_space_len_back(b: &[u8]) -> usize {
    let n = b.len();
    if n >= 1 && matches!(b[n - 1], 0x09..=0x0D | 0x20) {
        return 1;
    }
    if n >= 2 && b[n - 2..] == [0xC2, 0xA0] {
        return 2;
    }
    if n >= 3 && js_space_len(&b[n - 3..]) == 3 {
        return 3;
    }
    0
}

/// Strips leading JavaScript whitespace ([`is_whitespace`]) from UTF-8 bytes.
pub fn trim_js_start(mut b: &[u8]) -> &[u8] {
    loop {
        let n = js_space_len(b);
        if n == 0 {
            return b;
        }
        b = &b[n..];
    }
}

/// Strips trailing JavaScript whitespace ([`is_whitespace`]) from UTF-8 bytes.
pub fn trim_js_end(mut b: &[u8]) -> &[u8] {
    loop {
        let n = js_space_len_back(b);
        if n == 0 {
            return b;
        }
        b = &b[..b.len() - n];
    }
}

/// Sorts `items` by `key` ascending the way V8's `Array.prototype.sort` does with the
/// comparator `a - b` (stable; a NaN difference counts as "equal", so rows with invalid
/// timestamps stay where the insertion sort leaves them).
pub fn sort_by_key<T: Copy>(items: &mut [T], key: impl Fn(&T) -> f64) {
    let n = items.len();
    if n < 2 {
        return;
    }
    let keys: Vec<f64> = items.iter().map(&key).collect();
    if keys.iter().all(|k| !k.is_nan()) {
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| keys[a].total_cmp(&keys[b]));
        apply_order(items, &order);
        return;
    }
    // V8 TimSort on a short array: one run (counted, reversed when strictly descending), then
    // binary insertion of the rest.
    let cmp = |a: f64, b: f64| -> f64 {
        let d = a - b;
        if d.is_nan() { 0.0 } else { d }
    };
    let mut order: Vec<usize> = (0..n).collect();
    let mut run = 2;
    let descending = cmp(keys[order[1]], keys[order[0]]) < 0.0;
    while run < n {
        let o = cmp(keys[order[run]], keys[order[run - 1]]);
        if (descending && o >= 0.0) || (!descending && o < 0.0) {
            break;
        }
        run += 1;
    }
    if descending {
        order[..run].reverse();
    }
    for start in run..n {
        let pivot = order[start];
        let (mut left, mut right) = (0, start);
        while left < right {
            let mid = left + ((right - left) >> 1);
            if cmp(keys[pivot], keys[order[mid]]) < 0.0 {
                right = mid;
            } else {
                left = mid + 1;
            }
        }
        order.copy_within(left..start, left + 1);
        order[left] = pivot;
    }
    apply_order(items, &order);
}

fn apply_order<T: Copy>(items: &mut [T], order: &[usize]) {
    let sorted: Vec<T> = order.iter().map(|&i| items[i]).collect();
    items.copy_from_slice(&sorted);
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

    #[test]
    fn byte_trims_agree_with_is_whitespace() {
        for cp in 0..=0x10FFFFu32 {
            let Some(c) = char::from_u32(cp) else {
                continue;
            };
            let mut buf = [0u8; 4];
            let s = c.encode_utf8(&mut buf).as_bytes();
            let ws = is_whitespace(c);
            assert_eq!(trim_js_start(s).is_empty(), ws, "{c:?}");
            assert_eq!(trim_js_end(s).is_empty(), ws, "{c:?}");
        }
        assert_eq!(trim_js_start(" \u{feff}a ".as_bytes()), "a ".as_bytes());
        assert_eq!(trim_js_end(" a\u{3000}\n".as_bytes()), " a".as_bytes());
    }

    #[test]
    fn trim_js_string_keeps_lone_surrogates() {
        let s = JsString::from_utf16(&[0x20, 0xD800, 0x61, 0x3000]);
        assert_eq!(trim_js_string(&s), JsString::from_utf16(&[0xD800, 0x61]));
        assert_eq!(
            trim_js_string(&JsString::new(" a\u{2028}")),
            JsString::new("a")
        );
    }

    #[test]
    fn sort_by_key_is_stable_and_keeps_nan_in_place() {
        let mut v = [3usize, 1, 2, 1];
        sort_by_key(&mut v, |&x| x as f64);
        assert_eq!(v, [1, 1, 2, 3]);
        // V8: the descending run [2, 1] is reversed, NaN compares "equal" to everything.
        let keys = [2.0, 1.0, f64::NAN, 0.0];
        let mut order = [0usize, 1, 2, 3];
        sort_by_key(&mut order, |&i| keys[i]);
        assert_eq!(order, [3, 1, 0, 2]);
    }
}
