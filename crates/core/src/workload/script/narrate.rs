//! What a script run says besides its results: the scale it settled
//! (kept as a label), pgbench's vacuum before it, and pgbench's `-P`
//! progress lines in place of YCSB's status lines.

use crate::executor::Progress;
use crate::histograms::new_histogram;
use crate::op::OpKind;
use crate::workload::phase::Phase;
use crate::workload::steps::Narrator;

use super::{Compiled, SCALE_LABEL};

/// A script run's narration.
pub struct Narration {
    /// The scale the run settled (given, or read from pgbench's branches).
    pub scale: i64,
    /// How the vacuum before the run went, where one was asked for:
    /// `Err` holds the database's words (pgbench goes on regardless).
    pub vacuum: Option<Result<(), String>>,
    /// Each script's transaction, retry and retried kinds.
    pub kinds: Vec<(OpKind, OpKind, OpKind)>,
    /// Whether a conflicted transaction is tried again (`--max-tries`
    /// other than 1): the line then counts retries.
    pub retries: bool,
    /// pgbench's `-L`: the line then counts skipped transactions (none:
    /// sojourn runs every transaction its schedule releases).
    pub latency_limit: bool,
}

impl Narration {
    pub fn new(compiled: &Compiled, scale: i64) -> Narration {
        Narration {
            scale,
            vacuum: None,
            kinds: compiled
                .scripts
                .iter()
                .map(|s| (s.kind, s.retry, s.retried))
                .collect(),
            retries: false,
            latency_limit: false,
        }
    }
}

impl Narrator for Narration {
    fn before(&self, phase: Phase) -> Option<String> {
        match (&self.vacuum, phase) {
            (Some(Ok(())), Phase::Run) => Some("starting vacuum...end.".into()),
            (Some(Err(why)), Phase::Run) => Some(format!(
                "starting vacuum...error: {why} (ignoring this error and continuing anyway)"
            )),
            _ => None,
        }
    }

    /// pgbench's line: `progress: 5.0 s, 1234.5 tps, lat 1.234 ms stddev
    /// 0.456, 0 failed`, then `lag` under a rate, `skipped` under a latency
    /// limit and `retried`, `retries` with retries. The latency is the
    /// transactions' response time, as pgbench's is (from the schedule
    /// under -R).
    fn status_line(&self, p: &Progress<'_>) -> Option<String> {
        let mut latency = new_histogram();
        let (mut failed, mut retried, mut retries) = (0u64, 0u64, 0u64);
        for &(kind, retry, was_retried) in &self.kinds {
            if let Some(s) = p.interval.op(kind) {
                failed += s.failures();
                let _ = latency.add(&s.ok.response);
            }
            retries += p.interval.op(retry).map_or(0, |s| s.count());
            retried += p.interval.op(was_retried).map_or(0, |s| s.count());
        }
        let n = latency.len();
        let (mean, stddev) = if n > 0 {
            (latency.mean() / 1e6, latency.stdev() / 1e6)
        } else {
            (0.0, 0.0)
        };
        let secs = p.interval_length.as_secs_f64().max(1e-9);
        let mut line = format!(
            "progress: {:.1} s, {:.1} tps, lat {mean:.3} ms stddev {stddev:.3}, {failed} failed",
            p.elapsed.as_secs_f64(),
            n as f64 / secs,
        );
        if let Some(lag) = p.interval.lag.as_deref().filter(|l| !l.is_empty()) {
            line.push_str(&format!(", lag {:.3} ms", lag.mean() / 1e6));
            if self.latency_limit {
                line.push_str(", 0 skipped");
            }
        }
        if self.retries {
            line.push_str(&format!(", {retried} retried, {retries} retries"));
        }
        Some(line)
    }

    fn status_at_end(&self) -> bool {
        false
    }

    fn labels(&self) -> Vec<(String, String)> {
        vec![(SCALE_LABEL.to_string(), self.scale.to_string())]
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::backend::Status;
    use crate::histograms::Stats;

    #[test]
    fn the_progress_line_is_pgbench_s() {
        let (t, retry, retried) = (
            OpKind::named("narrated").unwrap(),
            OpKind::named("narrated:retry").unwrap(),
            OpKind::named("narrated:retried").unwrap(),
        );
        let mut n = Narration {
            scale: 1,
            vacuum: None,
            kinds: vec![(t, retry, retried)],
            retries: false,
            latency_limit: false,
        };
        let mut stats = Stats::default();
        for ms in [1, 3, 1, 3] {
            stats.record(t, Status::Ok, ms * 1_000_000, ms * 1_000_000);
        }
        stats.record(t, Status::Error, 5_000_000, 5_000_000);
        stats.ops_done = 5;
        let p = |n: &Narration, stats: &Stats| -> String {
            let at = Progress {
                elapsed: Duration::from_secs(6),
                interval_length: Duration::from_secs(2),
                interval: stats,
                ops_done: 5,
                expected_ops: None,
                max_execution_time: None,
            };
            n.status_line(&at).unwrap()
        };
        assert_eq!(
            p(&n, &stats),
            "progress: 6.0 s, 2.0 tps, lat 2.000 ms stddev 1.000, 1 failed"
        );
        n.retries = true;
        n.latency_limit = true;
        stats.record(retry, Status::Ok, 1_000, 1_000);
        stats.record(retry, Status::Ok, 1_000, 1_000);
        stats.record(retried, Status::Ok, 1_000, 1_000);
        stats.record_lag(250_000);
        assert_eq!(
            p(&n, &stats),
            "progress: 6.0 s, 2.0 tps, lat 2.000 ms stddev 1.000, 1 failed, lag 0.250 ms, \
             0 skipped, 1 retried, 2 retries"
        );
        assert!(!n.status_at_end(), "pgbench prints whole periods only");
        n.vacuum = Some(Err(
            "ERROR: relation \"pgbench_branches\" does not exist".into()
        ));
        assert_eq!(
            n.before(Phase::Run).unwrap(),
            "starting vacuum...error: ERROR: relation \"pgbench_branches\" does not exist \
             (ignoring this error and continuing anyway)"
        );
    }
}
