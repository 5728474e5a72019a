//! Provider payloads: the messages of the context (openclaw-jsonl.md §2.7) made into what one
//! provider API accepts. Applied to copies of the messages only; the transcript file is never
//! touched, and the same transcript gives the same payload on every call and after a reopen
//! (nothing here depends on the clock except the `timestamp` of synthetic results, which
//! [`PairingOptions::now_ms`] fixes).
//!
//! [`build_payload`] runs, in order:
//!
//! 1. **Lone surrogates.** A string (value or object key) holding a UTF-16 surrogate without
//!    its partner (`\ud800`–`\udfff` escapes in the line that `JSON.parse` accepts) is decoded
//!    with U+FFFD in its place; a valid pair stays the character it encodes. Each such string
//!    gives a [`PayloadWarning::LoneSurrogate`] naming the file line, the entry and the JSON
//!    path inside the row, and a `tracing` warning. Tool-call ids are the exception: they are
//!    not decoded but normalised from their exact code units in step 3 (a lone surrogate is
//!    never a valid id), so two ids that differ only in their lone surrogates stay distinct;
//!    they are still reported. Two keys of one object that become equal (`a\ud800`,
//!    `a\ud801`) keep the first member in the row's order; each later one is left out with a
//!    [`PayloadWarning::DroppedMember`] naming its path and line.
//! 2. **Conversion** ([`convert_message`], `convertToLlm`).
//! 3. **Tool-call ids** ([`ProviderApi`], [`normalize_tool_call_id`]): every call block's id
//!    is made valid for the target API, deterministically, and no two calls share the key the
//!    API pairs by ([`ProviderApi::pairing_key`]); each tool result's id is mapped the same
//!    way (from the call's exact id when it names it byte for byte, surrounding whitespace
//!    included), so results keep naming their call.
//! 4. **Pairing** ([`repair_tool_use_result_pairing`]): one result right after each call;
//!    errored and aborted assistant messages are left out by default, with the results of
//!    their calls and without synthetic ones ([`ErroredAssistantPolicy::Skip`], as pi-ai's
//!    `transformMessages`).
//! 5. **History limits** ([`history_start`]).
//! 6. **Check**: the result holds no lone surrogate anywhere (anything left is replaced and
//!    reported without a line), so its JSON is valid UTF-8 without an unpaired `\ud800`–`\udfff`
//!    escape.

use std::collections::{HashMap, HashSet};
use std::fmt;

use sha2::{Digest, Sha256};

use session_format::js;
use session_format::json::{JsObject, JsString, JsValue, to_json_string};
use session_format::message::{TOOL_CALL_BLOCK_TYPES, TOOL_RESULT_ID_KEYS};
use session_semantics::policy::HistoryLimits;
use session_store::{ContextError, ContextKind, ReadError, SessionManager};

use crate::convert::convert_message;
use crate::history::history_start;
use crate::pairing::{PairingOptions, PairingRepair, repair_tool_use_result_pairing};

#[cfg(doc)]
use crate::pairing::ErroredAssistantPolicy;

// ------------------------------------------------------------------------------------------
// Target APIs and their tool-call ids

