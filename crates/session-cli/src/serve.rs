//! `sessions serve`: a local dashboard over a whole store (axum on a two-worker tokio
//! runtime). The handlers are a thin layer over the library, each run on the blocking pool:
//! the listing ([`crate::list`], [`crate::store_list`]), the read-only open and the HTML export
//! of one session ([`crate::model::open`], [`crate::export::html_page`]), the search
//! ([`session_query::search`]), the rows a session gained since a byte offset
//! ([`live`]: a JSON API and server-sent events), and, only with `--allow-write`, the leaf
//! control and the branch summary ([`write`](mod@write)). Requests pass [`guard`] first.
//!
//! Routes (`AGENT` is an agent id of the store, `-` for the one directory of `--dir`/`--pi`;
//! `SESSION` a session name as `--session` takes it; neither is ever joined into a path: the
//! agent is looked up among the listed ones, the session resolved by
//! [`crate::address::resolve_session`] after [`crate::address::check_session_name`]):
//! - `GET /` the dashboard; `GET /api/sessions` the listing; `GET /api/search?q=TEXT` hits;
//! - `GET /s/AGENT/SESSION` the session's page (the export's page, with the live and branch
//!   controls added); `GET /api/s/AGENT/SESSION/rows?since=OFFSET` the complete lines after
//!   byte OFFSET; `GET /api/s/AGENT/SESSION/events?since=OFFSET` the same as server-sent events;
//! - with `--allow-write` only (otherwise not routed, 404): `POST /api/s/AGENT/SESSION/branch`
//!   (`entry=ID`) and `POST /api/s/AGENT/SESSION/branch-summary` (`entry=ID&summary=TEXT`).

mod guard;
mod live;
mod pages;
mod write;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use anyhow::{Context as _, bail};
use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use clap::Args;

use crate::address::{self, Locator};
use crate::ctx::Ctx;
use crate::outcome::{Outcome, UsageError};
use crate::text;

pub(crate) const LONG_ABOUT: &str = "\
Serve a local dashboard over a store: its agents and sessions (key, kind, model, tokens, age,
size; sortable), a search across every session, each session's page (the HTML export's view)
with live updates while another process appends to it, and, with --allow-write, \"branch from
here\" and \"branch with summary\" on an entry.

Where the sessions are: as for `sessions list` (--root DIR, the OpenClaw state directory;
--agent ID; --dir DIR; --pi; or --backend sqlite:PATH / redis://…, read-only).

Security: the server binds 127.0.0.1 by default and prints one URL with a random token (256
bits from the OS); every request needs it (the first in the URL, then an HttpOnly,
SameSite=Strict cookie). The Host header must be the bound address (a DNS-rebinding page is
refused), cross-site requests are refused, every write is a POST carrying a second random
token the pages embed (X-CSRF-Token), and every response carries a strict
Content-Security-Policy, X-Content-Type-Options: nosniff, Referrer-Policy: no-referrer and
X-Frame-Options: DENY. No value of a URL or form is joined into a path: agents are looked up
among the store's, sessions resolved by the rules of --session.

Read-only by default: nothing is written anywhere (the write routes do not exist, 404). With
--allow-write (files only): \"branch from here\" appends one leaf-control row to the session
file under its write lock (OpenClaw's next turn continues from that entry), \"branch with
summary\" appends a branch_summary entry; both are refused while another live process holds the
session's write lock (naming it), and for a file a writable open would rewrite (an old version,
a corrupt header: `sessions repair` first).

Stops on Ctrl-C.";

/// The arguments of `sessions serve`.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    pub(crate) locator: Locator,
    /// The address to listen on, IP:PORT (port 0: any free port; not `0.0.0.0` or `[::]`: requests
    /// must name this address in their Host header). A non-loopback address exposes the
    /// dashboard to the network (the token still guards it; no TLS).
    #[arg(long, value_name = "IP:PORT", default_value = "127.0.0.1:0")]
    bind: SocketAddr,
    /// Route the write actions (branch from here, branch with summary). Files only.
    #[arg(long)]
    allow_write: bool,
}

/// The server's shared state.
pub(crate) struct App {
    /// The run's context; the library calls are synchronous, so one at a time.
    ctx: Mutex<Ctx>,
    locator: Locator,
    /// The access token and the CSRF token (64 hex digits each).
    token: String,
    csrf: String,
    /// The accepted `Host` values, the bound address first.
    hosts: Vec<String>,
    /// The name of the token's cookie.
    cookie: String,
    allow_write: bool,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("App")
    }
}

impl App {
    fn ctx(&self) -> MutexGuard<'_, Ctx> {
        self.ctx.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A refusal or failure, as a plain-text response.
#[derive(Debug)]
pub(crate) struct ApiError(StatusCode, String);

impl ApiError {
    fn bad_request(msg: impl Into<String>) -> Self {
        ApiError(StatusCode::BAD_REQUEST, msg.into())
    }
    fn not_found(msg: impl Into<String>) -> Self {
        ApiError(StatusCode::NOT_FOUND, msg.into())
    }
    fn conflict(msg: impl Into<String>) -> Self {
        ApiError(StatusCode::CONFLICT, msg.into())
    }
    fn internal(e: &anyhow::Error) -> Self {
        ApiError(
            StatusCode::INTERNAL_SERVER_ERROR,
            crate::output::error_text(e),
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.0,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            format!("{}\n", self.1),
        )
            .into_response()
    }
}

/// A JSON response.
fn json(body: String) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
        body,
    )
        .into_response()
}

