//! What a backend's connections implement to run LIOPS: the statements on
//! one connection ([`LiopsConnection`]), the rows a load writes
//! ([`LiopsRow`]), and the in-server loop's request and report
//! ([`ServerLoop`], [`ServerLoopOutcome`]).

use crate::backend::{Connection, Status};
use std::future::Future;
use std::time::Duration;

/// One row of a load batch; `filler` is the same for every row.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LiopsRow {
    pub key: u64,
    pub scratch: u64,
}

/// The LIOPS workload's statements on one connection.
pub trait LiopsConnection: Connection {
    /// Load: add `rows` (with the constant filler) to `table`.
    fn liops_load(&mut self, table: &str, rows: &[LiopsRow])
        -> impl Future<Output = Status> + Send;

    /// Sum `scratch` over `mykey BETWEEN lo AND hi` in `table`, setting
    /// `rows` to the rows it read.
    fn liops_select(
        &mut self,
        table: &str,
        lo: u64,
        hi: u64,
        rows: &mut u64,
    ) -> impl Future<Output = Status> + Send;

    /// Add one to `scratch` over `mykey BETWEEN lo AND hi` in `table`,
    /// setting `rows` to the rows it changed.
    fn liops_update(
        &mut self,
        table: &str,
        lo: u64,
        hi: u64,
        rows: &mut u64,
    ) -> impl Future<Output = Status> + Send;

    /// `liops.loop=server`: run this session's whole loop on `table` inside
    /// the server, as `spec` says, and fill `out` with what the loop
    /// counted and timed. One call per session for the whole run. A
    /// backend without an in-server loop answers NOT_IMPLEMENTED (its
    /// setup refuses `server` before a run gets here).
    fn liops_server_loop(
        &mut self,
        table: &str,
        spec: &ServerLoop,
        out: &mut ServerLoopOutcome,
    ) -> impl Future<Output = Status> + Send {
        let _ = (table, spec, out);
        async { Status::NotImplemented }
    }
}

/// One session's in-server loop: what the server runs for
/// [`LiopsConnection::liops_server_loop`].
#[derive(Clone, Debug, PartialEq)]
pub struct ServerLoop {
    /// How long the loop runs: the run's time limit (`RUN_TIME` or
    /// `maxexecutiontime`), from the loop's own start; `None` when the run
    /// has only a count.
    pub duration: Option<Duration>,
    /// Statements that start this early in the loop run but are not
    /// counted (`warmup`), as the client's warm-up intervals are not.
    pub warmup: Duration,
    /// This session's share of `operationcount`, when set: the loop stops
    /// after that many statements, counted or not.
    pub max_statements: Option<u64>,
    pub update_pct: u32,
    pub work_unit: u64,
    pub update_work_unit: u64,
    pub scale: u64,
    /// The session's random seed, from -1 to 1 (PostgreSQL's `setseed`).
    pub seed: f64,
}

/// What one session's in-server loop did, from the loop's own counts:
/// PGIO's columns, and the statement times it measured in the server.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServerLoopOutcome {
    pub loop_iterations: u64,
    pub sql_selects: u64,
    pub sql_updates: u64,
    /// Statement times taken in the server, each with how many statements
    /// took it; `ok` false for a statement that touched another number of
    /// rows than its range (UNEXPECTED_STATE, as in the client loop).
    pub times: Vec<ServerTimed>,
}

/// Statements of one kind that took one time, measured in the server.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ServerTimed {
    pub update: bool,
    pub ok: bool,
    pub ns: u64,
    pub count: u64,
}

impl ServerLoopOutcome {
    /// Whether the times account for exactly the statements the loop
    /// counted: a check of the backend's decoding.
    pub fn consistent(&self) -> bool {
        let sum = |update: bool, ok: Option<bool>| -> u64 {
            self.times
                .iter()
                .filter(|t| t.update == update && ok.is_none_or(|ok| t.ok == ok))
                .map(|t| t.count)
                .sum()
        };
        sum(false, Some(true)) == self.sql_selects
            && sum(true, Some(true)) == self.sql_updates
            && sum(false, None) + sum(true, None) == self.loop_iterations
    }
}
