//! Warnings about a result that may not mean what it seems, each saying what
//! to do about it. Checked after every run; printed to stderr and kept in
//! the JSON report.

use std::fmt;

use serde::Serialize;

use crate::backend::Status;
use crate::executor::{RunOutcome, StopReason, ThreadsWhy};
use crate::failures::Cause;
use crate::histograms::Stats;
use crate::op::OpKind;
use crate::properties::UnknownKey;

pub use crate::selfcheck::{BELOW_TARGET, LATE_SEND_MS};
/// What marks a [`Warning::FewSamples`] in its text (see
/// [`Warning::is_few_samples`]).
const FEW_BEYOND: &str = "fewer than 10 lie beyond it";

/// Causes of failures a warning names; the JSON report has them all.
const SHOWN_CAUSES: usize = 3;

/// Above this share of the CPU it may use, the client may be the bottleneck.
pub const CLIENT_CPU_SATURATED: f64 = 0.90;

#[derive(Clone, Debug, PartialEq)]
pub enum Warning {
    UnknownProperty(UnknownKey),
    FewSamples {
        kind: OpKind,
        percentile: f64,
        count: u64,
        needed: u64,
    },
    BelowTarget {
        target: f64,
        achieved: f64,
        /// The target is a rate profile's mean.
        profile: bool,
    },
    Failures {
        kind: OpKind,
        failed: u64,
        total: u64,
        /// Why, most frequent first: the database's words where it gave
        /// them, else the status.
        causes: Vec<Cause>,
        /// The workload's properties a run must share with the load
        /// ([`crate::workload::Workload::data_shape`]).
        data_shape: String,
    },
    ClientCpuSaturated {
        utilisation: f64,
        cores: usize,
    },
    /// A runtime thread hardly idled, and more threads could have run.
    ThreadSaturated {
        busy: f64,
        threads: usize,
        connections: usize,
        /// Threads to ask for; `None` where the threads follow shared
        /// sockets, whose count is what to raise.
        suggest: Option<usize>,
    },
    NothingMeasured {
        warmup_s: f64,
        elapsed_s: f64,
    },
    NotPoisson {
        dispersion: f64,
        z: f64,
    },
    LateSends {
        lag_p99_ms: f64,
    },
    /// The database stopped answering for a while (see [`DatabaseStall`]).
    DatabaseStall(DatabaseStall),
    Abandoned {
        count: u64,
        drain_s: f64,
    },
    Interrupted,
    /// The server's counters could not be read at the start or end of the
    /// phase: the measurement stands, without server figures.
    ServerCounters {
        message: String,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::UnknownProperty(u) => write!(f, "{u}; it is ignored"),
            Warning::BelowTarget {
                target,
                achieved,
                profile: false,
            } => write!(
                f,
                "achieved {achieved:.1} ops/s, {:.1}% of the {target} ops/s target: the database \
                 (or the client) did not keep up, so operations queued and response times include that wait. \
                 Lower -target, or add -threads if service times are low",
                100.0 * achieved / target
            ),
            Warning::BelowTarget {
                target,
                achieved,
                profile: true,
            } => write!(
                f,
                "achieved {achieved:.1} ops/s, {:.1}% of the {target:.1} ops/s the rate profile \
                 offered on average: the database (or the client) did not keep up, so operations \
                 queued and response times include that wait; the segment lines say where",
                100.0 * achieved / target
            ),
            Warning::Failures { kind, failed, total, causes, data_shape } => {
                write!(f, "{failed} of {total} {} operations did not succeed: ", kind.ycsb_name())?;
                for (i, c) in causes.iter().take(SHOWN_CAUSES).enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "{c}")?;
                }
                if causes.len() > SHOWN_CAUSES {
                    write!(
                        f,
                        "; and {} more cause(s), in the JSON report",
                        causes.len() - SHOWN_CAUSES
                    )?;
                }
                write!(
                    f,
                    ". Check the database's log and that the data was loaded with the same \
                     workload ({data_shape})"
                )
            }
            Warning::ClientCpuSaturated { utilisation, cores } => write!(
                f,
                "the client used {:.0}% of the {cores} CPU core(s) it may use: the figures may describe \
                 sojourn rather than the database. Run the client on other cores or machines, or lower -threads",
                utilisation * 100.0
            ),
            Warning::ThreadSaturated { busy, threads, connections, suggest } => {
                write!(
                    f,
                    "a runtime thread of the client was on a CPU {:.0}% of the run ({threads} thread(s) \
                     for {connections} connections): it may have set the pace, and its queue may be in \
                     the response times. ",
                    busy * 100.0
                )?;
                match suggest {
                    Some(n) => write!(
                        f,
                        "-p runtime.threads={n} spreads the connections over more threads"
                    ),
                    None => f.write_str(
                        "More shared sockets (-p connections=K) give the connections more threads",
                    ),
                }
            }
            Warning::NothingMeasured { warmup_s, elapsed_s } => write!(
                f,
                "the run lasted {elapsed_s:.1} s, within its {warmup_s:.1} s warm-up, so the summary is empty; \
                 lower --warmup or run longer"
            ),
            Warning::Abandoned { count, drain_s } => write!(
                f,
                "{count} operation(s) were still in flight {drain_s:.1} s after the run stopped and were \
                 abandoned (not counted); the database may be stalled"
            ),
            Warning::FewSamples { kind, percentile, count, needed } => write!(
                f,
                "the {} p{percentile} rests on {count} operations, so {FEW_BEYOND} and \
                 it is mostly noise; run at least {needed} operations for it to mean something",
                kind.ycsb_name()
            ),
            Warning::NotPoisson { dispersion, z } => write!(
                f,
                "the client did not release operations as a Poisson process (dispersion {dispersion:.2}, 1 \
                 expected; z = {z:.1}; waits for busy connections left out): {}",
                if *dispersion < 1.0 {
                    "it released them at its own pace, too slow for the schedule; give the client more CPU or lower -target"
                } else {
                    "it released them in bursts, so the client or its machine stalled; give the client more CPU or lower -target"
                }
            ),
            Warning::DatabaseStall(stall) => write!(f, "{stall}"),
            Warning::LateSends { lag_p99_ms } => write!(
                f,
                "1% of operations left the client more than {lag_p99_ms:.2} ms after their intended time although \
                 connections were free: the client or machine is too busy to keep the schedule, and response times \
                 include that delay"
            ),
            Warning::ServerCounters { message } => write!(
                f,
                "the database's own counters give no figures for this run ({message}); the \
                 client's measurements are unaffected"
            ),
            Warning::Interrupted => write!(
                f,
                "the run was interrupted; the results cover only the part that ran"
            ),
        }
    }
}

