//! The one place where the workspace writes files (rust-style.md "Atomic rewrite"; openclaw-jsonl.md
//! §1.1, §1.6, §2.12).
//!
//! Invariants:
//! - a full rewrite never leaves a half-written file: the new bytes go to a temporary file in the
//!   same directory, are `sync_all`ed, renamed over the target, and the directory is fsynced;
//!   the replaced file's owner and group are kept when the process may set them (`fchown` before
//!   the rename; a non-root process keeps at least the group when it belongs to it), and so are
//!   its full mode bits (`mode & 0o7777`, applied after the `fchown`); new files get 0600;
//! - a file the process may not write is never replaced: the rewrite fails with
//!   [`io::ErrorKind::PermissionDenied`] naming the file (the reference's in-place
//!   `writeFileSync` fails with `EACCES` there); a directory where no temporary file can be
//!   created fails with an error naming the directory (there is no in-place fallback);
//! - a rewrite replaces the inode: hard links to the old file keep the old bytes (see
//!   docs/DEVIATIONS.md D10);
//! - an append is one `write` call of one line on an `O_APPEND` descriptor (a `\n` separator is
//!   prepended, in the same call, when the file's last byte is not `\n`);
//! - a new file is created only when nothing exists at its path (0600);
//! - a backup is a byte-exact copy with the source's permission bits (0600 when those are 0);
//! - no write follows a symlink out of its store root: a name that is a symlink (or a chain of
//!   them) to a file outside the directory holding the name is refused before anything is
//!   opened for writing, with an [`io::Error`] of kind [`io::ErrorKind::PermissionDenied`]
//!   carrying a [`crate::identity::OutsideStore`] that names the link, its target and the root
//!   ([`crate::identity::OutsideStore::find`]); a link to a file in the same directory or
//!   below it is followed ([`crate::identity::check_write_path`]);
//! - a name is resolved once per write: the checks, the open and the rename then act on the
//!   resolved file; its final component is opened with `O_NOFOLLOW`, and a rename onto it
//!   replaces a symlink swapped in there instead of following it, so re-pointing a link during
//!   a write cannot redirect it;
//! - a failed write leaves nothing visible behind: a short write is completed with further
//!   calls, and when a write or sync fails the bytes of an append are taken back (the file is
//!   truncated to its length before the append, when those bytes are still its tail), and a
//!   file created or renamed into place whose directory `fsync` then fails is removed again (or
//!   the replaced file put back), so an error means the path holds what it held before.
//!
//! Every write function is a method of [`Io`], a handle over an [`Fs`] (`io::on(fs)`), that
//! makes its system calls through it; [`REAL`] is the handle over the real file system
//! ([`RealFs`]), and the functions with many callers have a plain shorthand for it
//! (`io::atomic_rewrite(path, bytes)` is `io::REAL.atomic_rewrite(path, bytes)`);
//! `test_util::fault::FaultFs` (feature `test-util`) injects failures through the seam for tests.
//!
//! `clippy.toml` forbids `std::fs::write`, `File::create` and `OpenOptions::new` everywhere else.
#![allow(clippy::disallowed_methods)] // This module is the sanctioned home of raw file writes.

#[cfg(any(test, feature = "test-util"))]
pub(crate) mod fault;
mod seam;
mod stream;

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

pub use self::seam::{Fs, RealFs};
pub use self::stream::{AtomicWriter, atomic_writer, create_new_writer, remove_pending_temp_files};
use crate::snapshot::SessionFileSnapshot;

/// Permission bits of files this crate creates.
pub const NEW_FILE_MODE: u32 = 0o600;

/// Bytes read per step when sniffing a header line.
pub const HEADER_CHUNK_BYTES: usize = 4096;

/// Largest header line the sniffer accepts.
pub const MAX_HEADER_BYTES: usize = 64 * 1024;

/// How hard an append pushes its bytes to stable storage (fjall's `PersistMode`), chosen per
/// manager ([`crate::SessionManager::set_durability`]) or per call
/// ([`crate::SessionManager::with_durability`], [`crate::SessionManager::sync_file`]).
///
/// Every variant writes the whole line (with its `\n`, and a `\n` separator first after a torn
/// tail) with one `write` call on an `O_APPEND` descriptor, so other processes' `O_APPEND`
/// writes do not interleave inside it (a short write, e.g. on a full disk, is completed with
/// further calls). The variants differ in what survives a crash once the call has returned:
///
/// | variant | process crash (kernel survives) | power loss or kernel crash |
/// |---|---|---|
/// | `Buffer` | the line is kept (it is in the page cache) | the line may be lost, or the file may end in a torn piece of it |
/// | `SyncData` | kept | kept once the call returns (`fdatasync`: the data and the file size are on disk; the modification time may not be) |
/// | `SyncAll` | kept | kept once the call returns, with all metadata (`fsync`) |
///
/// Full rewrites (first flush, migration, recovery, removals, branched sessions) ignore the
/// mode: they are always atomic and fully synced (temporary file, `fsync`, rename, directory
/// `fsync`; docs/DEVIATIONS.md D10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Durability {
    /// Leave the line in the page cache (what the reference does): fastest; for streaming
    /// output where losing the last lines on a power loss is acceptable.
    Buffer,
    /// `fdatasync` after the line: the line survives a power loss once the call returns. The
    /// default, and the usual choice at the end of a turn.
    #[default]
    SyncData,
    /// `fsync` after the line: as [`Durability::SyncData`], plus the file's metadata
    /// (modification time) is durable too.
    SyncAll,
}

impl Durability {
    /// Syncs `file` as this mode asks (nothing for [`Durability::Buffer`]) on the real file
    /// system ([`Io::sync`] of [`REAL`]).
    ///
    /// # Errors
    /// The `fdatasync`/`fsync` failure.
    pub fn sync(self, file: &File) -> io::Result<()> {
        REAL.sync(self, file)
    }
}

/// The write functions of this module over one file-system seam ([`Fs`]): `io::on(fs).x(…)`
/// makes the system calls of `x` through `fs` (`fault::FaultFs`, feature `test-util`, injects
/// failures there); [`REAL`] is the handle over the real file system ([`RealFs`]), which the
/// plain functions (`io::atomic_rewrite`, `io::create_new`, `io::append_line`, …) are
/// shorthand for. A `Copy` handle of one reference.
#[derive(Clone, Copy, Debug)]
pub struct Io<'a> {
    fs: &'a dyn Fs,
}

