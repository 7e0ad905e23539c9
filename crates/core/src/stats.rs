//! Statistics for judging whether two runs differ: means with standard
//! errors that survive autocorrelation (batch means), Welch's t-test on
//! them (with Student's t distribution computed here, so no numerics crate
//! is needed), and confidence intervals for percentiles from a bootstrap
//! over a run's intervals.
//!
//! Why batch means: the operations of one run are not independent (a slow
//! second slows every operation in it), so the textbook `s / sqrt(n)` over
//! individual operations is far too small and every difference looks
//! significant. Treating each interval's mean as one observation (a batch)
//! and computing the standard error over batches accounts for correlation
//! within an interval; merging neighbouring batches while the batch means
//! are still correlated with each other accounts for slower drifts.
//!
//! Why a bootstrap over intervals: the order-statistic interval of
//! [`crate::histograms::percentile_ci`] assumes independent samples. Drawing
//! whole intervals with replacement keeps whatever correlation lives inside
//! an interval, so the spread of the re-sampled percentile is honest about
//! stalls that hit many operations at once.

use hdrhistogram::Histogram;
use rand_core::{RngCore, SeedableRng};
use serde::Serialize;

/// A mean with its standard error: what Welch's test compares.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MeanEstimate {
    pub mean: f64,
    pub std_error: f64,
    /// Degrees of freedom of the standard error (batches - 1).
    pub df: f64,
    /// Batches the standard error was computed over.
    pub batches: usize,
    /// Consecutive input batches (intervals) merged into each batch.
    pub batch_size: usize,
    /// Lag-1 autocorrelation left between the batch means; when positive
    /// the standard error was inflated for it (see [`batch_means`]).
    pub lag1: f64,
}

impl MeanEstimate {
    /// How much the variance of a mean over the batches exceeds that over
    /// as many independent ones, for an AR(1) process with the lag-1
    /// autocorrelation left among them: `(1 + r) / (1 - r)`.
    pub fn variance_factor(&self) -> f64 {
        (1.0 + self.lag1) / (1.0 - self.lag1)
    }

    /// The textbook estimate from independent samples: mean, `s / sqrt(n)`,
    /// `n - 1` degrees of freedom. `None` for fewer than two samples.
    pub fn from_samples(samples: &[f64]) -> Option<MeanEstimate> {
        let weighted: Vec<(f64, f64)> = samples.iter().map(|&x| (x, 1.0)).collect();
        weighted_mean(&weighted, 1)
    }
}

/// The mean of `(value, weight)` batches and its standard error, without
/// merging: the ratio estimator `sum(w x) / sum(w)` with variance
/// `b / (b - 1) * sum(w^2 (x - mean)^2) / sum(w)^2`, which for equal
/// weights is the familiar `s^2 / b`. Batches of weight 0 carry nothing and
/// are dropped. `None` for fewer than two batches.
fn weighted_mean(batches: &[(f64, f64)], batch_size: usize) -> Option<MeanEstimate> {
    let kept: Vec<(f64, f64)> = batches
        .iter()
        .copied()
        .filter(|&(x, w)| w > 0.0 && x.is_finite() && w.is_finite())
        .collect();
    let b = kept.len();
    if b < 2 {
        return None;
    }
    let total: f64 = kept.iter().map(|&(_, w)| w).sum();
    let mean = kept.iter().map(|&(x, w)| x * w).sum::<f64>() / total;
    let ss: f64 = kept
        .iter()
        .map(|&(x, w)| (w * (x - mean)).powi(2))
        .sum::<f64>();
    let var = (b as f64 / (b as f64 - 1.0)) * ss / (total * total);
    Some(MeanEstimate {
        mean,
        std_error: var.max(0.0).sqrt(),
        df: b as f64 - 1.0,
        batches: b,
        batch_size,
        lag1: 0.0,
    })
}

/// Lag-1 autocorrelation of a series (0 for a constant series).
pub fn lag1_autocorrelation(xs: &[f64]) -> f64 {
    if xs.len() < 3 {
        return 0.0;
    }
    let m = xs.iter().sum::<f64>() / xs.len() as f64;
    let den: f64 = xs.iter().map(|x| (x - m).powi(2)).sum();
    if den == 0.0 {
        return 0.0;
    }
    let num: f64 = xs.windows(2).map(|w| (w[0] - m) * (w[1] - m)).sum();
    num / den
}

