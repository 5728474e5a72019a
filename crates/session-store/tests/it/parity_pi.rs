//! pi-format.md §4.1–§4.8: the pi-coding-agent SessionManager test suites, ported to this
//! crate with exact expected values. Where OpenClaw 2026.6.11 (the reference here) behaves
//! differently from pi, the test asserts OpenClaw's behaviour and says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::{assistant, context_texts, ids, js, user};
use session_format::json::{JsValue, to_json_string};
use session_store::{NewSessionOptions, SessionManager};

fn mem() -> SessionManager {
    SessionManager::in_memory("/p")
}

fn roles(sm: &SessionManager) -> Vec<String> {
    let ctx = sm.build_session_context().unwrap();
    ctx.messages
        .iter()
        .map(|m| m.role().unwrap().unwrap_or_default())
        .collect()
}

fn model_msg(provider: &str, model: &str) -> JsValue {
    js(&format!(
        r#"{{"role":"assistant","content":[{{"type":"text","text":"x"}}],"provider":"{provider}","model":"{model}","timestamp":2}}"#
    ))
}

// ---------------------------------------------------------------------------------------------
// §4.1 build-context

/// pi-format §4.1 #1
#[test]
fn context_of_an_empty_session_is_empty() {
    let sm = mem();
    let ctx = sm.build_session_context().unwrap();
    assert_eq!(ctx.messages.len(), 0);
    assert_eq!(ctx.thinking_level_str().as_deref(), Some("off"));
    assert_eq!(ctx.model, None);
    assert_eq!(
        to_json_string(&ctx.to_value().unwrap()),
        r#"{"messages":[],"thinkingLevel":"off","model":null}"#
    );
}

/// pi-format §4.1 #2
#[test]
fn context_of_a_single_user_message() {
    let mut sm = mem();
    sm.append_message(user("hi", 1)).unwrap();
    assert_eq!(roles(&sm), ["user"]);
}

/// pi-format §4.1 #3
#[test]
fn context_of_a_linear_chain_keeps_order() {
    let mut sm = mem();
    sm.append_message(user("q1", 1)).unwrap();
    sm.append_message(assistant("r1", 2)).unwrap();
    sm.append_message(user("q2", 3)).unwrap();
    sm.append_message(assistant("r2", 4)).unwrap();
    assert_eq!(roles(&sm), ["user", "assistant", "user", "assistant"]);
    assert_eq!(context_texts(&sm), ["q1", "r1", "q2", "r2"]);
}

/// pi-format §4.1 #4
#[test]
fn thinking_level_change_sets_the_level() {
    let mut sm = mem();
    sm.append_message(user("q", 1)).unwrap();
    sm.append_thinking_level_change("high").unwrap();
    sm.append_message(assistant("r", 2)).unwrap();
    let ctx = sm.build_session_context().unwrap();
    assert_eq!(ctx.thinking_level_str().as_deref(), Some("high"));
    assert_eq!(ctx.messages.len(), 2);
}

/// pi-format §4.1 #5
#[test]
fn model_comes_from_the_assistant_message() {
    let mut sm = mem();
    sm.append_message(user("q", 1)).unwrap();
    sm.append_message(model_msg("anthropic", "claude-test"))
        .unwrap();
    let ctx = sm.build_session_context().unwrap();
    assert_eq!(
        ctx.model.unwrap().as_strs(),
        Some(("anthropic".to_owned(), "claude-test".to_owned()))
    );
}

/// pi-format §4.1 #6
#[test]
fn a_later_assistant_overrides_a_model_change() {
    let mut sm = mem();
    sm.append_model_change("openai", "gpt-4").unwrap();
    sm.append_message(user("q", 1)).unwrap();
    sm.append_message(model_msg("anthropic", "claude-test"))
        .unwrap();
    let ctx = sm.build_session_context().unwrap();
    assert_eq!(
        ctx.model.unwrap().as_strs(),
        Some(("anthropic".to_owned(), "claude-test".to_owned()))
    );
}

/// pi-format §4.1 #7
#[test]
fn compaction_keeps_from_first_kept_then_everything_after() {
    let mut sm = mem();
    sm.append_message(user("1", 1)).unwrap();
    sm.append_message(assistant("2", 2)).unwrap();
    let three = sm.append_message(user("3", 3)).unwrap();
    sm.append_message(assistant("4", 4)).unwrap();
    sm.append_compaction("Summary of 1-2", &three, 1000.0, None, None)
        .unwrap();
    sm.append_message(user("6", 6)).unwrap();
    sm.append_message(assistant("7", 7)).unwrap();
    assert_eq!(
        roles(&sm),
        [
            "compactionSummary",
            "user",
            "assistant",
            "user",
            "assistant"
        ]
    );
    assert_eq!(context_texts(&sm), ["Summary of 1-2", "3", "4", "6", "7"]);
}

