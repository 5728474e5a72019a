//! The Redis key schema of one session: every key of a session, and the index of its
//! directory, shares the hash tag `{<dir>}`, so each Lua script touches keys of one cluster slot.
//!
//! For a session at `<dir>/<file>` under the key prefix `P` (percent-escaping `%`, `{` and `}`
//! in `<dir>` and `<file>`):
//!
//! | key | type | holds |
//! |---|---|---|
//! | `P:{<dir>}:<file>:m` | hash | `g` generation (decimal u64, new on every create/replace), `v` version (change counter), `n` byte length, `t` 1 when the bytes do not end in `\n` (a torn last line), `c` creation and `a` last-activity time (server ms) |
//! | `P:{<dir>}:<file>:h` | string | the first line (the header), without its `\n` |
//! | `P:{<dir>}:<file>:l` | list | every further line, raw bytes without the `\n` |
//! | `P:{<dir>}:<file>:k` | string | the write lock: a random token, set with `SET NX PX` |
//! | `P:{<dir>}:index` | sorted set | the directory's session file names, scored by last activity (ms) |
//!
//! The session's bytes are `join(["h"] ++ "l", "\n")`, followed by `\n` unless `t` is 1: the
//! exact bytes the file store holds after the same operations. A session exists when its `m`
//! hash does (an empty session has `n` 0 and no `h`).

use std::path::{Component, Path, PathBuf};

use super::RedisStoreError;
use crate::names::{NameKind, validate_name};

/// The keys of one session plus its directory index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionKeys {
    /// The meta hash (`g`, `v`, `n`, `t`, `c`, `a`).
    pub meta: String,
    /// The header line (string).
    pub header: String,
    /// The further lines (list).
    pub lines: String,
    /// The write lock (string token).
    pub lock: String,
    /// The directory's sorted set of file names by last activity.
    pub index: String,
    /// The member of `index` naming this session: the file name, unescaped.
    pub member: String,
}

/// `%`, `{` and `}` percent-escaped, so that a directory or file name can neither end the hash
/// tag early nor make two paths share a key.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '%' => out.push_str("%25"),
            '{' => out.push_str("%7B"),
            '}' => out.push_str("%7D"),
            _ => out.push(c),
        }
    }
    out
}

/// The inverse of [`escape`].
pub(crate) fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let code = rest.get(at..at + 3);
        let c = match code {
            Some("%25") => "%",
            Some("%7B") => "{",
            Some("%7D") => "}",
            _ => {
                out.push('%');
                rest = &rest[at + 1..];
                continue;
            }
        };
        out.push_str(c);
        rest = &rest[at + 3..];
    }
    out.push_str(rest);
    out
}

/// The directory key part of `dir` (its text as given: the caller passes the paths it
/// addresses sessions by, normally absolute).
pub(crate) fn dir_text(dir: &Path) -> Option<&str> {
    dir.to_str()
}

/// The index key of directory `dir`.
pub(crate) fn index_key(prefix: &str, dir: &str) -> String {
    format!("{prefix}:{{{}}}:index", escape(dir))
}

/// The keys of the session at `path` (lexical: the caller normalises it first, as
/// [`super::RedisStorage::keys`] does). The file name must be a valid path component
/// ([`crate::validate_name`]: not `.`, `..` or empty, no `\`, NUL or control character,
/// at most 255 bytes) and the directory must not climb out of its namespace with a `..`
/// component, so that no name can address keys of another directory or make a path that the
/// file store would resolve elsewhere.
///
/// # Errors
/// [`RedisStoreError::BadPath`] when the path has no UTF-8 directory and file name;
/// [`RedisStoreError::InvalidName`] for a file name the validator refuses;
/// [`RedisStoreError::EscapesNamespace`] for a directory holding a `..` component.
pub fn session_keys(prefix: &str, path: &Path) -> Result<SessionKeys, RedisStoreError> {
    let bad = || RedisStoreError::BadPath(path.to_path_buf());
    let file = path.file_name().ok_or_else(bad)?.to_str().ok_or_else(bad)?;
    validate_name(NameKind::FileName, file).map_err(|source| RedisStoreError::InvalidName {
        path: path.to_path_buf(),
        source,
    })?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if dir.components().any(|c| matches!(c, Component::ParentDir)) {
        return Err(RedisStoreError::EscapesNamespace(path.to_path_buf()));
    }
    let dir = dir_text(dir).ok_or_else(bad)?;
    let base = format!("{prefix}:{{{}}}:{}", escape(dir), escape(file));
    Ok(SessionKeys {
        meta: format!("{base}:m"),
        header: format!("{base}:h"),
        lines: format!("{base}:l"),
        lock: format!("{base}:k"),
        index: index_key(prefix, dir),
        member: file.to_owned(),
    })
}

/// The session path of `member` in directory `dir` (the inverse of [`session_keys`]), or
/// `None` when the member (read from the index, so written by any client of the server) is not
/// a valid file name: such a member can name no session, and joining it could leave `dir`.
pub(crate) fn member_path(dir: &Path, member: &str) -> Option<PathBuf> {
    validate_name(NameKind::FileName, member).ok()?;
    Some(dir.join(member))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_share_the_directory_hash_tag_and_escape_braces() {
        let k = session_keys("oc", Path::new("/a/sessions/s1.jsonl")).unwrap();
        assert_eq!(k.meta, "oc:{/a/sessions}:s1.jsonl:m");
        assert_eq!(k.header, "oc:{/a/sessions}:s1.jsonl:h");
        assert_eq!(k.lines, "oc:{/a/sessions}:s1.jsonl:l");
        assert_eq!(k.lock, "oc:{/a/sessions}:s1.jsonl:k");
        assert_eq!(k.index, "oc:{/a/sessions}:index");
        assert_eq!(k.member, "s1.jsonl");
        let odd = session_keys("oc", Path::new("/x}y/{%}.jsonl")).unwrap();
        assert_eq!(odd.meta, "oc:{/x%7Dy}:%7B%25%7D.jsonl:m");
        assert_eq!(odd.member, "{%}.jsonl");
        let rel = session_keys("p", Path::new("s.jsonl")).unwrap();
        assert_eq!(rel.meta, "p:{.}:s.jsonl:m");
        assert!(matches!(
            session_keys("p", Path::new("/")),
            Err(RedisStoreError::BadPath(_))
        ));
        assert_eq!(
            member_path(Path::new("/a/sessions"), "s1.jsonl"),
            Some(PathBuf::from("/a/sessions/s1.jsonl"))
        );
        // Index members written by another client that are not valid file names name no
        // session: they never become paths.
        for hostile in ["../../etc/x.jsonl", "..", ".", "", "/etc/x", "a\\b", "a\0b"] {
            assert_eq!(
                member_path(Path::new("/a/sessions"), hostile),
                None,
                "{hostile:?}"
            );
        }
        for raw in ["/x}y", "%7B", "a%25{b}%", "plain", "%"] {
            assert_eq!(unescape(&escape(raw)), raw);
        }
    }
}
