//! YCSB's `HistogramGenerator`: lengths drawn from a histogram file
//! (`fieldlengthdistribution=histogram`, `fieldlengthhistogram=FILE`).
//!
//! The file's first line is `BlockSize<TAB>b`; each further line is
//! `bucket<TAB>count`. Bucket `i` stands for lengths in `(i*b, (i+1)*b]` and
//! always yields its largest value, `(i+1)*b`, so the smallest length drawn
//! is `b`, never 0 (as YCSB documents).
//!
//! Two Java quirks are not reproduced, since they only distort the histogram
//! the user wrote: Java draws from `[0, total)` and tests `<= 0`, giving the
//! first bucket one extra unit of weight and the last one one fewer, and it
//! returns `(n-1)*b` rather than `n*b` for the last of `n` buckets. Here
//! bucket `i` is chosen with probability `count_i / total`, and a draw is a
//! binary search instead of Java's linear walk. Java inserts lines by bucket
//! number with `ArrayList.add(index, …)`, which only works for ascending
//! numbers; we require ascending numbers and treat skipped buckets as empty.
//! Fields may be separated by any whitespace, and blank lines are ignored.

use std::path::Path;

use super::rng::{below, Rng};

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

/// Largest number of buckets a file may declare, so that a typo in a bucket
/// number cannot allocate gigabytes.
const MAX_BUCKETS: u64 = 1 << 24;

/// Lengths drawn from a histogram of `block_size`-wide buckets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistogramGen {
    block_size: u64,
    /// `cumulative[i]` = sum of counts of buckets `0..=i`.
    cumulative: Vec<u64>,
}

impl HistogramGen {
    /// A histogram whose bucket `i` has weight `counts[i]` and yields
    /// `(i+1) * block_size`. With no positive count every draw is 0 (files
    /// with no positive count are rejected by [`HistogramGen::from_file`]).
    pub fn from_buckets(block_size: u64, counts: Vec<u64>) -> HistogramGen {
        let mut total = 0u64;
        let cumulative = counts
            .into_iter()
            .map(|c| {
                total = total.saturating_add(c);
                total
            })
            .collect();
        HistogramGen {
            block_size,
            cumulative,
        }
    }

    /// Read a YCSB histogram file.
    pub fn from_file(path: &Path) -> Result<HistogramGen, GeneratorError> {
        let text = std::fs::read_to_string(path).map_err(|reason| GeneratorError::Io {
            path: path.to_path_buf(),
            reason,
        })?;
        Self::parse(path, &text)
    }

