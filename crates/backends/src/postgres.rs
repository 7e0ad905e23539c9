//! The PostgreSQL backend, for PostgreSQL and the databases that speak its
//! protocol (YugabyteDB YSQL, CockroachDB), through `tokio-postgres`.
//!
//! URL: `postgres://user:pass@host:port/db` (also `postgresql://`), or
//! YCSB's JDBC properties: `jdbc` with `-p db.url=jdbc:postgresql://host:port/db
//! -p db.user=... -p db.passwd=...`. The password comes from the URL, then
//! `db.passwd`, then the `PGPASSWORD` environment variable; the user from
//! the URL, then `db.user`, then `PGUSER`, else `postgres`. It never
//! appears in output ([`Backend::describe`] shows the URL redacted).
//!
//! TLS (rustls, no OpenSSL): `?sslmode=` `disable` (the default), `prefer`
//! or `require` (encrypted, certificate not checked, as libpq does),
//! `verify-ca` (chain checked against `sslrootcert=PATH`) or `verify-full`
//! (chain and host name). A JDBC URL's `ssl=true` means `require`. Other
//! query parameters of a `postgres://` URL go to tokio-postgres
//! (`application_name`, `connect_timeout`, `options`, ...); those of a JDBC
//! URL are pgjdbc's and are ignored.
//!
//! Layout and SQL: see [`crate::sql`]. Each connection prepares one
//! statement per operation shape on first use (read all / read field i /
//! update field i / ... ) and keeps it for the connection's life.
//!
//! Topology: `--threads N` is N connections (PostgreSQL serves one query
//! at a time per connection), one request in flight on each. With `-p
//! connections=K` (K < N), the N sojourn connections share K sockets,
//! assigned round robin, and their requests are pipelined on each socket
//! (tokio-postgres sends a request as soon as it is made and matches the
//! answers in order): N operations in flight over K connections, which
//! [`Backend::describe`] records. A timeout or a broken socket then fails
//! every operation in flight on it, and the next user opens a new one.
//!
//! Faults: every operation is bounded by `timeout.ms` (default 2000). An
//! operation that times out or finds the connection broken is an `ERROR`;
//! a timed-out connection is abandoned (its state is unknown), and the next
//! operation opens a new one, attempts being spaced by [`Backoff`].

use std::fmt::{self, Write as _};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use futures_util::{SinkExt, TryStreamExt};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};
use sojourn_core::backend::{
    ArticleRow, Backend, BackendError, Connection, FieldValue, Fields, LiopsConfig, LiopsRow, Row,
    Schema, ServerCounters, Status, VoteVariant,
};
use sojourn_core::properties::Properties;
use tokio::task::AbortHandle;
use tokio::time::{timeout_at, Instant};
use tokio_postgres::config::SslMode;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};
use tokio_postgres::{Client, Config, NoTls, Statement};
use tokio_postgres_rustls::MakeRustlsConnect;

pub use crate::sql::DEFAULT_TIMEOUT;
use crate::sql::{self, timeout_from, Backoff, Dialect, Shape, ShapeCache};
use crate::url::redact_url;
use crate::{liops_sql, vote_sql};

/// The least time allowed for connecting and for table setup, which run
/// outside the measured phase and may meet a server busy with other work.
const SETUP_TIMEOUT: Duration = Duration::from_secs(10);

/// A PostgreSQL database.
pub struct PostgresBackend {
    inner: Arc<Inner>,
    /// The shared sockets of the multiplexed topology, if chosen.
    pool: Option<Arc<Pool>>,
}

struct Inner {
    config: Config,
    tls: Option<MakeRustlsConnect>,
    describe: String,
    timeout: Duration,
}

impl fmt::Debug for PostgresBackend {
    // Not derived: the configuration holds the password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresBackend")
            .field("url", &self.inner.describe)
            .field("timeout", &self.inner.timeout)
            .finish()
    }
}

/// Why a URL or its properties cannot configure the backend. The message
/// never contains the password.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(String);

fn config_error(message: impl Into<String>) -> ConfigError {
    ConfigError(message.into())
}

impl PostgresBackend {
    /// Configure from a `postgres://`, `postgresql://` or
    /// `jdbc:postgresql://` URL and the run's properties. Touches nothing.
    pub fn open(url: &str, props: &Properties) -> Result<PostgresBackend, ConfigError> {
        let url = url.trim();
        let (jdbc, rest) = match url.strip_prefix("jdbc:") {
            Some(rest) => (true, rest),
            None => (false, url),
        };
        let Some((scheme, after)) = rest.split_once("://") else {
            return Err(config_error(
                "expected postgres://user:pass@host:port/db or jdbc:postgresql://host:port/db",
            ));
        };
        if !matches!(
            scheme.to_ascii_lowercase().as_str(),
            "postgres" | "postgresql"
        ) {
            return Err(config_error(format!(
                "`{scheme}://` is not a PostgreSQL URL"
            )));
        }
        let (base, query) = after.split_once('?').unwrap_or((after, ""));
        let mut passthrough = Vec::new();
        let mut ssl = SslSettings::default();
        let (mut user, mut password) = (None, None);
        for (key, value) in sql::query_pairs(query) {
            match key.as_str() {
                "sslmode" => ssl.mode = Some(value),
                "sslrootcert" => ssl.root_cert = Some(value),
                "ssl" if jdbc => {
                    if value.eq_ignore_ascii_case("true") && ssl.mode.is_none() {
                        ssl.mode = Some("require".to_string());
                    }
                }
                "user" => user = Some(value),
                "password" => password = Some(value),
                _ if jdbc => {} // pgjdbc's own settings
                _ => passthrough.push(format!(
                    "{}={}",
                    sql::percent_encode(&key),
                    sql::percent_encode(&value)
                )),
            }
        }
        let mut native = format!("postgresql://{base}");
        if !passthrough.is_empty() {
            native.push('?');
            native.push_str(&passthrough.join("&"));
        }
        // tokio-postgres's own parse errors do not echo values.
        let mut config: Config = native
            .parse()
            .map_err(|e| config_error(format!("invalid PostgreSQL URL: {e}")))?;
        if config.get_hosts().is_empty() {
            config.host("localhost");
        }
        if let Some(u) = user.or_else(|| props.get("db.user").map(str::to_string)) {
            config.user(u);
        }
        if config.get_user().is_none() {
            let u = std::env::var("PGUSER").unwrap_or_else(|_| "postgres".to_string());
            config.user(u);
        }
        if let Some(p) = password {
            config.password(p);
        }
        if config.get_password().is_none() {
            if let Some(p) = props
                .get("db.passwd")
                .map(str::to_string)
                .or_else(|| std::env::var("PGPASSWORD").ok())
            {
                config.password(p);
            }
        }
        let timeout = timeout_from(props).map_err(config_error)?;
        let tls = ssl.connector(&mut config)?;
        let mut describe = redact_url(url);
        let mut pool = None;
        if let Some((threads, k)) = multiplexing(props)? {
            describe.push_str(&format!(
                " ({threads} in flight over {k} connection{})",
                if k == 1 { "" } else { "s" }
            ));
            pool = Some(Arc::new(Pool {
                slots: (0..k).map(|_| Default::default()).collect(),
                next: AtomicUsize::new(0),
            }));
        }
        Ok(PostgresBackend {
            inner: Arc::new(Inner {
                config,
                tls,
                describe,
                timeout,
            }),
            pool,
        })
    }

