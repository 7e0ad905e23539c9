//! Comparing configurations across repetitions. One run per side cannot
//! tell a change from run-to-run noise: what differs between two runs of
//! one configuration (the machine's other load, caches, the database's
//! state) is usually far larger than the sampling error within a run. So
//! each side is a group of repetitions (`--repeat N`, `sojourn ab`, or a
//! list of runs), and every figure is judged on how it varies between
//! repetitions:
//!
//! - **Test**: Welch's t-test on the repetitions' values of the figure
//!   (one value per run: its throughput, its p99, ...). Repetitions are
//!   independent runs, so the t-test's assumptions are those of the runs'
//!   means; with 3 or more per side it is exact enough, and it gives a
//!   confidence interval for the change (a rank test such as Mann-Whitney
//!   cannot reach p < 0.05 with 3 per side at all, and gives no interval).
//!   At least [`MIN_REPETITIONS`] per side are needed to mark anything.
//! - **Many figures**: the p-values of all figures of one comparison are
//!   adjusted by Holm-Bonferroni, so an A/A comparison marks nothing in at
//!   least 1 - alpha of tries, however many figures it shows.
//! - **Noise threshold**: a change smaller than `threshold` (default 2%)
//!   is never marked, significant or not: below it a change is not worth
//!   acting on, and tiny systematic effects (a warmer cache) are common.

use std::fmt::Write as _;

use serde::Serialize;
use sojourn_core::stats::{student_t_quantile, welch, MeanEstimate};
use sojourn_store::RunRecord;

use crate::compare::{Better, Verdict};
use crate::run::{self, Latency};
use crate::tables::readable;

/// Fewest repetitions per side before a difference is marked.
pub const MIN_REPETITIONS: usize = 3;

/// How a group comparison judges.
#[derive(Clone, Copy, Debug)]
pub struct GroupOptions {
    /// Family-wise significance level (Holm-Bonferroni over every figure).
    pub alpha: f64,
    /// Smallest relative change marked (0.02 = 2%).
    pub threshold: f64,
}

impl Default for GroupOptions {
    fn default() -> Self {
        GroupOptions {
            alpha: 0.05,
            threshold: 0.02,
        }
    }
}

/// One figure of every run: its name, unit, which way is better, value.
#[derive(Clone, Debug)]
pub struct RunFigure {
    pub metric: String,
    pub unit: &'static str,
    pub better: Better,
    pub value: f64,
}

/// The figures a comparison judges for `r`: throughput, then per kind its
/// throughput and the mean and p50/p99/p99.9 of service time, and of
/// response time in open loop (in closed loop it is the service time).
pub fn run_figures(r: &RunRecord) -> Vec<RunFigure> {
    let total = run::totals(r);
    let mut out = vec![RunFigure {
        metric: "throughput".into(),
        unit: "ops/s",
        better: Better::Higher,
        value: run::throughput(r),
    }];
    let latencies: &[Latency] = if r.meta().target.is_some() {
        &[Latency::Service, Latency::Response]
    } else {
        &[Latency::Service]
    };
    for (kind, _) in total.kinds() {
        out.push(RunFigure {
            metric: format!("{} throughput", kind.name()),
            unit: "ops/s",
            better: Better::Higher,
            value: run::kind_throughput(r, &total, kind),
        });
        for &lat in latencies {
            let h = run::histogram(&total, kind, lat);
            if h.is_empty() {
                continue;
            }
            let mut push = |what: &str, ns: f64| {
                out.push(RunFigure {
                    metric: format!("{} {} {what}", kind.name(), lat.name()),
                    unit: "ms",
                    better: Better::Lower,
                    value: ns / 1e6,
                })
            };
            push("mean", h.mean());
            for (q, name) in [(0.5, "p50"), (0.99, "p99"), (0.999, "p99.9")] {
                push(name, h.value_at_quantile(q) as f64);
            }
        }
    }
    out
}

