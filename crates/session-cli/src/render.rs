//! What an entry or a context message is, in a few words: its kind (the message role for
//! `message` entries) and a one-line text (message text, tool calls, tool results, summaries,
//! label changes, model and thinking changes). Used by `tree`, `context`, the exports and `list`.

use session_format::entry::EntryType;
use session_format::json::{JsValue, to_json_string};

/// A short description of an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Summary {
    /// The role for messages, else a short kind name.
    pub(crate) kind: String,
    /// The text, not yet cut to one line.
    pub(crate) text: String,
}

/// The string value of `v[key]`, or its JSON text when it is not a string.
pub(crate) fn field(v: &JsValue, key: &str) -> Option<String> {
    match v.get(key)? {
        JsValue::String(s) => Some(s.to_str_lossy().into_owned()),
        JsValue::Null => None,
        other => Some(to_json_string(other)),
    }
}

/// The short kind name shown for an entry type (`message` entries show their role instead).
pub(crate) fn kind_name(ty: EntryType) -> &'static str {
    match ty {
        EntryType::Message => "message",
        EntryType::ThinkingLevelChange => "thinking",
        EntryType::ModelChange => "model",
        EntryType::Compaction => "compaction",
        EntryType::BranchSummary => "branch_summary",
        EntryType::Custom => "custom",
        EntryType::CustomMessage => "custom_message",
        EntryType::Label => "label",
        EntryType::SessionInfo => "session_info",
        EntryType::Reset => "reset",
        EntryType::Leaf => "leaf",
    }
}

/// The text of a `content` value: a string, or the blocks' texts and tool calls joined by
/// spaces (thinking is left out unless it is all there is; images show as `[image]`).
pub(crate) fn content_text(content: Option<&JsValue>) -> String {
    match content {
        None | Some(JsValue::Null) => String::new(),
        Some(JsValue::String(s)) => s.to_str_lossy().into_owned(),
        Some(JsValue::Array(blocks)) => {
            let mut parts: Vec<String> = Vec::new();
            let mut thinking = false;
            for b in blocks {
                let ty = field(b, "type").unwrap_or_default();
                match ty.as_str() {
                    "text" => {
                        let t = field(b, "text").unwrap_or_default();
                        if !t.trim().is_empty() {
                            parts.push(t);
                        }
                    }
                    "thinking" => thinking = true,
                    "image" => parts.push("[image]".to_owned()),
                    "toolCall" => parts.push(tool_call_text(b)),
                    "" => parts.push(to_json_string(b)),
                    other => parts.push(format!("[{other}]")),
                }
            }
            if parts.is_empty() && thinking {
                parts.push("(thinking)".to_owned());
            }
            parts.join(" ")
        }
        Some(other) => to_json_string(other),
    }
}

/// `→ name {"arg":…}` for a `toolCall` block.
pub(crate) fn tool_call_text(block: &JsValue) -> String {
    let name = field(block, "name").unwrap_or_else(|| "?".to_owned());
    match block.get("arguments") {
        None | Some(JsValue::Null) => format!("→ {name}()"),
        Some(args) => format!("→ {name} {}", to_json_string(args)),
    }
}

/// Summary of a message payload (`message.message`, or a context message).
pub(crate) fn message_summary(msg: &JsValue) -> Summary {
    let role = field(msg, "role").unwrap_or_else(|| "message".to_owned());
    let content = content_text(msg.get("content"));
    let text = match role.as_str() {
        "assistant" => {
            let error = field(msg, "errorMessage");
            let stop = field(msg, "stopReason");
            match (content.is_empty(), error) {
                (true, Some(e)) => format!("({}: {e})", stop.as_deref().unwrap_or("error")),
                (true, None) => format!("(no content, {})", stop.as_deref().unwrap_or("no reply")),
                (false, Some(e)) => format!("{content} ⚠ {e}"),
                (false, None) => content,
            }
        }
        "toolResult" => {
            let name = field(msg, "toolName").unwrap_or_else(|| "tool".to_owned());
            let err = matches!(msg.get("isError"), Some(JsValue::Bool(true)));
            format!("{}{name}: {content}", if err { "✗ " } else { "" })
        }
        "bashExecution" => {
            let cmd = field(msg, "command").unwrap_or_default();
            match msg.get("exitCode") {
                Some(JsValue::Number(n)) => {
                    format!(
                        "$ {cmd} → exit {}",
                        session_format::json::number_to_string(*n)
                    )
                }
                _ => format!("$ {cmd}"),
            }
        }
        "custom" => {
            let ty = field(msg, "customType").unwrap_or_default();
            format!("{ty}: {content}")
        }
        "branchSummary" | "compactionSummary" => field(msg, "summary").unwrap_or_default(),
        _ => content,
    };
    let text = if text.is_empty() {
        "(empty)".to_owned()
    } else {
        text
    };
    Summary {
        kind: crate::text::safe(&role).into_owned(),
        text,
    }
}

