//! One identity for a session file, whatever name reaches it (openclaw-jsonl.md §3.1, §3.5;
//! docs/DEVIATIONS.md D29).
//!
//! A [`FileIdentity`] is computed from a path as follows:
//! 1. the path is made absolute and normalised lexically, as Node's `path.resolve` does
//!    ([`crate::paths::resolve`]): `x/../x/s.jsonl` is `x/s.jsonl`;
//! 2. its directory is resolved with `realpath` (left as it is when it does not exist), so a
//!    directory alias (a symlink to the sessions directory) and the directory itself give the
//!    same path;
//! 3. when the file name is a symlink, it is followed to its target (relative targets against
//!    the link's real directory, the target's directory resolved with `realpath` again, at most
//!    [`MAX_LINKS`] links): `L.jsonl -> s.jsonl` is `s.jsonl`;
//! 4. the file found there is `stat`ed for its device and inode (`None` when nothing exists
//!    there yet: the identity of a session not written yet is its canonical path alone).
//!
//! The canonical path ([`FileIdentity::canonical`]) is the key of everything that must see one
//! file once: the session write lock (its lock file is `<canonical>.lock`, which for a plain
//! path is OpenClaw's `realpath(dirname F)/<basename F>.lock`), the warm cache
//! ([`crate::WarmCache`]), the incremental repair cache ([`crate::RepairCache`]), listings
//! ([`crate::SessionManager::list`]) and the CLI's archive and clear. Device and inode tell two
//! names of one file apart from two files (hard links, [`FileIdentity::same_file`]).
//!
//! # The store root
//!
//! Writes never follow a link out of the store. The **store root** of a write is the directory
//! that holds the name being written, resolved with `realpath` ([`store_root_of`]): for
//! [`crate::SessionManager`] and every write of [`crate::io`] (and so of
//! [`crate::FileStorage`]), the session file's own directory; for the `sessions` command's
//! write commands the agent's sessions directory (they act only on the files directly in it) or,
//! for a file given by path, that file's directory. A name whose canonical file lies outside
//! its store root (a symlink, or a symlink chain, to a file elsewhere; a link into a
//! sub-directory of the root such as `archive/` stays inside) is refused with
//! [`OutsideStore`], which names the link, its target and the root, before anything is
//! written, locked, backed up, moved or deleted. Reading through such a link is allowed.

use std::ffi::OsString;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Most symlinks followed from one name (the kernel's `MAXSYMLINKS` is 40 on Linux).
pub const MAX_LINKS: usize = 40;

/// A file's device and inode numbers (`st_dev`, `st_ino`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId {
    /// Device id.
    pub dev: u64,
    /// Inode number.
    pub ino: u64,
}

impl FileId {
    /// The device and inode of `meta` (`None` off Unix, where there are none).
    pub fn of(meta: &fs::Metadata) -> Option<Self> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Some(FileId {
                dev: meta.dev(),
                ino: meta.ino(),
            })
        }
        #[cfg(not(unix))]
        {
            let _ = meta;
            None
        }
    }
}

/// The identity of the file a path names (see the [module documentation](self)).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FileIdentity {
    given: PathBuf,
    canonical: PathBuf,
    file_id: Option<FileId>,
    exists: bool,
    via_link: bool,
}

impl FileIdentity {
    /// Resolves `path` (nothing is created or written).
    ///
    /// A name whose `lstat` fails (nothing there, a directory component that is a file or
    /// cannot be searched) is a file that does not exist: its identity is its canonical path.
    ///
    /// # Errors
    /// [`io::ErrorKind::InvalidInput`] when the path has no file name (`/`, `x/..`); more than
    /// [`MAX_LINKS`] symlinks; a `readlink` failure.
    pub fn resolve(path: &Path) -> io::Result<Self> {
        let given = crate::paths::resolve(path);
        let (dir, name) = split(&given)?;
        let mut cur = real_dir(dir).join(name);
        let mut via_link = false;
        for _ in 0..=MAX_LINKS {
            let meta = match fs::symlink_metadata(&cur) {
                Ok(m) => m,
                // Nothing there (or nothing reachable: a directory that is a file, one that
                // cannot be searched): the identity of a file not written yet.
                Err(_) => {
                    return Ok(FileIdentity {
                        given,
                        canonical: cur,
                        file_id: None,
                        exists: false,
                        via_link,
                    });
                }
            };
            if !meta.file_type().is_symlink() {
                return Ok(FileIdentity {
                    given,
                    canonical: cur,
                    file_id: FileId::of(&meta),
                    exists: true,
                    via_link,
                });
            }
            via_link = true;
            let target = fs::read_link(&cur)?;
            let base = cur.parent().map_or_else(PathBuf::new, Path::to_path_buf);
            let next = base.join(target);
            cur = match split(&next) {
                Ok((d, n)) => real_dir(d).join(n),
                // The target ends in `..` or `/`: a directory, which `realpath` names.
                Err(_) => fs::canonicalize(&next)?,
            };
        }
        Err(io::Error::other(format!(
            "{}: more than {MAX_LINKS} levels of symbolic links",
            given.display()
        )))
    }

