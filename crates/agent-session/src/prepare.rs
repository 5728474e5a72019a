//! `prepareSessionManagerForRun` (openclaw-jsonl.md §4; OpenClaw 2026.6.11
//! `src/agents/embedded-agent-runner/session-manager-init.ts`): before a run loop starts, the
//! transcript is normalised so that the first assistant flush writes header → user → assistant,
//! with the header exactly once.
//!
//! Checked against the reference with `tests/fixtures/reference/capture.mjs` (goldens in
//! `tests/fixtures/reference/expected/prepare.json`, test `tests/it/prepare.rs`). Where 2026.6.11
//! differs from the later text of §4, 2026.6.11 is followed: the header check reads the whole
//! first non-blank line, however long (no 64 KiB cap), so a long header line is readable.
//!
//! One deliberate difference (Decisions (c), "nothing is lost"): in case 2b the reference
//! empties the file, discarding the user-only history it holds. Here its exact bytes are first
//! copied to `<file>.reset-<ISO ts with ':' and '.' → '-'>-<8 hex>.jsonl` beside it (same
//! permission bits); the file is then emptied as in the reference. A failed backup leaves the
//! file untouched.

use std::io::Read;
use std::path::{Path, PathBuf};

use session_format::json::{JsValue, parse_value};
use session_store::{
    AppendError, LockError, SessionManager, invalidate_repair_cache, io, lock, paths,
};

/// Why [`prepare_session_manager_for_run`] failed. The file and the manager are untouched
/// unless a variant says otherwise.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PrepareError {
    /// The first non-blank line of the file is not JSON (`Refusing to reset session
    /// transcript with unreadable header: <file>`); `source` is the parse error (line 1-based).
    #[error("Refusing to reset session transcript with unreadable header: {}", path.display())]
    UnreadableHeader {
        /// The session file.
        path: PathBuf,
        /// The 1-based line of that first non-blank line.
        line: usize,
        /// The JSON error (its offset is relative to the line).
        #[source]
        source: session_format::json::JsonError,
    },
    /// The first non-blank line parses but is not an object with `type: "session"` (`Refusing
    /// to reset session transcript with invalid header: <file>`).
    #[error("Refusing to reset session transcript with invalid header: {}", path.display())]
    InvalidHeader {
        /// The session file.
        path: PathBuf,
        /// The 1-based line of that first non-blank line.
        line: usize,
    },
    /// The file could not be read for the header check.
    #[error("cannot read session file {}", path.display())]
    Read {
        /// The session file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The manager is bound to another file than `session_file` (or to none), so the rewrite
    /// the case calls for would not reach `session_file`. Two names of one existing file (a
    /// symlinked directory) are the same file.
    #[error(
        "session manager is bound to {}, not to {}",
        bound.as_deref().map_or_else(|| "no file".into(), |p| p.display().to_string()),
        path.display()
    )]
    NotBound {
        /// The file the caller named.
        path: PathBuf,
        /// The manager's file.
        bound: Option<PathBuf>,
    },
    /// The manager writes under the session write lock ([`SessionManager::set_write_lock`]) and
    /// the lock could not be taken for case 2b; the file and the manager are untouched.
    #[error("cannot take the session write lock of {}", path.display())]
    Lock {
        /// The session file.
        path: PathBuf,
        /// Why the lock could not be taken.
        #[source]
        source: LockError,
    },
    /// The header row no longer parses (a bug).
    #[error(transparent)]
    Header(#[from] session_store::ReadError),
    /// Writing the file (backup, emptying or full rewrite) failed; the file is as it was, the
    /// manager's header identity may already be the new one.
    #[error(transparent)]
    Write(#[from] AppendError),
}

/// Parameters of [`prepare_session_manager_for_run`] (the reference's
/// `{sessionFile, hadSessionFile, sessionId, cwd}`).
#[derive(Clone, Copy, Debug)]
pub struct PrepareParams<'a> {
    /// The transcript file of the run.
    pub session_file: &'a Path,
    /// The file existed before the run started (the runner checked before opening it).
    pub had_session_file: bool,
    /// The run's session id, written into the header.
    pub session_id: &'a str,
    /// The run's working directory, written into the header.
    pub cwd: &'a str,
}

