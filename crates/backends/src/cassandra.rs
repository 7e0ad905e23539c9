//! The CQL backend, for Apache Cassandra, ScyllaDB and YugabyteDB YCQL,
//! through the `scylla` driver: `cassandra://[user[:password]@]host[:port]
//! [,host[:port]...]/keyspace`, or YCSB's binding `cassandra-cql -p
//! hosts=... -p port=... -p cassandra.keyspace=...` with its `cassandra.*`
//! properties (see [`options`]).
//!
//! Layout: YCSB's (`y_id varchar PRIMARY KEY, field0 varchar, ...` in
//! keyspace `ycsb`), so data YCSB loaded runs here and the other way round;
//! the key-value workload gets yb-sample-apps' table (`k varchar PRIMARY
//! KEY, v blob`) through [`KeyValueSupport`]. A connection finds the
//! layout of the table it is given in `system_schema`, so any text-keyed
//! table with text or blob columns is read as it is ([`table`]). `load`
//! creates the keyspace (SimpleStrategy; `cassandra.replicationfactor`,
//! default the cluster's node count up to 3) and the table when absent;
//! `--drop` drops the table first, and keeps the keyspace, whose
//! replication may be the operator's.
//!
//! Operations are YCSB's statements, prepared once per connection and
//! shape: reads and scans at `cassandra.readconsistencylevel`, writes at
//! `cassandra.writeconsistencylevel` (both QUORUM by default, as YCSB's).
//! An update is CQL's `UPDATE`, which creates a missing row, and a delete
//! says OK whether or not the row was there, as CQL does not tell (YCSB's
//! binding answers the same; asking would cost a read or a lightweight
//! transaction). A scan is YCSB's, in token order from the start key's
//! token, fetched page by page.
//!
//! Sessions: a `scylla` session keeps a pool of connections per node (per
//! shard on ScyllaDB), multiplexes requests over them, routes each to a
//! replica of its partition (token- and shard-aware) and spawns its tasks
//! on the runtime that builds it. So each runtime thread builds one
//! session, shared by every connection it polls: requests and answers of
//! one thread's connections stay on that thread, and a run of N
//! connections holds `threads x nodes` sockets (`cassandra.maxconnections`
//! per node and session), as latte's and YCSB's clients hold a pool per
//! process rather than a socket per worker.
//!
//! Faults: every operation is bounded by `timeout.ms` (or YCSB's
//! `cassandra.readtimeoutmillis`; default 2000): the request is dropped
//! then, and the driver discards its late answer. A node that goes
//! away fails operations as ERROR while the driver reconnects it in the
//! background.
//!
//! Password: from the URL, else `cassandra.password`, else
//! `$CASSANDRA_PASSWORD`; never shown. TLS (`cassandra.useSSL=true`, with
//! `cassandra.tls.ca`, `.cert`, `.key`, `.insecure` as Redis' are) is
//! rustls.

mod options;
mod table;

use std::sync::{Arc, Mutex, Weak};
use std::thread::ThreadId;

use scylla::client::execution_profile::ExecutionProfile;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::client::PoolSize;
use scylla::deserialize::row::ColumnIterator;
use scylla::errors::{ExecutionError, PrepareError, RequestAttemptError};
use scylla::policies::load_balancing::{NodeIdentifier, SingleTargetLoadBalancingPolicy};
use scylla::response::PagingState;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::unprepared::Statement;
use sojourn_core::backend::guard::{Failure, Guard, Operations, Read, Scan, Settle, Timer};
use sojourn_core::backend::{
    Backend, BackendError, Extensions, FieldValue, Row, Schema, ServerCounters, Status, Threading,
    SERVER_INSTANCE,
};
use sojourn_core::workload::capability::Runs;
use sojourn_core::workload::keyvalue::{KeyValue, KeyValueConfig, KeyValueSupport};

pub use options::{CassandraOptions, TlsOptions};

use crate::pool::Target;
use crate::shapes::{ByShape, Layout, Op};
use crate::{Open, OpenOptions};
use table::{Made, Params, Table};

/// A Cassandra, ScyllaDB or YCQL keyspace.
#[derive(Debug)]
pub struct CassandraBackend {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    options: CassandraOptions,
    target: Target,
    /// Each runtime thread's session, while its connections hold it.
    sessions: Mutex<Vec<(ThreadId, Weak<Shared>)>>,
}

