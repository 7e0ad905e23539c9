//! The one random number generator every draw uses, seeded per stream
//! ([`rng_for`]), and the two uniform draws every distribution builds on
//! ([`next_f64`], [`below`]).

use rand_core::{RngCore, SeedableRng};

/// The random number generator every draw uses: small, fast and good enough
/// for simulation (not cryptography).
pub type Rng = rand_xoshiro::Xoshiro256PlusPlus;

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