/// Which case of §4 applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrepareOutcome {
    /// No header: nothing happened.
    NoHeader,
    /// Case 1 (`!hadSessionFile`): header id and cwd set in memory; nothing written.
    NewSession,
    /// Case 2a: a fork (`parentSession` set) or a recovered corrupt header without an
    /// assistant: the tree is kept, the file rewritten in full with the new header.
    KeptAndRewritten,
    /// Case 2b: no assistant: the file was emptied and the session reduced to its header; the
    /// discarded bytes were backed up to `backup` (`None` when the file was already empty).
    Reset {
        /// The byte-exact copy of what the file held.
        backup: Option<PathBuf>,
    },
    /// Case 3 with an unchanged header: nothing written.
    Unchanged,
    /// Case 3 with a changed header: the file was rewritten in full.
    HeaderRewritten,
}

/// `prepareSessionManagerForRun(params)` (openclaw-jsonl.md §4). With `header` the manager's
/// header and `has_assistant` whether any `message` entry (any branch) has role `assistant`:
///
/// 1. `!had_session_file`: header `id`/`cwd` and the manager's session id and cwd are set in
///    memory; the first assistant flush writes them.
/// 2. `had_session_file` and no assistant:
///    - (2a) the manager recovered a corrupt header, or the header has a non-empty
///      `parentSession` (a fork): header identity set, file rewritten in full (opaque rows and
///      leaf controls included), flushed;
///    - (2b) otherwise, inside the session write lock when the manager writes under one
///      ([`SessionManager::set_write_lock`]), [`assert_existing_header_is_readable`] (an
///      error leaves file and manager untouched), then the file is backed up byte for byte
///      (see the module docs),
///      emptied, the repair cache of the path invalidated, and the manager reduced to its
///      header (with the new identity): no entries, opaque rows or labels, leaf and append
///      cursor null, not flushed. The next append has `parentId: null`.
/// 3. `had_session_file` with an assistant: header identity set; rewritten in full only when
///    `id` or `cwd` changed (otherwise no write, the mtime stays). A manager still holding
///    unwritten rows is flushed instead of being marked flushed (the reference would drop
///    them).
///
/// No header: nothing happens.
///
/// # Errors
/// [`PrepareError`]: an unreadable or invalid header in case 2b (nothing changed), a manager
/// bound to another file (checked before anything changes, in cases 2 and 3), the write lock
/// not taken in case 2b (nothing changed), or a failed write (in cases 2a and 3 the manager's
/// header identity is then already the new one, as in the reference).
pub fn prepare_session_manager_for_run(
    sm: &mut SessionManager,
    params: PrepareParams<'_>,
) -> Result<PrepareOutcome, PrepareError> {
    let Some(header) = sm.get_header()? else {
        return Ok(PrepareOutcome::NoHeader);
    };
    let has_assistant = sm.get_entries().any(|e| e.is_assistant_message());
    if !params.had_session_file {
        sm.set_header_identity(params.session_id, params.cwd)?;
        return Ok(PrepareOutcome::NewSession);
    }
    let Some(bound) = sm
        .get_session_file()
        .filter(|b| names_same_file(b, params.session_file))
        .map(Path::to_path_buf)
    else {
        return Err(PrepareError::NotBound {
            path: params.session_file.to_path_buf(),
            bound: sm.get_session_file().map(Path::to_path_buf),
        });
    };
    if !has_assistant {
        let fork = header
            .get("parentSession")
            .and_then(JsValue::as_js_string)
            .is_some_and(|s| !s.is_empty());
        if sm.was_recovered_from_corrupt_header() || fork {
            sm.set_header_identity(params.session_id, params.cwd)?;
            sm.rewrite_file()?;
            return Ok(PrepareOutcome::KeptAndRewritten);
        }
        // The check, the backup and the emptying run inside the session write lock when the
        // manager writes under it, so that no writer honouring the lock appends in between.
        return match sm.write_lock().cloned() {
            None => reset(sm, &bound, params),
            Some(options) => {
                lock::with_session_write_lock(&bound, &options, |_| reset(sm, &bound, params))
                    .map_err(|source| PrepareError::Lock {
                        path: bound.clone(),
                        source,
                    })?
            }
        };
    }
    let changed = sm.set_header_identity(params.session_id, params.cwd)?;
    if changed {
        sm.rewrite_file()?;
        Ok(PrepareOutcome::HeaderRewritten)
    } else {
        sm.flush()?;
        Ok(PrepareOutcome::Unchanged)
    }
}

