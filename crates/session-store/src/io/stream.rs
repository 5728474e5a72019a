//! Streaming whole-file writes: [`AtomicWriter`], a new file (or the replacement of a regular
//! file) written chunk by chunk into a hidden temporary file next to it and put into place
//! only on [`AtomicWriter::commit`], with the guarantees of [`Io::atomic_rewrite`] and
//! [`Io::create_new`] (see the module documentation of [`crate::io`]) but without holding the
//! bytes in memory: a writer of a 500 MB export needs only its own buffer.
//!
//! Every system call goes through the handle's [`Fs`], so the fault injection of the test
//! tools reaches each write, sync and rename.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use super::{
    Fs, Io, NEW_FILE_MODE, REAL, dir_of, persist_replacing, set_mode, sync_dir_or_remove, temp_in,
    write_all_in,
};

/// What [`AtomicWriter::commit`] does with the temporary file.
#[derive(Debug)]
enum Commit {
    /// Rename it over the target (a regular file whose metadata is kept, or nothing).
    Replace {
        /// The `lstat` of the file being replaced, when there is one.
        existing: Option<fs::Metadata>,
    },
    /// Move it to the target only if nothing is there, with these permission bits.
    CreateNew {
        /// The new file's mode bits.
        mode: u32,
    },
}

/// A file being written in chunks: the bytes go to a hidden temporary file
/// (`.<name>.<random>.tmp`, mode 0600) in the target's directory; [`AtomicWriter::commit`]
/// gives it its final mode (and, for a replacement, the replaced file's owner, group and mode
/// bits), `fsync`s it, renames it into place and `fsync`s the directory. Dropping the writer
/// without committing (after an error, say) removes the temporary file: the target keeps what
/// it held before, and nothing is left behind.
///
/// Made by [`Io::atomic_writer`] (create or replace) and [`Io::create_new_writer`] (create
/// only). It implements [`Write`]; wrap it in a [`io::BufWriter`] for small writes.
#[derive(Debug)]
pub struct AtomicWriter<'a> {
    fs: &'a dyn Fs,
    tmp: NamedTempFile,
    /// Keeps the temporary file's path in [`PENDING`] while the writer lives.
    _pending: Pending,
    target: PathBuf,
    dir: PathBuf,
    commit: Commit,
    written: u64,
}

/// The temporary files of the [`AtomicWriter`]s alive in this process.
static PENDING: parking_lot::Mutex<Vec<PathBuf>> = parking_lot::Mutex::new(Vec::new());

/// A temporary file's entry in [`PENDING`], removed again on drop (after the writer's commit
/// renamed the file, or its drop removed it).
#[derive(Debug)]
struct Pending(PathBuf);

impl Pending {
    fn new(path: &Path) -> Self {
        PENDING.lock().push(path.to_path_buf());
        Pending(path.to_path_buf())
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        let mut pending = PENDING.lock();
        if let Some(i) = pending.iter().position(|p| *p == self.0) {
            pending.swap_remove(i);
        }
    }
}

/// Removes the temporary file of every [`AtomicWriter`] still alive in this process (their
/// targets keep what they held: nothing was renamed over them), for a process that is about to
/// die of a signal; returns how many were removed. The writers themselves are not told: this
/// is for the last moments of a process (see [`crate::lock::install_signal_cleanup`], which
/// calls it).
pub fn remove_pending_temp_files() -> usize {
    remove_pending(|_| true)
}

/// [`remove_pending_temp_files`] for the temporary files `pick` selects.
fn remove_pending(pick: impl Fn(&Path) -> bool) -> usize {
    let pending = PENDING.lock();
    pending
        .iter()
        .filter(|p| pick(p) && std::fs::remove_file(p).is_ok())
        .count()
}

/// [`Io::atomic_writer`] on the real file system.
///
/// # Errors
/// As [`Io::atomic_writer`].
pub fn atomic_writer(path: &Path) -> io::Result<AtomicWriter<'static>> {
    REAL.atomic_writer(path)
}

