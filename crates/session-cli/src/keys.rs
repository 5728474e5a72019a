//! `sessions keys parse KEY`: the classification of a session key (openclaw-jsonl.md §5.1–§5.2,
//! §7.7) as [`session_semantics::inspect_key`] gives it, as text or JSON.

use session_semantics::KeyInfo;
use session_semantics::key::normalize_agent_id;

use crate::outcome::Outcome;
use crate::output::Output;
use crate::text;

pub(crate) const LONG_ABOUT: &str = "\
Parse and classify a session key (agent:<agentId>:<rest>) as OpenClaw 2026.6.11 does: the
canonical key (lowercased, except opaque peer ids such as Signal groups and Matrix rooms), the
agent id and whether it is valid ([a-z0-9][a-z0-9_-]{0,63}), the rest, whether it is the main
session (--main-key, default main), the shape (missing, agent, malformed_agent,
legacy_or_alias), the chat type (direct, group, channel, unknown), the session kind (direct,
group, cron, global, unknown), the reset type (direct, group, thread), the peer (channel,
account, direct/group/channel, peer id), the thread and its parent key, the cron job and run,
the subagent depth, ACP and incognito keys, the sentinels global and unknown, and the session
file name the key maps to in the agent's sessions directory. Nothing is read or written.

JSON output (--json):
  {\"input\", \"shape\", \"key\", \"error\", \"agentId\", \"agentIdValid\", \"rest\", \"sentinel\",
   \"main\", \"chatType\", \"kind\", \"resetType\",
   \"peer\": null|{\"channel\", \"accountId\", \"kind\", \"peerId\", \"legacyDm\"},
   \"thread\": null|{\"parentKey\", \"threadId\"}, \"cron\": null|{\"job\", \"runId\"},
   \"subagent\", \"subagentDepth\", \"acp\", \"incognito\", \"fileName\", \"fileNameError\"}

Exit codes: 0 KEY is an agent session key with a valid agent id; 2 it is not (the
classification is still printed; stderr names the segment that is wrong: segment 1 must be
`agent`, segment 2 is the agent id, segment 3 onwards the rest), or a usage error.";

/// Why the key is not a usable agent key, naming the segment.
fn problem(info: &KeyInfo) -> Option<String> {
    if let Some(e) = &info.error {
        return Some(e.clone());
    }
    match (&info.agent_id, info.agent_id_valid) {
        (Some(agent), Some(false)) => Some(format!(
            "session key {:?}: segment 2 (the agent id {agent:?}) is not a valid agent id: \
             expected [a-z0-9][a-z0-9_-]{{0,63}} (it would normalise to {:?})",
            info.input,
            normalize_agent_id(agent)
        )),
        _ => None,
    }
}

/// `info` with every string taken from the key escaped ([`text::safe`]), so that a key holding
/// a newline or a tab cannot start a line of its own in the text output (the input line is
/// already quoted).
fn safe_info(info: &KeyInfo) -> KeyInfo {
    let s = |v: &str| text::safe(v).into_owned();
    let o = |v: &Option<String>| v.as_deref().map(s);
    let mut i = info.clone();
    i.key = o(&info.key);
    i.error = o(&info.error);
    i.agent_id = o(&info.agent_id);
    i.rest = o(&info.rest);
    i.file_name = o(&info.file_name);
    i.file_name_error = o(&info.file_name_error);
    if let Some(p) = &mut i.peer {
        p.channel = o(&p.channel);
        p.account_id = o(&p.account_id);
        p.kind = s(&p.kind);
        p.peer_id = s(&p.peer_id);
    }
    if let Some(t) = &mut i.thread {
        t.parent_key = s(&t.parent_key);
        t.thread_id = s(&t.thread_id);
    }
    if let Some(c) = &mut i.cron {
        c.job = s(&c.job);
        c.run_id = o(&c.run_id);
    }
    i
}

/// Prints the classification of `key`.
///
/// # Errors
/// Stdout fails.
pub(crate) fn parse(
    key: &str,
    main_key: Option<&str>,
    json: bool,
    out: &mut Output,
) -> anyhow::Result<Outcome> {
    let info = session_semantics::inspect_key(key, main_key);
    if json {
        out.line(&serde_json::to_string_pretty(&info)?)?;
    } else {
        out.line(&text::safe_multiline(&safe_info(&info).to_string()))?;
    }
    Ok(match problem(&info) {
        Some(msg) => {
            out.error(&text::safe(&msg))?;
            Outcome::Failed
        }
        None => Outcome::Ok,
    })
}
