//! The resource and cost table: the walkthrough's cost model (node hours
//! plus table storage), which runs carry a price, and the table's cells.

use serde::Serialize;
use sojourn_store::RunRecord;

use super::format::{grouped, readable};
use crate::run;

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
