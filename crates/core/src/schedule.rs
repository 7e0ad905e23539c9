//! When operations are meant to start.
//!
//! Under a target rate there is one schedule for the whole run (not one per
//! connection), so `--target 10000` offers 10,000 operations per second in
//! total however many connections serve them. Gaps are exponential (a
//! Poisson process, as pgbench, Noria, Lancet and Treadmill use) or uniform.
//! The schedule is a pure function of its seed: the pacer and the workers
//! each hold a copy and see the same times. A rate profile or a trace
//! ([`Target`]) varies the rate with time through the same stream.

use std::time::Duration;

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;

use crate::rate::Target;

/// How gaps between intended start times are drawn.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Arrival {
    /// Exponential gaps with mean 1/rate.
    Poisson,
    /// Constant gaps of 1/rate.
    Uniform,
}

impl Arrival {
    pub fn name(self) -> &'static str {
        match self {
            Arrival::Poisson => "poisson",
            Arrival::Uniform => "uniform",
        }
    }
}

/// Intended start times, in nanoseconds after the run's start.
#[derive(Clone, Debug)]
pub struct Schedule {
    target: Target,
    arrival: Arrival,
    rng: Xoshiro256PlusPlus,
    /// Where the next arrival is in expected operations from the start
    /// (the time-rescaled clock; see [`crate::rate`]).
    u: f64,
    // f64 nanoseconds stay exact to the nanosecond for 104 days.
    next_ns: Option<f64>,
    /// Index of the next arrival in the whole run's schedule.
    global: u64,
    /// Arrivals this copy steps over per `advance` (the number of threads
    /// the schedule is dealt to).
    stride: u64,
    issued: u64,
    limit: Option<u64>,
    horizon_ns: Option<u64>,
}

impl Schedule {
    /// `rate` operations per second; at most `limit` arrivals, none at or
    /// after `horizon`.
    pub fn new(
        rate: f64,
        arrival: Arrival,
        seed: u64,
        limit: Option<u64>,
        horizon: Option<Duration>,
    ) -> Schedule {
        assert!(
            rate > 0.0 && rate.is_finite(),
            "rate is validated by the plan"
        );
        Schedule::of(&Target::constant(rate), arrival, seed, limit, horizon)
    }

