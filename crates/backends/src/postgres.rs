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
//! Topology: a run of N connections (`--threads N`) is N sockets
//! (PostgreSQL serves one query at a time per connection), one request in
//! flight on each. Over plain TCP to one host, YCSB's operations on such a
//! socket go through [`lean`], a client of the extended protocol at
//! libpq's cost per query; tokio-postgres makes its connection and serves
//! everything else ([`driver`]: YCSB's operations on the other
//! topologies; [`workloads`]: vote and LIOPS). With `-p connections=K`
//! (K < N), the N sojourn connections share K sockets, assigned round
//! robin, and their requests are pipelined on each socket
//! (tokio-postgres sends a request as soon as it is made and matches the
//! answers in order): N operations in flight over K connections, which
//! [`Backend::describe`] records. A timeout or a broken socket then fails
//! every operation in flight on it, and the next user opens a new one.
//!
//! Faults: every operation is bounded by `timeout.ms` (default 2000). An
//! operation that times out or finds the connection broken is an `ERROR`;
//! a timed-out connection is abandoned (its state is unknown), and the next
//! operation opens a new one, attempts being spaced by [`Backoff`].

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use sojourn_core::backend::guard::{Failure, Guard, Operations, Read, Scan, Settle, Timer};
use sojourn_core::backend::{
    Backend, BackendError, Extensions, FieldValue, Schema, ServerCounters, Status, Threading,
};
use sojourn_core::redact::redact_url;
use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, Config};

use crate::pool::PoolOptions;
use crate::sql::{
    self, checked_table, Backoff, Dialect, Layout, Op, SqlUrl, Target, RECONNECT_FIRST,
    SETUP_TIMEOUT,
};
use crate::{columns, vote_cache, Open, OpenOptions};

mod counters;
mod driver;
mod error;
mod lean;
mod link;
mod options;
mod params;
mod script;
mod sqlstate;
mod statements;
#[cfg(test)]
mod tests;
mod workloads;

use error::{PgError, PgResult};
use lean::{Lean, LeanError};
use link::{open_client, Link, Live, Pool};
use options::{Inner, URLS};
use params::{insert_params, limit_of, update_params, Param};
use sqlstate::{error_text, statements_stand};
use statements::Statements;

/// A PostgreSQL database.
pub struct PostgresBackend {
    inner: Arc<Inner>,
    /// The shared sockets of the multiplexed topology, if chosen.
    pool: Option<Arc<Pool>>,
}

impl fmt::Debug for PostgresBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PostgresBackend")
            .field(&self.inner.target)
            .finish()
    }
}

impl Open for PostgresBackend {
    const FORMS: &'static [&'static str] =
        &["postgres://user:pass@host:port/db (also postgresql://, jdbc:postgresql://)"];

    /// Configure from a `postgres://`, `postgresql://` or
    /// `jdbc:postgresql://` URL and the run's properties and connections.
    /// Touches nothing; errors never show the password.
    fn configure(url: &str, options: &OpenOptions<'_>) -> Result<PostgresBackend, String> {
        let props = options.props;
        let sql_url = SqlUrl::parse(url, &URLS)?;
        // tokio-postgres's own parse errors do not echo values.
        let mut config: Config = sql_url
            .native
            .parse()
            .map_err(|e| format!("invalid PostgreSQL URL: {e}"))?;
        if config.get_hosts().is_empty() {
            config.host("localhost");
        }
        if let Some(u) = sql_url
            .user
            .or_else(|| props.get("db.user").map(str::to_string))
        {
            config.user(u);
        }
        if config.get_user().is_none() {
            let u = std::env::var("PGUSER").unwrap_or_else(|_| "postgres".to_string());
            config.user(u);
        }
        if let Some(p) = sql_url.password {
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
        let pool = PoolOptions::from_properties(props, None, options.workers)?;
        let tls = sojourn_tls::postgres::connector(
            sql_url.ssl_mode.as_deref(),
            sql_url.ssl_ca.as_deref(),
            &mut config,
        )?;
        let mut describe = redact_url(url.trim());
        if let Some(sharing) = pool.sharing {
            describe.push_str(&format!(" ({sharing})"));
        }
        let cache = vote_cache::Cache::from_options(options)?;
        let lean = lean::serves(&config, tls.is_some())
            && !matches!(
                sojourn_core::workload::kind_name(props),
                Some("vote" | "liops")
            );
        Ok(PostgresBackend {
            inner: Arc::new(Inner {
                config,
                tls,
                lean,
                target: Target {
                    describe: vote_cache::describe(describe, cache.as_ref()),
                    timeout: pool.timeout,
                },
                cache,
            }),
            pool: pool.sharing.map(|sharing| {
                Arc::new(Pool {
                    slots: (0..sharing.sockets).map(|_| Default::default()).collect(),
                    next: AtomicUsize::new(0),
                })
            }),
        })
    }
}

impl PostgresBackend {
    /// The per-operation timeout.
    pub fn timeout(&self) -> Duration {
        self.inner.target.timeout
    }

    fn setup_error(&self, message: impl fmt::Display) -> BackendError {
        self.inner.target.setup_error(message)
    }