    fn parse(path: &Path, text: &str) -> Result<HistogramGen, GeneratorError> {
        let parse_error = |line: usize, expected: &str, found: &str| GeneratorError::Parse {
            path: path.to_path_buf(),
            line,
            expected: expected.to_string(),
            found: found.to_string(),
        };
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.trim()))
            .filter(|(_, l)| !l.is_empty());

        const HEADER: &str = "`BlockSize<TAB>n` with n a non-negative integer";
        let (header_no, header) = lines.next().ok_or_else(|| GeneratorError::Invalid {
            path: path.to_path_buf(),
            message: format!("the file is empty; expected a first line {HEADER}"),
        })?;
        let block_size = match header.split_whitespace().collect::<Vec<_>>()[..] {
            ["BlockSize", n] => n.parse::<u64>().ok(),
            _ => None,
        }
        .ok_or_else(|| parse_error(header_no, HEADER, header))?;

        let mut counts: Vec<u64> = Vec::new();
        for (line_no, line) in lines {
            const LINE: &str = "`bucket<TAB>count` (two non-negative integers)";
            let fields: Vec<&str> = line.split_whitespace().collect();
            let parsed = match fields[..] {
                [b, c] => b.parse::<u64>().ok().zip(c.parse::<u64>().ok()),
                _ => None,
            };
            let (bucket, count) = parsed.ok_or_else(|| parse_error(line_no, LINE, line))?;
            let next_bucket = counts.len() as u64;
            if bucket < next_bucket {
                return Err(parse_error(
                    line_no,
                    &format!("a bucket number of at least {next_bucket} (buckets must be in ascending order)"),
                    line,
                ));
            }
            if bucket >= MAX_BUCKETS {
                return Err(parse_error(
                    line_no,
                    &format!("a bucket number below {MAX_BUCKETS}"),
                    line,
                ));
            }
            counts.resize(bucket as usize, 0);
            counts.push(count);
        }
        if counts.iter().all(|&c| c == 0) {
            return Err(GeneratorError::Invalid {
                path: path.to_path_buf(),
                message: "no bucket has a positive count; expected at least one `bucket<TAB>count` line with count > 0".to_string(),
            });
        }
        Ok(Self::from_buckets(block_size, counts))
    }

    /// The bucket width.
    pub fn block_size(&self) -> u64 {
        self.block_size
    }

    /// The mean of the lengths drawn.
    pub fn mean(&self) -> f64 {
        let total = self.cumulative.last().copied().unwrap_or(0);
        if total == 0 {
            return 0.0;
        }
        let mut previous = 0u64;
        let mut weighted = 0.0;
        for (i, &c) in self.cumulative.iter().enumerate() {
            weighted += (i as f64 + 1.0) * (c - previous) as f64;
            previous = c;
        }
        weighted / total as f64 * self.block_size as f64
    }

    #[inline]
    pub fn next(&self, rng: &mut Rng) -> u64 {
        let total = match self.cumulative.last() {
            Some(&t) if t > 0 => t,
            _ => return 0,
        };
        let r = below(rng, total);
        let bucket = self.cumulative.partition_point(|&c| c <= r) as u64;
        (bucket + 1).saturating_mul(self.block_size)
    }
}

#[cfg(test)]
mod tests {
    use super::super::rng::rng_for;
    use super::*;

    fn parse(text: &str) -> Result<HistogramGen, GeneratorError> {
        HistogramGen::parse(Path::new("hist.txt"), text)
    }

    #[test]
    fn parses_and_fills_gaps() {
        let h = parse("BlockSize\t10\n0\t1\n\n2\t3\r\n").unwrap();
        assert_eq!(h.block_size(), 10);
        assert_eq!(h.cumulative, vec![1, 1, 4]);
        assert!((h.mean() - (10.0 * 1.0 + 30.0 * 3.0) / 4.0).abs() < 1e-12);
    }

    #[test]
    fn zero_count_buckets_never_drawn() {
        let h = HistogramGen::from_buckets(4, vec![0, 5, 0, 5, 0]);
        let mut rng = rng_for(1, 0);
        for _ in 0..1000 {
            let v = h.next(&mut rng);
            assert!(v == 8 || v == 16, "{v}");
        }
        assert_eq!(HistogramGen::from_buckets(4, vec![]).next(&mut rng), 0);
        assert_eq!(HistogramGen::from_buckets(4, vec![0, 0]).next(&mut rng), 0);
    }

    #[test]
    fn errors_name_file_and_line() {
        let cases = [
            ("", "empty"),
            ("Blocksize\t10\n", "line 1"),
            ("BlockSize\tten\n", "line 1"),
            ("BlockSize\t10\n0\t1\n1\n", "line 3"),
            ("BlockSize\t10\n\n0\t1\n1\t-2\n", "line 4"),
            ("BlockSize\t10\n1\t1\n0\t1\n", "line 3"),
            ("BlockSize\t10\n99999999999\t1\n", "line 2"),
            ("BlockSize\t10\n0\t0\n", "no bucket"),
        ];
        for (text, expected) in cases {
            let message = parse(text).unwrap_err().to_string();
            assert!(message.contains("hist.txt"), "{message}");
            assert!(message.contains(expected), "{text:?}: {message}");
        }
    }
}
