//! One deadline for a whole Redis operation. The client's socket timeouts apply to each read,
//! and it reads every reply of a pipeline (a `MULTI` block: five replies) even after one timed
//! out, so a server that stopped answering made one operation wait several command timeouts
//! (and connecting, with its `CLIENT SETINFO` handshake, two). [`Deadlined`] sends the
//! operation's bytes and reads its replies with the socket timeouts set to what is left of one
//! deadline, and gives up at the first failure, so a hung server fails the operation after one
//! [`super::COMMAND_TIMEOUT`] with an error saying it timed out ([`timed_out`]).

use std::io;
use std::time::{Duration, Instant};

use redis::{Connection, ConnectionLike, RedisError, RedisResult, Value};

/// The error of an operation the server did not answer before its deadline: an
/// [`io::ErrorKind::TimedOut`] I/O error (so [`RedisError::is_timeout`] holds) whose message
/// says so and names the timeout.
pub(crate) fn timed_out(timeout: Duration) -> RedisError {
    RedisError::from(io::Error::new(
        io::ErrorKind::TimedOut,
        format!(
            "timed out: no answer from the server within {} ms (the command timeout)",
            timeout.as_millis()
        ),
    ))
}

/// `e`, or [`timed_out`] when `e` is a socket timeout (the OS reports those as "Resource
/// temporarily unavailable").
pub(crate) fn explain(e: RedisError, timeout: Duration) -> RedisError {
    if e.is_timeout() {
        timed_out(timeout)
    } else {
        e
    }
}

/// A pooled connection and the socket timeout it has now (both read and write; `None`: none
/// set, as the client leaves a new connection).
pub(crate) struct Conn {
    con: Connection,
    armed: Option<Duration>,
    pipelined: bool,
}

impl Conn {
    /// A connection just opened (no socket timeout set yet).
    pub(crate) fn new(con: Connection) -> Self {
        Conn {
            con,
            armed: None,
            pipelined: false,
        }
    }

    /// Whether a pipeline (or `MULTI` block) was sent on this connection since
    /// [`Deadlined::new`]: after any error of such a request its replies may not all have
    /// been read, so the connection must not be reused.
    pub(crate) fn pipelined(&self) -> bool {
        self.pipelined
    }
}

/// Reads the `offset + count` replies of one pipeline with `read` (the first `offset` are a
/// transaction's `OK` and `QUEUED`s; RESP3 push data between replies is not a reply and is
/// skipped) and returns the last `count`. A server error among the first `offset` (the
/// transaction aborted) does not stop the reading: every reply is read, so none is left for
/// the next request on the connection, and the first such error is returned at the end. A
/// failed read (I/O, timeout) ends the reading at once: the connection is then unusable.
///
/// # Errors
/// The first server error among the first `offset` replies; the first failed read.
pub(crate) fn drain_replies(
    offset: usize,
    count: usize,
    mut read: impl FnMut() -> RedisResult<Value>,
) -> RedisResult<Vec<Value>> {
    let mut out = Vec::with_capacity(count.min(1024));
    let mut first_err: Option<RedisError> = None;
    let mut idx = 0;
    while idx < offset + count {
        match read()? {
            // Not a reply: it takes no place among them.
            Value::Push { .. } => continue,
            Value::ServerError(e) if idx < offset => {
                first_err.get_or_insert_with(|| e.into());
            }
            v if idx >= offset => out.push(v),
            _ => {}
        }
        idx += 1;
    }
    first_err.map_or(Ok(out), Err)
}

/// A connection whose every request must be answered before `deadline`.
pub(crate) struct Deadlined<'a> {
    conn: &'a mut Conn,
    deadline: Instant,
    timeout: Duration,
}

impl<'a> Deadlined<'a> {
    /// `conn` for an operation that must end by `deadline` (`timeout` is named in errors).
    pub(crate) fn new(conn: &'a mut Conn, deadline: Instant, timeout: Duration) -> Self {
        conn.pipelined = false;
        Deadlined {
            conn,
            deadline,
            timeout,
        }
    }

