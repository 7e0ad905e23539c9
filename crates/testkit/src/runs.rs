//! Runs for the tests of what reads stored results (reports, comparisons):
//!
//! - [`Synthetic`]: a run of a known distribution built from seeded random
//!   numbers, with no clock involved, so a test sees the same values every
//!   time and can know what a correct answer is (two runs from one
//!   distribution; a run with 20% less throughput; intervals whose
//!   latency drifts, to exercise autocorrelation corrections);
//! - [`memory_run`]: a real run of the `memory:` backend, driven in-process
//!   by core's executor exactly as `sojourn run` drives it;
//! - [`store_outcome`]: either kept in a results store as `sojourn run`
//!   keeps a run.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use sojourn_core::backend::memory::MemoryBackend;
use sojourn_core::backend::{Backend, Status};
use sojourn_core::cpu::CpuTimes;
use sojourn_core::executor::{
    self, BackendConnector, Interval, KeepSeries, RunOutcome, StopHandle, StopReason, ThreadUse,
    ThreadsWhy,
};
use sojourn_core::histograms::Stats;
use sojourn_core::op::OpKind;
use sojourn_core::plan::Plan;
use sojourn_core::properties::Properties;
use sojourn_core::schedule::Arrival;
use sojourn_core::workload::Phase;
use sojourn_store::{
    RunId, RunMeta, RunRecord, RunStatus, RunSummary, RunTotals, Store, StoredInterval,
};

/// A run of reads (and, with `update_fraction`, updates) whose arrivals
/// are a Poisson process at `rate` and whose service times are
/// exponential with mean `mean_ns`, scaled in each interval by
/// `exp(drift_i)` where `drift` is an AR(1) series with lag-1 correlation
/// `phi` and standard deviation `drift_sd` (0 for independent intervals).
/// Response time adds an exponential wait of a fifth of the mean.
#[derive(Clone, Debug)]
pub struct Synthetic {
    pub seed: u64,
    pub rate: f64,
    pub intervals: usize,
    pub interval: Duration,
    pub mean_ns: f64,
    pub drift_sd: f64,
    pub phi: f64,
    pub update_fraction: f64,
    /// `Some(rate)` makes it an open-loop run at that target.
    pub target: Option<f64>,
}

impl Synthetic {
    /// 30 one-second intervals of 500 reads per second, 1 ms mean, no
    /// drift, open loop at 500.
    pub fn new(seed: u64) -> Synthetic {
        Synthetic {
            seed,
            rate: 500.0,
            intervals: 30,
            interval: Duration::from_secs(1),
            mean_ns: 1e6,
            drift_sd: 0.0,
            phi: 0.0,
            update_fraction: 0.0,
            target: Some(500.0),
        }
    }

    /// What each interval recorded.
    pub fn interval_stats(&self) -> Vec<Stats> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(self.seed);
        let mut uniform = move || ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        let len = self.interval.as_secs_f64();
        let mut drift = 0.0;
        let mut out = Vec::with_capacity(self.intervals);
        for _ in 0..self.intervals {
            // Box-Muller for the drift's innovation.
            let z = (-2.0 * uniform().ln()).sqrt() * (2.0 * std::f64::consts::PI * uniform()).cos();
            drift = self.phi * drift + (1.0 - self.phi * self.phi).sqrt() * self.drift_sd * z;
            let scale = drift.exp();
            let mut s = Stats::default();
            let mut t = -uniform().ln() / self.rate;
            while t < len {
                let service = (-uniform().ln() * self.mean_ns * scale) as u64 + 1;
                let response = service + (-uniform().ln() * self.mean_ns * 0.2) as u64;
                let kind = if uniform() < self.update_fraction {
                    OpKind::Update
                } else {
                    OpKind::Read
                };
                s.record(kind, Status::Ok, service, response);
                s.ops_done += 1;
                t += -uniform().ln() / self.rate;
            }
            out.push(s);
        }
        out
    }

    /// The time series the executor would have handed its observer.
    pub fn series(&self) -> Vec<Interval> {
        self.interval_stats()
            .iter()
            .enumerate()
            .map(|(i, s)| interval_of(s, self.interval * i as u32, self.interval, false))
            .collect()
    }

    /// The run as the executor would have returned it.
    pub fn outcome(&self) -> RunOutcome {
        let per = self.interval_stats();
        let mut total = Stats::default();
        for s in &per {
            total.add(s);
        }
        let elapsed = self.interval * self.intervals as u32;
        RunOutcome {
            started_at: SystemTime::now(),
            elapsed,
            measured: elapsed,
            all: total.clone(),
            scheduled: total.ops_done,
            total,
            intervals: per.len() as u64,
            slowest: None,
            threads: 8,
            target: self.target,
            arrival: self.target.map(|_| Arrival::Poisson),
            cpu: CpuTimes::default(),
            stop_reason: StopReason::MaxExecutionTime,
            abandoned: 0,
            seed: self.seed,
            runtime_threads: 1,
            thread_use: ThreadUse {
                why: ThreadsWhy::Set,
                busiest: 0.5,
            },
            arrival_check: None,
            server: None,
            rate_profile: None,
            segments: Vec::new(),
        }
    }
}

