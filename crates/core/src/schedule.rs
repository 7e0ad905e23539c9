//! When operations are meant to start.
//!
//! Under a target rate there is one schedule for the whole run (not one per
//! connection), so `--target 10000` offers 10,000 operations per second in
//! total however many connections serve them. Gaps are exponential (a
//! Poisson process, as pgbench, Noria, Lancet and Treadmill use) or uniform.
//! The schedule is a pure function of its seed: the pacer and the workers
//! each hold a copy and see the same times.

use std::time::Duration;

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;

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
    mean_gap_ns: f64,
    arrival: Arrival,
    rng: Xoshiro256PlusPlus,
    // f64 nanoseconds stay exact to the nanosecond for 104 days.
    next_ns: f64,
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
        let mut s = Schedule {
            mean_gap_ns: 1e9 / rate,
            arrival,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x5c4e_d01e_0000_0001),
            next_ns: 0.0,
            global: 0,
            stride: 1,
            issued: 0,
            limit,
            horizon_ns: horizon.map(|h| h.as_nanos() as u64),
        };
        if arrival == Arrival::Poisson {
            s.next_ns = s.gap();
        }
        s
    }

    fn gap(&mut self) -> f64 {
        match self.arrival {
            Arrival::Uniform => self.mean_gap_ns,
            Arrival::Poisson => {
                // 1 - u is in (0, 1], so the logarithm is finite.
                let u = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                -(1.0 - u).ln() * self.mean_gap_ns
            }
        }
    }

    /// The next intended start, or `None` when the schedule is exhausted.
    #[inline]
    pub fn peek(&self) -> Option<u64> {
        if self.limit.is_some_and(|l| self.global >= l) {
            return None;
        }
        let t = self.next_ns as u64;
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
    }

    fn step(&mut self) {
        self.global += 1;
        self.next_ns += self.gap();
    }

    /// This schedule's share for thread `index` of `of`: arrivals index,
    /// index + of, index + 2*of, ... of the whole run's schedule. The
    /// shares together are exactly the whole schedule.
    pub fn dealt(mut self, index: usize, of: usize) -> Schedule {
        for _ in 0..index {
            self.step();
        }
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
}