/// The provider API a payload is built for. It decides which tool-call ids are valid; the
/// caller picks it for the model it is about to call.
///
/// The limits, with their sources (no provider documents all of them; where the API reference
/// is silent, the limit is the one the API enforces in its error responses):
///
/// - [`ProviderApi::AnthropicMessages`]: `^[A-Za-z0-9_-]{1,64}$`. The character set is the
///   pattern the Messages API enforces on `tool_use.id` and `tool_result.tool_use_id` (its 400
///   error reads `messages.N.content.M.tool_use.id: String should match pattern
///   '^[a-zA-Z0-9_-]+$'`, as reported in maximhq/bifrost#5097 and BerriAI/litellm#21215); the
///   64-character maximum is the one pi-ai applies for Anthropic (`transform-messages.ts`:
///   "Anthropic APIs require IDs matching ^[a-zA-Z0-9_-]+$ (max 64 chars)"; its Anthropic
///   provider cuts ids to 64).
/// - [`ProviderApi::OpenAiChat`]: `^[A-Za-z0-9_-]{1,40}$`. Chat Completions rejects a longer
///   `tool_calls[].id` with `Invalid 'messages[2].tool_calls[0].id': string too long.
///   Expected a string with maximum length 40` (code `string_above_max_length`; vercel/ai#5171,
///   openclaw/openclaw#875, microsoft/autogen#6377); pi-ai's Chat Completions provider cuts ids
///   to 40 ("OpenAI limit"). The API documents no character set; the ids it generates are
///   `call_` and alphanumerics, and ids of other characters (`functions.Bash:0`, pi's
///   `call|item` form of Responses ids) are rewritten here rather than sent as they are.
/// - [`ProviderApi::OpenAiResponses`]: a call id `^[A-Za-z0-9_-]{1,64}$` not ending in `_`,
///   optionally followed by `|` and an item id `^fc[A-Za-z0-9_-]{0,62}$` not ending in `_`.
///   The Responses API rejects a `call_id` over 64 characters (`Invalid input[].call_id: string
///   too long. Expected max length 64`; decolua/9router#393, earendil-works/pi#2320). pi stores
///   a Responses tool call's id as `<call_id>|<item id>`; its Responses provider
///   (`openai-responses-shared.ts`, as bundled with OpenClaw 2026.6.11) splits it at `|`
///   (`id.split("|")`, so anything after a second `|` is dropped: such ids are not valid
///   here) and sends the call as `{type: "function_call", id: <item id>, call_id: <call id>}`
///   and its result as `{type: "function_call_output", call_id: <call id>}`, the result's
///   `toolCallId` split the same way. The API pairs a result with its call by `call_id`
///   alone, so two calls whose ids share the call id (`call_1|fc_a`, `call_1|fc_b`) would
///   send one `call_id` twice: within one payload the later one is rewritten
///   ([`normalize_tool_call_ids`], [`ProviderApi::pairing_key`]). Before sending to its own
///   provider pi also replaces characters outside `[A-Za-z0-9_-]` by `_` in both parts, cuts
///   each to 64 characters, strips trailing underscores ("OpenAI Codex rejects them") and
///   prefixes an item id that does not start with `fc_` with `fc_` (item ids the API issues
///   are `fc_…`; an item id of another provider becomes `fc_<hash>`). An id rewritten here has
///   no `|` (it is a call id alone, which the provider then sends without an item id, as
///   pi-ai does for calls of another model).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProviderApi {
    /// Anthropic Messages (`tool_use` / `tool_result` blocks).
    AnthropicMessages,
    /// OpenAI Chat Completions (`tool_calls[].id`, `tool_call_id`).
    OpenAiChat,
    /// OpenAI Responses (`function_call.call_id`, `function_call_output.call_id`).
    OpenAiResponses,
}

/// Hex digits of the hash suffix of a rewritten id.
const HASH_HEX: usize = 16;

impl ProviderApi {
    /// The longest tool-call id the API accepts, in characters (of the call id, for
    /// [`ProviderApi::OpenAiResponses`]): 64, 40 and 64.
    pub const fn max_tool_call_id_len(self) -> usize {
        match self {
            ProviderApi::AnthropicMessages | ProviderApi::OpenAiResponses => 64,
            ProviderApi::OpenAiChat => 40,
        }
    }

    /// True when `id` is a valid tool-call id for this API as it is (see the type's
    /// documentation for each rule). Such ids are never rewritten.
    pub fn is_valid_tool_call_id(self, id: &str) -> bool {
        match self {
            ProviderApi::AnthropicMessages | ProviderApi::OpenAiChat => {
                is_id_part(id, self.max_tool_call_id_len())
            }
            ProviderApi::OpenAiResponses => {
                let (call, item) = match id.split_once('|') {
                    Some((c, i)) => (c, Some(i)),
                    None => (id, None),
                };
                is_id_part(call, 64)
                    && !call.ends_with('_')
                    && item.is_none_or(|i| {
                        i.starts_with("fc") && is_id_part(i, 64) && !i.ends_with('_')
                    })
            }
        }
    }

    /// The part of a valid id the API pairs a result with its call by: the call id of a
    /// Responses `call|item` id (the part before the first `|`, the `call_id` the provider
    /// sends for both the call and its result); the whole id otherwise. Two calls of one
    /// payload never share it.
    pub fn pairing_key(self, id: &str) -> &str {
        match self {
            ProviderApi::OpenAiResponses => id.split_once('|').map_or(id, |(c, _)| c),
            _ => id,
        }
    }
}

/// `^[A-Za-z0-9_-]{1,max}$`.
fn is_id_part(s: &str, max: usize) -> bool {
    !s.is_empty() && s.len() <= max && s.bytes().all(is_id_byte)
}

