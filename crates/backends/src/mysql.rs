//! The MySQL / MariaDB backend. The workers' connections speak MySQL's
//! protocol through sojourn's own client (`mysql/conn.rs`, its rows in
//! `mysql/row.rs`: prepared statements, binary rows read in place, nothing
//! allocated per point select); the
//! setup connections (tables, emptiness checks, server counters) go
//! through `mysql_async`. TLS is rustls in both, no OpenSSL.
//!
//! URL: `mysql://user:pass@host:port/db` (also `mariadb://`), or YCSB's
//! JDBC properties: `jdbc` with `-p db.url=jdbc:mysql://host:port/db -p
//! db.user=... -p db.passwd=...` (`jdbc:mariadb://` too). The password
//! comes from the URL, then `db.passwd`, then the `MYSQL_PWD` environment
//! variable; the user from the URL, then `db.user`, else `root`. It never
//! appears in output.
//!
//! TLS: `?ssl-mode=` `disabled` (the default), `required` (encrypted,
//! certificate not checked), `verify_ca` (chain checked against
//! `ssl-ca=PATH`) or `verify_identity` (chain and host name). In a JDBC URL,
//! `useSSL=true` means `required` and `sslMode=` is read like `ssl-mode`.
//! Other query parameters of a `mysql://` URL go to mysql_async, so they
//! shape the setup connections only; those of a JDBC URL are Connector/J's
//! and are ignored.
//!
//! Authentication: `mysql_native_password` and `caching_sha2_password`
//! (its full path in clear over TLS, else with the server's RSA key), and
//! the server's switches between them.
//!
//! Layout and SQL: see [`crate::sql`]; statements are prepared once per
//! connection and shape (the SQL text is built once per shape) and kept
//! for the connection's life. Updates count matched rows
//! (`CLIENT_FOUND_ROWS`), so an update that writes the value already there
//! is `OK` and only a missing key is `NOT_FOUND`.
//!
//! Topology: a run of N connections is N sockets, one request in flight
//! on each.
//! pgbench's scripts run through the same client (`mysql/script.rs`).
//! Faults are handled as in the PostgreSQL backend: `timeout.ms` bounds
//! every operation; a timed-out or broken connection is abandoned and
//! re-opened by a later operation, attempts spaced by [`Backoff`].

use std::borrow::Cow;
use std::collections::HashMap;
use std::convert::Infallible;
use std::fmt::{self, Write as _};
use std::sync::Arc;
use std::time::Duration;

use mysql_async::prelude::Queryable;
use mysql_async::{Opts, OptsBuilder};
use sojourn_core::backend::guard::{Failure, Guard, Operations, Read, Scan, Settle, Timer};
use sojourn_core::backend::{
    Backend, BackendError, Extensions, FieldValue, Row, Schema, ServerCounters, Status,
};
use sojourn_core::redact::redact_url;
use sojourn_core::workload::liops::{LiopsRow, FILLER_WIDTH};
use sojourn_core::workload::vote::{ArticleRow, VoteVariant};

use crate::sql::{
    self, checked_table, sql_connection, Backoff, ByShape, Dialect, Hidden, Layout, Op, SqlOps,
    SqlUrl, Target, RECONNECT_FIRST,
};
use crate::{columns, liops_sql, pool, text, vote_cache, vote_sql, Open, OpenOptions};

mod conn;
mod options;
mod protocol;
mod row;
mod script;
#[cfg(test)]
mod tests;
mod workloads;

use conn::{Conn, Param, Statement};
use options::{SslMode, URLS};
use row::{Cell, Row as MyRow};

/// MySQL's error for a table that does not exist.
const ER_NO_SUCH_TABLE: u16 = 1146;
/// MySQL's error for a column that does not exist.
const ER_BAD_FIELD_ERROR: u16 = 1054;

/// A MySQL or MariaDB database.
#[derive(Debug)]
pub struct MysqlBackend {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// For the setup connections (mysql_async's).
    opts: Hidden<Opts>,
    /// For the workers' connections (sojourn's own client).
    wire: conn::Config,
    target: Target,
    /// The vote run's cache (Noria's hybrid deployment).
    cache: Option<Arc<vote_cache::Cache>>,
}