impl Synthetic {
    /// The run as the store reads it back, without a store (for tests
    /// that compare hundreds of runs).
    pub fn stored_run(&self) -> RunRecord {
        let per = self.interval_stats();
        let mut total = Stats::default();
        for s in &per {
            total.add(s);
        }
        let measured = self.interval * self.intervals as u32;
        let mut meta = RunMeta::new("run");
        meta.workloads = vec!["workloadc".to_string()];
        meta.backend = "memory:".to_string();
        meta.target = self.target;
        meta.seed = self.seed;
        let totals = RunTotals {
            elapsed: measured,
            measured,
            operations: total.ops_done,
            operations_all: total.ops_done,
            throughput: total.ops_done as f64 / measured.as_secs_f64(),
            offered: self.target,
            scheduled: total.ops_done,
            abandoned: 0,
            stop_reason: "max_execution_time".to_string(),
            seed: self.seed,
            runtime_threads: 1,
            thread_use: None,
            cpu: CpuTimes::default(),
        };
        RunRecord {
            self_check: None,
            summary: RunSummary {
                meta,
                status: RunStatus::Completed,
                ended_at: Some(SystemTime::now()),
                error: None,
                totals: Some(totals),
                intervals: per.len() as u64,
            },
            warnings: Vec::new(),
            server: None,
            segments: Vec::new(),
            total,
            intervals: per
                .into_iter()
                .enumerate()
                .map(|(i, stats)| StoredInterval {
                    start: self.interval * i as u32,
                    length: self.interval,
                    ops_done: stats.ops_done,
                    offered: None,
                    cpu: CpuTimes::default(),
                    warmup: false,
                    ops: Vec::new(),
                    stats,
                    lag: None,
                })
                .collect(),
        }
    }
}

/// The time-series row core builds from an interval's statistics.
pub fn interval_of(stats: &Stats, start: Duration, length: Duration, warmup: bool) -> Interval {
    Interval::of(stats, start, length, CpuTimes::default(), warmup)
}

/// A run's description for the store: phase `run`, the workload and
/// properties given, `labels`, and the outcome's threads, target and seed.
pub fn meta_for(
    outcome: &RunOutcome,
    backend: &str,
    properties: &[(&str, &str)],
    labels: &[(&str, &str)],
) -> RunMeta {
    let mut m = RunMeta::new("run");
    let since = outcome
        .started_at
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    m.started_at = UNIX_EPOCH + Duration::from_micros(since.as_micros() as u64);
    m.workloads = vec!["workloadc".to_string()];
    m.backend = backend.to_string();
    m.threads = outcome.threads as u64;
    m.target = outcome.target;
    m.seed = outcome.seed;
    m.properties = properties
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    m.labels = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect::<BTreeMap<_, _>>();
    m
}

