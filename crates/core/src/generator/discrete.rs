//! YCSB's `DiscreteGenerator`: a weighted choice among a few values, used for
//! the operation mix.
//!
//! The walk is YCSB's (one uniform draw, compared against each normalised
//! weight in the given order) so that the same draw picks the same operation.
//! Weights are normalised once here rather than on every draw as Java does.

use super::rng::{next_f64, Rng};

/// A weighted choice among values of `T`.
#[derive(Clone, Debug, PartialEq)]
pub struct Discrete<T: Copy> {
    /// Values with their weight divided by the sum of weights, in the order
    /// given; only positive weights are kept.
    items: Vec<(T, f64)>,
}

impl<T: Copy> Discrete<T> {
    /// Keeps the items whose weight is greater than 0 (NaN weights are
    /// dropped too), in the given order.
    pub fn new(items: Vec<(T, f64)>) -> Discrete<T> {
        let mut items: Vec<(T, f64)> = items.into_iter().filter(|&(_, w)| w > 0.0).collect();
        let sum: f64 = items.iter().map(|&(_, w)| w).sum();
        for item in &mut items {
            item.1 /= sum;
        }
        Discrete { items }
    }

    /// Whether no item has a positive weight; [`Discrete::next`] must not be
    /// called then.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Number of items with a positive weight.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// One weighted choice.
    ///
    /// # Panics
    /// When the generator [`is_empty`](Discrete::is_empty).
    #[inline]
    pub fn next(&self, rng: &mut Rng) -> T {
        self.next_from_u(next_f64(rng))
    }

    #[inline]
    pub(crate) fn next_from_u(&self, mut u: f64) -> T {
        for &(value, w) in &self.items {
            if u < w {
                return value;
            }
            u -= w;
        }
        // Rounding in the normalised weights can leave a sliver of [0, 1)
        // past the last item; it belongs to the last item. (Java throws.)
        match self.items.last() {
            Some(&(value, _)) => value,
            None => panic!("Discrete::next called with no item of positive weight"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_in_order() {
        let d = Discrete::new(vec![('a', 0.5), ('b', 0.0), ('c', 0.3), ('d', 0.2)]);
        assert_eq!(d.len(), 3);
        assert_eq!(d.next_from_u(0.0), 'a');
        assert_eq!(d.next_from_u(0.4999), 'a');
        assert_eq!(d.next_from_u(0.5), 'c');
        assert_eq!(d.next_from_u(0.7999), 'c');
        assert_eq!(d.next_from_u(0.8001), 'd');
        assert_eq!(d.next_from_u(1.0 - f64::EPSILON), 'd');
    }

    #[test]
    fn weights_need_not_sum_to_one() {
        let d = Discrete::new(vec![(1u8, 3.0), (2u8, 1.0)]);
        assert_eq!(d.next_from_u(0.74), 1);
        assert_eq!(d.next_from_u(0.76), 2);
    }

    #[test]
    fn empty() {
        let d: Discrete<u8> = Discrete::new(vec![(1, 0.0), (2, -1.0), (3, f64::NAN)]);
        assert!(d.is_empty());
        assert!(std::panic::catch_unwind(|| d.next_from_u(0.5)).is_err());
    }
}