/// [`Io::create_new_writer`] on the real file system.
///
/// # Errors
/// As [`Io::create_new_writer`].
pub fn create_new_writer(path: &Path, mode: Option<u32>) -> io::Result<AtomicWriter<'static>> {
    REAL.create_new_writer(path, mode)
}

impl<'a> Io<'a> {
    /// A writer that creates `path` or atomically replaces the regular file there, as
    /// [`Io::atomic_rewrite`] does with bytes in memory: the name is resolved once (a symlink
    /// inside its own directory is followed, one out of it refused), an existing file must be
    /// a regular file this process may write, and the temporary file is created now, in the
    /// resolved target's directory.
    ///
    /// # Errors
    /// As [`Io::atomic_rewrite`] for the checks and the temporary file (nothing is created
    /// when they fail).
    pub fn atomic_writer(&self, path: &Path) -> io::Result<AtomicWriter<'a>> {
        let fs = self.fs;
        let (target, dir, existing) = super::replace_target(path)?;
        let tmp = temp_in(fs, &dir, &target)?;
        Ok(AtomicWriter {
            fs,
            _pending: Pending::new(tmp.path()),
            tmp,
            target,
            dir,
            commit: Commit::Replace { existing },
            written: 0,
        })
    }

    /// A writer that creates `path` only if nothing exists there (mode `mode`, default
    /// [`NEW_FILE_MODE`]), as [`Io::create_new`] does with bytes in memory: the file appears
    /// complete on [`AtomicWriter::commit`] or not at all.
    ///
    /// # Errors
    /// [`io::ErrorKind::AlreadyExists`] when something (a dangling symlink included) is at
    /// `path` now; the failure to create the temporary file. [`AtomicWriter::commit`] fails
    /// with [`io::ErrorKind::AlreadyExists`] too when something appeared there meanwhile.
    pub fn create_new_writer(
        &self,
        path: &Path,
        mode: Option<u32>,
    ) -> io::Result<AtomicWriter<'a>> {
        let fs = self.fs;
        if fs::symlink_metadata(path).is_ok() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} already exists", path.display()),
            ));
        }
        let dir = dir_of(path);
        let tmp = temp_in(fs, &dir, path)?;
        Ok(AtomicWriter {
            fs,
            _pending: Pending::new(tmp.path()),
            tmp,
            target: path.to_path_buf(),
            dir,
            commit: Commit::CreateNew {
                mode: mode.unwrap_or(NEW_FILE_MODE),
            },
            written: 0,
        })
    }
}

