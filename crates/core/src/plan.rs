//! The run plan: every property and flag resolved into typed settings, with
//! every default filled in and every impossible combination refused before
//! anything runs. Command-line flags (`-threads`, `-target`, `--seed`, ...)
//! arrive here as properties with their own origin, so YCSB's rule holds in
//! one place: flags and `-p` win over workload files.

use std::time::Duration;

use serde::Serialize;

use crate::backend::Schema;
use crate::executor::{Group, RunConfig, SegmentSlo};
use crate::failures::TooManyFailed;
use crate::histograms::Stats;
use crate::properties::{Origin, Properties, PropertyError, UnknownKey, CORE_PROPERTIES};
use crate::rate::Target;
use crate::schedule::Arrival;
use crate::workload::{CoreConfig, Phase, Settled, Workload};

/// Properties sojourn adds to YCSB's.
pub const SOJOURN_PROPERTIES: &[&str] = &[
    "seed",
    "warmup",
    "arrival",
    "drain.timeout",
    "timeseries.interval",
    "dropdata",
    "timeout.ms",
    "runtime.threads",
    // How late the pacer may release an arrival, in microseconds.
    "pacer.lag_budget_us",
    // Offered load over time (see crate::rate).
    "rate",
    "trace",
    "trace.speed",
    "trace.scale",
    // This client's share of a profile or trace run by several: I/N.
    "rate.share",
    // Judge each segment and stop at the first that misses.
    "rate.slo",
    "rate.max_error_rate",
    // The share of a kind's operations that may fail before the phase
    // counts as failed (see crate::failures::TooManyFailed).
    "max_error_rate",
    // Sockets shared by the connections, pipelined (Redis, memcached).
    "connections",
];

/// Which latency blocks the YCSB summary prints.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MeasurementInterval {
    /// Service time only (`[READ]`).
    Op,
    /// Response time only (`[Intended-READ]`).
    Intended,
    /// Both.
    Both,
}

impl MeasurementInterval {
    /// As the store and the JSON report write it.
    pub fn name(self) -> &'static str {
        match self {
            MeasurementInterval::Op => "op",
            MeasurementInterval::Intended => "intended",
            MeasurementInterval::Both => "both",
        }
    }

    /// What [`MeasurementInterval::name`] wrote (`op` for anything else).
    pub fn parse(s: &str) -> MeasurementInterval {
        match s {
            "intended" => MeasurementInterval::Intended,
            "both" => MeasurementInterval::Both,
            _ => MeasurementInterval::Op,
        }
    }
}

/// A validated plan for one phase.
#[derive(Clone, Debug)]
pub struct Plan {
    pub phase: Phase,
    /// The workload the `workload` property selected, with its settings.
    pub workload: Workload,
    /// The table the workload's connections are opened on: the key-value
    /// workload's one-field records, LIOPS's tables, or YCSB's (which is
    /// also what the vote workload's connections are opened with; its own
    /// tables are set up apart).
    pub schema: Schema,
    /// How the phase is driven: its connections, their offered rate and
    /// operation count (the groups), timing and seed.
    pub run: RunConfig,
    pub measurement_interval: MeasurementInterval,
    pub percentiles: Vec<f64>,
    pub status_interval: Duration,
    /// The seed was chosen by sojourn rather than given.
    pub seed_generated: bool,
    /// The share of an operation kind's operations that may fail before
    /// the phase counts as failed (exit status 1); `None`: never (YCSB's
    /// way). A phase whose every operation of a kind failed fails at any
    /// share.
    pub max_error_rate: Option<f64>,
    /// Said before the phase starts: a count or time limit that ends a
    /// rate profile or trace before it is over.
    pub warnings: Vec<String>,
    pub unknown: Vec<UnknownKey>,
}

fn seconds(p: &Properties, key: &str, default: f64) -> Result<Duration, PropertyError> {
    let v = p.get_f64(key, default)?;
    if v < 0.0 || !v.is_finite() || v > 1e9 {
        return Err(p.invalid(key, "must be a number of seconds, 0 or more"));
    }
    Ok(Duration::from_secs_f64(v))
}

/// `pacer.lag_budget_us`: how late, in microseconds, the open-loop pacer
/// may release an arrival (see [`crate::executor::DEFAULT_LAG_BUDGET`]).
fn lag_budget(p: &Properties) -> Result<Duration, PropertyError> {
    let default = crate::executor::DEFAULT_LAG_BUDGET.as_micros() as u64;
    let us = p.get_u64("pacer.lag_budget_us", default)?;
    if !(5..=1000).contains(&us) {
        return Err(p.invalid(
            "pacer.lag_budget_us",
            "must be 5 to 1000 microseconds (the self-check fails a run whose sends are 1 ms late)",
        ));
    }
    Ok(Duration::from_micros(us))
}

