//! First steps with `session-store`: read an OpenClaw store without writing to it, then write
//! a session of your own, once as files and once in memory.
//!
//! ```sh
//! cp -a ../shared/fixtures/openclaw-6.11-store /tmp/nu-store   # any OpenClaw state dir
//! cargo run -p session-store --example first_steps -- /tmp/nu-store/agents/main/sessions
//! ```
//!
//! The program:
//! 1. lists the sessions of a store directory (id, message count, modified time) and opens
//!    one read-only to print its tree and leaf (nothing is written, not even a lock file);
//! 2. makes a new session with the default file storage: it appends a user and an assistant
//!    message, branches back to the first entry, appends a branch summary there and builds
//!    the model context;
//! 3. does the same over a [`MemStorage`] through [`SessionManager::on`];
//! 4. returns the umbrella [`session_store::Error`], so `?` works on every call into this
//!    crate. That error has no variant for I/O or JSON errors from outside the crate, so
//!    reading a line by hand (step 5) handles those errors where they happen;
//! 5. looks up one entry by an id read from the file (a [`JsString`]) and by a `&str`, with
//!    the same method (both convert into [`session_store::EntryId`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use session_format::json::{JsObject, JsString, parse_value};
use session_format::message::{
    AssistantMessage, Content, ContentBlock, Message, TextBlock, UserMessage,
};
use session_format::time::to_iso_string;
use session_store::{MemStorage, SessionManager, Sessions};

fn main() -> Result<(), session_store::Error> {
    let store = std::env::args_os().nth(1).map_or_else(
        || PathBuf::from("/tmp/nu-store/agents/main/sessions"),
        PathBuf::from,
    );

    println!("== 1. the sessions of {}", store.display());
    let infos = session_store::list(&store)?; // newest first; a missing dir lists nothing
    for info in &infos {
        let modified = to_iso_string(info.modified as i64).unwrap_or_else(|| "?".into());
        println!(
            "{}  {:>2} messages  modified {modified}  {}",
            info.id,
            info.message_count,
            info.path.file_name().unwrap_or_default().to_string_lossy()
        );
    }
    // The one with a branch in the fixture; else the newest.
    let pick = infos
        .iter()
        .find(|i| i.id.starts_with("00000026"))
        .or(infos.first());
    if let Some(info) = pick {
        let ro = SessionManager::open_read_only(&info.path, None)?;
        println!("-- tree of {} (* = leaf)", info.id);
        print_tree(&ro.session)?;
        println!("leaf: {:?}", ro.session.get_leaf_id());
        println!("problems found: {}", !ro.report.is_clean());

        println!("== 5. one entry, by an id read from the file and by text");
        if let Some(exact) = first_entry_id(&info.path) {
            let text: &str = exact.as_str().unwrap_or_default();
            let by_js = ro.session.get_entry(&exact).map(|e| e.id().to_owned());
            let by_str = ro.session.get_entry(text).map(|e| e.id().to_owned());
            println!("by JsString: {by_js:?}  by &str: {by_str:?}");
            let path_js = ro.session.get_branch(Some((&exact).into())).len();
            let path_str = ro.session.get_branch(Some(text.into())).len();
            println!("branch length: {path_js} / {path_str}");
        }
    }

    println!("== 2. a new session in files");
    let dir = std::env::temp_dir().join(format!("first-steps-{}", std::process::id()));
    // The store the plain factories (`SessionManager::create`, `open`, …) use.
    let files = SessionManager::on(session_store::FileStorage::shared());
    let file = walk_through(&files, &dir)?;
    println!(
        "written to {}",
        file.map_or("(nothing)".into(), |p| p.display().to_string())
    );
    let _ = std::fs::remove_dir_all(&dir); // best effort

    println!("== 3. the same in memory");
    let mem = SessionManager::on(Arc::new(MemStorage::new()));
    walk_through(&mem, Path::new("/mem/sessions"))?;
    let listed = mem.list("/home/dev/project", Some(Path::new("/mem/sessions")))?;
    println!("MemStorage now lists {} session(s)", listed.len());
    Ok(())
}

/// Appends a user and an assistant message, branches back to the first entry, appends a
/// branch summary there, builds the context. Returns the session file.
fn walk_through(sessions: &Sessions, dir: &Path) -> Result<Option<PathBuf>, session_store::Error> {
    let mut sm = sessions.create("/home/dev/project", Some(dir))?;
    let q = sm.append_message(user("What is 2 + 2?", 1_781_254_860_000))?;
    let a = sm.append_message(assistant("4.", 1_781_254_861_000))?;
    println!("appended {q} (user), {a} (assistant)");
    sm.branch(q.as_str())?;
    let s = sm.branch_with_summary(
        Some(q.as_str().into()),
        "asked about arithmetic",
        None,
        None,
    )?;
    println!(
        "branched to {q}, summary {s}; leaf now {:?}",
        sm.get_leaf_id()
    );
    let ctx = sm.build_session_context()?;
    for m in &ctx.messages {
        println!("  context: {:?} {:?}", m.kind, m.role()?);
    }
    println!(
        "  thinking level {:?}, model {:?}",
        ctx.thinking_level_str(),
        ctx.model
    );
    print_tree(&sm)?;
    Ok(sm.get_session_file().map(Path::to_path_buf))
}

fn user(text: &str, ms: i64) -> Message {
    Message::User(UserMessage {
        content: Content::Text(text.into()),
        timestamp: Some(ms),
        extra: JsObject::new(),
    })
}

fn assistant(text: &str, ms: i64) -> Message {
    Message::Assistant(AssistantMessage {
        content: Content::Blocks(vec![ContentBlock::Text(TextBlock {
            text: text.into(),
            text_signature: None,
            extra: JsObject::new(),
        })]),
        api: Some("openai-responses".into()),
        provider: Some("openai".into()),
        model: Some("gpt-5.5".into()),
        usage: None,
        stop_reason: Some("stop".into()),
        timestamp: Some(ms),
        extra: JsObject::new(),
    })
}

/// The tree, depth first, one line per entry.
fn print_tree(sm: &SessionManager) -> Result<(), session_store::Error> {
    let tree = sm.get_tree();
    let leaf = sm.get_leaf_id();
    let mut stack: Vec<(usize, usize)> = tree.roots.iter().rev().map(|&r| (r, 0)).collect();
    while let Some((k, depth)) = stack.pop() {
        let node = &tree.nodes[k];
        let e = &node.entry;
        let v = e.value()?;
        let role = v
            .get("message")
            .and_then(|m| m.get("role"))
            .and_then(|r| r.as_str_lossy());
        let mark = if Some(e.id()) == leaf { "*" } else { " " };
        println!(
            "{mark} {:indent$}{} {}{}",
            "",
            e.id(),
            e.entry_type().as_str(),
            role.map(|r| format!(" ({r})")).unwrap_or_default(),
            indent = depth * 2
        );
        stack.extend(node.children.iter().rev().map(|&c| (c, depth + 1)));
    }
    Ok(())
}

/// The `id` of the first entry line of a JSONL file, exactly as written (a [`JsString`]).
/// I/O and JSON errors are not `session_store::Error`s, so this says `None` for them.
fn first_entry_id(path: &Path) -> Option<JsString> {
    let bytes = std::fs::read(path).ok()?;
    let line = bytes.split(|&b| b == b'\n').nth(1)?;
    let row = parse_value(line).ok()?;
    row.get("id")?.as_js_string().cloned()
}