/// [`Io`] over the real file system.
pub const REAL: Io<'static> = Io { fs: &RealFs };

/// [`Io`] over `fs`.
pub fn on(fs: &dyn Fs) -> Io<'_> {
    Io { fs }
}

impl Io<'_> {
    /// [`Durability::sync`] through this handle's [`Fs`].
    ///
    /// # Errors
    /// As [`Durability::sync`].
    pub fn sync(&self, durability: Durability, file: &File) -> io::Result<()> {
        match durability {
            Durability::Buffer => Ok(()),
            Durability::SyncData => self.fs.sync_data(file),
            Durability::SyncAll => self.fs.sync_all(file),
        }
    }
}

/// What an append wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AppendOutcome {
    /// A `\n` separator was written first because the file did not end in one.
    pub separator: bool,
    /// Bytes written, separator included.
    pub bytes: usize,
    /// The file's length just before the write (a writer that expected another length knows
    /// someone else wrote in between).
    pub previous_len: u64,
}

fn dir_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// `lstat` of the file a write acts on (the result of [`crate::identity::check_write_path`]):
/// `None` when nothing is there. A symlink found there (swapped in after the name was
/// resolved) is reported as such, never followed, and refused by [`refuse_non_regular`].
fn target_meta(target: &Path) -> io::Result<Option<fs::Metadata>> {
    match fs::symlink_metadata(target) {
        Ok(m) => Ok(Some(m)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// `O_NOFOLLOW` as an `OpenOptionsExt::custom_flags` value: the final component of a path a
/// write opens is never followed (a symlink there fails the open with `ELOOP`).
#[cfg(unix)]
pub(crate) fn nofollow_flag() -> i32 {
    // `OFlags` bits fit in an `i32` (they are the C `int` open flags).
    #[allow(clippy::cast_possible_wrap)]
    let flag = rustix::fs::OFlags::NOFOLLOW.bits() as i32;
    flag
}

#[cfg(unix)]
fn mode_of(meta: &fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o777
}

/// All mode bits a rewrite keeps (permissions plus setuid, setgid, sticky).
#[cfg(unix)]
fn full_mode_of(meta: &fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

#[cfg(not(unix))]
fn full_mode_of(_meta: &fs::Metadata) -> u32 {
    NEW_FILE_MODE
}

/// Gives `file` the owner and group of `like` when they differ: both when allowed (root), else
/// the group alone (allowed when the process belongs to it), else nothing (`EPERM` ignored).
#[cfg(unix)]
fn copy_owner(file: &File, like: &fs::Metadata) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let mine = file.metadata()?;
    if mine.uid() == like.uid() && mine.gid() == like.gid() {
        return Ok(());
    }
    match std::os::unix::fs::fchown(file, Some(like.uid()), Some(like.gid())) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            if mine.gid() == like.gid() {
                return Ok(());
            }
            match std::os::unix::fs::fchown(file, None, Some(like.gid())) {
                Err(e) if e.kind() != io::ErrorKind::PermissionDenied => Err(e),
                _ => Ok(()),
            }
        }
        Err(e) => Err(e),
    }
}

#[cfg(not(unix))]
fn copy_owner(_file: &File, _like: &fs::Metadata) -> io::Result<()> {
    Ok(())
}

/// Fails with [`io::ErrorKind::PermissionDenied`] naming `path` when the process may not write
/// the existing file (checked by opening it for writing, without truncating: the kernel's own
/// answer, root included).
fn check_writable(path: &Path) -> io::Result<()> {
    let mut options = fs::OpenOptions::new();
    options.write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(nofollow_flag());
    }
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is not writable by this process ({e}); refusing to replace it",
                path.display()
            ),
        )),
        Err(e) => Err(e),
    }
}

#[cfg(not(unix))]
fn mode_of(_meta: &fs::Metadata) -> u32 {
    NEW_FILE_MODE
}

#[cfg(unix)]
fn set_mode(file: &File, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_file: &File, _mode: u32) -> io::Result<()> {
    Ok(())
}

/// Permission bits of an existing file (`mode & 0o777`), or `None` when it does not exist.
///
/// # Errors
/// Any `stat` failure other than "not found".
pub fn existing_mode(path: &Path) -> io::Result<Option<u32>> {
    match fs::metadata(path) {
        Ok(m) => Ok(Some(mode_of(&m))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// fsyncs a directory so a rename or a new entry in it is durable (a no-op where directories
/// cannot be opened, e.g. Windows).
///
/// # Errors
/// The `fsync` failure, when the directory could be opened.
pub fn fsync_dir(dir: &Path) -> io::Result<()> {
    REAL.fsync_dir(dir)
}

impl Io<'_> {
    /// [`fsync_dir`] through this handle's [`Fs`].
    ///
    /// # Errors
    /// As [`fsync_dir`].
    pub fn fsync_dir(&self, dir: &Path) -> io::Result<()> {
        let fs = self.fs;
        fs.sync_dir(dir)
    }
}

/// The longest part of a target's name that a hidden temporary name repeats: `.<name>.` plus
/// tempfile's 6 random characters plus the longest suffix (`.old.tmp`) stays within the 255
/// bytes a file name may have, so a session whose own name is close to that limit can still be
/// rewritten.
const TEMP_NAME_PART_MAX: usize = 255 - 2 - 6 - ".old.tmp".len();

/// `.<name>.`, the prefix of a hidden temporary name for `target`, with `<name>` cut (on a
/// character boundary) to [`TEMP_NAME_PART_MAX`] bytes.
fn temp_prefix(target: &Path) -> String {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "session".to_owned());
    let mut end = name.len().min(TEMP_NAME_PART_MAX);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    format!(".{}.", &name[..end])
}

fn temp_in(fs: &dyn Fs, dir: &Path, target: &Path) -> io::Result<tempfile::NamedTempFile> {
    fs.create_temp(dir, &temp_prefix(target), ".tmp")
        .map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "cannot create a temporary file in directory {} to write {}: {e}",
                    dir.display(),
                    target.display()
                ),
            )
        })
}

