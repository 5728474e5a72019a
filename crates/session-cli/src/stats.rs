//! `sessions stats FILE...`: entries by kind (messages by role), tree shape, size and how long
//! the read-only open took.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use session_format::entry::EntryType;
use session_format::json::{JsObject, JsValue};
use session_store::MessageRole;

use crate::ctx::Ctx;
use crate::model;
use crate::output::Output;
use crate::text;

pub(crate) const LONG_ABOUT: &str = "\
Print statistics of one or more sessions, read-only: size in bytes and lines, header version,
entries by kind (messages by role), roots, depth, branch points, leaves, labels, the current
branch's length, the number of problems `check` would report, and how long the read-only open
(read, index, in-memory migration) and the tree build took.

JSON output (--json): an array with one object per file:
  {\"file\", \"bytes\", \"lines\", \"version\", \"sessionId\", \"entries\",
   \"duplicateRows\", \"byKind\": {kind: count}, \"byRole\": {role: count},
   \"roots\", \"depth\", \"branchPoints\", \"leaves\", \"labels\", \"branchLength\",
   \"problems\", \"openMs\", \"treeMs\"}
Kinds are entry types (message, compaction, …); counts are over entries, each id once: of the
rows that share an id only the last one counts (the row every lookup, the tree and the context
use); `duplicateRows` is the number of rows that repeat an earlier row's id and are not counted
(`sessions check` reports them as duplicate-id); `problems` counts what `sessions check` reports (errors and warnings). A file that cannot be read
or is not a session is {\"file\", \"error\"} in the array (and `error: …` on stderr in text
mode); the other files are still counted, and the exit code is 2.

Files: FILEs, or --session NAME, or every *.jsonl of the --agent/--dir/--pi sessions directory
and of its immediate sub-directories.";

struct Stats {
    json: JsValue,
    lines: Vec<String>,
}

fn count_lines(bytes: &[u8]) -> usize {
    let n = memchr::memchr_iter(b'\n', bytes).count();
    if bytes.last().is_some_and(|&b| b != b'\n') {
        n + 1
    } else {
        n
    }
}

fn one(ctx: &Ctx, path: &Path, out: &mut Output) -> anyhow::Result<Stats> {
    let start = Instant::now();
    let opened = model::open(ctx, path)?;
    let open_ms = start.elapsed().as_secs_f64() * 1000.0;
    for w in &opened.warnings {
        out.warn(w)?;
    }
    let ro = &opened.ro;
    let sm = &ro.session;
    // The bytes the open read (read again only for an empty or whitespace-only file, whose
    // buffer the open does not keep).
    let reread;
    let bytes: &[u8] = if sm.file_bytes().len() == ro.report.bytes {
        sm.file_bytes()
    } else {
        reread = ctx.backend.read_session(path)?;
        &reread
    };
    // The problems are counted on a thread of their own while the rest is counted here.
    let (shape, tree_ms, lines, by_kind, by_role, total, entry_rows, branch_len, version, problems) =
        std::thread::scope(|s| -> anyhow::Result<_> {
            let problems = s.spawn(|| crate::check::problems(&ro.report, sm, bytes).len());
            let start = Instant::now();
            let shape = sm.tree_shape();
            let tree_ms = start.elapsed().as_secs_f64() * 1000.0;
            let lines = count_lines(bytes);
            let mut by_kind: BTreeMap<&'static str, usize> = BTreeMap::new();
            let mut by_role: BTreeMap<String, usize> = BTreeMap::new();
            let mut total = 0;
            let entry_rows = sm.entry_row_count();
            for e in model::unique_entries(sm) {
                total += 1;
                *by_kind.entry(e.entry_type().as_str()).or_default() += 1;
                if e.entry_type() == EntryType::Message {
                    // The role the open read; the row is parsed only for a role of another kind.
                    let role = match e.message_role() {
                        MessageRole::None => "(none)".to_owned(),
                        MessageRole::Other => e
                            .raw_value()
                            .ok()
                            .and_then(|v| {
                                v.get("message")
                                    .and_then(|m| crate::render::field(m, "role"))
                            })
                            .unwrap_or_else(|| "(none)".to_owned()),
                        named => named.as_str().unwrap_or("(none)").to_owned(),
                    };
                    match by_role.get_mut(role.as_str()) {
                        Some(n) => *n += 1,
                        None => {
                            by_role.insert(role, 1);
                        }
                    }
                }
            }
            let branch_len = sm.get_branch(None).len();
            let version = model::file_version(ro)?;
            let problems = problems
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            Ok((
                shape, tree_ms, lines, by_kind, by_role, total, entry_rows, branch_len, version,
                problems,
            ))
        })?;
    let duplicate_rows = entry_rows - total;

    let mut o = JsObject::new();
    let num = |n: usize| JsValue::Number(n as f64);
    o.insert("file", JsValue::from(path.display().to_string()));
    o.insert("bytes", num(ro.report.bytes));
    o.insert("lines", num(lines));
    o.insert("version", version.map_or(JsValue::Null, JsValue::Number));
    o.insert("sessionId", JsValue::from(sm.get_session_id()));
    o.insert("entries", num(total));
    o.insert("duplicateRows", num(duplicate_rows));
    let mut k = JsObject::new();
    for (kind, n) in &by_kind {
        k.insert(*kind, num(*n));
    }
    o.insert("byKind", JsValue::Object(k));
    let mut r = JsObject::new();
    for (role, n) in &by_role {
        r.insert(role.as_str(), num(*n));
    }
    o.insert("byRole", JsValue::Object(r));
    o.insert("roots", num(shape.roots));
    o.insert("depth", num(shape.depth));
    o.insert("branchPoints", num(shape.branch_points));
    o.insert("leaves", num(shape.leaves));
    o.insert("labels", num(shape.labels));
    o.insert("branchLength", num(branch_len));
    o.insert("problems", num(problems));
    o.insert(
        "openMs",
        JsValue::Number((open_ms * 1000.0).round() / 1000.0),
    );
    o.insert(
        "treeMs",
        JsValue::Number((tree_ms * 1000.0).round() / 1000.0),
    );

    let mut lines_out = Vec::new();
    let out = &mut lines_out;
    let kv = |k: &str, v: String| format!("  {} {v}", text::pad(k, 14));
    out.push(text::path(path));
    out.push(kv(
        "size",
        format!(
            "{} bytes ({}), {} lines",
            text::thousands(ro.report.bytes),
            text::human_bytes(ro.report.bytes as u64),
            text::thousands(lines)
        ),
    ));
    let v = version.map_or_else(
        || "none (no session header in the file)".to_owned(),
        session_format::json::number_to_string,
    );
    let v = if version.is_some_and(|v| v < 3.0) {
        format!("{v} (migrated in memory; the file is not changed)")
    } else {
        v
    };
    out.push(kv("version", v));
    out.push(kv(
        "entries",
        if duplicate_rows == 0 {
            text::thousands(total)
        } else {
            format!(
                "{} (each id once; {} more {} an id and {} not counted)",
                text::thousands(total),
                text::thousands(duplicate_rows),
                if duplicate_rows == 1 {
                    "row repeats"
                } else {
                    "rows repeat"
                },
                if duplicate_rows == 1 { "is" } else { "are" }
            )
        },
    ));
    for (kind, n) in &by_kind {
        let mut line = format!(
            "    {} {}",
            text::pad(kind, 22),
            text::pad_left(&text::thousands(*n), 7)
        );
        if *kind == "message" && !by_role.is_empty() {
            let roles: Vec<String> = by_role
                .iter()
                .map(|(r, n)| format!("{r} {}", text::thousands(*n)))
                .collect();
            line.push_str(&format!("  ({})", roles.join(", ")));
        }
        out.push(line);
    }
    out.push(kv(
        "tree",
        format!(
            "{} {}, depth {}, {} branch {}, {} {}",
            shape.roots,
            if shape.roots == 1 { "root" } else { "roots" },
            text::thousands(shape.depth),
            shape.branch_points,
            if shape.branch_points == 1 {
                "point"
            } else {
                "points"
            },
            text::thousands(shape.leaves),
            if shape.leaves == 1 { "leaf" } else { "leaves" },
        ),
    ));
    out.push(kv(
        "branch",
        format!(
            "{} entries to leaf {}",
            text::thousands(branch_len),
            sm.get_leaf_id().map_or("none", text::short_id)
        ),
    ));
    out.push(kv("labels", text::thousands(shape.labels)));
    out.push(kv(
        "problems",
        if problems == 0 {
            "none".to_owned()
        } else {
            format!("{problems} (see `sessions check`)")
        },
    ));
    out.push(kv(
        "open time",
        format!("{open_ms:.1} ms (tree {tree_ms:.1} ms)"),
    ));
    Ok(Stats {
        json: JsValue::Object(o),
        lines: lines_out,
    })
}

/// `sessions stats FILE...`: every file gets its own result; one that cannot be read is
/// reported and the others are still counted (exit code 2).
pub(crate) fn run(
    ctx: &Ctx,
    paths: &[std::path::PathBuf],
    json: bool,
    out: &mut Output,
) -> anyhow::Result<crate::outcome::Outcome> {
    let mut failed = 0;
    let mut all: Vec<Result<Stats, (String, String)>> = Vec::with_capacity(paths.len());
    for p in paths {
        match one(ctx, p, out) {
            Ok(s) => all.push(Ok(s)),
            Err(e) => {
                if crate::output::is_broken_pipe(&e) {
                    return Err(e);
                }
                failed += 1;
                let msg = crate::output::error_text(&e);
                if !json {
                    out.error(&msg)?;
                }
                all.push(Err((p.display().to_string(), msg)));
            }
        }
    }
    if json {
        let v = JsValue::Array(
            all.into_iter()
                .map(|r| match r {
                    Ok(s) => s.json,
                    Err((file, msg)) => {
                        let mut o = JsObject::new();
                        o.insert("file", JsValue::from(file));
                        o.insert("error", JsValue::from(msg));
                        JsValue::Object(o)
                    }
                })
                .collect(),
        );
        out.line(&session_format::normalize::to_json_string_indented(&v, 2))?;
    } else {
        let mut first = true;
        for s in all.iter().flatten() {
            if !first {
                out.line("")?;
            }
            first = false;
            for l in &s.lines {
                out.line(l)?;
            }
        }
    }
    Ok(if failed > 0 {
        crate::outcome::Outcome::Failed
    } else {
        crate::outcome::Outcome::Ok
    })
}