/// pi-format §4.1 #8
#[test]
fn compaction_keeping_from_the_first_entry() {
    let mut sm = mem();
    let one = sm.append_message(user("1", 1)).unwrap();
    sm.append_message(assistant("2", 2)).unwrap();
    sm.append_message(user("3", 3)).unwrap();
    sm.append_compaction("s", &one, 10.0, None, None).unwrap();
    assert_eq!(context_texts(&sm), ["s", "1", "2", "3"]);
}

/// pi-format §4.1 #9
#[test]
fn only_the_latest_compaction_counts() {
    let mut sm = mem();
    let one = sm.append_message(user("1", 1)).unwrap();
    sm.append_message(assistant("2", 2)).unwrap();
    sm.append_compaction("First summary", &one, 10.0, None, None)
        .unwrap();
    let four = sm.append_message(user("4", 4)).unwrap();
    sm.append_message(assistant("5", 5)).unwrap();
    sm.append_compaction("Second summary", &four, 20.0, None, None)
        .unwrap();
    sm.append_message(user("7", 7)).unwrap();
    assert_eq!(context_texts(&sm), ["Second summary", "4", "5", "7"]);
}

/// pi-format §4.1 #10
#[test]
fn an_explicit_leaf_picks_its_sibling() {
    let mut sm = mem();
    sm.append_message(user("1", 1)).unwrap();
    let two = sm.append_message(assistant("2", 2)).unwrap();
    let three = sm.append_message(user("3", 3)).unwrap();
    sm.branch(&two).unwrap();
    let four = sm.append_message(user("4", 4)).unwrap();
    let at = |leaf: &str| -> Vec<String> {
        let ctx = sm.build_session_context_at(leaf).unwrap();
        ctx.messages
            .iter()
            .map(|m| m.entry.id().to_owned())
            .collect()
    };
    assert_eq!(at(&three).len(), 3);
    assert_eq!(at(&three)[2], three);
    assert_eq!(at(&four).len(), 3);
    assert_eq!(at(&four)[2], four);
}

/// pi-format §4.1 #11
#[test]
fn branch_summary_is_emitted_in_position() {
    let mut sm = mem();
    sm.append_message(user("1", 1)).unwrap();
    let two = sm.append_message(assistant("2", 2)).unwrap();
    sm.append_message(user("abandoned", 3)).unwrap();
    sm.branch_with_summary(Some((&two).into()), "Summary of abandoned", None, None)
        .unwrap();
    sm.append_message(user("new", 5)).unwrap();
    assert_eq!(roles(&sm), ["user", "assistant", "branchSummary", "user"]);
    assert_eq!(
        context_texts(&sm),
        ["1", "2", "Summary of abandoned", "new"]
    );
}

/// pi-format §4.1 #12
#[test]
fn complex_tree_contexts() {
    let mut sm = mem();
    sm.append_message(user("start", 1)).unwrap();
    sm.append_message(assistant("r1", 2)).unwrap();
    let q2 = sm.append_message(user("q2", 3)).unwrap();
    sm.append_message(assistant("r2", 4)).unwrap();
    sm.append_compaction("Compacted history", &q2, 100.0, None, None)
        .unwrap();
    sm.append_message(user("q3", 6)).unwrap();
    let main_leaf = sm.append_message(assistant("r3", 7)).unwrap();
    sm.branch_with_summary(Some((&q2).into()), "Tried wrong approach", None, None)
        .unwrap();
    let side_leaf = sm.append_message(user("better approach", 9)).unwrap();
    let texts = |leaf: &str| -> Vec<String> {
        sm.build_session_context_at(leaf)
            .unwrap()
            .messages
            .iter()
            .map(|m| {
                let v = m.to_value().unwrap();
                v.get("summary")
                    .and_then(JsValue::as_str_lossy)
                    .map(|s| s.into_owned())
                    .unwrap_or_else(|| {
                        v.get("content").unwrap().as_array().unwrap()[0]
                            .get("text")
                            .unwrap()
                            .as_str_lossy()
                            .unwrap()
                            .into_owned()
                    })
            })
            .collect()
    };
    assert_eq!(
        texts(&main_leaf),
        ["Compacted history", "q2", "r2", "q3", "r3"]
    );
    assert_eq!(
        texts(&side_leaf),
        [
            "start",
            "r1",
            "q2",
            "Tried wrong approach",
            "better approach"
        ]
    );
}

