//! Per run and operation kind, the summary figures as CSV rows or JSON
//! objects: what a spreadsheet or a script wants from a set of runs. The
//! figures are read off the stored histograms of successful operations
//! (warm-up excluded), in microseconds.

use std::io;

use crate::backend::Status;
use crate::histograms::LatencySummary;
use crate::output::time::rfc3339;
use serde::Serialize;

use crate::run_record::RunRecord;

use super::export::Export;

/// Defines [`OpRow`] and its CSV columns from one list of fields, so the
/// header and the cells cannot drift apart.
macro_rules! op_row {
    ($($name:ident: $ty:ty),* $(,)?) => {
        /// One run's figures for one operation kind (latencies in
        /// microseconds).
        #[derive(Clone, Debug, PartialEq, Serialize)]
        pub struct OpRow {
            $(pub $name: $ty,)*
        }

        impl OpRow {
            /// The CSV header, in field order.
            pub const COLUMNS: &'static [&'static str] = &[$(stringify!($name)),*];

            fn cells(&self) -> Vec<String> {
                vec![$(Cell::cell(&self.$name)),*]
            }
        }
    };
}

/// A value as a CSV cell.
trait Cell {
    fn cell(&self) -> String;
}

impl Cell for String {
    fn cell(&self) -> String {
        field(self)
    }
}

impl Cell for u64 {
    fn cell(&self) -> String {
        self.to_string()
    }
}

impl Cell for f64 {
    fn cell(&self) -> String {
        self.to_string()
    }
}

impl Cell for Option<f64> {
    fn cell(&self) -> String {
        self.map(|v| v.to_string()).unwrap_or_default()
    }
}

op_row! {
    run_id: String,
    run_uri: String,
    started_at: String,
    phase: String,
    workload: String,
    backend: String,
    status: String,
    threads: u64,
    target: Option<f64>,
    throughput: f64,
    runtime_ms: f64,
    operation: String,
    operations: u64,
    ok: u64,
    failed: u64,
    service_mean_us: f64,
    service_min_us: f64,
    service_max_us: f64,
    service_p50_us: f64,
    service_p90_us: f64,
    service_p95_us: f64,
    service_p99_us: f64,
    service_p99_9_us: f64,
    service_p99_99_us: f64,
    response_mean_us: f64,
    response_min_us: f64,
    response_max_us: f64,
    response_p50_us: f64,
    response_p90_us: f64,
    response_p95_us: f64,
    response_p99_us: f64,
    response_p99_9_us: f64,
    response_p99_99_us: f64,
}

/// The rows of a run, in YCSB's operation order.
pub fn rows(run: &RunRecord) -> Vec<OpRow> {
    let m = run.meta();
    let total = run.totals_or_intervals();
    let measured = run.measured();
    let throughput = run.throughput();
    total
        .kinds()
        .map(|(kind, s)| {
            let sv = LatencySummary::of(&s.ok.service);
            let rs = LatencySummary::of(&s.ok.response);
            let ok = Status::ALL
                .iter()
                .filter(|st| st.is_ok())
                .map(|st| s.count_of(*st))
                .sum();
            OpRow {
                run_id: m.id.0.clone(),
                run_uri: m.run_uri.clone(),
                started_at: rfc3339(m.started_at),
                phase: m.phase.clone(),
                workload: m.workloads.join(","),
                backend: m.backend.clone(),
                status: run.summary.status.to_string(),
                threads: m.threads,
                target: m.target,
                throughput,
                runtime_ms: measured.as_secs_f64() * 1000.0,
                operation: kind.name().to_string(),
                operations: s.count(),
                ok,
                failed: s.failures(),
                service_mean_us: sv.mean_us,
                service_min_us: sv.min_us,
                service_max_us: sv.max_us,
                service_p50_us: sv.p50_us,
                service_p90_us: sv.p90_us,
                service_p95_us: sv.p95_us,
                service_p99_us: sv.p99_us,
                service_p99_9_us: sv.p99_9_us,
                service_p99_99_us: sv.p99_99_us,
                response_mean_us: rs.mean_us,
                response_min_us: rs.min_us,
                response_max_us: rs.max_us,
                response_p50_us: rs.p50_us,
                response_p90_us: rs.p90_us,
                response_p95_us: rs.p95_us,
                response_p99_us: rs.p99_us,
                response_p99_9_us: rs.p99_9_us,
                response_p99_99_us: rs.p99_99_us,
            }
        })
        .collect()
}

/// A CSV field, quoted when it must be (RFC 4180).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A header line, then one line per run and operation kind.
pub fn write_csv(runs: &[RunRecord], out: &mut dyn io::Write) -> io::Result<()> {
    writeln!(out, "{}", OpRow::COLUMNS.join(","))?;
    for run in runs {
        for row in rows(run) {
            writeln!(out, "{}", row.cells().join(","))?;
        }
    }
    Ok(())
}

/// A JSON array of the rows of every run.
pub fn write_json(runs: &[RunRecord], out: &mut dyn io::Write) -> io::Result<()> {
    let all: Vec<OpRow> = runs.iter().flat_map(rows).collect();
    serde_json::to_writer_pretty(&mut *out, &all).map_err(io::Error::other)?;
    writeln!(out)
}

/// The rows as CSV.
pub struct Csv;

impl Export for Csv {
    fn write(&self, runs: &[RunRecord], out: &mut dyn io::Write) -> io::Result<()> {
        write_csv(runs, out)
    }
}

/// The rows as a JSON array.
pub struct Json;

impl Export for Json {
    fn write(&self, runs: &[RunRecord], out: &mut dyn io::Write) -> io::Result<()> {
        write_json(runs, out)
    }
}
