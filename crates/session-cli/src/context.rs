//! `sessions context`: the model context `build_session_context` returns for the current leaf
//! (or `--leaf ID`), as a numbered list or as the exact JSON value.

use std::path::Path;

use session_store::{SessionContext, SessionManager};

use crate::ctx::Ctx;
use crate::model;
use crate::output::Output;
use crate::render::message_summary;
use crate::text::{self, ShortIds};

pub(crate) const LONG_ABOUT: &str = "\
Print the model context of a session: the messages OpenClaw's buildSessionContext would send for
the current leaf (or for the branch ending at --leaf ID), read-only.

The context follows the branch from the root to the leaf. After the last compaction on that
branch it starts with the compaction summary (role compactionSummary), then the entries from the
compaction's firstKeptEntryId on; branch summaries appear as role branchSummary and
custom_message entries as role custom. thinkingLevel is the last thinking change on the branch
(default off); model is the provider/model of the last model change or assistant reply on the
branch (`none` when there is neither; a `?` stands for a provider or model that entry does not
name, with a note saying so).

Text output: a header line (leaf, message count, thinking level, model), then one line per
message: its number, the id of the entry it comes from (shortened as `tree` shortens it), its
role and a one-line excerpt (control and bidirectional-text characters escaped). A message
nested too deeply to decode shows as `(too deep to decode)`; --json cannot show it and fails.
Problems `sessions check` would report are counted on stderr; a file that is not a session
(no readable header and no entries) is an error.

JSON output (--json): exactly the value buildSessionContext returns,
  {\"messages\": [message], \"thinkingLevel\": string, \"model\": {\"provider\", \"modelId\"} | null}
where each message is the stored message object (or the synthesised custom / branchSummary /
compactionSummary message), indented by 2.

--leaf accepts an entry id, a unique id prefix or @LINE; an unknown id is an error.";

/// Builds the context at the current leaf or at `leaf`.
pub(crate) fn build<'a>(
    sm: &'a SessionManager,
    leaf: Option<&str>,
) -> anyhow::Result<SessionContext<'a>> {
    Ok(match leaf {
        None => sm.build_session_context()?,
        Some(spec) => {
            let e = model::resolve_entry(sm, spec)?;
            sm.build_session_context_at(e.id())?
        }
    })
}

/// The header line and one line per message.
pub(crate) fn render_lines(
    path: &Path,
    sm: &SessionManager,
    ctx: &SessionContext<'_>,
    leaf: Option<&str>,
    width: usize,
) -> anyhow::Result<Vec<String>> {
    let leaf = leaf
        .map(str::to_owned)
        .or_else(|| sm.get_leaf_id().map(str::to_owned));
    let thinking = ctx.thinking_level_str().unwrap_or_else(|| {
        ctx.thinking_level.as_ref().map_or_else(
            || "(unset)".to_owned(),
            session_format::json::to_json_string,
        )
    });
    let model = match &ctx.model {
        None => "none".to_owned(),
        Some(m) => match m.as_strs() {
            Some((p, id)) => text::safe(&format!("{p}/{id}")).into_owned(),
            None => {
                let part = |v: &Option<session_format::json::JsValue>| match v {
                    Some(session_format::json::JsValue::String(s)) => {
                        text::safe(&s.to_str_lossy()).into_owned()
                    }
                    _ => "?".to_owned(),
                };
                format!(
                    "{}/{} (the last model change or assistant reply on the branch does not name \
                     both a provider and a model)",
                    part(&m.provider),
                    part(&m.model_id)
                )
            }
        },
    };
    let ids = ShortIds::new(sm.get_entries().map(|e| e.id()));
    let thinking = text::safe(&thinking).into_owned();
    let n = ctx.messages.len();
    let mut lines = vec![format!(
        "{} — context at leaf {}: {} {}, thinking {thinking}, model {model}",
        text::path(path),
        leaf.as_deref()
            .map_or_else(|| "none".to_owned(), |l| ids.get(l)),
        text::thousands(n),
        if n == 1 { "message" } else { "messages" },
    )];
    if n == 0 {
        lines.push("(no messages)".to_owned());
        return Ok(lines);
    }
    let num_w = n.to_string().len();
    let mut rows = Vec::with_capacity(n);
    for msg in &ctx.messages {
        let summary = match msg.to_value() {
            Ok(v) => message_summary(&v),
            Err(e) if model::is_too_deep(&e) => {
                model::undecodable_summary(msg.entry.entry_type(), &e)
            }
            Err(e) => return Err(e.into()),
        };
        rows.push((ids.get(msg.entry.id()), summary));
    }
    let role_w = rows
        .iter()
        .map(|(_, s)| text::width(&s.kind))
        .max()
        .unwrap_or(4)
        .min(17);
    let id_w = rows
        .iter()
        .map(|(id, _)| text::width(id))
        .max()
        .unwrap_or(8);
    for (k, (id, s)) in rows.iter().enumerate() {
        let head = format!(
            "{}  {}  {}  ",
            text::pad_left(&(k + 1).to_string(), num_w),
            text::pad(id, id_w),
            text::pad(&s.kind, role_w)
        );
        let room = width.saturating_sub(text::width(&head)).max(12);
        lines.push(
            format!("{head}{}", text::excerpt(&s.text, room))
                .trim_end()
                .to_owned(),
        );
    }
    Ok(lines)
}

/// `sessions context FILE`.
pub(crate) fn run(
    ctx: &Ctx,
    path: &Path,
    leaf: Option<&str>,
    json: bool,
    width: usize,
    out: &mut Output,
) -> anyhow::Result<()> {
    let opened = model::open(ctx, path)?;
    let ro = &opened.ro;
    let sm = &ro.session;
    model::with_problem_report(ctx, path, &opened, out, |out| {
        let built = build(sm, leaf)?;
        if json {
            let v = built.to_value()?;
            out.line(&session_format::normalize::to_json_string_indented(&v, 2))?;
            return Ok(());
        }
        let leaf_id = match leaf {
            Some(spec) => Some(model::resolve_entry(sm, spec)?.id().to_owned()),
            None => None,
        };
        let note = model::unstable_ids_note(model::file_version(ro)?);
        for (k, l) in render_lines(path, sm, &built, leaf_id.as_deref(), width)?
            .iter()
            .enumerate()
        {
            out.line(l)?;
            if k == 0
                && let Some(note) = &note
            {
                out.line(note)?;
            }
        }
        Ok(())
    })
}