/// Writes all of `bytes` with [`Fs::write`] calls: one call, and a short write (rare, e.g. a
/// full disk) completed with further calls. On failure, the error and how many bytes were
/// written before it.
fn write_all_in(fs: &dyn Fs, file: &mut File, bytes: &[u8]) -> Result<(), (io::Error, usize)> {
    let mut done = 0;
    while done < bytes.len() {
        match fs.write(file, &bytes[done..]) {
            Ok(0) => {
                let e = io::Error::new(io::ErrorKind::WriteZero, "failed to write whole buffer");
                return Err((e, done));
            }
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err((e, done)),
        }
    }
    Ok(())
}

/// Writes all of `bytes` to a file that is not visible yet (a temporary file).
fn write_hidden(fs: &dyn Fs, file: &mut File, bytes: &[u8]) -> io::Result<()> {
    write_all_in(fs, file, bytes).map_err(|(e, _)| e)
}

/// A second name (a hard link `.<name>.<random>.old.tmp` in `dir`) for the file at `target`,
/// so that it can be put back if the rename replacing it turns out not to be durable. `None`
/// when the link cannot be made (e.g. a file system without hard links): the rewrite then goes
/// on without that safety net. Dropping the returned path removes the second name.
fn link_aside(fs: &dyn Fs, dir: &Path, target: &Path) -> Option<tempfile::TempPath> {
    tempfile::Builder::new()
        .prefix(&temp_prefix(target))
        .suffix(".old.tmp")
        .make_in(dir, |aside| fs.hard_link(target, aside))
        .ok()
        .map(tempfile::NamedTempFile::into_temp_path)
}

/// The checks before a file is replaced (or created) by a rename: `path` resolved once
/// ([`crate::identity::check_write_path`]), its directory, and what is there now, which must be
/// a regular file this process may write.
pub(crate) fn replace_target(path: &Path) -> io::Result<(PathBuf, PathBuf, Option<fs::Metadata>)> {
    let target = crate::identity::check_write_path(path)?;
    let dir = dir_of(&target);
    let existing = target_meta(&target)?;
    if let Some(meta) = &existing {
        refuse_non_regular(meta)?;
        check_writable(&target)?;
    }
    Ok((target, dir, existing))
}

/// Replaces `path` with `contents` atomically: temp file in the same directory, write, owner
/// and group and mode bits (`& 0o7777`) of the file being replaced, `sync_all`, rename over
/// `path`, fsync the directory. A new file gets [`NEW_FILE_MODE`]. A symlink is followed to its
/// target when that lies inside the symlink's own directory (or below it); a symlink to a file
/// elsewhere is refused ([`crate::identity::OutsideStore`]). The rename gives the path a new inode: hard links to the old file keep the old bytes.
///
/// Until the directory `fsync` has succeeded the replaced file keeps a second name (a hard link
/// next to it, removed afterwards); when that `fsync` fails, the replaced file is renamed back
/// into place (a file that did not exist before is removed), so an error always leaves the path
/// as it was.
///
/// # Errors
/// [`io::ErrorKind::PermissionDenied`] carrying [`crate::identity::OutsideStore`] for a
/// symlink out of its directory; [`io::ErrorKind::PermissionDenied`] naming the file when the
/// process may not write it; an
/// error naming the directory when no temporary file can be created there; any other I/O
/// failure. The original file is untouched in every case (on a file system without hard links,
/// except after a failed directory `fsync`, which then leaves the new bytes in place).
pub fn atomic_rewrite(path: &Path, contents: &[u8]) -> io::Result<()> {
    REAL.atomic_rewrite(path, contents)
}

/// [`atomic_rewrite`] with a last check: `before_rename` runs after the temporary file is
/// written and synced, immediately before the rename over `path`; when it returns an error,
/// the temporary file is removed, `path` is left as it is and that error is returned. A
/// writer that compares the file's identity before replacing it (e.g. a store saved only when
/// nobody else changed it) re-checks here, so the window left between the check and the
/// rename is the rename itself.
///
/// # Errors
/// As [`atomic_rewrite`], and the error of `before_rename`.
pub fn atomic_rewrite_checked(
    path: &Path,
    contents: &[u8],
    before_rename: &mut dyn FnMut() -> io::Result<()>,
) -> io::Result<()> {
    REAL.atomic_rewrite_checked(path, contents, before_rename)
}

impl Io<'_> {
    /// [`atomic_rewrite`] through this handle's [`Fs`].
    ///
    /// # Errors
    /// As [`atomic_rewrite`].
    pub fn atomic_rewrite(&self, path: &Path, contents: &[u8]) -> io::Result<()> {
        self.atomic_rewrite_checked(path, contents, &mut || Ok(()))
    }

    /// [`atomic_rewrite_checked`] through this handle's [`Fs`].
    ///
    /// # Errors
    /// As [`atomic_rewrite_checked`].
    pub fn atomic_rewrite_checked(
        &self,
        path: &Path,
        contents: &[u8],
        before_rename: &mut dyn FnMut() -> io::Result<()>,
    ) -> io::Result<()> {
        let fs = self.fs;
        // Resolved once: the checks, the temporary file and the rename all use `target`.
        let (target, dir, existing) = replace_target(path)?;
        let mut tmp = temp_in(fs, &dir, &target)?;
        write_hidden(fs, tmp.as_file_mut(), contents)?;
        match &existing {
            Some(meta) => {
                copy_owner(tmp.as_file(), meta)?;
                set_mode(tmp.as_file(), full_mode_of(meta))?;
            }
            None => set_mode(tmp.as_file(), NEW_FILE_MODE)?,
        }
        fs.sync_all(tmp.as_file())?;
        // Dropping `tmp` on an error removes the temporary file.
        before_rename()?;
        persist_replacing(fs, tmp, &dir, &target, existing.as_ref())
    }
}

/// The end of a replacing write: renames the written and synced `tmp` over `target` (whose
/// `lstat` before the write was `existing`) and fsyncs `dir`. Until that `fsync` has succeeded
/// the replaced file keeps a second name ([`link_aside`]); when it fails, the replaced file is
/// renamed back (a file that did not exist before is removed), so an error leaves the path as
/// it was.
fn persist_replacing(
    fs: &dyn Fs,
    tmp: tempfile::NamedTempFile,
    dir: &Path,
    target: &Path,
    existing: Option<&fs::Metadata>,
) -> io::Result<()> {
    let old = existing.and_then(|_| link_aside(fs, dir, target));
    fs.persist(tmp, target)?;
    if let Err(e) = fs.sync_dir(dir) {
        match old {
            // The second name is the file's name again: nothing to remove.
            Some(old) if fs.rename(&old, target).is_ok() => {
                let _ = old.keep();
            }
            Some(_) => {}
            None if existing.is_none() => {
                let _ = fs.remove_file(target);
            }
            None => {}
        }
        return Err(e);
    }
    drop(old);
    Ok(())
}

