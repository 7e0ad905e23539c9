//! What a memcached backend is configured with: the server from the URL or
//! `memcached.hosts`, the timeout, shared sockets and `memcached.checked`.

use std::time::Duration;

use crate::pipelined;
use crate::pool::{PoolOptions, Sharing, DEFAULT_TIMEOUT};
use crate::{url, OpenOptions};

pub(super) const DEFAULT_PORT: u16 = 11211;

/// Everything a memcached backend is configured with.
#[derive(Clone, Debug)]
pub struct MemcachedOptions {
    pub host: String,
    pub port: u16,
    pub timeout: Duration,
    /// The run's connections over fewer sockets (pipelined); `None` for a
    /// socket per connection.
    pub sharing: Option<Sharing>,
    /// `memcached.checked`: partial updates merged into the record by
    /// `gets`/`cas` rather than replacing it with the fields written.
    pub checked: bool,
}

impl MemcachedOptions {
    pub fn new(host: &str, port: u16) -> MemcachedOptions {
        MemcachedOptions {
            host: host.to_string(),
            port,
            timeout: DEFAULT_TIMEOUT,
            sharing: None,
            checked: false,
        }
    }

    /// From a `memcached://host[:port]` URL, or YCSB's binding name
    /// `memcached` with `memcached.hosts`, and the run's properties and
    /// connections.
    pub fn from_url(url: &str, options: &OpenOptions<'_>) -> Result<MemcachedOptions, String> {
        let props = options.props;
        let authority = match url::split(url).1 {
            None | Some("") => {
                let hosts = props.get_str("memcached.hosts", "localhost").trim();
                if hosts.contains(',') {
                    return Err(format!(
                        "memcached.hosts lists several servers ({hosts}); sojourn drives one \
                         memcached server per run"
                    ));
                }
                hosts
            }
            Some(rest) => {
                let rest = rest.strip_prefix("//").ok_or(
                    "expected memcached://host[:port], or `memcached` with \
                     -p memcached.hosts=host:port",
                )?;
                let rest = rest.strip_suffix('/').unwrap_or(rest);
                if rest.contains(['/', '?', '#', '@']) {
                    return Err(
                        "expected memcached://host[:port] with no path, options or user".into(),
                    );
                }
                rest
            }
        };
        let (host, port) = pipelined::split_host_port(authority, DEFAULT_PORT)?;
        let pool = PoolOptions::from_properties(
            props,
            Some("memcached.opTimeoutMillis"),
            options.workers,
        )?;
        let checked = props
            .get_bool("memcached.checked", false)
            .map_err(|e| e.to_string())?;
        Ok(MemcachedOptions {
            timeout: pool.timeout,
            sharing: pool.sharing,
            checked,
            ..MemcachedOptions::new(&host, port)
        })
    }
}