/// pi-format §4.1 #13
#[test]
fn an_unknown_leaf_falls_back_to_the_last_entry() {
    let mut sm = mem();
    sm.append_message(user("1", 1)).unwrap();
    sm.append_message(assistant("2", 2)).unwrap();
    let ctx = sm.build_session_context_at("nonexistent").unwrap();
    assert_eq!(ctx.messages.len(), 2);
}

/// pi-format §4.1 #14
#[test]
fn an_orphan_with_a_missing_parent_stands_alone() {
    let dir = crate::support::tempdir();
    let path = dir.path().join("o.jsonl");
    crate::support::write(
        &path,
        &format!(
            "{}\n{}\n",
            crate::support::HEADER,
            crate::support::msg_line("o1", Some("gone"), "user", "orphan", 1)
        ),
    );
    let sm = SessionManager::open(&path, None, None).unwrap();
    assert_eq!(context_texts(&sm), ["orphan"]);
    assert_eq!(ids(sm.get_branch(None)), ["o1"]);
}

// ---------------------------------------------------------------------------------------------
// §4.2 custom-session-id

/// pi-format §4.2 #1, #4
#[test]
fn new_session_with_a_custom_id() {
    let mut sm = mem();
    sm.new_session(NewSessionOptions {
        id: Some("my-custom-id".to_owned()),
        parent_session: None,
    })
    .unwrap();
    assert_eq!(sm.get_session_id(), "my-custom-id");
    assert_eq!(
        sm.get_header().unwrap().unwrap().get("id"),
        Some(&JsValue::from("my-custom-id"))
    );
}

/// pi-format §4.2 #2
#[test]
fn new_session_generates_an_id() {
    let mut sm = mem();
    sm.new_session(NewSessionOptions::default()).unwrap();
    assert_eq!(sm.get_session_id().len(), 36);
    assert_eq!(&sm.get_session_id()[14..15], "7");
}

/// pi-format §4.2 #3
#[test]
fn new_session_with_a_parent_still_generates_an_id() {
    let mut sm = mem();
    sm.new_session(NewSessionOptions {
        id: None,
        parent_session: Some("/x/parent.jsonl".to_owned()),
    })
    .unwrap();
    assert_eq!(sm.get_session_id().len(), 36);
    let h = sm.get_header().unwrap().unwrap();
    assert_eq!(
        h.get("parentSession"),
        Some(&JsValue::from("/x/parent.jsonl"))
    );
    assert_eq!(h.get("version"), Some(&JsValue::Number(3.0)));
}

// ---------------------------------------------------------------------------------------------
// §4.3 file-operations

/// pi-format §4.3 #1–#6 (`loadEntriesFromFile`)
#[test]
fn load_entries_from_file_cases() {
    use session_store::load_entries;
    let dir = crate::support::tempdir();
    let p = |n: &str| dir.path().join(n);
    assert_eq!(load_entries(&p("missing.jsonl")).unwrap().len(), 0);
    crate::support::write(&p("empty.jsonl"), "");
    assert_eq!(load_entries(&p("empty.jsonl")).unwrap().len(), 0);
    crate::support::write(
        &p("nohdr.jsonl"),
        &format!("{}\n", crate::support::msg_line("u1", None, "user", "q", 1)),
    );
    assert_eq!(load_entries(&p("nohdr.jsonl")).unwrap().len(), 0);
    crate::support::write(&p("bad.jsonl"), "not json\n{also not\n");
    assert_eq!(load_entries(&p("bad.jsonl")).unwrap().len(), 0);
    let msg = crate::support::msg_line("u1", None, "user", "q", 1);
    crate::support::write(
        &p("ok.jsonl"),
        &format!("{}\n{msg}\n", crate::support::HEADER),
    );
    let ok = load_entries(&p("ok.jsonl")).unwrap();
    assert_eq!(ok.len(), 2);
    assert_eq!(ok[0].get("type"), Some(&JsValue::from("session")));
    assert_eq!(ok[1].get("type"), Some(&JsValue::from("message")));
    crate::support::write(
        &p("mid.jsonl"),
        &format!("{}\ngarbage\n{msg}\n", crate::support::HEADER),
    );
    assert_eq!(load_entries(&p("mid.jsonl")).unwrap().len(), 2);
}

fn set_mtime(path: &std::path::Path, secs: u64) {
    let f = std::fs::File::open(path).unwrap();
    f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs))
        .unwrap();
}

