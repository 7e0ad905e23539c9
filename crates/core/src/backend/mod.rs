//! The boundary between sojourn and a database.
//!
//! A [`Backend`] is one configured database (a URL plus options). It creates
//! the table, answers whether data is present, and opens [`Connection`]s: one
//! per concurrent worker. A connection executes YCSB's five primitive
//! operations and returns a [`Status`] for each; it never panics on a database
//! error and never decides anything about timing, which is the executor's job.
//!
//! The trait uses `impl Future + Send` return types rather than boxed futures:
//! the executor is generic over the backend, so every call is monomorphised and
//! an operation on the `null:` backend costs no allocation.

pub mod counters;
pub mod memory;
pub mod null;

pub use counters::{ServerCounters, ServerStats};

use std::future::Future;
use std::sync::Arc;

use serde::Serialize;

pub use crate::workload::liops::{LiopsConfig, LiopsRow};
pub use crate::workload::vote::{ArticleRow, VoteVariant};

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

    // The vote workload (crate::workload::vote). Backends that do not run
    // it keep these defaults; `Backend::prepare_vote` refuses it before any
    // operation would reach them.

    /// Vote workload, load: insert article `id` with its title.
    fn insert_article(
        &mut self,
        variant: VoteVariant,
        id: u64,
        title: &str,
    ) -> impl Future<Output = Status> + Send {
        let _ = (variant, id, title);
        async { Status::NotImplemented }
    }

    /// Vote workload: `user` votes for `article`.
    fn vote(
        &mut self,
        variant: VoteVariant,
        article: u64,
        user: u64,
    ) -> impl Future<Output = Status> + Send {
        let _ = (variant, article, user);
        async { Status::NotImplemented }
    }

    /// Vote workload: read article `id` with its vote count into `out`; a
    /// missing article is [`Status::NotFound`].
    fn article(
        &mut self,
        variant: VoteVariant,
        id: u64,
        out: &mut ArticleRow,
    ) -> impl Future<Output = Status> + Send {
        let _ = (variant, id, out);
        async { Status::NotImplemented }
    }

    // The LIOPS workload (crate::workload::liops), on SQL backends; others
    // keep these defaults and `Backend::prepare_liops` refuses it first.

    /// LIOPS, load: add `rows` (with the constant filler) to `table`.
    fn liops_load(
        &mut self,
        table: &str,
        rows: &[LiopsRow],
    ) -> impl Future<Output = Status> + Send {
        let _ = (table, rows);
        async { Status::NotImplemented }
    }

    /// LIOPS: sum `scratch` over `mykey BETWEEN lo AND hi` in `table`,
    /// setting `rows` to the rows it read.
    fn liops_select(
        &mut self,
        table: &str,
        lo: u64,
        hi: u64,
        rows: &mut u64,
    ) -> impl Future<Output = Status> + Send {
        let _ = (table, lo, hi, rows);
        async { Status::NotImplemented }
    }

    /// LIOPS: add one to `scratch` over `mykey BETWEEN lo AND hi` in
    /// `table`, setting `rows` to the rows it changed.
    fn liops_update(
        &mut self,
        table: &str,
        lo: u64,
        hi: u64,
        rows: &mut u64,
    ) -> impl Future<Output = Status> + Send {
        let _ = (table, lo, hi, rows);
        async { Status::NotImplemented }
    }

    /// Called once on each worker's connection when a phase ends, before
    /// the server's counters are read again: a server that publishes a
    /// session's statistics lazily (PostgreSQL 15+, up to a second late)
    /// publishes them now, so the phase's last operations are counted.
    fn publish_stats(&mut self) -> impl Future<Output = ()> + Send {
        async {}
    }
}

/// What a backend without the vote workload answers.
pub fn vote_unsupported(describe: &str) -> BackendError {
    BackendError::Config(format!(
        "{describe} does not run the vote workload (workload=vote); it runs on {VOTE_BACKENDS}"
    ))
}

/// The backends that run the vote workload, for error messages.
pub const VOTE_BACKENDS: &str =
    "PostgreSQL (postgres://), MySQL/MariaDB (mysql://) and Redis (redis://)";

/// What a backend without the LIOPS workload answers.
pub fn liops_unsupported(describe: &str) -> BackendError {
    BackendError::Config(format!(
        "{describe} does not run the LIOPS workload (workload=liops); it runs on \
         PostgreSQL (postgres://) and MySQL/MariaDB (mysql://)"
    ))
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

    /// Vote workload: create `Article` and `Vote` (for `variant`) if
    /// absent; with `drop`, remove them (and their data) first.
    fn prepare_vote(
        &self,
        variant: VoteVariant,
        drop: bool,
    ) -> impl Future<Output = Result<(), BackendError>> + Send {
        let _ = (variant, drop);
        let refused = vote_unsupported(&self.describe());
        async move { Err(refused) }
    }

    /// Vote workload: whether no article is loaded (`None`: cannot tell).
    /// An error when the tables exist but were created for another
    /// variant than `variant` in a way it cannot use (precomputed reads
    /// over tables made for join): loads keep existing tables, so neither
    /// a load nor a run could succeed until they are dropped.
    fn vote_is_empty(
        &self,
        variant: VoteVariant,
    ) -> impl Future<Output = Result<Option<bool>, BackendError>> + Send {
        let _ = variant;
        let refused = vote_unsupported(&self.describe());
        async move { Err(refused) }
    }

    /// LIOPS: create the tables of `cfg` if absent (without their index,
    /// which [`Backend::finish_liops_load`] builds after the data); with
    /// `drop`, remove them first.
    fn prepare_liops(
        &self,
        cfg: &LiopsConfig,
        drop: bool,
    ) -> impl Future<Output = Result<(), BackendError>> + Send {
        let _ = (cfg, drop);
        let refused = liops_unsupported(&self.describe());
        async move { Err(refused) }
    }

    /// LIOPS: whether the first table holds no row (`None`: cannot tell).
    fn liops_is_empty(
        &self,
        cfg: &LiopsConfig,
    ) -> impl Future<Output = Result<Option<bool>, BackendError>> + Send {
        let _ = cfg;
        let refused = liops_unsupported(&self.describe());
        async move { Err(refused) }
    }

    /// LIOPS, after the load: build the index on `mykey` of every table
    /// (if absent) and refresh the planner's statistics.
    fn finish_liops_load(
        &self,
        cfg: &LiopsConfig,
    ) -> impl Future<Output = Result<(), BackendError>> + Send {
        let _ = cfg;
        let refused = liops_unsupported(&self.describe());
        async move { Err(refused) }
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
}
