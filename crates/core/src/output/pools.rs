//! The key-value workload's headline figures as yb-sample-apps gives them:
//! per pool, reads/sec and writes/sec over the measured period ("185K
//! reads/sec and 1K writes/sec"), with each pool's mean and p99. Printed
//! after YCSB's summary of a key-value run, one `#` line per pool, so
//! parsers of the summary skip them:
//!
//! ```text
//! # reads/sec: 3712.00 (37120 reads in 10.00 s, 24 connections); service time mean 0.412 ms, p99 1.203 ms
//! # writes/sec: 20.00 (200 writes in 10.00 s, 2 connections: 150 inserts, 50 updates); service time mean 0.520 ms, p99 1.807 ms
//! ```
//!
//! The readers' pool is the READ operations, the writers' the INSERT and
//! UPDATE ones, their histograms merged (never their percentiles
//! averaged). Every operation counts in the rate; the latencies are those
//! of successful operations, warm-up excluded, as YCSB's summary blocks
//! are. Which time is shown follows `measurement.interval` as the summary
//! does: service time (from the actual send), response time (from the
//! intended send, which a pool at a `read_rate` or `write_rate` has), or
//! both. The same figures are the JSON report's `pools` and PKB's `reads`
//! and `writes` samples.

use std::collections::BTreeMap;
use std::fmt::Write;

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::histograms::{new_histogram, LatencySummary, Stats};
use crate::op::OpKind;
use crate::run_record::RunRecord;
use crate::workload::keyvalue::KeyValueConfig;

/// One pool's figures over the measured period.
#[derive(Clone, Debug, Serialize)]
pub struct PoolFigures {
    /// `reads` or `writes`.
    pub pool: &'static str,
    /// The pool's connections.
    pub connections: usize,
    /// Operations of every outcome.
    pub operations: u64,
    pub failed: u64,
    /// Operations per kind in the pool (`insert` and `update` for the
    /// writers).
    pub by_kind: BTreeMap<&'static str, u64>,
    /// The measured period (warm-up excluded).
    pub seconds: f64,
    /// `operations / seconds`: yb-sample-apps' reads/sec or writes/sec.
    pub ops_per_sec: f64,
    /// Successful operations, actual send to reply.
    pub service: LatencySummary,
    /// Successful operations, intended send to reply.
    pub response: LatencySummary,
    /// What the summary line shows: `op` (service), `intended` (response)
    /// or `both`, the run's `measurement.interval`.
    #[serde(skip)]
    pub shown: String,
}

/// The operation kinds of each pool, writers' first as the executor's
/// groups are.
const POOLS: [(&str, &[OpKind]); 2] = [
    ("writes", &[OpKind::Insert, OpKind::Update]),
    ("reads", &[OpKind::Read]),
];

impl PoolFigures {
    /// Both pools of a key-value run (read back from its properties), the
    /// readers first as yb-sample-apps reports them; a pool with no
    /// connections in this phase (the readers of a load) is left out.
    /// Empty for other workloads.
    pub fn of(run: &RunRecord) -> Vec<PoolFigures> {
        let Some(cfg) = keyvalue_config(run) else {
            return Vec::new();
        };
        let total = run.totals_or_intervals();
        let seconds = run.measured().as_secs_f64();
        let mut out: Vec<PoolFigures> = POOLS
            .iter()
            .zip([cfg.num_threads_write, cfg.num_threads_read])
            .filter(|(_, connections)| *connections > 0)
            .map(|((pool, kinds), connections)| {
                pool_of(&total, pool, kinds, connections, seconds, run)
            })
            .collect();
        out.reverse();
        out
    }

