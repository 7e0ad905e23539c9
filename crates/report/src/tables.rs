//! The PerfKitBenchmarker Bigtable walkthrough's two tables, and the
//! Redis/Tair whitepaper's, computed from stored runs instead of BigQuery:
//!
//! - **performance**: per run, its experiment, workload, stage, target and
//!   actual throughput, p50/p99/p99.9 latency of reads and updates (and of
//!   any other kind a selected run has), field length and count, record
//!   count, request distribution, threads per client and client count;
//! - **resource and cost**: the walkthrough's monthly cost estimate
//!   `nodes * node-hour price * 24 * 30 + table GB * storage price`, with
//!   `table GB = (fieldlength + 39) * fieldcount * recordcount / 2^30`, and
//!   the operations a dollar buys at the achieved rate; only for runs that
//!   carry a price (Bigtable runs at the walkthrough's, or any run at a
//!   price given), so a Redis run never gets Bigtable's;
//! - **summary**: the whitepaper's table, per stage its QPS, average and
//!   99th percentile latency in microseconds, and per operation where the
//!   stage mixes them (the whitepaper's Read: and Update:).
//!
//! Latencies are read off the stored histograms (successful operations,
//! warm-up excluded), exactly as `results show` prints them. Markdown
//! rounds for reading; CSV keeps every digit.

use std::fmt::Write as _;

use serde::Serialize;
use sojourn_core::op::OpKind;
use sojourn_store::RunRecord;

use crate::run::{self, Latency, Unit};

/// Hours in the walkthrough's month.
pub const HOURS_PER_MONTH: f64 = 24.0 * 30.0;
/// Seconds in that month.
pub const SECONDS_PER_MONTH: f64 = HOURS_PER_MONTH * 3600.0;
/// Bytes a row costs beyond its fields, in the walkthrough's formula.
pub const ROW_OVERHEAD_BYTES: f64 = 39.0;

/// The walkthrough's Bigtable price, dollars per node and hour.
pub const BIGTABLE_NODE_HOUR: f64 = 0.65;

/// The cost model's inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct CostOptions {
    /// Dollars per node and hour (the walkthrough's Bigtable price,
    /// [`BIGTABLE_NODE_HOUR`], unless given).
    pub node_hour_price: f64,
    /// Whether the price was given (`--node-hour-price`): it then costs
    /// every run. Otherwise it is Bigtable's, and costs only Bigtable runs
    /// ([`is_bigtable`]); the others carry no price and get no row.
    pub price_given: bool,
    /// Nodes for every run; `None` reads each run's `bigtable_node_count`
    /// label, else 1.
    pub nodes: Option<f64>,
    /// Dollars per GB and month for every run; `None` reads each run's
    /// `bigtable_storage_type` label: 0.17 for ssd (the default), 0.026 for
    /// hdd.
    pub storage_gb_month_price: Option<f64>,
}

impl Default for CostOptions {
    fn default() -> Self {
        CostOptions {
            node_hour_price: BIGTABLE_NODE_HOUR,
            price_given: false,
            nodes: None,
            storage_gb_month_price: None,
        }
    }
}

/// The walkthrough's storage prices per GB and month.
pub const SSD_GB_MONTH: f64 = 0.17;
pub const HDD_GB_MONTH: f64 = 0.026;

/// p50, p99 and p99.9 of one kind, in nanoseconds (each table gives
/// them in its page's [`Unit`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KindLatency {
    pub operation: String,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub p99_9_ns: u64,
}

/// One row of the performance table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PerfRow {
    pub run: String,
    pub experiment: String,
    pub workload: String,
    /// The YCSB stage, `load` or `run` (PKB's `stage` label).
    pub operation: String,
    /// Offered operations per second in total; `None` is closed loop.
    pub target_throughput: Option<f64>,
    pub actual_throughput: f64,
    /// Per kind in the table's columns (always read and update): `None`
    /// where the run has no such operation.
    pub latency: Vec<(OpKind, Option<KindLatency>)>,
    pub fieldlength: u64,
    pub fieldcount: u64,
    pub recordcount: u64,
    pub distribution: String,
    /// Connections per client process.
    pub threads: u64,
    pub clients: u32,
    /// Service p99 over response p99 of the slowest kind, when response
    /// time is much worse than service time (queueing in the client).
    pub response_over_service: Option<f64>,
}

