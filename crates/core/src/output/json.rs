//! The JSON report (`--format json`, `--json FILE`): the same results as the
//! text summary plus what YCSB's format has no room for: offered versus
//! achieved rate, client CPU per operation, scheduling lag, and percentiles
//! 50/90/95/99/99.9/99.99/max of both service and response time per
//! operation kind. Field names are stable; see docs/json.md.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::cpu::CpuTimes;
use crate::executor::{RunOutcome, StopReason};
use crate::plan::Plan;
use crate::recorder::LatencySummary;

use super::time::rfc3339;
use super::Warning;

#[derive(Serialize)]
pub struct Report {
    pub sojourn_version: &'static str,
    pub phase: &'static str,
    pub workload: Vec<String>,
    pub backend: String,
    pub started_at: String,
    pub seed: u64,
    pub threads: usize,
    pub runtime_threads: usize,
    pub arrival: Option<&'static str>,
    pub target_ops_per_sec: Option<f64>,
    /// Arrivals released by the schedule per second of run (open loop).
    pub offered_ops_per_sec: Option<f64>,
    pub achieved_ops_per_sec: f64,
    pub runtime_ms: f64,
    pub measured_ms: f64,
    pub warmup_s: f64,
    pub operations: u64,
    pub stop_reason: StopReason,
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
    pub warnings: Vec<Warning>,
    pub properties: BTreeMap<String, String>,
}

#[derive(Serialize)]
pub struct SelfCheck {
    /// Completed over offered operations; below 0.95 the database fell behind.
    pub served_fraction: f64,
    pub scheduling_lag_p99_us: f64,
    /// Poisson dispersion test of the send times (Poisson arrivals only).
    pub arrivals: Option<crate::selfcheck::ArrivalCheck>,
    pub passed: bool,
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
}

impl Report {
    pub fn new(
        plan: &Plan,
        outcome: &RunOutcome,
        backend: String,
        workload: Vec<String>,
        properties: BTreeMap<String, String>,
        warnings: &[Warning],
    ) -> Report {
        let ops = outcome
            .total
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
                    },
                )
            })
            .collect();
        let elapsed = outcome.elapsed.as_secs_f64();
        Report {
            sojourn_version: env!("CARGO_PKG_VERSION"),
            phase: plan.phase.name(),
            workload,
            backend,
            started_at: rfc3339(outcome.started_at),
            seed: outcome.seed,
            threads: outcome.threads,
            runtime_threads: outcome.runtime_threads,
            arrival: outcome.arrival.map(|a| a.name()),
            target_ops_per_sec: outcome.target,
            offered_ops_per_sec: outcome.target.map(|_| {
                if elapsed > 0.0 {
                    outcome.scheduled as f64 / elapsed
                } else {
                    0.0
                }
            }),
            achieved_ops_per_sec: outcome.throughput(),
            runtime_ms: elapsed * 1000.0,
            measured_ms: outcome.measured.as_secs_f64() * 1000.0,
            warmup_s: plan.run.warmup.as_secs_f64(),
            operations: outcome.total.ops_done,
            stop_reason: outcome.stop_reason,
            interrupted: outcome.interrupted(),
            client_cpu: client_cpu(outcome.cpu, outcome),
            server: outcome.server.as_ref().map(ServerReport::of),
            scheduling_lag: outcome.total.lag.as_deref().map(LatencySummary::of),
            self_check: outcome.target.map(|_| {
                let lag_p99_us = outcome
                    .all
                    .lag
                    .as_deref()
                    .filter(|l| !l.is_empty())
                    .map_or(0.0, |l| l.value_at_quantile(0.99) as f64 / 1e3);
                let served_fraction = outcome.served_fraction();
                let arrivals = outcome.arrival_check.clone();
                SelfCheck {
                    passed: served_fraction >= super::warning::BELOW_TARGET
                        && lag_p99_us <= super::warning::LATE_SEND_MS * 1e3
                        && arrivals.as_ref().is_none_or(|a| a.passed),
                    served_fraction,
                    scheduling_lag_p99_us: lag_p99_us,
                    arrivals,
                }
            }),
            ops,
            liops: plan
                .liops
                .as_ref()
                .filter(|_| plan.phase == crate::workload::Phase::Run)
                .map(|cfg| super::liops::LiopsFigures::of(cfg, outcome)),
            warnings: warnings.to_vec(),
            properties,
        }
    }
}

fn client_cpu(cpu: CpuTimes, o: &RunOutcome) -> ClientCpu {
    let ops = o.all.ops_done.max(1) as f64;
    ClientCpu {
        user_s: cpu.user_s,
        system_s: cpu.system_s,
        us_per_op: cpu.total_s() * 1e6 / ops,
        utilisation: cpu.utilisation(o.elapsed),
    }
}
