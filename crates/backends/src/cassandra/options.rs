//! What a Cassandra backend is configured with, from its URL
//! (`cassandra://[user[:password]@]host[:port][,host[:port]...]/keyspace`)
//! or YCSB's `cassandra-cql` binding properties (`hosts`, `port`,
//! `cassandra.*`), and the run's properties.

use std::num::NonZeroUsize;
use std::time::Duration;

use scylla::statement::Consistency;
use sojourn_core::properties::{Properties, PropertyError};
use sojourn_core::redact::redact_url;

use crate::pool::{self, PoolOptions, SETUP_TIMEOUT};
use crate::{tls_props, url, OpenOptions};

/// CQL's native protocol port.
pub const DEFAULT_PORT: u16 = 9042;
/// YCSB's `cassandra.keyspace` default.
pub const DEFAULT_KEYSPACE: &str = "ycsb";
/// YCSB's default for both consistency levels.
pub const DEFAULT_CONSISTENCY: Consistency = Consistency::Quorum;

/// Where a bare `cassandra-cql` (or `cassandra`) finds what the URL would
/// say, in YCSB's binding's names.
pub const HOSTS: &str = "hosts";
pub const PORT: &str = "port";

/// The forms of a URL, for messages. (Written without a `user:password@`,
/// which every message shows as `user:***@`.)
pub const URL_FORM: &str =
    "cassandra://[user@]host[:port][,host[:port]...]/keyspace (the password after user: or in \
     $CASSANDRA_PASSWORD), or cassandra-cql with -p hosts=HOST[,HOST...] [-p port=PORT] \
     [-p cassandra.keyspace=KEYSPACE]";

/// The consistency levels a read or write may ask for (the serial ones
/// are for lightweight transactions only).
const CONSISTENCIES: &[(&str, Consistency)] = &[
    ("ANY", Consistency::Any),
    ("ONE", Consistency::One),
    ("TWO", Consistency::Two),
    ("THREE", Consistency::Three),
    ("QUORUM", Consistency::Quorum),
    ("ALL", Consistency::All),
    ("LOCAL_QUORUM", Consistency::LocalQuorum),
    ("EACH_QUORUM", Consistency::EachQuorum),
    ("LOCAL_ONE", Consistency::LocalOne),
];

/// Everything a Cassandra backend is configured with.
#[derive(Clone)]
pub struct CassandraOptions {
    /// `host:port` of each contact point.
    pub hosts: Vec<String>,
    pub keyspace: String,
    pub user: Option<String>,
    pub password: Option<String>,
    pub read_consistency: Consistency,
    pub write_consistency: Consistency,
    /// Per-operation timeout (`timeout.ms`, or `cassandra.readtimeoutmillis`).
    pub timeout: Duration,
    /// How long opening a connection to a node may take.
    pub connect_timeout: Duration,
    /// Connections of each session to each node; `None`: the driver's
    /// (one per node, one per shard on ScyllaDB).
    pub connections_per_node: Option<NonZeroUsize>,
    /// The replication factor of a keyspace `load` creates; `None`: the
    /// cluster's node count, at most 3.
    pub replication_factor: Option<u32>,
    /// `cassandra.tracing`: the server traces every operation.
    pub tracing: bool,
    pub tls: Option<TlsOptions>,
    /// The URL as shown: without its password.
    pub shown: String,
}

/// How a TLS connection authenticates the node, and itself.
pub use sojourn_tls::ClientFiles as TlsOptions;

