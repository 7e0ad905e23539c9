//! What the key-value workload says about a phase: the keys written, and
//! yb-sample-apps' status line in place of YCSB's.

use super::worker::KeyValueShared;
use crate::executor::Progress;
use crate::op::OpKind;
use crate::workload::phase::Phase;
use crate::workload::steps::Narrator;
use std::sync::{Arc, Mutex};

/// What the key-value workload says about a phase: the keys written before
/// it and at its end (yb-sample-apps' `maxWrittenKey`), and yb-sample-apps'
/// status line in place of YCSB's.
pub struct Narration {
    shared: Arc<KeyValueShared>,
    line: Mutex<ProgressLine>,
}

impl Narration {
    pub fn new(shared: Arc<KeyValueShared>) -> Narration {
        Narration {
            shared,
            line: Mutex::new(ProgressLine::default()),
        }
    }
}

impl Narrator for Narration {
    fn before(&self, phase: Phase) -> Option<String> {
        let written = self.shared.written();
        (phase == Phase::Run || written > 0)
            .then(|| format!("{}: {written} keys written before this phase", phase.name()))
    }

    fn status_line(&self, p: &Progress<'_>) -> Option<String> {
        let mut line = self.line.lock().unwrap_or_else(|e| e.into_inner());
        Some(line.line(p, self.shared.written()))
    }

    fn after(&self, phase: Phase) -> Option<String> {
        Some(format!(
            "{}: maxWrittenKey {}",
            phase.name(),
            self.shared.written() as i64 - 1
        ))
    }
}

/// yb-sample-apps' progress line, from the intervals the executor reports:
/// `Read: x ops/sec (y ms/op), n total ops | Write: ... | Uptime: t ms |
/// maxWrittenKey: k`, then which time `ms/op` is: response time, from each
/// operation's intended start (yb-sample-apps times the call alone, which
/// is the same in a closed loop; a pool at a rate also waits its turn).
/// What the status line's `ms/op` is, said at its end.
pub const MS_PER_OP: &str = "ms/op: response time (from the intended start)";

#[derive(Default)]
pub struct ProgressLine {
    reads: u64,
    writes: u64,
}

impl ProgressLine {
    pub fn line(&mut self, p: &Progress<'_>, written: u64) -> String {
        let secs = p.interval_length.as_secs_f64();
        let part = |kinds: &[OpKind], total: &mut u64| {
            let (mut n, mut ns) = (0u64, 0f64);
            for k in kinds {
                if let Some(s) = p.interval.op(*k) {
                    let all = s.all();
                    n += s.count();
                    ns += all.response.mean() * all.response.len() as f64;
                }
            }
            *total += n;
            let rate = if secs > 0.0 { n as f64 / secs } else { 0.0 };
            let ms = if n > 0 { ns / n as f64 / 1e6 } else { 0.0 };
            format!("{rate:.2} ops/sec ({ms:.2} ms/op), {total} total ops")
        };
        let read = part(&[OpKind::Read], &mut self.reads);
        let write = part(&[OpKind::Insert, OpKind::Update], &mut self.writes);
        format!(
            "Read: {read} | Write: {write} | Uptime: {} ms | maxWrittenKey: {} | {MS_PER_OP}",
            p.elapsed.as_millis(),
            written as i64 - 1
        )
    }
}
