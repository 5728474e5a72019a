//! openclaw-jsonl.md §7.1 (`session-manager.test.ts`, J) and §7.4
//! (`session-manager-init.test.ts`, J): the items that concern the store, ported with exact
//! values. Items about SQLite markers, snapshots, the warm cache, the write lock, repair and
//! `prepareSessionManagerForRun` itself are not ported here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use crate::support::{HEADER, assistant, context_texts, ids, js, msg_line, user};
use session_format::json::JsValue;
use session_store::SessionManager;

fn file_with(dir: &tempfile::TempDir, name: &str, rows: &[String]) -> PathBuf {
    let path = dir.path().join(name);
    let mut text = format!("{HEADER}\n");
    for r in rows {
        text.push_str(r);
        text.push('\n');
    }
    crate::support::write(&path, &text);
    path
}

fn last_line(path: &std::path::Path) -> JsValue {
    js(crate::support::lines(path).last().unwrap())
}

/// openclaw §7.1 #9: a header longer than 512 bytes still loads and is found by
/// `findMostRecentSession` / `continueRecent`.
#[test]
fn long_headers_are_found() {
    let dir = crate::support::tempdir();
    let long_cwd = format!("/{}", "x".repeat(700));
    let header = HEADER.replace("/home/dev/project", &long_cwd);
    let path = dir.path().join("long.jsonl");
    crate::support::write(
        &path,
        &format!("{header}\n{}\n", msg_line("u1", None, "user", "q", 1)),
    );
    assert_eq!(session_store::load_entries(&path).unwrap().len(), 2);
    assert_eq!(
        session_store::find_most_recent_session(dir.path()),
        Some(path.clone())
    );
    let sm = SessionManager::continue_recent("/any", Some(dir.path())).unwrap();
    assert_eq!(sm.get_session_file(), Some(path.as_path()));
    assert_eq!(ids(sm.get_entries()), ["u1"]);
}

/// openclaw §7.1 #10. OpenClaw 2026.6.11's `continueRecent` and `list` do not filter by header
/// cwd (checked against the release with an op-script): the newest valid file wins, and the
/// manager takes the requested cwd.
#[test]
fn continue_recent_ignores_header_cwd_as_the_reference_does() {
    let dir = crate::support::tempdir();
    let a = dir.path().join("a.jsonl");
    crate::support::write(&a, &format!("{HEADER}\n"));
    let b = dir.path().join("b.jsonl");
    crate::support::write(
        &b,
        &format!("{}\n", HEADER.replace("/home/dev/project", "/other")),
    );
    let t = |p: &std::path::Path, s: u64| {
        std::fs::File::open(p)
            .unwrap()
            .set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(s))
            .unwrap();
    };
    t(&a, 1_000);
    t(&b, 2_000);
    let sm = SessionManager::continue_recent("/home/dev/project", Some(dir.path())).unwrap();
    assert_eq!(sm.get_session_file(), Some(b.as_path()));
    assert_eq!(sm.get_cwd(), "/home/dev/project");
    let list = SessionManager::list("/home/dev/project", Some(dir.path())).unwrap();
    assert_eq!(list.len(), 2);
}

/// openclaw §7.1 #11: a header over 64 KiB is skipped; an older valid session is returned.
#[test]
fn oversized_headers_are_skipped() {
    let dir = crate::support::tempdir();
    let old = dir.path().join("old.jsonl");
    crate::support::write(&old, &format!("{HEADER}\n"));
    std::fs::File::open(&old)
        .unwrap()
        .set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(10))
        .unwrap();
    let big = dir.path().join("big.jsonl");
    let header = HEADER.replace("/home/dev/project", &"y".repeat(70 * 1024));
    crate::support::write(&big, &format!("{header}\n"));
    assert_eq!(
        session_store::find_most_recent_session(dir.path()),
        Some(old)
    );
}

/// openclaw §7.1 #12: a v2 file with a `hookMessage` is migrated to `custom` (no `customType`
/// added — FINDINGS b) and version 3 on open, and the file is rewritten.
#[test]
fn v2_hook_message_is_migrated_and_rewritten() {
    let dir = crate::support::tempdir();
    let path = dir.path().join("v2.jsonl");
    let hook = r#"{"type":"message","id":"h1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"hookMessage","content":"hooked","display":true,"timestamp":1}}"#;
    let u1 = msg_line("u1", None, "user", "q", 1);
    crate::support::write(
        &path,
        &format!(
            "{}\n{u1}\n{hook}\n",
            HEADER.replace("\"version\":3", "\"version\":2")
        ),
    );
    let sm = SessionManager::open(&path, None, None).unwrap();
    let lines = crate::support::lines(&path);
    assert_eq!(lines[0], HEADER);
    assert_eq!(lines[1], u1);
    assert_eq!(lines[2], hook.replace("hookMessage", "custom"));
    let ctx = sm.build_session_context().unwrap();
    assert_eq!(
        session_format::json::to_json_string(&ctx.messages[1].to_value().unwrap()),
        r#"{"role":"custom","content":"hooked","display":true,"timestamp":1}"#
    );
}