impl Open for MysqlBackend {
    const FORMS: &'static [&'static str] =
        &["mysql://user:pass@host:port/db (also mariadb://, jdbc:mysql://)"];

    /// Configure from a `mysql://`, `mariadb://`, `jdbc:mysql://` or
    /// `jdbc:mariadb://` URL and the run's properties. Touches nothing;
    /// errors never show the password.
    fn configure(url: &str, options: &OpenOptions<'_>) -> Result<MysqlBackend, String> {
        let props = options.props;
        let sql_url = SqlUrl::parse(url, &URLS)?;
        let parsed =
            Opts::from_url(&sql_url.native).map_err(|e| format!("invalid MySQL URL: {e}"))?;
        let user = sql_url
            .user
            .or_else(|| parsed.user().map(str::to_string))
            .or_else(|| props.get("db.user").map(str::to_string))
            .unwrap_or_else(|| "root".to_string());
        let password = sql_url
            .password
            .or_else(|| parsed.pass().map(str::to_string))
            .or_else(|| props.get("db.passwd").map(str::to_string))
            .or_else(|| std::env::var("MYSQL_PWD").ok());
        let timeout = pool::timeout(props, None)?;
        let tls = SslMode::parse(sql_url.ssl_mode.as_deref(), sql_url.ssl_ca)?;
        let host = parsed.ip_or_hostname().to_string();
        let wire = conn::Config {
            addr: (host.clone(), parsed.tcp_port()),
            user: user.clone(),
            password: password.clone(),
            database: parsed.db_name().map(str::to_string),
            tls: tls.for_workers(&host)?,
        };
        let builder = OptsBuilder::from_opts(parsed)
            .user(Some(user))
            .pass(password)
            // Without this, mysql_async switches a connection to localhost
            // over to the server's Unix socket: the benchmark would not
            // measure the TCP path the URL names.
            .prefer_socket(false)
            .tcp_nodelay(true)
            .client_found_rows(true)
            .ssl_opts(tls.for_setup());
        let cache = vote_cache::Cache::from_options(options)?;
        Ok(MysqlBackend {
            inner: Arc::new(Inner {
                opts: Hidden(Opts::from(builder)),
                wire,
                target: Target {
                    describe: vote_cache::describe(redact_url(url.trim()), cache.as_ref()),
                    timeout,
                },
                cache,
            }),
        })
    }
}

impl MysqlBackend {
    /// The per-operation timeout.
    pub fn timeout(&self) -> Duration {
        self.inner.target.timeout
    }

    fn setup_error(&self, message: impl fmt::Display) -> BackendError {
        self.inner.target.setup_error(message)
    }

    /// Run setup statements in order on a connection of their own.
    async fn setup_batch(&self, statements: &[String]) -> Result<(), BackendError> {
        let mut conn = self.setup_conn().await?;
        for sql in statements {
            if let Err(e) = conn.query_drop(sql).await {
                let _ = conn.disconnect().await;
                return Err(self.setup_error(e));
            }
        }
        let _ = conn.disconnect().await;
        Ok(())
    }

    /// Whether `exists` (a `SELECT EXISTS (...)` over a table) finds
    /// nothing; a missing table holds nothing.
    async fn nothing_in(&self, exists: &str) -> Result<Option<bool>, BackendError> {
        let mut conn = self.setup_conn().await?;
        let result: Result<Option<i64>, _> = conn.query_first(exists).await;
        let _ = conn.disconnect().await;
        match result {
            Ok(any) => Ok(Some(any.unwrap_or(0) == 0)),
            Err(mysql_async::Error::Server(e)) if e.code == ER_NO_SUCH_TABLE => Ok(Some(true)),
            Err(e) => Err(self.setup_error(e)),
        }
    }

