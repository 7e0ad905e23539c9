//! The `sqlite:PATH` backend: an embedded SQLite database file, laid out like
//! YCSB's JDBC binding so that data loaded by either tool runs with the other.
//!
//! Layout: table [`Schema::table`] with `YCSB_KEY VARCHAR(255) PRIMARY KEY`
//! and one `TEXT` column per field. Field index `i` is column `FIELD{i}`
//! whatever the workload's `fieldnameprefix`: that is what YCSB's JDBC
//! binding creates (`FIELD0..FIELDn`, upper case) and SQL identifiers are
//! case-insensitive, so `field3` in a workload and `FIELD3` in the table are
//! the same column either way.
//!
//! Values are bound as TEXT when they are valid UTF-8 (YCSB's are ASCII) and
//! as BLOB otherwise, so any bytes survive a round trip; either reads back
//! as bytes. An `insert` is one autocommit `INSERT OR REPLACE`: like most
//! YCSB bindings (Redis, RocksDB, HBase) inserting an existing key
//! overwrites it, which also makes a retried load idempotent.
//!
//! Each sojourn connection owns one `rusqlite::Connection` in WAL mode with
//! `synchronous=NORMAL` (durable across application crashes, as fast as
//! SQLite gets without giving that up) and a busy timeout, so that
//! concurrent writers queue for SQLite's single write lock instead of failing.
//! `timeout.ms` does not apply: a statement cannot be abandoned midway.
//! Statements run on a thread of the connection's own (see
//! [`SqliteConnection`]), so one that blocks never delays another
//! connection's send.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{OpenFlags, OptionalExtension, ToSql};
use sojourn_core::backend::guard::{Failure, Guard, Operations, Read, Scan, Settle};
use sojourn_core::backend::{Backend, BackendError, FieldValue, Fields, Row, Schema, Status};

use crate::{columns, url, Open, OpenOptions};

mod command;
mod script;

/// How long a statement waits for another connection's write lock before
/// it fails with `SQLITE_BUSY` (reported as `ERROR`).
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Statements kept prepared per connection. A YCSB workload uses a handful
/// of shapes (read one/all fields, update one/all, insert, scan, delete).
const STATEMENT_CACHE_CAPACITY: usize = 64;

/// SQL texts kept per operation kind beyond the fixed ones; a workload that
/// picks arbitrary field subsets builds the text per call beyond this.
const SHAPE_CACHE_LIMIT: usize = 256;

/// A SQLite database file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqliteBackend {
    path: PathBuf,
}

impl SqliteBackend {
    pub fn new(path: impl Into<PathBuf>) -> SqliteBackend {
        SqliteBackend { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn setup_error(&self, message: impl ToString) -> BackendError {
        BackendError::Setup {
            target: self.describe(),
            message: message.to_string(),
        }
    }

    fn connect_error(&self, message: impl ToString) -> BackendError {
        BackendError::Connect {
            target: self.describe(),
            message: message.to_string(),
        }
    }

    /// Whether the workload's table (if it exists) has the columns
    /// `schema` needs.
    fn check_columns(
        &self,
        conn: &rusqlite::Connection,
        schema: &Schema,
    ) -> Result<(), BackendError> {
        let mut stmt = conn
            .prepare("SELECT upper(name) FROM pragma_table_info(?1)")
            .map_err(|e| self.setup_error(e))?;
        let columns: Vec<String> = stmt
            .query_map([&schema.table], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.setup_error(e))?;
        columns::check(&schema.table, &columns, schema.field_count())
            .map_err(|e| self.setup_error(e))
    }
}

impl Open for SqliteBackend {
    const FORMS: &'static [&'static str] = &[
        "sqlite:PATH",
        "sqlite: or `sqlite` (the default database file)",
    ];

    /// `sqlite:PATH` (relative or absolute), or `sqlite:` and `sqlite` for
    /// [`OpenOptions::default_sqlite`].
    fn configure(url: &str, options: &OpenOptions<'_>) -> Result<SqliteBackend, String> {
        let path = url::split(url).1.filter(|p| !p.is_empty());
        Ok(SqliteBackend::new(
            path.map_or(options.default_sqlite, Path::new),
        ))
    }
}

/// Open `path` with the settings every connection uses.
fn open(path: &Path, create: bool) -> rusqlite::Result<rusqlite::Connection> {
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if create {
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
    }
    let conn = rusqlite::Connection::open_with_flags(path, flags)?;
    // Before anything else, so that even the pragmas below wait for a
    // connection that is busy loading rather than fail.
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // WAL is a property of the file; switching needs an exclusive moment, so
    // only the first connection (or `prepare`) does it.
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        let _: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    }
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE_CAPACITY);
    Ok(conn)
}

