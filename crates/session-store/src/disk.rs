//! What a manager believes its file holds: nothing, or exactly the bytes it last read or wrote
//! (kept as their length and a streaming fingerprint, extended by each append). Before a full
//! rewrite the file is compared with that belief, so another writer's lines are never
//! overwritten silently (docs/DEVIATIONS.md D11).

use std::collections::hash_map::DefaultHasher;
use std::hash::Hasher;

/// The manager's belief about its file.
#[derive(Clone, Debug)]
pub(crate) enum DiskImage {
    /// No file is expected at the path.
    Absent,
    /// The file holds exactly `len` bytes: its first `base` bytes are the manager's buffer
    /// `buf[..base]` (the file as read, compared directly), the rest has the fingerprint
    /// `hasher.finish()`.
    Known {
        base: usize,
        len: u64,
        hasher: DefaultHasher,
        /// The last byte is `\n` (or the file is empty).
        ends_with_newline: bool,
    },
    /// Another writer changed the file in a way this manager could not follow.
    Unknown,
}

/// How the file compares with the belief.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// As expected (present with the known bytes, or absent when absent was expected).
    Same,
    /// The known bytes followed by more, starting at this offset at a line boundary (after a
    /// `\n`, or with a `\n` that ends an unterminated last line): another writer appended.
    Grew(usize),
    /// The file is gone (nothing to lose by writing it again).
    Vanished,
    /// Anything else: the file holds bytes this manager does not know.
    Changed,
}

/// SipHash (std's `DefaultHasher`) fed with raw bytes is a streaming hash: feeding the bytes in
/// pieces gives the same result as feeding them at once.
fn fingerprint(bytes: &[u8]) -> DefaultHasher {
    let mut h = DefaultHasher::new();
    h.write(bytes);
    h
}

impl DiskImage {
    /// The file holds exactly `bytes` (fingerprinted).
    pub(crate) fn known(bytes: &[u8]) -> Self {
        DiskImage::Known {
            base: 0,
            len: bytes.len() as u64,
            hasher: fingerprint(bytes),
            ends_with_newline: bytes.last().is_none_or(|&b| b == b'\n'),
        }
    }

    /// The file holds exactly the manager's buffer as just read (nothing hashed: a later
    /// check compares with the buffer, which keeps those bytes).
    pub(crate) fn read(buf: &[u8]) -> Self {
        DiskImage::Known {
            base: buf.len(),
            len: buf.len() as u64,
            hasher: DefaultHasher::new(),
            ends_with_newline: buf.last().is_none_or(|&b| b == b'\n'),
        }
    }

    /// This manager appended `written` to a file that was `previous_len` bytes long. Returns
    /// false when the file was not the expected length (someone else wrote in between): the
    /// belief is then left for the caller to repair.
    pub(crate) fn appended(&mut self, previous_len: u64, written: &[u8]) -> bool {
        match self {
            DiskImage::Known {
                len,
                hasher,
                ends_with_newline,
                ..
            } if *len == previous_len => {
                hasher.write(written);
                *len += written.len() as u64;
                if let Some(&b) = written.last() {
                    *ends_with_newline = b == b'\n';
                }
                true
            }
            DiskImage::Absent if previous_len == 0 => {
                *self = DiskImage::known(written);
                true
            }
            _ => false,
        }
    }

    /// Compares the file's current bytes (`None`: no file) with the belief; `buf` is the
    /// manager's buffer (whose prefix a [`DiskImage::read`] belief refers to).
    pub(crate) fn check(&self, current: Option<&[u8]>, buf: &[u8]) -> Verdict {
        match (self, current) {
            (DiskImage::Absent, None) => Verdict::Same,
            (_, None) => Verdict::Vanished,
            // An empty file holds no history: nothing to lose by writing it.
            (DiskImage::Known { len: 0, .. }, Some([])) => Verdict::Same,
            (_, Some([])) => Verdict::Vanished,
            (DiskImage::Absent | DiskImage::Unknown, Some(_)) => Verdict::Changed,
            (
                DiskImage::Known {
                    base,
                    len,
                    hasher,
                    ends_with_newline,
                },
                Some(bytes),
            ) => {
                let Ok(n) = usize::try_from(*len) else {
                    return Verdict::Changed;
                };
                let (Some(head), Some(rest)) = (bytes.get(..*base), bytes.get(*base..n)) else {
                    return Verdict::Changed;
                };
                if buf.get(..*base) != Some(head) || fingerprint(rest).finish() != hasher.finish() {
                    return Verdict::Changed;
                }
                if bytes.len() == n {
                    Verdict::Same
                } else if *ends_with_newline || bytes[n] == b'\n' {
                    // After a line end, or a `\n` that ends the unterminated last line first.
                    Verdict::Grew(n)
                } else {
                    // Appended text glued onto an unterminated last line: not a clean append.
                    Verdict::Changed
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_is_streaming() {
        let mut h = DefaultHasher::new();
        h.write(b"{\"a\":1}\n");
        h.write(b"{\"b\":");
        h.write(b"2}\n");
        assert_eq!(h.finish(), fingerprint(b"{\"a\":1}\n{\"b\":2}\n").finish());
    }

    #[test]
    fn verdicts_of_a_read_file() {
        let buf = b"x\ny\n";
        let mut d = DiskImage::read(buf);
        assert_eq!(d.check(Some(b"x\ny\n"), buf), Verdict::Same);
        assert_eq!(d.check(Some(b"x\nz\n"), buf), Verdict::Changed);
        assert_eq!(d.check(Some(b"x\ny\nw\n"), buf), Verdict::Grew(4));
        assert!(d.appended(4, b"v\n"));
        assert_eq!(d.check(Some(b"x\ny\nv\n"), buf), Verdict::Same);
        assert_eq!(d.check(Some(b"x\ny\nu\n"), buf), Verdict::Changed);
    }

    #[test]
    fn verdicts() {
        let mut d = DiskImage::known(b"x\n");
        assert_eq!(d.check(Some(b"x\n"), b""), Verdict::Same);
        assert_eq!(d.check(Some(b"x\ny\n"), b""), Verdict::Grew(2));
        assert_eq!(d.check(Some(b"z\n"), b""), Verdict::Changed);
        assert_eq!(d.check(Some(b"x"), b""), Verdict::Changed);
        assert_eq!(d.check(None, b""), Verdict::Vanished);
        assert!(d.appended(2, b"y\n"));
        assert_eq!(d.check(Some(b"x\ny\n"), b""), Verdict::Same);
        assert!(!d.appended(3, b"w\n"));
        let torn = DiskImage::known(b"x\n{\"ty");
        assert_eq!(torn.check(Some(b"x\n{\"tymore\n"), b""), Verdict::Changed);
        assert_eq!(torn.check(Some(b"x\n{\"ty\nmore\n"), b""), Verdict::Grew(6));
        assert_eq!(DiskImage::Absent.check(None, b""), Verdict::Same);
        assert_eq!(DiskImage::Absent.check(Some(b""), b""), Verdict::Vanished);
        assert_eq!(DiskImage::Absent.check(Some(b"\n"), b""), Verdict::Changed);
        assert_eq!(
            DiskImage::Unknown.check(Some(b"x\n"), b""),
            Verdict::Changed
        );
        let mut a = DiskImage::Absent;
        assert!(a.appended(0, b"h\n"));
        assert_eq!(a.check(Some(b"h\n"), b""), Verdict::Same);
    }
}
