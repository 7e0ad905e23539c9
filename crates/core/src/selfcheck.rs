//! Checks of the load a run actually offered, so a result produced by a
//! client that did not keep its schedule is flagged rather than trusted.
//!
//! For Poisson arrivals, the number of operations *sent* in equal time bins
//! must look Poisson: variance equal to the mean. The dispersion statistic
//! `D = sum (c - mean)^2 / mean` over k bins is chi-square with k-1 degrees
//! of freedom under that hypothesis. Sends paced by a saturated database
//! (every connection busy, the next operation leaves when one returns) are
//! far more regular than Poisson; a client that stalls sends in bursts. Both
//! fail the test. Counts are taken per runtime thread and summed, because
//! each thread sends every T-th arrival and only the union is Poisson.

use serde::Serialize;

/// Below this share of the target, the database did not keep up.
pub const BELOW_TARGET: f64 = 0.95;
/// Sends later than this at p99 (with connections free) mean the client
/// could not keep its schedule.
pub const LATE_SEND_MS: f64 = 1.0;

/// Whether the load a run offered was the load intended (open loop).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SelfCheck {
    /// Completed over offered operations; below 0.95 the database fell behind.
    pub served_fraction: f64,
    pub scheduling_lag_p99_us: f64,
    /// Poisson dispersion test of the send times (Poisson arrivals only).
    pub arrivals: Option<ArrivalCheck>,
    pub passed: bool,
}

impl SelfCheck {
    /// The check from its figures: it passes when the database kept up,
    /// the client sent on time and the sends looked Poisson.
    pub fn new(served_fraction: f64, lag_p99_us: f64, arrivals: Option<ArrivalCheck>) -> SelfCheck {
        SelfCheck {
            passed: served_fraction >= BELOW_TARGET
                && lag_p99_us <= LATE_SEND_MS * 1e3
                && arrivals.as_ref().is_none_or(|a| a.passed),
            served_fraction,
            scheduling_lag_p99_us: lag_p99_us,
            arrivals,
        }
    }
}

/// Send counts in fixed time bins from the run's start.
#[derive(Clone, Debug)]
pub struct StartBins {
    bin_ns: u64,
    counts: Vec<u32>,
}

/// At most this many bins are kept (16 MB per thread at u32).
const MAX_BINS: usize = 4 << 20;

impl StartBins {
    /// Bins wide enough that each expects about 50 sends at `rate`, and at
    /// least a millisecond; enough of them for `span_s` seconds.
    pub fn for_rate(rate: f64, span_s: f64) -> StartBins {
        let bin_ns = ((50.0 / rate) * 1e9).max(1e6) as u64;
        let n = ((span_s * 1e9 / bin_ns as f64).ceil() as usize + 1).min(MAX_BINS);
        StartBins {
            bin_ns,
            counts: vec![0; n],
        }
    }

    pub fn bin_ns(&self) -> u64 {
        self.bin_ns
    }

    /// Count a send `offset_ns` after the start. Past the last bin, nothing.
    #[inline]
    pub fn record(&mut self, offset_ns: u64) {
        if let Some(c) = self.counts.get_mut((offset_ns / self.bin_ns) as usize) {
            *c += 1;
        }
    }

    /// Add another thread's counts (same width).
    pub fn add(&mut self, other: &StartBins) {
        if other.counts.len() > self.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
    }

    /// The dispersion test over the complete bins before `span_ns`.
    pub fn check(&self, span_ns: u64) -> Option<ArrivalCheck> {
        let k = ((span_ns / self.bin_ns) as usize).min(self.counts.len());
        poisson_dispersion(&self.counts[..k], self.bin_ns)
    }
}

/// The outcome of the dispersion test.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ArrivalCheck {
    pub bins: usize,
    pub bin_ms: f64,
    /// Mean sends per bin.
    pub mean: f64,
    /// Variance over mean: 1 for Poisson, below for paced, above for bursty.
    pub dispersion: f64,
    /// The statistic as a standard normal deviate (Wilson-Hilferty).
    pub z: f64,
    /// |z| below 3.29: a Poisson process fails this one time in a thousand.
    pub passed: bool,
}

