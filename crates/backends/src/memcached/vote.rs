//! Noria's vote workload on memcached alone, as Noria's memcached-only
//! deployment runs it: no database behind the cache, each article two
//! items, `article:{id}` holding its title and `votes:{id}` its vote
//! count in decimal. A vote is one atomic `incr` of the count (memcached
//! keeps no Vote rows, so `vote.variant` does not apply); a read is one
//! `get` of both items, which memcached answers in one reply.
//!
//! `--drop` empties the server (`flush_all`), as it does for YCSB's table;
//! whether anything is loaded is asked of article 1's count.
//!
//! The hits and misses memcached counts (`get_hits`, `get_misses` in
//! `stats`) are the backend's server counters, so a run shows how its
//! reads fared (each read is two gets).

use sojourn_core::backend::{BackendError, Status};
use sojourn_core::workload::capability::Runs;
use sojourn_core::workload::vote::{ArticleRow, Vote, VoteVariant};

use super::connection::MemcachedConnection;
use super::protocol::{first_line, parse_get, reply_err, value_length};
use super::MemcachedBackend;
use crate::pipelined::{OpError, OpResult};

/// `article:{id}` or `votes:{id}` appended to `out`.
fn key(out: &mut Vec<u8>, item: &[u8], id: u64) {
    out.extend_from_slice(item);
    out.push(b':');
    out.extend_from_slice(itoa::Buffer::new().format(id).as_bytes());
}

/// An article's title and count as a read finds them; `None` for an item
/// the server did not return.
type Found<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);

/// The title and the count in the `VALUE` blocks of a `get` of one
/// article's two items.
fn two_values(reply: &[u8]) -> Result<Found<'_>, String> {
    let mut found = (None, None);
    let mut rest = reply;
    loop {
        let eol = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("reply without END")?;
        let line = &rest[..eol];
        if line == b"END" {
            return Ok(found);
        }
        let header = line
            .strip_prefix(b"VALUE ")
            .ok_or_else(|| String::from_utf8_lossy(line).into_owned())?;
        let name = header.split(|&b| b == b' ').next().unwrap_or_default();
        let bytes = value_length(header)?;
        let start = eol + 2;
        let data = rest.get(start..start + bytes).ok_or("value cut short")?;
        if name.starts_with(b"article:") {
            found.0 = Some(data);
        } else if name.starts_with(b"votes:") {
            found.1 = Some(data);
        }
        rest = rest.get(start + bytes + 2..).ok_or("value cut short")?;
    }
}

fn count(data: &[u8]) -> OpResult<u64> {
    std::str::from_utf8(data)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| {
            OpError::error(format!(
                "a vote count is not a number: {:?}",
                String::from_utf8_lossy(data)
            ))
        })
}

impl MemcachedConnection {
    async fn insert_article_now(&mut self, id: u64, title: &str) -> OpResult<Status> {
        let req = self.t.request();
        for (item, value) in [(&b"article"[..], title.as_bytes()), (b"votes", b"0")] {
            req.extend_from_slice(b"set ");
            key(req, item, id);
            req.extend_from_slice(b" 0 0 ");
            req.extend_from_slice(itoa::Buffer::new().format(value.len()).as_bytes());
            req.extend_from_slice(b"\r\n");
            req.extend_from_slice(value);
            req.extend_from_slice(b"\r\n");
        }
        let reply = self.t.call(2).await?;
        if reply != b"STORED\r\nSTORED\r\n" {
            return Err(reply_err(reply));
        }
        Ok(Status::Ok)
    }

    async fn vote_now(&mut self, article: u64) -> OpResult<Status> {
        let req = self.t.request();
        req.extend_from_slice(b"incr ");
        key(req, b"votes", article);
        req.extend_from_slice(b" 1\r\n");
        let reply = self.t.call(1).await?;
        match first_line(reply) {
            b"NOT_FOUND" => Ok(Status::NotFound),
            line if line.iter().all(u8::is_ascii_digit) && !line.is_empty() => Ok(Status::Ok),
            _ => Err(reply_err(reply)),
        }
    }

