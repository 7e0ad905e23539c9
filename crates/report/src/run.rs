//! What the tables, plots and comparisons read off one stored run: its
//! name, its workload settings (with YCSB's defaults where the run did not
//! set them), its measured totals, and its time series per operation kind.
//! Everything is read off the stored histograms; nothing is averaged that
//! should be merged.

use hdrhistogram::Histogram;
use serde::Serialize;
use sojourn_core::histograms::{Latencies, OpStats, Stats};
use sojourn_core::op::OpKind;
use sojourn_store::{RunRecord, StoredInterval};

/// Labels a capacity session puts on each of its steps (see
/// docs/reports.md): steps are ordinary runs, tied together by these.
pub const SESSION_LABEL: &str = "capacity_session";
pub const STEP_LABEL: &str = "capacity_step";
pub const SUSTAINED_LABEL: &str = "capacity_sustained";
pub const SLOS_LABEL: &str = "capacity_slos";

/// Which of an operation's two latencies.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Latency {
    /// From the actual send to the reply (YCSB's operation latency).
    Service,
    /// From the intended (scheduled) send to the reply: includes waiting
    /// in the client when the database falls behind.
    Response,
}

impl Latency {
    pub const BOTH: [Latency; 2] = [Latency::Service, Latency::Response];

    pub fn name(self) -> &'static str {
        match self {
            Latency::Service => "service",
            Latency::Response => "response",
        }
    }

    pub fn of(self, l: &Latencies) -> &Histogram<u64> {
        match self {
            Latency::Service => &l.service,
            Latency::Response => &l.response,
        }
    }
}

/// A short name for a run: the first 13 characters of its id (a UUIDv7's
/// millisecond timestamp), which `sojourn report` and `compare` accept as
/// a prefix.
pub fn short_id(run: &RunRecord) -> String {
    run.id().as_str().chars().take(13).collect()
}

/// What the reader calls each of `runs` in legends and headings: its
/// `experiment` label; else the one label that tells every run apart
/// (`commit=c07`, `capacity_step=3`), or failing that the short labels
/// whose values differ between the runs shown (up to three); else its
/// workload and phase. Runs that would share a name get the start of
/// their id after it. The id itself stays in the hover text and the run's
/// own section.
pub fn names(runs: &[RunRecord]) -> Vec<String> {
    let value = |r: &RunRecord, k: &str| r.meta().labels.get(k).cloned();
    let mut keys: Vec<&str> = runs
        .iter()
        .flat_map(|r| r.meta().labels.keys().map(String::as_str))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    // A name is short: free text (a capacity step's reason) is no name.
    let differing: Vec<&str> = keys
        .into_iter()
        .filter(|k| {
            let first = runs.first().and_then(|r| value(r, k));
            runs.iter().any(|r| value(r, k) != first)
                && runs
                    .iter()
                    .all(|r| value(r, k).is_none_or(|v| v.len() <= 32 && !v.contains(' ')))
        })
        .collect();
    let telling = differing.iter().copied().find(|k| {
        let mut values: Vec<Option<String>> = runs.iter().map(|r| value(r, k)).collect();
        values.sort_unstable();
        values.dedup();
        values.len() == runs.len() && values.iter().all(Option::is_some)
    });
    let keys: Vec<&str> = match telling {
        Some(k) => vec![k],
        None => differing.into_iter().take(3).collect(),
    };
    let bare: Vec<String> = runs
        .iter()
        .map(|r| {
            let labels = &r.meta().labels;
            if let Some(e) = labels.get("experiment").filter(|e| !e.is_empty()) {
                return e.clone();
            }
            let own: Vec<String> = keys
                .iter()
                .filter_map(|k| labels.get(*k).map(|v| format!("{k}={v}")))
                .collect();
            if own.is_empty() {
                format!("{} {}", workload_name(r), r.meta().phase)
            } else {
                own.join(" ")
            }
        })
        .collect();
    bare.iter()
        .zip(runs)
        .map(|(name, r)| {
            if bare.iter().filter(|n| *n == name).count() > 1 {
                let id: String = r.id().as_str().chars().take(8).collect();
                format!("{name} #{id}")
            } else {
                name.clone()
            }
        })
        .collect()
}

