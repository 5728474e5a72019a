//! The op-script runner (`shared/conformance/OPS.md`): executes a script against this crate's
//! [`SessionManager`] in a directory D and returns the same result array the node runner
//! (`xtask/conformance/runner.mjs`) produces for the reference, so the two can be compared
//! byte for byte after [`session_format::normalize::normalize_output`].
//!
//! Conventions copied from the node runner: D is the session directory of every factory and the
//! base of relative file names; the reference's fallback to the process cwd is given as an
//! explicit fallback cwd of D (the runner never `chdir`s, so scripts can run in parallel
//! threads); `$name` replaces a whole string at any depth of an op's arguments when `name` is
//! bound; a failing op records `{op: i, error: <message>}` (`"error"` with `expectError`), an
//! `expectError` op that succeeds records `{op: i, unexpectedSuccess: true}`; a snapshot during
//! which a getter fails records `{op: i, error}` instead. Where this crate's typed errors word
//! things differently from the reference (FINDINGS e, j), the runner maps them to the
//! reference's texts.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use session_format::json::{JsObject, JsValue, parse_value, to_json_string};

use crate::error::{ContextError, NameError};
use crate::io;
use crate::manager::{NewSessionOptions, OpenParams, SessionManager};

/// Why a script could not be run at all (op failures are results, not errors).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// The script is not JSON.
    #[error("op-script is not JSON: {0}")]
    Json(#[from] session_format::json::JsonError),
    /// The script is not an object with an `ops` array.
    #[error("op-script is not an object with an `ops` array")]
    Shape,
    /// The directory cannot be canonicalised.
    #[error("cannot use directory {path}: {source}")]
    Dir {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The directory path is not UTF-8.
    #[error("directory {0} is not valid UTF-8")]
    NonUtf8Dir(PathBuf),
}

/// The raw result array of one script, and the wall clock (ms) when it started.
#[derive(Debug, Clone)]
pub struct ReplayOutput {
    /// One record per snapshot, failing op, or unexpected success.
    pub results: JsValue,
    /// Milliseconds since the epoch when the script started (for `<now-ms>` normalisation).
    pub start_ms: f64,
    /// The canonical directory the script ran in.
    pub dir: PathBuf,
}

/// Runs a script in `dir` (which the caller creates; it is canonicalised) and returns the raw
/// result array.
///
/// # Errors
/// [`ReplayError`] when the script is not an op-script or the directory is unusable.
pub fn run_script(script: &[u8], dir: &Path) -> Result<ReplayOutput, ReplayError> {
    let dir = std::fs::canonicalize(dir).map_err(|source| ReplayError::Dir {
        path: dir.to_path_buf(),
        source,
    })?;
    let value = parse_value(script)?;
    let obj = value.as_object().ok_or(ReplayError::Shape)?;
    let ops = match obj.get("ops") {
        Some(JsValue::Array(a)) => a.clone(),
        None => Vec::new(),
        Some(_) => return Err(ReplayError::Shape),
    };
    let cwd = obj
        .get("cwd")
        .and_then(|c| c.as_str_lossy().map(|s| s.into_owned()))
        .unwrap_or_else(|| "/home/dev/project".to_owned());
    let start_ms = session_format::ids::now_ms() as f64;
    let mut runner = Runner {
        dir: dir.clone(),
        cwd,
        sm: None,
        bindings: HashMap::new(),
    };
    let mut results = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let o = runner.substitute(op);
        let expect_error = o.get("expectError").is_some_and(JsValue::is_truthy);
        let op_name = o
            .get("op")
            .and_then(|v| v.as_str_lossy().map(|s| s.into_owned()));
        if op_name.as_deref() == Some("snapshot") {
            match runner.snapshot(o.get("label")) {
                Ok(s) => results.push(s),
                Err(msg) => results.push(error_record(i, expect_error, &msg)),
            }
            continue;
        }
        match runner.run_op(&o) {
            Ok(ret) => {
                if expect_error {
                    let mut r = JsObject::new();
                    r.insert("op", JsValue::Number(i as f64));
                    r.insert("unexpectedSuccess", JsValue::Bool(true));
                    results.push(JsValue::Object(r));
                }
                if let (Some(JsValue::String(name)), Some(ret)) = (o.get("as"), ret) {
                    runner
                        .bindings
                        .insert(name.to_str_lossy().into_owned(), ret);
                }
            }
            Err(msg) => results.push(error_record(i, expect_error, &msg)),
        }
    }
    Ok(ReplayOutput {
        results: JsValue::Array(results),
        start_ms,
        dir,
    })
}

