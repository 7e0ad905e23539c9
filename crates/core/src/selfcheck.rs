//! Checks of the load a run actually offered, so a result produced by a
//! client that did not keep its schedule is flagged rather than trusted.
//!
//! For Poisson arrivals, the number of operations the client *released* in
//! equal time bins must look Poisson: variance equal to the mean. An
//! operation is released when it is sent, less any wait for a busy
//! connection (that wait is the database's, reported as response time, by
//! the stall warning and by the served fraction, and it must not make the
//! client look bursty). The dispersion statistic `D = sum (c - mean)^2 /
//! mean` over k bins is chi-square with k-1 degrees of freedom under that
//! hypothesis. A client that stalls (its thread held up while connections
//! were free) releases in bursts; one too slow to keep up releases at its
//! own pace, more regular than Poisson. Both fail the test. Counts are
//! taken per runtime thread and summed, because each thread sends every
//! T-th arrival and only the union is Poisson.

use std::collections::VecDeque;

use parking_lot::Mutex;
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

/// Send counts in fixed time bins from the run's start, held by one lane
/// only until the coordinator folds them into the run's [`Dispersion`]:
/// memory stays a tick's worth of bins however long the run.
#[derive(Clone, Debug)]
pub struct StartBins {
    bin_ns: u64,
    /// The bin `counts[0]` counts; everything before it is folded.
    base: u64,
    counts: VecDeque<u32>,
    /// The bin of the latest send seen.
    last: Option<u64>,
}

/// At most this many unfolded bins are kept (a bounded buffer per lane):
/// more would take a tick interval of days at the narrowest bins.
const MAX_BINS: usize = 4 << 20;

/// The narrowest bin. A release the client makes a little late, within
/// what the lag check allows ([`LATE_SEND_MS`]), moves across a bin's edge
/// with a chance of its lateness over the bin's width, and lateness comes
/// in runs (one wake-up releases what fell due while the thread was away).
/// In narrow bins, jitter the lag check accepts raises the dispersion past
/// the test's bound; in bins a hundred times the lag bound it barely moves
/// it, while a client that really stalls still moves whole bins' worth.
/// The width only makes a stall less likely to straddle an edge, not
/// cheaper when it does: one stall of `d` seconds across an edge, at `r`
/// operations per second over a run of `T` seconds, adds about
/// `2 r d^2 / T` to the dispersion, so at high rates a short stall fails
/// the test (a host that takes its CPU away does so, and the run says it).
const MIN_BIN_NS: f64 = 100.0 * LATE_SEND_MS * 1e6;

impl StartBins {
    /// Bins wide enough that each expects about 50 sends at `rate`, and at
    /// least [`MIN_BIN_NS`].
    pub fn for_rate(rate: f64) -> StartBins {
        StartBins {
            bin_ns: ((50.0 / rate) * 1e9).max(MIN_BIN_NS) as u64,
            base: 0,
            counts: VecDeque::new(),
            last: None,
        }
    }

    pub fn bin_ns(&self) -> u64 {
        self.bin_ns
    }

    /// Count a send `offset_ns` after the start. A send in a bin already
    /// folded (its thread was held up between reading the clock and
    /// counting, longer than the fold's margin) is not counted.
    #[inline]
    pub fn record(&mut self, offset_ns: u64) {
        let bin = offset_ns / self.bin_ns;
        self.last = Some(self.last.map_or(bin, |l| l.max(bin)));
        let Some(i) = bin.checked_sub(self.base).map(|i| i as usize) else {
            return;
        };
        if i >= self.counts.len() {
            if i >= MAX_BINS {
                return;
            }
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += 1;
    }

    /// The bin of the latest send, if any.
    pub fn last_bin(&self) -> Option<u64> {
        self.last
    }

    /// Hand the counts of every bin before `end` to `sink(bin, count)`
    /// (empty bins included) and forget them.
    pub fn drain_before(&mut self, end: u64, mut sink: impl FnMut(u64, u32)) {
        while self.base < end {
            sink(self.base, self.counts.pop_front().unwrap_or(0));
            self.base += 1;
        }
    }
}

/// The dispersion test's running sums over the bins folded so far: three
/// numbers, whatever the length of the run. Sums are exact integers, so a
/// week of bins loses no precision.
#[derive(Clone, Debug, Default)]
pub struct Dispersion {
    bins: u64,
    sum: u128,
    sum_sq: u128,
}

impl Dispersion {
    /// Fold one bin's count (summed over every lane).
    pub fn add(&mut self, count: u64) {
        self.bins += 1;
        self.sum += count as u128;
        self.sum_sq += (count as u128) * (count as u128);
    }

    /// The test over the bins folded; `None` with fewer than 20 bins or
    /// too few sends per bin for the chi-square approximation.
    pub fn check(&self, bin_ns: u64) -> Option<ArrivalCheck> {
        let k = self.bins;
        if k < 20 || self.sum < 5 * k as u128 {
            return None;
        }
        let mean = self.sum as f64 / k as f64;
        // sum (c - mean)^2 / mean = (k sum c^2 - (sum c)^2) / sum c, which
        // Cauchy-Schwarz keeps non-negative.
        let d = (k as u128 * self.sum_sq - self.sum * self.sum) as f64 / self.sum as f64;
        let df = (k - 1) as f64;
        // Wilson-Hilferty: (D/df)^(1/3) is nearly normal with mean 1 - 2/(9 df)
        // and variance 2/(9 df).
        let v = 2.0 / (9.0 * df);
        let z = ((d / df).cbrt() - (1.0 - v)) / v.sqrt();
        Some(ArrivalCheck {
            bins: k as usize,
            bin_ms: bin_ns as f64 / 1e6,
            mean,
            dispersion: d / df,
            z,
            passed: z.abs() < Z_CRITICAL || (d / df - 1.0).abs() < MIN_EFFECT,
        })
    }
}

/// The run's Poisson check as it goes: at each tick the coordinator sums
/// the bins every lane is done with and folds the sums, so neither the
/// lanes nor the coordinator keep the run's bins.
#[derive(Debug)]
pub struct Arrivals {
    bin_ns: u64,
    /// Every bin before this one is folded.
    until: u64,
    folded: Dispersion,
}

impl Arrivals {
    pub fn new(bin_ns: u64) -> Arrivals {
        Arrivals {
            bin_ns,
            until: 0,
            folded: Dispersion::default(),
        }
    }