    /// The path as given, made absolute and normalised lexically.
    pub fn given(&self) -> &Path {
        &self.given
    }

    /// The canonical file: the real directory joined with the target's name. The key of the
    /// lock, the caches and listings.
    pub fn canonical(&self) -> &Path {
        &self.canonical
    }

    /// The canonical file, by value.
    pub fn into_canonical(self) -> PathBuf {
        self.canonical
    }

    /// Device and inode of the canonical file, `None` when nothing exists there.
    pub fn file_id(&self) -> Option<FileId> {
        self.file_id
    }

    /// Something exists at the canonical path.
    pub fn exists(&self) -> bool {
        self.exists
    }

    /// The given name (after its directory was resolved) is a symlink that was followed.
    pub fn via_link(&self) -> bool {
        self.via_link
    }

    /// The session write lock file: `<canonical>.lock` (OpenClaw's
    /// `realpath(dirname F)/<basename F>.lock` for a path that is not a symlink).
    pub fn lock_path(&self) -> PathBuf {
        let mut lock: OsString = self.canonical.clone().into_os_string();
        lock.push(".lock");
        PathBuf::from(lock)
    }

    /// Both name one file: the same device and inode when both exist (hard links included),
    /// else the same canonical path.
    pub fn same_file(&self, other: &FileIdentity) -> bool {
        match (self.file_id, other.file_id) {
            (Some(a), Some(b)) => a == b,
            _ => self.canonical == other.canonical,
        }
    }

    /// The canonical file lies inside `root` (resolved with `realpath`; compared component by
    /// component, so `/s/sessions-old` is not inside `/s/sessions`).
    pub fn is_within(&self, root: &Path) -> bool {
        self.canonical
            .starts_with(real_dir(&crate::paths::resolve(root)))
    }

    /// `Ok` when the canonical file lies inside `root` ([`FileIdentity::is_within`]).
    ///
    /// # Errors
    /// [`OutsideStore`] naming the given path, the canonical file and the resolved root.
    pub fn check_within(&self, root: &Path) -> Result<(), OutsideStore> {
        let real_root = real_dir(&crate::paths::resolve(root));
        if self.canonical.starts_with(&real_root) {
            Ok(())
        } else {
            Err(OutsideStore {
                link: self.given.clone(),
                target: self.canonical.clone(),
                root: real_root,
            })
        }
    }

    /// [`FileIdentity::check_within`] the path's own store root ([`store_root_of`]).
    ///
    /// # Errors
    /// [`OutsideStore`].
    pub fn check_own_root(&self) -> Result<(), OutsideStore> {
        // A name that is not a symlink is its real directory joined with itself: inside.
        if !self.via_link {
            return Ok(());
        }
        match split(&self.given) {
            Ok((dir, _)) => self.check_within(dir),
            Err(_) => Ok(()),
        }
    }
}

/// A write (append, rewrite, backup, lock, move or delete) refused because the name it was
/// given leads, through a symlink, to a file outside its store root (see the
/// [module documentation](self)). Nothing was written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct OutsideStore {
    /// The name the write was given (absolute, lexically normalised).
    pub link: PathBuf,
    /// The file it leads to (canonical).
    pub target: PathBuf,
    /// The store root the target is outside of (resolved with `realpath`).
    pub root: PathBuf,
}

impl fmt::Display for OutsideStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} links to {}, outside the store root {}; refusing to follow the link for a write",
            self.link.display(),
            self.target.display(),
            self.root.display()
        )
    }
}

impl OutsideStore {
    /// The refusal inside an [`io::Error`] (kind [`io::ErrorKind::PermissionDenied`]), as the
    /// write functions of [`crate::io`] return it; [`OutsideStore::find`] gets it back.
    pub fn into_io(self) -> io::Error {
        io::Error::new(io::ErrorKind::PermissionDenied, self)
    }

    /// The refusal carried by `e`, when it is one ([`OutsideStore::into_io`]).
    pub fn find(e: &io::Error) -> Option<&OutsideStore> {
        e.get_ref()?.downcast_ref::<OutsideStore>()
    }
}

