//! Fault injection (docs/RELIABILITY.md): every write path of `session_store::io`, and then
//! `SessionManager` on a `FileStorage` built on a fault-injecting file system, meets `ENOSPC`
//! and `EIO` from each of its writes, fsyncs, renames, links, opens and removals in turn, and
//! short writes (a few bytes, then an error or then success). After each fault: an error is
//! returned (or the write path recovered and finished the job), the files are byte for byte
//! what they were before (or what a success leaves), no temporary file is left behind, no file
//! begins with a partial header, and the manager's in-memory session is the one it had.
//!
//! The limit, pinned by its own test: when the rollback of a failed append (the truncation
//! back to where the line began) meets a second fault, the partial bytes stay at the end of
//! the file and the error says how many (the next open reports them as a torn tail, the next
//! append terminates them first).
//!
//! Prints `RELIABILITY {"suite":"faults",…}` (see docs/RELIABILITY.md).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

mod reliability_common;

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use reliability_common::{assistant, emit, full_scale, user};
use session_store::SessionFileSnapshot;
use session_store::io::{self as sio, Durability, Fs, KnownFile};
use session_store::test_util::fault::{AfterShort, Errno, Fault, FaultFs, Op};
use session_store::{FileStorage, LockOptions, OpenParams, SessionManager, Storage};

const HEADER: &str = r#"{"type":"session","version":3,"id":"019a0000-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work"}"#;
const E1: &str = r#"{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#;
const E2: &str = r#"{"type":"message","id":"b2c3d4e5","parentId":"a1b2c3d4","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"timestamp":2}}"#;
const LOCK: &str = r#"{"pid":4242,"createdAt":"2026-01-01T00:00:00.000Z"}"#;

fn lines(parts: &[&str]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in parts {
        out.extend_from_slice(p.as_bytes());
        out.push(b'\n');
    }
    out
}

/// Every file under `dir` (relative name → bytes); directories are walked, not listed.
type Tree = BTreeMap<String, Vec<u8>>;

