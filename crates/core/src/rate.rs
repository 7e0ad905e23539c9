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

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// More segments than this is a mistake (a staircase with a step too
/// small), and each keeps a summary of its own.
pub const MAX_SEGMENTS: usize = 200;

/// What a phase offers: a constant rate, a profile or a trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Target(Arc<Shape>);

#[derive(Debug, PartialEq)]
enum Shape {
    Constant(f64),
    Profile(Profile),
    /// Intended start times in nanoseconds after the start, in order.
    Trace {
        label: String,
        instants: Vec<u64>,
    },
}

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
            Shape::Profile(p) => p.pieces.iter().map(|x| x.kind.peak()).fold(0.0, f64::max),
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
            Shape::Profile(p) => {
                let i = p.pieces.partition_point(|q| q.start + q.len <= x);
                let q = p.pieces.get(i)?;
                Some(q.kind.rate(x - q.start, q.len))
            }
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
        let at = |line: usize, problem: String| RateError::Trace {
            file: PathBuf::from(name),
            line,
            problem,
        };
        let mut label = format!("trace {name}");
        if speed != 1.0 {
            label.push_str(&format!(" at {speed}x speed"));
        }
        if scale != 1.0 {
            label.push_str(&format!(" scaled {scale}x"));
        }
        let lines: Vec<(usize, &str)> = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.trim()))
            .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
            .collect();
        let Some(&(_, first)) = lines.first() else {
            return Err(at(
                1,
                "holds no arrivals (one time per line, or second,rate lines)".into(),
            ));
        };
        if first.contains(',') {
            let series = rate_series(&lines, &at)?;
            let mut p = Profile::from_series(&series, speed, scale * speed);
            p.text = label;
            return Ok(Target(Arc::new(Shape::Profile(p))));
        }
        let mut instants = Vec::with_capacity(lines.len());
        let mut origin: Option<f64> = None;
        let mut last = f64::NEG_INFINITY;
        for &(n, l) in &lines {
            let secs = match l.parse::<f64>() {
                Ok(s) if s.is_finite() && s >= 0.0 => s,
                Ok(_) => return Err(at(n, format!("'{l}' is not a time of 0 seconds or more"))),
                Err(_) => {
                    let t = chrono::DateTime::parse_from_rfc3339(l).map_err(|_| {
                        at(
                            n,
                            format!(
                                "'{l}' is neither seconds from the start (0.25) nor an RFC 3339 \
                                 timestamp (2026-11-26T05:03:12.250Z)"
                            ),
                        )
                    })?;
                    let abs = t.timestamp() as f64 + f64::from(t.timestamp_subsec_nanos()) / 1e9;
                    abs - *origin.get_or_insert(abs)
                }
            };
            if secs < last {
                return Err(at(
                    n,
                    format!("{l} comes before the line above it: arrivals must be in time order"),
                ));
            }
            last = secs;
            instants.push(secs * 1e9 / speed);
        }
        if scale != 1.0 {
            instants = rescale(&instants, scale, seed);
        }
        Ok(Target(Arc::new(Shape::Trace {
            label,
            instants: instants.into_iter().map(|t| t.round() as u64).collect(),
        })))
    }
}

/// `second,rate` lines (a header line allowed): a rate per interval, each
/// held until the next line's second (the last for the gap before it).
fn rate_series(
    lines: &[(usize, &str)],
    at: &dyn Fn(usize, String) -> RateError,
) -> Result<Vec<(f64, f64)>, RateError> {
    let mut series: Vec<(f64, f64)> = Vec::new();
    for (i, &(n, l)) in lines.iter().enumerate() {
        let mut cols = l.split(',').map(str::trim);
        let (a, b) = (cols.next().unwrap_or(""), cols.next().unwrap_or(""));
        let parsed = (a.parse::<f64>(), b.parse::<f64>());
        let (Ok(t), Ok(r)) = parsed else {
            if i == 0 {
                continue; // a header
            }
            return Err(at(n, format!("'{l}' is not second,rate (two numbers)")));
        };
        if !(t.is_finite() && t >= 0.0) {
            return Err(at(
                n,
                format!("second {a} is not a time of 0 seconds or more"),
            ));
        }
        if !(r.is_finite() && r >= 0.0) {
            return Err(at(
                n,
                format!("rate {b} is not a rate of 0 operations per second or more"),
            ));
        }
        if let Some(&(prev, _)) = series.last() {
            if t <= prev {
                return Err(at(
                    n,
                    format!("second {a} does not come after the line above's ({prev}): seconds must rise"),
                ));
            }
        }
        series.push((t, r));
    }
    if series.is_empty() {
        return Err(at(lines[0].0, "holds no second,rate lines".into()));
    }
    Ok(series)
}