/// One figure across both groups.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GroupFigure {
    pub metric: String,
    pub unit: &'static str,
    /// Each repetition's value, in run order.
    pub a_values: Vec<f64>,
    pub b_values: Vec<f64>,
    pub a_mean: f64,
    pub b_mean: f64,
    /// Standard deviation between repetitions.
    pub a_sd: f64,
    pub b_sd: f64,
    /// `(b - a) / a` in percent, with its 95% confidence interval.
    pub change_pct: Option<f64>,
    pub change_ci95_pct: Option<[f64; 2]>,
    /// Welch's p-value, and after Holm-Bonferroni over the comparison.
    pub p: Option<f64>,
    pub p_holm: Option<f64>,
    pub better: Better,
    pub marked: bool,
    pub verdict: Verdict,
}

/// Two groups compared.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GroupComparison {
    pub a_runs: Vec<String>,
    pub b_runs: Vec<String>,
    pub alpha: f64,
    pub threshold_pct: f64,
    pub method: String,
    /// Why nothing could be marked, or what to be careful about.
    pub notes: Vec<String>,
    pub figures: Vec<GroupFigure>,
}

fn mean_sd(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    if xs.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let mean = xs.iter().sum::<f64>() / n;
    let sd = if xs.len() > 1 {
        (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    (mean, sd)
}

/// Holm-Bonferroni adjusted p-values, in the input's order.
pub fn holm(ps: &[f64]) -> Vec<f64> {
    let m = ps.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| ps[i].total_cmp(&ps[j]));
    let mut out = vec![1.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * ps[i]).min(1.0));
        out[i] = running;
    }
    out
}

/// One figure's values in both groups, one per repetition.
#[derive(Clone, Debug)]
pub struct FigureValues {
    pub metric: String,
    pub unit: &'static str,
    pub better: Better,
    pub a: Vec<f64>,
    pub b: Vec<f64>,
}

impl FigureValues {
    pub fn new(metric: &str, unit: &'static str, better: Better, a: Vec<f64>, b: Vec<f64>) -> Self {
        FigureValues {
            metric: metric.to_string(),
            unit,
            better,
            a,
            b,
        }
    }
}

/// The statistical core: per figure, A's and B's values (one per
/// repetition) and which way is better. Marks follow the module's rules.
pub fn judge_values(figures: Vec<FigureValues>, opts: GroupOptions) -> Vec<GroupFigure> {
    let mut out: Vec<GroupFigure> = figures
        .into_iter()
        .map(
            |FigureValues {
                 metric,
                 unit,
                 better,
                 a,
                 b,
             }| {
                let (a_mean, a_sd) = mean_sd(&a);
                let (b_mean, b_sd) = mean_sd(&b);
                let change_pct = (a_mean != 0.0 && a_mean.is_finite() && b_mean.is_finite())
                    .then(|| (b_mean - a_mean) / a_mean * 100.0);
                let (mut p, mut ci) = (None, None);
                if let (Some(ea), Some(eb)) = (
                    MeanEstimate::from_samples(&a),
                    MeanEstimate::from_samples(&b),
                ) {
                    let w = welch(&ea, &eb);
                    if w.p.is_finite() {
                        p = Some(w.p);
                    }
                    let se = (ea.std_error.powi(2) + eb.std_error.powi(2)).sqrt();
                    if w.df.is_finite() && w.df > 0.0 && a_mean != 0.0 {
                        let half = student_t_quantile(0.975, w.df) * se;
                        let d = b_mean - a_mean;
                        ci = Some([(d - half) / a_mean * 100.0, (d + half) / a_mean * 100.0]);
                    } else if se == 0.0 && a_mean != 0.0 {
                        let d = (b_mean - a_mean) / a_mean * 100.0;
                        ci = Some([d, d]);
                    }
                }
                GroupFigure {
                    metric,
                    unit,
                    a_mean,
                    b_mean,
                    a_sd,
                    b_sd,
                    a_values: a,
                    b_values: b,
                    change_pct,
                    change_ci95_pct: ci,
                    p,
                    p_holm: None,
                    better,
                    marked: false,
                    verdict: Verdict::Unchanged,
                }
            },
        )
        .collect();
    let tested: Vec<usize> = (0..out.len())
        .filter(|&i| {
            out[i].p.is_some()
                && out[i].a_values.len() >= MIN_REPETITIONS
                && out[i].b_values.len() >= MIN_REPETITIONS
        })
        .collect();
    let adjusted = holm(
        &tested
            .iter()
            .map(|&i| out[i].p.unwrap_or(1.0))
            .collect::<Vec<_>>(),
    );
    for (&i, p_holm) in tested.iter().zip(adjusted) {
        let f = &mut out[i];
        f.p_holm = Some(p_holm);
        let big = f
            .change_pct
            .is_some_and(|c| c.abs() >= opts.threshold * 100.0);
        f.marked = p_holm < opts.alpha && big;
        if f.marked {
            let up = f.b_mean > f.a_mean;
            f.verdict = match (up, f.better) {
                (true, Better::Higher) | (false, Better::Lower) => Verdict::Better,
                _ => Verdict::Worse,
            };
        }
    }
    out
}

