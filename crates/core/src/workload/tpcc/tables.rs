//! TPC-C's nine tables (clause 1.3) in go-tpc's names and layout, in each
//! dialect, and their initial population (clause 4.3.3.1) as SQL text: a
//! load operation is one district of one warehouse (its customers,
//! history, orders, order lines and new orders, a tenth of the
//! warehouse's stock, and for the first warehouse a tenth of the items),
//! inserted in one transaction, so that a load spreads over connections
//! by district and a district is either all there or not at all.
//!
//! The consistency conditions of clause 3.3.2 are here too, as queries
//! that count what breaks them.

use std::fmt::Write;
use std::ops::{Range, RangeInclusive};

use crate::workload::script::{Dialect, SqlTables, TablesSql};

use super::random::{last_name, money, Draw, C_LAST_LOAD};
use super::spec::{CUSTOMERS, DISTRICTS, ITEMS, NEW_ORDERS_FROM, ORDERS, STOCK};

/// The tables, in the order they are dropped.
pub const TABLES: [&str; 9] = [
    "warehouse",
    "district",
    "customer",
    "history",
    "new_order",
    "orders",
    "order_line",
    "stock",
    "item",
];

/// Rows per INSERT statement of a load.
const BATCH: usize = 500;

/// Why a run found no tables.
pub const NOT_LOADED: &str =
    "TPC-C's tables are not there; load them first (`sojourn load -P workloads/tpcc -p \
     warehouses=N`)";

/// TPC-C's tables at a number of warehouses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TpccTables {
    pub warehouses: u64,
}

impl SqlTables for TpccTables {
    fn sql(&self, d: Dialect) -> TablesSql {
        let time = match d {
            Dialect::Mysql => "datetime",
            Dialect::Postgres | Dialect::Sqlite => "timestamp",
        };
        let create = [
            "warehouse (w_id int not null, w_name varchar(10), w_street_1 varchar(20), \
             w_street_2 varchar(20), w_city varchar(20), w_state char(2), w_zip char(9), w_tax \
             decimal(4, 4), w_ytd decimal(12, 2), primary key (w_id))"
                .to_string(),
            "district (d_id int not null, d_w_id int not null, d_name varchar(10), d_street_1 \
             varchar(20), d_street_2 varchar(20), d_city varchar(20), d_state char(2), d_zip \
             char(9), d_tax decimal(4, 4), d_ytd decimal(12, 2), d_next_o_id int, primary key \
             (d_w_id, d_id))"
                .to_string(),
            format!(
                "customer (c_id int not null, c_d_id int not null, c_w_id int not null, c_first \
                 varchar(16), c_middle char(2), c_last varchar(16), c_street_1 varchar(20), \
                 c_street_2 varchar(20), c_city varchar(20), c_state char(2), c_zip char(9), \
                 c_phone char(16), c_since {time}, c_credit char(2), c_credit_lim decimal(12, \
                 2), c_discount decimal(4, 4), c_balance decimal(12, 2), c_ytd_payment \
                 decimal(12, 2), c_payment_cnt int, c_delivery_cnt int, c_data varchar(500), \
                 primary key (c_w_id, c_d_id, c_id))"
            ),
            format!(
                "history (h_c_id int not null, h_c_d_id int not null, h_c_w_id int not null, \
                 h_d_id int not null, h_w_id int not null, h_date {time}, h_amount decimal(6, \
                 2), h_data varchar(24))"
            ),
            "new_order (no_o_id int not null, no_d_id int not null, no_w_id int not null, \
             primary key (no_w_id, no_d_id, no_o_id))"
                .to_string(),
            format!(
                "orders (o_id int not null, o_d_id int not null, o_w_id int not null, o_c_id \
                 int, o_entry_d {time}, o_carrier_id int, o_ol_cnt int, o_all_local int, \
                 primary key (o_w_id, o_d_id, o_id))"
            ),
            format!(
                "order_line (ol_o_id int not null, ol_d_id int not null, ol_w_id int not null, \
                 ol_number int not null, ol_i_id int not null, ol_supply_w_id int, \
                 ol_delivery_d {time}, ol_quantity int, ol_amount decimal(6, 2), ol_dist_info \
                 char(24), primary key (ol_w_id, ol_d_id, ol_o_id, ol_number))"
            ),
            "stock (s_i_id int not null, s_w_id int not null, s_quantity int, s_dist_01 \
             char(24), s_dist_02 char(24), s_dist_03 char(24), s_dist_04 char(24), s_dist_05 \
             char(24), s_dist_06 char(24), s_dist_07 char(24), s_dist_08 char(24), s_dist_09 \
             char(24), s_dist_10 char(24), s_ytd int, s_order_cnt int, s_remote_cnt int, s_data \
             varchar(50), primary key (s_w_id, s_i_id))"
                .to_string(),
            "item (i_id int not null, i_im_id int, i_name varchar(24), i_price decimal(5, 2), \
             i_data varchar(50), primary key (i_id))"
                .to_string(),
        ];
        let mut statements: Vec<String> =
            create.iter().map(|c| format!("create table {c}")).collect();
        statements.extend([
            "create index idx_customer on customer (c_w_id, c_d_id, c_last, c_first)".to_string(),
            "create index idx_order on orders (o_w_id, o_d_id, o_c_id, o_id)".to_string(),
            "create index idx_h_w_id on history (h_w_id)".to_string(),
            "create index idx_h_c_w_id on history (h_c_w_id)".to_string(),
        ]);
        TablesSql {
            drop: TABLES
                .iter()
                .map(|t| format!("drop table if exists {t}"))
                .collect(),
            create: statements,
            any_row: "select exists (select 1 from warehouse)".into(),
            finish: match d {
                Dialect::Postgres => TABLES.iter().map(|t| format!("analyze {t}")).collect(),
                Dialect::Sqlite => vec!["analyze".into()],
                Dialect::Mysql => vec![format!("analyze table {}", TABLES.join(", "))],
            },
            scale: "select count(*) from warehouse".into(),
            not_loaded: NOT_LOADED,
            vacuum: Vec::new(),
        }
    }
}

