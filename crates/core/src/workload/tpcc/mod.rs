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
mod spec;
mod sql;
pub mod tables;
pub mod txn;

use std::fmt::Write;
use std::ops::Range;
use std::sync::Arc;

pub use spec::{
    Txn, CUSTOMERS, DISTRICTS, ITEMS, MAX_TPMC_PER_WAREHOUSE, NEW_ORDERS_FROM, ORDERS, RUN_SECONDS,
    STOCK, TERMINALS_PER_WAREHOUSE, WAREHOUSES_LABEL,
};
pub use tables::{TpccTables, CHECKS};
pub use txn::TpccWorker;

use crate::backend::{Backend, BackendError, BackendResult, Schema};
use crate::properties::{Properties, PropertyError};
use crate::run_record::RunRecord;

use super::config::CoreConfig;
use super::kind::{Kind, Settled};
use super::phase::Phase;
use super::script::{ScriptSupport, SqlStep};
use super::steps::{Loaded, Narrator, StepsError};
use crate::workload::kind::{Opens, Readied, Readying};

/// The properties it reads.
pub const TPCC_PROPERTIES: &[&str] = &[
    "warehouses",
    "tpcc.mix",
    "tpcc.wait",
    "tpcc.wait_scale",
    "tpcc.check",
    "tpcc.resume",
    // A share's first terminal, and its warehouses, run by agents.
    "tpcc.terminal_offset",
    "tpcc.share",
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
    /// `tpcc.share=I/N`: an agent's share of the warehouses, the I-th of N
    /// ranges, which it loads and homes its terminals in.
    pub share: Option<(u64, u64)>,
    /// `tpcc.resume=true`: a load into tables that hold some districts
    /// keeps them and loads the others.
    pub resume: bool,
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
        let share = match p.get("tpcc.share") {
            None => None,
            Some(text) => {
                let share = parse_share(text).ok_or_else(|| {
                    p.invalid("tpcc.share", "give I/N, share I (from 0) of N agents")
                })?;
                if let Some(w) = warehouses.filter(|&w| w < share.1) {
                    return Err(p.invalid(
                        "tpcc.share",
                        format!(
                            "cuts {w} warehouse(s) into {} shares, one per agent: give at \
                             least as many warehouses as agents",
                            share.1
                        ),
                    ));
                }
                Some(share)
            }
        };
        Ok(TpccConfig {
            warehouses,
            mix,
            terminal_offset: p.get_u64("tpcc.terminal_offset", 0)?,
            check: p.get_bool("tpcc.check", false)?,
            wait: wait.then_some(scale),
            share,
            resume: p.get_bool("tpcc.resume", false)?,
        })
    }

    /// The warehouses (numbered from 1) this client loads and homes its
    /// terminals in, of `w`: all, or its share's range.
    pub fn own(&self, w: u64) -> Range<u64> {
        match self.share {
            Some((i, n)) => share_of(w, i, n),
            None => 1..w + 1,
        }
    }

    /// The warehouses given this client loads (one where a run reads
    /// them from the tables).
    fn own_given(&self) -> Range<u64> {
        self.warehouses.map_or(1..2, |w| self.own(w))
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

/// `I/N`, with I below N.
fn parse_share(text: &str) -> Option<(u64, u64)> {
    let (i, n) = text.split_once('/')?;
    let (i, n) = (i.trim().parse().ok()?, n.trim().parse().ok()?);
    (i < n).then_some((i, n))
}

/// Share `i` of `n` of the warehouses 1 to `w`: `w / n` each, the first
/// `w % n` shares one more, in order.
pub fn share_of(w: u64, i: u64, n: u64) -> Range<u64> {
    let (each, more) = (w / n, w % n);
    let start = 1 + i * each + i.min(more);
    start..start + each + u64::from(i < more)
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

/// The one number `sql` answers, through the SQL capability.
async fn one_number<B: Backend>(backend: &B, sql: String) -> Result<u64, BackendError> {
    Ok(ScriptSupport::of(backend)?
        .records(backend, &tables::OneNumber(sql))
        .await?
        .unwrap_or(0))
}

/// The load operations (districts) of `warehouses` already loaded, in
/// order: each district is loaded in one transaction with its row, so its
/// row says it is all there. A warehouse is asked as a whole first, its
/// districts one by one only when some but not all are there.
async fn loaded_units<B: Backend>(
    backend: &B,
    warehouses: Range<u64>,
) -> Result<Vec<u64>, BackendError> {
    let mut done = Vec::new();
    for w in warehouses {
        let first = (w - 1) * DISTRICTS;
        let sql = format!("select count(*) from district where d_w_id = {w}");
        match one_number(backend, sql).await? {
            0 => {}
            DISTRICTS => done.extend(first..first + DISTRICTS),
            _ => {
                for d in 1..=DISTRICTS {
                    let sql =
                        format!("select count(*) from district where d_w_id = {w} and d_id = {d}");
                    if one_number(backend, sql).await? > 0 {
                        done.push(first + d - 1);
                    }
                }
            }
        }
    }
    Ok(done)
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

    /// A load cut over agents cuts the warehouses given.
    fn from_properties(p: &Properties, phase: Phase) -> Result<Self, PropertyError> {
        let c = TpccConfig::from_properties(p)?;
        if let (Phase::Load, None, Some((_, n))) = (phase, c.warehouses, c.share) {
            return Err(p.invalid(
                "tpcc.share",
                format!(
                    "cuts the warehouses over {n} agents: give them with -p warehouses=N (at \
                     least {n})"
                ),
            ));
        }
        Ok(c)
    }

    /// A run lasts [`RUN_SECONDS`]; a load is not timed, so that a time
    /// meant for the run never leaves districts unloaded.
    fn run_time(&self, phase: Phase) -> Option<f64> {
        (phase == Phase::Run).then_some(RUN_SECONDS)
    }

    /// The rows a load of the warehouses writes.
    fn records(&self) -> Option<u64> {
        Some(tables::rows_of(tables::units(self.own_given())))
    }

    /// With waits, the spec's ten terminals per warehouse, whatever
    /// `threadcount` says: the terminals' count is what bounds tpmC.
    fn connections(&self) -> Option<u64> {
        let own = self.own_given();
        self.wait
            .map(|_| TERMINALS_PER_WAREHOUSE * (own.end - own.start))
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
        let units = tables::units(self.own_given());
        Some(units.end - units.start)
    }

    /// A second load would meet the primary keys of the first: a load
    /// starts from empty tables (`--drop`), unless it resumes one.
    fn load_appends(&self) -> bool {
        !self.resume
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

    fn loaded(&self, done: u64) -> Loaded {
        let first = tables::units(self.own_given()).start;
        Loaded {
            count: tables::rows_of(first..first + done),
            unit: "rows",
            batches: Some(done),
        }
    }

    async fn is_empty<B: Backend>(&self, backend: &B, _: &Schema) -> BackendResult<Option<bool>> {
        ScriptSupport::of(backend)?
            .is_empty(backend, &self.tables())
            .await
    }

    /// A resumed load keeps the tables it finds with rows in them.
    async fn prepare<B: Backend>(&self, backend: &B, _: &Schema, drop: bool) -> BackendResult<()> {
        let support = ScriptSupport::of(backend)?;
        if self.resume && !drop && support.is_empty(backend, &self.tables()).await? == Some(false) {
            return Ok(());
        }
        support.prepare(backend, &self.tables(), drop).await
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
        for c in CHECKS {
            let broken = one_number(backend, c.count()).await?;
            if broken > 0 {
                let w = one_number(backend, c.first()).await?;
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

    /// Terminals numbered across the agents, and each agent's range of
    /// the warehouses, in the load and in the run.
    fn share_properties(&self, index: u32, n: u32, connections: u64) -> Vec<(String, String)> {
        let mut own = vec![(
            "tpcc.terminal_offset".into(),
            (self.terminal_offset + u64::from(index) * connections).to_string(),
        )];
        if n > 1 {
            own.push(("tpcc.share".into(), format!("{index}/{n}")));
        }
        own
    }

    fn run_lines(&self, run: &RunRecord) -> String {
        Tpmc::of(run, self.ceiling()).text(run)
    }

    async fn ready<B: Backend, K: Opens<B>>(&self, at: Readying<'_, B, K>) -> Readied<B::Conn> {
        let (phase, cfg, backend) = (at.phase, at.cfg, at.backend);
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
        let own = self.own(warehouses);
        if own.is_empty() {
            return Err(StepsError::Workload(format!(
                "tpcc.share: {warehouses} warehouse(s) do not go round {} agents: load at least \
                 as many warehouses as agents",
                self.share.map_or(1, |s| s.1)
            )));
        }
        let loaded = match phase {
            Phase::Load if self.resume => loaded_units(backend, own.clone()).await?,
            _ => Vec::new(),
        };
        let shared = Arc::new(txn::Shared::new(self, warehouses, own, cfg.seed, loaded));
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

    #[test]
    fn agents_share_the_warehouses_and_their_rows_add_up() {
        for (w, n) in [(7, 3), (3, 3), (10, 4), (1, 1)] {
            let shares: Vec<Range<u64>> = (0..n).map(|i| share_of(w, i, n)).collect();
            // In order, each next to the one before, every warehouse once,
            // none empty and none two warehouses bigger than another.
            assert_eq!(shares[0].start, 1);
            assert_eq!(shares[n as usize - 1].end, w + 1);
            for pair in shares.windows(2) {
                assert_eq!(pair[0].end, pair[1].start, "{shares:?}");
            }
            let sizes: Vec<u64> = shares.iter().map(|r| r.end - r.start).collect();
            assert!(
                sizes.iter().all(|&k| k == w / n || k == w / n + 1),
                "{sizes:?}"
            );
            let rows: u64 = shares
                .iter()
                .map(|r| tables::rows_of(tables::units(r.clone())))
                .sum();
            assert_eq!(rows, tables::rows_of(tables::units(1..w + 1)));
        }
        let c = TpccConfig::from_properties(&props(&[("warehouses", "7"), ("tpcc.share", "2/3")]))
            .unwrap();
        assert_eq!(c.own_given(), 6..8);
        let core = CoreConfig::from_properties(&props(&[("recordcount", "1")])).unwrap();
        assert_eq!(Kind::load_operations(&c, &core), Some(20));
        for (w, share, why) in [
            ("2", "0/3", "at least as many warehouses"),
            ("4", "3/3", "I/N"),
            ("4", "1-3", "I/N"),
        ] {
            let e =
                TpccConfig::from_properties(&props(&[("warehouses", w), ("tpcc.share", share)]))
                    .unwrap_err()
                    .to_string();
            assert!(e.contains(why), "{e}");
        }
    }
}