/// Creates `path` with `contents` only if nothing exists there (mode `mode`, default
/// [`NEW_FILE_MODE`]), atomically: the file appears complete or not at all (when the directory
/// `fsync` after the rename fails, the new file is removed again).
///
/// # Errors
/// [`io::ErrorKind::AlreadyExists`] when the path exists; any other I/O failure (nothing is
/// left behind).
pub fn create_new(path: &Path, contents: &[u8], mode: Option<u32>) -> io::Result<()> {
    REAL.create_new(path, contents, mode)
}

impl Io<'_> {
    /// [`create_new`] through this handle's [`Fs`].
    ///
    /// # Errors
    /// As [`create_new`].
    pub fn create_new(&self, path: &Path, contents: &[u8], mode: Option<u32>) -> io::Result<()> {
        let fs = self.fs;
        let dir = dir_of(path);
        let mut tmp = temp_in(fs, &dir, path)?;
        write_hidden(fs, tmp.as_file_mut(), contents)?;
        set_mode(tmp.as_file(), mode.unwrap_or(NEW_FILE_MODE))?;
        fs.sync_all(tmp.as_file())?;
        let file = fs.persist_noclobber(tmp, path)?;
        drop(file);
        sync_dir_or_remove(fs, &dir, path)
    }
}

/// After a file was renamed into place at `created` (where nothing was before): fsyncs `dir`,
/// and when that fails removes the file again, so the error leaves nothing behind.
fn sync_dir_or_remove(fs: &dyn Fs, dir: &Path, created: &Path) -> io::Result<()> {
    fs.sync_dir(dir).inspect_err(|_| {
        let _ = fs.remove_file(created);
    })
}

/// Creates `path` holding `contents` only if nothing exists there, so that no reader ever sees
/// it half-written, **without** syncing (for short-lived coordination files such as the session
/// write lock, which must be cheap and whose loss in a crash is harmless). Returns the metadata
/// of the created file (its device and inode identify it later).
///
/// The bytes go to a temporary file in the same directory (mode `mode`, set explicitly, so the
/// umask does not apply), which is then linked into place with a no-clobber rename
/// (`renameat2(RENAME_NOREPLACE)`, or `link` + `unlink` where that is unsupported, e.g. NFS). On a
/// file system that supports neither, it falls back to `open(O_CREAT|O_EXCL)` with `mode`
/// (subject to the umask) and a single `write` of `contents`.
///
/// # Errors
/// [`io::ErrorKind::AlreadyExists`] when something exists at `path`; any other I/O failure
/// (nothing is left behind, except a temporary file after a crash).
pub fn create_exclusive(path: &Path, contents: &[u8], mode: u32) -> io::Result<fs::Metadata> {
    REAL.create_exclusive(path, contents, mode)
}

impl Io<'_> {
    /// [`create_exclusive`] through this handle's [`Fs`].
    ///
    /// # Errors
    /// As [`create_exclusive`].
    pub fn create_exclusive(
        &self,
        path: &Path,
        contents: &[u8],
        mode: u32,
    ) -> io::Result<fs::Metadata> {
        let fs = self.fs;
        let dir = dir_of(path);
        let linked = (|| {
            let mut tmp = temp_in(fs, &dir, path)?;
            write_hidden(fs, tmp.as_file_mut(), contents)?;
            set_mode(tmp.as_file(), mode)?;
            let file = fs.persist_noclobber(tmp, path)?;
            file.metadata()
        })();
        match linked {
            Err(e)
                if e.kind() != io::ErrorKind::AlreadyExists
                    && e.kind() != io::ErrorKind::NotFound =>
            {
                create_exclusive_open(fs, path, contents, mode).map_err(|e2| {
                    if e2.kind() == io::ErrorKind::AlreadyExists {
                        e2
                    } else {
                        e
                    }
                })
            }
            other => other,
        }
    }
}

/// The fallback of [`Io::create_exclusive`]: `open(O_CREAT|O_EXCL)`, write, and on failure
/// remove the file again.
fn create_exclusive_open(
    fs: &dyn Fs,
    path: &Path,
    contents: &[u8],
    mode: u32,
) -> io::Result<fs::Metadata> {
    let mut file = fs.create_new_file(path, mode)?;
    let written = write_hidden(fs, &mut file, contents).and_then(|()| file.metadata());
    if written.is_err() {
        drop(file);
        let _ = fs.remove_file(path);
    }
    written
}

/// Writes a byte-exact backup of `source` (whose bytes the caller already holds in
/// `original`) at `backup`, with the source's permission bits (`mode & 0o777`, or 0600 when
/// that is 0; setuid/setgid/sticky are not copied) and, when the process may set them, its
/// owner and group. Never overwrites an existing file. Atomic like [`create_new`]: the backup
/// appears complete or not at all.
///
/// # Errors
/// Any I/O failure, or [`io::ErrorKind::AlreadyExists`] (nothing is left behind).
pub fn backup_copy(source: &Path, backup: &Path, original: &[u8]) -> io::Result<()> {
    REAL.backup_copy(source, backup, original)
}

impl Io<'_> {
    /// [`backup_copy`] through this handle's [`Fs`].
    ///
    /// # Errors
    /// As [`backup_copy`].
    pub fn backup_copy(&self, source: &Path, backup: &Path, original: &[u8]) -> io::Result<()> {
        let fs = self.fs;
        let source = crate::identity::check_write_path(source)?;
        let meta = target_meta(&source)?;
        let mode = match meta.as_ref().map(mode_of) {
            Some(0) | None => NEW_FILE_MODE,
            Some(m) => m,
        };
        let dir = dir_of(backup);
        let mut tmp = temp_in(fs, &dir, backup)?;
        write_hidden(fs, tmp.as_file_mut(), original)?;
        if let Some(meta) = &meta {
            copy_owner(tmp.as_file(), meta)?;
        }
        set_mode(tmp.as_file(), mode)?;
        fs.sync_all(tmp.as_file())?;
        let file = fs.persist_noclobber(tmp, backup)?;
        drop(file);
        sync_dir_or_remove(fs, &dir, backup)
    }
}

