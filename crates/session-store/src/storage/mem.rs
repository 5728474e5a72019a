//! The in-memory store ([`MemStorage`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::thread::ThreadId;
use std::time::{Instant, SystemTime};

use parking_lot::{Condvar, Mutex};

use crate::io::{AppendToExistingError, Durability, KnownFile, VerifiedAppend};
use crate::lock::{LockError, LockOptions};
use crate::snapshot::SessionFileSnapshot;

use super::{Replace, SnapshotRead, Storage, copy_ranges, first_line_of};

/// The `dev` of every [`MemStorage`] snapshot (`"memstore"` in ASCII).
pub const MEM_STORAGE_DEV: u64 = u64::from_be_bytes(*b"memstore");

/// Sessions held in memory: a map from path (lexically normalised) to bytes, plus the set of
/// directories (namespaces) that exist. Nothing is persisted; durability modes are accepted
/// and ignored. For tests and for embedding the store where no files should be written; also
/// the model a non-file backend can follow.
///
/// Semantics, as close to [`FileStorage`](super::FileStorage) as memory allows:
/// - directories exist once [`Storage::ensure_dir`] created them (with their parents) or a
///   session was stored in them; a session can only be stored in an existing directory
///   (otherwise [`io::ErrorKind::NotFound`], as for a file in a missing directory); a
///   directory path cannot hold a session ([`io::ErrorKind::InvalidInput`], "not a regular
///   file (a directory)");
/// - snapshots: `dev` = [`MEM_STORAGE_DEV`], `ino` = the session's generation (a number
///   unique within this storage, new on every [`Storage::replace`], create or
///   delete-and-recreate, kept by appends), `size` = the byte length, `mtime_ns` = `ctime_ns`
///   = the time of the last change in nanoseconds since the epoch, made strictly increasing
///   across the storage (so every change gives a new snapshot), `birth_ns` = `None`;
/// - appends are atomic with their fence check ([`Storage::append_line`]), `before` and
///   `after` are exact; [`Storage::read_snapshot`] and [`Storage::replace_if`] check and
///   read or write under one hold of the mutex;
/// - the write lock is an in-process, per-path, re-entrant lock (per thread) with the
///   timeout of [`LockOptions::timeout`] (`stale`, `max_hold` and `backoff` do not apply); a
///   timeout is [`LockError::Timeout`] naming `<path>.lock`.
pub struct MemStorage {
    state: Mutex<MemState>,
    locks: Mutex<HashMap<PathBuf, Holder>>,
    released: Condvar,
}

#[derive(Default)]
struct MemState {
    files: BTreeMap<PathBuf, MemFile>,
    dirs: BTreeSet<PathBuf>,
    /// The last change stamp handed out (ns since the epoch, strictly increasing).
    last_stamp: i128,
    /// The last generation handed out.
    generations: u64,
}

struct MemFile {
    bytes: Vec<u8>,
    generation: u64,
    changed_ns: i128,
}

/// Who holds a lock of a [`MemStorage`], and how many times (re-entry).
struct Holder {
    thread: ThreadId,
    depth: usize,
}

impl Default for MemStorage {
    fn default() -> Self {
        MemStorage {
            state: Mutex::new(MemState::default()),
            locks: Mutex::new(HashMap::new()),
            released: Condvar::new(),
        }
    }
}

impl fmt::Debug for MemStorage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.state.lock();
        f.debug_struct("MemStorage")
            .field("sessions", &st.files.len())
            .field(
                "bytes",
                &st.files.values().map(|v| v.bytes.len()).sum::<usize>(),
            )
            .field("dirs", &st.dirs.len())
            .finish()
    }
}

impl MemStorage {
    /// An empty store (no directories, no sessions).
    pub fn new() -> Self {
        Self::default()
    }

    /// Every stored session's path, sorted.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.state.lock().files.keys().cloned().collect()
    }

    /// Deletes the session at `path` (tests: "the file was deleted"). Returns whether one was
    /// there.
    pub fn remove(&self, path: &Path) -> bool {
        self.state.lock().files.remove(&key(path)).is_some()
    }
}

fn key(path: &Path) -> PathBuf {
    crate::paths::normalize(path)
}

/// The directory of a stored key (`.` for a bare relative name).
fn dir_of_key(k: &Path) -> &Path {
    match k.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

fn directory_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "not a regular file (a directory)",
    )
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("no session stored at {}", path.display()),
    )
}

fn now_ns() -> i128 {
    match SystemTime::now().duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    }
}

impl MemState {
    fn stamp(&mut self) -> i128 {
        self.last_stamp = now_ns().max(self.last_stamp + 1);
        self.last_stamp
    }

    fn generation(&mut self) -> u64 {
        self.generations += 1;
        self.generations
    }

