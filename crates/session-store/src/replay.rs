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
//! reference's texts. `file` arguments are resolved like the node runner's
//! `path.resolve(D, file)` (lexically: `./`, `..`, repeated and trailing separators).
//!
//! Limit: the reference is called from JavaScript, which coerces whatever it is given (a
//! missing `tokensBefore` becomes `undefined` → `null` in the file, a numeric `modelId` is
//! written as a number, a `null` `customType` as `null`). This crate's API is typed and cannot
//! express that, so the runner does not invent values: an op whose argument is missing or of
//! the wrong type records `{op: i, error: "op 3 appendCompaction: tokensBefore must be a
//! number"}` (or `… message is required`) and changes nothing. Scripts that exercise JavaScript
//! coercion therefore differ from the reference by design. Ids are passed exactly (lone
//! surrogates included) as [`JsString`]s ([`crate::EntryId`]).
//!
//! [`run_script`] and [`run_script_normalized`] run a script on any [`Storage`]: every
//! factory is the [`SessionManager::on`] form on that storage, `writeFile` and `appendRaw` plant their bytes in
//! it, and the `file` of each snapshot is read back through it, so the normalised output of a
//! storage that keeps the file store's semantics equals the file store's byte for byte.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use session_format::json::{JsObject, JsString, JsValue, parse_value, to_json_string};

use crate::deep::{clone_value, clone_value_with};
use crate::error::{AppendError, ContextError, NameError};
use crate::id::EntryId;
use crate::manager::{NewSessionOptions, OpenParams, SessionManager};
use crate::storage::Storage;

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
    /// The directory cannot be canonicalised (file store) or created (other storages).
    #[error("cannot use directory {path}")]
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