/// `name` as a quoted SQL identifier.
fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn column(field: usize) -> String {
    format!("FIELD{field}")
}

fn column_list(fields: &[usize]) -> String {
    let mut list = String::new();
    for (i, &field) in fields.iter().enumerate() {
        if i > 0 {
            list.push_str(", ");
        }
        let _ = write!(list, "FIELD{field}");
    }
    list
}

fn create_table_sql(table: &str, field_count: usize) -> String {
    let mut sql = format!("CREATE TABLE IF NOT EXISTS {table} (YCSB_KEY VARCHAR(255) PRIMARY KEY");
    for field in 0..field_count {
        let _ = write!(sql, ", {} TEXT", column(field));
    }
    sql.push(')');
    sql
}

impl Backend for SqliteBackend {
    type Conn = SqliteConnection;

    fn extensions(&self) -> sojourn_core::backend::Extensions<Self> {
        sojourn_core::backend::Extensions::new()
            .with(sojourn_core::workload::script::ScriptSupport::<Self>::new())
    }

    fn describe(&self) -> String {
        format!("sqlite:{}", self.path.display())
    }

    // `prepare`, `is_empty` and `connect` do their file and SQLite work
    // inline: they run before the measured phase, once per backend or per
    // worker, and nothing else shares the thread yet.
    async fn prepare(&self, schema: &Schema, drop: bool) -> Result<(), BackendError> {
        if let Some(parent) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| {
                self.setup_error(format!("cannot create {}: {e}", parent.display()))
            })?;
        }
        let conn = open(&self.path, true).map_err(|e| self.setup_error(e))?;
        let table = quote_ident(&schema.table);
        if drop {
            // Dropping rather than deleting rows also replaces a table made
            // for a different `fieldcount`.
            conn.execute_batch(&format!("DROP TABLE IF EXISTS {table}"))
                .map_err(|e| self.setup_error(e))?;
        }
        conn.execute_batch(&create_table_sql(&table, schema.field_count()))
            .map_err(|e| self.setup_error(e))?;
        self.check_columns(&conn, schema)
    }

    async fn check_layout(&self, schema: &Schema) -> Result<(), BackendError> {
        if !self.path.exists() {
            return Ok(());
        }
        let conn = open(&self.path, false).map_err(|e| self.connect_error(e))?;
        self.check_columns(&conn, schema)
    }

    async fn is_empty(&self, schema: &Schema) -> Result<Option<bool>, BackendError> {
        match std::fs::metadata(&self.path) {
            Ok(_) => {}
            // Not creating the file just to find it empty.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Some(true)),
            Err(e) => return Err(self.connect_error(e)),
        }
        let conn = open(&self.path, false).map_err(|e| self.connect_error(e))?;
        let table_exists: bool = conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM sqlite_master \
                 WHERE type = 'table' AND name = ?1 COLLATE NOCASE)",
                [&schema.table],
                |r| r.get(0),
            )
            .map_err(|e| self.connect_error(e))?;
        if !table_exists {
            return Ok(Some(true));
        }
        let sql = format!("SELECT 1 FROM {} LIMIT 1", quote_ident(&schema.table));
        let any_row = conn
            .query_row(&sql, [], |_| Ok(()))
            .optional()
            .map_err(|e| self.connect_error(e))?;
        Ok(Some(any_row.is_none()))
    }

    async fn connect(&self, schema: Arc<Schema>) -> Result<SqliteConnection, BackendError> {
        // No SQLITE_OPEN_CREATE: running against a file that does not exist
        // (a typo in the path) should fail here, not as N errors later.
        let conn = open(&self.path, false).map_err(|e| {
            if self.path.exists() {
                self.connect_error(e)
            } else {
                self.connect_error(format!("{e} (the file does not exist)"))
            }
        })?;
        SqliteConnection::new(conn, &schema)
            .map_err(|e| self.connect_error(format!("starting the connection's thread: {e}")))
    }
}