    /// A connection for table setup, bounded in time.
    async fn setup_client(&self) -> Result<Live, BackendError> {
        let target = &self.inner.target;
        target
            .connect(open_client(&self.inner), |e| error_text(&e))
            .await
    }
}

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
        self.check_columns(client, table, schema).await
    }

    /// Whether `table` (if it exists) has the columns `schema` needs.
    async fn check_columns(
        &self,
        client: &Client,
        table: &str,
        schema: &Schema,
    ) -> Result<(), BackendError> {
        // Unquoted names fold to lower case, hence the lookup by the
        // lower-case name.
        let rows = client
            .query(
                "SELECT upper(column_name::text) FROM information_schema.columns \
                 WHERE table_schema = current_schema() AND table_name = $1",
                &[&table.to_ascii_lowercase()],
            )
            .await
            .map_err(|e| self.setup_error(error_text(&e)))?;
        let columns: Vec<String> = rows.iter().filter_map(|r| r.try_get(0).ok()).collect();
        columns::check(table, &columns, schema.field_count()).map_err(|e| self.setup_error(e))
    }
}

impl Backend for PostgresBackend {
    type Conn = PostgresConnection;

    fn threading(&self) -> Threading {
        self.pool
            .as_ref()
            .map_or(Threading::Remote, |p| Threading::Sockets(p.slots.len()))
    }

    async fn server_counters(
        &self,
        schema: &Schema,
    ) -> Result<Option<ServerCounters>, BackendError> {
        let live = self.setup_client().await?;
        let mut counters = self.counters_on(&live.client, schema).await;
        // The sampler's own queries are not the phase's work either.
        live.publish_stats(SETUP_TIMEOUT).await;
        if let (Some(cache), Ok(Some(c))) = (&self.inner.cache, &mut counters) {
            cache.add_counters(schema, c).await?;
        }
        counters
    }

    fn describe(&self) -> String {
        self.inner.target.describe.clone()
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

    async fn check_layout(&self, schema: &Schema) -> Result<(), BackendError> {
        let table = checked_table(schema).map_err(|e| self.setup_error(e))?;
        let live = self.setup_client().await?;
        let checked = self.check_columns(&live.client, table, schema).await;
        live.publish_stats(SETUP_TIMEOUT).await;
        checked
    }

    async fn connect(&self, schema: Arc<Schema>) -> Result<PostgresConnection, BackendError> {
        let table = checked_table(&schema).map_err(|e| self.setup_error(e))?;
        let link = match &self.pool {
            None if self.inner.lean => {
                let opened = Lean::open(&self.inner.config);
                Link::Lean {
                    conn: Some(self.inner.target.connect(opened, |e| e.to_string()).await?),
                    backoff: Backoff::new(RECONNECT_FIRST),
                }
            }
            None => Link::Own {
                live: Some(self.setup_client().await?),
                backoff: Backoff::new(RECONNECT_FIRST),
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
                let mut statements = Statements::default();
                let opened = link.ready(&mut statements, &self.inner);
                self.inner
                    .target
                    .connect(opened, |e| error_text(&e))
                    .await?;
                link
            }
        };
        Ok(PostgresConnection {
            inner: Arc::clone(&self.inner),
            guard: self.inner.target.guard(&schema),
            timer: Timer::default(),
            layout: Layout::new(table, schema.field_count()),
            link,
            statements: Statements::default(),
            last_error: None,
            cache: vote_cache::connect(self.inner.cache.as_ref(), &schema).await?,
        })
    }

    fn extensions(&self) -> Extensions<Self> {
        sql::extensions().with(sojourn_core::workload::script::ScriptSupport::<Self>::new())
    }
}

/// A connection of [`PostgresBackend`], re-established when lost.
pub struct PostgresConnection {
    inner: Arc<Inner>,
    guard: Guard,
    timer: Timer,
    layout: Layout,
    link: Link,
    /// Statements prepared on the link's current client.
    statements: Statements,
    last_error: Option<String>,
    cache: Option<vote_cache::Cached>,
}

impl PostgresConnection {
    /// The most recent error on this connection, for diagnosing `ERROR`
    /// statuses.
    pub fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }

    /// The client (reopened if need be, no sooner than the backoff
    /// allows), its statements, and what their SQL is built from.
    async fn session(
        &mut self,
    ) -> Result<(&Client, &mut Statements, &mut Layout), tokio_postgres::Error> {
        let PostgresConnection {
            inner,
            layout,
            link,
            statements,
            ..
        } = self;
        let client = link.ready(statements, inner).await?;
        Ok((client, statements, layout))
    }

    /// The lean client, reopened if need be (no sooner than the backoff
    /// allows), and the layout; `None` when another client serves this
    /// connection.
    async fn lean(&mut self) -> Result<Option<(&mut Lean, &mut Layout)>, LeanError> {
        let Link::Lean { conn, backoff } = &mut self.link else {
            return Ok(None);
        };
        if conn.is_none() {
            // Boxed: see `Link::ready`; the wait too, which every
            // operation's future would otherwise make room for.
            let config = &self.inner.config;
            let reopen = async {
                backoff.wait_turn().await;
                let lean = Lean::open(config).await?;
                backoff.succeeded();
                Ok::<_, LeanError>(lean)
            };
            *conn = Some(Box::pin(reopen).await?);
        }
        Ok(conn.as_mut().map(|c| (&mut **c, &mut self.layout)))
    }
}

