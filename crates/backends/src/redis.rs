//! The Redis backend (also Valkey, Tair and other servers that speak RESP2):
//! `redis://[user][:password@]host[:port][,host[:port]...][/db]`, or
//! YCSB's `redis -p redis.host=H -p redis.port=P [-p redis.password=...]`.
//!
//! Two layouts, chosen with `redis.mode` (or `redis.command_group`, its
//! name in the vendor YCSB builds that published Redis and Tair figures):
//!
//! - `hash` (default) is YCSB's Redis binding: each record is a hash at the
//!   record's key (no table prefix) with one hash field per field, and every
//!   inserted key is also a member of the sorted set `_indices`, scored by
//!   Java's `String.hashCode()` of the key. A scan is YCSB's:
//!   `ZRANGEBYSCORE _indices hash(start) +inf LIMIT 0 count`, then the
//!   fields of each key found. So scans return keys in *hash order* from
//!   the start key's hash, not in key order, exactly as with YCSB; data
//!   loaded by YCSB runs here and the other way round.
//! - `string` stores each record as one plain string (`SET`/`GET`), the
//!   layout the Redis and Tair whitepapers benchmark. It holds exactly one
//!   field, so it requires `fieldcount=1` (refused otherwise, rather than
//!   silently dropping fields). Scans are `NOT_IMPLEMENTED`.
//!
//! By default every operation costs the server what YCSB's binding costs
//! it, so results compare with YCSB's: an update is one `HSET` (which, as
//! YCSB's `HMSET`, creates a missing record), an insert is `HSET` and
//! `ZADD` sent together in one round trip, a read one `HGETALL` or `HMGET`;
//! in string mode `SET` and `GET`. Statuses stay honest where that costs
//! the server nothing: a read of an absent key is NOT_FOUND rather than
//! ERROR (`HGETALL` answers empty). A delete is `DEL` and `ZREM` in one
//! round trip: YCSB sends `ZREM` only when `DEL` removed nothing, which
//! leaves deleted keys in the scan index (no core workload deletes).
//!
//! `redis.checked=true` trades YCSB's server work for records kept whole:
//! an update of an absent record is NOT_FOUND instead of creating it (hash
//! mode: one `EVALSHA` of a script running `EXISTS` and `HSET`; string
//! mode: `SET ... XX`), and an insert replaces an existing record as a
//! whole (`DEL`, `HSET`, `ZADD` in one script), which makes a retried load
//! idempotent. Each script call costs the server the commands it runs
//! besides the `EVALSHA` (about twice the work of an update).
//!
//! `prepare` with drop runs `FLUSHDB`: it empties the whole database number
//! (`/db` in the URL, default 0), not only sojourn's keys, because YCSB's
//! layout has no table namespace to delete by. `is_empty` is `DBSIZE == 0`,
//! for the same reason.
//!
//! Password: from the URL, else `redis.password`, else the `REDIS_PASSWORD`
//! environment variable; sent with `AUTH` on every connection and never
//! shown (`describe` and errors carry no password). A user name (Redis 6
//! ACLs) comes from the URL.
//!
//! TLS: `rediss://...` (or `-p redis.tls=true`), with rustls. The server's
//! certificate is checked against the system's certificate authorities, or
//! those of `redis.tls.ca=PATH` (PEM), and must name the host connected to;
//! `redis.tls.insecure=true` encrypts without checking. For servers that
//! check clients (`tls-auth-clients yes`, Redis' default), give
//! `redis.tls.cert=PATH` and `redis.tls.key=PATH` (PEM).
//!
//! Topology: by default each sojourn connection is one TCP connection with
//! one request in flight, as YCSB does. With `-p connections=K` (K smaller
//! than the N connections of the run), the N connections share K sockets
//! and their requests are pipelined: N operations in flight over K
//! connections, which `describe` records. Both are the hand-written client of [`crate::wire`]
//! rather than the `redis` crate, for the CPU per operation it saves (see
//! that module).
//!
//! Several nodes (`redis://h1:6379,h2:6379`, what yb-sample-apps'
//! `--nodes` gives YEDIS) spread the run's connections over them round
//! robin, in the order they open: they must serve the same data (one
//! cluster's nodes, or one server under two addresses). Setup (`FLUSHDB`,
//! `DBSIZE`, the `PING` that proves a server answers) goes to every node;
//! the server counters (`INFO`) are the first node's. Shared sockets
//! (`connections=K`) take one node.
//!
//! Per-operation timeout: `timeout.ms` (default 2000), else YCSB's
//! `redis.timeout`. A timed-out operation is an ERROR and the run goes on.

mod commands;
mod resp;
mod tls;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use sojourn_core::backend::guard::{Bodies, Guard, Read, Scan};
use sojourn_core::backend::{
    Backend, BackendError, Extensions, FieldValue, Fields, Row, Schema, ServerCounters, Status,
    Threading, SERVER_INSTANCE,
};
use sojourn_core::properties::PropertyError;
use sojourn_core::workload::capability::Runs;
use sojourn_core::workload::commands::CommandsSupport;
use sojourn_core::workload::vote::{ArticleRow, Vote, VoteSupport, VoteVariant};

use crate::pool::{PoolOptions, Sharing, DEFAULT_TIMEOUT};
use crate::wire::{
    self, addr, split_host_port, Handshake, OpError, OpResult, Sockets, Transport, WireConfig,
    SETUP_TIMEOUT,
};
use crate::{url, Open, OpenOptions};
use resp::{Item, Reader, Resp};

