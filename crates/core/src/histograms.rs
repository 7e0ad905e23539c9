//! Recording what happened: per operation kind, HDR histograms of service
//! time and response time, and counts by status.
//!
//! Every histogram in sojourn has the same configuration ([`new_histogram`]),
//! so adding one to another is exact: intervals merge into a run, runs from
//! several client processes merge into one, bucket for bucket.
//!
//! The hot path: each worker records into one of a fixed number of slots,
//! each behind its own mutex. Workers map onto slots round-robin, as they
//! map onto runtime threads, so with one slot per runtime thread a lock is
//! never contended but by the aggregator, which takes each lock once per
//! interval only long enough to swap the slot's [`Stats`] for an empty one.
//! Slots are few (not one per connection) because a histogram is a few
//! hundred kilobytes: a slot per connection made the histograms the hot
//! path writes into outgrow the CPU's caches, and made the aggregator scan
//! megabytes every tick.

use std::time::SystemTime;

use hdrhistogram::Histogram;
use parking_lot::Mutex;

use crate::backend::Status;
use crate::failures::{Cause, Reasons, TooManyFailed};
use crate::op::OpKind;

/// Histograms count nanoseconds from 1 ns to one hour with 3 significant
/// digits (0.1% resolution). Longer values are clamped to one hour.
pub const HIST_LOWEST: u64 = 1;
pub const HIST_HIGHEST: u64 = 3_600 * 1_000_000_000;
pub const HIST_SIGFIG: u8 = 3;

/// A histogram with sojourn's one configuration.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(HIST_LOWEST, HIST_HIGHEST, HIST_SIGFIG)
        .expect("constant histogram bounds are valid")
}

/// Service and response time of a set of operations.
#[derive(Clone, Debug)]
pub struct Latencies {
    pub service: Histogram<u64>,
    pub response: Histogram<u64>,
}

impl Latencies {
    pub fn new() -> Self {
        Latencies {
            service: new_histogram(),
            response: new_histogram(),
        }
    }

    #[inline]
    fn record(&mut self, service_ns: u64, response_ns: u64) {
        self.service.saturating_record(service_ns.max(1));
        self.response.saturating_record(response_ns.max(1));
    }

    fn record_n(&mut self, service_ns: u64, response_ns: u64, n: u64) {
        self.service.saturating_record_n(service_ns.max(1), n);
        self.response.saturating_record_n(response_ns.max(1), n);
    }

    fn add(&mut self, other: &Latencies) {
        // Same configuration everywhere, so add cannot fail.
        let _ = self.service.add(&other.service);
        let _ = self.response.add(&other.response);
    }

    fn reset(&mut self) {
        self.service.reset();
        self.response.reset();
    }
}

impl Default for Latencies {
    fn default() -> Self {
        Self::new()
    }
}

/// Everything recorded for one operation kind.
#[derive(Clone, Debug)]
pub struct OpStats {
    /// Operations whose status counts as success (OK, BATCHED_OK).
    pub ok: Latencies,
    /// The others, as YCSB's `[READ-FAILED]`; allocated on first failure.
    pub failed: Option<Box<Latencies>>,
    /// Counts by [`Status::index`].
    pub statuses: [u64; Status::COUNT],
    /// Why failures failed, where the database said.
    pub reasons: Reasons,
}

impl OpStats {
    /// Nothing recorded yet.
    pub fn new() -> Self {
        OpStats {
            ok: Latencies::new(),
            failed: None,
            statuses: [0; Status::COUNT],
            reasons: Reasons::default(),
        }
    }

    pub fn count(&self) -> u64 {
        self.statuses.iter().sum()
    }

    pub fn count_of(&self, status: Status) -> u64 {
        self.statuses[status.index()]
    }

    /// Operations that did not succeed.
    pub fn failures(&self) -> u64 {
        Status::ALL
            .iter()
            .filter(|s| !s.is_ok())
            .map(|s| self.statuses[s.index()])
            .sum()
    }

    /// Why this kind's failures failed, most frequent first; `start` is
    /// the run's first operation.
    pub fn causes(&self, start: SystemTime) -> Vec<crate::failures::Cause> {
        crate::failures::Cause::of(&self.reasons, &self.statuses, start)
    }

    /// The longest service time of any operation, failed or not (0 if
    /// none), without merging histograms as [`OpStats::all`] does.
    pub fn all_service_max(&self) -> u64 {
        Self::max_of(&self.ok.service, self.failed.as_ref().map(|f| &f.service))
    }

