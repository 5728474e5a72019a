//! The one validator for values that become a path component: session ids a caller passes to
//! [`crate::SessionManager::new_session`], session names and agent ids from the command line,
//! the file-name part of a Redis key path, and (through `session-semantics`' layout, with its
//! stricter [`NameRules::StoreFile`]) the file names of a session store.

/// Longest name accepted, in bytes (the usual `NAME_MAX`).
pub const MAX_NAME_BYTES: usize = 255;

/// What a validated value is, for messages (`invalid <kind> "<value>": <rule>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NameKind {
    /// A session id that becomes part of a file name (`<timestamp>_<id>.jsonl`).
    SessionId,
    /// A session name given on the command line (`--session NAME`).
    SessionName,
    /// An agent id that becomes a directory (`<root>/agents/<ID>/`).
    AgentId,
    /// A whole file name (e.g. the file-name part of a Redis key path).
    FileName,
}

impl std::fmt::Display for NameKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NameKind::SessionId => "session id",
            NameKind::SessionName => "session name",
            NameKind::AgentId => "agent id",
            NameKind::FileName => "session file name",
        })
    }
}

/// The rule a name breaks. The display is the reason alone (`contains '/'`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NameRule {
    /// The name is empty.
    Empty,
    /// The name is `.` (the directory itself).
    Dot,
    /// The name is `..` (the parent directory).
    DotDot,
    /// The name starts with `/` or `\` (an absolute path).
    Absolute,
    /// The name holds a `/`.
    Slash,
    /// The name holds a `\`.
    Backslash,
    /// The name holds a NUL character.
    Nul,
    /// The name holds another control character (C0, DEL or C1).
    Control(char),
    /// The name is longer than [`MAX_NAME_BYTES`].
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// The name holds a `:` ([`NameRules::StoreFile`] only).
    Colon,
    /// The name starts with `.` ([`NameRules::StoreFile`] only: hidden files).
    LeadingDot,
}

impl std::fmt::Display for NameRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NameRule::Empty => f.write_str("is empty"),
            NameRule::Dot => f.write_str("is '.'"),
            NameRule::DotDot => f.write_str("is '..'"),
            NameRule::Absolute => f.write_str("is an absolute path"),
            NameRule::Slash => f.write_str("contains '/'"),
            NameRule::Backslash => f.write_str("contains '\\'"),
            NameRule::Nul => f.write_str("contains NUL"),
            NameRule::Control(c) => {
                write!(f, "contains the control character U+{:04X}", u32::from(*c))
            }
            NameRule::TooLong { len } => {
                write!(f, "is {len} bytes long, more than {MAX_NAME_BYTES}")
            }
            NameRule::Colon => f.write_str("contains ':'"),
            NameRule::LeadingDot => f.write_str("starts with '.'"),
        }
    }
}

/// Which rules apply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum NameRules {
    /// The rules of every path component: not empty, `.`, `..` or absolute, no `/`, `\`, NUL
    /// or control character, at most [`MAX_NAME_BYTES`] bytes.
    #[default]
    Component,
    /// [`NameRules::Component`] plus no `:` and no leading `.` (session-semantics' store
    /// layout: portable, never hidden).
    StoreFile,
}

/// A value refused as a path component: what it was meant to be, the value and the rule it
/// breaks. Displays as `invalid <kind> "<value>": <rule>`, the value escaped as Rust's `Debug`
/// escapes strings (`"a\0b"`, `"a\u{1b}b"`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid {kind} {value:?}: {rule}")]
#[non_exhaustive]
pub struct InvalidName {
    /// What the value was meant to be.
    pub kind: NameKind,
    /// The value as given.
    pub value: String,
    /// The rule it breaks (the first one found: emptiness, length, `.`/`..`, an absolute
    /// path, then the first bad character in order, then a leading `.`).
    pub rule: NameRule,
}

/// The first rule of `rules` that `value` breaks, or `None` when it is a valid name. The
/// checks run in this order: empty, longer than [`MAX_NAME_BYTES`] bytes, `.`, `..`, starts
/// with `/` or `\`, then each character in order (`/`, `\`, `:` for
/// [`NameRules::StoreFile`], NUL, any other control character), then a leading `.`
/// ([`NameRules::StoreFile`]).
pub fn broken_rule(value: &str, rules: NameRules) -> Option<NameRule> {
    let strict = rules == NameRules::StoreFile;
    if value.is_empty() {
        return Some(NameRule::Empty);
    }
    if value.len() > MAX_NAME_BYTES {
        return Some(NameRule::TooLong { len: value.len() });
    }
    match value {
        "." => return Some(NameRule::Dot),
        ".." => return Some(NameRule::DotDot),
        _ => {}
    }
    if value.starts_with(['/', '\\']) {
        return Some(NameRule::Absolute);
    }
    for c in value.chars() {
        let rule = match c {
            '/' => NameRule::Slash,
            '\\' => NameRule::Backslash,
            ':' if strict => NameRule::Colon,
            '\0' => NameRule::Nul,
            c if c.is_control() => NameRule::Control(c),
            _ => continue,
        };
        return Some(rule);
    }
    if strict && value.starts_with('.') {
        return Some(NameRule::LeadingDot);
    }
    None
}

