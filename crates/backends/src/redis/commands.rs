//! The commands workload on Redis: every command the server accepts, sent
//! as a RESP array of the template's words, one reply read back. A nil
//! reply (a `GET` of a missing key: RESP2's null bulk string or null
//! array, RESP3's null) is NOT_FOUND, a miss; an error reply is ERROR with
//! the server's words (`WRONGTYPE ...`), which the run's failures count
//! by kind; anything else is OK.

use sojourn_core::backend::{BackendError, Status};
use sojourn_core::workload::capability::Runs;
use sojourn_core::workload::commands::{Args, CommandConnection, Commands, CommandsSetup};

use super::connection::{server_err, RedisConnection};
use super::resp;
use super::RedisBackend;
use crate::pipelined::OpResult;

/// What a reply says of the command's outcome.
fn outcome(reply: &[u8]) -> OpResult<Status> {
    match reply.first() {
        Some(b'-') => Err(server_err(line(&reply[1..]))),
        // RESP3's blob error: `!<len>\r\n<words>\r\n`.
        Some(b'!') => {
            let body = reply.splitn(2, |&b| b == b'\n').nth(1).unwrap_or_default();
            Err(server_err(line(body)))
        }
        _ if matches!(reply, b"$-1\r\n" | b"*-1\r\n" | b"_\r\n") => Ok(Status::NotFound),
        _ => Ok(Status::Ok),
    }
}

fn line(s: &[u8]) -> &[u8] {
    let end = s.windows(2).position(|w| w == b"\r\n").unwrap_or(s.len());
    &s[..end]
}

impl RedisConnection {
    async fn command_now(&mut self, args: &Args) -> OpResult<Status> {
        let req = self.t.request();
        resp::command(req, args.len());
        for word in args.iter() {
            resp::arg(req, word);
        }
        outcome(self.t.call(1).await?)
    }
}

impl CommandConnection for RedisConnection {
    async fn command(&mut self, args: &Args) -> Status {
        let call = async |c: &mut Self| c.command_now(args).await;
        sojourn_core::backend::guard::call(self, call).await
    }
}

/// Nothing to set up: the templates make their own keys. `--drop`
/// empties the database number, as for YCSB's layout.
impl Runs<Commands> for RedisBackend {
    async fn prepare_tables(&self, _: &CommandsSetup, drop: bool) -> Result<(), BackendError> {
        self.flush_or_ping(drop).await
    }

    async fn tables_empty(&self, _: &CommandsSetup) -> Result<Option<bool>, BackendError> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_as_outcomes() {
        assert_eq!(outcome(b"+OK\r\n").unwrap(), Status::Ok);
        assert_eq!(outcome(b"$3\r\nabc\r\n").unwrap(), Status::Ok);
        assert_eq!(outcome(b"*2\r\n$-1\r\n$1\r\na\r\n").unwrap(), Status::Ok);
        assert_eq!(outcome(b":0\r\n").unwrap(), Status::Ok);
        for miss in [&b"$-1\r\n"[..], b"*-1\r\n", b"_\r\n"] {
            assert_eq!(outcome(miss).unwrap(), Status::NotFound);
        }
        let e = outcome(b"-WRONGTYPE Operation against a key\r\n").unwrap_err();
        assert_eq!(e.message, "WRONGTYPE Operation against a key");
        let e = outcome(b"!21\r\nSYNTAX invalid syntax\r\n").unwrap_err();
        assert_eq!(e.message, "SYNTAX invalid syntax");
    }
}
