//! TPC-C (`workload=tpcc`, `-P workloads/tpcc`): the OLTP benchmark the
//! distributed SQL databases publish, on go-tpc's tables, measured as
//! sojourn measures: each of the five transactions an operation with
//! service and response time, open loop or closed, and tpmC with its
//! efficiency after the summary.
//!
//! Its tables and load are [`tables`], its random numbers [`random`], its
//! statements `sql`, its transactions [`txn`]. It runs through the SQL
//! capability the scripts workload defined
//! ([`Script`](super::script::Script)): a database that runs pgbench's
//! scripts runs TPC-C, and grows nothing for it.

pub mod random;
mod sql;
pub mod tables;
pub mod txn;

use std::fmt::Write;
use std::sync::Arc;

pub use tables::{TpccTables, CHECKS};
pub use txn::TpccWorker;

use crate::backend::{Backend, BackendError, Schema};
use crate::executor::{Connector, RunConfig};
use crate::properties::{Properties, PropertyError};
use crate::record::RunRecord;

use super::kind::{Kind, Settled};
use super::script::{ScriptSupport, SqlStep};
use super::{CoreConfig, Loaded, Narrator, Phase, ReadyPhase, StepsError};

/// Rows of a warehouse's districts, customers and orders, and of the
/// items (clause 4.3.3.1).
pub const DISTRICTS: u64 = 10;
pub const CUSTOMERS: u64 = 3_000;
pub const ORDERS: u64 = 3_000;
/// The first order of a district's initial ones still waiting for
/// delivery (its new orders).
pub const NEW_ORDERS_FROM: u64 = 2_101;
pub const ITEMS: u64 = 100_000;
pub const STOCK: u64 = 100_000;

/// The most New-Orders per minute a warehouse's ten terminals can make
/// with the spec's keying and think times (clause 5.4.2's 12.86 tpmC).
pub const MAX_TPMC_PER_WAREHOUSE: f64 = 12.86;

/// Seconds a run lasts where `maxexecutiontime` does not say.
pub const RUN_SECONDS: f64 = 60.0;

/// The label a TPC-C run keeps its warehouses in.
pub const WAREHOUSES_LABEL: &str = "tpcc_warehouses";

/// The five transactions, in the order of `tpcc.mix`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Txn {
    NewOrder = 0,
    Payment = 1,
    OrderStatus = 2,
    Delivery = 3,
    StockLevel = 4,
}

impl Txn {
    pub const ALL: [Txn; 5] = [
        Txn::NewOrder,
        Txn::Payment,
        Txn::OrderStatus,
        Txn::Delivery,
        Txn::StockLevel,
    ];

    /// Its operation's name, as go-tpc names it.
    pub fn name(self) -> &'static str {
        match self {
            Txn::NewOrder => "NEW_ORDER",
            Txn::Payment => "PAYMENT",
            Txn::OrderStatus => "ORDER_STATUS",
            Txn::Delivery => "DELIVERY",
            Txn::StockLevel => "STOCK_LEVEL",
        }
    }

    /// Its keying time, in seconds (clause 5.2.5.7).
    pub fn keying(self) -> f64 {
        match self {
            Txn::NewOrder => 18.0,
            Txn::Payment => 3.0,
            Txn::OrderStatus | Txn::Delivery | Txn::StockLevel => 2.0,
        }
    }

    /// The mean of its think time, in seconds (clause 5.2.5.7).
    pub fn think(self) -> f64 {
        match self {
            Txn::NewOrder | Txn::Payment => 12.0,
            Txn::OrderStatus => 10.0,
            Txn::Delivery | Txn::StockLevel => 5.0,
        }
    }
}

/// The spec's terminals per warehouse (clause 4.2.2).
pub const TERMINALS_PER_WAREHOUSE: u64 = 10;

/// The properties it reads.
pub const TPCC_PROPERTIES: &[&str] = &[
    "warehouses",
    "tpcc.mix",
    "tpcc.wait",
    "tpcc.wait_scale",
    "tpcc.check",
    // A share's first terminal, run by agents.
    "tpcc.terminal_offset",
];

