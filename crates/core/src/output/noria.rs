//! Noria's vote-benchmark lines, printed after the YCSB summary of a vote
//! run so that results read like the paper's (OSDI'18 section 8.2):
//!
//! ```text
//! # generated ops/s: 16673.66
//! # actual ops/s: 16683.94
//! # op   pct  sojourn  remote
//! write  50   1903     1271
//! ```
//!
//! "sojourn" is response time (from the intended start), "remote" service
//! time (from the actual send), both in microseconds. Where a cache served
//! the reads (memcached alone, Redis alone, or a database behind a cache
//! with `vote.cache`), a last line gives the hits and misses the cache
//! counted over the phase, from its own counters:
//!
//! ```text
//! # cache hits: 11402, misses: 598 (95.0% hits)
//! ```
//!
//! Every line starts with
//! `#` or a lower-case word, never `[`, so parsers of YCSB's summary
//! (PerfKitBenchmarker keeps only lines that start with `[NAME]`) skip them.

use std::fmt::Write;

use crate::op::OpKind;
use crate::run_record::RunRecord;

/// The percentiles Noria prints.
pub const PERCENTILES: [f64; 4] = [50.0, 95.0, 99.0, 100.0];

/// Noria's name for an operation kind of the vote workload.
fn op_name(kind: OpKind) -> &'static str {
    match kind {
        OpKind::Insert => "write",
        other => other.name(),
    }
}

/// The Noria lines for a run. Offered and achieved rates cover the whole
/// run (the schedule knows no warm-up); the percentiles are the summary's
/// (warm-up excluded, successful operations).
pub fn noria(run: &RunRecord) -> String {
    let (secs, all, scheduled) = match &run.summary.totals {
        Some(t) => (t.elapsed.as_secs_f64(), t.operations_all, t.scheduled),
        None => (run.measured().as_secs_f64(), run.total.ops_done, 0),
    };
    let rate = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    let actual = rate(all);
    // Closed loop offers exactly what completes.
    let generated = if run.meta().target.is_some() {
        rate(scheduled)
    } else {
        actual
    };
    let mut out = String::new();
    let _ = writeln!(out, "# generated ops/s: {generated:.2}");
    let _ = writeln!(out, "# actual ops/s: {actual:.2}");
    let _ = writeln!(out, "# op\tpct\tsojourn\tremote");
    // Writes first, as Noria prints them.
    let mut kinds: Vec<_> = run.total.kinds().collect();
    kinds.sort_by_key(|(k, _)| (*k != OpKind::Insert, *k));
    for (kind, s) in kinds {
        for p in PERCENTILES {
            let at = |h: &hdrhistogram::Histogram<u64>| {
                if h.is_empty() {
                    0
                } else {
                    h.value_at_percentile(p) / 1000
                }
            };
            let _ = writeln!(
                out,
                "{}\t{}\t{}\t{}",
                op_name(kind),
                p,
                at(&s.ok.response),
                at(&s.ok.service)
            );
        }
    }
    if let Some((hits, misses)) = cache_hits_misses(run) {
        let all = hits + misses;
        let share = if all > 0.0 { 100.0 * hits / all } else { 0.0 };
        let _ = writeln!(
            out,
            "# cache hits: {hits:.0}, misses: {misses:.0} ({share:.1}% hits)"
        );
    }
    out
}

/// The hits and misses of the cache a vote run read through, as the
/// cache's counters changed over the phase: a database's cache
/// (`cache_hits`), memcached's (`get_hits`) or Redis's (`keyspace_hits`).
pub fn cache_hits_misses(run: &RunRecord) -> Option<(f64, f64)> {
    let deltas = &run.server.as_ref()?.deltas;
    [
        ("cache_hits", "cache_misses"),
        ("get_hits", "get_misses"),
        ("keyspace_hits", "keyspace_misses"),
    ]
    .into_iter()
    .find_map(|(h, m)| Some((*deltas.get(h)?, *deltas.get(m)?)))
}