/// One row of the resource and cost table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CostRow {
    pub run: String,
    pub experiment: String,
    pub workload: String,
    pub operation: String,
    pub nodes: f64,
    pub storage_type: String,
    pub table_gb: f64,
    pub node_cost_month: f64,
    pub storage_cost_month: f64,
    pub monthly_cost: f64,
    pub actual_throughput: f64,
    /// Operations a dollar buys at the achieved rate.
    pub ops_per_dollar: f64,
}

/// The kinds the performance table has columns for: read and update (the
/// walkthrough's), then any other kind a selected run recorded.
pub fn columns(runs: &[RunRecord]) -> Vec<OpKind> {
    let refs: Vec<&RunRecord> = runs.iter().collect();
    let present = run::kinds_of(&refs);
    let mut cols = vec![OpKind::Read, OpKind::Update];
    for k in present {
        if !cols.contains(&k) {
            cols.push(k);
        }
    }
    cols
}

/// The performance table, latencies of `latency` kind.
pub fn performance(runs: &[RunRecord], latency: Latency) -> Vec<PerfRow> {
    let cols = columns(runs);
    runs.iter()
        .map(|r| {
            let total = run::totals(r);
            let latency_cols = cols
                .iter()
                .map(|&k| {
                    let h = run::histogram(&total, k, latency);
                    let v = (!h.is_empty()).then(|| KindLatency {
                        operation: k.name().to_string(),
                        p50_ns: h.value_at_quantile(0.5),
                        p99_ns: h.value_at_quantile(0.99),
                        p99_9_ns: h.value_at_quantile(0.999),
                    });
                    (k, v)
                })
                .collect();
            let ratio = total
                .kinds()
                .filter(|(_, o)| !o.ok.service.is_empty())
                .map(|(_, o)| {
                    o.ok.response.value_at_quantile(0.99) as f64
                        / o.ok.service.value_at_quantile(0.99).max(1) as f64
                })
                .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
                .filter(|&x| x >= 2.0);
            let m = r.meta();
            PerfRow {
                run: run::short_id(r),
                experiment: run::experiment(r),
                workload: run::workload_name(r),
                operation: m.phase.clone(),
                target_throughput: m.target,
                actual_throughput: run::throughput(r),
                latency: latency_cols,
                fieldlength: run::field_length(r),
                fieldcount: run::field_count(r),
                recordcount: run::record_count(r),
                distribution: run::distribution(r),
                threads: m.threads / u64::from(m.client_count.max(1)),
                clients: m.client_count.max(1),
                response_over_service: ratio,
            }
        })
        .collect()
}

/// The table's size in GB by the walkthrough's formula.
pub fn table_gb(fieldlength: u64, fieldcount: u64, recordcount: u64) -> f64 {
    (fieldlength as f64 + ROW_OVERHEAD_BYTES) * fieldcount as f64 * recordcount as f64
        / (1u64 << 30) as f64
}

/// Whether a run is the Bigtable walkthrough's, whose node-hour price the
/// cost table assumes: run on Bigtable, or by PKB's Bigtable benchmark
/// (`cloud_bigtable_ycsb`, as the walkthrough suites are), or labelled
/// with its Bigtable nodes or storage type.
pub fn is_bigtable(run: &RunRecord) -> bool {
    let m = run.meta();
    m.backend.starts_with("bigtable://")
        || m.labels
            .get("benchmark")
            .is_some_and(|b| b.contains("bigtable"))
        || m.labels.contains_key("bigtable_node_count")
        || m.labels.contains_key("bigtable_storage_type")
}

