//! The memcached backend: `memcached://host[:port]`, or YCSB's `memcached`
//! with `-p memcached.hosts=host:port`, over memcached's text protocol.
//!
//! Layout: one item per record, under YCSB's key `{table}-{key}`, holding
//! the record's fields in sojourn's record encoding (below). Not YCSB's
//! layout: its binding stores a JSON object per item, which costs more to
//! write and parse than the data it carries; items YCSB wrote read back as
//! ERROR ("not a sojourn record") rather than as wrong data. Scans are
//! NOT_IMPLEMENTED: memcached has no order to scan in (as with YCSB).
//!
//! Record encoding, version 1: the byte `0x01`, then for each field in
//! ascending field index, the index as an unsigned LEB128 varint, the
//! value's length as an unsigned LEB128 varint, and the value's bytes. One
//! 100-byte field costs 3 bytes of overhead.
//!
//! Keys are sent as they are when every byte is printable ASCII other than
//! `%` (YCSB's keys always are); any other byte (space, control, non-ASCII)
//! and `%` itself are written `%XX`, since the text protocol ends a key at
//! a space. A key longer than memcached's 250 bytes once escaped is
//! BAD_REQUEST.
//!
//! Operations: read is `get`; insert is `set` (replacing the whole record,
//! like the other backends); delete is `delete`. An update is one `replace`
//! of the fields it writes, as YCSB's memcached binding sends it: it
//! stores only if the item exists (an absent record is NOT_FOUND), and the
//! record is then those fields alone, so after an update of one field a
//! read of all of them returns that one field, as under YCSB.
//!
//! `memcached.checked=true` keeps records whole at a price: an update of
//! some fields is then a read-modify-write made atomic with
//! compare-and-swap: `gets`, merge, `cas`, retried (up to 16 times, with
//! random pauses after the second) while another client changed the item
//! in between, so concurrent updates of different fields never lose each
//! other's writes. That is two round trips and two commands per update
//! where YCSB sends one. An update of every field is one `replace` either
//! way.
//!
//! `prepare` with drop is `flush_all`, which empties the whole server (all
//! tables), followed by a run of the LRU crawler that reclaims the flushed
//! items (memcached counts them until something touches them); `is_empty`
//! asks the whole server (`curr_items == 0`). memcached has no authentication or TLS in this
//! backend (SASL needs the binary protocol, which memcached deprecates).
//!
//! The client is [`crate::pipelined`]'s, not a crate's: `async-memcached` (the
//! maintained async one) has neither `gets`/`cas` nor `replace`, and
//! allocates a value and a key per request; this shares the Redis backend's
//! I/O core, with its timeouts, reconnection and `-p connections=K`
//! pipelining. Per-operation timeout: `timeout.ms` (default 2000), else
//! YCSB's `memcached.opTimeoutMillis`.
//!
//! The parts: [`options`], [`protocol`] (the text protocol), [`record`]
//! (the record encoding), [`connection`] (the operations), [`counters`]
//! (`stats`), and one module per workload capability ([`vote`],
//! [`commands`]).

mod commands;
mod connection;
mod counters;
mod options;
mod protocol;
mod record;
mod vote;

use std::sync::Arc;
use std::time::Duration;

use sojourn_core::backend::guard::Guard;
use sojourn_core::backend::{Backend, BackendError, Extensions, Schema, ServerCounters, Threading};
use sojourn_core::workload::commands::CommandsSupport;
use sojourn_core::workload::vote::VoteSupport;

use crate::pipelined::{self, Handshake, Sockets, WireConfig, SETUP_TIMEOUT};
use crate::{Open, OpenOptions};
use connection::seed;
use counters::{stat_in, stats_counters};
use protocol::{first_line, Text};

pub use connection::MemcachedConnection;
pub use options::MemcachedOptions;

/// A memcached server.
#[derive(Debug)]
pub struct MemcachedBackend {
    opts: MemcachedOptions,
    sockets: Sockets<Text>,
}

impl MemcachedBackend {
    pub fn new(opts: MemcachedOptions) -> MemcachedBackend {
        let cfg = WireConfig {
            addr: pipelined::addr(&opts.host, opts.port),
            timeout: opts.timeout,
            connect_timeout: SETUP_TIMEOUT,
            handshake: Handshake::default(),
            tls: None,
        };
        let target = format!("memcached://{}", cfg.addr);
        let sockets = Sockets::new(cfg, opts.sharing, target);
        MemcachedBackend { opts, sockets }
    }

    fn target(&self) -> String {
        self.sockets.target().to_string()
    }

    async fn setup_call(&self, command: &[u8]) -> Result<Vec<u8>, BackendError> {
        let mut link = self.sockets.setup().await?;
        link.request().extend_from_slice(command);
        link.call(1)
            .await
            .map(<[u8]>::to_vec)
            .map_err(|e| BackendError::Setup {
                target: self.target(),
                message: e.to_string(),
            })
    }