#[cfg(unix)]
fn last_byte(file: &File, len: u64) -> io::Result<Option<u8>> {
    use std::os::unix::fs::FileExt;
    if len == 0 {
        return Ok(None);
    }
    let mut b = [0u8; 1];
    let n = file.read_at(&mut b, len - 1)?;
    Ok((n == 1).then_some(b[0]))
}

#[cfg(not(unix))]
fn last_byte(file: &File, len: u64) -> io::Result<Option<u8>> {
    use std::io::{Seek, SeekFrom};
    if len == 0 {
        return Ok(None);
    }
    let mut f = file.try_clone()?;
    f.seek(SeekFrom::Start(len - 1))?;
    let mut b = [0u8; 1];
    let n = f.read(&mut b)?;
    Ok((n == 1).then_some(b[0]))
}

/// Appends one line (`line` must not contain `\n`; the terminating `\n` is added here) to
/// `path` with a single `write` on an `O_APPEND` descriptor, creating the file (0600) when it
/// is missing. When the file is non-empty and its last byte is not `\n`, a `\n` separator is
/// written first in the same call, so a torn last line is never glued to the new one
/// (openclaw-jsonl.md §1.1). A failed write or sync takes the bytes back ([`Io::append_to_existing`]);
/// a file this call created is then removed again. A symlink out of its own directory is
/// refused ([`crate::identity::OutsideStore`]).
///
/// # Errors
/// Any I/O failure.
pub fn append_line(path: &Path, line: &[u8], durability: Durability) -> io::Result<AppendOutcome> {
    REAL.append_line(path, line, durability)
}

impl Io<'_> {
    /// [`append_line`] through this handle's [`Fs`].
    ///
    /// # Errors
    /// As [`append_line`].
    pub fn append_line(
        &self,
        path: &Path,
        line: &[u8],
        durability: Durability,
    ) -> io::Result<AppendOutcome> {
        let fs = self.fs;
        let target = crate::identity::check_write_path(path)?;
        let existed = match target_meta(&target)? {
            Some(meta) => {
                refuse_non_regular(&meta)?;
                true
            }
            None => false,
        };
        let mut file = fs.open_append(&target, true)?;
        refuse_non_regular(&file.metadata()?)?;
        match on(fs).append_line_to(&mut file, line, durability) {
            Err(e) if !existed => {
                remove_if_empty(fs, &file, &target);
                Err(e)
            }
            other => other,
        }
    }
}

/// Opens `path` for appending ([`Fs::open_append`]: read and append, `O_NOFOLLOW`, with
/// `O_CREAT` and mode [`NEW_FILE_MODE`] when `create`), for a writer that appends many lines
/// through one descriptor ([`append_line_to`]), so the name is resolved once. A name that is
/// a symlink is refused (`ELOOP`), and so is anything but a regular file.
///
/// # Errors
/// The `open` failure ([`io::ErrorKind::NotFound`] when `create` is false and nothing is
/// there); [`io::ErrorKind::InvalidInput`] for a FIFO, device, socket or directory.
pub fn open_append_nofollow(path: &Path, create: bool) -> io::Result<File> {
    let file = RealFs.open_append(path, create)?;
    refuse_non_regular(&file.metadata()?)?;
    Ok(file)
}

/// Appends one line to the open `O_APPEND` descriptor `file` ([`open_append_nofollow`]) as
/// [`append_line`] does by name: one `write` of the line and its `\n`, after a `\n` separator
/// when the file does not end in one; a failed write or sync takes the bytes back.
///
/// # Errors
/// Any I/O failure.
pub fn append_line_to(
    file: &mut File,
    line: &[u8],
    durability: Durability,
) -> io::Result<AppendOutcome> {
    REAL.append_line_to(file, line, durability)
}

impl Io<'_> {
    /// [`append_line_to`] through this handle's [`Fs`].
    ///
    /// # Errors
    /// As [`append_line_to`].
    pub fn append_line_to(
        &self,
        file: &mut File,
        line: &[u8],
        durability: Durability,
    ) -> io::Result<AppendOutcome> {
        let fs = self.fs;
        let len = file.metadata()?.len();
        let separator = matches!(last_byte(file, len)?, Some(b) if b != b'\n');
        let out = line_bytes(separator, line);
        append_bytes(fs, file, &out, durability)?;
        Ok(AppendOutcome {
            separator,
            bytes: out.len(),
            previous_len: len,
        })
    }
}

/// The bytes of one appended line: a `\n` separator first when `separator`, the line, `\n`.
fn line_bytes(separator: bool, line: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(line.len() + 2);
    if separator {
        out.push(b'\n');
    }
    out.extend_from_slice(line);
    out.push(b'\n');
    out
}

/// Writes `out` at the end of the `O_APPEND` descriptor `file` (one `write`, a short write
/// completed with further calls), then syncs it as `durability` asks. When a write or the sync
/// fails, the bytes already written are taken back ([`undo_append`]), so a failed append never
/// leaves part of a line (or a line the caller was told failed) behind.
fn append_bytes(
    fs: &dyn Fs,
    file: &mut File,
    out: &[u8],
    durability: Durability,
) -> io::Result<()> {
    let result = match write_all_in(fs, file, out) {
        Ok(()) => on(fs).sync(durability, file).map_err(|e| (e, out.len())),
        Err(failed) => Err(failed),
    };
    let Err((e, written)) = result else {
        return Ok(());
    };
    if written == 0 || undo_append(fs, file, &out[..written]).unwrap_or(false) {
        return Err(e);
    }
    Err(io::Error::new(
        e.kind(),
        format!("{e}; {written} bytes of the line were written and could not be taken back"),
    ))
}

/// Takes back the bytes `ours` an append just wrote on the `O_APPEND` descriptor `file`: when
/// they are still the file's last bytes (the file ends at the descriptor's offset, where the
/// write left it, and the bytes there are `ours`), the file is truncated to where they began.
/// Returns false, changing nothing, when another writer appended after them (or in between).
///
/// Another process appending without the session write lock between the check and the
/// truncation would lose its line: appends to one file should hold the write lock.
fn undo_append(fs: &dyn Fs, file: &mut File, ours: &[u8]) -> io::Result<bool> {
    use std::io::Seek;
    let end = file.stream_position()?;
    let n = ours.len() as u64;
    if file.metadata()?.len() != end || end < n {
        return Ok(false);
    }
    let start = end - n;
    let mut got = vec![0u8; ours.len()];
    read_exact_at(file, &mut got, start)?;
    if got != ours {
        return Ok(false);
    }
    fs.set_len(file, start)?;
    Ok(true)
}