/// openclaw §7.1 #23: an append after an unterminated last line adds a separator (3 lines,
/// ends with `\n`); the torn line stays as it was.
#[test]
fn append_after_unterminated_line_adds_a_separator() {
    let dir = crate::support::tempdir();
    let path = dir.path().join("t.jsonl");
    let a1 = msg_line("a1", None, "assistant", "r", 1);
    crate::support::write(&path, &format!("{HEADER}\n{a1}"));
    let mut sm = SessionManager::open(&path, None, None).unwrap();
    let id = sm.append_message(user("next", 2)).unwrap();
    let text = crate::support::read(&path);
    assert!(text.ends_with('\n'));
    let lines = crate::support::lines(&path);
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[1], a1);
    assert_eq!(js(&lines[2]).get("id"), Some(&JsValue::from(id.as_str())));
    assert_eq!(js(&lines[2]).get("parentId"), Some(&JsValue::from("a1")));
}

/// openclaw §7.1 #35: a parent-linked opaque row bridges user→assistant: the persisted parent
/// is the opaque id, the logical parent the user; `branch(opaqueId)` selects the user;
/// `createBranchedSession` keeps the opaque row.
#[test]
fn parent_linked_opaque_rows_bridge_entries() {
    let dir = crate::support::tempdir();
    let opaque = r#"{"type":"plugin_event","id":"o1","parentId":"u1","timestamp":"2026-01-01T00:00:01.500Z","payload":{"x":1}}"#;
    let path = file_with(
        &dir,
        "o.jsonl",
        &[msg_line("u1", None, "user", "q", 1), opaque.to_owned()],
    );
    let mut sm = SessionManager::open(&path, None, None).unwrap();
    assert_eq!(sm.get_leaf_id(), Some("u1"));
    assert_eq!(sm.get_append_parent_id(), Some("o1"));
    let a = sm.append_message(assistant("r", 2)).unwrap();
    assert_eq!(last_line(&path).get("parentId"), Some(&JsValue::from("o1")));
    assert_eq!(sm.get_entry(&a).unwrap().parent_id().as_deref(), Some("u1"));
    assert_eq!(ids(sm.get_branch(None)), ["u1".to_owned(), a.clone()]);
    assert_eq!(ids(sm.get_entries()), ["u1".to_owned(), a.clone()]);
    sm.branch("o1").unwrap();
    assert_eq!(sm.get_leaf_id(), Some("u1"));
    let new_path = sm.create_branched_session(&a).unwrap().unwrap();
    let lines = crate::support::lines(&new_path);
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[2], opaque, "the opaque row is kept verbatim");
    assert_eq!(js(&lines[3]).get("parentId"), Some(&JsValue::from("o1")));
}

/// openclaw §7.1 #36: a compaction whose `firstKeptEntryId` names an opaque row is resolved to
/// the opaque row's canonical ancestor; context = summary, user, assistant.
#[test]
fn compaction_kept_opaque_resolves_to_ancestor() {
    let dir = crate::support::tempdir();
    let path = file_with(
        &dir,
        "c.jsonl",
        &[
            msg_line("u1", None, "user", "q", 1),
            r#"{"type":"plugin_event","id":"o1","parentId":"u1"}"#.to_owned(),
            msg_line("a1", Some("o1"), "assistant", "r", 2),
            r#"{"type":"compaction","id":"c1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","summary":"sum","firstKeptEntryId":"o1","tokensBefore":5}"#.to_owned(),
        ],
    );
    let sm = SessionManager::open(&path, None, None).unwrap();
    let c = sm.get_entry("c1").unwrap().value().unwrap();
    assert_eq!(c.get("firstKeptEntryId"), Some(&JsValue::from("u1")));
    assert_eq!(context_texts(&sm), ["sum", "q", "r"]);
}

