//! pgbench's random numbers, drawn as pgbench draws them, so that a
//! script's `random_zipfian(1, n, 1.1)` picks from the same distribution
//! (and, from the same seed, the same numbers) under sojourn as under
//! pgbench: PostgreSQL's generator (xoroshiro128** seeded by splitmix64),
//! its range reduction by bitmask rejection, and pgbench's exponential,
//! gaussian (Box-Muller, truncated at the parameter) and zipfian (Devroye's
//! rejection method) draws; its two hash functions and `permute`.
//!
//! Written here rather than taken from a crate because bit-for-bit
//! agreement with pgbench is the point: the same seed gives the same keys.

/// PostgreSQL's `pg_prng`: xoroshiro128** 1.0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prng {
    s0: u64,
    s1: u64,
}

fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Prng {
    /// Seeded from `seed` as `pg_prng_seed` seeds.
    pub fn new(seed: u64) -> Prng {
        let mut x = seed;
        let (s0, s1) = (splitmix64(&mut x), splitmix64(&mut x));
        if s0 == 0 && s1 == 0 {
            return Prng {
                s0: 0x5851_F42D_4C95_7F2D,
                s1: 0x1405_7B7E_F767_814F,
            };
        }
        Prng { s0, s1 }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let s0 = self.s0;
        let sx = self.s1 ^ s0;
        let out = s0.wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        self.s0 = s0.rotate_left(24) ^ sx ^ (sx << 16);
        self.s1 = sx.rotate_left(37);
        out
    }

    /// Uniform in `[lo, hi]` by bitmask rejection; no draw when the
    /// range holds one value.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        let span = hi - lo;
        let shift = span.leading_zeros();
        loop {
            let v = self.next_u64() >> shift;
            if v <= span {
                return lo + v;
            }
        }
    }

    /// Uniform in `[0, 1)` with 52 random bits, as `pg_prng_double`.
    pub fn double(&mut self) -> f64 {
        (self.next_u64() >> 12) as f64 * (-52f64).exp2()
    }
}

/// Why a draw was refused, in pgbench's words.
pub type DrawError = String;

/// The checks every random function makes of its bounds: `ub - lb + 1`
/// must fit in 64 bits.
fn span(lb: i64, ub: i64) -> Result<u64, DrawError> {
    if lb > ub {
        return Err("empty range given to random".into());
    }
    match ub.checked_sub(lb).and_then(|d| d.checked_add(1)) {
        Some(_) => Ok(ub.wrapping_sub(lb) as u64),
        None => Err("random range is too large".into()),
    }
}

/// `random(lb, ub)`.
pub fn uniform(rng: &mut Prng, lb: i64, ub: i64) -> Result<i64, DrawError> {
    let span = span(lb, ub)?;
    Ok(lb.wrapping_add(rng.range(0, span) as i64))
}

/// `random_exponential(lb, ub, p)`: a truncated exponential, more likely
/// near `lb`.
pub fn exponential(rng: &mut Prng, lb: i64, ub: i64, p: f64) -> Result<i64, DrawError> {
    let span = span(lb, ub)?;
    if p <= 0.0 {
        return Err(format!(
            "exponential parameter must be greater than zero (not {p:.6})"
        ));
    }
    let cut = (-p).exp();
    let u = 1.0 - rng.double();
    let r = -(cut + (1.0 - cut) * u).ln() / p;
    Ok(lb.wrapping_add(((span as f64 + 1.0) * r) as i64))
}

/// `random_gaussian(lb, ub, p)`: a normal distribution centred on the
/// range, cut at `p` standard deviations either side.
pub fn gaussian(rng: &mut Prng, lb: i64, ub: i64, p: f64) -> Result<i64, DrawError> {
    let span = span(lb, ub)?;
    if p < 2.0 {
        return Err(format!(
            "gaussian parameter must be at least 2.000000 (not {p:.6})"
        ));
    }
    let z = loop {
        let u1 = 1.0 - rng.double();
        let u2 = 1.0 - rng.double();
        let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).sin();
        if !(z < -p || z >= p) {
            break z;
        }
    };
    let r = (z + p) / (p * 2.0);
    Ok(lb.wrapping_add(((span as f64 + 1.0) * r) as i64))
}