/// Runs a script in `dir` and returns its normalised text (OPS.md steps 1–6), comparable byte
/// for byte with `expected/openclaw-2026.6.11/<script>.json`.
///
/// # Errors
/// As [`run_script`].
pub fn run_script_normalized(script: &[u8], dir: &Path) -> Result<String, ReplayError> {
    let out = run_script(script, dir)?;
    let dir_text = out
        .dir
        .to_str()
        .ok_or_else(|| ReplayError::NonUtf8Dir(out.dir.clone()))?;
    Ok(session_format::normalize::normalize_output(
        &out.results,
        Some(dir_text),
        out.start_ms,
    )?)
}

fn error_record(i: usize, expect_error: bool, msg: &str) -> JsValue {
    let mut r = JsObject::new();
    r.insert("op", JsValue::Number(i as f64));
    r.insert(
        "error",
        JsValue::from(if expect_error { "error" } else { msg }),
    );
    JsValue::Object(r)
}

struct Runner {
    dir: PathBuf,
    cwd: String,
    sm: Option<SessionManager>,
    bindings: HashMap<String, String>,
}

fn str_arg(o: &JsValue, key: &str) -> Option<String> {
    o.get(key)
        .and_then(|v| v.as_str_lossy().map(|s| s.into_owned()))
}

/// `String(x)` for the few places the node runner passes a non-string where a string is
/// expected (e.g. `Entry ${id} not found`).
fn js_string(v: Option<&JsValue>) -> String {
    match v {
        None => "undefined".to_owned(),
        Some(JsValue::String(s)) => s.to_str_lossy().into_owned(),
        Some(JsValue::Null) => "null".to_owned(),
        Some(other) => to_json_string(other),
    }
}

fn context_message(e: &ContextError) -> String {
    match e {
        ContextError::InvalidMessage { missing, .. } => format!(
            "Cannot read properties of {} (reading 'role')",
            if *missing { "undefined" } else { "null" }
        ),
        other => other.to_string(),
    }
}

fn name_message(e: &NameError) -> String {
    match e {
        NameError::NonStringName { .. } => "entry.name?.trim is not a function".to_owned(),
        other => other.to_string(),
    }
}

impl Runner {
    fn substitute(&self, v: &JsValue) -> JsValue {
        match v {
            JsValue::String(s) => {
                let text = s.to_str_lossy();
                if let Some(name) = text.strip_prefix('$')
                    && let Some(bound) = self.bindings.get(name)
                {
                    return JsValue::from(bound.as_str());
                }
                v.clone()
            }
            JsValue::Array(items) => {
                JsValue::Array(items.iter().map(|x| self.substitute(x)).collect())
            }
            JsValue::Object(obj) => {
                let mut out = JsObject::new();
                for (k, x) in obj.iter() {
                    out.insert(k.clone(), self.substitute(x));
                }
                JsValue::Object(out)
            }
            other => other.clone(),
        }
    }

    fn in_dir(&self, file: &str) -> PathBuf {
        self.dir.join(file)
    }

    fn need_sm(&mut self) -> Result<&mut SessionManager, String> {
        self.sm.as_mut().ok_or_else(|| {
            "no session manager (the script has not created or opened one)".to_owned()
        })
    }

    fn current_file(&mut self) -> Result<PathBuf, String> {
        let sm = self.need_sm()?;
        sm.get_session_file()
            .map(Path::to_path_buf)
            .ok_or_else(|| "the current session has no file".to_owned())
    }

    fn open(&self, path: &Path) -> Result<SessionManager, String> {
        SessionManager::open_with(
            path,
            &OpenParams {
                session_dir: Some(self.dir.clone()),
                cwd_override: None,
                fallback_cwd: Some(self.dir.to_string_lossy().into_owned()),
            },
        )
        .map_err(|e| e.to_string())
    }

