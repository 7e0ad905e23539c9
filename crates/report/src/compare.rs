//! Two runs side by side: per operation kind, throughput, the mean and
//! p50/p90/p99/p99.9 of service and response time, the change from A to B
//! in percent, and whether the change is significant.
//!
//! - **Means** (throughput, mean latency): Welch's t-test on batch means
//!   ([`sojourn_core::stats::batch_means`]): each measured interval's mean
//!   is one batch (weighted by its operations, or by its length for a
//!   rate), neighbouring batches are merged while still correlated, and
//!   the standard errors come from the batches. Significant when the
//!   two-sided p-value is below alpha (default 0.01: a comparison tests a
//!   dozen figures, and at 0.05 one of them would be flagged by chance in
//!   every other comparison of identical runs).
//! - **Percentiles**: a 95% confidence interval per run, the wider of the
//!   order-statistic interval of the run's histogram and, with at least
//!   [`MIN_BOOTSTRAP_INTERVALS`] intervals, a bootstrap over its intervals
//!   (which keeps correlation within an interval; correlated neighbours
//!   are drawn together, and what correlation is left widens it).
//!   Significant when A's and B's intervals do not overlap.
//!
//! Higher throughput is better; lower latency is better. A significant
//! change is `better` or `worse` accordingly, anything else `unchanged`.

use hdrhistogram::Histogram;
use sojourn_core::histograms::{enough_samples, percentile_ci, samples_needed, Stats};
use sojourn_core::op::OpKind;
use sojourn_core::stats::{
    batch_means, interval_bootstrap, student_t_quantile, welch, MeanEstimate,
};
use sojourn_store::RunRecord;

use crate::run::{self, Latency};
use crate::ReportError;

mod model;
mod terminal;

pub use model::{Better, Comparison, Figure, Operation, RunBrief, Test, Verdict};
pub use terminal::{text, TextStyle};

/// Fewest measured intervals for the interval bootstrap to be used.
pub const MIN_BOOTSTRAP_INTERVALS: usize = 10;
/// Bootstrap replicates per run, kind and latency.
pub const REPLICATES: usize = 1000;
/// Longer runs are cut into this many blocks of neighbouring intervals.
pub const MAX_BLOCKS: usize = 100;
/// Batch means stop merging neighbours at this many batches.
pub const MIN_BATCHES: usize = 10;
/// The bootstrap's seed: a comparison prints the same figures every time.
const SEED: u64 = 0x5052_4f4a_4f55_524e;

const QUANTILES: [(f64, &str); 4] = [(0.5, "p50"), (0.9, "p90"), (0.99, "p99"), (0.999, "p99.9")];

#[derive(Clone, Debug)]
pub struct CompareOptions {
    /// Significance level of Welch's test.
    pub alpha: f64,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions { alpha: 0.01 }
    }
}

fn brief(r: &RunRecord) -> RunBrief {
    let ivs: Vec<_> = run::measured_intervals(r).collect();
    let mut lengths: Vec<u64> = ivs.iter().map(|iv| iv.length.as_millis() as u64).collect();
    lengths.sort_unstable();
    RunBrief {
        id: r.id().to_string(),
        phase: r.meta().phase.clone(),
        workload: run::workload_name(r),
        backend: r.meta().backend.clone(),
        target: r.meta().target,
        throughput: run::throughput(r),
        status: r.summary.status.to_string(),
        measured_s: r.measured().as_secs_f64(),
        intervals: ivs.len(),
        interval_s: lengths.get(lengths.len() / 2).copied().unwrap_or(0) as f64 / 1000.0,
    }
}

fn change(a: f64, b: f64) -> Option<f64> {
    (a != 0.0 && a.is_finite() && b.is_finite()).then(|| (b - a) / a * 100.0)
}

