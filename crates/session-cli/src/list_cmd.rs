//! `sessions list`: each listed directory is read by store key when it holds OpenClaw's
//! `sessions.json` ([`crate::store_list`]), else file by file ([`crate::list`]).

use anyhow::bail;

use crate::address::Locator;
use crate::ctx::Ctx;
use crate::list::{collect_dirs, listed_dirs, write_json, write_table};
use crate::outcome::UsageError;
use crate::output::Output;
use crate::{store_list, text};

/// `sessions list`. Directories holding `sessions.json` are listed by store key
/// ([`crate::store_list`]); when none of the listed directories has one, the files are listed
/// as before (`--active` and `--limit` then select by the MODIFIED time).
pub(crate) fn run(
    ctx: &Ctx,
    loc: &Locator,
    all: bool,
    json: bool,
    flags: &store_list::ListFlags,
    out: &mut Output,
) -> anyhow::Result<()> {
    let dirs = listed_dirs(ctx, loc, all)?;
    let show_agent = all || !loc.names_dir();
    let (store_dirs, file_dirs): (Vec<_>, Vec<_>) =
        dirs.into_iter().partition(|(_, d)| match ctx.store() {
            None => store_list::is_store_dir(d),
            // A SQLite database's namespace is its agent's store (its index is session_nodes).
            Some(r) => r.sqlite_db_of_dir(d).is_some(),
        });
    if !store_dirs.is_empty() {
        let stores = store_list::load(ctx, &store_dirs, flags)?;
        let (files, skipped) = if file_dirs.is_empty() {
            (Vec::new(), Vec::new())
        } else {
            collect_dirs(ctx, &file_dirs)
        };
        return store_list::write(&stores, &files, &skipped, show_agent, flags, json, out);
    }
    if flags.archived {
        bail!(UsageError::new(
            "--archived lists the archives of an OpenClaw store (a sessions directory holding \
             sessions.json); none of the listed directories has one"
        ));
    }
    let (mut listed, skipped) = collect_dirs(ctx, &file_dirs);
    if let Some(minutes) = flags.active_minutes {
        let since = ctx.now_ms() as f64 - minutes as f64 * 60_000.0;
        listed.retain(|l| l.info.modified >= since);
    }
    if let Some(Some(n)) = flags.limit {
        listed.truncate(n);
    }
    if json {
        let mut doc = Vec::with_capacity(1024 * (listed.len() + skipped.len() + 1));
        write_json(&listed, &skipped, &mut doc);
        doc.push(b'\n');
        out.write_bytes(&doc)?;
        return Ok(());
    }
    write_table(
        &listed,
        &skipped,
        show_agent,
        text::output_width(None),
        flags.width,
        out,
    )?;
    if listed.is_empty()
        && let Some(dir) = loc.dir.as_deref().filter(|d| d.join("agents").is_dir())
    {
        out.warn(&format!(
            "{} holds agents/: it looks like an OpenClaw state directory; use --root {} to list \
             its agents' sessions",
            text::path(dir),
            text::shell_quote(&dir.display().to_string())
        ))?;
    }
    if listed.is_empty() && ctx.store().is_none() && loc.dir.is_none() && !loc.pi {
        // `--backend files` on an OpenClaw 2026.8+ install: its sessions are in the databases.
        let root = crate::address::state_root(loc.root.as_deref());
        let dbs: Vec<String> = crate::backend::sqlite_dbs_under(&root)
            .iter()
            .filter(|(agent, _)| loc.agent.as_deref().is_none_or(|a| a == agent))
            .map(|(_, db)| text::path(db))
            .collect();
        if !dbs.is_empty() {
            out.warn(&format!(
                "no session files, but {} holds OpenClaw 2026.8+ SQLite {} {}; without \
                 --backend files they are read",
                text::path(&root),
                if dbs.len() == 1 {
                    "database"
                } else {
                    "databases"
                },
                dbs.join(", ")
            ))?;
        }
    }
    Ok(())
}