fn is_id_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// The first [`HASH_HEX`] hex digits of SHA-256 over `parts` (each followed by a NUL).
fn hash_hex(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
        h.update([0u8]);
    }
    let digest = h.finalize();
    let mut out = String::with_capacity(HASH_HEX);
    for b in digest.iter().take(HASH_HEX / 2) {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0xF)]));
    }
    out
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// `P_H`: `P` is `id` with every character outside `[A-Za-z0-9_-]` (lone surrogates included)
/// replaced by `_` and cut to `max - 17` characters (`call` when that leaves nothing), `H` the
/// hash of the id's exact code units (its WTF-8 bytes), salted after a collision.
fn rewrite(api: ProviderApi, id: &JsString, salt: u32) -> String {
    let keep = api.max_tool_call_id_len() - HASH_HEX - 1;
    let mut out: String = id
        .code_points()
        .take(keep)
        .map(|cp| match char::from_u32(cp) {
            Some(c) if c.is_ascii() && is_id_byte(c as u8) => c,
            _ => '_',
        })
        .collect();
    if out.is_empty() {
        out.push_str("call");
    }
    out.push('_');
    if salt == 0 {
        out.push_str(&hash_hex(&[id.as_wtf8()]));
    } else {
        out.push_str(&hash_hex(&[id.as_wtf8(), salt.to_string().as_bytes()]));
    }
    out
}

/// The id this workspace sends for the tool-call id `id` to `api`, on its own: `id` itself
/// when it is valid ([`ProviderApi::is_valid_tool_call_id`]), otherwise `P_H` where `P` is
/// `id` with every character outside `[A-Za-z0-9_-]` replaced by `_`, cut to the API's
/// maximum minus 17 characters (`call` when empty), and `H` the first 16 hex digits of the
/// SHA-256 of the id's exact code units (WTF-8 bytes, NUL-terminated). Two ids that share a
/// long prefix differ in `H`. Deterministic, and idempotent (its result is valid).
///
/// Within one payload [`normalize_tool_call_ids`] adds what this function alone cannot
/// promise: no two distinct ids ever get the same result.
pub fn normalize_tool_call_id(api: ProviderApi, id: &JsString) -> String {
    match id.as_str() {
        Some(s) if api.is_valid_tool_call_id(s) => s.to_owned(),
        _ => rewrite(api, id, 0),
    }
}

/// The id assignment of one payload: valid ids are reserved first (in payload order; a valid
/// id whose pairing key, [`ProviderApi::pairing_key`], an earlier valid id already holds is
/// not), then every other id gets [`normalize_tool_call_id`]'s result, or, when that is
/// already taken by another id or pairing key (a hash collision, or a valid id that happens
/// to look like it), the same form hashed with a salt 1, 2, … until it is free.
#[derive(Debug)]
struct IdMap {
    api: ProviderApi,
    by_original: HashMap<JsString, String>,
    /// Every id handed out or reserved, and their pairing keys.
    taken: HashSet<String>,
}

impl IdMap {
    fn new<'a>(api: ProviderApi, ids: impl IntoIterator<Item = &'a JsString>) -> Self {
        let mut map = IdMap {
            api,
            by_original: HashMap::new(),
            taken: HashSet::new(),
        };
        for id in ids {
            if map.by_original.contains_key(id) {
                continue;
            }
            if let Some(s) = id.as_str().filter(|s| api.is_valid_tool_call_id(s)) {
                // A valid id whose pairing key an earlier one already holds (Responses ids
                // `call_1|fc_a`, `call_1|fc_b`: the API would see `call_id` `call_1` twice)
                // is not reserved: `assign` rewrites it.
                if map.key_free(s) {
                    map.reserve(s);
                    map.by_original.insert(id.clone(), s.to_owned());
                }
            }
        }
        map
    }

    /// True when neither the valid id `s` nor its pairing key is taken.
    fn key_free(&self, s: &str) -> bool {
        !self.taken.contains(s) && !self.taken.contains(self.api.pairing_key(s))
    }

    /// Marks the valid id `s` and its pairing key as taken.
    fn reserve(&mut self, s: &str) {
        self.taken.insert(s.to_owned());
        self.taken.insert(self.api.pairing_key(s).to_owned());
    }

    fn take(&mut self, candidate: String) -> Option<String> {
        if self.taken.contains(&candidate) {
            return None;
        }
        self.taken.insert(candidate.clone());
        Some(candidate)
    }

    /// The new id of `id` (the same on every call).
    fn assign(&mut self, id: &JsString) -> String {
        if let Some(done) = self.by_original.get(id) {
            return done.clone();
        }
        if let Some(valid) = id
            .as_str()
            .filter(|s| self.api.is_valid_tool_call_id(s) && self.key_free(s))
        {
            // Not reserved up front (every id of a payload is): it keeps its text.
            let valid = valid.to_owned();
            self.reserve(&valid);
            self.by_original.insert(id.clone(), valid.clone());
            return valid;
        }
        let mut salt = 0;
        let new = loop {
            if let Some(free) = self.take(rewrite(self.api, id, salt)) {
                break free;
            }
            salt += 1;
        };
        self.by_original.insert(id.clone(), new.clone());
        new
    }

    /// A fresh id for a call that has none: `call_` and 16 hex digits of the SHA-256 of
    /// `seed` (salted after a collision).
    fn generate(&mut self, seed: &[&[u8]]) -> String {
        let mut salt = 0u32;
        loop {
            let salt_text = salt.to_string();
            let mut parts: Vec<&[u8]> = vec![b"tool-call-id"];
            parts.extend_from_slice(seed);
            if salt > 0 {
                parts.push(salt_text.as_bytes());
            }
            if let Some(free) = self.take(format!("call_{}", hash_hex(&parts))) {
                return free;
            }
            salt += 1;
        }
    }
}