/// Batch means over a time series of `(batch mean, weight)` pairs (one per
/// interval; the weight is what the mean is over: operations for a latency,
/// seconds for a rate). While the batch means are still positively
/// correlated with their neighbours (lag-1 autocorrelation above the 5%
/// one-sided bound `1.645 / sqrt(b)`) and at least `2 * min_batches`
/// batches remain, neighbours are merged pairwise, so the batches that are
/// left are close to independent.
///
/// A short run cannot be merged that far: whatever positive lag-1
/// autocorrelation `r` is left among its batches is accounted for as an
/// AR(1) process would be, by multiplying the variance by `(1 + r) / (1 -
/// r)` and counting only `b (1 - r) / (1 + r)` effective batches for the
/// degrees of freedom. `None` for fewer than two batches.
pub fn batch_means(series: &[(f64, f64)], min_batches: usize) -> Option<MeanEstimate> {
    let mut batches: Vec<(f64, f64)> = series
        .iter()
        .copied()
        .filter(|&(x, w)| w > 0.0 && x.is_finite() && w.is_finite())
        .collect();
    let mut size = 1;
    loop {
        let b = batches.len();
        if b < 2 * min_batches.max(2) {
            break;
        }
        let means: Vec<f64> = batches.iter().map(|&(x, _)| x).collect();
        if lag1_autocorrelation(&means) <= 1.645 / (b as f64).sqrt() {
            break;
        }
        batches = batches
            .chunks(2)
            .map(|c| {
                let w: f64 = c.iter().map(|&(_, w)| w).sum();
                (c.iter().map(|&(x, w)| x * w).sum::<f64>() / w, w)
            })
            .collect();
        size *= 2;
    }
    let mut e = weighted_mean(&batches, size)?;
    let means: Vec<f64> = batches.iter().map(|&(x, _)| x).collect();
    e.lag1 = lag1_autocorrelation(&means).clamp(0.0, 0.9);
    if e.lag1 > 0.0 {
        let factor = e.variance_factor();
        e.std_error *= factor.sqrt();
        e.df = (e.batches as f64 / factor - 1.0).max(1.0);
    }
    Some(e)
}

/// The outcome of Welch's unequal-variances t-test.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct WelchTest {
    /// `(mean_b - mean_a) / sqrt(se_a^2 + se_b^2)`.
    pub t: f64,
    /// Welch-Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

/// Welch's t-test of `b` against `a` from their means and standard errors.
/// With both standard errors zero the test is decided by the means alone
/// (p = 1 when equal, 0 when not).
pub fn welch(a: &MeanEstimate, b: &MeanEstimate) -> WelchTest {
    let (va, vb) = (a.std_error.powi(2), b.std_error.powi(2));
    let se = (va + vb).sqrt();
    let diff = b.mean - a.mean;
    if se == 0.0 {
        let same = diff == 0.0;
        return WelchTest {
            t: if same {
                0.0
            } else {
                diff.signum() * f64::INFINITY
            },
            df: a.df + b.df,
            p: if same { 1.0 } else { 0.0 },
        };
    }
    let t = diff / se;
    let mut den = 0.0;
    if va > 0.0 {
        den += va * va / a.df;
    }
    if vb > 0.0 {
        den += vb * vb / b.df;
    }
    let df = (va + vb).powi(2) / den;
    WelchTest {
        t,
        df,
        p: student_t_two_sided_p(t, df),
    }
}

/// `P(|T| >= |t|)` for Student's t with `df` degrees of freedom.
pub fn student_t_two_sided_p(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if t.is_infinite() {
        return 0.0;
    }
    let x = df / (df + t * t);
    regularized_incomplete_beta(x, df / 2.0, 0.5).clamp(0.0, 1.0)
}

/// The `p` quantile (0 < p < 1) of Student's t with `df` degrees of
/// freedom, by bisection on the distribution function.
pub fn student_t_quantile(p: f64, df: f64) -> f64 {
    if !(p > 0.0 && p < 1.0) || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if p == 0.5 {
        return 0.0;
    }
    // The upper tail probability of a positive t is half the two-sided p.
    let tail = if p > 0.5 { 1.0 - p } else { p };
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while student_t_two_sided_p(hi, df) / 2.0 > tail {
        hi *= 2.0;
        if hi > 1e12 {
            break;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if student_t_two_sided_p(mid, df) / 2.0 > tail {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let q = 0.5 * (lo + hi);
    if p > 0.5 {
        q
    } else {
        -q
    }
}

/// `ln Γ(x)` for x > 0 (Lanczos approximation, g = 7, 9 terms; about 15
/// significant digits).
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 - x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The regularized incomplete beta function `I_x(a, b)`, by its continued
/// fraction (modified Lentz), using the symmetry `I_x(a,b) = 1 -
/// I_{1-x}(b,a)` where the fraction converges slowly.
pub fn regularized_incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_fraction(x, a, b) / a
    } else {
        1.0 - ln_front.exp() * beta_fraction(1.0 - x, b, a) / b
    }
}

fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    const EPS: f64 = 1e-15;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=1000 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let delta = d * c;
        h *= delta;
        if (delta - 1.0).abs() < EPS {
            break;
        }
    }
    h
}