/// Two-sided 0.1% critical value of the standard normal.
const Z_CRITICAL: f64 = 3.29;

/// The dispersion test on send counts per bin; `None` with fewer than 20
/// bins or too few sends per bin for the chi-square approximation.
pub fn poisson_dispersion(counts: &[u32], bin_ns: u64) -> Option<ArrivalCheck> {
    let k = counts.len();
    if k < 20 {
        return None;
    }
    let mean = counts.iter().map(|&c| c as f64).sum::<f64>() / k as f64;
    if mean < 5.0 {
        return None;
    }
    let d: f64 = counts
        .iter()
        .map(|&c| (c as f64 - mean).powi(2) / mean)
        .sum();
    let df = (k - 1) as f64;
    // Wilson-Hilferty: (D/df)^(1/3) is nearly normal with mean 1 - 2/(9 df)
    // and variance 2/(9 df).
    let v = 2.0 / (9.0 * df);
    let z = ((d / df).cbrt() - (1.0 - v)) / v.sqrt();
    Some(ArrivalCheck {
        bins: k,
        bin_ms: bin_ns as f64 / 1e6,
        mean,
        dispersion: d / df,
        z,
        passed: z.abs() < Z_CRITICAL,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::{RngCore, SeedableRng};

    fn poisson_counts(seed: u64, lambda: f64, k: usize) -> Vec<u32> {
        // Counts of an exponential-gap process in unit bins.
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut counts = vec![0u32; k];
        let mut t = 0.0;
        loop {
            let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            t += -(1.0 - u).ln() / lambda;
            if t >= k as f64 {
                return counts;
            }
            counts[t as usize] += 1;
        }
    }

    #[test]
    fn poisson_counts_pass_about_999_times_in_1000() {
        let failures = (0..500)
            .filter(|&s| {
                !poisson_dispersion(&poisson_counts(s, 50.0, 400), 1)
                    .unwrap()
                    .passed
            })
            .count();
        // Expect 0.5 failures in 500; 5 would be a 1-in-10^5 fluke.
        assert!(failures < 5, "{failures} of 500 Poisson samples failed");
    }

    #[test]
    fn paced_and_bursty_sends_fail() {
        // Paced: a saturated database lets one operation leave per
        // completion, so counts barely vary.
        let paced: Vec<u32> = (0..400).map(|i| 50 + (i % 2)).collect();
        let c = poisson_dispersion(&paced, 1).unwrap();
        assert!(!c.passed && c.dispersion < 0.1, "{c:?}");
        // Bursty: a client that stalls every tenth bin and catches up.
        let bursty: Vec<u32> = poisson_counts(3, 50.0, 400)
            .chunks(10)
            .flat_map(|ch| {
                let mut v = ch.to_vec();
                v[1] += v[0];
                v[0] = 0;
                v
            })
            .collect();
        let c = poisson_dispersion(&bursty, 1).unwrap();
        assert!(!c.passed && c.dispersion > 1.5, "{c:?}");
    }

    #[test]
    fn bins_sum_across_threads_and_skip_incomplete_ones() {
        let mut a = StartBins::for_rate(1000.0, 1.0);
        assert_eq!(a.bin_ns(), 50_000_000);
        let mut b = a.clone();
        for i in 0..1000u64 {
            a.record(i * 1_000_000);
            b.record(i * 1_000_000 + 500_000);
        }
        a.add(&b);
        assert_eq!(a.counts[..20].iter().sum::<u32>(), 2000);
        assert!(a.counts.iter().all(|&c| c == 100 || c == 0));
        // 20 bins of uniform sends: far too regular for Poisson.
        let c = a.check(1_000_000_000).unwrap();
        assert_eq!(c.bins, 20);
        assert!(!c.passed);
        assert!(a.check(500_000_000).is_none(), "fewer than 20 bins");
    }
}
