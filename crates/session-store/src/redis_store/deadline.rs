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
}

impl Conn {
    /// A connection just opened (no socket timeout set yet).
    pub(crate) fn new(con: Connection) -> Self {
        Conn { con, armed: None }
    }
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

    /// Reads the `offset + count` replies (the first `offset` are a transaction's `OK` and
    /// `QUEUED`s), each within what is left of the deadline; the first failure ends the
    /// request (the caller drops the connection). A server error among the first `offset`
    /// replies aborts the transaction, as the client does.
    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        self.send(cmd)?;
        let mut out = Vec::with_capacity(count);
        let mut want = offset + count;
        let mut idx = 0;
        while idx < want {
            match self.read()? {
                Value::ServerError(e) if idx < offset => return Err(e.into()),
                // RESP3 push data between replies is not a reply.
                Value::Push { .. } => want += 1,
                v if idx >= offset => out.push(v),
                _ => {}
            }
            idx += 1;
        }
        Ok(out)
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
