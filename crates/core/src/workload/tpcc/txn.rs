//! TPC-C's five transactions (clause 2) as one terminal runs them: the
//! inputs drawn as clauses 2.4.1–2.8.1 say, the SQL of the spec's
//! appendix A statement by statement through [`ScriptConnection`] (each
//! statement prepared once per connection), a deadlock or serialization
//! failure tried again with the same inputs, and each transaction measured
//! whole, as one operation of its kind. In a load, a step is one district
//! ([`super::tables::load_unit`]).

use std::fmt::{Display, Write};
use std::sync::Arc;

use crate::backend::Status;
use crate::executor::{Meter, Step};
use crate::generator::Counter;
use crate::op::OpKind;
use crate::workload::script::{Dialect, Kept, Params, Protocol, Query, ScriptConnection};
use crate::workload::Phase;

use super::random::{last_name, money, parse_cents, Draw};
use super::tables::{load_unit, units};
use super::{Txn, DISTRICTS, ITEMS};

/// The statements, with `?` for parameters, by number.
const SQL: &[&str] = &[
    // 0..=3: transaction control; a writer's begin takes SQLite's write
    // lock first, so that two writers never deadlock on its upgrade.
    "begin",
    "begin",
    "commit",
    "rollback",
    // 4..: New-Order.
    "select c_discount, c_last, c_credit, w_tax from customer, warehouse where w_id = ? and \
     c_w_id = w_id and c_d_id = ? and c_id = ?",
    "select d_next_o_id, d_tax from district where d_id = ? and d_w_id = ? for update",
    "update district set d_next_o_id = ? where d_id = ? and d_w_id = ?",
    "insert into orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) \
     values (?, ?, ?, ?, current_timestamp, ?, ?)",
    "insert into new_order (no_o_id, no_d_id, no_w_id) values (?, ?, ?)",
    "select i_price, i_name, i_data from item where i_id = ?",
    "update stock set s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, \
     s_remote_cnt = s_remote_cnt + ? where s_i_id = ? and s_w_id = ?",
    "insert into order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, \
     ol_quantity, ol_amount, ol_dist_info) values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    // 12..: Payment.
    "update warehouse set w_ytd = w_ytd + ? where w_id = ?",
    "select w_street_1, w_street_2, w_city, w_state, w_zip, w_name from warehouse where w_id = ?",
    "update district set d_ytd = d_ytd + ? where d_w_id = ? and d_id = ?",
    "select d_street_1, d_street_2, d_city, d_state, d_zip, d_name from district where d_w_id \
     = ? and d_id = ?",
    "select count(c_id) from customer where c_w_id = ? and c_d_id = ? and c_last = ?",
    "select c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, \
     c_since, c_credit, c_credit_lim, c_discount, c_balance from customer where c_w_id = ? and \
     c_d_id = ? and c_id = ? for update",
    "select c_data from customer where c_w_id = ? and c_d_id = ? and c_id = ?",
    "update customer set c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, \
     c_payment_cnt = c_payment_cnt + 1, c_data = ? where c_w_id = ? and c_d_id = ? and c_id = ?",
    "update customer set c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, \
     c_payment_cnt = c_payment_cnt + 1 where c_w_id = ? and c_d_id = ? and c_id = ?",
    "insert into history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, \
     h_data) values (?, ?, ?, ?, ?, current_timestamp, ?, ?)",
    // 22..: Order-Status.
    "select c_balance, c_first, c_middle, c_last from customer where c_w_id = ? and c_d_id = ? \
     and c_id = ?",
    "select o_id, o_carrier_id, o_entry_d from orders where o_w_id = ? and o_d_id = ? and \
     o_c_id = ? order by o_id desc limit 1",
    "select ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d from order_line \
     where ol_w_id = ? and ol_d_id = ? and ol_o_id = ?",
    // 25..: Delivery.
    "select no_o_id from new_order where no_w_id = ? and no_d_id = ? order by no_o_id limit 1 \
     for update",
    "delete from new_order where no_w_id = ? and no_d_id = ? and no_o_id = ?",
    "select o_c_id from orders where o_w_id = ? and o_d_id = ? and o_id = ?",
    "update orders set o_carrier_id = ? where o_w_id = ? and o_d_id = ? and o_id = ?",
    "update order_line set ol_delivery_d = current_timestamp where ol_w_id = ? and ol_d_id = ? \
     and ol_o_id = ?",
    "select sum(ol_amount) from order_line where ol_w_id = ? and ol_d_id = ? and ol_o_id = ?",
    "update customer set c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 where \
     c_w_id = ? and c_d_id = ? and c_id = ?",
    // 32..: Stock-Level.
    "select d_next_o_id from district where d_w_id = ? and d_id = ?",
    "select count(distinct s_i_id) from order_line, stock where ol_w_id = ? and ol_d_id = ? and \
     ol_o_id < ? and ol_o_id >= ? and s_w_id = ? and s_i_id = ol_i_id and s_quantity < ?",
];

