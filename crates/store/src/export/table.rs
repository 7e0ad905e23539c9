//! Per run and operation kind, the summary figures as CSV rows or JSON
//! objects.

use std::io;

use serde::Serialize;

use crate::model::StoredRun;

/// One run's figures for one operation kind (latencies in microseconds).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OpRow {
    pub run_id: String,
    pub run_uri: String,
    pub started_at: String,
    pub phase: String,
    pub workload: String,
    pub backend: String,
    pub status: String,
    pub threads: u64,
    pub target: Option<f64>,
    pub throughput: f64,
    pub runtime_ms: f64,
    pub operation: String,
    pub operations: u64,
    pub ok: u64,
    pub failed: u64,
    pub service_mean_us: f64,
    pub service_min_us: f64,
    pub service_max_us: f64,
    pub service_p50_us: f64,
    pub service_p90_us: f64,
    pub service_p95_us: f64,
    pub service_p99_us: f64,
    pub service_p99_9_us: f64,
    pub service_p99_99_us: f64,
    pub response_mean_us: f64,
    pub response_min_us: f64,
    pub response_max_us: f64,
    pub response_p50_us: f64,
    pub response_p90_us: f64,
    pub response_p95_us: f64,
    pub response_p99_us: f64,
    pub response_p99_9_us: f64,
    pub response_p99_99_us: f64,
}

/// The rows of a run, in YCSB's operation order.
pub fn rows(run: &StoredRun) -> Vec<OpRow> {
    let _ = run;
    Vec::new()
}

pub fn write_csv(runs: &[StoredRun], out: &mut dyn io::Write) -> io::Result<()> {
    let _ = (runs, out);
    Ok(())
}

pub fn write_json(runs: &[StoredRun], out: &mut dyn io::Write) -> io::Result<()> {
    let _ = (runs, out);
    Ok(())
}