/// The store root of a write to `path` (see the [module documentation](self)): its directory
/// (after `path.resolve`), resolved with `realpath` when it exists.
pub fn store_root_of(path: &Path) -> PathBuf {
    let abs = crate::paths::resolve(path);
    match split(&abs) {
        Ok((dir, _)) => real_dir(dir),
        Err(_) => real_dir(&abs),
    }
}

/// The check every write of [`crate::io`] makes first, and the file the write then acts on:
/// when the name `path` is a symlink, it must lead inside its own store root
/// ([`store_root_of`]) and the write goes to the canonical file it leads to
/// ([`FileIdentity::canonical`]); any other name (a missing file too) is written as given.
/// One `lstat` when it is not a symlink.
///
/// The name is resolved once, here: the writers open the returned path with `O_NOFOLLOW`
/// and rename onto it (a rename replaces a symlink swapped in there instead of following it),
/// so re-pointing the link after this check cannot redirect the write.
///
/// # Errors
/// The [`OutsideStore`] refusal as an [`io::Error`] ([`OutsideStore::into_io`]); a failure to
/// resolve the link.
pub fn check_write_path(path: &Path) -> io::Result<PathBuf> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            let id = FileIdentity::resolve(path)?;
            id.check_own_root().map_err(OutsideStore::into_io)?;
            Ok(id.into_canonical())
        }
        _ => Ok(path.to_path_buf()),
    }
}

/// [`FileIdentity::resolve`] of `path`, checked against its own store root: what a writer
/// needs before taking the lock of, backing up or rewriting the file a name leads to.
///
/// # Errors
/// [`OutsideStore`] (as an [`io::Error`], [`OutsideStore::find`]), or the resolution's failure.
pub fn resolve_for_write(path: &Path) -> io::Result<FileIdentity> {
    let id = FileIdentity::resolve(path)?;
    id.check_own_root().map_err(OutsideStore::into_io)?;
    Ok(id)
}

/// The symlinks directly in `dir` whose name ends in `.jsonl` and that lead to the file
/// `target` (compared by canonical path, [`FileIdentity::canonical`]), sorted by name: the
/// other names under which an OpenClaw 2026.6.11 writer may hold a lock of that file (it locks
/// `realpath(dir)/<the name it was given>.lock`, docs/DEVIATIONS.md D29 (1)). One resolution
/// per symlink of the directory ([`symlinks_in`]: one `stat` of the directory when its listing
/// is remembered, else one `readdir`); an unreadable directory has none.
pub fn aliases_in(dir: &Path, target: &Path) -> Vec<PathBuf> {
    symlinks_in(dir)
        .into_iter()
        .filter(|p| FileIdentity::resolve(p).is_ok_and(|id| id.canonical() == target))
        .collect()
}

/// A remembered listing of the `*.jsonl` symlinks of one directory.
struct SymlinkListing {
    /// The directory's device and inode and its modification time when it was read.
    stamp: (FileId, std::time::SystemTime),
    /// The symlinks, sorted.
    links: Vec<PathBuf>,
}

/// Directories whose listing is remembered (a retention sweep asks once per session, so
/// without it a directory of `n` sessions would be read `n` times).
static SYMLINK_LISTINGS: parking_lot::Mutex<Vec<(PathBuf, SymlinkListing)>> =
    parking_lot::Mutex::new(Vec::new());
/// At most this many directories are remembered.
const SYMLINK_LISTINGS_MAX: usize = 16;
/// A listing is remembered only when the directory had not changed for this long before it
/// was read: file times advance in coarse steps, so a change right after a read of a
/// directory that had just changed could leave its modification time as it was (the "racy"
/// rule of git's index).
const SYMLINK_LISTING_SETTLED: std::time::Duration = std::time::Duration::from_secs(2);