    /// Arrivals following `target` (a constant, a profile or a trace).
    pub fn of(
        target: &Target,
        arrival: Arrival,
        seed: u64,
        limit: Option<u64>,
        horizon: Option<Duration>,
    ) -> Schedule {
        let mut s = Schedule {
            target: target.clone(),
            arrival,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x5c4e_d01e_0000_0001),
            u: 0.0,
            next_ns: None,
            global: 0,
            stride: 1,
            issued: 0,
            limit,
            horizon_ns: horizon.map(|h| h.as_nanos() as u64),
        };
        if arrival == Arrival::Poisson && !target.is_trace() {
            s.u = s.gap();
        }
        s.next_ns = s.target.at(s.u);
        s
    }

    /// The next gap in expected operations: one for uniform arrivals and
    /// for a trace (whose instants are the arrivals), exponential for
    /// Poisson.
    fn gap(&mut self) -> f64 {
        if self.arrival == Arrival::Uniform || self.target.is_trace() {
            return 1.0;
        }
        // 1 - u is in (0, 1], so the logarithm is finite.
        let u = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        -(1.0 - u).ln()
    }

    /// The next intended start, or `None` when the schedule is exhausted.
    #[inline]
    pub fn peek(&self) -> Option<u64> {
        if self.limit.is_some_and(|l| self.global >= l) {
            return None;
        }
        let t = self.next_ns?.round() as u64;
        if self.horizon_ns.is_some_and(|h| t >= h) {
            return None;
        }
        Some(t)
    }

    /// Move past the arrival `peek` returned.
    #[inline]
    pub fn advance(&mut self) {
        self.issued += 1;
        for _ in 0..self.stride {
            self.step();
        }
        // Only the arrivals this copy keeps are mapped to time.
        self.next_ns = self.target.at(self.u);
    }

    fn step(&mut self) {
        self.global += 1;
        self.u += self.gap();
    }

    /// This schedule's share for thread `index` of `of`: arrivals index,
    /// index + of, index + 2*of, ... of the whole run's schedule. The
    /// shares together are exactly the whole schedule.
    pub fn dealt(mut self, index: usize, of: usize) -> Schedule {
        for _ in 0..index {
            self.step();
        }
        self.next_ns = self.target.at(self.u);
        self.stride = of.max(1) as u64;
        self
    }

    /// Arrivals handed out so far.
    pub fn issued(&self) -> u64 {
        self.issued
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(mut s: Schedule) -> Vec<u64> {
        let mut v = Vec::new();
        while let Some(t) = s.peek() {
            v.push(t);
            s.advance();
        }
        v
    }

    #[test]
    fn uniform_gaps_are_exact() {
        let v = times(Schedule::new(1000.0, Arrival::Uniform, 1, Some(5), None));
        assert_eq!(v, vec![0, 1_000_000, 2_000_000, 3_000_000, 4_000_000]);
    }

    #[test]
    fn poisson_gaps_have_the_right_mean_and_spread() {
        let n = 200_000u64;
        let v = times(Schedule::new(10_000.0, Arrival::Poisson, 7, Some(n), None));
        assert_eq!(v.len() as u64, n);
        let gaps: Vec<f64> = v.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        // Exponential: sd = mean; 5 sigma of the sample mean is 5*100us/sqrt(n).
        let tol = 5.0 * 100_000.0 / (gaps.len() as f64).sqrt();
        assert!((mean - 100_000.0).abs() < tol, "mean gap {mean}");
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
        let cv = var.sqrt() / mean;
        assert!((cv - 1.0).abs() < 0.02, "coefficient of variation {cv}");
        // Memorylessness: P(gap > mean) = 1/e.
        let over = gaps.iter().filter(|&&g| g > mean).count() as f64 / gaps.len() as f64;
        assert!((over - (-1.0f64).exp()).abs() < 0.01, "{over}");
    }

    #[test]
    fn horizon_and_limit_end_the_schedule() {
        let v = times(Schedule::new(
            1000.0,
            Arrival::Uniform,
            1,
            None,
            Some(Duration::from_millis(10)),
        ));
        assert_eq!(v.len(), 10);
        // Dealt shares interleave back into the whole schedule.
        let whole = times(Schedule::new(800.0, Arrival::Poisson, 5, Some(101), None));
        let mut parts: Vec<u64> = (0..3)
            .flat_map(|i| {
                times(Schedule::new(800.0, Arrival::Poisson, 5, Some(101), None).dealt(i, 3))
            })
            .collect();
        parts.sort_unstable();
        assert_eq!(parts, whole);
        let same_seed = times(Schedule::new(500.0, Arrival::Poisson, 3, Some(50), None));
        assert_eq!(
            same_seed,
            times(Schedule::new(500.0, Arrival::Poisson, 3, Some(50), None))
        );
        assert_ne!(
            same_seed,
            times(Schedule::new(500.0, Arrival::Poisson, 4, Some(50), None))
        );
    }

    /// Counts per second of a profiled Poisson schedule against the
    /// profile's own expected counts: Pearson's chi-square over 40 bins
    /// stays under its 99.9% point (73.4 for 39 degrees of freedom).
    #[test]
    fn a_profile_is_followed_within_poisson_noise() {
        let t = Target::parse_profile(
            "ramp 1000..5000 in 10s, hold 3000 for 10s, sine 500..4500 period 5s for 10s, \
             burst 200..6000 on 1s off 1s for 10s",
        )
        .unwrap();
        let v = times(Schedule::of(&t, Arrival::Poisson, 11, None, None));
        assert!((v.len() as f64 - t.expected()).abs() < 5.0 * t.expected().sqrt());
        let mut counts = [0f64; 40];
        for &ns in &v {
            counts[(ns / 1_000_000_000) as usize] += 1.0;
        }
        // The expected count of second s: the mean rate over it, from the
        // schedule's own inverse (its time for u expected operations).
        let at = |u: f64| t.at(u).unwrap_or(f64::INFINITY);
        let mut chi2 = 0.0;
        for (s, &got) in counts.iter().enumerate() {
            // Expected arrivals before second s, found by bisection on u.
            let before = |sec: f64| {
                let (mut lo, mut hi) = (0.0, t.expected());
                for _ in 0..100 {
                    let mid = (lo + hi) / 2.0;
                    if at(mid) < sec * 1e9 {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                lo
            };
            let want = before(s as f64 + 1.0) - before(s as f64);
            chi2 += (got - want).powi(2) / want;
        }
        assert!(chi2 < 73.4, "chi-square {chi2}: {counts:?}");
        // The ramp's first second offers about 1,200, its last about 4,800.
        assert!(counts[0] < 1400.0 && counts[9] > 4500.0, "{counts:?}");
        // Seeded: the same stream again; dealt shares rejoin into it.
        assert_eq!(v, times(Schedule::of(&t, Arrival::Poisson, 11, None, None)));
        let mut parts: Vec<u64> = (0..3)
            .flat_map(|i| times(Schedule::of(&t, Arrival::Poisson, 11, None, None).dealt(i, 3)))
            .collect();
        parts.sort_unstable();
        assert_eq!(parts, v);
    }

    #[test]
    fn uniform_arrivals_follow_a_profile_with_gaps_of_one_over_the_rate() {
        let t = Target::parse_profile("hold 100 for 1s, hold 1000 for 1s").unwrap();
        let v = times(Schedule::of(&t, Arrival::Uniform, 1, None, None));
        assert_eq!(v.len(), 1100);
        assert_eq!(&v[..3], &[0, 10_000_000, 20_000_000]);
        assert_eq!(v[100], 1_000_000_000);
        assert_eq!(v[101], 1_001_000_000);
    }

    #[test]
    fn a_trace_is_replayed_exactly_and_shared_without_loss() {
        let t = Target::parse_trace("0\n0.001\n0.25\n0.25\n1.5\n", "t", 2.0, 1.0, 1).unwrap();
        // At twice the speed, whatever the arrival law.
        let want = vec![0, 500_000, 125_000_000, 125_000_000, 750_000_000];
        assert_eq!(
            times(Schedule::of(&t, Arrival::Poisson, 3, None, None)),
            want
        );
        let mut parts: Vec<u64> = (0..2)
            .flat_map(|i| times(Schedule::of(&t, Arrival::Uniform, 3, None, None).dealt(i, 2)))
            .collect();
        parts.sort_unstable();
        assert_eq!(parts, want);
        // Two clients sharing it: every other arrival each.
        let a = times(Schedule::of(
            &t.share(0, 2),
            Arrival::Uniform,
            3,
            None,
            None,
        ));
        let b = times(Schedule::of(
            &t.share(1, 2),
            Arrival::Uniform,
            3,
            None,
            None,
        ));
        assert_eq!((a.len(), b.len()), (3, 2));
        let mut both = [a, b].concat();
        both.sort_unstable();
        assert_eq!(both, want);
    }
}