    /// The per-operation timeout.
    pub fn timeout(&self) -> Duration {
        self.inner.timeout
    }

    fn setup_error(&self, message: impl fmt::Display) -> BackendError {
        BackendError::Setup {
            target: self.describe(),
            message: message.to_string(),
        }
    }

    /// A connection for table setup, bounded in time.
    async fn setup_client(&self) -> Result<Live, BackendError> {
        let limit = self.inner.timeout.max(SETUP_TIMEOUT);
        match tokio::time::timeout(limit, open_client(&self.inner)).await {
            Ok(Ok(live)) => Ok(live),
            Ok(Err(e)) => Err(BackendError::Connect {
                target: self.describe(),
                message: error_text(&e),
            }),
            Err(_) => Err(BackendError::Connect {
                target: self.describe(),
                message: format!("no answer within {limit:?}"),
            }),
        }
    }
}

/// `-p connections=K` with `-threads N`, K < N: N operations in flight
/// over K sockets, as `(N, K)`. As many sockets as threads (or more) is the
/// plain topology.
fn multiplexing(props: &Properties) -> Result<Option<(u64, u64)>, ConfigError> {
    if !props.contains("connections") {
        return Ok(None);
    }
    let k = props
        .get_u64("connections", 0)
        .map_err(|e| config_error(e.to_string()))?;
    if k == 0 {
        return Err(config_error("connections must be at least 1"));
    }
    let threads = props
        .get_u64("threadcount", 1)
        .map_err(|e| config_error(e.to_string()))?;
    Ok((k < threads).then_some((threads, k)))
}

#[derive(Default)]
struct SslSettings {
    mode: Option<String>,
    root_cert: Option<String>,
}

impl SslSettings {
    /// The TLS connector for the mode (None: no TLS), setting the mode on
    /// `config` too.
    fn connector(self, config: &mut Config) -> Result<Option<MakeRustlsConnect>, ConfigError> {
        let mode = self.mode.as_deref().unwrap_or("disable");
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier: Arc<dyn ServerCertVerifier> = match mode {
            "disable" | "allow" => {
                config.ssl_mode(SslMode::Disable);
                return Ok(None);
            }
            "prefer" | "require" => {
                config.ssl_mode(if mode == "prefer" {
                    SslMode::Prefer
                } else {
                    SslMode::Require
                });
                Arc::new(AcceptAnyCertificate(Arc::clone(&provider)))
            }
            "verify-ca" | "verify-full" => {
                config.ssl_mode(SslMode::Require);
                let Some(path) = &self.root_cert else {
                    return Err(config_error(format!(
                        "sslmode={mode} needs sslrootcert=PATH (a PEM file of the CA certificates)"
                    )));
                };
                let mut roots = rustls::RootCertStore::empty();
                let certs = CertificateDer::pem_file_iter(path)
                    .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
                    .map_err(|e| config_error(format!("cannot read sslrootcert {path}: {e}")))?;
                for cert in certs {
                    roots.add(cert).map_err(|e| {
                        config_error(format!("bad certificate in sslrootcert {path}: {e}"))
                    })?;
                }
                let webpki = rustls::client::WebPkiServerVerifier::builder_with_provider(
                    Arc::new(roots),
                    Arc::clone(&provider),
                )
                .build()
                .map_err(|e| config_error(format!("sslrootcert {path}: {e}")))?;
                if mode == "verify-ca" {
                    Arc::new(IgnoreHostName(webpki))
                } else {
                    webpki
                }
            }
            other => {
                return Err(config_error(format!(
                    "sslmode={other} is not one of disable, allow, prefer, require, verify-ca, verify-full"
                )))
            }
        };
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| config_error(format!("TLS setup: {e}")))?
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth();
        Ok(Some(MakeRustlsConnect::new(tls)))
    }
}

/// `sslmode=require`: encryption without authentication of the server, as
/// libpq does it. The handshake signatures are still checked.
#[derive(Debug)]
struct AcceptAnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `sslmode=verify-ca`: the chain must lead to a trusted root, whatever
/// host name the certificate names.
#[derive(Debug)]
struct IgnoreHostName(Arc<rustls::client::WebPkiServerVerifier>);