/// Compare group `b` (repetitions of one configuration) against group `a`.
pub fn compare_groups(a: &[RunRecord], b: &[RunRecord], opts: GroupOptions) -> GroupComparison {
    let fa: Vec<Vec<RunFigure>> = a.iter().map(run_figures).collect();
    let fb: Vec<Vec<RunFigure>> = b.iter().map(run_figures).collect();
    // Figures in the order A's first run gives them, then any only B has.
    let mut names: Vec<(String, &'static str, Better)> = Vec::new();
    for f in fa.iter().chain(&fb).flatten() {
        if !names.iter().any(|(m, _, _)| *m == f.metric) {
            names.push((f.metric.clone(), f.unit, f.better));
        }
    }
    let values = |runs: &[Vec<RunFigure>], metric: &str| -> Vec<f64> {
        runs.iter()
            .filter_map(|fs| fs.iter().find(|f| f.metric == metric).map(|f| f.value))
            .filter(|v| v.is_finite())
            .collect()
    };
    let figures = judge_values(
        names
            .into_iter()
            .map(|(m, unit, better)| {
                let (va, vb) = (values(&fa, &m), values(&fb, &m));
                FigureValues::new(&m, unit, better, va, vb)
            })
            .collect(),
        opts,
    );
    let mut notes = Vec::new();
    let (na, nb) = (a.len(), b.len());
    if na < 2 && nb < 2 {
        notes.push(format!(
            "one run per side cannot separate a change from run-to-run noise, so nothing is \
             marked; run each configuration several times (`sojourn run --repeat 5 ...`, or \
             `sojourn ab` to alternate them) and compare the groups (at least {MIN_REPETITIONS} \
             repetitions per side)"
        ));
    } else if na < MIN_REPETITIONS || nb < MIN_REPETITIONS {
        notes.push(format!(
            "{na} and {nb} repetitions: at least {MIN_REPETITIONS} per side are needed to mark a \
             difference; the spreads are shown"
        ));
    }
    for f in figures.iter().filter(|f| f.marked) {
        let range = |v: &[f64]| {
            let (lo, hi) = min_max(v);
            hi - lo
        };
        let diff = (f.b_mean - f.a_mean).abs();
        let spread = range(&f.a_values).max(range(&f.b_values));
        if spread > diff {
            notes.push(format!(
                "{}: the repetitions of one side differ among themselves by {} {}, more than \
                 the {} {} between the sides; more repetitions would settle it",
                f.metric,
                readable(spread),
                f.unit,
                readable(diff),
                f.unit
            ));
        }
    }
    let (ma, mb) = (a.first().map(|r| r.meta()), b.first().map(|r| r.meta()));
    if let (Some(ma), Some(mb)) = (ma, mb) {
        if ma.phase != mb.phase || ma.workloads != mb.workloads {
            notes.push(format!(
                "the groups ran different things: {} {} and {} {}",
                ma.phase,
                ma.workloads.join(","),
                mb.phase,
                mb.workloads.join(",")
            ));
        }
    }
    GroupComparison {
        a_runs: a.iter().map(|r| r.id().as_str().to_string()).collect(),
        b_runs: b.iter().map(|r| r.id().as_str().to_string()).collect(),
        alpha: opts.alpha,
        threshold_pct: opts.threshold * 100.0,
        method: format!(
            "Each figure is one value per repetition (run); Welch's t-test on those values, \
             p-values adjusted by Holm-Bonferroni over the {} figures (family-wise alpha {}), \
             at least {MIN_REPETITIONS} repetitions per side; a change is marked when it is \
             significant so and at least {}% (the noise threshold). The change's interval is \
             Welch's 95% interval of the difference of the means, relative to A's.",
            figures.len(),
            opts.alpha,
            opts.threshold * 100.0
        ),
        notes,
        figures,
    }
}

/// The comparison as a table.
pub fn text(c: &GroupComparison) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "A: {} run(s) {}\nB: {} run(s) {}",
        c.a_runs.len(),
        short_ids(&c.a_runs),
        c.b_runs.len(),
        short_ids(&c.b_runs)
    );
    let _ = writeln!(
        s,
        "{:<34} {:>22} {:>22} {:>26} {:>8}  verdict",
        "figure", "A mean +- sd", "B mean +- sd", "change [95% CI]", "p (Holm)"
    );
    for f in &c.figures {
        let side = |m: f64, sd: f64, n: usize| format!("{} +- {} ({n})", readable(m), readable(sd));
        let change = match (f.change_pct, f.change_ci95_pct) {
            (Some(c), Some([lo, hi])) => format!("{c:+.1}% [{lo:+.1}, {hi:+.1}]"),
            (Some(c), None) => format!("{c:+.1}%"),
            _ => "-".into(),
        };
        let _ = writeln!(
            s,
            "{:<34} {:>22} {:>22} {:>26} {:>8}  {}",
            format!("{} ({})", f.metric, f.unit),
            side(f.a_mean, f.a_sd, f.a_values.len()),
            side(f.b_mean, f.b_sd, f.b_values.len()),
            change,
            f.p_holm.map_or("-".into(), |p| format!("{p:.3}")),
            match f.verdict {
                Verdict::Better => "better",
                Verdict::Worse => "worse",
                Verdict::Unchanged => "",
            }
        );
    }
    for n in &c.notes {
        let _ = writeln!(s, "note: {n}");
    }
    let _ = writeln!(s, "method: {}", c.method);
    s
}