    /// A number from `stats`.
    async fn stat(&self, name: &[u8]) -> Result<u64, BackendError> {
        let stats = self.setup_call(b"stats\r\n").await?;
        stat_in(&stats, name)
            .map(|n| n as u64)
            .ok_or_else(|| self.setup_error(&stats))
    }

    /// With `drop`, empty the server; otherwise check that it answers.
    async fn flush_or_ping(&self, drop: bool) -> Result<(), BackendError> {
        if drop {
            let reply = self.setup_call(b"flush_all\r\n").await?;
            if first_line(&reply) != b"OK" {
                return Err(self.setup_error(&reply));
            }
            self.reclaim_flushed().await?;
        } else {
            let reply = self.setup_call(b"version\r\n").await?;
            if !reply.starts_with(b"VERSION") {
                return Err(self.setup_error(&reply));
            }
        }
        Ok(())
    }

    /// Flushed items stay counted in `curr_items` until something touches
    /// them; run the LRU crawler over everything, which reclaims them, and
    /// wait (bounded) until it is done, so that `is_empty` can trust the
    /// count. A server without the crawler keeps its stale count.
    async fn reclaim_flushed(&self) -> Result<(), BackendError> {
        let deadline = tokio::time::Instant::now() + SETUP_TIMEOUT;
        let pause = Duration::from_millis(5);
        loop {
            let reply = self.setup_call(b"lru_crawler crawl all\r\n").await?;
            match first_line(&reply) {
                b"OK" => break,
                // Already crawling (memcached crawls on its own too).
                line if line.starts_with(b"BUSY") && tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(pause).await;
                }
                _ => return Ok(()),
            }
        }
        while self.stat(b"lru_crawler_running").await? != 0 {
            if tokio::time::Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(pause).await;
        }
        Ok(())
    }

    fn setup_error(&self, reply: &[u8]) -> BackendError {
        BackendError::Setup {
            target: self.target(),
            message: String::from_utf8_lossy(first_line(reply)).into_owned(),
        }
    }
}

impl Open for MemcachedBackend {
    const FORMS: &'static [&'static str] = &[
        "memcached://host[:port]",
        "`memcached` with -p memcached.hosts=H:P",
    ];

    /// See [`MemcachedOptions::from_url`]; nothing is contacted yet.
    fn configure(url: &str, options: &OpenOptions<'_>) -> Result<MemcachedBackend, String> {
        sojourn_core::workload::vote::refuse_cache(options.props)?;
        MemcachedOptions::from_url(url, options).map(MemcachedBackend::new)
    }
}

impl Backend for MemcachedBackend {
    type Conn = MemcachedConnection;

    fn describe(&self) -> String {
        let checked = self
            .opts
            .checked
            .then(|| "memcached.checked=true".to_string());
        let sharing = self.opts.sharing.map(|s| s.to_string());
        crate::pool::describe(self.target(), checked.into_iter().chain(sharing))
    }

    fn threading(&self) -> Threading {
        crate::pool::threading(self.opts.sharing)
    }

    async fn prepare(&self, _schema: &Schema, drop: bool) -> Result<(), BackendError> {
        self.flush_or_ping(drop).await
    }

    /// What memcached's `stats` count of the run's requests: hits and
    /// misses of gets, and the server's CPU time.
    async fn server_counters(&self, _: &Schema) -> Result<Option<ServerCounters>, BackendError> {
        let stats = self.setup_call(b"stats\r\n").await?;
        Ok(Some(stats_counters(&stats)))
    }

    fn extensions(&self) -> Extensions<Self> {
        Extensions::new()
            .with(VoteSupport::<Self>::new())
            .with(CommandsSupport::<Self>::new())
    }

    async fn is_empty(&self, _schema: &Schema) -> Result<Option<bool>, BackendError> {
        Ok(Some(self.stat(b"curr_items").await? == 0))
    }

    async fn connect(&self, schema: Arc<Schema>) -> Result<MemcachedConnection, BackendError> {
        let transport = self.sockets.transport().await?;
        Ok(MemcachedConnection {
            t: transport,
            table: schema.table.clone(),
            // The transport bounds each call itself.
            guard: Guard::new(schema.field_count(), None),
            timeout: self.opts.timeout,
            checked: self.opts.checked,
            order: Vec::new(),
            decoded: Vec::new(),
            old: Vec::new(),
            jitter: seed(),
            last_error: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use sojourn_core::properties::Properties;

    use super::*;

    #[test]
    fn url_forms() {
        let props = Properties::new();
        let open = |url| MemcachedBackend::open(url, &OpenOptions::new(&props));
        assert_eq!(
            open("memcached").unwrap().describe(),
            "memcached://localhost:11211"
        );
        assert_eq!(
            open("memcached://h:1").unwrap().describe(),
            "memcached://h:1"
        );
        assert!(open("memcached:h").is_err());
    }
}
