//! The commands workload on memcached: the text protocol's own commands,
//! a template's words read as memcached's (`get KEY...`, `set KEY DATA
//! [EXPTIME [FLAGS]]`, `delete KEY`, `incr KEY [N]`). A `get` that finds
//! none of its keys, a `delete` or `incr` of a missing key, and a store
//! whose condition fails (`add` of a key there, `replace` of one not
//! there: NOT_STORED) are NOT_FOUND; an error line is ERROR with
//! memcached's words.

use sojourn_core::backend::{BackendError, Status};
use sojourn_core::workload::capability::Runs;
use sojourn_core::workload::commands::{Args, CommandConnection, Commands, CommandsSetup};

use super::connection::MemcachedConnection;
use super::protocol::{first_line, reply_err};
use super::MemcachedBackend;
use crate::pipelined::{OpError, OpResult};

/// The commands memcached's text protocol runs here, by how they are sent.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Verb {
    Get,
    Store,
    Delete,
    Counter,
    Touch,
}

const VERBS: &[(&str, Verb)] = &[
    ("get", Verb::Get),
    ("gets", Verb::Get),
    ("set", Verb::Store),
    ("add", Verb::Store),
    ("replace", Verb::Store),
    ("append", Verb::Store),
    ("prepend", Verb::Store),
    ("delete", Verb::Delete),
    ("incr", Verb::Counter),
    ("decr", Verb::Counter),
    ("touch", Verb::Touch),
];

fn verb(word: &[u8]) -> Option<Verb> {
    VERBS
        .iter()
        .find(|(name, _)| name.as_bytes().eq_ignore_ascii_case(word))
        .map(|(_, v)| *v)
}

fn bad(args: &Args, usage: &str) -> OpError {
    OpError {
        status: Status::BadRequest,
        message: format!("memcached's {usage}, not `{args}`"),
    }
}

/// The request for `args`, into `out`.
fn encode(out: &mut Vec<u8>, args: &Args) -> OpResult<Verb> {
    let name = args.get(0).unwrap_or_default();
    let v = verb(name).ok_or_else(|| bad(args, "commands are get, set, delete, incr and kin"))?;
    let lower = |out: &mut Vec<u8>| out.extend(name.iter().map(u8::to_ascii_lowercase));
    let word = |i: usize| args.get(i).unwrap_or_default();
    match v {
        Verb::Get | Verb::Delete | Verb::Counter | Verb::Touch => {
            let (min, max, usage) = match v {
                Verb::Get => (2, usize::MAX, "get takes KEY..."),
                Verb::Delete => (2, 2, "delete takes KEY"),
                Verb::Counter => (2, 3, "incr/decr take KEY [N]"),
                _ => (3, 3, "touch takes KEY EXPTIME"),
            };
            if args.len() < min || args.len() > max {
                return Err(bad(args, usage));
            }
            lower(out);
            for w in args.iter().skip(1) {
                out.push(b' ');
                out.extend_from_slice(w);
            }
            if v == Verb::Counter && args.len() == 2 {
                out.extend_from_slice(b" 1");
            }
        }
        Verb::Store => {
            if !(3..=5).contains(&args.len()) {
                return Err(bad(args, "set/add/replace take KEY DATA [EXPTIME [FLAGS]]"));
            }
            let data = word(2);
            lower(out);
            out.push(b' ');
            out.extend_from_slice(word(1));
            out.push(b' ');
            out.extend_from_slice(args.get(4).unwrap_or(b"0"));
            out.push(b' ');
            out.extend_from_slice(args.get(3).unwrap_or(b"0"));
            out.push(b' ');
            out.extend_from_slice(itoa::Buffer::new().format(data.len()).as_bytes());
            out.extend_from_slice(b"\r\n");
            out.extend_from_slice(data);
        }
    }
    out.extend_from_slice(b"\r\n");
    Ok(v)
}

