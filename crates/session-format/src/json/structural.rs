//! The accept-or-refuse envelope walk for clean lines: one pass over the line, 64 bytes at a
//! time, that classifies each block (quotes not escaped, `{}[]:,` outside strings, the first
//! byte of each number or literal) and walks only those token positions, reading the top-level
//! fields (and `message.role`) as [`super::scan`]'s walk does.
//!
//! It returns `Some(envelope)` only for a line it fully validated, and `None` ("refused") for
//! anything unusual: a line that is not an object, any control byte (even whitespace such as a
//! tab), any backslash escape it does not accept, an escaped key where a field name is compared,
//! nesting deeper than 64, a number or literal that breaks the grammar, or any token out of
//! place. The caller then runs the exact walk, so errors and their offsets stay the old code's.
//!
//! Why the token walk is exact for an accepted line: strings are found with the odd-backslash-run
//! rule and a prefix XOR of the unescaped quotes. That split is the real one whenever every
//! backslash lies inside a string the split found, because a string the walk opens then starts
//! after a token, never after a backslash. Every byte outside those strings that is not a token
//! lies in a gap that starts right after a token (or is leading space), and each gap is checked
//! whole: spaces, at most one number or literal (by its grammar, where a value may come), spaces,
//! then a token or the end. So a backslash outside the strings is refused, and every byte of an
//! accepted line is inside a string (checked for control bytes and escapes), a token (checked by
//! the state machine), or in a checked gap.

use wide::u8x16;

use super::scan::{Envelope, Field, ValueKind, decode_field};

/// Alternating bits starting at bit 0 (simdjson's `EVEN_BITS`).
const EVEN_BITS: u64 = 0x5555_5555_5555_5555;

/// Deepest nesting the walk follows (one bit per level); deeper lines are refused.
const MAX_FAST_DEPTH: u32 = 64;

#[inline(always)]
fn lanes(block: &[u8; 64], i: usize) -> u8x16 {
    let mut a = [0u8; 16];
    a.copy_from_slice(&block[16 * i..16 * i + 16]);
    u8x16::new(a)
}

#[inline(always)]
fn gather(parts: [u8x16; 4]) -> u64 {
    u64::from(parts[0].to_bitmask())
        | u64::from(parts[1].to_bitmask()) << 16
        | u64::from(parts[2].to_bitmask()) << 32
        | u64::from(parts[3].to_bitmask()) << 48
}

/// Masks of one 64-byte block.
struct Block {
    quote: u64,
    backslash: u64,
    control: u64,
    /// `{`, `}`, `[`, `]`, `:`, `,` (inside strings or not).
    structural: u64,
}

#[inline(always)]
fn classify(block: &[u8; 64]) -> Block {
    let v = [
        lanes(block, 0),
        lanes(block, 1),
        lanes(block, 2),
        lanes(block, 3),
    ];
    let below = u8x16::splat(0x1F);
    let zero = u8x16::splat(0);
    Block {
        quote: gather(v.map(|x| x.simd_eq(u8x16::splat(b'"')))),
        backslash: gather(v.map(|x| x.simd_eq(u8x16::splat(b'\\')))),
        control: gather(v.map(|x| x.saturating_sub(below).simd_eq(zero))),
        // `[` and `]` are `{` and `}` without bit 0x20.
        structural: gather(v.map(|x| {
            let folded = x | u8x16::splat(0x20);
            folded.simd_eq(u8x16::splat(b'{'))
                | folded.simd_eq(u8x16::splat(b'}'))
                | x.simd_eq(u8x16::splat(b':'))
                | x.simd_eq(u8x16::splat(b','))
        })),
    }
}

/// The bytes of `block` that may follow a backslash: `"\/bfnrt` and `u`.
#[inline]
fn escape_chars(block: &[u8; 64]) -> (u64, u64) {
    let v = [
        lanes(block, 0),
        lanes(block, 1),
        lanes(block, 2),
        lanes(block, 3),
    ];
    let simple = v.map(|x| {
        let mut m = x.simd_eq(u8x16::splat(b'"'));
        for c in [b'\\', b'/', b'b', b'f', b'n', b'r', b't'] {
            m |= x.simd_eq(u8x16::splat(c));
        }
        m
    });
    let u = v.map(|x| x.simd_eq(u8x16::splat(b'u')));
    (gather(simple), gather(u))
}

