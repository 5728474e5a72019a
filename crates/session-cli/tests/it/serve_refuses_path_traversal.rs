//! No URL or form value of `sessions serve` reaches a path: `..`, its percent-encodings,
//! absolute paths, NUL and backslashes in the agent and session segments of every route are
//! refused (400 from the name validator, 404 where no route or agent matches), and the file
//! beside the served directory is never read.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::serve::Server;
use crate::support::{HEADER, msg, plant, small_session, tempdir};

/// (agent segment, session segment, expected status, expected body).
fn cases(secret: &str) -> Vec<(String, String, u16, String)> {
    let name = |shown: &str, why: &str| format!("invalid session name \"{shown}\": {why}\n");
    let agent = |shown: &str, why: &str| format!("invalid agent id \"{shown}\": {why}\n");
    let c =
        |a: &str, s: &str, status: u16, body: String| (a.to_owned(), s.to_owned(), status, body);
    vec![
        c("-", "..", 400, name("..", "is '..'")),
        c("-", "%2e%2e", 400, name("..", "is '..'")),
        c("-", "%2E%2E", 400, name("..", "is '..'")),
        c("-", "..%2Fsecret", 400, name("../secret", "contains '/'")),
        c(
            "-",
            "%2e%2e%2fsecret",
            400,
            name("../secret", "contains '/'"),
        ),
        c(
            "-",
            "..%5Csecret",
            400,
            name(r"..\\secret", r"contains '\'"),
        ),
        c(
            "-",
            &secret.replace('/', "%2F"),
            400,
            name(secret, "is an absolute path"),
        ),
        c("-", "s1%00", 400, name(r"s1\0", "contains NUL")),
        // `/s/-/` matches no route (404, below); the API routes get an empty name.
        c("-", "", 400, name("", "is empty")),
        c("..", "s1", 400, agent("..", "is '..'")),
        c("%2e%2e", "s1", 400, agent("..", "is '..'")),
        c("a%2Fb", "s1", 400, agent("a/b", "contains '/'")),
        c("a%5Cb", "s1", 400, agent(r"a\\b", r"contains '\'")),
        c("a%00", "s1", 400, agent(r"a\0", "contains NUL")),
        c("", "s1", 400, agent("", "is empty")),
        c(
            "main",
            "s1",
            404,
            "no agent main in this store\n".to_owned(),
        ),
    ]
}

#[test]
fn every_route_refuses_traversal_in_its_segments() {
    let root = tempdir();
    let dir = root.path().join("sessions");
    std::fs::create_dir(&dir).unwrap();
    plant(&dir.join("s1.jsonl"), &small_session());
    // A session beside the served directory, which no request may read.
    let secret = root.path().join("secret.jsonl");
    plant(
        &secret,
        &crate::support::lines(&[HEADER.to_owned(), msg("x1", None, "user", "TOP-SECRET")]),
    );
    let d = dir.to_str().unwrap();
    let srv = Server::start(root.path(), &["--dir", d, "--allow-write"]);
    let csrf = srv.csrf("-", "s1");
    let before = std::fs::read(dir.join("s1.jsonl")).unwrap();
    let secret_noext = secret
        .to_str()
        .unwrap()
        .strip_suffix(".jsonl")
        .unwrap()
        .to_owned();
    let mut failures = Vec::new();
    for (agent, session, status, body) in cases(&secret_noext) {
        for (method, route) in [
            ("GET", "/s/{a}/{s}"),
            ("GET", "/api/s/{a}/{s}/rows"),
            ("GET", "/api/s/{a}/{s}/events"),
            ("POST", "/api/s/{a}/{s}/branch"),
            ("POST", "/api/s/{a}/{s}/branch-summary"),
        ] {
            let path = route.replace("{a}", &agent).replace("{s}", &session);
            let r = if method == "GET" {
                srv.get(&path)
            } else {
                srv.post(&path, "entry=a1&summary=x", Some(&csrf))
            };
            let text = r.text();
            let (status, body) = if session.is_empty() && route == "/s/{a}/{s}" {
                (404, "not found\n")
            } else {
                (status, body.as_str())
            };
            if r.status != status || text != body || text.contains("TOP-SECRET") {
                failures.push(format!("{method} {path}: {} {text:?}", r.status));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(std::fs::read(dir.join("s1.jsonl")).unwrap(), before);
}

#[test]
fn offsets_are_digits_at_a_line_start() {
    let dir = tempdir();
    plant(&dir.path().join("s1.jsonl"), &small_session());
    let d = dir.path().to_str().unwrap();
    let srv = Server::start(dir.path(), &["--dir", d]);
    for (q, status, body) in [
        ("since=-1", 400, "since: a byte offset (digits)\n"),
        ("since=..%2F", 400, "since: a byte offset (digits)\n"),
        ("since=1e3", 400, "since: a byte offset (digits)\n"),
        ("since=", 400, "since: a byte offset (digits)\n"),
        ("since=5", 400, "since=5 is not the start of a line\n"),
        (
            "since=999999",
            409,
            "the session is shorter than 999999 bytes now (rewritten?): reload the page\n",
        ),
    ] {
        let r = srv.get(&format!("/api/s/-/s1/rows?{q}"));
        assert_eq!((r.status, r.text().as_str()), (status, body), "{q}");
    }
}