    fn snapshot(file: &MemFile) -> SessionFileSnapshot {
        SessionFileSnapshot {
            dev: MEM_STORAGE_DEV,
            ino: file.generation,
            size: file.bytes.len() as u64,
            mtime_ns: file.changed_ns,
            ctime_ns: file.changed_ns,
            birth_ns: None,
        }
    }

    /// The stored session at `k`; `NotFound`, or `InvalidInput` for a directory.
    fn file(&self, k: &Path) -> io::Result<&MemFile> {
        match self.files.get(k) {
            Some(f) => Ok(f),
            None if self.dirs.contains(k) => Err(directory_error()),
            None => Err(not_found(k)),
        }
    }

    /// Checks that a session may be stored at `k`: not a directory, in an existing one.
    fn writable(&self, k: &Path) -> io::Result<()> {
        if self.dirs.contains(k) {
            return Err(directory_error());
        }
        match k.parent() {
            Some(p) if !p.as_os_str().is_empty() && !self.dirs.contains(p) => Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("directory {} does not exist", p.display()),
            )),
            _ => Ok(()),
        }
    }

    /// Stores `bytes` at `k` as a new session (a new generation).
    fn put_new(&mut self, k: PathBuf, bytes: Vec<u8>) {
        let generation = self.generation();
        let changed_ns = self.stamp();
        self.files.insert(
            k,
            MemFile {
                bytes,
                generation,
                changed_ns,
            },
        );
    }
}

impl Storage for MemStorage {
    fn name(&self) -> &str {
        "memory"
    }

    fn stat(&self, path: &Path) -> io::Result<Option<SessionFileSnapshot>> {
        let k = key(path);
        let st = self.state.lock();
        match st.file(&k) {
            Ok(f) => Ok(Some(MemState::snapshot(f))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        let k = key(path);
        Ok(self.state.lock().file(&k)?.bytes.clone())
    }

    /// The bytes and snapshot under the mutex: never [`SnapshotRead::Changed`].
    fn read_snapshot(&self, path: &Path) -> io::Result<SnapshotRead> {
        let k = key(path);
        let st = self.state.lock();
        match st.file(&k) {
            Ok(f) => Ok(SnapshotRead::Read {
                bytes: f.bytes.clone(),
                snapshot: MemState::snapshot(f),
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(SnapshotRead::Missing),
            Err(e) => Err(e),
        }
    }

    fn read_from(&self, path: &Path, offset: u64) -> io::Result<Vec<u8>> {
        let k = key(path);
        let st = self.state.lock();
        let bytes = &st.file(&k)?.bytes;
        let from = usize::try_from(offset).map_or(bytes.len(), |o| o.min(bytes.len()));
        Ok(bytes[from..].to_vec())
    }

    fn read_ranges(&self, path: &Path, ranges: &mut [(u64, &mut [u8])]) -> io::Result<()> {
        let k = key(path);
        let st = self.state.lock();
        copy_ranges(&st.file(&k)?.bytes, ranges)
    }

    fn read_head(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        let k = key(path);
        Ok(first_line_of(&self.state.lock().file(&k)?.bytes))
    }

    fn create_new(&self, path: &Path, contents: &[u8]) -> io::Result<()> {
        let k = key(path);
        let mut st = self.state.lock();
        if st.files.contains_key(&k) || st.dirs.contains(&k) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} already exists", k.display()),
            ));
        }
        st.writable(&k)?;
        st.put_new(k, contents.to_vec());
        Ok(())
    }

    fn replace(&self, path: &Path, contents: &[u8]) -> io::Result<()> {
        let k = key(path);
        let mut st = self.state.lock();
        st.writable(&k)?;
        st.put_new(k, contents.to_vec());
        Ok(())
    }

    /// Checked and replaced under the mutex.
    fn replace_if(
        &self,
        path: &Path,
        contents: &[u8],
        expected: Option<&SessionFileSnapshot>,
    ) -> io::Result<Replace> {
        let k = key(path);
        let mut st = self.state.lock();
        let now = match st.file(&k) {
            Ok(f) => Some(MemState::snapshot(f)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        if now.as_ref() != expected {
            return Ok(Replace::Refused);
        }
        st.writable(&k)?;
        st.put_new(k, contents.to_vec());
        Ok(Replace::Done)
    }

    fn append_line(
        &self,
        path: &Path,
        line: &[u8],
        _durability: Durability,
        expected: Option<KnownFile<'_>>,
    ) -> Result<VerifiedAppend, AppendToExistingError> {
        let k = key(path);
        let mut st = self.state.lock();
        let file = match st.file(&k) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(AppendToExistingError::Deleted);
            }
            Err(e) => return Err(e.into()),
        };
        let before = MemState::snapshot(file);
        if let Some(known) = expected {
            if !before.same_file(&known.snapshot) {
                return Err(AppendToExistingError::Replaced);
            }
            if before != known.snapshot
                && !known.first_line.is_empty()
                && !file.bytes.starts_with(known.first_line)
            {
                return Err(AppendToExistingError::Replaced);
            }
        }
        let separator = file.bytes.last().is_some_and(|&b| b != b'\n');
        let mut written = Vec::with_capacity(line.len() + 2);
        if separator {
            written.push(b'\n');
        }
        written.extend_from_slice(line);
        written.push(b'\n');
        let changed_ns = st.stamp();
        let Some(file) = st.files.get_mut(&k) else {
            return Err(AppendToExistingError::ReplacedDuringWrite);
        };
        file.bytes.extend_from_slice(&written);
        file.changed_ns = changed_ns;
        let after = MemState::snapshot(file);
        Ok(VerifiedAppend {
            separator,
            written,
            before,
            after,
        })
    }