/// SQL texts by operation shape, so that the hot path neither formats SQL
/// nor allocates once a shape has been seen.
struct SqlTexts {
    table: String,
    all_fields: Vec<usize>,
    read_all: String,
    scan_all: String,
    delete: String,
    exists: String,
    /// Texts of the other shapes, by [`Op`].
    shaped: [HashMap<Box<[usize]>, String>; 4],
    /// The text of a shape beyond [`SHAPE_CACHE_LIMIT`].
    overflow: String,
    /// Field indices of the current write, reused across calls.
    written: Vec<usize>,
}

/// The operations whose SQL depends on the fields they touch.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Op {
    Read,
    Scan,
    Update,
    Insert,
}

impl SqlTexts {
    fn new(schema: &Schema) -> SqlTexts {
        let table = quote_ident(&schema.table);
        let all_fields: Vec<usize> = (0..schema.field_count()).collect();
        SqlTexts {
            read_all: read_sql(&table, &all_fields),
            scan_all: scan_sql(&table, &all_fields),
            delete: format!("DELETE FROM {table} WHERE YCSB_KEY = ?1"),
            exists: format!("SELECT 1 FROM {table} WHERE YCSB_KEY = ?1"),
            all_fields,
            table,
            shaped: Default::default(),
            overflow: String::new(),
            written: Vec::new(),
        }
    }

    /// The text of a read or scan (`op`) of `fields`, and the fields it
    /// returns, in order.
    fn reading<'a>(&'a mut self, op: Op, fields: Fields<'a>) -> (&'a str, &'a [usize]) {
        match fields {
            Fields::All if op == Op::Read => (&self.read_all, &self.all_fields),
            Fields::All => (&self.scan_all, &self.all_fields),
            Fields::Some(list) => {
                let cache = &mut self.shaped[op as usize];
                (
                    shaped(cache, &mut self.overflow, &self.table, op, list),
                    list,
                )
            }
        }
    }

    /// The text of an update or insert (`op`) of `values`.
    fn writing(&mut self, op: Op, values: &[FieldValue]) -> &str {
        self.written.clear();
        self.written.extend(values.iter().map(|v| v.field));
        let cache = &mut self.shaped[op as usize];
        shaped(cache, &mut self.overflow, &self.table, op, &self.written)
    }
}

/// The text of `op` over `fields` from `cache`, built on first use.
fn shaped<'a>(
    cache: &'a mut HashMap<Box<[usize]>, String>,
    overflow: &'a mut String,
    table: &str,
    op: Op,
    fields: &[usize],
) -> &'a str {
    if !cache.contains_key(fields) {
        let text = match op {
            Op::Read => read_sql(table, fields),
            Op::Scan => scan_sql(table, fields),
            Op::Update => update_sql(table, fields),
            Op::Insert => insert_sql(table, fields),
        };
        if cache.len() >= SHAPE_CACHE_LIMIT {
            *overflow = text;
            return overflow;
        }
        cache.insert(fields.into(), text);
    }
    &cache[fields]
}

fn read_sql(table: &str, fields: &[usize]) -> String {
    if fields.is_empty() {
        return format!("SELECT 1 FROM {table} WHERE YCSB_KEY = ?1");
    }
    format!(
        "SELECT {} FROM {table} WHERE YCSB_KEY = ?1",
        column_list(fields)
    )
}

fn scan_sql(table: &str, fields: &[usize]) -> String {
    let mut columns = "YCSB_KEY".to_string();
    if !fields.is_empty() {
        columns.push_str(", ");
        columns.push_str(&column_list(fields));
    }
    format!("SELECT {columns} FROM {table} WHERE YCSB_KEY >= ?1 ORDER BY YCSB_KEY LIMIT ?2")
}

fn update_sql(table: &str, fields: &[usize]) -> String {
    let mut sql = format!("UPDATE {table} SET ");
    for (i, &field) in fields.iter().enumerate() {
        if i > 0 {
            sql.push_str(", ");
        }
        let _ = write!(sql, "FIELD{field} = ?{}", i + 2);
    }
    sql.push_str(" WHERE YCSB_KEY = ?1");
    sql
}