    /// Whether `table` (if it exists) has the columns `schema` needs.
    async fn check_columns(
        &self,
        conn: &mut mysql_async::Conn,
        table: &str,
        schema: &Schema,
    ) -> Result<(), BackendError> {
        let columns: Vec<String> = conn
            .exec(
                "SELECT UPPER(column_name) FROM information_schema.columns \
                 WHERE table_schema = DATABASE() AND table_name = ?",
                (table,),
            )
            .await
            .map_err(|e| self.setup_error(e))?;
        columns::check(table, &columns, schema.field_count()).map_err(|e| self.setup_error(e))
    }

    async fn setup_conn(&self) -> Result<mysql_async::Conn, BackendError> {
        let connect = mysql_async::Conn::new(self.inner.opts.clone());
        self.inner.target.connect(connect, |e| e.to_string()).await
    }
}

/// Give up on a connection whose state is unknown: tell the server we
/// are leaving, but never wait long for a server that may be stalled.
fn abandon(conn: Conn) {
    if let Ok(handle) = tokio::runtime::Handle::try_current() {
        handle.spawn(async move {
            let _ = tokio::time::timeout(Duration::from_millis(100), conn.quit()).await;
        });
    }
}

/// `SHOW GLOBAL STATUS` variables kept as server counters (whole server),
/// by their status name in lower case. Workers run
/// prepared statements, so their reads and writes show in
/// `Com_stmt_execute` and the InnoDB row counters rather than in
/// `Com_select` / `Com_update`, which are kept for statements sent as text.
/// MariaDB 11 has no `Innodb_rows_*`; the `Handler_*` counters (row
/// lookups by key and writes through the storage engine API) exist in both
/// and tell the same story. Those a server lacks are simply absent.
const STATUS_COUNTERS: [&str; 17] = [
    "Handler_read_key",
    "Handler_read_next",
    "Handler_read_rnd_next",
    "Handler_update",
    "Handler_delete",
    "Innodb_rows_read",
    "Innodb_rows_inserted",
    "Innodb_rows_updated",
    "Innodb_rows_deleted",
    "Innodb_buffer_pool_reads",
    "Innodb_buffer_pool_read_requests",
    "Innodb_data_reads",
    "Com_select",
    "Com_update",
    "Com_insert",
    "Com_stmt_execute",
    "Questions",
];

impl Backend for MysqlBackend {
    type Conn = MysqlConnection;

    async fn server_counters(
        &self,
        schema: &Schema,
    ) -> Result<Option<ServerCounters>, BackendError> {
        let mut conn = self.setup_conn().await?;
        let rows: Vec<(String, String)> = conn
            .query("SHOW GLOBAL STATUS")
            .await
            .map_err(|e| self.setup_error(e))?;
        let _ = conn.disconnect().await;
        let mut c = ServerCounters::new();
        for (name, value) in rows {
            if let Some(n) = STATUS_COUNTERS
                .iter()
                .find(|n| n.eq_ignore_ascii_case(&name))
            {
                if let Ok(v) = value.parse::<f64>() {
                    c.set(&n.to_ascii_lowercase(), v);
                }
            }
        }
        if let Some(cache) = &self.inner.cache {
            cache.add_counters(schema, &mut c).await?;
        }
        Ok((!c.values.is_empty()).then_some(c))
    }

    fn describe(&self) -> String {
        self.inner.target.describe.clone()
    }

    async fn prepare(&self, schema: &Schema, drop: bool) -> Result<(), BackendError> {
        let table = checked_table(schema).map_err(|e| self.setup_error(e))?;
        let mut conn = self.setup_conn().await?;
        if drop {
            // Dropping rather than deleting rows also replaces a table made
            // for a different `fieldcount`.
            conn.query_drop(sql::drop_table(table))
                .await
                .map_err(|e| self.setup_error(e))?;
        }
        conn.query_drop(sql::create_table(
            Dialect::Mysql,
            table,
            schema.field_count(),
        ))
        .await
        .map_err(|e| self.setup_error(e))?;
        let checked = self.check_columns(&mut conn, table, schema).await;
        let _ = conn.disconnect().await;
        checked
    }

    async fn check_layout(&self, schema: &Schema) -> Result<(), BackendError> {
        let table = checked_table(schema).map_err(|e| self.setup_error(e))?;
        let mut conn = self.setup_conn().await?;
        let checked = self.check_columns(&mut conn, table, schema).await;
        let _ = conn.disconnect().await;
        checked
    }

