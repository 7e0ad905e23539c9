//! Zipfian key choice: YCSB's `ZipfianGenerator` (Gray et al., SIGMOD '94),
//! `ScrambledZipfianGenerator` (`requestdistribution=zipfian`) and
//! `SkewedLatestGenerator` (`requestdistribution=latest`), plus the
//! generalised harmonic number `zeta(n, theta)` they need.
//!
//! YCSB computes `zeta` as an O(n) sum, which takes over a minute for 10^8
//! items and is why its zipfian start-up is slow for big key spaces. [`zeta`]
//! is O(1): up to 256 items it sums every term; above, it sums the first 31
//! exactly and the rest with the Euler–Maclaurin formula (integral, endpoint
//! terms and Bernoulli corrections up to B12, whose truncation error with a
//! 32-term head is below 1e-18), about 40 `powf`-sized operations whatever
//! the item count.
//!
//! Measured for theta = 0.99 against the compensated sum [`zeta_exact`]
//! (tests `zeta_approximation_at_1e6` and `..._at_1e8`), the
//! relative error is 0 at n = 10^6 and 0 at n = 10^8: both give the same
//! f64, which also equals a 40-digit mpmath value rounded to f64. YCSB's
//! naive Java-order sum is off by 3.7e-14 and 2.1e-13 respectively, and its
//! precomputed `zeta(10^10)` by 1.2e-12.
//!
//! Gray's draw is an approximation of the Zipf law: the two most popular
//! items get exactly `1/zetan` and `0.5^theta/zetan`, the rest follow a
//! continuous approximation (for 100 items, item 2 is drawn about 15% more
//! often than the exact law says and the tail about 5% less). We keep the
//! approximation because "zipfian" in a YCSB result means this one.

use super::rng::{next_f64, Rng};
use crate::keys::fnvhash64;

/// YCSB's zipfian exponent (`ZipfianGenerator.ZIPFIAN_CONSTANT`).
pub const ZIPFIAN_CONSTANT: f64 = 0.99;

/// Item counts up to this are summed term by term.
const EXACT_LIMIT: u64 = 256;
/// The Euler–Maclaurin tail starts at this term; earlier ones are summed.
const HEAD: u64 = 32;
/// `B_2k / (2k)!` for k = 1..=6.
const EULER_MACLAURIN: [f64; 6] = [
    1.0 / 12.0,
    -1.0 / 720.0,
    1.0 / 30_240.0,
    -1.0 / 1_209_600.0,
    1.0 / 47_900_160.0,
    -691.0 / 1_307_674_368_000.0,
];
/// When the item count grows by at most this many, the new terms are added
/// one by one (cheaper than a fresh [`zeta`]).
const INCREMENTAL_LIMIT: u64 = 64;

/// `sum_{i=1..n} 1/i^theta` by summing every term (compensated, so the
/// result is correctly rounded to within a few ulps). O(n): for reference
/// and tests; use [`zeta`].
pub fn zeta_exact(n: u64, theta: f64) -> f64 {
    let mut sum = 0.0f64;
    let mut compensation = 0.0f64;
    for i in 1..=n {
        let term = (i as f64).powf(-theta);
        let t = sum + term;
        compensation += if sum.abs() >= term.abs() {
            (sum - t) + term
        } else {
            (term - t) + sum
        };
        sum = t;
    }
    sum + compensation
}

/// `sum_{i=1..n} 1/i^theta` in constant time (see the module documentation
/// for its accuracy).
pub fn zeta(n: u64, theta: f64) -> f64 {
    if n <= EXACT_LIMIT {
        return zeta_exact(n, theta);
    }
    let head = zeta_exact(HEAD - 1, theta);
    let (a, b) = (HEAD as f64, n as f64);
    let (fa, fb) = (a.powf(-theta), b.powf(-theta));

    // The integral of x^-theta from a to b, written with exp_m1 so that it
    // stays accurate as theta approaches 1 (and is ln(b/a) at 1).
    let t = 1.0 - theta;
    let log_ratio = (b / a).ln();
    let integral = if t == 0.0 {
        log_ratio
    } else {
        a * fa * (t * log_ratio).exp_m1() / t
    };

    // The (2k-1)-th derivative of x^-theta is
    // -theta(theta+1)...(theta+2k-2) x^(-theta-2k+1).
    let mut rising = theta;
    let (mut da, mut db) = (fa / a, fb / b);
    let mut corrections = 0.0;
    for (k, coefficient) in EULER_MACLAURIN.iter().enumerate() {
        corrections += coefficient * -rising * (db - da);
        let order = (2 * k + 1) as f64;
        rising *= (theta + order) * (theta + order + 1.0);
        da /= a * a;
        db /= b * b;
    }
    head + integral + 0.5 * (fa + fb) + corrections
}