/// The one unit a report gives latencies in, chosen from its runs: µs
/// while every operation's p99 is under a millisecond, ms above.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Unit {
    Micros,
    Millis,
}

impl Unit {
    /// The unit for `runs`: their largest p99 of either latency, of any
    /// operation, decides.
    pub fn of(runs: &[RunRecord]) -> Unit {
        let largest = runs
            .iter()
            .flat_map(|r| {
                let total = totals(r);
                total
                    .kinds()
                    .flat_map(|(_, o)| Latency::BOTH.map(|l| l.of(&o.ok).value_at_quantile(0.99)))
                    .collect::<Vec<u64>>()
            })
            .max()
            .unwrap_or(0);
        if largest >= 1_000_000 {
            Unit::Millis
        } else {
            Unit::Micros
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Unit::Micros => "µs",
            Unit::Millis => "ms",
        }
    }

    /// Nanoseconds in one of it.
    pub fn ns(self) -> f64 {
        match self {
            Unit::Micros => 1e3,
            Unit::Millis => 1e6,
        }
    }

    /// `ns` nanoseconds in this unit.
    pub fn of_ns(self, ns: f64) -> f64 {
        ns / self.ns()
    }
}

/// A property as the run resolved it.
pub fn property<'a>(run: &'a RunRecord, key: &str) -> Option<&'a str> {
    run.meta().properties.get(key).map(String::as_str)
}

