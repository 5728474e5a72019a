//! The pages of `sessions serve` (the dashboard; a session's page, which is the HTML export
//! with the serve controls added) and the read APIs behind the dashboard (listing, search).

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use session_format::json::{JsObject, JsValue, to_json_string};
use session_query::search::{FieldSet, SearchOptions, Searcher, mark_hits};
use sha2::{Digest, Sha256};

use super::{ApiError, App, blocking, json, served_dirs, session_path, url_name};
use crate::ctx::Ctx;
use crate::export::esc;
use crate::store_list::{self, ListFlags};

/// The dashboard's script.
const DASHBOARD_JS: &str = include_str!("dashboard.js");
/// The script added to a session's page: live updates and the branch actions.
const SESSION_JS: &str = include_str!("session.js");
/// The style of both.
const SERVE_CSS: &str = include_str!("serve.css");

/// Search hits returned at most.
const SEARCH_LIMIT: usize = 200;

/// The `'sha256-…'` source expression of a script.
fn hash(script: &str) -> String {
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(Sha256::digest(script.as_bytes()))
    )
}

/// The directives every page's policy ends with.
const PAGE_TAIL: &str =
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

fn html(body: Vec<u8>, csp: &str) -> Response {
    let mut resp = ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response();
    if let Ok(v) = HeaderValue::from_str(csp) {
        resp.headers_mut()
            .insert(header::CONTENT_SECURITY_POLICY, v);
    }
    resp
}

/// `GET /`: the dashboard (its script fetches the listing and the search).
pub(super) async fn dashboard(State(app): State<Arc<App>>) -> Response {
    let csp = format!(
        "default-src 'none'; script-src {}; style-src 'unsafe-inline'; img-src data:; {PAGE_TAIL}",
        hash(DASHBOARD_JS)
    );
    let page = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" \
         content=\"width=device-width, initial-scale=1\">\n<title>sessions serve</title>\n<style>{SERVE_CSS}</style>\n\
         </head>\n<body>\n<header><h1>Sessions</h1><p class=\"mode\">{}</p>\n\
         <form id=\"search\"><input id=\"q\" type=\"search\" placeholder=\"Search every session\" \
         aria-label=\"Search every session\"> <label><input id=\"regex\" type=\"checkbox\"> regex</label> \
         <button type=\"submit\">Search</button></form></header>\n<main>\n<section id=\"hits\" hidden></section>\n\
         <section id=\"agents\"><p>Loading…</p></section>\n</main>\n<script>{DASHBOARD_JS}</script>\n</body>\n</html>\n",
        if app.allow_write {
            "read-write: branch actions enabled"
        } else {
            "read-only"
        }
    );
    html(page.into_bytes(), &csp)
}

fn num(v: Option<f64>) -> JsValue {
    v.map_or(JsValue::Null, JsValue::Number)
}