/// pi-format §4.3 #7–#13 (`findMostRecentSession`)
#[test]
fn find_most_recent_session_cases() {
    use session_store::find_most_recent_session;
    let dir = crate::support::tempdir();
    assert_eq!(find_most_recent_session(dir.path()), None);
    assert_eq!(find_most_recent_session(&dir.path().join("nope")), None);
    crate::support::write(&dir.path().join("a.txt"), crate::support::HEADER);
    assert_eq!(find_most_recent_session(dir.path()), None);
    crate::support::write(&dir.path().join("bad.jsonl"), "{\"type\":\"message\"}\n");
    assert_eq!(find_most_recent_session(dir.path()), None);
    let old = dir.path().join("old.jsonl");
    crate::support::write(&old, &format!("{}\n", crate::support::HEADER));
    set_mtime(&old, 1_000_000);
    assert_eq!(find_most_recent_session(dir.path()), Some(old));
    let new = dir.path().join("new.jsonl");
    crate::support::write(&new, &format!("{}\n", crate::support::HEADER));
    set_mtime(&new, 2_000_000);
    assert_eq!(find_most_recent_session(dir.path()), Some(new.clone()));
    // An invalid file that is newer is skipped.
    let newest_bad = dir.path().join("zzz.jsonl");
    crate::support::write(&newest_bad, "garbage\n");
    set_mtime(&newest_bad, 3_000_000);
    assert_eq!(find_most_recent_session(dir.path()), Some(new));
}

/// pi-format §4.3 #14, #16, #17
#[test]
fn an_empty_file_gets_exactly_one_header() {
    let dir = crate::support::tempdir();
    let path = dir.path().join("empty.jsonl");
    crate::support::write(&path, "");
    let sm = SessionManager::open(&path, None, None).unwrap();
    let lines = crate::support::lines(&path);
    assert_eq!(lines.len(), 1);
    let h = js(&lines[0]);
    assert_eq!(h.get("id"), Some(&JsValue::from(sm.get_session_id())));
    assert_eq!(h.get("type"), Some(&JsValue::from("session")));
    assert_eq!(sm.get_session_file(), Some(path.as_path()));
    let again = SessionManager::open(&path, None, None).unwrap();
    assert_eq!(again.get_session_id(), sm.get_session_id());
    assert_eq!(crate::support::lines(&path).len(), 1);
}

/// pi-format §4.3 #15. OpenClaw 2026.6.11 differs from pi here: a file whose first line is
/// not a header is recovered, not truncated — the message survives under a new header and a
/// byte-exact `.corrupt-` backup is kept (openclaw-jsonl.md §1.6).
#[test]
fn a_headerless_file_is_recovered_not_truncated() {
    let dir = crate::support::tempdir();
    let path = dir.path().join("nohdr.jsonl");
    let msg = crate::support::msg_line("u1", None, "user", "q", 1);
    crate::support::write(&path, &format!("{msg}\n"));
    let sm = SessionManager::open(&path, None, None).unwrap();
    let lines = crate::support::lines(&path);
    assert_eq!(lines.len(), 2);
    assert_eq!(
        js(&lines[0]).get("id"),
        Some(&JsValue::from(sm.get_session_id()))
    );
    assert_eq!(lines[1], msg);
    assert!(sm.was_recovered_from_corrupt_header());
    assert_eq!(ids(sm.get_entries()), ["u1"]);
}

// ---------------------------------------------------------------------------------------------
// §4.4 labels

/// pi-format §4.4 #1, #2, #3
#[test]
fn labels_set_clear_and_last_wins() {
    let mut sm = mem();
    let u = sm.append_message(user("q", 1)).unwrap();
    let l = sm.append_label_change(&u, Some("first")).unwrap();
    let e = sm.get_entry(&l).unwrap().value().unwrap();
    assert_eq!(e.get("targetId"), Some(&JsValue::from(u.as_str())));
    assert_eq!(e.get("label"), Some(&JsValue::from("first")));
    assert_eq!(sm.get_label(&u), Some(&JsValue::from("first")));
    sm.append_label_change(&u, None).unwrap();
    assert_eq!(sm.get_label(&u), None);
    sm.append_label_change(&u, Some("second")).unwrap();
    sm.append_label_change(&u, Some("third")).unwrap();
    assert_eq!(sm.get_label(&u), Some(&JsValue::from("third")));
}

/// pi-format §4.4 #4
#[test]
fn tree_nodes_carry_labels() {
    let mut sm = mem();
    let u = sm.append_message(user("q", 1)).unwrap();
    let a = sm.append_message(assistant("r", 2)).unwrap();
    sm.append_label_change(&u, Some("root")).unwrap();
    sm.append_label_change(&a, Some("child")).unwrap();
    let tree = sm.get_tree();
    let root = &tree.nodes[tree.roots[0]];
    assert_eq!(root.label_str().as_deref(), Some("root"));
    let child = &tree.nodes[root.children[0]];
    assert_eq!(child.entry.id(), a);
    assert_eq!(child.label_str().as_deref(), Some("child"));
}

