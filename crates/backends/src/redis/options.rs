//! What a Redis backend is configured with, and from where: the URL
//! (`redis://`, `rediss://`, several nodes), YCSB's `redis.*` properties,
//! the run's `connections` and `timeout.ms`.
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
//! Per-operation timeout: `timeout.ms` (default 2000), else YCSB's
//! `redis.timeout`. A timed-out operation is an ERROR and the run goes on.

use std::time::Duration;

use sojourn_core::properties::PropertyError;

use crate::pipelined::{addr, split_host_port};
use crate::pool::{PoolOptions, Sharing, DEFAULT_TIMEOUT};
use crate::{tls_props, url, OpenOptions};

const DEFAULT_PORT: u16 = 6379;

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
        match &mut o.tls {
            Some(tls) => {
                *tls = tls_props::client_files(props, "redis")?;
                tls_props::check_pair(tls, "redis")?;
            }
            None => {
                if let Some(key) = tls_props::stray_key(props, "redis") {
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
pub(super) fn parse_url(url: &str) -> Result<RedisOptions, String> {
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
        let user = url::decode_userinfo(user)?;
        o.user = (!user.is_empty()).then_some(user);
        o.password = password
            .map(url::decode_userinfo)
            .transpose()?
            .filter(|p| !p.is_empty());
    }
    Ok(o)
}

/// The server's URL, without a password.
pub(super) fn target(opts: &RedisOptions) -> String {
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
