//! The boundary between sojourn and a database.
//!
//! A [`Backend`] is one configured database (a URL plus options). It creates
//! the table, answers whether data is present, and opens [`Connection`]s: one
//! per concurrent worker. A connection executes YCSB's five primitive
//! operations and returns a [`Status`] for each; it never panics on a database
//! error and never decides anything about timing, which is the executor's job.
//! How every backend bounds, validates and settles one operation is
//! [`guard`]'s.
//!
//! This boundary names no workload. A workload that needs more than YCSB's
//! five operations (Noria's vote, LIOPS) defines a capability trait of its
//! own next to it; a backend that runs it implements that trait and lists
//! it in [`Backend::extensions`], where the workload finds it.
//!
//! The trait uses `impl Future + Send` return types rather than boxed futures:
//! the executor is generic over the backend, so every call is monomorphised and
//! an operation on the `null:` backend costs no allocation.

pub mod counters;
mod extensions;
pub mod guard;
pub mod memory;
pub mod null;

pub use counters::{ServerCounters, ServerStats, SERVER_INSTANCE};
pub use extensions::Extensions;

use std::future::Future;
use std::sync::Arc;

use serde::Serialize;

/// The outcome of one database operation, with YCSB's status names.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Status {
    Ok,
    BatchedOk,
    NotFound,
    Error,
    NotImplemented,
    UnexpectedState,
    BadRequest,
    Forbidden,
    ServiceUnavailable,
}

impl Status {
    /// Every status, in a fixed order usable as an array index.
    pub const ALL: [Status; 9] = [
        Status::Ok,
        Status::BatchedOk,
        Status::NotFound,
        Status::Error,
        Status::NotImplemented,
        Status::UnexpectedState,
        Status::BadRequest,
        Status::Forbidden,
        Status::ServiceUnavailable,
    ];
    pub const COUNT: usize = Self::ALL.len();

    /// Position in [`Status::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The name YCSB prints in `Return=NAME` lines.
    pub fn ycsb_name(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::BatchedOk => "BATCHED_OK",
            Status::NotFound => "NOT_FOUND",
            Status::Error => "ERROR",
            Status::NotImplemented => "NOT_IMPLEMENTED",
            Status::UnexpectedState => "UNEXPECTED_STATE",
            Status::BadRequest => "BAD_REQUEST",
            Status::Forbidden => "FORBIDDEN",
            Status::ServiceUnavailable => "SERVICE_UNAVAILABLE",
        }
    }

    /// `OK` when the record an operation addressed exists, else
    /// `NOT_FOUND`.
    pub fn found(found: bool) -> Status {
        if found {
            Status::Ok
        } else {
            Status::NotFound
        }
    }

    /// Whether YCSB counts this status as a success (its latency goes to the
    /// operation's own histogram rather than the `-FAILED` one).
    pub fn is_ok(self) -> bool {
        matches!(self, Status::Ok | Status::BatchedOk)
    }
}

/// The table a workload uses: its name and its fields, by index.
///
/// Backends map field indices to names once (at connect time) so that the hot
/// path passes small integers instead of strings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schema {
    pub table: String,
    pub field_names: Vec<String>,
    /// Other tables the workload uses (LIOPS has one per schema), so that
    /// per-table server counters can cover them all.
    pub more_tables: Vec<String>,
}

impl Schema {
    /// YCSB's default layout: `fieldcount` fields named `prefix0..prefixN-1`.
    pub fn ycsb(table: &str, field_prefix: &str, field_count: usize) -> Schema {
        Schema {
            table: table.to_string(),
            field_names: (0..field_count)
                .map(|i| format!("{field_prefix}{i}"))
                .collect(),
            more_tables: Vec::new(),
        }
    }

    /// Every table of the workload, the main one first.
    pub fn tables(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.table.as_str()).chain(self.more_tables.iter().map(String::as_str))
    }

    pub fn field_count(&self) -> usize {
        self.field_names.len()
    }
}

/// One field's value, by field index into [`Schema::field_names`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldValue {
    pub field: usize,
    pub value: Vec<u8>,
}

/// Value buffers kept for reuse on this thread: at most this many...
const SPARE_VALUES: usize = 256;
/// ...each of at most this capacity, so that one large read does not keep
/// its memory for the rest of the run.
const SPARE_VALUE_CAPACITY: usize = 64 * 1024;