impl Settle for PostgresConnection {
    type Error = PgError;

    crate::settle::settle_by_fields!();

    /// Records why, and repairs what the failure may have broken: a
    /// connection whose state is unknown is given up.
    fn settle(&mut self, failure: Failure<PgError>) -> Status {
        match failure {
            Failure::Failed(e) => {
                let (text, answered) = match e {
                    PgError::Driver(e) => (error_text(&e), e.as_db_error().is_some()),
                    PgError::Lean(LeanError::Server(text)) => (text, true),
                    PgError::Lean(LeanError::Broken(text)) => (text, false),
                };
                if !answered {
                    // Not an answer from the server: the connection broke.
                    self.link.abandon();
                } else if !statements_stand(&text) {
                    // The table may have been recreated under the
                    // prepared statements.
                    self.statements = Statements::default();
                    if let Link::Lean { conn: Some(c), .. } = &mut self.link {
                        c.forget_statements();
                    }
                }
                self.last_error = Some(text);
            }
            Failure::TimedOut(limit) => {
                self.last_error = Some(format!("timed out after {} ms", limit.as_millis()));
                self.link.abandon();
            }
        }
        Status::Error
    }
}

impl Operations for PostgresConnection {
    // Each body serves the lean client inline and sends the other client's
    // work through a boxed future: that path's state (tokio-postgres'
    // queries) is large and would otherwise size every operation's future,
    // which each layer above copies when it starts one. The box is one
    // allocation next to the several tokio-postgres makes per query.
    async fn read_op(&mut self, read: Read<'_>) -> PgResult {
        let Some((lean, layout)) = self.lean().await? else {
            return Box::pin(self.driver_read(read)).await;
        };
        let columns = layout.columns(read.fields);
        let mut found = false;
        let key = [Param::Key(read.key)];
        lean.run(layout, Op::Read, columns, key, |row| {
            found = true;
            row.fields(columns, read.out)
        })
        .await?;
        Ok(Status::found(found))
    }

    async fn scan_op(&mut self, scan: Scan<'_>) -> PgResult {
        let Some((lean, layout)) = self.lean().await? else {
            return Box::pin(self.driver_scan(scan)).await;
        };
        let columns = layout.columns(scan.fields);
        let params = [Param::Key(scan.start_key), Param::Limit(limit_of(&scan))];
        lean.run(layout, Op::Scan, columns, params, |row| {
            scan.out.push(row.row(columns)?);
            Ok(())
        })
        .await?;
        Ok(Status::Ok)
    }

    async fn update_op(&mut self, key: &str, values: &[FieldValue]) -> PgResult {
        let Some((lean, layout)) = self.lean().await? else {
            return Box::pin(self.driver_update(key, values)).await;
        };
        if values.is_empty() {
            // Nothing to set: the answer is only whether the record exists.
            let mut found = false;
            let key = [Param::Key(key)];
            lean.run(layout, Op::Read, &[], key, |_| {
                found = true;
                Ok(())
            })
            .await?;
            return Ok(Status::found(found));
        }
        layout.write(values);
        let changed = lean
            .run(
                layout,
                Op::Update,
                layout.written(),
                update_params(key, values),
                |_| Ok(()),
            )
            .await?;
        Ok(Status::found(changed > 0))
    }

    async fn insert_op(&mut self, key: &str, values: &[FieldValue]) -> PgResult {
        let Some((lean, layout)) = self.lean().await? else {
            return Box::pin(self.driver_insert(key, values)).await;
        };
        layout.write(values);
        let params = insert_params(key, values);
        lean.run(layout, Op::Insert, layout.written(), params, |_| Ok(()))
            .await?;
        Ok(Status::Ok)
    }

    async fn delete_op(&mut self, key: &str) -> PgResult {
        let Some((lean, layout)) = self.lean().await? else {
            return Box::pin(self.driver_delete(key)).await;
        };
        let changed = lean.delete(layout.table(), key).await?;
        Ok(Status::found(changed > 0))
    }

    async fn publish_stats_op(&mut self) {
        // Within the operation timeout; a broken link is not reopened for
        // this.
        let limit = self.inner.target.timeout;
        if let Link::Lean {
            conn: Some(lean), ..
        } = &mut self.link
        {
            // A server error (an older server lacks the function) is
            // harmless; a timeout or a broken socket leaves the connection
            // to be reopened.
            let flush = lean.simple(Live::FLUSH_STATS);
            if !matches!(
                tokio::time::timeout(limit, flush).await,
                Ok(Ok(()) | Err(LeanError::Server(_)))
            ) {
                self.link.abandon();
            }
        }
        if let Some(live) = self.link.current() {
            live.publish_stats(self.inner.target.timeout).await;
        }
    }
}
