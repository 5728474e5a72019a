//! Dates as JavaScript sees them: `Date#toISOString` and `Date.parse`.
//!
//! `Date.parse` follows V8 (node 24, which runs OpenClaw 2026.6.11): first the ECMAScript
//! date-time string format (`YYYY[-MM[-DD]][THH:mm[:ss[.s+]][Z|±HH:mm|±HHmm]]`, ±YYYYYY years, a
//! day of month up to 31 rolling over into the next month, `24:00` allowed), then V8's legacy
//! fallback for everything else (month names, `M/D/Y`, `D Mon Y`, `GMT+0200`, AM/PM, zone
//! abbreviations, parenthesised comments). Forms without a zone are local time, as in JavaScript.
//! The behaviour is pinned by a corpus of V8 results (`tests/data/date-corpus.jsonl`).

use crate::js::is_whitespace;
use chrono::{DateTime, Local, NaiveDateTime, Offset, TimeZone, Utc};

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

/// `Date.parse(text)` in the machine's local time zone: milliseconds since the epoch, or `None`
/// where JavaScript gives `NaN`.
pub fn parse_js_date(text: &str) -> Option<i64> {
    parse_js_date_in(text, &Local)
}

/// `Date.parse(text)` with `zone` as the local time zone (forms without an explicit zone are
/// read in it).
pub fn parse_js_date_in<Z: TimeZone>(text: &str, zone: &Z) -> Option<i64> {
    let parsed = parse_fields(text)?;
    let day = make_day(parsed.year, parsed.month, parsed.day)?;
    let time = i128::from(parsed.hour) * 3_600_000
        + i128::from(parsed.minute) * 60_000
        + i128::from(parsed.second) * 1000
        + i128::from(parsed.millisecond);
    let date = day * 86_400_000 + time;
    let utc = match parsed.utc_offset_seconds {
        Some(offset) => {
            let t = date - i128::from(offset) * 1000;
            if t.abs() > MAX_TIME_MS {
                return None;
            }
            t
        }
        None => {
            if date.abs() > MAX_TIME_MS + 864_000_000 {
                return None;
            }
            let local = i64::try_from(date).ok()?;
            i128::from(local - local_offset_ms(local, zone)?)
        }
    };
    if utc.abs() > MAX_TIME_MS {
        return None;
    }
    i64::try_from(utc).ok()
}

/// ECMAScript's time value range: ±8.64e15 ms.
const MAX_TIME_MS: i128 = 8_640_000_000_000_000;

/// The offset (ms) to subtract from a local wall-clock time to get UTC, as V8's `ToUTC` does:
/// the offset in force at that wall-clock time (the earlier one at a transition).
fn local_offset_ms<Z: TimeZone>(local_ms: i64, zone: &Z) -> Option<i64> {
    let naive = DateTime::<Utc>::from_timestamp_millis(local_ms)?.naive_utc();
    let guess = zone
        .offset_from_utc_datetime(&naive)
        .fix()
        .local_minus_utc();
    let first = local_ms - i64::from(guess) * 1000;
    let at_first = offset_at(first, zone)?;
    Some(i64::from(at_first) * 1000)
}

fn offset_at<Z: TimeZone>(utc_ms: i64, zone: &Z) -> Option<i32> {
    let naive: NaiveDateTime = DateTime::<Utc>::from_timestamp_millis(utc_ms)?.naive_utc();
    Some(
        zone.offset_from_utc_datetime(&naive)
            .fix()
            .local_minus_utc(),
    )
}

/// Days since the epoch of `year`-`month`(0-based)-`day` (day may exceed the month's length).
fn make_day(year: i64, month0: i64, day: i64) -> Option<i128> {
    let year = i128::from(year) + i128::from(month0.div_euclid(12));
    let month = i128::from(month0.rem_euclid(12)) + 1;
    // Days from civil (Howard Hinnant's algorithm), proleptic Gregorian.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468 + i128::from(day) - 1)
}

/// The broken-down result of a parse.
struct Fields {
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
    millisecond: i64,
    /// `None`: local time.
    utc_offset_seconds: Option<i64>,
}

// ---------------------------------------------------------------------------------------------
// Tokens

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Keyword {
    MonthName,
    AmPm,
    ZoneName,
    TimeSeparator,
    Other,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    Number {
        value: i64,
        len: usize,
    },
    Symbol(char),
    Word {
        kind: Keyword,
        value: i64,
        len: usize,
    },
    Space,
    Unknown,
    End,
}