/// The vote workload's article `id`: a hash with fields `title` and
/// `votes`, the latter a counter each vote increments (HINCRBY), as Noria's
/// memcached setup kept one counter per article. There is no Vote table:
/// `vote.variant` does not apply to Redis.
fn article_key(id: u64, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(b"article:");
    out.extend_from_slice(itoa::Buffer::new().format(id).as_bytes());
}

/// The sorted set of YCSB's Redis binding that indexes keys for scans.
pub const INDEX_KEY: &str = "_indices";

const DEFAULT_PORT: u16 = 6379;

/// Update of existing hash fields; 0 when the record does not exist.
pub const UPDATE_SCRIPT: &str = "if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end\n\
redis.call('HSET', KEYS[1], unpack(ARGV))\n\
return 1\n";
/// SHA-1 of [`UPDATE_SCRIPT`], as `SCRIPT LOAD` answers (checked by the
/// integration tests against a real server).
pub const UPDATE_SHA: &str = "1e6b37db6bf61686adbd4a92f3ef6f32cf43c1d8";

/// Insert (replace) a record and index it: ARGV[1] is the score, then
/// field/value pairs.
pub const INSERT_SCRIPT: &str = "redis.call('DEL', KEYS[1])\n\
redis.call('HSET', KEYS[1], unpack(ARGV, 2))\n\
redis.call('ZADD', KEYS[2], ARGV[1], KEYS[1])\n\
return 1\n";
pub const INSERT_SHA: &str = "cd5d6514af620f6ef72a3303ce55ef6daddbcc6c";

/// How records are laid out.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RedisMode {
    Hash,
    String,
}

/// Everything a Redis backend is configured with.
#[derive(Clone)]
pub struct RedisOptions {
    pub host: String,
    pub port: u16,
    /// Further nodes after `host:port`; connections go to each in turn.
    pub more_nodes: Vec<(String, u16)>,
    pub db: u32,
    pub user: Option<String>,
    pub password: Option<String>,
    pub mode: RedisMode,
    /// `redis.checked`: updates of absent records NOT_FOUND and inserts
    /// replacing whole records, at more server work than YCSB's.
    pub checked: bool,
    pub timeout: Duration,
    /// The run's connections over fewer sockets (pipelined); `None` for a
    /// socket per connection.
    pub sharing: Option<Sharing>,
    /// TLS (`rediss://` or `redis.tls=true`); `None` for plain TCP.
    pub tls: Option<TlsOptions>,
}

/// How a TLS connection authenticates the server, and itself.
pub use sojourn_tls::ClientFiles as TlsOptions;

impl std::fmt::Debug for RedisOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisOptions")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("more_nodes", &self.more_nodes)
            .field("db", &self.db)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "***"))
            .field("mode", &self.mode)
            .field("timeout", &self.timeout)
            .field("sharing", &self.sharing)
            .field("tls", &self.tls)
            .finish()
    }
}

impl RedisOptions {
    /// Options for `host:port` with every default.
    pub fn new(host: &str, port: u16) -> RedisOptions {
        RedisOptions {
            host: host.to_string(),
            port,
            more_nodes: Vec::new(),
            db: 0,
            user: None,
            password: None,
            mode: RedisMode::Hash,
            checked: false,
            timeout: DEFAULT_TIMEOUT,
            sharing: None,
            tls: None,
        }
    }

