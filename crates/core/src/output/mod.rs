//! What people and tools read of a run: every format is an [`Export`] over
//! [`RunRecord`]s, whether the run just ended or was read back from the
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

pub mod hdrlog;
pub mod json;
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

pub use json::Report;
pub use warning::Warning;

use std::io;

use crate::properties::{Origin, Properties};
use crate::run_record::RunRecord;
use crate::workload::{Phase, Workload};

/// One export format.
pub trait Export {
    /// Write `runs` in this format.
    fn write(&self, runs: &[RunRecord], out: &mut dyn io::Write) -> io::Result<()>;
}

/// The workload a run ran, as far as the formats need it: the vote,
/// LIOPS and key-value workloads print figures of their own. Read from the
/// run's properties, so stored runs give it too; `None` for YCSB's core
/// workload, which prints nothing of its own.
pub fn workload_of(run: &RunRecord) -> Option<Workload> {
    let mut p = Properties::new();
    for (k, v) in &run.meta().properties {
        p.set(k, v, Origin::Default);
    }
    crate::workload::kind_name(&p)?;
    let phase = if run.meta().phase == Phase::Load.name() {
        Phase::Load
    } else {
        Phase::Run
    };
    Workload::from_properties(&p, phase).ok()
}

/// What a workload prints after YCSB's summary of its run phase, so its
/// results read as its own tool's do: Noria's vote lines, PGIO's LIOPS
/// figures; and before them, a rate profile's segments and the key-value
/// workload's pools (any phase). Every line starts with `#` or a lower-case word, never `[`, so
/// parsers of YCSB's summary skip them. Empty for the other workloads.
pub fn workload_lines(run: &RunRecord) -> String {
    let segments = segments::lines(run) + &pools::lines(run);
    if run.meta().phase != Phase::Run.name() {
        return segments;
    }
    let own = workload_of(run).map_or_else(String::new, |w| w.run_lines(run));
    segments + &own
}