impl std::fmt::Debug for CassandraOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CassandraOptions")
            .field("hosts", &self.hosts)
            .field("keyspace", &self.keyspace)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "***"))
            .field("read_consistency", &self.read_consistency)
            .field("write_consistency", &self.write_consistency)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl CassandraOptions {
    /// From a `cassandra://` URL, or YCSB's binding name with its
    /// properties, and the run's properties.
    pub fn from_url(url: &str, options: &OpenOptions<'_>) -> Result<CassandraOptions, String> {
        let props = options.props;
        let prop = |e: PropertyError| e.to_string();
        let (hosts, keyspace, user, password, shown) = match url::split(url) {
            (_, None | Some("")) => {
                let Some(list) = props.get(HOSTS).filter(|h| !h.trim().is_empty()) else {
                    return Err(format!(
                        "-p {HOSTS}=HOST[,HOST...] is needed with `{url}` (YCSB's cassandra-cql \
                         binding), or give a URL: {URL_FORM}"
                    ));
                };
                let port = props
                    .get_u64_in(PORT, DEFAULT_PORT.into(), 1..=65535)
                    .map_err(prop)?;
                let hosts = host_list(list, port as u16)?;
                let keyspace = props
                    .get_str("cassandra.keyspace", DEFAULT_KEYSPACE)
                    .trim()
                    .to_string();
                let shown = format!("cassandra://{}/{keyspace}", hosts.join(","));
                (hosts, keyspace, None, None, shown)
            }
            (_, Some(rest)) if rest.starts_with("//") => parse_url(url, props)?,
            _ => return Err(format!("expected {URL_FORM}")),
        };
        check_name("keyspace", &keyspace)?;
        let user = user.or_else(|| {
            props
                .get("cassandra.username")
                .map(|u| u.trim().to_string())
                .filter(|u| !u.is_empty())
        });
        let password = password
            .or_else(|| props.get("cassandra.password").map(str::to_string))
            .or_else(|| std::env::var("CASSANDRA_PASSWORD").ok())
            .filter(|p| !p.is_empty());
        if let (Some(user), None) = (&user, &password) {
            return Err(format!(
                "user {user} has no password: give it in the URL, as -p cassandra.password=... \
                 or in $CASSANDRA_PASSWORD"
            ));
        }
        let consistency = |key: &str| -> Result<Consistency, String> {
            let names: Vec<&str> = CONSISTENCIES.iter().map(|(n, _)| *n).collect();
            let name = props.get_choice(key, "QUORUM", &names).map_err(prop)?;
            Ok(CONSISTENCIES
                .iter()
                .find(|(n, _)| *n == name)
                .map_or(DEFAULT_CONSISTENCY, |(_, c)| *c))
        };
        let read_consistency = consistency("cassandra.readconsistencylevel")?;
        let write_consistency = consistency("cassandra.writeconsistencylevel")?;
        if read_consistency == Consistency::Any {
            return Err(props
                .invalid(
                    "cassandra.readconsistencylevel",
                    "ANY is for writes only; reads take ONE, QUORUM, LOCAL_QUORUM, ALL, ...",
                )
                .to_string());
        }
        if props.contains("connections") {
            return Err(props
                .invalid(
                    "connections",
                    "does not apply to CQL: every connection of a runtime thread is multiplexed \
                     over one session already (set the sessions with runtime.threads, their \
                     connections to each node with cassandra.maxconnections)",
                )
                .to_string());
        }
        let pool = PoolOptions::from_properties(
            props,
            Some("cassandra.readtimeoutmillis"),
            options.workers,
        )?;
        let connect_timeout = match props.get("cassandra.connecttimeoutmillis") {
            None => SETUP_TIMEOUT,
            Some(_) => Duration::from_millis(
                props
                    .get_u64_in("cassandra.connecttimeoutmillis", 0, 1..)
                    .map_err(prop)?,
            ),
        };
        // YCSB's binding sizes the Java driver's pool by these two; the Rust
        // driver keeps a fixed number per node, so the larger one is it.
        let mut connections_per_node = None;
        for key in ["cassandra.coreconnections", "cassandra.maxconnections"] {
            if props.contains(key) {
                let n = props.get_u64_in(key, 1, 1..=1024).map_err(prop)?;
                let n = NonZeroUsize::new(n as usize).expect("at least 1");
                connections_per_node =
                    Some(connections_per_node.map_or(n, |m: NonZeroUsize| m.max(n)));
            }
        }
        let replication_factor = match props.get("cassandra.replicationfactor") {
            None => None,
            Some(_) => Some(
                props
                    .get_u64_in("cassandra.replicationfactor", 1, 1..=100)
                    .map_err(prop)? as u32,
            ),
        };
        Ok(CassandraOptions {
            hosts,
            keyspace: keyspace.to_ascii_lowercase(),
            user,
            password,
            read_consistency,
            write_consistency,
            timeout: pool.timeout,
            connect_timeout,
            connections_per_node,
            replication_factor,
            tracing: props.get_bool("cassandra.tracing", false).map_err(prop)?,
            tls: tls(props)?,
            shown,
        })
    }

    /// What `CassandraBackend::describe` shows: the URL
    /// without its password, the consistency levels and the topology.
    pub fn describe(&self) -> String {
        let mut notes = vec![
            format!(
                "reads {}, writes {}",
                name(self.read_consistency),
                name(self.write_consistency)
            ),
            "a session per runtime thread".to_string(),
        ];
        if let Some(n) = self.connections_per_node {
            notes.push(format!("{n} connections per node and session"));
        }
        if self.tls.is_some() {
            notes.push("TLS".to_string());
        }
        pool::describe(self.shown.clone(), notes)
    }
}