/// The districts of `warehouses` (numbered from 1) as load operations,
/// numbered from 0: one per district, a warehouse's ten in a row.
pub fn units(warehouses: Range<u64>) -> Range<u64> {
    (warehouses.start.max(1) - 1) * DISTRICTS..(warehouses.end.max(1) - 1) * DISTRICTS
}

/// Rows a load of the districts `units` (numbered from 0, a warehouse's
/// ten in a row) wrote, for its summary (order lines counted at their
/// mean of 10 per order).
pub fn rows_of(units: Range<u64>) -> u64 {
    // The district's own row, its customers and history, orders and
    // lines, new orders and its tenth of the stock.
    let per_district =
        1 + CUSTOMERS * 2 + ORDERS * 11 + (ORDERS - NEW_ORDERS_FROM + 1) + STOCK / 10;
    let n = units.end.saturating_sub(units.start);
    // The first warehouse's districts load a tenth of the items each; a
    // warehouse's first district, its row.
    let with_items = units
        .end
        .min(DISTRICTS)
        .saturating_sub(units.start.min(DISTRICTS));
    let warehouse_rows = units.end.div_ceil(DISTRICTS)
        - units
            .start
            .div_ceil(DISTRICTS)
            .min(units.end.div_ceil(DISTRICTS));
    n * per_district + with_items * (ITEMS / DISTRICTS) + warehouse_rows
}

/// Rows of `INSERT INTO table (...) VALUES (...), (...)` in batches.
struct Inserts<'a> {
    out: &'a mut Vec<String>,
    head: &'static str,
    text: String,
    rows: usize,
}

impl<'a> Inserts<'a> {
    fn new(out: &'a mut Vec<String>, head: &'static str) -> Inserts<'a> {
        Inserts {
            out,
            head,
            text: String::new(),
            rows: 0,
        }
    }

    /// Start a row: the text to write its values into, after `(`.
    fn row(&mut self) -> &mut String {
        if self.rows == BATCH {
            self.flush();
        }
        if self.rows == 0 {
            self.text.push_str(self.head);
            self.text.push_str(" values (");
        } else {
            self.text.push_str(", (");
        }
        self.rows += 1;
        &mut self.text
    }

    fn flush(&mut self) {
        if self.rows > 0 {
            self.out.push(std::mem::take(&mut self.text));
            self.rows = 0;
        }
    }
}

impl Drop for Inserts<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

/// A quoted random alphanumeric string.
fn quoted_astring(r: &mut Draw, lo: u64, hi: u64, out: &mut String) {
    out.push('\'');
    r.astring(lo, hi, out);
    out.push('\'');
}