impl Open for CassandraBackend {
    const FORMS: &'static [&'static str] = &[options::URL_FORM];

    fn configure(url: &str, options: &OpenOptions<'_>) -> Result<CassandraBackend, String> {
        let options = CassandraOptions::from_url(url, options)?;
        Ok(CassandraBackend::new(options))
    }
}

/// A session and what the connections of its runtime thread share.
struct Shared {
    session: Session,
    /// Closed once the runtime that built the session is gone, and with
    /// it the session's tasks: a later runtime on the same thread (a
    /// test's, a second phase's) builds its own.
    alive: tokio::sync::watch::Receiver<()>,
}

impl Shared {
    fn alive(&self) -> bool {
        self.alive.has_changed().is_ok()
    }
}

impl CassandraBackend {
    pub fn new(options: CassandraOptions) -> CassandraBackend {
        let target = Target {
            describe: options.describe(),
            timeout: options.timeout,
        };
        CassandraBackend {
            inner: Arc::new(Inner {
                options,
                target,
                sessions: Mutex::new(Vec::new()),
            }),
        }
    }

    pub fn options(&self) -> &CassandraOptions {
        &self.inner.options
    }

    fn setup_error(&self, message: impl std::fmt::Display) -> BackendError {
        self.inner
            .target
            .setup_error(self.hide(message.to_string()))
    }

    /// `message` without the password, should a server or driver quote it.
    fn hide(&self, message: String) -> String {
        match &self.inner.options.password {
            Some(p) => message.replace(p.as_str(), "***"),
            None => message,
        }
    }

    /// A new session on this runtime, bounded in time.
    async fn open(&self) -> Result<Session, BackendError> {
        let o = &self.inner.options;
        // The guard bounds each operation; a second timer per request in
        // the driver would cost a timer registration for nothing.
        let profile = ExecutionProfile::builder().request_timeout(None).build();
        let mut builder = SessionBuilder::new()
            .known_nodes(&o.hosts)
            .connection_timeout(o.connect_timeout)
            // The token ring and the keyspace's replication are what routing
            // needs; prepared statements carry their partition key.
            .fetch_schema_metadata(false)
            .keyspaces_to_fetch([o.keyspace.clone()])
            .default_execution_profile_handle(profile.into_handle());
        if let (Some(user), Some(password)) = (&o.user, &o.password) {
            builder = builder.user(user, password);
        }
        if let Some(n) = o.connections_per_node {
            builder = builder.pool_size(PoolSize::PerHost(n));
        }
        if let Some(tls) = &o.tls {
            builder = builder.tls_context(Some(tls_config(tls)?));
        }
        self.inner
            .target
            .connect(builder.build(), |e| self.hide(e.to_string()))
            .await
    }

    /// This runtime thread's session, built on first use.
    async fn thread_session(&self) -> Result<Arc<Shared>, BackendError> {
        let me = std::thread::current().id();
        let found = {
            let sessions = self
                .inner
                .sessions
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            sessions
                .iter()
                .filter(|(t, _)| *t == me)
                .find_map(|(_, s)| s.upgrade().filter(|s| s.alive()))
        };
        if let Some(shared) = found {
            return Ok(shared);
        }
        let session = self.open().await?;
        let (keep, alive) = tokio::sync::watch::channel(());
        tokio::spawn(async move {
            let _keep = keep;
            std::future::pending::<()>().await
        });
        let shared = Arc::new(Shared { session, alive });
        let mut sessions = self
            .inner
            .sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        sessions.retain(|(_, s)| s.upgrade().is_some_and(|s| s.alive()));
        sessions.push((me, Arc::downgrade(&shared)));
        Ok(shared)
    }