/// `scale` arrivals for each of `instants` on average: below 1 a seeded
/// choice of which to keep; above, the extra ones spread evenly over the
/// gap to the next arrival, so the trace's shape holds at every scale.
fn rescale(instants: &[f64], scale: f64, seed: u64) -> Vec<f64> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x7ace_0000_0000_0001);
    let mut out = Vec::with_capacity((instants.len() as f64 * scale) as usize + 1);
    for (i, &t) in instants.iter().enumerate() {
        let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let k = scale.floor() as usize + usize::from(u < scale.fract());
        let gap = instants.get(i + 1).map_or(0.0, |n| n - t);
        out.extend((0..k).map(|j| t + gap * j as f64 / k as f64));
    }
    out
}

/// A bad `--rate` profile or `--trace` file.
#[derive(Debug, thiserror::Error)]
pub enum RateError {
    #[error("segment {index} ('{text}'): {problem}")]
    Segment {
        index: usize,
        text: String,
        problem: String,
    },
    #[error("{problem}")]
    Whole { problem: String },
    #[error("cannot read trace {}: {reason}", path.display())]
    Read { path: PathBuf, reason: String },
    #[error("{}:{line}: {problem}", file.display())]
    Trace {
        file: PathBuf,
        line: usize,
        problem: String,
    },
}

/// What one piece of a profile does over its length; rates in operations
/// per second, times in seconds from the piece's start.
#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Hold(f64),
    Ramp {
        from: f64,
        to: f64,
    },
    /// Between `low` and `high`, starting at the middle and rising.
    Sine {
        low: f64,
        high: f64,
        period: f64,
    },
    /// `high` for `on`, then `low` for `off`, again and again.
    Burst {
        low: f64,
        high: f64,
        on: f64,
        off: f64,
    },
}

impl Kind {
    fn peak(&self) -> f64 {
        match *self {
            Kind::Hold(r) => r,
            Kind::Ramp { from, to } => from.max(to),
            Kind::Sine { high, .. } | Kind::Burst { high, .. } => high,
        }
    }

    fn scaled(&self, f: f64) -> Kind {
        match *self {
            Kind::Hold(r) => Kind::Hold(r * f),
            Kind::Ramp { from, to } => Kind::Ramp {
                from: from * f,
                to: to * f,
            },
            Kind::Sine { low, high, period } => Kind::Sine {
                low: low * f,
                high: high * f,
                period,
            },
            Kind::Burst { low, high, on, off } => Kind::Burst {
                low: low * f,
                high: high * f,
                on,
                off,
            },
        }
    }

    /// Operations expected in the first `x` seconds of a piece `len` long.
    fn mass(&self, x: f64, len: f64) -> f64 {
        match *self {
            Kind::Hold(r) => r * x,
            Kind::Ramp { from, to } => from * x + (to - from) / len * x * x / 2.0,
            Kind::Sine { low, high, period } => {
                let (mid, amp, w) = (
                    (low + high) / 2.0,
                    (high - low) / 2.0,
                    std::f64::consts::TAU / period,
                );
                mid * x + amp / w * (1.0 - (w * x).cos())
            }
            Kind::Burst { low, high, on, off } => {
                let cycle = on + off;
                let n = (x / cycle).floor();
                let y = x - n * cycle;
                n * (high * on + low * off) + high * y.min(on) + low * (y - on).max(0.0)
            }
        }
    }

    fn rate(&self, x: f64, len: f64) -> f64 {
        match *self {
            Kind::Hold(r) => r,
            Kind::Ramp { from, to } => from + (to - from) * x / len,
            Kind::Sine { low, high, period } => {
                (low + high) / 2.0 + (high - low) / 2.0 * (std::f64::consts::TAU * x / period).sin()
            }
            Kind::Burst { low, high, on, off } => {
                if x - (x / (on + off)).floor() * (on + off) < on {
                    high
                } else {
                    low
                }
            }
        }
    }

