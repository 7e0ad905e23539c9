//! Turning the recorder's slots into a time series while the run goes on:
//! one [`Interval`] per tick, handed to the observer and not kept (memory
//! stays flat however long the run), the running totals with and without
//! the warm-up, where the slowest answer came, and the progress callback.

use std::time::Duration;

use crate::cpu::CpuTimes;
use crate::histograms::{Recorder, SlotStats, Stats};
use crate::rate::Segment;

use super::config::RunConfig;
use super::observer::{Interval, Observer, Progress, SlowestAnswer};
use super::outcome::{RunOutcome, RunOutcomeParts};
use super::segments::{SegmentOutcome, SegmentSlo};

pub(super) struct Aggregator {
    pub all: Stats,
    total: Stats,
    intervals: u64,
    slowest: Option<SlowestAnswer>,
    spare: SlotStats,
    /// Per segment of a rate profile, every operation intended in it
    /// (warm-up included: a segment is a span of the schedule).
    segments: Vec<SegmentOutcome>,
    last_at: Duration,
    /// Arrivals released by the last tick.
    last_released: u64,
    last_cpu: CpuTimes,
    segment_slo: Option<(SegmentSlo, Duration)>,
    warmup: Duration,
    warmup_end: Option<Duration>,
    expected_ops: Option<u64>,
    max_execution_time: Option<Duration>,
}

impl Aggregator {
    pub fn new(cfg: &RunConfig, cpu_start: CpuTimes, segments: Vec<Segment>) -> Aggregator {
        Aggregator {
            all: Stats::default(),
            total: Stats::default(),
            intervals: 0,
            slowest: None,
            spare: SlotStats::default(),
            segments: segments
                .into_iter()
                .map(|segment| SegmentOutcome {
                    segment,
                    stats: Stats::default(),
                    offered: None,
                    verdict: None,
                })
                .collect(),
            last_at: Duration::ZERO,
            last_released: 0,
            last_cpu: cpu_start,
            segment_slo: cfg.segment_slo.clone().map(|s| {
                let settle = s.settle();
                (s, settle)
            }),
            warmup: cfg.warmup,
            warmup_end: None,
            expected_ops: cfg.operation_count(),
            max_execution_time: cfg.max_execution_time,
        }
    }

    /// The arrivals released so far in each segment (`Shared`'s counts),
    /// for the verdicts to judge the share served against.
    pub fn offered(&mut self, counts: &[std::sync::atomic::AtomicU64]) {
        for (s, c) in self.segments.iter_mut().zip(counts) {
            s.offered = Some(c.load(std::sync::atomic::Ordering::Relaxed));
        }
    }

    /// Close the interval that ends `now` after the run's start; true when
    /// a segment has just missed its SLO (the run should stop).
    pub fn tick(
        &mut self,
        recorder: &Recorder,
        now: Duration,
        released: Option<u64>,
        obs: &dyn Observer,
    ) -> bool {
        let segments = &mut self.segments;
        let stats = recorder.collect(&mut self.spare, |i, part| {
            if let Some(s) = segments.get_mut(i) {
                s.stats.add(part);
            }
        });
        let cpu_now = CpuTimes::now();
        let cpu = cpu_now.since(self.last_cpu);
        // An interval belongs to the warm-up if it starts inside it.
        let in_warmup = self.last_at < self.warmup;
        self.all.add(&stats);
        if !in_warmup {
            self.warmup_end.get_or_insert(self.last_at);
            self.total.add(&stats);
        }
        let length = now.saturating_sub(self.last_at);
        obs.interval(&Progress {
            elapsed: now,
            interval_length: length,
            interval: &stats,
            ops_done: self.all.ops_done,
            expected_ops: self.expected_ops,
            max_execution_time: self.max_execution_time,
        });
        if stats.ops_done > 0 || length > Duration::ZERO {
            let mut interval = Interval::of(&stats, self.last_at, length, cpu, in_warmup);
            interval.offered = released.map(|r| r - self.last_released);
            obs.interval_closed(&interval);
            self.intervals += 1;
            // Failed operations too: one that timed out in a stall says
            // when the stall was.
            let service_ns = stats
                .kinds()
                .map(|(_, s)| s.all_service_max())
                .max()
                .unwrap_or(0);
            if service_ns > self.slowest.map_or(0, |s| s.service_ns) {
                self.slowest = Some(SlowestAnswer {
                    service_ns,
                    interval_start: self.last_at,
                    interval_length: length,
                });
            }
        }
        self.last_at = now;
        self.last_cpu = cpu_now;
        self.last_released = released.unwrap_or(0);
        self.judge_segments(|s, settle| s.end + settle <= now)
    }

    /// Judge the segments not judged yet that `over` says are over; true
    /// when one missed.
    fn judge_segments(&mut self, over: impl Fn(&Segment, Duration) -> bool) -> bool {
        let Some((slo, settle)) = &self.segment_slo else {
            return false;
        };
        let mut missed = false;
        for s in self.segments.iter_mut() {
            if s.verdict.is_none() && !missed && over(&s.segment, *settle) {
                let v = s.judge(slo);
                missed = !v.held;
                s.verdict = Some(v);
            }
        }
        missed
    }

    pub fn finish(mut self, p: RunOutcomeParts) -> RunOutcome {
        // Segments that ended before the run did and were not judged yet:
        // judged now, everything of theirs being done; a segment the run
        // cut short, or never reached, stays not judged.
        let elapsed = p.elapsed;
        if !self
            .segments
            .iter()
            .any(|s| s.verdict.as_ref().is_some_and(|v| !v.held))
        {
            self.judge_segments(|s, _| s.end <= elapsed);
        }
        let measured = p
            .elapsed
            .saturating_sub(self.warmup_end.unwrap_or(p.elapsed));
        RunOutcome {
            started_at: p.started_at,
            elapsed: p.elapsed,
            measured,
            total: self.total,
            all: self.all,
            intervals: self.intervals,
            slowest: self.slowest,
            threads: p.threads,
            target: p.target,
            arrival: p.arrival,
            scheduled: p.scheduled,
            cpu: p.cpu,
            stop_reason: p.stop_reason,
            abandoned: p.abandoned,
            seed: p.seed,
            runtime_threads: p.runtime_threads,
            thread_use: p.thread_use,
            arrival_check: p.arrival_check,
            server: None,
            rate_profile: p.rate_profile,
            segments: self.segments,
        }
    }
}
