//! Rate profiles: the grammar (`hold 5000 for 60s, ramp ...`), the pieces
//! a profile is made of, each with its rate, its cumulative rate and that
//! cumulative rate's inverse (what maps the schedule's arrivals, drawn in
//! expected operations, to time), and the segments results break out.

use std::time::Duration;

use super::error::RateError;
use super::segment::{Segment, MAX_SEGMENTS};

/// What one piece of a profile does over its length; rates in operations
/// per second, times in seconds from the piece's start.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Kind {
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
    pub(super) fn peak(&self) -> f64 {
        match *self {
            Kind::Hold(r) => r,
            Kind::Ramp { from, to } => from.max(to),
            Kind::Sine { high, .. } | Kind::Burst { high, .. } => high,
        }
    }

    pub(super) fn scaled(&self, f: f64) -> Kind {
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
    pub(super) fn mass(&self, x: f64, len: f64) -> f64 {
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

    pub(super) fn rate(&self, x: f64, len: f64) -> f64 {
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
    pub(super) fn inverse(&self, m: f64, len: f64) -> f64 {
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
pub(super) struct Piece {
    kind: Kind,
    /// Seconds.
    start: f64,
    len: f64,
    /// Operations expected before the piece.
    before: f64,
    mass: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Profile {
    pub(super) text: String,
    pub(super) pieces: Vec<Piece>,
    pub(super) segments: Vec<Segment>,
    pub(super) total: f64,
}

impl Profile {
    /// The highest rate of any piece.
    pub(super) fn peak(&self) -> f64 {
        self.pieces
            .iter()
            .map(|x| x.kind.peak())
            .fold(0.0, f64::max)
    }

    /// The rate `x` seconds after the start; `None` after the end.
    pub(super) fn rate_at(&self, x: f64) -> Option<f64> {
        let i = self.pieces.partition_point(|q| q.start + q.len <= x);
        let q = self.pieces.get(i)?;
        Some(q.kind.rate(x - q.start, q.len))
    }

    pub(super) fn end_ns(&self) -> f64 {
        self.pieces.last().map_or(0.0, |p| (p.start + p.len) * 1e9)
    }

    pub(super) fn at(&self, u: f64) -> Option<f64> {
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

    pub(super) fn scaled(&self, f: f64) -> Profile {
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

    pub(super) fn from_series(series: &[(f64, f64)], speed: f64, rate_factor: f64) -> Profile {
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

    pub(super) fn parse(text: &str) -> Result<Profile, RateError> {
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
    const ACCEPTED: &str = "rates are 0 or more operations per second, such as 5000, 2.5k or 1M";
    // Rust reads `nan` and `inf` as numbers: each is told as what it is,
    // not as a negative rate (NaN fails `v >= 0.0` too).
    match num.parse::<f64>() {
        Ok(v) if v.is_nan() => Err(format!("rate {s} is not a number; {ACCEPTED}")),
        Ok(v) if v < 0.0 => Err(format!("rate {s} is negative; {ACCEPTED}")),
        Ok(v) if (v * mult).is_finite() => Ok(v * mult),
        Ok(_) => Err(format!("rate {s} is not finite; {ACCEPTED}")),
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

#[cfg(test)]
mod tests {
    use super::super::Target;
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
        // Rust parses these as numbers; none is a rate, nor negative.
        let e = err("hold nan for 5s");
        assert!(
            e.starts_with(
                "segment 1 ('hold nan for 5s'): rate nan is not a number; rates are 0 or more"
            ) && e.contains("such as 5000, 2.5k or 1M"),
            "{e}"
        );
        let e = err("ramp 10..NaN in 5s");
        assert!(e.contains("rate NaN is not a number"), "{e}");
        let e = err("hold inf for 5s");
        assert!(e.contains("rate inf is not finite"), "{e}");
        let e = err("hold 1e308k for 5s");
        assert!(e.contains("rate 1e308k is not finite"), "{e}");
        let e = err("hold -inf for 5s");
        assert!(e.contains("rate -inf is negative"), "{e}");
    }
}