thread_local! {
    /// Buffers of values that reads on this thread handed back
    /// ([`FieldValue::recycle`]), for the next reads to copy into.
    static SPARE: std::cell::RefCell<Vec<Vec<u8>>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl FieldValue {
    /// `field`'s value, a copy of `bytes`: in a buffer an earlier read on
    /// this thread handed back where there is one, so that a run's reads
    /// allocate nothing once they are in step (the workload recycles each
    /// read's values before the next one).
    pub fn copied(field: usize, bytes: &[u8]) -> FieldValue {
        let value = match SPARE.with_borrow_mut(Vec::pop) {
            Some(mut buf) => {
                buf.clear();
                buf.extend_from_slice(bytes);
                buf
            }
            None => bytes.to_vec(),
        };
        FieldValue { field, value }
    }

    /// Empty `values`, keeping their buffers for [`FieldValue::copied`] on
    /// this thread.
    pub fn recycle(values: &mut Vec<FieldValue>) {
        SPARE.with_borrow_mut(|spare| {
            for v in values.drain(..) {
                if spare.len() < SPARE_VALUES && v.value.capacity() <= SPARE_VALUE_CAPACITY {
                    spare.push(v.value);
                }
            }
        });
    }
}

/// Which fields a read or scan returns.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Fields<'a> {
    All,
    Some(&'a [usize]),
}

/// One row returned by a scan.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Row {
    pub key: String,
    pub fields: Vec<FieldValue>,
}

/// What setting a backend up gives, or why it could not.
pub type BackendResult<T> = Result<T, BackendError>;

/// Why a backend could not be set up or connected. Operation failures are
/// not errors: they are a [`Status`].
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error("cannot connect to {target}: {message}")]
    Connect { target: String, message: String },
    #[error("cannot prepare {target}: {message}")]
    Setup { target: String, message: String },
    #[error("{0}")]
    Config(String),
}

/// A connection used by one worker. Each method returns the operation's
/// status; values read are written into the caller's buffers, which the
/// caller clears and reuses.
pub trait Connection: Send + 'static {
    /// Read one record. `out` receives the requested fields; a missing
    /// record is [`Status::NotFound`].
    fn read(
        &mut self,
        key: &str,
        fields: Fields<'_>,
        out: &mut Vec<FieldValue>,
    ) -> impl Future<Output = Status> + Send;

    /// Read up to `count` records in key order starting at `start_key`
    /// (inclusive).
    fn scan(
        &mut self,
        start_key: &str,
        count: usize,
        fields: Fields<'_>,
        out: &mut Vec<Row>,
    ) -> impl Future<Output = Status> + Send;

    /// Overwrite the given fields of an existing record.
    fn update(&mut self, key: &str, values: &[FieldValue]) -> impl Future<Output = Status> + Send;

    /// Insert a new record with the given fields.
    fn insert(&mut self, key: &str, values: &[FieldValue]) -> impl Future<Output = Status> + Send;

    /// Delete one record.
    fn delete(&mut self, key: &str) -> impl Future<Output = Status> + Send;

    /// Why the last operation on this connection failed, in the
    /// database's words (its error code and message, a timeout, a reset),
    /// taken: `None` when it did not fail, or failed without a word from
    /// the database (a record not found). The workload asks after each
    /// failed operation it records.
    fn take_failure(&mut self) -> Option<String> {
        None
    }

    /// Called once on each worker's connection when a phase ends, before
    /// the server's counters are read again: a server that publishes a
    /// session's statistics lazily (PostgreSQL 15+, up to a second late)
    /// publishes them now, so the phase's last operations are counted.
    fn publish_stats(&mut self) -> impl Future<Output = ()> + Send {
        async {}
    }
}

/// What a backend's connections ask of the runtime threads that poll them,
/// so that the executor runs as many as the work needs (see
/// `executor::RuntimeThreads`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Threading {
    /// Each connection waits on a server over a socket of its own, or hands
    /// its calls to threads of its own: the connections share as few
    /// runtime threads as the load needs.
    Remote,
    /// The run's connections share this many sockets, their requests
    /// pipelined (`-p connections=K`).
    Sockets(usize),
    /// The database does its work on the thread that calls it (an engine in
    /// the client's process, called directly), so its speed is the
    /// threads': one per core.
    InProcess,
}

