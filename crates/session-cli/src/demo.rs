//! `sessions demo`: builds a small OpenClaw store through the public library API
//! (`SessionManager::open` on missing paths, then appends, branches, labels, a compaction and
//! tool calls) and prints `list`, a `tree` and a `context` of it.
//!
//! Safety: the demo never destroys anything. It writes only into an empty (or missing) root or
//! over an earlier demo: a non-empty root without a demo manifest (`.sessions-demo.json`) is
//! refused even with `--force` (it may be a real OpenClaw store). On an earlier demo it refuses
//! unless `--force`, and `--force` removes only the files that demo recorded in its manifest and
//! left unchanged (same sha256). The manifest is written before anything else and each file is
//! recorded before it is created, so a demo that fails half-way can always be cleaned up by
//! `--force`.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use session_format::json::{JsObject, JsValue, parse_value};
use session_store::{Durability, SessionManager};
use sha2::{Digest, Sha256};

use crate::address::{Locator, UsageError};
use crate::output::Output;
use crate::{context, list, model, tree};

pub(crate) const LONG_ABOUT: &str = "\
Build a demo store and show what the other subcommands print on it.

The store (default ./sessions-demo) uses OpenClaw's layout,
<root>/agents/<agentId>/sessions/<channel>_<userId>.jsonl, with two agents and three sessions:
  main/telegram_123456        a Telegram DM: tool calls, a failed booking on a side branch, a
                              branch summary, labels and a compaction
  main/discord_981234567890   a Discord group chat with several people
  ops/slack_U02OPSBOT         a Slack DM: shell tool calls, thinking, a model change
Every file is written through the library's SessionManager (opened on a missing path, then
appended to), exactly as OpenClaw writes sessions. Then the demo prints `sessions list`, the
`sessions tree` of the Telegram DM and its `sessions context`.

The demo writes only into an empty or missing directory, or over an earlier demo. A non-empty
root that holds no demo manifest (<root>/.sessions-demo.json), such as a real OpenClaw store
with openclaw.json and agents/, is refused even with --force. Rerunning on an earlier demo
refuses too; with --force the demo removes only the files the earlier demo created there
(recorded with their sha256 in the manifest) and that are unchanged since, then rebuilds them;
it never removes or overwrites anything else. The manifest is written first and each file is
recorded in it before it is created, so a demo that stopped half-way (a full disk, a permission
error) is cleaned up by `demo --force`: a file it was still writing (recorded without a sha256)
is removed as well.";

/// The manifest recording what the demo created.
pub(crate) const MANIFEST: &str = ".sessions-demo.json";

const TELEGRAM: &str = "agents/main/sessions/telegram_123456.jsonl";
const DISCORD: &str = "agents/main/sessions/discord_981234567890.jsonl";
const SLACK: &str = "agents/ops/sessions/slack_U02OPSBOT.jsonl";

/// Files the demo writes, relative to the root.
pub(crate) const FILES: [&str; 3] = [TELEGRAM, DISCORD, SLACK];

/// Message timestamps: a fixed clock so `list` shows the same dates on every run.
struct Clock(f64);

impl Clock {
    fn tick(&mut self) -> JsValue {
        self.0 += 45_000.0;
        JsValue::Number(self.0)
    }
}

fn obj(pairs: Vec<(&str, JsValue)>) -> JsValue {
    let mut o = JsObject::new();
    for (k, v) in pairs {
        o.insert(k, v);
    }
    JsValue::Object(o)
}

fn s(v: &str) -> JsValue {
    JsValue::from(v)
}

fn n(v: f64) -> JsValue {
    JsValue::Number(v)
}

fn text_block(t: &str) -> JsValue {
    obj(vec![("type", s("text")), ("text", s(t))])
}

fn thinking_block(t: &str) -> JsValue {
    obj(vec![("type", s("thinking")), ("thinking", s(t))])
}

fn tool_call(id: &str, name: &str, args: &str) -> anyhow::Result<JsValue> {
    Ok(obj(vec![
        ("type", s("toolCall")),
        ("id", s(id)),
        ("name", s(name)),
        ("arguments", parse_value(args.as_bytes())?),
    ]))
}

