//! Statistical and behavioural tests of the key names and generators.
//!
//! Every test uses a fixed seed, so results are reproducible; the tolerances
//! are nevertheless set at 5 standard deviations (or the chi-square
//! equivalent) so that they would hold for almost any seed, and a failure
//! means a real deviation rather than bad luck.

use std::sync::Arc;
use std::time::{Duration, Instant};

use sojourn_core::generator::{
    next_f64, rng_for, zeta, zeta_exact, AcknowledgedCounter, Counter, Discrete, Exponential,
    GeneratorError, HistogramGen, Hotspot, Rng, ScrambledZipfian, Sequential, SkewedLatest,
    UniformGen, Zipfian, ZIPFIAN_CONSTANT,
};
use sojourn_core::keys::{build_key_name, fnvhash64};

const DRAWS: usize = 1_000_000;

/// The chi-square value that `df` degrees of freedom exceed with the same
/// probability as a normal variable exceeds `z` sigmas (Wilson–Hilferty).
fn chi2_threshold(df: usize, z: f64) -> f64 {
    let df = df as f64;
    let v = 2.0 / (9.0 * df);
    df * (1.0 - v + z * v.sqrt()).powi(3)
}

/// Chi-square statistic of observed counts against expected probabilities.
fn chi2(counts: &[u64], probabilities: &[f64]) -> f64 {
    let n: u64 = counts.iter().sum();
    counts
        .iter()
        .zip(probabilities)
        .map(|(&c, &p)| {
            let expected = n as f64 * p;
            (c as f64 - expected).powi(2) / expected
        })
        .sum()
}

/// Asserts that `hits` out of `n` trials is within 5 sigma of probability `p`.
fn assert_binomial(what: &str, hits: u64, n: u64, p: f64) {
    let expected = n as f64 * p;
    let sigma = (n as f64 * p * (1.0 - p)).sqrt();
    assert!(
        (hits as f64 - expected).abs() <= 5.0 * sigma,
        "{what}: {hits} of {n}, expected {expected:.1} ± {:.1}",
        5.0 * sigma
    );
}

// ---------------------------------------------------------------- keys ---

/// FNV-1a written independently of the crate: bytes taken with shifts from a
/// u64, and the absolute value taken by hand.
fn reference_fnv(keynum: u64) -> i64 {
    let mut h: u64 = 14_695_981_039_346_656_037;
    for i in 0..8 {
        h ^= (keynum >> (8 * i)) & 0xff;
        h = h.wrapping_mul(1_099_511_628_211);
    }
    let signed = h as i64;
    if signed < 0 {
        signed.wrapping_neg()
    } else {
        signed
    }
}

fn key(keynum: u64, zeropadding: usize, hashed: bool) -> String {
    let mut out = String::new();
    build_key_name(keynum, zeropadding, hashed, &mut out);
    out
}

#[test]
fn key_names_match_ycsb_check_values() {
    assert_eq!(key(0, 1, true), "user6284781860667377211");
    assert_eq!(key(1, 1, true), "user8517097267634966620");
    assert_eq!(key(2, 1, true), "user1820151046732198393");
    assert_eq!(fnvhash64(0), 6_284_781_860_667_377_211);
}

#[test]
fn key_names_for_large_keynums() {
    for keynum in [
        999_999,
        1_000_000_007,
        10_000_000_000,
        29_999_999_999,
        1 << 40,
        (1 << 53) + 1,
        i64::MAX as u64,
        u64::MAX,
    ] {
        let h = reference_fnv(keynum);
        assert_eq!(fnvhash64(keynum as i64), h, "keynum {keynum}");
        assert_eq!(key(keynum, 1, true), format!("user{h}"));
        assert_eq!(key(keynum, 25, true), format!("user{h:0>25}"));
    }
}

#[test]
fn key_names_padding_and_order() {
    assert_eq!(key(0, 1, false), "user0");
    assert_eq!(key(42, 1, false), "user42");
    assert_eq!(key(42, 5, false), "user00042");
    assert_eq!(key(12345, 3, false), "user12345");
    assert_eq!(key(u64::MAX, 1, false), "user18446744073709551615");
    assert_eq!(key(0, 22, true), "user0006284781860667377211");
    // The buffer is cleared and reused.
    let mut out = String::from("stale contents");
    build_key_name(7, 2, false, &mut out);
    assert_eq!(out, "user07");
}