/// Removes the file at `path` when it is still `file` and empty: an append that created it and
/// then failed leaves nothing behind.
fn remove_if_empty(fs: &dyn Fs, file: &File, path: &Path) {
    let Ok(meta) = file.metadata() else { return };
    let ours = SessionFileSnapshot::of(&meta);
    let same = SessionFileSnapshot::stat(path).is_ok_and(|s| s.is_some_and(|s| s.same_file(&ours)));
    if same && ours.size == 0 {
        let _ = fs.remove_file(path);
    }
}

/// Reads exactly `buf.len()` bytes of `file` at `offset` (`pread`; elsewhere a seek on a clone
/// of the descriptor, put back afterwards).
#[cfg(unix)]
pub(crate) fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buf, offset)
}

/// Reads exactly `buf.len()` bytes of `file` at `offset`.
#[cfg(not(unix))]
pub(crate) fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    use std::io::{Seek, SeekFrom};
    let mut f = file.try_clone()?;
    let back = f.stream_position()?;
    f.seek(SeekFrom::Start(offset))?;
    let read = f.read_exact(buf);
    f.seek(SeekFrom::Start(back))?;
    read
}

/// What [`Io::append_to_existing`] wrote, with the file's snapshots around the write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifiedAppend {
    /// A `\n` separator was written first because the file did not end in one.
    pub separator: bool,
    /// The bytes written (separator, line, `\n`), in one `write` call.
    pub written: Vec<u8>,
    /// `fstat` of the descriptor just before the write.
    pub before: SessionFileSnapshot,
    /// `stat` of the path just after the write (and the sync): the same file as `before`.
    pub after: SessionFileSnapshot,
}

/// Why [`Io::append_to_existing`] failed.
#[derive(Debug, thiserror::Error)]
pub enum AppendToExistingError {
    /// Nothing exists at the path (the file was deleted, or renamed away). Nothing was written.
    #[error("the file was deleted")]
    Deleted,
    /// The path holds another file than the expected one (other device or inode: replaced by a
    /// rename, or deleted and created again). Nothing was written to it.
    #[error("the file was replaced by another file")]
    Replaced,
    /// The path was deleted or replaced while the line was being written: the line went to the
    /// old file, not to the one now at the path.
    #[error("the file was deleted or replaced during the write")]
    ReplacedDuringWrite,
    /// Any I/O failure (including a path that is not a regular file).
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// The file a writer believes is at a path: its last snapshot and its first line.
#[derive(Clone, Copy, Debug)]
pub struct KnownFile<'a> {
    /// The snapshot when the writer last read or wrote the file.
    pub snapshot: SessionFileSnapshot,
    /// The file's first line as the writer knows it, `\n` included (at most its first 4 KiB);
    /// empty to skip the check.
    pub first_line: &'a [u8],
}

impl Io<'_> {
    /// Appends one line (`line` must not contain `\n`; the terminating `\n` is added here) to an
    /// existing session file, never creating one: a single `write` on an `O_APPEND` descriptor,
    /// with a `\n` separator first (in the same call) when the file does not end in one, then the
    /// sync `durability` asks for. `expected` is the file the caller believes the path holds: another
    /// file there ([`SessionFileSnapshot::same_file`] fails), or the same inode no longer starting
    /// with the expected first line after it changed (a file deleted and created again on a reused
    /// inode), is refused before anything is written. The snapshots before (`fstat` of the
    /// descriptor) and after (`stat` of the path) the write are returned, so the caller can verify
    /// that the file grew by exactly the bytes written.
    ///
    /// A short write is completed with further `write` calls. When a write or the sync fails, the
    /// bytes already written are taken back (the file is truncated to where they began, when they
    /// are still its last bytes), so the failed append leaves neither part of a line nor the whole
    /// line behind. A symlink out of its own directory is refused before anything is opened
    /// ([`AppendToExistingError::Io`] carrying [`crate::identity::OutsideStore`]).
    ///
    /// # Errors
    /// [`AppendToExistingError::Deleted`] or [`AppendToExistingError::Replaced`] (nothing written);
    /// [`AppendToExistingError::ReplacedDuringWrite`]; any I/O failure (nothing left written, or
    /// the error says how many bytes could not be taken back).
    pub fn append_to_existing(
        &self,
        path: &Path,
        line: &[u8],
        durability: Durability,
        expected: Option<KnownFile<'_>>,
    ) -> Result<VerifiedAppend, AppendToExistingError> {
        let fs = self.fs;
        let target = crate::identity::check_write_path(path)?;
        let mut file = match fs.open_append(&target, false) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(AppendToExistingError::Deleted);
            }
            Err(e) => return Err(e.into()),
        };
        let meta = file.metadata()?;
        refuse_non_regular(&meta)?;
        let before = SessionFileSnapshot::of(&meta);
        if let Some(known) = expected {
            if !before.same_file(&known.snapshot) {
                return Err(AppendToExistingError::Replaced);
            }
            if before != known.snapshot
                && !known.first_line.is_empty()
                && !starts_with(&file, known.first_line)?
            {
                return Err(AppendToExistingError::Replaced);
            }
        }
        let separator = matches!(last_byte(&file, before.size)?, Some(b) if b != b'\n');
        let out = line_bytes(separator, line);
        append_bytes(fs, &mut file, &out, durability)?;
        match SessionFileSnapshot::stat(&target)? {
            Some(after) if after.same_file(&before) => Ok(VerifiedAppend {
                separator,
                written: out,
                before,
                after,
            }),
            _ => Err(AppendToExistingError::ReplacedDuringWrite),
        }
    }
}

/// True when `file` starts with `prefix`.
#[cfg(unix)]
fn starts_with(file: &File, prefix: &[u8]) -> io::Result<bool> {
    use std::os::unix::fs::FileExt;
    let mut got = vec![0u8; prefix.len()];
    match file.read_exact_at(&mut got, 0) {
        Ok(()) => Ok(got == prefix),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(false),
        Err(e) => Err(e),
    }
}

