//! The lines a workload adds after YCSB's summary of a run.

use crate::run_record::RunRecord;
use crate::workload::Phase;

use super::export::workload_of;
use super::{pools, segments};

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