fn verdict(significant: bool, a: f64, b: f64, better: Better) -> Verdict {
    if !significant || a == b {
        return Verdict::Unchanged;
    }
    match (better, b > a) {
        (Better::Higher, true) | (Better::Lower, false) => Verdict::Better,
        _ => Verdict::Worse,
    }
}

/// The mean's 95% confidence interval from its estimate.
fn mean_ci(e: &MeanEstimate) -> [f64; 2] {
    let t = student_t_quantile(0.975, e.df.max(1.0));
    [e.mean - t * e.std_error, e.mean + t * e.std_error]
}

/// A figure judged by Welch's test, `scale` converting the batches' unit
/// to the printed one.
#[allow(clippy::too_many_arguments)]
fn welch_figure(
    metric: String,
    unit: &'static str,
    a: f64,
    b: f64,
    ea: Option<MeanEstimate>,
    eb: Option<MeanEstimate>,
    scale: f64,
    better: Better,
    alpha: f64,
) -> Figure {
    let (test, significant, a_ci, b_ci) = match (ea, eb) {
        (Some(ea), Some(eb)) => {
            let w = welch(&ea, &eb);
            let sig = w.p < alpha;
            (
                Test::Welch {
                    t: w.t,
                    df: w.df,
                    p: w.p,
                    batches: [ea.batches, eb.batches],
                    batch_size: [ea.batch_size, eb.batch_size],
                    std_error: [ea.std_error * scale, eb.std_error * scale],
                    lag1: [ea.lag1, eb.lag1],
                },
                sig,
                Some(mean_ci(&ea).map(|v| v * scale)),
                Some(mean_ci(&eb).map(|v| v * scale)),
            )
        }
        _ => (
            Test::None {
                reason: format!(
                    "fewer than two measured intervals with operations in {}",
                    match (ea.is_none(), eb.is_none()) {
                        (true, true) => "either run",
                        (true, false) => "A",
                        _ => "B",
                    }
                ),
            },
            false,
            None,
            None,
        ),
    };
    Figure {
        metric,
        unit,
        a,
        b,
        a_ci95: a_ci,
        b_ci95: b_ci,
        change_pct: change(a, b),
        better,
        significant,
        beyond_sampling_error: significant,
        verdict: verdict(significant, a, b, better),
        test,
    }
}

/// Per-interval rates of one kind (or all top-level operations), weighted
/// by interval length.
fn rate_batches(r: &RunRecord, kind: Option<OpKind>) -> Vec<(f64, f64)> {
    run::measured_intervals(r)
        .filter(|iv| iv.length.as_secs_f64() > 0.0)
        .map(|iv| {
            let n = match kind {
                Some(k) => iv.stats.op(k).map_or(0, |o| o.count()),
                None => iv.ops_done,
            };
            let len = iv.length.as_secs_f64();
            (n as f64 / len, len)
        })
        .collect()
}

/// Per-interval mean latencies (ns) of one kind, weighted by operations.
fn latency_batches(r: &RunRecord, kind: OpKind, lat: Latency) -> Vec<(f64, f64)> {
    run::measured_intervals(r)
        .filter_map(|iv| {
            let h = lat.of(&iv.stats.op(kind)?.ok);
            (!h.is_empty()).then(|| (h.mean(), h.len() as f64))
        })
        .collect()
}