/// The listing: `{"readOnly", "agents": [{"agent", "dir", "store", "sessions": [{"key",
/// "kind", "session", "sessionId", "model", "tokens", "updatedAt", "size", "messages",
/// "path"}]}]}` (`session`: the name of the session's URL, null when it has no transcript;
/// `updatedAt` epoch milliseconds).
fn listing(app: &App, ctx: &Ctx) -> anyhow::Result<String> {
    let flags = ListFlags {
        active_minutes: None,
        limit: Some(None),
        archived: false,
        width: None,
    };
    let mut agents = Vec::new();
    for (agent, dir) in served_dirs(ctx, &app.locator)? {
        let named = (agent != "-").then(|| agent.clone());
        let is_store = match ctx.store() {
            None => store_list::is_store_dir(&dir),
            Some(r) => r.sqlite_db_of_dir(&dir).is_some(),
        };
        let mut sessions = Vec::new();
        if is_store {
            for s in store_list::load(ctx, &[(named.clone(), dir.clone())], &flags)? {
                for r in &s.listing.rows {
                    let mut o = JsObject::new();
                    o.insert("key", JsValue::from(r.key.as_str()));
                    o.insert("kind", JsValue::from(r.kind));
                    o.insert(
                        "session",
                        JsValue::from(r.transcript.as_deref().and_then(url_name)),
                    );
                    o.insert("sessionId", JsValue::from(r.session_id.clone()));
                    o.insert(
                        "model",
                        JsValue::from(format!("{}/{}", r.model_provider, r.model)),
                    );
                    o.insert("tokens", num(r.total_tokens));
                    o.insert("updatedAt", num(r.updated_at));
                    o.insert("size", num(r.size.map(|s| s as f64)));
                    o.insert("messages", num(r.messages.map(|m| m as f64)));
                    o.insert(
                        "path",
                        JsValue::from(r.transcript.as_ref().map(|p| p.display().to_string())),
                    );
                    sessions.push(JsValue::Object(o));
                }
                for orphan in &s.listing.orphans {
                    let mut o = JsObject::new();
                    o.insert("key", JsValue::Null);
                    o.insert("kind", JsValue::Null);
                    o.insert("session", JsValue::from(url_name(&orphan.path)));
                    o.insert("sessionId", JsValue::from(orphan.session_id.as_str()));
                    o.insert("model", JsValue::Null);
                    o.insert("tokens", JsValue::Null);
                    o.insert("updatedAt", num(orphan.mtime_ms));
                    o.insert("size", JsValue::Number(orphan.size as f64));
                    o.insert("messages", num(orphan.messages.map(|m| m as f64)));
                    o.insert("path", JsValue::from(orphan.path.display().to_string()));
                    sessions.push(JsValue::Object(o));
                }
            }
        } else {
            let (listed, _skipped) = crate::list::collect_dirs(ctx, &[(named, dir.clone())]);
            for l in &listed {
                let i = &l.info;
                let mut o = JsObject::new();
                o.insert("key", JsValue::Null);
                o.insert("kind", JsValue::Null);
                o.insert("session", JsValue::from(url_name(&i.path)));
                o.insert("sessionId", JsValue::from(i.id.as_str()));
                o.insert("model", JsValue::Null);
                o.insert("tokens", JsValue::Null);
                o.insert("updatedAt", JsValue::Number(i.modified));
                o.insert("size", JsValue::Number(l.size as f64));
                o.insert("messages", JsValue::Number(i.unique_message_count as f64));
                o.insert("path", JsValue::from(i.path.display().to_string()));
                sessions.push(JsValue::Object(o));
            }
        }
        let mut a = JsObject::new();
        a.insert("agent", JsValue::from(agent));
        a.insert("dir", JsValue::from(dir.display().to_string()));
        a.insert("store", JsValue::Bool(is_store));
        a.insert("sessions", JsValue::from(sessions));
        agents.push(JsValue::Object(a));
    }
    let mut doc = JsObject::new();
    doc.insert("readOnly", JsValue::Bool(!app.allow_write));
    doc.insert("agents", JsValue::from(agents));
    Ok(to_json_string(&JsValue::Object(doc)))
}

/// `GET /api/sessions`: [`listing`].
pub(super) async fn sessions_json(State(app): State<Arc<App>>) -> Result<Response, ApiError> {
    blocking(move || {
        let ctx = app.ctx();
        listing(&app, &ctx).map_err(|e| ApiError::internal(&e))
    })
    .await
    .map(json)
}