/// Bit `i` set when an odd number of bits at or below `i` are set.
#[inline(always)]
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

/// Where the walk is in the grammar.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// A value must come (after `:`, after `,` in an array, or at the start).
    Value,
    /// After `[`: a value or `]`.
    ValueOrEnd,
    /// After `{`: a key or `}`.
    KeyOrEnd,
    /// After `,` in an object: a key.
    Key,
    /// After a key: `:`.
    Colon,
    /// After a value: `,` or the closing bracket.
    AfterValue,
    /// Inside a key string (opened at `str_start`).
    InKey,
    /// Inside a value string (opened at `str_start`).
    InValue,
    /// The top-level object is closed: only spaces may follow.
    Done,
}

/// Which envelope slot the next value fills.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    None,
    Type,
    Id,
    ParentId,
    AppendMode,
    Message,
    Role,
}

/// The walk's state between tokens.
struct Walker<'a> {
    input: &'a [u8],
    env: Envelope<'a>,
    state: State,
    /// Open containers.
    depth: u32,
    /// Bit `d` set when the container at depth `d + 1` is an array.
    arrays: u64,
    /// Inside the top-level `message` object (at depth 2).
    in_message: bool,
    slot: Slot,
    str_start: usize,
}

/// A token byte: a quote or one of `{}[]:,`.
#[inline(always)]
fn is_token(b: u8) -> bool {
    matches!(b, b'"' | b',' | b':' | b'{' | b'}' | b'[' | b']')
}

/// The end of the number at `pos` when it follows the JSON number grammar and ends there.
#[inline]
fn number_end(input: &[u8], mut pos: usize) -> Option<usize> {
    let digit = |p: usize| input.get(p).is_some_and(u8::is_ascii_digit);
    if input.get(pos) == Some(&b'-') {
        pos += 1;
    }
    match input.get(pos) {
        Some(b'0') => pos += 1,
        Some(b'1'..=b'9') => {
            pos += 1;
            while digit(pos) {
                pos += 1;
            }
        }
        _ => return None,
    }
    if input.get(pos) == Some(&b'.') {
        pos += 1;
        if !digit(pos) {
            return None;
        }
        while digit(pos) {
            pos += 1;
        }
    }
    if matches!(input.get(pos), Some(b'e' | b'E')) {
        pos += 1;
        if matches!(input.get(pos), Some(b'+' | b'-')) {
            pos += 1;
        }
        if !digit(pos) {
            return None;
        }
        while digit(pos) {
            pos += 1;
        }
    }
    Some(pos)
}

impl<'a> Walker<'a> {
    /// Fills the pending slot with `field`.
    #[inline(always)]
    fn fill(&mut self, field: Field<'a>) {
        match self.slot {
            Slot::None => return,
            Slot::Type => self.env.r#type = field,
            Slot::Id => self.env.id = field,
            Slot::ParentId => self.env.parent_id = field,
            Slot::AppendMode => self.env.append_mode = field,
            // A `message` that is not an object has no role.
            Slot::Message => self.env.role = Field::Absent,
            Slot::Role => self.env.role = field,
        }
        self.slot = Slot::None;
    }

    #[inline(always)]
    fn push(&mut self, array: bool) -> Option<()> {
        if self.depth >= MAX_FAST_DEPTH {
            return None;
        }
        if array {
            self.arrays |= 1 << self.depth;
        } else {
            self.arrays &= !(1 << self.depth);
        }
        self.depth += 1;
        Some(())
    }

    /// True when the innermost open container is an array (`depth > 0`).
    #[inline(always)]
    fn top_is_array(&self) -> bool {
        self.arrays >> (self.depth - 1) & 1 == 1
    }

    #[inline(always)]
    fn pop(&mut self) {
        self.depth -= 1;
        if self.depth == 1 {
            self.in_message = false;
        }
        self.state = if self.depth == 0 {
            State::Done
        } else {
            State::AfterValue
        };
    }