/// The 95% intervals of [`QUANTILES`] for one run, kind and latency, in
/// ns, and how they were found. `serial` is the batch means' reading of
/// the same latency's mean: neighbouring intervals it found correlated
/// are resampled together as one block, and the correlation left between
/// blocks widens the bootstrap's interval as it does the mean's standard
/// error (an interval resampled as if independent of its neighbours
/// would be too narrow for a run whose latency drifts).
fn percentile_cis(
    r: &RunRecord,
    total: &Histogram<u64>,
    kind: OpKind,
    lat: Latency,
    serial: Option<&MeanEstimate>,
) -> (Vec<[f64; 2]>, String) {
    let mut cis: Vec<[f64; 2]> = QUANTILES
        .iter()
        .map(|(q, _)| percentile_ci(total, *q).map(|v| v as f64))
        .collect();
    let parts: Vec<&Histogram<u64>> = run::measured_intervals(r)
        .filter_map(|iv| iv.stats.op(kind).map(|o| lat.of(&o.ok)))
        .filter(|h| !h.is_empty())
        .collect();
    let mut how = "order statistics".to_string();
    if parts.len() >= MIN_BOOTSTRAP_INTERVALS {
        let (size, widen) = serial.map_or((1, 1.0), |e| {
            (e.batch_size.max(1), e.variance_factor().sqrt())
        });
        let blocks = (parts.len() / size).clamp(2, MAX_BLOCKS);
        let qs: Vec<f64> = QUANTILES.iter().map(|(q, _)| *q).collect();
        if let Some(boot) = interval_bootstrap(&parts, &qs, REPLICATES, blocks, SEED) {
            for ((ci, b), q) in cis.iter_mut().zip(boot).zip(&qs) {
                let at = total.value_at_quantile(*q) as f64;
                let below = (at - b[0] as f64).max(0.0) * widen;
                let above = (b[1] as f64 - at).max(0.0) * widen;
                ci[0] = ci[0].min((at - below).max(0.0));
                ci[1] = ci[1].max(at + above);
            }
            // The blocks the bootstrap formed: as many neighbours in each.
            let formed = parts.len().div_ceil(parts.len().div_ceil(blocks));
            how = format!("order statistics and interval bootstrap ({formed} blocks)");
        }
    }
    (cis, how)
}

fn latency_figures(
    ra: &RunRecord,
    rb: &RunRecord,
    ta: &Stats,
    tb: &Stats,
    kind: OpKind,
    opts: &CompareOptions,
    out: &mut Vec<Figure>,
) {
    for lat in Latency::BOTH {
        let (ha, hb) = (run::histogram(ta, kind, lat), run::histogram(tb, kind, lat));
        let mean = |h: &Histogram<u64>| {
            if h.is_empty() {
                f64::NAN
            } else {
                h.mean() / 1e6
            }
        };
        let ea = batch_means(&latency_batches(ra, kind, lat), MIN_BATCHES);
        let eb = batch_means(&latency_batches(rb, kind, lat), MIN_BATCHES);
        out.push(welch_figure(
            format!("{} mean", lat.name()),
            "ms",
            mean(&ha),
            mean(&hb),
            ea,
            eb,
            1e-6,
            Better::Lower,
            opts.alpha,
        ));
        if ha.is_empty() || hb.is_empty() {
            continue;
        }
        let (ca, how_a) = percentile_cis(ra, &ha, kind, lat, ea.as_ref());
        let (cb, how_b) = percentile_cis(rb, &hb, kind, lat, eb.as_ref());
        percentile_figures(lat, [&ha, &hb], [&ca, &cb], [&how_a, &how_b], out);
    }
}

/// Each of [`QUANTILES`] of `lat` in A's and B's histograms `h`, with
/// their 95% intervals `ci` (nanoseconds), found as `how` says;
/// significant where the intervals do not overlap.
fn percentile_figures(
    lat: Latency,
    [ha, hb]: [&Histogram<u64>; 2],
    [ca, cb]: [&[[f64; 2]]; 2],
    [how_a, how_b]: [&str; 2],
    out: &mut Vec<Figure>,
) {
    for (i, (q, name)) in QUANTILES.iter().enumerate() {
        let (a, b) = (
            ha.value_at_quantile(*q) as f64 / 1e6,
            hb.value_at_quantile(*q) as f64 / 1e6,
        );
        let (ia, ib) = (ca[i].map(|v| v / 1e6), cb[i].map(|v| v / 1e6));
        // A percentile with fewer than ten operations beyond it has no
        // upper confidence bound worth the name (it is capped by the
        // sample maximum), so it is shown but not tested.
        let thin: Vec<String> = [("A", ha), ("B", hb)]
            .iter()
            .filter(|(_, h)| !enough_samples(h.len(), *q))
            .map(|(n, h)| format!("{n} has {} operations", h.len()))
            .collect();
        let test = if thin.is_empty() {
            Test::Intervals {
                how: [how_a.to_string(), how_b.to_string()],
            }
        } else {
            Test::None {
                reason: format!(
                    "{name} needs {} operations ({})",
                    samples_needed(*q),
                    thin.join(", ")
                ),
            }
        };
        let significant = thin.is_empty() && (ia[1] < ib[0] || ib[1] < ia[0]);
        out.push(Figure {
            metric: format!("{} {name}", lat.name()),
            unit: "ms",
            a,
            b,
            a_ci95: Some(ia),
            b_ci95: Some(ib),
            change_pct: change(a, b),
            better: Better::Lower,
            significant,
            beyond_sampling_error: significant,
            verdict: verdict(significant, a, b, Better::Lower),
            test,
        });
    }
}

