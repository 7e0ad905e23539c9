//! The offered rate of an open-loop phase: one constant (`-target`), a rate
//! profile (`--rate`, property `rate`) or an arrival trace (`--trace`,
//! property `trace`). [`Target`] is the one value the executor's groups
//! carry; the schedule asks it when each arrival is due, readers ask it
//! for its mean (what is stored as the run's target), its peak (what sizes
//! the runtime threads) and its segments (what the summary breaks out).
//!
//! A profile is a sequence of segments, each a few words:
//!
//! ```text
//! hold 5000 for 60s            a constant rate      (also: step R for D)
//! ramp 1000..50000 in 60s      a linear change
//! sine 10k..30k period 20s for 2m
//!                              a sine wave between two rates, rising first
//! burst 0..80k on 2s off 8s for 1m
//!                              on/off bursts (one rate alone: 0 when off)
//! stairs 1000..20000 by 1000 every 30s
//!                              a staircase: one segment per step
//! pause 10s                    nothing offered
//! ```
//!
//! joined by commas (or `;`): `ramp 1000..50000 in 60s, hold 50000 for
//! 120s, step 80000 for 30s`. Rates are operations per second (`k` and `M`
//! multiply by 10^3 and 10^6); durations take `ms`, `s`, `m` or `h`.
//!
//! Intended start times follow the profile by time-rescaling: arrivals are
//! drawn at unit rate in "expected operations" (exponential gaps for
//! Poisson, gaps of one for uniform) and mapped through the inverse of the
//! cumulative rate, which gives exactly a non-homogeneous Poisson process
//! (or gaps of 1/rate(t)) from one seeded stream, so dealt shares rejoin
//! into the whole as for a constant rate.

mod error;
mod profile;
mod segment;
mod shape;
mod trace;

use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

pub use error::RateError;
use profile::Profile;
pub use profile::GRAMMAR;
pub use segment::{Segment, MAX_SEGMENTS};
use shape::Shape;

/// What a phase offers: a constant rate, a profile or a trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Target(Arc<Shape>);

/// Operations per second that several groups' `targets` offer together
/// `t` after the start (`None` without targets, for a trace, and past the
/// end).
pub fn total_rate_at(targets: &[Target], t: Duration) -> Option<f64> {
    if targets.is_empty() {
        return None;
    }
    targets.iter().map(|g| g.rate_at(t)).sum()
}

impl Target {
    /// `rate` operations per second, for ever.
    pub fn constant(rate: f64) -> Target {
        Target(Arc::new(Shape::Constant(rate)))
    }

    /// The rate, when it is one constant.
    pub fn as_constant(&self) -> Option<f64> {
        match *self.0 {
            Shape::Constant(r) => Some(r),
            _ => None,
        }
    }

    /// How the target was given: `--rate` text, `trace FILE`, or the rate.
    pub fn describe(&self) -> String {
        match &*self.0 {
            Shape::Constant(r) => format!("{r}"),
            Shape::Profile(p) => p.text.clone(),
            Shape::Trace { label, .. } => label.clone(),
        }
    }

    /// When the schedule ends by itself (`None`: a constant never does).
    pub fn length(&self) -> Option<Duration> {
        match &*self.0 {
            Shape::Constant(_) => None,
            Shape::Profile(p) => Some(Duration::from_nanos(p.end_ns() as u64)),
            Shape::Trace { instants, .. } => {
                Some(Duration::from_nanos(instants.last().map_or(0, |t| t + 1)))
            }
        }
    }

    /// Operations per second on average over the target's length: what a
    /// run stores as its target.
    pub fn mean(&self) -> f64 {
        match &*self.0 {
            Shape::Constant(r) => *r,
            _ => {
                let s = self.length().unwrap_or_default().as_secs_f64();
                if s > 0.0 {
                    self.expected() / s
                } else {
                    0.0
                }
            }
        }
    }