fn short_ids(ids: &[String]) -> String {
    ids.iter()
        .map(|i| i.chars().take(8).collect::<String>())
        .collect::<Vec<_>>()
        .join(", ")
}

/// One figure's spread over a group's repetitions.
#[derive(Clone, Debug, PartialEq)]
pub struct Spread {
    pub metric: String,
    pub unit: &'static str,
    pub mean: f64,
    /// Standard deviation between repetitions.
    pub sd: f64,
    pub min: f64,
    pub max: f64,
}

/// Each figure of the group's first run, across all its runs.
pub fn spreads(runs: &[RunRecord]) -> Vec<Spread> {
    let figs: Vec<Vec<RunFigure>> = runs.iter().map(run_figures).collect();
    let Some(first) = figs.first() else {
        return Vec::new();
    };
    first
        .iter()
        .map(|f| {
            let v: Vec<f64> = figs
                .iter()
                .filter_map(|fs| fs.iter().find(|g| g.metric == f.metric).map(|g| g.value))
                .collect();
            let (mean, sd) = mean_sd(&v);
            let (min, max) = min_max(&v);
            Spread {
                metric: f.metric.clone(),
                unit: f.unit,
                mean,
                sd,
                min,
                max,
            }
        })
        .collect()
}

fn min_max(v: &[f64]) -> (f64, f64) {
    (
        v.iter().cloned().fold(f64::INFINITY, f64::min),
        v.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
    )
}