    /// The longest response time of any operation, failed or not.
    pub fn all_response_max(&self) -> u64 {
        Self::max_of(&self.ok.response, self.failed.as_ref().map(|f| &f.response))
    }

    fn max_of(ok: &Histogram<u64>, failed: Option<&Histogram<u64>>) -> u64 {
        let max = |h: &Histogram<u64>| if h.is_empty() { 0 } else { h.max() };
        max(ok).max(failed.map_or(0, max))
    }

    /// Service and response time of all operations, failed or not.
    pub fn all(&self) -> Latencies {
        let mut all = self.ok.clone();
        if let Some(f) = &self.failed {
            all.add(f);
        }
        all
    }

    pub(crate) fn add(&mut self, other: &OpStats) {
        self.ok.add(&other.ok);
        if let Some(of) = &other.failed {
            self.failed
                .get_or_insert_with(|| Box::new(Latencies::new()))
                .add(of);
        }
        for (a, b) in self.statuses.iter_mut().zip(other.statuses.iter()) {
            *a += b;
        }
        self.reasons.merge(&other.reasons);
    }

    fn reset(&mut self) {
        self.ok.reset();
        if let Some(f) = &mut self.failed {
            f.reset();
        }
        self.statuses = [0; Status::COUNT];
        self.reasons.clear();
    }
}

impl Default for OpStats {
    fn default() -> Self {
        Self::new()
    }
}

/// What was recorded over some period: per operation kind, plus how late
/// operations left the client compared with their schedule.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// By [`OpKind::index`]; as long as the highest kind recorded.
    ops: Vec<Option<Box<OpStats>>>,
    /// Scheduling lag (actual start minus intended start); open loop only.
    pub lag: Option<Box<Histogram<u64>>>,
    /// Top-level operations completed (a read-modify-write counts once,
    /// though its read and update are recorded under READ and UPDATE too).
    pub ops_done: u64,
}

impl Stats {
    /// Where `kind` is recorded, made on first use.
    #[inline]
    fn slot(&mut self, kind: OpKind) -> &mut OpStats {
        let i = kind.index();
        if i >= self.ops.len() {
            self.ops.resize_with(i + 1, || None);
        }
        self.ops[i].get_or_insert_with(|| Box::new(OpStats::new()))
    }

    #[inline]
    pub fn record(&mut self, kind: OpKind, status: Status, service_ns: u64, response_ns: u64) {
        let s = self.slot(kind);
        s.statuses[status.index()] += 1;
        if status.is_ok() {
            s.ok.record(service_ns, response_ns);
        } else {
            s.failed
                .get_or_insert_with(|| Box::new(Latencies::new()))
                .record(service_ns, response_ns);
        }
    }

    /// `n` operations of one kind, status and timing at once.
    pub fn record_n(
        &mut self,
        kind: OpKind,
        status: Status,
        service_ns: u64,
        response_ns: u64,
        n: u64,
    ) {
        let s = self.slot(kind);
        s.statuses[status.index()] += n;
        if status.is_ok() {
            s.ok.record_n(service_ns, response_ns, n);
        } else {
            s.failed
                .get_or_insert_with(|| Box::new(Latencies::new()))
                .record_n(service_ns, response_ns, n);
        }
    }

    /// Why one failure of `kind`, already recorded with `status`, failed:
    /// the database's `text`, at `at`.
    pub fn note_reason(&mut self, kind: OpKind, status: Status, text: &str, at: SystemTime) {
        self.slot(kind).reasons.note(status, text, at);
    }

    #[inline]
    pub fn record_lag(&mut self, lag_ns: u64) {
        self.lag
            .get_or_insert_with(|| Box::new(new_histogram()))
            .saturating_record(lag_ns.max(1));
    }

    pub fn op(&self, kind: OpKind) -> Option<&OpStats> {
        self.ops.get(kind.index()).and_then(|o| o.as_deref())
    }

    /// Put back what was recorded for one kind (a stored run read back
    /// from the results store), replacing anything there.
    pub fn set_op(&mut self, kind: OpKind, stats: OpStats) {
        *self.slot(kind) = stats;
    }