fn insert_sql(table: &str, fields: &[usize]) -> String {
    let mut sql = format!("INSERT OR REPLACE INTO {table} (YCSB_KEY");
    for &field in fields {
        let _ = write!(sql, ", FIELD{field}");
    }
    sql.push_str(") VALUES (?1");
    for i in 0..fields.len() {
        let _ = write!(sql, ", ?{}", i + 2);
    }
    sql.push(')');
    sql
}

/// Bytes bound as TEXT when they are UTF-8, else as BLOB.
struct Bytes<'a>(&'a [u8]);

impl ToSql for Bytes<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match std::str::from_utf8(self.0) {
            Ok(text) => ValueRef::Text(text.as_bytes()),
            Err(_) => ValueRef::Blob(self.0),
        }))
    }
}

/// A column's value as bytes; `None` for NULL (a field never written).
fn value_bytes(value: ValueRef<'_>) -> Option<Vec<u8>> {
    match value {
        ValueRef::Null => None,
        ValueRef::Text(b) | ValueRef::Blob(b) => Some(b.to_vec()),
        // Only tables written by other tools hold numbers.
        ValueRef::Integer(n) => Some(n.to_string().into_bytes()),
        ValueRef::Real(x) => Some(x.to_string().into_bytes()),
    }
}

fn push_fields(
    row: &rusqlite::Row<'_>,
    first_column: usize,
    fields: &[usize],
    out: &mut Vec<FieldValue>,
) -> rusqlite::Result<()> {
    for (i, &field) in fields.iter().enumerate() {
        if let Some(value) = value_bytes(row.get_ref(first_column + i)?) {
            out.push(FieldValue { field, value });
        }
    }
    Ok(())
}

/// A connection of [`SqliteBackend`].
///
/// Its statements run on a thread of its own, not on the runtime thread
/// that paces it: SQLite's calls block (a write waits for the database's
/// single write lock), and a runtime thread hosts several connections, so
/// a slow statement run inline would hold back the others' sends and the
/// response times would include the tool's own queueing. A statement
/// travels in a request that is reused, buffers and all, so the hand-off
/// allocates nothing once warm.
pub struct SqliteConnection {
    to_thread: std::sync::mpsc::SyncSender<Box<Request>>,
    from_thread: tokio::sync::mpsc::Receiver<Box<Request>>,
    /// The request, when no statement is in flight.
    idle: Option<Box<Request>>,
    guard: Guard,
    last_error: Option<String>,
}

/// One statement and the buffers it reads and fills.
#[derive(Default)]
struct Request {
    /// The statement's shape; `None` for a delete, whose SQL is fixed.
    op: Option<Op>,
    key: String,
    /// Every field, or those of `fields`.
    all_fields: bool,
    /// The fields of a read or scan of some; kept between requests, so a
    /// read of all fields does not give up the buffer the next one reuses.
    fields: Vec<usize>,
    count: usize,
    values: Vec<FieldValue>,
    out: Vec<FieldValue>,
    rows: Vec<Row>,
    /// A script's command (see `script.rs`), run when `scripted`.
    script: Option<Box<command::Command>>,
    scripted: bool,
    result: Option<rusqlite::Result<Status>>,
}

impl Settle for SqliteConnection {
    type Error = rusqlite::Error;

    fn failure_text(&mut self) -> &mut Option<String> {
        &mut self.last_error
    }

    fn guard(&self) -> Guard {
        self.guard
    }

    fn settle(&mut self, failure: Failure<rusqlite::Error>) -> Status {
        self.last_error = Some(match failure {
            Failure::Failed(e) => e.to_string(),
            // No timeout is set: a statement cannot be abandoned.
            Failure::TimedOut(limit) => format!("timed out after {} ms", limit.as_millis()),
        });
        Status::Error
    }
}

impl SqliteConnection {
    fn new(conn: rusqlite::Connection, schema: &Schema) -> std::io::Result<SqliteConnection> {
        let (to_thread, requests) = std::sync::mpsc::sync_channel::<Box<Request>>(1);
        let (answers, from_thread) = tokio::sync::mpsc::channel(1);
        let mut statements = Statements {
            conn,
            sql: SqlTexts::new(schema),
        };
        std::thread::Builder::new()
            .name("sojourn-sqlite".into())
            .spawn(move || {
                // Ends when the connection is dropped (its sender with it).
                while let Ok(mut request) = requests.recv() {
                    request.result = Some(statements.run(&mut request));
                    if answers.blocking_send(request).is_err() {
                        break;
                    }
                }
            })?;
        Ok(SqliteConnection {
            to_thread,
            from_thread,
            idle: Some(Box::default()),
            guard: Guard::new(schema.field_count(), None),
            last_error: None,
        })
    }