/// The hits of `q` in every served session, at most [`SEARCH_LIMIT`]: `{"hits": [{"agent",
/// "session", "sessionId", "line", "entryId", "type", "role", "timestamp", "onCurrentBranch",
/// "field", "before", "match", "after"}], "truncated"}`.
fn search(app: &App, ctx: &Ctx, q: &str, regex: bool) -> Result<String, ApiError> {
    let searcher = Searcher::new(SearchOptions {
        pattern: q.to_owned(),
        regex,
        ignore_case: true,
        fields: FieldSet::default(),
        context_chars: 40,
        ..SearchOptions::default()
    })
    .map_err(|e| ApiError::bad_request(e.to_string()))?;
    let mut out = Vec::new();
    let mut truncated = false;
    let dirs = served_dirs(ctx, &app.locator).map_err(|e| ApiError::internal(&e))?;
    'dirs: for (agent, dir) in dirs {
        let named = (agent != "-").then(|| agent.clone());
        let (listed, _) = crate::list::collect_dirs(ctx, &[(named, dir)]);
        for l in &listed {
            let path = &l.info.path;
            let Ok(bytes) = ctx.backend.read_session(path) else {
                continue;
            };
            let room = SEARCH_LIMIT - out.len();
            let mut hits = Vec::new();
            searcher.search_bytes(&bytes, |h| {
                hits.push(h);
                hits.len() < room + 1
            });
            if hits.len() > room {
                hits.truncate(room);
                truncated = true;
            }
            if hits.is_empty() {
                continue;
            }
            if let Ok(ro) = ctx.backend.open_read_only(path) {
                mark_hits(&mut hits, &ro.session, None);
            }
            for h in hits {
                let mut o = JsObject::new();
                o.insert("agent", JsValue::from(agent.as_str()));
                o.insert("session", JsValue::from(url_name(path)));
                o.insert("sessionId", JsValue::from(l.info.id.as_str()));
                o.insert("line", JsValue::Number(h.line as f64));
                o.insert("entryId", JsValue::from(h.entry_id));
                o.insert("type", JsValue::from(h.entry_type));
                o.insert("role", JsValue::from(h.role));
                o.insert("timestamp", JsValue::from(h.timestamp));
                o.insert(
                    "onCurrentBranch",
                    h.on_current_branch.map_or(JsValue::Null, JsValue::Bool),
                );
                o.insert("field", JsValue::from(h.field.as_str()));
                o.insert("before", JsValue::from(h.before));
                o.insert("match", JsValue::from(h.matched));
                o.insert("after", JsValue::from(h.after));
                out.push(JsValue::Object(o));
            }
            if truncated || out.len() >= SEARCH_LIMIT {
                truncated = true;
                break 'dirs;
            }
        }
    }
    let mut doc = JsObject::new();
    doc.insert("hits", JsValue::from(out));
    doc.insert("truncated", JsValue::Bool(truncated));
    Ok(to_json_string(&JsValue::Object(doc)))
}

/// `GET /api/search?q=TEXT[&regex=1]`: [`search`] (case-insensitive).
pub(super) async fn search_json(
    State(app): State<Arc<App>>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    let Some(pattern) = q.get("q").filter(|p| !p.is_empty()).cloned() else {
        return Err(ApiError::bad_request("missing q (the text to search for)"));
    };
    let regex = q.get("regex").is_some_and(|v| v == "1");
    blocking(move || {
        let ctx = app.ctx();
        search(&app, &ctx, &pattern, regex)
    })
    .await
    .map(json)
}

/// `s` as one URL path segment: every byte but unreserved ones percent-encoded.
pub(super) fn segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The export page's policy amended for the server: the serve script's hash added to
/// `script-src`, `connect-src 'self'` (the live updates and the actions), and the tail
/// directives (replacing any `connect-src`, `base-uri`, `form-action`, `frame-ancestors` the
/// page had); a policy without `script-src` gains one with only that hash.
fn amend_policy(policy: &str, extra_script: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut had_script = false;
    for d in policy.split(';').map(str::trim).filter(|d| !d.is_empty()) {
        let name = d.split_whitespace().next().unwrap_or("");
        match name {
            "script-src" => {
                had_script = true;
                out.push(format!("{d} {extra_script}"));
            }
            "connect-src" | "base-uri" | "form-action" | "frame-ancestors" => {}
            _ => out.push(d.to_owned()),
        }
    }
    if !had_script {
        out.push(format!("script-src {extra_script}"));
    }
    out.push(PAGE_TAIL.to_owned());
    out.join("; ")
}