    /// The `x` in `[0, len]` at which `mass(x) = m`, for `m` within the
    /// piece's mass.
    fn inverse(&self, m: f64, len: f64) -> f64 {
        let x = match *self {
            Kind::Hold(r) => m / r,
            Kind::Ramp { from, to } => {
                let k = (to - from) / len;
                // The root of k x^2 / 2 + from x - m written so that it
                // stays exact as k goes to 0.
                2.0 * m / (from + (from * from + 2.0 * k * m).max(0.0).sqrt())
            }
            Kind::Burst { low, high, on, off } => {
                let per_cycle = high * on + low * off;
                let n = (m / per_cycle).floor();
                let rem = m - n * per_cycle;
                let y = if rem < high * on {
                    rem / high
                } else if low > 0.0 {
                    on + (rem - high * on) / low
                } else {
                    on
                };
                n * (on + off) + y
            }
            Kind::Sine { .. } => {
                // Newton's method on the increasing mass, kept inside a
                // bracket that bisection narrows when a step leaves it.
                let (mut lo, mut hi) = (0.0, len);
                let mut x = (m / self.mass(len, len) * len).clamp(0.0, len);
                for _ in 0..100 {
                    let f = self.mass(x, len) - m;
                    if f.abs() < 1e-9 {
                        break;
                    }
                    if f > 0.0 {
                        hi = x;
                    } else {
                        lo = x;
                    }
                    let r = self.rate(x, len);
                    let next = x - f / r;
                    x = if r > 0.0 && next > lo && next < hi {
                        next
                    } else {
                        (lo + hi) / 2.0
                    };
                    if hi - lo < 1e-12 {
                        break;
                    }
                }
                x
            }
        };
        x.clamp(0.0, len)
    }
}

/// One stretch of a profile with one [`Kind`].
#[derive(Clone, Debug, PartialEq)]
struct Piece {
    kind: Kind,
    /// Seconds.
    start: f64,
    len: f64,
    /// Operations expected before the piece.
    before: f64,
    mass: f64,
}

#[derive(Clone, Debug, PartialEq)]
struct Profile {
    text: String,
    pieces: Vec<Piece>,
    segments: Vec<Segment>,
    total: f64,
}

impl Profile {
    fn end_ns(&self) -> f64 {
        self.pieces.last().map_or(0.0, |p| (p.start + p.len) * 1e9)
    }

    fn at(&self, u: f64) -> Option<f64> {
        if u >= self.total {
            return None;
        }
        // The last piece that starts at or before u with mass after it:
        // pieces of no mass (pauses) are stepped over.
        let i = self
            .pieces
            .partition_point(|p| p.before + p.mass <= u)
            .min(self.pieces.len() - 1);
        let p = &self.pieces[i];
        Some((p.start + p.kind.inverse(u - p.before, p.len)) * 1e9)
    }

    fn scaled(&self, f: f64) -> Profile {
        let mut out = Profile {
            text: self.text.clone(),
            pieces: Vec::new(),
            segments: Vec::new(),
            total: 0.0,
        };
        for p in &self.pieces {
            out.push(p.kind.scaled(f), p.len);
        }
        out.segments = self
            .segments
            .iter()
            .map(|s| Segment {
                expected: s.expected * f,
                ..s.clone()
            })
            .collect();
        out
    }

    fn push(&mut self, kind: Kind, len: f64) {
        let start = self.pieces.last().map_or(0.0, |p| p.start + p.len);
        let mass = kind.mass(len, len);
        self.pieces.push(Piece {
            kind,
            start,
            len,
            before: self.total,
            mass,
        });
        self.total += mass;
    }

    /// Close a segment over the pieces pushed since `from`.
    fn segment(&mut self, label: String, from: usize) {
        let ps = &self.pieces[from..];
        let start = ps.first().map_or(0.0, |p| p.start);
        let end = ps.last().map_or(start, |p| p.start + p.len);
        self.segments.push(Segment {
            label,
            start: Duration::from_secs_f64(start),
            end: Duration::from_secs_f64(end),
            expected: ps.iter().map(|p| p.mass).sum(),
        });
    }

    fn from_series(series: &[(f64, f64)], speed: f64, rate_factor: f64) -> Profile {
        let mut p = Profile {
            text: String::new(),
            pieces: Vec::new(),
            segments: Vec::new(),
            total: 0.0,
        };
        let origin = series[0].0;
        let last_gap = series.windows(2).last().map_or(1.0, |w| w[1].0 - w[0].0);
        for (i, &(t, r)) in series.iter().enumerate() {
            let next = series.get(i + 1).map_or(t + last_gap, |n| n.0);
            if i == 0 && t > origin {
                p.push(Kind::Hold(0.0), (t - origin) / speed);
            }
            p.push(Kind::Hold(r * rate_factor), (next - t) / speed);
        }
        p
    }