impl ServerCertVerifier for IgnoreHostName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// A tokio-postgres error as one line: the server's message and SQLSTATE
/// when there is one (the error's own `Display` says only "db error").
fn error_text(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!(
            "{}: {} (SQLSTATE {})",
            db.severity(),
            db.message(),
            db.code().code()
        );
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// An open client and the task driving its socket.
struct Live {
    client: Client,
    task: AbortHandle,
}

impl Live {
    /// Give up on a connection whose state is unknown (an operation timed
    /// out in the middle): stop its task, which closes the socket, rather
    /// than wait for answers that may never come.
    fn abandon(&self) {
        self.task.abort();
    }

    fn healthy(&self) -> bool {
        !self.client.is_closed()
    }

    /// Publish this session's statistics now rather than up to a second
    /// later. PostgreSQL 15+ publishes a session's counts when it goes
    /// idle, at most once a second; forced, as this very statement ends,
    /// before the reply. Setup and sampling sessions call this before
    /// closing, so that what they did (an EXISTS over the workload's
    /// table, an ANALYZE) never lands in the next phase's server figures.
    /// Older servers lack the function and publish on their own schedule:
    /// the error is harmless.
    /// Waits `limit` at most.
    async fn publish_stats(&self, limit: Duration) {
        let flush = self
            .client
            .batch_execute("SELECT pg_stat_force_next_flush()");
        let _ = tokio::time::timeout(limit, flush).await;
    }
}

/// Open a client and spawn its connection on the current runtime (the one
/// of the worker that will use it).
async fn open_client(inner: &Inner) -> Result<Live, tokio_postgres::Error> {
    let (client, task) = match &inner.tls {
        None => {
            let (client, conn) = inner.config.connect(NoTls).await?;
            (client, tokio::spawn(conn))
        }
        Some(tls) => {
            let (client, conn) = inner.config.connect(tls.clone()).await?;
            (client, tokio::spawn(conn))
        }
    };
    Ok(Live {
        client,
        task: task.abort_handle(),
    })
}

/// The sockets of the multiplexed topology (`-p connections=K`), shared by
/// the sojourn connections assigned to each: tokio-postgres pipelines the
/// requests of every user of a client over its one socket, in order.
struct Pool {
    slots: Vec<tokio::sync::Mutex<Slot>>,
    next: AtomicUsize,
}

#[derive(Default)]
struct Slot {
    live: Option<Arc<Live>>,
    /// Bumped at each new client, so that a user that found the client
    /// broken replaces that one and not a newer one another user opened.
    generation: u64,
    backoff: Option<Backoff>,
}

/// How a sojourn connection reaches the server.
enum Link {
    /// A socket of its own, one request in flight.
    Own {
        live: Option<Live>,
        backoff: Backoff,
    },
    /// A socket shared with other sojourn connections.
    Shared {
        pool: Arc<Pool>,
        slot: usize,
        /// The client in use and its generation.
        current: Option<(Arc<Live>, u64)>,
        /// The generation last found broken, to be replaced.
        broken: Option<u64>,
    },
}

impl Link {
    /// The client to use, (re)opened if need be, no sooner than the backoff
    /// allows; `statements` are emptied when the client changes.
    async fn ready<'a>(
        &'a mut self,
        statements: &mut Statements,
        inner: &Inner,
    ) -> Result<&'a Client, tokio_postgres::Error> {
        match self {
            Link::Own { live, backoff } => {
                if !live.as_ref().is_some_and(Live::healthy) {
                    if let Some(old) = live.take() {
                        old.abandon();
                    }
                    *statements = Statements::default();
                    backoff.wait_turn().await;
                    *live = Some(open_client(inner).await?);
                    backoff.succeeded();
                }
                Ok(&live.as_ref().expect("opened above").client)
            }
            Link::Shared {
                pool,
                slot,
                current,
                broken,
            } => {
                if !current.as_ref().is_some_and(|(l, _)| l.healthy()) {
                    let stale = current.take().map(|(_, g)| g).or(broken.take());
                    *statements = Statements::default();
                    let mut s = pool.slots[*slot].lock().await;
                    let usable =
                        s.live.as_ref().is_some_and(|l| l.healthy()) && stale != Some(s.generation);
                    if !usable {
                        if let Some(old) = s.live.take() {
                            old.abandon();
                        }
                        let backoff = s.backoff.get_or_insert_with(Backoff::new);
                        backoff.wait_turn().await;
                        let live = open_client(inner).await?;
                        s.backoff.get_or_insert_with(Backoff::new).succeeded();
                        s.generation += 1;
                        s.live = Some(Arc::new(live));
                    }
                    let live = s.live.clone().expect("opened above");
                    *current = Some((live, s.generation));
                }
                Ok(&current.as_ref().expect("adopted above").0.client)
            }
        }
    }

    /// The connection in use, if it is open; never opens one.
    fn current(&self) -> Option<&Live> {
        match self {
            Link::Own { live, .. } => live.as_ref(),
            Link::Shared { current, .. } => current.as_ref().map(|(l, _)| &**l),
        }
        .filter(|l| l.healthy())
    }

    /// Give up on the client in use: its state is unknown or it is broken.
    fn abandon(&mut self) {
        match self {
            Link::Own { live, .. } => {
                if let Some(old) = live.take() {
                    old.abandon();
                }
            }
            Link::Shared {
                current, broken, ..
            } => {
                if let Some((live, generation)) = current.take() {
                    // Its other users' requests are stuck behind this one
                    // or lost with the socket: they fail too.
                    live.abandon();
                    *broken = Some(generation);
                }
            }
        }
    }
}

/// `pg_stat_database` columns kept as server counters, for the whole
/// database (catalog work and autovacuum included): blocks read from outside
/// shared buffers and found in them, rows returned by scans and fetched by
/// index, rows written, commits.
const DATABASE_COUNTERS: [&str; 9] = [
    "blks_read",
    "blks_hit",
    "tup_returned",
    "tup_fetched",
    "tup_inserted",
    "tup_updated",
    "tup_deleted",
    "xact_commit",
    "xact_rollback",
];

/// The benchmark table's own counters (`pg_stat_user_tables`,
/// `pg_statio_user_tables`), named `table_...`: unlike the database's they
/// move only with the benchmark's work, so a read-only run shows exactly
/// zero writes even when autovacuum analyses a catalog meanwhile.
const TABLE_COUNTERS: [(&str, &str); 9] = [
    ("t.seq_tup_read", "table_seq_tup_read"),
    ("t.idx_tup_fetch", "table_idx_tup_fetch"),
    ("t.idx_scan", "table_idx_scan"),
    ("t.n_tup_ins", "table_tup_inserted"),
    ("t.n_tup_upd", "table_tup_updated"),
    ("t.n_tup_del", "table_tup_deleted"),
    ("t.n_tup_hot_upd", "table_tup_hot_updated"),
    ("io.heap_blks_read", "table_heap_blks_read"),
    ("io.heap_blks_hit", "table_heap_blks_hit"),
];

impl PostgresBackend {
    /// Run setup statements in order on a client of their own; no time
    /// limit but the server's (an index build over a large table takes
    /// what it takes).
    async fn setup_batch(&self, statements: &[String]) -> Result<(), BackendError> {
        let live = self.setup_client().await?;
        let mut done = Ok(());
        for sql in statements {
            if let Err(e) = live.client.batch_execute(sql).await {
                done = Err(self.setup_error(error_text(&e)));
                break;
            }
        }
        live.publish_stats(SETUP_TIMEOUT).await;
        done
    }

    /// Whether `exists` (a `SELECT EXISTS (...)`) finds nothing; a missing
    /// table is empty.
    async fn nothing_in(&self, live: &Live, exists: &str) -> Result<Option<bool>, BackendError> {
        match live.client.query_one(exists, &[]).await {
            Ok(row) => {
                let any: bool = row.try_get(0).map_err(|e| self.setup_error(e))?;
                Ok(Some(!any))
            }
            Err(e) if e.code() == Some(&SqlState::UNDEFINED_TABLE) => Ok(Some(true)),
            Err(e) => Err(self.setup_error(error_text(&e))),
        }
    }

