//! The JSON report (`--format json`, `--json FILE`): the same results as the
//! text summary plus what YCSB's format has no room for: offered versus
//! achieved rate, client CPU per operation, scheduling lag, and percentiles
//! 50/90/95/99/99.9/99.99/max of both service and response time per
//! operation kind. Field names are stable; see docs/json.md.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

use crate::cpu::CpuTimes;
use crate::executor::StopReason;
use crate::histograms::LatencySummary;
use crate::run_record::{RunMeta, RunRecord};
use crate::schedule::Arrival;
use crate::selfcheck::SelfCheck;
use crate::workload::{Phase, Workload};

use super::export::Export;
use super::time::rfc3339;

#[derive(Serialize)]
pub struct Report {
    pub sojourn_version: &'static str,
    pub phase: String,
    pub workload: Vec<String>,
    pub backend: String,
    pub started_at: String,
    pub seed: u64,
    pub threads: u64,
    pub runtime_threads: u64,
    /// Why that many runtime threads (null for runs stored before it was
    /// kept).
    pub runtime_threads_why: Option<String>,
    /// The busiest runtime thread's CPU time over the run's length.
    pub busiest_thread: Option<f64>,
    pub arrival: Option<&'static str>,
    pub target_ops_per_sec: Option<f64>,
    /// Arrivals released by the schedule per second of run (open loop).
    pub offered_ops_per_sec: Option<f64>,
    pub achieved_ops_per_sec: f64,
    pub runtime_ms: f64,
    pub measured_ms: f64,
    pub warmup_s: f64,
    pub operations: u64,
    /// `operation_count`, `max_execution_time`, `interrupted`,
    /// `slo_missed` or `profile_end` ([`crate::executor::StopReason::name`]).
    pub stop_reason: String,
    pub interrupted: bool,
    pub client_cpu: ClientCpu,
    /// The database's own counters over the phase, where it tells.
    pub server: Option<ServerReport>,
    pub scheduling_lag: Option<LatencySummary>,
    /// Whether the load offered was the load intended (open loop).
    pub self_check: Option<SelfCheck>,
    pub ops: BTreeMap<&'static str, OpReport>,
    /// A LIOPS run's rows touched and rates (workload=liops, run phase).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub liops: Option<super::liops::LiopsFigures>,
    /// The key-value workload's pools (readers, then writers), each its
    /// operations per second over the measured period and its latencies
    /// (absent for other workloads).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pools: Vec<super::pools::PoolFigures>,
    /// A rate profile's segments, each on its own (absent without one).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub segments: Vec<super::segments::SegmentReport>,
    /// Under `rate.slo`: the highest segment rate that held before the
    /// first that missed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub knee_ops_per_sec: Option<f64>,
    pub warnings: Vec<String>,
    pub properties: BTreeMap<String, String>,
}

#[derive(Serialize)]
pub struct ClientCpu {
    pub user_s: f64,
    pub system_s: f64,
    pub us_per_op: f64,
    pub utilisation: f64,
}

/// The change of the server's counters between the start and the end of
/// the phase, and per operation (over `operations`, warm-up included, as
/// the samples bracket the whole phase).
#[derive(Serialize)]
pub struct ServerReport {
    pub operations: u64,
    pub deltas: BTreeMap<String, f64>,
    pub per_op: BTreeMap<String, f64>,
}

impl ServerReport {
    pub fn of(s: &crate::backend::ServerStats) -> ServerReport {
        ServerReport {
            operations: s.operations,
            deltas: s.deltas.clone(),
            per_op: s.per_op_figures(),
        }
    }
}

#[derive(Serialize)]
pub struct OpReport {
    pub count: u64,
    pub statuses: BTreeMap<&'static str, u64>,
    /// Successful operations: actual send to reply.
    pub service: LatencySummary,
    /// Successful operations: intended send to reply.
    pub response: LatencySummary,
    pub failed_service: Option<LatencySummary>,
    pub failed_response: Option<LatencySummary>,
    /// Why operations failed, most frequent first (empty when none did).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<crate::failures::Cause>,
}

