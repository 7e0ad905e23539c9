//! Synthetic runs for the store's tests: known values recorded into core's
//! own types, so what is written is known exactly and no test depends on
//! timing.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::time::{Duration, UNIX_EPOCH};

use sojourn_core::backend::Status;
use sojourn_core::cpu::CpuTimes;
use sojourn_core::executor::{
    Interval, IntervalKind, RunOutcome, StopReason, ThreadUse, ThreadsWhy,
};
use sojourn_core::hist_codec;
use sojourn_core::histograms::{LatencySummary, Stats};
use sojourn_core::op::OpKind;
use sojourn_store::{RunMeta, RunStatus, Store, StoreError};

/// What one interval recorded, made from `seed` and the interval index.
pub fn interval_stats(seed: u64, i: u64) -> Stats {
    let mut s = Stats::default();
    for n in 0..200u64 {
        let v = 1_000 + (seed * 7919 + i * 104_729 + n * 15_485_863) % 5_000_000;
        s.record(OpKind::Read, Status::Ok, v, v + n * 1000);
        if n % 3 == 0 {
            s.record(OpKind::Update, Status::Ok, 2 * v, 2 * v + 50_000);
        }
        if n % 50 == 0 {
            s.record(OpKind::Read, Status::NotFound, v / 2, v);
            s.record(OpKind::Update, Status::Error, 9_000_000, 9_500_000);
        }
        s.record_lag(100 + n * 10);
        s.ops_done += 1;
    }
    s
}

/// The time-series row core would build from `stats` (as the executor's
/// aggregator does).
pub fn interval_of(stats: &Stats, i: u64, warmup: bool) -> Interval {
    Interval {
        start: Duration::from_millis(1000 * i),
        length: Duration::from_millis(1000),
        ops_done: stats.ops_done,
        offered: None,
        cpu: CpuTimes {
            user_s: 0.25,
            system_s: 0.125,
        },
        warmup,
        kinds: stats
            .kinds()
            .map(|(kind, s)| IntervalKind {
                kind,
                statuses: s.statuses,
                service: LatencySummary::of(&s.ok.service),
                response: LatencySummary::of(&s.ok.response),
                service_hist: hist_codec::encode(&s.ok.service),
                response_hist: hist_codec::encode(&s.ok.response),
            })
            .collect(),
        lag: stats.lag.as_deref().map(LatencySummary::of),
    }
}

pub struct Synthetic {
    pub meta: RunMeta,
    pub intervals: Vec<Interval>,
    pub per_interval: Vec<Stats>,
    pub outcome: RunOutcome,
}

/// A run of `n` one-second intervals, the first `warmup` of them warm-up.
pub fn synthetic(seed: u64, n: u64, warmup: u64) -> Synthetic {
    let mut meta = RunMeta::new("run");
    meta.workloads = vec!["workloada".into()];
    meta.backend = "sqlite:/tmp/bench.sqlite".into();
    meta.threads = 8;
    meta.target = Some(3000.0);
    meta.properties = BTreeMap::from([
        ("recordcount".to_string(), "1000".to_string()),
        ("fieldcount".to_string(), "1".to_string()),
        ("fieldlength".to_string(), "1024".to_string()),
        ("readallfields".to_string(), "false".to_string()),
        ("requestdistribution".to_string(), "zipfian".to_string()),
        (
            "hdrhistogram.percentiles".to_string(),
            "95,99,99.9".to_string(),
        ),
    ]);
    meta.labels = BTreeMap::from([
        ("experiment".to_string(), "latency_test".to_string()),
        ("note".to_string(), "a|b,c:d".to_string()),
    ]);
    meta.command_line = "sojourn run -P workloada".into();
    meta.measurement_interval = "both".into();
    meta.percentiles = vec![95.0, 99.0, 99.9];
    meta.warmup = Duration::from_secs(warmup);
    meta.seed = seed;
    let mut total = Stats::default();
    let mut all = Stats::default();
    let mut intervals = Vec::new();
    let mut per_interval = Vec::new();
    for i in 0..n {
        let s = interval_stats(seed, i);
        all.add(&s);
        if i >= warmup {
            total.add(&s);
        }
        intervals.push(interval_of(&s, i, i < warmup));
        per_interval.push(s);
    }
    let outcome = RunOutcome {
        started_at: meta.started_at,
        elapsed: Duration::from_secs(n),
        measured: Duration::from_secs(n - warmup),
        total,
        all,
        intervals: n,
        slowest: None,
        threads: 8,
        target: Some(3000.0),
        arrival: None,
        scheduled: 200 * n,
        cpu: CpuTimes {
            user_s: 0.25 * n as f64,
            system_s: 0.125 * n as f64,
        },
        stop_reason: StopReason::OperationCount,
        abandoned: 0,
        seed,
        runtime_threads: 2,
        thread_use: ThreadUse {
            why: ThreadsWhy::Set,
            busiest: (seed % 10) as f64 / 10.0,
        },
        arrival_check: None,
        server: None,
        rate_profile: None,
        segments: Vec::new(),
    };
    Synthetic {
        meta,
        intervals,
        per_interval,
        outcome,
    }
}

/// Write a synthetic run to the store, as the CLI does.
pub fn record(store: &Store, run: &Synthetic, warnings: &[String]) {
    try_record(store, run, warnings).unwrap();
}

/// [`record`], its error returned (a thread's of many writing at once).
pub fn try_record(store: &Store, run: &Synthetic, warnings: &[String]) -> Result<(), StoreError> {
    let id = store.begin_run(&run.meta)?;
    for iv in &run.intervals {
        store.write_interval(&id, iv)?;
    }
    store.finish_run(&id, &run.outcome, RunStatus::Completed, warnings)
}

/// Two `Stats` hold the same histograms, bucket for bucket, and counts.
pub fn assert_same_stats(a: &Stats, b: &Stats, what: &str) {
    let ka: Vec<OpKind> = a.kinds().map(|(k, _)| k).collect();
    let kb: Vec<OpKind> = b.kinds().map(|(k, _)| k).collect();
    assert_eq!(ka, kb, "{what}: kinds");
    for (k, sa) in a.kinds() {
        let sb = b.op(k).unwrap();
        assert_eq!(sa.statuses, sb.statuses, "{what}: {k:?} statuses");
        assert_eq!(sa.ok.service, sb.ok.service, "{what}: {k:?} service");
        assert_eq!(sa.ok.response, sb.ok.response, "{what}: {k:?} response");
    }
}

pub fn unix_secs(t: std::time::SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH).unwrap().as_secs_f64()
}

/// Give a synthetic run server counters, as a backend that tells would.
pub fn with_server(run: &mut Synthetic, blks_hit: f64) {
    let mut s = sojourn_core::backend::ServerStats {
        operations: run.outcome.all.ops_done,
        ..Default::default()
    };
    s.deltas.insert("blks_hit".into(), blks_hit);
    s.deltas.insert("server_cpu_s".into(), 0.5);
    s.deltas.insert("tup_updated".into(), 0.0);
    run.outcome.server = Some(s);
}