    fn append_raw(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let k = key(path);
        let mut st = self.state.lock();
        st.writable(&k)?;
        let changed_ns = st.stamp();
        match st.files.get_mut(&k) {
            Some(f) => {
                f.bytes.extend_from_slice(bytes);
                f.changed_ns = changed_ns;
            }
            None => st.put_new(k, bytes.to_vec()),
        }
        Ok(())
    }

    fn backup_copy(&self, _source: &Path, backup: &Path, original: &[u8]) -> io::Result<()> {
        self.create_new(backup, original)
    }

    fn sync(&self, path: &Path, durability: Durability) -> io::Result<()> {
        if durability == Durability::Buffer {
            return Ok(());
        }
        let k = key(path);
        self.state.lock().file(&k).map(|_| ())
    }

    fn ensure_dir(&self, dir: &Path) -> io::Result<()> {
        if dir.as_os_str().is_empty() {
            return Ok(());
        }
        let k = key(dir);
        let mut st = self.state.lock();
        if st.files.contains_key(&k) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} is a session, not a directory", k.display()),
            ));
        }
        for a in k.ancestors().filter(|a| !a.as_os_str().is_empty()) {
            if !st.dirs.insert(a.to_path_buf()) {
                break;
            }
        }
        Ok(())
    }

    fn list_sessions(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        let k = key(dir);
        let st = self.state.lock();
        // Keys are sorted and share the directory, so they come out sorted by name.
        Ok(st
            .files
            .keys()
            .filter(|p| dir_of_key(p) == k)
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().ends_with(".jsonl"))
            })
            .cloned()
            .collect())
    }

    fn list_dirs(&self, root: &Path) -> io::Result<Vec<PathBuf>> {
        let k = key(root);
        let st = self.state.lock();
        Ok(st
            .dirs
            .iter()
            .filter(|d| d.parent().is_some() && dir_of_key(d) == k)
            .cloned()
            .collect())
    }

    fn with_write_lock(
        &self,
        path: &Path,
        options: &LockOptions,
        run: &mut dyn FnMut(),
    ) -> Result<(), LockError> {
        let k = key(path);
        let me = std::thread::current().id();
        let deadline = options.timeout.map(|t| Instant::now() + t);
        {
            let mut locks = self.locks.lock();
            loop {
                match locks.get_mut(&k) {
                    None => {
                        locks.insert(
                            k.clone(),
                            Holder {
                                thread: me,
                                depth: 1,
                            },
                        );
                        break;
                    }
                    Some(h) if h.thread == me => {
                        h.depth += 1;
                        break;
                    }
                    Some(_) => match deadline {
                        Some(d) if Instant::now() >= d => {
                            let pid = u64::from(std::process::id());
                            return Err(LockError::Timeout {
                                timeout_ms: options.timeout.map_or(u64::MAX, |t| {
                                    u64::try_from(t.as_millis()).unwrap_or(u64::MAX)
                                }),
                                owner: format!("pid={pid} alive=true"),
                                owner_pid: Some(pid),
                                owner_alive: true,
                                lock_path: PathBuf::from(format!("{}.lock", k.display())),
                            });
                        }
                        Some(d) => {
                            self.released.wait_until(&mut locks, d);
                        }
                        None => self.released.wait(&mut locks),
                    },
                }
            }
        }
        let _release = MemRelease {
            storage: self,
            key: k,
        };
        run();
        Ok(())
    }
}

/// Releases one level of a [`MemStorage`] lock when dropped (also when the locked write
/// panics).
struct MemRelease<'a> {
    storage: &'a MemStorage,
    key: PathBuf,
}

impl Drop for MemRelease<'_> {
    fn drop(&mut self) {
        let mut locks = self.storage.locks.lock();
        let last = match locks.get_mut(&self.key) {
            Some(h) => {
                h.depth -= 1;
                h.depth == 0
            }
            None => false,
        };
        if last {
            locks.remove(&self.key);
            self.storage.released.notify_all();
        }
    }
}
