//! One terminal's state and what it does per step: the transaction mix
//! it deals, the inputs it draws (clauses 2.4.1–2.8.1), the statements it
//! sends and keeps the answers of, the retry of a transaction that hit a
//! deadlock or a serialization failure, and a load step.

use std::fmt::{Display, Write};
use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::backend::Status;
use crate::executor::{Meter, Step};
use crate::generator::Counter;
use crate::op::OpKind;
use crate::workload::phase::Phase;
use crate::workload::script::{Keep, Kept, Params, Protocol, Query, ScriptConnection};

use crate::workload::tpcc::random::{last_name, money, parse_cents, Draw};
use crate::workload::tpcc::spec::{Txn, DISTRICTS, ITEMS};
use crate::workload::tpcc::sql::*;
use crate::workload::tpcc::tables::{load_unit, units};
use crate::workload::tpcc::TpccConfig;

/// Tries of a transaction that deadlocked or could not be serialized.
pub const MAX_TRIES: u32 = 10;

/// The operation kinds a run records.
#[derive(Clone, Debug)]
pub struct Kinds {
    /// Each transaction, in [`Txn`]'s order.
    pub txn: [OpKind; 5],
    /// `NAME:retry`: a try that deadlocked or could not be serialized and
    /// was run again, timed from its start to its failure.
    pub retry: [OpKind; 5],
    /// `NEW_ORDER:rollback`: a New-Order rolled back by its unused item
    /// (clause 2.4.2.3), timed whole; also counted a New-Order done.
    pub rollback: OpKind,
}

impl Kinds {
    pub fn new() -> Kinds {
        let named = |n: &str| OpKind::named(n).expect("TPC-C's kinds fit the table of kinds");
        Kinds {
            txn: Txn::ALL.map(|t| named(t.name())),
            retry: Txn::ALL.map(|t| named(&format!("{}:retry", t.name()))),
            rollback: named("NEW_ORDER:rollback"),
        }
    }
}

impl Default for Kinds {
    fn default() -> Self {
        Kinds::new()
    }
}

/// What every terminal of a phase shares.
#[derive(Debug)]
pub struct Shared {
    /// Every warehouse, which remote ones are drawn from.
    pub(super) warehouses: u64,
    /// This client's warehouses: its terminals' homes, and what it loads.
    pub(super) own: Range<u64>,
    /// The card deck each terminal shuffles (clause 5.2.4.2).
    pub(super) deck: Vec<Txn>,
    pub(super) kinds: Kinds,
    pub(super) seed: u64,
    /// The first terminal's number (a share run by an agent).
    pub(super) terminal_offset: u64,
    /// Load: the next of this client's districts to load, from 0.
    pub(super) next_unit: Counter,
    /// This client's districts, and those of them already loaded (a load
    /// resumed), in order.
    pub(super) units: Range<u64>,
    pub(super) loaded: Vec<u64>,
    /// The statements' texts, in the connections' dialect once known.
    pub(super) texts: std::sync::OnceLock<Vec<String>>,
    /// Keying and think times, multiplied by this (`tpcc.wait`).
    pub(super) wait: Option<f64>,
}

impl Shared {
    /// The terminals of `cfg` over `warehouses`, this client's being
    /// `own`; `loaded`, the districts a resumed load finds there.
    pub fn new(
        cfg: &TpccConfig,
        warehouses: u64,
        own: Range<u64>,
        seed: u64,
        loaded: Vec<u64>,
    ) -> Shared {
        let deck = Txn::ALL
            .iter()
            .zip(&cfg.mix)
            .flat_map(|(&t, &n)| std::iter::repeat_n(t, n as usize))
            .collect();
        Shared {
            warehouses,
            deck,
            kinds: Kinds::new(),
            seed,
            terminal_offset: cfg.terminal_offset,
            next_unit: Counter::new(0),
            units: units(own.clone()),
            own,
            loaded,
            texts: std::sync::OnceLock::new(),
            wait: cfg.wait,
        }
    }
}

/// A failed try: the status, whether the database said to try again,
/// and its words (or the client's, where the data was not as TPC-C
/// leaves it).
pub(super) struct Failed {
    pub(super) status: Status,
    pub(super) conflicted: bool,
    pub(super) why: Option<String>,
}

pub(super) type Tried<T> = Result<T, Failed>;

/// Where a customer is found: by number, or by the number of its last
/// name.
#[derive(Copy, Clone, Debug)]
pub(super) enum Customer {
    Id(u64),
    Name(u64),
}

/// One New-Order line: item, supplying warehouse, quantity.
#[derive(Copy, Clone, Debug)]
pub(super) struct Line {
    pub(super) item: u64,
    pub(super) supply: u64,
    pub(super) quantity: u64,
}