    async fn is_empty(&self, schema: &Schema) -> Result<Option<bool>, BackendError> {
        let table = checked_table(schema).map_err(|e| self.setup_error(e))?;
        self.nothing_in(&sql::any_row(table)).await
    }

    async fn connect(&self, schema: Arc<Schema>) -> Result<MysqlConnection, BackendError> {
        let table = checked_table(&schema).map_err(|e| self.setup_error(e))?;
        let connect = Conn::connect(&self.inner.wire);
        let conn = self
            .inner
            .target
            .connect(connect, |e| e.to_string())
            .await?;
        Ok(MysqlConnection {
            inner: Arc::clone(&self.inner),
            guard: self.inner.target.guard(&schema),
            timer: Timer::default(),
            layout: Layout::new(table, schema.field_count()),
            texts: Texts::default(),
            conn: Some(conn),
            backoff: Backoff::new(RECONNECT_FIRST),
            last_error: None,
            cache: vote_cache::connect(self.inner.cache.as_ref(), &schema).await?,
        })
    }

    fn extensions(&self) -> Extensions<Self> {
        sql::extensions().with(sojourn_core::workload::script::ScriptSupport::<Self>::new())
    }
}

/// SQL texts by operation shape and the statements prepared from them on
/// the current connection.
#[derive(Default)]
struct Texts {
    shaped: ByShape<String>,
    /// The same, prepared on this connection. Emptied when the connection
    /// is replaced, whose statements they are.
    statements: ByShape<Statement>,
    /// The other statements (deletes, the vote and LIOPS workloads'),
    /// prepared on this connection, by their text.
    by_text: HashMap<String, Statement>,
    delete: String,
    /// The vote workload's texts for one variant, built on first use.
    vote: Option<(VoteVariant, VoteTexts)>,
    /// The LIOPS select and update, and the table they are for.
    liops: Option<(String, String, String)>,
}

/// The vote workload's SQL.
struct VoteTexts {
    insert_article: String,
    insert_vote: String,
    count_vote: String,
    read: String,
}

impl Texts {
    /// The statement of `op` over `columns`, prepared on first use.
    async fn statement(
        &mut self,
        conn: &mut Conn,
        layout: &Layout,
        op: Op,
        columns: &[usize],
    ) -> Result<Statement, conn::Error> {
        let Texts {
            shaped, statements, ..
        } = self;
        let build = async || Ok::<String, Infallible>(layout.sql(Dialect::Mysql, op, columns));
        let Ok(sql) = shaped.get(layout, op, columns, build).await;
        // A statement the cache lets go of is closed on the server, or
        // a workload of ever new field lists would pile them up there.
        let mut retired = Vec::new();
        let held = *statements
            .get_retiring(
                layout,
                op,
                columns,
                async || conn.prepare(sql).await,
                |old| retired.push(old),
            )
            .await?;
        retired.into_iter().for_each(|old| conn.close_later(old));
        Ok(held)
    }

    fn vote(&mut self, variant: VoteVariant) -> (&VoteTexts, &mut HashMap<String, Statement>) {
        if !matches!(&self.vote, Some((v, _)) if *v == variant) {
            let d = Dialect::Mysql;
            let texts = VoteTexts {
                insert_article: vote_sql::insert_article(d),
                insert_vote: vote_sql::insert_vote(d),
                count_vote: vote_sql::count_vote(d),
                read: vote_sql::read_article(d, variant),
            };
            self.vote = Some((variant, texts));
        }
        let texts = &self.vote.as_ref().expect("built above").1;
        (texts, &mut self.by_text)
    }

    /// The LIOPS select and update of `table`.
    fn liops(&mut self, table: &str) -> (&str, &str, &mut HashMap<String, Statement>) {
        if !matches!(&self.liops, Some((t, _, _)) if t == table) {
            let d = Dialect::Mysql;
            self.liops = Some((
                table.to_string(),
                liops_sql::select(d, table),
                liops_sql::update(d, table),
            ));
        }
        let (_, select, update) = self.liops.as_ref().expect("built above");
        (select, update, &mut self.by_text)
    }
}

