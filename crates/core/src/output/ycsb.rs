//! YCSB's text formats: the final summary (`[OVERALL], RunTime(ms), ...`)
//! that PerfKitBenchmarker and other scripts parse, and the periodic status
//! line. Latencies are printed in whole microseconds as YCSB does, from
//! histograms recorded in nanoseconds.

use std::fmt::Write;
use std::io;
use std::time::{Duration, SystemTime};

use hdrhistogram::Histogram;

use crate::executor::Progress;
use crate::plan::MeasurementInterval;
use crate::run_record::RunRecord;

use super::export::Export;
use crate::histograms::{OpStats, Stats};

/// YCSB's `ordinal`: 95 -> "95th", 1 -> "1st", 99.9 -> "99.9".
pub fn ordinal(p: f64) -> String {
    if p.fract() == 0.0 {
        let j = p as i64;
        let suffix = match (j % 100, j % 10) {
            (11..=13, _) => "th",
            (_, 1) => "st",
            (_, 2) => "nd",
            (_, 3) => "rd",
            _ => "th",
        };
        format!("{j}{suffix}")
    } else {
        format!("{p}")
    }
}

/// Java's Double.toString for the values YCSB prints: always a decimal point.
fn java_double(v: f64) -> String {
    format!("{v:?}")
}

fn us(ns: u64) -> u64 {
    ns / 1000
}

fn block(out: &mut String, group: &str, h: &Histogram<u64>, percentiles: &[f64]) {
    let _ = writeln!(out, "[{group}], Operations, {}", h.len());
    let mean = if h.is_empty() { 0.0 } else { h.mean() / 1000.0 };
    let _ = writeln!(out, "[{group}], AverageLatency(us), {}", java_double(mean));
    let (min, max) = if h.is_empty() {
        (0, 0)
    } else {
        (h.min(), h.max())
    };
    let _ = writeln!(out, "[{group}], MinLatency(us), {}", us(min));
    let _ = writeln!(out, "[{group}], MaxLatency(us), {}", us(max));
    for &p in percentiles {
        let v = if h.is_empty() {
            0
        } else {
            h.value_at_percentile(p)
        };
        let _ = writeln!(
            out,
            "[{group}], {}PercentileLatency(us), {}",
            ordinal(p),
            us(v)
        );
    }
}

fn statuses(out: &mut String, group: &str, s: &OpStats) {
    for st in crate::backend::Status::ALL {
        let n = s.count_of(st);
        if n > 0 {
            let _ = writeln!(out, "[{group}], Return={}, {n}", st.ycsb_name());
        }
    }
}

/// The final summary of `run` in YCSB's format, with the blocks and
/// percentiles its plan chose (for a run that never stored its totals: the
/// sum of its stored intervals).
pub fn summary(run: &RunRecord) -> String {
    let meta = run.meta();
    summary_of(
        &run.totals_or_intervals(),
        run.measured(),
        run.throughput(),
        MeasurementInterval::parse(&meta.measurement_interval),
        &meta.percentiles,
    )
}

/// YCSB's summary of each run, with its workload's own lines after it
/// (see [`super::lines::workload_lines`]).
pub struct Summary;

impl Export for Summary {
    fn write(&self, runs: &[RunRecord], out: &mut dyn io::Write) -> io::Result<()> {
        for run in runs {
            write!(out, "{}{}", summary(run), super::lines::workload_lines(run))?;
        }
        Ok(())
    }
}

/// The final summary from its parts: what [`summary`] prints after a run,
/// and what `sojourn results show` prints again from the stored histograms,
/// so the two cannot drift apart.
pub fn summary_of(
    total: &Stats,
    measured: Duration,
    throughput: f64,
    mi: MeasurementInterval,
    percentiles: &[f64],
) -> String {
    let mut out = String::new();
    let ms = measured.as_secs_f64() * 1000.0;
    let _ = writeln!(out, "[OVERALL], RunTime(ms), {}", ms.round() as u64);
    let _ = writeln!(
        out,
        "[OVERALL], Throughput(ops/sec), {}",
        java_double(throughput)
    );
    let show_op = mi != MeasurementInterval::Intended;
    let show_intended = mi != MeasurementInterval::Op;
    if show_op {
        for (kind, s) in total.kinds() {
            let g = kind.ycsb_name();
            block(&mut out, g, &s.ok.service, percentiles);
            statuses(&mut out, g, s);
            if let Some(f) = &s.failed {
                block(&mut out, &format!("{g}-FAILED"), &f.service, percentiles);
            }
        }
    }
    if show_intended {
        for (kind, s) in total.kinds() {
            let g = format!("Intended-{}", kind.ycsb_name());
            block(&mut out, &g, &s.ok.response, percentiles);
            if !show_op {
                statuses(&mut out, &g, s);
            }
            if let Some(f) = &s.failed {
                block(&mut out, &format!("{g}-FAILED"), &f.response, percentiles);
            }
        }
    }
    out
}

