//! Single `session-store` calls at the edges, matched against OpenClaw 2026.6.11: lone-surrogate
//! ids, `appendMessage(null)`, a v1 compaction naming itself, paths with `..`, `.` and a trailing
//! slash, rows another writer appended before a held flush, the file owner across a rewrite,
//! context timestamps, `list`, and deep nesting. The expected values are what OpenClaw 2026.6.11
//! does for the same call (checked with `node xtask/conformance/runner.mjs --reference
//! openclaw`) or what the workspace promises (README: "no operation truncates or overwrites
//! history without a byte-exact backup").
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

use std::path::{Path, PathBuf};

use session_format::json::{JsValue, parse_value, to_json_string};
use session_store::SessionManager;

const H3: &str = r#"{"type":"session","version":3,"id":"0195f000-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/dev/project"}"#;
const U1: &str = r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"q"}],"timestamp":1767225600000}}"#;
const A1: &str = r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"r"}],"provider":"anthropic","model":"m","timestamp":1767225600001}}"#;

fn js(t: &str) -> JsValue {
    parse_value(t.as_bytes()).unwrap()
}
fn user() -> JsValue {
    js(r#"{"role":"user","content":[{"type":"text","text":"n1"}],"timestamp":1767225600000}"#)
}
fn assistant() -> JsValue {
    js(
        r#"{"role":"assistant","content":[{"type":"text","text":"n2"}],"provider":"anthropic","model":"m","timestamp":1767225600001}"#,
    )
}
fn plant(path: &Path, text: &str) {
    session_store::io::write_raw(path, text.as_bytes()).unwrap();
}
fn canon(dir: &tempfile::TempDir) -> PathBuf {
    std::fs::canonicalize(dir.path()).unwrap()
}

// ------------------------------------------------------------------------------------------
// Lone-surrogate ids: `\ud800` and `\udc00` are kept exactly, never as U+FFFD.

/// The appended entry's `parentId` is the escape `"\udc00"`, as the reference writes it, so the
/// chain on disk stays intact.
#[test]
fn append_after_lone_surrogate_id_writes_the_escaped_parent_id() {
    let dir = tempfile::tempdir().unwrap();
    let f = canon(&dir).join("s.jsonl");
    let a = A1
        .replace(r#""id":"a1""#, r#""id":"\udc00""#)
        .replace(r#""parentId":"u1""#, r#""parentId":null"#);
    plant(&f, &format!("{H3}\n{a}\n"));
    let mut sm = SessionManager::open(&f, None, None).unwrap();
    sm.append_message(user()).unwrap();
    let text = std::fs::read_to_string(&f).unwrap();
    let last = text.lines().last().unwrap();
    assert!(
        last.contains(r#""parentId":"\udc00""#),
        "appended line must name its parent as the reference does: {last}"
    );
}

/// Two different lone-surrogate ids are two different entries: the reference's branch is
/// `["\ud800", "\udc00"]` and its tree has one root with one child.
#[test]
fn distinct_lone_surrogate_ids_stay_distinct() {
    let dir = tempfile::tempdir().unwrap();
    let f = canon(&dir).join("s.jsonl");
    let u = U1.replace(r#""id":"u1""#, r#""id":"\ud800""#);
    let a = A1
        .replace(r#""id":"a1""#, r#""id":"\udc00""#)
        .replace(r#""parentId":"u1""#, r#""parentId":"\ud800""#);
    plant(&f, &format!("{H3}\n{u}\n{a}\n"));
    let sm = SessionManager::open(&f, None, None).unwrap();
    assert_eq!(
        sm.get_branch(None).len(),
        2,
        "branch must hold both entries"
    );
    let tree = sm.get_tree();
    assert_eq!(tree.roots.len(), 1);
    assert_eq!(tree.nodes[tree.roots[0]].children.len(), 1);
    // `id()` is a `&str` view (a lone surrogate cannot be held in a `str`: it reads as
    // U+FFFD); the exact ids are `id_js()`.
    let branch = sm.get_branch(None);
    assert_ne!(branch[0].id_js(), branch[1].id_js());
    assert_eq!(
        branch[0].id_js(),
        Some(&session_format::json::JsString::from_utf16(&[0xD800]))
    );
    assert_eq!(
        branch[1].id_js(),
        Some(&session_format::json::JsString::from_utf16(&[0xDC00]))
    );
    assert_eq!(branch[1].parent_id_js(), branch[0].id_js().cloned());
}

// ------------------------------------------------------------------------------------------
// appendMessage(null): the reference throws (`Cannot read properties of null (reading
// 'role')`, in `messageSerializesOwnedValues`) before touching anything; ours refuses it,
// writes nothing and the session keeps building its context.
#[test]
fn append_message_null_is_rejected_and_leaves_the_session_usable() {
    let dir = tempfile::tempdir().unwrap();
    let mut sm = SessionManager::create("/home/dev/project", Some(dir.path())).unwrap();
    sm.append_message(user()).unwrap();
    sm.append_message(assistant()).unwrap();
    let file = sm.get_session_file().unwrap().to_path_buf();
    let before = std::fs::read(&file).unwrap();
    assert!(
        sm.append_message(JsValue::Null).is_err(),
        "reference throws on appendMessage(null)"
    );
    assert_eq!(sm.get_entries().count(), 2);
    assert!(sm.build_session_context().is_ok());
    assert_eq!(std::fs::read(&file).unwrap(), before, "nothing written");
}

// ------------------------------------------------------------------------------------------
// v1 migration on open: a compaction whose `firstKeptEntryIndex` names itself keeps its own id
// as `firstKeptEntryId`, as in the reference (the format-level case is
// session-format/tests/v1_compaction_self_index.rs).
#[test]
fn open_v1_compaction_first_kept_index_naming_itself() {
    let dir = tempfile::tempdir().unwrap();
    let f = canon(&dir).join("v1.jsonl");
    plant(
        &f,
        concat!(
            r#"{"type":"session","id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#,
            "\n",
            r#"{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"q","timestamp":1}}"#,
            "\n",
            r#"{"type":"message","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":"r","provider":"p","model":"m","timestamp":2}}"#,
            "\n",
            r#"{"type":"compaction","timestamp":"2026-01-01T00:00:03.000Z","summary":"S","firstKeptEntryIndex":3,"tokensBefore":5}"#,
            "\n"
        ),
    );
    let sm = SessionManager::open(&f, None, None).unwrap();
    let comp = sm
        .get_entries()
        .find(|e| e.entry_type() == session_format::entry::EntryType::Compaction)
        .unwrap();
    let v = comp.value().unwrap();
    assert_eq!(
        v.get("firstKeptEntryId").map(to_json_string),
        Some(to_json_string(&JsValue::from(comp.id())))
    );
}

// ------------------------------------------------------------------------------------------
// Paths: `open` resolves paths lexically, as the reference does with `path.resolve`.

/// `open("<dir>/missing/../s.jsonl")` opens `<dir>/s.jsonl` (leaf `a1`), as in the reference,
/// instead of asking the OS, which would fail on the missing directory.
#[test]
fn open_resolves_dot_dot_lexically() {
    let dir = tempfile::tempdir().unwrap();
    let d = canon(&dir);
    plant(&d.join("s.jsonl"), &format!("{H3}\n{U1}\n{A1}\n"));
    let sm = SessionManager::open(&d.join("missing/../s.jsonl"), None, None).unwrap();
    assert_eq!(sm.get_leaf_id(), Some("a1"));
    assert_eq!(sm.get_session_file(), Some(d.join("s.jsonl").as_path()));
}

/// `forkFrom("<dir>/./s.jsonl")`: the reference writes `parentSession` exactly as given
/// (`parentSession: sourcePath` in 2026.6.11; checked with node: `"/tmp/pt/./s.jsonl"` stays
/// `"/tmp/pt/./s.jsonl"`, `"./s.jsonl"` stays `"./s.jsonl"`), and so does ours. The op-script
/// runner resolves `file` like the node runner's `path.resolve(D, file)` (test
/// `runner_resolves_file_paths_like_path_resolve` in `input_edge_cases.rs`).
#[test]
fn fork_parent_session_path_is_written_as_given() {
    let dir = tempfile::tempdir().unwrap();
    let d = canon(&dir);
    plant(&d.join("s.jsonl"), &format!("{H3}\n{U1}\n{A1}\n"));
    let given = d.join(".").join("s.jsonl");
    let fk = SessionManager::fork_from(&given, "/home/dev/project", Some(&d)).unwrap();
    let header = fk.get_header().unwrap().unwrap();
    assert_eq!(
        header
            .get("parentSession")
            .and_then(|p| p.as_str_lossy().map(|s| s.into_owned())),
        Some(format!("{}/./s.jsonl", d.display()))
    );
    assert_eq!(fk.get_leaf_id(), Some("a1"));
}

/// A trailing slash: `open` opens `<dir>/s.jsonl` (leaf `a1`), as the reference does, rather
/// than failing with ENOTDIR.
#[test]
fn open_with_trailing_slash_opens_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = canon(&dir);
    plant(&d.join("s.jsonl"), &format!("{H3}\n{U1}\n{A1}\n"));
    let p = PathBuf::from(format!("{}/s.jsonl/", d.display()));
    let sm = SessionManager::open(&p, None, None).unwrap();
    assert_eq!(sm.get_leaf_id(), Some("a1"));
}

// ------------------------------------------------------------------------------------------
// History written by another writer between open and the held-append flush is never lost:
// the reference's full rewrite drops it (op-script b21d-external-append-before-flush); ours
// refuses by default and, under the reference's policy, keeps the row in the file or in a
// byte-exact backup ("no operation truncates or overwrites history without a byte-exact
// backup").
#[test]
fn held_flush_does_not_silently_discard_rows_appended_by_another_writer() {
    let dir = tempfile::tempdir().unwrap();
    let d = canon(&dir);
    let f = d.join("s.jsonl");
    plant(&f, &format!("{H3}\n{U1}\n"));
    let mut sm = SessionManager::open(&f, None, None).unwrap();
    sm.append_message(user()).unwrap(); // held: no assistant yet
    let ext = U1.replace(
        r#""id":"u1","parentId":null"#,
        r#""id":"ext","parentId":"u1""#,
    );
    session_store::io::append_raw(&f, format!("{ext}\n").as_bytes()).unwrap();
    // The full write finds `ext` beside the held row (both under u1): by default it refuses
    // and writes nothing (D30); the reference's policy adopts `ext` and writes both (D11).
    assert!(matches!(
        sm.append_message(assistant()),
        Err(session_store::AppendError::Diverged { ref tips, .. }) if tips == &["ext"]
    ));
    assert!(std::fs::read_to_string(&f).unwrap().contains(&ext));
    sm.set_foreign_append_policy(session_store::ForeignAppendPolicy::AppendOnOwnLeaf);
    sm.append_message(assistant()).unwrap(); // full rewrite
    let survived = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().path())
        .any(|p| std::fs::read_to_string(&p).is_ok_and(|t| t.contains(&ext)));
    assert!(
        survived,
        "the row another writer appended must survive in the file or in a byte-exact backup"
    );
}

// ------------------------------------------------------------------------------------------
// Atomic rewrites replace the inode but keep owner and group, as the reference's in-place
// `writeFileSync` does, so a migration run by root on a user's file leaves the user able to
// append to their own session. Only checkable as root (Linux: `/proc/self` is owned by the
// effective uid); elsewhere this test returns.
#[cfg(unix)]
#[test]
fn rewrite_keeps_the_file_owner() {
    use std::os::unix::fs::MetadataExt;
    if std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(1)
        != 0
    {
        eprintln!("rewrite_keeps_the_file_owner: needs root to chown; not checked");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let f = canon(&dir).join("v2.jsonl");
    plant(
        &f,
        &format!("{}\n{U1}\n", H3.replace(r#""version":3"#, r#""version":2"#)),
    );
    std::os::unix::fs::chown(&f, Some(65534), Some(65534)).unwrap();
    SessionManager::open(&f, None, None).unwrap(); // v2 → v3 rewrite
    let m = std::fs::metadata(&f).unwrap();
    assert!(
        std::fs::read_to_string(&f)
            .unwrap()
            .contains(r#""version":3"#)
    );
    assert_eq!((m.uid(), m.gid()), (65534, 65534), "owner must be kept");
}

// ------------------------------------------------------------------------------------------
// buildSessionContext timestamps of custom/branch-summary/compaction messages use
// `new Date(entry.timestamp).getTime()`; ours parses what V8's `Date.parse` does (see
// session-format/tests/v8_date_parsing.rs).
fn custom_message_context_timestamp(ts: &str) -> JsValue {
    let dir = tempfile::tempdir().unwrap();
    let f = canon(&dir).join("s.jsonl");
    let cm = format!(
        r#"{{"type":"custom_message","id":"c1","parentId":"u1","timestamp":{},"customType":"t","content":"x","display":true}}"#,
        to_json_string(&JsValue::from(ts))
    );
    plant(&f, &format!("{H3}\n{U1}\n{cm}\n"));
    let sm = SessionManager::open(&f, None, None).unwrap();
    let ctx = sm.build_session_context().unwrap().to_value().unwrap();
    let msgs = ctx.get("messages").unwrap();
    let JsValue::Array(items) = msgs else {
        panic!("messages")
    };
    items[1].get("timestamp").cloned().unwrap_or(JsValue::Null)
}

#[test]
fn context_timestamp_of_utc_string_date() {
    assert_eq!(
        custom_message_context_timestamp("Thu, 01 Jan 2026 00:00:00 GMT"),
        JsValue::Number(1_767_225_600_000.0)
    );
}

#[test]
fn context_timestamp_of_day_overflow_date() {
    assert_eq!(
        custom_message_context_timestamp("2026-02-30T00:00:00Z"),
        JsValue::Number(1_772_409_600_000.0)
    );
}

/// The reference finds `" 2026-01-01T00:00:00Z "` invalid (it throws; D7 maps invalid to
/// `null`), and so does ours.
#[test]
fn context_timestamp_of_padded_date_is_invalid() {
    assert_eq!(
        custom_message_context_timestamp(" 2026-01-01T00:00:00Z "),
        JsValue::Null
    );
}

// ------------------------------------------------------------------------------------------
// list (`buildSessionInfo`): the module promises to skip the files on which the reference
// throws, and to build `firstMessage`/`allMessagesText` as the reference does. Checked with
// `SessionManager.list(cwd, dir)` of openclaw 2026.6.11.
fn listed(dir: &Path) -> Vec<session_store::SessionInfo> {
    SessionManager::list("/x", Some(dir)).unwrap()
}

/// A `null` line: `entry.type` throws in the reference, so the file is not listed.
#[test]
fn list_skips_a_file_with_a_null_line() {
    let dir = tempfile::tempdir().unwrap();
    plant(&dir.path().join("a.jsonl"), &format!("{H3}\n{U1}\nnull\n"));
    assert!(listed(dir.path()).is_empty());
}

/// A `null` content block: `block.type` throws in the reference, so the file is not listed.
#[test]
fn list_skips_a_file_with_a_null_content_block() {
    let dir = tempfile::tempdir().unwrap();
    let u = U1.replace(r#""content":[{"#, r#""content":[null,{"#);
    plant(&dir.path().join("b.jsonl"), &format!("{H3}\n{u}\n"));
    assert!(listed(dir.path()).is_empty());
}

/// Non-string `text` values are joined with JavaScript's `String()` rules.
#[test]
fn list_text_of_non_string_block_text_follows_js_string_conversion() {
    let dir = tempfile::tempdir().unwrap();
    let u = U1.replace(
        r#""content":[{"type":"text","text":"q"}]"#,
        r#""content":[{"type":"text","text":{"a":1}},{"type":"text","text":["a","b",["c"]]}]"#,
    );
    plant(&dir.path().join("c.jsonl"), &format!("{H3}\n{u}\n"));
    let l = listed(dir.path());
    assert_eq!(l.len(), 1);
    assert_eq!(l[0].first_message, "[object Object] a,b,c");
}

/// With no usable message or header time, `modified` is `stats.mtime`, which node builds with
/// `Math.round(mtimeMs)`; ours rounds the same way.
#[test]
fn list_modified_from_mtime_rounds_like_node() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("d.jsonl");
    let h = H3.replace("2026-01-01T00:00:00.000Z", "not a date");
    plant(&f, &format!("{h}\n"));
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_micros(1_767_225_600_000_900);
    std::fs::File::options()
        .write(true)
        .open(&f)
        .unwrap()
        .set_modified(t)
        .unwrap();
    let l = listed(dir.path());
    assert_eq!(l.len(), 1);
    assert_eq!(l[0].modified, 1_767_225_600_001.0);
}

// ------------------------------------------------------------------------------------------
// Deep nesting (JSON nested deeper than 128 levels is tolerated): a ~40 KB line holding 20 000
// nested arrays must not abort the process with a stack overflow on a 2 MiB thread (the
// std/tokio worker default) when `SessionContext::to_value` materialises message payloads;
// `open` and `EntryRef::value` cope with the same line. (OpenClaw 2026.6.11 throws a catchable
// `RangeError` from `open` at ≥5 000 levels; an uncatchable abort is worse than either.)
// Expected: the process survives; `to_value` may return Ok or Err. The check runs in a child
// process so the abort cannot take the other tests down.
#[test]
fn deeply_nested_payload_does_not_abort_context_building() {
    const CHILD: &str = "SESSION_STORE_DEEP_NESTING_CHILD";
    if std::env::var_os(CHILD).is_some() {
        let dir = tempfile::tempdir().unwrap();
        let f = canon(&dir).join("s.jsonl");
        let depth = 20_000;
        let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let u = U1.replace(
            r#""timestamp":1767225600000}}"#,
            &format!(r#""timestamp":1767225600000,"deep":{deep}}}}}"#),
        );
        plant(&f, &format!("{H3}\n{u}\n"));
        let ok = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                let sm = SessionManager::open(&f, None, None).unwrap();
                let ctx = sm.build_session_context().unwrap();
                let _ = ctx.to_value();
            })
            .unwrap()
            .join();
        assert!(ok.is_ok());
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "deeply_nested_payload_does_not_abort_context_building",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "child process died: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}