    /// From a `redis://` or `rediss://` URL, or YCSB's binding name `redis`
    /// with the properties `redis.host`, `redis.port` and `redis.db`, and the
    /// run's properties and connections.
    pub fn from_url(url: &str, options: &OpenOptions<'_>) -> Result<RedisOptions, String> {
        let props = options.props;
        let prop = |e: PropertyError| e.to_string();
        let mut o = match url::split(url) {
            (scheme, None | Some("")) if scheme.eq_ignore_ascii_case("redis") => {
                let host = props.get_str("redis.host", "localhost").trim().to_string();
                let port = props
                    .get_u64("redis.port", u64::from(DEFAULT_PORT))
                    .map_err(prop)?;
                let port = u16::try_from(port)
                    .ok()
                    .filter(|&p| p > 0)
                    .ok_or_else(|| format!("redis.port {port} is not a TCP port"))?;
                let mut o = RedisOptions::new(&host, port);
                let db = props.get_u64("redis.db", 0).map_err(prop)?;
                o.db = u32::try_from(db).map_err(|_| format!("redis.db {db} is too large"))?;
                o
            }
            (_, Some(rest)) if rest.starts_with("//") => parse_url(url)?,
            _ => {
                return Err(
                    // No `user:password@` in the form: messages show it as
                    // `user:***@`.
                    "expected redis://[user@]host[:port][/db] (a password after the user as \
                     :password, or in $REDIS_PASSWORD), or `redis` with -p redis.host=... \
                     -p redis.port=..."
                        .to_string(),
                );
            }
        };
        if o.password.is_none() {
            o.password = props
                .get("redis.password")
                .map(str::to_string)
                .or_else(|| std::env::var("REDIS_PASSWORD").ok())
                .filter(|p| !p.is_empty());
        }
        if props.get_bool("redis.tls", false).map_err(prop)? {
            o.tls.get_or_insert_with(TlsOptions::default);
        }
        let path = |key: &str| props.get(key).map(|v| PathBuf::from(v.trim()));
        match &mut o.tls {
            Some(tls) => {
                tls.ca = path("redis.tls.ca");
                tls.cert = path("redis.tls.cert");
                tls.key = path("redis.tls.key");
                tls.insecure = props.get_bool("redis.tls.insecure", false).map_err(prop)?;
                if tls.cert.is_some() != tls.key.is_some() {
                    return Err(
                        "redis.tls.cert and redis.tls.key go together (a client certificate and its key)"
                            .into(),
                    );
                }
            }
            None => {
                if let Some((key, _)) = props.iter().find(|(k, _)| k.starts_with("redis.tls.")) {
                    return Err(format!(
                        "{key} is set but TLS is not on; use rediss:// or -p redis.tls=true"
                    ));
                }
            }
        }
        if props.get_bool("redis.cluster", false).map_err(prop)? {
            return Err(
                "redis.cluster=true (Redis Cluster) is not supported; point sojourn at one node"
                    .into(),
            );
        }
        // `redis.command_group` is the vendor forks' name for the layout
        // (the Tair whitepaper's command line), with the same values.
        let layout = |key| {
            props
                .get_choice(key, "hash", &["hash", "string"])
                .map(|m| match m {
                    "string" => RedisMode::String,
                    _ => RedisMode::Hash,
                })
                .map_err(prop)
        };
        o.mode = match (props.get("redis.mode"), props.get("redis.command_group")) {
            (Some(_), Some(_)) if layout("redis.mode")? != layout("redis.command_group")? => {
                return Err(format!(
                    "redis.mode={} and redis.command_group={} ask for different layouts; \
                     give one of them",
                    props.get_str("redis.mode", ""),
                    props.get_str("redis.command_group", "")
                ))
            }
            (None, Some(_)) => layout("redis.command_group")?,
            _ => layout("redis.mode")?,
        };
        o.checked = props.get_bool("redis.checked", false).map_err(prop)?;
        let pool = PoolOptions::from_properties(props, Some("redis.timeout"), options.workers)?;
        o.timeout = pool.timeout;
        o.sharing = pool.sharing;
        if o.sharing.is_some() && !o.more_nodes.is_empty() {
            // Each node's sockets would be sized for the whole run.
            return Err(format!(
                "connections={} shares sockets of one node; give one host, or leave out \
                 connections to spread a connection each over the {} nodes",
                props.get_str("connections", ""),
                o.more_nodes.len() + 1
            ));
        }
        Ok(o)
    }
}

/// `redis://[user][:password@]host[:port][,host[:port]...][/db]`.
fn parse_url(url: &str) -> Result<RedisOptions, String> {
    let url = url.trim();
    let (scheme, rest) = url.split_once("://").ok_or(
        "expected redis://[user@]host[:port][/db] (a password after the user as :password)",
    )?;
    let tls = scheme.eq_ignore_ascii_case("rediss");
    if !tls && !scheme.eq_ignore_ascii_case("redis") {
        return Err(format!("expected the redis:// scheme, not {scheme}://"));
    }
    if rest.contains(['?', '#']) {
        return Err("options in the URL are not supported; use -p redis.* properties".into());
    }
    // The user-info ends at the last `@` (passwords may contain `@`).
    let (userinfo, hostpart) = match rest.rfind('@') {
        Some(at) => (Some(&rest[..at]), &rest[at + 1..]),
        None => (None, rest),
    };
    let (authority, path) = match hostpart.find('/') {
        Some(i) => (&hostpart[..i], &hostpart[i + 1..]),
        None => (hostpart, ""),
    };
    let mut nodes = authority.split(',');
    let (host, port) = split_host_port(nodes.next().unwrap_or_default(), DEFAULT_PORT)?;
    let mut o = RedisOptions::new(&host, port);
    o.more_nodes = nodes
        .map(|node| split_host_port(node, DEFAULT_PORT))
        .collect::<Result<_, _>>()?;
    o.tls = tls.then(TlsOptions::default);
    if !path.is_empty() {
        o.db = path
            .parse()
            .map_err(|_| format!("the database number /{path} is not a number"))?;
    }
    if let Some(info) = userinfo {
        let (user, password) = match info.split_once(':') {
            Some((u, p)) => (u, Some(p)),
            None => (info, None),
        };
        let user = percent_decode(user)?;
        o.user = (!user.is_empty()).then_some(user);
        o.password = password
            .map(percent_decode)
            .transpose()?
            .filter(|p| !p.is_empty());
    }
    Ok(o)
}

fn percent_decode(s: &str) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or("a % in the user or password is not followed by two hex digits")?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "the user or password is not UTF-8 once decoded".into())
}

/// Java's `String.hashCode()`, which YCSB's binding uses as the score of a
/// key in `_indices`: over UTF-16 code units, wrapping.
pub fn java_hash(key: &str) -> i32 {
    if key.is_ascii() {
        key.bytes()
            .fold(0i32, |h, b| h.wrapping_mul(31).wrapping_add(i32::from(b)))
    } else {
        key.encode_utf16()
            .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
    }
}

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