/// Two runs of one rate profile, segment by segment: per kind, the
/// segment's response percentiles (order-statistic intervals: a
/// segment's operations are not split into intervals). Segments pair by
/// position and must carry the same label.
fn segment_operations(a: &RunRecord, b: &RunRecord, caveats: &mut Vec<String>) -> Vec<Operation> {
    if a.segments.is_empty() && b.segments.is_empty() {
        return Vec::new();
    }
    let labels = |r: &RunRecord| -> Vec<String> {
        r.segments.iter().map(|s| s.segment.label.clone()).collect()
    };
    if labels(a) != labels(b) {
        caveats.push(format!(
            "rate profiles differ ({} and {} segments): segments are not compared",
            a.segments.len(),
            b.segments.len()
        ));
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, (sa, sb)) in a.segments.iter().zip(&b.segments).enumerate() {
        for (kind, oa) in sa.stats.kinds() {
            let Some(ob) = sb.stats.op(kind).filter(|o| o.count() > 0) else {
                continue;
            };
            let (ha, hb) = (&oa.ok.response, &ob.ok.response);
            if ha.is_empty() || hb.is_empty() {
                continue;
            }
            let cis = |h: &Histogram<u64>| -> Vec<[f64; 2]> {
                QUANTILES
                    .iter()
                    .map(|(q, _)| percentile_ci(h, *q).map(|v| v as f64))
                    .collect()
            };
            let (ca, cb) = (cis(ha), cis(hb));
            let how = "order statistics";
            let mut figures = Vec::new();
            percentile_figures(
                Latency::Response,
                [ha, hb],
                [&ca, &cb],
                [how, how],
                &mut figures,
            );
            out.push(Operation {
                operation: format!("segment {} ({}) {}", i + 1, sa.segment.label, kind.name()),
                figures,
            });
        }
    }
    out
}

