//! The write actions of `sessions serve --allow-write` (routed only then), each one POST with
//! the CSRF token ([`super::guard`]) and a form body:
//! - `…/branch` (`entry=ID`): "branch from here", one leaf-control row appended to the session
//!   file ([`session_store::SessionManager::append_leaf_control`]);
//! - `…/branch-summary` (`entry=ID&summary=TEXT`): "branch with summary", a `branch_summary`
//!   entry appended under the entry ([`session_store::SessionManager::branch_with_summary`]).
//!
//! Both write under the session write lock, tried once: a lock held by a live process
//! (OpenClaw's gateway in a run, another `sessions` command) refuses the action with 409,
//! naming the holder; so does a file that a writable open would rewrite (an old version, a
//! corrupt header), which is left to `sessions repair`. The answer is `{"id", "leaf",
//! "size"}`: the new row's id, the leaf now, the file's new size.

use std::collections::HashMap;
use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::Form;
use axum::extract::{Path, State};
use axum::response::Response;
use session_format::json::{JsObject, JsValue, to_json_string};
use session_store::lock::LockFileInfo;
use session_store::{BranchError, LockOptions, OpenParams, SessionManager};

use super::{ApiError, App, blocking, json, session_path};
use crate::text;

/// The longest summary accepted, in bytes.
const MAX_SUMMARY_BYTES: usize = 64 * 1024;

/// Who holds a lock, for the refusal.
fn holder(info: &LockFileInfo) -> String {
    let since = info
        .created_at
        .as_deref()
        .map(|c| format!(", since {}", text::safe(c)))
        .unwrap_or_default();
    match info.pid {
        Some(pid) => format!(
            "pid {pid} ({}{since})",
            if info.pid_alive {
                "running"
            } else {
                "not running"
            }
        ),
        None => format!(
            "an unknown holder (lock file {}{since})",
            text::path(&info.lock_path)
        ),
    }
}

/// The session to write, after the checks that need no lock: a regular file, not locked by
/// a live holder, not one a writable open would rewrite.
fn writable(app: &App, agent: &str, session: &str) -> Result<PathBuf, ApiError> {
    let path = {
        let ctx = app.ctx();
        session_path(app, &ctx, agent, session)?
    };
    crate::fsx::require_regular(&path).map_err(|e| ApiError::internal(&e))?;
    let options = LockOptions::from_env();
    match session_store::lock::inspect_session_lock(&path, options.stale) {
        Ok(Some(info)) if info.is_held() => {
            return Err(ApiError::conflict(format!(
                "session {} is locked by {}: nothing written; try again when it is done",
                text::path(&path),
                holder(&info)
            )));
        }
        Ok(_) => {}
        Err(e) => {
            return Err(ApiError::conflict(format!(
                "cannot read the write lock of {}: {e}; nothing written",
                text::path(&path)
            )));
        }
    }
    let ro = SessionManager::open_read_only(&path, None)
        .map_err(|e| ApiError::internal(&anyhow::Error::new(e)))?;
    if ro.report.writable_open_would_rewrite() {
        return Err(ApiError::conflict(format!(
            "session {} would be rewritten by a writable open (an old version or a corrupt \
             header): nothing written; `sessions repair` it first",
            text::path(&path)
        )));
    }
    Ok(path)
}

/// The writable open, inside the write lock tried once.
fn open(path: &FsPath) -> Result<SessionManager, ApiError> {
    let options = LockOptions::from_env().with_timeout(Some(Duration::ZERO));
    SessionManager::open_locked(path, &OpenParams::default(), options).map_err(|e| {
        let e = anyhow::Error::new(e);
        ApiError::conflict(format!(
            "{}; nothing written",
            crate::output::error_text(&e)
        ))
    })
}

/// True when `path` lies in pi's sessions layout: its directory is named `--<cwd>--`
/// (`~/.pi/agent/sessions/--home-me-project--/…`). pi 0.73.1 has no leaf control: its open
/// takes a `type:"leaf"` row for an ordinary entry and goes on from it.
fn in_pi_layout(path: &FsPath) -> bool {
    path.parent()
        .and_then(FsPath::file_name)
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.len() >= 4 && n.starts_with("--") && n.ends_with("--"))
}

fn branch_error(e: BranchError) -> ApiError {
    let status = match &e {
        BranchError::EntryNotFound { .. } => axum::http::StatusCode::NOT_FOUND,
        BranchError::Lock { .. } | BranchError::NotWritten { .. } => {
            axum::http::StatusCode::CONFLICT
        }
        _ => axum::http::StatusCode::INTERNAL_SERVER_ERROR,
    };
    ApiError(status, crate::output::error_text(&anyhow::Error::new(e)))
}

fn entry_of(form: &HashMap<String, String>) -> Result<String, ApiError> {
    match form.get("entry") {
        Some(e) if !e.is_empty() && !e.chars().any(char::is_control) => Ok(e.clone()),
        _ => Err(ApiError::bad_request(
            "entry: the id of an entry of the session",
        )),
    }
}

fn answer(id: &str, sm: &SessionManager, path: &FsPath) -> String {
    let mut o = JsObject::new();
    o.insert("id", JsValue::from(id));
    o.insert("leaf", JsValue::from(sm.get_leaf_id()));
    o.insert(
        "size",
        JsValue::Number(std::fs::metadata(path).map_or(0.0, |m| m.len() as f64)),
    );
    to_json_string(&JsValue::Object(o))
}

/// `POST /api/s/AGENT/SESSION/branch` with `entry=ID`: "branch from here".
pub(super) async fn branch(
    State(app): State<Arc<App>>,
    Path((agent, session)): Path<(String, String)>,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    let entry = entry_of(&form)?;
    blocking(move || {
        let path = writable(&app, &agent, &session)?;
        if app.locator.pi || in_pi_layout(&path) {
            return Err(ApiError::conflict(format!(
                "branch from here writes OpenClaw's leaf-control row, which pi does not read: this \
                 session is in pi's sessions layout (`--<cwd>--/`), and pi would go on from its last \
                 entry, not from {}; use Branch with summary, which pi follows",
                text::safe(&entry)
            )));
        }
        let mut sm = open(&path)?;
        let id = sm
            .append_leaf_control(entry.as_str())
            .map_err(branch_error)?;
        Ok(json(answer(&id, &sm, &path)))
    })
    .await
}

/// `POST /api/s/AGENT/SESSION/branch-summary` with `entry=ID&summary=TEXT`: "branch with
/// summary".
pub(super) async fn branch_summary(
    State(app): State<Arc<App>>,
    Path((agent, session)): Path<(String, String)>,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    let entry = entry_of(&form)?;
    let summary = match form.get("summary") {
        Some(s) if !s.trim().is_empty() && s.len() <= MAX_SUMMARY_BYTES => s.clone(),
        _ => {
            return Err(ApiError::bad_request(format!(
                "summary: the text of the summary (1 to {MAX_SUMMARY_BYTES} bytes)"
            )));
        }
    };
    blocking(move || {
        let path = writable(&app, &agent, &session)?;
        let mut sm = open(&path)?;
        let id = sm
            .branch_with_summary(Some(entry.as_str().into()), &summary, None, None)
            .map_err(branch_error)?;
        if !sm.is_flushed() {
            return Err(ApiError::conflict(
                "the session has no assistant message yet: OpenClaw keeps its entries in memory \
                 until the first one, so the summary was not written",
            ));
        }
        Ok(json(answer(&id, &sm, &path)))
    })
    .await
}
