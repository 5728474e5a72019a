//! The crate's own file-system operations: moving a session file (the one place that calls
//! `std::fs::rename`; `session_store::io` has no move), deleting one, preparing the archive
//! directory, and the lock-file check.
//!
//! The lock check is a plain existence test of `realpath(dir)/<name>.lock` (OpenClaw's write-lock
//! file, openclaw-jsonl.md §1.10, §3.5): a lock file, even a stale one, means "in use". It is a
//! stand-in until `session_store::lock` (the OpenClaw lock protocol with staleness rules) exists.
//! A writer that takes the lock after the check and before the move is not detected.

use std::io;
use std::path::{Path, PathBuf};

use crate::layout::LOCK_SUFFIX;

/// `realpath(dir)/<name>.lock` for a session file.
///
/// # Errors
/// When the directory cannot be resolved or the path has no file name.
pub fn lock_file_of(path: &Path) -> io::Result<PathBuf> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut lock = name.to_os_string();
    lock.push(LOCK_SUFFIX);
    Ok(std::fs::canonicalize(dir)?.join(lock))
}

/// The lock file of `path` when one exists (a dangling symlink counts). When the directory
/// cannot be resolved, the file is treated as locked (`Some` of the lexical lock path).
pub fn lock_holding(path: &Path) -> Option<PathBuf> {
    match lock_file_of(path) {
        Ok(lock) => std::fs::symlink_metadata(&lock).is_ok().then_some(lock),
        Err(_) => {
            let mut p = path.as_os_str().to_os_string();
            p.push(LOCK_SUFFIX);
            Some(PathBuf::from(p))
        }
    }
}

fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Moves `src` to `dst` within one file system (`rename`), refusing to replace an existing
/// `dst`, then fsyncs both directories. The check and the rename are two steps: a file created
/// at `dst` in between would be replaced (the archive directory is written only by this crate).
///
/// # Errors
/// [`io::ErrorKind::AlreadyExists`] when `dst` exists; the rename's or fsync's failure (a
/// cross-device move fails with the OS error; nothing is copied).
pub fn move_file(src: &Path, dst: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(dst) {
        Ok(_) => {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} already exists", dst.display()),
            ));
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    std::fs::rename(src, dst)?;
    session_store::io::fsync_dir(dir_of(dst))?;
    if dir_of(src) != dir_of(dst) {
        session_store::io::fsync_dir(dir_of(src))?;
    }
    Ok(())
}

/// Deletes a file and fsyncs its directory.
///
/// # Errors
/// The removal's or fsync's failure.
pub fn delete_file(path: &Path) -> io::Result<()> {
    std::fs::remove_file(path)?;
    session_store::io::fsync_dir(dir_of(path))
}

/// Creates `<sessions dir>/archive` when missing and checks that it is a real directory (not a
/// symlink, not a file).
///
/// # Errors
/// [`io::ErrorKind::InvalidInput`] when the path exists as something else; creation failures.
pub fn ensure_real_dir(dir: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(m) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} exists and is {}, not a directory",
                dir.display(),
                if m.file_type().is_symlink() {
                    "a symlink"
                } else {
                    "something else"
                }
            ),
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            session_store::io::ensure_dir(dir)?;
            session_store::io::fsync_dir(dir_of(dir))
        }
        Err(e) => Err(e),
    }
}

/// A free name for `name` in `dir`: `name` itself, else `<stem>~1.jsonl`, `<stem>~2.jsonl`, …
/// (skipping names in `taken`). `None` when every candidate would exceed 255 bytes.
pub fn free_name(dir: &Path, name: &str, taken: &[String]) -> Option<String> {
    let (stem, ext) = match name.strip_suffix(crate::layout::SESSION_SUFFIX) {
        Some(stem) => (stem, crate::layout::SESSION_SUFFIX),
        None => (name, ""),
    };
    for n in 0u32.. {
        let candidate = if n == 0 {
            name.to_owned()
        } else {
            format!("{stem}~{n}{ext}")
        };
        if candidate.len() > crate::layout::MAX_FILE_NAME_BYTES {
            return None;
        }
        let free = !taken.contains(&candidate)
            && matches!(std::fs::symlink_metadata(dir.join(&candidate)), Err(e) if e.kind() == io::ErrorKind::NotFound);
        if free {
            return Some(candidate);
        }
    }
    None
}