/// A numeric property, or YCSB's default when the run did not set it.
pub fn property_u64(run: &RunRecord, key: &str, default: u64) -> u64 {
    property(run, key)
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// YCSB's `fieldlength` (default 100).
pub fn field_length(run: &RunRecord) -> u64 {
    property_u64(run, "fieldlength", 100)
}

/// YCSB's `fieldcount` (default 10).
pub fn field_count(run: &RunRecord) -> u64 {
    property_u64(run, "fieldcount", 10)
}

/// YCSB's `recordcount` (default 0).
pub fn record_count(run: &RunRecord) -> u64 {
    property_u64(run, "recordcount", 0)
}

/// YCSB's `requestdistribution` (default uniform).
pub fn distribution(run: &RunRecord) -> String {
    property(run, "requestdistribution")
        .unwrap_or("uniform")
        .to_string()
}

/// The workload's name: the `workload_name` label (suites set it), else
/// the workload files.
pub fn workload_name(run: &RunRecord) -> String {
    run.meta()
        .labels
        .get("workload_name")
        .cloned()
        .unwrap_or_else(|| run.meta().workloads.join(","))
}

/// The `experiment` label (PKB's `metadata: experiment:...`), if any.
pub fn experiment(run: &RunRecord) -> String {
    run.meta()
        .labels
        .get("experiment")
        .cloned()
        .unwrap_or_default()
}

/// The run's summary statistics: its stored totals, or the sum of its
/// stored intervals if it never finished.
pub fn totals(run: &RunRecord) -> Stats {
    run.totals_or_intervals()
}

/// Achieved operations per second over the measured period.
pub fn throughput(run: &RunRecord) -> f64 {
    match &run.summary.totals {
        Some(t) => t.throughput,
        None => {
            let s = run.measured().as_secs_f64();
            let ops: u64 = measured_intervals(run).map(|iv| iv.ops_done).sum();
            if s > 0.0 {
                ops as f64 / s
            } else {
                0.0
            }
        }
    }
}

/// Operations of one kind per second over the measured period.
pub fn kind_throughput(run: &RunRecord, total: &Stats, kind: OpKind) -> f64 {
    let s = run.measured().as_secs_f64();
    let n = total.op(kind).map_or(0, |o| o.count());
    if s > 0.0 {
        n as f64 / s
    } else {
        0.0
    }
}

/// The intervals the summary covers (warm-up left out).
pub fn measured_intervals(run: &RunRecord) -> impl Iterator<Item = &StoredInterval> {
    run.intervals.iter().filter(|iv| !iv.warmup)
}

/// The kinds either run recorded, in YCSB's order.
pub fn kinds_of(runs: &[&RunRecord]) -> Vec<OpKind> {
    let totals: Vec<Stats> = runs.iter().map(|r| totals(r)).collect();
    OpKind::all()
        .into_iter()
        .filter(|k| {
            totals
                .iter()
                .any(|t| t.op(*k).is_some_and(|o| o.count() > 0))
        })
        .collect()
}

/// The successful operations' histogram of one kind and latency, or an
/// empty one.
pub fn histogram(stats: &Stats, kind: OpKind, latency: Latency) -> Histogram<u64> {
    stats
        .op(kind)
        .map(|o| latency.of(&o.ok).clone())
        .unwrap_or_else(sojourn_core::histograms::new_histogram)
}

/// Every kind's successful operations merged, for one latency.
pub fn all_kinds(stats: &Stats, latency: Latency) -> Histogram<u64> {
    let mut h = sojourn_core::histograms::new_histogram();
    for (_, o) in stats.kinds() {
        // One configuration everywhere: add cannot fail.
        let _ = h.add(latency.of(&o.ok));
    }
    h
}

/// One point of a time series: the middle of an interval, in seconds
/// since the run's first operation.
pub fn midpoint(iv: &StoredInterval) -> f64 {
    iv.start.as_secs_f64() + iv.length.as_secs_f64() / 2.0
}

/// Operations per second in each interval: of one kind, or every
/// top-level operation with `None`.
/// Intervals shorter than a quarter of the usual one (the sliver a run
/// ends with) are left out: a rate over a few milliseconds is noise.
pub fn throughput_series(run: &RunRecord, kind: Option<OpKind>) -> Vec<(f64, f64)> {
    let mut lengths: Vec<f64> = run
        .intervals
        .iter()
        .map(|iv| iv.length.as_secs_f64())
        .collect();
    lengths.sort_by(f64::total_cmp);
    let usual = lengths.get(lengths.len() / 2).copied().unwrap_or(0.0);
    run.intervals
        .iter()
        .filter(|iv| iv.length.as_secs_f64() > 0.0 && iv.length.as_secs_f64() >= usual / 4.0)
        .map(|iv| {
            let n = match kind {
                Some(k) => iv.stats.op(k).map_or(0, |o| o.count()),
                None => iv.ops_done,
            };
            (midpoint(iv), n as f64 / iv.length.as_secs_f64())
        })
        .collect()
}

/// Arrivals the schedule released per second in each interval (open loop;
/// empty for runs stored before it was kept).
pub fn offered_series(run: &RunRecord) -> Vec<(f64, f64)> {
    run.intervals
        .iter()
        .filter(|iv| iv.length.as_secs_f64() > 0.0)
        .filter_map(|iv| Some((midpoint(iv), iv.offered? as f64 / iv.length.as_secs_f64())))
        .collect()
}

/// The rate a run's profile (`rate` property) offered over time, scaled
/// to this client's share (`rate.share`); empty without a profile.
pub fn profile_series(run: &RunRecord) -> Vec<(f64, f64)> {
    let Some(target) =
        property(run, "rate").and_then(|t| sojourn_core::rate::Target::parse_profile(t).ok())
    else {
        return Vec::new();
    };
    let share = property(run, "rate.share")
        .and_then(|s| s.split_once('/')?.1.trim().parse::<f64>().ok())
        .unwrap_or(1.0);
    // Merged clients offered their shares together: the whole again.
    let clients = f64::from(run.meta().client_count.max(1));
    let factor = clients / share;
    let len = target.length().unwrap_or_default().as_secs_f64();
    (0..=400)
        .filter_map(|i| {
            let t = len * f64::from(i) / 400.0;
            let r = target.rate_at(std::time::Duration::from_secs_f64(t.min(len * 0.999_999)))?;
            Some((t, r * factor))
        })
        .collect()
}

/// A percentile of one kind and latency in each interval, in nanoseconds
/// (NaN where the interval has no such operation, so plots show a gap).
pub fn percentile_series(
    run: &RunRecord,
    kind: OpKind,
    latency: Latency,
    q: f64,
) -> Vec<(f64, f64)> {
    per_interval(run, kind, |o| {
        let h = latency.of(&o.ok);
        (!h.is_empty()).then(|| h.value_at_quantile(q) as f64)
    })
}

/// Time waiting in the client for one kind in each interval, in
/// nanoseconds: the mean response time minus the mean service time of its
/// successful operations (NaN where the interval has none, so plots show a
/// gap). A difference of means is the mean of each operation's wait
/// (response minus service is the time from its intended to its actual
/// send), which a difference of percentiles is not. Both means come from
/// the histograms, so the figure is good to their precision; it is never
/// negative, since each operation's response time is at least its service
/// time and the histograms' buckets keep that order.
pub fn waiting_series(run: &RunRecord, kind: OpKind) -> Vec<(f64, f64)> {
    per_interval(run, kind, |o| {
        (!o.ok.service.is_empty() && !o.ok.response.is_empty())
            .then(|| (o.ok.response.mean() - o.ok.service.mean()).max(0.0))
    })
}

/// `f` of one kind's figures in each interval, at the interval's
/// midpoint; NaN where it has none (plots show a gap).
fn per_interval(
    run: &RunRecord,
    kind: OpKind,
    f: impl Fn(&OpStats) -> Option<f64>,
) -> Vec<(f64, f64)> {
    run.intervals
        .iter()
        .map(|iv| {
            let v = iv.stats.op(kind).and_then(&f).unwrap_or(f64::NAN);
            (midpoint(iv), v)
        })
        .collect()
}

/// The percentile spectrum of a histogram, as the classic HdrHistogram
/// plot draws it: `(1 / (1 - q), value in ns)`, five points per halving
/// of the distance to 100%, up to the last quantile the sample count
/// resolves (`1 - q >= 1 / n`).
pub fn spectrum(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    let n = h.len();
    if n == 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for v in h.iter_quantiles(5) {
        let q = v.quantile_iterated_to();
        if q >= 1.0 || 1.0 - q < 1.0 / n as f64 {
            break;
        }
        out.push((1.0 / (1.0 - q), v.value_iterated_to() as f64));
    }
    // The maximum, at the resolution limit.
    out.push((n as f64, h.max() as f64));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiting_is_the_difference_of_the_means() {
        use sojourn_core::backend::Status;
        let mut run = sojourn_testkit::runs::Synthetic {
            intervals: 2,
            ..sojourn_testkit::runs::Synthetic::new(1)
        }
        .stored_run();
        // Reads waited 600 ns and 0 ns (mean 300), though their p50s of
        // response and service differ by 500 ns; updates never waited.
        // Below 2,048 ns the histograms keep every value exactly.
        let mut s = Stats::default();
        s.record(OpKind::Read, Status::Ok, 100, 700);
        s.record(OpKind::Read, Status::Ok, 200, 200);
        s.record(OpKind::Update, Status::Ok, 900, 900);
        // A failed read's wait is not counted (its latencies are not kept).
        s.record(OpKind::Read, Status::Error, 100, 1900);
        run.intervals[0].stats = s;
        run.intervals[1].stats = Stats::default();
        let reads = waiting_series(&run, OpKind::Read);
        assert_eq!(reads.len(), 2);
        assert_eq!(reads[0], (0.5, 300.0));
        assert!(reads[1].1.is_nan(), "no reads: a gap, not a zero");
        assert_eq!(waiting_series(&run, OpKind::Update)[0].1, 0.0);
    }

    #[test]
    fn spectrum_rises_and_ends_at_the_maximum() {
        let mut h = sojourn_core::histograms::new_histogram();
        for v in 1..=10_000u64 {
            h.record(v * 1000).unwrap();
        }
        let s = spectrum(&h);
        assert!(s.len() > 20);
        assert_eq!(s[0].0, 1.0);
        assert!(s.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1));
        let last = s.last().unwrap();
        assert_eq!(last.0, 10_000.0);
        assert_eq!(last.1, h.max() as f64);
        // The median sits at x = 2.
        let mid = s.iter().find(|p| p.0 >= 2.0).unwrap();
        assert!((mid.1 / 5_000_000.0 - 1.0).abs() < 0.01, "{mid:?}");
    }

    /// A stored synthetic run with `labels`, its service times scaled to a
    /// mean of `mean_ns`.
    fn labelled(seed: u64, mean_ns: f64, labels: &[(&str, &str)]) -> RunRecord {
        let mut r = sojourn_testkit::runs::Synthetic {
            intervals: 2,
            mean_ns,
            ..sojourn_testkit::runs::Synthetic::new(seed)
        }
        .stored_run();
        for (k, v) in labels {
            r.summary.meta.labels.insert(k.to_string(), v.to_string());
        }
        r
    }

    #[test]
    fn runs_are_named_by_what_distinguishes_them() {
        let by_experiment = [
            labelled(1, 1e6, &[("experiment", "load"), ("suite", "w")]),
            labelled(2, 1e6, &[("experiment", "uniform_read"), ("suite", "w")]),
        ];
        assert_eq!(names(&by_experiment), ["load", "uniform_read"]);
        // No experiment: the labels that differ, not those all share.
        let by_label = [
            labelled(3, 1e6, &[("commit", "c1"), ("suite", "w")]),
            labelled(4, 1e6, &[("commit", "c2"), ("suite", "w")]),
        ];
        assert_eq!(names(&by_label), ["commit=c1", "commit=c2"]);
        // One label that tells them all apart is enough; free text is no
        // name.
        let steps = [
            labelled(3, 1e6, &[("step", "1"), ("ok", "true"), ("why", "fine")]),
            labelled(
                4,
                1e6,
                &[("step", "2"), ("ok", "false"), ("why", "too slow")],
            ),
            labelled(4, 1e6, &[("step", "3"), ("ok", "false")]),
        ];
        assert_eq!(names(&steps), ["step=1", "step=2", "step=3"]);
        let pairs = [
            labelled(3, 1e6, &[("db", "pg"), ("size", "s")]),
            labelled(4, 1e6, &[("db", "pg"), ("size", "l")]),
            labelled(4, 1e6, &[("db", "my"), ("size", "s")]),
        ];
        assert_eq!(
            names(&pairs),
            ["db=pg size=s", "db=pg size=l", "db=my size=s"]
        );
        // Nothing tells them apart: workload and phase, then the id.
        let alike = [labelled(5, 1e6, &[]), labelled(6, 1e6, &[])];
        let n = names(&alike);
        for (name, r) in n.iter().zip(&alike) {
            let id: String = r.id().as_str().chars().take(8).collect();
            assert_eq!(*name, format!("workloadc run #{id}"));
        }
        assert_ne!(n[0], n[1]);
    }

    #[test]
    fn one_unit_for_the_page_from_the_largest_p99() {
        // Exponential service times: p99 is about 4.6 means.
        let fast = labelled(7, 50e3, &[]);
        let slow = labelled(8, 1e6, &[]);
        assert_eq!(Unit::of(std::slice::from_ref(&fast)), Unit::Micros);
        assert_eq!(Unit::of(&[fast, slow]), Unit::Millis);
        assert_eq!(Unit::Micros.of_ns(82_047.0), 82.047);
        assert_eq!(Unit::Millis.name(), "ms");
    }
}