/// An address: street 1 and 2, city, state, zip, each quoted.
fn address(r: &mut Draw, out: &mut String) {
    for _ in 0..3 {
        quoted_astring(r, 10, 20, out);
        out.push_str(", ");
    }
    quoted_astring(r, 2, 2, out);
    out.push_str(", '");
    r.zip(out);
    out.push('\'');
}

/// The statements that load district `unit % 10 + 1` of warehouse
/// `unit / 10 + 1`, from the generator `r` (seeded for that unit), in
/// one transaction. The tables are drawn in a fixed order: the generator's
/// draws, and so the data, follow from the seed.
pub fn load_unit(unit: u64, d: Dialect, r: &mut Draw) -> Vec<String> {
    let w = unit / DISTRICTS + 1;
    let dist = unit % DISTRICTS + 1;
    let mut out = vec![match d {
        Dialect::Sqlite => "begin immediate".to_string(),
        Dialect::Postgres | Dialect::Mysql => "begin".to_string(),
    }];
    // A tenth of the items, with the first warehouse's districts.
    let tenth = ITEMS / DISTRICTS;
    let items = (dist - 1) * tenth + 1..=dist * tenth;
    if w == 1 {
        load_items(&mut out, r, items.clone());
    }
    if dist == 1 {
        load_warehouse(&mut out, r, w);
    }
    load_district(&mut out, r, w, dist);
    load_stock(&mut out, r, w, items);
    load_customers(&mut out, r, w, dist);
    load_history(&mut out, r, w, dist);
    let lines = load_orders(&mut out, r, w, dist);
    load_order_lines(&mut out, r, w, dist, &lines);
    load_new_orders(&mut out, w, dist);
    out.push("commit".into());
    out
}

/// The time every loaded row was made at.
const NOW: &str = "current_timestamp";

/// A tenth of the item table.
fn load_items(out: &mut Vec<String>, r: &mut Draw, items: RangeInclusive<u64>) {
    let mut ins = Inserts::new(
        out,
        "insert into item (i_id, i_im_id, i_name, i_price, i_data)",
    );
    for i in items {
        let row = ins.row();
        let _ = write!(row, "{i}, {}, ", r.uniform(1, 10_000));
        quoted_astring(r, 14, 24, row);
        row.push_str(", ");
        money(r.cents(100, 10_000), row);
        row.push_str(", '");
        r.data(row);
        row.push_str("')");
    }
}

/// Warehouse `w`'s row.
fn load_warehouse(out: &mut Vec<String>, r: &mut Draw, w: u64) {
    let mut ins = Inserts::new(
        out,
        "insert into warehouse (w_id, w_name, w_street_1, w_street_2, w_city, w_state, \
         w_zip, w_tax, w_ytd)",
    );
    let row = ins.row();
    let _ = write!(row, "{w}, ");
    quoted_astring(r, 6, 10, row);
    row.push_str(", ");
    address(r, row);
    let _ = write!(row, ", 0.{:04}, 300000.00)", r.uniform(0, 2000));
}

/// District `dist` of warehouse `w`.
fn load_district(out: &mut Vec<String>, r: &mut Draw, w: u64, dist: u64) {
    let mut ins = Inserts::new(
        out,
        "insert into district (d_id, d_w_id, d_name, d_street_1, d_street_2, d_city, \
         d_state, d_zip, d_tax, d_ytd, d_next_o_id)",
    );
    let row = ins.row();
    let _ = write!(row, "{dist}, {w}, ");
    quoted_astring(r, 6, 10, row);
    row.push_str(", ");
    address(r, row);
    let _ = write!(
        row,
        ", 0.{:04}, 30000.00, {})",
        r.uniform(0, 2000),
        ORDERS + 1
    );
}

/// Warehouse `w`'s stock of `items`.
fn load_stock(out: &mut Vec<String>, r: &mut Draw, w: u64, items: RangeInclusive<u64>) {
    let mut ins = Inserts::new(
        out,
        "insert into stock (s_i_id, s_w_id, s_quantity, s_dist_01, s_dist_02, s_dist_03, \
         s_dist_04, s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10, \
         s_ytd, s_order_cnt, s_remote_cnt, s_data)",
    );
    for i in items {
        let row = ins.row();
        let _ = write!(row, "{i}, {w}, {}", r.uniform(10, 100));
        for _ in 0..10 {
            row.push_str(", ");
            quoted_astring(r, 24, 24, row);
        }
        row.push_str(", 0, 0, 0, '");
        r.data(row);
        row.push_str("')");
    }
}