// ---------------------------------------------------------------- zeta ---

fn zeta_relative_error(n: u64) -> f64 {
    let exact = zeta_exact(n, ZIPFIAN_CONSTANT);
    ((zeta(n, ZIPFIAN_CONSTANT) - exact) / exact).abs()
}

#[test]
fn zeta_approximation_at_1e6() {
    let error = zeta_relative_error(1_000_000);
    println!("zeta relative error at n = 10^6, theta = 0.99: {error:e}");
    assert!(error < 1e-12, "{error:e}");
    // mpmath, 40 digits: zeta(0.99) - zeta(0.99, 10^6 + 1).
    let reference = 15.391_849_746_036_804;
    assert!((zeta(1_000_000, ZIPFIAN_CONSTANT) / reference - 1.0).abs() < 1e-15);
}

/// 10^8 `powf` calls in the exact sum: about a second of CPU in the test
/// profile (which optimises, see Cargo.toml), so it runs every time.
#[test]
fn zeta_approximation_at_1e8() {
    let error = zeta_relative_error(100_000_000);
    println!("zeta relative error at n = 10^8, theta = 0.99: {error:e}");
    assert!(error < 1e-12, "{error:e}");
}

#[test]
fn zipfian_construction_is_constant_time() {
    const ITEMS: u64 = 30_000_000_000;
    let start = Instant::now();
    let mut z = Zipfian::new(0, ITEMS - 1);
    let elapsed = start.elapsed();
    assert_eq!(z.items(), ITEMS);
    assert_eq!(z.zetan(), zeta(ITEMS, ZIPFIAN_CONSTANT));
    // mpmath, 40 digits: zeta(0.99) - zeta(0.99, 3e10 + 1).
    assert!((z.zetan() / 27.859_724_321_392_314 - 1.0).abs() < 1e-15);
    let theta = ZIPFIAN_CONSTANT;
    let eta = (1.0 - (2.0 / ITEMS as f64).powf(1.0 - theta))
        / (1.0 - (1.0 + 2f64.powf(-theta)) / z.zetan());
    assert!((z.eta() / eta - 1.0).abs() < 1e-15);
    // An O(n) sum over 3e10 terms would take minutes; this is a loose bound.
    assert!(elapsed < Duration::from_millis(50), "{elapsed:?}");
    let mut rng = rng_for(1, 0);
    for _ in 0..1000 {
        assert!(z.next(&mut rng) < ITEMS);
    }
}

// ------------------------------------------------------------- zipfian ---

/// The exact probabilities Gray's algorithm gives each of `n` items: the
/// measure of the `u` values that map to each item.
fn gray_probabilities(n: u64) -> Vec<f64> {
    let theta = ZIPFIAN_CONSTANT;
    let zetan = zeta_exact(n, theta);
    let zeta2 = 1.0 + 2f64.powf(-theta);
    let alpha = 1.0 / (1.0 - theta);
    let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
    let formula_start = (1.0 + 0.5f64.powf(theta)) / zetan;
    // Smallest u whose formula value is at least k.
    let u_at = |k: u64| {
        if k >= n {
            1.0
        } else {
            let x = (k as f64 / n as f64).powf(1.0 / alpha);
            (1.0 - (1.0 - x) / eta).max(formula_start)
        }
    };
    let mut p: Vec<f64> = (0..n).map(|k| u_at(k + 1) - u_at(k)).collect();
    p[0] += 1.0 / zetan;
    p[1] += 0.5f64.powf(theta) / zetan;
    p
}

