//! Reading a whole large file on two threads: a fresh buffer of a few hundred MB costs more in
//! page faults (each 4 KiB page zeroed and mapped as the copy reaches it) than in the copy
//! itself, and the faults of two halves proceed in parallel. The result is exactly what
//! [`crate::io::read_file`] returns (the bytes up to end of file at the time of the read).

use std::io;
use std::path::Path;

/// Files at least this large are read in two halves.
#[cfg(unix)]
const SPLIT_MIN: u64 = 8 << 20;

/// Reads a whole regular file, as [`crate::io::read_file`] (whose checks it shares through
/// [`crate::io::open_regular`]), reading the two halves of a large file on two threads.
///
/// # Errors
/// As [`crate::io::read_file`].
#[cfg(unix)]
pub(crate) fn read_file(path: &Path) -> io::Result<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};

    let f = crate::io::open_regular(path)?;
    let len = f.metadata()?.len();
    let Ok(n) = usize::try_from(len) else {
        return crate::io::read_file(path);
    };
    if len < SPLIT_MIN {
        let mut buf = Vec::with_capacity(n + 1);
        (&f).read_to_end(&mut buf)?;
        return Ok(buf);
    }
    let mut buf = vec![0u8; n];
    let half = n / 2;
    let (a, b) = buf.split_at_mut(half);
    let (first, second) = std::thread::scope(|s| {
        let second = s.spawn(|| fill_at(&f, b, half as u64));
        let first = fill_at(&f, a, 0);
        (first, second.join())
    });
    let second = second.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
    if first? == half && second? == n - half {
        // The file may have grown since the stat: read on to its end.
        (&f).seek(SeekFrom::Start(len))?;
        (&f).read_to_end(&mut buf)?;
    } else {
        // It shrank: read it again from the start, in one pass.
        buf.clear();
        (&f).seek(SeekFrom::Start(0))?;
        (&f).read_to_end(&mut buf)?;
    }
    Ok(buf)
}

/// As [`crate::io::read_file`] where positioned reads are not available.
#[cfg(not(unix))]
pub(crate) fn read_file(path: &Path) -> io::Result<Vec<u8>> {
    crate::io::read_file(path)
}

/// Fills `buf` from `offset` with positioned reads; returns the bytes read (fewer than
/// `buf.len()` only at end of file).
#[cfg(unix)]
fn fill_at(f: &std::fs::File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    use std::os::unix::fs::FileExt;

    let mut done = 0;
    while done < buf.len() {
        match f.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(k) => done += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file above the split size reads back byte for byte, as does a small one.
    #[test]
    fn reads_large_and_small_files_exactly() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        for size in [0usize, 1, 4097, (SPLIT_MIN as usize) + 12_345] {
            let data: Vec<u8> = (0..size).map(|i| (i * 7 % 251) as u8).collect();
            let p = dir.path().join(format!("f{size}"));
            crate::io::create_new(&p, &data, None).unwrap_or_else(|e| panic!("{e}"));
            let got = read_file(&p).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(got.len(), size);
            assert!(got == data, "size {size}: bytes differ");
        }
    }

    /// Missing files and directories fail as `io::read_file` does.
    #[test]
    fn errors_match_io_read_file() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let missing = dir.path().join("nope");
        assert_eq!(
            read_file(&missing).map_err(|e| e.kind()).err(),
            crate::io::read_file(&missing).map_err(|e| e.kind()).err()
        );
        assert_eq!(
            read_file(dir.path()).map_err(|e| e.kind()).err(),
            Some(io::ErrorKind::InvalidInput)
        );
    }
}