const BEGIN_WRITE: usize = 0;
const BEGIN_READ: usize = 1;
const COMMIT: usize = 2;
const ROLLBACK: usize = 3;
const NO_CUSTOMER: usize = 4;
const NO_DISTRICT: usize = 5;
const NO_NEXT: usize = 6;
const NO_ORDER: usize = 7;
const NO_NEW_ORDER: usize = 8;
const NO_ITEM: usize = 9;
const NO_STOCK_UPDATE: usize = 10;
const NO_LINE: usize = 11;
const PAY_WAREHOUSE: usize = 12;
const PAY_WAREHOUSE_READ: usize = 13;
const PAY_DISTRICT: usize = 14;
const PAY_DISTRICT_READ: usize = 15;
const BY_NAME_COUNT: usize = 16;
const PAY_CUSTOMER: usize = 17;
const PAY_DATA: usize = 18;
const PAY_BAD_CREDIT: usize = 19;
const PAY_GOOD_CREDIT: usize = 20;
const PAY_HISTORY: usize = 21;
const OS_CUSTOMER: usize = 22;
const OS_ORDER: usize = 23;
const OS_LINES: usize = 24;
const DL_NEW_ORDER: usize = 25;
const DL_DELETE: usize = 26;
const DL_ORDER: usize = 27;
const DL_CARRIER: usize = 28;
const DL_LINES: usize = 29;
const DL_AMOUNT: usize = 30;
const DL_CUSTOMER: usize = 31;
const SL_DISTRICT: usize = 32;
const SL_COUNT: usize = 33;
/// New-Order's stock read, one statement per district's `s_dist_NN`.
const NO_STOCK: usize = 34;
/// A customer by last name: the middle one of those ordered by first
/// name (clause 2.5.2.2), one statement per offset up to [`OFFSETS`]
/// (the offset written in: MySQL takes no parameter for it).
const BY_NAME: usize = NO_STOCK + DISTRICTS as usize;
const OFFSETS: usize = 32;

/// Tries of a transaction that deadlocked or could not be serialized.
pub const MAX_TRIES: u32 = 10;

/// The statements' texts in `d`: `$n` parameters on PostgreSQL, no `for
/// update` on SQLite (whose write lock is the whole database's, taken at
/// a writer's begin).
fn texts(d: Dialect) -> Vec<String> {
    let mut all: Vec<String> = SQL.iter().map(|s| s.to_string()).collect();
    for n in 1..=DISTRICTS {
        all.push(format!(
            "select s_quantity, s_data, s_dist_{n:02} from stock where s_i_id = ? and s_w_id = ? \
             for update"
        ));
    }
    for k in 0..OFFSETS {
        all.push(by_name(k));
    }
    if d == Dialect::Sqlite {
        all[BEGIN_WRITE] = "begin immediate".into();
    }
    all.into_iter().map(|s| in_dialect(&s, d)).collect()
}

fn by_name(offset: usize) -> String {
    format!(
        "select c_id from customer where c_w_id = ? and c_d_id = ? and c_last = ? order by \
         c_first limit 1 offset {offset}"
    )
}

