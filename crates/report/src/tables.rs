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

use sojourn_store::RunRecord;

use crate::run::{Latency, Unit};

mod cost;
mod format;
mod performance;
mod summary;

pub use cost::{
    cost, cost_cells, is_bigtable, node_hour_price, significant, table_gb, unpriced, unpriced_note,
    CostOptions, CostRow, BIGTABLE_NODE_HOUR, HDD_GB_MONTH, HOURS_PER_MONTH, ROW_OVERHEAD_BYTES,
    SECONDS_PER_MONTH, SSD_GB_MONTH,
};
pub(crate) use format::csv_table;
use format::markdown_table;
pub use format::{grouped, readable};
pub use performance::{columns, performance, performance_cells, KindLatency, PerfRow};
pub use summary::{summary, summary_cells, SummaryRow};

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
    use super::format::csv_field;
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