/// The ids `ids` (in payload order) get in one payload: valid ids unchanged, every other id
/// [`normalize_tool_call_id`]'s result unless that is taken, then the same form with a salted
/// hash. Injective where the API pairs: distinct ids get distinct results (equal ids equal
/// results), and for [`ProviderApi::OpenAiResponses`] distinct results also have distinct call
/// ids (the part before `|`): of two valid ids sharing a call id (`call_1|fc_a`,
/// `call_1|fc_b`) the first keeps its text and the later one is rewritten
/// (`call_1_fc_b_<hash>`). Every result is valid for `api`, so applying it again changes
/// nothing. A result depends on the other ids of the payload only when salted (a SHA-256
/// prefix collision, or a valid id made to look like another id's rewritten form) or when a
/// valid id shares its call id with an earlier one.
pub fn normalize_tool_call_ids(api: ProviderApi, ids: &[JsString]) -> Vec<String> {
    let mut map = IdMap::new(api, ids);
    ids.iter().map(|id| map.assign(id)).collect()
}

// ------------------------------------------------------------------------------------------
// Inputs, options, outputs

/// One message of the context with the row it comes from.
#[derive(Clone, Debug, PartialEq)]
pub struct SourcedMessage {
    /// The message as the context builds it (before conversion).
    pub message: JsValue,
    /// The id of the entry it comes from.
    pub entry_id: Option<JsString>,
    /// The 1-based line of that entry in the file as it was read (`None` for rows appended
    /// in this process).
    pub line: Option<usize>,
    /// The row field that holds the message (`message` for a `message` entry), `None` when
    /// the message is built from the row's top-level fields (`custom_message`,
    /// `branch_summary`, `compaction`). Paths in warnings start with it.
    pub field: Option<&'static str>,
}

/// What [`build_payload`] does besides normalising.
#[derive(Clone, Debug)]
pub struct PayloadOptions {
    /// The target API.
    pub api: ProviderApi,
    /// The pairing repair: the errored-turn policy (default: skip), the synthetic results'
    /// text and timestamp.
    pub pairing: PairingOptions,
    /// History limits (default: none).
    pub limits: HistoryLimits,
}

impl PayloadOptions {
    /// The defaults for `api`: errored and aborted assistant messages skipped, no history
    /// limits.
    pub fn new(api: ProviderApi) -> Self {
        PayloadOptions {
            api,
            pairing: PairingOptions::default(),
            limits: HistoryLimits::default(),
        }
    }
}

/// Something the payload builder changed that the caller should know about (its `Display`
/// form is one line: `lone surrogate \udc01 in key message.content[2].arguments["pa\udc01th"]
/// at line 3 (entry a1)`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PayloadWarning {
    /// A string held one or more lone surrogates; they were replaced by U+FFFD (for a
    /// tool-call id: the id was normalised instead, see [`ToolCallIdChange`]).
    LoneSurrogate {
        /// The 1-based file line of the row (`None` for rows appended in this process and
        /// for strings that do not come from a row).
        line: Option<usize>,
        /// The row's entry id (lossy), when the string comes from a row.
        entry_id: Option<String>,
        /// The JSON path of the string inside the row (`message.content[0].text`,
        /// `summary`), or inside the payload for strings that come from no row
        /// (`tools[0].parameters…`, `messages[3]…`). Keys that are not identifiers are
        /// written as JSON strings, lone surrogates as `\udxxx` escapes (`["\ud800"]`).
        path: String,
        /// The surrogate is in the object key the path ends with, not in its value.
        key: bool,
        /// The lone surrogate code units, in order.
        units: Vec<u16>,
    },
    /// An object member left out of the payload: its key, once its lone surrogates are
    /// replaced by U+FFFD, equals the key of an earlier member of the same object (keys
    /// `a\ud800` then `a\ud801`, or `a\ud800` then a literal `a\u{FFFD}`). The first
    /// member in the row's order is kept under the replaced key (and reported as a
    /// [`PayloadWarning::LoneSurrogate`] when its own key held one); each later one is dropped
    /// with this warning instead (a JSON object cannot hold both, and renaming a member would
    /// change an argument name).
    DroppedMember {
        /// The 1-based file line of the row (`None` as for
        /// [`PayloadWarning::LoneSurrogate`]).
        line: Option<usize>,
        /// The row's entry id (lossy), when the object comes from a row.
        entry_id: Option<String>,
        /// The JSON path of the member dropped, its key as the row holds it
        /// (`message.content[0].arguments["a\ud801"]`; written as for
        /// [`PayloadWarning::LoneSurrogate`]).
        path: String,
        /// The key the kept member has in the payload (`a\u{FFFD}`).
        kept_key: String,
    },
}