/// The server's URL, without a password.
fn target(opts: &RedisOptions) -> String {
    let mut s = String::from(if opts.tls.is_some() {
        "rediss://"
    } else {
        "redis://"
    });
    if let Some(user) = &opts.user {
        s.push_str(user);
        s.push('@');
    }
    s.push_str(&addr(&opts.host, opts.port));
    for (host, port) in &opts.more_nodes {
        s.push(',');
        s.push_str(&addr(host, *port));
    }
    if opts.db != 0 {
        s.push('/');
        s.push_str(&opts.db.to_string());
    }
    s
}

/// The `INFO` fields sampled as server counters: whole-server CPU seconds
/// (honest where the server serves only this benchmark), keyspace hits and
/// misses (a read of a missing key is a miss) and commands processed. The
/// two `INFO` calls of a phase count in `total_commands_processed` (one of
/// them), which is noise next to any real run.
const INFO_COUNTERS: [(&str, &str); 5] = [
    ("used_cpu_user", "server_user_cpu_s"),
    ("used_cpu_sys", "server_sys_cpu_s"),
    ("keyspace_hits", "keyspace_hits"),
    ("keyspace_misses", "keyspace_misses"),
    ("total_commands_processed", "commands_processed"),
];

/// The commands whose call counts are kept (`INFO commandstats`): the ones
/// sojourn's reads and writes use, so a read-only run shows none of the
/// writes. Commands a script runs (`HSET` in the update script) count as
/// calls of their own besides the `EVALSHA`.
const COUNTED_COMMANDS: [&str; 13] = [
    "get",
    "hget",
    "hmget",
    "hgetall",
    "exists",
    "zrangebyscore",
    "set",
    "hset",
    "hmset",
    "del",
    "zadd",
    "eval",
    "evalsha",
];