/// The statement of `sql` on `conn`, prepared on first use.
async fn prepared(
    by_text: &mut HashMap<String, Statement>,
    conn: &mut Conn,
    sql: &str,
) -> Result<Statement, conn::Error> {
    if let Some(stmt) = by_text.get(sql) {
        return Ok(*stmt);
    }
    let stmt = conn.prepare(sql).await?;
    by_text.insert(sql.to_string(), stmt);
    Ok(stmt)
}

/// The cells of `row` from `first_column` on, as `fields`; a NULL (a
/// field never written) is left out.
fn push_fields(
    row: &MyRow<'_>,
    first_column: usize,
    fields: &[usize],
    out: &mut Vec<FieldValue>,
) -> Result<(), conn::Error> {
    let mut cells = row.cells().skip(first_column);
    for &field in fields {
        match cells.next().transpose()? {
            Some(Cell::Bytes(stored)) => out.push(text::decoded_field(field, stored)),
            // Only tables written by other tools hold other types.
            Some(other) => {
                if let Some(value) = other.text() {
                    out.push(FieldValue { field, value });
                }
            }
            None => break,
        }
    }
    Ok(())
}

/// A connection of [`MysqlBackend`], re-established when lost.
pub struct MysqlConnection {
    inner: Arc<Inner>,
    guard: Guard,
    timer: Timer,
    layout: Layout,
    texts: Texts,
    conn: Option<Conn>,
    backoff: Backoff,
    last_error: Option<String>,
    cache: Option<vote_cache::Cached>,
}

type MyResult = Result<Status, conn::Error>;

impl MysqlConnection {
    /// The most recent error on this connection, for diagnosing `ERROR`
    /// statuses.
    pub fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }

    /// The connection (opened if there is none, no sooner than the
    /// backoff allows), the SQL texts, and what they are built from.
    async fn session(&mut self) -> Result<(&mut Conn, &mut Texts, &mut Layout), conn::Error> {
        let MysqlConnection {
            inner,
            layout,
            texts,
            conn,
            backoff,
            ..
        } = self;
        if conn.is_none() {
            backoff.wait_turn().await;
            // Boxed: the handshake's state is most of an operation's future,
            // which would otherwise be copied whole at every await above it.
            let fresh = Box::pin(Conn::connect(&inner.wire)).await?;
            backoff.succeeded();
            *conn = Some(fresh);
            texts.statements = ByShape::default();
            texts.by_text.clear();
        }
        let conn = conn.as_mut().expect("opened above");
        Ok((conn, texts, layout))
    }
}

impl Settle for MysqlConnection {
    type Error = conn::Error;

    crate::settle::settle_by_fields!();

    /// Records why, and gives up a connection whose state is unknown: it
    /// timed out, broke, or the server says it cannot go on.
    fn settle(&mut self, failure: Failure<conn::Error>) -> Status {
        let (message, lost) = match failure {
            Failure::Failed(e) => (e.to_string(), e.is_fatal()),
            Failure::TimedOut(limit) => (format!("timed out after {} ms", limit.as_millis()), true),
        };
        if lost {
            if let Some(conn) = self.conn.take() {
                abandon(conn);
            }
        }
        self.last_error = Some(message);
        Status::Error
    }
}

impl Operations for MysqlConnection {
    async fn read_op(&mut self, read: Read<'_>) -> MyResult {
        let (conn, texts, layout) = self.session().await?;
        let columns = layout.columns(read.fields);
        let stmt = texts.statement(conn, layout, Op::Read, columns).await?;
        let out = read.out;
        let mut found = false;
        conn.execute(&stmt, &[Param::Bytes(read.key.as_bytes())], |row| {
            found = true;
            push_fields(&row, 0, columns, out)
        })
        .await?;
        Ok(Status::found(found))
    }