/// The symlinks directly in `dir` whose name ends in `.jsonl`, sorted by name. The listing of
/// a directory is remembered while its device, inode and modification time stay the same (a
/// link created or removed changes the time), and only when the directory had been unchanged
/// for 2 seconds before it was read.
pub fn symlinks_in(dir: &Path) -> Vec<PathBuf> {
    let stamp_of = |meta: &fs::Metadata| -> Option<(FileId, std::time::SystemTime)> {
        Some((FileId::of(meta)?, meta.modified().ok()?))
    };
    let Ok(meta) = fs::metadata(dir) else {
        return Vec::new();
    };
    let stamp = stamp_of(&meta);
    if let Some(stamp) = stamp {
        let known = SYMLINK_LISTINGS.lock();
        if let Some((_, l)) = known.iter().find(|(d, l)| d == dir && l.stamp == stamp) {
            return l.links.clone();
        }
    }
    let started = std::time::SystemTime::now();
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut links: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_symlink()))
        .filter(|e| e.file_name().to_string_lossy().ends_with(".jsonl"))
        .map(|e| e.path())
        .collect();
    links.sort();
    let settled = stamp.is_some_and(|(_, mtime)| {
        started
            .duration_since(mtime)
            .is_ok_and(|age| age >= SYMLINK_LISTING_SETTLED)
    });
    let unchanged = fs::metadata(dir).ok().as_ref().and_then(stamp_of) == stamp;
    if let (Some(stamp), true, true) = (stamp, settled, unchanged) {
        let mut known = SYMLINK_LISTINGS.lock();
        known.retain(|(d, _)| d != dir);
        if known.len() >= SYMLINK_LISTINGS_MAX {
            known.remove(0);
        }
        known.push((
            dir.to_path_buf(),
            SymlinkListing {
                stamp,
                links: links.clone(),
            },
        ));
    }
    links
}

/// How many names (hard links) the file `meta` describes has (`st_nlink`; 1 off Unix).
pub fn link_count(meta: &fs::Metadata) -> u64 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        meta.nlink()
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        1
    }
}

/// A write refused because the session file has more than one hard link: the write lock is
/// per name (`<name>.lock`, as OpenClaw 2026.6.11 names it), so another name of the same file
/// may be locked and written meanwhile, and an atomic rewrite or a move would split the names
/// into two files (docs/DEVIATIONS.md D29). Nothing was written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{} has {links} hard links; refusing to write a session file with more than one name (its \
     lock is per name, and a rewrite or move would split the names into two files)",
    .file.display()
)]
pub struct HardLinked {
    /// The session file.
    pub file: PathBuf,
    /// Its link count (`st_nlink`).
    pub links: u64,
}

/// Names of one file among listed names ([`alias_groups`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AliasGroup {
    /// Index of the name kept for the file: a name that is not a symlink (the file's own
    /// name), else the first one.
    pub primary: usize,
    /// Indices of the other names that reach the same file, in the order given.
    pub aliases: Vec<usize>,
    /// The canonical file, when the kept name is a symlink whose target lies outside the
    /// listed root (no name of the file in the listing is the file itself inside the root).
    pub outside_target: Option<PathBuf>,
}

/// Groups `paths` (names found in a listing of `root`) by the file they reach: each name that
/// is a symlink is resolved ([`FileIdentity::resolve`]), every other name is its own directory
/// (resolved with `realpath`, once per directory) joined with its name, so a listing costs one
/// `lstat` per name and one resolution per symlink. Groups come in the order of their first
/// name. Hard links (two names that are both files) are two files here, as they are to the
/// write lock.
pub fn alias_groups<P: AsRef<Path>>(paths: &[P], root: &Path) -> Vec<AliasGroup> {
    alias_groups_with(paths, root, |i| {
        fs::symlink_metadata(paths[i].as_ref()).is_ok_and(|m| m.file_type().is_symlink())
    })
}

/// [`alias_groups`] with the symlink test given (`is_link(i)`: whether `paths[i]` is a
/// symlink, e.g. from the directory entry's type, which costs no system call).
pub fn alias_groups_with<P: AsRef<Path>>(
    paths: &[P],
    root: &Path,
    is_link: impl Fn(usize) -> bool,
) -> Vec<AliasGroup> {
    let links: Vec<bool> = (0..paths.len()).map(is_link).collect();
    if !links.contains(&true) {
        return (0..paths.len())
            .map(|i| AliasGroup {
                primary: i,
                aliases: Vec::new(),
                outside_target: None,
            })
            .collect();
    }
    let real_root = real_dir(&crate::paths::resolve(root));
    let mut dirs: std::collections::HashMap<PathBuf, PathBuf> = std::collections::HashMap::new();
    let mut keys: Vec<PathBuf> = Vec::with_capacity(paths.len());
    for (i, p) in paths.iter().enumerate() {
        let abs = crate::paths::resolve(p.as_ref());
        let key = if links[i] {
            FileIdentity::resolve(&abs).map_or(abs, FileIdentity::into_canonical)
        } else {
            match split(&abs) {
                Ok((dir, name)) => dirs
                    .entry(dir.to_path_buf())
                    .or_insert_with(|| real_dir(dir))
                    .join(name),
                Err(_) => abs,
            }
        };
        keys.push(key);
    }
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut by_key: std::collections::HashMap<&Path, usize> = std::collections::HashMap::new();
    for (i, key) in keys.iter().enumerate() {
        match by_key.get(key.as_path()) {
            Some(&g) => groups[g].push(i),
            None => {
                by_key.insert(key, groups.len());
                groups.push(vec![i]);
            }
        }
    }
    groups
        .into_iter()
        .map(|mut g| {
            let pos = g.iter().position(|&i| !links[i]).unwrap_or(0);
            let primary = g.remove(pos);
            let outside_target = (links[primary] && !keys[primary].starts_with(&real_root))
                .then(|| keys[primary].clone());
            AliasGroup {
                primary,
                aliases: g,
                outside_target,
            }
        })
        .collect()
}

