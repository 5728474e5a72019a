//! Fuzz target: the indexed envelope scan (`EnvelopeScanner::scan`, SIMD bitmaps per 64 bytes)
//! against the byte-by-byte reference (`EnvelopeScanner::scan_scalar`). The input is scanned
//! whole, line by line, and with a quote in front (so it is a string body); crashes on any panic
//! and on any difference: the whole `Envelope` on success, kind and offset on error, and the same
//! for `top_level_field`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use session_format::json::EnvelopeScanner;
use session_format::line::lines;

fn check(fast: &mut EnvelopeScanner, slow: &mut EnvelopeScanner, text: &[u8]) {
    assert_eq!(fast.scan(text), slow.scan_scalar(text), "scan differs");
    assert_eq!(
        fast.top_level_field(text, b"id"),
        slow.top_level_field_scalar(text, b"id"),
        "top_level_field differs"
    );
}

fuzz_target!(|data: &[u8]| {
    let mut fast = EnvelopeScanner::new();
    let mut slow = EnvelopeScanner::new();
    check(&mut fast, &mut slow, data);
    for line in lines(data) {
        check(&mut fast, &mut slow, line.bytes);
    }
    let mut quoted = Vec::with_capacity(data.len() + 1);
    quoted.push(b'"');
    quoted.extend_from_slice(data);
    check(&mut fast, &mut slow, &quoted);
});