/// pi-format §4.4 #5, #6
#[test]
fn branched_session_keeps_path_labels_only() {
    let mut sm = mem();
    let u = sm.append_message(user("q", 1)).unwrap();
    let a = sm.append_message(assistant("r", 2)).unwrap();
    sm.append_label_change(&u, Some("L-u")).unwrap();
    sm.append_label_change(&a, Some("L-a")).unwrap();
    let off = sm.append_message(user("off path", 3)).unwrap();
    sm.append_label_change(&off, Some("L-off")).unwrap();
    sm.create_branched_session(&a).unwrap();
    let labels: Vec<(String, String)> = sm
        .get_entries()
        .filter(|e| e.entry_type() == session_format::entry::EntryType::Label)
        .map(|e| {
            let v = e.value().unwrap();
            (
                v.get("targetId")
                    .unwrap()
                    .as_str_lossy()
                    .unwrap()
                    .into_owned(),
                v.get("label").unwrap().as_str_lossy().unwrap().into_owned(),
            )
        })
        .collect();
    assert_eq!(
        labels,
        [(u.clone(), "L-u".to_owned()), (a.clone(), "L-a".to_owned())]
    );
    assert_eq!(sm.get_label(&off), None);
    assert_eq!(sm.get_entry(&off).map(|e| e.id().to_owned()), None);
}

/// pi-format §4.4 #7
#[test]
fn label_entries_are_not_in_the_context() {
    let mut sm = mem();
    let u = sm.append_message(user("q", 1)).unwrap();
    sm.append_label_change(&u, Some("x")).unwrap();
    assert_eq!(roles(&sm), ["user"]);
}

/// pi-format §4.4 #8
#[test]
fn labelling_an_unknown_id_fails() {
    let mut sm = mem();
    let err = sm
        .append_label_change("non-existent", Some("x"))
        .unwrap_err();
    assert_eq!(err.to_string(), "Entry non-existent not found");
}

// ---------------------------------------------------------------------------------------------
// §4.5 migration