    /// [`Backend::server_counters`] over `client`.
    async fn counters_on(
        &self,
        client: &Client,
        schema: &Schema,
    ) -> Result<Option<ServerCounters>, BackendError> {
        let err = |e: tokio_postgres::Error| self.setup_error(error_text(&e));
        // PostgreSQL 15+ keeps each backend's counts in backend-local memory
        // and publishes them when the backend goes idle at most once a
        // second (or after 10 s idle): a new connection reads what has been
        // published, so up to a second of the workers' latest work may be
        // missing from a reading. That is why this is a per-phase figure,
        // not a per-interval one. `pg_stat_clear_snapshot` makes sure a
        // cached snapshot (stats_fetch_consistency) is never reused.
        client
            .batch_execute("SELECT pg_stat_clear_snapshot()")
            .await
            .map_err(err)?;
        let mut c = ServerCounters::new();
        let cols = DATABASE_COUNTERS
            .iter()
            .map(|n| format!("{n}::float8"))
            .collect::<Vec<_>>()
            .join(", ");
        let row = client
            .query_one(
                &format!(
                    "SELECT {cols}, pg_backend_pid() FROM pg_stat_database \
                     WHERE datname = current_database()"
                ),
                &[],
            )
            .await
            .map_err(err)?;
        for (i, name) in DATABASE_COUNTERS.iter().enumerate() {
            let v: Option<f64> = row.try_get(i).map_err(|e| self.setup_error(e))?;
            c.set(name, v.unwrap_or(0.0));
        }
        let own_pid: i32 = row
            .try_get(DATABASE_COUNTERS.len())
            .map_err(|e| self.setup_error(e))?;
        if checked_table(schema).is_ok() {
            // Summed over the workload's tables (LIOPS has one per schema).
            let cols = TABLE_COUNTERS
                .iter()
                .map(|(col, _)| format!("COALESCE(sum({col}), 0)::float8"))
                .collect::<Vec<_>>()
                .join(", ");
            // Unquoted names fold to lower case, as in `prepare`.
            let names: Vec<String> = schema.tables().map(str::to_ascii_lowercase).collect();
            let row = client
                .query_one(
                    &format!(
                        "SELECT count(*), {cols} FROM pg_stat_user_tables t \
                         JOIN pg_statio_user_tables io USING (relid) \
                         WHERE t.schemaname = current_schema() AND t.relname = ANY($1)"
                    ),
                    &[&names],
                )
                .await
                .map_err(err)?;
            let found: i64 = row.try_get(0).map_err(|e| self.setup_error(e))?;
            if found > 0 {
                for (i, (_, name)) in TABLE_COUNTERS.iter().enumerate() {
                    let v: f64 = row.try_get(i + 1).map_err(|e| self.setup_error(e))?;
                    c.set(name, v);
                }
            }
        }
        #[cfg(target_os = "linux")]
        if self.is_local() {
            if let Some(cpu) = crate::proc_cpu::server_cpu_s(own_pid as u32, "postgres") {
                c.set("server_cpu_s", cpu);
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = own_pid;
        Ok(Some(c))
    }

    /// [`Backend::prepare`] of `table` over `client`.
    async fn prepare_on(
        &self,
        client: &Client,
        table: &str,
        schema: &Schema,
        drop: bool,
    ) -> Result<(), BackendError> {
        let run = |sql: String| async move {
            client
                .batch_execute(&sql)
                .await
                .map_err(|e| self.setup_error(error_text(&e)))
        };
        if drop {
            // Dropping rather than deleting rows also replaces a table made
            // for a different `fieldcount`.
            run(sql::drop_table(table)).await?;
        }
        run(sql::create_table(
            Dialect::Postgres,
            table,
            schema.field_count(),
        ))
        .await?;
        // A table left with fewer fields would turn every write into an
        // ERROR status; say so once, here, instead. Unquoted names fold to
        // lower case, hence the lookup by the lower-case name.
        let rows = client
            .query(
                "SELECT upper(column_name::text) FROM information_schema.columns \
                 WHERE table_schema = current_schema() AND table_name = $1",
                &[&table.to_ascii_lowercase()],
            )
            .await
            .map_err(|e| self.setup_error(error_text(&e)))?;
        let columns: Vec<String> = rows.iter().filter_map(|r| r.try_get(0).ok()).collect();
        let missing: Vec<String> = std::iter::once("YCSB_KEY".to_string())
            .chain((0..schema.field_count()).map(|f| format!("FIELD{f}")))
            .filter(|c| !columns.contains(c))
            .collect();
        if !missing.is_empty() {
            return Err(self.setup_error(format!(
                "table {table} exists without column(s) {}; empty it with the drop option to recreate it",
                missing.join(", ")
            )));
        }
        Ok(())
    }

    /// Whether the server runs on this machine, so its processes' CPU time
    /// can be read from /proc. Loopback or a Unix socket only: a server
    /// elsewhere may have process ids that mean something else here.
    fn is_local(&self) -> bool {
        self.inner.config.get_hosts().iter().all(|h| match h {
            tokio_postgres::config::Host::Tcp(name) => {
                name == "localhost"
                    || name
                        .parse::<std::net::IpAddr>()
                        .is_ok_and(|ip| ip.is_loopback())
            }
            #[cfg(unix)]
            tokio_postgres::config::Host::Unix(_) => true,
        })
    }
}

impl Backend for PostgresBackend {
    type Conn = PostgresConnection;

    async fn server_counters(
        &self,
        schema: &Schema,
    ) -> Result<Option<ServerCounters>, BackendError> {
        let live = self.setup_client().await?;
        let counters = self.counters_on(&live.client, schema).await;
        // The sampler's own queries are not the phase's work either.
        live.publish_stats(SETUP_TIMEOUT).await;
        counters
    }

    fn describe(&self) -> String {
        self.inner.describe.clone()
    }

    async fn prepare(&self, schema: &Schema, drop: bool) -> Result<(), BackendError> {
        let table = checked_table(schema).map_err(|e| self.setup_error(e))?;
        let live = self.setup_client().await?;
        let prepared = self.prepare_on(&live.client, table, schema, drop).await;
        live.publish_stats(SETUP_TIMEOUT).await;
        prepared
    }

    async fn is_empty(&self, schema: &Schema) -> Result<Option<bool>, BackendError> {
        let table = checked_table(schema).map_err(|e| self.setup_error(e))?;
        let live = self.setup_client().await?;
        let empty = self.nothing_in(&live, &sql::any_row(table)).await;
        live.publish_stats(SETUP_TIMEOUT).await;
        empty
    }

    async fn prepare_vote(&self, variant: VoteVariant, drop: bool) -> Result<(), BackendError> {
        let mut statements: Vec<String> = Vec::new();
        if drop {
            statements.extend(vote_sql::drop_tables().map(String::from));
        }
        statements.extend(vote_sql::create_tables(Dialect::Postgres, variant));
        self.setup_batch(&statements).await
    }

    async fn vote_is_empty(&self, variant: VoteVariant) -> Result<Option<bool>, BackendError> {
        let live = self.setup_client().await?;
        let mut empty = self.nothing_in(&live, vote_sql::ANY_ARTICLE).await;
        if empty.is_ok() && variant == VoteVariant::Precomputed {
            // Tables there (or none at all): can they serve this variant?
            match live.client.execute(vote_sql::VOTES_COLUMN, &[]).await {
                Err(e) if e.code() == Some(&SqlState::UNDEFINED_COLUMN) => {
                    empty = Err(self.setup_error(vote_sql::made_for_join()));
                }
                Err(e) if e.code() != Some(&SqlState::UNDEFINED_TABLE) => {
                    empty = Err(self.setup_error(error_text(&e)));
                }
                _ => {}
            }
        }
        live.publish_stats(SETUP_TIMEOUT).await;
        empty
    }

    async fn prepare_liops(&self, cfg: &LiopsConfig, drop: bool) -> Result<(), BackendError> {
        let mut statements = Vec::new();
        for table in cfg.tables() {
            if drop {
                statements.push(sql::drop_table(&table));
            }
            statements.push(liops_sql::create_table(Dialect::Postgres, &table));
        }
        self.setup_batch(&statements).await
    }

    async fn liops_is_empty(&self, cfg: &LiopsConfig) -> Result<Option<bool>, BackendError> {
        let live = self.setup_client().await?;
        let empty = self.nothing_in(&live, &sql::any_row(&cfg.table(1))).await;
        live.publish_stats(SETUP_TIMEOUT).await;
        empty
    }

    async fn finish_liops_load(&self, cfg: &LiopsConfig) -> Result<(), BackendError> {
        let mut statements = Vec::new();
        for table in cfg.tables() {
            statements.push(liops_sql::create_index(Dialect::Postgres, &table));
            statements.push(liops_sql::analyze(Dialect::Postgres, &table));
        }
        self.setup_batch(&statements).await
    }

    async fn connect(&self, schema: Arc<Schema>) -> Result<PostgresConnection, BackendError> {
        let table = checked_table(&schema).map_err(|e| self.setup_error(e))?;
        let link = match &self.pool {
            None => Link::Own {
                live: Some(self.setup_client().await?),
                backoff: Backoff::new(),
            },
            Some(pool) => {
                let slot = pool.next.fetch_add(1, Ordering::Relaxed) % pool.slots.len();
                let mut link = Link::Shared {
                    pool: Arc::clone(pool),
                    slot,
                    current: None,
                    broken: None,
                };
                // Connected now, so that an unreachable server is an error
                // before the run rather than N errors in it.
                let limit = self.inner.timeout.max(SETUP_TIMEOUT);
                let opened = tokio::time::timeout(
                    limit,
                    link.ready(&mut Statements::default(), &self.inner),
                )
                .await;
                match opened {
                    Ok(Ok(_)) => {}
                    Ok(Err(e)) => {
                        return Err(BackendError::Connect {
                            target: self.describe(),
                            message: error_text(&e),
                        })
                    }
                    Err(_) => {
                        return Err(BackendError::Connect {
                            target: self.describe(),
                            message: format!("no answer within {limit:?}"),
                        })
                    }
                }
                link
            }
        };
        Ok(PostgresConnection {
            inner: Arc::clone(&self.inner),
            table: table.to_string(),
            all_fields: (0..schema.field_count()).collect(),
            link,
            statements: Statements::default(),
            scratch: Vec::new(),
            last_error: None,
        })
    }
}

fn checked_table(schema: &Schema) -> Result<&str, String> {
    if sql::valid_table_name(&schema.table) {
        Ok(&schema.table)
    } else {
        Err(sql::table_name_error(&schema.table))
    }
}

#[derive(Default)]
struct Statements {
    read: ShapeCache<Statement>,
    scan: ShapeCache<Statement>,
    update: ShapeCache<Statement>,
    insert: ShapeCache<Statement>,
    delete: Option<Statement>,
    /// The vote workload's statements, by [`VoteStatement`].
    vote: [Option<(VoteVariant, Statement)>; 3],
    /// The LIOPS select and update, and the table they were prepared for.
    liops: Option<(String, Statement, Statement)>,
}

/// The vote workload's statements.
#[derive(Copy, Clone)]
enum VoteStatement {
    InsertArticle = 0,
    Vote = 1,
    Read = 2,
}

impl VoteStatement {
    fn sql(self, variant: VoteVariant) -> String {
        let d = Dialect::Postgres;
        match (self, variant) {
            (VoteStatement::InsertArticle, _) => vote_sql::insert_article(d),
            (VoteStatement::Vote, VoteVariant::Join) => vote_sql::insert_vote(d),
            (VoteStatement::Vote, VoteVariant::Precomputed) => {
                vote_sql::PG_VOTE_AND_COUNT.to_string()
            }
            (VoteStatement::Read, v) => vote_sql::read_article(d, v),
        }
    }
}

/// A vote statement prepared on `client` on first use.
async fn vote_statement<'s>(
    client: &Client,
    statements: &'s mut Statements,
    which: VoteStatement,
    variant: VoteVariant,
) -> Result<&'s Statement, tokio_postgres::Error> {
    let slot = &mut statements.vote[which as usize];
    if !matches!(slot, Some((v, _)) if *v == variant) {
        let stmt = client.prepare(&which.sql(variant)).await?;
        *slot = Some((variant, stmt));
    }
    Ok(&slot.as_ref().expect("prepared above").1)
}