    async fn article_now(&mut self, id: u64, out: &mut ArticleRow) -> OpResult<Status> {
        let req = self.t.request();
        req.extend_from_slice(b"get ");
        key(req, b"article", id);
        req.push(b' ');
        key(req, b"votes", id);
        req.extend_from_slice(b"\r\n");
        let reply = self.t.call(1).await?;
        let (title, votes) = two_values(reply).map_err(OpError::error)?;
        let (Some(title), Some(votes)) = (title, votes) else {
            return Ok(Status::NotFound);
        };
        out.votes = count(votes)?;
        out.title.clear();
        out.title.push_str(&String::from_utf8_lossy(title));
        out.id = id;
        Ok(Status::Ok)
    }
}

/// The hybrid deployment's cache entries (see [`crate::vote_cache`]):
/// keys as they are (the cache's keys are short and printable).
impl MemcachedConnection {
    pub(crate) async fn entry_get(&mut self, key: &[u8]) -> OpResult<Option<&[u8]>> {
        let req = self.t.request();
        req.extend_from_slice(b"get ");
        req.extend_from_slice(key);
        req.extend_from_slice(b"\r\n");
        let reply = self.t.call(1).await?;
        Ok(parse_get(reply).map_err(OpError::error)?.map(|v| v.data))
    }

    pub(crate) async fn entry_set(&mut self, key: &[u8], value: &[u8]) -> OpResult<()> {
        let req = self.t.request();
        req.extend_from_slice(b"set ");
        req.extend_from_slice(key);
        req.extend_from_slice(b" 0 0 ");
        req.extend_from_slice(itoa::Buffer::new().format(value.len()).as_bytes());
        req.extend_from_slice(b"\r\n");
        req.extend_from_slice(value);
        req.extend_from_slice(b"\r\n");
        let reply = self.t.call(1).await?;
        match first_line(reply) {
            b"STORED" => Ok(()),
            _ => Err(reply_err(reply)),
        }
    }

    pub(crate) async fn entry_delete(&mut self, key: &[u8]) -> OpResult<()> {
        let req = self.t.request();
        req.extend_from_slice(b"delete ");
        req.extend_from_slice(key);
        req.extend_from_slice(b"\r\n");
        let reply = self.t.call(1).await?;
        match first_line(reply) {
            b"DELETED" | b"NOT_FOUND" => Ok(()),
            _ => Err(reply_err(reply)),
        }
    }
}

impl Runs<Vote> for MemcachedBackend {
    async fn prepare_tables(&self, _variant: &VoteVariant, drop: bool) -> Result<(), BackendError> {
        self.flush_or_ping(drop).await
    }

    async fn tables_empty(&self, _variant: &VoteVariant) -> Result<Option<bool>, BackendError> {
        let reply = self.setup_call(b"get votes:1\r\n").await?;
        match parse_get(&reply) {
            Ok(found) => Ok(Some(found.is_none())),
            Err(_) => Err(self.setup_error(&reply)),
        }
    }
}

crate::pipelined::vote_on_a_cache!(MemcachedConnection);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_values_of_a_get_by_key_in_any_order() {
        let reply = b"VALUE votes:7 0 2\r\n12\r\nVALUE article:7 0 4\r\nT #7\r\nEND\r\n";
        let (t, v) = two_values(reply).unwrap();
        assert_eq!((t, v), (Some(&b"T #7"[..]), Some(&b"12"[..])));
        let (t, v) = two_values(b"VALUE article:7 0 0\r\n\r\nEND\r\n").unwrap();
        assert_eq!((t, v), (Some(&b""[..]), None));
        assert!(two_values(b"SERVER_ERROR out of memory\r\n").is_err());
        assert!(two_values(b"VALUE votes:7 0 9\r\n12\r\nEND\r\n").is_err());
        assert_eq!(count(b"41").unwrap(), 41);
        assert!(count(b"x").is_err());
    }
}
