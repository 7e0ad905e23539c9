//! TPC-C's random numbers and strings (clause 4.3.2): uniform draws,
//! NURand with the run's C constants, the customers' last names from the
//! ten syllables, alphanumeric and numeric strings, zip codes, and the
//! `ORIGINAL` that 10% of items and stock carry.
//!
//! Drawn from the script workload's generator ([`Prng`]): any good
//! generator does, and one per connection seeded from the run's seed keeps
//! every run repeatable.

use crate::workload::script::prng::Prng;

/// The C constants of NURand (clause 2.1.6): one for the load's last
/// names, and the run's three. Fixed rather than drawn at each start, so
/// that a run in another process than the load still keeps the distance
/// clause 2.1.6.1 asks between the load's and the run's C for C_LAST (65
/// to 119, neither 96 nor 112): here 223 − 157 = 66.
pub const C_LAST_LOAD: u64 = 157;
pub const C_LAST_RUN: u64 = 223;
pub const C_ID: u64 = 259;
pub const C_OL_I_ID: u64 = 7911;

/// The syllables of a last name (clause 4.3.2.3).
const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

const ALPHANUMERIC: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// A generator with TPC-C's draws.
#[derive(Clone, Debug)]
pub struct Draw(pub Prng);

impl Draw {
    pub fn new(seed: u64) -> Draw {
        Draw(Prng::new(seed))
    }

    /// Uniform in `[lo, hi]`.
    pub fn uniform(&mut self, lo: u64, hi: u64) -> u64 {
        self.0.range(lo, hi)
    }

    /// NURand(A, x, y) with constant `c` (clause 2.1.6).
    pub fn nurand(&mut self, a: u64, x: u64, y: u64, c: u64) -> u64 {
        (((self.uniform(0, a) | self.uniform(x, y)) + c) % (y - x + 1)) + x
    }

    /// A customer number of the run: NURand(1023, 1, 3000).
    pub fn customer_id(&mut self) -> u64 {
        self.nurand(1023, 1, super::spec::CUSTOMERS, C_ID)
    }

    /// An item number of the run: NURand(8191, 1, 100000).
    pub fn item_id(&mut self) -> u64 {
        self.nurand(8191, 1, super::spec::ITEMS, C_OL_I_ID)
    }

    /// A last name's number for a run's lookup by name.
    pub fn last_name_number(&mut self) -> u64 {
        self.nurand(255, 0, 999, C_LAST_RUN)
    }

    /// A random alphanumeric string of `lo` to `hi` characters, added to
    /// `out`.
    pub fn astring(&mut self, lo: u64, hi: u64, out: &mut String) {
        let n = self.uniform(lo, hi);
        for _ in 0..n {
            let c = ALPHANUMERIC[self.uniform(0, ALPHANUMERIC.len() as u64 - 1) as usize];
            out.push(c as char);
        }
    }

    /// A random string of `lo` to `hi` digits, added to `out`.
    pub fn nstring(&mut self, lo: u64, hi: u64, out: &mut String) {
        let n = self.uniform(lo, hi);
        for _ in 0..n {
            out.push((b'0' + self.uniform(0, 9) as u8) as char);
        }
    }

    /// A zip code: four random digits and `11111` (clause 4.3.2.7).
    pub fn zip(&mut self, out: &mut String) {
        self.nstring(4, 4, out);
        out.push_str("11111");
    }

    /// `I_DATA` or `S_DATA`: 26 to 50 characters, of which 10% hold
    /// `ORIGINAL` at a random place (clause 4.3.3.1).
    pub fn data(&mut self, out: &mut String) {
        let start = out.len();
        self.astring(26, 50, out);
        if self.uniform(1, 10) == 1 {
            let len = out.len() - start;
            let at = start + self.uniform(0, (len - 8) as u64) as usize;
            out.replace_range(at..at + 8, "ORIGINAL");
        }
    }

    /// A fixed-point amount in `[lo, hi]` cents.
    pub fn cents(&mut self, lo: u64, hi: u64) -> i64 {
        self.uniform(lo, hi) as i64
    }

    /// Shuffle `v` (Fisher-Yates).
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.uniform(0, i as u64) as usize;
            v.swap(i, j);
        }
    }
}

/// The last name of number `n` (0 to 999): its three digits' syllables.
pub fn last_name(n: u64, out: &mut String) {
    for d in [n / 100, (n / 10) % 10, n % 10] {
        out.push_str(SYLLABLES[d as usize]);
    }
}

/// An amount in cents as SQL's fixed point (`-10.00`).
pub fn money(cents: i64, out: &mut String) {
    use std::fmt::Write;
    let sign = if cents < 0 { "-" } else { "" };
    let c = cents.unsigned_abs();
    let _ = write!(out, "{sign}{}.{:02}", c / 100, c % 100);
}

/// An amount read back from the database (`12.34`, `12.3`, `-10`) in
/// cents.
pub fn parse_cents(text: &str) -> Option<i64> {
    let v: f64 = text.trim().parse().ok()?;
    Some((v * 100.0).round() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_names_are_the_syllables_of_the_digits() {
        let mut s = String::new();
        last_name(371, &mut s);
        assert_eq!(s, "PRICALLYOUGHT");
        s.clear();
        last_name(0, &mut s);
        assert_eq!(s, "BARBARBAR");
    }

    #[test]
    fn nurand_stays_in_range_and_favours_some_values() {
        let mut d = Draw::new(7);
        let mut counts = vec![0u32; 3001];
        for _ in 0..300_000 {
            let c = d.customer_id();
            assert!((1..=3000).contains(&c));
            counts[c as usize] += 1;
        }
        // Uniform would give each about 100; NURand's OR skews them far
        // apart.
        let max = *counts.iter().max().unwrap();
        let min = *counts[1..].iter().min().unwrap();
        assert!(max > 4 * min.max(1), "max {max}, min {min}");
    }

    #[test]
    fn a_tenth_of_the_data_strings_say_original() {
        let mut d = Draw::new(3);
        let mut with = 0;
        for _ in 0..10_000 {
            let mut s = String::new();
            d.data(&mut s);
            assert!((26..=50).contains(&s.len()), "{s}");
            with += s.contains("ORIGINAL") as u32;
        }
        assert!((800..1200).contains(&with), "{with} of 10000");
    }

    #[test]
    fn money_reads_back_as_it_was_written() {
        for cents in [-1000, -5, 0, 7, 1234, 500_000] {
            let mut s = String::new();
            money(cents, &mut s);
            assert_eq!(parse_cents(&s), Some(cents), "{s}");
        }
        assert_eq!(parse_cents("-10.0"), Some(-1000), "SQLite's REAL");
    }
}