/// The statement for `shape` from `cache`, prepared on first use.
async fn statement<'c>(
    client: &Client,
    cache: &'c mut ShapeCache<Statement>,
    shape: Shape<'_>,
    sql: impl FnOnce() -> String,
) -> Result<&'c Statement, tokio_postgres::Error> {
    if cache.get(shape).is_none() {
        let prepared = client.prepare(&sql()).await?;
        return Ok(cache.insert(shape, prepared));
    }
    Ok(cache.get(shape).expect("present: checked above"))
}

/// A parameter: the key, or a field value stored as [`crate::sql`] says
/// (as it is in a `bytea` column of a table made by another tool).
#[derive(Debug)]
enum Param<'a> {
    Key(&'a str),
    Value(&'a [u8]),
    Limit(i64),
}

impl ToSql for Param<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match *self {
            Param::Key(key) => out.extend_from_slice(key.as_bytes()),
            Param::Value(v) if *ty == Type::BYTEA || sql::is_plain(v) => out.extend_from_slice(v),
            Param::Value(v) => sql::escape_into(v, out),
            Param::Limit(n) => return n.to_sql(ty, out),
        }
        Ok(IsNull::No)
    }

    fn accepts(ty: &Type) -> bool {
        // The binary form of every text type is its bytes; a limit is int8.
        matches!(
            *ty,
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN | Type::BYTEA
        ) || <i64 as ToSql>::accepts(ty)
    }

    to_sql_checked!();
}

