//! A test tool: [`FaultFs`], an [`Fs`] that makes the real calls ([`RealFs`]) except for one
//! planned fault — `ENOSPC` or `EIO` from the Nth write, fsync, rename, link, open or removal,
//! or a short write — and records what it injected (fault injection, docs/RELIABILITY.md; redb's
//! `FailingBackend`).
//!
//! Use it with the write functions of [`crate::io`] through [`crate::io::on`] (or a storage
//! built on them):
//!
//! ```
//! use session_store::test_util::fault::{Errno, Fault, FaultFs, Op};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("s.jsonl");
//! let fs = FaultFs::with_fault(Fault::Fail { op: Op::Fsync, nth: 0, errno: Errno::Io });
//! let err = session_store::io::on(&fs).atomic_rewrite(&path, b"{}\n").unwrap_err();
//! assert_eq!(err.raw_os_error(), Some(5)); // EIO
//! assert!(!path.exists()); // nothing was left behind
//! assert_eq!(fs.injected().len(), 1);
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! Faults are one-shot: once fired, the plan is spent and every later call is real (so the
//! clean-up a write path does after a failure runs for real).

use std::fmt;
use std::fs::File;
use std::io;
use std::path::Path;

use parking_lot::Mutex;
use tempfile::NamedTempFile;

use super::seam::{Fs, RealFs};

/// A kind of [`Fs`] call, as [`FaultFs`] counts them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    /// An open for writing: [`Fs::open_append`], [`Fs::create_new_file`], [`Fs::create_temp`].
    Open,
    /// [`Fs::write`].
    Write,
    /// [`Fs::set_len`].
    Truncate,
    /// [`Fs::sync_data`], [`Fs::sync_all`], [`Fs::sync_dir`].
    Fsync,
    /// [`Fs::persist`], [`Fs::persist_noclobber`], [`Fs::rename`].
    Rename,
    /// [`Fs::hard_link`].
    Link,
    /// [`Fs::remove_file`].
    Remove,
}

impl Op {
    /// Every kind, in declaration order.
    pub const ALL: [Op; 7] = [
        Op::Open,
        Op::Write,
        Op::Truncate,
        Op::Fsync,
        Op::Rename,
        Op::Link,
        Op::Remove,
    ];

    fn slot(self) -> usize {
        self as usize
    }
}

/// The error an injected failure returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Errno {
    /// `ENOSPC` (no space left on device; [`io::ErrorKind::StorageFull`]).
    NoSpace,
    /// `EIO` (input/output error).
    Io,
}

impl Errno {
    /// The error, as the operating system would return it.
    pub fn to_error(self) -> io::Error {
        #[cfg(unix)]
        {
            let errno = match self {
                Errno::NoSpace => rustix::io::Errno::NOSPC,
                Errno::Io => rustix::io::Errno::IO,
            };
            io::Error::from_raw_os_error(errno.raw_os_error())
        }
        #[cfg(not(unix))]
        {
            match self {
                Errno::NoSpace => io::Error::new(io::ErrorKind::StorageFull, "no space left"),
                Errno::Io => io::Error::other("input/output error"),
            }
        }
    }
}

/// What happens after a short write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AfterShort {
    /// The next [`Fs::write`] call fails with this error (the disk filled up mid-write).
    Fail(Errno),
    /// Later writes succeed (the caller must finish the write with further calls).
    Continue,
}

/// One planned fault. `nth` counts calls of that kind from 0, since the fault was armed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fault {
    /// The `nth` call of kind `op` fails with `errno` and does nothing.
    Fail {
        /// Which calls are counted.
        op: Op,
        /// Index of the failing call among them (0: the first).
        nth: usize,
        /// The error returned.
        errno: Errno,
    },
    /// The `nth` [`Fs::write`] writes only its first `keep` bytes (at most the request's length
    /// minus one; a request of 0 or 1 byte cannot be short and is written whole, nothing
    /// injected) and returns that count; then `then`.
    ShortWrite {
        /// Index of the short write among the writes (0: the first).
        nth: usize,
        /// Bytes actually written (capped as above).
        keep: usize,
        /// What the following write does.
        then: AfterShort,
    },
}

/// What [`FaultFs`] injected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Effect {
    /// The call failed with this error and did nothing.
    Failed(Errno),
    /// A write wrote `wrote` of the `asked` bytes and returned `Ok(wrote)`.
    Short {
        /// Bytes written.
        wrote: usize,
        /// Bytes asked for.
        asked: usize,
    },
}

/// One injected fault: which call (kind and index since arming) and what it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Injection {
    /// The kind of call.
    pub op: Op,
    /// Its index among the calls of that kind since the fault was armed.
    pub index: usize,
    /// What was injected.
    pub effect: Effect,
}

#[derive(Debug, Default)]
struct State {
    fault: Option<Fault>,
    /// After `AfterShort::Fail`: the next write fails with this.
    fail_next_write: Option<Errno>,
    calls: [usize; Op::ALL.len()],
    injected: Vec<Injection>,
}

/// An [`Fs`] for tests: the real file system ([`RealFs`]) with at most one planned [`Fault`]
/// armed at a time, and a count of every kind of call. Thread-safe; share it as
/// `Arc<FaultFs>`.
///
/// Typical use: run an operation once unarmed and read [`FaultFs::calls`] to learn how many
/// writes, fsyncs and renames it makes; then, for each index and each fault kind, set the
/// scene again, [`FaultFs::arm`] the fault and check what the operation left behind.
#[derive(Default)]
pub struct FaultFs {
    real: RealFs,
    state: Mutex<State>,
}

impl fmt::Debug for FaultFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.state.lock();
        f.debug_struct("FaultFs")
            .field("fault", &s.fault)
            .field("calls", &s.calls)
            .field("injected", &s.injected)
            .finish()
    }
}

