//! The values the Redis store hands out and takes: versions and fences of a session, append
//! modes and results, listing entries, and the constants of the schema.

use super::*;

/// The `dev` of every [`SessionFileSnapshot`] of a Redis session: the bytes `redis` as a
/// big-endian number, so a Redis snapshot never equals a file's.
pub const REDIS_DEV: u64 = 0x0072_6564_6973;

/// Default key prefix.
pub const DEFAULT_PREFIX: &str = "openclaw:sessions";

/// The default command timeout: how long one operation (a command, a script call or a `MULTI`
/// block, with connecting first when no pooled connection is idle) may wait for the server
/// before it fails with a timeout error ([`RedisStorage::connect_with_timeout`] sets another).
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// The state of one session in Redis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RedisVersion {
    /// Changes on every create and replace (a random non-zero u64): the session's identity.
    pub generation: u64,
    /// Change stamp: microseconds since the epoch by the Redis server's clock when the session
    /// last changed, strictly increasing per session (every create, append and replace gives a
    /// larger one).
    pub version: u64,
    /// Byte length of the session's bytes.
    pub len: u64,
    /// The bytes do not end in `\n` (a torn last line).
    pub torn: bool,
}

impl RedisVersion {
    /// The snapshot a manager keeps for this state (as `storage.rs` documents for backends
    /// without files): `dev` [`REDIS_DEV`], `ino` the generation, `size` the byte length,
    /// `mtime_ns` and `ctime_ns` the change stamp in nanoseconds, no birth time.
    pub fn snapshot(&self) -> SessionFileSnapshot {
        let ns = i128::from(self.version) * 1000;
        SessionFileSnapshot {
            dev: REDIS_DEV,
            ino: self.generation,
            size: self.len,
            mtime_ns: ns,
            ctime_ns: ns,
            birth_ns: None,
        }
    }
}

/// What a fenced write expects the session to be: the same generation, and (when given) the
/// same version and byte length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fence {
    /// The generation the writer last saw.
    pub generation: u64,
    /// The version the writer last saw (`None`: any).
    pub version: Option<u64>,
    /// The byte length the writer last saw (`None`: any).
    pub len: Option<u64>,
}

impl Fence {
    /// Expects exactly `state` (generation, version and length).
    pub fn exact(state: &RedisVersion) -> Self {
        Fence {
            generation: state.generation,
            version: Some(state.version),
            len: Some(state.len),
        }
    }

    /// Expects only the generation: any append since is accepted.
    pub fn generation(generation: u64) -> Self {
        Fence {
            generation,
            version: None,
            len: None,
        }
    }

    /// The fence that matches a snapshot taken from this backend ([`RedisVersion::snapshot`]).
    pub fn from_snapshot(snapshot: &SessionFileSnapshot) -> Self {
        Fence {
            generation: snapshot.ino,
            version: u64::try_from(snapshot.mtime_ns / 1000).ok(),
            len: Some(snapshot.size),
        }
    }
}

impl std::fmt::Display for Fence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "generation {}", self.generation)?;
        if let Some(v) = self.version {
            write!(f, " version {v}")?;
        }
        if let Some(n) = self.len {
            write!(f, " length {n}")?;
        }
        Ok(())
    }
}

impl std::fmt::Display for RedisVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "generation {} version {} length {}",
            self.generation, self.version, self.len
        )
    }
}

/// How [`RedisStorage::append`] treats its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppendMode {
    /// One line without its `\n` (which is added), preceded by a `\n` separator when the session
    /// ends in a torn line: what `io::append_line` writes to a file.
    Line,
    /// The bytes exactly as given (they may hold several lines or part of one).
    Raw,
}

/// What a fenced append did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RedisAppend {
    /// A `\n` separator was written first ([`AppendMode::Line`] after a torn line).
    pub separator: bool,
    /// Bytes added (separator and terminating `\n` included).
    pub written: u64,
    /// The session just before the append, in the same atomic step (`None`: the append created
    /// it, [`RedisStorage::append_or_create`]).
    pub before: Option<RedisVersion>,
    /// The session after the append.
    pub after: RedisVersion,
}

/// What an append checks before writing (all in the script that writes).
#[derive(Clone, Copy, Debug)]
pub(super) enum AppendCheck<'a> {
    /// Refuse unless the session matches the fence exactly (`None`: any existing session).
    Exact(Option<Fence>),
    /// Refuse when the generation differs, or when version or length differ and the bytes no
    /// longer start with `first_line` (the [`crate::Storage::append_line`] contract).
    Head {
        /// The generation, version and length last seen.
        fence: Fence,
        /// The first bytes last seen (empty: no check).
        first_line: &'a [u8],
    },
    /// No check; a missing session is created.
    CreateMissing,
}

/// One session of a directory listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisSessionEntry {
    /// The session's path (`<dir>/<file name>`).
    pub path: PathBuf,
    /// Last create, append or replace, ms since the epoch (Redis server clock).
    pub last_activity_ms: i64,
}

/// The bytes of each range [`RedisStorage::load_ranges`] read.
pub type Ranges = Vec<Vec<u8>>;

/// What a replace expects to find.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Expect {
    /// Anything (created when missing).
    Any,
    /// Nothing at the path.
    Absent,
    /// The session of the fence.
    Fence(Fence),
}