/// True when `file` starts with `prefix`.
#[cfg(not(unix))]
fn starts_with(file: &File, prefix: &[u8]) -> io::Result<bool> {
    use std::io::{Seek, SeekFrom};
    let mut f = file.try_clone()?;
    f.seek(SeekFrom::Start(0))?;
    let mut got = vec![0u8; prefix.len()];
    match f.read_exact(&mut got) {
        Ok(()) => Ok(got == prefix),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(false),
        Err(e) => Err(e),
    }
}

impl Io<'_> {
    /// Syncs an existing file as `durability` asks (nothing for [`Durability::Buffer`]).
    ///
    /// # Errors
    /// Opening or syncing the file failed.
    pub fn sync_existing(&self, path: &Path, durability: Durability) -> io::Result<()> {
        let fs = self.fs;
        if durability == Durability::Buffer {
            return Ok(());
        }
        let file = open_regular(path)?;
        on(fs).sync(durability, &file)
    }
}

/// Appends raw bytes exactly as given (no separator, no newline), creating the file (0600) when
/// missing: a test or tool simulating another writer or a crash. One `write` call, a short
/// write completed with further calls; nothing is taken back on failure.
///
/// # Errors
/// Any I/O failure.
pub fn append_raw(path: &Path, bytes: &[u8]) -> io::Result<()> {
    REAL.append_raw(path, bytes)
}

impl Io<'_> {
    /// [`append_raw`] through this handle's [`Fs`].
    ///
    /// # Errors
    /// As [`append_raw`].
    pub fn append_raw(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let fs = self.fs;
        let target = crate::identity::check_write_path(path)?;
        let mut file = fs.open_append(&target, true)?;
        write_all_in(fs, &mut file, bytes).map_err(|(e, _)| e)
    }
}

/// Checks, without writing anything, that [`atomic_rewrite`] may replace the existing `path`:
/// it is a regular file (symlinks followed, as the rewrite follows them) that this process may
/// open for writing (opened without truncation and closed at once: the kernel's own answer, root
/// included), in a directory this process may create files in (`access(W_OK | X_OK)`). Callers
/// that write something else first (a backup) check here, so a file that cannot be replaced
/// leaves nothing behind.
///
/// # Errors
/// [`io::ErrorKind::PermissionDenied`] naming the file or the directory; `InvalidInput` for a
/// FIFO, device, socket or directory; the `stat` failure ([`io::ErrorKind::NotFound`] for a
/// missing file).
pub fn check_replaceable(path: &Path) -> io::Result<()> {
    let target = crate::identity::check_write_path(path)?;
    refuse_non_regular(&fs::symlink_metadata(&target)?)?;
    check_writable(&target)?;
    #[cfg(unix)]
    {
        let dir = dir_of(&target);
        let mode = rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK;
        if let Err(e) = rustix::fs::access(&dir, mode) {
            let e = io::Error::from(e);
            return Err(io::Error::new(
                e.kind(),
                format!(
                    "cannot create files in directory {} ({e}); refusing to replace {}",
                    dir.display(),
                    target.display()
                ),
            ));
        }
    }
    Ok(())
}

/// Replaces (or creates) a file with raw bytes, atomically (see [`atomic_rewrite`]): for tests
/// and tools that plant files.
///
/// # Errors
/// Any I/O failure.
pub fn write_raw(path: &Path, bytes: &[u8]) -> io::Result<()> {
    atomic_rewrite(path, bytes)
}

impl Io<'_> {
    /// [`write_raw`] through this handle's [`Fs`].
    ///
    /// # Errors
    /// As [`write_raw`].
    pub fn write_raw(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let fs = self.fs;
        on(fs).atomic_rewrite(path, bytes)
    }
}

/// Opens `path` read-only with `O_NONBLOCK` (symlinks followed): the open never blocks, even
/// when a FIFO is at the path or appears there after a check (reads of a regular file are not
/// affected by the flag). Callers `fstat` the descriptor before reading it.
///
/// # Errors
/// The `open` failure.
pub fn open_nonblocking(path: &Path) -> io::Result<File> {
    open_nonblocking_with(path, false)
}

/// [`open_nonblocking`], with `O_NOFOLLOW` when `nofollow` (a symlink at the final component
/// fails the open with `ELOOP`).
fn open_nonblocking_with(path: &Path, nofollow: bool) -> io::Result<File> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // `OFlags` bits fit in an `i32` (they are the C `int` open flags).
        #[allow(clippy::cast_possible_wrap)]
        let mut flags = rustix::fs::OFlags::NONBLOCK.bits() as i32;
        if nofollow {
            flags |= nofollow_flag();
        }
        options.custom_flags(flags);
    }
    #[cfg(not(unix))]
    let _ = nofollow;
    options.open(path)
}

/// Opens a session file for reading, refusing anything that is not a regular file (after
/// following symlinks): a FIFO would block the open, and a device such as `/dev/zero` would be
/// read without end. The open itself is non-blocking ([`open_nonblocking`]), so a FIFO that
/// replaces the file between the check and the open is refused too instead of hanging.
///
/// # Errors
/// [`io::ErrorKind::InvalidInput`] naming the file type for non-regular files; any other I/O
/// failure ([`io::ErrorKind::NotFound`] for a missing file).
pub fn open_regular(path: &Path) -> io::Result<File> {
    refuse_non_regular(&fs::metadata(path)?)?;
    let f = open_nonblocking(path)?;
    // The path may have been replaced between the two calls.
    if !f.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    Ok(f)
}

/// Writes only ever replace or extend regular files: a FIFO would block the open and a device
/// (such as `/dev/null`) must never be renamed over.
fn refuse_non_regular(meta: &fs::Metadata) -> io::Result<()> {
    let kind = meta.file_type();
    if kind.is_file() {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a regular file ({})", describe_file_type(&kind)),
        ))
    }
}