#[test]
fn zipfian_frequencies() {
    const N: u64 = 100;
    let mut z = Zipfian::new(0, N - 1);
    let mut rng = rng_for(2, 0);
    let mut counts = vec![0u64; N as usize];
    for _ in 0..DRAWS {
        counts[z.next(&mut rng) as usize] += 1;
    }

    // The two most popular items follow the Zipf law exactly.
    let zetan = zeta_exact(N, ZIPFIAN_CONSTANT);
    for (i, &count) in counts.iter().enumerate().take(2) {
        let p = 1.0 / ((i + 1) as f64).powf(ZIPFIAN_CONSTANT) / zetan;
        assert_binomial(&format!("item {i}"), count, DRAWS as u64, p);
    }

    // Every item follows Gray's approximation of it.
    let gray = gray_probabilities(N);
    assert!((gray.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    let statistic = chi2(&counts, &gray);
    let threshold = chi2_threshold(N as usize - 1, 5.0);
    assert!(statistic < threshold, "chi2 {statistic} >= {threshold}");

    // Which is within 16% of the exact law everywhere (a check that the
    // reference above is not itself off).
    for (i, &p) in gray.iter().enumerate() {
        let exact = 1.0 / ((i + 1) as f64).powf(ZIPFIAN_CONSTANT) / zetan;
        assert!((p / exact - 1.0).abs() < 0.16, "item {i}: {p} vs {exact}");
    }
}

/// YCSB's scrambled zipfian, written out from its formulas.
fn scrambled_by_hand(u: f64, min: u64, itemcount: u64) -> u64 {
    let zetan = 26.469_028_201_783_02;
    let items = 10_000_000_001.0f64;
    let theta = 0.99;
    let eta = (1.0 - (2.0 / items).powf(1.0 - theta)) / (1.0 - (1.0 + 2f64.powf(-theta)) / zetan);
    let uz = u * zetan;
    let rank = if uz < 1.0 {
        0
    } else if uz < 1.0 + 0.5f64.powf(theta) {
        1
    } else {
        (items * (eta * u - eta + 1.0).powf(1.0 / (1.0 - theta))) as u64
    };
    min + reference_fnv(rank) as u64 % itemcount
}

#[test]
fn scrambled_zipfian_matches_formula() {
    let mut rng = rng_for(3, 0);
    let mut shadow = rng.clone();
    let mut s = ScrambledZipfian::new(1000, 1999);
    for i in 0..1000 {
        let u = next_f64(&mut shadow);
        assert_eq!(
            s.next(&mut rng),
            scrambled_by_hand(u, 1000, 1000),
            "draw {i}"
        );
    }
}

#[test]
fn scrambled_zipfian_stays_in_range() {
    let mut rng = rng_for(4, 0);
    for (min, max) in [
        (0, 0),
        (5, 6),
        (0, 999),
        (1_000_000, 1_000_010),
        (7, u64::MAX),
    ] {
        let mut s = ScrambledZipfian::new(min, max);
        for _ in 0..10_000 {
            let v = s.next(&mut rng);
            assert!(v >= min && v <= max, "{v} not in {min}..={max}");
        }
    }
}

#[test]
fn latest_favours_recent_keys() {
    let last = 999;
    let mut g = SkewedLatest::new(last);
    let mut rng = rng_for(5, 0);
    let mut counts = vec![0u64; last as usize + 1];
    for _ in 0..DRAWS {
        let v = g.next(&mut rng, last);
        assert!((1..=last).contains(&v));
        counts[v as usize] += 1;
    }
    // P(last) > P(last-1) > ... by more than 5 sigma of the difference.
    for k in 0..5 {
        let (a, b) = (counts[(last - k) as usize], counts[(last - k - 1) as usize]);
        assert!(
            a as f64 - b as f64 > 5.0 * ((a + b) as f64).sqrt(),
            "count of last-{k} = {a}, of last-{} = {b}",
            k + 1
        );
    }
    // The newest 10% of keys take most of the draws (about 73%).
    let recent: u64 = counts[(last - 99) as usize..].iter().sum();
    assert!(recent as f64 > 0.6 * DRAWS as f64, "{recent}");

    // As inserts are acknowledged, draws follow the new last key.
    for last in 1000..3000 {
        let v = g.next(&mut rng, last);
        assert!((1..=last).contains(&v));
    }
}

// --------------------------------------------------- uniform & hotspot ---

#[test]
fn uniform_chi_square() {
    let g = UniformGen::new(10, 109);
    let mut rng = rng_for(6, 0);
    let mut counts = vec![0u64; 100];
    for _ in 0..DRAWS {
        let v = g.next(&mut rng);
        assert!((10..=109).contains(&v));
        counts[(v - 10) as usize] += 1;
    }
    let statistic = chi2(&counts, &[0.01; 100]);
    let threshold = chi2_threshold(99, 5.0);
    assert!(statistic < threshold, "chi2 {statistic} >= {threshold}");
}

#[test]
fn hotspot_fractions() {
    let g = Hotspot::new(0, 999, 0.2, 0.8);
    assert_eq!(g.hot_len(), 200);
    let mut rng = rng_for(7, 0);
    let mut counts = vec![0u64; 1000];
    for _ in 0..DRAWS {
        counts[g.next(&mut rng) as usize] += 1;
    }
    let hot: u64 = counts[..200].iter().sum();
    assert_binomial("hot draws", hot, DRAWS as u64, 0.8);
    // Uniform within each set.
    let p: Vec<f64> = (0..1000)
        .map(|i| if i < 200 { 0.8 / 200.0 } else { 0.2 / 800.0 })
        .collect();
    let statistic = chi2(&counts, &p);
    let threshold = chi2_threshold(999, 5.0);
    assert!(statistic < threshold, "chi2 {statistic} >= {threshold}");

    // With a lower bound and a fraction that does not divide evenly.
    let g = Hotspot::new(100, 110, 0.3, 0.5);
    assert_eq!(g.hot_len(), 3);
    let hot = (0..100_000)
        .filter(|_| {
            let v = g.next(&mut rng);
            assert!((100..=110).contains(&v));
            v < 103
        })
        .count();
    assert_binomial("hot draws", hot as u64, 100_000, 0.5);
}

// --------------------------------------------------------- exponential ---

#[test]
fn exponential_percentile_and_mean() {
    let (percentile, range) = (95.0, 1000.0);
    let g = Exponential::new(percentile, range);
    let mut rng = rng_for(8, 0);
    let draws: Vec<u64> = (0..DRAWS).map(|_| g.next(&mut rng)).collect();

    // floor(X) < range exactly when X < range, so the `percentile`% quantile
    // is `range`.
    let below = draws.iter().filter(|&&v| (v as f64) < range).count();
    assert_binomial(
        "draws below range",
        below as u64,
        DRAWS as u64,
        percentile / 100.0,
    );

    // floor(X) is geometric with q = e^-gamma.
    let gamma = -(1.0 - percentile / 100.0f64).ln() / range;
    let q = (-gamma).exp();
    let mean = q / (1.0 - q);
    let sigma = (q / (1.0 - q).powi(2) / DRAWS as f64).sqrt();
    let observed = draws.iter().sum::<u64>() as f64 / DRAWS as f64;
    assert!(
        (observed - mean).abs() < 5.0 * sigma,
        "mean {observed}, expected {mean} ± {}",
        5.0 * sigma
    );
}

// ------------------------------------------------------------ counters ---

#[test]
fn sequential_wraps_across_threads() {
    let s = Arc::new(Sequential::new(10, 109));
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let s = Arc::clone(&s);
            std::thread::spawn(move || (0..3000).map(|_| s.next()).collect::<Vec<u64>>())
        })
        .collect();
    let mut counts = vec![0u32; 100];
    for h in handles {
        for v in h.join().unwrap() {
            counts[(v - 10) as usize] += 1;
        }
    }
    // 12,000 draws over 100 values: each value exactly 120 times.
    assert!(counts.iter().all(|&c| c == 120), "{counts:?}");

    let s = Sequential::new(0, 2);
    let got: Vec<u64> = (0..7).map(|_| s.next()).collect();
    assert_eq!(got, [0, 1, 2, 0, 1, 2, 0]);
}