/// openclaw §7.1 #37: an opaque boundary without a canonical ancestor resolves to the first
/// canonical descendant on the compaction's branch.
#[test]
fn compaction_kept_opaque_root_resolves_to_descendant_on_branch() {
    let dir = crate::support::tempdir();
    let path = file_with(
        &dir,
        "c.jsonl",
        &[
            r#"{"type":"plugin_event","id":"o1","parentId":null}"#.to_owned(),
            msg_line("u1", Some("o1"), "user", "q", 1),
            msg_line("a1", Some("u1"), "assistant", "r", 2),
            r#"{"type":"compaction","id":"c1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","summary":"sum","firstKeptEntryId":"o1","tokensBefore":5}"#.to_owned(),
        ],
    );
    let sm = SessionManager::open(&path, None, None).unwrap();
    let c = sm.get_entry("c1").unwrap().value().unwrap();
    assert_eq!(c.get("firstKeptEntryId"), Some(&JsValue::from("u1")));
    assert_eq!(sm.get_entry("u1").unwrap().parent_id(), None);
    assert_eq!(context_texts(&sm), ["sum", "q", "r"]);
}

/// openclaw §7.1 #38: session-typed event rows are never append parents.
#[test]
fn session_event_rows_are_not_append_parents() {
    let dir = crate::support::tempdir();
    let path = file_with(
        &dir,
        "s.jsonl",
        &[
            msg_line("a1", None, "assistant", "r", 1),
            r#"{"type":"session","id":"event-1","parentId":"a1"}"#.to_owned(),
        ],
    );
    let mut sm = SessionManager::open(&path, None, None).unwrap();
    assert_eq!(sm.get_append_parent_id(), Some("a1"));
    sm.append_message(user("q", 2)).unwrap();
    assert_eq!(last_line(&path).get("parentId"), Some(&JsValue::from("a1")));
}

/// openclaw §7.1 #39: descendants linked through a persisted leaf record resolve to the leaf's
/// target.
#[test]
fn descendants_of_leaf_records_resolve_to_the_target() {
    let dir = crate::support::tempdir();
    let path = file_with(
        &dir,
        "l.jsonl",
        &[
            msg_line("u1", None, "user", "q1", 1),
            msg_line("a1", Some("u1"), "assistant", "r1", 2),
            r#"{"type":"leaf","id":"L1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","targetId":"u1"}"#.to_owned(),
            msg_line("u2", Some("L1"), "user", "q2", 4),
        ],
    );
    let sm = SessionManager::open(&path, None, None).unwrap();
    assert_eq!(
        sm.get_entry("u2").unwrap().parent_id().as_deref(),
        Some("u1")
    );
    assert_eq!(ids(sm.get_branch(None)), ["u1", "u2"]);
    assert_eq!(ids(sm.get_children(Some("u1"))), ["a1", "u2"]);
}

/// openclaw §7.1 #40: cleanup keeps trailing opaque, custom and mirror rows and re-parents them
/// onto the new leaf; the replacement follows them; the context has 3 messages.
#[test]
fn remove_trailing_entries_reparents_survivors() {
    let dir = crate::support::tempdir();
    let mirror = r#"{"type":"message","id":"m1","parentId":"c1","timestamp":"2026-01-01T00:00:07.000Z","message":{"role":"assistant","content":[{"type":"text","text":"mirror"}],"provider":"openclaw","model":"delivery-mirror","timestamp":7}}"#;
    let path = file_with(
        &dir,
        "r.jsonl",
        &[
            msg_line("u1", None, "user", "q1", 1),
            msg_line("a1", Some("u1"), "assistant", "r1", 2),
            msg_line("u2", Some("a1"), "user", "q2", 3),
            msg_line("a2", Some("u2"), "assistant", "failed", 4),
            r#"{"type":"plugin_event","id":"o1","parentId":"a2"}"#.to_owned(),
            r#"{"type":"custom","customType":"ext","id":"c1","parentId":"o1","timestamp":"2026-01-01T00:00:06.000Z"}"#.to_owned(),
            mirror.to_owned(),
        ],
    );
    let mut sm = SessionManager::open(&path, None, None).unwrap();
    let mut keep = |e: session_store::EntryRef<'_>| e.id() == "c1" || e.id() == "m1";
    let removed = sm
        .remove_trailing_entries(|e| e.id() == "a2", Some(&mut keep))
        .unwrap();
    assert_eq!(removed, 1);
    assert_eq!(sm.get_leaf_id(), Some("u2"));
    assert_eq!(sm.get_append_parent_id(), Some("u2"));
    assert_eq!(context_texts(&sm), ["q1", "r1", "q2"]);
    let lines = crate::support::lines(&path);
    assert_eq!(lines.len(), 8);
    assert!(!lines.iter().any(|l| l.contains("\"id\":\"a2\"")));
    assert_eq!(
        lines[4],
        r#"{"type":"plugin_event","id":"o1","parentId":"u2"}"#
    );
    assert_eq!(lines[6], mirror);
    let control = js(&lines[7]);
    assert_eq!(control.get("type"), Some(&JsValue::from("leaf")));
    assert_eq!(control.get("parentId"), Some(&JsValue::from("m1")));
    assert_eq!(control.get("targetId"), Some(&JsValue::from("u2")));
    assert_eq!(control.get("appendParentId"), None);
    let next = sm.append_message(assistant("replacement", 8)).unwrap();
    assert_eq!(last_line(&path).get("parentId"), Some(&JsValue::from("u2")));
    let reopened = SessionManager::open(&path, None, None).unwrap();
    assert_eq!(
        ids(reopened.get_branch(None)),
        ["u1", "a1", "u2", next.as_str()]
    );
    assert_eq!(reopened.build_session_context().unwrap().messages.len(), 4);
}