    /// Runs one op; `Ok(Some(id))` when it returned a string.
    fn run_op(&mut self, o: &JsValue) -> Result<Option<String>, String> {
        let op = o.get("op");
        let name = op.and_then(|v| v.as_str_lossy().map(|s| s.into_owned()));
        let opt_json = |k: &str| o.get(k).cloned();
        let opt_bool = |k: &str| match o.get(k) {
            Some(JsValue::Bool(b)) => Some(*b),
            _ => None,
        };
        match name.as_deref() {
            Some("create") => {
                self.sm = Some(
                    SessionManager::create(&self.cwd, Some(&self.dir))
                        .map_err(|e| e.to_string())?,
                );
                Ok(None)
            }
            Some("inMemory") => {
                self.sm = Some(SessionManager::in_memory(&self.cwd));
                Ok(None)
            }
            Some("open") => {
                let path = self.in_dir(&js_string(o.get("file")));
                self.sm = Some(self.open(&path)?);
                Ok(None)
            }
            Some("reopen") => {
                let path = self.current_file()?;
                self.sm = Some(self.open(&path)?);
                Ok(None)
            }
            Some("continueRecent") => {
                self.sm = Some(
                    SessionManager::continue_recent(&self.cwd, Some(&self.dir))
                        .map_err(|e| e.to_string())?,
                );
                Ok(None)
            }
            Some("forkFrom") => {
                let source = match o.get("file") {
                    Some(f) => self.in_dir(&js_string(Some(f))),
                    None => self.current_file()?,
                };
                self.sm = Some(
                    SessionManager::fork_from(&source, &self.cwd, Some(&self.dir))
                        .map_err(|e| e.to_string())?,
                );
                Ok(None)
            }
            Some("newSession") => {
                let parent_session = str_arg(o, "parentSession");
                let sm = self.need_sm()?;
                let path = sm.new_session(NewSessionOptions {
                    id: None,
                    parent_session,
                });
                Ok(path.map(|p| p.to_string_lossy().into_owned()))
            }
            Some("writeFile") => {
                let path = self.in_dir(&js_string(o.get("file")));
                let content = js_string(o.get("content"));
                io::write_raw(&path, content.as_bytes()).map_err(|e| e.to_string())?;
                Ok(None)
            }
            Some("appendRaw") => {
                let path = match o.get("file") {
                    Some(f) => self.in_dir(&js_string(Some(f))),
                    None => self.current_file()?,
                };
                let content = js_string(o.get("content"));
                io::append_raw(&path, content.as_bytes()).map_err(|e| e.to_string())?;
                Ok(None)
            }
            Some("appendMessage") => {
                let message = opt_json("message").unwrap_or(JsValue::Null);
                let sm = self.need_sm()?;
                sm.append_message(message)
                    .map(Some)
                    .map_err(|e| e.to_string())
            }
            Some("appendThinkingLevelChange") => {
                let level = js_string(o.get("thinkingLevel"));
                let sm = self.need_sm()?;
                sm.append_thinking_level_change(&level)
                    .map(Some)
                    .map_err(|e| e.to_string())
            }
            Some("appendModelChange") => {
                let provider = js_string(o.get("provider"));
                let model = js_string(o.get("modelId"));
                let sm = self.need_sm()?;
                sm.append_model_change(&provider, &model)
                    .map(Some)
                    .map_err(|e| e.to_string())
            }
            Some("appendCompaction") => {
                let summary = js_string(o.get("summary"));
                let first_kept = js_string(o.get("firstKeptEntryId"));
                let tokens = o
                    .get("tokensBefore")
                    .and_then(JsValue::as_f64)
                    .unwrap_or(f64::NAN);
                let details = opt_json("details");
                let from_hook = opt_bool("fromHook");
                let sm = self.need_sm()?;
                sm.append_compaction(&summary, &first_kept, tokens, details, from_hook)
                    .map(Some)
                    .map_err(|e| e.to_string())
            }
            Some("appendCustomEntry") => {
                let custom_type = js_string(o.get("customType"));
                let data = opt_json("data");
                let sm = self.need_sm()?;
                sm.append_custom_entry(&custom_type, data)
                    .map(Some)
                    .map_err(|e| e.to_string())
            }
            Some("appendCustomMessageEntry") => {
                let custom_type = js_string(o.get("customType"));
                let content = opt_json("content").unwrap_or(JsValue::Null);
                let display = opt_bool("display").unwrap_or(false);
                let details = opt_json("details");
                let sm = self.need_sm()?;
                sm.append_custom_message_entry(&custom_type, content, display, details)
                    .map(Some)
                    .map_err(|e| e.to_string())
            }
            Some("appendSessionInfo") => {
                let name = match o.get("name") {
                    Some(JsValue::String(s)) => s.clone(),
                    other => return Err(format!("{}.trim is not a function", js_string(other))),
                };
                let sm = self.need_sm()?;
                sm.append_session_info(name)
                    .map(Some)
                    .map_err(|e| e.to_string())
            }
            Some("appendLabelChange") => {
                let target = js_string(o.get("targetId"));
                let label = opt_json("label");
                let sm = self.need_sm()?;
                sm.append_label_change_value(&target, label)
                    .map(Some)
                    .map_err(|e| e.to_string())
            }
            Some("branch") => {
                let id = js_string(o.get("id"));
                let sm = self.need_sm()?;
                sm.branch(&id).map(|()| None).map_err(|e| e.to_string())
            }
            Some("resetLeaf") => {
                self.need_sm()?.reset_leaf();
                Ok(None)
            }
            Some("branchWithSummary") => {
                let id = match o.get("id") {
                    None | Some(JsValue::Null) => None,
                    Some(v) => Some(js_string(Some(v))),
                };
                let summary = js_string(o.get("summary"));
                let details = opt_json("details");
                let from_hook = opt_bool("fromHook");
                let sm = self.need_sm()?;
                sm.branch_with_summary(id.as_deref(), &summary, details, from_hook)
                    .map(Some)
                    .map_err(|e| e.to_string())
            }
            Some("createBranchedSession") => {
                let leaf = js_string(o.get("leafId"));
                let sm = self.need_sm()?;
                sm.create_branched_session(&leaf)
                    .map(|p| p.map(|p| p.to_string_lossy().into_owned()))
                    .map_err(|e| e.to_string())
            }
            _ => Err(format!(
                "unknown op {}",
                op.map_or_else(|| "undefined".to_owned(), to_json_string)
            )),
        }
    }