impl Token {
    fn is_number(self) -> bool {
        matches!(self, Token::Number { .. })
    }
    fn is_fixed(self, n: usize) -> bool {
        matches!(self, Token::Number { len, .. } if len == n)
    }
    fn number(self) -> i64 {
        match self {
            Token::Number { value, .. } => value,
            _ => 0,
        }
    }
    fn sign(self) -> Option<i64> {
        match self {
            Token::Symbol('+') => Some(1),
            Token::Symbol('-') => Some(-1),
            _ => None,
        }
    }
    fn is_z(self) -> bool {
        matches!(
            self,
            Token::Word {
                kind: Keyword::ZoneName,
                value: 0,
                len: 1
            }
        )
    }
}

const KEYWORDS: &[(&str, Keyword, i64)] = &[
    ("jan", Keyword::MonthName, 1),
    ("feb", Keyword::MonthName, 2),
    ("mar", Keyword::MonthName, 3),
    ("apr", Keyword::MonthName, 4),
    ("may", Keyword::MonthName, 5),
    ("jun", Keyword::MonthName, 6),
    ("jul", Keyword::MonthName, 7),
    ("aug", Keyword::MonthName, 8),
    ("sep", Keyword::MonthName, 9),
    ("oct", Keyword::MonthName, 10),
    ("nov", Keyword::MonthName, 11),
    ("dec", Keyword::MonthName, 12),
    ("am", Keyword::AmPm, 0),
    ("pm", Keyword::AmPm, 12),
    ("ut", Keyword::ZoneName, 0),
    ("utc", Keyword::ZoneName, 0),
    ("z", Keyword::ZoneName, 0),
    ("gmt", Keyword::ZoneName, 0),
    ("cdt", Keyword::ZoneName, -5),
    ("cst", Keyword::ZoneName, -6),
    ("edt", Keyword::ZoneName, -4),
    ("est", Keyword::ZoneName, -5),
    ("mdt", Keyword::ZoneName, -6),
    ("mst", Keyword::ZoneName, -7),
    ("pdt", Keyword::ZoneName, -7),
    ("pst", Keyword::ZoneName, -8),
    ("t", Keyword::TimeSeparator, 0),
];

struct Scanner {
    chars: Vec<char>,
    pos: usize,
    next: Token,
}

impl Scanner {
    fn new(text: &str) -> Self {
        let mut s = Scanner {
            chars: text.chars().collect(),
            pos: 0,
            next: Token::End,
        };
        s.next = s.scan();
        s
    }

