//! What is at a path, found with `stat` before anything opens it. Session files are read only
//! when they are regular files (symlinks followed): opening a FIFO blocks forever, and a link to
//! `/dev/zero` reads until memory runs out. `export -o` writes only over regular files, never
//! over a device, FIFO, socket or directory.

use std::fs::FileType;
use std::io;
use std::path::{Path, PathBuf};

use crate::text;

/// What `stat` found at a path.
#[derive(Debug)]
pub(crate) enum Found {
    /// A regular file (possibly through symlinks).
    Regular,
    /// Nothing.
    Missing,
    /// A symlink whose target does not exist.
    DanglingSymlink(PathBuf),
    /// Something that is not a regular file: `"directory"`, `"fifo"`, `"socket"`,
    /// `"character device"`, `"block device"`.
    Other(&'static str),
    /// `stat` failed (permission denied on a parent, a symlink loop, …).
    Unreadable(io::Error),
}

/// The name of a file type, for messages.
pub(crate) fn type_name(ft: &FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "fifo";
        }
        if ft.is_socket() {
            return "socket";
        }
        if ft.is_char_device() {
            return "character device";
        }
        if ft.is_block_device() {
            return "block device";
        }
    }
    if ft.is_dir() {
        "directory"
    } else if ft.is_file() {
        "regular file"
    } else if ft.is_symlink() {
        "symbolic link"
    } else {
        "special file"
    }
}

/// What is at `path`, following symlinks; never opens it.
pub(crate) fn probe(path: &Path) -> Found {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Found::Regular,
        Ok(m) => Found::Other(type_name(&m.file_type())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => match std::fs::symlink_metadata(path) {
            Ok(l) if l.file_type().is_symlink() => {
                Found::DanglingSymlink(std::fs::read_link(path).unwrap_or_default())
            }
            _ => Found::Missing,
        },
        Err(e) => Found::Unreadable(e),
    }
}

/// Why `path` cannot be read as a session file (`None` when it is a regular file), without
/// the path: `does not exist`, `not a regular file: fifo`, ….
pub(crate) fn not_readable_reason(path: &Path) -> Option<String> {
    match probe(path) {
        Found::Regular => None,
        Found::Missing => Some("does not exist".to_owned()),
        Found::DanglingSymlink(t) => Some(format!(
            "is a dangling symbolic link (its target {} does not exist)",
            text::path(&t)
        )),
        Found::Other("directory") => Some("is a directory".to_owned()),
        Found::Other(kind) => Some(format!(
            "not a regular file: {kind} (session files are only read when they are regular files)"
        )),
        Found::Unreadable(e) => Some(format!("cannot be read: {e}")),
    }
}

/// Why `path` cannot be read as a session file, without the path (for a message that names it
/// first, `PATH: REASON`): [`not_readable_reason`], a directory with the `--dir` hint.
pub(crate) fn session_file_reason(path: &Path) -> Option<String> {
    let reason = not_readable_reason(path)?;
    Some(if reason == "is a directory" {
        format!(
            "is a directory; pass a session file, or use --dir {} to work on the sessions in it",
            text::shell_quote(&path.display().to_string())
        )
    } else {
        reason
    })
}

/// Fails unless `path` is a regular file (symlinks followed); never opens it.
///
/// # Errors
/// A message naming the path and what is there instead.
pub(crate) fn require_regular(path: &Path) -> anyhow::Result<()> {
    match not_readable_reason(path) {
        None => Ok(()),
        Some(reason) if reason == "is a directory" => Err(crate::outcome::UsageError::new(format!(
            "{} is a directory; pass a session file, or use --dir {} to work on the sessions in it",
            text::path(path),
            text::shell_quote(&path.display().to_string())
        ))
        .into()),
        Some(reason) => anyhow::bail!("{}: {reason}", text::path(path)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_and_directories_are_not_regular_files() {
        assert!(matches!(
            probe(Path::new("/dev/null")),
            Found::Other("character device")
        ));
        assert!(matches!(probe(Path::new("/")), Found::Other("directory")));
        assert!(matches!(
            probe(Path::new("/nonexistent-dir-for-tests/x.jsonl")),
            Found::Missing
        ));
        assert_eq!(
            not_readable_reason(Path::new("/dev/zero")).as_deref(),
            Some(
                "not a regular file: character device (session files are only read when they \
                 are regular files)"
            )
        );
    }
}
