//! The one place where the workspace writes files (rust-style.md "Atomic rewrite"; openclaw-jsonl.md
//! §1.1, §1.6, §2.12).
//!
//! Invariants:
//! - a full rewrite never leaves a half-written file: the new bytes go to a temporary file in the
//!   same directory, are `sync_all`ed, renamed over the target, and the directory is fsynced; the
//!   permission bits of the file being replaced are kept (new files get 0600);
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
}

/// Replaces `path` with `contents` atomically: temp file in the same directory, write,
/// `sync_all`, rename over `path`, fsync the directory. The permission bits of the file being
/// replaced are kept; a new file gets [`NEW_FILE_MODE`]. A symlink is followed to its target.
///
/// # Errors
/// Any I/O failure; the original file is then untouched.
pub fn atomic_rewrite(path: &Path, contents: &[u8]) -> io::Result<()> {
    let target = write_target(path);
    let dir = dir_of(&target);
    let mode = existing_mode(&target)?.unwrap_or(NEW_FILE_MODE);
    let mut tmp = temp_in(&dir, &target)?;
    tmp.as_file_mut().write_all(contents)?;
    set_mode(tmp.as_file(), mode)?;
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
/// that is 0). Never overwrites an existing file.
///
/// # Errors
/// Any I/O failure, or [`io::ErrorKind::AlreadyExists`].
pub fn backup_copy(source: &Path, backup: &Path, original: &[u8]) -> io::Result<()> {
    let mode = match existing_mode(source)? {
        Some(0) | None => NEW_FILE_MODE,
        Some(m) => m,
    };
    create_new(backup, original, Some(mode))
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

/// Reads a whole file.
///
/// # Errors
/// Any I/O failure ([`io::ErrorKind::NotFound`] for a missing file).
pub fn read_file(path: &Path) -> io::Result<Vec<u8>> {
    let mut f = File::open(path)?;
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
/// Any I/O failure.
pub fn read_first_line(path: &Path) -> io::Result<Option<Vec<u8>>> {
    let mut f = File::open(path)?;
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
