//! The JSONL file store ([`FileStorage`]) and the directory scans it lists sessions with.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use crate::cache::{FileCaches, RepairCache, WarmCache};
use crate::error::ListError;
use crate::io::{
    AppendToExistingError, Durability, Fs, KnownFile, RealFs, VerifiedAppend, read_exact_at,
};
use crate::lock::{LockError, LockOptions};
use crate::snapshot::SessionFileSnapshot;

use super::{Replace, Storage};

/// The JSONL file store: each session is a file, every write goes through [`crate::io`]
/// (atomic rewrites, single-`write` `O_APPEND` appends, 0600 files, no write through a symlink
/// out of the file's own directory: [`crate::identity::OutsideStore`]), snapshots are `stat`s,
/// and the write lock is OpenClaw's lock file ([`crate::lock`]), one per file whatever name
/// reaches it ([`crate::identity::FileIdentity`]). The default storage of every
/// [`crate::SessionManager`] ([`FileStorage::shared`]).
///
/// A file store owns the caches it keeps of the files it reads ([`FileCaches`]: the warm cache
/// of parsed sessions and the incremental repair cache). The process-wide instance
/// [`FileStorage::shared`] holds the ones every default manager, the repair
/// ([`crate::repair_session_file_with`]) and the read-only opens use; [`FileStorage::new`]
/// makes a store with caches of its own, and [`FileStorage::with_fs`] one whose writes go
/// through another [`Fs`] (a test's fault injection, feature `test-util`) sharing the
/// process-wide caches (it writes the same files). Clones share their caches.
#[derive(Clone, Debug)]
pub struct FileStorage {
    /// The system calls the writes make (`None`: [`RealFs`]).
    fs: Option<Arc<dyn Fs>>,
    /// The caches of this store (shared by its clones).
    caches: Arc<FileCaches>,
}

static SHARED_FILES: LazyLock<Arc<FileStorage>> = LazyLock::new(|| Arc::new(FileStorage::new()));

impl Default for FileStorage {
    fn default() -> Self {
        Self::new()
    }
}

impl FileStorage {
    /// The file store on the real file system, with its own empty caches (default limits).
    pub fn new() -> Self {
        FileStorage {
            fs: None,
            caches: Arc::default(),
        }
    }

    /// The file store making its writes (opens for writing, writes, syncs, renames, links,
    /// removals) through `fs`, with the functions of [`crate::io`] on it ([`crate::io::on`]); reads, `stat`s and
    /// the write lock stay on the real file system, and the caches are the process-wide
    /// store's ([`FileStorage::shared`]). For fault injection (docs/RELIABILITY.md): a manager
    /// on `Arc::new(FileStorage::with_fs(fault_fs))` meets the failures `fault_fs` plans.
    pub fn with_fs(fs: Arc<dyn Fs>) -> Self {
        FileStorage {
            fs: Some(fs),
            caches: Arc::clone(&Self::process_wide().caches),
        }
    }

    /// The process-wide instance as a shared [`Storage`] (no allocation per manager).
    pub fn shared() -> Arc<dyn Storage> {
        let files: Arc<FileStorage> = Arc::clone(&SHARED_FILES);
        files
    }

    /// The process-wide instance itself ([`FileStorage::shared`]): its caches
    /// ([`FileStorage::warm_cache`], [`FileStorage::repair_cache`]) are the ones the default
    /// managers and the repair ([`crate::repair_session_file_with`]) use.
    pub fn process_wide() -> &'static FileStorage {
        &SHARED_FILES
    }

    /// The warm cache of parsed session files this store keeps (bounds, statistics,
    /// invalidation).
    pub fn warm_cache(&self) -> &WarmCache {
        &self.caches.warm
    }

    /// The incremental repair cache this store keeps.
    pub fn repair_cache(&self) -> &RepairCache {
        &self.caches.repair
    }

    /// Both caches.
    pub(crate) fn caches_ref(&self) -> &FileCaches {
        &self.caches
    }

    fn fs(&self) -> &dyn Fs {
        self.fs.as_deref().unwrap_or(&RealFs)
    }
}

impl Storage for FileStorage {
    fn name(&self) -> &str {
        "file"
    }

    /// The caches this store owns.
    fn caches(&self) -> Option<&FileCaches> {
        Some(&self.caches)
    }

    /// Local files.
    fn local_files(&self) -> bool {
        true
    }

    /// Not fenced: the session write lock keeps other writers out.
    fn replace_is_fenced(&self) -> bool {
        false
    }

    fn stat(&self, path: &Path) -> io::Result<Option<SessionFileSnapshot>> {
        SessionFileSnapshot::stat(path)
    }