/// Compare run `b` against run `a`.
pub fn compare(
    a: &RunRecord,
    b: &RunRecord,
    opts: &CompareOptions,
) -> Result<Comparison, ReportError> {
    if !(opts.alpha > 0.0 && opts.alpha < 1.0) {
        return Err(ReportError::Invalid(format!(
            "alpha {}: expected a significance level above 0 and below 1, e.g. 0.01",
            opts.alpha
        )));
    }
    let (ta, tb) = (run::totals(a), run::totals(b));
    for (name, r, t) in [("A", a, &ta), ("B", b, &tb)] {
        if t.kinds().next().is_none() {
            return Err(ReportError::Compare(format!(
                "run {name} ({}) has no measured operations",
                r.id()
            )));
        }
    }
    let mut caveats = Vec::new();
    let (ma, mb) = (a.meta(), b.meta());
    if ma.phase != mb.phase {
        caveats.push(format!("phases differ: {} and {}", ma.phase, mb.phase));
    }
    if ma.workloads != mb.workloads {
        caveats.push(format!(
            "workloads differ: {} and {}",
            ma.workloads.join(","),
            mb.workloads.join(",")
        ));
    }
    if ma.threads != mb.threads {
        caveats.push(format!("threads differ: {} and {}", ma.threads, mb.threads));
    }
    for (name, r) in [("A", a), ("B", b)] {
        if run::measured_intervals(r).count() < MIN_BATCHES {
            caveats.push(format!(
                "run {name} has fewer than {MIN_BATCHES} measured intervals: means are tested \
                 on few batches and percentiles on order statistics alone"
            ));
        }
    }

    let mut operations = Vec::new();
    let (ba, bb) = (brief(a), brief(b));
    operations.push(Operation {
        operation: "all".into(),
        figures: vec![welch_figure(
            "throughput".into(),
            "ops/s",
            ba.throughput,
            bb.throughput,
            batch_means(&rate_batches(a, None), MIN_BATCHES),
            batch_means(&rate_batches(b, None), MIN_BATCHES),
            1.0,
            Better::Higher,
            opts.alpha,
        )],
    });
    for kind in run::kinds_of(&[a, b]) {
        let mut figures = vec![welch_figure(
            "throughput".into(),
            "ops/s",
            run::kind_throughput(a, &ta, kind),
            run::kind_throughput(b, &tb, kind),
            batch_means(&rate_batches(a, Some(kind)), MIN_BATCHES),
            batch_means(&rate_batches(b, Some(kind)), MIN_BATCHES),
            1.0,
            Better::Higher,
            opts.alpha,
        )];
        latency_figures(a, b, &ta, &tb, kind, opts, &mut figures);
        operations.push(Operation {
            operation: kind.name().to_string(),
            figures,
        });
    }
    operations.extend(segment_operations(a, b, &mut caveats));
    // One run per side: the tests above say whether the runs differ beyond
    // their own sampling error, which run-to-run noise (the machine's
    // other load, caches, the database's state) usually dwarfs. Nothing is
    // claimed of the configurations.
    for f in operations.iter_mut().flat_map(|o| o.figures.iter_mut()) {
        f.significant = false;
        f.verdict = Verdict::Unchanged;
    }
    caveats.push(
        "one run per side cannot separate a change from run-to-run noise, so no change is \
         marked better or worse; `~` marks a difference beyond each run's own sampling error. \
         Run each configuration several times (`--repeat 5`, or `sojourn ab` to alternate them) \
         and compare the groups"
            .to_string(),
    );
    Ok(Comparison {
        a: ba,
        b: bb,
        alpha: opts.alpha,
        method: format!(
            "Means (throughput, mean latency): Welch's t-test at alpha {} on batch means, one \
             batch per measured interval (weighted by its operations, or by its length for \
             throughput), neighbouring batches merged while their means stay correlated and the \
             standard error inflated for any correlation left; the batches used are shown per \
             figure. Percentiles: 95% confidence intervals, the wider \
             of the order-statistic interval of the run's histogram and, with at least {} \
             intervals, a bootstrap over intervals ({} replicates); significant when A's and B's \
             intervals do not overlap. Higher throughput and lower latency are better.",
            opts.alpha, MIN_BOOTSTRAP_INTERVALS, REPLICATES
        ),
        caveats,
        operations,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_follow_the_better_direction() {
        assert_eq!(verdict(true, 100.0, 80.0, Better::Higher), Verdict::Worse);
        assert_eq!(verdict(true, 100.0, 120.0, Better::Higher), Verdict::Better);
        assert_eq!(verdict(true, 1.0, 2.0, Better::Lower), Verdict::Worse);
        assert_eq!(verdict(true, 2.0, 1.0, Better::Lower), Verdict::Better);
        assert_eq!(verdict(false, 2.0, 1.0, Better::Lower), Verdict::Unchanged);
        assert_eq!(change(100.0, 80.0), Some(-20.0));
        assert_eq!(change(0.0, 80.0), None);
    }
}
