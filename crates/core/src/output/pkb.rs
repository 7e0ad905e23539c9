//! PerfKitBenchmarker samples: newline-delimited JSON with PKB's keys in
//! PKB's order, the metric names PKB's YCSB parser emits, and the metadata
//! collapsed into PKB's `labels` string, so `bq load --autodetect` and the
//! walkthrough's queries take them as they take PKB's own.
//!
//! The samples mirror the YCSB summary sojourn prints (and `results show`
//! prints again): one group per summary block, lower-cased (`overall`,
//! `read`, `update`, ...), each statistic as `GROUP STATISTIC` with
//! microseconds turned into milliseconds as PKB does, then PKB's
//! percentile samples `GROUP pNN latency` (p50, p75, p90, p95, p99, p99.9)
//! read off the HDR histogram. Unlike PKB's parser, the blocks PKB drops
//! are kept: `intended-read` (response time), `read-failed`,
//! `read-modify-write`. Every sample carries an `operation` label naming
//! its group, as PKB's do. A key-value run adds its pools' groups,
//! `reads` and `writes` (`intended-` for response time), with a `pool`
//! label (see [`super::pools`]).
//!
//! Labels are PKB's collapsed form: keys sorted, each `|key:value|`,
//! joined by `,`. PKB writes values as they are, so a value holding `|`,
//! `,` or `:` (a URL, a percentile list) breaks the string; here keys and
//! values are percent-escaped ([`escape`]): `%` -> `%25`, `|` -> `%7C`,
//! `,` -> `%2C`, `:` -> `%3A`. Values without those characters are
//! unchanged, so patterns such as `\|experiment:([^|]+)\|` extract them as
//! before, and [`unescape`] restores any value exactly.

use std::collections::BTreeMap;
use std::io;
use std::time::{Duration, UNIX_EPOCH};

use crate::backend::Status;
use crate::histograms::Stats;
use crate::op::OpKind;
use crate::output::ycsb::ordinal;
use hdrhistogram::Histogram;
use serde::Serialize;

use crate::run_record::{RunMeta, RunRecord};

use super::export::Export;

/// What PKB's publisher adds to every sample.
#[derive(Clone, Debug)]
pub struct PkbOptions {
    /// PKB's benchmark name (`test`); `None` takes the run's `benchmark`
    /// label, else `<backend kind>_ycsb` (`sqlite_ycsb`, `redis_ycsb`).
    pub test: Option<String>,
    pub owner: String,
    pub product_name: String,
    pub official: bool,
}

impl Default for PkbOptions {
    fn default() -> Self {
        PkbOptions {
            test: None,
            owner: std::env::var("USER").unwrap_or_else(|_| "sojourn".to_string()),
            product_name: "PerfKitBenchmarker".to_string(),
            official: false,
        }
    }
}

/// One sample; fields serialise in PKB's order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sample {
    pub metric: String,
    pub value: f64,
    pub unit: String,
    /// Seconds since the epoch: when the run ended.
    pub timestamp: f64,
    pub test: String,
    pub product_name: String,
    pub official: bool,
    pub owner: String,
    pub run_uri: String,
    pub sample_uri: String,
    pub labels: String,
}

/// The percentiles PKB derives from a YCSB histogram.
pub const PKB_PERCENTILES: [f64; 6] = [50.0, 75.0, 90.0, 95.0, 99.0, 99.9];

