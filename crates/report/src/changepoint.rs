//! Change points in a series of figures (one value per point of a
//! history: a commit, a version, a night), found as Apache Otava (once
//! DataStax's Hunter) finds them, so that its users get the same answer:
//!
//! 1. **Split**: windows of `window` points, each half a window on from the
//!    last (or from its last change point), are cut by E-Divisive means
//!    (Matteson and James 2014): the split `τ` and end `κ` that maximise the
//!    energy statistic `Q(τ, κ)` over every interval not yet cut, tested
//!    with Student's two-sided t-test between the interval's points before
//!    `τ` and those after it, kept when its p-value is at most a looser
//!    first-pass threshold, until the best candidate fails. Otava takes
//!    "after" to the interval's end; sojourn takes it to `κ` where `κ` ends
//!    short of it and both sides have [`MIN_REGIME`] points. A change
//!    undone later (a regression fixed a few commits on) otherwise mixes
//!    both levels on one side and is missed: on seeded series with a few
//!    shifts up and down, this finds many more of them than Otava's test,
//!    with about as few false alarms on pure noise.
//! 2. **Merge**: each change point is judged again on the whole series
//!    against its neighbours; the weakest (largest p-value) is removed
//!    while one is above `max_pvalue`, then the smallest while its relative
//!    change is at most `min_magnitude`, each removal judging its
//!    neighbours again. Two departures here (see [`merge`]): an outlier
//!    between two change points leaves only the stronger, and a removal
//!    judges again the change points either side of it (Otava's the two
//!    after it, leaving the one before judged against a regime that no
//!    longer exists).
//!
//! [`Options::as_otava`] turns the three departures off.
//!
//! The t-test, not a permutation test, judges significance (as Otava's
//! default does): it gives the same answer every time and for a series
//! whose points are means of repetitions it is the test those points
//! call for. Because the split looks only a window ahead and the merge
//! judges neighbours, a point added at the end leaves the change points
//! before its window where they were.

use sojourn_core::stats::student_t_two_sided_p;

/// Fewest points on each side of a split tested against the segment
/// E-Divisive chose (see the module doc): below it, a run of a few
/// outliers between two splits passes a t-test on its tiny variance.
pub const MIN_REGIME: usize = 5;

/// How change points are found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// Points per window of the split.
    pub window: usize,
    /// A change point is kept when its p-value is below this.
    pub max_pvalue: f64,
    /// ... and its relative change (the larger of `after/before − 1` and
    /// `before/after − 1`, in absolute value) above this.
    pub min_magnitude: f64,
    /// Every step as Otava takes it: the split tests "after" to the
    /// interval's end, and the merge keeps outliers' cuts for the t-test
    /// to judge and judges again the two change points after a removal
    /// (see the module doc and [`merge`]). On only to hold the rest
    /// against Otava's own answers (`bench/changepoints.py`).
    pub as_otava: bool,
}

impl Default for Options {
    /// Otava's defaults, but for the smallest change worth a report:
    /// `compare`'s noise threshold, 2%.
    fn default() -> Self {
        Options {
            window: 50,
            max_pvalue: 0.001,
            min_magnitude: 0.02,
            as_otava: false,
        }
    }
}

/// One change point: the index of the first point of the new regime, and
/// the two regimes either side of it (back to the change point before and
/// on to the one after).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChangePoint {
    pub index: usize,
    pub before: Regime,
    pub after: Regime,
    /// Student's two-sided p-value of the two regimes' means.
    pub p: f64,
}

/// A run of points between change points: how many, their mean and their
/// standard deviation (population, as Otava's).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Regime {
    pub n: usize,
    pub mean: f64,
    pub sd: f64,
}

/// `mean ± sd (n points)`, as the text and the HTML history print a
/// regime.
impl std::fmt::Display for Regime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.4} ± {:.4} ({} points)", self.mean, self.sd, self.n)
    }
}

