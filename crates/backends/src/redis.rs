//! The Redis backend (also Valkey, Tair and other servers that speak RESP2):
//! `redis://[user][:password@]host[:port][,host[:port]...][/db]`, or
//! YCSB's `redis -p redis.host=H -p redis.port=P [-p redis.password=...]`.
//!
//! `prepare` with drop runs `FLUSHDB`: it empties the whole database number
//! (`/db` in the URL, default 0), not only sojourn's keys, because YCSB's
//! layout has no table namespace to delete by. `is_empty` is `DBSIZE == 0`,
//! for the same reason.
//!
//! Topology: by default each sojourn connection is one TCP connection with
//! one request in flight, as YCSB does. With `-p connections=K` (K smaller
//! than the N connections of the run), the N connections share K sockets
//! and their requests are pipelined: N operations in flight over K
//! connections, which `describe` records. Both are the hand-written client
//! of [`crate::pipelined`] rather than the `redis` crate, for the CPU per
//! operation it saves (see that module).
//!
//! Several nodes (`redis://h1:6379,h2:6379`, what yb-sample-apps'
//! `--nodes` gives YEDIS) spread the run's connections over them round
//! robin, in the order they open: they must serve the same data (one
//! cluster's nodes, or one server under two addresses). Setup (`FLUSHDB`,
//! `DBSIZE`, the `PING` that proves a server answers) goes to every node;
//! the server counters (`INFO`) are the first node's. Shared sockets
//! (`connections=K`) take one node.
//!
//! The parts: [`options`] (URL and properties), [`layout`] (how records
//! are stored), [`connection`] (the operations), [`counters`] (`INFO`),
//! and one module per workload capability ([`vote`], [`commands`]).

mod commands;
mod connection;
mod counters;
mod layout;
mod options;
mod resp;
#[cfg(test)]
mod tests;
mod tls;
mod vote;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use sojourn_core::backend::{Backend, BackendError, Extensions, Schema, ServerCounters, Threading};
use sojourn_core::workload::commands::CommandsSupport;
use sojourn_core::workload::vote::VoteSupport;

use crate::pipelined::{addr, Handshake, Sockets, Transport, WireConfig, SETUP_TIMEOUT};
use crate::{Open, OpenOptions};
use counters::info_counters;
use options::target;
use resp::{Item, Reader, Resp};

pub use connection::RedisConnection;
pub use layout::{java_hash, INDEX_KEY, INSERT_SCRIPT, INSERT_SHA, UPDATE_SCRIPT, UPDATE_SHA};
pub use options::{RedisMode, RedisOptions, TlsOptions};

/// A Redis database.
#[derive(Debug)]
pub struct RedisBackend {
    opts: RedisOptions,
    /// The first node's: setup and server counters go here.
    sockets: Sockets<Resp>,
    /// The further nodes' ([`RedisOptions::more_nodes`]).
    more: Vec<Sockets<Resp>>,
    /// Connections opened so far, which picks the next one's node.
    opened: AtomicUsize,
}

fn reply_error(reply: &[u8]) -> Result<(), String> {
    match Reader::new(reply).next()? {
        Item::Error(e) => Err(String::from_utf8_lossy(e).into_owned()),
        _ => Ok(()),
    }
}

impl RedisBackend {
    /// A backend for `opts`; fails only when TLS files cannot be read.
    pub fn new(opts: RedisOptions) -> Result<RedisBackend, BackendError> {
        let mut hs = Handshake {
            check: reply_error,
            ..Handshake::default()
        };
        if let Some(password) = &opts.password {
            match &opts.user {
                Some(user) => resp::encode(
                    &mut hs.request,
                    &[b"AUTH", user.as_bytes(), password.as_bytes()],
                ),
                None => resp::encode(&mut hs.request, &[b"AUTH", password.as_bytes()]),
            }
            hs.replies += 1;
        }
        if opts.db != 0 {
            resp::encode(
                &mut hs.request,
                &[b"SELECT", itoa::Buffer::new().format(opts.db).as_bytes()],
            );
            hs.replies += 1;
        }
        // A server that wants a password we were not given says so here
        // (NOAUTH), rather than failing every operation later.
        resp::encode(&mut hs.request, &[b"PING"]);
        hs.replies += 1;
        hs.strict = hs.replies;
        if opts.mode == RedisMode::Hash && opts.checked {
            // Best effort: a server that refuses scripts still serves reads;
            // its updates and inserts then fail visibly, one by one.
            for script in [UPDATE_SCRIPT, INSERT_SCRIPT] {
                resp::encode(&mut hs.request, &[b"SCRIPT", b"LOAD", script.as_bytes()]);
                hs.replies += 1;
            }
        }
        let target = target(&opts);
        let node = |host: &str, port: u16| -> Result<Sockets<Resp>, BackendError> {
            let tls = match &opts.tls {
                Some(t) => Some(tls::config(host, t).map_err(BackendError::Config)?),
                None => None,
            };
            let cfg = WireConfig {
                addr: addr(host, port),
                timeout: opts.timeout,
                connect_timeout: SETUP_TIMEOUT,
                handshake: hs.clone(),
                tls,
            };
            Ok(Sockets::new(cfg, opts.sharing, target.clone()))
        };
        let sockets = node(&opts.host, opts.port)?;
        let more = opts
            .more_nodes
            .iter()
            .map(|(host, port)| node(host, *port))
            .collect::<Result<_, _>>()?;
        Ok(RedisBackend {
            opts,
            sockets,
            more,
            opened: AtomicUsize::new(0),
        })
    }