/// A transaction's inputs, drawn once and kept for its retries.
#[derive(Clone, Debug)]
pub(super) enum Input {
    NewOrder {
        d: u64,
        c: u64,
        lines: Vec<Line>,
    },
    Payment {
        d: u64,
        c_w: u64,
        c_d: u64,
        customer: Customer,
        cents: i64,
    },
    OrderStatus {
        d: u64,
        customer: Customer,
    },
    Delivery {
        carrier: u64,
    },
    StockLevel {
        threshold: u64,
    },
}

/// How a try ended that did not fail.
pub(super) enum Ended {
    Committed,
    RolledBack,
}

/// One terminal: its home warehouse and district, its deck, its
/// generator and the buffers its parameters are written in.
pub struct TpccWorker {
    pub(super) shared: Arc<Shared>,
    pub(super) phase: Phase,
    pub(super) home: u64,
    /// The terminal's district, which its Stock-Level reads.
    pub(super) district: u64,
    pub(super) r: Draw,
    pub(super) deck: Vec<Txn>,
    pub(super) dealt: usize,
    pub(super) params: String,
    pub(super) ranges: Vec<Option<(usize, usize)>>,
    pub(super) kept: Kept,
    /// With waits: when the terminal's next menu is shown (its next
    /// transaction chosen, and its keying begun).
    pub(super) menu: Option<Instant>,
}