impl fmt::Display for PayloadWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PayloadWarning::LoneSurrogate {
                line,
                entry_id,
                path,
                key,
                units,
            } => {
                let units: Vec<String> = units.iter().map(|u| format!("\\u{u:04x}")).collect();
                write!(f, "lone surrogate {}", units.join(" "))?;
                write!(f, " in {} {path}", if *key { "key" } else { "value" })?;
                if let Some(line) = line {
                    write!(f, " at line {line}")?;
                }
                if let Some(id) = entry_id {
                    write!(f, " (entry {id})")?;
                }
                Ok(())
            }
            PayloadWarning::DroppedMember {
                line,
                entry_id,
                path,
                kept_key,
            } => {
                let kept = to_json_string(&JsValue::from(kept_key.as_str()));
                write!(
                    f,
                    "member {path} dropped: its key is {kept} once lone surrogates are replaced, as an earlier member's"
                )?;
                if let Some(line) = line {
                    write!(f, " at line {line}")?;
                }
                if let Some(id) = entry_id {
                    write!(f, " (entry {id})")?;
                }
                Ok(())
            }
        }
    }
}

/// A tool-call id the payload sends differently from the transcript.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCallIdChange {
    /// The 1-based file line of the assistant message's row.
    pub line: Option<usize>,
    /// Its entry id (lossy).
    pub entry_id: Option<String>,
    /// The index of the call block in the message's `content`.
    pub block: usize,
    /// The id as the transcript holds it (`None`: absent or not a string).
    pub original: Option<JsString>,
    /// The id sent.
    pub new: String,
}

/// The messages for one provider API and what was changed to get them.
#[derive(Clone, Debug, PartialEq)]
pub struct Payload {
    /// The target API.
    pub api: ProviderApi,
    /// The messages to send, in order (valid UTF-8 text, no lone surrogate, tool-call ids
    /// valid for `api` and paired).
    pub messages: Vec<JsValue>,
    /// Lone surrogates found and members dropped for them, in message order.
    pub warnings: Vec<PayloadWarning>,
    /// Tool calls whose id the payload changes, in message order.
    pub tool_call_ids: Vec<ToolCallIdChange>,
    /// What the pairing repair changed (its `messages` are empty: see `messages`).
    pub pairing: PairingRepair,
    /// Messages left out by the history limits.
    pub dropped_by_limits: usize,
}

/// Why [`session_payload`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PayloadError {
    /// The context could not be built.
    #[error(transparent)]
    Context(#[from] ContextError),
    /// A stored row no longer parses (a bug).
    #[error(transparent)]
    Read(#[from] ReadError),
}

// ------------------------------------------------------------------------------------------
// Lone surrogates

#[derive(Clone, Debug)]
enum Seg {
    Key(JsString),
    Index(usize),
}

struct Found {
    path: Vec<Seg>,
    key: bool,
    units: Vec<u16>,
    /// The member at `path` was left out: its key, once its lone surrogates are replaced,
    /// equals this key of an earlier member of the same object.
    dropped_as: Option<String>,
}

fn lone_units(s: &JsString) -> Vec<u16> {
    s.code_points()
        .filter(|cp| (0xD800..0xE000).contains(cp))
        .map(|cp| cp as u16)
        .collect()
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

fn render_path(prefix: Option<&str>, path: &[Seg]) -> String {
    let mut out = prefix.unwrap_or_default().to_owned();
    for seg in path {
        match seg {
            Seg::Index(i) => {
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
            Seg::Key(k) => match k.as_str().filter(|s| is_identifier(s)) {
                Some(s) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(s);
                }
                None => {
                    out.push('[');
                    out.push_str(&to_json_string(&JsValue::String(k.clone())));
                    out.push(']');
                }
            },
        }
    }
    out
}

/// True when `v` holds a lone surrogate in any string or key.
fn has_lone_surrogate(v: &JsValue) -> bool {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            JsValue::String(s) if s.has_lone_surrogate() => return true,
            JsValue::Array(a) => stack.extend(a.iter()),
            JsValue::Object(o) => {
                for (k, child) in o.iter() {
                    if k.has_lone_surrogate() {
                        return true;
                    }
                    stack.push(child);
                }
            }
            _ => {}
        }
    }
    false
}

