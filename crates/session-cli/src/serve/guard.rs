//! The checks every request of `sessions serve` passes before it reaches a handler, and the
//! headers every response carries:
//! - `Host` must be the bound address (`IP:PORT`; for a loopback bind also `localhost:PORT`),
//!   so a DNS-rebinding page on another name is refused (403);
//! - the access token: `?token=` first (a GET then answers `303 See Other` to the same path
//!   without the query, setting the token as an `HttpOnly; SameSite=Strict` cookie, so the
//!   token leaves the address bar and the history), else the cookie; none gives 401, a wrong
//!   one 403;
//! - a request from another site (`Sec-Fetch-Site: cross-site`, or an `Origin` that is not this
//!   server's) is refused (403);
//! - a POST needs the CSRF token (a second random value, embedded in the pages) in the
//!   `X-CSRF-Token` header (403 without it);
//! - every response, refusals included: `Content-Security-Policy` (the handler's own, else
//!   [`DEFAULT_CSP`]), `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer`,
//!   `X-Frame-Options: DENY`, `Cache-Control: no-store`.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::App;

/// The policy of responses that set none (JSON, text, refusals): nothing may load.
pub(super) const DEFAULT_CSP: &str =
    "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The CSRF header a POST must carry.
pub(super) const CSRF_HEADER: &str = "x-csrf-token";

/// 32 random bytes from the OS, as 64 lowercase hex digits.
///
/// # Errors
/// The OS random source failed.
pub(super) fn random_token() -> anyhow::Result<String> {
    let mut b = [0u8; 32];
    getrandom::fill(&mut b).map_err(|e| anyhow::anyhow!("cannot read random bytes: {e}"))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// Equal in time independent of where `a` and `b` differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The `Host` values accepted for a server bound to `addr`.
pub(super) fn allowed_hosts(addr: SocketAddr) -> Vec<String> {
    let mut v = vec![addr.to_string()];
    if addr.ip().is_loopback() {
        v.push(format!("localhost:{}", addr.port()));
    }
    v
}

/// The cookie holding the token (the port in its name: cookies are shared by every port of a
/// host, so two servers must not overwrite each other's).
pub(super) fn cookie_name(addr: SocketAddr) -> String {
    format!("sessions_serve_{}", addr.port())
}

fn refuse(status: StatusCode, msg: &str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!("{msg}\n"),
    )
        .into_response()
}

/// The value of `name` in a query string (`a=1&token=…`), percent-decoding not needed: the
/// tokens are hex.
fn query_value<'q>(query: &'q str, name: &str) -> Option<&'q str> {
    query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

fn cookie_value<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// The middleware: see the module documentation.
pub(super) async fn guard(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let mut resp = check(&app, req, next).await;
    let h = resp.headers_mut();
    if !h.contains_key(header::CONTENT_SECURITY_POLICY) {
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(DEFAULT_CSP),
        );
    }
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

async fn check(app: &App, req: Request, next: Next) -> Response {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if !app.hosts.iter().any(|h| h == host) {
        return refuse(
            StatusCode::FORBIDDEN,
            &format!(
                "Host {host:?} is not this server's address ({}): refused (DNS rebinding guard)",
                app.hosts[0]
            ),
        );
    }
    let h = req.headers();
    if h.get("sec-fetch-site").and_then(|v| v.to_str().ok()) == Some("cross-site") {
        return refuse(StatusCode::FORBIDDEN, "cross-site request refused");
    }
    if let Some(origin) = h.get(header::ORIGIN) {
        let ok = origin.to_str().ok().is_some_and(|o| {
            app.hosts
                .iter()
                .any(|host| o.strip_prefix("http://") == Some(host.as_str()))
        });
        if !ok {
            return refuse(StatusCode::FORBIDDEN, "request from another origin refused");
        }
    }
    let from_query = req
        .uri()
        .query()
        .and_then(|q| query_value(q, "token"))
        .map(str::to_owned);
    let token = app.token.as_bytes();
    match &from_query {
        Some(t) if same(t.as_bytes(), token) => {
            if req.method() == Method::GET || req.method() == Method::HEAD {
                // The token moves into the cookie; the address loses it.
                let cookie = format!(
                    "{}={}; Path=/; HttpOnly; SameSite=Strict",
                    app.cookie, app.token
                );
                let to = req.uri().path().to_owned();
                let mut resp = (StatusCode::SEE_OTHER, [(header::LOCATION, to)]).into_response();
                if let Ok(v) = HeaderValue::from_str(&cookie) {
                    resp.headers_mut().insert(header::SET_COOKIE, v);
                }
                return resp;
            }
        }
        Some(_) => return refuse(StatusCode::FORBIDDEN, "wrong token"),
        None => match cookie_value(req.headers(), &app.cookie) {
            Some(c) if same(c.as_bytes(), token) => {}
            Some(_) => return refuse(StatusCode::FORBIDDEN, "wrong token"),
            None => {
                return refuse(
                    StatusCode::UNAUTHORIZED,
                    "this server needs its token: open the URL `sessions serve` printed",
                );
            }
        },
    }
    if req.method() == Method::POST {
        let csrf = req
            .headers()
            .get(CSRF_HEADER)
            .map(HeaderValue::as_bytes)
            .unwrap_or_default();
        if !same(csrf, app.csrf.as_bytes()) {
            return refuse(
                StatusCode::FORBIDDEN,
                "missing or wrong CSRF token (X-CSRF-Token)",
            );
        }
    }
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_64_hex_digits_and_differ() {
        let a = random_token().unwrap();
        let b = random_token().unwrap();
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn query_and_cookie_values() {
        assert_eq!(query_value("a=1&token=ab", "token"), Some("ab"));
        assert_eq!(query_value("xtoken=ab", "token"), None);
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("x=1; sessions_serve_80=ff"),
        );
        assert_eq!(cookie_value(&h, "sessions_serve_80"), Some("ff"));
        assert_eq!(cookie_value(&h, "sessions_serve_81"), None);
    }

    #[test]
    fn loopback_binds_accept_localhost() {
        let a: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        assert_eq!(allowed_hosts(a), ["127.0.0.1:8080", "localhost:8080"]);
        let b: SocketAddr = "192.168.1.2:80".parse().unwrap();
        assert_eq!(allowed_hosts(b), ["192.168.1.2:80"]);
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"ab"));
    }
}
