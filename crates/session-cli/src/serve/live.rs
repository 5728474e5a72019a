//! The rows a session gained since a byte offset: `GET …/rows?since=OFFSET` (JSON) and
//! `GET …/events?since=OFFSET` (server-sent events: the file's size is polled every
//! [`POLL`], and each time it grew, one `rows` event carries the new complete lines; a file
//! that got shorter than the offset, rewritten or replaced, ends the stream with one `reset`
//! event). Only complete lines (ended by `\n`) are sent: a line another process is still
//! writing waits for the next poll. Files are read from the offset on (one `pread`), never
//! whole; a store behind `--backend` is read whole when its size changed.

use std::collections::HashMap;
use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream::{self, Stream};
use session_format::json::{JsObject, JsValue, to_json_string};

use super::{ApiError, App, blocking, json, session_path};

/// How often the events stream looks at the file's size.
const POLL: Duration = Duration::from_millis(200);

/// The most bytes one answer carries (a larger gain comes in several events or calls).
const MAX_CHUNK: u64 = 8 << 20;

/// The lines after an offset.
#[derive(Debug, PartialEq)]
struct Chunk {
    /// The offset read from.
    offset: u64,
    /// The offset after the last complete line sent (where the next read starts).
    next: u64,
    /// The session's size when read.
    size: u64,
    /// The complete lines, without their line feed (blank lines left out), as text (invalid
    /// UTF-8 replaced).
    rows: Vec<String>,
}

impl Chunk {
    fn to_json(&self) -> String {
        let mut o = JsObject::new();
        o.insert("offset", JsValue::Number(self.offset as f64));
        o.insert("next", JsValue::Number(self.next as f64));
        o.insert("size", JsValue::Number(self.size as f64));
        o.insert(
            "rows",
            JsValue::from(
                self.rows
                    .iter()
                    .map(|r| JsValue::from(r.as_str()))
                    .collect::<Vec<_>>(),
            ),
        );
        to_json_string(&JsValue::Object(o))
    }
}

