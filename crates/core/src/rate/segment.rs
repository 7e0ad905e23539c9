//! The parts of a profile the results summarise one by one.

use std::time::Duration;

/// More segments than this is a mistake (a staircase with a step too
/// small), and each keeps a summary of its own.
pub const MAX_SEGMENTS: usize = 200;

/// A part of a profile that the results summarise on its own.
#[derive(Clone, Debug, PartialEq)]
pub struct Segment {
    /// The segment as written (`ramp 1000..50000 in 60s`), or one step of
    /// a staircase (`stairs step 3: 3k`).
    pub label: String,
    pub start: Duration,
    pub end: Duration,
    /// Operations the segment offers on average.
    pub expected: f64,
}

impl Segment {
    /// Mean offered rate over the segment.
    pub fn mean_rate(&self) -> f64 {
        let s = (self.end - self.start).as_secs_f64();
        if s > 0.0 {
            self.expected / s
        } else {
            0.0
        }
    }
}