    /// Fold the bins that end by `before_ns` after the start. Only bins
    /// the schedule filled count: none from the latest send on (that bin
    /// may be incomplete; after it the schedule had ended).
    pub fn fold<'a, I>(&mut self, lanes: I, before_ns: u64)
    where
        I: Iterator<Item = &'a Mutex<StartBins>> + Clone,
    {
        let Some(last) = lanes.clone().filter_map(|l| l.lock().last_bin()).max() else {
            return;
        };
        let end = (before_ns / self.bin_ns).min(last);
        if end <= self.until {
            return;
        }
        let until = self.until;
        let mut sums = vec![0u64; (end - until) as usize];
        for lane in lanes {
            lane.lock()
                .drain_before(end, |bin, c| sums[(bin - until) as usize] += c as u64);
        }
        sums.into_iter().for_each(|c| self.folded.add(c));
        self.until = end;
    }

    pub fn check(&self) -> Option<ArrivalCheck> {
        self.folded.check(self.bin_ns)
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
    /// |z| below 3.29 (a Poisson process fails this one time in a
    /// thousand), or a dispersion within 0.1 of 1.
    pub passed: bool,
}

/// Two-sided 0.1% critical value of the standard normal.
const Z_CRITICAL: f64 = 3.29;

/// A departure from Poisson this small passes however significant: over a
/// long run the test finds any departure at all (at 36,000 bins, an hour
/// at 100 ms, a dispersion of 1.03 is z = 4), and one this small is what a
/// client inside the lag bound can cause, not a schedule it failed to keep.
const MIN_EFFECT: f64 = 0.1;

/// The dispersion test on send counts per bin; `None` with fewer than 20
/// bins or too few sends per bin for the chi-square approximation.
pub fn poisson_dispersion(counts: &[u32], bin_ns: u64) -> Option<ArrivalCheck> {
    let mut d = Dispersion::default();
    counts.iter().for_each(|&c| d.add(c as u64));
    d.check(bin_ns)
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
    fn bins_fold_across_lanes_in_slices_as_in_one_go() {
        const BIN: u64 = 100_000_000;
        let lanes: Vec<Mutex<StartBins>> = (0..2)
            .map(|_| Mutex::new(StartBins::for_rate(500.0)))
            .collect();
        assert_eq!(lanes[0].lock().bin_ns(), BIN);
        // Poisson sends dealt alternately to two lanes over four seconds,
        // folded every 300 ms with a 60 ms margin; the last fold comes
        // after a drain in which nothing was sent.
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(9);
        let (mut t, mut sent) = (0u64, 0usize);
        let mut whole = [0u32; 40];
        let mut arrivals = Arrivals::new(BIN);
        let mut tick = 300_000_000u64;
        loop {
            let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            t += (-(1.0 - u).ln() * 1e6) as u64;
            if t >= 4_000_000_000 {
                break;
            }
            if t >= tick {
                arrivals.fold(lanes.iter(), tick - 60_000_000);
                tick += 300_000_000;
            }
            whole[(t / BIN) as usize] += 1;
            lanes[sent % 2].lock().record(t);
            sent += 1;
        }
        assert_eq!(arrivals.until, 38, "folded up to the last tick's margin");
        assert!(
            lanes.iter().all(|l| l.lock().counts.len() <= 3),
            "folded bins are let go"
        );
        arrivals.fold(lanes.iter(), 4_500_000_000);
        let c = arrivals.check().unwrap();
        // The bin of the last send is left out: it may be incomplete.
        assert_eq!(c, poisson_dispersion(&whole[..39], BIN).unwrap());
        assert_eq!((c.mean * 39.0).round() as usize, sent - whole[39] as usize);
        // A send in a bin already folded is counted nowhere.
        let kept = |l: &Mutex<StartBins>| l.lock().counts.iter().sum::<u32>();
        let before = kept(&lanes[0]);
        lanes[0].lock().record(0);
        assert_eq!(kept(&lanes[0]), before);
    }

    /// Over a long run the test finds any departure at all; one within a
    /// tenth of Poisson's variance passes, one beyond it fails.
    #[test]
    fn a_small_departure_passes_however_long_the_run() {
        let spread = |d: u64| {
            let mut s = Dispersion::default();
            (0..40_000).for_each(|i| s.add(if i % 2 == 0 { 1_000 + d } else { 1_000 - d }));
            s.check(1).unwrap()
        };
        let small = spread(33);
        assert!((small.dispersion - 1.089).abs() < 1e-3, "{small:?}");
        assert!(small.z > 10.0 && small.passed, "{small:?}");
        let large = spread(35);
        assert!(large.dispersion > 1.2 && !large.passed, "{large:?}");
    }

    #[test]
    fn uniform_sends_are_too_regular() {
        let mut d = Dispersion::default();
        (0..20).for_each(|_| d.add(100));
        let c = d.check(1).unwrap();
        assert_eq!(c.dispersion, 0.0);
        assert!(!c.passed);
        let mut few = Dispersion::default();
        (0..19).for_each(|_| few.add(100));
        assert!(few.check(1).is_none(), "fewer than 20 bins");
    }
}