    /// Create the keyspace if absent, then `schema`'s table in `made`'s
    /// layout (dropped first with `drop`), and check that it holds the
    /// workload's fields.
    async fn prepare_as(
        &self,
        schema: &Schema,
        drop: bool,
        made: Made,
    ) -> Result<(), BackendError> {
        let o = &self.inner.options;
        let create = table::create(&o.keyspace, schema, made).map_err(|e| self.setup_error(e))?;
        let session = self.open().await?;
        let run = |cql: String| {
            let session = &session;
            async move {
                // Schema changes wait for the cluster to agree, which takes
                // longer than an operation may (a large table's drop, more).
                let mut statement = Statement::new(cql.as_str());
                statement.set_request_timeout(Some(DDL_TIMEOUT.max(self.inner.options.timeout)));
                session
                    .query_unpaged(statement, ())
                    .await
                    .map(|_| ())
                    .map_err(|e| self.setup_error(format!("{cql}: {e}")))
            }
        };
        if !self.keyspace_exists(&session).await? {
            let nodes = session.get_cluster_state().get_nodes_info().len();
            let factor = o
                .replication_factor
                .unwrap_or_else(|| nodes.clamp(1, 3) as u32);
            run(format!(
                "CREATE KEYSPACE IF NOT EXISTS {} WITH replication = \
                 {{'class': 'SimpleStrategy', 'replication_factor': {factor}}}",
                o.keyspace
            ))
            .await?;
        }
        if drop {
            let name = table::qualified(&o.keyspace, schema).map_err(|e| self.setup_error(e))?;
            run(format!("DROP TABLE IF EXISTS {name}")).await?;
        }
        run(create).await?;
        match Table::find(&session, &o.keyspace, schema).await {
            Ok(Some(_)) => Ok(()),
            Ok(None) => Err(self.setup_error(format!(
                "{} was created but is not in system_schema",
                schema.table
            ))),
            Err(e) => Err(self.setup_error(e)),
        }
    }

    async fn keyspace_exists(&self, session: &Session) -> Result<bool, BackendError> {
        let rows = session
            .query_unpaged(
                "SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?",
                (self.inner.options.keyspace.as_str(),),
            )
            .await
            .map_err(|e| self.setup_error(e))?
            .into_rows_result()
            .map_err(|e| self.setup_error(e))?;
        Ok(rows.rows_num() > 0)
    }

    /// Whether `schema`'s table holds no row: true when it, or its
    /// keyspace, does not exist yet.
    async fn empty(&self, schema: &Schema) -> Result<Option<bool>, BackendError> {
        let session = self.open().await?;
        let keyspace = &self.inner.options.keyspace;
        let Some(table) = Table::find(&session, keyspace, schema)
            .await
            .map_err(|e| self.setup_error(e))?
        else {
            return Ok(Some(true));
        };
        let cql = format!("SELECT {} FROM {} LIMIT 1", table.key, table.name);
        let rows = session
            .query_unpaged(cql, ())
            .await
            .map_err(|e| self.setup_error(e))?
            .into_rows_result()
            .map_err(|e| self.setup_error(e))?;
        Ok(Some(rows.rows_num() == 0))
    }
}

/// How long a schema change may take.
const DDL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// The server's thread pools whose completed tasks are counted: requests
/// served, reads and writes done on the node.
const THREAD_POOLS: &[(&str, &str)] = &[
    ("Native-Transport-Requests", "native_transport_requests"),
    ("ReadStage", "read_stage_tasks"),
    ("MutationStage", "mutation_stage_tasks"),
];

impl Backend for CassandraBackend {
    type Conn = CassandraConnection;

    fn describe(&self) -> String {
        self.inner.target.describe.clone()
    }

    // The setup calls are boxed: the driver's futures of building a session
    // and querying are deeply nested, and nested whole into their callers'
    // (generic code over every backend) they would take the compiler past
    // its limit for computing those futures' layout.

    async fn prepare(&self, schema: &Schema, drop: bool) -> Result<(), BackendError> {
        Box::pin(self.prepare_as(schema, drop, Made::Ycsb)).await
    }

    async fn is_empty(&self, schema: &Schema) -> Result<Option<bool>, BackendError> {
        Box::pin(self.empty(schema)).await
    }

    /// The table's columns against the workload's fields, as a connection
    /// would find them, before anything runs.
    async fn check_layout(&self, schema: &Schema) -> Result<(), BackendError> {
        Box::pin(async {
            let session = self.open().await?;
            Table::find(&session, &self.inner.options.keyspace, schema)
                .await
                .map(|_| ())
                .map_err(|e| self.setup_error(e))
        })
        .await
    }

    async fn connect(&self, schema: Arc<Schema>) -> Result<CassandraConnection, BackendError> {
        Box::pin(self.connection(schema)).await
    }

    /// Completed tasks of the nodes' request, read and write thread pools
    /// and their caches' hits and requests (`system_views`, Cassandra 4.0
    /// and later), summed over the nodes; `None` from a server without
    /// them (ScyllaDB, YCQL).
    async fn server_counters(
        &self,
        _schema: &Schema,
    ) -> Result<Option<ServerCounters>, BackendError> {
        Box::pin(self.counters()).await
    }