/// Server counters from the text of `INFO` (`name:value` lines).
fn info_counters(text: &str) -> ServerCounters {
    let mut c = ServerCounters::new();
    let mut cpu = 0.0;
    for line in text.lines() {
        let Some((name, value)) = line.trim_end().split_once(':') else {
            continue;
        };
        if let Some(&(_, ours)) = INFO_COUNTERS.iter().find(|(n, _)| *n == name) {
            if let Ok(v) = value.parse::<f64>() {
                if ours.ends_with("cpu_s") {
                    cpu += v;
                }
                c.set(ours, v);
            }
        } else if name == "run_id" {
            // 40 hex digits, new at every start; 13 of them fit an f64
            // exactly and tell one start from another.
            let digits = value.trim().get(..13).unwrap_or_default();
            if let Ok(id) = u64::from_str_radix(digits, 16) {
                c.set(SERVER_INSTANCE, id as f64);
            }
        } else if let Some(cmd) = name.strip_prefix("cmdstat_") {
            // `calls=12,usec=34,...`
            if COUNTED_COMMANDS.contains(&cmd) {
                let calls = value
                    .split(',')
                    .find_map(|kv| kv.strip_prefix("calls="))
                    .and_then(|v| v.parse::<f64>().ok());
                if let Some(n) = calls {
                    c.set(&format!("calls_{cmd}"), n);
                }
            }
        }
    }
    if c.values.contains_key("server_user_cpu_s") {
        c.set("server_cpu_s", cpu);
    }
    // A command never called since the server started has no line; it
    // counts as zero so that its delta exists (and is 0).
    if !c.values.is_empty() {
        for cmd in COUNTED_COMMANDS {
            let name = format!("calls_{cmd}");
            if !c.values.contains_key(&name) {
                c.set(&name, 0.0);
            }
        }
    }
    c
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

/// Field names and the way back from a name to its index.
struct FieldNames {
    names: Vec<Box<[u8]>>,
    /// For many fields; a short list is searched directly.
    map: Option<std::collections::HashMap<Box<[u8]>, usize>>,
}

impl FieldNames {
    fn new(schema: &Schema) -> FieldNames {
        let names: Vec<Box<[u8]>> = schema
            .field_names
            .iter()
            .map(|n| n.as_bytes().into())
            .collect();
        let map = (names.len() > 16).then(|| {
            names
                .iter()
                .enumerate()
                .map(|(i, n)| (n.clone(), i))
                .collect()
        });
        FieldNames { names, map }
    }

    fn index(&self, name: &[u8]) -> Option<usize> {
        match &self.map {
            Some(map) => map.get(name).copied(),
            None => self.names.iter().position(|n| &**n == name),
        }
    }
}

fn proto_err(e: String) -> OpError {
    OpError::error(format!("unexpected reply: {e}"))
}

fn server_err(e: &[u8]) -> OpError {
    OpError::error(String::from_utf8_lossy(e))
}

/// An integer reply, or the server's error.
fn int_reply(r: &mut Reader<'_>) -> OpResult<i64> {
    match r.next().map_err(proto_err)? {
        Item::Int(n) => Ok(n),
        Item::Error(e) => Err(server_err(e)),
        other => Err(proto_err(format!("expected an integer, got {other:?}"))),
    }
}

/// A connection of [`RedisBackend`].
pub struct RedisConnection {
    t: Transport<Resp>,
    guard: Guard,
    mode: RedisMode,
    checked: bool,
    fields: FieldNames,
    /// Keys of the scan in progress.
    keys: Vec<String>,
    /// The vote workload's current key.
    article: Vec<u8>,
    last_error: Option<String>,
}

impl RedisConnection {
    fn new(t: Transport<Resp>, opts: &RedisOptions, schema: &Schema) -> RedisConnection {
        RedisConnection {
            t,
            // The transport bounds each call itself.
            guard: Guard::new(schema.field_count(), None),
            mode: opts.mode,
            checked: opts.checked,
            fields: FieldNames::new(schema),
            keys: Vec::new(),
            article: Vec::new(),
            last_error: None,
        }
    }

    /// The most recent error on this connection, for diagnosing ERROR
    /// statuses.
    pub fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }

    /// `HSET key field value ...` into the request.
    fn hset(&mut self, key: &str, values: &[FieldValue]) {
        let req = self.t.request();
        resp::command(req, 2 + 2 * values.len());
        resp::arg(req, b"HSET");
        resp::arg(req, key.as_bytes());
        for v in values {
            resp::arg(req, &self.fields.names[v.field]);
            resp::arg(req, &v.value);
        }
    }

    async fn exists(&mut self, key: &str) -> OpResult<Status> {
        resp::encode(self.t.request(), &[b"EXISTS", key.as_bytes()]);
        let reply = self.t.call(1).await?;
        Ok(match int_reply(&mut Reader::new(reply))? {
            0 => Status::NotFound,
            _ => Status::Ok,
        })
    }

    async fn read_hash(
        &mut self,
        key: &str,
        fields: Fields<'_>,
        out: &mut Vec<FieldValue>,
    ) -> OpResult<Status> {
        let list = match fields {
            Fields::All => {
                resp::encode(self.t.request(), &[b"HGETALL", key.as_bytes()]);
                let reply = self.t.call(1).await?;
                let mut r = Reader::new(reply);
                return parse_hgetall(&mut r, &self.fields, out);
            }
            Fields::Some([]) => return self.exists(key).await,
            Fields::Some(list) => list,
        };
        let req = self.t.request();
        resp::command(req, 2 + list.len());
        resp::arg(req, b"HMGET");
        resp::arg(req, key.as_bytes());
        for &f in list {
            resp::arg(req, &self.fields.names[f]);
        }
        let reply = self.t.call(1).await?;
        let found = parse_hmget(&mut Reader::new(reply), list, out)?;
        if found > 0 {
            return Ok(Status::Ok);
        }
        // None of the fields asked for is there: the record may still
        // exist with other fields.
        self.exists(key).await
    }

    async fn read_string(
        &mut self,
        key: &str,
        fields: Fields<'_>,
        out: &mut Vec<FieldValue>,
    ) -> OpResult<Status> {
        resp::encode(self.t.request(), &[b"GET", key.as_bytes()]);
        let reply = self.t.call(1).await?;
        match Reader::new(reply).next().map_err(proto_err)? {
            Item::Bulk(None) => Ok(Status::NotFound),
            Item::Bulk(Some(value)) => {
                let wanted = match fields {
                    Fields::All => true,
                    Fields::Some(list) => list.contains(&0),
                };
                if wanted {
                    out.push(FieldValue::copied(0, value));
                }
                Ok(Status::Ok)
            }
            Item::Error(e) => Err(server_err(e)),
            other => Err(proto_err(format!("expected a string, got {other:?}"))),
        }
    }

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

impl Bodies for RedisConnection {
    async fn read_now(&mut self, read: Read<'_>) -> OpResult<Status> {
        let Read { key, fields, out } = read;
        match self.mode {
            RedisMode::Hash => self.read_hash(key, fields, out).await,
            RedisMode::String => self.read_string(key, fields, out).await,
        }
    }

    async fn scan_now(&mut self, scan: Scan<'_>) -> OpResult<Status> {
        if self.mode == RedisMode::String {
            return Ok(Status::NotImplemented);
        }
        if scan.count == 0 {
            return Ok(Status::Ok);
        }
        let score = java_hash(scan.start_key);
        let limit = i64::try_from(scan.count).unwrap_or(i64::MAX);
        let req = self.t.request();
        resp::command(req, 7);
        resp::arg(req, b"ZRANGEBYSCORE");
        resp::arg(req, INDEX_KEY.as_bytes());
        resp::arg_int(req, i64::from(score));
        resp::arg(req, b"+inf");
        resp::arg(req, b"LIMIT");
        resp::arg(req, b"0");
        resp::arg_int(req, limit);
        let reply = self.t.call(1).await?;
        let mut r = Reader::new(reply);
        let n = match r.next().map_err(proto_err)? {
            Item::Array(n) => n.unwrap_or(0),
            Item::Error(e) => return Err(server_err(e)),
            other => return Err(proto_err(format!("expected keys, got {other:?}"))),
        };
        self.keys.clear();
        for _ in 0..n {
            match r.next().map_err(proto_err)? {
                Item::Bulk(Some(k)) => self.keys.push(String::from_utf8_lossy(k).into_owned()),
                other => return Err(proto_err(format!("expected a key, got {other:?}"))),
            }
        }
        let list = match scan.fields {
            Fields::Some([]) => {
                // Nothing to fetch: the index says which keys exist.
                scan.out.extend(self.keys.drain(..).map(|key| Row {
                    key,
                    fields: Vec::new(),
                }));
                return Ok(Status::Ok);
            }
            Fields::Some(list) => Some(list),
            Fields::All => None,
        };
        if self.keys.is_empty() {
            return Ok(Status::Ok);
        }
        // YCSB reads the records one by one; pipelining them costs the
        // server the same and the client one round trip.
        let req = self.t.request();
        for key in &self.keys {
            match list {
                None => resp::encode(req, &[b"HGETALL", key.as_bytes()]),
                Some(list) => {
                    resp::command(req, 2 + list.len());
                    resp::arg(req, b"HMGET");
                    resp::arg(req, key.as_bytes());
                    for &f in list {
                        resp::arg(req, &self.fields.names[f]);
                    }
                }
            }
        }
        let reply = self.t.call(self.keys.len()).await?;
        let mut r = Reader::new(reply);
        let before = scan.out.len();
        for key in self.keys.drain(..) {
            let mut row = Row {
                key,
                fields: Vec::new(),
            };
            let present = match list {
                None => parse_hgetall(&mut r, &self.fields, &mut row.fields)? == Status::Ok,
                // A record deleted since the index was read shows as all
                // fields missing; keep the row, as YCSB does.
                Some(list) => {
                    parse_hmget(&mut r, list, &mut row.fields)?;
                    true
                }
            };
            if present {
                scan.out.push(row);
            }
        }
        debug_assert!(scan.out.len() >= before);
        Ok(Status::Ok)
    }

    async fn update_now(&mut self, key: &str, values: &[FieldValue]) -> OpResult<Status> {
        if values.is_empty() {
            return self.exists(key).await;
        }
        match self.mode {
            RedisMode::Hash if !self.checked => {
                self.hset(key, values);
                let reply = self.t.call(1).await?;
                int_reply(&mut Reader::new(reply))?;
                Ok(Status::Ok)
            }
            RedisMode::Hash => {
                let names = &self.fields.names;
                let encode_args = |req: &mut Vec<u8>| {
                    resp::arg(req, b"1");
                    resp::arg(req, key.as_bytes());
                    for v in values {
                        resp::arg(req, &names[v.field]);
                        resp::arg(req, &v.value);
                    }
                };
                let argc = 2 + 2 * values.len();
                let n = eval_on(&mut self.t, UPDATE_SHA, UPDATE_SCRIPT, encode_args, argc).await?;
                Ok(if n == 0 { Status::NotFound } else { Status::Ok })
            }
            RedisMode::String => {
                // The last value for field 0 wins, as it would in a hash.
                let value = &values[values.len() - 1].value;
                let req = self.t.request();
                if self.checked {
                    resp::encode(req, &[b"SET", key.as_bytes(), value, b"XX"]);
                } else {
                    resp::encode(req, &[b"SET", key.as_bytes(), value]);
                }
                let reply = self.t.call(1).await?;
                match Reader::new(reply).next().map_err(proto_err)? {
                    Item::Simple(_) => Ok(Status::Ok),
                    Item::Bulk(None) => Ok(Status::NotFound),
                    Item::Error(e) => Err(server_err(e)),
                    other => Err(proto_err(format!("expected OK, got {other:?}"))),
                }
            }
        }
    }

    async fn insert_now(&mut self, key: &str, values: &[FieldValue]) -> OpResult<Status> {
        if values.is_empty() {
            // A hash with no fields does not exist in Redis, and a string
            // record is its one field.
            return Err(OpError {
                status: Status::BadRequest,
                message: "a record with no fields cannot be stored".into(),
            });
        }
        match self.mode {
            RedisMode::Hash if !self.checked => {
                // YCSB's two commands in one round trip.
                self.hset(key, values);
                let score = java_hash(key);
                let req = self.t.request_continue();
                resp::command(req, 4);
                resp::arg(req, b"ZADD");
                resp::arg(req, INDEX_KEY.as_bytes());
                resp::arg_int(req, i64::from(score));
                resp::arg(req, key.as_bytes());
                let reply = self.t.call(2).await?;
                let mut r = Reader::new(reply);
                int_reply(&mut r)?;
                int_reply(&mut r)?;
                Ok(Status::Ok)
            }
            RedisMode::Hash => {
                let names = &self.fields.names;
                let score = java_hash(key);
                let encode_args = |req: &mut Vec<u8>| {
                    resp::arg(req, b"2");
                    resp::arg(req, key.as_bytes());
                    resp::arg(req, INDEX_KEY.as_bytes());
                    resp::arg_int(req, i64::from(score));
                    for v in values {
                        resp::arg(req, &names[v.field]);
                        resp::arg(req, &v.value);
                    }
                };
                let argc = 4 + 2 * values.len();
                eval_on(&mut self.t, INSERT_SHA, INSERT_SCRIPT, encode_args, argc).await?;
                Ok(Status::Ok)
            }
            RedisMode::String => {
                let value = &values[values.len() - 1].value;
                resp::encode(self.t.request(), &[b"SET", key.as_bytes(), value]);
                let reply = self.t.call(1).await?;
                match Reader::new(reply).next().map_err(proto_err)? {
                    Item::Simple(_) => Ok(Status::Ok),
                    Item::Error(e) => Err(server_err(e)),
                    other => Err(proto_err(format!("expected OK, got {other:?}"))),
                }
            }
        }
    }

    async fn delete_now(&mut self, key: &str) -> OpResult<Status> {
        let req = self.t.request();
        resp::encode(req, &[b"DEL", key.as_bytes()]);
        let replies = match self.mode {
            RedisMode::Hash => {
                resp::encode(req, &[b"ZREM", INDEX_KEY.as_bytes(), key.as_bytes()]);
                2
            }
            RedisMode::String => 1,
        };
        let reply = self.t.call(replies).await?;
        let mut r = Reader::new(reply);
        let deleted = int_reply(&mut r)?;
        if replies == 2 {
            int_reply(&mut r)?;
        }
        Ok(if deleted == 0 {
            Status::NotFound
        } else {
            Status::Ok
        })
    }
}

/// Run a script by digest, falling back to sending its text when the
/// server has lost it (restarted, or `SCRIPT FLUSH`). `encode_args` writes
/// the `argc` arguments after the script (numkeys, keys, argv).
async fn eval_on(
    t: &mut Transport<Resp>,
    sha: &str,
    script: &str,
    encode_args: impl Fn(&mut Vec<u8>),
    argc: usize,
) -> OpResult<i64> {
    for attempt in 0..2 {
        let req = t.request();
        resp::command(req, 2 + argc);
        if attempt == 0 {
            resp::arg(req, b"EVALSHA");
            resp::arg(req, sha.as_bytes());
        } else {
            resp::arg(req, b"EVAL");
            resp::arg(req, script.as_bytes());
        }
        encode_args(req);
        let reply = t.call(1).await?;
        match Reader::new(reply).next().map_err(proto_err)? {
            Item::Int(n) => return Ok(n),
            Item::Error(e) if attempt == 0 && e.starts_with(b"NOSCRIPT") => continue,
            Item::Error(e) => return Err(server_err(e)),
            other => return Err(proto_err(format!("expected an integer, got {other:?}"))),
        }
    }
    Err(OpError::error("the server does not accept the script"))
}

/// `HGETALL`'s reply into `out`, in field order; NOT_FOUND when empty.
/// Fields the schema does not name (written by another tool) are skipped.
fn parse_hgetall(
    r: &mut Reader<'_>,
    names: &FieldNames,
    out: &mut Vec<FieldValue>,
) -> OpResult<Status> {
    let n = match r.next().map_err(proto_err)? {
        Item::Array(n) => n.unwrap_or(0),
        Item::Error(e) => return Err(server_err(e)),
        other => return Err(proto_err(format!("expected a hash, got {other:?}"))),
    };
    if n == 0 {
        return Ok(Status::NotFound);
    }
    let before = out.len();
    for _ in 0..n / 2 {
        let (Item::Bulk(Some(name)), Item::Bulk(Some(value))) =
            (r.next().map_err(proto_err)?, r.next().map_err(proto_err)?)
        else {
            out.truncate(before);
            return Err(proto_err("a hash field that is not a string".into()));
        };
        if let Some(field) = names.index(name) {
            out.push(FieldValue::copied(field, value));
        }
    }
    // Small hashes come back in insertion order, large ones in any order.
    let added = &mut out[before..];
    if !added.windows(2).all(|w| w[0].field < w[1].field) {
        added.sort_by_key(|f| f.field);
    }
    Ok(Status::Ok)
}

/// `HMGET`'s reply into `out`, in the order asked; returns how many fields
/// were present.
fn parse_hmget(r: &mut Reader<'_>, list: &[usize], out: &mut Vec<FieldValue>) -> OpResult<usize> {
    match r.next().map_err(proto_err)? {
        Item::Array(Some(n)) if n == list.len() => {}
        Item::Error(e) => return Err(server_err(e)),
        other => {
            return Err(proto_err(format!(
                "expected {} values, got {other:?}",
                list.len()
            )))
        }
    }
    let mut found = 0;
    for &field in list {
        match r.next().map_err(proto_err)? {
            Item::Bulk(Some(value)) => {
                out.push(FieldValue::copied(field, value));
                found += 1;
            }
            Item::Bulk(None) => {}
            other => return Err(proto_err(format!("expected a value, got {other:?}"))),
        }
    }
    Ok(found)
}

wire::settled_by_the_transport!(RedisConnection);

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

wire::vote_on_a_cache!(RedisConnection);

#[cfg(test)]
mod tests {
    use sojourn_core::properties::Properties;

    use super::*;

    #[test]
    fn java_string_hash_code() {
        // Values of Java's "...".hashCode().
        assert_eq!(java_hash(""), 0);
        assert_eq!(java_hash("a"), 97);
        assert_eq!(java_hash("user1"), 111_578_566);
        assert_eq!(java_hash("user6284781860667377211"), -594_971_599);
        assert_eq!(java_hash("h\u{e9}"), 3457);
        assert_eq!(
            java_hash("h\u{e9}llo \u{1F600}"),
            java_hash_utf16("h\u{e9}llo \u{1F600}")
        );
    }

    fn java_hash_utf16(s: &str) -> i32 {
        s.encode_utf16()
            .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(c as i32))
    }

    #[test]
    fn urls() {
        let o = parse_url("redis://127.0.0.1:7000").unwrap();
        assert_eq!((o.host.as_str(), o.port, o.db), ("127.0.0.1", 7000, 0));
        assert_eq!(o.password, None);
        let o = parse_url("redis://:p%40ss@localhost/3").unwrap();
        assert_eq!((o.host.as_str(), o.port, o.db), ("localhost", 6379, 3));
        assert_eq!(o.password.as_deref(), Some("p@ss"));
        assert_eq!(o.user, None);
        let o = parse_url("redis://bob:se:cr@t@[::1]:6380/1").unwrap();
        assert_eq!((o.host.as_str(), o.port, o.db), ("::1", 6380, 1));
        assert_eq!(o.user.as_deref(), Some("bob"));
        assert_eq!(o.password.as_deref(), Some("se:cr@t"));
        assert!(parse_url("redis://host:0").is_err());
        assert!(parse_url("redis://host:x").is_err());
        assert!(parse_url("redis://host/x").is_err());
        assert!(parse_url("redis://host?x=1").is_err());
        assert_eq!(
            parse_url("rediss://host").unwrap().tls,
            Some(TlsOptions::default())
        );
        assert_eq!(parse_url("redis://host").unwrap().tls, None);
        assert!(parse_url("redis://").is_err());
    }

    #[test]
    fn several_nodes_take_a_connection_each_in_turn() {
        let o = parse_url("redis://:pw@127.0.0.1:7000,localhost,[::1]:7002/1").unwrap();
        assert_eq!((o.host.as_str(), o.port, o.db), ("127.0.0.1", 7000, 1));
        assert_eq!(
            o.more_nodes,
            [("localhost".to_string(), 6379), ("::1".to_string(), 7002)]
        );
        assert_eq!(o.password.as_deref(), Some("pw"));
        for bad in ["redis://h1,", "redis://h1,h2:x", "redis://,h2"] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
        let b = RedisBackend::open(
            "redis://bob:hunter2@127.0.0.1:7000,localhost:7001",
            &OpenOptions::new(&props(&[])),
        )
        .unwrap();
        assert_eq!(b.describe(), "redis://bob@127.0.0.1:7000,localhost:7001");
        assert_eq!(b.nodes().count(), 2);
        // Shared sockets are sized for one node's connections.
        let e = options("redis://h1,h2", &["connections=2"], 8).unwrap_err();
        assert!(e.contains("connections=2") && e.contains("2 nodes"), "{e}");
    }

    fn props(pairs: &[&str]) -> Properties {
        let mut p = Properties::new();
        for kv in pairs {
            p.set_arg(kv).unwrap();
        }
        p
    }

    /// Options of `url` with `pairs`, for a run of `workers` connections.
    fn options(url: &str, pairs: &[&str], workers: usize) -> Result<RedisOptions, String> {
        let props = props(pairs);
        RedisOptions::from_url(
            url,
            &OpenOptions {
                workers,
                ..OpenOptions::new(&props)
            },
        )
    }

    #[test]
    fn url_forms() {
        for url in ["redis", "Redis:", "redis://h:1/2"] {
            assert!(options(url, &[], 1).is_ok(), "{url}");
        }
        for url in ["rediss", "redis:host"] {
            assert!(options(url, &[], 1).is_err(), "{url}");
        }
    }

    #[test]
    fn ycsb_properties() {
        let o = options(
            "redis",
            &[
                "redis.host=127.0.0.1",
                "redis.port=7001",
                "redis.password=pw",
            ],
            1,
        )
        .unwrap();
        assert_eq!((o.host.as_str(), o.port), ("127.0.0.1", 7001));
        assert_eq!(o.password.as_deref(), Some("pw"));
        assert_eq!(o.mode, RedisMode::Hash);
        assert_eq!(o.timeout, DEFAULT_TIMEOUT);
        let o = options(
            "redis://h:1/2",
            &["redis.mode=STRING", "redis.timeout=300"],
            1,
        )
        .unwrap();
        assert_eq!(o.mode, RedisMode::String);
        assert_eq!(o.timeout, Duration::from_millis(300));
        // The Tair whitepaper's command line: its build's name for the layout.
        let o = options(
            "redis",
            &["redis.command_group=string", "redis.timeout=30000"],
            1,
        )
        .unwrap();
        assert_eq!(o.mode, RedisMode::String);
        assert!(options("redis", &["redis.command_group=list"], 1).is_err());
        assert!(options(
            "redis",
            &["redis.command_group=string", "redis.mode=hash"],
            1
        )
        .is_err());
        let o = options(
            "redis",
            &["timeout.ms=50", "redis.timeout=300", "connections=2"],
            16,
        )
        .unwrap();
        assert_eq!(o.timeout, Duration::from_millis(50));
        assert_eq!(
            o.sharing,
            Some(Sharing {
                workers: 16,
                sockets: 2
            })
        );
        // As many sockets as connections is the plain topology.
        let o = options("redis", &["connections=4"], 4).unwrap();
        assert_eq!(o.sharing, None);
        for bad in [
            &["redis.mode=list"][..],
            &["redis.port=70000"],
            &["connections=0"],
            &["timeout.ms=0"],
            &["redis.cluster=true"],
        ] {
            assert!(options("redis", bad, 1).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn describe_hides_the_password() {
        let props = props(&["connections=2"]);
        let b = RedisBackend::open(
            "redis://bob:hunter2@127.0.0.1:7000/2",
            &OpenOptions {
                workers: 16,
                ..OpenOptions::new(&props)
            },
        )
        .unwrap();
        let d = b.describe();
        assert_eq!(
            d,
            "redis://bob@127.0.0.1:7000/2 (16 in flight over 2 connections)"
        );
        assert!(!format!("{b:?}").contains("hunter2"));
    }
}