fn in_dialect(s: &str, d: Dialect) -> String {
    match d {
        Dialect::Mysql => s.to_string(),
        Dialect::Sqlite => s.replace(" for update", ""),
        Dialect::Postgres => {
            let mut out = String::with_capacity(s.len() + 8);
            let mut n = 0;
            for c in s.chars() {
                if c == '?' {
                    n += 1;
                    let _ = write!(out, "${n}");
                } else {
                    out.push(c);
                }
            }
            out
        }
    }
}

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
    warehouses: u64,
    /// The card deck each terminal shuffles (clause 5.2.4.2).
    deck: Vec<Txn>,
    kinds: Kinds,
    seed: u64,
    /// The first terminal's number (a share run by an agent).
    terminal_offset: u64,
    /// Load: the next district to load, from 0.
    next_unit: Counter,
    units: u64,
    /// The statements' texts, in the connections' dialect once known.
    texts: std::sync::OnceLock<Vec<String>>,
}

impl Shared {
    pub fn new(warehouses: u64, mix: &[u32; 5], seed: u64, terminal_offset: u64) -> Shared {
        let deck = Txn::ALL
            .iter()
            .zip(mix)
            .flat_map(|(&t, &n)| std::iter::repeat_n(t, n as usize))
            .collect();
        Shared {
            warehouses,
            deck,
            kinds: Kinds::new(),
            seed,
            terminal_offset,
            next_unit: Counter::new(0),
            units: units(warehouses),
            texts: std::sync::OnceLock::new(),
        }
    }
}

/// A failed try: the status, whether the database said to try again,
/// and its words (or the client's, where the data was not as TPC-C
/// leaves it).
struct Failed {
    status: Status,
    conflicted: bool,
    why: Option<String>,
}

type Tried<T> = Result<T, Failed>;

/// Where a customer is found: by number, or by the number of its last
/// name.
#[derive(Copy, Clone, Debug)]
enum Customer {
    Id(u64),
    Name(u64),
}

/// One New-Order line: item, supplying warehouse, quantity.
#[derive(Copy, Clone, Debug)]
struct Line {
    item: u64,
    supply: u64,
    quantity: u64,
}