/// openclaw §7.1 #47: a visible leaf with a distinct opaque append parent round-trips.
#[test]
fn distinct_opaque_append_parent_round_trips() {
    let dir = crate::support::tempdir();
    let path = file_with(
        &dir,
        "d.jsonl",
        &[
            msg_line("base", None, "assistant", "b", 1),
            r#"{"type":"plugin_event","id":"o1","parentId":"base"}"#.to_owned(),
        ],
    );
    let mut sm = SessionManager::open(&path, None, None).unwrap();
    let next = sm.append_message(user("next", 2)).unwrap();
    assert_eq!(last_line(&path).get("parentId"), Some(&JsValue::from("o1")));
    let reopened = SessionManager::open(&path, None, None).unwrap();
    assert_eq!(ids(reopened.get_branch(None)), ["base", next.as_str()]);
    assert_eq!(
        reopened
            .get_entry(&next)
            .unwrap()
            .value()
            .unwrap()
            .get("parentId"),
        Some(&JsValue::from("base"))
    );
}

/// openclaw §7.1 #48: parentless canonical rows plus a leaf control reopen as one branch (rule
/// (a): a row without `parentId` chains onto the current leaf).
#[test]
fn parentless_rows_and_a_leaf_control_form_one_branch() {
    let dir = crate::support::tempdir();
    let path = file_with(
        &dir,
        "p.jsonl",
        &[
            r#"{"type":"message","id":"u1","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"q","timestamp":1}}"#.to_owned(),
            r#"{"type":"message","id":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"timestamp":2}}"#.to_owned(),
            r#"{"type":"leaf","id":"L1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","targetId":"a1"}"#.to_owned(),
        ],
    );
    let sm = SessionManager::open(&path, None, None).unwrap();
    assert_eq!(ids(sm.get_branch(None)), ["u1", "a1"]);
    let a1 = sm.get_entry("a1").unwrap().value().unwrap();
    assert_eq!(
        session_format::json::to_json_string(&a1),
        r#"{"type":"message","id":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"timestamp":2},"parentId":"u1"}"#
    );
    assert_eq!(sm.get_tree().roots.len(), 1);
}

/// openclaw §7.1 #49: leaf controls with a dangling target or append parent are ignored; the
/// leaf stays; the next append parents to the last opaque row.
#[test]
fn dangling_leaf_controls_are_ignored() {
    let dir = crate::support::tempdir();
    let path = file_with(
        &dir,
        "x.jsonl",
        &[
            msg_line("u1", None, "user", "q", 1),
            msg_line("a1", Some("u1"), "assistant", "r", 2),
            r#"{"type":"plugin_event","id":"o1","parentId":"a1"}"#.to_owned(),
            r#"{"type":"leaf","id":"L1","parentId":"o1","targetId":"nothere"}"#.to_owned(),
            r#"{"type":"leaf","id":"L2","parentId":"L1","targetId":"u1","appendParentId":"gone"}"#
                .to_owned(),
        ],
    );
    let mut sm = SessionManager::open(&path, None, None).unwrap();
    assert_eq!(sm.get_leaf_id(), Some("a1"));
    assert_eq!(sm.get_append_parent_id(), Some("o1"));
    let n = sm.append_message(user("n", 3)).unwrap();
    assert_eq!(last_line(&path).get("parentId"), Some(&JsValue::from("o1")));
    assert_eq!(sm.get_entry(&n).unwrap().parent_id().as_deref(), Some("a1"));
    let ro = SessionManager::open_read_only(&path, None).unwrap();
    let invalid: Vec<&str> = ro
        .report
        .invalid_leaf_controls
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(invalid, ["L1", "L2"]);
}

