//! Exact merging of the client processes of one run: histograms are added
//! bucket for bucket (every histogram has core's one configuration, so
//! `add` loses nothing), counts are summed, and intervals are aligned by
//! their wall-clock start, to the nearest interval.

use std::collections::BTreeMap;
use std::time::{Duration, UNIX_EPOCH};

use sojourn_core::cpu::CpuTimes;
use sojourn_core::executor::ThreadUse;
use sojourn_core::histograms::{LatencySummary, Stats};
use sojourn_core::output::Warning;

use crate::StoreError;
use sojourn_core::run_record::{
    IntervalFigures, IntervalOp, RunRecord, RunStatus, RunTotals, StoredInterval,
};

/// One run from several client processes' runs (typically those sharing a
/// run URI). The result describes the whole: threads, targets, operations
/// and client CPU are summed; elapsed and measured time are the longest
/// client's, and the throughput is the sum of operations over that; the
/// status is the worst (failed, then interrupted, running, completed).
/// One run is returned as it is.
pub fn merge(runs: &[RunRecord]) -> Result<RunRecord, StoreError> {
    let (first, rest) = runs
        .split_first()
        .ok_or_else(|| StoreError::Merge("no runs given".into()))?;
    if rest.is_empty() {
        return Ok(first.clone());
    }
    let mut out = first.clone();
    let m = &mut out.summary.meta;
    m.client_index = 0;
    m.client_count = runs.len() as u32;
    m.threads = runs.iter().map(|r| r.meta().threads).sum();
    m.target = runs.iter().map(|r| r.meta().target).sum::<Option<f64>>();
    m.started_at = runs
        .iter()
        .map(|r| r.meta().started_at)
        .min()
        .unwrap_or(m.started_at);
    for r in rest {
        for (k, v) in &r.meta().labels {
            m.labels.entry(k.clone()).or_insert_with(|| v.clone());
        }
        if !m.host.split(',').any(|h| h == r.meta().host) {
            m.host = format!("{},{}", m.host, r.meta().host);
        }
    }

    out.summary.status = runs
        .iter()
        .map(|r| r.summary.status)
        .max_by_key(|s| match s {
            RunStatus::Completed => 0,
            RunStatus::Running => 1,
            RunStatus::Interrupted => 2,
            RunStatus::Failed => 3,
        })
        .unwrap_or(RunStatus::Completed);
    out.summary.error = runs.iter().find_map(|r| r.summary.error.clone());
    out.summary.ended_at = runs.iter().filter_map(|r| r.summary.ended_at).max();
    out.summary.totals = merge_totals(runs);
    let mut total = Stats::default();
    for r in runs {
        total.add(&r.total);
    }
    // Each client's warnings stand, but whether a percentile rests on too
    // few operations is judged again on the merged ones, which are more.
    out.warnings = runs
        .iter()
        .enumerate()
        .flat_map(|(i, r)| {
            r.warnings
                .iter()
                .filter(|w| !Warning::is_few_samples(w))
                .map(move |w| format!("client {}: {w}", r.meta().client_index.max(i as u32)))
        })
        .chain(
            Warning::few_samples(&total, &first.meta().percentiles)
                .iter()
                .map(|w| sojourn_core::redact::text(&w.to_string())),
        )
        .collect();
    out.total = total;
    // Clients share a profile scaled by their share: segment by segment,
    // targets and operations add up.
    for r in rest {
        for (mine, theirs) in out.segments.iter_mut().zip(&r.segments) {
            mine.stats.add(&theirs.stats);
            mine.segment.expected += theirs.segment.expected;
        }
    }
    out.intervals = merge_intervals(runs);
    out.summary.intervals = out.intervals.len() as u64;
    out.server = merge_server(runs);
    Ok(out)
}

/// The server's counters of runs by several clients of one database: each
/// client sampled the same whole-server counters over nearly the same
/// period, so summing them would count the server's work once per client.
/// The widest change of each counter stands for the run, over every
/// client's operations. `None` unless some client has counters.
fn merge_server(runs: &[RunRecord]) -> Option<sojourn_core::backend::ServerStats> {
    let mut out = sojourn_core::backend::ServerStats::default();
    let mut any = false;
    for r in runs {
        let Some(s) = &r.server else { continue };
        any = true;
        out.operations += s.operations;
        for (name, &d) in &s.deltas {
            let e = out.deltas.entry(name.clone()).or_insert(d);
            *e = e.max(d);
        }
    }
    any.then_some(out)
}