    fn parse(text: &str) -> Result<Profile, RateError> {
        let mut p = Profile {
            text: text.trim().to_string(),
            pieces: Vec::new(),
            segments: Vec::new(),
            total: 0.0,
        };
        if p.text.is_empty() {
            return Err(RateError::Whole {
                problem: format!("is empty; {}", GRAMMAR),
            });
        }
        // `;` joins segments too: in a suite's ycsb_run_parameters commas
        // part the parameters.
        for (i, part) in text.split([',', ';']).enumerate() {
            let words: Vec<&str> = part.split_whitespace().collect();
            let bad = |problem: String| RateError::Segment {
                index: i + 1,
                text: part.trim().to_string(),
                problem,
            };
            let from = p.pieces.len();
            let label = words.join(" ");
            match words.as_slice() {
                ["hold" | "step", rate, "for", d] => p.push(
                    Kind::Hold(parse_rate(rate).map_err(&bad)?),
                    parse_duration(d).map_err(&bad)?,
                ),
                ["pause", d] | ["pause", "for", d] => {
                    p.push(Kind::Hold(0.0), parse_duration(d).map_err(&bad)?)
                }
                ["ramp", range, "in" | "for", d] => {
                    let (from, to) = parse_range(range).map_err(&bad)?;
                    p.push(Kind::Ramp { from, to }, parse_duration(d).map_err(&bad)?)
                }
                ["sine", range, "period", period, "for", d] => {
                    let (low, high) = parse_range(range).map_err(&bad)?;
                    if low > high {
                        return Err(bad(format!(
                            "{range} goes down: write the lower rate first"
                        )));
                    }
                    let period = parse_duration(period).map_err(&bad)?;
                    p.push(
                        Kind::Sine { low, high, period },
                        parse_duration(d).map_err(&bad)?,
                    )
                }
                ["burst", rates, "on", on, "off", off, "for", d] => {
                    let (low, high) = if rates.contains("..") {
                        parse_range(rates).map_err(&bad)?
                    } else {
                        (0.0, parse_rate(rates).map_err(&bad)?)
                    };
                    let (on, off) = (
                        parse_duration(on).map_err(&bad)?,
                        parse_duration(off).map_err(&bad)?,
                    );
                    p.push(
                        Kind::Burst { low, high, on, off },
                        parse_duration(d).map_err(&bad)?,
                    )
                }
                ["stairs" | "staircase", range, "by", by, "every", d] => {
                    let (from, to) = parse_range(range).map_err(&bad)?;
                    let by = parse_rate(by).map_err(&bad)?;
                    let d = parse_duration(d).map_err(&bad)?;
                    if by <= 0.0 {
                        return Err(bad("the step must be above 0".into()));
                    }
                    let steps = ((to - from).abs() / by + 1e-9).floor() as usize + 1;
                    if p.segments.len() + steps > MAX_SEGMENTS {
                        return Err(bad(format!(
                            "makes {steps} steps; at most {MAX_SEGMENTS} segments in all: take a bigger step"
                        )));
                    }
                    let down = to < from;
                    for s in 0..steps {
                        let r = if down {
                            from - by * s as f64
                        } else {
                            from + by * s as f64
                        };
                        let at = p.pieces.len();
                        p.push(Kind::Hold(r), d);
                        p.segment(format!("stairs step {}: {}", s + 1, short_rate(r)), at);
                    }
                    continue;
                }
                _ => return Err(bad(format!("is not a segment; {GRAMMAR}"))),
            }
            if let Some(Kind::Sine { low, .. } | Kind::Burst { low, .. }) =
                p.pieces.last().map(|x| &x.kind)
            {
                if *low < 0.0 {
                    return Err(bad("rates are 0 or more".into()));
                }
            }
            if let Some(Kind::Burst { on, off, .. }) = p.pieces.last().map(|x| &x.kind) {
                if *on <= 0.0 || *off < 0.0 {
                    return Err(bad("a burst's on time must be above 0".into()));
                }
            }
            if let Some(Kind::Sine { period, .. }) = p.pieces.last().map(|x| &x.kind) {
                if *period <= 0.0 {
                    return Err(bad("the period must be above 0".into()));
                }
            }
            if p.segments.len() >= MAX_SEGMENTS {
                return Err(bad(format!(
                    "is past the {MAX_SEGMENTS} segments a profile may have"
                )));
            }
            p.segment(label, from);
        }
        if p.total < 1.0 {
            return Err(RateError::Whole {
                problem: format!(
                    "offers {:.2} operations in all: give it a rate above 0 somewhere",
                    p.total
                ),
            });
        }
        Ok(p)
    }
}