/// The database stopped answering for a while: one operation waited far
/// longer for its answer than operations usually do (at least
/// [`STALL_AT_LEAST_MS`], and [`STALL_TIMES_MEDIAN`] times the median).
#[derive(Clone, Debug, PartialEq)]
pub struct DatabaseStall {
    /// The longest service time of the run, in seconds.
    pub longest_s: f64,
    /// Whether operations timed out after about that long: the stall
    /// lasted at least this long.
    pub cut_short: bool,
    /// About when the operation was sent, in seconds from the start, when
    /// the time series tells.
    pub at_s: Option<f64>,
    /// The longest response time, where it is well beyond `longest_s`:
    /// operations queued behind the stall (open loop) or waited through
    /// several timeouts, so the stall lasted about this long.
    pub longest_wait_s: Option<f64>,
    /// Operations due while it lasted (open loop), which waited too.
    pub due: Option<u64>,
}

/// A stall is at least this long...
pub const STALL_AT_LEAST_MS: f64 = 100.0;
/// ...and this many times the median service time.
pub const STALL_TIMES_MEDIAN: f64 = 20.0;

impl DatabaseStall {
    /// The stall in `o`, if there was one.
    pub fn of(o: &RunOutcome) -> Option<DatabaseStall> {
        let busiest = o.all.kinds().max_by_key(|(_, s)| s.count())?.1;
        let median_ns = busiest.ok.service.value_at_quantile(0.5) as f64;
        let (mut ok_max, mut failed_max) = (0u64, 0u64);
        for (_, s) in o.all.kinds() {
            ok_max = ok_max.max(s.ok.service.max());
            failed_max = failed_max.max(s.failed.as_ref().map_or(0, |f| f.service.max()));
        }
        let longest_ns = ok_max.max(failed_max);
        // Operations timed out at about the longest wait for an answer, so
        // the stall lasted at least that long (an answer that came as the
        // server woke can be a little longer than the timeout).
        let cut_short = failed_max > 0 && failed_max as f64 >= 0.9 * longest_ns as f64;
        let longest = longest_ns as f64;
        if longest < STALL_AT_LEAST_MS * 1e6 || longest < STALL_TIMES_MEDIAN * median_ns {
            return None;
        }
        let longest_s = longest / 1e9;
        // The interval in which the slowest answer came: it was sent about
        // its service time before that interval's middle.
        let at_s = o
            .slowest
            .filter(|s| (s.service_ns as f64 - longest).abs() <= 0.01 * longest)
            .map(|s| {
                let middle = s.interval_start + s.interval_length / 2;
                (middle.as_secs_f64() - longest_s).max(0.0)
            });
        let longest_wait_s = o
            .all
            .kinds()
            .map(|(_, s)| s.all_response_max())
            .max()
            .map(|ns| ns as f64 / 1e9)
            .filter(|&w| w > 1.2 * longest_s);
        let length_s = longest_wait_s.unwrap_or(longest_s);
        let due = o.target.map(|t| (t * length_s).round() as u64);
        Some(DatabaseStall {
            longest_s,
            cut_short,
            at_s,
            longest_wait_s,
            due,
        })
    }
}