/// A configured database.
pub trait Backend: Send + Sync + 'static {
    type Conn: Connection;

    /// What this backend points at, for output and stored results. Never
    /// contains a password.
    fn describe(&self) -> String;

    /// Create the table if it is absent; with `drop`, empty it first.
    fn prepare(
        &self,
        schema: &Schema,
        drop: bool,
    ) -> impl Future<Output = Result<(), BackendError>> + Send;

    /// Whether the table holds no records; `None` when the backend cannot
    /// tell cheaply (then `run` trusts the user).
    fn is_empty(
        &self,
        schema: &Schema,
    ) -> impl Future<Output = Result<Option<bool>, BackendError>> + Send;

    /// Whether the data already there has the layout this backend would
    /// write for `schema` (a SQL or CQL table's columns, Redis' key type for
    /// `redis.mode`), checked before a run uses data it did not load: a
    /// mismatch is an error naming the setting that would match the data,
    /// or `--drop`, rather than a run whose every operation fails. A
    /// missing table is no mismatch. Default: nothing to check.
    fn check_layout(
        &self,
        schema: &Schema,
    ) -> impl Future<Output = Result<(), BackendError>> + Send {
        let _ = schema;
        async { Ok(()) }
    }

    /// Open one connection for one worker.
    fn connect(
        &self,
        schema: Arc<Schema>,
    ) -> impl Future<Output = Result<Self::Conn, BackendError>> + Send;

    /// The server's own counters now (reads, hits, updates, server CPU
    /// time...), or `None` where the database does not tell. Read over a
    /// connection of its own, never a worker's, at the start and end of a
    /// phase; `schema` lets a backend add counters of the benchmark table
    /// alone. Optional: the default tells nothing.
    fn server_counters(
        &self,
        schema: &Schema,
    ) -> impl Future<Output = Result<Option<ServerCounters>, BackendError>> + Send {
        let _ = schema;
        async { Ok(None) }
    }

    /// What its connections ask of the runtime threads that poll them; see
    /// [`Threading`]. Default: each waits on a server over a socket of its
    /// own.
    fn threading(&self) -> Threading {
        Threading::Remote
    }

    /// What this backend offers beyond YCSB's five operations: the
    /// capabilities of the workloads it runs (each defined next to its
    /// workload), found there by the workload that needs one. Default:
    /// none, and such a workload is refused before anything runs.
    fn extensions(&self) -> Extensions<Self>
    where
        Self: Sized,
    {
        Extensions::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_reuse_the_buffers_a_read_handed_back() {
        let first = FieldValue::copied(2, b"abc");
        assert_eq!((first.field, first.value.as_slice()), (2, &b"abc"[..]));
        let buffer = first.value.as_ptr();
        let mut read = vec![first];
        FieldValue::recycle(&mut read);
        assert!(read.is_empty());
        // The next copy lands in the same buffer, with only its own bytes.
        let again = FieldValue::copied(0, b"z");
        assert_eq!((again.field, again.value.as_slice()), (0, &b"z"[..]));
        assert_eq!(again.value.as_ptr(), buffer);
    }

    #[test]
    fn large_buffers_are_not_kept() {
        let spare = || SPARE.with_borrow(Vec::len);
        let before = spare();
        let mut read = vec![
            FieldValue::copied(0, &vec![7; SPARE_VALUE_CAPACITY + 1]),
            FieldValue::copied(1, b"small"),
        ];
        FieldValue::recycle(&mut read);
        assert_eq!(spare(), before + 1, "only the small buffer is kept");
        let next = FieldValue::copied(0, b"x");
        assert!(next.value.capacity() < SPARE_VALUE_CAPACITY);
        assert_eq!(spare(), before);
    }

    #[test]
    fn the_spare_buffers_are_bounded() {
        let mut read: Vec<FieldValue> = (0..SPARE_VALUES + 10)
            .map(|i| FieldValue::copied(i, b"v"))
            .collect();
        FieldValue::recycle(&mut read);
        assert_eq!(SPARE.with_borrow(Vec::len), SPARE_VALUES);
    }
}