/// A column's raw bytes, whatever its type (`text` in binary format is its
/// UTF-8 bytes).
struct Raw<'a>(&'a [u8]);

impl<'a> FromSql<'a> for Raw<'a> {
    fn from_sql(
        _ty: &Type,
        raw: &'a [u8],
    ) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Raw(raw))
    }

    fn accepts(_ty: &Type) -> bool {
        true
    }
}

fn push_fields(
    row: &tokio_postgres::Row,
    first_column: usize,
    fields: &[usize],
    out: &mut Vec<FieldValue>,
) -> Result<(), tokio_postgres::Error> {
    for (i, &field) in fields.iter().enumerate() {
        if let Some(Raw(stored)) = row.try_get::<_, Option<Raw<'_>>>(first_column + i)? {
            out.push(FieldValue {
                field,
                value: sql::decode(stored),
            });
        }
    }
    Ok(())
}

/// A connection of [`PostgresBackend`], re-established when lost.
pub struct PostgresConnection {
    inner: Arc<Inner>,
    table: String,
    all_fields: Vec<usize>,
    link: Link,
    /// Statements prepared on the link's current client.
    statements: Statements,
    /// Field indices of the current write, reused across calls.
    scratch: Vec<usize>,
    last_error: Option<String>,
}

type PgResult = Result<Status, tokio_postgres::Error>;

