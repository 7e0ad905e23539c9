//! TPC-C's statements as go-tpc sends them, by number: those of fixed
//! text, and the lists whose length varies with the transaction (a
//! New-Order's 5 to 15 items, stock rows and lines; a Delivery's districts
//! with an order waiting), one statement per length, each in the
//! dialect's parameters. A connection prepares each once, by its number.

use std::fmt::Write;

use crate::workload::script::Dialect;

use super::spec::DISTRICTS;

/// The statements of fixed text, with `?` for parameters, by number.
/// The statements are go-tpc's, so that a transaction asks of the server
/// what go-tpc's asks (the same statements, one fewer where sojourn does
/// not count a last name's customers before listing them).
const SQL: &[&str] = &[
    // 0..=3: transaction control; a writer's begin takes SQLite's write
    // lock first, so that two writers never deadlock on its upgrade.
    "begin",
    "begin",
    "commit",
    "rollback",
    // 4..: New-Order; its items, stock and lines are the lists below.
    "select c_discount, c_last, c_credit, w_tax from customer, warehouse where w_id = ? and \
     c_w_id = w_id and c_d_id = ? and c_id = ?",
    "select d_next_o_id, d_tax from district where d_id = ? and d_w_id = ? for update",
    "update district set d_next_o_id = ? where d_id = ? and d_w_id = ?",
    "insert into orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) \
     values (?, ?, ?, ?, current_timestamp, ?, ?)",
    "insert into new_order (no_o_id, no_d_id, no_w_id) values (?, ?, ?)",
    "update stock set s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, \
     s_remote_cnt = s_remote_cnt + ? where s_i_id = ? and s_w_id = ?",
    // 10..: Payment.
    "update warehouse set w_ytd = w_ytd + ? where w_id = ?",
    "select w_street_1, w_street_2, w_city, w_state, w_zip, w_name from warehouse where w_id = ?",
    "update district set d_ytd = d_ytd + ? where d_w_id = ? and d_id = ?",
    "select d_street_1, d_street_2, d_city, d_state, d_zip, d_name from district where d_w_id \
     = ? and d_id = ?",
    "select c_id from customer where c_w_id = ? and c_d_id = ? and c_last = ? order by c_first",
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
    // 20..: Order-Status.
    "select c_balance, c_first, c_middle, c_id from customer where c_w_id = ? and c_d_id = ? \
     and c_last = ? order by c_first",
    "select c_balance, c_first, c_middle, c_last from customer where c_w_id = ? and c_d_id = ? \
     and c_id = ?",
    "select o_id, o_carrier_id, o_entry_d from orders where o_w_id = ? and o_d_id = ? and \
     o_c_id = ? order by o_id desc limit 1",
    "select ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d from order_line \
     where ol_w_id = ? and ol_d_id = ? and ol_o_id = ?",
    // 24..: Delivery; the districts' orders are the lists below.
    "select no_o_id from new_order where no_w_id = ? and no_d_id = ? order by no_o_id limit 1 \
     for update",
    "update customer set c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 where \
     c_w_id = ? and c_d_id = ? and c_id = ?",
    // 26..: Stock-Level.
    "select d_next_o_id from district where d_w_id = ? and d_id = ?",
    "select count(distinct s_i_id) from order_line, stock where ol_w_id = ? and ol_d_id = ? and \
     ol_o_id < ? and ol_o_id >= ? and s_w_id = ? and s_i_id = ol_i_id and s_quantity < ?",
];

pub(super) const BEGIN_WRITE: usize = 0;
pub(super) const BEGIN_READ: usize = 1;
pub(super) const COMMIT: usize = 2;
pub(super) const ROLLBACK: usize = 3;
pub(super) const NO_CUSTOMER: usize = 4;
pub(super) const NO_DISTRICT: usize = 5;
pub(super) const NO_NEXT: usize = 6;
pub(super) const NO_ORDER: usize = 7;
pub(super) const NO_NEW_ORDER: usize = 8;
pub(super) const NO_STOCK_UPDATE: usize = 9;
pub(super) const PAY_WAREHOUSE: usize = 10;
pub(super) const PAY_WAREHOUSE_READ: usize = 11;
pub(super) const PAY_DISTRICT: usize = 12;
pub(super) const PAY_DISTRICT_READ: usize = 13;
pub(super) const PAY_BY_NAME: usize = 14;
pub(super) const PAY_CUSTOMER: usize = 15;
pub(super) const PAY_DATA: usize = 16;
pub(super) const PAY_BAD_CREDIT: usize = 17;
pub(super) const PAY_GOOD_CREDIT: usize = 18;
pub(super) const PAY_HISTORY: usize = 19;
pub(super) const OS_BY_NAME: usize = 20;
pub(super) const OS_CUSTOMER: usize = 21;
pub(super) const OS_ORDER: usize = 22;
pub(super) const OS_LINES: usize = 23;
pub(super) const DL_NEW_ORDER: usize = 24;
pub(super) const DL_CUSTOMER: usize = 25;
pub(super) const SL_DISTRICT: usize = 26;
pub(super) const SL_COUNT: usize = 27;

/// The most lines of a New-Order, and districts of a Delivery.
pub(super) const MAX_LINES: usize = 15;
pub(super) const MAX_DISTRICTS: usize = DISTRICTS as usize;

