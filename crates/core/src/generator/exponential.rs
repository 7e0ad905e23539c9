//! YCSB's exponential distribution, parameterised the way
//! `requestdistribution=exponential` is: `percentile`% of draws fall below
//! `range`.
//!
//! The workload counts the draw back from the latest key; this module only
//! produces the offset.

use super::rng::{next_f64, Rng};

/// Offsets `floor(X)` where `X` is exponential with rate
/// `gamma = -ln(1 - percentile/100) / range`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Exponential {
    /// `1 / gamma`, so a draw multiplies instead of divides.
    mean: f64,
}

impl Exponential {
    /// `percentile` in percent (YCSB's `exponential.percentile`, default 95),
    /// `range` the number of keys that percentile covers
    /// (`recordcount * exponential.frac`).
    ///
    /// Degenerate parameters do not fail: `percentile <= 0`, or a negative
    /// or infinite `range`, make almost every draw saturate to `u64::MAX`;
    /// `percentile >= 100`, NaN or `range == 0` make every draw 0. Callers
    /// reduce the offset modulo their key count anyway.
    pub fn new(percentile: f64, range: f64) -> Exponential {
        let gamma = -(-percentile / 100.0).ln_1p() / range;
        let mean = if gamma.is_nan() {
            0.0
        } else if gamma <= 0.0 {
            f64::INFINITY
        } else {
            1.0 / gamma
        };
        Exponential { mean }
    }

    /// The distribution's mean before flooring (`1 / gamma`).
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// `floor(-ln(1 - u) / gamma)`. YCSB uses `-ln(u)`, which is the same
    /// distribution; `1 - u` is never 0 for `u` in `[0, 1)`, so the draw is
    /// always finite.
    #[inline]
    pub fn next(&self, rng: &mut Rng) -> u64 {
        let u = next_f64(rng);
        // Float-to-int casts saturate, so an infinite mean yields u64::MAX.
        (-(-u).ln_1p() * self.mean) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::super::rng::rng_for;
    use super::*;

    #[test]
    fn degenerate_parameters_do_not_panic() {
        let mut rng = rng_for(1, 0);
        assert_eq!(Exponential::new(0.0, 100.0).mean(), f64::INFINITY);
        assert_eq!(Exponential::new(50.0, -1.0).mean(), f64::INFINITY);
        let _ = Exponential::new(0.0, 100.0).next(&mut rng);
        assert_eq!(Exponential::new(150.0, 100.0).next(&mut rng), 0);
        assert_eq!(Exponential::new(100.0, 100.0).next(&mut rng), 0);
        assert_eq!(Exponential::new(95.0, 0.0).next(&mut rng), 0);
        assert_eq!(Exponential::new(f64::NAN, 10.0).next(&mut rng), 0);
    }

    #[test]
    fn mean_matches_gamma() {
        let e = Exponential::new(95.0, 1000.0);
        let gamma = -(0.05f64).ln() / 1000.0;
        assert!((e.mean() - 1.0 / gamma).abs() < 1e-9);
    }
}