impl PostgresConnection {
    /// The most recent error on this connection, for diagnosing `ERROR`
    /// statuses.
    pub fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }

    fn deadline(&self) -> Instant {
        Instant::now() + self.inner.timeout
    }

    /// The status for an operation's outcome; after a failure, the
    /// connection is given up when its state is unknown.
    fn settle(&mut self, outcome: Result<PgResult, tokio::time::error::Elapsed>) -> Status {
        match outcome {
            Ok(Ok(status)) => status,
            Ok(Err(e)) => {
                self.last_error = Some(error_text(&e));
                if e.as_db_error().is_none() {
                    // Not an answer from the server: the connection broke.
                    self.link.abandon();
                } else {
                    // The table may have been recreated under the
                    // prepared statements.
                    self.statements = Statements::default();
                }
                Status::Error
            }
            Err(_) => {
                self.last_error = Some(format!(
                    "timed out after {} ms",
                    self.inner.timeout.as_millis()
                ));
                self.link.abandon();
                Status::Error
            }
        }
    }

    fn field_count(&self) -> usize {
        self.all_fields.len()
    }

    fn valid_fields(&self, fields: Fields<'_>) -> bool {
        match fields {
            Fields::All => true,
            Fields::Some(list) => list.iter().all(|&f| f < self.field_count()),
        }
    }

    fn valid_values(&self, values: &[FieldValue]) -> bool {
        values.iter().all(|v| v.field < self.field_count())
    }

    async fn read_now(
        &mut self,
        key: &str,
        fields: Fields<'_>,
        out: &mut Vec<FieldValue>,
    ) -> PgResult {
        let PostgresConnection {
            inner,
            table,
            all_fields,
            link,
            statements,
            ..
        } = self;
        let client = link.ready(statements, inner).await?;
        let columns: &[usize] = match fields {
            Fields::All => all_fields,
            Fields::Some(list) => list,
        };
        let shape = Shape::of(columns, all_fields.len());
        let stmt = statement(client, &mut statements.read, shape, || {
            sql::read(Dialect::Postgres, table, columns)
        })
        .await?;
        match client.query_opt(stmt, &[&Param::Key(key)]).await? {
            None => Ok(Status::NotFound),
            Some(row) => {
                push_fields(&row, 0, columns, out)?;
                Ok(Status::Ok)
            }
        }
    }

    async fn scan_now(
        &mut self,
        start_key: &str,
        count: usize,
        fields: Fields<'_>,
        out: &mut Vec<Row>,
    ) -> PgResult {
        let PostgresConnection {
            inner,
            table,
            all_fields,
            link,
            statements,
            ..
        } = self;
        let client = link.ready(statements, inner).await?;
        let columns: &[usize] = match fields {
            Fields::All => all_fields,
            Fields::Some(list) => list,
        };
        let shape = Shape::of(columns, all_fields.len());
        let stmt = statement(client, &mut statements.scan, shape, || {
            sql::scan(Dialect::Postgres, table, columns)
        })
        .await?;
        let limit = i64::try_from(count).unwrap_or(i64::MAX);
        let rows = client
            .query_raw(stmt, [Param::Key(start_key), Param::Limit(limit)])
            .await?;
        let mut rows = std::pin::pin!(rows);
        while let Some(row) = rows.try_next().await? {
            let key = match row.try_get::<_, Option<Raw<'_>>>(0)? {
                Some(Raw(k)) => String::from_utf8_lossy(k).into_owned(),
                None => String::new(),
            };
            let mut fields = Vec::with_capacity(columns.len());
            push_fields(&row, 1, columns, &mut fields)?;
            out.push(Row { key, fields });
        }
        Ok(Status::Ok)
    }

    async fn update_now(&mut self, key: &str, values: &[FieldValue]) -> PgResult {
        let PostgresConnection {
            inner,
            table,
            all_fields,
            link,
            statements,
            scratch,
            ..
        } = self;
        let client = link.ready(statements, inner).await?;
        scratch.clear();
        scratch.extend(values.iter().map(|v| v.field));
        if values.is_empty() {
            // Nothing to set: the answer is only whether the record exists.
            let stmt = statement(client, &mut statements.read, Shape::List(&[]), || {
                sql::read(Dialect::Postgres, table, &[])
            })
            .await?;
            let found = client.query_opt(stmt, &[&Param::Key(key)]).await?;
            return Ok(if found.is_some() {
                Status::Ok
            } else {
                Status::NotFound
            });
        }
        let shape = Shape::of(scratch, all_fields.len());
        let stmt = statement(client, &mut statements.update, shape, || {
            sql::update(Dialect::Postgres, table, scratch)
        })
        .await?;
        let n = values.len();
        let params = (0..n + 1).map(|i| match values.get(i) {
            Some(v) => Param::Value(&v.value),
            None => Param::Key(key),
        });
        let changed = client.execute_raw(stmt, params).await?;
        Ok(if changed == 0 {
            Status::NotFound
        } else {
            Status::Ok
        })
    }

    async fn insert_now(&mut self, key: &str, values: &[FieldValue]) -> PgResult {
        let PostgresConnection {
            inner,
            table,
            all_fields,
            link,
            statements,
            scratch,
            ..
        } = self;
        let client = link.ready(statements, inner).await?;
        scratch.clear();
        scratch.extend(values.iter().map(|v| v.field));
        let field_count = all_fields.len();
        let shape = Shape::of(scratch, field_count);
        let stmt = statement(client, &mut statements.insert, shape, || {
            sql::insert(Dialect::Postgres, table, scratch, field_count)
        })
        .await?;
        let params = (0..values.len() + 1).map(|i| match i.checked_sub(1) {
            None => Param::Key(key),
            Some(v) => Param::Value(&values[v].value),
        });
        client.execute_raw(stmt, params).await?;
        Ok(Status::Ok)
    }

    async fn vote_now(
        &mut self,
        which: VoteStatement,
        variant: VoteVariant,
        params: &[&(dyn ToSql + Sync)],
    ) -> PgResult {
        let PostgresConnection {
            inner,
            link,
            statements,
            ..
        } = self;
        let client = link.ready(statements, inner).await?;
        let stmt = vote_statement(client, statements, which, variant).await?;
        let changed = client.execute(stmt, params).await?;
        // A precomputed vote for a missing article updates no count.
        Ok(if changed == 0 {
            Status::NotFound
        } else {
            Status::Ok
        })
    }

    async fn article_now(
        &mut self,
        variant: VoteVariant,
        id: i64,
        out: &mut ArticleRow,
    ) -> PgResult {
        let PostgresConnection {
            inner,
            link,
            statements,
            ..
        } = self;
        let client = link.ready(statements, inner).await?;
        let stmt = vote_statement(client, statements, VoteStatement::Read, variant).await?;
        let Some(row) = client.query_opt(stmt, &[&id]).await? else {
            return Ok(Status::NotFound);
        };
        let (got, title, votes): (i64, &str, i64) =
            (row.try_get(0)?, row.try_get(1)?, row.try_get(2)?);
        out.id = got as u64;
        out.title.clear();
        out.title.push_str(title);
        out.votes = votes as u64;
        Ok(Status::Ok)
    }

    async fn liops_load_now(&mut self, table: &str, rows: &[LiopsRow]) -> PgResult {
        let PostgresConnection {
            inner,
            link,
            statements,
            ..
        } = self;
        let client = link.ready(statements, inner).await?;
        // Text COPY; `filler` is char(1024), which the server pads.
        let mut data = String::with_capacity(rows.len() * 32);
        for r in rows {
            let _ = writeln!(data, "{}\t{}\tx", r.key, r.scratch);
        }
        let sink = client
            .copy_in::<_, bytes::Bytes>(&format!(
                "COPY {table} (mykey, scratch, filler) FROM STDIN"
            ))
            .await?;
        let mut sink = std::pin::pin!(sink);
        sink.send(bytes::Bytes::from(data)).await?;
        let copied = sink.as_mut().finish().await?;
        Ok(if copied == rows.len() as u64 {
            Status::Ok
        } else {
            Status::UnexpectedState
        })
    }

    async fn liops_now(
        &mut self,
        table: &str,
        update: bool,
        (lo, hi): (u64, u64),
        rows: &mut u64,
    ) -> PgResult {
        let PostgresConnection {
            inner,
            link,
            statements,
            ..
        } = self;
        let client = link.ready(statements, inner).await?;
        if !matches!(&statements.liops, Some((t, _, _)) if t == table) {
            let d = Dialect::Postgres;
            let select = client.prepare(&liops_sql::select(d, table)).await?;
            let change = client.prepare(&liops_sql::update(d, table)).await?;
            statements.liops = Some((table.to_string(), select, change));
        }
        let (_, select, change) = statements.liops.as_ref().expect("prepared above");
        let (lo, hi) = (lo as i64, hi as i64);
        *rows = if update {
            client.execute(change, &[&lo, &hi]).await?
        } else {
            // The sum (numeric) is computed by the server, never decoded.
            let n: i64 = client.query_one(select, &[&lo, &hi]).await?.try_get(0)?;
            n as u64
        };
        Ok(Status::Ok)
    }

    async fn delete_now(&mut self, key: &str) -> PgResult {
        let PostgresConnection {
            inner,
            table,
            link,
            statements,
            ..
        } = self;
        let client = link.ready(statements, inner).await?;
        if statements.delete.is_none() {
            let sql = sql::delete(Dialect::Postgres, table);
            statements.delete = Some(client.prepare(&sql).await?);
        }
        let Some(stmt) = &statements.delete else {
            return Ok(Status::Error);
        };
        let changed = client.execute(stmt, &[&Param::Key(key)]).await?;
        Ok(if changed == 0 {
            Status::NotFound
        } else {
            Status::Ok
        })
    }
}

impl Connection for PostgresConnection {
    async fn read(&mut self, key: &str, fields: Fields<'_>, out: &mut Vec<FieldValue>) -> Status {
        if !self.valid_fields(fields) {
            return Status::BadRequest;
        }
        let before = out.len();
        let deadline = self.deadline();
        let outcome = timeout_at(deadline, self.read_now(key, fields, out)).await;
        let status = self.settle(outcome);
        if status == Status::Error {
            out.truncate(before);
        }
        status
    }

    async fn scan(
        &mut self,
        start_key: &str,
        count: usize,
        fields: Fields<'_>,
        out: &mut Vec<Row>,
    ) -> Status {
        if !self.valid_fields(fields) {
            return Status::BadRequest;
        }
        let before = out.len();
        let deadline = self.deadline();
        let outcome = timeout_at(deadline, self.scan_now(start_key, count, fields, out)).await;
        let status = self.settle(outcome);
        if status == Status::Error {
            out.truncate(before);
        }
        status
    }