/// `random_zipfian(lb, ub, s)`: value `lb + k - 1` with probability
/// proportional to `1 / k^s`, by Devroye's rejection method.
pub fn zipfian(rng: &mut Prng, lb: i64, ub: i64, s: f64) -> Result<i64, DrawError> {
    let span = span(lb, ub)?;
    if !(1.001..=1000.0).contains(&s) && !s.is_nan() {
        return Err(format!(
            "zipfian parameter must be in range [1.001, 1000] (not {s:.6})"
        ));
    }
    let n = span as f64 + 1.0;
    if span == 0 {
        return Ok(lb);
    }
    let b = 2f64.powf(s - 1.0);
    let x = loop {
        let u = rng.double();
        let v = rng.double();
        let x = u.powf(-1.0 / (s - 1.0)).floor();
        let t = (1.0 + 1.0 / x).powf(s - 1.0);
        if v * x * (t - 1.0) / (b - 1.0) <= t / b && x <= n {
            break x;
        }
    };
    Ok(lb.wrapping_sub(1).wrapping_add(x as i64))
}

const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const MM2_MUL: u64 = 0xc6a4_a793_5bd1_e995;
const MM2_MUL_TIMES_8: u64 = 0x3525_3c9a_de8f_4ca8;
const MM2_ROT: u32 = 47;

/// `hash_murmur2(v, seed)` (and `hash`): MurmurHash2 of the 8 bytes.
pub fn murmur2(v: i64, seed: i64) -> i64 {
    let mut h = seed as u64 ^ MM2_MUL_TIMES_8;
    let mut k = v as u64;
    k = k.wrapping_mul(MM2_MUL);
    k ^= k >> MM2_ROT;
    k = k.wrapping_mul(MM2_MUL);
    h ^= k;
    h = h.wrapping_mul(MM2_MUL);
    h ^= h >> MM2_ROT;
    h = h.wrapping_mul(MM2_MUL);
    h ^= h >> MM2_ROT;
    h as i64
}

/// `hash_fnv1a(v, seed)`: FNV-1a over the 8 bytes, least significant
/// first.
pub fn fnv1a(v: i64, seed: i64) -> i64 {
    let mut h = FNV_OFFSET_BASIS ^ seed as u64;
    let mut v = v as u64;
    for _ in 0..8 {
        h = (h ^ (v & 0xff)).wrapping_mul(FNV_PRIME);
        v >>= 8;
    }
    h as i64
}

