//! A structural index of one line for the envelope scan: per 64-byte block, a bitmask of the
//! bytes where a string skip must stop (simdjson-style, in safe Rust through `wide`'s SIMD).
//!
//! Bit `i` of word `w` stands for byte `64 * w + i`. A stop bit is set on
//! - every quote that is not escaped (escapes found with the odd-backslash-run rule, carried
//!   across blocks),
//! - every control byte (below 0x20),
//! - every escaped byte that does not start a valid escape (not one of `"\/bfnrtu`),
//! - every `u` of a `\u` escape not followed by four hex digits.
//!
//! A string skip from an opening quote is then: the first stop bit after it. When that byte is a
//! quote the string ends there; anything else (or no stop bit before the end of the line) is an
//! error, and the exact error (kind and offset) is left to the scalar skip
//! ([`Parser::skip_string`]), which runs from the opening quote again. So the index only has to be
//! exact for valid strings, and errors stay byte-for-byte those of the scalar scan.
//!
//! The escape rule is exact for any string the scanner can start: an opening quote is never
//! preceded by a backslash (the scanner reaches a quote only after whitespace, `:`, `,`, `[`, `{`,
//! or the start of the text), so a backslash run inside the string starts after the quote.

use wide::u8x16;

use super::JsonError;
use super::parse::Parser;

/// Alternating bits starting at bit 0 (simdjson's `EVEN_BITS`).
const EVEN_BITS: u64 = 0x5555_5555_5555_5555;

/// The per-line stop and backslash bitmaps (reused between lines).
#[derive(Debug, Default)]
pub(crate) struct StringIndex {
    /// Stop bits, one word per 64 bytes of the line.
    stop: Vec<u64>,
    /// Backslash bits (any backslash), to tell whether a string holds an escape.
    backslash: Vec<u64>,
}

/// Masks of one 64-byte block.
struct BlockMasks {
    quote: u64,
    backslash: u64,
    control: u64,
}

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

/// The masks of a block (its four lanes) whose backslash mask is already known.
#[inline(always)]
fn classify(v: &[u8x16; 4], backslash: u64) -> BlockMasks {
    let quote = u8x16::splat(b'"');
    let below = u8x16::splat(0x1F);
    let zero = u8x16::splat(0);
    BlockMasks {
        quote: gather(v.map(|x| x.simd_eq(quote))),
        backslash,
        // `x <= 0x1F` exactly when `x - 0x1F` saturates to 0.
        control: gather(v.map(|x| x.saturating_sub(below).simd_eq(zero))),
    }
}

