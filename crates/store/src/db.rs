//! The little a store needs from a database, so that the store's logic
//! (store.rs) is written once for SQLite and PostgreSQL: statements with
//! `?` placeholders and dynamically typed [`Value`]s, transactions, and the
//! dialect's few differences.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::model::{QueryResult, Value};

/// The longest pause between two tries of an operation the database said
/// was busy.
const MAX_PAUSE: Duration = Duration::from_millis(250);

/// Run `op` until it succeeds, fails with something other than
/// [`DbError::is_busy`], or `wait` has passed: SQLite's busy handler does
/// not cover every lock (a journal-mode change, a read transaction that
/// must become a write), and PostgreSQL reports a deadlock or a
/// serialization failure for the caller to retry. Pauses grow and are
/// jittered, so processes that collided do not collide again in step.
pub(crate) fn retrying<T>(
    wait: Duration,
    mut op: impl FnMut() -> Result<T, DbError>,
) -> Result<T, DbError> {
    let deadline = Instant::now() + wait;
    let mut pause = Duration::from_millis(2);
    loop {
        match op() {
            Err(e) if e.is_busy() => {
                let now = Instant::now();
                if now >= deadline {
                    return Err(e);
                }
                let jittered = pause.mul_f64(1.0 + jitter());
                std::thread::sleep(jittered.min(deadline - now));
                pause = (pause * 2).min(MAX_PAUSE);
            }
            r => return r,
        }
    }
}

/// A fraction in [0, 1) that differs between processes and between calls.
fn jitter() -> f64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .subsec_nanos();
    let mixed = (nanos ^ std::process::id().rotate_left(16)).wrapping_mul(2_654_435_761);
    f64::from(mixed) / (f64::from(u32::MAX) + 1.0)
}

/// A database error, kept as the driver gave it.
#[derive(Debug)]
pub(crate) enum DbError {
    Sqlite(rusqlite::Error),
    #[cfg(feature = "postgres")]
    Postgres(tokio_postgres::Error),
    /// No answer within the store's wait (a stalled server, a network
    /// that drops packets).
    #[cfg(feature = "postgres")]
    TimedOut(Duration),
    /// A setting of the location that cannot be used (a TLS mode, a
    /// certificate file), said in words.
    #[cfg(feature = "postgres")]
    Config(String),
}

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        DbError::Sqlite(e)
    }
}

impl DbError {
    /// Whether the database only asked to try again later: another
    /// connection holds a lock it needs (SQLite's busy and locked, a WAL
    /// locking race; PostgreSQL's serialization failure, deadlock, lock
    /// not available, or a server still starting). These are retried until
    /// the store's wait is over; anything else is reported at once.
    pub(crate) fn is_busy(&self) -> bool {
        match self {
            DbError::Sqlite(rusqlite::Error::SqliteFailure(e, _)) => matches!(
                e.code,
                rusqlite::ErrorCode::DatabaseBusy
                    | rusqlite::ErrorCode::DatabaseLocked
                    | rusqlite::ErrorCode::FileLockingProtocolFailed
            ),
            DbError::Sqlite(_) => false,
            #[cfg(feature = "postgres")]
            DbError::Postgres(e) => {
                use tokio_postgres::error::SqlState;
                e.code().is_some_and(|c| {
                    [
                        SqlState::T_R_SERIALIZATION_FAILURE,
                        SqlState::T_R_DEADLOCK_DETECTED,
                        SqlState::LOCK_NOT_AVAILABLE,
                        SqlState::CANNOT_CONNECT_NOW,
                    ]
                    .contains(c)
                })
            }
            #[cfg(feature = "postgres")]
            DbError::TimedOut(_) | DbError::Config(_) => false,
        }
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

    /// Inside a write transaction, before anything of the schema is
    /// read or created: keep other processes from creating or migrating
    /// the schema at the same time, until the transaction ends (SQLite's
    /// `BEGIN IMMEDIATE` already does).
    fn lock_schema(&mut self) -> Result<(), DbError> {
        Ok(())
    }

    /// Whether a statement would change the store, when the database can
    /// tell before running it (SQLite can); `None` if it cannot.
    fn is_read_only(&mut self, sql: &str) -> Option<Result<bool, DbError>>;

    /// Run one query that must not change anything.
    fn query_read_only(&mut self, sql: &str) -> Result<QueryResult, DbError>;
}