    /// Every node's sockets, the first node's first.
    fn nodes(&self) -> impl Iterator<Item = &Sockets<Resp>> {
        std::iter::once(&self.sockets).chain(&self.more)
    }

    pub fn options(&self) -> &RedisOptions {
        &self.opts
    }

    fn target(&self) -> String {
        self.sockets.target().to_string()
    }

    fn check_schema(&self, schema: &Schema) -> Result<(), BackendError> {
        if self.opts.mode == RedisMode::String && schema.field_count() != 1 {
            return Err(BackendError::Config(format!(
                "redis.mode=string stores one value per key, so it needs fieldcount=1 \
                 (this workload has fieldcount={}); add -p fieldcount=1 or use redis.mode=hash",
                schema.field_count()
            )));
        }
        Ok(())
    }

    /// A connection to the first node for setup commands, on the current
    /// runtime.
    async fn setup_link(&self) -> Result<Transport<Resp>, BackendError> {
        self.sockets.setup().await
    }

    async fn setup_call(
        &self,
        link: &mut Transport<Resp>,
        args: &[&[u8]],
    ) -> Result<Option<i64>, BackendError> {
        match self.setup_reply(link, args).await? {
            Answer::Int(n) => Ok(Some(n)),
            Answer::Text(_) | Answer::Other => Ok(None),
        }
    }

    /// A setup command's answer: a number, a string, or something else.
    async fn setup_reply(
        &self,
        link: &mut Transport<Resp>,
        args: &[&[u8]],
    ) -> Result<Answer, BackendError> {
        let fail = |message: String| BackendError::Setup {
            target: self.target(),
            message,
        };
        resp::encode(link.request(), args);
        let reply = link.call(1).await.map_err(|e| fail(e.to_string()))?;
        match Reader::new(reply).next().map_err(fail)? {
            Item::Error(e) => Err(fail(String::from_utf8_lossy(e).into_owned())),
            Item::Int(n) => Ok(Answer::Int(n)),
            Item::Simple(t) | Item::Bulk(Some(t)) => {
                Ok(Answer::Text(String::from_utf8_lossy(t).into_owned()))
            }
            _ => Ok(Answer::Other),
        }
    }

    /// The types of up to `n` keys drawn at random (`RANDOMKEY`), the
    /// scan index aside: what the data already there is made of.
    async fn sample_types(
        &self,
        link: &mut Transport<Resp>,
        n: usize,
    ) -> Result<Vec<(String, String)>, BackendError> {
        let mut seen = Vec::new();
        for _ in 0..n {
            let Answer::Text(key) = self.setup_reply(link, &[b"RANDOMKEY"]).await? else {
                break;
            };
            if key == INDEX_KEY || seen.iter().any(|(k, _)| *k == key) {
                continue;
            }
            if let Answer::Text(ty) = self.setup_reply(link, &[b"TYPE", key.as_bytes()]).await? {
                seen.push((key, ty));
            }
        }
        Ok(seen)
    }
}

/// A setup command's answer, as [`RedisBackend::setup_reply`] reads it.
enum Answer {
    Int(i64),
    Text(String),
    Other,
}

/// Keys [`Backend::check_layout`] looks at.
const LAYOUT_SAMPLE: usize = 8;

impl Open for RedisBackend {
    const FORMS: &'static [&'static str] = &[
        "redis://[user][:password@]host[:port][/db]",
        "`redis` with -p redis.host=H -p redis.port=P",
    ];

    /// See [`RedisOptions::from_url`]; nothing is contacted yet.
    fn configure(url: &str, options: &OpenOptions<'_>) -> Result<RedisBackend, String> {
        sojourn_core::workload::vote::refuse_cache(options.props)?;
        let opts = RedisOptions::from_url(url, options)?;
        RedisBackend::new(opts).map_err(|e| e.to_string())
    }
}

