//! A commands run as redis-benchmark reports one test (`--format
//! redis-benchmark`, and what `sojourn redis-benchmark` prints per test):
//! with `-q` its one line (`SET: 81234.57 requests per second,
//! p50=0.143 msec`), with `--csv` its row, else its test header and
//! summary block. Which one, the test's title and the latency precision
//! are the run's labels ([`TITLE`], [`OUTPUT`], [`PRECISION`]): the store
//! keeps them with the run, and `results list --label
//! redis-benchmark.test=GET` finds a test's runs.
//!
//! Latency is response time: from the intended start under a rate (which
//! redis-benchmark has not), else from the send, as redis-benchmark's. A
//! run of another workload is printed as YCSB's summary.

use std::io::{self, Write};

use super::export::Export;
use crate::histograms::new_histogram;
use crate::run_record::RunRecord;

/// The label holding the test's title (`SET`, `LRANGE_100 (first 100
/// elements)`, or a command as typed).
pub const TITLE: &str = "redis-benchmark.test";
/// The label saying how to print it: `quiet`, `csv` or `full`.
pub const OUTPUT: &str = "redis-benchmark.output";
/// The label holding the latencies' decimal places (`--precision`).
pub const PRECISION: &str = "redis-benchmark.precision";

/// redis-benchmark's CSV header, printed once before the first test.
pub const CSV_HEADER: &str = "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\
     \"p50_latency_ms\",\"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"";

/// The export (see the module doc).
pub struct RedisBenchmarkSummary;

impl Export for RedisBenchmarkSummary {
    fn write(&self, runs: &[RunRecord], out: &mut dyn Write) -> io::Result<()> {
        for run in runs {
            let labels = &run.meta().labels;
            match labels.get(TITLE) {
                Some(title) => test(run, title, out)?,
                None => super::ycsb::Summary.write(std::slice::from_ref(run), out)?,
            }
        }
        Ok(())
    }
}

fn test(run: &RunRecord, title: &str, out: &mut dyn Write) -> io::Result<()> {
    let labels = &run.meta().labels;
    let precision: usize = labels
        .get(PRECISION)
        .and_then(|p| p.parse().ok())
        .unwrap_or(3);
    let total = run.totals_or_intervals();
    let mut h = new_histogram();
    let mut requests = 0;
    for (_, s) in total.kinds() {
        let _ = h.add(&s.all().response);
        requests += s.count();
    }
    let secs = run.measured().as_secs_f64().max(1e-9);
    let rps = requests as f64 / secs;
    let ms = |q: f64| {
        if h.is_empty() {
            0.0
        } else {
            h.value_at_quantile(q) as f64 / 1e6
        }
    };
    let (mean, min, max) = if h.is_empty() {
        (0.0, 0.0, 0.0)
    } else {
        (h.mean() / 1e6, h.min() as f64 / 1e6, h.max() as f64 / 1e6)
    };
    let p = precision;
    match labels.get(OUTPUT).map(String::as_str) {
        Some("quiet") => writeln!(
            out,
            "{title}: {rps:.2} requests per second, p50={:.p$} msec",
            ms(0.5)
        ),
        Some("csv") => writeln!(
            out,
            "\"{title}\",\"{rps:.2}\",\"{mean:.p$}\",\"{min:.p$}\",\"{:.p$}\",\"{:.p$}\",\
             \"{:.p$}\",\"{max:.p$}\"",
            ms(0.5),
            ms(0.95),
            ms(0.99)
        ),
        _ => {
            let m = run.meta();
            writeln!(out, "====== {title} ======")?;
            writeln!(out, "  {requests} requests completed in {secs:.2} seconds")?;
            let clients = m
                .properties
                .get("connections")
                .cloned()
                .unwrap_or_else(|| m.threads.to_string());
            writeln!(out, "  {clients} parallel clients")?;
            let payload = m
                .properties
                .get("commands.data_size")
                .map_or("3", String::as_str);
            writeln!(out, "  {payload} bytes payload")?;
            writeln!(out, "  keep alive: 1")?;
            writeln!(out)?;
            writeln!(out, "Summary:")?;
            writeln!(out, "  throughput summary: {rps:.2} requests per second")?;
            writeln!(out, "  latency summary (msec):")?;
            let w = p + 6;
            writeln!(
                out,
                "    {:>w$} {:>w$} {:>w$} {:>w$} {:>w$} {:>w$}",
                "avg", "min", "p50", "p95", "p99", "max"
            )?;
            writeln!(
                out,
                "    {mean:>w$.p$} {min:>w$.p$} {:>w$.p$} {:>w$.p$} {:>w$.p$} {max:>w$.p$}",
                ms(0.5),
                ms(0.95),
                ms(0.99)
            )?;
            writeln!(out)
        }
    }
}