impl fmt::Display for DatabaseStall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the database stopped answering for {} {:.2} s",
            if self.cut_short { "at least" } else { "about" },
            self.longest_s
        )?;
        if let Some(at) = self.at_s {
            write!(f, ", about {at:.1} s into the run")?;
        }
        match (self.cut_short, self.longest_wait_s) {
            (true, Some(w)) => write!(f, " (operations timed out; some waited {w:.2} s)")?,
            (true, None) => f.write_str(" (operations timed out)")?,
            (false, Some(w)) => write!(f, " (some operations waited {w:.2} s)")?,
            (false, None) => {}
        }
        if let Some(due) = self.due {
            write!(
                f,
                "; about {due} operations were due meanwhile and waited, so their response \
                 times include the stall"
            )?;
        }
        f.write_str(". The client is not what held them up; see the database's log for the cause")
    }
}

/// A runtime thread near saturation, where more threads could have run (at
/// one per core, [`Warning::ClientCpuSaturated`] speaks for the client).
fn thread_saturated(o: &RunOutcome, cores: usize) -> Option<Warning> {
    let most = cores.min(o.threads);
    let busy = o.thread_use.busiest;
    (o.elapsed.as_secs_f64() >= 0.5
        && busy > crate::executor::THREAD_SATURATED
        && o.runtime_threads < most)
        .then(|| Warning::ThreadSaturated {
            busy,
            threads: o.runtime_threads,
            connections: o.threads,
            // More threads than shared sockets would open more sockets:
            // another topology.
            suggest: (o.thread_use.why != ThreadsWhy::Sockets)
                .then(|| (o.runtime_threads * 2).min(most)),
        })
}

impl Serialize for Warning {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl Warning {
    /// Percentiles of `total` that rest on too few operations: one warning
    /// per kind, for the lowest of `percentiles` that is too high.
    pub fn few_samples(total: &Stats, percentiles: &[f64]) -> Vec<Warning> {
        let mut w = Vec::new();
        for (kind, s) in total.kinds() {
            let n = s.ok.service.len();
            if let Some(&p) = percentiles
                .iter()
                .find(|&&p| n > 0 && !crate::histograms::enough_samples(n, p / 100.0))
            {
                w.push(Warning::FewSamples {
                    kind,
                    percentile: p,
                    count: n,
                    needed: crate::histograms::samples_needed(p / 100.0),
                });
            }
        }
        w
    }

    /// Whether a stored warning's `text` is a [`Warning::FewSamples`]: a
    /// merge of several clients' runs judges its percentiles again on the
    /// merged operations rather than keep each client's.
    pub fn is_few_samples(text: &str) -> bool {
        text.contains(FEW_BEYOND)
    }

    /// This warning where a NOT_FOUND is an answer, not a failure (see
    /// [`crate::workload::Kind::misses_are_answers`]): a failures warning
    /// loses its misses, and goes if nothing else failed.
    pub fn without_misses(self) -> Option<Warning> {
        match self {
            Warning::Failures {
                kind,
                failed,
                total,
                causes,
                data_shape,
            } => {
                let misses: u64 = causes
                    .iter()
                    .filter(|c| c.status == Status::NotFound.ycsb_name())
                    .map(|c| c.count)
                    .sum();
                let causes: Vec<_> = causes
                    .into_iter()
                    .filter(|c| c.status != Status::NotFound.ycsb_name())
                    .collect();
                (failed > misses).then_some(Warning::Failures {
                    kind,
                    failed: failed - misses,
                    total,
                    causes,
                    data_shape,
                })
            }
            other => Some(other),
        }
    }

