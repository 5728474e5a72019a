//! Text helpers for human output: one-line excerpts measured in terminal columns, padding, sizes
//! and dates.

use std::borrow::Cow;
use std::io::IsTerminal;
use std::path::Path;

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Width used when stdout is not a terminal and no `--width` was given (stable output for
/// pipes and tests).
pub(crate) const DEFAULT_WIDTH: usize = 100;

/// Whether stdout gets colour: a terminal, and `NO_COLOR` not set (to any value, the empty
/// string too; <https://no-color.org>).
pub(crate) fn stdout_color() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

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

/// The width a table must fit in: `None` (print every cell in full) with `--wide`; else the
/// `COLUMNS` environment variable when it is a number (at least 40 is used), so a pipe or a
/// test can ask for a width; else the terminal's width when stdout is a terminal (read with the
/// `console` crate the CLI already uses for its terminal handling, so no other crate is
/// needed); else `None`: output to a pipe or file is never cut unless `COLUMNS` asks for it.
pub(crate) fn table_width(wide: bool) -> Option<usize> {
    if wide {
        return None;
    }
    if let Some(cols) = std::env::var("COLUMNS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&c| c > 0)
    {
        return Some(cols.max(40));
    }
    if std::io::stdout().is_terminal() {
        return console::Term::stdout()
            .size_checked()
            .map(|(_, cols)| usize::from(cols).max(40));
    }
    None
}

/// `s` cut to at most `max` columns by dropping its start, with `…` first when cut (for paths,
/// whose end names the file).
pub(crate) fn truncate_start(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_owned();
    }
    if max == 0 {
        return String::new();
    }
    let mut tail: Vec<char> = Vec::new();
    let mut w = 0;
    for c in s.chars().rev() {
        let cw = UnicodeWidthChar::width(c).unwrap_or(0);
        if w + cw > max.saturating_sub(1) {
            break;
        }
        w += cw;
        tail.push(c);
    }
    let mut out = String::from("…");
    out.extend(tail.into_iter().rev());
    out
}

/// `s` cut to at most `max` columns in its middle (`…`), keeping its start and its last
/// third (for session keys, whose end tells two keys apart).
pub(crate) fn truncate_middle(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_owned();
    }
    if max < 5 {
        return truncate(s, max);
    }
    let tail_w = (max - 1) / 3;
    let head = truncate(s, max - tail_w);
    let head = head.strip_suffix('…').unwrap_or(&head).to_owned();
    let tail = truncate_start(s, tail_w + 1);
    let tail = tail.strip_prefix('…').unwrap_or(&tail);
    format!("{head}…{tail}")
}

/// A path cut to at most `max` columns: its start dropped (`…`) while its file name fits,
/// else `…` and the file name's start (cut with `…`): the start of a session file's name is
/// its session id.
pub(crate) fn truncate_path(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_owned();
    }
    let name = s.rsplit('/').next().unwrap_or(s);
    if width(name) < max || max < 3 {
        return truncate_start(s, max);
    }
    format!("…{}", truncate(name, max - 1))
}