/// Summary of an entry row (its value as reads report it); `ids` shortens the ids it names.
pub(crate) fn entry_summary(ty: EntryType, v: &JsValue, ids: &crate::text::ShortIds) -> Summary {
    let kind = kind_name(ty).to_owned();
    let text = match ty {
        EntryType::Message => {
            return match v.get("message") {
                Some(m @ JsValue::Object(_)) => message_summary(m),
                Some(other) => Summary {
                    kind: "message".to_owned(),
                    text: format!("(invalid message: {})", to_json_string(other)),
                },
                None => Summary {
                    kind: "message".to_owned(),
                    text: "(no message)".to_owned(),
                },
            };
        }
        EntryType::ThinkingLevelChange => field(v, "thinkingLevel").unwrap_or_default(),
        EntryType::ModelChange => format!(
            "{}/{}",
            field(v, "provider").unwrap_or_default(),
            field(v, "modelId").unwrap_or_default()
        ),
        EntryType::Compaction => field(v, "summary").unwrap_or_default(),
        EntryType::BranchSummary => field(v, "summary").unwrap_or_default(),
        EntryType::Custom => {
            let ty = field(v, "customType").unwrap_or_default();
            match v.get("data") {
                None => ty,
                Some(d) => format!("{ty} {}", to_json_string(d)),
            }
        }
        EntryType::CustomMessage => {
            let ty = field(v, "customType").unwrap_or_default();
            format!("{ty}: {}", content_text(v.get("content")))
        }
        EntryType::Label => {
            let target = field(v, "targetId").unwrap_or_default();
            let target = ids.get(&target);
            match v.get("label") {
                Some(l) if l.is_truthy() => {
                    let l = field(v, "label").unwrap_or_else(|| to_json_string(l));
                    format!("{target} → \"{l}\"")
                }
                _ => format!("{target} → (cleared)"),
            }
        }
        EntryType::SessionInfo => match field(v, "name") {
            Some(n) => format!("name \"{}\"", n.trim()),
            None => "name cleared".to_owned(),
        },
        EntryType::Reset | EntryType::Leaf => to_json_string(v),
    };
    Summary { kind, text }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::ShortIds;
    use session_format::json::parse_value;

    fn v(s: &str) -> JsValue {
        parse_value(s.as_bytes()).unwrap()
    }

    #[test]
    fn assistant_with_tool_call() {
        let s = entry_summary(
            EntryType::Message,
            &v(
                r#"{"message":{"role":"assistant","content":[{"type":"text","text":"Let me check."},{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"ls"}}]}}"#,
            ),
            &ShortIds::default(),
        );
        assert_eq!(s.kind, "assistant");
        assert_eq!(s.text, r#"Let me check. → bash {"command":"ls"}"#);
    }

    #[test]
    fn aborted_reply_and_tool_error() {
        let s = message_summary(&v(
            r#"{"role":"assistant","content":[],"stopReason":"aborted","errorMessage":"Request was aborted"}"#,
        ));
        assert_eq!(s.text, "(aborted: Request was aborted)");
        let s = message_summary(&v(
            r#"{"role":"toolResult","toolName":"bash","content":[{"type":"text","text":"boom"}],"isError":true}"#,
        ));
        assert_eq!(s.text, "✗ bash: boom");
    }

    #[test]
    fn label_and_model() {
        let s = entry_summary(
            EntryType::Label,
            &v(r#"{"targetId":"abcdef0123","label":"ok"}"#),
            &ShortIds::default(),
        );
        assert_eq!(s.text, "abcdef01 → \"ok\"");
        let collide = ShortIds::new(["abcdef0123", "abcdef0199"]);
        let s = entry_summary(
            EntryType::Label,
            &v(r#"{"targetId":"abcdef0123","label":"ok"}"#),
            &collide,
        );
        assert_eq!(s.text, "abcdef012 → \"ok\"");
        let s = entry_summary(
            EntryType::ModelChange,
            &v(r#"{"provider":"anthropic","modelId":"claude"}"#),
            &ShortIds::default(),
        );
        assert_eq!(
            (s.kind.as_str(), s.text.as_str()),
            ("model", "anthropic/claude")
        );
    }
}