/// `permute(i, size, seed)`: where `i` lands in a pseudorandom
/// permutation of `0..size` that `seed` fixes.
pub fn permute(i: i64, size: i64, seed: i64) -> Result<i64, DrawError> {
    if size <= 0 {
        return Err("permute size parameter must be greater than zero".into());
    }
    if size < 2 {
        return Ok(0);
    }
    let size = size as u64;
    let mut rng = Prng::new(seed as u64);
    let mut v = (i as u64) % size;
    let masklen = 63 - size.leading_zeros();
    let mask = (1u64 << masklen) - 1;
    let mix = |x: u64, m: u64, r: u64| {
        let x = (x.wrapping_mul(m) ^ r) & mask;
        ((x << 1) & mask) | (x >> (masklen - 1))
    };
    for _ in 0..6 {
        let m = (rng.next_u64() & mask) | 1;
        let r = rng.next_u64() & mask;
        if v <= mask {
            v = mix(v, m, r);
        }
        let m = (rng.next_u64() & mask) | 1;
        let r = rng.next_u64() & mask;
        let t = size - 1 - v;
        if t <= mask {
            v = size - 1 - mix(t, m, r);
        }
        let r = rng.range(0, size - 1);
        v = (v + r) % size;
    }
    Ok(v as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Vectors pgbench 15 printed (and PostgreSQL's pg_prng gives).

    #[test]
    fn the_generator_is_postgres_own() {
        let mut r = Prng::new(0);
        assert_eq!((r.s0, r.s1), (0xe220_a839_7b1d_cdaf, 0x6e78_9e6a_a1b9_65f4));
        assert_eq!(
            [r.next_u64(), r.next_u64(), r.next_u64()],
            [
                16053376993090331485,
                7868822567099391496,
                12331295923365717130
            ]
        );
        let mut r = Prng::new(0);
        assert_eq!(r.double(), 0.8702553105818676);
        assert_eq!(r.double(), 0.426569726107606);
        let mut r = Prng::new(42);
        let first: Vec<u64> = (0..4).map(|_| r.next_u64()).collect();
        assert_eq!(
            first,
            [
                7631449856891427754,
                4306334408478191133,
                4482733528210176216,
                1183949725203728575
            ]
        );
    }

    #[test]
    fn a_client_draws_what_pgbench_draws() {
        // --random-seed=42 -c 3: client 0's state is the base's first draw.
        let mut base = Prng::new(42);
        let mut c0 = Prng::new(base.next_u64());
        assert_eq!(uniform(&mut c0, 1, 100000), Ok(83532));
        assert_eq!(uniform(&mut c0, -5000, 5000), Ok(-4040));
        assert_eq!(
            uniform(&mut c0, -4611686018427387904, 4611686018427387902),
            Ok(-1892347137770307924)
        );
        assert_eq!(exponential(&mut c0, 1, 1000, 2.5), Ok(372));
        assert_eq!(gaussian(&mut c0, 1, 1000, 2.5), Ok(343));
        assert_eq!(zipfian(&mut c0, 1, 1000, 1.07), Ok(134));
        assert_eq!(zipfian(&mut c0, 1, 1000000, 2.5), Ok(1));
        let mut c1 = Prng::new(base.next_u64());
        assert_eq!(uniform(&mut c1, 1, 100000), Ok(81172));
        assert_eq!(uniform(&mut c1, -5000, 5000), Ok(4147));
        // --random-seed=5432 -c 1.
        let mut c = Prng::new(Prng::new(5432).next_u64());
        assert_eq!(uniform(&mut c, 10, 19), Ok(17));
        assert_eq!(exponential(&mut c, 100, 199, 10.0), Ok(104));
        assert_eq!(gaussian(&mut c, 1000, 1999, 10.0), Ok(1498));
        assert_eq!(zipfian(&mut c, 1, 9, 1.3), Ok(3));
    }

    #[test]
    fn hashes_and_permute_match_pgbench() {
        assert_eq!(murmur2(10, 5432), -5817877081768721676);
        assert_eq!(fnv1a(10, 5432), -7793829335365542153);
        assert_eq!(murmur2(0, 0), 8217090173679840641);
        assert_eq!(fnv1a(0, 0), -6284781860667377211);
        assert_eq!(murmur2(-1, 42), 5126586708067272379);
        assert_eq!(fnv1a(-1, 42), 5526891816793633639);
        let p: Vec<i64> = (0..10).map(|i| permute(i, 10, 5).unwrap()).collect();
        assert_eq!(p, [6, 4, 8, 9, 2, 1, 5, 0, 3, 7]);
        assert_eq!(permute(17, 1000000007, 42), Ok(100800319));
        assert_eq!(permute(-3, 7, -1), Ok(6));
        assert_eq!((permute(0, 2, 0), permute(1, 2, 0)), (Ok(0), Ok(1)));
        assert_eq!(permute(5, 1, 9), Ok(0));
        assert!(permute(1, 0, 9).is_err());
    }

    #[test]
    fn bad_ranges_and_parameters_are_refused_in_pgbench_s_words() {
        let mut r = Prng::new(1);
        assert_eq!(
            uniform(&mut r, 5, 4),
            Err("empty range given to random".into())
        );
        assert_eq!(
            uniform(&mut r, 0, i64::MAX),
            Err("random range is too large".into())
        );
        assert!(uniform(&mut r, 1, i64::MAX).is_ok());
        assert_eq!(
            gaussian(&mut r, 1, 10, 1.5),
            Err("gaussian parameter must be at least 2.000000 (not 1.500000)".into())
        );
        assert!(zipfian(&mut r, 1, 10, 0.9)
            .unwrap_err()
            .contains("[1.001, 1000]"));
        assert!(exponential(&mut r, 1, 10, 0.0).is_err());
        // One value: no draw.
        let before = r.clone();
        assert_eq!(uniform(&mut r, 7, 7), Ok(7));
        assert_eq!(zipfian(&mut r, 7, 7, 1.5), Ok(7));
        assert_eq!(r, before);
    }

    /// Pearson's chi-square of `counts` against `probs` (bins whose
    /// expected count is below 5 pooled), and its degrees of freedom.
    fn chi_square(counts: &[u64], probs: &[f64]) -> (f64, usize) {
        let n: u64 = counts.iter().sum();
        let (mut chi, mut df) = (0.0, 0usize);
        let (mut c_acc, mut p_acc) = (0.0, 0.0);
        for (&c, &p) in counts.iter().zip(probs) {
            c_acc += c as f64;
            p_acc += p;
            if p_acc * n as f64 >= 5.0 {
                let e = p_acc * n as f64;
                chi += (c_acc - e).powi(2) / e;
                df += 1;
                c_acc = 0.0;
                p_acc = 0.0;
            }
        }
        if p_acc > 0.0 {
            let e = p_acc * n as f64;
            chi += (c_acc - e).powi(2) / e;
            df += 1;
        }
        (chi, df - 1)
    }

    /// The chi-square value a correct generator exceeds with probability
    /// 1e-6 (Wilson and Hilferty's approximation, z = 4.753).
    fn critical(df: usize) -> f64 {
        let k = df as f64;
        let t = 1.0 - 2.0 / (9.0 * k) + 4.753 * (2.0 / (9.0 * k)).sqrt();
        k * t.powi(3)
    }

    /// The error function, to 1.5e-7 (Abramowitz and Stegun 7.1.26).
    fn erf(x: f64) -> f64 {
        let t = 1.0 / (1.0 + 0.3275911 * x.abs());
        let y = 1.0
            - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t
                + 0.254829592)
                * t
                * (-x * x).exp();
        if x >= 0.0 {
            y
        } else {
            -y
        }
    }

    fn phi(x: f64) -> f64 {
        0.5 * (1.0 + erf(x / std::f64::consts::SQRT_2))
    }

    /// 100,000 draws over 1..=100 against the distribution pgbench
    /// documents for the function, from `cdf` of the unit interval the
    /// draw scales (`floor(100 r)`), or the probabilities themselves.
    fn fits(draw: impl Fn(&mut Prng) -> i64, probs: Vec<f64>) {
        let mut rng = Prng::new(20_261_128);
        let mut counts = vec![0u64; 100];
        for _ in 0..100_000 {
            let v = draw(&mut rng);
            assert!((1..=100).contains(&v), "{v}");
            counts[(v - 1) as usize] += 1;
        }
        let (chi, df) = chi_square(&counts, &probs);
        assert!(
            chi < critical(df),
            "chi-square {chi:.1} on {df} degrees of freedom"
        );
    }

    fn from_cdf(cdf: impl Fn(f64) -> f64) -> Vec<f64> {
        (0..100)
            .map(|k| cdf((k + 1) as f64 / 100.0) - cdf(k as f64 / 100.0))
            .collect()
    }

    #[test]
    fn the_draws_follow_pgbench_s_documented_distributions() {
        fits(|r| uniform(r, 1, 100).unwrap(), vec![0.01; 100]);
        let p = 2.0;
        fits(
            |r| exponential(r, 1, 100, p).unwrap(),
            from_cdf(|x| (1.0 - (-p * x).exp()) / (1.0 - (-p).exp())),
        );
        let g = 2.5;
        fits(
            |r| gaussian(r, 1, 100, g).unwrap(),
            from_cdf(|x| (phi(2.0 * g * x - g) - phi(-g)) / (phi(g) - phi(-g))),
        );
        for s in [1.1, 1.5, 3.0] {
            let h: f64 = (1..=100).map(|k| (k as f64).powf(-s)).sum();
            let probs = (1..=100).map(|k| (k as f64).powf(-s) / h).collect();
            fits(|r| zipfian(r, 1, 100, s).unwrap(), probs);
        }
        // A wrong distribution fails the same test: the check has power.
        let mut rng = Prng::new(1);
        let mut counts = vec![0u64; 100];
        for _ in 0..100_000 {
            counts[(exponential(&mut rng, 1, 100, 2.2).unwrap() - 1) as usize] += 1;
        }
        let (chi, df) = chi_square(
            &counts,
            &from_cdf(|x| (1.0 - (-2.0 * x).exp()) / (1.0 - (-2.0f64).exp())),
        );
        assert!(chi > critical(df), "{chi}");
    }
}
