//! Noria's hybrid deployment of the vote workload: a SQL database
//! (MySQL/MariaDB, or PostgreSQL) with a cache in front, memcached or
//! Redis, named by `-p vote.cache=URL` (see
//! [`VOTE_CACHE`](sojourn_core::workload::vote::VOTE_CACHE)).
//!
//! The cache holds one entry per article, `vc:{id}`, whose value is the
//! vote count and the title, `"{votes} {title}"`. A read asks the cache
//! and, on a miss, reads the database and writes the entry back; a vote
//! writes the database, then deletes the article's entry. A load inserts
//! each article into the database and its entry (count 0) into the cache,
//! as Noria warms its cache, and `--drop` empties the cache with the
//! tables. As in Noria, a read that missed may write back a count that a
//! vote committed in between has already made old; the next vote deletes
//! it again.
//!
//! The cache's own counters (memcached's `get_hits`/`get_misses`, Redis's
//! `keyspace_hits`/`keyspace_misses`) join the database's server counters
//! as `cache_hits` and `cache_misses`, so a run says how its reads fared.
//! The cache connection is the cache backend's own, with its timeouts and
//! reconnection; a failed cache call is the operation's `ERROR`.

use std::io::Write as _;
use std::sync::Arc;

use sojourn_core::backend::{Backend, BackendError, Schema, ServerCounters, Status};
use sojourn_core::workload::capability::Runs;
use sojourn_core::workload::vote::{is_vote, ArticleRow, Vote, VoteVariant, VOTE_CACHE};

#[cfg(feature = "memcached")]
use crate::memcached::{MemcachedBackend, MemcachedConnection, MemcachedOptions};
#[cfg(feature = "redis")]
use crate::redis::{RedisBackend, RedisConnection, RedisOptions};
use crate::OpenOptions;

/// The cache server of a hybrid run.
pub(crate) enum Cache {
    #[cfg(feature = "memcached")]
    Memcached(MemcachedBackend),
    #[cfg(feature = "redis")]
    Redis(RedisBackend),
    #[cfg(not(any(feature = "memcached", feature = "redis")))]
    Unavailable(std::convert::Infallible),
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

/// One connection's link to the cache.
pub(crate) enum CacheConn {
    #[cfg(feature = "memcached")]
    Memcached(MemcachedConnection),
    #[cfg(feature = "redis")]
    Redis(RedisConnection),
    #[cfg(not(any(feature = "memcached", feature = "redis")))]
    Unavailable(std::convert::Infallible),
}

/// The counters each cache names its hits and misses by.
const HITS_MISSES: [(&str, &str); 2] = [
    ("get_hits", "get_misses"),
    ("keyspace_hits", "keyspace_misses"),
];

impl Cache {
    /// The cache a vote run's `vote.cache` names, if any; `None` for every
    /// other workload, which never reads the property.
    pub(crate) fn from_options(options: &OpenOptions<'_>) -> Result<Option<Arc<Cache>>, String> {
        let props = options.props;
        let url = props.get_str(VOTE_CACHE, "").trim();
        if url.is_empty() || !is_vote(props) {
            return Ok(None);
        }
        let scheme = url
            .split(':')
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        // `describe` shows the URL, its password masked.
        let invalid = |e: String| format!("{}: {e}", props.describe(VOTE_CACHE));
        let cache = match scheme.as_str() {
            #[cfg(feature = "memcached")]
            "memcached" => {
                // Not `Open::configure`, which refuses `vote.cache` on a
                // cache: this one is the cache.
                let opts = MemcachedOptions::from_url(url, options).map_err(invalid)?;
                Cache::Memcached(MemcachedBackend::new(opts))
            }
            #[cfg(feature = "redis")]
            "redis" | "rediss" => {
                let opts = RedisOptions::from_url(url, options).map_err(invalid)?;
                Cache::Redis(RedisBackend::new(opts).map_err(|e| invalid(e.to_string()))?)
            }
            _ => {
                return Err(invalid(
                    "the cache must be memcached://host[:port] or redis://host[:port]".into(),
                ))
            }
        };
        Ok(Some(Arc::new(cache)))
    }

    /// What the cache is, for the database's description.
    pub(crate) fn describe(&self) -> String {
        match self {
            #[cfg(feature = "memcached")]
            Cache::Memcached(b) => b.describe(),
            #[cfg(feature = "redis")]
            Cache::Redis(b) => b.describe(),
            #[cfg(not(any(feature = "memcached", feature = "redis")))]
            Cache::Unavailable(never) => match *never {},
        }
    }

