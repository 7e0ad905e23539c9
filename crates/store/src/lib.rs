//! sojourn-store: every run kept, and read back exactly.
//!
//! A [`Store`] is an embedded SQLite file (the default; several client
//! processes may write to one file at once) or, with the `postgres` feature,
//! a PostgreSQL database shared by many client machines. A run is written as
//! it goes: [`Store::begin_run`] when it starts, [`Store::write_interval`]
//! once per time-series interval (each committed at once, so a crash loses
//! at most the interval in progress), [`Store::finish_run`] with the totals.
//! A run whose process died is shown as failed.
//!
//! Any number of processes may open, create and write one store at once
//! (each waits for the others' locks, up to [`WAIT`]). A run the store
//! cannot take in time is kept in a [`Spool`] file and imported later
//! ([`Store::import_spool`], [`Store::import`]), so no measured run is lost.
//!
//! Reading gives back the HDR histograms themselves ([`RunRecord`] holds
//! core's [`Stats`](sojourn_core::histograms::Stats) per run and per
//! interval), so summaries, reports, comparisons and merges of several
//! client processes ([`merge`]) are exact, bucket for bucket.
//!
//! What a run is and measured ([`RunRecord`]) and every format that
//! exports it are `sojourn_core`'s: the store keeps runs and reads them back.
//!
//! This crate knows sojourn's core types and nothing of backends or the
//! command line.

mod db;
mod error;
mod ids;
mod merge;
mod model;
#[cfg(feature = "postgres")]
mod postgres;
mod schema;
mod spool;
mod sqlite;
mod store;

pub use error::StoreError;
pub use merge::merge;
pub use model::{Filter, IntervalDetail, QueryResult, Value};
// What a run is and measured: core's, so every format reads stored and
// live runs alike; re-exported for the store's callers.
#[cfg(feature = "postgres")]
pub use postgres::PASSWORD_ENV;
pub use schema::SCHEMA_VERSION;
pub use sojourn_core::run_record::{
    host_name, new_run_id, new_run_uri, IntervalFigures, IntervalOp, RunId, RunMeta, RunRecord,
    RunStatus, RunSummary, RunTotals, StoredInterval,
};
pub use spool::{Spool, SpoolImport};
pub use store::{
    AgentInfo, AgentStatus, ClaimedShare, Heartbeat, PhaseSignal, PostedPhase, ShareReport,
    ShareState, ShareView, Store, AGENT_GONE, WAIT,
};