/// The export page with its `<meta>` policy taken out (returned, amended by
/// [`amend_policy`]: it becomes the response's header) and the serve controls added before
/// `</body>`.
fn serve_page(page: &[u8], controls: &str) -> (Vec<u8>, String) {
    const META: &[u8] = b"<meta http-equiv=\"Content-Security-Policy\" content=\"";
    let find = |hay: &[u8], needle: &[u8], from: usize| {
        hay.get(from..)?
            .windows(needle.len())
            .position(|w| w == needle)
            .map(|p| p + from)
    };
    let mut body = page.to_vec();
    let mut policy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:".to_owned();
    if let Some(start) = find(&body, META, 0)
        && let Some(end) = find(&body, b"\">", start + META.len())
    {
        policy = String::from_utf8_lossy(&body[start + META.len()..end]).into_owned();
        let mut cut = end + 2;
        if body.get(cut) == Some(&b'\n') {
            cut += 1;
        }
        body.drain(start..cut);
    }
    let at = body
        .windows(7)
        .rposition(|w| w == b"</body>")
        .unwrap_or(body.len());
    body.splice(at..at, controls.bytes());
    (body, amend_policy(&policy, &hash(SESSION_JS)))
}

/// `GET /s/AGENT/SESSION`: the session's export page, read-only, with the live updates (from
/// the offset the page was built from) and, with `--allow-write`, the branch actions.
pub(super) async fn session_page(
    State(app): State<Arc<App>>,
    Path((agent, session)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    blocking(move || {
        let ctx = app.ctx();
        let path = session_path(&app, &ctx, &agent, &session)?;
        let opened = crate::model::open(&ctx, &path).map_err(|e| ApiError::internal(&e))?;
        let sm = &opened.ro.session;
        let bytes = sm.file_bytes();
        let offset = memchr::memrchr(b'\n', bytes).map_or(0, |i| i + 1);
        let page = crate::export::html_page(&path, sm).map_err(|e| ApiError::internal(&e))?;
        let api = format!("/api/s/{}/{}", segment(&agent), segment(&session));
        let controls = format!(
            "<div id=\"sessions-serve\" hidden data-api=\"{}\" data-csrf=\"{}\" data-offset=\"{offset}\" data-write=\"{}\" data-leaf=\"{}\"></div>\n<style>{SERVE_CSS}</style>\n<script>{SESSION_JS}</script>\n",
            esc(&api),
            esc(&app.csrf),
            u8::from(app.allow_write),
            esc(sm.get_leaf_id().unwrap_or(""))
        );
        let (body, csp) = serve_page(&page, &controls);
        Ok(html(body, &csp))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_export_policy_gains_the_serve_script_and_connect_self() {
        assert_eq!(
            amend_policy(
                "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-A'; img-src data:",
                "'sha256-B'"
            ),
            "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-A' 'sha256-B'; \
             img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; \
             frame-ancestors 'none'"
        );
    }

    #[test]
    fn the_meta_policy_moves_to_the_header() {
        let page = b"<head>\n<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'sha256-A'\">\n<title>t</title></head><body>x</body>";
        let (body, csp) = serve_page(page, "<p>c</p>");
        assert_eq!(
            String::from_utf8(body).unwrap(),
            "<head>\n<title>t</title></head><body>x<p>c</p></body>"
        );
        assert_eq!(
            csp,
            format!(
                "default-src 'none'; script-src 'sha256-A' {}; connect-src 'self'; base-uri \
                 'none'; form-action 'none'; frame-ancestors 'none'",
                hash(SESSION_JS)
            )
        );
    }

    #[test]
    fn segments_are_percent_encoded() {
        assert_eq!(segment("agent:main:x y/z"), "agent%3Amain%3Ax%20y%2Fz");
        assert_eq!(segment("a-b_c.d~"), "a-b_c.d~");
    }
}
