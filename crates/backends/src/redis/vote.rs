//! The vote workload on Redis, and the cache entries of its hybrid
//! deployment (see [`crate::vote_cache`]).

use sojourn_core::backend::{BackendError, Status};
use sojourn_core::workload::capability::Runs;
use sojourn_core::workload::vote::{ArticleRow, Vote, VoteVariant};

use super::connection::{int_reply, proto_err, server_err, RedisConnection};
use super::resp::{self, Item, Reader};
use super::RedisBackend;
use crate::pipelined::{self, OpResult};

/// The vote workload's article `id`: a hash with fields `title` and
/// `votes`, the latter a counter each vote increments (HINCRBY), as Noria's
/// memcached setup kept one counter per article. There is no Vote table:
/// `vote.variant` does not apply to Redis.
fn article_key(id: u64, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(b"article:");
    out.extend_from_slice(itoa::Buffer::new().format(id).as_bytes());
}

impl RedisConnection {
    async fn insert_article_now(&mut self, id: u64, title: &str) -> OpResult<Status> {
        article_key(id, &mut self.article);
        let req = self.t.request();
        resp::encode(req, &[b"HSET", &self.article, b"title", title.as_bytes()]);
        let reply = self.t.call(1).await?;
        int_reply(&mut Reader::new(reply))?;
        Ok(Status::Ok)
    }

    async fn vote_now(&mut self, article: u64) -> OpResult<Status> {
        article_key(article, &mut self.article);
        let req = self.t.request();
        resp::encode(req, &[b"HINCRBY", &self.article, b"votes", b"1"]);
        let reply = self.t.call(1).await?;
        int_reply(&mut Reader::new(reply))?;
        Ok(Status::Ok)
    }

    async fn article_now(&mut self, id: u64, out: &mut ArticleRow) -> OpResult<Status> {
        article_key(id, &mut self.article);
        let req = self.t.request();
        resp::encode(req, &[b"HMGET", &self.article, b"title", b"votes"]);
        let reply = self.t.call(1).await?;
        let mut r = Reader::new(reply);
        match r.next().map_err(proto_err)? {
            Item::Array(Some(2)) => {}
            Item::Error(e) => return Err(server_err(e)),
            other => return Err(proto_err(format!("expected 2 values, got {other:?}"))),
        }
        let title = match r.next().map_err(proto_err)? {
            Item::Bulk(Some(t)) => t,
            Item::Bulk(None) => return Ok(Status::NotFound),
            other => return Err(proto_err(format!("expected a title, got {other:?}"))),
        };
        out.title.clear();
        out.title.push_str(&String::from_utf8_lossy(title));
        out.votes = match r.next().map_err(proto_err)? {
            Item::Bulk(None) => 0,
            Item::Bulk(Some(v)) => std::str::from_utf8(v)
                .ok()
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| proto_err(format!("votes is not a count: {v:?}")))?,
            other => return Err(proto_err(format!("expected a count, got {other:?}"))),
        };
        out.id = id;
        Ok(Status::Ok)
    }
}

/// The hybrid deployment's cache entries (see [`crate::vote_cache`]):
/// plain strings, `GET`, `SET` and `DEL`, as Noria's hybrid client sends.
impl RedisConnection {
    pub(crate) async fn entry_get(&mut self, key: &[u8]) -> OpResult<Option<&[u8]>> {
        resp::encode(self.t.request(), &[b"GET", key]);
        let reply = self.t.call(1).await?;
        match Reader::new(reply).next().map_err(proto_err)? {
            Item::Bulk(value) => Ok(value),
            Item::Error(e) => Err(server_err(e)),
            other => Err(proto_err(format!("expected a value, got {other:?}"))),
        }
    }

    pub(crate) async fn entry_set(&mut self, key: &[u8], value: &[u8]) -> OpResult<()> {
        resp::encode(self.t.request(), &[b"SET", key, value]);
        let reply = self.t.call(1).await?;
        match Reader::new(reply).next().map_err(proto_err)? {
            Item::Error(e) => Err(server_err(e)),
            _ => Ok(()),
        }
    }

    pub(crate) async fn entry_delete(&mut self, key: &[u8]) -> OpResult<()> {
        resp::encode(self.t.request(), &[b"DEL", key]);
        int_reply(&mut Reader::new(self.t.call(1).await?)).map(|_| ())
    }
}

impl Runs<Vote> for RedisBackend {
    async fn prepare_tables(&self, _variant: &VoteVariant, drop: bool) -> Result<(), BackendError> {
        self.flush_or_ping(drop).await
    }
    async fn tables_empty(&self, _variant: &VoteVariant) -> Result<Option<bool>, BackendError> {
        let mut link = self.setup_link().await?;
        let mut key = Vec::new();
        article_key(1, &mut key);
        let n = self.setup_call(&mut link, &[b"EXISTS", &key]).await?;
        Ok(Some(n == Some(0)))
    }
}

pipelined::vote_on_a_cache!(RedisConnection);