/// The district's customers.
fn load_customers(out: &mut Vec<String>, r: &mut Draw, w: u64, dist: u64) {
    let now = NOW;
    let mut ins = Inserts::new(
        out,
        "insert into customer (c_id, c_d_id, c_w_id, c_first, c_middle, c_last, c_street_1, \
         c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, \
         c_discount, c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_data)",
    );
    for c in 1..=CUSTOMERS {
        let row = ins.row();
        let _ = write!(row, "{c}, {dist}, {w}, ");
        quoted_astring(r, 8, 16, row);
        row.push_str(", 'OE', '");
        // The first thousand take each name once; the rest by NURand.
        let n = if c <= 1000 {
            c - 1
        } else {
            r.nurand(255, 0, 999, C_LAST_LOAD)
        };
        last_name(n, row);
        row.push_str("', ");
        address(r, row);
        row.push_str(", '");
        r.nstring(16, 16, row);
        let credit = if r.uniform(1, 10) == 1 { "BC" } else { "GC" };
        let _ = write!(
            row,
            "', {now}, '{credit}', 50000.00, 0.{:04}, -10.00, 10.00, 1, 0, ",
            r.uniform(0, 5000)
        );
        quoted_astring(r, 300, 500, row);
        row.push(')');
    }
}

/// One history row per customer.
fn load_history(out: &mut Vec<String>, r: &mut Draw, w: u64, dist: u64) {
    let now = NOW;
    let mut ins = Inserts::new(
        out,
        "insert into history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, \
         h_amount, h_data)",
    );
    for c in 1..=CUSTOMERS {
        let row = ins.row();
        let _ = write!(row, "{c}, {dist}, {w}, {dist}, {w}, {now}, 10.00, ");
        quoted_astring(r, 12, 24, row);
        row.push(')');
    }
}

/// The district's orders, one per customer in a random order; returns
/// each order's count of lines.
fn load_orders(out: &mut Vec<String>, r: &mut Draw, w: u64, dist: u64) -> Vec<u64> {
    let now = NOW;
    let mut customers: Vec<u64> = (1..=CUSTOMERS).collect();
    r.shuffle(&mut customers);
    let mut lines = Vec::with_capacity(ORDERS as usize);
    let mut ins = Inserts::new(
        out,
        "insert into orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, \
         o_ol_cnt, o_all_local)",
    );
    for o in 1..=ORDERS {
        let count = r.uniform(5, 15);
        lines.push(count);
        let row = ins.row();
        let c = customers[(o - 1) as usize];
        let _ = write!(row, "{o}, {dist}, {w}, {c}, {now}, ");
        if o < NEW_ORDERS_FROM {
            let _ = write!(row, "{}", r.uniform(1, 10));
        } else {
            row.push_str("null");
        }
        let _ = write!(row, ", {count}, 1)");
    }
    lines
}

/// The lines of the orders, `lines[o - 1]` for order `o`.
fn load_order_lines(out: &mut Vec<String>, r: &mut Draw, w: u64, dist: u64, lines: &[u64]) {
    let now = NOW;
    let mut ins = Inserts::new(
        out,
        "insert into order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, \
         ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)",
    );
    for (o, &count) in (1..=ORDERS).zip(lines) {
        for n in 1..=count {
            let row = ins.row();
            let _ = write!(row, "{o}, {dist}, {w}, {n}, {}, {w}, ", r.uniform(1, ITEMS));
            if o < NEW_ORDERS_FROM {
                let _ = write!(row, "{now}, 5, 0.00, ");
            } else {
                row.push_str("null, 5, ");
                money(r.cents(1, 999_999), row);
                row.push_str(", ");
            }
            quoted_astring(r, 24, 24, row);
            row.push(')');
        }
    }
}

/// The orders not yet delivered.
fn load_new_orders(out: &mut Vec<String>, w: u64, dist: u64) {
    let mut ins = Inserts::new(out, "insert into new_order (no_o_id, no_d_id, no_w_id)");
    for o in NEW_ORDERS_FROM..=ORDERS {
        let _ = write!(ins.row(), "{o}, {dist}, {w})");
    }
}