/// Replaces every lone surrogate of `v` by U+FFFD, except in strings at paths `keep` names
/// (those are only reported), recording each string changed.
fn replace_lone_surrogates(
    v: &mut JsValue,
    path: &mut Vec<Seg>,
    keep: &dyn Fn(&[Seg]) -> bool,
    found: &mut Vec<Found>,
) {
    match v {
        JsValue::String(s) if s.has_lone_surrogate() => {
            found.push(Found {
                path: path.clone(),
                key: false,
                units: lone_units(s),
                dropped_as: None,
            });
            if !keep(path) {
                *s = JsString::new(s.to_str_lossy().into_owned());
            }
        }
        JsValue::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                path.push(Seg::Index(i));
                replace_lone_surrogates(item, path, keep, found);
                path.pop();
            }
        }
        JsValue::Object(o) => {
            // (the key as it is now, the key as the row holds it: paths name the latter)
            let mut keys: Vec<(String, JsString)> = Vec::with_capacity(o.len());
            if o.keys().any(JsString::has_lone_surrogate) {
                // Two keys that become equal (`a\ud800`, `a\ud801`, or `a\ud800` and a
                // literal `a\u{FFFD}`): the first member in the row's order keeps the key, each
                // later one is left out and reported (PayloadWarning::DroppedMember); its
                // value is not walked.
                let mut rebuilt = JsObject::new();
                for (k, child) in o.iter() {
                    let name = k.to_str_lossy().into_owned();
                    let mut at = path.clone();
                    at.push(Seg::Key(k.clone()));
                    if rebuilt.contains_key(&name) {
                        found.push(Found {
                            path: at,
                            key: true,
                            units: lone_units(k),
                            dropped_as: Some(name),
                        });
                        continue;
                    }
                    if k.has_lone_surrogate() {
                        found.push(Found {
                            path: at,
                            key: true,
                            units: lone_units(k),
                            dropped_as: None,
                        });
                    }
                    keys.push((name.clone(), k.clone()));
                    rebuilt.insert(JsString::new(name), child.clone());
                }
                *o = rebuilt;
            } else {
                keys.extend(o.keys().map(|k| (k.to_str_lossy().into_owned(), k.clone())));
            }
            for (name, original) in keys {
                path.push(Seg::Key(original));
                if let Some(child) = o.get_mut(&name) {
                    replace_lone_surrogates(child, path, keep, found);
                }
                path.pop();
            }
        }
        _ => {}
    }
}

fn role_is(m: &JsValue, role: &str) -> bool {
    m.get("role")
        .and_then(JsValue::as_js_string)
        .is_some_and(|r| r.as_wtf8() == role.as_bytes())
}

fn is_call_block(b: &JsValue) -> bool {
    b.get("type")
        .and_then(JsValue::as_js_string)
        .is_some_and(|t| {
            TOOL_CALL_BLOCK_TYPES
                .iter()
                .any(|c| t.as_wtf8() == c.as_bytes())
        })
}

/// The paths of a message that hold tool-call ids: `content[i].id` of call blocks in an
/// assistant message, the id keys of a tool result.
fn is_id_path(message: &JsValue, path: &[Seg]) -> bool {
    match path {
        [Seg::Key(k)] => {
            role_is(message, "toolResult")
                && TOOL_RESULT_ID_KEYS
                    .iter()
                    .any(|id| k.as_wtf8() == id.as_bytes())
        }
        [Seg::Key(c), Seg::Index(i), Seg::Key(id)] => {
            c.as_wtf8() == b"content"
                && id.as_wtf8() == b"id"
                && role_is(message, "assistant")
                && message
                    .get("content")
                    .and_then(JsValue::as_array)
                    .and_then(|blocks| blocks.get(*i))
                    .is_some_and(is_call_block)
        }
        _ => false,
    }
}

fn warn(
    warnings: &mut Vec<PayloadWarning>,
    line: Option<usize>,
    entry_id: Option<String>,
    prefix: Option<&str>,
    found: Found,
) {
    let path = render_path(prefix, &found.path);
    let w = match found.dropped_as {
        Some(kept_key) => PayloadWarning::DroppedMember {
            line,
            entry_id,
            path,
            kept_key,
        },
        None => PayloadWarning::LoneSurrogate {
            line,
            entry_id,
            path,
            key: found.key,
            units: found.units,
        },
    };
    tracing::warn!(target: "agent_session::payload", "{w}");
    warnings.push(w);
}