fn merge_totals(runs: &[RunRecord]) -> Option<RunTotals> {
    let all: Vec<&RunTotals> = runs
        .iter()
        .filter_map(|r| r.summary.totals.as_ref())
        .collect();
    if all.len() != runs.len() {
        return None;
    }
    let measured = all.iter().map(|t| t.measured).max().unwrap_or_default();
    let operations: u64 = all.iter().map(|t| t.operations).sum();
    let s = measured.as_secs_f64();
    Some(RunTotals {
        elapsed: all.iter().map(|t| t.elapsed).max().unwrap_or_default(),
        measured,
        operations,
        operations_all: all.iter().map(|t| t.operations_all).sum(),
        throughput: if s > 0.0 { operations as f64 / s } else { 0.0 },
        offered: all.iter().map(|t| t.offered).sum::<Option<f64>>(),
        scheduled: all.iter().map(|t| t.scheduled).sum(),
        abandoned: all.iter().map(|t| t.abandoned).sum(),
        stop_reason: all[0].stop_reason.clone(),
        seed: all[0].seed,
        runtime_threads: all.iter().map(|t| t.runtime_threads).sum(),
        // The clients' reason where they agree; the busiest of any client's
        // threads.
        thread_use: all
            .iter()
            .map(|t| t.thread_use)
            .collect::<Option<Vec<_>>>()
            .and_then(|uses| {
                uses.iter()
                    .all(|u| u.why == uses[0].why)
                    .then(|| ThreadUse {
                        why: uses[0].why,
                        busiest: uses.iter().map(|u| u.busiest).fold(0.0, f64::max),
                    })
            }),
        cpu: CpuTimes {
            user_s: all.iter().map(|t| t.cpu.user_s).sum(),
            system_s: all.iter().map(|t| t.cpu.system_s).sum(),
        },
    })
}

/// Intervals keyed by their wall-clock start relative to the earliest
/// client's start, rounded to the first client's interval length: clients
/// of one run start at a common instant, so their ticks line up.
fn merge_intervals(runs: &[RunRecord]) -> Vec<StoredInterval> {
    let base = runs
        .iter()
        .map(|r| r.meta().started_at)
        .min()
        .unwrap_or(UNIX_EPOCH);
    let step = runs
        .iter()
        .flat_map(|r| r.intervals.iter().map(|iv| iv.length))
        .find(|l| *l > Duration::ZERO)
        .unwrap_or(Duration::from_secs(1))
        .as_secs_f64();
    let mut slots: BTreeMap<u64, StoredInterval> = BTreeMap::new();
    for r in runs {
        let offset = r
            .meta()
            .started_at
            .duration_since(base)
            .unwrap_or_default()
            .as_secs_f64();
        for iv in &r.intervals {
            let key = ((offset + iv.start.as_secs_f64()) / step).round().max(0.0) as u64;
            match slots.get_mut(&key) {
                None => {
                    let mut first = iv.clone();
                    first.start = Duration::from_secs_f64(offset) + iv.start;
                    slots.insert(key, first);
                }
                Some(m) => {
                    m.ops = merge_ops(&m.ops, &iv.ops);
                    m.stats.add(&iv.stats);
                    m.ops_done += iv.ops_done;
                    m.offered = match (m.offered, iv.offered) {
                        (Some(a), Some(b)) => Some(a + b),
                        (a, b) => a.or(b),
                    };
                    m.length = m.length.max(iv.length);
                    m.cpu.user_s += iv.cpu.user_s;
                    m.cpu.system_s += iv.cpu.system_s;
                    m.warmup &= iv.warmup;
                    // Lag summaries cannot be merged exactly; keep the worst.
                    m.lag = match (m.lag.take(), &iv.lag) {
                        (Some(a), Some(b)) => Some(if b.p99_us > a.p99_us { b.clone() } else { a }),
                        (a, b) => a.or_else(|| b.clone()),
                    };
                }
            }
        }
    }
    let mut merged: Vec<StoredInterval> = slots.into_values().collect();
    // With histograms the figures are recomputed from the merged ones,
    // exactly; without, only counts, means and maxima can be combined.
    for iv in &mut merged {
        if iv.stats.kinds().next().is_some() {
            iv.ops = iv
                .stats
                .kinds()
                .map(|(kind, s)| IntervalOp {
                    kind,
                    statuses: s.statuses,
                    service: figures_of(&s.ok.service),
                    response: figures_of(&s.ok.response),
                })
                .collect();
        }
    }
    merged
}

fn figures_of(h: &hdrhistogram::Histogram<u64>) -> IntervalFigures {
    IntervalFigures::of(&LatencySummary::of(h))
}

/// Two clients' figures for one interval, without histograms: counts add,
/// means weight by count, maxima take the larger, percentiles are unknown.
fn merge_ops(a: &[IntervalOp], b: &[IntervalOp]) -> Vec<IntervalOp> {
    let mut out: Vec<IntervalOp> = a.to_vec();
    for o in b {
        match out.iter_mut().find(|x| x.kind == o.kind) {
            None => out.push(o.clone()),
            Some(x) => {
                let (na, nb) = (x.count() as f64, o.count() as f64);
                let mean = |p: f64, q: f64| {
                    if na + nb > 0.0 {
                        (p * na + q * nb) / (na + nb)
                    } else {
                        0.0
                    }
                };
                for (xf, of) in [(&mut x.service, &o.service), (&mut x.response, &o.response)] {
                    xf.mean_us = mean(xf.mean_us, of.mean_us);
                    xf.max_us = xf.max_us.max(of.max_us);
                    xf.p50_us = f64::NAN;
                    xf.p99_us = f64::NAN;
                    xf.p99_9_us = f64::NAN;
                }
                for (s, t) in x.statuses.iter_mut().zip(o.statuses) {
                    *s += t;
                }
            }
        }
    }
    out.sort_by_key(|o| o.kind);
    out
}