    /// Handles the key that ends at the quote `end`.
    #[inline(always)]
    fn key(&mut self, end: usize) -> Option<()> {
        self.state = State::Colon;
        let top = self.depth == 1;
        if !(top || self.depth == 2 && self.in_message) {
            return Some(());
        }
        let key = &self.input[self.str_start + 1..end];
        self.slot = match (top, key) {
            (true, b"type") => Slot::Type,
            (true, b"id") => Slot::Id,
            (true, b"parentId") => Slot::ParentId,
            (true, b"message") => Slot::Message,
            (true, b"appendMode") => Slot::AppendMode,
            (false, b"role") => Slot::Role,
            _ => {
                // An escaped key might decode to a field name: leave it to the exact walk.
                if key.contains(&b'\\') {
                    return None;
                }
                Slot::None
            }
        };
        Some(())
    }

    /// Handles the closing quote at `pos` of the string opened at `str_start`.
    #[inline(always)]
    fn close_string(&mut self, pos: usize) -> Option<()> {
        if self.state == State::InKey {
            return self.key(pos);
        }
        if self.slot != Slot::None {
            let body = &self.input[self.str_start + 1..pos];
            let escaped = body.contains(&b'\\');
            self.fill(Field::Str(decode_field(body, escaped)));
        }
        self.state = State::AfterValue;
        Some(())
    }

    /// Checks the bytes from `pos`, right after a token, up to the next token: spaces, at most
    /// one number or literal where a value may come, spaces.
    #[inline(always)]
    fn gap(&mut self, pos: usize) -> Option<()> {
        let input = self.input;
        let mut p = pos;
        while input.get(p) == Some(&b' ') {
            p += 1;
        }
        match input.get(p) {
            None => return Some(()),
            Some(&b) if is_token(b) => return Some(()),
            Some(_) => {}
        }
        if !matches!(self.state, State::Value | State::ValueOrEnd) {
            return None;
        }
        let b = input[p];
        let mut end = match b {
            b't' | b'f' | b'n' => {
                let word: &[u8] = match b {
                    b't' => b"true",
                    b'f' => b"false",
                    _ => b"null",
                };
                if input.get(p..p + word.len()) != Some(word) {
                    return None;
                }
                p + word.len()
            }
            b'-' | b'0'..=b'9' => number_end(input, p)?,
            _ => return None,
        };
        self.fill(if b == b'n' { Field::Null } else { Field::Other });
        self.state = State::AfterValue;
        while input.get(end) == Some(&b' ') {
            end += 1;
        }
        match input.get(end) {
            None => Some(()),
            Some(&b) if is_token(b) => Some(()),
            Some(_) => None,
        }
    }

    /// Handles the token at `pos` (not a closing quote).
    #[inline(always)]
    fn token(&mut self, pos: usize) -> Option<()> {
        let b = self.input[pos];
        if !is_token(b) {
            return self.gap(pos);
        }
        match self.state {
            // Closing quotes go to `close_string`.
            State::InKey | State::InValue => return None,
            State::Value | State::ValueOrEnd => match b {
                b'"' => {
                    self.str_start = pos;
                    self.state = State::InValue;
                }
                b'{' => {
                    if self.slot == Slot::Message {
                        self.env.role = Field::Absent;
                        self.slot = Slot::None;
                        self.in_message = true;
                    } else {
                        self.fill(Field::Other);
                    }
                    self.push(false)?;
                    self.state = State::KeyOrEnd;
                }
                b'[' => {
                    self.fill(Field::Other);
                    self.push(true)?;
                    self.state = State::ValueOrEnd;
                }
                b']' if self.state == State::ValueOrEnd => self.pop(),
                _ => return None,
            },
            State::KeyOrEnd | State::Key => match b {
                b'"' => {
                    self.str_start = pos;
                    self.state = State::InKey;
                }
                b'}' if self.state == State::KeyOrEnd => self.pop(),
                _ => return None,
            },
            State::Colon => {
                if b != b':' {
                    return None;
                }
                self.state = State::Value;
            }
            State::AfterValue if self.depth == 0 => return None,
            State::AfterValue => match b {
                b',' => {
                    self.state = if self.top_is_array() {
                        State::Value
                    } else {
                        State::Key
                    };
                }
                b'}' if !self.top_is_array() => self.pop(),
                b']' if self.top_is_array() => self.pop(),
                _ => return None,
            },
            State::Done => return None,
        }
        Some(())
    }
}

