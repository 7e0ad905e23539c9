//! Uniform choice over an inclusive range, and YCSB's hotspot distribution
//! (two uniform ranges, one of them favoured).
//!
//! Java draws `lb + abs(nextLong()) % interval`, which is slightly biased
//! towards low values; we use an exact bounded draw instead. Only the
//! distribution is YCSB's, not the sequence, so nothing observable changes.

use super::rng::{below, next_f64, Rng};

/// A uniform draw from `lb..=ub` (YCSB's `UniformLongGenerator`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct UniformGen {
    lb: u64,
    /// `ub - lb + 1`, with 0 standing for the full 2^64 range.
    span: u64,
}

impl UniformGen {
    /// Values from `lb` to `ub` inclusive. `ub < lb` yields `lb` only.
    pub fn new(lb: u64, ub: u64) -> UniformGen {
        UniformGen {
            lb,
            span: ub.saturating_sub(lb).wrapping_add(1),
        }
    }

    #[inline]
    pub fn next(&self, rng: &mut Rng) -> u64 {
        self.lb.wrapping_add(below(rng, self.span))
    }
}

/// YCSB's `HotspotIntegerGenerator`: a fraction `hot_op_fraction` of draws
/// falls uniformly in the first `floor(interval * hot_data_fraction)` values
/// of `lb..=ub`, the rest uniformly in the remaining values.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Hotspot {
    lb: u64,
    hot: u64,
    cold: u64,
    hot_op_fraction: f64,
}

impl Hotspot {
    /// As in YCSB, a fraction outside `[0, 1]` is treated as 0 and bounds given
    /// in the wrong order are swapped. When one of the two sets is empty
    /// every draw goes to the other, so no parameters make a draw divide by
    /// zero.
    pub fn new(lb: u64, ub: u64, hot_data_fraction: f64, hot_op_fraction: f64) -> Hotspot {
        let in_unit = |f: f64| if (0.0..=1.0).contains(&f) { f } else { 0.0 };
        let (lb, ub) = if lb <= ub { (lb, ub) } else { (ub, lb) };
        // Computed in u128 so that the full u64 range does not wrap to 0.
        let interval = u128::from(ub - lb) + 1;
        let hot = ((interval as f64 * in_unit(hot_data_fraction)) as u128).min(interval);
        let cold = interval - hot;
        Hotspot {
            lb,
            // Each set holds at most 2^64 values; 2^64 itself wraps to 0,
            // which `below` reads as the full range.
            hot: hot as u64,
            cold: cold as u64,
            hot_op_fraction: if hot == 0 {
                0.0
            } else if cold == 0 {
                1.0
            } else {
                in_unit(hot_op_fraction)
            },
        }
    }

    /// Size of the hot set (its values are `lb..lb + hot_len()`).
    pub fn hot_len(&self) -> u64 {
        self.hot
    }

    #[inline]
    pub fn next(&self, rng: &mut Rng) -> u64 {
        if next_f64(rng) < self.hot_op_fraction {
            self.lb.wrapping_add(below(rng, self.hot))
        } else {
            self.lb
                .wrapping_add(self.hot)
                .wrapping_add(below(rng, self.cold))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::rng::rng_for;
    use super::*;

    #[test]
    fn uniform_bounds() {
        let mut rng = rng_for(1, 0);
        let g = UniformGen::new(5, 7);
        let mut seen = [false; 3];
        for _ in 0..1000 {
            let v = g.next(&mut rng);
            assert!((5..=7).contains(&v));
            seen[(v - 5) as usize] = true;
        }
        assert_eq!(seen, [true; 3]);
        assert_eq!(UniformGen::new(9, 9).next(&mut rng), 9);
        assert_eq!(UniformGen::new(9, 3).next(&mut rng), 9);
        // Full range: no overflow, no panic.
        UniformGen::new(0, u64::MAX).next(&mut rng);
    }

    #[test]
    fn hotspot_degenerate_sets() {
        let mut rng = rng_for(2, 0);
        // No hot set: every draw is cold even though hot ops are asked for.
        let g = Hotspot::new(0, 9, 0.0, 1.0);
        for _ in 0..100 {
            assert!(g.next(&mut rng) <= 9);
        }
        // Everything hot: no cold draws can happen.
        let g = Hotspot::new(10, 19, 1.0, 0.0);
        assert_eq!(g.hot_len(), 10);
        for _ in 0..100 {
            assert!((10..=19).contains(&g.next(&mut rng)));
        }
        // Single value, swapped bounds, out-of-range fractions.
        assert_eq!(Hotspot::new(4, 4, 0.5, 0.5).next(&mut rng), 4);
        let g = Hotspot::new(19, 10, 2.0, -1.0);
        assert_eq!(g.hot_len(), 0);
        assert!((10..=19).contains(&g.next(&mut rng)));
        Hotspot::new(0, u64::MAX, 0.5, 0.5).next(&mut rng);
        Hotspot::new(0, u64::MAX, 1.0, 0.5).next(&mut rng);
    }
}
