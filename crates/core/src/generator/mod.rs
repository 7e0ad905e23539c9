//! Random number generators and the YCSB distributions built on them.
//!
//! This module owns every source of randomness in a run and every
//! distribution a workload draws from: key choice (uniform, zipfian,
//! scrambled zipfian, latest, hotspot, exponential, sequential), field and
//! scan lengths ([`LengthGen`]), the operation mix ([`Discrete`]) and the
//! shared insert counters ([`Counter`], [`AcknowledgedCounter`]).
//!
//! Every draw takes an explicit `&mut Rng`: there are no thread-local
//! generators, so a run seeded with the same seed and worker count draws the
//! same sequence per worker (see [`rng_for`]). The draws reproduce YCSB
//! 0.17.0's formulas, not its random sequence (Java's `Random` is neither
//! fast nor seeded per worker there).
//!
//! Draws sit on the per-operation hot path: none allocates or locks, and the
//! constants that need `powf`/`ln` are computed at construction.

mod counter;
mod discrete;
mod exponential;
mod histogram;
mod rng;
mod uniform;
mod zipfian;

pub use counter::{AcknowledgedCounter, Counter, Sequential};
pub use discrete::Discrete;
pub use exponential::Exponential;
pub use histogram::{GeneratorError, HistogramGen};
pub(crate) use rng::below;
pub use rng::{next_f64, rng_for, Rng};
pub use uniform::{Hotspot, UniformGen};
pub use zipfian::{zeta, zeta_exact, ScrambledZipfian, SkewedLatest, Zipfian, ZIPFIAN_CONSTANT};

/// A field- or scan-length distribution (`fieldlengthdistribution`,
/// `scanlengthdistribution`).
#[derive(Clone, Debug)]
pub enum LengthGen {
    Constant(u64),
    Uniform(UniformGen),
    Zipfian(Zipfian),
    Histogram(HistogramGen),
}

impl LengthGen {
    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        match self {
            LengthGen::Constant(n) => *n,
            LengthGen::Uniform(g) => g.next(rng),
            LengthGen::Zipfian(g) => g.next(rng),
            LengthGen::Histogram(g) => g.next(rng),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::RngCore;

    #[test]
    fn streams_differ_and_repeat() {
        let mut a = rng_for(7, 0);
        let mut a2 = rng_for(7, 0);
        let mut b = rng_for(7, 1);
        let xs: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let xs2: Vec<u64> = (0..4).map(|_| a2.next_u64()).collect();
        let ys: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        assert_eq!(xs, xs2);
        assert_ne!(xs, ys);
        let mut c = rng_for(8, 0);
        assert_ne!(c.next_u64(), xs[0]);
    }

    #[test]
    fn next_f64_in_unit_interval() {
        let mut rng = rng_for(1, 1);
        for _ in 0..10_000 {
            let u = next_f64(&mut rng);
            assert!((0.0..1.0).contains(&u));
        }
    }

    #[test]
    fn below_stays_below() {
        let mut rng = rng_for(2, 0);
        for n in [1u64, 2, 3, 7, 1000, u64::MAX / 3 * 2, u64::MAX] {
            for _ in 0..1000 {
                assert!(below(&mut rng, n) < n);
            }
        }
        assert_eq!(below(&mut rng, 1), 0);
    }

    #[test]
    fn length_gen_variants() {
        let mut rng = rng_for(3, 0);
        assert_eq!(LengthGen::Constant(100).next(&mut rng), 100);
        let mut u = LengthGen::Uniform(UniformGen::new(1, 10));
        let mut z = LengthGen::Zipfian(Zipfian::new(1, 10));
        let mut h = LengthGen::Histogram(HistogramGen::from_buckets(8, vec![0, 1]));
        for _ in 0..1000 {
            assert!((1..=10).contains(&u.next(&mut rng)));
            assert!((1..=10).contains(&z.next(&mut rng)));
            assert_eq!(h.next(&mut rng), 16);
        }
    }
}