impl Regime {
    fn of(xs: &[f64]) -> Regime {
        let n = xs.len();
        if n == 0 {
            return Regime {
                n,
                mean: f64::NAN,
                sd: 0.0,
            };
        }
        let mean = xs.iter().sum::<f64>() / n as f64;
        let sd = if n < 2 {
            0.0
        } else {
            (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64).sqrt()
        };
        Regime { n, mean, sd }
    }
}

impl ChangePoint {
    /// Judge `index` between `left` and `right`.
    fn between(index: usize, left: &[f64], right: &[f64]) -> ChangePoint {
        let (before, after) = (Regime::of(left), Regime::of(right));
        ChangePoint {
            index,
            before,
            after,
            p: t_test(&before, &after),
        }
    }

    /// `after / before − 1` (0 when before is 0).
    pub fn forward_change(&self) -> f64 {
        if self.before.mean == 0.0 {
            0.0
        } else {
            self.after.mean / self.before.mean - 1.0
        }
    }

    /// The larger relative change either way.
    pub fn magnitude(&self) -> f64 {
        let backward = if self.after.mean == 0.0 {
            0.0
        } else {
            self.before.mean / self.after.mean - 1.0
        };
        self.forward_change().abs().max(backward.abs())
    }
}

/// Student's pooled two-sided t-test from each side's population
/// deviation, as `scipy.stats.ttest_ind_from_stats` is called by Otava.
fn t_test(a: &Regime, b: &Regime) -> f64 {
    if a.n + b.n <= 2 {
        return 1.0;
    }
    let (n1, n2) = (a.n as f64, b.n as f64);
    let df = n1 + n2 - 2.0;
    let pooled = ((n1 - 1.0) * a.sd * a.sd + (n2 - 1.0) * b.sd * b.sd) / df;
    let t = (a.mean - b.mean) / (pooled * (1.0 / n1 + 1.0 / n2)).sqrt();
    student_t_two_sided_p(t, df)
}

/// The change points of `series`, in order.
pub fn change_points(series: &[f64], opts: &Options) -> Vec<ChangePoint> {
    let first_pass = if opts.max_pvalue < 0.05 {
        opts.max_pvalue * 10.0
    } else if opts.max_pvalue < 0.5 {
        opts.max_pvalue * 2.0
    } else {
        opts.max_pvalue
    };
    let window = opts.window.max(2);
    let step = window / 2;
    let mut found: Vec<usize> = Vec::new();
    let mut start = 0;
    while start < series.len() {
        let end = (start + window).min(series.len());
        let new = split(&series[start..end], first_pass, !opts.as_otava);
        let last = new.iter().max().map_or(0, |&i| i + start);
        for i in new {
            if !found.contains(&(i + start)) {
                found.push(i + start);
            }
        }
        start = last.max(start + step);
    }
    found.sort_unstable();
    merge(series, &found, opts)
}

/// E-Divisive means over one window: the best split of every interval
/// not yet cut, kept while its t-test passes `threshold`.
fn split(w: &[f64], threshold: f64, to_kappa: bool) -> Vec<usize> {
    let mut cuts: Vec<usize> = Vec::new();
    loop {
        let mut bounds = Vec::with_capacity(cuts.len() + 2);
        bounds.push(0);
        bounds.extend(&cuts);
        bounds.push(w.len());
        let mut best: Option<(usize, usize, f64, usize)> = None;
        for pair in bounds.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            if b - a < 2 {
                continue;
            }
            let (tau, kappa, q) = best_split(&w[a..b]);
            // The leftmost interval wins a tie.
            if best.is_none_or(|(_, _, bq, _)| q > bq) {
                best = Some((a + tau, a + kappa, q, a));
            }
        }
        let Some((tau, kappa, _, a)) = best else {
            return cuts;
        };
        let b = bounds[bounds.partition_point(|&x| x <= tau)];
        let significant = if kappa == b || !to_kappa {
            ChangePoint::between(tau, &w[a..tau], &w[tau..b]).p <= threshold
        } else {
            tau - a >= MIN_REGIME
                && kappa - tau >= MIN_REGIME
                && ChangePoint::between(tau, &w[a..tau], &w[tau..kappa]).p <= threshold
        };
        if significant {
            let at = cuts.partition_point(|&c| c < tau);
            cuts.insert(at, tau);
        } else {
            return cuts;
        }
    }
}