impl Report {
    /// The report of `run`, as it ended or as the store kept it.
    pub fn of(run: &RunRecord) -> Report {
        let meta = run.meta();
        let total = run.totals_or_intervals();
        let ops = total
            .kinds()
            .map(|(kind, s)| {
                let statuses = crate::backend::Status::ALL
                    .iter()
                    .filter(|st| s.count_of(**st) > 0)
                    .map(|st| (st.ycsb_name(), s.count_of(*st)))
                    .collect();
                (
                    kind.name(),
                    OpReport {
                        count: s.count(),
                        statuses,
                        service: LatencySummary::of(&s.ok.service),
                        response: LatencySummary::of(&s.ok.response),
                        failed_service: s.failed.as_ref().map(|f| LatencySummary::of(&f.service)),
                        failed_response: s.failed.as_ref().map(|f| LatencySummary::of(&f.response)),
                        failures: s.causes(meta.started_at),
                    },
                )
            })
            .collect();
        let totals = run.summary.totals.clone();
        let thread_use = totals.as_ref().and_then(|t| t.thread_use);
        let measured = run.measured();
        let elapsed = totals.as_ref().map_or(measured, |t| t.elapsed);
        let operations_all = totals.as_ref().map_or(total.ops_done, |t| t.operations_all);
        let scheduling_lag = total.lag.as_deref().map(LatencySummary::of);
        // A run read back from the store has no arrival test's bins; the
        // rest of the check rests on what it kept.
        let self_check = run.self_check.clone().or_else(|| {
            let t = totals.as_ref()?;
            meta.target?;
            let served = if t.scheduled == 0 {
                1.0
            } else {
                t.operations_all as f64 / t.scheduled as f64
            };
            let lag = scheduling_lag.as_ref().map_or(0.0, |l| l.p99_us);
            Some(SelfCheck::new(served, lag, None))
        });
        let stop_reason = totals
            .as_ref()
            .map_or_else(|| run.summary.status.to_string(), |t| t.stop_reason.clone());
        Report {
            sojourn_version: env!("CARGO_PKG_VERSION"),
            phase: meta.phase.clone(),
            workload: meta.workloads.clone(),
            backend: meta.backend.clone(),
            started_at: rfc3339(meta.started_at),
            seed: totals.as_ref().map_or(meta.seed, |t| t.seed),
            threads: meta.threads,
            runtime_threads: totals.as_ref().map_or(0, |t| t.runtime_threads),
            runtime_threads_why: thread_use.map(|u| u.why.to_string()),
            busiest_thread: thread_use.map(|u| u.busiest),
            arrival: meta.target.map(|_| arrival(meta)),
            target_ops_per_sec: meta.target,
            offered_ops_per_sec: totals.as_ref().and_then(|t| t.offered),
            achieved_ops_per_sec: run.throughput(),
            runtime_ms: elapsed.as_secs_f64() * 1000.0,
            measured_ms: measured.as_secs_f64() * 1000.0,
            warmup_s: meta.warmup.as_secs_f64(),
            operations: total.ops_done,
            interrupted: stop_reason == StopReason::Interrupted.name(),
            stop_reason,
            client_cpu: client_cpu(
                totals.as_ref().map(|t| t.cpu).unwrap_or_default(),
                operations_all,
                elapsed,
            ),
            server: run.server.as_ref().map(ServerReport::of),
            scheduling_lag,
            self_check,
            ops,
            liops: match super::export::workload_of(run) {
                Some(Workload::Liops(cfg)) if meta.phase == Phase::Run.name() => {
                    Some(super::liops::LiopsFigures::of(&cfg, run))
                }
                _ => None,
            },
            pools: super::pools::PoolFigures::of(run),
            segments: run
                .segments
                .iter()
                .map(super::segments::SegmentReport::of)
                .collect(),
            knee_ops_per_sec: super::segments::knee_rate(run),
            warnings: run.warnings.clone(),
            properties: meta.properties.clone(),
        }
    }
}

/// How a run's arrivals were spaced: its `arrival` property as the plan
/// reads it.
fn arrival(meta: &RunMeta) -> &'static str {
    match meta
        .properties
        .get("arrival")
        .map(|a| a.trim().to_ascii_lowercase())
    {
        Some(a) if a == "uniform" => Arrival::Uniform.name(),
        _ => Arrival::Poisson.name(),
    }
}

fn client_cpu(cpu: CpuTimes, operations: u64, elapsed: Duration) -> ClientCpu {
    let ops = operations.max(1) as f64;
    ClientCpu {
        user_s: cpu.user_s,
        system_s: cpu.system_s,
        us_per_op: cpu.total_s() * 1e6 / ops,
        utilisation: cpu.utilisation(elapsed),
    }
}

/// The JSON report of one run, or an array of them.
pub struct JsonReport;

impl Export for JsonReport {
    fn write(&self, runs: &[RunRecord], out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let reports: Vec<Report> = runs.iter().map(Report::of).collect();
        match reports.as_slice() {
            [one] => serde_json::to_writer_pretty(&mut *out, one)?,
            all => serde_json::to_writer_pretty(&mut *out, all)?,
        }
        writeln!(out)
    }
}