    /// The pool's line after the summary.
    pub fn line(&self) -> String {
        let mut out = format!(
            "# {}/sec: {:.2} ({} {} in {:.2} s, {} connection{}",
            self.pool,
            self.ops_per_sec,
            self.operations,
            self.pool,
            self.seconds,
            self.connections,
            if self.connections == 1 { "" } else { "s" }
        );
        if self.by_kind.len() > 1 {
            let kinds: Vec<String> = self
                .by_kind
                .iter()
                .map(|(k, n)| format!("{n} {k}s"))
                .collect();
            let _ = write!(out, ": {}", kinds.join(", "));
        }
        if self.failed > 0 {
            let _ = write!(out, "; {} failed", self.failed);
        }
        out.push(')');
        for (name, l) in self.shown_latencies() {
            let _ = write!(
                out,
                "; {name} time mean {:.3} ms, p99 {:.3} ms",
                l.mean_us / 1000.0,
                l.p99_us / 1000.0
            );
        }
        out.push('\n');
        out
    }

    /// The latencies the summary shows, named.
    pub fn shown_latencies(&self) -> Vec<(&'static str, &LatencySummary)> {
        let mut v = Vec::new();
        if self.shown != "intended" {
            v.push(("service", &self.service));
        }
        if self.shown != "op" {
            v.push(("response", &self.response));
        }
        v
    }
}

fn pool_of(
    total: &Stats,
    pool: &'static str,
    kinds: &[OpKind],
    connections: usize,
    seconds: f64,
    run: &RunRecord,
) -> PoolFigures {
    let (mut service, mut response) = (new_histogram(), new_histogram());
    let (mut operations, mut failed) = (0, 0);
    let mut by_kind = BTreeMap::new();
    for &k in kinds {
        let n = total.op(k).map_or(0, |o| o.count());
        by_kind.insert(k.name(), n);
        let Some(o) = total.op(k) else { continue };
        operations += o.count();
        failed += o.failures();
        merge(&mut service, &o.ok.service);
        merge(&mut response, &o.ok.response);
    }
    PoolFigures {
        pool,
        connections,
        operations,
        failed,
        by_kind,
        seconds,
        ops_per_sec: if seconds > 0.0 {
            operations as f64 / seconds
        } else {
            0.0
        },
        service: LatencySummary::of(&service),
        response: LatencySummary::of(&response),
        shown: run.meta().measurement_interval.clone(),
    }
}

/// Histograms of one run share their configuration, so adding cannot fail
/// for want of range; saturating keeps a count even if it ever did.
fn merge(into: &mut Histogram<u64>, h: &Histogram<u64>) {
    if into.add(h).is_err() {
        for v in h.iter_recorded() {
            into.saturating_record_n(v.value_iterated_to(), v.count_at_value());
        }
    }
}

/// The key-value settings a run ran with, `None` for other workloads.
pub fn keyvalue_config(run: &RunRecord) -> Option<KeyValueConfig> {
    match super::export::workload_of(run)? {
        crate::workload::Workload::KeyValue(cfg) => Some(cfg),
        _ => None,
    }
}

/// One group of PKB samples: its name, and each statistic's name, value
/// and unit.
pub type PkbGroup = (String, Vec<(String, f64, &'static str)>);

/// PKB samples' groups of one pool, as the `pkb` format names a summary
/// block's: `reads` (service time) and `intended-reads` (response time),
/// as the run's `measurement.interval` shows them, each with the pool's
/// `Throughput` (ops/sec) and `Operations`, and its successful operations'
/// `AverageLatency` and `99thPercentileLatency` in milliseconds.
pub fn pkb_groups(p: &PoolFigures) -> Vec<PkbGroup> {
    p.shown_latencies()
        .into_iter()
        .map(|(name, l)| {
            let group = match name {
                "service" => p.pool.to_string(),
                _ => format!("intended-{}", p.pool),
            };
            let stats = vec![
                ("Throughput".to_string(), p.ops_per_sec, "ops/sec"),
                ("Operations".to_string(), p.operations as f64, ""),
                ("AverageLatency".to_string(), l.mean_us / 1000.0, "ms"),
                ("99thPercentileLatency".to_string(), l.p99_us / 1000.0, "ms"),
            ];
            (group, stats)
        })
        .collect()
}

/// The lines the summary prints for a key-value run; empty for others.
pub fn lines(run: &RunRecord) -> String {
    PoolFigures::of(run).iter().map(PoolFigures::line).collect()
}