/// The cumulative count at which quantile `q` of `total` values is read,
/// with HdrHistogram's rule (`ceil(q * total)`, at least 1), so that a
/// bootstrap replicate agrees with `Histogram::value_at_quantile`.
fn rank(q: f64, total: u64) -> u64 {
    ((q.clamp(0.0, 1.0) * total as f64).ceil() as u64).max(1)
}

/// 95% confidence intervals of several quantiles (0..1) of the
/// distribution behind `parts` (one histogram per interval of a run), by a
/// bootstrap over intervals: `replicates` times, draw as many intervals as
/// there are with replacement, merge them and read each quantile; the
/// interval is the 2.5th to 97.5th percentile of those readings. Runs of
/// more than `max_blocks` intervals are first cut into `max_blocks` blocks
/// of neighbouring intervals (longer blocks keep longer correlations, and
/// the work stays bounded). The seed makes the result reproducible.
///
/// `None` with fewer than two non-empty parts: a bootstrap over one
/// interval says nothing.
pub fn interval_bootstrap(
    parts: &[&Histogram<u64>],
    quantiles: &[f64],
    replicates: usize,
    max_blocks: usize,
    seed: u64,
) -> Option<Vec<[u64; 2]>> {
    let parts: Vec<&Histogram<u64>> = parts.iter().copied().filter(|h| !h.is_empty()).collect();
    if parts.len() < 2 || replicates == 0 {
        return None;
    }
    // Each part read once as (value, count) pairs; every value any part
    // recorded becomes a dense index.
    let sparse: Vec<Vec<(u64, u64)>> = parts
        .iter()
        .map(|h| {
            h.iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect()
        })
        .collect();
    let mut values: Vec<u64> = sparse.iter().flatten().map(|&(v, _)| v).collect();
    values.sort_unstable();
    values.dedup();
    // Blocks of neighbouring parts, each as sparse (index, count) pairs.
    let per_block = parts.len().div_ceil(max_blocks.max(2));
    let blocks: Vec<Vec<(usize, u64)>> = sparse
        .chunks(per_block)
        .map(|chunk| {
            let mut merged = std::collections::BTreeMap::new();
            for &(v, n) in chunk.iter().flatten() {
                let i = values.binary_search(&v).expect("value collected above");
                *merged.entry(i).or_insert(0u64) += n;
            }
            merged.into_iter().collect()
        })
        .collect();
    if blocks.len() < 2 {
        return None;
    }
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut counts = vec![0u64; values.len()];
    let mut readings: Vec<Vec<u64>> = vec![Vec::with_capacity(replicates); quantiles.len()];
    // The quantiles in ascending order, so one walk reads them all.
    let mut order: Vec<usize> = (0..quantiles.len()).collect();
    order.sort_by(|&i, &j| quantiles[i].total_cmp(&quantiles[j]));
    for _ in 0..replicates {
        counts.iter_mut().for_each(|c| *c = 0);
        let mut total = 0u64;
        for _ in 0..blocks.len() {
            let pick = (rng.next_u64() % blocks.len() as u64) as usize;
            for &(i, n) in &blocks[pick] {
                counts[i] += n;
                total += n;
            }
        }
        let mut next = order.iter().peekable();
        let mut seen = 0;
        for (&v, &n) in values.iter().zip(&counts) {
            seen += n;
            while let Some(&&q) = next.peek() {
                if seen < rank(quantiles[q], total) {
                    break;
                }
                readings[q].push(v);
                next.next();
            }
        }
    }
    Some(
        readings
            .into_iter()
            .map(|mut r| {
                r.sort_unstable();
                let at = |p: f64| r[((p * (r.len() - 1) as f64).round() as usize).min(r.len() - 1)];
                [at(0.025), at(0.975)]
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::histograms::new_histogram;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn gamma_and_beta_match_known_values() {
        // Γ(5) = 24, Γ(1/2) = sqrt(π).
        assert!(close(ln_gamma(5.0), 24f64.ln(), 1e-12));
        assert!(close(
            ln_gamma(0.5),
            std::f64::consts::PI.sqrt().ln(),
            1e-12
        ));
        assert!(close(ln_gamma(0.1), 2.252_712_651_734_206, 1e-10));
        // I_x(1, 1) = x; I_x(a, 1) = x^a.
        assert!(close(
            regularized_incomplete_beta(0.3, 1.0, 1.0),
            0.3,
            1e-12
        ));
        assert!(close(
            regularized_incomplete_beta(0.6, 3.0, 1.0),
            0.216,
            1e-12
        ));
    }

    /// Critical values from any Student's t table.
    #[test]
    fn student_t_matches_the_tables() {
        for (df, t975, t995) in [
            (1.0, 12.706, 63.657),
            (2.0, 4.303, 9.925),
            (5.0, 2.571, 4.032),
            (10.0, 2.228, 3.169),
            (20.0, 2.086, 2.845),
            (30.0, 2.042, 2.750),
            (120.0, 1.980, 2.617),
        ] {
            assert!(
                close(student_t_quantile(0.975, df), t975, 5e-4),
                "t(0.975, {df}) = {}",
                student_t_quantile(0.975, df)
            );
            assert!(close(student_t_quantile(0.995, df), t995, 5e-4));
            assert!(close(student_t_two_sided_p(t975, df), 0.05, 2e-4));
            assert!(close(student_t_two_sided_p(t995, df), 0.01, 1e-4));
            assert!(close(student_t_quantile(0.025, df), -t975, 5e-4));
        }
        // With infinitely many degrees of freedom t is normal.
        assert!(close(student_t_two_sided_p(1.959_964, 1e7), 0.05, 1e-5));
        assert_eq!(student_t_two_sided_p(0.0, 7.0), 1.0);
    }

    /// The three worked examples of Welch's t-test on Wikipedia (equal
    /// sizes and variances; unequal sizes; unequal sizes and variances).
    #[test]
    fn welch_matches_the_worked_examples() {
        /// Samples A1 and A2, then t, degrees of freedom and p.
        type Example<'a> = (&'a [f64], &'a [f64], f64, f64, f64);
        let cases: [Example; 3] = [
            (
                &[
                    27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0,
                    21.7, 21.4,
                ],
                &[
                    27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9,
                    20.5, 24.4,
                ],
                -2.46,
                24.99,
                0.021,
            ),
            (
                &[17.2, 20.9, 22.6, 18.1, 21.7, 21.4, 23.5, 24.2, 14.7, 21.8],
                &[
                    21.5, 22.8, 21.0, 23.0, 21.6, 23.6, 22.5, 20.7, 23.4, 21.8, 20.7, 21.7, 21.5,
                    22.5, 23.6, 21.5, 22.5, 23.5, 21.5, 21.8,
                ],
                -1.57,
                9.91,
                0.149,
            ),
            (
                &[19.8, 20.4, 19.6, 17.8, 18.5, 18.9, 18.3, 18.9, 19.5, 22.0],
                &[
                    28.2, 26.6, 20.1, 23.3, 25.2, 22.1, 17.7, 27.6, 20.6, 13.7, 23.2, 17.5, 20.6,
                    18.0, 23.9, 21.6, 24.3, 20.4, 24.0, 13.2,
                ],
                -2.22,
                24.50,
                0.036,
            ),
        ];
        for (i, (a, b, t, df, p)) in cases.into_iter().enumerate() {
            let ea = MeanEstimate::from_samples(a).unwrap();
            let eb = MeanEstimate::from_samples(b).unwrap();
            // The examples compute A1 - A2; welch() is b - a.
            let w = welch(&eb, &ea);
            assert!(close(w.t, t, 0.005), "example {}: t {}", i + 1, w.t);
            assert!(close(w.df, df, 0.01), "example {}: df {}", i + 1, w.df);
            assert!(close(w.p, p, 0.0005), "example {}: p {}", i + 1, w.p);
        }
    }

    #[test]
    fn batch_means_of_equal_batches_is_the_textbook_standard_error() {
        let e = batch_means(
            // Shuffled so that neighbours are not correlated.
            &[(1.0, 4.0), (5.0, 4.0), (2.0, 4.0), (4.0, 4.0), (3.0, 4.0)],
            10,
        )
        .unwrap();
        assert_eq!(e.mean, 3.0);
        // s^2 = 2.5 over 5 batches.
        assert!(close(e.std_error, (2.5f64 / 5.0).sqrt(), 1e-12));
        assert_eq!((e.df, e.batches, e.batch_size), (4.0, 5, 1));
        // A steady rise is correlated with itself: more uncertain than the
        // independent batches the textbook formula assumes.
        let rising: Vec<(f64, f64)> = (0..12).map(|i| (i as f64, 1.0)).collect();
        let r = batch_means(&rising, 10).unwrap();
        let plain = weighted_mean(&rising, 1).unwrap();
        assert!(r.lag1 > 0.5 && r.std_error > 2.0 * plain.std_error, "{r:?}");
        assert!(r.df < plain.df);
        // Weights: a batch of twice the operations counts twice.
        let w = batch_means(&[(1.0, 1.0), (4.0, 2.0)], 10).unwrap();
        assert_eq!(w.mean, 3.0);
        // Empty batches carry nothing; one batch is not enough.
        assert!(batch_means(&[(1.0, 1.0), (9.0, 0.0)], 10).is_none());
        assert_eq!(welch(&e, &e).p, 1.0);
    }

    /// An AR(1) series with phi = 0.9 observed in short batches: the
    /// batch means are correlated, so a standard error over them is too
    /// small; merging neighbours must bring it to the true standard error
    /// of the mean, `sigma / (1 - phi) / sqrt(n)` for large n.
    #[test]
    fn batch_means_merge_correlated_batches() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        let normal = |rng: &mut rand_xoshiro::Xoshiro256PlusPlus| {
            // Box-Muller.
            let u1 = ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            let u2 = ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
        };
        let phi = 0.9;
        let reps = 200;
        let (n, batch) = (40_000, 20);
        let truth = 1.0 / (1.0 - phi) / (n as f64).sqrt();
        let (mut merged_ratio, mut naive_ratio) = (0.0, 0.0);
        for _ in 0..reps {
            let mut x = 0.0;
            let mut series = Vec::new();
            let mut sum = 0.0;
            for i in 0..n {
                x = phi * x + normal(&mut rng);
                sum += x;
                if (i + 1) % batch == 0 {
                    series.push((sum / batch as f64, batch as f64));
                    sum = 0.0;
                }
            }
            let naive = weighted_mean(&series, 1).unwrap();
            let merged = batch_means(&series, 10).unwrap();
            assert!(merged.batch_size > 1, "correlated batches were merged");
            naive_ratio += naive.std_error / truth / reps as f64;
            merged_ratio += merged.std_error / truth / reps as f64;
        }
        assert!(naive_ratio < 0.85, "naive {naive_ratio}");
        assert!((0.85..1.1).contains(&merged_ratio), "merged {merged_ratio}");
    }

    /// Over many runs from one distribution, a bootstrap interval over 30
    /// intervals must cover the true p99 about 95% of the time.
    #[test]
    fn interval_bootstrap_covers_the_true_percentile() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(11);
        let mean = 1_000_000.0;
        let truth = (100.0f64).ln() * mean;
        let reps = 100;
        let mut covered = 0;
        for r in 0..reps {
            let parts: Vec<Histogram<u64>> = (0..30)
                .map(|_| {
                    let mut h = new_histogram();
                    for _ in 0..500 {
                        let u = ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
                        h.record((-(u.ln()) * mean) as u64 + 1).unwrap();
                    }
                    h
                })
                .collect();
            let refs: Vec<&Histogram<u64>> = parts.iter().collect();
            let ci = interval_bootstrap(&refs, &[0.5, 0.99], 400, 100, r).unwrap();
            if ci[1][0] as f64 <= truth * 1.001 && ci[1][1] as f64 >= truth * 0.999 {
                covered += 1;
            }
            assert!(ci[0][0] <= ci[0][1] && ci[0][1] < ci[1][0]);
        }
        // Binomial(100, 0.95): sd 2.2; the percentile bootstrap runs a
        // little narrow at 30 blocks, so allow from 85%.
        assert!((85..=100).contains(&covered), "covered {covered} of {reps}");
    }

    #[test]
    fn bootstrap_quantiles_agree_with_the_histogram() {
        let mut a = new_histogram();
        let mut b = new_histogram();
        for v in 1..=1000u64 {
            a.record(v * 1000).unwrap();
            b.record(v * 1000).unwrap();
        }
        let mut all = a.clone();
        all.add(&b).unwrap();
        let qs = [0.0, 0.1, 0.5, 0.99, 0.999, 1.0];
        // Identical intervals: every replicate reads what the merged
        // histogram reads.
        let ci = interval_bootstrap(&[&a, &b], &qs, 50, 100, 1).unwrap();
        for (q, [lo, hi]) in qs.iter().zip(ci) {
            let expected = if *q == 0.0 {
                all.highest_equivalent(all.value_at_quantile(*q))
            } else {
                all.value_at_quantile(*q)
            };
            assert_eq!((lo, hi), (expected, expected), "q {q}");
        }
        assert!(interval_bootstrap(&[&a], &[0.5], 50, 100, 1).is_none());
    }
}