/// The spec's minimum mix (clause 5.2.3) as go-tpc and benchbase run it.
pub const DEFAULT_MIX: [u32; 5] = [45, 43, 4, 4, 4];

/// The workload's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct TpccConfig {
    /// `warehouses`: given, or (for a run) read from the tables.
    pub warehouses: Option<u64>,
    /// Cards of each transaction in a terminal's deck.
    pub mix: [u32; 5],
    pub terminal_offset: u64,
    /// Check the consistency conditions after a load and after a run.
    pub check: bool,
    /// `tpcc.wait=true`: the spec's terminals, each waiting its keying and
    /// think times, multiplied by this (`tpcc.wait_scale`, 1 by default).
    pub wait: Option<f64>,
}

impl TpccConfig {
    pub fn from_properties(p: &Properties) -> Result<TpccConfig, PropertyError> {
        let warehouses = match p.get("warehouses") {
            None => None,
            Some(_) => {
                let w = p.get_u64("warehouses", 1)?;
                if w == 0 || w > 100_000 {
                    return Err(p.invalid("warehouses", "must be 1 to 100000"));
                }
                Some(w)
            }
        };
        let mix = match p.get("tpcc.mix") {
            None => DEFAULT_MIX,
            Some(text) => parse_mix(text).map_err(|why| p.invalid("tpcc.mix", why))?,
        };
        let scale = p.get_f64("tpcc.wait_scale", 1.0)?;
        let wait = p.get_bool("tpcc.wait", false)?;
        if !(scale > 0.0 && scale <= 100.0) {
            return Err(p.invalid(
                "tpcc.wait_scale",
                "must be above 0 and at most 100 (1: the spec's keying and think times)",
            ));
        }
        if !wait && p.contains("tpcc.wait_scale") {
            return Err(p.invalid(
                "tpcc.wait_scale",
                "scales the terminals' keying and think times, which only tpcc.wait=true \
                 runs: add -p tpcc.wait=true or leave it out",
            ));
        }
        if wait && warehouses.is_none() {
            return Err(p.invalid(
                "tpcc.wait",
                "runs the spec's ten terminals per warehouse: give the warehouses with \
                 -p warehouses=N",
            ));
        }
        Ok(TpccConfig {
            warehouses,
            mix,
            terminal_offset: p.get_u64("tpcc.terminal_offset", 0)?,
            check: p.get_bool("tpcc.check", false)?,
            wait: wait.then_some(scale),
        })
    }

    /// The most tpmC a warehouse's terminals make with the spec's waits,
    /// 12.86, or as much more as `tpcc.wait_scale` makes them shorter.
    fn ceiling(&self) -> f64 {
        MAX_TPMC_PER_WAREHOUSE / self.wait.unwrap_or(1.0)
    }

    /// The tables at the warehouses given (1 if none).
    pub fn tables(&self) -> TpccTables {
        TpccTables {
            warehouses: self.warehouses.unwrap_or(1),
        }
    }
}

/// `tpcc.mix`: five whole numbers, New-Order, Payment, Order-Status,
/// Delivery, Stock-Level.
fn parse_mix(text: &str) -> Result<[u32; 5], String> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let shape = || {
        format!(
            "is '{text}'; give five whole numbers, the cards of New-Order, Payment, \
             Order-Status, Delivery and Stock-Level in a deck (the spec's: 45,43,4,4,4)"
        )
    };
    if parts.len() != 5 {
        return Err(shape());
    }
    let mut mix = [0u32; 5];
    for (m, p) in mix.iter_mut().zip(&parts) {
        *m = p.parse().map_err(|_| shape())?;
        if *m > 10_000 {
            return Err(shape());
        }
    }
    if mix.iter().all(|&m| m == 0) {
        return Err(format!(
            "is '{text}': at least one transaction needs a card"
        ));
    }
    Ok(mix)
}