impl TpccWorker {
    pub fn new(shared: &Arc<Shared>, phase: Phase, index: usize) -> TpccWorker {
        let terminal = shared.terminal_offset + index as u64;
        let own = &shared.own;
        let w = (own.end - own.start).max(1);
        TpccWorker {
            shared: Arc::clone(shared),
            phase,
            home: own.start + terminal % w,
            district: (terminal / w) % DISTRICTS + 1,
            r: Draw::new(shared.seed ^ (terminal + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            deck: shared.deck.clone(),
            dealt: usize::MAX,
            params: String::new(),
            ranges: Vec::new(),
            kept: Kept::default(),
            menu: None,
        }
    }

    /// With waits: when `txn`, chosen at the terminal's menu, is submitted
    /// (its keying time later), and when the next menu comes (its think
    /// time after that, negative exponential and cut at ten times its
    /// mean, clause 5.2.5.4). The schedule is the terminal's own and does
    /// not wait for the answer: a database that falls behind delays the
    /// next submission, and the response time counts that delay. (A
    /// terminal of the spec thinks from the answer, so a slow database
    /// would slow its terminals down and hide its own delay.)
    pub(super) fn times(&mut self, txn: Txn, menu: Instant, scale: f64) -> (Instant, Instant) {
        let submit = menu + Duration::from_secs_f64(txn.keying() * scale);
        let mean = txn.think();
        let think = (-(1.0 - self.r.0.double()).ln() * mean).min(10.0 * mean);
        (submit, submit + Duration::from_secs_f64(think * scale))
    }

    /// The next card of the terminal's deck, shuffled anew when dealt.
    pub(super) fn deal(&mut self) -> Txn {
        if self.dealt >= self.deck.len() {
            self.r.shuffle(&mut self.deck);
            self.dealt = 0;
        }
        self.dealt += 1;
        self.deck[self.dealt - 1]
    }

    /// A warehouse other than the home one (the home one where there is
    /// no other).
    pub(super) fn other_warehouse(&mut self) -> u64 {
        let w = self.shared.warehouses;
        if w < 2 {
            return self.home;
        }
        let o = self.r.uniform(1, w - 1);
        if o >= self.home {
            o + 1
        } else {
            o
        }
    }

    pub(super) fn customer(&mut self) -> Customer {
        if self.r.uniform(1, 100) <= 60 {
            Customer::Name(self.r.last_name_number())
        } else {
            Customer::Id(self.r.customer_id())
        }
    }

    /// The inputs of `txn` (clauses 2.4.1, 2.5.1, 2.6.1, 2.7.1, 2.8.1).
    pub(super) fn input(&mut self, txn: Txn) -> Input {
        match txn {
            Txn::NewOrder => {
                let d = self.r.uniform(1, DISTRICTS);
                let c = self.r.customer_id();
                let count = self.r.uniform(5, 15);
                let rollback = self.r.uniform(1, 100) == 1;
                let mut lines = Vec::with_capacity(count as usize);
                for n in 0..count {
                    let item = if rollback && n == count - 1 {
                        ITEMS + 1
                    } else {
                        self.r.item_id()
                    };
                    let supply = if self.r.uniform(1, 100) == 1 {
                        self.other_warehouse()
                    } else {
                        self.home
                    };
                    let quantity = self.r.uniform(1, 10);
                    lines.push(Line {
                        item,
                        supply,
                        quantity,
                    });
                }
                Input::NewOrder { d, c, lines }
            }
            Txn::Payment => {
                let d = self.r.uniform(1, DISTRICTS);
                let (c_w, c_d) = if self.r.uniform(1, 100) <= 85 {
                    (self.home, d)
                } else {
                    let c_d = self.r.uniform(1, DISTRICTS);
                    (self.other_warehouse(), c_d)
                };
                let customer = self.customer();
                let cents = self.r.cents(100, 500_000);
                Input::Payment {
                    d,
                    c_w,
                    c_d,
                    customer,
                    cents,
                }
            }
            Txn::OrderStatus => {
                let d = self.r.uniform(1, DISTRICTS);
                let customer = self.customer();
                Input::OrderStatus { d, customer }
            }
            Txn::Delivery => Input::Delivery {
                carrier: self.r.uniform(1, 10),
            },
            Txn::StockLevel => Input::StockLevel {
                threshold: self.r.uniform(10, 20),
            },
        }
    }

    /// Add a parameter.
    pub(super) fn arg(&mut self, v: impl Display) {
        let start = self.params.len();
        let _ = write!(self.params, "{v}");
        self.ranges.push(Some((start, self.params.len())));
    }

    /// Add an amount in cents as a parameter.
    pub(super) fn money_arg(&mut self, cents: i64) {
        let start = self.params.len();
        money(cents, &mut self.params);
        self.ranges.push(Some((start, self.params.len())));
    }

    /// Run statement `id` with the parameters added since the last one;
    /// its rows are then counted in [`TpccWorker::rows`] and the last of
    /// them in [`TpccWorker::value`].
    pub(super) async fn exec<C: ScriptConnection>(&mut self, conn: &mut C, id: usize) -> Tried<()> {
        self.run(conn, id, &LAST).await
    }

    /// [`TpccWorker::exec`], every row kept ([`TpccWorker::all`]).
    pub(super) async fn exec_rows<C: ScriptConnection>(
        &mut self,
        conn: &mut C,
        id: usize,
    ) -> Tried<()> {
        self.run(conn, id, &ROWS).await
    }

    pub(super) async fn run<C: ScriptConnection>(
        &mut self,
        conn: &mut C,
        id: usize,
        keep: &'static Keep,
    ) -> Tried<()> {
        let texts = self.shared.texts.get_or_init(|| texts(conn.dialect()));
        let q = Query {
            text: &texts[id],
            params: Params {
                text: &self.params,
                ranges: &self.ranges,
            },
            protocol: Protocol::Prepared,
            id,
            keep: Some(keep),
        };
        let status = conn.execute(&q, &mut self.kept).await;
        self.params.clear();
        self.ranges.clear();
        if status.is_ok() {
            return Ok(());
        }
        let conflicted = conn.conflicted();
        Err(Failed {
            status,
            conflicted,
            why: conn.take_failure(),
        })
    }

    /// Rows the last statement returned.
    pub(super) fn rows(&self) -> u64 {
        self.kept.results.last().map_or(0, |r| r.rows)
    }

    /// Every row the last statement returned, where it kept them.
    pub(super) fn all(&self) -> &[Vec<Option<String>>] {
        self.kept.results.last().map_or(&[], |r| &r.all_rows)
    }

    /// Column `i` of the last row the last statement returned.
    pub(super) fn value(&self, i: usize) -> Option<&str> {
        self.kept
            .results
            .last()?
            .last_row
            .as_ref()?
            .get(i)?
            .as_deref()
    }

    pub(super) fn int(&self, i: usize, what: &str) -> Tried<i64> {
        int_of(self.value(i), what)
    }

    /// One row expected of the last statement.
    pub(super) fn one(&self, what: impl FnOnce() -> String) -> Tried<()> {
        match self.rows() {
            1 => Ok(()),
            n => Err(unexpected(format!("{} gave {n} rows, not 1", what()))),
        }
    }

    /// The customer of last name number `n` in district `d` of warehouse
    /// `w`: the middle one of the rows statement `list` gives, in first
    /// name's order (clause 2.5.2.2), its number in column `id`.
    pub(super) async fn by_name<C: ScriptConnection>(
        &mut self,
        conn: &mut C,
        (w, d, n): (u64, u64, u64),
        list: usize,
        id: usize,
    ) -> Tried<u64> {
        let mut name = String::new();
        last_name(n, &mut name);
        self.arg(w);
        self.arg(d);
        self.arg(&name);
        self.exec_rows(conn, list).await?;
        let rows = self.all();
        if rows.is_empty() {
            return Err(unexpected(format!(
                "no customer of warehouse {w} district {d} is named {name}"
            )));
        }
        let middle = &rows[rows.len().div_ceil(2) - 1];
        Ok(int_of(cell(middle, id), "c_id")? as u64)
    }

    pub(super) async fn attempt<C: ScriptConnection>(
        &mut self,
        conn: &mut C,
        input: &Input,
    ) -> Tried<Ended> {
        match input {
            Input::NewOrder { d, c, lines } => self.new_order(conn, *d, *c, lines).await,
            Input::Payment {
                d,
                c_w,
                c_d,
                customer,
                cents,
            } => {
                self.payment(conn, *d, (*c_w, *c_d), *customer, *cents)
                    .await
            }
            Input::OrderStatus { d, customer } => self.order_status(conn, *d, *customer).await,
            Input::Delivery { carrier } => self.delivery(conn, *carrier).await,
            Input::StockLevel { threshold } => self.stock_level(conn, *threshold).await,
        }
    }

    /// One transaction, the next of the deck: tried again with the same
    /// inputs while the database deadlocks or cannot serialize it (up to
    /// [`MAX_TRIES`]), timed from its first try.
    pub(super) async fn run_one<C: ScriptConnection>(&mut self, conn: &mut C, m: &mut Meter) {
        let txn = self.deal();
        if let Some(scale) = self.shared.wait {
            let menu = *self.menu.get_or_insert_with(|| m.intended_start());
            let (submit, next) = self.times(txn, menu, scale);
            self.menu = Some(next);
            if !m.wait_until(submit).await {
                return;
            }
        }
        let input = self.input(txn);
        let kinds = &self.shared.kinds;
        let (kind, retry, rollback) = (
            kinds.txn[txn as usize],
            kinds.retry[txn as usize],
            kinds.rollback,
        );
        let t0 = m.start();
        let mut try_start = t0;
        let mut tries = 1;
        loop {
            match self.attempt(conn, &input).await {
                Ok(Ended::Committed) => return m.record(kind, Status::Ok, t0),
                Ok(Ended::RolledBack) => {
                    m.record(kind, Status::Ok, t0);
                    return m.record(rollback, Status::Ok, t0);
                }
                Err(f) => {
                    conn.abandon_transaction().await;
                    if f.conflicted && tries < MAX_TRIES {
                        m.record(retry, Status::Ok, try_start);
                        tries += 1;
                        try_start = m.start();
                        continue;
                    }
                    return match f.why {
                        Some(why) => m.record_because(kind, f.status, t0, why),
                        None => m.record(kind, f.status, t0),
                    };
                }
            }
        }
    }

    /// One district of the load, in one transaction.
    pub(super) async fn load_one<C: ScriptConnection>(&mut self, conn: &mut C, m: &mut Meter) {
        let unit = loop {
            let unit = self.shared.units.start + self.shared.next_unit.next();
            if unit >= self.shared.units.end {
                return;
            }
            if self.shared.loaded.binary_search(&unit).is_err() {
                break unit;
            }
        };
        let mut r = Draw::new(self.shared.seed ^ (unit + 1).wrapping_mul(0xD1B5_4A32_D192_ED03));
        let statements = load_unit(unit, conn.dialect(), &mut r);
        let t = m.start();
        for text in &statements {
            let q = Query {
                text,
                params: Params::NONE,
                protocol: Protocol::Simple,
                id: usize::MAX,
                keep: None,
            };
            let status = conn.execute(&q, &mut self.kept).await;
            if !status.is_ok() {
                let why = conn.take_failure();
                conn.abandon_transaction().await;
                return match why {
                    Some(why) => m.record_because(OpKind::Insert, status, t, why),
                    None => m.record(OpKind::Insert, status, t),
                };
            }
        }
        m.record(OpKind::Insert, Status::Ok, t);
    }
}

/// What a statement keeps: its last row, or every row.
pub(super) static LAST: Keep = Keep::One(String::new());
pub(super) static ROWS: Keep = Keep::Rows;

/// Column `i` of `row`.
pub(super) fn cell(row: &[Option<String>], i: usize) -> Option<&str> {
    row.get(i)?.as_deref()
}

pub(super) fn int_of(v: Option<&str>, what: &str) -> Tried<i64> {
    v.and_then(|v| v.trim().parse::<f64>().ok())
        .map(|v| v as i64)
        .ok_or_else(|| unexpected(format!("{what} is not a number: {v:?}")))
}

pub(super) fn cents_of(v: Option<&str>, what: &str) -> Tried<i64> {
    v.and_then(parse_cents)
        .ok_or_else(|| unexpected(format!("{what} is not an amount: {v:?}")))
}

pub(super) fn unexpected(why: String) -> Failed {
    Failed {
        status: Status::UnexpectedState,
        conflicted: false,
        why: Some(why),
    }
}

impl<C: ScriptConnection> Step<C> for TpccWorker {
    async fn step(&mut self, conn: &mut C, meter: &mut Meter) {
        match self.phase {
            Phase::Load => self.load_one(conn, meter).await,
            Phase::Run => self.run_one(conn, meter).await,
        }
    }
}