/// Case 2b: header check, byte-exact backup, file emptied, manager reduced to its header.
fn reset(
    sm: &mut SessionManager,
    bound: &Path,
    params: PrepareParams<'_>,
) -> Result<PrepareOutcome, PrepareError> {
    assert_existing_header_is_readable(params.session_file)?;
    let backup = session_store::paths::backup_path(bound, "reset");
    let had_bytes = std::fs::metadata(bound).is_ok_and(|m| m.len() > 0);
    sm.reset_file_to_header(Some(&backup))?;
    invalidate_repair_cache(params.session_file);
    invalidate_repair_cache(bound);
    sm.set_header_identity(params.session_id, params.cwd)?;
    Ok(PrepareOutcome::Reset {
        backup: had_bytes.then_some(backup),
    })
}

/// `named` is the manager's file `bound`: the same path once resolved (Node's `path.resolve`),
/// or another name of the same existing file (a symlinked directory, `..` through a symlink).
fn names_same_file(bound: &Path, named: &Path) -> bool {
    if bound == paths::resolve(named).as_path() {
        return true;
    }
    matches!(
        (std::fs::canonicalize(bound), std::fs::canonicalize(named)),
        (Ok(a), Ok(b)) if a == b
    )
}

/// Bytes read per step while looking for the first non-blank line.
const CHUNK: usize = 64 * 1024;

/// `assertExistingHeaderIsReadable(file)` as OpenClaw 2026.6.11 does it: the file is split on
/// `\n` (read as UTF-8, invalid sequences as U+FFFD) and its first line that is not blank
/// (`line.trim()`, JavaScript whitespace) must `JSON.parse` to an object whose `type` is
/// `"session"` (only `type` is checked, not `id`). An empty or blank file passes. The line is
/// read whole whatever its length (reading stops at its end).
///
/// # Errors
/// [`PrepareError::UnreadableHeader`] (not JSON: a BOM or other non-JSON whitespace before the
/// header counts), [`PrepareError::InvalidHeader`], [`PrepareError::Read`].
pub fn assert_existing_header_is_readable(path: &Path) -> Result<(), PrepareError> {
    let read_err = |source| PrepareError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut file = io::open_regular(path).map_err(read_err)?;
    let mut line: Vec<u8> = Vec::new();
    let mut line_no = 1;
    let mut buf = vec![0u8; CHUNK];
    let first = loop {
        let n = file.read(&mut buf).map_err(read_err)?;
        if n == 0 {
            break (!session_format::line::is_blank(&line)).then_some(line);
        }
        let mut rest = &buf[..n];
        let mut found = None;
        while let Some(i) = rest.iter().position(|&b| b == b'\n') {
            line.extend_from_slice(&rest[..i]);
            rest = &rest[i + 1..];
            if session_format::line::is_blank(&line) {
                line.clear();
                line_no += 1;
            } else {
                found = Some(std::mem::take(&mut line));
                break;
            }
        }
        if let Some(l) = found {
            break Some(l);
        }
        line.extend_from_slice(rest);
    };
    let Some(first) = first else {
        return Ok(());
    };
    let text = String::from_utf8_lossy(&first);
    let value = parse_value(text.as_bytes()).map_err(|source| PrepareError::UnreadableHeader {
        path: path.to_path_buf(),
        line: line_no,
        source,
    })?;
    let is_session = value
        .as_object()
        .and_then(|o| o.get("type"))
        .and_then(JsValue::as_js_string)
        .is_some_and(|t| t.as_wtf8() == b"session");
    if is_session {
        Ok(())
    } else {
        Err(PrepareError::InvalidHeader {
            path: path.to_path_buf(),
            line: line_no,
        })
    }
}
