//! Tests of a TPC-C terminal's inputs and transactions.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::workload::phase::Phase;

use super::worker::*;
use crate::properties::Properties;
use crate::workload::tpcc::DEFAULT_MIX;
use crate::workload::tpcc::{TpccConfig, Txn, ITEMS};

/// The terminals of a run over `w` warehouses, waiting as `wait` says.
fn shared(w: u64, wait: Option<f64>) -> Arc<Shared> {
    let mut cfg = TpccConfig::from_properties(&Properties::new()).unwrap();
    cfg.wait = wait;
    Arc::new(Shared::new(&cfg, w, 1..w + 1, 9, Vec::new()))
}

#[test]
fn terminals_deal_the_warehouses_and_the_deck_is_the_mix() {
    let shared = shared(3, None);
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
    // 10,000 transactions over 7 terminals, decks left part dealt:
    // the mix to within a percentage point.
    let mut counts = [0u32; 5];
    for i in 0..7 {
        let mut t = TpccWorker::new(&shared, Phase::Run, i);
        for _ in 0..(10_000 / 7 + u32::from(i < 10_000 % 7)) {
            counts[t.deal() as usize] += 1;
        }
    }
    assert_eq!(counts.iter().sum::<u32>(), 10_000);
    for (got, want) in counts.iter().zip(DEFAULT_MIX) {
        assert!(got.abs_diff(want * 100) <= 100, "{counts:?}");
    }
    for _ in 0..1000 {
        if let Input::Payment { c_w, .. } = t.input(Txn::Payment) {
            assert!((1..=3).contains(&c_w));
        }
        if let Input::NewOrder { lines, .. } = t.input(Txn::NewOrder) {
            assert!((5..=15).contains(&lines.len()));
        }
    }
}

#[test]
fn inputs_are_drawn_in_the_spec_s_shares() {
    let shared = shared(4, None);
    let mut t = TpccWorker::new(&shared, Phase::Run, 1);
    let n = 20_000;
    let (mut by_name, mut remote, mut rolled_back, mut lines, mut remote_lines) = (0, 0, 0, 0, 0);
    let mut status_by_name = 0;
    let mut ids = vec![0u32; 3001];
    for _ in 0..n {
        if let Input::Payment { customer, c_w, .. } = t.input(Txn::Payment) {
            by_name += matches!(customer, Customer::Name(_)) as u32;
            remote += (c_w != t.home) as u32;
            if let Customer::Id(c) = customer {
                ids[c as usize] += 1;
            }
        }
        if let Input::OrderStatus { customer, .. } = t.input(Txn::OrderStatus) {
            status_by_name += matches!(customer, Customer::Name(_)) as u32;
        }
        if let Input::NewOrder { lines: l, .. } = t.input(Txn::NewOrder) {
            rolled_back += l.iter().any(|l| l.item > ITEMS) as u32;
            lines += l.len() as u32;
            remote_lines += l.iter().filter(|l| l.supply != t.home).count() as u32;
        }
    }
    let share = |k: u32, of: u32| f64::from(k) / f64::from(of);
    assert!(
        (share(by_name, n) - 0.60).abs() < 0.015,
        "by name {by_name}"
    );
    assert!(
        (share(status_by_name, n) - 0.60).abs() < 0.015,
        "Order-Status by name {status_by_name}"
    );
    assert!((share(remote, n) - 0.15).abs() < 0.01, "remote {remote}");
    assert!(
        (share(rolled_back, n) - 0.01).abs() < 0.003,
        "rolled back {rolled_back}"
    );
    assert!(
        (share(remote_lines, lines) - 0.01).abs() < 0.002,
        "{remote_lines}"
    );
    // NURand(1023, 1, 3000) with C = 259: the ids it favours are those
    // whose (v + C) mod 3000 comes of the most ones in v's bits.
    let top = (1..=3000).max_by_key(|&c| ids[c]).unwrap();
    let mean = f64::from(ids.iter().sum::<u32>()) / 3000.0;
    assert!(
        f64::from(ids[top]) > 3.0 * mean,
        "{top}: {} vs {mean}",
        ids[top]
    );
}

#[test]
fn ten_terminals_with_the_spec_s_waits_make_12_86_tpmc() {
    // Three days of a warehouse's ten terminals, with no time for the
    // answers: the spec's ceiling (clause 5.4.2), to within 1%.
    let shared = shared(1, Some(1.0));
    let start = Instant::now();
    let horizon = Duration::from_secs(3 * 86_400);
    let mut new_orders = 0u64;
    for i in 0..10 {
        let mut t = TpccWorker::new(&shared, Phase::Run, i);
        let mut menu = start;
        loop {
            let txn = t.deal();
            let (submit, next) = t.times(txn, menu, 1.0);
            if submit > start + horizon {
                break;
            }
            assert_eq!(submit - menu, Duration::from_secs_f64(txn.keying()));
            assert!(next - submit <= Duration::from_secs_f64(10.0 * txn.think()));
            new_orders += u64::from(txn == Txn::NewOrder);
            menu = next;
        }
    }
    let tpmc = new_orders as f64 / (horizon.as_secs_f64() / 60.0);
    assert!((tpmc - 12.86).abs() < 0.13, "{tpmc}");
    // Scaled waits scale the ceiling.
    let mut t = TpccWorker::new(&shared, Phase::Run, 0);
    let (submit, _) = t.times(Txn::NewOrder, start, 0.01);
    assert_eq!(submit - start, Duration::from_millis(180));
}
