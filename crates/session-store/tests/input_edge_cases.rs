//! Fixes for the breaker findings that `breaker_store.rs` does not pin down exactly: lossless
//! ids in everything the store writes, depth-safe context building, the id hasher, paths,
//! concurrent writers and conflict backups, rewrite side effects (owner, mode, permissions),
//! near-linear crafted shapes, `list`, the runner's argument checks, and writable-manager
//! diagnostics. Reference behaviour was checked with
//! `node xtask/conformance/runner.mjs --reference openclaw` where a test says so.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

#[cfg(unix)]
mod as_unprivileged;
mod support;

use std::path::{Path, PathBuf};

#[cfg(unix)]
use as_unprivileged::{PERM_CHILD, is_root, open_dir, run_as_nobody};
use session_format::json::{JsString, JsValue, parse_value, to_json_string};
use session_store::{AppendError, OpenError, SessionManager};
use support::{HEADER, msg_line};

fn canon(dir: &tempfile::TempDir) -> PathBuf {
    std::fs::canonicalize(dir.path()).unwrap()
}

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn lone(units: &[u16]) -> JsString {
    JsString::from_utf16(units)
}

fn field(line: &str, key: &str) -> JsValue {
    parse_value(line.as_bytes())
        .unwrap()
        .get(key)
        .cloned()
        .unwrap_or(JsValue::Null)
}

// ------------------------------------------------------------------------------------------
// 1. Lone-surrogate ids survive everything the store writes.

