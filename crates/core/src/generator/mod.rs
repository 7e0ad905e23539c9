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
mod uniform;
mod zipfian;

use rand_core::{RngCore, SeedableRng};

pub use counter::{AcknowledgedCounter, Counter, Sequential};
pub use discrete::Discrete;
pub use exponential::Exponential;
pub use histogram::HistogramGen;
pub use uniform::{Hotspot, UniformGen};
pub use zipfian::{zeta, zeta_exact, ScrambledZipfian, SkewedLatest, Zipfian, ZIPFIAN_CONSTANT};

/// The random number generator every draw uses: small, fast and good enough
/// for simulation (not cryptography).
pub type Rng = rand_xoshiro::Xoshiro256PlusPlus;

/// Why a generator could not be built from a file.
#[derive(Debug, thiserror::Error)]
pub enum GeneratorError {
    // The OS's reason is in the message, not a source too: a chain
    // printer would say it twice.
    #[error("cannot read {}: {reason}", path.display())]
    Io {
        path: std::path::PathBuf,
        reason: std::io::Error,
    },
    #[error("{}, line {line}: expected {expected}, found {found:?}", path.display())]
    Parse {
        path: std::path::PathBuf,
        line: usize,
        expected: String,
        found: String,
    },
    #[error("{}: {message}", path.display())]
    Invalid {
        path: std::path::PathBuf,
        message: String,
    },
}

/// SplitMix64's output function: a bijection on u64 that scrambles nearby
/// inputs into unrelated outputs.
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A generator for stream `stream` (usually a worker id) of a run seeded
/// with `seed`.
///
/// For a fixed seed, distinct streams always get distinct generator seeds:
/// both mixing steps are bijections, so `stream` 1 and 2 cannot collide the
/// way `seed + stream` would across runs with adjacent seeds.
pub fn rng_for(seed: u64, stream: u64) -> Rng {
    Rng::seed_from_u64(splitmix64(
        seed ^ splitmix64(stream ^ 0x5EED_5EED_5EED_5EED),
    ))
}

/// A uniform draw in `[0, 1)` with 53 random bits (every value a multiple of
/// 2^-53, so 1.0 is never returned and `1 - u` is never 0).
#[inline]
pub fn next_f64(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A uniform draw in `[0, n)`, or over all of u64 when `n == 0` (the
/// wrapped size of the full range).
///
/// Lemire's multiply-and-shift with rejection: exact, and the rejection
/// branch is taken with probability below `n / 2^64`.
#[inline]
pub(crate) fn below(rng: &mut Rng, n: u64) -> u64 {
    if n == 0 {
        return rng.next_u64();
    }
    let mut m = u128::from(rng.next_u64()) * u128::from(n);
    if (m as u64) < n {
        let threshold = n.wrapping_neg() % n;
        while (m as u64) < threshold {
            m = u128::from(rng.next_u64()) * u128::from(n);
        }
    }
    (m >> 64) as u64
}

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