    /// The kinds that have at least one operation: YCSB's in the order it
    /// prints them, then a workload's own in the order first named.
    pub fn kinds(&self) -> impl Iterator<Item = (OpKind, &OpStats)> {
        self.ops.iter().enumerate().filter_map(|(i, o)| {
            let s = o.as_deref().filter(|s| s.count() > 0)?;
            Some((OpKind::at(i), s))
        })
    }

    /// Exact merge.
    pub fn add(&mut self, other: &Stats) {
        if other.ops.len() > self.ops.len() {
            self.ops.resize_with(other.ops.len(), || None);
        }
        for (mine, theirs) in self.ops.iter_mut().zip(other.ops.iter()) {
            if let Some(t) = theirs {
                match mine {
                    Some(m) => m.add(t),
                    None => *mine = Some(t.clone()),
                }
            }
        }
        if let Some(l) = &other.lag {
            match &mut self.lag {
                Some(m) => {
                    let _ = m.add(&**l);
                }
                None => self.lag = Some(l.clone()),
            }
        }
        self.ops_done += other.ops_done;
    }

    /// Empty, keeping allocations for reuse.
    pub fn reset(&mut self) {
        for s in self.ops.iter_mut().flatten() {
            s.reset();
        }
        if let Some(l) = &mut self.lag {
            l.reset();
        }
        self.ops_done = 0;
    }

    /// Count every NOT_FOUND as OK, for judging a phase whose misses are
    /// answers (a cache's). A kind whose every failure was a miss has its
    /// failed latencies join the answers'; where other failures are mixed
    /// in, they stay apart, as they cannot be told from the misses.
    pub fn count_misses_as_answers(&mut self) {
        for s in self.ops.iter_mut().flatten() {
            let misses = std::mem::take(&mut s.statuses[Status::NotFound.index()]);
            s.statuses[Status::Ok.index()] += misses;
            if s.failures() == 0 {
                if let Some(f) = s.failed.take() {
                    s.ok.add(&f);
                }
            }
        }
    }

    /// Total failed operations over all kinds.
    pub fn failures(&self) -> u64 {
        self.kinds().map(|(_, s)| s.failures()).sum()
    }

    /// Whether these operations fail their phase under `max_error_rate`
    /// (see [`TooManyFailed::judge`]), with the commonest cause.
    pub fn too_many_failed(&self, max_error_rate: Option<f64>) -> Option<TooManyFailed> {
        let kinds = self.kinds().map(|(k, s)| (k, s.failures(), s.count()));
        let mut failed = TooManyFailed::judge(kinds, max_error_rate)?;
        failed.cause = self
            .op(failed.kind)
            .and_then(|s| s.causes(SystemTime::UNIX_EPOCH).into_iter().next())
            .map(|c| Cause {
                first_at_s: None,
                ..c
            })
            .map(|c| c.to_string());
        Some(failed)
    }
}

/// What one slot holds: statistics per segment of a rate profile (one part
/// for a run without segments), so each operation counts in the segment its
/// intended start falls in, however late it ends.
#[derive(Debug, Default)]
pub struct SlotStats {
    parts: Vec<(usize, Stats)>,
}

impl SlotStats {
    /// Where an operation of `segment` is recorded.
    #[inline]
    pub fn segment(&mut self, segment: usize) -> &mut Stats {
        // One or two parts at a time (the segment now, the one before while
        // its last operations end): a scan beats any map.
        let i = match self.parts.iter().position(|(s, _)| *s == segment) {
            Some(i) => i,
            None => match self.parts.iter().position(|(_, st)| st.ops_done == 0) {
                Some(i) => {
                    self.parts[i].0 = segment;
                    i
                }
                None => {
                    self.parts.push((segment, Stats::default()));
                    self.parts.len() - 1
                }
            },
        };
        &mut self.parts[i].1
    }

    fn reset(&mut self) {
        self.parts.iter_mut().for_each(|(_, s)| s.reset());
    }
}

/// The slots workers record into.
pub struct Recorder {
    slots: Box<[Mutex<SlotStats>]>,
}

impl Recorder {
    /// `slots` slots (at least one, at most 32): as many as there are
    /// threads recording, so that no two threads share one.
    pub fn new(slots: usize) -> Recorder {
        let n = slots.clamp(1, 32);
        Recorder {
            slots: (0..n).map(|_| Mutex::new(SlotStats::default())).collect(),
        }
    }

    /// The slot a worker records into.
    pub fn slot(&self, worker: usize) -> &Mutex<SlotStats> {
        &self.slots[worker % self.slots.len()]
    }