/// A transaction's inputs, drawn once and kept for its retries.
#[derive(Clone, Debug)]
enum Input {
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
enum Ended {
    Committed,
    RolledBack,
}

/// One terminal: its home warehouse and district, its deck, its
/// generator and the buffers its parameters are written in.
pub struct TpccWorker {
    shared: Arc<Shared>,
    phase: Phase,
    home: u64,
    /// The terminal's district, which its Stock-Level reads.
    district: u64,
    r: Draw,
    deck: Vec<Txn>,
    dealt: usize,
    params: String,
    ranges: Vec<Option<(usize, usize)>>,
    kept: Kept,
    /// A value read, kept across the next statement.
    held: String,
}

impl TpccWorker {
    pub fn new(shared: &Arc<Shared>, phase: Phase, index: usize) -> TpccWorker {
        let terminal = shared.terminal_offset + index as u64;
        let w = shared.warehouses.max(1);
        TpccWorker {
            shared: Arc::clone(shared),
            phase,
            home: terminal % w + 1,
            district: (terminal / w) % DISTRICTS + 1,
            r: Draw::new(shared.seed ^ (terminal + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            deck: shared.deck.clone(),
            dealt: usize::MAX,
            params: String::new(),
            ranges: Vec::new(),
            kept: Kept::default(),
            held: String::new(),
        }
    }

    /// The next card of the terminal's deck, shuffled anew when dealt.
    fn deal(&mut self) -> Txn {
        if self.dealt >= self.deck.len() {
            self.r.shuffle(&mut self.deck);
            self.dealt = 0;
        }
        self.dealt += 1;
        self.deck[self.dealt - 1]
    }

    /// A warehouse other than the home one (the home one where there is
    /// no other).
    fn other_warehouse(&mut self) -> u64 {
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

    fn customer(&mut self) -> Customer {
        if self.r.uniform(1, 100) <= 60 {
            Customer::Name(self.r.last_name_number())
        } else {
            Customer::Id(self.r.customer_id())
        }
    }

    /// The inputs of `txn` (clauses 2.4.1, 2.5.1, 2.6.1, 2.7.1, 2.8.1).
    fn input(&mut self, txn: Txn) -> Input {
        let r = &mut self.r;
        match txn {
            Txn::NewOrder => {
                let d = r.uniform(1, DISTRICTS);
                let c = r.customer_id();
                let count = r.uniform(5, 15);
                let rollback = r.uniform(1, 100) == 1;
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
                let d = r.uniform(1, DISTRICTS);
                let (c_w, c_d) = if r.uniform(1, 100) <= 85 {
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
                let d = r.uniform(1, DISTRICTS);
                let customer = self.customer();
                Input::OrderStatus { d, customer }
            }
            Txn::Delivery => Input::Delivery {
                carrier: r.uniform(1, 10),
            },
            Txn::StockLevel => Input::StockLevel {
                threshold: r.uniform(10, 20),
            },
        }
    }

    /// Add a parameter.
    fn arg(&mut self, v: impl Display) {
        let start = self.params.len();
        let _ = write!(self.params, "{v}");
        self.ranges.push(Some((start, self.params.len())));
    }

    /// Add an amount in cents as a parameter.
    fn money_arg(&mut self, cents: i64) {
        let start = self.params.len();
        money(cents, &mut self.params);
        self.ranges.push(Some((start, self.params.len())));
    }

    /// Run statement `id` with the parameters added since the last one;
    /// its rows are then in [`TpccWorker::rows`] and the last of them in
    /// [`TpccWorker::value`].
    async fn exec<C: ScriptConnection>(&mut self, conn: &mut C, id: usize) -> Tried<()> {
        let texts = self
            .shared
            .texts
            .get_or_init(|| texts(conn.dialect()))
            .as_slice();
        let (protocol, text) = match texts.get(id) {
            Some(t) => (Protocol::Prepared, t.as_str()),
            None => (Protocol::Extended, self.held.as_str()),
        };
        let q = Query {
            text,
            params: Params {
                text: &self.params,
                ranges: &self.ranges,
            },
            protocol,
            id,
            keep: Some(&KEEP),
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
    fn rows(&self) -> u64 {
        self.kept.results.last().map_or(0, |r| r.rows)
    }

    /// Column `i` of the last row the last statement returned.
    fn value(&self, i: usize) -> Option<&str> {
        self.kept
            .results
            .last()?
            .last_row
            .as_ref()?
            .get(i)?
            .as_deref()
    }

    fn int(&self, i: usize, what: &str) -> Tried<i64> {
        self.value(i)
            .and_then(|v| v.trim().parse::<f64>().ok())
            .map(|v| v as i64)
            .ok_or_else(|| unexpected(format!("{what} is not a number: {:?}", self.value(i))))
    }

    fn cents(&self, i: usize, what: &str) -> Tried<i64> {
        match self.value(i) {
            // SUM over no rows.
            None if self.rows() == 1 => Ok(0),
            v => v
                .and_then(parse_cents)
                .ok_or_else(|| unexpected(format!("{what} is not an amount: {v:?}"))),
        }
    }

    /// One row expected of the last statement.
    fn one(&self, what: impl FnOnce() -> String) -> Tried<()> {
        match self.rows() {
            1 => Ok(()),
            n => Err(unexpected(format!("{} gave {n} rows, not 1", what()))),
        }
    }

    /// The number of the customer `c` names in district `d` of warehouse
    /// `w`: by number, or the middle one of its last name's (clause
    /// 2.5.2.2).
    async fn resolve<C: ScriptConnection>(
        &mut self,
        conn: &mut C,
        w: u64,
        d: u64,
        c: Customer,
    ) -> Tried<u64> {
        let n = match c {
            Customer::Id(id) => return Ok(id),
            Customer::Name(n) => n,
        };
        let mut name = String::new();
        last_name(n, &mut name);
        self.arg(w);
        self.arg(d);
        self.arg(&name);
        self.exec(conn, BY_NAME_COUNT).await?;
        let count = self.int(0, "the count of a last name")?.max(0) as usize;
        if count == 0 {
            return Err(unexpected(format!(
                "no customer of warehouse {w} district {d} is named {name}"
            )));
        }
        let offset = (count - 1) / 2;
        self.arg(w);
        self.arg(d);
        self.arg(&name);
        let id = if offset < OFFSETS {
            BY_NAME + offset
        } else {
            self.held = in_dialect(&by_name(offset), conn.dialect());
            usize::MAX
        };
        self.exec(conn, id).await?;
        self.one(|| format!("customer {name} of warehouse {w} district {d}"))?;
        Ok(self.int(0, "c_id")? as u64)
    }

    async fn new_order<C: ScriptConnection>(
        &mut self,
        conn: &mut C,
        d: u64,
        c: u64,
        lines: &[Line],
    ) -> Tried<Ended> {
        let w = self.home;
        self.exec(conn, BEGIN_WRITE).await?;
        self.arg(w);
        self.arg(d);
        self.arg(c);
        self.exec(conn, NO_CUSTOMER).await?;
        self.one(|| format!("customer {c} of warehouse {w} district {d}"))?;
        self.arg(d);
        self.arg(w);
        self.exec(conn, NO_DISTRICT).await?;
        self.one(|| format!("district {d} of warehouse {w}"))?;
        let o = self.int(0, "d_next_o_id")?;
        self.arg(o + 1);
        self.arg(d);
        self.arg(w);
        self.exec(conn, NO_NEXT).await?;
        let all_local = lines.iter().all(|l| l.supply == w);
        self.arg(o);
        self.arg(d);
        self.arg(w);
        self.arg(c);
        self.arg(lines.len());
        self.arg(u8::from(all_local));
        self.exec(conn, NO_ORDER).await?;
        self.arg(o);
        self.arg(d);
        self.arg(w);
        self.exec(conn, NO_NEW_ORDER).await?;
        for (n, line) in lines.iter().enumerate() {
            self.arg(line.item);
            self.exec(conn, NO_ITEM).await?;
            if self.rows() == 0 {
                if line.item > ITEMS {
                    // The unused item: the spec's rollback.
                    self.exec(conn, ROLLBACK).await?;
                    return Ok(Ended::RolledBack);
                }
                return Err(unexpected(format!("item {} is not there", line.item)));
            }
            let price = self.cents(0, "i_price")?;
            self.arg(line.item);
            self.arg(line.supply);
            self.exec(conn, NO_STOCK + d as usize - 1).await?;
            self.one(|| format!("stock of item {} in warehouse {}", line.item, line.supply))?;
            let q = self.int(0, "s_quantity")?;
            let mut info = std::mem::take(&mut self.held);
            info.clear();
            info.push_str(self.value(2).unwrap_or(""));
            let qty = line.quantity as i64;
            let left = if q >= qty + 10 { q - qty } else { q - qty + 91 };
            self.arg(left);
            self.arg(qty);
            self.arg(u8::from(line.supply != w));
            self.arg(line.item);
            self.arg(line.supply);
            self.exec(conn, NO_STOCK_UPDATE).await?;
            self.arg(o);
            self.arg(d);
            self.arg(w);
            self.arg(n + 1);
            self.arg(line.item);
            self.arg(line.supply);
            self.arg(qty);
            self.money_arg(qty * price);
            self.arg(&info);
            self.held = info;
            self.exec(conn, NO_LINE).await?;
        }
        self.exec(conn, COMMIT).await?;
        Ok(Ended::Committed)
    }

    async fn payment<C: ScriptConnection>(
        &mut self,
        conn: &mut C,
        d: u64,
        (c_w, c_d): (u64, u64),
        customer: Customer,
        cents: i64,
    ) -> Tried<Ended> {
        let w = self.home;
        self.exec(conn, BEGIN_WRITE).await?;
        self.money_arg(cents);
        self.arg(w);
        self.exec(conn, PAY_WAREHOUSE).await?;
        self.arg(w);
        self.exec(conn, PAY_WAREHOUSE_READ).await?;
        self.one(|| format!("warehouse {w}"))?;
        let mut h_data = self.value(5).unwrap_or("").to_string();
        self.money_arg(cents);
        self.arg(w);
        self.arg(d);
        self.exec(conn, PAY_DISTRICT).await?;
        self.arg(w);
        self.arg(d);
        self.exec(conn, PAY_DISTRICT_READ).await?;
        self.one(|| format!("district {d} of warehouse {w}"))?;
        h_data.push_str("    ");
        h_data.push_str(self.value(5).unwrap_or(""));
        let c = self.resolve(conn, c_w, c_d, customer).await?;
        self.arg(c_w);
        self.arg(c_d);
        self.arg(c);
        self.exec(conn, PAY_CUSTOMER).await?;
        self.one(|| format!("customer {c} of warehouse {c_w} district {c_d}"))?;
        if self.value(10) == Some("BC") {
            self.arg(c_w);
            self.arg(c_d);
            self.arg(c);
            self.exec(conn, PAY_DATA).await?;
            let mut data = String::new();
            money(cents, &mut data);
            let mut data = format!("{c} {c_d} {c_w} {d} {w} {data}|");
            data.push_str(self.value(0).unwrap_or(""));
            data.truncate(500);
            self.money_arg(cents);
            self.money_arg(cents);
            self.arg(&data);
            self.arg(c_w);
            self.arg(c_d);
            self.arg(c);
            self.exec(conn, PAY_BAD_CREDIT).await?;
        } else {
            self.money_arg(cents);
            self.money_arg(cents);
            self.arg(c_w);
            self.arg(c_d);
            self.arg(c);
            self.exec(conn, PAY_GOOD_CREDIT).await?;
        }
        h_data.truncate(24);
        self.arg(c_d);
        self.arg(c_w);
        self.arg(c);
        self.arg(d);
        self.arg(w);
        self.money_arg(cents);
        self.arg(&h_data);
        self.exec(conn, PAY_HISTORY).await?;
        self.exec(conn, COMMIT).await?;
        Ok(Ended::Committed)
    }

    async fn order_status<C: ScriptConnection>(
        &mut self,
        conn: &mut C,
        d: u64,
        customer: Customer,
    ) -> Tried<Ended> {
        let w = self.home;
        self.exec(conn, BEGIN_READ).await?;
        let c = self.resolve(conn, w, d, customer).await?;
        self.arg(w);
        self.arg(d);
        self.arg(c);
        self.exec(conn, OS_CUSTOMER).await?;
        self.one(|| format!("customer {c} of warehouse {w} district {d}"))?;
        self.arg(w);
        self.arg(d);
        self.arg(c);
        self.exec(conn, OS_ORDER).await?;
        if self.rows() == 1 {
            let o = self.int(0, "o_id")?;
            self.arg(w);
            self.arg(d);
            self.arg(o);
            self.exec(conn, OS_LINES).await?;
        }
        self.exec(conn, COMMIT).await?;
        Ok(Ended::Committed)
    }

    async fn delivery<C: ScriptConnection>(&mut self, conn: &mut C, carrier: u64) -> Tried<Ended> {
        let w = self.home;
        self.exec(conn, BEGIN_WRITE).await?;
        for d in 1..=DISTRICTS {
            self.arg(w);
            self.arg(d);
            self.exec(conn, DL_NEW_ORDER).await?;
            if self.rows() == 0 {
                // No order waits in this district (clause 2.7.4.2: skipped).
                continue;
            }
            let o = self.int(0, "no_o_id")?;
            self.arg(w);
            self.arg(d);
            self.arg(o);
            self.exec(conn, DL_DELETE).await?;
            self.arg(w);
            self.arg(d);
            self.arg(o);
            self.exec(conn, DL_ORDER).await?;
            self.one(|| format!("order {o} of warehouse {w} district {d}"))?;
            let c = self.int(0, "o_c_id")?;
            self.arg(carrier);
            self.arg(w);
            self.arg(d);
            self.arg(o);
            self.exec(conn, DL_CARRIER).await?;
            self.arg(w);
            self.arg(d);
            self.arg(o);
            self.exec(conn, DL_LINES).await?;
            self.arg(w);
            self.arg(d);
            self.arg(o);
            self.exec(conn, DL_AMOUNT).await?;
            let amount = self.cents(0, "sum(ol_amount)")?;
            self.money_arg(amount);
            self.arg(w);
            self.arg(d);
            self.arg(c);
            self.exec(conn, DL_CUSTOMER).await?;
        }
        self.exec(conn, COMMIT).await?;
        Ok(Ended::Committed)
    }

    async fn stock_level<C: ScriptConnection>(
        &mut self,
        conn: &mut C,
        threshold: u64,
    ) -> Tried<Ended> {
        let (w, d) = (self.home, self.district);
        self.exec(conn, BEGIN_READ).await?;
        self.arg(w);
        self.arg(d);
        self.exec(conn, SL_DISTRICT).await?;
        self.one(|| format!("district {d} of warehouse {w}"))?;
        let next = self.int(0, "d_next_o_id")?;
        self.arg(w);
        self.arg(d);
        self.arg(next);
        self.arg(next - 20);
        self.arg(w);
        self.arg(threshold);
        self.exec(conn, SL_COUNT).await?;
        self.exec(conn, COMMIT).await?;
        Ok(Ended::Committed)
    }

    async fn attempt<C: ScriptConnection>(&mut self, conn: &mut C, input: &Input) -> Tried<Ended> {
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
    async fn run_one<C: ScriptConnection>(&mut self, conn: &mut C, m: &mut Meter) {
        let txn = self.deal();
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
    async fn load_one<C: ScriptConnection>(&mut self, conn: &mut C, m: &mut Meter) {
        let unit = self.shared.next_unit.next();
        if unit >= self.shared.units {
            return;
        }
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

/// What every statement keeps: its last row, read as the spec reads
/// single rows (no variable is set from it).
static KEEP: std::sync::LazyLock<crate::workload::script::Keep> =
    std::sync::LazyLock::new(|| crate::workload::script::Keep::One(String::new()));

fn unexpected(why: String) -> Failed {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_take_each_dialect_s_parameters() {
        let pg = texts(Dialect::Postgres);
        assert_eq!(
            pg[NO_NEXT],
            "update district set d_next_o_id = $1 where d_id = $2 and d_w_id = $3"
        );
        let sqlite = texts(Dialect::Sqlite);
        assert_eq!(sqlite[BEGIN_WRITE], "begin immediate");
        assert!(!sqlite[NO_STOCK + 4].contains("for update"));
        assert!(sqlite[NO_STOCK + 4].contains("s_dist_05"));
        let mysql = texts(Dialect::Mysql);
        assert!(mysql[BY_NAME + 3].ends_with("limit 1 offset 3"));
        assert_eq!(mysql.len(), BY_NAME + OFFSETS);
    }

    #[test]
    fn terminals_deal_the_warehouses_and_the_deck_is_the_mix() {
        let shared = Arc::new(Shared::new(3, &[45, 43, 4, 4, 4], 1, 0));
        let homes: Vec<(u64, u64)> = (0..7)
            .map(|i| {
                let t = TpccWorker::new(&shared, Phase::Run, i);
                (t.home, t.district)
            })
            .collect();
        assert_eq!(
            homes,
            [(1, 1), (2, 1), (3, 1), (1, 2), (2, 2), (3, 2), (1, 3)]
        );
        let mut t = TpccWorker::new(&shared, Phase::Run, 0);
        let mut counts = [0; 5];
        for _ in 0..100 {
            counts[t.deal() as usize] += 1;
        }
        assert_eq!(counts, [45, 43, 4, 4, 4], "one deck, each card once");
        for _ in 0..1000 {
            if let Input::Payment { c_w, .. } = t.input(Txn::Payment) {
                assert!((1..=3).contains(&c_w));
            }
            if let Input::NewOrder { lines, .. } = t.input(Txn::NewOrder) {
                assert!((5..=15).contains(&lines.len()));
            }
        }
    }
}
