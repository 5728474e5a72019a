//! The system-call seam under the write paths of [`crate::io`] (redb's `StorageBackend`, one
//! level lower: individual file-system calls rather than a block device).
//!
//! Every write function of [`crate::io`] is a method of [`crate::io::Io`], the handle
//! `io::on(fs)` that makes its opens, writes, syncs, renames, links and removals through `fs`;
//! the plain functions are the methods of [`crate::io::REAL`], the handle over [`RealFs`]. Reads, `stat`s, permission probes, `fchown` and
//! `fchmod` are not part of the seam (a fault there is not a write fault).

use std::fmt::Debug;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;

use tempfile::NamedTempFile;

/// The file-system calls the write paths of [`crate::io`] make, so that a test can make any one
/// of them fail (the fault injection of the test tools, feature `test-util`). [`RealFs`] makes
/// the real calls.
///
/// An implementation must behave like the real calls it stands for, or fail like them: a
/// `write` returns how many bytes it wrote (fewer than asked is a short write, which callers
/// complete or undo), and a failed call has no other effect than the real call's failure would
/// have (a short write followed by an error is modelled as two calls).
pub trait Fs: Send + Sync + Debug {
    /// `open(path, O_RDWR | O_APPEND | O_NOFOLLOW)` (read and append; a symlink at the final
    /// component is never followed: the open fails with `ELOOP`), with `O_CREAT` and mode
    /// [`crate::io::NEW_FILE_MODE`] when `create` is true.
    ///
    /// # Errors
    /// The `open` failure ([`io::ErrorKind::NotFound`] when `create` is false and nothing is
    /// there).
    fn open_append(&self, path: &Path, create: bool) -> io::Result<File>;

    /// `open(path, O_WRONLY | O_CREAT | O_EXCL, mode)` (the umask applies).
    ///
    /// # Errors
    /// The `open` failure ([`io::ErrorKind::AlreadyExists`] when something is at `path`).
    fn create_new_file(&self, path: &Path, mode: u32) -> io::Result<File>;

    /// Creates an empty temporary file (mode 0600) in `dir`, named `<prefix><random><suffix>`,
    /// removed again when the returned handle is dropped unless it is persisted.
    ///
    /// # Errors
    /// The `open` failure.
    fn create_temp(&self, dir: &Path, prefix: &str, suffix: &str) -> io::Result<NamedTempFile>;

    /// One `write(2)` of (a prefix of) `bytes` at the descriptor's position (the end, for an
    /// `O_APPEND` descriptor): the number of bytes written.
    ///
    /// # Errors
    /// The `write` failure (nothing written).
    fn write(&self, file: &mut File, bytes: &[u8]) -> io::Result<usize>;

    /// `ftruncate(file, len)`: used only to take back the bytes of an append that failed.
    ///
    /// # Errors
    /// The `ftruncate` failure.
    fn set_len(&self, file: &File, len: u64) -> io::Result<()>;

    /// `fdatasync(file)`.
    ///
    /// # Errors
    /// The sync failure.
    fn sync_data(&self, file: &File) -> io::Result<()>;

    /// `fsync(file)`.
    ///
    /// # Errors
    /// The sync failure.
    fn sync_all(&self, file: &File) -> io::Result<()>;

    /// `fsync` of directory `dir` (a no-op where directories cannot be opened, e.g. Windows).
    ///
    /// # Errors
    /// The `open` or `fsync` failure.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;

    /// `rename(tmp, target)`: the temporary file replaces whatever is at `target`. On failure
    /// `tmp` is dropped (and removed).
    ///
    /// # Errors
    /// The rename failure.
    fn persist(&self, tmp: NamedTempFile, target: &Path) -> io::Result<File>;

    /// Moves the temporary file to `target` only if nothing is there
    /// (`renameat2(RENAME_NOREPLACE)`, or `link` + `unlink` where that is unsupported). On
    /// failure `tmp` is dropped (and removed).
    ///
    /// # Errors
    /// [`io::ErrorKind::AlreadyExists`] when something is at `target`; the rename failure.
    fn persist_noclobber(&self, tmp: NamedTempFile, target: &Path) -> io::Result<File>;

    /// `link(src, dst)`.
    ///
    /// # Errors
    /// The `link` failure ([`io::ErrorKind::AlreadyExists`] when something is at `dst`).
    fn hard_link(&self, src: &Path, dst: &Path) -> io::Result<()>;

    /// `rename(src, dst)` (replacing `dst`).
    ///
    /// # Errors
    /// The `rename` failure.
    fn rename(&self, src: &Path, dst: &Path) -> io::Result<()>;

    /// `unlink(path)`.
    ///
    /// # Errors
    /// The `unlink` failure.
    fn remove_file(&self, path: &Path) -> io::Result<()>;
}

/// The real file system: every [`Fs`] call is the system call it names. What the plain write
/// functions of [`crate::io`] use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RealFs;

impl Fs for RealFs {
    #[cfg(unix)]
    fn open_append(&self, path: &Path, create: bool) -> io::Result<File> {
        use std::os::unix::fs::OpenOptionsExt;
        fs::OpenOptions::new()
            .read(true)
            .append(true)
            .create(create)
            .mode(super::NEW_FILE_MODE)
            .custom_flags(super::nofollow_flag())
            .open(path)
    }

    #[cfg(not(unix))]
    fn open_append(&self, path: &Path, create: bool) -> io::Result<File> {
        fs::OpenOptions::new()
            .read(true)
            .append(true)
            .create(create)
            .open(path)
    }

    #[cfg(unix)]
    fn create_new_file(&self, path: &Path, mode: u32) -> io::Result<File> {
        use std::os::unix::fs::OpenOptionsExt;
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(path)
    }

    #[cfg(not(unix))]
    fn create_new_file(&self, path: &Path, _mode: u32) -> io::Result<File> {
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
    }

    fn create_temp(&self, dir: &Path, prefix: &str, suffix: &str) -> io::Result<NamedTempFile> {
        tempfile::Builder::new()
            .prefix(prefix)
            .suffix(suffix)
            .tempfile_in(dir)
    }

    fn write(&self, file: &mut File, bytes: &[u8]) -> io::Result<usize> {
        file.write(bytes)
    }

    fn set_len(&self, file: &File, len: u64) -> io::Result<()> {
        file.set_len(len)
    }

    fn sync_data(&self, file: &File) -> io::Result<()> {
        file.sync_data()
    }

    fn sync_all(&self, file: &File) -> io::Result<()> {
        file.sync_all()
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        match File::open(dir) {
            Ok(d) => d.sync_all(),
            Err(_) if cfg!(not(unix)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    fn persist(&self, tmp: NamedTempFile, target: &Path) -> io::Result<File> {
        tmp.persist(target).map_err(|e| e.error)
    }

    fn persist_noclobber(&self, tmp: NamedTempFile, target: &Path) -> io::Result<File> {
        tmp.persist_noclobber(target).map_err(|e| e.error)
    }

    fn hard_link(&self, src: &Path, dst: &Path) -> io::Result<()> {
        fs::hard_link(src, dst)
    }

    fn rename(&self, src: &Path, dst: &Path) -> io::Result<()> {
        fs::rename(src, dst)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }
}