    fn ch(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn scan(&mut self) -> Token {
        let Some(c) = self.ch() else {
            return Token::End;
        };
        if c.is_ascii_digit() {
            let start = self.pos;
            let mut n: i64 = 0;
            while let Some(d) = self.ch().filter(char::is_ascii_digit) {
                // V8 stops accumulating near i32::MAX / 10 but keeps consuming digits.
                if n < i64::from(i32::MAX) / 10 - 10 {
                    n = n * 10 + i64::from(d as u8 - b'0');
                }
                self.pos += 1;
            }
            return Token::Number {
                value: n,
                len: self.pos - start,
            };
        }
        if matches!(c, ':' | '-' | '+' | '.' | ')') {
            self.pos += 1;
            return Token::Symbol(c);
        }
        if c >= 'A' && !is_whitespace(c) {
            let start = self.pos;
            let mut prefix = String::new();
            while let Some(w) = self.ch().filter(|&w| w >= 'A' && !is_whitespace(w)) {
                if prefix.chars().count() < 3 {
                    prefix.push(if w.is_ascii() {
                        (w as u8 | 0x20) as char
                    } else {
                        w
                    });
                }
                self.pos += 1;
            }
            let len = self.pos - start;
            let (kind, value) = KEYWORDS
                .iter()
                .find(|(k, kind, _)| *k == prefix && (len <= 3 || *kind == Keyword::MonthName))
                .map_or((Keyword::Other, 0), |(_, kind, value)| (*kind, *value));
            return Token::Word { kind, value, len };
        }
        if is_whitespace(c) {
            while self.ch().is_some_and(is_whitespace) {
                self.pos += 1;
            }
            return Token::Space;
        }
        if c == '(' {
            let mut balance = 0;
            loop {
                match self.ch() {
                    Some(')') => balance -= 1,
                    Some('(') => balance += 1,
                    Some(_) => {}
                    None => break,
                }
                self.pos += 1;
                if balance <= 0 {
                    break;
                }
            }
            return Token::Unknown;
        }
        self.pos += 1;
        Token::Unknown
    }

    fn next(&mut self) -> Token {
        let t = self.next;
        self.next = self.scan();
        t
    }

    fn peek(&self) -> Token {
        self.next
    }

    fn skip_symbol(&mut self, c: char) -> bool {
        if self.next == Token::Symbol(c) {
            self.next = self.scan();
            true
        } else {
            false
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Composers

const NONE: i64 = i64::MIN;

fn between(x: i64, lo: i64, hi: i64) -> bool {
    (lo..=hi).contains(&x)
}

struct Day {
    comp: [i64; 3],
    index: usize,
    named_month: i64,
    iso: bool,
}

impl Day {
    fn add(&mut self, n: i64) -> bool {
        if self.index < 3 {
            self.comp[self.index] = n;
            self.index += 1;
            true
        } else {
            false
        }
    }

    fn write(&mut self) -> Option<(i64, i64, i64)> {
        if self.index < 1 {
            return None;
        }
        while self.index < 3 {
            self.comp[self.index] = 1;
            self.index += 1;
        }
        let (mut year, month, day);
        if self.named_month == NONE {
            if self.iso || !between(self.comp[0], 1, 31) {
                (year, month, day) = (self.comp[0], self.comp[1], self.comp[2]);
            } else {
                (month, day, year) = (self.comp[0], self.comp[1], self.comp[2]);
            }
        } else {
            month = self.named_month;
            if !between(self.comp[0], 1, 31) {
                (year, day) = (self.comp[0], self.comp[1]);
            } else {
                (day, year) = (self.comp[0], self.comp[1]);
            }
        }
        if !self.iso {
            if between(year, 0, 49) {
                year += 2000;
            } else if between(year, 50, 99) {
                year += 1900;
            }
        }
        if !between(year, -(1 << 30), (1 << 30) - 1)
            || !between(month, 1, 12)
            || !between(day, 1, 31)
        {
            return None;
        }
        Some((year, month - 1, day))
    }
}

struct Time {
    comp: [i64; 4],
    index: usize,
    hour_offset: i64,
}

impl Time {
    fn is_empty(&self) -> bool {
        self.index == 0
    }
    fn is_expecting(&self, n: i64) -> bool {
        (self.index == 1 && between(n, 0, 59))
            || (self.index == 2 && between(n, 0, 59))
            || (self.index == 3 && between(n, 0, 999))
    }
    fn add(&mut self, n: i64) -> bool {
        if self.index < 4 {
            self.comp[self.index] = n;
            self.index += 1;
            true
        } else {
            false
        }
    }
    fn add_final(&mut self, n: i64) -> bool {
        if !self.add(n) {
            return false;
        }
        while self.index < 4 {
            self.comp[self.index] = 0;
            self.index += 1;
        }
        true
    }
    fn write(&mut self) -> Option<[i64; 4]> {
        while self.index < 4 {
            self.comp[self.index] = 0;
            self.index += 1;
        }
        let mut c = self.comp;
        if self.hour_offset != NONE {
            if !between(c[0], 0, 12) {
                return None;
            }
            c[0] = c[0] % 12 + self.hour_offset;
        }
        let ok = between(c[0], 0, 23)
            && between(c[1], 0, 59)
            && between(c[2], 0, 59)
            && between(c[3], 0, 999);
        if !ok && (c[0] != 24 || c[1] != 0 || c[2] != 0 || c[3] != 0) {
            return None;
        }
        Some(c)
    }
}

struct Zone {
    sign: i64,
    hour: i64,
    minute: i64,
}

impl Zone {
    fn set(&mut self, offset_hours: i64) {
        self.sign = if offset_hours < 0 { -1 } else { 1 };
        self.hour = offset_hours.abs();
        self.minute = 0;
    }
    fn is_expecting(&self, n: i64) -> bool {
        self.hour != NONE && self.minute == NONE && between(n, 0, 59)
    }
    fn is_utc(&self) -> bool {
        self.hour == 0 && self.minute == 0
    }
    fn is_empty(&self) -> bool {
        self.hour == NONE
    }
    fn write(&self) -> Option<Option<i64>> {
        if self.sign == NONE {
            return Some(None);
        }
        let hour = if self.hour == NONE { 0 } else { self.hour };
        let minute = if self.minute == NONE { 0 } else { self.minute };
        let total = hour * 3600 + minute * 60;
        if total > i64::from(i32::MAX) / 2 {
            return None;
        }
        Some(Some(total * self.sign))
    }
}

/// V8's `ReadMilliseconds`: the first three significant digits of a fraction.
fn read_milliseconds(t: Token) -> i64 {
    let Token::Number { value, len } = t else {
        return 0;
    };
    match len {
        1 => value * 100,
        2 => value * 10,
        3 => value,
        _ => {
            let mut factor = 1;
            let mut l = len.min(9);
            while l > 3 {
                factor *= 10;
                l -= 1;
            }
            value / factor
        }
    }
}

enum Es5 {
    Done,
    Invalid,
    Continue(Token),
}

/// The ECMAScript date-time format; on a mismatch, the first token it could not use.
fn parse_es5(s: &mut Scanner, day: &mut Day, time: &mut Time, zone: &mut Zone) -> Es5 {
    if let Some(sign) = s.peek().sign() {
        let sign_token = s.next();
        if !s.peek().is_fixed(6) {
            return Es5::Continue(sign_token);
        }
        let year = s.next().number();
        if sign < 0 && year == 0 {
            return Es5::Continue(sign_token);
        }
        day.add(sign * year);
    } else if s.peek().is_fixed(4) {
        let year = s.next().number();
        day.add(year);
    } else {
        return Es5::Continue(s.next());
    }
    if s.skip_symbol('-') {
        if !s.peek().is_fixed(2) || !between(s.peek().number(), 1, 12) {
            return Es5::Continue(s.next());
        }
        let month = s.next().number();
        day.add(month);
        if s.skip_symbol('-') {
            if !s.peek().is_fixed(2) || !between(s.peek().number(), 1, 31) {
                return Es5::Continue(s.next());
            }
            let d = s.next().number();
            day.add(d);
        }
    }
    if !matches!(
        s.peek(),
        Token::Word {
            kind: Keyword::TimeSeparator,
            ..
        }
    ) {
        if s.peek() != Token::End {
            return Es5::Continue(s.next());
        }
    } else {
        s.next();
        if !s.peek().is_fixed(2) || !between(s.peek().number(), 0, 24) {
            return Es5::Invalid;
        }
        let hour_is_24 = s.peek().number() == 24;
        let hour = s.next().number();
        time.add(hour);
        if !s.skip_symbol(':') {
            return Es5::Invalid;
        }
        if !s.peek().is_fixed(2)
            || !between(s.peek().number(), 0, 59)
            || (hour_is_24 && s.peek().number() > 0)
        {
            return Es5::Invalid;
        }
        let minute = s.next().number();
        time.add(minute);
        if s.skip_symbol(':') {
            if !s.peek().is_fixed(2)
                || !between(s.peek().number(), 0, 59)
                || (hour_is_24 && s.peek().number() > 0)
            {
                return Es5::Invalid;
            }
            let second = s.next().number();
            time.add(second);
            if s.skip_symbol('.') {
                if !s.peek().is_number() || (hour_is_24 && s.peek().number() > 0) {
                    return Es5::Invalid;
                }
                let ms = read_milliseconds(s.next());
                time.add(ms);
            }
        }
        if s.peek().is_z() {
            s.next();
            zone.set(0);
        } else if let Some(sign) = s.peek().sign() {
            s.next();
            zone.sign = sign;
            if s.peek().is_fixed(4) {
                let hm = s.next().number();
                let (h, m) = (hm / 100, hm % 100);
                if !between(h, 0, 23) || !between(m, 0, 59) {
                    return Es5::Invalid;
                }
                zone.hour = h;
                zone.minute = m;
            } else {
                if !s.peek().is_fixed(2) || !between(s.peek().number(), 0, 23) {
                    return Es5::Invalid;
                }
                zone.hour = s.next().number();
                if !s.skip_symbol(':') {
                    return Es5::Invalid;
                }
                if !s.peek().is_fixed(2) || !between(s.peek().number(), 0, 59) {
                    return Es5::Invalid;
                }
                zone.minute = s.next().number();
            }
        }
        if s.peek() != Token::End {
            return Es5::Invalid;
        }
    }
    if zone.is_empty() && time.is_empty() {
        zone.set(0);
    }
    day.iso = true;
    Es5::Done
}

fn parse_fields(text: &str) -> Option<Fields> {
    let mut s = Scanner::new(text);
    let mut day = Day {
        comp: [0; 3],
        index: 0,
        named_month: NONE,
        iso: false,
    };
    let mut time = Time {
        comp: [0; 4],
        index: 0,
        hour_offset: NONE,
    };
    let mut zone = Zone {
        sign: NONE,
        hour: NONE,
        minute: NONE,
    };
    let first = match parse_es5(&mut s, &mut day, &mut time, &mut zone) {
        Es5::Invalid => return None,
        Es5::Done => Token::End,
        Es5::Continue(t) => t,
    };
    let mut has_read_number = day.index > 0;
    let mut token = first;
    while token != Token::End {
        match token {
            Token::Number { value: n, .. } => {
                has_read_number = true;
                if s.skip_symbol(':') {
                    if s.skip_symbol(':') {
                        if !time.is_empty() {
                            return None;
                        }
                        time.add(n);
                        time.add(0);
                    } else {
                        if !time.add(n) {
                            return None;
                        }
                        if s.peek() == Token::Symbol('.') {
                            s.next();
                        }
                    }
                } else if s.skip_symbol('.') && time.is_expecting(n) {
                    time.add(n);
                    if !s.peek().is_number() {
                        return None;
                    }
                    let ms = read_milliseconds(s.next());
                    time.add_final(ms);
                } else if zone.is_expecting(n) {
                    zone.minute = n;
                } else if time.is_expecting(n) {
                    time.add_final(n);
                    let p = s.peek();
                    if !(p == Token::End || p == Token::Space || p.is_z() || p.sign().is_some()) {
                        return None;
                    }
                } else {
                    if !day.add(n) {
                        return None;
                    }
                    s.skip_symbol('-');
                }
            }
            Token::Word { kind, value, .. } => {
                if kind == Keyword::AmPm && !time.is_empty() {
                    time.hour_offset = value;
                } else if kind == Keyword::MonthName {
                    day.named_month = value;
                    s.skip_symbol('-');
                } else if kind == Keyword::ZoneName && has_read_number {
                    zone.set(value);
                } else {
                    if has_read_number {
                        return None;
                    }
                    if s.peek().is_number() {
                        return None;
                    }
                }
            }
            Token::Symbol(c) if matches!(c, '+' | '-') && (zone.is_utc() || !time.is_empty()) => {
                zone.sign = if c == '+' { 1 } else { -1 };
                let (mut n, mut len) = (0, 0);
                if s.peek().is_number()
                    && let Token::Number { value, len: l } = s.next()
                {
                    n = value;
                    len = l;
                }
                has_read_number = true;
                if s.peek() == Token::Symbol(':') {
                    zone.hour = n;
                    zone.minute = NONE;
                } else if len == 1 || len == 2 {
                    zone.hour = n;
                    zone.minute = 0;
                } else if len == 3 || len == 4 {
                    zone.hour = n / 100;
                    zone.minute = n % 100;
                } else {
                    return None;
                }
            }
            Token::Symbol(c) if matches!(c, '+' | '-' | ')') && has_read_number => return None,
            _ => {}
        }
        token = s.next();
    }
    let (year, month, d) = day.write()?;
    let [hour, minute, second, millisecond] = time.write()?;
    let utc_offset_seconds = zone.write()?;
    Some(Fields {
        year,
        month,
        day: d,
        hour,
        minute,
        second,
        millisecond,
        utc_offset_seconds,
    })
}

/// `new Date(value).getTime()` for a row's `timestamp` in milliseconds since the epoch: a
/// string as `Date` parses it ([`parse_js_date`]), a number truncated (`NaN`
/// beyond ±8.64e15), `null` 0, a boolean 0 or 1, anything else (or nothing) `NaN`.
pub fn date_of(v: Option<&crate::json::JsValue>) -> f64 {
    match v {
        Some(crate::json::JsValue::String(s)) => {
            parse_js_date(&s.to_str_lossy()).map_or(f64::NAN, |ms| ms as f64)
        }
        Some(crate::json::JsValue::Number(n)) if n.abs() <= 8.64e15 => n.trunc(),
        Some(crate::json::JsValue::Null) => 0.0,
        Some(crate::json::JsValue::Bool(b)) => f64::from(u8::from(*b)),
        _ => f64::NAN,
    }
}
