//! sojourn-core: everything sojourn does that does not need a database
//! driver, a results-store format or a terminal.
//!
//! Data flows plan -> workload -> scheduler/executor -> backend -> recorder ->
//! output. Each of those is a module here; real databases live in the
//! `sojourn-backends` crate behind the [`backend::Backend`] trait, and the two
//! driver-free backends (`memory:` and `null:`) live in [`backend`] so the
//! core's own tests can run the whole pipeline.

pub mod backend;
pub mod capacity;
pub mod cpu;
pub mod executor;
pub mod failures;
pub mod generator;
pub mod hist_codec;
pub mod histograms;
pub mod keys;
pub mod op;
pub mod output;
pub mod plan;
pub mod properties;
pub mod rate;
pub mod redact;
pub mod run_record;
pub mod schedule;
pub mod selfcheck;
pub mod stats;
pub mod timer;
pub mod workload;