impl FaultFs {
    /// No fault armed: every call is real (and counted).
    pub fn new() -> Self {
        Self::default()
    }

    /// `fault` armed from the start.
    pub fn with_fault(fault: Fault) -> Self {
        let fs = Self::new();
        fs.arm(Some(fault));
        fs
    }

    /// Arms `fault` (or none), restarting the call counts and the injection log.
    pub fn arm(&self, fault: Option<Fault>) {
        let mut s = self.state.lock();
        *s = State {
            fault,
            ..State::default()
        };
    }

    /// Drops the armed fault (if it has not fired), keeping counts and log.
    pub fn disarm(&self) {
        let mut s = self.state.lock();
        s.fault = None;
        s.fail_next_write = None;
    }

    /// Calls of kind `op` since the last [`FaultFs::arm`] (or creation).
    pub fn calls(&self, op: Op) -> usize {
        self.state.lock().calls[op.slot()]
    }

    /// What was injected since the last [`FaultFs::arm`], in order.
    pub fn injected(&self) -> Vec<Injection> {
        self.state.lock().injected.clone()
    }

    /// True when anything was injected since the last [`FaultFs::arm`].
    pub fn fired(&self) -> bool {
        !self.state.lock().injected.is_empty()
    }

    /// Counts a call of kind `op` and returns the error to inject, if this call is the one.
    fn enter(&self, op: Op) -> Option<io::Error> {
        let mut s = self.state.lock();
        let index = s.calls[op.slot()];
        s.calls[op.slot()] += 1;
        if op == Op::Write
            && let Some(errno) = s.fail_next_write.take()
        {
            s.injected.push(Injection {
                op,
                index,
                effect: Effect::Failed(errno),
            });
            return Some(errno.to_error());
        }
        match s.fault {
            Some(Fault::Fail {
                op: want,
                nth,
                errno,
            }) if want == op && nth == index => {
                s.fault = None;
                s.injected.push(Injection {
                    op,
                    index,
                    effect: Effect::Failed(errno),
                });
                Some(errno.to_error())
            }
            _ => None,
        }
    }

    /// For a write: `Some(n)` when this write must stop after `n` bytes.
    fn short_write(&self, asked: usize) -> Option<usize> {
        let mut s = self.state.lock();
        let index = s.calls[Op::Write.slot()] - 1;
        let Some(Fault::ShortWrite { nth, keep, then }) = s.fault else {
            return None;
        };
        if nth != index {
            return None;
        }
        s.fault = None;
        if asked <= 1 {
            return None;
        }
        let wrote = keep.min(asked - 1);
        s.injected.push(Injection {
            op: Op::Write,
            index,
            effect: Effect::Short { wrote, asked },
        });
        if let AfterShort::Fail(errno) = then {
            s.fail_next_write = Some(errno);
        }
        Some(wrote)
    }
}

impl Fs for FaultFs {
    fn open_append(&self, path: &Path, create: bool) -> io::Result<File> {
        match self.enter(Op::Open) {
            Some(e) => Err(e),
            None => self.real.open_append(path, create),
        }
    }

    fn create_new_file(&self, path: &Path, mode: u32) -> io::Result<File> {
        match self.enter(Op::Open) {
            Some(e) => Err(e),
            None => self.real.create_new_file(path, mode),
        }
    }

    fn create_temp(&self, dir: &Path, prefix: &str, suffix: &str) -> io::Result<NamedTempFile> {
        match self.enter(Op::Open) {
            Some(e) => Err(e),
            None => self.real.create_temp(dir, prefix, suffix),
        }
    }

    fn write(&self, file: &mut File, bytes: &[u8]) -> io::Result<usize> {
        if let Some(e) = self.enter(Op::Write) {
            return Err(e);
        }
        match self.short_write(bytes.len()) {
            // A real short write: the first `n` bytes really reach the file.
            Some(n) => self.real.write(file, &bytes[..n]),
            None => self.real.write(file, bytes),
        }
    }

    fn set_len(&self, file: &File, len: u64) -> io::Result<()> {
        match self.enter(Op::Truncate) {
            Some(e) => Err(e),
            None => self.real.set_len(file, len),
        }
    }

    fn sync_data(&self, file: &File) -> io::Result<()> {
        match self.enter(Op::Fsync) {
            Some(e) => Err(e),
            None => self.real.sync_data(file),
        }
    }

    fn sync_all(&self, file: &File) -> io::Result<()> {
        match self.enter(Op::Fsync) {
            Some(e) => Err(e),
            None => self.real.sync_all(file),
        }
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        match self.enter(Op::Fsync) {
            Some(e) => Err(e),
            None => self.real.sync_dir(dir),
        }
    }

    fn persist(&self, tmp: NamedTempFile, target: &Path) -> io::Result<File> {
        match self.enter(Op::Rename) {
            Some(e) => Err(e),
            None => self.real.persist(tmp, target),
        }
    }

    fn persist_noclobber(&self, tmp: NamedTempFile, target: &Path) -> io::Result<File> {
        match self.enter(Op::Rename) {
            Some(e) => Err(e),
            None => self.real.persist_noclobber(tmp, target),
        }
    }

    fn hard_link(&self, src: &Path, dst: &Path) -> io::Result<()> {
        match self.enter(Op::Link) {
            Some(e) => Err(e),
            None => self.real.hard_link(src, dst),
        }
    }

    fn rename(&self, src: &Path, dst: &Path) -> io::Result<()> {
        match self.enter(Op::Rename) {
            Some(e) => Err(e),
            None => self.real.rename(src, dst),
        }
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        match self.enter(Op::Remove) {
            Some(e) => Err(e),
            None => self.real.remove_file(path),
        }
    }
}