    /// The message of the most recent SQLite error on this connection, for
    /// diagnosing `ERROR` statuses.
    pub fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }

    /// Run the statement `fill` describes on the connection's thread.
    async fn call(
        &mut self,
        fill: impl FnOnce(&mut Request),
    ) -> rusqlite::Result<(Status, &mut Request)> {
        let gone = || {
            rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_MISUSE),
                Some("the connection's thread has ended".into()),
            )
        };
        let mut request = match self.idle.take() {
            Some(r) => r,
            // A statement whose caller gave up waiting is still out: its
            // request comes back first.
            None => self.from_thread.recv().await.ok_or_else(gone)?,
        };
        request.result = None;
        fill(&mut request);
        self.to_thread.send(request).map_err(|_| gone())?;
        let request = self.from_thread.recv().await.ok_or_else(gone)?;
        let request = self.idle.insert(request);
        match request.result.take() {
            Some(Ok(status)) => Ok((status, request)),
            Some(Err(e)) => Err(e),
            None => Err(gone()),
        }
    }
}

impl Request {
    /// Aim the request at `key` with the statement of `op` (`None`: delete).
    fn aim(&mut self, op: Option<Op>, key: &str) {
        self.scripted = false;
        self.op = op;
        self.key.clear();
        self.key.push_str(key);
    }

    /// The fields a read or scan returns.
    fn set_fields(&mut self, fields: Fields<'_>) {
        self.fields.clear();
        match fields {
            Fields::All => self.all_fields = true,
            Fields::Some(list) => {
                self.all_fields = false;
                self.fields.extend_from_slice(list);
            }
        }
    }
}

impl Operations for SqliteConnection {
    async fn read_op(&mut self, read: Read<'_>) -> rusqlite::Result<Status> {
        let (status, request) = self
            .call(|r| {
                r.aim(Some(Op::Read), read.key);
                r.set_fields(read.fields);
                r.out.clear();
            })
            .await?;
        read.out.append(&mut request.out);
        Ok(status)
    }

    async fn scan_op(&mut self, scan: Scan<'_>) -> rusqlite::Result<Status> {
        let (status, request) = self
            .call(|r| {
                r.aim(Some(Op::Scan), scan.start_key);
                r.count = scan.count;
                r.set_fields(scan.fields);
                r.rows.clear();
            })
            .await?;
        scan.out.append(&mut request.rows);
        Ok(status)
    }

    async fn update_op(&mut self, key: &str, values: &[FieldValue]) -> rusqlite::Result<Status> {
        self.write(Op::Update, key, values).await
    }

    async fn insert_op(&mut self, key: &str, values: &[FieldValue]) -> rusqlite::Result<Status> {
        self.write(Op::Insert, key, values).await
    }

    async fn delete_op(&mut self, key: &str) -> rusqlite::Result<Status> {
        let (status, _) = self.call(|r| r.aim(None, key)).await?;
        Ok(status)
    }
}

impl SqliteConnection {
    async fn write(
        &mut self,
        op: Op,
        key: &str,
        values: &[FieldValue],
    ) -> rusqlite::Result<Status> {
        let (status, _) = self
            .call(|r| {
                r.aim(Some(op), key);
                copy_values(&mut r.values, values);
            })
            .await?;
        Ok(status)
    }
}

/// `from` into `into`, reusing the byte buffers already there: the
/// hand-off to the connection's thread then allocates nothing once warm.
fn copy_values(into: &mut Vec<FieldValue>, from: &[FieldValue]) {
    into.truncate(from.len());
    for (i, v) in from.iter().enumerate() {
        match into.get_mut(i) {
            Some(dst) => {
                dst.field = v.field;
                dst.value.clear();
                dst.value.extend_from_slice(&v.value);
            }
            None => into.push(v.clone()),
        }
    }
}