/// What the reply to a `v` says of its outcome.
fn outcome(v: Verb, reply: &[u8]) -> OpResult<Status> {
    let line = first_line(reply);
    let ok = match v {
        Verb::Get if line == b"END" => return Ok(Status::NotFound),
        Verb::Get => line.starts_with(b"VALUE "),
        Verb::Store if line == b"NOT_STORED" => return Ok(Status::NotFound),
        Verb::Store => line == b"STORED",
        Verb::Delete => line == b"DELETED",
        Verb::Counter => !line.is_empty() && line.iter().all(u8::is_ascii_digit),
        Verb::Touch => line == b"TOUCHED",
    };
    if ok {
        Ok(Status::Ok)
    } else if line == b"NOT_FOUND" {
        Ok(Status::NotFound)
    } else {
        Err(reply_err(reply))
    }
}

impl MemcachedConnection {
    async fn command_now(&mut self, args: &Args) -> OpResult<Status> {
        let v = encode(self.t.request(), args)?;
        outcome(v, self.t.call(1).await?)
    }
}

impl CommandConnection for MemcachedConnection {
    async fn command(&mut self, args: &Args) -> Status {
        let call = async |c: &mut Self| c.command_now(args).await;
        sojourn_core::backend::guard::call(self, call).await
    }
}

impl Runs<Commands> for MemcachedBackend {
    /// A command memcached's text protocol does not have (or that this
    /// backend does not send) is refused here, before the run.
    async fn prepare_tables(&self, setup: &CommandsSetup, drop: bool) -> Result<(), BackendError> {
        if let Some(other) = setup.commands.iter().find(|c| verb(c.as_bytes()).is_none()) {
            let names: Vec<&str> = VERBS.iter().map(|(n, _)| *n).collect();
            return Err(BackendError::Config(format!(
                "memcached's text protocol has no command {other:?} that sojourn sends; its \
                 templates may use {}",
                names.join(", ")
            )));
        }
        self.flush_or_ping(drop).await
    }

    async fn tables_empty(&self, _: &CommandsSetup) -> Result<Option<bool>, BackendError> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Args {
        let mut a = Args::default();
        for w in words {
            a.push(w.as_bytes());
        }
        a
    }

    fn sent(words: &[&str]) -> Result<String, String> {
        let mut out = Vec::new();
        encode(&mut out, &args(words))
            .map(|_| String::from_utf8(out).unwrap())
            .map_err(|e| e.message)
    }

    #[test]
    fn templates_in_memcached_s_words() {
        assert_eq!(sent(&["GET", "k1", "k2"]).unwrap(), "get k1 k2\r\n");
        assert_eq!(
            sent(&["set", "k", "abc"]).unwrap(),
            "set k 0 0 3\r\nabc\r\n"
        );
        assert_eq!(
            sent(&["add", "k", "ab", "60", "7"]).unwrap(),
            "add k 7 60 2\r\nab\r\n"
        );
        assert_eq!(sent(&["incr", "n"]).unwrap(), "incr n 1\r\n");
        assert_eq!(sent(&["delete", "n"]).unwrap(), "delete n\r\n");
        assert!(sent(&["HGET", "k", "f"])
            .unwrap_err()
            .contains("commands are"));
        assert!(sent(&["set", "k"]).unwrap_err().contains("KEY DATA"));
        assert!(sent(&["delete", "a", "b"]).is_err());
    }

    #[test]
    fn replies_as_outcomes() {
        let get = |r: &[u8]| outcome(Verb::Get, r).unwrap();
        assert_eq!(get(b"END\r\n"), Status::NotFound);
        assert_eq!(get(b"VALUE k 0 1\r\na\r\nEND\r\n"), Status::Ok);
        assert_eq!(outcome(Verb::Store, b"STORED\r\n").unwrap(), Status::Ok);
        assert_eq!(
            outcome(Verb::Store, b"NOT_STORED\r\n").unwrap(),
            Status::NotFound
        );
        assert_eq!(
            outcome(Verb::Counter, b"NOT_FOUND\r\n").unwrap(),
            Status::NotFound
        );
        assert_eq!(outcome(Verb::Counter, b"42\r\n").unwrap(), Status::Ok);
        let e = outcome(Verb::Store, b"SERVER_ERROR out of memory\r\n").unwrap_err();
        assert_eq!(e.message, "SERVER_ERROR out of memory");
    }
}