/// The bytes of a block (its four lanes) that may follow a backslash: `"\/bfnrt` and `u`.
#[inline]
fn escape_chars(v: &[u8x16; 4]) -> (u64, u64) {
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

impl StringIndex {
    /// Indexes `input` (replacing the previous line's index).
    pub(crate) fn build(&mut self, input: &[u8]) {
        let words = input.len().div_ceil(64);
        self.stop.clear();
        self.backslash.clear();
        self.stop.reserve(words);
        self.backslash.reserve(words);
        // 1 when the previous block ended in an odd backslash run (its next byte is escaped).
        let mut carry = 0u64;
        let mut chunks = input.chunks_exact(64);
        let mut base = 0usize;
        for chunk in chunks.by_ref() {
            let mut block = [0u8; 64];
            block.copy_from_slice(chunk);
            carry = self.push_block(input, base, &block, carry);
            base += 64;
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            // Padding: a space is neither special nor a hex digit.
            let mut block = [b' '; 64];
            block[..rest.len()].copy_from_slice(rest);
            self.push_block(input, base, &block, carry);
        }
    }

    /// Appends the words of one block at `base`; returns the escape carry for the next block.
    #[inline(always)]
    fn push_block(&mut self, input: &[u8], base: usize, block: &[u8; 64], carry: u64) -> u64 {
        let v = [
            lanes(block, 0),
            lanes(block, 1),
            lanes(block, 2),
            lanes(block, 3),
        ];
        let backslash = gather(v.map(|x| x.simd_eq(u8x16::splat(b'\\'))));
        if backslash == 0 && carry == 0 {
            // No escape: the stops are the quotes and control bytes, gathered in one mask.
            let below = u8x16::splat(0x1F);
            let zero = u8x16::splat(0);
            let stop =
                gather(v.map(|x| {
                    x.simd_eq(u8x16::splat(b'"')) | x.saturating_sub(below).simd_eq(zero)
                }));
            self.stop.push(stop);
            self.backslash.push(0);
            return 0;
        }
        let m = classify(&v, backslash);
        // simdjson's branchless escape finder: `escaped` marks each byte preceded by an odd
        // run of backslashes (counting the run carried in from the previous block).
        let backslash = m.backslash & !carry;
        let follows_escape = (backslash << 1) | carry;
        let odd_starts = backslash & !EVEN_BITS & !follows_escape;
        let (even_starts, overflow) = odd_starts.overflowing_add(backslash);
        let invert = even_starts << 1;
        let escaped = (EVEN_BITS ^ invert) & follows_escape;
        let (simple, u) = escape_chars(&v);
        let mut stop = (m.quote & !escaped) | m.control | (escaped & !(simple | u));
        let mut unicode = escaped & u;
        while unicode != 0 {
            let bit = unicode.trailing_zeros() as usize;
            let at = base + bit;
            let hex = input
                .get(at + 1..at + 5)
                .is_some_and(|d| d.iter().all(u8::is_ascii_hexdigit));
            if !hex {
                stop |= 1 << bit;
            }
            unicode &= unicode - 1;
        }
        self.stop.push(stop);
        self.backslash.push(m.backslash);
        u64::from(overflow)
    }

    /// True when a backslash lies in `start..end`.
    #[inline(always)]
    fn any_backslash(&self, start: usize, end: usize) -> bool {
        if start >= end {
            return false;
        }
        let (first, last) = (start >> 6, (end - 1) >> 6);
        let low = !0u64 << (start & 63);
        let high = !0u64 >> (63 - ((end - 1) & 63));
        if first == last {
            return self
                .backslash
                .get(first)
                .is_some_and(|w| w & low & high != 0);
        }
        self.backslash.get(first).is_some_and(|w| w & low != 0)
            || self
                .backslash
                .get(first + 1..last)
                .is_some_and(|ws| ws.iter().any(|&w| w != 0))
            || self.backslash.get(last).is_some_and(|w| w & high != 0)
    }
}

/// How the envelope scan skips a string: the scalar byte loop, or the structural index.
pub(crate) trait SkipString {
    /// Skips the string whose opening quote is at `p.pos`, as [`Parser::skip_string`] does
    /// (same span, escape flag, final position, and error).
    fn skip_string(&self, p: &mut Parser<'_>) -> Result<(usize, usize, bool), JsonError>;

    /// [`SkipString::skip_string`] when only the final position and the error matter (a value
    /// or key the envelope does not read): same position, same error.
    #[inline(always)]
    fn skip_string_only(&self, p: &mut Parser<'_>) -> Result<(), JsonError> {
        self.skip_string(p).map(|_| ())
    }
}

/// The reference: [`Parser::skip_string`], byte by byte (8 at a time).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scalar;

impl SkipString for Scalar {
    #[inline]
    fn skip_string(&self, p: &mut Parser<'_>) -> Result<(usize, usize, bool), JsonError> {
        p.skip_string()
    }
}

impl SkipString for StringIndex {
    /// The first stop bit after the opening quote; the scalar skip on anything but a quote.
    #[inline(always)]
    fn skip_string(&self, p: &mut Parser<'_>) -> Result<(usize, usize, bool), JsonError> {
        let start = p.pos + 1;
        let mut w = start >> 6;
        let Some(&first) = self.stop.get(w) else {
            return p.skip_string();
        };
        let mut m = first & (!0u64 << (start & 63));
        while m == 0 {
            w += 1;
            match self.stop.get(w) {
                Some(&x) => m = x,
                None => return p.skip_string(),
            }
        }
        let end = (w << 6) + m.trailing_zeros() as usize;
        if p.input.get(end) != Some(&b'"') {
            return p.skip_string();
        }
        p.pos = end + 1;
        Ok((start, end, self.any_backslash(start, end)))
    }

    /// As [`StringIndex::skip_string`], without looking for a backslash in the body.
    #[inline(always)]
    fn skip_string_only(&self, p: &mut Parser<'_>) -> Result<(), JsonError> {
        let start = p.pos + 1;
        let mut w = start >> 6;
        let Some(&first) = self.stop.get(w) else {
            return p.skip_string().map(|_| ());
        };
        let mut m = first & (!0u64 << (start & 63));
        while m == 0 {
            w += 1;
            match self.stop.get(w) {
                Some(&x) => m = x,
                None => return p.skip_string().map(|_| ()),
            }
        }
        let end = (w << 6) + m.trailing_zeros() as usize;
        if p.input.get(end) != Some(&b'"') {
            return p.skip_string().map(|_| ());
        }
        p.pos = end + 1;
        Ok(())
    }
}