/// Keep a run in a store as `sojourn run` does: begun, its intervals, its
/// totals.
pub fn store_outcome(
    store: &Store,
    meta: &RunMeta,
    outcome: &RunOutcome,
    series: &[Interval],
) -> RunId {
    let id = store.begin_run(meta).expect("begin_run");
    for iv in series {
        store.write_interval(&id, iv).expect("write_interval");
    }
    store
        .finish_run(&id, outcome, RunStatus::Completed, &[])
        .expect("finish_run");
    id
}

/// Properties of a workload file from the repository's `workloads/`
/// folder with `overrides` on top (`-p` style).
pub fn workload_properties(repo: &Path, file: &str, overrides: &[(&str, &str)]) -> Properties {
    let path = repo.join("workloads").join(file);
    let text = std::fs::read_to_string(&path).expect("reading a shipped workload");
    let mut p = Properties::new();
    p.load_str(&text, &path).expect("a valid workload file");
    for (k, v) in overrides {
        p.set_arg(&format!("{k}={v}")).expect("a valid property");
    }
    p
}

/// Run one phase of `props` against `backend` in-process, as `sojourn
/// run` (or `load`) would; the table is created first if needed. Returns
/// the outcome and the time series.
pub fn memory_run(
    backend: &MemoryBackend,
    props: &Properties,
    phase: Phase,
) -> (RunOutcome, Vec<Interval>) {
    let plan = Plan::from_properties(props, phase, &[]).expect("a valid plan");
    let schema = Arc::new(plan.schema.clone());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    rt.block_on(backend.prepare(&schema, false))
        .expect("prepare");
    let connector = BackendConnector { backend, schema };
    let ready = rt
        .block_on(plan.workload.ready(phase, &plan.run, backend, &connector))
        .expect("a valid workload");
    let series = KeepSeries::default();
    let outcome = executor::with_pool(&connector, &plan.run, |pool| {
        ready.run(pool, &StopHandle::new(), &series)
    })
    .expect("connections open")
    .expect("the run completes");
    (outcome, series.into_intervals())
}

/// A stored-to-be closed-loop run of workload C (100 records, 4
/// connections) against a `memory:` backend that serves at most `cap`
/// operations per second, for `seconds`, timed in intervals of
/// `interval` seconds: its outcome, its time series, the properties it ran
/// with and the backend's description, for [`meta_for`].
pub struct CappedRun {
    pub outcome: RunOutcome,
    pub series: Vec<Interval>,
    pub properties: Vec<(String, String)>,
    pub backend: String,
}

impl CappedRun {
    pub fn new(repo: &Path, cap: u32, seed: u64, seconds: &str, interval: &str) -> CappedRun {
        let backend = MemoryBackend::from_query(&format!("max_ops_per_sec={cap}")).unwrap();
        let seed = seed.to_string();
        let common = [
            ("recordcount", "100"),
            ("threadcount", "4"),
            ("seed", &seed),
        ];
        memory_run(
            &backend,
            &workload_properties(repo, "workloadc", &common),
            Phase::Load,
        );
        let mut props = common.to_vec();
        props.extend([
            ("operationcount", "100000000"),
            ("maxexecutiontime", seconds),
            ("timeseries.interval", interval),
        ]);
        let (outcome, series) = memory_run(
            &backend,
            &workload_properties(repo, "workloadc", &props),
            Phase::Run,
        );
        CappedRun {
            outcome,
            series,
            properties: props
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            backend: format!("memory:?max_ops_per_sec={cap}"),
        }
    }

    /// Its metadata with `labels`, as [`meta_for`] makes it.
    pub fn meta(&self, labels: &[(&str, &str)]) -> RunMeta {
        let props: Vec<(&str, &str)> = self
            .properties
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        meta_for(&self.outcome, &self.backend, &props, labels)
    }

    /// Keep it in `store` with `meta`.
    pub fn store(&self, store: &Store, meta: &RunMeta) -> RunId {
        store_outcome(store, meta, &self.outcome, &self.series)
    }
}