#[test]
fn counter_hands_out_each_value_once() {
    let c = Arc::new(Counter::new(500));
    assert_eq!(c.last(), 499);
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let c = Arc::clone(&c);
            std::thread::spawn(move || (0..10_000).map(|_| c.next()).collect::<Vec<u64>>())
        })
        .collect();
    let mut all: Vec<u64> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    all.sort_unstable();
    assert_eq!(all, (500..40_500).collect::<Vec<u64>>());
    assert_eq!(c.last(), 40_499);
}

#[test]
fn acknowledged_counter_out_of_order_from_threads() {
    const START: u64 = 1000;
    // More than the 2^20-value window is outstanding behind STALLED.
    const END: u64 = START + 1_300_000;
    const STALLED: u64 = START + 100;
    let c = Arc::new(AcknowledgedCounter::new(START));
    assert_eq!(c.last(), START - 1);

    let handles: Vec<_> = (0..4u64)
        .map(|t| {
            let c = Arc::clone(&c);
            std::thread::spawn(move || {
                let mut rng = rng_for(9, t);
                let mut pending: Vec<u64> = Vec::new();
                loop {
                    let v = c.next();
                    if v >= END {
                        break;
                    }
                    pending.push(v);
                    if pending.len() > (next_f64(&mut rng) * 64.0) as usize {
                        // Acknowledge the batch newest first.
                        while let Some(v) = pending.pop() {
                            if v != STALLED {
                                c.acknowledge(v);
                            }
                            // Nothing still pending may be reported as done.
                            if let Some(&oldest) = pending.first() {
                                assert!(c.last() < oldest);
                            }
                        }
                    }
                }
                while let Some(v) = pending.pop() {
                    if v != STALLED {
                        c.acknowledge(v);
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(c.last(), STALLED - 1);
    c.acknowledge(STALLED);
    assert_eq!(c.last(), END - 1);
}

// ------------------------------------------------------------ discrete ---

#[test]
fn discrete_proportions() {
    #[derive(Copy, Clone, Debug, PartialEq)]
    enum Op {
        Read,
        Update,
        Insert,
        Scan,
    }
    let d = Discrete::new(vec![
        (Op::Read, 0.5),
        (Op::Update, 0.25),
        (Op::Insert, 0.0),
        (Op::Scan, 0.25),
    ]);
    assert!(!d.is_empty());
    let mut rng = rng_for(10, 0);
    let mut counts = [0u64; 4];
    for _ in 0..DRAWS {
        counts[d.next(&mut rng) as usize] += 1;
    }
    assert_eq!(counts[Op::Insert as usize], 0);
    for (op, p) in [(Op::Read, 0.5), (Op::Update, 0.25), (Op::Scan, 0.25)] {
        assert_binomial(&format!("{op:?}"), counts[op as usize], DRAWS as u64, p);
    }
    assert!(Discrete::<u8>::new(vec![]).is_empty());
}

// ----------------------------------------------------------- histogram ---

fn temp_file(name: &str, contents: &str) -> std::path::PathBuf {
    let path =
        std::env::temp_dir().join(format!("sojourn-generators-{}-{name}", std::process::id()));
    std::fs::write(&path, contents).unwrap();
    path
}

#[test]
fn histogram_file_proportions() {
    let path = temp_file("hist.txt", "BlockSize\t10\n0\t1\n1\t3\n2\t0\n3\t4\n");
    let h = HistogramGen::from_file(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(h.block_size(), 10);
    let mut rng: Rng = rng_for(11, 0);
    let mut counts = [0u64; 5];
    for _ in 0..100_000 {
        let v = h.next(&mut rng);
        assert_eq!(v % 10, 0);
        counts[(v / 10) as usize] += 1;
    }
    assert_eq!(counts[0], 0);
    assert_eq!(counts[3], 0);
    assert_binomial("length 10", counts[1], 100_000, 1.0 / 8.0);
    assert_binomial("length 20", counts[2], 100_000, 3.0 / 8.0);
    assert_binomial("length 40", counts[4], 100_000, 4.0 / 8.0);
}

#[test]
fn histogram_bad_file_names_the_line() {
    let path = temp_file("bad-hist.txt", "BlockSize\t10\n0\t1\n1\t3\n2\tmany\n");
    let err = HistogramGen::from_file(&path).unwrap_err();
    std::fs::remove_file(&path).unwrap();
    assert!(
        matches!(err, GeneratorError::Parse { line: 4, .. }),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(message.contains("bad-hist.txt"), "{message}");
    assert!(message.contains("line 4"), "{message}");
    assert!(message.contains("bucket<TAB>count"), "{message}");
    assert!(message.contains("many"), "{message}");

    let missing = std::env::temp_dir().join("sojourn-generators-no-such-file.txt");
    let err = HistogramGen::from_file(&missing).unwrap_err();
    assert!(matches!(err, GeneratorError::Io { .. }));
    assert!(err
        .to_string()
        .contains("sojourn-generators-no-such-file.txt"));
}