fn describe_file_type(kind: &fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_block_device() || kind.is_char_device() {
            return "a device";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else if kind.is_symlink() {
        "a symlink"
    } else {
        "not a regular file"
    }
}

/// Reads a whole regular file (see [`open_regular`]).
///
/// # Errors
/// Any I/O failure ([`io::ErrorKind::NotFound`] for a missing file,
/// [`io::ErrorKind::InvalidInput`] for a FIFO, device, socket or directory).
pub fn read_file(path: &Path) -> io::Result<Vec<u8>> {
    let mut f = open_regular(path)?;
    let mut buf = Vec::with_capacity(f.metadata().map(|m| m.len() as usize + 1).unwrap_or(0));
    f.read_to_end(&mut buf)?;
    Ok(buf)
}

/// Reads the first line of a file the way the reference sniffs headers: 4 KiB chunks, at most
/// 64 KiB, stopping at the first `\n`. Returns the bytes before the `\n`, or everything read when
/// no `\n` came within the cap (a longer header then fails to parse), or `None` for an empty
/// file.
///
/// # Errors
/// Any I/O failure; [`io::ErrorKind::InvalidInput`] for anything but a regular file.
pub fn read_first_line(path: &Path) -> io::Result<Option<Vec<u8>>> {
    let mut f = open_regular(path)?;
    let mut out: Vec<u8> = Vec::new();
    let mut chunk = [0u8; HEADER_CHUNK_BYTES];
    while out.len() < MAX_HEADER_BYTES {
        let want = HEADER_CHUNK_BYTES.min(MAX_HEADER_BYTES - out.len());
        let n = f.read(&mut chunk[..want])?;
        if n == 0 {
            break;
        }
        if let Some(i) = memchr::memchr(b'\n', &chunk[..n]) {
            out.extend_from_slice(&chunk[..i]);
            return Ok(Some(out));
        }
        out.extend_from_slice(&chunk[..n]);
    }
    Ok((!out.is_empty()).then_some(out))
}

/// Creates a directory and its parents when missing.
///
/// # Errors
/// Any I/O failure.
pub fn ensure_dir(dir: &Path) -> io::Result<()> {
    if dir.as_os_str().is_empty() || dir.is_dir() {
        return Ok(());
    }
    fs::create_dir_all(dir)
}

/// Removes a file this crate wrote (e.g. a repair backup the caller chose not to keep).
///
/// # Errors
/// Any I/O failure ([`io::ErrorKind::NotFound`] when nothing is there).
pub fn remove_file(path: &Path) -> io::Result<()> {
    REAL.remove_file(path)
}

impl Io<'_> {
    /// [`remove_file`] through this handle's [`Fs`].
    ///
    /// # Errors
    /// As [`remove_file`].
    pub fn remove_file(&self, path: &Path) -> io::Result<()> {
        let fs = self.fs;
        fs.remove_file(path)
    }
}

/// Sets the modification time of a regular file this crate wrote to `time` (the access time
/// is left as it is): `sessions migrate` gives a session it copies out of another store that
/// store's last change time, so `continueRecent` and listings order it as before. The file is
/// opened read-only ([`open_regular`]; its bytes are never touched) and its times set with
/// `futimens` ([`File::set_modified`]), which the file's owner may do.
///
/// # Errors
/// [`io::ErrorKind::NotFound`]; [`io::ErrorKind::InvalidInput`] for anything but a regular
/// file; [`io::ErrorKind::PermissionDenied`] when the caller does not own the file.
pub fn set_modified(path: &Path, time: std::time::SystemTime) -> io::Result<()> {
    let target = crate::identity::check_write_path(path)?;
    let file = open_nonblocking_with(&target, true)?;
    refuse_non_regular(&file.metadata()?)?;
    file.set_modified(time)
}

/// Moves `src` to `dst` within one file system without ever replacing an existing `dst`, then
/// fsyncs both directories. The move is a hard link at `dst` (which fails atomically when
/// anything exists there) followed by the removal of `src`, so two movers racing for one
/// destination can never both succeed (a check followed by `rename` could: the second rename
/// silently replaced the first file). Where the file system refuses hard links (`EPERM`,
/// `ENOTSUP`, `EMLINK`, …) it falls back to a check and `rename`, which another process could
/// still race. A crash between the link and the removal leaves the file under both names
/// (nothing is lost). When a directory `fsync` fails, the file is moved back to `src` before
/// the error is returned.
///
/// # Errors
/// [`io::ErrorKind::AlreadyExists`] when `dst` exists; the link's, removal's, rename's or
/// fsync's failure (a cross-device move fails with the OS error; nothing is copied; when the
/// source cannot be removed after the link, the link is removed again).
pub fn move_no_replace(src: &Path, dst: &Path) -> io::Result<()> {
    REAL.move_no_replace(src, dst)
}

impl Io<'_> {
    /// [`move_no_replace`] through this handle's [`Fs`].
    ///
    /// # Errors
    /// As [`move_no_replace`].
    pub fn move_no_replace(&self, src: &Path, dst: &Path) -> io::Result<()> {
        let fs = self.fs;
        let exists = || {
            io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} already exists", dst.display()),
            )
        };
        let linked = match fs.hard_link(src, dst) {
            Ok(()) => {
                if let Err(e) = fs.remove_file(src) {
                    let _ = fs.remove_file(dst);
                    return Err(e);
                }
                true
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Err(exists()),
            Err(e)
                if e.kind() == io::ErrorKind::NotFound
                    || e.kind() == io::ErrorKind::CrossesDevices =>
            {
                return Err(e);
            }
            Err(_) => {
                match fs::symlink_metadata(dst) {
                    Ok(_) => return Err(exists()),
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => return Err(e),
                }
                fs.rename(src, dst)?;
                false
            }
        };
        let synced = fs.sync_dir(&dir_of(dst)).and_then(|()| {
            if dir_of(src) == dir_of(dst) {
                Ok(())
            } else {
                fs.sync_dir(&dir_of(src))
            }
        });
        if let Err(e) = synced {
            // Put the file back where it was, never over something that appeared at `src`.
            if linked {
                if fs.hard_link(dst, src).is_ok() {
                    let _ = fs.remove_file(dst);
                }
            } else if matches!(fs::symlink_metadata(src), Err(ref m) if m.kind() == io::ErrorKind::NotFound)
            {
                let _ = fs.rename(dst, src);
            }
            return Err(e);
        }
        Ok(())
    }
}

/// Deletes a file and fsyncs its directory.
///
/// # Errors
/// The removal's or fsync's failure (after a failed `fsync` the file is removed, but its
/// removal may not be durable).
pub fn remove_file_synced(path: &Path) -> io::Result<()> {
    REAL.remove_file_synced(path)
}

impl Io<'_> {
    /// [`remove_file_synced`] through this handle's [`Fs`].
    ///
    /// # Errors
    /// As [`remove_file_synced`].
    pub fn remove_file_synced(&self, path: &Path) -> io::Result<()> {
        let fs = self.fs;
        fs.remove_file(path)?;
        fs.sync_dir(&dir_of(path))
    }
}