/// Gray's `eta`, or 0 where the formula is 0/0 (two items), which sends the
/// unreachable third branch of a draw to the last item instead of NaN.
fn eta(numerator: f64, zeta2theta: f64, zetan: f64) -> f64 {
    let eta = numerator / (1.0 - zeta2theta / zetan);
    if eta.is_finite() {
        eta
    } else {
        0.0
    }
}

/// YCSB's `ZipfianGenerator`: item `min` is the most popular, `min + 1` the
/// next, and so on.
#[derive(Clone, Debug, PartialEq)]
pub struct Zipfian {
    /// The item count given at construction; YCSB keeps using it in `eta`
    /// even after the count grows.
    items: u64,
    base: u64,
    theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
    zeta2theta: f64,
    /// `1 - (2/items)^(1-theta)`: fixed, since `items` never changes.
    eta_numerator: f64,
    /// `1 + 0.5^theta`, the upper bound of `u * zetan` for the second item.
    second_bound: f64,
    /// The item count `zetan` was computed for.
    count_for_zeta: u64,
}

impl Zipfian {
    /// Items `min..=max` with theta = [`ZIPFIAN_CONSTANT`]. `max < min`
    /// behaves as the single item `min`.
    pub fn new(min: u64, max: u64) -> Zipfian {
        let items = Self::count(min, max);
        Self::with_zetan(min, max, ZIPFIAN_CONSTANT, zeta(items, ZIPFIAN_CONSTANT))
    }

    /// Items `min..=max` with exponent `theta` and a precomputed
    /// `zetan = zeta(max - min + 1, theta)`.
    pub fn with_zetan(min: u64, max: u64, theta: f64, zetan: f64) -> Zipfian {
        let items = Self::count(min, max);
        let zeta2theta = zeta_exact(2, theta);
        let eta_numerator = 1.0 - (2.0 / items as f64).powf(1.0 - theta);
        Zipfian {
            items,
            base: min,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta: eta(eta_numerator, zeta2theta, zetan),
            zeta2theta,
            eta_numerator,
            second_bound: 1.0 + 0.5f64.powf(theta),
            count_for_zeta: items,
        }
    }

    fn count(min: u64, max: u64) -> u64 {
        max.saturating_sub(min).saturating_add(1)
    }

    /// The item count given at construction.
    pub fn items(&self) -> u64 {
        self.items
    }

    /// The current `zeta(itemcount, theta)`.
    pub fn zetan(&self) -> f64 {
        self.zetan
    }

    /// The current `eta` of Gray's formula.
    pub fn eta(&self) -> f64 {
        self.eta
    }

    pub fn theta(&self) -> f64 {
        self.theta
    }

    /// A draw from `min..=max`.
    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        let items = self.items;
        self.next_with_items(rng, items)
    }

    /// A draw from `min..min + itemcount`, YCSB's `nextLong(itemcount)`.
    ///
    /// When `itemcount` exceeds every count seen so far, `zetan` and `eta`
    /// are updated (adding the new terms when there are few, else by
    /// [`zeta`]); a smaller count reuses the current ones, as YCSB does by
    /// default. Like YCSB, `eta` keeps using the item count given at
    /// construction rather than `itemcount`, so after growth the tail is
    /// shaped slightly differently from a generator built for the new count.
    #[inline]
    pub fn next_with_items(&mut self, rng: &mut Rng, itemcount: u64) -> u64 {
        if itemcount > self.count_for_zeta {
            self.grow(itemcount);
        }
        self.draw(next_f64(rng), itemcount)
    }

    #[cold]
    fn grow(&mut self, itemcount: u64) {
        if itemcount - self.count_for_zeta <= INCREMENTAL_LIMIT {
            for i in self.count_for_zeta + 1..=itemcount {
                self.zetan += (i as f64).powf(-self.theta);
            }
        } else {
            self.zetan = zeta(itemcount, self.theta);
        }
        self.count_for_zeta = itemcount;
        self.eta = eta(self.eta_numerator, self.zeta2theta, self.zetan);
    }

    /// Gray's formula for the uniform draw `u`.
    #[inline]
    pub(crate) fn draw(&self, u: f64, itemcount: u64) -> u64 {
        let uz = u * self.zetan;
        if uz < 1.0 {
            return self.base;
        }
        if uz < self.second_bound {
            return self.base.wrapping_add(1);
        }
        let x = (self.eta * u - self.eta + 1.0).powf(self.alpha);
        // Rounding can make `itemcount * x` reach `itemcount` when x is a hair
        // below 1; the clamp keeps the draw in range (Java would overshoot).
        let offset = (itemcount as f64 * x) as u64;
        self.base
            .wrapping_add(offset.min(itemcount.saturating_sub(1)))
    }
}