    /// Makes the socket timeouts what is left of the deadline, give or take 1/64 of the
    /// timeout: they are set only when they are further off than that (so an operation on a
    /// pooled connection, whose timeouts were set to about the whole timeout, makes no extra
    /// system call, and the replies of one pipeline are read without one each). A pipeline of
    /// `n` replies thus ends at most `n / 64` of the timeout after the deadline. A timeout
    /// error when nothing is left.
    fn arm(&mut self) -> RedisResult<()> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left < Duration::from_millis(1) {
            return Err(timed_out(self.timeout));
        }
        let slack = self.timeout / 64;
        let close = self
            .conn
            .armed
            .is_some_and(|a| a <= left + slack && a + slack >= left);
        if !close {
            // Unknown until both are set.
            self.conn.armed = None;
            self.conn.con.set_read_timeout(Some(left))?;
            self.conn.con.set_write_timeout(Some(left))?;
            self.conn.armed = Some(left);
        }
        Ok(())
    }

    fn send(&mut self, cmd: &[u8]) -> RedisResult<()> {
        self.arm()?;
        self.conn
            .con
            .send_packed_command(cmd)
            .map_err(|e| explain(e, self.timeout))
    }

    fn read(&mut self) -> RedisResult<Value> {
        self.arm()?;
        self.conn
            .con
            .recv_response()
            .map_err(|e| explain(e, self.timeout))
    }
}

impl ConnectionLike for Deadlined<'_> {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        self.send(cmd)?;
        self.read()
    }

    /// Reads all `offset + count` replies ([`drain_replies`]), each within what is left of
    /// the deadline; a failed read ends the request. A server error among the first `offset`
    /// replies aborts the transaction, as the client does, after every reply was read. The
    /// connection is marked [`Conn::pipelined`]: the caller drops it after any error.
    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        self.conn.pipelined = true;
        self.send(cmd)?;
        drain_replies(offset, count, || self.read())
    }

    fn get_db(&self) -> i64 {
        self.conn.con.get_db()
    }

    fn check_connection(&mut self) -> bool {
        redis::cmd("PING").query::<String>(self).is_ok()
    }

    fn is_open(&self) -> bool {
        self.conn.con.is_open()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::*;

    /// The reply the server sends for the RESP bytes `resp`.
    fn reply(resp: &str) -> Value {
        redis::parse_redis_value(resp.as_bytes()).expect("a valid reply")
    }

    /// The replies for each RESP text of `list`, in order.
    fn replies(list: &[&str]) -> VecDeque<Value> {
        list.iter().map(|r| reply(r)).collect()
    }

    #[test]
    fn an_aborted_transaction_leaves_no_reply_unread() {
        // MULTI; SET (refused at queue time); GET; EXEC — then the next request's reply.
        let mut wire = replies(&[
            "+OK\r\n",
            "-ERR wrong number of arguments for 'set' command\r\n",
            "+QUEUED\r\n",
            "-EXECABORT Transaction discarded because of previous errors.\r\n",
            "$5\r\nnext!\r\n",
        ]);
        let err = drain_replies(3, 1, || Ok(wire.pop_front().expect("a reply")))
            .expect_err("the transaction was aborted");
        assert_eq!(err.code(), Some("ERR"));
        assert_eq!(
            err.detail(),
            Some("wrong number of arguments for 'set' command")
        );
        // Every reply of the transaction was read: the next one is the next request's.
        assert_eq!(wire.len(), 1);
        assert_eq!(wire.pop_front(), Some(Value::BulkString(b"next!".to_vec())));
    }

    #[test]
    fn a_transaction_gives_the_exec_reply_and_skips_push_data() {
        let mut wire = replies(&[
            "+OK\r\n",
            "+QUEUED\r\n",
            ">2\r\n$7\r\nmessage\r\n$1\r\nx\r\n",
            "+QUEUED\r\n",
            "*2\r\n:1\r\n$1\r\na\r\n",
            ":9\r\n",
        ]);
        let out = drain_replies(3, 1, || Ok(wire.pop_front().expect("a reply"))).expect("replies");
        assert_eq!(
            out,
            vec![Value::Array(vec![
                Value::Int(1),
                Value::BulkString(b"a".to_vec())
            ])]
        );
        assert_eq!(wire.into_iter().collect::<Vec<_>>(), vec![Value::Int(9)]);
    }

    #[test]
    fn a_failed_read_ends_the_reading() {
        let mut reads = 0;
        let err = drain_replies(2, 1, || {
            reads += 1;
            if reads == 2 {
                Err(timed_out(Duration::from_millis(250)))
            } else {
                Ok(reply("+OK\r\n"))
            }
        })
        .expect_err("the read failed");
        assert!(err.is_timeout());
        assert_eq!(reads, 2);
    }
}