/// Checks that `value` can be joined onto a directory as one path component
/// ([`NameRules::Component`]).
///
/// # Errors
/// [`InvalidName`] naming `kind`, the value and the first rule it breaks ([`broken_rule`]).
///
/// A value that passes can only ever address a direct child of the directory it is joined onto:
/// it is not empty, `.` or `..`, not an absolute path, holds no `/`, `\`, NUL or other control
/// character, and is at most [`MAX_NAME_BYTES`] bytes long (the usual `NAME_MAX`). pi's
/// `newSession({id})` takes any id verbatim, so an id holding `/` breaks its path (pi-format.md
/// §1.1, "File name"); OpenClaw's own transcript ids are checked before they become
/// `<id>.jsonl` (openclaw-store.md R1.8, R2.10). Ids read from files are never turned into
/// paths: new sessions, forks and branched sessions get fresh ids.
///
/// ```
/// use session_store::{NameKind, NameRule, validate_name};
///
/// let err = validate_name(NameKind::SessionName, "../../../x").unwrap_err();
/// assert_eq!(err.rule, NameRule::Slash);
/// assert_eq!(err.to_string(), r#"invalid session name "../../../x": contains '/'"#);
/// assert!(validate_name(NameKind::SessionId, "0195f3a0-7c1e-7000-8000-0000000000b1").is_ok());
/// ```
pub fn validate_name(kind: NameKind, value: &str) -> Result<(), InvalidName> {
    match broken_rule(value, NameRules::Component) {
        None => Ok(()),
        Some(rule) => Err(InvalidName {
            kind,
            value: value.to_owned(),
            rule,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rule_in_order() {
        let rule = |v: &str| broken_rule(v, NameRules::Component);
        assert_eq!(rule(""), Some(NameRule::Empty));
        assert_eq!(rule("."), Some(NameRule::Dot));
        assert_eq!(rule(".."), Some(NameRule::DotDot));
        assert_eq!(rule("/etc/x"), Some(NameRule::Absolute));
        assert_eq!(rule("\\x"), Some(NameRule::Absolute));
        assert_eq!(rule("a/b"), Some(NameRule::Slash));
        assert_eq!(rule("a\\b/c"), Some(NameRule::Backslash));
        assert_eq!(rule("a\0b"), Some(NameRule::Nul));
        assert_eq!(rule("a\u{1b}b"), Some(NameRule::Control('\u{1b}')));
        assert_eq!(rule("a\u{85}b"), Some(NameRule::Control('\u{85}')));
        assert_eq!(rule(&"x".repeat(256)), Some(NameRule::TooLong { len: 256 }));
        assert_eq!(rule(&"/".repeat(256)), Some(NameRule::TooLong { len: 256 }));
        assert_eq!(rule(&"x".repeat(255)), None);
        assert_eq!(rule("..."), None);
        assert_eq!(rule(".hidden"), None);
        assert_eq!(rule("a:b"), None);
        assert_eq!(rule("C:x"), None);
        let strict = |v: &str| broken_rule(v, NameRules::StoreFile);
        assert_eq!(strict("C:\\x"), Some(NameRule::Colon));
        assert_eq!(strict(".hidden"), Some(NameRule::LeadingDot));
        assert_eq!(strict(".a/b"), Some(NameRule::Slash));
        assert_eq!(strict(".."), Some(NameRule::DotDot));
        assert_eq!(strict("main.jsonl"), None);
    }

    #[test]
    fn messages_name_the_value_and_the_rule() {
        let msg = |k: NameKind, v: &str| validate_name(k, v).unwrap_err().to_string();
        assert_eq!(
            msg(NameKind::AgentId, "a\u{7}"),
            "invalid agent id \"a\\u{7}\": contains the control character U+0007"
        );
        assert_eq!(
            msg(NameKind::SessionId, ""),
            "invalid session id \"\": is empty"
        );
        assert_eq!(
            msg(NameKind::FileName, "a\\b"),
            "invalid session file name \"a\\\\b\": contains '\\'"
        );
    }
}
