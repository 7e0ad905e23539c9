//! Which key a template's `__key__` takes, as memtier_benchmark's key
//! patterns choose one from `key_minimum..=key_maximum`: `R` uniform, `G`
//! gaussian around a median, `S` sequential per connection, `P` sequential
//! over the connection's own slice of the range; and `Z`, YCSB's scrambled
//! zipfian (sojourn's own, where memtier's is unscrambled).

use crate::generator::{below, next_f64, Rng, ScrambledZipfian};

/// A key pattern, as memtier spells it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Pattern {
    Random,
    Gaussian,
    Sequential,
    Parallel,
    Zipfian,
}

impl Pattern {
    pub const ACCEPTED: &'static str = "R (uniform), G (gaussian), S (sequential), P (parallel \
         sequential: each connection its own slice) or Z (zipfian)";

    pub fn parse(s: &str) -> Option<Pattern> {
        Some(match s.trim() {
            "R" | "r" => Pattern::Random,
            "G" | "g" => Pattern::Gaussian,
            "S" | "s" => Pattern::Sequential,
            "P" | "p" => Pattern::Parallel,
            "Z" | "z" => Pattern::Zipfian,
            _ => return None,
        })
    }

    pub fn letter(self) -> char {
        match self {
            Pattern::Random => 'R',
            Pattern::Gaussian => 'G',
            Pattern::Sequential => 'S',
            Pattern::Parallel => 'P',
            Pattern::Zipfian => 'Z',
        }
    }
}

/// The key range and the gaussian's shape.
#[derive(Clone, Debug, PartialEq)]
pub struct KeySpace {
    pub min: u64,
    pub max: u64,
    pub median: f64,
    pub stddev: f64,
}

impl KeySpace {
    /// memtier's defaults for the gaussian: the middle of the range, a
    /// sixth of it.
    pub fn new(min: u64, max: u64, median: Option<f64>, stddev: Option<f64>) -> KeySpace {
        let span = (max - min) as f64;
        KeySpace {
            min,
            max,
            median: median.unwrap_or(min as f64 + span / 2.0),
            stddev: stddev.unwrap_or(span / 6.0),
        }
    }
}

/// One connection's draws for one template.
#[derive(Clone, Debug)]
pub enum KeyGen {
    Random {
        min: u64,
        /// `max - min + 1` (0: the whole of u64).
        span: u64,
    },
    Gaussian {
        min: u64,
        max: u64,
        median: f64,
        stddev: f64,
    },
    Sequential {
        next: u64,
        min: u64,
        max: u64,
    },
    Zipfian(ScrambledZipfian),
}

impl KeyGen {
    /// Connection `client` of `clients` (across every machine of the
    /// run, for `P`).
    pub fn new(pattern: Pattern, space: &KeySpace, client: u64, clients: u64) -> KeyGen {
        let (min, max) = (space.min, space.max);
        match pattern {
            Pattern::Random => KeyGen::Random {
                min,
                span: (max - min).wrapping_add(1),
            },
            Pattern::Gaussian => KeyGen::Gaussian {
                min,
                max,
                median: space.median,
                stddev: space.stddev,
            },
            Pattern::Sequential => KeyGen::Sequential {
                next: min,
                min,
                max,
            },
            Pattern::Parallel => {
                // memtier's split: equal slices, the last taking what is
                // left over.
                let clients = clients.max(1);
                let client = client % clients;
                let range = (max - min) / clients + 1;
                let lo = (min + range * client).min(max);
                let hi = if client == clients - 1 {
                    max
                } else {
                    (lo + range - 1).min(max)
                };
                KeyGen::Sequential {
                    next: lo,
                    min: lo,
                    max: hi,
                }
            }
            Pattern::Zipfian => KeyGen::Zipfian(ScrambledZipfian::new(min, max)),
        }
    }

    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        match self {
            KeyGen::Random { min, span } => *min + below(rng, *span),
            KeyGen::Gaussian {
                min,
                max,
                median,
                stddev,
            } => loop {
                // Box-Muller; a draw outside the range is drawn again, as
                // memtier does.
                let u1 = 1.0 - next_f64(rng);
                let u2 = next_f64(rng);
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                let k = (*median + z * *stddev).round();
                if k >= *min as f64 && k <= *max as f64 {
                    break k as u64;
                }
            },
            KeyGen::Sequential { next, min, max } => {
                let k = *next;
                *next = if k >= *max { *min } else { k + 1 };
                k
            }
            KeyGen::Zipfian(z) => z.next(rng),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::rng_for;

    #[test]
    fn every_pattern_stays_in_range() {
        let space = KeySpace::new(100, 199, None, None);
        let mut rng = rng_for(1, 1);
        for p in ["R", "G", "S", "P", "Z"] {
            let mut g = KeyGen::new(Pattern::parse(p).unwrap(), &space, 1, 4);
            for _ in 0..5000 {
                let k = g.next(&mut rng);
                assert!((100..=199).contains(&k), "{p}: {k}");
            }
        }
    }

    #[test]
    fn sequential_wraps_and_parallel_slices_the_range() {
        let space = KeySpace::new(0, 9, None, None);
        let mut rng = rng_for(1, 1);
        let mut s = KeyGen::new(Pattern::Sequential, &space, 0, 1);
        let drawn: Vec<u64> = (0..12).map(|_| s.next(&mut rng)).collect();
        assert_eq!(drawn, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1]);
        // 10 keys over 3 connections: slices of 4, the last takes the rest.
        let slices: Vec<Vec<u64>> = (0..3)
            .map(|c| {
                let mut g = KeyGen::new(Pattern::Parallel, &space, c, 3);
                (0..3).map(|_| g.next(&mut rng)).collect()
            })
            .collect();
        assert_eq!(slices, [vec![0, 1, 2], vec![4, 5, 6], vec![8, 9, 8]]);
    }

    #[test]
    fn gaussian_centres_on_its_median() {
        let space = KeySpace::new(0, 10_000, Some(2_000.0), Some(100.0));
        let mut rng = rng_for(3, 1);
        let mut g = KeyGen::new(Pattern::Gaussian, &space, 0, 1);
        let n = 20_000;
        let mean = (0..n).map(|_| g.next(&mut rng) as f64).sum::<f64>() / n as f64;
        // The mean of 20,000 draws of sd 100 is within 5 of 2,000 but for
        // one time in millions.
        assert!((mean - 2_000.0).abs() < 5.0, "{mean}");
        assert_eq!(Pattern::parse("x"), None);
        assert_eq!(Pattern::parse("p").map(Pattern::letter), Some('P'));
    }
}