    /// Each runtime thread's connections share its session, so threads are
    /// sized by connections and rate as for sockets of their own.
    fn threading(&self) -> Threading {
        Threading::Remote
    }

    fn extensions(&self) -> Extensions<Self> {
        Extensions::new().with(KeyValueSupport::<Self>::new())
    }
}

impl CassandraBackend {
    async fn connection(&self, schema: Arc<Schema>) -> Result<CassandraConnection, BackendError> {
        let shared = self.thread_session().await?;
        let keyspace = &self.inner.options.keyspace;
        let table = match Table::find(&shared.session, keyspace, &schema).await {
            Ok(Some(t)) => t,
            Ok(None) => {
                return Err(BackendError::Connect {
                    target: self.describe(),
                    message: format!(
                        "there is no table {keyspace}.{} (sojourn load creates it)",
                        schema.table.to_ascii_lowercase()
                    ),
                })
            }
            Err(e) => return Err(self.setup_error(e)),
        };
        Ok(CassandraConnection {
            inner: Arc::clone(&self.inner),
            shared,
            guard: Guard::new(schema.field_count(), Some(self.inner.options.timeout)),
            timer: Timer::default(),
            layout: Layout::new(&table.name, schema.field_count()),
            table: Arc::new(table),
            statements: Statements::default(),
            last_error: None,
        })
    }

    async fn counters(&self) -> Result<Option<ServerCounters>, BackendError> {
        let session = self.open().await?;
        let mut c = ServerCounters::new();
        let mut generations = 0.0;
        // Virtual tables are each node's own: every node is asked in turn,
        // and the cluster's counters are their sums.
        for node in session.get_cluster_state().get_nodes_info() {
            let on_node = |cql: &str| {
                let mut statement = Statement::new(cql);
                statement.set_load_balancing_policy(Some(SingleTargetLoadBalancingPolicy::new(
                    NodeIdentifier::Node(Arc::clone(node)),
                    None,
                )));
                statement
            };
            let Ok(pools) = session
                .query_unpaged(
                    on_node("SELECT name, completed_tasks FROM system_views.thread_pools"),
                    (),
                )
                .await
            else {
                return Ok(None);
            };
            let pools = pools.into_rows_result().map_err(|e| self.setup_error(e))?;
            for row in pools
                .rows::<(String, i64)>()
                .map_err(|e| self.setup_error(e))?
            {
                let (name, done) = row.map_err(|e| self.setup_error(e))?;
                if let Some((_, counter)) = THREAD_POOLS.iter().find(|(n, _)| *n == name) {
                    add(&mut c, counter, done as f64);
                }
            }
            let caches = session
                .query_unpaged(
                    on_node("SELECT name, hit_count, request_count FROM system_views.caches"),
                    (),
                )
                .await
                .map_err(|e| self.setup_error(e))?
                .into_rows_result()
                .map_err(|e| self.setup_error(e))?;
            for row in caches
                .rows::<(String, i64, i64)>()
                .map_err(|e| self.setup_error(e))?
            {
                let (name, hits, requests) = row.map_err(|e| self.setup_error(e))?;
                add(&mut c, &format!("cache_{name}_hits"), hits as f64);
                add(&mut c, &format!("cache_{name}_requests"), requests as f64);
            }
            // A node's gossip generation is new at each start of it: their
            // sum names the cluster's processes.
            let (generation,): (i32,) = session
                .query_unpaged(on_node("SELECT gossip_generation FROM system.local"), ())
                .await
                .map_err(|e| self.setup_error(e))?
                .into_rows_result()
                .map_err(|e| self.setup_error(e))?
                .first_row()
                .map_err(|e| self.setup_error(e))?;
            generations += f64::from(generation);
        }
        c.set(SERVER_INSTANCE, generations);
        Ok(Some(c))
    }
}

/// Add `value` to counter `name`.
fn add(c: &mut ServerCounters, name: &str, value: f64) {
    *c.values.entry(name.to_string()).or_default() += value;
}

/// yb-sample-apps' own table for the key-value workload: `k varchar
/// PRIMARY KEY, v blob`, so a suite written for YCQL runs unchanged.
impl Runs<KeyValue> for CassandraBackend {
    async fn prepare_tables(&self, cfg: &KeyValueConfig, drop: bool) -> Result<(), BackendError> {
        Box::pin(self.prepare_as(&cfg.schema(), drop, Made::KeyValue)).await
    }