    async fn scan_op(&mut self, scan: Scan<'_>) -> MyResult {
        let (conn, texts, layout) = self.session().await?;
        let columns = layout.columns(scan.fields);
        let stmt = texts.statement(conn, layout, Op::Scan, columns).await?;
        let limit = u64::try_from(scan.count).unwrap_or(u64::MAX);
        let params = [Param::Bytes(scan.start_key.as_bytes()), Param::UInt(limit)];
        let out = scan.out;
        conn.execute(&stmt, &params, |row| {
            let key = match row.cells().next().transpose()? {
                Some(Cell::Bytes(k)) => String::from_utf8_lossy(&text::decode(k)).into_owned(),
                Some(other) => {
                    String::from_utf8_lossy(&other.text().unwrap_or_default()).into_owned()
                }
                None => String::new(),
            };
            let mut fields = Vec::with_capacity(columns.len());
            push_fields(&row, 1, columns, &mut fields)?;
            out.push(Row { key, fields });
            Ok(())
        })
        .await?;
        Ok(Status::Ok)
    }

    async fn update_op(&mut self, key: &str, values: &[FieldValue]) -> MyResult {
        let (conn, texts, layout) = self.session().await?;
        if values.is_empty() {
            // Nothing to set: the answer is only whether the record exists.
            let stmt = texts.statement(conn, layout, Op::Read, &[]).await?;
            let mut found = false;
            conn.execute(&stmt, &[Param::Bytes(key.as_bytes())], |_| {
                found = true;
                Ok(())
            })
            .await?;
            return Ok(Status::found(found));
        }
        layout.write(values);
        let stmt = texts
            .statement(conn, layout, Op::Update, layout.written())
            .await?;
        let encoded: Vec<Cow<'_, [u8]>> = values.iter().map(|v| text::encode(&v.value)).collect();
        let mut params: Vec<Param<'_>> = encoded.iter().map(|v| Param::Bytes(v)).collect();
        params.push(Param::Bytes(key.as_bytes()));
        let affected = conn.execute(&stmt, &params, |_| Ok(())).await?;
        Ok(Status::found(affected > 0))
    }

    async fn insert_op(&mut self, key: &str, values: &[FieldValue]) -> MyResult {
        let (conn, texts, layout) = self.session().await?;
        layout.write(values);
        let stmt = texts
            .statement(conn, layout, Op::Insert, layout.written())
            .await?;
        let encoded: Vec<Cow<'_, [u8]>> = values.iter().map(|v| text::encode(&v.value)).collect();
        let mut params: Vec<Param<'_>> = Vec::with_capacity(values.len() + 1);
        params.push(Param::Bytes(key.as_bytes()));
        params.extend(encoded.iter().map(|v| Param::Bytes(v)));
        conn.execute(&stmt, &params, |_| Ok(())).await?;
        Ok(Status::Ok)
    }

    async fn delete_op(&mut self, key: &str) -> MyResult {
        let (conn, texts, layout) = self.session().await?;
        if texts.delete.is_empty() {
            texts.delete = sql::delete(Dialect::Mysql, layout.table());
        }
        let stmt = prepared(&mut texts.by_text, conn, &texts.delete).await?;
        let affected = conn
            .execute(&stmt, &[Param::Bytes(key.as_bytes())], |_| Ok(()))
            .await?;
        Ok(Status::found(affected > 0))
    }
}

impl SqlOps for MysqlConnection {
    fn load_timeout(&self) -> Duration {
        self.inner.target.timeout.max(liops_sql::LOAD_BATCH_TIMEOUT)
    }

    fn vote_cache(&mut self) -> Option<&mut vote_cache::Cached> {
        self.cache.as_mut()
    }

    async fn liops_load_now(&mut self, table: &str, rows: &[LiopsRow]) -> MyResult {
        let (conn, _, _) = self.session().await?;
        // Multi-row inserts with literal numbers: the filler is made by the
        // server, so a statement of 1,000 rows stays near 40 KB, far below
        // max_allowed_packet.
        let mut loaded = 0;
        for chunk in rows.chunks(1000) {
            let mut sql = format!("INSERT INTO {table} (mykey, scratch, filler) VALUES ");
            for (i, r) in chunk.iter().enumerate() {
                let sep = if i == 0 { "" } else { "," };
                let _ = write!(
                    sql,
                    "{sep}({},{},REPEAT('x',{FILLER_WIDTH}))",
                    r.key, r.scratch
                );
            }
            loaded += conn.query(&sql).await?;
        }
        Ok(if loaded == rows.len() as u64 {
            Status::Ok
        } else {
            Status::UnexpectedState
        })
    }