/// YCSB's `ScrambledZipfianGenerator`: zipfian popularity, but the popular
/// items are scattered over `min..=max` by hashing.
///
/// A zipfian over `0..=10^10` (with YCSB's precomputed `zetan`) is drawn and
/// hashed with [`fnvhash64`], then reduced modulo the item count. So the
/// skew does not depend on the item count, and with fewer than 10^10 items
/// several ranks share a key.
#[derive(Clone, Debug, PartialEq)]
pub struct ScrambledZipfian {
    inner: Zipfian,
    min: u64,
    itemcount: u64,
}

impl ScrambledZipfian {
    /// Largest item of the inner zipfian (YCSB's `ITEM_COUNT`).
    pub const INNER_MAX: u64 = 10_000_000_000;
    /// YCSB's precomputed `zeta` for the inner zipfian (`ZETAN`).
    pub const INNER_ZETAN: f64 = 26.469_028_201_783_02;

    /// Items `min..=max`; `max < min` behaves as the single item `min`.
    pub fn new(min: u64, max: u64) -> ScrambledZipfian {
        ScrambledZipfian {
            inner: Zipfian::with_zetan(0, Self::INNER_MAX, ZIPFIAN_CONSTANT, Self::INNER_ZETAN),
            min,
            itemcount: Zipfian::count(min, max),
        }
    }

    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        let rank = self.inner.next(rng);
        self.scramble(rank)
    }

    /// The draw for the uniform value `u`.
    #[cfg(test)]
    pub(crate) fn next_from_u(&self, u: f64) -> u64 {
        self.scramble(self.inner.draw(u, self.inner.items))
    }

    /// `min + fnvhash64(rank) % itemcount`. The hash is non-negative except
    /// for `i64::MIN`, where Java's signed `%` would land below `min`; taking
    /// the unsigned magnitude keeps every draw in range.
    #[inline]
    fn scramble(&self, rank: u64) -> u64 {
        let h = fnvhash64(rank as i64);
        self.min.wrapping_add(h.unsigned_abs() % self.itemcount)
    }
}

/// YCSB's `SkewedLatestGenerator`: `last - zipfian(last)`, so the most
/// recently inserted keys are the most popular.
///
/// YCSB builds its zipfian with `items = lastValue()` of the insert counter at
/// construction (`recordcount - 1` for a run) and then draws
/// `nextLong(lastValue())` each time; pass the same values. Since the
/// zipfian draws from `0..last`, the result is in `1..=last`: as in YCSB,
/// key 0 is never chosen.
#[derive(Clone, Debug, PartialEq)]
pub struct SkewedLatest {
    zipfian: Zipfian,
}

impl SkewedLatest {
    pub fn new(initial_last: u64) -> SkewedLatest {
        SkewedLatest {
            zipfian: Zipfian::new(0, initial_last.saturating_sub(1)),
        }
    }

    /// A draw favouring `last`; 0 when `last` is 0.
    #[inline]
    pub fn next(&mut self, rng: &mut Rng, last: u64) -> u64 {
        if last == 0 {
            return 0;
        }
        last.saturating_sub(self.zipfian.next_with_items(rng, last))
    }
}

#[cfg(test)]
mod tests {
    use super::super::rng::rng_for;
    use super::*;

