//! Arrival traces: one arrival per line (seconds from the start, or RFC
//! 3339 timestamps counted from the first) replayed as they are, or
//! `second,rate` lines replayed as a profile of holds; both scaled in time
//! (`trace.speed`) and in operations (`trace.scale`).

use std::path::PathBuf;

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::error::RateError;
use super::profile::Profile;
use super::shape::Shape;

/// The trace in `text` (`name` names it in errors), scaled.
pub(super) fn parse(
    text: &str,
    name: &str,
    speed: f64,
    scale: f64,
    seed: u64,
) -> Result<Shape, RateError> {
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
        return Ok(Shape::Profile(p));
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
    Ok(Shape::Trace {
        label,
        instants: instants.into_iter().map(|t| t.round() as u64).collect(),
    })
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
        if r.is_nan() {
            return Err(at(
                n,
                format!("rate {b} is not a number: give operations per second, 0 or more"),
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

#[cfg(test)]
mod tests {
    use super::super::Target;
    use std::time::Duration;

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
