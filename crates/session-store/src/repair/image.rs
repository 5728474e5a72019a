//! The inline-image check of the repair (openclaw-jsonl.md §1.8 rule 4), as OpenClaw 2026.6.11
//! applies it (`sanitizeInlineImageBase64` of its media core, observed with node on the fixtures
//! of `tests/fixtures/repair/`):
//!
//! - a block is checked when it is an object with `type: "image"`, a string `data`, and one of
//!   `mimeType`, `mediaType`, `media_type` (the first that qualifies) holding an image mime type:
//!   a string that, trimmed of JavaScript whitespace, starts with `image/` in any letter case;
//! - such a block is corrupted when `data` holds any non-ASCII character, when it is not
//!   canonical base64 once every character up to U+0020 is removed (alphabet `A–Z a–z 0–9 + /`,
//!   at most two `=` and only at the end, a non-zero length that is a multiple of 4), or when the
//!   bytes decoded from its first 128 base64 characters carry none of the known image signatures:
//!   PNG (`89 50 4E 47 0D 0A 1A 0A`), JPEG (`FF D8 FF`), WebP (`RIFF` … `WEBP`), GIF (`GIF87a` /
//!   `GIF89a`), BMP (`BM`), or an ISO-BMFF `ftyp` box whose major brand (bytes 8–12) or a
//!   compatible brand (every 4 bytes from byte 16) is a HEIC brand (`heic heix hevc hevx heis heim
//!   hevm hevs`) or a HEIF brand (`mif1 msf1`). The declared mime type need not match the
//!   signature found. The text comparisons (`RIFF`, `WEBP`, `GIF8…`, `ftyp`, brands) read each
//!   byte with its high bit cleared, as Node's `ascii` decoding does (so `D2 C9 C6 C6` reads as
//!   `RIFF`).

use session_format::json::{JsObject, JsValue};
use session_format::line::{trim_js_end, trim_js_start};

/// How many base64 characters the signature sniffer decodes.
const SIGNATURE_PREFIX_BASE64_CHARS: usize = 128;

const HEIC_BRANDS: [&[u8; 4]; 8] = [
    b"heic", b"heix", b"hevc", b"hevx", b"heis", b"heim", b"hevm", b"hevs",
];
const HEIF_BRANDS: [&[u8; 4]; 2] = [b"mif1", b"msf1"];

/// True when `block` is an image block whose data the reference replaces by the fallback text.
pub(crate) fn is_corrupted_image_block(block: &JsValue) -> bool {
    let Some(obj) = block.as_object() else {
        return false;
    };
    if !matches!(obj.get("type"), Some(JsValue::String(t)) if t.as_wtf8() == b"image") {
        return false;
    }
    let Some(JsValue::String(data)) = obj.get("data") else {
        return false;
    };
    if !has_image_mime_type(obj) {
        return false;
    }
    let data = data.as_wtf8();
    !data.is_ascii() || !is_sniffable_image_base64(data)
}

fn has_image_mime_type(obj: &JsObject) -> bool {
    ["mimeType", "mediaType", "media_type"].iter().any(
        |key| matches!(obj.get(key), Some(JsValue::String(s)) if is_image_mime_type(s.as_wtf8())),
    )
}

/// `/^image\//iu.test(value.trim())`.
fn is_image_mime_type(value: &[u8]) -> bool {
    let trimmed = trim_js_end(trim_js_start(value));
    trimmed.len() >= 6 && trimmed[..6].eq_ignore_ascii_case(b"image/")
}

/// Canonical base64 (whitespace and control characters removed) whose decoded prefix carries a
/// known image signature. `data` is ASCII.
fn is_sniffable_image_base64(data: &[u8]) -> bool {
    let Some(canonical) = canonicalize_base64(data) else {
        return false;
    };
    let prefix = &canonical[..canonical.len().min(SIGNATURE_PREFIX_BASE64_CHARS)];
    has_image_signature(&decode_base64_prefix(prefix))
}

/// The payload without characters up to U+0020, when it is valid padded base64.
fn canonicalize_base64(data: &[u8]) -> Option<Vec<u8>> {
    let mut cleaned = Vec::with_capacity(data.len());
    let mut padding = 0;
    for &b in data {
        if b <= 32 {
            continue;
        }
        if b == b'=' {
            padding += 1;
            if padding > 2 {
                return None;
            }
            cleaned.push(b);
            continue;
        }
        if padding > 0 || !(b.is_ascii_alphanumeric() || b == b'+' || b == b'/') {
            return None;
        }
        cleaned.push(b);
    }
    (!cleaned.is_empty() && cleaned.len() % 4 == 0).then_some(cleaned)
}