impl Plan {
    /// The properties of `p` that no part of the plan it makes reads, each
    /// with a likely intended name: what [`Plan::unknown`] holds, and
    /// what is worth saying even when the plan cannot be made (a typo is
    /// often why a value is missing).
    pub fn unknown_keys(p: &Properties, known_prefixes: &[&str]) -> Vec<UnknownKey> {
        let mut known: Vec<&str> = CORE_PROPERTIES.to_vec();
        known.extend_from_slice(SOJOURN_PROPERTIES);
        known.extend(Workload::known_properties(p));
        let mut prefixes = known_prefixes.to_vec();
        prefixes.extend_from_slice(Workload::known_prefixes(p));
        p.unknown_keys(&known, &prefixes)
    }

    /// `known_prefixes` are the property prefixes backends accept
    /// (`redis.`, `db.`, ...), so their properties are not reported unknown.
    pub fn from_properties(
        p: &Properties,
        phase: Phase,
        known_prefixes: &[&str],
    ) -> Result<Plan, PropertyError> {
        let workload = Workload::from_properties(p, phase)?;
        let core = core_settings(p, &workload)?;
        let threads = match workload.connections() {
            Some(n) => n,
            None => p.get_u64_in("threadcount", 1, 1..=100_000)?,
        };
        if threads == 0 || threads > 100_000 {
            return Err(p.invalid("threadcount", "must be between 1 and 100000"));
        }
        let target = constant_target(p)?;
        let (seed, seed_generated) = match p.entry("seed") {
            Some(_) => (p.get_u64("seed", 0)?, false),
            None => (random_seed(), true),
        };
        // A profile or trace shapes the run phase; a load writes its
        // records as fast as the database takes them (or at -target), so
        // `bench` loads everything before its run follows the profile.
        let shaped = match phase {
            Phase::Run => shaped_target(p, seed)?,
            Phase::Load => None,
        };
        if let Some((key, _)) = &shaped {
            if target.is_some() {
                return Err(p.invalid(
                    key,
                    format!(
                        "sets the offered rate over time, and {} sets a constant one: leave one out",
                        p.describe("target")
                    ),
                ));
            }
        }
        let arrival = match p.get_choice("arrival", "poisson", &["poisson", "uniform"])? {
            "uniform" => Arrival::Uniform,
            _ => Arrival::Poisson,
        };
        let run_time = workload.run_time(phase);
        let max_time = seconds(p, "maxexecutiontime", run_time.unwrap_or(0.0))?;
        let max_execution_time = (max_time > Duration::ZERO).then_some(max_time);
        let operation_count = match phase {
            Phase::Load => workload.load_operations(&core),
            Phase::Run => (core.operation_count > 0).then_some(core.operation_count),
        };
        let rate_key = shaped
            .as_ref()
            .map(|(key, _)| *key)
            .or(target.map(|_| "target"));
        workload.check(&Settled {
            phase,
            props: p,
            rate_key,
            deadline: max_execution_time.is_some(),
        })?;
        if !workload.bounds_itself()
            && operation_count.is_none()
            && max_execution_time.is_none()
            && shaped.is_none()
        {
            return Err(p.invalid(
                "operationcount",
                "is 0 (no limit) and maxexecutiontime is not set, so the run would never end; set one of them",
            ));
        }
        let warmup = warmup(p, max_execution_time)?;
        let warnings = shaped
            .as_ref()
            .map(|(key, t)| cut_short(p, key, t, operation_count, max_execution_time))
            .into_iter()
            .flatten()
            .collect();
        // Paced operations have a response time of their own: a key-value
        // pool at a rate is paced as a target paces every connection.
        let paced = target.is_some() || shaped.is_some() || workload.paced();
        let measurement_interval = measurement_interval(p, paced)?;
        let percentiles = p.get_f64_list("hdrhistogram.percentiles", &[95.0, 99.0])?;
        if percentiles.iter().any(|&q| !(q > 0.0 && q <= 100.0)) {
            return Err(p.invalid(
                "hdrhistogram.percentiles",
                "each percentile must be above 0 and at most 100, e.g. 95,99,99.9",
            ));
        }
        let status_interval = seconds(p, "status.interval", 10.0)?.max(Duration::from_millis(100));
        let interval = seconds(p, "timeseries.interval", 1.0)?;
        if interval < Duration::from_millis(10) {
            return Err(p.invalid("timeseries.interval", "must be at least 0.01 seconds"));
        }
        let segment_slo = match phase {
            Phase::Run => segment_slo(p, shaped.as_ref())?,
            Phase::Load => None,
        };
        let unknown = Plan::unknown_keys(p, known_prefixes);
        let groups = workload.groups(
            phase,
            Group::following(
                threads as usize,
                shaped
                    .map(|(_, t)| t)
                    .or(target.map(crate::rate::Target::constant)),
                operation_count,
            ),
        );
        let schema = workload.schema(&core);
        Ok(Plan {
            phase,
            run: RunConfig {
                groups,
                arrival,
                max_execution_time,
                warmup,
                seed,
                interval,
                drain_timeout: seconds(p, "drain.timeout", 10.0)?,
                runtime_threads: p.get_u64("runtime.threads", 0)?.min(1024) as usize,
                segment_slo,
                lag_budget: lag_budget(p)?,
            },
            workload,
            schema,
            measurement_interval,
            percentiles,
            status_interval,
            seed_generated,
            max_error_rate: crate::failures::max_error_rate(p)?,
            warnings,
            unknown,
        })
    }

