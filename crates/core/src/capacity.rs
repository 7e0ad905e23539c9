//! Capacity search: the highest offered rate a database sustains while its
//! response-time SLOs hold.
//!
//! A step at target R is *sustained* when at least 95% of the operations
//! offered completed (the offered load is R give or take Poisson noise), the
//! error rate is below a threshold, and every SLO holds with its
//! confidence interval: the upper end of the percentile's 95% interval is
//! under the limit. (A percentile whose interval straddles the limit counts
//! as a miss: a capacity claim should not rest on luck.)
//!
//! The search ramps geometrically from a low start until a step fails, then
//! bisects between the last sustained and the first failed target until they
//! are within the stated precision. It knows nothing of time or databases:
//! the caller runs each step and reports the verdict.

use std::fmt;

use serde::Serialize;

use crate::executor::RunOutcome;
use crate::op::OpKind;
use crate::recorder::percentile_ci;

/// One service-level objective on response time: `read.p99<10ms`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Slo {
    /// The operation kind, or `None` for every kind (`all.p99<...`).
    pub kind: Option<OpKind>,
    /// Percentile, 0..100.
    pub percentile: f64,
    pub limit_ns: u64,
}

impl fmt::Display for Slo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = self.kind.map_or("all", |k| k.name());
        write!(
            f,
            "{kind}.p{}<{}",
            self.percentile,
            format_ms(self.limit_ns as f64 / 1e6)
        )
    }
}

fn format_ms(ms: f64) -> String {
    if ms >= 1.0 {
        format!("{ms}ms")
    } else {
        format!("{}us", ms * 1000.0)
    }
}

/// Parse `read.p99<10ms,update.p99.9<50ms,all.p50<1ms`. Units: ns, us, ms, s.
pub fn parse_slos(text: &str) -> Result<Vec<Slo>, String> {
    let form = "expected KIND.pPERCENTILE<LIMIT, e.g. read.p99<10ms \
                (KIND: read, update, insert, scan, read-modify-write, delete or all; \
                LIMIT units: ns, us, ms, s)";
    let mut slos = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = |why: &str| format!("SLO '{part}': {why}; {form}");
        let (lhs, limit) = part.split_once('<').ok_or_else(|| bad("no '<'"))?;
        let (kind, pct) = lhs
            .trim()
            .split_once(".p")
            .ok_or_else(|| bad("no '.p' between kind and percentile"))?;
        let kind = match kind.trim().to_ascii_lowercase().as_str() {
            "all" | "*" => None,
            k => Some(
                OpKind::ALL
                    .into_iter()
                    .find(|o| o.name() == k)
                    .ok_or_else(|| bad(&format!("unknown operation kind '{k}'")))?,
            ),
        };
        let percentile: f64 = pct
            .trim()
            .parse()
            .map_err(|_| bad(&format!("'{pct}' is not a percentile")))?;
        if !(percentile > 0.0 && percentile < 100.0) {
            return Err(bad("the percentile must be above 0 and below 100"));
        }
        let limit = limit.trim();
        let split = limit
            .find(|c: char| c.is_ascii_alphabetic())
            .ok_or_else(|| bad("the limit has no unit"))?;
        let (num, unit) = limit.split_at(split);
        let num: f64 = num
            .trim()
            .parse()
            .map_err(|_| bad(&format!("'{num}' is not a number")))?;
        let scale = match unit {
            "ns" => 1.0,
            "us" | "µs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            u => return Err(bad(&format!("unknown unit '{u}'"))),
        };
        if !(num > 0.0 && num.is_finite()) {
            return Err(bad("the limit must be above 0"));
        }
        slos.push(Slo {
            kind,
            percentile,
            limit_ns: (num * scale) as u64,
        });
    }
    if slos.is_empty() {
        return Err(format!("no SLO given; {form}"));
    }
    Ok(slos)
}

/// How one SLO fared in one step.
#[derive(Clone, Debug, Serialize)]
pub struct SloCheck {
    pub slo: String,
    pub value_us: f64,
    pub ci95_us: [f64; 2],
    pub holds: bool,
}

/// The verdict on one step.
#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    pub target: f64,
    pub achieved: f64,
    pub error_rate: f64,
    pub checks: Vec<SloCheck>,
    pub sustained: bool,
    /// Why not, when not sustained.
    pub reason: Option<String>,
}

