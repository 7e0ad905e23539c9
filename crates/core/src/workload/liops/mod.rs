//! LIOPS: the PGIO / SLOB method of stressing a database's storage layer
//! rather than its query layer, selected with `workload=liops`. This module
//! owns the workload's properties ([`LiopsConfig`], PGIO's `pgio.conf`
//! names), the row layout and load order ([`Permutation`]), what each
//! operation does ([`LiopsWorker`]), and the capability a backend
//! implements to run it ([`Liops`], [`LiopsConnection`]); the SQL lives
//! with each backend.
//!
//! Load: `NUM_SCHEMAS` tables (`pgio1`, `pgio2`, ...) of `SCALE` rows
//! `(mykey, scratch, filler char(1024))`, one row per 8 KB block on
//! PostgreSQL (`fillfactor=10`), written in batches in a random order of
//! `mykey`, so neighbouring keys live in unrelated blocks; the btree index
//! on `mykey` is built after the data, as PGIO does.
//!
//! Run: `NUM_THREADS` sessions per table. Each operation picks `k`
//! uniformly and either sums `scratch` over `mykey BETWEEN k AND
//! k + WORK_UNIT` (a SCAN, `WORK_UNIT + 1` rows) or, in `UPDATE_PCT` of the
//! operations, adds one to `scratch` over `k .. k + UPDATE_WORK_UNIT` (an
//! UPDATE). One statement per transaction. A statement that touches any
//! other number of rows means missing data and counts as
//! UNEXPECTED_STATE, so every OK operation touched exactly its range: rows
//! touched, and the LIOPS figure, follow from the OK counts.
//!
//! Where the loop runs (`liops.loop`): `client` sends every statement from
//! sojourn, one step per statement; `server` runs each session's loop
//! inside the server as PGIO does, one call per session for the whole run
//! ([`LiopsConnection::liops_server_loop`]), which hands back the loop's
//! own counts and the statement times it took ([`ServerLoopOutcome`]).
//! A backend without such a loop refuses `server` before anything runs
//! ([`LiopsConfig::refuse_server_loop`]).

mod config;
mod connection;
mod kind;
mod worker;

#[cfg(test)]
mod tests;

pub use config::{
    is_liops, parse_scale, LiopsConfig, LoopIn, BLOCK_SIZE, FILLER_WIDTH, LIOPS_PROPERTIES,
};
pub use connection::{LiopsConnection, LiopsRow, ServerLoop, ServerLoopOutcome, ServerTimed};
pub use kind::{Liops, LiopsSupport};
pub use worker::{LiopsOp, LiopsShared, LiopsWorker, Permutation, ServerRun};