/// The envelope of `input` when the clean-line walk accepts it; `None` to use the exact walk.
pub(crate) fn scan_fast(input: &[u8]) -> Option<Envelope<'_>> {
    let mut w = Walker {
        input,
        env: Envelope {
            kind: ValueKind::Object,
            r#type: Field::Absent,
            id: Field::Absent,
            parent_id: Field::Absent,
            role: Field::Absent,
            append_mode: Field::Absent,
        },
        state: State::Value,
        depth: 0,
        arrays: 0,
        in_message: false,
        slot: Slot::None,
        str_start: 0,
    };
    // Only an object line: its first byte after spaces must be `{` (checked at the first token).
    let first = input.iter().position(|&b| b != b' ')?;
    if input[first] != b'{' {
        return None;
    }
    // 1 when the previous block ended in an odd backslash run (its next byte is escaped).
    let mut escape_carry = 0u64;
    // All ones when the previous block ended inside a string.
    let mut string_carry = 0u64;
    // 1 when the previous block ended in a token (so this block's first byte follows one).
    let mut after_carry = 0u64;
    let mut base = 0usize;
    let mut chunks = input.chunks_exact(64);
    let tail = chunks.remainder();
    while base < input.len() {
        let mut block = [b' '; 64];
        match chunks.next() {
            Some(chunk) => block.copy_from_slice(chunk),
            None => block[..tail.len()].copy_from_slice(tail),
        }
        let m = classify(&block);
        if m.control != 0 {
            return None;
        }
        let mut quote = m.quote;
        if m.backslash != 0 || escape_carry != 0 {
            let backslash = m.backslash & !escape_carry;
            let follows_escape = (backslash << 1) | escape_carry;
            let odd_starts = backslash & !EVEN_BITS & !follows_escape;
            let (even_starts, overflow) = odd_starts.overflowing_add(backslash);
            let invert = even_starts << 1;
            let escaped = (EVEN_BITS ^ invert) & follows_escape;
            let (simple, u) = escape_chars(&block);
            if escaped & !(simple | u) != 0 {
                return None;
            }
            let mut unicode = escaped & u;
            while unicode != 0 {
                let at = base + unicode.trailing_zeros() as usize;
                let hex = input
                    .get(at + 1..at + 5)
                    .is_some_and(|d| d.iter().all(u8::is_ascii_hexdigit));
                if !hex {
                    return None;
                }
                unicode &= unicode - 1;
            }
            quote &= !escaped;
            escape_carry = u64::from(overflow);
        }
        // Bits from each opening quote up to (not including) its closing quote.
        let in_string = prefix_xor(quote) ^ string_carry;
        string_carry = ((in_string as i64) >> 63) as u64;
        let outside = !in_string & !quote;
        let structural = m.structural & outside;
        // A byte right after a structural byte or a closing quote that is no token itself
        // starts a gap (spaces, a number or literal, or something refused).
        let ends = structural | (quote & !in_string);
        let gaps = ((ends << 1) | after_carry) & outside & !m.structural;
        after_carry = ends >> 63;
        let mut tokens = quote | structural | gaps;
        if input.len() - base < 64 {
            // No token in the padding.
            tokens &= (1u64 << (input.len() - base)) - 1;
        }
        if tokens != 0 && matches!(w.state, State::InKey | State::InValue) {
            // A string opened in an earlier block closes at this block's first token.
            w.close_string(base + tokens.trailing_zeros() as usize)?;
            tokens &= tokens - 1;
        }
        while tokens != 0 {
            let pos = base + tokens.trailing_zeros() as usize;
            tokens &= tokens - 1;
            w.token(pos)?;
            if tokens != 0 && matches!(w.state, State::InKey | State::InValue) {
                // The next token of an opened string is its closing quote.
                w.close_string(base + tokens.trailing_zeros() as usize)?;
                tokens &= tokens - 1;
            }
        }
        base += 64;
    }
    (w.state == State::Done).then_some(w.env)
}