/// An aligned table of `heads` and `cells` (one `Vec` per row, as many cells as heads), two
/// spaces between columns, `right[i]` right-aligning column `i`; the last column (a path) is
/// never padded. With a `width`, a table wider than it is fitted, in this order: the last
/// column is cut as a path ([`truncate_path`]) down to 20 columns; column `shrink` (a key) is cut in its
/// middle down to 20; the columns of `drop` are left out, one at a time in that order, until
/// the table fits; the last column is cut down to 12, and left out when it still does not fit;
/// the key is cut down to 12; then other columns are left out, rightmost first (their cells are
/// never cut); the key is cut down to 4; room left over goes back to the last column, then to
/// the key; a line still too wide is cut at `width` (`…`). Every line is then at most `width`
/// columns. Without a `width` nothing is cut.
pub(crate) fn fit_table(
    heads: &[&str],
    cells: &[Vec<String>],
    right: &[bool],
    shrink: Option<usize>,
    drop: &[usize],
    width_limit: Option<usize>,
) -> Vec<String> {
    let n = heads.len();
    let natural: Vec<usize> = (0..n)
        .map(|i| {
            cells
                .iter()
                .filter_map(|r| r.get(i))
                .map(|c| width(c))
                .chain(std::iter::once(width(heads[i])))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut w = natural.clone();
    let mut shown = vec![true; n];
    if let (Some(limit), Some(last)) = (width_limit, n.checked_sub(1)) {
        let total = |w: &[usize], shown: &[bool]| {
            let cols = shown.iter().filter(|s| **s).count();
            w.iter()
                .zip(shown)
                .filter(|(_, s)| **s)
                .map(|(w, _)| *w)
                .sum::<usize>()
                + 2 * cols.saturating_sub(1)
        };
        let cut = |w: &mut Vec<usize>, shown: &[bool], i: usize, min: usize| {
            let excess = total(w, shown).saturating_sub(limit);
            let room = w[i].saturating_sub(min);
            w[i] -= excess.min(room);
        };
        cut(&mut w, &shown, last, 20);
        if let Some(k) = shrink.filter(|&k| k < last) {
            cut(&mut w, &shown, k, 20);
        }
        for &d in drop.iter().filter(|&&d| d < last) {
            if total(&w, &shown) <= limit {
                break;
            }
            shown[d] = false;
        }
        // A path cut below 12 columns names nothing: it is left out instead.
        cut(&mut w, &shown, last, 12);
        if total(&w, &shown) > limit {
            shown[last] = false;
        }
        let key = shrink.filter(|&k| k < last);
        if let Some(k) = key {
            cut(&mut w, &shown, k, 12);
        }
        // Other cells are never cut: columns are left out, last first, until the table fits.
        for d in (0..last).rev() {
            if total(&w, &shown) <= limit {
                break;
            }
            if Some(d) != key && shown[d] && shown.iter().filter(|s| **s).count() > 1 {
                shown[d] = false;
            }
        }
        if let Some(k) = key {
            cut(&mut w, &shown, k, 4);
        }
        // Room left after leaving columns out goes back to the path, then to the key.
        for i in std::iter::once(last).chain(key) {
            if !shown[i] {
                continue;
            }
            let spare = limit.saturating_sub(total(&w, &shown));
            w[i] += spare.min(natural[i].saturating_sub(w[i]));
        }
    }
    let line = |row: &[&str]| {
        let mut l = String::new();
        for (i, cell) in row.iter().enumerate() {
            if !shown.get(i).copied().unwrap_or(true) {
                continue;
            }
            let cw = w.get(i).copied().unwrap_or(0);
            if i + 1 == n {
                l.push_str(&truncate_path(cell, cw));
            } else {
                let c = if Some(i) == shrink {
                    truncate_middle(cell, cw)
                } else {
                    truncate(cell, cw)
                };
                if right.get(i).copied().unwrap_or(false) {
                    l.push_str(&pad_left(&c, cw));
                } else {
                    l.push_str(&pad(&c, cw));
                }
                l.push_str("  ");
            }
        }
        let l = l.trim_end();
        match width_limit {
            Some(limit) if width(l) > limit => truncate(l, limit),
            _ => l.to_owned(),
        }
    };
    let mut out = Vec::with_capacity(cells.len() + 1);
    out.push(line(heads));
    for r in cells {
        let row: Vec<&str> = r.iter().map(String::as_str).collect();
        out.push(line(&row));
    }
    out
}

/// Display width in terminal columns.
pub(crate) fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// True for characters that must not reach a terminal raw: C0 and C1 controls, DEL, the
/// bidirectional-text controls (which reorder what follows them), line and paragraph separators,
/// the invisible zero-width space and word joiner (which make two different names look the
/// same; the zero-width joiner and non-joiner are kept: emoji and scripts need them) and the
/// byte-order mark.
pub(crate) fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{200B}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'
                | '\u{2066}'..='\u{2069}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{FEFF}'
        )
}

fn push_escaped(c: char, out: &mut String) {
    use std::fmt::Write as _;
    let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
}