    async fn liops_now(
        &mut self,
        table: &str,
        update: bool,
        range: (u64, u64),
        rows: &mut u64,
    ) -> MyResult {
        let (conn, texts, _) = self.session().await?;
        let (select, change, by_text) = texts.liops(table);
        let params = [Param::UInt(range.0), Param::UInt(range.1)];
        *rows = if update {
            let stmt = prepared(by_text, conn, change).await?;
            conn.execute(&stmt, &params, |_| Ok(())).await?
        } else {
            let stmt = prepared(by_text, conn, select).await?;
            let mut n = 0;
            conn.execute(&stmt, &params, |row| {
                n = row
                    .cells()
                    .next()
                    .transpose()?
                    .and_then(|c| c.as_u64())
                    .unwrap_or(0);
                Ok(())
            })
            .await?;
            n
        };
        Ok(Status::Ok)
    }

    async fn insert_article_now(&mut self, variant: VoteVariant, id: u64, title: &str) -> MyResult {
        let (conn, texts, _) = self.session().await?;
        let (texts, by_text) = texts.vote(variant);
        let stmt = prepared(by_text, conn, &texts.insert_article).await?;
        let params = [Param::UInt(id), Param::Bytes(title.as_bytes())];
        conn.execute(&stmt, &params, |_| Ok(())).await?;
        Ok(Status::Ok)
    }

    async fn vote_now(&mut self, variant: VoteVariant, article: u64, user: u64) -> MyResult {
        let (conn, texts, _) = self.session().await?;
        let (texts, by_text) = texts.vote(variant);
        let insert = prepared(by_text, conn, &texts.insert_vote).await?;
        let params = [Param::UInt(article), Param::UInt(user)];
        match variant {
            VoteVariant::Join => {
                conn.execute(&insert, &params, |_| Ok(())).await?;
                Ok(Status::Ok)
            }
            VoteVariant::Precomputed => {
                let count = prepared(by_text, conn, &texts.count_vote).await?;
                // One transaction, so the count never disagrees with the
                // rows in Vote, whatever fails in between.
                conn.query("START TRANSACTION").await?;
                let counted = async {
                    conn.execute(&insert, &params, |_| Ok(())).await?;
                    conn.execute(&count, &[Param::UInt(article)], |_| Ok(()))
                        .await
                }
                .await;
                match counted {
                    Ok(0) => {
                        conn.query("ROLLBACK").await?;
                        Ok(Status::NotFound)
                    }
                    Ok(_) => {
                        conn.query("COMMIT").await?;
                        Ok(Status::Ok)
                    }
                    Err(e) => {
                        if !e.is_fatal() {
                            conn.query("ROLLBACK").await?;
                        }
                        Err(e)
                    }
                }
            }
        }
    }

    async fn article_now(
        &mut self,
        variant: VoteVariant,
        id: u64,
        out: &mut ArticleRow,
    ) -> MyResult {
        let (conn, texts, _) = self.session().await?;
        let (texts, by_text) = texts.vote(variant);
        let stmt = prepared(by_text, conn, &texts.read).await?;
        let mut found = false;
        conn.execute(&stmt, &[Param::UInt(id)], |row| {
            let mut cells = row.cells();
            let mut next = || cells.next().transpose();
            let (got, title, votes) = (next()?, next()?, next()?);
            found = true;
            out.id = got.and_then(|c| c.as_u64()).unwrap_or(0);
            out.title = match title {
                Some(Cell::Bytes(t)) => String::from_utf8_lossy(t).into_owned(),
                _ => String::new(),
            };
            out.votes = votes.and_then(|c| c.as_u64()).unwrap_or(0);
            Ok(())
        })
        .await?;
        Ok(Status::found(found))
    }
}

sql_connection!(MysqlConnection);
