//! The SQLite store: one file, several writers. WAL mode lets readers and
//! one writer work at once; a busy timeout makes concurrent writers (client
//! processes of one run, parallel suite configs) wait their turn instead of
//! failing; every write transaction starts `IMMEDIATE` so it takes the write
//! lock up front. `synchronous=NORMAL` in WAL mode keeps every committed
//! transaction across a process crash (SIGKILL); only an operating-system
//! crash may lose the last few.
//!
//! SQLite does not apply its busy timeout everywhere: switching a new file
//! to WAL, and a read turning into a write, fail at once with "database is
//! locked" while another connection holds a lock. The store retries those
//! ([`crate::db::retrying`]); here the journal mode is only changed when
//! the file is not in WAL mode already, so only the first opens of a new
//! file can meet that at all.

use std::path::Path;
use std::time::Duration;

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, OpenFlags, ToSql};

use crate::db::{Db, DbError};
use crate::model::{QueryResult, Value};

/// How a file is opened.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A results store, written by many processes: created if absent, in
    /// WAL mode.
    Store,
    /// A spool file, written by one process: created if absent, in
    /// SQLite's default rollback-journal mode, so that once its connection
    /// is closed the run is all in the one file and can be renamed.
    Spool,
    /// Reading only (`results query`): nothing is created or written.
    ReadOnly,
    /// A file runs are imported from: never created; opened read-write
    /// where it can be, so that SQLite can roll back the last transaction
    /// of a writer that died, else read-only.
    Source,
}

pub(crate) struct Sqlite {
    conn: Connection,
    read_only: bool,
}

impl Sqlite {
    /// Open `path`, waiting up to `wait` for another connection's lock
    /// wherever SQLite's busy handler applies.
    pub fn open(path: &Path, mode: Mode, wait: Duration) -> Result<Sqlite, DbError> {
        let rw = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let ro = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = match mode {
            Mode::Store | Mode::Spool => {
                Connection::open_with_flags(path, rw | OpenFlags::SQLITE_OPEN_CREATE)?
            }
            Mode::ReadOnly => Connection::open_with_flags(path, ro)?,
            Mode::Source => Connection::open_with_flags(path, rw)
                .or_else(|_| Connection::open_with_flags(path, ro))?,
        };
        conn.busy_timeout(wait)?;
        let read_only = matches!(mode, Mode::ReadOnly | Mode::Source);
        match mode {
            Mode::ReadOnly | Mode::Source => conn.pragma_update(None, "query_only", true)?,
            Mode::Store => {
                // journal_mode returns the mode; WAL persists in the file,
                // so only a new file (or one from elsewhere) is switched.
                let current: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
                if !current.eq_ignore_ascii_case("wal") {
                    let _: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
                }
                conn.pragma_update(None, "synchronous", "NORMAL")?;
                conn.pragma_update(None, "foreign_keys", true)?;
            }
            Mode::Spool => conn.pragma_update(None, "foreign_keys", true)?,
        }
        Ok(Sqlite { conn, read_only })
    }
}

struct Param<'a>(&'a Value);

impl ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self.0 {
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Integer(i) => ToSqlOutput::Borrowed(ValueRef::Integer(*i)),
            Value::Real(r) => ToSqlOutput::Borrowed(ValueRef::Real(*r)),
            Value::Text(t) => ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes())),
            Value::Blob(b) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
        })
    }
}

fn value(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Integer(i),
        ValueRef::Real(r) => Value::Real(r),
        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}

fn run_query(conn: &Connection, sql: &str, params: &[Value]) -> Result<QueryResult, DbError> {
    let mut stmt = conn.prepare_cached(sql)?;
    let columns: Vec<String> = stmt.column_names().iter().map(|c| c.to_string()).collect();
    let n = columns.len();
    let params: Vec<Param<'_>> = params.iter().map(Param).collect();
    let mut rows = stmt.query(rusqlite::params_from_iter(params.iter()))?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let mut r = Vec::with_capacity(n);
        for i in 0..n {
            r.push(value(row.get_ref(i)?));
        }
        out.push(r);
    }
    Ok(QueryResult { columns, rows: out })
}

impl Db for Sqlite {
    fn blob_type(&self) -> &'static str {
        "BLOB"
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        Ok(self.conn.execute_batch(sql)?)
    }

    fn exec(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let params: Vec<Param<'_>> = params.iter().map(Param).collect();
        Ok(stmt.execute(rusqlite::params_from_iter(params.iter()))? as u64)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<QueryResult, DbError> {
        run_query(&self.conn, sql, params)
    }

    fn begin_write(&mut self) -> Result<(), DbError> {
        Ok(self.conn.execute_batch("BEGIN IMMEDIATE")?)
    }

    fn has_table(&mut self, name: &str) -> Result<bool, DbError> {
        let n: i64 = self.conn.query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
            [name],
            |r| r.get(0),
        )?;
        Ok(n > 0)
    }

    fn is_read_only(&mut self, sql: &str) -> Option<Result<bool, DbError>> {
        Some(
            self.conn
                .prepare(sql)
                .map(|s| s.readonly())
                .map_err(DbError::from),
        )
    }

    fn query_read_only(&mut self, sql: &str) -> Result<QueryResult, DbError> {
        // query_only refuses writes even if a statement slips past the
        // readonly check; a writable connection gets its writes back after.
        self.conn.pragma_update(None, "query_only", true)?;
        let result = run_query(&self.conn, sql, &[]);
        if !self.read_only {
            self.conn.pragma_update(None, "query_only", false)?;
        }
        result
    }
}