    async fn tables_empty(&self, cfg: &KeyValueConfig) -> Result<Option<bool>, BackendError> {
        Box::pin(self.empty(&cfg.schema())).await
    }
}

#[derive(Default)]
struct Statements {
    shaped: ByShape<PreparedStatement>,
    delete: Option<PreparedStatement>,
}

/// What an operation body fails with.
#[derive(Debug, thiserror::Error)]
pub enum CqlError {
    #[error("{0}")]
    Execution(#[from] ExecutionError),
    #[error("{0}")]
    Prepare(#[from] PrepareError),
    #[error("{0}")]
    Result(String),
}

impl CqlError {
    /// Whether the server answered with an error (rather than the request
    /// not reaching it).
    fn is_the_servers(&self) -> bool {
        matches!(
            self,
            CqlError::Execution(ExecutionError::LastAttemptError(
                RequestAttemptError::DbError(..)
            )) | CqlError::Prepare(PrepareError::AllAttemptsFailed {
                first_attempt: RequestAttemptError::DbError(..)
            })
        )
    }
}

fn result_error(e: impl std::fmt::Display) -> CqlError {
    CqlError::Result(e.to_string())
}

/// A connection of [`CassandraBackend`]: a worker's statements over its
/// runtime thread's session.
pub struct CassandraConnection {
    inner: Arc<Inner>,
    shared: Arc<Shared>,
    guard: Guard,
    timer: Timer,
    layout: Layout,
    table: Arc<Table>,
    statements: Statements,
    last_error: Option<String>,
}

type CqlResult = Result<Status, CqlError>;

impl CassandraConnection {
    /// The most recent error on this connection, for diagnosing `ERROR`
    /// statuses.
    pub fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }

    /// The session, the table, the columns `which` names and the statement
    /// of `op` over them, prepared on first use.
    async fn shaped<'c>(&'c mut self, op: Op, which: Columns<'c>) -> Result<Shaped<'c>, CqlError> {
        let CassandraConnection {
            inner,
            shared,
            layout,
            table,
            statements,
            ..
        } = self;
        let columns = match which {
            Columns::Of(fields) => layout.columns(fields),
            Columns::Written => layout.written(),
        };
        let session = &shared.session;
        let make = async || Box::pin(prepare(inner, session, table.cql(op, columns), op)).await;
        let statement = statements.shaped.get(layout, op, columns, make).await?;
        Ok(Shaped {
            session,
            table,
            columns,
            statement,
        })
    }
}

/// Which fields an operation's statement touches.
#[derive(Copy, Clone)]
enum Columns<'a> {
    /// Those a read or scan asks for.
    Of(sojourn_core::backend::Fields<'a>),
    /// Those of the write noted in the layout.
    Written,
}

/// What an operation body runs: a statement, its session, and the table
/// and columns it reads or writes.
struct Shaped<'c> {
    session: &'c Session,
    table: &'c Table,
    columns: &'c [usize],
    statement: &'c PreparedStatement,
}

/// `cql` prepared with the consistency and tracing of `op`.
/// Callers box it: the driver's preparing is a deeply nested future, and
/// nested into every operation's it would take the compiler past its
/// limit for computing their layout (and make every operation's future
/// as large), for a path taken once per statement.
async fn prepare(
    inner: &Inner,
    session: &Session,
    cql: String,
    op: Op,
) -> Result<PreparedStatement, CqlError> {
    let o = &inner.options;
    let mut p = session.prepare(cql).await?;
    p.set_consistency(match op {
        Op::Read | Op::Scan => o.read_consistency,
        Op::Update | Op::Insert => o.write_consistency,
    });
    p.set_tracing(o.tracing);
    // The result columns are known from the statement: each answer need
    // not carry them again.
    p.set_use_cached_result_metadata(true);
    Ok(p)
}

impl Settle for CassandraConnection {
    type Error = CqlError;

    crate::settle::settle_by_fields!();

    /// Records why. The session reconnects lost nodes itself; after a
    /// server's error the statements are prepared again, as the table
    /// may have been made again under them.
    fn settle(&mut self, failure: Failure<CqlError>) -> Status {
        self.last_error = Some(match failure {
            Failure::Failed(e) => {
                if e.is_the_servers() {
                    self.statements = Statements::default();
                }
                e.to_string()
            }
            Failure::TimedOut(limit) => format!("timed out after {} ms", limit.as_millis()),
        });
        Status::Error
    }
}