/// [`replace_lone_surrogates`] over one value that comes from no row (the path starts with
/// `prefix`), reported without a line.
fn scrub(v: &mut JsValue, prefix: &str, warnings: &mut Vec<PayloadWarning>) {
    if !has_lone_surrogate(v) {
        return;
    }
    let mut found = Vec::new();
    replace_lone_surrogates(v, &mut Vec::new(), &|_| false, &mut found);
    for f in found {
        warn(warnings, None, None, Some(prefix), f);
    }
}

// ------------------------------------------------------------------------------------------
// Tool-call ids in messages

/// The id a tool result names its call by, as the pairing repair reads it
/// (`extractToolResultId`): the first id key holding a non-blank string, trimmed.
fn result_id(m: &JsValue) -> Option<JsString> {
    TOOL_RESULT_ID_KEYS.iter().find_map(|k| {
        let s = m.get(k)?.as_js_string()?;
        let t = js::trim_js_string(s);
        (!t.is_empty()).then_some(t)
    })
}

/// The raw id a tool result names its call by: the first id key holding a non-blank string
/// (the key [`result_id`] reads), not trimmed.
fn raw_result_id(m: &JsValue) -> Option<&JsString> {
    TOOL_RESULT_ID_KEYS.iter().find_map(|k| {
        let s = m.get(k)?.as_js_string()?;
        (!js::trim_js_string(s).is_empty()).then_some(s)
    })
}

/// The id a result is mapped from, so that it keeps pairing with its call: its raw id
/// ([`raw_result_id`]) when a call of the payload has exactly that id (a call id with
/// surrounding whitespace, and its result naming it with the same bytes: OpenClaw 2026.6.11's
/// id sanitiser maps both from the raw id, `sanitizeToolCallIdsForCloudCodeAssist`), else the
/// trimmed id the pairing repair matches calls by (`extractToolResultId`).
fn result_key(m: &JsValue, calls: &HashSet<JsString>) -> Option<JsString> {
    match raw_result_id(m) {
        Some(raw) if calls.contains(raw) => Some(raw.clone()),
        _ => result_id(m),
    }
}

/// A call block's id when it is a non-empty string.
fn call_id(block: &JsValue) -> Option<&JsString> {
    block
        .get("id")
        .and_then(JsValue::as_js_string)
        .filter(|s| !s.is_empty())
}

/// Normalises every tool-call id of `messages` (converted, with their sources) for `api`.
/// Calls are mapped from their exact id, results from [`result_key`]: a result that names its
/// call with the same bytes (surrounding whitespace included) gets the call's new id.
fn normalize_ids(
    messages: &mut [(JsValue, &SourcedMessage)],
    api: ProviderApi,
) -> Vec<ToolCallIdChange> {
    let calls: HashSet<JsString> = messages
        .iter()
        .filter(|(m, _)| role_is(m, "assistant"))
        .filter_map(|(m, _)| m.get("content").and_then(JsValue::as_array))
        .flat_map(|blocks| {
            blocks
                .iter()
                .filter(|b| is_call_block(b))
                .filter_map(call_id)
        })
        .cloned()
        .collect();
    // Call ids are reserved before result ids (a call's id never depends on a result).
    let mut originals: Vec<JsString> = Vec::new();
    for (m, _) in messages.iter().filter(|(m, _)| role_is(m, "assistant")) {
        if let Some(blocks) = m.get("content").and_then(JsValue::as_array) {
            originals.extend(
                blocks
                    .iter()
                    .filter(|b| is_call_block(b))
                    .filter_map(call_id)
                    .cloned(),
            );
        }
    }
    for (m, _) in messages.iter().filter(|(m, _)| role_is(m, "toolResult")) {
        originals.extend(result_key(m, &calls));
    }
    let mut map = IdMap::new(api, &originals);
    let mut changes = Vec::new();
    // Calls first, in order, so that a call's id never depends on a result.
    for (position, (m, source)) in messages.iter_mut().enumerate() {
        if !role_is(m, "assistant") {
            continue;
        }
        let Some(JsValue::Array(blocks)) = m.as_object_mut().and_then(|o| o.get_mut("content"))
        else {
            continue;
        };
        for (index, block) in blocks.iter_mut().enumerate() {
            if !is_call_block(block) {
                continue;
            }
            let original = block.get("id").and_then(JsValue::as_js_string).cloned();
            let new = match original.as_ref().filter(|s| !s.is_empty()) {
                Some(id) => map.assign(id),
                None => {
                    // No id: one derived from the entry and the block's position.
                    let index_text = index.to_string();
                    let position_text = position.to_string();
                    let entry = source
                        .entry_id
                        .as_ref()
                        .map_or(position_text.as_bytes(), JsString::as_wtf8);
                    map.generate(&[entry, index_text.as_bytes()])
                }
            };
            if original.as_ref().and_then(JsString::as_str) != Some(new.as_str()) {
                if let Some(o) = block.as_object_mut() {
                    o.insert("id", JsValue::from(new.as_str()));
                }
                changes.push(ToolCallIdChange {
                    line: source.line,
                    entry_id: source
                        .entry_id
                        .as_ref()
                        .map(|e| e.to_str_lossy().into_owned()),
                    block: index,
                    original,
                    new,
                });
            }
        }
    }
    for (m, _) in messages.iter_mut() {
        if !role_is(m, "toolResult") {
            continue;
        }
        let Some(id) = result_key(m, &calls) else {
            continue;
        };
        let new = JsValue::from(map.assign(&id));
        if let Some(o) = m.as_object_mut() {
            for key in TOOL_RESULT_ID_KEYS {
                if key != "toolCallId" && o.get(key).is_some_and(|v| v.as_js_string().is_some()) {
                    o.insert(key, new.clone());
                }
            }
            o.insert("toolCallId", new);
        }
    }
    changes
}