/// The name of a consistency level, as CQL spells it.
pub fn name(c: Consistency) -> &'static str {
    CONSISTENCIES
        .iter()
        .find(|(_, l)| *l == c)
        .map_or("?", |(n, _)| n)
}

/// `cassandra://[user[:password]@]host[:port][,host[:port]...]/keyspace`:
/// the hosts, keyspace, user, password and the URL as shown.
#[allow(clippy::type_complexity)]
fn parse_url(
    url: &str,
    props: &Properties,
) -> Result<(Vec<String>, String, Option<String>, Option<String>, String), String> {
    let (_, rest) = url
        .split_once("://")
        .ok_or_else(|| format!("expected {URL_FORM}"))?;
    if rest.contains(['?', '#']) {
        return Err("options in the URL are not supported; use -p cassandra.* properties".into());
    }
    // The user-info ends at the last `@` (passwords may contain `@`).
    let (userinfo, hostpart) = match rest.rfind('@') {
        Some(at) => (Some(&rest[..at]), &rest[at + 1..]),
        None => (None, rest),
    };
    let (authority, keyspace) = match hostpart.split_once('/') {
        Some((a, k)) => (a, k.trim_end_matches('/')),
        None => (hostpart, ""),
    };
    let keyspace = match (keyspace, props.get("cassandra.keyspace").map(str::trim)) {
        ("", None) => DEFAULT_KEYSPACE.to_string(),
        ("", Some(k)) => k.to_string(),
        (k, Some(p)) if !p.eq_ignore_ascii_case(k) => {
            return Err(format!(
                "the URL names keyspace {k} and cassandra.keyspace={p}; give one of them"
            ))
        }
        (k, _) => k.to_string(),
    };
    let port = props
        .get_u64_in(PORT, DEFAULT_PORT.into(), 1..=65535)
        .map_err(|e| e.to_string())?;
    let hosts = host_list(authority, port as u16)?;
    let (user, password) = match userinfo {
        None => (None, None),
        Some(info) => {
            let (u, p) = match info.split_once(':') {
                Some((u, p)) => (u, Some(p)),
                None => (info, None),
            };
            (
                Some(url::decode_userinfo(u)?).filter(|u| !u.is_empty()),
                p.map(url::decode_userinfo).transpose()?,
            )
        }
    };
    Ok((hosts, keyspace, user, password, redact_url(url.trim())))
}

/// `host[:port],...` as `host:port` strings, `port` where none is given.
fn host_list(list: &str, port: u16) -> Result<Vec<String>, String> {
    let hosts: Vec<String> = list
        .split(',')
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .map(|h| {
            let (host, port) = url::split_host_port(h, port)?;
            Ok(if host.contains(':') {
                format!("[{host}]:{port}")
            } else {
                format!("{host}:{port}")
            })
        })
        .collect::<Result<_, String>>()?;
    if hosts.is_empty() {
        return Err("no host to connect to".into());
    }
    Ok(hosts)
}

/// Refuse a keyspace or table name CQL would need quoted: sojourn writes
/// names unquoted, as YCSB's binding and cqlsh users do, so that both name
/// the same (case-folded) object.
pub fn check_name(what: &str, name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let ok = name.len() <= 48
        && chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{what} name `{name}` is not a plain CQL name (a letter, then letters, digits and \
             `_`, at most 48 characters)"
        ))
    }
}