/// A v3 file whose entries are `\ud800` ← `\udc00`: labels, compaction, a held flush's
/// synthesised leaf control, a branched session's re-parented rows and re-created labels, and
/// `remove_trailing_entries` all write the exact escapes.
#[test]
fn lone_surrogate_ids_are_written_back_exactly() {
    let dir = support::tempdir();
    let d = canon(&dir);
    let f = d.join("s.jsonl");
    let u = msg_line("X", None, "user", "q", 1).replace(r#""id":"X""#, r#""id":"\ud800""#);
    let a = msg_line("Y", Some("X"), "assistant", "r", 2)
        .replace(r#""id":"Y""#, r#""id":"\udc00""#)
        .replace(r#""parentId":"X""#, r#""parentId":"\ud800""#);
    support::write(&f, &format!("{HEADER}\n{u}\n{a}\n"));
    let mut sm = SessionManager::open(&f, None, None).unwrap();
    let d800 = lone(&[0xD800]);
    let dc00 = lone(&[0xDC00]);
    assert_eq!(sm.get_leaf_id_js(), Some(&dc00));
    assert_eq!(sm.get_leaf_id(), Some("\u{FFFD}"));
    // A label on the first entry, addressed exactly.
    sm.append_label_change_js(&d800, Some(JsValue::from("L")))
        .unwrap();
    sm.append_compaction_js("S", &d800, 5.0, None, None)
        .unwrap();
    let lines = support::lines(&f);
    assert_eq!(lines.len(), 5);
    assert!(lines[3].contains(r#""parentId":"\udc00""#), "{}", lines[3]);
    assert!(lines[3].contains(r#""targetId":"\ud800""#), "{}", lines[3]);
    assert!(
        lines[4].contains(r#""firstKeptEntryId":"\ud800""#),
        "{}",
        lines[4]
    );
    assert_eq!(sm.get_label("\u{FFFD}"), None, "a &str cannot name it");
    let ctx = sm.build_session_context().unwrap();
    // Compaction summary, then the kept entries from `\ud800` on.
    assert_eq!(ctx.messages.len(), 3);

    // Branch back to the first entry, then branch the session from the second.
    sm.branch_js(&d800).unwrap();
    assert_eq!(sm.get_leaf_id_js(), Some(&d800));
    let new_file = sm.create_branched_session_js(&dc00).unwrap().unwrap();
    let branched = support::lines(&new_file);
    // header, \ud800, \udc00 (parent unchanged: bytes kept), label re-created on \ud800.
    assert_eq!(branched.len(), 4, "{branched:?}");
    assert_eq!(branched[1], u);
    assert_eq!(branched[2], a);
    assert!(branched[3].contains(r#""parentId":"\udc00""#));
    assert!(branched[3].contains(r#""targetId":"\ud800""#));
    assert!(branched[3].contains(r#""label":"L""#));
}

/// `remove_trailing_entries` re-parents a row that hung below a removed lone-surrogate id onto
/// the exact surviving id, and a held flush after `branch` writes a leaf control naming the
/// exact ids.
#[test]
fn rewrites_reparent_and_record_leaf_with_exact_ids() {
    let dir = support::tempdir();
    let d = canon(&dir);
    let f = d.join("s.jsonl");
    let u = msg_line("X", None, "user", "q", 1).replace(r#""id":"X""#, r#""id":"\ud800""#);
    let a = msg_line("Y", Some("X"), "assistant", "r", 2)
        .replace(r#""id":"Y""#, r#""id":"\udc00""#)
        .replace(r#""parentId":"X""#, r#""parentId":"\ud800""#);
    let opaque = r#"{"type":"plugin","id":"o1","parentId":"\udc00"}"#;
    support::write(&f, &format!("{HEADER}\n{u}\n{a}\n{opaque}\n"));
    let mut sm = SessionManager::open(&f, None, None).unwrap();
    let removed = sm
        .remove_trailing_entries(|e| e.is_assistant_message(), None)
        .unwrap();
    assert_eq!(removed, 1);
    let lines = support::lines(&f);
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert_eq!(lines[1], u);
    assert_eq!(
        lines[2],
        r#"{"type":"plugin","id":"o1","parentId":"\ud800"}"#
    );
    // The file-implied append cursor is `o1`, memory's is `\ud800`: a leaf control records it.
    assert_eq!(field(&lines[3], "type"), JsValue::from("leaf"));
    assert_eq!(field(&lines[3], "parentId"), JsValue::from("o1"));
    assert_eq!(
        field(&lines[3], "targetId"),
        JsValue::String(lone(&[0xD800]))
    );
    assert!(lines[3].contains(r#""targetId":"\ud800""#), "{}", lines[3]);
    assert!(!lines[3].contains("appendParentId"), "{}", lines[3]);
    let sm = SessionManager::open(&f, None, None).unwrap();
    assert_eq!(sm.get_leaf_id_js(), Some(&lone(&[0xD800])));
}

/// A header `cwd` holding a lone surrogate is copied exactly into a branched session's header
/// (op-script b24d-lone-cwd: the reference writes `"cwd":"/x\ud800"`), and the session name
/// is readable exactly (b24c).
#[test]
fn lone_surrogate_cwd_and_name_survive() {
    let dir = support::tempdir();
    let d = canon(&dir);
    let f = d.join("s.jsonl");
    let h = HEADER.replace(r#""cwd":"/home/dev/project""#, r#""cwd":"/x\ud800""#);
    let info = r#"{"type":"session_info","id":"i1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","name":" \ud800x "}"#;
    support::write(
        &f,
        &format!(
            "{h}\n{}\n{}\n{info}\n",
            msg_line("u1", None, "user", "q", 1),
            msg_line("a1", Some("u1"), "assistant", "r", 2)
        ),
    );
    let mut sm = SessionManager::open(&f, None, None).unwrap();
    assert_eq!(sm.get_cwd(), "/x\u{FFFD}");
    assert_eq!(
        sm.get_session_name_js().unwrap(),
        Some(lone(&[0xD800, 0x78]))
    );
    assert_eq!(sm.get_session_name().unwrap().as_deref(), Some("\u{FFFD}x"));
    let nf = sm.create_branched_session("a1").unwrap().unwrap();
    let first = support::lines(&nf).remove(0);
    assert!(first.contains(r#""cwd":"/x\ud800""#), "{first}");
}

// ------------------------------------------------------------------------------------------
// 2. Context building never recurses on payload depth.

/// A message payload nested to the parser's limit is materialised and serialised on a thread
/// with a 512 KiB stack; the context message is the payload, byte for byte.
#[test]
fn deep_payload_context_on_a_small_stack() {
    let depth = session_format::json::MAX_DEPTH - 3;
    let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let payload = format!(r#"{{"role":"user","content":"x","timestamp":1,"deep":{deep}}}"#);
    let line = format!(
        r#"{{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{payload}}}"#
    );
    let dir = support::tempdir();
    let f = canon(&dir).join("s.jsonl");
    support::write(&f, &format!("{HEADER}\n{line}\n"));
    let out = std::thread::Builder::new()
        .stack_size(512 << 10)
        .spawn(move || {
            let sm = SessionManager::open(&f, None, None).unwrap();
            let ctx = sm.build_session_context().unwrap();
            let v = ctx.messages[0].to_value().unwrap();
            let text = to_json_string(&v);
            let whole = to_json_string(&ctx.to_value().unwrap());
            (text, whole.len())
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(out.0, payload);
    assert_eq!(
        out.1,
        r#"{"messages":[],"thinkingLevel":"off","model":null}"#.len() + payload.len()
    );
}

// ------------------------------------------------------------------------------------------
// 3. Patterned ids index like random ones (values only; timings are in the report).

#[test]
fn sequential_zero_padded_ids_index_correctly() {
    let n = 20_000;
    let mut text = format!("{HEADER}\n");
    let mut parent: Option<String> = None;
    for i in 0..n {
        let id = format!("{i:08}");
        let role = if i % 2 == 1 { "assistant" } else { "user" };
        text.push_str(&msg_line(&id, parent.as_deref(), role, "x", 1));
        text.push('\n');
        parent = Some(id);
    }
    let dir = support::tempdir();
    let f = canon(&dir).join("s.jsonl");
    support::write(&f, &text);
    let sm = SessionManager::open(&f, None, None).unwrap();
    assert_eq!(sm.entry_count(), n);
    assert_eq!(sm.get_leaf_id(), Some("00019999"));
    let branch = sm.get_branch(None);
    assert_eq!(branch.len(), n);
    assert_eq!(branch[0].id(), "00000000");
    assert_eq!(sm.get_children(Some("00012345"))[0].id(), "00012346");
    assert_eq!(
        sm.get_entry("00000007").unwrap().parent_id().as_deref(),
        Some("00000006")
    );
}

// ------------------------------------------------------------------------------------------
// 4. appendMessage(null).

/// Through the runner: `null` gives the reference's error text; a missing `message` is refused
/// by the runner; every other value is accepted as in the reference (checked with node:
/// `"str"`, `5`, `[]`, `{}`, `true`, `false`, `0`, `""`, `[1]` all append).
#[test]
fn runner_append_message_values() {
    let script = br#"{"ops":[
        {"op":"inMemory"},
        {"op":"appendMessage","message":null},
        {"op":"appendMessage","message":"str"},
        {"op":"appendMessage","message":5},
        {"op":"appendMessage","message":[]},
        {"op":"appendMessage","message":false},
        {"op":"appendMessage"}
    ]}"#;
    let dir = support::tempdir();
    let out = session_store::replay::run_script(script, dir.path()).unwrap();
    assert_eq!(
        to_json_string(&out.results),
        r#"[{"op":1,"error":"Cannot read properties of null (reading 'role')"},{"op":6,"error":"op 6 appendMessage: message is required"}]"#
    );
    let mut sm = SessionManager::in_memory("/p");
    let err = sm.append_message(JsValue::Null).unwrap_err();
    assert!(matches!(err, AppendError::NullMessage));
    assert_eq!(
        err.to_string(),
        "message must not be null (nothing was appended)"
    );
    assert_eq!(sm.entry_count(), 0);
    assert_eq!(sm.get_leaf_id(), None);
}

// ------------------------------------------------------------------------------------------
// 5. Paths.

/// The runner resolves `file` like `path.resolve(D, file)` (op-scripts b30-path-0…3): `./`,
/// `sub/..`, `.//` and a trailing `/` all name `<D>/f.jsonl`, and `forkFrom` then writes
/// `parentSession: "<D>/f.jsonl"` (as the node runner's reference call does).
#[test]
fn runner_resolves_file_paths_like_path_resolve() {
    let header = HEADER.replace('"', "\\\"");
    let u = msg_line("u1", None, "user", "q", 1).replace('"', "\\\"");
    for file in ["./f.jsonl", "sub/../f.jsonl", ".//f.jsonl", "f.jsonl/"] {
        let script = format!(
            r#"{{"ops":[
            {{"op":"writeFile","file":"f.jsonl","content":"{header}\n{u}\n"}},
            {{"op":"open","file":"{file}"}},
            {{"op":"snapshot","label":"o"}},
            {{"op":"forkFrom","file":"{file}"}},
            {{"op":"snapshot","label":"f"}}
        ]}}"#
        );
        let dir = support::tempdir();
        let out = session_store::replay::run_script(script.as_bytes(), dir.path()).unwrap();
        let d = out.dir.to_string_lossy().into_owned();
        let results = out.results.as_array().unwrap();
        assert_eq!(results.len(), 2, "{file}: {}", to_json_string(&out.results));
        let opened = results[0].get("snapshot").unwrap();
        assert_eq!(opened.get("leafId"), Some(&JsValue::from("u1")), "{file}");
        let forked = results[1].get("snapshot").unwrap();
        assert_eq!(
            forked.get("header").unwrap().get("parentSession"),
            Some(&JsValue::from(format!("{d}/f.jsonl"))),
            "{file}"
        );
    }
}

/// `open` and `open_read_only` resolve lexically; the manager's file is the normalised path.
#[test]
fn open_paths_are_normalised_lexically() {
    let dir = support::tempdir();
    let d = canon(&dir);
    support::write(
        &d.join("s.jsonl"),
        &format!("{HEADER}\n{}\n", msg_line("u1", None, "user", "q", 1)),
    );
    let ro = SessionManager::open_read_only(&d.join("nope/./../s.jsonl/"), None).unwrap();
    assert_eq!(ro.report.path, d.join("s.jsonl"));
    assert_eq!(
        ro.session.get_session_file(),
        Some(d.join("s.jsonl").as_path())
    );
    let sm = SessionManager::open(&d.join("a/b/../../s.jsonl"), None, None).unwrap();
    assert_eq!(sm.get_session_file(), Some(d.join("s.jsonl").as_path()));
    assert_eq!(sm.get_session_dir(), d.as_path());
    assert_eq!(sm.get_leaf_id(), Some("u1"));
}

// ------------------------------------------------------------------------------------------
// 6. Other writers: adopt what they appended, back up what they changed.

/// Held appends, then another writer appends `ext`, then the first assistant: the full write
/// keeps `ext` verbatim before the held rows (the reference drops it: op-script
/// b21d-external-append-before-flush), and the manager now knows it. `ext` hangs beside the
/// held rows, so this is the reference's policy, `AppendOnOwnLeaf` (by default the write
/// refuses with `Diverged`, D30: `tests/foreign_appends_full_writes.rs`).
#[test]
fn held_flush_adopts_lines_another_writer_appended() {
    let dir = support::tempdir();
    let d = canon(&dir);
    let f = d.join("s.jsonl");
    let u1 = msg_line("u1", None, "user", "q", 1);
    support::write(&f, &format!("{HEADER}\n{u1}\n"));
    let mut sm = SessionManager::open(&f, None, None).unwrap();
    sm.set_foreign_append_policy(session_store::ForeignAppendPolicy::AppendOnOwnLeaf);
    let n1 = sm.append_message(support::user("n1", 1)).unwrap();
    let ext = msg_line("ext", Some("u1"), "user", "e", 3);
    session_store::io::append_raw(&f, format!("{ext}\n").as_bytes()).unwrap();
    let n2 = sm.append_message(support::assistant("n2", 2)).unwrap();
    let lines = support::lines(&f);
    assert_eq!(lines.len(), 5, "{lines:?}");
    assert_eq!(lines[0], HEADER);
    assert_eq!(lines[1], u1);
    assert_eq!(lines[2], ext);
    assert_eq!(field(&lines[3], "id"), JsValue::from(n1.as_str()));
    assert_eq!(field(&lines[3], "parentId"), JsValue::from("u1"));
    assert_eq!(field(&lines[4], "id"), JsValue::from(n2.as_str()));
    assert_eq!(files(&d), ["s.jsonl"], "no backup needed");
    assert_eq!(sm.get_leaf_id(), Some(n2.as_str()));
    assert_eq!(
        support::ids(sm.get_entries()),
        ["u1", "ext", n1.as_str(), n2.as_str()]
    );
    let diag = sm.diagnostics();
    assert_eq!(diag.adopted_lines, 1);
    assert!(diag.conflict_backups.is_empty());
    // The file reads back the same.
    let re = SessionManager::open(&f, None, None).unwrap();
    assert_eq!(re.get_leaf_id(), Some(n2.as_str()));
    assert_eq!(
        support::ids(re.get_branch(None)),
        ["u1", n1.as_str(), n2.as_str()]
    );
}

/// A plain append that finds foreign lines before it adopts them (and, as they continue its
/// leaf, fast-forwards onto them: D30), so a later full rewrite (`remove_trailing_entries`)
/// keeps them in the live file.
#[test]
fn plain_append_adopts_foreign_lines_before_it() {
    let dir = support::tempdir();
    let d = canon(&dir);
    let f = d.join("s.jsonl");
    let u1 = msg_line("u1", None, "user", "q", 1);
    let a1 = msg_line("a1", Some("u1"), "assistant", "r", 2);
    support::write(&f, &format!("{HEADER}\n{u1}\n{a1}\n"));
    let mut sm = SessionManager::open(&f, None, None).unwrap();
    let ext = msg_line("ext", Some("a1"), "user", "e", 3);
    session_store::io::append_raw(&f, format!("{ext}\n").as_bytes()).unwrap();
    let n1 = sm.append_message(support::user("n1", 1)).unwrap();
    assert_eq!(
        support::ids(sm.get_entries()),
        ["u1", "a1", "ext", n1.as_str()]
    );
    assert_eq!(sm.get_leaf_id(), Some(n1.as_str()));
    assert_eq!(
        sm.get_entry(&n1).unwrap().parent_id().as_deref(),
        Some("ext")
    );
    let removed = sm.remove_trailing_entries(|e| e.id() == n1, None).unwrap();
    assert_eq!(removed, 1);
    let lines = support::lines(&f);
    assert_eq!(lines[..4], [HEADER.to_owned(), u1, a1, ext]);
    assert_eq!(files(&d), ["s.jsonl"]);
    assert_eq!(sm.diagnostics().adopted_lines, 1);
}

/// Another writer replaced the file: before `remove_trailing_entries` rewrites it, the foreign
/// bytes are backed up exactly (`<file>.conflict-<ts>-<8hex>.jsonl`, same mode), and the backup
/// is reported.
#[test]
fn rewrite_over_a_changed_file_backs_it_up_first() {
    let dir = support::tempdir();
    let d = canon(&dir);
    let f = d.join("s.jsonl");
    let u1 = msg_line("u1", None, "user", "q", 1);
    let a1 = msg_line("a1", Some("u1"), "assistant", "r", 2);
    support::write(&f, &format!("{HEADER}\n{u1}\n{a1}\n"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o640)).unwrap();
    }
    let mut sm = SessionManager::open(&f, None, None).unwrap();
    let foreign = b"{\"other\":\"app\"}\nnot json\n";
    session_store::io::write_raw(&f, foreign).unwrap();
    let removed = sm
        .remove_trailing_entries(|e| e.is_assistant_message(), None)
        .unwrap();
    assert_eq!(removed, 1);
    assert_eq!(support::lines(&f), [HEADER.to_owned(), u1]);
    let diag = sm.diagnostics();
    assert_eq!(diag.conflict_backups.len(), 1);
    let backup = &diag.conflict_backups[0];
    let name = backup.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("s.jsonl.conflict-"), "{name}");
    assert!(name.ends_with(".jsonl"));
    let tag = &name["s.jsonl.conflict-".len()..name.len() - ".jsonl".len()];
    // <YYYY-MM-DDTHH-MM-SS-mmmZ>-<8 hex>
    assert_eq!(tag.len(), 24 + 1 + 8, "{tag}");
    assert!(tag[25..].chars().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(std::fs::read(backup).unwrap(), foreign);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode(backup), 0o640);
        assert_eq!(mode(&f), 0o640);
    }
    assert!(!diag.is_clean());
    // A reopen starts a fresh report.
    let re = SessionManager::open(&f, None, None).unwrap();
    assert!(re.diagnostics().conflict_backups.is_empty());
}

/// The first full write of a held session whose file another writer truncated and rewrote:
/// backed up, then written.
#[test]
fn held_flush_over_a_rewritten_file_backs_it_up() {
    let dir = support::tempdir();
    let d = canon(&dir);
    let f = d.join("s.jsonl");
    let u1 = msg_line("u1", None, "user", "q", 1);
    support::write(&f, &format!("{HEADER}\n{u1}\n"));
    let mut sm = SessionManager::open(&f, None, None).unwrap();
    sm.append_message(support::user("n1", 1)).unwrap();
    let other = format!("{HEADER}\n{}\n", msg_line("zz", None, "user", "z", 5));
    support::write(&f, &other);
    sm.append_message(support::assistant("n2", 2)).unwrap();
    let diag = sm.diagnostics();
    assert_eq!(diag.conflict_backups.len(), 1);
    assert_eq!(support::read(&diag.conflict_backups[0]), other);
    let lines = support::lines(&f);
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[1], u1);
}

// ------------------------------------------------------------------------------------------
// 7. Rewrite side effects.

/// Setuid/setgid/sticky bits are kept with the permission bits by a migration rewrite.
#[cfg(unix)]
#[test]
fn rewrite_keeps_full_mode_bits() {
    use std::os::unix::fs::PermissionsExt;
    let dir = support::tempdir();
    let f = canon(&dir).join("v2.jsonl");
    support::write(
        &f,
        &format!(
            "{}\n{}\n",
            HEADER.replace(r#""version":3"#, r#""version":2"#),
            msg_line("u1", None, "user", "q", 1)
        ),
    );
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o2640)).unwrap();
    SessionManager::open(&f, None, None).unwrap();
    assert!(support::read(&f).contains(r#""version":3"#));
    assert_eq!(
        std::fs::metadata(&f).unwrap().permissions().mode() & 0o7777,
        0o2640
    );
}

#[cfg(unix)]
fn v2_text() -> String {
    format!(
        "{}\n{}\n",
        HEADER.replace(r#""version":3"#, r#""version":2"#),
        msg_line("u1", None, "user", "q", 1)
    )
}

/// A file the process may not write is not replaced (the reference fails with `EACCES`): the
/// migration rewrite fails with `PermissionDenied` naming the file, which keeps its bytes. As
/// root the check runs in a child process as `nobody`.
#[cfg(unix)]
#[test]
fn rewrite_refuses_a_file_the_process_cannot_write() {
    use std::os::unix::fs::PermissionsExt;
    const NAME: &str = "rewrite_refuses_a_file_the_process_cannot_write";
    if let Some(d) = std::env::var_os(PERM_CHILD) {
        let f = PathBuf::from(d).join("v2.jsonl");
        let before = std::fs::read(&f).unwrap();
        let err = SessionManager::open(&f, None, None).unwrap_err();
        let OpenError::Write { path, source } = &err else {
            panic!("{err:?}")
        };
        assert_eq!(path, &f);
        assert_eq!(source.kind(), std::io::ErrorKind::PermissionDenied);
        assert!(
            source.to_string().contains(&*f.to_string_lossy()),
            "{source}"
        );
        assert!(source.to_string().contains("not writable"), "{source}");
        assert_eq!(std::fs::read(&f).unwrap(), before);
        assert_eq!(files(f.parent().unwrap()), ["v2.jsonl"]);
        return;
    }
    let (_guard, d) = open_dir(0o777);
    let f = d.join("v2.jsonl");
    support::write(&f, &v2_text());
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o444)).unwrap();
    if is_root() {
        run_as_nobody(NAME, &d);
    } else {
        // The same check in-process (this user cannot write a 0444 file).
        let err = SessionManager::open(&f, None, None).unwrap_err();
        assert!(
            matches!(&err, OpenError::Write { source, .. } if source.kind() == std::io::ErrorKind::PermissionDenied),
            "{err:?}"
        );
    }
    assert_eq!(support::read(&f), v2_text());
}

/// A directory where no temporary file can be created: the rewrite fails with an error naming
/// the directory, and the file (writable in place) is not rewritten in place either.
#[cfg(unix)]
#[test]
fn rewrite_in_an_unwritable_directory_names_the_directory() {
    use std::os::unix::fs::PermissionsExt;
    const NAME: &str = "rewrite_in_an_unwritable_directory_names_the_directory";
    if let Some(d) = std::env::var_os(PERM_CHILD) {
        let d = PathBuf::from(d);
        let f = d.join("v2.jsonl");
        let before = std::fs::read(&f).unwrap();
        let err = SessionManager::open(&f, None, None).unwrap_err();
        let OpenError::Write { source, .. } = &err else {
            panic!("{err:?}")
        };
        assert_eq!(source.kind(), std::io::ErrorKind::PermissionDenied);
        let text = source.to_string();
        assert!(
            text.contains(&format!("in directory {}", d.display())),
            "{text}"
        );
        assert_eq!(std::fs::read(&f).unwrap(), before);
        return;
    }
    let (_guard, d) = open_dir(0o777);
    let f = d.join("v2.jsonl");
    support::write(&f, &v2_text());
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o666)).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o555)).unwrap();
    if is_root() {
        run_as_nobody(NAME, &d);
    } else {
        let err = SessionManager::open(&f, None, None).unwrap_err();
        assert!(err.to_string().contains(&d.display().to_string()), "{err}");
    }
    assert_eq!(support::read(&f), v2_text());
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Owner and group are kept by a rewrite (root only: a non-root process cannot create a file
/// owned by someone else, and then keeps the group when it may).
#[cfg(unix)]
#[test]
fn conflict_backup_and_rewrite_keep_the_owner() {
    use std::os::unix::fs::MetadataExt;
    if !is_root() {
        eprintln!("conflict_backup_and_rewrite_keep_the_owner: needs root; not checked");
        return;
    }
    let dir = support::tempdir();
    let d = canon(&dir);
    let f = d.join("s.jsonl");
    support::write(
        &f,
        &format!(
            "{HEADER}\n{}\n{}\n",
            msg_line("u1", None, "user", "q", 1),
            msg_line("a1", Some("u1"), "assistant", "r", 2)
        ),
    );
    std::os::unix::fs::chown(&f, Some(65534), Some(65534)).unwrap();
    let mut sm = SessionManager::open(&f, None, None).unwrap();
    support::write(&f, "{\"x\":1}\n");
    std::os::unix::fs::chown(&f, Some(65534), Some(65534)).unwrap();
    sm.remove_trailing_entries(|e| e.is_assistant_message(), None)
        .unwrap();
    let owner = |p: &Path| {
        let m = std::fs::metadata(p).unwrap();
        (m.uid(), m.gid())
    };
    assert_eq!(owner(&f), (65534, 65534));
    assert_eq!(owner(&sm.diagnostics().conflict_backups[0]), (65534, 65534));
}

// ------------------------------------------------------------------------------------------
// 9. Crafted shapes stay near-linear (values asserted; timings in the report).

/// 3,000 opaque rows in a chain, then 3,000 entries all hanging off its last row.
#[test]
fn entries_below_a_long_opaque_chain() {
    let k = 3_000;
    let mut text = format!("{HEADER}\n{}\n", msg_line("root", None, "user", "q", 1));
    let mut p = "root".to_owned();
    for i in 0..k {
        text.push_str(&format!(
            "{{\"type\":\"plugin\",\"id\":\"o{i}\",\"parentId\":\"{p}\"}}\n"
        ));
        p = format!("o{i}");
    }
    for i in 0..k {
        text.push_str(&msg_line(&format!("z{i}"), Some(&p), "assistant", "r", 2));
        text.push('\n');
    }
    let dir = support::tempdir();
    let f = canon(&dir).join("s.jsonl");
    support::write(&f, &text);
    let ro = SessionManager::open_read_only(&f, None).unwrap();
    assert!(ro.report.is_clean(), "{:?}", ro.report);
    let sm = ro.session;
    assert_eq!(sm.entry_count(), k + 1);
    assert_eq!(sm.get_leaf_id(), Some("z2999"));
    // Every z resolves through the chain to `root`.
    assert_eq!(sm.get_children(Some("root")).len(), k);
    assert_eq!(
        sm.get_entry("z1234").unwrap().parent_id().as_deref(),
        Some("root")
    );
    assert_eq!(support::ids(sm.get_branch(None)), ["root", "z2999"]);
    let tree = sm.get_tree();
    assert_eq!(tree.roots.len(), 1);
    assert_eq!(tree.nodes[tree.roots[0]].children.len(), k);
    // branch() to an opaque id in the middle selects its canonical ancestor.
    let mut sm = sm;
    sm.branch("o1500").unwrap();
    assert_eq!(sm.get_leaf_id(), Some("root"));
}

/// One parent cycle through 4,000 entries: the read-only report names it once, members in file
/// order.
#[test]
fn one_long_parent_cycle_is_reported_once() {
    let k = 4_000;
    let mut text = format!("{HEADER}\n");
    for i in 0..k {
        text.push_str(&msg_line(
            &format!("y{i}"),
            Some(&format!("y{}", (i + 1) % k)),
            "assistant",
            "r",
            1,
        ));
        text.push('\n');
    }
    let dir = support::tempdir();
    let f = canon(&dir).join("s.jsonl");
    support::write(&f, &text);
    let ro = SessionManager::open_read_only(&f, None).unwrap();
    assert_eq!(ro.report.cycles.len(), 1);
    let cycle = &ro.report.cycles[0];
    assert_eq!(cycle.len(), k);
    assert_eq!(cycle[0], "y0");
    assert_eq!(cycle[k - 1], format!("y{}", k - 1));
    assert!(cycle.windows(2).all(|w| {
        let n = |s: &str| s[1..].parse::<usize>().unwrap();
        n(&w[0]) + 1 == n(&w[1])
    }));
    assert_eq!(ro.session.get_tree().nodes.len(), k);
    assert_eq!(ro.session.get_tree().roots.len(), 1);
}

// ------------------------------------------------------------------------------------------
// 11. list, checked against `SessionManager.list` of OpenClaw 2026.6.11.

fn listed(dir: &Path) -> Vec<session_store::SessionInfo> {
    SessionManager::list("/x", Some(dir)).unwrap()
}

/// `message.timestamp: 1e300` gives an invalid `Date` in the reference (JSON `null`); ours
/// holds NaN. A numeric header id is `String(id)`. `null`/missing `text` join as empty, a
/// number as JavaScript prints it.
#[test]
fn list_invalid_dates_numeric_ids_and_odd_texts() {
    let dir = support::tempdir();
    let d = dir.path();
    support::write(
        &d.join("k.jsonl"),
        &format!(
            "{HEADER}\n{}\n",
            r#"{"type":"message","id":"u1","parentId":null,"timestamp":"x","message":{"role":"user","content":"x","timestamp":1e300}}"#
        ),
    );
    support::write(
        &d.join("l.jsonl"),
        &format!(
            "{}\n{}\n",
            HEADER.replace(
                r#""id":"0195f000-0000-7000-8000-000000000001""#,
                r#""id":5"#
            ),
            msg_line("u1", None, "user", "q", 1)
        ),
    );
    support::write(
        &d.join("c.jsonl"),
        &format!(
            "{HEADER}\n{}\n",
            r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":1e21},{"type":"text"},{"type":"text","text":null},{"type":"text","text":[null,true,1.5]}],"timestamp":5.7}}"#
        ),
    );
    let mut l = listed(d);
    l.sort_by(|a, b| a.path.cmp(&b.path));
    assert_eq!(l.len(), 3);
    assert_eq!(l[0].first_message, "1e+21   ,true,1.5");
    assert_eq!(l[0].modified, 5.0, "new Date(5.7) truncates");
    assert!(l[1].modified.is_nan());
    assert_eq!(l[1].created, Some(1_767_225_600_000.0));
    assert_eq!(l[2].id, "5");
    assert_eq!(l[2].modified, 1_767_225_600_000.0);
}

// ------------------------------------------------------------------------------------------
// 13. The runner refuses wrong-typed or missing arguments instead of inventing values.

#[test]
fn runner_refuses_loosely_typed_arguments() {
    let script = br#"{"ops":[
        {"op":"inMemory"},
        {"op":"appendMessage","as":"u","message":{"role":"user","content":"q","timestamp":1}},
        {"op":"appendCompaction","summary":"s","firstKeptEntryId":"$u"},
        {"op":"appendCustomMessageEntry","customType":"t","content":"c"},
        {"op":"appendCustomEntry","customType":null},
        {"op":"appendModelChange","provider":"p","modelId":5},
        {"op":"appendThinkingLevelChange"},
        {"op":"appendCompaction","summary":"s","firstKeptEntryId":"$u","tokensBefore":1,"fromHook":"yes"},
        {"op":"branch","id":7},
        {"op":"open","file":3},
        {"op":"appendCompaction","summary":"s","firstKeptEntryId":"$u","tokensBefore":1},
        {"op":"snapshot"}
    ]}"#;
    let dir = support::tempdir();
    let out = session_store::replay::run_script(script, dir.path()).unwrap();
    let results = out.results.as_array().unwrap();
    let errors: Vec<String> = results[..results.len() - 1]
        .iter()
        .map(to_json_string)
        .collect();
    assert_eq!(
        errors,
        [
            r#"{"op":2,"error":"op 2 appendCompaction: tokensBefore must be a number"}"#,
            r#"{"op":3,"error":"op 3 appendCustomMessageEntry: display must be a boolean"}"#,
            r#"{"op":4,"error":"op 4 appendCustomEntry: customType must be a string"}"#,
            r#"{"op":5,"error":"op 5 appendModelChange: modelId must be a string"}"#,
            r#"{"op":6,"error":"op 6 appendThinkingLevelChange: thinkingLevel must be a string"}"#,
            r#"{"op":7,"error":"op 7 appendCompaction: fromHook must be a boolean"}"#,
            r#"{"op":8,"error":"op 8 branch: id must be a string"}"#,
            r#"{"op":9,"error":"op 9 open: file must be a string"}"#,
        ]
    );
    // Only the well-typed ops changed the session.
    let snap = results.last().unwrap().get("snapshot").unwrap();
    let JsValue::Array(entries) = snap.get("entries").unwrap() else {
        panic!()
    };
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[1].get("type"), Some(&JsValue::from("compaction")));
    assert_eq!(entries[1].get("tokensBefore"), Some(&JsValue::from(1.0)));
}

// ------------------------------------------------------------------------------------------
// Diagnostics of writable managers.

/// A writable open reports what a read-only open reports (malformed lines, torn tail, missing
/// final newline), plus where it backed up a corrupt header; a reopen starts afresh.
#[test]
fn writable_managers_report_diagnostics() {
    let dir = support::tempdir();
    let d = canon(&dir);
    let f = d.join("s.jsonl");
    let u1 = msg_line("u1", None, "user", "q", 1);
    let a1 = msg_line("a1", Some("u1"), "assistant", "r", 2);
    let text = format!("{HEADER}\n{u1}\nnot json\n{a1}\n{{\"ty");
    support::write(&f, &text);
    let ro = SessionManager::open_read_only(&f, None).unwrap().report;
    let mut sm = SessionManager::open(&f, None, None).unwrap();
    let diag = sm.diagnostics();
    assert_eq!(diag, ro);
    assert_eq!(diag.path, f);
    assert_eq!(diag.bytes, text.len());
    assert_eq!(
        diag.malformed_lines
            .iter()
            .map(|m| m.line)
            .collect::<Vec<_>>(),
        [3, 5]
    );
    assert_eq!(
        diag.malformed_lines[0].line_offset,
        HEADER.len() + u1.len() + 2
    );
    assert_eq!(diag.torn_tail.as_ref().map(|t| t.line), Some(5));
    assert!(diag.missing_final_newline);
    assert!(diag.cycles.is_empty() && diag.dangling_parents.is_empty());
    // Structural findings follow the rows: a dangling parent appears after another writer's
    // row is adopted (the append itself is refused: that row starts another branch, D30).
    session_store::io::append_raw(
        &f,
        format!("\n{}\n", msg_line("x1", Some("gone"), "user", "x", 3)).as_bytes(),
    )
    .unwrap();
    match sm.append_message(support::user("n", 4)) {
        Err(AppendError::Diverged { tips, .. }) => assert_eq!(tips, ["x1"]),
        other => panic!("expected Diverged, got {other:?}"),
    }
    let diag = sm.diagnostics();
    assert_eq!(diag.adopted_lines, 1);
    assert_eq!(diag.dangling_parents.len(), 1);
    assert_eq!(diag.dangling_parents[0].id, "x1");
    assert_eq!(diag.dangling_parents[0].parent_id, "gone");

    // A corrupt header: the backup path is reported; a reopen of the repaired file is clean.
    let g = d.join("c.jsonl");
    let corrupt = format!("garbage\n{u1}\n{a1}\n");
    support::write(&g, &corrupt);
    let sm = SessionManager::open(&g, None, None).unwrap();
    let diag = sm.diagnostics();
    assert_eq!(diag.corrupt_header.as_ref().unwrap().dropped_lines, [1]);
    let backup = diag.corrupt_header_backup.unwrap();
    assert_eq!(support::read(&backup), corrupt);
    let re = SessionManager::open(&g, None, None).unwrap();
    let diag = re.diagnostics();
    assert!(diag.is_clean(), "{diag:?}");
    assert_eq!(diag.corrupt_header_backup, None);
}

/// `forkFrom` reads the path as given, like the reference (no lexical resolution there):
/// `<dir>/s.jsonl/` and `<dir>/missing/../s.jsonl` do not exist for the OS, so both fail with
/// the reference's text; nothing is written.
#[test]
fn fork_from_reads_the_path_as_given() {
    let dir = support::tempdir();
    let d = canon(&dir);
    support::write(
        &d.join("s.jsonl"),
        &format!("{HEADER}\n{}\n", msg_line("u1", None, "user", "q", 1)),
    );
    let out = d.join("out");
    for p in [
        PathBuf::from(format!("{}/s.jsonl/", d.display())),
        d.join("missing/../s.jsonl"),
    ] {
        let err = SessionManager::fork_from(&p, "/p", Some(&out)).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "Cannot fork: source session file is empty or invalid: {}",
                p.display()
            )
        );
    }
    assert!(!out.exists() || files(&out).is_empty());
}