/// pi-format §4.5 #1
#[test]
fn v1_entries_get_ids_and_a_chain() {
    let dir = crate::support::tempdir();
    let path = dir.path().join("v1.jsonl");
    crate::support::write(
        &path,
        concat!(
            r#"{"type":"session","id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#,
            "\n",
            r#"{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
            "\n",
            r#"{"type":"message","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"timestamp":2}}"#,
            "\n"
        ),
    );
    let sm = SessionManager::open(&path, None, None).unwrap();
    let h = sm.get_header().unwrap().unwrap();
    assert_eq!(h.get("version"), Some(&JsValue::Number(3.0)));
    let entries: Vec<_> = sm.get_entries().collect();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].id().len(), 8);
    assert_eq!(entries[1].id().len(), 8);
    assert_eq!(entries[0].parent_id(), None);
    assert_eq!(entries[1].parent_id().as_deref(), Some(entries[0].id()));
    let lines = crate::support::lines(&path);
    assert!(lines[0].ends_with(r#""cwd":"/p","version":3}"#));
    assert!(lines[1].ends_with(&format!(r#""id":"{}","parentId":null}}"#, entries[0].id())));
}

/// pi-format §4.5 #2
#[test]
fn v2_ids_are_kept() {
    let dir = crate::support::tempdir();
    let path = dir.path().join("v2.jsonl");
    let u = crate::support::msg_line("aaaa0001", None, "user", "q", 1);
    let a = crate::support::msg_line("aaaa0002", Some("aaaa0001"), "assistant", "r", 2);
    crate::support::write(
        &path,
        &format!(
            "{}\n{u}\n{a}\n",
            crate::support::HEADER.replace("\"version\":3", "\"version\":2")
        ),
    );
    let sm = SessionManager::open(&path, None, None).unwrap();
    assert_eq!(ids(sm.get_entries()), ["aaaa0001", "aaaa0002"]);
    assert_eq!(
        sm.get_entry("aaaa0002").unwrap().parent_id().as_deref(),
        Some("aaaa0001")
    );
    let lines = crate::support::lines(&path);
    assert_eq!(lines[1], u);
    assert_eq!(lines[2], a);
    assert!(lines[0].contains("\"version\":3"));
}

// ---------------------------------------------------------------------------------------------
// §4.6 save-entry

/// pi-format §4.6 #1
#[test]
fn custom_entry_between_messages() {
    let mut sm = mem();
    let m1 = sm.append_message(user("1", 1)).unwrap();
    let c = sm
        .append_custom_entry("my_data", Some(js(r#"{"foo":"bar"}"#)))
        .unwrap();
    let m2 = sm.append_message(assistant("2", 2)).unwrap();
    assert_eq!(sm.entry_count(), 3);
    let v = sm.get_entry(&c).unwrap().value().unwrap();
    assert_eq!(v.get("customType"), Some(&JsValue::from("my_data")));
    assert_eq!(v.get("data"), Some(&js(r#"{"foo":"bar"}"#)));
    assert_eq!(v.get("parentId"), Some(&JsValue::from(m1.as_str())));
    assert_eq!(ids(sm.get_branch(None)), [m1, c, m2]);
    assert_eq!(roles(&sm).len(), 2);
}

// ---------------------------------------------------------------------------------------------
// §4.7 tree-traversal

/// pi-format §4.7 #1, #6
#[test]
fn append_chain_parents_and_leaf() {
    let mut sm = mem();
    assert_eq!(sm.get_leaf_id(), None);
    let a = sm.append_message(user("1", 1)).unwrap();
    assert_eq!(sm.get_leaf_id(), Some(a.as_str()));
    let b = sm.append_message(assistant("2", 2)).unwrap();
    let t = sm.append_thinking_level_change("high").unwrap();
    assert_eq!(sm.get_leaf_id(), Some(t.as_str()));
    let c = sm.append_message(user("3", 3)).unwrap();
    let parents: Vec<Option<String>> = sm.get_entries().map(|e| e.parent_id()).collect();
    assert_eq!(parents, [None, Some(a), Some(b), Some(t)]);
    assert!(
        sm.get_entries()
            .take(2)
            .all(|e| e.entry_type() == session_format::entry::EntryType::Message)
    );
    assert_eq!(sm.get_leaf_id(), Some(c.as_str()));
}

/// pi-format §4.7 #2, #3, #4, #5
#[test]
fn non_message_entries_link_and_store_fields() {
    let mut sm = mem();
    let m = sm.append_message(user("1", 1)).unwrap();
    let t = sm.append_thinking_level_change("low").unwrap();
    let mc = sm.append_model_change("openai", "gpt-5").unwrap();
    let c = sm.append_compaction("sum", &m, 1234.0, None, None).unwrap();
    let after = sm.append_message(user("2", 2)).unwrap();
    let cu = sm
        .append_custom_entry("ext", Some(js(r#"{"k":1}"#)))
        .unwrap();
    let v = |id: &str| sm.get_entry(id).unwrap().value().unwrap();
    assert_eq!(v(&t).get("parentId"), Some(&JsValue::from(m.as_str())));
    assert_eq!(v(&mc).get("provider"), Some(&JsValue::from("openai")));
    assert_eq!(v(&mc).get("modelId"), Some(&JsValue::from("gpt-5")));
    assert_eq!(v(&c).get("summary"), Some(&JsValue::from("sum")));
    assert_eq!(
        v(&c).get("firstKeptEntryId"),
        Some(&JsValue::from(m.as_str()))
    );
    assert_eq!(v(&c).get("tokensBefore"), Some(&JsValue::Number(1234.0)));
    assert_eq!(v(&after).get("parentId"), Some(&JsValue::from(c.as_str())));
    assert_eq!(v(&cu).get("data"), Some(&js(r#"{"k":1}"#)));
    assert_eq!(v(&cu).get("parentId"), Some(&JsValue::from(after.as_str())));
}

/// pi-format §4.7 #7, #8, #9, #10
#[test]
fn get_branch_cases() {
    let mut sm = mem();
    assert_eq!(sm.get_branch(None).len(), 0);
    let a = sm.append_message(user("1", 1)).unwrap();
    assert_eq!(ids(sm.get_branch(None)), std::slice::from_ref(&a));
    let b = sm.append_message(assistant("2", 2)).unwrap();
    let c = sm.append_model_change("p", "m").unwrap();
    let d = sm.append_message(user("3", 3)).unwrap();
    assert_eq!(ids(sm.get_branch(None)), [a.clone(), b.clone(), c, d]);
    assert_eq!(ids(sm.get_branch(Some((&b).into()))), [a, b]);
}

/// pi-format §4.7 #11, #12
#[test]
fn get_tree_of_empty_and_linear_sessions() {
    let mut sm = mem();
    assert_eq!(sm.get_tree().roots.len(), 0);
    let a = sm.append_message(user("1", 1)).unwrap();
    let b = sm.append_message(assistant("2", 2)).unwrap();
    let c = sm.append_message(user("3", 3)).unwrap();
    assert_eq!(crate::support::tree_shape(&sm), [(a, 0), (b, 1), (c, 2)]);
}

/// pi-format §4.7 #13, #14
#[test]
fn get_tree_with_branches() {
    let mut sm = mem();
    sm.append_message(user("1", 1)).unwrap();
    let two = sm.append_message(assistant("2", 2)).unwrap();
    let three = sm.append_message(user("3", 3)).unwrap();
    sm.branch(&two).unwrap();
    let four = sm.append_message(user("4", 4)).unwrap();
    sm.branch(&two).unwrap();
    let five = sm.append_message(user("5", 5)).unwrap();
    let tree = sm.get_tree();
    let root = &tree.nodes[tree.roots[0]];
    let n2 = &tree.nodes[root.children[0]];
    let mut kids: Vec<String> = n2
        .children
        .iter()
        .map(|&k| tree.nodes[k].entry.id().to_owned())
        .collect();
    kids.sort();
    let mut want = vec![three, four, five];
    want.sort();
    assert_eq!(kids, want);
}

/// pi-format §4.7 #15
#[test]
fn get_tree_with_deep_branching() {
    let mut sm = mem();
    sm.append_message(user("1", 1)).unwrap();
    let n2 = sm.append_message(assistant("2", 2)).unwrap();
    let n3 = sm.append_message(user("3", 3)).unwrap();
    let n4 = sm.append_message(assistant("4", 4)).unwrap();
    sm.branch(&n2).unwrap();
    let n5 = sm.append_message(user("5", 5)).unwrap();
    let n6 = sm.append_message(assistant("6", 6)).unwrap();
    sm.branch(&n5).unwrap();
    let n7 = sm.append_message(assistant("7", 7)).unwrap();
    let kids = |id: &str| -> Vec<String> { ids(sm.get_children(Some(id))) };
    assert_eq!(kids(&n2), [n3.clone(), n5.clone()]);
    assert_eq!(kids(&n5), [n6, n7]);
    assert_eq!(kids(&n3), [n4]);
}

/// pi-format §4.7 #16, #17, #18
#[test]
fn branch_moves_the_leaf() {
    let mut sm = mem();
    let one = sm.append_message(user("1", 1)).unwrap();
    sm.append_message(assistant("2", 2)).unwrap();
    sm.branch(&one).unwrap();
    assert_eq!(sm.get_leaf_id(), Some(one.as_str()));
    let err = sm.branch("nonexistent").unwrap_err();
    assert_eq!(err.to_string(), "Entry nonexistent not found");
    let next = sm.append_message(user("3", 3)).unwrap();
    assert_eq!(
        sm.get_entry(&next).unwrap().parent_id().as_deref(),
        Some(one.as_str())
    );
}

/// pi-format §4.7 #19, #20
#[test]
fn branch_with_summary_cases() {
    let mut sm = mem();
    let one = sm.append_message(user("1", 1)).unwrap();
    sm.append_message(assistant("2", 2)).unwrap();
    let s = sm
        .branch_with_summary(Some((&one).into()), "summary text", None, None)
        .unwrap();
    assert_eq!(sm.get_leaf_id(), Some(s.as_str()));
    let v = sm.get_entry(&s).unwrap().value().unwrap();
    assert_eq!(v.get("parentId"), Some(&JsValue::from(one.as_str())));
    assert_eq!(v.get("fromId"), Some(&JsValue::from(one.as_str())));
    assert_eq!(v.get("summary"), Some(&JsValue::from("summary text")));
    assert_eq!(
        sm.branch_with_summary(Some("nope".into()), "x", None, None)
            .unwrap_err()
            .to_string(),
        "Entry nope not found"
    );
}

/// pi-format §4.7 #21, #22, #23, #24
#[test]
fn entry_access() {
    let mut sm = mem();
    assert!(sm.get_leaf_entry().is_none());
    let u = sm
        .append_message(js(r#"{"role":"user","content":"hello","timestamp":1}"#))
        .unwrap();
    let a = sm.append_message(assistant("hi there", 2)).unwrap();
    assert_eq!(sm.get_leaf_entry().unwrap().id(), a);
    assert!(sm.get_entry("unknown").is_none());
    let uv = sm.get_entry(&u).unwrap().value().unwrap();
    assert_eq!(
        uv.get("message").unwrap().get("content"),
        Some(&JsValue::from("hello"))
    );
    let av = sm.get_entry(&a).unwrap().value().unwrap();
    assert_eq!(
        av.get("message").unwrap().get("content"),
        Some(&js(r#"[{"type":"text","text":"hi there"}]"#))
    );
}

/// pi-format §4.7 #25
#[test]
fn context_uses_only_the_current_branch() {
    let mut sm = mem();
    sm.append_message(user("msg1", 1)).unwrap();
    let two = sm.append_message(assistant("msg2", 2)).unwrap();
    sm.append_message(user("msg3", 3)).unwrap();
    sm.branch(&two).unwrap();
    sm.append_message(user("msg4-branch", 4)).unwrap();
    assert_eq!(context_texts(&sm), ["msg1", "msg2", "msg4-branch"]);
}

/// pi-format §4.7 #26, #27, #28
#[test]
fn create_branched_session_in_memory() {
    let mut sm = mem();
    assert_eq!(
        sm.create_branched_session("nope").unwrap_err().to_string(),
        "Entry nope not found"
    );
    let id1 = sm.append_message(user("1", 1)).unwrap();
    let id2 = sm.append_message(assistant("2", 2)).unwrap();
    let id3 = sm.append_message(user("3", 3)).unwrap();
    let id4 = {
        sm.branch(&id2).unwrap();
        sm.append_message(user("4", 4)).unwrap()
    };
    let id5 = sm.append_message(assistant("5", 5)).unwrap();
    let mut other = mem();
    let o1 = other.append_message(user("1", 1)).unwrap();
    let o2 = other.append_message(assistant("2", 2)).unwrap();
    other.append_message(user("3", 3)).unwrap();
    assert_eq!(other.create_branched_session(&o2).unwrap(), None);
    assert_eq!(ids(other.get_entries()), [o1, o2]);
    assert_eq!(sm.create_branched_session(&id5).unwrap(), None);
    assert_eq!(ids(sm.get_entries()), [id1, id2, id4, id5]);
    assert!(sm.get_entry(&id3).is_none());
}

/// pi-format §4.7 #29 (#1672)
#[test]
fn branched_session_without_assistant_is_written_once_later() {
    let dir = crate::support::tempdir();
    let mut sm = SessionManager::create("/p", Some(dir.path())).unwrap();
    let u = sm.append_message(user("first", 1)).unwrap();
    sm.append_message(assistant("r", 2)).unwrap();
    let path = sm.create_branched_session(&u).unwrap().unwrap();
    assert!(!path.exists());
    sm.append_custom_entry("ext", None).unwrap();
    assert!(!path.exists());
    sm.append_message(assistant("again", 3)).unwrap();
    let lines = crate::support::lines(&path);
    assert_eq!(lines.len(), 4);
    let types: Vec<JsValue> = lines
        .iter()
        .map(|l| js(l).get("type").unwrap().clone())
        .collect();
    assert_eq!(
        types,
        ["session", "message", "custom", "message"].map(JsValue::from)
    );
    let ids: std::collections::HashSet<String> = lines
        .iter()
        .map(|l| to_json_string(js(l).get("id").unwrap()))
        .collect();
    assert_eq!(ids.len(), 4);
}

/// pi-format §4.7 #30
#[test]
fn branched_session_with_assistant_is_written_at_once() {
    let dir = crate::support::tempdir();
    let mut sm = SessionManager::create("/p", Some(dir.path())).unwrap();
    sm.append_message(user("first", 1)).unwrap();
    let a = sm.append_message(assistant("r", 2)).unwrap();
    sm.append_message(user("more", 3)).unwrap();
    let prev = sm.get_session_file().unwrap().to_path_buf();
    let path = sm.create_branched_session(&a).unwrap().unwrap();
    let lines = crate::support::lines(&path);
    assert_eq!(lines.len(), 3);
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.contains("\"type\":\"session\""))
            .count(),
        1
    );
    assert_eq!(
        js(&lines[0]).get("parentSession"),
        Some(&JsValue::from(prev.to_string_lossy().into_owned()))
    );
    assert!(sm.is_flushed());
}

// ---------------------------------------------------------------------------------------------
// §4.8 session-info-modified-timestamp

/// pi-format §4.8 #1
#[test]
fn list_reports_the_message_timestamp_as_modified() {
    let dir = crate::support::tempdir();
    let path = dir.path().join("s.jsonl");
    crate::support::write(&path, &format!("{}\n", crate::support::HEADER));
    let mut sm = SessionManager::open(&path, None, None).unwrap();
    let t = 1_767_225_999_000_i64;
    sm.append_message(assistant("r", t)).unwrap();
    let list = SessionManager::list("/p", Some(dir.path())).unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].modified, t as f64);
    assert_eq!(list[0].message_count, 1);
    assert_eq!(list[0].first_message, "(no messages)");
    assert_eq!(list[0].all_messages_text().unwrap(), "r");
}