/// `bytes` (read from `offset`) cut after its last line feed.
fn chunk_of(offset: u64, size: u64, bytes: &[u8]) -> Chunk {
    let complete = memchr::memrchr(b'\n', bytes).map_or(0, |i| i + 1);
    let rows = bytes[..complete]
        .split(|b| *b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .map(|l| String::from_utf8_lossy(l).into_owned())
        .collect();
    Chunk {
        offset,
        next: offset + complete as u64,
        size,
        rows,
    }
}

/// Where the rows are read: a regular file, or a session of the `--backend` store.
#[derive(Clone, Debug)]
enum Source {
    File(PathBuf),
    Store(PathBuf),
}

/// Why the rows after an offset cannot be given.
#[derive(Debug, PartialEq)]
enum Gap {
    /// The session is shorter than the offset (rewritten, truncated or replaced).
    Shrunk,
    /// The offset is not at the start of a line.
    NotALineStart,
}

impl Source {
    fn of(app: &App, agent: &str, session: &str) -> Result<Source, ApiError> {
        let ctx = app.ctx();
        let path = session_path(app, &ctx, agent, session)?;
        Ok(if ctx.store().is_some() {
            Source::Store(path)
        } else {
            crate::fsx::require_regular(&path).map_err(|e| ApiError::internal(&e))?;
            Source::File(path)
        })
    }

    /// The session's size now (`None`: gone or unreadable).
    fn size(&self, app: &App) -> Option<u64> {
        match self {
            Source::File(p) => std::fs::metadata(p)
                .ok()
                .filter(|m| m.is_file())
                .map(|m| m.len()),
            Source::Store(p) => app.ctx().store()?.stat(p).map(|(size, _)| size),
        }
    }

    /// The complete lines after `offset` (up to [`MAX_CHUNK`] bytes).
    fn read_since(&self, app: &App, offset: u64) -> anyhow::Result<Result<Chunk, Gap>> {
        let bytes = match self {
            Source::File(p) => {
                use std::os::unix::fs::FileExt as _;
                crate::fsx::require_regular(p)?;
                let f = std::fs::File::open(p)?;
                let size = f.metadata()?.len();
                if size < offset {
                    return Ok(Err(Gap::Shrunk));
                }
                if offset > 0 {
                    let mut prev = [0u8; 1];
                    f.read_exact_at(&mut prev, offset - 1)?;
                    if prev[0] != b'\n' {
                        return Ok(Err(Gap::NotALineStart));
                    }
                }
                let len = usize::try_from((size - offset).min(MAX_CHUNK))?;
                let mut buf = vec![0u8; len];
                f.read_exact_at(&mut buf, offset)?;
                return Ok(Ok(chunk_of(offset, size, &buf)));
            }
            Source::Store(p) => app.ctx().backend.read_session(p)?,
        };
        let size = bytes.len() as u64;
        let Ok(at) = usize::try_from(offset) else {
            return Ok(Err(Gap::Shrunk));
        };
        if at > bytes.len() {
            return Ok(Err(Gap::Shrunk));
        }
        if at > 0 && bytes[at - 1] != b'\n' {
            return Ok(Err(Gap::NotALineStart));
        }
        let end = bytes.len().min(at + usize::try_from(MAX_CHUNK)?);
        Ok(Ok(chunk_of(offset, size, &bytes[at..end])))
    }
}

fn since(q: &HashMap<String, String>) -> Result<u64, ApiError> {
    match q.get("since") {
        None => Ok(0),
        Some(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => s
            .parse()
            .map_err(|_| ApiError::bad_request("since: a byte offset (digits)")),
        Some(_) => Err(ApiError::bad_request("since: a byte offset (digits)")),
    }
}

fn gap_error(g: &Gap, offset: u64) -> ApiError {
    match g {
        Gap::Shrunk => ApiError::conflict(format!(
            "the session is shorter than {offset} bytes now (rewritten?): reload the page"
        )),
        Gap::NotALineStart => {
            ApiError::bad_request(format!("since={offset} is not the start of a line"))
        }
    }
}

/// `GET /api/s/AGENT/SESSION/rows?since=OFFSET`: `{"offset", "next", "size", "rows": [LINE]}`.
pub(super) async fn rows(
    State(app): State<Arc<App>>,
    Path((agent, session)): Path<(String, String)>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    let offset = since(&q)?;
    blocking(move || {
        let src = Source::of(&app, &agent, &session)?;
        match src
            .read_since(&app, offset)
            .map_err(|e| ApiError::internal(&e))?
        {
            Ok(c) => Ok(json(c.to_json())),
            Err(g) => Err(gap_error(&g, offset)),
        }
    })
    .await
}

/// What the events stream does next.
enum Step {
    Poll {
        src: Source,
        offset: u64,
        first: bool,
    },
    Done,
}

/// `GET /api/s/AGENT/SESSION/events?since=OFFSET`: `event: rows` with the JSON of
/// [`rows`] each time the session grew by complete lines; `event: reset` (data: the reason)
/// once, at the end, when the offset no longer fits the session.
pub(super) async fn events(
    State(app): State<Arc<App>>,
    Path((agent, session)): Path<(String, String)>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    let offset = since(&q)?;
    let src = {
        let app = Arc::clone(&app);
        blocking(move || Source::of(&app, &agent, &session)).await?
    };
    let stream = event_stream(app, src, offset);
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response())
}

fn event_stream(
    app: Arc<App>,
    src: Source,
    offset: u64,
) -> impl Stream<Item = Result<Event, Infallible>> {
    stream::unfold(
        Step::Poll {
            src,
            offset,
            first: true,
        },
        move |step| {
            let app = Arc::clone(&app);
            async move {
                let Step::Poll {
                    src,
                    mut offset,
                    mut first,
                } = step
                else {
                    return None;
                };
                loop {
                    if !first {
                        tokio::time::sleep(POLL).await;
                    }
                    first = false;
                    let (app2, src2) = (Arc::clone(&app), src.clone());
                    let read = tokio::task::spawn_blocking(move || match src2.size(&app2) {
                        Some(size) if size == offset => Ok(None),
                        Some(_) => src2.read_since(&app2, offset).map(Some),
                        None => Ok(Some(Err(Gap::Shrunk))),
                    })
                    .await;
                    match read {
                        Ok(Ok(None)) => {}
                        Ok(Ok(Some(Ok(c)))) => {
                            if c.next == offset {
                                continue;
                            }
                            offset = c.next;
                            let ev = Event::default().event("rows").data(c.to_json());
                            return Some((
                                Ok(ev),
                                Step::Poll {
                                    src,
                                    offset,
                                    first: false,
                                },
                            ));
                        }
                        Ok(Ok(Some(Err(g)))) => {
                            let why = match g {
                                Gap::Shrunk => "the session is shorter than before (rewritten)",
                                Gap::NotALineStart => "the offset is not the start of a line",
                            };
                            return Some((
                                Ok(Event::default().event("reset").data(why)),
                                Step::Done,
                            ));
                        }
                        // A read that failed (the file is being replaced?) is tried again.
                        Ok(Err(_)) => {}
                        Err(_) => return None,
                    }
                }
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_complete_lines_are_sent() {
        let c = chunk_of(10, 40, b"{\"a\":1}\n\n{\"b\":2}\n{\"c\"");
        assert_eq!(
            c,
            Chunk {
                offset: 10,
                next: 27,
                size: 40,
                rows: vec!["{\"a\":1}".to_owned(), "{\"b\":2}".to_owned()],
            }
        );
        assert_eq!(
            c.to_json(),
            r#"{"offset":10,"next":27,"size":40,"rows":["{\"a\":1}","{\"b\":2}"]}"#
        );
        let none = chunk_of(5, 9, b"{\"c\"");
        assert_eq!(none.next, 5);
        assert!(none.rows.is_empty());
    }
}