/// Runs a script on `storage` with `dir` as its session directory D and returns the raw result
/// array. On the file store ([`FileStorage::shared`](crate::FileStorage::shared), or any storage whose
/// [`Storage::local_files`] is true) `dir` must exist (the caller creates it) and is
/// canonicalised; on any other storage `dir` is made absolute lexically and created there
/// ([`Storage::ensure_dir`]), and nothing is written to the file system.
///
/// # Errors
/// [`ReplayError`] when the script is not an op-script or the directory is unusable.
pub fn run_script(
    storage: Arc<dyn Storage>,
    script: &[u8],
    dir: &Path,
) -> Result<ReplayOutput, ReplayError> {
    let dir_error = |source| ReplayError::Dir {
        path: dir.to_path_buf(),
        source,
    };
    let dir = if storage.local_files() {
        std::fs::canonicalize(dir).map_err(dir_error)?
    } else {
        let abs = crate::paths::resolve(dir);
        storage.ensure_dir(&abs).map_err(dir_error)?;
        abs
    };
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
        storage,
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
        match runner.run_op(i, &o) {
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

/// Runs a script on `storage` in `dir` ([`run_script`]) and returns its normalised text
/// (OPS.md steps 1–6; the `file` of each snapshot is the session's bytes as `storage` holds
/// them), comparable byte for byte with `expected/openclaw-2026.6.11/<script>.json`.
///
/// # Errors
/// As [`run_script`].
pub fn run_script_normalized(
    storage: Arc<dyn Storage>,
    script: &[u8],
    dir: &Path,
) -> Result<String, ReplayError> {
    let out = run_script(storage, script, dir)?;
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
    storage: Arc<dyn Storage>,
    dir: PathBuf,
    cwd: String,
    sm: Option<SessionManager>,
    bindings: HashMap<String, String>,
}

/// An op's arguments, checked against the types the typed API needs. JavaScript would coerce
/// a wrong-typed or missing argument (`undefined`, `String(5)`, …); this runner cannot express
/// that through a typed API, so it refuses the op with an error record naming the argument
/// (`op 3 appendCompaction: tokensBefore must be a number`) instead of inventing a value.
struct Args<'a> {
    o: &'a JsValue,
    i: usize,
    op: &'a str,
}

impl Args<'_> {
    fn wrong(&self, key: &str, what: &str) -> String {
        format!("op {} {}: {key} must be {what}", self.i, self.op)
    }

    /// A required string (exact: lone surrogates kept).
    fn js_string(&self, key: &str) -> Result<JsString, String> {
        match self.o.get(key) {
            Some(JsValue::String(s)) => Ok(s.clone()),
            _ => Err(self.wrong(key, "a string")),
        }
    }

    /// A required string as text (lossy for lone surrogates).
    fn string(&self, key: &str) -> Result<String, String> {
        self.js_string(key).map(|s| s.to_str_lossy().into_owned())
    }

    /// An optional string (absent or `null` = none).
    fn opt_string(&self, key: &str) -> Result<Option<String>, String> {
        match self.o.get(key) {
            None | Some(JsValue::Null) => Ok(None),
            Some(JsValue::String(s)) => Ok(Some(s.to_str_lossy().into_owned())),
            Some(_) => Err(self.wrong(key, "a string")),
        }
    }

    fn number(&self, key: &str) -> Result<f64, String> {
        match self.o.get(key) {
            Some(JsValue::Number(n)) => Ok(*n),
            _ => Err(self.wrong(key, "a number")),
        }
    }

    fn bool(&self, key: &str) -> Result<bool, String> {
        match self.o.get(key) {
            Some(JsValue::Bool(b)) => Ok(*b),
            _ => Err(self.wrong(key, "a boolean")),
        }
    }

    /// An optional boolean (absent = none).
    fn opt_bool(&self, key: &str) -> Result<Option<bool>, String> {
        match self.o.get(key) {
            None => Ok(None),
            Some(JsValue::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(self.wrong(key, "a boolean")),
        }
    }

    /// A required JSON value (any type, `null` included).
    fn value(&self, key: &str) -> Result<JsValue, String> {
        self.o
            .get(key)
            .cloned()
            .ok_or_else(|| format!("op {} {}: {key} is required", self.i, self.op))
    }

    /// An optional JSON value (absent = none).
    fn opt_value(&self, key: &str) -> Option<JsValue> {
        self.o.get(key).cloned()
    }
}

/// `appendMessage` errors in the reference's words where they differ.
fn append_message_error(e: &AppendError) -> String {
    match e {
        AppendError::NullMessage => "Cannot read properties of null (reading 'role')".to_owned(),
        other => other.to_string(),
    }
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
    /// `$name` → the bound id, for every string value at any depth (iteratively).
    fn substitute(&self, v: &JsValue) -> JsValue {
        clone_value_with(v, &mut |s| {
            let text = s.to_str_lossy();
            let name = text.strip_prefix('$')?;
            self.bindings.get(name).map(|b| JsValue::from(b.as_str()))
        })
    }

    /// `path.resolve(D, file)`, as the node runner does (lexical: `./`, `..`, repeated and
    /// trailing separators are normalised); a `file` that leads out of D (`../x`, `/etc/x`) is
    /// an op error, as op-script file names are relative to D (OPS.md, Environment).
    fn in_dir(&self, file: &str) -> Result<PathBuf, String> {
        let path = crate::paths::resolve_in(&self.dir, Path::new(file));
        if path.starts_with(&self.dir) {
            Ok(path)
        } else {
            Err(format!(
                "file {file:?} leads out of the script directory (op-script file names are \
                 relative to it)"
            ))
        }
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
        SessionManager::on(Arc::clone(&self.storage))
            .open_with(
                path,
                &OpenParams {
                    session_dir: Some(self.dir.clone()),
                    cwd_override: None,
                    fallback_cwd: Some(self.dir.to_string_lossy().into_owned()),
                },
            )
            .map_err(|e| e.to_string())
    }

    /// Runs op `i`; `Ok(Some(id))` when it returned a string.
    fn run_op(&mut self, i: usize, o: &JsValue) -> Result<Option<String>, String> {
        let op = o.get("op");
        let name = op.and_then(|v| v.as_str_lossy().map(|s| s.into_owned()));
        let args = Args {
            o,
            i,
            op: name.as_deref().unwrap_or_default(),
        };
        match name.as_deref() {
            Some("create") => {
                self.sm = Some(
                    SessionManager::on(Arc::clone(&self.storage))
                        .create(&self.cwd, Some(&self.dir))
                        .map_err(|e| e.to_string())?,
                );
                Ok(None)
            }
            Some("inMemory") => {
                self.sm = Some(SessionManager::in_memory(&self.cwd));
                Ok(None)
            }
            Some("open") => {
                let path = self.in_dir(&args.string("file")?)?;
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
                    SessionManager::on(Arc::clone(&self.storage))
                        .continue_recent(&self.cwd, Some(&self.dir))
                        .map_err(|e| e.to_string())?,
                );
                Ok(None)
            }
            Some("forkFrom") => {
                let source = match args.opt_string("file")? {
                    Some(f) => self.in_dir(&f)?,
                    None => self.current_file()?,
                };
                self.sm = Some(
                    SessionManager::on(Arc::clone(&self.storage))
                        .fork_from(&source, &self.cwd, Some(&self.dir))
                        .map_err(|e| e.to_string())?,
                );
                Ok(None)
            }
            Some("newSession") => {
                let parent_session = args.opt_string("parentSession")?;
                let sm = self.need_sm()?;
                let path = sm
                    .new_session(NewSessionOptions {
                        id: None,
                        parent_session,
                    })
                    .map_err(|e| e.to_string())?;
                Ok(path.map(|p| p.to_string_lossy().into_owned()))
            }
            Some("writeFile") => {
                let path = self.in_dir(&args.string("file")?)?;
                let content = args.string("content")?;
                self.storage
                    .replace(&path, content.as_bytes())
                    .map_err(|e| e.to_string())?;
                Ok(None)
            }
            Some("appendRaw") => {
                let path = match args.opt_string("file")? {
                    Some(f) => self.in_dir(&f)?,
                    None => self.current_file()?,
                };
                let content = args.string("content")?;
                self.storage
                    .append_raw(&path, content.as_bytes())
                    .map_err(|e| e.to_string())?;
                Ok(None)
            }
            Some("appendMessage") => {
                let message = args.value("message")?;
                let sm = self.need_sm()?;
                sm.append_message(message)
                    .map(Some)
                    .map_err(|e| append_message_error(&e))
            }
            Some("appendThinkingLevelChange") => {
                let level = args.string("thinkingLevel")?;
                let sm = self.need_sm()?;
                sm.append_thinking_level_change(&level)
                    .map(Some)
                    .map_err(|e| e.to_string())
            }
            Some("appendModelChange") => {
                let provider = args.string("provider")?;
                let model = args.string("modelId")?;
                let sm = self.need_sm()?;
                sm.append_model_change(&provider, &model)
                    .map(Some)
                    .map_err(|e| e.to_string())
            }
            Some("appendCompaction") => {
                let summary = args.string("summary")?;
                let first_kept = args.js_string("firstKeptEntryId")?;
                let tokens = args.number("tokensBefore")?;
                let details = args.opt_value("details");
                let from_hook = args.opt_bool("fromHook")?;
                let sm = self.need_sm()?;
                sm.append_compaction(&summary, &first_kept, tokens, details, from_hook)
                    .map(Some)
                    .map_err(|e| e.to_string())
            }
            Some("appendCustomEntry") => {
                let custom_type = args.string("customType")?;
                let data = args.opt_value("data");
                let sm = self.need_sm()?;
                sm.append_custom_entry(&custom_type, data)
                    .map(Some)
                    .map_err(|e| e.to_string())
            }
            Some("appendCustomMessageEntry") => {
                let custom_type = args.string("customType")?;
                let content = args.value("content")?;
                let display = args.bool("display")?;
                let details = args.opt_value("details");
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
                let target = args.js_string("targetId")?;
                let label = args.opt_value("label");
                let sm = self.need_sm()?;
                sm.append_label_change_value(&target, label)
                    .map(Some)
                    .map_err(|e| e.to_string())
            }
            Some("branch") => {
                let id = args.js_string("id")?;
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
                    Some(_) => Some(args.js_string("id")?),
                };
                let summary = args.string("summary")?;
                let details = args.opt_value("details");
                let from_hook = args.opt_bool("fromHook")?;
                let sm = self.need_sm()?;
                sm.branch_with_summary(id.as_ref().map(EntryId::from), &summary, details, from_hook)
                    .map(Some)
                    .map_err(|e| e.to_string())
            }
            Some("createBranchedSession") => {
                let leaf = args.js_string("leafId")?;
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
        s.insert("label", label.map_or(JsValue::Null, clone_value));
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
            Some(p) if matches!(self.storage.stat(p), Ok(Some(_))) => {
                match self.storage.read_all(p) {
                    Ok(b) => JsValue::from(String::from_utf8_lossy(&b).into_owned()),
                    Err(e) => return Err(e.to_string()),
                }
            }
            _ => JsValue::Null,
        };
        s.insert("file", file);
        s.insert("leafId", JsValue::from(sm.get_leaf_id_js().cloned()));
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
        let name = sm.get_session_name_js().map_err(|e| name_message(&e))?;
        s.insert("sessionName", JsValue::from(name));
        let branch = sm
            .get_branch(None)
            .iter()
            .map(|e| JsValue::from(e.id_js().cloned()))
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
            o.insert("id", JsValue::from(node.entry.id_js().cloned()));
            o.insert(
                "label",
                node.label.as_ref().map_or(JsValue::Null, clone_value),
            );
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