/// tpmC and its efficiency, from a run's New-Orders.
#[derive(Clone, Debug, PartialEq)]
pub struct Tpmc {
    pub new_orders: u64,
    pub rolled_back: u64,
    pub minutes: f64,
    pub tpmc: f64,
    pub warehouses: Option<u64>,
    /// The most tpmC a warehouse's terminals make: the spec's 12.86, or
    /// that over `tpcc.wait_scale`.
    pub ceiling: f64,
    /// Percent of the ceiling for the warehouses.
    pub efficiency: Option<f64>,
}

impl Tpmc {
    /// tpmC of `run`: New-Orders done (rolled back ones with them, as
    /// clause 2.4.2.3 counts them) per minute of the measured period;
    /// its efficiency against `ceiling` tpmC per warehouse.
    pub fn of(run: &RunRecord, ceiling: f64) -> Tpmc {
        let kinds = txn::Kinds::new();
        let done = |k| run.total.op(k).map_or(0, |s| s.count() - s.failures());
        let new_orders = done(kinds.txn[Txn::NewOrder as usize]);
        let minutes = run.measured().as_secs_f64() / 60.0;
        let tpmc = if minutes > 0.0 {
            new_orders as f64 / minutes
        } else {
            0.0
        };
        let warehouses = run
            .summary
            .meta
            .labels
            .get(WAREHOUSES_LABEL)
            .and_then(|w| w.parse::<u64>().ok());
        Tpmc {
            new_orders,
            rolled_back: done(kinds.rollback),
            minutes,
            tpmc,
            warehouses,
            ceiling,
            efficiency: warehouses.map(|w| 100.0 * tpmc / (ceiling * w as f64)),
        }
    }

    /// `# tpcc: ...` lines, as `run_lines` prints them.
    pub fn text(&self, run: &RunRecord) -> String {
        let mut out = String::new();
        let _ = write!(
            out,
            "# tpcc: tpmC {:.1} ({} New-Orders in {:.2} min",
            self.tpmc, self.new_orders, self.minutes
        );
        if let (Some(w), Some(e)) = (self.warehouses, self.efficiency) {
            let _ = write!(
                out,
                "; {w} warehouse(s), efficiency {e:.1}% of {} tpmC each",
                self.ceiling
            );
            if self.ceiling != MAX_TPMC_PER_WAREHOUSE {
                let scale = MAX_TPMC_PER_WAREHOUSE / self.ceiling;
                let _ = write!(
                    out,
                    ", the spec's {MAX_TPMC_PER_WAREHOUSE} with its waits scaled by {scale}"
                );
            }
        }
        out.push_str(")\n");
        let kinds = txn::Kinds::new();
        let count = |k| run.total.op(k).map_or(0, |s| s.count());
        let retries: Vec<String> = Txn::ALL
            .iter()
            .map(|&t| format!("{} {}", t.name(), count(kinds.retry[t as usize])))
            .collect();
        let _ = writeln!(
            out,
            "# tpcc: New-Orders rolled back (the unused item) {}; retries (deadlock, \
             serialization): {}",
            self.rolled_back,
            retries.join(", ")
        );
        out
    }
}

/// What a TPC-C run settled, kept as a label.
struct Narration {
    warehouses: u64,
}

impl Narrator for Narration {
    fn labels(&self) -> Vec<(String, String)> {
        vec![(WAREHOUSES_LABEL.to_string(), self.warehouses.to_string())]
    }
}