/// `3000` for a whole number, else the shortest exact decimal.
fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// The YCSB command line a PKB sample's `command_line` label would hold:
/// `-db BACKEND -P FILE... -p KEY=VALUE... -threads N [-target T] -t|-load`,
/// per client process. Every resolved property appears as `-p`, so the
/// walkthrough's `-p readallfields=(\w+)` finds the value that applied.
pub fn command_line(run: &RunRecord) -> String {
    let m = run.meta();
    let clients = m.client_count.max(1) as u64;
    let mut parts = vec!["-db".to_string(), m.backend.clone()];
    for w in &m.workloads {
        parts.push("-P".into());
        parts.push(w.clone());
    }
    for (k, v) in &m.properties {
        if k == "threadcount" || k == "target" {
            continue;
        }
        parts.push("-p".into());
        parts.push(format!("{k}={v}"));
    }
    parts.push("-threads".into());
    parts.push((m.threads / clients).max(1).to_string());
    if let Some(t) = m.target {
        parts.push("-target".into());
        parts.push(number(t / clients as f64));
    }
    parts.push(if m.phase == "load" { "-load" } else { "-t" }.into());
    parts.join(" ")
}

/// The metadata of a run's samples, before collapsing (the `operation`
/// label is added per sample). In increasing precedence: every property
/// (PKB labels each `-p`), the figures PKB records (`stage`,
/// `workload_name`, `workload_index`, `threads_per_client_vm`, `vm_count`,
/// `command_line`, `fieldcount`, `fieldlength`, `recordcount`, `target` as
/// the total over client processes), sojourn's own (`sojourn_run_id`,
/// `backend`, `run_status`), then the run's labels (`--label`, PKB
/// `metadata` such as `experiment`, and what a suite records), which win,
/// except over what says what produced the numbers ([`FACTS`]): a label of
/// that name (a suite's `ycsb_version: 0.17.0` flag) is kept as
/// `requested_NAME` instead.
pub fn metadata(run: &RunRecord) -> BTreeMap<String, String> {
    let m = run.meta();
    let clients = m.client_count.max(1);
    let mut md: BTreeMap<String, String> = m.properties.clone();
    let prop = |k: &str, default: &str| {
        m.properties
            .get(k)
            .cloned()
            .unwrap_or_else(|| default.to_string())
    };
    let workload_name = m
        .workloads
        .first()
        .map(|w| {
            std::path::Path::new(w)
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_else(|| w.clone())
        })
        .unwrap_or_default();
    let derived = [
        ("stage", m.phase.clone()),
        ("workload_name", workload_name),
        ("workload_index", "0".to_string()),
        (
            "threads_per_client_vm",
            (m.threads / clients as u64).max(1).to_string(),
        ),
        ("vm_count", clients.to_string()),
        ("num_vms", clients.to_string()),
        ("command_line", command_line(run)),
        ("fieldcount", prop("fieldcount", "10")),
        ("fieldlength", prop("fieldlength", "100")),
        ("recordcount", prop("recordcount", "0")),
        ("ycsb_version", format!("sojourn-{}", m.tool_version)),
        ("sojourn_run_id", m.id.0.clone()),
        ("backend", m.backend.clone()),
        ("run_status", run.summary.status.to_string()),
    ];
    for (k, v) in derived {
        md.insert(k.to_string(), v);
    }
    if let Some(t) = m.target {
        md.insert("target".into(), number(t));
    }
    if clients > 1 {
        // PKB adds up the clients' own throughputs; sojourn divides all
        // of their operations by the longest client's time, which is what
        // the database served while the stage lasted (and 0.1-3% lower).
        md.insert(
            "throughput_merge".into(),
            "all_operations_over_longest_client_time".into(),
        );
    }
    for (k, v) in &m.labels {
        let key = match FACTS.contains(&k.as_str()) {
            true => format!("requested_{k}"),
            false => k.clone(),
        };
        md.insert(key, v.clone());
    }
    md
}

/// Labels that say what produced a run's numbers: no user label or suite
/// flag overrides them.
pub const FACTS: &[&str] = &["ycsb_version", "sojourn_run_id", "backend", "run_status"];

/// Escape a label key or value so the collapsed string stays parseable:
/// `%`, `|`, `,` and `:` become `%25`, `%7C`, `%2C`, `%3A`.
pub fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '%' => out.push_str("%25"),
            '|' => out.push_str("%7C"),
            ',' => out.push_str("%2C"),
            ':' => out.push_str("%3A"),
            c => out.push(c),
        }
    }
    out
}

