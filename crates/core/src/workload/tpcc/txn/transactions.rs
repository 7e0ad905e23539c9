//! TPC-C's five transactions, statement by statement as the spec's
//! appendix A writes them: New-Order, Payment, Order-Status, Delivery and
//! Stock-Level, each one attempt on one connection.

use crate::workload::script::ScriptConnection;

use crate::workload::tpcc::random::money;
use crate::workload::tpcc::spec::{DISTRICTS, ITEMS};
use crate::workload::tpcc::sql::*;

use super::worker::*;

impl TpccWorker {
    pub(super) async fn new_order<C: ScriptConnection>(
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
        let n = lines.len();
        for l in lines {
            self.arg(l.item);
        }
        self.exec_rows(conn, NO_ITEMS.of(n)).await?;
        let mut prices: Vec<(u64, i64)> = Vec::with_capacity(n);
        for row in self.all() {
            let item = int_of(cell(row, 0), "i_id")? as u64;
            prices.push((item, cents_of(cell(row, 1), "i_price")?));
        }
        let price = |item: u64| prices.iter().find(|p| p.0 == item).map(|p| p.1);
        if let Some(l) = lines.iter().find(|l| price(l.item).is_none()) {
            if l.item > ITEMS {
                // The unused item: the spec's rollback.
                self.exec(conn, ROLLBACK).await?;
                return Ok(Ended::RolledBack);
            }
            return Err(unexpected(format!("item {} is not there", l.item)));
        }
        for l in lines {
            self.arg(l.supply);
            self.arg(l.item);
        }
        self.exec_rows(conn, NO_STOCK.of(n)).await?;
        // Per stock row: item, warehouse, quantity, this district's info.
        let mut stock: Vec<(u64, u64, i64, String)> = Vec::with_capacity(n);
        for row in self.all() {
            stock.push((
                int_of(cell(row, 0), "s_i_id")? as u64,
                int_of(cell(row, 1), "s_w_id")? as u64,
                int_of(cell(row, 2), "s_quantity")?,
                cell(row, 3 + d as usize).unwrap_or("").to_string(),
            ));
        }
        for l in lines {
            let Some(s) = stock.iter_mut().find(|s| s.0 == l.item && s.1 == l.supply) else {
                return Err(unexpected(format!(
                    "no stock of item {} in warehouse {}",
                    l.item, l.supply
                )));
            };
            let qty = l.quantity as i64;
            // A line after another of the same item sees what it left.
            s.2 = if s.2 >= qty + 10 {
                s.2 - qty
            } else {
                s.2 - qty + 91
            };
            let left = s.2;
            self.arg(left);
            self.arg(qty);
            self.arg(u8::from(l.supply != w));
            self.arg(l.item);
            self.arg(l.supply);
            self.exec(conn, NO_STOCK_UPDATE).await?;
        }
        for (k, l) in lines.iter().enumerate() {
            let qty = l.quantity as i64;
            let amount = qty * price(l.item).unwrap_or(0);
            let info = stock
                .iter()
                .find(|s| s.0 == l.item && s.1 == l.supply)
                .map_or("", |s| s.3.as_str());
            self.arg(o);
            self.arg(d);
            self.arg(w);
            self.arg(k + 1);
            self.arg(l.item);
            self.arg(l.supply);
            self.arg(qty);
            self.money_arg(amount);
            self.arg(info);
        }
        self.exec(conn, NO_LINES.of(n)).await?;
        self.exec(conn, COMMIT).await?;
        Ok(Ended::Committed)
    }

    pub(super) async fn payment<C: ScriptConnection>(
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
        let c = match customer {
            Customer::Id(c) => c,
            Customer::Name(n) => self.by_name(conn, (c_w, c_d, n), PAY_BY_NAME, 0).await?,
        };
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

    pub(super) async fn order_status<C: ScriptConnection>(
        &mut self,
        conn: &mut C,
        d: u64,
        customer: Customer,
    ) -> Tried<Ended> {
        let w = self.home;
        self.exec(conn, BEGIN_READ).await?;
        // By name, the list gives the customer's balance and names too.
        let c = match customer {
            Customer::Name(n) => self.by_name(conn, (w, d, n), OS_BY_NAME, 3).await?,
            Customer::Id(c) => {
                self.arg(w);
                self.arg(d);
                self.arg(c);
                self.exec(conn, OS_CUSTOMER).await?;
                self.one(|| format!("customer {c} of warehouse {w} district {d}"))?;
                c
            }
        };
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

    /// The oldest new order of each district that has one, then each
    /// statement once for all of them (as go-tpc sends them).
    pub(super) async fn delivery<C: ScriptConnection>(
        &mut self,
        conn: &mut C,
        carrier: u64,
    ) -> Tried<Ended> {
        let w = self.home;
        self.exec(conn, BEGIN_WRITE).await?;
        let mut found: Vec<(u64, i64)> = Vec::with_capacity(MAX_DISTRICTS);
        for d in 1..=DISTRICTS {
            self.arg(w);
            self.arg(d);
            self.exec(conn, DL_NEW_ORDER).await?;
            // No order waits in a district: skipped (clause 2.7.4.2).
            if self.rows() == 1 {
                found.push((d, self.int(0, "no_o_id")?));
            }
        }
        let k = found.len();
        if k > 0 {
            self.orders_args(w, &found);
            self.exec(conn, DL_DELETE.of(k)).await?;
            self.arg(carrier);
            self.orders_args(w, &found);
            self.exec(conn, DL_CARRIER.of(k)).await?;
            self.orders_args(w, &found);
            self.exec_rows(conn, DL_ORDERS.of(k)).await?;
            let mut customers: Vec<(u64, u64)> = Vec::with_capacity(k);
            for row in self.all() {
                customers.push((
                    int_of(cell(row, 0), "o_d_id")? as u64,
                    int_of(cell(row, 1), "o_c_id")? as u64,
                ));
            }
            self.orders_args(w, &found);
            self.exec(conn, DL_LINES.of(k)).await?;
            self.orders_args(w, &found);
            self.exec_rows(conn, DL_AMOUNTS.of(k)).await?;
            let mut amounts: Vec<(u64, i64)> = Vec::with_capacity(k);
            for row in self.all() {
                let d = int_of(cell(row, 0), "ol_d_id")? as u64;
                let amount = match cell(row, 1) {
                    None => 0,
                    v => cents_of(v, "sum(ol_amount)")?,
                };
                amounts.push((d, amount));
            }
            for (d, c) in customers {
                let amount = amounts.iter().find(|a| a.0 == d).map_or(0, |a| a.1);
                self.money_arg(amount);
                self.arg(w);
                self.arg(d);
                self.arg(c);
                self.exec(conn, DL_CUSTOMER).await?;
            }
        }
        self.exec(conn, COMMIT).await?;
        Ok(Ended::Committed)
    }

    /// `(w, d, o)` for each district's order `found`.
    pub(super) fn orders_args(&mut self, w: u64, found: &[(u64, i64)]) {
        for &(d, o) in found {
            self.arg(w);
            self.arg(d);
            self.arg(o);
        }
    }

    pub(super) async fn stock_level<C: ScriptConnection>(
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
}