/// The split `τ` (1 ≤ τ < len) of `z`, its end `κ` and its statistic: the largest
/// `Q(τ, κ)` over every end `κ` (τ < κ ≤ len), the first in order of τ,
/// then κ, on a tie. With `X = z[..τ]` (n points), `Y = z[τ..κ]` (m):
/// `Q = 2/(n+m)·Σ|x−y| − 2m/((n+m)(n−1))·Σ|x−x'| − 2n/((n+m)(m−1))·Σ|y−y'|`,
/// the pair sums over each pair once (Matteson and James' `nm/(n+m)·Ê`).
fn best_split(z: &[f64]) -> (usize, usize, f64) {
    let len = z.len();
    let mut best = (1, 2, f64::NEG_INFINITY);
    for tau in 1..len {
        let n = tau as f64;
        let within_x: f64 = (0..tau)
            .flat_map(|i| (i + 1..tau).map(move |k| (i, k)))
            .map(|(i, k)| (z[i] - z[k]).abs())
            .sum();
        let (mut cross, mut within_y) = (0.0, 0.0);
        for kappa in tau + 1..=len {
            let y = z[kappa - 1];
            cross += z[..tau].iter().map(|x| (x - y).abs()).sum::<f64>();
            within_y += z[tau..kappa - 1].iter().map(|v| (v - y).abs()).sum::<f64>();
            let m = (kappa - tau) as f64;
            let mut q = 2.0 / (n + m) * cross;
            if tau >= 2 {
                q -= 2.0 * m / ((n + m) * (n - 1.0)) * within_x;
            }
            if kappa - tau >= 2 {
                q -= 2.0 * n / ((n + m) * (m - 1.0)) * within_y;
            }
            if q > best.2 {
                best = (tau, kappa, q);
            }
        }
    }
    best
}

/// Otava's merge: judge each change point on the whole series between its
/// neighbours; drop the weakest while any is not significant, then the
/// smallest while it is not large enough.
///
/// Two departures, both off with [`Options::as_otava`]:
/// - One point between two change points, or before the first, is an
///   outlier, not a regime: of two adjacent change points the one judged
///   stronger between their outer neighbours is kept, and one after the
///   series' first point is dropped. An outlier at a step otherwise cuts it in
///   three, each cut judged against the one or two points beside it and
///   too weak on so few, and the merge drops the step with them. (Asking
///   more points between change points, as the split's [`MIN_REGIME`],
///   also drops real levels that lasted a few points: on
///   `bench/changepoints.py`'s steps, recall fell.)
/// - After a removal the change points either side of it are judged
///   again, those whose regimes it ended. Otava judges the one after it
///   and the one after that, whose regimes did not change, and leaves the
///   one before it with a regime that no longer exists: a change judged,
///   and reported, against points that are not its neighbours.
fn merge(series: &[f64], found: &[usize], opts: &Options) -> Vec<ChangePoint> {
    let judge = |cps: &[ChangePoint], i: usize| {
        let from = if i == 0 { 0 } else { cps[i - 1].index };
        let to = cps.get(i + 1).map_or(series.len(), |c| c.index);
        let at = cps[i].index;
        ChangePoint::between(at, &series[from..at], &series[at..to])
    };
    let found = if opts.as_otava {
        found.to_vec()
    } else {
        without_outliers(series, found)
    };
    let mut cps: Vec<ChangePoint> = found
        .iter()
        .map(|&index| ChangePoint::between(index, &[], &[]))
        .collect();
    for i in 0..cps.len() {
        cps[i] = judge(&cps, i);
    }
    while !cps.is_empty() {
        // The first of the largest p-values (a NaN only where first, as
        // Python's `max` picks).
        let mut weakest = 0;
        for (i, c) in cps.iter().enumerate().skip(1) {
            if c.p > cps[weakest].p {
                weakest = i;
            }
        }
        if cps[weakest].p < opts.max_pvalue {
            weakest = 0;
            for (i, c) in cps.iter().enumerate().skip(1) {
                if c.magnitude() < cps[weakest].magnitude() {
                    weakest = i;
                }
            }
            if cps[weakest].magnitude() > opts.min_magnitude {
                return cps;
            }
        }
        cps.remove(weakest);
        let again = if opts.as_otava {
            [Some(weakest), Some(weakest + 1)]
        } else {
            [weakest.checked_sub(1), Some(weakest)]
        };
        for i in again.into_iter().flatten() {
            if i < cps.len() {
                cps[i] = judge(&cps, i);
            }
        }
    }
    cps
}