fn tree(dir: &Path) -> Tree {
    fn walk(root: &Path, dir: &Path, out: &mut Tree) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                walk(root, &p, out);
            } else {
                let name = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.insert(name, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = Tree::new();
    walk(dir, dir, &mut out);
    out
}

fn tree_of(files: &[(&str, Vec<u8>)]) -> Tree {
    files
        .iter()
        .map(|(n, b)| ((*n).to_owned(), b.clone()))
        .collect()
}

/// True when a `.jsonl` file's bytes do not begin with a complete header line (a JSON object
/// of `type` `session`, terminated by `\n`). An empty file has no header at all: not partial.
fn partial_header(name: &str, bytes: &[u8]) -> bool {
    if !name.ends_with(".jsonl") || bytes.is_empty() {
        return false;
    }
    let Some(end) = bytes.iter().position(|&b| b == b'\n') else {
        return true;
    };
    match session_format::json::parse_value(&bytes[..end]) {
        Ok(v) => {
            v.as_object()
                .and_then(|o| o.get("type"))
                .and_then(|t| t.as_js_string())
                .and_then(|s| s.as_str())
                != Some("session")
        }
        Err(_) => true,
    }
}

/// The calls an operation makes, per kind.
type Calls = BTreeMap<Op, usize>;

fn calls_of(fs: &FaultFs) -> Calls {
    Op::ALL
        .iter()
        .map(|&op| (op, fs.calls(op)))
        .filter(|&(_, n)| n > 0)
        .collect()
}

/// Every fault the matrix injects into an operation that makes `calls`: `ENOSPC` and `EIO` at
/// each call of each kind, and short writes of `keeps` bytes at each write, followed by
/// `ENOSPC`, `EIO` or success.
fn matrix(calls: &Calls, keeps: &[usize]) -> Vec<Fault> {
    let mut out = Vec::new();
    for (&op, &n) in calls {
        for nth in 0..n {
            for errno in [Errno::NoSpace, Errno::Io] {
                out.push(Fault::Fail { op, nth, errno });
            }
        }
    }
    for nth in 0..calls.get(&Op::Write).copied().unwrap_or(0) {
        for &keep in keeps {
            for then in [
                AfterShort::Fail(Errno::NoSpace),
                AfterShort::Fail(Errno::Io),
                AfterShort::Continue,
            ] {
                out.push(Fault::ShortWrite { nth, keep, then });
            }
        }
    }
    out
}

/// The error a fault makes an operation return.
fn expected_kind(fault: &Fault) -> Option<io::ErrorKind> {
    match fault {
        Fault::Fail { errno, .. }
        | Fault::ShortWrite {
            then: AfterShort::Fail(errno),
            ..
        } => Some(errno.to_error().kind()),
        Fault::ShortWrite {
            then: AfterShort::Continue,
            ..
        } => None,
    }
}

/// The figures of a suite run.
#[derive(Debug, Default)]
struct Tally {
    injected: u64,
    survived: u64,
    state_changed: u64,
    unreadable: u64,
    partial_headers: u64,
    /// Faults after which the operation still succeeded (and left exactly what a success
    /// leaves).
    recovered: u64,
    failures: Vec<String>,
}

impl Tally {
    fn add(&mut self, other: Tally) {
        self.injected += other.injected;
        self.survived += other.survived;
        self.state_changed += other.state_changed;
        self.unreadable += other.unreadable;
        self.partial_headers += other.partial_headers;
        self.recovered += other.recovered;
        self.failures.extend(other.failures);
    }
}

// ------------------------------------------------------------------------------------------
// io level

type Run = fn(&dyn Fs, &Path) -> io::Result<()>;

/// One write function in one situation.
struct IoCase {
    name: &'static str,
    /// Files planted before the call (and what an error must leave).
    before: Vec<(&'static str, Vec<u8>)>,
    /// Directories created before the call.
    dirs: &'static [&'static str],
    /// What a success leaves.
    after: Vec<(&'static str, Vec<u8>)>,
    run: Run,
    /// The calls the operation makes without a fault (pinned).
    calls: &'static [(Op, usize)],
    /// Faults after which the operation is expected to succeed anyway.
    recovers: fn(&Fault) -> bool,
}

fn io_err(e: sio::AppendToExistingError) -> io::Error {
    match e {
        sio::AppendToExistingError::Io(e) => e,
        other => io::Error::other(other.to_string()),
    }
}

fn known(path: &Path) -> SessionFileSnapshot {
    SessionFileSnapshot::stat(path).unwrap().unwrap()
}

fn short_continue(f: &Fault) -> bool {
    matches!(
        f,
        Fault::ShortWrite {
            then: AfterShort::Continue,
            ..
        }
    )
}

fn io_cases() -> Vec<IoCase> {
    let h_e1 = lines(&[HEADER, E1]);
    let h_e1_e2 = lines(&[HEADER, E1, E2]);
    let torn = [lines(&[HEADER, E1]), br#"{"type":"mess"#.to_vec()].concat();
    let torn_after = [torn.clone(), b"\n".to_vec(), lines(&[E2])].concat();
    vec![
        IoCase {
            name: "atomic_rewrite/replace",
            before: vec![("s.jsonl", h_e1.clone())],
            dirs: &[],
            after: vec![("s.jsonl", h_e1_e2.clone())],
            run: |fs, d| sio::on(fs).atomic_rewrite(&d.join("s.jsonl"), &lines(&[HEADER, E1, E2])),
            calls: &[
                (Op::Open, 1),
                (Op::Write, 1),
                (Op::Fsync, 2),
                (Op::Rename, 1),
                (Op::Link, 1),
            ],
            // Without the second name the rewrite goes on unprotected, and succeeds.
            recovers: |f| short_continue(f) || matches!(f, Fault::Fail { op: Op::Link, .. }),
        },
        IoCase {
            name: "atomic_rewrite/new",
            before: vec![],
            dirs: &[],
            after: vec![("s.jsonl", h_e1.clone())],
            run: |fs, d| sio::on(fs).atomic_rewrite(&d.join("s.jsonl"), &lines(&[HEADER, E1])),
            calls: &[
                (Op::Open, 1),
                (Op::Write, 1),
                (Op::Fsync, 2),
                (Op::Rename, 1),
            ],
            recovers: short_continue,
        },
        IoCase {
            name: "create_new",
            before: vec![],
            dirs: &[],
            after: vec![("s.jsonl", h_e1.clone())],
            run: |fs, d| sio::on(fs).create_new(&d.join("s.jsonl"), &lines(&[HEADER, E1]), None),
            calls: &[
                (Op::Open, 1),
                (Op::Write, 1),
                (Op::Fsync, 2),
                (Op::Rename, 1),
            ],
            recovers: short_continue,
        },
        IoCase {
            name: "create_exclusive",
            before: vec![],
            dirs: &[],
            after: vec![("s.jsonl.lock", LOCK.as_bytes().to_vec())],
            run: |fs, d| {
                sio::on(fs)
                    .create_exclusive(&d.join("s.jsonl.lock"), LOCK.as_bytes(), 0o600)
                    .map(|_| ())
            },
            calls: &[(Op::Open, 1), (Op::Write, 1), (Op::Rename, 1)],
            // Any failure of the temporary-file route falls back to O_EXCL + write.
            recovers: |_| true,
        },
        IoCase {
            name: "backup_copy",
            before: vec![("s.jsonl", h_e1.clone())],
            dirs: &[],
            after: vec![("s.jsonl", h_e1.clone()), ("s.jsonl.bak", h_e1.clone())],
            run: |fs, d| {
                sio::on(fs).backup_copy(
                    &d.join("s.jsonl"),
                    &d.join("s.jsonl.bak"),
                    &lines(&[HEADER, E1]),
                )
            },
            calls: &[
                (Op::Open, 1),
                (Op::Write, 1),
                (Op::Fsync, 2),
                (Op::Rename, 1),
            ],
            recovers: short_continue,
        },
        IoCase {
            name: "append_to_existing/sync_data",
            before: vec![("s.jsonl", h_e1.clone())],
            dirs: &[],
            after: vec![("s.jsonl", h_e1_e2.clone())],
            run: |fs, d| {
                let p = d.join("s.jsonl");
                let first = lines(&[HEADER]);
                let k = KnownFile {
                    snapshot: known(&p),
                    first_line: &first,
                };
                sio::on(fs)
                    .append_to_existing(&p, E2.as_bytes(), Durability::SyncData, Some(k))
                    .map(|_| ())
                    .map_err(io_err)
            },
            calls: &[(Op::Open, 1), (Op::Write, 1), (Op::Fsync, 1)],
            recovers: short_continue,
        },
        IoCase {
            name: "append_to_existing/torn_tail/sync_all",
            before: vec![("s.jsonl", torn)],
            dirs: &[],
            after: vec![("s.jsonl", torn_after)],
            run: |fs, d| {
                sio::on(fs)
                    .append_to_existing(
                        &d.join("s.jsonl"),
                        E2.as_bytes(),
                        Durability::SyncAll,
                        None,
                    )
                    .map(|_| ())
                    .map_err(io_err)
            },
            calls: &[(Op::Open, 1), (Op::Write, 1), (Op::Fsync, 1)],
            recovers: short_continue,
        },
        IoCase {
            name: "append_to_existing/buffer",
            before: vec![("s.jsonl", h_e1.clone())],
            dirs: &[],
            after: vec![("s.jsonl", h_e1_e2.clone())],
            run: |fs, d| {
                sio::on(fs)
                    .append_to_existing(&d.join("s.jsonl"), E2.as_bytes(), Durability::Buffer, None)
                    .map(|_| ())
                    .map_err(io_err)
            },
            calls: &[(Op::Open, 1), (Op::Write, 1)],
            recovers: short_continue,
        },
        IoCase {
            name: "append_line/existing",
            before: vec![("s.jsonl", h_e1.clone())],
            dirs: &[],
            after: vec![("s.jsonl", h_e1_e2)],
            run: |fs, d| {
                sio::on(fs)
                    .append_line(&d.join("s.jsonl"), E2.as_bytes(), Durability::SyncData)
                    .map(|_| ())
            },
            calls: &[(Op::Open, 1), (Op::Write, 1), (Op::Fsync, 1)],
            recovers: short_continue,
        },
        IoCase {
            name: "append_line/new_file_header",
            before: vec![],
            dirs: &[],
            after: vec![("s.jsonl", lines(&[HEADER]))],
            run: |fs, d| {
                sio::on(fs)
                    .append_line(&d.join("s.jsonl"), HEADER.as_bytes(), Durability::SyncData)
                    .map(|_| ())
            },
            calls: &[(Op::Open, 1), (Op::Write, 1), (Op::Fsync, 1)],
            recovers: short_continue,
        },
        IoCase {
            name: "sync_existing",
            before: vec![("s.jsonl", h_e1.clone())],
            dirs: &[],
            after: vec![("s.jsonl", h_e1.clone())],
            run: |fs, d| sio::on(fs).sync_existing(&d.join("s.jsonl"), Durability::SyncAll),
            calls: &[(Op::Fsync, 1)],
            recovers: short_continue,
        },
        IoCase {
            name: "move_no_replace/same_dir",
            before: vec![("s.jsonl", h_e1.clone())],
            dirs: &[],
            after: vec![("t.jsonl", h_e1.clone())],
            run: |fs, d| sio::on(fs).move_no_replace(&d.join("s.jsonl"), &d.join("t.jsonl")),
            calls: &[(Op::Fsync, 1), (Op::Link, 1), (Op::Remove, 1)],
            // A refused link falls back to a check and rename.
            recovers: |f| matches!(f, Fault::Fail { op: Op::Link, .. }),
        },
        IoCase {
            name: "move_no_replace/other_dir",
            before: vec![("s.jsonl", h_e1.clone())],
            dirs: &["archive"],
            after: vec![("archive/s.jsonl", h_e1)],
            run: |fs, d| {
                sio::on(fs).move_no_replace(&d.join("s.jsonl"), &d.join("archive/s.jsonl"))
            },
            calls: &[(Op::Fsync, 2), (Op::Link, 1), (Op::Remove, 1)],
            recovers: |f| matches!(f, Fault::Fail { op: Op::Link, .. }),
        },
    ]
}

fn plant(case: &IoCase) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for d in case.dirs {
        std::fs::create_dir_all(dir.path().join(d)).unwrap();
    }
    for (name, bytes) in &case.before {
        sio::create_new(&dir.path().join(name), bytes, None).unwrap();
    }
    dir
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Runs `case` once per fault of its matrix; checks and counts.
fn run_io_case(case: &IoCase, keeps: &[usize]) -> Tally {
    let mut t = Tally::default();
    let before = tree_of(&case.before);
    let after = tree_of(&case.after);

    // The clean run: the pinned calls, and exactly what a success leaves.
    let fs = FaultFs::new();
    let dir = plant(case);
    (case.run)(&fs, dir.path()).unwrap_or_else(|e| panic!("{}: clean run: {e}", case.name));
    let calls = calls_of(&fs);
    let pinned: Calls = case.calls.iter().copied().collect();
    assert_eq!(calls, pinned, "{}: calls of a clean run", case.name);
    assert_eq!(tree(dir.path()), after, "{}: clean run", case.name);

    for fault in matrix(&calls, keeps) {
        let dir = plant(case);
        let fs = FaultFs::with_fault(fault);
        let result = (case.run)(&fs, dir.path());
        if !fs.fired() {
            // A one-byte write cannot be short: nothing was injected.
            result.unwrap_or_else(|e| panic!("{}: {fault:?} did not fire: {e}", case.name));
            continue;
        }
        t.injected += 1;
        let now = tree(dir.path());
        let what = format!("{} {fault:?} -> {:?}", case.name, result.as_ref().err());
        let partial = now.iter().filter(|(n, b)| partial_header(n, b)).count() as u64;
        t.partial_headers += partial;
        let mut ok = partial == 0;
        match &result {
            Err(e) => {
                if (case.recovers)(&fault) {
                    t.failures.push(format!("{what}: expected to recover"));
                    ok = false;
                }
                if Some(e.kind()) != expected_kind(&fault) {
                    t.failures
                        .push(format!("{what}: error kind {:?}", e.kind()));
                    ok = false;
                }
                if now != before {
                    t.state_changed += 1;
                    t.failures.push(format!(
                        "{what}: files changed: {:?}",
                        now.keys().collect::<Vec<_>>()
                    ));
                    ok = false;
                }
            }
            Ok(()) => {
                t.recovered += 1;
                if !(case.recovers)(&fault) {
                    t.failures
                        .push(format!("{what}: succeeded despite the fault"));
                    ok = false;
                }
                if now != after {
                    t.state_changed += 1;
                    t.failures.push(format!(
                        "{what}: success left {:?}",
                        now.keys().collect::<Vec<_>>()
                    ));
                    ok = false;
                }
                #[cfg(unix)]
                for (name, _) in &case.after {
                    if !case.before.iter().any(|(b, _)| b == name) {
                        let m = mode(&dir.path().join(name));
                        if m != 0o600 {
                            t.failures.push(format!("{what}: {name} has mode {m:o}"));
                            ok = false;
                        }
                    }
                }
            }
        }
        if ok {
            t.survived += 1;
        }
    }
    t
}

fn io_matrix(keeps: &[usize]) -> Tally {
    let mut t = Tally::default();
    for case in io_cases() {
        t.add(run_io_case(&case, keeps));
    }
    t
}

// ------------------------------------------------------------------------------------------
// SessionManager level

/// What a caller can see of a manager: its session, leaf, branch and context.
#[derive(Debug, PartialEq)]
struct State {
    file: Option<PathBuf>,
    session_id: String,
    flushed: bool,
    header: Option<String>,
    leaf: Option<String>,
    append_parent: Option<String>,
    /// Every entry's exact bytes (as text).
    entries: Vec<String>,
    branch: Vec<String>,
    /// The context's message roles (or the error building it).
    roles: Result<Vec<Option<String>>, String>,
}

fn state(sm: &SessionManager) -> State {
    State {
        file: sm.get_session_file().map(Path::to_path_buf),
        session_id: sm.get_session_id().to_owned(),
        flushed: sm.is_flushed(),
        header: sm
            .get_header()
            .unwrap()
            .map(|h| session_format::json::to_json_string(&h)),
        leaf: sm.get_leaf_id().map(str::to_owned),
        append_parent: sm.get_append_parent_id().map(str::to_owned),
        entries: sm
            .get_entries()
            .map(|e| String::from_utf8_lossy(e.raw_bytes()).into_owned())
            .collect(),
        branch: sm
            .get_branch(None)
            .iter()
            .map(|e| e.id().to_owned())
            .collect(),
        roles: sm
            .build_session_context()
            .map_err(|e| e.to_string())
            .map(|c| c.messages.iter().map(|m| m.role().unwrap()).collect()),
    }
}

type Prepare = fn(Arc<dyn Storage>, &Path) -> SessionManager;
type MgrOp = fn(&mut SessionManager, Arc<dyn Storage>, &Path) -> Result<(), String>;

/// One manager operation in one situation: `prepare` runs with no fault armed, then `op` meets
/// the fault.
struct Stage {
    name: &'static str,
    /// The calls the operation makes without a fault (pinned).
    calls: &'static [(Op, usize)],
    prepare: Prepare,
    op: MgrOp,
}

/// A new session holding one user message in memory (no file yet).
fn held(storage: Arc<dyn Storage>, dir: &Path) -> SessionManager {
    let mut sm = SessionManager::on(storage)
        .create("/work", Some(dir))
        .unwrap();
    sm.append_message(user("q1", 1)).unwrap();
    assert!(!sm.is_flushed());
    sm
}

/// A session on disk: user, assistant, user, assistant.
fn flushed(storage: Arc<dyn Storage>, dir: &Path) -> SessionManager {
    let mut sm = held(storage, dir);
    sm.append_message(assistant("a1", 2)).unwrap();
    sm.append_message(user("q2", 3)).unwrap();
    sm.append_message(assistant("a2", 4)).unwrap();
    assert!(sm.is_flushed());
    sm
}

fn first_id(sm: &SessionManager) -> String {
    sm.get_entries().next().unwrap().id().to_owned()
}

fn second_id(sm: &SessionManager) -> String {
    sm.get_entries().nth(1).unwrap().id().to_owned()
}

/// A full rewrite of a new file: temporary file, write, `fsync`, rename, directory `fsync`.
const REWRITE_NEW: &[(Op, usize)] = &[
    (Op::Open, 1),
    (Op::Write, 1),
    (Op::Fsync, 2),
    (Op::Rename, 1),
];
/// A full rewrite replacing a file: as [`REWRITE_NEW`], plus the link keeping the old file
/// until the rename is durable.
const REWRITE_REPLACE: &[(Op, usize)] = &[
    (Op::Open, 1),
    (Op::Write, 1),
    (Op::Fsync, 2),
    (Op::Rename, 1),
    (Op::Link, 1),
];
/// A plain append: open, one write, `fdatasync`/`fsync`.
const APPEND_SYNCED: &[(Op, usize)] = &[(Op::Open, 1), (Op::Write, 1), (Op::Fsync, 1)];
/// A plain append without sync.
const APPEND_BUFFERED: &[(Op, usize)] = &[(Op::Open, 1), (Op::Write, 1)];
/// `sync_file`.
const SYNC_ONLY: &[(Op, usize)] = &[(Op::Fsync, 1)];

fn stages() -> Vec<Stage> {
    vec![
        Stage {
            name: "first_flush",
            calls: REWRITE_NEW,
            prepare: held,
            op: |sm, _, _| {
                sm.append_message(assistant("a1", 2))
                    .map(drop)
                    .map_err(|e| e.to_string())
            },
        },
        Stage {
            name: "append/sync_data",
            calls: APPEND_SYNCED,
            prepare: flushed,
            op: |sm, _, _| {
                sm.append_message(user("q3", 5))
                    .map(drop)
                    .map_err(|e| e.to_string())
            },
        },
        Stage {
            name: "append/sync_all",
            calls: APPEND_SYNCED,
            prepare: |st, d| {
                let mut sm = flushed(st, d);
                sm.set_durability(Durability::SyncAll);
                sm
            },
            op: |sm, _, _| {
                sm.append_message(assistant("a3", 5))
                    .map(drop)
                    .map_err(|e| e.to_string())
            },
        },
        Stage {
            name: "append/buffer_custom_entry",
            calls: APPEND_BUFFERED,
            prepare: |st, d| {
                let mut sm = flushed(st, d);
                sm.set_durability(Durability::Buffer);
                sm
            },
            op: |sm, _, _| {
                sm.append_custom_entry("note", None)
                    .map(drop)
                    .map_err(|e| e.to_string())
            },
        },
        Stage {
            name: "append/write_lock",
            calls: APPEND_SYNCED,
            prepare: |st, d| {
                let mut sm = flushed(st, d);
                sm.set_write_lock(Some(LockOptions::default()));
                sm
            },
            op: |sm, _, _| {
                sm.append_message(user("q3", 5))
                    .map(drop)
                    .map_err(|e| e.to_string())
            },
        },
        Stage {
            name: "append/label",
            calls: APPEND_SYNCED,
            prepare: flushed,
            op: |sm, _, _| {
                let id = first_id(sm);
                sm.append_label_change(&id, Some("start"))
                    .map(drop)
                    .map_err(|e| e.to_string())
            },
        },
        Stage {
            name: "branch_with_summary",
            calls: APPEND_SYNCED,
            prepare: flushed,
            op: |sm, _, _| {
                let id = second_id(sm);
                sm.branch_with_summary(Some((&id).into()), "went back", None, None)
                    .map(drop)
                    .map_err(|e| e.to_string())
            },
        },
        Stage {
            name: "branch+rewrite_file",
            calls: REWRITE_REPLACE,
            prepare: |st, d| {
                let mut sm = flushed(st, d);
                let id = second_id(&sm);
                sm.branch(&id).unwrap();
                sm
            },
            op: |sm, _, _| sm.rewrite_file().map_err(|e| e.to_string()),
        },
        Stage {
            name: "branch+flush",
            calls: REWRITE_NEW,
            // Two user messages held (no assistant yet), the leaf moved back to the first: the
            // flush writes the file with a leaf control recording the leaf.
            prepare: |st, d| {
                let mut sm = held(st, d);
                sm.append_message(user("q2", 2)).unwrap();
                let id = first_id(&sm);
                sm.branch(&id).unwrap();
                sm
            },
            op: |sm, _, _| sm.flush().map_err(|e| e.to_string()),
        },
        Stage {
            name: "remove_trailing_entries",
            calls: REWRITE_REPLACE,
            prepare: flushed,
            op: |sm, _, _| {
                sm.remove_trailing_entries(|e| e.is_assistant_message(), None)
                    .map(drop)
                    .map_err(|e| e.to_string())
            },
        },
        Stage {
            name: "create_branched_session",
            calls: REWRITE_NEW,
            prepare: flushed,
            op: |sm, _, _| {
                let id = second_id(sm);
                sm.create_branched_session(&id)
                    .map(drop)
                    .map_err(|e| e.to_string())
            },
        },
        Stage {
            name: "fork_from",
            calls: REWRITE_NEW,
            prepare: flushed,
            op: |sm, st, d| {
                let source = sm.get_session_file().unwrap().to_path_buf();
                SessionManager::on(st)
                    .fork_from(&source, "/elsewhere", Some(d))
                    .map(drop)
                    .map_err(|e| e.to_string())
            },
        },
        Stage {
            name: "sync_file",
            calls: SYNC_ONLY,
            prepare: |st, d| {
                let mut sm = flushed(st, d);
                sm.set_durability(Durability::Buffer);
                sm.append_message(user("q3", 5)).unwrap();
                sm
            },
            op: |sm, _, _| sm.sync_file(Durability::SyncAll).map_err(|e| e.to_string()),
        },
        Stage {
            name: "open/migrate_v1",
            calls: REWRITE_REPLACE,
            prepare: |st, d| {
                let v1 = lines(&[
                    r#"{"type":"session","id":"old-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work"}"#,
                    r#"{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
                    r#"{"type":"message","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"timestamp":2}}"#,
                ]);
                sio::create_new(&d.join("v1.jsonl"), &v1, None).unwrap();
                // The manager under test stays as it is: the operation opens another one.
                held(st, d)
            },
            op: |_, st, d| {
                SessionManager::on(st)
                    .open_with(&d.join("v1.jsonl"), &OpenParams::default())
                    .map(drop)
                    .map_err(|e| e.to_string())
            },
        },
    ]
}

/// Every `.jsonl` file under `dir` opens (read-only) with a readable header and without a
/// malformed line or a torn tail; returns the names that do not.
fn unreadable(dir: &Path, files: &Tree) -> Vec<String> {
    files
        .keys()
        .filter(|n| n.ends_with(".jsonl"))
        .filter(|n| {
            !SessionManager::open_read_only(&dir.join(n), None).is_ok_and(|o| {
                o.report.corrupt_header.is_none()
                    && o.report.malformed_lines.is_empty()
                    && o.report.torn_tail.is_none()
                    && !o.report.missing_final_newline
            })
        })
        .cloned()
        .collect()
}

/// The manager's session file, read fresh, holds exactly the manager's entries and leaf.
fn disk_matches(sm: &SessionManager) -> Result<(), String> {
    let Some(file) = sm.get_session_file() else {
        return Ok(());
    };
    if !sm.is_flushed() {
        return Ok(());
    }
    let fresh = SessionManager::open_read_only(file, None).map_err(|e| e.to_string())?;
    let (mine, disk) = (state(sm), state(&fresh.session));
    if (&mine.entries, &mine.leaf, &mine.branch, &mine.roles)
        != (&disk.entries, &disk.leaf, &disk.branch, &disk.roles)
    {
        return Err(format!("memory {mine:?} != disk {disk:?}"));
    }
    Ok(())
}

/// Runs `stage` once per fault of its matrix; checks and counts.
fn run_stage(stage: &Stage, keeps: &[usize]) -> Tally {
    let mut t = Tally::default();
    let scene = || {
        let dir = tempfile::tempdir().unwrap();
        let fs = Arc::new(FaultFs::new());
        let storage: Arc<dyn Storage> = Arc::new(FileStorage::with_fs(fs.clone()));
        let sm = (stage.prepare)(storage.clone(), dir.path());
        (dir, fs, storage, sm)
    };

    // The clean run: how many calls the operation makes.
    let (dir, fs, storage, mut sm) = scene();
    fs.arm(None);
    (stage.op)(&mut sm, storage, dir.path())
        .unwrap_or_else(|e| panic!("{}: clean run: {e}", stage.name));
    let calls = calls_of(&fs);
    let pinned: Calls = stage.calls.iter().copied().collect();
    assert_eq!(calls, pinned, "{}: calls of a clean run", stage.name);
    disk_matches(&sm).unwrap_or_else(|e| panic!("{}: clean run: {e}", stage.name));

    for fault in matrix(&calls, keeps) {
        let (dir, fs, storage, mut sm) = scene();
        let before = state(&sm);
        let before_files = tree(dir.path());
        fs.arm(Some(fault));
        let result = (stage.op)(&mut sm, storage.clone(), dir.path());
        fs.disarm();
        if !fs.fired() {
            result.unwrap_or_else(|e| panic!("{}: {fault:?} did not fire: {e}", stage.name));
            continue;
        }
        t.injected += 1;
        let what = format!("{} {fault:?} -> {:?}", stage.name, result.as_ref().err());
        let now_files = tree(dir.path());
        let partial = now_files
            .iter()
            .filter(|(n, b)| partial_header(n, b))
            .count() as u64;
        t.partial_headers += partial;
        let bad = unreadable(dir.path(), &now_files);
        t.unreadable += bad.len() as u64;
        let mut ok = partial == 0 && bad.is_empty();
        if !ok {
            t.failures.push(format!(
                "{what}: partial headers {partial}, unreadable {bad:?}"
            ));
        }
        let temps: Vec<&String> = now_files.keys().filter(|n| n.ends_with(".tmp")).collect();
        if !temps.is_empty() {
            t.failures
                .push(format!("{what}: temporary files left: {temps:?}"));
            ok = false;
        }
        match &result {
            Err(_) => {
                let after = state(&sm);
                if after != before || now_files != before_files {
                    t.state_changed += 1;
                    t.failures.push(format!(
                        "{what}: state changed: memory {}, files {}\n before {before:?}\n after  {after:?}",
                        after == before,
                        now_files == before_files
                    ));
                    ok = false;
                }
                // The manager goes on: the same operation, without the fault, succeeds and
                // leaves the file holding what the manager holds.
                let retry =
                    (stage.op)(&mut sm, storage, dir.path()).and_then(|()| disk_matches(&sm));
                if let Err(e) = retry {
                    t.failures.push(format!("{what}: retry: {e}"));
                    ok = false;
                }
            }
            Ok(()) => {
                t.recovered += 1;
                if let Err(e) = disk_matches(&sm) {
                    t.state_changed += 1;
                    t.failures.push(format!("{what}: recovered, but {e}"));
                    ok = false;
                }
            }
        }
        if ok {
            t.survived += 1;
        }
    }
    t
}

fn manager_matrix(keeps: &[usize]) -> Tally {
    let mut t = Tally::default();
    for stage in stages() {
        t.add(run_stage(&stage, keeps));
    }
    t
}

/// The whole suite: the io-level matrix and the manager-level matrix; prints the figure line.
#[test]
fn faults_suite() {
    // Short writes keep 1 byte (a torn first byte), 40 bytes (inside the header or the line)
    // and, at full scale, more cut points.
    let keeps: &[usize] = if full_scale() {
        &[1, 2, 17, 40, 100, 4096]
    } else {
        &[1, 40]
    };
    let mut t = io_matrix(keeps);
    let io_injected = t.injected;
    t.add(manager_matrix(keeps));
    emit(
        "faults",
        &[
            ("injected", t.injected),
            ("survived", t.survived),
            ("stateChanged", t.state_changed),
            ("unreadable", t.unreadable),
            ("partialHeaders", t.partial_headers),
            ("recovered", t.recovered),
            ("ioLevel", io_injected),
            ("managerLevel", t.injected - io_injected),
        ],
    );
    assert!(
        t.failures.is_empty(),
        "{} of {} faults not survived:\n{}",
        t.failures.len(),
        t.injected,
        t.failures.join("\n")
    );
    assert_eq!(t.survived, t.injected);
    assert_eq!(
        (t.state_changed, t.unreadable, t.partial_headers),
        (0, 0, 0)
    );
}

/// A short write followed by `ENOSPC` in the middle of an append: the bytes that reached the
/// file are taken back (one truncation), the error is the disk's, and `FaultFs` records both
/// injections exactly.
#[test]
fn short_append_then_enospc_is_taken_back() {
    use session_store::test_util::fault::{Effect, Injection};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let before = lines(&[HEADER, E1]);
    sio::create_new(&path, &before, None).unwrap();
    let fs = FaultFs::with_fault(Fault::ShortWrite {
        nth: 0,
        keep: 5,
        then: AfterShort::Fail(Errno::NoSpace),
    });
    let err = sio::on(&fs)
        .append_to_existing(&path, E2.as_bytes(), Durability::SyncData, None)
        .map(drop)
        .map_err(io_err)
        .unwrap_err();
    assert_eq!(err.raw_os_error(), Some(28));
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let asked = E2.len() + 1;
    assert_eq!(
        fs.injected(),
        vec![
            Injection {
                op: Op::Write,
                index: 0,
                effect: Effect::Short { wrote: 5, asked },
            },
            Injection {
                op: Op::Write,
                index: 1,
                effect: Effect::Failed(Errno::NoSpace),
            },
        ]
    );
    assert_eq!(
        calls_of(&fs),
        Calls::from([(Op::Open, 1), (Op::Write, 2), (Op::Truncate, 1)])
    );
}

/// A short write followed by success: the append finishes the line with a second write, and
/// the file ends with the complete line.
#[test]
fn short_append_is_completed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    sio::create_new(&path, &lines(&[HEADER, E1]), None).unwrap();
    let fs = FaultFs::with_fault(Fault::ShortWrite {
        nth: 0,
        keep: 1,
        then: AfterShort::Continue,
    });
    let out = sio::on(&fs)
        .append_to_existing(&path, E2.as_bytes(), Durability::SyncAll, None)
        .unwrap();
    assert_eq!(out.written, lines(&[E2]));
    assert_eq!(std::fs::read(&path).unwrap(), lines(&[HEADER, E1, E2]));
    assert_eq!(
        calls_of(&fs),
        Calls::from([(Op::Open, 1), (Op::Write, 2), (Op::Fsync, 1)])
    );
}

/// The directory `fsync` after a rewrite's rename fails: the replaced file is renamed back (the
/// same inode, the old bytes), and the second name is gone.
#[cfg(unix)]
#[test]
fn failed_directory_fsync_puts_the_replaced_file_back() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let before = lines(&[HEADER, E1]);
    sio::create_new(&path, &before, None).unwrap();
    let ino = std::fs::metadata(&path).unwrap().ino();
    let fs = FaultFs::with_fault(Fault::Fail {
        op: Op::Fsync,
        nth: 1,
        errno: Errno::Io,
    });
    let err = sio::on(&fs)
        .atomic_rewrite(&path, &lines(&[HEADER, E1, E2]))
        .unwrap_err();
    assert_eq!(err.raw_os_error(), Some(5));
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(std::fs::metadata(&path).unwrap().ino(), ino);
    assert_eq!(tree(dir.path()), tree_of(&[("s.jsonl", before)]));
    // Link aside, rename over, rename back.
    assert_eq!(fs.calls(Op::Link), 1);
    assert_eq!(fs.calls(Op::Rename), 2);
}

/// [`FaultFs`] whose truncation (`set_len`) always fails with `EIO`: the rollback of a failed
/// append fails too.
#[derive(Debug)]
struct NoTruncate(FaultFs);

impl Fs for NoTruncate {
    fn open_append(&self, p: &Path, create: bool) -> io::Result<std::fs::File> {
        self.0.open_append(p, create)
    }
    fn create_new_file(&self, p: &Path, mode: u32) -> io::Result<std::fs::File> {
        self.0.create_new_file(p, mode)
    }
    fn create_temp(
        &self,
        dir: &Path,
        prefix: &str,
        suffix: &str,
    ) -> io::Result<tempfile::NamedTempFile> {
        self.0.create_temp(dir, prefix, suffix)
    }
    fn write(&self, f: &mut std::fs::File, b: &[u8]) -> io::Result<usize> {
        self.0.write(f, b)
    }
    fn set_len(&self, _f: &std::fs::File, _len: u64) -> io::Result<()> {
        Err(Errno::Io.to_error())
    }
    fn sync_data(&self, f: &std::fs::File) -> io::Result<()> {
        self.0.sync_data(f)
    }
    fn sync_all(&self, f: &std::fs::File) -> io::Result<()> {
        self.0.sync_all(f)
    }
    fn sync_dir(&self, d: &Path) -> io::Result<()> {
        self.0.sync_dir(d)
    }
    fn persist(&self, t: tempfile::NamedTempFile, p: &Path) -> io::Result<std::fs::File> {
        self.0.persist(t, p)
    }
    fn persist_noclobber(&self, t: tempfile::NamedTempFile, p: &Path) -> io::Result<std::fs::File> {
        self.0.persist_noclobber(t, p)
    }
    fn hard_link(&self, a: &Path, b: &Path) -> io::Result<()> {
        self.0.hard_link(a, b)
    }
    fn rename(&self, a: &Path, b: &Path) -> io::Result<()> {
        self.0.rename(a, b)
    }
    fn remove_file(&self, p: &Path) -> io::Result<()> {
        self.0.remove_file(p)
    }
}

/// The limit of the rollback (docs/RELIABILITY.md, "Faults"): an append whose write fails
/// after a short write, and whose rollback (the truncation back to where the line began)
/// fails as well, leaves the partial bytes at the end of the file, and its error says how many.
/// The manager's session is unchanged; the next open reports the piece as a torn tail, and the
/// next append terminates it first.
#[test]
fn a_second_fault_during_the_rollback_leaves_the_partial_bytes_and_says_how_many() {
    let short_then_enospc = Fault::ShortWrite {
        nth: 0,
        keep: 7,
        then: AfterShort::Fail(Errno::NoSpace),
    };
    // session_store::io.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let before = lines(&[HEADER, E1]);
    sio::create_new(&path, &before, None).unwrap();
    let fs = NoTruncate(FaultFs::with_fault(short_then_enospc));
    let err = sio::on(&fs)
        .append_to_existing(&path, E2.as_bytes(), Durability::SyncData, None)
        .map(drop)
        .map_err(io_err)
        .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::StorageFull);
    assert_eq!(
        err.to_string(),
        "No space left on device (os error 28); 7 bytes of the line were written and could not be taken back"
    );
    let mut left = before;
    left.extend_from_slice(&E2.as_bytes()[..7]);
    assert_eq!(std::fs::read(&path).unwrap(), left);
    assert_eq!(tree(dir.path()), tree_of(&[("s.jsonl", left)]));

    // SessionManager on top: the same bytes are left, the error names the file, the session in
    // memory is the one it had.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let before = lines(&[HEADER, E1, E2]);
    sio::create_new(&path, &before, None).unwrap();
    let fs = Arc::new(NoTruncate(FaultFs::new()));
    let storage: Arc<dyn Storage> = Arc::new(FileStorage::with_fs(fs.clone()));
    let mut sm = SessionManager::on(storage)
        .open_with(&path, &OpenParams::default())
        .unwrap();
    let state_before = state(&sm);
    fs.0.arm(Some(short_then_enospc));
    let err = sm
        .append_message(assistant("lost to a full disk", 3))
        .unwrap_err();
    // The error and its source chain.
    let mut chain = vec![err.to_string()];
    let mut source = std::error::Error::source(&err);
    while let Some(e) = source {
        chain.push(e.to_string());
        source = e.source();
    }
    assert_eq!(
        chain,
        [
            format!("cannot write session file {}", path.display()),
            "No space left on device (os error 28); 7 bytes of the line were written and could not be taken back".to_owned(),
        ]
    );
    assert_eq!(state(&sm), state_before);
    let after = std::fs::read(&path).unwrap();
    assert_eq!(&after[..before.len()], &before[..]);
    assert_eq!(&after[before.len()..], br#"{"type""#);
    // The next open reports the piece: line 4, at the old end of the file, torn.
    let ro = SessionManager::open_read_only(&path, None).unwrap();
    let torn = ro.report.torn_tail.clone().unwrap();
    assert_eq!(
        (torn.line, torn.line_offset, torn.torn),
        (4, before.len(), true)
    );
    assert_eq!(ro.session.entry_count(), 2);
    // The next append (faults disarmed) terminates it first: nothing of it is lost.
    fs.0.disarm();
    let id = sm.append_message(assistant("after the fault", 4)).unwrap();
    let now = std::fs::read(&path).unwrap();
    assert_eq!(&now[..after.len()], &after[..]);
    assert_eq!(now[after.len()], b'\n');
    let last = &now[after.len() + 1..];
    assert_eq!(last.last(), Some(&b'\n'));
    assert_eq!(
        reliability_common::line_id(&last[..last.len() - 1]).as_deref(),
        Some(id.as_str())
    );
}