/// The statements of one connection, run on its thread.
struct Statements {
    conn: rusqlite::Connection,
    sql: SqlTexts,
}

impl Statements {
    fn run(&mut self, r: &mut Request) -> rusqlite::Result<Status> {
        if let Some(command) = r.script.as_deref_mut().filter(|_| r.scripted) {
            return command.run(&self.conn);
        }
        let fields = if r.all_fields {
            Fields::All
        } else {
            Fields::Some(&r.fields)
        };
        match r.op {
            None => {
                let changed = self
                    .conn
                    .prepare_cached(&self.sql.delete)?
                    .execute([&r.key])?;
                Ok(Status::found(changed > 0))
            }
            Some(Op::Read) => {
                let (text, columns) = self.sql.reading(Op::Read, fields);
                let mut stmt = self.conn.prepare_cached(text)?;
                let mut rows = stmt.query([&r.key])?;
                match rows.next()? {
                    Some(row) => {
                        push_fields(row, 0, columns, &mut r.out)?;
                        Ok(Status::Ok)
                    }
                    None => Ok(Status::NotFound),
                }
            }
            Some(Op::Scan) => {
                let (text, columns) = self.sql.reading(Op::Scan, fields);
                let limit = i64::try_from(r.count).unwrap_or(i64::MAX);
                let mut stmt = self.conn.prepare_cached(text)?;
                let mut rows = stmt.query(rusqlite::params![r.key, limit])?;
                while let Some(row) = rows.next()? {
                    let mut fields = Vec::with_capacity(columns.len());
                    push_fields(row, 1, columns, &mut fields)?;
                    r.rows.push(Row {
                        key: row.get(0)?,
                        fields,
                    });
                }
                Ok(Status::Ok)
            }
            Some(Op::Update) => {
                if r.values.is_empty() {
                    // Nothing to set: the answer is only whether the record exists.
                    let found = self
                        .conn
                        .prepare_cached(&self.sql.exists)?
                        .exists([&r.key])?;
                    return Ok(Status::found(found));
                }
                let text = self.sql.writing(Op::Update, &r.values);
                Ok(Status::found(
                    execute_write(&self.conn, text, &r.key, &r.values)? > 0,
                ))
            }
            Some(Op::Insert) => {
                let text = self.sql.writing(Op::Insert, &r.values);
                execute_write(&self.conn, text, &r.key, &r.values)?;
                Ok(Status::Ok)
            }
        }
    }
}

/// Run a write whose parameters are the key (`?1`) then `values` in order.
fn execute_write(
    conn: &rusqlite::Connection,
    sql: &str,
    key: &str,
    values: &[FieldValue],
) -> rusqlite::Result<usize> {
    let mut stmt = conn.prepare_cached(sql)?;
    stmt.raw_bind_parameter(1, key)?;
    for (i, v) in values.iter().enumerate() {
        stmt.raw_bind_parameter(i + 2, Bytes(&v.value))?;
    }
    stmt.raw_execute()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sql_shapes() {
        assert_eq!(
            insert_sql("\"t\"", &[0, 2]),
            "INSERT OR REPLACE INTO \"t\" (YCSB_KEY, FIELD0, FIELD2) VALUES (?1, ?2, ?3)"
        );
        assert_eq!(
            update_sql("\"t\"", &[3, 1]),
            "UPDATE \"t\" SET FIELD3 = ?2, FIELD1 = ?3 WHERE YCSB_KEY = ?1"
        );
        assert_eq!(
            read_sql("\"t\"", &[1]),
            "SELECT FIELD1 FROM \"t\" WHERE YCSB_KEY = ?1"
        );
        assert_eq!(
            scan_sql("\"t\"", &[0, 1]),
            "SELECT YCSB_KEY, FIELD0, FIELD1 FROM \"t\" WHERE YCSB_KEY >= ?1 ORDER BY YCSB_KEY LIMIT ?2"
        );
        assert_eq!(
            create_table_sql("\"usertable\"", 2),
            "CREATE TABLE IF NOT EXISTS \"usertable\" (YCSB_KEY VARCHAR(255) PRIMARY KEY, FIELD0 TEXT, FIELD1 TEXT)"
        );
        assert_eq!(quote_ident("a\"b"), "\"a\"\"b\"");
    }
}