/// Statements of a list of `n` (1 to `max`), as go-tpc sends them: the
/// first member's number, and the text of `n`.
pub(super) struct Family {
    first: usize,
    max: usize,
    text: fn(usize) -> String,
}

/// `(?, ?), (?, ?)`: `n` tuples of `width` parameters.
fn tuples(n: usize, width: usize) -> String {
    let one = format!("({})", vec!["?"; width].join(", "));
    vec![one; n].join(", ")
}

/// New-Order's items, by number (the unused one is missing).
pub(super) const NO_ITEMS: Family = Family {
    first: SQL.len(),
    max: MAX_LINES,
    text: |n| {
        format!(
            "select i_id, i_price, i_name, i_data from item where i_id in ({})",
            vec!["?"; n].join(", ")
        )
    },
};
/// New-Order's stock, by supplying warehouse and item, every district's
/// `s_dist_NN` (as go-tpc reads them).
pub(super) const NO_STOCK: Family = Family {
    first: NO_ITEMS.first + MAX_LINES,
    max: MAX_LINES,
    text: |n| {
        format!(
            "select s_i_id, s_w_id, s_quantity, s_data, s_dist_01, s_dist_02, s_dist_03, \
             s_dist_04, s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10 from \
             stock where (s_w_id, s_i_id) in ({}) for update",
            tuples(n, 2)
        )
    },
};
/// New-Order's lines, in one insert.
pub(super) const NO_LINES: Family = Family {
    first: NO_STOCK.first + MAX_LINES,
    max: MAX_LINES,
    text: |n| {
        format!(
            "insert into order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, \
             ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) values {}",
            tuples(n, 9)
        )
    },
};
/// Delivery's orders of the districts that had one, each statement once
/// for them all.
pub(super) const DL_DELETE: Family = Family {
    first: NO_LINES.first + MAX_LINES,
    max: MAX_DISTRICTS,
    text: |n| {
        format!(
            "delete from new_order where (no_w_id, no_d_id, no_o_id) in ({})",
            tuples(n, 3)
        )
    },
};
pub(super) const DL_CARRIER: Family = Family {
    first: DL_DELETE.first + MAX_DISTRICTS,
    max: MAX_DISTRICTS,
    text: |n| {
        format!(
            "update orders set o_carrier_id = ? where (o_w_id, o_d_id, o_id) in ({})",
            tuples(n, 3)
        )
    },
};
pub(super) const DL_ORDERS: Family = Family {
    first: DL_CARRIER.first + MAX_DISTRICTS,
    max: MAX_DISTRICTS,
    text: |n| {
        format!(
            "select o_d_id, o_c_id from orders where (o_w_id, o_d_id, o_id) in ({})",
            tuples(n, 3)
        )
    },
};
pub(super) const DL_LINES: Family = Family {
    first: DL_ORDERS.first + MAX_DISTRICTS,
    max: MAX_DISTRICTS,
    text: |n| {
        format!(
            "update order_line set ol_delivery_d = current_timestamp where (ol_w_id, ol_d_id, \
             ol_o_id) in ({})",
            tuples(n, 3)
        )
    },
};
pub(super) const DL_AMOUNTS: Family = Family {
    first: DL_LINES.first + MAX_DISTRICTS,
    max: MAX_DISTRICTS,
    text: |n| {
        format!(
            "select ol_d_id, sum(ol_amount) from order_line where (ol_w_id, ol_d_id, ol_o_id) \
             in ({}) group by ol_d_id",
            tuples(n, 3)
        )
    },
};
const FAMILIES: [&Family; 8] = [
    &NO_ITEMS,
    &NO_STOCK,
    &NO_LINES,
    &DL_DELETE,
    &DL_CARRIER,
    &DL_ORDERS,
    &DL_LINES,
    &DL_AMOUNTS,
];

impl Family {
    /// The statement of a list of `n`.
    pub(super) fn of(&self, n: usize) -> usize {
        debug_assert!((1..=self.max).contains(&n));
        self.first + n - 1
    }
}

/// The statements' texts in `d`: `$n` parameters on PostgreSQL, no `for
/// update` on SQLite (whose write lock is the whole database's, taken at
/// a writer's begin).
pub(super) fn texts(d: Dialect) -> Vec<String> {
    let mut all: Vec<String> = SQL.iter().map(|s| s.to_string()).collect();
    for f in FAMILIES {
        debug_assert_eq!(all.len(), f.first);
        all.extend((1..=f.max).map(f.text));
    }
    if d == Dialect::Sqlite {
        all[BEGIN_WRITE] = "begin immediate".into();
    }
    all.into_iter().map(|s| in_dialect(&s, d)).collect()
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
        assert!(pg[NO_STOCK.of(2)].ends_with("in (($1, $2), ($3, $4)) for update"));
        let sqlite = texts(Dialect::Sqlite);
        assert_eq!(sqlite[BEGIN_WRITE], "begin immediate");
        assert!(
            sqlite[NO_STOCK.of(5)].ends_with("(?, ?))"),
            "{}",
            sqlite[NO_STOCK.of(5)]
        );
        let mysql = texts(Dialect::Mysql);
        assert!(mysql[DL_AMOUNTS.of(10)].ends_with("(?, ?, ?)) group by ol_d_id"));
        assert_eq!(mysql.len(), DL_AMOUNTS.of(MAX_DISTRICTS) + 1);
        assert_eq!(mysql[NO_LINES.of(1)].matches('?').count(), 9);
    }
}