    /// Take everything recorded since the last collection, merged, and
    /// hand each segment's part to `each`. `spare` is scratch space whose
    /// allocations are recycled into the slots.
    pub fn collect(&self, spare: &mut SlotStats, mut each: impl FnMut(usize, &Stats)) -> Stats {
        let mut merged = Stats::default();
        for slot in self.slots.iter() {
            spare.reset();
            std::mem::swap(&mut *slot.lock(), spare);
            for (segment, stats) in spare.parts.iter().filter(|(_, s)| s.ops_done > 0) {
                merged.add(stats);
                each(*segment, stats);
            }
        }
        merged
    }
}

/// Percentiles and moments of one histogram, in microseconds as YCSB prints,
/// each percentile with its 95% confidence interval.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LatencySummary {
    pub count: u64,
    pub mean_us: f64,
    pub min_us: f64,
    pub max_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p95_us: f64,
    pub p99_us: f64,
    pub p99_9_us: f64,
    pub p99_99_us: f64,
    /// 95% confidence intervals `[low, high]` of p50, p90, p95, p99, p99.9
    /// and p99.99, from order statistics (see [`percentile_ci`]).
    pub ci95_us: CiSet,
}

/// Confidence intervals of the summary's percentiles.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct CiSet {
    pub p50: [f64; 2],
    pub p90: [f64; 2],
    pub p95: [f64; 2],
    pub p99: [f64; 2],
    pub p99_9: [f64; 2],
    pub p99_99: [f64; 2],
}

/// z for a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

/// The 95% confidence interval of the `q` quantile (0..1) of the
/// distribution `h` was sampled from, as values `[low, high]` in the
/// histogram's unit: the order statistics at ranks
/// `n q -+ 1.96 sqrt(n q (1-q))` (the normal approximation to the binomial
/// count of samples below the quantile, as Lancet reports). It assumes
/// independent samples; operations of one run are mildly autocorrelated,
/// so treat it as a lower bound on the uncertainty.
pub fn percentile_ci(h: &Histogram<u64>, q: f64) -> [u64; 2] {
    let n = h.len();
    if n == 0 {
        return [0, 0];
    }
    let nf = n as f64;
    let half = Z95 * (nf * q * (1.0 - q)).sqrt();
    let lo_rank = (nf * q - half).floor().max(1.0);
    let hi_rank = (nf * q + half).ceil().min(nf);
    [
        h.value_at_quantile(lo_rank / nf),
        h.value_at_quantile(hi_rank / nf),
    ]
}

/// Whether the `q` quantile of `n` samples means anything: fewer than ten
/// samples beyond it and it is noise (a p99.9 from 2,000 operations rests
/// on two).
pub fn enough_samples(n: u64, q: f64) -> bool {
    n >= samples_needed(q)
}

/// Samples needed for [`enough_samples`]. (1 - 0.9 is not exactly 0.1 in
/// floating point: without the tolerance a p90 would need 101.)
pub fn samples_needed(q: f64) -> u64 {
    (10.0 / (1.0 - q) - 1e-6).ceil() as u64
}