/// TLS from `cassandra.useSSL` (YCSB's) or any `cassandra.tls.*`.
fn tls(props: &Properties) -> Result<Option<TlsOptions>, String> {
    let on = props
        .get_bool("cassandra.useSSL", false)
        .map_err(|e: PropertyError| e.to_string())?;
    let tls = tls_props::client_files(props, "cassandra")?;
    if !on {
        if let Some(key) = tls_props::stray_key(props, "cassandra") {
            return Err(format!(
                "{key} is set but TLS is not on; add -p cassandra.useSSL=true"
            ));
        }
        return Ok(None);
    }
    tls_props::check_pair(&tls, "cassandra")?;
    Ok(Some(tls))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sojourn_core::properties::Origin;

    fn props(pairs: &[(&str, &str)]) -> Properties {
        let mut p = Properties::new();
        for (k, v) in pairs {
            p.set(k, v, Origin::Flag("-p"));
        }
        p
    }

    fn open(url: &str, pairs: &[(&str, &str)]) -> Result<CassandraOptions, String> {
        let p = props(pairs);
        CassandraOptions::from_url(url, &OpenOptions::new(&p))
    }

    #[test]
    fn urls_with_hosts_users_and_keyspaces() {
        let o = open("cassandra://u:p%40ss@h1,h2:9043,[::1]/KS1", &[]).unwrap();
        assert_eq!(o.hosts, ["h1:9042", "h2:9043", "[::1]:9042"]);
        assert_eq!(o.keyspace, "ks1");
        assert_eq!(o.user.as_deref(), Some("u"));
        assert_eq!(o.password.as_deref(), Some("p@ss"));
        assert_eq!(o.shown, "cassandra://u:***@h1,h2:9043,[::1]/KS1");
        assert!(!o.describe().contains("p@ss"), "{}", o.describe());
        assert!(!format!("{o:?}").contains("p@ss"));
        let o = open("cassandra://127.0.0.1", &[]).unwrap();
        assert_eq!((o.keyspace.as_str(), o.user), ("ycsb", None));
        assert_eq!(o.read_consistency, Consistency::Quorum);
        assert!(open("cassandra://h/bad-name", &[]).is_err());
        let e = open("cassandra://h/a", &[("cassandra.keyspace", "b")]).unwrap_err();
        assert!(e.contains("give one of them"), "{e}");
        let e = open("cassandra://u@h/a", &[]).unwrap_err();
        assert!(e.contains("has no password"), "{e}");
    }

    #[test]
    fn ycsb_properties() {
        let o = open(
            "cassandra-cql",
            &[
                ("hosts", "10.0.0.1, 10.0.0.2"),
                ("port", "19042"),
                ("cassandra.keyspace", "bench"),
                ("cassandra.username", "u"),
                ("cassandra.password", "secret"),
                ("cassandra.readconsistencylevel", "one"),
                ("cassandra.writeconsistencylevel", "LOCAL_QUORUM"),
                ("cassandra.readtimeoutmillis", "750"),
                ("cassandra.maxconnections", "4"),
                ("cassandra.coreconnections", "2"),
            ],
        )
        .unwrap();
        assert_eq!(o.hosts, ["10.0.0.1:19042", "10.0.0.2:19042"]);
        assert_eq!(o.keyspace, "bench");
        assert_eq!(o.password.as_deref(), Some("secret"));
        assert_eq!(o.read_consistency, Consistency::One);
        assert_eq!(o.write_consistency, Consistency::LocalQuorum);
        assert_eq!(o.timeout, Duration::from_millis(750));
        assert_eq!(o.connections_per_node.map(|n| n.get()), Some(4));
        assert_eq!(o.shown, "cassandra://10.0.0.1:19042,10.0.0.2:19042/bench");
        assert_eq!(
            o.describe(),
            "cassandra://10.0.0.1:19042,10.0.0.2:19042/bench (reads ONE, writes LOCAL_QUORUM; \
             a session per runtime thread; 4 connections per node and session)"
        );
        let e = open("cassandra-cql", &[]).unwrap_err();
        assert!(e.contains("-p hosts="), "{e}");
        let e = open(
            "cassandra-cql",
            &[("hosts", "h"), ("cassandra.readconsistencylevel", "SERIAL")],
        )
        .unwrap_err();
        assert!(e.contains("LOCAL_QUORUM"), "{e}");
        let e = open("cassandra-cql", &[("hosts", "h"), ("connections", "2")]).unwrap_err();
        assert!(e.contains("runtime.threads"), "{e}");
        let e = open(
            "cassandra-cql",
            &[("hosts", "h"), ("cassandra.tls.ca", "x")],
        )
        .unwrap_err();
        assert!(e.contains("cassandra.useSSL=true"), "{e}");
    }
}