impl Backend for RedisBackend {
    type Conn = RedisConnection;

    async fn server_counters(&self, _: &Schema) -> Result<Option<ServerCounters>, BackendError> {
        let fail = |message: String| BackendError::Setup {
            target: self.target(),
            message,
        };
        let mut link = self.setup_link().await?;
        resp::encode(link.request(), &[b"INFO", b"all"]);
        let reply = link.call(1).await.map_err(|e| fail(e.to_string()))?;
        match Reader::new(reply).next().map_err(fail)? {
            Item::Bulk(Some(text)) => {
                let c = info_counters(&String::from_utf8_lossy(text));
                Ok((!c.values.is_empty()).then_some(c))
            }
            Item::Error(e) => Err(fail(String::from_utf8_lossy(e).into_owned())),
            _ => Err(fail("INFO did not answer with text".to_string())),
        }
    }

    fn describe(&self) -> String {
        let mut notes = Vec::new();
        if self.opts.mode == RedisMode::String {
            notes.push("redis.mode=string".to_string());
        }
        if self.opts.checked {
            notes.push("redis.checked=true".to_string());
        }
        notes.extend(self.opts.sharing.map(|s| s.to_string()));
        crate::pool::describe(self.target(), notes)
    }

    fn threading(&self) -> Threading {
        crate::pool::threading(self.opts.sharing)
    }

    async fn prepare(&self, schema: &Schema, drop: bool) -> Result<(), BackendError> {
        self.check_schema(schema)?;
        self.flush_or_ping(drop).await
    }

    async fn is_empty(&self, schema: &Schema) -> Result<Option<bool>, BackendError> {
        self.check_schema(schema)?;
        for node in self.nodes() {
            let mut link = node.setup().await?;
            if self.setup_call(&mut link, &[b"DBSIZE"]).await? != Some(0) {
                return Ok(Some(false));
            }
        }
        Ok(Some(true))
    }

    /// Records are hashes (`redis.mode=hash`) or strings (`string`): keys
    /// drawn at random from the first node must include one of the type
    /// this mode reads, when any is a hash or a string. (A database shared
    /// with other data may hold both; only none of the right type is
    /// refused.)
    async fn check_layout(&self, schema: &Schema) -> Result<(), BackendError> {
        self.check_schema(schema)?;
        let mut link = self.setup_link().await?;
        let types = self.sample_types(&mut link, LAYOUT_SAMPLE).await?;
        let (want, other, fix) = match self.opts.mode {
            RedisMode::Hash => (
                "hash",
                "string",
                "-p redis.mode=string (with -p fieldcount=1) reads them",
            ),
            RedisMode::String => ("string", "hash", "-p redis.mode=hash reads them"),
        };
        let of = |t: &str| types.iter().filter(|(_, ty)| ty == t).count();
        if of(want) > 0 || of(other) == 0 {
            return Ok(());
        }
        let key = &types
            .iter()
            .find(|(_, ty)| ty == other)
            .map(|(k, _)| k.as_str());
        Err(BackendError::Config(format!(
            "{}: its records are {other}s ({} of {} keys drawn at random, such as {:?}), as \
             redis.mode={other} writes them, and this run reads {want}s (redis.mode={}): {fix}, \
             or add --drop to load it again",
            self.target(),
            of(other),
            types.len(),
            key.unwrap_or_default(),
            match self.opts.mode {
                RedisMode::Hash => "hash, the default",
                RedisMode::String => "string",
            }
        )))
    }

    async fn connect(&self, schema: Arc<Schema>) -> Result<RedisConnection, BackendError> {
        self.check_schema(&schema)?;
        // Round robin over the nodes, in the order connections open.
        let i = self.opened.fetch_add(1, Ordering::Relaxed) % (1 + self.more.len());
        let node = if i == 0 {
            &self.sockets
        } else {
            &self.more[i - 1]
        };
        let transport = node.transport().await?;
        Ok(RedisConnection::new(transport, &self.opts, &schema))
    }

    fn extensions(&self) -> Extensions<Self> {
        Extensions::new()
            .with(VoteSupport::<Self>::new())
            .with(CommandsSupport::<Self>::new())
    }
}

impl RedisBackend {
    /// With `drop`, empty the database number on every node; otherwise
    /// check that each answers (Redis needs nothing created).
    async fn flush_or_ping(&self, drop: bool) -> Result<(), BackendError> {
        let command: &[u8] = if drop { b"FLUSHDB" } else { b"PING" };
        for node in self.nodes() {
            let mut link = node.setup().await?;
            self.setup_call(&mut link, &[command]).await?;
        }
        Ok(())
    }
}