impl AtomicWriter<'_> {
    /// Appends all of `bytes` to the temporary file (a short write is completed with further
    /// calls).
    ///
    /// # Errors
    /// The write failure; the writer should then be dropped (which removes the temporary file).
    pub fn write_chunk(&mut self, bytes: &[u8]) -> io::Result<()> {
        let result = write_all_in(self.fs, self.tmp.as_file_mut(), bytes);
        match result {
            Ok(()) => {
                self.written += bytes.len() as u64;
                Ok(())
            }
            Err((e, done)) => {
                self.written += done as u64;
                Err(e)
            }
        }
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// The path the file will have (the resolved target of a replacement).
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Puts the file into place: its mode (the replaced file's owner, group and mode bits
    /// `& 0o7777`, or [`NEW_FILE_MODE`] / the create-new mode), `fsync`, the rename (over the
    /// target, or only where nothing is, for a create-new writer), and the directory `fsync`.
    /// Returns the number of bytes in the file.
    ///
    /// # Errors
    /// Any of those steps' failures; the target then holds what it held before (a file this
    /// call created is removed again, a replaced one put back where hard links allow), and the
    /// temporary file is gone.
    pub fn commit(self) -> io::Result<u64> {
        let AtomicWriter {
            fs,
            tmp,
            _pending,
            target,
            dir,
            commit,
            written,
        } = self;
        match commit {
            Commit::Replace { existing } => {
                match &existing {
                    Some(meta) => {
                        super::copy_owner(tmp.as_file(), meta)?;
                        set_mode(tmp.as_file(), super::full_mode_of(meta))?;
                    }
                    None => set_mode(tmp.as_file(), NEW_FILE_MODE)?,
                }
                fs.sync_all(tmp.as_file())?;
                persist_replacing(fs, tmp, &dir, &target, existing.as_ref())?;
            }
            Commit::CreateNew { mode } => {
                set_mode(tmp.as_file(), mode)?;
                fs.sync_all(tmp.as_file())?;
                let file = fs.persist_noclobber(tmp, &target)?;
                drop(file);
                sync_dir_or_remove(fs, &dir, &target)?;
            }
        }
        Ok(written)
    }
}

impl Write for AtomicWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.fs.write(self.tmp.as_file_mut(), buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.write_chunk(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.
mod tests {
    use super::*;
    use crate::io::fault::{AfterShort, Errno, Fault, FaultFs, Op};

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        fs::metadata(path).unwrap().permissions().mode() & 0o7777
    }

    use session_test_support::dir_names as names;

    #[test]
    fn pending_temp_files_are_removed_for_a_dying_process_and_targets_keep_their_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.json");
        fs::write(&old, b"OLD\n").unwrap();
        let mut replace = atomic_writer(&old).unwrap();
        replace.write_chunk(b"{\"new\":").unwrap();
        let new = dir.path().join("new.json");
        let mut create = create_new_writer(&new, None).unwrap();
        create.write_chunk(b"[").unwrap();
        assert_eq!(names(dir.path()).len(), 3);
        // Other tests' writers are alive on other threads: remove only this directory's.
        assert_eq!(remove_pending(|p| p.starts_with(dir.path())), 2);
        assert_eq!(names(dir.path()), ["old.json"]);
        assert_eq!(fs::read(&old).unwrap(), b"OLD\n");
        // The writers' own drop finds nothing left to remove, and forgets the paths.
        drop(replace);
        drop(create);
        assert_eq!(names(dir.path()), ["old.json"]);
        assert!(!PENDING.lock().iter().any(|p| p.starts_with(dir.path())));
    }

    #[test]
    fn chunks_become_one_new_file_with_mode_0600() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.html");
        let mut w = create_new_writer(&path, None).unwrap();
        w.write_chunk(b"<!DOCTYPE html>\n").unwrap();
        w.write_all(b"abc").unwrap();
        w.write_chunk(b"").unwrap();
        assert_eq!(w.written(), 19);
        // Nothing visible before the commit but the temporary file.
        assert!(!path.exists());
        let tmp = names(dir.path());
        assert_eq!(tmp.len(), 1);
        assert!(
            tmp[0].starts_with(".out.html.") && tmp[0].ends_with(".tmp"),
            "{tmp:?}"
        );
        assert_eq!(w.commit().unwrap(), 19);
        assert_eq!(fs::read(&path).unwrap(), b"<!DOCTYPE html>\nabc");
        assert_eq!(names(dir.path()), vec!["out.html".to_owned()]);
        #[cfg(unix)]
        assert_eq!(mode(&path), 0o600);
    }

    #[test]
    fn create_new_writer_refuses_an_existing_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        fs::write(&path, b"old").unwrap();
        let err = create_new_writer(&path, None).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        // Appearing between the start and the commit: refused, the newcomer kept.
        let late = dir.path().join("late.json");
        let mut w = create_new_writer(&late, Some(0o640)).unwrap();
        w.write_chunk(b"mine").unwrap();
        fs::write(&late, b"theirs").unwrap();
        let err = w.commit().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read(&late).unwrap(), b"theirs");
        assert_eq!(fs::read(&path).unwrap(), b"old");
        assert_eq!(
            names(dir.path()),
            vec!["late.json".to_owned(), "out.json".to_owned()]
        );
    }

    #[cfg(unix)]
    #[test]
    fn replacing_keeps_the_mode_bits_and_gives_a_new_inode() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.md");
        fs::write(&path, b"old bytes").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o2644)).unwrap();
        let link = dir.path().join("hard");
        fs::hard_link(&path, &link).unwrap();
        let ino = fs::metadata(&path).unwrap().ino();
        let mut w = atomic_writer(&path).unwrap();
        for chunk in [&b"new "[..], b"bytes", b"\n"] {
            w.write_chunk(chunk).unwrap();
        }
        assert_eq!(fs::read(&path).unwrap(), b"old bytes");
        assert_eq!(w.commit().unwrap(), 10);
        assert_eq!(fs::read(&path).unwrap(), b"new bytes\n");
        assert_eq!(mode(&path), 0o2644);
        assert_ne!(fs::metadata(&path).unwrap().ino(), ino);
        assert_eq!(fs::read(&link).unwrap(), b"old bytes");
        assert_eq!(
            names(dir.path()),
            vec!["hard".to_owned(), "out.md".to_owned()]
        );
    }

    #[test]
    fn replacing_a_missing_path_creates_it_with_mode_0600() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.jsonl");
        let mut w = atomic_writer(&path).unwrap();
        w.write_chunk(b"{}\n").unwrap();
        w.commit().unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"{}\n");
        #[cfg(unix)]
        assert_eq!(mode(&path), 0o600);
    }

    #[test]
    fn dropping_without_commit_leaves_the_target_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.md");
        fs::write(&path, b"keep me").unwrap();
        let mut w = atomic_writer(&path).unwrap();
        w.write_chunk(b"half of it").unwrap();
        drop(w);
        assert_eq!(fs::read(&path).unwrap(), b"keep me");
        assert_eq!(names(dir.path()), vec!["out.md".to_owned()]);
        let fresh = dir.path().join("fresh.md");
        let mut w = create_new_writer(&fresh, None).unwrap();
        w.write_chunk(b"x").unwrap();
        drop(w);
        assert!(!fresh.exists());
        assert_eq!(names(dir.path()), vec!["out.md".to_owned()]);
    }

    #[test]
    fn a_failed_write_or_sync_or_rename_leaves_nothing_behind() {
        let faults = [
            (Op::Write, 1, Errno::NoSpace),
            (Op::Fsync, 0, Errno::Io),
            (Op::Rename, 0, Errno::Io),
            (Op::Fsync, 1, Errno::Io),
        ];
        for (op, nth, errno) in faults {
            for replace in [false, true] {
                let dir = tempfile::tempdir().unwrap();
                let path = dir.path().join("out.json");
                if replace {
                    fs::write(&path, b"before").unwrap();
                }
                let fsys = FaultFs::with_fault(Fault::Fail { op, nth, errno });
                let io = crate::io::on(&fsys);
                let result = (|| {
                    let mut w = if replace {
                        io.atomic_writer(&path)?
                    } else {
                        io.create_new_writer(&path, None)?
                    };
                    w.write_chunk(b"first chunk,")?;
                    w.write_chunk(b"second chunk")?;
                    w.commit()
                })();
                let err = result.unwrap_err();
                let want = errno.to_error().raw_os_error();
                assert!(want.is_some());
                assert_eq!(err.raw_os_error(), want, "{op:?} {nth} {replace}");
                assert_eq!(fsys.injected().len(), 1, "{op:?} {nth} {replace}");
                if replace {
                    assert_eq!(fs::read(&path).unwrap(), b"before", "{op:?} {nth}");
                    assert_eq!(names(dir.path()), vec!["out.json".to_owned()], "{op:?}");
                } else {
                    assert!(!path.exists(), "{op:?} {nth}");
                    assert!(names(dir.path()).is_empty(), "{op:?} {nth}");
                }
            }
        }
    }

    #[test]
    fn a_short_write_is_completed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        let fsys = FaultFs::with_fault(Fault::ShortWrite {
            nth: 0,
            keep: 3,
            then: AfterShort::Continue,
        });
        let mut w = crate::io::on(&fsys).create_new_writer(&path, None).unwrap();
        w.write_chunk(b"0123456789").unwrap();
        assert_eq!(w.written(), 10);
        w.commit().unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"0123456789");
    }
}