    /// The highest rate reached (a trace's: its busiest second).
    pub fn peak(&self) -> f64 {
        match &*self.0 {
            Shape::Constant(r) => *r,
            Shape::Profile(p) => p.peak(),
            Shape::Trace { instants, .. } => {
                let mut best = 0usize;
                let mut from = 0usize;
                for (i, &t) in instants.iter().enumerate() {
                    while instants[from] + 1_000_000_000 <= t {
                        from += 1;
                    }
                    best = best.max(i + 1 - from);
                }
                best as f64
            }
        }
    }

    /// Operations the whole target offers on average (`f64::INFINITY` for
    /// a constant).
    pub fn expected(&self) -> f64 {
        match &*self.0 {
            Shape::Constant(_) => f64::INFINITY,
            Shape::Profile(p) => p.total,
            Shape::Trace { instants, .. } => instants.len() as f64,
        }
    }

    /// The segments results are broken into; empty for a constant rate and
    /// for a profile of one segment (the whole run is that segment).
    pub fn segments(&self) -> Vec<Segment> {
        match &*self.0 {
            Shape::Profile(p) if p.segments.len() > 1 => p.segments.clone(),
            _ => Vec::new(),
        }
    }

    /// Scaled for one of `n` clients sharing the load: each offers its
    /// `1/n` share of every segment (a trace: every n-th arrival from
    /// `index`), so together they offer the whole.
    pub fn share(&self, index: u64, n: u64) -> Target {
        let n = n.max(1);
        match &*self.0 {
            Shape::Constant(r) => Target::constant(r / n as f64),
            Shape::Profile(p) => Target(Arc::new(Shape::Profile(p.scaled(1.0 / n as f64)))),
            Shape::Trace { label, instants } => Target(Arc::new(Shape::Trace {
                label: label.clone(),
                instants: instants
                    .iter()
                    .skip(index as usize)
                    .step_by(n as usize)
                    .copied()
                    .collect(),
            })),
        }
    }

    /// The rate offered `t` after the start (`None` for a trace of
    /// instants, whose rate is only what arrived, and after the end).
    pub fn rate_at(&self, t: Duration) -> Option<f64> {
        let x = t.as_secs_f64();
        match &*self.0 {
            Shape::Constant(r) => Some(*r),
            Shape::Profile(p) => p.rate_at(x),
            Shape::Trace { .. } => None,
        }
    }

    /// The instant of the arrival `u` expected operations from the start
    /// (nanoseconds), or `None` once the target is over.
    #[inline]
    pub(crate) fn at(&self, u: f64) -> Option<f64> {
        match &*self.0 {
            Shape::Constant(r) => Some(u * 1e9 / r),
            Shape::Profile(p) => p.at(u),
            Shape::Trace { instants, .. } => instants.get(u as usize).map(|&t| t as f64),
        }
    }

    /// Whether arrivals are the trace's own (gaps of exactly one in `u`,
    /// whatever the arrival law).
    pub(crate) fn is_trace(&self) -> bool {
        matches!(*self.0, Shape::Trace { .. })
    }

    /// A profile from its text; errors name the segment and what was wrong.
    pub fn parse_profile(text: &str) -> Result<Target, RateError> {
        Ok(Target(Arc::new(Shape::Profile(Profile::parse(text)?))))
    }

    /// The trace in `path`, scaled: `speed` 2 replays it twice as fast (the
    /// same operations in half the time); `scale` multiplies the number of
    /// operations (0.5 keeps every other one on average, 3 sends three for
    /// each, spread over the gap to the next). `seed` picks which.
    pub fn read_trace(path: &Path, speed: f64, scale: f64, seed: u64) -> Result<Target, RateError> {
        let text = std::fs::read_to_string(path).map_err(|e| RateError::Read {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        Target::parse_trace(&text, &path.display().to_string(), speed, scale, seed)
    }

    /// [`Target::read_trace`] of text already read; `name` names it in
    /// errors.
    pub fn parse_trace(
        text: &str,
        name: &str,
        speed: f64,
        scale: f64,
        seed: u64,
    ) -> Result<Target, RateError> {
        trace::parse(text, name, speed, scale, seed).map(|shape| Target(Arc::new(shape)))
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}