/// The node-hour price a run is costed at, if it carries one.
pub fn node_hour_price(run: &RunRecord, opts: &CostOptions) -> Option<f64> {
    (opts.price_given || is_bigtable(run)).then_some(opts.node_hour_price)
}

/// The runs that carry no price, so have no cost row: their short ids.
pub fn unpriced(runs: &[RunRecord], opts: &CostOptions) -> Vec<String> {
    runs.iter()
        .filter(|r| node_hour_price(r, opts).is_none())
        .map(run::short_id)
        .collect()
}

/// Why runs have no cost row, for a note below the table.
pub fn unpriced_note(unpriced: &[String]) -> String {
    let what = if unpriced.len() == 1 {
        "it is not a Bigtable run"
    } else {
        "they are not Bigtable runs"
    };
    format!(
        "No cost for {}: {what}, and the walkthrough's ${BIGTABLE_NODE_HOUR} per node-hour is \
         Bigtable's price; --node-hour-price DOLLARS prices every run.",
        unpriced.join(", ")
    )
}

/// The resource and cost table: a row per run that carries a price
/// ([`node_hour_price`]).
pub fn cost(runs: &[RunRecord], opts: &CostOptions) -> Vec<CostRow> {
    runs.iter()
        .filter_map(|r| Some((r, node_hour_price(r, opts)?)))
        .map(|(r, node_hour_price)| {
            let labels = &r.meta().labels;
            let nodes = opts.nodes.unwrap_or_else(|| {
                labels
                    .get("bigtable_node_count")
                    .and_then(|v| v.trim().parse::<f64>().ok())
                    .filter(|n| *n > 0.0)
                    .unwrap_or(1.0)
            });
            let storage_type = labels
                .get("bigtable_storage_type")
                .map(|s| s.trim().to_ascii_lowercase())
                .unwrap_or_else(|| "ssd".to_string());
            let price = opts
                .storage_gb_month_price
                .unwrap_or(if storage_type == "hdd" {
                    HDD_GB_MONTH
                } else {
                    SSD_GB_MONTH
                });
            let gb = table_gb(
                run::field_length(r),
                run::field_count(r),
                run::record_count(r),
            );
            let node_cost = nodes * node_hour_price * HOURS_PER_MONTH;
            let storage_cost = gb * price;
            let monthly = node_cost + storage_cost;
            let tput = run::throughput(r);
            CostRow {
                run: run::short_id(r),
                experiment: run::experiment(r),
                workload: run::workload_name(r),
                operation: r.meta().phase.clone(),
                nodes,
                storage_type,
                table_gb: gb,
                node_cost_month: node_cost,
                storage_cost_month: storage_cost,
                monthly_cost: monthly,
                actual_throughput: tput,
                ops_per_dollar: if monthly > 0.0 {
                    tput * SECONDS_PER_MONTH / monthly
                } else {
                    f64::INFINITY
                },
            }
        })
        .collect()
}

/// A number for reading: about four significant digits, no exponent.
pub fn readable(v: f64) -> String {
    if !v.is_finite() {
        return if v.is_nan() { "-".into() } else { "inf".into() };
    }
    let a = v.abs();
    let decimals = if a == 0.0 || a >= 1000.0 {
        0
    } else if a >= 100.0 {
        1
    } else if a >= 10.0 {
        2
    } else if a >= 1.0 {
        3
    } else {
        // Four significant digits below 1.
        (3 - a.log10().floor() as i32).clamp(3, 9) as usize
    };
    format!("{v:.decimals$}")
}

/// A whole number with thousands separators, for big counts.
pub fn grouped(v: f64) -> String {
    if !v.is_finite() {
        return readable(v);
    }
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0.0 {
        format!("-{out}")
    } else {
        out
    }
}