    pub(crate) async fn connect(&self, schema: Arc<Schema>) -> Result<CacheConn, BackendError> {
        Ok(match self {
            #[cfg(feature = "memcached")]
            Cache::Memcached(b) => CacheConn::Memcached(b.connect(schema).await?),
            #[cfg(feature = "redis")]
            Cache::Redis(b) => CacheConn::Redis(b.connect(schema).await?),
            #[cfg(not(any(feature = "memcached", feature = "redis")))]
            Cache::Unavailable(never) => match *never {},
        })
    }

    /// Empty the cache (with the tables, on `--drop`), or check that it
    /// answers.
    pub(crate) async fn prepare(&self, drop: bool) -> Result<(), BackendError> {
        // The cache backends' own vote setup does exactly that.
        let any = VoteVariant::Join;
        match self {
            #[cfg(feature = "memcached")]
            Cache::Memcached(b) => Runs::<Vote>::prepare_tables(b, &any, drop).await,
            #[cfg(feature = "redis")]
            Cache::Redis(b) => Runs::<Vote>::prepare_tables(b, &any, drop).await,
            #[cfg(not(any(feature = "memcached", feature = "redis")))]
            Cache::Unavailable(never) => match *never {},
        }
    }

    /// Add the cache's hits and misses to the database's `counters`.
    pub(crate) async fn add_counters(
        &self,
        schema: &Schema,
        counters: &mut ServerCounters,
    ) -> Result<(), BackendError> {
        let theirs = match self {
            #[cfg(feature = "memcached")]
            Cache::Memcached(b) => b.server_counters(schema).await?,
            #[cfg(feature = "redis")]
            Cache::Redis(b) => b.server_counters(schema).await?,
            #[cfg(not(any(feature = "memcached", feature = "redis")))]
            Cache::Unavailable(never) => match *never {},
        };
        let Some(theirs) = theirs else {
            return Ok(());
        };
        for (hits, misses) in HITS_MISSES {
            if let (Some(h), Some(m)) = (theirs.values.get(hits), theirs.values.get(misses)) {
                counters.set("cache_hits", *h);
                counters.set("cache_misses", *m);
            }
        }
        Ok(())
    }
}

/// The cache entry of article `id`.
fn entry_key(id: u64, out: &mut Vec<u8>) {
    out.clear();
    let _ = write!(out, "vc:{id}");
}

/// `"{votes} {title}"`.
fn entry_value(votes: u64, title: &str, out: &mut Vec<u8>) {
    out.clear();
    let _ = write!(out, "{votes} {title}");
}

/// An entry's value back into `out`; `false` when it is not one.
fn parse_entry(id: u64, value: &[u8], out: &mut ArticleRow) -> bool {
    let Some(space) = value.iter().position(|&b| b == b' ') else {
        return false;
    };
    let Some(votes) = std::str::from_utf8(&value[..space])
        .ok()
        .and_then(|v| v.parse().ok())
    else {
        return false;
    };
    out.id = id;
    out.votes = votes;
    out.title.clear();
    out.title
        .push_str(&String::from_utf8_lossy(&value[space + 1..]));
    true
}

/// Why a cache call failed, as the operation's status.
fn failed(e: crate::pipelined::OpError) -> Status {
    e.status
}

impl CacheConn {
    /// Article `id` from the cache into `out`: `Ok(true)` on a hit.
    async fn get(
        &mut self,
        id: u64,
        key: &mut Vec<u8>,
        out: &mut ArticleRow,
    ) -> Result<bool, Status> {
        entry_key(id, key);
        let value = match self {
            #[cfg(feature = "memcached")]
            CacheConn::Memcached(c) => c.entry_get(key).await,
            #[cfg(feature = "redis")]
            CacheConn::Redis(c) => c.entry_get(key).await,
            #[cfg(not(any(feature = "memcached", feature = "redis")))]
            CacheConn::Unavailable(never) => match *never {},
        }
        .map_err(failed)?;
        match value {
            None => Ok(false),
            Some(v) if parse_entry(id, v, out) => Ok(true),
            // Not an entry of this workload: read the database, and the
            // write-back replaces it.
            Some(_) => Ok(false),
        }
    }