/// Runs `f` on the blocking pool (the library is synchronous).
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::internal(&anyhow::anyhow!("handler failed: {e}")))?
}

/// The sessions directories served, each with its agent as the URL names it (`-` for the
/// one directory of `--dir`/`--pi`).
fn served_dirs(ctx: &Ctx, loc: &Locator) -> anyhow::Result<Vec<(String, PathBuf)>> {
    let dirs = crate::list::listed_dirs(ctx, loc, !loc.names_dir())?;
    Ok(dirs
        .into_iter()
        .map(|(agent, dir)| (agent.unwrap_or_else(|| "-".to_owned()), dir))
        .collect())
}

/// The session file `agent`/`session` names: the agent looked up among the served ones, the
/// name checked ([`address::check_session_name`]) and resolved in its directory
/// ([`address::resolve_session`]).
fn session_path(app: &App, ctx: &Ctx, agent: &str, session: &str) -> Result<PathBuf, ApiError> {
    if agent != "-" {
        address::check_agent_id(agent).map_err(|e| ApiError::bad_request(e.to_string()))?;
    }
    address::check_session_name(session).map_err(|e| ApiError::bad_request(e.to_string()))?;
    let dirs = served_dirs(ctx, &app.locator).map_err(|e| ApiError::internal(&e))?;
    let Some((_, dir)) = dirs.iter().find(|(a, _)| a == agent) else {
        return Err(ApiError::not_found(format!(
            "no agent {} in this store",
            text::safe(agent)
        )));
    };
    address::resolve_session(ctx, dir, session)
        .map_err(|e| ApiError::not_found(crate::output::error_text(&e)))
}

/// The name a URL gives a session file: its file name without `.jsonl`.
fn url_name(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    Some(name.strip_suffix(".jsonl").unwrap_or(name).to_owned())
}

fn router(app: Arc<App>) -> Router {
    let mut r = Router::new()
        .route("/", get(pages::dashboard))
        .route("/api/sessions", get(pages::sessions_json))
        .route("/api/search", get(pages::search_json))
        .route("/s/{agent}/{session}", get(pages::session_page))
        .route("/api/s/{agent}/{session}/rows", get(live::rows))
        .route("/api/s/{agent}/{session}/events", get(live::events));
    if app.allow_write {
        r = r
            .route("/api/s/{agent}/{session}/branch", post(write::branch))
            .route(
                "/api/s/{agent}/{session}/branch-summary",
                post(write::branch_summary),
            );
    }
    r.fallback(|| async { ApiError::not_found("not found") })
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&app),
            guard::guard,
        ))
        .with_state(app)
}

/// `sessions serve`: binds, prints the start URL on stdout, serves until killed.
///
/// # Errors
/// A write request on a store that is not files; nothing to serve; the address cannot be
/// bound; the runtime cannot start.
pub(crate) fn run(ctx: Ctx, args: &ServeArgs) -> anyhow::Result<Outcome> {
    if args.allow_write && ctx.store().is_some() {
        bail!(UsageError::new(
            "--allow-write writes session files; this store is read through --backend (or is an \
             OpenClaw 2026.8+ SQLite store) and is served read-only: leave out --allow-write"
        ));
    }
    if args.bind.ip().is_unspecified() {
        bail!(UsageError::new(format!(
            "--bind {}: an unspecified address would accept no request (each must name the \
             server's own address in its Host header); bind the address the browser will use, \
             e.g. 127.0.0.1:{} or this machine's LAN address",
            args.bind,
            args.bind.port()
        )));
    }
    // Fails early, with the list's own message, when there is nothing to serve.
    served_dirs(&ctx, &args.locator)?;
    let listener = std::net::TcpListener::bind(args.bind)
        .with_context(|| format!("cannot listen on {}", args.bind))?;
    let addr = listener.local_addr()?;
    listener.set_nonblocking(true)?;
    let app = Arc::new(App {
        ctx: Mutex::new(ctx),
        locator: args.locator.clone(),
        token: guard::random_token()?,
        csrf: guard::random_token()?,
        hosts: guard::allowed_hosts(addr),
        cookie: guard::cookie_name(addr),
        allow_write: args.allow_write,
    });
    if !addr.ip().is_loopback() {
        eprintln!(
            "warning: listening on {addr}, which is not a loopback address: anyone who can reach \
             it and has the token can read every session (plain HTTP, no TLS)"
        );
    }
    let url = format!("http://{addr}/?token={}", app.token);
    {
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        writeln!(out, "{url}")?;
        out.flush()?;
    }
    eprintln!(
        "sessions serve: {} on {addr}; Ctrl-C stops it",
        if args.allow_write {
            "read-write (branch actions enabled)"
        } else {
            "read-only"
        }
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(8)
        .enable_io()
        .enable_time()
        .build()
        .context("cannot start the server's runtime")?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        axum::serve(listener, router(app)).await
    })
    .context("the server stopped")?;
    Ok(Outcome::Ok)
}