fn user(c: &mut Clock, t: &str) -> JsValue {
    obj(vec![
        ("role", s("user")),
        ("content", JsValue::Array(vec![text_block(t)])),
        ("timestamp", c.tick()),
    ])
}

/// The model an assistant reply comes from.
#[derive(Clone, Copy)]
struct Model {
    api: &'static str,
    provider: &'static str,
    id: &'static str,
}

const SONNET: Model = Model {
    api: "anthropic-messages",
    provider: "anthropic",
    id: "claude-sonnet-4-5",
};
const CODEX: Model = Model {
    api: "openai-responses",
    provider: "openai",
    id: "gpt-5.1-codex",
};

fn assistant(c: &mut Clock, model: Model, content: Vec<JsValue>, input: f64) -> JsValue {
    let tool_use = content
        .iter()
        .any(|b| b.get("type").and_then(|t| t.as_str_lossy()).as_deref() == Some("toolCall"));
    let output = 40.0 + 12.0 * content.len() as f64;
    let cost_in = (input * 3.0) / 1_000_000.0;
    let cost_out = (output * 15.0) / 1_000_000.0;
    obj(vec![
        ("role", s("assistant")),
        ("content", JsValue::Array(content)),
        ("api", s(model.api)),
        ("provider", s(model.provider)),
        ("model", s(model.id)),
        (
            "usage",
            obj(vec![
                ("input", n(input)),
                ("output", n(output)),
                ("cacheRead", n(0.0)),
                ("cacheWrite", n(0.0)),
                ("totalTokens", n(input + output)),
                (
                    "cost",
                    obj(vec![
                        ("input", n(cost_in)),
                        ("output", n(cost_out)),
                        ("cacheRead", n(0.0)),
                        ("cacheWrite", n(0.0)),
                        ("total", n(cost_in + cost_out)),
                    ]),
                ),
            ]),
        ),
        ("stopReason", s(if tool_use { "toolUse" } else { "stop" })),
        ("timestamp", c.tick()),
    ])
}

fn tool_result(c: &mut Clock, call: &str, name: &str, out: &str, is_error: bool) -> JsValue {
    obj(vec![
        ("role", s("toolResult")),
        ("toolCallId", s(call)),
        ("toolName", s(name)),
        ("content", JsValue::Array(vec![text_block(out)])),
        ("isError", JsValue::Bool(is_error)),
        ("timestamp", c.tick()),
    ])
}

/// Opens a missing path for writing: a fresh session bound to it (nothing is written until the
/// first assistant reply).
fn open_new(path: &Path, cwd: &str) -> anyhow::Result<SessionManager> {
    let mut sm = SessionManager::open(path, None, Some(cwd))?;
    sm.set_durability(Durability::Buffer);
    Ok(sm)
}

