//! `sessions serve` for the tests: the binary started on a free port (`--bind 127.0.0.1:0`,
//! the URL read from its stdout), and plain HTTP/1.1 over `std::net::TcpStream`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A running `sessions serve`, killed when dropped.
pub struct Server {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    /// The token of the start URL.
    pub token: String,
}

/// One HTTP response.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    /// Header names lowercase, in order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    /// The value of header `name` (lowercase), when present once or more (the first).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }
}

/// The headers every response of the server carries, with their values.
pub const SECURITY_HEADERS: [(&str, &str); 4] = [
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
    ("x-frame-options", "DENY"),
    ("cache-control", "no-store"),
];

/// Fails unless `r` carries [`SECURITY_HEADERS`] and a Content-Security-Policy that starts
/// with `default-src 'none'` and forbids framing.
pub fn assert_security_headers(r: &Resp, what: &str) {
    for (k, v) in SECURITY_HEADERS {
        assert_eq!(r.header(k), Some(v), "{what}: header {k}");
    }
    let csp = r.header("content-security-policy").unwrap_or("");
    assert!(
        csp.starts_with("default-src 'none'") && csp.ends_with("frame-ancestors 'none'"),
        "{what}: CSP {csp:?}"
    );
}

impl Server {
    /// Starts `sessions serve --bind 127.0.0.1:0 ARGS…` in `cwd` and waits for its URL.
    pub fn start(cwd: &Path, args: &[&str]) -> Server {
        let mut child = super::cmd()
            .current_dir(cwd)
            .arg("serve")
            .args(["--bind", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        if line.is_empty() {
            let mut err = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            let _ = child.wait();
            panic!("sessions serve printed no URL; stderr: {err}");
        }
        let url = line.trim_end();
        let rest = url.strip_prefix("http://").unwrap();
        let (addr, query) = rest.split_once("/?token=").unwrap();
        assert!(addr.starts_with("127.0.0.1:"), "{url}");
        assert_eq!(query.len(), 64, "{url}");
        assert!(query.bytes().all(|b| b.is_ascii_hexdigit()), "{url}");
        Server {
            child,
            addr: addr.to_owned(),
            token: query.to_owned(),
        }
    }

    pub fn port(&self) -> &str {
        self.addr.rsplit_once(':').unwrap().1
    }

    /// The `Cookie` header line of an authenticated request.
    pub fn cookie(&self) -> String {
        format!("Cookie: sessions_serve_{}={}\r\n", self.port(), self.token)
    }

    /// Sends `head` (the request line and headers, each ended by CRLF, without the final
    /// empty line) plus `Connection: close` and `body`, and reads the whole response.
    pub fn raw(&self, head: &str, body: &[u8]) -> Resp {
        let mut s = TcpStream::connect(&self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut req = head.as_bytes().to_vec();
        if !body.is_empty() {
            req.extend_from_slice(format!("Content-Length: {}\r\n", body.len()).as_bytes());
        }
        req.extend_from_slice(b"Connection: close\r\n\r\n");
        req.extend_from_slice(body);
        s.write_all(&req).unwrap();
        let mut all = Vec::new();
        s.read_to_end(&mut all).unwrap();
        parse(&all)
    }

    /// `GET path` with the right Host and the cookie.
    pub fn get(&self, path: &str) -> Resp {
        self.raw(
            &format!(
                "GET {path} HTTP/1.1\r\nHost: {}\r\n{}",
                self.addr,
                self.cookie()
            ),
            b"",
        )
    }

    /// `POST path` with a form body, the right Host, the cookie and, when given, the CSRF
    /// header.
    pub fn post(&self, path: &str, form: &str, csrf: Option<&str>) -> Resp {
        let csrf = csrf.map_or(String::new(), |c| format!("X-CSRF-Token: {c}\r\n"));
        self.raw(
            &format!(
                "POST {path} HTTP/1.1\r\nHost: {}\r\n{}{csrf}Content-Type: application/x-www-form-urlencoded\r\n",
                self.addr,
                self.cookie()
            ),
            form.as_bytes(),
        )
    }

    /// The CSRF token the page of `agent`/`session` embeds.
    pub fn csrf(&self, agent: &str, session: &str) -> String {
        let page = self.get(&format!("/s/{agent}/{session}")).text();
        let at = page.find("data-csrf=\"").unwrap() + "data-csrf=\"".len();
        page[at..at + 64].to_owned()
    }

    /// Opens `GET path` as an event stream and returns the `data:` of the first event named
    /// `event` that arrives before `timeout`, after calling `after_open` once the response
    /// headers arrived; with the time from `after_open` to the event.
    pub fn first_event(
        &self,
        path: &str,
        event: &str,
        timeout: Duration,
        after_open: impl FnOnce(),
    ) -> Option<(String, Duration)> {
        let mut s = TcpStream::connect(&self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: {}\r\n{}Accept: text/event-stream\r\n\r\n",
            self.addr,
            self.cookie()
        )
        .unwrap();
        let mut seen = Vec::new();
        let mut buf = [0u8; 8192];
        let deadline = Instant::now() + Duration::from_secs(10);
        while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
            assert!(Instant::now() < deadline, "no response headers");
            if let Ok(n) = s.read(&mut buf) {
                seen.extend_from_slice(&buf[..n]);
            }
        }
        let head = String::from_utf8_lossy(&seen).into_owned();
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        let start = Instant::now();
        after_open();
        let mut text = String::new();
        while start.elapsed() < timeout {
            if let Ok(n) = s.read(&mut buf) {
                if n == 0 {
                    break;
                }
                text.push_str(&String::from_utf8_lossy(&buf[..n]));
            }
            let want = format!("event: {event}\n");
            if let Some(at) = text.find(&want)
                && let Some(line) = text[at + want.len()..].lines().next()
                && let Some(data) = line.strip_prefix("data: ")
                && text[at..].contains("\n\n")
            {
                return Some((data.to_owned(), start.elapsed()));
            }
        }
        None
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A response read to the end (`Connection: close`); a chunked body is de-chunked.
fn parse(all: &[u8]) -> Resp {
    let end = all
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no header end: {}", String::from_utf8_lossy(all)));
    let head = String::from_utf8_lossy(&all[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let status: u16 = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut body = all[end + 4..].to_vec();
    if headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v == "chunked")
    {
        let mut out = Vec::new();
        let mut rest = &body[..];
        while let Some(nl) = rest.windows(2).position(|w| w == b"\r\n") {
            let n = usize::from_str_radix(std::str::from_utf8(&rest[..nl]).unwrap(), 16).unwrap();
            if n == 0 {
                break;
            }
            out.extend_from_slice(&rest[nl + 2..nl + 2 + n]);
            rest = &rest[nl + 2 + n + 2..];
        }
        body = out;
    }
    Resp {
        status,
        headers,
        body,
    }
}
