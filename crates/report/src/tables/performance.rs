//! The performance table: per run its throughput and the latency
//! percentiles of each kind, and the table's cells.

use serde::Serialize;
use sojourn_core::op::OpKind;
use sojourn_store::RunRecord;

use super::format::readable;
use crate::run::{self, Latency, Unit};

/// p50, p99 and p99.9 of one kind, in nanoseconds (each table gives
/// them in its page's [`Unit`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KindLatency {
    pub operation: String,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub p99_9_ns: u64,
}

/// One row of the performance table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PerfRow {
    pub run: String,
    pub experiment: String,
    pub workload: String,
    /// The YCSB stage, `load` or `run` (PKB's `stage` label).
    pub operation: String,
    /// Offered operations per second in total; `None` is closed loop.
    pub target_throughput: Option<f64>,
    pub actual_throughput: f64,
    /// Per kind in the table's columns (always read and update): `None`
    /// where the run has no such operation.
    pub latency: Vec<(OpKind, Option<KindLatency>)>,
    pub fieldlength: u64,
    pub fieldcount: u64,
    pub recordcount: u64,
    pub distribution: String,
    /// Connections per client process.
    pub threads: u64,
    pub clients: u32,
    /// Service p99 over response p99 of the slowest kind, when response
    /// time is much worse than service time (queueing in the client).
    pub response_over_service: Option<f64>,
}

/// The kinds the performance table has columns for: read and update (the
/// walkthrough's), then any other kind a selected run recorded.
pub fn columns(runs: &[RunRecord]) -> Vec<OpKind> {
    let refs: Vec<&RunRecord> = runs.iter().collect();
    let present = run::kinds_of(&refs);
    let mut cols = vec![OpKind::Read, OpKind::Update];
    for k in present {
        if !cols.contains(&k) {
            cols.push(k);
        }
    }
    cols
}

/// The performance table, latencies of `latency` kind.
pub fn performance(runs: &[RunRecord], latency: Latency) -> Vec<PerfRow> {
    let cols = columns(runs);
    runs.iter()
        .map(|r| {
            let total = run::totals(r);
            let latency_cols = cols
                .iter()
                .map(|&k| {
                    let h = run::histogram(&total, k, latency);
                    let v = (!h.is_empty()).then(|| KindLatency {
                        operation: k.name().to_string(),
                        p50_ns: h.value_at_quantile(0.5),
                        p99_ns: h.value_at_quantile(0.99),
                        p99_9_ns: h.value_at_quantile(0.999),
                    });
                    (k, v)
                })
                .collect();
            let ratio = total
                .kinds()
                .filter(|(_, o)| !o.ok.service.is_empty())
                .map(|(_, o)| {
                    o.ok.response.value_at_quantile(0.99) as f64
                        / o.ok.service.value_at_quantile(0.99).max(1) as f64
                })
                .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
                .filter(|&x| x >= 2.0);
            let m = r.meta();
            PerfRow {
                run: run::short_id(r),
                experiment: run::experiment(r),
                workload: run::workload_name(r),
                operation: m.phase.clone(),
                target_throughput: m.target,
                actual_throughput: run::throughput(r),
                latency: latency_cols,
                fieldlength: run::field_length(r),
                fieldcount: run::field_count(r),
                recordcount: run::record_count(r),
                distribution: run::distribution(r),
                threads: m.threads / u64::from(m.client_count.max(1)),
                clients: m.client_count.max(1),
                response_over_service: ratio,
            }
        })
        .collect()
}

/// Column headers and cells of the performance table, latencies in
/// `unit`; `exact` keeps every digit (CSV), otherwise numbers are rounded.
pub fn performance_cells(
    rows: &[PerfRow],
    cols: &[OpKind],
    unit: Unit,
    exact: bool,
) -> (Vec<String>, Vec<Vec<String>>) {
    let num = |v: f64| if exact { v.to_string() } else { readable(v) };
    let mut head: Vec<String> = [
        "run",
        "experiment",
        "workload",
        "operation",
        "target ops/s",
        "actual ops/s",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for k in cols {
        for p in ["p50", "p99", "p99.9"] {
            head.push(format!("{} {p} {}", k.name(), unit.name()));
        }
    }
    head.extend(
        [
            "fieldlength",
            "fieldcount",
            "recordcount",
            "distribution",
            "threads",
            "clients",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    let body = rows
        .iter()
        .map(|r| {
            let mut c = vec![
                r.run.clone(),
                r.experiment.clone(),
                r.workload.clone(),
                r.operation.clone(),
                r.target_throughput.map_or(String::new(), num),
                num(r.actual_throughput),
            ];
            for k in cols {
                match r
                    .latency
                    .iter()
                    .find(|(kk, _)| kk == k)
                    .and_then(|(_, v)| v.as_ref())
                {
                    Some(l) => c.extend(
                        [l.p50_ns, l.p99_ns, l.p99_9_ns].map(|ns| num(unit.of_ns(ns as f64))),
                    ),
                    None => c.extend([String::new(), String::new(), String::new()]),
                }
            }
            c.extend([
                r.fieldlength.to_string(),
                r.fieldcount.to_string(),
                r.recordcount.to_string(),
                r.distribution.clone(),
                r.threads.to_string(),
                r.clients.to_string(),
            ]);
            c
        })
        .collect();
    (head, body)
}