/// Undo [`escape`]. Other `%` sequences are left as they are.
pub fn unescape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        let code = rest.get(i + 1..i + 3);
        let c = match code {
            Some("25") => Some('%'),
            Some("7C") | Some("7c") => Some('|'),
            Some("2C") | Some("2c") => Some(','),
            Some("3A") | Some("3a") => Some(':'),
            _ => None,
        };
        match c {
            Some(c) => {
                out.push(c);
                rest = &rest[i + 3..];
            }
            None => {
                out.push('%');
                rest = &rest[i + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// PKB's collapsed labels: keys sorted, each `|key:value|`, joined by `,`.
pub fn collapse_labels(labels: &BTreeMap<String, String>) -> String {
    labels
        .iter()
        .map(|(k, v)| format!("|{}:{}|", escape(k), escape(v)))
        .collect::<Vec<_>>()
        .join(",")
}

/// Undo [`collapse_labels`].
pub fn parse_labels(labels: &str) -> BTreeMap<String, String> {
    labels
        .split(',')
        .filter_map(|item| {
            let inner = item.strip_prefix('|')?.strip_suffix('|')?;
            let (k, v) = inner.split_once(':')?;
            Some((unescape(k), unescape(v)))
        })
        .collect()
}

/// One YCSB statistic: PKB's metric suffix, value and unit.
type Stat = (String, f64, &'static str);

/// Whole microseconds as YCSB prints them, in milliseconds as PKB
/// converts them.
fn ms_of_ns(ns: u64) -> f64 {
    (ns / 1000) as f64 / 1000.0
}

fn latency_block(h: &Histogram<u64>, percentiles: &[f64]) -> Vec<Stat> {
    let empty = h.is_empty();
    let mut v = vec![
        ("Operations".to_string(), h.len() as f64, ""),
        (
            "AverageLatency".to_string(),
            if empty {
                0.0
            } else {
                h.mean() / 1000.0 / 1000.0
            },
            "ms",
        ),
        (
            "MinLatency".to_string(),
            ms_of_ns(if empty { 0 } else { h.min() }),
            "ms",
        ),
        (
            "MaxLatency".to_string(),
            ms_of_ns(if empty { 0 } else { h.max() }),
            "ms",
        ),
    ];
    for &p in percentiles {
        let ns = if empty { 0 } else { h.value_at_percentile(p) };
        v.push((
            format!("{}PercentileLatency", ordinal(p)),
            ms_of_ns(ns),
            "ms",
        ));
    }
    v
}

fn pkb_percentiles(h: &Histogram<u64>) -> Vec<Stat> {
    if h.is_empty() {
        return Vec::new();
    }
    PKB_PERCENTILES
        .iter()
        .map(|&p| {
            (
                format!("p{} latency", number(p)),
                ms_of_ns(h.value_at_percentile(p)),
                "ms",
            )
        })
        .collect()
}

fn return_lines(statuses: &[u64; Status::COUNT]) -> Vec<Stat> {
    Status::ALL
        .iter()
        .filter(|s| statuses[s.index()] > 0)
        .map(|s| {
            (
                format!("Return={}", s.ycsb_name()),
                statuses[s.index()] as f64,
                "",
            )
        })
        .collect()
}

/// The groups of the YCSB summary, as PKB's parser would name them, with
/// their statistics (in summary order) and percentile samples.
pub fn groups(run: &RunRecord) -> Vec<(String, Vec<Stat>)> {
    groups_of(
        run.meta(),
        &run.totals_or_intervals(),
        run.measured(),
        run.throughput(),
    )
}

/// The groups of `total`, measured over `measured` at `throughput`: a
/// whole run's, or one rate-profile segment's.
fn groups_of(
    m: &RunMeta,
    total: &Stats,
    measured: Duration,
    throughput: f64,
) -> Vec<(String, Vec<Stat>)> {
    let mut out = vec![(
        "overall".to_string(),
        vec![
            (
                "RunTime".to_string(),
                (measured.as_secs_f64() * 1000.0).round(),
                "ms",
            ),
            ("Throughput".to_string(), throughput, "ops/sec"),
        ],
    )];
    let show_op = m.measurement_interval != "intended";
    let show_intended = m.measurement_interval != "op";
    let name = |k: OpKind| k.ycsb_name().to_ascii_lowercase();
    if show_op {
        for (kind, s) in total.kinds() {
            let mut stats = latency_block(&s.ok.service, &m.percentiles);
            stats.extend(return_lines(&s.statuses));
            stats.extend(pkb_percentiles(&s.ok.service));
            out.push((name(kind), stats));
            if let Some(f) = &s.failed {
                let mut stats = latency_block(&f.service, &m.percentiles);
                stats.extend(pkb_percentiles(&f.service));
                out.push((format!("{}-failed", name(kind)), stats));
            }
        }
    }
    if show_intended {
        for (kind, s) in total.kinds() {
            let mut stats = latency_block(&s.ok.response, &m.percentiles);
            if !show_op {
                stats.extend(return_lines(&s.statuses));
            }
            stats.extend(pkb_percentiles(&s.ok.response));
            out.push((format!("intended-{}", name(kind)), stats));
            if let Some(f) = &s.failed {
                let mut stats = latency_block(&f.response, &m.percentiles);
                stats.extend(pkb_percentiles(&f.response));
                out.push((format!("intended-{}-failed", name(kind)), stats));
            }
        }
    }
    out
}

/// The benchmark name PKB would give the run (see [`PkbOptions::test`]).
fn test_name(run: &RunRecord, opts: &PkbOptions) -> String {
    if let Some(t) = &opts.test {
        return t.clone();
    }
    if let Some(b) = run.meta().labels.get("benchmark") {
        return b.clone();
    }
    let kind: String = run
        .meta()
        .backend
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    format!("{}_ycsb", if kind.is_empty() { "sojourn" } else { &kind })
}

/// Every sample of a run.
pub fn samples(run: &RunRecord, opts: &PkbOptions) -> Vec<Sample> {
    let base = metadata(run);
    let ended = run.summary.ended_at.unwrap_or_else(|| {
        run.meta().started_at
            + run
                .summary
                .totals
                .as_ref()
                .map_or(Duration::ZERO, |t| t.elapsed)
    });
    let timestamp = ended
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64();
    let test = test_name(run, opts);
    let sample = |metric: String, value: f64, unit: &str, labels: String| Sample {
        metric,
        value,
        unit: unit.to_string(),
        timestamp,
        test: test.clone(),
        product_name: opts.product_name.clone(),
        official: opts.official,
        owner: opts.owner.clone(),
        run_uri: run.meta().run_uri.clone(),
        sample_uri: uuid::Uuid::new_v4().to_string(),
        labels,
    };
    let mut out = Vec::new();
    let mut push_groups = |groups: Vec<(String, Vec<Stat>)>, md: &BTreeMap<String, String>| {
        for (group, stats) in groups {
            let mut md = md.clone();
            md.insert("operation".into(), group.clone());
            let labels = collapse_labels(&md);
            for (stat, value, unit) in stats {
                out.push(sample(
                    format!("{group} {stat}"),
                    value,
                    unit,
                    labels.clone(),
                ));
            }
        }
    };
    push_groups(groups(run), &base);
    // The key-value workload's pools, yb-sample-apps' reads/sec and
    // writes/sec: each pool's rate and latencies, the pool in the labels.
    for pool in super::pools::PoolFigures::of(run) {
        let mut md = base.clone();
        md.insert("pool".into(), pool.pool.to_string());
        push_groups(super::pools::pkb_groups(&pool), &md);
    }
    // Each segment of a rate profile: the same samples over its own
    // operations (by intended start), the segment in the labels.
    for (i, seg) in run.segments.iter().enumerate() {
        let length = seg.segment.end - seg.segment.start;
        let mut md = base.clone();
        md.insert("segment".into(), (i + 1).to_string());
        md.insert("segment_label".into(), seg.segment.label.clone());
        md.insert(
            "segment_start_s".into(),
            number(seg.segment.start.as_secs_f64()),
        );
        md.insert("segment_target".into(), number(seg.segment.mean_rate()));
        let rate = if length.is_zero() {
            0.0
        } else {
            seg.stats.ops_done as f64 / length.as_secs_f64()
        };
        push_groups(groups_of(run.meta(), &seg.stats, length, rate), &md);
    }
    if run.meta().phase == "run" {
        let (cores, md) = server_cpu(run, &base);
        let labels = collapse_labels(&md);
        for metric in ["cpu_load_array", "cpu_load_hottest_node_array"] {
            out.push(sample(metric.to_string(), cores, "cores", labels.clone()));
        }
    }
    out
}

/// The server's CPU over a run stage, as PKB's Bigtable monitoring labels
/// it (`cpu_average_utilization`), so the walkthrough's cost query finds a
/// row for every run: the server's CPU seconds over the phase's elapsed
/// time, in cores (1.0 = one core busy throughout). One server, so it is
/// also the hottest. Where the database did not tell (no counters, or
/// not a process on this machine), the label says `unknown` and why,
/// rather than a figure.
fn server_cpu(run: &RunRecord, base: &BTreeMap<String, String>) -> (f64, BTreeMap<String, String>) {
    let mut md = base.clone();
    md.insert("cpu_utilization_unit".into(), "cores".into());
    let elapsed = run
        .summary
        .totals
        .as_ref()
        .map_or(0.0, |t| t.elapsed.as_secs_f64());
    let cpu = run
        .server
        .as_ref()
        .and_then(|s| s.deltas.get("server_cpu_s"))
        .filter(|_| elapsed > 0.0);
    match cpu {
        Some(cpu_s) => {
            let cores = cpu_s / elapsed;
            md.insert("cpu_average_utilization".into(), format!("{cores:.4}"));
            (cores, md)
        }
        None => {
            md.insert("cpu_average_utilization".into(), "unknown".into());
            md.insert(
                "cpu_unknown_because".into(),
                match run.server {
                    None => "the database gave no server counters for this run",
                    Some(_) => "the server's CPU is not readable from this machine",
                }
                .into(),
            );
            (0.0, md)
        }
    }
}

/// Write samples as newline-delimited JSON.
pub fn write_ndjson(samples: &[Sample], out: &mut dyn io::Write) -> io::Result<()> {
    for s in samples {
        serde_json::to_writer(&mut *out, s)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// PKB samples of every run, newline-delimited.
pub struct Pkb(pub PkbOptions);

impl Export for Pkb {
    fn write(&self, runs: &[RunRecord], out: &mut dyn io::Write) -> io::Result<()> {
        let samples: Vec<Sample> = runs.iter().flat_map(|r| samples(r, &self.0)).collect();
        write_ndjson(&samples, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_round_trips_and_leaves_plain_values_alone() {
        for v in [
            "throughput_test",
            "a|b,c:d%e",
            "%7C literal",
            "sqlite:/tmp/x,y",
            "",
            "%",
            "100%",
        ] {
            let e = escape(v);
            assert!(!e.contains(['|', ',', ':']), "{e}");
            assert_eq!(unescape(&e), v);
        }
        assert_eq!(escape("latency_test"), "latency_test");
        let mut m = BTreeMap::new();
        m.insert("b:key".to_string(), "x|y".to_string());
        m.insert("a".to_string(), "1,2".to_string());
        let c = collapse_labels(&m);
        assert_eq!(c, "|a:1%2C2|,|b%3Akey:x%7Cy|");
        assert_eq!(parse_labels(&c), m);
    }
}
