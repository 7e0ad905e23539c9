//! The whitepaper's summary table: per stage its QPS, mean and p99
//! latency, and per operation where the stage mixes them.

use serde::Serialize;
use sojourn_core::op::OpKind;
use sojourn_store::RunRecord;

use super::format::readable;
use crate::run::{self, Latency};

/// One row of the whitepaper's table: a stage, or one operation of a
/// stage that mixes several.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SummaryRow {
    pub run: String,
    pub experiment: String,
    pub workload: String,
    /// The YCSB stage, `load` or `run`.
    pub phase: String,
    /// The operation kind; `None` for a stage's row over all its
    /// operations.
    pub operation: Option<OpKind>,
    /// Operations per second over the measured period: the stage's
    /// throughput, or this operation's share of it.
    pub qps: f64,
    /// Mean and p99 of successful operations, in microseconds.
    pub average_us: f64,
    pub p99_us: f64,
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

/// The whitepaper's table: per run (stage), a row over all its operations
/// (its throughput, every kind's histogram merged), then, where it mixes
/// kinds, a row per kind (that kind's rate and histogram). A stage of one
/// kind has the one row, named by its kind.
pub fn summary(runs: &[RunRecord], latency: Latency) -> Vec<SummaryRow> {
    let mut rows = Vec::new();
    for r in runs {
        let total = run::totals(r);
        let kinds: Vec<OpKind> = total
            .kinds()
            .filter(|(_, o)| o.count() > 0)
            .map(|(k, _)| k)
            .collect();
        let m = r.meta();
        let row =
            |operation: Option<OpKind>, qps: f64, h: &hdrhistogram::Histogram<u64>| SummaryRow {
                run: run::short_id(r),
                experiment: run::experiment(r),
                workload: run::workload_name(r),
                phase: m.phase.clone(),
                operation,
                qps,
                average_us: if h.is_empty() { 0.0 } else { h.mean() / 1e3 },
                p99_us: if h.is_empty() {
                    0.0
                } else {
                    us(h.value_at_quantile(0.99))
                },
            };
        let all = run::all_kinds(&total, latency);
        rows.push(row(
            (kinds.len() == 1).then(|| kinds[0]),
            run::throughput(r),
            &all,
        ));
        if kinds.len() > 1 {
            for &k in &kinds {
                rows.push(row(
                    Some(k),
                    run::kind_throughput(r, &total, k),
                    &run::histogram(&total, k, latency),
                ));
            }
        }
    }
    rows
}

/// The whitepaper's name for an operation: `Read`, `Update`, ...
fn title(kind: OpKind) -> String {
    let name = kind.name();
    let mut c = name.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// Column headers and cells of the summary table; `exact` keeps every
/// digit (CSV). Markdown names a mixed stage's operations as the
/// whitepaper does (`Read:`, `Update:`) under its `all` row.
pub fn summary_cells(rows: &[SummaryRow], exact: bool) -> (Vec<String>, Vec<Vec<String>>) {
    let head = [
        "run",
        "experiment",
        "workload",
        "phase",
        "operation",
        "QPS",
        "Average latency (µs)",
        "99th percentile latency (µs)",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let body = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            // A kind's row under its stage's `all` row is one of several.
            let mixed = i > 0 && rows[i - 1].run == r.run && r.operation.is_some();
            let operation = match (r.operation, exact) {
                (None, _) => "all".to_string(),
                (Some(k), true) => k.name().to_string(),
                (Some(k), false) if mixed => format!("{}:", title(k)),
                (Some(k), false) => title(k),
            };
            vec![
                r.run.clone(),
                r.experiment.clone(),
                r.workload.clone(),
                r.phase.clone(),
                operation,
                if exact {
                    r.qps.to_string()
                } else {
                    readable(r.qps)
                },
                if exact {
                    r.average_us.to_string()
                } else {
                    readable(r.average_us)
                },
                if exact {
                    r.p99_us.to_string()
                } else {
                    readable(r.p99_us)
                },
            ]
        })
        .collect();
    (head, body)
}