impl Kind for TpccConfig {
    const NAME: &'static str = "tpcc";
    const TITLE: &'static str = "TPC-C";
    const OWN_TABLES: bool = true;
    const PROPERTIES: &'static [&'static str] = TPCC_PROPERTIES;

    fn from_properties(p: &Properties, _phase: Phase) -> Result<Self, PropertyError> {
        TpccConfig::from_properties(p)
    }

    /// A run lasts [`RUN_SECONDS`]; a load is not timed, so that a time
    /// meant for the run never leaves districts unloaded.
    fn run_time(&self, phase: Phase) -> Option<f64> {
        (phase == Phase::Run).then_some(RUN_SECONDS)
    }

    /// The rows a load of the warehouses writes.
    fn records(&self) -> Option<u64> {
        Some(tables::rows_of(tables::units(self.warehouses.unwrap_or(1))))
    }

    /// With waits, the spec's ten terminals per warehouse, whatever
    /// `threadcount` says: the terminals' count is what bounds tpmC.
    fn connections(&self) -> Option<u64> {
        self.wait
            .map(|_| TERMINALS_PER_WAREHOUSE * self.warehouses.unwrap_or(1))
    }

    /// The terminals' waits pace the transactions: a rate over them would
    /// pace them twice.
    fn check(&self, s: &Settled<'_>) -> Result<(), PropertyError> {
        match (self.wait, s.rate_key) {
            (Some(_), Some(key)) if s.phase == Phase::Run => Err(s.props.invalid(
                key,
                "paces the transactions, and tpcc.wait=true has the terminals' keying and \
                 think times pace them: leave one out",
            )),
            _ => Ok(()),
        }
    }

    /// With waits, each terminal keeps its own schedule, and the summary
    /// shows response time as well.
    fn paced(&self) -> bool {
        self.wait.is_some()
    }

    /// A load operation is one district of one warehouse.
    fn load_operations(&self, _core: &CoreConfig) -> Option<u64> {
        Some(tables::units(self.warehouses.unwrap_or(1)))
    }

    /// A second load would meet the primary keys of the first: a load
    /// starts from empty tables (`--drop`).
    fn load_appends(&self) -> bool {
        true
    }

    fn schema(&self, _core: &CoreConfig) -> Schema {
        Schema {
            table: tables::TABLES[0].into(),
            field_names: Vec::new(),
            more_tables: tables::TABLES[1..].iter().map(|t| t.to_string()).collect(),
        }
    }

    fn what(&self, _schema: &Schema) -> String {
        "TPC-C's tables (warehouse, district, ...)".into()
    }

    fn data_shape(&self) -> &'static str {
        "the warehouses (-p warehouses=N), loaded once: `sojourn load --drop` loads them again"
    }

    fn one_client_only(&self, _phase: Phase) -> Option<&'static str> {
        Some("TPC-C runs from one client machine (its terminals deal the warehouses)")
    }

    fn loaded(&self, done: u64) -> Loaded {
        Loaded {
            count: tables::rows_of(done),
            unit: "rows",
            batches: Some(done),
        }
    }

    async fn is_empty<B: Backend>(
        &self,
        backend: &B,
        _schema: &Schema,
    ) -> Result<Option<bool>, BackendError> {
        ScriptSupport::of(backend)?
            .is_empty(backend, &self.tables())
            .await
    }

    async fn prepare<B: Backend>(
        &self,
        backend: &B,
        _schema: &Schema,
        drop: bool,
    ) -> Result<(), BackendError> {
        ScriptSupport::of(backend)?
            .prepare(backend, &self.tables(), drop)
            .await
    }

    fn after_load(&self) -> Option<String> {
        Some("analyzing TPC-C's tables".into())
    }

    async fn finish_load<B: Backend>(&self, backend: &B) -> Result<(), BackendError> {
        ScriptSupport::of(backend)?
            .finish_load(backend, &self.tables())
            .await
    }

    fn after_phase(&self, _phase: Phase) -> Option<String> {
        self.check
            .then(|| "checking TPC-C's consistency conditions 3.3.2.1 to 3.3.2.4".into())
    }

    /// Each condition counted; the first broken one named, with how many
    /// districts (or warehouses) break it and the first warehouse.
    async fn verify<B: Backend>(&self, _phase: Phase, backend: &B) -> Result<(), BackendError> {
        let support = ScriptSupport::of(backend)?;
        let number = async |sql: String| -> Result<u64, BackendError> {
            Ok(support
                .records(backend, &tables::OneNumber(sql))
                .await?
                .unwrap_or(0))
        };
        for c in CHECKS {
            let broken = number(c.count()).await?;
            if broken > 0 {
                let w = number(c.first()).await?;
                return Err(BackendError::Config(format!(
                    "TPC-C's consistency condition {} does not hold in {broken} district(s) or \
                     warehouse(s), the first in warehouse {w}",
                    c.name
                )));
            }
        }
        Ok(())
    }

    fn capacity_refusal(&self) -> Option<&'static str> {
        None
    }

    fn share_properties(&self, index: u32, _n: u32, connections: u64) -> Vec<(String, String)> {
        vec![(
            "tpcc.terminal_offset".into(),
            (self.terminal_offset + u64::from(index) * connections).to_string(),
        )]
    }

    fn run_lines(&self, run: &RunRecord) -> String {
        Tpmc::of(run, self.ceiling()).text(run)
    }

    async fn ready<B, K>(
        &self,
        phase: Phase,
        cfg: &RunConfig,
        backend: &B,
        _connector: &K,
    ) -> Result<Box<dyn ReadyPhase<B::Conn>>, StepsError>
    where
        B: Backend,
        K: Connector<Conn = B::Conn>,
    {
        let support = ScriptSupport::of(backend)?;
        let warehouses = match (self.warehouses, phase) {
            (Some(w), _) => w,
            (None, Phase::Run) => support
                .records(backend, &self.tables())
                .await?
                .unwrap_or(1)
                .max(1),
            (None, Phase::Load) => 1,
        };
        let shared = Arc::new(txn::Shared::new(
            warehouses,
            &self.mix,
            cfg.seed,
            self.terminal_offset,
            self.wait,
        ));
        let steps = (0..cfg.workers())
            .map(|i| SqlStep::Tpcc(TpccWorker::new(&shared, phase, i)))
            .collect();
        Ok(support.narrated_phase(steps, cfg.clone(), Arc::new(Narration { warehouses })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::properties::command_line as props;

    #[test]
    fn the_mix_is_five_cards() {
        let c = TpccConfig::from_properties(&props(&[("warehouses", "4")])).unwrap();
        assert_eq!((c.warehouses, c.mix), (Some(4), DEFAULT_MIX));
        let c = TpccConfig::from_properties(&props(&[("tpcc.mix", "1, 0,0,0, 1")])).unwrap();
        assert_eq!(c.mix, [1, 0, 0, 0, 1]);
        for bad in ["45,43,4,4", "a,1,1,1,1", "0,0,0,0,0"] {
            let e = TpccConfig::from_properties(&props(&[("tpcc.mix", bad)]))
                .unwrap_err()
                .to_string();
            assert!(e.contains("tpcc.mix"), "{e}");
        }
        let e = TpccConfig::from_properties(&props(&[("warehouses", "0")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("warehouses"), "{e}");
    }

    #[test]
    fn waits_run_ten_terminals_a_warehouse() {
        let c = TpccConfig::from_properties(&props(&[
            ("warehouses", "3"),
            ("tpcc.wait", "true"),
            ("tpcc.wait_scale", "0.5"),
        ]))
        .unwrap();
        assert_eq!(c.wait, Some(0.5));
        assert_eq!(Kind::connections(&c), Some(30));
        assert!(Kind::paced(&c));
        assert!((c.ceiling() - 25.72).abs() < 1e-9);
        let no_wait = TpccConfig::from_properties(&props(&[("warehouses", "3")])).unwrap();
        assert_eq!(Kind::connections(&no_wait), None);
        for (bad, why) in [
            (vec![("tpcc.wait", "true")], "warehouses=N"),
            (vec![("tpcc.wait_scale", "0.1")], "tpcc.wait=true"),
            (
                vec![
                    ("warehouses", "1"),
                    ("tpcc.wait", "true"),
                    ("tpcc.wait_scale", "0"),
                ],
                "above 0",
            ),
        ] {
            let e = TpccConfig::from_properties(&props(&bad))
                .unwrap_err()
                .to_string();
            assert!(e.contains(why), "{e}");
        }
    }
}