/// Column headers and cells of the performance table, latencies in
/// `unit`; `exact` keeps every digit (CSV), otherwise numbers are rounded.
pub fn performance_cells(
    rows: &[PerfRow],
    cols: &[OpKind],
    unit: Unit,
    exact: bool,
) -> (Vec<String>, Vec<Vec<String>>) {
    let num = |v: f64| if exact { v.to_string() } else { readable(v) };
    let mut head: Vec<String> = [
        "run",
        "experiment",
        "workload",
        "operation",
        "target ops/s",
        "actual ops/s",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for k in cols {
        for p in ["p50", "p99", "p99.9"] {
            head.push(format!("{} {p} {}", k.name(), unit.name()));
        }
    }
    head.extend(
        [
            "fieldlength",
            "fieldcount",
            "recordcount",
            "distribution",
            "threads",
            "clients",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    let body = rows
        .iter()
        .map(|r| {
            let mut c = vec![
                r.run.clone(),
                r.experiment.clone(),
                r.workload.clone(),
                r.operation.clone(),
                r.target_throughput.map_or(String::new(), num),
                num(r.actual_throughput),
            ];
            for k in cols {
                match r
                    .latency
                    .iter()
                    .find(|(kk, _)| kk == k)
                    .and_then(|(_, v)| v.as_ref())
                {
                    Some(l) => c.extend(
                        [l.p50_ns, l.p99_ns, l.p99_9_ns].map(|ns| num(unit.of_ns(ns as f64))),
                    ),
                    None => c.extend([String::new(), String::new(), String::new()]),
                }
            }
            c.extend([
                r.fieldlength.to_string(),
                r.fieldcount.to_string(),
                r.recordcount.to_string(),
                r.distribution.clone(),
                r.threads.to_string(),
                r.clients.to_string(),
            ]);
            c
        })
        .collect();
    (head, body)
}

/// `v` to 12 significant digits, in the shortest form that reads back as
/// that: a computed figure without the noise of its last bits (`3 x 0.65 x
/// 720` is 1404.0000000000002 in floating point), far finer than any input
/// of the cost model.
pub fn significant(v: f64) -> String {
    if !v.is_finite() || v == 0.0 {
        return v.to_string();
    }
    format!("{v:.11e}")
        .parse::<f64>()
        .map_or_else(|_| v.to_string(), |r| r.to_string())
}

/// Column headers and cells of the cost table; `exact` (CSV) gives each
/// figure to 12 significant digits, otherwise numbers are rounded.
pub fn cost_cells(rows: &[CostRow], exact: bool) -> (Vec<String>, Vec<Vec<String>>) {
    let num = |v: f64| {
        if exact {
            significant(v)
        } else {
            readable(v)
        }
    };
    let money = |v: f64| {
        if exact {
            significant(v)
        } else {
            format!("{v:.2}")
        }
    };
    let head = [
        "run",
        "experiment",
        "workload",
        "operation",
        "nodes",
        "storage",
        "table GB",
        "nodes $/month",
        "storage $/month",
        "monthly cost $",
        "actual ops/s",
        "ops per $",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let body = rows
        .iter()
        .map(|r| {
            vec![
                r.run.clone(),
                r.experiment.clone(),
                r.workload.clone(),
                r.operation.clone(),
                if r.nodes.fract() == 0.0 && !exact {
                    format!("{:.0}", r.nodes)
                } else {
                    num(r.nodes)
                },
                r.storage_type.clone(),
                if exact {
                    significant(r.table_gb)
                } else {
                    format!("{:.3}", r.table_gb)
                },
                money(r.node_cost_month),
                money(r.storage_cost_month),
                money(r.monthly_cost),
                num(r.actual_throughput),
                if exact {
                    significant(r.ops_per_dollar)
                } else {
                    grouped(r.ops_per_dollar)
                },
            ]
        })
        .collect();
    (head, body)
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn markdown_table(head: &[String], body: &[Vec<String>], out: &mut String) {
    let numeric = |i: usize| {
        body.iter().all(|r| {
            r[i].is_empty() || r[i].replace(',', "").parse::<f64>().is_ok() || r[i] == "inf"
        }) && body.iter().any(|r| !r[i].is_empty())
    };
    let _ = writeln!(
        out,
        "| {} |",
        head.iter()
            .map(|h| md_escape(h))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let _ = writeln!(
        out,
        "|{}|",
        (0..head.len())
            .map(|i| if numeric(i) { "---:" } else { "---" })
            .collect::<Vec<_>>()
            .join("|")
    );
    for r in body {
        let _ = writeln!(
            out,
            "| {} |",
            r.iter()
                .map(|c| md_escape(c))
                .collect::<Vec<_>>()
                .join(" | ")
        );
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub(crate) fn csv_table(head: &[String], body: &[Vec<String>], out: &mut String) {
    let line = |cells: &[String]| {
        cells
            .iter()
            .map(|c| csv_field(c))
            .collect::<Vec<_>>()
            .join(",")
    };
    let _ = writeln!(out, "{}", line(head));
    for r in body {
        let _ = writeln!(out, "{}", line(r));
    }
}

/// Which tables to print.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Which {
    Performance,
    Cost,
    /// Performance and cost (the walkthrough's two).
    Both,
    /// The whitepaper's table alone.
    Summary,
}

impl Which {
    fn performance(self) -> bool {
        matches!(self, Which::Performance | Which::Both)
    }

    fn cost(self) -> bool {
        matches!(self, Which::Cost | Which::Both)
    }
}

/// One row of the whitepaper's table: a stage, or one operation of a
/// stage that mixes several.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SummaryRow {
    pub run: String,
    pub experiment: String,
    pub workload: String,
    /// The YCSB stage, `load` or `run`.
    pub phase: String,
    /// The operation kind; `None` for a stage's row over all its
    /// operations.
    pub operation: Option<OpKind>,
    /// Operations per second over the measured period: the stage's
    /// throughput, or this operation's share of it.
    pub qps: f64,
    /// Mean and p99 of successful operations, in microseconds.
    pub average_us: f64,
    pub p99_us: f64,
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

/// The whitepaper's table: per run (stage), a row over all its operations
/// (its throughput, every kind's histogram merged), then, where it mixes
/// kinds, a row per kind (that kind's rate and histogram). A stage of one
/// kind has the one row, named by its kind.
pub fn summary(runs: &[RunRecord], latency: Latency) -> Vec<SummaryRow> {
    let mut rows = Vec::new();
    for r in runs {
        let total = run::totals(r);
        let kinds: Vec<OpKind> = total
            .kinds()
            .filter(|(_, o)| o.count() > 0)
            .map(|(k, _)| k)
            .collect();
        let m = r.meta();
        let row =
            |operation: Option<OpKind>, qps: f64, h: &hdrhistogram::Histogram<u64>| SummaryRow {
                run: run::short_id(r),
                experiment: run::experiment(r),
                workload: run::workload_name(r),
                phase: m.phase.clone(),
                operation,
                qps,
                average_us: if h.is_empty() { 0.0 } else { h.mean() / 1e3 },
                p99_us: if h.is_empty() {
                    0.0
                } else {
                    us(h.value_at_quantile(0.99))
                },
            };
        let all = run::all_kinds(&total, latency);
        rows.push(row(
            (kinds.len() == 1).then(|| kinds[0]),
            run::throughput(r),
            &all,
        ));
        if kinds.len() > 1 {
            for &k in &kinds {
                rows.push(row(
                    Some(k),
                    run::kind_throughput(r, &total, k),
                    &run::histogram(&total, k, latency),
                ));
            }
        }
    }
    rows
}

/// The whitepaper's name for an operation: `Read`, `Update`, ...
fn title(kind: OpKind) -> String {
    let name = kind.name();
    let mut c = name.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// Column headers and cells of the summary table; `exact` keeps every
/// digit (CSV). Markdown names a mixed stage's operations as the
/// whitepaper does (`Read:`, `Update:`) under its `all` row.
pub fn summary_cells(rows: &[SummaryRow], exact: bool) -> (Vec<String>, Vec<Vec<String>>) {
    let head = [
        "run",
        "experiment",
        "workload",
        "phase",
        "operation",
        "QPS",
        "Average latency (µs)",
        "99th percentile latency (µs)",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let body = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            // A kind's row under its stage's `all` row is one of several.
            let mixed = i > 0 && rows[i - 1].run == r.run && r.operation.is_some();
            let operation = match (r.operation, exact) {
                (None, _) => "all".to_string(),
                (Some(k), true) => k.name().to_string(),
                (Some(k), false) if mixed => format!("{}:", title(k)),
                (Some(k), false) => title(k),
            };
            vec![
                r.run.clone(),
                r.experiment.clone(),
                r.workload.clone(),
                r.phase.clone(),
                operation,
                if exact {
                    r.qps.to_string()
                } else {
                    readable(r.qps)
                },
                if exact {
                    r.average_us.to_string()
                } else {
                    readable(r.average_us)
                },
                if exact {
                    r.p99_us.to_string()
                } else {
                    readable(r.p99_us)
                },
            ]
        })
        .collect();
    (head, body)
}

/// The note under the tables on which latency they show.
fn latency_note(latency: Latency) -> String {
    format!(
        "Latency: {} time of successful operations, warm-up excluded{}.",
        latency.name(),
        match latency {
            Latency::Service => " (YCSB's operation latency, as PKB reports it)",
            Latency::Response => " (from the intended start: includes queueing in the client)",
        }
    )
}

/// The tables as Markdown, with a note on which latency they show.
pub fn markdown(
    runs: &[RunRecord],
    which: Which,
    latency: Latency,
    cost_opts: &CostOptions,
) -> String {
    let mut out = String::new();
    if which == Which::Summary {
        let (head, body) = summary_cells(&summary(runs, latency), false);
        let _ = writeln!(out, "## Summary\n");
        markdown_table(&head, &body, &mut out);
        let _ = writeln!(
            out,
            "\nQPS: operations per second over the measured period (a stage's `all` row; each \
             operation's own rate below it where the stage mixes operations). {}",
            latency_note(latency)
        );
        return out;
    }
    if which.performance() {
        let cols = columns(runs);
        let rows = performance(runs, latency);
        let (head, body) = performance_cells(&rows, &cols, Unit::of(runs), false);
        let _ = writeln!(out, "## Performance\n");
        markdown_table(&head, &body, &mut out);
        let _ = writeln!(out, "\n{}", latency_note(latency));
        let queued: Vec<String> = rows
            .iter()
            .filter_map(|r| {
                r.response_over_service
                    .map(|x| format!("{} ({x:.1}x)", r.run))
            })
            .collect();
        if latency == Latency::Service && !queued.is_empty() {
            let _ = writeln!(
                out,
                "p99 response time is over twice p99 service time in {}: operations queued in \
                 the client, which service time does not show; --latency response shows \
                 response time.",
                queued.join(", ")
            );
        }
    }
    if which.cost() {
        if !out.is_empty() {
            out.push('\n');
        }
        let rows = cost(runs, cost_opts);
        let unpriced = unpriced(runs, cost_opts);
        if !rows.is_empty() {
            let (head, body) = cost_cells(&rows, false);
            let _ = writeln!(out, "## Resource and cost\n");
            markdown_table(&head, &body, &mut out);
            let _ = writeln!(
                out,
                "\nMonthly cost = nodes x ${} per node-hour x 24 x 30 + table GB x storage \
                 $/GB-month; table GB = (fieldlength + 39) x fieldcount x recordcount / 2^30; ops \
                 per $ at the actual rate over a 30-day month.",
                cost_opts.node_hour_price
            );
        }
        if !unpriced.is_empty() {
            let _ = writeln!(out, "{}", unpriced_note(&unpriced));
        }
    }
    out
}

/// The tables as CSV, every digit kept (the cost table's computed figures
/// to 12 significant digits, see [`significant`]): with both, the
/// performance table,
/// an empty line, then the cost table (each with its header row; no cost
/// table when no run carries a price).
pub fn csv(runs: &[RunRecord], which: Which, latency: Latency, cost_opts: &CostOptions) -> String {
    let mut out = String::new();
    if which == Which::Summary {
        let (head, body) = summary_cells(&summary(runs, latency), true);
        csv_table(&head, &body, &mut out);
        return out;
    }
    if which.performance() {
        let cols = columns(runs);
        let (head, body) =
            performance_cells(&performance(runs, latency), &cols, Unit::of(runs), true);
        csv_table(&head, &body, &mut out);
    }
    let rows = cost(runs, cost_opts);
    // Runs without a price have no row; none priced, no table (the
    // command says why on stderr).
    if which.cost() && !rows.is_empty() {
        if !out.is_empty() {
            out.push('\n');
        }
        let (head, body) = cost_cells(&rows, true);
        csv_table(&head, &body, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The walkthrough's own example: 1 KB x 1 field x 5M rows on 3 SSD
    /// nodes.
    #[test]
    fn the_walkthroughs_cost_formula() {
        let gb = table_gb(1024, 1, 5_000_000);
        assert!((gb - 4.949_979_484).abs() < 1e-6, "{gb}");
        let monthly = 3.0 * 0.65 * 24.0 * 30.0 + gb * 0.17;
        assert!((monthly - 1_404.841_497).abs() < 1e-3, "{monthly}");
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(readable(1234.6), "1235");
        assert_eq!(readable(12.345), "12.35");
        assert_eq!(readable(1.23456), "1.235");
        assert_eq!(readable(0.012345), "0.01235");
        assert_eq!(readable(0.0), "0");
        assert_eq!(grouped(1234567.0), "1,234,567");
        assert_eq!(grouped(999.0), "999");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"x\""), "\"say \"\"x\"\"\"");
    }

    #[test]
    fn computed_figures_lose_their_float_noise() {
        assert_eq!(3.0 * 0.65 * 24.0 * 30.0, 1404.0000000000002);
        assert_eq!(significant(3.0 * 0.65 * 24.0 * 30.0), "1404");
        assert_eq!(significant(0.1 + 0.2), "0.3");
        assert_eq!(significant(4.949_979_484_313_726), "4.94997948431");
        assert_eq!(significant(1_234_567_890_123.4), "1234567890120");
        assert_eq!(significant(0.000_123_456_789_012_34), "0.000123456789012");
        assert_eq!(significant(-2.5), "-2.5");
        assert_eq!(significant(0.0), "0");
        assert_eq!(significant(f64::INFINITY), "inf");
    }

    /// A CSV cost row as the walkthrough's three nodes price it: every
    /// figure as a reader would write it, none with float noise.
    #[test]
    fn the_cost_csv_rounds_what_it_computed() {
        let row = CostRow {
            run: "r".into(),
            experiment: "e".into(),
            workload: "workloadc".into(),
            operation: "run".into(),
            nodes: 3.0,
            storage_type: "ssd".into(),
            table_gb: 0.0,
            node_cost_month: 3.0 * 0.65 * HOURS_PER_MONTH,
            storage_cost_month: 0.0,
            monthly_cost: 3.0 * 0.65 * HOURS_PER_MONTH,
            actual_throughput: 0.1 + 0.2,
            ops_per_dollar: 1e6 / 3.0,
        };
        let (head, body) = cost_cells(&[row], true);
        let at = |name: &str| &body[0][head.iter().position(|h| h == name).unwrap()];
        assert_eq!(at("nodes $/month"), "1404");
        assert_eq!(at("monthly cost $"), "1404");
        assert_eq!(at("actual ops/s"), "0.3");
        assert_eq!(at("ops per $"), "333333.333333");
        assert_eq!(at("nodes"), "3");
    }
}
