//! What people and tools read of a run: every format is an [`Export`] over
//! [`RunRecord`](crate::run_record::RunRecord)s, whether the run just ended or was read back from the
//! store, so a summary printed after a run and the one `results show`
//! prints again cannot drift apart. One file per format:
//!
//! - [`ycsb`]: YCSB's text summary (what PerfKitBenchmarker parses), with
//!   a workload's own lines after it ([`noria`], [`liops`]), and the status
//!   line;
//! - [`json`]: the JSON report;
//! - [`pgbench`]: a script run as pgbench reports one;
//! - [`memtier`]: a commands run as memtier_benchmark reports one, and its
//!   JSON; [`redis_benchmark`]: as redis-benchmark does;
//! - [`pkb`]: PerfKitBenchmarker samples, newline-delimited JSON;
//! - [`table`]: one row per run and operation kind, CSV or JSON;
//! - [`hdrlog`]: an HdrHistogram interval log;
//! - [`segments`]: a rate profile's segments, in the summary and the JSON;
//! - [`pools`]: the key-value workload's reads/sec and writes/sec, in the
//!   summary, the JSON and the PKB samples.
//!
//! [`warning`] says what to do about a doubtful result.

mod export;
pub mod hdrlog;
pub mod json;
mod lines;
pub mod liops;
pub mod memtier;
pub mod noria;
pub mod pgbench;
pub mod pkb;
pub mod pools;
pub mod redis_benchmark;
pub mod segments;
pub mod table;
pub mod time;
pub mod warning;
pub mod ycsb;

pub use export::{workload_of, Export};
pub use json::Report;
pub use lines::workload_lines;
pub use warning::Warning;