/// YCSB's RemainingFormatter: coarse units, seconds only under a minute.
pub fn remaining(secs: u64) -> String {
    let (days, hours, minutes) = (secs / 86_400, (secs / 3600) % 24, (secs / 60) % 60);
    let mut t = String::new();
    let plural = |n: u64, unit: &str| format!("{n} {unit}{} ", if n == 1 { "" } else { "s" });
    if days > 0 {
        t += &plural(days, "day");
    }
    if hours > 0 {
        t += &plural(hours, "hour");
    }
    if days == 0 && minutes > 0 {
        t += &plural(minutes, "minute");
    }
    if t.is_empty() {
        t += &plural(secs % 60, "second");
    }
    t.trim_end().to_string()
}

fn interval_stats(out: &mut String, group: &str, h: &Histogram<u64>) {
    if h.is_empty() {
        return;
    }
    let _ = write!(
        out,
        " [{group}: Count={}, Max={}, Min={}, Avg={:.2}, 90={}, 99={}, 99.9={}, 99.99={}]",
        h.len(),
        us(h.max()),
        us(h.min()),
        h.mean() / 1000.0,
        us(h.value_at_quantile(0.90)),
        us(h.value_at_quantile(0.99)),
        us(h.value_at_quantile(0.999)),
        us(h.value_at_quantile(0.9999)),
    );
}

/// One status line, YCSB style, for the interval that just ended.
pub fn status_line(p: &Progress<'_>, mi: MeasurementInterval, now: SystemTime) -> String {
    let mut out = String::new();
    let secs = p.elapsed.as_secs();
    let rate = if p.interval_length > Duration::ZERO {
        p.interval.ops_done as f64 / p.interval_length.as_secs_f64()
    } else {
        0.0
    };
    let _ = write!(
        out,
        "{} {secs} sec: {} operations; {} current ops/sec;",
        super::time::ycsb_local(now),
        p.ops_done,
        trim_decimal(rate),
    );
    let by_count = p.expected_ops.filter(|_| p.ops_done > 0).map(|total| {
        let per_op = p.elapsed.as_secs_f64() / p.ops_done as f64;
        (total.saturating_sub(p.ops_done) as f64 * per_op) as u64
    });
    let by_time = p
        .max_execution_time
        .map(|m| m.saturating_sub(p.elapsed).as_secs());
    let est = match (by_count, by_time) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    if let Some(e) = est {
        let _ = write!(out, " est completion in {}", remaining(e));
    }
    for (kind, s) in p.interval.kinds() {
        if mi != MeasurementInterval::Intended {
            interval_stats(&mut out, kind.ycsb_name(), &s.ok.service);
        }
        if mi != MeasurementInterval::Op {
            interval_stats(
                &mut out,
                &format!("Intended-{}", kind.ycsb_name()),
                &s.ok.response,
            );
        }
    }
    out
}

/// DecimalFormat("#.##").
fn trim_decimal(v: f64) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinals_match_ycsb() {
        assert_eq!(ordinal(95.0), "95th");
        assert_eq!(ordinal(99.0), "99th");
        assert_eq!(ordinal(1.0), "1st");
        assert_eq!(ordinal(2.0), "2nd");
        assert_eq!(ordinal(3.0), "3rd");
        assert_eq!(ordinal(11.0), "11th");
        assert_eq!(ordinal(99.9), "99.9");
    }

    #[test]
    fn remaining_time_like_ycsb() {
        assert_eq!(remaining(50), "50 seconds");
        assert_eq!(remaining(1), "1 second");
        assert_eq!(remaining(125), "2 minutes");
        assert_eq!(remaining(3700), "1 hour 1 minute");
        assert_eq!(trim_decimal(5061.3), "5061.3");
        assert_eq!(trim_decimal(12.0), "12");
    }
}