    /// Write article `id`'s entry.
    async fn set(&mut self, id: u64, votes: u64, title: &str, key: &mut Vec<u8>) -> Status {
        entry_key(id, key);
        let mut value = Vec::with_capacity(title.len() + 21);
        entry_value(votes, title, &mut value);
        let done = match self {
            #[cfg(feature = "memcached")]
            CacheConn::Memcached(c) => c.entry_set(key, &value).await,
            #[cfg(feature = "redis")]
            CacheConn::Redis(c) => c.entry_set(key, &value).await,
            #[cfg(not(any(feature = "memcached", feature = "redis")))]
            CacheConn::Unavailable(never) => match *never {},
        };
        done.map_or_else(failed, |()| Status::Ok)
    }

    /// Delete article `id`'s entry (absent is fine).
    async fn delete(&mut self, id: u64, key: &mut Vec<u8>) -> Status {
        entry_key(id, key);
        let done = match self {
            #[cfg(feature = "memcached")]
            CacheConn::Memcached(c) => c.entry_delete(key).await,
            #[cfg(feature = "redis")]
            CacheConn::Redis(c) => c.entry_delete(key).await,
            #[cfg(not(any(feature = "memcached", feature = "redis")))]
            CacheConn::Unavailable(never) => match *never {},
        };
        done.map_or_else(failed, |()| Status::Ok)
    }
}

/// A SQL connection's link to its run's cache, with a key buffer.
pub(crate) struct Cached {
    conn: CacheConn,
    key: Vec<u8>,
}

impl Cached {
    /// A load's article, inserted into the database with `status`: its
    /// entry too, count 0, as Noria warms its cache.
    pub(crate) async fn inserted(&mut self, id: u64, title: &str, status: Status) -> Status {
        if !status.is_ok() {
            return status;
        }
        self.conn.set(id, 0, title, &mut self.key).await
    }

    /// A vote, written to the database with `status`: the article's
    /// entry is deleted, so that the next read fetches the new count.
    pub(crate) async fn voted(&mut self, article: u64, status: Status) -> Status {
        if !status.is_ok() {
            return status;
        }
        self.conn.delete(article, &mut self.key).await
    }

    /// Article `id` from the cache into `out`: `Ok(true)` on a hit,
    /// `Ok(false)` on a miss, which the caller reads from the database
    /// and hands to [`Cached::fetched`].
    pub(crate) async fn lookup(&mut self, id: u64, out: &mut ArticleRow) -> Result<bool, Status> {
        self.conn.get(id, &mut self.key, out).await
    }

    /// A miss read from the database with `status`: written back.
    pub(crate) async fn fetched(&mut self, row: &ArticleRow, status: Status) -> Status {
        if !status.is_ok() {
            return status;
        }
        self.conn
            .set(row.id, row.votes, &row.title, &mut self.key)
            .await
    }
}

/// A database's description, with its cache where it has one.
pub(crate) fn describe(db: String, cache: Option<&Arc<Cache>>) -> String {
    match cache {
        Some(c) => format!("{db} behind the cache {}", c.describe()),
        None => db,
    }
}

/// Empty the cache with `drop`, or check that it answers, if the backend
/// has one: the vote tables' setup after the database's.
pub(crate) async fn prepare(cache: Option<&Arc<Cache>>, drop: bool) -> Result<(), BackendError> {
    match cache {
        Some(cache) => cache.prepare(drop).await,
        None => Ok(()),
    }
}

/// Open a connection's cache link, if the backend has a cache.
pub(crate) async fn connect(
    cache: Option<&Arc<Cache>>,
    schema: &Arc<Schema>,
) -> Result<Option<Cached>, BackendError> {
    match cache {
        None => Ok(None),
        Some(c) => Ok(Some(Cached {
            conn: c.connect(schema.clone()).await?,
            key: Vec::with_capacity(24),
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_strangers_miss() {
        let row = ArticleRow {
            id: 42,
            title: "Article #42 with spaces".into(),
            votes: 17,
        };
        let mut v = Vec::new();
        entry_value(17, &row.title, &mut v);
        assert_eq!(v, b"17 Article #42 with spaces");
        let mut back = ArticleRow::default();
        assert!(parse_entry(42, &v, &mut back));
        assert_eq!(back, row);
        assert!(!parse_entry(42, b"seventeen x", &mut back));
        assert!(!parse_entry(42, b"17", &mut back));
        let mut k = Vec::new();
        entry_key(42, &mut k);
        assert_eq!(k, b"vc:42");
    }
}
