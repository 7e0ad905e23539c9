//! The little a store needs from a database, so that the store's logic
//! (store.rs) is written once for SQLite and PostgreSQL: statements with
//! `?` placeholders and dynamically typed [`Value`]s, transactions, and the
//! dialect's few differences.

use crate::model::{QueryResult, Value};

/// A database error, kept as the driver gave it.
#[derive(Debug)]
pub(crate) enum DbError {
    Sqlite(rusqlite::Error),
    #[cfg(feature = "postgres")]
    Postgres(tokio_postgres::Error),
}

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        DbError::Sqlite(e)
    }
}

#[cfg(feature = "postgres")]
impl From<tokio_postgres::Error> for DbError {
    fn from(e: tokio_postgres::Error) -> Self {
        DbError::Postgres(e)
    }
}

pub(crate) trait Db: Send {
    /// Binary column type name (`BLOB`, `BYTEA`).
    fn blob_type(&self) -> &'static str;

    /// Several statements without parameters (DDL, BEGIN, COMMIT).
    fn batch(&mut self, sql: &str) -> Result<(), DbError>;

    /// One statement; returns the rows changed.
    fn exec(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError>;

    /// One query; every row, every column.
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<QueryResult, DbError>;

    /// Start a transaction that will write: taken at once, so writers queue
    /// behind each other instead of failing when they upgrade a read lock.
    fn begin_write(&mut self) -> Result<(), DbError>;

    /// Whether a table exists.
    fn has_table(&mut self, name: &str) -> Result<bool, DbError>;

    /// Inside a write transaction: keep other processes from migrating the
    /// schema at the same time (SQLite's `BEGIN IMMEDIATE` already does).
    fn lock_schema(&mut self) -> Result<(), DbError> {
        Ok(())
    }

    /// Whether a statement would change the store, when the database can
    /// tell before running it (SQLite can); `None` if it cannot.
    fn is_read_only(&mut self, sql: &str) -> Option<Result<bool, DbError>>;

    /// Run one query that must not change anything.
    fn query_read_only(&mut self, sql: &str) -> Result<QueryResult, DbError>;
}