/// One of the consistency conditions of clause 3.3.2: its name, and a
/// query of the warehouses (`w`, once per district or warehouse) that
/// break it.
#[derive(Copy, Clone, Debug)]
pub struct Condition {
    pub name: &'static str,
    pub broken: &'static str,
}

impl Condition {
    /// A query of one value: how many districts or warehouses break it.
    pub fn count(&self) -> String {
        format!("select count(*) from ({}) t", self.broken)
    }

    /// A query of one value: the first warehouse that breaks it, or 0.
    pub fn first(&self) -> String {
        format!(
            "select coalesce(sum(w), 0) from (select w from ({}) t order by w limit 1) u",
            self.broken
        )
    }
}

/// The consistency conditions 3.3.2.1 to 3.3.2.4, which hold after a
/// load and after any run.
pub const CHECKS: [Condition; 4] = [
    Condition {
        name: "3.3.2.1 (W_YTD = sum(D_YTD))",
        broken: "select w.w_id as w from warehouse w where abs(w.w_ytd - (select sum(d_ytd) \
                 from district d where d.d_w_id = w.w_id)) > 0.005",
    },
    Condition {
        name: "3.3.2.2 (D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID))",
        broken: "select d.d_w_id as w from district d where d.d_next_o_id - 1 <> (select \
                 max(o_id) from orders o where o.o_w_id = d.d_w_id and o.o_d_id = d.d_id) or \
                 d.d_next_o_id - 1 <> (select max(no_o_id) from new_order n where n.no_w_id = \
                 d.d_w_id and n.no_d_id = d.d_id)",
    },
    Condition {
        name: "3.3.2.3 (max(NO_O_ID) - min(NO_O_ID) + 1 = the district's new orders)",
        broken: "select no_w_id as w from new_order group by no_w_id, no_d_id having \
                 max(no_o_id) - min(no_o_id) + 1 <> count(*)",
    },
    Condition {
        name: "3.3.2.4 (sum(O_OL_CNT) = the district's order lines)",
        broken: "select o.o_w_id as w from (select o_w_id, o_d_id, sum(o_ol_cnt) as n from \
                 orders group by o_w_id, o_d_id) o join (select ol_w_id, ol_d_id, count(*) as n \
                 from order_line group by ol_w_id, ol_d_id) l on o.o_w_id = l.ol_w_id and \
                 o.o_d_id = l.ol_d_id where o.n <> l.n",
    },
];

/// A query of one number, asked through the capability's count of what
/// is loaded ([`TablesSql::scale`]): a database that runs SQL workloads
/// answers it without knowing what it asks.
#[derive(Debug)]
pub struct OneNumber(pub String);

impl SqlTables for OneNumber {
    fn sql(&self, _d: Dialect) -> TablesSql {
        TablesSql {
            drop: Vec::new(),
            create: Vec::new(),
            any_row: String::new(),
            finish: Vec::new(),
            scale: self.0.clone(),
            not_loaded: NOT_LOADED,
            vacuum: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unit_is_one_transaction_of_its_district() {
        let mut r = Draw::new(1);
        let first = load_unit(0, Dialect::Postgres, &mut r);
        assert_eq!(first.first().map(String::as_str), Some("begin"));
        assert_eq!(first.last().map(String::as_str), Some("commit"));
        let count = |stmts: &[String], table: &str| {
            stmts
                .iter()
                .filter(|s| s.starts_with(&format!("insert into {table} ")))
                .map(|s| s.matches("), (").count() + 1)
                .sum::<usize>()
        };
        assert_eq!(count(&first, "item"), 10_000);
        assert_eq!(count(&first, "warehouse"), 1);
        assert_eq!(count(&first, "district"), 1);
        assert_eq!(count(&first, "stock"), 10_000);
        assert_eq!(count(&first, "customer"), 3_000);
        assert_eq!(count(&first, "history"), 3_000);
        assert_eq!(count(&first, "orders"), 3_000);
        assert_eq!(count(&first, "new_order"), 900);
        let lines = count(&first, "order_line");
        assert!((15_000..=45_000).contains(&lines), "{lines}");
        // The second warehouse's third district: no items, no warehouse.
        let other = load_unit(12, Dialect::Sqlite, &mut r);
        assert_eq!(other[0], "begin immediate");
        assert_eq!(count(&other, "item"), 0);
        assert_eq!(count(&other, "warehouse"), 0);
        assert!(
            other.iter().any(|s| s.contains("(3, 2, ")),
            "district 3 of 2"
        );
    }
}