/// What [`RateError::Segment`] points the user to.
pub const GRAMMAR: &str = "a profile is segments joined by commas (or ';'), each one of: \
'hold RATE for DURATION', 'step RATE for DURATION', 'ramp RATE..RATE in DURATION', \
'sine LOW..HIGH period DURATION for DURATION', 'burst [LOW..]HIGH on DURATION off DURATION for DURATION', \
'stairs RATE..RATE by RATE every DURATION', 'pause DURATION' (rates like 5000 or 5k, durations like 500ms, 30s, 2m, 1h)";

fn parse_rate(s: &str) -> Result<f64, String> {
    let t = s.strip_suffix("/s").unwrap_or(s);
    let (num, mult) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1e3),
        Some((i, 'M')) => (&t[..i], 1e6),
        _ => (t, 1.0),
    };
    match num.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v * mult),
        Ok(_) => Err(format!(
            "rate {s} is negative; rates are 0 or more operations per second"
        )),
        Err(_) => Err(format!(
            "'{s}' is not a rate: operations per second such as 5000, 2.5k or 1M"
        )),
    }
}

fn parse_range(s: &str) -> Result<(f64, f64), String> {
    let Some((a, b)) = s.split_once("..") else {
        return Err(format!("'{s}' is not a range of rates such as 1000..50000"));
    };
    Ok((parse_rate(a)?, parse_rate(b)?))
}

/// Seconds in `s` (`500ms`, `30s`, `2m`, `1h`, `1.5s`).
fn parse_duration(s: &str) -> Result<f64, String> {
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let mult = match unit {
        "ms" => 1e-3,
        "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => {
            return Err(format!(
                "'{s}' is not a duration: a number with ms, s, m or h, such as 30s or 2m"
            ))
        }
    };
    match num.parse::<f64>() {
        Ok(v) if v > 0.0 && v * mult <= 1e7 => Ok(v * mult),
        _ => Err(format!(
            "'{s}' is not a duration above 0 (and under 115 days), such as 30s or 2m"
        )),
    }
}