    /// The snapshot record, or the message of the first getter that fails.
    fn snapshot(&self, label: Option<&JsValue>) -> Result<JsValue, String> {
        let mut s = JsObject::new();
        s.insert("label", label.cloned().unwrap_or(JsValue::Null));
        let Some(sm) = &self.sm else {
            s.insert("file", JsValue::Null);
            s.insert("leafId", JsValue::Null);
            s.insert("header", JsValue::Null);
            s.insert("entries", JsValue::Array(Vec::new()));
            s.insert("tree", JsValue::Array(Vec::new()));
            s.insert("context", JsValue::Null);
            s.insert("sessionName", JsValue::Null);
            s.insert("branch", JsValue::Array(Vec::new()));
            return Ok(wrap(s));
        };
        let file = match sm.get_session_file() {
            Some(p) if p.exists() => match io::read_file(p) {
                Ok(b) => JsValue::from(String::from_utf8_lossy(&b).into_owned()),
                Err(e) => return Err(e.to_string()),
            },
            _ => JsValue::Null,
        };
        s.insert("file", file);
        s.insert("leafId", JsValue::from(sm.get_leaf_id()));
        s.insert(
            "header",
            sm.get_header()
                .map_err(|e| e.to_string())?
                .unwrap_or(JsValue::Null),
        );
        let entries = sm
            .get_entries()
            .map(|e| e.value())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        s.insert("entries", JsValue::Array(entries));
        s.insert("tree", tree_value(sm));
        let context = sm
            .build_session_context()
            .map_err(|e| context_message(&e))?
            .to_value()
            .map_err(|e| e.to_string())?;
        s.insert("context", context);
        let name = sm.get_session_name().map_err(|e| name_message(&e))?;
        s.insert("sessionName", JsValue::from(name));
        let branch = sm
            .get_branch(None)
            .iter()
            .map(|e| JsValue::from(e.id()))
            .collect();
        s.insert("branch", JsValue::Array(branch));
        Ok(wrap(s))
    }
}

fn wrap(s: JsObject) -> JsValue {
    let mut r = JsObject::new();
    r.insert("snapshot", JsValue::Object(s));
    JsValue::Object(r)
}

/// `mapTree(getTree())`: `{id, label (or null), children}` recursively, built bottom-up
/// without recursion.
fn tree_value(sm: &SessionManager) -> JsValue {
    let tree = sm.get_tree();
    let n = tree.nodes.len();
    // Post-order over the arena so each node's children are built before it.
    let mut built: Vec<Option<JsValue>> = vec![None; n];
    let mut stack: Vec<(usize, bool)> = tree.roots.iter().rev().map(|&r| (r, false)).collect();
    while let Some((k, expanded)) = stack.pop() {
        if expanded {
            let node = &tree.nodes[k];
            let children = node
                .children
                .iter()
                .map(|&c| built[c].take().unwrap_or(JsValue::Null))
                .collect();
            let mut o = JsObject::new();
            o.insert("id", JsValue::from(node.entry.id()));
            o.insert("label", node.label.clone().unwrap_or(JsValue::Null));
            o.insert("children", JsValue::Array(children));
            built[k] = Some(JsValue::Object(o));
        } else {
            stack.push((k, true));
            for &c in tree.nodes[k].children.iter().rev() {
                stack.push((c, false));
            }
        }
    }
    JsValue::Array(
        tree.roots
            .iter()
            .map(|&r| built[r].take().unwrap_or(JsValue::Null))
            .collect(),
    )
}