fn base64_value(b: u8) -> Option<u32> {
    match b {
        b'A'..=b'Z' => Some(u32::from(b - b'A')),
        b'a'..=b'z' => Some(u32::from(b - b'a') + 26),
        b'0'..=b'9' => Some(u32::from(b - b'0') + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// Decodes canonical base64 up to its padding (leftover bits are dropped, as Node does).
fn decode_base64_prefix(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for &b in text {
        let Some(v) = base64_value(b) else {
            break;
        };
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

/// Compares `bytes` with ASCII `text`, each byte read with its high bit cleared.
fn ascii_eq(bytes: &[u8], text: &[u8]) -> bool {
    bytes.len() == text.len() && bytes.iter().zip(text).all(|(b, t)| b & 0x7F == *t)
}

fn has_image_signature(b: &[u8]) -> bool {
    let png = b.starts_with(&[0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A]);
    let jpeg = b.starts_with(&[0xFF, 0xD8, 0xFF]);
    let webp = b.len() >= 12 && ascii_eq(&b[..4], b"RIFF") && ascii_eq(&b[8..12], b"WEBP");
    let gif = b.len() >= 6 && (ascii_eq(&b[..6], b"GIF87a") || ascii_eq(&b[..6], b"GIF89a"));
    let bmp = b.starts_with(b"BM");
    png || jpeg || webp || gif || bmp || is_heic_or_heif(b)
}

fn is_heic_or_heif(b: &[u8]) -> bool {
    if b.len() < 12 || !ascii_eq(&b[4..8], b"ftyp") {
        return false;
    }
    let compatible = (16..)
        .step_by(4)
        .take_while(|offset| offset + 4 <= b.len())
        .map(|offset| &b[offset..offset + 4]);
    std::iter::once(&b[8..12]).chain(compatible).any(|brand| {
        HEIC_BRANDS
            .iter()
            .chain(HEIF_BRANDS.iter())
            .any(|known| ascii_eq(brand, *known))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(data: &str, mime: &str) -> JsValue {
        let mut o = JsObject::new();
        o.insert("type", JsValue::from("image"));
        o.insert("data", JsValue::from(data));
        o.insert("mimeType", JsValue::from(mime));
        JsValue::Object(o)
    }

    #[test]
    fn signatures() {
        let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
        assert!(!is_corrupted_image_block(&block(png, "image/png")));
        assert!(!is_corrupted_image_block(&block("Qk0=", "image/bmp")));
        assert!(!is_corrupted_image_block(&block(
            "/9j/4AAQSkZJRgA=",
            "image/png"
        )));
        // "RIFF....WEBP" with the high bits set still reads as RIFF/WEBP.
        assert!(!is_corrupted_image_block(&block(
            "0snGxgAAAADXxcLQ",
            "image/webp"
        )));
        assert!(is_corrupted_image_block(&block(
            "aGVsbG8gd29ybGQh",
            "image/png"
        )));
        assert!(is_corrupted_image_block(&block("", "image/png")));
        assert!(is_corrupted_image_block(&block("Qk0", "image/png")));
        assert!(is_corrupted_image_block(&block("Qk0===", "image/png")));
        assert!(is_corrupted_image_block(&block("Q=k0", "image/png")));
        assert!(is_corrupted_image_block(&block("Qk0\u{e9}", "image/png")));
        assert!(!is_corrupted_image_block(&block("junk", "application/pdf")));
        assert!(!is_corrupted_image_block(&block(" Q k\n0 = ", "image/png")));
        assert!(!is_corrupted_image_block(&block("Qk0=", "\u{a0}IMAGE/x ")));
    }

    #[test]
    fn iso_bmff_brands() {
        let b64 = |bytes: &[u8]| {
            const A: &[u8; 64] =
                b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
            let mut s = String::new();
            for c in bytes.chunks(3) {
                let n = (u32::from(c[0]) << 16)
                    | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
                    | u32::from(*c.get(2).unwrap_or(&0));
                for i in 0..4 {
                    if i <= c.len() {
                        s.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
                    } else {
                        s.push('=');
                    }
                }
            }
            s
        };
        let heif = b64(b"\0\0\0\x18ftypavif\0\0\0\0avifmif1");
        assert!(!is_corrupted_image_block(&block(&heif, "image/avif")));
        // The minor version (bytes 12-16) is not a brand.
        let minor = b64(b"\0\0\0\x18ftypavifheic");
        assert!(is_corrupted_image_block(&block(&minor, "image/heic")));
        let major = b64(b"\0\0\0\x18ftyphevx");
        assert!(!is_corrupted_image_block(&block(&major, "image/heic")));
    }
}
