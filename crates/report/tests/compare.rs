//! The comparison's statistics on runs of known distributions: runs from
//! one distribution are not flagged (more often than the significance
//! level allows, even when their latency drifts from interval to
//! interval), a 20% drop in throughput is, and so is slower service. One
//! test reads its runs back from a results store; the others build them
//! in memory, as there are many.

use sojourn_report::compare::{compare, CompareOptions, Comparison, Test, Verdict};
use sojourn_store::{RunRecord, Store};
use sojourn_testkit::runs::{meta_for, store_outcome, Synthetic};

fn stored(store: &Store, s: &Synthetic) -> RunRecord {
    let o = s.outcome();
    let id = store_outcome(store, &meta_for(&o, "memory:", &[], &[]), &o, &s.series());
    store.load(id.as_str()).unwrap()
}

fn flagged(c: &Comparison) -> Vec<String> {
    c.operations
        .iter()
        .flat_map(|op| {
            op.figures
                .iter()
                .filter(|f| f.beyond_sampling_error)
                .map(move |f| format!("{} {}", op.operation, f.metric))
        })
        .collect()
}

/// Runs whose interval latencies drift (AR(1) on the log scale, lag-1
/// correlation 0.6): tests that assumed independent operations would
/// flag most pairs. Out of 30 pairs of runs from one distribution, with
/// about a dozen tested figures each at roughly 1% (Welch at alpha 0.01;
/// disjoint 95% intervals), a few pairs may be flagged; a third would mean
/// the standard errors ignore the drift.
#[test]
fn runs_from_one_distribution_are_rarely_flagged() {
    let pairs = 30;
    let mut pairs_flagged = 0;
    let mut welch_flags = 0;
    let mut welch_tests = 0;
    for i in 0..pairs {
        let base = Synthetic {
            drift_sd: 0.3,
            phi: 0.6,
            update_fraction: 0.3,
            intervals: 20,
            ..Synthetic::new(1000 + i)
        };
        let a = base.stored_run();
        let b = Synthetic {
            seed: 5000 + i,
            ..base.clone()
        }
        .stored_run();
        let c = compare(&a, &b, &CompareOptions::default()).unwrap();
        for f in c.operations.iter().flat_map(|o| &o.figures) {
            if let Test::Welch { .. } = f.test {
                welch_tests += 1;
                welch_flags += f.beyond_sampling_error as usize;
            }
        }
        if !flagged(&c).is_empty() {
            pairs_flagged += 1;
        }
    }
    assert!(
        pairs_flagged <= 6,
        "{pairs_flagged} of {pairs} pairs from one distribution flagged"
    );
    // Welch alone: 210 tests at alpha 0.01 expect about 2 false flags.
    assert!(
        welch_flags <= 8,
        "{welch_flags} of {welch_tests} Welch tests flagged"
    );
}

#[test]
fn a_twenty_percent_throughput_drop_is_flagged() {
    for i in 0..5 {
        let a = Synthetic::new(100 + i).stored_run();
        let b = Synthetic {
            rate: 400.0,
            target: Some(400.0),
            ..Synthetic::new(200 + i)
        }
        .stored_run();
        let c = compare(&a, &b, &CompareOptions::default()).unwrap();
        let all = &c.operations[0];
        assert_eq!(all.operation, "all");
        let t = &all.figures[0];
        assert_eq!(t.metric, "throughput");
        // Beyond each run's own sampling error, but one run per side
        // claims nothing of the configurations.
        assert!(t.beyond_sampling_error, "pair {i}: {t:?}");
        assert!(!t.significant);
        assert_eq!(t.verdict, Verdict::Unchanged);
        assert!(c.caveats.iter().any(|c| c.contains("one run per side")));
        let change = t.change_pct.unwrap();
        assert!((-25.0..-15.0).contains(&change), "change {change}");
        // The same drop the other way round is an improvement.
        let back = compare(&b, &a, &CompareOptions::default()).unwrap();
        let t = &back.operations[0].figures[0];
        assert!(t.beyond_sampling_error && t.change_pct.unwrap() > 15.0);
        // Latency did not change: nothing else may be flagged often; here
        // only the two throughput rows are.
        let others: Vec<String> = flagged(&c)
            .into_iter()
            .filter(|f| !f.ends_with("throughput"))
            .collect();
        assert!(others.len() <= 1, "pair {i}: {others:?}");
    }
}

/// Slower service is worse, at the mean and at the percentiles, in runs
/// read back from a results store.
#[test]
fn a_slower_database_is_flagged_worse_in_latency() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("r.sqlite").to_str().unwrap()).unwrap();
    let a = stored(
        &store,
        &Synthetic {
            intervals: 15,
            ..Synthetic::new(7)
        },
    );
    let b = stored(
        &store,
        &Synthetic {
            mean_ns: 1.3e6,
            intervals: 15,
            ..Synthetic::new(8)
        },
    );
    let c = compare(&a, &b, &CompareOptions::default()).unwrap();
    let read = c.operations.iter().find(|o| o.operation == "read").unwrap();
    for metric in ["service mean", "service p50", "service p90", "service p99"] {
        let f = read.figures.iter().find(|f| f.metric == metric).unwrap();
        assert!(f.beyond_sampling_error, "{metric}: {f:?}");
        assert!(f.change_pct.unwrap() > 0.0, "{metric}");
    }
    // 7,500 reads: too few to test p99.9, and it says so.
    let p999 = read
        .figures
        .iter()
        .find(|f| f.metric == "service p99.9")
        .unwrap();
    assert!(matches!(&p999.test, Test::None { reason } if reason.contains("10000")));
    assert!(!p999.beyond_sampling_error);
}