/// openclaw §7.1 #51: leaf controls targeting a label are dropped when branching; labels are
/// regenerated on the copied path.
#[test]
fn branching_drops_leaf_controls_and_regenerates_labels() {
    let dir = crate::support::tempdir();
    let path = file_with(
        &dir,
        "b.jsonl",
        &[
            msg_line("u1", None, "user", "q", 1),
            msg_line("a1", Some("u1"), "assistant", "r", 2),
            r#"{"type":"label","id":"lb1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","targetId":"u1","label":"keep"}"#.to_owned(),
            r#"{"type":"leaf","id":"L1","parentId":"lb1","timestamp":"2026-01-01T00:00:04.000Z","targetId":"lb1"}"#.to_owned(),
        ],
    );
    let mut sm = SessionManager::open(&path, None, None).unwrap();
    assert_eq!(sm.get_leaf_id(), Some("lb1"));
    let new_path = sm.create_branched_session("lb1").unwrap().unwrap();
    let lines = crate::support::lines(&new_path);
    let types: Vec<JsValue> = lines
        .iter()
        .map(|l| js(l).get("type").unwrap().clone())
        .collect();
    assert_eq!(
        types,
        ["session", "message", "message", "label"].map(JsValue::from)
    );
    let label = js(&lines[3]);
    assert_eq!(label.get("targetId"), Some(&JsValue::from("u1")));
    assert_eq!(label.get("label"), Some(&JsValue::from("keep")));
    assert_eq!(label.get("parentId"), Some(&JsValue::from("a1")));
    assert_ne!(label.get("id"), Some(&JsValue::from("lb1")));
}

/// openclaw §7.4 (store part of "a forked empty branch keeps its opaque metadata and leaf; the
/// next user turn parents to `plugin-metadata`; the header keeps `parentSession`").
#[test]
fn fork_keeps_opaque_metadata_and_its_cursor() {
    let dir = crate::support::tempdir();
    let source = file_with(
        &dir,
        "src.jsonl",
        &[
            msg_line("u1", None, "user", "q", 1),
            r#"{"type":"plugin_metadata","id":"plugin-metadata","parentId":"u1","data":{"k":1}}"#
                .to_owned(),
        ],
    );
    let mut sm = SessionManager::fork_from(&source, "/home/dev/project", Some(dir.path())).unwrap();
    assert_eq!(sm.get_leaf_id(), Some("u1"));
    assert_eq!(sm.get_append_parent_id(), Some("plugin-metadata"));
    let header = sm.get_header().unwrap().unwrap();
    assert_eq!(
        header.get("parentSession"),
        Some(&JsValue::from(source.to_string_lossy().into_owned()))
    );
    let fork_file = sm.get_session_file().unwrap().to_path_buf();
    assert_eq!(
        crate::support::lines(&fork_file)[2],
        r#"{"type":"plugin_metadata","id":"plugin-metadata","parentId":"u1","data":{"k":1}}"#
    );
    sm.append_message(user("next", 2)).unwrap();
    sm.append_message(assistant("r", 3)).unwrap();
    let lines = crate::support::lines(&fork_file);
    assert_eq!(
        js(&lines[3]).get("parentId"),
        Some(&JsValue::from("plugin-metadata"))
    );
}

/// openclaw §7.4 (store part of "a recovered user-only transcript survives open": the corrupt
/// header becomes `[session(new id, cwd), user]`, then the assistant is appended).
#[test]
fn recovered_user_only_transcript_survives() {
    let dir = crate::support::tempdir();
    let path = dir.path().join("r.jsonl");
    let u1 = msg_line("u1", None, "user", "q", 1);
    crate::support::write(&path, &format!("not a header\n{u1}\n"));
    let mut sm = SessionManager::open(&path, None, Some("/cwd")).unwrap();
    let lines = crate::support::lines(&path);
    assert_eq!(lines.len(), 2);
    let h = js(&lines[0]);
    assert_eq!(h.get("id"), Some(&JsValue::from(sm.get_session_id())));
    assert_eq!(h.get("cwd"), Some(&JsValue::from("/cwd")));
    assert_eq!(lines[1], u1);
    let a = sm.append_message(assistant("r", 2)).unwrap();
    let lines = crate::support::lines(&path);
    assert_eq!(lines.len(), 3);
    assert_eq!(js(&lines[2]).get("id"), Some(&JsValue::from(a.as_str())));
    assert_eq!(js(&lines[2]).get("parentId"), Some(&JsValue::from("u1")));
}