    /// Whether the phase failed by its failed operations, judged on
    /// `stats` (the whole phase, warm-up included).
    pub fn too_many_failed(&self, stats: &Stats) -> Option<TooManyFailed> {
        if self.workload.misses_are_answers() {
            let mut answered = stats.clone();
            answered.count_misses_as_answers();
            return answered.too_many_failed(self.max_error_rate);
        }
        stats.too_many_failed(self.max_error_rate)
    }
}

/// YCSB's settings: the core workload's, or, for another kind, what it
/// shares with the core workload (operationcount and the like still
/// type-check) without asking for a recordcount it does not use.
fn core_settings(p: &Properties, workload: &Workload) -> Result<CoreConfig, PropertyError> {
    if let Workload::Core(core) = workload {
        return Ok(core.clone());
    }
    let mut shared = p.clone();
    shared.remove("workload");
    if let (Some(n), false) = (workload.records(), shared.contains("recordcount")) {
        shared.set("recordcount", &n.to_string(), Origin::Default);
    }
    CoreConfig::from_properties(&shared)
}

/// `target` (`-target`): operations per second offered in total, `None`
/// for a closed loop. `target=0` in a file or `-p` is YCSB's
/// "unthrottled"; `-target 0` is refused as a slip.
fn constant_target(p: &Properties) -> Result<Option<f64>, PropertyError> {
    if p.entry("target").is_none() {
        return Ok(None);
    }
    let t = p.get_f64("target", 0.0)?;
    let from_flag = matches!(p.entry("target").map(|e| &e.origin), Some(Origin::Flag(_)));
    if t < 0.0 || (t == 0.0 && from_flag) {
        return Err(p.invalid(
            "target",
            "must be a rate above 0 operations per second; leave it out for a closed loop",
        ));
    }
    Ok((t > 0.0).then_some(t))
}

/// `warmup`: shorter than the run, or nothing would be measured.
fn warmup(p: &Properties, limit: Option<Duration>) -> Result<Duration, PropertyError> {
    let warmup = seconds(p, "warmup", 0.0)?;
    if let Some(limit) = limit.filter(|limit| warmup >= *limit) {
        return Err(p.invalid(
            "warmup",
            format!(
                "is {} s, as long as or longer than the whole run (maxexecutiontime {} s), \
                 so nothing would be measured; make it shorter than the run",
                warmup.as_secs_f64(),
                limit.as_secs_f64()
            ),
        ));
    }
    Ok(warmup)
}

/// `measurement.interval`: service time only unless operations are paced,
/// when their response time is their own figure too.
fn measurement_interval(p: &Properties, paced: bool) -> Result<MeasurementInterval, PropertyError> {
    let default = if paced { "both" } else { "op" };
    Ok(
        match p.get_choice("measurement.interval", default, &["op", "intended", "both"])? {
            "intended" => MeasurementInterval::Intended,
            "both" => MeasurementInterval::Both,
            _ => MeasurementInterval::Op,
        },
    )
}

/// The `rate` profile or `trace` the properties give, with the key that
/// gave it.
fn shaped_target(
    p: &Properties,
    seed: u64,
) -> Result<Option<(&'static str, Target)>, PropertyError> {
    let rate = p.get("rate").filter(|s| !s.trim().is_empty());
    let trace = p.get("trace").filter(|s| !s.trim().is_empty());
    let shaped = shaped_whole(p, rate, trace, seed)?;
    let Some(share) = p.get("rate.share") else {
        return Ok(shaped);
    };
    let parsed = share
        .split_once('/')
        .and_then(|(i, n)| Some((i.trim().parse::<u64>().ok()?, n.trim().parse::<u64>().ok()?)))
        .filter(|&(i, n)| i < n);
    let Some((i, n)) = parsed else {
        return Err(p.invalid(
            "rate.share",
            "must be I/N with I below N (this client's share of N), such as 0/4",
        ));
    };
    match shaped {
        Some((key, t)) => Ok(Some((key, t.share(i, n)))),
        None => Err(p.invalid(
            "rate.share",
            "shares a rate profile or trace among clients: set rate or trace too, or leave it out",
        )),
    }
}