/// `(directory, file name)` of an absolute, lexically normalised path.
fn split(path: &Path) -> io::Result<(&Path, &std::ffi::OsStr)> {
    match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => Ok((
            if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            },
            name,
        )),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: not a file path", path.display()),
        )),
    }
}

/// `realpath(dir)`, or `dir` normalised lexically when it cannot be resolved (does not exist).
fn real_dir(dir: &Path) -> PathBuf {
    fs::canonicalize(dir).unwrap_or_else(|_| crate::paths::normalize(dir))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // Tests fail loudly by design.

    use super::*;

    #[cfg(unix)]
    #[test]
    fn aliases_resolve_to_the_target() {
        let tmp = tempfile::tempdir().unwrap();
        let real = fs::canonicalize(tmp.path()).unwrap();
        let dir = real.join("x");
        fs::create_dir(&dir).unwrap();
        let s = dir.join("s.jsonl");
        crate::io::write_raw(&s, b"{}\n").unwrap();
        std::os::unix::fs::symlink("s.jsonl", dir.join("L.jsonl")).unwrap();
        std::os::unix::fs::symlink(&dir, real.join("alias")).unwrap();
        for spelling in [
            dir.join("..").join("x").join("s.jsonl"),
            real.join("alias").join("s.jsonl"),
            dir.join("L.jsonl"),
            real.join("alias").join("L.jsonl"),
        ] {
            let id = FileIdentity::resolve(&spelling).unwrap();
            assert_eq!(id.canonical(), s, "{}", spelling.display());
            assert_eq!(id.lock_path(), dir.join("s.jsonl.lock"));
            assert!(id.same_file(&FileIdentity::resolve(&s).unwrap()));
        }
        assert!(
            FileIdentity::resolve(&dir.join("L.jsonl"))
                .unwrap()
                .via_link()
        );
        assert!(!FileIdentity::resolve(&s).unwrap().via_link());
        let missing = FileIdentity::resolve(&dir.join("new.jsonl")).unwrap();
        assert_eq!(missing.canonical(), dir.join("new.jsonl"));
        assert_eq!(missing.file_id(), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_out_of_its_directory_is_refused_for_writes() {
        let tmp = tempfile::tempdir().unwrap();
        let real = fs::canonicalize(tmp.path()).unwrap();
        let store = real.join("store");
        let outside = real.join("outside");
        fs::create_dir_all(store.join("archive")).unwrap();
        fs::create_dir(&outside).unwrap();
        crate::io::write_raw(&outside.join("t.jsonl"), b"{}\n").unwrap();
        crate::io::write_raw(&store.join("archive").join("a.jsonl"), b"{}\n").unwrap();
        std::os::unix::fs::symlink(outside.join("t.jsonl"), store.join("out.jsonl")).unwrap();
        std::os::unix::fs::symlink("archive/a.jsonl", store.join("in.jsonl")).unwrap();
        let err = check_write_path(&store.join("out.jsonl")).unwrap_err();
        assert_eq!(
            OutsideStore::find(&err),
            Some(&OutsideStore {
                link: store.join("out.jsonl"),
                target: outside.join("t.jsonl"),
                root: store.clone(),
            })
        );
        assert_eq!(
            check_write_path(&store.join("in.jsonl")).unwrap(),
            store.join("archive").join("a.jsonl")
        );
        assert_eq!(
            check_write_path(&store.join("missing.jsonl")).unwrap(),
            store.join("missing.jsonl")
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_link_loop_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("a.jsonl");
        std::os::unix::fs::symlink("b.jsonl", &a).unwrap();
        std::os::unix::fs::symlink("a.jsonl", tmp.path().join("b.jsonl")).unwrap();
        let err = FileIdentity::resolve(&a).unwrap_err();
        assert!(
            err.to_string().contains("levels of symbolic links"),
            "{err}"
        );
    }
}
