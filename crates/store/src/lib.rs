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
//! Reading gives back the HDR histograms themselves ([`StoredRun`] holds
//! core's [`Stats`](sojourn_core::recorder::Stats) per run and per
//! interval), so summaries, reports, comparisons and merges of several
//! client processes ([`merge`]) are exact, bucket for bucket.
//!
//! [`export`] turns stored runs into what other tools read: PerfKitBenchmarker
//! samples, HdrHistogram interval logs, CSV and JSON.
//!
//! This crate knows sojourn's core types and nothing of backends or the
//! command line.

mod db;
mod error;
pub mod export;
mod ids;
mod merge;
mod model;
#[cfg(feature = "postgres")]
mod postgres;
mod schema;
mod sqlite;
mod store;

pub use error::StoreError;
pub use ids::{host_name, new_run_id, new_run_uri};
pub use merge::merge;
pub use model::{
    Filter, IntervalDetail, IntervalFigures, IntervalOp, QueryResult, RunId, RunMeta, RunStatus,
    RunSummary, RunTotals, StoredInterval, StoredRun, Value,
};
pub use schema::SCHEMA_VERSION;
pub use store::Store;
