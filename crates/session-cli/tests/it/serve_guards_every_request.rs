//! `sessions serve` refuses what the token, the Host check and the CSRF token guard against,
//! with the headers every response carries, and routes no write without `--allow-write`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::serve::{Server, assert_security_headers};
use crate::support::{plant, small_session, tempdir};

fn store() -> tempfile::TempDir {
    let dir = tempdir();
    plant(&dir.path().join("s1.jsonl"), &small_session());
    dir
}

#[test]
fn without_the_token_every_route_is_401_and_a_wrong_token_403() {
    let dir = store();
    let d = dir.path().to_str().unwrap();
    let srv = Server::start(dir.path(), &["--dir", d]);
    let host = format!("Host: {}\r\n", srv.addr);
    for path in [
        "/",
        "/api/sessions",
        "/api/search?q=hello",
        "/s/-/s1",
        "/api/s/-/s1/rows",
        "/api/s/-/s1/events",
        "/nope",
    ] {
        let r = srv.raw(&format!("GET {path} HTTP/1.1\r\n{host}"), b"");
        assert_eq!(r.status, 401, "{path}");
        assert_eq!(
            r.text(),
            "this server needs its token: open the URL `sessions serve` printed\n"
        );
        assert_security_headers(&r, path);
        let r = srv.raw(
            &format!(
                "GET {path} HTTP/1.1\r\n{host}Cookie: sessions_serve_{}={}\r\n",
                srv.port(),
                "0".repeat(64)
            ),
            b"",
        );
        assert_eq!(
            (r.status, r.text().as_str()),
            (403, "wrong token\n"),
            "{path}"
        );
        assert_security_headers(&r, path);
        let sep = if path.contains('?') { '&' } else { '?' };
        let r = srv.raw(&format!("GET {path}{sep}token=abc HTTP/1.1\r\n{host}"), b"");
        assert_eq!(
            (r.status, r.text().as_str()),
            (403, "wrong token\n"),
            "{path}"
        );
    }
    // A cookie of another port's server does not count.
    let r = srv.raw(
        &format!(
            "GET / HTTP/1.1\r\n{host}Cookie: sessions_serve_1={}\r\n",
            srv.token
        ),
        b"",
    );
    assert_eq!(r.status, 401);
}

#[test]
fn the_start_url_sets_the_cookie_and_drops_the_token_from_the_address() {
    let dir = store();
    let d = dir.path().to_str().unwrap();
    let srv = Server::start(dir.path(), &["--dir", d]);
    let r = srv.raw(
        &format!(
            "GET /?token={} HTTP/1.1\r\nHost: {}\r\n",
            srv.token, srv.addr
        ),
        b"",
    );
    assert_eq!(r.status, 303);
    assert_eq!(r.header("location"), Some("/"));
    assert_eq!(
        r.header("set-cookie").unwrap(),
        format!(
            "sessions_serve_{}={}; Path=/; HttpOnly; SameSite=Strict",
            srv.port(),
            srv.token
        )
    );
    assert_security_headers(&r, "redirect");
    let r = srv.get("/");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
    assert_security_headers(&r, "dashboard");
}

#[test]
fn a_wrong_host_or_origin_is_refused_even_with_the_token() {
    let dir = store();
    let d = dir.path().to_str().unwrap();
    let srv = Server::start(dir.path(), &["--dir", d]);
    let port = srv.port().to_owned();
    for host in [
        format!("evil.example:{port}"),
        "127.0.0.1".to_owned(),
        format!("127.0.0.1:{}", port.parse::<u32>().unwrap() + 1),
        String::new(),
    ] {
        let r = srv.raw(
            &format!(
                "GET /api/sessions HTTP/1.1\r\nHost: {host}\r\n{}",
                srv.cookie()
            ),
            b"",
        );
        assert_eq!(r.status, 403, "{host}");
        assert_eq!(
            r.text(),
            format!(
                "Host {host:?} is not this server's address ({}): refused (DNS rebinding guard)\n",
                srv.addr
            )
        );
        assert_security_headers(&r, &host);
    }
    let r = srv.raw(
        &format!(
            "GET /api/sessions HTTP/1.1\r\nHost: localhost:{port}\r\n{}",
            srv.cookie()
        ),
        b"",
    );
    assert_eq!(r.status, 200);
    let r = srv.raw(
        &format!(
            "GET /api/sessions HTTP/1.1\r\nHost: {}\r\n{}Origin: http://evil.example\r\n",
            srv.addr,
            srv.cookie()
        ),
        b"",
    );
    assert_eq!(
        (r.status, r.text().as_str()),
        (403, "request from another origin refused\n")
    );
    let r = srv.raw(
        &format!(
            "GET /api/sessions HTTP/1.1\r\nHost: {}\r\n{}Sec-Fetch-Site: cross-site\r\n",
            srv.addr,
            srv.cookie()
        ),
        b"",
    );
    assert_eq!(
        (r.status, r.text().as_str()),
        (403, "cross-site request refused\n")
    );
}