// ------------------------------------------------------------------------------------------
// The builder

/// Builds the payload for `options.api` from the context's messages (see the module
/// documentation for the steps). Warnings cover every message given, including those the
/// errored-turn policy or the history limits then leave out.
pub fn build_payload(messages: &[SourcedMessage], options: &PayloadOptions) -> Payload {
    let mut warnings = Vec::new();
    let mut converted: Vec<(JsValue, &SourcedMessage)> = Vec::with_capacity(messages.len());
    for source in messages {
        let mut message = source.message.clone();
        if has_lone_surrogate(&message) {
            let mut found = Vec::new();
            replace_lone_surrogates(
                &mut message,
                &mut Vec::new(),
                &|path| is_id_path(&source.message, path),
                &mut found,
            );
            let entry = source
                .entry_id
                .as_ref()
                .map(|e| e.to_str_lossy().into_owned());
            for f in found {
                warn(&mut warnings, source.line, entry.clone(), source.field, f);
            }
        }
        if let Some(m) = convert_message(&message) {
            converted.push((m, source));
        }
    }
    let tool_call_ids = normalize_ids(&mut converted, options.api);
    let llm: Vec<JsValue> = converted.into_iter().map(|(m, _)| m).collect();
    let mut pairing = repair_tool_use_result_pairing(&llm, &options.pairing);
    let mut paired = std::mem::take(&mut pairing.messages);
    let start = history_start(&paired, &options.limits);
    paired.drain(..start);
    for (i, m) in paired.iter_mut().enumerate() {
        if has_lone_surrogate(m) {
            scrub(m, &format!("messages[{}]", start + i), &mut warnings);
        }
    }
    Payload {
        api: options.api,
        messages: paired,
        warnings,
        tool_call_ids,
        pairing,
        dropped_by_limits: start,
    }
}

/// The context's messages (`build_session_context` over the current branch) with their rows.
///
/// # Errors
/// [`PayloadError`] when the context cannot be built or a row no longer parses.
pub fn sourced_messages(sm: &SessionManager) -> Result<Vec<SourcedMessage>, PayloadError> {
    let ctx = sm.build_session_context()?;
    ctx.messages
        .iter()
        .map(|m| {
            Ok(SourcedMessage {
                message: m.to_value()?,
                entry_id: m.entry.id_js().cloned(),
                line: m.entry.location().line,
                field: (m.kind == ContextKind::Message).then_some("message"),
            })
        })
        .collect()
}

/// [`build_payload`] over the session's current context ([`sourced_messages`]).
///
/// # Errors
/// [`PayloadError`] when the context cannot be built or a row no longer parses.
pub fn session_payload(
    sm: &SessionManager,
    options: &PayloadOptions,
) -> Result<Payload, PayloadError> {
    Ok(build_payload(&sourced_messages(sm)?, options))
}

/// Replaces lone surrogates in a value that comes from no row (a tool's parameter schema),
/// reporting each under `prefix` without a line.
pub(crate) fn scrub_value(v: &mut JsValue, prefix: &str, warnings: &mut Vec<PayloadWarning>) {
    scrub(v, prefix, warnings);
}