    /// [`crate::io::read_file`]'s bytes, a large file read in two halves on two threads.
    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        crate::bulk::read_file(path)
    }

    fn read_from(&self, path: &Path, offset: u64) -> io::Result<Vec<u8>> {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = crate::io::open_regular(path)?;
        f.seek(SeekFrom::Start(offset))?;
        let mut out = Vec::new();
        f.read_to_end(&mut out)?;
        Ok(out)
    }

    /// One [`crate::io::open_regular`], then one positioned read per range.
    fn read_ranges(&self, path: &Path, ranges: &mut [(u64, &mut [u8])]) -> io::Result<()> {
        let file = crate::io::open_regular(path)?;
        for (offset, buf) in ranges.iter_mut() {
            read_exact_at(&file, buf, *offset)?;
        }
        Ok(())
    }

    /// [`crate::io::read_first_line`]: 4 KiB reads, at most 64 KiB.
    fn read_head(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        crate::io::read_first_line(path)
    }

    /// [`crate::io::create_new`] (mode 0600).
    fn create_new(&self, path: &Path, contents: &[u8]) -> io::Result<()> {
        crate::io::on(self.fs()).create_new(path, contents, None)
    }

    /// [`crate::io::atomic_rewrite`].
    fn replace(&self, path: &Path, contents: &[u8]) -> io::Result<()> {
        crate::io::on(self.fs()).atomic_rewrite(path, contents)
    }

    /// [`crate::io::atomic_rewrite`], unfenced: never [`Replace::Refused`]. The file store
    /// relies on the session write lock to keep other writers out between the caller's check
    /// and the rename (see [`Storage::replace_if`]); the manager does not call this on files.
    fn replace_if(
        &self,
        path: &Path,
        contents: &[u8],
        _expected: Option<&SessionFileSnapshot>,
    ) -> io::Result<Replace> {
        self.replace(path, contents)?;
        Ok(Replace::Done)
    }

    /// [`crate::io::Io::append_to_existing`].
    fn append_line(
        &self,
        path: &Path,
        line: &[u8],
        durability: Durability,
        expected: Option<KnownFile<'_>>,
    ) -> Result<VerifiedAppend, AppendToExistingError> {
        crate::io::on(self.fs()).append_to_existing(path, line, durability, expected)
    }

    /// [`crate::io::append_raw`].
    fn append_raw(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        crate::io::on(self.fs()).append_raw(path, bytes)
    }

    /// [`crate::io::backup_copy`].
    fn backup_copy(&self, source: &Path, backup: &Path, original: &[u8]) -> io::Result<()> {
        crate::io::on(self.fs()).backup_copy(source, backup, original)
    }

    /// [`crate::io::Io::sync_existing`].
    fn sync(&self, path: &Path, durability: Durability) -> io::Result<()> {
        crate::io::on(self.fs()).sync_existing(path, durability)
    }

    /// [`crate::io::ensure_dir`].
    fn ensure_dir(&self, dir: &Path) -> io::Result<()> {
        crate::io::ensure_dir(dir)
    }

    /// The `*.jsonl` files directly in `dir` (`SessionManager.list`'s candidates).
    fn list_sessions(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        jsonl_files(dir).map_err(|ListError::ReadDir { source, .. }| source)
    }

    /// The directories directly under `root` (symlinks to directories left out, as
    /// `listAll` does).
    fn list_dirs(&self, root: &Path) -> io::Result<Vec<PathBuf>> {
        let rd = match std::fs::read_dir(root) {
            Ok(rd) => rd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        Ok(sorted_sub_dirs(rd))
    }

    /// [`crate::lock::with_session_write_lock`]: the lock file `<file>.lock`, shared with
    /// OpenClaw and other processes.
    fn with_write_lock(
        &self,
        path: &Path,
        options: &LockOptions,
        run: &mut dyn FnMut(),
    ) -> Result<(), LockError> {
        crate::lock::with_session_write_lock(path, options, |_| run())
    }
}

/// The `*.jsonl` files directly in `dir`, sorted by name, as `dir` lexically normalised joined
/// with each name (`SessionManager.list`'s candidates); empty when `dir` does not exist.
///
/// # Errors
/// [`ListError::ReadDir`] when `dir` exists but cannot be read.
pub(crate) fn jsonl_files(dir: &Path) -> Result<Vec<PathBuf>, ListError> {
    jsonl_entries(dir).map(|(files, _)| files)
}

/// [`jsonl_files`], and for each whether its directory entry is a symlink (the entry's type,
/// no extra system call where the file system reports it).
pub(crate) fn jsonl_entries(dir: &Path) -> Result<(Vec<PathBuf>, Vec<bool>), ListError> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), Vec::new())),
        Err(source) => {
            return Err(ListError::ReadDir {
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    let mut names: Vec<(std::ffi::OsString, bool)> = rd
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".jsonl"))
        .map(|e| {
            let link = e.file_type().is_ok_and(|t| t.is_symlink());
            (e.file_name(), link)
        })
        .collect();
    // The paths share their directory, so sorting the names sorts the paths (names are
    // distinct: an unstable sort is enough).
    names.sort_unstable();
    // `path.join(dir, f)`: normalised lexically, as node's `join` does. A file name is one
    // plain component, so normalising the directory once gives the same paths.
    let base = crate::paths::normalize(dir);
    let here = base == Path::new(".");
    Ok(names
        .into_iter()
        .map(|(n, link)| (if here { PathBuf::from(n) } else { base.join(n) }, link))
        .unzip())
}

/// The directories among the entries of `rd` (symlinks not followed), sorted by path.
pub(crate) fn sorted_sub_dirs(rd: std::fs::ReadDir) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    dirs
}