#[test]
fn a_post_without_the_csrf_token_is_refused_and_writes_nothing() {
    let dir = store();
    let file = dir.path().join("s1.jsonl");
    let before = std::fs::read(&file).unwrap();
    let d = dir.path().to_str().unwrap();
    let srv = Server::start(dir.path(), &["--dir", d, "--allow-write"]);
    let csrf = srv.csrf("-", "s1");
    for (path, form) in [
        ("/api/s/-/s1/branch", "entry=a1"),
        ("/api/s/-/s1/branch-summary", "entry=a1&summary=x"),
    ] {
        for bad in [
            None,
            Some("0".repeat(64)),
            Some(csrf[..63].to_owned()),
            Some(srv.token.clone()),
        ] {
            let r = srv.post(path, form, bad.as_deref());
            assert_eq!(
                (r.status, r.text().as_str()),
                (403, "missing or wrong CSRF token (X-CSRF-Token)\n"),
                "{path} {bad:?}"
            );
            assert_security_headers(&r, path);
        }
    }
    assert_eq!(std::fs::read(&file).unwrap(), before);
    // With it, the write happens (the branch tests pin what it writes).
    let r = srv.post("/api/s/-/s1/branch", "entry=a1", Some(&csrf));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_security_headers(&r, "branch");
}

#[test]
fn without_allow_write_the_write_routes_do_not_exist() {
    let dir = store();
    let file = dir.path().join("s1.jsonl");
    let before = std::fs::read(&file).unwrap();
    let d = dir.path().to_str().unwrap();
    let srv = Server::start(dir.path(), &["--dir", d]);
    let csrf = srv.csrf("-", "s1");
    let page = srv.get("/s/-/s1").text();
    assert!(page.contains("data-write=\"0\""));
    for (path, form) in [
        ("/api/s/-/s1/branch", "entry=a1"),
        ("/api/s/-/s1/branch-summary", "entry=a1&summary=x"),
    ] {
        let r = srv.post(path, form, Some(&csrf));
        assert_eq!(
            (r.status, r.text().as_str()),
            (404, "not found\n"),
            "{path}"
        );
        assert_security_headers(&r, path);
    }
    // The read routes answer no POST either.
    let r = srv.post("/api/s/-/s1/rows", "", Some(&csrf));
    assert_eq!(r.status, 405);
    assert_eq!(std::fs::read(&file).unwrap(), before);
}

#[test]
fn every_script_of_the_pages_is_allowed_by_its_policy_and_nothing_else_is() {
    use base64::Engine as _;
    use sha2::{Digest, Sha256};
    let dir = store();
    let d = dir.path().to_str().unwrap();
    let srv = Server::start(dir.path(), &["--dir", d, "--allow-write"]);
    for path in ["/", "/s/-/s1"] {
        let r = srv.get(path);
        assert_eq!(r.status, 200, "{path}");
        let csp = r.header("content-security-policy").unwrap().to_owned();
        let page = r.text();
        assert!(
            !page.contains("http-equiv=\"Content-Security-Policy\""),
            "{path}"
        );
        let mut hashes = Vec::new();
        let mut rest = page.as_str();
        while let Some(at) = rest.find("<script>") {
            let body = &rest[at + 8..];
            let end = body.find("</script>").unwrap();
            hashes.push(format!(
                "'sha256-{}'",
                base64::engine::general_purpose::STANDARD.encode(Sha256::digest(&body[..end]))
            ));
            rest = &body[end..];
        }
        let script_src: Vec<&str> = csp
            .split("; ")
            .find_map(|d| d.strip_prefix("script-src "))
            .unwrap()
            .split(' ')
            .collect();
        assert_eq!(script_src, hashes, "{path}: {csp}");
        assert!(csp.starts_with("default-src 'none'; "), "{csp}");
        assert!(
            csp.ends_with(
                "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
            ),
            "{csp}"
        );
        assert_eq!(hashes.len(), if path == "/" { 1 } else { 2 }, "{path}");
    }
}

#[test]
fn an_unspecified_bind_address_is_refused_before_listening() {
    let dir = store();
    let d = dir.path().to_str().unwrap();
    for (bind, port) in [("0.0.0.0:0", "0"), ("[::]:8080", "8080")] {
        let r = crate::support::run_in(dir.path(), ["serve", "--dir", d, "--bind", bind]);
        assert_eq!(r.code, 2, "{bind}");
        assert_eq!(r.stdout, "");
        assert_eq!(
            r.stderr,
            format!(
                "error: --bind {bind}: an unspecified address would accept no request (each must \
                 name the server's own address in its Host header); bind the address the browser \
                 will use, e.g. 127.0.0.1:{port} or this machine's LAN address\n"
            )
        );
    }
}