/// A Telegram DM: tool calls, a failed booking on a side branch, a branch summary, labels and a
/// compaction.
fn build_telegram(path: &Path) -> anyhow::Result<()> {
    let mut c = Clock(1_767_430_800_000.0); // 2026-01-03 09:00 UTC
    let mut sm = open_new(path, "/home/openclaw/workspace")?;
    sm.append_model_change("anthropic", "claude-sonnet-4-5")?;
    sm.append_thinking_level_change("low")?;
    sm.append_message(user(
        &mut c,
        "Can you check the weather in Lisbon for this weekend?",
    ))?;
    sm.append_session_info("Lisbon weekend")?;
    sm.append_message(assistant(
        &mut c,
        SONNET,
        vec![
            text_block("Let me look that up."),
            tool_call(
                "call_weather_1",
                "weather_forecast",
                r#"{"city":"Lisbon","days":3}"#,
            )?,
        ],
        1_840.0,
    ))?;
    sm.append_message(tool_result(
        &mut c,
        "call_weather_1",
        "weather_forecast",
        "Sat 2026-01-10: 24°C, sunny\nSun 2026-01-11: 19°C, light rain\nMon 2026-01-12: 21°C, cloudy",
        false,
    ))?;
    let forecast = sm.append_message(assistant(
        &mut c,
        SONNET,
        vec![text_block(
            "Saturday looks best: 24 °C and sunny. Sunday may bring light rain.",
        )],
        2_010.0,
    ))?;
    sm.append_label_change(&forecast, Some("forecast"))?;
    sm.append_message(user(
        &mut c,
        "Great. Book a table for two on Saturday evening, somewhere with good fish.",
    ))?;
    sm.append_message(assistant(
        &mut c,
        SONNET,
        vec![tool_call(
            "call_search_2",
            "restaurant_search",
            r#"{"city":"Lisbon","date":"2026-01-10","party":2,"cuisine":"seafood"}"#,
        )?],
        2_300.0,
    ))?;
    sm.append_message(tool_result(
        &mut c,
        "call_search_2",
        "restaurant_search",
        "1. Cervejaria Ramiro: 21:30\n2. Taberna da Rua: 20:00",
        false,
    ))?;
    let options = sm.append_message(assistant(
        &mut c,
        SONNET,
        vec![text_block(
            "I found two: Cervejaria Ramiro at 21:30 or Taberna da Rua at 20:00. Which one?",
        )],
        2_520.0,
    ))?;
    // The side branch: a booking that fails.
    sm.append_message(user(&mut c, "Cervejaria Ramiro, please."))?;
    sm.append_message(assistant(
        &mut c,
        SONNET,
        vec![tool_call(
            "call_book_3",
            "book_table",
            r#"{"restaurant":"Cervejaria Ramiro","time":"21:30","party":2}"#,
        )?],
        2_610.0,
    ))?;
    sm.append_message(tool_result(
        &mut c,
        "call_book_3",
        "book_table",
        "Fully booked at 21:30",
        true,
    ))?;
    let dead_end = sm.append_message(assistant(
        &mut c,
        SONNET,
        vec![text_block(
            "Sorry, Cervejaria Ramiro is fully booked at 21:30.",
        )],
        2_700.0,
    ))?;
    sm.append_label_change(&dead_end, Some("dead end"))?;
    // Back to the two options, with a summary of the abandoned branch.
    sm.branch_with_summary(
        Some(&options),
        "Tried Cervejaria Ramiro at 21:30; it was fully booked, so we went back to the list.",
        None,
        Some(false),
    )?;
    let kept = sm.append_message(user(&mut c, "Then Taberna da Rua at 20:00."))?;
    sm.append_message(assistant(
        &mut c,
        SONNET,
        vec![tool_call(
            "call_book_4",
            "book_table",
            r#"{"restaurant":"Taberna da Rua","time":"20:00","party":2}"#,
        )?],
        2_890.0,
    ))?;
    sm.append_message(tool_result(
        &mut c,
        "call_book_4",
        "book_table",
        "Booked: Taberna da Rua, Sat 2026-01-10 20:00, party of 2 (confirmation TB-2291)",
        false,
    ))?;
    let booked = sm.append_message(assistant(
        &mut c,
        SONNET,
        vec![text_block(
            "Done: a table for two at Taberna da Rua, Saturday at 20:00. Confirmation TB-2291.",
        )],
        3_050.0,
    ))?;
    sm.append_label_change(&booked, Some("booked"))?;
    sm.append_compaction(
        "Ana asked about the Lisbon weekend weather (Saturday sunny, 24 °C) and wanted a seafood \
         dinner for two on Saturday. Cervejaria Ramiro was full at 21:30.",
        &kept,
        18_432.0,
        Some(parse_value(br#"{"readFiles":[],"modifiedFiles":[]}"#)?),
        Some(false),
    )?;
    sm.append_message(user(&mut c, "Remind me: what time is dinner?"))?;
    sm.append_message(assistant(
        &mut c,
        SONNET,
        vec![text_block(
            "Saturday at 20:00 at Taberna da Rua (confirmation TB-2291).",
        )],
        1_200.0,
    ))?;
    sm.flush()?;
    Ok(())
}

/// A Discord group chat with several people.
fn build_discord(path: &Path) -> anyhow::Result<()> {
    let mut c = Clock(1_767_463_200_000.0); // 2026-01-03 18:00 UTC
    let mut sm = open_new(path, "/home/openclaw/workspace")?;
    sm.append_message(user(
        &mut c,
        "[Discord #dinner-club] Ben: who's in for dinner on Saturday?",
    ))?;
    sm.append_session_info("#dinner-club")?;
    sm.append_message(assistant(
        &mut c,
        SONNET,
        vec![text_block(
            "Ana already has a table at Taberna da Rua, Saturday 20:00, for two. Want me to add people?",
        )],
        1_500.0,
    ))?;
    sm.append_message(user(
        &mut c,
        "[Discord #dinner-club] Chloé: count me in! Can we make it four?",
    ))?;
    sm.append_message(user(&mut c, "[Discord #dinner-club] Ben: +1, four it is"))?;
    sm.append_message(assistant(
        &mut c,
        SONNET,
        vec![tool_call(
            "call_update_1",
            "update_booking",
            r#"{"confirmation":"TB-2291","party":4}"#,
        )?],
        1_720.0,
    ))?;
    sm.append_message(tool_result(
        &mut c,
        "call_update_1",
        "update_booking",
        "Updated TB-2291: party of 4",
        false,
    ))?;
    let done = sm.append_message(assistant(
        &mut c,
        SONNET,
        vec![text_block(
            "Done: the booking is now for four (Ana, Ben, Chloé and one more).",
        )],
        1_810.0,
    ))?;
    sm.append_label_change(&done, Some("party of 4"))?;
    sm.flush()?;
    Ok(())
}

/// A Slack DM with an ops engineer: shell tool calls, thinking and a model change.
fn build_slack(path: &Path) -> anyhow::Result<()> {
    let mut c = Clock(1_767_601_800_000.0); // 2026-01-05 08:30 UTC
    let mut sm = open_new(path, "/srv/ops")?;
    sm.append_thinking_level_change("high")?;
    sm.append_message(user(
        &mut c,
        "Disk usage on build-01 looks high. Can you check?",
    ))?;
    sm.append_message(assistant(
        &mut c,
        SONNET,
        vec![
            thinking_block("Check the root filesystem first, then find the biggest directories."),
            tool_call("call_df_1", "bash", r#"{"command":"df -h /"}"#)?,
        ],
        2_100.0,
    ))?;
    sm.append_message(tool_result(
        &mut c,
        "call_df_1",
        "bash",
        "Filesystem  Size  Used Avail Use% Mounted on\n/dev/sda1   200G  188G   12G  95% /",
        false,
    ))?;
    sm.append_message(assistant(
        &mut c,
        SONNET,
        vec![tool_call(
            "call_du_2",
            "bash",
            r#"{"command":"du -sh /var/cache/* | sort -h | tail -3"}"#,
        )?],
        2_400.0,
    ))?;
    sm.append_message(tool_result(
        &mut c,
        "call_du_2",
        "bash",
        "1.2G\t/var/cache/apt\n14G\t/var/cache/docker\n61G\t/var/cache/ci-artifacts",
        false,
    ))?;
    sm.append_message(assistant(
        &mut c,
        SONNET,
        vec![text_block(
            "/ is 95% full; most of it is /var/cache/ci-artifacts (61 GB). Shall I delete artifacts older than 14 days?",
        )],
        2_650.0,
    ))?;
    sm.append_model_change("openai", "gpt-5.1-codex")?;
    sm.append_message(user(&mut c, "Yes, go ahead."))?;
    sm.append_message(assistant(
        &mut c,
        CODEX,
        vec![tool_call(
            "call_prune_3",
            "bash",
            r#"{"command":"find /var/cache/ci-artifacts -mtime +14 -delete && df -h /"}"#,
        )?],
        2_900.0,
    ))?;
    sm.append_message(tool_result(
        &mut c,
        "call_prune_3",
        "bash",
        "Filesystem  Size  Used Avail Use% Mounted on\n/dev/sda1   200G  122G   78G  61% /",
        false,
    ))?;
    sm.append_message(assistant(
        &mut c,
        CODEX,
        vec![text_block("Pruned: / is now at 61% (78 GB free).")],
        3_100.0,
    ))?;
    sm.flush()?;
    Ok(())
}

fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// A file recorded in the manifest: its path relative to the root, and its sha256 (none for a
/// file the demo was still writing).
type Recorded = (String, Option<String>);

/// The files an earlier demo recorded; `None` when there is no manifest.
fn read_manifest(root: &Path) -> anyhow::Result<Option<Vec<Recorded>>> {
    let path = root.join(MANIFEST);
    match crate::fsx::probe(&path) {
        crate::fsx::Found::Regular => {}
        crate::fsx::Found::Missing => return Ok(None),
        _ => bail!(UsageError::new(format!(
            "{} is not a regular file; the demo leaves {} alone",
            crate::text::path(&path),
            crate::text::path(root)
        ))),
    }
    let bytes = session_store::io::read_file(&path)
        .with_context(|| format!("cannot read {}", crate::text::path(&path)))?;
    let v =
        parse_value(&bytes).with_context(|| format!("{} is not JSON", crate::text::path(&path)))?;
    let mut out = Vec::new();
    for f in v
        .get("files")
        .and_then(JsValue::as_array)
        .into_iter()
        .flatten()
    {
        let Some(p) = f.get("path").and_then(JsValue::as_str_lossy) else {
            continue;
        };
        let hash = f
            .get("sha256")
            .and_then(JsValue::as_str_lossy)
            .map(|h| h.into_owned());
        // Only the demo's own file names are ever removed, whatever the manifest says.
        if FILES.contains(&p.as_ref()) {
            out.push((p.into_owned(), hash));
        }
    }
    Ok(Some(out))
}

/// Makes room for the demo files, or explains why not. Writes only into an empty or missing
/// root or over an earlier demo (a manifest); removes only unchanged files of that demo, and
/// only when `force`.
fn prepare_root(root: &Path, force: bool) -> anyhow::Result<()> {
    let shown = crate::text::path(root);
    if root.exists() && !root.is_dir() {
        bail!(UsageError::new(format!(
            "{shown} exists and is not a directory"
        )));
    }
    let non_empty = std::fs::read_dir(root).is_ok_and(|mut rd| rd.next().is_some());
    if !non_empty {
        return Ok(());
    }
    let Some(recorded) = read_manifest(root)? else {
        let store = root.join("openclaw.json").exists() || root.join("agents").exists();
        bail!(UsageError::new(format!(
            "{shown} is not empty and holds no demo manifest ({MANIFEST}){}; the demo writes \
             only into an empty directory or over an earlier demo, even with --force. Choose \
             another --root",
            if store {
                ", and it looks like an OpenClaw store (openclaw.json or agents/)"
            } else {
                ""
            }
        )));
    };
    if !force {
        bail!(UsageError::new(format!(
            "{shown} already exists and is not empty; the demo leaves it alone. Pass --force to \
             rebuild the demo there (only files an earlier demo created and left unchanged are \
             removed), or choose another --root"
        )));
    }
    let mut removable = Vec::new();
    let mut changed = Vec::new();
    for (rel, hash) in &recorded {
        let p = root.join(rel);
        match crate::fsx::probe(&p) {
            crate::fsx::Found::Missing => continue,
            crate::fsx::Found::Regular => {}
            _ => {
                changed.push(p);
                continue;
            }
        }
        match (session_store::io::read_file(&p), hash) {
            (Ok(b), Some(h)) if sha256_hex(&b) == *h => removable.push(p),
            // Recorded before it was created: the demo stopped while writing it.
            (Ok(_), None) => removable.push(p),
            (Ok(_), Some(_)) => changed.push(p),
            (Err(e), _) if e.kind() == std::io::ErrorKind::NotFound => {}
            (Err(e), _) => {
                return Err(e).with_context(|| format!("cannot read {}", crate::text::path(&p)));
            }
        }
    }
    let mut blocked: Vec<PathBuf> = changed;
    for rel in FILES {
        let p = root.join(rel);
        let present = std::fs::symlink_metadata(&p).is_ok();
        if present && !removable.contains(&p) && !blocked.contains(&p) {
            blocked.push(p);
        }
    }
    if !blocked.is_empty() {
        let list: Vec<String> = blocked.iter().map(|p| crate::text::path(p)).collect();
        bail!(UsageError::new(format!(
            "not rebuilding the demo: these files are in the way and were not created by the demo, \
             or were changed since: {}; move them away first",
            list.join(", ")
        )));
    }
    for p in &removable {
        std::fs::remove_file(p)
            .with_context(|| format!("cannot remove {}", crate::text::path(p)))?;
    }
    Ok(())
}

/// Records the demo's files: `(relative path, sha256)`, `None` for a file about to be created.
fn write_manifest(root: &Path, files: &[(&str, Option<String>)]) -> anyhow::Result<()> {
    let files: Vec<JsValue> = files
        .iter()
        .map(|(rel, hash)| {
            obj(vec![
                ("path", s(rel)),
                ("sha256", hash.as_deref().map_or(JsValue::Null, s)),
            ])
        })
        .collect();
    let v = obj(vec![
        (
            "note",
            s(
                "Written by `sessions demo`. `sessions demo --force` removes only the files listed \
               here, and only while their sha256 is unchanged (a null sha256: the demo stopped \
               while creating the file).",
            ),
        ),
        ("files", JsValue::Array(files)),
    ]);
    let mut text = session_format::normalize::to_json_string_indented(&v, 2);
    text.push('\n');
    let path = root.join(MANIFEST);
    session_store::io::atomic_rewrite(&path, text.as_bytes()).with_context(|| {
        format!(
            "cannot write the demo manifest {}",
            crate::text::path(&path)
        )
    })?;
    Ok(())
}

/// `sessions demo [--root DIR] [--force]`.
pub(crate) fn run(root: &Path, force: bool, width: usize, out: &mut Output) -> anyhow::Result<()> {
    prepare_root(root, force)?;
    session_store::io::ensure_dir(root)
        .with_context(|| format!("cannot create {}", crate::text::path(root)))?;
    // The manifest comes first: when it cannot be written, nothing else is.
    let mut recorded: Vec<(&str, Option<String>)> = Vec::new();
    write_manifest(root, &recorded)?;
    type Build = fn(&Path) -> anyhow::Result<()>;
    let steps: [(&str, Build, &str); 3] = [
        (TELEGRAM, build_telegram, "the Telegram demo session"),
        (DISCORD, build_discord, "the Discord demo session"),
        (SLACK, build_slack, "the Slack demo session"),
    ];
    for (rel, build, what) in steps {
        recorded.push((rel, None));
        write_manifest(root, &recorded)?;
        let result = build(&root.join(rel)).with_context(|| format!("building {what}"));
        let hash = match session_store::io::read_file(&root.join(rel)) {
            Ok(b) => Some(sha256_hex(&b)),
            Err(_) => None,
        };
        match hash {
            Some(h) => {
                if let Some(last) = recorded.last_mut() {
                    last.1 = Some(h);
                }
            }
            None if !root.join(rel).exists() => {
                recorded.pop();
            }
            None => {}
        }
        write_manifest(root, &recorded)?;
        result?;
    }

    let shown = crate::text::path(root);
    let quoted = |p: &Path| crate::text::shell_quote(&p.display().to_string());
    out.line(&format!(
        "Built a demo store in {shown}: 2 agents (main, ops), 3 sessions (a Telegram DM, a Discord group chat, a Slack DM)."
    ))?;
    out.line("")?;
    out.line(&format!("$ sessions list --root {}", quoted(root)))?;
    let loc = Locator {
        root: Some(root.to_path_buf()),
        agent: None,
        dir: None,
        pi: false,
    };
    let (listed, skipped) = list::collect(&loc, true)?;
    list::write_table(&listed, &skipped, true, width, out)?;

    let dm = root.join(TELEGRAM);
    out.line("")?;
    out.line(&format!("$ sessions tree {}", quoted(&dm)))?;
    let opened = model::open(&dm)?;
    let ro = &opened.ro;
    let sm = &ro.session;
    let m = model::TreeModel::new(sm, Some(&ro.report));
    let opts = tree::TreeOptions { depth: None, width };
    tree::write_text(&dm, ro, &m, &opts, out)?;

    out.line("")?;
    out.line(&format!("$ sessions context {}", quoted(&dm)))?;
    let ctx = context::build(sm, None)?;
    for l in context::render_lines(&dm, sm, &ctx, None, width)? {
        out.line(&l)?;
    }
    out.line("")?;
    out.line("Next:")?;
    out.line(&format!(
        "  sessions tree --root {} --agent main --session discord_981234567890",
        quoted(root)
    ))?;
    out.line(&format!("  sessions check {}", quoted(&dm)))?;
    out.line(&format!(
        "  sessions export {} --format html > lisbon.html",
        quoted(&dm)
    ))?;
    Ok(())
}