fn shaped_whole(
    p: &Properties,
    rate: Option<&str>,
    trace: Option<&str>,
    seed: u64,
) -> Result<Option<(&'static str, Target)>, PropertyError> {
    match (rate, trace) {
        (Some(_), Some(_)) => Err(p.invalid(
            "rate",
            format!(
                "and {} both set the offered load over time: leave one out",
                p.describe("trace")
            ),
        )),
        (Some(text), None) => Target::parse_profile(text)
            .map(|t| Some(("rate", t)))
            .map_err(|e| p.invalid("rate", e.to_string())),
        (None, Some(path)) => {
            let factor = |key: &str| -> Result<f64, PropertyError> {
                let v = p.get_f64(key, 1.0)?;
                if !(v > 0.0 && v.is_finite() && v <= 1e6) {
                    return Err(p.invalid(key, "must be a factor above 0, such as 0.5 or 2"));
                }
                Ok(v)
            };
            let (speed, scale) = (factor("trace.speed")?, factor("trace.scale")?);
            Target::read_trace(std::path::Path::new(path), speed, scale, seed)
                .map(|t| Some(("trace", t)))
                .map_err(|e| p.invalid("trace", e.to_string()))
        }
        (None, None) => {
            for key in ["trace.speed", "trace.scale"] {
                if p.contains(key) {
                    return Err(p.invalid(
                        key,
                        "scales a trace: set trace (--trace FILE) too, or leave it out",
                    ));
                }
            }
            Ok(None)
        }
    }
}

/// The SLO each segment of a profile must hold (`rate.slo`), if any.
fn segment_slo(
    p: &Properties,
    shaped: Option<&(&str, Target)>,
) -> Result<Option<SegmentSlo>, PropertyError> {
    let Some(text) = p.get("rate.slo").filter(|s| !s.trim().is_empty()) else {
        return Ok(None);
    };
    let slos = crate::capacity::parse_slos(text).map_err(|e| p.invalid("rate.slo", e))?;
    if shaped.is_none_or(|(_, t)| t.segments().len() <= 1) {
        return Err(p.invalid(
            "rate.slo",
            "judges each segment of a rate profile: give --rate a profile of several segments, \
             such as 'stairs 1000..20000 by 1000 every 10s'",
        ));
    }
    let max_error_rate = p.get_f64("rate.max_error_rate", 0.01)?;
    if !(0.0..=1.0).contains(&max_error_rate) {
        return Err(p.invalid("rate.max_error_rate", "must be a fraction from 0 to 1"));
    }
    Ok(Some(SegmentSlo {
        slos,
        max_error_rate,
    }))
}

/// What to say when the operation count or the time limit ends the phase
/// before the profile or trace `key` gave is over.
fn cut_short(
    p: &Properties,
    key: &str,
    t: &Target,
    operation_count: Option<u64>,
    max_execution_time: Option<Duration>,
) -> Vec<String> {
    let mut out = Vec::new();
    let length = t.length().unwrap_or_default();
    let expected = t.expected();
    if let Some(n) = operation_count.filter(|&n| (n as f64) < expected * 0.999) {
        out.push(format!(
            "{} ends the phase after {n} operations, before the {key}'s {:.0} (it lasts {:.1} s): \
             set -p operationcount=0 to follow all of it",
            p.describe("operationcount"),
            expected,
            length.as_secs_f64(),
        ));
    }
    if let Some(m) = max_execution_time.filter(|&m| m < length) {
        out.push(format!(
            "{} ends the phase after {:.1} s, before the {key}'s {:.1} s are over",
            p.describe("maxexecutiontime"),
            m.as_secs_f64(),
            length.as_secs_f64(),
        ));
    }
    out
}

fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    // RandomState is seeded from the OS; good enough to pick a seed that
    // is then printed so the run can be repeated.
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.finish() >> 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lag_budget_is_a_property_in_microseconds_within_bounds() {
        let mut p = Properties::new();
        assert_eq!(lag_budget(&p).unwrap(), Duration::from_micros(50));
        p.set_arg("pacer.lag_budget_us=80").unwrap();
        assert_eq!(lag_budget(&p).unwrap(), Duration::from_micros(80));
        for bad in ["4", "1001", "fast"] {
            p.set_arg(&format!("pacer.lag_budget_us={bad}")).unwrap();
            let e = lag_budget(&p).unwrap_err().to_string();
            assert!(e.contains("pacer.lag_budget_us"), "{e}");
        }
        assert!(!Plan::unknown_keys(&p, &[])
            .iter()
            .any(|u| u.key == "pacer.lag_budget_us"));
    }
}