    #[test]
    fn zeta_small_and_boundary() {
        assert_eq!(zeta(0, 0.99), 0.0);
        assert_eq!(zeta(1, 0.99), 1.0);
        assert_eq!(zeta(2, 0.99), 1.503_477_775_028_359_4);
        // Just past the exact limit, and theta values other than 0.99.
        for theta in [0.0, 0.5, 0.99, 1.0, 1.2, 2.0] {
            for n in [EXACT_LIMIT + 1, 1000, 4321] {
                let (approx, exact) = (zeta(n, theta), zeta_exact(n, theta));
                assert!(
                    ((approx - exact) / exact).abs() < 1e-14,
                    "n={n} theta={theta}: {approx} vs {exact}"
                );
            }
        }
    }

    #[test]
    fn zeta_matches_reference_values() {
        // Reference values from mpmath at 40 digits (Hurwitz zeta:
        // zeta(s) - zeta(s, n + 1)) for theta = 0.99 as an f64.
        for (n, reference) in [
            (ScrambledZipfian::INNER_MAX, 26.469_028_201_751_48),
            (30_000_000_000, 27.859_724_321_392_314),
        ] {
            let z = zeta(n, ZIPFIAN_CONSTANT);
            assert!(((z - reference) / reference).abs() < 1e-15, "{n}: {z}");
        }
        // YCSB's ZETAN was summed naively in Java and has drifted by about
        // 1.2e-12 relative; we still agree with it to that level.
        let z = zeta(ScrambledZipfian::INNER_MAX, ZIPFIAN_CONSTANT);
        assert!(
            ((z - ScrambledZipfian::INNER_ZETAN) / z).abs() < 2e-12,
            "{z}"
        );
    }

    #[test]
    fn zipfian_draw_branches() {
        let z = Zipfian::new(10, 109);
        assert_eq!(z.draw(0.0, 100), 10);
        assert_eq!(z.draw(0.999 / z.zetan(), 100), 10);
        assert_eq!(z.draw(1.001 / z.zetan(), 100), 11);
        let u = 0.7;
        let expected = 10 + (100.0 * (z.eta() * u - z.eta() + 1.0).powf(1.0 / (1.0 - 0.99))) as u64;
        assert_eq!(z.draw(u, 100), expected);
        assert!(z.draw(1.0 - f64::EPSILON, 100) <= 109);
    }

    #[test]
    fn zipfian_growth_keeps_original_items_in_eta() {
        let mut z = Zipfian::new(0, 999);
        let mut rng = rng_for(1, 0);
        for count in [1010, 5000, 5000, 4000] {
            z.next_with_items(&mut rng, count);
        }
        assert_eq!(z.count_for_zeta, 5000);
        let zetan = zeta(5000, 0.99);
        assert!(((z.zetan() - zetan) / zetan).abs() < 1e-14);
        let expected =
            (1.0 - (2.0f64 / 1000.0).powf(1.0 - 0.99)) / (1.0 - z.zeta2theta / z.zetan());
        assert_eq!(z.eta(), expected);
    }

    #[test]
    fn tiny_zipfians_stay_in_range() {
        let mut rng = rng_for(2, 0);
        for (min, max) in [(5, 5), (5, 6), (5, 7), (9, 3)] {
            let mut z = Zipfian::new(min, max);
            for _ in 0..10_000 {
                let v = z.next(&mut rng);
                assert!(v >= min && v <= max.max(min), "{v} for {min}..={max}");
            }
        }
    }

    #[test]
    fn scrambled_from_u() {
        let s = ScrambledZipfian::new(100, 1099);
        // u = 0 is rank 0, whose hash is YCSB's first check value.
        assert_eq!(s.next_from_u(0.0), 100 + 6_284_781_860_667_377_211 % 1000);
        // Rank 1.
        assert_eq!(
            s.next_from_u(1.2 / ScrambledZipfian::INNER_ZETAN),
            100 + 8_517_097_267_634_966_620 % 1000
        );
    }

    #[test]
    fn skewed_latest_bounds() {
        let mut rng = rng_for(3, 0);
        let mut l = SkewedLatest::new(0);
        assert_eq!(l.next(&mut rng, 0), 0);
        for last in 1..2000 {
            let v = l.next(&mut rng, last);
            assert!((1..=last).contains(&v), "{v} for last {last}");
        }
        // A smaller last after growth still stays in range.
        for _ in 0..1000 {
            assert!((1..=3).contains(&l.next(&mut rng, 3)));
        }
    }
}