/// `found` less one of each two adjacent change points (one point
/// between them), keeping the one with the smaller p-value when judged
/// without the other (the earlier on a tie), from the first pair on; and
/// less a change point after the first point alone. (After the last point
/// alone it stays: the newest point may be a regression, which `--check`
/// judges by its repetitions.)
fn without_outliers(series: &[f64], found: &[usize]) -> Vec<usize> {
    let mut cps: Vec<usize> = found.iter().copied().filter(|&i| i != 1).collect();
    while let Some(i) = cps.windows(2).position(|w| w[1] - w[0] == 1) {
        let from = if i == 0 { 0 } else { cps[i - 1] };
        let to = cps.get(i + 2).copied().unwrap_or(series.len());
        let p = |at: usize| ChangePoint::between(at, &series[from..at], &series[at..to]).p;
        let (first, second) = (p(cps[i]), p(cps[i + 1]));
        // A NaN (a side without spread) loses to a number.
        let drop_first = second < first || (first.is_nan() && !second.is_nan());
        cps.remove(if drop_first { i } else { i + 1 });
    }
    cps
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A seeded generator for noise (splitmix64, then Box-Muller).
    struct Noise(u64);

    impl Noise {
        fn uniform(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        }

        fn normal(&mut self) -> f64 {
            let (u, v) = (self.uniform().max(1e-300), self.uniform());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        }
    }

    /// `len` points around 100 with `noise` (relative sd), the level
    /// multiplied by `1 + shift` from each `(at, shift)` on.
    fn series(seed: u64, len: usize, noise: f64, shifts: &[(usize, f64)]) -> Vec<f64> {
        let mut rng = Noise(seed);
        (0..len)
            .map(|i| {
                let level = shifts
                    .iter()
                    .filter(|&&(at, _)| i >= at)
                    .fold(100.0, |l, &(_, s)| l * (1.0 + s));
                level * (1.0 + noise * rng.normal())
            })
            .collect()
    }

    fn indices(cps: &[ChangePoint]) -> Vec<usize> {
        cps.iter().map(|c| c.index).collect()
    }

    #[test]
    fn otava_s_own_example_is_found_where_otava_finds_it() {
        // Otava's analysis test: two levels of ten points, window 10.
        let s = [
            0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 2.0, 3.0, 2.0, 3.0, 2.0, 3.0, 2.0,
            3.0, 2.0, 3.0,
        ];
        let opts = Options {
            window: 10,
            max_pvalue: 0.0001,
            min_magnitude: 0.0,
            ..Options::default()
        };
        assert_eq!(indices(&change_points(&s, &opts)), [10]);
    }

    #[test]
    fn shifts_of_three_deviations_are_found_where_they_are() {
        let opts = Options::default();
        let (mut hits, mut missed, mut false_alarms, mut series_n) = (0, 0, 0, 0);
        for seed in 0..60u64 {
            let len = [20, 50, 100, 200][seed as usize % 4];
            let noise = [0.01, 0.02, 0.05][seed as usize % 3];
            // One to three shifts of 3 to 4 noise deviations, up or down,
            // at least 8 points apart.
            let count = 1 + seed as usize % 3;
            let count = count.min(len / 10);
            let mut shifts = Vec::new();
            for k in 0..count {
                let at = (k + 1) * len / (count + 1);
                let size = (3.0 + (seed % 5) as f64 * 0.25) * noise;
                let sign = if (seed + k as u64) % 2 == 0 {
                    1.0
                } else {
                    -1.0
                };
                shifts.push((at, sign * size.max(0.05)));
            }
            let s = series(seed, len, noise, &shifts);
            let found = indices(&change_points(&s, &opts));
            series_n += 1;
            for &(at, _) in &shifts {
                if found.iter().any(|&f| f.abs_diff(at) <= 1) {
                    hits += 1;
                } else {
                    missed += 1;
                }
            }
            false_alarms += found
                .iter()
                .filter(|&&f| !shifts.iter().any(|&(at, _)| f.abs_diff(at) <= 1))
                .count();
        }
        let recall = hits as f64 / (hits + missed) as f64;
        let precision = hits as f64 / (hits + false_alarms) as f64;
        assert!(
            recall >= 0.9 && precision >= 0.9,
            "recall {recall:.2}, precision {precision:.2} over {series_n} series"
        );
    }

    #[test]
    fn pure_noise_rarely_shows_a_change() {
        let opts = Options::default();
        let alarmed = (0..200u64)
            .filter(|&seed| {
                let noise = [0.01, 0.02, 0.03, 0.05][seed as usize % 4];
                !change_points(&series(1000 + seed, 50, noise, &[]), &opts).is_empty()
            })
            .count();
        assert!(alarmed <= 10, "{alarmed} of 200 noise series alarmed");
    }

    #[test]
    fn a_point_added_at_the_end_moves_no_earlier_change_point() {
        let opts = Options::default();
        for seed in 0..20u64 {
            let full = series(seed, 120, 0.02, &[(30, 0.1), (80, -0.1)]);
            let before = indices(&change_points(&full[..100], &opts));
            let after = indices(&change_points(&full[..101], &opts));
            let old: Vec<usize> = after.iter().copied().filter(|&i| i < 100 - 50).collect();
            let was: Vec<usize> = before.iter().copied().filter(|&i| i < 100 - 50).collect();
            assert_eq!(old, was, "seed {seed}: {before:?} then {after:?}");
        }
    }

    /// A slow drift is no step: the level moves `total` over `from..to`
    /// in equal small steps, each below the noise. What may be asked of
    /// change points on it: that they say the drift happened (it adds up
    /// to 7 to 15 noise deviations), within it (give or take the few
    /// points its start and end blur into the noise), and which way; and
    /// that the noise around it alarms no more often than noise alone.
    #[test]
    fn a_slow_drift_is_found_within_it_and_in_its_direction() {
        let opts = Options::default();
        const BLUR: usize = 8;
        let (mut astray, mut series_n) = (0, 0);
        for seed in 0..60u64 {
            let noise = [0.01, 0.02][seed as usize % 2];
            let len = [100, 150, 200][seed as usize % 3];
            let (from, to) = (len / 3, len / 3 + len / 4);
            let total: f64 = if seed % 4 < 2 { -0.15 } else { 0.15 };
            let step = (1.0 + total).powf(1.0 / (to - from) as f64) - 1.0;
            assert!(step.abs() < noise, "each step is below the noise");
            let drift: Vec<(usize, f64)> = (from..to).map(|at| (at, step)).collect();
            let s = series(5000 + seed, len, noise, &drift);
            let cps = change_points(&s, &opts);
            series_n += 1;
            let within = |c: &&ChangePoint| c.index + BLUR >= from && c.index <= to + BLUR;
            let inside: Vec<&ChangePoint> = cps.iter().filter(within).collect();
            assert!(
                !inside.is_empty(),
                "seed {seed}: the drift {from}..{to} went unseen: {:?}",
                indices(&cps)
            );
            for c in inside {
                assert_eq!(
                    c.forward_change() > 0.0,
                    total > 0.0,
                    "seed {seed}: {c:?} within a drift of {total:+}"
                );
            }
            if cps.len() > cps.iter().filter(within).count() {
                astray += 1;
            }
        }
        // The flat parts hold 75% of 100 to 200 points: as noise alone
        // would, a few of them show a change.
        assert!(
            astray * 10 <= series_n,
            "{astray} of {series_n} series alarmed outside the drift"
        );
    }

    /// A real series (throughput of one commit per point, a store's
    /// CI run) whose first point after a 10% drop is an outlier further
    /// down: the split cuts around the outlier on both sides, and judging
    /// those cuts against the one or two points between them would drop
    /// every one of them.
    #[test]
    fn an_outlier_at_a_step_leaves_the_step_found() {
        let s = [
            993.15, 994.58, 992.91, 992.40, 994.00, 998.21, 992.93, 991.65, 991.72, 993.25, 987.06,
            983.74, 826.34, 871.28, 875.68, 882.94, 875.53, 889.90, 894.63, 894.08, 893.73, 892.63,
            894.05, 892.77,
        ];
        let cps = change_points(&s, &Options::default());
        let found = indices(&cps);
        assert!(
            found.iter().any(|&i| i.abs_diff(12) <= 1),
            "the drop at 12 went unseen: {found:?}"
        );
        let step = cps.iter().find(|c| c.index.abs_diff(12) <= 1).unwrap();
        assert!(step.forward_change() < -0.08, "{step:?}");
        // What Otava makes of it: every cut dropped.
        let otava = Options {
            as_otava: true,
            ..Options::default()
        };
        assert!(change_points(&s, &otava).is_empty());
    }

    /// A first point well below the rest (a run on a cold machine) is no
    /// regime of its own; the step after it is found.
    #[test]
    fn an_outlier_first_point_is_no_change() {
        for seed in 0..20u64 {
            let mut s = series(seed, 16, 0.004, &[(8, -0.1)]);
            s[0] *= 0.97;
            let found = indices(&change_points(&s, &Options::default()));
            assert_eq!(found, [8], "seed {seed}");
        }
    }

    /// Each change point kept is judged, and reported, against the
    /// points up to its neighbours, whatever the merge removed next to it.
    #[test]
    fn every_change_is_judged_between_its_neighbours() {
        let opts = Options::default();
        let mut judged = 0;
        for seed in 0..40u64 {
            let len = [30, 60, 120][seed as usize % 3];
            let mut s = series(seed, len, 0.02, &[(len / 3, -0.1), (len * 2 / 3, 0.08)]);
            // Outliers beside the steps: cuts the merge removes again.
            s[len / 3] *= 0.9;
            s[len * 2 / 3 - 1] *= 0.92;
            let cps = change_points(&s, &opts);
            for (i, c) in cps.iter().enumerate() {
                let from = if i == 0 { 0 } else { cps[i - 1].index };
                let to = cps.get(i + 1).map_or(len, |n| n.index);
                assert_eq!(
                    (c.before.n, c.after.n),
                    (c.index - from, to - c.index),
                    "seed {seed}: {:?}",
                    indices(&cps)
                );
                let want = ChangePoint::between(c.index, &s[from..c.index], &s[c.index..to]);
                assert_eq!(*c, want, "seed {seed}");
                judged += 1;
            }
        }
        assert!(judged >= 60, "{judged} change points judged");
    }

    #[test]
    fn a_change_says_its_regimes_and_direction() {
        let s: Vec<f64> = (0..40)
            .map(|i| if i < 20 { 100.0 } else { 90.0 } + (i % 3) as f64 * 0.1)
            .collect();
        let cps = change_points(&s, &Options::default());
        assert_eq!(indices(&cps), [20]);
        let c = cps[0];
        assert_eq!((c.before.n, c.after.n), (20, 20));
        assert!((c.forward_change() + 0.1).abs() < 0.002, "{c:?}");
        assert!(c.p < 1e-10, "{c:?}");
    }
}