/// Judge a step's outcome against the target, the SLOs and the error-rate
/// threshold.
pub fn judge(o: &RunOutcome, target: f64, slos: &[Slo], max_error_rate: f64) -> Verdict {
    let achieved = o.throughput();
    let total: u64 = o.total.kinds().map(|(_, s)| s.count()).sum();
    let failed = o.total.failures();
    let error_rate = if total > 0 {
        failed as f64 / total as f64
    } else {
        0.0
    };
    let mut checks = Vec::new();
    let mut reason = None;
    for slo in slos {
        let mut merged = crate::recorder::new_histogram();
        for (kind, s) in o.total.kinds() {
            if slo.kind.is_none_or(|k| k == kind) {
                let _ = merged.add(&s.ok.response);
            }
        }
        let q = slo.percentile / 100.0;
        let (value, ci) = if merged.is_empty() {
            (0, [0, 0])
        } else {
            (merged.value_at_quantile(q), percentile_ci(&merged, q))
        };
        let holds = !merged.is_empty() && ci[1] < slo.limit_ns;
        if !holds && reason.is_none() {
            reason = Some(if merged.is_empty() {
                format!("{slo}: no operations of that kind")
            } else {
                format!(
                    "{slo}: {} (95% CI up to {})",
                    format_ms(value as f64 / 1e6),
                    format_ms(ci[1] as f64 / 1e6)
                )
            });
        }
        checks.push(SloCheck {
            slo: slo.to_string(),
            value_us: value as f64 / 1e3,
            ci95_us: [ci[0] as f64 / 1e3, ci[1] as f64 / 1e3],
            holds,
        });
    }
    // Against what was offered, not the nominal target: a short Poisson
    // step offers a few percent more or less than its target by chance.
    let served = o.served_fraction();
    if served < 0.95 {
        reason = Some(format!(
            "achieved {achieved:.0} ops/s, {:.1}% of the load offered",
            served * 100.0
        ));
    } else if error_rate > max_error_rate {
        reason = Some(format!(
            "error rate {:.2}% above {:.2}%",
            error_rate * 100.0,
            max_error_rate * 100.0
        ));
    }
    Verdict {
        target,
        achieved,
        error_rate,
        checks,
        sustained: reason.is_none(),
        reason,
    }
}

/// The search over targets.
#[derive(Clone, Debug)]
pub struct Search {
    /// Highest target sustained so far.
    pub good: Option<f64>,
    /// Lowest target that failed so far.
    pub bad: Option<f64>,
    next: f64,
    growth: f64,
    precision: f64,
    floor: f64,
}

impl Search {
    /// Start at `start` ops/s, multiply by `growth` while steps pass, stop
    /// bisecting when the bracket is within `precision` (0.05 = +-5%) of its
    /// middle. Below `floor` ops/s the search gives up.
    pub fn new(start: f64, growth: f64, precision: f64) -> Search {
        Search {
            good: None,
            bad: None,
            next: start,
            growth: growth.max(1.1),
            precision: precision.clamp(0.001, 0.5),
            floor: (start / 1024.0).max(1.0),
        }
    }

    /// The next target to try, or `None` when the search is over.
    pub fn next_target(&self) -> Option<f64> {
        match (self.good, self.bad) {
            (Some(g), Some(b)) if (b - g) <= self.precision * (b + g) => None,
            (None, Some(b)) if b <= self.floor => None,
            _ => Some(self.next),
        }
    }

    /// Report how the step at `target` went.
    pub fn record(&mut self, target: f64, sustained: bool) {
        if sustained {
            self.good = Some(self.good.map_or(target, |g| g.max(target)));
        } else {
            self.bad = Some(self.bad.map_or(target, |b| b.min(target)));
        }
        self.next = match (self.good, self.bad) {
            (Some(g), None) => g * self.growth,
            (None, Some(b)) => b / self.growth,
            (Some(g), Some(b)) => (g + b) / 2.0,
            (None, None) => self.next,
        };
    }

    /// The capacity found: the highest sustained target, with the bracket
    /// it was bisected to.
    pub fn result(&self) -> Option<(f64, f64, f64)> {
        self.good.map(|g| (g, g, self.bad.unwrap_or(g)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slos_parse_and_print() {
        let s = parse_slos("read.p99<10ms, update.p99.9<500us,all.p50<2s").unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].kind, Some(OpKind::Read));
        assert_eq!(s[0].limit_ns, 10_000_000);
        assert_eq!(s[1].percentile, 99.9);
        assert_eq!(s[1].limit_ns, 500_000);
        assert_eq!(s[2].kind, None);
        assert_eq!(s[0].to_string(), "read.p99<10ms");
        for bad in [
            "",
            "read.p99",
            "reed.p99<1ms",
            "read.p100<1ms",
            "read.p99<1",
            "read.p99<-1ms",
            "read.p99<1min",
        ] {
            let e = parse_slos(bad).unwrap_err();
            assert!(e.contains("read.p99<10ms"), "{bad}: {e}");
        }
    }

    /// A database that sustains exactly `cap`: the search must end within
    /// its precision of it, from below or above the start.
    #[test]
    fn search_brackets_the_capacity() {
        for (start, cap) in [(100.0, 7_300.0), (50_000.0, 7_300.0), (1000.0, 1000.0)] {
            let mut s = Search::new(start, 2.0, 0.05);
            let mut steps = 0;
            while let Some(t) = s.next_target() {
                s.record(t, t <= cap);
                steps += 1;
                assert!(steps < 40, "search does not end");
            }
            let (found, lo, hi) = s.result().unwrap();
            assert!(
                found <= cap && found >= cap * 0.9,
                "{start}: found {found} for {cap}"
            );
            assert!(lo <= cap && hi > cap, "bracket [{lo}, {hi}] around {cap}");
        }
        // Nothing sustained at all: the search gives up.
        let mut s = Search::new(100.0, 2.0, 0.05);
        while let Some(t) = s.next_target() {
            s.record(t, false);
        }
        assert!(s.result().is_none());
    }
}