impl Operations for CassandraConnection {
    async fn read_op(&mut self, read: Read<'_>) -> CqlResult {
        let Shaped {
            session,
            table,
            columns,
            statement,
        } = self.shaped(Op::Read, Columns::Of(read.fields)).await?;
        let rows = session
            .execute_unpaged(statement, Params::Key(read.key))
            .await?
            .into_rows_result()
            .map_err(result_error)?;
        let mut rows = rows.rows::<ColumnIterator>().map_err(result_error)?;
        let Some(row) = rows.next() else {
            return Ok(Status::NotFound);
        };
        let mut row = row.map_err(result_error)?;
        if columns.is_empty() {
            // The statement selected the key alone.
            return Ok(Status::Ok);
        }
        table
            .push_fields(&mut row, columns, read.out)
            .map_err(CqlError::Result)?;
        Ok(Status::Ok)
    }

    async fn scan_op(&mut self, scan: Scan<'_>) -> CqlResult {
        if scan.count == 0 {
            // CQL refuses LIMIT 0.
            return Ok(Status::Ok);
        }
        let limit = i32::try_from(scan.count).unwrap_or(i32::MAX);
        let Shaped {
            session,
            table,
            columns,
            statement,
        } = self.shaped(Op::Scan, Columns::Of(scan.fields)).await?;
        let mut paging = PagingState::start();
        loop {
            let params = Params::Scan(scan.start_key, limit);
            let (page, more) = session
                .execute_single_page(statement, params, paging)
                .await?;
            let page = page.into_rows_result().map_err(result_error)?;
            for row in page.rows::<ColumnIterator>().map_err(result_error)? {
                let mut row = row.map_err(result_error)?;
                let key = row
                    .next()
                    .ok_or_else(|| CqlError::Result("a row without its key".into()))?
                    .map_err(result_error)?;
                let key = key
                    .slice
                    .map(|k| String::from_utf8_lossy(k.as_slice()).into_owned())
                    .unwrap_or_default();
                let mut fields = Vec::with_capacity(columns.len());
                table
                    .push_fields(&mut row, columns, &mut fields)
                    .map_err(CqlError::Result)?;
                scan.out.push(Row { key, fields });
            }
            match more.into_paging_control_flow() {
                std::ops::ControlFlow::Break(()) => return Ok(Status::Ok),
                std::ops::ControlFlow::Continue(next) => paging = next,
            }
        }
    }

    async fn update_op(&mut self, key: &str, values: &[FieldValue]) -> CqlResult {
        if values.is_empty() {
            // Nothing to set: the answer is only whether the record exists.
            let mut out = Vec::new();
            let read = Read {
                key,
                fields: sojourn_core::backend::Fields::Some(&[]),
                out: &mut out,
            };
            return self.read_op(read).await;
        }
        self.write(Op::Update, key, values).await
    }

    async fn insert_op(&mut self, key: &str, values: &[FieldValue]) -> CqlResult {
        self.write(Op::Insert, key, values).await
    }

    async fn delete_op(&mut self, key: &str) -> CqlResult {
        if self.statements.delete.is_none() {
            let cql = self.table.delete();
            let stmt =
                Box::pin(prepare(&self.inner, &self.shared.session, cql, Op::Update)).await?;
            self.statements.delete = Some(stmt);
        }
        let Some(stmt) = &self.statements.delete else {
            return Ok(Status::Error);
        };
        self.shared
            .session
            .execute_unpaged(stmt, Params::Key(key))
            .await?;
        Ok(Status::Ok)
    }
}

impl CassandraConnection {
    /// An update or insert of `values` at `key`.
    async fn write(&mut self, op: Op, key: &str, values: &[FieldValue]) -> CqlResult {
        self.layout.write(values);
        let Shaped {
            session,
            table,
            statement,
            ..
        } = self.shaped(op, Columns::Written).await?;
        let params = match op {
            Op::Update => Params::Update(key, values, table),
            _ => Params::Insert(key, values, table),
        };
        session.execute_unpaged(statement, params).await?;
        Ok(Status::Ok)
    }
}

/// TLS for sessions: rustls (no OpenSSL), configured as Redis' is.
fn tls_config(o: &TlsOptions) -> Result<Arc<rustls::ClientConfig>, BackendError> {
    sojourn_tls::client_config(o, "cassandra.tls.ca")
        .map(Arc::new)
        .map_err(BackendError::Config)
}
