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
//! - a backup is a byte-exact copy with the source's permission bits (0600 when those are 0).
//!
//! `clippy.toml` forbids `std::fs::write`, `File::create` and `OpenOptions::new` everywhere else.
#![allow(clippy::disallowed_methods)] // This module is the sanctioned home of raw file writes.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// Permission bits of files this crate creates.
pub const NEW_FILE_MODE: u32 = 0o600;

/// Bytes read per step when sniffing a header line.
pub const HEADER_CHUNK_BYTES: usize = 4096;

/// Largest header line the sniffer accepts.
pub const MAX_HEADER_BYTES: usize = 64 * 1024;

/// How hard an append pushes its bytes to stable storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Durability {
    /// Leave the line in the page cache (what the reference does).
    Buffer,
    /// `fdatasync` after the line: the line survives a power loss once the call returns.
    #[default]
    SyncData,
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

/// The path a write should replace: symlinks are followed to their target.
fn write_target(path: &Path) -> PathBuf {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
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
    match fs::OpenOptions::new().write(true).open(path) {
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
    match File::open(dir) {
        Ok(d) => d.sync_all(),
        Err(_) if cfg!(not(unix)) => Ok(()),
        Err(e) => Err(e),
    }
}

fn temp_in(dir: &Path, target: &Path) -> io::Result<tempfile::NamedTempFile> {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "session".to_owned());
    tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(dir)
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

/// Replaces `path` with `contents` atomically: temp file in the same directory, write, owner
/// and group and mode bits (`& 0o7777`) of the file being replaced, `sync_all`, rename over
/// `path`, fsync the directory. A new file gets [`NEW_FILE_MODE`]. A symlink is followed to its
/// target. The rename gives the path a new inode: hard links to the old file keep the old bytes.
///
/// # Errors
/// [`io::ErrorKind::PermissionDenied`] naming the file when the process may not write it; an
/// error naming the directory when no temporary file can be created there; any other I/O
/// failure. The original file is untouched in every case.
pub fn atomic_rewrite(path: &Path, contents: &[u8]) -> io::Result<()> {
    let target = write_target(path);
    let dir = dir_of(&target);
    let existing = match fs::metadata(&target) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    if let Some(meta) = &existing {
        refuse_non_regular(meta)?;
        check_writable(&target)?;
    }
    let mut tmp = temp_in(&dir, &target)?;
    tmp.as_file_mut().write_all(contents)?;
    match &existing {
        Some(meta) => {
            copy_owner(tmp.as_file(), meta)?;
            set_mode(tmp.as_file(), full_mode_of(meta))?;
        }
        None => set_mode(tmp.as_file(), NEW_FILE_MODE)?,
    }
    tmp.as_file().sync_all()?;
    tmp.persist(&target).map_err(|e| e.error)?;
    fsync_dir(&dir)
}

/// Creates `path` with `contents` only if nothing exists there (mode `mode`, default
/// [`NEW_FILE_MODE`]), atomically: the file appears complete or not at all.
///
/// # Errors
/// [`io::ErrorKind::AlreadyExists`] when the path exists; any other I/O failure (nothing is
/// left behind).
pub fn create_new(path: &Path, contents: &[u8], mode: Option<u32>) -> io::Result<()> {
    let dir = dir_of(path);
    let mut tmp = temp_in(&dir, path)?;
    tmp.as_file_mut().write_all(contents)?;
    set_mode(tmp.as_file(), mode.unwrap_or(NEW_FILE_MODE))?;
    tmp.as_file().sync_all()?;
    tmp.persist_noclobber(path).map_err(|e| e.error)?;
    fsync_dir(&dir)
}

/// Writes a byte-exact backup of `source` (whose bytes the caller already holds in
/// `original`) at `backup`, with the source's permission bits (`mode & 0o777`, or 0600 when
/// that is 0; setuid/setgid/sticky are not copied) and, when the process may set them, its
/// owner and group. Never overwrites an existing file.
///
/// # Errors
/// Any I/O failure, or [`io::ErrorKind::AlreadyExists`].
pub fn backup_copy(source: &Path, backup: &Path, original: &[u8]) -> io::Result<()> {
    let meta = match fs::metadata(source) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let mode = match meta.as_ref().map(mode_of) {
        Some(0) | None => NEW_FILE_MODE,
        Some(m) => m,
    };
    let dir = dir_of(backup);
    let mut tmp = temp_in(&dir, backup)?;
    tmp.as_file_mut().write_all(original)?;
    if let Some(meta) = &meta {
        copy_owner(tmp.as_file(), meta)?;
    }
    set_mode(tmp.as_file(), mode)?;
    tmp.as_file().sync_all()?;
    tmp.persist_noclobber(backup).map_err(|e| e.error)?;
    fsync_dir(&dir)
}

#[cfg(unix)]
fn open_append(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .mode(NEW_FILE_MODE)
        .open(path)
}

#[cfg(not(unix))]
fn open_append(path: &Path) -> io::Result<File> {
    fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
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
/// (openclaw-jsonl.md §1.1).
///
/// # Errors
/// Any I/O failure.
pub fn append_line(path: &Path, line: &[u8], durability: Durability) -> io::Result<AppendOutcome> {
    match fs::metadata(path) {
        Ok(meta) => refuse_non_regular(&meta)?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut file = open_append(path)?;
    let len = file.metadata()?.len();
    let separator = matches!(last_byte(&file, len)?, Some(b) if b != b'\n');
    let mut out = Vec::with_capacity(line.len() + 2);
    if separator {
        out.push(b'\n');
    }
    out.extend_from_slice(line);
    out.push(b'\n');
    write_once(&mut file, &out)?;
    if durability == Durability::SyncData {
        file.sync_data()?;
    }
    Ok(AppendOutcome {
        separator,
        bytes: out.len(),
        previous_len: len,
    })
}

/// One `write` call; a short write (rare, e.g. a full disk) is completed with further calls.
fn write_once(file: &mut File, bytes: &[u8]) -> io::Result<()> {
    let n = file.write(bytes)?;
    if n < bytes.len() {
        file.write_all(&bytes[n..])?;
    }
    Ok(())
}

/// Appends raw bytes exactly as given (no separator, no newline), creating the file (0600) when
/// missing: a test or tool simulating another writer or a crash.
///
/// # Errors
/// Any I/O failure.
pub fn append_raw(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = open_append(path)?;
    write_once(&mut file, bytes)
}

/// Replaces (or creates) a file with raw bytes, atomically (see [`atomic_rewrite`]): for tests
/// and tools that plant files.
///
/// # Errors
/// Any I/O failure.
pub fn write_raw(path: &Path, bytes: &[u8]) -> io::Result<()> {
    atomic_rewrite(path, bytes)
}

/// Opens a session file for reading, refusing anything that is not a regular file (after
/// following symlinks): a FIFO would block the open, and a device such as `/dev/zero` would be
/// read without end.
///
/// # Errors
/// [`io::ErrorKind::InvalidInput`] naming the file type for non-regular files; any other I/O
/// failure ([`io::ErrorKind::NotFound`] for a missing file).
pub fn open_regular(path: &Path) -> io::Result<File> {
    refuse_non_regular(&fs::metadata(path)?)?;
    let f = File::open(path)?;
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