/// A group's spread, figure by figure (what `--repeat` prints after its
/// repetitions): mean, standard deviation as a share of the mean, range.
pub fn spread_lines(runs: &[RunRecord]) -> String {
    let mut s = String::new();
    if runs.is_empty() {
        return s;
    }
    let _ = writeln!(
        s,
        "# {} repetitions: figure, mean, sd (% of mean), min..max",
        runs.len()
    );
    for f in spreads(runs) {
        let _ = writeln!(
            s,
            "# {} ({}): {}, sd {:.1}%, {}..{}",
            f.metric,
            f.unit,
            readable(f.mean),
            if f.mean != 0.0 {
                f.sd / f.mean.abs() * 100.0
            } else {
                0.0
            },
            readable(f.min),
            readable(f.max)
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::{RngCore, SeedableRng};

    /// A standard normal draw (Box-Muller).
    fn normal(rng: &mut rand_xoshiro::Xoshiro256PlusPlus) -> f64 {
        let u = |r: &mut rand_xoshiro::Xoshiro256PlusPlus| {
            ((r.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let (a, b) = (u(rng), u(rng));
        (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()
    }

    /// Repetitions of one configuration: each run's figure is the true
    /// value, plus run-to-run noise (sd `between`), plus the run's own
    /// sampling error (far smaller, as the within-run intervals are).
    fn group(
        rng: &mut rand_xoshiro::Xoshiro256PlusPlus,
        n: usize,
        truth: f64,
        between: f64,
    ) -> Vec<f64> {
        (0..n)
            .map(|_| truth + between * normal(rng) + between * 0.05 * normal(rng))
            .collect()
    }

    #[test]
    fn holm_adjusts_in_order_and_stays_monotone() {
        let adj = holm(&[0.01, 0.04, 0.03, 0.005]);
        assert_eq!(adj, vec![0.03, 0.06, 0.06, 0.02]);
    }

    #[test]
    fn a_over_a_marks_nothing_in_at_least_nineteen_tries_of_twenty() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(17);
        let opts = GroupOptions {
            alpha: 0.05,
            threshold: 0.0,
        };
        let mut any_marked = 0;
        for _ in 0..200 {
            // Ten figures, five repetitions a side, run-to-run noise of 5%.
            let figures = (0..10)
                .map(|i| {
                    FigureValues::new(
                        &format!("f{i}"),
                        "ms",
                        Better::Lower,
                        group(&mut rng, 5, 100.0, 5.0),
                        group(&mut rng, 5, 100.0, 5.0),
                    )
                })
                .collect();
            if judge_values(figures, opts).iter().any(|f| f.marked) {
                any_marked += 1;
            }
        }
        assert!(
            any_marked <= 10,
            "{any_marked} of 200 A/A comparisons marked something"
        );
    }

    #[test]
    fn a_shift_of_twice_the_run_to_run_spread_is_found() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(23);
        let mut found = 0;
        for _ in 0..200 {
            let figures = vec![FigureValues::new(
                "throughput",
                "ops/s",
                Better::Higher,
                group(&mut rng, 8, 1000.0, 20.0),
                group(&mut rng, 8, 1040.0, 20.0),
            )];
            let f = &judge_values(figures, GroupOptions::default())[0];
            if f.marked && f.verdict == Verdict::Better {
                found += 1;
            }
        }
        assert!(found >= 180, "found in {found} of 200 trials");
    }

    #[test]
    fn too_few_repetitions_or_too_small_a_change_mark_nothing() {
        let one = judge_values(
            vec![FigureValues::new(
                "x",
                "ms",
                Better::Lower,
                vec![1.0],
                vec![100.0],
            )],
            GroupOptions::default(),
        );
        assert!(!one[0].marked && one[0].p_holm.is_none());
        let two = judge_values(
            vec![FigureValues::new(
                "x",
                "ms",
                Better::Lower,
                vec![1.0, 1.01],
                vec![5.0, 5.01],
            )],
            GroupOptions::default(),
        );
        assert!(!two[0].marked, "two repetitions a side mark nothing");
        // Significant, but 1% is under the 2% noise threshold.
        let small = judge_values(
            vec![FigureValues::new(
                "x",
                "ms",
                Better::Lower,
                vec![100.0, 100.01, 99.99, 100.0],
                vec![101.0, 101.01, 100.99, 101.0],
            )],
            GroupOptions::default(),
        );
        assert!(small[0].p_holm.unwrap() < 0.001 && !small[0].marked);
    }
}
