//! Where a PostgreSQL backend connects and what its connections share:
//! its URL rules, and the client configuration, TLS and timeout every
//! connection opens with.

use std::sync::Arc;

use tokio_postgres::Config;
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::sql::{Target, UrlRules};
use crate::vote_cache;

/// PostgreSQL's URLs. In a JDBC URL, pgjdbc's `ssl=true` means
/// `sslmode=require`.
pub(super) const URLS: UrlRules = UrlRules {
    schemes: &["postgres", "postgresql"],
    database: "PostgreSQL",
    example: "postgres://user:pass@host:port/db or jdbc:postgresql://host:port/db",
    native: "postgresql",
    ssl_mode: &["sslmode"],
    ssl_ca: &["sslrootcert"],
    jdbc_ssl: ("ssl", "require"),
};

pub(super) struct Inner {
    pub(super) config: Config,
    pub(super) tls: Option<MakeRustlsConnect>,
    /// Whether a socket of a connection's own is served by [`Lean`]: plain
    /// TCP to one host, for a workload of YCSB's operations (vote and
    /// LIOPS run theirs through tokio-postgres).
    pub(super) lean: bool,
    pub(super) target: Target,
    /// The vote run's cache (Noria's hybrid deployment).
    pub(super) cache: Option<Arc<vote_cache::Cache>>,
}