    /// What a finished run should be warned about. `percentiles` are the
    /// ones the summary prints (e.g. 95, 99); `data_shape` names what a run
    /// must share with the load
    /// ([`crate::workload::Workload::data_shape`]), for the warning about
    /// failed operations.
    pub fn check(
        o: &RunOutcome,
        warmup_s: f64,
        percentiles: &[f64],
        data_shape: &str,
    ) -> Vec<Warning> {
        let mut w = Vec::new();
        if o.interrupted() {
            w.push(Warning::Interrupted);
        }
        if let Some(target) = o.target {
            // Judged against what the schedule offered: a short Poisson run
            // offers a few percent more or less than its target by chance.
            // A staircase stopped at its first missed step was meant to
            // reach more than the database serves.
            if o.all.ops_done > 0
                && o.served_fraction() < BELOW_TARGET
                && o.stop_reason != StopReason::SloMissed
            {
                w.push(Warning::BelowTarget {
                    target,
                    achieved: o.throughput(),
                    profile: o.rate_profile.is_some(),
                });
            }
        }
        // The lag counts only the client's own lateness (a wait for a busy
        // connection is the database's, and not in it).
        let late = o
            .total
            .lag
            .as_ref()
            .filter(|l| !l.is_empty())
            .map(|lag| lag.value_at_quantile(0.99) as f64 / 1e6)
            .filter(|&p99_ms| p99_ms > LATE_SEND_MS);
        let stall = DatabaseStall::of(o);
        if let Some(c) = o.arrival_check.as_ref().filter(|c| !c.passed) {
            w.push(Warning::NotPoisson {
                dispersion: c.dispersion,
                z: c.z,
            });
        }
        if let Some(stall) = stall {
            w.push(Warning::DatabaseStall(stall));
        }
        if let Some(p99_ms) = late {
            w.push(Warning::LateSends { lag_p99_ms: p99_ms });
        }
        for (kind, s) in o.total.kinds() {
            let failed = s.failures();
            if failed > 0 {
                w.push(Warning::Failures {
                    kind,
                    failed,
                    total: s.count(),
                    causes: s.causes(o.started_at),
                    data_shape: data_shape.to_string(),
                });
            }
        }
        w.extend(Warning::few_samples(&o.total, percentiles));
        let util = o.cpu.utilisation(o.elapsed);
        if o.elapsed.as_secs_f64() >= 0.5 && util > CLIENT_CPU_SATURATED {
            w.push(Warning::ClientCpuSaturated {
                utilisation: util,
                cores: crate::cpu::available_cores(),
            });
        }
        if let Some(w2) = thread_saturated(o, crate::cpu::available_cores()) {
            w.push(w2);
        }
        if o.total.ops_done == 0 && o.all.ops_done > 0 {
            w.push(Warning::NothingMeasured {
                warmup_s,
                elapsed_s: o.elapsed.as_secs_f64(),
            });
        }
        if o.abandoned > 0 {
            w.push(Warning::Abandoned {
                count: o.abandoned,
                drain_s: 0.0,
            });
        }
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::null::NullBackend;
    use crate::backend::Schema;
    use crate::executor::{self, BackendConnector, Group, Meter, Quiet, RunConfig, StopHandle};

    struct Nothing;
    impl<C: Send + 'static> executor::Step<C> for Nothing {
        async fn step(&mut self, _: &mut C, m: &mut Meter) {
            let t = m.start();
            m.record(OpKind::Read, crate::backend::Status::Ok, t);
        }
    }

    fn outcome(connections: usize, runtime_threads: usize, busiest: f64) -> RunOutcome {
        let b = NullBackend::new();
        let cfg = RunConfig {
            groups: vec![Group::all(connections, None, Some(10))],
            runtime_threads,
            ..RunConfig::default()
        };
        let connector = BackendConnector {
            backend: &b,
            schema: std::sync::Arc::new(Schema::ycsb("t", "f", 1)),
        };
        let steps = (0..connections).map(|_| Nothing).collect();
        let mut o = executor::run(&connector, steps, &cfg, &StopHandle::new(), &Quiet).unwrap();
        // The figures the rule reads, as a longer run would have them.
        o.elapsed = std::time::Duration::from_secs(10);
        o.thread_use.busiest = busiest;
        o
    }

    #[test]
    fn a_saturated_thread_is_warned_about_only_where_more_could_run() {
        let w = thread_saturated(&outcome(16, 1, 0.97), 8).expect("a warning");
        assert_eq!(
            w,
            Warning::ThreadSaturated {
                busy: 0.97,
                threads: 1,
                connections: 16,
                suggest: Some(2)
            }
        );
        assert!(w.to_string().contains("-p runtime.threads=2"), "{w}");
        assert!(w.to_string().contains("97%"), "{w}");
        // Idle enough, or no more threads to be had: one per core, or one
        // per connection.
        assert_eq!(thread_saturated(&outcome(16, 1, 0.6), 8), None);
        assert_eq!(thread_saturated(&outcome(16, 2, 0.97), 2), None);
        assert_eq!(thread_saturated(&outcome(2, 2, 0.97), 8), None);
        let w = thread_saturated(&outcome(3, 2, 0.97), 8).expect("a warning");
        assert!(
            matches!(
                w,
                Warning::ThreadSaturated {
                    suggest: Some(3),
                    ..
                }
            ),
            "{w:?}"
        );
        // Threads that follow shared sockets: more sockets, not threads.
        let mut shared = outcome(16, 1, 0.97);
        shared.thread_use.why = ThreadsWhy::Sockets;
        let w = thread_saturated(&shared, 8).expect("a warning");
        assert!(w.to_string().contains("-p connections=K"), "{w}");
        assert!(!w.to_string().contains("runtime.threads"), "{w}");
    }
}