impl LatencySummary {
    pub fn of(h: &Histogram<u64>) -> LatencySummary {
        let us = |ns: u64| ns as f64 / 1000.0;
        let q = |q: f64| {
            if h.is_empty() {
                0.0
            } else {
                us(h.value_at_quantile(q))
            }
        };
        let ci = |q: f64| {
            let [lo, hi] = percentile_ci(h, q);
            [us(lo), us(hi)]
        };
        let empty = h.is_empty();
        LatencySummary {
            count: h.len(),
            mean_us: if empty { 0.0 } else { h.mean() / 1000.0 },
            min_us: if empty { 0.0 } else { us(h.min()) },
            max_us: if empty { 0.0 } else { us(h.max()) },
            p50_us: q(0.50),
            p90_us: q(0.90),
            p95_us: q(0.95),
            p99_us: q(0.99),
            p99_9_us: q(0.999),
            p99_99_us: q(0.9999),
            ci95_us: CiSet {
                p50: ci(0.50),
                p90: ci(0.90),
                p95: ci(0.95),
                p99: ci(0.99),
                p99_9: ci(0.999),
                p99_99: ci(0.9999),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_is_exact_and_collect_drains() {
        let rec = Recorder::new(4);
        let mut all = Stats::default();
        // Workers 0..8 record into segments 0 and 1 by turns.
        let mut by_segment = [Stats::default(), Stats::default()];
        for w in 0..8u64 {
            let mut slot = rec.slot(w as usize).lock();
            let stats = slot.segment(w as usize % 2);
            for i in 0..1000u64 {
                let v = (w + 1) * 1000 + i * 37;
                stats.record(OpKind::Read, Status::Ok, v, v * 2);
                all.record(OpKind::Read, Status::Ok, v, v * 2);
                by_segment[w as usize % 2].record(OpKind::Read, Status::Ok, v, v * 2);
            }
            stats.record(OpKind::Update, Status::Error, 5, 5);
            stats.ops_done += 1001;
            all.record(OpKind::Update, Status::Error, 5, 5);
        }
        let mut spare = SlotStats::default();
        let mut seen = [Stats::default(), Stats::default()];
        let merged = rec.collect(&mut spare, |i, part| seen[i].add(part));
        let (m, a) = (
            merged.op(OpKind::Read).unwrap(),
            all.op(OpKind::Read).unwrap(),
        );
        assert_eq!(m.ok.service, a.ok.service);
        assert_eq!(m.ok.response, a.ok.response);
        assert_eq!(
            merged.op(OpKind::Update).unwrap().count_of(Status::Error),
            8
        );
        assert_eq!(merged.failures(), 8);
        for (got, want) in seen.iter().zip(&by_segment) {
            assert_eq!(
                got.op(OpKind::Read).unwrap().ok.service,
                want.op(OpKind::Read).unwrap().ok.service
            );
            assert_eq!(got.ops_done, 4 * 1001);
        }
        // A second collection finds nothing left behind.
        let again = rec.collect(&mut spare, |_, _| panic!("nothing was recorded"));
        assert_eq!(again.kinds().count(), 0);
    }

    /// Over many repetitions, the 95% interval of p99 must cover the true
    /// p99 about 95% of the time: not much less (too narrow) and not much
    /// more (too wide). Exponential samples, true p99 = ln(100) * mean.
    #[test]
    fn p99_interval_covers_the_truth_95_percent_of_the_time() {
        use rand_core::{RngCore, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(99);
        let mean = 1_000_000.0; // 1 ms in ns
        let truth = (100.0f64).ln() * mean;
        let reps = 2000;
        let n = 5000;
        let mut covered = 0;
        let mut h = new_histogram();
        for _ in 0..reps {
            h.reset();
            for _ in 0..n {
                let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                h.record((-(1.0 - u).ln() * mean) as u64 + 1).unwrap();
            }
            let [lo, hi] = percentile_ci(&h, 0.99);
            // The histogram's buckets are 0.1% wide: allow for that.
            if lo as f64 <= truth * 1.001 && hi as f64 >= truth * 0.999 {
                covered += 1;
            }
        }
        // Binomial(2000, 0.95) has sd 9.7: 5 sd either side.
        assert!(
            (1852..=1948).contains(&covered),
            "covered {covered} of {reps}"
        );
    }

    #[test]
    fn few_samples_are_flagged() {
        assert!(!enough_samples(2000, 0.999));
        assert!(enough_samples(10_000, 0.999));
        assert_eq!(samples_needed(0.99), 1000);
        assert_eq!(samples_needed(0.9), 100);
        assert!(enough_samples(100, 0.9) && !enough_samples(99, 0.9));
        let mut h = new_histogram();
        assert_eq!(percentile_ci(&h, 0.99), [0, 0]);
        for v in 1..=1000u64 {
            h.record(v * 1000).unwrap();
        }
        let [lo, hi] = percentile_ci(&h, 0.5);
        assert!(
            lo < 500_000 && hi > 500_000 && hi - lo < 100_000,
            "{lo} {hi}"
        );
    }

    #[test]
    fn failed_latencies_are_kept_apart() {
        let mut s = Stats::default();
        s.record(OpKind::Read, Status::Ok, 100, 100);
        s.record(OpKind::Read, Status::NotFound, 900, 900);
        let r = s.op(OpKind::Read).unwrap();
        assert_eq!(r.ok.service.len(), 1);
        assert_eq!(r.failed.as_ref().unwrap().service.len(), 1);
        assert_eq!(r.all().service.len(), 2);
        assert_eq!(r.failures(), 1);
    }
}