    async fn update(&mut self, key: &str, values: &[FieldValue]) -> Status {
        if !self.valid_values(values) {
            return Status::BadRequest;
        }
        let deadline = self.deadline();
        let outcome = timeout_at(deadline, self.update_now(key, values)).await;
        self.settle(outcome)
    }

    async fn insert(&mut self, key: &str, values: &[FieldValue]) -> Status {
        if !self.valid_values(values) {
            return Status::BadRequest;
        }
        let deadline = self.deadline();
        let outcome = timeout_at(deadline, self.insert_now(key, values)).await;
        self.settle(outcome)
    }

    async fn delete(&mut self, key: &str) -> Status {
        let deadline = self.deadline();
        let outcome = timeout_at(deadline, self.delete_now(key)).await;
        self.settle(outcome)
    }

    async fn liops_load(&mut self, table: &str, rows: &[LiopsRow]) -> Status {
        let deadline = Instant::now() + self.inner.timeout.max(liops_sql::LOAD_BATCH_TIMEOUT);
        let outcome = timeout_at(deadline, self.liops_load_now(table, rows)).await;
        self.settle(outcome)
    }

    async fn liops_select(&mut self, table: &str, lo: u64, hi: u64, rows: &mut u64) -> Status {
        let deadline = self.deadline();
        let outcome = timeout_at(deadline, self.liops_now(table, false, (lo, hi), rows)).await;
        self.settle(outcome)
    }

    async fn liops_update(&mut self, table: &str, lo: u64, hi: u64, rows: &mut u64) -> Status {
        let deadline = self.deadline();
        let outcome = timeout_at(deadline, self.liops_now(table, true, (lo, hi), rows)).await;
        self.settle(outcome)
    }

    async fn publish_stats(&mut self) {
        // Within the operation timeout; a broken link is not reopened for
        // this.
        if let Some(live) = self.link.current() {
            let limit = self.deadline().saturating_duration_since(Instant::now());
            live.publish_stats(limit).await;
        }
    }

    async fn insert_article(&mut self, variant: VoteVariant, id: u64, title: &str) -> Status {
        let deadline = self.deadline();
        let id = id as i64;
        let params: [&(dyn ToSql + Sync); 2] = [&id, &title];
        let outcome = timeout_at(
            deadline,
            self.vote_now(VoteStatement::InsertArticle, variant, &params),
        )
        .await;
        self.settle(outcome)
    }

    async fn vote(&mut self, variant: VoteVariant, article: u64, user: u64) -> Status {
        let deadline = self.deadline();
        let (article, user) = (article as i64, user as i64);
        let params: [&(dyn ToSql + Sync); 2] = [&article, &user];
        let outcome = timeout_at(
            deadline,
            self.vote_now(VoteStatement::Vote, variant, &params),
        )
        .await;
        self.settle(outcome)
    }

    async fn article(&mut self, variant: VoteVariant, id: u64, out: &mut ArticleRow) -> Status {
        let deadline = self.deadline();
        let outcome = timeout_at(deadline, self.article_now(variant, id as i64, out)).await;
        self.settle(outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(url: &str, props: &[(&str, &str)]) -> Result<PostgresBackend, ConfigError> {
        let mut p = Properties::new();
        for (k, v) in props {
            p.set(k, v, sojourn_core::properties::Origin::CommandLine);
        }
        PostgresBackend::open(url, &p)
    }

    #[test]
    fn urls() {
        let b = open("postgres://u:secret@127.0.0.1:5439/db", &[]).unwrap();
        assert_eq!(b.inner.config.get_user(), Some("u"));
        assert_eq!(b.inner.config.get_password(), Some(&b"secret"[..]));
        assert_eq!(b.inner.config.get_ports(), &[5439]);
        assert_eq!(b.inner.config.get_dbname(), Some("db"));
        assert!(b.inner.tls.is_none());
        assert!(!b.describe().contains("secret"));
        assert!(!format!("{b:?}").contains("secret"));
        assert_eq!(b.timeout(), DEFAULT_TIMEOUT);

        let b = open(
            "jdbc:postgresql://h:5432/ycsb?reWriteBatchedInserts=true&ssl=true",
            &[
                ("db.user", "ju"),
                ("db.passwd", "jp"),
                ("timeout.ms", "250"),
            ],
        )
        .unwrap();
        assert_eq!(b.inner.config.get_user(), Some("ju"));
        assert_eq!(b.inner.config.get_password(), Some(&b"jp"[..]));
        assert_eq!(b.inner.config.get_dbname(), Some("ycsb"));
        assert!(b.inner.tls.is_some());
        assert_eq!(b.inner.config.get_ssl_mode(), SslMode::Require);
        assert_eq!(b.timeout(), Duration::from_millis(250));

        // The URL's password wins over db.passwd; query parameters are
        // percent-decoded; application_name passes through.
        let b = open(
            "postgresql://h/db?password=p%40ss&application_name=x&sslmode=require",
            &[("db.passwd", "other")],
        )
        .unwrap();
        assert_eq!(b.inner.config.get_password(), Some(&b"p@ss"[..]));
        assert_eq!(b.inner.config.get_application_name(), Some("x"));
        assert!(!b.describe().contains("p%40ss"), "{}", b.describe());

        assert!(open("postgres://h/db?sslmode=verify-full", &[]).is_err());
        assert!(open("postgres://h/db?sslmode=bogus", &[]).is_err());
        assert!(open("postgres://h/db", &[("timeout.ms", "0")]).is_err());
        assert!(open("mysql://h/db", &[]).is_err());

        let b = open(
            "postgres://h/db",
            &[("connections", "2"), ("threadcount", "16")],
        )
        .unwrap();
        assert_eq!(
            b.describe(),
            "postgres://h/db (16 in flight over 2 connections)"
        );
        assert_eq!(b.pool.as_ref().map(|p| p.slots.len()), Some(2));
        let b = open(
            "postgres://h/db",
            &[("connections", "4"), ("threadcount", "4")],
        )
        .unwrap();
        assert!(b.pool.is_none());
        assert!(open("postgres://h/db", &[("connections", "0")]).is_err());
        let err = open("postgres://u:hunter2@h/db?nosuchoption=1", &[]).unwrap_err();
        assert!(!err.to_string().contains("hunter2"), "{err}");
    }
}