/// `s` with every [`is_unsafe`] character written as `\u{hex}` (human output only; JSON output
/// stays exact).
pub(crate) fn safe(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if is_unsafe(c) {
            push_escaped(c, &mut out);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `s` with every [`is_unsafe`] character except newline and tab escaped (for multi-line human
/// output such as the Markdown export).
pub(crate) fn safe_multiline(s: &str) -> Cow<'_, str> {
    let bad = |c: char| is_unsafe(c) && c != '\n' && c != '\t';
    if !s.chars().any(bad) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if bad(c) {
            push_escaped(c, &mut out);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A path for human output ([`safe`]).
pub(crate) fn path(p: &Path) -> String {
    safe(&p.display().to_string()).into_owned()
}

/// `s` on one line: every run of whitespace (newlines included) becomes one space, the ends are
/// trimmed, and the other [`is_unsafe`] characters (controls, bidi controls) are escaped as
/// `\u{hex}`.
pub(crate) fn one_line(s: &str) -> String {
    one_line_with(s, true)
}

fn one_line_with(s: &str, escape: bool) -> String {
    let mut out = String::with_capacity(s.len().min(512));
    let mut space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space && !out.is_empty() {
            out.push(' ');
        }
        space = false;
        if escape && is_unsafe(c) {
            push_escaped(c, &mut out);
        } else {
            out.push(c);
        }
    }
    out
}

/// `s` quoted for a POSIX shell when it needs it (`'…'`, with `'` written as `'\''`).
pub(crate) fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '_' | '-' | '.' | '/' | ':' | '=' | '@' | '%' | '+' | ',')
        });
    if plain {
        return s.to_owned();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
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

/// One-line excerpt of at most `max` columns for JSON output: whitespace collapsed, every other
/// character kept as it is (JSON escapes what needs escaping).
pub(crate) fn excerpt_exact(s: &str, max: usize) -> String {
    let cut = s
        .char_indices()
        .nth(max.saturating_mul(4).max(64))
        .map_or(s, |(i, _)| &s[..i]);
    truncate(&one_line_with(cut, false), max)
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

/// Number of leading characters two strings share.
fn common_chars(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

/// Short forms of a set of ids for human output: the shortest prefix of each id that no other
/// id of the set starts with, at least 8 characters (the whole id when it is shorter, or when
/// another id extends it), escaped with [`safe`]. `list`, `tree`, `context` and the exports
/// use it, so one session's ids look the same everywhere.
///
/// Building it copies the ids into one buffer and sorts them (O(n log n), two allocations in
/// all, 24 bytes per id plus the ids' bytes); each [`ShortIds::get`] then finds the id's
/// sorted neighbours by binary search (O(log n)), so a command that prints a few ids of a large
/// session computes only those.
#[derive(Debug, Default)]
pub(crate) struct ShortIds {
    /// Every id's bytes, one after the other.
    text: String,
    /// The distinct ids, sorted by their bytes: (the first 8 bytes, big-endian, zero-padded;
    /// start in `text`; length in bytes).
    sorted: Vec<(u64, usize, usize)>,
}

/// The first 8 bytes of `s` as a big-endian number, zero-padded: comparing these compares the
/// strings' first 8 bytes (a shorter string's padding sorts before any byte).
fn prefix_key(s: &str) -> u64 {
    let mut k = [0u8; 8];
    let n = s.len().min(8);
    k[..n].copy_from_slice(&s.as_bytes()[..n]);
    u64::from_be_bytes(k)
}

impl ShortIds {
    /// The short forms of `ids` (duplicates allowed).
    pub(crate) fn new<'a>(ids: impl IntoIterator<Item = &'a str>) -> Self {
        let ids = ids.into_iter();
        let mut text = String::with_capacity(ids.size_hint().0 * 8);
        let mut sorted: Vec<(u64, usize, usize)> = Vec::with_capacity(ids.size_hint().0);
        for id in ids {
            sorted.push((prefix_key(id), text.len(), id.len()));
            text.push_str(id);
        }
        let of = |e: &(u64, usize, usize)| &text[e.1..e.1 + e.2];
        sorted.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| of(a).cmp(of(b))));
        sorted.dedup_by(|a, b| a.0 == b.0 && of(a) == of(b));
        ShortIds { text, sorted }
    }

    /// The id of a sorted entry.
    fn of(&self, e: &(u64, usize, usize)) -> &str {
        &self.text[e.1..e.1 + e.2]
    }

    /// The short form of `id` (an id outside the set gets its first 8 characters).
    pub(crate) fn get(&self, id: &str) -> String {
        let key = prefix_key(id);
        let k = self
            .sorted
            .partition_point(|e| e.0 < key || (e.0 == key && self.of(e) < id));
        if self.sorted.get(k).is_none_or(|e| self.of(e) != id) {
            return safe(short_id(id)).into_owned();
        }
        let before = k
            .checked_sub(1)
            .map_or(0, |p| common_chars(self.of(&self.sorted[p]), id));
        let after = self
            .sorted
            .get(k + 1)
            .map_or(0, |n| common_chars(self.of(n), id));
        let len = id.chars().count();
        let want = (before.max(after) + 1).max(8).min(len);
        let cut = id.char_indices().nth(want).map_or(id.len(), |(i, _)| i);
        safe(&id[..cut]).into_owned()
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
    fn controls_and_bidi_are_escaped() {
        assert_eq!(
            one_line("rtl \u{202e} text\u{7}bell \u{1b}[31mred\u{0}"),
            "rtl \\u{202e} text\\u{7}bell \\u{1b}[31mred\\u{0}"
        );
        assert_eq!(safe("ü\u{202e}\u{0}x"), "ü\\u{202e}\\u{0}x");
        assert_eq!(safe("plain ü"), "plain ü");
        assert_eq!(safe("\u{85}\u{2066}\u{feff}"), "\\u{85}\\u{2066}\\u{feff}");
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(shell_quote("/tmp/a-b_c.jsonl"), "/tmp/a-b_c.jsonl");
        assert_eq!(shell_quote("demo with space"), "'demo with space'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn short_ids_are_shortest_unique_prefixes() {
        let ids = [
            "0195f000-0000-7000-8000-000000000001",
            "0195f000-0000-7000-8000-000000000002",
            "0195f000-1111-7000-8000-000000000003",
            "abcdef12-0000",
            "abc",
            "a1",
        ];
        let s = ShortIds::new(ids);
        assert_eq!(s.get(ids[0]), "0195f000-0000-7000-8000-000000000001");
        assert_eq!(s.get(ids[1]), "0195f000-0000-7000-8000-000000000002");
        assert_eq!(s.get(ids[2]), "0195f000-1");
        assert_eq!(s.get(ids[3]), "abcdef12");
        assert_eq!(s.get("abc"), "abc");
        assert_eq!(s.get("a1"), "a1");
        assert_eq!(s.get("not-in-the-set-at-all"), "not-in-t");
        assert_eq!(
            ShortIds::new(["x\u{0}\u{202e}yz"]).get("x\u{0}\u{202e}yz"),
            "x\\u{0}\\u{202e}yz"
        );
    }

    /// The binary-search short ids are the ones of a map built from every sorted neighbour
    /// pair (the former construction), for ids sharing prefixes of every length, shorter than
    /// 8 characters, multi-byte, empty, repeated, and for ids outside the set.
    #[test]
    fn short_ids_equal_the_pairwise_construction() {
        let mut ids: Vec<String> = vec![
            String::new(),
            "a".into(),
            "ab".into(),
            "abcdefgh".into(),
            "abcdefghi".into(),
            "abcdefgh\u{0}".into(),
            "abcdefg\u{0}".into(),
            "abcdefg".into(),
            "日本語日本語日本語".into(),
            "日本語日本語日本".into(),
            "日本語日本語日本x".into(),
            "\u{fffd}\u{fffd}".into(),
        ];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for k in 0..2_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 12) as usize;
            let hex = format!("{x:016x}");
            ids.push(format!(
                "{}{}",
                ["", "0195f000-", "abcdefgh", "ab"][(k % 4) as usize],
                &hex[..len]
            ));
        }
        ids.push(ids[5].clone());
        let s = ShortIds::new(ids.iter().map(String::as_str));
        let mut sorted: Vec<&str> = ids.iter().map(String::as_str).collect();
        sorted.sort_unstable();
        sorted.dedup();
        for (k, id) in sorted.iter().enumerate() {
            let before = k.checked_sub(1).map_or(0, |p| common_chars(sorted[p], id));
            let after = sorted.get(k + 1).map_or(0, |n| common_chars(n, id));
            let want = (before.max(after) + 1).max(8).min(id.chars().count());
            let cut = id.char_indices().nth(want).map_or(id.len(), |(i, _)| i);
            assert_eq!(s.get(id), safe(&id[..cut]), "{id:?}");
        }
        assert_eq!(s.get("abcdefgh-not-there"), "abcdefgh");
        assert_eq!(s.get("zz"), "zz");
        assert_eq!(ShortIds::default().get("0123456789"), "01234567");
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

    /// A path keeps its file name while the name fits, else the name's start (the session
    /// id); a key keeps its start and its last third.
    #[test]
    fn cut_paths_and_keys() {
        let p = "./agents/main/sessions/00000026-0000-4000-8000-0c6110000000.jsonl";
        assert_eq!(truncate_path(p, 200), p);
        assert_eq!(
            truncate_path(p, 50),
            "…ssions/00000026-0000-4000-8000-0c6110000000.jsonl"
        );
        assert_eq!(truncate_path(p, 20), "…00000026-0000-4000…");
        assert_eq!(width(&truncate_path(p, 20)), 20);
        assert_eq!(
            truncate_middle("agent:main:telegram:group:-1001234567890", 20),
            "agent:main:te…567890"
        );
        assert_eq!(truncate_middle("agent:main:main", 20), "agent:main:main");
    }

    /// A fitted table: every line within the width, the path cut first, then the key, then
    /// the dropped columns; without a width nothing is cut.
    #[test]
    fn fitted_tables() {
        let heads = ["KEY", "NOTE", "N", "PATH"];
        let cells = vec![vec![
            "agent:main:telegram:group:-1001234567890".to_owned(),
            "a-long-note-column".to_owned(),
            "7".to_owned(),
            "./agents/main/sessions/0000000a-0000-4000-8000-0c6110000000.jsonl".to_owned(),
        ]];
        let right = [false, false, true, false];
        let full = fit_table(&heads, &cells, &right, Some(0), &[1], None);
        assert_eq!(
            full[1],
            "agent:main:telegram:group:-1001234567890  a-long-note-column  7  \
             ./agents/main/sessions/0000000a-0000-4000-8000-0c6110000000.jsonl"
        );
        let at_90 = fit_table(&heads, &cells, &right, Some(0), &[1], Some(90));
        assert_eq!(
            at_90,
            [
                "KEY                                       NOTE                N  PATH",
                "agent:main:telegram:group:-1001234567890  a-long-note-column  7  …0000000a-0000-4000-8000…",
            ]
        );
        let at_60 = fit_table(&heads, &cells, &right, Some(0), &[1], Some(60));
        assert_eq!(
            at_60,
            [
                "KEY                   N  PATH",
                "agent:main:te…567890  7  …0000000a-0000-4000-8000-0c6110000…",
            ]
        );
        let at_40 = fit_table(&heads, &cells, &right, Some(0), &[1], Some(40));
        assert!(at_40.iter().all(|l| width(l) <= 40), "{at_40:?}");
        assert_eq!(at_40[1], "agent:main:te…567890  7  …0000000a-0000…");
        // PATH would get fewer than 12 columns: it is left out, and the key gets the room.
        let at_30 = fit_table(&heads, &cells, &right, Some(0), &[1], Some(30));
        assert_eq!(
            at_30,
            [
                "KEY                          N",
                "agent:main:telegra…34567890  7"
            ]
        );
    }
}
