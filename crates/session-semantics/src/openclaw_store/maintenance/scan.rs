//! The directory scan a maintenance plan is made from: the top-level regular files of a
//! sessions directory with their sizes and mtimes (R1.15: `readdir`, then only entries that
//! are regular files; sub-directories such as `archive/` and symlinks are not seen), the skill
//! prompt blobs' count, and for every row of the store what is at its transcript and sidecar
//! paths (R4.17: missing, or header-only).

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use super::super::SessionStore;
use super::plan::entry_artifact_paths;

/// One top-level regular file of a sessions directory.
#[derive(Clone, Debug, PartialEq)]
pub struct ScannedFile {
    /// Its base name.
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its mtime in epoch milliseconds, with the fraction (`stat.mtimeMs`).
    pub mtime_ms: f64,
}

/// What is at a row's transcript or sidecar path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathProbe {
    /// Nothing (or it cannot be read): `existsSync` is false.
    Missing,
    /// A regular file of at most 4096 bytes whose non-blank lines all parse as JSON and none is
    /// a message record (R4.17 (b): "header-only").
    NoMessages,
    /// Anything else that exists (a transcript with content, a larger file, …).
    Present,
}

/// A sessions directory as a plan sees it; made by [`DirScan::read`] (or by hand in tests).
#[derive(Clone, Debug, PartialEq)]
pub struct DirScan {
    /// The top-level regular files, sorted by name (the reference's `readdir` order is the
    /// file system's; sorting makes equal-mtime ties deterministic).
    pub files: Vec<ScannedFile>,
    /// How many skill prompt blob files `skills-prompts/sha256/<2 hex>/` holds (counted in
    /// `scannedFiles`; blobs are neither swept nor budgeted here).
    pub blob_files: usize,
    /// What is at each row's transcript, trajectory and pointer path (inside the directory).
    pub probes: HashMap<PathBuf, PathProbe>,
}

/// A file's mtime in epoch milliseconds with the sub-millisecond fraction (as `mtimeMs`), 0 when
/// the system gives none; the scan records it and applying compares with it.
pub(super) fn mtime_ms(meta: &std::fs::Metadata) -> f64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0.0, |d| {
            d.as_secs() as f64 * 1000.0 + f64::from(d.subsec_nanos()) / 1e6
        })
}

/// What is at `path` (following symlinks, as `existsSync` and `statSync` do).
pub(super) fn probe(path: &Path) -> PathProbe {
    if std::fs::metadata(path).is_err() {
        PathProbe::Missing
    } else if super::super::artifacts::transcript_has_no_messages(path) {
        PathProbe::NoMessages
    } else {
        PathProbe::Present
    }
}

fn is_blob_name(name: &str) -> bool {
    let hex = |s: &str| s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if let Some(hash) = name.strip_suffix(".txt") {
        return hash.len() == 64 && hex(hash);
    }
    // `<hash>.txt.<pid>.<uuid>.tmp`: a blob temp file.
    name.len() > 69 && hex(&name[..64]) && name[64..].starts_with(".txt.") && name.ends_with(".tmp")
}

fn count_blobs(sessions_dir: &Path) -> usize {
    let root = sessions_dir.join("skills-prompts").join("sha256");
    let Ok(prefixes) = std::fs::read_dir(&root) else {
        return 0;
    };
    let mut n = 0;
    for prefix in prefixes.flatten() {
        let name = prefix.file_name().to_string_lossy().into_owned();
        let two_hex =
            name.len() == 2 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        if !two_hex || !prefix.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let Ok(blobs) = std::fs::read_dir(prefix.path()) else {
            continue;
        };
        n += blobs
            .flatten()
            .filter(|b| b.file_type().is_ok_and(|t| t.is_file()))
            .filter(|b| is_blob_name(&b.file_name().to_string_lossy()))
            .count();
    }
    n
}

impl DirScan {
    /// Scans the store's directory ([`SessionStore::sessions_dir`]): its top-level regular
    /// files, its blob count, and a probe of every row's transcript, trajectory and pointer
    /// path. Read-only.
    ///
    /// # Errors
    /// When the directory exists but cannot be listed. A missing directory scans as empty.
    pub fn read(store: &SessionStore) -> io::Result<DirScan> {
        let dir = store.sessions_dir();
        let mut files = Vec::new();
        match std::fs::read_dir(dir) {
            Ok(entries) => {
                for e in entries {
                    let e = e?;
                    if !e.file_type().is_ok_and(|t| t.is_file()) {
                        continue;
                    }
                    let Ok(meta) = std::fs::metadata(e.path()) else {
                        continue;
                    };
                    if !meta.is_file() {
                        continue;
                    }
                    files.push(ScannedFile {
                        name: e.file_name().to_string_lossy().into_owned(),
                        size: meta.len(),
                        mtime_ms: mtime_ms(&meta),
                    });
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        files.sort_by(|a, b| a.name.cmp(&b.name));
        let mut probes = HashMap::new();
        for (_, entry) in store.entries() {
            for path in entry_artifact_paths(dir, entry) {
                probes.entry(path.clone()).or_insert_with(|| probe(&path));
            }
        }
        Ok(DirScan {
            files,
            blob_files: count_blobs(dir),
            probes,
        })
    }
}
