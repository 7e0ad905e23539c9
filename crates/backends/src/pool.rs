//! The connection settings every networked backend reads the same way: the
//! operation timeout (`timeout.ms`, or the YCSB binding's own key for it),
//! `connections=K`, the sockets that the run's N connections share, and
//! the time allowed for connecting and setting tables up.
//!
//! N is the number of connections the run opens, from the plan
//! ([`OpenOptions::workers`](crate::OpenOptions)): `threadcount` is not read
//! again here, so a plan that sizes its pools otherwise (reader and writer
//! groups, a suite's clients) gets sockets for the connections it opens.

use std::fmt;
use std::future::Future;
use std::time::Duration;

use sojourn_core::backend::guard::Guard;
use sojourn_core::backend::{BackendError, Schema, Threading};
use sojourn_core::properties::Properties;

/// Per-operation timeout when none is given.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(2000);

/// A backend's description: its target, then the settings that change
/// what a run measures (`redis.checked=true`, the shared sockets), so that
/// a report says which variant ran.
pub(crate) fn describe(target: String, notes: impl IntoIterator<Item = String>) -> String {
    let notes: Vec<String> = notes.into_iter().collect();
    if notes.is_empty() {
        target
    } else {
        format!("{target} ({})", notes.join("; "))
    }
}

/// The least time allowed for connecting and for table setup, which run
/// outside the measured phase and may meet a server busy with other work.
pub(crate) const SETUP_TIMEOUT: Duration = Duration::from_secs(10);

/// What a backend shows of itself and how long its operations may take:
/// all of it that `Debug` shows, since the rest of a backend's
/// configuration holds the password.
#[derive(Debug)]
pub(crate) struct Target {
    /// The URL, redacted, and the topology.
    pub(crate) describe: String,
    pub(crate) timeout: Duration,
}

impl Target {
    /// The guard of a connection for `schema`'s table.
    pub(crate) fn guard(&self, schema: &Schema) -> Guard {
        Guard::new(schema.field_count(), Some(self.timeout))
    }

    pub(crate) fn setup_error(&self, message: impl std::fmt::Display) -> BackendError {
        BackendError::Setup {
            target: self.describe.clone(),
            message: message.to_string(),
        }
    }

    /// `connect` for setup, bounded in time; why it failed is `text`.
    pub(crate) async fn connect<T, E>(
        &self,
        connect: impl Future<Output = Result<T, E>>,
        text: impl FnOnce(E) -> String,
    ) -> Result<T, BackendError> {
        let limit = self.timeout.max(SETUP_TIMEOUT);
        let message = match tokio::time::timeout(limit, connect).await {
            Ok(Ok(connected)) => return Ok(connected),
            Ok(Err(e)) => text(e),
            Err(_) => format!("no answer within {limit:?}"),
        };
        Err(BackendError::Connect {
            target: self.describe.clone(),
            message,
        })
    }
}

/// N connections over K sockets (K < N), their requests pipelined.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Sharing {
    /// Connections the run opens.
    pub workers: usize,
    /// Sockets they share.
    pub sockets: usize,
}

/// What connections over `sharing`'s sockets (or sockets of their own)
/// ask of the runtime threads.
pub(crate) fn threading(sharing: Option<Sharing>) -> Threading {
    sharing.map_or(Threading::Remote, |s| Threading::Sockets(s.sockets))
}

impl Sharing {
    /// Connections per socket, rounded up.
    pub fn per_socket(&self) -> usize {
        self.workers.div_ceil(self.sockets)
    }
}

impl fmt::Display for Sharing {
    /// As `describe` records the topology: `16 in flight over 2 connections`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = if self.sockets == 1 { "" } else { "s" };
        write!(
            f,
            "{} in flight over {} connection{plural}",
            self.workers, self.sockets
        )
    }
}

/// The pool settings of one backend.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PoolOptions {
    pub timeout: Duration,
    /// `None`: a socket per connection.
    pub sharing: Option<Sharing>,
}

impl PoolOptions {
    /// From the run's properties, `alias` being the YCSB binding's own
    /// timeout key (`redis.timeout`, ...), for a run of `workers`
    /// connections.
    pub fn from_properties(
        props: &Properties,
        alias: Option<&str>,
        workers: usize,
    ) -> Result<PoolOptions, String> {
        Ok(PoolOptions {
            timeout: timeout(props, alias)?,
            sharing: sharing(props, workers)?,
        })
    }
}

/// `timeout.ms`, else `alias`, in milliseconds (at least one).
pub(crate) fn timeout(props: &Properties, alias: Option<&str>) -> Result<Duration, String> {
    let key = match alias {
        Some(alias) if !props.contains("timeout.ms") && props.contains(alias) => alias,
        _ => "timeout.ms",
    };
    let default = DEFAULT_TIMEOUT.as_millis() as u64;
    match props.get_u64(key, default).map_err(|e| e.to_string())? {
        0 => Err(props
            .invalid(key, "must be a positive number of milliseconds")
            .to_string()),
        ms => Ok(Duration::from_millis(ms)),
    }
}

/// `connections=K` for a run of `workers` connections; as many sockets as
/// connections (or more) is a socket per connection.
fn sharing(props: &Properties, workers: usize) -> Result<Option<Sharing>, String> {
    if !props.contains("connections") {
        return Ok(None);
    }
    let sockets = props.get_u64("connections", 0).map_err(|e| e.to_string())?;
    if sockets == 0 {
        return Err(props
            .invalid("connections", "must be at least 1")
            .to_string());
    }
    let workers = workers.max(1);
    let sockets = usize::try_from(sockets).unwrap_or(usize::MAX);
    Ok((sockets < workers).then_some(Sharing { workers, sockets }))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// Properties from `text`, one `key=value` a line.
    fn props(text: &str) -> Properties {
        let mut p = Properties::new();
        p.load_str(text, Path::new("test.properties")).unwrap();
        p
    }

    #[test]
    fn timeouts_and_aliases() {
        let alias = Some("redis.timeout");
        let t = |text: &str| timeout(&props(text), alias);
        assert_eq!(t(""), Ok(DEFAULT_TIMEOUT));
        assert_eq!(t("redis.timeout=300"), Ok(Duration::from_millis(300)));
        assert_eq!(
            t("timeout.ms=50\nredis.timeout=300"),
            Ok(Duration::from_millis(50))
        );
        for bad in ["timeout.ms=0", "redis.timeout=0", "timeout.ms=x"] {
            let e = t(bad).unwrap_err();
            assert!(e.contains("timeout"), "{e}");
        }
    }

    #[test]
    fn sockets_shared_by_the_runs_connections() {
        let pool = |text: &str, workers| PoolOptions::from_properties(&props(text), None, workers);
        let sharing = pool("connections=2", 16).unwrap().sharing.expect("shared");
        assert_eq!(sharing.to_string(), "16 in flight over 2 connections");
        assert_eq!(sharing.per_socket(), 8);
        let one = Sharing {
            workers: 4,
            sockets: 1,
        };
        assert_eq!(one.to_string(), "4 in flight over 1 connection");
        // As many sockets as connections is a socket per connection.
        assert_eq!(pool("connections=4", 4).unwrap().sharing, None);
        assert!(pool("connections=0", 4).is_err());
        // `threadcount` is the plan's business, not the pool's.
        let o = pool("connections=2\nthreadcount=16", 1).unwrap();
        assert_eq!(o.sharing, None);
    }
}