/// `50000` as `50k` for labels.
fn short_rate(r: f64) -> String {
    if r >= 1e6 && (r / 1e6).fract() == 0.0 {
        format!("{}M", r / 1e6)
    } else if r >= 1e3 && (r / 1e3).fract() == 0.0 {
        format!("{}k", r / 1e3)
    } else {
        format!("{r}")
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_example_parses_into_its_three_segments() {
        let t = Target::parse_profile(
            "ramp 1000..50000 in 60s, hold 50000 for 120s, step 80000 for 30s",
        )
        .unwrap();
        assert_eq!(t.length(), Some(Duration::from_secs(210)));
        let segs = t.segments();
        assert_eq!(segs.len(), 3);
        assert_eq!(segs[0].label, "ramp 1000..50000 in 60s");
        assert_eq!(
            (segs[1].start, segs[1].end),
            (Duration::from_secs(60), Duration::from_secs(180))
        );
        // A ramp offers its mean rate over its length.
        assert!((segs[0].expected - 25_500.0 * 60.0).abs() < 1e-6);
        assert_eq!(t.peak(), 80_000.0);
        let total = 25_500.0 * 60.0 + 50_000.0 * 120.0 + 80_000.0 * 30.0;
        assert!((t.mean() - total / 210.0).abs() < 1e-6);
    }

    #[test]
    fn each_piece_inverts_its_own_mass() {
        let len = 40.0;
        for k in [
            Kind::Hold(300.0),
            Kind::Ramp {
                from: 100.0,
                to: 900.0,
            },
            Kind::Ramp {
                from: 900.0,
                to: 0.0,
            },
            Kind::Ramp {
                from: 0.0,
                to: 500.0,
            },
            Kind::Sine {
                low: 0.0,
                high: 1000.0,
                period: 7.0,
            },
            Kind::Burst {
                low: 0.0,
                high: 800.0,
                on: 1.5,
                off: 3.0,
            },
            Kind::Burst {
                low: 100.0,
                high: 800.0,
                on: 2.0,
                off: 2.0,
            },
        ] {
            let total = k.mass(len, len);
            for i in 1..200 {
                let m = total * i as f64 / 200.0;
                let x = k.inverse(m, len);
                assert!(
                    (k.mass(x, len) - m).abs() < 1e-6 * total.max(1.0),
                    "{k:?} at {m}: x {x}"
                );
            }
        }
    }

    #[test]
    fn staircases_are_one_segment_per_step() {
        let t = Target::parse_profile("pause 5s, stairs 1k..3k by 1k every 10s").unwrap();
        let segs = t.segments();
        let labels: Vec<&str> = segs.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "pause 5s",
                "stairs step 1: 1k",
                "stairs step 2: 2k",
                "stairs step 3: 3k"
            ]
        );
        assert_eq!(segs[3].end, Duration::from_secs(35));
        assert_eq!(segs[2].mean_rate(), 2000.0);
        // The pause offers nothing: the first arrival falls in the first step.
        assert!(t.at(0.0).unwrap() >= 5e9);
    }

    #[test]
    fn bad_profiles_name_the_segment_and_what_would_do() {
        let err = |s: &str| Target::parse_profile(s).unwrap_err().to_string();
        let e = err("hold 100 for 10s, hold -5 for 3s");
        assert!(
            e.starts_with("segment 2 ('hold -5 for 3s'): rate -5 is negative"),
            "{e}"
        );
        let e = err("ramp 10..20 over 5s");
        assert!(
            e.contains("segment 1") && e.contains("'ramp RATE..RATE in DURATION'"),
            "{e}"
        );
        let e = err("hold 100 for 10");
        assert!(e.contains("'10' is not a duration"), "{e}");
        let e = err("hold 1k for 5s,, hold 2k for 5s");
        assert!(e.starts_with("segment 2 (''): is not a segment"), "{e}");
        let e = err("pause 10s");
        assert!(e.contains("give it a rate above 0"), "{e}");
        let e = err("stairs 1..10000 by 1 every 1s");
        assert!(e.contains("at most 200 segments"), "{e}");
        let e = err("sine 5k..1k period 10s for 1m");
        assert!(e.contains("write the lower rate first"), "{e}");
    }

    #[test]
    fn traces_read_seconds_timestamps_and_rate_series() {
        let t =
            Target::parse_trace("# arrivals\n0\n0.5\n0.5\n2.25\n", "t.txt", 1.0, 1.0, 1).unwrap();
        let times: Vec<f64> = (0..5).map_while(|i| t.at(i as f64)).collect();
        assert_eq!(times, [0.0, 5e8, 5e8, 2.25e9]);
        let fast = Target::parse_trace("0\n0.5\n2\n", "t", 2.0, 1.0, 1).unwrap();
        assert_eq!(fast.at(2.0), Some(1e9));
        let abs = Target::parse_trace(
            "2026-11-26T05:00:00Z\n2026-11-26T05:00:01.5Z\n",
            "t",
            1.0,
            1.0,
            1,
        )
        .unwrap();
        assert_eq!(abs.at(1.0), Some(1.5e9));
        let series =
            Target::parse_trace("second,rate\n0,100\n1,300\n2,0\n", "s.csv", 1.0, 1.0, 1).unwrap();
        assert_eq!(series.expected(), 400.0);
        assert_eq!(series.peak(), 300.0);
        assert_eq!(series.length(), Some(Duration::from_secs(3)));
        let e = Target::parse_trace("0\n1\n0.5\n", "t.txt", 1.0, 1.0, 1)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "t.txt:3: 0.5 comes before the line above it: arrivals must be in time order"
        );
        let e = Target::parse_trace("0,1\n0,2\n", "s.csv", 1.0, 1.0, 1)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("s.csv:2: second 0 does not come after"),
            "{e}"
        );
    }

    #[test]
    fn a_scaled_trace_keeps_its_shape() {
        let text: String = (0..1000)
            .map(|i| format!("{}\n", i as f64 / 100.0))
            .collect();
        let half = Target::parse_trace(&text, "t", 1.0, 0.5, 9).unwrap();
        let n = half.expected();
        // Binomial(1000, 0.5): 5 sigma is 79.
        assert!((n - 500.0).abs() < 80.0, "{n}");
        let triple = Target::parse_trace(&text, "t", 1.0, 3.0, 9).unwrap();
        assert_eq!(triple.expected(), 3000.0);
        assert_eq!(
            triple.at(1.0).map(|t| t.round()),
            Some((1e7_f64 / 3.0).round())
        );
    }
}
